/*
 * profiler.c -- the NCCL profiler plugin in libnccl-tuner-java.so: ncclProfiler_v4 (NCCL 2.27.3),
 * _v5 (2.28.3) and _v6 (2.29.2), which NCCL opens when NCCL_PROFILER_PLUGIN names this library
 * (src/plugin/profiler.cc). It only measures: no decision ever depends on what it sees.
 *
 * Per communicator it joins each Coll event (what NCCL executes: algo, proto, nChannels) with the
 * tuner's decision for it (the code the engine returned from getCollInfo, nccltj_bridge.h
 * NCCLTJ_DECISION_*), takes the collective's device time from its KernelCh events (the span from
 * the earliest channel start to the latest ncclProfilerKernelChStop, GPU globaltimer ns), and
 * aggregates per (collective, size bucket, arm, decided, executed): count, sum, sum of squares,
 * min, max and a log histogram. At finalize the measurements go to the engine in one control
 * upcall (NCCLTJ_CALL_MEASURED), which writes them to the decision log (docs/canary.md).
 *
 * Threads: NCCL calls init, Coll and finalize on host threads (one communicator's enqueue at a
 * time) and KernelCh events on its proxy thread, after the Coll event stopped
 * (shared/design/profiler-facts.md). The proxy-thread path does no I/O, no allocation and takes
 * only this communicator's aggregation mutex, once per collective; it never enters the JVM (a
 * safepoint there would stall NCCL's network progress). Every entry point returns ncclSuccess;
 * nothing is written to fds 1 and 2.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nccl_profiler_abi.h"
#include "shim_internal.h"

/* Collectives in flight per communicator: a record is reused POOL collectives later. NCCL's
 * proxy loses KernelCh entries more than 64 works behind on a channel (the device's counter ring),
 * so a channel event never refers to a record that far back. */
#define POOL 1024u
/* Decisions waiting for their Coll event, per communicator, and how far a Coll event looks. */
#define RING 256u
#define SCAN 64u
#define STALE (RING / 2u)
/* Tuner handles (the engine's slot numbers) the join table covers; communicators above it are
 * measured but not joined. */
#define MAX_SLOTS 8192u

#define COMM_TAG 0x4e54504du /* "NTPM" */
#define COLL_TAG 0x4e545043u /* "NTPC" */

/* NCCL's spellings (src/collectives.cc ncclFuncToString, ncclAlgoToString, ncclProtoToString,
 * 2.27 .. 2.30), in ncclFunc_t and NCCL_ALGO_* / NCCL_PROTO_* order. */
static const char* const kFunc[] = {"Broadcast", "Reduce", "AllGather", "ReduceScatter", "AllReduce"};
static const char* const kAlgo[] = {"TREE", "RING", "COLLNET_DIRECT", "COLLNET_CHAIN", "NVLS", "NVLS_TREE", "PAT"};
static const char* const kProto[] = {"LL", "LL128", "SIMPLE"};

typedef struct {
  int32_t code;
  int32_t numProto;
  int32_t func;
  int32_t unused;
  uint64_t remaining; /* bytes of this decision no Coll event claimed yet; 0 = consumed */
} pending_t;

struct profComm;

typedef struct __attribute__((aligned(64))) {
  uint32_t tag;
  int32_t inUse; /* host thread only */
  struct profComm* comm;
  int32_t func, bucket, arm, decided, decidedChannels, executed, nChannels;
  uint32_t started, stopped; /* atomic: KernelCh events */
  int32_t done;              /* atomic: 0 open, 1 aggregated (or being) */
  uint64_t tmin, tmax;       /* atomic: GPU ns */
} collRec;

