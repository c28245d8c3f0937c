/*
 * simcluster.c -- a simulated GPU cluster that behaves like an nccl-tests binary, for CI.
 *
 * A test double, nothing more: it accepts the nccl-tests options `nccl-tuner sweep` uses, loads
 * a tuner plugin exactly as NCCL 2.22 .. 2.30 does (src/plugin/tuner.cc: NCCL_TUNER_PLUGIN,
 * dlopen(name) then dlopen("libnccl-tuner-<name>.so"), dlsym("ncclTunerPlugin_v3"), init per
 * communicator with a logger, getCollInfo per collective, destroy), asks it at each size with a
 * 7x3 cost table from its own "NCCL model", applies NCCL's selection to the table the plugin
 * returns (strict minimum over entries >= 0 from 3.6e9 us, algorithm-major, the first minimum
 * winning; a non-zero nChannels replaces the default channel count; NCCL src/enqueue.cc
 * topoGetAlgoInfo, 2.19 .. 2.30), and prints nccl-tests 2.18-format output whose times come from
 * its "true" model plus seeded noise. The two models differ in known places, so a tuner that
 * learns from measurements can beat NCCL's default. docs/measure.md documents the model.
 *
 *   simcluster [all_reduce_perf|all_gather_perf|reduce_scatter_perf|broadcast_perf|reduce_perf]
 *              [-b MIN] [-e MAX] [-f FACTOR] [-g GPUS] [-n ITERS] [-w WARMUP] [-c CHECK]
 *              [-d TYPE] [-o OP] [-t THREADS] [--collective NAME] [--truth]
 *              [--nccl-era 2.27|2.28|2.29|2.30 [--rank R] [--comm-id N] [--calls FILE] [--exec-algo ALGO]]
 *
 * The collective is the positional op name, else --collective (all_reduce, AllReduce, ...),
 * else the program's own name (a symlink all_reduce_perf -> simcluster works), else AllReduce.
 * Sizes take K/M/G suffixes (powers of 1024), as nccl-tests does.
 *
 * Environment: SIMCLUSTER_NODES (nodes, default 2; -g GPUs each, default 8), SIMCLUSTER_SEED
 * (noise seed; unset: pid and clock, so every process draws afresh like a real run; within
 * `nccl-tuner sweep`, mixed with its NCCL_TUNER_SWEEP_SEED and NCCL_TUNER_SWEEP_REPLICATE, so each
 * replicate draws its own noise),
 * SIMCLUSTER_NOISE (relative sigma, default 0.02; 0 = noiseless), SIMCLUSTER_GPU (device name),
 * NCCL_DEBUG=INFO (NCCL-style INFO lines: version, comm shape, plugin, one selection line per
 * size), NCCL_TUNER_PLUGIN.
 *
 * --truth prints, instead of running, the noiseless true time of every offered candidate at
 * each size, and NCCL's default pick, as "# truth ..." lines (for tests that need the model's
 * optimum).
 *
 * --nccl-era 2.27|2.28|2.29|2.30 (or SIMCLUSTER_NCCL_ERA) runs like that NCCL release instead:
 * the tuner through the newest symbol it knows (2.27 ncclTunerPlugin_v4 with regBuff and no
 * commId, 2.28/2.29 _v5 with commId = NCCL's commHash, 2.30 _v6 with getChunkSize; older symbols
 * as fallbacks), one getCollInfo per collective launched (-w warmup + -n out-of-place + -n
 * in-place iterations per size, as nccl-tests launches them) and, with NCCL_PROFILER_PLUGIN set,
 * the profiler plugin (2.27 ncclProfiler_v4, 2.28 _v5, 2.29/2.30 _v6; src/plugin/profiler.cc):
 * init before the tuner's init on the same thread, then per collective the events of that
 * release in NCCL's order, filtered by the activation mask the init returned (a parent fires when
 * a descendant's bit is set), the KernelCh events of each collective after its Coll stopped, from
 * a second thread (NCCL's proxy thread; SIMCLUSTER_PROXY=inline emits them on the main thread),
 * with GPU timestamps from the true model plus noise (the channels' span is the collective's
 * time), and finalize after the tuner's destroy. docs/dev/simcluster.md, "The simulated canary".
 * Era-mode options: --rank R (SIMCLUSTER_RANK, default 0: the rank the profiler's init gets; the
 * noise seed is mixed with it), --comm-id N (SIMCLUSTER_COMM_ID: the commHash, default a constant
 * every rank shares), --calls FILE (SIMCLUSTER_CALLS: one line per getCollInfo, "INDEX FUNC
 * NBYTES ALGO/PROTO/CHANNELS SPAN_NS": what executed and its device time), --exec-algo NAME (SIMCLUSTER_EXEC_ALGO: NCCL runs
 * that algorithm, where offered, whatever the selection said: an override after the tuner, for
 * negative controls).
 *
 * Exit status: 0 ok, 2 usage error, 3 the plugin broke a rule of the v3 interface (wrote a -1
 * entry, returned an error, or returned a channel count outside 0..64).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "nccl_tuner_java.h"
#include "nccl_names.h"
#include "nccl_profiler_abi.h"
#include "nccl_select.h"
#include "profiler_events.h"
#include "test_host.h"

#define NA NCCL_NUM_ALGORITHMS
#define NP NCCL_NUM_PROTOCOLS
#define DEFAULT_CHANNELS 8  /* the channel count NCCL's own choice runs with here */
#define MAX_SIM_CHANNELS 32 /* channels the simulated GPUs have */
#define PLATEAU_P 0.02      /* probability that one reading lands on the second plateau */
#define PLATEAU_X 1.30      /* the second plateau: 30% slower */

static const char* const kProg[5] = {"broadcast", "reduce", "all_gather", "reduce_scatter", "all_reduce"};

/* ---- the model -----------------------------------------------------------------------------
 * time(a, p, c, n) = L[a][p] * (0.75 + c / 32) + n * F / (B[a][p] * sqrt(c / 8) * 1e3)   [us]
 * with L in us and B in GB/s at 8 channels, n the bytes NCCL passes to the tuner, c channels and
 * F the bus factor of the collective (AllReduce 2(R-1)/R, AllGather and ReduceScatter (R-1)/R,
 * Broadcast and Reduce 1; R = nRanks). More channels: more bandwidth, more latency.
 * TREE is offered for AllReduce only; RING for every collective; every other algorithm is -1.
 * NCCL's model (the cost table passed to the tuner) is the same formula at c = 8 with three
 * known errors:
 *   E1  TREE/LL128 bandwidth: NCCL predicts 7 GB/s, the truth is 12 GB/s
 *   E2  RING/SIMPLE latency:  NCCL predicts 16 us,  the truth is 28 us
 *   E3  channels: NCCL runs every pick on 8 channels; at large sizes 16 are faster (the table
 *       has no channel dimension, so NCCL cannot see it)
 */
