/*
 * hh_stack.c -- getCollInfo on little stack: a thread on a stack of KIB (host-mapped, a PROT_NONE
 * page below it), a makecontext coroutine of KIB, a signal handler on a sigaltstack of KIB (on a
 * thread that called before, or on one whose first call it is). The stack is painted first, so
 * the host reports how deep the call went. Promise: no crash, ncclSuccess, the table untouched
 * when the call is refused (one WARN per thread), decided as usual when there is room.
 *
 *   NCCL_TUNER_JAVA_POLICY=tests/adversary/hh-b11/hh.yaml build/adversary/hh-b11/hh_stack thread|coro|alt|altfresh KIB
 */
#define _GNU_SOURCE
#include <ucontext.h>

#include "hh.h"

static hh_tuner T;
static void* CTX;
static atomic_int g_lwarns;
/* A logger that uses next to no stack (no formatting): the plugin's own stack use is measured. */
static void tiny_log(ncclDebugLogLevel level, unsigned long flags, const char* file, int line, const char* fmt, ...) {
  (void)flags, (void)file, (void)line, (void)fmt;
  if (level == NCCL_LOG_WARN) atomic_fetch_add(&g_lwarns, 1);
}

static unsigned char* g_lo; /* the painted stack's low end */
static size_t g_len;
#define PAINT 0xCD

static float g_tab[21];
static int g_ch;
static volatile int g_done;
static int g_calls = 3;

static void calls(void) {
  for (int i = 0; i < g_calls; i++) {
    hh_fill(g_tab, 21);
    g_ch = 0;
    hh_get(&T, CTX, ncclFuncAllGather, 1 << 20, 1, g_tab, 7, 3, &g_ch);
  }
  g_done = 1;
}

