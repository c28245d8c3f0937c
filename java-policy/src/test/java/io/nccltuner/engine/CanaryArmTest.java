package io.nccltuner.engine;

import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nccltuner.policy.Mode;
import io.nccltuner.policy.Policy;
import io.nccltuner.policy.PolicyLoader;
import io.nccltuner.policy.Signature;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Canary mode: both ranks of a communicator take the same arm on every call (ranks that run
 * different algorithms hang), the policy's arm gets the configured fraction of each (collective,
 * size bucket), and no arm depends on anything but the call index, the table and the commId.
 */
class CanaryArmTest {
    static final int ALGO_TREE = 0;
    static final int ALGO_RING = 1;
    static final int PROTO_LL = 0;
    static final int PROTO_SIMPLE = 2;
    static final int NUM_PROTO = 3;
    static final int ALL_REDUCE = 4; // ncclFuncAllReduce
    static final int ALL_GATHER = 2; // ncclFuncAllGather

    static Policy policy() throws Exception {
        return PolicyLoader.parse("canary.yaml", """
        schema: nccl-tuner-java/v1
        name: canary
        mode: canary
        profiles:
          - name: two
            match: {nRanks: 2}
            rules:
              - collective: AllReduce
                bytes: {from: 64 KiB, to: 64 MiB}
                candidates:
                  - {algorithm: TREE, protocol: SIMPLE}
              - collective: AllGather
                bytes: {from: 0 B}
                candidates:
                  - {algorithm: RING, protocol: SIMPLE, channels: 16}
        """);
    }

    /** One rank's stream: per call, the entry NCCL then selects (strict minimum) and the channel count. */
    static int[] run(Engine e, long commId, long[] sizes, int[] colls) {
        try (Arena arena = Arena.ofConfined()) {
            long h = e.init(
                    2, 2, MemorySegment.NULL, new Signature(5, commId, 1, 1, 1, -1, "", -1, -1), MemorySegment.NULL);
            MemorySegment t = arena.allocate(JAVA_FLOAT, 7 * NUM_PROTO);
            MemorySegment ch = arena.allocate(JAVA_INT);
            int[] out = new int[sizes.length];
            for (int i = 0; i < sizes.length; i++) {
                for (int k = 0; k < 7 * NUM_PROTO; k++) {
                    t.setAtIndex(JAVA_FLOAT, k, -1f);
                }
                t.setAtIndex(JAVA_FLOAT, ALGO_TREE * NUM_PROTO + PROTO_SIMPLE, 50f);
                t.setAtIndex(JAVA_FLOAT, ALGO_RING * NUM_PROTO + PROTO_LL, 20f);
                t.setAtIndex(JAVA_FLOAT, ALGO_RING * NUM_PROTO + PROTO_SIMPLE, 40f);
                ch.set(JAVA_INT, 0, 0);
                e.getCollInfo(h, colls[i], sizes[i], 1, t, 7, NUM_PROTO, ch);
                out[i] = Engine.ncclPick(t, 7, NUM_PROTO) * 100 + ch.get(JAVA_INT, 0);
            }
            e.destroy(h);
            return out;
        }
    }

    static Engine engine(Mode mode, double fraction) throws Exception {
        Engine e = new Engine(policy(), mode, (l, level, m) -> {}, null);
        e.canaryFraction(fraction);
        return e;
    }

    static long[] sizes = new long[20000];
    static int[] colls = new int[sizes.length];

    static {
        Random r = new Random(7);
        for (int i = 0; i < sizes.length; i++) {
            colls[i] = r.nextInt(4) == 0 ? ALL_GATHER : ALL_REDUCE;
            sizes[i] = 1L << (10 + r.nextInt(20)); // 1 KiB .. 512 MiB: inside and outside the rules
        }
    }

    @Test
    void twoRanksTakeTheSameArmOnEveryCall() throws Exception {
        long commId = 0xe7e32ad448e4f5d5L;
        int[] rank0 = run(engine(Mode.CANARY, 0.1), commId, sizes, colls);
        int[] rank1 = run(engine(Mode.CANARY, 0.1), commId, sizes, colls);
        assertArrayEquals(rank0, rank1);
        // and both arms happen: some calls changed to the policy's candidates, most kept NCCL's RING/LL
        long policyTree = java.util.Arrays.stream(rank0)
                .filter(v -> v == (ALGO_TREE * NUM_PROTO + PROTO_SIMPLE) * 100)
                .count();
        long policyAg = java.util.Arrays.stream(rank0)
                .filter(v -> v == (ALGO_RING * NUM_PROTO + PROTO_SIMPLE) * 100 + 16)
                .count();
        assertTrue(policyTree > 0 && policyAg > 0, policyTree + " " + policyAg);
    }

