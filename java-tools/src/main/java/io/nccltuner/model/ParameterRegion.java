package io.nccltuner.model;

import java.util.Arrays;

/**
 * The set of (latency, 1 / bandwidth) pairs one cost-table entry may hold: a convex polygon in the
 * plane of latency (microseconds) and inverse bandwidth (s/GB). It starts as the box the printed
 * table allows and shrinks as captured costs are added, each of which says that {@code a * latency
 * + b / bandwidth} lies in a known interval. Every predicted time is linear in the two, so its
 * range over the region is the range over the polygon's vertices.
 */
final class ParameterRegion {
    private final double[] lat;
    private final double[] inv;

    private ParameterRegion(double[] lat, double[] inv) {
        this.lat = lat;
        this.inv = inv;
    }

    /**
     * @param latency latency interval, microseconds
     * @param bandwidth bandwidth interval, GB/s, with {@code lo > 0}
     * @return the box they span
     */
    static ParameterRegion box(Interval latency, Interval bandwidth) {
        if (!(bandwidth.lo() > 0)) {
            throw new IllegalArgumentException("bandwidth interval must be positive: " + bandwidth);
        }
        double x0 = 1 / bandwidth.hi();
        double x1 = 1 / bandwidth.lo();
        return new ParameterRegion(
                new double[] {latency.lo(), latency.hi(), latency.hi(), latency.lo()}, new double[] {x0, x0, x1, x1});
    }

    /** @return the range of {@code a * latency + b * inverseBandwidth} over the region */
    Interval range(double a, double b) {
        double lo = Double.POSITIVE_INFINITY;
        double hi = Double.NEGATIVE_INFINITY;
        for (int i = 0; i < lat.length; i++) {
            double v = a * lat[i] + b * inv[i];
            lo = Math.min(lo, v);
            hi = Math.max(hi, v);
        }
        return new Interval(lo, hi);
    }

    /**
     * Keeps the part where {@code lo <= a * latency + b * inverseBandwidth <= hi}.
     *
     * @return the smaller region, or null if nothing is left
     */
    ParameterRegion clip(double a, double b, double lo, double hi) {
        ParameterRegion r = halfPlane(a, b, lo);
        return r == null ? null : r.halfPlane(-a, -b, -hi);
    }

    /** Keeps the part where {@code a * latency + b * inverseBandwidth >= c}. */
    private ParameterRegion halfPlane(double a, double b, double c) {
        int n = lat.length;
        double[] nl = new double[2 * n];
        double[] ni = new double[2 * n];
        int m = 0;
        for (int i = 0; i < n; i++) {
            int j = (i + 1) % n;
            double si = a * lat[i] + b * inv[i] - c;
            double sj = a * lat[j] + b * inv[j] - c;
            if (si >= 0) {
                nl[m] = lat[i];
                ni[m++] = inv[i];
            }
            if ((si >= 0) != (sj >= 0)) {
                double t = si / (si - sj);
                nl[m] = lat[i] + t * (lat[j] - lat[i]);
                ni[m++] = inv[i] + t * (inv[j] - inv[i]);
            }
        }
        if (m == 0) {
            return null;
        }
        return new ParameterRegion(Arrays.copyOf(nl, m), Arrays.copyOf(ni, m));
    }

    /** @return the region moved by {@code delta} microseconds of latency */
    ParameterRegion shiftLatency(double delta) {
        double[] l = lat.clone();
        for (int i = 0; i < l.length; i++) {
            l[i] += delta;
        }
        return new ParameterRegion(l, inv.clone());
    }

    /** @return the latencies in the region, microseconds */
    Interval latency() {
        return range(1, 0);
    }

    /** @return the bandwidths in the region, GB/s */
    Interval bandwidth() {
        Interval x = range(0, 1);
        return new Interval(1 / x.hi(), 1 / x.lo());
    }

    /** @return the mean of the vertices as {latency, inverse bandwidth} */
    double[] center() {
        double l = 0;
        double x = 0;
        for (int i = 0; i < lat.length; i++) {
            l += lat[i];
            x += inv[i];
        }
        return new double[] {l / lat.length, x / lat.length};
    }
}
