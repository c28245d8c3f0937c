package io.nccltuner.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nccltuner.compile.Repeats;
import io.nccltuner.compile.SvgChart;
import io.nccltuner.sweep.FakeNcclTestsBinary;
import io.nccltuner.sweep.Sweep;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The sixth newcomer walk (the tarball, README only): repeated warnings folded, the report's HTML
 * and text agreeing, one exit-code text, validate and import agreeing on NCCL's CSV, and the other
 * frictions. Each test asserts the message the CLI prints now; its comment says what it printed
 * before.
 */
@Timeout(240)
class NewcomerSixthWalkTest {
    @TempDir
    Path tmp;

    static final String SWEEP = CliRun.fixture("h200-2rank-sweep_allreduce.rep1.csv");
    static final String LOG = CliRun.trace("nccl_sweep.rank0.log");

    /**
     * Item 1. Before: each of N files drew its own copy of one warning. Now one line, the file
     * written FILE, then the count and the first three files.
     */
    @Test
    void compileFoldsAWarningEveryFileDraws() throws Exception {
        List<String> files = new java.util.ArrayList<>();
        for (int i = 1; i <= 4; i++) {
            Path f = tmp.resolve("run" + i + ".txt");
            // each a run of its own (identical copies are read once: NewcomerSeventhWalkCompileTest)
            Files.writeString(
                    f,
                    Files.readString(Path.of(CliRun.fixture("gh200-8ranks-2hosts_all_reduce.txt")))
                            .replace("-1    70.00", "-1    7" + i + ".00"));
            files.add(f.toString());
        }
        CliRun r = CliRun.run(java.util.stream.Stream.concat(java.util.stream.Stream.of("compile"), files.stream())
                .toArray(String[]::new));
        assertEquals(0, r.exit(), r.err());
        // the warning every file drew (no forced configuration) became compile's one note (issue 21),
        // and then nothing where each unforced run stands beside a forced run of its group (walk 12)
        assertEquals("", r.err());
        assertFalse(r.out().contains("\nwarnings:"), r.out());
    }

    /** Item 1: the shared helper, on warnings with and without a line number. */
    @Test
    void repeatsFoldsPerFileWarningsAndRuns() {
        assertEquals(
                List.of("other", "nNodes 2 counted (3 files: a.txt:18, b.txt:18, c.txt:18)", "d.txt: alone"),
                Repeats.perFile(List.of(
                        "other",
                        "a.txt:18: nNodes 2 counted",
                        "b.txt:18: nNodes 2 counted",
                        "d.txt: alone",
                        "c.txt:18: nNodes 2 counted")));
        assertEquals(
                List.of("x (2 times in 1 file: a.txt:1, a.txt:9)"),
                Repeats.perFile(List.of("a.txt:1: x", "a.txt:9: x")));
        assertEquals(List.of(List.of(1, 1), List.of(2), List.of(1)), Repeats.runs(List.of(1, 1, 2, 1), x -> x));
    }

    /** Item 1. Before: one "# not scheduled" line per candidate with one reason. Now one per reason. */
    @Test
    void sweepDryRunFoldsTheCellsNotScheduledForOneReason() throws Exception {
        Path fake = FakeNcclTestsBinary.write(tmp.resolve("fake_driver"), "", "$1", "10.0");
        CliRun r = CliRun.run(
                "sweep",
                "-o",
                tmp.resolve("s").toString(),
                "--binary",
                fake.toString(),
                "--plugin",
                FakeNcclTestsBinary.plugin(tmp).toString(),
                "--collectives",
                "all_gather",
                "--algorithms",
                "TREE",
                "--protocols",
                "LL,SIMPLE",
                "--seed",
                "3",
                "--dry-run");
        assertEquals(0, r.exit(), r.err());
        List<String> lines = r.out().lines().toList();
        assertTrue(
                lines.getFirst().contains(", less 2 (program, candidate) cells NCCL never offers)"), lines.getFirst());
        assertEquals(
                "# not scheduled: all_gather TREE/LL, TREE/SIMPLE: NCCL offers only RING, PAT, NVLS and COLLNET_DIRECT"
                        + " for AllGather (NCCL 2.23 .. 2.30 src/graph/tuning.cc, ncclTopoTuneModel); not run (each"
                        + " would measure NCCL's own pick again)",
                lines.get(1));
        assertFalse(lines.get(2).startsWith("# not scheduled"), r.out());
    }

