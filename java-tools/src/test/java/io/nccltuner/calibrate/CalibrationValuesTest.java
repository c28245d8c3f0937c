package io.nccltuner.calibrate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nccltuner.compile.Compiler;
import io.nccltuner.compile.PolicyYaml;
import io.nccltuner.model.AlgoProto;
import io.nccltuner.policy.Algorithm;
import io.nccltuner.policy.Collective;
import io.nccltuner.policy.HardwareMatch;
import io.nccltuner.policy.Mode;
import io.nccltuner.policy.Policy;
import io.nccltuner.policy.Policy.Candidate;
import io.nccltuner.policy.Policy.Profile;
import io.nccltuner.policy.Policy.Range;
import io.nccltuner.policy.Policy.Rule;
import io.nccltuner.policy.PolicyLoader;
import io.nccltuner.policy.Protocol;
import io.nccltuner.policy.TunerConstant;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * Values of the forward model, the crossover count, the rule verdicts of the calibrated policy
 * and the YAML of a profile's constants, each worked by hand (NCCL 2.28.9 src/graph/tuning.cc).
 */
class CalibrationValuesTest {
    static final AlgoProto TREE_LL = new AlgoProto(Algorithm.TREE, Protocol.LL);
    static final AlgoProto TREE_LL128 = new AlgoProto(Algorithm.TREE, Protocol.LL128);
    static final AlgoProto RING_LL128 = new AlgoProto(Algorithm.RING, Protocol.LL128);
    static final AlgoProto RING_SIMPLE = new AlgoProto(Algorithm.RING, Protocol.SIMPLE);

    @Test
    void treeLl128TakesSevenNinthsOnOneNodeAndOneTwentyOver128Beyond() {
        // 1 node: tree graph bwIntra 40 x 8 channels = 320; min(320 x 0.92, 8 x perChMaxTreeBws[HOPPER][1NODE] 38.7)
        // = 294.4; LL128 min(294.4 x 7/9, 8 x perChMaxTreeLL128Bws[HOPPER][1NODE] 36.7 = 293.6) x 0.5
        TuneModel one = TuneModel.of(CalibrationTest.topo(1), ModelConstants.defaults());
        assertEquals(294.4 * 7 / 9 * 0.5, one.bandwidth(Collective.AllReduce, TREE_LL128), 1e-3);
        // 4 nodes: bwInter 20 x 8 = 160; min(147.2, 8 x 36.0) = 147.2; min(147.2 x 120/128, 8 x 29.0) x 0.5 = 69.0
        TuneModel four = TuneModel.of(CalibrationTest.topo(4), ModelConstants.defaults());
        assertEquals(147.2 * 120 / 128 * 0.5, four.bandwidth(Collective.AllReduce, TREE_LL128), 1e-3);
    }

    @Test
    void ringSimplePlateauIsOnePointFourOnHopperAndOnePointNineBeforeAmpere() {
        long big = 1L << 30; // 2^30 / (16 channels x 32 ranks) >= 64: the plateau applies
        for (int cc : new int[] {90, 70}) {
            Topology t = new Topology(32, 4, cc, false, 16, CalibrationTest.RING, CalibrationTest.TREE);
            TuneModel m = TuneModel.of(t, ModelConstants.defaults());
            double factor = cc < 80 ? 1.9 : 1.4;
            double lat = m.latency(Collective.AllReduce, RING_SIMPLE);
            double bw = m.bandwidth(Collective.AllReduce, RING_SIMPLE);
            assertEquals(
                    lat * factor + big / (1000 * bw),
                    m.time(Collective.AllReduce, RING_SIMPLE, big, 1),
                    1e-6,
                    "cc " + cc);
            // 1 KiB: 1024 / 512 = 2 < 64, no plateau
            assertEquals(lat + 1024 / (1000 * bw), m.time(Collective.AllReduce, RING_SIMPLE, 1024, 1), 1e-9);
        }
    }

    static Calibrator.Point point(long n, double treeLl, double ringLl128) {
        Map<AlgoProto, Double> m = new TreeMap<>(SweepInputs.NCCL_ORDER);
        m.put(TREE_LL, treeLl);
        m.put(RING_LL128, ringLl128);
        return new Calibrator.Point(Collective.AllReduce, n, m);
    }

    @Test
    void aCrossoverBetweenTheLastTwoSizesCountsAndANearTieDoesNot() {
        // TREE/LL fastest at 1K and 2K, RING/LL128 at 4K: one crossover, between the last two sizes
        Calibrator.Shape s = new Calibrator.Shape(
                "a",
                CalibrationTest.topo(2),
                List.of(point(1024, 1.0, 2.0), point(2048, 1.0, 2.0), point(4096, 3.0, 1.0)));
        List<Calibrator.Crossover> c = Calibrator.crossovers(List.of(s));
        assertEquals(1, c.size(), c.toString());
        assertEquals(2048, c.getFirst().below());
        assertEquals(4096, c.getFirst().above());
        assertEquals(TREE_LL, c.getFirst().from());
        assertEquals(RING_LL128, c.getFirst().to());
        // at 1K RING/LL128 is within 2% of TREE/LL (a near tie): no crossover though 2K's gap is wide
        Calibrator.Shape tie = new Calibrator.Shape(
                "b", CalibrationTest.topo(2), List.of(point(1024, 1.0, 1.01), point(2048, 2.0, 1.0)));
        assertEquals(List.of(), Calibrator.crossovers(List.of(tie)));
    }

