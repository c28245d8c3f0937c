/*
 * tunemodel.h -- the simulated cluster's second model (SIMCLUSTER_MODEL=tune): NCCL's own cost
 * model computed from its constants, and a true model that differs from it by the shape.
 *
 * The NCCL model is a port of ncclTopoTuneModel and ncclTopoGetAlgoTime (NCCL 2.28.9
 * src/graph/tuning.cc) for the Ring and Tree entries, from the constants the tuner's init left in
 * ncclTunerConstants_v5_t (NCCL's defaults before init: ncclTunerConstantsDefaults, same file; a
 * v3/v4 tuner gets none, so the defaults stay) and a fixed topology: H100-class GPUs
 * (minCompCap 90), an Intel CPU, -g GPUs per node over NVLink, one NIC per GPU (PIX), ring and
 * tree graphs of 8 channels at 40 GB/s intra / 20 GB/s inter per channel, 16 collective
 * channels, tree pattern 1 (balanced). The simulated run prints what NCCL prints of it at INFO
 * (GRAPH and TUNING): the two graph lines and the latency/bandwidth table (rank 0).
 *
 * The truth is the same formulas with other constants, plus one effect no constant expresses:
 *   F1  perChMaxTreeBws[HOPPER][4NODES] is 12 GB/s, not 36: on 3+ nodes Tree runs at
 *       8 x 12 = 96 GB/s bus bandwidth, not 8 x 20 x 0.92 (fixable: that constant)
 *   F2  hwLatencies[NET][TREE][LL] is 10 us, not 5: Tree/LL latency grows with log2(nNodes)
 *       faster than NCCL thinks (fixable: that constant)
 *   U   Tree/LL128 is 30% slower from 1 MiB to 4 MiB at every shape (a size window: no constant
 *       expresses it; measured rules can, at the measured shapes)
 * so NCCL's defaults lose more the more nodes there are, and constants fitted on a few shapes fix
 * F1 and F2 everywhere. Channels a tuner sets do not change the truth in this model.
 */
#ifndef SIMCLUSTER_TUNEMODEL_H
#define SIMCLUSTER_TUNEMODEL_H

#include <math.h>
#include <stdio.h>

#define TM_RING_CH 8
#define TM_TREE_CH 8
#define TM_BW_INTRA 40.0
#define TM_BW_INTER 20.0
#define TM_COMM_CH 16
#define TM_TREE_PATTERN 1

static int g_tm; /* SIMCLUSTER_MODEL=tune */
static int g_tmReady;
static double g_tmLat[5][NA][NP], g_tmBw[5][NA][NP]; /* NCCL's, from g_constants */
static double g_tmTrueLat[5][NA][NP], g_tmTrueBw[5][NA][NP];

