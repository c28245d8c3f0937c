package io.nccltuner.reliability.it;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nccltuner.it.Harness;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Limits that code cannot remove (docs/dev/reliability.md, "Limits"), each demonstrated, and what the
 * plugin does at each so that the job is not hurt:
 * <ul>
 *   <li>a host that installs its own SIGSEGV handler after the JVM started replaces the JVM's
 *       (HotSpot uses SIGSEGV itself); LD_PRELOAD of the runtime's libjsig.so keeps both;
 *   <li>a process forked after the JVM started has no JVM threads: the child changes nothing;
 *   <li>calling threads need 128 KiB of stack: smaller ones change nothing (one WARN).
 * </ul>
 */
class LimitsIT {
    static final String T73 = ",10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30";
    /** AllReduce of 1 MiB on 2 ranks / 2 nodes: policies/h200-2rank.yaml picks TREE/SIMPLE (entry 2). */
    static final String GET = "4,1048576,1,7,3" + T73;

    static final float[] UNCHANGED = {10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30
    };
    static final float[] APPLIED = UNCHANGED.clone();

    static {
        APPLIED[2] = 0f;
    }

    @BeforeAll
    static void built() {
        HostileHost.requireBuilt();
    }

    static Harness.Result script(Path tmp, Map<String, String> env, String... lines) throws Exception {
        Map<String, String> e = new HashMap<>(env);
        e.put("NCCL_TUNER_JAVA_POLICY", HostileHost.POLICY.toString());
        return HostileHost.run(
                e,
                "--plugin",
                Harness.PLUGIN.toString(),
                "--script",
                HostileHost.script(tmp, "limits", List.of(lines)).toString());
    }

    /**
     * HotSpot handles SIGSEGV itself (safepoint polls, implicit null checks, stack banging). A host
     * that installs its own SIGSEGV handler after the JVM started replaces the JVM's, and the next
     * such fault would reach the host's handler (in hostile_host: exit 86). Shown deterministically with
     * -Xcheck:jni, under which the JVM checks its handlers and reports the replacement; with
     * LD_PRELOAD of the runtime's lib/libjsig.so the host's sigaction is chained behind the JVM's
     * handler and the JVM's stays installed.
     */
    @Test
    void hostSigsegvHandlerAfterJvmStartNeedsLibjsig(@TempDir Path tmp) throws Exception {
        String[] lines = {"init,0,2,2", "sigsegv-handler", "sleep,500", "loop,100000,0," + GET, "sleep,300", "destroy,0"
        };
        Map<String, String> env = new HashMap<>(Map.of("NCCL_TUNER_JAVA_OPTS", "-Xcheck:jni"));
        Harness.Result bare = script(tmp, env, lines);
        assertEquals(
                1,
                bare.grep("Warning: SIGSEGV handler modified!").size(),
                "the JVM's handler was replaced\n" + bare.text());
        assertTrue(bare.text().contains("Consider using jsig library."), bare.text());

        Path libjsig = Path.of(Harness.JAVA_HOME, "lib", "libjsig.so");
        assertTrue(Files.exists(libjsig), libjsig.toString());
        env.put("LD_PRELOAD", libjsig.toString());
        Harness.Result chained = script(tmp, env, lines);
        assertEquals(0, chained.exit(), chained.text());
        assertTrue(
                chained.grep("handler modified").isEmpty(),
                "with libjsig the JVM keeps its handler\n" + chained.text());
        assertTrue(
                chained.grep("WARNING in native method").isEmpty(),
                "-Xcheck:jni finds nothing wrong in the shim\n" + chained.text());
        assertEquals(
                1, chained.grep("hostile_host: installed a SIGSEGV handler").size());
        assertArrayEquals(APPLIED, HostileHost.gets(chained).getFirst().table(), "the plugin works on");
        assertTrue(chained.warnings().isEmpty(), chained.warnings().toString());
    }

    /**
     * fork() copies only the calling thread: in the child the JVM has no VM thread, compiler or
     * decision-log writer, and the first call that needs one hangs for ever (measured before the
     * shim stepped aside: the child hung until hostile_host's 20 s alarm). The child now changes nothing
     * and says so once; the parent is unaffected.
     */
    @Test
    void forkAfterJvmStartChildStepsAside(@TempDir Path tmp) throws Exception {
        long t0 = System.nanoTime();
        Harness.Result r = script(
                tmp,
                Map.of(),
                "init,0,2,2",
                "get,0," + GET,
                "fork",
                "get,0," + GET,
                "loop,100000,0," + GET,
                "init,1,2,2",
                "get,1," + GET,
                "destroy,1",
                "destroy,0");
        long ms = (System.nanoTime() - t0) / 1_000_000;
        assertEquals(0, r.exit(), r.text());
        assertEquals(1, r.grep("hostile_host: child ended exit 0").size(), "the child exits on its own\n" + r.text());
        assertTrue(ms < 15_000, "no hang: " + ms + " ms");
        assertEquals(1, r.grep("hostile_host: child done warn=1 errors=0").size(), r.text());
        assertEquals(1, r.warnings().size(), r.text());
        assertTrue(
                r.warnings().getFirst().contains("forked after the plugin's JVM started"),
                r.warnings().getFirst());
        // Output order: get before fork (parent), child's gets, then the parent's same gets.
        List<HostileHost.Get> gets = HostileHost.gets(r);
        assertEquals(1 + 3 + 3, gets.size(), r.text());
        assertArrayEquals(APPLIED, gets.get(0).table());
        for (int i = 1; i <= 3; i++) {
            assertArrayEquals(UNCHANGED, gets.get(i).table(), "child call " + i + " changes nothing");
        }
        for (int i = 4; i <= 6; i++) {
            assertArrayEquals(APPLIED, gets.get(i).table(), "parent call " + i + " after the fork");
        }
    }

