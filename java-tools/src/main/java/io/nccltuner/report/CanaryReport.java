package io.nccltuner.report;

import com.fasterxml.jackson.databind.JsonNode;
import io.nccltuner.engine.LogField;
import io.nccltuner.model.BusBandwidth;
import io.nccltuner.model.TextTable;
import io.nccltuner.policy.ByteSize;
import io.nccltuner.policy.Collective;
import io.nccltuner.policy.InputException;
import io.nccltuner.policy.SizeGrid;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The canary's measurements ({@code "type":"measured"} and {@code "type":"profiled"} lines of the
 * decision logs, docs/canary.md), summed over ranks: per communicator shape (nRanks, nNodes),
 * collective and size bucket, NCCL's arm against the policy's arm (collectives, timed
 * collectives, p50/p95 device time from the merged histograms, mean), the measured gain with a 95%
 * confidence interval, whether each arm executed what was decided, and a verdict.
 *
 * <p>Built in one streaming pass ({@link Builder}): each line is folded into per-key aggregates as
 * it is read, and per-rank sums live only until the end of that rank's file. Memory is
 * O(shapes x collectives x buckets x arms) plus one name per rank for the cross-rank checks;
 * 4,096 rank logs are the design point (make bench, "report over 4,096 rank logs").
 *
 * <p>The statistics (docs/report.md, "The canary"):
 *
 * <ul>
 *   <li>An arm is every collective the draw assigned to it (intention to treat: a collective NCCL
 *       executed differently from the decision stays in its arm; the "executed as decided" table
 *       says how many).
 *   <li>gain = 1 - mean_policy / mean_nccl over the timed collectives of all ranks (device time,
 *       microseconds); positive: the policy's arm is faster.
 *   <li>Calls: per-arm variance from {@code sumUs}, {@code sumSqUs} and {@code timed} summed over
 *       ranks, s^2 = (sumSq - sum^2 / n) / (n - 1); the ratio R = mean_p / mean_n by the delta
 *       method, var(R) = R^2 (s_p^2 / (n_p mean_p^2) + s_n^2 / (n_n mean_n^2)); half-width 1.96
 *       sqrt(var(R)).
 *   <li>Ranks: with at least 3 ranks that timed both arms, the gain of each such rank, and the
 *       Student-t half-width t(0.975, k - 1) s / sqrt(k) of their mean.
 *   <li>The interval is gain +- the wider of the two half-widths.
 *   <li>Verdict: {@code not enough calls} when an arm has fewer than {@code minCalls} timed
 *       collectives; else {@code promote} when the interval's lower bound is above 0; else
 *       {@code keep NCCL} (the upper bound is at or below 0, or the interval holds 0).
 * </ul>
 *
 * @param ranks rank logs read
 * @param minCalls timed collectives each arm needs for a verdict other than "not enough calls"
 * @param rows one per shape, collective and bucket where NCCL's or the policy's arm ran
 * @param executed one per shape, collective, bucket and arm (every arm)
 * @param tableProblems shapes whose ranks' measured lines name different tables (sha256)
 * @param decisionProblems shapes, collectives and buckets where ranks' policy arms decided
 *     different configurations (ranks of one communicator must run the same algorithm)
 * @param profiled the profiled lines summed
 */
