/*
 * test_host.h -- what the C test hosts share (tests/harness/harness.c, bench/bench_driver.c,
 * tests/reliability/, tests/hosts/profiler_host.c, tests/oracle/): their exit codes,
 * loading a tuner plugin the way NCCL does, formatting a logger line, and reading a get row of a
 * trace CSV (tests/traces/README.md). Header-only: every function is static, so each host
 * includes it once. Build with -I plugin-shim/include -I tests/include. Beside it:
 * nccl_select.h (NCCL's selection after getCollInfo), profiler_events.h (which profiler events an
 * activation mask starts), and plugin-shim/include/nccl_names.h (NCCL's names).
 *
 * NCCL facts (NCCL 2.22 .. 2.28, src/misc/tuner.cc, from 2.26 src/plugin/tuner.cc): the tuner
 * library is dlopened with RTLD_NOW | RTLD_LOCAL and its ncclTunerPlugin_v3 symbol read with dlsym.
 */
#ifndef NCCLTJ_TEST_HOST_H_
#define NCCLTJ_TEST_HOST_H_

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nccl_tuner_abi.h"

#define TH_MAX_TABLE (NCCL_NUM_ALGORITHMS * NCCL_NUM_PROTOCOLS)

/* The hosts' exit codes, which the Java ITs and the shell tests read: done; a usage or set-up
 * error (bad arguments, an unreadable file, a plugin that does not load); a check failed (the
 * plugin misbehaved: a bad return, a write where it must not, a wrong answer). A crash or a hang
 * is the caller's to see. */
enum {
  TH_EXIT_OK = 0,
  TH_EXIT_USAGE = 2,
  TH_EXIT_MISBEHAVIOUR = 3
};

/* dlopen(path, RTLD_NOW | RTLD_LOCAL) and dlsym(NCCL_TUNER_PLUGIN_SYMBOL), as NCCL does. Returns
 * the tuner (its library handle in *lib), or NULL with the reason in why[n]: the library did not
 * load (*lib NULL), or it has no such symbol (*lib is the open library; the caller dlcloses it,
 * as NCCL does). A tuner whose entry points are NULL is returned as it is: the caller decides. */
static __attribute__((unused)) const ncclTuner_v3_t* th_load_tuner(const char* path, void** lib, char* why, size_t n) {
  *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (*lib == NULL) {
    snprintf(why, n, "%s", dlerror());
    return NULL;
  }
  const ncclTuner_v3_t* t = (const ncclTuner_v3_t*)dlsym(*lib, NCCL_TUNER_PLUGIN_SYMBOL);
  if (t == NULL) {
    snprintf(why, n, "no %s symbol", NCCL_TUNER_PLUGIN_SYMBOL);
  }
  return t;
}

/* Whether all three v3 entry points are set. */
static __attribute__((unused)) int th_tuner_complete(const ncclTuner_v3_t* t) {
  return t != NULL && t->init != NULL && t->getCollInfo != NULL && t->destroy != NULL;
}

/* NCCL's word for a log level, as its ncclDebugLog prints it. */
static __attribute__((unused)) const char* th_level_name(ncclDebugLogLevel level) {
  switch (level) {
    case NCCL_LOG_WARN: return "WARN";
    case NCCL_LOG_TRACE: return "TRACE";
    case NCCL_LOG_ABORT: return "ABORT";
    default: return "INFO";
  }
}

/* Formats one logger call's message into out[n] with its trailing newlines removed (a plugin may
 * end its format with "\n"; NCCL adds its own). */
static __attribute__((unused)) void th_format_log(char* out, size_t n, const char* fmt, va_list ap) {
  vsnprintf(out, n, fmt, ap);
  size_t len = strlen(out);
  while (len > 0 && out[len - 1] == '\n') out[--len] = '\0';
}

/* Prints "<head><message><tail>" on f, the message formatted from fmt and ap (the hosts' fatal,
 * failure and fact lines). Does not flush. */
static __attribute__((unused)) void th_vprint(FILE* f, const char* head, const char* tail, const char* fmt,
                                              va_list ap) {
  fputs(head, f);
  vfprintf(f, fmt, ap);
  fputs(tail, f);
}

/* th_vprint of the variadic arguments after fmt, inside a printf-like function `(fmt, ...)`. */
#define TH_VPRINT(f, head, tail, fmt) \
  do { \
    va_list th_ap_; \
    va_start(th_ap_, fmt); \
    th_vprint(f, head, tail, fmt, th_ap_); \
    va_end(th_ap_); \
  } while (0)

