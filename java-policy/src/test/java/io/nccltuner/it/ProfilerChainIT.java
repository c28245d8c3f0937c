package io.nccltuner.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * NCCL_TUNER_JAVA_PROFILER_CHAIN through the built library: tests/hosts/profiler_host.c plays
 * NCCL 2.28's v5 event sequence (2.29's v6 in one test), the tuner of the same library deciding
 * each collective in canary mode first, with a test profiler (tests/plugins/chain_profiler.c)
 * chained behind ours. The chained plugin must see exactly the events the host sent (by type),
 * every one under its own handle of the right parent, none after its finalize, and get the types
 * only it asked for (ProxyOp, ProxyStep); our measured lines must still appear, one per series.
 */
@Timeout(120)
class ProfilerChainIT {
    static final Path HOST = Harness.BUILD.resolve("tests/profiler_host");
    static final Path CHAIN = Harness.BUILD.resolve("tests/libchain-profiler.so");
    static final Path CHAIN4 = Harness.BUILD.resolve("tests/libchain-profiler-v4.so");
    static final List<String> TYPES = List.of(
            "GroupApi",
            "CollApi",
            "P2pApi",
            "KernelLaunch",
            "Group",
            "Coll",
            "P2p",
            "ProxyOp",
            "ProxyStep",
            "KernelCh");
    static final Pattern COUNT = Pattern.compile("(\\w+)=(\\d+)");

    @TempDir
    Path dir;

    @BeforeAll
    static void built() {
        Harness.requireBuilt();
        for (Path p : List.of(HOST, CHAIN, CHAIN4)) {
            assertTrue(Files.exists(p), p + " is missing: integration tests run after `make build`");
        }
    }

    Harness.Result run(Map<String, String> extra, String... args) throws Exception {
        Map<String, String> env = new HashMap<>();
        env.put(
                "NCCL_TUNER_JAVA_POLICY",
                Harness.REPO.resolve("policies/h200-2rank.yaml").toString());
        env.put("NCCL_TUNER_JAVA_MODE", "canary");
        env.put("NCCL_TUNER_JAVA_CANARY", "0.5");
        env.put("NCCL_TUNER_JAVA_LOG", dir.resolve("log.jsonl").toString());
        env.putAll(extra);
        List<String> cmd = new java.util.ArrayList<>(List.of(
                HOST.toString(), "--profiler", Harness.PLUGIN.toString(), "--tuner", Harness.PLUGIN.toString()));
        cmd.addAll(List.of(args));
        Harness.Result r = Harness.exec(cmd, env, false);
        assertEquals(0, r.exit(), r.text());
        assertTrue(r.warnings().isEmpty(), r.warnings().toString());
        return r;
    }

    static Map<String, Long> counts(Harness.Result r, String prefix) {
        List<String> l = r.grep(prefix);
        assertEquals(1, l.size(), prefix + " once:\n" + r.text());
        Map<String, Long> m = new LinkedHashMap<>();
        Matcher x = COUNT.matcher(l.get(0));
        while (x.find()) {
            m.put(x.group(1), Long.parseLong(x.group(2)));
        }
        return m;
    }

    List<String> measured() throws Exception {
        return Files.readAllLines(dir.resolve("log.jsonl")).stream()
                .filter(l -> l.startsWith("{\"type\":\"measured\""))
                .toList();
    }

    void assertMeasured(int collectives) throws Exception {
        List<String> m = measured();
        assertTrue(m.stream().anyMatch(l -> l.contains("\"arm\":\"policy\"")), m.toString());
        assertTrue(m.stream().anyMatch(l -> l.contains("\"arm\":\"nccl\"")), m.toString());
        long sum = 0;
        for (String l : m) {
            assertTrue(l.contains("\"asDecided\":true") && l.contains("\"kernelChannels\":8"), l);
            Matcher c = Pattern.compile("\"count\":(\\d+),\"timed\":(\\d+)").matcher(l);
            assertTrue(c.find(), l);
            assertEquals(c.group(1), c.group(2), "every collective timed: " + l);
            sum += Long.parseLong(c.group(1));
        }
        assertEquals(collectives, sum, m.toString());
        List<String> p = Files.readAllLines(dir.resolve("log.jsonl")).stream()
                .filter(l -> l.contains("\"type\":\"profiled\""))
                .toList();
        assertEquals(1, p.size());
        assertTrue(p.get(0).contains("\"collectives\":" + collectives + ",\"unjoined\":0,\"untimed\":0"), p.get(0));
    }

    @Test
    void v5ChainSeesExactlyTheEventsSentWithTheirParents() throws Exception {
        Harness.Result r = run(
                Map.of("NCCL_TUNER_JAVA_PROFILER_CHAIN", CHAIN.toString(), "CHAIN_TEST_MASK", "0x18"),
                "--colls",
                "300",
                "--sizes",
                "1024,65536,1048576",
                "--late");
        Map<String, Long> sent = counts(r, "host: mask=");
        Map<String, Long> seen = counts(r, "chain: v5 ");
        assertEquals(
                0x58L,
                Long.parseLong(r.grep("host: mask=").get(0).replaceAll("^host: mask=0x(\\w+) .*", "$1"), 16),
                "NCCL's mask is ours (KernelCh) | the chained plugin's (ProxyOp, ProxyStep)");
        for (String t : TYPES) {
            assertEquals(sent.get(t), seen.get(t), t + ":\n" + r.text());
        }
        assertEquals(300L, seen.get("Coll"));
        assertEquals(2400L, seen.get("ProxyOp"), "types only the chained plugin asked for reach it");
        assertEquals(4800L, seen.get("ProxyStep"));
        assertEquals(2400L, seen.get("kernelChStops"));
        assertEquals(0L, seen.get("badParents"), r.text());
        assertEquals(0L, seen.get("badHandles"), r.text());
        assertEquals(1L, seen.get("open"), "the GroupApi the host stops only after finalize");
        assertEquals(List.of("chain: late=0"), r.grep("chain: late="), "no call after the chained plugin's finalize");
        assertEquals(
                1,
                r.grep("NCCL INFO TUNER/Java: profiler chain: " + CHAIN
                                + " (chain-test, ncclProfiler_v5) receives every event")
                        .size(),
                r.text());
        assertMeasured(300);
    }

