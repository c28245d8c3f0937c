package io.nccltuner.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The eleventh newcomer walkthrough's frictions with {@code report}, {@code try} and {@code show}:
 * a log with no decision line fails the report (the plugin may never have loaded); a comm line
 * without its aggregate lines is not called "candidate not offered"; no {@code --nccl-log} advice
 * where NCCL's pick is known at every measured size; a tuner trace given to report is named as one;
 * an {@code --nccl-log} without NCCL's INIT shape line has its shape inferred as explain infers it;
 * and the exit codes of try and show where no profile matches, as the docs say them.
 */
class NewcomerEleventhWalkReportTryTest {
    @TempDir
    Path tmp;

    /** The refusal of a log without any line the report reads, after {@code nccl-tuner report: FILE: }. */
    private static final String NO_DECISIONS = "no decision lines (no comm line, no aggregate line, no canary measured"
            + " line): did the plugin load? check NCCL_TUNER_PLUGIN (the library's path, or java) and"
            + " NCCL_TUNER_JAVA_LOG (where this log was to be) in the job's environment; the plugin also leaves"
            + " its log empty where no profile matches (validate POLICY --nranks N --nnodes M)";

    // ---- 1. a green report of nothing -------------------------------------------------------

    /**
     * Before: {@code 1 log, 0 communicators}, {@code mode , sha256 ,}, every rank agrees, exit 0,
     * so a CI step passed a job whose plugin never loaded. Now exit 1 with one line, for an empty
     * file and for one of blank lines; beside a good log the empty one is refused all the same.
     */
    @Test
    void anEmptyLogFailsTheReport() throws Exception {
        Path empty = CliRun.write(tmp, "EMPTY.jsonl", "");
        CliRun r = CliRun.run("report", empty.toString());
        assertEquals(Main.EXIT_INPUT, r.exit(), r.out());
        assertEquals(1, Main.EXIT_INPUT);
        assertEquals("", r.out());
        assertEquals("nccl-tuner report: " + empty + ": " + NO_DECISIONS + "\n", r.err());

        Path blank = CliRun.write(tmp, "blank.jsonl", "\n  \n");
        CliRun b = CliRun.run("report", blank.toString());
        assertEquals(Main.EXIT_INPUT, b.exit(), b.out());
        assertEquals("nccl-tuner report: " + blank + ": " + NO_DECISIONS + "\n", b.err());

        CliRun both = CliRun.run("report", empty.toString(), blank.toString());
        assertEquals(Main.EXIT_INPUT, both.exit(), both.out());
        assertEquals("", both.out());
        assertTrue(both.err().contains(empty + ": " + NO_DECISIONS + "\n"), both.err());
        assertTrue(both.err().contains(blank + ": " + NO_DECISIONS + "\n"), both.err());
    }

    /**
     * An empty log beside logs with decisions is a rank whose communicators no profile matched (the
     * plugin leaves its log empty there): the others are reported, with one warning naming it.
     */
    @Test
    void anEmptyLogBesideOthersIsReportedWithoutIt() throws Exception {
        Path empty = CliRun.write(tmp, "EMPTY.jsonl", "");
        CliRun two = CliRun.run("report", ReportCommandTest.res("diverge-x.jsonl"), empty.toString());
        CliRun alone = CliRun.run("report", ReportCommandTest.res("diverge-x.jsonl"));
        assertEquals(alone.exit(), two.exit(), two.err());
        assertEquals(alone.out(), two.out());
        assertEquals(
                "nccl-tuner report: warning: 1 log of 2 with no decision lines, reported without it (" + empty
                        + "): ranks where no profile matched, or where the plugin did not load (check "
                        + "NCCL_TUNER_PLUGIN and NCCL_TUNER_JAVA_LOG there)\n" + alone.err(),
                two.err());
    }

    /**
     * A trace of nRanks 16 nNodes 2, which no profile of policies/h200-2rank.yaml matches: one
     * AllReduce of 16 KiB, NCCL's cost table offering TREE/LL 11.6 us and RING/LL 22.4 us.
     */
    private static final String TRACE_16 =
            "init,0,16,2\nget,0,16,2,4,16384,1,7,3,0,-1,-1,-1,11.6,-1,22.4" + ",-1".repeat(15) + "\ndestroy,0\n";

