package io.nccltuner.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.nccltuner.policy.Policy.Candidate;
import io.nccltuner.policy.Policy.Profile;
import io.nccltuner.policy.Policy.Range;
import io.nccltuner.policy.Policy.Rule;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The copies a tool makes of a policy, a profile or a rule keep every field they do not replace. */
class PolicyCopiesTest {
    private static final Candidate RING_SIMPLE = new Candidate(Algorithm.RING, Protocol.SIMPLE, 0, 0.0);
    private static final Candidate TREE_LL = new Candidate(Algorithm.TREE, Protocol.LL, 8, 0.1);
    private static final Rule RULE = new Rule(
            Collective.AllReduce, 1L << 20, 2L << 20, Range.exactly(1), TREE_LL, 0.25, List.of(RING_SIMPLE), true);

    @Test
    void ruleCopiesKeepRegBuffAndPicks() {
        assertEquals(
                new Rule(Collective.AllReduce, 0, -1L, Range.exactly(1), TREE_LL, 0.25, List.of(RING_SIMPLE), true),
                RULE.withRange(0, -1L));
        assertEquals(
                new Rule(
                        Collective.AllReduce,
                        1L << 20,
                        2L << 20,
                        Range.exactly(1),
                        TREE_LL,
                        0.25,
                        List.of(TREE_LL),
                        true),
                RULE.withCandidates(List.of(TREE_LL)));
    }

    @Test
    void profileAndPolicyCopiesKeepTheRest() {
        HardwareMatch h200 = new HardwareMatch(null, null, null, null, "NVIDIA H200", null);
        List<TunerConstant> constants =
                List.of(new TunerConstant("baseLatencies", "baseLatencies", List.of(0, 2), 6.8));
        Profile p = new Profile("nRanks2-nNodes2", Range.exactly(2), Range.exactly(2), List.of(), h200, constants);
        assertEquals(
                new Profile("nRanks2-nNodes2", Range.exactly(2), Range.exactly(2), List.of(RULE), h200, constants),
                p.withRules(List.of(RULE)));
        Path src = Path.of("policies/h200-2rank.yaml");
        Policy pol = new Policy("h200", Mode.SHADOW, "measured", List.of(), src);
        assertEquals(new Policy("planted", Mode.SHADOW, "measured", List.of(), src), pol.withName("planted"));
        assertEquals(new Policy("h200", Mode.SHADOW, "measured", List.of(p), src), pol.withProfiles(List.of(p)));
        assertEquals(new Policy("h200", Mode.SHADOW, "measured", List.of(), null), pol.withSource(null));
    }
}
