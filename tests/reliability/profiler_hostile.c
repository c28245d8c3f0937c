/*
 * profiler_hostile.c -- a hostile host for the profiler half of libnccl-tuner-java.so
 * (ncclProfiler_v4..v6 beside ncclTunerPlugin_v3..v6), black box: it uses only the ABI headers
 * (and tests/include/test_host.h's exit codes).
 *
 *   profiler_hostile --plugin P --case NAME --report FILE
 *
 * The host prints nothing on fds 1 and 2 itself (NCCL's logger goes to the report too), so any
 * byte there came from the plugin. Each case writes "key=value" facts to FILE and ends with
 * "result=ok" or "result=FAIL why". Exit: 0 ok, 2 usage, 3 misbehaviour (a non-ncclSuccess return,
 * a stall, a wrong join). A crash or hang is the caller's to see (exit status, timeout).
 *
 * Cases: garbage, odd-handle, lifecycle, threads8, churn, churn-tuner, joined, v3v4, samecomm,
 * wrap, fork, fork-busy, cancel, concget, badjava (run with a bad NCCL_TUNER_JAVA_HOME).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "nccl_profiler_abi.h"
#include "nccl_tuner_abi.h"
#include "test_host.h"

static FILE* rep;
static int failures;
static const ncclProfiler_v4_t* p4;
static const ncclProfiler_v5_t* p5;
static const ncclProfiler_v6_t* p6;
static const ncclTuner_v3_t* t3;
static const ncclTuner_v5_t* t5;
static atomic_int logged;

static void fact(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vfprintf(rep, fmt, ap);
  va_end(ap);
  fputc('\n', rep);
  fflush(rep);
}

static void fail(const char* fmt, ...) {
  failures++;
  va_list ap;
  va_start(ap, fmt);
  fprintf(rep, "error=");
  vfprintf(rep, fmt, ap);
  va_end(ap);
  fputc('\n', rep);
  fflush(rep);
}

static void logger(ncclDebugLogLevel level, unsigned long flags, const char* file, int line, const char* fmt, ...) {
  (void)flags;
  (void)file;
  (void)line;
  atomic_fetch_add(&logged, 1);
  if (rep == NULL || fmt == NULL) return;
  char msg[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  flockfile(rep);
  fprintf(rep, "log=%s %s\n", level == NCCL_LOG_WARN ? "WARN" : "INFO", msg);
  funlockfile(rep);
  fflush(rep);
}

#define OK(call) \
  do { \
    ncclResult_t r_ = (call); \
    if (r_ != ncclSuccess) fail("%s returned %d (line %d)", #call, r_, __LINE__); \
  } while (0)

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double cpuNow(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

static long rssKib(void) {
  FILE* f = fopen("/proc/self/status", "r");
  char line[256];
  long v = -1;
  while (f && fgets(line, sizeof line, f))
    if (strncmp(line, "VmRSS:", 6) == 0) v = strtol(line + 6, NULL, 10);
  if (f) fclose(f);
  return v;
}

/* ---- v5 helpers ------------------------------------------------------------------------------ */

static void* init5(uint64_t commId, int nNodes, int nRanks, int rank) {
  void* ctx = NULL;
  int mask = 0;
  OK(p5->init(&ctx, commId, &mask, "c", nNodes, nRanks, rank, logger));
  return ctx;
}

static void* coll5(void* ctx, const char* func, size_t count, const char* dt, const char* algo, const char* proto,
                   int nCh, void* parent) {
  ncclProfilerEventDescr_v5_t d;
  memset(&d, 0, sizeof d);
  d.type = ncclProfileColl;
  d.parentObj = parent;
  d.coll.func = func;
  d.coll.count = count;
  d.coll.datatype = dt;
  d.coll.algo = algo;
  d.coll.proto = proto;
  d.coll.nChannels = (uint8_t)nCh;
  void* h = (void*)0xdeadbeef;
  OK(p5->startEvent(ctx, &h, &d));
  return h;
}

