package io.nccltuner.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nccltuner.compile.SvgChart;
import io.nccltuner.sweep.FakeNcclTestsBinary;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The ninth newcomer walk (after the eighth's fixes): what compile and sweep said twice, advice
 * on NVIDIA-style CSV boundaries that did not say it moves the 65536-byte calls, the top-level
 * help's exit-code 3 text, and a narrow-range chart with one y label. Each test asserts what the
 * CLI prints now; its comment says what it printed before. The two-machine inputs are written
 * here from nccl-tests' format: 2 ranks on one node, NCCL's own pick and a run forced to RING/LL
 * by NCCL's {@code set by environment} lines, at 1, 2 and 4 MiB, on an H200 and an H100.
 */
@Timeout(240)
class NewcomerEighthWalkCompileRepeatsTest {
    @TempDir
    Path tmp;

    /** One nccl-tests table of 2 ranks on host {@code h} with {@code gpu}, forced to RING/LL or not. */
    private static String table(String gpu, boolean forced, double... times) {
        StringBuilder sb = new StringBuilder();
        sb.append("# nccl-tests version 2.18.3 nccl-headers=22809 nccl-library=22809\n")
                .append("# Collective test starting: all_reduce_perf\n")
                .append("# nThread 1 nGpus 1 minBytes 1048576 maxBytes 4194304 step: 2(factor) warmup iters: 5 "
                        + "iters: 20 agg iters: 1 validation: 1 graph: 0\n#\n# Using devices\n")
                .append("#  Rank  0 Group  0 Pid  5000 on          h device  0 [0x18] ")
                .append(gpu)
                .append("\n#  Rank  1 Group  0 Pid  5001 on          h device  1 [0x19] ")
                .append(gpu)
                .append("\nh:5000:5000 [0] NCCL INFO NCCL version 2.28.9+cuda12.9\n");
        if (forced) {
            sb.append("h:5000:5000 [0] NCCL INFO NCCL_ALGO set by environment to Ring\n")
                    .append("h:5000:5000 [0] NCCL INFO NCCL_PROTO set by environment to LL\n");
        }
        sb.append("h:5000:5000 [0] NCCL INFO comm 0x55d0c8a0 rank 0 nRanks 2 nNodes 1 localRanks 2 localRank 0 "
                        + "MNNVL 0\n#\n")
                .append("#                                                              out-of-place                "
                        + "       in-place\n")
                .append("#       size         count      type   redop    root     time   algbw   busbw #wrong     time"
                        + "   algbw   busbw #wrong\n")
                .append("#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)"
                        + "  (GB/s)  (GB/s)\n");
        long size = 1 << 20;
        for (double t : times) {
            double bw = size / t / 1e3; // GB/s; busbw = algbw at 2 ranks
            String half = String.format(Locale.ROOT, "%8.2f %7.2f %7.2f %6d", t, bw, bw, 0);
            sb.append(String.format(Locale.ROOT, "%12d  %12d     float     sum      -1 ", size, size / 4))
                    .append(half)
                    .append(' ')
                    .append(half)
                    .append('\n');
            size *= 2;
        }
        return sb.append("# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 30.0\n#\n")
                .toString();
    }

    /** A file of NCCL's own pick and a RING/LL run that wins at every size, on {@code gpu}. */
    private Path machine(String name, String gpu) throws Exception {
        return CliRun.write(tmp, name, table(gpu, false, 60, 100, 180) + table(gpu, true, 40, 70, 120));
    }

    private static int count(String text, String part) {
        return text.split(Pattern.quote(part), -1).length - 1;
    }

    /**
     * Friction 1: one shape on two machines. Before: {@code the last rule (AllReduce nRanks=2
     * nNodes=1) ends at 5 MiB, past the largest measured size 4 MiB ...} twice, identically, and
     * the one-run note on every group's line. Now each once; the second group says {@code (one run
     * each, as above)}.
     */
    @Test
    void twoMachinesSayThePastLargestLineAndTheOneRunNoteOnce() throws Exception {
        Path h200 = machine("h200_all_reduce.txt", "NVIDIA H200");
        Path h100 = machine("h100_all_reduce.txt", "NVIDIA H100 80GB HBM3");
        CliRun r = CliRun.run("compile", h200.toString(), h100.toString(), "--summary");
        assertEquals(0, r.exit(), r.err());
        String past = "the last rule (AllReduce nRanks=2 nNodes=1) ends at 5 MiB, past the largest measured size 4 MiB:"
                + " the last measured size governs its own size-grid bucket [4 MiB, 5 MiB) (docs/compile.md); measure"
                + " larger sizes (-e) to cover more\n";
        assertTrue(r.out().contains("\n" + past), r.out());
        assertEquals(1, count(r.out(), "the last rule ("), r.out());
        String note = " (one run each, so no margin against noise but the jumps between neighbouring sizes; repeat"
                + " each run 3+ times for one)\n";
        assertEquals(1, count(r.out(), "one run each, so no margin"), r.out());
        assertTrue(
                r.out()
                        .contains("\nAllReduce, nRanks 2, nNodes 1, numPipeOps 1, NVIDIA H100 80GB HBM3, NCCL 2.28.9: 3"
                                + " sizes, 1 candidate, 1 replicate per configuration" + note),
                r.out());
        assertTrue(
                r.out()
                        .contains("\nAllReduce, nRanks 2, nNodes 1, numPipeOps 1, NVIDIA H200, NCCL 2.28.9: 3 sizes, 1"
                                + " candidate, 1 replicate per configuration (one run each, as above)\n"),
                r.out());
    }

    /**
     * Friction 1: a 0-rule compile. Before: {@code policy not written: ...} first on stdout and
     * last on stderr, the same sentence. Now in full atop the report; stderr's error line points at it.
     */
    @Test
    void aZeroRuleCompileSaysPolicyNotWrittenInFullOnce() {
        Path yaml = tmp.resolve("p.yaml");
        CliRun r = CliRun.run("compile", CliRun.fixture("plain-all_reduce_auto.txt"), "-o", yaml.toString());
        assertEquals(1, r.exit(), r.err());
        assertTrue(
                r.out()
                        .startsWith("policy not written: no input measured a forced candidate (every run counts as"
                                + " NCCL's own pick), so the policy would have no rules. Say what each file forced:"
                                + " --in FILE --algo X --proto Y (or give NCCL_DEBUG=INFO output, whose 'set by"
                                + " environment' lines say it); --allow-empty writes the empty policy\n"),
                r.out());
        assertEquals("nccl-tuner compile: policy not written (see above)\n", r.err());
        assertEquals(1, count(r.out() + r.err(), "no input measured a forced candidate (every run"), r.out());
        assertFalse(Files.exists(yaml));
    }

    /** Friction 1. Before: the --workload warning on stderr and again among the report's warnings. */
    @Test
    void theWorkloadWarningPrintsOnce() {
        String trace = CompileFrictionsTest.fx("trace_allreduce_2ranks-2nodes.csv");
        CliRun r = CliRun.run("compile", CompileFrictionsTest.H200, "--workload", trace, "--summary");
        assertEquals(0, r.exit(), r.err());
        assertEquals("", r.err()); // the workload's: not there
        String w = "--workload " + trace + ": its 4 calls (AllReduce at nRanks=2 nNodes=2: 4) match no measured group"
                + " (AllReduce at nRanks=8 nNodes=2): its weights are not applied, no call of it is priced";
        assertTrue(r.out().contains("\n  " + w + "\n"), r.out());
        assertEquals(1, count(r.out(), w), r.out());
        // the workload's alone: the unforced run is the note on stderr, not a warning (issue 21)
        assertTrue(r.out().contains("\nbelow: 1 warning\n"), r.out());
    }

    /**
     * Friction 1. Before: mangled rows counted on stderr, counted again in the summary ({@code
     * skipped 2 mangled rows: the wrong number of fields ...}) and listed. Now the stderr count and
     * the list; the summary's {@code below:} line points at the list.
     */
    @Test
    void mangledRowsAreCountedOnStderrAndListedOnce() {
        String f = CliRun.fixture("mangled-mid-file_all_reduce.txt");
        CliRun r = CliRun.run("compile", f, "--summary");
        assertEquals(0, r.exit(), r.err());
        assertEquals(
                "nccl-tuner compile: warning: skipped 2 mangled rows (listed under refused rows in the report); "
                        + "--strict refuses the file instead\n",
                r.err());
        assertFalse(r.out().contains("mangled rows"), r.out());
        assertTrue(r.out().contains("\nbelow: 2 refused rows\n"), r.out());
        assertTrue(
                r.out().contains("\nrefused rows (wrong results or mangled, never used): 2\n  " + f + ":13: "),
                r.out());
        assertEquals(1, count(r.out(), f + ":13:"), r.out());
    }

    /**
     * Friction 2. Before: {@code write max_bytes 65535 to end it at 64 KiB} and {@code write
     * min_bytes 65536 to start it at 64 KiB}, not saying that this moves the 65536-byte calls to
     * the second line. Now it says so, and that as is they stay on the first line, as in NCCL.
     */
    @Test
    void theBoundaryAdviceSaysWhereThe65536ByteCallsGo() throws Exception {
        Path conf = CliRun.write(
                tmp,
                "nccl_tuner.conf",
                "allreduce,0,65536,ring,ll,-1,-1,-1\nallreduce,65537,4294967295,ring,simple,-1,-1,-1\n");
        Path yaml = tmp.resolve("imported.yaml");
        CliRun r = CliRun.run("import", conf.toString(), "-o", yaml.toString());
        assertEquals(0, r.exit(), r.err());
        assertEquals(
                "warning: " + conf + ":1: bytes 0..65536 (inclusive) is not on the size grid; rounded to [0 B, 80"
                        + " KiB): sizes 65537..81919 B follow this line too; write max_bytes 65535 to end it at 64"
                        + " KiB, but the 65536 B calls then leave it (as is, they stay on this line, as in NCCL)\n"
                        + "warning: " + conf + ":2: bytes 65537..4294967295 (inclusive) is not on the size grid;"
                        + " rounded to [80 KiB, 4 GiB): sizes 65537..81919 B no longer follow this line; write"
                        + " min_bytes 65536 to start it at 64 KiB, but the 65536 B calls then join it (as is, they"
                        + " stay off this line, as in NCCL)\n",
                r.err());
        // as is, 65536 B stays with line 1's algorithm, as in NCCL
        assertTrue(r.out().contains("\n    AllReduce [0 B, 80 KiB): RING/LL\n"), r.out());
    }

    /** Friction 4. Before: the seed only on the sweep's first and last lines. Now every 10th progress line too. */
    @Test
    void everyTenthProgressLineCarriesTheSeed() throws Exception {
        Path d = Files.createDirectories(tmp.resolve("fakent"));
        FakeNcclTestsBinary.write(d.resolve("all_reduce_perf"), "", "all_reduce_perf", "10.0");
        Path dir = tmp.resolve("sw");
        CliRun r = CliRun.run(
                "sweep",
                "-o",
                dir.toString(),
                "--tests-dir",
                d.toString(),
                "--plugin",
                FakeNcclTestsBinary.plugin(tmp).toString(),
                "--candidate",
                "RING/LL",
                "--replicates",
                "5",
                "-b",
                "1K",
                "-e",
                "1K",
                "--seed",
                "7");
        assertEquals(0, r.exit(), r.err());
        List<String> progress =
                r.err().lines().filter(l -> l.matches("sweep: \\d+/10 .*")).toList();
        assertEquals(10, progress.size(), r.err());
        for (int i = 0; i < 9; i++) {
            assertFalse(progress.get(i).contains("seed"), progress.get(i));
        }
        assertTrue(
                progress.get(9)
                        .matches("sweep: 10/10 all_reduce \\S+ r\\d: ok in \\d+\\.\\d s; elapsed .+, ETA .+; seed 7"),
                progress.get(9));
    }

    /** Friction 5. Before: {@code 3 the ranks of some shape run different tables ... (report, whether or not it checks on request, ...)}. */
    @Test
    void theTopLevelHelpSaysExitCodeThreeShortly() {
        CliRun r = CliRun.run("--help");
        assertEquals(0, r.exit(), r.err());
        assertTrue(
                r.out()
                        .replaceAll("\\s+", " ")
                        .contains("Exit codes: 0 done, 1 an input error, 2 a usage error, 3 the ranks disagree: ranks"
                                + " of one shape ran different tables or decisions (report and try, after the"
                                + " report), 70 an internal error."),
                r.out());
    }

    /**
     * Friction 6. Before: a chart whose busbw spans about one decade had one y label ({@code 100
     * GB/s}): its 1 .. 9 x 10^k ticks were more than 8, so only the powers of ten were kept. Now
     * 1, 2 and 5 x 10^k.
     */
    @Test
    void aNarrowRangeChartHasThreeYLabelsOrMore() throws Exception {
        assertEquals(List.of(10.0, 20.0, 50.0), SvgChart.logTicks(0.9, 1.9));
        // busbw 10.5 .. 65.5 GB/s: about one decade
        Path narrow = CliRun.write(
                tmp,
                "narrow_all_reduce.txt",
                table("NVIDIA H200", false, 100, 100, 100) + table("NVIDIA H200", true, 90, 80, 64));
        Path html = tmp.resolve("c.html");
        CliRun r = CliRun.run("compile", narrow.toString(), "--html", html.toString(), "--summary");
        assertEquals(0, r.exit(), r.err());
        String page = Files.readString(html);
        Matcher m = Pattern.compile("text-anchor=\"end\"[^>]*>([0-9.]+ [KMGT]?B/s)<")
                .matcher(page);
        List<String> labels = m.results().map(x -> x.group(1)).toList();
        assertEquals(List.of("10 GB/s", "20 GB/s", "50 GB/s", "100 GB/s"), labels, page);
    }

    /**
     * Ninth walk: one rule among groups that got none printed every group's per-size table (422
     * lines for one rule from three public files). Now only groups with a rule print theirs, a line
     * counts the others, and {@code --verbose} prints them all.
     */
    @Test
    void groupsWithoutARulePrintTheirTablesOnlyWithVerbose() throws Exception {
        Path h200 = machine("h200_all_reduce.txt", "NVIDIA H200");
        Path h100 = CliRun.write(tmp, "h100_all_reduce.txt", table("NVIDIA H100 80GB HBM3", false, 60, 100, 180));
        CliRun r = CliRun.run("compile", h200.toString(), h100.toString());
        assertEquals(0, r.exit(), r.err());
        String line = "per-size tables of the group without a rule: --verbose prints them\n";
        assertEquals(1, count(r.out(), line), r.out());
        CliRun v = CliRun.run("compile", h200.toString(), h100.toString(), "--verbose");
        assertEquals(0, v.exit(), v.err());
        assertEquals(0, count(v.out(), line), v.out());
        String h100Group = "AllReduce, nRanks 2, nNodes 1, numPipeOps 1, NVIDIA H100 80GB HBM3, NCCL 2.28.9:";
        String tail = r.out().substring(r.out().indexOf(h100Group));
        String vtail = v.out().substring(v.out().indexOf(h100Group));
        assertTrue(vtail.indexOf("\nrules: 0\n") > tail.indexOf("\nrules: 0\n") + 40, r.out() + "\n---\n" + v.out());
    }

    /**
     * Ninth walk: {@code --strict} did nothing for a sweep folder (its mangled row skipped, the policy
     * written, exit 0, while the warning said "--strict refuses the file"). Now the run's output is
     * refused there, exit 1, as for the same file given alone.
     */
    @Test
    void strictRefusesASweepFoldersMangledRow() throws Exception {
        Path src = CliRun.REPO.resolve("java-tools/src/test/resources/calibrate/simcluster-tune/sweep-2nodes");
        Path dir = tmp.resolve("sweep");
        Files.createDirectories(dir.resolve("runs"));
        Files.copy(src.resolve("manifest.json"), dir.resolve("manifest.json"));
        try (var runs = Files.list(src.resolve("runs"))) {
            for (Path f : runs.toList()) {
                Files.copy(f, dir.resolve("runs").resolve(f.getFileName()));
            }
        }
        Path run = dir.resolve("runs/all_reduce_RING-LL_r1.txt");
        String text = Files.readString(run);
        String mangled = text.replaceFirst("(?m)^(\\s+4\\s+1\\s+float\\s+sum\\s+-1\\s+)40\\.22", "$12o.22");
        assertFalse(text.equals(mangled), "the row to mangle is in the fixture");
        Files.writeString(run, mangled);
        CliRun lax = CliRun.run(
                "compile", dir.toString(), "-o", tmp.resolve("lax.yaml").toString());
        assertEquals(0, lax.exit(), lax.err());
        assertTrue(lax.err().contains("skipped 1 mangled row"), lax.err());
        CliRun strict = CliRun.run(
                "compile",
                dir.toString(),
                "--strict",
                "-o",
                tmp.resolve("strict.yaml").toString());
        assertEquals(1, strict.exit(), strict.out() + strict.err());
        assertTrue(strict.err().contains(run.toString()), strict.err());
        assertFalse(Files.exists(tmp.resolve("strict.yaml")), "no policy written");
    }
}
