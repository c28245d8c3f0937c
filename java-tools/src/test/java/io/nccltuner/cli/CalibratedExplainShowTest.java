package io.nccltuner.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nccltuner.calibrate.Calibrator;
import io.nccltuner.calibrate.ModelConstants;
import io.nccltuner.calibrate.SweepInputs;
import io.nccltuner.calibrate.Topology;
import io.nccltuner.calibrate.TuneModel;
import io.nccltuner.model.AlgoProto;
import io.nccltuner.policy.Algorithm;
import io.nccltuner.policy.ByteSize;
import io.nccltuner.policy.Collective;
import io.nccltuner.policy.Protocol;
import io.nccltuner.policy.SizeGrid;
import io.nccltuner.policy.TunerConstant;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 24 item 4: {@code explain --topology --policy} predicts with a calibrated profile's
 * constants at any shape, and {@code show --topology} lists where its picks differ from NCCL's
 * default over a grid of shapes. The fixture is CalibrationTest's: 8 H100 GPUs per node, Ring and
 * Tree graphs of 8 channels at 40 / 20 GB/s, a truth that differs from NCCL's defaults in
 * perChMaxTreeBws.HOPPER.4NODES (12 GB/s, not 36) and hwLatencies.NET.TREE.LL (10 us, not 5),
 * measured (1% noise) at 2 and 4 nodes and fitted with {@link Calibrator}; the policy has a
 * measured profile at 4 nodes with one rule and a calibrated profile for nNodes 2..16 on H100.
 */
class CalibratedExplainShowTest {
    static final Topology.Graph RING = new Topology.Graph(4, 8, 40, 20, 1, 4, true);
    static final Topology.Graph TREE = new Topology.Graph(1, 8, 40, 20, 1, 4, true);
    static final AlgoProto RING_SIMPLE = new AlgoProto(Algorithm.RING, Protocol.SIMPLE);

    @TempDir
    static Path tmp;

    static Path log;
    static Path policy;
    static ModelConstants fitted;

    static Topology topo(int nodes) {
        return new Topology(8 * nodes, nodes, 90, false, 16, RING, TREE);
    }

    static ModelConstants truth() {
        return ModelConstants.defaults()
                .with(TunerConstant.parse("perChMaxTreeBws.HOPPER.4NODES", 12))
                .with(TunerConstant.parse("hwLatencies.NET.TREE.LL", 10));
    }

    /** NCCL's candidates the model has: NCCL_ALGO_TREE, NCCL_ALGO_RING x LL, LL128, SIMPLE, algorithm-major. */
    static List<AlgoProto> candidates() {
        List<AlgoProto> c = new ArrayList<>();
        for (Algorithm a : new Algorithm[] {Algorithm.TREE, Algorithm.RING}) {
            for (Protocol p : new Protocol[] {Protocol.LL, Protocol.LL128, Protocol.SIMPLE}) {
                c.add(new AlgoProto(a, p));
            }
        }
        return c;
    }

