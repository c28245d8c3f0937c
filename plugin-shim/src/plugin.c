/*
 * libnccl-tuner-java.so: NCCL's tuner entry points (this file) and the JVM start-up (start.c).
 *
 * NCCL (2.22+) dlopens this library and reads the newest tuner symbol it knows (NCCL
 * src/plugin/tuner.cc): ncclTunerPlugin_v3 .. _v7, all in exports.c, adapt to the common
 * functions here, nccltjInitComm, nccltjGetCollInfo (nccltjGetCollInfoV3 for v3),
 * nccltjGetChunkSize and nccltjDestroyComm.
 * The first init in the process starts the engine once (start.c: find a Java runtime, create or
 * join the JVM, one JNI call to io.nccltuner.ffm.Bootstrap.start, which writes two FFM upcall
 * stubs into the bridge); from then on each call from NCCL is one of the short functions below
 * forwarding to an upcall, with no JNI: getCollInfo to its own, the others to the control
 * upcall with an nccltj_call_t on the stack.
 *
 * Whatever fails, every entry point returns ncclSuccess and changes nothing (NCCL wraps them in
 * NCCLCHECK, so an error would fail communicator creation or the collective); the reason is
 * logged once per process through NCCL's logger. The one exception is the operator's choice
 * NCCL_TUNER_JAVA_ON_ERROR=fail: then such a failure returns ncclInternalError, so that one rank
 * cannot run with NCCL's defaults while the others enforce the policy. The JVM is never destroyed.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shim_internal.h"

/* The once-per-process start, as a state machine rather than pthread_once, so that a child
 * forked while another thread is inside the start does not wait for ever for a thread it does
 * not have: 0 not started, 1 starting, 2 done. */
static int startState;
static pthread_mutex_t startMutex = PTHREAD_MUTEX_INITIALIZER;

/* NCCL_TUNER_JAVA_ON_ERROR=fail: a failure that makes this process step aside fails init. */
static int strictOnError;

/* The calling thread's view: the bounds of its stack (stackLow 0 until first looked up), whether
 * it was told that a call had too little stack, whether the shim attached it to the JVM, and the
 * fast path's bounds: a frame in (okFloor, okHigh] has free stack enough (both 0 until the
 * thread's first good call has attached it). */
static __thread uintptr_t okFloor __attribute__((tls_model("initial-exec")));
static __thread uintptr_t okHigh __attribute__((tls_model("initial-exec")));
static __thread uintptr_t stackLow __attribute__((tls_model("initial-exec")));
static __thread uintptr_t stackHigh __attribute__((tls_model("initial-exec")));
static __thread int stackWarnedHere __attribute__((tls_model("initial-exec")));
static __thread int attached __attribute__((tls_model("initial-exec")));

/* getCollInfo calls this thread made while the per-call path may still be interpreted, and
 * whether any thread made COMPILED_AFTER_CALLS of them: by then HotSpot has compiled the path
 * (C2 after 10,000-15,000 invocations, and the compile itself takes milliseconds; 2,000,000
 * calls are 0.1 s or more of calling). */
#define COMPILED_AFTER_CALLS 2000000u
static __thread unsigned callsHere __attribute__((tls_model("initial-exec")));
static int callsCompiled;

static void forkChild(void) {
  int state = __atomic_load_n(&startState, __ATOMIC_RELAXED);
  pthread_mutex_init(&startMutex, NULL);
  if (state != 0) {
    nccltjInForkedChild(state == 1);
    __atomic_store_n(&startState, 2, __ATOMIC_RELEASE);
  }
}

/* Registered when the library is loaded, so that a fork at any moment, the first init
 * included, is seen. dlclose unregisters it (glibc), and after the first init the library is
 * never unloaded (start.c pins it). */
__attribute__((constructor)) static void onLoad(void) {
  pthread_atfork(NULL, NULL, forkChild);
}

