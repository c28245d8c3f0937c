package io.nccltuner.report;

import io.nccltuner.policy.Mode;
import io.nccltuner.policy.Policy;
import io.nccltuner.policy.Policy.Profile;
import io.nccltuner.policy.Policy.Rule;
import io.nccltuner.policy.SizeGrid;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The policy a canary promotes ({@code nccl-tuner report --emit-policy OUT --policy POLICY}): the
 * measured policy with only the size ranges whose verdict is {@code promote}, in mode
 * {@code enforce}.
 *
 * <p>Each rule's [fromBytes, toBytes) is walked bucket by bucket on the size grid
 * ({@link SizeGrid}); a bucket is kept when, among the measured shapes (nRanks, nNodes) whose
 * first matching profile is the rule's profile, at least one says {@code promote} for the rule's
 * collective there and none says {@code keep NCCL}. Consecutive kept buckets become one rule with
 * the original's other fields (numPipeOps, regBuff, ncclPick, ncclRegret, candidates); a rule with
 * no kept bucket is dropped, so NCCL picks there. Buckets nothing measured are not kept.
 *
 * @param policy the promoted policy
 * @param comments per new rule (by identity), the verdicts that kept it, for the YAML file
 * @param kept rules written
 * @param cut rules written in part (their range was cut)
 * @param dropped rules of the input with no promoted bucket
 */
public record PromotedPolicy(Policy policy, Map<Rule, List<String>> comments, int kept, int cut, int dropped) {
    /**
     * Cuts a policy to the promoted ranges.
     *
     * @param in the policy the canary ran (as {@link io.nccltuner.policy.PolicyLoader} loaded it)
     * @param report the canary report of its logs
     * @return the promoted policy and what was cut
     */
    public static PromotedPolicy of(Policy in, CanaryReport report) {
        Map<Rule, List<String>> comments = new IdentityHashMap<>();
        List<Profile> profiles = new ArrayList<>();
        int kept = 0;
        int cut = 0;
        int dropped = 0;
        for (Profile pr : in.profiles()) {
            List<CanaryReport.Row> mine = report.rows().stream()
                    .filter(r -> in.profileFor(r.nRanks(), r.nNodes()) == pr)
                    .toList();
            List<Rule> rules = new ArrayList<>();
            for (Rule rule : pr.rules()) {
                int first = SizeGrid.bucket(rule.fromBytes());
                int end = SizeGrid.endBucket(rule.toBytes());
                List<Rule> parts = new ArrayList<>();
                int b = first;
                while (b < end) {
                    if (!promoted(mine, rule, b)) {
                        b++;
                        continue;
                    }
                    int e = b;
                    List<String> why = new ArrayList<>();
                    while (e < end && promoted(mine, rule, e)) {
                        for (CanaryReport.Row r : mine) {
                            if (r.collective() == rule.collective()
                                    && r.bucket() == e
                                    && r.verdict() == CanaryReport.Verdict.PROMOTE) {
                                why.add(String.format(
                                        Locale.ROOT,
                                        "%s %s: gain %s over %d NCCL / %d policy timed collectives",
                                        r.range(),
                                        io.nccltuner.model.JobShape.of(r.nRanks(), r.nNodes()),
                                        CanaryReport.interval(r.gain()),
                                        r.nccl().timed(),
                                        r.policy().timed()));
                            }
                        }
                        e++;
                    }
                    long from = SizeGrid.lowerBound(b);
                    long to = SizeGrid.upperBound(e - 1);
                    if (e == end && rule.toBytes() != -1L) {
                        to = rule.toBytes();
                    }
                    Rule part = rule.withRange(from, to);
                    why.addFirst("promoted by the canary:");
                    comments.put(part, why);
                    parts.add(part);
                    b = e;
                }
                if (parts.isEmpty()) {
                    dropped++;
                } else if (parts.size() == 1
                        && parts.get(0).fromBytes() == rule.fromBytes()
                        && parts.get(0).toBytes() == rule.toBytes()) {
                    kept++;
                } else {
                    cut++;
                }
                rules.addAll(parts);
            }
            profiles.add(pr.withRules(rules));
        }
        return new PromotedPolicy(
                new Policy(in.name(), Mode.ENFORCE, in.description(), profiles, null), comments, kept, cut, dropped);
    }

    private static boolean promoted(List<CanaryReport.Row> rows, Rule rule, int bucket) {
        boolean promote = false;
        for (CanaryReport.Row r : rows) {
            if (r.collective() != rule.collective() || r.bucket() != bucket) {
                continue;
            }
            if (r.verdict() == CanaryReport.Verdict.KEEP_NCCL) {
                return false;
            }
            promote |= r.verdict() == CanaryReport.Verdict.PROMOTE;
        }
        return promote;
    }
}
