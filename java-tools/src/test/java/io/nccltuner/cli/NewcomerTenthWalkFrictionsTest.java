package io.nccltuner.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 21 (tenth newcomer walk, from the tarball): the frictions outside compile's input
 * warnings. Each test asserts the message and exit code the CLI prints now; its comment says what
 * it printed before.
 */
class NewcomerTenthWalkFrictionsTest {
    @TempDir
    Path tmp;

    static final String POLICY = CliRun.repoFile("policies/h200-2rank.yaml");
    static final String TRACE = CliRun.repoFile("tests/traces/trace_tp_infer.csv");

    /**
     * Item 1. Before: {@code try --trace T --bogus} took {@code --bogus} for one more trace file
     * ({@code nccl-tuner try: --bogus: no such file}, exit 1). Now it is an unknown option, as in
     * compile and replay: exit 2, the same words, and the closest option for a mistyped one. The
     * commands with positional files (report, validate, show, import, calibrate) and explain said
     * so already.
     */
    @Test
    void anUnknownOptionAfterTryTracesIsAUsageErrorAsElsewhere() {
        String missing = tmp.resolve("missing.txt").toString();
        List<List<String>> bad = List.of(
                List.of("try", "--policy", POLICY, "--trace", TRACE, "--bogus"),
                List.of("try", "--policy", POLICY, "--trace", TRACE, TRACE, "--nccl-lgo", "x.log"),
                List.of("replay", "--policy", POLICY, "--trace", TRACE, "--bogus"),
                List.of("report", missing, "--bogus"),
                List.of("validate", POLICY, "--bogus"),
                List.of("explain", "--bogus"),
                List.of("show", POLICY, "--bogus"),
                List.of("import", missing, "--bogus"),
                List.of("calibrate", missing, "--bogus"));
        List<String> first = List.of(
                "nccl-tuner try: Unknown option: '--bogus'",
                "nccl-tuner try: Unknown option: '--nccl-lgo'; did you mean --nccl-log?",
                "nccl-tuner replay: Unknown option: '--bogus'",
                "nccl-tuner report: Unknown option: '--bogus'",
                "nccl-tuner validate: Unknown option: '--bogus'",
                "nccl-tuner explain: Unknown option: '--bogus'",
                "nccl-tuner show: Unknown option: '--bogus'",
                "nccl-tuner import: Unknown option: '--bogus'",
                "nccl-tuner calibrate: Unknown option: '--bogus'");
        for (int i = 0; i < bad.size(); i++) {
            CliRun r = CliRun.run(bad.get(i).toArray(String[]::new));
            String cmd = bad.get(i).get(0);
            assertEquals(Main.EXIT_USAGE, r.exit(), r.err());
            assertEquals(first.get(i) + "\nsee 'nccl-tuner " + cmd + " --help'\n", r.err());
        }
    }

    /**
     * Item 5. Before: {@code import} of optimize_config.py's performance CSV said on line 1 that it
     * is measurement data, then called each timing row {@code 12 fields: RCCL's example-tuner rows
     * add partitionMode ...} (24 problems for 23 rows). The file is refused as a whole: one line.
     */
    @Test
    void importRefusesMeasurementDataInOneLine() throws Exception {
        Path csv = CliRun.write(
                tmp,
                "performance_data.csv",
                "collective,size_bytes,algorithm,protocol,channels,nodes,ranks,pipeOps,regBuff,cost_metric,"
                        + "bandwidth_gbps,latency_us\n"
                        + "allreduce,1024,tree,simple,2,1,8,-1,-1,0.15,45.2,12.5\n"
                        + "allreduce,1024,ring,simple,4,1,8,-1,-1,0.12,52.1,10.8\n");
        CliRun r =
                CliRun.run("import", csv.toString(), "-o", tmp.resolve("p.yaml").toString());
        assertEquals(Main.EXIT_INPUT, r.exit(), r.err());
        assertEquals(
                "nccl-tuner import: " + csv + ":1: this is measurement data (the performance CSV of NCCL's "
                        + "optimize_config.py, or a sweep): its rows are timings per size, not rules; use 'nccl-tuner "
                        + "compile' on it\n",
                r.err());
    }

