package io.nccltuner.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nccltuner.engine.DecisionLog;
import io.nccltuner.engine.Engine;
import io.nccltuner.policy.Mode;
import io.nccltuner.policy.Policy;
import io.nccltuner.reliability.RandomWorkload.Call;
import io.nccltuner.reliability.RandomWorkload.Guarded;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The engine shared by many threads, as the plugin's JVM is: 16 threads make 4,000,000 calls in all
 * on 64 communicators they share (call k runs on thread k % 16, on communicator mix(k) % 64), while
 * another thread keeps opening and closing communicators of its own. No exception, every call keeps
 * the invariants, and every decision equals the one a single thread makes for the same call.
 * The same through the built plugin: io.nccltuner.reliability.it.ConcurrencyPluginIT.
 */
public class EngineConcurrencyTest {
    /** A shadow-mode policy with one rule that every AllReduce hits (also used by ConcurrencyPluginTest). */
    public static final String SHADOW_ALL = """
      schema: nccl-tuner-java/v1
      name: every-call
      mode: shadow
      profiles:
        - name: all
          rules:
            - collective: AllReduce
              bytes: {from: 0}
              candidates: [{algorithm: RING, protocol: SIMPLE, channels: 8}]
      """;

    static final int THREADS = 16;
    static final int COMMS = 64;
    static final int CALLS = 4_000_000;
    static final long SEED = 0x636f6e63L;

    static int commOf(long k) {
        long z = (k + SEED) * 0x9e3779b97f4a7c15L;
        z = (z ^ (z >>> 31)) * 0xbf58476d1ce4e5b9L;
        return (int) Long.remainderUnsigned(z ^ (z >>> 29), COMMS);
    }

    /** Call k of the workload, a pure function of k. */
    static Call call(long k) {
        return RandomWorkload.randomCall(new Random(SEED * 7919 + k));
    }

    @Test
    void sixteenThreadsSixtyFourCommunicatorsFourMillionCallsDecideAsOneThread() throws Exception {
        Policy policy = RandomWorkload.randomPolicy(new Random(SEED), "concurrency", Mode.ENFORCE);
        Engine e = new Engine(policy, Mode.ENFORCE, RandomWorkload.QUIET, null);
        long[] handles = new long[COMMS];
        for (int c = 0; c < COMMS; c++) {
            long[] shape = RandomWorkload.SHAPES[c % RandomWorkload.SHAPES.length];
            handles[c] = e.init(shape[0], shape[1], MemorySegment.NULL);
        }
        long[] concurrent = new long[CALLS];
        AtomicReference<Throwable> failure = new AtomicReference<>();
        AtomicBoolean done = new AtomicBoolean();
        AtomicLong churned = new AtomicLong();
        // Communicators come and go beside the 64 in use (the handle table is copied on write).
        Thread churn = Thread.ofPlatform().start(() -> {
            while (!done.get()) {
                long h = e.init(2, 1, MemorySegment.NULL);
                e.destroy(h);
                churned.incrementAndGet();
            }
        });
        Thread[] ts = new Thread[THREADS];
        for (int t = 0; t < THREADS; t++) {
            final int first = t;
            ts[t] = Thread.ofPlatform().start(() -> {
                try (Guarded g = new Guarded()) {
                    for (long k = first; k < CALLS; k += THREADS) {
                        Call c = call(k);
                        g.load(c);
                        RandomWorkload.call(e, handles[commOf(k)], c, g, k);
                        InvariantPropertyTest.check(g, c, "concurrent call " + k);
                        concurrent[(int) k] = g.hash();
                    }
                } catch (Throwable x) {
                    failure.compareAndSet(null, x);
                }
            });
        }
        for (Thread t : ts) {
            t.join();
        }
        done.set(true);
        churn.join();
        if (failure.get() != null) {
            throw new AssertionError("a thread failed", failure.get());
        }
        assertTrue(churned.get() > 0);
        long differing = 0;
        long applied = 0;
        try (Guarded g = new Guarded()) {
            for (long k = 0; k < CALLS; k++) {
                Call c = call(k);
                g.load(c);
                RandomWorkload.call(e, handles[commOf(k)], c, g, k);
                differing += g.hash() != concurrent[(int) k] ? 1 : 0;
                long[] shape = RandomWorkload.SHAPES[commOf(k) % RandomWorkload.SHAPES.length];
                applied += RandomWorkload.expect(policy, Mode.ENFORCE, shape[0], shape[1], c)
                                        .index()
                                >= 0
                        ? 1
                        : 0;
            }
        }
        assertEquals(0, differing, "calls decided differently by 16 threads than by one");
        assertTrue(applied > CALLS / 50, "the policy applies to " + applied + " calls");
    }

