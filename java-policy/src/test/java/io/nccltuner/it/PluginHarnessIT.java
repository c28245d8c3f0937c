package io.nccltuner.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nccltuner.policy.Policy;
import io.nccltuner.policy.PolicyLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The built libnccl-tuner-java.so, loaded by the host harness as NCCL loads a tuner, replaying
 * the captured NCCL 2.28.9 traces; each case in a process of its own.
 */
class PluginHarnessIT {
    static final List<String> WORKLOADS = List.of("ddp", "fsdp", "tp_infer", "coalesced");

    @BeforeAll
    static void built() {
        Harness.requireBuilt();
    }

    static Path trace(String w) {
        return Harness.TRACES.resolve("trace_" + w + ".csv");
    }

    @ParameterizedTest(name = "{0} with {1} in {2} mode")
    @CsvSource({
        "ddp, h200-2rank.yaml, enforce", "fsdp, h200-2rank.yaml, enforce",
        "tp_infer, h200-2rank.yaml, enforce", "coalesced, h200-2rank.yaml, enforce",
        "ddp, h200-2rank.yaml, shadow", "fsdp, h200-2rank.yaml, shadow",
        "tp_infer, h200-2rank.yaml, shadow", "coalesced, h200-2rank.yaml, shadow",
        "fsdp, channel-override.yaml, enforce", "tp_infer, channel-override.yaml, enforce",
        "coalesced, channel-override.yaml, shadow"
    })
    void replayMatchesIndependentExpectation(String workload, String policyFile, String mode) throws Exception {
        Path policyPath = Harness.REPO.resolve("policies").resolve(policyFile);
        Policy policy = PolicyLoader.load(policyPath);
        Harness.Result r = Harness.replay(
                Map.of("NCCL_TUNER_JAVA_POLICY", policyPath.toString(), "NCCL_TUNER_JAVA_MODE", mode), trace(workload));
        assertEquals(0, r.exit(), r.text());
        List<TraceExpectation.Call> calls = TraceExpectation.read(trace(workload));
        List<Harness.Selection> got = r.selections();
        assertEquals(calls.size(), got.size(), "one selection line per call");
        int changed = 0;
        for (int i = 0; i < calls.size(); i++) {
            Harness.Selection want = TraceExpectation.expect(calls.get(i), policy, mode.equals("enforce"));
            assertEquals(want, got.get(i), workload + " call " + i);
            Harness.Selection nccl = TraceExpectation.expect(calls.get(i), null, false);
            if (!want.algorithm().equals(nccl.algorithm()) || !want.protocol().equals(nccl.protocol())) {
                changed++; // the harness marks a changed algorithm or protocol
            }
        }
        assertTrue(r.warnings().isEmpty(), r.warnings().toString());
        assertEquals(
                1, r.grep("TUNER/Java: policy " + policy.name() + " profile").size(), r.text());
        assertEquals(1, r.grep("TUNER/Java: summary profile").size(), r.text());
        if (mode.equals("shadow")) {
            assertEquals(0, changed);
            assertTrue(r.summary().contains(" changed=0 "), r.summary());
        } else {
            assertTrue(r.summary().contains(" changed=" + changed + " "), r.summary() + " expected " + changed);
        }
    }

    /** Enforce really changes something on these traces, so the comparison above is not vacuous. */
    @Test
    void enforceChangesTpDecode() throws Exception {
        Harness.Result r = Harness.replay(
                Map.of(
                        "NCCL_TUNER_JAVA_POLICY",
                        Harness.REPO.resolve("policies/h200-2rank.yaml").toString()),
                trace("tp_infer"));
        assertTrue(r.summary().contains("changed=257 "), r.summary());
        assertEquals(
                1,
                r.grep("summary profile two-ranks-socket mode enforce: calls 273, rule hits 257, applied 257")
                        .size(),
                r.text());
    }

