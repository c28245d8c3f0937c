package io.nccltuner.model;

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
}
