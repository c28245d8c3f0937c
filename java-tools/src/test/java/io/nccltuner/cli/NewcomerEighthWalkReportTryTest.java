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
 * The eighth newcomer walkthrough's frictions with {@code report} and {@code try}: every refused
 * input named in one run (as compile does), the harness's line refusing a trace printed once, a
 * warning where an --nccl-log's communicators have another shape than the traces', the NCCL version
 * the log names presented by default, the singular for one, and the constants line saying what the
 * harness's constants start from.
 */
class NewcomerEighthWalkReportTryTest {
    @TempDir
    Path tmp;

    /** One rank's decision log of one communicator: a comm line and one aggregate line. */
    private static final String LOG = """
            {"type":"comm","comm":7,"host":"vm","pid":13671,"policy":"p","profile":"p","sha256":"%s","mode":"shadow",\
            "nRanks":2,"nNodes":2,"calls":10,"ruleHits":10,"applied":0,"unaggregated":0,"at":"destroy"}
            {"type":"aggregate","comm":7,"host":"vm","pid":13671,"sha256":"%s","nRanks":2,"nNodes":2,\
            "collective":"AllReduce","nBytes":4,"toBytes":5,"bucket":"[4 B, 5 B)","ncclPick":"RING/LL",\
            "policyPick":"RING/SIMPLE","channels":0,"count":10}
            """.formatted("a".repeat(64), "a".repeat(64));

    /** An A100's nccl-tests output with NCCL's INFO lines: NCCL 2.27.7, nRanks 2 nNodes 1. */
    private static final String A100_LOG = """
            # nccl-tests version 2.17.6 nccl-headers=22707 nccl-library=22707
            #  Rank  0 Group  0 Pid  64904 on      host0 device  0 [0000:17:00] NVIDIA A100 80GB PCIe
            #  Rank  1 Group  0 Pid  64904 on      host0 device  1 [0000:65:00] NVIDIA A100 80GB PCIe
            host0:64904:64904 [0] NCCL INFO NCCL version 2.27.7+cuda13.0
            host0:64904:65722 [0] NCCL INFO comm 0x55d5f5ac09e0 rank 0 nRanks 2 nNodes 1 localRanks 2 localRank 0 MNNVL 0
            host0:64904:65723 [1] NCCL INFO comm 0x55d5f5bca580 rank 1 nRanks 2 nNodes 1 localRanks 2 localRank 1 MNNVL 0
            """;

    /** A trace whose line 2 is a get row with too few fields for the harness. */
    private static final String BROKEN_TRACE = "init,0,2,2\nget,0,2,2,4,16384\n";

    // ---- 1. every refused input named in one run ---------------------------------------------

    /** Three refused logs: each on its line, then the count; exit 1, nothing on stdout. */
    @Test
    void reportNamesEveryRefusedLog() throws Exception {
        Path a = CliRun.write(tmp, "a.jsonl", LOG + LOG + "not json\n");
        Path b = CliRun.write(tmp, "b.jsonl", "[1]\n");
        Path missing = tmp.resolve("nonexist.jsonl");
        CliRun r = CliRun.run("report", a.toString(), b.toString(), missing.toString());
        assertEquals(1, r.exit(), r.err());
        assertEquals("", r.out());
        List<String> lines = r.err().lines().toList();
        assertEquals(4, lines.size(), r.err());
        assertTrue(lines.get(0).startsWith("nccl-tuner report: " + a + ":5: "), r.err());
        assertTrue(lines.get(1).startsWith("nccl-tuner report: " + b + ":1: "), r.err());
        assertEquals("nccl-tuner report: " + missing + ": no such file", lines.get(2));
        assertEquals(
                "nccl-tuner report: 3 of 3 inputs refused (each on its line above); nothing reported", lines.get(3));
    }

    /** A refused log and a refused --measurements file: both named, then 2 of 3. */
    @Test
    void reportNamesARefusedMeasurementsFileBesideARefusedLog() throws Exception {
        Path good = CliRun.write(tmp, "good.jsonl", LOG);
        Path missing = tmp.resolve("gone.jsonl");
        Path m = tmp.resolve("missing.csv");
        CliRun r = CliRun.run("report", good.toString(), missing.toString(), "--measurements", m.toString());
        assertEquals(1, r.exit(), r.err());
        assertEquals(
                "nccl-tuner report: " + missing + ": no such file\n"
                        + "nccl-tuner report: " + m + ": no such file\n"
                        + "nccl-tuner report: 2 of 3 inputs refused (each on its line above); nothing reported\n",
                r.err());
    }

    /** One refused input is refused as before: its line alone. */
    @Test
    void reportWithOneRefusedLogPrintsItsLineAlone() throws Exception {
        Path good = CliRun.write(tmp, "good.jsonl", LOG);
        Path missing = tmp.resolve("gone.jsonl");
        CliRun r = CliRun.run("report", good.toString(), missing.toString());
        assertEquals(1, r.exit(), r.err());
        assertEquals("nccl-tuner report: " + missing + ": no such file\n", r.err());
    }

