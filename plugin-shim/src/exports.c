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

/* v3 and v4 share init's parameter list and destroy; NO_COMMID_TUNER(N, GET) defines vNInit and
 * ncclTunerPlugin_vN with getCollInfo GET (v4's getCollInfo adds regBuff). */
#define NO_COMMID_TUNER(N, GET) \
  static ncclResult_t v##N##Init(size_t nRanks, size_t nNodes, ncclDebugLogger_t logFunction, void** context) { \
    return nccltjInitComm(N, 0, nRanks, nNodes, logFunction, NULL, NULL, context); \
  } \
  EXPORT const ncclTuner_v##N##_t ncclTunerPlugin_v##N = { \
    .name = kName, \
    .init = v##N##Init, \
    .getCollInfo = GET, \
    .destroy = nccltjDestroyComm, \
  };

/* v3: introduced in NCCL 2.22.3 (src/include/nccl_tuner.h; 2.19-2.21 knew only v1 and v2, which
 * this library does not export). NCCL 2.26+ looks it up in src/plugin/tuner.cc, before that in
 * src/misc/tuner.cc. */
NO_COMMID_TUNER(3, nccltjGetCollInfoV3)

/* v4: introduced in NCCL 2.24.3 (src/include/plugin/tuner/tuner_v4.h): regBuff. */
NO_COMMID_TUNER(4, nccltjGetCollInfo)

/* v5, v6 and v7 share init's parameter list (v6's constants and NVL domain types are v5's,
 * tuner_v6.h; v7's NVL domain type is v5's and its constants struct has a fifth compute-capability
 * row, tuner_v7.h); the tuner version handed to the engine tells it which constants layout the
 * pointer has. COMMID_TUNER(N, MEMBERS) defines vNInit and ncclTunerPlugin_vN: the members the three
 * versions share, then MEMBERS (those of v6 on). */
#define COMMID_TUNER(N, ...) \
  static ncclResult_t v##N##Init(void** context, uint64_t commId, size_t nRanks, size_t nNodes, \
                                 ncclDebugLogger_t logFunction, ncclNvlDomainInfo_v##N##_t* nvlDomainInfo, \
                                 ncclTunerConstants_v##N##_t* constants) { \
    return nccltjInitComm(N, commId, nRanks, nNodes, logFunction, nvlDomainInfo, constants, context); \
  } \
  EXPORT const ncclTuner_v##N##_t ncclTunerPlugin_v##N = { \
    .name = kName, .init = v##N##Init, .getCollInfo = nccltjGetCollInfo, .finalize = nccltjDestroyComm, __VA_ARGS__};

/* v5: introduced in NCCL 2.28.3 (tuner_v5.h): commId, nvlDomainInfo, constants, finalize. */
COMMID_TUNER(5, /* nothing after finalize */)

/* v6: introduced in NCCL 2.30.3 (tuner_v6.h): getChunkSize. */
COMMID_TUNER(6, .getChunkSize = nccltjGetChunkSize)

/* v7: introduced in NCCL 2.32.6 (tuner_v7.h): v6's members; constants with a RUBIN row. */
COMMID_TUNER(7, .getChunkSize = nccltjGetChunkSize)

/* ---- the profiler --------------------------------------------------------------------------- */

/* Each version's struct: its init, then the entry points every version shares (startEvent by the
 * version's descriptor layout). PROFILER(N) defines ncclProfiler_vN over profilerVNInit. */
#define PROFILER(N) \
  EXPORT const ncclProfiler_v##N##_t ncclProfiler_v##N = { \
    .name = kName, \
    .init = profilerV##N##Init, \
    .startEvent = nccltjProfilerStartEventV##N, \
    .stopEvent = nccltjProfilerStopEvent, \
    .recordEventState = nccltjProfilerRecordEventState, \
    .finalize = nccltjProfilerFinalize, \
  };

/* v4: introduced in NCCL 2.27.3 (src/include/plugin/profiler/profiler_v4.h). */
static ncclResult_t profilerV4Init(void** context, int* eActivationMask, const char* commName, uint64_t commHash,
                                   int nNodes, int nranks, int rank, ncclDebugLogger_t logfn) {
  return nccltjProfilerInit(4, context, commHash, eActivationMask, commName, nNodes, nranks, rank, logfn);
}

PROFILER(4)

/* v5 and v6 share init's parameter list; COMMID_PROFILER(N) defines profilerVNInit and ncclProfiler_vN. */
#define COMMID_PROFILER(N) \
  static ncclResult_t profilerV##N##Init(void** context, uint64_t commId, int* eActivationMask, const char* commName, \
                                         int nNodes, int nranks, int rank, ncclDebugLogger_t logfn) { \
    return nccltjProfilerInit(N, context, commId, eActivationMask, commName, nNodes, nranks, rank, logfn); \
  } \
  PROFILER(N)

/* v5: introduced in NCCL 2.28.3 (profiler_v5.h): init takes commId first; a uint64_t event type
 * and the API events (GroupApi, CollApi, P2pApi, KernelLaunch). */
COMMID_PROFILER(5)

/* v6: introduced in NCCL 2.29.2 (profiler_v6.h): v5's members, then the copy-engine events. */
COMMID_PROFILER(6)
