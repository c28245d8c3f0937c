package io.nccltuner.compile;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nccltuner.policy.Algorithm;
import io.nccltuner.policy.Collective;
import io.nccltuner.policy.Mode;
import io.nccltuner.policy.Policy;
import io.nccltuner.policy.Policy.Candidate;
import io.nccltuner.policy.Policy.Profile;
import io.nccltuner.policy.Policy.Range;
import io.nccltuner.policy.Policy.Rule;
import io.nccltuner.policy.PolicyLoader;
import io.nccltuner.policy.Protocol;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class PolicyYamlTest {
    @Test
    void writesTheDocumentedSchemaAndLoadsBack() throws Exception {
        Rule a = new Rule(
                Collective.AllReduce,
                1L << 20,
                5L << 18,
                Range.exactly(1),
                new Candidate(Algorithm.RING, Protocol.LL128, 0, Double.NaN),
                0.209958,
                List.of(
                        new Candidate(Algorithm.RING, Protocol.LL, 0, 0.0),
                        new Candidate(Algorithm.TREE, Protocol.SIMPLE, 16, 0.123456)));
        Rule b = new Rule(
                Collective.ReduceScatter,
                24L << 20,
                -1L,
                new Range(2, Long.MAX_VALUE),
                null,
                Double.NaN,
                List.of(new Candidate(Algorithm.NVLS_TREE, Protocol.SIMPLE, 0, Double.NaN)));
        Policy p = new Policy(
                "my policy: v1",
                Mode.SHADOW,
                "line one \"quoted\"\nline two",
                List.of(
                        new Profile("p", Range.exactly(2), new Range(1, 4), List.of(a, b)),
                        new Profile("rest", Range.ANY, Range.ANY, List.of())),
                null);
        Map<Rule, List<String>> comments = new IdentityHashMap<>();
        comments.put(a, List.of("measured 1 MiB"));
        String yaml = PolicyYaml.write(p, List.of("header"), comments);
        assertEquals("""
        # header
        schema: nccl-tuner-java/v1
        name: "my policy: v1"
        mode: shadow
        description: "line one \\"quoted\\"\\nline two"
        profiles:
          - name: p
            match: {nRanks: 2, nNodes: {min: 1, max: 4}}
            rules:
              # measured 1 MiB
              - collective: AllReduce
                bytes: {from: 1 MiB, to: 1.25 MiB}
                numPipeOps: 1
                ncclPick: {algorithm: RING, protocol: LL128}
                ncclRegret: 0.21
                candidates:
                  - {algorithm: RING, protocol: LL, regret: 0.0}
                  - {algorithm: TREE, protocol: SIMPLE, channels: 16, regret: 0.1235}
              - collective: ReduceScatter
                bytes: {from: 24 MiB}
                numPipeOps: {min: 2}
                candidates:
                  - {algorithm: NVLS_TREE, protocol: SIMPLE}
          - name: rest
            rules: []
        """, yaml);
        Policy back = PolicyLoader.parse("x.yaml", yaml);
        assertEquals(p.name(), back.name());
        assertEquals(Mode.SHADOW, back.mode());
        assertEquals(p.description(), back.description());
        Rule ra = back.profiles().getFirst().rules().getFirst();
        assertEquals(a.fromBytes(), ra.fromBytes());
        assertEquals(a.toBytes(), ra.toBytes());
        assertEquals(a.numPipeOps(), ra.numPipeOps());
        assertEquals(0.21, ra.ncclRegret(), 0);
        assertEquals(
                new Candidate(Algorithm.TREE, Protocol.SIMPLE, 16, 0.1235),
                ra.candidates().get(1));
        Rule rb = back.profiles().getFirst().rules().get(1);
        assertEquals(-1L, rb.toBytes());
        assertEquals(new Range(2, Long.MAX_VALUE), rb.numPipeOps());
        assertTrue(Double.isNaN(rb.ncclRegret()));
        assertEquals(Range.ANY, back.profiles().get(1).nRanks());
    }

    @Test
    void numbersAndStrings() {
        assertEquals("0.0", PolicyYaml.number(0));
        assertEquals("0.21", PolicyYaml.number(0.20996));
        assertEquals("1.0", PolicyYaml.number(1));
        assertEquals("0.0001", PolicyYaml.number(0.00005));
        assertEquals("ranks2-nodes1", PolicyYaml.str("ranks2-nodes1"));
        assertEquals("\"yes\"", PolicyYaml.str("yes"));
        assertEquals("\"2rank\"", PolicyYaml.str("2rank"));
    }
}
