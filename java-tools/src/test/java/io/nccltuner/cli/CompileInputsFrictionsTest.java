package io.nccltuner.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 21, the newcomer's path: compile's frictions with ordinary inputs. An unforced nccl-tests
 * run (no NCCL_ALGO/NCCL_PROTO) is the normal case, so compile says once, in a note, which files'
 * runs it counted as NCCL's own choice, not a warning per file; {@code --nodes} that contradicts the
 * file's hosts is used, with a warning; a range's regret spread is over its own sizes; and the
 * folding of one problem or warning over several tables and files.
 */
@Timeout(120)
class CompileInputsFrictionsTest {
    @TempDir
    Path tmp;

    /** One unforced run (table at line 18) and one forced to RING/LL128, 8 H100s of one node. */
    private static final String H100 = CliRun.fixture("h100-8ranks-1host_all_reduce.txt");

    /** Plain nccl-tests output of NCCL's own pick (table at line 7), 2 ranks. */
    private static final String AUTO = CliRun.fixture("plain-all_reduce_auto.txt");

    private static final String RING_LL = CliRun.fixture("plain-all_reduce_ring_ll.txt");

    /**
     * An unforced run beside a forced one of its group is NCCL's own pick: no note, no warning (the
     * note, where a group has no forced run: NewcomerTwelfthWalkCompileTest).
     */
    @Test
    void anUnforcedRunIsNeitherANoteNorAWarning() {
        CliRun r = CliRun.run("compile", H100);
        assertEquals(0, r.exit(), r.out() + r.err());
        assertEquals("", r.err());
        assertFalse(r.out().contains("warning"), r.out());
        assertFalse(r.out().contains("no forced configuration"), r.out());
    }

    /** Forced and unforced files, each group with a forced run: nothing to note. */
    @Test
    void unforcedFilesBesideForcedOnesAreNotNoted() {
        CliRun r = CliRun.run("compile", AUTO, H100, "--in", RING_LL, "--algo", "RING", "--proto", "LL");
        assertEquals(0, r.exit(), r.out() + r.err());
        assertEquals("", r.err());
        assertFalse(r.out().contains("no forced configuration"), r.out());
    }

    /**
     * Three unforced files of a group with no forced run (beside the H100 file's group, which has one)
     * are all named in the note; a fourth makes it name the first three and count the rest ("and 1
     * more"). The copies of the unforced file differ in the 1 MiB row's out-of-place time (40.00 us,
     * 40.01 us, ...), replicates that agree, so none is read once.
     */
    @Test
    void theNoteNamesThreeFilesAndCountsTheRest() throws Exception {
        String auto = Files.readString(Path.of(AUTO));
        String[] copies = new String[4];
        for (int i = 0; i < copies.length; i++) {
            String row = auto.replaceFirst("-1    40\\.00", "-1    40.0" + i);
            copies[i] = CliRun.write(tmp, "all_reduce_auto" + i + ".txt", row).toString();
        }
        CliRun three = CliRun.run("compile", H100, copies[0], copies[1], copies[2]);
        assertEquals(0, three.exit(), three.out() + three.err());
        assertTrue(
                three.err().endsWith(CliRun.unforcedNote(copies[0] + ":7", copies[1] + ":7", copies[2] + ":7")),
                three.err());
        CliRun four = CliRun.run("compile", H100, copies[0], copies[1], copies[2], copies[3]);
        assertEquals(0, four.exit(), four.out() + four.err());
        assertTrue(
                four.err()
                        .endsWith(
                                "nccl-tuner compile: note: runs in 4 files name no forced configuration (no NCCL INFO "
                                        + "'set by environment' lines, no --algo/--proto): counted as NCCL's own choice (tables "
                                        + "at " + copies[0] + ":7, " + copies[1] + ":7, " + copies[2]
                                        + ":7 and 1 more); "
                                        + "if NCCL_ALGO/NCCL_PROTO were set for a file's runs, say so with --in FILE --algo X "
                                        + "--proto Y\n"),
                four.err());
    }

    /**
     * {@code --in FILE --nodes N} against the nodes the file's '# Rank' lines count (2 hosts, no NCCL
     * comm line): the user's word is used, with a warning naming both counts; agreeing, no warning.
     */
    @Test
    void nodesThatContradictTheHostNamesAreUsedWithAWarning() throws Exception {
        Path f = tmp.resolve("two-hosts.txt");
        Files.writeString(
                f,
                Files.readString(Path.of(CliRun.fixture("gh200-8ranks-2hosts_all_reduce.txt")))
                        .replaceAll("(?m)^.*NCCL INFO comm 0x.*\n", ""));
        String hosts = "the host names of the '# Rank' lines (gh200-01, gh200-02) count 2";
        CliRun one = CliRun.run("compile", "--in", f.toString(), "--nodes", "1");
        assertEquals(0, one.exit(), one.err());
        assertTrue(
                one.out()
                        .contains("\nwarnings: 1\n  " + f + ":17,43: --nodes says nNodes 1 but " + hosts + ": used "
                                + "--nodes 1 (right if several hosts are one node to NCCL where their ranks set one "
                                + "NCCL_HOSTID, or share one NVLink domain (MNNVL)); if not, leave --nodes out for this "
                                + "file\n"),
                one.out());
        assertTrue(
                one.out().startsWith("summary: 0 rules from 3 measured sizes in 1 group (nRanks=8 nNodes=1)"),
                one.out());
        CliRun four = CliRun.run("compile", "--in", f.toString(), "--nodes", "4");
        assertTrue(
                four.out()
                        .contains("  " + f + ":17,43: --nodes says nNodes 4 but " + hosts + ": used --nodes 4 (right "
                                + "if one host is several nodes to NCCL where its ranks set different NCCL_HOSTIDs); if "
                                + "not, leave --nodes out for this file\n"),
                four.out());
        CliRun two = CliRun.run("compile", "--in", f.toString(), "--nodes", "2");
        assertEquals(0, two.exit(), two.err());
        assertFalse(two.out().contains("--nodes says"), two.out());
        assertFalse(two.out().contains("\nwarnings:"), two.out());
    }