    /**
     * A call that changes nothing still counts in the call index (docs/canary.md): on the second
     * rank call 100 is one the shim did not pass up (handed over as {@link Engine#skipped}), calls
     * 200-202 three of them at once, call 300 a table the engine does not edit (numAlgo 0); beside
     * them calls on an unknown handle, which count nowhere. Every other call takes the first rank's
     * arm.
     */
    @Test
    void callsThatChangeNothingStillCountInTheIndex() throws Exception {
        long commId = 0x5eedL;
        long[] s = java.util.Arrays.copyOf(sizes, 2000);
        int[] c = java.util.Arrays.copyOf(colls, 2000);
        int[] rank0 = run(engine(Mode.CANARY, 0.5), commId, s, c);
        Engine e = engine(Mode.CANARY, 0.5);
        int[] rank1 = new int[s.length];
        try (Arena arena = Arena.ofConfined()) {
            long h = e.init(
                    2, 2, MemorySegment.NULL, new Signature(5, commId, 1, 1, 1, -1, "", -1, -1), MemorySegment.NULL);
            MemorySegment t = arena.allocate(JAVA_FLOAT, 7 * NUM_PROTO);
            MemorySegment ch = arena.allocate(JAVA_INT);
            for (int i = 0; i < s.length; i++) {
                for (int k = 0; k < 7 * NUM_PROTO; k++) {
                    t.setAtIndex(JAVA_FLOAT, k, -1f);
                }
                t.setAtIndex(JAVA_FLOAT, ALGO_TREE * NUM_PROTO + PROTO_SIMPLE, 50f);
                t.setAtIndex(JAVA_FLOAT, ALGO_RING * NUM_PROTO + PROTO_LL, 20f);
                t.setAtIndex(JAVA_FLOAT, ALGO_RING * NUM_PROTO + PROTO_SIMPLE, 40f);
                ch.set(JAVA_INT, 0, 0);
                e.getCollInfo(h + 1, c[i], s[i], 1, t, 7, NUM_PROTO, ch); // unknown handle: not counted
                e.skipped(h + 1, 5);
                if (i == 100) {
                    e.skipped(h, 1);
                } else if (i == 202) {
                    e.skipped(h, 3);
                } else if (i == 300) {
                    e.getCollInfo(h, c[i], s[i], 1, t, 0, NUM_PROTO, ch);
                } else if (i != 200 && i != 201) {
                    e.getCollInfo(h, c[i], s[i], 1, t, 7, NUM_PROTO, ch);
                }
                rank1[i] = Engine.ncclPick(t, 7, NUM_PROTO) * 100 + ch.get(JAVA_INT, 0);
            }
            e.destroy(h);
        }
        for (int i = 0; i < s.length; i++) {
            if (i != 100 && i != 200 && i != 201 && i != 202 && i != 300) {
                assertEquals(rank0[i], rank1[i], "call " + i);
            }
        }
    }

    @Test
    void anotherCommunicatorDrawsOtherArms() throws Exception {
        int[] a = run(engine(Mode.CANARY, 0.5), 1, sizes, colls);
        int[] b = run(engine(Mode.CANARY, 0.5), 2, sizes, colls);
        assertFalse(java.util.Arrays.equals(a, b));
    }

    @Test
    void policyArmGetsTheFractionOfEachCollectiveAndBucket() throws Exception {
        int n = 20000;
        long[] s = new long[n];
        int[] c = new int[n];
        for (int i = 0; i < n; i++) {
            c[i] = i % 2 == 0 ? ALL_REDUCE : ALL_GATHER;
            s[i] = 1 << 20;
        }
        int[] out = run(engine(Mode.CANARY, 0.1), 42, s, c);
        int ar = 0;
        int ag = 0;
        for (int i = 0; i < n; i++) {
            if (c[i] == ALL_REDUCE && out[i] == (ALGO_TREE * NUM_PROTO + PROTO_SIMPLE) * 100) {
                ar++;
            }
            if (c[i] == ALL_GATHER && out[i] == (ALGO_RING * NUM_PROTO + PROTO_SIMPLE) * 100 + 16) {
                ag++;
            }
        }
        // 10,000 calls each at p = 0.1: sd 30, so 1000 +- 120 holds unless the draw is biased
        assertEquals(1000, ar, 120);
        assertEquals(1000, ag, 120);
    }

