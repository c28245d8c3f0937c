/*
 * chain_profiler.c -- a test profiler plugin for NCCL_TUNER_JAVA_PROFILER_CHAIN: counts the events
 * it receives by type and checks each one's parent (NCCL's links, shared/design/profiler-facts.md):
 *   v5: CollApi, P2pApi, KernelLaunch under GroupApi; Coll under CollApi with coll.parentGroup its
 *       Group; ProxyOp and KernelCh under Coll; ProxyStep under ProxyOp; GroupApi, Group NULL.
 *   v4 (built with -DCHAIN_V4): Coll under its Group; no API events at all.
 * A stop or record on a handle that is not one of its live events counts as a bad handle; any
 * call after finalize as late. At finalize it prints one line on stderr:
 *   chain: v5 rank=0 GroupApi=.. CollApi=.. P2pApi=.. KernelLaunch=.. Group=.. Coll=.. P2p=..
 *          ProxyOp=.. ProxyStep=.. KernelCh=.. kernelChStops=.. badParents=.. badHandles=.. open=.. late=..
 * and at exit "chain: late=N" (calls after its finalize).
 * Environment: CHAIN_TEST_MASK (its activation mask, default ncclProfileProxyOp: a type the
 * nccl-tuner-java profiler does not ask for), CHAIN_TEST_FAIL_INIT=1 (init fails).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "nccl_profiler_abi.h"

#define MAX_EVENTS (1u << 18)
#define EV_MAGIC 0x43484e45u

typedef struct ev {
  uint32_t magic;
  uint32_t type;
  struct ev* parent;
  int open;
} ev_t;

typedef struct {
  int finalized;
  int rank;
} ctx_t;

static ev_t events[MAX_EVENTS];
static uint32_t nEvents;
static ctx_t ctxs[64];
static int nCtx;
static unsigned long counts[16], kernelChStops, badParents, badHandles, late;

static int bit(uint64_t type) {
  for (int i = 0; i < 16; i++)
    if (type == (1ull << i)) return i;
  return 15;
}

static ev_t* evOf(void* h) {
  ev_t* e = h;
  if (e < events || e >= events + MAX_EVENTS || e->magic != EV_MAGIC) return NULL;
  return e;
}

static int parentIs(void* p, uint64_t type) {
  ev_t* e = evOf(p);
  return e != NULL && e->type == type;
}

static ncclResult_t startCommon(void* context, void** eHandle, uint64_t type, void* parent, void* parentGroup) {
  *eHandle = NULL;
  (void)parentGroup;
  ctx_t* c = context;
  if (c == NULL || c->finalized) {
    late++;
    return ncclSuccess;
  }
  int ok = 1;
  switch (type) {
    case ncclProfileGroupApi:
    case ncclProfileGroup:
    case ncclProfileProxyCtrl: ok = parent == NULL; break;
    case ncclProfileCollApi:
    case ncclProfileP2pApi:
    case ncclProfileKernelLaunch: ok = parentIs(parent, ncclProfileGroupApi); break;
#ifdef CHAIN_V4
    case ncclProfileColl:
    case ncclProfileP2p: ok = parentIs(parent, ncclProfileGroup); break;
#else
    case ncclProfileColl: ok = parentIs(parent, ncclProfileCollApi) && parentIs(parentGroup, ncclProfileGroup); break;
    case ncclProfileP2p: ok = parentIs(parent, ncclProfileP2pApi) && parentIs(parentGroup, ncclProfileGroup); break;
#endif
    case ncclProfileProxyOp:
    case ncclProfileKernelCh: ok = parentIs(parent, ncclProfileColl) || parentIs(parent, ncclProfileP2p); break;
    case ncclProfileProxyStep: ok = parentIs(parent, ncclProfileProxyOp); break;
    default: break;
  }
  if (!ok) badParents++;
  counts[bit(type)]++;
  uint32_t i = __atomic_fetch_add(&nEvents, 1, __ATOMIC_RELAXED);
  if (i >= MAX_EVENTS) return ncclSuccess;
  events[i] = (ev_t){EV_MAGIC, (uint32_t)type, evOf(parent), 1};
  *eHandle = &events[i];
  return ncclSuccess;
}

static ncclResult_t stopEvent(void* eHandle) {
  ev_t* e = evOf(eHandle);
  if (nCtx > 0 && ctxs[0].finalized) late++;
  if (e == NULL || !e->open) badHandles++;
  else e->open = 0;
  return ncclSuccess;
}

static ncclResult_t recordEventState(void* eHandle, ncclProfilerEventState_t eState,
                                     ncclProfilerEventStateArgs_v5_t* a) {
  ev_t* e = evOf(eHandle);
  if (nCtx > 0 && ctxs[0].finalized) late++;
  if (e == NULL || !e->open) badHandles++;
  else if (eState == ncclProfilerKernelChStop && a != NULL && e->type == ncclProfileKernelCh) kernelChStops++;
  return ncclSuccess;
}

static ncclResult_t initCommon(void** context, int* mask, int rank) {
  *context = NULL;
  const char* f = getenv("CHAIN_TEST_FAIL_INIT");
  if (f != NULL && f[0] == '1') return ncclInternalError;
  if (nCtx >= 64) return ncclInternalError;
  ctx_t* c = &ctxs[nCtx++];
  c->rank = rank;
  const char* m = getenv("CHAIN_TEST_MASK");
  *mask = m != NULL ? (int)strtol(m, NULL, 0) : ncclProfileProxyOp;
  *context = c;
  return ncclSuccess;
}

static ncclResult_t finalize(void* context) {
  ctx_t* c = context;
  if (c == NULL || c->finalized) {
    late++;
    return ncclSuccess;
  }
  c->finalized = 1;
  unsigned long open = 0;
  for (uint32_t i = 0; i < nEvents && i < MAX_EVENTS; i++) open += events[i].open;
#ifdef CHAIN_V4
  const char* v = "v4";
#else
  const char* v = "v5";
#endif
  fprintf(stderr,
          "chain: %s rank=%d GroupApi=%lu CollApi=%lu P2pApi=%lu KernelLaunch=%lu Group=%lu Coll=%lu P2p=%lu "
          "ProxyOp=%lu ProxyStep=%lu KernelCh=%lu kernelChStops=%lu badParents=%lu badHandles=%lu open=%lu late=%lu\n",
          v, c->rank, counts[8], counts[9], counts[10], counts[11], counts[0], counts[1], counts[2], counts[3],
          counts[4], counts[6], kernelChStops, badParents, badHandles, open, late);
  return ncclSuccess;
}

__attribute__((destructor)) static void atExit(void) {
  fprintf(stderr, "chain: late=%lu\n", late);
}

#ifdef CHAIN_V4
static ncclResult_t init4(void** context, int* mask, const char* commName, uint64_t commHash, int nNodes, int nRanks,
                          int rank, ncclDebugLogger_t logfn) {
  (void)commName;
  (void)commHash;
  (void)nNodes;
  (void)nRanks;
  (void)logfn;
  return initCommon(context, mask, rank);
}
static ncclResult_t start4(void* context, void** eHandle, ncclProfilerEventDescr_v4_t* d) {
  if (eHandle == NULL) return ncclSuccess;
  return startCommon(context, eHandle, d->type, d->parentObj, NULL);
}
__attribute__((visibility("default"))) const ncclProfiler_v4_t ncclProfiler_v4 = {.name = "chain-test-v4",
                                                                                  .init = init4,
                                                                                  .startEvent = start4,
                                                                                  .stopEvent = stopEvent,
                                                                                  .recordEventState = recordEventState,
                                                                                  .finalize = finalize};
#else
static ncclResult_t init5(void** context, uint64_t commId, int* mask, const char* commName, int nNodes, int nRanks,
                          int rank, ncclDebugLogger_t logfn) {
  (void)commName;
  (void)commId;
  (void)nNodes;
  (void)nRanks;
  (void)logfn;
  return initCommon(context, mask, rank);
}
static ncclResult_t start5(void* context, void** eHandle, ncclProfilerEventDescr_v5_t* d) {
  if (eHandle == NULL) return ncclSuccess;
  void* pg = d->type == ncclProfileColl ? d->coll.parentGroup : d->type == ncclProfileP2p ? d->p2p.parentGroup : NULL;
  return startCommon(context, eHandle, d->type, d->parentObj, pg);
}
__attribute__((visibility("default"))) const ncclProfiler_v5_t ncclProfiler_v5 = {.name = "chain-test",
                                                                                  .init = init5,
                                                                                  .startEvent = start5,
                                                                                  .stopEvent = stopEvent,
                                                                                  .recordEventState = recordEventState,
                                                                                  .finalize = finalize};
#endif
