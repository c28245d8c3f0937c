package io.nccltuner.compile;

import io.nccltuner.policy.ByteSize;
import io.nccltuner.policy.Collective;
import io.nccltuner.policy.InputException;
import io.nccltuner.policy.Mode;
import io.nccltuner.policy.Policy;
import io.nccltuner.policy.Policy.Candidate;
import io.nccltuner.policy.Policy.Profile;
import io.nccltuner.policy.Policy.Range;
import io.nccltuner.policy.Policy.Rule;
import io.nccltuner.policy.SizeGrid;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;

/**
 * Turns measurements into a regret-ranked policy, following the offline tuning flow of seed 001
 * (sweeps of forced candidates, repeated measurement, regret rather than win counts, a practical
 * threshold, merged size buckets).
 *
 * <p>Per group (collective, nRanks, nNodes, numPipeOps) and measured size:
 *
 * <ol>
 *   <li>Each configuration's time is the median over its replicates; its noise is the coefficient
 *       of variation (sample standard deviation / mean) of the replicates, unknown with one.
 *   <li>NCCL's time is the median of the unforced ("auto") runs. When a log names NCCL's pick and
 *       that configuration was also measured forced (channels left to NCCL), those runs are the same
 *       configuration and join the unforced ones as replicates (so their disagreement shows up as
 *       noise). Without either the size gets no rule.
 *   <li>best = the smallest median of NCCL's time and every candidate (a configuration naming both
 *       algorithm and protocol); regret(x) = median(x) / best - 1.
 *   <li>A candidate is kept when NCCL's pick loses to it by more than max(threshold, noise margin):
 *       {@code ncclTime / median(c) - 1 > max(threshold, k * sqrt(cv(nccl)^2 + cv(c)^2))}. NCCL's
 *       own pick, when known, is never kept (applying it changes nothing). At most
 *       {@link io.nccltuner.policy.PolicyLoader#MAX_CANDIDATES} are kept, by median; candidates
 *       within the tie tolerance of a better one (max(tie, noise margin)) are ordered by their
 *       regret over all sizes of the group instead, so noise does not reorder them size by size.
 *   <li>A size gets a rule when at least one candidate is kept.
 * </ol>
 *
 * <p>Measured size s_i governs the size-grid buckets from its own up to the one before the next
 * measured size's (for powers of two exactly [s_i, s_{i+1})); the last measured size governs only
 * its own bucket, so no rule reaches outside the measured span. Neighbouring buckets with the same
 * ranking merge into one rule. A merged rule's ncclRegret is the smallest over its sizes and each
 * candidate's regret the largest: both err on the side of promising less.
 */
public final class Compiler {
    /**
     * Largest regret the compiler reports or writes (1e6: a million times slower than the best), the
     * bound {@link io.nccltuner.policy.PolicyLoader} accepts. Times are positive and finite, but a
     * ratio of two of them can still overflow (1e300 / 1e-300); such regrets are capped here.
     */
    public static final double MAX_REGRET = 1e6;

    /**
     * Compiler settings.
     *
     * @param threshold smallest regret of NCCL's pick worth a rule, as a fraction (0.05 = 5%)
     * @param noiseSigmas k in the noise margin k * sqrt(cv1^2 + cv2^2)
     * @param tie candidates closer than this fraction are ordered by group-wide regret
     * @param anyPipeOps emit rules for any numPipeOps instead of the measured one
     * @param merge when neighbouring sizes merge into one rule
     * @param name the policy name
     * @param mode the policy mode
     * @param description the policy description (null: one is generated)
     * @param window measured sizes on each side of a size that its verdict looks at (0: the size
     *     alone, the method before the robust compile; default 2: two sizes below and two above). With a
     *     window, a candidate's noise includes its neighbour jump and candidates are ranked by their
     *     worst regret over the window (minimax), see docs/compile.md
     */
    public record Options(
            double threshold,
            double noiseSigmas,
            double tie,
            boolean anyPipeOps,
            Merge merge,
            String name,
            Mode mode,
            String description,
            int window) {
        /** The settings without a window (window 0): each size decided on its own readings alone. */
        public Options(
                double threshold,
                double noiseSigmas,
                double tie,
                boolean anyPipeOps,
                Merge merge,
                String name,
                Mode mode,
                String description) {
            this(threshold, noiseSigmas, tie, anyPipeOps, merge, name, mode, description, 0);
        }

        public Options {
            if (window < 0 || window > 8) {
                throw new IllegalArgumentException("window " + window + " is outside 0..8");
            }
        }

        /**
         * @return threshold 5%, k = 2, tie 0 (only the noise margin), measured numPipeOps, merge by
         *     ranking, window 2 (the robust compile)
         */
        public static Options defaults(String name) {
            return new Options(0.05, 2.0, 0.0, false, Merge.RANKING, name, Mode.ENFORCE, null, 2);
        }
    }

    /** When neighbouring sizes share a rule. */
    public enum Merge {
        /** the same ranking: the same kept candidates in the same order */
        RANKING,
        /**
         * the same policy pick (first candidate); the merged rule keeps as fallbacks the candidates
         * kept at every one of its sizes, ordered by their largest regret there
         */
        PICK
    }

    /**
     * The communicator shape and call shape a set of measurements belongs to.
     *
     * @param collective the collective
     * @param nRanks ranks
     * @param nNodes nodes
     * @param numPipeOps numPipeOps of the measured calls
     * @param hardware the machine, where inputs of this shape came from more than one (GPU name or
     *     NCCL version differ); null where they all came from one, or none says
     */
    public record GroupKey(
            Collective collective, int nRanks, int nNodes, Range numPipeOps, Measurement.Hardware hardware) {
        /** A key of inputs from one machine (or of unknown machines). */
        public GroupKey(Collective collective, int nRanks, int nNodes, Range numPipeOps) {
            this(collective, nRanks, nNodes, numPipeOps, null);
        }

        /** @return the same key without the hardware */
        GroupKey shape() {
            return hardware == null ? this : new GroupKey(collective, nRanks, nNodes, numPipeOps);
        }

        @Override
        public String toString() {
            return collective + ", nRanks " + nRanks + ", nNodes " + nNodes + ", numPipeOps " + numPipeOps
                    + (hardware == null ? "" : ", " + hardware);
        }
    }

    /**
     * One configuration at one size.
     *
     * @param config the configuration
     * @param replicates how many measurements
     * @param medianUs median time in microseconds
     * @param cv coefficient of variation of the replicates, NaN with one replicate
     * @param regret medianUs / best - 1 at this size
     * @param p95Us median of the replicates' P95 (microseconds), NaN where the input has none
     * @param neighbourJump how far this configuration's time falls from a smaller measured size to a
     *     larger one around this size, as ln(t_smaller / t_larger) (0 when it never falls; times grow
     *     with size, so a fall is noise); 0 without a window
     * @param windowRegret the largest regret of this configuration over the window of sizes around
     *     this one where it was measured (= regret without a window)
     * @param minUs the fastest replicate, microseconds (the chart's error bars)
     * @param maxUs the slowest replicate, microseconds
     */
    public record Stats(
            RunConfig config,
            int replicates,
            double medianUs,
            double cv,
            double regret,
            double p95Us,
            double neighbourJump,
            double windowRegret,
            double minUs,
            double maxUs) {
        /** Stats without the replicates' range (min = max = median). */
        public Stats(
                RunConfig config,
                int replicates,
                double medianUs,
                double cv,
                double regret,
                double p95Us,
                double neighbourJump,
                double windowRegret) {
            this(config, replicates, medianUs, cv, regret, p95Us, neighbourJump, windowRegret, medianUs, medianUs);
        }

        /** Stats without P95 or window information. */
        public Stats(RunConfig config, int replicates, double medianUs, double cv, double regret) {
            this(config, replicates, medianUs, cv, regret, Double.NaN, 0, regret);
        }

        /** @return the noise used in the margin: max(CV of the replicates, neighbour jump); 0 when neither is known */
        public double noise() {
            return Math.max(Double.isNaN(cv) ? 0 : cv, neighbourJump);
        }
    }

    /**
     * The expected regret over one stretch of the size grid where the verdict is the same: a rule's
     * range, or a stretch where NCCL's pick is kept.
     *
     * @param fromBytes first byte
     * @param toBytes end (exclusive), -1 for no bound
     * @param pick the policy's pick there (its first candidate), or null where NCCL's pick is kept
     * @param sizes how many measured sizes the range governs
     * @param expectedRegret mean regret over those sizes of what runs there (the pick, else NCCL's own)
     * @param uncertainty spread of that regret: sample standard deviation over the range's sizes,
     *     combined with the replicates' CV (sqrt of the sum of squares); 0 with a single reading
     * @param keptForNoise whether NCCL's pick is kept although some candidate measured faster by more
     *     than the threshold at one of the sizes (the gain was within the noise)
     */
    public record RangeEstimate(
            long fromBytes,
            long toBytes,
            RunConfig pick,
            int sizes,
            double expectedRegret,
            double uncertainty,
            boolean keptForNoise) {}

