package io.nccltuner.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nccltuner.policy.Algorithm;
import io.nccltuner.policy.Collective;
import io.nccltuner.policy.Protocol;
import io.nccltuner.trace.TraceCall;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The cost function's release differences and the rounding/tightening machinery, on small
 * hand-made tables whose expected times are written out from the formula in each test.
 */
class CostModelTest {
    static final AlgoProto TREE_LL = new AlgoProto(Algorithm.TREE, Protocol.LL);
    static final AlgoProto TREE_SIMPLE = new AlgoProto(Algorithm.TREE, Protocol.SIMPLE);
    static final AlgoProto RING_LL = new AlgoProto(Algorithm.RING, Protocol.LL);
    static final AlgoProto RING_SIMPLE = new AlgoProto(Algorithm.RING, Protocol.SIMPLE);
    static final NcclVersion V2_21 = new NcclVersion(2, 21, 5);
    static final NcclVersion V2_22 = new NcclVersion(2, 22, 3);
    static final NcclVersion V2_28 = new NcclVersion(2, 28, 9);

    /** A 6-algorithm table with the given entries for every collective, all else 0.0/0.0. */
    static CostTable table(int numAlgos, Object... entries) {
        CostTable.Builder b = CostTable.builder(numAlgos);
        for (Collective c : Collective.values()) {
            for (int a = 0; a < numAlgos; a++) {
                for (Protocol p : Protocol.values()) {
                    b.entry(c, new AlgoProto(Algorithm.ofId(a), p), "0.0", "0.0");
                }
            }
            for (int i = 0; i < entries.length; i += 3) {
                b.entry(c, (AlgoProto) entries[i], (String) entries[i + 1], (String) entries[i + 2]);
            }
        }
        return b.build();
    }

    /** @return the model's nominal time in microseconds for one candidate at nBytes, numPipeOps 1 */
    static double time(CostModel m, Collective c, long nBytes, AlgoProto ap) {
        return time(m, c, nBytes, 1, ap);
    }

    /** @return the model's nominal time in microseconds for one candidate at nBytes and numPipeOps */
    static double time(CostModel m, Collective c, long nBytes, int numPipeOps, AlgoProto ap) {
        return m.predict(c, nBytes, numPipeOps).candidate(ap).time();
    }

    @Test
    void treeCorrectionBelow64BytesChangedIn222() {
        CostTable t = table(6, TREE_SIMPLE, "10.0", "1.0");
        CommShape s = CommShape.of(4, 1, 8);
        // 2.21: log2i(32 >> 6) = log2i(0) = 0, entry 0 of SIMPLE is 0.9
        assertEquals(
                10 + 32 / (1000 * 1.0 * 0.9),
                time(CostModel.of(V2_21, s, t), Collective.AllReduce, 32, TREE_SIMPLE),
                1e-12);
        // 2.22: log2Down(0) = -1, no correction
        assertEquals(10 + 32 / 1000.0, time(CostModel.of(V2_22, s, t), Collective.AllReduce, 32, TREE_SIMPLE), 1e-12);
        // 1 MiB: logSize 14, SIMPLE .5, same in both
        assertEquals(
                10 + 1048576 / (1000 * 0.5),
                time(CostModel.of(V2_28, s, t), Collective.AllReduce, 1 << 20, TREE_SIMPLE),
                1e-9);
    }

    @Test
    void treeCorrectionOnlyForAllReduceFrom223() {
        CostTable t = table(7, TREE_LL, "5.0", "2.0");
        CommShape s = CommShape.of(4, 1, 8);
        long n = 1 << 20; // logSize 14: LL .5
        assertEquals(
                5 + n / (1000 * 2.0 * 0.5),
                time(CostModel.of(V2_22, s, table(6, TREE_LL, "5.0", "2.0")), Collective.AllGather, n, TREE_LL),
                1e-9);
        assertEquals(
                5 + n / (1000 * 2.0),
                time(CostModel.of(new NcclVersion(2, 23, 4), s, t), Collective.AllGather, n, TREE_LL),
                1e-9);
    }

