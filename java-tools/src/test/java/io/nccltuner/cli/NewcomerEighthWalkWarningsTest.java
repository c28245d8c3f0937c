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

    /** What regBuff 1 lines draw, after where. */
    private static final String REG1 = "regBuff 1: kept as regBuff true rules, which match from NCCL 2.24 (tuner v4);"
            + " a v3 NCCL does not say whether a buffer is registered and they never match there";
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
        assertEquals(fortyWarnings(f, ""), toStdout.err());
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
}