/* NCCL 2.28.9 src/graph/tuning.cc ncclTunerConstantsDefaults */
static void tm_defaults(ncclTunerConstants_v5_t* k) {
  static const double base[7][3] = {{6.8, 14.0, 8.4}, {6.6, 14.0, 8.4}, {0, 0, 0},      {0, 0, 0},
                                    {0, 0, 0},        {0, 0, 0},        {8.0, 8.0, 8.0}};
  static const double hw[3][7][3] = {
    {{.6, 1.25, 4.0}, {.6, 1.9, 3.4}, {0, 0, 3.7}, {0, 0, 2.8}, {0, 0, 25}, {0, 0, 25}, {0, 0, 4.0}},
    {{1.0, 1.9, 4.0}, {1.0, 2.5, 5.7}, {0, 0, 3.7}, {0, 0, 2.8}, {0, 0, 0}, {0, 0, 0}, {0, 0, 4.0}},
    {{5.0, 8.5, 14}, {2.7, 4.0, 14.0}, {0, 0, 31}, {0, 0, 30}, {0, 0, 18}, {0, 0, 20.9}, {0, 0, 14}}};
  static const double ll[4][3] = {{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}, {282.0, 90.0, 70.0}};
  static const double rl[4][3] = {{20, 20, 20}, {20, 20, 20}, {36.7, 36.7, 36.7}, {73.4, 34.6, 73.4}};
  static const double tl[4][3] = {{20, 20, 20}, {20, 20, 20}, {36.7, 36.7, 29.0}, {55.6, 31.67, 20.0}};
  static const double tr[4][3] = {{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {70.0, 42.8, 24.0}};
  static const double nt[4][3] = {{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {0.0, 57.7, 45.5}, {0.0, 96.0, 43.8}};
  memset(k, 0, sizeof *k);
  for (int a = 0; a < 7; a++)
    for (int p = 0; p < 3; p++) {
      k->baseLatencies[a][p] = base[a][p];
      for (int l = 0; l < 3; l++) k->hwLatencies[l][a][p] = hw[l][a][p];
    }
  for (int c = 0; c < 4; c++)
    for (int s = 0; s < 3; s++) {
      k->llMaxBws[c][s] = ll[c][s];
      k->perChMaxRingLL128Bws[c][s] = rl[c][s];
      k->perChMaxTreeLL128Bws[c][s] = tl[c][s];
      k->perChMaxTreeBws[c][s] = tr[c][s];
      k->perChMaxNVLSTreeBws[c][s] = nt[c][s];
    }
}

static int tm_log2i(long n) {
  int l = -1;
  while (n > 0) {
    n >>= 1;
    l++;
  }
  return l;
}

/* ncclTopoTuneModel (2.28.9), Ring and Tree; Hopper (index 2), Intel (llMaxBws row 0 off one node) */
static void tm_tune(const ncclTunerConstants_v5_t* k, double lat[5][NA][NP], double bw[5][NA][NP]) {
  memset(lat, 0, sizeof(double) * 5 * NA * NP);
  memset(bw, 0, sizeof(double) * 5 * NA * NP);
  int nRanks = (int)g_nRanks, nNodes = (int)g_nNodes;
  if (nRanks <= 1) return;
  int cc = 2, scale = nNodes <= 2 ? nNodes - 1 : 2, row = nNodes == 1 ? cc : 0;
  double llMaxBw = k->llMaxBws[row][scale];
  double ringLL128 = k->perChMaxRingLL128Bws[cc][scale], treeLL128 = k->perChMaxTreeLL128Bws[cc][scale];
  double treeBw = k->perChMaxTreeBws[cc][scale];
  float ppn = (float)nRanks / nNodes;
  int hw = nNodes == 1 ? 0 : 2; /* NVLink inside a node, NET across */
  for (int c = 0; c < 5; c++) {
    int nsteps = c == 4 ? 2 * (nRanks - 1) : (c == 2 || c == 3) ? nRanks - 1 : nRanks;
    for (int a = 0; a < 2; a++) {
      if (a == 0 && c != 4) continue;
      int nch = a == 1 ? TM_RING_CH : TM_TREE_CH;
      for (int p = 0; p < NP; p++) {
        double busBw = nch * (nNodes <= 2 ? TM_BW_INTRA : TM_BW_INTER);
        if (a == 1 && p == 0) busBw = fmin(llMaxBw, busBw * .5);
        if (a == 1 && p == 1) busBw = fmin(busBw * 0.92, nch * ringLL128);
        if (a == 0) {
          busBw = fmin(busBw * .92, nch * treeBw);
          if (p == 0) busBw = fmin(busBw * 1.0 / 3.8, llMaxBw);
          if (p == 1) busBw = fmin(busBw * (nNodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0), nch * treeLL128);
          if (TM_TREE_PATTERN == 3) busBw *= .85;
        }
        busBw *= a == 1 ? (1.0 * nRanks) / nsteps : .5;
        bw[c][a][p] = (float)busBw;
        double l = k->baseLatencies[a][p];
        float intraLat = (float)k->hwLatencies[0][a][p];
        float interLat = (float)(ppn == 1 ? k->hwLatencies[2][0][p] : k->hwLatencies[2][a][p]);
        if (a == 1) {
          if (c == 0 || c == 1) {
            l += k->hwLatencies[hw][a][p]; /* sameChannels 1 */
          } else {
            float netOverhead = nNodes > 1 ? (p == 2 ? 3.0f : 1.0f) : 0.0f;
            if (intraLat < netOverhead) intraLat = netOverhead;
            int nInter = nNodes == 1 ? 0 : c == 4 ? 2 * (nNodes - 1) : nNodes - 1;
            l += (nsteps - nInter) * intraLat + nInter * interLat;
          }
        } else {
          l += 2 * ((nRanks / nNodes - 1) * intraLat + tm_log2i(nNodes) * interLat);
        }
        lat[c][a][p] = (float)l;
      }
    }
  }
}

/* ncclTopoGetAlgoTime (2.28.9): Tree correction for AllReduce, the Ring/SIMPLE plateau, numPipeOps 1 */
static double tm_time(double lat[5][NA][NP], double bw[5][NA][NP], int c, int a, int p, double n) {
  static const float corr[NP][23] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9}};
  double b = bw[c][a][p], l = lat[c][a][p];
  if (b == 0) return -1;
  int logSize = tm_log2i((long)n >> 6);
  if (a == 0 && c == 4 && logSize >= 0 && logSize < 23) b *= corr[p][logSize];
  if (a == 1 && p == 2 && g_nNodes > 1 && c == 4 && (long)n / (TM_COMM_CH * g_nRanks) >= 64) l *= 1.4;
  return l + n / (1000 * b);
}

