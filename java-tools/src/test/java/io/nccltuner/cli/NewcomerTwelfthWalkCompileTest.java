package io.nccltuner.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The twelfth newcomer walk, through compile (issue 21): the note on runs that name no forced
 * configuration only where their group gets no rule for it, and a forced {@code --in} file kept when
 * its bytes equal another input's. Each test asserts what the CLI prints now; its comment says what
 * it printed before.
 */
@Timeout(240)
class NewcomerTwelfthWalkCompileTest {
    @TempDir
    Path tmp;

    /** NCCL's own pick for AllReduce at 2 ranks (table at line 7). */
    private static final String AUTO = CliRun.fixture("plain-all_reduce_auto.txt");

    /** The same 2 ranks forced to RING/LL (the file itself does not say so). */
    private static final String RING_LL = CliRun.fixture("plain-all_reduce_ring_ll.txt");

    /** One unforced run (table at line 18) and one forced to RING/LL128, 8 H100s of one node. */
    private static final String H100 = CliRun.fixture("h100-8ranks-1host_all_reduce.txt");

    /** One unforced and one forced run, 8 GH200s on 2 hosts. */
    private static final String GH200 = CliRun.fixture("gh200-8ranks-2hosts_all_reduce.txt");

    /**
     * Item 1. Before: each of these printed {@code note: runs in 1 file name no forced configuration
     * ...}, though the unforced run is NCCL's own pick beside forced runs of its group. Now: nothing
     * on stderr.
     */
    @Test
    void noNoteWhereUnforcedRunsStandBesideForcedOnes() {
        String[][] runs = {
            {"compile", AUTO, "--in", RING_LL, "--algo", "RING", "--proto", "LL"}, {"compile", H100}, {"compile", GH200}
        };
        for (String[] args : runs) {
            CliRun r = CliRun.run(args);
            assertEquals(0, r.exit(), String.join(" ", args) + "\n" + r.out() + r.err());
            assertEquals("", r.err(), String.join(" ", args));
        }
    }

    /**
     * Item 1: a group whose every run is unforced (AUTO's 2 ranks) beside a group with forced runs
     * (H100's 8 ranks) gets no rule: the note names that file alone.
     */
    @Test
    void theNoteNamesTheFilesOfAGroupWithNoForcedRun() {
        CliRun r = CliRun.run("compile", H100, AUTO);
        assertEquals(0, r.exit(), r.out() + r.err());
        assertEquals(CliRun.unforcedNote(AUTO + ":7"), r.err());
    }

    /**
     * Item 2. Before: {@code compile auto.txt copy.txt --in ring_ll.txt --algo RING --proto LL}, copy.txt
     * a byte copy of ring_ll.txt, read copy.txt as NCCL's own pick and dropped ring_ll.txt with its
     * --algo/--proto (its verdict: {@code policy not written: no input measured a forced candidate}). Now
     * the annotated file is the one read, and the warning says so.
     */
    @Test
    void theAnnotatedCopyIsTheOneRead() throws Exception {
        Path copy = tmp.resolve("all_reduce_copy.txt");
        Files.copy(Path.of(RING_LL), copy);
        CliRun r = CliRun.run("compile", AUTO, copy.toString(), "--in", RING_LL, "--algo", "RING", "--proto", "LL");
        assertEquals(0, r.exit(), r.out() + r.err());
        assertEquals(
                "nccl-tuner compile: warning: " + copy + " and " + RING_LL + " hold the same bytes: read once, as "
                        + RING_LL + " with --algo RING --proto LL\n",
                r.err());
        CliRun alone = CliRun.run("compile", AUTO, "--in", RING_LL, "--algo", "RING", "--proto", "LL");
        assertEquals(alone.out(), r.out());
    }

    /**
     * Item 2: two copies given with different options: the first is read with its own, and the
     * warning names the options dropped with the second.
     */
    @Test
    void theOptionsDroppedWithACopyAreNamed() throws Exception {
        Path copy = tmp.resolve("all_reduce_copy.txt");
        Files.copy(Path.of(RING_LL), copy);
        CliRun r = CliRun.run(
                "compile",
                AUTO,
                "--in",
                RING_LL,
                "--algo",
                "RING",
                "--proto",
                "LL",
                "--in",
                copy.toString(),
                "--algo",
                "TREE",
                "--proto",
                "SIMPLE");
        assertEquals(0, r.exit(), r.out() + r.err());
        assertEquals(
                "nccl-tuner compile: warning: " + RING_LL + " and " + copy + " hold the same bytes: read once, as "
                        + RING_LL + " with --algo RING --proto LL; " + copy
                        + "'s --algo TREE --proto SIMPLE dropped with it\n",
                r.err());
    }
}