static void startOnce(void) {
  if (__atomic_load_n(&startState, __ATOMIC_ACQUIRE) == 2) return;
  pthread_mutex_lock(&startMutex);
  if (__atomic_load_n(&startState, __ATOMIC_ACQUIRE) == 0) {
    __atomic_store_n(&startState, 1, __ATOMIC_RELEASE);
    const char* onError = getenv("NCCL_TUNER_JAVA_ON_ERROR");
    strictOnError = onError != NULL && strcmp(onError, "fail") == 0;
    nccltjStart();
    __atomic_store_n(&startState, 2, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&startMutex);
}

/* pthread key destructor: a thread the shim attached to the JVM detaches when it ends (not in a
 * forked child, whose JVM threads did not survive the fork), and its stack's low end, which the
 * detach leaves PROT_NONE, is put back as it was before the attach (stack_guard.c). */
HIDDEN void nccltjDetachThread(void* unused) {
  (void)unused;
  if (!nccltjForkedAfterStart && nccltjJvm != NULL) {
    (*nccltjJvm)->DetachCurrentThread(nccltjJvm);
    nccltjStackGuardRestore();
  }
}

static __attribute__((noinline)) void warnStack(size_t freeBytes) {
  stackWarnedHere = 1;
  char msg[320];
  if (freeBytes == 0)
    snprintf(msg, sizeof msg,
             "a call to the tuner ran on a stack that is not its thread's (a coroutine, "
             "makecontext/swapcontext, or an alternate signal stack); the JVM cannot run there, so such calls "
             "change nothing (said once per thread)");
  else
    snprintf(msg, sizeof msg,
             "a call to the tuner had %zu KiB of free stack; FFM upcalls need at least %d "
             "KiB, so calls with less change nothing (said once per thread)",
             freeBytes / 1024, MIN_FREE_STACK / 1024);
  nccltjLog((void*)nccltjFirstLogger, NCCL_LOG_WARN, msg);
}

/* pthread_cancel of a host thread while it is inside an upcall (deferred cancellation acts at the
 * JVM's own cancellation points) unwinds through JVM frames and crashes the process (found by a
 * hostile host: SIGSEGV in the VM thread). init, destroy and getChunkSize hold cancellation off
 * while they run; a pending cancel takes effect at the host's next cancellation point. */
#define NOCANCEL_BEGIN \
  int cancelState_; \
  pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancelState_)
#define NOCANCEL_END pthread_setcancelstate(cancelState_, NULL)

/* The engine's log lines (bridge 10): the engine queues them and sets the bridge's linesQueued;
 * after each upcall the shim takes them one at a time (NCCLTJ_CALL_TAKE_LINE) and logs them from
 * here, so that NCCL's logger never runs beneath Java frames and the engine needs no downcall
 * (making it and linking its first call took ~6 ms of the first init). At most
 * TAKE_LINES_AT_ONCE a call, so that a JVM thread logging without pause cannot hold a host call
 * here; the rest wait for the next upcall. Cancellation is held off over each upcall only. */
#define TAKE_LINES_AT_ONCE 64
#define TAKE_LINE_BYTES 2048 /* NCCL's own logger cuts a line at 1024 bytes (src/debug.cc) */
static __attribute__((noinline)) void takeEngineLines(void) {
  for (int i = 0; i < TAKE_LINES_AT_ONCE && __atomic_load_n(&nccltjBridge.linesQueued, __ATOMIC_ACQUIRE) != 0; i++) {
    nccltj_control_fn up = nccltjBridge.control;
    if (up == NULL) return;
    char text[TAKE_LINE_BYTES];
    text[0] = '\0';
    nccltj_call_t call = {.op = NCCLTJ_CALL_TAKE_LINE, .text = (uintptr_t)text, .textBytes = sizeof text};
    NOCANCEL_BEGIN;
    up((uintptr_t)&call);
    NOCANCEL_END;
    if (call.level == NCCL_LOG_NONE) return;
    text[sizeof text - 1] = '\0';
    nccltjLog(call.logger, call.level, text);
  }
}

