/* adv.c -- hostile hosts for the nccl-tuner-java plugin (one process per case: adv CASE [ARGS]).
 * Exit 0: the host saw nothing wrong; 1: the host measured a promise violation (FAIL lines in the
 * report); 2: usage; anything else (a signal, 124 from timeout): the host itself died or hung.
 * Report lines go to $ADV_REPORT (or a dup of fd 2 at fd 900 when unset). */
#define _GNU_SOURCE
#include <sched.h>
#include <sys/time.h>
#include <setjmp.h>
#include <spawn.h>
#include <sys/resource.h>
#include <ucontext.h>

#include "adv.h"

static trace_t g_tr;
static tuner_t g_t;

static void summary(const char* what, uint64_t h, int changed) {
  rep("HASH %s %016llx changed %d of %d warns %d", what, (unsigned long long)h, changed, g_tr.n, atomic_load(&g_warns));
}

/* One communicator: init, the trace, destroy. */
static uint64_t one_comm(tuner_t* t, uint64_t commId, int* changed, const char* what) {
  void* ctx = 0;
  ncclResult_t r = tuner_init(t, g_tr.nRanks, g_tr.nNodes, commId, adv_log, &ctx);
  if (r != ncclSuccess) FAIL("%s: init returned %d", what, r);
  uint64_t h = trace_run(t, ctx, &g_tr, changed, what);
  r = tuner_fin(t, ctx);
  if (r != ncclSuccess) FAIL("%s: destroy returned %d", what, r);
  return h;
}

/* Children: exec ourselves as "fdcheck", which exits with the number of fds > 2 it inherited. */
static int fdcheck_main(void) {
  int n = 0;
  const char* lg = getenv("ADV_FDLOG");
  FILE* f = lg ? fopen(lg, "ae") : 0;
  for (int fd = 3; fd < 4096; fd++)
    if (fcntl(fd, F_GETFD) >= 0) {
      n++;
      char p[64], t[512] = "";
      snprintf(p, sizeof p, "/proc/self/fd/%d", fd);
      ssize_t r = readlink(p, t, 511);
      if (r > 0) t[r] = 0;
      if (f && fd != fileno(f)) fprintf(f, "%d %s\n", fd, t);
    }
  if (f) n--, fclose(f);
  _exit(n > 100 ? 100 : n);
}
static int g_child_fds0 = -1;
static void exec_child_check(const char* what) {
  char* av[] = {"/proc/self/exe", "fdcheck", 0};
  pid_t p = vfork();
  if (p == 0) {
    execv("/proc/self/exe", av);
    _exit(127);
  }
  int st;
  waitpid(p, &st, 0);
  int n = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  pid_t q;
  int n2 = -2;
  if (posix_spawn(&q, "/proc/self/exe", 0, 0, av, environ) == 0) {
    waitpid(q, &st, 0);
    n2 = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  }
  if (g_child_fds0 < 0) {
    g_child_fds0 = n;
    rep("INFO: %s: children inherit %d fds above 2 from the host's own parent", what, n);
  } else if (n != g_child_fds0 || n2 != g_child_fds0)
    FAIL("%s: exec'd children inherit %d (vfork) / %d (posix_spawn) fds above 2, %d before init", what, n, n2,
         g_child_fds0);
}

static int c_state(void) {
  snap_t a, b;
  snap_take(&a);
  exec_child_check("before");
  if (tuner_open(&g_t, env_ver())) return 1;
  int changed;
  uint64_t h = one_comm(&g_t, 0x1234, &changed, "state");
  exec_child_check("after");
  dlclose(g_t.h);
  snap_take(&b);
  snap_diff(&a, &b, "state", 1);
  summary("state", h, changed);
  return 0;
}

/* ---- threads in odd states during the first init --------------------------------------------- */
static atomic_int g_stop, g_usr1, g_prof, g_usr2;
static atomic_long g_maxgap_ns;
static void h_usr1(int s) {
  (void)s;
  atomic_fetch_add(&g_usr1, 1);
}
static void h_prof(int s) {
  (void)s;
  atomic_fetch_add(&g_prof, 1);
}
static void h_usr2(int s) {
  (void)s;
  atomic_fetch_add(&g_usr2, 1);
}
static void* th_storm(void* a) {
  pthread_t main = *(pthread_t*)a;
  while (!atomic_load(&g_stop)) {
    kill(getpid(), SIGUSR1);
    pthread_kill(main, SIGUSR1);
  }
  return 0;
}
static void* th_suspend(void* a) {
  (void)a;
  sigset_t m;
  sigfillset(&m);
  sigdelset(&m, SIGUSR2);
  int before = atomic_load(&g_usr2);
  while (atomic_load(&g_usr2) == before) sigsuspend(&m);
  return 0;
}
static void* th_spin(void* a) {
  (void)a;
  double last = now_s();
  while (!atomic_load(&g_stop)) {
    double t = now_s();
    long gap = (long)((t - last) * 1e9);
    if (gap > atomic_load(&g_maxgap_ns)) atomic_store(&g_maxgap_ns, gap);
    last = t;
  }
  return 0;
}
/* The monitor polls what must not change, even for a moment. */
static snap_t g_mon0;
static atomic_int g_mon_sig, g_mon_loc, g_mon_env, g_mon_cwd, g_mon_iter, g_mon_numeric;
static char g_mon_what[256];
static _Atomic unsigned long long g_mon_sigset;
static void* th_monitor(void* a) {
  (void)a;
  const char* jto0 = getenv("JAVA_TOOL_OPTIONS");
  char jto[512];
  snprintf(jto, sizeof jto, "%s", jto0 ? jto0 : "(unset)");
  while (!atomic_load(&g_stop)) {
    atomic_fetch_add(&g_mon_iter, 1);
    for (int i = 1; i < 65; i++) {
      if (i == SIGKILL || i == SIGSTOP || sig_documented(i) || i == SIGRTMAX) continue;
      struct sigaction s;
      sigaction(i, 0, &s);
      if (s.sa_handler != g_mon0.sa[i].sa_handler || s.sa_flags != g_mon0.sa[i].sa_flags) {
        atomic_fetch_or(&g_mon_sigset, 1ull << i);
        if (!atomic_fetch_add(&g_mon_sig, 1))
          snprintf(g_mon_what, sizeof g_mon_what, "signal %d handler %p (was %p)", i, (void*)s.sa_handler,
                   (void*)g_mon0.sa[i].sa_handler);
      }
    }
    const char* l = setlocale(LC_ALL, 0);
    if (strcmp(l, g_mon0.locall)) atomic_fetch_add(&g_mon_loc, 1);
    char b[32];
    snprintf(b, sizeof b, "%.1f", 0.5);
    if (strcmp(b, "0.5")) atomic_fetch_add(&g_mon_numeric, 1);
    const char* j = getenv("JAVA_TOOL_OPTIONS");
    if (strcmp(j ? j : "(unset)", jto)) atomic_fetch_add(&g_mon_env, 1);
    char cwd[4096];
    if (!getcwd(cwd, sizeof cwd) || strcmp(cwd, g_mon0.cwd)) atomic_fetch_add(&g_mon_cwd, 1);
  }
  return 0;
}

