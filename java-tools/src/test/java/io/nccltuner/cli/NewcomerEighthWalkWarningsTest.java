package io.nccltuner.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The eighth newcomer walkthrough's warnings in the input parsers and the commands other than
 * compile: regBuff warnings said once per CSV line (now folded into one with the count and the first
 * lines), the CSV's warnings said once a run by import, replay, explain and show, and "the file's
 * other 1 runs" of a file whose every run is skipped.
 */
class NewcomerEighthWalkWarningsTest {
    @TempDir
    Path tmp;

    /** What regBuff 1 lines draw, after where (with the clause validate's YAML warning has too). */
    private static final String REG1 = "regBuff 1: kept as regBuff true rules, which match from NCCL 2.24 (tuner v4);"
            + " a v3 NCCL does not say whether a buffer is registered and they never match there, nor in try, replay"
            + " or explain, which call with regBuff 0";
    /** What a regBuff 0 line draws, after where. */
    private static final String REG0 = "regBuff 0: kept as regBuff false rules, which match from NCCL 2.24 (tuner v4);"
            + " a v3 NCCL does not say whether a buffer is registered and they never match there";

    /**
     * A CSV of a comment line, then 40 AllReduce lines of regBuff 1 (lines 2..41, byte ranges on the
     * size grid, [2^k, 2^(k+1)) for k = 10..49, so they draw nothing else; all RING/SIMPLE, one rule
     * [1 KiB, 1 PiB)), then one AllGather line of regBuff 0 (line 42).
     */
    private Path fortyLines() throws Exception {
        StringBuilder csv = new StringBuilder("# forty regBuff 1 lines and one regBuff 0 line\n");
        for (int k = 10; k < 50; k++) {
            csv.append("allreduce,")
                    .append(1L << k)
                    .append(',')
                    .append((1L << (k + 1)) - 1)
                    .append(",ring,simple,-1,-1,-1,-1,1\n");
        }
        csv.append("allgather,0,65535,ring,ll,-1,-1,-1,-1,0\n");
        return CliRun.write(tmp, "forty.conf", csv.toString());
    }

    /** The two warnings of {@link #fortyLines}: the 40 folded, the one in file:line form. */
    private static String fortyWarnings(Path f, String indent) {
        return indent + "warning: " + f + ": 40 lines (2, 3, 4, ...): " + REG1 + "\n" + indent + "warning: " + f
                + ":42: " + REG0 + "\n";
    }

    /** Item 1: validate says the 40 lines' regBuff warning once, with the count and the first 3 lines. */
    @Test
    void validateFoldsFortyRegBuffWarningsIntoOne() throws Exception {
        Path f = fortyLines();
        CliRun r = CliRun.run("validate", f.toString());
        assertEquals(0, r.exit(), r.out() + r.err());
        assertEquals("", r.err());
        String o = r.out();
        assertEquals(
                f + ": NCCL example-tuner CSV (read as the plugin reads NCCL_TUNER_CONFIG_FILE), 2 warnings:\n"
                        + fortyWarnings(f, "  "),
                o.substring(0, o.indexOf("\n", o.indexOf(":42: ")) + 1));
        assertEquals(
                "result: OK (0 errors, 2 warnings: 2 from reading the CSV, 0 of the policy)\n",
                o.substring(o.lastIndexOf("result: ")));
    }

    /** Item 1: two lines of one warning fold too, naming both lines without "..."; one keeps file:line. */
    @Test
    void twoLinesFoldWithoutEllipsisAndOneKeepsItsLine() throws Exception {
        Path f = CliRun.write(
                tmp,
                "two.conf",
                "allreduce,0,65535,ring,ll,-1,-1,-1,-1,1\nallreduce,65536,131071,ring,simple,-1,-1,-1,-1,1\n"
                        + "allgather,0,65535,ring,ll,-1,-1,-1,-1,0\n");
        CliRun r = CliRun.run("show", f.toString(), "--nodes", "1", "--ranks-per-node", "8");
        assertEquals(0, r.exit(), r.err());
        assertEquals("warning: " + f + ": 2 lines (1, 2): " + REG1 + "\nwarning: " + f + ":3: " + REG0 + "\n", r.err());
    }

    /** Item 1 and 2: import says the folded block once on stderr, and counts the 2 warnings it printed. */
    @Test
    void importSaysTheCsvWarningsOnce() throws Exception {
        Path f = fortyLines();
        CliRun toStdout = CliRun.run("import", f.toString());
        assertEquals(0, toStdout.exit(), toStdout.err());
        assertEquals(
                fortyWarnings(f, "") + ToolCommand.modeLine(io.nccltuner.policy.Mode.SHADOW, "import") + "\n",
                toStdout.err()); // the policy alone on stdout: import's mode line goes to stderr
        assertFalse(toStdout.out().contains("warning"), toStdout.out());
        Path yaml = tmp.resolve("forty.yaml");
        CliRun written = CliRun.run("import", f.toString(), "-o", yaml.toString());
        assertEquals(0, written.exit(), written.err());
        assertEquals(fortyWarnings(f, ""), written.err());
        assertEquals(
                "policy: " + yaml + " (1 profile, 2 rules, 2 warnings)\n",
                written.out().substring(0, written.out().indexOf('\n') + 1));
        assertFalse(written.out().contains("warning:"), written.out());
    }

