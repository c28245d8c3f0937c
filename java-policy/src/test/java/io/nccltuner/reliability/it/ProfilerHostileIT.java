package io.nccltuner.reliability.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.nccltuner.it.Harness;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The profiler half of the library (ncclProfiler_v4..v6) in a hostile host,
 * tests/reliability/profiler_hostile.c (make/reliability.mk): one process per case, with a timeout.
 * The promise: never crash, hang or exit the host, never write to fds 1 and 2, return ncclSuccess
 * from every entry point. The host itself prints nothing (its facts go to a report file), so the
 * process's merged output must be empty; exit 0 means the host saw nothing wrong.
 */
@Timeout(600)
class ProfilerHostileIT {
    static final Path BIN = Harness.BUILD.resolve("tests/reliability/profiler_hostile");

    record Run(int exit, List<String> output, List<String> report) {
        String text() {
            return "exit " + exit + "\noutput:\n" + String.join("\n", output) + "\nreport:\n"
                    + String.join("\n", report);
        }
    }

    @TempDir
    Path dir;

    @BeforeAll
    static void built() {
        Harness.requireBuilt();
        assertTrue(Files.exists(BIN), BIN + " is missing: run `make build` (make test does)");
    }

    Run run(String kase, Map<String, String> extra, long timeoutSeconds) throws Exception {
        Path report = dir.resolve(kase + ".report");
        List<String> cmd = List.of(
                BIN.toString(), "--plugin", Harness.PLUGIN.toString(), "--case", kase, "--report", report.toString());
        ProcessBuilder pb = new ProcessBuilder(cmd);
        Map<String, String> e = pb.environment();
        e.keySet().removeIf(k -> k.startsWith("NCCL_") || k.startsWith("JAVA_") || k.equals("JDK_JAVA_OPTIONS"));
        Map<String, String> env = new HashMap<>();
        env.put("NCCL_TUNER_JAVA_HOME", Harness.JAVA_HOME);
        env.put("NCCL_TUNER_JAVA_POLICY", HostileHost.POLICY.toString());
        env.put("NCCL_TUNER_JAVA_MODE", "canary");
        env.put("NCCL_TUNER_JAVA_CANARY", "0.3");
        env.put("NCCL_TUNER_JAVA_LOG", dir.resolve(kase + ".jsonl").toString());
        env.putAll(extra);
        e.putAll(env);
        Harness.Result r = Harness.waitFor(pb, cmd, timeoutSeconds);
        List<String> rep = Files.exists(report) ? Files.readAllLines(report) : new ArrayList<>();
        return new Run(r.exit(), r.lines(), rep);
    }

    void assertGuest(Run r) {
        assertTrue(r.output().isEmpty(), "the plugin wrote to fd 1 or 2:\n" + r.text());
        assertEquals(0, r.exit(), "the host saw misbehaviour or died:\n" + r.text());
        assertTrue(r.report().contains("result=ok"), r.text());
    }

    /** Cases that need no JVM (profiler alone) or that start it: none may crash, hang or print. */
    @ParameterizedTest
    @ValueSource(
            strings = {
                "garbage",
                "lifecycle",
                "threads8",
                "churn",
                "churn-tuner",
                "joined",
                "v3v4",
                "samecomm",
                "wrap",
                "fork",
                "cancel"
            })
    void survives(String kase) throws Exception {
        assertGuest(run(kase, Map.of(), 240));
    }

    @Test
    void tunerFailingToStart() throws Exception {
        Run r = run("badjava", Map.of("NCCL_TUNER_JAVA_HOME", "/nonexistent"), 60);
        assertGuest(r);
    }