static int c_threads(int argc, char** argv) {
  int storm = 0, susp = 0, prof = 0, spin = 0, mon = 0;
  for (int i = 2; i < argc; i++) {
    if (!strcmp(argv[i], "storm")) storm = 1;
    if (!strcmp(argv[i], "suspend")) susp = 1;
    if (!strcmp(argv[i], "prof")) prof = 1;
    if (!strcmp(argv[i], "spin")) spin = 1;
    if (!strcmp(argv[i], "monitor")) mon = 1;
  }
  struct sigaction sa = {0};
  sa.sa_handler = h_usr1;
  sa.sa_flags = SA_RESTART;
  sigaction(SIGUSR1, &sa, 0);
  sa.sa_handler = h_usr2;
  sigaction(SIGUSR2, &sa, 0);
  sa.sa_handler = h_prof;
  sigaction(SIGPROF, &sa, 0);
  snap_t a, b;
  snap_take(&a);
  g_mon0 = a;
  pthread_t self = pthread_self(), ts[5];
  int nt = 0;
  if (storm) pthread_create(&ts[nt++], 0, th_storm, &self);
  pthread_t tsusp;
  if (susp) pthread_create(&tsusp, 0, th_suspend, 0);
  if (spin) pthread_create(&ts[nt++], 0, th_spin, 0);
  if (mon) pthread_create(&ts[nt++], 0, th_monitor, 0);
  if (prof) {
    struct itimerval it = {{0, 1000}, {0, 1000}};
    setitimer(ITIMER_PROF, &it, 0);
  }
  usleep(20000);
  if (tuner_open(&g_t, env_ver())) return 1;
  double t0 = now_s();
  void* ctx = 0;
  ncclResult_t r = tuner_init(&g_t, g_tr.nRanks, g_tr.nNodes, 7, adv_log, &ctx);
  double t1 = now_s();
  if (r) FAIL("threads: init returned %d", r);
  int changed;
  uint64_t h = trace_run(&g_t, ctx, &g_tr, &changed, "threads");
  tuner_fin(&g_t, ctx);
  int u0 = atomic_load(&g_usr1), p0 = atomic_load(&g_prof);
  usleep(50000);
  if (prof) {
    struct itimerval it = {{0, 0}, {0, 0}};
    setitimer(ITIMER_PROF, &it, 0);
  }
  atomic_store(&g_stop, 1);
  for (int i = 0; i < nt; i++) pthread_join(ts[i], 0);
  if (susp) {
    pthread_kill(tsusp, SIGUSR2);
    struct timespec d;
    clock_gettime(CLOCK_REALTIME, &d);
    d.tv_sec += 5;
    if (pthread_timedjoin_np(tsusp, 0, &d)) FAIL("threads: the sigsuspend thread did not wake on its SIGUSR2");
  }
  if (storm && atomic_load(&g_usr1) <= u0) FAIL("threads: SIGUSR1 handler stopped running after init");
  (void)p0;
  rep("INFO: init took %.3f s; usr1 %d prof %d; spinner max gap %.1f ms; monitor iterations %d", t1 - t0,
      atomic_load(&g_usr1), atomic_load(&g_prof), atomic_load(&g_maxgap_ns) / 1e6, atomic_load(&g_mon_iter));
  if (spin && atomic_load(&g_maxgap_ns) > 200000000L)
    rep("NOTE: a spinning host thread was stalled %.1f ms during init", atomic_load(&g_maxgap_ns) / 1e6);
  if (mon) {
    if (atomic_load(&g_mon_sig)) {
      char l[512] = "";
      for (int i = 1; i < 65; i++)
        if (atomic_load(&g_mon_sigset) & (1ull << i)) snprintf(l + strlen(l), sizeof l - strlen(l), " %d", i);
      FAIL("threads: transient signal disposition change seen %d times, signals%s; first: %s", g_mon_sig, l,
           g_mon_what);
    }
    if (atomic_load(&g_mon_loc)) FAIL("threads: transient locale change seen %d times", g_mon_loc);
    if (atomic_load(&g_mon_numeric))
      FAIL("threads: printf(\"%%.1f\") gave a non-'.' decimal point %d times", g_mon_numeric);
    if (atomic_load(&g_mon_env)) FAIL("threads: JAVA_TOOL_OPTIONS seen changed %d times", g_mon_env);
    if (atomic_load(&g_mon_cwd)) FAIL("threads: cwd seen changed %d times", g_mon_cwd);
  }
  sa.sa_handler = SIG_DFL;
  snap_take(&b);
  /* the host's own handlers are still in place; compare */
  snap_diff(&a, &b, "threads", 1);
  summary("threads", h, changed);
  return 0;
}

/* ---- pthread_cancel of the init thread ------------------------------------------------------ */
static void* th_init(void* a) {
  (void)a;
  void* ctx = 0;
  int old;
  pthread_setcanceltype(getenv("ADV_ASYNC") ? PTHREAD_CANCEL_ASYNCHRONOUS : PTHREAD_CANCEL_DEFERRED, &old);
  tuner_init(&g_t, g_tr.nRanks, g_tr.nNodes, 1, adv_log, &ctx);
  int changed;
  trace_run(&g_t, ctx, &g_tr, &changed, "cancelled-thread");
  tuner_fin(&g_t, ctx);
  return 0;
}
static int c_cancel(int argc, char** argv) {
  long us = argc > 2 ? atol(argv[2]) : 1000;
  if (tuner_open(&g_t, env_ver())) return 1;
  pthread_t t;
  pthread_create(&t, 0, th_init, 0);
  usleep(us);
  pthread_cancel(t);
  struct timespec d;
  clock_gettime(CLOCK_REALTIME, &d);
  d.tv_sec += 30;
  void* rv;
  int jr = pthread_timedjoin_np(t, &rv, &d);
  if (jr) FAIL("cancel: the cancelled init thread did not end in 30 s");
  rep("INFO: cancel after %ld us: thread %s", us, rv == PTHREAD_CANCELED ? "cancelled" : "finished");
  /* a later communicator in another thread must work (or step aside) and not hang */
  double t0 = now_s();
  int changed;
  uint64_t h = one_comm(&g_t, 2, &changed, "after-cancel");
  rep("INFO: second init+trace took %.3f s", now_s() - t0);
  summary("cancel", h, changed);
  return 0;
}

