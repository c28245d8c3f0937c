package io.nccltuner.model;

import io.nccltuner.engine.Engine;
import io.nccltuner.policy.Algorithm;
import io.nccltuner.policy.Protocol;
import java.lang.foreign.MemorySegment;

/**
 * NCCL's selection over a cost table, as an {@link AlgoProto}: {@link Engine#ncclPick} (the strict
 * minimum of the entries {@code >= 0}, scanned algorithm-major from 3600000000 us; src/enqueue.cc
 * topoGetAlgoInfo, 2.19 .. 2.30, and getAlgoInfo of 2.18). Ties keep the earlier entry.
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
    int best = Engine.ncclPick(MemorySegment.ofArray(costTable), costTable.length / numProto, numProto);
    return best < 0 ? null : new AlgoProto(Algorithm.ofId(best / numProto), Protocol.ofId(best % numProto));
  }
}
