/*
 * find_runtime.c -- finding a Java runtime and the engine jar: NCCL_TUNER_JAVA_HOME, a runtime
 * beside the library (the dist's runtime/), JAVA_HOME; a libjvm the process already loaded wins
 * over all of them (a second libjvm in one process crashes it).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jvm_internal.h"

#define JAR_NAME "nccl-tuner-java.jar"

static char javaHome[4096];  /* the runtime whose libjvm was loaded */
static char engineJar[4200]; /* the engine jar on the JVM's class path */

HIDDEN const char* nccltjJavaHome(void) {
  return javaHome;
}

HIDDEN const char* nccltjEngineJar(void) {
  return engineJar;
}

HIDDEN int nccltjIsFile(const char* path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

HIDDEN void nccltjDirOf(const char* path, char* out, size_t n) {
  snprintf(out, n, "%s", path);
  char* slash = strrchr(out, '/');
  if (slash != NULL) *slash = '\0';
  else snprintf(out, n, ".");
}

/* JAVA_VERSION="25.0.3" in <home>/release -> 25; 0 if unknown; -1 if release is there but not a
 * regular file. Opened with O_NONBLOCK and checked with fstat before any read: a FIFO there
 * blocked fopen, and with it the host's first init, for ever (found by a hostile host). */
static int javaFeature(const char* home) {
  char path[4200];
  snprintf(path, sizeof path, "%s/release", home);
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return 0;
  struct stat st;
  FILE* f = NULL;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (f = fdopen(fd, "r")) == NULL) {
    int notRegular = fstat(fd, &st) == 0 && !S_ISREG(st.st_mode);
    close(fd);
    return notRegular ? -1 : 0;
  }
  char line[256];
  int feature = 0;
  while (fgets(line, sizeof line, f) != NULL) {
    if (strncmp(line, "JAVA_VERSION=\"", 14) == 0) {
      feature = atoi(line + 14);
      if (feature == 1) feature = atoi(line + 16); /* 1.8 */
      break;
    }
  }
  fclose(f);
  return feature;
}

/* Tries one Java home; on success writes its libjvm path. Records why it was skipped. */
static int tryHome(const char* what, const char* home, char* libjvm, size_t n, char* why, size_t wn) {
  if (home == NULL || home[0] == '\0') return 0;
  snprintf(libjvm, n, "%s/lib/server/libjvm.so", home);
  snprintf(javaHome, sizeof javaHome, "%s", home);
  if (!nccltjIsFile(libjvm)) {
    size_t used = strlen(why);
    snprintf(why + used, wn - used, "%s%s=%s has no lib/server/libjvm.so", used ? "; " : "", what, home);
    return 0;
  }
  int feature = javaFeature(home);
  if (feature < 0) {
    size_t used = strlen(why);
    snprintf(why + used, wn - used, "%s%s=%s has a release file that is not a regular file (a FIFO or device)",
             used ? "; " : "", what, home);
    return 0;
  }
  if (feature != 0 && feature < MIN_JAVA_FEATURE) {
    size_t used = strlen(why);
    snprintf(why + used, wn - used, "%s%s=%s is Java %d, the engine needs %d or newer", used ? "; " : "", what, home,
             feature, MIN_JAVA_FEATURE);
    return 0;
  }
  return 1;
}

/* NCCL_TUNER_JAVA_HOME, then a runtime beside the library, then JAVA_HOME. */
static int findHome(const char* libDir, char* libjvm, size_t n) {
  char why[1024] = "";
  char bundled[4200];
  if (tryHome("NCCL_TUNER_JAVA_HOME", getenv("NCCL_TUNER_JAVA_HOME"), libjvm, n, why, sizeof why)) return 1;
  snprintf(bundled, sizeof bundled, "%s/runtime", libDir);
  if (nccltjIsFile(strcat(strcpy(libjvm, bundled), "/lib/server/libjvm.so")) &&
      tryHome("bundled runtime", bundled, libjvm, n, why, sizeof why))
    return 1;
  snprintf(bundled, sizeof bundled, "%s/../runtime", libDir);
  if (nccltjIsFile(strcat(strcpy(libjvm, bundled), "/lib/server/libjvm.so")) &&
      tryHome("bundled runtime", bundled, libjvm, n, why, sizeof why))
    return 1;
  if (tryHome("JAVA_HOME", getenv("JAVA_HOME"), libjvm, n, why, sizeof why)) return 1;
  nccltjFailf("no Java runtime found (%s); set NCCL_TUNER_JAVA_HOME to a Java %d+ runtime; "
              "the plugin changes nothing",
              why[0] ? why : "NCCL_TUNER_JAVA_HOME and JAVA_HOME unset, no runtime/ beside the library",
              MIN_JAVA_FEATURE);
  return 0;
}