/* ---- small stacks and coroutines ------------------------------------------------------------ */
static uint64_t g_h;
static int g_changed;
static void* th_comm(void* a) {
  (void)a;
  g_h = one_comm(&g_t, 3, &g_changed, "thread");
  return 0;
}
static int c_stack(int argc, char** argv) {
  long kib = argc > 2 ? atol(argv[2]) : 64;
  if (tuner_open(&g_t, env_ver())) return 1;
  if (getenv("ADV_PREINIT")) { /* JVM already started by main */
    int c;
    one_comm(&g_t, 9, &c, "preinit");
  }
  pthread_attr_t at;
  pthread_attr_init(&at);
  if (pthread_attr_setstacksize(&at, kib * 1024)) FAIL("stack: setstacksize %ld KiB refused", kib);
  pthread_t t;
  pthread_create(&t, &at, th_comm, 0);
  pthread_join(t, 0);
  summary("stack", g_h, g_changed);
  return 0;
}
static ucontext_t g_uc_main, g_uc_co;
static void co_fn(void) {
  g_h = one_comm(&g_t, 4, &g_changed, "coroutine");
}
static int c_coro(int argc, char** argv) {
  long kib = argc > 2 ? atol(argv[2]) : 64;
  if (tuner_open(&g_t, env_ver())) return 1;
  if (getenv("ADV_PREINIT")) {
    int c;
    one_comm(&g_t, 9, &c, "preinit");
  }
  size_t sz = kib * 1024;
  unsigned char* st = mmap(0, sz + 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  mprotect(st, 4096, PROT_NONE); /* guard page below the coroutine's stack */
  getcontext(&g_uc_co);
  g_uc_co.uc_stack.ss_sp = st + 4096;
  g_uc_co.uc_stack.ss_size = sz;
  g_uc_co.uc_link = &g_uc_main;
  makecontext(&g_uc_co, co_fn, 0);
  swapcontext(&g_uc_main, &g_uc_co);
  summary("coro", g_h, g_changed);
  return 0;
}

/* ---- many communicators in many threads across dlclose/dlopen cycles ------------------------- */
typedef struct {
  tuner_t* t;
  int id;
  uint64_t h;
  int changed;
} cw_t;
static void* th_cw(void* a) {
  cw_t* w = a;
  w->h = one_comm(w->t, 100 + w->id, &w->changed, "concurrent");
  return 0;
}
static int c_concurrent(int argc, char** argv) {
  int nt = argc > 2 ? atoi(argv[2]) : 16, cyc = argc > 3 ? atoi(argv[3]) : 5;
  uint64_t ref = 0;
  int refc = -1, bad = 0;
  for (int c = 0; c < cyc; c++) {
    tuner_t t;
    if (tuner_open(&t, 3 + (c % 5))) return 1;
    pthread_t th[256];
    cw_t w[256];
    for (int i = 0; i < nt; i++) {
      w[i] = (cw_t){&t, i, 0, 0};
      pthread_create(&th[i], 0, th_cw, &w[i]);
    }
    for (int i = 0; i < nt; i++) {
      pthread_join(th[i], 0);
      if (refc < 0) ref = w[i].h, refc = w[i].changed;
      if (w[i].changed != refc) bad++;
    }
    dlclose(t.h);
  }
  if (bad) FAIL("concurrent: %d communicators changed a different number of calls than the first (%d)", bad, refc);
  summary("concurrent", ref, refc);
  return 0;
}

/* ---- fork in another thread during init; fork after init ------------------------------------- */
static atomic_int g_forks, g_fork_bad;
static void child_body(void) {
  const char* m = getenv("ADV_CHILD");
  if (m && !strcmp(m, "call")) {
    void* ctx = 0;
    tuner_init(&g_t, 2, 2, 5, adv_log, &ctx);
    int c;
    trace_run(&g_t, ctx, &g_tr, &c, "child");
    tuner_fin(&g_t, ctx);
  }
  exit(0); /* atexit handlers run */
}
static void reap_with_timeout(pid_t p, const char* what) {
  double t0 = now_s();
  int st;
  for (;;) {
    pid_t r = waitpid(p, &st, WNOHANG);
    if (r == p) break;
    if (now_s() - t0 > 15) {
      kill(p, SIGKILL);
      waitpid(p, &st, 0);
      atomic_fetch_add(&g_fork_bad, 1);
      rep("FAIL: %s: child %d hung (killed after 15 s)", what, p);
      g_fail++;
      return;
    }
    usleep(2000);
  }
  if (!WIFEXITED(st) || WEXITSTATUS(st)) {
    atomic_fetch_add(&g_fork_bad, 1);
    rep("FAIL: %s: child ended with status %#x", what, st);
    g_fail++;
  }
}
static void* th_forker(void* a) {
  long us = (long)a;
  usleep(us);
  while (!atomic_load(&g_stop)) {
    pid_t p = fork();
    if (p == 0) child_body();
    atomic_fetch_add(&g_forks, 1);
    reap_with_timeout(p, "fork-during-init");
    if (atomic_load(&g_forks) > 200) break;
  }
  return 0;
}
static int c_fork(int argc, char** argv) {
  long us = argc > 2 ? atol(argv[2]) : 0;
  if (tuner_open(&g_t, env_ver())) return 1;
  pthread_t f;
  pthread_create(&f, 0, th_forker, (void*)us);
  int changed;
  uint64_t h = one_comm(&g_t, 6, &changed, "fork-parent");
  atomic_store(&g_stop, 1);
  pthread_join(f, 0);
  rep("INFO: %d children forked during init", atomic_load(&g_forks));
  /* fork after the JVM runs; the child ends with exit() */
  for (int i = 0; i < 3; i++) {
    pid_t p = fork();
    if (p == 0) child_body();
    reap_with_timeout(p, "fork-after-init");
  }
  summary("fork", h, changed);
  return 0;
}

/* ---- stdio closed / redirected -------------------------------------------------------------- */
static int c_stdio_closed(void) {
  close(0);
  close(1);
  close(2);
  snap_t a, b;
  snap_take(&a);
  if (tuner_open(&g_t, env_ver())) return 1;
  int changed;
  uint64_t h = one_comm(&g_t, 8, &changed, "stdio-closed");
  snap_take(&b);
  for (int fd = 0; fd < 3; fd++)
    if (fcntl(fd, F_GETFD) >= 0) {
      char p[64], t[256] = "";
      snprintf(p, sizeof p, "/proc/self/fd/%d", fd);
      ssize_t r = readlink(p, t, 255);
      if (r > 0) t[r] = 0;
      FAIL("stdio-closed: fd %d taken by the plugin (%s)", fd, t);
    }
  /* host's next open must get fd 0 */
  int fd = open("/dev/null", O_RDONLY);
  if (fd != 0) FAIL("stdio-closed: the host's next open() got fd %d, not 0", fd);
  snap_diff(&a, &b, "stdio-closed", 1);
  summary("stdio-closed", h, changed);
  return 0;
}

/* ---- cost tables of odd shapes and values --------------------------------------------------- */
static int c_tables(void) {
  if (tuner_open(&g_t, env_ver())) return 1;
  void* ctx = 0;
  if (tuner_init(&g_t, 2, 2, 11, adv_log, &ctx)) FAIL("tables: init");
  int shapes[][2] = {{7, 3}, {6, 3}, {8, 3}, {7, 4}, {7, 2},  {2, 3},  {1, 1},  {0, 3},
                     {7, 0}, {0, 0}, {1, 3}, {3, 1}, {16, 8}, {-1, 3}, {7, -3}, {100, 100}};
  float vals[] = {-1,    0,     1,      1e-30f, 1e30f, __builtin_inff(), -__builtin_inff(), __builtin_nanf(""),
                  -0.0f, -2.0f, 1e-45f, 3.4e38f};
  size_t sizes[] = {0, 1, 16, 4096, 32768, 1 << 20, 64u << 20, (size_t)1 << 40, SIZE_MAX, SIZE_MAX / 2};
  int pipes[] = {0, 1, -1, 1000000, 0x7fffffff};
  int colls[] = {4, 0, 2, 3, 5, 8, -1, 100};
  unsigned seed = 1;
  int calls = 0;
  for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
    for (size_t b = 0; b < sizeof sizes / sizeof *sizes; b++)
      for (int pat = 0; pat < 6; pat++) {
        int na = shapes[s][0], np = shapes[s][1];
        size_t n = (na > 0 && np > 0) ? (size_t)na * np : 0;
        gtab_t g;
        gtab_new(&g, n, pat & 1);
        float before[10000];
        for (size_t i = 0; i < n; i++) {
          seed = seed * 1103515245 + 12345;
          float v;
          switch (pat) {
            case 0: v = -1; break;                                     /* everything unavailable */
            case 1: v = vals[(seed >> 16) % (sizeof vals / 4)]; break; /* NaN, inf, denormals */
            case 2: v = (i % 3 == 2) ? -1 : 10.0f + i; break;
            case 3: v = __builtin_nanf(""); break;
            case 4: v = (i / 3 == 0) ? -1 : 5; break; /* TREE row all -1 */
            default: v = 100.0f - i; break;
          }
          before[i] = g.tab[i] = v;
        }
        int nch = (pat == 5) ? 1000 : (pat == 4 ? -5 : 0);
        int nch0 = nch;
        int coll = colls[(s + b + pat) % 8];
        ncclResult_t r = tuner_get(&g_t, ctx, coll, sizes[b], pipes[(b + pat) % 5], g.tab, na, np, pat & 1, &nch);
        calls++;
        char what[128];
        snprintf(what, sizeof what, "tables %dx%d nBytes %zu pat %d coll %d", na, np, sizes[b], pat, coll);
        if (r) FAIL("%s: returned %d", what, r);
        gtab_check(&g, before, what);
        if (nch != nch0 && (nch < 0 || nch > 64)) FAIL("%s: nChannels set to %d", what, nch);
        if (nch0 == 0 && nch != 0 && (nch < 1 || nch > 64)) FAIL("%s: nChannels %d", what, nch);
        gtab_free(&g);
      }
  /* a NULL cost table pointer and a NULL nChannels pointer with a positive shape */
  int nch = 0;
  ncclResult_t r = tuner_get(&g_t, ctx, 4, 65536, 1, 0, 7, 3, 0, &nch);
  rep("INFO: NULL table -> %d", r);
  if (r) FAIL("tables: NULL table returned %d", r);
  tuner_fin(&g_t, ctx);
  rep("INFO: %d odd calls", calls);
  summary("tables", 0, 0);
  return 0;
}

/* ---- the logger: NULL, or one that calls back into the plugin ------------------------------- */
static atomic_int g_reenter_depth, g_reenters;
static void reenter_hook(int level) {
  (void)level;
  if (atomic_fetch_add(&g_reenter_depth, 1) == 0 && atomic_fetch_add(&g_reenters, 1) < 20) {
    void* ctx = 0;
    tuner_init(&g_t, 2, 2, 99, adv_log, &ctx);
    float tab[21];
    for (int i = 0; i < 21; i++) tab[i] = 5;
    int nch = 0;
    tuner_get(&g_t, ctx, 4, 65536, 1, tab, 7, 3, 0, &nch);
    tuner_fin(&g_t, ctx);
  }
  atomic_fetch_sub(&g_reenter_depth, 1);
}
static int c_log(int argc, char** argv) {
  const char* m = argc > 2 ? argv[2] : "null";
  if (tuner_open(&g_t, env_ver())) return 1;
  void* ctx = 0;
  ncclDebugLogger_t lf = adv_log;
  if (!strcmp(m, "null")) lf = 0;
  if (!strcmp(m, "reenter")) g_log_hook = reenter_hook;
  ncclResult_t r = tuner_init(&g_t, g_tr.nRanks, g_tr.nNodes, 12, lf, &ctx);
  if (r) FAIL("log %s: init returned %d", m, r);
  int changed;
  uint64_t h = trace_run(&g_t, ctx, &g_tr, &changed, "log");
  tuner_fin(&g_t, ctx);
  rep("INFO: reentries %d", atomic_load(&g_reenters));
  summary("log", h, changed);
  return 0;
}

/* ---- signals after init --------------------------------------------------------------------- */
static pid_t g_hosttids[16];
static int g_nhost;
static atomic_int g_wrongtid, g_gottid;
static void h_tid(int s) {
  (void)s;
  pid_t me = syscall(SYS_gettid);
  int ok = 0;
  for (int i = 0; i < g_nhost; i++)
    if (g_hosttids[i] == me) ok = 1;
  if (!ok) atomic_fetch_add(&g_wrongtid, 1);
  atomic_fetch_add(&g_gottid, 1);
}
static int c_sigtid(void) {
  struct sigaction sa = {0};
  sa.sa_handler = h_tid;
  sa.sa_flags = SA_RESTART;
  sigaction(SIGUSR1, &sa, 0);
  sigaction(SIGALRM, &sa, 0);
  sigaction(SIGRTMIN + 5, &sa, 0);
  g_hosttids[g_nhost++] = syscall(SYS_gettid);
  if (tuner_open(&g_t, env_ver())) return 1;
  int changed;
  uint64_t h = one_comm(&g_t, 13, &changed, "sigtid");
  /* block them in the main thread: a process-directed signal must then wait for a host thread;
   * with no host thread unblocked it stays pending (goes nowhere else) */
  for (int i = 0; i < 2000; i++) {
    kill(getpid(), (i % 3 == 0) ? SIGUSR1 : (i % 3 == 1) ? SIGALRM : SIGRTMIN + 5);
    if (i % 50 == 0) usleep(100);
  }
  usleep(100000);
  if (atomic_load(&g_wrongtid)) FAIL("sigtid: %d process-directed signals ran on a plugin thread", g_wrongtid);
  rep("INFO: %d signals handled", atomic_load(&g_gottid));
  /* now SIGTERM/SIGINT/SIGQUIT/SIGHUP/SIGUSR2/SIGPIPE blocked in the host, consumed by sigwait */
  sigset_t m;
  sigemptyset(&m);
  int sigs[] = {SIGTERM, SIGINT, SIGQUIT, SIGHUP, SIGUSR2, SIGPIPE, SIGTSTP, SIGWINCH, SIGCHLD, SIGXCPU};
  for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) sigaddset(&m, sigs[i]);
  pthread_sigmask(SIG_BLOCK, &m, 0);
  int got = 0;
  for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) {
    kill(getpid(), sigs[i]);
    struct timespec to = {2, 0};
    siginfo_t si;
    int s = sigtimedwait(&m, &si, &to);
    if (s == sigs[i]) got++;
    else FAIL("sigtid: process-directed %s not received by the host's sigwait (got %d)", strsignal(sigs[i]), s);
  }
  rep("INFO: sigwait got %d", got);
  summary("sigtid", h, changed);
  return 0;
}
static sigjmp_buf g_jb;
static atomic_int g_segv_host;
static void h_segv(int s, siginfo_t* si, void* uc) {
  (void)s;
  (void)si;
  (void)uc;
  atomic_fetch_add(&g_segv_host, 1);
  siglongjmp(g_jb, 1);
}
static int c_segvchain(int argc, char** argv) {
  int after = argc > 2 && !strcmp(argv[2], "after");
  struct sigaction sa = {0};
  sa.sa_sigaction = h_segv;
  sa.sa_flags = SA_SIGINFO | SA_NODEFER;
  if (!after) sigaction(SIGSEGV, &sa, 0), sigaction(SIGBUS, &sa, 0);
  if (tuner_open(&g_t, env_ver())) return 1;
  int changed;
  uint64_t h = one_comm(&g_t, 14, &changed, "segvchain");
  if (after) sigaction(SIGSEGV, &sa, 0);
  for (int i = 0; i < 5; i++) {
    if (!sigsetjmp(g_jb, 1)) {
      volatile int* p = (int*)(uintptr_t)(16 + i * 8);
      (void)*p;
    }
  }
  if (atomic_load(&g_segv_host) != 5) FAIL("segvchain: host SIGSEGV handler ran %d of 5 times", g_segv_host);
  /* the plugin still works after the host's faults */
  void* ctx = 0;
  tuner_init(&g_t, g_tr.nRanks, g_tr.nNodes, 15, adv_log, &ctx);
  int c2;
  uint64_t h2 = trace_run(&g_t, ctx, &g_tr, &c2, "segvchain-2");
  tuner_fin(&g_t, ctx);
  if (h2 != h) FAIL("segvchain: decisions differ after host faults");
  summary("segvchain", h, changed);
  return 0;
}