    @BeforeAll
    static void fitAndWrite() throws Exception {
        Random rnd = new Random(24);
        List<Calibrator.Shape> shapes = new ArrayList<>();
        for (int nodes : new int[] {2, 4}) {
            TuneModel t = TuneModel.of(topo(nodes), truth());
            List<Calibrator.Point> pts = new ArrayList<>();
            for (long n = 4; n <= 1L << 30; n *= 2) {
                Map<AlgoProto, Double> m = new TreeMap<>(SweepInputs.NCCL_ORDER);
                for (AlgoProto ap : candidates()) {
                    m.put(ap, t.time(Collective.AllReduce, ap, n, 1) * (1 + 0.01 * rnd.nextGaussian()));
                }
                pts.add(new Calibrator.Point(Collective.AllReduce, n, m));
            }
            shapes.add(new Calibrator.Shape(nodes + " nodes", topo(nodes), pts));
        }
        Calibrator.Result r = Calibrator.fit(shapes, Calibrator.Options.DEFAULT);
        // as calibrate writes them: the constants that moved, to two decimals
        StringBuilder constants = new StringBuilder();
        ModelConstants k = ModelConstants.defaults();
        for (Calibrator.Fitted f : r.fitted()) {
            if (f.changed()) {
                double v = Math.round(f.fitted() * 100) / 100.0;
                constants
                        .append("      ")
                        .append(f.name())
                        .append(": ")
                        .append(v)
                        .append('\n');
                k = k.with(TunerConstant.parse(f.name(), v));
            }
        }
        fitted = k;
        assertNotEquals(ModelConstants.defaults(), fitted);
        log = tmp.resolve("rank0.log");
        Files.writeString(
                log,
                String.join(
                        "\n",
                        "#  Rank  0 Group  0 Pid   4001 on node-a device  0 [0000:17:00] NVIDIA H100 80GB HBM3",
                        "node-a:4001:4001 [0] NCCL INFO NCCL version 2.28.9+cuda12.9",
                        "node-a:4001:4001 [0] NCCL INFO comm 0x5a5a rank 0 nRanks 32 nNodes 4 localRanks 8 localRank 0 MNNVL 0",
                        "node-a:4001:4001 [0] NCCL INFO " + RING.line(),
                        "node-a:4001:4001 [0] NCCL INFO " + TREE.line(),
                        "node-a:4001:4001 [0] NCCL INFO 16 coll channels, 0 collnet channels, 0 nvls channels, 16 p2p channels, "
                                + "2 p2p channels per peer",
                        ""));
        policy = tmp.resolve("calibrated.yaml");
        Files.writeString(
                policy,
                "schema: nccl-tuner-java/v1\nname: cal\nmode: enforce\nprofiles:\n"
                        + "  - name: measured-4nodes\n    match: {nRanks: 32, nNodes: 4}\n    constants:\n" + constants
                        + "    rules:\n      - collective: AllReduce\n        bytes: {from: 2 MiB, to: 4 MiB}\n"
                        + "        candidates: [{algorithm: RING, protocol: SIMPLE}]\n"
                        + "  - name: calibrated\n    match: {nNodes: {min: 2, max: 16}, gpu: H100}\n    constants:\n"
                        + constants);
    }

    /** Table rows of explain's output, by nBytes: the cells, split at two or more blanks. */
    static Map<Long, List<String>> rows(String out) {
        Map<Long, List<String>> rows = new LinkedHashMap<>();
        for (String line : out.split("\n")) {
            List<String> cells = List.of(line.strip().split("\\s{2,}"));
            if (cells.size() > 2 && cells.get(1).matches("\\d+") && cells.get(0).matches("[0-9.]+ [KMGT]?i?B")) {
                rows.put(Long.parseLong(cells.get(1)), cells);
            }
        }
        return rows;
    }

    /** Runs {@code explain --topology LOG --policy POLICY --nranks R --nnodes N --sizes S}. */
    static CliRun explainAt(int nRanks, int nNodes, String sizes) {
        return CliRun.run(
                "explain",
                "--topology",
                log.toString(),
                "--policy",
                policy.toString(),
                "--nranks",
                Integer.toString(nRanks),
                "--nnodes",
                Integer.toString(nNodes),
                "--sizes",
                sizes);
    }

