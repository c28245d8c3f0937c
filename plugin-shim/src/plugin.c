/*
 * libnccl-tuner-java.so: NCCL's entry points (this file) and the JVM start-up (jvm.c).
 *
 * NCCL (2.19+) dlopens this library and reads the newest tuner symbol it knows (NCCL
 * src/plugin/tuner.cc): ncclTunerPlugin_v3 is here, _v4 .. _v6 in versions.c, all adapting to the
 * common functions nccltjInitComm, nccltjGetCollInfo, nccltjGetChunkSize and nccltjDestroyComm. The first init in the process starts the engine once (jvm.c: find a
 * Java runtime, create or join the JVM, one JNI call to io.nccltuner.shim.Bootstrap.start, which
 * writes FFM upcall stubs into the bridge); from then on each call from NCCL is one of the short
 * functions below forwarding to an upcall, with no JNI.
 *
 * Whatever fails, every entry point returns ncclSuccess and changes nothing (NCCL wraps them in
 * NCCLCHECK, so an error would fail communicator creation or the collective); the reason is
 * logged once per process through NCCL's logger. The JVM is never destroyed.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "shim_internal.h"

static pthread_once_t startOnce = PTHREAD_ONCE_INIT;

/* Whether the calling thread has stack enough for an FFM upcall; checked once per thread
 * (0 unknown, 1 enough, 2 too little). */
static __thread int stackState __attribute__((tls_model("initial-exec")));

/* pthread key destructor: a thread the shim attached to the JVM detaches when it ends (not in a
 * forked child, whose JVM threads did not survive the fork). */
HIDDEN void nccltjDetachThread(void* unused) {
  (void)unused;
  if (!nccltjForkedAfterStart && nccltjJvm != NULL) (*nccltjJvm)->DetachCurrentThread(nccltjJvm);
}

/* Attaches a calling thread to the JVM through JNI before its first upcall. FFM would attach it
 * by itself, but it registers a C++ thread_local destructor that detaches at exit(); in a child
 * forked after the JVM started that destructor waits for ever on a JVM lock held by a thread that
 * did not survive the fork (seen: a child hung in exit() in 4 runs of 15). A pthread key
 * destructor runs only when the thread itself ends, never in exit(), and is skipped in a child. */
static void attachThread(void) {
  JNIEnv* env = NULL;
  if (nccltjJvm == NULL || (*nccltjJvm)->GetEnv(nccltjJvm, (void**)&env, JNI_VERSION_10) != JNI_EDETACHED) return;
  if ((*nccltjJvm)->AttachCurrentThreadAsDaemon(nccltjJvm, (void**)&env, NULL) == JNI_OK)
    pthread_setspecific(nccltjAttachKey, (void*)1);
}

static int stackOk(void) {
  if (__builtin_expect(stackState == 0, 0)) {
    pthread_attr_t a;
    size_t size = 0;
    if (pthread_getattr_np(pthread_self(), &a) == 0) {
      pthread_attr_getstacksize(&a, &size);
      pthread_attr_destroy(&a);
    }
    stackState = (size == 0 || size >= MIN_CALLER_STACK) ? 1 : 2;
    if (stackState == 1) attachThread();
    if (stackState == 2) {
      pthread_mutex_lock(&nccltjLogMutex);
      if (!nccltjStackWarned) {
        nccltjStackWarned = 1;
        char msg[256];
        snprintf(msg, sizeof msg, "a thread with %zu KiB of stack called the tuner; FFM upcalls need at "
                 "least %d KiB, so calls from such threads change nothing", size / 1024, MIN_CALLER_STACK / 1024);
        nccltjLog((void*)nccltjFirstLogger, NCCL_LOG_WARN, msg);
      }
      pthread_mutex_unlock(&nccltjLogMutex);
    }
  }
  return stackState == 1;
}

HIDDEN void nccltjFlushAtExit(void) {
  nccltj_destroy_fn up = nccltjBridge.destroy;
  if (up != NULL && stackOk()) up(0);
}

static void logFailureOnce(ncclDebugLogger_t logger) {
  pthread_mutex_lock(&nccltjLogMutex);
  if (nccltjStartFailure[0] != '\0' && !nccltjFailureLogged) {
    nccltjFailureLogged = 1;
    nccltjLog((void*)logger, NCCL_LOG_WARN, nccltjStartFailure);
  }
  pthread_mutex_unlock(&nccltjLogMutex);
}