    /**
     * The verdict at one measured size.
     *
     * @param nBytes the measured size
     * @param fromBytes first byte of the grid buckets this size governs
     * @param toBytes end (exclusive) of those buckets; -1 for no bound
     * @param nccl NCCL's unforced runs, or null when none were measured
     * @param ncclPick the configuration NCCL picked, from logs, or null when unknown
     * @param pickInferred whether ncclPick was not logged at this size but inferred from the same pick
     *     at the logged sizes below and above
     * @param ncclUs NCCL's time (NaN when unknown)
     * @param ncclRegret ncclUs / best - 1 (NaN when NCCL's time is unknown)
     * @param noiseMargin the noise margin a gain over NCCL's pick had to exceed here (with the
     *     threshold): k * sqrt(noise(NCCL)^2 + noise(c)^2), c the policy's pick where the size gets a
     *     rule, else the fastest candidate that could have been kept (NCCL's own noise against the
     *     best's where there is none); noise = max(replicate CV, neighbour jump) with a window, the
     *     CV alone without; NaN when neither is known
     * @param candidates every measured candidate, fastest first
     * @param ranking the kept candidates in policy order; empty when this size gets no rule
     * @param note why there is no rule when that is not simply a small regret, else ""
     */
    public record SizeResult(
            long nBytes,
            long fromBytes,
            long toBytes,
            Stats nccl,
            RunConfig ncclPick,
            boolean pickInferred,
            double ncclUs,
            double ncclRegret,
            double noiseMargin,
            List<Stats> candidates,
            List<Stats> ranking,
            String note) {
        /** @return the fastest time measured at this size (NCCL's or a candidate's), microseconds */
        public double bestUs() {
            double b = Double.isNaN(ncclUs) ? Double.POSITIVE_INFINITY : ncclUs;
            for (Stats s : candidates) {
                b = Math.min(b, s.medianUs());
            }
            return b;
        }

        /** @return "auto", "auto=RING/LL" (logged), "auto~RING/LL" (inferred), or "-" without NCCL's time */
        public String ncclLabel() {
            if (nccl == null && Double.isNaN(ncclUs)) {
                return "-";
            }
            return ncclPick == null ? "auto" : (pickInferred ? "auto~" : "auto=") + ncclPick.label();
        }

        /** @return whether the policy changes NCCL's choice here */
        public boolean ruled() {
            return !ranking.isEmpty();
        }

        /** @return time with the policy (its first candidate, else NCCL's own pick), microseconds */
        public double policyUs() {
            return ruled() ? ranking.getFirst().medianUs() : ncclUs;
        }

        /** @return the policy's regret: policyUs / best - 1 (capped at {@link #MAX_REGRET}) */
        public double policyRegret() {
            return regret(policyUs(), bestUs());
        }

        /**
         * @param fromBytes first byte of the grid buckets the size governs
         * @param toBytes end (exclusive) of those buckets; -1 for no bound
         * @return the same verdict, placed on the grid buckets [fromBytes, toBytes)
         */
        SizeResult placed(long fromBytes, long toBytes) {
            return new SizeResult(
                    nBytes,
                    fromBytes,
                    toBytes,
                    nccl,
                    ncclPick,
                    pickInferred,
                    ncclUs,
                    ncclRegret,
                    noiseMargin,
                    candidates,
                    ranking,
                    note);
        }
    }

    /**
     * The result for one group.
     *
     * @param key the group
     * @param sizes per measured size, ascending
     * @param rules the merged rules
     * @param ranges the expected regret per stretch of the grid, ascending (rules and kept stretches)
     */
    public record Group(GroupKey key, List<SizeResult> sizes, List<Rule> rules, List<RangeEstimate> ranges) {
        /**
         * The measured size whose verdict applies to a message size.
         *
         * @param nBytes message size in bytes
         * @return the governing size, or null outside the measured span
         */
        public SizeResult governing(long nBytes) {
            for (SizeResult s : sizes) {
                if (SizeGrid.inRange(nBytes, s.fromBytes(), s.toBytes())) {
                    return s;
                }
            }
            return null;
        }
    }

    /**
     * A compiled policy with what it was built from.
     *
     * @param policy the policy (valid per docs/policy-format.md)
     * @param groups per-group results, in profile order
     * @param warnings inputs' warnings followed by the compiler's
     * @param refused rows refused for wrong results, as {@code file:line: reason}
     * @param options the settings used
     */
    public record Compilation(
            Policy policy,
            List<Group> groups,
            List<String> warnings,
            List<String> refused,
            Options options,
            List<MeasurementSet.Unfinished> unfinished) {
        /** A compilation of inputs without an unfinished sweep. */
        public Compilation(
                Policy policy, List<Group> groups, List<String> warnings, List<String> refused, Options options) {
            this(policy, groups, warnings, refused, options, List.of());
        }
    }

    private Compiler() {}

    /**
     * Largest median coefficient of variation (0.25 = 25%) between inputs pooled as replicates
     * without anything saying they measured one setup, before {@link #unverifiedPooling} calls them
     * different machines or settings.
     */
    public static final double MAX_POOLED_CV = 0.25;

    /** A size's note where NCCL's pick lost by more than the threshold but within the noise margin. */
    public static final String KEPT_FOR_NOISE = "NCCL's pick kept: the gain is within the noise";

    /** In a size's note, where a candidate that would have been kept is one NCCL's logged table never offers. */
    public static final String NEVER_OFFERED = "NCCL never offers";

    /**
     * Inputs of one group pooled as replicates that disagree more than {@link #MAX_POOLED_CV}, while
     * nothing says they are runs of one machine and setup.
     *
     * @param key the group
     * @param sources the pooled inputs ({@code a.txt}, or {@code the table at line 11 of a.txt} for
     *     tables {@code --pool-runs} pooled)
     * @param pooledRuns whether they are {@code --pool-runs} tables (else files that name no machine)
     * @param medianCv the median, over the (size, configuration) points measured by two or more of
     *     them, of the coefficient of variation of their medians there (0.68 = 68%)
     * @param points how many such points
     * @param worst the point where they differ most: {@code RING/LL128 at 1 MiB, 30.0 us in a.txt
     *     against 90.0 us in b.txt}
     */
    public record PoolingProblem(
            GroupKey key, List<String> sources, boolean pooledRuns, double medianCv, int points, String worst) {
        /** @return the refusal (or, with {@code --pool-anyway}, the warning): which inputs, what differs, how to go on */
        public String message() {
            String what = pooledRuns
                    ? sources.size() + " size tables pooled as replicates by --pool-runs ("
                    : sources.size()
                            + " inputs that name no machine (no nccl-tests '# Rank ... device' lines, no NCCL version "
                            + "line) pooled as replicates (";
            return key.collective() + " at nRanks " + key.nRanks() + ", nNodes " + key.nNodes() + ": " + what
                    + String.join("; ", sources) + ") disagree: a median coefficient of variation of "
                    + String.format(java.util.Locale.ROOT, "%.1f%%", 100 * medianCv) + " between their times over "
                    + points
                    + " configuration" + (points == 1 ? "" : "s") + " they both measured (the widest: " + worst
                    + "), above "
                    + String.format(java.util.Locale.ROOT, "%.0f%%", 100 * MAX_POOLED_CV)
                    + ": other machines or settings, not "
                    + "replicates? Compile them separately"
                    + (pooledRuns
                            ? " (split the file)"
                            : ", or keep the device lines and NCCL's INFO lines in the files so they "
                                    + "are compiled apart by machine")
                    + "; --pool-anyway pools them as replicates all the same";
        }
    }

    /** How {@link #inputOf} names one of the size tables {@code --pool-runs} pooled. */
    private static final String TABLE_AT = "the table at line ";

    /**
     * The input a measurement came from, as the pooling checks tell inputs apart: {@code the table at
     * line 11 of a.txt} for a table {@code --pool-runs} pooled, {@code machine H200, NCCL 2.28.9} for
     * files that name their machine (compiled as one), the {@code nccl-tuner sweep} folder of a
     * sweep's run, else the file.
     */
    private static String inputOf(Measurement m, MeasurementSet data) {
        int colon = m.source().lastIndexOf(':');
        String file = fileOf(m.source());
        List<Integer> pooled = data.pooledTables().get(file);
        if (pooled != null && colon > 0) {
            int line = Integer.parseInt(m.source().substring(colon + 1));
            int table = pooled.getFirst();
            for (int t : pooled) {
                if (t <= line) {
                    table = t;
                }
            }
            return TABLE_AT + table + " of " + file;
        }
        if (m.hardware() != null) {
            return "machine " + m.hardware(); // files that name the same machine are compiled as one
        }
        return data.runsOf().getOrDefault(file, file);
    }

    /**
     * Smallest factor between the fastest times of two inputs, at every size both measured, that
     * {@link #disparateInputs} calls other machines or settings: one machine's configurations differ
     * by configuration and size, not by one factor of 3 or more at each size, and no replicate noise
     * explains it.
     */
    public static final double MAX_INPUT_FACTOR = 3;

