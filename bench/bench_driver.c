/*
 * bench_driver.c -- the C driver of `make bench`: per-call cost, start-up and footprint of a
 * NCCL v3 tuner plugin, loaded and called the way NCCL does it.
 *
 *   bench_driver --plugin LIB.so [options] TRACE.csv...
 *     --calls N (10000000)  --warmup N (1000000)  --warmup-ms MS (1000)  --threads T (1)
 *     --coll C (only rows of that collective)  --inits N (time N further inits)
 *     --startup-only (stop after the first decision and the inits)  --gc-log PATH (JVM GC log)
 *     --smaps PATH (a copy of /proc/self/smaps just after the first decision; with --cycles also
 *       PATH.warm after the first 1,000 cycles and PATH.end after all)
 *     --cycles N (after the inits: N init+destroy pairs of one more communicator, each with one
 *       getCollInfo; prints the resident memory after the first 1,000 and after all N, and the
 *       median and p99 of one pair, so growth per communicator is told apart from the warm-up;
 *       with 11,000 pairs or more also what each further 10,000 added: growth that goes on or stops)
 *     --shapes RxN,RxN,... (instead of the timed pass: one communicator per shape, inited with
 *       nRanks R and nNodes N, all in this process; the timed calls go to them in turn, 1000 to one,
 *       then 1000 to the next; one line `bench: shape` per communicator with its percentiles and
 *       the digest of its decisions. A policy with one profile per shape compares its profiles in
 *       the same process, where the machine's state between processes cannot enter the comparison)
 *
 * It dlopens the plugin (RTLD_NOW | RTLD_LOCAL, dlsym "ncclTunerPlugin_v3", as NCCL
 * src/plugin/tuner.cc), preloads the `get` rows of the traces (the cost tables NCCL 2.28.9 passed),
 * inits one communicator with the nRanks/nNodes of the traces (timing the first init, which is
 * where a JVM-backed plugin creates its JVM, and the first decision after it), then calls
 * getCollInfo over the rows in order, round and round: --warmup calls untimed (and for at least
 * --warmup-ms), then --calls calls, each timed on its own.
 *
 * Timing (docs/dev/benchmarks.md): each call is bracketed by `lfence; rdtsc; lfence` and
 * `rdtscp; lfence`; the cost table row is copied into the call's buffer (memcpy) and nChannels
 * reset to 0 before the first stamp, outside the timed region. The median of an empty bracket
 * timed after each call (the timer's own cost) is subtracted from each reported percentile. TSC ticks are converted to
 * ns with a rate calibrated against CLOCK_MONOTONIC over 200 ms. Per-call ticks go into one array
 * per thread; the percentiles are exact (a histogram, not a sample). A second, independent figure:
 * the mean per call from batches of 1000 calls timed with clock_gettime, minus the same batches
 * with the reset alone.
 *
 * Output: lines `bench: key=value ...` (parsed by bench/run_bench.sh); WARN lines of the plugin's
 * logger on stderr. Exit 0, or 2 on usage/IO errors, 3 if the plugin logged a WARN.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include "nccl_tuner_abi.h"
#include "test_host.h"

#define MAX_TABLE (NCCL_NUM_ALGORITHMS * NCCL_NUM_PROTOCOLS)
#define HIST_CAP (1u << 20) /* ticks; slower calls are kept in an overflow list */

typedef struct {
  int coll, numPipeOps, numAlgo, numProto;
  size_t nBytes;
  float costs[MAX_TABLE];
} row_t;

static row_t* g_rows;
static size_t g_nRows, g_capRows;
static size_t g_nRanks = 2, g_nNodes = 2;
static const ncclTuner_v3_t* g_tuner;
static atomic_ulong g_warns;
static double g_ticksPerNs;

static struct {
  const char* plugin;
  const char* gcLog;
  const char* smaps;
  long calls, warmup, warmupMs, threads, inits, coll, cycles;
  int startupOnly;
  const char* shapes;
} cfg = {.calls = 10000000, .warmup = 1000000, .warmupMs = 1000, .threads = 1, .inits = 0, .coll = -1};

/* ---- small helpers ---------------------------------------------------------------------- */

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static inline uint64_t stamp_begin(void) {
  _mm_lfence();
  uint64_t t = __rdtsc();
  _mm_lfence();
  return t;
}

static inline uint64_t stamp_end(void) {
  unsigned aux;
  uint64_t t = __rdtscp(&aux);
  _mm_lfence();
  return t;
}

TH_DIE_FUNCTION(die, "bench_driver: ", "\n", TH_EXIT_USAGE)

/* VmRSS (kB) and Threads from /proc/self/status. */
static void copy_file(const char* from, const char* to);

/* /proc/self/smaps to --smaps's PATH.SUFFIX: which mapping grew between two points. */
static void smaps_copy(const char* suffix) {
  if (!cfg.smaps) return;
  char path[4096];
  snprintf(path, sizeof path, "%s.%s", cfg.smaps, suffix);
  copy_file("/proc/self/smaps", path);
}

