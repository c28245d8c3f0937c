package io.nccltuner.reliability.it;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nccltuner.it.Harness;
import io.nccltuner.policy.Mode;
import io.nccltuner.policy.Policy;
import io.nccltuner.policy.PolicyLoader;
import io.nccltuner.reliability.RandomWorkload;
import io.nccltuner.reliability.RandomWorkload.Call;
import io.nccltuner.reliability.RandomWorkload.Expect;
import java.io.OutputStream;
import java.net.URI;
import java.nio.file.FileSystem;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Faults and odd calls, each in a host process of its own (the host harness, or hostile_host where NCCL
 * would never make the call). A fault ends with the host alive, exit 0, ncclSuccess from every
 * entry point, NCCL's default choices (compared with the same trace through the no-op plugin) and
 * exactly one WARN. A scenario that is not a fault (an 8 x 4 table, nBytes 0, a NULL context)
 * ends with the right decision (an oracle written from the policy format) and no WARN.
 * The faults of io.nccltuner.it.PluginHarnessIT (no runtime, bad options, a caller stack of 96
 * KiB, ...) are not repeated here; docs/dev/reliability.md lists them all.
 */
class FaultScenariosIT {
    static final Path TRACE = Harness.TRACES.resolve("trace_tp_infer.csv");
    static Harness.Result reference;
    static Harness.Result enforced;

    @BeforeAll
    static void built() throws Exception {
        HostileHost.requireBuilt();
        reference = Harness.run(Map.of(), "--plugin", Harness.NOOP.toString(), "--trace", TRACE.toString());
        enforced = Harness.replay(Map.of("NCCL_TUNER_JAVA_POLICY", HostileHost.POLICY.toString()), TRACE);
        assertEquals(0, enforced.exit(), enforced.text());
        assertTrue(
                enforced.summary().contains(" changed=257 warn=0 "),
                "the policy changes this trace: " + enforced.summary());
    }

