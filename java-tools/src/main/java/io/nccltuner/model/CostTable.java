package io.nccltuner.model;

import io.nccltuner.policy.Algorithm;
import io.nccltuner.policy.Collective;
import io.nccltuner.policy.Protocol;
import java.math.BigDecimal;
import java.util.Arrays;

/**
 * The latency/bandwidth table NCCL prints at communicator init, one {@code latency/bandwidth} pair
 * per collective, algorithm and protocol: latency in microseconds, algorithm bandwidth in GB/s,
 * both printed {@code "%8.1f/%6.1f"} (NCCL src/graph/tuning.cc, ncclTopoTuneModel, 2.12 .. 2.30),
 * plus the "Max NThreads" row (threads per algorithm and protocol).
 *
 * <p>Each value remembers how many decimals it was printed with, so the model knows the interval it
 * stands for: a printed 0.2 is any value in [0.15, 0.25]. A bandwidth printed as 0.0 is read as
 * NCCL's "disabled" (bandwidth exactly 0, the candidate's cost is -1); a real bandwidth below 0.05
 * GB/s would print the same and be misread.
 */
public final class CostTable {
    private static final int NP = Protocol.values().length;
    private static final int NC = Collective.COUNT;

    private final int numAlgorithms;
    private final Entries e;

    /**
     * The table's arrays, shared in shape by the table and its builder. Entry arrays are indexed by
     * {@link #index}; maxThreads by algorithm and protocol (-1: the log had no such row).
     */
    private record Entries(
            double[] latency,
            double[] bandwidth,
            double[] latencyHalfUnit,
            double[] bandwidthHalfUnit,
            boolean[] present,
            int[] maxThreads) {
        static Entries empty(int numAlgorithms) {
            int n = NC * numAlgorithms * NP;
            int[] maxThreads = new int[Algorithm.values().length * NP];
            Arrays.fill(maxThreads, -1);
            return new Entries(new double[n], new double[n], new double[n], new double[n], new boolean[n], maxThreads);
        }

        Entries copy() {
            return new Entries(
                    latency.clone(),
                    bandwidth.clone(),
                    latencyHalfUnit.clone(),
                    bandwidthHalfUnit.clone(),
                    present.clone(),
                    maxThreads.clone());
        }
    }

    private CostTable(int numAlgorithms, Entries e) {
        this.numAlgorithms = numAlgorithms;
        this.e = e;
    }

    /** Index of an entry: collective-major, then algorithm, then protocol. */
    private static int index(int numAlgorithms, Collective c, AlgoProto ap) {
        return (c.id() * numAlgorithms + ap.algorithm().id()) * NP
                + ap.protocol().id();
    }

    /**
     * @param numAlgorithms algorithms the table has: 6 up to 2.22, 7 (with PAT) from 2.23
     * @return an empty builder
     */
    public static Builder builder(int numAlgorithms) {
        return new Builder(numAlgorithms);
    }

    /** @return number of algorithms (rows of NCCL's cost table) */
    public int numAlgorithms() {
        return numAlgorithms;
    }

    private int idx(Collective c, AlgoProto ap) {
        if (ap.algorithm().id() >= numAlgorithms) {
            throw new IllegalArgumentException(
                    ap.algorithm() + " is not in a table of " + numAlgorithms + " algorithms");
        }
        return index(numAlgorithms, c, ap);
    }

    /** @return whether the log printed this entry (every entry of a complete table) */
    public boolean has(Collective c, AlgoProto ap) {
        return ap.algorithm().id() < numAlgorithms && e.present[idx(c, ap)];
    }

    /**
     * Whether NCCL offers an entry: printed, with a bandwidth other than 0.0. A bandwidth of 0 is
     * NCCL's "disabled" (src/graph/tuning.cc, ncclTopoTuneModel, 2.12 .. 2.30: the entry's cost is
     * then -1, NCCL_ALGO_PROTO_IGNORE, in every getCollInfo call of the communicator, so the
     * engine's rules pass over it); an entry the log did not print counts as not offered.
     *
     * @param c the collective
     * @param ap the algorithm and protocol
     * @return whether getCollInfo's cost table can hold a cost for it
     */
    public boolean offered(Collective c, AlgoProto ap) {
        return has(c, ap) && bandwidth(c, ap) != 0;
    }

