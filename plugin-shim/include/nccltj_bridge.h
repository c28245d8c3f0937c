/*
 * nccltj_bridge.h -- the private bridge between the C shim (plugin-shim/src) and the Java policy
 * engine (io.nccltuner.shim.Bootstrap, io.nccltuner.shim.Upcalls): not an NCCL interface.
 *
 * The Java side binds it through jextract (make/bindings.mk reads nccl_tuner_java.h, which
 * includes this header and nccl_tuner_abi.h). Keep it plain C11.
 */
#ifndef NCCLTJ_BRIDGE_H_
#define NCCLTJ_BRIDGE_H_

#include <stddef.h>
#include <stdint.h>

#include "nccl_tuner_abi.h"

/* Bumped whenever this bridge changes; the shim and the engine jar refuse each other on mismatch. */
#define NCCL_TUNER_JAVA_ABI_VERSION 4

/* Upcalls into the Java engine. They never throw and return 0 (ncclSuccess), but for init's 3.
 * `logger` is NCCL's ncclDebugLogger_t, passed through as an opaque pointer (may be NULL).
 * init writes an opaque non-zero communicator handle to *handle, or leaves it 0 to step aside;
 * it returns 3 (ncclInternalError) where a failure made it step aside (it logged the WARN), which
 * the shim passes on to NCCL only under NCCL_TUNER_JAVA_ON_ERROR=fail. */
typedef int (*nccltj_init_fn)(size_t nRanks, size_t nNodes, void* logger, int64_t* handle);
/* costTable is the address of numAlgo*numProto floats, algorithm-major; nChannels the address of
 * NCCL's int. They travel as integers so that the Java side reads and writes them through one
 * constant segment, with no per-call segment objects (measured: 81 B allocated per call with
 * pointer parameters, 0 B with addresses). */
typedef int (*nccltj_get_coll_info_fn)(int64_t handle, int collType, size_t nBytes, int numPipeOps,
                                       uintptr_t costTable, int numAlgo, int numProto,
                                       uintptr_t nChannels);
/* destroy(0) -- handle 0 is never a communicator -- is called once from an atexit handler: the
 * engine then writes out queued decision-log records. */
typedef int (*nccltj_destroy_fn)(int64_t handle);

/* Provided by the shim for Java: forwards one already formatted line to NCCL's logger as
 * `logger(level, NCCL_TUNING, file, line, "TUNER/Java: %s", message)`; logger may be NULL
 * (then WARN lines go to stderr and INFO lines are dropped). */
typedef void (*nccltj_log_fn)(void* logger, int level, const char* message);

/* Filled in by the shim (abiVersion, log, libraryPath) and then by Java's Bootstrap.start
 * (engineAbiVersion and the three upcall stubs), in one JNI call at first init. Bootstrap.start
 * returns 0, 1 (abiVersion differs) or 2 (another copy of the library, at another path, already
 * started the engine in this JVM: this copy steps aside). */
typedef struct {
  int32_t abiVersion;
  int32_t engineAbiVersion;
  nccltj_log_fn log;
  const char* libraryPath;
  nccltj_init_fn init;
  nccltj_get_coll_info_fn getCollInfo;
  nccltj_destroy_fn destroy;
} nccltj_bridge_t;

#endif /* NCCLTJ_BRIDGE_H_ */