/* ---- FP environment ------------------------------------------------------------------------- */
static int c_fp(int argc, char** argv) {
  const char* m = argc > 2 ? argv[2] : "traps";
  if (!strcmp(m, "traps")) feenableexcept(FE_DIVBYZERO | FE_INVALID | FE_OVERFLOW);
  if (!strcmp(m, "alltraps")) feenableexcept(FE_ALL_EXCEPT & ~FE_INEXACT);
  if (!strcmp(m, "ftz")) {
    unsigned x = get_mxcsr() | 0x8040; /* FTZ | DAZ */
    __asm__ volatile("ldmxcsr %0" ::"m"(x));
  }
  if (!strcmp(m, "round")) fesetround(FE_UPWARD);
  if (!strcmp(m, "flags")) feraiseexcept(FE_INEXACT | FE_UNDERFLOW);
  if (!strcmp(m, "x87")) {
    unsigned short cw;
    __asm__ volatile("fnstcw %0" : "=m"(cw));
    cw = (cw & ~0x300); /* single precision */
    __asm__ volatile("fldcw %0" ::"m"(cw));
  }
  if (!strcmp(m, "clear")) feclearexcept(FE_ALL_EXCEPT);
  snap_t a, b;
  snap_take(&a);
  if (tuner_open(&g_t, env_ver())) return 1;
  int changed;
  uint64_t h = one_comm(&g_t, 16, &changed, "fp");
  /* NaN/inf tables too */
  void* ctx = 0;
  tuner_init(&g_t, 2, 2, 17, adv_log, &ctx);
  float tab[21];
  float vv[] = {__builtin_nanf(""), __builtin_inff(), 1e-42f, 3e38f, -1, 0, -0.0f};
  for (int k = 0; k < 50; k++) {
    for (int i = 0; i < 21; i++) tab[i] = vv[(i + k) % 7];
    int nch = 0;
    tuner_get(&g_t, ctx, 4, (size_t)1 << (k % 40), 1, tab, 7, 3, 0, &nch);
  }
  tuner_fin(&g_t, ctx);
  snap_take(&b);
  if (memcmp(&a.fe, &b.fe, sizeof a.fe)) rep("NOTE: fenv_t bytes differ");
  snap_diff(&a, &b, "fp", 1);
  summary("fp", h, changed);
  return 0;
}

