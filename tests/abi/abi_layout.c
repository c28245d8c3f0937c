/*
 * abi_layout.c -- prints the C compiler's view of plugin-shim/include/nccl_tuner_java.h (NCCL's ABI
 * and the bridge, nccl_tuner_abi.h and nccltj_bridge.h), one
 * "key value" per line, for AbiLayoutTest (java-policy/src/test/java/io/nccltuner/bindings) to
 * compare with the jextract bindings in io.nccltuner.bindings:
 *
 *   S                  sizeof(S)                 for every struct: ncclTuner_v3_t .. ncclTuner_v7_t,
 *                                                ncclNvlDomainInfo_v5_t/_v6_t/_v7_t,
 *                                                ncclTunerConstants_v5_t/_v6_t/_v7_t,
 *                                                nccltj_bridge_t, nccltj_hw_t, nccltj_call_t,
 *                                                nccltj_series_t, nccltj_measured_t
 *   S:align            _Alignof(S)
 *   S.field            offsetof(S, field)        for every field
 *   S.field:size       sizeof(field)
 *   sig:T / sig:S.f    ret(arg,...)              function-pointer signatures: one letter per value
 *                                                (i integer, f floating, p pointer, v void) + sizeof
 *   NAME               value                     macro and enum constants
 *
 * The expected signatures are written out once more here and checked against the header at
 * compile time (_Static_assert), so a changed parameter list fails to compile until this file
 * and the bindings are updated. Build: cc -std=c11 -Wall -Wextra -Werror -I plugin-shim/include
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "nccl_tuner_java.h"

#define STRUCT(S) \
  printf("%s %zu\n", #S, sizeof(S)); \
  printf("%s:align %zu\n", #S, (size_t) _Alignof(S))
#define FIELD(S, f) \
  printf("%s.%s %zu\n", #S, #f, offsetof(S, f)); \
  printf("%s.%s:size %zu\n", #S, #f, sizeof(((S*)0)->f))
#define INT_CONST(c) printf("%s %lld\n", #c, (long long)(c))

/* Compile-time: does expression `e` have exactly function-pointer type `T`? */
#define HAS_TYPE(e, T) _Generic((e), T:1, default:0)

typedef int (*sig_control_t)(uintptr_t);
typedef int (*sig_get_coll_info_t)(uintptr_t);
typedef ncclResult_t (*sig_v3_init_t)(size_t, size_t, ncclDebugLogger_t, void**);
typedef ncclResult_t (*sig_v3_get_coll_info_t)(void*, ncclFunc_t, size_t, int, float**, int, int, int*);
typedef ncclResult_t (*sig_v3_destroy_t)(void*);
typedef ncclResult_t (*sig_v4_get_coll_info_t)(void*, ncclFunc_t, size_t, int, float**, int, int, int, int*);
typedef ncclResult_t (*sig_v5_init_t)(void**, uint64_t, size_t, size_t, ncclDebugLogger_t, ncclNvlDomainInfo_v5_t*,
                                      ncclTunerConstants_v5_t*);
typedef ncclResult_t (*sig_v6_get_chunk_size_t)(void*, ncclFunc_t, size_t, int, int, int, size_t*);
typedef ncclResult_t (*sig_v7_init_t)(void**, uint64_t, size_t, size_t, ncclDebugLogger_t, ncclNvlDomainInfo_v7_t*,
                                      ncclTunerConstants_v7_t*);

#define BRIDGE ((nccltj_bridge_t*)0)
#define TUNER ((ncclTuner_v3_t*)0)
_Static_assert(HAS_TYPE((nccltj_control_fn)0, sig_control_t), "nccltj_control_fn changed");
_Static_assert(HAS_TYPE((nccltj_get_coll_info_fn)0, sig_get_coll_info_t), "nccltj_get_coll_info_fn changed");

_Static_assert(HAS_TYPE(BRIDGE->control, sig_control_t), "nccltj_bridge_t.control changed");
_Static_assert(HAS_TYPE(BRIDGE->getCollInfo, sig_get_coll_info_t), "nccltj_bridge_t.getCollInfo changed");
_Static_assert(HAS_TYPE(TUNER->init, sig_v3_init_t), "ncclTuner_v3_t.init changed");
_Static_assert(HAS_TYPE(TUNER->getCollInfo, sig_v3_get_coll_info_t), "ncclTuner_v3_t.getCollInfo changed");
_Static_assert(HAS_TYPE(TUNER->destroy, sig_v3_destroy_t), "ncclTuner_v3_t.destroy changed");
_Static_assert(HAS_TYPE(((ncclTuner_v4_t*)0)->init, sig_v3_init_t), "ncclTuner_v4_t.init changed");
_Static_assert(HAS_TYPE(((ncclTuner_v4_t*)0)->getCollInfo, sig_v4_get_coll_info_t),
               "ncclTuner_v4_t.getCollInfo changed");
