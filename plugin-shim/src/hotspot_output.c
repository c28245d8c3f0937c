/*
 * hotspot_output.c -- HotSpot's output and exits while the shim creates the JVM, through the
 * JavaVMInitArgs hooks "vfprintf", "exit" and "abort" (jvm_options.c's first rows): every line
 * HotSpot prints goes to NCCL's logger instead of fds 1 and 2 (queued, and logged by the shim
 * once the upcall or the creation in which HotSpot printed it has returned), and an exit() or abort() during
 * creation ends the creating thread instead of the host.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "jvm_internal.h"

static pthread_mutex_t outMutex = PTHREAD_MUTEX_INITIALIZER;
static char outLine[1024]; /* the line being assembled, guarded by outMutex */
static size_t outUsed;
static char creationOutput[2048]; /* what HotSpot printed while the JVM was created */
static volatile int creating;     /* 1 while JNI_CreateJavaVM runs on creatorThread */
static pthread_t creatorThread;
static volatile int creationAborted; /* HotSpot called exit() or abort() during creation */

/* Every line HotSpot prints (jio_vfprintf: warnings, -Xlog to stdout/stderr, -XX:+PrintFlagsFinal,
 * errors) reaches NCCL's logger at INFO as "TUNER/Java: JVM: <line>" instead of fds 1 and 2.
 * Output to any other stream (a user's -Xlog:...:file=PATH, written through jio_fprintf too) goes
 * to that stream: it used to reach the logger and leave the file empty. */
HIDDEN jint JNICALL nccltjVfprintfHook(FILE* stream, const char* fmt, va_list ap) {
  if (stream != stdout && stream != stderr) return vfprintf(stream, fmt, ap);
  char chunk[2048];
  int n = vsnprintf(chunk, sizeof chunk, fmt, ap);
  pthread_mutex_lock(&outMutex);
  for (const char* p = chunk; *p != '\0'; p++) {
    if (*p != '\n' && outUsed < sizeof outLine - 1) {
      outLine[outUsed++] = *p;
      continue;
    }
    if (*p != '\n') continue; /* line too long: the rest is dropped */
    outLine[outUsed] = '\0';
    if (outUsed > 0) {
      char msg[1100];
      snprintf(msg, sizeof msg, "JVM: %s", outLine);
      /* queued, never logged from here: HotSpot prints with JVM frames (and its stdout lock) on
       * this thread's stack, inside an upcall or the JVM's creation; the shim logs it after */
      nccltjDeferLog((void*)nccltjFirstLogger, NCCL_LOG_INFO, msg);
      if (creating) {
        size_t used = strlen(creationOutput);
        snprintf(creationOutput + used, sizeof creationOutput - used, "%s\n", outLine);
      }
    }
    outUsed = 0;
  }
  pthread_mutex_unlock(&outMutex);
  return n;
}

/* HotSpot calls the exit hook, then exit(), and the abort hook, then abort(), where it gives up
 * during creation (vm_exit_during_initialization and os::abort in HotSpot 25: bad option values,
 * no thread or memory left). On the shim's own creating thread the hook ends that thread instead,
 * so nccltjStart sees a failed start and the host lives on. Elsewhere (a JVM thread, or after
 * creation) the hook returns and HotSpot goes on: nothing can be done there. */
HIDDEN void JNICALL nccltjExitHook(jint code) {
  (void)code;
  if (creating && pthread_equal(pthread_self(), creatorThread)) {
    creationAborted = 1;
    nccltjNoteJvmLocale();
    nccltjNoteJvmSignals();
    pthread_exit(NULL);
  }
}

HIDDEN void JNICALL nccltjAbortHook(void) {
  nccltjExitHook(1);
}

HIDDEN const char* nccltjCreationError(void) {
  static char line[512];
  line[0] = '\0';
  char copy[sizeof creationOutput];
  snprintf(copy, sizeof copy, "%s", creationOutput);
  char* save = NULL;
  for (char* p = strtok_r(copy, "\n", &save); p != NULL; p = strtok_r(NULL, "\n", &save)) {
    if (strstr(p, "Could not create the Java Virtual Machine") == NULL &&
        strstr(p, "A fatal exception has occurred") == NULL &&
        strstr(p, "Error occurred during initialization") == NULL) {
      snprintf(line, sizeof line, "%s", p);
      break;
    }
  }
  return line[0] ? line : "no message";
}

HIDDEN void nccltjCreationBegin(void) {
  creatorThread = pthread_self();
  creating = 1;
}

HIDDEN void nccltjCreationEnd(void) {
  creating = 0;
}

HIDDEN int nccltjCreationAborted(void) {
  return creationAborted;
}

HIDDEN void nccltjOutputInForkedChild(void) {
  pthread_mutex_init(&outMutex, NULL);
}

/* The runtime's fflush of the host's stdout or stderr: HotSpot flushes stdout while it creates the
 * JVM (found by the fourth hostile-host review: the host's unflushed stdout and stderr bytes reached
 * their files during the first init, and with stdout a closed pipe ferror(stdout) became 1 though
 * the host never wrote). Everything HotSpot prints goes through the vfprintf hook above, never into
 * those buffers, so there is nothing of the JVM's to flush there: the host's buffers stay the
 * host's. fflush(NULL) (every stream, the host's among them) is left out too; the runtime's own
 * files (an -Xlog file) are flushed as asked. */
static int (*realFflush)(FILE*);

static int jvmFflush(FILE* stream) {
  if (stream == NULL || stream == stdout || stream == stderr) return 0;
  return realFflush != NULL ? realFflush(stream) : fflush(stream);
}

HIDDEN void nccltjHookOutput(void* handle) {
  NCCLTJ_HOOK(handle, "fflush", jvmFflush, realFflush);
}
