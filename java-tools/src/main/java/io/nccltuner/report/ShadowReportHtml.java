package io.nccltuner.report;

import static io.nccltuner.compile.SvgChart.esc;

import io.nccltuner.compile.Compiler;
import io.nccltuner.compile.SvgChart;
import io.nccltuner.model.BusBandwidth;
import io.nccltuner.policy.ByteSize;
import io.nccltuner.policy.SizeGrid;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The report as one self-contained HTML page (no scripts, no external files): the policy's name as
 * the title; the ranks and the cross-rank checks; per communicator shape and collective with
 * measurements a regret-by-size chart (SVG, as wide as the page: NCCL's own pick against what the
 * logged policy runs, regret = time / best measured - 1, log size axis, log axis of 1 + regret; the
 * policy's line joins only neighbouring sizes the logs decided; sizes where the measured
 * gain was within the noise, so a compile keeps NCCL's pick, are shaded and labelled on the
 * chart); under it a bus bandwidth (busbw) chart of the same sizes (NCCL's pick, the policy's pick
 * where the logs decided, best measured; its own colours and mark classes); then the decisions
 * with time and busbw side by side. With the canary's measured lines,
 * its section ({@link CanaryReportHtml}) follows the cross-rank checks.
 */
public final class ShadowReportHtml {
    /** The regret chart's frame: viewBox 1000 x 320. */
    private static final SvgChart FRAME = new SvgChart(1000, 320, 60, 20, 20, 50);

    private ShadowReportHtml() {}

    private static String f(String fmt, Object... args) {
        return String.format(Locale.ROOT, fmt, args);
    }

    /**
     * Renders the page.
     *
     * @param r the report
     * @return the HTML text
     */
    public static String render(ShadowReport r) {
        return render(r, null);
    }

    /**
     * Renders the page with the canary's section.
     *
     * @param r the report
     * @param canary the canary report of the same logs, or null
     * @return the HTML text
     */
    public static String render(ShadowReport r, CanaryReport canary) {
        StringBuilder h = new StringBuilder();
        head(h, r.policy());
        checks(h, r);
        if (canary != null) {
            h.append(CanaryReportHtml.section(canary));
        }
        charts(h, r);
        decisions(h, r);
        ranks(h, r);
        h.append("</body></html>\n");
        return h.toString();
    }

    /** The page's head (title, style) and its heading. */
    private static void head(StringBuilder h, String policy) {
        h.append("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>")
                .append(esc(policy))
                .append(" - nccl-tuner report</title>\n<style>\n")
                .append("body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}\n")
                .append("h1{font-size:1.6em;margin:0 0 .3em}h2{font-size:1.2em;margin:1.4em 0 .4em}\n")
                .append(SvgChart.CSS)
                .append(
                        "table{border-collapse:collapse;width:100%;margin:.6em 0;font-size:12px}.legend{font-size:12px;margin:.2em 0}th,td{border:1px solid #ccc;padding:2px 6px;")
                .append(
                        "text-align:right;white-space:nowrap}th{background:#f2f2f2;white-space:normal}td.l,th.l{text-align:left}\n")
                .append(".bad{color:#b00020;font-weight:bold}.ok{color:#1b5e20}.noise{color:#666}\n")
                .append("</style></head><body>\n");
        h.append("<h1>").append(esc(policy)).append("</h1>\n");
    }

