/*
 * harness.c -- host harness for NCCL tuner plugins, ABI v3 .. v7 (no GPU, no NCCL needed).
 *
 * Loads a tuner plugin the way NCCL 2.22 .. 2.32 does (src/misc/tuner.cc, src/plugin/tuner.cc)
 * and replays getCollInfo traces captured from real NCCL through it, calling the plugin exactly
 * as NCCL's src/enqueue.cc does, then applies NCCL's own selection to the table the plugin
 * returns. It also checks the plugin against the rules of the interface (see do_get below).
 *
 * Without --nccl-era it looks up ncclTunerPlugin_v3 only (as NCCL 2.19 .. 2.23). With
 * --nccl-era E it loads as that NCCL does: its symbol order (newest first) and the adaptation its
 * core applies to an older plugin (NCCL 2.30.7 src/plugin/tuner/tuner_v3.cc .. v5.cc): a v3
 * plugin gets no regBuff, v3 and v4 plugins get no commId, NVLink domains or constants, and only
 * a v6+ plugin under a 2.30+ core is asked getChunkSize. The 2.32.6 era (NVIDIA/nccl 2449986:
 * src/plugin/tuner.cc, src/plugin/tuner/tuner_v5.cc, tuner_v6.cc) tries v7 first; its core's
 * constants are an ncclTunerConstants_v7_t (5 compute-capability rows), handed to a v7 plugin as
 * they are and to a v5/v6 plugin as NCCL's adapter does: the rows VOLTA..BLACKWELL copied into an
 * ncclTunerConstants_v5_t for init and copied back after it (the RUBIN row untouched). That era
 * also prints NCCL's "TUNER/Plugin: Closing tuner: '%s'" with the name NCCL's adapter carries:
 * the plugin's for v7 and v5, '(null)' for v6 (the v6 adapter never sets it); for v3/v4 it prints
 * the plugin's name (tuner_v3.cc/v4.cc of 2.32 were not read). It also exports
 * ncclGetVersion with that era's version (or --nccl-version's), as libnccl would, so the plugin's
 * hardware signature sees it. The GPU the signature sees is the CUDA driver's the process has
 * loaded: none here, unless one is LD_PRELOADed (tests/plugins/fake_cuda.c; `nccl-tuner try --gpu`).
 *
 *   harness [options] [--trace] FILE...      (harness --help for the options)
 *
 * Output (stdout, line buffered): the plugin-loading line(s), one selection line per call
 * (2.24+ NCCL format, bytes as the tuner received them), the plugin's logger lines in NCCL's
 * format, "harness: ERROR ..." lines, and one summary line. Usage/IO errors go to stderr.
 * Exit status: 0 ok, 2 usage or IO error, 3 plugin misbehaviour.
 *
 * The NCCL facts used here are those written down in plugin-shim/include/nccl_tuner_abi.h; plugin
 * loading, logger formatting and the get-row reader are shared with the other C hosts
 * (tests/include/test_host.h).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "nccl_names.h"
#include "nccl_select.h"
#include "nccl_tuner_abi.h"
#include "test_host.h"

#define MAX_TABLE TH_MAX_TABLE
#define GUARD_FLOATS 8     /* canary after the table: catches writes past numAlgo*numProto */
#define MAX_ERROR_LINES 50 /* ERROR lines printed in full; the rest are only counted */
static const char* const kResultNames[ncclNumResults] = {
  "ncclSuccess",         "ncclUnhandledCudaError", "ncclSystemError", "ncclInternalError",
  "ncclInvalidArgument", "ncclInvalidUsage",       "ncclRemoteError", "ncclInProgress"};

/* ---- trace model ------------------------------------------------------------------------ */

enum {
  EV_INIT,
  EV_GET,
  EV_DESTROY
};

typedef struct {
  int kind;
  int line; /* line number in the trace file, for messages */
  int slot; /* index of this event's communicator within its trace */
  size_t nRanks, nNodes;
  int coll;
  size_t nBytes;
  int numPipeOps, numAlgo, numProto;
  float costs[MAX_TABLE];
} event_t;

typedef struct {
  const char* path;
  event_t* ev;
  size_t n, cap;
  size_t nGets;
  long long* commIds; /* slot -> comm id as written in the trace */
  int nComms;
} trace_t;

/* ---- configuration and global state ----------------------------------------------------- */

static struct {
  trace_t* traces;
  int nTraces;
  const char* plugin; /* --plugin, else NCCL_TUNER_PLUGIN */
  bool quiet, noDestroy, sigintHandler, printConstants;
  long repeat, threads, stackKib;
  int regBuff;      /* --regbuff: what a v4+ core passes */
  int nvl[3];       /* --nvl-domain N,MIN,MAX (nvl[0] 0: one domain per node) */
  long chunkSize;   /* --chunk-size: NCCL's own chunk size given to getChunkSize */
  const char* hide; /* --hide-symbol: a tuner symbol looked up as if the plugin lacked it */
} cfg = {.repeat = 1, .threads = 1, .stackKib = 1024, .chunkSize = 131072};

static const ncclTuner_v3_t* g_tuner; /* NULL: NCCL's internal choice; else the loaded symbol */
static int g_tunerVersion;            /* ABI of the loaded symbol: 3..7 */
static const char* g_coreName;        /* the name NCCL's own ncclTuner_t carries (adapters) */

/* ---- NCCL eras (--nccl-era) ---------------------------------------------------------------
 * core: the tuner ABI of that NCCL's core (its ncclTuner_t); order: the symbols it tries, newest
 * first (src/misc/tuner.cc 2.22-2.25, src/plugin/tuner.cc 2.26+); version: ncclGetVersion's code.
 * 2.28 reports 2.28.9, the release the traces were captured with. 2.32.6 tries _v7 first, then
 * _v6 down (src/plugin/tuner.cc at NVIDIA/nccl 2449986). */
typedef struct {
  const char* name;
  int core;
  int version;
  int order[7];
} era_t;
static const era_t kEras[] = {
  {"2.22", 3, 22203, {3, 2, 0}},
  {"2.24", 4, 22403, {4, 3, 2, 0}},
  {"2.28", 5, 22809, {5, 4, 3, 2, 0}},
  {"2.30", 6, 23007, {6, 5, 4, 3, 2, 0}},
  {"2.32.6", 7, 23206, {7, 6, 5, 4, 3, 2, 0}},
};
static const era_t* g_era;
static int g_version; /* --nccl-version: the code ncclGetVersion reports instead of the era's */

