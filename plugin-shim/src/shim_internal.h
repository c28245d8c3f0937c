/*
 * shim_internal.h -- what plugin.c (NCCL's entry points) and jvm.c (finding, creating or joining
 * the JVM) share inside libnccl-tuner-java.so. Everything here has hidden visibility (the library
 * is built with -fvisibility=hidden); the only exported symbols are ncclTunerPlugin_v3 (plugin.c)
 * and ncclTunerPlugin_v4 .. _v6 (versions.c).
 */
#ifndef NCCLTJ_SHIM_INTERNAL_H_
#define NCCLTJ_SHIM_INTERNAL_H_

#include <jni.h>
#include <pthread.h>

#include "nccltj_bridge.h"

#define HIDDEN __attribute__((visibility("hidden")))
#define LOG_PREFIX "TUNER/Java: "

/* FFM upcalls from a native thread with 96 KiB of stack or less abort the process ("Could not
 * attach thread for upcall", measured with Temurin 25.0.3); 128 KiB worked. */
#define MIN_CALLER_STACK (128 * 1024)

/* The bridge: upcalls are non-NULL only after a good start (jvm.c fills it in). */
extern HIDDEN nccltj_bridge_t nccltjBridge;
/* Why the JVM could not be used, logged once per process through NCCL's logger ("" if it can). */
extern HIDDEN char nccltjStartFailure[1024];
extern HIDDEN int nccltjFailureLogged;          /* guarded by nccltjLogMutex */
extern HIDDEN int nccltjStackWarned;            /* guarded by nccltjLogMutex */
extern HIDDEN pthread_mutex_t nccltjLogMutex;
extern HIDDEN ncclDebugLogger_t nccltjFirstLogger; /* for warnings that arise outside an init */
extern HIDDEN JavaVM* nccltjJvm;                /* set once the engine started */
extern HIDDEN pthread_key_t nccltjAttachKey;    /* marks threads the shim attached */
extern HIDDEN volatile int nccltjForkedAfterStart; /* set in a child forked after the JVM started */

/* Forwards one line to NCCL's logger under the TUNING subsystem (NULL logger: WARN lines go to
 * stderr, the rest is dropped); also handed to Java as the bridge's log function. */
HIDDEN void nccltjLog(void* logger, int level, const char* message);

/* The pthread_once routine of the first init: creates or joins the JVM, calls Bootstrap.start and
 * fills nccltjBridge, or leaves its upcalls NULL with nccltjStartFailure set (jvm.c). */
HIDDEN void nccltjStart(void);

/* pthread key destructor of nccltjAttachKey: detaches a thread the shim attached (plugin.c). */
HIDDEN void nccltjDetachThread(void* unused);

/* destroy(0): asks the engine to write out its decision log; registered with atexit (plugin.c). */
HIDDEN void nccltjFlushAtExit(void);

/* The common entry points behind every exported tuner version (plugin.c). Each returns
 * ncclSuccess whatever happens. tunerVersion: the ABI NCCL chose (3..6); commId 0, nvlDomainInfo
 * and constants NULL where that version has none; regBuff NCCLTJ_REGBUFF_UNKNOWN under v3. */
HIDDEN ncclResult_t nccltjInitComm(int tunerVersion, uint64_t commId, size_t nRanks, size_t nNodes,
                                   ncclDebugLogger_t logFunction, void* nvlDomainInfo,
                                   void* constants, void** context);
HIDDEN ncclResult_t nccltjGetCollInfo(void* context, ncclFunc_t collType, size_t nBytes, int numPipeOps,
                                      float** collCostTable, int numAlgo, int numProto, int regBuff,
                                      int* nChannels);
HIDDEN ncclResult_t nccltjGetChunkSize(void* context, ncclFunc_t collType, size_t nBytes, int algo,
                                       int proto, int nChannels, size_t* chunkSize);
HIDDEN ncclResult_t nccltjDestroyComm(void* context);

/* Fills the hardware signature from what the process already has loaded (signature.c). */
HIDDEN void nccltjHardwareSignature(nccltj_hw_t* out);

#endif /* NCCLTJ_SHIM_INTERNAL_H_ */
