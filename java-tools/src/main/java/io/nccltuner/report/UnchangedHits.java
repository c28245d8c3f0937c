package io.nccltuner.report;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The rule hits of decision logs that changed nothing in NCCL's choice, per reason, as the
 * engine's decision codes sort them ({@code io.nccltuner.engine.Decision}: ARM_NOT_OFFERED,
 * ARM_NCCL) and its logs record them. A communicator's comm line counts every rule hit
 * ({@code ruleHits}); its aggregate lines count the hits where NCCL offered one of the rule's
 * candidates, by NCCL's pick and the policy's pick; so per communicator:
 * <ul>
 *   <li>not offered = ruleHits - the aggregates' counts - unaggregated: NCCL offers none of the
 *       rule's candidates (each one's cost-table entry is -1, or outside the table), so NCCL's own
 *       pick stands (the engine logs no pick for them);
 *   <li>already NCCL's pick = the aggregates whose policy's pick is NCCL's own pick and sets no
 *       channel count (shadow and enforce mode; in enforce mode they count as applied all the
 *       same, the write leaves NCCL's choice as it was);
 *   <li>NCCL's arm (canary mode) = the aggregates' counts - applied: the offered hits the canary
 *       left to NCCL (a hit on the policy's arm whose pick is NCCL's own counts as applied there).
 * </ul>
 * Hits not broken down (the aggregate table was full: {@code unaggregated}) are in none of these;
 * a communicator whose aggregate lines are missing (fewer offered hits than applied ones: a
 * hand-cut log) counts in none.
 *
 * @param notOffered rule hits where NCCL offered none of the rule's candidates
 * @param alreadyPick rule hits whose policy's pick is NCCL's own (channels left to NCCL)
 * @param ncclArm canary rule hits on NCCL's arm
 * @param ruleHits all rule hits of the logs
 * @param shadowOnly whether every communicator ran in shadow mode (nothing was written: "would")
 */
public record UnchangedHits(long notOffered, long alreadyPick, long ncclArm, long ruleHits, boolean shadowOnly) {
    /** What the reason "candidate not offered" says when nothing more is known than the logs. */
    public static final String NOT_OFFERED_WHY = "NCCL's cost table has -1 for each of the rule's candidates";

    /**
     * Counts the reasons over decision logs.
     *
     * @param logs the logs, one per process
     * @return the counts (all 0 for logs without rule hits)
     */
    public static UnchangedHits of(List<DecisionLogFile> logs) {
        long notOffered = 0;
        long already = 0;
        long arm = 0;
        long hits = 0;
        boolean shadow = true;
        for (DecisionLogFile f : logs) {
            Map<Long, long[]> byComm = new HashMap<>(); // comm -> {offered hits, already NCCL's pick}
            for (DecisionLogFile.Aggregate a : f.aggregates()) {
                long[] s = byComm.computeIfAbsent(a.comm(), k -> new long[2]);
                s[0] += a.count();
                if (a.channels() == 0
                        && a.policyPick() != null
                        && a.policyPick().equals(a.ncclPick())) {
                    s[1] += a.count();
                }
            }
            for (DecisionLogFile.Comm c : f.comms()) {
                long[] s = byComm.getOrDefault(c.comm(), new long[2]);
                if (c.applied() > s[0] + c.unaggregated()) {
                    continue; // fewer offered hits than applied ones: its aggregate lines are missing, say nothing
                }
                hits += c.ruleHits();
                notOffered += Math.max(0, c.ruleHits() - s[0] - c.unaggregated());
                shadow &= "shadow".equals(c.mode());
                if ("canary".equals(c.mode())) {
                    arm += Math.max(0, s[0] - c.applied());
                } else {
                    already += s[1];
                }
            }
        }
        return new UnchangedHits(notOffered, already, arm, hits, shadow);
    }

    /** @return the rule hits that changed nothing, all reasons */
    public long total() {
        return notOffered + alreadyPick + ncclArm;
    }

    /**
     * The line a report (and try) prints for these hits, or null when there are none.
     *
     * @param notOfferedWhy what "candidate not offered" names: {@link #NOT_OFFERED_WHY}, or what try
     *     found replaying the traces ({@code RING/LL128 is -1 in NCCL's table at AllReduce 128 B ..
     *     512 B})
     * @return {@code 12 rule hits changed nothing: candidate not offered (WHY) 8, already NCCL's pick
     *     4}; "would change nothing" when every communicator ran in shadow mode; {@code on NCCL's arm
     *     (canary) N} for canary logs; null when no hit changed nothing
     */
    public String line(String notOfferedWhy) {
        if (total() == 0) {
            return null;
        }
        List<String> why = new ArrayList<>();
        if (notOffered > 0) {
            why.add("candidate not offered (" + notOfferedWhy + ") " + notOffered);
        }
        if (alreadyPick > 0) {
            why.add("already NCCL's pick " + alreadyPick);
        }
        if (ncclArm > 0) {
            why.add("on NCCL's arm (canary) " + ncclArm);
        }
        return total()
                + (total() == 1 ? " rule hit " : " rule hits ")
                + (shadowOnly ? "would change nothing: " : "changed nothing: ")
                + String.join(", ", why);
    }
}
