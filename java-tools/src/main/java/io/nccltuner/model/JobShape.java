package io.nccltuner.model;

import io.nccltuner.policy.Policy;

/**
 * The one way every command writes a communicator's shape: {@code nRanks=16 nNodes=2}, the two
 * values NCCL passes to the tuner's init, in that order, named (as the plugin's own INFO lines and
 * {@code validate} write them). Never {@code AxB}, which reads as nRanks x nNodes in one place and
 * nNodes x ranks per node in another.
 */
public final class JobShape {
    private JobShape() {}

    /**
     * @param nRanks ranks in the communicator (NCCL's nRanks)
     * @param nNodes nodes it spans (NCCL's nNodes)
     * @return {@code nRanks=16 nNodes=2}
     */
    public static String of(long nRanks, long nNodes) {
        return "nRanks=" + nRanks + " nNodes=" + nNodes;
    }

    /**
     * The shapes a profile's {@code match} admits, in the same form: {@code nRanks=2 nNodes=2},
     * {@code nRanks=any nNodes=1}, {@code nRanks=2..8 nNodes=1}, {@code nRanks=16.. nNodes=2}
     * ({@link Policy.Range#toString}).
     *
     * @param nRanks the profile's nRanks range
     * @param nNodes its nNodes range
     * @return {@code nRanks=R nNodes=N}
     */
    public static String of(Policy.Range nRanks, Policy.Range nNodes) {
        return "nRanks=" + nRanks + " nNodes=" + nNodes;
    }
}
