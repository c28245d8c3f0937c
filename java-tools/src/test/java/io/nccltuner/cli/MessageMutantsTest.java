package io.nccltuner.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Tests written for the mutants of a mutation run over the user-facing messages (ShadowReport,
 * UnchangedHits, TryCommand, InputFiles, CostTableLogs, NcclTestsLog) that the suite did not
 * catch: each asserts the exact count, plural, reason or file:line a user is told.
 */
class MessageMutantsTest {
    @TempDir
    Path tmp;

    static final String SHA = "a".repeat(64);

    /** A comm line of a decision log (nRanks=2 nNodes=2, one job-wide communicator). */
    static String comm(long comm, long pid, String mode, long ruleHits, long applied, long unaggregated) {
        return "{\"type\":\"comm\",\"comm\":" + comm + ",\"host\":\"h\",\"pid\":" + pid + ",\"sha256\":\"" + SHA
                + "\",\"nRanks\":2,\"nNodes\":2,\"policy\":\"p\",\"profile\":\"nRanks2-nNodes2\",\"mode\":\"" + mode
                + "\",\"calls\":" + ruleHits + ",\"ruleHits\":" + ruleHits + ",\"applied\":" + applied
                + ",\"unaggregated\":" + unaggregated + ",\"at\":\"destroy\",\"commScope\":\"job\"}\n";
    }

    /** An aggregate line of a decision log. */
    static String aggregate(
            long comm, long pid, String collective, long nBytes, String nccl, String policy, int channels, long count) {
        return "{\"type\":\"aggregate\",\"comm\":" + comm + ",\"host\":\"h\",\"pid\":" + pid + ",\"sha256\":\"" + SHA
                + "\",\"nRanks\":2,\"nNodes\":2,\"collective\":\"" + collective + "\",\"nBytes\":" + nBytes
                + ",\"toBytes\":" + (nBytes + nBytes / 4) + ",\"ncclPick\":\"" + nccl + "\",\"policyPick\":\"" + policy
                + "\",\"channels\":" + channels + ",\"count\":" + count + "}\n";
    }

    private Path log(String name, String text) throws Exception {
        return CliRun.write(tmp, name, text);
    }

    // ---- ShadowReport -------------------------------------------------------------------------

    /**
     * Two ranks' logs of one job-wide communicator: "2 logs, 1 communicator" (the plural is the
     * communicators', the count deduplicated by commId), and the rank line has no "hits not broken
     * down" when none are.
     */
    @Test
    void reportCountsOneCommunicatorOverTwoRanksLogs() throws Exception {
        Path a = log(
                "a.jsonl",
                comm(7, 1, "shadow", 10, 0, 0) + aggregate(7, 1, "AllReduce", 4, "RING/LL", "RING/SIMPLE", 0, 10));
        Path b = log(
                "b.jsonl",
                comm(7, 2, "shadow", 10, 0, 0) + aggregate(7, 2, "AllReduce", 4, "RING/LL", "RING/SIMPLE", 0, 10));
        CliRun r = CliRun.run("report", a.toString(), b.toString());
        assertEquals(0, r.exit(), r.err());
        List<String> lines = r.out().lines().toList();
        assertEquals("policy p: 2 logs, 1 communicator", lines.get(0), r.out());
        assertEquals(
                "  rank h:1 (" + a + "): 1 comm, mode shadow, sha256 aaaaaa...aaa, calls 10, rule hits 10, applied 0",
                lines.get(1),
                r.out());
    }

    /** A log whose comm line counts hits not broken down says how many, and only then. */
    @Test
    void reportSaysHitsNotBrokenDownOnlyWhenThereAreSome() throws Exception {
        Path a = log(
                "a.jsonl",
                comm(7, 1, "shadow", 12, 0, 2) + aggregate(7, 1, "AllReduce", 4, "RING/LL", "RING/SIMPLE", 0, 10));
        CliRun r = CliRun.run("report", a.toString());
        assertEquals(0, r.exit(), r.err());
        assertEquals(
                "  rank h:1 (" + a + "): 1 comm, mode shadow, sha256 aaaaaa...aaa, calls 12, rule hits 12, applied 0,"
                        + " 2 hits not broken down",
                r.out().lines().toList().get(1),
                r.out());
    }

