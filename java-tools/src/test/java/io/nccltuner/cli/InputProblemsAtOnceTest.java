package io.nccltuner.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A measurement file's problems in one run (issue 21, point 8 and neighbours): every problem of
 * every table printed together, each once (file:line), then one line that says what to do for all
 * of them; warnings that differ only in a table's line and values folded into one line.
 */
@Timeout(240)
class InputProblemsAtOnceTest {
    @TempDir
    Path tmp;

    /** Two tables pasted from two clusters, no run headers, no '# Rank' lines, times 7x apart. */
    static final String PASTED = CliRun.fixture("inputs/pasted-tables-no-run-header_all_reduce.txt");

    /**
     * Item 1. Before: the first run said only "cannot tell nNodes ... pass --in FILE --nodes N" (line
     * 5), and the rerun with --nodes 2 only then said the two tables are not replicates (line 11).
     */
    @Test
    void compileNamesEveryProblemOfAFileAndOneWayOn() {
        CliRun r = CliRun.run("compile", PASTED);
        assertEquals(1, r.exit(), r.out());
        assertEquals(
                "nccl-tuner compile: " + PASTED + ":5,11: cannot tell nNodes: no '# Rank N ... on HOST' device lines "
                        + "and no NCCL 'comm ... nNodes' line before this table (nRanks 16 is inferred from busbw/algbw "
                        + "1.8743..1.8750)\n"
                        + "nccl-tuner compile: " + PASTED + ":11: this size table and the one at line 5 both measure "
                        + "AllReduce at nRanks 16 (nNodes untold for both: one --nodes N gives them one shape) with "
                        + "nothing forced, and at least one has no run header of its own ('# nThread ...'): separate "
                        + "tables are separate runs (other machines or settings?), not replicates; their times "
                        + "disagree (a median coefficient of variation of 110.7% over the 2 sizes both measure, above "
                        + "25%)\n"
                        + "nccl-tuner compile: " + PASTED + ": 2 problems (each on its line above), nothing read from "
                        + "this file: split the file before line 11, one file per size table (--pool-runs would pool "
                        + "them as replicates, but their times disagree); then pass --in PART --nodes N for each part\n",
                r.err());
    }

    /** Item 1: with --nodes given, the one problem left is said as before, on one line. */
    @Test
    void oneProblemLeftIsOneLine() {
        CliRun r = CliRun.run("compile", "--in", PASTED, "--nodes", "2");
        assertEquals(1, r.exit(), r.out());
        assertEquals(
                "nccl-tuner compile: " + PASTED + ":11: this size table and the one at line 5 both measure AllReduce "
                        + "at nRanks 16, nNodes 2 with nothing forced, and at least one has no run header of its own "
                        + "('# nThread ...'): separate tables are separate runs (other machines or settings?), not "
                        + "replicates; their times disagree (a median coefficient of variation of 110.7% over the 2 "
                        + "sizes both measure, above 25%); split the file before line 11, one file per size table "
                        + "(--pool-runs would pool them as replicates, but their times disagree)\n",
                r.err());
    }

    /** Item 1: tables whose times agree may be replicates: the advice offers --pool-runs. */
    @Test
    void agreeingTablesMayBePooled() throws Exception {
        List<String> lines = Files.readAllLines(Path.of(PASTED));
        List<String> same = new java.util.ArrayList<>(lines.subList(0, 9));
        same.add("### cluster A again");
        same.addAll(lines.subList(3, 8));
        Path f = Files.write(tmp.resolve("pasted-twice_all_reduce.txt"), same);
        CliRun r = CliRun.run("compile", f.toString());
        assertEquals(1, r.exit(), r.out());
        assertEquals(
                "nccl-tuner compile: " + f + ":5,12: cannot tell nNodes: no '# Rank N ... on HOST' device lines "
                        + "and no NCCL 'comm ... nNodes' line before this table (nRanks 16 is inferred from busbw/algbw "
                        + "1.8743)\n"
                        + "nccl-tuner compile: " + f + ":12: this size table and the one at line 5 both measure "
                        + "AllReduce at nRanks 16 (nNodes untold for both: one --nodes N gives them one shape) with "
                        + "nothing forced, and at least one has no run header of its own ('# nThread ...'): separate "
                        + "tables are separate runs (other machines or settings?), not replicates\n"
                        + "nccl-tuner compile: " + f + ": 2 problems (each on its line above), nothing read from "
                        + "this file: split the file, or pass --pool-runs to pool them as replicates; then pass --in "
                        + f + " --nodes N\n",
                r.err());
    }