static void proc_status(long* rssKb, long* threads) {
  FILE* f = fopen("/proc/self/status", "r");
  char line[256];
  *rssKb = *threads = -1;
  if (!f) return;
  while (fgets(line, sizeof line, f)) {
    if (strncmp(line, "VmRSS:", 6) == 0) *rssKb = strtol(line + 6, NULL, 10);
    else if (strncmp(line, "Threads:", 8) == 0) *threads = strtol(line + 8, NULL, 10);
  }
  fclose(f);
}

/* Copies a file (here /proc/self/smaps: where the resident memory is, mapping by mapping). */
static void copy_file(const char* from, const char* to) {
  FILE* in = fopen(from, "r");
  FILE* out = in ? fopen(to, "w") : NULL;
  char buf[65536];
  size_t n;
  while (out && (n = fread(buf, 1, sizeof buf, in)) > 0) fwrite(buf, 1, n, out);
  if (out) fclose(out);
  if (in) fclose(in);
}

/* User + system CPU time of the whole process so far, in ms (every thread: the JVM's too). */
static double cpu_ms(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
         (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
}

/* The names of the process's threads (/proc/self/task/N/comm), comma-separated, sorted, into buf;
 * spaces in names become '_'. */
static int cmp_str(const void* a, const void* b) {
  return strcmp(*(char* const*)a, *(char* const*)b);
}
static void thread_names(char* buf, size_t cap) {
  buf[0] = '\0';
  DIR* d = opendir("/proc/self/task");
  if (!d) return;
  char* names[512];
  int n = 0;
  struct dirent* e;
  while ((e = readdir(d)) != NULL && n < 512) {
    if (e->d_name[0] == '.') continue;
    char path[300], name[64] = "?";
    snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
    FILE* f = fopen(path, "r");
    if (f) {
      if (fgets(name, sizeof name, f)) name[strcspn(name, "\n")] = '\0';
      fclose(f);
    }
    for (char* c = name; *c; c++)
      if (*c == ' ' || *c == ',') *c = '_';
    names[n++] = strdup(name);
  }
  closedir(d);
  qsort(names, (size_t)n, sizeof *names, cmp_str);
  size_t used = 0;
  for (int i = 0; i < n; i++) {
    if (used + strlen(names[i]) + 2 < cap)
      used += (size_t)snprintf(buf + used, cap - used, "%s%s", i ? "," : "", names[i]);
    free(names[i]);
  }
}

/* Young collections in a JVM GC log (-Xlog:gc,gc+heap:file=PATH, the JVM run by the plugin) from
 * byte offset `from` on, and the eden occupancy each found ("Eden: 2176K(2176K)->0K"): their sum is
 * what the JVM allocated between the first and the last of those collections, so bytes per call
 * are known to within one eden (a few MB over millions of calls: alloc_bound_bytes_per_call). Returns the end offset; -1 if
 * there is no log. */
static double g_edenCapKb; /* largest eden capacity seen in the GC log */

static long gc_scan(long from, long* pauses, double* edenKb) {
  *pauses = 0;
  *edenKb = 0;
  if (!cfg.gcLog) return -1;
  FILE* f = fopen(cfg.gcLog, "r");
  if (!f) return -1;
  if (from > 0) fseek(f, from, SEEK_SET);
  char line[1024];
  while (fgets(line, sizeof line, f)) {
    if (strstr(line, "Pause")) (*pauses)++;
    const char* e = strstr(line, " Eden: ");
    if (e) {
      char* end;
      *edenKb += strtod(e + 7, &end);
      if (*end == 'K' && end[1] == '(') {
        double cap = strtod(end + 2, NULL);
        if (cap > g_edenCapKb) g_edenCapKb = cap;
      }
    }
  }
  long end = ftell(f);
  fclose(f);
  return end;
}

/* NCCL's logger as a plugin sees it with NCCL_DEBUG unset: WARN printed, the rest dropped. */
static void bench_logger(ncclDebugLogLevel level, unsigned long flags, const char* file, int line, const char* fmt,
                         ...) {
  (void)flags;
  (void)file;
  (void)line;
  if (level != NCCL_LOG_WARN || !fmt) return;
  atomic_fetch_add(&g_warns, 1);
  char msg[2048];
  va_list ap;
  va_start(ap, fmt);
  th_format_log(msg, sizeof msg, fmt, ap);
  va_end(ap);
  fprintf(stderr, "NCCL WARN %s\n", msg);
}

/* ---- traces ----------------------------------------------------------------------------- */

static void read_trace(const char* path) {
  FILE* f = fopen(path, "r");
  if (!f) die("cannot open %s: %s", path, strerror(errno));
  char* line = NULL;
  size_t cap = 0;
  while (getline(&line, &cap, f) != -1) {
    if (strncmp(line, "get,", 4) != 0) continue;
    char* field[10 + MAX_TABLE + 1];
    int nf = th_split_csv(line, field, 10 + MAX_TABLE + 1);
    th_get_row g;
    char why[256];
    if (nf < 0 || th_parse_get_row(field, nf, &g, why, sizeof why) != NULL)
      die("%s: %s", path, nf < 0 ? "too many fields" : why);
    row_t r = {
      .coll = g.coll, .nBytes = g.nBytes, .numPipeOps = g.numPipeOps, .numAlgo = g.numAlgo, .numProto = g.numProto};
    memcpy(r.costs, g.costs, sizeof r.costs);
    long long nRanks = 0, nNodes = 0;
    if (!th_parse_ll(field[2], 1, LLONG_MAX, &nRanks) || !th_parse_ll(field[3], 1, LLONG_MAX, &nNodes))
      die("%s: bad nRanks/nNodes", path);
    if (cfg.coll >= 0 && r.coll != cfg.coll) continue;
    if (g_nRows == g_capRows) {
      g_capRows = g_capRows ? 2 * g_capRows : 1024;
      g_rows = realloc(g_rows, g_capRows * sizeof *g_rows);
      if (!g_rows) die("out of memory");
    }
    if (g_nRows == 0) {
      g_nRanks = (size_t)nRanks;
      g_nNodes = (size_t)nNodes;
    }
    g_rows[g_nRows++] = r;
  }
  free(line);
  fclose(f);
}

/* ---- timing ----------------------------------------------------------------------------- */

/* The TSC may advance in steps rather than by one (AMD Zen: about 10 ns steps of ~26 ticks at
 * 2.6 GHz). g_quantum is the typical step, measured by spinning on rdtsc. */
static double g_quantum;

/* Exact distribution of per-call ticks: a histogram below HIST_CAP, the rest kept as values. */
typedef struct {
  uint64_t* hist; /* HIST_CAP counters */
  uint32_t* over; /* values >= HIST_CAP, sorted before use */
  size_t nOver, n;
  double sum;
  /* (value, count) of every observed value, ascending: built by dist_finish */
  uint32_t* val;
  uint64_t* cnt;
  size_t nVal;
} dist_t;

static void dist_init(dist_t* d, size_t maxOver) {
  memset(d, 0, sizeof *d);
  d->hist = calloc(HIST_CAP, sizeof(uint64_t));
  d->over = malloc((maxOver + 1) * sizeof(uint32_t));
  if (!d->hist || !d->over) die("out of memory");
}

static void dist_add(dist_t* d, const uint32_t* v, size_t n) {
  for (size_t i = 0; i < n; i++) {
    uint32_t x = v[i];
    if (x < HIST_CAP) d->hist[x]++;
    else d->over[d->nOver++] = x;
    d->sum += x;
  }
  d->n += n;
}

static int cmp_u32(const void* a, const void* b) {
  uint32_t x = *(const uint32_t*)a, y = *(const uint32_t*)b;
  return x < y ? -1 : x > y;
}

static void dist_finish(dist_t* d) {
  qsort(d->over, d->nOver, sizeof *d->over, cmp_u32);
  size_t distinct = d->nOver;
  for (uint32_t v = 0; v < HIST_CAP; v++) distinct += d->hist[v] != 0;
  d->val = malloc((distinct + 1) * sizeof *d->val);
  d->cnt = malloc((distinct + 1) * sizeof *d->cnt);
  if (!d->val || !d->cnt) die("out of memory");
  for (uint32_t v = 0; v < HIST_CAP; v++)
    if (d->hist[v]) {
      d->val[d->nVal] = v;
      d->cnt[d->nVal++] = d->hist[v];
    }
  for (size_t i = 0; i < d->nOver; i++) {
    if (d->nVal && d->val[d->nVal - 1] == d->over[i]) d->cnt[d->nVal - 1]++;
    else {
      d->val[d->nVal] = d->over[i];
      d->cnt[d->nVal++] = 1;
    }
  }
}

static void dist_free(dist_t* d) {
  free(d->hist);
  free(d->over);
  free(d->val);
  free(d->cnt);
}

/* Quantile q, in ticks, of the true call time: a reading v of a clock that advances in steps of Q
 * at a phase uniform relative to the call stands for a time spread evenly over [v - Q/2, v + Q/2]
 * (with Q = 1 this is the plain quantile to within a tick). Exact for the mean; within ~0.1 Q for
 * quantiles (1 ns for 10 ns steps). */
static double dist_q(const dist_t* d, double q) {
  double Q = g_quantum < 1 ? 1 : g_quantum;
  double target = q * (double)d->n;
  double lo = (double)d->val[0] - Q / 2, hi = (double)d->val[d->nVal - 1] + Q / 2;
  /* nearest-rank bracket first, so the bisection only scans values near the answer */
  size_t acc = 0, j = 0;
  while (j < d->nVal && (double)(acc + d->cnt[j]) < target) acc += d->cnt[j++];
  if (j >= d->nVal) j = d->nVal - 1;
  double center = d->val[j];
  if (center - 2 * Q > lo) lo = center - 2 * Q;
  if (center + 2 * Q < hi) hi = center + 2 * Q;
  for (int it = 0; it < 60; it++) {
    double x = (lo + hi) / 2, f = 0;
    for (size_t i = 0; i < d->nVal; i++) {
      double v = d->val[i];
      if (v + Q / 2 <= x) f += (double)d->cnt[i];
      else if (v - Q / 2 < x) f += (double)d->cnt[i] * (x - (v - Q / 2)) / Q;
      else break;
    }
    if (f < target) lo = x;
    else hi = x;
  }
  return (lo + hi) / 2;
}

static void calibrate(void) {
  double t0 = now_ns();
  uint64_t c0 = __rdtsc();
  struct timespec sl = {0, 200 * 1000 * 1000};
  nanosleep(&sl, NULL);
  double t1 = now_ns();
  uint64_t c1 = __rdtsc();
  g_ticksPerNs = (double)(c1 - c0) / (t1 - t0);

  enum {
    STEPS = 1001
  };
  uint32_t steps[STEPS];
  uint64_t last = __rdtsc();
  for (int n = 0; n < STEPS;) {
    uint64_t t = __rdtsc();
    if (t != last) {
      steps[n++] = (uint32_t)(t - last);
      last = t;
    }
  }
  qsort(steps, STEPS, sizeof *steps, cmp_u32);
  g_quantum = steps[STEPS / 2];
}

static double to_ns(double ticks, double overhead) {
  double t = ticks - overhead;
  return (t < 0 ? 0 : t) / g_ticksPerNs;
}

/* ---- the calls -------------------------------------------------------------------------- */

typedef struct {
  int index;
  pthread_t tid;
  void* ctx;
  uint32_t* ticks;
  uint32_t* empty;         /* an empty bracket after each timed call: the timer's own cost, in situ */
  double batchNs, resetNs; /* mean per call from batch timing */
  double batchP10Ns;       /* 10th percentile over the batches of (calls - resets) per call */
  float buf[64] __attribute__((aligned(64)));
  int nChannels;
} worker_t;

/* The distribution over every worker's timed calls (empty = 0) or the empty brackets beside them. */
static void workers_dist(dist_t* d, const worker_t* ws, int empty) {
  size_t nOverMax = 0;
  for (long i = 0; i < cfg.threads; i++) {
    const uint32_t* v = empty ? ws[i].empty : ws[i].ticks;
    for (long j = 0; j < cfg.calls; j++) nOverMax += v[j] >= HIST_CAP;
  }
  dist_init(d, nOverMax);
  for (long i = 0; i < cfg.threads; i++) dist_add(d, empty ? ws[i].empty : ws[i].ticks, (size_t)cfg.calls);
  dist_finish(d);
}

static int cmp_double(const void* a, const void* b);
static pthread_barrier_t g_barrier;
static long g_gcOffset = -1, g_gcPausesWarm; /* GC log position and young collections when timing starts */
static double g_gcEdenWarm;

static inline void reset(worker_t* w, const row_t* r) {
  memcpy(w->buf, r->costs, sizeof r->costs);
  w->nChannels = 0;
}

static inline void call(worker_t* w, const row_t* r) {
  g_tuner->getCollInfo(w->ctx, (ncclFunc_t)r->coll, r->nBytes, r->numPipeOps, (float**)w->buf, r->numAlgo, r->numProto,
                       &w->nChannels);
}

static void* worker_main(void* arg) {
  /* The cost table and nChannels of every call live on the calling thread's stack, as in NCCL:
   * getAlgoInfo passes its locals `float collCostTable[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS]`
   * and `int nMaxChannels` (NCCL 2.28.9 src/enqueue.cc). In a buffer on the heap, where the first
   * figures had them, their addresses' low 12 bits against the stack's (randomised per process, at
   * 16-byte steps) differ from one process to the next, and with them the 4 KiB aliasing between
   * the plugin's stack stores and its loads from the table: a per-process cost of its own. */
  worker_t* shared = arg;
  worker_t local = *shared;
  worker_t* w = &local;
  if (!w->ctx) g_tuner->init(g_nRanks, g_nNodes, bench_logger, &w->ctx); /* its own communicator */
  size_t k = 0;
  /* Warm-up: at least --warmup calls and at least --warmup-ms, so that C2 has compiled the upcall
   * path even when its queue is long (a large policy makes many methods hot at start-up). */
  double until = now_ns() + (double)cfg.warmupMs * 1e6;
  for (long i = 0; i < cfg.warmup || ((i & 4095) != 0 || now_ns() < until); i++) {
    const row_t* r = &g_rows[k];
    if (++k == g_nRows) k = 0;
    reset(w, r);
    call(w, r);
  }
  pthread_barrier_wait(&g_barrier); /* all warmed up */
  if (w->index == 0) g_gcOffset = gc_scan(0, &g_gcPausesWarm, &g_gcEdenWarm);
  pthread_barrier_wait(&g_barrier); /* timing starts */
  k = 0;
  for (long i = 0; i < cfg.calls; i++) {
    const row_t* r = &g_rows[k];
    if (++k == g_nRows) k = 0;
    reset(w, r);
    uint64_t a = stamp_begin();
    call(w, r);
    uint64_t b = stamp_end();
    uint64_t dt = b - a;
    w->ticks[i] = dt > UINT32_MAX ? UINT32_MAX : (uint32_t)dt;
    uint64_t e0 = stamp_begin();
    uint64_t e1 = stamp_end();
    w->empty[i] = (uint32_t)(e1 - e0);
  }
  pthread_barrier_wait(&g_barrier);
  /* Batch timing: mean of (reset + call) minus mean of (reset alone), batches of 1000. */
  long nb = cfg.calls < 2000000 ? cfg.calls : 2000000;
  double withCall = 0, resetOnly = 0;
  long nBatches = (nb + 999) / 1000, bi = 0;
  double* perBatch = malloc((size_t)(nBatches > 0 ? nBatches : 1) * sizeof *perBatch);
  if (!perBatch) die("out of memory");
  k = 0;
  for (long i = 0; i < nb; i += 1000) {
    double t0 = now_ns();
    for (int j = 0; j < 1000; j++) {
      const row_t* r = &g_rows[k];
      if (++k == g_nRows) k = 0;
      reset(w, r);
      call(w, r);
    }
    double t1 = now_ns();
    for (int j = 0; j < 1000; j++) {
      const row_t* r = &g_rows[k];
      if (++k == g_nRows) k = 0;
      reset(w, r);
      __asm__ volatile("" ::"r"(w->buf) : "memory");
    }
    double t2 = now_ns();
    withCall += t1 - t0;
    resetOnly += t2 - t1;
    perBatch[bi++] = ((t1 - t0) - (t2 - t1)) / 1000.0;
  }
  /* The low end of the batches: the process's own cost per call with the machine at its fastest.
   * On a 2-vCPU KVM guest (AMD EPYC, 2026-12-03) loads and stores ran 25-90% slower in stretches
   * of milliseconds to seconds, in any code (bench/README: "the machine's slow stretches"), and a
   * process's median is then partly a sample of those stretches. */
  qsort(perBatch, (size_t)bi, sizeof *perBatch, cmp_double);
  shared->batchP10Ns = bi ? perBatch[bi / 10] : 0;
  free(perBatch);
  shared->ctx = w->ctx;
  shared->batchNs = nb ? (withCall - resetOnly) / (double)nb : 0;
  shared->resetNs = nb ? resetOnly / (double)nb : 0;
  return NULL;
}

static uint64_t digest(void* ctx);

/* --shapes: communicators of several shapes in one process, their calls timed in turns of 1000. */
#define MAX_SHAPES 16
#define SHAPE_TURN 1000
static void shapes_run(void) {
  size_t nRanks[MAX_SHAPES], nNodes[MAX_SHAPES];
  int n = 0;
  for (const char* p = cfg.shapes; *p;) {
    char* end;
    long r = strtol(p, &end, 10);
    if (end == p || *end != 'x' || r < 1) die("--shapes: want RxN,RxN,... (at %s)", p);
    p = end + 1;
    long nn = strtol(p, &end, 10);
    if (end == p || nn < 1 || n == MAX_SHAPES) die("--shapes: want RxN,RxN,... (at most %d)", MAX_SHAPES);
    nRanks[n] = (size_t)r;
    nNodes[n++] = (size_t)nn;
    p = *end == ',' ? end + 1 : end;
    if (*end && *end != ',') die("--shapes: want RxN,RxN,...");
  }
  if (n == 0) die("--shapes: no shape");
  worker_t w[MAX_SHAPES];
  uint32_t* ticks[MAX_SHAPES];
  uint32_t* empty[MAX_SHAPES];
  long per = cfg.calls / n + SHAPE_TURN, count[MAX_SHAPES] = {0};
  for (int s = 0; s < n; s++) {
    memset(&w[s], 0, sizeof w[s]);
    g_tuner->init(nRanks[s], nNodes[s], bench_logger, &w[s].ctx);
    ticks[s] = calloc((size_t)per, sizeof(uint32_t));
    empty[s] = calloc((size_t)per, sizeof(uint32_t));
    if (!ticks[s] || !empty[s]) die("out of memory");
  }
  size_t k = 0;
  double until = now_ns() + (double)cfg.warmupMs * 1e6;
  for (long i = 0; i < cfg.warmup || ((i % (SHAPE_TURN * n)) != 0 || now_ns() < until); i++) {
    worker_t* x = &w[(i / SHAPE_TURN) % n];
    const row_t* r = &g_rows[k];
    if (++k == g_nRows) k = 0;
    reset(x, r);
    call(x, r);
  }
  k = 0;
  for (long i = 0; i < cfg.calls; i++) {
    int s = (int)((i / SHAPE_TURN) % n);
    worker_t* x = &w[s];
    const row_t* r = &g_rows[k];
    if (++k == g_nRows) k = 0;
    reset(x, r);
    uint64_t a = stamp_begin();
    call(x, r);
    uint64_t b = stamp_end();
    uint64_t dt = b - a;
    ticks[s][count[s]] = dt > UINT32_MAX ? UINT32_MAX : (uint32_t)dt;
    uint64_t e0 = stamp_begin();
    uint64_t e1 = stamp_end();
    empty[s][count[s]++] = (uint32_t)(e1 - e0);
  }
  for (int s = 0; s < n; s++) {
    dist_t d, e;
    size_t over = 0;
    for (long j = 0; j < count[s]; j++) over += ticks[s][j] >= HIST_CAP || empty[s][j] >= HIST_CAP;
    dist_init(&d, over);
    dist_add(&d, ticks[s], (size_t)count[s]);
    dist_finish(&d);
    dist_init(&e, over);
    dist_add(&e, empty[s], (size_t)count[s]);
    dist_finish(&e);
    double om = dist_q(&e, 0.5);
    printf("bench: shape nRanks=%zu nNodes=%zu calls=%ld median_ns=%.1f p99_ns=%.1f p999_ns=%.1f "
           "timer_overhead_ns=%.1f digest=%016llx\n",
           nRanks[s], nNodes[s], count[s], to_ns(dist_q(&d, 0.5), om), to_ns(dist_q(&d, 0.99), om),
           to_ns(dist_q(&d, 0.999), om), om / g_ticksPerNs, (unsigned long long)digest(w[s].ctx));
    dist_free(&d);
    dist_free(&e);
    free(ticks[s]);
    free(empty[s]);
    g_tuner->destroy(w[s].ctx);
  }
}

/* FNV-1a over every row's table and nChannels after one call: equal digests = equal decisions. */
static uint64_t digest(void* ctx) {
  worker_t w = {.ctx = ctx};
  uint64_t h = 1469598103934665603ull;
  for (size_t k = 0; k < g_nRows; k++) {
    reset(&w, &g_rows[k]);
    call(&w, &g_rows[k]);
    const unsigned char* p = (const unsigned char*)w.buf;
    for (size_t i = 0; i < sizeof g_rows[k].costs; i++) h = (h ^ p[i]) * 1099511628211ull;
    for (size_t i = 0; i < sizeof w.nChannels; i++)
      h = (h ^ ((const unsigned char*)&w.nChannels)[i]) * 1099511628211ull;
  }
  return h;
}

static int cmp_double(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

/* ---- main ------------------------------------------------------------------------------- */

static long num(const char* opt, const char* s) {
  if (!s) die("%s needs a value", opt);
  char* end;
  long v = strtol(s, &end, 10);
  if (*end || v < 0) die("%s: bad value '%s'", opt, s);
  return v;
}

int main(int argc, char** argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  double tStart = now_ns();
  int nTraces = 0;
  for (int i = 1; i < argc; i++) {
    const char* a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--plugin")) {
      cfg.plugin = v;
      i++;
    } else if (!strcmp(a, "--calls")) {
      cfg.calls = num(a, v);
      i++;
    } else if (!strcmp(a, "--warmup")) {
      cfg.warmup = num(a, v);
      i++;
    } else if (!strcmp(a, "--warmup-ms")) {
      cfg.warmupMs = num(a, v);
      i++;
    } else if (!strcmp(a, "--threads")) {
      cfg.threads = num(a, v);
      i++;
    } else if (!strcmp(a, "--inits")) {
      cfg.inits = num(a, v);
      i++;
    } else if (!strcmp(a, "--cycles")) {
      cfg.cycles = num(a, v);
      i++;
    } else if (!strcmp(a, "--coll")) {
      cfg.coll = num(a, v);
      i++;
    } else if (!strcmp(a, "--gc-log")) {
      cfg.gcLog = v;
      i++;
    } else if (!strcmp(a, "--smaps")) {
      cfg.smaps = v;
      i++;
    } else if (!strcmp(a, "--shapes")) {
      if (!v) die("--shapes needs a value");
      cfg.shapes = v;
      i++;
    } else if (!strcmp(a, "--startup-only")) cfg.startupOnly = 1;
    else if (a[0] == '-') die("unknown option %s (see the comment at the top of bench/bench_driver.c)", a);
    else {
      read_trace(a);
      nTraces++;
    }
  }
  if (!cfg.plugin) die("--plugin is required");
  if (nTraces == 0 || g_nRows == 0) die("no get rows (give trace CSVs%s)", cfg.coll >= 0 ? " with that --coll" : "");
  if (cfg.threads < 1 || cfg.threads > 256) die("--threads in 1..256");

  long rss0, thr0, rss1, thr1, rss2, thr2, rss3, thr3;
  proc_status(&rss0, &thr0);
  double cpu0 = cpu_ms();
  double t0 = now_ns();
  void* lib = NULL;
  char why[512];
  g_tuner = th_load_tuner(cfg.plugin, &lib, why, sizeof why);
  if (!lib) die("dlopen %s: %s", cfg.plugin, why);
  if (!th_tuner_complete(g_tuner)) die("%s: no usable %s", cfg.plugin, NCCL_TUNER_PLUGIN_SYMBOL);
  double t1 = now_ns();
  proc_status(&rss1, &thr1);

  /* First init (JVM creation for the Java plugin) and first decision. */
  worker_t* ws = calloc((size_t)cfg.threads, sizeof *ws);
  if (!ws) die("out of memory");
  double t2 = now_ns();
  g_tuner->init(g_nRanks, g_nNodes, bench_logger, &ws[0].ctx);
  double t3 = now_ns();
  reset(&ws[0], &g_rows[0]);
  call(&ws[0], &g_rows[0]);
  double t4 = now_ns();
  double cpu1 = cpu_ms();
  proc_status(&rss2, &thr2);
  static char names[8192];
  thread_names(names, sizeof names);
  if (cfg.smaps) copy_file("/proc/self/smaps", cfg.smaps);
  printf("bench: plugin=%s name=%s rows=%zu nRanks=%zu nNodes=%zu\n", cfg.plugin, g_tuner->name, g_nRows, g_nRanks,
         g_nNodes);
  printf("bench: startup dlopen_ms=%.3f first_init_ms=%.3f first_call_us=%.1f first_decision_ms=%.3f "
         "process_to_first_decision_ms=%.3f cpu_ms=%.1f\n",
         (t1 - t0) / 1e6, (t3 - t2) / 1e6, (t4 - t3) / 1e3, (t4 - t2) / 1e6, (t4 - tStart) / 1e6, cpu1 - cpu0);
  printf("bench: footprint rss_before_kb=%ld rss_after_first_init_kb=%ld added_rss_mb=%.1f threads_before=%ld "
         "threads_after=%ld added_threads=%ld\n",
         rss1, rss2, (rss2 - rss1) / 1024.0, thr1, thr2, thr2 - thr1);
  printf("bench: threads after_first_init=%s\n", names);
  (void)rss0;
  (void)thr0;

  if (cfg.inits > 0) { /* each further communicator init */
    void** ctx = calloc((size_t)cfg.inits, sizeof *ctx);
    double* us = calloc((size_t)cfg.inits, sizeof *us);
    for (long i = 0; i < cfg.inits; i++) {
      double a = now_ns();
      g_tuner->init(g_nRanks, g_nNodes, bench_logger, &ctx[i]);
      us[i] = (now_ns() - a) / 1e3;
    }
    double sum = 0;
    for (long i = 0; i < cfg.inits; i++) sum += us[i];
    qsort(us, (size_t)cfg.inits, sizeof *us, cmp_double);
    printf("bench: inits n=%ld median_us=%.1f p99_us=%.1f max_us=%.1f mean_us=%.1f\n", cfg.inits, us[cfg.inits / 2],
           us[(size_t)(0.99 * (double)cfg.inits)], us[cfg.inits - 1], sum / (double)cfg.inits);
    for (long i = 0; i < cfg.inits; i++) g_tuner->destroy(ctx[i]);
    free(ctx);
    free(us);
  }
  if (cfg.cycles > 0) { /* init+destroy pairs: does each communicator leave memory behind? */
    double* us = calloc((size_t)cfg.cycles, sizeof *us);
    if (!us) die("out of memory");
    long rssWarm = 0, rssEnd = 0, thr = 0;
    long warm = cfg.cycles < 1000 ? cfg.cycles : 1000;
    long rssSteps[64]; /* after each further 10,000 pairs: growth that goes on, told from warm-up */
    int nSteps = 0;
    worker_t w;
    memset(&w, 0, sizeof w);
    for (long i = 0; i < cfg.cycles; i++) {
      double a = now_ns();
      g_tuner->init(g_nRanks, g_nNodes, bench_logger, &w.ctx);
      reset(&w, &g_rows[(size_t)i % g_nRows]);
      call(&w, &g_rows[(size_t)i % g_nRows]);
      g_tuner->destroy(w.ctx);
      us[i] = (now_ns() - a) / 1e3;
      if (i + 1 == warm) {
        proc_status(&rssWarm, &thr);
        smaps_copy("warm");
      }
      if ((i + 1 - warm) % 10000 == 0 && i + 1 > warm && nSteps < 64) proc_status(&rssSteps[nSteps++], &thr);
    }
    proc_status(&rssEnd, &thr);
    smaps_copy("end");
    qsort(us, (size_t)cfg.cycles, sizeof *us, cmp_double);
    printf("bench: cycles n=%ld warm=%ld rss_after_warm_kb=%ld rss_after_all_kb=%ld added_after_warm_mb=%.2f "
           "median_us=%.1f p99_us=%.1f\n",
           cfg.cycles, warm, rssWarm, rssEnd, (rssEnd - rssWarm) / 1024.0, us[cfg.cycles / 2],
           us[(size_t)(0.99 * (double)cfg.cycles)]);
    if (nSteps > 0) {
      printf("bench: cycles_steps every=10000 from=%ld added_mb=", warm);
      for (int j = 0; j < nSteps; j++)
        printf("%s%.2f", j ? "," : "", (rssSteps[j] - (j ? rssSteps[j - 1] : rssWarm)) / 1024.0);
      printf("\n");
    }
    free(us);
  }
  if (cfg.startupOnly) {
    g_tuner->destroy(ws[0].ctx);
    return atomic_load(&g_warns) ? TH_EXIT_MISBEHAVIOUR : TH_EXIT_OK;
  }

  calibrate();
  if (cfg.shapes) {
    shapes_run();
    g_tuner->destroy(ws[0].ctx);
    return atomic_load(&g_warns) ? TH_EXIT_MISBEHAVIOUR : TH_EXIT_OK;
  }
  for (long i = 0; i < cfg.threads; i++) {
    ws[i].index = (int)i;
    ws[i].ticks = malloc((size_t)cfg.calls * sizeof(uint32_t) + 4);
    ws[i].empty = malloc((size_t)cfg.calls * sizeof(uint32_t) + 4);
    if (!ws[i].ticks || !ws[i].empty) die("out of memory for %ld per-call times", cfg.calls);
    memset(ws[i].ticks, 0, (size_t)cfg.calls * sizeof(uint32_t)); /* fault the pages in now */
    memset(ws[i].empty, 0, (size_t)cfg.calls * sizeof(uint32_t));
  }
  long gcPauses;
  double gcEden;
  pthread_barrier_init(&g_barrier, NULL, (unsigned)cfg.threads);
  double tw0 = now_ns();
  if (cfg.threads == 1) {
    worker_main(&ws[0]);
  } else {
    for (long i = 0; i < cfg.threads; i++)
      if (pthread_create(&ws[i].tid, NULL, worker_main, &ws[i])) die("pthread_create failed");
    for (long i = 0; i < cfg.threads; i++) pthread_join(ws[i].tid, NULL);
  }
  double tw1 = now_ns();
  long gcOffset = g_gcOffset, gcPausesWarm = g_gcPausesWarm;
  gc_scan(gcOffset, &gcPauses, &gcEden);
  proc_status(&rss3, &thr3);

  dist_t d;
  workers_dist(&d, ws, 0);
  double batch = 0, resetNs = 0, batchP10 = 0;
  for (long i = 0; i < cfg.threads; i++) {
    batch += ws[i].batchNs;
    batchP10 += ws[i].batchP10Ns;
    resetNs += ws[i].resetNs;
  }
  /* The timer's cost to subtract: the median (mean) of the empty brackets timed beside the calls,
   * one after each, in the same loop and state; a start-up estimate (1M back-to-back brackets)
   * varied from one process to the next (17.5 ns in most, 24.1 ns in one of 60, 2026-12-03) and
   * every figure of that process with it. */
  double om = 0, omMean = 0;
  {
    dist_t e;
    workers_dist(&e, ws, 1);
    if (e.n > 0) {
      om = dist_q(&e, 0.5);
      omMean = e.sum / (double)e.n;
    }
    dist_free(&e);
  }
  printf(
    "bench: calls threads=%ld calls_per_thread=%ld warmup_per_thread=%ld warmup_min_ms=%ld median_ns=%.1f p90_ns=%.1f "
    "p99_ns=%.1f p999_ns=%.1f mean_ns=%.1f max_us=%.1f batch_mean_ns=%.1f batch_p10_ns=%.1f reset_ns=%.1f "
    "timer_overhead_ns=%.1f tsc_step_ticks=%.0f tsc_ghz=%.4f wall_s=%.2f\n",
    cfg.threads, cfg.calls, cfg.warmup, cfg.warmupMs, to_ns(dist_q(&d, 0.5), om), to_ns(dist_q(&d, 0.9), om),
    to_ns(dist_q(&d, 0.99), om), to_ns(dist_q(&d, 0.999), om), to_ns(d.sum / (double)d.n, omMean),
    d.val[d.nVal - 1] / g_ticksPerNs / 1e3, batch / (double)cfg.threads, batchP10 / (double)cfg.threads,
    resetNs / (double)cfg.threads, om / g_ticksPerNs, g_quantum, g_ticksPerNs, (tw1 - tw0) / 1e9);
  {
    /* the workers' timed and batch passes: calls + min(calls, 2M) each */
    /* added_rss_mb leaves out the driver's own per-call arrays */
    double ticksMb = 2.0 * (double)cfg.threads * (double)cfg.calls * sizeof(uint32_t) / (1024.0 * 1024.0);
    double calls = (double)cfg.threads * (double)(cfg.calls + (cfg.calls < 2000000 ? cfg.calls : 2000000));
    if (gcOffset >= 0)
      printf("bench: after_calls rss_kb=%ld added_rss_mb=%.1f threads=%ld gc_young_before=%ld gc_young_during=%ld "
             "alloc_bytes_per_call=%.2f alloc_bound_bytes_per_call=%.2f\n",
             rss3, (rss3 - rss1) / 1024.0 - ticksMb, thr3, gcPausesWarm, gcPauses, gcEden * 1024.0 / calls,
             g_edenCapKb * 1024.0 / calls);
    else
      printf("bench: after_calls rss_kb=%ld added_rss_mb=%.1f threads=%ld\n", rss3, (rss3 - rss1) / 1024.0 - ticksMb,
             thr3);
  }
  printf("bench: digest=%016llx\n", (unsigned long long)digest(ws[0].ctx));
  for (long i = 0; i < cfg.threads; i++) {
    g_tuner->destroy(ws[i].ctx);
    free(ws[i].ticks);
    free(ws[i].empty);
  }
  dist_free(&d);
  free(ws);
  return atomic_load(&g_warns) ? TH_EXIT_MISBEHAVIOUR : TH_EXIT_OK;
}