    @Test
    void latCountBatchesPipeOpsForAlgorithmsOtherThanRing() {
        CostTable t = table(7, TREE_LL, "10.0", "1.0", RING_LL, "10.0", "1.0");
        CommShape s = CommShape.of(2, 1, 2);
        // 20 pipelined ops, 32 B (no Tree correction from 2.22): Ring counts 20 latencies; Tree counts
        // DIVUP(20, NCCL_MAX_DEV_WORK_BATCH_COLLS): 1024 / sizeof(ncclDevWorkColl) = 1024 / 96 = 10 in
        // 2.28, 1024 / 64 = 16 in 2.22, 1024 / 128 = 8 in 2.30, NCCL_MAX_WORK_ELEMENTS = 9 before.
        double bytesTerm = 32 / 1000.0;
        assertEquals(20 * 10 + bytesTerm, time(CostModel.of(V2_28, s, t), Collective.AllReduce, 32, 20, RING_LL), 1e-9);
        assertEquals(2 * 10 + bytesTerm, time(CostModel.of(V2_28, s, t), Collective.AllReduce, 32, 20, TREE_LL), 1e-9);
        assertEquals(
                2 * 10 + bytesTerm,
                time(CostModel.of(V2_22, s, table(6, TREE_LL, "10.0", "1.0")), Collective.AllReduce, 32, 20, TREE_LL),
                1e-9);
        assertEquals(
                3 * 10 + bytesTerm,
                time(CostModel.of(new NcclVersion(2, 30, 7), s, t), Collective.AllReduce, 32, 20, TREE_LL),
                1e-9);
    }

    @Test
    void ringSimplePlateauOnMoreThanOneNode() {
        CostTable t = table(7, RING_SIMPLE, "36.4", "1.2");
        CommShape s = CommShape.of(2, 2, 2); // plateau once nBytes / (2 x 2) >= 64, i.e. from 256 B
        CostModel hopper = CostModel.of(V2_28, s.withComputeCapability(90), t);
        CostModel volta = CostModel.of(V2_28, s.withComputeCapability(70), t);
        assertEquals(36.4 + 255 / 1200.0, time(hopper, Collective.AllReduce, 255, RING_SIMPLE), 1e-9);
        assertEquals(36.4 * 1.4 + 256 / 1200.0, time(hopper, Collective.AllReduce, 256, RING_SIMPLE), 1e-9);
        assertEquals(36.4 * 1.9 + 256 / 1200.0, time(volta, Collective.AllReduce, 256, RING_SIMPLE), 1e-9);
        // other collectives and single-node communicators never pay it
        assertEquals(36.4 + 256 / 1200.0, time(hopper, Collective.Broadcast, 256, RING_SIMPLE), 1e-9);
        assertEquals(
                36.4 + 256 / 1200.0,
                time(
                        CostModel.of(V2_28, CommShape.of(2, 1, 2).withComputeCapability(70), t),
                        Collective.AllReduce,
                        256,
                        RING_SIMPLE),
                1e-9);
        // unknown compute capability: the range covers x1.4 and x1.9, the nominal time is the middle
        CandidateTime unknown =
                CostModel.of(V2_28, s, t).predict(Collective.AllReduce, 256, 1).candidate(RING_SIMPLE);
        assertTrue(unknown.range().lo() <= 36.35 * 1.4 + 256 / 1250.0 + 1e-9);
        assertTrue(unknown.range().hi() >= 36.45 * 1.9 + 256 / 1150.0 - 1e-9);
        assertEquals(36.4 * 1.65 + 256 / 1200.0, unknown.time(), 1e-9);
    }

    @Test
    void unknownChannelsMakeThePlateauUncertainOnlyInBetween() {
        CostTable t = table(7, RING_SIMPLE, "36.4", "1.2");
        CostModel m = CostModel.of(V2_28, CommShape.of(2, 2, 0).withComputeCapability(90), t);
        // below 64 x nRanks = 128 B no channel count reaches the threshold; from 64 x 64 x 2 every one does
        assertEquals(36.4 + 127 / 1200.0, time(m, Collective.AllReduce, 127, RING_SIMPLE), 1e-9);
        assertEquals(36.4 * 1.4 + 8192 / 1200.0, time(m, Collective.AllReduce, 8192, RING_SIMPLE), 1e-9);
        assertEquals(36.4 * 1.2 + 1024 / 1200.0, time(m, Collective.AllReduce, 1024, RING_SIMPLE), 1e-9);
    }

    @Test
    void singleRankRunsRingSimpleAtZero() {
        CostTable t = table(7, RING_LL, "5.0", "1.0", TREE_LL, "5.0", "1.0");
        Prediction p = CostModel.of(V2_28, CommShape.of(1, 1, 1), t).predict(Collective.AllReduce, 1024, 1);
        assertEquals(RING_SIMPLE, p.pick());
        assertEquals(0.0, p.pickTime());
        assertFalse(p.candidate(RING_LL).offered());
    }