_Static_assert(HAS_TYPE(((ncclTuner_v4_t*)0)->destroy, sig_v3_destroy_t), "ncclTuner_v4_t.destroy changed");
_Static_assert(HAS_TYPE(((ncclTuner_v5_t*)0)->init, sig_v5_init_t), "ncclTuner_v5_t.init changed");
_Static_assert(HAS_TYPE(((ncclTuner_v5_t*)0)->getCollInfo, sig_v4_get_coll_info_t),
               "ncclTuner_v5_t.getCollInfo changed");
_Static_assert(HAS_TYPE(((ncclTuner_v5_t*)0)->finalize, sig_v3_destroy_t), "ncclTuner_v5_t.finalize changed");
_Static_assert(HAS_TYPE(((ncclTuner_v6_t*)0)->init, sig_v5_init_t), "ncclTuner_v6_t.init changed");
_Static_assert(HAS_TYPE(((ncclTuner_v6_t*)0)->getCollInfo, sig_v4_get_coll_info_t),
               "ncclTuner_v6_t.getCollInfo changed");
_Static_assert(HAS_TYPE(((ncclTuner_v6_t*)0)->finalize, sig_v3_destroy_t), "ncclTuner_v6_t.finalize changed");
_Static_assert(HAS_TYPE(((ncclTuner_v6_t*)0)->getChunkSize, sig_v6_get_chunk_size_t),
               "ncclTuner_v6_t.getChunkSize changed");
_Static_assert(HAS_TYPE(((ncclTuner_v7_t*)0)->init, sig_v7_init_t), "ncclTuner_v7_t.init changed");
_Static_assert(HAS_TYPE(((ncclTuner_v7_t*)0)->getCollInfo, sig_v4_get_coll_info_t),
               "ncclTuner_v7_t.getCollInfo changed");
_Static_assert(HAS_TYPE(((ncclTuner_v7_t*)0)->finalize, sig_v3_destroy_t), "ncclTuner_v7_t.finalize changed");
_Static_assert(HAS_TYPE(((ncclTuner_v7_t*)0)->getChunkSize, sig_v6_get_chunk_size_t),
               "ncclTuner_v7_t.getChunkSize changed");
/* NCCL's constants: doubles only, 7x3, 3x7x3 and five 4x3 arrays (tuner_v5.h, 2.28.3 .. 2.30.7). */
_Static_assert(sizeof(ncclTunerConstants_v5_t) == (21 + 63 + 5 * 12) * sizeof(double), "constants size changed");
/* v7 (tuner_v7.h at NVIDIA/nccl 2449986, NCCL 2.32.6): the same arrays, the bandwidth ones 5x3. */
_Static_assert(sizeof(ncclTunerConstants_v7_t) == (21 + 63 + 5 * 15) * sizeof(double), "v7 constants size changed");
/* init's NCCLTJ_CONTROL_FAILED is what the shim returns to NCCL under NCCL_TUNER_JAVA_ON_ERROR=fail. */
_Static_assert(NCCLTJ_CONTROL_FAILED == ncclInternalError, "NCCLTJ_CONTROL_FAILED is ncclInternalError");
_Static_assert(offsetof(ncclTunerConstants_v7_t, llMaxBws) == offsetof(ncclTunerConstants_v5_t, llMaxBws),
               "v7's arrays before llMaxBws are v5's");
_Static_assert(offsetof(ncclTunerConstants_v7_t, perChMaxNVLSTreeBws) == (21 + 63 + 4 * 15) * sizeof(double),
               "v7 perChMaxNVLSTreeBws moved");

/* (kind, size) pairs for sig() */
#define I(T) 'i', sizeof(T)
#define F(T) 'f', sizeof(T)
#define P 'p', sizeof(void*)
#define V 'v', (size_t)0

