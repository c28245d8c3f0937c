/*
 * profiler_host.c -- a compact host that plays NCCL's profiler event sequence (v5: NCCL 2.28; v6:
 * 2.29) against a profiler plugin, with the tuner of the same (or another) library deciding each
 * collective first, as NCCL does (shared/design/profiler-facts.md, "Order of events").
 *
 * Per collective: getCollInfo (NCCL then takes the cheapest entry; a non-zero nChannels wins),
 * then on the host thread GroupApi start, record GroupStartApiStop, CollApi start/stop, record
 * GroupEndApiStart, [KernelLaunch start/stop], Group start, Coll start/stop (parent CollApi,
 * parentGroup the Group), Group stop, GroupApi stop; then the proxy side per channel: [ProxyOp
 * start, [ProxyStep start/stop x2], stop], KernelCh start, record ncclProfilerKernelChStop, stop.
 * Which events are sent follows the activation mask the profiler returned, as NCCL's
 * src/plugin/profiler.cc does (a parent fires if any descendant's bit is set).
 *
 *   profiler_host --profiler LIB [--tuner LIB] [--version 5|6] [--colls N] [--channels C]
 *                 [--sizes B1,B2,..] [--rank R] [--late]
 *     prints "host: mask=0x.. sent GroupApi=.. CollApi=.. ..." (the events it started, by type)
 *     --late: after finalize, stops one GroupApi event started before it (a late call)
 *   profiler_host --bench ITERS --profiler LIB --floor NOOPLIB [--tuner LIB] [--channels 8,32]
 *     times the host-side and proxy-side events of one collective through the no-op profiler
 *     (the floor) and through LIB, in one process; prints "profiler bench: ..." lines.
 * Logger lines go to stdout as "NCCL <LEVEL> <message>".
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nccl_names.h"
#include "nccl_profiler_abi.h"
#include "nccl_select.h"
#include "nccl_tuner_abi.h"
#include "profiler_events.h"
#include "test_host.h"

TH_DIE_FUNCTION(die, "profiler_host: ", "\n", TH_EXIT_USAGE)

static int quietLog;
static void logger(ncclDebugLogLevel level, unsigned long flags, const char* file, int line, const char* fmt, ...) {
  (void)flags;
  (void)file;
  (void)line;
  if (quietLog && level != NCCL_LOG_WARN) return;
  char buf[2048];
  va_list ap;
  va_start(ap, fmt);
  th_format_log(buf, sizeof buf, fmt, ap);
  va_end(ap);
  printf("NCCL %s %s\n", level == NCCL_LOG_WARN ? "WARN" : level == NCCL_LOG_TRACE ? "TRACE" : "INFO", buf);
}

/* ---- the plugins -------------------------------------------------------------------------- */

typedef struct {
  int version;
  const ncclProfiler_v5_t* p; /* v5 and v6 share every signature but startEvent's descriptor */
  void* ctx;
  int mask;
} prof_t;

typedef struct {
  const ncclTuner_v5_t* t;
  void* ctx;
} tuner_t;

static void* openLib(const char* path) {
  void* lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL) die("%s", dlerror());
  return lib;
}

static const uint64_t kCommId = 0x5eedc0ffee123457ull;
static const int kRanks = 2, kNodes = 2;
static int hostRank;

static void profInit(prof_t* pr, const char* path, int version) {
  void* lib = openLib(path);
  char sym[32];
  snprintf(sym, sizeof sym, "ncclProfiler_v%d", version);
  pr->p = dlsym(lib, sym);
  if (pr->p == NULL) die("%s: no %s", path, sym);
  pr->version = version;
  pr->mask = 0;
  if (pr->p->init(&pr->ctx, kCommId, &pr->mask, "host-comm", kNodes, kRanks, hostRank, logger) != ncclSuccess)
    die("%s: profiler init failed", path);
}

static void tunerInit(tuner_t* tu, const char* path) {
  tu->t = NULL;
  tu->ctx = NULL;
  if (path == NULL) return;
  tu->t = dlsym(openLib(path), NCCL_TUNER_PLUGIN_SYMBOL_V5);
  if (tu->t == NULL) die("%s: no %s", path, NCCL_TUNER_PLUGIN_SYMBOL_V5);
  static ncclNvlDomainInfo_v5_t nvl;
  static ncclTunerConstants_v5_t constants;
  if (tu->t->init(&tu->ctx, kCommId, kRanks, kNodes, logger, &nvl, &constants) != ncclSuccess)
    die("%s: tuner init failed", path);
}

