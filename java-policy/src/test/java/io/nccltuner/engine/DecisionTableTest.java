package io.nccltuner.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import io.nccltuner.policy.Algorithm;
import io.nccltuner.policy.Collective;
import io.nccltuner.policy.Policy;
import io.nccltuner.policy.Protocol;
import io.nccltuner.policy.SizeGrid;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class DecisionTableTest {
    /** Random non-overlapping profiles: the O(1) lookup agrees with a linear scan over the rules. */
    @Test
    void lookupAgreesWithLinearScan() {
        SplittableRandom rnd = new SplittableRandom(7);
        for (int round = 0; round < 50; round++) {
            List<Policy.Rule> rules = new ArrayList<>();
            for (Collective c : Collective.values()) {
                int b = rnd.nextInt(4);
                while (b < SizeGrid.BUCKETS - 1) {
                    int end = Math.min(SizeGrid.BUCKETS, b + 1 + rnd.nextInt(40));
                    long from = SizeGrid.lowerBound(b);
                    long to = end == SizeGrid.BUCKETS ? -1L : SizeGrid.lowerBound(end);
                    boolean split = rnd.nextInt(3) == 0;
                    int nRules = split ? 2 : 1;
                    for (int k = 0; k < nRules; k++) {
                        Policy.Range pipe = !split
                                ? Policy.Range.ANY
                                : k == 0 ? Policy.Range.exactly(1) : new Policy.Range(2, Long.MAX_VALUE);
                        rules.add(new Policy.Rule(
                                c,
                                from,
                                to,
                                pipe,
                                null,
                                Double.NaN,
                                List.of(new Policy.Candidate(
                                        Algorithm.ofId(rnd.nextInt(7)),
                                        Protocol.ofId(rnd.nextInt(3)),
                                        rnd.nextInt(3),
                                        0))));
                    }
                    b = end + rnd.nextInt(6);
                }
            }
            Policy.Profile p = new Policy.Profile("p", Policy.Range.ANY, Policy.Range.ANY, rules);
            DecisionTable t = DecisionTable.compile(p);
            for (int i = 0; i < 20_000; i++) {
                int coll = rnd.nextInt(7);
                long n = rnd.nextLong() >>> rnd.nextInt(64);
                int pipe = 1 + rnd.nextInt(3);
                int expect = -1;
                for (int r = 0; r < rules.size(); r++) {
                    Policy.Rule rule = rules.get(r);
                    if (rule.collective().id() == coll
                            && rule.containsBytes(n)
                            && rule.numPipeOps().contains(pipe)) {
                        expect = r * DecisionTable.STRIDE;
                    }
                }
                assertEquals(
                        expect,
                        t.find(coll, n, pipe),
                        "coll " + coll + " nBytes " + Long.toUnsignedString(n) + " pipe " + pipe);
            }
        }
    }

    @Test
    void shaDependsOnlyOnCompiledRules() {
        var r1 = new Policy.Rule(
                Collective.AllReduce,
                0,
                1024,
                Policy.Range.ANY,
                null,
                0.5,
                List.of(new Policy.Candidate(Algorithm.RING, Protocol.LL, 0, 0)));
        var r2 = new Policy.Rule(
                Collective.AllReduce,
                0,
                1024,
                Policy.Range.ANY,
                null,
                Double.NaN,
                List.of(new Policy.Candidate(Algorithm.RING, Protocol.LL, 0, 0.3)));
        var r3 = new Policy.Rule(
                Collective.AllReduce,
                0,
                1024,
                Policy.Range.ANY,
                null,
                Double.NaN,
                List.of(new Policy.Candidate(Algorithm.RING, Protocol.LL128, 0, 0)));
        String a = DecisionTable.compile(new Policy.Profile("a", Policy.Range.ANY, Policy.Range.ANY, List.of(r1)))
                .sha256();
        String b = DecisionTable.compile(
                        new Policy.Profile("b", Policy.Range.exactly(2), Policy.Range.ANY, List.of(r2)))
                .sha256();
        String c = DecisionTable.compile(new Policy.Profile("a", Policy.Range.ANY, Policy.Range.ANY, List.of(r3)))
                .sha256();
        assertEquals(a, b, "regrets and names do not change decisions");
        assertNotEquals(a, c);
    }
}
