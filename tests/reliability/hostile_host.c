/*
 * hostile_host.c -- a hostile host for NCCL v3 tuner plugins, for the reliability tests (issue 6).
 *
 * The host harness (tests/harness/harness.c) replays traces exactly as NCCL calls a tuner. This
 * host calls the plugin in ways NCCL does not, or not usually, and reports what came back:
 *
 *   hostile_host --plugin P --script FILE
 *       Runs a script of calls, one per line (see "script" below), printing one result line per
 *       call. The Java tests write the scripts and compute the expected results independently.
 *   hostile_host --plugin P --concurrent [--threads T] [--comms C] [--calls N] [--seed S]
 *         [--bytes random|seq] [--stack-kib K] [--no-single]
 *       C communicators shared by T threads make N seeded getCollInfo calls in all (call k on
 *       thread k % T, on communicator mix(k) % C); then, unless --no-single, one thread makes the
 *       same N calls again. Prints the digest of every call's result (cost table and nChannels
 *       after the call, in call order) for both runs and the number of calls whose results
 *       differ. Two processes with the same seed must print the same digest (every rank decides
 *       the same). --bytes seq: call k is AllReduce of k+1 bytes, numPipeOps 1 + k % 4, costs
 *       1 + (i + k) % 21 (every entry offered), so a decision-log record names its call.
 *
 * Every getCollInfo goes through a table with guard floats before and after it; the host
 * checks that the plugin returned ncclSuccess, wrote no -1 entry, wrote nothing but 0.0, wrote
 * no guard and set nChannels to 0 or 1..64. Misbehaviour: "hostile_host: ERROR" lines and exit 3.
 *
 * Script lines (comma-separated; '#' starts a comment; S is a communicator slot 0..4095):
 *   init,S,nRanks,nNodes         init into slot S (the context is kept after destroy, so a
 *                                later get or destroy on S uses the stale context)
 *   init-null,nRanks,nNodes      init with context == NULL
 *   get,S,coll,nBytes,numPipeOps,numAlgo,numProto,cost...   (nBytes: decimal or SIZE_MAX)
 *   get-null-ctx,coll,nBytes,numPipeOps,numAlgo,numProto,cost...   context NULL
 *   get-null-table,S,...         as get, collCostTable NULL
 *   get-null-nch,S,...           as get, nChannels NULL
 *   loop,N,S,...                 as get, N times in a row (prints the last result)
 *   sleep,MS                     sleeps MS milliseconds
 *   thread-get,K,S,...           as get, on a new thread with a K KiB stack
 *   destroy,S                    destroy(context of S)
 *   destroy-null                 destroy(NULL)
 *   sigsegv-handler              the host now installs its own SIGSEGV handler, which prints
 *                                "hostile_host: host SIGSEGV handler ran" and exits 86
 *   fork                         fork; the child runs the rest of the script with a 20 s
 *                                alarm and exits (exit(), so atexit handlers run); the parent
 *                                waits, prints how the child
 *                                ended, then runs the rest of the script itself
 *   repeat,N,S0,nRanks,nNodes,coll,nBytes   N times: init slot S0, one get (7x3, every
 *                                entry offered), destroy; prints one summary line
 * Output: "hostile_host: get line=L ret=R nch=C table=v,v,... guard=ok" per get.
 * Exit: 0 ok, 2 usage or IO error, 3 plugin misbehaviour.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
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
#include <sys/wait.h>
#include <unistd.h>

#include "nccl_tuner_abi.h"
#include "test_host.h"

#define MAX_ENTRIES 128 /* largest table a script may pass (the engine edits at most 64) */
#define GUARD 16        /* guard floats on each side of the table */
#define MAX_SLOTS 4096
#define MAX_FIELDS (8 + MAX_ENTRIES)

static const ncclTuner_v3_t* tuner;
static atomic_ulong warns, errors;
static int logLevel = NCCL_LOG_WARN;
static const uint32_t kGuardBits = 0x7fc0dea1u;
static void* ctxs[MAX_SLOTS];

/* ---- NCCL's logger, in the harness's format (WARN lines always shown) ------------------- */

static void logger(ncclDebugLogLevel level, unsigned long flags, const char* file, int line, const char* fmt, ...) {
  (void)flags;
  (void)file;
  (void)line;
  if (level == NCCL_LOG_WARN) atomic_fetch_add(&warns, 1);
  if (fmt == NULL || (level != NCCL_LOG_WARN && logLevel < NCCL_LOG_INFO)) return;
  char msg[2048];
  va_list ap;
  va_start(ap, fmt);
  th_format_log(msg, sizeof msg, fmt, ap);
  va_end(ap);
  printf("hostile_host:%d:%ld [0] NCCL %s %s\n", (int)getpid(), (long)syscall(SYS_gettid),
         level == NCCL_LOG_WARN ? "WARN" : "INFO", msg);
}

