/*
 * cloexec.c -- close-on-exec for the plugin's own descriptors: the runtime's open and fopen
 * calls (GOT slots of libjvm, libjava, libnet, libnio, libzip, libjimage) add O_CLOEXEC, so a
 * file is close-on-exec from the moment it is opened; and a scan after the start and each init
 * and destroy for what a runtime without those slots opened (the runtime's lib/, the engine jar,
 * the decision log and the call record), recognised by what they point at.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/socket.h>
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

/* The runtime's other calls that make a descriptor, close-on-exec from the call for the same
 * reason and for the life of the process too: libnet's JNI_OnLoad (IPv4_supported,
 * IPv6_supported, reuseport_supported, when the engine's first NIO class loads libnet and libnio
 * during the start) opens and closes three probe sockets without SOCK_CLOEXEC, and a child that a
 * host thread posix_spawned at that moment inherited one (found by GuestIT's spawn window under
 * load: 29 children in 5 of 360 runs). The others (objdump of Temurin 25's imports):
 * socket in libjvm (the attach listener, off) and libnio (channels), socketpair, eventfd,
 * epoll_create1, inotify_init, dup and pipe in libnio (channels, selectors, the watch service),
 * accept in libjvm and libnio, mkstemp64 in libjvm (-XX:AllocateHeapAt). Where the call has a
 * flag the real target of the slot takes it; where it has none its close-on-exec sibling is
 * called (accept4, pipe2, epoll_create1, inotify_init1, fcntl F_DUPFD_CLOEXEC, mkostemp64).
 * Left alone: libjava's pipe (ProcessImpl.forkAndExec: jspawnhelper inherits those pipes across
 * its exec) and every dup2 (libjava's childproc and InheritedChannel put descriptors on 0-2 that
 * must stay inheritable; a dup2 makes no new descriptor number). */
typedef int (*socketFn)(int, int, int);
typedef int (*socketpairFn)(int, int, int, int[2]);
typedef int (*eventfdFn)(unsigned int, int);
typedef int (*epollCreate1Fn)(int);
static socketFn realSocket;
static socketpairFn realSocketpair;
static eventfdFn realEventfd;
static epollCreate1Fn realEpollCreate1;

static int jvmSocket(int domain, int type, int protocol) {
  return (realSocket != NULL ? realSocket : socket)(domain, type | SOCK_CLOEXEC, protocol);
}

static int jvmSocketpair(int domain, int type, int protocol, int sv[2]) {
  return (realSocketpair != NULL ? realSocketpair : socketpair)(domain, type | SOCK_CLOEXEC, protocol, sv);
}

static int jvmAccept(int fd, struct sockaddr* addr, socklen_t* len) {
  return accept4(fd, addr, len, SOCK_CLOEXEC);
}

static int jvmPipe(int fds[2]) {
  return pipe2(fds, O_CLOEXEC);
}

static int jvmEventfd(unsigned int count, int flags) {
  return (realEventfd != NULL ? realEventfd : eventfd)(count, flags | EFD_CLOEXEC);
}

static int jvmEpollCreate1(int flags) {
  return (realEpollCreate1 != NULL ? realEpollCreate1 : epoll_create1)(flags | EPOLL_CLOEXEC);
}

static int jvmEpollCreate(int size) {
  if (size <= 0) { /* epoll_create's own check; epoll_create1 has no size */
    errno = EINVAL;
    return -1;
  }
  return epoll_create1(EPOLL_CLOEXEC);
}

static int jvmInotifyInit(void) {
  return inotify_init1(IN_CLOEXEC);
}

static int jvmDup(int fd) {
  return fcntl(fd, F_DUPFD_CLOEXEC, 0);
}

static int jvmMkstemp(char* template) {
  return mkostemp64(template, O_CLOEXEC);
}

/* Whether `handle` is the library whose file name is `base`. */
static int isLibrary(void* handle, const char* base) {
  struct link_map* lm = NULL;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &lm) != 0 || lm == NULL || lm->l_name == NULL) return 0;
  const char* slash = strrchr(lm->l_name, '/');
  return strcmp(slash != NULL ? slash + 1 : lm->l_name, base) == 0;
}

HIDDEN void nccltjHookDescriptors(void* handle) {
  NCCLTJ_HOOK(handle, "open", jvmOpen, realOpen);
  NCCLTJ_HOOK(handle, "open64", jvmOpen64, realOpen64);
  NCCLTJ_HOOK(handle, "openat", jvmOpenat, realOpenat);
  NCCLTJ_HOOK(handle, "openat64", jvmOpenat64, realOpenat64);
  NCCLTJ_HOOK(handle, "fopen", jvmFopen, realFopen);
  NCCLTJ_HOOK(handle, "fopen64", jvmFopen64, realFopen64);
  NCCLTJ_HOOK(handle, "socket", jvmSocket, realSocket);
  NCCLTJ_HOOK(handle, "socketpair", jvmSocketpair, realSocketpair);
  NCCLTJ_HOOK(handle, "eventfd", jvmEventfd, realEventfd);
  NCCLTJ_HOOK(handle, "epoll_create1", jvmEpollCreate1, realEpollCreate1);
  /* The rest call a sibling: the old target is not needed. */
  static const struct {
    const char* name;
    void* hook;
  } siblings[] = {{"accept", (void*)jvmAccept},
                  {"pipe", (void*)jvmPipe},
                  {"epoll_create", (void*)jvmEpollCreate},
                  {"inotify_init", (void*)jvmInotifyInit},
                  {"dup", (void*)jvmDup},
                  {"mkstemp", (void*)jvmMkstemp},
                  {"mkstemp64", (void*)jvmMkstemp}};
  int processLibrary = isLibrary(handle, "libjava.so");
  for (size_t i = 0; i < sizeof siblings / sizeof siblings[0]; i++) {
    if (processLibrary && strcmp(siblings[i].name, "pipe") == 0) continue;
    void* old = NULL;
    nccltjRewriteGot(handle, siblings[i].name, siblings[i].hook, &old);
  }
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
