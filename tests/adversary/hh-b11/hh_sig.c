/*
 * hh_sig.c -- getCollInfo from inside a signal handler (SIGALRM at 2 kHz from setitimer, on the
 * thread's own stack): interrupting host code on a thread that called before (`host`), on a
 * thread whose first call it is (`fresh`), interrupting the same thread's init/destroy (`control`),
 * or its own getCollInfo (`get`: re-entrant, the documented limit). Promise: no crash, each call in
 * the handler decides as on a plain thread.
 *
 *   NCCL_TUNER_JAVA_POLICY=tests/adversary/hh-b11/hh.yaml build/adversary/hh-b11/hh_sig host|fresh|control|get [seconds]
 */
#include <sys/time.h>

#include "hh.h"

static hh_tuner T;
static void* CTX;
static atomic_long g_in, g_ok;
static pthread_t g_target;

static void on_alrm(int s) {
  (void)s;
  if (!pthread_equal(pthread_self(), g_target)) return;
  int e = errno;
  float t[21];
  hh_fill(t, 21);
  int ch = 0;
  hh_get(&T, CTX, ncclFuncAllGather, 1 << 20, 1, t, 7, 3, &ch);
  atomic_fetch_add(&g_in, 1);
  if (t[20] == 0.0f && ch == 8) atomic_fetch_add(&g_ok, 1);
  errno = e;
}

static volatile int g_run = 1;
static double g_secs = 3;
static const char* g_mode;

static void* work(void* a) {
  (void)a;
  g_target = pthread_self();
  sigset_t m;
  sigemptyset(&m);
  sigaddset(&m, SIGALRM);
  pthread_sigmask(SIG_UNBLOCK, &m, NULL);
  double end = hh_now() + g_secs;
  long n = 0;
  while (hh_now() < end) {
    if (!strcmp(g_mode, "control")) {
      void* c = hh_init(&T, 2, 2, 500 + n);
      hh_fin(&T, c);
    } else if (!strcmp(g_mode, "get")) {
      float t[21];
      hh_fill(t, 21);
      int ch = 0;
      hh_get(&T, CTX, ncclFuncAllGather, 1 << 20, 1, t, 7, 3, &ch);
    } else {
      volatile double x = 0; /* host work */
      for (int i = 0; i < 1000; i++) x += i;
    }
    n++;
  }
  printf("NOTE %s: %ld loop rounds on the target thread\n", g_mode, n);
  return NULL;
}

int main(int argc, char** argv) {
  if (argc < 2) return printf("usage: hh_sig host|fresh|control|get [seconds]\n"), 2;
  g_mode = argv[1];
  if (argc > 2) g_secs = atof(argv[2]);
  hh_open(&T, hh_env_ver());
  CTX = hh_init(&T, 2, 2, 7);
  float t[21];
  hh_fill(t, 21);
  int ch = 0;
  hh_get(&T, CTX, ncclFuncAllGather, 1 << 20, 1, t, 7, 3, &ch);
  if (!(t[20] == 0.0f && ch == 8)) return printf("SETUP does not decide\n"), 2;
  printf("CASE %s\n", g_mode);
  fflush(stdout);
  struct sigaction sa = {.sa_handler = on_alrm, .sa_flags = SA_RESTART};
  sigaction(SIGALRM, &sa, NULL);
  /* only the target thread takes SIGALRM: block it here, the target unblocks it */
  sigset_t m;
  sigemptyset(&m);
  sigaddset(&m, SIGALRM);
  struct itimerval it = {{0, 500}, {0, 500}};
  if (!strcmp(g_mode, "fresh")) {
    pthread_sigmask(SIG_BLOCK, &m, NULL);
    pthread_t th;
    setitimer(ITIMER_REAL, &it, NULL);
    pthread_create(&th, NULL, work, NULL);
    pthread_join(th, NULL);
  } else {
    g_target = pthread_self();
    setitimer(ITIMER_REAL, &it, NULL);
    work(NULL);
  }
  struct itimerval off = {{0, 0}, {0, 0}};
  setitimer(ITIMER_REAL, &off, NULL);
  printf("NOTE %s: %ld calls in the handler, %ld decided\n", g_mode, atomic_load(&g_in), atomic_load(&g_ok));
  if (atomic_load(&g_in) == 0) FAIL("no call in the handler");
  if (atomic_load(&g_ok) != atomic_load(&g_in))
    FAIL("%ld of %ld calls in the handler decided", atomic_load(&g_ok), atomic_load(&g_in));
  hh_fin(&T, CTX);
  return hh_exit();
}
