package io.nccltuner.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import io.nccltuner.policy.Algorithm;
import io.nccltuner.policy.Collective;
import io.nccltuner.policy.HardwareMatch;
import io.nccltuner.policy.Policy;
import io.nccltuner.policy.Protocol;
import io.nccltuner.policy.TunerConstant;
import java.nio.ByteBuffer;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Mutation tests of the table's sha256 over the profile's constants (docs/policy-format.md). */
class DigestMutantsTest {
    private static DecisionTable table(TunerConstant... constants) {
        var r = new Policy.Rule(
                Collective.AllReduce,
                0,
                1024,
                Policy.Range.ANY,
                null,
                Double.NaN,
                List.of(new Policy.Candidate(Algorithm.RING, Protocol.LL, 0, 0)));
        return DecisionTable.compile(new Policy.Profile(
                "k", Policy.Range.ANY, Policy.Range.ANY, List.of(r), HardwareMatch.ANY, List.of(constants)));
    }

    private static TunerConstant k(String name, double value) {
        return TunerConstant.parse(name, value);
    }

    /**
     * Two entries of one array are two entries: neither is dropped as a repeat of the other, so a
     * change to either one's value changes the sha256 (an order by array alone would merge them).
     */
    @Test
    void twoEntriesOfOneArrayAreBothDigested() {
        String base = table(k("baseLatencies.RING.LL", 1), k("baseLatencies.TREE.LL", 2))
                .sha256();
        assertNotEquals(
                base,
                table(k("baseLatencies.RING.LL", 9), k("baseLatencies.TREE.LL", 2))
                        .sha256());
        assertNotEquals(
                base,
                table(k("baseLatencies.RING.LL", 1), k("baseLatencies.TREE.LL", 9))
                        .sha256());
        assertNotEquals(
                table(k("llMaxBws.HOPPER.1NODE", 5), k("llMaxBws.HOPPER.2NODES", 6))
                        .sha256(),
                table(k("llMaxBws.HOPPER.1NODE", 7), k("llMaxBws.HOPPER.2NODES", 6))
                        .sha256());
    }

    /** Entries of one array follow in index order (TREE 0 before RING 1), each with its value. */
    @Test
    void entriesOfOneArrayAreOrderedByIndex() {
        DecisionTable t = table();
        byte[] none = DecisionTable.digestInput(t.head, t.chains, t.rules, new long[0], List.of());
        byte[] with = DecisionTable.digestInput(
                t.head,
                t.chains,
                t.rules,
                new long[0],
                List.of(k("baseLatencies.RING.LL", 1), k("baseLatencies.TREE.SIMPLE", 2)));
        ByteBuffer tail = ByteBuffer.wrap(with, none.length, with.length - none.length);
        assertEquals(4 + 2 * (4 * 3 + 8), tail.remaining());
        assertEquals(2, tail.getInt());
        assertEquals(List.of(0, 0, 2), List.of(tail.getInt(), tail.getInt(), tail.getInt()));
        assertEquals(Double.doubleToLongBits(2.0), tail.getLong());
        assertEquals(List.of(0, 1, 0), List.of(tail.getInt(), tail.getInt(), tail.getInt()));
        assertEquals(Double.doubleToLongBits(1.0), tail.getLong());
    }
}
