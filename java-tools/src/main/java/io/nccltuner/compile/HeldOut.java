package io.nccltuner.compile;

import io.nccltuner.policy.Collective;
import io.nccltuner.policy.Policy;
import io.nccltuner.policy.Policy.Candidate;
import io.nccltuner.policy.Policy.Profile;
import io.nccltuner.policy.Policy.Rule;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Held-out scoring: a policy compiled from some replicates is priced on measurements it was not
 * compiled from.
 *
 * <p>For every collective, communicator shape and size of the scoring measurements: best = the
 * smallest median over every measured configuration there (NCCL's unforced runs included); the
 * policy's time = the median of the first candidate of the rule that governs the size (profile
 * matched on nRanks/nNodes as the plugin does, numPipeOps 1) that was measured at that size, else
 * (no rule, or none of its candidates measured) NCCL's time = the median of the unforced runs;
 * regret = time / best - 1. Sizes without unforced runs are skipped (nothing to compare against).
 */
public final class HeldOut {
    private HeldOut() {}

    /**
     * The score at one size.
     *
     * @param collective the collective
     * @param nRanks ranks
     * @param nNodes nodes
     * @param nBytes the size
     * @param ran what the policy ran there ({@link RunConfig#AUTO}: NCCL's own pick)
     * @param policyUs its median time, microseconds
     * @param ncclUs NCCL's unforced median, microseconds
     * @param bestUs the best median measured there, microseconds
     */
    public record SizeScore(
            Collective collective,
            int nRanks,
            int nNodes,
            long nBytes,
            RunConfig ran,
            double policyUs,
            double ncclUs,
            double bestUs) {
        /** @return policyUs / bestUs - 1 */
        public double policyRegret() {
            return policyUs / bestUs - 1;
        }

        /** @return ncclUs / bestUs - 1 */
        public double ncclRegret() {
            return ncclUs / bestUs - 1;
        }
    }

    /**
     * The scores over all sizes.
     *
     * @param sizes per size, by collective, shape and size
     */
    public record Score(List<SizeScore> sizes) {
        /** @return mean policy regret over the sizes (NaN with none) */
        public double meanPolicyRegret() {
            return sizes.stream().mapToDouble(SizeScore::policyRegret).average().orElse(Double.NaN);
        }

        /** @return mean regret of NCCL's own pick over the sizes (NaN with none) */
        public double meanNcclRegret() {
            return sizes.stream().mapToDouble(SizeScore::ncclRegret).average().orElse(Double.NaN);
        }

        /** @return the size where the policy loses most, or null with none */
        public SizeScore worst() {
            SizeScore w = null;
            for (SizeScore s : sizes) {
                if (w == null || s.policyRegret() > w.policyRegret()) {
                    w = s;
                }
            }
            return w;
        }
    }

    /**
     * Prices a policy on measurements.
     *
     * @param policy the policy (as compiled or loaded)
     * @param scoring measurements the policy was not compiled from
     * @return the per-size scores
     */
    public static Score score(Policy policy, MeasurementSet scoring) {
        record Key(Collective c, int r, int n, long size) {}
        Map<Key, Map<RunConfig, List<Double>>> runs = new LinkedHashMap<>();
        for (Measurement m : scoring.measurements()) {
            runs.computeIfAbsent(new Key(m.collective(), m.nRanks(), m.nNodes(), m.nBytes()), x -> new HashMap<>())
                    .computeIfAbsent(m.config(), x -> new ArrayList<>())
                    .add(m.timeUs());
        }
        List<SizeScore> list = new ArrayList<>();
        for (var e : runs.entrySet()) {
            Key k = e.getKey();
            Map<RunConfig, Double> med = new HashMap<>();
            e.getValue().forEach((c, ts) -> med.put(c, Compiler.median(ts)));
            Double nccl = med.get(RunConfig.AUTO);
            if (nccl == null) {
                continue;
            }
            double best =
                    med.values().stream().mapToDouble(Double::doubleValue).min().orElseThrow();
            RunConfig ran = RunConfig.AUTO;
            double t = nccl;
            Rule rule = governing(policy, k.c(), k.r(), k.n(), k.size());
            if (rule != null) {
                for (Candidate c : rule.candidates()) {
                    Double ct = med.get(new RunConfig(c.algorithm(), c.protocol(), c.channels()));
                    if (ct != null) {
                        ran = new RunConfig(c.algorithm(), c.protocol(), c.channels());
                        t = ct;
                        break;
                    }
                }
            }
            list.add(new SizeScore(k.c(), k.r(), k.n(), k.size(), ran, t, nccl, best));
        }
        list.sort(java.util.Comparator.comparing(SizeScore::collective)
                .thenComparingInt(SizeScore::nRanks)
                .thenComparingInt(SizeScore::nNodes)
                .thenComparing(SizeScore::nBytes, Long::compareUnsigned));
        return new Score(List.copyOf(list));
    }

    /** The rule the plugin would apply to a single call (numPipeOps 1), or null. */
    static Rule governing(Policy policy, Collective c, int nRanks, int nNodes, long nBytes) {
        for (Profile p : policy.profiles()) {
            if (p.nRanks().contains(nRanks) && p.nNodes().contains(nNodes)) {
                for (Rule r : p.rules()) {
                    if (r.collective() == c && r.numPipeOps().contains(1) && r.containsBytes(nBytes)) {
                        return r;
                    }
                }
                return null; // the first matching profile is the one compiled
            }
        }
        return null;
    }
}
