package io.nccltuner.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.nccltuner.engine.Engine;
import io.nccltuner.policy.Mode;
import io.nccltuner.policy.Policy;
import io.nccltuner.reliability.RandomWorkload.Call;
import io.nccltuner.reliability.RandomWorkload.Expect;
import io.nccltuner.reliability.RandomWorkload.Guarded;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Property-based checks of the engine's invariants (seeded JUnit randomness, no extra library):
 * random policies, random cost tables of random shapes with random -1 patterns, random calls,
 * the engine called directly with native memory that has guard words around the table.
 *
 * <ul>
 *   <li>it never writes a -1 (or any negative) entry, never outside numAlgo x numProto, and writes
 *       nothing but 0.0, to at most one entry;
 *   <li>nChannels stays 0 when the chosen candidate names no channels, else is in [1, 64];
 *   <li>it decides what the policy format says (an oracle written from the format, by linear scan);
 *   <li>shadow and off modes never write;
 *   <li>identical inputs give identical decisions on every thread and in two separate JVMs.
 * </ul>
 */
class InvariantPropertyTest {
    static final long SEED = 0x6e63636cL; // fixed: a failure is reproducible
    static final int POLICIES = 240;
    static final int CALLS_PER_POLICY = 5_000; // 1,200,000 calls in all

    @Test
    void oneMillionRandomCallsKeepEveryInvariant() {
        long calls = 0;
        long applied = 0;
        long withChannels = 0;
        long allOff = 0;
        try (Guarded g = new Guarded()) {
            for (int p = 0; p < POLICIES; p++) {
                Random r = new Random(SEED + p);
                Policy policy = RandomWorkload.randomPolicy(r, "random" + p, Mode.ENFORCE);
                Engine e = new Engine(policy, Mode.ENFORCE, RandomWorkload.QUIET, null);
                long[] handles = new long[RandomWorkload.SHAPES.length];
                for (int s = 0; s < handles.length; s++) {
                    handles[s] = e.init(RandomWorkload.SHAPES[s][0], RandomWorkload.SHAPES[s][1], MemorySegment.NULL);
                }
                for (int i = 0; i < CALLS_PER_POLICY; i++) {
                    Call c = RandomWorkload.randomCall(r);
                    int s = r.nextInt(handles.length);
                    g.load(c);
                    RandomWorkload.call(e, handles[s], c, g, i);
                    Expect want = RandomWorkload.expect(
                            policy, Mode.ENFORCE, RandomWorkload.SHAPES[s][0], RandomWorkload.SHAPES[s][1], c);
                    String where =
                            "policy " + p + " call " + i + " " + c.coll() + "/" + Long.toUnsignedString(c.nBytes())
                                    + "/" + c.numPipeOps() + " " + c.numAlgo() + "x" + c.numProto();
                    check(g, c, where);
                    for (int k = 0; k < c.entries(); k++) {
                        float expected = k == want.index() ? 0f : c.costs()[k];
                        if (Float.floatToRawIntBits(g.entry(k)) != Float.floatToRawIntBits(expected)) {
                            fail(where + ": entry " + k + " is " + g.entry(k)
                                    + ", the policy's rule and NCCL's offer call for " + expected
                                    + " (the oracle picks entry " + want.index() + ")");
                        }
                    }
                    assertEquals(want.channels(), g.nChannels(), where + ": nChannels");
                    calls++;
                    applied += want.index() >= 0 ? 1 : 0;
                    withChannels += g.nChannels() != 0 ? 1 : 0;
                    allOff += c.entries() > 0 && allMinusOne(c) ? 1 : 0;
                }
            }
        }
        assertTrue(calls >= 1_000_000, "calls " + calls);
        // The workload is not vacuous: the policy applies often, with and without channel counts.
        assertTrue(applied > calls / 20, "applied " + applied + " of " + calls);
        assertTrue(withChannels > calls / 50, "with channels " + withChannels);
        assertTrue(allOff > calls / 50, "tables of all -1: " + allOff);
    }

    /** The invariants every call must keep, whatever the policy decided. */
    static void check(Guarded g, Call c, String where) {
        assertNull(g.brokenGuard(), where + ": wrote outside numAlgo x numProto");
        int writes = 0;
        for (int k = 0; k < c.entries(); k++) {
            float before = c.costs()[k];
            float after = g.entry(k);
            if (Float.floatToRawIntBits(before) != Float.floatToRawIntBits(after)) {
                writes++;
                if (before < 0f) {
                    fail(where + ": wrote " + after + " over the unavailable entry " + k + " (" + before + ")");
                }
                if (after != 0f) {
                    fail(where + ": wrote " + after + " into entry " + k + "; only 0.0 may be written");
                }
            }
        }
        if (writes > 1) {
            fail(where + ": wrote " + writes + " entries");
        }
        int ch = g.nChannels();
        if (ch != 0 && (ch < 1 || ch > 64)) {
            fail(where + ": nChannels = " + ch + "; allowed: 0 (NCCL decides) or 1..64");
        }
    }

