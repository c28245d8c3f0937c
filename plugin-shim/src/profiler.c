/*
 * profiler.c -- the NCCL profiler plugin in libnccl-tuner-java.so: the entry points behind
 * ncclProfiler_v4 (NCCL 2.27.3), _v5 (2.28.3) and _v6 (2.29.2) (exports.c), which NCCL opens when
 * NCCL_PROFILER_PLUGIN names this library (src/plugin/profiler.cc). It only measures: no decision
 * ever depends on what it sees.
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
 *
 * NCCL_TUNER_JAVA_PROFILER_CHAIN=/path/other-profiler.so keeps the user's own profiler: at the
 * first init that library is dlopened and its newest ncclProfiler_vN not newer than the version
 * NCCL chose for us is taken; every event NCCL sends is forwarded to it (v6 -> v5 as the same
 * members, -> v4 translated as NCCL's profiler_v4.cc does), its parents translated to its own
 * handles through wrappers from preallocated pools, and NCCL's activation mask is ours | its own
 * (docs/canary.md, "Keeping your profiler").
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "nccl_names.h"
#include "nccl_profiler_abi.h"
#include "shim_internal.h"

/* Collectives in flight per communicator: a record is reused POOL collectives later. NCCL's
 * proxy loses KernelCh entries more than 64 works behind on a channel (the device's counter ring),
 * so a channel event never refers to a record that far back. */
#define POOL 1024u
/* Decisions waiting for their Coll event, per communicator, and how far a Coll event looks. */
#define RING 256u
#define SCAN 64u
#define STALE SCAN /* older pending decisions than a Coll event looks at are dropped (and counted) */
/* Tuner handles (the engine's slot numbers) the join table covers; communicators above it are
 * measured but not joined. */
#define MAX_SLOTS 8192u

#define COMM_TAG 0x4e54504du  /* "NTPM" */
#define COLL_TAG 0x4e545043u  /* "NTPC" */
#define WRAP_TAG 0x4e545057u  /* "NTPW" */
#define DUMMY_TAG 0x4e545044u /* "NTPD" */

/* The chained profiler (NCCL_TUNER_JAVA_PROFILER_CHAIN): each event the chained plugin holds a
 * handle for is handed to NCCL as a wrapper {our handle, its handle}, from two preallocated pools
 * per communicator. Events that are parents after their own stop (CollApi, P2pApi: of Coll and
 * P2p; Coll, P2p: of the proxy thread's ProxyOp and KernelCh, which start after the Coll stopped)
 * take a ring, reused WRAP_LONG such events later (as the collectives' own pool above); every
 * other event takes a slot of the short pool, claimed with one compare-and-swap and freed at its
 * stop. A start that finds no free slot within WRAP_PROBES is not forwarded (counted; its
 * children reach the chained plugin with a NULL parent). */
#define WRAP_SHORT 4096u
#define WRAP_LONG 2048u
#define WRAP_PROBES 64u
#define LONG_TYPES ((uint64_t)(ncclProfileCollApi | ncclProfileP2pApi | ncclProfileColl | ncclProfileP2p))
#define API_TYPES ((uint64_t)(ncclProfileGroupApi | ncclProfileCollApi | ncclProfileP2pApi | ncclProfileKernelLaunch))
#define CE_TYPES ((uint64_t)(ncclProfileCeColl | ncclProfileCeSync | ncclProfileCeBatch))

/* The collectives measured, Broadcast .. AllReduce (NCCL's names: nccl_names.h); another
 * function's Coll event gets the DUMMY handle. */
#define MEASURED_FUNCS (ncclFuncAllReduce + 1)

typedef struct {
  int32_t code;
  int32_t numProto;
  int32_t func;
  int32_t unused;
  uint64_t remaining; /* bytes of this decision no Coll event claimed yet; 0 = consumed */
} pending_t;

struct profComm;

typedef struct {
  uint32_t tag;  /* WRAP_TAG */
  uint32_t busy; /* short pool: atomic, 0 free, 1 in use; long ring: 2 */
  struct profComm* comm;
  void* ours;   /* this plugin's handle (NULL, DUMMY, a collRec or a channel) */
  void* theirs; /* the chained plugin's */
} wrapRec;