    /**
     * try leaves out of its report the empty log the plugin writes for a trace no profile matches:
     * before, the report counted it as a rank ({@code 2 logs}, {@code 0 comms, mode , sha256 ,});
     * now report refuses such a log, so try hands it only the other.
     */
    @Test
    void tryLeavesTheEmptyLogOfAnUnmatchedTraceOutOfItsReport() throws Exception {
        Path t16 = CliRun.write(tmp, "t16.csv", TRACE_16);
        Path kept = tmp.resolve("kept");
        CliRun r = CliRun.tryRun(
                "--policy",
                CliRun.repoFile("policies/h200-2rank.yaml"),
                "--trace",
                CliRun.trace("trace_tp_infer.csv"),
                "--trace",
                t16.toString(),
                "--keep-logs",
                kept.toString());
        assertEquals(Main.EXIT_OK, r.exit(), r.out() + r.err());
        assertEquals("", r.err());
        assertTrue(r.out().contains("\npolicy h200-2rank-timesliced: 1 log, 1 communicator\n"), r.out());
        assertFalse(r.out().contains(" 0 comms"), r.out());
        List<Path> logs;
        try (var s = Files.list(kept)) {
            logs = s.sorted().toList();
        }
        assertEquals(2, logs.size(), logs.toString()); // the folder keeps both, as the plugin wrote them
        Path empty =
                logs.stream().filter(f -> f.toFile().length() == 0).findFirst().orElseThrow();
        CliRun report = CliRun.run("report", empty.toString());
        assertEquals("nccl-tuner report: " + empty + ": " + NO_DECISIONS + "\n", report.err());
    }

    /** A shadow communicator's comm line, 65 rule hits, its aggregate lines lost. */
    private static final String COMM_ONLY = "{\"type\":\"comm\",\"comm\":17293822569102704642,\"host\":\"y\","
            + "\"pid\":12,\"policy\":\"p\",\"profile\":\"p\",\"sha256\":\"" + "f".repeat(64) + "\",\"mode\":\"shadow\","
            + "\"nRanks\":2,\"nNodes\":2,\"calls\":273,\"ruleHits\":65,\"applied\":0,\"unaggregated\":0,"
            + "\"at\":\"destroy\",\"commScope\":\"job\"}\n";

    /**
     * Before: {@code 65 rule hits would change nothing: candidate not offered (NCCL's cost table has
     * -1 for each of the rule's candidates) 65}, a reason nothing in the log shows. Now the line says
     * the aggregates are missing.
     */
    @Test
    void aCommLineWithoutAggregatesSaysTheyAreMissing() throws Exception {
        Path log = CliRun.write(tmp, "comm-only.jsonl", COMM_ONLY);
        CliRun r = CliRun.run("report", log.toString());
        assertEquals(Main.EXIT_OK, r.exit(), r.err());
        assertEquals("", r.err());
        assertTrue(
                r.out()
                        .contains("\n\n65 rule hits: aggregates missing for 1 communicator (a comm line counts the"
                                + " rule hits, the log holds no aggregate line for it: a log cut short, e.g. the job"
                                + " died before the plugin wrote them, or NCCL offered none of the rule's candidates"
                                + " at any hit; the log cannot tell which)\n"),
                r.out());
        assertFalse(r.out().contains("candidate not offered"), r.out());
        assertFalse(r.out().contains("no decisions in the logs"), r.out());
    }

    // ---- 2. no --nccl-log advice where nothing is missing -----------------------------------

