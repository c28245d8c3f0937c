package io.nccltuner.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nccltuner.compile.SvgChart;
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
 * The seventh newcomer walk, the HTML charts: the report's and try's busbw chart, compile's busbw
 * axis labels and the busbw tables' digits. Each test's comment says what the page showed before.
 */
@Timeout(240)
class ChartsSeventhWalkTest {
    @TempDir
    Path tmp;

    static final String SWEEP = CliRun.fixture("h200-2rank-sweep_allreduce.rep1.csv");

    /** The y labels of the first chart of a page: the texts right-aligned left of the plot. */
    static List<String> yLabels(String svg, int x) {
        List<String> out = new ArrayList<>();
        Matcher m = Pattern.compile("<text x=\"" + x + "\\.0\" y=\"[0-9.]+\" text-anchor=\"end\">([^<]*)</text>")
                .matcher(svg);
        while (m.find()) {
            out.add(m.group(1));
        }
        return out;
    }

    /**
     * Item 2. Before: an axis of 1e-6 .. 2 GB/s had about 20 ticks, 1, 2 and 5 of each decade, in
     * mixed formats (1.0e-06, 0.00010, 1). Now at most eight, the decades, one notation.
     */
    @Test
    void aWideBusbwAxisHasAtMostEightTicksInOneNotation() {
        assertEquals(
                List.of(1e-6, 1e-5, 1e-4, 1e-3, 0.01, 0.1, 1.0), SvgChart.logTicks(Math.log10(9e-7), Math.log10(2.1)));
        // 12 decades: every second one
        assertEquals(List.of(1e-8, 1e-6, 1e-4, 0.01, 1.0, 100.0, 1e4), SvgChart.logTicks(-8.2, 4.1));
        // a narrow axis keeps 1, 2 and 5
        assertEquals(List.of(2.0, 5.0, 10.0, 20.0, 50.0, 100.0), SvgChart.logTicks(0.3, 2.0));
        assertEquals(
                List.of("1 KB/s", "10 KB/s", "100 KB/s", "1 MB/s", "10 MB/s", "100 MB/s", "1 GB/s"),
                SvgChart.logTicks(Math.log10(9e-7), Math.log10(2.1)).stream()
                        .map(SvgChart::rateLabel)
                        .toList());
        assertEquals("500 MB/s", SvgChart.rateLabel(0.5));
        assertEquals("2 GB/s", SvgChart.rateLabel(2));
        assertEquals("1.5 TB/s", SvgChart.rateLabel(1500));
    }

    /** Item 2. Before: a busbw of 2e-6 GB/s printed 0.000 in the report's tables. */
    @Test
    void busbwCellsKeepSignificantDigits() {
        assertEquals("0.00000200", SvgChart.gbps(2e-6));
        assertEquals("0.0123", SvgChart.gbps(0.012345));
        assertEquals("0.125", SvgChart.gbps(0.125));
        assertEquals("187.500", SvgChart.gbps(187.5));
        assertEquals("0", SvgChart.gbps(0));
        assertEquals("-", SvgChart.gbps(Double.NaN));
    }

    /** Item 2, on compile's page: its busbw axis's labels, exactly. */
    @Test
    void compilePageBusbwAxisLabels() throws Exception {
        Path html = tmp.resolve("p.html");
        CliRun r = CliRun.run("compile", SWEEP, "-o", tmp.resolve("policy.yaml").toString(), "--html", html.toString());
        assertEquals(0, r.exit(), r.err());
        String page = Files.readString(html);
        List<String> labels = yLabels(page.substring(0, page.indexOf("</svg>")), 74);
        assertTrue(labels.size() <= SvgChart.MAX_TICKS, labels.toString());
        assertEquals(List.of("1 KB/s", "10 KB/s", "100 KB/s", "1 MB/s", "10 MB/s", "100 MB/s", "1 GB/s"), labels);
        assertFalse(page.contains("e-0"), "no exponent notation on the page");
    }