    /** Item 2: replay --policy CSV says each of the CSV's warnings once, on stderr only. */
    @Test
    void replaySaysTheCsvWarningsOnce() throws Exception {
        Path f = fortyLines();
        CliRun r = CliRun.run("replay", "--trace", CliRun.trace("trace_ddp.csv"), "--policy", f.toString());
        assertEquals(0, r.exit(), r.err());
        assertEquals(fortyWarnings(f, ""), r.err());
        assertFalse(r.out().contains("warning"), r.out());
    }

    /** Item 2: explain --policy CSV says each of the CSV's warnings once, on stderr only. */
    @Test
    void explainSaysTheCsvWarningsOnce() throws Exception {
        Path f = fortyLines();
        CliRun r = CliRun.run("explain", "--log", CliRun.trace("nccl_ddp.rank0.log"), "--policy", f.toString());
        assertEquals(0, r.exit(), r.err());
        assertEquals(fortyWarnings(f, ""), r.err());
        assertFalse(r.out().contains("warning"), r.out());
    }

    /** Item 2: show of a CSV says each of the CSV's warnings once, on stderr only. */
    @Test
    void showSaysTheCsvWarningsOnce() throws Exception {
        Path f = fortyLines();
        CliRun r = CliRun.run("show", f.toString(), "--nodes", "1", "--ranks-per-node", "8");
        assertEquals(0, r.exit(), r.err());
        assertEquals(fortyWarnings(f, ""), r.err());
        assertFalse(r.out().contains("warning"), r.out());
    }

    /** The message of a file whose {@code n} runs are all skipped (its name says alltoall). */
    private CliRun allSkipped(String name, int n) throws Exception {
        String run = Files.readString(Path.of(CliRun.fixture("plain-all_reduce_ring_ll.txt")));
        Path f = CliRun.write(tmp, name, (run + "\n").repeat(n));
        return CliRun.run("compile", f.toString());
    }

    /** What compile says of {@code f}, whose runs are all skipped, but for the other runs' count. */
    private static String skipped(Path f, String others) {
        return "nccl-tuner compile: " + f + ":7: the file name says alltoall; alltoall is not a collective NCCL asks"
                + " a tuner about: NCCL calls getCollInfo only for Broadcast, Reduce, AllGather, ReduceScatter and"
                + " AllReduce (alltoall, sendrecv, gather and scatter run as point-to-point sends and receives, which"
                + " never reach a tuner)" + others + ": nothing in this file can become a rule\n";
    }

    /** Item 3: two runs all skipped: "the file's other run", not "the file's other 1 runs". */
    @Test
    void oneOtherSkippedRunIsARun() throws Exception {
        CliRun r = allSkipped("two_alltoall.txt", 2);
        assertEquals(1, r.exit(), r.out());
        assertEquals(skipped(tmp.resolve("two_alltoall.txt"), " (and the file's other run likewise)"), r.err());
    }

    /** Item 3: three runs all skipped: "the file's other 2 runs". */
    @Test
    void twoOtherSkippedRunsAreRuns() throws Exception {
        CliRun r = allSkipped("three_alltoall.txt", 3);
        assertEquals(1, r.exit(), r.out());
        assertEquals(skipped(tmp.resolve("three_alltoall.txt"), " (and the file's other 2 runs likewise)"), r.err());
    }

    /** Item 3: one run skipped says nothing of others. */
    @Test
    void aSingleSkippedRunNamesNoOthers() throws Exception {
        CliRun r = allSkipped("one_alltoall.txt", 1);
        assertEquals(1, r.exit(), r.out());
        assertEquals(skipped(tmp.resolve("one_alltoall.txt"), ""), r.err());
    }
    /**
     * An nccl-tests 2.18 all_reduce log (two sizes) with the given lines before its table: an echoed
     * command line, '# Rank' device lines, NCCL's ENV INFO lines.
     */
    private Path hostIdLog(String name, String... before) throws Exception {
        String table = String.join(
                "\n",
                "#",
                "#                                                              out-of-place                       in-place",
                "#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw"
                        + "   busbw  #wrong",
                "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)"
                        + "  (GB/s)",
                "     1048576        262144     float     sum      -1   610.20    1.72    1.72       0   605.10    1.73"
                        + "    1.73       0",
                "     2097152        524288     float     sum      -1  1190.40    1.76    1.76       0  1185.90    1.77"
                        + "    1.77       0",
                "# Out of bounds values : 0 OK",
                "# Avg bus bandwidth    : 1.74",
                "#",
                "# Collective test concluded: all_reduce_perf",
                "");
        String head = String.join(
                "\n",
                "# nccl-tests version 2.18.0 nccl-headers=22809 nccl-library=22809",
                "# Collective test starting: all_reduce_perf",
                "# nThread 1 nGpus 1 minBytes 1048576 maxBytes 2097152 step: 2(factor) warmup iters: 5 iters: 20 agg"
                        + " iters: 1 validation: 1 graph: 0",
                "#",
                "# Using devices",
                "");
        StringBuilder b = new StringBuilder();
        for (String l : before) {
            b.append(l).append('\n');
        }
        return CliRun.write(tmp, name, b.toString().replace("@HEAD@\n", head) + table);
    }

