/*
 * nccltj_bridge.h -- the private bridge between the C shim (plugin-shim/src) and the Java policy
 * engine (io.nccltuner.ffm.Bootstrap, io.nccltuner.ffm.Upcalls): not an NCCL interface.
 *
 * The Java side binds it through jextract (make/bindings.mk reads nccl_tuner_java.h, which
 * includes this header and nccl_tuner_abi.h). Keep it plain C11.
 */
#ifndef NCCLTJ_BRIDGE_H_
#define NCCLTJ_BRIDGE_H_

#include <stddef.h>
#include <stdint.h>

#include "nccl_tuner_abi.h"

/* Bumped whenever this bridge changes; the shim and the engine jar refuse each other on mismatch.
 * 5: init carries the tuner ABI version NCCL chose, commId, nvlDomainInfo, constants and the
 *    hardware signature; getCollInfo carries regBuff; getChunkSize added (NCCL tuner v4..v6).
 * 6: init, destroy, the exit-time flush and getChunkSize are one upcall, control, taking an
 *    nccltj_call_t: two FFM upcall stubs instead of four (each costs 7-14 ms of method-handle
 *    spinning at the first init on 2 cores; the JDK 25 AOT cache does not keep them). */
#define NCCL_TUNER_JAVA_ABI_VERSION 6

/* regBuff as the engine receives it: NCCL passes 0 or 1 from tuner v4 on; under v3 it is unknown. */
#define NCCLTJ_REGBUFF_UNKNOWN (-1)

/* The hardware signature the shim finds in the process at each init, without link-time
 * dependencies (signature.c): -1 or "" where it could not learn a field. */
typedef struct {
  int32_t ncclVersion;  /* ncclGetVersion()'s code (2.28.7 -> 22807), when the host exports it */
  int32_t ccMajor;      /* compute capability of the calling thread's current CUDA device */
  int32_t ccMinor;
  int32_t reserved;
  char gpuName[96];     /* that device's name ("NVIDIA H200"), from a CUDA driver already loaded */
} nccltj_hw_t;

/* What an nccltj_call_t asks of the engine (its op). */
#define NCCLTJ_CALL_INIT 1           /* open a communicator: in tunerVersion .. hw, out handle */
#define NCCLTJ_CALL_DESTROY 2        /* close one: in handle */
#define NCCLTJ_CALL_FLUSH 3          /* once, from an atexit handler: write out queued decision-log records */
#define NCCLTJ_CALL_GET_CHUNK_SIZE 4 /* tuner v6+: in handle, collType .. nChannels, chunkSize */

/* One call of the control upcall, in the caller's memory (the shim's stack). Only the fields of
 * its op are read; the engine writes only `handle` (init) and NCCL's size_t at `chunkSize`.
 * init: tunerVersion is the ABI NCCL chose (3..6); commId is NCCL's commHash (0 under v3 and v4);
 * logger is NCCL's ncclDebugLogger_t as an opaque pointer (may be NULL); nvlDomainInfo (an
 * ncclNvlDomainInfo_v5_t) and constants (an ncclTunerConstants_v5_t, which the engine may edit)
 * are addresses, 0 under v3 and v4; hw is an nccltj_hw_t's address. The engine writes an opaque
 * non-zero communicator handle, or leaves 0 to step aside. getChunkSize: collType, nBytes,
 * algorithm, protocol and nChannels as NCCL passes them; chunkSize is the address of NCCL's
 * size_t, which the engine may overwrite. */
typedef struct {
  int32_t op;
  int32_t tunerVersion;
  int64_t handle;
  uint64_t commId;
  uint64_t nRanks;
  uint64_t nNodes;
  void* logger;
  uintptr_t nvlDomainInfo;
  uintptr_t constants;
  uintptr_t hw;
  uint64_t nBytes;
  int32_t collType;
  int32_t algorithm;
  int32_t protocol;
  int32_t nChannels;
  uintptr_t chunkSize;
} nccltj_call_t;

/* Set by the engine in a communicator's handle (the context NCCL holds) when getChunkSize may
 * change the chunk size for it; without it the shim makes no getChunkSize upcall (NCCL 2.30+
 * asks once per collective). io.nccltuner.engine.Engine.CHUNK_SIZES. */
#define NCCLTJ_HANDLE_CHUNK_SIZES (1LL << 62)

/* Upcalls into the Java engine. They never throw and return 0 (ncclSuccess), but for init's 3. */

/* call is an nccltj_call_t's address. Returns 0, or for init 3 (ncclInternalError) where a
 * failure made the engine step aside (it logged the WARN), which the shim passes on to NCCL only
 * under NCCL_TUNER_JAVA_ON_ERROR=fail. */
typedef int (*nccltj_control_fn)(uintptr_t call);
/* costTable is the address of numAlgo*numProto floats, algorithm-major; nChannels the address of
 * NCCL's int. They travel as integers so that the Java side reads and writes them through one
 * constant segment, with no per-call segment objects (measured: 81 B allocated per call with
 * pointer parameters, 0 B with addresses). regBuff: 0 or 1 (v4+), NCCLTJ_REGBUFF_UNKNOWN (v3). */
typedef int (*nccltj_get_coll_info_fn)(int64_t handle, int collType, size_t nBytes, int numPipeOps,
                                       uintptr_t costTable, int numAlgo, int numProto, int regBuff,
                                       uintptr_t nChannels);

/* Provided by the shim for Java: forwards one already formatted line to NCCL's logger as
 * `logger(level, NCCL_TUNING, file, line, "TUNER/Java: %s", message)`; logger may be NULL
 * (then the line is dropped: nothing is written to the host's fds 1 and 2). */
typedef void (*nccltj_log_fn)(void* logger, int level, const char* message);

/* Filled in by the shim (abiVersion, log, libraryPath) and then by Java's Bootstrap.start
 * (engineAbiVersion and the two upcall stubs), in one JNI call at first init. Bootstrap.start
 * returns 0, 1 (abiVersion differs) or 2 (another copy of the library, at another path, already
 * started the engine in this JVM: this copy steps aside). */
typedef struct {
  int32_t abiVersion;
  int32_t engineAbiVersion;
  nccltj_log_fn log;
  const char* libraryPath;
  nccltj_get_coll_info_fn getCollInfo;
  nccltj_control_fn control;
} nccltj_bridge_t;

#endif /* NCCLTJ_BRIDGE_H_ */
