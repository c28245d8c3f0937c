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

    /** A profile of one AllReduce rule [0, 1 KiB) -> RING/LL, with the constants given. */
    private static DecisionTable withConstants(io.nccltuner.policy.TunerConstant... constants) {
        var r = new Policy.Rule(
                Collective.AllReduce,
                0,
                1024,
                Policy.Range.ANY,
                null,
                Double.NaN,
                List.of(new Policy.Candidate(Algorithm.RING, Protocol.LL, 0, 0)));
        return DecisionTable.compile(new Policy.Profile(
                "k",
                Policy.Range.ANY,
                Policy.Range.ANY,
                List.of(r),
                io.nccltuner.policy.HardwareMatch.ANY,
                List.of(constants)));
    }

    private static io.nccltuner.policy.TunerConstant k(String name, double value) {
        return io.nccltuner.policy.TunerConstant.parse(name, value);
    }

    /**
     * The constants edit NCCL's cost model, so they change NCCL's picks wherever no rule applies:
     * two profiles that differ only in one constant must not pass the cross-rank "same table" check.
     */
    @Test
    void shaCoversTheConstants() {
        String none = withConstants().sha256();
        String a = withConstants(k("baseLatencies.RING.LL", 7.5)).sha256();
        String a2 = withConstants(k("baseLatencies.RING.LL", 7.5)).sha256();
        String b = withConstants(k("baseLatencies.RING.LL", 7.25)).sha256();
        String otherEntry = withConstants(k("baseLatencies.RING.LL128", 7.5)).sha256();
        String otherRow = withConstants(k("perChMaxTreeBws.HOPPER.1NODE", 7.5)).sha256();
        String otherScale =
                withConstants(k("perChMaxTreeBws.HOPPER.2NODES", 7.5)).sha256();
        assertEquals(a, a2, "the same profile twice");
        assertNotEquals(a, b, "one constant's value differs");
        assertNotEquals(none, a, "constants against none");
        assertNotEquals(a, otherEntry, "another protocol's entry");
        assertNotEquals(otherRow, otherScale, "another scale index");
        // the smallest step of a double still counts: the value's bits are digested
        assertNotEquals(
                a, withConstants(k("baseLatencies.RING.LL", Math.nextUp(7.5))).sha256());
        // canonical: file order, the spelling and -0.0 do not matter; a repeated entry counts as the last value
        assertEquals(
                withConstants(k("baseLatencies.RING.LL", 7.5), k("llMaxBws.HOPPER.1NODE", 40))
                        .sha256(),
                withConstants(k("llMaxBws.hopper.1node", 40), k("baseLatencies.ring.ll", 7.5))
                        .sha256());
        assertEquals(
                withConstants(k("baseLatencies.RING.LL", 0.0)).sha256(),
                withConstants(k("baseLatencies.RING.LL", -0.0)).sha256());
        assertEquals(
                a,
                withConstants(k("baseLatencies.RING.LL", 3), k("baseLatencies.ring.ll", 7.5))
                        .sha256());
    }

    /**
     * The digest's input byte for byte as docs/policy-format.md gives it: a profile without
     * constants digests the arrays alone (its sha256 is what it was before constants were covered),
     * one with constants appends count, then (array, indices, value bits) per entry in order.
     */
    @Test
    void digestInputIsTheDocumentedBytes() {
        DecisionTable t = withConstants();
        byte[] none = DecisionTable.digestInput(t.head, t.chains, t.rules, new long[0], List.of());
        int cells = Collective.COUNT * SizeGrid.BUCKETS;
        assertEquals(4 * (cells + t.chains.length + t.rules.length), none.length);
        assertEquals(
                java.util.HexFormat.of().formatHex(Sha256.digest(none)), t.sha256(), "no constants: the arrays alone");
        byte[] with = DecisionTable.digestInput(
                t.head,
                t.chains,
                t.rules,
                new long[0],
                List.of(k("hwLatencies.NET.TREE.SIMPLE", 1.5), k("baseLatencies.PAT.LL", 2)));
        java.nio.ByteBuffer tail = java.nio.ByteBuffer.wrap(with, none.length, with.length - none.length);
        assertEquals(4 + (4 * 3 + 8) + (4 * 4 + 8), tail.remaining());
        assertEquals(2, tail.getInt());
        // baseLatencies (array 0) first: PAT is algorithm 6, LL protocol 0
        assertEquals(List.of(0, 6, 0), List.of(tail.getInt(), tail.getInt(), tail.getInt()));
        assertEquals(Double.doubleToLongBits(2.0), tail.getLong());
        // hwLatencies (array 1): NET is link 2, TREE algorithm 0, SIMPLE protocol 2
        assertEquals(List.of(1, 2, 0, 2), List.of(tail.getInt(), tail.getInt(), tail.getInt(), tail.getInt()));
        assertEquals(0x3ff8000000000000L, tail.getLong());
    }
}