    @Test
    void onlyTheTunerAndProfilerSymbolsExportedAndNoLibjvmLinked() throws Exception {
        Process nm = new ProcessBuilder("nm", "-D", "--defined-only", Harness.PLUGIN.toString())
                .redirectErrorStream(true)
                .start();
        List<String> syms = new String(nm.getInputStream().readAllBytes())
                .lines()
                .filter(l -> !l.isBlank())
                .map(l -> l.substring(l.lastIndexOf(' ') + 1))
                .toList();
        // the tuner v3..v7 and beside them NCCL's profiler v4..v6 (used only under
        // NCCL_PROFILER_PLUGIN), all in plugin-shim/src/exports.c
        assertEquals(
                List.of(
                        "ncclProfiler_v4",
                        "ncclProfiler_v5",
                        "ncclProfiler_v6",
                        "ncclTunerPlugin_v3",
                        "ncclTunerPlugin_v4",
                        "ncclTunerPlugin_v5",
                        "ncclTunerPlugin_v6",
                        "ncclTunerPlugin_v7"),
                syms.stream().sorted().toList());
        Process ldd = new ProcessBuilder("ldd", Harness.PLUGIN.toString())
                .redirectErrorStream(true)
                .start();
        String deps = new String(ldd.getInputStream().readAllBytes());
        assertFalse(deps.contains("libjvm"), deps);
        Process soname = new ProcessBuilder("readelf", "-d", Harness.PLUGIN.toString())
                .redirectErrorStream(true)
                .start();
        assertTrue(
                new String(soname.getInputStream().readAllBytes()).contains("Library soname: [libnccl-tuner-java.so]"));
    }

    /** NCCL_TUNER_PLUGIN=java finds libnccl-tuner-java.so on the loader path, as NCCL does. */
    @Test
    void loadsByShortName() throws Exception {
        Harness.Result r = Harness.run(
                Map.of(
                        "NCCL_TUNER_PLUGIN",
                        "java",
                        "LD_LIBRARY_PATH",
                        Harness.PLUGIN.getParent().toString(),
                        "NCCL_TUNER_JAVA_POLICY",
                        Harness.REPO.resolve("policies/h200-2rank.yaml").toString()),
                "--trace",
                trace("coalesced").toString());
        assertEquals(0, r.exit(), r.text());
        assertEquals(1, r.grep("TUNER/Plugin: Using nccl-tuner-java (v3)").size(), r.text());
        assertTrue(r.summary().contains("changed=13 "), r.summary());
    }

    /** A host that already runs a JVM: the plugin joins it rather than creating a second one. */
    @Test
    void joinsTheHostsJvm() throws Exception {
        Harness.Result r = Harness.replay(
                Map.of(
                        "LD_PRELOAD",
                                Harness.BUILD.resolve("tests/libjvm-preload.so").toString(),
                        "NCCL_TUNER_JAVA_POLICY",
                                Harness.REPO.resolve("policies/h200-2rank.yaml").toString()),
                trace("tp_infer"));
        assertEquals(0, r.exit(), r.text());
        assertEquals(1, r.grep("jvm_preload: host JVM created").size(), r.text());
        assertEquals(1, r.grep("(joined the process's JVM)").size(), r.text());
        assertTrue(r.summary().contains("changed=257 warn=0"), r.summary());
        Harness.Result own = Harness.replay(
                Map.of(
                        "NCCL_TUNER_JAVA_POLICY",
                        Harness.REPO.resolve("policies/h200-2rank.yaml").toString()),
                trace("coalesced"));
        // build/lib has no AOT cache (make build makes none), and the INFO line says so
        assertEquals(
                1,
                own.grep("(JVM created by " + Harness.PLUGIN.toRealPath() + "; no AOT cache: ")
                        .size(),
                own.text());
    }