/* libnccl's ncclGetVersion, exported from the harness (make/harness.mk links it with
 * --export-dynamic-symbol): --nccl-version's code, else the era's, or an error without --nccl-era. */
__attribute__((visibility("default"))) ncclResult_t ncclGetVersion(int* version) {
  if (g_era == NULL || version == NULL) return ncclInvalidUsage;
  *version = g_version > 0 ? g_version : g_era->version;
  return ncclSuccess;
}
static void* g_lib;
static atomic_ulong g_warns, g_errors;
static pthread_barrier_t g_start;

/* logger state */
static FILE* g_logOut;
static int g_logLevel; /* highest ncclDebugLogLevel printed */
static char g_host[64];
static int g_pid;

static volatile sig_atomic_t g_sigintRan;

/* ---- small helpers ---------------------------------------------------------------------- */

TH_DIE_FUNCTION(die_usage, "harness: ", " (harness --help for usage)\n", TH_EXIT_USAGE)

static const char* result_name(int r) {
  return (r >= 0 && r < ncclNumResults) ? kResultNames[r] : "unknown ncclResult_t";
}

static const char* func_name(int coll) {
  return (coll >= 0 && coll < ncclNumFuncs) ? ncclFuncNames[coll] : "UnknownFunc";
}

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* One misbehaviour report. Every report is counted; the first MAX_ERROR_LINES are printed.
 * Where: t == NULL: the plugin as a whole; get != NULL: that get row; else communicator `slot`
 * of trace t at `line` (0: the end of the trace). */
static void report(const trace_t* t, int line, const event_t* get, int slot, int thread, const char* fmt, ...) {
  unsigned long k = atomic_fetch_add(&g_errors, 1) + 1;
  if (k > MAX_ERROR_LINES) return;
  char msg[512], where[320], lineStr[16];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (line > 0) snprintf(lineStr, sizeof lineStr, "%d", line);
  else snprintf(lineStr, sizeof lineStr, "end");
  if (!t) snprintf(where, sizeof where, "plugin");
  else if (get)
    snprintf(where, sizeof where, "%s:%s (%s %zu Bytes, thread %d)", t->path, lineStr, func_name(get->coll),
             get->nBytes, thread);
  else snprintf(where, sizeof where, "%s:%s (comm %lld, thread %d)", t->path, lineStr, t->commIds[slot], thread);
  printf("harness: ERROR %s: %s\n", where, msg);
}

/* ---- NCCL's logger ---------------------------------------------------------------------- */

/* Like NCCL's ncclDebugLog: "<host>:<pid>:<tid> [<dev>] NCCL <LEVEL> <msg>". Differences from
 * NCCL, on purpose: WARN lines are printed even when NCCL_DEBUG is unset (NCCL prints nothing
 * then) so that a plugin's warnings are never lost; NCCL_DEBUG_SUBSYS is not applied; WARN
 * lines carry no file:line. Every WARN is counted for the summary. */
static void harness_logger(ncclDebugLogLevel level, unsigned long flags, const char* file, int line, const char* fmt,
                           ...) {
  (void)flags;
  (void)file;
  (void)line;
  if (level == NCCL_LOG_WARN) atomic_fetch_add(&g_warns, 1);
  bool show = level == NCCL_LOG_WARN || level == NCCL_LOG_ABORT ||
              ((level == NCCL_LOG_INFO || level == NCCL_LOG_VERSION) && g_logLevel >= NCCL_LOG_INFO) ||
              (level == NCCL_LOG_TRACE && g_logLevel >= NCCL_LOG_TRACE);
  if (!show || fmt == NULL) return;
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  th_format_log(msg, sizeof msg, fmt, ap);
  va_end(ap);
  fprintf(g_logOut, "%s:%d:%ld [0] NCCL %s %s\n", g_host, g_pid, (long)syscall(SYS_gettid), th_level_name(level), msg);
}

static void logger_setup(void) {
  gethostname(g_host, sizeof g_host - 1);
  char* dot = strchr(g_host, '.');
  if (dot) *dot = '\0';
  g_pid = (int)getpid();

  const char* d = getenv("NCCL_DEBUG");
  g_logLevel = NCCL_LOG_WARN; /* unset, empty, NONE, VERSION, WARN: WARN (and ABORT) lines only */
  if (d && strcasecmp(d, "INFO") == 0) g_logLevel = NCCL_LOG_INFO;
  if (d && strcasecmp(d, "TRACE") == 0) g_logLevel = NCCL_LOG_TRACE;

  g_logOut = stdout;
  const char* f = getenv("NCCL_DEBUG_FILE");
  if (f && *f) { /* NCCL expands %h (host) and %p (pid) */
    char path[PATH_MAX];
    size_t o = 0;
    for (const char* p = f; *p && o < sizeof path - 1; p++) {
      if (p[0] == '%' && p[1] == 'h') {
        o += (size_t)snprintf(path + o, sizeof path - o, "%s", g_host);
        p++;
      } else if (p[0] == '%' && p[1] == 'p') {
        o += (size_t)snprintf(path + o, sizeof path - o, "%d", g_pid);
        p++;
      } else path[o++] = *p;
      if (o >= sizeof path) o = sizeof path - 1;
    }
    path[o] = '\0';
    FILE* out = fopen(path, "w");
    if (out) {
      setvbuf(out, NULL, _IOLBF, 0);
      g_logOut = out;
    } else fprintf(stderr, "harness: cannot open NCCL_DEBUG_FILE %s (%s); logging to stdout\n", path, strerror(errno));
  }
}

/* ---- trace reading ---------------------------------------------------------------------- */

static int comm_slot(trace_t* t, long long id) {
  for (int i = 0; i < t->nComms; i++)
    if (t->commIds[i] == id) return i;
  long long* ids = realloc(t->commIds, (size_t)(t->nComms + 1) * sizeof *ids);
  if (!ids) {
    perror("harness: realloc");
    exit(TH_EXIT_USAGE);
  }
  t->commIds = ids;
  t->commIds[t->nComms] = id;
  return t->nComms++;
}

