/*
 * shim_internal.h -- what the parts of libnccl-tuner-java.so share: plugin.c (NCCL's tuner entry
 * points), profiler.c (NCCL's profiler), signature.c, exports.c and the JVM's start-up (start.c
 * and the files jvm_internal.h lists, which share more among themselves there). Everything here
 * has hidden visibility (the library is built with -fvisibility=hidden); the only exported
 * symbols are ncclTunerPlugin_v3 .. _v7 and ncclProfiler_v4 .. _v6, all in exports.c.
 */
#ifndef NCCLTJ_SHIM_INTERNAL_H_
#define NCCLTJ_SHIM_INTERNAL_H_

#include <jni.h>
#include <pthread.h>

#include "nccl_profiler_abi.h"
#include "nccltj_bridge.h"

#define HIDDEN __attribute__((visibility("hidden")))
#define LOG_PREFIX "TUNER/Java: "

/* Free stack an upcall needs at the call, measured from the caller's frame to the low end of its
 * stack. HotSpot 25 keeps guard zones (yellow 2 + red 1 + reserved 1 pages) and a shadow zone
 * (20 pages) at the low end of every thread that runs Java, 96 KiB with 4 KiB pages
 * (src/hotspot/cpu/x86/globals_x86.hpp). Measured with Temurin 25.0.3 (guest-host stack KIB, the
 * first calls interpreted): 104 KiB free or less crashed the process, 112 KiB worked; 120 KiB
 * keeps a margin and still lets a thread of 128 KiB (123 KiB free at its first call) work. */
#ifndef MIN_FREE_STACK
#define MIN_FREE_STACK (120 * 1024)
#endif

/* The bridge: upcalls are non-NULL only after a good start (start.c fills it in). */
extern HIDDEN nccltj_bridge_t nccltjBridge;
/* Why the JVM could not be used, logged once per process through NCCL's logger ("" if it can). */
extern HIDDEN char nccltjStartFailure[1024];
extern HIDDEN int nccltjFailureLogged; /* guarded by nccltjLogMutex */
extern HIDDEN pthread_mutex_t nccltjLogMutex;
extern HIDDEN ncclDebugLogger_t nccltjFirstLogger; /* for warnings that arise outside an init */
extern HIDDEN JavaVM* nccltjJvm;                   /* set once the engine started */
extern HIDDEN pthread_key_t nccltjAttachKey;       /* marks threads the shim attached */
extern HIDDEN volatile int nccltjForkedAfterStart; /* set in a child forked after the JVM started */
/* A one-line notice for the first init to log at INFO ("" if none); guarded by nccltjLogMutex. */
extern HIDDEN char nccltjNotice[1024];

/* Forwards one line to NCCL's logger under the TUNING subsystem (NULL logger: the line is
 * dropped); also handed to Java as the bridge's log function (log.c). */
HIDDEN void nccltjLog(void* logger, int level, const char* message);

/* The calling thread is the host's (it called an entry point): nccltjLog calls the logger on it
 * directly; on other threads it queues the line for nccltjFlushDeferredLog (log.c). */
HIDDEN void nccltjMarkHostThread(void);
HIDDEN void nccltjFlushDeferredLog(void);
/* Queues a line for nccltjFlushDeferredLog whatever the thread: HotSpot's own output (it prints
 * with JVM frames on the stack, inside an upcall or the JVM's creation), which NCCL's logger must
 * not see from there (a logger that ends its thread or re-enters the plugin would hang or abort
 * the host). nccltjDeferredCount: lines waiting (read without the lock, as a hint). */
HIDDEN void nccltjDeferLog(void* logger, int level, const char* message);
extern HIDDEN int nccltjDeferredCount;

/* Runs once per process, from the first init (plugin.c serialises it): pins this library in
 * memory, creates or joins the JVM, calls Bootstrap.start and fills nccltjBridge, or leaves its
 * upcalls NULL with nccltjStartFailure set (start.c). */
HIDDEN void nccltjStart(void);

/* In a child forked while the JVM started or after (plugin.c's atfork handler): the child steps
 * aside, with one WARN at its next call (start.c). */
HIDDEN void nccltjInForkedChild(int starting);

/* Attaches the calling thread to the JVM through JNI, leaving its signal mask as it was except
 * for SIGSEGV, SIGBUS, SIGFPE and SIGILL, which HotSpot needs unblocked (start.c). stackLow and
 * stackHigh are the thread's stack bounds (pthread_getattr_np; stackLow <= 1 if unknown): the
 * read-write pages at its low end are noted first, for nccltjStackGuardRestore. */
HIDDEN void nccltjAttachCurrentThread(uintptr_t stackLow, uintptr_t stackHigh);

/* The calling thread's stack, [low, high) (pthread_getattr_np); low 1 and high UINTPTR_MAX when
 * unknown (stack_guard.c). */
HIDDEN void nccltjThreadStack(uintptr_t* low, uintptr_t* high);

/* Notes which pages of [stackLow, stackLow + 1 MiB) are read-write, before HotSpot's attach
 * protects the low end (stack_guard.c). */
