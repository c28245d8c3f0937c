package io.nccltuner.trace;

import io.nccltuner.policy.Collective;

/**
 * One captured {@code getCollInfo} call: what NCCL passed to the tuner, including its cost table.
 *
 * @param line line number in the trace file (1-based)
 * @param comm the trace's communicator number (its order of init in the file)
 * @param nRanks ranks in the communicator
 * @param nNodes nodes in the communicator
 * @param collective the collective (ncclFunc_t 0..4)
 * @param nBytes message size NCCL passed, bytes (for AllGather/ReduceScatter nRanks times the
 *     per-rank size)
 * @param numPipeOps pipelined operations in the call
 * @param numAlgo cost-table rows
 * @param numProto cost-table columns
 * @param nChannelsIn the nChannels value NCCL passed in
 * @param costs {@code numAlgo * numProto} predicted times in microseconds, algorithm-major, -1 for
 *     NCCL_ALGO_PROTO_IGNORE
 * @param costTolerance for each cost, half a unit of the last digit the trace printed (the value
 *     NCCL computed lies within it)
 */
public record TraceCall(
        int line,
        int comm,
        int nRanks,
        int nNodes,
        Collective collective,
        long nBytes,
        int numPipeOps,
        int numAlgo,
        int numProto,
        int nChannelsIn,
        float[] costs,
        double[] costTolerance) {

    /**
     * @param algorithm NCCL algorithm id
     * @param protocol NCCL protocol id
     * @return the captured cost of an entry (microseconds), or -1 when the table has no such entry
     */
    public float cost(int algorithm, int protocol) {
        if (algorithm >= numAlgo || protocol >= numProto) {
            return -1f;
        }
        return costs[algorithm * numProto + protocol];
    }

    /** @return the print tolerance of an entry's cost (microseconds), for an entry inside the table */
    public double tolerance(int algorithm, int protocol) {
        return costTolerance[algorithm * numProto + protocol];
    }

    /**
     * NCCL's own pick from the captured table ({@link io.nccltuner.engine.Engine#ncclPick}).
     *
     * @return {@code algorithm * numProto + protocol}, or -1 if no entry is {@code >= 0}
     */
    public int ncclPickEntry() {
        return io.nccltuner.engine.Engine.ncclPick(java.lang.foreign.MemorySegment.ofArray(costs), numAlgo, numProto);
    }
}