/* ---- exit while the plugin is busy ---------------------------------------------------------- */
static void* th_calls(void* a) {
  (void)a;
  void* ctx = 0;
  tuner_init(&g_t, g_tr.nRanks, g_tr.nNodes, 20 + (long)a, adv_log, &ctx);
  int c;
  for (;;) trace_run(&g_t, ctx, &g_tr, &c, "busy");
  return 0;
}
static int c_exit(int argc, char** argv) {
  const char* m = argc > 2 ? argv[2] : "calls";
  long us = argc > 3 ? atol(argv[3]) : 0;
  if (tuner_open(&g_t, env_ver())) return 1;
  if (!strcmp(m, "calls")) {
    int c;
    one_comm(&g_t, 19, &c, "pre");
  }
  pthread_t t[4];
  for (long i = 0; i < 4; i++) pthread_create(&t[i], 0, th_calls, (void*)i);
  usleep(us);
  rep("INFO: exit(0) now");
  exit(0);
}

/* ---- NULL contexts, double init on one ctx pointer ----------------------------------------- */
static int c_nullctx(void) {
  if (tuner_open(&g_t, env_ver())) return 1;
  float tab[21];
  for (int i = 0; i < 21; i++) tab[i] = 5;
  int nch = 0;
  ncclResult_t r = tuner_get(&g_t, 0, 4, 65536, 1, tab, 7, 3, 0, &nch);
  if (r) FAIL("nullctx: getCollInfo(NULL) before any init returned %d", r);
  r = tuner_fin(&g_t, 0);
  if (r) FAIL("nullctx: destroy(NULL) returned %d", r);
  int changed;
  uint64_t h = one_comm(&g_t, 21, &changed, "nullctx");
  r = tuner_get(&g_t, 0, 4, 65536, 1, tab, 7, 3, 0, &nch);
  if (r) FAIL("nullctx: getCollInfo(NULL) after init returned %d", r);
  r = tuner_fin(&g_t, 0);
  if (r) FAIL("nullctx: destroy(NULL) after init returned %d", r);
  /* init with a NULL context pointer */
  r = tuner_init(&g_t, 2, 2, 22, adv_log, 0);
  rep("INFO: init(NULL ctx pointer) -> %d", r);
  if (r) FAIL("nullctx: init with a NULL context pointer returned %d", r);
  /* nRanks 0, nNodes 0, huge */
  void* ctx = 0;
  size_t shapes[][2] = {{0, 0}, {1, 0}, {0, 1}, {SIZE_MAX, SIZE_MAX}, {1u << 31, 1}, {2, 4}};
  for (int i = 0; i < 6; i++) {
    r = tuner_init(&g_t, shapes[i][0], shapes[i][1], 23 + i, adv_log, &ctx);
    if (r) FAIL("nullctx: init(%zu,%zu) returned %d", shapes[i][0], shapes[i][1], r);
    trace_run(&g_t, ctx, &g_tr, &changed, "odd shape");
    tuner_fin(&g_t, ctx);
  }
  summary("nullctx", h, changed);
  return 0;
}