    /**
     * docs/measure.md's GPU-less recipe (the simulated cluster's sweep and its enforce run's
     * decision log, as written there): NCCL's pick is known at all 4 measured sizes. Before: the
     * line went on {@code ; --nccl-log LOG (the measured runs' NCCL INFO log) makes NCCL's pick the
     * logged one, as compile takes it}, advice that changes nothing.
     */
    @Test
    void noNcclLogAdviceWhereEveryPickIsKnown() {
        CliRun r = CliRun.run(
                "report",
                ReportCommandTest.res("sim-recipe/my-sim-decisions.log"),
                "--measurements",
                ReportCommandTest.res("sim-recipe/my-sim-sweep"));
        assertEquals(Main.EXIT_OK, r.exit(), r.err());
        List<String> lines = r.out().lines().toList();
        assertEquals(
                "NCCL's pick: from the decision logs' rule hits (and any selection lines in the measurements), at 4 of"
                        + " 4 measured sizes of AllReduce nRanks=16 nNodes=2",
                lines.getLast());
        assertTrue(
                r.out()
                        .contains("expected saving: 290.1 us, 26.94% of the rule hits' time (NCCL's 1077.1 us over the"
                                + " 3 of 3 rule hits priced)"),
                r.out());
    }

    // ---- 3. report of a tuner trace -------------------------------------------------------------

    /** Before: {@code trace_ddp.csv:1: not a JSON object}. Now the file is named a tuner trace, and who reads it. */
    @Test
    void reportOfATraceSaysItIsATrace() {
        String trace = CliRun.trace("trace_ddp.csv");
        CliRun r = CliRun.run("report", trace);
        assertEquals(Main.EXIT_INPUT, r.exit(), r.out());
        assertEquals("", r.out());
        assertEquals(
                "nccl-tuner report: " + trace + ":1: a tuner trace (init/get/destroy rows), not a decision log:"
                        + " replay --trace and try --trace read it; report reads the decision logs a job writes"
                        + " (NCCL_TUNER_JAVA_LOG) or try --keep-logs DIR keeps\n",
                r.err());
    }

    /** A trace without its header comment is told by its rows; a log's stray line is not a trace. */
    @Test
    void aTraceIsToldByItsRowsToo() throws Exception {
        Path t = CliRun.write(tmp, "t.csv", "init,0,2,2\nget,0,2,2,4,16\n");
        CliRun r = CliRun.run("report", t.toString());
        assertEquals(Main.EXIT_INPUT, r.exit(), r.out());
        assertTrue(
                r.err().startsWith("nccl-tuner report: " + t + ":1: a tuner trace (init/get/destroy rows)"), r.err());
        Path notTrace = CliRun.write(tmp, "n.jsonl", "getting,0\n");
        CliRun n = CliRun.run("report", notTrace.toString());
        assertEquals(
                "nccl-tuner report: " + notTrace + ":1: not a JSON object (a decision log has one per line)\n",
                n.err());
    }

    // ---- 4. try --nccl-log of another job, without NCCL's INIT shape line ---------------------

    /** An A100's nccl-tests output with TUNING lines only: no {@code comm ... nRanks N nNodes M} line. */
    private static final String A100_NO_INIT = """
            # nccl-tests version 2.17.6 nccl-headers=22707 nccl-library=22707
            #  Rank  0 Group  0 Pid  64904 on      host0 device  0 [0000:17:00] NVIDIA A100 80GB PCIe
            #  Rank  1 Group  0 Pid  64904 on      host0 device  1 [0000:65:00] NVIDIA A100 80GB PCIe
            host0:64904:64904 [0] NCCL INFO NCCL version 2.27.7+cuda13.0
            """;

    /**
     * Before: no warning (the log has no INIT shape line), and the H200 trace was tried presenting
     * the A100 and NCCL 2.27.7. Now the log's shape is inferred as explain infers it (nRanks=2
     * nNodes=1 from the '# Rank' lines) and the documented warning names it as inferred.
     */
    @Test
    void tryInfersTheShapeOfALogWithoutAnInitLine() throws Exception {
        Path log = CliRun.write(tmp, "a100.log", A100_NO_INIT);
        CliRun r = CliRun.tryRun(
                "--policy",
                CliRun.repoFile("policies/h200-2rank.yaml"),
                "--trace",
                CliRun.trace("trace_tp_infer.csv"),
                "--nccl-log",
                log.toString());
        assertEquals(Main.EXIT_OK, r.exit(), r.out() + r.err());
        assertEquals(
                "nccl-tuner try: warning: --nccl-log " + log + " ran nRanks=2 nNodes=1 (inferred: the log has no"
                        + " 'comm ... nRanks N nNodes M' line), the traces nRanks=2 nNodes=2: the GPU and NCCL version"
                        + " it names, presented to the plugin, are another job's; give the traces' own job's log, or"
                        + " --gpu NAME and --nccl-version V\n",
                r.err());
        // the same log on one more host: nNodes 2 is inferred, the traces' shape, so no warning
        Path two = CliRun.write(
                tmp,
                "a100-2.log",
                A100_NO_INIT.replace("Pid  64904 on      host0 device  1", "Pid  64905 on      host1 device  0"));
        CliRun same = CliRun.tryRun(
                "--policy",
                CliRun.repoFile("policies/h200-2rank.yaml"),
                "--trace",
                CliRun.trace("trace_tp_infer.csv"),
                "--nccl-log",
                two.toString());
        assertEquals(Main.EXIT_OK, same.exit(), same.out() + same.err());
        assertEquals("", same.err());
    }

