/*
 * nccl_select.h -- NCCL's selection after the tuner's getCollInfo, for the C test hosts that play
 * NCCL (tests/harness/harness.c, tests/simcluster/simcluster.c, tests/hosts/profiler_host.c,
 * tests/oracle/canary_host.c). Header-only. The Java side's is engine/Engine.ncclPick.
 *
 * NCCL 2.28.9 src/enqueue.cc topoGetAlgoInfo (the same rule from 2.19 to 2.30.7):
 *   float minTime = 3600000000.0;
 *   for a, for p: if (table[a][p] == NCCL_ALGO_PROTO_IGNORE) continue;
 *                 if (table[a][p] >= 0.0 && table[a][p] < minTime) { algorithm = a; protocol = p; minTime = ...; }
 * so: the strict minimum over the entries >= 0 and below 3.6e9 us (1 h), algorithm-major, the
 * first minimum winning ties; -1 (NCCL_ALGO_PROTO_IGNORE) and NaN are never chosen.
 */
#ifndef NCCLTJ_NCCL_SELECT_H_
#define NCCLTJ_NCCL_SELECT_H_

#include "nccl_tuner_abi.h"

/* NCCL's topoGetAlgoInfo starts minTime here (1 h in us). */
#define TH_NCCL_MIN_TIME_INIT 3600000000.0f

/* The pick in a numAlgo x numProto table (algorithm-major): a * numProto + p, or -1 for none. */
static __attribute__((unused)) int th_nccl_pick(const float* table, int numAlgo, int numProto) {
  float minTime = TH_NCCL_MIN_TIME_INIT;
  int pick = -1;
  for (int a = 0; a < numAlgo; a++)
    for (int p = 0; p < numProto; p++) {
      float c = table[a * numProto + p];
      if (c == NCCL_ALGO_PROTO_IGNORE) continue;
      if (c >= 0.0f && c < minTime) {
        pick = a * numProto + p;
        minTime = c;
      }
    }
  return pick;
}

#endif /* NCCLTJ_NCCL_SELECT_H_ */