static inline __attribute__((always_inline)) void afterUpcall(void);

/* A control upcall with room for a line the engine hands back on its return (bridge 10: the
 * oldest waiting one, so that an init or destroy that logs one line takes no second upcall),
 * logged here once the upcall returned; then the rest (afterUpcall). */
static __attribute__((noinline)) int controlCall(nccltj_control_fn up, nccltj_call_t* call) {
  char text[TAKE_LINE_BYTES];
  call->text = (uintptr_t)text;
  call->textBytes = sizeof text;
  call->level = NCCL_LOG_NONE;
  int rc = up((uintptr_t)call);
  if (call->level != NCCL_LOG_NONE) {
    text[sizeof text - 1] = '\0';
    nccltjLog(call->logger, call->level, text);
  }
  afterUpcall();
  return rc;
}

/* After every upcall: two loads, and the lines the engine queued and HotSpot printed meanwhile
 * (hotspot_output.c queues those: -Xlog:class+load prints on the calling thread), if any. */
static inline __attribute__((always_inline)) void afterUpcall(void) {
  if (__builtin_expect((__atomic_load_n(&nccltjBridge.linesQueued, __ATOMIC_RELAXED) |
                        __atomic_load_n(&nccltjDeferredCount, __ATOMIC_RELAXED)) != 0,
                       0)) {
    takeEngineLines();
    nccltjFlushDeferredLog();
  }
}

/* Whether the call has free stack enough for an FFM upcall, measured from this frame down to the
 * low end of the thread's stack; attaches the thread to the JVM before its first upcall. Below
 * the limit the call changes nothing and the thread says so once. A frame outside the thread's
 * stack (a coroutine's stack from makecontext/swapcontext, a sigaltstack) counts as no free
 * stack: HotSpot checks the stack pointer against the thread's own bounds, and an upcall there
 * ends in StackOverflowError and an abort (found by a hostile host). */
static __attribute__((noinline)) int stackOkSlow(uintptr_t here) {
  nccltjMarkHostThread();
  if (stackLow == 0) nccltjThreadStack(&stackLow, &stackHigh); /* once per thread */
  size_t freeBytes = stackLow <= 1 ? SIZE_MAX : here > stackLow && here <= stackHigh ? here - stackLow : 0;
  if (freeBytes < MIN_FREE_STACK) {
    if (!stackWarnedHere) warnStack(freeBytes);
    return 0;
  }
  /* FFM would attach the thread by itself, but it registers a C++ thread_local destructor that
   * detaches at exit(); in a child forked after the JVM started that destructor waits for ever on
   * a JVM lock held by a thread that did not survive the fork (seen: a child hung in exit() in 4
   * runs of 15). A pthread key destructor runs only when the thread itself ends, never in exit(),
   * and is skipped in a child. */
  if (!attached) {
    /* Attaching takes JVM locks whose waits are cancellation points: a pthread_cancel of a new
     * thread during its first call hung the process (GuestIT, 1 run in ~30). */
    NOCANCEL_BEGIN;
    attached = 1;
    nccltjAttachCurrentThread(stackLow, stackHigh);
    NOCANCEL_END;
  }
  okFloor = stackLow <= 1 ? 0 : stackLow + MIN_FREE_STACK - 1;
  okHigh = stackLow <= 1 ? UINTPTR_MAX : stackHigh;
  return 1;
}

static inline int stackOk(void) {
  uintptr_t here = (uintptr_t)__builtin_frame_address(0);
  if (__builtin_expect(here > okFloor && here <= okHigh, 1)) return 1; /* attached, stack enough */
  return stackOkSlow(here);
}