#define BAD(...) \
  do { \
    fprintf(stderr, "harness: %s:%d: ", t->path, lineNo); \
    fprintf(stderr, __VA_ARGS__); \
    fputc('\n', stderr); \
    exit(TH_EXIT_USAGE); \
  } while (0)

static void read_trace(trace_t* t) {
  FILE* f = fopen(t->path, "r");
  if (!f) {
    fprintf(stderr, "harness: cannot open trace %s: %s\n", t->path, strerror(errno));
    exit(TH_EXIT_USAGE);
  }
  char* buf = NULL;
  size_t bufCap = 0;
  int lineNo = 0;
  enum {
    MAX_FIELDS = 10 + MAX_TABLE + 1
  };
  while (getline(&buf, &bufCap, f) != -1) {
    lineNo++;
    size_t len = strcspn(buf, "\r\n");
    buf[len] = '\0';
    if (len == 0 || buf[0] == '#') continue;
    char* field[MAX_FIELDS];
    int nf = 0;
    for (char *p = buf, *tok; (tok = strsep(&p, ",")) != NULL;) {
      if (nf == MAX_FIELDS) BAD("too many fields (at most %d costs)", MAX_TABLE);
      field[nf++] = tok;
    }
    if (t->n == t->cap) {
      t->cap = t->cap ? 2 * t->cap : 256;
      event_t* ev = realloc(t->ev, t->cap * sizeof *ev);
      if (!ev) {
        perror("harness: realloc");
        exit(TH_EXIT_USAGE);
      }
      t->ev = ev;
    }
    event_t* e = &t->ev[t->n];
    memset(e, 0, sizeof *e);
    e->line = lineNo;
    long long v;
    if (strcmp(field[0], "init") == 0 || strcmp(field[0], "get") == 0) {
      e->kind = field[0][0] == 'i' ? EV_INIT : EV_GET;
      if (nf < 4) BAD("%s needs at least 4 fields", field[0]);
      if (e->kind == EV_INIT && nf != 4) BAD("init has 4 fields: init,comm,nRanks,nNodes");
      if (!th_parse_ll(field[1], LLONG_MIN, LLONG_MAX, &v)) BAD("bad comm id '%s'", field[1]);
      e->slot = comm_slot(t, v);
      if (!th_parse_size(field[2], &e->nRanks) || e->nRanks == 0) BAD("bad nRanks '%s'", field[2]);
      if (!th_parse_size(field[3], &e->nNodes) || e->nNodes == 0) BAD("bad nNodes '%s'", field[3]);
    } else if (strcmp(field[0], "destroy") == 0) {
      e->kind = EV_DESTROY;
      if (nf != 2) BAD("destroy has 2 fields: destroy,comm");
      if (!th_parse_ll(field[1], LLONG_MIN, LLONG_MAX, &v)) BAD("bad comm id '%s'", field[1]);
      e->slot = comm_slot(t, v);
    } else {
      BAD("unknown row kind '%s' (expected init, get or destroy)", field[0]);
    }
    if (e->kind == EV_GET) {
      th_get_row row;
      char why[256];
      if (th_parse_get_row(field, nf, &row, why, sizeof why) != NULL) BAD("%s", why);
      e->coll = row.coll;
      e->nBytes = row.nBytes;
      e->numPipeOps = row.numPipeOps;
      e->numAlgo = row.numAlgo;
      e->numProto = row.numProto;
      memcpy(e->costs, row.costs, sizeof e->costs);
      t->nGets++;
    }
    t->n++;
  }
  if (ferror(f)) {
    fprintf(stderr, "harness: error reading %s\n", t->path);
    exit(TH_EXIT_USAGE);
  }
  free(buf);
  fclose(f);
}

/* ---- plugin loading (NCCL src/plugin/tuner.cc) ------------------------------------------ */

static void say(const char* fmt, ...) {
  if (cfg.quiet) return;
  va_list ap;
  va_start(ap, fmt);
  vprintf(fmt, ap);
  va_end(ap);
  putchar('\n');
}

/* Opens one candidate name; NULL (after NCCL's "Could not find" line) if it does not load. */
static const ncclTuner_v3_t* try_open(const char* name, bool* loaded) {
  char why[512];
  const ncclTuner_v3_t* t = th_load_tuner(name, &g_lib, why, sizeof why);
  *loaded = g_lib != NULL;
  if (!g_lib) say("TUNER/Plugin: Could not find: %s (%s)", name, why);
  return t;
}