/* The chained library: loaded once, at the first profiler init (under registryMutex). */
typedef struct {
  int tried;
  int version; /* 4..6: the symbol taken; 0: no chain */
  void* lib;
  const char* name;
  ncclResult_t (*init4)(void**, int*, const char*, uint64_t, int, int, int, ncclDebugLogger_t);
  ncclResult_t (*init5)(void**, uint64_t, int*, const char*, int, int, int, ncclDebugLogger_t);
  ncclResult_t (*start)(void* context, void** eHandle, void* eDescr); /* the version's descriptor */
  ncclResult_t (*stop)(void* eHandle);
  ncclResult_t (*record)(void* eHandle, ncclProfilerEventState_t eState, ncclProfilerEventStateArgs_v5_t* a);
  ncclResult_t (*finalize)(void* context);
  int initFailureLogged;
} chain_t;

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
  int64_t tunerHandle;  /* atomic; 0: no tuner communicator joined */
  int64_t joinedHandle; /* the tuner communicator joined (kept after its destroy) */
  uint64_t tunerCommId; /* the commId the tuner's init had: 0 under tuner v3 and v4 */
  int32_t joined;
  uint32_t slot;
  /* decisions: one producer (getCollInfo), one consumer (Coll start) */
  pending_t ring[RING];
  uint32_t head;             /* atomic, producer */
  int32_t pushLock;          /* NCCL enqueues one communicator from one thread at a time; hosts that do not
                     * (several threads in getCollInfo on one communicator) are serialised here */
  uint32_t tail;             /* atomic, consumer */
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
  /* the chained profiler on this communicator (host thread writes, at init and finalize) */
  const chain_t* chain;  /* non-NULL: its init succeeded here */
  void* chainCtx;        /* its context */
  int32_t chainLive;     /* atomic: 1 from its init to just before its finalize */
  int32_t ncclVersion;   /* the descriptor version NCCL sends us */
  wrapRec* wrapShort;    /* WRAP_SHORT, kept with the context */
  wrapRec* wrapLong;     /* WRAP_LONG, kept with the context */
  uint32_t longNext;     /* host thread */
  uint64_t chainEvents;  /* atomic: starts forwarded */
  uint64_t chainDropped; /* atomic: starts not forwarded (no free wrapper) */
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
/* The handle of the parent events this plugin does not look at (8-byte aligned, tagged, so that
 * every even handle this plugin hands out starts with a readable tag). */
static const uint64_t dummyEvent = DUMMY_TAG;
#define DUMMY ((void*)(uintptr_t)&dummyEvent)
static chain_t chain;

/* A child forked while another thread held the registry's lock would wait for ever at its next
 * profiler init or tuner init (found by a hostile host: 26 of 40 children hung): the child, which
 * has only the forking thread, starts with the lock free. */
static void registryInChild(void) {
  pthread_mutex_init(&registryMutex, NULL);
}

__attribute__((constructor)) static void profilerOnLoad(void) {
  pthread_atfork(NULL, NULL, registryInChild);
}

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
  if (__atomic_exchange_n(&pc->pushLock, 1, __ATOMIC_ACQUIRE) != 0) {
    /* another producer: a concurrent getCollInfo on this communicator (NCCL never does this) */
    __atomic_fetch_add(&pc->decisionsDropped, 1, __ATOMIC_RELAXED);
    return;
  }
  uint32_t h = __atomic_load_n(&pc->head, __ATOMIC_RELAXED);
  uint32_t t = __atomic_load_n(&pc->tail, __ATOMIC_ACQUIRE);
  if (h - t >= RING) {
    __atomic_fetch_add(&pc->decisionsDropped, 1, __ATOMIC_RELAXED);
    __atomic_store_n(&pc->pushLock, 0, __ATOMIC_RELEASE);
    return;
  }
  pending_t* e = &pc->ring[h % RING];
  e->code = code;
  e->numProto = numProto > 0 ? numProto : 1;
  e->func = collType;
  e->remaining = nBytes;
  __atomic_store_n(&pc->head, h + 1, __ATOMIC_RELEASE);
  __atomic_store_n(&pc->pushLock, 0, __ATOMIC_RELEASE);
}

/* ---- the join ------------------------------------------------------------------------------- */

/* The oldest decision of this collective whose bytes still cover the Coll event's own; 0 if none
 * (consumer side: the Coll event's host thread). Decisions more than STALE behind are dropped. */
