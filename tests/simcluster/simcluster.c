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
 *
 * The collective is the positional op name, else --collective (all_reduce, AllReduce, ...),
 * else the program's own name (a symlink all_reduce_perf -> simcluster works), else AllReduce.
 * Sizes take K/M/G suffixes (powers of 1024), as nccl-tests does.
 *
 * Environment: SIMCLUSTER_NODES (nodes, default 2; -g GPUs each, default 8), SIMCLUSTER_SEED
 * (noise seed; unset: pid and clock, so every process draws afresh like a real run),
 * SIMCLUSTER_NOISE (relative sigma, default 0.02; 0 = noiseless), SIMCLUSTER_GPU (device name),
 * NCCL_DEBUG=INFO (NCCL-style INFO lines: version, comm shape, plugin, one selection line per
 * size), NCCL_TUNER_PLUGIN.
 *
 * --truth prints, instead of running, the noiseless true time of every offered candidate at
 * each size, and NCCL's default pick, as "# truth ..." lines (for tests that need the model's
 * optimum).
 *
 * Exit status: 0 ok, 2 usage error, 3 the plugin broke a rule of the v3 interface (wrote a -1
 * entry, returned an error, or returned a channel count outside 0..64).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
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

#define NA NCCL_NUM_ALGORITHMS
#define NP NCCL_NUM_PROTOCOLS
#define NCCL_MIN_TIME_INIT 3600000000.0f
#define DEFAULT_CHANNELS 8   /* the channel count NCCL's own choice runs with here */
#define MAX_SIM_CHANNELS 32  /* channels the simulated GPUs have */
#define PLATEAU_P 0.02       /* probability that one reading lands on the second plateau */
#define PLATEAU_X 1.30       /* the second plateau: 30% slower */

static const char* const kFunc[5] = {"Broadcast", "Reduce", "AllGather", "ReduceScatter", "AllReduce"};
static const char* const kProg[5] = {"broadcast", "reduce", "all_gather", "reduce_scatter", "all_reduce"};
static const char* const kAlgo[NA] = {"TREE", "RING", "COLLNET_DIRECT", "COLLNET_CHAIN", "NVLS", "NVLS_TREE", "PAT"};
static const char* const kProto[NP] = {"LL", "LL128", "SIMPLE"};

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
static const double kTrueL[2][NP] = {{8, 11, 24}, {10, 14, 28}};    /* [TREE, RING][LL, LL128, SIMPLE] */
static const double kTrueB[2][NP] = {{3.5, 12, 30}, {4, 14, 36}};
static const double kNcclL[2][NP] = {{8, 11, 24}, {10, 14, 16}};    /* E2 */
static const double kNcclB[2][NP] = {{3.5, 7, 30}, {4, 14, 36}};    /* E1 */

static int g_coll = 4;
static long g_nRanks, g_nNodes;

static double bus_factor(void) {
  double R = (double)g_nRanks;
  switch (g_coll) {
    case 4: return 2.0 * (R - 1) / R;
    case 2: case 3: return (R - 1) / R;
    default: return 1.0;
  }
}

static int offered(int a, int p) {
  (void)p;
  if (a == 1) return 1;              /* RING */
  if (a == 0) return g_coll == 4;    /* TREE: AllReduce only */
  return 0;
}

static double model_time(const double L[2][NP], const double B[2][NP], int a, int p, int c, double n) {
  return L[a][p] * (0.75 + c / 32.0) + n * bus_factor() / (B[a][p] * sqrt(c / 8.0) * 1e3);
}

static double true_time(int a, int p, int c, double n) { return model_time(kTrueL, kTrueB, a, p, c, n); }

static void nccl_table(double n, float table[NA][NP]) {
  for (int a = 0; a < NA; a++)
    for (int p = 0; p < NP; p++)
      table[a][p] = offered(a, p) ? (float)model_time(kNcclL, kNcclB, a, p, DEFAULT_CHANNELS, n)
                                  : (float)NCCL_ALGO_PROTO_IGNORE;
}

