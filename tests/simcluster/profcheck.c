/*
 * profcheck.c -- a checking NCCL profiler plugin for the simulated cluster's own tests: it checks
 * that the host (tests/simcluster/simcluster.c --nccl-era) calls a profiler the way NCCL does
 * (/work/shared/design/profiler-facts.md, NVIDIA/nccl src/plugin/profiler.cc) and says what it saw.
 * Not part of the product; tests/simcluster/canary.py loads it before it trusts the host.
 *
 * Exports ncclProfiler_v4, _v5 and _v6. init returns the activation mask PROFCHECK_MASK (default
 * 0x40, ncclProfileKernelCh). Checked, each breach one "profcheck: ERROR ..." line:
 *   - only the event types the mask asks for arrive (a parent when a descendant's bit is set:
 *     GroupApi, CollApi, Group, Coll for KernelCh; KernelLaunch only for its own bit);
 *   - parents: v5+ GroupApi none, CollApi its GroupApi, Group none, Coll parentObj = the CollApi
 *     (stopped) and coll.parentGroup = the open Group; v4 Coll parentObj = the open Group;
 *     KernelCh parentObj = a Coll that has stopped;
 *   - GroupApi gets GroupStartApiStop then GroupEndApiStart, before its stop;
 *   - Coll fields: seqNumber counts per function from 0, AllGather/Broadcast in ncclInt8, algo and
 *     proto are NCCL's names, nChannels > 0; KernelCh channelId < the Coll's nChannels, each once;
 *   - every KernelCh gets ncclProfilerKernelChStop (pTimer >= its start) before its stop.
 * At finalize, on stderr: "profcheck: vV rank R commId 0x.. mask 0x.. events E groupApi A collApi B
 * group G coll C kernelCh K offThread T interleaved I launches L errors N", then per (function,
 * count, datatype, algo/proto/nChannels) "profcheck-series ... n=N kernelCh=K meanUs=M" (the span
 * from the earliest channel start to the latest stop).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "nccl_names.h"
#include "nccl_profiler_abi.h"
#include "profiler_events.h"

#define EXPORT __attribute__((visibility("default")))
#define MAXCH 64
#define MAXSERIES 256

typedef struct ev {
  uint64_t type;
  struct ev* parent;
  struct ev* next; /* every event, freed at finalize */
  int stopped;
  int states; /* GroupApi: 1 = GroupStartApiStop seen, 2 = GroupEndApiStart seen; KernelCh: 1 = stop recorded */
  /* Coll */
  char key[160];
  int nch, kStarted, kStopped, kOpen;
  uint64_t kMin, kMax;
  unsigned char chSeen[MAXCH];
  /* KernelCh */
  int channel;
  uint64_t pStart, pStop;
} ev_t;

typedef struct {
  char key[160];
  long n, kch;
  double sumUs;
} series_t;

typedef struct {
  int version, rank, mask;
  uint64_t commId;
  pid_t initTid;
  pthread_mutex_t mu;
  ev_t* all;
  ev_t *openGroupApi, *lastCollApi, *openGroup;
  long events, groupApi, collApi, group, coll, kernelCh, offThread, interleaved, launches, errors;
  uint64_t seq[8];
  series_t series[MAXSERIES];
  int nSeries;
} ctx_t;

/* stop and record carry no context: one communicator per process here */
static ctx_t* g_ctx;

static void err(ctx_t* c, const char* fmt, ...) {
  c->errors++;
  if (c->errors > 20) return;
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "profcheck: ERROR rank %d: ", c->rank);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

static int is_one_of(const char* s, const char* const* names, int n) {
  if (!s) return 0;
  for (int i = 0; i < n; i++)
    if (!strcmp(s, names[i])) return 1;
  return 0;
}

static ncclResult_t common_init(void** context, int* mask, uint64_t commId, int nNodes, int nranks, int rank, int v) {
  (void)nNodes;
  (void)nranks;
  ctx_t* c = calloc(1, sizeof *c);
  if (!c) return ncclSystemError;
  const char* m = getenv("PROFCHECK_MASK");
  c->mask = m && *m ? (int)strtol(m, NULL, 0) : ncclProfileKernelCh;
  c->version = v;
  c->rank = rank;
  c->commId = commId;
  c->initTid = (pid_t)syscall(SYS_gettid);
  pthread_mutex_init(&c->mu, NULL);
  *mask = c->mask;
  *context = c;
  g_ctx = c;
  return ncclSuccess;
}