    /** One rule hit, not priced: "0 of 1 rule hit priced" (the plural is the rule hits'). */
    @Test
    void noPricedCallsOfOneRuleHitIsSingular() throws Exception {
        Path a = log(
                "a.jsonl",
                comm(7, 1, "shadow", 1, 0, 0) + aggregate(7, 1, "AllReduce", 4, "RING/LL", "RING/SIMPLE", 0, 1));
        Path csv = tmp.resolve("sweep-8x1.csv");
        String text = Files.readString(Path.of(CliRun.fixture("h200-2rank-sweep_allreduce.rep1.csv")));
        Files.writeString(csv, text.replaceAll("(?m)^(AllReduce,\\d+,[^,]+,[^,]+,[^,]+),2,2,", "$1,8,1,"));
        CliRun r = CliRun.run("report", a.toString(), "--measurements", csv.toString());
        assertEquals(0, r.exit(), r.err());
        assertTrue(
                r.out().contains("\nexpected saving: no priced calls (0 of 1 rule hit priced), so no saving to show\n"),
                r.out());
    }

    /** Some rule hits priced, others not: the saving per rule hit is over the priced ones. */
    @Test
    void savingPerRuleHitIsOverThePricedHits() throws Exception {
        Path a = log(
                "a.jsonl",
                comm(7, 1, "shadow", 30, 0, 0)
                        + aggregate(7, 1, "AllReduce", 4, "RING/LL", "RING/SIMPLE", 0, 10)
                        + aggregate(7, 1, "AllGather", 4, "RING/LL", "RING/SIMPLE", 0, 20));
        CliRun r = CliRun.run(
                "report", a.toString(), "--measurements", CliRun.fixture("h200-2rank-sweep_allreduce.rep1.csv"));
        assertEquals(0, r.exit(), r.err());
        Matcher m = Pattern.compile("expected saving: (-?[0-9.]+) us, .* over the (\\d+) of (\\d+) rule hits priced\\);"
                        + " (-?[0-9.]+) us per rule hit")
                .matcher(r.out());
        assertTrue(m.find(), r.out());
        assertEquals("10", m.group(2), r.out());
        assertEquals("30", m.group(3), r.out());
        double saved = Double.parseDouble(m.group(1));
        assertEquals(saved / 10, Double.parseDouble(m.group(4)), 0.11, r.out());
    }

    // ---- InputFiles.readMeasurementsAt -------------------------------------------------------

    /** A folder of a good file, a refused one, an empty one and a failed run's output. */
    private Path mixedFolder() throws Exception {
        Path dir = Files.createDirectories(tmp.resolve("m"));
        Files.copy(Path.of(CliRun.fixture("h200-2rank-sweep_allreduce.rep1.csv")), dir.resolve("good.csv"));
        Files.writeString(dir.resolve("bad.csv"), "hello,world\n1,2\n");
        Files.writeString(dir.resolve("empty.txt"), "");
        Files.writeString(dir.resolve("x.failed.txt"), "");
        return dir;
    }

    /**
     * A folder's files one by one: each skipped file noted (an empty failed run's output as a
     * failed run), the refused one warned of, and "read 1 of 4 measurement files (1 refused, 2
     * skipped)".
     */
    @Test
    void folderNoteCountsReadRefusedAndSkippedFiles() throws Exception {
        Path dir = mixedFolder();
        CliRun r = CliRun.run("report", ReportCommandTest.res("price-64k.jsonl"), "--measurements", dir.toString());
        assertEquals(0, r.exit(), r.err());
        List<String> err = r.err().lines().toList();
        assertEquals(4, err.size(), r.err());
        assertEquals(
                "note: " + dir.resolve("empty.txt") + ": skipped: empty (0 bytes), as an interrupted run leaves its"
                        + " output; nothing to read",
                err.get(0));
        assertEquals(
                "note: " + dir.resolve("x.failed.txt") + ": skipped: a failed or interrupted `nccl-tuner sweep` run's"
                        + " output (0 bytes); its runs are not measurements (run the sweep again to retry them)",
                err.get(1));
        assertTrue(err.get(2).startsWith("warning: " + dir.resolve("bad.csv") + ":"), err.get(2));
        assertTrue(err.get(2).endsWith("; file skipped, the folder's other files are read"), err.get(2));
        assertEquals("note: " + dir + ": read 1 of 4 measurement files (1 refused, 2 skipped)", err.get(3));
    }

