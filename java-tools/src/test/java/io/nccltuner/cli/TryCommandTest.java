package io.nccltuner.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code nccl-tuner try}: the build tree's harness and plugin (make build) replay a captured trace
 * in shadow mode; the plugin's lines, the report of its decision logs and the verdict. Skipped
 * where the build tree has no harness or plugin (DistIT tries the distribution's).
 */
@Timeout(240)
class TryCommandTest {
    @TempDir
    Path tmp;

    static final Path REPO = CliRun.REPO;
    static final Path HARNESS = CliRun.HARNESS;
    static final Path PLUGIN = CliRun.PLUGIN;

    /** @return try's arguments after its name, as {@link #tryRun} gives them: the harness, the plugin, then {@code more} */
    private static java.util.List<String> tryArgs(String... more) {
        java.util.List<String> a = CliRun.tryArgs(more);
        return a.subList(1, a.size());
    }

    private static CliRun tryRun(String... more) {
        return CliRun.tryRun(more);
    }

    @Test
    void shadowRunPrintsDecisionsReportAndVerdict() {
        CliRun r = tryRun(
                "--policy",
                REPO.resolve("policies/h200-2rank.yaml").toString(),
                "--trace",
                CliRun.trace("trace_tp_infer.csv"));
        assertEquals(0, r.exit(), r.err() + r.out());
        assertTrue(r.out().startsWith("try: policy h200-2rank-timesliced ("), r.out());
        assertTrue(
                r.out()
                        .contains(
                                "INFO TUNER/Java: policy h200-2rank-timesliced profile two-ranks-socket mode shadow "
                                        + "rules 3 sha256 50e87163f1f000d756d7053d8761e7ff02c3af2103a1cbb75dcc6d3d0a5e341c (nRanks=2 nNodes=2)"),
                r.out());
        assertTrue(r.out().contains("harness: calls=273 changed=0 warn=0"), r.out());
        assertTrue(r.out().contains("== nccl-tuner report of the decision logs\n"), r.out());
        assertTrue(
                r.out()
                        .replaceAll(" +", " ")
                        .contains("nRanks=2 nNodes=2 AllReduce [16 KiB, 20 KiB) 64 1 RING/LL TREE/LL"),
                r.out());
        assertTrue(
                r.out()
                        .endsWith(
                                "try: the policy would change 257 of 273 calls (rule hits 257; changed: where its pick "
                                        + "differs from NCCL's); run it with NCCL_TUNER_JAVA_MODE=shadow in the job next\n"),
                r.out());
        assertTrue(r.out().lines().noneMatch(l -> l.contains("Bytes -> ")), "no per-call lines in shadow mode");
    }

    /** The README's old trap: a policy for another shape than the job's says so in the last line. */
    @Test
    void policyOfAnotherShapeSaysItChangesNothing() throws Exception {
        Path p8 = tmp.resolve("p8.yaml");
        Files.writeString(
                p8,
                Files.readString(REPO.resolve("policies/h200-2rank.yaml"))
                        .replace("match: {nRanks: 2, nNodes: 2}", "match: {nRanks: 8, nNodes: 1}"));
        CliRun r = tryRun("--policy", p8.toString(), "--trace", CliRun.trace("trace_tp_infer.csv"));
        assertEquals(Main.EXIT_INPUT, r.exit(), r.err() + r.out()); // as validate --nranks 2 --nnodes 2
        assertTrue(
                r.out()
                        .endsWith("try: the policy changes nothing: no profile matches nRanks=2 nNodes=2 (the traces' "
                                + "shape); its profiles: two-ranks-socket (nRanks=8 nNodes=1). Try it at its profile's shape: "
                                + "`nccl-tuner try "
                                + String.join(
                                        " ",
                                        tryArgs(
                                                "--policy",
                                                p8.toString(),
                                                "--trace",
                                                CliRun.trace("trace_tp_infer.csv")))
                                + " --nranks 8 --nnodes 1`; for the traces' "
                                + "shape, compile a policy from measurements of nRanks=2 nNodes=2 (`nccl-tuner sweep -o DIR "
                                + "--launch \"srun -N 2 --ntasks-per-node 1\" --algorithms TREE,RING --protocols "
                                + "LL,LL128,SIMPLE`, then `nccl-tuner compile DIR -o POLICY`), or capture a trace of the job's "
                                + "shape (NCCL_TUNER_JAVA_RECORD=FILE)\n"),
                r.out());
        CliRun as4 = tryRun(
                "--policy",
                p8.toString(),
                "--trace",
                CliRun.trace("trace_tp_infer.csv"),
                "--nranks",
                "4",
                "--nnodes",
                "1");
        assertEquals(Main.EXIT_INPUT, as4.exit(), as4.err() + as4.out());
        assertTrue(
                as4.out()
                        .endsWith("try: the policy changes nothing: no profile matches nRanks=4 nNodes=1 (--nranks 4 "
                                + "--nnodes 1); its profiles: two-ranks-socket (nRanks=8 nNodes=1). Give --nranks and --nnodes of one of "
                                + "them, the job's shape: `nccl-tuner try "
                                + String.join(
                                        " ",
                                        tryArgs(
                                                "--policy",
                                                p8.toString(),
                                                "--trace",
                                                CliRun.trace("trace_tp_infer.csv")))
                                + " --nranks 8 --nnodes 1`\n"),
                as4.out());
        CliRun as8 = tryRun(
                "--policy",
                p8.toString(),
                "--trace",
                CliRun.trace("trace_tp_infer.csv"),
                "--nranks",
                "8",
                "--nnodes",
                "1",
                "--mode",
                "enforce");
        assertEquals(0, as8.exit(), as8.err() + as8.out());
        assertTrue(as8.out().contains("mode enforce, 1 trace as nRanks=8 nNodes=1, NCCL 2.28, plugin "), as8.out());
        assertTrue(as8.out().contains("[changed]"), as8.out());
        assertTrue(as8.out().endsWith("try: the policy changed 257 of 273 calls (rule hits 257)\n"), as8.out());
    }

    @Test
    void inputAndUsageErrors() {
        CliRun noHarness = CliRun.run(
                "try",
                "--policy",
                REPO.resolve("policies/h200-2rank.yaml").toString(),
                "--trace",
                CliRun.trace("trace_tp_infer.csv"),
                "--harness",
                tmp.resolve("nope").toString());
        assertEquals(1, noHarness.exit());
        assertEquals(
                "nccl-tuner try: --harness " + tmp.resolve("nope") + ": not an executable file\n", noHarness.err());
        CliRun noPolicy = CliRun.run(
                "try", "--policy", tmp.resolve("none.yaml").toString(), "--trace", CliRun.trace("trace_tp_infer.csv"));
        assertEquals(1, noPolicy.exit());
        assertEquals("nccl-tuner try: " + tmp.resolve("none.yaml") + ": no such file\n", noPolicy.err());
        CliRun half = CliRun.run(
                "try",
                "--policy",
                REPO.resolve("policies/h200-2rank.yaml").toString(),
                "--trace",
                CliRun.trace("trace_tp_infer.csv"),
                "--nranks",
                "8");
        assertEquals(2, half.exit());
        assertTrue(
                half.err().startsWith("nccl-tuner try: --nranks and --nnodes go together, 1 <= nnodes <= nranks\n"),
                half.err());
    }

    /** NCCL's example-tuner CSV runs as the plugin reads it, through NCCL_TUNER_CONFIG_FILE. */
    @Test
    void exampleTunerCsvIsTried() throws Exception {
        Path conf = CliRun.write(tmp, "nccl_tuner.conf", """
        # collective_type,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks,numPipeOps,regBuff
        allreduce,0,4294967295,tree,simple,-1,-1,-1,-1,-1
        """);
        CliRun r = tryRun("--policy", conf.toString(), "--trace", CliRun.trace("trace_tp_infer.csv"));
        assertEquals(0, r.exit(), r.err() + r.out());
        assertTrue(
                r.out()
                        .contains("\ntry: " + conf + " is NCCL's example-tuner CSV: given to the plugin as "
                                + "NCCL_TUNER_CONFIG_FILE\n"),
                r.out());
        assertTrue(r.out().contains("== nccl-tuner report of the decision logs\n"), r.out());
        assertTrue(r.out().lines().anyMatch(l -> l.startsWith("try: the policy would change ")), r.out());
    }

    /** --keep-logs refuses a folder with an earlier try's logs; several traces are one job's ranks. */
    @Test
    void keepLogsNeedsAnEmptyFolderAndSeveralTracesAreOneJob() throws Exception {
        String policy = REPO.resolve("policies/h200-2rank.yaml").toString();
        Path keep = tmp.resolve("keep");
        CliRun first = tryRun(
                "--policy",
                policy,
                "--trace",
                CliRun.trace("trace_tp_infer.csv"),
                "--trace",
                CliRun.trace("trace_tp_infer.csv"),
                "--keep-logs",
                keep.toString());
        assertEquals(0, first.exit(), first.err() + first.out());
        assertTrue(
                first.out()
                        .contains("\ntry: the 2 traces are replayed as the ranks of one job (one process each); the "
                                + "report reads their decision logs together, as that job's ranks; try each trace alone for a report of its "
                                + "own\n"),
                first.out());
        long logs;
        try (var s = Files.list(keep)) {
            logs = s.count();
        }
        assertEquals(2, logs);
        CliRun again = tryRun(
                "--policy", policy, "--trace", CliRun.trace("trace_tp_infer.csv"), "--keep-logs", keep.toString());
        assertEquals(1, again.exit(), again.err() + again.out());
        assertEquals(
                "nccl-tuner try: --keep-logs " + keep + ": not empty (2 entries): the report would read the decision "
                        + "logs of an earlier try with this one's; give a new or empty folder\n",
                again.err());
        assertEquals("", again.out());
        try (var s = Files.list(keep)) {
            assertEquals(2, s.count(), "nothing written");
        }
    }

    /** nccl-tuner --help's summary of try is one whole sentence. */
    @Test
    void helpSummaryIsASentence() {
        CliRun r = CliRun.run("--help");
        assertEquals(0, r.exit(), r.err());
        assertTrue(
                r.out()
                        .replaceAll("\\s+", " ")
                        .contains(" try Try a policy without a GPU: replay captured tuner calls "
                                + "through the real plugin. help "),
                r.out());
    }
}