static int takeDecision(profComm* pc, int func, uint64_t bytes, int32_t* code, int32_t* numProto) {
  uint32_t t = __atomic_load_n(&pc->tail, __ATOMIC_RELAXED);
  uint32_t h = __atomic_load_n(&pc->head, __ATOMIC_ACQUIRE);
  if (h - t > RING) t = h - RING; /* never: the producer keeps h - t <= RING */
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
  int entry = r->arm == NCCLTJ_ARM_POLICY ? (code >> NCCLTJ_DECISION_CAND_SHIFT) & NCCLTJ_DECISION_ENTRY_MASK :
                                            (code >> NCCLTJ_DECISION_NCCL_SHIFT) & NCCLTJ_DECISION_ENTRY_MASK;
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

/* The aggregation lock, bounded: a thread that died holding it (asynchronous cancellation inside
 * an event, which POSIX leaves undefined; found by a hostile host) must not hang every later
 * collective. Contention is brief (one aggregation); after ~10 ms of trying the sample is counted
 * as unaggregated instead. */
static int lockSeries(profComm* pc) {
  for (int i = 0; i < 100000; i++) {
    if (pthread_mutex_trylock(&pc->mu) == 0) return 1;
    if (i >= 64) sched_yield();
  }
  return 0;
}

/* Adds a finished collective to its series (any thread; once per record, claimed by `done`). */
static void aggregate(profComm* pc, collRec* r) {
  uint32_t started = __atomic_load_n(&r->started, __ATOMIC_ACQUIRE);
  uint32_t stopped = __atomic_load_n(&r->stopped, __ATOMIC_ACQUIRE);
  uint64_t tmin = __atomic_load_n(&r->tmin, __ATOMIC_ACQUIRE);
  uint64_t tmax = __atomic_load_n(&r->tmax, __ATOMIC_ACQUIRE);
  /* a span of 0 ns is a time (the GPU clock's resolution is coarse); no stop record: no time */
  int timed = started > 0 && stopped > 0 && tmin != UINT64_MAX && tmax >= tmin;
  if (!lockSeries(pc)) {
    __atomic_fetch_add(&pc->unaggregated, 1, __ATOMIC_RELAXED);
    return;
  }
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
    __atomic_fetch_add(&pc->unaggregated, 1, __ATOMIC_RELAXED);
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
  int f = lookup(func, ncclFuncNames, MEASURED_FUNCS);
  if (f < 0) return DUMMY;
  if (__builtin_expect(pc->pool == NULL || pc->series == NULL, 0)) {
    /* at the first collective, on the host thread (never on the proxy's), cancellation held off
     * (malloc is no place for a thread to end) */
    int cs;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cs);
    if (pc->pool == NULL) {
      collRec* pool = aligned_alloc(64, POOL * sizeof(collRec));
      if (pool != NULL) memset(pool, 0, POOL * sizeof(collRec));
      pc->pool = pool;
    }
    if (pc->series == NULL) {
      nccltj_series_t* series = calloc(NCCLTJ_MAX_SERIES, sizeof(nccltj_series_t));
      if (lockSeries(pc)) {
        if (pc->series == NULL) series = (pc->series = series, NULL);
        pthread_mutex_unlock(&pc->mu);
      }
      free(series);
    }
    pthread_setcancelstate(cs, NULL);
    if (pc->pool == NULL) return DUMMY;
  }
  collRec* r = &pc->pool[pc->next++ % POOL];
  if (r->inUse) finish(pc, r); /* the record's last use, POOL collectives ago */
  uint64_t bytes = typeSize(datatype) * count * ((f == 2 || f == 3) ? (uint64_t)pc->nRanks : 1u);
  int a = lookup(algo, ncclAlgoNames, NCCL_NUM_ALGORITHMS), p = lookup(proto, ncclProtoNames, NCCL_NUM_PROTOCOLS);
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
  if ((a & 1u) == 0 || a < 4096u) return NULL; /* not a channel (the first page is never ours) */
  collRec* r = (collRec*)(a & ~(uintptr_t)1u);
  return r->tag == COLL_TAG ? r : NULL;
}

static void ownStop(void* eHandle) {
  collRec* r = channelOf(eHandle);
  if (r != NULL) {
    uint32_t s = __atomic_add_fetch(&r->stopped, 1, __ATOMIC_ACQ_REL);
    if (r->nChannels > 0 && s >= (uint32_t)r->nChannels && s >= __atomic_load_n(&r->started, __ATOMIC_ACQUIRE))
      finish(r->comm, r);
  }
}

