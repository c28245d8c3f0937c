package io.nccltuner.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Mutants of the eighth walk's changes that the walk's own tests let through: compile's advice in a
 * refused compile's report and after a {@code warning:} prefix, and the report's busbw chart's
 * marks (which series is drawn last, its dot size, colours and legend rows). Each test names the
 * mutant it catches.
 */
@Timeout(240)
class EighthWalkMutantsTest {
    @TempDir
    Path tmp;

    /**
     * A refused compile (no forced candidate, {@code -o} given) prints its report too: the parser's
     * warning there says {@code pass --in FILE --nodes N}, as an accepted compile's does. Mutant:
     * the refused branch printed the report without the advice rewritten ({@code pass --nodes}).
     */
    @Test
    void aRefusedCompilesReportSaysInFileNodesN() {
        String f = CliRun.fixture("inputs/hostid-two-ranks-one-host_all_reduce.txt");
        Path yaml = tmp.resolve("p.yaml");
        CliRun r = CliRun.run("compile", f, "-o", yaml.toString());
        assertEquals(1, r.exit(), r.err());
        assertTrue(r.out().startsWith("policy not written: no input measured a forced candidate"), r.out());
        assertTrue(
                r.out()
                        .contains("would say so; pass --in " + f + " --nodes N if that is wrong\n"
                                + "per-size tables: --verbose prints them\n"),
                r.out());
        assertFalse(r.out().contains("pass --nodes"), r.out());
        assertFalse(Files.exists(yaml));
    }

    /**
     * Compile's advice names the file after the command's and the {@code warning:} prefixes, gives
     * each per-file option its value's placeholder (NAME for --collective, --algo and --proto, N
     * for the counts), and {@code FILE} where the message names no file. Mutants: the pattern
     * without the {@code warning: } prefix (the advice said {@code --in nccl-tuner compile: warning:
     * x.txt}); --proto's placeholder N; the file left as {@code FILE}.
     */
    @Test
    void compilesAdviceNamesTheFileAfterTheWarningPrefix() {
        var compile = Main.commandLine().getSubcommands().get("compile").getCommandSpec();
        assertEquals(
                "nccl-tuner compile: warning: x.txt:3: cannot tell; pass --in x.txt --nodes N",
                Main.advice(compile, "nccl-tuner compile: warning: x.txt:3: cannot tell; pass --nodes"));
        assertEquals(
                "warning: dir/y_all_reduce.txt:12: no protocol; pass --in dir/y_all_reduce.txt --proto NAME",
                Main.advice(compile, "warning: dir/y_all_reduce.txt:12: no protocol; pass --proto"));
        assertEquals(
                "  z.txt:7: no algorithm; pass --in z.txt --algo NAME",
                Main.advice(compile, "  z.txt:7: no algorithm; pass --algo"));
        assertEquals("nNodes unknown; pass --in FILE --ranks N", Main.advice(compile, "nNodes unknown; pass --ranks"));
    }

    /**
     * One mangled row: counted in the singular on stderr and listed once among the report's refused
     * rows (the summary no longer repeats it). Mutant: the count written {@code N mangled rows}
     * whatever N, or the row listed again.
     */
    @Test
    void theReportCountsOneMangledRowInTheSingular() throws Exception {
        List<String> lines = Files.readAllLines(Path.of(CliRun.fixture("mangled-mid-file_all_reduce.txt")));
        Path f = tmp.resolve("one-mangled_all_reduce.txt");
        Files.write(f, lines.stream().filter(l -> !l.contains("2o.51")).toList());
        CliRun r = CliRun.run("compile", f.toString());
        assertEquals(0, r.exit(), r.err());
        assertTrue(
                r.err()
                        .contains("nccl-tuner compile: warning: skipped 1 mangled row (listed under refused rows in"
                                + " the report); --strict refuses the file instead\n"),
                r.err());
        assertTrue(r.out().contains("refused rows (wrong results or mangled, never used): 1\n"), r.out());
        assertFalse(r.out().contains("mangled row:"), r.out());
        assertFalse(r.out().contains("1 mangled rows") || r.err().contains("1 mangled rows"), r.out() + r.err());
    }

