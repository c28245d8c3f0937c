/*
 * cloexec.c -- close-on-exec for the plugin's own descriptors (the runtime's lib/, the engine
 * jar, the decision log and the call record), recognised by what they point at.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jvm_internal.h"

/* The real paths the plugin's own descriptors point at, resolved once (realpath costs a few
 * system calls per path component; the scan runs at every init and destroy). */
static char realJar[4200], realHome[4200];
static size_t realHomeLength;
static int realPathsKnown;

static void knowRealPaths(void) {
  if (realPathsKnown) return;
  const char* jar = nccltjEngineJar();
  const char* home = nccltjJavaHome();
  if (jar[0] == '\0' || realpath(jar, realJar) == NULL) realJar[0] = '\0';
  if (home[0] == '\0' || realpath(home, realHome) == NULL) realHome[0] = '\0';
  realHomeLength = strlen(realHome);
  realPathsKnown = 1;
}

/* Whether `target` may be a file named by an NCCL_TUNER_JAVA_LOG / _RECORD value: the whole
 * value, or, where it has %h/%p expansions, the same text up to the first '%'. */
static int matchesLogValue(const char* target, const char* value) {
  if (value == NULL || value[0] != '/') return 0;
  const char* pct = strchr(value, '%');
  size_t n = pct == NULL ? strlen(value) + 1 : (size_t)(pct - value);
  return n > 1 && strncmp(target, value, n) == 0;
}

/* The JVM and the engine open their files (the Java runtime's lib/modules, the engine jar, the
 * decision log and the call record) without close-on-exec, so a child the host forks and execs
 * would inherit them (found by a hostile host). Marks exactly those close-on-exec, recognised by
 * what they point at; every other descriptor is the host's and is left alone. Called on a host
 * thread after the JVM start and after each init and destroy (cold paths); a file the engine
 * opens later is marked at the next of them. */
HIDDEN void nccltjCloseOnExecOwnFiles(void) {
  static int started;
  const char* log = getenv("NCCL_TUNER_JAVA_LOG");
  const char* record = getenv("NCCL_TUNER_JAVA_RECORD");
  /* The JVM opens its files during the start; later only the decision log and the record are
   * opened, so without them one scan, after the start, is enough. */
  if (started && (log == NULL || log[0] == '\0') && (record == NULL || record[0] == '\0')) return;
  started = 1;
  knowRealPaths();
  DIR* d = opendir("/proc/self/fd");
  if (d == NULL) return;
  int self = dirfd(d);
  struct dirent* e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    int fd = atoi(e->d_name);
    if (fd == self) continue;
    int flags = fcntl(fd, F_GETFD);
    if (flags < 0 || (flags & FD_CLOEXEC)) continue;
    char link[64], target[4200];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, target, sizeof target - 1);
    if (n <= 0) continue;
    target[n] = '\0';
    if ((realJar[0] != '\0' && strcmp(target, realJar) == 0) ||
        (realHomeLength > 0 && strncmp(target, realHome, realHomeLength) == 0 && target[realHomeLength] == '/') ||
        matchesLogValue(target, log) || matchesLogValue(target, record))
      fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
  }
  closedir(d);
}
