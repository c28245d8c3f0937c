package io.nccltuner.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * Issue 21 (sixth walk), item 6: {@code nccl-tuner --help} and each command's {@code --help} at
 * picocli's 80 columns: no line is wider, the sweep's synopsis wraps between options (it broke
 * {@code [--candidate=ALGO/PROTO} from {@code [/N]]...}) and names its nccl-tests options' values
 * ({@code -b=SIZE}, not {@code -b=<minBytes>}), every option a help text names exists, and the top
 * level says where to go next.
 */
class HelpTextTest {
    private static final List<String> COMMANDS = List.of(
            "compile", "calibrate", "import", "explain", "replay", "sweep", "validate", "show", "report", "try");

    private static String help(String... args) {
        CliRun r = CliRun.run(args);
        assertEquals(0, r.exit(), String.join(" ", args) + ": " + r.err());
        return r.out();
    }

    @Test
    void noHelpLineIsWiderThan80Columns() {
        List<String[]> all = new java.util.ArrayList<>();
        all.add(new String[] {"--help"});
        COMMANDS.forEach(c -> all.add(new String[] {c, "--help"}));
        for (String[] a : all) {
            for (String l : help(a).lines().toList()) {
                assertTrue(l.length() <= 80, String.join(" ", a) + ": " + l.length() + " columns: " + l);
            }
        }
    }

    @Test
    void theSweepsSynopsisWrapsBetweenOptionsAndNamesTheValues() {
        String h = help("sweep", "--help");
        List<String> lines = h.lines().toList();
        assertEquals("Usage: nccl-tuner sweep -o DIR [--algorithms ALGO,... --protocols PROTO,...]", lines.get(0));
        assertEquals("                        [--candidate ALGO/PROTO[/N]]... [OPTION...]", lines.get(1));
        assertEquals("Measure candidates with nccl-tests, through the plugin's force mode, into a", lines.get(2));
        assertFalse(h.matches("(?s).*=<[a-zA-Z]+>.*"), h);
        assertTrue(lines.contains("  -b, --min-bytes=SIZE      nccl-tests -b, bytes as nccl-tests (64M) or a"), h);
        // the command list shows the first description line
        assertTrue(
                help("--help")
                        .contains("  sweep      Measure candidates with nccl-tests, through the plugin's force\n"
                                + "               mode, into a folder compile reads.\n"),
                help("--help"));
    }

    @Test
    void theTopLevelHelpSaysWhereToGoNext() {
        assertTrue(
                help("--help")
                        .replaceAll("\\s+", " ")
                        .endsWith(" 'nccl-tuner COMMAND --help' lists a command's options. " + Main.EXIT_CODES
                                + " README.md and docs/ (in the distribution's folder) say how the commands fit"
                                + " together. "),
                help("--help"));
        // the exit codes it names are Main's
        assertEquals(3, Main.EXIT_CHECK);
        assertEquals(70, Main.EXIT_INTERNAL);
    }

    /** Every {@code --option} a command's help names is one of its own (srun's in sweep's example aside). */
    @Test
    void everyOptionAHelpNamesExists() {
        Pattern opt = Pattern.compile("(?<![\\w-])--[a-z][a-z0-9-]*");
        for (String c : COMMANDS) {
            CommandLine cl = Main.commandLine().getSubcommands().get(c);
            Set<String> unknown = new TreeSet<>();
            Matcher m = opt.matcher(help(c, "--help"));
            while (m.find()) {
                if (cl.getCommandSpec().findOption(m.group()) == null
                        && !m.group().equals("--ntasks-per-node")) {
                    unknown.add(m.group());
                }
            }
            assertEquals(Set.of(), unknown, c);
        }
        Matcher m = opt.matcher(help("--help"));
        while (m.find()) {
            assertTrue(
                    m.group().equals("--help")
                            || m.group().equals("--version")
                            || m.group().equals("--check"),
                    m.group());
        }
        assertTrue(Main.commandLine()
                        .getSubcommands()
                        .get("report")
                        .getCommandSpec()
                        .findOption("--check")
                != null);
    }
}
