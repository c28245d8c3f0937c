package io.nccltuner.engine;

import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nccltuner.policy.Mode;
import io.nccltuner.policy.PolicyLoader;
import io.nccltuner.policy.Signature;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Pins what the canary's draw, the engine's decision code and the measurement's derived fields are,
 * exactly. Found missing by mutation testing: each of these passed CanaryArmTest, AbiLayoutTest and
 * EngineTest and fails here: a per-process random salt in Canary.seed, {@code <=} for {@code <} in
 * policyArm, threshold rounding down, quantileUs one bucket off, asDecided ignoring channels, the
 * call index counting rule hits only, the code's arm always "policy", the code's entries encoded
 * with 3 protocols instead of the call's numProto.
 */
class CanaryMeasurementAdvTest {
    static final String SHA = "50e87163f1f000d756d7053d8761e7ff02c3af2103a1cbb75dcc6d3d0a5e341c";

    /** The seed is a pure function of sha256 and commId: the same in every process (every rank). */
    @Test
    void seedIsAFixedFunction() {
        assertEquals(-4435929290796336286L, Canary.seed(SHA, 0x600dL));
        assertEquals(870517752782951149L, Canary.seed(SHA, 0L));
        long s = Canary.seed(SHA, 0x600dL);
        int t = Canary.threshold(0.3);
        StringBuilder b = new StringBuilder();
        for (int i = 1; i <= 64; i++) {
            b.append(Canary.policyArm(s, i, t) ? '1' : '0');
        }
        assertEquals("1100000001000100001100001000000000001000001001010100000000011000", b.toString());
    }

    /** A draw equal to the threshold is not below it: fraction 0 never takes the policy's arm. */
    @Test
    void drawEqualToThresholdIsTheNcclArm() {
        long seed = Canary.seed(SHA, 7);
        for (long index = 1; index <= 1000; index++) {
            int draw = (int) (Canary.mix(seed + index * 0x9e3779b97f4a7c15L) >>> 40);
            assertFalse(Canary.policyArm(seed, index, draw), "index " + index);
            assertTrue(Canary.policyArm(seed, index, draw + 1), "index " + index);
        }
        assertFalse(Canary.policyArm(seed, 1, 0));
    }

    static Measurement.Series series(int decided, int decidedChannels, int executed, int nChannels, long[] hist) {
        return new Measurement.Series(
                4,
                10,
                Decision.ARM_POLICY,
                decided,
                decidedChannels,
                executed,
                nChannels,
                nChannels,
                1,
                1,
                1,
                1,
                1,
                1,
                hist);
    }

    @Test
    void asDecidedComparesChannelsWhenTheCandidateNamesThem() {
        long[] h = new long[Measurement.HIST_BUCKETS];
        assertTrue(series(4, 0, 4, 8, h).asDecided());
        assertTrue(series(4, 8, 4, 8, h).asDecided());
        assertFalse(series(4, 8, 4, 4, h).asDecided());
        assertFalse(series(4, 0, 5, 8, h).asDecided());
        assertNull(series(-1, 0, 5, 8, h).asDecided());
    }

    @Test
    void quantilesAreTheBucketHoldingTheRank() {
        long[] h = new long[Measurement.HIST_BUCKETS];
        h[68] = 10;
        h[100] = 10;
        Measurement.Series s = series(4, 0, 4, 2, h);
        assertEquals(4.992, s.quantileUs(0.5), 1e-9);
        assertEquals(19.968, s.quantileUs(0.55), 1e-9);
        assertEquals(19.968, s.quantileUs(1.0), 1e-9);
        long[] one = new long[Measurement.HIST_BUCKETS];
        one[1] = 1;
        assertEquals(0.264, series(4, 0, 4, 2, one).quantileUs(0.01), 1e-9); // [256, 272) ns
        assertEquals(256.0, Measurement.bucketLowNs(1));
        assertEquals(512.0, Measurement.bucketLowNs(17));
        assertEquals(Math.scalb(1.0, 32), Measurement.bucketLowNs(Measurement.HIST_BUCKETS - 1));
    }

    @Test
    void decisionCodeRoundTrips() {
        int c = Decision.rule(201, Decision.ARM_POLICY, 7, 13, 42);
        assertEquals(201, Decision.bucket(c));
        assertEquals(Decision.ARM_POLICY, Decision.arm(c));
        assertEquals(7, Decision.ncclPick(c));
        assertEquals(13, Decision.candidate(c));
        assertEquals(42, Decision.channels(c));
        assertEquals(Decision.ARM_UNRULED, Decision.arm(Decision.SEEN | 5));
        assertEquals(
                List.of("nccl", "policy", "notOffered", "unruled", "unjoined"),
                List.of(
                        Decision.armName(0),
                        Decision.armName(1),
                        Decision.armName(2),
                        Decision.armName(3),
                        Decision.armName(4)));
    }