typedef struct profComm {
  uint32_t tag;
  int32_t version;
  uint64_t commId;
  int32_t rank, nRanks, nNodes;
  int32_t profilerLive, tunerLive; /* under registryMutex */
  ncclDebugLogger_t logger;
  int64_t tunerHandle; /* atomic; 0: no tuner communicator joined */
  int64_t joinedHandle; /* the tuner communicator joined (kept after its destroy) */
  uint64_t tunerCommId; /* the commId the tuner's init had: 0 under tuner v3 and v4 */
  int32_t joined;
  uint32_t slot;
  /* decisions: one producer (getCollInfo), one consumer (Coll start) */
  pending_t ring[RING];
  uint32_t head; /* atomic, producer */
  uint32_t tail; /* atomic, consumer */
  uint64_t decisionsDropped; /* atomic */
  /* collectives (host thread) */
  collRec* pool;
  uint32_t next;
  uint64_t collectives, unjoined;
  /* aggregation */
  pthread_mutex_t mu;
  nccltj_series_t* series;
  int32_t nSeries;
  uint64_t untimed, unaggregated;
  struct profComm* nextFree;
} profComm;

HIDDEN int nccltjProfiling;
static pthread_mutex_t registryMutex = PTHREAD_MUTEX_INITIALIZER;
static profComm* freeComms;
static profComm* bySlot[MAX_SLOTS];
/* The last profiler context a thread opened: NCCL runs the profiler's init, then the tuner's, on
 * the same thread for one communicator (src/init.cc, 2.27 .. 2.30), which joins them where the
 * tuner has no commId (v3, v4). */
static __thread profComm* openedHere;
static char dummyEvent; /* the handle of the parent events this plugin does not look at */

/* ---- the tuner's side (plugin.c) ------------------------------------------------------------- */