/* ---- calls the engine did not see ----------------------------------------------------------
 * The canary draws a call's arm from (seed, the call's index on its communicator), so every rank
 * must count the same calls (docs/canary.md, "How a call's index is counted"). A getCollInfo call
 * the shim receives for a communicator but does not pass up (too little free stack, a stack not
 * the thread's, a NULL cost table or nChannels) is counted here, per handle, and handed to the
 * engine (NCCLTJ_CALL_SKIPPED) just before the next call that does go up. Uncounted, that rank's
 * index fell one behind the others' for the rest of the communicator's life: after one call from
 * a 64 KiB thread, 163 of the next 400 calls took another arm than on a rank that made the same
 * call from a normal thread (found by a hostile host), and ranks that disagree on the algorithm
 * hang the job.
 *
 * Indexed by the handle's slot (bits 0-31, io.nccltuner.engine.Engine): the engine reuses freed
 * slots first, so a slot stays below the most communicators open at once. Slots below SKIP_CHUNK
 * sit in a static array, so the per-call path checks one word (skipFirst[slot].count, a plain load
 * and a branch that is never taken); higher slots in chunks allocated at the init that first
 * needs them (never on the skip path, which may run in a signal handler: atomics only). Beyond
 * SKIP_CHUNK * SKIP_CHUNKS slots (65,536 communicators open at once) a skipped call is not
 * counted. Each entry holds the handle it counts for, set at init, so a call on a destroyed
 * handle (which the engine does not count either) never lands on the communicator that reuses
 * the slot. */
#define SKIP_CHUNK 1024u
#define SKIP_CHUNKS 64u
typedef struct {
  int64_t handle;
  uint64_t count;
} skipCount;
static skipCount skipFirst[SKIP_CHUNK];
static skipCount* skipMore[SKIP_CHUNKS]; /* [0] unused: skipFirst */