    /**
     * The spread of a range's expected regret is over the range's own sizes (with the replicates'
     * CV): before, window neighbours outside the range, where its pick does not run, entered it, and
     * RING/LL128's 0.00% regret from 256 KiB to 2 MiB printed {@code +- 2.80%} (the docs' simulated
     * sweep: {@code 0.00% +- 110.04%}).
     */
    @Test
    void aRangesSpreadIsOverItsOwnSizes() {
        CliRun r = CliRun.run("compile", H100, "--summary");
        assertEquals(0, r.exit(), r.err());
        assertTrue(
                r.out()
                        .contains("numPipeOps 1 (mean over its sizes +- their spread with the replicates' CV):\n"
                                + "  [256 KiB, 2 MiB)     RING/LL128            0.00% +- 0.00%\n"
                                + "  [2 MiB, 5 MiB)       NCCL's pick           1.63% +- 2.31%\n"),
                r.out());
    }

    /** A size table of nccl-tests 2.8's layout without run header or device lines; busbw/algbw as given. */
    private static String table(String name, String... algbwBusbw) {
        StringBuilder b = new StringBuilder(
                "### cluster " + name + "\n"
                        + "#       size         count      type   redop     time   algbw   busbw  error     time   algbw   busbw"
                        + "  error\n"
                        + "#        (B)    (elements)                       (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)\n");
        long size = 33554432;
        for (int i = 0; i < algbwBusbw.length; i += 2, size *= 2) {
            String bw = "   " + algbwBusbw[i] + "   " + algbwBusbw[i + 1];
            b.append("    ")
                    .append(size)
                    .append("       ")
                    .append(size / 4)
                    .append("     float     sum   4400.0")
                    .append(bw)
                    .append("  4e-07   4400.0")
                    .append(bw)
                    .append("  4e-07\n");
        }
        return b.toString();
    }

    /**
     * One refusal of 3 tables whose busbw/algbw ranges differ (1.8742..1.8750, 1.8744..1.8759,
     * 1.8741..1.8750 by table): folded into one line, each number the range of its values, low to
     * high (unsorted, the first table's and the last one's would print 1.8748..1.8741).
     */
    @Test
    void aFoldedRefusalSaysEachNumbersRangeLowToHigh() throws Exception {
        Path f = tmp.resolve("three-tables_all_reduce.txt");
        Files.writeString(
                f,
                table("T", "7.63", "14.30", "10.00", "18.75")
                        + table("U", "8.04", "15.07", "9.99", "18.74")
                        + table("V", "10.01", "18.76", "4.00", "7.50"));
        CliRun r = CliRun.run("compile", f.toString());
        assertEquals(1, r.exit(), r.out());
        assertEquals(
                "nccl-tuner compile: " + f + ":2,7,12: cannot tell nNodes: no '# Rank N ... on HOST' device lines and "
                        + "no NCCL 'comm ... nNodes' line before this table (nRanks 16 is inferred from busbw/algbw "
                        + "1.8741..1.8753)",
                r.err().lines().findFirst().orElseThrow());
    }

    /**
     * Compile's folding of one warning drawn by several files, where each names its tables'
     * lines ({@code a.txt:16,40}) and its own file in the advice: the file is the where without all
     * its lines, so the advice's file becomes {@code FILE} and the two fold into one line (with the
     * last line alone taken off, {@code a.txt:16} would not be found in the advice and the two would
     * stay apart).
     */
    @Test
    void aWarningOfSeveralTablesInSeveralFilesFoldsIntoOne() {
        assertEquals(
                java.util.List.of("each table's collective read from the one named before it; pass --in FILE "
                        + "--collective NAME if that is wrong (2 files: a.txt:16,40, b.txt:16,40)"),
                io.nccltuner.compile.Repeats.perFile(java.util.List.of(
                        "a.txt:16,40: each table's collective read from the one named before it; pass --in a.txt "
                                + "--collective NAME if that is wrong",
                        "b.txt:16,40: each table's collective read from the one named before it; pass --in b.txt "
                                + "--collective NAME if that is wrong")));
    }
}