/* NCCL's selection: strict minimum over entries >= 0, from 3.6e9 us, first minimum wins. */
static int nccl_select(float table[NA][NP]) {
  float best = NCCL_MIN_TIME_INIT;
  int pick = -1;
  for (int a = 0; a < NA; a++)
    for (int p = 0; p < NP; p++)
      if (table[a][p] >= 0 && table[a][p] < best) { best = table[a][p]; pick = a * NP + p; }
  return pick;
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

static void sim_logger(ncclDebugLogLevel level, unsigned long flags, const char* file, int line,
                       const char* fmt, ...) {
  (void)flags; (void)file; (void)line;
  if (level == NCCL_LOG_WARN) g_warns++;
  if (fmt == NULL || (level != NCCL_LOG_WARN && !g_info)) return;
  if (level != NCCL_LOG_WARN && level != NCCL_LOG_INFO && level != NCCL_LOG_VERSION) return;
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  size_t len = strlen(msg);
  while (len > 0 && msg[len - 1] == '\n') msg[--len] = '\0';
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

static const ncclTuner_v3_t* load_plugin(void) {
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
  if (!h) { info("TUNER/Plugin: Using internal tuner plugin."); return NULL; }
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
  fprintf(stderr, "simcluster: %s\nusage: simcluster [OP_perf] [-b MIN] [-e MAX] [-f FACTOR] [-g GPUS] "
          "[-n ITERS] [-w WARMUP] [-c CHECK] [-d TYPE] [-o OP] [-t THREADS] [--collective NAME] [--truth]\n", why);
  exit(2);
}

static size_t parse_size(const char* s) {
  char* end;
  double v = strtod(s, &end);
  if (end == s || v < 0) usage("a size must be a number of bytes, with an optional K, M or G");
  switch (*end) {
    case 'K': case 'k': v *= 1024; break;
    case 'M': case 'm': v *= 1024 * 1024; break;
    case 'G': case 'g': v *= 1024.0 * 1024 * 1024; break;
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

int main(int argc, char** argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  size_t minB = 32 * 1024 * 1024, maxB = 32 * 1024 * 1024;
  double factor = 2;
  int gpus = 8, iters = 20, warmup = 5, check = 1, truth = 0;
  const char* dtype = "float";
  const char* op = "sum";
  const char* base = strrchr(argv[0], '/');
  base = base ? base + 1 : argv[0];
  if (coll_of(base) >= 0) g_coll = coll_of(base);
  for (int i = 1; i < argc; i++) {
    const char* a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : NULL;
#define NEEDV() do { if (!v) usage("option needs a value"); i++; } while (0)
    if (!strcmp(a, "-b") || !strcmp(a, "--minbytes")) { NEEDV(); minB = parse_size(v); }
    else if (!strcmp(a, "-e") || !strcmp(a, "--maxbytes")) { NEEDV(); maxB = parse_size(v); }
    else if (!strcmp(a, "-f") || !strcmp(a, "--stepfactor")) { NEEDV(); factor = atof(v); }
    else if (!strcmp(a, "-g") || !strcmp(a, "--ngpus")) { NEEDV(); gpus = atoi(v); }
    else if (!strcmp(a, "-n") || !strcmp(a, "--iters")) { NEEDV(); iters = atoi(v); }
    else if (!strcmp(a, "-w") || !strcmp(a, "--warmup_iters")) { NEEDV(); warmup = atoi(v); }
    else if (!strcmp(a, "-c") || !strcmp(a, "--check")) { NEEDV(); check = atoi(v); }
    else if (!strcmp(a, "-d") || !strcmp(a, "--datatype")) { NEEDV(); dtype = v; }
    else if (!strcmp(a, "-o") || !strcmp(a, "--op")) { NEEDV(); op = v; }
    else if (!strcmp(a, "-t") || !strcmp(a, "--nthreads")) { NEEDV(); }
    else if (!strcmp(a, "--collective")) { NEEDV(); if ((g_coll = coll_of(v)) < 0) usage("unknown --collective"); }
    else if (!strcmp(a, "--truth")) truth = 1;
    else if (a[0] != '-' && coll_of(a) >= 0) g_coll = coll_of(a);
    else usage("unknown argument");
  }
  if (factor < 1.01 || gpus < 1 || gpus > 64 || iters < 1 || minB < 1 || maxB < minB)
    usage("need -f > 1, -g in 1..64, -n >= 1 and 1 <= -b <= -e");
  const char* e = getenv("SIMCLUSTER_NODES");
  g_nNodes = e && atol(e) > 0 ? atol(e) : 2;
  g_nRanks = g_nNodes * gpus;
  e = getenv("SIMCLUSTER_NOISE");
  if (e && *e) g_sigma = atof(e);
  g_pid = (int)getpid();
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  e = getenv("SIMCLUSTER_SEED");
  uint64_t seed = e && *e ? strtoull(e, NULL, 10)
                          : ((uint64_t)g_pid << 32) ^ (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20);
  g_rng = seed;
  e = getenv("NCCL_DEBUG");
  g_info = e && (!strcasecmp(e, "INFO") || !strcasecmp(e, "TRACE"));
  const char* gpu = getenv("SIMCLUSTER_GPU");
  if (!gpu || !*gpu) gpu = "NVIDIA H100 80GB HBM3 (simulated)";

  if (truth) {
    for (size_t n = minB; n <= maxB; n = (size_t)(n * factor + 0.5)) {
      float t[NA][NP];
      nccl_table((double)n, t);
      int pick = nccl_select(t);
      for (int a = 0; a < 2; a++)
        for (int p = 0; p < NP; p++)
          if (offered(a, p))
            for (int c = 1; c <= MAX_SIM_CHANNELS; c *= 2)
              printf("# truth %s %zu %s/%s/%d %.3f\n", kFunc[g_coll], n, kAlgo[a], kProto[p], c,
                     true_time(a, p, c, (double)n));
      printf("# truth-nccl %s %zu %s/%s/%d %.3f\n", kFunc[g_coll], n, kAlgo[pick / NP], kProto[pick % NP],
             DEFAULT_CHANNELS, true_time(pick / NP, pick % NP, DEFAULT_CHANNELS, (double)n));
    }
    return 0;
  }

  printf("# nccl-tests version 2.18.5 nccl-headers=22809 nccl-library=22809 (simcluster)\n");
  printf("# Collective test starting: %s_perf\n", kProg[g_coll]);
  printf("# nThread 1 nGpus %d minBytes %zu maxBytes %zu step: %g(factor) warmup iters: %d iters: %d "
         "agg iters: 1 validation: %d graph: 0\n", gpus, minB, maxB, factor, warmup, iters, check);
  printf("# simcluster seed %llu noise %g nodes %ld\n", (unsigned long long)seed, g_sigma, g_nNodes);
  printf("#\n# Using devices\n");
  for (long r = 0; r < g_nRanks; r++)
    printf("#  Rank %2ld Group  0 Pid %6d on  sim-node%ld device %2ld [0x%02lx] %s\n", r, g_pid + (int)(r / gpus),
           r / gpus, r % gpus, 0x18 + (r % gpus) * 0x10, gpu);
  info("NCCL version 2.28.9+cuda13.0 (simcluster)");
  info("comm 0x%llx rank 0 nRanks %ld nNodes %ld localRanks %d localRank 0 MNNVL 0",
       0x5a5a0000ULL + (unsigned long long)g_pid, g_nRanks, g_nNodes, gpus);
  const ncclTuner_v3_t* tuner = load_plugin();
  void* ctx = NULL;
  if (tuner && tuner->init((size_t)g_nRanks, (size_t)g_nNodes, sim_logger, &ctx) != ncclSuccess) {
    fprintf(stderr, "simcluster: the tuner's init returned an error; NCCL would fail communicator creation\n");
    return 3;
  }
  printf("#\n#%58s%35s\n", "out-of-place", "in-place");
  printf("#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n");
  printf("#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)\n");
  double busSum = 0;
  int rows = 0, bad = 0;
  int ts_ = type_size(dtype);
  for (size_t n = minB; n <= maxB; n = (size_t)(n * factor + 0.5)) {
    float t[NA][NP], before[NA][NP];
    nccl_table((double)n, t);
    memcpy(before, t, sizeof t);
    int nChannels = 0;
    if (tuner) {
      ncclResult_t r = tuner->getCollInfo(ctx, (ncclFunc_t)g_coll, n, 1, (float**)t, NA, NP, &nChannels);
      if (r != ncclSuccess) { fprintf(stderr, "simcluster: getCollInfo returned %d\n", (int)r); bad++; memcpy(t, before, sizeof t); }
      for (int a = 0; a < NA; a++)
        for (int p = 0; p < NP; p++)
          if (before[a][p] < 0 && t[a][p] != before[a][p]) {
            fprintf(stderr, "simcluster: the tuner wrote the -1 entry %s/%s\n", kAlgo[a], kProto[p]);
            bad++;
          }
      if (nChannels < 0 || nChannels > NCCL_TUNER_JAVA_MAX_CHANNELS) {
        fprintf(stderr, "simcluster: the tuner returned nChannels %d\n", nChannels);
        bad++;
        nChannels = 0;
      }
    }
    int pick = nccl_select(t);
    if (pick < 0) { fprintf(stderr, "simcluster: no selectable entry at %zu bytes\n", n); return 3; }
    int a = pick / NP, p = pick % NP;
    int ch = nChannels > 0 ? (nChannels < MAX_SIM_CHANNELS ? nChannels : MAX_SIM_CHANNELS) : DEFAULT_CHANNELS;
    /* NCCL 2.24+ prints AllGather / ReduceScatter bytes per rank */
    size_t shown = (g_coll == 2 || g_coll == 3) ? n / (size_t)g_nRanks : n;
    info("%s: %zu Bytes -> Algo %s proto %s channel{Lo..Hi}={0..%d}", kFunc[g_coll], shown, kAlgo[a], kProto[p], ch - 1);
    double truthUs = true_time(a, p, ch, (double)n);
    double tOut = reading(truthUs), tIn = reading(truthUs);
    size_t count = n / (size_t)ts_;
    if (g_coll == 2 || g_coll == 3) count = n / (size_t)ts_ / (size_t)g_nRanks;  /* per-rank count */
    double bf = bus_factor();
    double algOut = (double)n / tOut / 1e3, algIn = (double)n / tIn / 1e3;
    const char* wrong = check ? "0" : "N/A";
    printf("%12zu  %12zu  %8s  %6s  %6d  %7.2f  %6.2f  %6.2f  %5s  %7.2f  %6.2f  %6.2f  %5s\n", n, count, dtype,
           (g_coll == 0 || g_coll == 2) ? "none" : op, (g_coll == 0 || g_coll == 1) ? 0 : -1, tOut, algOut,
           algOut * bf, wrong, tIn, algIn, algIn * bf, wrong);
    busSum += algOut * bf;
    rows++;
  }
  printf("# Out of bounds values : 0 OK\n# Avg bus bandwidth    : %.4f \n#\n", rows ? busSum / rows : 0.0);
  printf("# Collective test concluded: %s_perf\n#\n", kProg[g_coll]);
  if (tuner) tuner->destroy(ctx);
  return bad ? 3 : 0;
}