    /**
     * Shadow mode with the decision log on, through the engine: 16 threads, 100,000 calls that each
     * hit a rule, give 100,000 whole records (the queue has room for all of them).
     */
    @Test
    void shadowLoggingHundredThousandConcurrentCallsHundredThousandRecords(@TempDir Path dir) throws Exception {
        Policy policy = io.nccltuner.policy.PolicyLoader.parse("all.yaml", SHADOW_ALL);
        List<String> warns = new CopyOnWriteArrayList<>();
        Path file = dir.resolve("shadow.jsonl");
        DecisionLog log = new DecisionLog(file, 1 << 17, (l, level, m) -> warns.add(m));
        Engine e = new Engine(
                policy,
                Mode.SHADOW,
                (l, level, m) -> {
                    if (level == io.nccltuner.engine.TunerLog.WARN) {
                        warns.add(m);
                    }
                },
                log);
        long[] handles = new long[COMMS];
        for (int c = 0; c < COMMS; c++) {
            handles[c] = e.init(2, 1, MemorySegment.NULL);
        }
        int total = 100_000;
        Thread[] ts = new Thread[THREADS];
        AtomicReference<Throwable> failure = new AtomicReference<>();
        for (int t = 0; t < THREADS; t++) {
            final int first = t;
            ts[t] = Thread.ofPlatform().start(() -> {
                try (Guarded g = new Guarded()) {
                    for (int k = first; k < total; k += THREADS) {
                        float[] costs = new float[21];
                        for (int i = 0; i < 21; i++) {
                            costs[i] = 1f + (i + k) % 21; // NCCL's pick: entry (21 - k % 21) % 21
                        }
                        Call c = new Call(4, k + 1L, 1 + k % 4, 7, 3, costs);
                        g.load(c);
                        RandomWorkload.call(e, handles[commOf(k)], c, g, k);
                        InvariantPropertyTest.check(g, c, "shadow call " + k);
                        for (int i = 0; i < 21; i++) {
                            assertEquals(costs[i], g.entry(i), "shadow never writes");
                        }
                    }
                } catch (Throwable x) {
                    failure.compareAndSet(null, x);
                }
            });
        }
        for (Thread t : ts) {
            t.join();
        }
        if (failure.get() != null) {
            throw new AssertionError("a thread failed", failure.get());
        }
        for (long h : handles) {
            e.destroy(h); // waits for the log to reach the file
        }
        assertEquals(0, log.dropped());
        // per-call records (this log was opened with them); the aggregate lines ("type") come at destroy
        List<String> lines = Files.readAllLines(file).stream()
                .filter(l -> !l.startsWith("{\"type\""))
                .toList();
        assertEquals(total, lines.size());
        var m = new com.fasterxml.jackson.databind.ObjectMapper();
        java.util.BitSet seen = new java.util.BitSet(total);
        for (String line : lines) {
            var n = m.readTree(line);
            int k = (int) (n.get("nBytes").asLong() - 1);
            assertEquals(8, n.size(), line);
            assertEquals("AllReduce", n.get("collective").asText(), line);
            assertEquals(1 + k % 4, n.get("numPipeOps").asInt(), line);
            int pick = (21 - k % 21) % 21;
            assertEquals(
                    io.nccltuner.policy.Algorithm.ofId(pick / 3) + "/" + io.nccltuner.policy.Protocol.ofId(pick % 3),
                    n.get("ncclPick").asText(),
                    line);
            assertEquals("RING/SIMPLE", n.get("policyPick").asText(), line);
            assertEquals(8, n.get("channels").asInt(), line);
            assertEquals(false, n.get("applied").asBoolean(), line);
            assertTrue(!seen.get(k), "record of call " + k + " twice");
            seen.set(k);
        }
        assertEquals(total, seen.cardinality());
        assertTrue(warns.isEmpty(), warns.toString());
    }
}