/* Defines `static void name(const char* fmt, ...)`, printf-like: prints head, the message and tail
 * on stderr (th_vprint) and exits with code. Each host's usage and fatal errors. */
#define TH_DIE_FUNCTION(name, head, tail, code) \
  static __attribute__((noreturn)) void name(const char* fmt, ...) { \
    TH_VPRINT(stderr, head, tail, fmt); \
    exit(code); \
  }

/* ---- trace CSV get rows ------------------------------------------------------------------- */

/* One get row: get,comm,nRanks,nNodes,collType,nBytes,numPipeOps,numAlgo,numProto,nChannelsIn,
 * numAlgo*numProto costs (microseconds, algorithm-major, -1 = unavailable). */
typedef struct {
  int coll;
  size_t nBytes;
  int numPipeOps, numAlgo, numProto, nChannelsIn;
  float costs[TH_MAX_TABLE];
} th_get_row;

static __attribute__((unused)) int th_parse_ll(const char* s, long long lo, long long hi, long long* out) {
  if (!s || !*s) return 0;
  char* end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (errno || *end || v < lo || v > hi) return 0;
  *out = v;
  return 1;
}

static __attribute__((unused)) int th_parse_size(const char* s, size_t* out) {
  if (!s || !*s || *s == '-') return 0;
  char* end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno || *end || v > SIZE_MAX) return 0;
  *out = (size_t)v;
  return 1;
}

/* Splits line (modified in place; a trailing CR/LF is cut) at commas into field[max]. Returns
 * the number of fields, or -1 when there are more than max. */
static __attribute__((unused)) int th_split_csv(char* line, char** field, int max) {
  line[strcspn(line, "\r\n")] = '\0';
  int nf = 0;
  for (char *p = line, *tok; (tok = strsep(&p, ",")) != NULL;) {
    if (nf == max) return -1;
    field[nf++] = tok;
  }
  return nf;
}

/* Parses fields 4.. of a get row (field[0] is "get"; comm, nRanks and nNodes, fields 1..3, are
 * the caller's). Returns NULL, or why the row is bad (written into why[n]). */
static __attribute__((unused)) const char* th_parse_get_row(char** field, int nf, th_get_row* r, char* why, size_t n) {
  long long v;
#define TH_BAD(...) \
  do { \
    snprintf(why, n, __VA_ARGS__); \
    return why; \
  } while (0)
  if (nf < 10) TH_BAD("get needs 10 fields before the costs");
  if (!th_parse_ll(field[4], 0, ncclNumFuncs - 1, &v)) TH_BAD("bad collType '%s'", field[4]);
  r->coll = (int)v;
  if (!th_parse_size(field[5], &r->nBytes)) TH_BAD("bad nBytes '%s'", field[5]);
  if (!th_parse_ll(field[6], 0, INT_MAX, &v)) TH_BAD("bad numPipeOps '%s'", field[6]);
  r->numPipeOps = (int)v;
  if (!th_parse_ll(field[7], 1, NCCL_NUM_ALGORITHMS, &v))
    TH_BAD("numAlgo '%s' not in 1..%d", field[7], NCCL_NUM_ALGORITHMS);
  r->numAlgo = (int)v;
  if (!th_parse_ll(field[8], 1, NCCL_NUM_PROTOCOLS, &v))
    TH_BAD("numProto '%s' not in 1..%d", field[8], NCCL_NUM_PROTOCOLS);
  r->numProto = (int)v;
  /* field[9], the nChannels NCCL passed in, is informational: NCCL always passes 0. */
  if (!th_parse_ll(field[9], INT_MIN, INT_MAX, &v)) TH_BAD("bad nChannelsIn '%s'", field[9]);
  r->nChannelsIn = (int)v;
  int cells = r->numAlgo * r->numProto;
  if (nf - 10 != cells) TH_BAD("%d costs for numAlgo*numProto = %d", nf - 10, cells);
  for (int i = 0; i < cells; i++) {
    char* end;
    r->costs[i] = strtof(field[10 + i], &end);
    if (end == field[10 + i] || *end) TH_BAD("bad cost '%s' (column %d)", field[10 + i], 11 + i);
  }
#undef TH_BAD
  return NULL;
}

#endif /* NCCLTJ_TEST_HOST_H_ */