static void* ch5(void* ctx, void* coll, int id, uint64_t t0) {
  ncclProfilerEventDescr_v5_t d;
  memset(&d, 0, sizeof d);
  d.type = ncclProfileKernelCh;
  d.parentObj = coll;
  d.kernelCh.channelId = (uint8_t)id;
  d.kernelCh.pTimer = t0;
  void* h = (void*)0xdeadbeef;
  OK(p5->startEvent(ctx, &h, &d));
  return h;
}

static void chStop5(void* h, uint64_t t1) {
  ncclProfilerEventStateArgs_v5_t a = {.kernelCh = {.pTimer = t1}};
  OK(p5->recordEventState(h, ncclProfilerKernelChStop, &a));
  OK(p5->stopEvent(h));
}

/* One collective, NCCL's order: Coll start/stop, then its channels. */
static void collective5(void* ctx, size_t count, int nCh, uint64_t dur) {
  void* c = coll5(ctx, "AllReduce", count, "Float32", "RING", "SIMPLE", nCh, NULL);
  OK(p5->stopEvent(c));
  void* h[64];
  for (int i = 0; i < nCh && i < 64; i++) h[i] = ch5(ctx, c, i, 1000000 + i);
  for (int i = 0; i < nCh && i < 64; i++) chStop5(h[i], 1000000 + dur + i);
}

static void get5(void* tctx, size_t nBytes) {
  float table[NCCL_NUM_ALGORITHMS * NCCL_NUM_PROTOCOLS];
  for (int i = 0; i < 21; i++) table[i] = 10.0f + i;
  int nch = 0;
  OK(t5->getCollInfo(tctx, ncclFuncAllReduce, nBytes, 1, (float**)table, 7, 3, 0, &nch));
}

/* ---- cases ----------------------------------------------------------------------------------- */

static void caseGarbage(void) {
  int junk[64];
  memset(junk, 0x5a, sizeof junk);
  void* zeros = calloc(1, 4096);
  void* ctxs[] = {NULL, junk, zeros, (void*)p5};
  ncclProfilerEventDescr_v5_t d;
  memset(&d, 0, sizeof d);
  d.type = ncclProfileColl;
  d.coll.func = "AllReduce";
  void* h;
  for (unsigned i = 0; i < sizeof ctxs / sizeof ctxs[0]; i++) {
    OK(p5->startEvent(ctxs[i], &h, &d));
    OK(p5->startEvent(ctxs[i], NULL, &d));
    OK(p5->startEvent(ctxs[i], &h, NULL));
    OK(p5->finalize(ctxs[i]));
  }
  OK(p5->init(NULL, 1, NULL, NULL, 1, 1, 0, NULL));
  void* ctx = NULL;
  OK(p5->init(&ctx, 1, NULL, NULL, 1, 1, 0, NULL)); /* NULL mask, name, logger */
  /* parentObj anywhere */
  void* parents[] = {NULL, junk, zeros, ctx, (char*)ctx + 64, (void*)p5, &d, (void*)1, (void*)~(uintptr_t)0};
  for (unsigned i = 0; i < sizeof parents / sizeof parents[0]; i++) {
    void* ch = ch5(ctx, parents[i], 0, 5);
    if (ch != NULL) fact("parent%u_handle=%p", i, ch);
    chStop5(ch, 9);
  }
  /* even garbage handles, NULL args, states that are not KernelChStop */
  void* handles[] = {NULL, junk, zeros, ctx, (void*)p5, &d};
  for (unsigned i = 0; i < sizeof handles / sizeof handles[0]; i++) {
    OK(p5->stopEvent(handles[i]));
    OK(p5->recordEventState(handles[i], ncclProfilerKernelChStop, NULL));
    OK(p5->recordEventState(handles[i], (ncclProfilerEventState_t)999, NULL));
  }
  /* every event type, with NULL strings */
  for (int b = 0; b < 16; b++) {
    memset(&d, 0, sizeof d);
    d.type = 1ull << b;
    OK(p5->startEvent(ctx, &h, &d));
    OK(p5->recordEventState(h, ncclProfilerKernelChStop, NULL));
    OK(p5->stopEvent(h));
  }
  d.type = ~0ull;
  OK(p5->startEvent(ctx, &h, &d));
  OK(p5->stopEvent(h));
  OK(p5->finalize(ctx));
  free(zeros);
}

