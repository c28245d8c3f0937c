package io.nccltuner.report;

import io.nccltuner.compile.Compiler;
import io.nccltuner.policy.ByteSize;
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
 * chart); then the decisions with time and busbw side by side. With the canary's measured lines,
 * its section ({@link CanaryReportHtml}) follows the cross-rank checks.
 */
public final class ShadowReportHtml {
    private ShadowReportHtml() {}

    static String esc(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }

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
        h.append("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>")
                .append(esc(r.policy()))
                .append(" - nccl-tuner report</title>\n<style>\n")
                .append("body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}\n")
                .append("h1{font-size:1.6em;margin:0 0 .3em}h2{font-size:1.2em;margin:1.4em 0 .4em}\n")
                .append("svg.chart{display:block;width:100%;height:auto;border:1px solid #ddd;background:#fff}\n")
                .append(
                        "table{border-collapse:collapse;width:100%;margin:.6em 0;font-size:12px}.legend{font-size:12px;margin:.2em 0}th,td{border:1px solid #ccc;padding:2px 6px;")
                .append(
                        "text-align:right;white-space:nowrap}th{background:#f2f2f2;white-space:normal}td.l,th.l{text-align:left}\n")
                .append(".bad{color:#b00020;font-weight:bold}.ok{color:#1b5e20}.noise{color:#666}\n")
                .append("</style></head><body>\n");
        h.append("<h1>").append(esc(r.policy())).append("</h1>\n");
        long comms = r.logs().stream().mapToLong(l -> l.comms().size()).sum();
        h.append("<p>")
                .append(r.logs().size())
                .append(" decision logs (ranks), ")
                .append(comms)
                .append(" communicators. Report of <code>nccl-tuner report</code>.</p>\n<ul>\n");
        h.append(
                r.tableProblems().isEmpty()
                        ? "<li class=\"ok\">Every rank of each shape runs the same table (sha256).</li>\n"
                        : "<li class=\"bad\">Tables differ: " + esc(String.join("; ", r.tableProblems())) + "</li>\n");
        h.append(
                r.decisionProblems().isEmpty()
                        ? "<li class=\"ok\">Every rank reaches the same decision at every size.</li>\n"
                        : "<li class=\"bad\">Decisions differ (hang risk): "
                                + esc(String.join("; ", r.decisionProblems())) + "</li>\n");
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
        if (canary != null) {
            h.append(CanaryReportHtml.section(canary));
        }
        for (Compiler.Group g : r.groups()) {
            List<ShadowReport.Row> rows = r.rows().stream()
                    .filter(x -> x.collective() == g.key().collective()
                            && x.nRanks() == g.key().nRanks()
                            && x.nNodes() == g.key().nNodes())
                    .toList();
            if (rows.isEmpty()) {
                continue;
            }
            h.append("<h2>")
                    .append(esc(g.key().collective() + ", nRanks " + g.key().nRanks() + ", nNodes "
                            + g.key().nNodes()))
                    .append(": regret by size</h2>\n");
            h.append("<p class=\"legend\"><span style=\"color:#c62828\">- - NCCL's own pick</span> &nbsp; "
                    + "<span style=\"color:#1565c0\">&mdash; with the policy of the logs (dots: sizes the logs decided, "
                    + "the decision with the most calls; a line joins neighbouring decided sizes only)</span> &nbsp; <span class=\"noise\">grey: measured gain within the "
                    + "noise, a compile keeps NCCL's pick</span></p>\n");
            h.append(chart(g, rows));
        }
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
                    .append(x.nRanks() == 0 ? "?" : io.nccltuner.model.JobShape.of(x.nRanks(), x.nNodes()))
                    .append("</td><td class=\"l\">")
                    .append(x.collective())
                    .append("</td><td class=\"l\">")
                    .append(esc("[" + ByteSize.format(x.fromBytes()) + ", "
                            + (x.toBytes() == -1 ? "inf" : ByteSize.format(x.toBytes())) + ")"))
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
                ShadowReport.Price p = x.price();
                if (p == null) {
                    h.append("<td colspan=\"6\"></td><td class=\"l noise\">not measured</td>");
                } else {
                    h.append(td(p.ncclUs(), "%.1f"))
                            .append(td(p.ncclBusbw(), "%.3f"))
                            .append(td(p.policyUs(), "%.1f"))
                            .append(td(p.policyBusbw(), "%.3f"))
                            .append(td(p.savedUs(), "%.1f"))
                            .append(td(p.savedUs() * x.calls(), "%.1f"))
                            .append("<td class=\"l noise\">")
                            .append(
                                    Double.isNaN(p.policyUs())
                                            ? "policy's pick not measured"
                                            : p.keptByNoise() ? "gain within noise: a compile keeps NCCL's pick" : "")
                            .append("</td>");
                }
            }
            h.append("</tr>\n");
        }
        h.append(
                        "</table>\n<h2>Ranks</h2>\n<table><tr><th class=\"l\">rank</th><th class=\"l\">file</th><th>comms</th>")
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
        h.append("</table>\n</body></html>\n");
        return h.toString();
    }

    private static String td(double v, String fmt) {
        return "<td>" + (Double.isNaN(v) || Double.isInfinite(v) ? "-" : f(fmt, v)) + "</td>";
    }

    /** Regret of NCCL's pick and of what the logged policy runs, per measured size, on a log axis of 1 + regret. */
    static String chart(Compiler.Group g, List<ShadowReport.Row> rows) {
        int w = 1000;
        int ht = 320;
        int left = 60;
        int right = 20;
        int top = 20;
        int bottom = 50;
        List<Compiler.SizeResult> sizes =
                g.sizes().stream().filter(s -> !Double.isNaN(s.ncclRegret())).toList();
        if (sizes.isEmpty()) {
            return "<p class=\"noise\">no measured NCCL time</p>\n";
        }
        double[] x = new double[sizes.size()];
        double[] nccl = new double[sizes.size()];
        double[] pol = new double[sizes.size()];
        boolean[] logged = new boolean[sizes.size()];
        double max = 0.05;
        for (int i = 0; i < sizes.size(); i++) {
            Compiler.SizeResult s = sizes.get(i);
            x[i] = Math.log(Math.max(1, s.nBytes())) / Math.log(2);
            nccl[i] = s.ncclRegret();
            pol[i] = nccl[i];
            long most = -1;
            for (ShadowReport.Row row : rows) { // the decision with the most calls at this size
                if (row.calls() > most
                        && Long.compareUnsigned(s.nBytes(), row.fromBytes()) >= 0
                        && (row.toBytes() == -1 || Long.compareUnsigned(s.nBytes(), row.toBytes()) < 0)) {
                    most = row.calls();
                    var pc = ShadowReport.config(row.policyPick(), row.channels());
                    for (Compiler.Stats st : s.candidates()) {
                        if (st.config().equals(pc)) {
                            pol[i] = st.regret();
                            logged[i] = true;
                        }
                    }
                }
            }
            max = Math.max(max, Math.max(nccl[i], pol[i]));
        }
        // log axis of 1 + regret: 1% and 100% both readable; regrets above 1000% sit on the top edge
        double top1 = Math.log10(1 + Math.min(max, 10)) * 1.05;
        double x0 = x[0];
        double x1 = Math.max(x[x.length - 1], x0 + 1);
        int pw = w - left - right;
        int ph = ht - top - bottom;
        java.util.function.DoubleUnaryOperator py =
                r -> top + ph - Math.min(Math.log10(1 + Math.max(0, r)), top1) / top1 * ph;
        StringBuilder s = new StringBuilder();
        s.append(f(
                "<svg class=\"chart\" viewBox=\"0 0 %d %d\" xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" "
                        + "aria-label=\"regret by size\">%n",
                w, ht));
        // noise bands
        for (int i = 0; i < sizes.size(); i++) {
            Compiler.SizeResult sr = sizes.get(i);
            if (!sr.ruled() && sr.note().contains("within the noise")) {
                double cx = left + (x[i] - x0) / (x1 - x0) * pw;
                double half = pw / Math.max(2.0, (x1 - x0)) / 2;
                s.append(f(
                        "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"#e0e0e0\"><title>%s: NCCL's pick "
                                + "kept, its %.1f%% loss is within the noise margin %.1f%%</title></rect>%n",
                        cx - half,
                        top,
                        2 * half,
                        ph,
                        esc(ByteSize.format(sr.nBytes())),
                        100 * sr.ncclRegret(),
                        100 * sr.noiseMargin()));
                s.append(f(
                        "<text x=\"%.1f\" y=\"%d\" font-size=\"11\" fill=\"#555\" text-anchor=\"middle\">noise: NCCL kept"
                                + "</text>%n",
                        cx, top + 12 + (i % 2) * 12));
            }
        }
        // axes and grid: 0, 1, 2, 5 x 10^n percent
        double lastY = Double.POSITIVE_INFINITY;
        for (double v : new double[] {0, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10}) {
            if (Math.log10(1 + v) > top1) {
                break;
            }
            double y = py.applyAsDouble(v);
            if (lastY - y < 14) { // labels at least 14 units apart
                continue;
            }
            lastY = y;
            s.append(f("<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#eee\"/>%n", left, y, w - right, y));
            s.append(f(
                    "<text x=\"%d\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\">%.0f%%</text>%n",
                    left - 4, y + 4, 100 * v));
        }
        for (int i = 0; i < sizes.size(); i++) {
            double cx = left + (x[i] - x0) / (x1 - x0) * pw;
            if (i % Math.max(1, sizes.size() / 12) == 0 || i == sizes.size() - 1) {
                s.append(f(
                        "<text x=\"%.1f\" y=\"%d\" font-size=\"11\" text-anchor=\"middle\">%s</text>%n",
                        cx, ht - bottom + 16, esc(ByteSize.format(sizes.get(i).nBytes()))));
            }
        }
        s.append(f(
                "<text x=\"%d\" y=\"%d\" font-size=\"12\" text-anchor=\"middle\">message size (bytes, log scale)"
                        + "</text>%n",
                left + pw / 2, ht - 8));
        s.append(f(
                "<text x=\"14\" y=\"%d\" font-size=\"12\" text-anchor=\"middle\" transform=\"rotate(-90 14 %d)\">"
                        + "regret vs best measured (log scale)</text>%n",
                top + ph / 2, top + ph / 2));
        // the policy's line joins only neighbouring sizes the logs decided: between decided sizes
        // whose sizes in between had no rule hit nothing is known of what the policy runs there
        int i0 = 0;
        while (i0 < sizes.size()) {
            if (!logged[i0]) {
                i0++;
                continue;
            }
            int i1 = i0;
            while (i1 + 1 < sizes.size() && logged[i1 + 1]) {
                i1++;
            }
            if (i1 > i0) {
                s.append(polyline(
                        java.util.Arrays.copyOfRange(x, i0, i1 + 1),
                        java.util.Arrays.copyOfRange(pol, i0, i1 + 1),
                        x0,
                        x1,
                        left,
                        pw,
                        py,
                        "#1565c0",
                        null));
            }
            i0 = i1 + 1;
        }
        s.append(polyline(x, nccl, x0, x1, left, pw, py, "#c62828", "6 4")); // on top: visible where equal
        for (int i = 0; i < sizes.size(); i++) {
            double cx = left + (x[i] - x0) / (x1 - x0) * pw;
            double cy = py.applyAsDouble(pol[i]);
            if (logged[i]) {
                s.append(f(
                        "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"#1565c0\"><title>%s: policy %.1f%%, NCCL %.1f%%"
                                + "</title></circle>%n",
                        cx, cy, esc(ByteSize.format(sizes.get(i).nBytes())), 100 * pol[i], 100 * nccl[i]));
            }
        }
        s.append("</svg>\n");
        return s.toString();
    }

    private static String polyline(
            double[] x,
            double[] y,
            double x0,
            double x1,
            int left,
            int pw,
            java.util.function.DoubleUnaryOperator py,
            String color,
            String dash) {
        StringBuilder p = new StringBuilder();
        for (int i = 0; i < x.length; i++) {
            p.append(f("%.1f,%.1f ", left + (x[i] - x0) / (x1 - x0) * pw, py.applyAsDouble(y[i])));
        }
        return f(
                "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s points=\"%s\"/>%n",
                color,
                dash == null ? "" : " stroke-dasharray=\"" + dash + "\"",
                p.toString().strip());
    }
}
