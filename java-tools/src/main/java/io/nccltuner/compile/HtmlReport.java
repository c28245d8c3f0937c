package io.nccltuner.compile;

import static io.nccltuner.compile.SvgChart.esc;

import io.nccltuner.compile.Compiler.Compilation;
import io.nccltuner.compile.Compiler.Group;
import io.nccltuner.compile.Compiler.SizeResult;
import io.nccltuner.compile.Compiler.Stats;
import io.nccltuner.model.BusBandwidth;
import io.nccltuner.policy.ByteSize;
import io.nccltuner.policy.Policy.Rule;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The compile report as one self-contained HTML page (no scripts, no external files, readable
 * offline): per group an inline SVG chart, as wide as the page, of bus bandwidth (GB/s, nccl-tests'
 * bus factor) versus message size (bytes) on log-log axes with one line per candidate and a thick
 * dashed line for NCCL's own pick, NCCL's pick marked with black rings and the policy's pick with
 * red diamonds, error bars for the replicates' spread (or, with one replicate, the noise read from
 * neighbouring sizes), one legend entry per series; then the size table and the rules. Hovering a
 * point shows its values (SVG {@code <title>}).
 */
public final class HtmlReport {
    private static final String[] COLORS = {
        "#1f77b4", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f", "#ff7f0e", "#393b79"
    };
    private static final int W = 1200;
    private static final int H = 560;
    private static final int L = 80;
    private static final int R = 230;
    private static final int T = 30;
    private static final int B = 60;
    /** The chart's frame: viewBox W x H, the legend in the right margin. */
    private static final SvgChart FRAME = new SvgChart(W, H, L, R, T, B);
    /** The chart's busbw axis spans at most this many decades, around the median. */
    static final double MAX_DECADES = 9;

    private HtmlReport() {}

    /**
     * Renders the page.
     *
     * @param c the compilation
     * @param savings workload weighting, may be empty
     * @return the HTML document
     */
    public static String render(Compilation c, List<Workload.Savings> savings) {
        return render(c, savings, c.policy().name(), List.of());
    }

    /**
     * Renders the page: its title and heading say what it shows ({@link #heading}), the line under
     * the heading names the policy.
     *
     * @param c the compilation
     * @param savings workload weighting, may be empty
     * @param policy what the line under the heading calls the policy ("policy.yaml, compiled from
     *     sweep.csv")
     * @param machines the machines the inputs name ({@link Measurement#hardware}), for the heading
     * @return the HTML document
     */
    public static String render(
            Compilation c, List<Workload.Savings> savings, String policy, List<Measurement.Hardware> machines) {
        String title = heading(c, machines);
        StringBuilder sb = new StringBuilder();
        sb.append("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>")
                .append(esc(title))
                .append("</title>\n<style>\n")
                .append("body{font-family:system-ui,sans-serif;margin:2em;color:#222}\n")
                .append(
                        "table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}\n")
                .append("td.l,th.l{text-align:left}tr.rule{background:#fff3e8}\n")
                .append("svg text{font-size:12px;font-family:system-ui,sans-serif}\n")
                .append(SvgChart.CSS)
                .append("</style></head><body>\n<h1>")
                .append(esc(title))
                .append("</h1>\n<p>Policy ")
                .append(esc(policy))
                .append(". ")
                .append(esc(c.policy().description()))
                .append("</p>\n");
        for (Group g : c.groups()) {
            sb.append("<h2>").append(esc(g.key().toString())).append("</h2>\n");
            chart(sb, g);
            table(sb, g);
            sb.append("<p>")
                    .append(esc(TextReport.noiseLegend(c.options()).strip()))
                    .append("</p>\n");
            sb.append("<h3>Rules (").append(g.rules().size()).append(")</h3>\n<ul>\n");
            for (Rule r : g.rules()) {
                sb.append("<li>").append(esc(TextReport.describe(r))).append("</li>\n");
            }
            sb.append("</ul>\n");
        }
        if (!savings.isEmpty()) {
            sb.append("<h2>Workload</h2>\n<table><tr><th class=l>group</th><th>calls</th><th>priced</th>"
                    + "<th>NCCL us</th><th>policy us</th><th>best us</th><th>NCCL regret</th><th>policy regret</th>"
                    + "<th>saving</th></tr>\n");
            for (Workload.Savings s : savings) {
                sb.append("<tr><td class=l>")
                        .append(esc(s.key().toString()))
                        .append("</td><td>")
                        .append(s.calls())
                        .append("</td><td>")
                        .append(s.priced())
                        .append("</td><td>")
                        .append(TextReport.us(s.defaultUs()))
                        .append("</td><td>")
                        .append(TextReport.us(s.policyUs()))
                        .append("</td><td>")
                        .append(TextReport.us(s.bestUs()))
                        .append("</td><td>")
                        .append(TextReport.pct(s.defaultRegret()))
                        .append("</td><td>")
                        .append(TextReport.pct(s.policyRegret()))
                        .append("</td><td>")
                        .append(TextReport.pct(s.saving()))
                        .append("</td></tr>\n");
            }
            sb.append("</table>\n");
            savings.forEach(s -> sb.append("<p>")
                    .append(esc(s.key() + ": saving of NCCL's time " + s.baseline()))
                    .append("</p>\n"));
        }
        list(sb, "Refused rows (wrong results or mangled, never used)", c.refused());
        list(sb, "Warnings", c.warnings());
        sb.append("</body></html>\n");
        return sb.toString();
    }

