package io.nccltuner.calibrate;

import io.nccltuner.model.AlgoProto;
import io.nccltuner.model.NcclFacts;
import io.nccltuner.model.NcclSelect;
import io.nccltuner.model.NcclVersion;
import io.nccltuner.policy.Algorithm;
import io.nccltuner.policy.Collective;
import io.nccltuner.policy.Protocol;

/**
 * NCCL's cost model computed from its constants and the topology, for the Ring and Tree
 * algorithms: a port of {@code ncclTopoTuneModel} (the latency and bandwidth tables NCCL prints at
 * init) and {@code ncclTopoGetAlgoTime} (the time of one call), NCCL 2.28.9 src/graph/tuning.cc.
 * Where {@link io.nccltuner.model.CostModel} reads the tables from a log, this computes them, so
 * that the tables follow changed constants and another nRanks / nNodes.
 *
 * <p>Per entry (collective c, algorithm a, protocol p; nsteps = 2(nRanks-1) for AllReduce,
 * nRanks-1 for AllGather / ReduceScatter, nRanks otherwise; scale = min(nNodes, 3) - 1; bw = the
 * graph's bwIntra on up to two nodes, else bwInter, GB/s per channel):
 *
 * <pre>
 * busBw  = nChannels(graph) x bw
 * RING/LL     min(llMaxBws[row][scale], busBw x 0.5)
 * RING/LL128  min(busBw x 0.92, nChannels x perChMaxRingLL128Bws[cc][scale])
 * TREE (AllReduce) min(busBw x 0.92, nChannels x perChMaxTreeBws[cc][scale]), then
 *   LL     min(busBw / 3.8, llMaxBws[row][scale]),
 *   LL128  min(busBw x (1 node ? 7/9 : 120/128), nChannels x perChMaxTreeLL128Bws[cc][scale]),
 *   x 0.85 when the tree pattern is NCCL_TOPO_PATTERN_TREE (3)
 * algorithm bandwidth = busBw x nRanks / nsteps (Ring), busBw x 0.5 (Tree)              [GB/s]
 * latency = baseLatencies[a][p] + hop terms                                              [us]
 *   RING (AllReduce, AllGather, ReduceScatter): (nsteps - nInter) x max(intraLat, netOverhead)
 *        + nInter x interLat, nInter = 2(nNodes-1) for AllReduce else nNodes-1 (0 on one node)
 *   RING (Broadcast, Reduce): + hwLatencies[hw][RING][p] (sameChannels) or nsteps x that
 *   TREE (AllReduce): 2 x ((ppn - 1) x intraLat + log2i(nNodes) x interLat)
 *   intraLat = hwLatencies[NVLINK or PCI][a][p]; interLat = hwLatencies[NET][a][p] (ppn 1: NET TREE)
 *   netOverhead = 1 us Intel, 2 us AMD, x3 for SIMPLE, on more than one node
 * time = latency x latCount x plateau + nBytes / (1000 x bandwidth x treeCorrection)     [us]
 * </pre>
 *
 * LL128 is disabled (bandwidth 0) unless typeInter &lt;= PXN (Hopper+; PXB before) and typeIntra
 * &lt;= NVB. Not modelled: CollNet, NVLS, NVLS_TREE and PAT (their bandwidth is 0 here), the graph's
 * latencyInter (taken as 0: NCCL's net plugins report none for IB/RoCE), NCCL_PROTO / NCCL_ALGO,
 * Power CPUs.
 */
public final class TuneModel {
    /** The release whose formulas and tables this follows. */
    public static final NcclVersion VERSION = new NcclVersion(2, 28, 9);

    private static final int NP = 3;
    private final Topology topo;
    private final double[] lat = new double[Collective.COUNT * 7 * NP];
    private final double[] bw = new double[Collective.COUNT * 7 * NP];

    private TuneModel(Topology topo) {
        this.topo = topo;
    }

    /** @return the topology the tables were computed for */
    public Topology topology() {
        return topo;
    }

