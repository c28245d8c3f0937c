/*
 * log.c -- NCCL's logger from the shim: every line goes through nccltjLog, which calls NCCL's
 * logger on a host thread and queues lines from the JVM's own threads (the deferred-log ring)
 * for the next host call; and the two texts the start leaves for the first init, the failure
 * (nccltjFailf) and the notice (nccltjNoticef).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "jvm_internal.h"

HIDDEN char nccltjStartFailure[1024];
HIDDEN int nccltjFailureLogged;
HIDDEN pthread_mutex_t nccltjLogMutex = PTHREAD_MUTEX_INITIALIZER;
HIDDEN ncclDebugLogger_t nccltjFirstLogger;
HIDDEN char nccltjNotice[1024];

/* Without a logger (NCCL always passes one) the line is dropped: the host's fds 1 and 2 are not
 * the plugin's to write (a hostile host's NULL logger got a WARN on stderr). */
static void callLogger(void* logger, int level, const char* message) {
  if (logger != NULL) {
    ((ncclDebugLogger_t)logger)((ncclDebugLogLevel)level, NCCL_TUNING, __FILE__, __LINE__, LOG_PREFIX "%s", message);
  }
}

/* Lines logged on a thread that is not the host's (HotSpot's VM thread printing -verbose:gc, the
 * shim's JVM-creating thread, the decision-log writer) wait here for the next init or destroy on
 * a host thread: the host's logger may take a lock that the calling thread holds around its
 * tuner call while it waits for that other thread (a hostile host deadlocked so). */
#define DEFERRED_LINES 2048 /* -XX:+PrintFlagsFinal at creation prints ~900; BSS, touched when used */
static struct {
  void* logger;
  int level;
  char text[480];
} deferred[DEFERRED_LINES];
static int deferredHead;              /* guarded by deferredMutex: a ring from deferredHead */
HIDDEN int nccltjDeferredCount;       /* guarded by deferredMutex (read without it: a hint) */
static unsigned long deferredDropped; /* guarded by deferredMutex */
static pthread_mutex_t deferredMutex = PTHREAD_MUTEX_INITIALIZER;
static __thread int hostThread __attribute__((tls_model("initial-exec")));

HIDDEN void nccltjMarkHostThread(void) {
  hostThread = 1;
}

HIDDEN void nccltjFlushDeferredLog(void) {
  if (!hostThread || __atomic_load_n(&nccltjDeferredCount, __ATOMIC_RELAXED) == 0) return;
  for (;;) {
    void* logger;
    int level;
    char text[sizeof deferred[0].text];
    unsigned long dropped = 0;
    pthread_mutex_lock(&deferredMutex);
    if (nccltjDeferredCount == 0) {
      dropped = deferredDropped;
      deferredDropped = 0;
      pthread_mutex_unlock(&deferredMutex);
      if (dropped != 0) {
        snprintf(text, sizeof text, "%lu lines from the JVM's own threads were dropped (more than %d waiting)", dropped,
                 DEFERRED_LINES);
        callLogger((void*)nccltjFirstLogger, NCCL_LOG_INFO, text);
      }
      return;
    }
    logger = deferred[deferredHead].logger;
    level = deferred[deferredHead].level;
    memcpy(text, deferred[deferredHead].text, sizeof text);
    deferredHead = (deferredHead + 1) % DEFERRED_LINES;
    nccltjDeferredCount--;
    pthread_mutex_unlock(&deferredMutex);
    callLogger(logger, level, text);
  }
}

/* Queues a line for the next nccltjFlushDeferredLog on a host thread (after the current upcall). */
HIDDEN void nccltjDeferLog(void* logger, int level, const char* message) {
  pthread_mutex_lock(&deferredMutex);
  if (nccltjDeferredCount < DEFERRED_LINES) {
    int at = (deferredHead + nccltjDeferredCount) % DEFERRED_LINES;
    deferred[at].logger = logger;
    deferred[at].level = level;
    snprintf(deferred[at].text, sizeof deferred[0].text, "%s", message);
    nccltjDeferredCount++;
  } else {
    deferredDropped++;
  }
  pthread_mutex_unlock(&deferredMutex);
}

HIDDEN void nccltjLog(void* logger, int level, const char* message) {
  if (!hostThread) {
    nccltjDeferLog(logger, level, message);
    return;
  }
  nccltjFlushDeferredLog();
  callLogger(logger, level, message);
}

HIDDEN void nccltjFailf(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(nccltjStartFailure, sizeof nccltjStartFailure, fmt, ap);
  va_end(ap);
}

HIDDEN void nccltjNoticef(const char* fmt, ...) {
  size_t used = strlen(nccltjNotice);
  if (used >= sizeof nccltjNotice - 3) return;
  if (used > 0) used += (size_t)snprintf(nccltjNotice + used, sizeof nccltjNotice - used, "; ");
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(nccltjNotice + used, sizeof nccltjNotice - used, fmt, ap);
  va_end(ap);
}

HIDDEN void nccltjLogInForkedChild(void) {
  pthread_mutex_init(&nccltjLogMutex, NULL);
  pthread_mutex_init(&deferredMutex, NULL);
}
