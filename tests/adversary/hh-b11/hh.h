/*
 * hh.h -- what the hh-b11 hostile hosts share: loading the tuner as NCCL does (v3..v7), a counting
 * logger, guarded cost tables (PROT_NONE pages on both sides, sentinel bytes), and a snapshot of the
 * host's state (fds, signal mask and dispositions, MXCSR, x87, locale, environment, cwd, umask).
 * Each host prints "FAIL ..." lines for broken promises and "OK ..." / facts otherwise, and exits
 * 3 when any check failed. Build: gcc -O2 -pthread -I plugin-shim/include host.c -ldl.
 */
#ifndef HH_H_
#define HH_H_
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "nccl_tuner_abi.h"

static atomic_int g_fails;
static int hh_fail(const char* fmt, ...) {
  atomic_fetch_add(&g_fails, 1);
  va_list ap;
  va_start(ap, fmt);
  printf("FAIL ");
  vprintf(fmt, ap);
  printf("\n");
  va_end(ap);
  fflush(stdout);
  return 1;
}
#define FAIL(...) hh_fail(__VA_ARGS__)

/* ---- logger: counts lines per level; prints them (prefixed) unless HH_QUIET ---------------- */
static atomic_int g_warns, g_infos;
static int g_quiet = -1;
static void hh_log(ncclDebugLogLevel level, unsigned long flags, const char* file, int line, const char* fmt, ...) {
  (void)flags, (void)file, (void)line;
  if (level == NCCL_LOG_WARN) atomic_fetch_add(&g_warns, 1);
  else atomic_fetch_add(&g_infos, 1);
  if (g_quiet < 0) g_quiet = getenv("HH_QUIET") != NULL;
  if (g_quiet && level != NCCL_LOG_WARN) return;
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  printf("LOG %s %s\n", level == NCCL_LOG_WARN ? "WARN" : "INFO", buf);
  fflush(stdout);
}

static unsigned hh_mxcsr(void) {
  unsigned m;
  __asm__ volatile("stmxcsr %0" : "=m"(m));
  return m;
}

/* MXCSR and the x87 status word across each entry point (the per-call FP promise). */
#define HH_FP_BEGIN \
  unsigned hh_mx0_ = hh_mxcsr(), hh_mx1_; \
  unsigned short hh_sw0_, hh_sw1_; \
  __asm__ volatile("fnstsw %0" : "=m"(hh_sw0_));
#define HH_FP_END(what) \
  hh_mx1_ = hh_mxcsr(); \
  __asm__ volatile("fnstsw %0" : "=m"(hh_sw1_)); \
  if (hh_mx0_ != hh_mx1_) FAIL("%s: MXCSR 0x%x -> 0x%x across the call", what, hh_mx0_, hh_mx1_); \
  if (hh_sw0_ != hh_sw1_) FAIL("%s: x87 status 0x%x -> 0x%x across the call", what, hh_sw0_, hh_sw1_);

/* ---- the tuner, any version ------------------------------------------------------------------ */
typedef struct {
  void* lib;
  int ver;
  void* sym;
} hh_tuner;

static const char* hh_plugin(void) {
  const char* p = getenv("HH_PLUGIN");
  return p ? p : "build/lib/libnccl-tuner-java.so";
}

static int hh_open(hh_tuner* t, int ver) {
  char name[32];
  t->ver = ver;
  t->lib = dlopen(hh_plugin(), RTLD_NOW | RTLD_LOCAL);
  if (!t->lib) {
    printf("SETUP dlopen: %s\n", dlerror());
    exit(2);
  }
  if (ver == 3) snprintf(name, sizeof name, "ncclTunerPlugin_v3");
  else snprintf(name, sizeof name, "ncclTunerPlugin_v%d", ver);
  t->sym = dlsym(t->lib, name);
  if (!t->sym) {
    printf("SETUP no %s\n", name);
    exit(2);
  }
  return 0;
}

static int hh_env_ver(void) {
  const char* v = getenv("HH_VER");
  return v ? atoi(v) : 7;
}

/* the logger the hosts hand to init (hh_log unless a host sets another) */
static ncclDebugLogger_t g_logger = hh_log;
static ncclNvlDomainInfo_v5_t g_nvl = {2, 1, 1};
static ncclTunerConstants_v7_t g_consts7;