static skipCount* skipEntry(uint32_t slot, int create) {
  if (slot < SKIP_CHUNK) return &skipFirst[slot];
  uint32_t k = slot / SKIP_CHUNK;
  if (k >= SKIP_CHUNKS) return NULL;
  skipCount* chunk = __atomic_load_n(&skipMore[k], __ATOMIC_ACQUIRE);
  if (chunk == NULL && create) {
    skipCount* fresh = calloc(SKIP_CHUNK, sizeof *fresh);
    if (fresh == NULL) return NULL;
    if (__atomic_compare_exchange_n(&skipMore[k], &chunk, fresh, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) chunk = fresh;
    else free(fresh); /* another init won; chunk is its array */
  }
  return chunk == NULL ? NULL : &chunk[slot % SKIP_CHUNK];
}

/* At init: the slot now counts for this handle, from zero. */
static void skipReset(int64_t handle) {
  skipCount* e = skipEntry((uint32_t)handle, 1);
  if (e == NULL) return;
  __atomic_store_n(&e->handle, handle, __ATOMIC_RELEASE);
  __atomic_store_n(&e->count, 0, __ATOMIC_RELEASE);
}

/* A call on `context` that changes nothing and is not passed up: counted all the same. */
static __attribute__((noinline, cold)) void skipCall(void* context) {
  int64_t handle = (int64_t)(intptr_t)context;
  skipCount* e = skipEntry((uint32_t)handle, 0);
  if (e != NULL && __atomic_load_n(&e->handle, __ATOMIC_ACQUIRE) == handle)
    __atomic_fetch_add(&e->count, 1, __ATOMIC_RELAXED);
}

/* Before a call goes up: hands the engine the calls skipped on its communicator since the last
 * one, so that this call's index is the one it has on every other rank. */
static __attribute__((noinline)) void skipFold(void* context) {
  int64_t handle = (int64_t)(intptr_t)context;
  skipCount* e = skipEntry((uint32_t)handle, 0);
  if (e == NULL || __atomic_load_n(&e->count, __ATOMIC_RELAXED) == 0 ||
      __atomic_load_n(&e->handle, __ATOMIC_ACQUIRE) != handle)
    return;
  uint64_t n = __atomic_exchange_n(&e->count, 0, __ATOMIC_ACQ_REL);
  nccltj_control_fn up = nccltjBridge.control;
  if (n == 0 || up == NULL) return;
  nccltj_call_t call = {.op = NCCLTJ_CALL_SKIPPED, .handle = handle, .nBytes = n};
  NOCANCEL_BEGIN;
  controlCall(up, &call);
  NOCANCEL_END;
}

HIDDEN void nccltjFlushAtExit(void) {
  nccltjMarkHostThread();
  nccltj_control_fn up = nccltjBridge.control;
  if (up != NULL && stackOk()) {
    nccltj_call_t call = {.op = NCCLTJ_CALL_FLUSH};
    controlCall(up, &call);
  }
  nccltjFlushDeferredLog();
}

/* The once-only lines are taken under nccltjLogMutex and logged after it is released: NCCL's logger
 * is the host's code, and one that never returns (pthread_exit or a longjmp out of it, or a thread
 * ended inside it) would otherwise leave the mutex held, and the next init would wait for ever
 * (found by a hostile host). */
static void logFailureOnce(ncclDebugLogger_t logger) {
  char line[sizeof nccltjStartFailure];
  line[0] = '\0';
  pthread_mutex_lock(&nccltjLogMutex);
  if (nccltjStartFailure[0] != '\0' && !nccltjFailureLogged) {
    nccltjFailureLogged = 1;
    memcpy(line, nccltjStartFailure, sizeof line);
  }
  pthread_mutex_unlock(&nccltjLogMutex);
  if (line[0] != '\0') nccltjLog((void*)logger, NCCL_LOG_WARN, line);
}

static void logNoticeOnce(ncclDebugLogger_t logger) {
  char line[sizeof nccltjNotice];
  pthread_mutex_lock(&nccltjLogMutex);
  memcpy(line, nccltjNotice, sizeof line);
  nccltjNotice[0] = '\0';
  pthread_mutex_unlock(&nccltjLogMutex);
  if (line[0] != '\0') nccltjLog((void*)logger, NCCL_LOG_INFO, line);
}

/* What init returns where this process steps aside for a failure: ncclSuccess (NCCL's defaults,
 * the default), or under NCCL_TUNER_JAVA_ON_ERROR=fail ncclInternalError, so that communicator
 * creation fails with the WARN's reason instead of this rank diverging from the others. */
static ncclResult_t failure(void) {
  return strictOnError ? ncclInternalError : ncclSuccess;
}

/* ---- the common entry points (exports.c's v3 .. v7 adapt to them) ---------------------------- */

static ncclResult_t initComm(int tunerVersion, uint64_t commId, size_t nRanks, size_t nNodes,
                             ncclDebugLogger_t logFunction, void* nvlDomainInfo, void* constants, void** context);

HIDDEN ncclResult_t nccltjInitComm(int tunerVersion, uint64_t commId, size_t nRanks, size_t nNodes,
                                   ncclDebugLogger_t logFunction, void* nvlDomainInfo, void* constants,
                                   void** context) {
  if (context == NULL) return ncclSuccess;
  NOCANCEL_BEGIN;
  ncclResult_t r = initComm(tunerVersion, commId, nRanks, nNodes, logFunction, nvlDomainInfo, constants, context);
  NOCANCEL_END;
  return r;
}

static ncclResult_t initComm(int tunerVersion, uint64_t commId, size_t nRanks, size_t nNodes,
                             ncclDebugLogger_t logFunction, void* nvlDomainInfo, void* constants, void** context) {
  *context = NULL;
  nccltjMarkHostThread();
  if (nccltjFirstLogger == NULL) nccltjFirstLogger = logFunction;
  startOnce();
  nccltjFlushDeferredLog(); /* what HotSpot printed while the JVM was created, outside the start's lock */
  if (nccltjNotice[0] != '\0') logNoticeOnce(logFunction);
  nccltj_control_fn up = nccltjBridge.control;
  if (up == NULL) {
    logFailureOnce(logFunction);
    return failure();
  }
  if (!stackOk()) return failure();
  nccltj_hw_t hw;
  nccltjHardwareSignature(&hw);
  nccltj_call_t call = {.op = NCCLTJ_CALL_INIT,
                        .tunerVersion = tunerVersion,
                        .commId = commId,
                        .nRanks = nRanks,
                        .nNodes = nNodes,
                        .logger = (void*)logFunction,
                        .nvlDomainInfo = (uintptr_t)nvlDomainInfo,
                        .constants = (uintptr_t)constants,
                        .hw = (uintptr_t)&hw};
  /* NCCLTJ_CONTROL_FAILED: the engine stepped aside for a failure (it logged the WARN). */
  int rc = controlCall(up, &call);
  if (call.handle != 0) skipReset(call.handle);
  *context = (void*)(intptr_t)call.handle;
  if (call.handle != 0 && __atomic_load_n(&nccltjProfiling, __ATOMIC_ACQUIRE))
    nccltjProfilerTunerInit(call.handle, commId, nRanks, nNodes);
  nccltjCloseOnExecOwnFiles();
  nccltjFlushDeferredLog();
  return rc != NCCLTJ_CONTROL_OK ? failure() : ncclSuccess;
}

/* The per-call path, inlined into each version's entry point (one call less per collective). */
static inline __attribute__((always_inline)) ncclResult_t getCollInfo(void* context, ncclFunc_t collType, size_t nBytes,
                                                                      int numPipeOps, float** collCostTable,
                                                                      int numAlgo, int numProto, int regBuff,
                                                                      int* nChannels) {
  nccltj_get_coll_info_fn up = nccltjBridge.getCollInfo;
  if (__builtin_expect(context != NULL && up != NULL && collCostTable != NULL && nChannels != NULL, 1)) {
    if (__builtin_expect(!stackOk(), 0)) {
      skipCall(context); /* changes nothing, but counts in the call index (above) */
      return failure();
    }
    /* Calls skipped on this communicator since its last upcall: one load and a branch never taken
     * (slots from SKIP_CHUNK on always check in skipFold). */
    const uint32_t slot = (uint32_t)(uintptr_t)context;
    if (__builtin_expect(slot >= SKIP_CHUNK || __atomic_load_n(&skipFirst[slot].count, __ATOMIC_RELAXED) != 0, 0))
      skipFold(context);
    /* Until the per-call path is compiled, it runs in HotSpot's interpreter, which allocates and
     * can wait on JVM locks (a full TLAB, class resolution): a pthread_cancel there left a JVM lock
     * held and hung the process (GuestIT, about 1 run in 40 under load), so cancellation is held
     * off then. Compiled, the upcall allocates nothing, takes no lock and does no I/O: it reaches
     * no cancellation point (HotSpot's safepoint wait is a raw futex), so it is not held off,
     * which would cost two pthread_setcancelstate calls, 10 ns per call (measured). A
     * deoptimisation back to the interpreter would reopen the window: docs/dev/reliability.md. */
    const int interpreted = !__atomic_load_n(&callsCompiled, __ATOMIC_RELAXED);
    int cancelState = 0;
    if (__builtin_expect(interpreted, 0)) pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancelState);
    nccltj_get_t get = {.handle = (int64_t)(intptr_t)context,
                        .nBytes = nBytes,
                        .costTable = (uintptr_t)collCostTable,
                        .nChannels = (uintptr_t)nChannels,
                        .collType = (int32_t)collType,
                        .numPipeOps = numPipeOps,
                        .numAlgo = numAlgo,
                        .numProto = numProto,
                        .regBuff = regBuff};
    int code = up((uintptr_t)&get);
    afterUpcall(); /* a WARN of a failed call, said once */
    /* With the profiler of this library loaded: the decision, for its Coll event (profiler.c). */
    if (__builtin_expect(__atomic_load_n(&nccltjProfiling, __ATOMIC_RELAXED), 0))
      nccltjProfilerDecision((int64_t)(intptr_t)context, (int)collType, nBytes, numProto, code);
    if (__builtin_expect(interpreted, 0)) {
      pthread_setcancelstate(cancelState, NULL);
      if (++callsHere >= COMPILED_AFTER_CALLS) __atomic_store_n(&callsCompiled, 1, __ATOMIC_RELAXED);
    }
  } else if (context != NULL && up != NULL) {
    skipCall(context); /* a NULL cost table or nChannels: nothing to edit, but the call counts */
  } else if (context != NULL) {
    if (!__atomic_load_n(&nccltjFailureLogged, __ATOMIC_RELAXED))
      logFailureOnce(nccltjFirstLogger); /* a forked child */
    return failure();
  }
  return ncclSuccess;
}

