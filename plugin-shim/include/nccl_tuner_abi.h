/*
 * nccl_tuner_abi.h -- the NCCL tuner ABI, versions 3 to 7, as nccl-tuner-java sees it: NCCL facts only.
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
 *   - NCCL src/include/plugin/tuner/tuner_v4.h (2.24.3+), tuner_v5.h (2.28.3+), tuner_v6.h
 *     (2.30.3+), read at v2.30.7-1: ncclTuner_v4_t .. ncclTuner_v6_t, ncclNvlDomainInfo_v5_t,
 *     ncclTunerConstants_v5_t and its array dimensions; src/include/plugin/nccl_tuner.h (2.30.7):
 *     the link (NCCL_HW_*), compute-capability and tuning-scale indices.
 *   - Which symbol each NCCL looks up first (src/misc/tuner.cc 2.22 .. 2.25, src/plugin/tuner.cc
 *     2.26+): ncclTunerPlugin_v3 in 2.22-2.23, _v4 in 2.24-2.27, _v5 in 2.28-2.29, _v6 in 2.30,
 *     _v7 in 2.32.6 (then _v6 down to _v2).
 *   - v7, read in NVIDIA/nccl at commit 2449986fd9ec7df240c202511a0170fc1bc74b08 (the 2.32 line;
 *     that commit's makefiles/version.mk was not available, so "2.32.6" is the release notes'):
 *     src/include/plugin/tuner/tuner_v7.h (ncclTuner_v7_t: v6's five members with v7's types;
 *     ncclNvlDomainInfo_v7_t a typedef of v5's; ncclTunerConstants_v7_t: v5's seven arrays in v5's
 *     order, the five bandwidth arrays sized [NCCL_NUM_COMPCAPS_V7 = 5][NCCL_NUM_TUNING_SCALES_V5]),
 *     src/include/plugin/nccl_tuner.h (NCCL_RUBIN_COMPCAP_IDX 4; ncclTuner_t is v7's),
 *     src/plugin/tuner.cc (lookup order v7, v6, v5, v4, v3, v2) and src/plugin/tuner/tuner_v6.cc,
 *     tuner_v5.cc (the adapters: NCCL's 5-row constants are copied into a v5 struct with
 *     ncclTunerConstants_v7_to_v5, i.e. rows VOLTA..BLACKWELL of each array, the plugin's init
 *     edits that, and the four rows are copied back with ncclTunerConstants_v5_to_v7: a v5/v6
 *     plugin neither sees nor sets the RUBIN row. The v6 adapter never sets its ncclTuner_t's
 *     name, so NCCL's "TUNER/Plugin: Closing tuner: '%s'" prints '(null)' for a v6 plugin; the v5
 *     adapter copies the plugin's name).
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
typedef void (*ncclDebugLogger_t)(ncclDebugLogLevel level, unsigned long flags, const char* file, int line,
                                  const char* fmt, ...);

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
  ncclResult_t (*getCollInfo)(void* context, ncclFunc_t collType, size_t nBytes, int numPipeOps, float** collCostTable,
                              int numAlgo, int numProto, int* nChannels);
  ncclResult_t (*destroy)(void* context);
} ncclTuner_v3_t;

#define NCCL_TUNER_PLUGIN_SYMBOL "ncclTunerPlugin_v3"

/* ---- v4: NCCL 2.24.3 (src/include/plugin/tuner/tuner_v4.h): getCollInfo gains regBuff ---------- */

typedef struct {
  const char* name;
  ncclResult_t (*init)(size_t nRanks, size_t nNodes, ncclDebugLogger_t logFunction, void** context);
  /* regBuff: 1 when NCCL can register the user buffer (or captures a graph with
   * NCCL_GRAPH_REGISTER), else 0; it comes between numProto and nChannels. */
  ncclResult_t (*getCollInfo)(void* context, ncclFunc_t collType, size_t nBytes, int numPipeOps, float** collCostTable,
                              int numAlgo, int numProto, int regBuff, int* nChannels);
  ncclResult_t (*destroy)(void* context);
} ncclTuner_v4_t;

/* ---- v5: NCCL 2.28.3 (src/include/plugin/tuner/tuner_v5.h) ---------------------------------- */

