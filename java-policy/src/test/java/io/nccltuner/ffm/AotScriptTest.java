package io.nccltuner.ffm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * make/nccl-tuner-aot.sh (bin/nccl-tuner-aot) in a tree whose runtime/bin/java is a stand-in that
 * records its calls and, for the training run, writes a cache and exits with FAKE_RC: --help and
 * wrong arguments are answered before anything runs, and a failed training run leaves no cache.
 */
class AotScriptTest {
    static final Path SCRIPT = Path.of(System.getProperty("nccltj.repo", ".."))
            .toAbsolutePath()
            .normalize()
            .resolve("make/nccl-tuner-aot.sh");

    @TempDir
    Path root;

    Path calls;

    record Result(int exit, String out, String err) {}

    @BeforeEach
    void tree() throws Exception {
        Files.createDirectories(root.resolve("bin"));
        Files.createDirectories(root.resolve("lib"));
        Files.createDirectories(root.resolve("runtime/bin"));
        Files.createDirectories(root.resolve("policies"));
        Files.writeString(root.resolve("policies/p.yaml"), "schema: nccl-tuner-java/v1\n");
        // the policy the training run reads by default
        Files.writeString(root.resolve("policies/h200-2rank.yaml"), "schema: nccl-tuner-java/v1\n");
        Files.writeString(
                root.resolve("bin/nccl-tuner-aot"), Files.readString(SCRIPT).replace("@AOT_OPTS@", "-Xshare:auto"));
        calls = root.resolve("calls.txt");
        Files.writeString(root.resolve("runtime/bin/java"), """
        #!/bin/sh
        echo "$*" >> "%s"
        [ -z "${JAVA_TOOL_OPTIONS-}${_JAVA_OPTIONS-}${JDK_JAVA_OPTIONS-}" ] || echo "java got options from the environment" >&2
        for a; do case "$a" in -XX:AOTCacheOutput=*) c="${a#-XX:AOTCacheOutput=}" ;; esac; done
        if [ -n "$c" ]; then
          head -c 4096 /dev/zero > "$c"
          echo "Temporary AOTConfiguration recorded: $c.config"
          echo "Launching child process runtime/bin/java to assemble AOT cache $c using configuration $c.config"
          echo "Picked up JAVA_TOOL_OPTIONS: -Djava.class.path=lib/nccl-tuner-java.jar -Xrs" >&2
          echo "Reading AOTConfiguration $c.config and writing AOTCache $c"
          echo "AOTCache creation is complete: $c 4096 bytes"
          echo "Removed temporary AOT configuration file $c.config"
          [ "${FAKE_RC:-0}" = 0 ] || { echo "AotTraining: x: no such file" >&2; exit "$FAKE_RC"; }
          echo "AotTraining: 273 calls replayed"
        fi
        """.formatted(calls));
        for (String f : List.of("bin/nccl-tuner-aot", "runtime/bin/java")) {
            Files.setPosixFilePermissions(root.resolve(f), PosixFilePermissions.fromString("rwxr-xr-x"));
        }
    }

    Result run(String rc, String... args) throws Exception {
        return run(java.util.Map.of(), rc, args);
    }

    Result run(java.util.Map<String, String> env, String rc, String... args) throws Exception {
        List<String> cmd = new ArrayList<>(
                List.of("/bin/sh", root.resolve("bin/nccl-tuner-aot").toString()));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.environment().remove("NCCL_TUNER_JAVA_POLICY");
        pb.environment().put("FAKE_RC", rc);
        pb.environment().putAll(env);
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        return new Result(p.waitFor(), out, err);
    }

    void nothingRan() {
        assertFalse(Files.exists(calls), "the runtime was started");
        assertFalse(Files.exists(root.resolve("lib/nccl-tuner-java.aot")));
    }

    @Test
    void helpPrintsUsageAndRunsNothing() throws Exception {
        for (String h : List.of("--help", "-h")) {
            Result r = run("0", h);
            assertEquals(0, r.exit(), r.err());
            assertTrue(r.out().startsWith("Usage: bin/nccl-tuner-aot [TRACE.csv]\n"), r.out());
            assertEquals("", r.err());
            nothingRan();
        }
    }

    @Test
    void wrongArgumentsExit2BeforeAnything() throws Exception {
        Result r = run("0", "--bogus");
        assertEquals(2, r.exit());
        assertEquals("nccl-tuner-aot: unknown option '--bogus'; see bin/nccl-tuner-aot --help\n", r.err());
        nothingRan();
        r = run("0", "a.csv", "b.csv");
        assertEquals(2, r.exit());
        assertEquals(
                "nccl-tuner-aot: takes at most one argument (a trace CSV), got 2; see bin/nccl-tuner-aot --help\n",
                r.err());
        nothingRan();
        r = run("0", root.resolve("missing.csv").toString());
        assertEquals(2, r.exit());
        assertEquals(
                "nccl-tuner-aot: '" + root.resolve("missing.csv") + "' is not a readable trace CSV; see "
                        + "bin/nccl-tuner-aot --help\n",
                r.err());
        nothingRan();
    }