HIDDEN ncclResult_t nccltjGetCollInfo(void* context, ncclFunc_t collType, size_t nBytes, int numPipeOps,
                                      float** collCostTable, int numAlgo, int numProto, int regBuff, int* nChannels) {
  return getCollInfo(context, collType, nBytes, numPipeOps, collCostTable, numAlgo, numProto, regBuff, nChannels);
}

/* Only while getCollInfo is usable too: a forked child or a failed start clears getCollInfo. */
HIDDEN ncclResult_t nccltjGetChunkSize(void* context, ncclFunc_t collType, size_t nBytes, int algo, int proto,
                                       int nChannels, size_t* chunkSize) {
  nccltj_control_fn up = nccltjBridge.control;
  /* Only for communicators whose policy names chunk sizes (the engine flags their handle). */
  if (((intptr_t)context & NCCLTJ_HANDLE_CHUNK_SIZES) != 0 && up != NULL && nccltjBridge.getCollInfo != NULL &&
      chunkSize != NULL && stackOk()) {
    nccltj_call_t call = {.op = NCCLTJ_CALL_GET_CHUNK_SIZE,
                          .handle = (int64_t)(intptr_t)context,
                          .collType = (int32_t)collType,
                          .nBytes = nBytes,
                          .algorithm = algo,
                          .protocol = proto,
                          .nChannels = nChannels,
                          .chunkSize = (uintptr_t)chunkSize};
    NOCANCEL_BEGIN;
    controlCall(up, &call);
    NOCANCEL_END;
  }
  return ncclSuccess;
}