static void error(const char* fmt, ...) {
  atomic_fetch_add(&errors, 1);
  TH_VPRINT(stdout, "hostile_host: ERROR ", "\n", fmt);
}

TH_DIE_FUNCTION(usage_exit, "hostile_host: ", "\n", TH_EXIT_USAGE)

/* ---- one checked getCollInfo ------------------------------------------------------------ */

typedef struct {
  int coll;
  size_t nBytes;
  int numPipeOps, numAlgo, numProto;
  float costs[MAX_ENTRIES];
} call_t;

/* numAlgo * numProto when that is 1..MAX_ENTRIES (computed without overflow), else 0. */
static int entries(const call_t* c) {
  long long n = (long long)c->numAlgo * c->numProto;
  return c->numAlgo > 0 && c->numProto > 0 && n <= MAX_ENTRIES ? (int)n : 0;
}

typedef struct {
  int ret;
  int nChannels;
  float after[MAX_ENTRIES];
} result_t;

/* Calls getCollInfo(ctx, ...) on a guarded copy of the costs; checks what the plugin did.
 * tableMode: 0 normal, 1 NULL table, 2 NULL nChannels. */
static void checked_get(void* ctx, const call_t* c, int tableMode, result_t* out, const char* where) {
  float buf[GUARD + MAX_ENTRIES + 64 + GUARD]; /* 64: the engine's view of a table is 64 floats */
  int n = entries(c);
  for (size_t i = 0; i < sizeof buf / sizeof buf[0]; i++) memcpy(&buf[i], &kGuardBits, 4);
  float* table = buf + GUARD;
  memcpy(table, c->costs, (size_t)n * sizeof(float));
  int nChannels = 0;
  float** arg = (float**)table;
  if (tableMode == 1) arg = NULL;
  out->ret = tuner->getCollInfo(ctx, (ncclFunc_t)c->coll, c->nBytes, c->numPipeOps, arg, c->numAlgo, c->numProto,
                                tableMode == 2 ? NULL : &nChannels);
  out->nChannels = nChannels;
  memcpy(out->after, table, (size_t)n * sizeof(float));
  if (out->ret != ncclSuccess) error("%s: getCollInfo returned %d", where, out->ret);
  for (int i = 0; i < GUARD; i++)
    if (memcmp(&buf[i], &kGuardBits, 4) != 0) {
      error("%s: wrote before the table (float %d)", where, i - GUARD);
      break;
    }
  for (int i = GUARD + n; i < (int)(sizeof buf / sizeof buf[0]); i++)
    if (memcmp(&buf[i], &kGuardBits, 4) != 0) {
      error("%s: wrote past the %dx%d table (float %d)", where, c->numAlgo, c->numProto, i - GUARD);
      break;
    }
  for (int i = 0; i < n; i++) {
    float before = c->costs[i], after = table[i];
    if (memcmp(&before, &after, 4) == 0) continue;
    if (before == NCCL_ALGO_PROTO_IGNORE) error("%s: wrote %g over the -1 entry %d", where, after, i);
    else if (after != 0.0f) error("%s: wrote %g into entry %d (only 0.0 is written)", where, after, i);
  }
  if (nChannels < 0 || nChannels > NCCL_TUNER_JAVA_MAX_CHANNELS) error("%s: nChannels = %d", where, nChannels);
}

static void print_result(int line, const call_t* c, const result_t* r) {
  int n = entries(c);
  printf("hostile_host: get line=%d ret=%d nch=%d table=", line, r->ret, r->nChannels);
  for (int i = 0; i < n; i++) printf("%s%.9g", i ? "," : "", r->after[i]);
  printf(" guard=ok\n");
}

/* ---- script mode ------------------------------------------------------------------------ */

static long num(const char* s, long lo, long hi, int line) {
  char* end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno || *end || end == s || v < lo || v > hi) usage_exit("script line %d: bad number '%s'", line, s);
  return v;
}

static size_t size_arg(const char* s, int line) {
  if (strcmp(s, "SIZE_MAX") == 0) return SIZE_MAX;
  char* end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno || *end || end == s || s[0] == '-') usage_exit("script line %d: bad size '%s'", line, s);
  return (size_t)v;
}