    /**
     * FAILS (found by this host): a child forked while another thread of the parent is inside a
     * profiler init or finalize hangs at its own next profiler init: profiler.c's registryMutex is
     * held at the fork (profInit memsets the 64 KiB pool and the 100 KiB series under it) and no
     * atfork handler resets it; the tuner's startMutex has one (plugin.c forkChild). Seen: 26 of 40
     * children hung (gdb: __lll_lock_wait on registryMutex from profInit).
     */
    @Test
    void forkWhileAnotherThreadOpensContexts() throws Exception {
        assertGuest(run("fork-busy", Map.of(), 300));
    }

    /**
     * FAILS (found by this host): four threads calling getCollInfo on one communicator (which the
     * tuner supports: hostile_host --concurrent, ConcurrencyPluginIT) while the profiler is joined
     * to it. The decision ring (profiler.c) is single-producer: two producers store head + 1 from
     * the same head, so head can move back behind tail, and takeDecision's {@code while (h - t >
     * STALE)} then counts t up through about 2^32 values on the host thread: a Coll start stalls
     * for tens of seconds (gdb: the host thread in takeDecision, profiler.c:175; the 20 s case did
     * not end in 120 s).
     */
    @Test
    void concurrentGetCollInfoDoesNotStallCollEvents() throws Exception {
        assertGuest(run("concget", Map.of(), 150));
    }

    /**
     * FAILS (hardening beyond NCCL's contract: NCCL only passes handles the plugin returned): an
     * odd handle the plugin did not return, here (void*)1, makes stopEvent dereference address 0
     * (profiler.c channelOf reads r->tag of handle & ~1) and the host dies of SIGSEGV.
     */
    @Test
    void oddGarbageHandle() throws Exception {
        assertGuest(run("odd-handle", Map.of(), 60));
    }

    /** The decision log's {@code profiled} lines of one case's run, in the order written. */
    List<JsonNode> profiledLines(String kase) throws Exception {
        ObjectMapper json = new ObjectMapper();
        List<JsonNode> out = new ArrayList<>();
        for (String l : Files.readAllLines(dir.resolve(kase + ".jsonl"))) {
            JsonNode n = json.readTree(l);
            if (n.path("type").asText().equals("profiled")) {
                out.add(n);
            }
        }
        return out;
    }

    /**
     * Each profiler version's init takes nNodes before nranks (profiler_v4.h .. v6.h), the tuner's
     * init nRanks before nNodes: a communicator of 2 ranks on 1 node (nRanks != nNodes, so a swap
     * in exports.c shows) is logged as nRanks 2, nNodes 1 by the profiler of every version, and the
     * tuner's communicator of the same shape joins it (v3v4: profiler v4 with tuner v3; samecomm:
     * profiler v5, two communicators of one commId, the second opened joins).
     */
    @Test
    void profilerInitOfEachVersionReadsNodesThenRanks() throws Exception {
        assertGuest(run("v3v4", Map.of(), 120));
        List<JsonNode> v4 = profiledLines("v3v4");
        assertEquals(1, v4.size(), v4.toString());
        assertEquals(4, v4.get(0).get("profilerVersion").asInt(), v4.toString());
        assertEquals(2, v4.get(0).get("nRanks").asInt(), v4.toString());
        assertEquals(1, v4.get(0).get("nNodes").asInt(), v4.toString());
        assertTrue(v4.get(0).get("joined").asBoolean(), "tuner v3 (2 ranks, 1 node) did not join: " + v4);
        assertEquals(0, v4.get(0).get("unjoined").asLong(), v4.toString());

        assertGuest(run("samecomm", Map.of(), 120));
        List<JsonNode> v5 = profiledLines("samecomm");
        assertEquals(2, v5.size(), v5.toString());
        for (JsonNode n : v5) {
            assertEquals(5, n.get("profilerVersion").asInt(), v5.toString());
            assertEquals(2, n.get("nRanks").asInt(), v5.toString());
            assertEquals(1, n.get("nNodes").asInt(), v5.toString());
        }
        assertTrue(v5.stream().anyMatch(n -> n.get("joined").asBoolean()), "no v5 communicator joined: " + v5);
    }
}