    /** Missing --trace and --nccl-log files: each named before the harness runs. */
    @Test
    void tryNamesEveryMissingInput() throws Exception {
        Path t1 = tmp.resolve("missing.csv");
        Path t2 = tmp.resolve("missing2.csv");
        Path l = tmp.resolve("missing.log");
        CliRun r = CliRun.tryRun(
                "--policy",
                CliRun.repoFile("policies/h200-2rank.yaml"),
                "--trace",
                t1.toString(),
                "--trace",
                t2.toString(),
                "--nccl-log",
                l.toString());
        assertEquals(1, r.exit(), r.err());
        assertEquals("", r.out());
        assertEquals(
                "nccl-tuner try: " + t1 + ": no such file\n"
                        + "nccl-tuner try: " + t2 + ": no such file\n"
                        + "nccl-tuner try: " + l + ": no such file\n"
                        + "nccl-tuner try: 3 of 3 inputs refused (each on its line above); nothing tried\n",
                r.err());
    }

    /** Two traces the harness refuses: both named, the harness's line once each, exit 1. */
    @Test
    void tryNamesEveryTraceTheHarnessRefusesOnce() throws Exception {
        Path t1 = CliRun.write(tmp, "t1.csv", BROKEN_TRACE);
        Path t2 = CliRun.write(tmp, "t2.csv", "init,0,2,2\ninit,1,2\n");
        CliRun r = CliRun.tryRun(
                "--policy",
                CliRun.repoFile("policies/h200-2rank.yaml"),
                "--trace",
                t1.toString(),
                "--trace",
                t2.toString());
        assertEquals(1, r.exit(), r.out() + r.err());
        assertEquals(
                "nccl-tuner try: " + t1 + ":2: get needs 10 fields before the costs\n"
                        + "nccl-tuner try: " + t2 + ":2: init needs at least 4 fields\n"
                        + "nccl-tuner try: 2 of 2 inputs refused (each on its line above); no report\n",
                r.err());
        assertFalse(r.out().contains("fields"), r.out());
        assertTrue(r.out().contains("== " + t1 + "\n== " + t2 + "\n"), r.out());
    }

    /** One trace the harness refuses: its line once, as TRACE:LINE, exit 1. */
    @Test
    void tryPrintsTheHarnessLineOnce() throws Exception {
        Path t1 = CliRun.write(tmp, "t1.csv", BROKEN_TRACE);
        CliRun r = CliRun.tryRun("--policy", CliRun.repoFile("policies/h200-2rank.yaml"), "--trace", t1.toString());
        assertEquals(1, r.exit(), r.out() + r.err());
        assertEquals("nccl-tuner try: " + t1 + ":2: get needs 10 fields before the costs\n", r.err());
        assertFalse(r.out().contains("get needs 10 fields"), r.out());
    }

    // ---- 2. --nccl-log of another shape, and its NCCL version ----------------------------------

    /** An A100 log of nRanks 2 nNodes 1 on a 2-node trace: one warning; NCCL 2.27.7 is presented. */
    @Test
    void tryWarnsOfALogOfAnotherShapeAndPresentsItsVersion() throws Exception {
        Path log = CliRun.write(tmp, "a100.log", A100_LOG);
        String trace = CliRun.trace("trace_ddp.csv");
        CliRun r = CliRun.tryRun(
                "--policy",
                CliRun.repoFile("policies/h200-2rank.yaml"),
                "--trace",
                trace,
                "--nccl-log",
                log.toString());
        assertEquals(0, r.exit(), r.out() + r.err());
        assertEquals(
                "nccl-tuner try: warning: --nccl-log " + log + " ran nRanks=2 nNodes=1, the traces nRanks=2 nNodes=2:"
                        + " the GPU and NCCL version it names, presented to the plugin, are another job's; give the"
                        + " traces' own job's log, or --gpu NAME and --nccl-version V\n",
                r.err());
        assertTrue(
                r.out()
                        .contains("try: the replay presents GPU NVIDIA A100 80GB PCIe (cc 8.0, named by --nccl-log "
                                + log + ") and NCCL 2.27.7 (named by --nccl-log " + log + ") to the plugin"),
                r.out());
        assertTrue(r.out().startsWith("try: policy "), r.out());
        assertTrue(r.out().lines().findFirst().orElseThrow().contains(", NCCL 2.24, plugin "), r.out());
    }