/* ---- profiler ------------------------------------------------------------------------------- */
typedef struct {
  int ver;
  const void* sym;
} prof_t;
static int prof_open(prof_t* p, int ver) {
  void* h = dlopen(plugin_path(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    FAIL("prof dlopen: %s", dlerror());
    return -1;
  }
  for (int v = ver; v >= 4; v--) {
    char n[32];
    snprintf(n, sizeof n, "ncclProfiler_v%d", v);
    if ((p->sym = dlsym(h, n))) {
      p->ver = v;
      return 0;
    }
  }
  FAIL("no profiler symbol");
  return -1;
}
static int prof_init(prof_t* p, void** ctx, int* mask, uint64_t id) {
  if (p->ver == 4) return ((const ncclProfiler_v4_t*)p->sym)->init(ctx, mask, "adv", id, 2, 2, 0, adv_log);
  return ((const ncclProfiler_v6_t*)p->sym)->init(ctx, id, mask, "adv", 2, 2, 0, adv_log);
}
static int prof_start(prof_t* p, void* ctx, void** h, void* d) {
  return ((const ncclProfiler_v6_t*)p->sym)->startEvent(ctx, h, d);
}
static int prof_stop(prof_t* p, void* h) {
  return ((const ncclProfiler_v6_t*)p->sym)->stopEvent(h);
}
static int prof_rec(prof_t* p, void* h, int st, void* a) {
  return ((const ncclProfiler_v6_t*)p->sym)->recordEventState(h, st, a);
}
static int prof_fin(prof_t* p, void* ctx) {
  return ((const ncclProfiler_v6_t*)p->sym)->finalize(ctx);
}
#define PCHK(x, what) \
  do { \
    int _r = (x); \
    if (_r) FAIL("prof %s: returned %d", what, _r); \
  } while (0)
static void fill_descr(prof_t* p, void* buf, uint64_t type, void* parent) {
  memset(buf, 0, 512);
  if (p->ver == 4) {
    ncclProfilerEventDescr_v4_t* d = buf;
    d->type = (uint8_t)type;
    d->parentObj = parent;
    d->coll.func = "AllReduce";
    d->coll.algo = "RING";
    d->coll.proto = "SIMPLE";
    d->coll.datatype = "ncclFloat32";
    d->coll.count = 1 << 20;
    d->coll.nChannels = 4;
  } else {
    ncclProfilerEventDescr_v6_t* d = buf;
    d->type = type;
    d->parentObj = parent;
    if (type == ncclProfileCollApi) {
      d->collApi.func = "AllReduce";
      d->collApi.count = 1 << 20;
      d->collApi.datatype = "ncclFloat32";
    } else {
      d->coll.func = "AllReduce";
      d->coll.algo = "RING";
      d->coll.proto = "SIMPLE";
      d->coll.datatype = "ncclFloat32";
      d->coll.count = 1 << 20;
      d->coll.nChannels = 4;
      d->coll.parentGroup = parent;
    }
  }
}
static int c_prof(int argc, char** argv) {
  int ver = argc > 2 ? atoi(argv[2]) : 6;
  int with_tuner = argc > 3 && !strcmp(argv[3], "tuner");
  prof_t p;
  snap_t sa, sb;
  snap_take(&sa);
  if (with_tuner) {
    if (tuner_open(&g_t, env_ver())) return 1;
    int c;
    one_comm(&g_t, 0x77, &c, "prof-tuner");
  }
  if (prof_open(&p, ver)) return 1;
  for (int round = 0; round < 20; round++) {
    void* ctx = 0;
    int mask = 0;
    int r = prof_init(&p, &ctx, &mask, 0x77);
    rep("INFO: prof v%d init -> %d ctx %p mask %#x", p.ver, r, ctx, mask);
    if (r) continue; /* a profiler init may refuse */
    char d[512];
    void *g = 0, *c = 0, *k = 0, *x = 0;
    uint64_t collT = ncclProfileColl;
    /* normal order */
    fill_descr(&p, d, p.ver == 4 ? ncclProfileGroup : ncclProfileCollApi, 0);
    PCHK(prof_start(&p, ctx, &g, d), "start group");
    fill_descr(&p, d, collT, g);
    PCHK(prof_start(&p, ctx, &c, d), "start coll");
    fill_descr(&p, d, ncclProfileKernelCh, c);
    ((ncclProfilerEventDescr_v6_t*)d)->kernelCh.pTimer = 1000;
    if (p.ver == 4) ((ncclProfilerEventDescr_v4_t*)d)->kernelCh.pTimer = 1000;
    PCHK(prof_start(&p, ctx, &k, d), "start kernelCh");
    ncclProfilerEventStateArgs_v4_t st = {.kernelCh = {.pTimer = 5000}};
    PCHK(prof_rec(&p, k, ncclProfilerKernelChStop, &st), "record kernelCh stop");
    /* odd: parent stopped before its children */
    PCHK(prof_stop(&p, g), "stop group first");
    PCHK(prof_stop(&p, c), "stop coll after group");
    PCHK(prof_stop(&p, k), "stop kernelCh last");
    /* odd: NULL handles, NULL args, unknown states, stop twice */
    PCHK(prof_stop(&p, 0), "stop NULL");
    PCHK(prof_rec(&p, 0, ncclProfilerKernelChStop, &st), "record NULL handle");
    fill_descr(&p, d, collT, 0);
    PCHK(prof_start(&p, ctx, &x, d), "start coll without parent");
    PCHK(prof_rec(&p, x, ncclProfilerKernelChStop, 0), "record NULL args");
    PCHK(prof_rec(&p, x, 999, &st), "record state 999");
    PCHK(prof_stop(&p, x), "stop x");
    if (getenv("ADV_PROF_STALE")) {
      PCHK(prof_stop(&p, x), "stop x again (stale)");
      PCHK(prof_rec(&p, x, ncclProfilerKernelChStop, &st), "record on stale handle");
    }
    /* unknown types, all types, kernelCh whose parent is NULL */
    for (int b = 0; b < 20; b++) {
      void* e = 0;
      fill_descr(&p, d, 1ull << b, (b & 1) ? 0 : c);
      PCHK(prof_start(&p, ctx, &e, d), "start type bit");
      PCHK(prof_rec(&p, e, ncclProfilerKernelChStop, &st), "record");
      PCHK(prof_stop(&p, e), "stop");
    }
    fill_descr(&p, d, 0, 0);
    void* e = 0;
    PCHK(prof_start(&p, ctx, &e, d), "start type 0");
    PCHK(prof_start(&p, 0, &e, d), "start with NULL ctx");
    /* many outstanding events, then finalize with them open */
    void* open_ev[2000];
    for (int i = 0; i < 2000; i++) {
      fill_descr(&p, d, i % 2 ? collT : ncclProfileKernelCh, 0);
      open_ev[i] = 0;
      prof_start(&p, ctx, &open_ev[i], d);
    }
    PCHK(prof_fin(&p, ctx), "finalize with open events");
    if (getenv("ADV_PROF_STALE"))
      for (int i = 0; i < 2000; i++) prof_stop(&p, open_ev[i]); /* after finalize */
  }
  /* init with a NULL mask pointer */
  void* ctx = 0;
  int r;
  if (p.ver == 4) r = ((const ncclProfiler_v4_t*)p.sym)->init(&ctx, 0, 0, 1, 2, 2, 0, 0);
  else r = ((const ncclProfiler_v6_t*)p.sym)->init(&ctx, 1, 0, 0, 2, 2, 0, 0);
  rep("INFO: prof init(NULL mask, NULL name, NULL logger) -> %d", r);
  if (!r) prof_fin(&p, ctx);
  PCHK(prof_fin(&p, 0), "finalize NULL");
  snap_take(&sb);
  snap_diff(&sa, &sb, "prof", 1);
  summary("prof", 0, 0);
  return 0;
}

/* ---- exec'd children spawned by another host thread while init runs ------------------------- */
static atomic_int g_spawns, g_spawn_leaks, g_spawn_maxfds;
static void* th_spawner(void* a) {
  (void)a;
  char* av[] = {"/proc/self/exe", "fdcheck", 0};
  while (!atomic_load(&g_stop)) {
    pid_t q;
    int st;
    if (posix_spawn(&q, "/proc/self/exe", 0, 0, av, environ)) continue;
    waitpid(q, &st, 0);
    int n = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    atomic_fetch_add(&g_spawns, 1);
    if (n != g_child_fds0) {
      atomic_fetch_add(&g_spawn_leaks, 1);
      if (n > atomic_load(&g_spawn_maxfds)) atomic_store(&g_spawn_maxfds, n);
    }
  }
  return 0;
}
static int c_spawn(void) {
  exec_child_check("before");
  if (tuner_open(&g_t, env_ver())) return 1;
  pthread_t t[2];
  for (int i = 0; i < 2; i++) pthread_create(&t[i], 0, th_spawner, 0);
  int changed;
  uint64_t h = one_comm(&g_t, 30, &changed, "spawn");
  atomic_store(&g_stop, 1);
  for (int i = 0; i < 2; i++) pthread_join(t[i], 0);
  rep("INFO: %d children exec'd during init", atomic_load(&g_spawns));
  if (atomic_load(&g_spawn_leaks))
    FAIL("spawn: %d of %d children exec'd during init inherited extra fds (up to %d, %d before init)",
         atomic_load(&g_spawn_leaks), atomic_load(&g_spawns), atomic_load(&g_spawn_maxfds), g_child_fds0);
  exec_child_check("after");
  summary("spawn", h, changed);
  return 0;
}

/* ---- a thread with every signal blocked; init, calls and destroy on three different threads -- */
static void* th_blocked(void* a) {
  (void)a;
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, 0);
  snap_t x, y;
  snap_take(&x);
  g_h = one_comm(&g_t, 31, &g_changed, "blocked");
  snap_take(&y);
  snap_diff(&x, &y, "blocked-thread", 1);
  return 0;
}
static void* ctx_hop;
static void* th_hop(void* a) {
  long step = (long)a;
  if (step == 0) tuner_init(&g_t, g_tr.nRanks, g_tr.nNodes, 32, adv_log, &ctx_hop);
  if (step == 1) g_h = trace_run(&g_t, ctx_hop, &g_tr, &g_changed, "hop");
  if (step == 2) tuner_fin(&g_t, ctx_hop);
  return 0;
}
static int c_mask(int argc, char** argv) {
  if (tuner_open(&g_t, env_ver())) return 1;
  if (argc > 2 && !strcmp(argv[2], "hop")) {
    for (long s = 0; s < 3; s++) {
      pthread_t t;
      pthread_create(&t, 0, th_hop, (void*)s);
      pthread_join(t, 0);
    }
  } else {
    pthread_t t;
    pthread_create(&t, 0, th_blocked, 0);
    pthread_join(t, 0);
  }
  summary("mask", g_h, g_changed);
  return 0;
}