static void tm_print_table(void) {
  static const char* const fn[5] = {"Broadcast", "Reduce", "AllGather", "ReduceScatter", "AllReduce"};
  char line[1024];
  for (int block = 0; block < 3; block++) {
    int off = snprintf(line, sizeof line, "  Algorithm   |");
    for (int ba = 0; ba < 3 && block * 3 + ba < NA; ba++)
      off += snprintf(line + off, sizeof line - off, " %14s   %14s   %14s |", "", ncclAlgoNames[block * 3 + ba], "");
    info("%s", line);
    off = snprintf(line, sizeof line, "  Protocol    |");
    for (int ba = 0; ba < 3; ba++)
      for (int p = 0; p < NP; p++) off += snprintf(line + off, sizeof line - off, " %14s |", ncclProtoNames[p]);
    info("%s", line);
    off = snprintf(line, sizeof line, " Max NThreads |");
    for (int ba = 0; ba < 3 && block * 3 + ba < NA; ba++)
      for (int p = 0; p < NP; p++) off += snprintf(line + off, sizeof line - off, " %14d |", p == 1 ? 640 : 512);
    info("%s", line);
    for (int c = 0; c < 5; c++) {
      off = snprintf(line, sizeof line, "%13s |", fn[c]);
      for (int ba = 0; ba < 3 && block * 3 + ba < NA; ba++)
        for (int p = 0; p < NP; p++)
          off += snprintf(line + off, sizeof line - off, "%8.1f/%6.1f |", g_tmLat[c][block * 3 + ba][p],
                          g_tmBw[c][block * 3 + ba][p]);
      info("%s", line);
    }
  }
}

/* The first cost table of the run: NCCL's tables from the constants init left, and the truth's. */
static void tm_ready(void) {
  if (g_tmReady) return;
  g_tmReady = 1;
  tm_tune(&g_constants, g_tmLat, g_tmBw);
  ncclTunerConstants_v5_t t;
  tm_defaults(&t);
  t.perChMaxTreeBws[2][2] = 12.0; /* F1 */
  t.hwLatencies[2][0][0] = 10.0;  /* F2 */
  tm_tune(&t, g_tmTrueLat, g_tmTrueBw);
  info("Pattern 4, crossNic 0, nChannels %d, bw %f/%f, type NVL/PIX, sameChannels 1", TM_RING_CH, TM_BW_INTRA,
       TM_BW_INTER);
  info("Pattern %d, crossNic 0, nChannels %d, bw %f/%f, type NVL/PIX, sameChannels 1", TM_TREE_PATTERN, TM_TREE_CH,
       TM_BW_INTRA, TM_BW_INTER);
  info("%d coll channels, 0 collnet channels, 0 nvls channels, %d p2p channels, 2 p2p channels per peer", TM_COMM_CH,
       TM_COMM_CH);
  tm_print_table();
}

static int tm_offered(int a, int p) {
  tm_ready();
  return a < 2 && g_tmBw[g_coll][a][p] > 0;
}

static void tm_nccl_table(double n, float table[NA][NP]) {
  tm_ready();
  for (int a = 0; a < NA; a++)
    for (int p = 0; p < NP; p++)
      table[a][p] = a < 2 && g_tmBw[g_coll][a][p] > 0 ? (float)tm_time(g_tmLat, g_tmBw, g_coll, a, p, n) :
                                                        (float)NCCL_ALGO_PROTO_IGNORE;
}

static double tm_true_time(int a, int p, double n) {
  tm_ready();
  double t = tm_time(g_tmTrueLat, g_tmTrueBw, g_coll, a, p, n);
  if (a == 0 && p == 1 && n >= 1048576 && n < 4194304) t *= 1.3; /* U */
  return t;
}

/* SIMCLUSTER_MODEL=tune: this model, NCCL's constants starting at NCCL's defaults. */
static void tm_setup(void) {
  const char* m = getenv("SIMCLUSTER_MODEL");
  g_tm = m && !strcmp(m, "tune");
  if (g_tm) tm_defaults(&g_constants);
}

#endif
