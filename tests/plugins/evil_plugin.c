/*
 * evil_plugin.c -- a v3 tuner plugin that breaks the rules on purpose, to prove the harness
 * notices. Name "evil". The rule it breaks is chosen by the environment variable EVIL_MODE,
 * read at each init:
 *   enable         getCollInfo turns the first unavailable (-1) entry into 0.0
 *   error          getCollInfo returns ncclInternalError
 *   channels       getCollInfo sets *nChannels = 1000
 *   negative       getCollInfo writes -5 into the first available entry
 *   nan            getCollInfo writes NaN into the first available entry
 *   overflow       getCollInfo writes one float past the numAlgo*numProto table
 *   none-left      getCollInfo sets every available entry to -1 (nothing left to select)
 *   init-error     init returns ncclInternalError
 *   destroy-error  destroy returns ncclInternalError
 *   sigint         init replaces the process's SIGINT handler
 *   warn           (allowed) getCollInfo logs one WARN line per call and changes nothing
 * Unset or unknown: logs one WARN at init and changes nothing.
 * Built as libnccl-tuner-evil.so.
 */
#define _GNU_SOURCE
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "nccl_tuner_abi.h"

enum mode {
  M_NONE,
  M_ENABLE,
  M_ERROR,
  M_CHANNELS,
  M_NEGATIVE,
  M_NAN,
  M_OVERFLOW,
  M_NONE_LEFT,
  M_INIT_ERROR,
  M_DESTROY_ERROR,
  M_SIGINT,
  M_WARN
};
static const char* const kModes[] = {"",         "enable",    "error",      "channels",      "negative", "nan",
                                     "overflow", "none-left", "init-error", "destroy-error", "sigint",   "warn"};

typedef struct {
  ncclDebugLogger_t log;
  enum mode mode;
} evil_ctx_t;

static void evil_sigint(int sig) {
  (void)sig;
}

static ncclResult_t evil_init(size_t nRanks, size_t nNodes, ncclDebugLogger_t log, void** context) {
  (void)nRanks;
  (void)nNodes;
  const char* m = getenv("EVIL_MODE");
  enum mode mode = M_NONE;
  for (size_t i = 1; m && i < sizeof kModes / sizeof kModes[0]; i++)
    if (strcmp(m, kModes[i]) == 0) mode = (enum mode)i;
  if (mode == M_NONE && log)
    log(NCCL_LOG_WARN, NCCL_TUNING, __FILE__, __LINE__, "TUNER/Evil: EVIL_MODE '%s' unknown; behaving", m ? m : "");
  if (mode == M_INIT_ERROR) return ncclInternalError;
  if (mode == M_SIGINT) signal(SIGINT, evil_sigint);
  evil_ctx_t* c = malloc(sizeof *c);
  if (!c) return ncclSystemError;
  *c = (evil_ctx_t){log, mode};
  *context = c;
  return ncclSuccess;
}

static ncclResult_t evil_get_coll_info(void* context, ncclFunc_t collType, size_t nBytes, int numPipeOps,
                                       float** collCostTable, int numAlgo, int numProto, int* nChannels) {
  (void)collType;
  (void)numPipeOps;
  evil_ctx_t* c = context;
  float* t = (float*)collCostTable;
  int n = numAlgo * numProto;
  switch (c->mode) {
    case M_ENABLE:
      for (int i = 0; i < n; i++)
        if (t[i] == NCCL_ALGO_PROTO_IGNORE) {
          t[i] = 0.0f;
          break;
        }
      break;
    case M_ERROR: return ncclInternalError;
    case M_CHANNELS: *nChannels = 1000; break;
    case M_NEGATIVE:
    case M_NAN:
      for (int i = 0; i < n; i++)
        if (t[i] != NCCL_ALGO_PROTO_IGNORE) {
          t[i] = c->mode == M_NAN ? NAN : -5.0f;
          break;
        }
      break;
    case M_OVERFLOW: t[n] = 0.0f; break;
    case M_NONE_LEFT:
      for (int i = 0; i < n; i++) t[i] = NCCL_ALGO_PROTO_IGNORE;
      break;
    case M_WARN:
      if (c->log) c->log(NCCL_LOG_WARN, NCCL_TUNING, __FILE__, __LINE__, "TUNER/Evil: warning for %zu bytes", nBytes);
      break;
    default: break;
  }
  return ncclSuccess;
}

static ncclResult_t evil_destroy(void* context) {
  evil_ctx_t* c = context;
  enum mode mode = c ? c->mode : M_NONE;
  free(c);
  return mode == M_DESTROY_ERROR ? ncclInternalError : ncclSuccess;
}

__attribute__((visibility("default"))) const ncclTuner_v3_t ncclTunerPlugin_v3 = {
  .name = "evil",
  .init = evil_init,
  .getCollInfo = evil_get_coll_info,
  .destroy = evil_destroy,
};