/* NCCL's selection after getCollInfo: the cheapest entry >= 0; a non-zero nChannels wins. */
static void decide(tuner_t* tu, size_t nBytes, int defChannels, int* algo, int* proto, int* nCh) {
  float table[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS];
  for (int a = 0; a < NCCL_NUM_ALGORITHMS; a++)
    for (int p = 0; p < NCCL_NUM_PROTOCOLS; p++) table[a][p] = -1.0f;
  float us = 5.0f + (float)nBytes / 20000.0f;
  table[0][0] = us * 1.3f;
  table[0][1] = -1.0f;
  table[0][2] = us * 1.2f; /* TREE */
  table[1][0] = us * 1.0f;
  table[1][1] = -1.0f;
  table[1][2] = us * 1.1f; /* RING: NCCL's pick, LL */
  int ch = 0;
  if (tu->t != NULL)
    tu->t->getCollInfo(tu->ctx, ncclFuncAllReduce, nBytes, 1, (float**)(void*)table, NCCL_NUM_ALGORITHMS,
                       NCCL_NUM_PROTOCOLS, 0, &ch);
  int pick = th_nccl_pick(&table[0][0], NCCL_NUM_ALGORITHMS, NCCL_NUM_PROTOCOLS);
  *algo = pick >= 0 ? pick / NCCL_NUM_PROTOCOLS : 1;
  *proto = pick >= 0 ? pick % NCCL_NUM_PROTOCOLS : 0;
  *nCh = ch > 0 ? ch : defChannels;
}

/* ---- one collective's events -------------------------------------------------------------- */

static unsigned long sent[16];

static int bitIndex(uint64_t t) {
  return __builtin_ctzll(t);
}

static void* start(prof_t* pr, ncclProfilerEventDescr_v6_t* d) {
  void* h = NULL;
  sent[bitIndex(d->type)]++;
  pr->p->startEvent(pr->ctx, &h, (ncclProfilerEventDescr_v5_t*)(void*)d); /* v6 begins with v5 */
  return h;
}

static void stop(prof_t* pr, void* h) {
  if (h != NULL) pr->p->stopEvent(h);
}

static void record(prof_t* pr, void* h, ncclProfilerEventState_t s, ncclProfilerEventStateArgs_v5_t* a) {
  if (h != NULL) pr->p->recordEventState(h, s, a);
}

typedef struct {
  void* coll;
  int nCh;
  uint64_t t0;
} pending_t;

static uint64_t seqNumber;

/* The host thread's events of one collective; returns the Coll handle for the proxy side.
 * keepGroupApi: the GroupApi handle is left open and returned in *groupApi (the --late check). */
static void* hostSide(prof_t* pr, size_t count, int algo, int proto, int nCh, void** groupApi) {
  const int m = pr->mask;
  ncclProfilerEventDescr_v6_t d;
  void *ga = NULL, *ca = NULL, *g = NULL, *co = NULL;
  if (m & TH_FIRES_GROUP_API) {
    memset(&d, 0, sizeof d);
    d.type = ncclProfileGroupApi;
    d.groupApi.groupDepth = 1;
    ga = start(pr, &d);
    record(pr, ga, ncclProfilerGroupStartApiStop, NULL);
  }
  if (m & TH_FIRES_COLL_API) {
    memset(&d, 0, sizeof d);
    d.type = ncclProfileCollApi;
    d.parentObj = ga;
    d.collApi.func = "AllReduce";
    d.collApi.count = count;
    d.collApi.datatype = "ncclFloat32";
    ca = start(pr, &d);
    stop(pr, ca);
  }
  record(pr, ga, ncclProfilerGroupEndApiStart, NULL);
  if (m & ncclProfileKernelLaunch) {
    memset(&d, 0, sizeof d);
    d.type = ncclProfileKernelLaunch;
    d.parentObj = ga;
    stop(pr, start(pr, &d));
  }
  if (m & TH_FIRES_GROUP) {
    memset(&d, 0, sizeof d);
    d.type = ncclProfileGroup;
    g = start(pr, &d);
  }
  if (m & TH_FIRES_COLL) {
    memset(&d, 0, sizeof d);
    d.type = ncclProfileColl;
    d.parentObj = ca;
    d.coll.seqNumber = seqNumber++;
    d.coll.func = "AllReduce";
    d.coll.count = count;
    d.coll.datatype = "ncclFloat32";
    d.coll.nChannels = (uint8_t)nCh;
    d.coll.nWarps = 16;
    d.coll.algo = ncclAlgoNames[algo];
    d.coll.proto = ncclProtoNames[proto];
    d.coll.parentGroup = g;
    co = start(pr, &d);
    stop(pr, co);
  }
  stop(pr, g);
  if (groupApi != NULL) *groupApi = ga;
  else stop(pr, ga);
  return co;
}