    private static final String ECHO =
            "$ mpirun -np 1 env NCCL_HOSTID=gpuhost0 ./build/all_reduce_perf -b 1M -e 2M -f 2"
                    + " -g 1 : -np 1 env NCCL_HOSTID=gpuhost1 ./build/all_reduce_perf -b 1M -e 2M -f 2 -g 1";

    private static String rank(int r, int pid, int dev) {
        return "#  Rank  " + r + " Group  0 Pid    " + pid + " on         vm device  " + dev
                + " [0000:18:00] NVIDIA H200";
    }

    /** What compile says where echoed NCCL_HOSTIDs are not one per rank, but for the rank count. */
    private static String notOnePerRank(Path f, int line, String ranks) {
        return "nccl-tuner compile: " + f + ":" + line + ": cannot tell nNodes: the NCCL_HOSTID values set from line 1"
                + " (gpuhost0, gpuhost1) are not one per rank (" + ranks + "), so the host names of the '# Rank' lines"
                + " (vm) do not count the nodes NCCL sees (a rank's NCCL_HOSTID is its host to NCCL), and there is no"
                + " NCCL 'comm ... nNodes' line (NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT); pass --in " + f
                + " --nodes N\n";
    }

    /** Item 3: two NCCL_HOSTIDs echoed for one rank: "(1 rank)", not "(1 ranks)". */
    @Test
    void echoedHostIdsOfOneRankSayOneRank() throws Exception {
        Path f = hostIdLog("one_all_reduce.txt", ECHO, "@HEAD@", rank(0, 101, 0));
        CliRun r = CliRun.run("compile", f.toString());
        assertEquals(1, r.exit(), r.out());
        assertEquals(notOnePerRank(f, 10, "1 rank"), r.err());
    }

    /** Item 3: two NCCL_HOSTIDs echoed for four ranks: "(4 ranks)". */
    @Test
    void echoedHostIdsOfFourRanksSayRanks() throws Exception {
        Path f = hostIdLog(
                "four_all_reduce.txt",
                ECHO,
                "@HEAD@",
                rank(0, 101, 0),
                rank(1, 101, 1),
                rank(2, 102, 0),
                rank(3, 102, 1));
        CliRun r = CliRun.run("compile", f.toString());
        assertEquals(1, r.exit(), r.out());
        assertEquals(notOnePerRank(f, 13, "4 ranks"), r.err());
    }

    /** What compile says where NCCL's NCCL_HOSTID lines name some ranks' processes, but for the counts. */
    private static String someRanks(Path f, int line, String named) {
        return "nccl-tuner compile: " + f + ":" + line + ": cannot tell nNodes: NCCL's 'NCCL_HOSTID set by environment'"
                + " lines (from line " + (line - 3) + ": gpuhost0) name the NCCL_HOSTID of the processes of " + named
                + ", so the host names of the '# Rank' lines (vm) do not count the nodes NCCL sees (a rank's NCCL_HOSTID"
                + " is its host to NCCL), and there is no NCCL 'comm ... nNodes' line (NCCL_DEBUG=INFO"
                + " NCCL_DEBUG_SUBSYS=INIT); pass --in " + f + " --nodes N\n";
    }

    /** Item 3: an NCCL_HOSTID line of another process than the one rank's: "of the 1 rank". */
    @Test
    void hostIdLinesOfOneRankSayOneRank() throws Exception {
        Path f = hostIdLog(
                "one_all_reduce.txt",
                "@HEAD@",
                rank(0, 101, 0),
                "vm:102:102 [0] NCCL INFO NCCL_HOSTID set by environment to gpuhost0");
        CliRun r = CliRun.run("compile", f.toString());
        assertEquals(1, r.exit(), r.out());
        assertEquals(someRanks(f, 10, "0 of the 1 rank"), r.err());
    }

    /** Item 3: an NCCL_HOSTID line of one of two ranks' processes: "of the 2 ranks". */
    @Test
    void hostIdLinesOfTwoRanksSayRanks() throws Exception {
        Path f = hostIdLog(
                "two_all_reduce.txt",
                "@HEAD@",
                rank(0, 101, 0),
                rank(1, 102, 0),
                "vm:101:101 [0] NCCL INFO NCCL_HOSTID set by environment to gpuhost0");
        CliRun r = CliRun.run("compile", f.toString());
        assertEquals(1, r.exit(), r.out());
        assertEquals(someRanks(f, 11, "1 of the 2 ranks"), r.err());
    }
}
