package io.nccltuner.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 21 item 8 of nccl-tuner-java: a measurement row that cannot be read is never dropped
 * silently. Each fixture is written here from one of the test tree's inputs with one row changed:
 * the 8-rank, 2-node H200 nccl-tests output of {@code compile/frictions/} (line 20 is its unforced
 * 1 MiB row) and the 2-rank H200 sweep CSV (line 3 is NCCL's own pick at 8 B).
 */
@Timeout(240)
class UnreadRowsTest {
    @TempDir
    Path tmp;

    static final String H200 = CompileFrictionsTest.H200;
    static final String SWEEP = CliRun.fixture("h200-2rank-sweep_allreduce.rep1.csv");
    static final String UNFORCED_1MIB = "     1048576        262144     float     sum      -1    60.00";

    /** The H200 nccl-tests output with its unforced 1 MiB row's size written as {@code size}. */
    private Path nt(String name, String size) throws Exception {
        String text = Files.readString(Path.of(H200));
        assertTrue(text.contains(UNFORCED_1MIB));
        Path f = tmp.resolve(name);
        Files.writeString(
                f, text.replaceFirst(UNFORCED_1MIB, String.format("%12s", size) + UNFORCED_1MIB.substring(12)));
        assertEquals(size, Files.readAllLines(f).get(19).strip().split("\\s+")[0]);
        return f;
    }

    /** The sweep CSV with field {@code field} (0-based) of line 3 set to {@code value}. */
    private Path sweep(String name, int field, String value) throws Exception {
        java.util.List<String> lines = new java.util.ArrayList<>(Files.readAllLines(Path.of(SWEEP)));
        String[] f = lines.get(2).split(",", -1);
        f[field] = value;
        lines.set(2, String.join(",", f));
        Path p = tmp.resolve(name);
        Files.write(p, lines);
        return p;
    }

    /**
     * A size of -1048576 bytes in nccl-tests output was no row at all (it does not start with a
     * digit): it vanished, --strict passed, and 1 MiB had "no unforced run" with no word why. Now it is
     * a mangled row, warned with file:line, counted, and refused by --strict.
     */
    @Test
    void aNegativeSizeInNcclTestsOutputIsAMangledRow() throws Exception {
        String f = nt("neg.txt", "-1048576").toString();
        String why = f + ":20: size '-1048576' is not a size: nccl-tests prints whole numbers of bytes, 0 or more";
        CliRun r = CliRun.run("compile", f, "--summary");
        assertEquals(0, r.exit(), r.err());
        assertEquals(
                "nccl-tuner compile: warning: skipped 1 mangled row (listed under refused rows in the report); "
                        + "--strict refuses the file instead\n",
                r.err());
        // counted on stderr (above), listed under refused rows; the summary points at the list
        assertFalse(r.out().contains("mangled row"), r.out());
        assertTrue(r.out().contains("\nbelow: 1 refused row"), r.out());
        assertTrue(r.out().contains("\n  " + why + "; row skipped (--strict refuses the file)\n"), r.out());

        CliRun strict = CliRun.run("compile", "--strict", f);
        assertEquals(1, strict.exit(), strict.err());
        assertEquals("nccl-tuner compile: " + why + "\n", strict.err());

        CliRun plus =
                CliRun.run("compile", "--strict", nt("plus.txt", "+1048576").toString());
        assertEquals(1, plus.exit(), plus.err());
        assertTrue(plus.err().contains(":20: size '+1048576' is not a size: "), plus.err());
    }

    /**
     * A sweep CSV with its header and no rows (an interrupted sweep) was refused as "inputs: no usable
     * measurements", naming no file; now the file, and that it holds a header and no rows.
     */
    @Test
    void aCsvWithItsHeaderAndNoRowsIsRefusedNamingIt() throws Exception {
        Path h = CliRun.write(tmp, "h.csv", Files.readAllLines(Path.of(SWEEP)).getFirst() + "\n# interrupted\n\n");
        CliRun r = CliRun.run("compile", h.toString());
        assertEquals(1, r.exit(), r.err());
        assertEquals(
                "nccl-tuner compile: " + h + ": the header (line 1) and no rows: no measurements in this file (an "
                        + "interrupted sweep or a cut copy leaves this; measure again or give the complete file)\n",
                r.err());
        // another command's --measurements names it likewise
        CliRun replay = CliRun.run(
                "replay",
                "--trace",
                CliRun.trace("trace_tp_infer.csv"),
                "--policy",
                NewcomerPathTest.MEASURED_POLICY,
                "--measurements",
                h.toString());
        assertEquals(1, replay.exit(), replay.err());
        assertTrue(replay.err().contains(h + ": the header (line 1) and no rows: "), replay.err());
    }

    /**
     * Digits of other scripts look like numbers and were read as such by the sizes (Long.parseLong
     * takes {@code ٦٤} for 64), while the time columns refused them: only ASCII digits are numbers
     * now, in sizes, times and NCCL's channel variables alike; such a row is mangled.
     */
    @Test
    void sizesInDigitsOtherThanAsciiAreMangledRows() throws Exception {
        String ascii = " (only ASCII digits 0-9 are read as numbers)";
        Path csv = sweep("ar.csv", 1, "٦٤");
        CliRun strict = CliRun.run("compile", "--strict", csv.toString());
        assertEquals(1, strict.exit(), strict.err());
        assertEquals(
                "nccl-tuner compile: " + csv + ":3: size_bytes '٦٤' is not a whole number" + ascii + "\n",
                strict.err());
        CliRun lax = CliRun.run("compile", csv.toString(), "--summary");
        assertEquals(0, lax.exit(), lax.err());
        assertEquals(
                "nccl-tuner compile: warning: skipped 1 mangled row (listed under refused rows in the report); "
                        + "--strict refuses the file instead\n",
                lax.err());
        assertTrue(
                lax.out()
                        .contains("\n  " + csv + ":3: size_bytes '٦٤' is not a whole number" + ascii
                                + "; row skipped (--strict refuses the file)\n"),
                lax.out());
        Path full = sweep("fw.csv", 9, "１２３");
        CliRun time = CliRun.run("compile", "--strict", full.toString());
        assertEquals(1, time.exit(), time.err());
        assertEquals(
                "nccl-tuner compile: " + full + ":3: median_us '１２３' is not a time: times must be finite numbers > 0 us"
                        + ascii + "\n",
                time.err());

        Path nt = nt("ar.txt", "١٠٤٨٥٧٦");
        CliRun tests = CliRun.run("compile", "--strict", nt.toString());
        assertEquals(1, tests.exit(), tests.err());
        assertEquals(
                "nccl-tuner compile: " + nt + ":20: size '١٠٤٨٥٧٦' is not a whole number of bytes" + ascii + "\n",
                tests.err());

        Path env = tmp.resolve("ch.txt");
        Files.writeString(
                env,
                Files.readString(Path.of(H200))
                        .replace(
                                "NCCL_PROTO set by environment to LL\n",
                                "NCCL_PROTO set by environment to LL\nh200-a:5100:5100 [0] NCCL INFO NCCL_MAX_NCHANNELS "
                                        + "set by environment to ٨\n"));
        CliRun ch = CliRun.run("compile", env.toString());
        assertEquals(1, ch.exit(), ch.err());
        assertEquals(
                "nccl-tuner compile: " + env + ":42: NCCL_MAX_NCHANNELS is '٨', not a channel count" + ascii + "\n",
                ch.err());
    }

    /** The two lines every command but compile prints for line 3 of {@code bad}, its median NaN. */
    private static String skipped(Path bad) {
        return "warning: " + bad + ":3: median_us 'NaN' is not a time: times must be finite numbers > 0 us; row "
                + "skipped, the other rows are read\n"
                + "note: " + bad + ": skipped 1 mangled row (" + bad + ":3): the wrong number of fields or a field "
                + "that is not a number, as a row cut by an NCCL line or another print leaves it\n";
    }

    /**
     * A mangled row of a file given to {@code report}, {@code replay}, {@code explain} and {@code try
     * --measurements} was dropped without a word (compile listed it): the shared reader,
     * {@link InputFiles#readMeasurementsAt}, now warns of each with file:line and why, and counts them.
     */
    @Test
    void everyCommandReadingMeasurementsNamesTheRowItSkipped() throws Exception {
        Path bad = sweep("bad.csv", 9, "NaN");
        String policy = NewcomerPathTest.MEASURED_POLICY;
        CliRun compile = CliRun.run("compile", bad.toString(), "--summary");
        assertEquals(
                "nccl-tuner compile: warning: skipped 1 mangled row (listed under refused rows in the report); "
                        + "--strict refuses the file instead\n",
                compile.err());
        assertTrue(
                compile.out()
                        .contains("\n  " + bad + ":3: median_us 'NaN' is not a time: times must be finite numbers > 0 "
                                + "us; row skipped (--strict refuses the file)\n"),
                compile.out());

        CliRun report =
                CliRun.run("report", ReportCommandTest.res("price-64k.jsonl"), "--measurements", bad.toString());
        assertEquals(0, report.exit(), report.err());
        assertEquals(skipped(bad), report.err());

        CliRun replay = CliRun.run(
                "replay",
                "--trace",
                CliRun.trace("trace_tp_infer.csv"),
                "--policy",
                policy,
                "--measurements",
                bad.toString());
        assertEquals(0, replay.exit(), replay.err());
        assertEquals(skipped(bad), replay.err());

        CliRun explain = CliRun.run(
                "explain",
                "--log",
                CliRun.trace("nccl_sweep.rank0.log"),
                "--sizes",
                "64KiB",
                "--measurements",
                bad.toString());
        assertEquals(0, explain.exit(), explain.err());
        assertTrue(explain.err().startsWith(skipped(bad)), explain.err());

        // a folder's files: each row named, counted under the folder
        Path dir = Files.createDirectories(tmp.resolve("m"));
        Files.copy(bad, dir.resolve("bad.csv"));
        CliRun folder = CliRun.run(
                "replay",
                "--trace",
                CliRun.trace("trace_tp_infer.csv"),
                "--policy",
                policy,
                "--measurements",
                dir.toString());
        assertEquals(0, folder.exit(), folder.err());
        assertEquals(
                skipped(dir.resolve("bad.csv"))
                        .replace("note: " + dir.resolve("bad.csv") + ": skipped", "note: " + dir + ": skipped"),
                folder.err());

        CliRun tried = CliRun.tryRun(
                "--policy", policy, "--trace", CliRun.trace("trace_tp_infer.csv"), "--measurements", bad.toString());
        assertEquals(0, tried.exit(), tried.err());
        assertTrue(tried.err().contains(skipped(bad)), tried.err());
    }

    /** calibrate reads a sweep folder as compile does, and names the row it skipped likewise. */
    @Test
    void calibrateNamesTheRowItSkipped() throws Exception {
        Path src = Path.of(CalibrateCommandTest.sweep("sweep-2nodes"));
        Path s = tmp.resolve("s2");
        try (var files = Files.walk(src)) {
            for (Path p : files.toList()) {
                Files.copy(p, s.resolve(src.relativize(p).toString()));
            }
        }
        Path run = s.resolve("runs/all_reduce_RING-LL_r1.txt");
        java.util.List<String> lines = new java.util.ArrayList<>(Files.readAllLines(run));
        String row = "          32             8     float     sum      -1    39.19    0.00    0.00      0    41.00";
        assertTrue(lines.get(61).startsWith(row), lines.get(61));
        lines.set(61, lines.get(61).replace("0.00      0    41.00", "0.00      x    41.00"));
        Files.write(run, lines);
        CliRun r = CliRun.run("calibrate", s.toString(), "--no-match-gpu");
        assertEquals(0, r.exit(), r.err());
        assertEquals(
                "warning: " + run + ":62: #wrong (out-of-place) 'x' is not a number; row skipped, the other rows are "
                        + "read\n"
                        + "note: " + s + ": skipped 1 mangled row (" + run
                        + ":62): the wrong number of fields or a field "
                        + "that is not a number, as a row cut by an NCCL line or another print leaves it\n",
                r.err());
    }

    /** A row of wrong results is counted too (its line named), where compile lists it among refused rows. */
    @Test
    void wrongResultsAreCountedWhereTheMeasurementsPriceCalls() throws Exception {
        Path wrong = sweep("wrong.csv", 12, "3");
        CliRun replay = CliRun.run(
                "replay",
                "--trace",
                CliRun.trace("trace_tp_infer.csv"),
                "--policy",
                NewcomerPathTest.MEASURED_POLICY,
                "--measurements",
                wrong.toString());
        assertEquals(0, replay.exit(), replay.err());
        assertEquals("note: " + wrong + ": 1 row with wrong results not used (" + wrong + ":3)\n", replay.err());
    }
}