    /**
     * The JVM needs the calling thread's stack to hold its guard zones: an upcall with under about
     * 112 KiB free made the JVM abort the process ("Could not attach thread for upcall"). The shim
     * measures the free stack at each call: under 120 KiB, the call changes nothing (one WARN per
     * thread; a 128 KiB thread has 123 KiB free at its first call). GuestIT.freeStackAtTheCall
     * checks calls deep in a large stack.
     * The thread that creates the JVM is the shim's own (8 MiB), so a 128 KiB host thread may make
     * the first init (it used to kill the process with a StackOverflowError in JVM creation).
     */
    @Test
    void callingThreadsNeed128KibOfStack(@TempDir Path tmp) throws Exception {
        Harness.Result r = script(
                tmp,
                Map.of(),
                "init,0,2,2",
                "thread-get,64,0," + GET,
                "thread-get,96,0," + GET,
                "thread-get,128,0," + GET,
                "get,0," + GET,
                "destroy,0");
        assertEquals(0, r.exit(), r.text());
        assertEquals(2, r.warnings().size(), "one WARN per thread with too little stack\n" + r.text());
        for (String w : r.warnings()) {
            assertTrue(w.contains("KiB of free stack; FFM upcalls need at least 120 KiB"), w);
        }
        List<HostileHost.Get> gets = HostileHost.gets(r);
        assertArrayEquals(UNCHANGED, gets.get(0).table(), "64 KiB");
        assertArrayEquals(UNCHANGED, gets.get(1).table(), "96 KiB");
        assertArrayEquals(APPLIED, gets.get(2).table(), "128 KiB");
        assertArrayEquals(APPLIED, gets.get(3).table(), "main thread");

        Path trace = Harness.TRACES.resolve("trace_tp_infer.csv");
        Harness.Result normal = Harness.replay(Map.of("NCCL_TUNER_JAVA_POLICY", HostileHost.POLICY.toString()), trace);
        List<String> args = new ArrayList<>(
                List.of("--plugin", Harness.PLUGIN.toString(), "--trace", trace.toString(), "--stack-kib", "128"));
        Harness.Result small = Harness.run(
                Map.of("NCCL_TUNER_JAVA_POLICY", HostileHost.POLICY.toString()), args.toArray(String[]::new));
        assertEquals(0, small.exit(), "a 128 KiB thread creating the JVM\n" + small.text());
        assertTrue(small.warnings().isEmpty(), small.warnings().toString());
        assertEquals(normal.selections(), small.selections());
        assertTrue(small.summary().contains(" changed=257 "), small.summary());
    }

    /**
     * Canary mode draws a call's arm from (seed, the call's index on its communicator), so a call
     * that changes nothing on one rank (a 64 KiB thread, a NULL cost table or nChannels) must still
     * count in that rank's index: two processes make the same 60 calls, the second making three of
     * them that way, and every other call must take the same arm in both (ranks that disagree on
     * the algorithm hang). Before the shim counted such calls, the second process's index fell
     * behind at the first of them and 163 of 400 later calls took the other arm (a hostile host,
     * skipdet.c).
     */
    @Test
    void callsThatChangeNothingStillCountInTheCanaryIndex(@TempDir Path tmp) throws Exception {
        Map<String, String> canary = Map.of("NCCL_TUNER_JAVA_MODE", "canary", "NCCL_TUNER_JAVA_CANARY", "0.5");
        int calls = 60;
        Map<Integer, String> odd =
                Map.of(10, "thread-get,64,0," + GET, 20, "get-null-table,0," + GET, 30, "get-null-nch,0," + GET);
        List<String> plain = new ArrayList<>(List.of("init,0,2,2"));
        List<String> skipping = new ArrayList<>(List.of("init,0,2,2"));
        for (int k = 0; k < calls; k++) {
            plain.add("get,0," + GET);
            skipping.add(odd.getOrDefault(k, "get,0," + GET));
        }
        plain.add("destroy,0");
        skipping.add("destroy,0");
        Harness.Result a = script(tmp, canary, plain.toArray(String[]::new));
        Harness.Result b = script(tmp, canary, skipping.toArray(String[]::new));
        assertEquals(0, a.exit(), a.text());
        assertEquals(0, b.exit(), b.text());
        assertEquals(1, b.warnings().size(), "one WARN, for the 64 KiB thread\n" + b.text());
        Map<Integer, HostileHost.Get> byLine = new HashMap<>();
        for (HostileHost.Get g : HostileHost.gets(b)) {
            byLine.put(g.line(), g);
        }
        List<HostileHost.Get> ga = HostileHost.gets(a);
        assertEquals(calls, ga.size(), a.text());
        int applied = 0;
        int compared = 0;
        for (int k = 0; k < calls; k++) {
            HostileHost.Get x = ga.get(k);
            applied += java.util.Arrays.equals(APPLIED, x.table()) ? 1 : 0;
            if (odd.containsKey(k)) {
                continue;
            }
            HostileHost.Get y = byLine.get(x.line());
            assertTrue(y != null, "call " + k + " (line " + x.line() + ") missing\n" + b.text());
            assertArrayEquals(x.table(), y.table(), "call " + k + ": the same arm on both ranks");
            assertEquals(x.nChannels(), y.nChannels(), "call " + k);
            compared++;
        }
        assertEquals(calls - odd.size(), compared);
        assertTrue(applied > 5 && applied < calls - 5, "both arms drawn (" + applied + " of " + calls + " applied)");
    }
}