HIDDEN void nccltjProfilerTunerInit(int64_t handle, uint64_t commId, size_t nRanks, size_t nNodes) {
  uint32_t slot = (uint32_t)handle;
  pthread_mutex_lock(&registryMutex);
  profComm* pc = openedHere;
  openedHere = NULL;
  if (pc != NULL && pc->profilerLive && !pc->tunerLive && (size_t)pc->nRanks == nRanks &&
      (size_t)pc->nNodes == nNodes && (commId == 0 || commId == pc->commId) && slot > 0 && slot < MAX_SLOTS) {
    pc->tunerLive = 1;
    pc->joined = 1;
    pc->joinedHandle = handle;
    pc->tunerCommId = commId;
    pc->slot = slot;
    __atomic_store_n(&pc->tunerHandle, handle, __ATOMIC_RELEASE);
    __atomic_store_n(&bySlot[slot], pc, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&registryMutex);
}

static void release(profComm* pc) { /* under registryMutex, when neither side holds it */
  pc->tag = 0;
  pc->nextFree = freeComms;
  freeComms = pc;
}

HIDDEN void nccltjProfilerTunerDestroy(int64_t handle) {
  uint32_t slot = (uint32_t)handle;
  if (slot == 0 || slot >= MAX_SLOTS) return;
  pthread_mutex_lock(&registryMutex);
  profComm* pc = bySlot[slot];
  if (pc != NULL && pc->tunerLive && pc->tunerHandle == handle) {
    __atomic_store_n(&bySlot[slot], NULL, __ATOMIC_RELEASE);
    __atomic_store_n(&pc->tunerHandle, 0, __ATOMIC_RELEASE);
    pc->tunerLive = 0;
    if (!pc->profilerLive) release(pc);
  }
  pthread_mutex_unlock(&registryMutex);
}

HIDDEN void nccltjProfilerDecision(int64_t handle, int collType, size_t nBytes, int numProto, int code) {
  uint32_t slot = (uint32_t)handle;
  if (slot >= MAX_SLOTS) return;
  profComm* pc = __atomic_load_n(&bySlot[slot], __ATOMIC_ACQUIRE);
  if (pc == NULL || __atomic_load_n(&pc->tunerHandle, __ATOMIC_ACQUIRE) != handle) return;
  uint32_t h = __atomic_load_n(&pc->head, __ATOMIC_RELAXED);
  uint32_t t = __atomic_load_n(&pc->tail, __ATOMIC_ACQUIRE);
  if (h - t >= RING) {
    __atomic_fetch_add(&pc->decisionsDropped, 1, __ATOMIC_RELAXED);
    return;
  }
  pending_t* e = &pc->ring[h % RING];
  e->code = code;
  e->numProto = numProto > 0 ? numProto : 1;
  e->func = collType;
  e->remaining = nBytes;
  __atomic_store_n(&pc->head, h + 1, __ATOMIC_RELEASE);
}

/* ---- the join ------------------------------------------------------------------------------- */

/* The oldest decision of this collective whose bytes still cover the Coll event's own; 0 if none
 * (consumer side: the Coll event's host thread). Decisions more than STALE behind are dropped. */
static int takeDecision(profComm* pc, int func, uint64_t bytes, int32_t* code, int32_t* numProto) {
  uint32_t t = __atomic_load_n(&pc->tail, __ATOMIC_RELAXED);
  uint32_t h = __atomic_load_n(&pc->head, __ATOMIC_ACQUIRE);
  while (h - t > STALE) {
    if (pc->ring[t % RING].remaining != 0) __atomic_fetch_add(&pc->decisionsDropped, 1, __ATOMIC_RELAXED);
    t++;
  }
  int found = 0;
  for (uint32_t i = t; i != h && i - t < SCAN; i++) {
    pending_t* e = &pc->ring[i % RING];
    if (e->remaining != 0 && e->func == func && e->remaining >= bytes) {
      *code = e->code;
      *numProto = e->numProto;
      e->remaining = bytes == 0 ? 0 : e->remaining - bytes;
      found = 1;
      break;
    }
  }
  while (t != h && pc->ring[t % RING].remaining == 0) t++;
  __atomic_store_n(&pc->tail, t, __ATOMIC_RELEASE);
  return found;
}

static int lookup(const char* s, const char* const* names, int n) {
  if (s == NULL) return -1;
  for (int i = 0; i < n; i++)
    if (strcmp(s, names[i]) == 0) return i;
  return -1;
}

/* ncclTypeSize by ncclDatatypeToString's spelling (src/include/collectives.h): 8 for the 64-bit
 * types, 4 for the 32-bit, 2 for Float16/Bfloat16, 1 for the 8-bit ones (ncclUint8 is "Unknown"). */
static uint64_t typeSize(const char* d) {
  if (d == NULL) return 1;
  if (strstr(d, "64") != NULL) return 8;
  if (strstr(d, "32") != NULL) return 4;
  if (strstr(d, "16") != NULL) return 2;
  return 1;
}

/* The decision's fields in the series' encoding (configurations as algorithm * 3 + protocol). */
static void decode(collRec* r, int32_t code, int32_t numProto) {
  r->bucket = code == 0 ? -1 : code & NCCLTJ_DECISION_BUCKET_MASK;
  r->decided = -1;
  r->decidedChannels = 0;
  if ((code & NCCLTJ_DECISION_RULE) == 0) {
    r->arm = NCCLTJ_ARM_UNRULED;
    return;
  }
  r->arm = (code >> NCCLTJ_DECISION_ARM_SHIFT) & 3;
  int entry = r->arm == NCCLTJ_ARM_POLICY ? (code >> NCCLTJ_DECISION_CAND_SHIFT) & NCCLTJ_DECISION_ENTRY_MASK
                                          : (code >> NCCLTJ_DECISION_NCCL_SHIFT) & NCCLTJ_DECISION_ENTRY_MASK;
  if (entry != NCCLTJ_DECISION_NONE) r->decided = (entry / numProto) * NCCL_NUM_PROTOCOLS + entry % numProto;
  if (r->arm == NCCLTJ_ARM_POLICY)
    r->decidedChannels = (code >> NCCLTJ_DECISION_CHANNELS_SHIFT) & NCCLTJ_DECISION_CHANNELS_MASK;
}

/* ---- aggregation ---------------------------------------------------------------------------- */

static int histIndex(uint64_t ns) {
  if (ns < (1ull << NCCLTJ_HIST_MIN_LOG2)) return 0;
  int l = 63 - __builtin_clzll(ns);
  if (l >= NCCLTJ_HIST_MIN_LOG2 + NCCLTJ_HIST_OCTAVES) return NCCLTJ_HIST_BUCKETS - 1;
  int j = (int)((ns >> (l - 4)) & (NCCLTJ_HIST_SUB - 1));
  return 1 + (l - NCCLTJ_HIST_MIN_LOG2) * NCCLTJ_HIST_SUB + j;
}

/* Adds a finished collective to its series (any thread; once per record, claimed by `done`). */
static void aggregate(profComm* pc, collRec* r) {
  uint32_t started = __atomic_load_n(&r->started, __ATOMIC_ACQUIRE);
  uint32_t stopped = __atomic_load_n(&r->stopped, __ATOMIC_ACQUIRE);
  uint64_t tmin = __atomic_load_n(&r->tmin, __ATOMIC_ACQUIRE);
  uint64_t tmax = __atomic_load_n(&r->tmax, __ATOMIC_ACQUIRE);
  int timed = started > 0 && stopped > 0 && tmax > tmin;
  pthread_mutex_lock(&pc->mu);
  if (pc->series == NULL) pc->series = calloc(NCCLTJ_MAX_SERIES, sizeof(nccltj_series_t));
  nccltj_series_t* s = NULL;
  for (int i = 0; pc->series != NULL && i < pc->nSeries; i++) {
    nccltj_series_t* c = &pc->series[i];
    if (c->collType == r->func && c->bucket == r->bucket && c->arm == r->arm && c->decided == r->decided &&
        c->decidedChannels == r->decidedChannels && c->executed == r->executed && c->nChannels == r->nChannels) {
      s = c;
      break;
    }
  }
  if (s == NULL && pc->series != NULL && pc->nSeries < NCCLTJ_MAX_SERIES) {
    s = &pc->series[pc->nSeries++];
    s->collType = r->func;
    s->bucket = r->bucket;
    s->arm = r->arm;
    s->decided = r->decided;
    s->decidedChannels = r->decidedChannels;
    s->executed = r->executed;
    s->nChannels = r->nChannels;
  }
  if (s == NULL) {
    pc->unaggregated++;
  } else {
    s->count++;
    if ((int32_t)started > s->kernelChannels) s->kernelChannels = (int32_t)started;
    if (timed) {
      double us = (double)(tmax - tmin) / 1000.0;
      if (s->timed == 0 || us < s->minUs) s->minUs = us;
      if (s->timed == 0 || us > s->maxUs) s->maxUs = us;
      s->timed++;
      s->sumUs += us;
      s->sumSqUs += us * us;
      s->hist[histIndex(tmax - tmin)]++;
    }
  }
  if (!timed) pc->untimed++;
  pthread_mutex_unlock(&pc->mu);
}

static void finish(profComm* pc, collRec* r) {
  int32_t open = 0;
  if (__atomic_compare_exchange_n(&r->done, &open, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) aggregate(pc, r);
}

/* ---- events --------------------------------------------------------------------------------- */

static profComm* commOf(void* context) {
  profComm* pc = context;
  return pc != NULL && pc->tag == COMM_TAG ? pc : NULL;
}

static collRec* collOf(profComm* pc, void* p) {
  uintptr_t a = (uintptr_t)p, lo = (uintptr_t)pc->pool;
  if (pc->pool == NULL || a < lo || a >= lo + POOL * sizeof(collRec) || (a - lo) % sizeof(collRec) != 0) return NULL;
  return (collRec*)p;
}

static void* collStart(profComm* pc, const char* func, size_t count, const char* datatype, const char* algo,
                       const char* proto, uint8_t nChannels) {
  int f = lookup(func, kFunc, 5);
  if (f < 0) return &dummyEvent;
  if (pc->pool == NULL) {
    pc->pool = aligned_alloc(64, POOL * sizeof(collRec));
    if (pc->pool == NULL) return &dummyEvent;
    memset(pc->pool, 0, POOL * sizeof(collRec));
  }
  collRec* r = &pc->pool[pc->next++ % POOL];
  if (r->inUse) finish(pc, r); /* the record's last use, POOL collectives ago */
  uint64_t bytes = typeSize(datatype) * count * ((f == 2 || f == 3) ? (uint64_t)pc->nRanks : 1u);
  int a = lookup(algo, kAlgo, 7), p = lookup(proto, kProto, 3);
  r->tag = COLL_TAG;
  r->inUse = 1;
  r->comm = pc;
  r->func = f;
  r->executed = a < 0 || p < 0 ? -1 : a * NCCL_NUM_PROTOCOLS + p;
  r->nChannels = nChannels;
  __atomic_store_n(&r->started, 0, __ATOMIC_RELAXED);
  __atomic_store_n(&r->stopped, 0, __ATOMIC_RELAXED);
  __atomic_store_n(&r->tmin, UINT64_MAX, __ATOMIC_RELAXED);
  __atomic_store_n(&r->tmax, 0, __ATOMIC_RELAXED);
  int32_t code = 0, numProto = 1;
  if (takeDecision(pc, f, bytes, &code, &numProto)) {
    decode(r, code, numProto);
  } else {
    r->arm = NCCLTJ_ARM_UNJOINED;
    r->bucket = -1;
    r->decided = -1;
    r->decidedChannels = 0;
    pc->unjoined++;
  }
  pc->collectives++;
  __atomic_store_n(&r->done, 0, __ATOMIC_RELEASE);
  return r;
}

static void* kernelChStart(profComm* pc, void* parent, uint64_t pTimer) {
  collRec* r = pc != NULL ? collOf(pc, parent) : NULL;
  if (r == NULL) return NULL;
  uint64_t cur = __atomic_load_n(&r->tmin, __ATOMIC_RELAXED);
  while (pTimer < cur && !__atomic_compare_exchange_n(&r->tmin, &cur, pTimer, 1, __ATOMIC_RELEASE, __ATOMIC_RELAXED)) {
  }
  __atomic_fetch_add(&r->started, 1, __ATOMIC_RELEASE);
  return (void*)((uintptr_t)r | 1u); /* odd: a channel of r */
}

static collRec* channelOf(void* handle) {
  uintptr_t a = (uintptr_t)handle;
  if ((a & 1u) == 0) return NULL;
  collRec* r = (collRec*)(a & ~(uintptr_t)1u);
  return r->tag == COLL_TAG ? r : NULL;
}

static ncclResult_t stopEvent(void* eHandle) {
  collRec* r = channelOf(eHandle);
  if (r != NULL) {
    uint32_t s = __atomic_add_fetch(&r->stopped, 1, __ATOMIC_ACQ_REL);
    if (r->nChannels > 0 && s >= (uint32_t)r->nChannels && s >= __atomic_load_n(&r->started, __ATOMIC_ACQUIRE))
      finish(r->comm, r);
  }
  return ncclSuccess;
}

static ncclResult_t recordEventState(void* eHandle, ncclProfilerEventState_t eState,
                                     ncclProfilerEventStateArgs_v5_t* eStateArgs) {
  collRec* r = eState == ncclProfilerKernelChStop && eStateArgs != NULL ? channelOf(eHandle) : NULL;
  if (r != NULL) {
    uint64_t t = eStateArgs->kernelCh.pTimer;
    uint64_t cur = __atomic_load_n(&r->tmax, __ATOMIC_RELAXED);
    while (t > cur && !__atomic_compare_exchange_n(&r->tmax, &cur, t, 1, __ATOMIC_RELEASE, __ATOMIC_RELAXED)) {
    }
  }
  return ncclSuccess;
}

/* The parent events the measurement needs NCCL to create (so that their children come): a
 * non-NULL handle NCCL passes back and this plugin ignores. */
static int isParent(uint64_t type) {
  return (type & (ncclProfileGroup | ncclProfileGroupApi | ncclProfileCollApi | ncclProfileKernelLaunch)) != 0;
}

static ncclResult_t startV5(void* context, void** eHandle, ncclProfilerEventDescr_v5_t* d) {
  if (eHandle == NULL) return ncclSuccess;
  *eHandle = NULL;
  profComm* pc = commOf(context);
  if (pc == NULL || d == NULL) return ncclSuccess;
  if (d->type == ncclProfileColl)
    *eHandle = collStart(pc, d->coll.func, d->coll.count, d->coll.datatype, d->coll.algo, d->coll.proto,
                         d->coll.nChannels);
  else if (d->type == ncclProfileKernelCh)
    *eHandle = kernelChStart(pc, d->parentObj, d->kernelCh.pTimer);
  else if (isParent(d->type))
    *eHandle = &dummyEvent;
  return ncclSuccess;
}

/* v6's descriptor starts with v5's members in the same places (profiler_v6.h). */
static ncclResult_t startV6(void* context, void** eHandle, ncclProfilerEventDescr_v6_t* d) {
  return startV5(context, eHandle, (ncclProfilerEventDescr_v5_t*)(void*)d);
}

static ncclResult_t startV4(void* context, void** eHandle, ncclProfilerEventDescr_v4_t* d) {
  if (eHandle == NULL) return ncclSuccess;
  *eHandle = NULL;
  profComm* pc = commOf(context);
  if (pc == NULL || d == NULL) return ncclSuccess;
  if (d->type == ncclProfileColl)
    *eHandle = collStart(pc, d->coll.func, d->coll.count, d->coll.datatype, d->coll.algo, d->coll.proto,
                         d->coll.nChannels);
  else if (d->type == ncclProfileKernelCh)
    *eHandle = kernelChStart(pc, d->parentObj, d->kernelCh.pTimer);
  else if (isParent(d->type))
    *eHandle = &dummyEvent;
  return ncclSuccess;
}

/* ---- init and finalize ---------------------------------------------------------------------- */

static ncclResult_t profInit(int version, void** context, uint64_t commId, int* eActivationMask, int nNodes,
                             int nRanks, int rank, ncclDebugLogger_t logfn) {
  if (context == NULL) return ncclSuccess;
  *context = NULL;
  const char* off = getenv("NCCL_TUNER_JAVA_PROFILER");
  if (off != NULL && strcmp(off, "0") == 0) return ncclSuccess; /* mask left as NCCL set it */
  pthread_mutex_lock(&registryMutex);
  profComm* pc = freeComms;
  if (pc != NULL) {
    freeComms = pc->nextFree;
  } else {
    pc = calloc(1, sizeof *pc);
  }
  if (pc != NULL) {
    collRec* pool = pc->pool;
    nccltj_series_t* series = pc->series;
    memset(pc, 0, sizeof *pc); /* a context from the free list holds no lock */
    pthread_mutex_init(&pc->mu, NULL);
    pc->pool = pool;
    pc->series = series;
    if (pool != NULL) memset(pool, 0, POOL * sizeof(collRec));
    if (series != NULL) memset(series, 0, NCCLTJ_MAX_SERIES * sizeof(nccltj_series_t));
    pc->tag = COMM_TAG;
    pc->version = version;
    pc->commId = commId;
    pc->rank = rank;
    pc->nRanks = nRanks;
    pc->nNodes = nNodes;
    pc->logger = logfn;
    pc->profilerLive = 1;
    openedHere = pc;
    __atomic_store_n(&nccltjProfiling, 1, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&registryMutex);
  if (pc == NULL) return ncclSuccess;
  /* KernelCh alone: NCCL then also creates Group and Coll (v5+: GroupApi, CollApi) as parents
   * (src/plugin/profiler.cc), and the kernel writes the channels' GPU timestamps. */
  if (eActivationMask != NULL) *eActivationMask = ncclProfileKernelCh;
  *context = pc;
  return ncclSuccess;
}

static ncclResult_t finalize(void* context) {
  profComm* pc = commOf(context);
  if (pc == NULL) return ncclSuccess;
  for (uint32_t i = 0; pc->pool != NULL && i < POOL; i++)
    if (pc->pool[i].inUse) finish(pc, &pc->pool[i]);
  /* The communicator as the engine's own log lines name it: NCCL's commId, or under tuner v3/v4
   * (no commId) the engine's handle, which its `comm` lines carry (engine.ShadowAggregate). */
  uint64_t logged = pc->joined && pc->tunerCommId == 0 ? (uint64_t)pc->joinedHandle : pc->commId;
  nccltj_measured_t m = {.commId = logged, .rank = pc->rank, .nRanks = pc->nRanks, .nNodes = pc->nNodes,
                         .profilerVersion = pc->version, .nSeries = pc->nSeries, .joined = pc->joined,
                         .collectives = pc->collectives, .unjoined = pc->unjoined, .untimed = pc->untimed,
                         .unaggregated = pc->unaggregated,
                         .decisionsDropped = __atomic_load_n(&pc->decisionsDropped, __ATOMIC_RELAXED),
                         .series = pc->series};
  nccltj_call_t call = {.op = NCCLTJ_CALL_MEASURED, .commId = pc->commId, .logger = (void*)pc->logger,
                        .measured = (uintptr_t)&m};
  if (pc->collectives > 0 || pc->joined) nccltjControl(&call);
  pthread_mutex_lock(&registryMutex);
  pc->profilerLive = 0;
  if (openedHere == pc) openedHere = NULL;
  if (!pc->tunerLive) release(pc);
  pthread_mutex_unlock(&registryMutex);
  return ncclSuccess;
}

static ncclResult_t initV4(void** context, int* eActivationMask, const char* commName, uint64_t commHash, int nNodes,
                           int nranks, int rank, ncclDebugLogger_t logfn) {
  (void)commName;
  return profInit(4, context, commHash, eActivationMask, nNodes, nranks, rank, logfn);
}

static ncclResult_t initV5(void** context, uint64_t commId, int* eActivationMask, const char* commName, int nNodes,
                           int nranks, int rank, ncclDebugLogger_t logfn) {
  (void)commName;
  return profInit(5, context, commId, eActivationMask, nNodes, nranks, rank, logfn);
}

static ncclResult_t initV6(void** context, uint64_t commId, int* eActivationMask, const char* commName, int nNodes,
                           int nranks, int rank, ncclDebugLogger_t logfn) {
  (void)commName;
  return profInit(6, context, commId, eActivationMask, nNodes, nranks, rank, logfn);
}

static const char kName[] = "nccl-tuner-java";

/* NCCL src/plugin/profiler.cc looks these up by name: _v4 from 2.27.3, _v5 from 2.28.3, _v6 from 2.29.2. */
__attribute__((visibility("default"))) const ncclProfiler_v4_t ncclProfiler_v4 = {
    .name = kName,
    .init = initV4,
    .startEvent = startV4,
    .stopEvent = stopEvent,
    .recordEventState = recordEventState,
    .finalize = finalize,
};

__attribute__((visibility("default"))) const ncclProfiler_v5_t ncclProfiler_v5 = {
    .name = kName,
    .init = initV5,
    .startEvent = startV5,
    .stopEvent = stopEvent,
    .recordEventState = recordEventState,
    .finalize = finalize,
};

__attribute__((visibility("default"))) const ncclProfiler_v6_t ncclProfiler_v6 = {
    .name = kName,
    .init = initV6,
    .startEvent = startV6,
    .stopEvent = stopEvent,
    .recordEventState = recordEventState,
    .finalize = finalize,
};