/* An odd garbage handle (NCCL never passes one; this asks whether the plugin trusts it). */
static void caseOddHandle(void) {
  int junk[64];
  memset(junk, 0, sizeof junk);
  OK(p5->stopEvent((char*)junk + 1));
  ncclProfilerEventStateArgs_v5_t a = {.kernelCh = {.pTimer = 1}};
  OK(p5->recordEventState((char*)junk + 1, ncclProfilerKernelChStop, &a));
  fact("odd_stack_handle=survived");
  OK(p5->stopEvent((void*)1));
  fact("handle_1=survived");
}

static void caseLifecycle(void) {
  void* ctx = init5(7, 1, 2, 0);
  /* strings NCCL never sends, NULL strings, huge counts */
  const char* funcs[] = {"AllReduce", "Bogus", NULL, "", "AllGather", "ReduceScatter", "SendRecv"};
  const char* dts[] = {"Float32", NULL, "Int64", "Unknown", "wat"};
  const char* algos[] = {"RING", NULL, "NOPE", "PAT"};
  size_t counts[] = {0, 1, SIZE_MAX, SIZE_MAX / 2, (size_t)1 << 63};
  int chans[] = {0, 1, 255, 64};
  for (unsigned f = 0; f < 7; f++)
    for (unsigned t = 0; t < 5; t++)
      for (unsigned a = 0; a < 4; a++)
        for (unsigned c = 0; c < 5; c++)
          for (unsigned n = 0; n < 4; n++) {
            void* h = coll5(ctx, funcs[f], counts[c], dts[t], algos[a], a == 1 ? NULL : "LL", chans[n], NULL);
            OK(p5->stopEvent(h));
            void* k = ch5(ctx, h, 0, 100);
            chStop5(k, 50); /* stop before start in time */
          }
  /* stop before start, double stop, more KernelCh than nChannels, events for a finished Coll */
  void* c = coll5(ctx, "AllReduce", 1024, "Float32", "RING", "LL", 2, NULL);
  OK(p5->stopEvent(c));
  OK(p5->stopEvent(c));
  void* k[10];
  for (int i = 0; i < 10; i++) k[i] = ch5(ctx, c, i, 10 + i);
  for (int i = 0; i < 10; i++) {
    chStop5(k[i], 1000);
    OK(p5->stopEvent(k[i])); /* double stop */
    OK(p5->stopEvent(k[i]));
  }
  void* late = ch5(ctx, c, 3, 5); /* the Coll is finished by now */
  chStop5(late, 7);
  /* a KernelCh stop on a channel not yet started: recordEventState then stop on a stale handle */
  chStop5(k[0], 2000);
  OK(p5->finalize(ctx));
  /* events after finalize, with the stale context and stale handles */
  void* h = coll5(ctx, "AllReduce", 4, "Float32", "RING", "LL", 1, NULL);
  if (h != NULL) fact("coll_after_finalize_handle=%p", h);
  void* kk = ch5(ctx, c, 0, 1);
  chStop5(kk, 2);
  chStop5(k[1], 3);
  OK(p5->finalize(ctx));
  OK(p5->finalize(ctx));
  /* v4 and v6 on the same footing */
  void* c4 = NULL;
  int mask = 0;
  OK(p4->init(&c4, &mask, "n", 9, 1, 1, 0, logger));
  ncclProfilerEventDescr_v4_t d4;
  memset(&d4, 0, sizeof d4);
  d4.type = ncclProfileColl;
  d4.coll.func = "Broadcast";
  d4.coll.count = SIZE_MAX;
  d4.coll.nChannels = 255;
  void* h4 = NULL;
  OK(p4->startEvent(c4, &h4, &d4));
  OK(p4->stopEvent(h4));
  OK(p4->finalize(c4));
  void* c6 = NULL;
  OK(p6->init(&c6, 11, &mask, "n", 1, 1, 0, logger));
  ncclProfilerEventDescr_v6_t d6;
  memset(&d6, 0, sizeof d6);
  for (int b = 0; b < 16; b++) {
    d6.type = 1ull << b;
    void* h6 = NULL;
    OK(p6->startEvent(c6, &h6, &d6));
    OK(p6->stopEvent(h6));
  }
  OK(p6->finalize(c6));
  fact("mask=%d", mask);
}

