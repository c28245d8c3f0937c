#define _GNU_SOURCE
#include <time.h>
#include "nccl_tuner_abi.h"
#include "test_host.h"
static void logger(ncclDebugLogLevel level, unsigned long flags, const char* file, int line, const char* fmt, ...) {
  char msg[2048];
  va_list ap;
  va_start(ap, fmt);
  th_format_log(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (strstr(msg, "engine on") || level == NCCL_LOG_WARN || strstr(msg, "summary"))
    printf("LOG %s %.300s\n", th_level_name(level), msg);
}
int main(int argc, char** argv) {
  void* lib;
  char why[256];
  const ncclTuner_v3_t* T = th_load_tuner(argv[1], &lib, why, sizeof why);
  if (!T) {
    printf("load: %s\n", why);
    return 2;
  }
  void* c = NULL;
  T->init(2, 2, logger, &c);
  long bad = 0, changed = 0, calls = 0;
  double worst = 0;
  int shapes[][2] = {{7, 3}, {6, 3}, {2, 2}, {1, 1}, {7, 2}};
  for (int s = 0; s < 5; s++)
    for (int coll = 0; coll < 5; coll++)
      for (int sh = 0; sh < 40; sh++)
        for (int pipe = 0; pipe <= 2; pipe++) {
          int na = shapes[s][0], np = shapes[s][1];
          float buf[64 + 21 + 64];
          for (int i = 0; i < 149; i++) buf[i] = 12345.0f;
          float* t = buf + 64;
          for (int i = 0; i < na * np; i++) t[i] = (i % 5 == 4) ? -1.0f : 10.0f + i;
          float before[21];
          memcpy(before, t, sizeof before);
          int nch = 0;
          struct timespec a, b;
          clock_gettime(CLOCK_MONOTONIC, &a);
          T->getCollInfo(c, (ncclFunc_t)coll, (size_t)1 << sh, pipe, (float**)t, na, np, &nch);
          clock_gettime(CLOCK_MONOTONIC, &b);
          double us = (b.tv_sec - a.tv_sec) * 1e6 + (b.tv_nsec - a.tv_nsec) / 1e3;
          if (us > worst && calls > 10) worst = us;
          calls++;
          for (int i = 0; i < 64; i++)
            if (buf[i] != 12345.0f || buf[64 + 21 + i] != 12345.0f) {
              bad++;
              printf("BAD guard written\n");
            }
          for (int i = na * np; i < 21; i++)
            if (t[i] != 12345.0f) {
              bad++;
              printf("BAD outside %dx%d at %d\n", na, np, i);
            }
          for (int i = 0; i < na * np; i++) {
            if (t[i] == -1.0f && before[i] != -1.0f) {
              bad++;
              printf("BAD -1 written\n");
            }
            if (before[i] == -1.0f && t[i] != -1.0f) {
              bad++;
              printf("BAD -1 entry changed\n");
            }
          }
          if (nch < 0 || nch > 64) {
            bad++;
            printf("BAD nChannels %d\n", nch);
          }
          if (memcmp(before, t, sizeof(float) * na * np) || nch) changed++;
        }
  T->destroy(c);
  printf("RESULT calls=%ld changed=%ld bad=%ld worst_us=%.0f\n", calls, changed, bad, worst);
  return 0;
}