    /**
     * Items 1 and 11. Before: --changes-only printed a row per size of one decision, and the totals
     * counted channel-only rows as changed. Now adjacent sizes fold into a range, and the totals
     * count channels-only calls apart.
     */
    @Test
    void replayChangesOnlyFoldsSizesAndCountsChannelsOnlyApart() {
        Path repo = Path.of(System.getProperty("nccltj.repo", ".."));
        CliRun r = CliRun.run(
                "replay",
                "--changes-only",
                "--trace",
                CliRun.trace("trace_sweep.csv"),
                "--policy",
                repo.resolve("policies/channel-override.yaml").toString());
        assertEquals(0, r.exit(), r.err());
        assertTrue(
                r.out()
                        .contains("\nAllGather           16 B .. 8 KiB (6 sizes)            16..8192           1     12"
                                + "  RING/LL           11.613..18.427  RING/SIMPLE       22.407..25.813          2"
                                + "  changed\n"),
                r.out());
        assertTrue(r.out().contains("\n" + ReplayCommand.FOLDED + "\n"), r.out());
        assertTrue(r.out().contains("\nAllGather: 28 calls, 14 changed (+ 14 channels only)\n"), r.out());
        assertTrue(r.out().contains("\nall: 141 calls, 25 changed (+ 24 channels only)\n"), r.out());
    }

    /** Item 2. Before: the page said every rank agrees where the text said ranks were not compared. */
    @Test
    void reportHtmlSaysWhatTheTextSaysOfRanksNotCompared() throws Exception {
        Path w = tmp.resolve("w.jsonl");
        Files.writeString(
                w,
                Files.readString(Path.of(ReportCommandTest.res("diverge-x.jsonl")))
                        .replace("17293822569102704642", "17293822569102704643")
                        .replaceAll("\"host\":\"[a-z]\",\"pid\":[0-9]+", "\"host\":\"w\",\"pid\":13"));
        Path html = tmp.resolve("r.html");
        CliRun r =
                CliRun.run("report", ReportCommandTest.res("diverge-x.jsonl"), w.toString(), "--html", html.toString());
        assertEquals(0, r.exit(), r.err());
        String page = Files.readString(html);
        assertFalse(page.contains("Every rank reaches the same decision"), page);
        assertTrue(
                page.contains("<li class=\"ok\">No two logged ranks of one communicator decide differently.</li>\n"
                        + "<li>Not compared across ranks: nRanks=2 nNodes=2: 2 of its 2 communicators are logged by"
                        + " one of their 2 ranks only (commId 0xf000000000000002: x:11; commId 0xf000000000000003:"
                        + " w:13): ranks are compared only with the ranks of their own communicator; give the logs"
                        + " of every rank of one job.</li>"),
                page);
    }

    /** Item 6. Before: nccl-tuner --help said "3 a failed --check (report)"; report and try differ. */
    @Test
    void exitCodeThreeReadsTheSameInEveryHelp() {
        assertEquals(
                "Exit codes: 0 done, 1 an input error, 2 a usage error, 3 the ranks disagree: ranks of one shape ran"
                        + " different tables or decisions (report and try, after the report), 70 an internal error.",
                Main.EXIT_CODES);
        for (String[] args :
                List.of(new String[] {"--help"}, new String[] {"report", "--help"}, new String[] {"try", "--help"})) {
            CliRun r = CliRun.run(args);
            assertEquals(0, r.exit(), r.err());
            assertTrue(r.out().replaceAll("\\s+", " ").contains(Main.EXIT_CODES), String.join(" ", args) + r.out());
        }
    }

