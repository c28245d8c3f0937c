package io.nccltuner.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.concurrent.Callable;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** Exit codes and messages common to all commands (see {@link Main}). */
class MainTest {
    @Command(name = "boom")
    static final class Boom implements Callable<Integer> {
        @Override
        public Integer call() {
            throw new IllegalStateException("kaput");
        }
    }

    @Test
    void usageErrorsExitTwoWithOneLineAndAHint() {
        CliRun unknown = CliRun.run("compile", "--bogus", "x.csv");
        assertEquals(2, unknown.exit());
        assertEquals("nccl-tuner compile: Unknown option: '--bogus'\nsee 'nccl-tuner compile --help'\n", unknown.err());
        CliRun missing = CliRun.run("explain");
        assertEquals(2, missing.exit());
        assertTrue(
                missing.err().startsWith("nccl-tuner explain: Missing required option: '--log=FILE'\n"), missing.err());
        CliRun notANumber = CliRun.run("explain", "--log", "x.log", "--nranks", "two");
        assertEquals(2, notANumber.exit());
        assertTrue(notANumber.err().contains("'two' is not an int"), notANumber.err());
        assertEquals(2, CliRun.run("frobnicate").exit());
    }

    /**
     * Issue 21 (sixth walk), item 4: a mistyped option names the closest option (of picocli's
     * suggestions, the nearest in edits), where picocli printed "Possible solutions: --collective,
     * --comm, --compute-capability" or, with a required option missing, only that; a mistyped
     * command names the closest command, after {@code help} too. Exit 2 each.
     */
    @Test
    void aMistypedOptionOrCommandNamesTheClosest() {
        String[][] cases = {
            {
                "compile --nccl-lgo x",
                "nccl-tuner compile: Unknown option: '--nccl-lgo'; did you mean --nccl-log?\n"
                        + "see 'nccl-tuner compile --help'\n"
            },
            {
                "compile --pool-anyways x.csv",
                "nccl-tuner compile: Unknown option: '--pool-anyways'; did you mean "
                        + "--pool-anyway?\nsee 'nccl-tuner compile --help'\n"
            },
            {
                "explain --log x.log --colective Broadcast",
                "nccl-tuner explain: Unknown options: '--colective', "
                        + "'Broadcast'; did you mean --collective?\nsee 'nccl-tuner explain --help'\n"
            },
            // picocli reports the required --policy and --trace missing first: the mistyped one is named instead
            {
                "try --polcy p.yaml",
                "nccl-tuner try: Unknown option: '--polcy'; did you mean --policy?\n" + "see 'nccl-tuner try --help'\n"
            },
            {
                "sweep --replicate 3",
                "nccl-tuner sweep: Unknown option: '--replicate'; did you mean --replicates?\n"
                        + "see 'nccl-tuner sweep --help'\n"
            },
            // an option's value that starts with '-' is not taken for an option
            {
                "sweep -o d --seed -5 --bogus",
                "nccl-tuner sweep: Unknown option: '--bogus'\n" + "see 'nccl-tuner sweep --help'\n"
            },
            {"--hepl", "nccl-tuner: Unknown option: '--hepl'; did you mean --help?\nsee 'nccl-tuner --help'\n"},
            {"compiel", "nccl-tuner: unknown command 'compiel'; did you mean compile?\nsee 'nccl-tuner --help'\n"},
            {
                "help compiel",
                "nccl-tuner: unknown command 'compiel'; did you mean compile?\n" + "see 'nccl-tuner --help'\n"
            },
        };
        for (String[] c : cases) {
            CliRun r = CliRun.run(c[0].split(" "));
            assertEquals(2, r.exit(), c[0]);
            assertEquals(c[1], r.err(), c[0]);
            assertEquals("", r.out(), c[0]);
        }
        assertEquals(1, Main.distance("compiel", "compile"), "a swap of two neighbours is one edit");
        assertEquals(2, Main.distance("nccl-lgo", "nccl-logs"));
    }

    /**
     * Newcomer walk, item 7: every command's help formats without picocli's "Could not format ...
     * escape '%'" warnings (compile's --pool-anyway said "above 25%:"), and prints the percent.
     */
    @Test
    void helpFormatsWithoutPicocliWarnings() {
        for (String c : new String[] {
            "compile", "replay", "explain", "report", "try", "sweep", "calibrate", "validate", "import", "show"
        }) {
            CliRun help = CliRun.run(c, "--help");
            assertEquals(0, help.exit(), c);
            assertTrue(
                    !help.err().contains("picocli WARN") && !help.out().contains("picocli WARN"),
                    c + ": " + help.err());
        }
        String compile = CliRun.run("compile", "--help").out().replaceAll("\\s+", " ");
        assertTrue(compile.contains("median CV between them above 25%: other machines or settings?"), compile);
    }

    /** An input error (the one carrier, InputException) exits 1 with one line naming the command once. */
    @Test
    void inputErrorsExitOneWithOneLine() {
        CliRun missing = CliRun.run("compile", "/nonexistent/sweep.csv");
        assertEquals(1, missing.exit(), missing.err());
        assertTrue(missing.err().startsWith("nccl-tuner compile: /nonexistent/sweep.csv"), missing.err());
        assertEquals(1, missing.err().lines().count(), missing.err());
        CliRun badSizes = CliRun.run("explain", "--log", "x.log", "--sizes", "1MiB:4KiB");
        assertEquals(2, badSizes.exit(), badSizes.err()); // an option value: a usage error
        assertEquals(
                "nccl-tuner explain: --sizes: '1MiB:4KiB' needs 0 < FROM <= TO\nsee 'nccl-tuner explain --help'\n",
                badSizes.err());
        for (CliRun r : new CliRun[] {missing, badSizes}) {
            assertTrue(!r.err().contains("compile: compile:") && !r.err().contains("explain: explain:"), r.err());
        }
    }

    @Test
    void uncaughtExceptionsExitSeventyWithOneLine() {
        CommandLine cl = Main.commandLine();
        cl.addSubcommand(new Boom());
        StringWriter err = new StringWriter();
        cl.setErr(new PrintWriter(err, true));
        assertEquals(70, cl.execute("boom"));
        assertEquals(
                "nccl-tuner: internal error: java.lang.IllegalStateException: kaput (NCCL_TUNER_DEBUG=1 prints the "
                        + "stack trace)\n",
                err.toString());
    }

    @Test
    void debugAddsTheStackTrace() {
        StringWriter err = new StringWriter();
        assertEquals(70, Main.internalError(new OutOfMemoryError("Java heap space"), new PrintWriter(err, true), true));
        String[] lines = err.toString().split("\n");
        assertEquals("nccl-tuner: internal error: java.lang.OutOfMemoryError: Java heap space", lines[0]);
        assertTrue(lines[1].startsWith("java.lang.OutOfMemoryError: Java heap space"), err.toString());
        assertTrue(lines[2].startsWith("\tat io.nccltuner.cli.MainTest.debugAddsTheStackTrace"), err.toString());
    }
}