/* ---- the common entry points (v3 here, v4..v6 in versions.c adapt to them) ------------------ */

HIDDEN ncclResult_t nccltjInitComm(int tunerVersion, uint64_t commId, size_t nRanks, size_t nNodes,
                                   ncclDebugLogger_t logFunction, void* nvlDomainInfo,
                                   void* constants, void** context) {
  if (context == NULL) return ncclSuccess;
  *context = NULL;
  if (nccltjFirstLogger == NULL) nccltjFirstLogger = logFunction;
  pthread_once(&startOnce, nccltjStart);
  if (nccltjBridge.init == NULL) {
    logFailureOnce(logFunction);
    return ncclSuccess;
  }
  if (!stackOk()) return ncclSuccess;
  nccltj_hw_t hw;
  nccltjHardwareSignature(&hw);
  int64_t handle = 0;
  nccltjBridge.init(tunerVersion, commId, nRanks, nNodes, (void*)logFunction, (uintptr_t)nvlDomainInfo,
                    (uintptr_t)constants, (uintptr_t)&hw, &handle);
  *context = (void*)(intptr_t)handle;
  return ncclSuccess;
}

HIDDEN ncclResult_t nccltjGetCollInfo(void* context, ncclFunc_t collType, size_t nBytes, int numPipeOps,
                                      float** collCostTable, int numAlgo, int numProto, int regBuff,
                                      int* nChannels) {
  nccltj_get_coll_info_fn up = nccltjBridge.getCollInfo;
  if (context != NULL && up != NULL && collCostTable != NULL && nChannels != NULL && stackOk())
    up((int64_t)(intptr_t)context, (int)collType, nBytes, numPipeOps, (uintptr_t)collCostTable,
       numAlgo, numProto, regBuff, (uintptr_t)nChannels);
  else if (context != NULL && up == NULL && !__atomic_load_n(&nccltjFailureLogged, __ATOMIC_RELAXED))
    logFailureOnce(nccltjFirstLogger); /* a forked child */
  return ncclSuccess;
}

/* Only while getCollInfo is usable too: a forked child or a failed start clears getCollInfo. */
HIDDEN ncclResult_t nccltjGetChunkSize(void* context, ncclFunc_t collType, size_t nBytes, int algo,
                                       int proto, int nChannels, size_t* chunkSize) {
  nccltj_get_chunk_size_fn up = nccltjBridge.getChunkSize;
  if (context != NULL && up != NULL && nccltjBridge.getCollInfo != NULL && chunkSize != NULL && stackOk())
    up((int64_t)(intptr_t)context, (int)collType, nBytes, algo, proto, nChannels, (uintptr_t)chunkSize);
  return ncclSuccess;
}

HIDDEN ncclResult_t nccltjDestroyComm(void* context) {
  nccltj_destroy_fn up = nccltjBridge.destroy;
  if (context != NULL && up != NULL && stackOk()) up((int64_t)(intptr_t)context);
  return ncclSuccess;
}

/* ---- v3: NCCL 2.19 .. 2.23 look it up first; later NCCL still accept it ---------------------- */

static ncclResult_t tunerInit(size_t nRanks, size_t nNodes, ncclDebugLogger_t logFunction,
                              void** context) {
  return nccltjInitComm(3, 0, nRanks, nNodes, logFunction, NULL, NULL, context);
}

static ncclResult_t tunerGetCollInfo(void* context, ncclFunc_t collType, size_t nBytes,
                                     int numPipeOps, float** collCostTable, int numAlgo,
                                     int numProto, int* nChannels) {
  return nccltjGetCollInfo(context, collType, nBytes, numPipeOps, collCostTable, numAlgo, numProto,
                           NCCLTJ_REGBUFF_UNKNOWN, nChannels);
}

/* NCCL src/plugin/tuner.cc (2.26+; src/misc/tuner.cc before) looks it up by this name, 2.19+. */
__attribute__((visibility("default"))) const ncclTuner_v3_t ncclTunerPlugin_v3 = {
    .name = "nccl-tuner-java",
    .init = tunerInit,
    .getCollInfo = tunerGetCollInfo,
    .destroy = nccltjDestroyComm,
};