    /** A log of the traces' shape: no warning. */
    @Test
    void tryDoesNotWarnOfALogOfTheTracesShape() throws Exception {
        Path log = CliRun.write(tmp, "a100.log", A100_LOG.replace("nNodes 1", "nNodes 2"));
        CliRun r = CliRun.tryRun(
                "--policy",
                CliRun.repoFile("policies/h200-2rank.yaml"),
                "--trace",
                CliRun.trace("trace_ddp.csv"),
                "--nccl-log",
                log.toString());
        assertEquals(0, r.exit(), r.out() + r.err());
        assertEquals("", r.err());
    }

    /** With --nccl-era given, the log's release of another era still warns and is not presented. */
    @Test
    void tryWithTheEraGivenKeepsItAndWarns() throws Exception {
        Path log = CliRun.write(tmp, "a100.log", A100_LOG.replace("nNodes 1", "nNodes 2"));
        CliRun r = CliRun.tryRun(
                "--policy",
                CliRun.repoFile("policies/h200-2rank.yaml"),
                "--trace",
                CliRun.trace("trace_ddp.csv"),
                "--nccl-log",
                log.toString(),
                "--nccl-era",
                "2.28");
        assertEquals(0, r.exit(), r.out() + r.err());
        assertEquals(
                "nccl-tuner try: warning: --nccl-log " + log + ": NCCL 2.27.7 ran there (tuner v4), but the plugin is"
                        + " tried as NCCL 2.28 calls it (tuner v5); give --nccl-era 2.24 to try it as that release\n",
                r.err());
        assertTrue(r.out().contains(" and NCCL 2.28.9 (--nccl-era 2.28's release) to the plugin"), r.out());
    }

    // ---- 3. the singular for one --------------------------------------------------------------

    /** One log of one communicator: "1 log, 1 communicator", "1 comm"; the page's header too. */
    @Test
    void reportSaysOneCommAndOneDecisionLog() throws Exception {
        Path a = CliRun.write(tmp, "a.jsonl", LOG);
        Path html = tmp.resolve("r.html");
        CliRun r = CliRun.run("report", a.toString(), "--html", html.toString());
        assertEquals(0, r.exit(), r.err());
        List<String> lines = r.out().lines().toList();
        assertEquals("policy p: 1 log, 1 communicator", lines.get(0), r.out());
        assertEquals(
                "  rank vm:13671 (" + a + "): 1 comm, mode shadow, sha256 aaaaaa...aaa, calls 10, rule hits 10,"
                        + " applied 0",
                lines.get(1));
        assertTrue(
                Files.readString(html)
                        .contains(
                                "<p>1 decision log (rank), 1 communicator. Report of <code>nccl-tuner report</code>."),
                Files.readString(html));
    }

    /** Two logs: the plural stays. */
    @Test
    void reportPageSaysDecisionLogsForTwo() throws Exception {
        Path a = CliRun.write(tmp, "a.jsonl", LOG);
        Path b = CliRun.write(tmp, "b.jsonl", LOG.replace("13671", "13672"));
        Path html = tmp.resolve("r.html");
        CliRun r = CliRun.run("report", a.toString(), b.toString(), "--html", html.toString());
        assertEquals(0, r.exit(), r.err());
        assertTrue(
                Files.readString(html).contains("<p>2 decision logs (ranks), 2 communicators. Report of"),
                Files.readString(html));
        assertTrue(r.out().contains("): 1 comm, mode shadow"), r.out());
    }

    /** --emit-policy over one log without a measured line: "the 1 log has no"; over two: "none of the 2 logs". */
    @Test
    void emitPolicySaysOneLog() throws Exception {
        Path a = CliRun.write(tmp, "a.jsonl", LOG);
        Path out = tmp.resolve("promoted.yaml");
        CliRun r = CliRun.run(
                "report",
                a.toString(),
                "--policy",
                CliRun.repoFile("policies/h200-2rank.yaml"),
                "--emit-policy",
                out.toString());
        assertEquals(1, r.exit(), r.err());
        assertTrue(
                r.err().startsWith("nccl-tuner report: --emit-policy: the 1 log has no `measured` line: they are"),
                r.err());
        assertEquals(
                "--emit-policy: none of the 2 logs has a `measured` line: they",
                ReportCommand.noMeasuredLines(2, out).substring(0, 61));
    }

    // ---- 4. the constants line ----------------------------------------------------------------

    /** The constants line's parenthesis says what the harness starts from (NCCL 2.30.7's baseLatencies). */
    @Test
    void constantsLineSaysWhatTheHarnessStartsFrom() {
        assertEquals(
                "INFO TUNER/Java: profile p: set 3 constants: baseLatencies.RING.LL 6.6 -> 5.0 us (before: the"
                        + " harness's constants, NCCL 2.30.7's baseLatencies and 0 for every other constant; a job's"
                        + " NCCL starts from its own, not known here)",
                TryCommand.relayed(
                        "INFO TUNER/Java: profile p: set 3 constants: baseLatencies.RING.LL 6.6 -> 5.0 us", "shadow"));
    }
}
