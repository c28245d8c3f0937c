package io.nccltuner.model;

import io.nccltuner.policy.Algorithm;
import io.nccltuner.policy.Protocol;

/**
 * NCCL's selection over a cost table: the strict minimum of the entries {@code >= 0}, scanned
 * algorithm-major, starting from 3600000000 us (src/enqueue.cc topoGetAlgoInfo, 2.19 .. 2.30; the
 * loop is the same in getAlgoInfo of 2.18). Ties keep the earlier entry.
 */
public final class NcclSelect {
  private NcclSelect() {}

  /**
   * @param costTable numAlgo x numProto times in microseconds, algorithm-major; -1 = ignore
   * @param numProto protocols per algorithm
   * @return NCCL's pick, or null if no entry is {@code >= 0} (NCCL then errors, or before 2.24
   *     falls back to its Ring backup)
   */
  public static AlgoProto pick(float[] costTable, int numProto) {
    float min = 3600000000.0f;
    int best = -1;
    for (int i = 0; i < costTable.length; i++) {
      if (costTable[i] >= 0 && costTable[i] < min) {
        min = costTable[i];
        best = i;
      }
    }
    return best < 0 ? null : new AlgoProto(Algorithm.ofId(best / numProto), Protocol.ofId(best % numProto));
  }
}