static const double kTrueL[2][NP] = {{8, 11, 24}, {10, 14, 28}}; /* [TREE, RING][LL, LL128, SIMPLE] */
static const double kTrueB[2][NP] = {{3.5, 12, 30}, {4, 14, 36}};
static const double kNcclL[2][NP] = {{8, 11, 24}, {10, 14, 16}}; /* E2 */
static const double kNcclB[2][NP] = {{3.5, 7, 30}, {4, 14, 36}}; /* E1 */

static int g_coll = 4;
static long g_nRanks, g_nNodes;

/* SIMCLUSTER_MODEL=tune: NCCL's model from its constants, and a shape-dependent truth (tunemodel.h) */
static int g_tm;
static int tm_offered(int a, int p);
static void tm_nccl_table(double n, float table[NA][NP]);
static double tm_true_time(int a, int p, double n);

static double bus_factor(void) {
  double R = (double)g_nRanks;
  switch (g_coll) {
    case 4: return 2.0 * (R - 1) / R;
    case 2:
    case 3: return (R - 1) / R;
    default: return 1.0;
  }
}

static int offered(int a, int p) {
  if (g_tm) return tm_offered(a, p);
  if (a == 1) return 1;           /* RING */
  if (a == 0) return g_coll == 4; /* TREE: AllReduce only */
  return 0;
}

static double model_time(const double L[2][NP], const double B[2][NP], int a, int p, int c, double n) {
  return L[a][p] * (0.75 + c / 32.0) + n * bus_factor() / (B[a][p] * sqrt(c / 8.0) * 1e3);
}

static double true_time(int a, int p, int c, double n) {
  if (g_tm) return tm_true_time(a, p, n);
  return model_time(kTrueL, kTrueB, a, p, c, n);
}

static void nccl_table(double n, float table[NA][NP]) {
  if (g_tm) {
    tm_nccl_table(n, table);
    return;
  }
  for (int a = 0; a < NA; a++)
    for (int p = 0; p < NP; p++)
      table[a][p] =
        offered(a, p) ? (float)model_time(kNcclL, kNcclB, a, p, DEFAULT_CHANNELS, n) : (float)NCCL_ALGO_PROTO_IGNORE;
}

/* ---- seeded noise: splitmix64 + Box-Muller ----------------------------------------------- */

static uint64_t g_rng;
static double g_sigma = 0.02;

static double uniform01(void) {
  uint64_t z = (g_rng += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  return ((z >> 11) + 0.5) / 9007199254740992.0;
}

static double reading(double t) {
  if (g_sigma <= 0) return t;
  double g = sqrt(-2 * log(uniform01())) * cos(2 * M_PI * uniform01());
  double x = t * (1 + g_sigma * g);
  if (uniform01() < PLATEAU_P) x *= PLATEAU_X;
  return x > 0.01 ? x : 0.01;
}

/* ---- NCCL-style logger ------------------------------------------------------------------- */

static int g_info;
static char g_host[64] = "sim-node0";
static int g_pid;
static int g_warns;

static void sim_logger(ncclDebugLogLevel level, unsigned long flags, const char* file, int line, const char* fmt, ...) {
  (void)flags;
  (void)file;
  (void)line;
  if (level == NCCL_LOG_WARN) g_warns++;
  if (fmt == NULL || (level != NCCL_LOG_WARN && !g_info)) return;
  if (level != NCCL_LOG_WARN && level != NCCL_LOG_INFO && level != NCCL_LOG_VERSION) return;
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  th_format_log(msg, sizeof msg, fmt, ap);
  va_end(ap);
  printf("%s:%d:%ld [0] NCCL %s %s\n", g_host, g_pid, (long)syscall(SYS_gettid),
         level == NCCL_LOG_WARN ? "WARN" : "INFO", msg);
}

static void info(const char* fmt, ...) {
  if (!g_info) return;
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  printf("%s:%d:%d [0] NCCL INFO %s\n", g_host, g_pid, g_pid, msg);
}

/* ---- plugin loading, as NCCL's src/plugin/tuner.cc ---------------------------------------- */

static void* open_tuner_lib(void) {
  const char* name = getenv("NCCL_TUNER_PLUGIN");
  void* h = NULL;
  if (name && *name) {
    h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      info("TUNER/Plugin: Could not find: %s", name);
      char lib[PATH_MAX];
      snprintf(lib, sizeof lib, "libnccl-tuner-%s.so", name);
      h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
      if (!h) info("TUNER/Plugin: Could not find: %s", lib);
    }
  } else {
    h = dlopen("libnccl-tuner.so", RTLD_NOW | RTLD_LOCAL);
    if (!h) info("TUNER/Plugin: Could not find: libnccl-tuner.so");
  }
  if (!h) info("TUNER/Plugin: Using internal tuner plugin.");
  return h;
}

static const ncclTuner_v3_t* load_plugin(void) {
  void* h = open_tuner_lib();
  if (!h) return NULL;
  const ncclTuner_v3_t* t = (const ncclTuner_v3_t*)dlsym(h, NCCL_TUNER_PLUGIN_SYMBOL);
  if (!t || !t->init || !t->getCollInfo || !t->destroy) {
    info("TUNER/Plugin: Failed to find %s symbol, using internal tuner instead.", NCCL_TUNER_PLUGIN_SYMBOL);
    return NULL;
  }
  info("TUNER/Plugin: Using %s (v3)", t->name ? t->name : "(null)");
  return t;
}

/* ---- options ------------------------------------------------------------------------------ */

static void usage(const char* why) {
  fprintf(stderr,
          "simcluster: %s\nusage: simcluster [OP_perf] [-b MIN] [-e MAX] [-f FACTOR] [-g GPUS] "
          "[-n ITERS] [-w WARMUP] [-c CHECK] [-d TYPE] [-o OP] [-t THREADS] [--collective NAME] [--truth]\n"
          "       [--nccl-era 2.27|2.28|2.29|2.30 [--rank R] [--comm-id N] [--calls FILE] [--exec-algo ALGO]]\n",
          why);
  exit(2);
}

static size_t parse_size(const char* s) {
  char* end;
  double v = strtod(s, &end);
  if (end == s || v < 0) usage("a size must be a number of bytes, with an optional K, M or G");
  switch (*end) {
    case 'K':
    case 'k': v *= 1024; break;
    case 'M':
    case 'm': v *= 1024 * 1024; break;
    case 'G':
    case 'g': v *= 1024.0 * 1024 * 1024; break;
    case '\0': break;
    default: usage("a size must be a number of bytes, with an optional K, M or G");
  }
  return (size_t)v;
}