    /** The logs read, the cross-rank checks and the expected saving, as a list. */
    private static void checks(StringBuilder h, ShadowReport r) {
        long comms = r.logs().stream().mapToLong(l -> l.comms().size()).sum();
        h.append("<p>")
                .append(io.nccltuner.compile.TextReport.count(r.logs().size(), "decision log"))
                .append(r.logs().size() == 1 ? " (rank), " : " (ranks), ")
                .append(io.nccltuner.compile.TextReport.count(comms, "communicator"))
                .append(". Report of <code>nccl-tuner report</code>.</p>\n<ul>\n");
        h.append(
                r.tableProblems().isEmpty()
                        ? "<li class=\"ok\">Every rank of each shape runs the same table (sha256).</li>\n"
                        : "<li class=\"bad\">Tables differ: " + esc(String.join("; ", r.tableProblems())) + "</li>\n");
        h.append(
                r.decisionProblems().isEmpty()
                        ? "<li class=\"ok\">" + esc(sentence(r.agreement())) + "</li>\n"
                        : "<li class=\"bad\">Decisions differ (hang risk): "
                                + esc(String.join("; ", r.decisionProblems())) + "</li>\n");
        if (r.notOfferedNote() != null) { // the DIFFER lines' footnote, as the text says it
            h.append("<li class=\"noise\">(").append(esc(r.notOfferedNote())).append(")</li>\n");
        }
        if (r.notComparedAcrossRanks() != null) { // as the text says it
            h.append("<li>").append(esc(sentence(r.notComparedAcrossRanks()))).append("</li>\n");
        }
        if (!r.notCompared().isEmpty()) {
            h.append(
                            "<li>Not compared (the logs do not name NCCL's commId, tuner v3/v4): ranks with no rule hit where other "
                                    + "ranks of the shape have one: ")
                    .append(esc(String.join("; ", r.notCompared())))
                    .append("</li>\n");
        }
        if (!r.groups().isEmpty()) {
            h.append(f(
                    "<li>Expected saving: <b>%.1f us</b>, %.2f%% of the rule hits' time (NCCL's time over the %d rule hits priced).</li>%n",
                    r.savedUs(), r.ncclUs() > 0 ? 100 * r.savedUs() / r.ncclUs() : 0.0, r.pricedCalls()));
        }
        h.append("</ul>\n");
    }

    /** @return a line of the text report as a sentence: its first letter capital, a full stop */
    private static String sentence(String line) {
        return Character.toUpperCase(line.charAt(0)) + line.substring(1) + ".";
    }

    /** One regret chart per measured shape and collective the logs decided at, with its legend. */
    private static void charts(StringBuilder h, ShadowReport r) {
        for (Compiler.Group g : r.groups()) {
            List<ShadowReport.Row> rows = r.rows().stream()
                    .filter(x -> x.collective() == g.key().collective()
                            && x.nRanks() == g.key().nRanks()
                            && x.nNodes() == g.key().nNodes())
                    .toList();
            if (rows.isEmpty()) {
                continue;
            }
            String heading = esc(g.key().collective() + ", nRanks " + g.key().nRanks() + ", nNodes "
                    + g.key().nNodes());
            h.append("<h2>").append(heading).append(": regret by size</h2>\n");
            h.append("<p class=\"legend\"><span style=\"color:#c62828\">- - NCCL's own pick</span> &nbsp; "
                    + "<span style=\"color:#1565c0\">&mdash; with the policy of the logs (dots: sizes the logs decided, "
                    + "the decision with the most calls; a line joins neighbouring decided sizes only)</span> &nbsp; <span class=\"noise\">grey: measured gain within the "
                    + "noise, a compile keeps NCCL's pick</span></p>\n");
            h.append(chart(g, rows));
            String bw = busbwChart(g, rows);
            if (!bw.isEmpty()) {
                h.append("<h2>")
                        .append(heading)
                        .append(": bus bandwidth (busbw) by size</h2>\n")
                        .append(bw);
            }
        }
    }

    /** The busbw chart's frame: viewBox 1000 x 340, the legend in the right margin, inside the SVG. */
    private static final SvgChart BW = new SvgChart(1000, 340, 80, 200, 20, 50);

    /**
     * The busbw chart's series: {label, class of its marks, colour, dash}. Their colours are none of
     * the regret chart's (NCCL's red, the policy's blue), so the two charts' marks are told apart on
     * the page.
     */
    private static final String[][] BW_SERIES = {
        {"NCCL's pick", "busbw-nccl", "#ef6c00", "6 4"},
        {"policy's pick", "busbw-policy", "#6a1b9a", null},
        {"best measured", "busbw-best", "#2e7d32", "2 3"}
    };