    @Test
    void explainAtAHeldOutShapeNamesTheCalibratedPick() {
        CliRun r = explainAt(128, 16, "4B:1GiB");
        assertEquals(0, r.exit(), r.err());
        String o = r.out();
        assertTrue(
                o.startsWith("NCCL 2.28.9's model from constants (Ring and Tree; docs/calibrate.md) at nRanks=128 "
                        + "nNodes=16\nTopology: " + log
                        + " (32 ranks on 4 nodes, cc 9.0, Intel CPU, 16 coll channels), its graphs at "
                        + "this shape; no latency/bandwidth table in rank0.log to check the model against.\n"),
                o);
        assertTrue(o.contains("engine: INFO policy cal profile calibrated mode enforce rules 0 "), o);
        assertTrue(o.contains("engine: INFO profile calibrated: set "), o);
        assertTrue(
                o.contains("\nAllReduce, numPipeOps 1: predicted time per candidate with the constants profile "
                        + "calibrated sets, microseconds\n"),
                o);
        Map<Long, List<String>> rows = rows(o);
        assertEquals(29, rows.size(), o);
        TuneModel cal = TuneModel.of(topo(16), fitted);
        TuneModel def = TuneModel.of(topo(16), ModelConstants.defaults());
        TuneModel truth = TuneModel.of(topo(16), truth());
        int lossy = 0;
        int differ = 0;
        for (var e : rows.entrySet()) {
            long n = e.getKey();
            List<String> c = e.getValue();
            // size, nBytes, 6 times (NCCL_ALGO_TREE, NCCL_ALGO_RING x 3), NCCL default, calibrated, NCCL runs
            assertEquals(11, c.size(), c.toString());
            AlgoProto ringLl128 = new AlgoProto(Algorithm.RING, Protocol.LL128);
            assertEquals(
                    String.format(Locale.ROOT, "%.3f", cal.time(Collective.AllReduce, ringLl128, n, 1)),
                    c.get(6),
                    "RING/LL128 at " + n);
            AlgoProto calPick = cal.pick(Collective.AllReduce, n, candidates());
            AlgoProto defPick = def.pick(Collective.AllReduce, n, candidates());
            assertEquals(defPick.toString(), c.get(8), "NCCL default at " + n);
            assertEquals(calPick.toString(), c.get(9), "calibrated at " + n);
            assertEquals(calPick.toString(), c.get(10), "NCCL runs at " + n);
            differ += calPick.equals(defPick) ? 0 : 1;
            double best = Double.POSITIVE_INFINITY;
            for (AlgoProto ap : candidates()) {
                best = Math.min(best, truth.time(Collective.AllReduce, ap, n, 1));
            }
            if (truth.time(Collective.AllReduce, defPick, n, 1) / best - 1 >= 0.2) {
                lossy++;
                assertNotEquals(defPick, calPick, "the truth loses >= 20% with NCCL's default at " + n);
            }
        }
        assertTrue(lossy >= 2, "NCCL's default loses >= 20% at " + lossy + " sizes");
        assertTrue(o.contains("\nThe calibrated pick differs from NCCL's default at " + differ + " of 29 sizes.\n"), o);
    }

    @Test
    void explainAtTheMeasuredShapeRunsTheRuleOverTheCalibratedTable() {
        CliRun r = explainAt(32, 4, "1MiB:8MiB");
        assertEquals(0, r.exit(), r.err());
        String o = r.out();
        assertTrue(o.contains("engine: INFO policy cal profile measured-4nodes mode enforce rules 1 "), o);
        assertTrue(o.contains("32 ranks on 4 nodes, cc 9.0, Intel CPU, 16 coll channels); no latency"), o);
        Map<Long, List<String>> rows = rows(o);
        TuneModel cal = TuneModel.of(topo(4), fitted);
        // 2 MiB: the rule [2 MiB, 4 MiB) covers it; NCCL_ALGO_RING NCCL_PROTO_SIMPLE runs over the calibrated pick
        List<String> at2 = rows.get(2L << 20);
        assertEquals(cal.pick(Collective.AllReduce, 2L << 20, candidates()).toString(), at2.get(9), at2.toString());
        assertNotEquals(RING_SIMPLE.toString(), at2.get(9), "the rule changes the calibrated pick at 2 MiB");
        assertEquals(List.of(RING_SIMPLE.toString(), RING_SIMPLE + " (rule)"), at2.subList(10, 12), at2.toString());
        // 4 MiB: no rule; NCCL runs the calibrated pick (the empty rule cell collapses in the split)
        List<String> at4 = rows.get(4L << 20);
        String pick4 = cal.pick(Collective.AllReduce, 4L << 20, candidates()).toString();
        assertEquals(List.of(pick4, pick4), at4.subList(at4.size() - 2, at4.size()), at4.toString());
        assertTrue(
                o.contains("\nA measured rule of profile measured-4nodes covers 1 of the 4 sizes: there NCCL runs the "
                        + "rule's pick (the engine zeroes its first offered candidate in the cost table NCCL computed with the "
                        + "constants); elsewhere NCCL runs the calibrated pick.\n"),
                o);
    }

