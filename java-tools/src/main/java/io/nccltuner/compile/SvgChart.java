package io.nccltuner.compile;

import io.nccltuner.policy.ByteSize;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * What the inline SVG charts of the HTML pages share: the frame (the viewBox and the plot's
 * margins, in SVG user units), the message-size axis (log2 of nBytes, mapped linearly onto the
 * plot's width), the ticks of a log10 axis at 1, 2 and 5 x 10^k, the page style that makes a chart
 * as wide as the page, and the escaping of text. {@link HtmlReport} (compile) draws its own
 * elements; the report's charts ({@code ShadowReportHtml}, {@code CanaryReportHtml}) draw theirs
 * with the element methods here: the opening tag, a horizontal grid line with its label, a size
 * label under the plot and the two axis titles.
 *
 * @param width the viewBox's width
 * @param height the viewBox's height
 * @param left the margin left of the plot (the value labels and the y axis title)
 * @param right the margin right of it
 * @param top the margin above it
 * @param bottom the margin below it (the size labels and the x axis title)
 */
public record SvgChart(int width, int height, int left, int right, int top, int bottom) {
    /** The page style of a chart: as wide as the page, its height from the viewBox. */
    public static final String CSS =
            "svg.chart{display:block;width:100%;height:auto;border:1px solid #ddd;background:#fff}\n";

    /** @return the plot's width: width - left - right */
    public int plotWidth() {
        return width - left - right;
    }

    /** @return the plot's height: height - top - bottom */
    public int plotHeight() {
        return height - top - bottom;
    }

    /**
     * The size axis: log2 of a message size, below 1 byte as 1 byte (0).
     *
     * @param bytes nBytes
     * @return log2(max(1, bytes))
     */
    public static double log2Size(double bytes) {
        return Math.log(Math.max(1, bytes)) / Math.log(2);
    }

    /**
     * Where a point of the size axis lies: the axis from x0 at the plot's left edge to x1 at its
     * right edge.
     *
     * @param log2Size the point, {@link #log2Size}
     * @param x0 the axis's start (log2 bytes)
     * @param x1 its end (log2 bytes), above x0
     * @return the x coordinate, SVG user units
     */
    public double x(double log2Size, double x0, double x1) {
        return left + (log2Size - x0) / (x1 - x0) * plotWidth();
    }

    /** Fewest ticks {@link #decadeTicks} gives an axis before it takes finer steps. */
    static final int MIN_TICKS = 4;

    /**
     * The ticks of a log10 axis: 1, 2 and 5 x 10^k from lo to hi (both in log10), smallest first;
     * where that gives fewer than {@link #MIN_TICKS} (an axis spanning less than a decade, such as
     * 2453 .. 4806 us), 1 .. 9 x 10^k, and where that still gives fewer, evenly spaced round values
     * (a step of 1, 2, 2.5 or 5 x 10^k, about five of them).
     *
     * @param lo log10 of the axis's start
     * @param hi log10 of its end
     * @return the tick values (not their logarithms)
     */
    public static List<Double> decadeTicks(double lo, double hi) {
        List<Double> ticks = ticks(lo, hi, new int[] {1, 2, 5});
        if (ticks.size() < MIN_TICKS) {
            ticks = ticks(lo, hi, new int[] {1, 2, 3, 4, 5, 6, 7, 8, 9});
        }
        if (ticks.size() < MIN_TICKS && hi > lo) {
            double a = Math.pow(10, lo);
            double b = Math.pow(10, hi);
            double raw = (b - a) / 5;
            double mag = Math.pow(10, Math.floor(Math.log10(raw)));
            double step = mag;
            for (double m : new double[] {1, 2, 2.5, 5, 10}) {
                step = m * mag;
                if (step >= raw) {
                    break;
                }
            }
            ticks = new ArrayList<>();
            for (double v = Math.ceil(a / step) * step; v <= b * (1 + 1e-12); v += step) {
                ticks.add(v);
            }
        }
        return ticks;
    }

    /** The most labelled ticks {@link #logTicks} gives a value axis. */
    public static final int MAX_TICKS = 8;

    /** The fewest labelled ticks {@link #logTicks} gives an axis with a positive span. */
    public static final int MIN_LABELS = 3;

    /**
     * The labelled ticks of a log10 axis, at most {@link #MAX_TICKS}: {@link #decadeTicks}; where
     * that gives more, for an axis of about one decade (1 .. 9 x 10^k gave 9 or more) 1, 2 and 5 x
     * 10^k where those are {@link #MIN_LABELS} or more (before, the powers of ten alone: one label,
     * {@code 100 GB/s}), else every second, third, ... of the 1 .. 9 ticks; for an axis spanning
     * several decades (about 20 ticks of 1, 2 and 5) the powers of ten alone; where those are still
     * more, every second, third, ... of them (10^k for k a multiple of the step).
     *
     * @param lo log10 of the axis's start
     * @param hi log10 of its end
     * @return the tick values (not their logarithms), smallest first
     */
    public static List<Double> logTicks(double lo, double hi) {
        List<Double> ticks = decadeTicks(lo, hi);
        if (ticks.size() <= MAX_TICKS) {
            return ticks;
        }
        List<Double> oneTwoFive = ticks(lo, hi, new int[] {1, 2, 5});
        if (oneTwoFive.size() < MIN_TICKS) { // about one decade: decadeTicks took 1 .. 9 x 10^k
            if (oneTwoFive.size() >= MIN_LABELS) {
                return oneTwoFive;
            }
            int every = (ticks.size() + MAX_TICKS - 1) / MAX_TICKS;
            List<Double> thinned = new ArrayList<>();
            for (int i = 0; i < ticks.size(); i += every) {
                thinned.add(ticks.get(i));
            }
            return thinned;
        }
        List<Double> decades = ticks(lo, hi, new int[] {1});
        int step = (decades.size() + MAX_TICKS - 1) / MAX_TICKS;
        List<Double> out = new ArrayList<>();
        for (double v : decades) {
            if (Math.floorMod(Math.round(Math.log10(v)), step) == 0) {
                out.add(v);
            }
        }
        return out;
    }

    private static final String[] RATE_UNITS = {"B/s", "KB/s", "MB/s", "GB/s", "TB/s", "PB/s"};

    /**
     * A bandwidth's axis label in one notation, whatever its decade: a plain number of at most three
     * significant digits with a decimal byte-rate unit (1 KB/s = 1e3 bytes/s, 1 GB/s = 1e9): 1e-6 GB/s
     * is "1 KB/s", 0.5 GB/s "500 MB/s", 2 GB/s "2 GB/s".
     *
     * @param gbps the bandwidth, GB/s
     * @return its label
     */
    public static String rateLabel(double gbps) {
        if (!(gbps > 0) || !Double.isFinite(gbps)) {
            return "0 B/s";
        }
        double bytes = gbps * 1e9;
        int u = (int) Math.floor(Math.log10(bytes) / 3 + 1e-9);
        u = Math.max(0, Math.min(RATE_UNITS.length - 1, u));
        return sig(bytes / Math.pow(10, 3 * u), 3) + " " + RATE_UNITS[u];
    }

    /**
     * A number as a plain decimal of {@code digits} significant digits, trailing zeros dropped
     * (0.000012345 at 3: "0.0000123"; 2.50 at 3: "2.5").
     *
     * @param v the number
     * @param digits significant digits
     * @return it
     */
    public static String sig(double v, int digits) {
        if (v == 0) {
            return "0";
        }
        return new java.math.BigDecimal(v)
                .round(new java.math.MathContext(digits))
                .stripTrailingZeros()
                .toPlainString();
    }

    /**
     * A busbw table cell's number, GB/s: three decimals from 0.1 GB/s up (as the tables printed),
     * below that three significant digits, so that a tiny but non-zero busbw does not read as
     * "0.000" (2e-6 GB/s is "0.00000200"); "-" for NaN or infinity, "0" for zero.
     *
     * @param gbps the bandwidth, GB/s
     * @return its text
     */
    public static String gbps(double gbps) {
        if (Double.isNaN(gbps) || Double.isInfinite(gbps)) {
            return "-";
        }
        if (gbps == 0) {
            return "0";
        }
        if (Math.abs(gbps) >= 0.1) {
            return String.format(Locale.ROOT, "%.3f", gbps);
        }
        return new java.math.BigDecimal(gbps)
                .round(new java.math.MathContext(3))
                .toPlainString();
    }

    /** @return m x 10^k for each m of {@code mantissas}, within [lo, hi] in log10, smallest first */
    private static List<Double> ticks(double lo, double hi, int[] mantissas) {
        List<Double> ticks = new ArrayList<>();
        for (int k = (int) Math.floor(lo); k <= (int) Math.ceil(hi); k++) {
            for (int m : mantissas) {
                double v = k < 0 ? m / Math.pow(10, -k) : m * Math.pow(10, k); // 0.6, not 0.6000000000000001
                double lv = Math.log10(v);
                if (lv >= lo && lv <= hi) {
                    ticks.add(v);
                }
            }
        }
        return ticks;
    }

    /**
     * Escapes text for HTML and SVG (text and attribute values).
     *
     * @param s the text
     * @return it with &amp;, &lt;, &gt; and &quot; escaped
     */
    public static String esc(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }

    private static String f(String fmt, Object... args) {
        return String.format(Locale.ROOT, fmt, args);
    }

    /**
     * The opening tag of a report chart, as wide as the page ({@link #CSS}).
     *
     * @param cssClass its class ("chart", "chart canary")
     * @param label its aria-label, escaped by the caller
     * @return the tag and a newline
     */
    public String open(String cssClass, String label) {
        return f(
                "<svg class=\"%s\" viewBox=\"0 0 %d %d\" xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" "
                        + "aria-label=\"%s\">%n",
                cssClass, width, height, label);
    }

    /**
     * A grid line across the plot at y, its value labelled in the left margin.
     *
     * @param y the line's y, SVG user units
     * @param label the value ("5%", "200"), escaped by the caller
     * @return the line and the label, each ending in a newline
     */
    public String gridLine(double y, String label) {
        return f("<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#eee\"/>%n", left, y, width - right, y)
                + f(
                        "<text x=\"%d\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\">%s</text>%n",
                        left - 4, y + 4, label);
    }

    /**
     * A message size's label under the plot ("64 KiB").
     *
     * @param x its x, SVG user units
     * @param bytes the size
     * @return the label and a newline
     */
    public String sizeLabel(double x, long bytes) {
        return f(
                "<text x=\"%.1f\" y=\"%d\" font-size=\"11\" text-anchor=\"middle\">%s</text>%n",
                x, height - bottom + 16, esc(ByteSize.format(bytes)));
    }

    /**
     * The axis titles: the size axis's under the size labels, the value axis's turned along the
     * left edge.
     *
     * @param xTitle the size axis's ("message size (bytes, log scale)")
     * @param yTitleX the value axis title's x (its centre line), SVG user units
     * @param yTitle the value axis's ("device time (us, log scale)")
     * @return both, each ending in a newline
     */
    public String axisTitles(String xTitle, int yTitleX, String yTitle) {
        int mid = top + plotHeight() / 2;
        return f(
                        "<text x=\"%d\" y=\"%d\" font-size=\"12\" text-anchor=\"middle\">%s</text>%n",
                        left + plotWidth() / 2, height - 8, esc(xTitle))
                + f(
                        "<text x=\"%d\" y=\"%d\" font-size=\"12\" text-anchor=\"middle\" transform=\"rotate(-90 %d %d)\">"
                                + "%s</text>%n",
                        yTitleX, mid, yTitleX, mid, esc(yTitle));
    }
}
