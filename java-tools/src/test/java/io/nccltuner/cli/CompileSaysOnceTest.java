package io.nccltuner.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 21, point 10: a compile that can write no rule says why once, in its first line, with what
 * to collect next; the summary's no-rule lines, its "collect next" list, the warnings and the last
 * line refer to that line or leave it out. Before, the reason came in the verdict line, again in
 * the summary's no-rule lines and "collect next", as a warning, and without -o the last line said
 * {@code -o FILE writes it} although -o would refuse.
 */
@Timeout(120)
class CompileSaysOnceTest {
    @TempDir
    Path tmp;

    /** Nothing forced: NCCL's own pick twice over, 2 files of plain nccl-tests output. */
    private static final String AUTO = CliRun.fixture("plain-all_reduce_auto.txt");

    private static final String RING_LL = CliRun.fixture("plain-all_reduce_ring_ll.txt");

    /** Forced runs only (optimize_config.py's CSV without 'auto' rows): NCCL's own pick never timed. */
    private static final String FORCED_ONLY = CliRun.fixture("inputs/optimize-config-no-auto_perf.csv");

    private static final String NONE_FORCED_VERDICT = "policy not written: no input measured a forced candidate "
            + "(every run counts as NCCL's own pick), so the policy would have no rules. Say what each file forced: "
            + "--in FILE --algo X --proto Y (or give NCCL_DEBUG=INFO output, whose 'set by environment' lines say "
            + "it); --allow-empty writes the empty policy\n";

    private static final String NO_NCCL_PICK_VERDICT = "policy not written: NCCL's own pick was never measured at a "
            + "size with a forced candidate (no unforced run there, and no NCCL log naming the pick), so no candidate "
            + "can be compared with it and the policy would have no rules. Collect NCCL's own pick: the same runs "
            + "without NCCL_ALGO/NCCL_PROTO/NCCL_MAX_NCHANNELS (in optimize_config.py's CSV: rows with algorithm and "
            + "protocol 'auto'; `nccl-tuner sweep` always runs it, named NCCL: all_reduce_NCCL_r1.txt), or give --nccl-log with "
            + "their NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING selection lines; --allow-empty writes the empty policy\n";

    private static int count(String text, String part) {
        return text.split(Pattern.quote(part), -1).length - 1;
    }

    @Test
    void noneForcedWithMinusOSaysWhyOnceAtTheTop() {
        Path yaml = tmp.resolve("p.yaml");
        CliRun r = CliRun.run("compile", AUTO, RING_LL, "-o", yaml.toString());
        assertEquals(1, r.exit(), r.out() + r.err());
        assertTrue(
                r.out()
                        .startsWith(NONE_FORCED_VERDICT
                                + "summary: 0 rules from 3 measured sizes in 1 group (nRanks=2 nNodes=1): 0 sizes "
                                + "get a rule; no rule at:\n"
                                + "  3 sizes: no forced candidate measured (see the first line)\n"
                                + "collect next:\n"
                                + "  - which candidate NCCL runs at 3 of 3 sizes: --nccl-log with the unforced runs' "
                                + "NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING output (its selection lines name NCCL's "
                                + "pick; that pick's forced runs then count as NCCL's replicates and it is never a "
                                + "rule's candidate)\n\n"),
                r.out());
        assertEquals(1, count(r.out(), "--algo X --proto Y"), r.out());
        assertFalse(r.out().contains("warnings:"), r.out());
        assertTrue(r.out().endsWith("\nper-size tables: --verbose prints them\n"), r.out());
        assertEquals("nccl-tuner compile: policy not written (see above)\n", r.err());
        assertFalse(Files.exists(yaml));
    }