static int coll_of(const char* s) {
  char n[64];
  size_t k = 0;
  for (const char* p = s; *p && k < sizeof n - 1; p++)
    if (*p != '_' && *p != '-') n[k++] = (char)(*p | 0x20);
  n[k] = '\0';
  if (k > 4 && strcmp(n + k - 4, "perf") == 0) n[k - 4] = '\0';
  static const char* const flat[5] = {"broadcast", "reduce", "allgather", "reducescatter", "allreduce"};
  for (int i = 0; i < 5; i++)
    if (strcmp(n, flat[i]) == 0) return i;
  return -1;
}

static int type_size(const char* d) {
  if (!strcmp(d, "half") || !strcmp(d, "bfloat16") || !strcmp(d, "float16")) return 2;
  if (!strcmp(d, "double") || !strcmp(d, "int64") || !strcmp(d, "uint64")) return 8;
  if (!strcmp(d, "int8") || !strcmp(d, "uint8")) return 1;
  return 4;
}

/* ---- what NCCL checks of a tuner's answer, and nccl-tests' table: both modes --------------- */

/* The rules of getCollInfo's answer (r, its return code; t, the table it returned; before, the table
 * it was given): an error puts the table back, a written -1 entry (put back where fix is set) and an
 * nChannels outside 0..64 (then 0) break the interface. Each break is a stderr line; returns how many. */
static int check_tuner(ncclResult_t r, float t[NA][NP], float before[NA][NP], int* nChannels, int fix) {
  int bad = 0;
  if (r != ncclSuccess) {
    fprintf(stderr, "simcluster: getCollInfo returned %d\n", (int)r);
    bad++;
    memcpy(t, before, sizeof(float[NA][NP]));
  }
  for (int a = 0; a < NA; a++)
    for (int p = 0; p < NP; p++)
      if (before[a][p] < 0 && t[a][p] != before[a][p]) {
        fprintf(stderr, "simcluster: the tuner wrote the -1 entry %s/%s\n", ncclAlgoNames[a], ncclProtoNames[p]);
        bad++;
        if (fix) t[a][p] = before[a][p];
      }
  if (*nChannels < 0 || *nChannels > NCCL_TUNER_JAVA_MAX_CHANNELS) {
    fprintf(stderr, "simcluster: the tuner returned nChannels %d\n", *nChannels);
    bad++;
    *nChannels = 0;
  }
  return bad;
}

/* nccl-tests' table: its head, */
static void table_head(void) {
  printf("#\n#%58s%35s\n", "out-of-place", "in-place");
  printf("#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   "
         "busbw #wrong\n");
  printf(
    "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)\n");
}

/* one row a size (after NCCL's selection line for it: algorithm a, protocol p, ch channels; tOut and
 * tIn the out-of-place and in-place times in us), returning the out-of-place bus bandwidth, */
static double table_row(size_t n, const char* dtype, const char* op, int check, int a, int p, int ch, double tOut,
                        double tIn) {
  /* NCCL 2.24+ prints AllGather / ReduceScatter bytes per rank */
  size_t shown = (g_coll == 2 || g_coll == 3) ? n / (size_t)g_nRanks : n;
  info("%s: %zu Bytes -> Algo %s proto %s channel{Lo..Hi}={0..%d}", ncclFuncNames[g_coll], shown, ncclAlgoNames[a],
       ncclProtoNames[p], ch - 1);
  size_t ts = (size_t)type_size(dtype);
  size_t count = n / ts;
  if (g_coll == 2 || g_coll == 3) count = n / ts / (size_t)g_nRanks; /* per-rank count */
  double bf = bus_factor();
  double algOut = (double)n / tOut / 1e3, algIn = (double)n / tIn / 1e3;
  const char* wrong = check ? "0" : "N/A";
  printf("%12zu  %12zu  %8s  %6s  %6d  %7.2f  %6.2f  %6.2f  %5s  %7.2f  %6.2f  %6.2f  %5s\n", n, count, dtype,
         (g_coll == 0 || g_coll == 2) ? "none" : op, (g_coll == 0 || g_coll == 1) ? 0 : -1, tOut, algOut, algOut * bf,
         wrong, tIn, algIn, algIn * bf, wrong);
  return algOut * bf;
}

/* and its tail, with the mean bus bandwidth of its rows. */
static void table_tail(double busSum, int rows) {
  printf("# Out of bounds values : 0 OK\n# Avg bus bandwidth    : %.4f \n#\n", rows ? busSum / rows : 0.0);
  printf("# Collective test concluded: %s_perf\n#\n", kProg[g_coll]);
}

/* ---- era mode: a release's tuner and profiler ABIs (--nccl-era) ---------------------------- */

static int g_era; /* 0: the v3 path above; else 227, 228, 229, 230 */
static int g_rank;
static uint64_t g_commId;
static int g_execAlgo = -1; /* --exec-algo: the algorithm NCCL runs, where offered */
static int g_proxyInline;   /* SIMCLUSTER_PROXY=inline */

static int g_tunerVer; /* 3..6 */
static const void* g_tuner;
static void* g_tctx;

static int g_profVer; /* 0: no profiler; 4..6 */
static const void* g_prof;
static void* g_pctx;
static int g_mask;                                /* NCCL's one process-wide activation mask (ncclProfilerEventMask) */
static uint64_t g_seq[5];                         /* comm->seqNumber[func] */
static uint64_t g_gpuNs = 1700000000000000000ULL; /* the simulated GPU globaltimer */

static const char* era_version(void) {
  switch (g_era) {
    case 227: return "2.27.7";
    case 228: return "2.28.9";
    case 229: return "2.29.7";
    default: return "2.30.7";
  }
}

/* The tuner, by the newest symbol the release knows, then older ones (src/plugin/tuner.cc). */
static int era_load_tuner(void) {
  void* h = open_tuner_lib();
  if (!h) return 0;
  static const char* const syms[4] = {NCCL_TUNER_PLUGIN_SYMBOL, NCCL_TUNER_PLUGIN_SYMBOL_V4,
                                      NCCL_TUNER_PLUGIN_SYMBOL_V5, NCCL_TUNER_PLUGIN_SYMBOL_V6};
  int newest = g_era >= 230 ? 6 : g_era >= 228 ? 5 : 4;
  for (int v = newest; v >= 3; v--) {
    const void* t = dlsym(h, syms[v - 3]);
    if (!t) {
      info("TUNER/Plugin: Failed to find %s symbol", syms[v - 3]);
      continue;
    }
    g_tuner = t;
    g_tunerVer = v;
    info("TUNER/Plugin: Using %s (v%d)", *(const char* const*)t ? *(const char* const*)t : "(null)", v);
    return 1;
  }
  info("TUNER/Plugin: Using internal tuner plugin.");
  return 0;
}

