package io.nccltuner.model;

import java.util.Locale;

/**
 * A closed interval of reals, used for times (microseconds) and model parameters that NCCL's
 * one-decimal table print leaves uncertain.
 *
 * @param lo lower bound
 * @param hi upper bound, {@code >= lo}
 */
public record Interval(double lo, double hi) {
    public Interval {
        if (!(lo <= hi)) {
            throw new IllegalArgumentException("empty interval [" + lo + ", " + hi + "]");
        }
    }

    /** @return the interval holding exactly v */
    public static Interval point(double v) {
        return new Interval(v, v);
    }

    /** @return whether v is in [lo - slack, hi + slack] */
    public boolean contains(double v, double slack) {
        return v >= lo - slack && v <= hi + slack;
    }

    /** @return whether the two intervals share a point */
    public boolean overlaps(Interval o) {
        return lo <= o.hi && o.lo <= hi;
    }

    /** @return the smallest interval holding both */
    public Interval union(Interval o) {
        return new Interval(Math.min(lo, o.lo), Math.max(hi, o.hi));
    }

    /** @return hi - lo */
    public double width() {
        return hi - lo;
    }

    /** @return "[lo, hi]" with three decimals */
    @Override
    public String toString() {
        return String.format(Locale.ROOT, "[%.3f, %.3f]", lo, hi);
    }
}