    /**
     * Options that used to make the JVM exit the host (a collector or heap size other than the
     * defaults) now replace the defaults; the JVM starts on its own 8 MiB thread even when the
     * caller's stack is 128 KiB.
     */
    @ParameterizedTest(name = "{0} on a {1} KiB thread")
    @CsvSource({"-XX:+UseG1GC, 1024", "-Xms256m, 1024", "-Xmx256m -XX:+UseParallelGC, 1024", "'', 128"})
    void userOptionsAndSmallStacksWork(String opts, String stackKib) throws Exception {
        Harness.Result r = Harness.run(
                Map.of(
                        "NCCL_TUNER_JAVA_OPTS",
                        opts,
                        "NCCL_TUNER_JAVA_POLICY",
                        Harness.REPO.resolve("policies/h200-2rank.yaml").toString()),
                "--plugin",
                Harness.PLUGIN.toString(),
                "--stack-kib",
                stackKib,
                "--trace",
                trace("tp_infer").toString());
        assertEquals(0, r.exit(), r.text());
        assertTrue(r.summary().contains("changed=257 warn=0"), r.text());
    }

    /**
     * Shadow mode's decision log keeps every record even when the host never destroys its
     * communicators (the shim flushes the log at exit), and records match NCCL's unchanged picks.
     */
    @Test
    void decisionLogSurvivesExitWithoutDestroy(@TempDir Path tmp) throws Exception {
        Harness.Result r = Harness.run(
                Map.of(
                        "NCCL_TUNER_JAVA_MODE",
                        "shadow",
                        "NCCL_TUNER_JAVA_LOG_CALLS",
                        "1",
                        "NCCL_TUNER_JAVA_LOG",
                        tmp.resolve("d.%p.jsonl").toString(),
                        "NCCL_TUNER_JAVA_POLICY",
                        Harness.REPO.resolve("policies/h200-2rank.yaml").toString()),
                "--plugin",
                Harness.PLUGIN.toString(),
                "--no-destroy",
                "--repeat",
                "20",
                "--trace",
                trace("tp_infer").toString());
        assertEquals(0, r.exit(), r.text());
        List<Path> logs;
        try (var s = Files.list(tmp)) {
            logs = s.toList();
        }
        assertEquals(1, logs.size());
        assertEquals(
                List.of(tmp.resolve(
                        "d." + logs.getFirst().getFileName().toString().split("\\.")[1] + ".jsonl")),
                logs,
                "%p expanded");
        List<String> all = Files.readAllLines(logs.getFirst());
        List<String> lines =
                all.stream().filter(l -> !l.startsWith("{\"type\"")).toList();
        assertEquals(20 * 257, lines.size(), "one record per rule hit, none lost");
        assertTrue(lines.getFirst().contains("\"applied\":false"), lines.getFirst());
        // the communicators were never destroyed: their aggregates were written at exit, one comm line each
        List<String> comms =
                all.stream().filter(l -> l.startsWith("{\"type\":\"comm\"")).toList();
        assertEquals(20, comms.size(), String.join("\n", comms));
        assertTrue(
                comms.stream().allMatch(l -> l.contains("\"at\":\"exit\"") && l.contains("\"ruleHits\":257")),
                comms.get(0));
        long counted = all.stream()
                .filter(l -> l.startsWith("{\"type\":\"aggregate\""))
                .mapToLong(l -> Long.parseLong(l.replaceAll(".*\"count\":(\\d+).*", "$1")))
                .sum();
        assertEquals(20 * 257, counted);
    }

    /** NCCL's example-tuner CSV, read directly when NCCL_TUNER_CONFIG_FILE names one and no YAML is set. */
    @Test
    void readsNcclExampleConfigFile(@TempDir Path tmp) throws Exception {
        Path conf = tmp.resolve("nccl_tuner.conf");
        Files.writeString(
                conf,
                "# collective,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks\n"
                        + "allreduce,0,1048575,tree,simple,-1,2,2\n");
        Harness.Result r = Harness.replay(Map.of("NCCL_TUNER_CONFIG_FILE", conf.toString()), trace("tp_infer"));
        assertEquals(0, r.exit(), r.text());
        assertTrue(r.warnings().isEmpty(), r.text());
        List<Harness.Selection> sel = r.selections();
        assertTrue(sel.contains(new Harness.Selection("AllReduce", 16384, "TREE", "SIMPLE", 0)), r.text());
        assertTrue(
                sel.contains(new Harness.Selection("AllReduce", 1048576, "RING", "SIMPLE", 0)),
                "1 MiB is outside the range");
        Files.writeString(conf, "allreduce,0,1048575,ringg,simple,-1,2,2\n");
        Harness.Result bad = Harness.replay(Map.of("NCCL_TUNER_CONFIG_FILE", conf.toString()), trace("tp_infer"));
        assertEquals(1, bad.warnings().size(), bad.text());
        assertTrue(
                bad.warnings().getFirst().contains(conf + ":1"), bad.warnings().getFirst());
        assertTrue(bad.summary().contains("changed=0 warn=1"), bad.summary());
    }

