package io.nccltuner.compile;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nccltuner.compile.Compiler.Compilation;
import io.nccltuner.compile.Compiler.Group;
import io.nccltuner.compile.Compiler.SizeResult;
import io.nccltuner.policy.Algorithm;
import io.nccltuner.policy.Collective;
import io.nccltuner.policy.InputException;
import io.nccltuner.policy.Mode;
import io.nccltuner.policy.Policy;
import io.nccltuner.policy.Policy.Candidate;
import io.nccltuner.policy.Policy.Range;
import io.nccltuner.policy.Policy.Rule;
import io.nccltuner.policy.PolicyLoader;
import io.nccltuner.policy.Protocol;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class CompilerTest {
    static final RunConfig RING_LL = new RunConfig(Algorithm.RING, Protocol.LL, 0);
    static final RunConfig RING_LL128 = new RunConfig(Algorithm.RING, Protocol.LL128, 0);
    static final RunConfig RING_SIMPLE = new RunConfig(Algorithm.RING, Protocol.SIMPLE, 0);
    static final RunConfig TREE_SIMPLE = new RunConfig(Algorithm.TREE, Protocol.SIMPLE, 0);

    static Compiler.Options opts(double threshold, double k, Compiler.Merge merge) {
        return new Compiler.Options(threshold, k, 0, false, merge, "t", Mode.ENFORCE, null);
    }

    static SizeResult at(Group g, long size) {
        return g.sizes().stream().filter(s -> s.nBytes() == size).findFirst().orElseThrow();
    }

    /** Loads the policy the way the plugin does: YAML text through PolicyLoader. */
    static Policy reload(Compilation c) throws Exception {
        return PolicyLoader.parse("compiled.yaml", PolicyYaml.write(c.policy(), List.of(), Map.of()));
    }

    @Test
    void seed001FourV100OneMibIsTheOnlyRule() throws Exception {
        MeasurementSet data = Fixtures.read("seed001-v100-allreduce.csv", "seed001-nccl-2.22.3-tuning.log");
        Compilation c = Compiler.compile(data, Compiler.Options.defaults("seed001"));
        Group g = c.groups().getFirst();
        assertEquals(new Compiler.GroupKey(Collective.AllReduce, 4, 1, Range.exactly(1)), g.key());

        SizeResult b128 = at(g, 128);
        assertEquals(18.675 / 18.660 - 1, b128.ncclRegret(), 1e-12);
        assertEquals("0.08%", TextReport.pct(b128.ncclRegret()));
        assertFalse(b128.ruled());
        SizeResult mib2 = at(g, 2 << 20);
        assertEquals("0.24%", TextReport.pct(mib2.ncclRegret()));
        assertFalse(mib2.ruled());
        SizeResult mib1 = at(g, 1 << 20);
        assertEquals(50.425 / 41.675 - 1, mib1.ncclRegret(), 1e-12);
        assertEquals("21.00%", TextReport.pct(mib1.ncclRegret()));
        assertEquals(RING_LL128, mib1.ncclPick()); // "1048576 Bytes -> Algo 1 proto 1" in NCCL 2.22.3's log
        assertEquals(
                List.of(RING_LL),
                mib1.ranking().stream().map(Compiler.Stats::config).toList());

        assertEquals(1, g.rules().size());
        Rule r = g.rules().getFirst();
        assertEquals(Collective.AllReduce, r.collective());
        assertEquals(1L << 20, r.fromBytes());
        assertEquals(2L << 20, r.toBytes());
        assertEquals(Range.exactly(1), r.numPipeOps());
        assertEquals(new Candidate(Algorithm.RING, Protocol.LL128, 0, Double.NaN), r.ncclPick());
        assertEquals(0.20996, r.ncclRegret(), 1e-5);
        assertEquals(List.of(new Candidate(Algorithm.RING, Protocol.LL, 0, 0.0)), r.candidates());

        Policy p = reload(c);
        assertEquals(1, p.profiles().size());
        assertEquals(Range.exactly(4), p.profiles().getFirst().nRanks());
        assertEquals(Range.exactly(1), p.profiles().getFirst().nNodes());
        Rule loaded = p.profiles().getFirst().rules().getFirst();
        assertEquals(0.21, loaded.ncclRegret(), 1e-12);
        assertEquals(Algorithm.RING, loaded.candidates().getFirst().algorithm());
        assertEquals(Protocol.LL, loaded.candidates().getFirst().protocol());

        String report = TextReport.render(c, List.of());
        assertTrue(
                report.contains(
                        "AllReduce [1 MiB, 2 MiB) numPipeOps 1: RING/LL +0.00% | NCCL RING/LL128 loses >= 21.00%"),
                report);
    }

    @Test
    void seed001AtThreshold25PercentHasNoRule() throws Exception {
        MeasurementSet data = Fixtures.read("seed001-v100-allreduce.csv");
        Compilation c = Compiler.compile(data, opts(0.25, 2, Compiler.Merge.RANKING));
        assertTrue(c.groups().getFirst().rules().isEmpty());
        assertTrue(reload(c).profiles().getFirst().rules().isEmpty());
    }

    static final RunConfig RING_SIMPLE_1CH = new RunConfig(Algorithm.RING, Protocol.SIMPLE, 1);

    /** The per-size method (window 0), as before the robust compile: a rule at every size. */
    @Test
    void sharedH200SweepPerSizeRulesEverywhere() throws Exception {
        Compilation c = Compiler.compile(
                Fixtures.read("h200-2rank-sweep_allreduce.rep1.csv"), opts(0.05, 2, Compiler.Merge.RANKING));
        Group g = c.groups().getFirst();
        assertEquals(25, g.sizes().size());
        assertTrue(g.sizes().stream().allMatch(SizeResult::ruled));
        assertEquals(4806.560 / 2453.248 - 1, at(g, 4).ncclRegret(), 1e-12); // 95.93%
        assertEquals(3713.280 / 3155.776 - 1, at(g, 8 << 20).ncclRegret(), 1e-12); // 17.67%, the smallest
        // the single low reading of TREE/SIMPLE at 32 KiB (16 KiB: 4530.0 us) wins there
        assertEquals(TREE_SIMPLE, at(g, 32 << 10).ranking().getFirst().config());
        assertEquals(21, g.rules().size());
        Rule mid = g.rules().stream()
                .filter(r -> r.fromBytes() == 8L << 20)
                .findFirst()
                .orElseThrow();
        assertEquals(32L << 20, mid.toBytes()); // 8 MiB and 16 MiB rank TREE/SIMPLE, RING/SIMPLE alike
        assertEquals(7844.480 / 7318.368 - 1, mid.candidates().get(1).regret(), 1e-12); // worst of 8 and 16 MiB
        Rule last = g.rules().getLast();
        assertEquals(64L << 20, last.fromBytes());
        assertEquals(80L << 20, last.toBytes()); // only the last measured size's own grid bucket
        assertNull(last.ncclPick());
        assertEquals(21, reload(c).profiles().getFirst().rules().size());
    }

    /**
     * The robust compile (window 2) on the same sweep; expected values from a separate Python
     * re-implementation of the method over the CSV (neighbour jump, margin, minimax over 5 sizes).
     */
    @Test
    void sharedH200SweepRobustCompile() throws Exception {
        Compilation c = Compiler.compile(
                Fixtures.read("h200-2rank-sweep_allreduce.rep1.csv"), Compiler.Options.defaults("h200-2rank-measured"));
        assertEquals(2, c.options().window());
        Group g = c.groups().getFirst();
        assertEquals(
                List.of(RING_SIMPLE),
                at(g, 4).ranking().stream().map(Compiler.Stats::config).toList());
        // 32 KiB: TREE/SIMPLE's low reading falls ln(4530.0/2411.2) = 63% from 16 KiB: a jump, so its gain
        // (88%) is inside the margin 2 x 63%; RING/SIMPLE, within 2% of the best over 8 KiB .. 128 KiB, leads
        SizeResult k32 = at(g, 32 << 10);
        assertEquals(
                List.of(RING_SIMPLE, RING_SIMPLE_1CH),
                k32.ranking().stream().map(Compiler.Stats::config).toList());
        Compiler.Stats tree = k32.candidates().stream()
                .filter(s -> s.config().equals(TREE_SIMPLE))
                .findFirst()
                .orElseThrow();
        assertEquals(Math.log(4530.048 / 2411.168), tree.neighbourJump(), 1e-9);
        assertEquals(2456.864 / 2411.168 - 1, k32.ranking().getFirst().regret(), 1e-9);
        // 128 B: RING/LL128 sat on the fast plateau from 32 B to 512 B: window regret 0
        assertEquals(RING_LL128, at(g, 128).ranking().getFirst().config());
        assertEquals(0.0, at(g, 128).ranking().getFirst().windowRegret(), 1e-12);
        // 8 MiB: NCCL's 17.67% is inside the noise (its own time falls 4799.3 -> 3713.3 us from 4 MiB)
        SizeResult m8 = at(g, 8 << 20);
        assertFalse(m8.ruled());
        assertTrue(m8.note().contains("within the noise"), m8.note());
        assertEquals(2 * Math.log(4799.296 / 3713.280), m8.noiseMargin(), 1e-3);
        assertEquals(12, g.rules().size());
        assertEquals(
                List.of(
                        4L,
                        128L,
                        256L,
                        1024L,
                        128L << 10,
                        256L << 10,
                        512L << 10,
                        1L << 20,
                        2L << 20,
                        16L << 20,
                        32L << 20,
                        64L << 20),
                g.rules().stream().map(Rule::fromBytes).toList());
        Compiler.RangeEstimate kept = g.ranges().stream()
                .filter(r -> r.fromBytes() == 8L << 20)
                .findFirst()
                .orElseThrow();
        assertNull(kept.pick());
        assertTrue(kept.keptForNoise());
        assertEquals(16L << 20, kept.toBytes());
        assertEquals(3713.280 / 3155.776 - 1, kept.expectedRegret(), 1e-9);
        assertEquals(13, g.ranges().size());
        assertEquals(12, reload(c).profiles().getFirst().rules().size());
    }

    @Test
    void mergeByPickKeepsCommonFallbacks() throws Exception {
        Compilation c = Compiler.compile(
                Fixtures.read("h200-2rank-sweep_allreduce.rep1.csv"), opts(0.05, 2, Compiler.Merge.PICK));
        List<Rule> rules = c.groups().getFirst().rules();
        assertEquals(7, rules.size());
        Rule big = rules.getLast();
        assertEquals(32L << 10, big.fromBytes());
        assertEquals(80L << 20, big.toBytes());
        // RING/SIMPLE does not beat NCCL by 5% at 64 MiB, so it is no fallback for the merged range
        assertEquals(List.of(new Candidate(Algorithm.TREE, Protocol.SIMPLE, 0, 0.0)), big.candidates());
        reload(c);
    }

    private static MeasurementSet synthetic(long[] sizes, Map<RunConfig, double[][]> times) {
        MeasurementSet s = new MeasurementSet();
        for (var e : times.entrySet()) {
            for (int i = 0; i < sizes.length; i++) {
                for (double t : e.getValue()[i]) {
                    s.add(new Measurement(
                            "x.csv:1", Collective.AllGather, 8, 1, Range.exactly(1), sizes[i], e.getKey(), t));
                }
            }
        }
        return s;
    }

    @Test
    void noiseMarginFromReplicatesSuppressesARule() throws Exception {
        long[] sizes = {65536};
        // NCCL median 100 with CV 0.2; RING/LL128 median 85 with CV ~0.012: 17.6% slower, inside 2 sigma
        MeasurementSet s = synthetic(
                sizes,
                Map.of(RunConfig.AUTO, new double[][] {{100, 120, 80}}, RING_LL128, new double[][] {{85, 86, 84}}));
        Compilation noisy = Compiler.compile(s, opts(0.05, 2, Compiler.Merge.RANKING));
        SizeResult r = noisy.groups().getFirst().sizes().getFirst();
        assertEquals(100.0 / 85 - 1, r.ncclRegret(), 1e-12);
        assertEquals(2 * Math.sqrt(0.2 * 0.2 + Math.pow(1.0 / 85, 2)), r.noiseMargin(), 1e-9);
        assertFalse(r.ruled());
        assertEquals(0.2, r.nccl().cv(), 1e-12);
        Compilation trusting = Compiler.compile(s, opts(0.05, 0, Compiler.Merge.RANKING));
        assertEquals(1, trusting.groups().getFirst().rules().size());
    }

    @Test
    void neighboursWithTheSameRankingMergeAndNothingLeavesTheMeasuredSpan() throws Exception {
        long[] sizes = {1024, 2048, 4096, 8192, 16384};
        MeasurementSet s = synthetic(
                sizes,
                Map.of(
                        RunConfig.AUTO,
                        new double[][] {{20}, {21}, {22}, {23}, {30}},
                        RING_LL,
                        new double[][] {{10}, {11}, {12}, {13}, {31}},
                        RING_SIMPLE,
                        new double[][] {{15}, {16}, {17}, {30}, {29}}));
        Group g = Compiler.compile(s, opts(0.05, 2, Compiler.Merge.RANKING))
                .groups()
                .getFirst();
        assertEquals(2, g.rules().size());
        Rule a = g.rules().get(0);
        assertEquals(1024, a.fromBytes());
        assertEquals(8192, a.toBytes());
        assertEquals(
                List.of(Algorithm.RING, Algorithm.RING),
                a.candidates().stream().map(Candidate::algorithm).toList());
        assertEquals(
                List.of(Protocol.LL, Protocol.SIMPLE),
                a.candidates().stream().map(Candidate::protocol).toList());
        assertEquals(15.0 / 10 - 1, a.candidates().get(1).regret(), 1e-12); // worst over 1..4 KiB
        assertEquals(22.0 / 12 - 1, a.ncclRegret(), 1e-12);
        Rule b = g.rules().get(1);
        assertEquals(8192, b.fromBytes()); // RING/SIMPLE no longer beats NCCL by 5%: a new ranking
        assertEquals(16384, b.toBytes()); // 8 KiB governs up to the next measured size
        assertEquals(
                List.of(Protocol.LL),
                b.candidates().stream().map(Candidate::protocol).toList());
        assertFalse(at(g, 16384).ruled()); // NCCL within 5% of the best (29 vs 30)
    }

    @Test
    void nonGridSizesGovernTheirBuckets() throws Exception {
        long[] sizes = {1000, 3000};
        MeasurementSet s = synthetic(
                sizes, Map.of(RunConfig.AUTO, new double[][] {{20}, {20}}, RING_LL, new double[][] {{10}, {10}}));
        Group g = Compiler.compile(s, opts(0.05, 2, Compiler.Merge.RANKING))
                .groups()
                .getFirst();
        assertEquals(896, at(g, 1000).fromBytes());
        assertEquals(2560, at(g, 1000).toBytes());
        assertEquals(2560, at(g, 3000).fromBytes());
        assertEquals(3072, at(g, 3000).toBytes());
        assertEquals(1, g.rules().size());
    }

    @Test
    void ncclPickIsNeverACandidateAndNoBaselineMeansNoRule() throws Exception {
        long[] sizes = {4096};
        MeasurementSet s = synthetic(sizes, Map.of(RING_LL, new double[][] {{10}}, RING_SIMPLE, new double[][] {{20}}));
        Compilation c = Compiler.compile(s, opts(0.05, 2, Compiler.Merge.RANKING));
        SizeResult r = c.groups().getFirst().sizes().getFirst();
        assertFalse(r.ruled());
        assertEquals("no unforced run (NCCL's own pick) at this size", r.note());
        // NCCL's pick named by a log and measured forced: its forced time is NCCL's time
        s.add(new RunSelection("n.log:1", Collective.AllGather, 8, 1, 4096, Algorithm.RING, Protocol.SIMPLE));
        r = Compiler.compile(s, opts(0.05, 2, Compiler.Merge.RANKING))
                .groups()
                .getFirst()
                .sizes()
                .getFirst();
        assertEquals(1.0, r.ncclRegret(), 1e-12);
        assertEquals(
                List.of(RING_LL),
                r.ranking().stream().map(Compiler.Stats::config).toList());
    }

    @Test
    void overlappingNumPipeOpsGroupsAreRefused() {
        MeasurementSet s = new MeasurementSet();
        s.add(new Measurement("a:1", Collective.AllReduce, 2, 1, Range.exactly(1), 1024, RunConfig.AUTO, 10));
        s.add(new Measurement("b:1", Collective.AllReduce, 2, 1, Range.ANY, 1024, RunConfig.AUTO, 10));
        InputException e =
                assertThrows(InputException.class, () -> Compiler.compile(s, Compiler.Options.defaults("t")));
        assertTrue(e.getMessage().contains("measured with numPipeOps any and 1"), e.getMessage());
    }

    @Test
    void ofSeveralOverlappingGroupsTheFirstInProfileOrderIsNamed() {
        MeasurementSet s = new MeasurementSet();
        for (Collective c : List.of(Collective.AllReduce, Collective.Broadcast)) {
            s.add(new Measurement("a:1", c, 8, 1, Range.exactly(1), 1024, RunConfig.AUTO, 10));
            s.add(new Measurement("b:1", c, 8, 1, Range.ANY, 1024, RunConfig.AUTO, 10));
        }
        InputException e =
                assertThrows(InputException.class, () -> Compiler.compile(s, Compiler.Options.defaults("t")));
        assertEquals(
                "inputs: Broadcast at nRanks 8, nNodes 1 was measured with numPipeOps any and 1; their rules would "
                        + "overlap. Compile them separately, or pass --any-pipe-ops to pool them",
                e.getMessage());
    }

    @Test
    void absurdlySmallAndLargeTimesGiveFiniteCappedRegretsThatLoad() throws Exception {
        MeasurementSet data = new MeasurementSet();
        Range one = Range.exactly(1);
        data.add(new Measurement("t:1", Collective.AllReduce, 2, 1, one, 1024, RunConfig.AUTO, 4621.5));
        data.add(new Measurement("t:2", Collective.AllReduce, 2, 1, one, 1024, RING_SIMPLE, 2560.7));
        data.add(new Measurement("t:3", Collective.AllReduce, 2, 1, one, 1024, TREE_SIMPLE, 1e-300));
        // medians of two huge replicates must not overflow to infinity
        data.add(new Measurement("t:4", Collective.AllReduce, 2, 1, one, 2048, RunConfig.AUTO, Double.MAX_VALUE));
        data.add(new Measurement("t:5", Collective.AllReduce, 2, 1, one, 2048, RunConfig.AUTO, Double.MAX_VALUE));
        data.add(new Measurement("t:6", Collective.AllReduce, 2, 1, one, 2048, RING_SIMPLE, 1e-300));
        Compilation c = Compiler.compile(data, opts(0.05, 2, Compiler.Merge.RANKING));
        SizeResult s = at(c.groups().getFirst(), 1024);
        assertEquals(Compiler.MAX_REGRET, s.ncclRegret());
        assertEquals(Compiler.MAX_REGRET, s.candidates().get(1).regret());
        assertEquals(TREE_SIMPLE, s.ranking().getFirst().config());
        SizeResult big = at(c.groups().getFirst(), 2048);
        assertEquals(Double.MAX_VALUE, big.ncclUs());
        assertEquals(0.0, big.nccl().cv());
        Rule r = reload(c).profiles().getFirst().rules().getFirst();
        assertEquals(Compiler.MAX_REGRET, r.ncclRegret());
        assertEquals(
                List.of(0.0, Compiler.MAX_REGRET),
                r.candidates().stream().map(Candidate::regret).toList());
        String html = HtmlReport.render(c, List.of());
        assertTrue(html.length() < 100_000, "chart of bounded size: " + html.length());
        assertTrue(html.contains(" GB/s drawn on the chart's edge"), "clipped-busbw note missing");
        assertFalse(html.contains("NaN") || html.contains("Infinity"), html);
    }

    @Test
    void anNcclLogOfAnotherShapeIsReportedNotSilentlyDropped() throws Exception {
        MeasurementSet data = Fixtures.read("seed001-v100-allreduce.csv", "tests/traces/nccl_sweep.rank0.log");
        Compilation c = Compiler.compile(data, Compiler.Options.defaults("t"));
        String log = Fixtures.trace("nccl_sweep.rank0.log").toString();
        List<String> w = c.warnings().stream().filter(x -> x.startsWith(log)).toList();
        assertEquals(1, w.size(), c.warnings().toString());
        assertTrue(
                w.getFirst()
                        .matches(java.util.regex.Pattern.quote(log) + ": its \\d+ selection lines \\(.*AllReduce at "
                                + "nRanks 2, nNodes 2.*\\) match no measured group \\(AllReduce at nRanks 4, nNodes 1\\); NCCL's picks from it "
                                + "were not used"),
                w.getFirst());
        // the seed's own log matches: no such warning
        Compilation own = Compiler.compile(
                Fixtures.read("seed001-v100-allreduce.csv", "seed001-nccl-2.22.3-tuning.log"),
                Compiler.Options.defaults("t"));
        assertTrue(
                own.warnings().stream().noneMatch(x -> x.contains("match no measured group")),
                own.warnings().toString());
    }
}
