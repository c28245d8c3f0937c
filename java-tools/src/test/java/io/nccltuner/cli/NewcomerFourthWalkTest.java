package io.nccltuner.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 21 (fourth newcomer walk, from the tarball): the report, try, replay and explain side, and
 * the exit codes against docs/compile.md's table. Each test asserts the message and exit code the
 * CLI prints now; its comment says what it printed before.
 */
class NewcomerFourthWalkTest {
    @TempDir
    Path tmp;

    static final String CONF = CliRun.fixture("nvidia-boundaries.conf");

    /**
     * Item 16. Before: bare {@code nccl-tuner} printed the usage on stdout and exited 0, {@code show
     * --nodes 0} exited 1 while {@code try --mode enforced} exited 2. Now an option value that makes
     * no sense is a usage error in every command: exit 2, the message, {@code see 'nccl-tuner
     * <command> --help'}.
     */
    @Test
    void everyCommandExitsTwoForAnOptionValueThatMakesNoSense() {
        String missing = tmp.resolve("missing.txt").toString();
        String yaml = tmp.resolve("p.yaml").toString();
        List<List<String>> bad = List.of(
                List.of("compile", missing, "--window", "9"),
                List.of("calibrate", missing, "-o", yaml, "--lambda", "-1"),
                List.of("import", CONF, "--no-such-option"),
                List.of("explain", "--log", missing, "--sizes", "1MiB:4KiB"),
                List.of("replay", "--trace", missing, "--policy", CONF, "--mode", "enforced"),
                List.of("sweep", "-o", tmp.resolve("s").toString(), "--candidate", "RING/LL", "-b", "1G", "-e", "64M"),
                List.of("validate", CONF, "--nranks", "0"),
                List.of("show", CONF, "--nodes", "0"),
                List.of("report", missing, "--min-calls", "1"),
                List.of("try", "--policy", CONF, "--trace", missing, "--mode", "enforced"));
        List<String> firstLines = List.of(
                "nccl-tuner compile: --window: 9 is outside 0..8",
                "nccl-tuner calibrate: --lambda and --mu must be >= 0",
                "nccl-tuner import: Unknown option: '--no-such-option'",
                "nccl-tuner explain: --sizes: '1MiB:4KiB' needs 0 < FROM <= TO",
                "nccl-tuner replay: --mode: unknown mode 'enforced' (enforce, shadow or off)",
                "nccl-tuner sweep: -b 1G (1 GiB) is above -e 64M (64 MiB): nccl-tests sweeps from -b up to -e; give the "
                        + "smaller size to -b",
                "nccl-tuner validate: --nranks and --nnodes must be >= 1 (got 0)",
                "nccl-tuner show: --nodes: 0 is outside 1..1048576",
                "nccl-tuner report: --min-calls must be at least 2, not 1",
                "nccl-tuner try: --mode must be shadow or enforce, not 'enforced'");
        for (int i = 0; i < bad.size(); i++) {
            CliRun r = CliRun.run(bad.get(i).toArray(String[]::new));
            String c = bad.get(i).getFirst();
            assertEquals(Main.EXIT_USAGE, r.exit(), c + ": " + r.err());
            List<String> lines = r.err().lines().toList();
            assertEquals(firstLines.get(i), lines.getFirst(), r.err());
            assertEquals("see 'nccl-tuner " + c + " --help'", lines.getLast(), r.err());
            assertEquals("", r.out(), c);
        }
    }

    /** Item 16. Bare {@code nccl-tuner}: the usage on stderr and exit 2; {@code --help} stays 0. */
    @Test
    void noCommandIsAUsageError() {
        CliRun bare = CliRun.run();
        assertEquals(2, bare.exit());
        assertEquals("", bare.out());
        assertTrue(bare.err().startsWith("Usage: nccl-tuner [-hV] [COMMAND]\n"), bare.err());
        assertTrue(bare.err().endsWith("\nnccl-tuner: no command given\nsee 'nccl-tuner --help'\n"), bare.err());
        CliRun help = CliRun.run("--help");
        assertEquals(0, help.exit());
        assertTrue(help.out().startsWith("Usage: nccl-tuner [-hV] [COMMAND]\n"), help.out());
        assertFalse(help.out().contains("no command given"), help.out());
    }

    /**
     * Item 16. A file the parsers refuse stays an input error (exit 1, one line, no "see ...
     * --help"): the code says whether the command line or the file is to fix.
     */
    @Test
    void aFileProblemStaysExitOne() {
        String missing = tmp.resolve("missing.txt").toString();
        CliRun r = CliRun.run("show", missing, "--nodes", "2");
        assertEquals(Main.EXIT_INPUT, r.exit());
        assertEquals("nccl-tuner show: " + missing + ": no such file\n", r.err());
    }
}