typedef struct {
  void* ctx;
  long n;
} thrArg;

static void* hammer(void* p) {
  thrArg* a = p;
  for (long i = 0; i < a->n; i++) collective5(a->ctx, 1024 + (i & 1023), 1 + (int)(i % 8), 1000 + (i % 5000));
  return NULL;
}

static void caseThreads8(void) {
  void* ctx = init5(42, 1, 8, 0);
  pthread_t t[8];
  thrArg a = {ctx, 150000}; /* 8 x 150k collectives, each 1 + up to 8 channels x 3 calls: ~20M events */
  double t0 = now();
  for (int i = 0; i < 8; i++) pthread_create(&t[i], NULL, hammer, &a);
  for (int i = 0; i < 8; i++) pthread_join(t[i], NULL);
  fact("threads8_seconds=%.2f", now() - t0);
  OK(p5->finalize(ctx));
}

static void caseChurn(int withTuner) {
  long before = 0;
  void* tctx = NULL;
  double t0 = now();
  /* RSS is compared after the JVM's warm-up (JIT code, heap and metaspace growth, malloc arenas):
   * measured, it rises for the first ~5,000 cycles with a decision log and then stays flat
   * (+0.1 MiB from 10,000 to 35,000), so growth is taken from 10,000 to 20,000 cycles. */
  for (int i = 0; i < 20000; i++) {
    void* ctx = init5(1000 + (uint64_t)i, 1, 2, 0);
    if (withTuner) OK(t5->init(&tctx, 1000 + (uint64_t)i, 2, 1, logger, NULL, NULL));
    for (int k = 0; k < 3; k++) {
      if (withTuner) get5(tctx, 4096);
      collective5(ctx, 1024, 2, 5000);
    }
    if (withTuner) OK(t5->finalize(tctx));
    OK(p5->finalize(ctx));
    if (i == 9999) before = rssKib();
    if (now() - t0 > 100) {
      fail("churn: %d iterations in 100 s", i);
      break;
    }
  }
  long after = rssKib();
  fact("rss_kib_at_10000=%ld rss_kib_at_20000=%ld growth_kib=%ld seconds=%.1f", before, after, after - before,
       now() - t0);
  if (after - before > 4 * 1024) fail("churn: RSS grew %ld KiB over 10000 init/finalize", after - before);
}

static void caseJoined(void) {
  void* ctx = init5(0x1234, 2, 2, 0);
  void* tctx = NULL;
  OK(t5->init(&tctx, 0x1234, 2, 2, logger, NULL, NULL));
  fact("tuner_ctx=%p", tctx);
  for (int i = 0; i < 2000; i++) {
    get5(tctx, 1 << (i % 24));
    void* c = coll5(ctx, "AllReduce", (1u << (i % 24)) / 4, "Float32", "RING", "SIMPLE", 2, NULL);
    OK(p5->stopEvent(c));
    void* k0 = ch5(ctx, c, 0, 100);
    void* k1 = ch5(ctx, c, 1, 110);
    chStop5(k0, 100 + 5000 + i);
    chStop5(k1, 120 + 5000);
  }
  OK(t5->finalize(tctx));
  OK(p5->finalize(ctx));
}