    /** @return the printed latency in microseconds */
    public double latency(Collective c, AlgoProto ap) {
        return e.latency[idx(c, ap)];
    }

    /** @return the printed algorithm bandwidth in GB/s; 0 means the candidate is disabled */
    public double bandwidth(Collective c, AlgoProto ap) {
        return e.bandwidth[idx(c, ap)];
    }

    /** @return the latencies (microseconds) that print as the logged value, clamped at 0 */
    public Interval latencyRange(Collective c, AlgoProto ap) {
        int i = idx(c, ap);
        return new Interval(Math.max(0, e.latency[i] - e.latencyHalfUnit[i]), e.latency[i] + e.latencyHalfUnit[i]);
    }

    /**
     * @return the bandwidths (GB/s) that print as the logged value; for a printed 0.0 the point 0
     *     (disabled)
     */
    public Interval bandwidthRange(Collective c, AlgoProto ap) {
        int i = idx(c, ap);
        if (e.bandwidth[i] == 0) {
            return Interval.point(0);
        }
        return new Interval(
                Math.max(0, e.bandwidth[i] - e.bandwidthHalfUnit[i]), e.bandwidth[i] + e.bandwidthHalfUnit[i]);
    }

    /** @return the "Max NThreads" entry, or -1 when the log had no such row */
    public int maxThreads(AlgoProto ap) {
        return e.maxThreads[ap.algorithm().id() * NP + ap.protocol().id()];
    }

    /** @return the half unit of the last printed digit of a decimal ("10.4" gives 0.05) */
    static double halfUnit(String printed) {
        BigDecimal d = new BigDecimal(printed.trim());
        return Math.pow(10, -Math.max(0, d.scale())) / 2;
    }

    /** Collects table entries; see {@link CostTable#builder}. */
    public static final class Builder {
        private final int numAlgorithms;
        private final Entries e;

        private Builder(int numAlgorithms) {
            if (numAlgorithms < 1 || numAlgorithms > Algorithm.values().length) {
                throw new IllegalArgumentException("numAlgorithms " + numAlgorithms + " outside [1, 7]");
            }
            this.numAlgorithms = numAlgorithms;
            this.e = Entries.empty(numAlgorithms);
        }

        /**
         * Sets one entry from its printed text.
         *
         * @param c collective
         * @param ap algorithm and protocol
         * @param latencyText latency as printed ("10.4"), microseconds
         * @param bandwidthText bandwidth as printed ("14.5"), GB/s
         * @return this builder
         * @throws NumberFormatException if either text is not a decimal number
         */
        public Builder entry(Collective c, AlgoProto ap, String latencyText, String bandwidthText) {
            int i = index(numAlgorithms, c, ap);
            e.latency[i] = Double.parseDouble(latencyText.trim());
            e.bandwidth[i] = Double.parseDouble(bandwidthText.trim());
            e.latencyHalfUnit[i] = halfUnit(latencyText);
            e.bandwidthHalfUnit[i] = halfUnit(bandwidthText);
            e.present[i] = true;
            return this;
        }

        /** Sets one "Max NThreads" entry. */
        public Builder maxThreads(AlgoProto ap, int threads) {
            e.maxThreads[ap.algorithm().id() * NP + ap.protocol().id()] = threads;
            return this;
        }

        /** @return whether every collective, algorithm and protocol has an entry */
        public boolean complete() {
            for (boolean b : e.present) {
                if (!b) {
                    return false;
                }
            }
            return true;
        }

        /** @return the table */
        public CostTable build() {
            return new CostTable(numAlgorithms, e.copy());
        }
    }
}