    @Test
    void failedTrainingRunLeavesNoCache() throws Exception {
        Path trace = Files.writeString(root.resolve("t.csv"), "init,0,2,1\n");
        Result r = run("1", trace.toString());
        assertEquals(1, r.exit(), r.err());
        assertFalse(Files.exists(root.resolve("lib/nccl-tuner-java.aot")));
        assertFalse(Files.exists(root.resolve("lib/nccl-tuner-java.aot.log")));
        // the training's message, without the JVM's lines about the cache it assembled at exit
        assertEquals(
                "AotTraining: x: no such file\n"
                        + "nccl-tuner-aot: the training run failed (exit 1, see its message above), so no AOT "
                        + "cache was made; the plugin works without it, it only starts slower\n",
                r.err());
        // and a good run writes it
        r = run("0", trace.toString());
        assertEquals(0, r.exit(), r.err());
        assertEquals(
                "nccl-tuner-aot: wrote " + root.toRealPath().resolve("lib/nccl-tuner-java.aot") + " (1 MiB), the AOT "
                        + "cache the plugin starts from (trained on 273 tuner calls of " + trace + ")\n",
                r.out());
    }

    /**
     * Issue 21 (sixth walk), item 5: a clean run from the dist tree printed the JVM's own lines
     * about the cache (JDK 25's -XX:AOTCacheOutput: "Temporary AOTConfiguration recorded",
     * "Launching child process ...", the child's "Picked up JAVA_TOOL_OPTIONS: ...", "AOTCache
     * creation is complete ...") and "AotTraining: 54600 calls replayed". Now it says only what it
     * wrote: each policy's compiled form (the runtime's CompiledPolicy, not run by this stand-in)
     * and the cache, its size and what it was trained on; nothing on stderr, no log left behind.
     */
    @Test
    void aCleanRunSaysOnlyWhatItWrote() throws Exception {
        Result r = run("0");
        assertEquals(0, r.exit(), r.err());
        assertEquals("", r.err());
        assertEquals(
                "nccl-tuner-aot: wrote " + root.toRealPath().resolve("lib/nccl-tuner-java.aot") + " (1 MiB), the AOT "
                        + "cache the plugin starts from (trained on 273 tuner calls of the trace bundled in the jar)\n",
                r.out());
        assertFalse(Files.exists(root.resolve("lib/nccl-tuner-java.aot.log")));
        // a NCCL_TUNER_JAVA_POLICY that does not exist is named as such (it said "folder not writable")
        Path missing = root.resolve("nosuch/my.yaml");
        Result typo = run(java.util.Map.of("NCCL_TUNER_JAVA_POLICY", missing.toString()), "0");
        assertEquals(0, typo.exit(), typo.err());
        assertEquals("nccl-tuner-aot: " + missing + ": no such policy file, no binary form made\n", typo.err());
        assertTrue(
                Files.readString(calls)
                        .contains("io.nccltuner.engine.CompiledPolicy " + root.toRealPath() + "/policies/p.yaml"),
                Files.readString(calls));
    }

    /**
     * Issue 21 (fourth walk), item 19: with JAVA_TOOL_OPTIONS set the training run took it (the
     * runtime's "Picked up JAVA_TOOL_OPTIONS" line, and a cache trained under other options than
     * the plugin's JVM, which hides them). Now no run here gets it, and one line says so.
     */
    @Test
    void theJvmOptionsOfTheEnvironmentAreNotApplied() throws Exception {
        Result r = run(java.util.Map.of("JAVA_TOOL_OPTIONS", "-Xmx64m", "_JAVA_OPTIONS", "-Xss1m"), "0");
        assertEquals(0, r.exit(), r.err());
        assertTrue(
                r.err()
                        .startsWith(
                                "nccl-tuner-aot: JAVA_TOOL_OPTIONS, _JAVA_OPTIONS and JDK_JAVA_OPTIONS are not applied "
                                        + "here, as the plugin's JVM does not take them\n"),
                r.err());
        assertFalse(r.err().contains("java got options from the environment"), r.err());
        assertTrue(Files.readString(calls).contains("-XX:AOTCacheOutput="), Files.readString(calls));
        Result plain = run("0");
        assertEquals(0, plain.exit(), plain.err());
        assertFalse(plain.err().contains("not applied here"), plain.err());
    }
}