static ncclNvlDomainInfo_v5_t g_nvl;
static ncclTunerConstants_v5_t g_constants;
#include "tunemodel.h"

static ncclResult_t era_tuner_init(int gpus) {
  switch (g_tunerVer) {
    case 3: return ((const ncclTuner_v3_t*)g_tuner)->init((size_t)g_nRanks, (size_t)g_nNodes, sim_logger, &g_tctx);
    case 4: return ((const ncclTuner_v4_t*)g_tuner)->init((size_t)g_nRanks, (size_t)g_nNodes, sim_logger, &g_tctx);
    default:
      g_nvl.nNvlDomains = (int)g_nNodes;
      g_nvl.minRanksPerNvlDomain = g_nvl.maxRanksPerNvlDomain = gpus;
      if (g_tunerVer == 5)
        return ((const ncclTuner_v5_t*)g_tuner)
          ->init(&g_tctx, g_commId, (size_t)g_nRanks, (size_t)g_nNodes, sim_logger, &g_nvl, &g_constants);
      return ((const ncclTuner_v6_t*)g_tuner)
        ->init(&g_tctx, g_commId, (size_t)g_nRanks, (size_t)g_nNodes, sim_logger, &g_nvl, &g_constants);
  }
}

static ncclResult_t era_tuner_get(size_t n, float t[NA][NP], int* nChannels) {
  switch (g_tunerVer) {
    case 3:
      return ((const ncclTuner_v3_t*)g_tuner)
        ->getCollInfo(g_tctx, (ncclFunc_t)g_coll, n, 1, (float**)t, NA, NP, nChannels);
    case 4:
      return ((const ncclTuner_v4_t*)g_tuner)
        ->getCollInfo(g_tctx, (ncclFunc_t)g_coll, n, 1, (float**)t, NA, NP, 0, nChannels);
    case 5:
      return ((const ncclTuner_v5_t*)g_tuner)
        ->getCollInfo(g_tctx, (ncclFunc_t)g_coll, n, 1, (float**)t, NA, NP, 0, nChannels);
    default:
      return ((const ncclTuner_v6_t*)g_tuner)
        ->getCollInfo(g_tctx, (ncclFunc_t)g_coll, n, 1, (float**)t, NA, NP, 0, nChannels);
  }
}

static void era_tuner_destroy(void) {
  switch (g_tunerVer) {
    case 3: ((const ncclTuner_v3_t*)g_tuner)->destroy(g_tctx); break;
    case 4: ((const ncclTuner_v4_t*)g_tuner)->destroy(g_tctx); break;
    case 5: ((const ncclTuner_v5_t*)g_tuner)->finalize(g_tctx); break;
    default: ((const ncclTuner_v6_t*)g_tuner)->finalize(g_tctx); break;
  }
}

/* v5 and v6 descriptors share their layout up to v5's last member: one v6 struct serves both. */
_Static_assert(offsetof(ncclProfilerEventDescr_v5_t, coll.parentGroup) ==
                 offsetof(ncclProfilerEventDescr_v6_t, coll.parentGroup),
               "v5/v6 coll layout");
_Static_assert(offsetof(ncclProfilerEventDescr_v5_t, kernelCh.pTimer) ==
                 offsetof(ncclProfilerEventDescr_v6_t, kernelCh.pTimer),
               "v5/v6 kernelCh layout");
_Static_assert(offsetof(ncclProfilerEventDescr_v5_t, collApi.graphCaptured) ==
                 offsetof(ncclProfilerEventDescr_v6_t, collApi.graphCaptured),
               "v5/v6 collApi layout");

/* Starts an event (h = its handle) from a descriptor in the loaded profiler's layout: v4's, or v6's
 * for v5 and v6. The statements after V56 fill `d` by the member names both layouts share; V56 sets
 * what only v5 and v6 have. */
#define START_EVENT_V56(h, V56, ...) \
  do { \
    if (g_profVer == 4) { \
      ncclProfilerEventDescr_v4_t d; \
      memset(&d, 0, sizeof d); \
      __VA_ARGS__; \
      (h) = p_start(&d); \
    } else { \
      ncclProfilerEventDescr_v6_t d; \
      memset(&d, 0, sizeof d); \
      __VA_ARGS__; \
      V56; \
      (h) = p_start(&d); \
    } \
  } while (0)
#define START_EVENT(h, ...) START_EVENT_V56(h, (void)0, __VA_ARGS__) /* the same members in v4 and v5/v6 */

/* The profiler (src/plugin/profiler.cc): NCCL_PROFILER_PLUGIN, newest symbol of the release first. */
static void era_load_profiler(void) {
  const char* name = getenv("NCCL_PROFILER_PLUGIN");
  if (!name || !*name) return;
  void* h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    char lib[PATH_MAX];
    snprintf(lib, sizeof lib, "libnccl-profiler-%s.so", name);
    h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
  }
  if (!h) {
    info("PROFILER/Plugin: Could not find: %s", name);
    return;
  }
  static const char* const syms[3] = {NCCL_PROFILER_PLUGIN_SYMBOL_V4, NCCL_PROFILER_PLUGIN_SYMBOL_V5,
                                      NCCL_PROFILER_PLUGIN_SYMBOL_V6};
  int newest = g_era >= 229 ? 6 : g_era >= 228 ? 5 : 4;
  for (int v = newest; v >= 4; v--) {
    const void* p = dlsym(h, syms[v - 4]);
    if (!p) continue;
    g_prof = p;
    g_profVer = v;
    info("PROFILER/Plugin: Loaded %s (v%d)", *(const char* const*)p ? *(const char* const*)p : "(null)", v);
    return;
  }
  info("PROFILER/Plugin: Failed to find ncclProfiler_v%d .. v4 in %s", newest, name);
}

