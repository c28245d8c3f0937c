/*
 * versions.c -- the tuner ABI versions after v3: ncclTunerPlugin_v4, _v5 and _v6, each a thin
 * adapter onto the common entry points of plugin.c (one engine serves them all).
 *
 * Which NCCL looks up which symbol first (checked at the tags in NVIDIA/nccl): 2.22-2.23 try v3
 * then v2 (src/misc/tuner.cc); 2.24-2.27 v4 first; 2.28-2.29 v5 first; 2.30 v6 first
 * (src/plugin/tuner.cc and src/plugin/tuner/tuner_v*.cc from 2.26). An NCCL that knows a newer
 * version than a plugin exports adapts the older one (tuner_v3.cc .. tuner_v5.cc, 2.30.7): regBuff
 * is dropped for v3, constants are not passed to v3/v4, getChunkSize is NULL below v6.
 *
 * ncclTunerPlugin_v7 (NCCL 2.32.6: v6 plus a fifth compute-capability row in the constants) is not
 * exported: the NCCL mirror used to check the layouts has no 2.32 tag (newest v2.30.7-1), and
 * exporting a struct whose layout is guessed would let NCCL read past the constants we write.
 * A 2.32.6 NCCL finds no _v7 and takes _v6.
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

/* v5 and v6 share init's signature (v6's constants and NVL domain types are v5's, tuner_v6.h);
 * only the tuner version handed to the engine differs. COMMID_INIT(N) defines vNInit. */
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