    /** A folder of nothing but skipped files names them; one of no measurement file at all says so. */
    @Test
    void emptyFolderSaysWhetherItSkippedAnything() throws Exception {
        Path dir = Files.createDirectories(tmp.resolve("e"));
        Files.writeString(dir.resolve("empty.txt"), "");
        CliRun r = CliRun.run("report", ReportCommandTest.res("price-64k.jsonl"), "--measurements", dir.toString());
        assertTrue(r.err().contains(dir + ": no measurement file in this folder but the skipped empty.txt"), r.err());
        Path none = Files.createDirectories(tmp.resolve("n"));
        CliRun n = CliRun.run("report", ReportCommandTest.res("price-64k.jsonl"), "--measurements", none.toString());
        assertTrue(n.err().contains(none + ": no *.csv or *.txt measurement files in this folder"), n.err());
    }

    // ---- UnchangedHits -----------------------------------------------------------------------

    static final String NOT_OFFERED =
            "candidate not offered (NCCL's cost table has -1 for each of the rule's candidates)";

    /**
     * One rank's communicator: 17 rule hits, 2 of them not broken down, 10 changed, 1 already NCCL's
     * pick, 2 NCCL's pick with a channel count (those change something); so 2 not offered.
     */
    static String rank(long pid, String mode, long applied) {
        return comm(7, pid, mode, 17, applied, 2)
                + aggregate(7, pid, "AllReduce", 4, "RING/LL", "RING/SIMPLE", 0, 10)
                + aggregate(7, pid, "AllReduce", 16384, "RING/LL", "RING/LL", 0, 1)
                + aggregate(7, pid, "AllReduce", 65536, "RING/SIMPLE", "RING/SIMPLE", 4, 2);
    }

    private String unchangedLine(Path... logs) {
        List<String> args = new java.util.ArrayList<>(List.of("report"));
        for (Path l : logs) {
            args.add(l.toString());
        }
        CliRun r = CliRun.run(args.toArray(String[]::new));
        assertEquals(0, r.exit(), r.err());
        return r.out().lines().filter(l -> l.contains(" nothing: ")).findFirst().orElse(null);
    }

    /** Not offered = rule hits - the aggregates' counts - the hits not broken down; a channel count changes something. */
    @Test
    void unchangedHitsLeaveOutUnaggregatedAndChannelHits() throws Exception {
        assertEquals(
                "3 rule hits would change nothing: " + NOT_OFFERED + " 2, already NCCL's pick 1",
                unchangedLine(log("a.jsonl", rank(1, "shadow", 0))));
    }

    /** Enforce: 15 applied = the 13 offered and 2 unaggregated hits, not a cut log: counted, "changed nothing". */
    @Test
    void unchangedHitsOfAnEnforceLogWhoseAppliedEqualsItsOfferedHits() throws Exception {
        assertEquals(
                "3 rule hits changed nothing: " + NOT_OFFERED + " 2, already NCCL's pick 1",
                unchangedLine(log("a.jsonl", rank(1, "enforce", 15))));
    }

    /** Two ranks of one communicator (the same commId): each rank's aggregates count against its own comm line. */
    @Test
    void unchangedHitsOfTwoRanksOfOneCommunicator() throws Exception {
        assertEquals(
                "6 rule hits would change nothing: " + NOT_OFFERED + " 4, already NCCL's pick 2",
                unchangedLine(log("a.jsonl", rank(1, "shadow", 0)), log("b.jsonl", rank(2, "shadow", 0))));
    }

    /** One rank in enforce mode, the last in shadow: something was written, so "changed nothing". */
    @Test
    void unchangedHitsSayWouldOnlyWhenEveryRankIsShadow() throws Exception {
        assertEquals(
                "6 rule hits changed nothing: " + NOT_OFFERED + " 4, already NCCL's pick 2",
                unchangedLine(log("a.jsonl", rank(1, "enforce", 15)), log("b.jsonl", rank(2, "shadow", 0))));
    }

