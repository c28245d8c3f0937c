package io.nccltuner.sweep;

import io.nccltuner.policy.ForcePolicy.Forced;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.function.BiPredicate;

/**
 * Which runs a sweep makes, in which order: every (collective, candidate) cell once per
 * replicate, NCCL's own pick being one candidate among the others.
 *
 * <p>Order is randomized and balanced: replicate r's block holds each cell exactly once, in a
 * permutation drawn from {@code new Random(seed)} (one draw per block, blocks in replicate
 * order), so slow drift of the machine spreads over every candidate alike and the same seed
 * always gives the same order.
 */
public final class SweepPlan {
    private SweepPlan() {}

    /**
     * One run: a fresh process of one nccl-tests binary with one candidate forced.
     *
     * @param id unique, file-name safe: {@code all_reduce_RING-LL128-16_r2}
     * @param program the nccl-tests program without {@code _perf}: all_reduce, all_gather, ...
     * @param candidate the forced candidate, or null for NCCL's own pick
     * @param replicate 1..R
     * @param order position in the sweep, 0-based
     */
    public record Run(String id, String program, Forced candidate, int replicate, int order) {
        /** @return "NCCL" or the candidate's label, e.g. "RING/LL128/16" */
        public String label() {
            return candidate == null ? "NCCL" : candidate.label();
        }
    }

    /**
     * Builds the plan.
     *
     * @param programs nccl-tests programs without {@code _perf}, in the user's order
     * @param candidates forced candidates (NCCL's own pick is added first)
     * @param replicates R >= 1
     * @param seed the order's seed
     * @return the runs in execution order
     */
    public static List<Run> plan(List<String> programs, List<Forced> candidates, int replicates, long seed) {
        return plan(programs, candidates, replicates, seed, (p, f) -> true);
    }

    /**
     * Builds the plan without the cells a filter drops (a candidate NCCL never offers for a
     * collective): each replicate block holds every kept cell once.
     *
     * @param programs nccl-tests programs without {@code _perf}, in the user's order
     * @param candidates forced candidates (NCCL's own pick is added first and always kept)
     * @param replicates R >= 1
     * @param seed the order's seed
     * @param keep whether a (program, forced candidate) cell is run
     * @return the runs in execution order
     */
    public static List<Run> plan(
            List<String> programs,
            List<Forced> candidates,
            int replicates,
            long seed,
            BiPredicate<String, Forced> keep) {
        List<Forced> cands = new ArrayList<>();
        cands.add(null);
        for (Forced f : candidates) {
            if (!cands.contains(f)) {
                cands.add(f);
            }
        }
        Random rnd = new Random(seed);
        List<Run> runs = new ArrayList<>();
        for (int r = 1; r <= replicates; r++) {
            List<Run> block = new ArrayList<>();
            for (String p : programs) {
                for (Forced f : cands) {
                    if (f != null && !keep.test(p, f)) {
                        continue;
                    }
                    String label = f == null ? "NCCL" : f.label().replace('/', '-');
                    block.add(new Run(p + "_" + label + "_r" + r, p, f, r, 0));
                }
            }
            Collections.shuffle(block, rnd);
            for (Run b : block) {
                runs.add(new Run(b.id(), b.program(), b.candidate(), r, runs.size()));
            }
        }
        return runs;
    }
}