/* ---- signals raised by a host thread while init runs: each must reach the host's handler ------ */
static atomic_int g_hcount[65], g_raised[65];
static void h_count(int s) {
  atomic_fetch_add(&g_hcount[s], 1);
}
static int g_sw_sigs[] = {SIGCHLD, SIGPIPE, SIGXFSZ, SIGUSR2, SIGHUP, SIGTERM, SIGINT, SIGQUIT, SIGWINCH, 62, 63, 64};
#define NSW (int)(sizeof g_sw_sigs / sizeof *g_sw_sigs)
static void* th_raiser(void* a) {
  int dfl_pipe = a != 0;
  int pfd[2];
  if (pipe2(pfd, O_CLOEXEC)) return 0;
  close(pfd[0]);
  usleep(30000);
  while (!atomic_load(&g_stop)) {
    if (dfl_pipe) {
      ssize_t w = write(pfd[1], "x", 1); /* SIG_DFL SIGPIPE: this kills the process */
      (void)w;
      atomic_fetch_add(&g_raised[SIGPIPE], 1);
      continue;
    }
    for (int i = 0; i < NSW; i++) {
      raise(g_sw_sigs[i]);
      atomic_fetch_add(&g_raised[g_sw_sigs[i]], 1);
    }
  }
  return 0;
}
static int c_sigwindow(int argc, char** argv) {
  int dfl_pipe = argc > 2 && !strcmp(argv[2], "pipe-dfl");
  struct sigaction sa = {0};
  sa.sa_handler = h_count;
  sa.sa_flags = SA_RESTART;
  if (!dfl_pipe)
    for (int i = 0; i < NSW; i++) sigaction(g_sw_sigs[i], &sa, 0);
  if (tuner_open(&g_t, env_ver())) return 1;
  pthread_t t;
  pthread_create(&t, 0, th_raiser, (void*)(long)dfl_pipe);
  int changed;
  uint64_t h = one_comm(&g_t, 40, &changed, "sigwindow");
  atomic_store(&g_stop, 1);
  pthread_join(t, 0);
  if (dfl_pipe) {
    FAIL("sigwindow: %d writes to a broken pipe with SIGPIPE at SIG_DFL did not end the process during init",
         atomic_load(&g_raised[SIGPIPE]));
  } else
    for (int i = 0; i < NSW; i++) {
      int s = g_sw_sigs[i];
      if (g_raised[s] != g_hcount[s])
        FAIL("sigwindow: signal %d (%s): raised %d, host handler ran %d", s, strsignal(s), g_raised[s], g_hcount[s]);
    }
  rep("INFO: raised %d rounds", atomic_load(&g_raised[SIGCHLD]));
  summary("sigwindow", h, changed);
  return 0;
}

