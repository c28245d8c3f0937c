/*
 * oracle_host.c -- a minimal NCCL host for the randomized oracle test (OracleIT).
 *
 * Loads a tuner plugin's ncclTunerPlugin_vV (V = 3..6, from the script) and runs a script of
 * calls read from a file, printing what the plugin returned so that a model written from
 * docs/policy-format.md alone can be compared with it. Nothing here decides anything.
 *
 *   oracle_host PLUGIN SCRIPT
 *
 * Script lines (whitespace separated; '#' comments):
 *   version V                          the symbol to use (3..6); first line
 *   ncclversion CODE                   what the exported ncclGetVersion reports (0: an error)
 *   init ID NRANKS NNODES NVL MINR MAXR   a communicator (NVL.. only reach v5+)
 *   call ID COLL NBYTES PIPEOPS REGBUFF NALGO NPROTO NCHANNELS C0 .. C(NALGO*NPROTO-1)
 *   chunk ID COLL NBYTES ALGO PROTO NCHANNELS DEFAULT  (v6: getChunkSize)
 *   destroy ID
 * Costs are decimal floats, "nan" allowed. Output, one line per call / chunk:
 *   R <rc> <nChannels> <c0> ...   (costs as %.9g: a float's exact decimal round trip)
 *   K <rc> <chunkSize>
 *   I <rc>                        (per init)
 * Exit: 0 ok, 2 usage/IO.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nccl_tuner_abi.h"
#include "test_host.h"

#define MAX_COMMS 64
#define MAX_TABLE (NCCL_NUM_ALGORITHMS * NCCL_NUM_PROTOCOLS)

static int g_ncclVersion;

__attribute__((visibility("default"))) ncclResult_t ncclGetVersion(int* version) {
  if (g_ncclVersion <= 0 || version == NULL) return ncclInvalidUsage;
  *version = g_ncclVersion;
  return ncclSuccess;
}

static void logger(ncclDebugLogLevel level, unsigned long flags, const char* file, int line, const char* fmt, ...) {
  (void)flags;
  (void)file;
  (void)line;
  if (level > NCCL_LOG_INFO) return;
  va_list ap;
  va_start(ap, fmt);
  printf("L %d ", (int)level);
  vprintf(fmt, ap);
  putchar('\n');
  va_end(ap);
}

static void die(const char* what, int lineNo) {
  fprintf(stderr, "oracle_host: line %d: %s\n", lineNo, what);
  exit(TH_EXIT_USAGE);
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: oracle_host PLUGIN SCRIPT\n");
    return TH_EXIT_USAGE;
  }
  setvbuf(stdout, NULL, _IOFBF, 1 << 16);
  FILE* f = fopen(argv[2], "r");
  if (!f) {
    perror(argv[2]);
    return TH_EXIT_USAGE;
  }
  void* lib = NULL;
  const void* sym = NULL;
  int version = 0;
  void* ctx[MAX_COMMS] = {0};
  char* line = NULL;
  size_t cap = 0;
  int lineNo = 0;
  while (getline(&line, &cap, f) != -1) {
    lineNo++;
    char* save = NULL;
    char* kw = strtok_r(line, " \t\r\n", &save);
    if (!kw || kw[0] == '#') continue;
    char* tok[8 + MAX_TABLE + 4];
    int n = 0;
    for (char* t; n < (int)(sizeof tok / sizeof tok[0]) && (t = strtok_r(NULL, " \t\r\n", &save)) != NULL;)
      tok[n++] = t;
#define ARG_LL(i) strtoll(tok[i], NULL, 10)
    if (strcmp(kw, "version") == 0) {
      if (n != 1) die("version V", lineNo);
      version = (int)ARG_LL(0);
      if (version < 3 || version > 6) die("version 3..6", lineNo);
      lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
      if (!lib) die(dlerror(), lineNo);
      char name[32];
      snprintf(name, sizeof name, "ncclTunerPlugin_v%d", version);
      sym = dlsym(lib, name);
      if (!sym) die("symbol missing", lineNo);
    } else if (strcmp(kw, "ncclversion") == 0) {
      if (n != 1) die("ncclversion CODE", lineNo);
      g_ncclVersion = (int)ARG_LL(0);
    } else if (strcmp(kw, "init") == 0) {
      if (n != 6 || !sym) die("init ID NRANKS NNODES NVL MINR MAXR (after version)", lineNo);
      int id = (int)ARG_LL(0);
      if (id < 0 || id >= MAX_COMMS) die("comm id 0..63", lineNo);
      size_t nRanks = (size_t)ARG_LL(1), nNodes = (size_t)ARG_LL(2);
      ncclResult_t r;
      if (version <= 4) {
        r = version == 3 ? ((const ncclTuner_v3_t*)sym)->init(nRanks, nNodes, logger, &ctx[id]) :
                           ((const ncclTuner_v4_t*)sym)->init(nRanks, nNodes, logger, &ctx[id]);
      } else {
        ncclNvlDomainInfo_v5_t nvl = {(int)ARG_LL(3), (int)ARG_LL(4), (int)ARG_LL(5)};
        ncclTunerConstants_v5_t k;
        memset(&k, 0, sizeof k);
        uint64_t commId = 0x9e3779b97f4a7c15ull * (uint64_t)(id + 1);
        r = version == 5 ? ((const ncclTuner_v5_t*)sym)->init(&ctx[id], commId, nRanks, nNodes, logger, &nvl, &k) :
                           ((const ncclTuner_v6_t*)sym)->init(&ctx[id], commId, nRanks, nNodes, logger, &nvl, &k);
      }
      printf("I %d\n", (int)r);
    } else if (strcmp(kw, "call") == 0) {
      if (n < 8) die("call: too few fields", lineNo);
      int id = (int)ARG_LL(0);
      if (id < 0 || id >= MAX_COMMS) die("comm id 0..63", lineNo);
      int coll = (int)ARG_LL(1);
      size_t nBytes = (size_t)strtoull(tok[2], NULL, 10);
      int pipe = (int)ARG_LL(3), regBuff = (int)ARG_LL(4), nA = (int)ARG_LL(5), nP = (int)ARG_LL(6);
      int nChannels = (int)ARG_LL(7);
      if (nA < 1 || nA > NCCL_NUM_ALGORITHMS || nP < 1 || nP > NCCL_NUM_PROTOCOLS || n != 8 + nA * nP)
        die("call: bad table shape or cost count", lineNo);
      float table[MAX_TABLE];
      for (int i = 0; i < nA * nP; i++) table[i] = strtof(tok[8 + i], NULL);
      ncclResult_t r;
      if (version == 3)
        r = ((const ncclTuner_v3_t*)sym)
              ->getCollInfo(ctx[id], (ncclFunc_t)coll, nBytes, pipe, (float**)table, nA, nP, &nChannels);
      else /* v4, v5 and v6 share getCollInfo's signature and place */
        r = ((const ncclTuner_v4_t*)sym)
              ->getCollInfo(ctx[id], (ncclFunc_t)coll, nBytes, pipe, (float**)table, nA, nP, regBuff, &nChannels);
      printf("R %d %d", (int)r, nChannels);
      for (int i = 0; i < nA * nP; i++) printf(" %.9g", (double)table[i]);
      putchar('\n');
    } else if (strcmp(kw, "chunk") == 0) {
      if (n != 7) die("chunk ID COLL NBYTES ALGO PROTO NCHANNELS DEFAULT", lineNo);
      if (version != 6) die("chunk needs version 6", lineNo);
      int id = (int)ARG_LL(0);
      if (id < 0 || id >= MAX_COMMS) die("comm id 0..63", lineNo);
      size_t chunk = (size_t)strtoull(tok[6], NULL, 10);
      const ncclTuner_v6_t* v6 = sym;
      ncclResult_t r = v6->getChunkSize == NULL ?
                         ncclSuccess :
                         v6->getChunkSize(ctx[id], (ncclFunc_t)ARG_LL(1), (size_t)strtoull(tok[2], NULL, 10),
                                          (int)ARG_LL(3), (int)ARG_LL(4), (int)ARG_LL(5), &chunk);
      printf("K %d %zu\n", (int)r, chunk);
    } else if (strcmp(kw, "destroy") == 0) {
      if (n != 1) die("destroy ID", lineNo);
      int id = (int)ARG_LL(0);
      if (id < 0 || id >= MAX_COMMS) die("comm id 0..63", lineNo);
      ncclResult_t r;
      switch (version) { /* destroy (v3, v4) and finalize (v5, v6) sit in the same place */
        case 3: r = ((const ncclTuner_v3_t*)sym)->destroy(ctx[id]); break;
        case 4: r = ((const ncclTuner_v4_t*)sym)->destroy(ctx[id]); break;
        case 5: r = ((const ncclTuner_v5_t*)sym)->finalize(ctx[id]); break;
        default: r = ((const ncclTuner_v6_t*)sym)->finalize(ctx[id]); break;
      }
      ctx[id] = NULL;
      printf("D %d\n", (int)r);
    } else {
      die("unknown line", lineNo);
    }
  }
  free(line);
  fclose(f);
  fflush(stdout);
  return 0;
}