HIDDEN ncclResult_t nccltjDestroyComm(void* context) {
  nccltj_control_fn up = nccltjBridge.control;
  if (context != NULL && __atomic_load_n(&nccltjProfiling, __ATOMIC_ACQUIRE))
    nccltjProfilerTunerDestroy((int64_t)(intptr_t)context);
  if (context != NULL && up != NULL && stackOk()) {
    nccltj_call_t call = {.op = NCCLTJ_CALL_DESTROY, .handle = (int64_t)(intptr_t)context};
    NOCANCEL_BEGIN;
    controlCall(up, &call);
    nccltjCloseOnExecOwnFiles();
    nccltjFlushDeferredLog();
    NOCANCEL_END;
  }
  return ncclSuccess;
}

HIDDEN int nccltjControl(nccltj_call_t* call) {
  nccltjMarkHostThread();
  nccltj_control_fn up = nccltjBridge.control;
  if (up == NULL || nccltjBridge.getCollInfo == NULL || !stackOk()) return -1;
  NOCANCEL_BEGIN;
  int rc = controlCall(up, call);
  NOCANCEL_END;
  nccltjFlushDeferredLog();
  return rc;
}

HIDDEN ncclResult_t nccltjGetCollInfoV3(void* context, ncclFunc_t collType, size_t nBytes, int numPipeOps,
                                        float** collCostTable, int numAlgo, int numProto, int* nChannels) {
  return getCollInfo(context, collType, nBytes, numPipeOps, collCostTable, numAlgo, numProto, NCCLTJ_REGBUFF_UNKNOWN,
                     nChannels);
}
