package io.nccltuner.compile;

import io.nccltuner.policy.Collective;
import io.nccltuner.policy.Policy.Range;

/**
 * One timed result: one replicate of one configuration at one size.
 *
 * @param source {@code file:line} it was read from
 * @param collective the collective
 * @param nRanks ranks in the communicator
 * @param nNodes nodes in the communicator (as NCCL counts them)
 * @param numPipeOps numPipeOps the calls had ({@link Range#ANY} when unknown)
 * @param nBytes message size in bytes as NCCL passes it to getCollInfo (for AllGather and
 *     ReduceScatter the total over ranks, which is nccl-tests' "size" column)
 * @param config what was forced ({@link RunConfig#AUTO}: NCCL's own pick)
 * @param timeUs time of one call in microseconds (nccl-tests: average over its iterations;
 *     sweep CSV: median over its timed calls)
 * @param p95Us 95th percentile of the timed calls in microseconds where the input gives it (the
 *     sweep CSV's {@code p95_us}), else NaN
 */
public record Measurement(
    String source,
    Collective collective,
    int nRanks,
    int nNodes,
    Range numPipeOps,
    long nBytes,
    RunConfig config,
    double timeUs,
    double p95Us) {
  /** A measurement without a P95 (nccl-tests output, optimize_config.py CSV). */
  public Measurement(String source, Collective collective, int nRanks, int nNodes, Range numPipeOps, long nBytes,
      RunConfig config, double timeUs) {
    this(source, collective, nRanks, nNodes, numPipeOps, nBytes, config, timeUs, Double.NaN);
  }
}
