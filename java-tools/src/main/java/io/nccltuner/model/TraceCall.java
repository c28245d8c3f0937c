package io.nccltuner.model;

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

  /** @return the captured cost of an entry, or -1 when the table has no such entry */
  public float cost(AlgoProto ap) {
    if (ap.algorithm().id() >= numAlgo || ap.protocol().id() >= numProto) {
      return -1f;
    }
    return costs[ap.index(numProto)];
  }

  /** @return the print tolerance of an entry's cost */
  public double tolerance(AlgoProto ap) {
    return costTolerance[ap.index(numProto)];
  }

  /**
   * NCCL's own pick from the captured table: the strict minimum over entries {@code >= 0} in
   * algorithm-major order (src/enqueue.cc topoGetAlgoInfo, 2.19 .. 2.30).
   *
   * @return the pick, or null if no entry is {@code >= 0}
   */
  public AlgoProto ncclPick() {
    return NcclSelect.pick(costs, numProto);
  }
}
