/*
 * noop_profiler.c -- the floor of the profiler bench (make bench, tests/hosts/profiler_host.c
 * --bench): a profiler that asks for what nccl-tuner-java's asks for (ncclProfileKernelCh, so the
 * host plays the same events) and does nothing with them. Every start returns one static non-NULL
 * handle, so NCCL (the host) makes the same stop and record calls as for a real plugin.
 */
#include <stdint.h>

#include "nccl_profiler_abi.h"

static uint64_t handle;
static int context;

static ncclResult_t init5(void** ctx, uint64_t commId, int* mask, const char* commName, int nNodes, int nranks,
                          int rank, ncclDebugLogger_t logfn) {
  (void)commId;
  (void)commName;
  (void)nNodes;
  (void)nranks;
  (void)rank;
  (void)logfn;
  *ctx = &context;
  *mask = ncclProfileKernelCh;
  return ncclSuccess;
}
static ncclResult_t start5(void* ctx, void** eHandle, ncclProfilerEventDescr_v5_t* d) {
  (void)ctx;
  (void)d;
  *eHandle = &handle;
  return ncclSuccess;
}
static ncclResult_t start6(void* ctx, void** eHandle, ncclProfilerEventDescr_v6_t* d) {
  (void)ctx;
  (void)d;
  *eHandle = &handle;
  return ncclSuccess;
}
static ncclResult_t stop(void* eHandle) {
  (void)eHandle;
  return ncclSuccess;
}
static ncclResult_t record(void* eHandle, ncclProfilerEventState_t s, ncclProfilerEventStateArgs_v5_t* a) {
  (void)eHandle;
  (void)s;
  (void)a;
  return ncclSuccess;
}
static ncclResult_t fin(void* ctx) {
  (void)ctx;
  return ncclSuccess;
}

__attribute__((visibility("default"))) const ncclProfiler_v5_t ncclProfiler_v5 = {.name = "noop-profiler",
                                                                                  .init = init5,
                                                                                  .startEvent = start5,
                                                                                  .stopEvent = stop,
                                                                                  .recordEventState = record,
                                                                                  .finalize = fin};
__attribute__((visibility("default"))) const ncclProfiler_v6_t ncclProfiler_v6 = {.name = "noop-profiler",
                                                                                  .init = init5,
                                                                                  .startEvent = start6,
                                                                                  .stopEvent = stop,
                                                                                  .recordEventState = record,
                                                                                  .finalize = fin};
