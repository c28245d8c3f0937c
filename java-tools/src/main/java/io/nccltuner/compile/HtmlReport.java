package io.nccltuner.compile;

import io.nccltuner.compile.Compiler.Compilation;
import io.nccltuner.compile.Compiler.Group;
import io.nccltuner.compile.Compiler.SizeResult;
import io.nccltuner.compile.Compiler.Stats;
import io.nccltuner.policy.ByteSize;
import io.nccltuner.policy.Policy.Rule;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The compile report as one self-contained HTML page (no scripts, no external files, readable
 * offline): per group an inline SVG chart of time (microseconds) versus message size (bytes) on
 * log-log axes with one line per candidate and a thick dashed line for NCCL's own pick, NCCL's pick
 * marked with black rings and the policy's pick with red diamonds; then the size table and the
 * rules. Hovering a point shows its values (SVG {@code <title>}).
 */
public final class HtmlReport {
  private static final String[] COLORS = {
    "#1f77b4", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f", "#ff7f0e", "#393b79"
  };
  private static final int W = 960;
  private static final int H = 540;
  private static final int L = 80;
  private static final int R = 230;
  private static final int T = 30;
  private static final int B = 60;
  /** The chart's time axis spans at most this many decades below its largest time. */
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
    StringBuilder sb = new StringBuilder();
    sb.append("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>")
        .append(esc(c.policy().name())).append(" - nccl-tuner compile</title>\n<style>\n")
        .append("body{font-family:system-ui,sans-serif;margin:2em;color:#222}\n")
        .append("table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}\n")
        .append("td.l,th.l{text-align:left}tr.rule{background:#fff3e8}\n")
        .append("svg text{font-size:12px;font-family:system-ui,sans-serif}\n")
        .append("</style></head><body>\n<h1>Policy ").append(esc(c.policy().name())).append("</h1>\n<p>")
        .append(esc(c.policy().description())).append("</p>\n");
    for (Group g : c.groups()) {
      sb.append("<h2>").append(esc(g.key().toString())).append("</h2>\n");
      chart(sb, g);
      table(sb, g);
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
        sb.append("<tr><td class=l>").append(esc(s.key().toString())).append("</td><td>").append(s.calls())
            .append("</td><td>").append(s.priced()).append("</td><td>").append(TextReport.us(s.defaultUs()))
            .append("</td><td>").append(TextReport.us(s.policyUs())).append("</td><td>")
            .append(TextReport.us(s.bestUs())).append("</td><td>").append(TextReport.pct(s.defaultRegret()))
            .append("</td><td>").append(TextReport.pct(s.policyRegret())).append("</td><td>")
            .append(TextReport.pct(s.saving())).append("</td></tr>\n");
      }
      sb.append("</table>\n");
    }
    list(sb, "Refused rows (wrong results, never used)", c.refused());
    list(sb, "Warnings", c.warnings());
    sb.append("</body></html>\n");
    return sb.toString();
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
          ? "NCCL" : best.config().label();
      sb.append(s.ruled() ? "<tr class=rule>" : "<tr>").append("<td class=l>")
          .append(esc(ByteSize.format(s.fromBytes()) + " .. " + ByteSize.format(s.toBytes())))
          .append("</td><td class=l>").append(s.ncclLabel())
          .append("</td><td>").append(TextReport.us(s.ncclUs())).append("</td><td class=l>").append(bestName)
          .append("</td><td>").append(TextReport.us(s.bestUs())).append("</td><td class=l>")
          .append(s.ruled() ? s.ranking().getFirst().config().label() : "NCCL").append("</td><td>")
          .append(TextReport.pct(s.ncclRegret())).append("</td><td>").append(TextReport.pct(s.policyRegret()))
          .append("</td><td>").append(TextReport.pct(s.noiseMargin())).append("</td></tr>\n");
    }
    sb.append("</table>\n");
  }

  private static double log2(double v) {
    return Math.log(v) / Math.log(2);
  }

  private static void chart(StringBuilder sb, Group g) {
    List<SizeResult> sizes = g.sizes();
    double xMin = log2(sizes.getFirst().nBytes());
    double xMax = log2(sizes.getLast().nBytes());
    if (xMax - xMin < 1) {
      xMin -= 0.5;
      xMax += 0.5;
    }
    double yLo = Double.POSITIVE_INFINITY;
    double yHi = 0;
    Map<RunConfig, List<double[]>> series = new LinkedHashMap<>();
    List<double[]> nccl = new ArrayList<>();
    for (SizeResult s : sizes) {
      for (Stats st : s.candidates()) {
        series.computeIfAbsent(st.config(), k -> new ArrayList<>()).add(new double[] {s.nBytes(), st.medianUs()});
        yLo = Math.min(yLo, st.medianUs());
        yHi = Math.max(yHi, st.medianUs());
      }
      if (!Double.isNaN(s.ncclUs())) {
        nccl.add(new double[] {s.nBytes(), s.ncclUs()});
        yLo = Math.min(yLo, s.ncclUs());
        yHi = Math.max(yHi, s.ncclUs());
      }
    }
    if (!(yLo > 0) || !(yHi >= yLo) || !Double.isFinite(yHi)) {
      yLo = 1; // times are positive and finite; this only keeps the axes sane
      yHi = 10;
    }
    double lyHi = Math.ceil(Math.log10(yHi) * 10) / 10 + 0.05;
    // at most MAX_DECADES decades: a stray tiny time would otherwise squash every line (and make
    // millions of tick marks); times below the axis are drawn on its bottom edge
    double lyLo = Math.max(Math.floor(Math.log10(yLo) * 10) / 10 - 0.05, lyHi - MAX_DECADES);
    boolean clipped = Math.log10(yLo) < lyLo;
    final double x0 = xMin;
    final double x1 = xMax;
    final double yBottom = lyLo;
    java.util.function.DoubleUnaryOperator px = b -> L + (log2(b) - x0) / (x1 - x0) * (W - L - R);
    java.util.function.DoubleUnaryOperator py =
        t -> T + (lyHi - Math.min(lyHi, Math.max(yBottom, Math.log10(t)))) / (lyHi - yBottom) * (H - T - B);
    sb.append("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"").append(W).append("\" height=\"").append(H)
        .append("\" viewBox=\"0 0 ").append(W).append(' ').append(H).append("\" role=\"img\">\n");
    sb.append("<rect x=\"").append(L).append("\" y=\"").append(T).append("\" width=\"").append(W - L - R)
        .append("\" height=\"").append(H - T - B).append("\" fill=\"#fafafa\" stroke=\"#999\"/>\n");
    // x ticks: powers of two, at most ~14 labels
    int span = (int) Math.ceil(xMax) - (int) Math.floor(xMin);
    int step = Math.max(1, (span + 13) / 14);
    for (int e = (int) Math.ceil(xMin); e <= (int) Math.floor(xMax); e++) {
      if (e % step != 0) {
        continue;
      }
      double x = px.applyAsDouble(Math.pow(2, e));
      sb.append(line(x, T, x, H - B, "#e0e0e0")).append(text(x, H - B + 16, "middle", ByteSize.format(1L << e)));
    }
    // y ticks: 1, 2, 5 x 10^n
    for (int d = (int) Math.floor(lyLo); d <= (int) Math.ceil(lyHi); d++) {
      for (int m : new int[] {1, 2, 5}) {
        double v = m * Math.pow(10, d);
        double lv = Math.log10(v);
        if (lv < lyLo || lv > lyHi) {
          continue;
        }
        double y = py.applyAsDouble(v);
        sb.append(line(L, y, W - R, y, "#e0e0e0")).append(text(L - 6, y + 4, "end", num(v)));
      }
    }
    sb.append(text(L + (W - L - R) / 2.0, H - 18, "middle", "message size (bytes, log scale)"));
    if (clipped) {
      sb.append(text(L + 4, H - B - 6, "start", "times below " + num(Math.pow(10, lyLo)) + " us drawn on the bottom edge"));
    }
    sb.append("<text x=\"16\" y=\"").append(T + (H - T - B) / 2).append("\" transform=\"rotate(-90 16 ")
        .append(T + (H - T - B) / 2).append(")\" text-anchor=\"middle\">time per call (microseconds, log scale)</text>\n");
    int ci = 0;
    int ly = T + 10;
    for (var e : series.entrySet()) {
      String color = COLORS[ci++ % COLORS.length];
      polyline(sb, e.getValue(), px, py, color, 1.5, null);
      for (double[] p : e.getValue()) {
        sb.append("<circle cx=\"").append(f(px.applyAsDouble(p[0]))).append("\" cy=\"").append(f(py.applyAsDouble(p[1])))
            .append("\" r=\"2.5\" fill=\"").append(color).append("\"><title>").append(e.getKey().label()).append(' ')
            .append(ByteSize.format((long) p[0])).append(": ").append(TextReport.us(p[1])).append(" us</title></circle>\n");
      }
      legend(sb, ly, color, e.getKey().label(), false);
      ly += 18;
    }
    polyline(sb, nccl, px, py, "#000", 2.5, "6 4");
    legend(sb, ly, "#000", "NCCL's own pick (auto)", true);
    ly += 18;
    for (SizeResult s : sizes) {
      if (!Double.isNaN(s.ncclUs())) {
        double x = px.applyAsDouble(s.nBytes());
        double y = py.applyAsDouble(s.ncclUs());
        sb.append("<circle cx=\"").append(f(x)).append("\" cy=\"").append(f(y))
            .append("\" r=\"5\" fill=\"none\" stroke=\"#000\" stroke-width=\"1.5\"><title>NCCL's pick")
            .append(s.ncclPick() == null ? "" : " " + s.ncclPick().label()).append(' ').append(ByteSize.format(s.nBytes()))
            .append(": ").append(TextReport.us(s.ncclUs())).append(" us, regret ").append(TextReport.pct(s.ncclRegret()))
            .append("</title></circle>\n");
      }
      if (s.ruled()) {
        double x = px.applyAsDouble(s.nBytes());
        double y = py.applyAsDouble(s.policyUs());
        sb.append("<path d=\"M").append(f(x)).append(' ').append(f(y - 7)).append(" L").append(f(x + 6)).append(' ')
            .append(f(y)).append(" L").append(f(x)).append(' ').append(f(y + 7)).append(" L").append(f(x - 6))
            .append(' ').append(f(y)).append(" Z\" fill=\"none\" stroke=\"#d62728\" stroke-width=\"2\"><title>policy's pick ")
            .append(s.ranking().getFirst().config().label()).append(' ').append(ByteSize.format(s.nBytes())).append(": ")
            .append(TextReport.us(s.policyUs())).append(" us</title></path>\n");
      }
    }
    int lx = W - R + 22;
    sb.append("<circle cx=\"").append(lx).append("\" cy=\"").append(ly).append("\" r=\"5\" fill=\"none\" stroke=\"#000\" stroke-width=\"1.5\"/>\n")
        .append(text(lx + 16, ly + 4, "start", "NCCL's pick"));
    ly += 18;
    sb.append("<path d=\"M").append(lx).append(' ').append(ly - 7).append(" L").append(lx + 6).append(' ').append(ly)
        .append(" L").append(lx).append(' ').append(ly + 7).append(" L").append(lx - 6).append(' ').append(ly)
        .append(" Z\" fill=\"none\" stroke=\"#d62728\" stroke-width=\"2\"/>\n")
        .append(text(lx + 16, ly + 4, "start", "policy's pick (rules)"));
    sb.append("</svg>\n");
  }

  private static void legend(StringBuilder sb, int y, String color, String label, boolean dashed) {
    int x = W - R + 12;
    sb.append("<line x1=\"").append(x).append("\" y1=\"").append(y).append("\" x2=\"").append(x + 20)
        .append("\" y2=\"").append(y).append("\" stroke=\"").append(color).append("\" stroke-width=\"")
        .append(dashed ? "2.5\" stroke-dasharray=\"6 4" : "1.5").append("\"/>\n");
    sb.append(text(x + 26, y + 4, "start", label));
  }

  private static void polyline(StringBuilder sb, List<double[]> pts, java.util.function.DoubleUnaryOperator px,
      java.util.function.DoubleUnaryOperator py, String color, double width, String dash) {
    if (pts.isEmpty()) {
      return;
    }
    sb.append("<polyline fill=\"none\" stroke=\"").append(color).append("\" stroke-width=\"").append(width).append('"');
    if (dash != null) {
      sb.append(" stroke-dasharray=\"").append(dash).append('"');
    }
    sb.append(" points=\"");
    for (double[] p : pts) {
      sb.append(f(px.applyAsDouble(p[0]))).append(',').append(f(py.applyAsDouble(p[1]))).append(' ');
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

  private static String num(double v) {
    return v >= 1 && v < 1e7 ? String.format(Locale.ROOT, "%.0f", v) : String.format(Locale.ROOT, "%.2g", v);
  }

  private static String f(double v) {
    return String.format(Locale.ROOT, "%.1f", v);
  }

  static String esc(String s) {
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
  }
}