    @Test
    void thresholdsOfTheEnds() {
        assertEquals(Canary.ALL, Canary.threshold(1.0));
        assertEquals(0, Canary.threshold(0.0));
        assertEquals(1 << 23, Canary.threshold(0.5));
    }

    /**
     * In canary mode: the arm in the code is the policy's exactly when the table was written, and
     * the arm of a call is {@code policyArm(seed(sha256, commId), index, threshold)} with index
     * counting every getCollInfo call of the communicator (unruled ones too), from 1.
     */
    @Test
    void armIsTheDrawOfEveryCallIndexAndMatchesTheWrite() throws Exception {
        List<String> logged = new ArrayList<>();
        Engine e = new Engine(CanaryArmTest.policy(), Mode.CANARY, (l, level, m) -> logged.add(m), null);
        e.canaryFraction(0.3);
        long commId = 0x1234abcdL;
        try (Arena arena = Arena.ofConfined()) {
            long h = e.init(
                    2, 2, MemorySegment.NULL, new Signature(5, commId, 1, 1, 1, -1, "", -1, -1), MemorySegment.NULL);
            String sha = null;
            for (String m : logged) {
                Matcher x = Pattern.compile("sha256 ([0-9a-f]{64})").matcher(m);
                if (x.find()) {
                    sha = x.group(1);
                }
            }
            assertTrue(sha != null, "no sha256 in " + logged);
            long seed = Canary.seed(sha, commId);
            int threshold = Canary.threshold(0.3);
            MemorySegment t = arena.allocate(JAVA_FLOAT, 21);
            MemorySegment ch = arena.allocate(JAVA_INT);
            int policy = 0;
            int nccl = 0;
            for (int i = 1; i <= 2000; i++) {
                for (int k = 0; k < 21; k++) {
                    t.setAtIndex(JAVA_FLOAT, k, 10f + k);
                }
                t.setAtIndex(JAVA_FLOAT, CanaryArmTest.ALGO_TREE * 3 + CanaryArmTest.PROTO_SIMPLE, 50f);
                boolean ruled = i % 3 != 0; // every third call is 1 KiB: no rule covers it
                int code = e.getCollInfo(h, CanaryArmTest.ALL_REDUCE, ruled ? 1 << 20 : 1024, 1, t, 7, 3, ch);
                if (!ruled) {
                    assertEquals(Decision.ARM_UNRULED, Decision.arm(code));
                    continue;
                }
                boolean written =
                        t.getAtIndex(JAVA_FLOAT, CanaryArmTest.ALGO_TREE * 3 + CanaryArmTest.PROTO_SIMPLE) == 0f;
                assertEquals(Canary.policyArm(seed, i, threshold), written, "call " + i);
                assertEquals(written ? Decision.ARM_POLICY : Decision.ARM_NCCL, Decision.arm(code), "call " + i);
                if (written) {
                    policy++;
                } else {
                    nccl++;
                }
            }
            assertTrue(policy > 300 && nccl > 700, policy + " policy, " + nccl + " nccl");
            e.destroy(h);
        }
    }

    /** The code's configurations are algorithm * numProto + protocol of the call's own table (here 7x2). */
    @Test
    void codeUsesTheCallsNumProto() throws Exception {
        Engine e = new Engine(PolicyLoader.parse("p.yaml", """
        schema: nccl-tuner-java/v1
        name: p
        mode: enforce
        profiles:
          - name: two
            match: {nRanks: 2}
            rules:
              - collective: AllReduce
                bytes: {from: 0 B}
                candidates:
                  - {algorithm: RING, protocol: LL128}
        """), Mode.ENFORCE, (l, level, m) -> {}, null);
        try (Arena arena = Arena.ofConfined()) {
            long h = e.init(2, 2, MemorySegment.NULL, new Signature(5, 3, 1, 1, 1, -1, "", -1, -1), MemorySegment.NULL);
            MemorySegment t = arena.allocate(JAVA_FLOAT, 14);
            MemorySegment ch = arena.allocate(JAVA_INT);
            for (int k = 0; k < 14; k++) {
                t.setAtIndex(JAVA_FLOAT, k, 10f + k);
            }
            int code = e.getCollInfo(h, CanaryArmTest.ALL_REDUCE, 4096, 1, t, 7, 2, ch);
            assertEquals(Decision.ARM_POLICY, Decision.arm(code));
            assertEquals(1 * 2 + 1, Decision.candidate(code), "RING/LL128 in a 7x2 table");
            assertEquals(0f, t.getAtIndex(JAVA_FLOAT, 3));
            e.destroy(h);
        }
    }
}