HIDDEN void nccltjStackGuardBefore(uintptr_t stackLow, uintptr_t stackHigh);

/* After the detach: makes the pages nccltjStackGuardBefore noted read-write that are now
 * PROT_NONE (HotSpot uncommits its guard zones at the detach) read-write again (stack_guard.c). */
HIDDEN void nccltjStackGuardRestore(void);

/* pthread key destructor of nccltjAttachKey: detaches a thread the shim attached (plugin.c). */
HIDDEN void nccltjDetachThread(void* unused);

/* NCCLTJ_CALL_FLUSH: asks the engine to write out its decision log; registered with atexit (plugin.c). */
HIDDEN void nccltjFlushAtExit(void);

/* Marks the plugin's own files (engine jar, the runtime's lib/, decision log, call record) close-on-exec
 * (cloexec.c). */
HIDDEN void nccltjCloseOnExecOwnFiles(void);

/* The common entry points behind every exported tuner version (plugin.c). Each returns
 * ncclSuccess whatever happens. tunerVersion: the ABI NCCL chose (3..7); commId 0, nvlDomainInfo
 * and constants NULL where that version has none; regBuff NCCLTJ_REGBUFF_UNKNOWN under v3. */
HIDDEN ncclResult_t nccltjInitComm(int tunerVersion, uint64_t commId, size_t nRanks, size_t nNodes,
                                   ncclDebugLogger_t logFunction, void* nvlDomainInfo, void* constants, void** context);
HIDDEN ncclResult_t nccltjGetCollInfo(void* context, ncclFunc_t collType, size_t nBytes, int numPipeOps,
                                      float** collCostTable, int numAlgo, int numProto, int regBuff, int* nChannels);
/* v3's getCollInfo, which has no regBuff: the same per-call path, inlined (plugin.c). */
HIDDEN ncclResult_t nccltjGetCollInfoV3(void* context, ncclFunc_t collType, size_t nBytes, int numPipeOps,
                                        float** collCostTable, int numAlgo, int numProto, int* nChannels);
HIDDEN ncclResult_t nccltjGetChunkSize(void* context, ncclFunc_t collType, size_t nBytes, int algo, int proto,
                                       int nChannels, size_t* chunkSize);
HIDDEN ncclResult_t nccltjDestroyComm(void* context);

/* The profiler's entry points behind ncclProfiler_v4 .. _v6 (profiler.c); version: the one NCCL
 * chose (4..6). v6's startEvent reads v6's descriptor as v5's (same members, same places). */
HIDDEN ncclResult_t nccltjProfilerInit(int version, void** context, uint64_t commId, int* eActivationMask,
                                       const char* commName, int nNodes, int nRanks, int rank, ncclDebugLogger_t logfn);
HIDDEN ncclResult_t nccltjProfilerStartEventV4(void* context, void** eHandle, ncclProfilerEventDescr_v4_t* d);
HIDDEN ncclResult_t nccltjProfilerStartEventV5(void* context, void** eHandle, ncclProfilerEventDescr_v5_t* d);
HIDDEN ncclResult_t nccltjProfilerStartEventV6(void* context, void** eHandle, ncclProfilerEventDescr_v6_t* d);
HIDDEN ncclResult_t nccltjProfilerStopEvent(void* eHandle);
HIDDEN ncclResult_t nccltjProfilerRecordEventState(void* eHandle, ncclProfilerEventState_t eState,
                                                   ncclProfilerEventStateArgs_v5_t* eStateArgs);
HIDDEN ncclResult_t nccltjProfilerFinalize(void* context);

/* The exported profiler structs (exports.c), which profiler.c's chain must not name. */
extern const ncclProfiler_v4_t ncclProfiler_v4;
extern const ncclProfiler_v5_t ncclProfiler_v5;
extern const ncclProfiler_v6_t ncclProfiler_v6;

/* The profiler in this library (profiler.c). nccltjProfiling turns 1 at the first profiler init;
 * until then the tuner's paths below are never called. */
extern HIDDEN int nccltjProfiling;
/* A tuner communicator opened (handle from the engine) or closed: joined to the profiler context
 * that the same thread opened just before (NCCL's init order), matching nRanks, nNodes and commId. */
HIDDEN void nccltjProfilerTunerInit(int64_t handle, uint64_t commId, size_t nRanks, size_t nNodes);
HIDDEN void nccltjProfilerTunerDestroy(int64_t handle);
/* getCollInfo's decision code for the joined profiler context to take at the Coll event. */
HIDDEN void nccltjProfilerDecision(int64_t handle, int collType, size_t nBytes, int numProto, int code);

/* Makes a control upcall from a host thread with the guards of the tuner's own (engine started,
 * free stack, cancellation held off, deferred log flushed); returns -1 if it could not (plugin.c). */
HIDDEN int nccltjControl(nccltj_call_t* call);

/* Fills the hardware signature from what the process already has loaded (signature.c). */
HIDDEN void nccltjHardwareSignature(nccltj_hw_t* out);

#endif /* NCCLTJ_SHIM_INTERNAL_H_ */