/* NVLink domains of the communicator (an MNNVL NVL72 job on two trays: nNodes 1, nNvlDomains 1). */
typedef struct {
  int nNvlDomains;
  int minRanksPerNvlDomain;
  int maxRanksPerNvlDomain;
} ncclNvlDomainInfo_v5_t;

#define NCCL_NUM_ALGORITHMS_V5 7
#define NCCL_NUM_PROTOCOLS_V5 3
#define NCCL_NUM_HW_LINKS_V5 3
#define NCCL_NUM_COMPCAPS_V5 4
#define NCCL_NUM_TUNING_SCALES_V5 3

/* Link types, compute-capability rows and tuning scales indexing the constants
 * (src/include/plugin/nccl_tuner.h, 2.28.3 .. 2.30.7, unchanged at 2.32.6, which adds RUBIN 4). */
#define NCCL_HW_NVLINK 0
#define NCCL_HW_PCI 1
#define NCCL_HW_NET 2
#define NCCL_VOLTA_COMPCAP_IDX 0
#define NCCL_AMPERE_COMPCAP_IDX 1
#define NCCL_HOPPER_COMPCAP_IDX 2
#define NCCL_BLACKWELL_COMPCAP_IDX 3
#define NCCL_TUNING_SCALE_1NODE 0
#define NCCL_TUNING_SCALE_2NODES 1
#define NCCL_TUNING_SCALE_4NODES 2

/* NCCL's own model constants, which a v5+ plugin may correct at init (NCCL then computes its
 * latencies and bandwidths from them, src/graph/tuning.cc). Latencies in microseconds,
 * bandwidths in GB/s. 1152 bytes, doubles only. */
typedef struct {
  double baseLatencies[NCCL_NUM_ALGORITHMS_V5][NCCL_NUM_PROTOCOLS_V5];
  double hwLatencies[NCCL_NUM_HW_LINKS_V5][NCCL_NUM_ALGORITHMS_V5][NCCL_NUM_PROTOCOLS_V5];
  double llMaxBws[NCCL_NUM_COMPCAPS_V5][NCCL_NUM_TUNING_SCALES_V5];
  double perChMaxRingLL128Bws[NCCL_NUM_COMPCAPS_V5][NCCL_NUM_TUNING_SCALES_V5];
  double perChMaxTreeLL128Bws[NCCL_NUM_COMPCAPS_V5][NCCL_NUM_TUNING_SCALES_V5];
  double perChMaxTreeBws[NCCL_NUM_COMPCAPS_V5][NCCL_NUM_TUNING_SCALES_V5];
  double perChMaxNVLSTreeBws[NCCL_NUM_COMPCAPS_V5][NCCL_NUM_TUNING_SCALES_V5];
} ncclTunerConstants_v5_t;

/* init's argument order changes (context first, then commId = NCCL's commHash, the same on every
 * rank of a communicator); destroy is renamed finalize. */
typedef struct {
  const char* name;
  ncclResult_t (*init)(void** context, uint64_t commId, size_t nRanks, size_t nNodes, ncclDebugLogger_t logFunction,
                       ncclNvlDomainInfo_v5_t* nvlDomainInfo, ncclTunerConstants_v5_t* constants);
  ncclResult_t (*getCollInfo)(void* context, ncclFunc_t collType, size_t nBytes, int numPipeOps, float** collCostTable,
                              int numAlgo, int numProto, int regBuff, int* nChannels);
  ncclResult_t (*finalize)(void* context);
} ncclTuner_v5_t;

/* ---- v6: NCCL 2.30.3 (src/include/plugin/tuner/tuner_v6.h) ---------------------------------- */

/* The constants and the NVL domain struct are v5's (tuner_v6.h typedefs them). */
typedef ncclTunerConstants_v5_t ncclTunerConstants_v6_t;
typedef ncclNvlDomainInfo_v5_t ncclNvlDomainInfo_v6_t;

/* v5 plus an optional getChunkSize (NULL: NCCL keeps its own chunk size). NCCL calls it for the
 * algorithm, protocol and channel count it chose (src/enqueue.cc, 2.30.7), clamps the result to
 * the buffer's maximum chunk size and rounds it down to a multiple of the protocol's grain. */
