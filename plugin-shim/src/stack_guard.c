/*
 * stack_guard.c -- a calling thread's stack as the host had it, after the JVM let go of it.
 *
 * Attaching a thread, HotSpot protects the low end of its stack (its reserved, yellow and red
 * zones: 16 KiB with 4 KiB pages, HotSpot 25 src/hotspot/cpu/x86/globals_x86.hpp), and detaching it
 * "removes" those pages by uncommitting them (os::remove_stack_guard_pages ->
 * os::uncommit_memory in os_linux.cpp), which leaves them PROT_NONE. glibc then caches the stack
 * and hands it to a later thread of the host, which has 16 KiB less than it asked for and dies
 * early in a deep recursion; a stack the host supplied itself (pthread_attr_setstack) stays
 * unreadable in part after the thread ended (found by a hostile host: hh_stack, 2026-12-03; the
 * same with plain JNI, no plugin).
 *
 * So before the attach the shim notes which pages of the stack's low end are readable and
 * writable, and after the detach it makes those of them that are now PROT_NONE read-write again:
 * only what the JVM changed, and only while it still holds the JVM's value. Both read
 * /proc/self/maps (about 0.1-0.3 ms for a JVM process), once per thread that calls the plugin.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "jvm_internal.h"

/* How much of the stack's low end is looked at: HotSpot's zones with the largest page size and
 * zone sizes its options allow are well within it. */
#define GUARD_SPAN (1024 * 1024)
#define MAX_RANGES 8

typedef struct {
  uintptr_t lo, hi; /* the part of the thread's stack looked at */
  int n;            /* read-write ranges in it before the attach */
  uintptr_t from[MAX_RANGES], to[MAX_RANGES];
} stackBefore;

static __thread stackBefore before __attribute__((tls_model("initial-exec")));

/* Calls each(from, to, perm, arg) for every mapping of /proc/self/maps that meets [lo, hi),
 * clipped to it; perm starts with the 4 letters ("rw-p ..."). Reads with read(2) into a stack buffer: no
 * stdio, no allocation (it also runs in a pthread key destructor). Returns 0, or -1 if the file
 * could not be read. */
static int eachMapping(uintptr_t lo, uintptr_t hi, void (*each)(uintptr_t, uintptr_t, const char*, void*), void* arg) {
  int fd;
  do fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
  while (fd < 0 && errno == EINTR);
  if (fd < 0) return -1;
  char buf[8192];
  size_t have = 0;
  int rc = 0, skipping = 0; /* skipping: the rest of a line longer than the buffer */
  for (;;) {
    ssize_t r = read(fd, buf + have, sizeof buf - have);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      rc = -1;
      break;
    }
    have += (size_t)r;
    size_t start = 0;
    for (size_t i = 0; i < have; i++) {
      if (buf[i] != '\n') continue;
      buf[i] = '\0';
      const char* line = buf + start;
      start = i + 1;
      if (skipping) {
        skipping = 0;
        continue;
      }
      char* end;
      uintptr_t a = (uintptr_t)strtoull(line, &end, 16);
      if (*end == '-') {
        uintptr_t b = (uintptr_t)strtoull(end + 1, &end, 16);
        if (*end == ' ' && strlen(end + 1) >= 4 && a < hi && b > lo)
          each(a < lo ? lo : a, b > hi ? hi : b, end + 1, arg);
      }
    }
    if (start == 0 && have == sizeof buf) { /* a line longer than the buffer: skip it to its end */
      have = 0;
      skipping = 1;
    }
    memmove(buf, buf + start, have - start);
    have -= start;
    if (r == 0) break;
  }
  close(fd);
  return rc;
}

static void noteReadWrite(uintptr_t from, uintptr_t to, const char* perm, void* arg) {
  stackBefore* b = arg;
  if (perm[0] != 'r' || perm[1] != 'w' || b->n == MAX_RANGES) return;
  if (b->n > 0 && b->to[b->n - 1] == from) { /* adjacent mappings: one range */
    b->to[b->n - 1] = to;
    return;
  }
  b->from[b->n] = from;
  b->to[b->n++] = to;
}

HIDDEN void nccltjThreadStack(uintptr_t* low, uintptr_t* high) {
  pthread_attr_t a;
  void* addr = NULL;
  size_t size = 0;
  if (pthread_getattr_np(pthread_self(), &a) == 0) {
    pthread_attr_getstack(&a, &addr, &size);
    pthread_attr_destroy(&a);
  }
  *low = addr != NULL ? (uintptr_t)addr : 1;
  *high = addr != NULL ? (uintptr_t)addr + size : UINTPTR_MAX;
}

HIDDEN void nccltjStackGuardBefore(uintptr_t stackLow, uintptr_t stackHigh) {
  memset(&before, 0, sizeof before);
  if (stackLow <= 1 || stackHigh <= stackLow) return; /* bounds unknown: nothing to put back */
  before.lo = stackLow;
  before.hi = stackHigh - stackLow > GUARD_SPAN ? stackLow + GUARD_SPAN : stackHigh;
  if (eachMapping(before.lo, before.hi, noteReadWrite, &before) != 0) before.n = 0;
}

static void restoreNone(uintptr_t from, uintptr_t to, const char* perm, void* arg) {
  (void)arg;
  if (perm[0] != '-' || perm[1] != '-' || perm[2] != '-') return; /* not the JVM's PROT_NONE (any more) */
  for (int i = 0; i < before.n; i++) {
    uintptr_t a = from > before.from[i] ? from : before.from[i];
    uintptr_t b = to < before.to[i] ? to : before.to[i];
    if (a < b) mprotect((void*)a, b - a, PROT_READ | PROT_WRITE);
  }
}

HIDDEN void nccltjStackGuardRestore(void) {
  if (before.n == 0) return;
  eachMapping(before.lo, before.hi, restoreNone, NULL);
  before.n = 0;
}
