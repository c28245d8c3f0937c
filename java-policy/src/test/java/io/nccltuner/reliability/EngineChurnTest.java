package io.nccltuner.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nccltuner.engine.Engine;
import io.nccltuner.policy.Mode;
import io.nccltuner.policy.Policy;
import io.nccltuner.reliability.RandomWorkload.Call;
import io.nccltuner.reliability.RandomWorkload.Guarded;
import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The handle table under churn (Engine.init and destroy write a slot in place and publish it by the
 * volatile write of {@code comms}, copying the array only when it grows): 6 threads for 3 s each
 * open a communicator of a shape of its own round, make 20..99 canary-mode calls on it and close it,
 * while keeping 0..8 more communicators of theirs open (opened and closed in turn), so the table
 * grows (16 -> 32 -> 64 slots) and slots are reused while other threads read theirs. Each thread
 * replays every round on an engine of its own, single-threaded, with the same policy: every call's
 * decision code, cost table and nChannels, and each communicator's summary line at destroy
 * (profile, calls, rule hits, applied), must be that run's. The canary arm (fraction 0.5) depends on
 * the call's index on its communicator and the profile's table, so a call counted on another
 * communicator or decided with another's table shows as a difference.
 */
class EngineChurnTest {
    static final int THREADS = 6;
    static final long MILLIS = 3000;
    static final long SEED = 0x636875726eL;

    @Test
    @Timeout(60)
    void concurrentInitDestroyAndCallsDecideAsOneThread() throws Exception {
        Policy policy = io.nccltuner.policy.PolicyLoader.parse("churn.yaml", policyYaml());
        Engine shared = new Engine(policy, Mode.CANARY, RandomWorkload.QUIET, null);
        shared.canaryFraction(0.5);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        AtomicLong calls = new AtomicLong();
        AtomicLong rounds = new AtomicLong();
        Set<String> profiles = ConcurrentHashMap.newKeySet();
        long deadline = System.nanoTime() + MILLIS * 1_000_000;
        Thread[] ts = new Thread[THREADS];
        for (int t = 0; t < THREADS; t++) {
            final int id = t;
            ts[t] = Thread.ofPlatform().start(() -> {
                Engine alone = new Engine(policy, Mode.CANARY, RandomWorkload.QUIET, null);
                alone.canaryFraction(0.5);
                ArrayDeque<Long> parked = new ArrayDeque<>();
                try (Guarded g = new Guarded()) {
                    for (int round = 0; System.nanoTime() < deadline; round++) {
                        long[] shape = RandomWorkload.SHAPES[(id + round) % RandomWorkload.SHAPES.length];
                        for (int k = 0; k < round % 3; k++) { // more communicators open: the table grows
                            parked.add(shared.init(2, 1, MemorySegment.NULL));
                        }
                        while (parked.size() > 8) {
                            shared.destroy(parked.poll());
                        }
                        long h = shared.init(shape[0], shape[1], MemorySegment.NULL);
                        long ref = alone.init(shape[0], shape[1], MemorySegment.NULL);
                        Random r = new Random(SEED ^ ((long) id << 32) ^ round);
                        int n = 20 + r.nextInt(80);
                        for (int i = 0; i < n; i++) {
                            Call c = RandomWorkload.randomCall(r);
                            g.load(c);
                            int code = call(shared, h, c, g);
                            long got = g.hash();
                            g.load(c);
                            int want = call(alone, ref, c, g);
                            if (code != want || got != g.hash()) {
                                throw new AssertionError("thread " + id + " round " + round + " call " + (i + 1)
                                        + " on nRanks=" + shape[0] + " nNodes=" + shape[1] + ": code " + code
                                        + " table/nChannels hash " + got + ", alone " + want + " " + g.hash());
                            }
                        }
                        String line = shared.destroy(h);
                        String wantLine = alone.destroy(ref);
                        assertEquals(wantLine, line, "thread " + id + " round " + round + ": the summary");
                        if (wantLine != null) {
                            profiles.add(wantLine.substring(0, wantLine.indexOf(" mode ")));
                        }
                        calls.addAndGet(n);
                        rounds.incrementAndGet();
                    }
                    for (long p : parked) {
                        shared.destroy(p);
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
        System.out.println("EngineChurnTest: " + THREADS + " threads, " + rounds.get() + " communicators opened and"
                + " closed around " + calls.get() + " calls, profiles " + profiles);
        assertTrue(rounds.get() >= THREADS * 10L, "rounds " + rounds.get());
        assertTrue(
                profiles.size() == RandomWorkload.SHAPES.length,
                "shapes must reach different profiles for the check to bite: " + profiles);
        // every communicator closed: a fresh one takes a slot the churn freed, the table never shrinks
        long h = shared.init(2, 1, MemorySegment.NULL);
        assertTrue((int) h > 0 && (int) h <= THREADS * 10, "slot " + (int) h);
        shared.destroy(h);
    }

    /**
     * One profile per {@link RandomWorkload#SHAPES} shape, each deciding otherwise: profile i sends
     * every AllReduce and Broadcast to its own first candidate (algorithm i % 2, protocol i % 3) with
     * its own channel count (i + 1), a second candidate behind it, so two shapes' tables give
     * different cost tables and nChannels on the same call.
     */
    static String policyYaml() {
        String[] algos = {"TREE", "RING"};
        String[] protos = {"LL", "LL128", "SIMPLE"};
        StringBuilder y = new StringBuilder("schema: nccl-tuner-java/v1\nname: churn\nprofiles:\n");
        for (int i = 0; i < RandomWorkload.SHAPES.length; i++) {
            long[] s = RandomWorkload.SHAPES[i];
            y.append("  - name: shape").append(i).append('\n');
            y.append("    match: {nRanks: ")
                    .append(s[0])
                    .append(", nNodes: ")
                    .append(s[1])
                    .append("}\n");
            y.append("    rules:\n");
            for (String coll : new String[] {"AllReduce", "Broadcast"}) {
                y.append("      - collective: ").append(coll).append('\n');
                y.append("        bytes: {from: ")
                        .append(coll.equals("AllReduce") ? 0 : 1 << i)
                        .append("}\n");
                y.append("        candidates:\n");
                y.append("          - {algorithm: ")
                        .append(algos[i % 2])
                        .append(", protocol: ")
                        .append(protos[i % 3])
                        .append(", channels: ")
                        .append(i + 1)
                        .append("}\n");
                y.append("          - {algorithm: ")
                        .append(algos[(i + 1) % 2])
                        .append(", protocol: ")
                        .append(protos[(i + 1) % 3])
                        .append("}\n");
            }
        }
        return y.toString();
    }

    /** One getCollInfo through the offset form (the plugin's), returning the decision code. */
    private static int call(Engine e, long handle, Call c, Guarded g) {
        return e.getCollInfo(
                handle,
                c.coll(),
                c.nBytes(),
                c.numPipeOps(),
                RandomWorkload.ALL,
                g.table.address(),
                c.numAlgo(),
                c.numProto(),
                -1,
                RandomWorkload.ALL,
                g.nChannels.address());
    }
}
