/*
 * ref_plugin.c -- the C reference for `make bench`: a v3 tuner plugin doing the engine's per-call
 * work in C over the same compiled policy. It reads a dump of the DecisionTable the Java engine
 * compiles (io.nccltuner.jmh.TableDump; path in NCCL_TUNER_REF_TABLE) and mirrors
 * io.nccltuner.engine.Engine.getCollInfo in enforce mode: bucket of nBytes (leading-zero count and a
 * shift), head[coll * BUCKETS + bucket], the chain of rule offsets checked against numPipeOps, then
 * the first ranked candidate NCCL offers (entry >= 0) becomes 0.0 and its channel count, if any,
 * goes to *nChannels; per-communicator counters (calls, hits, applied) as the engine keeps them.
 * What it does not mirror: the Java side's handle -> communicator array lookup (the C context is a
 * pointer) and the FFM upcall itself. A missing or bad dump: the plugin changes nothing (stderr).
 * Built as build/bench/libnccl-tuner-cref.so.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nccl_tuner_abi.h"

typedef struct {
  int collectives, buckets, stride, count; /* geometry, checked against the constants below */
  int write;                               /* mode enforce */
  int *head, *chains, *rules;
  int nHead, nChains, nRules;
} table_t;

typedef struct {
  const table_t* table;
  unsigned long long calls, hits, applied;
} comm_t;

enum {
  BUCKETS = 252,
  COLLECTIVES = 5,
  STRIDE = 8,
  COUNT = 2,
  MAX_TABLE_ENTRIES = 64
};

static table_t g_table;
static int g_loaded;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static int* read_array(FILE* f, const char* name, int* n) {
  char word[32];
  if (fscanf(f, "%31s %d", word, n) != 2 || strcmp(word, name) != 0 || *n < 0) return NULL;
  int* a = malloc(((size_t)*n + 1) * sizeof *a);
  if (!a) return NULL;
  for (int i = 0; i < *n; i++)
    if (fscanf(f, "%d", &a[i]) != 1) {
      free(a);
      return NULL;
    }
  return a;
}

static void load(void) {
  const char* path = getenv("NCCL_TUNER_REF_TABLE");
  FILE* f = path ? fopen(path, "r") : NULL;
  if (!f) {
    fprintf(stderr, "ref_plugin: NCCL_TUNER_REF_TABLE=%s unreadable; changing nothing\n", path ? path : "(unset)");
    return;
  }
  char mode[32], sha[80];
  int version = 0, rules = 0;
  table_t* t = &g_table;
  if (fscanf(f, "nccltj-table %d mode %31s rules %d sha256 %79s geometry %d %d %d %d", &version, mode, &rules, sha,
             &t->collectives, &t->buckets, &t->stride, &t->count) != 8 ||
      version != 1 || t->collectives != COLLECTIVES || t->buckets != BUCKETS || t->stride != STRIDE ||
      t->count != COUNT || !(t->head = read_array(f, "head", &t->nHead)) ||
      !(t->chains = read_array(f, "chains", &t->nChains)) || !(t->rules = read_array(f, "records", &t->nRules)) ||
      (t->nHead != 0 && t->nHead != COLLECTIVES * BUCKETS)) {
    fprintf(stderr, "ref_plugin: %s: not a table dump of this geometry; changing nothing\n", path);
    fclose(f);
    return;
  }
  fclose(f);
  t->write = strcmp(mode, "enforce") == 0;
  g_loaded = t->nHead != 0;
}

static ncclResult_t ref_init(size_t nRanks, size_t nNodes, ncclDebugLogger_t log, void** context) {
  (void)nRanks;
  (void)nNodes;
  (void)log;
  *context = NULL;
  pthread_once(&g_once, load);
  comm_t* c = calloc(1, sizeof *c);
  if (!c) return ncclSuccess;
  c->table = g_loaded ? &g_table : NULL;
  *context = c;
  return ncclSuccess;
}

/* SizeGrid.bucket */
static inline int bucket(uint64_t n) {
  if (n < 8) return (int)n;
  int e = 63 - __builtin_clzll(n);
  return 8 + ((e - 3) << 2) + (int)((n >> (e - 2)) & 3);
}

/* DecisionTable.find */
static inline int find(const table_t* t, int coll, uint64_t nBytes, int numPipeOps) {
  if (coll < 0 || coll >= COLLECTIVES) return -1;
  int c = t->head[coll * BUCKETS + bucket(nBytes)];
  if (c < 0) return -1;
  for (int r; (r = t->chains[c]) >= 0; c++)
    if (numPipeOps >= t->rules[r] && numPipeOps <= t->rules[r + 1]) return r;
  return -1;
}

/* Engine.getCollInfo, enforce */
static ncclResult_t ref_get_coll_info(void* context, ncclFunc_t collType, size_t nBytes, int numPipeOps,
                                      float** collCostTable, int numAlgo, int numProto, int* nChannels) {
  comm_t* c = context;
  if (!c || !collCostTable || !nChannels) return ncclSuccess;
  c->calls++;
  const table_t* t = c->table;
  if (!t || numAlgo <= 0 || numProto <= 0 || numAlgo * numProto > MAX_TABLE_ENTRIES) return ncclSuccess;
  int r = find(t, (int)collType, nBytes, numPipeOps);
  if (r < 0) return ncclSuccess;
  c->hits++;
  float* table = (float*)collCostTable;
  int n = t->rules[r + COUNT];
  for (int k = 1; k <= n; k++) {
    int packed = t->rules[r + COUNT + k];
    int a = packed & 0xff, p = (packed >> 8) & 0xff;
    if (a < numAlgo && p < numProto && table[a * numProto + p] >= 0.0f) {
      if (t->write) {
        table[a * numProto + p] = 0.0f;
        int ch = (int)((unsigned)packed >> 16);
        if (ch != 0) *nChannels = ch;
        c->applied++;
      }
      break;
    }
  }
  return ncclSuccess;
}

static ncclResult_t ref_destroy(void* context) {
  free(context);
  return ncclSuccess;
}

__attribute__((visibility("default"))) const ncclTuner_v3_t ncclTunerPlugin_v3 = {
  .name = "c-reference",
  .init = ref_init,
  .getCollInfo = ref_get_coll_info,
  .destroy = ref_destroy,
};