/* Parses coll,nBytes,numPipeOps,numAlgo,numProto[,costs...] starting at f[0]. */
static void parse_call(char** f, int nf, bool withCosts, int line, call_t* c) {
  if (nf < 5) usage_exit("script line %d: a call needs coll,nBytes,numPipeOps,numAlgo,numProto", line);
  memset(c, 0, sizeof *c);
  c->coll = (int)num(f[0], INT_MIN, INT_MAX, line);
  c->nBytes = size_arg(f[1], line);
  c->numPipeOps = (int)num(f[2], INT_MIN, INT_MAX, line);
  c->numAlgo = (int)num(f[3], INT_MIN, INT_MAX, line);
  c->numProto = (int)num(f[4], INT_MIN, INT_MAX, line);
  if (!withCosts) return;
  int n = entries(c);
  if (nf - 5 != n) usage_exit("script line %d: %d costs for a %dx%d table", line, nf - 5, c->numAlgo, c->numProto);
  for (int i = 0; i < n; i++) {
    char* end;
    c->costs[i] = strtof(f[5 + i], &end);
    if (*end || end == f[5 + i]) usage_exit("script line %d: bad cost '%s'", line, f[5 + i]);
  }
}

static void* slot_ctx(const char* s, int line) {
  return ctxs[num(s, 0, MAX_SLOTS - 1, line)];
}

typedef struct {
  void* ctx;
  const call_t* c;
  result_t* r;
  char where[64];
} thread_get_t;

static void* thread_get_main(void* arg) {
  thread_get_t* t = arg;
  checked_get(t->ctx, t->c, 0, t->r, t->where);
  return NULL;
}

static void on_host_sigsegv(int sig) {
  (void)sig;
  static const char msg[] = "hostile_host: host SIGSEGV handler ran\n";
  ssize_t w = write(1, msg, sizeof msg - 1);
  (void)w;
  _exit(86);
}