public record CanaryReport(
        long ranks,
        long minCalls,
        List<Row> rows,
        List<Execution> executed,
        List<String> tableProblems,
        List<String> decisionProblems,
        Profiled profiled) {
    /** The default of {@code --min-calls}. */
    public static final long DEFAULT_MIN_CALLS = 30;

    /** z(0.975), the normal quantile of a two-sided 95% interval. */
    static final double Z975 = 1.959963984540054;

    /** Histogram buckets per power of two (nccltj_bridge.h NCCLTJ_HIST_SUB). */
    public static final int HIST_SUB = 16;
    /** log2 of the first bucket's upper end in nanoseconds (NCCLTJ_HIST_MIN_LOG2). */
    public static final int HIST_MIN_LOG2 = 8;
    /** Powers of two the histogram spans (NCCLTJ_HIST_OCTAVES). */
    public static final int HIST_OCTAVES = 24;
    /** Histogram buckets (NCCLTJ_HIST_BUCKETS): below 256 ns, 16 x 24, at or above 2^32 ns. */
    public static final int HIST_BUCKETS = HIST_SUB * HIST_OCTAVES + 2;

    /** An arm, with the spelling of the log's {@code arm} field. */
    public enum Arm {
        /** NCCL's pick kept where a rule matched (the canary's control arm). */
        NCCL("nccl"),
        /** The policy's candidate written into NCCL's table. */
        POLICY("policy"),
        /** A rule matched; NCCL offered none of its candidates. */
        NOT_OFFERED("notOffered"),
        /** No rule covers the call. */
        UNRULED("unruled"),
        /** The profiler found no decision for the collective. */
        UNJOINED("unjoined");

        private final String spelling;

        Arm(String spelling) {
            this.spelling = spelling;
        }

        /** @return the log's spelling ("notOffered") */
        public String spelling() {
            return spelling;
        }

        static Arm parse(String s) {
            for (Arm a : values()) {
                if (a.spelling.equals(s)) {
                    return a;
                }
            }
            return null;
        }
    }

    /** Why a collective did not execute as decided, derived from a measured line's fields. */
    public enum Reason {
        /** executed algorithm != decided algorithm ({@code NCCL_ALGO}, NCCL's own override). */
        ALGORITHM("algorithm differs"),
        /** executed protocol != decided protocol ({@code NCCL_PROTO}). */
        PROTOCOL("protocol differs"),
        /** decidedChannels != 0 and channels != decidedChannels (NCCL capped the channel count). */
        CHANNELS("channels differ"),
        /** arm notOffered: NCCL offered none of the rule's candidates. */
        NOT_OFFERED("not offered"),
        /** arm unjoined: no decision was found for the collective. */
        NO_DECISION("no decision"),
        /** arm unruled: no rule covers the call (NCCL decided, as without the plugin). */
        NO_RULE("no rule"),
        /** asDecided false, but the executed configuration is not known. */
        UNKNOWN("executed unknown");

        private final String label;

        Reason(String label) {
            this.label = label;
        }

        /** @return the label the report prints ("channels differ") */
        public String label() {
            return label;
        }
    }

    /** A verdict for one size range. */
    public enum Verdict {
        /** The gain's 95% interval lies above 0: enforce the policy there. */
        PROMOTE("promote"),
        /** The interval lies at or below 0, or holds 0 with enough calls: keep NCCL's pick. */
        KEEP_NCCL("keep NCCL"),
        /** An arm has fewer timed collectives than the minimum. */
        NOT_ENOUGH_CALLS("not enough calls");

        private final String label;

        Verdict(String label) {
            this.label = label;
        }

        /** @return "promote", "keep NCCL" or "not enough calls" */
        public String label() {
            return label;
        }
    }

    /**
     * One arm at one shape, collective and bucket, over all ranks.
     *
     * @param count collectives
     * @param timed of them with a device time
     * @param meanUs mean device time, microseconds (NaN when none timed)
     * @param sdUs sample standard deviation, microseconds (NaN below 2 timed)
     * @param minUs shortest, microseconds
     * @param maxUs longest, microseconds
     * @param p5Us 5th percentile of the merged histogram (bucket midpoint), microseconds
     * @param p50Us median, microseconds
     * @param p95Us 95th percentile, microseconds
     * @param decided the decided configurations seen ("TREE/SIMPLE", "RING/LL/16ch"), joined by " | "
     */
    public record ArmStats(
            long count,
            long timed,
            double meanUs,
            double sdUs,
            double minUs,
            double maxUs,
            double p5Us,
            double p50Us,
            double p95Us,
            String decided) {
        static final ArmStats NONE = new ArmStats(
                0, 0, Double.NaN, Double.NaN, Double.NaN, Double.NaN, Double.NaN, Double.NaN, Double.NaN, "");
    }

    /**
     * The measured gain of the policy's arm over NCCL's.
     *
     * @param gain 1 - mean_policy / mean_nccl (0.2 = the policy's arm 20% faster), NaN without both arms
     * @param lo the 95% interval's lower bound
     * @param hi its upper bound
     * @param callsHalf the delta-method half-width over calls
     * @param ranksHalf the Student-t half-width over per-rank gains, NaN below 3 ranks
     * @param ranksBoth ranks that timed both arms
     */
    public record Gain(double gain, double lo, double hi, double callsHalf, double ranksHalf, long ranksBoth) {
        /** @return "calls" or "ranks": which half-width the interval uses */
        public String method() {
            return !Double.isNaN(ranksHalf) && ranksHalf > callsHalf ? "ranks" : "calls";
        }
    }

    /**
     * One size range's comparison.
     *
     * @param nRanks communicator ranks
     * @param nNodes nodes
     * @param collective the collective
     * @param bucket the size-grid bucket ({@link SizeGrid})
     * @param fromBytes its first size, bytes
     * @param toBytes its end (exclusive), bytes, -1 for none
     * @param nccl NCCL's arm
     * @param policy the policy's arm
     * @param gain the gain and its interval
     * @param verdict the verdict
     */
    public record Row(
            long nRanks,
            long nNodes,
            Collective collective,
            int bucket,
            long fromBytes,
            long toBytes,
            ArmStats nccl,
            ArmStats policy,
            Gain gain,
            Verdict verdict) {
        /** @return "[1 MiB, 1.25 MiB)" ({@link ByteSize#range}) */
        public String range() {
            return ByteSize.range(fromBytes, toBytes);
        }

        /**
         * busbw of a time at this row's first size, GB/s: nccl-tests' bus bandwidth ({@link BusBandwidth}).
         *
         * @param us device time, microseconds
         * @return GB/s (1e9 bytes per second), NaN when unknown
         */
        public double busbw(double us) {
            return BusBandwidth.busbw(collective, nRanks, fromBytes, us);
        }
    }

    /**
     * Whether one arm executed what was decided.
     *
     * @param nRanks communicator ranks
     * @param nNodes nodes
     * @param collective the collective
     * @param fromBytes the bucket's first size, bytes
     * @param toBytes its end, -1 for none
     * @param arm the arm
     * @param collectives collectives of the arm
     * @param asDecided of them with {@code asDecided} true
     * @param notAsDecided of them with {@code asDecided} false
     * @param noDecision of them without a decision ({@code asDecided} null)
     * @param reasons why not, most collectives first (a collective can have several reasons)
     */
    public record Execution(
            long nRanks,
            long nNodes,
            Collective collective,
            long fromBytes,
            long toBytes,
            Arm arm,
            long collectives,
            long asDecided,
            long notAsDecided,
            long noDecision,
            Map<Reason, Long> reasons) {
        /** @return "[1 MiB, 1.25 MiB)" ({@link ByteSize#range}) */
        public String range() {
            return ByteSize.range(fromBytes, toBytes);
        }

        /** @return "channels differ 12, algorithm differs 3" or "" */
        public String reasonText() {
            StringBuilder sb = new StringBuilder();
            reasons.forEach((r, n) -> sb.append(sb.isEmpty() ? "" : ", ")
                    .append(r.label())
                    .append(' ')
                    .append(n));
            return sb.toString();
        }
    }

    /**
     * The profiled lines (one per communicator and rank) summed.
     *
     * @param communicators profiled lines
     * @param notJoined of them whose profiler found no tuner communicator
     * @param collectives Coll events
     * @param unjoined of them without a decision
     * @param untimed of them without a device time
     * @param unaggregated of them that found no series slot
     * @param decisionsDropped decisions no collective claimed
     */
    public record Profiled(
            long communicators,
            long notJoined,
            long collectives,
            long unjoined,
            long untimed,
            long unaggregated,
            long decisionsDropped) {}

    /** @return whether any measured line was read */
    public boolean isEmpty() {
        return executed.isEmpty();
    }

    /** @return whether every shape's ranks agree on the table and on the policy arm's decisions */
    public boolean ranksAgree() {
        return tableProblems.isEmpty() && decisionProblems.isEmpty();
    }

    /**
     * The verdict of one range.
     *
     * @param nRanks communicator ranks
     * @param nNodes nodes
     * @param c collective
     * @param bucket size-grid bucket
     * @return its verdict, or null where neither NCCL's nor the policy's arm was measured
     */
    public Verdict verdict(long nRanks, long nNodes, Collective c, int bucket) {
        for (Row r : rows) {
            if (r.nRanks() == nRanks && r.nNodes() == nNodes && r.collective() == c && r.bucket() == bucket) {
                return r.verdict();
            }
        }
        return null;
    }

    // ---- histogram -----------------------------------------------------------------------------

    /**
     * The midpoint of a histogram bucket (nccltj_bridge.h NCCLTJ_HIST_*): bucket 0 is [0, 256 ns),
     * bucket 1 + 16k + j is [2^(8+k) (1 + j/16), 2^(8+k) (1 + (j+1)/16)) ns, the last bucket is at or
     * above 2^32 ns (its lower bound stands for it).
     *
     * @param bucket 0 .. {@link #HIST_BUCKETS} - 1
     * @return microseconds
     * @throws IllegalArgumentException for a bucket out of range
     */
    public static double histMidUs(int bucket) {
        if (bucket < 0 || bucket >= HIST_BUCKETS) {
            throw new IllegalArgumentException("histogram bucket " + bucket + " outside [0, " + HIST_BUCKETS + ")");
        }
        if (bucket == 0) {
            return (1 << HIST_MIN_LOG2) / 2.0 / 1000.0;
        }
        if (bucket == HIST_BUCKETS - 1) {
            return Math.scalb(1.0, HIST_MIN_LOG2 + HIST_OCTAVES) / 1000.0;
        }
        int k = (bucket - 1) / HIST_SUB;
        int j = (bucket - 1) % HIST_SUB;
        double base = Math.scalb(1.0, HIST_MIN_LOG2 + k);
        return base * (1 + (j + 0.5) / HIST_SUB) / 1000.0;
    }

    /**
     * A percentile of a histogram: the midpoint of the bucket holding the ceil(q n)-th smallest
     * time (at least the first).
     *
     * @param hist counts per bucket
     * @param q 0 < q <= 1
     * @return microseconds, NaN for an empty histogram
     */
    public static double percentileUs(long[] hist, double q) {
        long n = 0;
        for (long c : hist) {
            n += c;
        }
        if (n == 0) {
            return Double.NaN;
        }
        long rank = Math.max(1, (long) Math.ceil(q * n));
        long seen = 0;
        for (int b = 0; b < hist.length; b++) {
            seen += hist[b];
            if (seen >= rank) {
                return histMidUs(b);
            }
        }
        return histMidUs(hist.length - 1);
    }

    // ---- statistics ----------------------------------------------------------------------------

    /**
     * t(0.975, df), the Student-t quantile of a two-sided 95% interval: a table to df 30, then the
     * Cornish-Fisher expansion in 1/df (within 1e-4 of the exact value there).
     *
     * @param df degrees of freedom, at least 1
     * @return the quantile
     */
    public static double t975(long df) {
        final double[] table = {
            12.7062, 4.3027, 3.1824, 2.7764, 2.5706, 2.4469, 2.3646, 2.3060, 2.2622, 2.2281, 2.2010, 2.1788, 2.1604,
            2.1448, 2.1314, 2.1199, 2.1098, 2.1009, 2.0930, 2.0860, 2.0796, 2.0739, 2.0687, 2.0639, 2.0595, 2.0555,
            2.0518, 2.0484, 2.0452, 2.0423
        };
        if (df < 1) {
            return Double.NaN;
        }
        if (df <= table.length) {
            return table[(int) df - 1];
        }
        double z = Z975;
        double v = df;
        double z3 = z * z * z;
        double z5 = z3 * z * z;
        double z7 = z5 * z * z;
        return z
                + (z3 + z) / (4 * v)
                + (5 * z5 + 16 * z3 + 3 * z) / (96 * v * v)
                + (3 * z7 + 19 * z5 + 17 * z3 - 15 * z) / (384 * v * v * v);
    }

    /**
     * The gain and its interval (see the class comment).
     *
     * @param nccl NCCL's arm: timed, sumUs, sumSqUs
     * @param policy the policy's arm: timed, sumUs, sumSqUs
     * @param ranksBoth ranks that timed both arms
     * @param rankGainMean the mean of their gains
     * @param rankGainM2 the sum of squared deviations of their gains from that mean
     * @return the gain; NaN fields where an arm has no timed collective
     */
    static Gain gain(double[] nccl, double[] policy, long ranksBoth, double rankGainMean, double rankGainM2) {
        double nN = nccl[0];
        double nP = policy[0];
        if (nN < 1 || nP < 1) {
            return new Gain(Double.NaN, Double.NaN, Double.NaN, Double.NaN, Double.NaN, ranksBoth);
        }
        double mN = nccl[1] / nN;
        double mP = policy[1] / nP;
        double r = mP / mN;
        double g = 1 - r;
        double callsHalf = Double.NaN;
        if (nN >= 2 && nP >= 2) {
            double vN = Math.max(0, (nccl[2] - nccl[1] * nccl[1] / nN) / (nN - 1));
            double vP = Math.max(0, (policy[2] - policy[1] * policy[1] / nP) / (nP - 1));
            double varR = r * r * (vP / (nP * mP * mP) + vN / (nN * mN * mN));
            callsHalf = Z975 * Math.sqrt(varR);
        }
        double ranksHalf = Double.NaN;
        if (ranksBoth >= 3) {
            double sd = Math.sqrt(rankGainM2 / (ranksBoth - 1));
            ranksHalf = t975(ranksBoth - 1) * sd / Math.sqrt(ranksBoth);
        }
        double half = Double.isNaN(ranksHalf)
                ? callsHalf
                : Double.isNaN(callsHalf) ? ranksHalf : Math.max(callsHalf, ranksHalf);
        return new Gain(g, g - half, g + half, callsHalf, ranksHalf, ranksBoth);
    }

    static Verdict verdict(ArmStats nccl, ArmStats policy, Gain g, long minCalls) {
        if (nccl.timed() < minCalls || policy.timed() < minCalls || Double.isNaN(g.lo())) {
            return Verdict.NOT_ENOUGH_CALLS;
        }
        return g.lo() > 0 ? Verdict.PROMOTE : Verdict.KEEP_NCCL;
    }

    // ---- the streaming builder -----------------------------------------------------------------

    private record Key(long nRanks, long nNodes, Collective collective, int bucket) {}

    private record Shape(long nRanks, long nNodes) {}

    /** One arm's sums at one key. */
    private static final class Series {
        long count;
        long timed;
        double sumUs;
        double sumSqUs;
        double minUs = Double.POSITIVE_INFINITY;
        double maxUs = Double.NEGATIVE_INFINITY;
        final long[] hist = new long[HIST_BUCKETS];
        long asDecided;
        long notAsDecided;
        long noDecision;
        final long[] reasons = new long[Reason.values().length];
        final Set<String> decided = new TreeSet<>();

        /** Folds a measured line's counts, times and histogram in. */
        void time(JsonNode j, long collectives, long timedHere, double sum, String where) throws InputException {
            count += collectives;
            timed += timedHere;
            sumUs += sum;
            sumSqUs += j.path(LogField.SUM_SQ_US).asDouble();
            if (timedHere > 0) {
                minUs = Math.min(minUs, j.path(LogField.MIN_US).asDouble());
                maxUs = Math.max(maxUs, j.path(LogField.MAX_US).asDouble());
            }
            for (JsonNode pair : j.path(LogField.HIST)) {
                int b = pair.path(0).asInt(-1);
                if (b < 0 || b >= HIST_BUCKETS) {
                    throw new InputException(
                            where, "histogram bucket " + pair.path(0) + " outside [0, " + HIST_BUCKETS + ")");
                }
                hist[b] += pair.path(1).asLong();
            }
        }

        /**
         * Folds whether a measured line's collectives executed as decided in, and why not.
         *
         * @param arm the line's arm
         * @param j the line
         * @param decided the decided configuration ("TREE/SIMPLE"), null for none
         * @param decidedChannels the decided channels (0: NCCL's)
         * @param count the line's collectives
         */
        void execution(Arm arm, JsonNode j, String decided, int decidedChannels, long count) {
            switch (arm) {
                case NOT_OFFERED -> reasons[Reason.NOT_OFFERED.ordinal()] += count;
                case UNJOINED -> reasons[Reason.NO_DECISION.ordinal()] += count;
                case UNRULED -> reasons[Reason.NO_RULE.ordinal()] += count;
                default -> {}
            }
            JsonNode as = j.path(LogField.AS_DECIDED);
            if (!as.isBoolean()) {
                noDecision += count;
            } else if (as.asBoolean()) {
                asDecided += count;
            } else {
                notAsDecided += count;
                String executed = j.path(LogField.EXECUTED).isTextual()
                        ? j.path(LogField.EXECUTED).asText()
                        : null;
                if (executed == null || decided == null) {
                    reasons[Reason.UNKNOWN.ordinal()] += count;
                } else {
                    differences(
                            decided,
                            executed,
                            decidedChannels,
                            j.path(LogField.CHANNELS).asInt(),
                            count);
                }
            }
        }

        /** Counts why a decided configuration differs from the executed one (UNKNOWN when nothing tells). */
        private void differences(String decided, String executed, int decidedChannels, int channels, long count) {
            String[] d = decided.split("/", 2);
            String[] e = executed.split("/", 2);
            boolean any = false;
            if (!d[0].equals(e[0])) {
                reasons[Reason.ALGORITHM.ordinal()] += count;
                any = true;
            }
            if (d.length < 2 || e.length < 2 || !d[1].equals(e[1])) {
                reasons[Reason.PROTOCOL.ordinal()] += count;
                any = true;
            }
            if (decidedChannels != 0 && channels != decidedChannels) {
                reasons[Reason.CHANNELS.ordinal()] += count;
                any = true;
            }
            if (!any) {
                reasons[Reason.UNKNOWN.ordinal()] += count;
            }
        }

        /** @return the reasons counted, most collectives first (ties in {@link Reason} order) */
        Map<Reason, Long> reasonsByCount() {
            Map<Reason, Long> out = new LinkedHashMap<>();
            Reason[] all = Reason.values();
            Integer[] order = new Integer[all.length];
            for (int i = 0; i < all.length; i++) {
                order[i] = i;
            }
            java.util.Arrays.sort(order, (x, y) -> Long.compare(reasons[y], reasons[x]));
            for (int i : order) {
                if (reasons[i] > 0) {
                    out.put(all[i], reasons[i]);
                }
            }
            return out;
        }

        ArmStats stats() {
            double mean = timed > 0 ? sumUs / timed : Double.NaN;
            double sd =
                    timed > 1 ? Math.sqrt(Math.max(0, (sumSqUs - sumUs * sumUs / timed) / (timed - 1))) : Double.NaN;
            return new ArmStats(
                    count,
                    timed,
                    mean,
                    sd,
                    timed > 0 ? minUs : Double.NaN,
                    timed > 0 ? maxUs : Double.NaN,
                    percentileUs(hist, 0.05),
                    percentileUs(hist, 0.50),
                    percentileUs(hist, 0.95),
                    String.join(" | ", decided));
        }
    }

    /** Everything at one key. */
    private static final class Cell {
        final Series[] arms = new Series[Arm.values().length];
        long ranksBoth;
        double rankGainMean;
        double rankGainM2;
        /** the policy arm's decided set of each rank, as a signature -> ranks with it */
        final Map<String, RankList> decisions = new LinkedHashMap<>();

        Series arm(Arm a) {
            Series s = arms[a.ordinal()];
            if (s == null) {
                s = arms[a.ordinal()] = new Series();
            }
            return s;
        }

        void rankGain(double g) { // Welford
            ranksBoth++;
            double d = g - rankGainMean;
            rankGainMean += d / ranksBoth;
            rankGainM2 += d * (g - rankGainMean);
        }
    }

    /** How many ranks share a variant, and the first few of their names. */
    private static final class RankList {
        static final int NAMED = 4;
        long count;
        final List<String> names = new ArrayList<>(NAMED);

        void add(String rank) {
            count++;
            if (names.size() < NAMED) {
                names.add(rank);
            }
        }

        @Override
        public String toString() {
            return String.join(", ", names) + (count > names.size() ? " and " + (count - names.size()) + " more" : "");
        }
    }

    /**
     * Folds measured and profiled lines into aggregates as the logs are read: pass {@link #line} as
     * {@link DecisionLogFile#read(Path, DecisionLogFile.LineSink)}'s sink and call {@link #endRank}
     * after each file.
     */
    public static final class Builder implements DecisionLogFile.LineSink {
        private final Map<Key, Cell> cells = new HashMap<>();
        private final Map<Shape, Map<String, RankList>> shaByShape = new HashMap<>();
        // this rank's (the current file's) state
        private final Map<Key, double[]> rankSums = new HashMap<>(); // nccl timed, sum; policy timed, sum
        private final Map<Key, Set<String>> rankDecided = new HashMap<>();
        private final Map<Shape, Set<String>> rankSha = new HashMap<>();
        private long ranks;
        private long profComms;
        private long profNotJoined;
        private long profColl;
        private long profUnjoined;
        private long profUntimed;
        private long profUnagg;
        private long profDropped;

        /**
         * One line of the current rank's log; types other than measured and profiled are ignored.
         *
         * @throws InputException for a measured line without a known collective or arm, or with a
         *     histogram bucket out of range
         */
        @Override
        public void line(String type, JsonNode j, String where) throws InputException {
            if (type.equals(LogField.TYPE_PROFILED)) {
                profiled(j);
            } else if (type.equals(LogField.TYPE_MEASURED)) {
                measured(j, where);
            }
        }

        private void profiled(JsonNode j) {
            profComms++;
            profNotJoined += j.path(LogField.JOINED).asBoolean(true) ? 0 : 1;
            profColl += j.path(LogField.COLLECTIVES).asLong();
            profUnjoined += j.path(LogField.UNJOINED).asLong();
            profUntimed += j.path(LogField.UNTIMED).asLong();
            profUnagg += j.path(LogField.UNAGGREGATED).asLong();
            profDropped += j.path(LogField.DECISIONS_DROPPED).asLong();
        }

        private void measured(JsonNode j, String where) throws InputException {
            Collective c = DecisionLogFile.collective(j, where);
            Arm arm = Arm.parse(j.path(LogField.ARM).asText(""));
            if (arm == null) {
                throw new InputException(
                        where,
                        "unknown arm '" + j.path(LogField.ARM).asText("")
                                + "' (policy, nccl, notOffered, unruled, unjoined)");
            }
            // unjoined collectives have no decision and so no size bucket (nBytes null): counted at 0 B
            long nBytes = j.path(LogField.N_BYTES).isNull() ? 0L : DecisionLogFile.bytes(j, LogField.N_BYTES, where);
            Shape shape = new Shape(
                    DecisionLogFile.count(j, LogField.N_RANKS, where),
                    DecisionLogFile.count(j, LogField.N_NODES, where));
            Key k = new Key(shape.nRanks(), shape.nNodes(), c, SizeGrid.bucket(nBytes));
            Series s = cells.computeIfAbsent(k, x -> new Cell()).arm(arm);
            long count = DecisionLogFile.count(j, LogField.COUNT, where);
            long timed = DecisionLogFile.count(j, LogField.TIMED, where);
            double sum = j.path(LogField.SUM_US).asDouble();
            s.time(j, count, timed, sum, where);
            String decided = j.path(LogField.DECIDED).isTextual()
                    ? j.path(LogField.DECIDED).asText()
                    : null;
            int decidedChannels = j.path(LogField.DECIDED_CHANNELS).asInt();
            String label = decided == null ? null : DecisionLogFile.pickLabel(decided, decidedChannels);
            if (label != null && (arm == Arm.POLICY || arm == Arm.NCCL)) {
                s.decided.add(label);
            }
            s.execution(arm, j, decided, decidedChannels, count);
            if (arm == Arm.NCCL || arm == Arm.POLICY) {
                double[] r = rankSums.computeIfAbsent(k, x -> new double[4]);
                int o = arm == Arm.NCCL ? 0 : 2;
                r[o] += timed;
                r[o + 1] += sum;
            }
            if (arm == Arm.POLICY && label != null) {
                rankDecided.computeIfAbsent(k, x -> new TreeSet<>()).add(label);
            }
            String sha = j.path(LogField.SHA256).asText(null);
            if (sha != null) {
                rankSha.computeIfAbsent(shape, x -> new TreeSet<>()).add(sha);
            }
        }

        /**
         * Ends the current rank's log: folds its per-rank gains and its decisions and tables into the
         * cross-rank aggregates, and forgets the rest.
         *
         * @param rank the rank's name (host:pid, {@link DecisionLogFile#rank})
         */
        public void endRank(String rank) {
            ranks++;
            rankSums.forEach((k, r) -> {
                if (r[0] > 0 && r[2] > 0) {
                    cells.get(k).rankGain(1 - (r[3] / r[2]) / (r[1] / r[0]));
                }
            });
            rankDecided.forEach((k, d) -> cells.get(k)
                    .decisions
                    .computeIfAbsent(String.join(" | ", d), x -> new RankList())
                    .add(rank));
            rankSha.forEach((shape, shas) -> shaByShape
                    .computeIfAbsent(shape, x -> new TreeMap<>())
                    .computeIfAbsent(String.join(" + ", shas), x -> new RankList())
                    .add(rank));
            rankSums.clear();
            rankDecided.clear();
            rankSha.clear();
        }

        /**
         * The report.
         *
         * @param minCalls timed collectives each arm needs for a verdict (at least 2)
         * @return the report of every rank ended so far
         */
        public CanaryReport build(long minCalls) {
            List<Key> keys = new ArrayList<>(cells.keySet());
            keys.sort(Comparator.comparingLong(Key::nRanks)
                    .thenComparingLong(Key::nNodes)
                    .thenComparingInt(k -> k.collective().id())
                    .thenComparingInt(Key::bucket));
            List<Row> rows = new ArrayList<>();
            List<Execution> exec = new ArrayList<>();
            List<String> decisionProblems = new ArrayList<>();
            for (Key k : keys) {
                Cell cell = cells.get(k);
                long from = SizeGrid.lowerBound(k.bucket());
                long to = SizeGrid.upperBound(k.bucket());
                Series n = cell.arms[Arm.NCCL.ordinal()];
                Series p = cell.arms[Arm.POLICY.ordinal()];
                if (n != null || p != null) {
                    rows.add(row(k, cell, from, to, minCalls));
                }
                for (Arm a : Arm.values()) {
                    Series s = cell.arms[a.ordinal()];
                    if (s != null) {
                        exec.add(new Execution(
                                k.nRanks(),
                                k.nNodes(),
                                k.collective(),
                                from,
                                to,
                                a,
                                s.count,
                                s.asDecided,
                                s.notAsDecided,
                                s.noDecision,
                                s.reasonsByCount()));
                    }
                }
                if (cell.decisions.size() > 1) {
                    decisionProblems.add(decisionProblem(k, cell, ByteSize.range(from, to)));
                }
            }
            return new CanaryReport(
                    ranks,
                    minCalls,
                    List.copyOf(rows),
                    List.copyOf(exec),
                    List.copyOf(tableProblems()),
                    List.copyOf(decisionProblems),
                    new Profiled(
                            profComms, profNotJoined, profColl, profUnjoined, profUntimed, profUnagg, profDropped));
        }

        /** One key's comparison: both arms' statistics, the gain and the verdict. */
        private static Row row(Key k, Cell cell, long from, long to, long minCalls) {
            Series n = cell.arms[Arm.NCCL.ordinal()];
            Series p = cell.arms[Arm.POLICY.ordinal()];
            ArmStats ns = n == null ? ArmStats.NONE : n.stats();
            ArmStats ps = p == null ? ArmStats.NONE : p.stats();
            Gain g = gain(
                    n == null ? new double[3] : new double[] {n.timed, n.sumUs, n.sumSqUs},
                    p == null ? new double[3] : new double[] {p.timed, p.sumUs, p.sumSqUs},
                    cell.ranksBoth,
                    cell.rankGainMean,
                    cell.rankGainM2);
            return new Row(
                    k.nRanks(),
                    k.nNodes(),
                    k.collective(),
                    k.bucket(),
                    from,
                    to,
                    ns,
                    ps,
                    g,
                    verdict(ns, ps, g, minCalls));
        }

        /** The line for a key whose ranks' policy arms decided differently, the fewest ranks first. */
        private static String decisionProblem(Key k, Cell cell, String range) {
            StringBuilder sb = new StringBuilder(io.nccltuner.model.JobShape.of(k.nRanks(), k.nNodes()) + " "
                    + k.collective() + " " + range + ": ranks' policy arms decided differently (hang risk):");
            cell.decisions.entrySet().stream()
                    .sorted(Comparator.comparingLong(e -> e.getValue().count))
                    .forEach(e -> sb.append(' ')
                            .append(e.getValue())
                            .append(" -> ")
                            .append(e.getKey())
                            .append(';'));
            sb.setLength(sb.length() - 1);
            return sb.toString();
        }

        /** @return per shape whose ranks measured different tables, the line that names them */
        private List<String> tableProblems() {
            List<String> tableProblems = new ArrayList<>();
            shaByShape.entrySet().stream()
                    .sorted(Comparator.comparingLong(
                                    (Map.Entry<Shape, ?> e) -> e.getKey().nRanks())
                            .thenComparingLong(e -> e.getKey().nNodes()))
                    .forEach(e -> {
                        if (e.getValue().size() > 1) {
                            tableProblems.add(ShadowReport.differentTables(
                                    io.nccltuner.model.JobShape.of(
                                                    e.getKey().nRanks(),
                                                    e.getKey().nNodes())
                                            + ": ranks measured different tables:",
                                    e.getValue(),
                                    RankList::toString));
                        }
                    });
            return tableProblems;
        }
    }

    // ---- text ----------------------------------------------------------------------------------

    private static String us(double v) {
        return Double.isNaN(v) ? "-" : String.format(Locale.ROOT, "%.1f", v);
    }

    static String pct(double v) {
        return Double.isNaN(v) ? "-" : String.format(Locale.ROOT, "%+.1f%%", 100 * v);
    }

    /** @return "+18.2% [+15.0%, +21.4%]" or "-" */
    static String interval(Gain g) {
        return Double.isNaN(g.gain()) ? "-" : pct(g.gain()) + " [" + pct(g.lo()) + ", " + pct(g.hi()) + "]";
    }

    /** @return the canary part of the text report (empty when no measured line was read) */
    public String text() {
        if (isEmpty()) {
            return "";
        }
        StringBuilder sb = new StringBuilder();
        headLines(sb);
        sb.append('\n').append(rows.isEmpty() ? "no canary arms measured\n" : verdictTable());
        sb.append("\nexecuted as decided:\n").append(executionTable());
        long promoted =
                rows.stream().filter(r -> r.verdict() == Verdict.PROMOTE).count();
        sb.append(String.format(
                Locale.ROOT,
                "%nverdicts: %d promote, %d keep NCCL, %d not enough calls%n",
                promoted,
                rows.stream().filter(r -> r.verdict() == Verdict.KEEP_NCCL).count(),
                rows.stream()
                        .filter(r -> r.verdict() == Verdict.NOT_ENOUGH_CALLS)
                        .count()));
        return sb.toString();
    }

    /** What was read (ranks, the profiled lines summed) and the cross-rank checks of the measured lines. */
    private void headLines(StringBuilder sb) {
        sb.append("canary: measured lines of ")
                .append(ranks)
                .append(ranks == 1 ? " rank" : " ranks")
                .append("; gain = 1 - mean policy / mean NCCL (device time), 95% interval; verdict needs ")
                .append(minCalls)
                .append(" timed collectives per arm\n");
        Profiled p = profiled;
        if (p.communicators() > 0) {
            sb.append(String.format(
                    Locale.ROOT,
                    "  profiled: %d communicators%s, %d collectives, %d unjoined, %d untimed,"
                            + " %d unaggregated, %d decisions dropped%n",
                    p.communicators(),
                    p.notJoined() > 0 ? " (" + p.notJoined() + " not joined to the tuner)" : "",
                    p.collectives(),
                    p.unjoined(),
                    p.untimed(),
                    p.unaggregated(),
                    p.decisionsDropped()));
        }
        sb.append(
                tableProblems.isEmpty()
                        ? "  measured tables: every rank of each shape measured the same table\n"
                        : "  measured tables: DIFFER\n    " + String.join("\n    ", tableProblems) + "\n");
        sb.append(
                decisionProblems.isEmpty()
                        ? "  measured decisions: every rank's policy arm decided the same\n"
                        : "  measured decisions: DIFFER\n    " + String.join("\n    ", decisionProblems) + "\n");
    }

    /** @return the rows as a table: both arms side by side, the gain, and the verdict */
    private String verdictTable() {
        TextTable t = new TextTable(
                "shape",
                "collective",
                "size",
                ">NCCL calls",
                ">timed",
                ">p50 us",
                ">p95 us",
                ">mean us",
                ">policy calls",
                ">timed",
                ">p50 us",
                ">p95 us",
                ">mean us",
                "policy decided",
                ">gain [95% CI]",
                "by",
                "verdict");
        for (Row r : rows) {
            t.row(
                    io.nccltuner.model.JobShape.of(r.nRanks(), r.nNodes()),
                    r.collective().name(),
                    r.range(),
                    Long.toString(r.nccl().count()),
                    Long.toString(r.nccl().timed()),
                    us(r.nccl().p50Us()),
                    us(r.nccl().p95Us()),
                    us(r.nccl().meanUs()),
                    Long.toString(r.policy().count()),
                    Long.toString(r.policy().timed()),
                    us(r.policy().p50Us()),
                    us(r.policy().p95Us()),
                    us(r.policy().meanUs()),
                    r.policy().decided().isEmpty() ? "-" : r.policy().decided(),
                    interval(r.gain()),
                    Double.isNaN(r.gain().gain()) ? "-" : r.gain().method(),
                    r.verdict().label());
        }
        return t.render();
    }

    /** @return the "executed as decided" table: per key and arm, how many collectives ran as decided */
    private String executionTable() {
        TextTable e = new TextTable(
                "shape",
                "collective",
                "size",
                "arm",
                ">collectives",
                ">as decided",
                ">not as decided",
                ">no decision",
                "why not");
        for (Execution x : executed) {
            e.row(
                    io.nccltuner.model.JobShape.of(x.nRanks(), x.nNodes()),
                    x.collective().name(),
                    x.range(),
                    x.arm().spelling(),
                    Long.toString(x.collectives()),
                    Long.toString(x.asDecided()),
                    Long.toString(x.notAsDecided()),
                    Long.toString(x.noDecision()),
                    x.reasonText());
        }
        return e.render();
    }
}