static void load_plugin(void) {
  const char* name = cfg.plugin;
  if (!name) name = getenv("NCCL_TUNER_PLUGIN");
  const ncclTuner_v3_t* t = NULL;
  bool loaded = false;
  if (name && *name) {
    t = try_open(name, &loaded);
    if (!loaded) {
      char lib[PATH_MAX];
      snprintf(lib, sizeof lib, "libnccl-tuner-%s.so", name);
      t = try_open(lib, &loaded);
    }
  } else {
    t = try_open("libnccl-tuner.so", &loaded);
  }
  if (!loaded) {
    say("TUNER/Plugin: Using internal tuner (no plugin loaded)");
    return;
  }
  if (g_era != NULL) { /* that NCCL's symbol order, newest first */
    for (const int* v = g_era->order; *v; v++) {
      char sym[32];
      snprintf(sym, sizeof sym, "ncclTunerPlugin_v%d", *v);
      const void* p = cfg.hide && strcmp(cfg.hide, sym) == 0 ? NULL : dlsym(g_lib, sym);
      if (p == NULL) {
        say("TUNER/Plugin: Failed to find %s symbol.", sym);
        continue;
      }
      if (*v == 2) {
        report(NULL, 0, NULL, 0, 0,
               "the plugin exports %s; this harness does not emulate v%d. Running with "
               "the internal tuner.",
               sym, *v);
        return;
      }
      const ncclTuner_v3_t* h = p; /* name and init lead every version's struct */
      const void* fns[4] = {NULL, NULL, NULL, NULL};
      /* The entry points every version's struct must have: init, getCollInfo, and its last call. */
#define ENTRY_POINTS(T, LAST) \
  do { \
    const T* x = p; \
    fns[0] = (const void*)x->init; \
    fns[1] = (const void*)x->getCollInfo; \
    fns[2] = (const void*)x->LAST; \
  } while (0)
      if (*v == 3) ENTRY_POINTS(ncclTuner_v3_t, destroy);
      if (*v == 4) ENTRY_POINTS(ncclTuner_v4_t, destroy);
      if (*v == 5) ENTRY_POINTS(ncclTuner_v5_t, finalize);
      if (*v == 6) ENTRY_POINTS(ncclTuner_v6_t, finalize);
      if (*v == 7) ENTRY_POINTS(ncclTuner_v7_t, finalize);
#undef ENTRY_POINTS
      if (!fns[0] || !fns[1] || !fns[2]) {
        report(NULL, 0, NULL, 0, 0,
               "%s has a NULL entry point; NCCL would crash calling it. Running with the "
               "internal tuner.",
               sym);
        return;
      }
      g_tuner = h;
      g_tunerVersion = *v;
      /* NCCL 2.32.6's v6 adapter leaves its ncclTuner_t's name NULL (tuner_v6.cc at 2449986) */
      g_coreName = g_era->core >= 7 && *v == 6 ? NULL : h->name;
      say("TUNER/Plugin: Using %s (v%d)", h->name ? h->name : "(null)", *v);
      return;
    }
    say("TUNER/Plugin: Failed to find any tuner symbol, using internal tuner instead.");
    dlclose(g_lib);
    g_lib = NULL;
    return;
  }
  if (!t) {
    say("TUNER/Plugin: Failed to find %s symbol, using internal tuner instead.", NCCL_TUNER_PLUGIN_SYMBOL);
    dlclose(g_lib);
    g_lib = NULL;
    return;
  }
  if (!t->init || !t->getCollInfo || !t->destroy) {
    report(NULL, 0, NULL, 0, 0,
           "%s has a NULL entry point (init %s, getCollInfo %s, destroy %s); "
           "NCCL would crash calling it. Running with the internal tuner.",
           NCCL_TUNER_PLUGIN_SYMBOL, t->init ? "set" : "NULL", t->getCollInfo ? "set" : "NULL",
           t->destroy ? "set" : "NULL");
    return;
  }
  g_tuner = t;
  g_tunerVersion = 3;
  say("TUNER/Plugin: Using %s (v3)", t->name ? t->name : "(null)");
}

/* ---- the core's side of v5+: commId, NVLink domains, constants --------------------------- */

/* NCCL's commHash stand-in: the same for every thread's copy of a trace communicator. */
static uint64_t comm_hash(const trace_t* t, int slot) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (const char* p = t->path; *p; p++) h = (h ^ (unsigned char)*p) * 0x100000001b3ull;
  h ^= (uint64_t)t->commIds[slot] * 0x9e3779b97f4a7c15ull;
  return h ? h : 1;
}

/* The baseLatencies NCCL 2.30.7 starts from (src/graph/tuning.cc; microseconds, [algorithm][protocol]);
 * the harness leaves every other constant 0. The same for NCCL's 5-row struct of 2.32.6. */
#define CONSTANTS_DEFAULTS(k) \
  do { \
    memset((k), 0, sizeof *(k)); \
    static const double tree[3] = {6.8, 14.0, 8.4}, ring[3] = {6.6, 14.0, 8.4}, pat[3] = {8.0, 8.0, 8.0}; \
    for (int p = 0; p < 3; p++) { \
      (k)->baseLatencies[NCCL_ALGO_TREE][p] = tree[p]; \
      (k)->baseLatencies[NCCL_ALGO_RING][p] = ring[p]; \
      (k)->baseLatencies[NCCL_ALGO_PAT][p] = pat[p]; \
    } \
  } while (0)

/* NCCL 2.32.6's adapters for a v5/v6 plugin (ncclTunerConstants_v7_to_v5 / _v5_to_v7 in
 * tuner_v7.h at 2449986): each array's leading sizeof(v5 array) bytes, i.e. rows VOLTA..BLACKWELL. */
#define CONSTANTS_COPY(dst, src, sizeOf) \
  do { \
    memcpy((dst)->baseLatencies, (src)->baseLatencies, sizeOf(baseLatencies)); \
    memcpy((dst)->hwLatencies, (src)->hwLatencies, sizeOf(hwLatencies)); \
    memcpy((dst)->llMaxBws, (src)->llMaxBws, sizeOf(llMaxBws)); \
    memcpy((dst)->perChMaxRingLL128Bws, (src)->perChMaxRingLL128Bws, sizeOf(perChMaxRingLL128Bws)); \
    memcpy((dst)->perChMaxTreeLL128Bws, (src)->perChMaxTreeLL128Bws, sizeOf(perChMaxTreeLL128Bws)); \
    memcpy((dst)->perChMaxTreeBws, (src)->perChMaxTreeBws, sizeOf(perChMaxTreeBws)); \
    memcpy((dst)->perChMaxNVLSTreeBws, (src)->perChMaxNVLSTreeBws, sizeOf(perChMaxNVLSTreeBws)); \
  } while (0)
#define V5_SIZEOF(f) sizeof(((ncclTunerConstants_v5_t*)0)->f)

/* Prints every constant the plugin changed: "harness: constant NAME BEFORE -> AFTER". The struct
 * is doubles only: 7x3, 3x7x3, then five nCaps x 3 (4 rows in v5/v6, 5 in v7). */