/* A libjvm already in the process (loaded by the host: libhdfs-style clients, LD_PRELOAD) other
 * than `ours`. Two libjvms in one process crash: the second runtime's libjava binds to the first
 * libjvm by its soname. Writes its path to out; 0 if there is none. */
typedef struct {
  const char* ours;
  char* out;
  size_t n;
  int found;
} libjvmSearch;

static int findLoadedLibjvm(struct dl_phdr_info* info, size_t size, void* data) {
  (void)size;
  libjvmSearch* s = data;
  const char* name = info->dlpi_name;
  size_t len = name ? strlen(name) : 0;
  if (len < 10 || strcmp(name + len - 10, "/libjvm.so") != 0) return 0;
  char real[4096];
  if (realpath(name, real) == NULL) snprintf(real, sizeof real, "%s", name);
  if (s->ours != NULL && strcmp(real, s->ours) == 0) return 0;
  snprintf(s->out, s->n, "%s", real);
  s->found = 1;
  return 1;
}

HIDDEN int nccltjFindLibjvm(const char* libDir, char* libjvm, size_t n) {
  if (!findHome(libDir, libjvm, n)) return 0;
  char ours[4200], other[4096];
  if (realpath(libjvm, ours) == NULL) snprintf(ours, sizeof ours, "%s", libjvm);
  libjvmSearch s = {ours, other, sizeof other, 0};
  dl_iterate_phdr(findLoadedLibjvm, &s);
  if (s.found) {
    /* Its own runtime is usable if it is new enough: use that libjvm, not a second one. */
    char server[4096], lib[4096], home[4096];
    nccltjDirOf(other, server, sizeof server); /* .../lib/server */
    nccltjDirOf(server, lib, sizeof lib);      /* .../lib */
    nccltjDirOf(lib, home, sizeof home);       /* the Java home */
    int feature = javaFeature(home);
    if (feature < MIN_JAVA_FEATURE) { /* 0 unknown, -1 release not a regular file: not shown to be new enough */
      nccltjFailf("another Java runtime's libjvm (%s, Java %d) is already loaded in this process with no JVM "
                  "created, and a second libjvm in one process crashes it; the engine needs Java %d+, so the "
                  "plugin changes nothing",
                  other, feature, MIN_JAVA_FEATURE);
      return 0;
    }
    snprintf(libjvm, n, "%s", other);
    snprintf(javaHome, sizeof javaHome, "%s", home);
    nccltjNoticef("using the Java %d runtime whose libjvm the process had already loaded (%s)", feature, other);
  }
  return 1;
}

/* The first entry of a class path (':'-separated) that exists but is neither a regular file nor a
 * directory, into out; 0 if none. The JVM opens each entry with a blocking open(): a FIFO there
 * blocked JNI_CreateJavaVM, and the host's first init, for ever (found by a hostile host). stat
 * itself never blocks on a FIFO. */
static int oddClassPathEntry(const char* cp, char* out, size_t n) {
  for (const char* p = cp; *p != '\0';) {
    const char* end = strchr(p, ':');
    size_t len = end != NULL ? (size_t)(end - p) : strlen(p);
    if (len > 0 && len < n) {
      memcpy(out, p, len);
      out[len] = '\0';
      struct stat st;
      if (stat(out, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) return 1;
    }
    p += len;
    if (*p == ':') p++;
  }
  return 0;
}

HIDDEN int nccltjFindJar(const char* libDir, char* jar, size_t n) {
  const char* cp = getenv("NCCL_TUNER_JAVA_CLASSPATH");
  if (cp != NULL && cp[0] != '\0') {
    char odd[4096];
    if (oddClassPathEntry(cp, odd, sizeof odd)) {
      nccltjFailf("NCCL_TUNER_JAVA_CLASSPATH names %s, which is not a regular file or directory (a FIFO or device); "
                  "the plugin changes nothing",
                  odd);
      return 0;
    }
    snprintf(jar, n, "%s", cp);
  } else {
    snprintf(jar, n, "%s/" JAR_NAME, libDir);
    if (!nccltjIsFile(jar)) {
      nccltjFailf("engine jar %s not found (set NCCL_TUNER_JAVA_CLASSPATH to it); the plugin changes nothing", jar);
      return 0;
    }
  }
  snprintf(engineJar, sizeof engineJar, "%s", jar);
  return 1;
}
