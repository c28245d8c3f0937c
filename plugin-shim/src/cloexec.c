/*
 * cloexec.c -- close-on-exec for the plugin's own descriptors: the runtime's open and fopen
 * calls (GOT slots of libjvm, libjava, libnet, libnio, libzip, libjimage) add O_CLOEXEC, so a
 * file is close-on-exec from the moment it is opened; and a scan after the start and each init
 * and destroy for what a runtime without those slots opened (the runtime's lib/, the engine jar,
 * the decision log and the call record), recognised by what they point at.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jvm_internal.h"

/* The JVM opens its files (lib/modules, the jar, the policy, its /proc reads) without O_CLOEXEC
 * and HotSpot marks its own close-on-exec only after the open; the class libraries never do. A
 * child a host thread execs meanwhile inherited them (found by a hostile host: 1069 of 1199
 * children spawned during the first init inherited up to 3). These hooks add O_CLOEXEC (fopen:
 * "e") to every open of the runtime's libraries, for the life of the process: nothing in the
 * plugin's JVM passes a descriptor across exec (the engine starts no process; a Process with a
 * redirect to a file would need its descriptor inheritable). */
typedef int (*openFn)(const char*, int, ...);
typedef int (*openatFn)(int, const char*, int, ...);
typedef FILE* (*fopenFn)(const char*, const char*);
static openFn realOpen, realOpen64;
static openatFn realOpenat, realOpenat64;
static fopenFn realFopen, realFopen64;

/* The mode argument is there only with O_CREAT or O_TMPFILE (glibc's __OPEN_NEEDS_MODE). */
#define OPEN_MODE(flags, last, mode) \
  do { \
    if (((flags)&O_CREAT) || ((flags)&O_TMPFILE) == O_TMPFILE) { \
      va_list ap; \
      va_start(ap, last); \
      mode = va_arg(ap, int); \
      va_end(ap); \
    } \
  } while (0)

static int jvmOpen(const char* path, int flags, ...) {
  int mode = 0;
  OPEN_MODE(flags, flags, mode);
  return (realOpen != NULL ? realOpen : open)(path, flags | O_CLOEXEC, mode);
}

static int jvmOpen64(const char* path, int flags, ...) {
  int mode = 0;
  OPEN_MODE(flags, flags, mode);
  return (realOpen64 != NULL ? realOpen64 : open)(path, flags | O_CLOEXEC, mode);
}

static int jvmOpenat(int dir, const char* path, int flags, ...) {
  int mode = 0;
  OPEN_MODE(flags, flags, mode);
  return (realOpenat != NULL ? realOpenat : openat)(dir, path, flags | O_CLOEXEC, mode);
}

static int jvmOpenat64(int dir, const char* path, int flags, ...) {
  int mode = 0;
  OPEN_MODE(flags, flags, mode);
  return (realOpenat64 != NULL ? realOpenat64 : openat)(dir, path, flags | O_CLOEXEC, mode);
}

/* mode with "e" (glibc: O_CLOEXEC) after its first character; glibc reads the flag characters in
 * any order up to a ','. The mode as it was where it already has one or is too long. */
static const char* withCloexec(const char* mode, char* buf, size_t n) {
  if (mode == NULL || mode[0] == '\0' || strchr(mode, 'e') != NULL || strlen(mode) + 2 > n) return mode;
  snprintf(buf, n, "%ce%s", mode[0], mode + 1);
  return buf;
}

static FILE* jvmFopen(const char* path, const char* mode) {
  char buf[64];
  return (realFopen != NULL ? realFopen : fopen)(path, withCloexec(mode, buf, sizeof buf));
}

static FILE* jvmFopen64(const char* path, const char* mode) {
  char buf[64];
  return (realFopen64 != NULL ? realFopen64 : fopen)(path, withCloexec(mode, buf, sizeof buf));
}

HIDDEN void nccltjHookOpens(void* handle) {
  NCCLTJ_HOOK(handle, "open", jvmOpen, realOpen);
  NCCLTJ_HOOK(handle, "open64", jvmOpen64, realOpen64);
  NCCLTJ_HOOK(handle, "openat", jvmOpenat, realOpenat);
  NCCLTJ_HOOK(handle, "openat64", jvmOpenat64, realOpenat64);
  NCCLTJ_HOOK(handle, "fopen", jvmFopen, realFopen);
  NCCLTJ_HOOK(handle, "fopen64", jvmFopen64, realFopen64);
}

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
