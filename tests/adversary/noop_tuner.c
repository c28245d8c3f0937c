/* A trivial no-op tuner + profiler: exports what the real plugin exports and changes nothing. */
#include "nccl_tuner_abi.h"
#include "nccl_profiler_abi.h"
static int dummy;
static ncclResult_t i3(size_t r, size_t n, ncclDebugLogger_t l, void** c) {
  (void)r;
  (void)n;
  (void)l;
  *c = &dummy;
  return ncclSuccess;
}
static ncclResult_t g3(void* c, ncclFunc_t t, size_t b, int p, float** tb, int na, int np, int* ch) {
  (void)c;
  (void)t;
  (void)b;
  (void)p;
  (void)tb;
  (void)na;
  (void)np;
  (void)ch;
  return ncclSuccess;
}
static ncclResult_t g4(void* c, ncclFunc_t t, size_t b, int p, float** tb, int na, int np, int rb, int* ch) {
  (void)rb;
  return g3(c, t, b, p, tb, na, np, ch);
}
static ncclResult_t d(void* c) {
  (void)c;
  return ncclSuccess;
}
static ncclResult_t i5(void** c, uint64_t id, size_t r, size_t n, ncclDebugLogger_t l, ncclNvlDomainInfo_v5_t* nv,
                       ncclTunerConstants_v5_t* k) {
  (void)id;
  (void)nv;
  (void)k;
  return i3(r, n, l, c);
}
static ncclResult_t i7(void** c, uint64_t id, size_t r, size_t n, ncclDebugLogger_t l, ncclNvlDomainInfo_v7_t* nv,
                       ncclTunerConstants_v7_t* k) {
  (void)id;
  (void)nv;
  (void)k;
  return i3(r, n, l, c);
}
__attribute__((visibility("default"))) const ncclTuner_v3_t ncclTunerPlugin_v3 = {"noop", i3, g3, d};
__attribute__((visibility("default"))) const ncclTuner_v4_t ncclTunerPlugin_v4 = {"noop", i3, g4, d};
__attribute__((visibility("default"))) const ncclTuner_v5_t ncclTunerPlugin_v5 = {"noop", i5, g4, d};
__attribute__((visibility("default"))) const ncclTuner_v6_t ncclTunerPlugin_v6 = {"noop", i5, g4, d, 0};
__attribute__((visibility("default"))) const ncclTuner_v7_t ncclTunerPlugin_v7 = {"noop", i7, g4, d, 0};
static ncclResult_t pi4(void** c, int* m, const char* cn, uint64_t h, int nn, int nr, int r, ncclDebugLogger_t l) {
  (void)m;
  (void)cn;
  (void)h;
  (void)nn;
  (void)nr;
  (void)r;
  (void)l;
  *c = &dummy;
  return ncclSuccess;
}
static ncclResult_t pi5(void** c, uint64_t id, int* m, const char* cn, int nn, int nr, int r, ncclDebugLogger_t l) {
  return pi4(c, m, cn, id, nn, nr, r, l);
}
static ncclResult_t ps(void* c, void** h, void* dd) {
  (void)c;
  (void)dd;
  *h = 0;
  return ncclSuccess;
}
static ncclResult_t pst(void* h) {
  (void)h;
  return ncclSuccess;
}
static ncclResult_t pr(void* h, ncclProfilerEventState_t s, void* a) {
  (void)h;
  (void)s;
  (void)a;
  return ncclSuccess;
}
__attribute__((visibility("default")))
const ncclProfiler_v4_t ncclProfiler_v4 = {"noop", pi4, (void*)ps, pst, (void*)pr, d};
__attribute__((visibility("default")))
const ncclProfiler_v5_t ncclProfiler_v5 = {"noop", pi5, (void*)ps, pst, (void*)pr, d};
__attribute__((visibility("default")))
const ncclProfiler_v6_t ncclProfiler_v6 = {"noop", pi5, (void*)ps, pst, (void*)pr, d};