static void* hh_init(hh_tuner* t, size_t nRanks, size_t nNodes, uint64_t commId) {
  void* ctx = NULL;
  ncclResult_t r;
  HH_FP_BEGIN
  switch (t->ver) {
    case 3: r = ((ncclTuner_v3_t*)t->sym)->init(nRanks, nNodes, g_logger, &ctx); break;
    case 4: r = ((ncclTuner_v4_t*)t->sym)->init(nRanks, nNodes, g_logger, &ctx); break;
    case 5:
    case 6: {
      static ncclTunerConstants_v5_t c5;
      r = ((ncclTuner_v5_t*)t->sym)->init(&ctx, commId, nRanks, nNodes, g_logger, &g_nvl, &c5);
      break;
    }
    default: r = ((ncclTuner_v7_t*)t->sym)->init(&ctx, commId, nRanks, nNodes, g_logger, &g_nvl, &g_consts7); break;
  }
  HH_FP_END("init")
  if (r != ncclSuccess) FAIL("init returned %d", r);
  return ctx;
}

static ncclResult_t hh_get(hh_tuner* t, void* ctx, int coll, size_t nBytes, int pipe, void* tab, int na, int np,
                           int* nch) {
  ncclResult_t r;
  HH_FP_BEGIN
  if (t->ver == 3)
    r = ((ncclTuner_v3_t*)t->sym)->getCollInfo(ctx, (ncclFunc_t)coll, nBytes, pipe, (float**)tab, na, np, nch);
  else /* v4..v7 share getCollInfo's type and place */
    r = ((ncclTuner_v4_t*)t->sym)->getCollInfo(ctx, (ncclFunc_t)coll, nBytes, pipe, (float**)tab, na, np, 0, nch);
  HH_FP_END("getCollInfo")
  if (r != ncclSuccess) FAIL("getCollInfo returned %d", r);
  return r;
}

static ncclResult_t hh_fin(hh_tuner* t, void* ctx) {
  ncclResult_t r;
  HH_FP_BEGIN
  if (t->ver <= 4) r = ((ncclTuner_v3_t*)t->sym)->destroy(ctx);
  else r = ((ncclTuner_v5_t*)t->sym)->finalize(ctx);
  HH_FP_END("destroy")
  if (r != ncclSuccess) FAIL("destroy returned %d", r);
  return r;
}

/* ---- guarded memory: `bytes` usable bytes with PROT_NONE pages on both sides --------------------
 * at_end: the usable bytes end exactly at the trailing guard page (else they start right after
 * the leading one). Everything usable and the slack in the pages is filled with SENT. */
#define SENT 0xA5
typedef struct {
  unsigned char* map;
  size_t mapLen;
  unsigned char* rw; /* the read-write pages */
  size_t rwLen;
  unsigned char* p; /* the usable bytes */
  size_t bytes;
} hh_guard;