    @Test
    void noneForcedWithoutMinusOSaysWhyOnceAtTheTopAndNotAgainAtTheEnd() {
        CliRun r = CliRun.run("compile", AUTO, RING_LL, "--summary");
        assertEquals(0, r.exit(), r.out() + r.err());
        assertTrue(
                r.out()
                        .startsWith(NONE_FORCED_VERDICT
                                + "summary: 0 rules from 3 measured sizes in 1 group (nRanks=2 nNodes=1): 0 sizes "
                                + "get a rule; no rule at:\n"
                                + "  3 sizes: no forced candidate measured (see the first line)\n"),
                r.out());
        assertEquals(1, count(r.out(), "--algo X --proto Y"), r.out());
        assertEquals(1, count(r.out(), "policy not written"), r.out());
        assertFalse(r.out().contains("-o FILE writes it"), r.out());
        assertEquals("", r.err());
    }

    @Test
    void neverTimingNcclsPickSaysWhatToCollectOnceAtTheTop() {
        Path yaml = tmp.resolve("p.yaml");
        CliRun r = CliRun.run("compile", FORCED_ONLY, "-o", yaml.toString());
        assertEquals(1, r.exit(), r.out() + r.err());
        assertTrue(
                r.out()
                        .startsWith(NO_NCCL_PICK_VERDICT
                                + "summary: 0 rules from 4 measured sizes in 2 groups (AllGather and AllReduce at nRanks=8 nNodes=1): 0 sizes "
                                + "get a rule; no rule at:\n"
                                + "  4 sizes: NCCL's own pick not measured (see the first line)\n"
                                + "collect next:\n"
                                + "  - replicates: every group has 1 run per configuration, so the noise is unknown: "
                                + "repeat each run, 3+ times (`nccl-tuner sweep --replicates 3`, or more files of the "
                                + "same runs)\n\n"),
                r.out());
        assertEquals(1, count(r.out(), "NCCL_MAX_NCHANNELS"), r.out());
        assertFalse(r.out().contains("nothing to compare the candidates with"), r.out());
        assertEquals("nccl-tuner compile: policy not written (see above)\n", r.err());

        CliRun plain = CliRun.run("compile", FORCED_ONLY, "--summary");
        assertEquals(0, plain.exit(), plain.out() + plain.err());
        assertTrue(plain.out().startsWith(NO_NCCL_PICK_VERDICT + "summary: 0 rules"), plain.out());
        assertEquals(1, count(plain.out(), "policy not written"), plain.out());
    }

    /** A written empty policy (--allow-empty) has no verdict line: the summary says why in full. */
    @Test
    void allowEmptyKeepsTheSummarysReasons() {
        Path yaml = tmp.resolve("p.yaml");
        CliRun r = CliRun.run("compile", AUTO, RING_LL, "-o", yaml.toString(), "--allow-empty", "--summary");
        assertEquals(0, r.exit(), r.out() + r.err());
        assertTrue(
                r.out()
                        .startsWith("summary: 0 rules from 3 measured sizes in 1 group (nRanks=2 nNodes=1): 0 sizes "
                                + "get a rule; no rule at:\n  3 sizes: no forced candidate measured\n  no input says "
                                + "which candidate a run forced"),
                r.out());
        assertTrue(r.out().contains("policy: " + yaml + " (0 rules)\n"), r.out());
    }

    /**
     * The tenth newcomer walk: with --allow-empty the summary says no input names what it forced,
     * and each file's "names no forced configuration" warning said it again; now only the summary.
     */
    @Test
    void allowEmptySaysNoneForcedOnce() {
        Path yaml = tmp.resolve("p.yaml");
        CliRun r = CliRun.run("compile", AUTO, RING_LL, "-o", yaml.toString(), "--allow-empty");
        assertEquals(0, r.exit(), r.out() + r.err());
        assertEquals(1, count(r.out(), "--algo X --proto Y"), r.out());
        assertEquals(1, count(r.out(), "no input says which candidate a run forced"), r.out());
        assertEquals(0, count(r.out() + r.err(), "names no forced configuration"), r.out() + r.err());
        assertTrue(r.out().contains("policy: " + yaml + " (0 rules)\n"), r.out());
    }
}