static void constants_print(const double* b, const double* a, size_t n, int nCaps) {
  static const char* const links[] = {"NVLINK", "PCI", "NET"};
  static const char* const caps[] = {"VOLTA", "AMPERE", "HOPPER", "BLACKWELL", "RUBIN"};
  static const char* const scales[] = {"1NODE", "2NODES", "4NODES"};
  static const char* const bws[] = {"llMaxBws", "perChMaxRingLL128Bws", "perChMaxTreeLL128Bws", "perChMaxTreeBws",
                                    "perChMaxNVLSTreeBws"};
  const size_t per = (size_t)nCaps * 3;
  for (size_t i = 0; i < n; i++) {
    if (memcmp(&a[i], &b[i], sizeof(double)) == 0) continue;
    char name[96];
    if (i < 21) snprintf(name, sizeof name, "baseLatencies.%s.%s", ncclAlgoNames[i / 3], ncclProtoNames[i % 3]);
    else if (i < 84)
      snprintf(name, sizeof name, "hwLatencies.%s.%s.%s", links[(i - 21) / 21], ncclAlgoNames[(i - 21) % 21 / 3],
               ncclProtoNames[(i - 21) % 3]);
    else snprintf(name, sizeof name, "%s.%s.%s", bws[(i - 84) / per], caps[(i - 84) % per / 3], scales[(i - 84) % 3]);
    printf("harness: constant %s %g -> %g\n", name, b[i], a[i]);
  }
}

/* ---- replay ----------------------------------------------------------------------------- */

typedef struct {
  bool live, tuned;
  void* ctx;
} comm_t;

typedef struct {
  int index;
  pthread_t tid;
  unsigned long long calls, changed, pluginCalls;
  double ns;
  comm_t* comms; /* sized for the trace with the most communicators */
  float buf[MAX_TABLE + GUARD_FLOATS];
} worker_t;

static const uint32_t kGuardBits = 0x7fc0dea1u; /* a quiet NaN nobody writes by accident */

/* init of a v5+ plugin, with NCCL's constants as that era's core has them. The structs live on
 * the heap (NCCL keeps them in its communicator), not on the replay thread's stack, which
 * --stack-kib keeps small. */
static ncclResult_t init_v5plus(const worker_t* w, uint64_t id, const event_t* e, ncclNvlDomainInfo_v5_t* nvl,
                                void** ctx) {
  const ncclTuner_v5_t* v5 = (const void*)g_tuner;
  const ncclTuner_v6_t* v6 = (const void*)g_tuner;
  const ncclTuner_v7_t* v7 = (const void*)g_tuner;
  bool print = cfg.printConstants && w->index == 0 && !cfg.quiet;
  ncclResult_t r;
  if (g_era->core >= 7) { /* NCCL 2.32.6: its own constants have five compute-capability rows */
    ncclTunerConstants_v7_t* k = malloc(2 * sizeof *k);
    ncclTunerConstants_v5_t* k5 = malloc(sizeof *k5);
    if (!k || !k5) {
      perror("harness: malloc");
      exit(TH_EXIT_USAGE);
    }
    CONSTANTS_DEFAULTS(k);
    k[1] = k[0];
    if (g_tunerVersion == 7) {
      r = v7->init(ctx, id, e->nRanks, e->nNodes, harness_logger, nvl, k);
    } else { /* the v5/v6 adapter: a 4-row copy in, the 4 rows back */
      CONSTANTS_COPY(k5, k, V5_SIZEOF);
      r = g_tunerVersion == 5 ? v5->init(ctx, id, e->nRanks, e->nNodes, harness_logger, nvl, k5) :
                                v6->init(ctx, id, e->nRanks, e->nNodes, harness_logger, nvl, k5);
      if (r == ncclSuccess) CONSTANTS_COPY(k, k5, V5_SIZEOF);
    }
    if (print)
      constants_print((const double*)&k[1], (const double*)&k[0], sizeof *k / sizeof(double), NCCL_NUM_COMPCAPS_V7);
    free(k);
    free(k5);
  } else {
    ncclTunerConstants_v5_t* k = malloc(2 * sizeof *k);
    if (!k) {
      perror("harness: malloc");
      exit(TH_EXIT_USAGE);
    }
    CONSTANTS_DEFAULTS(k);
    k[1] = k[0];
    r = g_tunerVersion == 5 ? v5->init(ctx, id, e->nRanks, e->nNodes, harness_logger, nvl, k) :
                              v6->init(ctx, id, e->nRanks, e->nNodes, harness_logger, nvl, k);
    if (print)
      constants_print((const double*)&k[1], (const double*)&k[0], sizeof *k / sizeof(double), NCCL_NUM_COMPCAPS_V5);
    free(k);
  }
  return r;
}

static bool comm_init(worker_t* w, const trace_t* t, const event_t* e, comm_t* c) {
  c->live = true;
  c->tuned = false;
  c->ctx = NULL;
  if (!g_tuner) return true;
  ncclResult_t r;
  if (g_tunerVersion <= 4) { /* v3 and v4: NCCL's adapter passes no commId, domains or constants */
    const ncclTuner_v4_t* v4 = (const void*)g_tuner;
    r = g_tunerVersion == 3 ? g_tuner->init(e->nRanks, e->nNodes, harness_logger, &c->ctx) :
                              v4->init(e->nRanks, e->nNodes, harness_logger, &c->ctx);
  } else {
    ncclNvlDomainInfo_v5_t nvl = {(int)e->nNodes, (int)(e->nRanks / e->nNodes),
                                  (int)((e->nRanks + e->nNodes - 1) / e->nNodes)};
    if (cfg.nvl[0] > 0) nvl = (ncclNvlDomainInfo_v5_t){cfg.nvl[0], cfg.nvl[1], cfg.nvl[2]};
    r = init_v5plus(w, comm_hash(t, e->slot), e, &nvl, &c->ctx);
  }
  if (r != ncclSuccess) {
    report(t, e->line, NULL, e->slot, w->index,
           "init(nRanks %zu, nNodes %zu) returned %d (%s); NCCL would fail the "
           "communicator's creation. Continuing it without the tuner.",
           e->nRanks, e->nNodes, (int)r, result_name(r));
    return false;
  }
  c->tuned = true;
  return true;
}

static void comm_destroy(worker_t* w, const trace_t* t, int line, int slot, comm_t* c) {
  if (c->tuned && !cfg.noDestroy) {
    ncclResult_t r;
    switch (g_tunerVersion) { /* destroy (v3, v4) and finalize (v5 .. v7) sit in the same place */
      case 4: r = ((const ncclTuner_v4_t*)(const void*)g_tuner)->destroy(c->ctx); break;
      case 5: r = ((const ncclTuner_v5_t*)(const void*)g_tuner)->finalize(c->ctx); break;
      case 6: r = ((const ncclTuner_v6_t*)(const void*)g_tuner)->finalize(c->ctx); break;
      case 7: r = ((const ncclTuner_v7_t*)(const void*)g_tuner)->finalize(c->ctx); break;
      default: r = g_tuner->destroy(c->ctx); break;
    }
    if (r != ncclSuccess) report(t, line, NULL, slot, w->index, "destroy returned %d (%s)", (int)r, result_name(r));
  }
  c->live = c->tuned = false;
  c->ctx = NULL;
}