static void run_script(const char* path) {
  FILE* in = fopen(path, "r");
  if (!in) usage_exit("cannot open script %s: %s", path, strerror(errno));
  char* buf = NULL;
  size_t cap = 0;
  int line = 0;
  bool child = false;
  while (getline(&buf, &cap, in) != -1) {
    line++;
    buf[strcspn(buf, "\r\n#")] = '\0';
    if (buf[0] == '\0') continue;
    char* f[MAX_FIELDS];
    int nf = 0;
    for (char *p = buf, *tok; (tok = strsep(&p, ",")) != NULL;) {
      if (nf == MAX_FIELDS) usage_exit("script line %d: too many fields", line);
      f[nf++] = tok;
    }
    const char* op = f[0];
    char where[64];
    snprintf(where, sizeof where, "%s:%d", path, line);
    call_t c;
    result_t r;
    if (strcmp(op, "init") == 0 && nf == 4) {
      long s = num(f[1], 0, MAX_SLOTS - 1, line);
      int rc = tuner->init(size_arg(f[2], line), size_arg(f[3], line), logger, &ctxs[s]);
      if (rc != ncclSuccess) error("%s: init returned %d", where, rc);
      printf("hostile_host: init line=%d ret=%d context=%s\n", line, rc, ctxs[s] ? "set" : "NULL");
    } else if (strcmp(op, "init-null") == 0 && nf == 3) {
      int rc = tuner->init(size_arg(f[1], line), size_arg(f[2], line), logger, NULL);
      if (rc != ncclSuccess) error("%s: init returned %d", where, rc);
      printf("hostile_host: init-null line=%d ret=%d\n", line, rc);
    } else if (strcmp(op, "get") == 0 || strcmp(op, "get-null-table") == 0 || strcmp(op, "get-null-nch") == 0) {
      parse_call(f + 2, nf - 2, true, line, &c);
      int mode = strcmp(op, "get") == 0 ? 0 : strcmp(op, "get-null-table") == 0 ? 1 : 2;
      checked_get(slot_ctx(f[1], line), &c, mode, &r, where);
      print_result(line, &c, &r);
    } else if (strcmp(op, "get-null-ctx") == 0) {
      parse_call(f + 1, nf - 1, true, line, &c);
      checked_get(NULL, &c, 0, &r, where);
      print_result(line, &c, &r);
    } else if (strcmp(op, "loop") == 0) {
      long n = num(f[1], 1, 1000000000, line);
      parse_call(f + 3, nf - 3, true, line, &c);
      void* ctx = slot_ctx(f[2], line);
      for (long i = 0; i < n; i++) checked_get(ctx, &c, 0, &r, where);
      print_result(line, &c, &r);
    } else if (strcmp(op, "sleep") == 0 && nf == 2) {
      usleep((useconds_t)num(f[1], 0, 60000, line) * 1000);
    } else if (strcmp(op, "thread-get") == 0) {
      long kib = num(f[1], 16, 1 << 20, line);
      parse_call(f + 3, nf - 3, true, line, &c);
      thread_get_t t = {.ctx = slot_ctx(f[2], line), .c = &c, .r = &r};
      snprintf(t.where, sizeof t.where, "%s", where);
      pthread_attr_t attr;
      pthread_attr_init(&attr);
      int rc = pthread_attr_setstacksize(&attr, (size_t)kib * 1024);
      if (rc) usage_exit("stack of %ld KiB: %s", kib, strerror(rc));
      pthread_t tid;
      if (pthread_create(&tid, &attr, thread_get_main, &t) != 0) usage_exit("pthread_create failed");
      pthread_join(tid, NULL);
      pthread_attr_destroy(&attr);
      print_result(line, &c, &r);
    } else if (strcmp(op, "destroy") == 0 && nf == 2) {
      int rc = tuner->destroy(slot_ctx(f[1], line));
      if (rc != ncclSuccess) error("%s: destroy returned %d", where, rc);
      printf("hostile_host: destroy line=%d ret=%d\n", line, rc);
    } else if (strcmp(op, "destroy-null") == 0) {
      int rc = tuner->destroy(NULL);
      if (rc != ncclSuccess) error("%s: destroy returned %d", where, rc);
      printf("hostile_host: destroy-null line=%d ret=%d\n", line, rc);
    } else if (strcmp(op, "sigsegv-handler") == 0) {
      struct sigaction sa;
      memset(&sa, 0, sizeof sa);
      sa.sa_handler = on_host_sigsegv;
      sigemptyset(&sa.sa_mask);
      if (sigaction(SIGSEGV, &sa, NULL) != 0) usage_exit("sigaction failed");
      printf("hostile_host: installed a SIGSEGV handler\n");
    } else if (strcmp(op, "fork") == 0) {
      fflush(stdout);
      pid_t pid = fork();
      if (pid < 0) usage_exit("fork failed");
      if (pid == 0) {
        child = true;
        alarm(20);
        printf("hostile_host: child running\n");
        continue;
      }
      int st = 0;
      waitpid(pid, &st, 0);
      printf("hostile_host: child ended %s %d\n", WIFEXITED(st) ? "exit" : "signal",
             WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
      printf("hostile_host: parent continues\n"); /* and runs the rest of the script itself */
    } else if (strcmp(op, "repeat") == 0 && nf == 7) {
      long n = num(f[1], 1, 10000000, line), s = num(f[2], 0, MAX_SLOTS - 1, line);
      size_t nRanks = size_arg(f[3], line), nNodes = size_arg(f[4], line);
      memset(&c, 0, sizeof c);
      c.coll = (int)num(f[5], 0, ncclNumFuncs - 1, line);
      c.nBytes = size_arg(f[6], line);
      c.numPipeOps = 1;
      c.numAlgo = NCCL_NUM_ALGORITHMS;
      c.numProto = NCCL_NUM_PROTOCOLS;
      for (int i = 0; i < c.numAlgo * c.numProto; i++) c.costs[i] = 100.0f + (float)i;
      long tuned = 0, changed = 0;

      for (long i = 0; i < n; i++) {
        ctxs[s] = NULL;
        if (tuner->init(nRanks, nNodes, logger, &ctxs[s]) != ncclSuccess) error("%s: init %ld failed", where, i);
        if (ctxs[s] != NULL) tuned++;
        checked_get(ctxs[s], &c, 0, &r, where);
        if (memcmp(r.after, c.costs, sizeof(float) * 21) != 0 || r.nChannels != 0) changed++;
        if (tuner->destroy(ctxs[s]) != ncclSuccess) error("%s: destroy %ld failed", where, i);
      }
      printf("hostile_host: repeat line=%d communicators=%ld with-context=%ld changed=%ld\n", line, n, tuned, changed);
    } else {
      usage_exit("script line %d: unknown or malformed row '%s' (%d fields)", line, op, nf);
    }
  }
  free(buf);
  fclose(in);
  if (child) { /* exit(), not _exit(): atexit handlers run, as in any child that ends normally */
    printf("hostile_host: child done warn=%lu errors=%lu\n", atomic_load(&warns), atomic_load(&errors));
    fflush(stdout);
    exit(atomic_load(&errors) ? TH_EXIT_MISBEHAVIOUR : TH_EXIT_OK);
  }
}

/* ---- concurrent mode -------------------------------------------------------------------- */

static struct {
  int threads, comms;
  long calls;
  uint64_t seed;
  bool seqBytes;
} cc = {.threads = 16, .comms = 64, .calls = 4000000, .seed = 1};

static uint64_t mix(uint64_t z) { /* splitmix64's finalizer */
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static const size_t kRanks[] = {2, 2, 4, 8, 16};
static const size_t kNodes[] = {1, 2, 2};

static int comm_of(long k) {
  return (int)(mix(cc.seed * 0x100000001b3ull + (uint64_t)k) % (uint64_t)cc.comms);
}

/* The k-th call of the workload. */
static void gen_call(long k, call_t* c) {
  memset(c, 0, sizeof *c);
  c->numAlgo = NCCL_NUM_ALGORITHMS;
  c->numProto = NCCL_NUM_PROTOCOLS;
  int n = c->numAlgo * c->numProto;
  if (cc.seqBytes) {
    c->coll = ncclFuncAllReduce;
    c->nBytes = (size_t)k + 1;
    c->numPipeOps = 1 + (int)(k % 4);
    for (int i = 0; i < n; i++) c->costs[i] = 1.0f + (float)((i + k) % 21);
    return;
  }
  uint64_t r = mix(cc.seed ^ ((uint64_t)k << 1));
  c->coll = (int)(r % 6); /* Broadcast .. AllReduce, and SendRecv (never has a rule) */
  r = mix(r);
  int e = (int)(r % 36);
  c->nBytes = ((size_t)1 << e) + (size_t)(mix(r) % ((size_t)1 << e));
  if ((r >> 40) % 97 == 0) c->nBytes = (r >> 50) % 2 ? 0 : SIZE_MAX;
  c->numPipeOps = 1 + (int)((r >> 8) % 4);
  uint64_t pattern = mix(r + 1);
  for (int i = 0; i < n; i++) {
    uint64_t v = mix(pattern + (uint64_t)i);
    c->costs[i] = v % 3 == 0 ? -1.0f : 1.0f + (float)(v % 100000) / 7.0f;
  }
  if ((pattern >> 20) % 50 == 0)
    for (int i = 0; i < n; i++) c->costs[i] = -1.0f; /* nothing offered */
}

static uint64_t result_hash(const call_t* c, const result_t* r) {
  uint64_t h = 1469598103934665603ull;
  int n = c->numAlgo * c->numProto;
  for (int i = 0; i < n; i++) {
    uint32_t b;
    memcpy(&b, &r->after[i], 4);
    h = (h ^ b) * 1099511628211ull;
  }
  return (h ^ (uint32_t)r->nChannels) * 1099511628211ull;
}

static uint64_t* results[2];
static atomic_long changedCalls; /* calls of the concurrent run after which the table or nChannels differ */

typedef struct {
  int index, nThreads, phase;
} worker_t;

static void* worker(void* arg) {
  worker_t* w = arg;
  call_t c;
  result_t r;
  for (long k = w->index; k < cc.calls; k += w->nThreads) {
    gen_call(k, &c);
    checked_get(ctxs[comm_of(k)], &c, 0, &r, w->phase ? "single-thread run" : "concurrent run");
    results[w->phase][k] = result_hash(&c, &r);
    if (w->phase == 0 &&
        (r.nChannels != 0 || memcmp(r.after, c.costs, sizeof(float) * (size_t)(c.numAlgo * c.numProto)) != 0))
      atomic_fetch_add(&changedCalls, 1);
  }
  return NULL;
}

static uint64_t digest(const uint64_t* v, long n) {
  uint64_t h = 1469598103934665603ull;
  for (long i = 0; i < n; i++) h = (h ^ v[i]) * 1099511628211ull;
  return h;
}

static void run_phase(int phase, int threads, long stackKib) {
  worker_t* ws = calloc((size_t)threads, sizeof *ws);
  pthread_t* tids = calloc((size_t)threads, sizeof *tids);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  if (pthread_attr_setstacksize(&attr, (size_t)stackKib * 1024) != 0) usage_exit("bad --stack-kib");
  for (int i = 0; i < threads; i++) {
    ws[i] = (worker_t){.index = i, .nThreads = threads, .phase = phase};
    if (pthread_create(&tids[i], &attr, worker, &ws[i]) != 0) usage_exit("pthread_create failed");
  }
  for (int i = 0; i < threads; i++) pthread_join(tids[i], NULL);
  pthread_attr_destroy(&attr);
  free(ws);
  free(tids);
}

static void run_concurrent(long stackKib, bool single) {
  if (cc.comms < 1 || cc.comms > MAX_SLOTS) usage_exit("--comms in 1..%d", MAX_SLOTS);
  for (int i = 0; i < cc.comms; i++) {
    size_t nr = kRanks[i % 5], nn = kNodes[(i / 5) % 3];
    if (tuner->init(nr, nn > nr ? nr : nn, logger, &ctxs[i]) != ncclSuccess) error("init %d failed", i);
  }
  for (int p = 0; p < 2; p++) {
    results[p] = calloc((size_t)cc.calls, sizeof(uint64_t));
    if (!results[p]) usage_exit("out of memory");
  }
  run_phase(0, cc.threads, stackKib);
  printf("hostile_host: concurrent threads=%d comms=%d calls=%ld changed=%ld digest=%016" PRIx64 "\n", cc.threads,
         cc.comms, cc.calls, atomic_load(&changedCalls), digest(results[0], cc.calls));
  if (single) {
    run_phase(1, 1, stackKib);
    long diff = 0;
    for (long k = 0; k < cc.calls; k++) diff += results[0][k] != results[1][k];
    printf("hostile_host: single threads=1 calls=%ld digest=%016" PRIx64 " differing=%ld\n", cc.calls,
           digest(results[1], cc.calls), diff);
    if (diff) error("%ld calls decided differently on 1 thread than on %d", diff, cc.threads);
  }
  for (int i = 0; i < cc.comms; i++)
    if (tuner->destroy(ctxs[i]) != ncclSuccess) error("destroy %d failed", i);
  free(results[0]);
  free(results[1]);
}

/* ---- main ------------------------------------------------------------------------------- */

int main(int argc, char** argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  const char* plugin = NULL;
  const char* script = NULL;
  bool concurrent = false, single = true;
  long stackKib = 1024;
  for (int i = 1; i < argc; i++) {
    const char* a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : "";
    if (strcmp(a, "--plugin") == 0) {
      plugin = v;
      i++;
    } else if (strcmp(a, "--script") == 0) {
      script = v;
      i++;
    } else if (strcmp(a, "--concurrent") == 0) concurrent = true;
    else if (strcmp(a, "--no-single") == 0) single = false;
    else if (strcmp(a, "--threads") == 0) {
      cc.threads = (int)num(v, 1, 1024, 0);
      i++;
    } else if (strcmp(a, "--comms") == 0) {
      cc.comms = (int)num(v, 1, MAX_SLOTS, 0);
      i++;
    } else if (strcmp(a, "--calls") == 0) {
      cc.calls = num(v, 1, 100000000, 0);
      i++;
    } else if (strcmp(a, "--seed") == 0) {
      cc.seed = (uint64_t)num(v, 0, LONG_MAX, 0);
      i++;
    } else if (strcmp(a, "--bytes") == 0) {
      cc.seqBytes = strcmp(v, "seq") == 0;
      i++;
    } else if (strcmp(a, "--stack-kib") == 0) {
      stackKib = num(v, 16, 1 << 20, 0);
      i++;
    } else usage_exit("unknown option %s (see the comment at the top of tests/reliability/hostile_host.c)", a);
  }
  if (!plugin || (!script && !concurrent))
    usage_exit("usage: hostile_host --plugin P (--script FILE | --concurrent ...)");
  const char* d = getenv("NCCL_DEBUG");
  if (d && strcasecmp(d, "INFO") == 0) logLevel = NCCL_LOG_INFO;
  void* lib = NULL;
  char why[512];
  tuner = th_load_tuner(plugin, &lib, why, sizeof why);
  if (!lib) usage_exit("cannot load %s: %s", plugin, why);
  if (!th_tuner_complete(tuner)) usage_exit("%s is not a v3 tuner", plugin);
  printf("hostile_host: using %s\n", tuner->name ? tuner->name : "(null)");
  if (script) run_script(script);
  if (concurrent) run_concurrent(stackKib, single);
  printf("hostile_host: done warn=%lu errors=%lu\n", atomic_load(&warns), atomic_load(&errors));
  return atomic_load(&errors) ? TH_EXIT_MISBEHAVIOUR : TH_EXIT_OK;
}