    /**
     * Two refused {@code --in FILE}s: both named, then the count. Mutant: the {@code --in} loop
     * stopped at its first refused file (the second was never read, and the one refusal was
     * thrown alone).
     */
    @Test
    void twoRefusedInFilesAreBothNamed() throws Exception {
        Path noRows = CliRun.write(tmp, "norows_all_reduce.txt", "# nccl-tests version 2.18.5\n# nothing here\n");
        Path missing = tmp.resolve("missing_all_reduce.txt");
        CliRun r = CliRun.run("compile", "--in", noRows.toString(), "--in", missing.toString());
        assertEquals(1, r.exit(), r.err());
        assertEquals(
                "nccl-tuner compile: " + noRows + ": no nccl-tests size table found (a '#  size  count  type ...' "
                        + "header followed by rows); is this nccl-tests output?\n"
                        + "nccl-tuner compile: " + missing + ": no such file\n"
                        + "nccl-tuner compile: 2 of 2 inputs refused (each on its line above); nothing compiled\n",
                r.err());
        assertEquals("", r.out());
    }

    /**
     * The report's busbw chart: the policy's dots are drawn after NCCL's and best measured's (on top
     * where the policy's pick is the best measured), larger (r 4.5, the others 3), each series in
     * its own colour, and the three legend rows 18 apart. Mutants: the policy's dots drawn first
     * (hidden under best measured's), the larger dot given to NCCL's series, a series' colour or
     * class swapped with another's.
     */
    @Test
    void thePolicysBusbwDotsAreLargerAndOnTop() throws Exception {
        Path html = tmp.resolve("r.html");
        CliRun r = CliRun.run(
                "report",
                ReportCommandTest.res("rank-a.jsonl"),
                ReportCommandTest.res("rank-b.jsonl"),
                "--measurements",
                ChartsSeventhWalkTest.SWEEP,
                "--html",
                html.toString());
        assertEquals(Main.EXIT_CHECK, r.exit(), r.err());
        String svg = ChartsSeventhWalkTest.busbwSvg(Files.readString(html));
        List<String> dots = new ArrayList<>();
        Matcher m = Pattern.compile("<circle class=\"(busbw-[a-z]+)\" cx=\"[0-9.]+\" cy=\"[0-9.]+\" r=\"([0-9.]+)\" "
                        + "fill=\"(#[0-9a-f]{6})\">")
                .matcher(svg);
        while (m.find()) {
            dots.add(m.group(1) + " r=" + m.group(2) + " " + m.group(3));
        }
        assertEquals(52, dots.size(), svg);
        assertEquals(25, dots.stream().filter("busbw-best r=3 #2e7d32"::equals).count(), dots.toString());
        assertEquals(25, dots.stream().filter("busbw-nccl r=3 #ef6c00"::equals).count(), dots.toString());
        // the policy's two dots last of all, larger
        assertEquals(
                List.of("busbw-policy r=4.5 #6a1b9a", "busbw-policy r=4.5 #6a1b9a"),
                dots.subList(50, 52),
                dots.toString());
        // best measured first, then NCCL's
        assertEquals("busbw-best r=3 #2e7d32", dots.getFirst(), dots.toString());
        assertEquals("busbw-nccl r=3 #ef6c00", dots.get(25), dots.toString());
        // the legend: NCCL's row first, then the policy's, then best's, 18 apart (written in the order drawn)
        List<String> legend = new ArrayList<>();
        Matcher l = Pattern.compile(
                        "<text class=\"legend\" x=\"[0-9]+\" y=\"([0-9]+)\" font-size=\"12\">([^<]*)</text>")
                .matcher(svg);
        while (l.find()) {
            legend.add(l.group(1) + " " + l.group(2));
        }
        assertEquals(List.of("70 best measured", "34 NCCL's pick", "52 policy's pick"), legend, svg);
    }
}
