/*
 * proc_state.c -- process-wide settings that HotSpot's creation writes outside the JVM's options,
 * put back after the start.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jvm_internal.h"

/* HotSpot 25 sets bits of /proc/self/coredump_filter during creation (os::Linux::
 * set_coredump_filter, os_linux.cpp: the file-backed mappings, so that its mapped CDS/AOT archive
 * lands in a core file), which the host's core files and every child it forks afterwards inherit
 * (found by a hostile host: 0x33 -> 0x3f). The value before the start is read on the calling
 * thread, the JVM's right after creation on the start thread; after the start the host's goes
 * back, only while the file still holds the JVM's value (a host thread that wrote it meanwhile
 * keeps its own). A process without the file (not Linux, /proc not mounted) has nothing to put
 * back. The values are hexadecimal text, as the kernel prints them ("00000033"). */

static char hostFilter[32];
static char jvmFilter[32];

static int readFilter(char* out, size_t n) {
  int fd = open("/proc/self/coredump_filter", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  ssize_t got;
  do got = read(fd, out, n - 1);
  while (got < 0 && errno == EINTR);
  close(fd);
  if (got <= 0) return 0;
  out[got] = '\0';
  out[strcspn(out, "\n")] = '\0';
  return out[0] != '\0';
}

HIDDEN void nccltjProcStateSave(void) {
  if (!readFilter(hostFilter, sizeof hostFilter)) hostFilter[0] = '\0';
  jvmFilter[0] = '\0';
}

HIDDEN void nccltjProcStateNoteJvm(void) {
  if (!readFilter(jvmFilter, sizeof jvmFilter)) jvmFilter[0] = '\0';
}

HIDDEN void nccltjProcStateRestore(void) {
  char now[32];
  if (hostFilter[0] == '\0' || jvmFilter[0] == '\0' || strcmp(hostFilter, jvmFilter) == 0) return;
  if (!readFilter(now, sizeof now) || strcmp(now, jvmFilter) != 0) return;
  int fd = open("/proc/self/coredump_filter", O_WRONLY | O_CLOEXEC);
  if (fd < 0) return;
  char text[40];
  int len = snprintf(text, sizeof text, "0x%s", hostFilter);
  ssize_t put;
  do put = write(fd, text, (size_t)len);
  while (put < 0 && errno == EINTR);
  close(fd);
}