static void caseV3V4(void) {
  void* ctx = NULL;
  int mask = 0;
  OK(p4->init(&ctx, &mask, "n", 0xabcdef, 1, 2, 0, logger));
  void* tctx = NULL;
  OK(t3->init(2, 1, logger, &tctx));
  fact("tuner_ctx=%p", tctx);
  for (int i = 0; i < 100; i++) {
    float table[21];
    for (int k = 0; k < 21; k++) table[k] = 10.0f + k;
    int nch = 0;
    OK(t3->getCollInfo(tctx, ncclFuncAllReduce, 4096, 1, (float**)table, 7, 3, &nch));
    ncclProfilerEventDescr_v4_t d;
    memset(&d, 0, sizeof d);
    d.type = ncclProfileColl;
    d.coll.func = "AllReduce";
    d.coll.count = 1024;
    d.coll.datatype = "Float32";
    d.coll.algo = "RING";
    d.coll.proto = "LL";
    d.coll.nChannels = 1;
    void* h = NULL;
    OK(p4->startEvent(ctx, &h, &d));
    OK(p4->stopEvent(h));
    memset(&d, 0, sizeof d);
    d.type = ncclProfileKernelCh;
    d.parentObj = h;
    d.kernelCh.pTimer = 10;
    void* k = NULL;
    OK(p4->startEvent(ctx, &k, &d));
    ncclProfilerEventStateArgs_v4_t a = {.kernelCh = {.pTimer = 5010}};
    OK(p4->recordEventState(k, ncclProfilerKernelChStop, &a));
    OK(p4->stopEvent(k));
  }
  OK(t3->destroy(tctx));
  OK(p4->finalize(ctx));
}

/* Two communicators with the same commId, their inits interleaved on one thread, then their
 * collectives interleaved: A gets 4 KiB decisions and collectives, B 1 MiB. */
static void caseSameComm(void) {
  void* pa = init5(77, 1, 2, 0);
  void* pb = init5(77, 1, 2, 1);
  void* ta = NULL;
  void* tb = NULL;
  OK(t5->init(&ta, 77, 2, 1, logger, NULL, NULL));
  OK(t5->init(&tb, 77, 2, 1, logger, NULL, NULL));
  for (int i = 0; i < 50; i++) {
    get5(ta, 4096);
    get5(tb, 1 << 20);
    void* ca = coll5(pa, "AllReduce", 1024, "Float32", "RING", "SIMPLE", 1, NULL);
    OK(p5->stopEvent(ca));
    void* cb = coll5(pb, "AllReduce", 1 << 18, "Float32", "RING", "SIMPLE", 1, NULL);
    OK(p5->stopEvent(cb));
    chStop5(ch5(pa, ca, 0, 1), 1001);
    chStop5(ch5(pb, cb, 0, 1), 2001);
  }
  OK(t5->finalize(ta));
  OK(t5->finalize(tb));
  OK(p5->finalize(pa));
  OK(p5->finalize(pb));
}

/* A channel left open while 1100 further collectives reuse its record. */
static void caseWrap(void) {
  void* ctx = init5(5, 1, 2, 0);
  void* c0 = coll5(ctx, "AllReduce", 1024, "Float32", "RING", "SIMPLE", 4, NULL);
  OK(p5->stopEvent(c0));
  void* open[4];
  for (int i = 0; i < 4; i++) open[i] = ch5(ctx, c0, i, 100);
  for (int i = 0; i < 1100; i++) collective5(ctx, 1024, 4, 3000);
  for (int i = 0; i < 4; i++) chStop5(open[i], 1u << 31); /* 2 s late: lands on a reused record */
  void* c1 = NULL;
  for (int i = 0; i < 1023; i++) {
    c1 = coll5(ctx, "AllReduce", 1024, "Float32", "RING", "SIMPLE", 4, NULL);
    OK(p5->stopEvent(c1));
  }
  OK(p5->finalize(ctx));
}

static void* busyInit(void* p) {
  (void)p;
  for (;;) {
    void* c = init5(3, 1, 2, 0);
    collective5(c, 64, 1, 10);
    p5->finalize(c);
  }
  return NULL;
}