static ncclResult_t init_v4(void** context, int* mask, const char* commName, uint64_t commHash, int nNodes, int nranks,
                            int rank, ncclDebugLogger_t logfn) {
  (void)commName;
  (void)logfn;
  return common_init(context, mask, commHash, nNodes, nranks, rank, 4);
}
static ncclResult_t init_v5(void** context, uint64_t commId, int* mask, const char* commName, int nNodes, int nranks,
                            int rank, ncclDebugLogger_t logfn) {
  (void)commName;
  (void)logfn;
  return common_init(context, mask, commId, nNodes, nranks, rank, 5);
}
static ncclResult_t init_v6(void** context, uint64_t commId, int* mask, const char* commName, int nNodes, int nranks,
                            int rank, ncclDebugLogger_t logfn) {
  (void)commName;
  (void)logfn;
  return common_init(context, mask, commId, nNodes, nranks, rank, 6);
}

/* The fields both descriptor layouts share, read into one form. */
typedef struct {
  uint64_t type;
  void* parentObj;
  uint64_t seq;
  const char *func, *datatype, *algo, *proto;
  size_t count;
  int nChannels;
  void* parentGroup;
  int channelId;
  uint64_t pTimer;
} descr_t;

static ncclResult_t start_common(void* context, void** eHandle, const descr_t* d) {
  ctx_t* c = context;
  *eHandle = NULL;
  if (!c) return ncclSuccess;
  pthread_mutex_lock(&c->mu);
  c->events++;
  int m = c->mask;
  ev_t* e = calloc(1, sizeof *e);
  e->type = d->type;
  e->next = c->all;
  c->all = e;
  int allowed;
  switch (d->type) {
    case ncclProfileGroupApi: allowed = c->version >= 5 && (m & TH_FIRES_GROUP_API); break;
    case ncclProfileCollApi: allowed = c->version >= 5 && (m & TH_FIRES_COLL_API); break;
    case ncclProfileKernelLaunch: allowed = c->version >= 5 && (m & ncclProfileKernelLaunch); break;
    case ncclProfileGroup: allowed = (m & TH_FIRES_GROUP) != 0; break;
    case ncclProfileColl: allowed = (m & TH_FIRES_COLL) != 0; break;
    case ncclProfileKernelCh: allowed = (m & ncclProfileKernelCh) != 0; break;
    default: allowed = 0;
  }
  if (!allowed) err(c, "event type 0x%llx started under mask 0x%x (v%d)", (unsigned long long)d->type, m, c->version);
  switch (d->type) {
    case ncclProfileGroupApi:
      c->groupApi++;
      if (d->parentObj) err(c, "GroupApi with a parentObj");
      if (c->openGroupApi) err(c, "GroupApi started while another is open");
      c->openGroupApi = e;
      break;
    case ncclProfileCollApi:
      c->collApi++;
      if (d->parentObj != c->openGroupApi || !c->openGroupApi) err(c, "CollApi's parentObj is not the open GroupApi");
      else if (c->openGroupApi->states != 1) err(c, "CollApi before GroupStartApiStop or after GroupEndApiStart");
      c->lastCollApi = e;
      break;
    case ncclProfileKernelLaunch:
      c->launches++;
      if (d->parentObj != c->openGroupApi) err(c, "KernelLaunch's parentObj is not the open GroupApi");
      break;
    case ncclProfileGroup:
      c->group++;
      if (d->parentObj) err(c, "Group with a parentObj");
      if (c->openGroup) err(c, "Group started while another is open");
      if (c->version >= 5 && c->openGroupApi && c->openGroupApi->states != 3) err(c, "Group before GroupEndApiStart");
      c->openGroup = e;
      break;
    case ncclProfileColl: {
      c->coll++;
      if (c->version >= 5) {
        if (d->parentObj != c->lastCollApi || !c->lastCollApi) err(c, "Coll's parentObj is not its CollApi");
        else if (!c->lastCollApi->stopped) err(c, "Coll started before its CollApi stopped");
        if (d->parentGroup != c->openGroup || !c->openGroup) err(c, "Coll's parentGroup is not the open Group");
      } else if (d->parentObj != c->openGroup || !c->openGroup) {
        err(c, "v4 Coll's parentObj is not the open Group");
      }
      int f = -1;
      for (int i = 0; i <= ncclFuncAllReduce; i++) /* the collectives, Broadcast .. AllReduce */
        if (d->func && !strcmp(d->func, ncclFuncNames[i])) f = i;
      if (f < 0) err(c, "Coll func %s", d->func ? d->func : "(null)");
      else if (d->seq != c->seq[f]++)
        err(c, "Coll %s seqNumber %llu, expected %llu", ncclFuncNames[f], (unsigned long long)d->seq,
            (unsigned long long)c->seq[f] - 1);
      if ((f == 0 || f == 2) && (!d->datatype || strcmp(d->datatype, "ncclInt8")))
        err(c, "%s Coll datatype %s, not ncclInt8", ncclFuncNames[f], d->datatype ? d->datatype : "(null)");
      if (!d->datatype || (strncmp(d->datatype, "ncclInt", 7) && strncmp(d->datatype, "ncclUint", 8) &&
                           strncmp(d->datatype, "ncclFloat", 9) && strcmp(d->datatype, "ncclBfloat16")))
        err(c, "Coll datatype %s", d->datatype ? d->datatype : "(null)");
      if (!is_one_of(d->algo, ncclAlgoNames, NCCL_NUM_ALGORITHMS) ||
          !is_one_of(d->proto, ncclProtoNames, NCCL_NUM_PROTOCOLS))
        err(c, "Coll algo/proto %s/%s", d->algo, d->proto);
      if (d->nChannels <= 0 || d->nChannels > MAXCH) err(c, "Coll nChannels %d", d->nChannels);
      e->nch = d->nChannels;
      snprintf(e->key, sizeof e->key, "%s count=%zu %s %s/%s/%d", d->func, d->count, d->datatype ? d->datatype : "?",
               d->algo ? d->algo : "?", d->proto ? d->proto : "?", d->nChannels);
      break;
    }
    case ncclProfileKernelCh: {
      c->kernelCh++;
      if ((pid_t)syscall(SYS_gettid) != c->initTid) c->offThread++;
      ev_t* p = d->parentObj;
      e->parent = p;
      e->channel = d->channelId;
      e->pStart = d->pTimer;
      if (!p || p->type != ncclProfileColl) {
        err(c, "KernelCh's parentObj is not a Coll");
        break;
      }
      if (!p->stopped) err(c, "KernelCh started before its Coll stopped");
      if (d->channelId >= p->nch) err(c, "KernelCh channel %d of a Coll with %d channels", d->channelId, p->nch);
      else if (p->chSeen[d->channelId]++) err(c, "KernelCh channel %d started twice", d->channelId);
      if (p->kOpen > 0) c->interleaved++;
      p->kOpen++;
      p->kStarted++;
      if (p->kStarted == 1 || d->pTimer < p->kMin) p->kMin = d->pTimer;
      break;
    }
    default: break;
  }
  *eHandle = e;
  pthread_mutex_unlock(&c->mu);
  return ncclSuccess;
}