static void era_profiler_init(void) {
  if (!g_prof) return;
  int err;
  if (g_profVer == 4)
    err = ((const ncclProfiler_v4_t*)g_prof)
            ->init(&g_pctx, &g_mask, NULL, g_commId, (int)g_nNodes, (int)g_nRanks, g_rank, sim_logger);
  else if (g_profVer == 5)
    err = ((const ncclProfiler_v5_t*)g_prof)
            ->init(&g_pctx, g_commId, &g_mask, NULL, (int)g_nNodes, (int)g_nRanks, g_rank, sim_logger);
  else
    err = ((const ncclProfiler_v6_t*)g_prof)
            ->init(&g_pctx, g_commId, &g_mask, NULL, (int)g_nNodes, (int)g_nRanks, g_rank, sim_logger);
  if (err) {
    info("Profiler init failed with error '%d'. Continue without profiler.", err);
    /* 2.27 disables the profiler for every communicator, 2.30 unloads it; with one communicator here
     * both mean: no more calls (the context NCCL holds stays whatever init left, never used). */
    g_prof = NULL;
    g_pctx = NULL;
    return;
  }
  info("PROFILER/Plugin: init rank %d commHash 0x%llx: activation mask 0x%x", g_rank, (unsigned long long)g_commId,
       g_mask);
}

static void* p_start(void* descr) {
  void* h = NULL;
  if (g_profVer == 4) ((const ncclProfiler_v4_t*)g_prof)->startEvent(g_pctx, &h, descr);
  else if (g_profVer == 5) ((const ncclProfiler_v5_t*)g_prof)->startEvent(g_pctx, &h, descr);
  else ((const ncclProfiler_v6_t*)g_prof)->startEvent(g_pctx, &h, descr);
  return h;
}

static void p_stop(void* h) {
  if (!h) return;
  if (g_profVer == 4) ((const ncclProfiler_v4_t*)g_prof)->stopEvent(h);
  else if (g_profVer == 5) ((const ncclProfiler_v5_t*)g_prof)->stopEvent(h);
  else ((const ncclProfiler_v6_t*)g_prof)->stopEvent(h);
}

static void p_record(void* h, ncclProfilerEventState_t s, ncclProfilerEventStateArgs_v4_t* a) {
  if (!h) return;
  if (g_profVer == 4) ((const ncclProfiler_v4_t*)g_prof)->recordEventState(h, s, a);
  else if (g_profVer == 5) ((const ncclProfiler_v5_t*)g_prof)->recordEventState(h, s, a);
  else ((const ncclProfiler_v6_t*)g_prof)->recordEventState(h, s, a);
}

/* ---- the proxy thread: each collective's KernelCh events, after its Coll event stopped ------ */

typedef struct {
  void* coll; /* the Coll event's handle: KernelCh's parentObj */
  int nch;
  uint64_t start[MAX_SIM_CHANNELS], stop[MAX_SIM_CHANNELS];
} kjob_t;

#define KQ 64 /* NCCL's per-channel ring holds 64 works; the host waits rather than lose them */
static kjob_t g_kq[KQ];
static unsigned g_kHead, g_kTail;
static int g_kDone;
static pthread_mutex_t g_kMu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_kCv = PTHREAD_COND_INITIALIZER;
static pthread_t g_proxy;
static int g_proxyStarted;

/* One collective's channels as the proxy sees them: it polls channel 0..n-1 in turn, sees every
 * start on one pass and each stop on a later one, so the channels' events interleave. */
static void emit_kernel(const kjob_t* j) {
  void* h[MAX_SIM_CHANNELS];
  for (int c = 0; c < j->nch; c++) {
    START_EVENT(h[c], d.type = ncclProfileKernelCh; d.parentObj = j->coll; d.rank = g_rank;
                d.kernelCh.channelId = (uint8_t)c; d.kernelCh.pTimer = j->start[c]);
  }
  for (int c = 0; c < j->nch; c++) {
    ncclProfilerEventStateArgs_v4_t a;
    memset(&a, 0, sizeof a);
    a.kernelCh.pTimer = j->stop[c];
    if (h[c]) { /* ncclProfilerStopKernelChEvent: record the stop, then stop the event */
      p_record(h[c], ncclProfilerKernelChStop, &a);
      p_stop(h[c]);
    }
  }
}

static void* proxy_main(void* arg) {
  (void)arg;
  pthread_mutex_lock(&g_kMu);
  for (;;) {
    while (g_kHead == g_kTail && !g_kDone) pthread_cond_wait(&g_kCv, &g_kMu);
    if (g_kHead == g_kTail) break;
    kjob_t j = g_kq[g_kHead % KQ];
    pthread_mutex_unlock(&g_kMu);
    emit_kernel(&j);
    pthread_mutex_lock(&g_kMu);
    g_kHead++;
    pthread_cond_broadcast(&g_kCv);
  }
  pthread_mutex_unlock(&g_kMu);
  return NULL;
}

static void kernel_post(const kjob_t* j) {
  if (g_proxyInline) {
    emit_kernel(j);
    return;
  }
  if (!g_proxyStarted) {
    if (pthread_create(&g_proxy, NULL, proxy_main, NULL) != 0) {
      emit_kernel(j);
      return;
    }
    g_proxyStarted = 1;
  }
  pthread_mutex_lock(&g_kMu);
  while (g_kTail - g_kHead >= KQ) pthread_cond_wait(&g_kCv, &g_kMu);
  g_kq[g_kTail % KQ] = *j;
  g_kTail++;
  pthread_cond_broadcast(&g_kCv);
  pthread_mutex_unlock(&g_kMu);
}

static void proxy_drain(void) { /* ncclProxyDestroy: before the tuner's and profiler's teardown */
  if (!g_proxyStarted) return;
  pthread_mutex_lock(&g_kMu);
  g_kDone = 1;
  pthread_cond_broadcast(&g_kCv);
  pthread_mutex_unlock(&g_kMu);
  pthread_join(g_proxy, NULL);
  g_proxyStarted = 0;
}

/* ---- one collective, as NCCL launches it ------------------------------------------------------ */

static const char* nccl_dtype(const char* d) {
  if (!strcmp(d, "half") || !strcmp(d, "float16")) return "ncclFloat16";
  if (!strcmp(d, "bfloat16")) return "ncclBfloat16";
  if (!strcmp(d, "double")) return "ncclFloat64";
  if (!strcmp(d, "int8")) return "ncclInt8";
  if (!strcmp(d, "uint8")) return "ncclUint8";
  if (!strcmp(d, "int32") || !strcmp(d, "int")) return "ncclInt32";
  if (!strcmp(d, "uint32")) return "ncclUint32";
  if (!strcmp(d, "int64")) return "ncclInt64";
  if (!strcmp(d, "uint64")) return "ncclUint64";
  return "ncclFloat32";
}

static FILE* g_calls;
static long g_callIndex;
static int g_bad;
static char g_sendbuf[64], g_recvbuf[64]; /* stand-ins for the user's buffers (addresses only) */

