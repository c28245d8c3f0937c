/* adv.h -- shared helpers of the adversarial hosts: loading the tuner/profiler the way NCCL does,
 * a recording logger, guarded cost tables, trace replay, and a snapshot of the host state that the
 * promise says must not change (signals, mask, locale, FP environment, fds, environment, cwd,
 * umask, children). Everything is reported to the report fd (ADV_REPORT_FD, 900), never to 0-2. */
#ifndef ADV_H_
#define ADV_H_
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <fenv.h>
#include <locale.h>
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
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "nccl_profiler_abi.h"
#include "nccl_tuner_abi.h"

#define RFD 900
extern char** environ;

static int g_fail;
static void rep(const char* fmt, ...) {
  char b[4096];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(b, sizeof b, fmt, ap);
  va_end(ap);
  if (n > (int)sizeof b - 2) n = sizeof b - 2;
  b[n++] = '\n';
  ssize_t w = write(RFD, b, n);
  (void)w;
}
#define FAIL(...) \
  do { \
    g_fail++; \
    rep("FAIL: " __VA_ARGS__); \
  } while (0)

static void rep_open(void) {
  const char* p = getenv("ADV_REPORT");
  int fd = p ? open(p, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644) : fcntl(2, F_DUPFD_CLOEXEC, 0);
  if (fd < 0) _exit(90);
  if (fd != RFD) {
    if (dup3(fd, RFD, O_CLOEXEC) < 0) _exit(91);
    close(fd);
  }
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

/* ---- logger --------------------------------------------------------------------------------- */
static pthread_mutex_t g_logmu = PTHREAD_MUTEX_INITIALIZER;
static atomic_int g_warns, g_infos, g_logs;
static int g_logverbose = -1;
static void (*g_log_hook)(int level);
static void adv_log(ncclDebugLogLevel level, unsigned long flags, const char* file, int line, const char* fmt, ...) {
  (void)flags;
  (void)file;
  (void)line;
  char b[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(b, sizeof b, fmt ? fmt : "(null fmt)", ap);
  va_end(ap);
  atomic_fetch_add(&g_logs, 1);
  if (level == NCCL_LOG_WARN) atomic_fetch_add(&g_warns, 1);
  if (level == NCCL_LOG_INFO) atomic_fetch_add(&g_infos, 1);
  if (g_logverbose < 0) g_logverbose = getenv("ADV_LOGV") ? 1 : 0;
  if (level == NCCL_LOG_WARN || g_logverbose) {
    pthread_mutex_lock(&g_logmu);
    rep("LOG %s %s", level == NCCL_LOG_WARN ? "WARN" : level == NCCL_LOG_INFO ? "INFO" : "OTHER", b);
    pthread_mutex_unlock(&g_logmu);
  }
  if (g_log_hook) g_log_hook(level);
}

/* ---- tuner ---------------------------------------------------------------------------------- */
typedef struct {
  int ver;
  void* h;
  const void* sym;
  ncclTunerConstants_v7_t* k7;
  ncclTunerConstants_v5_t* k5;
} tuner_t;

static const char* plugin_path(void) {
  const char* p = getenv("ADV_PLUGIN");
  return p ? p : "build/lib/libnccl-tuner-java.so";
}

static int tuner_open(tuner_t* t, int ver) {
  memset(t, 0, sizeof *t);
  t->h = dlopen(plugin_path(), RTLD_NOW | RTLD_LOCAL);
  if (!t->h) {
    FAIL("dlopen %s: %s", plugin_path(), dlerror());
    return -1;
  }
  for (int v = ver; v >= 3; v--) {
    char n[32];
    snprintf(n, sizeof n, "ncclTunerPlugin_v%d", v);
    t->sym = dlsym(t->h, n);
    if (t->sym) {
      t->ver = v;
      return 0;
    }
  }
  FAIL("no tuner symbol");
  return -1;
}

static int env_ver(void) {
  const char* v = getenv("ADV_VER");
  return v ? atoi(v) : 7;
}

static ncclResult_t tuner_init(tuner_t* t, size_t nRanks, size_t nNodes, uint64_t commId, ncclDebugLogger_t lf,
                               void** ctx) {
  static ncclNvlDomainInfo_v5_t nvl = {1, 2, 2};
  static ncclTunerConstants_v7_t k7;
  static ncclTunerConstants_v5_t k5;
  for (size_t i = 0; i < sizeof k7 / 8; i++) ((double*)&k7)[i] = 1.0 + i;
  for (size_t i = 0; i < sizeof k5 / 8; i++) ((double*)&k5)[i] = 1.0 + i;
  switch (t->ver) {
    case 3: return ((const ncclTuner_v3_t*)t->sym)->init(nRanks, nNodes, lf, ctx);
    case 4: return ((const ncclTuner_v4_t*)t->sym)->init(nRanks, nNodes, lf, ctx);
    case 5: return ((const ncclTuner_v5_t*)t->sym)->init(ctx, commId, nRanks, nNodes, lf, &nvl, &k5);
    case 6: return ((const ncclTuner_v6_t*)t->sym)->init(ctx, commId, nRanks, nNodes, lf, &nvl, &k5);
    default: return ((const ncclTuner_v7_t*)t->sym)->init(ctx, commId, nRanks, nNodes, lf, &nvl, &k7);
  }
}
static ncclResult_t tuner_get(tuner_t* t, void* ctx, int coll, size_t nBytes, int pipe, float* tab, int na, int np,
                              int regBuff, int* nch) {
  float** tb = (float**)tab;
  switch (t->ver) {
    case 3: return ((const ncclTuner_v3_t*)t->sym)->getCollInfo(ctx, coll, nBytes, pipe, tb, na, np, nch);
    case 4: return ((const ncclTuner_v4_t*)t->sym)->getCollInfo(ctx, coll, nBytes, pipe, tb, na, np, regBuff, nch);
    default: /* v5..v7 share the getCollInfo member at the same offset */
      return ((const ncclTuner_v5_t*)t->sym)->getCollInfo(ctx, coll, nBytes, pipe, tb, na, np, regBuff, nch);
  }
}
static ncclResult_t tuner_fin(tuner_t* t, void* ctx) {
  switch (t->ver) {
    case 3: return ((const ncclTuner_v3_t*)t->sym)->destroy(ctx);
    case 4: return ((const ncclTuner_v4_t*)t->sym)->destroy(ctx);
    default: return ((const ncclTuner_v5_t*)t->sym)->finalize(ctx);
  }
}

/* ---- guarded cost tables -------------------------------------------------------------------- */
/* A table of n floats at the end of a RW page followed by a PROT_NONE page (tail) or at the start
 * of a RW page preceded by one (head); the rest of the RW page is a sentinel pattern. */
typedef struct {
  unsigned char* base;
  float* tab;
  size_t n;
  int head;
} gtab_t;
#define SENT 0x7B
static void gtab_new(gtab_t* g, size_t n, int head) {
  size_t pg = 4096, need = (n * 4 + pg - 1) / pg * pg;
  if (need == 0) need = pg;
  g->base = mmap(0, need + 2 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  mprotect(g->base, pg, PROT_NONE);
  mprotect(g->base + pg + need, pg, PROT_NONE);
  memset(g->base + pg, SENT, need);
  g->n = n;
  g->head = head;
  g->tab = head ? (float*)(g->base + pg) : (float*)(g->base + pg + need - n * 4);
  g->base += pg; /* RW region start */
}
static size_t gtab_rw(gtab_t* g) {
  size_t r = (g->n * 4 + 4095) / 4096 * 4096;
  return r ? r : 4096;
}
static void gtab_free(gtab_t* g) {
  munmap(g->base - 4096, gtab_rw(g) + 8192);
}
/* Checks sentinels and the rules on entries; returns number of changed entries. */
static int gtab_check(gtab_t* g, const float* before, const char* what) {
  size_t rw = gtab_rw(g);
  unsigned char* t0 = (unsigned char*)g->tab;
  for (size_t i = 0; i < rw; i++) {
    unsigned char* p = g->base + i;
    if (p >= t0 && p < t0 + g->n * 4) continue;
    if (*p != SENT) {
      FAIL("%s: write outside numAlgo x numProto at byte %ld from table", what, (long)(p - t0));
      break;
    }
  }
  int ch = 0;
  for (size_t i = 0; i < g->n; i++) {
    float b = before[i], a = g->tab[i];
    if (memcmp(&a, &b, 4) == 0) continue;
    ch++;
    if (b == -1.0f) FAIL("%s: entry %zu was -1 and became %g", what, i, a);
    if (a == -1.0f) FAIL("%s: entry %zu set to -1 (was %g)", what, i, b);
  }
  return ch;
}

/* ---- traces --------------------------------------------------------------------------------- */
typedef struct {
  int coll;
  size_t nBytes;
  int pipe, na, np, nch;
  float c[64];
} call_t;
typedef struct {
  int nRanks, nNodes, n;
  call_t* c;
} trace_t;
static int trace_load(trace_t* tr, const char* path) {
  FILE* f = fopen(path, "re");
  if (!f) {
    FAIL("trace %s: %s", path, strerror(errno));
    return -1;
  }
  char line[8192];
  tr->n = 0;
  tr->c = calloc(2048, sizeof(call_t));
  tr->nRanks = 2;
  tr->nNodes = 2;
  while (fgets(line, sizeof line, f) && tr->n < 2048) {
    if (strncmp(line, "get,", 4)) continue;
    call_t* c = &tr->c[tr->n];
    char* s = line + 4;
    long v[9];
    for (int i = 0; i < 9; i++) v[i] = strtol(s, &s, 10), s++;
    tr->nRanks = v[1];
    tr->nNodes = v[2];
    c->coll = v[3];
    c->nBytes = v[4];
    c->pipe = v[5];
    c->na = v[6];
    c->np = v[7];
    c->nch = v[8];
    for (int i = 0; i < c->na * c->np && i < 64; i++) c->c[i] = strtof(s, &s), s++;
    tr->n++;
  }
  fclose(f);
  return 0;
}
static const char* env_trace(void) {
  const char* p = getenv("ADV_TRACE");
  return p ? p : "tests/traces/trace_tp_infer.csv";
}
static uint64_t fnv(uint64_t h, const void* p, size_t n) {
  const unsigned char* b = p;
  for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ULL;
  return h;
}
/* Replays a trace on ctx; returns the hash of all outputs; counts changed calls. */
static uint64_t trace_run(tuner_t* t, void* ctx, trace_t* tr, int* changed, const char* what) {
  uint64_t h = 1469598103934665603ULL;
  int chg = 0;
  for (int i = 0; i < tr->n; i++) {
    call_t* c = &tr->c[i];
    size_t n = c->na * c->np;
    gtab_t g;
    gtab_new(&g, n, i & 1);
    memcpy(g.tab, c->c, n * 4);
    int nch = c->nch;
    ncclResult_t r = tuner_get(t, ctx, c->coll, c->nBytes, c->pipe, g.tab, c->na, c->np, 0, &nch);
    if (r != ncclSuccess) FAIL("%s: getCollInfo returned %d", what, r);
    int ch = gtab_check(&g, c->c, what);
    if (nch < 0 || nch > 64) FAIL("%s: nChannels %d", what, nch);
    if (ch || nch != c->nch) chg++;
    h = fnv(h, g.tab, n * 4);
    h = fnv(h, &nch, sizeof nch);
    gtab_free(&g);
  }
  if (changed) *changed = chg;
  return h;
}

/* ---- host state snapshot -------------------------------------------------------------------- */
#define MAXFD 1024
typedef struct {
  struct sigaction sa[65];
  sigset_t mask;
  char loc[6][128];
  char locall[512];
  unsigned mxcsr;
  unsigned short x87cw, x87sw;
  fenv_t fe;
  int fdflags[MAXFD]; /* -1 closed, else FD_CLOEXEC bit */
  char fdname[3][256];
  char* env;
  char cwd[4096];
  mode_t um;
  int children;
  int threads;
} snap_t;
static const int g_lc[6] = {LC_CTYPE, LC_NUMERIC, LC_TIME, LC_COLLATE, LC_MONETARY, LC_MESSAGES};
static unsigned get_mxcsr(void) {
  unsigned m;
  __asm__ volatile("stmxcsr %0" : "=m"(m));
  return m;
}
static int count_children(void) {
  int n = 0;
  DIR* d = opendir("/proc/self/task");
  if (!d) return -1;
  struct dirent* e;
  while ((e = readdir(d))) {
    if (e->d_name[0] == '.') continue;
    char p[128], b[4096];
    snprintf(p, sizeof p, "/proc/self/task/%s/children", e->d_name);
    int fd = open(p, O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    ssize_t r = read(fd, b, sizeof b - 1);
    close(fd);
    if (r > 0) {
      b[r] = 0;
      for (char* s = b; *s; s++)
        if (*s == ' ') n++;
    }
  }
  closedir(d);
  return n;
}
static int count_threads(void) {
  FILE* f = fopen("/proc/self/status", "re");
  char l[256];
  int n = -1;
  while (f && fgets(l, sizeof l, f))
    if (!strncmp(l, "Threads:", 8)) n = atoi(l + 8);
  if (f) fclose(f);
  return n;
}
static void snap_take(snap_t* s) {
  memset(s, 0, sizeof *s);
  for (int i = 1; i < 65; i++) sigaction(i, 0, &s->sa[i]);
  pthread_sigmask(SIG_SETMASK, 0, &s->mask);
  for (int i = 0; i < 6; i++) snprintf(s->loc[i], 128, "%s", setlocale(g_lc[i], 0));
  snprintf(s->locall, sizeof s->locall, "%s", setlocale(LC_ALL, 0));
  s->mxcsr = get_mxcsr();
  __asm__ volatile("fnstcw %0" : "=m"(s->x87cw));
  __asm__ volatile("fnstsw %0" : "=m"(s->x87sw));
  fegetenv(&s->fe);
  for (int fd = 0; fd < MAXFD; fd++) {
    int f = fcntl(fd, F_GETFD);
    s->fdflags[fd] = f < 0 ? -1 : (f & FD_CLOEXEC);
  }
  for (int fd = 0; fd < 3; fd++) {
    char p[64];
    snprintf(p, sizeof p, "/proc/self/fd/%d", fd);
    ssize_t r = readlink(p, s->fdname[fd], 255);
    if (r < 0) r = 0;
    s->fdname[fd][r] = 0;
  }
  size_t tot = 1;
  for (char** e = environ; *e; e++) tot += strlen(*e) + 1;
  s->env = malloc(tot);
  s->env[0] = 0;
  char* q = s->env;
  for (char** e = environ; *e; e++) q = stpcpy(stpcpy(q, *e), "\n");
  if (!getcwd(s->cwd, sizeof s->cwd)) snprintf(s->cwd, sizeof s->cwd, "(getcwd: %s)", strerror(errno));
  s->um = umask(022);
  umask(s->um);
  s->children = count_children();
  s->threads = count_threads();
}
/* Signals whose change is documented (HotSpot's SEGV/BUS/FPE/ILL and its SR signal). */
static int sig_documented(int i) {
  return i == SIGSEGV || i == SIGBUS || i == SIGFPE || i == SIGILL;
}
static int g_doc_sig_changes;
static int snap_diff(const snap_t* a, const snap_t* b, const char* what, int check_mask) {
  int bad = 0;
  for (int i = 1; i < 65; i++) {
    if (i == SIGKILL || i == SIGSTOP) continue;
    const struct sigaction *x = &a->sa[i], *y = &b->sa[i];
    if (x->sa_handler != y->sa_handler || (x->sa_flags & ~0x04000000) != (y->sa_flags & ~0x04000000) ||
        memcmp(&x->sa_mask, &y->sa_mask, 8)) {
      if (sig_documented(i)) {
        g_doc_sig_changes++;
        rep("NOTE: %s: documented disposition change of signal %d (%s)", what, i, strsignal(i));
      } else if (i == SIGRTMAX && x->sa_handler == SIG_DFL) {
        g_doc_sig_changes++;
        rep("NOTE: %s: documented SR signal %d now handled (handler %p flags %#x)", what, i, (void*)y->sa_handler,
            y->sa_flags);
      } else {
        FAIL("%s: signal %d (%s) disposition %p/%#x -> %p/%#x", what, i, strsignal(i), (void*)x->sa_handler,
             x->sa_flags, (void*)y->sa_handler, y->sa_flags);
        bad++;
      }
    }
  }
  if (check_mask && memcmp(&a->mask, &b->mask, sizeof a->mask)) {
    char l[400] = "";
    for (int i = 1; i < 65; i++)
      if (sigismember(&a->mask, i) != sigismember(&b->mask, i))
        snprintf(l + strlen(l), sizeof l - strlen(l), " %d:%s", i, sigismember(&b->mask, i) ? "blocked" : "unblocked");
    FAIL("%s: signal mask of the calling thread changed:%s", what, l);
    bad++;
  }
  if (strcmp(a->locall, b->locall)) {
    FAIL("%s: locale '%s' -> '%s'", what, a->locall, b->locall);
    bad++;
  }
  if (a->mxcsr != b->mxcsr) {
    FAIL("%s: MXCSR %#x -> %#x", what, a->mxcsr, b->mxcsr);
    bad++;
  }
  if (a->x87cw != b->x87cw) {
    FAIL("%s: x87 control word %#x -> %#x", what, a->x87cw, b->x87cw);
    bad++;
  }
  if ((a->x87sw & 0x3f) != (b->x87sw & 0x3f)) {
    FAIL("%s: x87 status flags %#x -> %#x", what, a->x87sw & 0x3f, b->x87sw & 0x3f);
    bad++;
  }
  for (int fd = 0; fd < MAXFD; fd++) {
    if (fd == RFD) continue;
    if (a->fdflags[fd] == b->fdflags[fd]) continue;
    char p[64], t[256] = "";
    snprintf(p, sizeof p, "/proc/self/fd/%d", fd);
    ssize_t r = readlink(p, t, 255);
    if (r > 0) t[r] = 0;
    if (a->fdflags[fd] == -1 && b->fdflags[fd] == FD_CLOEXEC && fd > 2) {
      continue; /* a new close-on-exec fd of the plugin's: allowed */
    }
    FAIL("%s: fd %d flags %d -> %d (%s)", what, fd, a->fdflags[fd], b->fdflags[fd], t);
    bad++;
  }
  for (int fd = 0; fd < 3; fd++)
    if (strcmp(a->fdname[fd], b->fdname[fd])) {
      FAIL("%s: fd %d now points at %s (was %s)", what, fd, b->fdname[fd], a->fdname[fd]);
      bad++;
    }
  if (strcmp(a->env, b->env)) {
    FAIL("%s: environment changed", what);
    bad++;
  }
  if (strcmp(a->cwd, b->cwd)) {
    FAIL("%s: cwd %s -> %s", what, a->cwd, b->cwd);
    bad++;
  }
  if (a->um != b->um) {
    FAIL("%s: umask %o -> %o", what, a->um, b->um);
    bad++;
  }
  if (a->children != b->children) {
    FAIL("%s: children %d -> %d", what, a->children, b->children);
    bad++;
  }
  rep("INFO: %s: threads %d -> %d", what, a->threads, b->threads);
  return bad;
}

#endif
