package io.nccltuner.engine;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import io.nccltuner.policy.Algorithm;
import io.nccltuner.policy.ByteSize;
import io.nccltuner.policy.Collective;
import io.nccltuner.policy.Protocol;
import io.nccltuner.policy.SizeGrid;
import java.io.IOException;
import java.io.StringWriter;
import java.util.List;

/**
 * What the profiler measured on one communicator (plugin-shim/src/profiler.c, handed over at the
 * profiler's finalize as an nccltj_measured_t): per series (collective, size bucket, arm, decided
 * and executed configuration) the count of collectives, their device times (the span of their
 * channels on the GPU, microseconds) and a log histogram, written to the decision log as
 * {@code measured} lines and one {@code profiled} line (docs/canary.md).
 *
 * @param commId the profiler init's commId (NCCL's commHash)
 * @param rank the rank in the communicator
 * @param nRanks ranks in the communicator
 * @param nNodes nodes in the communicator
 * @param profilerVersion the profiler ABI NCCL chose (4..6)
 * @param joined whether a tuner communicator was joined to the profiler's
 * @param collectives Coll events seen
 * @param unjoined of them with no decision found
 * @param untimed of them without a device time
 * @param unaggregated of them whose series found no slot
 * @param decisionsDropped decisions no collective claimed
 * @param series the series
 */
