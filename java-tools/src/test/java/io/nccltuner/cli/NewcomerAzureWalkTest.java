package io.nccltuner.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

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
}