/* sig(key, nargs, ret kind, ret size, then nargs (kind, size) pairs) */
static void sig(const char* key, int nargs, int rkind, size_t rsize, ...) {
  va_list ap;
  va_start(ap, rsize);
  printf("sig:%s %c%zu(", key, rkind, rsize);
  for (int i = 0; i < nargs; i++) {
    int kind = va_arg(ap, int);
    size_t size = va_arg(ap, size_t);
    printf("%s%c%zu", i ? "," : "", kind, size);
  }
  printf(")\n");
  va_end(ap);
}

static void sigs(const char* control, const char* getCollInfo) {
  sig(control, 1, I(int), I(uintptr_t));
  sig(getCollInfo, 1, I(int), I(uintptr_t));
}

/* getCollInfo with regBuff: v4 .. v7 */
static void tunerGetCollInfoV4(const char* key) {
  sig(key, 9, I(ncclResult_t), P, I(ncclFunc_t), I(size_t), I(int), P, I(int), I(int), I(int), P);
}

static void tunerInitV5(const char* key) {
  sig(key, 7, I(ncclResult_t), P, I(uint64_t), I(size_t), I(size_t), P, P, P);
}

int main(void) {
  STRUCT(ncclTuner_v3_t);
  FIELD(ncclTuner_v3_t, name);
  FIELD(ncclTuner_v3_t, init);
  FIELD(ncclTuner_v3_t, getCollInfo);
  FIELD(ncclTuner_v3_t, destroy);

  STRUCT(nccltj_bridge_t);
  FIELD(nccltj_bridge_t, abiVersion);
  FIELD(nccltj_bridge_t, engineAbiVersion);
  FIELD(nccltj_bridge_t, libraryPath);
  FIELD(nccltj_bridge_t, getCollInfo);
  FIELD(nccltj_bridge_t, control);
  FIELD(nccltj_bridge_t, linesQueued);
  FIELD(nccltj_bridge_t, reserved);

  STRUCT(nccltj_call_t);
  FIELD(nccltj_call_t, op);
  FIELD(nccltj_call_t, tunerVersion);
  FIELD(nccltj_call_t, handle);
  FIELD(nccltj_call_t, commId);
  FIELD(nccltj_call_t, nRanks);
  FIELD(nccltj_call_t, nNodes);
  FIELD(nccltj_call_t, logger);
  FIELD(nccltj_call_t, nvlDomainInfo);
  FIELD(nccltj_call_t, constants);
  FIELD(nccltj_call_t, hw);
  FIELD(nccltj_call_t, nBytes);
  FIELD(nccltj_call_t, collType);
  FIELD(nccltj_call_t, algorithm);
  FIELD(nccltj_call_t, protocol);
  FIELD(nccltj_call_t, nChannels);
  FIELD(nccltj_call_t, chunkSize);
  FIELD(nccltj_call_t, measured);
  FIELD(nccltj_call_t, text);
  FIELD(nccltj_call_t, textBytes);
  FIELD(nccltj_call_t, level);
  FIELD(nccltj_call_t, reserved);

  STRUCT(nccltj_get_t);
  FIELD(nccltj_get_t, handle);
  FIELD(nccltj_get_t, nBytes);
  FIELD(nccltj_get_t, costTable);
  FIELD(nccltj_get_t, nChannels);
  FIELD(nccltj_get_t, collType);
  FIELD(nccltj_get_t, numPipeOps);
  FIELD(nccltj_get_t, numAlgo);
  FIELD(nccltj_get_t, numProto);
  FIELD(nccltj_get_t, regBuff);
  FIELD(nccltj_get_t, reserved);

  STRUCT(nccltj_series_t);
  FIELD(nccltj_series_t, collType);
  FIELD(nccltj_series_t, bucket);
  FIELD(nccltj_series_t, arm);
  FIELD(nccltj_series_t, decided);
  FIELD(nccltj_series_t, decidedChannels);
  FIELD(nccltj_series_t, executed);
  FIELD(nccltj_series_t, nChannels);
  FIELD(nccltj_series_t, kernelChannels);
  FIELD(nccltj_series_t, count);
  FIELD(nccltj_series_t, timed);
  FIELD(nccltj_series_t, sumUs);
  FIELD(nccltj_series_t, sumSqUs);
  FIELD(nccltj_series_t, minUs);
  FIELD(nccltj_series_t, maxUs);
  FIELD(nccltj_series_t, hist);

  STRUCT(nccltj_measured_t);
  FIELD(nccltj_measured_t, commId);
  FIELD(nccltj_measured_t, rank);
  FIELD(nccltj_measured_t, nRanks);
  FIELD(nccltj_measured_t, nNodes);
  FIELD(nccltj_measured_t, profilerVersion);
  FIELD(nccltj_measured_t, nSeries);
  FIELD(nccltj_measured_t, joined);
  FIELD(nccltj_measured_t, collectives);
  FIELD(nccltj_measured_t, unjoined);
  FIELD(nccltj_measured_t, untimed);
  FIELD(nccltj_measured_t, unaggregated);
  FIELD(nccltj_measured_t, decisionsDropped);
  FIELD(nccltj_measured_t, series);

  STRUCT(nccltj_hw_t);
  FIELD(nccltj_hw_t, ncclVersion);
  FIELD(nccltj_hw_t, ccMajor);
  FIELD(nccltj_hw_t, ccMinor);
  FIELD(nccltj_hw_t, reserved);
  FIELD(nccltj_hw_t, gpuName);

  STRUCT(ncclTuner_v4_t);
  FIELD(ncclTuner_v4_t, name);
  FIELD(ncclTuner_v4_t, init);
  FIELD(ncclTuner_v4_t, getCollInfo);
  FIELD(ncclTuner_v4_t, destroy);

  STRUCT(ncclTuner_v5_t);
  FIELD(ncclTuner_v5_t, name);
  FIELD(ncclTuner_v5_t, init);
  FIELD(ncclTuner_v5_t, getCollInfo);
  FIELD(ncclTuner_v5_t, finalize);

  STRUCT(ncclTuner_v6_t);
  FIELD(ncclTuner_v6_t, name);
  FIELD(ncclTuner_v6_t, init);
  FIELD(ncclTuner_v6_t, getCollInfo);
  FIELD(ncclTuner_v6_t, finalize);
  FIELD(ncclTuner_v6_t, getChunkSize);

  STRUCT(ncclTuner_v7_t);
  FIELD(ncclTuner_v7_t, name);
  FIELD(ncclTuner_v7_t, init);
  FIELD(ncclTuner_v7_t, getCollInfo);
  FIELD(ncclTuner_v7_t, finalize);
  FIELD(ncclTuner_v7_t, getChunkSize);

#define NVL(S) \
  STRUCT(S); \
  FIELD(S, nNvlDomains); \
  FIELD(S, minRanksPerNvlDomain); \
  FIELD(S, maxRanksPerNvlDomain)
  NVL(ncclNvlDomainInfo_v5_t);
  NVL(ncclNvlDomainInfo_v6_t);
  NVL(ncclNvlDomainInfo_v7_t);
#define CONSTANTS(S) \
  STRUCT(S); \
  FIELD(S, baseLatencies); \
  FIELD(S, hwLatencies); \
  FIELD(S, llMaxBws); \
  FIELD(S, perChMaxRingLL128Bws); \
  FIELD(S, perChMaxTreeLL128Bws); \
  FIELD(S, perChMaxTreeBws); \
  FIELD(S, perChMaxNVLSTreeBws)
  CONSTANTS(ncclTunerConstants_v5_t);
  CONSTANTS(ncclTunerConstants_v6_t);
  CONSTANTS(ncclTunerConstants_v7_t);

  sigs("nccltj_control_fn", "nccltj_get_coll_info_fn");
  sigs("nccltj_bridge_t.control", "nccltj_bridge_t.getCollInfo");
  sig("ncclTuner_v4_t.init", 4, I(ncclResult_t), I(size_t), I(size_t), P, P);
  tunerGetCollInfoV4("ncclTuner_v4_t.getCollInfo");
  sig("ncclTuner_v4_t.destroy", 1, I(ncclResult_t), P);
  tunerInitV5("ncclTuner_v5_t.init");
  tunerGetCollInfoV4("ncclTuner_v5_t.getCollInfo");
  sig("ncclTuner_v5_t.finalize", 1, I(ncclResult_t), P);
  tunerInitV5("ncclTuner_v6_t.init");
  tunerGetCollInfoV4("ncclTuner_v6_t.getCollInfo");
  sig("ncclTuner_v6_t.finalize", 1, I(ncclResult_t), P);
  sig("ncclTuner_v6_t.getChunkSize", 7, I(ncclResult_t), P, I(ncclFunc_t), I(size_t), I(int), I(int), I(int), P);
  tunerInitV5("ncclTuner_v7_t.init");
  tunerGetCollInfoV4("ncclTuner_v7_t.getCollInfo");
  sig("ncclTuner_v7_t.finalize", 1, I(ncclResult_t), P);
  sig("ncclTuner_v7_t.getChunkSize", 7, I(ncclResult_t), P, I(ncclFunc_t), I(size_t), I(int), I(int), I(int), P);
  /* ncclTuner_v3_t: enums are passed as int (4 bytes, like ncclResult_t / ncclFunc_t here). */
  _Static_assert(sizeof(ncclResult_t) == sizeof(int) && sizeof(ncclFunc_t) == sizeof(int), "enums are not int-sized");
  sig("ncclTuner_v3_t.init", 4, I(ncclResult_t), I(size_t), I(size_t), P, P);
  sig("ncclTuner_v3_t.getCollInfo", 8, I(ncclResult_t), P, I(ncclFunc_t), I(size_t), I(int), P, I(int), I(int), P);
  sig("ncclTuner_v3_t.destroy", 1, I(ncclResult_t), P);

  INT_CONST(ncclSuccess);
  INT_CONST(ncclUnhandledCudaError);
  INT_CONST(ncclSystemError);
  INT_CONST(ncclInternalError);
  INT_CONST(ncclInvalidArgument);
  INT_CONST(ncclInvalidUsage);
  INT_CONST(ncclRemoteError);
  INT_CONST(ncclInProgress);
  INT_CONST(ncclNumResults);
  INT_CONST(ncclFuncBroadcast);
  INT_CONST(ncclFuncReduce);
  INT_CONST(ncclFuncAllGather);
  INT_CONST(ncclFuncReduceScatter);
  INT_CONST(ncclFuncAllReduce);
  INT_CONST(ncclFuncSendRecv);
  INT_CONST(ncclFuncSend);
  INT_CONST(ncclFuncRecv);
  INT_CONST(ncclNumFuncs);
  INT_CONST(NCCL_LOG_NONE);
  INT_CONST(NCCL_LOG_VERSION);
  INT_CONST(NCCL_LOG_WARN);
  INT_CONST(NCCL_LOG_INFO);
  INT_CONST(NCCL_LOG_ABORT);
  INT_CONST(NCCL_LOG_TRACE);
  INT_CONST(NCCL_INIT);
  INT_CONST(NCCL_COLL);
  INT_CONST(NCCL_P2P);
  INT_CONST(NCCL_SHM);
  INT_CONST(NCCL_NET);
  INT_CONST(NCCL_GRAPH);
  INT_CONST(NCCL_TUNING);
  INT_CONST(NCCL_ENV);
  INT_CONST(NCCL_ALLOC);
  INT_CONST(NCCL_CALL);
  INT_CONST(NCCL_PROXY);
  INT_CONST(NCCL_NVLS);
  INT_CONST(NCCL_BOOTSTRAP);
  INT_CONST(NCCL_REG);
  INT_CONST(NCCL_PROFILE);
  INT_CONST(NCCL_RAS);
  INT_CONST(NCCL_ALL);
  INT_CONST(NCCL_ALGO_UNDEF);
  INT_CONST(NCCL_ALGO_TREE);
  INT_CONST(NCCL_ALGO_RING);
  INT_CONST(NCCL_ALGO_COLLNET_DIRECT);
  INT_CONST(NCCL_ALGO_COLLNET_CHAIN);
  INT_CONST(NCCL_ALGO_NVLS);
  INT_CONST(NCCL_ALGO_NVLS_TREE);
  INT_CONST(NCCL_ALGO_PAT);
  INT_CONST(NCCL_NUM_ALGORITHMS);
  INT_CONST(NCCL_PROTO_UNDEF);
  INT_CONST(NCCL_PROTO_LL);
  INT_CONST(NCCL_PROTO_LL128);
  INT_CONST(NCCL_PROTO_SIMPLE);
  INT_CONST(NCCL_NUM_PROTOCOLS);
  INT_CONST(NCCL_TUNER_JAVA_MAX_CHANNELS);
  INT_CONST(NCCL_TUNER_JAVA_ABI_VERSION);
  INT_CONST(NCCLTJ_REGBUFF_UNKNOWN);
  INT_CONST(NCCL_NUM_ALGORITHMS_V5);
  INT_CONST(NCCL_NUM_PROTOCOLS_V5);
  INT_CONST(NCCL_NUM_HW_LINKS_V5);
  INT_CONST(NCCL_NUM_COMPCAPS_V5);
  INT_CONST(NCCL_NUM_TUNING_SCALES_V5);
  INT_CONST(NCCL_NUM_COMPCAPS_V7);
  INT_CONST(NCCL_HW_NVLINK);
  INT_CONST(NCCL_HW_PCI);
  INT_CONST(NCCL_HW_NET);
  INT_CONST(NCCL_VOLTA_COMPCAP_IDX);
  INT_CONST(NCCL_AMPERE_COMPCAP_IDX);
  INT_CONST(NCCL_HOPPER_COMPCAP_IDX);
  INT_CONST(NCCL_BLACKWELL_COMPCAP_IDX);
  INT_CONST(NCCL_RUBIN_COMPCAP_IDX);
  INT_CONST(NCCL_TUNING_SCALE_1NODE);
  INT_CONST(NCCL_TUNING_SCALE_2NODES);
  INT_CONST(NCCL_TUNING_SCALE_4NODES);
  INT_CONST(NCCLTJ_CALL_INIT);
  INT_CONST(NCCLTJ_CALL_DESTROY);
  INT_CONST(NCCLTJ_CALL_FLUSH);
  INT_CONST(NCCLTJ_CALL_GET_CHUNK_SIZE);
  INT_CONST(NCCLTJ_HANDLE_CHUNK_SIZES);
  INT_CONST(NCCLTJ_CALL_MEASURED);
  INT_CONST(NCCLTJ_CALL_SKIPPED);
  INT_CONST(NCCLTJ_CALL_TAKE_LINE);
  INT_CONST(NCCLTJ_CONTROL_OK);
  INT_CONST(NCCLTJ_CONTROL_FAILED);
  INT_CONST(NCCLTJ_START_OK);
  INT_CONST(NCCLTJ_START_ABI_MISMATCH);
  INT_CONST(NCCLTJ_START_ANOTHER_COPY);
  INT_CONST(NCCLTJ_DECISION_SEEN);
  INT_CONST(NCCLTJ_DECISION_RULE);
  INT_CONST(NCCLTJ_DECISION_BUCKET_MASK);
  INT_CONST(NCCLTJ_DECISION_NCCL_SHIFT);
  INT_CONST(NCCLTJ_DECISION_CAND_SHIFT);
  INT_CONST(NCCLTJ_DECISION_CHANNELS_SHIFT);
  INT_CONST(NCCLTJ_DECISION_ARM_SHIFT);
  INT_CONST(NCCLTJ_DECISION_ENTRY_MASK);
  INT_CONST(NCCLTJ_DECISION_CHANNELS_MASK);
  INT_CONST(NCCLTJ_DECISION_NONE);
  INT_CONST(NCCLTJ_ARM_NCCL);
  INT_CONST(NCCLTJ_ARM_POLICY);
  INT_CONST(NCCLTJ_ARM_NOT_OFFERED);
  INT_CONST(NCCLTJ_ARM_UNRULED);
  INT_CONST(NCCLTJ_ARM_UNJOINED);
  INT_CONST(NCCLTJ_HIST_SUB);
  INT_CONST(NCCLTJ_HIST_MIN_LOG2);
  INT_CONST(NCCLTJ_HIST_OCTAVES);
  INT_CONST(NCCLTJ_HIST_BUCKETS);
  INT_CONST(NCCLTJ_MAX_SERIES);
  printf("%s %s\n", "NCCL_TUNER_PLUGIN_SYMBOL_V4", NCCL_TUNER_PLUGIN_SYMBOL_V4);
  printf("%s %s\n", "NCCL_TUNER_PLUGIN_SYMBOL_V5", NCCL_TUNER_PLUGIN_SYMBOL_V5);
  printf("%s %s\n", "NCCL_TUNER_PLUGIN_SYMBOL_V6", NCCL_TUNER_PLUGIN_SYMBOL_V6);
  printf("%s %s\n", "NCCL_TUNER_PLUGIN_SYMBOL_V7", NCCL_TUNER_PLUGIN_SYMBOL_V7);
  printf("%s %.17g\n", "NCCL_ALGO_PROTO_IGNORE", (double)NCCL_ALGO_PROTO_IGNORE);
  printf("%s %s\n", "NCCL_TUNER_PLUGIN_SYMBOL", NCCL_TUNER_PLUGIN_SYMBOL);
  return 0;
}