/* The proxy thread's events of one collective: per channel [ProxyOp [ProxyStep x2]] KernelCh. */
static void proxySide(prof_t* pr, void* co, int nCh, uint64_t t0) {
  const int m = pr->mask;
  ncclProfilerEventDescr_v6_t d;
  for (int c = 0; c < nCh; c++) {
    if (m & TH_FIRES_PROXY_OP) {
      memset(&d, 0, sizeof d);
      d.type = ncclProfileProxyOp;
      d.parentObj = co;
      d.proxyOp.channelId = (uint8_t)c;
      d.proxyOp.nSteps = 2;
      void* op = start(pr, &d);
      if (m & (ncclProfileProxyStep | ncclProfileNetPlugin))
        for (int s = 0; s < 2; s++) {
          memset(&d, 0, sizeof d);
          d.type = ncclProfileProxyStep;
          d.parentObj = op;
          d.proxyStep.step = s;
          stop(pr, start(pr, &d));
        }
      stop(pr, op);
    }
    if (m & ncclProfileKernelCh) {
      memset(&d, 0, sizeof d);
      d.type = ncclProfileKernelCh;
      d.parentObj = co;
      d.kernelCh.channelId = (uint8_t)c;
      d.kernelCh.pTimer = t0 + (uint64_t)c * 100u;
      void* kc = start(pr, &d);
      ncclProfilerEventStateArgs_v5_t a = {.kernelCh = {.pTimer = t0 + 50000u + (uint64_t)c * 100u}};
      record(pr, kc, ncclProfilerKernelChStop, &a);
      stop(pr, kc);
    }
  }
}

/* ---- the sequence and the bench ----------------------------------------------------------- */