    /** @return the Stats of the decision with the most calls at a size, null when none was measured */
    private static Compiler.Stats loggedStats(Compiler.SizeResult s, List<ShadowReport.Row> rows) {
        Compiler.Stats out = null;
        long most = -1;
        for (ShadowReport.Row row : rows) {
            if (row.calls() > most && SizeGrid.inRange(s.nBytes(), row.fromBytes(), row.toBytes())) {
                most = row.calls();
                var pc = ShadowReport.config(row.policyPick(), row.channels());
                out = s.candidates().stream()
                        .filter(st -> st.config().equals(pc))
                        .findFirst()
                        .orElse(null);
            }
        }
        return out;
    }

    /**
     * Bus bandwidth (busbw, GB/s, on a log axis with the ticks of {@link SvgChart#logTicks}) versus
     * message size (log2 of nBytes): NCCL's pick, the policy's pick at the sizes the logs decided (the
     * decision with the most calls; drawn last and larger, on top where it is the best measured) and
     * the best measured, each point its median time's busbw, an
     * error bar (class error-bar) from the replicates' min..max where there are two or more; a
     * series' line joins neighbouring measured sizes only. The legend is inside the SVG, right of the
     * plot.
     *
     * @param g the measured group (collective, nRanks, nNodes)
     * @param rows the report's rows of that group
     * @return the SVG and a newline, or "" when no size has a measured busbw
     */
    static String busbwChart(Compiler.Group g, List<ShadowReport.Row> rows) {
        List<List<double[]>> series = busbwPoints(g, rows);
        List<double[]> all = series.stream().flatMap(List::stream).toList();
        if (all.isEmpty()) {
            return "";
        }
        double x0 = SvgChart.log2Size(all.stream().mapToDouble(p -> p[0]).min().orElseThrow());
        double x1 = Math.max(
                x0 + 1,
                SvgChart.log2Size(all.stream().mapToDouble(p -> p[0]).max().orElseThrow()));
        double y0 = Math.log10(all.stream()
                        .mapToDouble(p -> Math.min(p[1], p[2] > 0 ? p[2] : p[1]))
                        .min()
                        .orElseThrow())
                - 0.1;
        double y1 = Math.log10(all.stream()
                        .mapToDouble(p -> Math.max(p[1], p[3]))
                        .max()
                        .orElseThrow())
                + 0.1;
        java.util.function.DoubleUnaryOperator py =
                v -> BW.top() + (y1 - Math.min(y1, Math.max(y0, Math.log10(v)))) / (y1 - y0) * BW.plotHeight();
        StringBuilder s = new StringBuilder(BW.open("chart busbw", "bus bandwidth by size"));
        for (double v : SvgChart.logTicks(y0, y1)) {
            s.append(BW.gridLine(py.applyAsDouble(v), esc(SvgChart.rateLabel(v))));
        }
        int n = g.sizes().size();
        for (int i = 0; i < n; i++) {
            if (i % Math.max(1, n / 12) == 0 || i == n - 1) {
                long b = g.sizes().get(i).nBytes();
                s.append(BW.sizeLabel(BW.x(SvgChart.log2Size(b), x0, x1), b));
            }
        }
        s.append(BW.axisTitles("message size (bytes, log scale)", 14, "bus bandwidth (bytes/s, log scale)"));
        java.util.function.DoubleUnaryOperator px = b -> BW.x(SvgChart.log2Size(b), x0, x1);
        for (int k : new int[] {2, 0, 1}) { // the policy's dots last: on top where it is the best measured
            busbwSeries(s, k, series.get(k), px, py);
        }
        if (all.stream().anyMatch(p -> p[3] > p[2])) {
            s.append(f(
                    "<text x=\"%d\" y=\"%d\" font-size=\"11\">bars: replicates' min..max</text>%n",
                    BW.width() - BW.right() + 12, BW.top() + 10 + 18 * 3 + 4));
        }
        s.append("</svg>\n");
        return s.toString();
    }