    /**
     * Inputs of one group that measured different configurations (no (size, configuration) point in
     * common, so {@link #unverifiedPooling} cannot compare them) and whose fastest times differ by
     * {@link #MAX_INPUT_FACTOR} or more at each of at least 3 sizes both measured: a forced file from
     * one cluster and an unforced one from another compile to a policy of the other machine's numbers
     * (no rule where the forced machine is slower, a rule everywhere where it is faster).
     *
     * @param data the measurements
     * @param o the settings (numPipeOps grouping)
     * @return one warning per such pair of inputs, {@code inputs: AllReduce at nRanks=16 nNodes=2:
     *     v100.txt (RING/SIMPLE) is 7.40x .. 11.52x slower than a100.txt (NCCL's own pick) ...}
     */
    public static List<String> disparateInputs(MeasurementSet data, Options o) {
        // group -> input -> size -> config -> times
        Map<GroupKey, Map<String, TreeMap<Long, Map<RunConfig, List<Double>>>>> byGroup = new LinkedHashMap<>();
        for (Measurement m : data.measurements()) {
            GroupKey k = new GroupKey(
                    m.collective(), m.nRanks(), m.nNodes(), o.anyPipeOps() ? Range.ANY : m.numPipeOps(), m.hardware());
            byGroup.computeIfAbsent(k, x -> new LinkedHashMap<>())
                    .computeIfAbsent(inputOf(m, data), x -> new TreeMap<>(Long::compareUnsigned))
                    .computeIfAbsent(m.nBytes(), x -> new LinkedHashMap<>())
                    .computeIfAbsent(m.config(), x -> new ArrayList<>())
                    .add(m.timeUs());
        }
        List<String> out = new ArrayList<>();
        for (var g : byGroup.entrySet()) {
            List<String> inputs = new ArrayList<>(g.getValue().keySet());
            for (int i = 0; i < inputs.size(); i++) {
                for (int j = i + 1; j < inputs.size(); j++) {
                    String w = disparate(
                            g.getKey(),
                            inputs.get(i),
                            g.getValue().get(inputs.get(i)),
                            inputs.get(j),
                            g.getValue().get(inputs.get(j)));
                    if (w != null) {
                        out.add(w);
                    }
                }
            }
        }
        return out;
    }

    /** The warning for two inputs of a group whose fastest times differ by a factor at each shared size, or null. */
    private static String disparate(
            GroupKey k,
            String a,
            TreeMap<Long, Map<RunConfig, List<Double>>> ta,
            String b,
            TreeMap<Long, Map<RunConfig, List<Double>>> tb) {
        double lo = Double.POSITIVE_INFINITY;
        double hi = 0;
        int shared = 0;
        for (var e : ta.entrySet()) {
            Map<RunConfig, List<Double>> other = tb.get(e.getKey());
            if (other == null) {
                continue;
            }
            if (e.getValue().keySet().stream().anyMatch(other::containsKey)) {
                return null; // a configuration both measured: unverifiedPooling compares them
            }
            double r = fastest(e.getValue()) / fastest(other); // a's time over b's
            lo = Math.min(lo, r);
            hi = Math.max(hi, r);
            shared++;
        }
        boolean aSlower = lo >= MAX_INPUT_FACTOR;
        if (shared < 3 || !(aSlower || hi <= 1 / MAX_INPUT_FACTOR)) {
            return null;
        }
        String slow = aSlower ? a : b;
        String fast = aSlower ? b : a;
        double f1 = aSlower ? lo : 1 / hi;
        double f2 = aSlower ? hi : 1 / lo;
        return "inputs: " + k.collective() + " at " + io.nccltuner.model.JobShape.of(k.nRanks(), k.nNodes()) + ": "
                + slow + " (" + configs(aSlower ? ta : tb) + ") is "
                + String.format(java.util.Locale.ROOT, f1 == f2 ? "%.2fx" : "%.2fx .. %.2fx", f1, f2)
                + " slower than " + fast + " (" + configs(aSlower ? tb : ta) + ") at each of the " + shared
                + " sizes both measured, far more than replicate noise: other machines or settings? One machine's "
                + "configurations differ by configuration and size, not by one factor at every size; the verdicts "
                + "compare one input's numbers with the other's. If they are other machines, compile them separately "
                + "(or keep the device lines and NCCL's INFO lines in the files, so they are compiled apart by machine)";
    }

    /** @return the fastest median of a size's configurations, microseconds */
    private static double fastest(Map<RunConfig, List<Double>> runs) {
        return runs.values().stream().mapToDouble(Compiler::median).min().orElse(Double.NaN);
    }

    /** @return {@code RING/SIMPLE}, {@code NCCL's own pick}, {@code RING/LL and 2 more} */
    private static String configs(TreeMap<Long, Map<RunConfig, List<Double>>> t) {
        Set<String> names = new java.util.TreeSet<>();
        t.values().forEach(m -> m.keySet().forEach(c -> names.add(c.isAuto() ? "NCCL's own pick" : c.label())));
        return names.size() == 1
                ? names.iterator().next()
                : names.iterator().next() + " and " + (names.size() - 1) + " more";
    }

    /**
     * Finds replicates pooled from inputs that nothing says measured one setup and whose times
     * disagree: files that name no machine (two clusters' outputs without device lines are one group
     * to the compiler), and size tables {@code --pool-runs} pooled. Files of one {@code nccl-tuner
     * sweep} folder count as one input (one manifest, one machine), and so do files that name the
     * same machine (GPU, NCCL version). Per group, at each (size, configuration) measured by two or
     * more of these inputs, the coefficient of variation of the inputs' medians there; a group whose
     * median of those exceeds {@link #MAX_POOLED_CV} is reported.
     *
     * @param data the measurements
     * @param o the settings (numPipeOps grouping)
     * @return the groups whose pooled inputs disagree, in group order
     */
    public static List<PoolingProblem> unverifiedPooling(MeasurementSet data, Options o) {
        record Point(long nBytes, RunConfig config) {}
        Map<GroupKey, Map<Point, Map<String, List<Double>>>> byGroup = new LinkedHashMap<>();
        Map<GroupKey, Boolean> tables = new HashMap<>();
        for (Measurement m : data.measurements()) {
            String src = inputOf(m, data);
            GroupKey k = new GroupKey(
                    m.collective(), m.nRanks(), m.nNodes(), o.anyPipeOps() ? Range.ANY : m.numPipeOps(), m.hardware());
            if (src.startsWith(TABLE_AT)) {
                tables.put(k, true);
            }
            byGroup.computeIfAbsent(k, x -> new LinkedHashMap<>())
                    .computeIfAbsent(new Point(m.nBytes(), m.config()), x -> new LinkedHashMap<>())
                    .computeIfAbsent(src, x -> new ArrayList<>())
                    .add(m.timeUs());
        }
        List<PoolingProblem> out = new ArrayList<>();
        for (var g : byGroup.entrySet()) {
            List<Double> cvs = new ArrayList<>();
            java.util.Set<String> sources = new java.util.LinkedHashSet<>();
            double worstRatio = 0;
            String worst = null;
            for (var p : g.getValue().entrySet()) {
                Map<String, List<Double>> bySource = p.getValue();
                if (bySource.size() < 2) {
                    continue;
                }
                List<Double> medians =
                        bySource.values().stream().map(Compiler::median).toList();
                cvs.add(cv(medians));
                sources.addAll(bySource.keySet());
                double ratio = max(medians) / min(medians);
                if (ratio > worstRatio) {
                    worstRatio = ratio;
                    List<String> each = new ArrayList<>();
                    bySource.forEach(
                            (s, t) -> each.add(String.format(java.util.Locale.ROOT, "%.1f us in %s", median(t), s)));
                    worst = (p.getKey().config().isCandidate()
                                    ? p.getKey().config().label()
                                    : "NCCL's own pick (unforced)")
                            + " at " + ByteSize.format(p.getKey().nBytes()) + ", " + String.join(" against ", each);
                }
            }
            if (cvs.isEmpty()) {
                continue;
            }
            double med = median(cvs);
            if (med > MAX_POOLED_CV) {
                out.add(new PoolingProblem(
                        g.getKey().shape(),
                        List.copyOf(sources),
                        tables.getOrDefault(g.getKey(), false),
                        med,
                        cvs.size(),
                        worst));
            }
        }
        return out;
    }

