package io.nccltuner.report;

import static io.nccltuner.compile.SvgChart.esc;
import static io.nccltuner.report.ShadowReportHtml.td;

import io.nccltuner.compile.SvgChart;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The canary part of the HTML report ({@link ShadowReportHtml#render(ShadowReport, CanaryReport)}):
 * the cross-rank checks of the measured lines; per communicator shape and collective a chart of
 * both arms' device-time distributions by size (SVG, {@code width:100%}, viewBox 1000 x 340; x =
 * the size bucket's first nBytes, log scale; y = device time in microseconds, log scale; per size
 * NCCL's arm left, in red ({@code #c62828}, a square at p50, a bar from p5 to p95), the policy's
 * arm right, in blue ({@code #1565c0}, a circle at p50, a bar from p5 to p95); promoted sizes on a
 * green band; one legend entry per series); then the verdict table (time and busbw side by side)
 * and the "executed as decided" table. No scripts.
 */
public final class CanaryReportHtml {
    /** NCCL's arm's colour. */
    static final String NCCL_COLOR = "#c62828";
    /** The policy's arm's colour. */
    static final String POLICY_COLOR = "#1565c0";
    /** The chart's frame: viewBox 1000 x 340, the legend above the plot. */
    private static final SvgChart FRAME = new SvgChart(1000, 340, 70, 20, 46, 50);

    private CanaryReportHtml() {}

    private static String f(String fmt, Object... args) {
        return String.format(Locale.ROOT, fmt, args);
    }

    /**
     * The canary section.
     *
     * @param c the canary report
     * @return HTML for inside the page's body; empty when no measured line was read
     */
    public static String section(CanaryReport c) {
        if (c.isEmpty()) {
            return "";
        }
        StringBuilder h = new StringBuilder();
        h.append("<h2>Canary: NCCL's arm against the policy's arm</h2>\n<ul>\n");
        h.append(f(
                "<li>Measured lines of %d ranks. gain = 1 - mean policy / mean NCCL (device time); 95%% interval over "
                        + "calls (delta method) or over ranks (t), the wider; a verdict needs %d timed collectives per arm.</li>%n",
                c.ranks(), c.minCalls()));
        h.append(
                c.tableProblems().isEmpty()
                        ? "<li class=\"ok\">Every rank of each shape measured the same table.</li>\n"
                        : "<li class=\"bad\">Measured tables differ: " + esc(String.join("; ", c.tableProblems()))
                                + "</li>\n");
        h.append(
                c.decisionProblems().isEmpty()
                        ? "<li class=\"ok\">Every rank's policy arm decided the same.</li>\n"
                        : "<li class=\"bad\">Measured decisions differ (hang risk): "
                                + esc(String.join("; ", c.decisionProblems())) + "</li>\n");
        h.append("</ul>\n");
        Map<String, List<CanaryReport.Row>> groups = new LinkedHashMap<>();
        for (CanaryReport.Row r : c.rows()) {
            groups.computeIfAbsent(
                            r.collective() + ", nRanks " + r.nRanks() + ", nNodes " + r.nNodes(),
                            x -> new ArrayList<>())
                    .add(r);
        }
        groups.forEach((title, rows) -> {
            h.append("<h2>").append(esc(title)).append(": device time by size, both arms</h2>\n");
            h.append(chart(rows));
        });
        verdicts(h, c);
        executions(h, c);
        return h.toString();
    }

    /** The verdict table: per shape, collective and size both arms' counts, times and busbw, and the gain. */
    private static void verdicts(StringBuilder h, CanaryReport c) {
        h.append("<h2>Canary verdicts</h2>\n<table><tr><th class=\"l\">shape</th><th class=\"l\">collective</th>")
                .append("<th class=\"l\">size</th><th class=\"l\">verdict</th><th>gain [95% CI]</th>")
                .append(
                        "<th>NCCL timed / calls</th><th>NCCL p50 / p95 us</th><th>NCCL mean us</th><th>NCCL busbw GB/s</th>")
                .append("<th>policy timed / calls</th><th>policy p50 / p95 us</th><th>policy mean us</th>")
                .append("<th>policy busbw GB/s</th><th class=\"l\">policy decided</th></tr>\n");
        for (CanaryReport.Row r : c.rows()) {
            String cls = switch (r.verdict()) {
                case PROMOTE -> "l ok";
                case KEEP_NCCL -> "l bad";
                default -> "l noise";
            };
            h.append("<tr><td class=\"l\">")
                    .append(io.nccltuner.model.JobShape.of(r.nRanks(), r.nNodes()))
                    .append("</td><td class=\"l\">")
                    .append(r.collective())
                    .append("</td><td class=\"l\">")
                    .append(esc(r.range()))
                    .append("</td><td class=\"")
                    .append(cls)
                    .append("\">")
                    .append(esc(r.verdict().label()))
                    .append("</td><td>")
                    .append(esc(CanaryReport.interval(r.gain())))
                    .append("</td>")
                    .append(arm(r, r.nccl()))
                    .append(arm(r, r.policy()))
                    .append("<td class=\"l\">")
                    .append(esc(r.policy().decided()))
                    .append("</td></tr>\n");
        }
        h.append(
                "</table>\n<p class=\"legend\">busbw at the bucket's first size and the arm's mean time: nBytes / time x "
                        + "2(n-1)/n (AllReduce), (n-1)/n (AllGather, ReduceScatter), 1 (Broadcast, Reduce).</p>\n");
    }

    /** The "executed as decided" table: per shape, collective, size and arm. */
    private static void executions(StringBuilder h, CanaryReport c) {
        h.append("<h2>Executed as decided</h2>\n<table><tr><th class=\"l\">shape</th><th class=\"l\">collective</th>")
                .append("<th class=\"l\">size</th><th class=\"l\">arm</th><th>collectives</th><th>as decided</th>")
                .append("<th>not as decided</th><th>no decision</th><th class=\"l\">why not</th></tr>\n");
        for (CanaryReport.Execution x : c.executed()) {
            h.append("<tr><td class=\"l\">")
                    .append(io.nccltuner.model.JobShape.of(x.nRanks(), x.nNodes()))
                    .append("</td><td class=\"l\">")
                    .append(x.collective())
                    .append("</td><td class=\"l\">")
                    .append(esc(x.range()))
                    .append("</td><td class=\"l\">")
                    .append(x.arm().spelling())
                    .append("</td><td>")
                    .append(x.collectives())
                    .append("</td><td>")
                    .append(x.asDecided())
                    .append("</td><td>")
                    .append(x.notAsDecided())
                    .append("</td><td>")
                    .append(x.noDecision())
                    .append("</td><td class=\"l\">")
                    .append(esc(x.reasonText()))
                    .append("</td></tr>\n");
        }
        h.append("</table>\n");
    }

    private static String arm(CanaryReport.Row r, CanaryReport.ArmStats a) {
        return "<td>" + a.timed() + " / " + a.count() + "</td><td>"
                + (Double.isNaN(a.p50Us()) ? "-" : f("%.1f / %.1f", a.p50Us(), a.p95Us())) + "</td>"
                + td(a.meanUs(), "%.1f")
                + "<td>" + SvgChart.gbps(r.busbw(a.meanUs())) + "</td>";
    }

    /**
     * A chart's axes: sizes x0..x1 (log2 bytes, half a power of two beyond the first and last
     * bucket), device times y0..y1 (log10 microseconds, at least half a decade).
     */
    private record Axes(double x0, double x1, double y0, double y1) {
        /** @return the axes of the rows' timed arms, null when no arm was timed */
        static Axes of(List<CanaryReport.Row> rows) {
            double lo = Double.POSITIVE_INFINITY;
            double hi = Double.NEGATIVE_INFINITY;
            for (CanaryReport.Row r : rows) {
                for (CanaryReport.ArmStats a : List.of(r.nccl(), r.policy())) {
                    if (!Double.isNaN(a.p50Us())) {
                        lo = Math.min(lo, a.p5Us());
                        hi = Math.max(hi, a.p95Us());
                    }
                }
            }
            if (lo == Double.POSITIVE_INFINITY) {
                return null;
            }
            double y0 = Math.floor(Math.log10(lo) * 4) / 4 - 0.05;
            double y1 = Math.ceil(Math.log10(hi) * 4) / 4 + 0.05;
            if (y1 - y0 < 0.5) {
                double mid = (y0 + y1) / 2;
                y0 = mid - 0.25;
                y1 = mid + 0.25;
            }
            double x0 = SvgChart.log2Size(rows.get(0).fromBytes()) - 0.5;
            double x1 = SvgChart.log2Size(rows.get(rows.size() - 1).fromBytes()) + 0.5;
            return new Axes(x0, x1, y0, y1);
        }

        double x(long bytes) {
            return FRAME.x(SvgChart.log2Size(bytes), x0, x1);
        }

        double y(double us) {
            int ph = FRAME.plotHeight();
            return FRAME.top() + ph - (Math.log10(us) - y0) / (y1 - y0) * ph;
        }

        /** @return one quarter octave (a grid bucket), SVG user units */
        double slot() {
            return FRAME.plotWidth() / Math.max(1.0, (x1 - x0) * 4);
        }
    }

    /** Both arms' p5/p50/p95 per size of one shape and collective; log size axis, log time axis. */
    static String chart(List<CanaryReport.Row> rows) {
        Axes ax = Axes.of(rows);
        if (ax == null) {
            return "<p class=\"noise\">no timed collectives</p>\n";
        }
        StringBuilder s = new StringBuilder(FRAME.open(
                "chart canary", rows.get(0).collective() + " device time by size, NCCL's arm and the policy's arm"));
        promotedBands(s, rows, ax);
        axes(s, rows, ax);
        legend(s);
        double dx = Math.min(7, ax.slot() / 4);
        for (CanaryReport.Row r : rows) {
            double cx = ax.x(r.fromBytes());
            s.append(marker(r, r.nccl(), "NCCL", cx - dx, ax, NCCL_COLOR, false));
            s.append(marker(r, r.policy(), "policy", cx + dx, ax, POLICY_COLOR, true));
        }
        s.append("</svg>\n");
        return s.toString();
    }

    /** Green bands behind the sizes the canary promotes. */
    private static void promotedBands(StringBuilder s, List<CanaryReport.Row> rows, Axes ax) {
        double half = Math.max(12, ax.slot() / 2);
        for (CanaryReport.Row r : rows) {
            if (r.verdict() == CanaryReport.Verdict.PROMOTE) {
                s.append(f(
                        "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"#e8f5e9\"><title>%s: promote, gain %s"
                                + "</title></rect>%n",
                        ax.x(r.fromBytes()) - half,
                        FRAME.top(),
                        2 * half,
                        FRAME.plotHeight(),
                        esc(r.range()),
                        esc(CanaryReport.interval(r.gain()))));
            }
        }
    }

    /** The time grid (1, 2, 5 x 10^k us), the size labels (where they do not run into the previous one), the titles. */
    private static void axes(StringBuilder s, List<CanaryReport.Row> rows, Axes ax) {
        for (double v : SvgChart.decadeTicks(ax.y0(), ax.y1())) {
            s.append(FRAME.gridLine(ax.y(v), v >= 1 ? f("%.0f", v) : f("%.2g", v)));
        }
        double lastLabel = Double.NEGATIVE_INFINITY;
        for (CanaryReport.Row r : rows) {
            double cx = ax.x(r.fromBytes());
            if (cx - lastLabel >= 56) {
                s.append(FRAME.sizeLabel(cx, r.fromBytes()));
                lastLabel = cx;
            }
        }
        s.append(FRAME.axisTitles("message size (nBytes, log scale)", 16, "device time (us, log scale)"));
    }

    /** The legend above the plot: one entry per series. */
    private static void legend(StringBuilder s) {
        int left = FRAME.left();
        s.append(f(
                "<g class=\"legend\"><rect x=\"%d\" y=\"12\" width=\"9\" height=\"9\" fill=\"%s\"/>"
                        + "<text x=\"%d\" y=\"20\" font-size=\"12\">NCCL's arm (NCCL's pick): p50, bar p5..p95</text>",
                left, NCCL_COLOR, left + 14));
        s.append(f(
                "<circle cx=\"%d\" cy=\"16.5\" r=\"4.5\" fill=\"%s\"/><text x=\"%d\" y=\"20\" font-size=\"12\">"
                        + "policy's arm (the policy's candidate): p50, bar p5..p95</text>",
                left + 340, POLICY_COLOR, left + 350));
        s.append(f(
                "<rect x=\"%d\" y=\"12\" width=\"14\" height=\"9\" fill=\"#e8f5e9\" stroke=\"#a5d6a7\"/>"
                        + "<text x=\"%d\" y=\"20\" font-size=\"12\">promote</text></g>%n",
                left + 720, left + 738));
    }

    private static String marker(
            CanaryReport.Row r,
            CanaryReport.ArmStats a,
            String name,
            double cx,
            Axes ax,
            String color,
            boolean circle) {
        if (Double.isNaN(a.p50Us())) {
            return "";
        }
        double yp5 = ax.y(a.p5Us());
        double yp50 = ax.y(a.p50Us());
        double yp95 = ax.y(a.p95Us());
        String title = f(
                "%s %s arm: p50 %.1f us, p5..p95 %.1f..%.1f us, %d timed",
                esc(r.range()), name, a.p50Us(), a.p5Us(), a.p95Us(), a.timed());
        StringBuilder s =
                new StringBuilder(f("<g class=\"arm %s\"><title>%s</title>", name.toLowerCase(Locale.ROOT), title));
        s.append(f(
                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2\"/>",
                cx, yp5, cx, yp95, color));
        s.append(f(
                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2\"/>",
                cx - 3, yp5, cx + 3, yp5, color));
        s.append(f(
                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2\"/>",
                cx - 3, yp95, cx + 3, yp95, color));
        s.append(
                circle
                        ? f("<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4.5\" fill=\"%s\"/>", cx, yp50, color)
                        : f(
                                "<rect x=\"%.1f\" y=\"%.1f\" width=\"9\" height=\"9\" fill=\"%s\"/>",
                                cx - 4.5, yp50 - 4.5, color));
        return s.append("</g>\n").toString();
    }
}
