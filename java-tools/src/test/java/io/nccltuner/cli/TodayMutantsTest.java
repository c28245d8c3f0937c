package io.nccltuner.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.nccltuner.compile.Repeats;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** Mutation tests of today's java-tools changes: folded warnings, the ASCII converter, sweep's ranges. */
class TodayMutantsTest {
    /** A warning two files draw is folded with its file written FILE, as for three or more. */
    @Test
    void aWarningOfTwoFilesNamesNeitherInItsMessage() {
        assertEquals(
                List.of("FILE: nNodes 2 counted (2 files: a.txt:18, b.txt:18)"),
                Repeats.perFile(List.of("a.txt:18: a.txt: nNodes 2 counted", "b.txt:18: b.txt: nNodes 2 counted")));
    }

    /** The converter takes the whole range of the type, the smallest value included, and surrounding blanks. */
    @Test
    void theAsciiConverterTakesTheTypesWholeRange() {
        assertEquals(Integer.MIN_VALUE, Main.asciiWhole("-2147483648", "an int", Integer.MIN_VALUE, Integer.MAX_VALUE));
        assertEquals(Integer.MAX_VALUE, Main.asciiWhole("2147483647", "an int", Integer.MIN_VALUE, Integer.MAX_VALUE));
        assertEquals(
                Long.MIN_VALUE,
                Main.asciiWhole(String.valueOf(Long.MIN_VALUE), "a long", Long.MIN_VALUE, Long.MAX_VALUE));
        assertEquals(2, Main.asciiWhole(" 2 ", "an int", Integer.MIN_VALUE, Integer.MAX_VALUE));
        assertEquals(
                "'2147483648' is not an int: outside -2147483648..2147483647",
                assertThrows(
                                CommandLine.TypeConversionException.class,
                                () -> Main.asciiWhole("2147483648", "an int", Integer.MIN_VALUE, Integer.MAX_VALUE))
                        .getMessage());
    }

    /** Each sweep option's largest value passes the range checks (the checks are inclusive). */
    @Test
    void sweepTakesEachOptionsLargestValue(@TempDir Path dir) {
        String[][] cases = {
            {"-f", "1024"},
            {"-n", "1000000"},
            {"-w", "1000000"},
            {"-g", "1024"},
            {"-c", "1000000"},
            {"--timeout", "604800"}
        };
        for (String[] c : cases) {
            CliRun r = CliRun.run(
                    "sweep",
                    "-o",
                    dir.resolve("sw").toString(),
                    "--algorithms",
                    "RING",
                    "--protocols",
                    "LL",
                    "--dry-run",
                    c[0],
                    c[1]);
            assertNotEquals(Main.EXIT_USAGE, r.exit(), c[0] + " " + c[1] + ": " + r.err());
            assertFalse(r.err().contains("is outside"), r.err());
        }
    }

    /** A decision log's nBytes of 2^64 is refused, 2^64 - 1 read; channels 64 read, 65 refused. */
    @Test
    void decisionLogRangesIncludeTheirLargestValue() throws Exception {
        var m = new com.fasterxml.jackson.databind.ObjectMapper();
        assertEquals(
                -1L,
                io.nccltuner.report.DecisionLogFile.bytes(
                        m.readTree("{\"nBytes\":18446744073709551615}"), "nBytes", "l:1"));
        assertEquals(
                "l:1: nBytes 18446744073709551616 is not a size in bytes (a whole number 0..18446744073709551615)",
                assertThrows(
                                io.nccltuner.policy.InputException.class,
                                () -> io.nccltuner.report.DecisionLogFile.bytes(
                                        m.readTree("{\"nBytes\":18446744073709551616}"), "nBytes", "l:1"))
                        .getMessage());
    }

    /** One line of an unknown type is "1 line", and a measured line of 64 channels is read. */
    @Test
    void oneUnknownLineAndSixtyFourChannels(@TempDir Path dir) throws Exception {
        Path src = Path.of(
                TodayMutantsTest.class.getResource("/report/rank-c.jsonl").toURI());
        List<String> lines = new java.util.ArrayList<>(java.nio.file.Files.readAllLines(src));
        List<String> one = new java.util.ArrayList<>(lines);
        one.add("{\"type\":\"frob\",\"x\":1}");
        Path f = dir.resolve("one.jsonl");
        java.nio.file.Files.write(f, one);
        CliRun r = CliRun.run("report", f.toString());
        assertEquals(Main.EXIT_OK, r.exit(), r.err());
        org.junit.jupiter.api.Assertions.assertTrue(
                r.err().contains(f + ":" + (lines.size() + 1) + ": 1 line of an unknown type ('frob' first) skipped"),
                r.err());
        int at = -1;
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).contains("\"channels\":")) {
                at = i;
                break;
            }
        }
        org.junit.jupiter.api.Assumptions.assumeTrue(at >= 0, "rank-c.jsonl has a line with channels");
        List<String> ch = new java.util.ArrayList<>(lines);
        ch.set(at, ch.get(at).replaceFirst("\"channels\":\\d+", "\"channels\":64"));
        Path g = dir.resolve("ch.jsonl");
        java.nio.file.Files.write(g, ch);
        CliRun r64 = CliRun.run("report", g.toString());
        assertFalse(r64.err().contains("is outside"), r64.err());
        ch.set(at, ch.get(at).replaceFirst("\"channels\":\\d+", "\"channels\":65"));
        java.nio.file.Files.write(g, ch);
        CliRun r65 = CliRun.run("report", g.toString());
        assertEquals(Main.EXIT_INPUT, r65.exit(), r65.err());
        org.junit.jupiter.api.Assertions.assertTrue(
                r65.err().contains(g + ":" + (at + 1) + ": channels 65 is outside 0..64"), r65.err());
    }
}
