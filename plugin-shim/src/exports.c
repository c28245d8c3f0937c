/*
 * exports.c -- every symbol libnccl-tuner-java.so exports: NCCL's tuner structs
 * ncclTunerPlugin_v3 .. _v7 and profiler structs ncclProfiler_v4 .. _v6, each a thin adapter onto
 * the common entry points of plugin.c (the tuner) and profiler.c (the profiler); one engine
 * serves them all. Each struct sits beside the NCCL release that introduced it (checked at the
 * tags in NVIDIA/nccl; v7 at commit 2449986 of the 2.32 line). Everything else in the library is
 * hidden (-fvisibility=hidden).
 *
 * Which NCCL looks up which tuner symbol first: 2.22-2.23 try v3 then v2 (src/misc/tuner.cc);
 * 2.24-2.27 v4 first; 2.28-2.29 v5 first; 2.30 v6 first; 2.32.6 v7 first (src/plugin/tuner.cc at
 * commit 2449986: v7, v6, v5, v4, v3, v2). An NCCL that knows a newer version than a plugin
 * exports adapts the older one (tuner_v3.cc .. tuner_v5.cc, 2.30.7): regBuff is dropped for v3,
 * constants are not passed to v3/v4, getChunkSize is NULL below v6. A 2.32.6 core hands a v5/v6
 * plugin a 4-row copy of its 5-row constants (tuner_v5.cc, tuner_v6.cc at 2449986), so the RUBIN
 * row is reached only through _v7; since this library exports _v7, a 2.32.6 NCCL takes it and
 * never uses that adapter. The profiler (src/plugin/profiler.cc) tries v6, v5, v4 in that order
 * where the release knows them. docs/abi-versions.md has the table.
 */
#include <stddef.h>
#include <stdint.h>

#include "shim_internal.h"

#define EXPORT __attribute__((visibility("default")))

static const char kName[] = "nccl-tuner-java";

/* ---- the tuner ------------------------------------------------------------------------------ */

/* v3: introduced in NCCL 2.22.3 (src/include/nccl_tuner.h; 2.19-2.21 knew only v1 and v2, which
 * this library does not export). NCCL 2.26+ looks it up in src/plugin/tuner.cc, before that in
 * src/misc/tuner.cc. */
static ncclResult_t v3Init(size_t nRanks, size_t nNodes, ncclDebugLogger_t logFunction, void** context) {
  return nccltjInitComm(3, 0, nRanks, nNodes, logFunction, NULL, NULL, context);
}

EXPORT const ncclTuner_v3_t ncclTunerPlugin_v3 = {
  .name = kName,
  .init = v3Init,
  .getCollInfo = nccltjGetCollInfoV3,
  .destroy = nccltjDestroyComm,
};

/* v4: introduced in NCCL 2.24.3 (src/include/plugin/tuner/tuner_v4.h): regBuff. */
static ncclResult_t v4Init(size_t nRanks, size_t nNodes, ncclDebugLogger_t logFunction, void** context) {
  return nccltjInitComm(4, 0, nRanks, nNodes, logFunction, NULL, NULL, context);
}

EXPORT const ncclTuner_v4_t ncclTunerPlugin_v4 = {
  .name = kName,
  .init = v4Init,
  .getCollInfo = nccltjGetCollInfo,
  .destroy = nccltjDestroyComm,
};

/* v5, v6 and v7 share init's parameter list (v6's constants and NVL domain types are v5's,
 * tuner_v6.h; v7's NVL domain type is v5's and its constants struct has a fifth compute-capability
 * row, tuner_v7.h); the tuner version handed to the engine tells it which constants layout the
 * pointer has. COMMID_INIT(N) defines vNInit. */
#define COMMID_INIT(N) \
  static ncclResult_t v##N##Init(void** context, uint64_t commId, size_t nRanks, size_t nNodes, \
                                 ncclDebugLogger_t logFunction, ncclNvlDomainInfo_v##N##_t* nvlDomainInfo, \
                                 ncclTunerConstants_v##N##_t* constants) { \
    return nccltjInitComm(N, commId, nRanks, nNodes, logFunction, nvlDomainInfo, constants, context); \
  }