    /**
     * What a compile page shows: {@code nccl-tuner compile: AllReduce, nRanks 8, nNodes 1 (H200, NCCL
     * 2.28.9)} for one group, {@code nccl-tuner compile: 3 groups (AllReduce, AllGather; H200, NCCL
     * 2.28.9)} for several; the machine where the inputs name one (GPU name without "NVIDIA ", NCCL
     * version), {@code 2 machines} where they name several.
     *
     * @param c the compilation
     * @param named the machines the inputs name (nulls and repeats ignored); a group's own machine
     *     counts too
     * @return the page's title and heading
     */
    public static String heading(Compilation c, List<Measurement.Hardware> named) {
        List<Group> groups = c.groups();
        java.util.Set<Measurement.Hardware> machines = new java.util.LinkedHashSet<>();
        for (Group g : groups) {
            if (g.key().hardware() != null) {
                machines.add(g.key().hardware());
            }
        }
        for (Measurement.Hardware hw : named) {
            if (hw != null) {
                machines.add(hw);
            }
        }
        String machine = machines.size() > 1
                ? machines.size() + " machines"
                : machines.size() == 1 ? machineName(machines.iterator().next()) : "";
        String what;
        if (groups.size() == 1) {
            Compiler.GroupKey k = groups.getFirst().key();
            what = k.collective() + ", nRanks " + k.nRanks() + ", nNodes " + k.nNodes()
                    + (machine.isEmpty() ? "" : " (" + machine + ")");
        } else {
            String collectives = groups.stream()
                    .map(g -> g.key().collective().toString())
                    .distinct()
                    .collect(java.util.stream.Collectors.joining(", "));
            what = TextReport.count(groups.size(), "group")
                    + (groups.isEmpty() ? "" : " (" + collectives + (machine.isEmpty() ? "" : "; " + machine) + ")");
        }
        return "nccl-tuner compile: " + what;
    }

    /** @return {@code H200, NCCL 2.28.9}, or what of it the machine names */
    private static String machineName(Measurement.Hardware hw) {
        List<String> parts = new java.util.ArrayList<>();
        if (hw.gpu() != null) {
            parts.add(hw.gpu().replaceFirst("^NVIDIA ", ""));
        }
        if (hw.ncclVersion() != null) {
            parts.add("NCCL " + hw.ncclVersion());
        }
        return String.join(", ", parts);
    }

    private static void list(StringBuilder sb, String title, List<String> items) {
        if (items.isEmpty()) {
            return;
        }
        sb.append("<h2>").append(title).append(" (").append(items.size()).append(")</h2>\n<ul>\n");
        for (String s : items) {
            sb.append("<li>").append(esc(s)).append("</li>\n");
        }
        sb.append("</ul>\n");
    }

