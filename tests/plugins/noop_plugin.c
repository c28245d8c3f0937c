/*
 * noop_plugin.c -- a v3 tuner plugin that changes nothing: getCollInfo returns at once, so
 * NCCL (and the harness) keep their own choice. Name "noop". It logs one INFO line at init and
 * one at destroy (shown with NCCL_DEBUG=INFO), which lets tests see both calls happen.
 * Built as libnccl-tuner-noop.so: NCCL_TUNER_PLUGIN=noop finds it on the library path.
 */
#include <stdlib.h>

#include "nccl_tuner_abi.h"

typedef struct {
  ncclDebugLogger_t log;
  size_t nRanks, nNodes;
} noop_ctx_t;

static ncclResult_t noop_init(size_t nRanks, size_t nNodes, ncclDebugLogger_t log, void** context) {
  noop_ctx_t* c = malloc(sizeof *c);
  if (!c) return ncclSystemError;
  *c = (noop_ctx_t){log, nRanks, nNodes};
  if (log)
    log(NCCL_LOG_INFO, NCCL_TUNING, __FILE__, __LINE__, "TUNER/Noop: init nRanks %zu nNodes %zu", nRanks, nNodes);
  *context = c;
  return ncclSuccess;
}

static ncclResult_t noop_get_coll_info(void* context, ncclFunc_t collType, size_t nBytes, int numPipeOps,
                                       float** collCostTable, int numAlgo, int numProto, int* nChannels) {
  (void)context;
  (void)collType;
  (void)nBytes;
  (void)numPipeOps;
  (void)collCostTable;
  (void)numAlgo;
  (void)numProto;
  (void)nChannels;
  return ncclSuccess;
}

static ncclResult_t noop_destroy(void* context) {
  noop_ctx_t* c = context;
  if (c && c->log)
    c->log(NCCL_LOG_INFO, NCCL_TUNING, __FILE__, __LINE__, "TUNER/Noop: destroy nRanks %zu nNodes %zu", c->nRanks,
           c->nNodes);
  free(c);
  return ncclSuccess;
}

/* The one exported symbol (v3: NCCL 2.19 and later). */
__attribute__((visibility("default"))) const ncclTuner_v3_t ncclTunerPlugin_v3 = {
  .name = "noop",
  .init = noop_init,
  .getCollInfo = noop_get_coll_info,
  .destroy = noop_destroy,
};