    /**
     * The busbw chart's points, per series of {@link #BW_SERIES}: at each measured size {nBytes,
     * busbw of the median time (GB/s), bar low, bar high (the busbw of the replicates' slowest and
     * fastest time; the median's with one replicate), the size's index in the group}.
     */
    private static List<List<double[]>> busbwPoints(Compiler.Group g, List<ShadowReport.Row> rows) {
        var coll = g.key().collective();
        int nRanks = g.key().nRanks();
        List<List<double[]>> series = List.of(new ArrayList<>(), new ArrayList<>(), new ArrayList<>());
        for (int i = 0; i < g.sizes().size(); i++) {
            Compiler.SizeResult s = g.sizes().get(i);
            Compiler.Stats best = s.candidates().stream()
                    .filter(st -> Double.isFinite(st.medianUs()))
                    .min(java.util.Comparator.comparingDouble(Compiler.Stats::medianUs))
                    .orElse(null);
            Compiler.Stats[] st = {s.nccl(), loggedStats(s, rows), best};
            for (int k = 0; k < 3; k++) {
                if (st[k] != null) {
                    double b = BusBandwidth.busbw(coll, nRanks, s.nBytes(), st[k].medianUs());
                    boolean rep = st[k].replicates() >= 2;
                    double lo = rep ? BusBandwidth.busbw(coll, nRanks, s.nBytes(), st[k].maxUs()) : b;
                    double hi = rep ? BusBandwidth.busbw(coll, nRanks, s.nBytes(), st[k].minUs()) : b;
                    if (b > 0 && Double.isFinite(b)) {
                        series.get(k).add(new double[] {s.nBytes(), b, lo, hi, i});
                    }
                }
            }
        }
        return series;
    }

    /**
     * One series of the busbw chart: its error bars, dots (the policy's larger), a line through each
     * run of neighbouring sizes, and its legend entry.
     *
     * @param s the SVG so far
     * @param k the series, an index of {@link #BW_SERIES}
     * @param pts its points ({@link #busbwPoints})
     * @param px nBytes to x, SVG user units
     * @param py busbw (GB/s) to y, SVG user units
     */
    private static void busbwSeries(
            StringBuilder s,
            int k,
            List<double[]> pts,
            java.util.function.DoubleUnaryOperator px,
            java.util.function.DoubleUnaryOperator py) {
        String cls = BW_SERIES[k][1];
        String color = BW_SERIES[k][2];
        for (double[] p : pts) {
            double x = px.applyAsDouble(p[0]);
            if (p[3] > p[2]) {
                double ya = py.applyAsDouble(p[2]);
                double yb = py.applyAsDouble(p[3]);
                s.append(f(
                        "<path class=\"error-bar %s\" d=\"M%.1f %.1f V%.1f M%.1f %.1f h6 M%.1f %.1f h6\" stroke=\"%s\" "
                                + "stroke-width=\"1\" fill=\"none\"/>%n",
                        cls, x, ya, yb, x - 3, ya, x - 3, yb, color));
            }
            s.append(f(
                    "<circle class=\"%s\" cx=\"%.1f\" cy=\"%.1f\" r=\"%s\" fill=\"%s\"><title>%s %s: busbw %s GB/s%s"
                            + "</title></circle>%n",
                    cls,
                    x,
                    py.applyAsDouble(p[1]),
                    k == 1 ? "4.5" : "3",
                    color,
                    esc(BW_SERIES[k][0]),
                    esc(ByteSize.format((long) p[0])),
                    SvgChart.gbps(p[1]),
                    p[3] > p[2] ? ", replicates " + SvgChart.gbps(p[2]) + " .. " + SvgChart.gbps(p[3]) : ""));
        }
        // a line through each run of neighbouring sizes (the policy's: sizes the logs decided)
        int a = 0;
        while (a < pts.size()) {
            int b = a;
            while (b + 1 < pts.size() && pts.get(b + 1)[4] == pts.get(b)[4] + 1) {
                b++;
            }
            if (b > a) {
                StringBuilder line = new StringBuilder();
                for (double[] p : pts.subList(a, b + 1)) {
                    line.append(f("%.1f,%.1f ", px.applyAsDouble(p[0]), py.applyAsDouble(p[1])));
                }
                s.append(f(
                        "<polyline class=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\"%s points=\"%s\"/>%n",
                        cls,
                        color,
                        BW_SERIES[k][3] == null ? "" : " stroke-dasharray=\"" + BW_SERIES[k][3] + "\"",
                        line.toString().strip()));
            }
            a = b + 1;
        }
        int lx = BW.width() - BW.right() + 12;
        int ly = BW.top() + 10 + 18 * k;
        s.append(f(
                "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" stroke-width=\"1.5\"%s/>%n"
                        + "<circle cx=\"%d\" cy=\"%d\" r=\"%s\" fill=\"%s\"/>%n"
                        + "<text class=\"legend\" x=\"%d\" y=\"%d\" font-size=\"12\">%s</text>%n",
                lx,
                ly,
                lx + 20,
                ly,
                color,
                BW_SERIES[k][3] == null ? "" : " stroke-dasharray=\"" + BW_SERIES[k][3] + "\"",
                lx + 10,
                ly,
                k == 1 ? "4.5" : "3",
                color,
                lx + 26,
                ly + 4,
                esc(BW_SERIES[k][0])));
    }