/* fork after init; fork-busy: while another thread keeps opening and closing contexts. */
static void caseFork(int busy) {
  void* ctx = init5(9, 1, 2, 0);
  collective5(ctx, 1024, 2, 100);
  pthread_t t;
  if (busy) pthread_create(&t, NULL, busyInit, NULL);
  int hung = 0, bad = 0;
  int rounds = busy ? 40 : 1;
  for (int round = 0; round < rounds; round++) {
    if (busy) usleep(1000);
    pid_t pid = fork();
    if (pid == 0) {
      alarm(3);
      collective5(ctx, 1024, 2, 100);
      void* c2 = init5(10, 1, 2, 0);
      collective5(c2, 1024, 2, 100);
      p5->finalize(c2);
      p5->finalize(ctx);
      _exit(0);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    if (WIFSIGNALED(st) && WTERMSIG(st) == SIGALRM) hung++;
    else if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) bad++;
  }
  fact("fork_children_hung=%d fork_children_bad=%d", hung, bad);
  if (hung) fail("a child forked after profiler init hung (%d of %d)", hung, rounds);
  if (bad) fail("a child forked after profiler init died (%d)", bad);
  OK(p5->finalize(ctx));
}

static void* cancelMe(void* p) {
  int async = *(int*)p;
  if (async) pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, NULL);
  void* ctx = init5(21, 1, 2, 0);
  for (;;) {
    collective5(ctx, 1024, 4, 100);
    pthread_testcancel();
  }
  return NULL;
}

static void caseCancel(void) {
  for (int async = 0; async < 2; async++) {
    for (int i = 0; i < 50; i++) {
      pthread_t t;
      pthread_create(&t, NULL, cancelMe, &async);
      usleep(2000 + (i % 7) * 300);
      pthread_cancel(t);
      pthread_join(t, NULL);
    }
    /* the process still works: a fresh context, events, finalize */
    double t0 = now();
    void* c = init5(22, 1, 2, 0);
    collective5(c, 1024, 2, 100);
    OK(p5->finalize(c));
    fact("after_cancel_async%d_seconds=%.3f", async, now() - t0);
  }
}

/* Four threads call getCollInfo on one communicator (the tuner's concurrency promise) while the
 * host thread runs Coll events on its profiler context: no Coll event may stall. */
typedef struct {
  void* tctx;
  atomic_int* stop;
} getArg;

static void* getter(void* p) {
  getArg* a = p;
  while (!atomic_load(a->stop)) get5(a->tctx, 4096);
  return NULL;
}

static void caseConcGet(void) {
  void* ctx = init5(0x55, 2, 2, 0);
  void* tctx = NULL;
  OK(t5->init(&tctx, 0x55, 2, 2, logger, NULL, NULL));
  atomic_int stop = 0;
  getArg a = {tctx, &stop};
  pthread_t t[4];
  for (int i = 0; i < 4; i++) pthread_create(&t[i], NULL, getter, &a);
  double worst = 0, t0 = now();
  long n = 0;
  while (now() - t0 < 20) {
    double s = cpuNow();
    void* c = coll5(ctx, "AllReduce", 1024, "Float32", "RING", "SIMPLE", 1, NULL);
    OK(p5->stopEvent(c));
    c = coll5(ctx, "AllReduce", 1024, "Float32", "RING", "SIMPLE", 1, NULL);
    OK(p5->stopEvent(c));
    c = coll5(ctx, "AllReduce", 1024, "Float32", "RING", "SIMPLE", 1, NULL);
    double d = cpuNow() - s; /* CPU time of this thread: a stall of our own, not the scheduler's */
    if (d > worst) worst = d;
    OK(p5->stopEvent(c));
    n++;
  }
  atomic_store(&stop, 1);
  for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
  fact("concget_colls=%ld worst_coll_start_cpu_ms=%.1f", n, worst * 1000);
  if (worst > 0.1) fail("a Coll start spent %.0f ms of CPU while getCollInfo ran on other threads", worst * 1000);
  OK(t5->finalize(tctx));
  OK(p5->finalize(ctx));
}