    @Test
    void constantsTheDataLeaveOpenStayAtNcclsValue() {
        // one shape, one size: most constants are not pinned; the regulariser keeps them at NCCL's value
        Topology t = CalibrationTest.topo(2);
        TuneModel m = TuneModel.of(t, ModelConstants.defaults());
        Map<AlgoProto, Double> times = new TreeMap<>(SweepInputs.NCCL_ORDER);
        for (AlgoProto ap : CalibrationTest.candidates()) {
            double x = m.time(Collective.AllReduce, ap, 1 << 20, 1);
            if (x >= 0) {
                times.put(ap, x);
            }
        }
        Calibrator.Shape s =
                new Calibrator.Shape("one", t, List.of(new Calibrator.Point(Collective.AllReduce, 1 << 20, times)));
        Calibrator.Result r = Calibrator.fit(List.of(s), Calibrator.Options.DEFAULT);
        assertEquals(0.0, r.regretFitted(), 1e-12);
        for (Calibrator.Fitted f : r.fitted()) {
            // measurements equal to NCCL's own prediction: nothing to move
            assertEquals(f.ncclDefault(), f.fitted(), f.ncclDefault() * 0.02, f.name());
        }
    }

    @Test
    void aRuleTheCalibratedModelTiesIsKeptOneItBeatsClearlyIsDropped() {
        Topology t = CalibrationTest.topo(4);
        long n = 1 << 20;
        TuneModel m = TuneModel.of(t, ModelConstants.defaults());
        List<AlgoProto> all = CalibrationTest.candidates().stream()
                .filter(ap -> m.time(Collective.AllReduce, ap, n, 1) >= 0)
                .toList();
        AlgoProto pick = m.pick(Collective.AllReduce, n, all);
        AlgoProto other =
                all.stream().filter(ap -> !ap.equals(pick)).findFirst().orElseThrow();
        Policy.Profile[] prof = new Policy.Profile[3];
        Rule[] rules = new Rule[3];
        double[] ruleTime = {1.01, 1.05, 0.90}; // the model's pick measures 1.00: ties, loses, beats
        String[] kind = {"ties", "loses", "beats"};
        List<SweepInputs> sweeps = new java.util.ArrayList<>();
        List<Profile> profiles = new java.util.ArrayList<>();
        for (int i = 0; i < 3; i++) {
            Map<AlgoProto, Double> times = new TreeMap<>(SweepInputs.NCCL_ORDER);
            for (AlgoProto ap : all) {
                times.put(ap, 2.0);
            }
            times.put(pick, 1.0);
            times.put(other, ruleTime[i]);
            Topology ti = t.atShape(8 * (i + 4), 4);
            sweeps.add(new SweepInputs(
                    null,
                    new Calibrator.Shape(kind[i], ti, List.of(new Calibrator.Point(Collective.AllReduce, n, times))),
                    null,
                    null,
                    0));
            rules[i] = new Rule(
                    Collective.AllReduce,
                    0,
                    -1L,
                    Range.ANY,
                    null,
                    0,
                    List.of(new Candidate(other.algorithm(), other.protocol(), 0, 0)));
            prof[i] = new Profile(kind[i], new Range(ti.nRanks(), ti.nRanks()), new Range(4, 4), List.of(rules[i]));
            profiles.add(prof[i]);
        }
        // the pick at these shapes must stay the 32-rank one for the times above to mean what they say
        for (SweepInputs s : sweeps) {
            assertEquals(
                    pick,
                    TuneModel.of(s.shape().topology(), ModelConstants.defaults())
                            .pick(Collective.AllReduce, n, all),
                    s.shape().source());
        }
        Compiler.Compilation c = new Compiler.Compilation(
                new Policy("m", Mode.ENFORCE, "", profiles, null), List.of(), List.of(), List.of(), null);
        CalibratedPolicy.Built b = CalibratedPolicy.build("cal", List.of(), sweeps, c, Range.ANY, HardwareMatch.ANY);
        assertEquals(2, b.kept().size(), b.kept().toString());
        assertTrue(
                b.kept().get(0).startsWith("ties:") && b.kept().get(0).endsWith("(ties it)"),
                b.kept().toString());
        assertTrue(
                b.kept().get(1).startsWith("beats:") && b.kept().get(1).endsWith("(beats the calibrated model)"),
                b.kept().toString());
        assertEquals(1, b.dropped().size(), b.dropped().toString());
        // a range with no end is spelled as everywhere else (ByteSize.range): inf
        assertEquals(
                "loses: AllReduce [0 B, inf) " + other.algorithm() + "/" + other.protocol(),
                b.dropped().getFirst());
        assertEquals(1, b.beat());
    }

    @Test
    void aProfileWithOneConstantWritesIt() throws Exception {
        TunerConstant k = TunerConstant.parse("perChMaxTreeBws.HOPPER.4NODES", 12.5);
        Policy p = new Policy(
                "one-constant",
                Mode.ENFORCE,
                "",
                List.of(new Profile("cal", Range.ANY, new Range(4, 4), List.of(), HardwareMatch.ANY, List.of(k))),
                null);
        String yaml = PolicyYaml.write(p, List.of(), Map.of());
        assertTrue(yaml.contains("perChMaxTreeBws.HOPPER.4NODES: 12.5"), yaml);
        Policy back = PolicyLoader.parse("one.yaml", yaml);
        assertEquals(1, back.profiles().getFirst().constants().size(), yaml);
        assertEquals(12.5, back.profiles().getFirst().constants().getFirst().value());
        assertEquals(
                "perChMaxTreeBws.HOPPER.4NODES",
                back.profiles().getFirst().constants().getFirst().name());
    }
}
