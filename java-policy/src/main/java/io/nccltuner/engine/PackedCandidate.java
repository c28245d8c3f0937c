package io.nccltuner.engine;

import io.nccltuner.policy.Policy;

/**
 * A ranked candidate as the decision table stores it: one int, {@code algorithm | protocol << 8 |
 * channels << 16 | chunk << 24}, so the per-call path reads candidates without objects. The one place that
 * knows the packing: every reader goes through these accessors.
 *
 * <ul>
 *   <li>algorithm: NCCL's algorithm id, 0..255 (NCCL_ALGO_TREE 0 .. NCCL_ALGO_PAT 6 in 2.23+;
 *       src/include/device.h);
 *   <li>protocol: NCCL's protocol id, 0..255 (NCCL_PROTO_LL 0, LL128 1, SIMPLE 2);
 *   <li>channels: the nChannels to set, 1..{@link io.nccltuner.policy.PolicyLoader#MAX_CHANNELS},
 *       or 0 to leave NCCL's choice (8 bits);
 *   <li>chunk: 1 + the index of the candidate's chunk size in its table's
 *       {@link DecisionTable#chunkSizes()}, or 0 when it leaves NCCL's chunk size (8 bits).
 * </ul>
 */
public final class PackedCandidate {
    private PackedCandidate() {}

    /**
     * @param candidate a validated policy candidate
     * @return its packed form
     */
    public static int pack(Policy.Candidate candidate) {
        return pack(candidate.algorithm().id(), candidate.protocol().id(), candidate.channels());
    }

    /**
     * @param candidate a validated policy candidate
     * @param chunk 1 + the index of its chunk size in the table's chunk sizes, or 0 (0..255)
     * @return its packed form
     */
    public static int pack(Policy.Candidate candidate, int chunk) {
        return pack(candidate) | (chunk & 0xff) << 24;
    }

    /**
     * @param algorithm NCCL algorithm id, 0..255
     * @param protocol NCCL protocol id, 0..255
     * @param channels channel count to set, or 0 for NCCL's choice (0..255)
     * @return the packed candidate
     */
    public static int pack(int algorithm, int protocol, int channels) {
        return (algorithm & 0xff) | (protocol & 0xff) << 8 | (channels & 0xff) << 16;
    }

    /** @return the candidate's NCCL algorithm id */
    public static int algorithm(int packed) {
        return packed & 0xff;
    }

    /** @return the candidate's NCCL protocol id */
    public static int protocol(int packed) {
        return (packed >>> 8) & 0xff;
    }

    /** @return the channel count the candidate sets, 0 when it leaves NCCL's choice */
    public static int channels(int packed) {
        return (packed >>> 16) & 0xff;
    }

    /** @return 1 + the index of the candidate's chunk size in its table, or 0 for NCCL's chunk size */
    public static int chunk(int packed) {
        return packed >>> 24;
    }

    /**
     * @param numProto columns of NCCL's cost table
     * @return the candidate's index in the algorithm-major table, {@code algorithm * numProto + protocol}
     */
    public static int entry(int packed, int numProto) {
        return algorithm(packed) * numProto + protocol(packed);
    }
}