/* Deterministic measurements for ProfilerMeasureIT (run in enforce mode with policies/h200-2rank.yaml):
 * A: 10 AllReduce 4 KiB (7x3 table), executed RING/LL128 on 2 channels, device time 5000 ns;
 * B: 10 AllReduce 4 KiB with a 7x2 table (numProto 2), executed RING/LL128, device time 20000 ns;
 * C: AllGather alternating 512 KiB and 8 KiB (count * 4 B * nRanks 2), 5 of each, 3000 ns;
 * D: Broadcast as one group: getCollInfo 8 KiB then 4 KiB, then the Colls 4 KiB and 8 KiB. */
static void getT(void* tctx, int coll, size_t nBytes, int numProto) {
  float table[21];
  for (int i = 0; i < 21; i++) table[i] = 10.0f + i;
  int nch = 0;
  OK(t5->getCollInfo(tctx, (ncclFunc_t)coll, nBytes, 1, (float**)table, 7, numProto, 0, &nch));
}

static void timedColl(void* ctx, const char* func, size_t count, const char* proto, uint64_t dur) {
  void* c = coll5(ctx, func, count, "Float32", "RING", proto, 2, NULL);
  OK(p5->stopEvent(c));
  void* k0 = ch5(ctx, c, 0, 1000000);
  void* k1 = ch5(ctx, c, 1, 1000100);
  chStop5(k1, 1000000 + dur - 500);
  chStop5(k0, 1000000 + dur);
}

static void caseMeasure(void) {
  void* ctx = init5(0x600d, 2, 2, 0);
  void* tctx = NULL;
  OK(t5->init(&tctx, 0x600d, 2, 2, logger, NULL, NULL));
  for (int i = 0; i < 10; i++) {
    getT(tctx, ncclFuncAllReduce, 4096, 3);
    timedColl(ctx, "AllReduce", 1024, "LL128", 5000);
  }
  for (int i = 0; i < 10; i++) {
    getT(tctx, ncclFuncAllReduce, 4096, 2);
    timedColl(ctx, "AllReduce", 1024, "LL128", 20000);
  }
  for (int i = 0; i < 10; i++) {
    size_t count = i % 2 == 0 ? 65536 : 1024;
    getT(tctx, ncclFuncAllGather, count * 8, 3);
    timedColl(ctx, "AllGather", count, "SIMPLE", 3000);
  }
  getT(tctx, ncclFuncBroadcast, 8192, 3);
  getT(tctx, ncclFuncBroadcast, 4096, 3);
  timedColl(ctx, "Broadcast", 1024, "SIMPLE", 3000);
  timedColl(ctx, "Broadcast", 2048, "SIMPLE", 3000);
  OK(t5->finalize(tctx));
  OK(p5->finalize(ctx));
}

/* For ProfilerMeasureIT's decode test, under NCCL_TUNER_JAVA_FORCE=COLLNET_DIRECT/LL128:
 * A: 10 AllReduce 4 KiB with a 7x2 table (numProto 2), executed COLLNET_DIRECT/LL128 on 1 channel,
 *    1000 ns: the decision's entry 5 (algorithm 2 * numProto 2 + protocol 1) is COLLNET_DIRECT/LL128;
 * B: 1 Broadcast 4 KiB (7x3 table), executed as forced, 5 s (2^32.2 ns): the histogram's last bucket. */
static void caseDecode(void) {
  void* ctx = init5(0xdec0de, 2, 2, 0);
  void* tctx = NULL;
  OK(t5->init(&tctx, 0xdec0de, 2, 2, logger, NULL, NULL));
  for (int i = 0; i < 10; i++) {
    getT(tctx, ncclFuncAllReduce, 4096, 2);
    void* c = coll5(ctx, "AllReduce", 1024, "Float32", "COLLNET_DIRECT", "LL128", 1, NULL);
    OK(p5->stopEvent(c));
    chStop5(ch5(ctx, c, 0, 1000000), 1001000);
  }
  getT(tctx, ncclFuncBroadcast, 4096, 3);
  void* c = coll5(ctx, "Broadcast", 1024, "Float32", "COLLNET_DIRECT", "LL128", 1, NULL);
  OK(p5->stopEvent(c));
  chStop5(ch5(ctx, c, 0, 1000000), 1000000 + 5000000000ull);
  OK(t5->finalize(tctx));
  OK(p5->finalize(ctx));
}