    /**
     * Item 1. Before: the report's (and try's, which writes report's page) HTML had only the regret
     * chart. Now a busbw chart per group under it: NCCL's pick, the policy's pick where the logs
     * decided, best measured, each with its own mark class and colour (none of the regret chart's),
     * the replicates' min..max as error bars, its legend inside the SVG. Two replicates of each cell.
     */
    @Test
    void reportPageHasABusbwChartWithErrorBars() throws Exception {
        Path sweeps = Files.createDirectory(tmp.resolve("sweeps"));
        Files.copy(Path.of(SWEEP), sweeps.resolve("rep1.csv"));
        Files.copy(
                Path.of(CliRun.fixture("h200-2rank-sweep_allreduce.rep2-simulated.csv")), sweeps.resolve("rep2.csv"));
        Path html = tmp.resolve("r.html");
        CliRun r = CliRun.run(
                "report",
                ReportCommandTest.res("rank-a.jsonl"),
                ReportCommandTest.res("rank-b.jsonl"),
                "--measurements",
                sweeps.toString(),
                "--html",
                html.toString());
        assertEquals(Main.EXIT_CHECK, r.exit(), r.err());
        String page = Files.readString(html);
        assertEquals(1, count(page, "<svg class=\"chart busbw\""), "one group, one busbw chart");
        assertTrue(page.contains("<h2>AllReduce, nRanks 2, nNodes 2: bus bandwidth (busbw) by size</h2>\n"
                + "<svg class=\"chart busbw\""));
        String svg = busbwSvg(page);
        // NCCL's pick and best measured at each of the 25 measured sizes, the policy's pick at the 2
        // sizes the logs decided (4 B and 16 KiB)
        assertEquals(25, count(svg, "<circle class=\"busbw-nccl\""), svg);
        assertEquals(2, count(svg, "<circle class=\"busbw-policy\""), svg);
        assertEquals(25, count(svg, "<circle class=\"busbw-best\""), svg);
        // error bars where the two replicates differ: every point but one
        assertEquals(51, count(svg, "<path class=\"error-bar "), svg);
        assertTrue(svg.contains(">bars: replicates' min..max</text>"), svg);
        // the policy's two sizes are not neighbours: no line joins them; NCCL's and best's one line each
        assertEquals(0, count(svg, "<polyline class=\"busbw-policy\""), svg);
        assertEquals(1, count(svg, "<polyline class=\"busbw-nccl\""), svg);
        assertEquals(1, count(svg, "<polyline class=\"busbw-best\""), svg);
        assertEquals(3, count(svg, "<text class=\"legend\""), "NCCL's, the policy's, best's");
        assertTrue(
                svg.contains(">NCCL's pick</text>")
                        && svg.contains(">policy's pick</text>")
                        && svg.contains(">best measured</text>"),
                svg);
        // none of the regret chart's colours (NCCL's red, the policy's blue)
        assertFalse(svg.contains("#c62828") || svg.contains("#1565c0"), svg);
        List<String> labels = new ArrayList<>();
        Matcher m = Pattern.compile("<text x=\"76\" y=\"[0-9.]+\" font-size=\"11\" text-anchor=\"end\">([^<]*)</text>")
                .matcher(svg);
        while (m.find()) {
            labels.add(m.group(1));
        }
        assertTrue(labels.size() >= 2 && labels.size() <= SvgChart.MAX_TICKS, labels.toString());
        assertEquals(List.of("1 KB/s", "10 KB/s", "100 KB/s", "1 MB/s", "10 MB/s", "100 MB/s", "1 GB/s"), labels);
        assertFalse(svg.contains("e-0"), "one notation, no exponents");
    }

    /** Item 1, one replicate: no error bars and no legend line for them. */
    @Test
    void oneReplicateDrawsNoErrorBars() throws Exception {
        Path html = tmp.resolve("r.html");
        CliRun r = CliRun.run(
                "report",
                ReportCommandTest.res("rank-a.jsonl"),
                ReportCommandTest.res("rank-b.jsonl"),
                "--measurements",
                SWEEP,
                "--html",
                html.toString());
        assertEquals(Main.EXIT_CHECK, r.exit(), r.err());
        String svg = busbwSvg(Files.readString(html));
        assertEquals(52, count(svg, "<circle class=\"busbw-"), svg);
        assertEquals(0, count(svg, "error-bar"), svg);
        assertFalse(svg.contains("bars: replicates"), svg);
    }

    /** @return how many times {@code what} occurs in {@code s} */
    static int count(String s, String what) {
        int n = 0;
        for (int i = s.indexOf(what); i >= 0; i = s.indexOf(what, i + 1)) {
            n++;
        }
        return n;
    }

    /** @return the page's busbw chart, its opening tag to its closing one */
    static String busbwSvg(String page) {
        int at = page.indexOf("<svg class=\"chart busbw\"");
        assertTrue(at > 0, page);
        return page.substring(at, page.indexOf("</svg>", at));
    }
}