/* One launch of the collective at n bytes (the tuner's nBytes); returns its device time in us. */
static double era_collective(size_t n, const char* dtype, int* algoOut, int* protoOut, int* chOut) {
  int ts = type_size(dtype);
  const char* fn = ncclFuncNames[g_coll];
  const char* dt = nccl_dtype(dtype);
  size_t apiCount = n / (size_t)ts, count = apiCount;
  if (g_coll == 2 || g_coll == 3) apiCount = count = n / (size_t)ts / (size_t)g_nRanks; /* per rank */
  const char* collDt = dt;
  if (g_coll == 0 || g_coll == 2) {
    count = apiCount * (size_t)ts;
    collDt = "ncclInt8";
  } /* taskAppend: bytes */
  int root = (g_coll == 0 || g_coll == 1) ? 0 : -1;
  int mask = g_prof ? __atomic_load_n(&g_mask, __ATOMIC_RELAXED) : 0; /* read once per collective */
  void *gApi = NULL, *cApi = NULL, *grp = NULL, *coll = NULL;

  /* ncclEnqueueCheck (v5+): GroupApi start + GroupStartApiStop, CollApi start/stop; ncclGroupEndInternal:
   * GroupEndApiStart, then groupLaunch (ncclPrepareTasks: the tuner) */
  if (g_profVer >= 5 && (mask & TH_FIRES_GROUP_API)) {
    ncclProfilerEventDescr_v6_t d;
    memset(&d, 0, sizeof d);
    d.type = ncclProfileGroupApi;
    d.rank = g_rank;
    d.groupApi.graphCaptured = false;
    d.groupApi.groupDepth = 1;
    gApi = p_start(&d);
    p_record(gApi, ncclProfilerGroupStartApiStop, NULL);
  }
  if (g_profVer >= 5 && (mask & TH_FIRES_COLL_API)) {
    ncclProfilerEventDescr_v6_t d;
    memset(&d, 0, sizeof d);
    d.type = ncclProfileCollApi;
    d.parentObj = gApi;
    d.rank = g_rank;
    d.collApi.func = fn;
    d.collApi.count = apiCount;
    d.collApi.datatype = dt;
    d.collApi.root = root;
    d.collApi.stream = (void*)g_recvbuf;
    d.collApi.graphCaptured = false;
    cApi = p_start(&d);
    p_stop(cApi);
  }
  if (g_profVer >= 5) p_record(gApi, ncclProfilerGroupEndApiStart, NULL);

  /* ncclPrepareTasks -> topoGetAlgoInfo: the cost table, the tuner, NCCL's selection */
  float t[NA][NP], before[NA][NP];
  nccl_table((double)n, t);
  memcpy(before, t, sizeof t);
  int nChannels = 0;
  if (g_tuner) g_bad += check_tuner(era_tuner_get(n, t, &nChannels), t, before, &nChannels, 1);
  int pick = th_nccl_pick(&t[0][0], NA, NP);
  if (pick < 0) {
    fprintf(stderr, "simcluster: no selectable entry at %zu bytes\n", n);
    exit(3);
  }
  int a = pick / NP, p = pick % NP;
  if (g_execAlgo >= 0 && offered(g_execAlgo, p)) a = g_execAlgo; /* an override after the tuner */
  int ch = nChannels > 0 ? (nChannels < MAX_SIM_CHANNELS ? nChannels : MAX_SIM_CHANNELS) : DEFAULT_CHANNELS;
  if (g_tuner && g_tunerVer == 6 && ((const ncclTuner_v6_t*)g_tuner)->getChunkSize) {
    size_t chunk = 131072;
    ((const ncclTuner_v6_t*)g_tuner)->getChunkSize(g_tctx, (ncclFunc_t)g_coll, n, a, p, ch, &chunk);
  }
  ++g_callIndex;
  *algoOut = a;
  *protoOut = p;
  *chOut = ch;

  /* the GPU: the true time of what runs, plus noise, over ch channels with a start skew */
  double us = reading(true_time(a, p, ch, (double)n));
  uint64_t span = (uint64_t)llround(us * 1000.0);
  if (span < 1) span = 1;
  kjob_t j;
  j.nch = ch;
  uint64_t t0 = g_gpuNs + 2000; /* launch gap */
  uint64_t skewMax = span / 8 < 400 ? span / 8 : 400;
  int last = (int)(uniform01() * ch) % ch; /* the channel that finishes last */
  for (int c = 0; c < ch; c++) {
    uint64_t sk = c == 0 ? 0 : (uint64_t)(uniform01() * (double)skewMax);
    j.start[c] = t0 + sk;
    j.stop[c] = c == last ? t0 + span : t0 + span - (uint64_t)(uniform01() * (double)skewMax);
    if (j.stop[c] <= j.start[c]) j.stop[c] = j.start[c] + 1;
  }
  g_gpuNs = t0 + span;
  if (g_calls)
    fprintf(g_calls, "%ld %s %zu %s/%s/%d %llu\n", g_callIndex, fn, n, ncclAlgoNames[a], ncclProtoNames[p], ch,
            (unsigned long long)span);

  /* ncclLaunchKernel: KernelLaunch (own bit); hostStreamPlanTask: Group, Coll, their stops */
  if (g_profVer >= 5 && (mask & ncclProfileKernelLaunch)) {
    ncclProfilerEventDescr_v6_t d;
    memset(&d, 0, sizeof d);
    d.type = ncclProfileKernelLaunch;
    d.parentObj = gApi;
    d.rank = g_rank;
    d.kernelLaunch.stream = (void*)g_recvbuf;
    p_stop(p_start(&d));
  }
  if (mask & TH_FIRES_GROUP) START_EVENT(grp, d.type = ncclProfileGroup; d.rank = g_rank);
  if (mask & TH_FIRES_COLL) /* v4: the Coll's parent is its Group; v5+: its CollApi, the Group beside it */
    START_EVENT_V56(coll, d.coll.parentGroup = grp, d.type = ncclProfileColl; d.parentObj = g_profVer == 4 ? grp : cApi;
                    d.rank = g_rank; d.coll.seqNumber = g_seq[g_coll]; d.coll.func = fn; d.coll.sendBuff = g_sendbuf;
                    d.coll.recvBuff = g_recvbuf; d.coll.count = count; d.coll.root = root; d.coll.datatype = collDt;
                    d.coll.nChannels = (uint8_t)ch; d.coll.nWarps = 16; d.coll.algo = ncclAlgoNames[a];
                    d.coll.proto = ncclProtoNames[p]);
  g_seq[g_coll]++; /* read then incremented, with or without a profiler */
  p_stop(coll);
  p_stop(grp);
  if (mask & ncclProfileKernelCh) { /* the proxy, after the Coll event stopped */
    j.coll = coll;
    kernel_post(&j);
  }
  p_stop(gApi); /* ncclGroupEndInternal's end */
  return us;
}