/* The Coll and KernelCh members start_common reads, by the names v4 and v5/v6 share (their layouts
 * differ, so a macro over both). */
#define READ_COLL_KERNELCH(d, s) \
  do { \
    if ((s)->type == ncclProfileColl) { \
      (d).seq = (s)->coll.seqNumber; \
      (d).func = (s)->coll.func; \
      (d).datatype = (s)->coll.datatype; \
      (d).algo = (s)->coll.algo; \
      (d).proto = (s)->coll.proto; \
      (d).count = (s)->coll.count; \
      (d).nChannels = (s)->coll.nChannels; \
    } else if ((s)->type == ncclProfileKernelCh) { \
      (d).channelId = (s)->kernelCh.channelId; \
      (d).pTimer = (s)->kernelCh.pTimer; \
    } \
  } while (0)

static ncclResult_t start_v4(void* context, void** eHandle, ncclProfilerEventDescr_v4_t* s) {
  descr_t d = {.type = s->type, .parentObj = s->parentObj};
  READ_COLL_KERNELCH(d, s);
  return start_common(context, eHandle, &d);
}

static ncclResult_t start_v5(void* context, void** eHandle, ncclProfilerEventDescr_v5_t* s) {
  descr_t d = {.type = s->type, .parentObj = s->parentObj};
  READ_COLL_KERNELCH(d, s);
  if (s->type == ncclProfileColl) d.parentGroup = s->coll.parentGroup;
  return start_common(context, eHandle, &d);
}

static ncclResult_t start_v6(void* context, void** eHandle, ncclProfilerEventDescr_v6_t* s) {
  return start_v5(context, eHandle, (ncclProfilerEventDescr_v5_t*)s); /* same prefix layout */
}