static double nowNs(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

#define BATCH 64
#define MAX_BATCHES 65536

typedef struct {
  double host, proxy; /* ns per collective */
} cost_t;

static int cmpDouble(const void* x, const void* y) {
  double a = *(const double*)x, b = *(const double*)y;
  return a < b ? -1 : a > b;
}

/* The 10th percentile of n values (sorts them): robust to the preemptions of a loaded machine. */
static double p10(double* v, long n) {
  qsort(v, (size_t)n, sizeof *v, cmpDouble);
  return v[n / 10];
}

/* One batch of BATCH collectives through pr: the getCollInfo calls first (untimed; tu NULL for
 * the floor, whose run must not queue decisions for our profiler), then the host-side events of
 * the batch, then their proxy-side events, each timed as a block. */
static void batch(prof_t* pr, tuner_t* tu, int nCh, uint64_t base, double* host, double* proxy) {
  int algo[BATCH], proto[BATCH], ch[BATCH];
  void* coll[BATCH];
  for (int i = 0; i < BATCH; i++) decide(tu, 1u << 20, nCh, &algo[i], &proto[i], &ch[i]);
  double t0 = nowNs();
  for (int i = 0; i < BATCH; i++) coll[i] = hostSide(pr, (1u << 20) / 4, algo[i], proto[i], nCh, NULL);
  double t1 = nowNs();
  for (int i = 0; i < BATCH; i++) proxySide(pr, coll[i], nCh, base + (uint64_t)i * 100000u);
  double t2 = nowNs();
  *host = (t1 - t0) / BATCH;
  *proxy = (t2 - t1) / BATCH;
}

/* iters collectives through each, in alternating batches (the same conditions for both), after
 * a warm-up of iters/10; per side the 10th percentile of the batches' ns per collective. */
static void benchPair(prof_t* fl, prof_t* ours, tuner_t* tu, int nCh, long iters, cost_t* f, cost_t* o) {
  static double fh[MAX_BATCHES], fp[MAX_BATCHES], oh[MAX_BATCHES], op[MAX_BATCHES];
  tuner_t none = {NULL, NULL};
  long n = iters / BATCH, warm = n / 10 + 1;
  if (n > MAX_BATCHES) n = MAX_BATCHES;
  if (n < 10) n = 10;
  uint64_t base = 1000000000ull;
  for (long b = -warm; b < n; b++) {
    double a, c, d, e;
    batch(fl, &none, nCh, base, &a, &c);
    batch(ours, tu, nCh, base, &d, &e);
    base += BATCH * 100000ull;
    if (b < 0) continue;
    fh[b] = a, fp[b] = c, oh[b] = d, op[b] = e;
  }
  f->host = p10(fh, n), f->proxy = p10(fp, n), o->host = p10(oh, n), o->proxy = p10(op, n);
}

static int parseList(const char* s, long* out, int max) {
  int n = 0;
  while (s != NULL && *s && n < max) {
    char* end;
    out[n++] = strtol(s, &end, 0);
    s = *end == ',' ? end + 1 : NULL;
  }
  return n;
}

int main(int argc, char** argv) {
  const char *profiler = NULL, *tunerPath = NULL, *floorPath = NULL, *sizes = "1048576", *channelList = "8,32";
  int version = 5, nCh = 8, late = 0;
  long colls = 100, benchIters = 0;
  for (int i = 1; i < argc; i++) {
    const char* a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--late")) {
      late = 1;
      continue;
    }
    if (v == NULL) die("%s needs a value", a);
    i++;
    if (!strcmp(a, "--profiler")) profiler = v;
    else if (!strcmp(a, "--tuner")) tunerPath = v;
    else if (!strcmp(a, "--floor")) floorPath = v;
    else if (!strcmp(a, "--version")) version = atoi(v);
    else if (!strcmp(a, "--colls")) colls = atol(v);
    else if (!strcmp(a, "--channels")) {
      channelList = v;
      nCh = atoi(v);
    } else if (!strcmp(a, "--sizes")) sizes = v;
    else if (!strcmp(a, "--bench")) benchIters = atol(v);
    else if (!strcmp(a, "--rank")) hostRank = atoi(v);
    else die("unknown option %s", a);
  }
  if (profiler == NULL || (version != 5 && version != 6)) die("usage: see tests/hosts/profiler_host.c");
  setvbuf(stdout, NULL, _IOLBF, 0);

  if (benchIters > 0) {
    if (floorPath == NULL) die("--bench needs --floor");
    quietLog = 1;
    prof_t fl, ours;
    tuner_t tu;
    profInit(&fl, floorPath, version);
    profInit(&ours, profiler, version); /* then the tuner, on the same thread, as NCCL does */
    tunerInit(&tu, tunerPath);
    long chans[8];
    int nc = parseList(channelList, chans, 8);
    for (int k = 0; k < nc; k++) {
      int c = (int)chans[k];
      if (c < 1 || c > 64) die("channels %d not in 1..64", c);
      cost_t f, o;
      benchPair(&fl, &ours, &tu, c, benchIters, &f, &o);
      printf("profiler bench: %2d channels: floor host %.1f ns, proxy %.1f ns per collective; nccl-tuner-java "
             "host %.1f ns (+%.1f), proxy %.1f ns (+%.1f, +%.1f per channel)\n",
             c, f.host, f.proxy, o.host, o.host - f.host, o.proxy, o.proxy - f.proxy, (o.proxy - f.proxy) / c);
      printf("profiler bench result: channels=%d floorHostNs=%.1f floorProxyNs=%.1f hostNs=%.1f proxyNs=%.1f "
             "hostAddedNs=%.1f proxyAddedNs=%.1f proxyAddedPerChannelNs=%.1f\n",
             c, f.host, f.proxy, o.host, o.proxy, o.host - f.host, o.proxy - f.proxy, (o.proxy - f.proxy) / c);
    }
    if (tu.t != NULL) tu.t->finalize(tu.ctx);
    quietLog = 0;
    ours.p->finalize(ours.ctx);
    fl.p->finalize(fl.ctx);
    return 0;
  }

  prof_t pr;
  tuner_t tu;
  profInit(&pr, profiler, version);
  tunerInit(&tu, tunerPath);
  long sz[64];
  int ns = parseList(sizes, sz, 64);
  if (ns == 0) die("--sizes needs at least one size");
  void* lateHandle = NULL;
  for (long i = 0; i < colls; i++) {
    size_t nBytes = (size_t)sz[i % ns];
    int algo, proto, ch;
    decide(&tu, nBytes, nCh, &algo, &proto, &ch);
    void* co = hostSide(&pr, nBytes / 4, algo, proto, ch, late && i == colls - 1 ? &lateHandle : NULL);
    proxySide(&pr, co, ch, 1000000000ull + (uint64_t)i * 100000u);
  }
  printf("host: mask=0x%x sent GroupApi=%lu CollApi=%lu P2pApi=%lu KernelLaunch=%lu Group=%lu Coll=%lu P2p=%lu "
         "ProxyOp=%lu ProxyStep=%lu KernelCh=%lu\n",
         pr.mask, sent[8], sent[9], sent[10], sent[11], sent[0], sent[1], sent[2], sent[3], sent[4], sent[6]);
  if (tu.t != NULL) tu.t->finalize(tu.ctx); /* NCCL: the tuner's finalize, then the profiler's */
  pr.p->finalize(pr.ctx);
  if (lateHandle != NULL) pr.p->stopEvent(lateHandle); /* after finalize: must reach no chained plugin */
  printf("host: done\n");
  return 0;
}
