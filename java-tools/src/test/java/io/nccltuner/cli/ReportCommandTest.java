package io.nccltuner.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nccltuner.report.DecisionLogFile;
import io.nccltuner.report.ShadowReport;
import java.io.ByteArrayInputStream;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Three ranks' decision logs (src/test/resources/report): a and b run the same table, c another
 * (and logged per-call records only); at 16 KiB b picks TREE/SIMPLE where a and c pick RING/SIMPLE.
 * Prices from the H200 sweep's replicate 1 (times in the CSV): 4 B NCCL (unforced) 4806.560 us,
 * RING/SIMPLE 2453.248 us; 16 KiB NCCL 4531.264 us, RING/SIMPLE 2455.104 us, TREE/SIMPLE 4530.048 us.
 */
@Timeout(60)
class ReportCommandTest {
    @TempDir
    Path tmp;

    static String res(String name) {
        try {
            return Path.of(ReportCommandTest.class
                            .getResource("/report/" + name)
                            .toURI())
                    .toString();
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void perCallRecordsAreBucketedAndAggregatesWin() throws Exception {
        DecisionLogFile c = DecisionLogFile.read(Path.of(res("rank-c.jsonl")));
        assertEquals("c:3", c.rank());
        assertEquals(2, c.aggregates().size());
        assertEquals(3, c.aggregates().get(0).count());
        assertEquals(4, c.aggregates().get(0).fromBytes());
        assertEquals(10, c.aggregates().get(1).count()); // 16384 and 20000 B share [16 KiB, 20 KiB)
        assertEquals(20480, c.aggregates().get(1).toBytes());
    }

    @Test
    void textReportNamesTheDifferingRanksAndPricesTheLog() {
        CliRun r = CliRun.run(
                "report",
                res("rank-a.jsonl"),
                res("rank-b.jsonl"),
                res("rank-c.jsonl"),
                "--measurements",
                CliRun.fixture("h200-2rank-sweep_allreduce.rep1.csv"));
        assertEquals(Main.EXIT_CHECK, r.exit(), "ranks disagree: exit 3 without --check too");
        String o = r.out();
        assertTrue(o.startsWith("policy agg-test: 3 logs, 3 communicators\n"), o);
        assertTrue(
                o.contains(
                        "tables: DIFFER\n  nRanks=2 nNodes=2: ranks run different tables: sha256 aaaaaa...aaa on a:1, b:2;"
                                + " sha256 bbbbbb...bbb on c:3\n"),
                o);
        assertTrue(
                o.contains(
                        "decisions: DIFFER at 1 size:\n  nRanks=2 nNodes=2 AllReduce 16 KiB (NCCL RING/LL): ranks decide "
                                + "differently (hang risk): b:2 -> TREE/SIMPLE; a:1, c:3 -> RING/SIMPLE\n"),
                o);
        String t = o.replaceAll(" +", " ");
        assertTrue(t.contains("nRanks=2 nNodes=2 AllReduce [4 B, 5 B) 9 3 RING/LL RING/SIMPLE 4 B 4806.6 2453.2"), o);
        assertTrue(
                t.contains(
                        "nRanks=2 nNodes=2 AllReduce [16 KiB, 20 KiB) 20 2 RING/LL RING/SIMPLE 16 KiB 4531.3 2455.1"),
                o);
        assertTrue(
                t.contains(
                        "nRanks=2 nNodes=2 AllReduce [16 KiB, 20 KiB) 10 1 RING/LL TREE/SIMPLE 16 KiB 4531.3 4530.0"),
                o);
        double saved = 9 * (4806.560 - 2453.248) + 20 * (4531.264 - 2455.104) + 10 * (4531.264 - 4530.048);
        double nccl = 9 * 4806.560 + 30 * 4531.264;
        assertTrue(
                o.contains(String.format(
                        java.util.Locale.ROOT,
                        "\nexpected saving: %.1f us, %.2f%% of the rule hits' time (NCCL's %.1f us over the 39 of 39 rule"
                                + " hits priced); %.1f us per rule hit, %.1f us per rank over 3 logs\n",
                        saved,
                        100 * saved / nccl,
                        nccl,
                        saved / 39,
                        saved / 3)),
                o);
    }

    /**
     * Two ranks whose policies differ only in one constant (baseLatencies.RING.LL 6.8 against 7.5
     * us): the constants change NCCL's own model, so its picks on every call no rule covers, so the
     * report must call the tables different (before, the sha256 covered the rules alone and both
     * ranks logged one). The logs are the engine's own comm lines; the second rank's host is renamed.
     */
    @Test
    void ranksWhoseTablesDifferOnlyInConstantsAreFlagged() throws Exception {
        String[] sha = new String[2];
        Path[] logs = new Path[2];
        double[] value = {6.8, 7.5};
        for (int i = 0; i < 2; i++) {
            String yaml = """
                    schema: nccl-tuner-java/v1
                    name: constants-only
                    profiles:
                      - name: two
                        match: {nRanks: 2}
                        constants:
                          baseLatencies.RING.LL: %s
                        rules:
                          - collective: AllReduce
                            bytes: {from: 4, to: 64 KiB}
                            candidates: [{algorithm: RING, protocol: SIMPLE}]
                    """.formatted(value[i]);
            Path raw = tmp.resolve("raw-" + i + ".jsonl");
            var dlog = new io.nccltuner.engine.DecisionLog(raw, 64, (l, level, m) -> {});
            List<String> info = new java.util.ArrayList<>();
            var engine = new io.nccltuner.engine.Engine(
                    io.nccltuner.policy.PolicyLoader.parse("constants-" + i + ".yaml", yaml),
                    io.nccltuner.policy.Mode.ENFORCE,
                    (l, level, m) -> info.add(m),
                    dlog);
            long h = engine.init(2, 2, java.lang.foreign.MemorySegment.NULL);
            engine.destroy(h);
            engine.flush();
            Matcher m = Pattern.compile("sha256 ([0-9a-f]{64})").matcher(String.join("\n", info));
            assertTrue(m.find(), "" + info);
            sha[i] = m.group(1);
            logs[i] = tmp.resolve("rank-" + i + ".jsonl");
            Files.writeString(logs[i], Files.readString(raw).replace("\"host\":\"", "\"host\":\"r" + i + "-"));
        }
        assertFalse(sha[0].equals(sha[1]), "constants differ, so the tables' sha256 must: " + sha[0]);
        DecisionLogFile a = DecisionLogFile.read(logs[0]);
        assertEquals(sha[0], a.comms().getFirst().sha256(), "the comm line names the INFO line's sha256");
        CliRun r = CliRun.run("report", logs[0].toString(), logs[1].toString());
        assertEquals(Main.EXIT_CHECK, r.exit(), r.out());
        assertTrue(
                r.out().contains("tables: DIFFER\n  nRanks=2 nNodes=2: ranks run different tables: sha256 "), r.out());
        assertTrue(r.out().contains(sha[0].substring(0, 6)) && r.out().contains(sha[1].substring(0, 6)), r.out());
    }

    /**
     * Issue 21 (second walk), item 1: two ranks of one communicator (commId 0xf000000000000002) with
     * different tables. They diverge at 4 B (x:11 decides RING/SIMPLE, y:12 has no rule hit there, so
     * it runs NCCL's RING/LL) and at 16 KiB (RING/SIMPLE against TREE/LL); at 1 MiB both pick
     * TREE/SIMPLE. Before: exit 0 and only 16 KiB was listed (y:12's absent row was not considered).
     */
    @Test
    void everyDivergingSizeIsListedAndRanksThatDifferExitThree() {
        CliRun r = CliRun.run("report", res("diverge-x.jsonl"), res("diverge-y.jsonl"));
        assertEquals(Main.EXIT_CHECK, r.exit(), r.out());
        assertEquals(3, Main.EXIT_CHECK);
        assertTrue(
                r.out()
                        .contains("decisions: DIFFER at 2 sizes:\n"
                                + "  nRanks=2 nNodes=2 AllReduce 4 B (NCCL RING/LL): ranks decide differently (hang risk): x:11 -> RING/SIMPLE;"
                                + " y:12 -> no rule hit (NCCL's own pick RING/LL)\n"
                                + "  nRanks=2 nNodes=2 AllReduce 16 KiB (NCCL RING/LL): ranks decide differently (hang risk): x:11 -> "
                                + "RING/SIMPLE; y:12 -> TREE/LL\n"
                                + "  (no rule hit: the rank logged the same communicator but no rule hit in that size bucket, so it ran NCCL's "
                                + "own pick there)\n"),
                r.out());
        assertTrue(!r.out().contains("AllReduce 1 MiB (NCCL RING/SIMPLE): ranks decide"), r.out());
        assertEquals(
                "nccl-tuner report: ranks disagree (1 shape with different compiled tables, 2 sizes with different decisions):"
                        + " exit 3; ranks of one communicator must run the same compiled table and decisions, or the job can"
                        + " hang\n",
                r.err());
        CliRun check = CliRun.run("report", res("diverge-x.jsonl"), res("diverge-y.jsonl"), "--check");
        assertEquals(Main.EXIT_CHECK, check.exit());
        assertEquals(r.out(), check.out(), "--check changes nothing");
        CliRun one = CliRun.run("report", res("diverge-x.jsonl"));
        assertEquals(Main.EXIT_OK, one.exit(), one.err());
        assertEquals("", one.err());
    }

    /** The footnote under the DIFFER lines when one names a rank "rule hit, candidate not offered". */
    static final String NOT_OFFERED_NOTE = "(rule hit, candidate not offered: inferred from the log's counts: the"
            + " rank's log counts rule hits on that communicator that found none of the rule's candidates offered"
            + " (NCCL's own pick ran), per communicator, not per size; the rank logged no pick at the size, so its"
            + " calls there are taken to be such hits)";

    /**
     * A newcomer walk: "rule hit, candidate not offered" is an inference (a decision log counts those
     * hits per communicator, not per size), and nothing said so. Now a footnote says what the label
     * means, once, in the text and on the page, where the label appears; and nowhere else. y:12's
     * comm line counts 30 rule hits where its aggregates hold 20: 10 found no candidate offered, and
     * y:12 logged no pick at 4 B, where x:11 picks RING/SIMPLE.
     */
    @Test
    void notOfferedLabelHasItsFootnoteOnceOnlyWhereItAppears() throws Exception {
        Path y = CliRun.write(
                tmp,
                "diverge-y.jsonl",
                Files.readString(Path.of(res("diverge-y.jsonl"))).replace("\"ruleHits\":20", "\"ruleHits\":30"));
        Path html = tmp.resolve("r.html");
        CliRun r = CliRun.run("report", res("diverge-x.jsonl"), y.toString(), "--html", html.toString());
        assertEquals(Main.EXIT_CHECK, r.exit(), r.out());
        assertTrue(
                r.out()
                        .contains("y:12 -> rule hit, candidate not offered (NCCL's own pick RING/LL)\n"
                                + "  nRanks=2 nNodes=2 AllReduce 16 KiB (NCCL RING/LL): ranks decide differently (hang"
                                + " risk): x:11 -> RING/SIMPLE; y:12 -> TREE/LL\n  " + NOT_OFFERED_NOTE + "\n"),
                r.out());
        assertEquals(1, ChartsSeventhWalkTest.count(r.out(), NOT_OFFERED_NOTE), r.out());
        assertFalse(r.out().contains("(no rule hit: "), "no rank is labelled no rule hit: " + r.out());
        String page = Files.readString(html);
        assertTrue(page.contains("<li class=\"noise\">" + NOT_OFFERED_NOTE + "</li>\n"), page);
        assertEquals(1, ChartsSeventhWalkTest.count(page, NOT_OFFERED_NOTE), page);

        // the same logs as written: y:12's 20 rule hits are all broken down, so it is "no rule hit" at 4 B
        Path html2 = tmp.resolve("r2.html");
        CliRun plain = CliRun.run("report", res("diverge-x.jsonl"), res("diverge-y.jsonl"), "--html", html2.toString());
        assertEquals(Main.EXIT_CHECK, plain.exit(), plain.out());
        assertTrue(plain.out().contains("y:12 -> no rule hit (NCCL's own pick RING/LL)\n"), plain.out());
        assertEquals(0, ChartsSeventhWalkTest.count(plain.out(), "inferred from the log's counts"), plain.out());
        assertEquals(0, ChartsSeventhWalkTest.count(Files.readString(html2), "inferred from the log's counts"));
    }

    /**
     * Newcomer walk, item 1: replay and explain price NCCL's pick with the estimate compile and report
     * print (ShadowReport.callPicks: the measurements compiled with NCCL's picks), not the forced run
     * alone. At 64 KiB NCCL runs RING/SIMPLE: unforced 4545.760 us pooled with forced 2458.048 us is
     * 3501.904 us in all four; at 32 MiB compile says 17729.999 us, and replay of the DDP trace (three
     * ~32.03 MiB sizes, 6 calls each, NCCL's RING/SIMPLE) prices each at 17730.0 us.
     */
    @Test
    void replayAndExplainPriceNcclsPickAsCompileAndReport() {
        String csv = CliRun.fixture("h200-2rank-sweep_allreduce.rep1.csv");
        String ncclLog = CliRun.trace("nccl_sweep.rank0.log");
        String policy = CliRun.trace("../../policies/h200-2rank-measured.yaml");
        String compile = CliRun.run("compile", csv, "--nccl-log", ncclLog).out().replaceAll(" +", " ");
        assertTrue(compile.contains("64 KiB .. 128 KiB auto=RING/SIMPLE 3501.904 "), compile);
        assertTrue(compile.contains("32 MiB .. 64 MiB auto~RING/SIMPLE 17729.999 "), compile);
        CliRun report = CliRun.run("report", res("price-64k.jsonl"), "--measurements", csv);
        assertTrue(report.out().replaceAll(" +", " ").contains("RING/SIMPLE TREE/SIMPLE 64 KiB 3501.9 "), report.out());
        CliRun explain = CliRun.run(
                "explain", "--log", ncclLog, "--policy", policy, "--sizes", "64KiB,32MiB", "--measurements", csv);
        assertEquals(0, explain.exit(), explain.err());
        String e = explain.out().replaceAll(" +", " ");
        assertTrue(e.contains("= 3501.9 3501.9 0.0"), explain.out());
        assertTrue(e.contains(" 17730.0 "), explain.out());
        CliRun replay = CliRun.run(
                "replay", "--trace", CliRun.trace("trace_ddp.csv"), "--policy", policy, "--measurements", csv);
        assertEquals(0, replay.exit(), replay.err());
        String r = replay.out().replaceAll(" +", " ");
        assertTrue(r.contains("~32.03 MiB 33583104 1 6 RING/SIMPLE "), replay.out());
        assertTrue(r.matches("(?s).*~32.03 MiB 33583104 1 6 RING/SIMPLE [^\\n]* 17730\\.0 .*"), replay.out());
        assertTrue(
                replay.out()
                        .contains("NCCL's pick: its unforced runs pooled with its forced runs, as compile, report "
                                + "and try price it"),
                replay.out());
        CliRun replay64 = CliRun.run(
                "replay", "--trace", CliRun.trace("trace_tp_infer.csv"), "--policy", policy, "--measurements", csv);
        assertTrue(
                replay64.out()
                        .replaceAll(" +", " ")
                        .contains("64 KiB 65536 1 64 RING/SIMPLE 105.573 RING/SIMPLE 105.573 " + "3501.9 3501.9 0.0"),
                replay64.out());
    }

    /**
     * Issue 21 (second walk), item 4: one definition of NCCL's time. A shadow log with a rule hit at
     * [64 KiB, 80 KiB), NCCL's pick RING/SIMPLE. In the H200 sweep at 64 KiB NCCL's unforced run took
     * 4545.760 us and RING/SIMPLE forced 2458.048 us; compile with the sweep's NCCL log (which names
     * RING/SIMPLE there) pools them: 3501.904 us, 43.38% above the best (TREE/SIMPLE 2442.400 us).
     * Before, report priced the row at the forced run alone (2458.0 us) and its chart at the unforced
     * one alone (86.1%); now both take the compile's estimate.
     */
    @Test
    void reportAndCompilePriceNcclsPickAlike() throws Exception {
        String csv = CliRun.fixture("h200-2rank-sweep_allreduce.rep1.csv");
        String ncclLog = CliRun.trace("nccl_sweep.rank0.log");
        CliRun compile = CliRun.run("compile", csv, "--nccl-log", ncclLog);
        assertTrue(
                compile.out()
                        .replaceAll(" +", " ")
                        .contains("64 KiB .. 128 KiB auto=RING/SIMPLE 3501.904 TREE/SIMPLE "
                                + "2442.400 NCCL 43.38% 43.38%"),
                compile.out());
        Path html = tmp.resolve("p.html");
        CliRun r = CliRun.run("report", res("price-64k.jsonl"), "--measurements", csv, "--html", html.toString());
        assertEquals(0, r.exit(), r.err());
        assertTrue(
                r.out()
                        .replaceAll(" +", " ")
                        .contains("AllReduce [64 KiB, 80 KiB) 40 1 RING/SIMPLE TREE/SIMPLE 64 KiB " + "3501.9 2442.4"),
                r.out());
        assertTrue(r.out().contains("measured gain within noise: a compile would keep NCCL's pick"), r.out());
        assertTrue(
                Files.readString(html).contains("<title>64 KiB: policy 0.0%, NCCL 43.4%</title>"),
                "the chart's figure");
        // the same code: with the NCCL log, the report's compile of the measurements (the chart's and the
        // prices' source) has compile's NCCL time and regret at every measured size
        io.nccltuner.compile.MeasurementSet alone = new io.nccltuner.compile.MeasurementSet();
        io.nccltuner.compile.MeasurementCsv.parse(Path.of(csv), alone, false);
        io.nccltuner.compile.NcclRunLog.readSelections(Path.of(ncclLog), alone);
        io.nccltuner.compile.MeasurementSet withLogs = new io.nccltuner.compile.MeasurementSet();
        io.nccltuner.compile.MeasurementCsv.parse(Path.of(csv), withLogs, false);
        io.nccltuner.compile.NcclRunLog.readSelections(Path.of(ncclLog), withLogs);
        List<DecisionLogFile> logs = List.of(DecisionLogFile.read(Path.of(res("price-64k.jsonl"))));
        ShadowReport.loggedPicks(logs, withLogs).forEach(withLogs::add);
        var c = io.nccltuner.compile.Compiler.compile(alone, io.nccltuner.compile.Compiler.Options.defaults("c"))
                .groups();
        var rep = ShadowReport.build(
                        logs,
                        io.nccltuner.compile.Compiler.compile(
                                        withLogs, io.nccltuner.compile.Compiler.Options.defaults("report"))
                                .groups())
                .groups();
        assertEquals(c.getFirst().sizes().size(), rep.getFirst().sizes().size());
        for (int i = 0; i < c.getFirst().sizes().size(); i++) {
            var a = c.getFirst().sizes().get(i);
            var b = rep.getFirst().sizes().get(i);
            assertEquals(a.ncclUs(), b.ncclUs(), 0.0, "NCCL us at " + a.nBytes());
            assertEquals(a.ncclRegret(), b.ncclRegret(), 0.0, "NCCL regret at " + a.nBytes());
        }
        // a rule hit that keeps NCCL's pick costs NCCL's time under the same estimate: nothing saved
        ShadowReport.Price same = ShadowReport.price(
                io.nccltuner.policy.Collective.AllReduce, 2, 2, 65536, "RING/SIMPLE", "RING/SIMPLE", 0, rep);
        assertEquals(3501.904, same.ncclUs(), 1e-9);
        assertEquals(0.0, same.savedUs(), 0.0);
        CliRun withLog = CliRun.run("report", res("price-64k.jsonl"), "--measurements", csv, "--nccl-log", ncclLog);
        assertEquals(
                r.out().replace("html: " + html + "\n", "").replaceFirst("NCCL's pick: from [^\n]*\n", ""),
                withLog.out(),
                "the NCCL log names the same pick at 64 KiB (without it, one line says where the pick came from)");
        CliRun noMeasurements = CliRun.run("report", res("price-64k.jsonl"), "--nccl-log", ncclLog);
        assertEquals(Main.EXIT_USAGE, noMeasurements.exit());
    }

    @Test
    void modelValuesAndBusbw() throws Exception {
        List<DecisionLogFile> logs = List.of(DecisionLogFile.read(Path.of(res("rank-a.jsonl"))));
        ShadowReport r = ShadowReport.build(logs, List.of());
        assertTrue(r.tableProblems().isEmpty());
        assertTrue(r.decisionProblems().isEmpty());
        assertEquals(2, r.rows().size());
        assertEquals(13, r.rows().stream().mapToLong(ShadowReport.Row::calls).sum());
        assertTrue(r.text().contains("decisions: every rank reaches the same decision at every size"));
    }

    /**
     * With the sweep's NCCL log the compile keeps NCCL's pick at several adjacent sizes: one grey
     * band each, but one "noise: NCCL kept" label per run of adjacent bands (a label per size
     * overlapped into an unreadable row: the fifth newcomer walk counted 9).
     */
    @Test
    void adjacentNoiseBandsShareOneLabel() throws Exception {
        Path html = tmp.resolve("r.html");
        CliRun r = CliRun.run(
                "report",
                res("rank-a.jsonl"),
                res("rank-b.jsonl"),
                "--measurements",
                CliRun.fixture("h200-2rank-sweep_allreduce.rep1.csv"),
                "--nccl-log",
                CliRun.trace("nccl_sweep.rank0.log"),
                "--html",
                html.toString());
        assertEquals(Main.EXIT_CHECK, r.exit(), r.err());
        String page = Files.readString(html);
        Matcher band = Pattern.compile(
                        "<rect x=\"([0-9.]+)\" y=\"\\d+\" width=\"([0-9.]+)\" height=\"\\d+\" " + "fill=\"#e0e0e0\">")
                .matcher(page);
        int bands = 0;
        int runs = 0;
        double end = Double.NaN;
        while (band.find()) {
            double x = Double.parseDouble(band.group(1));
            bands++;
            if (!(Math.abs(x - end) < 0.2)) {
                runs++;
            }
            end = x + Double.parseDouble(band.group(2));
        }
        int labels = page.split("noise: NCCL kept", -1).length - 1;
        assertTrue(bands > runs, bands + " bands in " + runs + " runs: the fixture must have adjacent ones");
        assertEquals(runs, labels, page);
    }

    @Test
    void htmlPageHasTitleChartAndNoiseMark() throws Exception {
        Path html = tmp.resolve("r.html");
        CliRun r = CliRun.run(
                "report",
                res("rank-a.jsonl"),
                res("rank-b.jsonl"),
                "--measurements",
                CliRun.fixture("h200-2rank-sweep_allreduce.rep1.csv"),
                "--html",
                html.toString());
        assertEquals(Main.EXIT_CHECK, r.exit(), "a:1 and b:2 decide differently at 16 KiB");
        String page = Files.readString(html);
        assertTrue(page.startsWith("<!DOCTYPE html>"));
        assertTrue(page.contains("<title>agg-test - nccl-tuner report</title>"), "the policy's name is the title");
        assertTrue(page.contains("<h1>agg-test</h1>"));
        assertFalse(page.contains("<script"));
        assertTrue(page.contains("<th>NCCL us</th><th>NCCL busbw GB/s</th>"), "busbw beside time");
        // busbw of RING/SIMPLE at 16 KiB: 16384 B / 2455.104 us x 2(2-1)/2 = 0.006673 GB/s, three
        // significant digits (it printed 0.007 before)
        assertTrue(page.contains("<td>0.00667</td>"), page);
        Matcher m = Pattern.compile("<svg.*?</svg>", Pattern.DOTALL).matcher(page);
        assertTrue(m.find());
        String svg = m.group();
        assertTrue(svg.contains("viewBox=\"0 0 1000 320\""));
        assertTrue(page.contains("svg.chart{display:block;width:100%;height:auto"), "chart at the page's width");
        // the compile of rep1 keeps NCCL's pick at 8 MiB (17.67% inside a 51.31% margin): marked on the chart
        assertTrue(svg.contains("noise: NCCL kept"), svg);
        assertTrue(svg.contains("8 MiB: NCCL's pick kept, its 17.7% loss is within the noise margin 51.3%"), svg);
        var doc = DocumentBuilderFactory.newInstance()
                .newDocumentBuilder()
                .parse(new ByteArrayInputStream(svg.getBytes(StandardCharsets.UTF_8)));
        // NCCL's line only: 4 B and 16 KiB were decided, not neighbours, so no policy line joins them
        // across the undecided sizes between (no sawtooth through NCCL's regret there)
        assertEquals(1, doc.getElementsByTagName("polyline").getLength());
        assertEquals(2, doc.getElementsByTagName("circle").getLength()); // 4 B and 16 KiB were decided
        assertTrue(svg.contains("regret vs best measured (log scale)"), "log axis");
    }
}