static void ownRecord(void* eHandle, ncclProfilerEventState_t eState, ncclProfilerEventStateArgs_v5_t* eStateArgs) {
  collRec* r = eState == ncclProfilerKernelChStop && eStateArgs != NULL ? channelOf(eHandle) : NULL;
  if (r != NULL) {
    uint64_t t = eStateArgs->kernelCh.pTimer;
    uint64_t cur = __atomic_load_n(&r->tmax, __ATOMIC_RELAXED);
    while (t > cur && !__atomic_compare_exchange_n(&r->tmax, &cur, t, 1, __ATOMIC_RELEASE, __ATOMIC_RELAXED)) {
    }
  }
}

/* The parent events the measurement needs NCCL to create (so that their children come): a
 * non-NULL handle NCCL passes back and this plugin ignores. */
static int isParent(uint64_t type) {
  return (type & (ncclProfileGroup | ncclProfileGroupApi | ncclProfileCollApi | ncclProfileKernelLaunch)) != 0;
}

/* This plugin's own start of an event, parent already translated (d: a v4 or v5/v6 descriptor;
 * the members read are at the same places in all three, profiler_v4.h .. profiler_v6.h). */
#define OWN_START(pc, type, parent, d) \
  ((type) == ncclProfileColl     ? collStart(pc, (d)->coll.func, (d)->coll.count, (d)->coll.datatype, (d)->coll.algo, \
                                             (d)->coll.proto, (d)->coll.nChannels) : \
   (type) == ncclProfileKernelCh ? kernelChStart(pc, parent, (d)->kernelCh.pTimer) : \
   isParent(type)                ? DUMMY : \
                                   NULL)

/* ---- the chained profiler: wrappers and forwarding ------------------------------------------ */

/* A wrapper this plugin handed out, or NULL. Every even handle this plugin hands out (a collRec,
 * DUMMY, a wrapper) starts with a 32-bit tag; channels are odd. */
static inline wrapRec* wrapOf(void* h) {
  uintptr_t a = (uintptr_t)h;
  if (h == NULL || (a & 7u) != 0 || a < 4096u) return NULL;
  return *(const uint32_t*)h == WRAP_TAG ? (wrapRec*)h : NULL;
}

static __thread uint32_t wrapCursor; /* where this thread next looks in a short pool */