    /** Canary: the offered hits left to NCCL are on NCCL's arm; none counts as already NCCL's pick. */
    @Test
    void canaryHitsAreOnNcclsArmNotAlreadyItsPick() throws Exception {
        assertEquals(
                "9 rule hits changed nothing: " + NOT_OFFERED + " 2, on NCCL's arm (canary) 7",
                unchangedLine(log("a.jsonl", rank(1, "canary", 6))));
    }

    // ---- CostTableLogs -----------------------------------------------------------------------

    /** NewcomerFifthWalkTest's nccl-tests log with NCCL's INFO lines, without its '# Rank' lines. */
    static String bareLog() {
        return NewcomerFifthWalkTest.TESTS_INFO_LOG.replaceAll("(?m)^#  Rank .*\n", "");
    }

    /** Each log's shape is inferred from its own lines: a second log without '# Rank' lines is refused. */
    @Test
    void eachNcclLogsShapeIsInferredFromItsOwnLines() throws Exception {
        Path log = CliRun.write(tmp, "tests-info.log", NewcomerFifthWalkTest.TESTS_INFO_LOG);
        Path bare = CliRun.write(tmp, "bare.log", bareLog());
        Path policy = CliRun.write(tmp, "ll128.yaml", NewcomerFifthWalkTest.LL128_FIRST);
        CliRun r = CliRun.run("show", policy.toString(), "--nccl-log", log.toString(), "--nccl-log", bare.toString());
        assertEquals(1, r.exit(), r.out());
        assertTrue(
                r.err()
                        .startsWith("nccl-tuner show: " + bare + ":5: table 1 (host hostA, pid 4001): the log gives no"
                                + " nRanks or nNodes for this table"),
                r.err());
    }

    /** A log that tells nRanks (ncclCommInitRank's nranks) but not nNodes: it names nNodes as what it lacks. */
    @Test
    void aLogThatTellsOnlyNranksIsRefusedForNnodes() throws Exception {
        String bare = bareLog();
        String p = "hostA:4001:4001 [0] NCCL INFO ";
        bare = bare.replaceFirst(
                "(?m)^(" + Pattern.quote(p) + "NCCL version .*\n)",
                "$1"
                        + Matcher.quoteReplacement(
                                p
                                        + "ncclCommInitRank comm 0x5a0 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 17000 commId 0x1 - Init START\n"));
        Path log = CliRun.write(tmp, "ranks.log", bare);
        Path policy = CliRun.write(tmp, "ll128.yaml", NewcomerFifthWalkTest.LL128_FIRST);
        CliRun r = CliRun.run("show", policy.toString(), "--nccl-log", log.toString());
        assertEquals(1, r.exit(), r.out());
        assertTrue(
                r.err()
                        .startsWith(
                                "nccl-tuner show: " + log + ":6: comm 0x5a0 (host hostA, pid 4001): the log gives no"
                                        + " nNodes for this table: no 'comm ... nRanks N nNodes M' line"),
                r.err());
    }

    /** A log whose INIT lines give each table's shape is read without inferring anything. */
    @Test
    void aLogWithInitLinesIsReadWithoutInferring() {
        CliRun r = CliRun.run(
                "show", NewcomerPathTest.MEASURED_POLICY, "--nccl-log", CliRun.trace("nccl_sweep.rank0.log"));
        assertEquals(0, r.exit(), r.err());
        assertTrue(!r.out().contains("has no 'comm ... nRanks N nNodes M' line"), r.out());
    }

    // ---- TryCommand --------------------------------------------------------------------------

    /** A policy for the tp_infer trace whose one rule hit (RING/LL128 at 4 B) NCCL's table never offers. */
    static final String ONE_NOT_OFFERED = """
            schema: nccl-tuner-java/v1
            name: one-not-offered
            profiles:
              - name: nRanks2-nNodes2
                match: {nRanks: 2, nNodes: 2}
                rules:
                  - collective: AllReduce
                    bytes: {from: 4 B, to: 8 B}
                    candidates:
                      - {algorithm: RING, protocol: LL128}
            """;

