package io.nccltuner.model;

import io.nccltuner.policy.Algorithm;
import io.nccltuner.policy.Protocol;

/**
 * One entry of NCCL's cost table: an algorithm and a protocol, written "RING/LL128".
 *
 * @param algorithm NCCL algorithm (cost-table row)
 * @param protocol NCCL protocol (cost-table column)
 */
public record AlgoProto(Algorithm algorithm, Protocol protocol) {
    /**
     * Parses "RING/LL128" (names as {@link Algorithm#parse} and {@link Protocol#parse} take them).
     *
     * @param text the pair
     * @return the pair
     * @throws IllegalArgumentException if either name is unknown or the slash is missing
     */
    public static AlgoProto parse(String text) {
        int slash = text.indexOf('/');
        if (slash < 0) {
            throw new IllegalArgumentException("expected ALGORITHM/PROTOCOL, got '" + text + "'");
        }
        Algorithm a = Algorithm.parse(text.substring(0, slash).trim());
        Protocol p = Protocol.parse(text.substring(slash + 1).trim());
        if (a == null || p == null) {
            throw new IllegalArgumentException("unknown algorithm or protocol in '" + text + "'");
        }
        return new AlgoProto(a, p);
    }

    /** @return the flat index {@code algorithm * numProto + protocol} of the algorithm-major table */
    public int index(int numProto) {
        return algorithm.id() * numProto + protocol.id();
    }

    /** @return "RING/LL128" */
    @Override
    public String toString() {
        return algorithm.name() + "/" + protocol.name();
    }
}
