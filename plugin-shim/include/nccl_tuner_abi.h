/*
 * nccl_tuner_abi.h -- the NCCL tuner v3 ABI as nccl-tuner-java sees it: NCCL facts only.
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
 * Test hosts and test plugins include this header alone; the shim and jextract (through
 * nccl_tuner_java.h) also read nccltj_bridge.h. Keep it plain C11.
 */
#ifndef NCCL_TUNER_ABI_H_
#define NCCL_TUNER_ABI_H_

#include <stddef.h>
#include <stdint.h>

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

#endif /* NCCL_TUNER_ABI_H_ */