    private static void table(StringBuilder sb, Group g) {
        sb.append("<table><tr><th class=l>size range</th><th class=l>NCCL's pick</th><th>NCCL us</th>"
                + "<th class=l>best</th><th>best us</th><th class=l>policy's pick</th><th>regret before</th>"
                + "<th>after</th><th>noise</th></tr>\n");
        for (SizeResult s : g.sizes()) {
            Stats best = s.candidates().isEmpty() ? null : s.candidates().getFirst();
            String bestName = best == null || (!Double.isNaN(s.ncclUs()) && s.ncclUs() <= best.medianUs())
                    ? "NCCL"
                    : best.config().label();
            sb.append(s.ruled() ? "<tr class=rule>" : "<tr>")
                    .append("<td class=l>")
                    .append(esc(ByteSize.format(s.fromBytes()) + " .. " + ByteSize.format(s.toBytes())))
                    .append("</td><td class=l>")
                    .append(s.ncclLabel())
                    .append("</td><td>")
                    .append(TextReport.us(s.ncclUs()))
                    .append("</td><td class=l>")
                    .append(bestName)
                    .append("</td><td>")
                    .append(TextReport.us(s.bestUs()))
                    .append("</td><td class=l>")
                    .append(s.ruled() ? s.ranking().getFirst().config().label() : "NCCL")
                    .append("</td><td>")
                    .append(TextReport.pct(s.ncclRegret()))
                    .append("</td><td>")
                    .append(TextReport.pct(s.policyRegret()))
                    .append("</td><td>")
                    .append(TextReport.pct(s.noiseMargin()))
                    .append("</td></tr>\n");
        }
        sb.append("</table>\n");
    }

    /**
     * A chart's series and axes: per configuration its points ({@link #point}), sorted by label so
     * that the legend's order does not depend on which size a configuration first appears at;
     * NCCL's own pick's points; the size axis xMin..xMax (log2 bytes); the busbw axis lyLo..lyHi
     * (log10 GB/s) around the values' span lo..hi, clipped when a value lies outside it (a note in
     * the margin above the plot says so); the chart's height (SVG user units), {@code H} or taller
     * where the legend beside the plot needs it.
     */
    private record Plot(
            Map<RunConfig, List<double[]>> series,
            List<RunConfig> order,
            List<double[]> nccl,
            double xMin,
            double xMax,
            double lo,
            double hi,
            boolean clipped,
            double lyLo,
            double lyHi,
            int height) {
        static Plot of(Group g) {
            List<SizeResult> sizes = g.sizes();
            var coll = g.key().collective();
            int nRanks = g.key().nRanks();
            double xMin = SvgChart.log2Size(sizes.getFirst().nBytes());
            double xMax = SvgChart.log2Size(sizes.getLast().nBytes());
            if (xMax - xMin < 1) {
                xMin -= 0.5;
                xMax += 0.5;
            }
            Map<RunConfig, List<double[]>> series = new LinkedHashMap<>();
            List<double[]> nccl = new ArrayList<>();
            for (SizeResult s : sizes) {
                for (Stats st : s.candidates()) {
                    series.computeIfAbsent(st.config(), k -> new ArrayList<>())
                            .add(point(coll, nRanks, s.nBytes(), st));
                }
                if (s.nccl() != null) {
                    nccl.add(point(coll, nRanks, s.nBytes(), s.nccl()));
                }
            }
            List<RunConfig> order = new ArrayList<>(series.keySet());
            order.sort(java.util.Comparator.comparing(RunConfig::label));
            List<Double> all = new ArrayList<>();
            for (List<double[]> l : series.values()) {
                l.forEach(p -> all.add(p[1]));
            }
            nccl.forEach(p -> all.add(p[1]));
            all.removeIf(v -> !(v > 0) || !Double.isFinite(v));
            double lo = 1;
            double hi = 10;
            if (!all.isEmpty()) {
                java.util.Collections.sort(all);
                double med = Math.log10(all.get(all.size() / 2));
                // at most MAX_DECADES decades around the median: a stray time would otherwise squash every
                // line; values outside are drawn on the edge
                lo = Math.max(Math.log10(all.getFirst()), med - MAX_DECADES / 2);
                hi = Math.min(Math.log10(all.getLast()), med + MAX_DECADES / 2);
            }
            boolean clipped = !all.isEmpty() && (Math.log10(all.getFirst()) < lo || Math.log10(all.getLast()) > hi);
            double lyLo = Math.floor(lo * 10) / 10 - 0.1;
            double lyHi = Math.ceil(hi * 10) / 10 + 0.1;
            // the legend beside the plot (a line per configuration, NCCL's, the policy's, three lines of
            // notes) sets the chart's height where it would run below the frame
            int height = Math.max(H, T + 92 + 18 * order.size());
            return new Plot(series, order, nccl, xMin, xMax, lo, hi, clipped, lyLo, lyHi, height);
        }

        /** @return the x of a message size (bytes) */
        double px(double bytes) {
            return FRAME.x(SvgChart.log2Size(bytes), xMin, xMax);
        }

        /** @return the y of a busbw (GB/s); values off the axis on its edge */
        double py(double v) {
            double lv = v > 0 ? Math.log10(v) : lyLo;
            return T + (lyHi - Math.min(lyHi, Math.max(lyLo, lv))) / (lyHi - lyLo) * (height - T - B);
        }
    }

