package io.nccltuner.compile;

import io.nccltuner.policy.Algorithm;
import io.nccltuner.policy.Collective;
import io.nccltuner.policy.Protocol;

/**
 * What NCCL ran for one call, from a TUNING selection line of an NCCL INFO log, e.g.
 * {@code AllReduce: 1048576 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..0}} (2.24+) or
 * {@code 1048576 Bytes -> Algo 1 proto 1 time 39.646954} (2.22; ids from nccl_common.h).
 *
 * @param source {@code file:line}
 * @param collective the collective, or null when the line does not name it (2.22 and older)
 * @param nRanks ranks of the communicator the log describes, or 0 when unknown
 * @param nNodes nodes of that communicator, or 0 when unknown
 * @param nBytes size in bytes as the tuner sees it (2.24+ lines print AllGather and
 *     ReduceScatter per rank; the parser multiplies those by nRanks)
 * @param algorithm the algorithm NCCL ran
 * @param protocol the protocol NCCL ran
 */
public record Selection(
    String source,
    Collective collective,
    int nRanks,
    int nNodes,
    long nBytes,
    Algorithm algorithm,
    Protocol protocol) {

  /** @return the selection as a run configuration with NCCL's own channel count */
  public RunConfig config() {
    return new RunConfig(algorithm, protocol, 0);
  }
}