    /**
     * Item 2. Before: the "nNodes 2 counted from the 2 NCCL_HOSTID values set from line N (...)" warning
     * once per table, three lines that differ only in the line and the NCCL_HOSTID values.
     */
    @Test
    void aWarningOfEveryTableIsOneLine() throws Exception {
        String one = Files.readString(Path.of(CliRun.fixture("inputs/hostid-echoed-per-rank_all_reduce.txt")));
        String three = one + one.replace("gpuhost", "simple") + one.replace("gpuhost", "ll");
        Path f = CliRun.write(tmp, "three-runs-hostid_all_reduce.txt", three);
        CliRun r = CliRun.run("compile", f.toString());
        assertEquals(0, r.exit(), r.err());
        String folded = "  " + f + ":13,33,53: nNodes 2 counted from the NCCL_HOSTID values set before each table, "
                + "one per rank, not 1 from the host names of the '# Rank' lines (vm): a rank's NCCL_HOSTID is its "
                + "host to NCCL (src/misc/utils.cc getHostHash); NCCL's 'comm ... nNodes' INFO line "
                + "(NCCL_DEBUG_SUBSYS=INIT) would say so; pass --in " + f + " --nodes N if that is wrong\n";
        assertEquals(1, r.out().split(java.util.regex.Pattern.quote(folded), -1).length - 1, r.out());
        assertEquals(-1, r.out().indexOf("NCCL_HOSTID values set from line"), r.out());
    }

    /** Item 2: one table's warning keeps its values. */
    @Test
    void oneTablesWarningKeepsItsValues() {
        String f = CliRun.fixture("inputs/hostid-echoed-per-rank_all_reduce.txt");
        CliRun r = CliRun.run("compile", f);
        assertEquals(0, r.exit(), r.err());
        String own = "  " + f + ":13: nNodes 2 counted from the 2 NCCL_HOSTID values set from line 3 (gpuhost0, "
                + "gpuhost1), one per rank, not 1 from the host names of the '# Rank' lines (vm): ";
        assertEquals(1, r.out().split(java.util.regex.Pattern.quote(own), -1).length - 1, r.out());
    }

    /**
     * Item 3. Before: one line per file, {@code a.txt: 13 lines carry a launcher prefix ...}, three
     * lines for three files (those of equal counts folded, the other apart); now one line.
     */
    @Test
    void launcherPrefixesOfSeveralFilesAreOneLineWithTheTotal() throws Exception {
        String one = Files.readString(Path.of(CliRun.fixture("inputs/mpirun-tag-output_all_reduce.txt")));
        Path a = CliRun.write(tmp, "a_all_reduce.txt", one);
        Path b = CliRun.write(tmp, "b_all_reduce.txt", one.replace("    30.00   34.95", "    30.10   34.84"));
        Path c = CliRun.write(
                tmp,
                "c_all_reduce.txt",
                one.replace("    30.00   34.95", "    30.20   34.72")
                        .replace("[1,0]<stdout>:#\n", "[1,0]<stdout>:#\n[1,0]<stdout>:#\n"));
        CliRun r = CliRun.run("compile", a.toString(), b.toString(), c.toString());
        assertEquals(0, r.exit(), r.err());
        String line = "  41 lines in 3 files carry a launcher prefix (mpirun --tag-output '[1,0]<stdout>:'); read "
                + "without it (" + a + ": 13, " + b + ": 13, " + c
                + ": 15)\n";
        assertEquals(1, r.out().split(java.util.regex.Pattern.quote(line), -1).length - 1, r.out());
        assertEquals(-1, r.out().indexOf(": 13 lines carry"), r.out());
    }

    /** Item 4. Before: calibrate stopped at the first folder that is not a sweep, naming only it. */
    @Test
    void calibrateNamesEveryUnusableSweep() throws Exception {
        Path a = Files.createDirectory(tmp.resolve("not-a-sweep-a"));
        Path b = Files.createDirectory(tmp.resolve("not-a-sweep-b"));
        CliRun r = CliRun.run("calibrate", a.toString(), CalibrateCommandTest.sweep("sweep-2nodes"), b.toString());
        assertEquals(1, r.exit(), r.out());
        String why = ": not a sweep directory (no manifest); calibrate reads what `nccl-tuner sweep -o DIR` writes\n";
        assertEquals(
                "nccl-tuner calibrate: " + a + why + "nccl-tuner calibrate: " + b + why
                        + "nccl-tuner calibrate: 2 of 3 inputs refused (each on its line above); nothing calibrated\n",
                r.err());
    }