    /** The decisions table: one row per report row, priced with time and busbw side by side. */
    private static void decisions(StringBuilder h, ShadowReport r) {
        h.append(
                        "<h2>Decisions</h2>\n<table><tr><th class=\"l\">shape</th><th class=\"l\">collective</th><th class=\"l\">size")
                .append(
                        "</th><th>calls</th><th>ranks</th><th class=\"l\">NCCL's pick</th><th class=\"l\">policy's pick</th>");
        boolean priced = !r.groups().isEmpty();
        if (priced) {
            h.append("<th>NCCL us</th><th>NCCL busbw GB/s</th><th>policy us</th><th>policy busbw GB/s</th>")
                    .append("<th>saved us/call</th><th>saved us</th><th class=\"l\">note</th>");
        }
        h.append("</tr>\n");
        for (ShadowReport.Row x : r.rows()) {
            h.append("<tr><td class=\"l\">")
                    .append(x.shape())
                    .append("</td><td class=\"l\">")
                    .append(x.collective())
                    .append("</td><td class=\"l\">")
                    .append(esc(x.range()))
                    .append("</td><td>")
                    .append(x.calls())
                    .append("</td><td>")
                    .append(x.ranks())
                    .append("</td><td class=\"l\">")
                    .append(esc(x.ncclPick()))
                    .append("</td><td class=\"l\">")
                    .append(esc(x.policyLabel()))
                    .append("</td>");
            if (priced) {
                h.append(priceCells(x));
            }
            h.append("</tr>\n");
        }
        h.append("</table>\n");
    }

    /** A priced row's time, busbw, saving and note cells. */
    private static String priceCells(ShadowReport.Row x) {
        ShadowReport.Price p = x.price();
        if (p == null) {
            return "<td colspan=\"6\"></td><td class=\"l noise\">not measured</td>";
        }
        return td(p.ncclUs(), "%.1f")
                + "<td>" + SvgChart.gbps(p.ncclBusbw()) + "</td>"
                + td(p.policyUs(), "%.1f")
                + "<td>" + SvgChart.gbps(p.policyBusbw()) + "</td>"
                + td(p.savedUs(), "%.1f")
                + td(p.savedUs() * x.calls(), "%.1f")
                + "<td class=\"l noise\">"
                + (Double.isNaN(p.policyUs())
                        ? "policy's pick not measured"
                        : p.keptByNoise() ? "gain within noise: a compile keeps NCCL's pick" : "")
                + "</td>";
    }

    /** The ranks table: each log's rank, file, communicators and tables. */
    private static void ranks(StringBuilder h, ShadowReport r) {
        h.append("<h2>Ranks</h2>\n<table><tr><th class=\"l\">rank</th><th class=\"l\">file</th><th>comms</th>")
                .append("<th class=\"l\">sha256</th></tr>\n");
        for (DecisionLogFile l : r.logs()) {
            List<String> shas = new ArrayList<>(l.comms().stream()
                    .map(c -> String.valueOf(c.sha256()))
                    .distinct()
                    .toList());
            h.append("<tr><td class=\"l\">")
                    .append(esc(l.rank()))
                    .append("</td><td class=\"l\">")
                    .append(esc(l.file().toString()))
                    .append("</td><td>")
                    .append(l.comms().size())
                    .append("</td><td class=\"l\">")
                    .append(esc(String.join(" ", shas)))
                    .append("</td></tr>\n");
        }
        h.append("</table>\n");
    }