    @Test
    void v6HostV5Chain() throws Exception {
        Harness.Result r =
                run(Map.of("NCCL_TUNER_JAVA_PROFILER_CHAIN", CHAIN.toString()), "--version", "6", "--colls", "100");
        Map<String, Long> sent = counts(r, "host: mask=");
        Map<String, Long> seen = counts(r, "chain: v5 ");
        for (String t : TYPES) {
            assertEquals(sent.get(t), seen.get(t), t);
        }
        assertEquals(800L, seen.get("ProxyOp"));
        assertEquals(
                0L, seen.get("badParents") + seen.get("badHandles") + seen.get("open") + seen.get("late"), r.text());
        assertMeasured(100);
    }

    @Test
    void v4ChainGetsNoApiEventsAndCollUnderItsGroup() throws Exception {
        Harness.Result r = run(
                Map.of("NCCL_TUNER_JAVA_PROFILER_CHAIN", CHAIN4.toString(), "CHAIN_TEST_MASK", "0x18"),
                "--colls",
                "100");
        Map<String, Long> sent = counts(r, "host: mask=");
        Map<String, Long> seen = counts(r, "chain: v4 ");
        for (String t : TYPES) {
            long expect =
                    List.of("GroupApi", "CollApi", "P2pApi", "KernelLaunch").contains(t) ? 0 : sent.get(t);
            assertEquals(expect, seen.get(t), t);
        }
        assertEquals(100L, seen.get("Group"));
        assertEquals(
                0L, seen.get("badParents") + seen.get("badHandles") + seen.get("open") + seen.get("late"), r.text());
        assertMeasured(100);
    }

    @Test
    void chainThatDoesNotLoadOrWhoseInitFailsLeavesMeasurement() throws Exception {
        Harness.Result r = run(
                Map.of(
                        "NCCL_TUNER_JAVA_PROFILER_CHAIN",
                        dir.resolve("missing.so").toString()),
                "--colls",
                "60");
        assertEquals(
                1,
                r.grep("profiler chain: " + dir.resolve("missing.so") + " did not load")
                        .size(),
                r.text());
        assertTrue(r.grep("host: mask=0x40 ").size() == 1, r.text());
        assertMeasured(60);
        Files.delete(dir.resolve("log.jsonl"));
        r = run(
                Map.of("NCCL_TUNER_JAVA_PROFILER_CHAIN", CHAIN.toString(), "CHAIN_TEST_FAIL_INIT", "1"),
                "--colls",
                "60");
        assertEquals(
                1,
                r.grep("NCCL INFO TUNER/Java: profiler chain: chain-test's init failed (3)")
                        .size(),
                r.text());
        assertTrue(r.grep("chain: v5 ").isEmpty(), "no finalize for a plugin whose init failed");
        assertEquals(List.of("chain: late=0"), r.grep("chain: late="));
        assertMeasured(60);
    }

    /**
     * A FIFO as the chain: dlopen's blocking open() waited for a writer for ever, in NCCL's profiler
     * init (found by a hostile host). It is refused with the INFO of a chain that does not load, and
     * the tuner goes on measuring; Harness.exec's timeout turns a hang into a failure.
     */
    @Test
    void aFifoAsTheChainIsRefusedWithoutBlocking() throws Exception {
        Path fifo = dir.resolve("chain.so");
        assertEquals(0, new ProcessBuilder("mkfifo", fifo.toString()).start().waitFor());
        Harness.Result r = run(Map.of("NCCL_TUNER_JAVA_PROFILER_CHAIN", fifo.toString()), "--colls", "60");
        assertEquals(
                1,
                r.grep("NCCL INFO TUNER/Java: profiler chain: " + fifo
                                + " is not a regular file (a directory, FIFO or device); measuring without it")
                        .size(),
                r.text());
        assertMeasured(60);
    }

    /**
     * The chain is looked up from the version NCCL chose for this library down to v4: a library
     * with no ncclProfiler_vN at all is named with that range, so the range says which export (and
     * which version handed to profiler init) NCCL reached: ncclProfiler_v6 under a 2.29 host,
     * ncclProfiler_v5 under a 2.28 one.
     */
    @Test
    void theVersionNcclTookBoundsTheChainLookup() throws Exception {
        Path noProfiler = Harness.BUILD.resolve("tests/libnccl-tuner-noop.so");
        assertTrue(Files.exists(noProfiler), noProfiler.toString());
        for (String v : List.of("5", "6")) {
            Harness.Result r = run(
                    Map.of("NCCL_TUNER_JAVA_PROFILER_CHAIN", noProfiler.toString()), "--version", v, "--colls", "40");
            assertEquals(
                    1,
                    r.grep("NCCL INFO TUNER/Java: profiler chain: " + noProfiler + " exports no ncclProfiler_v4..v" + v
                                    + "; measuring without it")
                            .size(),
                    "v" + v + ":\n" + r.text());
            assertMeasured(40);
            Files.delete(dir.resolve("log.jsonl"));
        }
    }
}