    /**
     * Compiles measurements.
     *
     * @param data measurements and selections from the parsers
     * @param o settings
     * @return the policy and the per-size verdicts
     * @throws InputException when there are no measurements, or measurements of one collective and
     *     communicator shape have overlapping but different numPipeOps ranges
     */
    public static Compilation compile(MeasurementSet data, Options o) throws InputException {
        if (data.measurements().isEmpty()) {
            throw new InputException(
                    "inputs",
                    "no usable measurements"
                            + (data.refused().isEmpty()
                                    ? ""
                                    : " (" + data.refused().size() + " rows refused)"));
        }
        List<String> warnings = new ArrayList<>(data.warnings());
        for (PoolingProblem p : unverifiedPooling(data, o)) { // compile refuses these unless --pool-anyway
            warnings.add("inputs: " + p.message());
        }
        warnings.addAll(disparateInputs(data, o));
        Map<GroupKey, Map<Measurement.Hardware, Set<String>>> machines = machines(data, o, warnings);
        // group -> size -> config -> times
        Map<GroupKey, TreeMap<Long, Map<RunConfig, List<Double>>>> grouped =
                new TreeMap<>(Comparator.comparingInt((GroupKey k) -> k.nRanks())
                        .thenComparingInt(GroupKey::nNodes)
                        .thenComparing(GroupKey::collective)
                        .thenComparingLong(k -> k.numPipeOps().min())
                        .thenComparingLong(k -> k.numPipeOps().max())
                        .thenComparing(k -> String.valueOf(k.hardware())));
        Map<GroupKey, Map<Long, Map<RunConfig, List<Double>>>> p95s = new HashMap<>();
        for (Measurement m : data.measurements()) {
            GroupKey k = shapeOf(m, o);
            if (machines.get(k).size() > 1) {
                k = new GroupKey(k.collective(), k.nRanks(), k.nNodes(), k.numPipeOps(), m.hardware());
            }
            grouped.computeIfAbsent(k, x -> new TreeMap<>(Long::compareUnsigned))
                    .computeIfAbsent(m.nBytes(), x -> new LinkedHashMap<>())
                    .computeIfAbsent(m.config(), x -> new ArrayList<>())
                    .add(m.timeUs());
            if (!Double.isNaN(m.p95Us())) {
                p95s.computeIfAbsent(k, x -> new HashMap<>())
                        .computeIfAbsent(m.nBytes(), x -> new HashMap<>())
                        .computeIfAbsent(m.config(), x -> new ArrayList<>())
                        .add(m.p95Us());
            }
        }
        // in group order (a hash set of keys with enum fields would name a different pair each run)
        checkPipeOpsOverlap(grouped.keySet().stream()
                .map(GroupKey::shape)
                .collect(java.util.stream.Collectors.toCollection(java.util.LinkedHashSet::new)));
        warnUnmatchedSelections(data.selections(), grouped.keySet(), warnings);
        Map<GroupKey, java.util.TreeSet<Long>> holes = holes(data, o, grouped);
        List<Group> groups = new ArrayList<>();
        for (var e : grouped.entrySet()) {
            Group g = group(
                    e.getKey(),
                    e.getValue(),
                    p95s.getOrDefault(e.getKey(), Map.of()),
                    data.selections(),
                    Unoffered.of(e.getKey(), data.notOffered()),
                    o,
                    warnings);
            groups.add(withoutHoles(g, holes.getOrDefault(e.getKey(), new java.util.TreeSet<>()), warnings));
        }
        Policy policy = new Policy(o.name(), o.mode(), description(o), profiles(groups), null);
        return new Compilation(policy, groups, Repeats.perFile(warnings), data.refused(), o, data.unfinished());
    }

    /**
     * The input files with a run in a group (collective, shape, machine) that measured no forced
     * candidate at any size: such a group gets no rule, since nothing said what its runs forced. A
     * file whose unforced runs stand beside forced ones of their group (NCCL's own pick to compare
     * with) is not among them.
     *
     * @param data the measurements compiled, each with its {@code file:line} source
     * @param c their compilation
     * @return the files ({@code file} of each source), in the measurements' order
     */
    public static Set<String> filesInUnforcedGroups(MeasurementSet data, Compilation c) {
        List<GroupKey> forced = c.groups().stream()
                .filter(g -> g.sizes().stream().anyMatch(s -> !s.candidates().isEmpty()))
                .map(Group::key)
                .toList();
        Set<String> files = new java.util.LinkedHashSet<>();
        for (Measurement m : data.measurements()) {
            GroupKey shape = shapeOf(m, c.options());
            boolean inForced = forced.stream()
                    .anyMatch(k -> k.shape().equals(shape)
                            && (k.hardware() == null || k.hardware().equals(m.hardware())));
            if (!inForced) {
                files.add(fileOf(m.source()));
            }
        }
        return files;
    }

    /** @return the file of a {@code file:line} source (the whole source when it names no line) */
    private static String fileOf(String source) {
        int colon = source.lastIndexOf(':');
        return colon > 0 ? source.substring(0, colon) : source;
    }

    /** @return the group of a measurement's shape, without its machine */
    private static GroupKey shapeOf(Measurement m, Options o) {
        return new GroupKey(m.collective(), m.nRanks(), m.nNodes(), o.anyPipeOps() ? Range.ANY : m.numPipeOps());
    }

    /**
     * The machines each shape was measured on, with a warning per shape measured on several: inputs
     * of one shape from different GPUs or NCCL versions are not replicates, but compiled apart.
     *
     * @return shape -> machine (null: not printed) -> the files of that machine
     */
    private static Map<GroupKey, Map<Measurement.Hardware, Set<String>>> machines(
            MeasurementSet data, Options o, List<String> warnings) {
        Map<GroupKey, Map<Measurement.Hardware, Set<String>>> machines = new LinkedHashMap<>();
        for (Measurement m : data.measurements()) {
            machines.computeIfAbsent(shapeOf(m, o), x -> new LinkedHashMap<>())
                    .computeIfAbsent(m.hardware(), x -> new java.util.LinkedHashSet<>())
                    .add(fileOf(m.source()));
        }
        for (var e : machines.entrySet()) {
            if (e.getValue().size() > 1) {
                List<String> each = new ArrayList<>();
                e.getValue()
                        .forEach((hw, files) -> each.add((hw == null ? "machine not printed" : hw.toString()) + ": "
                                + String.join(", ", files)));
                warnings.add("inputs: " + e.getKey().collective() + " at nRanks "
                        + e.getKey().nRanks() + ", nNodes "
                        + e.getKey().nNodes() + " was measured on "
                        + e.getValue().size() + " machines (" + String.join("; ", each)
                        + "): compiled separately, not pooled as replicates; each profile matches its gpu (and ncclVersion)"
                        + (e.getValue().containsKey(null)
                                ? "; the inputs that name no machine make a profile for any machine, placed after the named machines' profiles"
                                : ""));
            }
        }
        return machines;
    }

    /**
     * Sizes measured only by refused rows, per group: no rule may reach over them (input handling,
     * issue 13). A hole of a shape holds for each machine of that shape.
     */
    private static Map<GroupKey, java.util.TreeSet<Long>> holes(
            MeasurementSet data, Options o, Map<GroupKey, TreeMap<Long, Map<RunConfig, List<Double>>>> grouped) {
        Map<GroupKey, java.util.TreeSet<Long>> holes = new HashMap<>();
        for (MeasurementSet.Hole h : data.holes()) {
            GroupKey hk =
                    new GroupKey(h.collective(), h.nRanks(), h.nNodes(), o.anyPipeOps() ? Range.ANY : h.numPipeOps());
            for (var g : grouped.entrySet()) {
                GroupKey k = g.getKey();
                if (k.shape().equals(hk) && !g.getValue().containsKey(h.nBytes())) {
                    holes.computeIfAbsent(k, x -> new java.util.TreeSet<>(Long::compareUnsigned))
                            .add(h.nBytes());
                }
            }
        }
        return holes;
    }

    /**
     * The policy's profiles: per shape (nRanks, nNodes), one per machine named where the shape was
     * measured on several, then one for any machine. The first matching profile applies, so a
     * machine's profile carries the shape's other rules too: those of collectives measured on one
     * machine only; a collective this machine measured keeps its own rules (the signature-less
     * input's rules for it go to the any-machine profile, last).
     */
    private static List<Profile> profiles(List<Group> groups) {
        Map<List<Object>, List<Rule>> byShape = new LinkedHashMap<>();
        for (Group g : groups) {
            List<Object> shape =
                    new ArrayList<>(List.of(g.key().nRanks(), g.key().nNodes()));
            shape.add(g.key().hardware()); // null: one machine (or none named) for the shape
            byShape.computeIfAbsent(shape, x -> new ArrayList<>()).addAll(g.rules());
        }
        Map<List<Object>, List<Rule>> shared = new HashMap<>(); // rules of collectives measured on one machine
        for (var e : byShape.entrySet()) {
            if (e.getKey().get(2) == null) {
                shared.put(e.getKey().subList(0, 2), e.getValue());
            }
        }
        List<Profile> profiles = new ArrayList<>();
        List<Profile> anyMachine = new ArrayList<>();
        for (var e : byShape.entrySet()) {
            int r = (Integer) e.getKey().get(0);
            int n = (Integer) e.getKey().get(1);
            Measurement.Hardware hw = (Measurement.Hardware) e.getKey().get(2);
            List<Rule> rules = new ArrayList<>(e.getValue());
            if (hw != null) {
                rules.addAll(sharedRules(
                        groups, hw, r, n, shared.getOrDefault(e.getKey().subList(0, 2), List.of())));
            }
            rules.sort(Comparator.comparing(Rule::collective)
                    .thenComparingLong(x -> x.numPipeOps().min())
                    .thenComparing(Rule::fromBytes, Long::compareUnsigned));
            String name = Profile.nameOf(Range.exactly(r), Range.exactly(n));
            if (hw == null) {
                // after the machine-named profiles of the same shape: the first matching profile applies
                anyMachine.add(new Profile(name, Range.exactly(r), Range.exactly(n), rules));
            } else {
                profiles.add(machineProfile(name, r, n, rules, hw));
            }
        }
        profiles.addAll(anyMachine);
        return profiles;
    }

    /** @return the shape's rules of collectives (and numPipeOps) the machine did not measure itself */
    private static List<Rule> sharedRules(
            List<Group> groups, Measurement.Hardware hw, int nRanks, int nNodes, List<Rule> shared) {
        Set<List<Object>> own = new java.util.HashSet<>();
        for (Group g : groups) {
            if (hw.equals(g.key().hardware())
                    && g.key().nRanks() == nRanks
                    && g.key().nNodes() == nNodes) {
                own.add(List.of(g.key().collective(), g.key().numPipeOps()));
            }
        }
        List<Rule> out = new ArrayList<>();
        for (Rule x : shared) {
            if (own.stream()
                    .noneMatch(k -> k.get(0) == x.collective() && ((Range) k.get(1)).intersects(x.numPipeOps()))) {
                out.add(x);
            }
        }
        return out;
    }