    /**
     * A number's table cell, "-" for NaN or infinity.
     *
     * @param v the number
     * @param fmt its format ("%.1f")
     * @return the cell
     */
    static String td(double v, String fmt) {
        return "<td>" + (Double.isNaN(v) || Double.isInfinite(v) ? "-" : f(fmt, v)) + "</td>";
    }

    /**
     * One chart's points: the measured sizes with NCCL's time (log2 nBytes), NCCL's regret and the
     * logged policy's at each, whether the logs decided there, and the axes: x0..x1 (log2 bytes),
     * 0..top1 (log10 of 1 + regret).
     */
    private record Regrets(
            List<Compiler.SizeResult> sizes,
            double[] x,
            double[] nccl,
            double[] pol,
            boolean[] logged,
            double x0,
            double x1,
            double top1) {
        static Regrets of(List<Compiler.SizeResult> sizes, List<ShadowReport.Row> rows) {
            int n = sizes.size();
            double[] x = new double[n];
            double[] nccl = new double[n];
            double[] pol = new double[n];
            boolean[] logged = new boolean[n];
            double max = 0.05;
            for (int i = 0; i < n; i++) {
                Compiler.SizeResult s = sizes.get(i);
                x[i] = SvgChart.log2Size(s.nBytes());
                nccl[i] = s.ncclRegret();
                Double decided = loggedRegret(s, rows);
                logged[i] = decided != null;
                pol[i] = logged[i] ? decided : nccl[i];
                max = Math.max(max, Math.max(nccl[i], pol[i]));
            }
            // log axis of 1 + regret: 1% and 100% both readable; regrets above 1000% sit on the top edge
            double top1 = Math.log10(1 + Math.min(max, 10)) * 1.05;
            return new Regrets(sizes, x, nccl, pol, logged, x[0], Math.max(x[n - 1], x[0] + 1), top1);
        }

        /** The measured regret of the decision with the most calls at a size, null when none was measured. */
        private static Double loggedRegret(Compiler.SizeResult s, List<ShadowReport.Row> rows) {
            Double regret = null;
            long most = -1;
            for (ShadowReport.Row row : rows) {
                if (row.calls() > most && SizeGrid.inRange(s.nBytes(), row.fromBytes(), row.toBytes())) {
                    most = row.calls();
                    var pc = ShadowReport.config(row.policyPick(), row.channels());
                    for (Compiler.Stats st : s.candidates()) {
                        if (st.config().equals(pc)) {
                            regret = st.regret();
                        }
                    }
                }
            }
            return regret;
        }

        double cx(int i) {
            return FRAME.x(x[i], x0, x1);
        }

        double y(double regret) {
            int ph = FRAME.plotHeight();
            return FRAME.top() + ph - Math.min(Math.log10(1 + Math.max(0, regret)), top1) / top1 * ph;
        }
    }

    /** Regret of NCCL's pick and of what the logged policy runs, per measured size, on a log axis of 1 + regret. */
    static String chart(Compiler.Group g, List<ShadowReport.Row> rows) {
        List<Compiler.SizeResult> sizes =
                g.sizes().stream().filter(s -> !Double.isNaN(s.ncclRegret())).toList();
        if (sizes.isEmpty()) {
            return "<p class=\"noise\">no measured NCCL time</p>\n";
        }
        Regrets r = Regrets.of(sizes, rows);
        StringBuilder s = new StringBuilder(FRAME.open("chart", "regret by size"));
        noiseBands(s, r);
        axes(s, r);
        policyLine(s, r);
        s.append(polyline(r.x(), r.nccl(), r, "#c62828", "6 4")); // on top: visible where equal
        for (int i = 0; i < sizes.size(); i++) {
            if (r.logged()[i]) {
                s.append(f(
                        "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"#1565c0\"><title>%s: policy %.1f%%, NCCL %.1f%%"
                                + "</title></circle>%n",
                        r.cx(i),
                        r.y(r.pol()[i]),
                        esc(ByteSize.format(sizes.get(i).nBytes())),
                        100 * r.pol()[i],
                        100 * r.nccl()[i]));
            }
        }
        s.append("</svg>\n");
        return s.toString();
    }

