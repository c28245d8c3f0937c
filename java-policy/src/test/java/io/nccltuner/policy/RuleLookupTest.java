package io.nccltuner.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.nccltuner.policy.Policy.Profile;
import org.junit.jupiter.api.Test;

/**
 * The rule lookup explain, replay and try share to name the rule a call falls under ({@code
 * profiles[i].rules[j]}): the first profile whose nRanks and nNodes both match, and in it the first
 * rule whose collective, byte range, numPipeOps and regBuff condition hold, as the engine matches
 * them (regBuff 0 or non-zero from tuner v4; unknown, -1, for v3: only a rule for any regBuff).
 */
class RuleLookupTest {
    private static final String YAML = """
            schema: nccl-tuner-java/v1
            name: t
            profiles:
              - name: one-node
                match: {nRanks: 8, nNodes: 1}
                rules:
                  - collective: AllReduce
                    bytes: {from: 0, to: 1 MiB}
                    candidates:
                      - {algorithm: RING, protocol: LL}
              - name: two-nodes
                match: {nRanks: 8, nNodes: 2}
                rules:
                  - collective: AllReduce
                    bytes: {from: 0, to: 1 MiB}
                    regBuff: false
                    candidates:
                      - {algorithm: RING, protocol: LL}
                  - collective: AllReduce
                    bytes: {from: 0, to: 1 MiB}
                    regBuff: true
                    candidates:
                      - {algorithm: NVLS, protocol: SIMPLE}
                      - {algorithm: RING, protocol: SIMPLE}
                  - collective: AllReduce
                    bytes: {from: 1 MiB}
                    candidates:
                      - {algorithm: TREE, protocol: SIMPLE}
            """;

    @Test
    void theProfileMatchesOnNodesAsWellAsRanks() throws Exception {
        Policy p = PolicyLoader.parse("x.yaml", YAML);
        assertEquals(0, p.profileIndexFor(8, 1));
        assertEquals(1, p.profileIndexFor(8, 2), "nRanks 8 alone matches profiles[0]; nNodes 2 is profiles[1]");
        assertEquals(-1, p.profileIndexFor(8, 4));
        assertEquals(-1, p.profileIndexFor(16, 2));
        assertEquals("two-nodes", p.profileFor(8, 2).name());
    }

    @Test
    void regBuffZeroMatchesTheRegBuffFalseRuleAndUnknownOnlyTheAnyRule() throws Exception {
        Profile two = PolicyLoader.parse("x.yaml", YAML).profiles().get(1);
        assertEquals(0, two.ruleIndexFor(Collective.AllReduce, 4096, 1, 0), "regBuff 0: the regBuff false rule");
        assertEquals(1, two.ruleIndexFor(Collective.AllReduce, 4096, 1, 1), "regBuff 1: the regBuff true rule");
        assertEquals(1, two.ruleIndexFor(Collective.AllReduce, 4096, 1, 2), "any non-zero regBuff is registered");
        assertEquals(-1, two.ruleIndexFor(Collective.AllReduce, 4096, 1, -1), "v3, regBuff unknown: no regBuff rule");
        assertEquals(2, two.ruleIndexFor(Collective.AllReduce, 1L << 20, 1, -1), "v3: the rule for any regBuff");
        assertEquals(-1, two.ruleIndexFor(Collective.AllGather, 4096, 1, 0));
    }

    @Test
    void candidatesAreNamedAlgorithmSlashProtocolBestFirst() throws Exception {
        Profile two = PolicyLoader.parse("x.yaml", YAML).profiles().get(1);
        assertEquals("NVLS/SIMPLE RING/SIMPLE", two.rules().get(1).candidatesText());
    }
}
