package io.nccltuner.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

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

    @Test
    void anUnforcedRunIsOneNoteNotAWarning() {
        CliRun r = CliRun.run("compile", H100);
        assertEquals(0, r.exit(), r.out() + r.err());
        assertEquals(
                "nccl-tuner compile: note: runs in 1 file name no forced configuration (no NCCL INFO 'set by "
                        + "environment' lines, no --algo/--proto): counted as NCCL's own choice (tables at " + H100
                        + ":18); if NCCL_ALGO/NCCL_PROTO were set for a file's runs, say so with --in FILE --algo X "
                        + "--proto Y\n",
                r.err());
        assertFalse(r.out().contains("warning"), r.out());
        assertFalse(r.out().contains("no forced configuration"), r.out());
    }

    /** Forced and unforced files in one group: the one note names each unforced file and its tables. */
    @Test
    void unforcedFilesBesideForcedOnesAreNamedOnce() {
        CliRun r = CliRun.run("compile", AUTO, H100, "--in", RING_LL, "--algo", "RING", "--proto", "LL");
        assertEquals(0, r.exit(), r.out() + r.err());
        assertEquals(CliRun.unforcedNote(AUTO + ":7", H100 + ":18"), r.err());
        assertFalse(r.out().contains("no forced configuration"), r.out());
    }
}