typedef struct {
  const char* name;
  ncclResult_t (*init)(void** context, uint64_t commId, size_t nRanks, size_t nNodes, ncclDebugLogger_t logFunction,
                       ncclNvlDomainInfo_v6_t* nvlDomainInfo, ncclTunerConstants_v6_t* constants);
  ncclResult_t (*getCollInfo)(void* context, ncclFunc_t collType, size_t nBytes, int numPipeOps, float** collCostTable,
                              int numAlgo, int numProto, int regBuff, int* nChannels);
  ncclResult_t (*finalize)(void* context);
  ncclResult_t (*getChunkSize)(void* context, ncclFunc_t collType, size_t nBytes, int algo, int proto, int nChannels,
                               size_t* chunkSize);
} ncclTuner_v6_t;

/* ---- v7: NCCL 2.32.6 (src/include/plugin/tuner/tuner_v7.h at NVIDIA/nccl 2449986) ------------- */

/* NVL domains: v5's struct (tuner_v7.h: typedef ncclNvlDomainInfo_v5_t ncclNvlDomainInfo_v7_t). */
typedef ncclNvlDomainInfo_v5_t ncclNvlDomainInfo_v7_t;

/* A fifth compute-capability row, Rubin (src/include/plugin/nccl_tuner.h at 2449986:
 * NCCL_RUBIN_COMPCAP_IDX 4, NCCL_NUM_COMPCAPS NCCL_NUM_COMPCAPS_V7). */
#define NCCL_NUM_COMPCAPS_V7 5
#define NCCL_RUBIN_COMPCAP_IDX 4

/* v5's fields in v5's order; the per-GPU-generation arrays have 5 rows instead of 4, so every
 * array after llMaxBws sits 3 doubles per preceding bandwidth array further on than in v5.
 * (21 + 63 + 5 * 15) doubles = 1272 bytes. */
typedef struct {
  double baseLatencies[NCCL_NUM_ALGORITHMS_V5][NCCL_NUM_PROTOCOLS_V5];
  double hwLatencies[NCCL_NUM_HW_LINKS_V5][NCCL_NUM_ALGORITHMS_V5][NCCL_NUM_PROTOCOLS_V5];
  double llMaxBws[NCCL_NUM_COMPCAPS_V7][NCCL_NUM_TUNING_SCALES_V5];
  double perChMaxRingLL128Bws[NCCL_NUM_COMPCAPS_V7][NCCL_NUM_TUNING_SCALES_V5];
  double perChMaxTreeLL128Bws[NCCL_NUM_COMPCAPS_V7][NCCL_NUM_TUNING_SCALES_V5];
  double perChMaxTreeBws[NCCL_NUM_COMPCAPS_V7][NCCL_NUM_TUNING_SCALES_V5];
  double perChMaxNVLSTreeBws[NCCL_NUM_COMPCAPS_V7][NCCL_NUM_TUNING_SCALES_V5];
} ncclTunerConstants_v7_t;

/* v6's members, in v6's order, with v7's NVL-domain and constants types in init. */
typedef struct {
  const char* name;
  ncclResult_t (*init)(void** context, uint64_t commId, size_t nRanks, size_t nNodes, ncclDebugLogger_t logFunction,
                       ncclNvlDomainInfo_v7_t* nvlDomainInfo, ncclTunerConstants_v7_t* constants);
  ncclResult_t (*getCollInfo)(void* context, ncclFunc_t collType, size_t nBytes, int numPipeOps, float** collCostTable,
                              int numAlgo, int numProto, int regBuff, int* nChannels);
  ncclResult_t (*finalize)(void* context);
  ncclResult_t (*getChunkSize)(void* context, ncclFunc_t collType, size_t nBytes, int algo, int proto, int nChannels,
                               size_t* chunkSize);
} ncclTuner_v7_t;

#define NCCL_TUNER_PLUGIN_SYMBOL_V4 "ncclTunerPlugin_v4"
#define NCCL_TUNER_PLUGIN_SYMBOL_V5 "ncclTunerPlugin_v5"
#define NCCL_TUNER_PLUGIN_SYMBOL_V6 "ncclTunerPlugin_v6"
#define NCCL_TUNER_PLUGIN_SYMBOL_V7 "ncclTunerPlugin_v7"

#endif /* NCCL_TUNER_ABI_H_ */