static void hh_guard_new(hh_guard* g, size_t bytes, int at_end, size_t misalign) {
  size_t pg = (size_t)sysconf(_SC_PAGESIZE);
  g->rwLen = ((bytes + misalign + pg - 1) / pg + 1) * pg;
  g->mapLen = g->rwLen + 2 * pg;
  g->map = mmap(NULL, g->mapLen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (g->map == MAP_FAILED) {
    printf("SETUP mmap failed\n");
    exit(2);
  }
  mprotect(g->map, pg, PROT_NONE);
  mprotect(g->map + pg + g->rwLen, pg, PROT_NONE);
  g->rw = g->map + pg;
  memset(g->rw, SENT, g->rwLen);
  g->bytes = bytes;
  g->p = at_end ? g->rw + g->rwLen - bytes - misalign : g->rw + misalign;
}

static void hh_guard_free(hh_guard* g) {
  munmap(g->map, g->mapLen);
}

/* Bytes of the read-write pages that differ from `before` (a copy of g->rw), outside
 * [skip, skip+skipLen) of g->rw. Prints the first few. */
static int hh_guard_diff(const hh_guard* g, const unsigned char* before, size_t skip, size_t skipLen,
                         const char* what) {
  int n = 0;
  for (size_t i = 0; i < g->rwLen; i++) {
    if (i >= skip && i < skip + skipLen) continue;
    if (g->rw[i] != before[i]) {
      if (n < 4)
        FAIL("%s: byte %+ld from the table changed 0x%02x -> 0x%02x", what, (long)i - (long)skip, before[i], g->rw[i]);
      n++;
    }
  }
  return n;
}

/* ---- host state ---------------------------------------------------------------------------- */
#define HH_MAXFD 256
typedef struct {
  char fd[HH_MAXFD][128];
  int fdflags[HH_MAXFD];
  sigset_t mask;
  struct sigaction act[NSIG];
  unsigned mxcsr;
  unsigned short x87cw, x87sw;
  char locale[256];
  locale_t uloc;
  uint64_t envHash;
  int envCount;
  char cwd[512];
  mode_t umask;
  int stdoutErr;
} hh_state;

extern char** environ;
static void hh_snap(hh_state* s) {
  memset(s, 0, sizeof *s);
  for (int i = 0; i < HH_MAXFD; i++) {
    char p[64];
    snprintf(p, sizeof p, "/proc/self/fd/%d", i);
    ssize_t n = readlink(p, s->fd[i], sizeof s->fd[i] - 1);
    if (n < 0) {
      s->fd[i][0] = 0;
      s->fdflags[i] = -1;
    } else {
      s->fd[i][n] = 0;
      s->fdflags[i] = fcntl(i, F_GETFD);
    }
  }
  pthread_sigmask(SIG_BLOCK, NULL, &s->mask);
  for (int i = 1; i < NSIG; i++) sigaction(i, NULL, &s->act[i]);
  s->mxcsr = hh_mxcsr();
  __asm__ volatile("fnstcw %0" : "=m"(s->x87cw));
  __asm__ volatile("fnstsw %0" : "=m"(s->x87sw));
  snprintf(s->locale, sizeof s->locale, "%s", setlocale(LC_ALL, NULL));
  s->uloc = uselocale((locale_t)0);
  uint64_t h = 1469598103934665603ull;
  for (char** e = environ; *e; e++, s->envCount++)
    for (const char* c = *e; *c; c++) h = (h ^ (unsigned char)*c) * 1099511628211ull;
  s->envHash = h;
  if (!getcwd(s->cwd, sizeof s->cwd)) s->cwd[0] = 0;
  s->umask = umask(022);
  umask(s->umask);
  s->stdoutErr = ferror(stdout) | ferror(stderr) << 1;
}

/* Differences between two snapshots (the fds the host itself opened in between are its own:
 * pass them in `ignoreFd`, -1 terminated). Returns the count. */
static int hh_state_diff(const hh_state* a, const hh_state* b, const char* what) {
  int n = 0;
  for (int i = 0; i < HH_MAXFD; i++)
    if (strcmp(a->fd[i], b->fd[i]) || a->fdflags[i] != b->fdflags[i]) {
      FAIL("%s: fd %d '%s'(%d) -> '%s'(%d)", what, i, a->fd[i], a->fdflags[i], b->fd[i], b->fdflags[i]);
      n++;
    }
  for (int i = 1; i < NSIG; i++) {
    if (sigismember(&a->mask, i) != sigismember(&b->mask, i)) {
      FAIL("%s: signal %d %s in the mask", what, i, sigismember(&b->mask, i) ? "now blocked" : "now unblocked");
      n++;
    }
    if (a->act[i].sa_handler != b->act[i].sa_handler || a->act[i].sa_flags != b->act[i].sa_flags) {
      FAIL("%s: signal %d disposition %p/%x -> %p/%x", what, i, (void*)a->act[i].sa_handler, a->act[i].sa_flags,
           (void*)b->act[i].sa_handler, b->act[i].sa_flags);
      n++;
    }
  }
  if (a->mxcsr != b->mxcsr) FAIL("%s: MXCSR 0x%x -> 0x%x", what, a->mxcsr, b->mxcsr), n++;
  if (a->x87cw != b->x87cw) FAIL("%s: x87 control 0x%x -> 0x%x", what, a->x87cw, b->x87cw), n++;
  if (a->x87sw != b->x87sw) FAIL("%s: x87 status 0x%x -> 0x%x", what, a->x87sw, b->x87sw), n++;
  if (strcmp(a->locale, b->locale)) FAIL("%s: locale '%s' -> '%s'", what, a->locale, b->locale), n++;
  if (a->uloc != b->uloc) FAIL("%s: thread locale %p -> %p", what, (void*)a->uloc, (void*)b->uloc), n++;
  if (a->envHash != b->envHash || a->envCount != b->envCount)
    FAIL("%s: environment changed (%d -> %d names)", what, a->envCount, b->envCount), n++;
  if (strcmp(a->cwd, b->cwd)) FAIL("%s: cwd '%s' -> '%s'", what, a->cwd, b->cwd), n++;
  if (a->umask != b->umask) FAIL("%s: umask %o -> %o", what, a->umask, b->umask), n++;
  if (a->stdoutErr != b->stdoutErr) FAIL("%s: stdio error flags %d -> %d", what, a->stdoutErr, b->stdoutErr), n++;
  return n;
}

static double hh_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* A standard 7x3 AllReduce/AllGather table where every entry is offered. */
static void hh_fill(float* t, int cells) {
  for (int i = 0; i < cells; i++) t[i] = 100.0f + i;
}

static int hh_exit(void) {
  int f = atomic_load(&g_fails);
  printf("END fails %d warns %d infos %d\n", f, atomic_load(&g_warns), atomic_load(&g_infos));
  fflush(stdout);
  return f ? 3 : 0;
}

#endif