    private static int ix(Collective c, Algorithm a, Protocol p) {
        return (c.id() * 7 + a.id()) * NP + p.id();
    }

    /** @return latency of an entry, microseconds (what NCCL prints before the slash) */
    public double latency(Collective c, AlgoProto ap) {
        return lat[ix(c, ap.algorithm(), ap.protocol())];
    }

    /** @return algorithm bandwidth of an entry, GB/s; 0 = not offered */
    public double bandwidth(Collective c, AlgoProto ap) {
        return bw[ix(c, ap.algorithm(), ap.protocol())];
    }

    private static int log2i(int n) {
        return n <= 0 ? -1 : 31 - Integer.numberOfLeadingZeros(n);
    }

    /**
     * Computes the tables (ncclTopoTuneModel, NCCL 2.28.9, Ring and Tree entries).
     *
     * @param t the topology
     * @param k the constants
     * @return the model
     */
    public static TuneModel of(Topology t, ModelConstants k) {
        TuneModel m = new TuneModel(t);
        int nRanks = t.nRanks();
        int nNodes = t.nNodes();
        if (nRanks <= 1) {
            return m;
        }
        int cc = t.computeCapability();
        int ccIdx = cc >= 100 ? 3 : cc >= 90 ? 2 : cc >= 80 ? 1 : 0;
        int scale = nNodes <= 2 ? nNodes - 1 : 2;
        int llRow = nNodes == 1 ? ccIdx : t.amdCpu() ? 1 : 0;
        double llMaxBw = k.get(ModelConstants.bw(0, llRow, scale));
        double perChMaxRingLL128Bw = k.get(ModelConstants.bw(1, ccIdx, scale));
        double perChMaxTreeLL128Bw = k.get(ModelConstants.bw(2, ccIdx, scale));
        double perChMaxTreeBw = k.get(ModelConstants.bw(3, ccIdx, scale));
        float ppn = (float) nRanks / nNodes;
        for (Collective c : Collective.values()) {
            int nsteps = c == Collective.AllReduce
                    ? 2 * (nRanks - 1)
                    : c == Collective.ReduceScatter || c == Collective.AllGather ? nRanks - 1 : nRanks;
            for (Algorithm a : new Algorithm[] {Algorithm.TREE, Algorithm.RING}) {
                if (a == Algorithm.TREE && c != Collective.AllReduce) {
                    continue;
                }
                Topology.Graph g = a == Algorithm.RING ? t.ring() : t.tree();
                int intraHw = g.typeIntra() == 1 ? 0 : 1; // LINK_NVL -> NCCL_HW_NVLINK, else PCI
                int hw = nNodes == 1 ? intraHw : 2;
                for (Protocol p : Protocol.values()) {
                    double b = nNodes <= 2 ? g.bwIntra() : g.bwInter();
                    double busBw = g.nChannels() * b;
                    if (a == Algorithm.RING && p == Protocol.LL) {
                        busBw = Math.min(llMaxBw, busBw * .5);
                    }
                    if (a == Algorithm.RING && p == Protocol.LL128) {
                        busBw = Math.min(busBw * 0.92, g.nChannels() * perChMaxRingLL128Bw);
                    }
                    if (a == Algorithm.TREE) {
                        busBw = Math.min(busBw * .92, g.nChannels() * perChMaxTreeBw);
                        if (p == Protocol.LL) {
                            busBw = Math.min(busBw * 1.0 / 3.8, llMaxBw);
                        }
                        if (p == Protocol.LL128) {
                            busBw = Math.min(
                                    busBw * (nNodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0),
                                    g.nChannels() * perChMaxTreeLL128Bw);
                        }
                        if (t.tree().pattern() == 3) {
                            busBw *= .85;
                        }
                    }
                    double ratio = a == Algorithm.RING ? (1.0 * nRanks) / nsteps : .5;
                    busBw *= ratio;
                    if (p == Protocol.LL128) {
                        boolean on =
                                (cc >= 90 ? g.typeInter() <= 7 : g.typeInter() <= 5) && g.typeIntra() <= 2 && cc >= 70;
                        if (!on) {
                            busBw = 0;
                        }
                    }
                    int i = ix(c, a, p);
                    m.bw[i] = (float) busBw;
                    double l = k.get(ModelConstants.base(a, p));
                    float intraLat = (float) k.get(ModelConstants.hw(intraHw, a, p));
                    float interLat = (float)
                            (ppn == 1
                                    ? k.get(ModelConstants.hw(2, Algorithm.TREE, p))
                                    : k.get(ModelConstants.hw(2, a, p)));
                    if (a == Algorithm.RING) {
                        float hl = (float) k.get(ModelConstants.hw(hw, a, p));
                        if (c == Collective.Reduce || c == Collective.Broadcast) {
                            if (g.sameChannels()) {
                                l += hl;
                            } else {
                                if (p == Protocol.SIMPLE) {
                                    hl = (float) k.get(ModelConstants.hw(hw, Algorithm.TREE, p));
                                }
                                l += nsteps * hl;
                            }
                        } else {
                            float netOverhead = 0;
                            if (nNodes > 1) {
                                netOverhead = t.amdCpu() ? 2.0f : 1.0f;
                                if (p == Protocol.SIMPLE) {
                                    netOverhead *= 3;
                                }
                            }
                            intraLat = Math.max(intraLat, netOverhead);
                            int nInter = nNodes == 1 ? 0 : c == Collective.AllReduce ? 2 * (nNodes - 1) : nNodes - 1;
                            l += (nsteps - nInter) * intraLat + nInter * interLat;
                        }
                    } else {
                        l += 2 * ((nRanks / nNodes - 1) * intraLat + log2i(nNodes) * interLat);
                    }
                    m.lat[i] = (float) l;
                }
            }
        }
        return m;
    }