/* One get row: call the plugin as NCCL's enqueue.cc does, check what it did, select, print. */
static void do_get(worker_t* w, const trace_t* t, const event_t* e, comm_t* c) {
  const int nA = e->numAlgo, nP = e->numProto, n = nA * nP;
  float* buf = w->buf;
  memcpy(buf, e->costs, (size_t)n * sizeof(float));
  for (int i = 0; i < GUARD_FLOATS; i++) memcpy(&buf[n + i], &kGuardBits, sizeof kGuardBits);
  int nChannels = 0;

  if (c->tuned) {
    double t0 = now_ns();
    ncclResult_t r;
    if (g_tunerVersion == 3) /* NCCL's v3 adapter drops regBuff */
      r = g_tuner->getCollInfo(c->ctx, (ncclFunc_t)e->coll, e->nBytes, e->numPipeOps, (float**)buf, nA, nP, &nChannels);
    else /* v4, v5 and v6 share getCollInfo's signature and place */
      r = ((const ncclTuner_v4_t*)(const void*)g_tuner)
            ->getCollInfo(c->ctx, (ncclFunc_t)e->coll, e->nBytes, e->numPipeOps, (float**)buf, nA, nP, cfg.regBuff,
                          &nChannels);
    double t1 = now_ns();
    w->ns += t1 - t0;
    w->pluginCalls++;
    if (r != ncclSuccess)
      report(t, e->line, e, e->slot, w->index, "getCollInfo returned %d (%s); NCCL would fail the collective", (int)r,
             result_name(r));
    for (int i = 0; i < n; i++) {
      float before = e->costs[i], after = buf[i];
      const char *an = ncclAlgoNames[i / nP], *pn = ncclProtoNames[i % nP];
      if (before == NCCL_ALGO_PROTO_IGNORE && after != NCCL_ALGO_PROTO_IGNORE)
        report(t, e->line, e, e->slot, w->index,
               "enabled unavailable candidate %s/%s (-1 -> %g); NCCL has no "
               "resources for it",
               an, pn, after);
      else if (isnan(after)) report(t, e->line, e, e->slot, w->index, "wrote NaN into %s/%s (was %g)", an, pn, before);
      else if (after < 0 && after != NCCL_ALGO_PROTO_IGNORE && after != before) /* not one the trace held */
        report(t, e->line, e, e->slot, w->index, "wrote negative cost %g into %s/%s (only -1 may be written)", after,
               an, pn);
    }
    for (int i = 0; i < GUARD_FLOATS; i++)
      if (memcmp(&buf[n + i], &kGuardBits, sizeof kGuardBits) != 0) {
        report(t, e->line, e, e->slot, w->index, "wrote past the end of the %dx%d cost table (float index %d)", nA, nP,
               n + i);
        break;
      }
    if (nChannels < 0 || nChannels > NCCL_TUNER_JAVA_MAX_CHANNELS)
      report(t, e->line, e, e->slot, w->index, "set nChannels = %d (allowed: 0 = NCCL decides, or 1..%d)", nChannels,
             NCCL_TUNER_JAVA_MAX_CHANNELS);
  }

  int orig = th_nccl_pick(e->costs, nA, nP);
  int pick = c->tuned ? th_nccl_pick(buf, nA, nP) : orig;
  if (pick < 0 && orig >= 0)
    report(t, e->line, e, e->slot, w->index,
           "left no selectable candidate (every entry -1 or >= 3.6e9 us); NCCL would "
           "fall back to its backup algorithm or fail the collective");
  bool changed = pick != orig;
  w->calls++;
  if (changed) w->changed++;

  /* NCCL 2.30+ asks a v6+ plugin for the chunk size of what it chose (src/enqueue.cc). The harness
   * has no chunk model: it offers --chunk-size and the plugin's nChannels (1 when NCCL decides). */
  size_t chunk = (size_t)cfg.chunkSize;
  bool chunkChanged = false;
  if (c->tuned && pick >= 0 && g_tunerVersion >= 6 && g_era != NULL && g_era->core >= 6) {
    ncclResult_t (*getChunkSize)(void*, ncclFunc_t, size_t, int, int, int, size_t*) =
      g_tunerVersion == 7 ? ((const ncclTuner_v7_t*)(const void*)g_tuner)->getChunkSize :
                            ((const ncclTuner_v6_t*)(const void*)g_tuner)->getChunkSize;
    if (getChunkSize != NULL) {
      ncclResult_t r = getChunkSize(c->ctx, (ncclFunc_t)e->coll, e->nBytes, pick / nP, pick % nP,
                                    nChannels > 0 ? nChannels : 1, &chunk);
      if (r != ncclSuccess)
        report(t, e->line, e, e->slot, w->index, "getChunkSize returned %d (%s); NCCL would fail the collective",
               (int)r, result_name(r));
      chunkChanged = chunk != (size_t)cfg.chunkSize;
    }
  }

  if (cfg.quiet || w->index != 0) return;
  char ch[48];
  if (nChannels > 0) snprintf(ch, sizeof ch, "{0..%d}", nChannels - 1);
  else snprintf(ch, sizeof ch, "{NCCL decides}"); /* the tuner left nChannels to NCCL: its count is not known here */
  char chunkStr[48] = "";
  if (chunkChanged) snprintf(chunkStr, sizeof chunkStr, " chunkSize=%zu", chunk);
  printf("%s: %zu Bytes -> Algo %s proto %s channel{Lo..Hi}=%s%s%s\n", func_name(e->coll), e->nBytes,
         pick < 0 ? "NONE" : ncclAlgoNames[pick / nP], pick < 0 ? "NONE" : ncclProtoNames[pick % nP], ch, chunkStr,
         changed ? " [changed]" : "");
}