static int era_run(size_t minB, size_t maxB, double factor, int gpus, int warmup, int iters, int check,
                   const char* dtype, const char* op) {
  era_load_profiler();
  era_profiler_init(); /* ncclProfilerPluginInit: before the tuner's init, same thread */
  if (era_load_tuner() && era_tuner_init(gpus) != ncclSuccess) {
    fprintf(stderr, "simcluster: the tuner's init returned an error; NCCL would fail communicator creation\n");
    return 3;
  }
  table_head();
  double busSum = 0;
  int rows = 0;
  for (size_t n = minB; n <= maxB; n = (size_t)(n * factor + 0.5)) {
    int a = 0, p = 0, ch = 0;
    double sumOut = 0, sumIn = 0;
    for (int i = 0; i < warmup; i++) era_collective(n, dtype, &a, &p, &ch);
    for (int i = 0; i < iters; i++) sumOut += era_collective(n, dtype, &a, &p, &ch);
    for (int i = 0; i < iters; i++) sumIn += era_collective(n, dtype, &a, &p, &ch);
    busSum += table_row(n, dtype, op, check, a, p, ch, sumOut / iters, sumIn / iters);
    rows++;
  }
  table_tail(busSum, rows);
  proxy_drain();                    /* commFree: the proxy first, */
  if (g_tuner) era_tuner_destroy(); /* then the tuner, */
  if (g_prof && g_pctx) {           /* then the profiler */
    if (g_profVer == 4) ((const ncclProfiler_v4_t*)g_prof)->finalize(g_pctx);
    else if (g_profVer == 5) ((const ncclProfiler_v5_t*)g_prof)->finalize(g_pctx);
    else ((const ncclProfiler_v6_t*)g_prof)->finalize(g_pctx);
  }
  if (g_calls) fclose(g_calls);
  return g_bad ? 3 : 0;
}