    /**
     * The time NCCL predicts for one call (ncclTopoGetAlgoTime, NCCL 2.28.9).
     *
     * @param c collective
     * @param ap algorithm and protocol
     * @param nBytes bytes as NCCL passes them to the tuner
     * @param numPipeOps pipelined operations, >= 1
     * @return microseconds, or -1 where the entry is not offered
     */
    public double time(Collective c, AlgoProto ap, long nBytes, int numPipeOps) {
        if (ap.algorithm() != Algorithm.TREE && ap.algorithm() != Algorithm.RING) {
            return -1;
        }
        int i = ix(c, ap.algorithm(), ap.protocol());
        double b = bw[i];
        if (b == 0) {
            return -1;
        }
        double l = lat[i];
        if (ap.algorithm() == Algorithm.TREE && NcclFacts.treeCorrectionApplies(VERSION, c)) {
            b *= NcclFacts.treeCorrection(VERSION, ap.protocol(), nBytes);
        }
        if (ap.algorithm() == Algorithm.RING
                && ap.protocol() == Protocol.SIMPLE
                && topo.nNodes() > 1
                && c == Collective.AllReduce
                && nBytes / ((long) topo.nChannels() * topo.nRanks()) >= 64) {
            l *= topo.computeCapability() < 80 ? 1.9 : 1.4;
        }
        return l * NcclFacts.latCount(VERSION, ap.algorithm(), numPipeOps) + nBytes / (1000 * b);
    }

    /**
     * NCCL's pick among the given entries ({@link NcclSelect}: the strict minimum of the offered
     * ones as floats, from NCCL's starting minimum), in the order given (pass them algorithm-major,
     * as src/enqueue.cc scans; the first of equal times wins).
     *
     * @param c collective
     * @param nBytes bytes
     * @param among the entries to choose from
     * @return the pick, or null when none is offered
     */
    public AlgoProto pick(Collective c, long nBytes, java.util.List<AlgoProto> among) {
        double[] t = new double[among.size()];
        for (int i = 0; i < t.length; i++) {
            t[i] = time(c, among.get(i), nBytes, 1);
        }
        return NcclSelect.pick(among, t);
    }
}
