/*
 * hh_churn -- communicators come and go: hh_churn COMMS DLCYCLES [THREADS]
 * COMMS init / 20 getCollInfo / finalize cycles (tuner v$HH_VER, default 6), then DLCYCLES rounds of
 * dlclose + dlopen with 100 communicators each, optionally THREADS host threads looping getCollInfo
 * on a long-lived communicator meanwhile. Samples VmRSS and Threads after the warm-up (1,000
 * communicators) and at the end of each phase; checks every decision against the first.
 * FAIL: growth past the warm-up of more than 8 MiB of VmRSS or any thread, a changed decision.
 */
#include "hhc2.h"

static hh_tuner g_t;
static void* g_long;
static atomic_int g_stop;
static atomic_long g_calls, g_bad;
static float g_ref[21];
static int g_refCh;

static void one(hh_tuner* t, void* ctx, float* tab, int* nch) {
  for (int i = 0; i < 21; i++) tab[i] = 100.0f + i;
  *nch = 0;
  hh_get_rb(t, ctx, 4, 65536, 1, tab, 7, 3, 0, nch);
}

static void* looper(void* a) {
  (void)a;
  float tab[21];
  int nch;
  while (!atomic_load(&g_stop)) {
    one(&g_t, g_long, tab, &nch);
    atomic_fetch_add(&g_calls, 1);
    if (memcmp(tab, g_ref, sizeof tab) || nch != g_refCh) atomic_fetch_add(&g_bad, 1);
  }
  return NULL;
}

static long cycle(hh_tuner* t, uint64_t id) {
  void* ctx = hh_init(t, 2, 2, id);
  long bad = 0;
  float tab[21];
  int nch;
  for (int k = 0; k < 20; k++) {
    one(t, ctx, tab, &nch);
    if (memcmp(tab, g_ref, sizeof tab) || nch != g_refCh) bad++;
  }
  hh_fin(t, ctx);
  return bad;
}

int main(int argc, char** argv) {
  long comms = argc > 1 ? atol(argv[1]) : 20000, dl = argc > 2 ? atol(argv[2]) : 50;
  int nth = argc > 3 ? atoi(argv[3]) : 0;
  int ver = hh_env_ver();
  setenv("HH_QUIET", "1", 0);
  hh_open(&g_t, ver);
  void* ctx = hh_init(&g_t, 2, 2, 1);
  one(&g_t, ctx, g_ref, &g_refCh);
  hh_fin(&g_t, ctx);
  int changed = 0;
  for (int i = 0; i < 21; i++) changed += g_ref[i] != 100.0f + i;
  printf("reference AllReduce 64 KiB: %d entries changed, nChannels %d\n", changed, g_refCh);
  g_long = hh_init(&g_t, 2, 2, 2);
  pthread_t th[64];
  for (int i = 0; i < nth; i++) pthread_create(&th[i], NULL, looper, NULL);
  long bad = 0;
  double t0 = hh_now();
  for (long i = 0; i < 1000; i++) bad += cycle(&g_t, 100 + i);
  long rss0 = hh_rss_kib(), thr0 = hh_threads();
  printf("after warm-up (1000 communicators, %.1f s): VmRSS %ld KiB, Threads %ld\n", hh_now() - t0, rss0, thr0);
  long step = comms / 4 > 0 ? comms / 4 : 1;
  for (long i = 1000; i < comms; i++) {
    bad += cycle(&g_t, 100 + i);
    if ((i - 1000 + 1) % step == 0)
      printf("  communicators %ld: VmRSS %ld KiB (%+ld), Threads %ld, %.1f s\n", i + 1, hh_rss_kib(),
             hh_rss_kib() - rss0, hh_threads(), hh_now() - t0);
  }
  long rss1 = hh_rss_kib(), thr1 = hh_threads();
  printf("after %ld communicators: VmRSS %ld KiB (%+ld KiB), Threads %ld (%+ld)\n", comms, rss1, rss1 - rss0, thr1,
         thr1 - thr0);
  if (rss1 - rss0 > 8192)
    FAIL("VmRSS grew %ld KiB over %ld communicators after the warm-up", rss1 - rss0, comms - 1000);
  if (thr1 != thr0) FAIL("Threads %ld -> %ld", thr0, thr1);
  if (nth) {
    atomic_store(&g_stop, 1);
    for (int i = 0; i < nth; i++) pthread_join(th[i], NULL);
    printf("%d host threads made %ld calls meanwhile, %ld decided otherwise\n", nth, atomic_load(&g_calls),
           atomic_load(&g_bad));
    if (atomic_load(&g_bad)) FAIL("%ld concurrent calls decided otherwise", atomic_load(&g_bad));
  }
  hh_fin(&g_t, g_long);
  /* dlclose / dlopen cycles, as NCCL does when its last communicator goes */
  long rss2 = 0, thr2 = 0;
  for (long c = 0; c < dl; c++) {
    dlclose(g_t.lib);
    hh_open(&g_t, ver);
    for (int i = 0; i < 100; i++) bad += cycle(&g_t, 1000000 + c * 100 + i);
    if (c == 9) rss2 = hh_rss_kib(), thr2 = hh_threads();
  }
  if (dl > 10) {
    long rss3 = hh_rss_kib(), thr3 = hh_threads();
    printf("dlclose/dlopen cycles %ld (x100 communicators): after 10 VmRSS %ld KiB Threads %ld; after %ld VmRSS %ld "
           "KiB (%+ld) Threads %ld\n",
           dl, rss2, thr2, dl, rss3, rss3 - rss2, thr3);
    if (rss3 - rss2 > 8192) FAIL("VmRSS grew %ld KiB over %ld dlclose/dlopen cycles", rss3 - rss2, dl - 10);
    if (thr3 != thr2) FAIL("Threads %ld -> %ld over dlclose/dlopen cycles", thr2, thr3);
  }
  printf("decisions that differ from the reference: %ld\n", bad);
  if (bad) FAIL("%ld calls decided otherwise", bad);
  return hh_exit();
}
