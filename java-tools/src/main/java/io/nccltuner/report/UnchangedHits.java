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
 * hand-cut log) counts in none. A communicator with rule hits and no aggregate line at all counts
 * them as not offered too ({@code bareHits}, of {@code bareComms} communicators), but the log alone
 * cannot tell that from a log cut before its aggregate lines (the engine writes a communicator's
 * comm line first): {@link #reportLines} then says the aggregates are missing; try, whose logs the
 * plugin has just written whole, counts them as not offered ({@link #line}).
 *
 * @param notOffered rule hits where NCCL offered none of the rule's candidates
 * @param alreadyPick rule hits whose policy's pick is NCCL's own (channels left to NCCL)
 * @param ncclArm canary rule hits on NCCL's arm
 * @param ruleHits all rule hits of the logs
 * @param shadowOnly whether every communicator ran in shadow mode (nothing was written: "would")
 * @param bareHits the rule hits among {@code notOffered} of communicators without any aggregate line
 * @param bareComms those communicators
 */
public record UnchangedHits(
        long notOffered,
        long alreadyPick,
        long ncclArm,
        long ruleHits,
        boolean shadowOnly,
        long bareHits,
        long bareComms) {
    /**
     * Counts where every communicator has aggregate lines.
     *
     * @param notOffered rule hits where NCCL offered none of the rule's candidates
     * @param alreadyPick rule hits whose policy's pick is NCCL's own
     * @param ncclArm canary rule hits on NCCL's arm
     * @param ruleHits all rule hits
     * @param shadowOnly whether every communicator ran in shadow mode
     */
    public UnchangedHits(long notOffered, long alreadyPick, long ncclArm, long ruleHits, boolean shadowOnly) {
        this(notOffered, alreadyPick, ncclArm, ruleHits, shadowOnly, 0, 0);
    }

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
        long bare = 0;
        long bareComms = 0;
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
                long no = Math.max(0, c.ruleHits() - s[0] - c.unaggregated());
                notOffered += no;
                if (no > 0 && !byComm.containsKey(c.comm())) { // no aggregate line at all: missing, or none offered
                    bare += no;
                    bareComms++;
                }
                shadow &= "shadow".equals(c.mode());
                if ("canary".equals(c.mode())) {
                    arm += Math.max(0, s[0] - c.applied());
                } else {
                    already += s[1];
                }
            }
        }
        return new UnchangedHits(notOffered, already, arm, hits, shadow, bare, bareComms);
    }

    /** @return the rule hits that changed nothing, all reasons */
    public long total() {
        return notOffered + alreadyPick + ncclArm;
    }

    /**
     * The line try prints for these hits (the plugin's own logs, just written, so a communicator
     * without aggregate lines is one whose hits NCCL offered no candidate for), or null when there
     * are none.
     *
     * @param notOfferedWhy what "candidate not offered" names: what try found replaying the traces
     *     ({@code RING/LL128 is -1 in NCCL's table at AllReduce 128 B .. 512 B}), or {@link
     *     #NOT_OFFERED_WHY}
     * @return {@code 12 rule hits changed nothing: candidate not offered (WHY) 8, already NCCL's pick
     *     4}; "would change nothing" when every communicator ran in shadow mode; {@code on NCCL's arm
     *     (canary) N} for canary logs; null when no hit changed nothing
     */
    public String line(String notOfferedWhy) {
        return line(notOfferedWhy, notOffered);
    }

    /**
     * The lines report prints for these hits, from the logs alone: {@link #line} with {@link
     * #NOT_OFFERED_WHY}, except that the hits of communicators without any aggregate line are not
     * called not offered (nothing in the logs shows it): {@link #bareLine} says their aggregates are
     * missing, on a line of its own.
     *
     * @return one line, two (joined by a newline), or null when no hit changed nothing
     */
    public String reportLines() {
        String main = line(NOT_OFFERED_WHY, notOffered - bareHits);
        String bare = bareLine();
        return main == null ? bare : bare == null ? main : main + "\n" + bare;
    }

    /** The line with {@code offeredNone} hits counted as not offered, or null when no hit is counted. */
    private String line(String notOfferedWhy, long offeredNone) {
        long all = offeredNone + alreadyPick + ncclArm;
        if (all == 0) {
            return null;
        }
        List<String> why = new ArrayList<>();
        if (offeredNone > 0) {
            why.add("candidate not offered (" + notOfferedWhy + ") " + offeredNone);
        }
        if (alreadyPick > 0) {
            why.add("already NCCL's pick " + alreadyPick);
        }
        if (ncclArm > 0) {
            why.add("on NCCL's arm (canary) " + ncclArm);
        }
        return all
                + (all == 1 ? " rule hit " : " rule hits ")
                + (shadowOnly ? "would change nothing: " : "changed nothing: ")
                + String.join(", ", why);
    }

    /**
     * The line for rule hits of communicators whose comm line the log holds without any aggregate
     * line, or null when there are none.
     *
     * @return {@code 65 rule hits: aggregates missing for 1 communicator (...)}
     */
    public String bareLine() {
        if (bareHits == 0) {
            return null;
        }
        return bareHits + (bareHits == 1 ? " rule hit" : " rule hits") + ": aggregates missing for " + bareComms
                + (bareComms == 1 ? " communicator" : " communicators")
                + " (a comm line counts the rule hits, the log holds no aggregate line for it: a log cut short, e.g."
                + " the job died before the plugin wrote them, or NCCL offered none of the rule's candidates at any"
                + " hit; the log cannot tell which)";
    }
}
