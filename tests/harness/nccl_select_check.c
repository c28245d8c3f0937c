/*
 * nccl_select_check.c -- tests/include/nccl_select.h's th_nccl_pick against the rule NCCL 2.28.9's
 * topoGetAlgoInfo applies (the header's comment): the strict minimum of the entries >= 0 below
 * 3.6e9 us, algorithm-major, the first minimum winning a tie; -1 and NaN never chosen. Run by
 * tests/harness/test_harness.sh; prints one line per failed check, exits 1 if any failed.
 */
#include <math.h>
#include <stdio.h>

#include "nccl_select.h"

static int failures;

static void check(const char* what, int got, int want) {
  if (got != want) {
    printf("nccl_select_check: %s: pick %d, want %d\n", what, got, want);
    failures++;
  }
}

int main(void) {
  const int np = NCCL_NUM_PROTOCOLS;
  float t[NCCL_NUM_ALGORITHMS * NCCL_NUM_PROTOCOLS];
  for (int i = 0; i < NCCL_NUM_ALGORITHMS * NCCL_NUM_PROTOCOLS; i++) t[i] = NCCL_ALGO_PROTO_IGNORE;
  check("all -1", th_nccl_pick(t, NCCL_NUM_ALGORITHMS, np), -1);
  t[NCCL_ALGO_RING * np + NCCL_PROTO_SIMPLE] = 7.0f;
  t[NCCL_ALGO_NVLS * np + NCCL_PROTO_SIMPLE] = 7.0f;
  check("a tie: the first in algorithm-major order", th_nccl_pick(t, NCCL_NUM_ALGORITHMS, np),
        NCCL_ALGO_RING * np + NCCL_PROTO_SIMPLE);
  t[NCCL_ALGO_TREE * np + NCCL_PROTO_LL] = NAN;
  check("NaN is never picked", th_nccl_pick(t, NCCL_NUM_ALGORITHMS, np), NCCL_ALGO_RING * np + NCCL_PROTO_SIMPLE);
  t[NCCL_ALGO_TREE * np + NCCL_PROTO_LL128] = 0.0f;
  check("0.0 (a tuner's choice) wins", th_nccl_pick(t, NCCL_NUM_ALGORITHMS, np),
        NCCL_ALGO_TREE * np + NCCL_PROTO_LL128);
  for (int i = 0; i < NCCL_NUM_ALGORITHMS * NCCL_NUM_PROTOCOLS; i++) t[i] = TH_NCCL_MIN_TIME_INIT;
  check("3.6e9 us is never picked", th_nccl_pick(t, NCCL_NUM_ALGORITHMS, np), -1);
  return failures ? 1 : 0;
}