static void replay_once(worker_t* w, const trace_t* t) {
  for (int i = 0; i < t->nComms; i++) w->comms[i] = (comm_t){0};
  for (size_t i = 0; i < t->n; i++) {
    const event_t* e = &t->ev[i];
    comm_t* c = &w->comms[e->slot];
    switch (e->kind) {
      case EV_INIT:
        if (c->live) comm_destroy(w, t, e->line, e->slot, c); /* re-init of a live id: a new communicator */
        comm_init(w, t, e, c);
        break;
      case EV_GET:
        if (!c->live) comm_init(w, t, e, c); /* init never seen: init on first use */
        do_get(w, t, e, c);
        break;
      case EV_DESTROY:
        if (c->live) comm_destroy(w, t, e->line, e->slot, c); /* destroy of an unknown comm: nothing to do */
        break;
    }
  }
  for (int i = 0; i < t->nComms; i++) /* a trace without destroy rows */
    if (w->comms[i].live) comm_destroy(w, t, 0, i, &w->comms[i]);
}

static void* worker_main(void* arg) {
  worker_t* w = arg;
  pthread_barrier_wait(&g_start);
  for (long r = 0; r < cfg.repeat; r++)
    for (int i = 0; i < cfg.nTraces; i++) replay_once(w, &cfg.traces[i]);
  return NULL;
}

/* ---- main ------------------------------------------------------------------------------- */

static void on_sigint(int sig) {
  (void)sig;
  g_sigintRan = 1;
}

static void usage(FILE* out) {
  fputs("usage: harness [options] [--trace] FILE...\n"
        "Replays NCCL getCollInfo traces through a tuner plugin (v3..v7) loaded like NCCL does.\n"
        "  --nccl-era E      load and call the plugin as NCCL E does: 2.22 (v3), 2.24 (v4 first),\n"
        "                    2.28 (v5), 2.30 (v6), 2.32.6 (v7 first, then v6); default: v3 only\n"
        "  --nccl-version C  under --nccl-era, the code ncclGetVersion reports (22707 = 2.27.7;\n"
        "                    default: the era's release, 2.28 reports 22809)\n"
        "  --regbuff 0|1     regBuff a v4+ core passes to getCollInfo (default 0)\n"
        "  --hide-symbol S   under --nccl-era, look S (e.g. ncclTunerPlugin_v7) up as if the plugin\n"
        "                    did not export it: a plugin built before that version\n"
        "  --nvl-domain N,MIN,MAX  ncclNvlDomainInfo a v5+ core passes (default: one domain per node)\n"
        "  --chunk-size B    NCCL's own chunk size offered to a v6+ getChunkSize (default 131072);\n"
        "                    a changed one shows as chunkSize=B on the selection line\n"
        "  --print-constants print each model constant a v5+ plugin changed at init\n"
        "  --trace FILE      trace CSV to replay (repeatable; bare arguments are traces too)\n"
        "  --plugin X        plugin to load (overrides NCCL_TUNER_PLUGIN): dlopen(X), then\n"
        "                    libnccl-tuner-X.so; neither set: libnccl-tuner.so\n"
        "  --quiet           print only ERROR lines and the summary\n"
        "  --repeat N        replay every trace N times (default 1)\n"
        "  --threads T       T threads, each replaying on its own communicators (default 1);\n"
        "                    selection lines are printed for thread 0 only\n"
        "  --stack-kib K     stack size of the replay threads in KiB (default 1024)\n"
        "  --no-destroy      never call the plugin's destroy\n"
        "  --sigint-handler  install a SIGINT handler before loading the plugin, raise SIGINT at the\n"
        "                    end and check that it ran\n"
        "env: NCCL_TUNER_PLUGIN, NCCL_DEBUG (INFO/TRACE show INFO lines; WARN always shown),\n"
        "     NCCL_DEBUG_FILE (logger output file, %h and %p expanded)\n"
        "exit: 0 ok, 2 usage or IO error, 3 plugin misbehaviour\n",
        out);
}

static long parse_opt_num(const char* opt, const char* s, long lo, long hi) {
  long long v;
  if (!th_parse_ll(s, lo, hi, &v)) die_usage("%s wants a number in %ld..%ld, not '%s'", opt, lo, hi, s ? s : "");
  return (long)v;
}

static void add_trace(const char* path) {
  trace_t* ts = realloc(cfg.traces, (size_t)(cfg.nTraces + 1) * sizeof *ts);
  if (!ts) {
    perror("harness: realloc");
    exit(TH_EXIT_USAGE);
  }
  cfg.traces = ts;
  cfg.traces[cfg.nTraces++] = (trace_t){.path = path};
}