int main(int argc, char** argv) {
  if (argc > 1 && !strcmp(argv[1], "fdcheck")) return fdcheck_main();
  rep_open();
  if (argc < 2) return 2;
  if (strcmp(argv[1], "tables") && strcmp(argv[1], "prof")) trace_load(&g_tr, env_trace());
  else trace_load(&g_tr, env_trace());
  if (getenv("ADV_SETLOCALE") && !setlocale(LC_ALL, getenv("ADV_SETLOCALE")))
    rep("NOTE: setlocale(%s) failed", getenv("ADV_SETLOCALE"));
  rep("CASE %s%s%s", argv[1], argc > 2 ? " " : "", argc > 2 ? argv[2] : "");
  int rc = 2;
  const char* c = argv[1];
  if (!strcmp(c, "state")) rc = c_state();
  else if (!strcmp(c, "threads")) rc = c_threads(argc, argv);
  else if (!strcmp(c, "cancel")) rc = c_cancel(argc, argv);
  else if (!strcmp(c, "stack")) rc = c_stack(argc, argv);
  else if (!strcmp(c, "coro")) rc = c_coro(argc, argv);
  else if (!strcmp(c, "concurrent")) rc = c_concurrent(argc, argv);
  else if (!strcmp(c, "fork")) rc = c_fork(argc, argv);
  else if (!strcmp(c, "stdio-closed")) rc = c_stdio_closed();
  else if (!strcmp(c, "tables")) rc = c_tables();
  else if (!strcmp(c, "log")) rc = c_log(argc, argv);
  else if (!strcmp(c, "sigtid")) rc = c_sigtid();
  else if (!strcmp(c, "segvchain")) rc = c_segvchain(argc, argv);
  else if (!strcmp(c, "fp")) rc = c_fp(argc, argv);
  else if (!strcmp(c, "exit")) rc = c_exit(argc, argv);
  else if (!strcmp(c, "nullctx")) rc = c_nullctx();
  else if (!strcmp(c, "prof")) rc = c_prof(argc, argv);
  else if (!strcmp(c, "spawn")) rc = c_spawn();
  else if (!strcmp(c, "sigwindow")) rc = c_sigwindow(argc, argv);
  else if (!strcmp(c, "mask")) rc = c_mask(argc, argv);
  if (rc == 2) return 2;
  rep("END fails %d", g_fail);
  return g_fail ? 1 : rc;
}