/* v5: introduced in NCCL 2.28.3 (tuner_v5.h): commId, nvlDomainInfo, constants, finalize. */
COMMID_INIT(5)

EXPORT const ncclTuner_v5_t ncclTunerPlugin_v5 = {
  .name = kName,
  .init = v5Init,
  .getCollInfo = nccltjGetCollInfo,
  .finalize = nccltjDestroyComm,
};

/* v6: introduced in NCCL 2.30.3 (tuner_v6.h): getChunkSize. */
COMMID_INIT(6)

EXPORT const ncclTuner_v6_t ncclTunerPlugin_v6 = {
  .name = kName,
  .init = v6Init,
  .getCollInfo = nccltjGetCollInfo,
  .finalize = nccltjDestroyComm,
  .getChunkSize = nccltjGetChunkSize,
};

/* v7: introduced in NCCL 2.32.6 (tuner_v7.h): v6's members; constants with a RUBIN row. */
COMMID_INIT(7)

EXPORT const ncclTuner_v7_t ncclTunerPlugin_v7 = {
  .name = kName,
  .init = v7Init,
  .getCollInfo = nccltjGetCollInfo,
  .finalize = nccltjDestroyComm,
  .getChunkSize = nccltjGetChunkSize,
};

/* ---- the profiler --------------------------------------------------------------------------- */

/* v4: introduced in NCCL 2.27.3 (src/include/plugin/profiler/profiler_v4.h). */
static ncclResult_t profilerV4Init(void** context, int* eActivationMask, const char* commName, uint64_t commHash,
                                   int nNodes, int nranks, int rank, ncclDebugLogger_t logfn) {
  return nccltjProfilerInit(4, context, commHash, eActivationMask, commName, nNodes, nranks, rank, logfn);
}

EXPORT const ncclProfiler_v4_t ncclProfiler_v4 = {
  .name = kName,
  .init = profilerV4Init,
  .startEvent = nccltjProfilerStartEventV4,
  .stopEvent = nccltjProfilerStopEvent,
  .recordEventState = nccltjProfilerRecordEventState,
  .finalize = nccltjProfilerFinalize,
};

/* v5: introduced in NCCL 2.28.3 (profiler_v5.h): init takes commId first; a uint64_t event type
 * and the API events (GroupApi, CollApi, P2pApi, KernelLaunch). */
static ncclResult_t profilerV5Init(void** context, uint64_t commId, int* eActivationMask, const char* commName,
                                   int nNodes, int nranks, int rank, ncclDebugLogger_t logfn) {
  return nccltjProfilerInit(5, context, commId, eActivationMask, commName, nNodes, nranks, rank, logfn);
}

EXPORT const ncclProfiler_v5_t ncclProfiler_v5 = {
  .name = kName,
  .init = profilerV5Init,
  .startEvent = nccltjProfilerStartEventV5,
  .stopEvent = nccltjProfilerStopEvent,
  .recordEventState = nccltjProfilerRecordEventState,
  .finalize = nccltjProfilerFinalize,
};

/* v6: introduced in NCCL 2.29.2 (profiler_v6.h): v5's members, then the copy-engine events. */
static ncclResult_t profilerV6Init(void** context, uint64_t commId, int* eActivationMask, const char* commName,
                                   int nNodes, int nranks, int rank, ncclDebugLogger_t logfn) {
  return nccltjProfilerInit(6, context, commId, eActivationMask, commName, nNodes, nranks, rank, logfn);
}

EXPORT const ncclProfiler_v6_t ncclProfiler_v6 = {
  .name = kName,
  .init = profilerV6Init,
  .startEvent = nccltjProfilerStartEventV6,
  .stopEvent = nccltjProfilerStopEvent,
  .recordEventState = nccltjProfilerRecordEventState,
  .finalize = nccltjProfilerFinalize,
};