    /** A machine's profile: matches its GPU name and NCCL version, named after them ({@code -H200-nccl2.28.9}). */
    private static Profile machineProfile(
            String name, int nRanks, int nNodes, List<Rule> rules, Measurement.Hardware hw) {
        long code = hw.versionCode();
        io.nccltuner.policy.HardwareMatch match = new io.nccltuner.policy.HardwareMatch(
                null, null, null, code > 0 ? Range.exactly(code) : null, hw.gpu(), null);
        String tag = ((hw.gpu() == null ? "" : hw.gpu().replaceFirst("^NVIDIA ", ""))
                        + (code > 0 ? "-nccl" + hw.ncclVersion() : ""))
                .replaceAll("[^A-Za-z0-9.]+", "-")
                .replaceAll("^-|-$", "");
        return new Profile(name + "-" + tag, Range.exactly(nRanks), Range.exactly(nNodes), rules, match, List.of());
    }

    /** The policy's description, when the options give none: the settings it was compiled with. */
    private static String description(Options o) {
        return o.description() != null
                ? o.description()
                : "Compiled by nccl-tuner compile: threshold " + pct(o.threshold()) + ", noise margin "
                        + o.noiseSigmas() + " x combined noise"
                        + (o.window() > 0
                                ? " (CV and neighbour jump), window " + o.window() + " size"
                                        + (o.window() == 1 ? "" : "s") + " each side, minimax regret"
                                : " (CV)")
                        + ", at most 4 candidates per rule.";
    }

    private static void checkPipeOpsOverlap(Set<GroupKey> keys) throws InputException {
        List<GroupKey> list = new ArrayList<>(keys);
        for (int i = 0; i < list.size(); i++) {
            for (int j = i + 1; j < list.size(); j++) {
                GroupKey a = list.get(i);
                GroupKey b = list.get(j);
                if (a.collective() == b.collective()
                        && a.nRanks() == b.nRanks()
                        && a.nNodes() == b.nNodes()
                        && a.numPipeOps().intersects(b.numPipeOps())) {
                    throw new InputException(
                            "inputs",
                            a.collective() + " at nRanks " + a.nRanks() + ", nNodes " + a.nNodes()
                                    + " was measured with numPipeOps " + a.numPipeOps() + " and " + b.numPipeOps()
                                    + "; their rules would overlap. Compile them separately, or pass --any-pipe-ops to pool them");
                }
            }
        }
    }

    private static boolean matches(GroupKey k, RunSelection s) {
        return (s.collective() == null || s.collective() == k.collective())
                && (s.nRanks() == 0 || s.nRanks() == k.nRanks())
                && (s.nNodes() == 0 || s.nNodes() == k.nNodes())
                // a group compiled apart by machine takes NCCL's picks of its own machine only
                && (k.hardware() == null || s.hardware() == null || k.hardware().sameMachine(s.hardware()));
    }

    /** A warning per file (NCCL log) none of whose selection lines belongs to a measured group. */
    private static void warnUnmatchedSelections(List<RunSelection> sels, Set<GroupKey> keys, List<String> warnings) {
        Map<String, List<RunSelection>> byFile = new LinkedHashMap<>();
        for (RunSelection s : sels) {
            byFile.computeIfAbsent(fileOf(s.source()), x -> new ArrayList<>()).add(s);
        }
        for (var e : byFile.entrySet()) {
            if (e.getValue().stream().anyMatch(s -> keys.stream().anyMatch(k -> matches(k, s)))) {
                continue;
            }
            Set<String> logged = new java.util.TreeSet<>();
            for (RunSelection s : e.getValue()) {
                logged.add((s.collective() == null
                                ? "any collective"
                                : s.collective().toString())
                        + (s.nRanks() == 0 ? "" : " at nRanks " + s.nRanks())
                        + (s.nNodes() == 0 ? "" : ", nNodes " + s.nNodes()));
            }
            Set<String> measured = new java.util.TreeSet<>();
            for (GroupKey k : keys) {
                measured.add(k.collective() + " at nRanks " + k.nRanks() + ", nNodes " + k.nNodes());
            }
            warnings.add(e.getKey() + ": its " + e.getValue().size() + " selection lines (" + String.join("; ", logged)
                    + ") match no measured group (" + String.join("; ", measured)
                    + "); NCCL's picks from it were not used");
        }
    }

    private static double min(List<Double> xs) {
        return xs.stream().mapToDouble(Double::doubleValue).min().orElse(Double.NaN);
    }

    private static double max(List<Double> xs) {
        return xs.stream().mapToDouble(Double::doubleValue).max().orElse(Double.NaN);
    }

    static double median(List<Double> xs) {
        double[] a = xs.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        int n = a.length;
        return n % 2 == 1 ? a[n / 2] : a[n / 2 - 1] / 2 + a[n / 2] / 2; // halves first: no overflow near MAX_VALUE
    }

    /**
     * time / best - 1, capped to [0, {@link #MAX_REGRET}] (NaN when time is NaN).
     *
     * @param time a median time, microseconds
     * @param best the best median at the same size (positive)
     * @return the regret, finite unless time is NaN
     */
    static double regret(double time, double best) {
        if (Double.isNaN(time)) {
            return Double.NaN;
        }
        double r = time / best - 1;
        return r >= 0 ? Math.min(r, MAX_REGRET) : (Double.isNaN(r) ? MAX_REGRET : 0);
    }

    static double cv(List<Double> xs) {
        int n = xs.size();
        if (n < 2) {
            return Double.NaN;
        }
        // scaled by the largest value, so neither tiny nor huge times under- or overflow
        double max = xs.stream().mapToDouble(Double::doubleValue).max().orElse(0);
        if (!(max > 0) || !Double.isFinite(max)) {
            return 0;
        }
        double mean = 0;
        for (double x : xs) {
            mean += x / max / n;
        }
        double ss = 0;
        for (double x : xs) {
            double d = x / max - mean;
            ss += d * d;
        }
        return mean == 0 ? 0 : Math.sqrt(ss / (n - 1)) / mean;
    }

    private static double margin(double k, double cv1, double cv2) {
        if (Double.isNaN(cv1) && Double.isNaN(cv2)) {
            return Double.NaN;
        }
        double a = Double.isNaN(cv1) ? 0 : cv1;
        double b = Double.isNaN(cv2) ? 0 : cv2;
        return k * Math.sqrt(a * a + b * b);
    }

    private static double orZero(double v) {
        return Double.isNaN(v) ? 0 : v;
    }

    /** NCCL's pick at a size, from the selections: logged there, or inferred between two logged sizes. */
    private record Pick(RunConfig config, boolean inferred) {}

    private static Pick pickAt(GroupKey k, long size, List<RunSelection> sels, List<String> warnings) {
        TreeMap<Long, Set<RunConfig>> bySize = new TreeMap<>(Long::compareUnsigned);
        for (RunSelection s : sels) {
            if (matches(k, s)) {
                bySize.computeIfAbsent(s.nBytes(), x -> new HashSet<>()).add(s.config());
            }
        }
        Set<RunConfig> seen = bySize.get(size);
        if (seen != null) {
            if (seen.size() > 1) {
                warnings.add(k + ", " + ByteSize.format(size) + ": NCCL's logs name several picks " + seen
                        + "; pick left unknown");
                return null;
            }
            return new Pick(seen.iterator().next(), false);
        }
        // Each candidate's cost in NCCL's model is latency + bytes / bandwidth, so each wins on one
        // interval of sizes: the same pick at two logged sizes is the pick in between (up to NCCL's
        // Tree bandwidth correction table, src/graph/tuning.cc).
        var lo = bySize.lowerEntry(size);
        var hi = bySize.higherEntry(size);
        if (lo != null
                && hi != null
                && lo.getValue().size() == 1
                && lo.getValue().equals(hi.getValue())) {
            return new Pick(lo.getValue().iterator().next(), true);
        }
        return null;
    }

    /**
     * A measured size before its verdict.
     *
     * @param size the size, bytes
     * @param runs per configuration, the replicates' times (microseconds)
     * @param pick NCCL's pick there, from the logs, or null
     * @param inferred whether the pick was inferred between two logged sizes
     * @param ncclUs NCCL's time: the median of its unforced runs and its pick's forced runs (NaN: none)
     * @param ncclCv their coefficient of variation
     * @param nccl their stats, or null without any
     * @param best the fastest median there (NCCL's or a candidate's)
     * @param note what is special about NCCL's time there, or ""
     */
    private record Pre(
            long size,
            Map<RunConfig, List<Double>> runs,
            RunConfig pick,
            boolean inferred,
            double ncclUs,
            double ncclCv,
            Stats nccl,
            double best,
            String note) {}