int main(int argc, char** argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  size_t minB = 32 * 1024 * 1024, maxB = 32 * 1024 * 1024;
  double factor = 2;
  int gpus = 8, iters = 20, warmup = 5, check = 1, truth = 0;
  const char* dtype = "float";
  const char* op = "sum";
  const char* era = getenv("SIMCLUSTER_NCCL_ERA");
  const char* rankS = getenv("SIMCLUSTER_RANK");
  const char* commS = getenv("SIMCLUSTER_COMM_ID");
  const char* callsS = getenv("SIMCLUSTER_CALLS");
  const char* execS = getenv("SIMCLUSTER_EXEC_ALGO");
  const char* base = strrchr(argv[0], '/');
  base = base ? base + 1 : argv[0];
  if (coll_of(base) >= 0) g_coll = coll_of(base);
  for (int i = 1; i < argc; i++) {
    const char* a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : NULL;
#define NEEDV() \
  do { \
    if (!v) usage("option needs a value"); \
    i++; \
  } while (0)
    if (!strcmp(a, "-b") || !strcmp(a, "--minbytes")) {
      NEEDV();
      minB = parse_size(v);
    } else if (!strcmp(a, "-e") || !strcmp(a, "--maxbytes")) {
      NEEDV();
      maxB = parse_size(v);
    } else if (!strcmp(a, "-f") || !strcmp(a, "--stepfactor")) {
      NEEDV();
      factor = atof(v);
    } else if (!strcmp(a, "-g") || !strcmp(a, "--ngpus")) {
      NEEDV();
      gpus = atoi(v);
    } else if (!strcmp(a, "-n") || !strcmp(a, "--iters")) {
      NEEDV();
      iters = atoi(v);
    } else if (!strcmp(a, "-w") || !strcmp(a, "--warmup_iters")) {
      NEEDV();
      warmup = atoi(v);
    } else if (!strcmp(a, "-c") || !strcmp(a, "--check")) {
      NEEDV();
      check = atoi(v);
    } else if (!strcmp(a, "-d") || !strcmp(a, "--datatype")) {
      NEEDV();
      dtype = v;
    } else if (!strcmp(a, "-o") || !strcmp(a, "--op")) {
      NEEDV();
      op = v;
    } else if (!strcmp(a, "-t") || !strcmp(a, "--nthreads")) {
      NEEDV();
    } else if (!strcmp(a, "--collective")) {
      NEEDV();
      if ((g_coll = coll_of(v)) < 0) usage("unknown --collective");
    } else if (!strcmp(a, "--truth")) truth = 1;
    else if (!strcmp(a, "--nccl-era")) {
      NEEDV();
      era = v;
    } else if (!strcmp(a, "--rank")) {
      NEEDV();
      rankS = v;
    } else if (!strcmp(a, "--comm-id")) {
      NEEDV();
      commS = v;
    } else if (!strcmp(a, "--calls")) {
      NEEDV();
      callsS = v;
    } else if (!strcmp(a, "--exec-algo")) {
      NEEDV();
      execS = v;
    } else if (a[0] != '-' && coll_of(a) >= 0) g_coll = coll_of(a);
    else usage("unknown argument");
  }
  if (factor < 1.01 || gpus < 1 || gpus > 64 || iters < 1 || minB < 1 || maxB < minB)
    usage("need -f > 1, -g in 1..64, -n >= 1 and 1 <= -b <= -e");
  if (era && *era) {
    if (!strcmp(era, "2.27")) g_era = 227;
    else if (!strcmp(era, "2.28")) g_era = 228;
    else if (!strcmp(era, "2.29")) g_era = 229;
    else if (!strcmp(era, "2.30")) g_era = 230;
    else usage("--nccl-era takes 2.27, 2.28, 2.29 or 2.30");
  }
  if (!g_era && ((rankS && *rankS) || (callsS && *callsS) || (execS && *execS)))
    usage("--rank, --calls and --exec-algo need --nccl-era");
  g_rank = rankS && *rankS ? atoi(rankS) : 0;
  if (execS && *execS) {
    for (int k = 0; k < NA; k++)
      if (!strcasecmp(execS, ncclAlgoNames[k])) g_execAlgo = k;
    if (g_execAlgo < 0) usage("--exec-algo takes an algorithm name (TREE, RING, ...)");
  }
  const char* px = getenv("SIMCLUSTER_PROXY");
  g_proxyInline = px && !strcmp(px, "inline");
  const char* e = getenv("SIMCLUSTER_NODES");
  g_nNodes = e && atol(e) > 0 ? atol(e) : 2;
  g_nRanks = g_nNodes * gpus;
  tm_setup();
  e = getenv("SIMCLUSTER_NOISE");
  if (e && *e) g_sigma = atof(e);
  g_pid = (int)getpid();
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  e = getenv("SIMCLUSTER_SEED");
  uint64_t seed =
    e && *e ? strtoull(e, NULL, 10) : ((uint64_t)g_pid << 32) ^ (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20);
  /* a run of `nccl-tuner sweep` (which sets NCCL_TUNER_SWEEP_SEED and NCCL_TUNER_SWEEP_REPLICATE in
     each run's environment): with SIMCLUSTER_SEED, each replicate draws its own noise, from the
     seed, the sweep's seed and the replicate (reproducible; the runs of one replicate share it) */
  const char* rep = getenv("NCCL_TUNER_SWEEP_REPLICATE");
  if (e && *e && rep && *rep) {
    const char* sweepSeed = getenv("NCCL_TUNER_SWEEP_SEED");
    uint64_t z = seed ^ ((sweepSeed && *sweepSeed ? strtoull(sweepSeed, NULL, 10) : 0) * 0xbf58476d1ce4e5b9ULL) ^
                 (strtoull(rep, NULL, 10) * 0x94d049bb133111ebULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL; /* splitmix64's finalizer */
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    seed = z ^ (z >> 31);
  }
  g_rng = seed ^ ((uint64_t)g_rank * 0xd6e8feb86659fd93ULL); /* rank 0: the seed itself */
  g_commId =
    commS && *commS ? strtoull(commS, NULL, 0) : 0xc0ffee5eed000000ULL ^ ((uint64_t)g_nRanks << 8) ^ (uint64_t)g_nNodes;
  if (g_rank < 0 || g_rank >= g_nRanks) usage("--rank must be in 0..nRanks-1");
  if (callsS && *callsS && !(g_calls = fopen(callsS, "w"))) usage("--calls: cannot write the file");
  e = getenv("NCCL_DEBUG");
  g_info = e && (!strcasecmp(e, "INFO") || !strcasecmp(e, "TRACE"));
  const char* gpu = getenv("SIMCLUSTER_GPU");
  if (!gpu || !*gpu) gpu = "NVIDIA H100 80GB HBM3 (simulated)";

  if (truth) {
    for (size_t n = minB; n <= maxB; n = (size_t)(n * factor + 0.5)) {
      float t[NA][NP];
      nccl_table((double)n, t);
      int pick = th_nccl_pick(&t[0][0], NA, NP);
      for (int a = 0; a < 2; a++)
        for (int p = 0; p < NP; p++)
          if (offered(a, p))
            for (int c = 1; c <= MAX_SIM_CHANNELS; c *= 2)
              printf("# truth %s %zu %s/%s/%d %.3f\n", ncclFuncNames[g_coll], n, ncclAlgoNames[a], ncclProtoNames[p], c,
                     true_time(a, p, c, (double)n));
      printf("# truth-nccl %s %zu %s/%s/%d %.3f\n", ncclFuncNames[g_coll], n, ncclAlgoNames[pick / NP],
             ncclProtoNames[pick % NP], DEFAULT_CHANNELS, true_time(pick / NP, pick % NP, DEFAULT_CHANNELS, (double)n));
    }
    return 0;
  }

  const char* ver = g_era ? era_version() : "2.28.9";
  int code = (ver[0] - '0') * 10000 + atoi(ver + 2) * 100 + atoi(ver + 5);
  printf("# nccl-tests version 2.18.5 nccl-headers=%d nccl-library=%d (simcluster)\n", code, code);
  printf("# Collective test starting: %s_perf\n", kProg[g_coll]);
  printf("# nThread 1 nGpus %d minBytes %zu maxBytes %zu step: %g(factor) warmup iters: %d iters: %d "
         "agg iters: 1 validation: %d graph: 0\n",
         gpus, minB, maxB, factor, warmup, iters, check);
  printf("# simcluster seed %llu noise %g nodes %ld\n", (unsigned long long)seed, g_sigma, g_nNodes);
  printf("#\n# Using devices\n");
  for (long r = 0; r < g_nRanks; r++)
    printf("#  Rank %2ld Group  0 Pid %6d on  sim-node%ld device %2ld [0x%02lx] %s\n", r, g_pid + (int)(r / gpus),
           r / gpus, r % gpus, 0x18 + (r % gpus) * 0x10, gpu);
  info("NCCL version %s+cuda13.0 (simcluster)", ver);
  info("comm 0x%llx rank %d nRanks %ld nNodes %ld localRanks %d localRank %d MNNVL 0",
       0x5a5a0000ULL + (unsigned long long)g_pid, g_rank, g_nRanks, g_nNodes, gpus, g_rank % gpus);
  if (g_era) {
    info("comm 0x%llx commHash 0x%llx era %s proxy %s", 0x5a5a0000ULL + (unsigned long long)g_pid,
         (unsigned long long)g_commId, ver, g_proxyInline ? "inline" : "thread");
    return era_run(minB, maxB, factor, gpus, warmup, iters, check, dtype, op);
  }
  const ncclTuner_v3_t* tuner = load_plugin();
  void* ctx = NULL;
  if (tuner && tuner->init((size_t)g_nRanks, (size_t)g_nNodes, sim_logger, &ctx) != ncclSuccess) {
    fprintf(stderr, "simcluster: the tuner's init returned an error; NCCL would fail communicator creation\n");
    return 3;
  }
  table_head();
  double busSum = 0;
  int rows = 0, bad = 0;
  for (size_t n = minB; n <= maxB; n = (size_t)(n * factor + 0.5)) {
    float t[NA][NP], before[NA][NP];
    nccl_table((double)n, t);
    memcpy(before, t, sizeof t);
    int nChannels = 0;
    if (tuner)
      bad += check_tuner(tuner->getCollInfo(ctx, (ncclFunc_t)g_coll, n, 1, (float**)t, NA, NP, &nChannels), t, before,
                         &nChannels, 0);
    int pick = th_nccl_pick(&t[0][0], NA, NP);
    if (pick < 0) {
      fprintf(stderr, "simcluster: no selectable entry at %zu bytes\n", n);
      return 3;
    }
    int a = pick / NP, p = pick % NP;
    int ch = nChannels > 0 ? (nChannels < MAX_SIM_CHANNELS ? nChannels : MAX_SIM_CHANNELS) : DEFAULT_CHANNELS;
    double truthUs = true_time(a, p, ch, (double)n);
    double tOut = reading(truthUs), tIn = reading(truthUs);
    busSum += table_row(n, dtype, op, check, a, p, ch, tOut, tIn);
    rows++;
  }
  table_tail(busSum, rows);
  if (tuner) tuner->destroy(ctx);
  return bad ? 3 : 0;
}