    private static boolean allMinusOne(Call c) {
        for (float f : c.costs()) {
            if (f != -1f) {
                return false;
            }
        }
        return true;
    }

    /** Shadow and off modes compute decisions (shadow logs them) but never write the table or nChannels. */
    @Test
    void shadowAndOffNeverWrite() {
        long hits = 0;
        try (Guarded g = new Guarded()) {
            for (Mode mode : List.of(Mode.SHADOW, Mode.OFF)) {
                for (int p = 0; p < 40; p++) {
                    Random r = new Random(SEED * 31 + p);
                    Policy policy = RandomWorkload.randomPolicy(r, "quiet" + p, mode);
                    Engine e = new Engine(policy, mode, RandomWorkload.QUIET, null);
                    long[] handles = new long[RandomWorkload.SHAPES.length];
                    for (int s = 0; s < handles.length; s++) {
                        handles[s] =
                                e.init(RandomWorkload.SHAPES[s][0], RandomWorkload.SHAPES[s][1], MemorySegment.NULL);
                    }
                    for (int i = 0; i < 5_000; i++) {
                        Call c = RandomWorkload.randomCall(r);
                        int s = r.nextInt(handles.length);
                        g.load(c);
                        RandomWorkload.call(e, handles[s], c, g, i);
                        String where = mode + " policy " + p + " call " + i;
                        assertNull(g.brokenGuard(), where);
                        for (int k = 0; k < c.entries(); k++) {
                            assertEquals(
                                    Float.floatToRawIntBits(c.costs()[k]),
                                    Float.floatToRawIntBits(g.entry(k)),
                                    where + " entry " + k);
                        }
                        assertEquals(0, g.nChannels(), where);
                        if (RandomWorkload.expect(
                                                policy,
                                                Mode.ENFORCE,
                                                RandomWorkload.SHAPES[s][0],
                                                RandomWorkload.SHAPES[s][1],
                                                c)
                                        .index()
                                >= 0) {
                            hits++; // enforce would have written here
                        }
                    }
                }
            }
        }
        assertTrue(hits > 10_000, "shadow/off saw " + hits + " calls that enforce would change");
    }

    /** Every thread decides the same for the same inputs: 8 threads run the seeded workload at once. */
    @Test
    void identicalDecisionsOnEveryThread() throws Exception {
        long reference = RandomWorkload.digest(SEED, 20, 5_000);
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            List<Future<Long>> runs = new ArrayList<>();
            for (int t = 0; t < 8; t++) {
                runs.add(pool.submit(() -> RandomWorkload.digest(SEED, 20, 5_000)));
            }
            for (Future<Long> f : runs) {
                assertEquals(reference, f.get(120, TimeUnit.SECONDS));
            }
        } finally {
            pool.shutdownNow();
        }
        assertTrue(reference != RandomWorkload.digest(SEED + 1, 20, 5_000), "the digest depends on the workload");
    }

    /**
     * The cross-rank guarantee: two separate JVMs (as two ranks are) running the same seeded workload
     * print the same digest, equal to this JVM's.
     */
    @Test
    void identicalDecisionsInTwoSeparateJvms() throws Exception {
        String expected = "digest=" + Long.toHexString(RandomWorkload.digest(SEED, 20, 5_000));
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        for (int run = 0; run < 2; run++) {
            ProcessBuilder pb = new ProcessBuilder(
                            java.toString(),
                            "-Xmx256m",
                            "--enable-native-access=ALL-UNNAMED",
                            "-cp",
                            System.getProperty("java.class.path"),
                            RandomWorkload.class.getName(),
                            Long.toString(SEED),
                            "20",
                            "5000")
                    .redirectErrorStream(true);
            pb.environment().remove("JAVA_TOOL_OPTIONS");
            Process proc = pb.start();
            String out = new String(proc.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
            assertTrue(proc.waitFor(120, TimeUnit.SECONDS));
            assertEquals(0, proc.exitValue(), out);
            assertEquals(expected, out, "child JVM " + run);
        }
    }
}
