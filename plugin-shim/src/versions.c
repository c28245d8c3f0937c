/*
 * versions.c -- the tuner ABI versions after v3: ncclTunerPlugin_v4 .. _v7, each a thin adapter
 * onto the common entry points of plugin.c (one engine serves them all).
 *
 * Which NCCL looks up which symbol first (checked at the tags in NVIDIA/nccl): 2.22-2.23 try v3
 * then v2 (src/misc/tuner.cc); 2.24-2.27 v4 first; 2.28-2.29 v5 first; 2.30 v6 first; 2.32.6 v7
 * first (src/plugin/tuner.cc at commit 2449986: v7, v6, v5, v4, v3, v2). An NCCL that knows a
 * newer version than a plugin exports adapts the older one (tuner_v3.cc .. tuner_v5.cc, 2.30.7):
 * regBuff is dropped for v3, constants are not passed to v3/v4, getChunkSize is NULL below v6. A
 * 2.32.6 core hands a v5/v6 plugin a 4-row copy of its 5-row constants (tuner_v5.cc, tuner_v6.cc
 * at 2449986), so the RUBIN row is reached only through _v7; since this library exports _v7, a
 * 2.32.6 NCCL takes it and never uses that adapter.
 */
#include <stddef.h>
#include <stdint.h>

#include "shim_internal.h"

static const char kName[] = "nccl-tuner-java";

/* ---- v4: introduced in NCCL 2.24.3 (src/include/plugin/tuner/tuner_v4.h): regBuff ------------- */

static ncclResult_t v4Init(size_t nRanks, size_t nNodes, ncclDebugLogger_t logFunction, void** context) {
  return nccltjInitComm(4, 0, nRanks, nNodes, logFunction, NULL, NULL, context);
}

__attribute__((visibility("default"))) const ncclTuner_v4_t ncclTunerPlugin_v4 = {
    .name = kName,
    .init = v4Init,
    .getCollInfo = nccltjGetCollInfo,
    .destroy = nccltjDestroyComm,
};

/* v5, v6 and v7 share init's parameter list (v6's constants and NVL domain types are v5's,
 * tuner_v6.h; v7's NVL domain type is v5's and its constants struct has a fifth compute-capability
 * row, tuner_v7.h); the tuner version handed to the engine tells it which constants layout the
 * pointer has. COMMID_INIT(N) defines vNInit. */
#define COMMID_INIT(N)                                                                              \
  static ncclResult_t v##N##Init(void** context, uint64_t commId, size_t nRanks, size_t nNodes,     \
                                 ncclDebugLogger_t logFunction,                                     \
                                 ncclNvlDomainInfo_v##N##_t* nvlDomainInfo,                         \
                                 ncclTunerConstants_v##N##_t* constants) {                          \
    return nccltjInitComm(N, commId, nRanks, nNodes, logFunction, nvlDomainInfo, constants, context); \
  }

/* ---- v5: introduced in NCCL 2.28.3 (tuner_v5.h): commId, nvlDomainInfo, constants, finalize ---- */

COMMID_INIT(5)

__attribute__((visibility("default"))) const ncclTuner_v5_t ncclTunerPlugin_v5 = {
    .name = kName,
    .init = v5Init,
    .getCollInfo = nccltjGetCollInfo,
    .finalize = nccltjDestroyComm,
};

/* ---- v6: introduced in NCCL 2.30.3 (tuner_v6.h): getChunkSize ------------------------------- */

COMMID_INIT(6)

__attribute__((visibility("default"))) const ncclTuner_v6_t ncclTunerPlugin_v6 = {
    .name = kName,
    .init = v6Init,
    .getCollInfo = nccltjGetCollInfo,
    .finalize = nccltjDestroyComm,
    .getChunkSize = nccltjGetChunkSize,
};

/* ---- v7: introduced in NCCL 2.32.6 (tuner_v7.h): v6's members; constants with a RUBIN row ---- */

COMMID_INIT(7)

__attribute__((visibility("default"))) const ncclTuner_v7_t ncclTunerPlugin_v7 = {
    .name = kName,
    .init = v7Init,
    .getCollInfo = nccltjGetCollInfo,
    .finalize = nccltjDestroyComm,
    .getChunkSize = nccltjGetChunkSize,
};