    @Test
    void noOfferedEntryMeansNoPick() {
        Prediction p = CostModel.of(V2_28, CommShape.of(2, 1, 2), table(7)).predict(Collective.AllReduce, 1024, 1);
        assertNull(p.pick());
        assertEquals(List.of(), p.possiblePicks());
    }

    @Test
    void roundingMakesCloseCandidatesAmbiguous() {
        // at 0 B both are pure latency: 10.0 stands for [9.95, 10.05], 10.1 for [10.05, 10.15]: they touch
        CostTable t = table(7, TREE_LL, "10.1", "5.0", RING_LL, "10.0", "5.0");
        Prediction p = CostModel.of(V2_28, CommShape.of(2, 1, 2), t).predict(Collective.AllReduce, 0, 1);
        assertEquals(RING_LL, p.pick());
        assertTrue(p.ambiguous());
        assertEquals(List.of(RING_LL, TREE_LL), p.possiblePicks());
        // 0.2 apart they are not
        CostTable apart = table(7, TREE_LL, "10.2", "5.0", RING_LL, "10.0", "5.0");
        assertFalse(CostModel.of(V2_28, CommShape.of(2, 1, 2), apart)
                .predict(Collective.AllReduce, 0, 1)
                .ambiguous());
    }

    @Test
    void ties() {
        // equal nominal times: the earlier entry in algorithm-major order wins (strict minimum)
        CostTable t = table(7, TREE_LL, "10.0", "5.0", RING_LL, "10.0", "5.0");
        assertEquals(
                TREE_LL,
                CostModel.of(V2_28, CommShape.of(2, 1, 2), t)
                        .predict(Collective.AllReduce, 0, 1)
                        .pick());
    }

    /** Costs computed from a "true" latency/bandwidth inside the printed box narrow the box around it. */
    @Test
    void tighteningRecoversTheUnroundedParameters() {
        double lat = 16.8011;
        double bw = 0.24687;
        CostTable t = table(7, RING_LL, "16.8", "0.2");
        CommShape s = CommShape.of(2, 1, 2);
        CostModel m = CostModel.of(V2_28, s, t);
        List<TraceCall> calls = new ArrayList<>();
        for (long n = 4; n <= 1 << 20; n <<= 2) {
            float cost = (float) (lat + n / (1000 * bw));
            String printed = String.format(java.util.Locale.ROOT, "%.6g", cost);
            calls.add(call(4, n, RING_LL, printed));
        }
        CostModel.Tightening tt = m.tighten(calls);
        assertEquals(List.of(), tt.problems());
        Interval l = tt.model().latencyRange(Collective.AllReduce, RING_LL);
        Interval b = tt.model().bandwidthRange(Collective.AllReduce, RING_LL);
        assertTrue(l.contains(lat, 0) && l.width() < 0.001, l::toString);
        assertTrue(b.contains(bw, 0) && b.width() < 0.0001, b::toString);
        assertEquals(calls.size(), tt.model().observations(Collective.AllReduce, RING_LL));
        // a cost the table cannot produce is reported, not used
        CostModel.Tightening bad = m.tighten(List.of(call(4, 1024, RING_LL, "99.0")));
        assertEquals(1, bad.problems().size());
        assertTrue(bad.problems().get(0).contains("outside"), bad.problems()::toString);
    }

    static TraceCall call(int coll, long nBytes, AlgoProto ap, String printedCost) {
        float[] costs = new float[21];
        double[] tol = new double[21];
        java.util.Arrays.fill(costs, -1f);
        costs[ap.index(3)] = Float.parseFloat(printedCost);
        tol[ap.index(3)] = Math.pow(10, -new java.math.BigDecimal(printedCost).scale()) / 2;
        return new TraceCall(1, 0, 2, 1, Collective.ofId(coll), nBytes, 1, 7, 3, 0, costs, tol);
    }

    @Test
    void patReduceScatterIsConditionalFrom223() {
        assertTrue(NcclFacts.isConditional(V2_28, Collective.ReduceScatter, Algorithm.PAT));
        assertFalse(NcclFacts.isConditional(V2_28, Collective.AllGather, Algorithm.PAT));
        assertFalse(NcclFacts.isConditional(V2_28, Collective.AllReduce, Algorithm.RING));
    }
}