    private static Group group(
            GroupKey key,
            TreeMap<Long, Map<RunConfig, List<Double>>> bySize,
            Map<Long, Map<RunConfig, List<Double>>> p95BySize,
            List<RunSelection> sels,
            Unoffered unoffered,
            Options o,
            List<String> warnings) {
        List<Pre> pres = new ArrayList<>();
        for (var e : bySize.entrySet()) {
            pres.add(pre(key, e.getKey(), e.getValue(), sels, warnings));
        }
        Verdicts v = new Verdicts(pres, p95BySize, unoffered, o);
        List<SizeResult> results = new ArrayList<>();
        for (int i = 0; i < pres.size(); i++) {
            results.add(v.at(i));
        }
        unoffered.warn(key, warnings);
        return buckets(key, results, o, warnings);
    }

    /**
     * The candidates NCCL never offers a group, from the cost tables of the {@code --nccl-log}
     * files (a pair none of the matching tables offers), and the sizes where one of them would
     * have been kept: the engine passes over a rule's candidate NCCL does not offer, so such a
     * candidate is left out of the rules, whatever its forced runs measured.
     */
    private static final class Unoffered {
        final Set<io.nccltuner.model.AlgoProto> pairs;
        final List<String> sources;
        /** per left-out candidate, the sizes where it would have been kept */
        final Map<RunConfig, List<Long>> leftOut = new LinkedHashMap<>();

        private Unoffered(Set<io.nccltuner.model.AlgoProto> pairs, List<String> sources) {
            this.pairs = pairs;
            this.sources = sources;
        }

        /** @return what the tables logged for the group's collective and shape do not offer (none: nothing) */
        static Unoffered of(GroupKey k, List<MeasurementSet.NotOffered> tables) {
            List<MeasurementSet.NotOffered> mine =
                    MeasurementSet.NotOffered.of(tables, k.collective(), k.nRanks(), k.nNodes());
            return new Unoffered(
                    MeasurementSet.NotOffered.common(mine),
                    mine.stream().map(MeasurementSet.NotOffered::source).toList());
        }

        /** @return whether NCCL's logged tables offer a configuration (an unknown one: yes) */
        boolean offered(RunConfig c) {
            return !c.isCandidate() || !pairs.contains(new io.nccltuner.model.AlgoProto(c.algorithm(), c.protocol()));
        }

        /** @return the size's note for the candidates left out there, e.g. {@code RING/LL128 left out: ...} */
        String note(List<RunConfig> out) {
            return String.join(", ", out.stream().map(RunConfig::label).toList())
                    + " left out: " + NEVER_OFFERED + " " + (out.size() == 1 ? "it" : "them")
                    + " (bandwidth 0.0 in the cost table at " + String.join(", ", sources) + ")";
        }

        /** Adds the group's warning naming each left-out candidate and the sizes where it measured a gain. */
        void warn(GroupKey key, List<String> warnings) {
            for (var e : leftOut.entrySet()) {
                List<Long> at = e.getValue();
                warnings.add(key + ": " + e.getKey().label() + " beat NCCL's pick by more than the threshold and "
                        + "the noise at " + (at.size() == 1 ? "1 size (" : at.size() + " sizes (")
                        + ByteSize.format(at.getFirst())
                        + (at.size() == 1 ? "" : " .. " + ByteSize.format(at.getLast()))
                        + ") in its forced runs, but NCCL never offers it at "
                        + io.nccltuner.model.JobShape.of(key.nRanks(), key.nNodes())
                        + " (bandwidth 0.0 in the cost table at " + String.join(", ", sources)
                        + "), so the plugin would pass over it: left out of the rules");
            }
        }
    }

    /** A size's runs with NCCL's pick and time there, and the best time. */
    private static Pre pre(
            GroupKey key,
            long size,
            Map<RunConfig, List<Double>> runs,
            List<RunSelection> sels,
            List<String> warnings) {
        Pick picked = pickAt(key, size, sels, warnings);
        RunConfig pick = picked == null ? null : picked.config();
        boolean inferred = picked != null && picked.inferred();
        List<Double> auto = runs.get(RunConfig.AUTO);
        // NCCL's time: its unforced runs, plus the forced runs of its pick when a log names it (the
        // same configuration, so more replicates of the same thing)
        List<Double> ncclRuns = new ArrayList<>();
        if (auto != null) {
            ncclRuns.addAll(auto);
        }
        String note = "";
        if (pick != null && runs.containsKey(pick)) {
            ncclRuns.addAll(runs.get(pick));
            note = auto == null
                    ? "NCCL's pick timed from its forced runs"
                    : "NCCL's pick: unforced and forced runs pooled";
        } else if (auto == null) {
            note = "no unforced run (NCCL's own pick) at this size";
        }
        double ncclUs = ncclRuns.isEmpty() ? Double.NaN : median(ncclRuns);
        double ncclCv = ncclRuns.isEmpty() ? Double.NaN : cv(ncclRuns);
        double best = Double.isNaN(ncclUs) ? Double.POSITIVE_INFINITY : ncclUs;
        // NCCL's pick pooled with its forced runs is one configuration, timed by ncclUs: its forced
        // runs alone are not another candidate to beat it (NCCL never "loses" to itself)
        RunConfig pooled = pick != null && auto != null && runs.containsKey(pick) ? pick : null;
        for (var r : runs.entrySet()) {
            if (r.getKey().isCandidate() && !r.getKey().equals(pooled)) {
                best = Math.min(best, median(r.getValue()));
            }
        }
        Stats ncclStats = ncclRuns.isEmpty()
                ? null
                : new Stats(
                        RunConfig.AUTO,
                        ncclRuns.size(),
                        ncclUs,
                        ncclCv,
                        regret(ncclUs, best),
                        Double.NaN,
                        0,
                        regret(ncclUs, best),
                        min(ncclRuns),
                        max(ncclRuns));
        return new Pre(size, runs, pick, inferred, ncclUs, ncclCv, ncclStats, best, note);
    }

    /** @return a series of n sizes none of which is measured yet (all NaN) */
    private static double[] unmeasured(int n) {
        double[] a = new double[n];
        java.util.Arrays.fill(a, Double.NaN);
        return a;
    }

    /**
     * The verdicts of one group's sizes: each candidate's stats at a size (with its neighbour jump
     * and worst regret over the window), which candidates beat NCCL's pick there by more than the
     * threshold and the noise margin, and their ranking.
     */
    private static final class Verdicts {
        final List<Pre> pres;
        final Unoffered unoffered;
        final Options o;
        final int n;
        /** per candidate, per size index: the median time (NaN where not measured) */
        final Map<RunConfig, double[]> series = new HashMap<>();

        final double[] ncclSeries;
        final double[] bests;
        /** per candidate, per size index: the median P95 (NaN where not measured) */
        final Map<RunConfig, double[]> p95Series = new HashMap<>();
        /** per size index: the smallest median P95 */
        final double[] p95Best;
        /** candidates by their mean ln(1 + regret) over the group's sizes, then by name */
        final Comparator<RunConfig> groupOrder;

        Verdicts(List<Pre> pres, Map<Long, Map<RunConfig, List<Double>>> p95BySize, Unoffered unoffered, Options o) {
            this.pres = pres;
            this.unoffered = unoffered;
            this.o = o;
            this.n = pres.size();
            ncclSeries = new double[n];
            bests = new double[n];
            Map<RunConfig, double[]> score = new HashMap<>(); // sum of ln(median/best), count
            for (int i = 0; i < n; i++) {
                Pre p = pres.get(i);
                ncclSeries[i] = p.ncclUs();
                bests[i] = p.best();
                for (var r : p.runs().entrySet()) {
                    if (r.getKey().isCandidate()) {
                        double med = median(r.getValue());
                        double[] s = score.computeIfAbsent(r.getKey(), x -> new double[2]);
                        s[0] += Math.log1p(regret(med, p.best()));
                        s[1]++;
                        series.computeIfAbsent(r.getKey(), x -> unmeasured(n))[i] = med;
                    }
                }
            }
            groupOrder = Comparator.<RunConfig>comparingDouble(c -> score.get(c)[0] / score.get(c)[1])
                    .thenComparing(RunConfig::label);
            p95Best = new double[n];
            java.util.Arrays.fill(p95Best, Double.POSITIVE_INFINITY);
            for (int i = 0; i < n; i++) {
                Map<RunConfig, List<Double>> at =
                        p95BySize.getOrDefault(pres.get(i).size(), Map.of());
                for (var r : at.entrySet()) {
                    double v = median(r.getValue());
                    if (r.getKey().isCandidate()) {
                        p95Series.computeIfAbsent(r.getKey(), x -> unmeasured(n))[i] = v;
                    }
                    p95Best[i] = Math.min(p95Best[i], v);
                }
            }
        }