    /**
     * busbw (GB/s, log) versus message size (log2), one series per measured configuration, NCCL's
     * own pick dashed with rings, the policy's pick as red diamonds; error bars: the replicates'
     * min..max (solid), or with one replicate the noise the compile read from neighbouring sizes
     * (dashed: busbw x exp(+-jump)). One legend entry per series, beside the plot; the SVG scales to
     * the page's width.
     */
    private static void chart(StringBuilder sb, Group g) {
        Plot plot = Plot.of(g);
        axes(sb, plot);
        int ly = T + 10;
        for (int ci = 0; ci < plot.order().size(); ci++) {
            RunConfig cfg = plot.order().get(ci);
            candidate(sb, cfg, plot.series().get(cfg), plot, COLORS[ci % COLORS.length], ly);
            ly += 18;
        }
        ncclAndPolicy(sb, g, plot);
        legend(sb, ly, "#000", "NCCL's own pick (auto)", true, true);
        ly += 18;
        int lx = W - R + 22;
        sb.append(diamond(lx, ly)).append("</path>\n").append(text(lx + 16, ly + 4, "start", "policy's pick (rules)"));
        ly += 26;
        sb.append(text(W - R + 12, ly, "start", "bars: replicates' min..max;"));
        ly += 15;
        sb.append(text(W - R + 12, ly, "start", "dashed: 1 replicate, noise from"));
        ly += 15;
        sb.append(text(W - R + 12, ly, "start", "neighbouring sizes"));
        sb.append("</svg>\n");
    }

    /** The opening tag, the plot's frame, the grid (powers of two; {@link SvgChart#logTicks}, labelled {@link SvgChart#rateLabel}) and the axis titles. */
    private static void axes(StringBuilder sb, Plot plot) {
        int h = plot.height();
        int plotHeight = h - T - B;
        sb.append("<svg class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 ")
                .append(W)
                .append(' ')
                .append(h)
                .append("\" role=\"img\" aria-label=\"bus bandwidth by message size\">\n");
        sb.append("<rect x=\"")
                .append(L)
                .append("\" y=\"")
                .append(T)
                .append("\" width=\"")
                .append(FRAME.plotWidth())
                .append("\" height=\"")
                .append(plotHeight)
                .append("\" fill=\"#fafafa\" stroke=\"#999\"/>\n");
        // x ticks: powers of two, at most ~14 labels
        int span = (int) Math.ceil(plot.xMax()) - (int) Math.floor(plot.xMin());
        int step = Math.max(1, (span + 13) / 14);
        for (int e = (int) Math.ceil(plot.xMin()); e <= (int) Math.floor(plot.xMax()); e++) {
            if (e % step != 0 || e < 0 || e > 62) {
                continue;
            }
            double x = plot.px(Math.pow(2, e));
            sb.append(line(x, T, x, h - B, "#e0e0e0")).append(text(x, h - B + 16, "middle", ByteSize.format(1L << e)));
        }
        for (double v : SvgChart.logTicks(plot.lyLo(), plot.lyHi())) {
            double y = plot.py(v);
            sb.append(line(L, y, W - R, y, "#e0e0e0")).append(text(L - 6, y + 4, "end", SvgChart.rateLabel(v)));
        }
        sb.append(text(L + FRAME.plotWidth() / 2.0, h - 18, "middle", "message size (bytes, log scale)"));
        if (plot.clipped()) { // in the margin above the plot, where no point, line or label is drawn
            sb.append(text(
                    L,
                    T - 10,
                    "start",
                    "busbw outside " + SvgChart.rateLabel(Math.pow(10, plot.lo())) + " .. "
                            + SvgChart.rateLabel(Math.pow(10, plot.hi())) + " drawn on the chart's edge"));
        }
        sb.append("<text x=\"16\" y=\"")
                .append(T + plotHeight / 2)
                .append("\" transform=\"rotate(-90 16 ")
                .append(T + plotHeight / 2)
                .append(")\" text-anchor=\"middle\">bus bandwidth (bytes/s, log scale)</text>\n");
    }