static wrapRec* wrapAlloc(profComm* pc, uint64_t type) {
  wrapRec* w;
  if (type & LONG_TYPES) { /* host thread */
    w = &pc->wrapLong[pc->longNext++ % WRAP_LONG];
    w->busy = 2;
  } else {
    uint32_t i = wrapCursor;
    if (i == 0) i = (uint32_t)(((uintptr_t)&wrapCursor >> 6) * 2654435761u) | 1u; /* threads apart */
    w = NULL;
    for (uint32_t k = 0; k < WRAP_PROBES; k++) {
      wrapRec* c = &pc->wrapShort[(i + k) % WRAP_SHORT];
      uint32_t z = 0;
      if (__atomic_load_n(&c->busy, __ATOMIC_RELAXED) == 0 &&
          __atomic_compare_exchange_n(&c->busy, &z, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
        w = c;
        i += k;
        break;
      }
    }
    wrapCursor = i + 1;
    if (w == NULL) return NULL;
  }
  w->tag = WRAP_TAG;
  w->comm = pc;
  return w;
}

static inline void wrapFree(wrapRec* w) {
  if (w->busy == 1) __atomic_store_n(&w->busy, 0, __ATOMIC_RELEASE);
}

static inline void* theirsOf(void* parent) {
  wrapRec* w = wrapOf(parent);
  return w != NULL ? w->theirs : NULL;
}

static inline void* oursOf(void* parent) {
  wrapRec* w = wrapOf(parent);
  return w != NULL ? w->ours : parent;
}

/* The chained plugin's start of an event NCCL sent us in its version `from` (descriptor d), in the
 * chained plugin's version: parents translated to its handles; to v5 from v6 the same members
 * (profiler_v6.h), no copy-engine event; to v4 a uint8_t type, Coll's and P2p's parent their
 * Group (coll.parentGroup), no API or copy-engine event (as NCCL's own profiler_v4.cc adapter). */
static void* chainedStart(profComm* pc, uint64_t type, const void* d, int from) {
  const chain_t* c = pc->chain;
  void* h = NULL;
  if (c->version == 4) {
    ncclProfilerEventDescr_v4_t d4;
    if (from == 4) {
      memcpy(&d4, d, sizeof d4);
      d4.parentObj = theirsOf(d4.parentObj);
    } else {
      if (type & (API_TYPES | CE_TYPES)) return NULL;
      const ncclProfilerEventDescr_v5_t* d5 = d;
      memset(&d4, 0, sizeof d4);
      d4.type = (uint8_t)type;
      d4.rank = d5->rank;
      /* every v4 union member is a prefix of v5's (profiler_v4.h, profiler_v5.h) */
      memcpy(&d4.coll, &d5->coll, sizeof d4 - offsetof(ncclProfilerEventDescr_v4_t, coll));
      d4.parentObj = theirsOf(type == ncclProfileColl ? d5->coll.parentGroup :
                              type == ncclProfileP2p  ? d5->p2p.parentGroup :
                                                        d5->parentObj);
    }
    c->start(pc->chainCtx, &h, &d4);
  } else if (c->version == 5 || from == 5) {
    if (type & CE_TYPES) return NULL;
    ncclProfilerEventDescr_v5_t d5;
    memcpy(&d5, d, sizeof d5); /* v6 starts with v5's members */
    d5.parentObj = theirsOf(d5.parentObj);
    if (type == ncclProfileColl) d5.coll.parentGroup = theirsOf(d5.coll.parentGroup);
    if (type == ncclProfileP2p) d5.p2p.parentGroup = theirsOf(d5.p2p.parentGroup);
    c->start(pc->chainCtx, &h, &d5);
  } else {
    ncclProfilerEventDescr_v6_t d6;
    memcpy(&d6, d, sizeof d6);
    d6.parentObj = theirsOf(d6.parentObj);
    if (type == ncclProfileColl) d6.coll.parentGroup = theirsOf(d6.coll.parentGroup);
    if (type == ncclProfileP2p) d6.p2p.parentGroup = theirsOf(d6.p2p.parentGroup);
    c->start(pc->chainCtx, &h, &d6);
  }
  return h;
}

/* A start with a chain on this communicator: ours (on our parent), then the chained plugin's in a
 * wrapper. NCCL sees our handle alone when the chained plugin has none for the event. */
static void* startChained(profComm* pc, uint64_t type, void* parent, void* ours, const void* d, int from) {
  if (!__atomic_load_n(&pc->chainLive, __ATOMIC_ACQUIRE)) return ours;
  (void)parent;
  wrapRec* w = wrapAlloc(pc, type);
  if (w == NULL) {
    __atomic_fetch_add(&pc->chainDropped, 1, __ATOMIC_RELAXED);
    return ours;
  }
  void* theirs = chainedStart(pc, type, d, from);
  if (theirs == NULL) {
    wrapFree(w);
    return ours;
  }
  __atomic_fetch_add(&pc->chainEvents, 1, __ATOMIC_RELAXED);
  w->ours = ours;
  w->theirs = theirs;
  return w;
}

/* ---- events --------------------------------------------------------------------------------- */

HIDDEN ncclResult_t nccltjProfilerStopEvent(void* eHandle) {
  wrapRec* w = wrapOf(eHandle);
  if (w == NULL) {
    ownStop(eHandle);
    return ncclSuccess;
  }
  void* ours = w->ours;
  void* theirs = w->theirs;
  profComm* pc = w->comm;
  wrapFree(w); /* a short event is no parent after its stop; a long one stays in its ring */
  if (ours != NULL) ownStop(ours);
  if (theirs != NULL && __atomic_load_n(&pc->chainLive, __ATOMIC_ACQUIRE)) pc->chain->stop(theirs);
  return ncclSuccess;
}

HIDDEN ncclResult_t nccltjProfilerRecordEventState(void* eHandle, ncclProfilerEventState_t eState,
                                                   ncclProfilerEventStateArgs_v5_t* eStateArgs) {
  wrapRec* w = wrapOf(eHandle);
  if (w == NULL) {
    ownRecord(eHandle, eState, eStateArgs);
    return ncclSuccess;
  }
  if (w->ours != NULL) ownRecord(w->ours, eState, eStateArgs);
  profComm* pc = w->comm;
  if (w->theirs != NULL && __atomic_load_n(&pc->chainLive, __ATOMIC_ACQUIRE)) {
    /* v4 has no GroupApi states (its GroupApi events are never forwarded anyway) */
    if (pc->chain->version == 4 && (eState == ncclProfilerGroupStartApiStop || eState == ncclProfilerGroupEndApiStart))
      return ncclSuccess;
    pc->chain->record(w->theirs, eState, eStateArgs);
  }
  return ncclSuccess;
}

/* startEvent, one body for the v4 and the v5 descriptor (the members OWN_START reads sit at the same
 * places in both); FROM is the version of the descriptor NCCL sent, for the chained plugin. */
#define START_EVENT(NAME, DESCR, FROM) \
  HIDDEN ncclResult_t NAME(void* context, void** eHandle, DESCR* d) { \
    if (eHandle == NULL) return ncclSuccess; \
    *eHandle = NULL; \
    profComm* pc = commOf(context); \
    if (pc == NULL || d == NULL) return ncclSuccess; \
    if (__builtin_expect(pc->chain == NULL, 1)) { \
      *eHandle = OWN_START(pc, d->type, d->parentObj, d); \
      return ncclSuccess; \
    } \
    void* ours = OWN_START(pc, d->type, oursOf(d->parentObj), d); \
    *eHandle = startChained(pc, d->type, d->parentObj, ours, d, FROM); \
    return ncclSuccess; \
  }

START_EVENT(nccltjProfilerStartEventV5, ncclProfilerEventDescr_v5_t, pc->ncclVersion)
START_EVENT(nccltjProfilerStartEventV4, ncclProfilerEventDescr_v4_t, 4)

/* v6's descriptor starts with v5's members in the same places (profiler_v6.h). */
HIDDEN ncclResult_t nccltjProfilerStartEventV6(void* context, void** eHandle, ncclProfilerEventDescr_v6_t* d) {
  return nccltjProfilerStartEventV5(context, eHandle, (ncclProfilerEventDescr_v5_t*)(void*)d);
}

/* ---- the chained library -------------------------------------------------------------------- */

static void logInfo(ncclDebugLogger_t logger, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
static void logInfo(ncclDebugLogger_t logger, const char* fmt, ...) {
  char msg[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  nccltjLog((void*)logger, NCCL_LOG_INFO, msg);
}

/* Once per process, at the first profiler init (under registryMutex): dlopen the library
 * NCCL_TUNER_JAVA_PROFILER_CHAIN names and take its newest ncclProfiler_vN not newer than the
 * version NCCL chose for us. */
static void loadChain(int version, ncclDebugLogger_t logger) {
  chain.tried = 1;
  const char* path = getenv("NCCL_TUNER_JAVA_PROFILER_CHAIN");
  if (path == NULL || path[0] == '\0') return;
  /* dlopen opens the file with a blocking open(): a FIFO blocked the host's profiler init for ever
   * (found by a hostile host). stat does not block; a name without '/' is searched for by dlopen
   * and left to it. An INFO, as for a chain that does not load: the tuner goes on measuring. */
  struct stat st;
  if (strchr(path, '/') != NULL && stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
    logInfo(logger, "profiler chain: %s is not a regular file (a directory, FIFO or device); measuring without it",
            path);
    return;
  }
  void* lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL) {
    const char* e = dlerror();
    logInfo(logger, "profiler chain: %s did not load (%s); measuring without it", path, e != NULL ? e : "?");
    return;
  }
  static const void* const own[] = {&ncclProfiler_v4, &ncclProfiler_v5, &ncclProfiler_v6};
  for (int v = version; v >= 4; v--) {
    char sym[32];
    snprintf(sym, sizeof sym, "ncclProfiler_v%d", v);
    const void* p = dlsym(lib, sym);
    if (p == NULL) continue;
    if (p == own[v - 4]) {
      logInfo(logger, "profiler chain: %s is this library; measuring without a chain", path);
      dlclose(lib);
      return;
    }
    if (v == 4) {
      const ncclProfiler_v4_t* t = p;
      chain.init4 = t->init;
      chain.start = (ncclResult_t(*)(void*, void**, void*))t->startEvent;
      chain.stop = t->stopEvent;
      chain.record =
        (ncclResult_t(*)(void*, ncclProfilerEventState_t, ncclProfilerEventStateArgs_v5_t*))t->recordEventState;
      chain.finalize = t->finalize;
      chain.name = t->name;
    } else { /* v5 and v6 share init's, stop's, record's and finalize's signatures */
      const ncclProfiler_v5_t* t = p;
      chain.init5 = t->init;
      chain.start = (ncclResult_t(*)(void*, void**, void*))t->startEvent;
      chain.stop = t->stopEvent;
      chain.record = t->recordEventState;
      chain.finalize = t->finalize;
      chain.name = t->name;
    }
    if ((chain.init4 == NULL && chain.init5 == NULL) || chain.start == NULL || chain.stop == NULL ||
        chain.record == NULL || chain.finalize == NULL) {
      logInfo(logger, "profiler chain: %s's %s has a NULL entry point; measuring without it", path, sym);
      memset(&chain, 0, sizeof chain);
      chain.tried = 1;
      dlclose(lib);
      return;
    }
    chain.version = v;
    chain.lib = lib; /* kept loaded for the process's lifetime */
    logInfo(logger, "profiler chain: %s (%s, %s) receives every event", path, chain.name != NULL ? chain.name : "?",
            sym);
    return;
  }
  logInfo(logger, "profiler chain: %s exports no ncclProfiler_v4..v%d; measuring without it", path, version);
  dlclose(lib);
}

/* The chained plugin's init on this communicator; its mask is OR-ed into the one NCCL gets. */
static int initChain(profComm* pc, const char* commName, int* mask) {
  int theirMask = 0;
  void* ctx = NULL;
  ncclResult_t rc =
    chain.version == 4 ?
      chain.init4(&ctx, &theirMask, commName, pc->commId, pc->nNodes, pc->nRanks, pc->rank, pc->logger) :
      chain.init5(&ctx, pc->commId, &theirMask, commName, pc->nNodes, pc->nRanks, pc->rank, pc->logger);
  if (rc != ncclSuccess) {
    pthread_mutex_lock(&registryMutex);
    int first = !chain.initFailureLogged;
    chain.initFailureLogged = 1;
    pthread_mutex_unlock(&registryMutex);
    if (first)
      logInfo(pc->logger, "profiler chain: %s's init failed (%d) on commId %llu; measuring without it",
              chain.name != NULL ? chain.name : "the chained plugin", (int)rc, (unsigned long long)pc->commId);
    return 0;
  }
  if (pc->wrapShort == NULL) pc->wrapShort = calloc(WRAP_SHORT, sizeof(wrapRec));
  if (pc->wrapLong == NULL) pc->wrapLong = calloc(WRAP_LONG, sizeof(wrapRec));
  if (pc->wrapShort == NULL || pc->wrapLong == NULL) {
    chain.finalize(ctx);
    return 0;
  }
  pc->chain = &chain;
  pc->chainCtx = ctx;
  __atomic_store_n(&pc->chainLive, 1, __ATOMIC_RELEASE);
  *mask |= theirMask;
  return 1;
}

/* ---- init and finalize ---------------------------------------------------------------------- */

static ncclResult_t profInitBody(int version, void** context, uint64_t commId, int* eActivationMask,
                                 const char* commName, int nNodes, int nRanks, int rank, ncclDebugLogger_t logfn);

/* init and finalize allocate, take locks and may log: cancellation is held off while they run, as
 * for the tuner's init and destroy (plugin.c); a pending cancel acts at the host's next point. */
HIDDEN ncclResult_t nccltjProfilerInit(int version, void** context, uint64_t commId, int* eActivationMask,
                                       const char* commName, int nNodes, int nRanks, int rank,
                                       ncclDebugLogger_t logfn) {
  int cs;
  pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cs);
  ncclResult_t r = profInitBody(version, context, commId, eActivationMask, commName, nNodes, nRanks, rank, logfn);
  pthread_setcancelstate(cs, NULL);
  return r;
}

static ncclResult_t profInitBody(int version, void** context, uint64_t commId, int* eActivationMask,
                                 const char* commName, int nNodes, int nRanks, int rank, ncclDebugLogger_t logfn) {
  if (context == NULL) return ncclSuccess;
  *context = NULL;
  const char* off = getenv("NCCL_TUNER_JAVA_PROFILER");
  if (off != NULL && strcmp(off, "0") == 0) return ncclSuccess; /* mask left as NCCL set it */
  nccltjMarkHostThread(); /* NCCL's host thread: log lines go to its logger directly */
  pthread_mutex_lock(&registryMutex);
  if (!chain.tried) loadChain(version, logfn);
  profComm* pc = freeComms;
  if (pc != NULL) freeComms = pc->nextFree;
  pthread_mutex_unlock(&registryMutex);
  /* The context is this thread's alone until it returns it: set it up outside the lock (a fork
   * while another thread holds the lock leaves the child's lock held: kept short). */
  if (pc == NULL) pc = calloc(1, sizeof *pc);
  if (pc != NULL) {
    collRec* pool = pc->pool;
    nccltj_series_t* series = pc->series;
    wrapRec* wrapShort = pc->wrapShort;
    wrapRec* wrapLong = pc->wrapLong;
    memset(pc, 0, sizeof *pc); /* a context from the free list holds no lock */
    pthread_mutex_init(&pc->mu, NULL);
    pc->pool = pool;
    pc->series = series;
    pc->wrapShort = wrapShort;
    pc->wrapLong = wrapLong;
    if (pool != NULL) memset(pool, 0, POOL * sizeof(collRec));
    if (series != NULL) memset(series, 0, NCCLTJ_MAX_SERIES * sizeof(nccltj_series_t));
    if (wrapShort != NULL) memset(wrapShort, 0, WRAP_SHORT * sizeof(wrapRec));
    if (wrapLong != NULL) memset(wrapLong, 0, WRAP_LONG * sizeof(wrapRec));
    pc->tag = COMM_TAG;
    pc->version = version;
    pc->ncclVersion = version;
    pc->commId = commId;
    pc->rank = rank;
    pc->nRanks = nRanks;
    pc->nNodes = nNodes;
    pc->logger = logfn;
    pc->profilerLive = 1;
    openedHere = pc;
    __atomic_store_n(&nccltjProfiling, 1, __ATOMIC_RELEASE);
  }
  if (pc == NULL) return ncclSuccess;
  /* KernelCh alone: NCCL then also creates Group and Coll (v5+: GroupApi, CollApi) as parents
   * (src/plugin/profiler.cc), and the kernel writes the channels' GPU timestamps. */
  int mask = ncclProfileKernelCh;
  if (chain.version != 0) initChain(pc, commName, &mask);
  if (eActivationMask != NULL) *eActivationMask = mask;
  *context = pc;
  return ncclSuccess;
}

static ncclResult_t finalizeBody(void* context);

HIDDEN ncclResult_t nccltjProfilerFinalize(void* context) {
  int cs;
  pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cs);
  ncclResult_t r = finalizeBody(context);
  pthread_setcancelstate(cs, NULL);
  return r;
}

