package io.nccltuner.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

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
}