    @Test
    void enforceIsFractionOneAndShadowChangesNothing() throws Exception {
        int[] enforce = run(engine(Mode.ENFORCE, 0.1), 3, sizes, colls);
        int[] canaryAll = run(engine(Mode.CANARY, 1.0), 3, sizes, colls);
        int[] shadow = run(engine(Mode.SHADOW, 0.1), 3, sizes, colls);
        int[] canaryNone = run(engine(Mode.CANARY, 0.0), 3, sizes, colls);
        assertArrayEquals(enforce, canaryAll);
        assertArrayEquals(shadow, canaryNone);
        assertNotEquals(
                java.util.Arrays.stream(enforce).sum(),
                java.util.Arrays.stream(shadow).sum());
        for (int v : shadow) {
            assertEquals((ALGO_RING * NUM_PROTO + PROTO_LL) * 100, v); // NCCL's own pick, no channel count
        }
    }

    @Test
    void decisionCodeNamesTheArmAndBothPicks() throws Exception {
        Engine e = engine(Mode.CANARY, 1.0);
        try (Arena arena = Arena.ofConfined()) {
            long h = e.init(2, 2, MemorySegment.NULL, new Signature(5, 9, 1, 1, 1, -1, "", -1, -1), MemorySegment.NULL);
            MemorySegment t = arena.allocate(JAVA_FLOAT, 21);
            MemorySegment ch = arena.allocate(JAVA_INT);
            for (int k = 0; k < 21; k++) {
                t.setAtIndex(JAVA_FLOAT, k, -1f);
            }
            t.setAtIndex(JAVA_FLOAT, ALGO_RING * NUM_PROTO + PROTO_LL, 20f);
            t.setAtIndex(JAVA_FLOAT, ALGO_RING * NUM_PROTO + PROTO_SIMPLE, 40f);
            int code = e.getCollInfo(h, ALL_GATHER, 1 << 20, 1, t, 7, NUM_PROTO, ch);
            assertEquals(Decision.ARM_POLICY, Decision.arm(code));
            assertEquals(ALGO_RING * NUM_PROTO + PROTO_LL, Decision.ncclPick(code));
            assertEquals(ALGO_RING * NUM_PROTO + PROTO_SIMPLE, Decision.candidate(code));
            assertEquals(16, Decision.channels(code));
            assertEquals(io.nccltuner.policy.SizeGrid.bucket(1 << 20), Decision.bucket(code));
            // AllReduce with TREE/SIMPLE unavailable: the rule matches, its candidate is not offered
            int notOffered = e.getCollInfo(h, ALL_REDUCE, 1 << 20, 1, t, 7, NUM_PROTO, ch);
            assertEquals(Decision.ARM_NOT_OFFERED, Decision.arm(notOffered));
            assertEquals(Decision.NONE, Decision.candidate(notOffered));
            // no rule: seen, bucket only
            int unruled = e.getCollInfo(h, ALL_REDUCE, 1024, 1, t, 7, NUM_PROTO, ch);
            assertEquals(Decision.ARM_UNRULED, Decision.arm(unruled));
            assertEquals(Decision.SEEN | io.nccltuner.policy.SizeGrid.bucket(1024), unruled);
            assertEquals(0, e.getCollInfo(h + 1, ALL_REDUCE, 1024, 1, t, 7, NUM_PROTO, ch), "unknown handle");
        }
    }

    @Test
    void fractionOutsideZeroToOneIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> Canary.threshold(1.5));
        assertThrows(IllegalArgumentException.class, () -> Canary.threshold(-0.1));
        assertThrows(IllegalArgumentException.class, () -> Canary.threshold(Double.NaN));
    }

    /** The INFO line prints the fraction as configured, not the threshold's binary value. */
    @Test
    void infoLinePrintsTheFractionAsConfigured() throws Exception {
        assertEquals("fraction 0.1", Canary.fraction(Canary.threshold(0.1)));
        assertEquals("fraction 0.3", Canary.fraction(Canary.threshold(0.3)));
        assertEquals("fraction 0.05", Canary.fraction(Canary.threshold(0.05)));
        assertEquals("fraction 0.001", Canary.fraction(Canary.threshold(0.001)));
        assertEquals("fraction 1", Canary.fraction(Canary.threshold(1)));
        assertEquals("fraction 0", Canary.fraction(Canary.threshold(0)));
        java.util.List<String> lines = new java.util.ArrayList<>();
        Engine e = new Engine(policy(), Mode.CANARY, (l, level, m) -> lines.add(m), null);
        e.canaryFraction(0.1);
        e.destroy(e.init(2, 2, MemorySegment.NULL));
        assertTrue(lines.stream().anyMatch(l -> l.contains(" mode canary fraction 0.1 rules ")), lines.toString());
    }
}