    // ---- faults: NCCL's defaults and one WARN ----------------------------------------------------

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', textBlock = """
      engine jar corrupt (random bytes)           | CORRUPT_JAR   | cannot load the engine from the jar: java.lang.ClassNotFoundException
      engine jar truncated                        | TRUNCATED_JAR | cannot load the engine from the jar: java.lang.ClassNotFoundException
      NCCL_TUNER_JAVA_CLASSPATH names no file     | CP_MISSING    | cannot load the engine from the jar
      engine jar from another version (ABI 9998)  | JAR_ABI       | engine jar speaks bridge ABI 9998, this library {ABI}
      library from another version (ABI 9999)     | SHIM_ABI      | engine jar speaks bridge ABI {ABI}, this library 9999
      runtime too old (Java 17)                   | OLD_JAVA      | is Java 17, the engine needs 25 or newer
      libjvm.so not loadable                      | BAD_LIBJVM    | cannot load
      libjvm.so without JNI_CreateJavaVM          | NOT_JVM_SO    | is not a JVM (no JNI_CreateJavaVM)
      policy empty                                | EMPTY         | :1:1: the policy is empty
      policy of an unknown schema version         | SCHEMA_V2     | schema: unknown schema version 'nccl-tuner-java/v2'
      policy path is a directory                  | POLICY_DIR    | not a regular file (a directory, FIFO or device)
      policy with a NaN regret                    | NAN_REGRET    | .nan is not a regret
      policy of 1000 overlapping rules            | OVERLAPS      | overlaps rules[0]
      OutOfMemoryError in the engine              | OOM           | java.lang.OutOfMemoryError: Java heap space
      """)
    void faultChangesNothingAndWarnsOnce(String what, String kind, String expected, @TempDir Path tmp)
            throws Exception {
        Path plugin = Harness.PLUGIN;
        Map<String, String> env = new HashMap<>();
        env.put("NCCL_TUNER_JAVA_POLICY", HostileHost.POLICY.toString());
        List<String> extra = new ArrayList<>();
        switch (kind) {
            case "CORRUPT_JAR" -> {
                plugin = pluginWithJar(tmp);
                byte[] junk = new byte[200_000];
                new Random(6).nextBytes(junk);
                Files.write(tmp.resolve("nccl-tuner-java.jar"), junk);
            }
            case "TRUNCATED_JAR" -> {
                plugin = pluginWithJar(tmp);
                Path jar = tmp.resolve("nccl-tuner-java.jar");
                Files.write(jar, Arrays.copyOf(Files.readAllBytes(jar), 50_000));
            }
            case "CP_MISSING" ->
                env.put("NCCL_TUNER_JAVA_CLASSPATH", tmp.resolve("absent.jar").toString());
            case "JAR_ABI" ->
                env.put("NCCL_TUNER_JAVA_CLASSPATH", jarWithAbi(tmp, 9998).toString());
            case "SHIM_ABI" -> {
                plugin = HostileHost.SHIM_OTHER_ABI;
                env.put("NCCL_TUNER_JAVA_CLASSPATH", Harness.JAR.toString());
            }
            case "OLD_JAVA", "BAD_LIBJVM", "NOT_JVM_SO" -> {
                plugin = pluginWithJar(tmp.resolve("lib"));
                Path home = tmp.resolve("jdk");
                Files.createDirectories(home.resolve("lib/server"));
                Files.writeString(
                        home.resolve("release"),
                        "JAVA_VERSION=\"" + (kind.equals("OLD_JAVA") ? "17.0.9" : "25.0.1") + "\"\n");
                Path libjvm = home.resolve("lib/server/libjvm.so");
                // a runtime image: the shim checks lib/modules first (an incomplete runtime is a fault of its own)
                Files.writeString(home.resolve("lib/modules"), "");
                if (kind.equals("NOT_JVM_SO")) {
                    Files.copy(Harness.NOOP, libjvm); // a real shared library, but no JVM in it
                } else {
                    Files.writeString(libjvm, "not an ELF file\n");
                }
                env.put("JAVA_HOME", null);
                env.put("NCCL_TUNER_JAVA_HOME", home.toString());
            }
            case "EMPTY" ->
                env.put("NCCL_TUNER_JAVA_POLICY", write(tmp, "policy.yaml", "").toString());
            case "SCHEMA_V2" ->
                env.put(
                        "NCCL_TUNER_JAVA_POLICY",
                        write(
                                        tmp,
                                        "policy.yaml",
                                        Files.readString(HostileHost.POLICY)
                                                .replace(
                                                        "schema: nccl-tuner-java/v1\n",
                                                        "\nschema: nccl-tuner-java/v2\n"))
                                .toString());
            case "POLICY_DIR" -> env.put("NCCL_TUNER_JAVA_POLICY", tmp.toString());
            case "NAN_REGRET" ->
                env.put(
                        "NCCL_TUNER_JAVA_POLICY",
                        write(
                                        tmp,
                                        "policy.yaml",
                                        Files.readString(HostileHost.POLICY).replace("regret: 0.0}", "regret: .nan}"))
                                .toString());
            case "OVERLAPS" -> {
                StringBuilder y = new StringBuilder(
                        "schema: nccl-tuner-java/v1\nname: copies\nprofiles:\n  - name: p\n    rules:\n");
                for (int i = 0; i < 1000; i++) {
                    y.append(
                            "      - {collective: AllReduce, bytes: {from: 0}, candidates: [{algorithm: RING, protocol: SIMPLE}]}\n");
                }
                env.put(
                        "NCCL_TUNER_JAVA_POLICY",
                        write(tmp, "policy.yaml", y.toString()).toString());
            }
            case "OOM" -> {
                // Tiny heap, big policy: just under 1 MiB takes about 20 MB of heap to load.
                StringBuilder y = new StringBuilder("schema: nccl-tuner-java/v1\nname: big\nprofiles:\n");
                for (int i = 0; y.length() < PolicyLoader.MAX_FILE_BYTES - 400; i++) {
                    y.append("  - name: p")
                            .append(i)
                            .append("\n    match: {nRanks: ")
                            .append(i + 100)
                            .append(
                                    "}\n    rules:\n      - {collective: AllReduce, bytes: {from: 0}, candidates: [{algorithm: RING, protocol: SIMPLE}]}\n");
                }
                env.put(
                        "NCCL_TUNER_JAVA_POLICY",
                        write(tmp, "policy.yaml", y.toString()).toString());
                env.put("NCCL_TUNER_JAVA_OPTS", "-Xmx8m");
            }
            default -> throw new IllegalArgumentException(kind);
        }
        List<String> args = new ArrayList<>(List.of("--plugin", plugin.toString(), "--trace", TRACE.toString()));
        args.addAll(extra);
        Harness.Result r = Harness.run(env, args.toArray(String[]::new));
        assertDefaultsAndOneWarn(what, r, expected.replace("{ABI}", Integer.toString(abi())));
    }

    static void assertDefaultsAndOneWarn(String what, Harness.Result r, String expected) {
        assertEquals(0, r.exit(), what + "\n" + r.text());
        assertEquals(1, r.warnings().size(), what + ": exactly one WARN\n" + r.text());
        assertTrue(
                r.warnings().getFirst().contains("NCCL WARN TUNER/Java: "),
                r.warnings().getFirst());
        assertTrue(
                r.warnings().getFirst().contains(expected),
                what + ": " + r.warnings().getFirst());
        assertEquals(reference.selections(), r.selections(), what + ": NCCL's default choices");
        assertTrue(r.summary().contains(" changed=0 warn=1 "), r.summary());
        assertTrue(r.grep("NCCL WARN").size() == 1, what + ": no second warning outside NCCL's logger\n" + r.text());
    }

    /** NCCL_TUNER_JAVA_ABI_VERSION of this release, from the shared header. */
    static int abi() throws Exception {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("(?m)^#define NCCL_TUNER_JAVA_ABI_VERSION (\\d+)$")
                .matcher(Files.readString(Harness.REPO.resolve("plugin-shim/include/nccltj_bridge.h")));
        assertTrue(m.find());
        return Integer.parseInt(m.group(1));
    }

    static Path pluginWithJar(Path dir) throws Exception {
        Files.createDirectories(dir);
        Path so = dir.resolve("libnccl-tuner-java.so");
        Files.copy(Harness.PLUGIN, so, StandardCopyOption.REPLACE_EXISTING);
        Files.copy(Harness.JAR, dir.resolve("nccl-tuner-java.jar"), StandardCopyOption.REPLACE_EXISTING);
        return so;
    }

    static Path write(Path dir, String name, String text) throws Exception {
        Path p = dir.resolve(name);
        Files.writeString(p, text);
        return p;
    }

    /**
     * The engine jar as another release would ship it: this release's jar with NcclTunerAbi
     * recompiled from its source with a different NCCL_TUNER_JAVA_ABI_VERSION.
     */
    static Path jarWithAbi(Path dir, int abi) throws Exception {
        Path src = Harness.REPO.resolve("java-policy/src/main/java/io/nccltuner/bindings/NcclTunerAbi.java");
        String text = Files.readString(src);
        String line = "private static final int NCCL_TUNER_JAVA_ABI_VERSION = (int)" + abi() + "L;";
        assertTrue(text.contains(line), "NcclTunerAbi.java declares the header's ABI as: " + line);
        Path srcDir = Files.createDirectories(dir.resolve("src/io/nccltuner/bindings"));
        Files.writeString(
                srcDir.resolve("NcclTunerAbi.java"),
                text.replace(line, "private static final int NCCL_TUNER_JAVA_ABI_VERSION = (int)" + abi + "L;"));
        Path classes = Files.createDirectories(dir.resolve("classes"));
        int rc = ToolProvider.getSystemJavaCompiler()
                .run(
                        null,
                        OutputStream.nullOutputStream(),
                        System.err,
                        "-d",
                        classes.toString(),
                        "-cp",
                        Harness.JAR.toString(),
                        "-proc:none",
                        srcDir.resolve("NcclTunerAbi.java").toString());
        assertEquals(0, rc, "javac");
        Path jar = dir.resolve("nccl-tuner-java-abi" + abi + ".jar");
        Files.copy(Harness.JAR, jar, StandardCopyOption.REPLACE_EXISTING);
        try (FileSystem zip = FileSystems.newFileSystem(URI.create("jar:" + jar.toUri()), Map.of())) {
            Files.copy(
                    classes.resolve("io/nccltuner/bindings/NcclTunerAbi.class"),
                    zip.getPath("io/nccltuner/bindings/NcclTunerAbi.class"),
                    StandardCopyOption.REPLACE_EXISTING);
        }
        return jar;
    }

    // ---- the decision log fails: the plugin keeps working, one WARN ---------------------------

    @ParameterizedTest(name = "decision log {0}")
    @CsvSource(delimiter = '|', textBlock = """
      on an unwritable path     | UNWRITABLE | cannot open decision log
      on a full disk (/dev/full)| FULL       | No space left on device
      on a FIFO nobody reads    | FIFO       | nothing written for 2000 ms
      """)
    void decisionLogFailureWarnsOnceAndDecisionsStand(String what, String kind, String expected, @TempDir Path tmp)
            throws Exception {
        String path = switch (kind) {
            case "UNWRITABLE" -> tmp.resolve("no/such/dir/decisions.jsonl").toString();
            case "FULL" -> "/dev/full";
            case "FIFO" -> {
                Path fifo = tmp.resolve("decisions.fifo");
                assertEquals(
                        0, new ProcessBuilder("mkfifo", fifo.toString()).start().waitFor());
                yield fifo.toString();
            }
            default -> throw new IllegalArgumentException(kind);
        };
        long t0 = System.nanoTime();
        // Five communicators one after the other: a stuck log costs one wait at destroy, not five.
        Harness.Result r = Harness.replay(
                Map.of("NCCL_TUNER_JAVA_POLICY", HostileHost.POLICY.toString(), "NCCL_TUNER_JAVA_LOG", path),
                TRACE,
                "--repeat",
                "5");
        long ms = (System.nanoTime() - t0) / 1_000_000;
        assertEquals(0, r.exit(), r.text());
        assertEquals(1, r.warnings().size(), what + ": one WARN\n" + r.text());
        assertTrue(r.warnings().getFirst().contains(expected), r.warnings().getFirst());
        List<Harness.Selection> once = enforced.selections();
        assertEquals(once.size(), r.selections().size() / 5);
        for (int i = 0; i < 5; i++) {
            assertEquals(
                    once,
                    r.selections().subList(i * once.size(), (i + 1) * once.size()),
                    what + ": the policy still applies");
        }
        assertEquals(5, r.grep("TUNER/Java: summary profile").size());
        assertTrue(ms < 20_000, what + " took " + ms + " ms");
    }

    // ---- not faults: correct behaviour, no WARN ------------------------------------------------

    /** A host with its own SIGINT handler keeps it (the JVM runs with -Xrs) and it still runs. */
    @Test
    void hostWithItsOwnSigintHandler() throws Exception {
        Harness.Result r = Harness.replay(
                Map.of("NCCL_TUNER_JAVA_POLICY", HostileHost.POLICY.toString()), TRACE, "--sigint-handler");
        assertEquals(0, r.exit(), r.text());
        assertEquals(1, r.grep("harness: own SIGINT handler ran").size(), r.text());
        assertEquals(enforced.selections(), r.selections());
        assertTrue(r.warnings().isEmpty(), r.warnings().toString());
    }

    /**
     * Policy names are printed at every init: a line feed (the loader refuses other control
     * characters) and invisible format characters (a bidi override) must not forge or reorder log
     * lines.
     */
    @ParameterizedTest(name = "policy {0}")
    @ValueSource(strings = {"unicode-lf-in-name.yaml", "unicode-bidi-override-name.yaml"})
    void oddPolicyNamesStayOnOneLogLine(String file) throws Exception {
        Path policy =
                Path.of(FaultScenariosIT.class.getResource("/hostile/" + file).toURI());
        Harness.Result r = Harness.replay(Map.of("NCCL_TUNER_JAVA_POLICY", policy.toString()), TRACE);
        assertEquals(0, r.exit(), r.text());
        assertTrue(r.summary().contains(" warn=0 "), "NCCL's logger saw no WARN: " + r.summary());
        assertTrue(r.lines().stream().noneMatch(l -> l.startsWith("NCCL WARN forged")), r.text());
        List<String> init = r.grep("TUNER/Java: policy ");
        assertEquals(1, init.size(), r.text());
        assertTrue(
                init.getFirst()
                        .chars()
                        .noneMatch(c -> Character.getType(c) == Character.FORMAT || Character.isISOControl(c)),
                "printable: " + init.getFirst());
    }

    /** 1,000 communicators created and destroyed in one process: each decides, each summarises, no WARN. */
    @Test
    void thousandCommunicators() throws Exception {
        Harness.Result r = Harness.replay(
                Map.of("NCCL_TUNER_JAVA_POLICY", HostileHost.POLICY.toString()),
                Harness.TRACES.resolve("trace_coalesced.csv"),
                "--repeat",
                "1000",
                "--quiet");
        assertEquals(0, r.exit(), r.text());
        assertTrue(r.summary().contains("calls=19000 changed=13000 warn=0 "), r.summary());
        assertEquals(
                1000,
                r.grep("TUNER/Java: summary profile two-ranks-socket mode enforce: calls 19,")
                        .size());
        assertEquals(
                1000, r.grep("TUNER/Java: policy h200-2rank-timesliced profile").size());
    }

    static final String EDGE_POLICY = """
      schema: nccl-tuner-java/v1
      name: edges
      profiles:
        - name: all
          rules:
            - {collective: AllReduce, bytes: {from: 0, to: 1 MiB}, candidates: [{algorithm: PAT, protocol: SIMPLE, channels: 12}, {algorithm: RING, protocol: LL128, channels: 4}]}
            - {collective: AllReduce, bytes: {from: 1 MiB}, candidates: [{algorithm: NVLS, protocol: LL128, channels: 32}, {algorithm: TREE, protocol: SIMPLE}]}
            - {collective: Broadcast, bytes: {from: 0}, numPipeOps: {min: 2}, candidates: [{algorithm: RING, protocol: SIMPLE, channels: 64}]}
      """;

    static float[] table(int numAlgo, int numProto, int minusOneEvery) {
        float[] t = new float[Math.max(0, numAlgo * numProto)];
        for (int i = 0; i < t.length; i++) {
            t[i] = minusOneEvery > 0 && i % minusOneEvery == 0 ? -1f : 10f + i;
        }
        return t;
    }

    /** One scripted call: the script line, the call, and whether the oracle applies (else: unchanged). */
    record Step(String line, Call call, boolean oracle) {}

    static Step get(
            String op,
            String slot,
            int coll,
            String nBytes,
            int pipe,
            int numAlgo,
            int numProto,
            float[] costs,
            boolean oracle) {
        long bytes = nBytes.equals("SIZE_MAX") ? -1L : Long.parseUnsignedLong(nBytes);
        String line = op + (slot == null ? "" : "," + slot) + "," + coll + "," + nBytes + "," + pipe + "," + numAlgo
                + "," + numProto + HostileHost.costs(costs);
        return new Step(line, new Call(coll, bytes, pipe, numAlgo, numProto, costs), oracle);
    }

    static Step line(String s) {
        return new Step(s, null, false);
    }

    /**
     * Calls NCCL does not make, or not in this shape, through hostile_host: each scenario in a process of
     * its own, every entry point returns ncclSuccess, hostile_host's guard words are intact, each get
     * leaves the table as the oracle says, and no WARN.
     */
    @ParameterizedTest(name = "{0}")
    @ValueSource(
            strings = {
                "NULL context",
                "after destroy",
                "destroy twice and destroy(NULL)",
                "init with a NULL context pointer",
                "NULL cost table and NULL nChannels",
                "6 x 3 table",
                "8 x 4 table",
                "table of all -1",
                "nBytes 0 and SIZE_MAX",
                "odd collectives, numPipeOps and table shapes"
            })
    void oddCallsDecideCorrectlyWithoutWarning(String scenario, @TempDir Path tmp) throws Exception {
        Policy policy = PolicyLoader.parse("edges.yaml", EDGE_POLICY);
        Path policyFile = write(tmp, "edges.yaml", EDGE_POLICY);
        float[] t73 = table(7, 3, 0);
        List<Step> steps = new ArrayList<>();
        steps.add(line("init,0,8,1"));
        switch (scenario) {
            case "NULL context" -> {
                steps.add(get("get-null-ctx", null, 4, "65536", 1, 7, 3, t73, false));
                steps.add(get("get", "0", 4, "65536", 1, 7, 3, t73, true));
            }
            case "after destroy" -> {
                steps.add(get("get", "0", 4, "65536", 1, 7, 3, t73, true));
                steps.add(line("destroy,0"));
                steps.add(get("get", "0", 4, "65536", 1, 7, 3, t73, false));
                steps.add(get("get", "0", 4, "4194304", 1, 7, 3, t73, false));
            }
            case "destroy twice and destroy(NULL)" -> {
                steps.add(line("destroy,0"));
                steps.add(line("destroy,0"));
                steps.add(line("destroy-null"));
                steps.add(line("init,1,8,1"));
                steps.add(get("get", "1", 4, "65536", 1, 7, 3, t73, true));
                steps.add(get("get", "0", 4, "65536", 1, 7, 3, t73, false));
            }
            case "init with a NULL context pointer" -> {
                steps.add(line("init-null,8,1"));
                steps.add(line("init-null,0,0"));
                steps.add(get("get", "0", 4, "65536", 1, 7, 3, t73, true));
            }
            case "NULL cost table and NULL nChannels" -> {
                steps.add(get("get-null-table", "0", 4, "65536", 1, 7, 3, t73, false));
                steps.add(get("get-null-nch", "0", 4, "65536", 1, 7, 3, t73, false));
                steps.add(get("get", "0", 4, "65536", 1, 7, 3, t73, true));
            }
            case "6 x 3 table" -> {
                steps.add(get("get", "0", 4, "65536", 1, 6, 3, table(6, 3, 0), true)); // no PAT row: RING/LL128
                steps.add(get("get", "0", 4, "4194304", 1, 6, 3, table(6, 3, 0), true));
                steps.add(get("get", "0", 0, "4096", 2, 6, 3, table(6, 3, 4), true));
            }
            case "8 x 4 table" -> {
                steps.add(get("get", "0", 4, "65536", 1, 8, 4, table(8, 4, 0), true)); // PAT/SIMPLE at 6 * 4 + 2
                steps.add(get("get", "0", 4, "4194304", 1, 8, 4, table(8, 4, 0), true));
                steps.add(get("get", "0", 0, "4096", 3, 8, 4, table(8, 4, 3), true));
            }
            case "table of all -1" -> {
                float[] off = new float[21];
                Arrays.fill(off, -1f);
                steps.add(get("get", "0", 4, "65536", 1, 7, 3, off, true));
                steps.add(get("get", "0", 4, "4194304", 1, 7, 3, off, true));
                steps.add(get("get", "0", 0, "4096", 2, 7, 3, off, true));
            }
            case "nBytes 0 and SIZE_MAX" -> {
                steps.add(get("get", "0", 4, "0", 1, 7, 3, t73, true));
                steps.add(get("get", "0", 4, "SIZE_MAX", 1, 7, 3, t73, true));
                steps.add(get("get", "0", 0, "0", 2, 7, 3, t73, true));
                steps.add(get("get", "0", 0, "SIZE_MAX", 2, 7, 3, t73, true));
            }
            case "odd collectives, numPipeOps and table shapes" -> {
                for (int coll : new int[] {-1, 5, 6, 7, 8, 99, Integer.MIN_VALUE}) {
                    steps.add(get("get", "0", coll, "65536", 2, 7, 3, t73, true));
                }
                for (int pipe : new int[] {0, -5, 1, 2, Integer.MAX_VALUE, Integer.MIN_VALUE}) {
                    steps.add(get("get", "0", 0, "65536", pipe, 7, 3, t73, true));
                }
                int[][] shapes = {
                    {0, 3},
                    {7, 0},
                    {-1, 3},
                    {3, -1},
                    {1, 1},
                    {9, 7},
                    {10, 7},
                    {65, 1},
                    {Integer.MAX_VALUE, 2},
                    {2, Integer.MAX_VALUE}
                };
                for (int[] s : shapes) {
                    steps.add(get(
                            "get",
                            "0",
                            4,
                            "65536",
                            1,
                            s[0],
                            s[1],
                            table(s[0] > 0 && s[1] > 0 && (long) s[0] * s[1] <= 128 ? s[0] : 0, s[1], 0),
                            true));
                }
            }
            default -> throw new IllegalArgumentException(scenario);
        }
        steps.add(line("destroy,0"));
        Path script =
                HostileHost.script(tmp, "edges", steps.stream().map(Step::line).toList());
        Harness.Result r = HostileHost.run(
                Map.of("NCCL_TUNER_JAVA_POLICY", policyFile.toString()),
                "--plugin",
                Harness.PLUGIN.toString(),
                "--script",
                script.toString());
        assertEquals(0, r.exit(), scenario + "\n" + r.text());
        assertTrue(r.warnings().isEmpty(), scenario + ": no WARN\n" + r.text());
        assertTrue(r.grep("hostile_host: ERROR").isEmpty(), r.text());
        assertTrue(
                r.lines().stream().filter(l -> l.contains(" ret=")).allMatch(l -> l.contains(" ret=0")),
                "ncclSuccess everywhere\n" + r.text());
        Map<Integer, HostileHost.Get> byLine = new HashMap<>();
        HostileHost.gets(r).forEach(g -> byLine.put(g.line(), g));
        long applied = 0;
        for (int i = 0; i < steps.size(); i++) {
            Step s = steps.get(i);
            if (s.call() == null) {
                continue;
            }
            HostileHost.Get got = byLine.get(i + 1);
            assertNotNull(got, "no result for script line " + (i + 1) + "\n" + r.text());
            Expect want = s.oracle() ? RandomWorkload.expect(policy, Mode.ENFORCE, 8, 1, s.call()) : Expect.NOTHING;
            float[] after = s.call().costs().clone();
            if (want.index() >= 0) {
                after[want.index()] = 0f;
                applied++;
            }
            assertArrayEquals(Arrays.copyOf(after, s.call().entries()), got.table(), scenario + ": " + s.line());
            assertEquals(want.channels(), got.nChannels(), scenario + ": nChannels after " + s.line());
        }
        if (!scenario.equals("table of all -1")) {
            assertTrue(applied > 0, "the scenario also shows the policy applying");
        }
    }
}