    /** Item 7. Before: SIGINT ended the sweep without a last line. The hook's line: */
    @Test
    void interruptedSweepSaysWhatIsDoneAndHowToResume() {
        assertEquals(
                "sweep: interrupted: 3 of 12 runs done (" + tmp.resolve("manifest.json")
                        + "); run the same command again to resume: it keeps seed 42, skips the runs done and runs"
                        + " the others, the interrupted one included",
                Sweep.interruptedLine(tmp, 3, 12, 42));
    }

    /** Items 8 and 9: the last rule past the largest measured size; the HTML title of -o policy.yaml. */
    @Test
    void compileSaysTheLastRulePassesTheLargestSizeAndTitlesThePage() throws Exception {
        Path html = tmp.resolve("p.html");
        CliRun r = CliRun.run(
                "compile",
                SWEEP,
                "--nccl-log",
                LOG,
                "-o",
                tmp.resolve("policy.yaml").toString(),
                "--html",
                html.toString());
        assertEquals(0, r.exit(), r.err());
        assertTrue(
                r.out()
                        .contains("\nthe last rule (AllReduce nRanks=2 nNodes=2) ends at 80 MiB, past the largest"
                                + " measured size 64 MiB: the last measured size governs its own size-grid bucket"
                                + " [64 MiB, 80 MiB) (docs/compile.md); measure larger sizes (-e) to cover more\n"),
                r.out());
        assertTrue(Files.readString(html)
                .contains("<h1>nccl-tuner compile: AllReduce, nRanks 2, nNodes 2</h1>\n<p>Policy policy.yaml, compiled "
                        + "from h200-2rank-sweep_allreduce.rep1.csv. "));
    }

    /** Item 5. Before: the workload's calls to unmeasured collectives went unmentioned. */
    @Test
    void compileWorkloadCountsCallsOfUnmeasuredCollectives() {
        CliRun r = CliRun.run("compile", SWEEP, "--nccl-log", LOG, "--workload", CliRun.trace("trace_sweep.csv"));
        assertEquals(0, r.exit(), r.err());
        assertTrue(
                r.out()
                        .contains("\n  --workload " + CliRun.trace("trace_sweep.csv")
                                + ": 112 of its 141 calls (~3.33 GiB of 4 GiB moved) are of collectives never"
                                + " measured at their shape (AllGather at nRanks=2 nNodes=2: 28; Broadcast at nRanks=2"
                                + " nNodes=2: 28; Reduce at nRanks=2 nNodes=2: 28; ReduceScatter at nRanks=2 nNodes=2:"
                                + " 28): nothing prices them, so the expected saving covers the other 29; measure"
                                + " them to price them (nccl-tuner sweep --collectives ...)\n"),
                r.out());
        assertFalse(r.err().contains("--workload"), r.err()); // once, among the report's warnings
    }

    /** Item 4. Before: a second --measurements was refused, and '-' went unexplained. */
    @Test
    void explainTakesSeveralMeasurementsAndSaysWhatDashMeans() throws Exception {
        Path dir = Files.createDirectories(tmp.resolve("m"));
        Files.copy(Path.of(SWEEP), dir.resolve("a.csv"));
        CliRun r = CliRun.run(
                "explain",
                "--log",
                LOG,
                "--measurements",
                dir.toString(),
                "--measurements",
                CliRun.fixture("h200-2rank-sweep_allreduce.rep2-simulated.csv"));
        assertEquals(0, r.exit(), r.err());
        assertTrue(
                r.out()
                        .contains("\nmeasured '-': not priced, 4 sizes: no measured size governs them (the"
                                + " measurements span 4 B .. 64 MiB)\n"),
                r.out());
    }

