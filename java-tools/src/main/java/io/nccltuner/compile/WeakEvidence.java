package io.nccltuner.compile;

import io.nccltuner.compile.Compiler.Compilation;
import io.nccltuner.compile.Compiler.Group;
import io.nccltuner.compile.Compiler.SizeResult;
import io.nccltuner.compile.Compiler.Stats;
import io.nccltuner.model.JobShape;
import io.nccltuner.policy.ByteSize;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The "collect next" items of the compile report about verdicts that rest on little: per group
 * with replicates for some configurations, the configurations measured once at every size (and
 * NCCL's own pick where it was), and the sizes whose noise margin exceeded NCCL's regret, so that
 * the noise, not the measurement, kept NCCL's pick there. A group with one replicate of every
 * configuration is the summary's own line ("every group has 1 run per configuration").
 */
final class WeakEvidence {
    private WeakEvidence() {}

    /**
     * @param c the compilation
     * @return the items, each one line without the leading {@code - }, e.g. {@code replicates:
     *     AllReduce at nRanks=2 nNodes=2: RING/LL128, ... were measured once at each size; ...}
     */
    static List<String> lines(Compilation c) {
        List<String> out = new ArrayList<>();
        for (Group g : c.groups()) {
            String replicates = replicates(g);
            if (replicates != null) {
                out.add(replicates);
            }
        }
        for (Group g : c.groups()) {
            String noise = noise(g);
            if (noise != null) {
                out.add(noise);
            }
        }
        return out;
    }

    /** @return {@code AllReduce at nRanks=2 nNodes=2} */
    private static String label(Group g) {
        return g.key().collective() + " at "
                + JobShape.of(g.key().nRanks(), g.key().nNodes())
                + (g.key().hardware() == null ? "" : " (" + g.key().hardware() + ")");
    }

    /**
     * The configurations of a group with replicates elsewhere that were measured once at every
     * size, or null when there are none (or when no configuration has replicates: the summary's
     * own line says that).
     */
    private static String replicates(Group g) {
        Map<RunConfig, int[]> byConfig = new LinkedHashMap<>(); // {sizes measured, sizes with one replicate}
        int maxRep = 0;
        int ncclSizes = 0;
        int ncclSingle = 0;
        int ruled = 0;
        int ruledSingle = 0;
        for (SizeResult s : g.sizes()) {
            for (Stats st : s.candidates()) {
                int[] n = byConfig.computeIfAbsent(st.config(), x -> new int[2]);
                n[0]++;
                n[1] += st.replicates() == 1 ? 1 : 0;
                maxRep = Math.max(maxRep, st.replicates());
            }
            if (s.nccl() != null) {
                ncclSizes++;
                ncclSingle += s.nccl().replicates() == 1 ? 1 : 0;
                maxRep = Math.max(maxRep, s.nccl().replicates());
            }
            if (s.ruled()) {
                ruled++;
                ruledSingle += s.ranking().getFirst().replicates() == 1 ? 1 : 0;
            }
        }
        List<String> once = new ArrayList<>();
        byConfig.forEach((cfg, n) -> {
            if (n[1] == n[0]) {
                once.add(cfg.label());
            }
        });
        once.sort(null);
        if (maxRep < 2 || (once.isEmpty() && ncclSingle == 0)) {
            return null;
        }
        List<String> parts = new ArrayList<>();
        if (!once.isEmpty()) {
            parts.add(join(once) + (once.size() == 1 ? " was" : " were") + " measured once at each size");
        }
        if (ncclSingle > 0) {
            parts.add("NCCL's own pick once at " + ncclSingle + " of " + TextReport.count(ncclSizes, "size"));
        }
        String rules = ruledSingle == 0
                ? ""
                : "; the policy's pick at "
                        + (ruledSingle == ruled
                                ? (ruled == 1 ? "the 1 size" : "all " + ruled + " sizes")
                                : ruledSingle + " of " + TextReport.count(ruled, "size"))
                        + " with a rule rests on one reading";
        return "replicates: " + label(g) + ": " + String.join(", ", parts) + rules
                + ": repeat each run, 3+ times (`nccl-tuner sweep --replicates 3`, or more files of the same runs)";
    }

    /**
     * The sizes of a group where NCCL's pick was kept although a candidate measured faster by more
     * than the threshold, because the noise margin was larger, or null when there are none.
     */
    private static String noise(Group g) {
        List<SizeResult> at = new ArrayList<>();
        Set<String> faster = new LinkedHashSet<>();
        for (SizeResult s : g.sizes()) {
            if (!s.ruled() && s.note().contains(Compiler.KEPT_FOR_NOISE)) {
                at.add(s);
                if (!s.candidates().isEmpty()) {
                    faster.add(s.candidates().getFirst().config().label());
                }
            }
        }
        if (at.isEmpty()) {
            return null;
        }
        double[] margin = span(at, true);
        double[] regret = span(at, false);
        String sizes = at.size() == 1
                ? "1 size (" + ByteSize.format(at.getFirst().nBytes()) + ")"
                : at.size() + " sizes (" + ByteSize.format(at.getFirst().nBytes()) + " .. "
                        + ByteSize.format(at.getLast().nBytes()) + ")";
        return "noise: " + label(g) + ": at " + sizes + " the noise margin (" + range(margin)
                + ") exceeds NCCL's regret (" + range(regret) + "), so the noise, not the measurement, kept NCCL's "
                + "pick: replicates of NCCL's pick and of " + join(new ArrayList<>(faster))
                + " there decide whether the gain is real";
    }

    /** @return {min, max} of the sizes' noise margins (margin) or NCCL's regrets */
    private static double[] span(List<SizeResult> at, boolean margin) {
        double lo = Double.POSITIVE_INFINITY;
        double hi = Double.NEGATIVE_INFINITY;
        for (SizeResult s : at) {
            double v = margin ? s.noiseMargin() : s.ncclRegret();
            lo = Math.min(lo, v);
            hi = Math.max(hi, v);
        }
        return new double[] {lo, hi};
    }

    private static String range(double[] r) {
        return r[0] == r[1] ? TextReport.pct(r[0]) : TextReport.pct(r[0]) + " .. " + TextReport.pct(r[1]);
    }

    /** @return {@code a}, {@code a and b}, {@code a, b and c} */
    private static String join(List<String> xs) {
        if (xs.size() == 1) {
            return xs.getFirst();
        }
        return String.join(", ", xs.subList(0, xs.size() - 1)) + " and " + xs.getLast();
    }
}