    /** Issue 21 (sixth walk), item 2: at one size the counts read "of 1 size", "of the 1 size". */
    @Test
    void explainAtOneSizeSaysSizeNotSizes() {
        CliRun r = explainAt(32, 4, "2MiB");
        assertEquals(0, r.exit(), r.err());
        String o = r.out();
        assertTrue(o.contains("\nThe calibrated pick differs from NCCL's default at 0 of 1 size.\n"), o);
        assertTrue(o.contains("\nA measured rule of profile measured-4nodes covers the size: there NCCL runs "), o);
        assertTrue(
                o.contains("\nWith the policy NCCL runs another pick (or channel count) than its default at 1 of 1 "
                        + "size.\n"),
                o);
    }

    @Test
    void explainOutsideTheProfilesSaysNoProfileMatches() {
        CliRun r = explainAt(256, 32, "1MiB");
        assertEquals(0, r.exit(), r.err());
        assertTrue(
                r.out()
                        .contains(
                                "  engine: INFO policy cal: no profile matches nRanks=256 nNodes=32; changing nothing "
                                        + "for this communicator; tuner v5, NCCL 2.28.9, GPU NVIDIA H100 80GB HBM3 (cc 9.0), nvlDomains unknown\n"
                                        + "No profile matches: the plugin changes nothing; NCCL runs its own pick with its default constants at every "
                                        + "size.\n"),
                r.out());
        assertTrue(r.out().contains("predicted time per candidate at NCCL's default constants, microseconds"), r.out());
        List<String> row = rows(r.out()).get(1L << 20);
        assertEquals(
                TuneModel.of(topo(32), ModelConstants.defaults())
                        .pick(Collective.AllReduce, 1L << 20, candidates())
                        .toString(),
                row.getLast(),
                row.toString());
        CliRun noLog = CliRun.run("explain", "--policy", policy.toString(), "--nranks", "256");
        assertEquals(2, noLog.exit());
        assertEquals(
                "nccl-tuner explain: Missing required option: '--log=FILE'\n(or --topology SWEEP_OR_LOG, to predict "
                        + "with NCCL's model from constants at any --nranks/--nnodes)\nsee 'nccl-tuner explain --help'\n",
                noLog.err());
        CliRun both = CliRun.run("explain", "--topology", log.toString(), "--log", log.toString());
        assertEquals(2, both.exit());
        assertTrue(both.err().contains("give --log or --topology, not both"), both.err());
    }

    /**
     * The ranges show lists at one shape, computed here from the model at each size-grid bucket's
     * smallest size up to 1 TiB: "[from, to) default calibrated".
     */
    static List<String> expectedRanges(int nodes) {
        TuneModel cal = TuneModel.of(topo(nodes), fitted);
        TuneModel def = TuneModel.of(topo(nodes), ModelConstants.defaults());
        List<String> out = new ArrayList<>();
        String open = null;
        long from = 0;
        for (int b = 0; b <= SizeGrid.BUCKETS; b++) {
            long lo = b < SizeGrid.BUCKETS ? SizeGrid.lowerBound(b) : 1L << 40;
            boolean end = lo < 0 || lo >= 1L << 40;
            String key = null;
            if (!end) {
                AlgoProto d = def.pick(Collective.AllReduce, lo, candidates());
                AlgoProto c = cal.pick(Collective.AllReduce, lo, candidates());
                // at 4 nodes the rule [2 MiB, 4 MiB) splits a range: its note says the rule applies there
                boolean ruled = nodes == 4 && lo >= 2L << 20 && lo < 4L << 20;
                key = d.equals(c) ? null : d + " " + c + (ruled ? " " : "");
            }
            if (open != null && !open.equals(key)) {
                out.add("[" + ByteSize.format(from) + ", " + ByteSize.format(Math.min(lo, 1L << 40)) + ") "
                        + open.strip());
                open = null;
            }
            if (open == null && key != null) {
                open = key;
                from = lo;
            }
            if (end) {
                break;
            }
        }
        return out;
    }