    /** Item 10. Before: an axis within one decade (2453 .. 4806 us) had 2 ticks or fewer. */
    @Test
    void aNarrowLogAxisGetsReadableTicks() {
        List<Double> t = SvgChart.decadeTicks(Math.log10(2453), Math.log10(4806));
        assertEquals(List.of(2500.0, 3000.0, 3500.0, 4000.0, 4500.0), t);
    }

    /**
     * Item 14. Before: validate FAILED ("can never apply") where import said OK on the same CSV. The
     * ninth walk (issue 21, item 6) made the line an error again, as the same rule in YAML is; they
     * agree now in that validate's error names the fix import applies: import leaves the line out,
     * and what it writes validates.
     */
    @Test
    void validateAndImportAgreeOnALineNcclNeverOffers() throws Exception {
        Path conf = Files.writeString(tmp.resolve("nccl_tuner.conf"), """
                # collective,minbytes,maxbytes,algorithm,protocol,channels,nNodes,nRanks,numPipeOps,regBuff
                allreduce,0,65535,tree,simple,2,-1,-1,-1,-1
                allreduce,65536,4294967295,ring,simple,-1,-1,-1,-1,0
                broadcast,0,-1,tree,simple,-1,-1,-1,-1,-1
                """);
        CliRun v = CliRun.run("validate", conf.toString());
        assertEquals(1, v.exit(), v.out() + v.err());
        assertTrue(
                v.out()
                        .contains("\nerror: " + conf + ":4 (Broadcast [0 B, inf)): can never apply: NCCL offers none"
                                + " of its candidates for Broadcast; NCCL's example plugin passes over such a line"
                                + " silently (NCCL picks there): delete the line, or import the file (import leaves it"
                                + " out)\n"),
                v.out());
        assertTrue(v.out().contains("\nresult: FAILED ("), v.out());
        Path p = tmp.resolve("p.yaml");
        CliRun i = CliRun.run("import", conf.toString(), "-o", p.toString());
        assertEquals(0, i.exit(), i.err());
        assertEquals(0, CliRun.run("validate", p.toString()).exit());
    }

    /** Item 13. Before: a mistyped enum name listed the names, with no suggestion. */
    @Test
    void csvTypoGetsDidYouMean() throws Exception {
        Path conf = Files.writeString(tmp.resolve("typo.conf"), "allreduce,0,65535,rng,simple,-1,-1,-1\n");
        CliRun v = CliRun.run("validate", conf.toString());
        assertEquals(1, v.exit());
        assertTrue(
                v.out()
                        .contains(conf + ":1: unknown algorithm 'rng' (NCCL's example plugin would silently use"
                                + " 'ring'); did you mean 'ring'? use one of tree, ring, collnet_direct,"
                                + " collnet_chain, nvls, nvls_tree, pat"),
                v.out() + v.err());
    }

    /** Item 12. Before: validate said nothing of a RUBIN constant. */
    @Test
    void validateSaysRubinConstantsNeedNccl2326() throws Exception {
        Path p = Files.writeString(tmp.resolve("rubin.yaml"), """
                schema: nccl-tuner-java/v1
                name: rubin
                mode: enforce
                profiles:
                  - name: all
                    match: {nRanks: any, nNodes: any}
                    constants:
                      llMaxBws.RUBIN.2NODES: 100
                      llMaxBws.HOPPER.1NODE: 150
                    rules:
                      - collective: AllReduce
                        bytes: {from: 0 B, to: 64 KiB}
                        candidates:
                          - {algorithm: RING, protocol: LL}
                """);
        CliRun v = CliRun.run("validate", p.toString());
        assertEquals(0, v.exit(), v.out() + v.err());
        assertTrue(
                v.out()
                        .contains("\nwarning: " + p
                                + ":5:5: profiles[0] (all).constants: 1 RUBIN constant (llMaxBws.RUBIN.2NODES)"
                                + " takes effect only with NCCL >= 2.32.6 (tuner v7, whose constants have the RUBIN"
                                + " row); under tuner v5/v6 (NCCL 2.28 .. 2.32.5) the plugin does not set it\n"),
                v.out());
    }
}