int main(int argc, char** argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  for (int i = 1; i < argc; i++) {
    const char* a = argv[i];
    const char* next = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(a, "--trace") == 0) {
      if (!next) die_usage("--trace needs a file");
      add_trace(next);
      i++;
    } else if (strcmp(a, "--plugin") == 0) {
      if (!next) die_usage("--plugin needs a name or path");
      cfg.plugin = next;
      i++;
    } else if (strcmp(a, "--quiet") == 0) cfg.quiet = true;
    else if (strcmp(a, "--repeat") == 0) {
      cfg.repeat = parse_opt_num(a, next, 1, 100000000);
      i++;
    } else if (strcmp(a, "--threads") == 0) {
      cfg.threads = parse_opt_num(a, next, 1, 1024);
      i++;
    } else if (strcmp(a, "--stack-kib") == 0) {
      cfg.stackKib = parse_opt_num(a, next, (PTHREAD_STACK_MIN + 1023) / 1024, 1L << 20);
      i++;
    } else if (strcmp(a, "--no-destroy") == 0) cfg.noDestroy = true;
    else if (strcmp(a, "--nccl-era") == 0) {
      if (!next) die_usage("--nccl-era needs 2.22, 2.24, 2.28, 2.30 or 2.32.6");
      for (size_t k = 0; k < sizeof kEras / sizeof kEras[0]; k++)
        if (strcmp(next, kEras[k].name) == 0) g_era = &kEras[k];
      if (!g_era) die_usage("unknown --nccl-era '%s' (2.22, 2.24, 2.28, 2.30 or 2.32.6)", next);
      i++;
    } else if (strcmp(a, "--nccl-version") == 0) {
      g_version = (int)parse_opt_num(a, next, 20900, 999999); /* major*10000 + minor*100 + patch since 2.9 */
      i++;
    } else if (strcmp(a, "--regbuff") == 0) {
      cfg.regBuff = (int)parse_opt_num(a, next, 0, 1);
      i++;
    } else if (strcmp(a, "--chunk-size") == 0) {
      cfg.chunkSize = parse_opt_num(a, next, 1, 1L << 30);
      i++;
    } else if (strcmp(a, "--print-constants") == 0) cfg.printConstants = true;
    else if (strcmp(a, "--hide-symbol") == 0) {
      if (!next) die_usage("--hide-symbol needs a symbol");
      cfg.hide = next;
      i++;
    } else if (strcmp(a, "--nvl-domain") == 0) {
      if (!next || sscanf(next, "%d,%d,%d", &cfg.nvl[0], &cfg.nvl[1], &cfg.nvl[2]) != 3 || cfg.nvl[0] < 1 ||
          cfg.nvl[1] < 1 || cfg.nvl[2] < cfg.nvl[1])
        die_usage("--nvl-domain wants N,MIN,MAX (N >= 1, 1 <= MIN <= MAX)");
      i++;
    } else if (strcmp(a, "--sigint-handler") == 0) cfg.sigintHandler = true;
    else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      usage(stdout);
      return TH_EXIT_OK;
    } else if (a[0] == '-' && a[1] != '\0') die_usage("unknown option %s", a);
    else add_trace(a);
  }
  if (cfg.nTraces == 0) die_usage("no trace given");
  if (g_version > 0 && g_era == NULL) die_usage("--nccl-version needs --nccl-era (NCCL reports its version from 2.9)");

  int maxComms = 1;
  for (int i = 0; i < cfg.nTraces; i++) {
    read_trace(&cfg.traces[i]);
    if (cfg.traces[i].nComms > maxComms) maxComms = cfg.traces[i].nComms;
  }

  if (cfg.sigintHandler) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGINT, &sa, NULL) != 0) {
      perror("harness: sigaction");
      return TH_EXIT_USAGE;
    }
  }
  logger_setup();
  load_plugin();

  worker_t* ws = calloc((size_t)cfg.threads, sizeof *ws);
  if (!ws) {
    perror("harness: calloc");
    return TH_EXIT_USAGE;
  }
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  int rc = pthread_attr_setstacksize(&attr, (size_t)cfg.stackKib * 1024);
  if (rc) {
    fprintf(stderr, "harness: stack size %ld KiB: %s\n", cfg.stackKib, strerror(rc));
    return TH_EXIT_USAGE;
  }
  pthread_barrier_init(&g_start, NULL, (unsigned)cfg.threads);
  long started = 0;
  for (long i = 0; i < cfg.threads; i++) {
    ws[i].index = (int)i;
    ws[i].comms = calloc((size_t)maxComms, sizeof(comm_t));
    if (!ws[i].comms) {
      perror("harness: calloc");
      return TH_EXIT_USAGE;
    }
    rc = pthread_create(&ws[i].tid, &attr, worker_main, &ws[i]);
    if (rc) {
      fprintf(stderr, "harness: cannot start replay thread %ld: %s\n", i, strerror(rc));
      break;
    }
    started++;
  }
  if (started < cfg.threads) return TH_EXIT_USAGE; /* the started ones wait on the barrier forever */
  for (long i = 0; i < cfg.threads; i++) pthread_join(ws[i].tid, NULL);
  pthread_attr_destroy(&attr);
  pthread_barrier_destroy(&g_start);

  unsigned long long calls = 0, changed = 0, pluginCalls = 0;
  double ns = 0;
  for (long i = 0; i < cfg.threads; i++) {
    calls += ws[i].calls;
    changed += ws[i].changed;
    pluginCalls += ws[i].pluginCalls;
    ns += ws[i].ns;
    free(ws[i].comms);
  }
  free(ws);
  const char* name = g_tuner ? (g_tuner->name ? g_tuner->name : "(null)") : "none";
  char nameCopy[128]; /* the name lives in the plugin library, which is closed below */
  snprintf(nameCopy, sizeof nameCopy, "%s", name);
  /* NCCL 2.32.6 src/plugin/tuner.cc ncclTunerPluginUnload: INFO "TUNER/Plugin: Closing tuner: '%s'"
   * with its ncclTuner_t's name (glibc prints a NULL one as "(null)") */
  if (g_tuner && g_era != NULL && g_era->core >= 7)
    say("TUNER/Plugin: Closing tuner: '%s'", g_coreName ? g_coreName : "(null)");
  if (g_lib) dlclose(g_lib); /* NCCL closes the tuner library when its last communicator goes */
  g_tuner = NULL;

  if (cfg.sigintHandler) {
    struct sigaction cur;
    sigaction(SIGINT, NULL, &cur);
    if (cur.sa_handler != on_sigint) {
      report(NULL, 0, NULL, 0, 0,
             "the harness's SIGINT handler was replaced while the plugin was loaded; "
             "not raising SIGINT");
    } else {
      raise(SIGINT);
      if (g_sigintRan) printf("harness: own SIGINT handler ran\n");
      else report(NULL, 0, NULL, 0, 0, "raise(SIGINT) did not reach the harness's own handler");
    }
  }

  unsigned long errors = atomic_load(&g_errors);
  if (errors > MAX_ERROR_LINES) printf("harness: ERROR %lu more errors not shown\n", errors - MAX_ERROR_LINES);
  if (errors) printf("harness: %lu plugin misbehaviour error(s); exit 3\n", errors);
  printf("harness: calls=%llu changed=%llu warn=%lu us_per_call=%.3f plugin=%s\n", calls, changed,
         atomic_load(&g_warns), pluginCalls ? ns / (double)pluginCalls / 1000.0 : 0.0, nameCopy);
  if (g_logOut != stdout) fclose(g_logOut);
  for (int i = 0; i < cfg.nTraces; i++) {
    free(cfg.traces[i].ev);
    free(cfg.traces[i].commIds);
  }
  free(cfg.traces);
  return errors ? TH_EXIT_MISBEHAVIOUR : TH_EXIT_OK;
}