    @Test
    void showListsWhereTheCalibratedPickDiffersPerShape() {
        CliRun r = CliRun.run(
                "show",
                policy.toString(),
                "--nodes",
                "1,2,4,8,16",
                "--ranks-per-node",
                "8",
                "--collective",
                "AllReduce",
                "--topology",
                log.toString());
        assertEquals(0, r.exit(), r.err());
        String o = r.out();
        assertTrue(
                o.contains("\nHardware (the profiles' match; from the topology's log): tuner v5, NCCL 2.28.9, GPU "
                        + "NVIDIA H100 80GB HBM3 (cc 9.0), nvlDomains unknown."),
                o);
        assertTrue(o.contains("\nnRanks=8 nNodes=1: no profile matches; NCCL decides everything\n"), o);
        Pattern range = Pattern.compile("^ {4}AllReduce\\s+(\\[[^)]+\\))\\s+(\\S+)\\s+(\\S+)");
        for (int nodes : new int[] {2, 4, 8, 16}) {
            int at = o.indexOf("\nnRanks=" + 8 * nodes + " nNodes=" + nodes + ": profile ");
            assertTrue(at >= 0, nodes + " nodes: " + o);
            int end = o.indexOf("\n\n", at + 1);
            String block = o.substring(at + 1, end < 0 ? o.length() : end);
            assertTrue(
                    block.contains(
                            nodes == 4
                                    ? ": profile measured-4nodes (profiles[0], 1 rule)"
                                    : ": profile calibrated (profiles[1], 0 rules)"),
                    block);
            List<String> listed = new ArrayList<>();
            for (String line : block.split("\n")) {
                Matcher m = range.matcher(line);
                if (m.find()) {
                    listed.add(m.group(1) + " " + m.group(2) + " " + m.group(3));
                }
            }
            List<String> expected = expectedRanges(nodes);
            assertEquals(expected, listed, block);
            if (nodes == 16) {
                assertFalse(expected.isEmpty(), "the calibrated pick differs somewhere at 16 nodes");
                assertTrue(
                        block.contains(
                                "model constants: where NCCL's pick with them differs from its default (NCCL 2.28.9's "
                                        + "model, Ring and Tree)\n    collective  bytes"),
                        block);
            }
        }
    }

    @Test
    void showWithoutTheTopologySaysWhatIsNeeded() throws Exception {
        Path anyGpu = CliRun.write(tmp, "any-gpu.yaml", Files.readString(policy).replace(", gpu: H100}", "}"));
        CliRun r = CliRun.run("show", anyGpu.toString(), "--nodes", "8", "--collective", "AllReduce");
        assertEquals(0, r.exit(), r.err());
        assertTrue(
                r.out()
                        .contains("nRanks=64 nNodes=8: profile calibrated (profiles[1], 0 rules)\n"
                                + "  AllReduce: NCCL decides at every size\n  "
                                + fitted.differences(ModelConstants.defaults()).size()
                                + " model constants (NCCL's picks with them need the topology: give --topology SWEEP_OR_LOG, the sweep "
                                + "calibrate read or an NCCL log with the graph lines)\n"),
                r.out());
        // the GPU match needs the GPU, which only the topology's log names
        CliRun h = CliRun.run("show", policy.toString(), "--nodes", "8", "--collective", "AllReduce");
        assertTrue(
                h.out()
                        .contains("nRanks=64 nNodes=8: no profile matches; NCCL decides everything\n"
                                + "  profile calibrated skipped: gpu 'H100' named but the GPU is unknown\n"),
                h.out());
    }
}