        /** The verdict at size index i (its grid range not yet set). */
        SizeResult at(int i) {
            Pre p = pres.get(i);
            int w = o.window();
            double k = o.noiseSigmas();
            double ncclJump = w > 0 ? jump(ncclSeries, i, w) : 0;
            List<Stats> cands = candidates(i);
            double bestNoise;
            if (!cands.isEmpty()
                    && (Double.isNaN(p.ncclUs()) || cands.getFirst().medianUs() < p.ncclUs())) {
                bestNoise = w > 0 ? cands.getFirst().noise() : cands.getFirst().cv();
            } else {
                bestNoise = w > 0 ? Math.max(orZero(p.ncclCv()), ncclJump) : p.ncclCv();
            }
            double ncclNoise = w > 0 ? Math.max(orZero(p.ncclCv()), ncclJump) : p.ncclCv();
            double ncclRegret = regret(p.ncclUs(), p.best());
            List<Stats> kept = new ArrayList<>();
            List<RunConfig> leftOut = new ArrayList<>();
            if (!Double.isNaN(p.ncclUs())) {
                for (Stats c : cands) {
                    if (c.config().equals(p.pick())) {
                        continue;
                    }
                    double gain = p.ncclUs() / c.medianUs() - 1;
                    double m = w > 0 ? margin(k, ncclNoise, c.noise()) : margin(k, p.ncclCv(), c.cv());
                    if (gain > Math.max(o.threshold(), orZero(m))) {
                        if (unoffered.offered(c.config())) {
                            kept.add(c);
                        } else {
                            leftOut.add(c.config());
                            unoffered
                                    .leftOut
                                    .computeIfAbsent(c.config(), x -> new ArrayList<>())
                                    .add(p.size());
                        }
                    }
                }
            }
            List<Stats> ranking = w > 0 ? minimax(i, kept) : byTies(kept);
            if (ranking.size() > io.nccltuner.policy.PolicyLoader.MAX_CANDIDATES) {
                ranking = new ArrayList<>(ranking.subList(0, io.nccltuner.policy.PolicyLoader.MAX_CANDIDATES));
            }
            String note = p.note();
            if (!leftOut.isEmpty()) {
                note = (note.isEmpty() ? "" : note + "; ") + unoffered.note(leftOut);
            }
            if (ranking.isEmpty()
                    && leftOut.isEmpty()
                    && !Double.isNaN(p.ncclUs())
                    && ncclRegret > o.threshold()
                    && !cands.isEmpty()) {
                note = (note.isEmpty() ? "" : note + "; ") + KEPT_FOR_NOISE;
            }
            return new SizeResult(
                    p.size(),
                    0,
                    0,
                    p.nccl(),
                    p.pick(),
                    p.inferred(),
                    p.ncclUs(),
                    ncclRegret,
                    shownMargin(p, ranking, cands, ncclNoise, bestNoise),
                    cands,
                    List.copyOf(ranking),
                    note);
        }

        /**
         * The margin the report's noise column shows: the one the verdict compared a gain with, of
         * the policy's pick where a rule applies, else of the fastest candidate that could have been
         * kept (not NCCL's own pick, offered); without one, NCCL's noise against the best's.
         */
        double shownMargin(Pre p, List<Stats> ranking, List<Stats> cands, double ncclNoise, double bestNoise) {
            double k = o.noiseSigmas();
            Stats c = ranking.isEmpty()
                    ? cands.stream()
                            .filter(x -> !x.config().equals(p.pick()) && unoffered.offered(x.config()))
                            .findFirst()
                            .orElse(null)
                    : ranking.getFirst();
            if (c == null) {
                return margin(k, ncclNoise, bestNoise);
            }
            return o.window() > 0 ? margin(k, ncclNoise, c.noise()) : margin(k, p.ncclCv(), c.cv());
        }

        /** Every candidate measured at size index i, fastest first (NCCL's pick pooled with its unforced runs is not one). */
        List<Stats> candidates(int i) {
            Pre p = pres.get(i);
            int w = o.window();
            List<Stats> cands = new ArrayList<>();
            // NCCL's pick pooled with its unforced runs is NCCL's time, not a candidate besides it
            RunConfig pooled = p.pick() != null && p.runs().containsKey(RunConfig.AUTO) ? p.pick() : null;
            for (var r : p.runs().entrySet()) {
                if (r.getKey().isCandidate() && !r.getKey().equals(pooled)) {
                    double med = median(r.getValue());
                    double[] ser = series.get(r.getKey());
                    double[] p95 = p95Series.get(r.getKey());
                    double wr = regret(med, p.best());
                    if (w > 0) {
                        for (int j = Math.max(0, i - w); j <= Math.min(n - 1, i + w); j++) {
                            if (!Double.isNaN(ser[j])) {
                                wr = Math.max(wr, regret(ser[j], bests[j]));
                            }
                        }
                    }
                    cands.add(new Stats(
                            r.getKey(),
                            r.getValue().size(),
                            med,
                            cv(r.getValue()),
                            regret(med, p.best()),
                            p95 == null ? Double.NaN : p95[i],
                            w > 0 ? jump(ser, i, w) : 0,
                            wr,
                            min(r.getValue()),
                            max(r.getValue())));
                }
            }
            cands.sort(Comparator.comparingDouble(Stats::medianUs)
                    .thenComparing(st -> st.config().label()));
            return cands;
        }

        /**
         * With a window: the candidate whose worst regret over the window is least first; then the
         * least P95 regret at the size itself; then the name (a stable order).
         */
        List<Stats> minimax(int i, List<Stats> kept) {
            double p95b = p95Best[i];
            kept.sort(Comparator.comparingDouble(Stats::windowRegret)
                    .thenComparingDouble(st -> Double.isNaN(st.p95Us()) ? Double.POSITIVE_INFINITY : st.p95Us() / p95b)
                    .thenComparing(st -> st.config().label()));
            return new ArrayList<>(kept);
        }

        /**
         * Without a window: by median, except that candidates within the tie tolerance of a better one
         * (max(tie, noise margin)) are ordered by their regret over all sizes of the group.
         */
        List<Stats> byTies(List<Stats> kept) {
            List<Stats> ranking = new ArrayList<>();
            int a = 0;
            while (a < kept.size()) {
                Stats lead = kept.get(a);
                List<Stats> cluster = new ArrayList<>();
                cluster.add(lead);
                int b = a + 1;
                while (b < kept.size()) {
                    Stats c = kept.get(b);
                    double tol = Math.max(o.tie(), orZero(margin(o.noiseSigmas(), lead.cv(), c.cv())));
                    if (c.medianUs() > lead.medianUs() * (1 + tol)) {
                        break;
                    }
                    cluster.add(c);
                    b++;
                }
                cluster.sort(Comparator.comparing(Stats::config, groupOrder));
                ranking.addAll(cluster);
                a = b;
            }
            return ranking;
        }
    }

    /**
     * The neighbour jump of a time series at index i: the largest ln(t[a] / t[b]) over measured
     * indices a < b within the window around i, with a or b = i (how much the time falls while the
     * size grows; 0 when it never falls). Times of one configuration grow with message size, so a
     * fall is noise of that size.
     */
    static double jump(double[] t, int i, int w) {
        if (Double.isNaN(t[i])) {
            return 0;
        }
        double j = 0;
        for (int a = Math.max(0, i - w); a < i; a++) {
            if (!Double.isNaN(t[a])) {
                j = Math.max(j, Math.log(t[a] / t[i]));
            }
        }
        for (int b = i + 1; b <= Math.min(t.length - 1, i + w); b++) {
            if (!Double.isNaN(t[b])) {
                j = Math.max(j, Math.log(t[i] / t[b]));
            }
        }
        return Double.isFinite(j) ? Math.min(j, Math.log(MAX_REGRET)) : Math.log(MAX_REGRET);
    }

    private static List<RunConfig> identity(SizeResult s, Merge merge) {
        if (merge == Merge.PICK && !s.ranking().isEmpty()) {
            return List.of(s.ranking().getFirst().config());
        }
        return s.ranking().stream().map(Stats::config).toList();
    }

    /** Assigns grid buckets to measured sizes and merges buckets with the same ranking into rules. */
    private static Group buckets(GroupKey key, List<SizeResult> sizes, Options o, List<String> warnings) {
        Merge merge = o.merge();
        int first = SizeGrid.bucket(sizes.getFirst().nBytes());
        int last = SizeGrid.bucket(sizes.getLast().nBytes());
        int n = last - first + 1;
        // governing sizes per bucket
        List<List<Integer>> gov = new ArrayList<>();
        int idx = 0;
        for (int b = first; b <= last; b++) {
            List<Integer> in = new ArrayList<>();
            while (idx < sizes.size() && SizeGrid.bucket(sizes.get(idx).nBytes()) == b) {
                in.add(idx++);
            }
            if (in.isEmpty()) {
                in = List.of(idx - 1); // the nearest measured size below
            }
            gov.add(in);
        }
        List<List<RunConfig>> verdict = new ArrayList<>();
        for (int b = 0; b < n; b++) {
            List<Integer> g = gov.get(b);
            List<RunConfig> v = identity(sizes.get(g.getFirst()), merge);
            for (int x : g) {
                if (!identity(sizes.get(x), merge).equals(v)) {
                    warnings.add(key + ": sizes "
                            + g.stream()
                                    .map(y -> ByteSize.format(sizes.get(y).nBytes()))
                                    .toList()
                            + " share one size-grid bucket but rank candidates differently; no rule there");
                    v = List.of();
                    break;
                }
            }
            verdict.add(v);
        }
        // ranges of each measured size
        long[] from = new long[sizes.size()];
        long[] to = new long[sizes.size()];
        java.util.Arrays.fill(from, Long.MIN_VALUE);
        for (int b = 0; b < n; b++) {
            for (int x : gov.get(b)) {
                if (from[x] == Long.MIN_VALUE) {
                    from[x] = SizeGrid.lowerBound(first + b);
                }
                to[x] = SizeGrid.upperBound(first + b);
            }
        }
        List<SizeResult> placed = new ArrayList<>();
        for (int x = 0; x < sizes.size(); x++) {
            placed.add(sizes.get(x).placed(from[x], to[x]));
        }
        List<Rule> rules = new ArrayList<>();
        List<RangeEstimate> ranges = new ArrayList<>();
        int b = 0;
        while (b < n) {
            List<RunConfig> v = verdict.get(b);
            if (v.isEmpty()) {
                int e = b;
                Set<Integer> members = new java.util.TreeSet<>(gov.get(b));
                while (e + 1 < n && verdict.get(e + 1).isEmpty()) {
                    e++;
                    members.addAll(gov.get(e));
                }
                long lo = SizeGrid.lowerBound(first + b);
                long hi = SizeGrid.upperBound(first + e);
                ranges.add(estimate(lo, hi, null, members, placed, o));
                b = e + 1;
                continue;
            }
            int e = b;
            Set<Integer> members = new java.util.TreeSet<>(gov.get(b));
            while (e + 1 < n && verdict.get(e + 1).equals(v)) {
                e++;
                members.addAll(gov.get(e));
            }
            long lo = SizeGrid.lowerBound(first + b);
            long hi = SizeGrid.upperBound(first + e);
            rules.add(rule(key, lo, hi, v, members.stream().map(placed::get).toList()));
            ranges.add(estimate(lo, hi, v.getFirst(), members, placed, o));
            b = e + 1;
        }
        return new Group(key, placed, rules, List.copyOf(ranges));
    }