static ncclResult_t finalizeBody(void* context) {
  profComm* pc = commOf(context);
  if (pc == NULL || !pc->profilerLive) return ncclSuccess; /* once per context */
  for (uint32_t i = 0; pc->pool != NULL && i < POOL; i++)
    if (pc->pool[i].inUse) finish(pc, &pc->pool[i]);
  /* The communicator as the engine's own log lines name it: NCCL's commId, or under tuner v3/v4
   * (no commId) the engine's handle, which its `comm` lines carry (engine.ShadowAggregate). */
  uint64_t logged = pc->joined && pc->tunerCommId == 0 ? (uint64_t)pc->joinedHandle : pc->commId;
  nccltj_measured_t m = {.commId = logged,
                         .rank = pc->rank,
                         .nRanks = pc->nRanks,
                         .nNodes = pc->nNodes,
                         .profilerVersion = pc->version,
                         .nSeries = pc->nSeries,
                         .joined = pc->joined,
                         .collectives = pc->collectives,
                         .unjoined = pc->unjoined,
                         .untimed = pc->untimed,
                         .unaggregated = pc->unaggregated,
                         .decisionsDropped = __atomic_load_n(&pc->decisionsDropped, __ATOMIC_RELAXED),
                         .series = pc->series};
  nccltj_call_t call = {
    .op = NCCLTJ_CALL_MEASURED, .commId = pc->commId, .logger = (void*)pc->logger, .measured = (uintptr_t)&m};
  if (pc->collectives > 0 || pc->joined) nccltjControl(&call);
  if (pc->chain != NULL) {
    /* no call reaches the chained plugin after its finalize: NCCL stopped this communicator's
     * proxy thread before the profiler's finalize (src/init.cc commFree) */
    __atomic_store_n(&pc->chainLive, 0, __ATOMIC_RELEASE);
    uint64_t dropped = __atomic_load_n(&pc->chainDropped, __ATOMIC_RELAXED);
    if (dropped > 0)
      logInfo(pc->logger, "profiler chain: %llu of %llu events on commId %llu not forwarded (no free wrapper)",
              (unsigned long long)dropped,
              (unsigned long long)(dropped + __atomic_load_n(&pc->chainEvents, __ATOMIC_RELAXED)),
              (unsigned long long)pc->commId);
    pc->chain->finalize(pc->chainCtx);
    pc->chain = NULL;
    pc->chainCtx = NULL;
  }
  pthread_mutex_lock(&registryMutex);
  pc->profilerLive = 0;
  if (openedHere == pc) openedHere = NULL;
  if (!pc->tunerLive) release(pc);
  pthread_mutex_unlock(&registryMutex);
  return ncclSuccess;
}
