package io.nccltuner.calibrate;

import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What NCCL's {@code ncclTopoTuneModel} reads besides its constants, for one communicator (NCCL
 * 2.28.9 src/graph/tuning.cc): nRanks, nNodes, the GPUs' compute capability, the CPU vendor, the
 * communicator's collective channel count and, per algorithm, the graph NCCL searched (nChannels,
 * per-channel bandwidths, path types). Only the Ring and Tree graphs are held: the calibration
 * models those two algorithms.
 *
 * <p>The graphs come from the lines {@code ncclTopoPrintGraph} prints at init (src/graph/search.cc,
 * NCCL_DEBUG_SUBSYS=GRAPH): {@code Pattern 4, crossNic 0, nChannels 8, bw 40.000000/20.000000,
 * type NVL/PIX, sameChannels 1}; pattern 4 (NCCL_TOPO_PATTERN_RING) is the Ring graph, 1..3 (the
 * tree patterns, src/include/graph.h) the Tree graph.
 *
 * @param nRanks ranks in the communicator
 * @param nNodes nodes
 * @param computeCapability minCompCap = maxCompCap, major x 10 + minor (90 for H100)
 * @param amdCpu whether the CPU vendor is AMD (or mixed): selects llMaxBws row 1 on more than one
 *     node and a 2 us net overhead (Intel: row 0, 1 us)
 * @param nChannels the communicator's collective channels (comm->nChannels, "N coll channels"):
 *     the Ring/SIMPLE plateau condition
 * @param ring the Ring graph
 * @param tree the Tree graph
 */
public record Topology(
        int nRanks, int nNodes, int computeCapability, boolean amdCpu, int nChannels, Graph ring, Graph tree) {
    /** topoPathTypeStr, NCCL 2.28.9 src/graph/topo.cc: the index is PATH_*. */
    public static final List<String> PATH_TYPES =
            List.of("LOC", "NVL", "NVB", "C2C", "PIX", "PXB", "P2C", "PXN", "PHB", "SYS", "NET", "DIS");

    private static final Pattern GRAPH = Pattern.compile("Pattern (\\d+), crossNic (\\d+), nChannels (\\d+), "
            + "bw ([0-9.]+)/([0-9.]+), type ([A-Z0-9]+)/([A-Z0-9]+), sameChannels (\\d+)");

    /**
     * One searched graph as ncclTopoPrintGraph prints it.
     *
     * @param pattern NCCL_TOPO_PATTERN_* (4 ring, 1..3 trees)
     * @param nChannels channels of the graph
     * @param bwIntra per-channel bandwidth inside a node, GB/s
     * @param bwInter per-channel bandwidth between nodes, GB/s
     * @param typeIntra PATH_* index of the intra-node path (1 NVL)
     * @param typeInter PATH_* index of the GPU-to-NIC path (4 PIX)
     * @param sameChannels whether every channel uses the same GPU order
     */
    public record Graph(
            int pattern,
            int nChannels,
            double bwIntra,
            double bwInter,
            int typeIntra,
            int typeInter,
            boolean sameChannels) {
        /**
         * @param n channels
         * @return this graph with {@code n} channels (what NCCL's init leaves it after the search)
         */
        public Graph withChannels(int n) {
            return new Graph(pattern, n, bwIntra, bwInter, typeIntra, typeInter, sameChannels);
        }

        /**
         * Parses one graph line.
         *
         * @param line a log line
         * @return the graph, or null when the line is not one
         */
        public static Graph parse(String line) {
            Matcher m = GRAPH.matcher(line);
            if (!m.find()) {
                return null;
            }
            return new Graph(
                    Integer.parseInt(m.group(1)),
                    Integer.parseInt(m.group(3)),
                    Double.parseDouble(m.group(4)),
                    Double.parseDouble(m.group(5)),
                    PATH_TYPES.indexOf(m.group(6)),
                    PATH_TYPES.indexOf(m.group(7)),
                    !m.group(8).equals("0"));
        }

        /** @return the line ncclTopoPrintGraph prints for this graph (crossNic 0) */
        public String line() {
            return String.format(
                    Locale.ROOT,
                    "Pattern %d, crossNic 0, nChannels %d, bw %f/%f, type %s/%s, sameChannels %d",
                    pattern,
                    nChannels,
                    bwIntra,
                    bwInter,
                    PATH_TYPES.get(typeIntra),
                    PATH_TYPES.get(typeInter),
                    sameChannels ? 1 : 0);
        }
    }

    /** @return ranks per node (NCCL's ppn, a float there) */
    public double ppn() {
        return (double) nRanks / nNodes;
    }

    /**
     * The same hardware at another job size: nRanks and nNodes change, the graphs and channel count
     * stay (what NCCL searches on one node does not depend on how many nodes join).
     *
     * @param ranks ranks
     * @param nodes nodes
     * @return the topology at that shape
     */
    public Topology atShape(int ranks, int nodes) {
        return new Topology(ranks, nodes, computeCapability, amdCpu, nChannels, ring, tree);
    }

    /**
     * Reads a topology from rank 0's NCCL log lines.
     *
     * @param lines the log
     * @param computeCapability what the GPUs are (the log does not print it), major x 10 + minor
     * @param amdCpu the CPU vendor (the log does not print it at INFO)
     * @return the topology, or null when the log lacks the comm line or a Ring or Tree graph line
     */
    public static Topology read(List<String> lines, int computeCapability, boolean amdCpu) {
        Pattern comm = Pattern.compile("nRanks (\\d+) nNodes (\\d+)");
        Pattern ch = Pattern.compile("NCCL INFO (\\d+) coll channels");
        int ranks = 0;
        int nodes = 0;
        int channels = 0;
        Graph ring = null;
        Graph tree = null;
        for (String l : lines) {
            Matcher m = comm.matcher(l);
            if (ranks == 0 && m.find()) {
                ranks = Integer.parseInt(m.group(1));
                nodes = Integer.parseInt(m.group(2));
            }
            m = ch.matcher(l);
            if (channels == 0 && m.find()) {
                channels = Integer.parseInt(m.group(1));
            }
            Graph g = Graph.parse(l);
            if (g != null && g.pattern() == 4 && ring == null) {
                ring = g;
            } else if (g != null && g.pattern() >= 1 && g.pattern() <= 3 && tree == null) {
                tree = g;
            }
        }
        if (ranks == 0 || ring == null || tree == null) {
            return null;
        }
        // NCCL prints each graph as its search found it, then gives both the smaller channel count
        // before the model runs (src/init.cc 2.28.9: "comm->nChannels = treeGraph->nChannels =
        // ringGraph->nChannels = std::min(...)", line 1192; the graph lines are printed at 1021/1029).
        // (The cross-rank minimum before it, line 1179, is not in rank 0's log.)
        int both = Math.min(ring.nChannels(), tree.nChannels());
        ring = ring.withChannels(both);
        tree = tree.withChannels(both);
        return new Topology(
                ranks, nodes, computeCapability, amdCpu, channels > 0 ? channels : ring.nChannels(), ring, tree);
    }
}
