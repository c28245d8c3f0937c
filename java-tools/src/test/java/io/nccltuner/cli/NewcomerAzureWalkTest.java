package io.nccltuner.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The newcomer's walk with a pasted Azure file (issue 21): the file's problems in one run, and
 * compile's leftovers (the unfinished sweep read as a number, the candidate sweep names NCCL, the
 * summary's groups, calibrate's default columns).
 */
@Timeout(240)
class NewcomerAzureWalkTest {
    /**
     * Item 1: the per-part advice is the parser's own clause ({@code pass --collective --nodes for
     * each part}), rendered with {@code --in PART} and each option's placeholder; a per-file option
     * after a split that the parser does not say is each part's names the file. Before: every
     * {@code pass --X} after the words {@code split the file before line N} was rewritten as each
     * part's ({@code pass --in PART --nodes N for each part}), whatever the parser meant.
     */
    @Test
    void eachPartsOptionsAreTheParsersNotTheSentencesPosition() {
        var compile = Main.commandLine().getSubcommands().get("compile").getCommandSpec();
        assertEquals(
                "x.txt: 3 problems: split the file before line 25, one file per size table; then pass --in PART "
                        + "--collective NAME --nodes N for each part",
                Main.advice(
                        compile,
                        "x.txt: 3 problems: split the file before line 25, one file per size table; then pass "
                                + "--collective --nodes for each part"));
        assertEquals(
                "x.txt:3: split the file before line 9 to read its second table; pass --in x.txt --nodes N",
                Main.advice(compile, "x.txt:3: split the file before line 9 to read its second table; pass --nodes"));
    }

    /**
     * Item 2: compile's "finish the sweep" item is read from the number of unfinished runs a sweep
     * folder records, not from its warning's words: a compilation with such a folder and no warning
     * at all still says it first. Before: the item was found by searching the warnings for the
     * sentence the sweep reader writes, so rewording that warning dropped it.
     */
    @Test
    void anUnfinishedSweepIsSaidFromItsCountNotTheWarningsWords() {
        var c = new io.nccltuner.compile.Compiler.Compilation(
                new io.nccltuner.policy.Policy("m", io.nccltuner.policy.Mode.ENFORCE, "", List.of(), null),
                List.of(),
                List.of(),
                List.of(),
                null,
                List.of(new io.nccltuner.compile.MeasurementSet.Unfinished("cut-sweep", 1, 12)));
        String s = io.nccltuner.compile.TextReport.summary(c);
        assertEquals(
                true,
                s.contains("collect next:\n  - finish the sweep: cut-sweep: 1 of 12 runs not finished: run the same "
                        + "`nccl-tuner sweep` command again (it skips the runs done), then compile again\n"),
                s);
    }

    /**
     * Item 4: a summary of more groups than shapes names each shape's collectives. Before: {@code in
     * 3 groups (nRanks=8 nNodes=1; nRanks=16 nNodes=2)}, the groups split by collective unsaid.
     */
    @Test
    void theSummarySaysEachShapesCollectives(@org.junit.jupiter.api.io.TempDir Path tmp) throws Exception {
        Path csv = CliRun.write(
                tmp,
                "mix_perf.csv",
                Files.readString(Path.of(CliRun.fixture("inputs/optimize-config-no-auto_perf.csv")))
                        + "allreduce,4096,ring,ll,4,2,16,-1,-1,0.11,50.0,9.5\n"
                        + "allreduce,4096,tree,simple,2,2,16,-1,-1,0.14,40.0,11.0\n");
        CliRun r = CliRun.run("compile", csv.toString(), "--summary");
        assertEquals(0, r.exit(), r.out() + r.err());
        assertEquals(
                "summary: 0 rules from 5 measured sizes in 3 groups (AllGather and AllReduce at nRanks=8 nNodes=1; "
                        + "AllReduce at nRanks=16 nNodes=2): 0 sizes get a rule; no rule at:",
                r.out()
                        .lines()
                        .filter(l -> l.startsWith("summary: "))
                        .findFirst()
                        .orElse(r.out()));
    }

    /**
     * Item 3: compile's advice for NCCL's own pick says what sweep runs: always NCCL's own pick, named
     * NCCL (its progress lines and files: {@code all_reduce_NCCL_r1.txt}). Before: {@code `nccl-tuner
     * sweep` measures it as the candidate 'auto'}, a name sweep never prints.
     */
    @Test
    void theAdviceNamesSweepsOwnPickAsSweepDoes() {
        CliRun r = CliRun.run("compile", CliRun.fixture("inputs/optimize-config-no-auto_perf.csv"));
        assertEquals(0, r.exit(), r.err());
        assertEquals(
                true,
                r.out().contains("; `nccl-tuner sweep` always runs it, named NCCL: all_reduce_NCCL_r1.txt), or give "),
                r.out());
        assertEquals(false, r.out().contains("candidate 'auto'"), r.out());
    }

    /**
     * Item 5: calibrate's fitted column says {@code unchanged} for a constant the fit left at NCCL's
     * default, with no unit after it. Before: {@code (default) us} and {@code (default) GB/s}.
     */
    @Test
    void calibratesUnfittedConstantsReadUnchanged(@org.junit.jupiter.api.io.TempDir Path tmp) {
        CliRun r = CliRun.run(
                "calibrate",
                CalibrateCommandTest.sweep("sweep-2nodes"),
                CalibrateCommandTest.sweep("sweep-4nodes"),
                "-o",
                tmp.resolve("cal.yaml").toString());
        assertEquals(0, r.exit(), r.err());
        String row = r.out()
                .lines()
                .filter(l -> l.startsWith("  baseLatencies.TREE.SIMPLE "))
                .findFirst()
                .orElse(r.out());
        assertEquals(
                true,
                row.matches("  baseLatencies\\.TREE\\.SIMPLE +8\\.40 us +unchanged +\\.\\. \\.\\. [0-9.]+ +-"),
                row);
        assertEquals(false, r.out().contains("(default)"), r.out());
    }
}