    /** One group of not-offered hits: named without a count of calls ("at AllReduce 4 B", not ": 1 call"). */
    @Test
    void tryNamesOneNotOfferedGroupWithoutItsCallCount() throws Exception {
        Path policy = CliRun.write(tmp, "one.yaml", ONE_NOT_OFFERED);
        CliRun r = CliRun.tryRun("--policy", policy.toString(), "--trace", CliRun.trace("trace_tp_infer.csv"));
        assertEquals(0, r.exit(), r.err() + r.out());
        assertEquals(
                "try: the policy would change 0 of 273 calls (rule hits 1; changed: where its pick differs from NCCL's);"
                        + " 1 rule hit would change nothing: candidate not offered (RING/LL128 is -1 in NCCL's table at"
                        + " AllReduce 4 B) 1; the policy changes nothing for these traces; check the shapes and sizes"
                        + " it covers with `nccl-tuner show " + policy + "`",
                r.out().lines().toList().getLast());
    }

    /** NewcomerFifthWalkTest's log (with '# Rank' lines) and an ncclCommInitRank line of {@code nranks}. */
    static String initRankLog(int nranks) {
        String p = "hostA:4001:4001 [0] NCCL INFO ";
        return NewcomerFifthWalkTest.TESTS_INFO_LOG.replaceFirst(
                "(?m)^(" + Pattern.quote(p) + "NCCL version .*\\n)",
                "$1"
                        + Matcher.quoteReplacement(p + "ncclCommInitRank comm 0x5a0 rank 0 nranks " + nranks
                                + " cudaDev 0 nvmlDev 0 busId 17000 commId 0x1 - Init START\n"));
    }

    /** A table whose nRanks the log gives (ncclCommInitRank) says only what it inferred: nNodes. */
    @Test
    void onlyTheInferredCountIsTold() throws Exception {
        Path policy = CliRun.write(tmp, "ll128.yaml", NewcomerFifthWalkTest.LL128_FIRST);
        Path log = CliRun.write(tmp, "init.log", initRankLog(2));
        CliRun r = CliRun.run("show", policy.toString(), "--nccl-log", log.toString());
        assertEquals(0, r.exit(), r.err());
        assertEquals(
                "--nccl-log " + log + ": comm 0x5a0 (host hostA, pid 4001) has no 'comm ... nRanks N nNodes M' line:"
                        + " nNodes 2 inferred from the host names of the '# Rank' lines (line 4); hosts of one NVLink"
                        + " domain (MNNVL) are one node to NCCL (as explain infers them)",
                r.out().lines().findFirst().orElse(""));
    }

    /** A forced run's log: a warning (prefixed as show's) and nothing inferred from its tables. */
    @Test
    void aForcedRunsLogIsWarnedOfAndNotInferred() throws Exception {
        Path policy = CliRun.write(tmp, "ll128.yaml", NewcomerFifthWalkTest.LL128_FIRST);
        String p = "hostA:4001:4001 [0] NCCL INFO ";
        Path log = CliRun.write(
                tmp,
                "forced.log",
                NewcomerFifthWalkTest.TESTS_INFO_LOG.replaceFirst(
                        "(?m)^(" + Pattern.quote(p) + "NCCL version .*\\n)",
                        "$1" + Matcher.quoteReplacement(p + "NCCL_ALGO set by environment to Ring\n")));
        CliRun r = CliRun.run("show", policy.toString(), "--nccl-log", log.toString());
        assertEquals(0, r.exit(), r.err());
        assertEquals(
                "nccl-tuner show: warning: " + log + ": NCCL_ALGO set by environment to Ring: its cost table shows the"
                        + " forcing, not what NCCL offers an unforced run; not used to tell which candidates NCCL"
                        + " offers\n",
                r.err());
        assertTrue(!r.out().contains("(as explain infers them)"), r.out());
    }

    // ---- NcclTestsLog ------------------------------------------------------------------------