    /** One configuration's series: its bars, line and points (values on hover), and its legend entry at ly. */
    private static void candidate(
            StringBuilder sb, RunConfig cfg, List<double[]> pts, Plot plot, String color, int ly) {
        bars(sb, pts, plot, color);
        polyline(sb, pts, plot, color, 1.5, null);
        for (double[] p : pts) {
            sb.append("<circle cx=\"")
                    .append(f(plot.px(p[0])))
                    .append("\" cy=\"")
                    .append(f(plot.py(p[1])))
                    .append("\" r=\"2.5\" fill=\"")
                    .append(color)
                    .append("\"><title>")
                    .append(cfg.label())
                    .append(' ')
                    .append(ByteSize.format((long) p[0]))
                    .append(": ")
                    .append(TextReport.us(p[5]))
                    .append(" us, busbw ")
                    .append(gbs(p[1]))
                    .append(" GB/s")
                    .append(
                            p[4] == 0 && p[2] != p[3]
                                    ? ", replicates " + gbs(p[2]) + " .. " + gbs(p[3]) + " GB/s"
                                    : p[4] == 1
                                            ? ", noise from neighbouring sizes " + gbs(p[2]) + " .. " + gbs(p[3])
                                                    + " GB/s"
                                            : "")
                    .append("</title></circle>\n");
        }
        legend(sb, ly, color, cfg.label(), false, false);
    }

    /** NCCL's own pick (bars, the dashed line, rings) and the policy's pick at its ruled sizes (diamonds). */
    private static void ncclAndPolicy(StringBuilder sb, Group g, Plot plot) {
        var coll = g.key().collective();
        int nRanks = g.key().nRanks();
        bars(sb, plot.nccl(), plot, "#000");
        polyline(sb, plot.nccl(), plot, "#000", 2.5, "6 4");
        for (SizeResult s : g.sizes()) {
            if (s.nccl() != null) {
                double[] p = point(coll, nRanks, s.nBytes(), s.nccl());
                sb.append("<circle cx=\"")
                        .append(f(plot.px(p[0])))
                        .append("\" cy=\"")
                        .append(f(plot.py(p[1])))
                        .append("\" r=\"5\" fill=\"none\" stroke=\"#000\" stroke-width=\"1.5\"><title>NCCL's pick")
                        .append(s.ncclPick() == null ? "" : " " + s.ncclPick().label())
                        .append(' ')
                        .append(ByteSize.format(s.nBytes()))
                        .append(": ")
                        .append(TextReport.us(s.ncclUs()))
                        .append(" us, busbw ")
                        .append(gbs(p[1]))
                        .append(" GB/s, regret ")
                        .append(TextReport.pct(s.ncclRegret()))
                        .append("</title></circle>\n");
            }
            if (s.ruled()) {
                double x = plot.px(s.nBytes());
                double y = plot.py(BusBandwidth.busbw(coll, nRanks, s.nBytes(), s.policyUs()));
                sb.append(diamond(x, y))
                        .append("<title>policy's pick ")
                        .append(s.ranking().getFirst().config().label())
                        .append(' ')
                        .append(ByteSize.format(s.nBytes()))
                        .append(": ")
                        .append(TextReport.us(s.policyUs()))
                        .append(" us</title></path>\n");
            }
        }
    }

    /** {size, busbw, bar low, bar high, 1 when the bar is the neighbour-jump noise else 0, median us}. */
    private static double[] point(io.nccltuner.policy.Collective c, int nRanks, long nBytes, Stats st) {
        double b = BusBandwidth.busbw(c, nRanks, nBytes, st.medianUs());
        if (st.replicates() >= 2) {
            return new double[] {
                nBytes,
                b,
                BusBandwidth.busbw(c, nRanks, nBytes, st.maxUs()),
                BusBandwidth.busbw(c, nRanks, nBytes, st.minUs()),
                0,
                st.medianUs()
            };
        }
        if (st.neighbourJump() > 0) {
            return new double[] {
                nBytes, b, b * Math.exp(-st.neighbourJump()), b * Math.exp(st.neighbourJump()), 1, st.medianUs()
            };
        }
        return new double[] {nBytes, b, b, b, 0, st.medianUs()};
    }