static void add_series(ctx_t* c, const ev_t* coll) {
  series_t* s = NULL;
  for (int i = 0; i < c->nSeries; i++)
    if (!strcmp(c->series[i].key, coll->key)) s = &c->series[i];
  if (!s) {
    if (c->nSeries == MAXSERIES) return;
    s = &c->series[c->nSeries++];
    snprintf(s->key, sizeof s->key, "%s", coll->key);
  }
  s->n++;
  s->kch += coll->kStopped;
  s->sumUs += (double)(coll->kMax - coll->kMin) / 1000.0;
}

static ncclResult_t stop_ev(void* h) {
  ctx_t* c = g_ctx;
  ev_t* e = h;
  if (!c || !e) return ncclSuccess;
  pthread_mutex_lock(&c->mu);
  if (e->stopped) err(c, "event type 0x%llx stopped twice", (unsigned long long)e->type);
  e->stopped = 1;
  switch (e->type) {
    case ncclProfileGroupApi:
      if (e->states != 3) err(c, "GroupApi stopped without both GroupStartApiStop and GroupEndApiStart");
      if (c->openGroupApi == e) c->openGroupApi = NULL;
      break;
    case ncclProfileGroup:
      if (c->openGroup == e) c->openGroup = NULL;
      break;
    case ncclProfileKernelCh: {
      ev_t* p = e->parent;
      if (!e->states) err(c, "KernelCh stopped without ncclProfilerKernelChStop");
      if (p && p->type == ncclProfileColl) {
        p->kOpen--;
        p->kStopped++;
        if (p->kStopped == 1 || e->pStop > p->kMax) p->kMax = e->pStop;
        if (p->kStopped == p->nch) add_series(c, p);
      }
      break;
    }
    default: break;
  }
  pthread_mutex_unlock(&c->mu);
  return ncclSuccess;
}

static ncclResult_t record_v4(void* h, ncclProfilerEventState_t s, ncclProfilerEventStateArgs_v4_t* a) {
  ctx_t* c = g_ctx;
  ev_t* e = h;
  if (!c || !e) return ncclSuccess;
  pthread_mutex_lock(&c->mu);
  if (e->type == ncclProfileGroupApi) {
    if (s == ncclProfilerGroupStartApiStop && e->states == 0) e->states = 1;
    else if (s == ncclProfilerGroupEndApiStart && e->states == 1) e->states = 3;
    else err(c, "GroupApi state %d out of order", (int)s);
  } else if (e->type == ncclProfileKernelCh && s == ncclProfilerKernelChStop) {
    if (!a) err(c, "KernelChStop without args");
    else if (a->kernelCh.pTimer < e->pStart) err(c, "KernelChStop pTimer before the start");
    else {
      e->pStop = a->kernelCh.pTimer;
      e->states = 1;
    }
  } else {
    err(c, "state %d recorded on event type 0x%llx", (int)s, (unsigned long long)e->type);
  }
  pthread_mutex_unlock(&c->mu);
  return ncclSuccess;
}

static ncclResult_t finalize_ev(void* context) {
  ctx_t* c = context;
  if (!c) return ncclSuccess;
  fprintf(stderr,
          "profcheck: v%d rank %d commId 0x%llx mask 0x%x events %ld groupApi %ld collApi %ld group %ld coll %ld "
          "kernelCh %ld offThread %ld interleaved %ld launches %ld errors %ld\n",
          c->version, c->rank, (unsigned long long)c->commId, c->mask, c->events, c->groupApi, c->collApi, c->group,
          c->coll, c->kernelCh, c->offThread, c->interleaved, c->launches, c->errors);
  for (int i = 0; i < c->nSeries; i++)
    fprintf(stderr, "profcheck-series %s n=%ld kernelCh=%ld meanUs=%.4f\n", c->series[i].key, c->series[i].n,
            c->series[i].kch, c->series[i].sumUs / (double)c->series[i].n);
  for (ev_t* e = c->all; e;) {
    ev_t* n = e->next;
    free(e);
    e = n;
  }
  g_ctx = NULL;
  free(c);
  return ncclSuccess;
}

EXPORT const ncclProfiler_v4_t ncclProfiler_v4 = {"profcheck", init_v4, start_v4, stop_ev, record_v4, finalize_ev};
EXPORT const ncclProfiler_v5_t ncclProfiler_v5 = {"profcheck", init_v5, start_v5, stop_ev, record_v4, finalize_ev};
EXPORT const ncclProfiler_v6_t ncclProfiler_v6 = {"profcheck", init_v6, start_v6, stop_ev, record_v4, finalize_ev};
