package io.nccltuner.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.junit.jupiter.api.Test;

class PolicyProblemTest {
    @Test
    void suggestionWinsOverTheAllowedList() {
        String m = PolicyProblem.at("p.yaml", 14, 22, "unknown algorithm 'RINGG'")
                .path("profiles[0].rules[2].candidates[0].algorithm")
                .suggest("RING", false)
                .allowed(List.of("TREE", "RING"), "use ")
                .format();
        assertEquals(
                "p.yaml:14:22: profiles[0].rules[2].candidates[0].algorithm: unknown algorithm 'RINGG'; "
                        + "did you mean RING?",
                m);
    }

    @Test
    void allowedListWhenNothingIsClose() {
        assertEquals(
                "p.yaml:3:7: mode: unknown mode 'loud'; use enforce, shadow or off",
                PolicyProblem.at("p.yaml", 3, 7, "unknown mode 'loud'")
                        .path("mode")
                        .allowed(List.of("enforce", "shadow", "off"), "use ")
                        .format());
        assertEquals(
                "p.yaml:9:9: profiles[0].rules[0]: unknown field 'zz'; allowed: collective, bytes",
                PolicyProblem.at("p.yaml", 9, 9, "unknown field 'zz'")
                        .path("profiles[0].rules[0]")
                        .suggest(null, true)
                        .allowed(List.of("collective", "bytes"), "allowed: ")
                        .format());
    }

    @Test
    void detailAndQuotedSuggestionAndWholeFile() {
        assertEquals(
                "p.yaml:1:1: the policy is empty; it needs 'name'",
                PolicyProblem.at("p.yaml", 1, 1, "the policy is empty")
                        .detail("it needs 'name'")
                        .format());
        assertEquals(
                "p.yaml:9:9: x: unknown field 'numPipeOp'; did you mean 'numPipeOps'?",
                PolicyProblem.at("p.yaml", 9, 9, "unknown field 'numPipeOp'")
                        .path("x")
                        .suggest("numPipeOps", true)
                        .format());
        assertEquals(
                "p.yaml: too large",
                PolicyProblem.at("p.yaml", 0, 0, "too large").format());
    }
}