    /** Item 1 in a folder: the file's problems are warnings, one line each, the last saying it is skipped. */
    @Test
    void aFolderFilesProblemsAreOneWarningLineEach() throws Exception {
        Path dir = Files.createDirectory(tmp.resolve("cluster-outputs"));
        Path pasted = Files.copy(Path.of(PASTED), dir.resolve("pasted_all_reduce.txt"));
        Files.copy(Path.of(CliRun.fixture("plain-all_reduce_auto.txt")), dir.resolve("plain_all_reduce.txt"));
        CliRun r = CliRun.run("compile", dir.toString());
        assertEquals(0, r.exit(), r.err());
        String w = "nccl-tuner compile: warning: " + pasted;
        assertEquals(
                true,
                r.err()
                        .startsWith(w + ":5,11: cannot tell nNodes: no '# Rank N ... on HOST' device lines and no NCCL "
                                + "'comm ... nNodes' line before this table (nRanks 16 is inferred from busbw/algbw "
                                + "1.8743..1.8750)\n" + w + ":11: this size table and the one at line 5 both measure "),
                r.err());
        assertEquals(
                true,
                r.err()
                        .contains(
                                "\n" + w + ": 2 problems (each on its line above), nothing read from this file: split "
                                        + "the file before line 11, one file per size table (--pool-runs would pool them as replicates, "
                                        + "but their times disagree); then pass --in PART --nodes N for each part;"
                                        + " file skipped, the "
                                        + "folder's other files are read\n"),
                r.err());
    }

    /**
     * Item 1: a table whose collective is untold (nothing in the file or its name) is also said to
     * lack nNodes, which needs no collective; and the two tables' times are compared all the same
     * (their collective untold for both), so the one action line splits first, then names each part's
     * options. Before: only the collective, then --nodes on the rerun (azure walkthrough: 2 problems,
     * the rerun with --collective and --nodes only then said the tables disagree; 3 runs to get there).
     */
    @Test
    void anUntoldCollectiveComesWithTheUntoldNodes() throws Exception {
        Path f = Files.copy(Path.of(PASTED), tmp.resolve("pasted.txt"));
        CliRun r = CliRun.run("compile", f.toString());
        assertEquals(1, r.exit(), r.out());
        assertEquals(
                "nccl-tuner compile: " + f + ":5,11: cannot tell which collective this table measured (no '# "
                        + "Collective test starting' line, no *_perf program name, nothing in the file name)\n"
                        + "nccl-tuner compile: " + f + ":5,11: cannot tell nNodes: no '# Rank N ... on HOST' device "
                        + "lines and no NCCL 'comm ... nNodes' line before this table\n"
                        + "nccl-tuner compile: " + f + ":11: this size table and the one at line 5 both measure a "
                        + "collective the file does not tell (untold for both: one --collective NAME gives them one) "
                        + "with nothing forced, and at least one has no run header of its own ('# nThread ...'): "
                        + "separate tables are separate runs (other machines or settings?), not replicates; their "
                        + "times disagree (a median coefficient of variation of 110.7% over the 2 sizes both measure, "
                        + "above 25%)\n"
                        + "nccl-tuner compile: " + f + ": 3 problems (each on its line above), nothing read from this "
                        + "file: split the file before line 11, one file per size table (--pool-runs would pool them "
                        + "as replicates, but their times disagree); then pass --in PART --collective NAME --nodes N "
                        + "for each part\n",
                r.err());
    }

    /**
     * Item 1, the advice followed: each part with its --collective and --nodes is read (nothing
     * forced, so no rule: the one line left is the policy's); both parts in one compile are refused
     * as pooled inputs that disagree, which says to compile them separately.
     */
    @Test
    void theSplitPartsAreReadEachWithItsOptions() throws Exception {
        List<String> lines = Files.readAllLines(Path.of(PASTED));
        Path a = Files.write(tmp.resolve("part-a.txt"), lines.subList(0, 10));
        Path b = Files.write(tmp.resolve("part-b.txt"), lines.subList(10, lines.size()));
        List<String> each = List.of("--collective", "AllReduce", "--nodes", "2");
        for (Path part : List.of(a, b)) {
            List<String> args = new java.util.ArrayList<>(List.of("compile", "--in", part.toString()));
            args.addAll(each);
            CliRun r = CliRun.run(args, "-o", tmp.resolve("p.yaml").toString());
            assertEquals(1, r.exit(), r.out());
            assertEquals("nccl-tuner compile: policy not written (see above)\n", r.err());
        }
        List<String> both = new java.util.ArrayList<>(List.of("compile", "--in", a.toString()));
        both.addAll(each);
        both.addAll(List.of("--in", b.toString()));
        both.addAll(each);
        CliRun r = CliRun.run(both);
        assertEquals(1, r.exit(), r.out());
        assertEquals(true, r.err().contains(" pooled as replicates (" + a + "; " + b + ") disagree: "), r.err());
        assertEquals(true, r.err().contains("? Compile them separately, "), r.err());
    }
}