static void caseBadJava(void) {
  void* ctx = init5(0x99, 1, 2, 0);
  void* tctx = NULL;
  OK(t5->init(&tctx, 0x99, 2, 1, logger, NULL, NULL));
  fact("tuner_ctx=%p", tctx);
  for (int i = 0; i < 100; i++) {
    get5(tctx, 4096);
    collective5(ctx, 1024, 2, 100);
  }
  OK(t5->finalize(tctx));
  OK(p5->finalize(ctx));
}

int main(int argc, char** argv) {
  const char *plugin = NULL, *cs = NULL, *report = NULL;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "--plugin") == 0) plugin = argv[i + 1];
    else if (strcmp(argv[i], "--case") == 0) cs = argv[i + 1];
    else if (strcmp(argv[i], "--report") == 0) report = argv[i + 1];
  }
  if (plugin == NULL || cs == NULL || report == NULL) return TH_EXIT_USAGE;
  rep = fopen(report, "w");
  if (rep == NULL) return TH_EXIT_USAGE;
  /* NCCL opens the profiler and the tuner on their own (two dlopens of the same file). */
  void* lp = dlopen(plugin, RTLD_NOW | RTLD_LOCAL);
  void* lt = dlopen(plugin, RTLD_NOW | RTLD_LOCAL);
  if (lp == NULL || lt == NULL) {
    fact("result=FAIL dlopen %s", dlerror());
    return TH_EXIT_USAGE;
  }
  p4 = dlsym(lp, NCCL_PROFILER_PLUGIN_SYMBOL_V4);
  p5 = dlsym(lp, NCCL_PROFILER_PLUGIN_SYMBOL_V5);
  p6 = dlsym(lp, NCCL_PROFILER_PLUGIN_SYMBOL_V6);
  t3 = dlsym(lt, NCCL_TUNER_PLUGIN_SYMBOL);
  t5 = dlsym(lt, NCCL_TUNER_PLUGIN_SYMBOL_V5);
  if (!p4 || !p5 || !p6 || !t3 || !t5) {
    fact("result=FAIL symbols");
    return TH_EXIT_USAGE;
  }
  fact("case=%s", cs);
  if (strcmp(cs, "garbage") == 0) caseGarbage();
  else if (strcmp(cs, "odd-handle") == 0) caseOddHandle();
  else if (strcmp(cs, "lifecycle") == 0) caseLifecycle();
  else if (strcmp(cs, "threads8") == 0) caseThreads8();
  else if (strcmp(cs, "churn") == 0) caseChurn(0);
  else if (strcmp(cs, "churn-tuner") == 0) caseChurn(1);
  else if (strcmp(cs, "joined") == 0) caseJoined();
  else if (strcmp(cs, "v3v4") == 0) caseV3V4();
  else if (strcmp(cs, "samecomm") == 0) caseSameComm();
  else if (strcmp(cs, "wrap") == 0) caseWrap();
  else if (strcmp(cs, "fork") == 0) caseFork(0);
  else if (strcmp(cs, "fork-busy") == 0) caseFork(1);
  else if (strcmp(cs, "cancel") == 0) caseCancel();
  else if (strcmp(cs, "concget") == 0) caseConcGet();
  else if (strcmp(cs, "badjava") == 0) caseBadJava();
  else if (strcmp(cs, "measure") == 0) caseMeasure();
  else if (strcmp(cs, "decode") == 0) caseDecode();
  else {
    fact("result=FAIL unknown case");
    return TH_EXIT_USAGE;
  }
  fact("logged=%d", atomic_load(&logged));
  fact(failures ? "result=FAIL" : "result=ok");
  return failures ? TH_EXIT_MISBEHAVIOUR : TH_EXIT_OK;
}