    /**
     * Grey bands at the sizes where a compile keeps NCCL's pick (its loss is within the noise), one
     * per size with its own title, and one label per run of adjacent such sizes at the run's middle
     * (a label per size overlapped its neighbours' into an unreadable row: a newcomer's fifth walk).
     */
    private static void noiseBands(StringBuilder s, Regrets r) {
        int pw = FRAME.plotWidth();
        double half = pw / Math.max(2.0, (r.x1() - r.x0())) / 2;
        int runStart = -1;
        for (int i = 0; i <= r.sizes().size(); i++) {
            boolean noise = i < r.sizes().size() && isNoise(r.sizes().get(i));
            if (noise) {
                Compiler.SizeResult sr = r.sizes().get(i);
                double cx = r.cx(i);
                s.append(f(
                        "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"#e0e0e0\"><title>%s: NCCL's pick "
                                + "kept, its %.1f%% loss is within the noise margin %.1f%%</title></rect>%n",
                        cx - half,
                        FRAME.top(),
                        2 * half,
                        FRAME.plotHeight(),
                        esc(ByteSize.format(sr.nBytes())),
                        100 * sr.ncclRegret(),
                        100 * sr.noiseMargin()));
                if (runStart < 0) {
                    runStart = i;
                }
            } else if (runStart >= 0) {
                s.append(f(
                        "<text x=\"%.1f\" y=\"%d\" font-size=\"11\" fill=\"#555\" text-anchor=\"middle\">noise: NCCL kept"
                                + "</text>%n",
                        (r.cx(runStart) + r.cx(i - 1)) / 2, FRAME.top() + 12));
                runStart = -1;
            }
        }
    }

    private static boolean isNoise(Compiler.SizeResult sr) {
        return !sr.ruled() && sr.note().contains("within the noise");
    }

    /** The regret grid (0, 1, 2, 5 x 10^n percent, labels at least 14 units apart), size labels, axis titles. */
    private static void axes(StringBuilder s, Regrets r) {
        double lastY = Double.POSITIVE_INFINITY;
        for (double v : new double[] {0, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10}) {
            if (Math.log10(1 + v) > r.top1()) {
                break;
            }
            double y = r.y(v);
            if (lastY - y < 14) {
                continue;
            }
            lastY = y;
            s.append(FRAME.gridLine(y, f("%.0f%%", 100 * v)));
        }
        int n = r.sizes().size();
        for (int i = 0; i < n; i++) {
            if (i % Math.max(1, n / 12) == 0 || i == n - 1) {
                s.append(FRAME.sizeLabel(r.cx(i), r.sizes().get(i).nBytes()));
            }
        }
        s.append(FRAME.axisTitles("message size (bytes, log scale)", 14, "regret vs best measured (log scale)"));
    }

    /**
     * The policy's line: it joins only neighbouring sizes the logs decided; between decided sizes
     * whose sizes in between had no rule hit nothing is known of what the policy runs there.
     */
    private static void policyLine(StringBuilder s, Regrets r) {
        boolean[] logged = r.logged();
        int i0 = 0;
        while (i0 < logged.length) {
            if (!logged[i0]) {
                i0++;
                continue;
            }
            int i1 = i0;
            while (i1 + 1 < logged.length && logged[i1 + 1]) {
                i1++;
            }
            if (i1 > i0) {
                s.append(polyline(
                        java.util.Arrays.copyOfRange(r.x(), i0, i1 + 1),
                        java.util.Arrays.copyOfRange(r.pol(), i0, i1 + 1),
                        r,
                        "#1565c0",
                        null));
            }
            i0 = i1 + 1;
        }
    }

    private static String polyline(double[] x, double[] y, Regrets r, String color, String dash) {
        StringBuilder p = new StringBuilder();
        for (int i = 0; i < x.length; i++) {
            p.append(f("%.1f,%.1f ", FRAME.x(x[i], r.x0(), r.x1()), r.y(y[i])));
        }
        return f(
                "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s points=\"%s\"/>%n",
                color,
                dash == null ? "" : " stroke-dasharray=\"" + dash + "\"",
                p.toString().strip());
    }
}