    /**
     * Item 2. Before: {@code import} and {@code calibrate} wrote {@code mode: enforce} with no
     * {@code --mode} ({@code Unknown option: '--mode'}, exit 2), while compile writes shadow by
     * default. Now both write shadow unless {@code --mode} says otherwise, and end with compile's
     * mode line naming themselves.
     */
    @Test
    void importAndCalibrateWriteShadowByDefaultAndSayHowToSwitch() throws Exception {
        String conf = CliRun.fixture("nvidia-boundaries.conf");
        Path shadow = tmp.resolve("imported.yaml");
        CliRun r = CliRun.run("import", conf, "-o", shadow.toString());
        assertEquals(0, r.exit(), r.err());
        assertTrue(java.nio.file.Files.readString(shadow).contains("\nmode: shadow\n"));
        assertTrue(
                r.out()
                        .endsWith("\nmode: shadow (the plugin logs what the policy would change and changes nothing); "
                                + "when its logs agree, run it with NCCL_TUNER_JAVA_MODE=canary, then enforce, or import "
                                + "with --mode enforce (docs/canary.md)\n"),
                r.out());
        Path enforce = tmp.resolve("enforced.yaml");
        r = CliRun.run("import", conf, "-o", enforce.toString(), "--mode", "enforce");
        assertEquals(0, r.exit(), r.err());
        assertTrue(java.nio.file.Files.readString(enforce).contains("\nmode: enforce\n"));
        assertTrue(
                r.out()
                        .endsWith(
                                "\nmode: enforce (the plugin applies the policy's picks); NCCL_TUNER_JAVA_MODE=shadow "
                                        + "in the job, or import with --mode shadow, only logs them\n"),
                r.out());
        r = CliRun.run("import", conf, "--mode", "enforced");
        assertEquals(Main.EXIT_USAGE, r.exit(), r.err());
        assertEquals(
                "nccl-tuner import: --mode: 'enforced' is not shadow, canary, enforce or off\n"
                        + "see 'nccl-tuner import --help'\n",
                r.err());

        Path calibrated = tmp.resolve("calibrated.yaml");
        r = CliRun.run(
                "calibrate",
                CalibrateCommandTest.sweep("sweep-2nodes"),
                CalibrateCommandTest.sweep("sweep-4nodes"),
                "-o",
                calibrated.toString(),
                "--no-match-gpu");
        assertEquals(0, r.exit(), r.err());
        assertTrue(java.nio.file.Files.readString(calibrated).contains("\nmode: shadow\n"));
        assertTrue(
                r.out()
                        .endsWith("\nmode: shadow (the plugin logs what the policy would change and changes nothing); "
                                + "when its logs agree, run it with NCCL_TUNER_JAVA_MODE=canary, then enforce, or "
                                + "calibrate with --mode enforce (docs/canary.md)\n"),
                r.out());
    }

    /**
     * Item 4. Before: for a line of NCCL's example CSV that sets only the channel count (its
     * algorithm and protocol are NCCL's own pick), replay said {@code 0 changed (+ 16 channels
     * only)} and try {@code the policy would change 16 of 273 calls}. Now try counts as replay:
     * {@code 0 of 273 calls (+ 16 channels only; ...)}, in shadow and in enforce mode.
     */
    @Test
    void tryCountsChannelOnlyChangesAsReplayDoes() throws Exception {
        String conf = CliRun.write(tmp, "nccl_tuner.conf", "allgather,0,4294967295,ring,simple,4,2,-1\n")
                .toString();
        CliRun replay = CliRun.run("replay", "--policy", conf, "--trace", TRACE);
        assertEquals(0, replay.exit(), replay.err());
        assertTrue(replay.out().contains("\nall: 273 calls, 0 changed (+ 16 channels only)"), replay.out());
        CliRun shadow = CliRun.tryRun("--policy", conf, "--trace", TRACE);
        assertEquals(0, shadow.exit(), shadow.err());
        assertTrue(
                shadow.out()
                        .endsWith("\ntry: the policy would change 0 of 273 calls (+ 16 channels only; rule hits 16; "
                                + "changed: where its pick differs from NCCL's); run it with NCCL_TUNER_JAVA_MODE=shadow "
                                + "in the job next\n"),
                shadow.out());
        CliRun enforce = CliRun.tryRun("--policy", conf, "--trace", TRACE, "--mode", "enforce");
        assertEquals(0, enforce.exit(), enforce.err());
        assertTrue(
                enforce.out().endsWith("\ntry: the policy changed 0 of 273 calls (+ 16 channels only; rule hits 16)\n"),
                enforce.out());
    }

    /**
     * Item 3. Before: policies/h200-2rank-measured.yaml named the source tree's paths in its header
     * ({@code java-tools/src/test/resources/compile/...}, {@code tests/traces/...}), so the
     * distribution's documented command ({@code bin/nccl-tuner compile
     * examples/measurements/h200-2rank-sweep_allreduce.rep1.csv --nccl-log
     * examples/traces/nccl_sweep.rank0.log ...}) differed from it in those two lines. Now the shipped
     * file is that command's output byte for byte: the compile of the same inputs, with the
     * distribution's paths where the source tree's are.
     */
    @Test
    void theShippedMeasuredPolicyIsTheTarballsCompileByteForByte() throws Exception {
        String sweep = "java-tools/src/test/resources/compile/h200-2rank-sweep_allreduce.rep1.csv";
        String log = "tests/traces/nccl_sweep.rank0.log";
        Path fresh = tmp.resolve("my-h200-2rank-measured.yaml");
        CliRun r = CliRun.run(
                "compile",
                CliRun.repoFile(sweep),
                "--nccl-log",
                CliRun.repoFile(log),
                "--workload",
                TRACE,
                "--name",
                "h200-2rank-measured",
                "--mode",
                "enforce",
                "-o",
                fresh.toString());
        assertEquals(0, r.exit(), r.err());
        String expected = java.nio.file.Files.readString(fresh)
                .replace(
                        "#   " + CliRun.repoFile(sweep) + "\n",
                        "#   examples/measurements/h200-2rank-sweep_allreduce.rep1.csv\n")
                .replace(
                        "#   NCCL's picks: " + CliRun.repoFile(log) + "\n",
                        "#   NCCL's picks: examples/traces/nccl_sweep.rank0.log\n");
        assertEquals(
                expected,
                java.nio.file.Files.readString(Path.of(CliRun.repoFile("policies/h200-2rank-measured.yaml"))));
    }
}