public record Measurement(
        long commId,
        int rank,
        int nRanks,
        int nNodes,
        int profilerVersion,
        boolean joined,
        long collectives,
        long unjoined,
        long untimed,
        long unaggregated,
        long decisionsDropped,
        List<Series> series) {

    /** Histogram layout (nccltj_bridge.h NCCLTJ_HIST_*): 16 buckets per power of two from 2^8 ns. */
    public static final int HIST_SUB = 16;

    public static final int HIST_MIN_LOG2 = 8;
    public static final int HIST_OCTAVES = 24;
    public static final int HIST_BUCKETS = HIST_SUB * HIST_OCTAVES + 2;
    /** Protocols per configuration code (algorithm * 3 + protocol), NCCL's NCCL_NUM_PROTOCOLS. */
    static final int NUM_PROTOCOLS = 3;

    /**
     * One series.
     *
     * @param collType ncclFunc_t
     * @param bucket size bucket of the decision's nBytes, -1 for unjoined collectives
     * @param arm {@link Decision}'s ARM_*
     * @param decided configuration (algorithm * 3 + protocol) decided, -1 none
     * @param decidedChannels channels the candidate names, 0 = NCCL's
     * @param executed configuration the Coll event names, -1 unknown
     * @param nChannels the Coll event's nChannels
     * @param kernelChannels most KernelCh events one collective had
     * @param count collectives
     * @param timed of them with a device time
     * @param sumUs sum of device times, us
     * @param sumSqUs sum of their squares, us^2
     * @param minUs smallest, us
     * @param maxUs largest, us
     * @param hist {@link #HIST_BUCKETS} counts
     */
    public record Series(
            int collType,
            int bucket,
            int arm,
            int decided,
            int decidedChannels,
            int executed,
            int nChannels,
            int kernelChannels,
            long count,
            long timed,
            double sumUs,
            double sumSqUs,
            double minUs,
            double maxUs,
            long[] hist) {

        /** @return whether NCCL ran what was decided, or null without a decision */
        public Boolean asDecided() {
            if (decided < 0 || arm == Decision.ARM_UNRULED || arm == Decision.ARM_UNJOINED) {
                return null;
            }
            return executed == decided && (decidedChannels == 0 || decidedChannels == nChannels);
        }

        /**
         * @param q quantile in (0, 1]
         * @return the midpoint of the histogram bucket holding it, microseconds; NaN when nothing was timed
         */
        public double quantileUs(double q) {
            long total = 0;
            for (long h : hist) {
                total += h;
            }
            if (total == 0) {
                return Double.NaN;
            }
            long rank = (long) Math.ceil(q * total);
            long seen = 0;
            for (int i = 0; i < hist.length; i++) {
                seen += hist[i];
                if (seen >= rank) {
                    return bucketMidNs(i) / 1000.0;
                }
            }
            return bucketMidNs(hist.length - 1) / 1000.0;
        }
    }

    /** @return the lower bound of histogram bucket i, nanoseconds */
    public static double bucketLowNs(int i) {
        if (i <= 0) {
            return 0;
        }
        if (i >= HIST_BUCKETS - 1) {
            return Math.scalb(1.0, HIST_MIN_LOG2 + HIST_OCTAVES);
        }
        int k = (i - 1) / HIST_SUB;
        int j = (i - 1) % HIST_SUB;
        return Math.scalb(1.0, HIST_MIN_LOG2 + k) * (1 + (double) j / HIST_SUB);
    }

    /** @return the midpoint of histogram bucket i, nanoseconds (the last bucket: its lower bound) */
    public static double bucketMidNs(int i) {
        if (i >= HIST_BUCKETS - 1) {
            return bucketLowNs(i);
        }
        return (bucketLowNs(i) + bucketLowNs(i + 1)) / 2;
    }

    /** @return "RING/LL" for a configuration code, null for -1 */
    static String config(int code) {
        if (code < 0) {
            return null;
        }
        int a = code / NUM_PROTOCOLS;
        int p = code % NUM_PROTOCOLS;
        return (a < Algorithm.values().length ? Algorithm.values()[a].name() : Integer.toString(a)) + "/"
                + (p < Protocol.values().length ? Protocol.values()[p].name() : Integer.toString(p));
    }

    /**
     * The decision-log lines of this measurement.
     *
     * @param host this host's name
     * @param pid this process
     * @param policy the policy's name, or null
     * @param sha256 the communicator's compiled table, or null when unknown
     * @param mode the engine's mode spelling
     * @return {@code measured} lines, then the {@code profiled} line, each ending in a newline
     */
    public String toJsonLines(String host, long pid, String policy, String sha256, String mode) {
        StringWriter w = new StringWriter();
        JsonFactory json = new JsonFactory();
        try {
            for (Series s : series) {
                try (JsonGenerator g = json.createGenerator(w)) {
                    g.writeStartObject();
                    g.writeStringField(LogField.TYPE, LogField.TYPE_MEASURED);
                    common(g, host, pid);
                    g.writeStringField(LogField.POLICY, policy);
                    g.writeStringField(LogField.SHA256, sha256);
                    g.writeStringField(LogField.MODE, mode);
                    Collective c =
                            s.collType() >= 0 && s.collType() < Collective.COUNT ? Collective.ofId(s.collType()) : null;
                    g.writeStringField(LogField.COLLECTIVE, c == null ? Integer.toString(s.collType()) : c.name());
                    if (s.bucket() >= 0) {
                        long from = SizeGrid.lowerBound(s.bucket());
                        long to = SizeGrid.upperBound(s.bucket());
                        g.writeFieldName(LogField.N_BYTES);
                        g.writeNumber(Long.toUnsignedString(from));
                        g.writeFieldName(LogField.TO_BYTES);
                        g.writeNumber(ShadowAggregate.toBytesNumber(to));
                        g.writeStringField(LogField.BUCKET, ByteSize.range(from, to));
                    } else {
                        g.writeNullField(LogField.N_BYTES);
                        g.writeNullField(LogField.TO_BYTES);
                        g.writeNullField(LogField.BUCKET);
                    }
                    g.writeStringField(LogField.ARM, Decision.armName(s.arm()));
                    g.writeStringField(LogField.DECIDED, config(s.decided()));
                    g.writeNumberField(LogField.DECIDED_CHANNELS, s.decidedChannels());
                    g.writeStringField(LogField.EXECUTED, config(s.executed()));
                    g.writeNumberField(LogField.CHANNELS, s.nChannels());
                    g.writeNumberField(LogField.KERNEL_CHANNELS, s.kernelChannels());
                    Boolean as = s.asDecided();
                    if (as == null) {
                        g.writeNullField(LogField.AS_DECIDED);
                    } else {
                        g.writeBooleanField(LogField.AS_DECIDED, as);
                    }
                    g.writeNumberField(LogField.COUNT, s.count());
                    g.writeNumberField(LogField.TIMED, s.timed());
                    if (s.timed() > 0) {
                        g.writeNumberField(LogField.MEAN_US, round(s.sumUs() / s.timed()));
                        g.writeNumberField(LogField.SUM_US, s.sumUs());
                        g.writeNumberField(LogField.SUM_SQ_US, s.sumSqUs());
                        g.writeNumberField(LogField.MIN_US, round(s.minUs()));
                        g.writeNumberField(LogField.MAX_US, round(s.maxUs()));
                        g.writeNumberField(LogField.P50_US, round(s.quantileUs(0.50)));
                        g.writeNumberField(LogField.P95_US, round(s.quantileUs(0.95)));
                        g.writeNumberField(LogField.P99_US, round(s.quantileUs(0.99)));
                    }
                    g.writeArrayFieldStart(LogField.HIST);
                    for (int i = 0; i < s.hist().length; i++) {
                        if (s.hist()[i] != 0) {
                            g.writeStartArray();
                            g.writeNumber(i);
                            g.writeNumber(s.hist()[i]);
                            g.writeEndArray();
                        }
                    }
                    g.writeEndArray();
                    g.writeEndObject();
                }
                w.write('\n');
            }
            try (JsonGenerator g = json.createGenerator(w)) {
                g.writeStartObject();
                g.writeStringField(LogField.TYPE, LogField.TYPE_PROFILED);
                common(g, host, pid);
                g.writeNumberField(LogField.PROFILER_VERSION, profilerVersion);
                g.writeBooleanField(LogField.JOINED, joined);
                g.writeNumberField(LogField.COLLECTIVES, collectives);
                g.writeNumberField(LogField.UNJOINED, unjoined);
                g.writeNumberField(LogField.UNTIMED, untimed);
                g.writeNumberField(LogField.UNAGGREGATED, unaggregated);
                g.writeNumberField(LogField.DECISIONS_DROPPED, decisionsDropped);
                g.writeEndObject();
            }
            w.write('\n');
        } catch (IOException impossible) {
            throw new IllegalStateException(impossible); // a StringWriter does not fail
        }
        return w.toString();
    }

    private void common(JsonGenerator g, String host, long pid) throws IOException {
        g.writeFieldName(LogField.COMM);
        g.writeNumber(Long.toUnsignedString(commId));
        g.writeStringField(LogField.HOST, host);
        g.writeNumberField(LogField.PID, pid);
        g.writeNumberField(LogField.RANK, rank);
        g.writeNumberField(LogField.N_RANKS, nRanks);
        g.writeNumberField(LogField.N_NODES, nNodes);
    }

    private static double round(double v) {
        return Math.round(v * 1000) / 1000.0;
    }

    /**
     * The INFO line the plugin logs at the profiler's finalize: per arm, collectives, mean device
     * time and how many ran as decided.
     *
     * @return the line
     */
    public String summary() {
        long[] n = new long[5];
        double[] sum = new double[5];
        long[] timed = new long[5];
        long asDecided = 0;
        long withDecision = 0;
        for (Series s : series) {
            n[s.arm()] += s.count();
            sum[s.arm()] += s.sumUs();
            timed[s.arm()] += s.timed();
            Boolean as = s.asDecided();
            if (as != null) {
                withDecision += s.count();
                asDecided += as ? s.count() : 0;
            }
        }
        StringBuilder sb = new StringBuilder("measured commId 0x")
                .append(Long.toHexString(commId))
                .append(" rank ")
                .append(rank)
                .append(": collectives ")
                .append(collectives)
                .append(" (untimed ")
                .append(untimed)
                .append(", unjoined ")
                .append(unjoined)
                .append(')');
        for (int arm : new int[] {Decision.ARM_POLICY, Decision.ARM_NCCL}) {
            if (n[arm] > 0) {
                sb.append("; ").append(Decision.armName(arm)).append(" arm ").append(n[arm]);
                if (timed[arm] > 0) {
                    sb.append(String.format(java.util.Locale.ROOT, ", mean %.1f us", sum[arm] / timed[arm]));
                }
            }
        }
        sb.append("; executed as decided ").append(asDecided).append(" of ").append(withDecision);
        if (!joined) {
            sb.append("; no tuner communicator joined (the tuner is not this library, or its init found no profiler)");
        }
        return sb.toString();
    }
}