    /**
     * The regret of what runs at a measured size: the pick's (null: NCCL's own), NaN when not
     * measured; NCCL's own is NaN too where no forced candidate was measured there (nothing was
     * compared with it, so its 0% against itself says nothing).
     */
    private static double regretOf(SizeResult s, RunConfig pick) {
        if (pick == null) {
            return s.candidates().isEmpty() ? Double.NaN : s.ncclRegret();
        }
        for (Stats st : s.candidates()) {
            if (st.config().equals(pick)) {
                return st.regret();
            }
        }
        return Double.NaN;
    }

    private static double cvOf(SizeResult s, RunConfig pick) {
        if (pick == null) {
            return s.nccl() == null ? Double.NaN : s.nccl().cv();
        }
        for (Stats st : s.candidates()) {
            if (st.config().equals(pick)) {
                return st.cv();
            }
        }
        return Double.NaN;
    }

    /**
     * Expected regret of a stretch: the mean of the regret of what runs there over its measured
     * sizes; uncertainty: sqrt(sd^2 + cv^2) with sd the sample standard deviation of that regret over
     * the sizes and cv the largest replicate CV among the sizes.
     */
    private static RangeEstimate estimate(
            long lo, long hi, RunConfig pick, Set<Integer> members, List<SizeResult> sizes, Options o) {
        double sum = 0;
        int cnt = 0;
        double cvMax = 0;
        boolean keptForNoise = false;
        for (int x : members) {
            double r = regretOf(sizes.get(x), pick);
            if (!Double.isNaN(r)) {
                sum += r;
                cnt++;
            }
            cvMax = Math.max(cvMax, orZero(cvOf(sizes.get(x), pick)));
            if (pick == null
                    && sizes.get(x).ncclRegret() > o.threshold()
                    && !sizes.get(x).candidates().isEmpty()) {
                keptForNoise = true;
            }
        }
        // over the range's own sizes: a window neighbour outside it is a size where this pick does
        // not run (its regret there, often why the range ends, is no spread of the range's)
        List<Double> spread = new ArrayList<>();
        for (int j : members) {
            double r = regretOf(sizes.get(j), pick);
            if (!Double.isNaN(r)) {
                spread.add(r);
            }
        }
        double sd = 0;
        if (spread.size() > 1) {
            double mean =
                    spread.stream().mapToDouble(Double::doubleValue).average().orElse(0);
            double ss = 0;
            for (double r : spread) {
                ss += (r - mean) * (r - mean);
            }
            sd = Math.sqrt(ss / (spread.size() - 1));
        }
        return new RangeEstimate(
                lo,
                hi,
                pick,
                members.size(),
                cnt == 0 ? Double.NaN : sum / cnt,
                Math.sqrt(sd * sd + cvMax * cvMax),
                keptForNoise);
    }

    /**
     * Cuts rules and the ranges sizes govern where a size has only refused rows (a failed
     * {@code #wrong} / {@code error} check): the bucket of such a size and the buckets after it up to
     * the next measured size get no rule, so a 512 KiB measurement never stretches over a refused
     * 1 MiB row.
     */
    static Group withoutHoles(Group g, java.util.NavigableSet<Long> holes, List<String> warnings) {
        if (holes.isEmpty()) {
            return g;
        }
        List<SizeResult> placed = new ArrayList<>();
        for (SizeResult s : g.sizes()) {
            long to = s.toBytes();
            Long h = holes.higher(s.nBytes());
            if (h != null && (to == -1L || Long.compareUnsigned(h, to) < 0)) {
                long cut = SizeGrid.lowerBound(SizeGrid.bucket(h));
                to = Long.compareUnsigned(cut, s.fromBytes()) > 0 ? cut : s.toBytes();
            }
            placed.add(s.placed(s.fromBytes(), to));
        }
        // forbidden [bucket of the hole, bucket of the next measured size); -1 is "no bound", which is
        // also the largest value in unsigned order
        List<long[]> forbidden = new ArrayList<>();
        for (long h : holes) {
            long from = SizeGrid.lowerBound(SizeGrid.bucket(h));
            long to = -1L;
            for (SizeResult s : g.sizes()) {
                if (Long.compareUnsigned(s.nBytes(), h) > 0) {
                    to = SizeGrid.lowerBound(SizeGrid.bucket(s.nBytes()));
                    break;
                }
            }
            if (Long.compareUnsigned(from, to) < 0) {
                forbidden.add(new long[] {from, to});
            }
        }
        List<Rule> rules = new ArrayList<>();
        for (Rule r : g.rules()) {
            List<long[]> pieces = new ArrayList<>();
            pieces.add(new long[] {r.fromBytes(), r.toBytes()});
            for (long[] f : forbidden) {
                List<long[]> next = new ArrayList<>();
                for (long[] p : pieces) {
                    if (Long.compareUnsigned(f[1], p[0]) <= 0 || Long.compareUnsigned(f[0], p[1]) >= 0) {
                        next.add(p);
                        continue;
                    }
                    warnings.add(g.key() + ": sizes in [" + ByteSize.format(f[0]) + ", "
                            + (f[1] == -1L ? "no bound" : ByteSize.format(f[1]))
                            + ") have only refused rows (failed checks): "
                            + "no rule there");
                    if (Long.compareUnsigned(p[0], f[0]) < 0) {
                        next.add(new long[] {p[0], f[0]});
                    }
                    if (Long.compareUnsigned(f[1], p[1]) < 0) {
                        next.add(new long[] {f[1], p[1]});
                    }
                }
                pieces = next;
            }
            for (long[] p : pieces) {
                rules.add(r.withRange(p[0], p[1]));
            }
        }
        return new Group(g.key(), placed, rules, g.ranges());
    }

    private static Rule rule(GroupKey key, long lo, long hi, List<RunConfig> verdict, List<SizeResult> members) {
        // candidates kept at every member size, in the verdict's order (merge by ranking: all of them;
        // merge by pick: the pick first, then the common fallbacks by their largest regret)
        List<RunConfig> ranking = new ArrayList<>(verdict);
        if (verdict.size() == 1) {
            List<RunConfig> common = new ArrayList<>(
                    members.getFirst().ranking().stream().map(Stats::config).toList());
            for (SizeResult s : members) {
                common.retainAll(s.ranking().stream().map(Stats::config).toList());
            }
            common.remove(verdict.getFirst());
            common.sort(Comparator.comparingDouble((RunConfig c) -> worstRegret(c, members))
                    .thenComparing(RunConfig::label));
            ranking.addAll(common);
        }
        double ncclRegret = Double.POSITIVE_INFINITY;
        RunConfig pick = members.getFirst().ncclPick();
        for (SizeResult s : members) {
            ncclRegret = Math.min(ncclRegret, s.ncclRegret());
            if (!Objects.equals(pick, s.ncclPick())) {
                pick = null;
            }
        }
        List<Candidate> cands = new ArrayList<>();
        for (RunConfig c : ranking) {
            cands.add(new Candidate(c.algorithm(), c.protocol(), c.channels(), worstRegret(c, members)));
        }
        Candidate ncclPick = pick == null ? null : new Candidate(pick.algorithm(), pick.protocol(), 0, Double.NaN);
        return new Rule(key.collective(), lo, hi, key.numPipeOps(), ncclPick, ncclRegret, cands);
    }

    private static double worstRegret(RunConfig c, List<SizeResult> members) {
        double worst = 0;
        for (SizeResult s : members) {
            for (Stats st : s.ranking()) {
                if (st.config().equals(c)) {
                    worst = Math.max(worst, st.regret());
                }
            }
        }
        return worst;
    }

    static String pct(double fraction) {
        return String.format(java.util.Locale.ROOT, "%.2f%%", fraction * 100);
    }
}