    /** Several traces in one process: one JVM serves every communicator, created once. */
    @Test
    void oneJvmForManyCommunicators() throws Exception {
        List<String> args = new ArrayList<>(List.of("--plugin", Harness.PLUGIN.toString(), "--repeat", "3"));
        for (String w : WORKLOADS) {
            args.add("--trace");
            args.add(trace(w).toString());
        }
        Harness.Result r = Harness.run(
                Map.of(
                        "NCCL_TUNER_JAVA_POLICY",
                        Harness.REPO.resolve("policies/h200-2rank.yaml").toString(),
                        "NCCL_TUNER_JAVA_OPTS",
                        "-Xlog:startuptime=off -Dnccltj.probe=1"),
                args.toArray(String[]::new));
        assertEquals(0, r.exit(), r.text());
        assertEquals(
                12,
                r.grep("TUNER/Java: policy h200-2rank-timesliced profile").size(),
                "12 communicators: " + r.summary());
        assertEquals(12, r.grep("TUNER/Java: summary profile").size());
    }

    /**
     * Each fault ends with the host alive, exit 0, NCCL's default choices and exactly one WARN.
     * The reference is the same trace through the no-op plugin.
     */
    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', textBlock = """
      no Java runtime          | NORUNTIME | no Java runtime found
      runtime is not a JVM     | NOTAJVM   | has no lib/server/libjvm.so
      jar missing              | NOJAR     | engine jar
      policy missing           | NOPOLICY  | cannot read policy: no such file
      policy malformed         | MALFORMED | malformed YAML
      unknown algorithm name   | RINGG     | unknown algorithm 'RINGG'; did you mean RING?
      exception in getCollInfo | THROWGET  | internal error in getCollInfo
      exception in init        | THROWINIT | internal error in init
      bad NCCL_TUNER_JAVA_OPTS | BADOPTS   | NCCL_TUNER_JAVA_OPTS: option '-version' is not allowed
      JVM refuses an option    | JVMREFUSE | NCCL_TUNER_JAVA_OPTS or the JVM refused to start (JNI_CreateJavaVM -6: Unrecognized VM option 'NoSuchJvmFlagAtAll')
      heap too small           | TINYHEAP  | the JVM gave up during creation (HotSpot exit or abort: Too small maximum heap)
      agent option             | AGENT     | option '-agentlib:jdwp' is not allowed
      caller stack of 96 KiB   | STACK96   | KiB of free stack; FFM upcalls need at least 120 KiB
      -Xms above -Xmx          | XMSXMX    | the JVM gave up during creation (HotSpot exit or abort: Initial heap size set to a larger value than the maximum heap size)
      OnOutOfMemoryError       | ONOOM     | option '-XX:OnOutOfMemoryError=kill' is not allowed
      VMOptionsFile bypass     | OPTSFILE  | option '-XX:VMOptionsFile=/dev/null' is not allowed
      prints flags and exits   | FLAGSEXIT | option '-XX:+PrintFlagsInitial' is not allowed
      archive check and exit   | CDSEXIT   | option '-XX:+PrintSharedArchiveAndExit' is not allowed
      pauses at start          | PAUSE     | option '-XX:+PauseAtStartup' is not allowed
      a GC that never frees    | EPSILON   | option '-XX:+UseEpsilonGC' is not allowed
      a log file in the cwd    | LOGVM     | option '-XX:+LogVMOutput' is not allowed
      an archive in the runtime| XSHDUMP   | option '-Xshare:dump' is not allowed
      a heap dump in the cwd   | HEAPDUMP  | option '-XX:+HeapDumpOnOutOfMemoryError' is not allowed
      traces to stdout         | MHTRACE   | option '-Djava.lang.invoke.MethodHandle.TRACE_METHOD_LINKAGE=true' is not allowed
      a FIFO as the policy     | FIFO      | not a regular file (a directory, FIFO or device)
      class path a FIFO        | FIFOCP    | NCCL_TUNER_JAVA_CLASSPATH names
      config file a FIFO       | FIFOCONF  | cannot read NCCL_TUNER_CONFIG_FILE: not a regular file (a directory, FIFO or device)
      runtime's release a FIFO | FIFOHOME  | has a release file that is not a regular file (a FIFO or device)
      bad NCCL_TUNER_JAVA_MODE | BADMODE   | NCCL_TUNER_JAVA_MODE=loud is not a mode
      """)
    void faultChangesNothingAndWarnsOnce(String what, String kind, String expected, @TempDir Path tmp)
            throws Exception {
        Path plugin = Harness.PLUGIN;
        String stackKib = "1024";
        Map<String, String> env = new HashMap<>();
        Path policy = Harness.REPO.resolve("policies/h200-2rank.yaml");
        switch (kind) {
            case "NORUNTIME" -> {
                plugin = copyPlugin(tmp, true);
                env.put("JAVA_HOME", null);
            }
            case "NOTAJVM" -> {
                plugin = copyPlugin(tmp, true);
                env.put("JAVA_HOME", null);
                env.put("NCCL_TUNER_JAVA_HOME", tmp.toString());
            }
            case "NOJAR" -> plugin = copyPlugin(tmp, false);
            case "NOPOLICY" -> policy = tmp.resolve("absent.yaml");
            case "MALFORMED" -> policy = write(tmp, "schema: nccl-tuner-java/v1\nname: [unclosed\n");
            case "RINGG" ->
                policy = write(
                        tmp,
                        Files.readString(policy)
                                .replace("algorithm: TREE, protocol: LL,", "algorithm: RINGG, protocol: LL,"));
            case "THROWGET" -> env.putAll(ThrowingEngine.environment("getCollInfo"));
            case "THROWINIT" -> env.putAll(ThrowingEngine.environment("init"));
            case "BADOPTS" -> env.put("NCCL_TUNER_JAVA_OPTS", "-Xmx32m -version");
            case "JVMREFUSE" -> env.put("NCCL_TUNER_JAVA_OPTS", "-XX:+NoSuchJvmFlagAtAll");
            case "TINYHEAP" -> env.put("NCCL_TUNER_JAVA_OPTS", "-Xmx1k");
            case "AGENT" -> env.put("NCCL_TUNER_JAVA_OPTS", "-agentlib:jdwp");
            case "STACK96" -> stackKib = "96";
            case "XMSXMX" -> env.put("NCCL_TUNER_JAVA_OPTS", "-Xms128m -Xmx64m");
            case "ONOOM" -> env.put("NCCL_TUNER_JAVA_OPTS", "-XX:OnOutOfMemoryError=kill");
            case "OPTSFILE" -> env.put("NCCL_TUNER_JAVA_OPTS", "-XX:VMOptionsFile=/dev/null");
            case "FLAGSEXIT" -> env.put("NCCL_TUNER_JAVA_OPTS", "-XX:+PrintFlagsInitial");
            case "CDSEXIT" ->
                env.put("NCCL_TUNER_JAVA_OPTS", "-XX:+UnlockDiagnosticVMOptions -XX:+PrintSharedArchiveAndExit");
            case "PAUSE" -> env.put("NCCL_TUNER_JAVA_OPTS", "-XX:+UnlockDiagnosticVMOptions -XX:+PauseAtStartup");
            case "LOGVM" -> env.put("NCCL_TUNER_JAVA_OPTS", "-XX:+UnlockDiagnosticVMOptions -XX:+LogVMOutput");
            case "XSHDUMP" -> env.put("NCCL_TUNER_JAVA_OPTS", "-Xshare:dump");
            case "HEAPDUMP" -> env.put("NCCL_TUNER_JAVA_OPTS", "-XX:+HeapDumpOnOutOfMemoryError");
            case "EPSILON" ->
                env.put("NCCL_TUNER_JAVA_OPTS", "-XX:+UnlockExperimentalVMOptions -XX:+UseEpsilonGC -Xmx24m");
            case "MHTRACE" ->
                env.put("NCCL_TUNER_JAVA_OPTS", "-Djava.lang.invoke.MethodHandle.TRACE_METHOD_LINKAGE=true");
            case "FIFO" -> {
                policy = tmp.resolve("fifo.yaml");
                assertEquals(
                        0,
                        new ProcessBuilder("mkfifo", policy.toString()).start().waitFor());
            }
            case "BADMODE" -> env.put("NCCL_TUNER_JAVA_MODE", "loud");
            // A FIFO nobody writes blocked a plain open() for ever, and with it NCCL's first init
            // (found by a hostile host): each is checked without blocking. Harness.run's timeout
            // turns a hang into a failure.
            case "FIFOCP" ->
                env.put("NCCL_TUNER_JAVA_CLASSPATH", fifo(tmp, "engine.jar").toString());
            case "FIFOCONF" -> {
                env.put("NCCL_TUNER_JAVA_POLICY", null);
                env.put("NCCL_TUNER_CONFIG_FILE", fifo(tmp, "nccl_tuner.conf").toString());
            }
            case "FIFOHOME" -> {
                plugin = copyPlugin(tmp, true);
                Path home = Files.createDirectory(tmp.resolve("jdk"));
                try (var entries = Files.list(Path.of(System.getProperty("java.home")))) {
                    for (Path e : (Iterable<Path>) entries::iterator) {
                        if (!e.getFileName().toString().equals("release")) {
                            Files.createSymbolicLink(home.resolve(e.getFileName()), e);
                        }
                    }
                }
                fifo(home, "release");
                env.put("JAVA_HOME", null);
                env.put("NCCL_TUNER_JAVA_HOME", home.toString());
            }
            default -> throw new IllegalArgumentException(kind);
        }
        if (!env.containsKey("NCCL_TUNER_JAVA_POLICY")) {
            env.put("NCCL_TUNER_JAVA_POLICY", policy.toString());
        }
        for (String w : List.of("tp_infer", "ddp")) {
            Harness.Result r = Harness.run(
                    env, "--plugin", plugin.toString(), "--stack-kib", stackKib, "--trace", trace(w).toString());
            Harness.Result ref =
                    Harness.run(Map.of(), "--plugin", Harness.NOOP.toString(), "--trace", trace(w).toString());
            assertEquals(0, r.exit(), what + "\n" + r.text());
            assertEquals(1, r.warnings().size(), what + ": exactly one WARN\n" + r.text());
            assertTrue(
                    r.warnings().getFirst().contains(expected),
                    what + ": " + r.warnings().getFirst());
            assertTrue(
                    r.warnings().getFirst().contains("NCCL WARN TUNER/Java: "),
                    r.warnings().getFirst());
            assertEquals(ref.selections(), r.selections(), what + ": NCCL's default choices");
            assertTrue(r.summary().contains(" changed=0 warn=1 "), r.summary());
        }
    }

    private static Path fifo(Path dir, String name) throws Exception {
        Path p = dir.resolve(name);
        assertEquals(0, new ProcessBuilder("mkfifo", p.toString()).start().waitFor());
        return p;
    }

    private static Path copyPlugin(Path dir, boolean withJar) throws Exception {
        Path so = dir.resolve("libnccl-tuner-java.so");
        Files.copy(Harness.PLUGIN, so, StandardCopyOption.REPLACE_EXISTING);
        if (withJar) {
            Files.copy(Harness.JAR, dir.resolve("nccl-tuner-java.jar"), StandardCopyOption.REPLACE_EXISTING);
        }
        return so;
    }

    private static Path write(Path dir, String text) throws Exception {
        Path p = dir.resolve("policy.yaml");
        Files.writeString(p, text);
        return p;
    }
}