    private static void bars(StringBuilder sb, List<double[]> pts, Plot plot, String color) {
        for (double[] p : pts) {
            if (!(p[3] > p[2])) {
                continue;
            }
            double x = plot.px(p[0]);
            double ya = plot.py(p[2]);
            double yb = plot.py(p[3]);
            String dash = p[4] == 1 ? "\" stroke-dasharray=\"3 2" : "";
            sb.append("<path class=\"")
                    .append(p[4] == 1 ? "noise-bar" : "error-bar")
                    .append("\" d=\"M")
                    .append(f(x))
                    .append(' ')
                    .append(f(ya))
                    .append(" V")
                    .append(f(yb))
                    .append(" M")
                    .append(f(x - 3))
                    .append(' ')
                    .append(f(ya))
                    .append(" h6 M")
                    .append(f(x - 3))
                    .append(' ')
                    .append(f(yb))
                    .append(" h6\" stroke=\"")
                    .append(color)
                    .append("\" stroke-width=\"1\" fill=\"none")
                    .append(dash)
                    .append("\"/>\n");
        }
    }

    private static String diamond(double x, double y) {
        return "<path class=\"pick\" d=\"M" + f(x) + ' ' + f(y - 7) + " L" + f(x + 6) + ' ' + f(y) + " L" + f(x) + ' '
                + f(y + 7) + " L" + f(x - 6) + ' ' + f(y) + " Z\" fill=\"none\" stroke=\"#d62728\" stroke-width=\"2\">";
    }

    private static String gbs(double v) {
        return SvgChart.gbps(v);
    }

    private static void legend(StringBuilder sb, int y, String color, String label, boolean dashed, boolean ring) {
        int x = W - R + 12;
        sb.append("<line x1=\"")
                .append(x)
                .append("\" y1=\"")
                .append(y)
                .append("\" x2=\"")
                .append(x + 20)
                .append("\" y2=\"")
                .append(y)
                .append("\" stroke=\"")
                .append(color)
                .append("\" stroke-width=\"")
                .append(dashed ? "2.5\" stroke-dasharray=\"6 4" : "1.5")
                .append("\"/>\n");
        if (ring) {
            sb.append("<circle cx=\"")
                    .append(x + 10)
                    .append("\" cy=\"")
                    .append(y)
                    .append("\" r=\"5\" fill=\"none\" stroke=\"")
                    .append(color)
                    .append("\" stroke-width=\"1.5\"/>\n");
        }
        sb.append("<text class=\"legend\" x=\"")
                .append(x + 26)
                .append("\" y=\"")
                .append(y + 4)
                .append("\" text-anchor=\"start\">")
                .append(esc(label))
                .append("</text>\n");
    }

    private static void polyline(
            StringBuilder sb, List<double[]> pts, Plot plot, String color, double width, String dash) {
        if (pts.isEmpty()) {
            return;
        }
        sb.append("<polyline fill=\"none\" stroke=\"")
                .append(color)
                .append("\" stroke-width=\"")
                .append(width)
                .append('"');
        if (dash != null) {
            sb.append(" stroke-dasharray=\"").append(dash).append('"');
        }
        sb.append(" points=\"");
        for (double[] p : pts) {
            sb.append(f(plot.px(p[0]))).append(',').append(f(plot.py(p[1]))).append(' ');
        }
        sb.append("\"/>\n");
    }

    private static String line(double x1, double y1, double x2, double y2, String color) {
        return "<line x1=\"" + f(x1) + "\" y1=\"" + f(y1) + "\" x2=\"" + f(x2) + "\" y2=\"" + f(y2) + "\" stroke=\""
                + color + "\"/>\n";
    }

    private static String text(double x, double y, String anchor, String s) {
        return "<text x=\"" + f(x) + "\" y=\"" + f(y) + "\" text-anchor=\"" + anchor + "\">" + esc(s) + "</text>\n";
    }

    private static String f(double v) {
        return String.format(Locale.ROOT, "%.1f", v);
    }
}