    /** The shapes a log ran, compared with the traces': nRanks alone where the log tells no nodes. */
    @Test
    void aLogShapeWithoutNodesMatchesOnRanks() {
        assertTrue(TryCommand.sameShape("nRanks=2", List.of("nRanks=2 nNodes=2")));
        assertFalse(TryCommand.sameShape("nRanks=2", List.of("nRanks=16 nNodes=2")));
        assertTrue(TryCommand.sameShape("nRanks=2 nNodes=2" + TryCommand.INFERRED, List.of("nRanks=2 nNodes=2")));
        assertFalse(TryCommand.sameShape("nRanks=2 nNodes=1" + TryCommand.INFERRED, List.of("nRanks=2 nNodes=2")));
    }

    // ---- 5. exit codes where no profile matches -----------------------------------------------

    /** try exits 1 where no profile matches the shape tried, as its --help says, and now the README's exit list too. */
    @Test
    void tryExitsOneWhereNoProfileMatchesAsTheReadmeSays() throws Exception {
        CliRun r = CliRun.tryRun(
                "--policy",
                CliRun.repoFile("policies/h200-2rank.yaml"),
                "--trace",
                CliRun.trace("trace_tp_infer.csv"),
                "--nranks",
                "16",
                "--nnodes",
                "2");
        assertEquals(Main.EXIT_INPUT, r.exit(), r.out() + r.err());
        assertTrue(r.out().contains("try: the policy changes nothing: no profile matches nRanks=16 nNodes=2"), r.out());
        String readme = Files.readString(CliRun.REPO.resolve("README.md")).replaceAll("\\s+", " ");
        assertTrue(
                readme.contains("the report of the logs and a verdict line (exit 0; 1 for a policy that does not load,"
                        + " a missing file, a failing harness, or no profile matching the shape tried, as `validate"
                        + " --nranks N --nnodes M` exits 1 for it"),
                "README's exit list for try");
    }

    /**
     * show exits 0 where no shape shown matches a profile (a view), while validate and try exit 1:
     * its last line now says why, and docs/show.md's exit codes say so.
     */
    @Test
    void showSaysWhyItExitsZeroWhereNoProfileMatches() throws Exception {
        CliRun r = CliRun.run("show", CliRun.repoFile("policies/h200-2rank.yaml"), "--nranks", "16", "--nnodes", "2");
        assertEquals(Main.EXIT_OK, r.exit(), r.err());
        assertEquals(
                "show exits 0 all the same (it is a view of the shapes asked for); validate POLICY --nranks N"
                        + " --nnodes M and try exit 1 where no profile matches a job's shape, for a CI step",
                r.out().lines().toList().getLast());
        CliRun v =
                CliRun.run("validate", CliRun.repoFile("policies/h200-2rank.yaml"), "--nranks", "16", "--nnodes", "2");
        assertEquals(Main.EXIT_INPUT, v.exit(), v.out());
        String docs = Files.readString(CliRun.REPO.resolve("docs/show.md")).replaceAll("\\s+", " ");
        assertTrue(
                docs.contains("Exit codes: 0 done, also where no shape shown matches a profile (show is a view"), docs);
        // a shape that matches: no such line
        CliRun m = CliRun.run("show", CliRun.repoFile("policies/h200-2rank.yaml"), "--nranks", "2", "--nnodes", "2");
        assertFalse(m.out().contains("show exits 0"), m.out());
    }
}