    static final String STRAY =
            "look like a size-table row (size, count, type, ...) but stand where no table is open (before a '#  size  count  type ...' column header, or after the table's '# Out of bounds' / '# Avg bus bandwidth' footer): not read";

    static final String ROW =
            "     8388608       2097152     float     sum      -1    90.00   93.21   93.21      0    90.00   93.21   93.21      0";

    /** Stray rows before the first run and after the last one's footer: counted together, from the first one's line. */
    @Test
    void strayRowsAreCountedFromTheFirst() throws Exception {
        String run = Files.readString(Path.of(CliRun.fixture("plain-all_reduce_ring_ll.txt")));
        Path f = CliRun.write(tmp, "stray_all_reduce.txt", ROW + "\n" + run + ROW + "\n" + ROW + "\n");
        CliRun r = CliRun.run("compile", f.toString(), "--summary");
        assertEquals(0, r.exit(), r.err());
        assertTrue(r.out().contains("\n  " + f + ":1: 3 lines (from line 1) " + STRAY + "\n"), r.out());
    }

    /** One stray row: "1 line looks ... stands". */
    @Test
    void oneStrayRowIsSingular() throws Exception {
        String run = Files.readString(Path.of(CliRun.fixture("plain-all_reduce_ring_ll.txt")));
        Path f = CliRun.write(tmp, "stray1_all_reduce.txt", run + ROW + "\n");
        CliRun r = CliRun.run("compile", f.toString(), "--summary");
        assertEquals(0, r.exit(), r.err());
        assertTrue(
                r.out()
                        .contains("\n  " + f + ":14: 1 line looks like a size-table row (size, count, type, ...) but"
                                + " stands where no table is open "),
                r.out());
    }

    /** Lines behind a Ray prefix alone are counted as launcher-prefixed; an unknown prefix is warned of at its line. */
    @Test
    void rayPrefixedLinesAreCountedAndAnUnknownPrefixIsNamedAtItsLine() throws Exception {
        List<String> run = Files.readAllLines(Path.of(CliRun.fixture("plain-all_reduce_ring_ll.txt")));
        StringBuilder ray = new StringBuilder();
        for (String l : run) {
            ray.append("(RayTrainWorker pid=3808) ").append(l).append('\n');
        }
        Path f = CliRun.write(tmp, "ray_all_reduce.txt", ray.toString());
        CliRun r = CliRun.run("compile", f.toString(), "--summary");
        assertEquals(0, r.exit(), r.err());
        assertTrue(
                r.out()
                        .contains("\n  " + f + ": 13 lines carry a launcher prefix (Ray '(head, rank=0, pid=3808)'); "
                                + "read without it\n"),
                r.out());
        StringBuilder odd = new StringBuilder();
        for (int i = 0; i < run.size(); i++) {
            odd.append(i >= 5 ? "<<w1>> " : "").append(run.get(i)).append('\n');
        }
        odd.append(String.join("\n", run)).append('\n');
        Path g = CliRun.write(tmp, "odd_all_reduce.txt", odd.toString());
        CliRun o = CliRun.run("compile", g.toString(), "--summary");
        assertEquals(0, o.exit(), o.err());
        assertTrue(
                o.out()
                        .contains("\n  " + g + ":7: nccl-tests output behind a prefix this parser does not know"
                                + " ('<<w1>>'): such lines are not read; "),
                o.out());
    }

    /** Every run skipped (the file name says alltoall): refused at the first run's line, the others counted. */
    @Test
    void aFileWhoseRunsAreAllSkippedIsRefusedAtTheFirst() throws Exception {
        String run = Files.readString(Path.of(CliRun.fixture("plain-all_reduce_ring_ll.txt")));
        Path f = CliRun.write(tmp, "x_alltoall.txt", run + run + run);
        CliRun r = CliRun.run("compile", f.toString());
        assertEquals(1, r.exit(), r.out());
        assertTrue(
                r.err()
                        .startsWith("nccl-tuner compile: " + f + ":7: the file name says alltoall; alltoall is not a"
                                + " collective NCCL asks a tuner about"),
                r.err());
        assertTrue(
                r.err().endsWith(" (and the file's other 2 runs likewise): nothing in this file can become a rule\n"),
                r.err());
    }
}