static unsigned char* stack_new(size_t kib) {
  size_t pg = 4096, len = kib * 1024;
  unsigned char* m = mmap(NULL, len + pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  mprotect(m, pg, PROT_NONE);
  g_lo = m + pg;
  g_len = len;
  memset(g_lo, PAINT, len);
  return g_lo;
}

/* The stack's pages that are no longer read-write after the calls (from /proc/self/maps). */
static size_t unreadable(void) {
  FILE* f = fopen("/proc/self/maps", "r");
  char line[512];
  size_t bad = 0;
  uintptr_t lo = (uintptr_t)g_lo, hi = lo + g_len;
  while (fgets(line, sizeof line, f)) {
    uintptr_t a, b;
    char perm[8];
    if (sscanf(line, "%lx-%lx %7s", &a, &b, perm) != 3) continue;
    if (b <= lo || a >= hi) continue;
    if (perm[0] != 'r' || perm[1] != 'w') {
      uintptr_t x = a < lo ? lo : a, y = b > hi ? hi : b;
      printf("NOTE stack pages %#lx-%#lx (+%lu KiB from its low end, %lu KiB) are %s after the calls\n", x, y,
             (x - lo) / 1024, (y - x) / 1024, perm);
      bad += y - x;
    }
  }
  fclose(f);
  return bad;
}

static size_t used(void) {
  size_t i = 0;
  if (unreadable()) {
    FAIL("the host's own stack memory was left protected after the thread ended");
    return 0;
  }
  while (i < g_len && g_lo[i] == PAINT) i++;
  return g_len - i;
}

static void* thread_main(void* a) {
  (void)a;
  calls();
  return NULL;
}

/* threadsys: a glibc-allocated stack; the thread notes its bounds for the check after it ends */
static void* sys_thread(void* a) {
  (void)a;
  pthread_attr_t at;
  pthread_getattr_np(pthread_self(), &at);
  void* lo;
  size_t len;
  pthread_attr_getstack(&at, &lo, &len);
  pthread_attr_destroy(&at);
  g_lo = lo, g_len = len;
  calls();
  return NULL;
}

/* A host thread that never calls the plugin and uses all but 24 KiB of its stack (a recursion of
 * 1 KiB frames): it fits in any stack of its size that nobody has protected pages in. */
static size_t g_depthKib;
static __attribute__((noinline)) int deep(size_t n) {
  volatile char buf[1000];
  buf[0] = (char)n;
  if (n == 0) return buf[0];
  return deep(n - 1) + buf[0];
}
static void* deep_thread(void* a) {
  (void)a;
  pthread_attr_t at;
  pthread_getattr_np(pthread_self(), &at);
  void* lo;
  size_t len;
  pthread_attr_getstack(&at, &lo, &len);
  pthread_attr_destroy(&at);
  g_depthKib = len / 1024 - (getenv("HH_MARGIN_KIB") ? strtoul(getenv("HH_MARGIN_KIB"), NULL, 10) : 24);
  printf("NOTE the host's thread has the stack %p+%zu KiB (%s the one the plugin ran on); recursing %zu KiB\n", lo,
         len / 1024, lo == (void*)g_lo ? "the same as" : "not", g_depthKib);
  fflush(stdout);
  deep(g_depthKib);
  return NULL;
}

static ucontext_t g_main, g_co;

static void on_sig(int s) {
  (void)s;
  calls();
}

static void* alt_thread(void* a) {
  size_t kib = (size_t)a;
  stack_t ss = {.ss_sp = stack_new(kib), .ss_size = kib * 1024, .ss_flags = 0};
  if (sigaltstack(&ss, NULL)) printf("SETUP sigaltstack: %s\n", strerror(errno));
  raise(SIGUSR1);
  return NULL;
}

int main(int argc, char** argv) {
  if (argc < 3) {
    printf("usage: hh_stack thread|coro|alt|altfresh KIB [calls]\n");
    return 2;
  }
  size_t kib = strtoul(argv[2], NULL, 10);
  if (argc > 3) g_calls = atoi(argv[3]);
  g_logger = tiny_log;
  hh_open(&T, hh_env_ver());
  CTX = hh_init(&T, 2, 2, 0x99);
  if (!CTX) return printf("SETUP no context\n"), 2;
  hh_fill(g_tab, 21);
  hh_get(&T, CTX, ncclFuncAllGather, 1 << 20, 1, g_tab, 7, 3, &g_ch); /* main's own first call */
  int mainDecided = g_tab[20] == 0.0f && g_ch == 8;
  int w0 = atomic_load(&g_lwarns);
  hh_state s0, s1;
  hh_snap(&s0);
  printf("CASE %s %zu KiB\n", argv[1], kib);
  fflush(stdout);
  if (!strcmp(argv[1], "thread")) {
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setstack(&at, stack_new(kib), kib * 1024);
    pthread_t th;
    int r = pthread_create(&th, &at, thread_main, NULL);
    if (r) return printf("SETUP pthread_create: %s\n", strerror(r)), 2;
    pthread_join(th, NULL);
  } else if (!strcmp(argv[1], "threadsys")) {
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setstacksize(&at, kib * 1024);
    pthread_t th;
    int r = pthread_create(&th, &at, sys_thread, NULL);
    if (r) return printf("SETUP pthread_create: %s\n", strerror(r)), 2;
    pthread_join(th, NULL);
    /* the next thread of the same size gets the cached stack (glibc) */
    g_depthKib = kib - 24;
    printf("CASE a host thread of %zu KiB that never calls the plugin recursing %zu KiB deep\n", kib, g_depthKib);
    fflush(stdout);
    r = pthread_create(&th, &at, deep_thread, NULL);
    if (r) return printf("SETUP pthread_create: %s\n", strerror(r)), 2;
    pthread_join(th, NULL);
    printf("NOTE the host's thread ran to the end\n");
  } else if (!strcmp(argv[1], "coro")) {
    getcontext(&g_co);
    g_co.uc_stack.ss_sp = stack_new(kib);
    g_co.uc_stack.ss_size = kib * 1024;
    g_co.uc_link = &g_main;
    makecontext(&g_co, calls, 0);
    swapcontext(&g_main, &g_co);
  } else if (!strcmp(argv[1], "alt") || !strcmp(argv[1], "altfresh")) {
    struct sigaction sa = {.sa_handler = on_sig, .sa_flags = SA_ONSTACK};
    sigaction(SIGUSR1, &sa, NULL);
    if (!strcmp(argv[1], "alt")) {
      alt_thread((void*)kib);
      stack_t off = {.ss_flags = SS_DISABLE};
      sigaltstack(&off, NULL);
    } else {
      pthread_t th;
      pthread_create(&th, NULL, alt_thread, (void*)kib);
      pthread_join(th, NULL);
    }
    signal(SIGUSR1, SIG_DFL);
  } else {
    return printf("usage\n"), 2;
  }
  hh_snap(&s1);
  s1.act[SIGUSR1] = s0.act[SIGUSR1];
  hh_state_diff(&s0, &s1, "state");
  int decided = g_tab[20] == 0.0f && g_ch == 8;
  int untouched = g_tab[20] == 120.0f && g_ch == 0;
  if (!g_done) FAIL("the calls did not finish");
  if (!decided && !untouched) FAIL("table neither decided nor untouched: entry 20 = %g, nChannels %d", g_tab[20], g_ch);
  int warns = atomic_load(&g_lwarns) - w0;
  if (untouched && warns != 1) FAIL("refused with %d WARN lines (one expected)", warns);
  if (decided && warns) FAIL("decided, yet %d WARN lines", warns);
  printf("RESULT %s %zu KiB: %s, %d WARN, deepest %zu bytes of %zu (main decided %d)\n", argv[1], kib,
         decided   ? "decided" :
         untouched ? "untouched" :
                     "?",
         warns, used(), g_len, mainDecided);
  hh_fin(&T, CTX);
  return hh_exit();
}
