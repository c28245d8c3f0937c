/*
 * nccl_tuner_java.h -- the NCCL tuner v3 ABI as nccl-tuner-java sees it, plus the
 * bridge between the C shim and the Java policy engine.
 *
 * Written from the facts of NCCL's own headers (no NCCL code copied):
 *   - NCCL 2.19+  src/include/nccl_tuner.h, and from 2.24 src/include/plugin/tuner/tuner_v3.h:
 *     the ncclTuner_v3_t struct (name, init, getCollInfo, destroy) and the exported symbol
 *     name "ncclTunerPlugin_v3".
 *   - NCCL src/include/nccl_common.h (2.19 .. 2.28): ncclFunc_t, ncclDebugLogLevel,
 *     ncclDebugLogSubSys, the variadic ncclDebugLogger_t, NCCL_ALGO_PROTO_IGNORE = -1.0,
 *     the algorithm ids (TREE 0 .. PAT 6; 7 algorithms since 2.23, 6 before) and protocol
 *     ids (LL 0, LL128 1, SIMPLE 2).
 *   - NCCL nccl.h: ncclResult_t values.
 * The cost table that NCCL passes as `float** collCostTable` is really a contiguous
 * float[numAlgo][numProto] (NCCL src/enqueue.cc casts a 2-D array); entries are predicted
 * times in microseconds, -1.0 meaning "candidate unavailable".
 *
 * This header is the input of jextract (see `make bindings`); keep it plain C11.
 */
#ifndef NCCL_TUNER_JAVA_H_
#define NCCL_TUNER_JAVA_H_

#include <stddef.h>
#include <stdint.h>

/* ---- NCCL facts ------------------------------------------------------------------------ */

typedef enum {
  ncclSuccess = 0,
  ncclUnhandledCudaError = 1,
  ncclSystemError = 2,
  ncclInternalError = 3,
  ncclInvalidArgument = 4,
  ncclInvalidUsage = 5,
  ncclRemoteError = 6,
  ncclInProgress = 7,
  ncclNumResults = 8
} ncclResult_t;

typedef enum {
  ncclFuncBroadcast = 0,
  ncclFuncReduce = 1,
  ncclFuncAllGather = 2,
  ncclFuncReduceScatter = 3,
  ncclFuncAllReduce = 4,
  ncclFuncSendRecv = 5,
  ncclFuncSend = 6,
  ncclFuncRecv = 7,
  ncclNumFuncs = 8
} ncclFunc_t;

typedef enum {
  NCCL_LOG_NONE = 0,
  NCCL_LOG_VERSION = 1,
  NCCL_LOG_WARN = 2,
  NCCL_LOG_INFO = 3,
  NCCL_LOG_ABORT = 4,
  NCCL_LOG_TRACE = 5
} ncclDebugLogLevel;

typedef enum {
  NCCL_INIT = 0x1,
  NCCL_COLL = 0x2,
  NCCL_P2P = 0x4,
  NCCL_SHM = 0x8,
  NCCL_NET = 0x10,
  NCCL_GRAPH = 0x20,
  NCCL_TUNING = 0x40,
  NCCL_ENV = 0x80,
  NCCL_ALLOC = 0x100,
  NCCL_CALL = 0x200,
  NCCL_PROXY = 0x400,
  NCCL_NVLS = 0x800,
  NCCL_BOOTSTRAP = 0x1000,
  NCCL_REG = 0x2000,
  NCCL_PROFILE = 0x4000,
  NCCL_RAS = 0x8000,
  NCCL_ALL = ~0
} ncclDebugLogSubSys;

/* NCCL's logger: printf-style and variadic (jextract skips it; the shim calls it for Java). */
typedef void (*ncclDebugLogger_t)(ncclDebugLogLevel level, unsigned long flags,
                                  const char* file, int line, const char* fmt, ...);

#define NCCL_ALGO_UNDEF (-1)
#define NCCL_ALGO_TREE 0
#define NCCL_ALGO_RING 1
#define NCCL_ALGO_COLLNET_DIRECT 2
#define NCCL_ALGO_COLLNET_CHAIN 3
#define NCCL_ALGO_NVLS 4
#define NCCL_ALGO_NVLS_TREE 5
#define NCCL_ALGO_PAT 6
#define NCCL_NUM_ALGORITHMS 7

#define NCCL_PROTO_UNDEF (-1)
#define NCCL_PROTO_LL 0
#define NCCL_PROTO_LL128 1
#define NCCL_PROTO_SIMPLE 2
#define NCCL_NUM_PROTOCOLS 3

#define NCCL_ALGO_PROTO_IGNORE (-1.0)

/* NCCL_MAXCHANNELS since NCCL 2.19 (src/include/device.h): a sane upper bound for nChannels. */
#define NCCL_TUNER_JAVA_MAX_CHANNELS 64

typedef struct {
  const char* name;
  ncclResult_t (*init)(size_t nRanks, size_t nNodes, ncclDebugLogger_t logFunction, void** context);
  ncclResult_t (*getCollInfo)(void* context, ncclFunc_t collType, size_t nBytes, int numPipeOps,
                              float** collCostTable, int numAlgo, int numProto, int* nChannels);
  ncclResult_t (*destroy)(void* context);
} ncclTuner_v3_t;

#define NCCL_TUNER_PLUGIN_SYMBOL "ncclTunerPlugin_v3"

/* ---- The shim <-> Java bridge ----------------------------------------------------------- */

/* Bumped whenever this bridge changes; the shim and the engine jar refuse each other on mismatch. */
#define NCCL_TUNER_JAVA_ABI_VERSION 4

/* Upcalls into the Java engine. They never throw and always return 0 (ncclSuccess).
 * `logger` is NCCL's ncclDebugLogger_t, passed through as an opaque pointer (may be NULL).
 * init writes an opaque non-zero communicator handle to *handle, or leaves it 0 to step aside. */
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
 * (engineAbiVersion and the three upcall stubs), in one JNI call at first init. */
typedef struct {
  int32_t abiVersion;
  int32_t engineAbiVersion;
  nccltj_log_fn log;
  const char* libraryPath;
  nccltj_init_fn init;
  nccltj_get_coll_info_fn getCollInfo;
  nccltj_destroy_fn destroy;
} nccltj_bridge_t;

#endif /* NCCL_TUNER_JAVA_H_ */
