package io.nccltuner.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Pins what the canary's draw and the measurement's derived fields are, exactly (found missing by
 * mutation testing: a per-process random salt, {@code <=} for {@code <}, a quantile one bucket off,
 * asDecided ignoring channels all passed CanaryArmTest, AbiLayoutTest and EngineTest).
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
    return new Measurement.Series(4, 10, Decision.ARM_POLICY, decided, decidedChannels, executed, nChannels, nChannels,
        1, 1, 1, 1, 1, 1, hist);
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
    assertEquals(List.of("nccl", "policy", "notOffered", "unruled", "unjoined"),
        List.of(Decision.armName(0), Decision.armName(1), Decision.armName(2), Decision.armName(3), Decision.armName(4)));
  }
}
