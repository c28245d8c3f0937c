/*
 * canary_host.c -- an interactive NCCL stand-in for the canary oracle (tests/oracle/canary_oracle.py).
 *
 * Loads one library as NCCL's profiler (ncclProfiler_v5, NCCL 2.28) and as its tuner
 * (ncclTunerPlugin_v5), then obeys commands read line by line from stdin, answering on stdout, so
 * that a model written from the documentation alone can choose each collective's GPU timestamps
 * and compare every answer. Nothing here decides anything but what NCCL itself would: the
 * strict-minimum selection of the returned cost table (from 3.6e9 us, first minimum wins,
 * entries >= 0) and the channel count (the tuner's when it set one, else the given default).
 *
 *   canary_host LIB
 *
 * Commands (whitespace separated):
 *   init RANK COMMID NRANKS NNODES       profiler init (v5), then tuner init (v5), on this thread
 *                                        -> "I <profilerRc> <tunerRc> <mask>"
 *   call COLL NBYTES PIPEOPS REGBUFF DEFCH C0 .. C20
 *                                        getCollInfo with a 7 x 3 table (algorithm-major), then
 *                                        NCCL's selection -> "R <rc> <nChannelsOut> <algo> <proto>
 *                                        <nChannelsExecuted> <c0> .. <c20>" (%.9g)
 *   ev DTYPE COUNT N S1 E1 .. SN EN      the events of the last call's collective as NCCL 2.28
 *                                        sends them (GroupApi, CollApi, Group, Coll with what was
 *                                        selected, then N KernelCh events with start pTimer Si and a
 *                                        ncclProfilerKernelChStop record with pTimer Ei; Ei = 0: no
 *                                        stop record) -> "E"
 *   fin                                  tuner finalize, then profiler finalize -> "F"
 * Logger lines: "NCCL <LEVEL> <message>". Exit 0 at end of input, 2 on a usage error.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nccl_names.h"
#include "nccl_profiler_abi.h"
#include "nccl_select.h"
#include "nccl_tuner_abi.h"
#include "profiler_events.h"
#include "test_host.h"

TH_DIE_FUNCTION(die, "canary_host: ", "\n", TH_EXIT_USAGE)

static void logger(ncclDebugLogLevel level, unsigned long flags, const char* file, int line, const char* fmt, ...) {
  (void)flags;
  (void)file;
  (void)line;
  char buf[4096];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  for (char* p = buf; *p; p++)
    if (*p == '\n') *p = ' ';
  printf("NCCL %s %s\n", level == NCCL_LOG_WARN ? "WARN" : level == NCCL_LOG_TRACE ? "TRACE" : "INFO", buf);
}

static const ncclProfiler_v5_t* prof;
static const ncclTuner_v5_t* tuner;
static void *profCtx, *tunerCtx;
static int mask;
static int rankOf;
static uint64_t seqNumber;
static int lastColl = -1, lastAlgo = -1, lastProto = -1, lastCh = 0;

static void* start(ncclProfilerEventDescr_v5_t* d) {
  void* h = NULL;
  d->rank = rankOf;
  prof->startEvent(profCtx, &h, d);
  return h;
}
static void stop(void* h) {
  if (h != NULL) prof->stopEvent(h);
}
static void record(void* h, ncclProfilerEventState_t s, ncclProfilerEventStateArgs_v5_t* a) {
  if (h != NULL) prof->recordEventState(h, s, a);
}

static void events(const char* dtype, size_t count, int n, const uint64_t* s, const uint64_t* e) {
  ncclProfilerEventDescr_v5_t d;
  void *ga = NULL, *ca = NULL, *g = NULL, *co = NULL;
  const char* func = ncclFuncNames[lastColl];
  if (mask & TH_FIRES_GROUP_API) {
    memset(&d, 0, sizeof d);
    d.type = ncclProfileGroupApi;
    d.groupApi.groupDepth = 1;
    ga = start(&d);
    record(ga, ncclProfilerGroupStartApiStop, NULL);
  }
  if (mask & TH_FIRES_COLL_API) {
    memset(&d, 0, sizeof d);
    d.type = ncclProfileCollApi;
    d.parentObj = ga;
    d.collApi.func = func;
    d.collApi.count = count;
    d.collApi.datatype = dtype;
    ca = start(&d);
    stop(ca);
  }
  record(ga, ncclProfilerGroupEndApiStart, NULL);
  if (mask & ncclProfileKernelLaunch) {
    memset(&d, 0, sizeof d);
    d.type = ncclProfileKernelLaunch;
    d.parentObj = ga;
    stop(start(&d));
  }
  if (mask & TH_FIRES_GROUP) {
    memset(&d, 0, sizeof d);
    d.type = ncclProfileGroup;
    d.parentObj = ga;
    g = start(&d);
  }
  if (mask & TH_FIRES_COLL) {
    memset(&d, 0, sizeof d);
    d.type = ncclProfileColl;
    d.parentObj = ca;
    d.coll.seqNumber = seqNumber++;
    d.coll.func = func;
    d.coll.count = count;
    d.coll.datatype = dtype;
    d.coll.nChannels = (uint8_t)lastCh;
    d.coll.nWarps = 16;
    d.coll.algo = lastAlgo >= 0 ? ncclAlgoNames[lastAlgo] : "Undefined";
    d.coll.proto = lastProto >= 0 ? ncclProtoNames[lastProto] : "Undefined";
    d.coll.parentGroup = g;
    co = start(&d);
    stop(co);
  }
  stop(g);
  stop(ga);
  if (mask & ncclProfileKernelCh)
    for (int c = 0; c < n; c++) {
      memset(&d, 0, sizeof d);
      d.type = ncclProfileKernelCh;
      d.parentObj = co;
      d.kernelCh.channelId = (uint8_t)c;
      d.kernelCh.pTimer = s[c];
      void* kc = start(&d);
      if (e[c] != 0) {
        ncclProfilerEventStateArgs_v5_t a = {.kernelCh = {.pTimer = e[c]}};
        record(kc, ncclProfilerKernelChStop, &a);
      }
      stop(kc);
    }
}

#define MAXTOK 200

int main(int argc, char** argv) {
  if (argc != 2) die("usage: canary_host LIB");
  setvbuf(stdout, NULL, _IOLBF, 0);
  void* lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL) die("%s", dlerror());
  prof = dlsym(lib, NCCL_PROFILER_PLUGIN_SYMBOL_V5);
  tuner = dlsym(lib, NCCL_TUNER_PLUGIN_SYMBOL_V5);
  if (prof == NULL || tuner == NULL) die("%s: no ncclProfiler_v5 or ncclTunerPlugin_v5", argv[1]);
  static char line[1 << 16];
  char* tok[MAXTOK];
  while (fgets(line, sizeof line, stdin) != NULL) {
    int nt = 0;
    for (char* t = strtok(line, " \t\r\n"); t != NULL && nt < MAXTOK; t = strtok(NULL, " \t\r\n")) tok[nt++] = t;
    if (nt == 0) continue;
    if (!strcmp(tok[0], "init") && nt == 5) {
      rankOf = atoi(tok[1]);
      uint64_t commId = strtoull(tok[2], NULL, 0);
      int nRanks = atoi(tok[3]), nNodes = atoi(tok[4]);
      mask = 0;
      int prc = prof->init(&profCtx, commId, &mask, "oracle-comm", nNodes, nRanks, rankOf, logger);
      static ncclNvlDomainInfo_v5_t nvl;
      static ncclTunerConstants_v5_t constants;
      nvl.nNvlDomains = nNodes;
      nvl.minRanksPerNvlDomain = nvl.maxRanksPerNvlDomain = nRanks / nNodes;
      int trc = tuner->init(&tunerCtx, commId, (size_t)nRanks, (size_t)nNodes, logger, &nvl, &constants);
      printf("I %d %d %d\n", prc, trc, mask);
    } else if (!strcmp(tok[0], "call") && nt == 6 + NCCL_NUM_ALGORITHMS * NCCL_NUM_PROTOCOLS) {
      float table[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS];
      int coll = atoi(tok[1]);
      if (coll < 0 || coll > 4) die("collective %d", coll);
      size_t nBytes = strtoull(tok[2], NULL, 0);
      int pipeOps = atoi(tok[3]), regBuff = atoi(tok[4]), defCh = atoi(tok[5]);
      for (int i = 0; i < NCCL_NUM_ALGORITHMS * NCCL_NUM_PROTOCOLS; i++)
        table[i / NCCL_NUM_PROTOCOLS][i % NCCL_NUM_PROTOCOLS] = strtof(tok[6 + i], NULL);
      int ch = 0;
      int rc = tuner->getCollInfo(tunerCtx, (ncclFunc_t)coll, nBytes, pipeOps, (float**)(void*)table,
                                  NCCL_NUM_ALGORITHMS, NCCL_NUM_PROTOCOLS, regBuff, &ch);
      int pick = th_nccl_pick(&table[0][0], NCCL_NUM_ALGORITHMS, NCCL_NUM_PROTOCOLS);
      int algo = pick >= 0 ? pick / NCCL_NUM_PROTOCOLS : -1, proto = pick >= 0 ? pick % NCCL_NUM_PROTOCOLS : -1;
      lastColl = coll, lastAlgo = algo, lastProto = proto, lastCh = ch > 0 ? ch : defCh;
      printf("R %d %d %d %d %d", rc, ch, algo, proto, lastCh);
      for (int i = 0; i < NCCL_NUM_ALGORITHMS * NCCL_NUM_PROTOCOLS; i++)
        printf(" %.9g", (double)table[i / NCCL_NUM_PROTOCOLS][i % NCCL_NUM_PROTOCOLS]);
      printf("\n");
    } else if (!strcmp(tok[0], "ev") && nt >= 4) {
      if (lastColl < 0) die("ev before call");
      int n = atoi(tok[3]);
      if (n < 0 || n > 64 || nt != 4 + 2 * n) die("ev: %d channels, %d tokens", n, nt);
      uint64_t s[64], e[64];
      for (int c = 0; c < n; c++) {
        s[c] = strtoull(tok[4 + 2 * c], NULL, 0);
        e[c] = strtoull(tok[5 + 2 * c], NULL, 0);
      }
      events(tok[1], strtoull(tok[2], NULL, 0), n, s, e);
      printf("E\n");
    } else if (!strcmp(tok[0], "fin")) {
      tuner->finalize(tunerCtx);
      prof->finalize(profCtx);
      printf("F\n");
    } else {
      die("bad command '%s' (%d tokens)", tok[0], nt);
    }
  }
  return 0;
}
