/*
 * host_fds.c -- file descriptors 0-2 during the JVM's start: a closed one holds /dev/null, so
 * that the JVM's own files never take the host's standard descriptors.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jvm_internal.h"

/* A daemon may close fds 0-2 before NCCL starts: the JVM's own files (lib/modules, the jar) would
 * then take them, a host write(2, ...) that failed with EBADF would reach the jar, and a later
 * dup2(log, 1) by the host would put its log where the JVM reads its jar (SIGSEGV at the next
 * destroy). During the start each closed one of 0-2 holds /dev/null (close-on-exec), so the JVM's
 * descriptors land at 3 or above; each is closed after the start if it is still the shim's (same
 * file, still close-on-exec: a host thread's dup2 onto it meanwhile clears the flag). */
static struct stat heldLowStat[3];
static int heldLow[3];

HIDDEN void nccltjHoldLowFds(void) {
  for (int fd = 0; fd < 3; fd++) {
    heldLow[fd] = 0;
    if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF) continue;
    int got = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (got < 0) continue;
    if (got != fd) { /* another thread took it meanwhile: this one is not needed */
      close(got);
      continue;
    }
    heldLow[fd] = fstat(fd, &heldLowStat[fd]) == 0;
    if (!heldLow[fd]) close(fd);
  }
}

HIDDEN void nccltjReleaseLowFds(void) {
  for (int fd = 0; fd < 3; fd++) {
    if (!heldLow[fd]) continue;
    heldLow[fd] = 0;
    struct stat st;
    int flags = fcntl(fd, F_GETFD);
    if (flags >= 0 && (flags & FD_CLOEXEC) && fstat(fd, &st) == 0 && st.st_dev == heldLowStat[fd].st_dev &&
        st.st_ino == heldLowStat[fd].st_ino && (fcntl(fd, F_GETFL) & O_ACCMODE) == O_RDONLY)
      close(fd);
  }
}
