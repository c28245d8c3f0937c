/*
 * jvm.c -- finding a Java runtime and the engine jar, the JVM's options, creating the JVM once
 * (or joining one the process already runs) and the one JNI call, io.nccltuner.ffm.Bootstrap.start,
 * that fills in the bridge. NCCL's entry points are in plugin.c; nccltjStart runs once per process
 * from the first init.
 *
 * The host is someone else's house (docs/reliability.md, "A perfect guest"). Around JVM creation
 * the shim therefore:
 *   - pins this library (RTLD_NODELETE), so NCCL's dlclose/dlopen cycles (2.22+) find the same
 *     statics, the same running engine and no pthread key or destructor pointing into unmapped code;
 *   - creates the JVM on a thread of its own (8 MiB stack) with every asynchronous signal blocked,
 *     so the JVM's threads (which inherit that mask) never take a signal meant for the host;
 *   - passes the JVM only its own options: JAVA_TOOL_OPTIONS and _JAVA_OPTIONS (meant for other
 *     Java tools) are hidden from it during creation, options that could end the process are
 *     overridden last, and HotSpot's output goes through a vfprintf hook to NCCL's logger;
 *   - turns HotSpot's exit() or abort() during creation (bad options, no threads or memory left)
 *     into a failed start through the JavaVMInitArgs "exit" and "abort" hooks: the creating thread
 *     ends, the host goes on with NCCL's defaults;
 *   - moves HotSpot's suspend/resume signal off SIGUSR2 (_JAVA_SR_SIGNUM, read by HotSpot 25's
 *     src/hotspot/os/posix/signals_posix.cpp) and, once the engine started, puts back every signal
 *     disposition HotSpot does not need (all but SIGSEGV, SIGBUS, SIGFPE, SIGILL and its own
 *     suspend/resume signal) and the C locale (the JVM's start calls setlocale(LC_ALL, "")).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <sched.h>
#include <sys/mman.h>
#include <fcntl.h>
#include <jni.h>
#include <link.h>
#include <locale.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shim_internal.h"

/* 48 from NCCL_TUNER_JAVA_OPTS, up to 40 of our own (hooks included; buildOptions adds 36 at
 * most): with 32 for our own, 48 user options pushed the last of ours (-XX:Flags=/dev/null,
 * -XX:CompileCommandFile=/dev/null, the replay file) past the end, and addOption dropped them. */
#define MAX_OWN_OPTIONS 40
#define MAX_OPTIONS (48 + MAX_OWN_OPTIONS)
#define JAR_NAME "nccl-tuner-java.jar"
#define AOT_NAME "nccl-tuner-java.aot"
#define BOOTSTRAP_CLASS "io/nccltuner/ffm/Bootstrap"
#define MIN_JAVA_FEATURE 25
/* The JVM is created on a thread of its own with this much stack, whatever the caller has. */
#define START_THREAD_STACK (8 * 1024 * 1024)

typedef jint (*create_vm_fn)(JavaVM**, void**, void*);
typedef jint (*created_vms_fn)(JavaVM**, jsize, jsize*);

HIDDEN nccltj_bridge_t nccltjBridge;
HIDDEN char nccltjStartFailure[1024];
HIDDEN int nccltjFailureLogged;
HIDDEN int nccltjStackWarned;
HIDDEN pthread_mutex_t nccltjLogMutex = PTHREAD_MUTEX_INITIALIZER;
HIDDEN ncclDebugLogger_t nccltjFirstLogger;
HIDDEN JavaVM* nccltjJvm;
HIDDEN pthread_key_t nccltjAttachKey;
HIDDEN volatile int nccltjForkedAfterStart;
HIDDEN int nccltjStrict;
HIDDEN char nccltjNotice[1024];
static char libraryPath[4096];
static char javaHome[4096];               /* the runtime whose libjvm was loaded */
static char engineJar[4200];              /* the engine jar on the JVM's class path */
static int srSignal;                      /* HotSpot's suspend/resume signal in this process */

/* ---- logging ------------------------------------------------------------------------------ */

/* Without a logger (NCCL always passes one) the line is dropped: the host's fds 1 and 2 are not
 * the plugin's to write (a hostile host's NULL logger got a WARN on stderr). */
static void callLogger(void* logger, int level, const char* message) {
  if (logger != NULL) {
    ((ncclDebugLogger_t)logger)((ncclDebugLogLevel)level, NCCL_TUNING, __FILE__, __LINE__,
                                LOG_PREFIX "%s", message);
  }
}

/* Lines logged on a thread that is not the host's (HotSpot's VM thread printing -verbose:gc, the
 * shim's JVM-creating thread, the decision-log writer) wait here for the next init or destroy on
 * a host thread: the host's logger may take a lock that the calling thread holds around its
 * tuner call while it waits for that other thread (a hostile host deadlocked so). */
#define DEFERRED_LINES 2048              /* -XX:+PrintFlagsFinal at creation prints ~900; BSS, touched when used */
static struct {
  void* logger;
  int level;
  char text[480];
} deferred[DEFERRED_LINES];
static int deferredHead;                  /* guarded by deferredMutex: a ring from deferredHead */
static int deferredCount;                 /* guarded by deferredMutex */
static unsigned long deferredDropped;     /* guarded by deferredMutex */
static pthread_mutex_t deferredMutex = PTHREAD_MUTEX_INITIALIZER;
static __thread int hostThread __attribute__((tls_model("initial-exec")));

HIDDEN void nccltjMarkHostThread(void) {
  hostThread = 1;
}

HIDDEN void nccltjFlushDeferredLog(void) {
  if (!hostThread || __atomic_load_n(&deferredCount, __ATOMIC_RELAXED) == 0) return;
  for (;;) {
    void* logger;
    int level;
    char text[sizeof deferred[0].text];
    unsigned long dropped = 0;
    pthread_mutex_lock(&deferredMutex);
    if (deferredCount == 0) {
      dropped = deferredDropped;
      deferredDropped = 0;
      pthread_mutex_unlock(&deferredMutex);
      if (dropped != 0) {
        snprintf(text, sizeof text, "%lu lines from the JVM's own threads were dropped (more than %d waiting)",
                 dropped, DEFERRED_LINES);
        callLogger((void*)nccltjFirstLogger, NCCL_LOG_INFO, text);
      }
      return;
    }
    logger = deferred[deferredHead].logger;
    level = deferred[deferredHead].level;
    memcpy(text, deferred[deferredHead].text, sizeof text);
    deferredHead = (deferredHead + 1) % DEFERRED_LINES;
    deferredCount--;
    pthread_mutex_unlock(&deferredMutex);
    callLogger(logger, level, text);
  }
}

HIDDEN void nccltjLog(void* logger, int level, const char* message) {
  if (!hostThread) {
    pthread_mutex_lock(&deferredMutex);
    if (deferredCount < DEFERRED_LINES) {
      int at = (deferredHead + deferredCount) % DEFERRED_LINES;
      deferred[at].logger = logger;
      deferred[at].level = level;
      snprintf(deferred[at].text, sizeof deferred[0].text, "%s", message);
      deferredCount++;
    } else {
      deferredDropped++;
    }
    pthread_mutex_unlock(&deferredMutex);
    return;
  }
  nccltjFlushDeferredLog();
  callLogger(logger, level, message);
}

static void failf(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(nccltjStartFailure, sizeof nccltjStartFailure, fmt, ap);
  va_end(ap);
}

static void noticef(const char* fmt, ...) {
  size_t used = strlen(nccltjNotice);
  if (used >= sizeof nccltjNotice - 3) return;
  if (used > 0) used += (size_t)snprintf(nccltjNotice + used, sizeof nccltjNotice - used, "; ");
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(nccltjNotice + used, sizeof nccltjNotice - used, fmt, ap);
  va_end(ap);
}

/* ---- HotSpot's output and exits (JavaVMInitArgs hooks) --------------------------------------- */

static pthread_mutex_t outMutex = PTHREAD_MUTEX_INITIALIZER;
static char outLine[1024];                /* the line being assembled, guarded by outMutex */
static size_t outUsed;
static char creationOutput[2048];         /* what HotSpot printed while the JVM was created */
static volatile int creating;             /* 1 while JNI_CreateJavaVM runs on creatorThread */
static pthread_t creatorThread;
static volatile int creationAborted;      /* HotSpot called exit() or abort() during creation */

/* Every line HotSpot prints (jio_vfprintf: warnings, -Xlog to stdout/stderr, -XX:+PrintFlagsFinal,
 * errors) reaches NCCL's logger at INFO as "TUNER/Java: JVM: <line>" instead of fds 1 and 2.
 * Output to any other stream (a user's -Xlog:...:file=PATH, written through jio_fprintf too) goes
 * to that stream: it used to reach the logger and leave the file empty. */
static jint JNICALL vfprintfHook(FILE* stream, const char* fmt, va_list ap) {
  if (stream != stdout && stream != stderr) return vfprintf(stream, fmt, ap);
  char chunk[2048];
  int n = vsnprintf(chunk, sizeof chunk, fmt, ap);
  pthread_mutex_lock(&outMutex);
  for (const char* p = chunk; *p != '\0'; p++) {
    if (*p != '\n' && outUsed < sizeof outLine - 1) {
      outLine[outUsed++] = *p;
      continue;
    }
    if (*p != '\n') continue;  /* line too long: the rest is dropped */
    outLine[outUsed] = '\0';
    if (outUsed > 0) {
      char msg[1100];
      snprintf(msg, sizeof msg, "JVM: %s", outLine);
      nccltjLog((void*)nccltjFirstLogger, NCCL_LOG_INFO, msg);
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
static void noteJvmLocale(void);
static void noteJvmSignals(void);

static void JNICALL exitHook(jint code) {
  (void)code;
  if (creating && pthread_equal(pthread_self(), creatorThread)) {
    creationAborted = 1;
    noteJvmLocale();
    noteJvmSignals();
    pthread_exit(NULL);
  }
}

static void JNICALL abortHook(void) {
  exitHook(1);
}

/* The first line HotSpot printed during creation that is not its generic closing words. */
static const char* creationError(void) {
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

/* ---- finding a runtime and the engine jar -------------------------------------------------- */

static int isFile(const char* path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static void dirOf(const char* path, char* out, size_t n) {
  snprintf(out, n, "%s", path);
  char* slash = strrchr(out, '/');
  if (slash != NULL) *slash = '\0'; else snprintf(out, n, ".");
}

/* JAVA_VERSION="25.0.3" in <home>/release -> 25; 0 if unknown. */
static int javaFeature(const char* home) {
  char path[4200];
  snprintf(path, sizeof path, "%s/release", home);
  FILE* f = fopen(path, "r");
  if (f == NULL) return 0;
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
  if (!isFile(libjvm)) {
    size_t used = strlen(why);
    snprintf(why + used, wn - used, "%s%s=%s has no lib/server/libjvm.so", used ? "; " : "", what, home);
    return 0;
  }
  int feature = javaFeature(home);
  if (feature != 0 && feature < MIN_JAVA_FEATURE) {
    size_t used = strlen(why);
    snprintf(why + used, wn - used, "%s%s=%s is Java %d, the engine needs %d or newer",
             used ? "; " : "", what, home, feature, MIN_JAVA_FEATURE);
    return 0;
  }
  return 1;
}

/* NCCL_TUNER_JAVA_HOME, then a runtime beside the library, then JAVA_HOME. */
static int findLibjvm(const char* libDir, char* libjvm, size_t n) {
  char why[1024] = "";
  char bundled[4200];
  if (tryHome("NCCL_TUNER_JAVA_HOME", getenv("NCCL_TUNER_JAVA_HOME"), libjvm, n, why, sizeof why))
    return 1;
  snprintf(bundled, sizeof bundled, "%s/runtime", libDir);
  if (isFile(strcat(strcpy(libjvm, bundled), "/lib/server/libjvm.so")) &&
      tryHome("bundled runtime", bundled, libjvm, n, why, sizeof why))
    return 1;
  snprintf(bundled, sizeof bundled, "%s/../runtime", libDir);
  if (isFile(strcat(strcpy(libjvm, bundled), "/lib/server/libjvm.so")) &&
      tryHome("bundled runtime", bundled, libjvm, n, why, sizeof why))
    return 1;
  if (tryHome("JAVA_HOME", getenv("JAVA_HOME"), libjvm, n, why, sizeof why)) return 1;
  failf("no Java runtime found (%s); set NCCL_TUNER_JAVA_HOME to a Java %d+ runtime; "
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

/* ---- JVM options --------------------------------------------------------------------------- */

/* Extra options from NCCL_TUNER_JAVA_OPTS must look like these; others (e.g. -version, -help,
 * agents) are refused before the JVM is created, and so are options that hand the process to
 * another program or stop it (-XX:OnError, -XX:OnOutOfMemoryError, -XX:+ShowMessageBoxOnError,
 * option files). A value the JVM itself refuses, even one that makes HotSpot exit() during
 * creation, fails the start through the exit and abort hooks. */
static int allowedOption(const char* o) {
  static const char* prefixes[] = {"-D", "-Xmx", "-Xms", "-Xss", "-Xlog", "-XX:", "-verbose:",
                                   "-Xshare:", "-Xint", "-Xcheck:jni", "-ea", "-da", "-esa",
                                   "-dsa", NULL};
  static const char* refused[] = {"-XX:VMOptionsFile", "-XX:Flags", "-XX:OnError", "-XX:OnOutOfMemoryError",
                                  "-XX:+ShowMessageBoxOnError", "-XX:CompileCommandFile", "-XX:+PrintVMOptions",
                                  "-XX:+PrintCommandLineFlags", "-Xlog:help", NULL};
  for (int i = 0; refused[i] != NULL; i++)
    if (strncmp(o, refused[i], strlen(refused[i])) == 0) return 0;
  /* Unified logging's output reaches NCCL's logger through the vfprintf hook, but HotSpot prints
   * some notes about the `all` selection straight to stderr (found by a hostile host:
   * -Xlog:all=info:stdout wrote 146 B to fd 2), and -Xlog:help prints to stdout: `-Xlog` alone and
   * `-Xlog:all...` are refused; name the tags (-Xlog:gc, -Xlog:aot=info, ...). */
  if (strcmp(o, "-Xlog") == 0 || strncmp(o, "-Xlog:all", 9) == 0) return 0;
  for (int i = 0; prefixes[i] != NULL; i++)
    if (strncmp(o, prefixes[i], strlen(prefixes[i])) == 0) return 1;
  return 0;
}

static int isGcChoice(const char* o) {
  size_t n = strlen(o);
  return strncmp(o, "-XX:+Use", 8) == 0 && n > 10 && strcmp(o + n - 2, "GC") == 0;
}

static int isAgentOption(const char* o) {
  return strncmp(o, "-agentlib", 9) == 0 || strncmp(o, "-agentpath", 10) == 0 ||
         strncmp(o, "-javaagent", 10) == 0 || strncmp(o, "-Xrun", 5) == 0 ||
         strcmp(o, "-Xdebug") == 0;
}

typedef struct {
  JavaVMOption opts[MAX_OPTIONS];
  char* owned[MAX_OPTIONS];
  int n;
} optionList;

static int addOption(optionList* l, const char* fmt, ...) {
  if (l->n >= MAX_OPTIONS) return 0;
  va_list ap;
  va_start(ap, fmt);
  char* s = NULL;
  if (vasprintf(&s, fmt, ap) < 0) s = NULL;
  va_end(ap);
  if (s == NULL) return 0;
  l->owned[l->n] = s;
  l->opts[l->n].optionString = s;
  l->opts[l->n].extraInfo = NULL;
  l->n++;
  return 1;
}

static void addHook(optionList* l, const char* name, void* fn) {
  if (addOption(l, "%s", name)) l->opts[l->n - 1].extraInfo = fn;
}

static void freeOptions(optionList* l) {
  for (int i = 0; i < l->n; i++) free(l->owned[i]);
  l->n = 0;
}

/* Where HotSpot writes its crash report (hs_err) for a crash in this process: $TMPDIR, else /tmp,
 * never the job's working directory. */
static void errorFile(char* out, size_t n) {
  const char* tmp = getenv("TMPDIR");
  struct stat st;
  if (tmp == NULL || tmp[0] != '/' || stat(tmp, &st) != 0 || !S_ISDIR(st.st_mode)) tmp = "/tmp";
  snprintf(out, n, "%s/nccl-tuner-java-hs_err_pid%%p.log", tmp);
}

/* Returns 0, or -1 after failf(). */
static int buildOptions(optionList* l, const char* classPath, const char* aotCache) {
  const char* extra = getenv("NCCL_TUNER_JAVA_OPTS");
  char* copy = strdup(extra != NULL ? extra : "");
  char* toks[MAX_OPTIONS];
  int nTok = 0, userGc = 0, userHeap = 0;
  char* save = NULL;
  for (char* tok = strtok_r(copy, " \t\n", &save); tok != NULL; tok = strtok_r(NULL, " \t\n", &save)) {
    if (!allowedOption(tok)) {
      failf("NCCL_TUNER_JAVA_OPTS: option '%s' is not allowed (use -D, -Xmx, -Xms, -Xss, -Xlog:TAGS, "
            "-XX:, -verbose:; no agents, option files, OnError, OnOutOfMemoryError or output to stdout); the plugin "
            "changes nothing", tok);
      free(copy);
      return -1;
    }
    if (nTok == MAX_OPTIONS - MAX_OWN_OPTIONS) {
      failf("NCCL_TUNER_JAVA_OPTS: more than %d options; the plugin changes nothing", MAX_OPTIONS - MAX_OWN_OPTIONS);
      free(copy);
      return -1;
    }
    userGc |= isGcChoice(tok);
    userHeap |= strncmp(tok, "-Xmx", 4) == 0 || strncmp(tok, "-Xms", 4) == 0;
    toks[nTok++] = tok;
  }
  /* The hooks first, so that HotSpot's messages about the options after them are caught too. */
  addHook(l, "vfprintf", (void*)vfprintfHook);
  addHook(l, "exit", (void*)exitHook);
  addHook(l, "abort", (void*)abortHook);
  addOption(l, "-Djava.class.path=%s", classPath);
  addOption(l, "-Xrs");                               /* leave SIGINT/SIGTERM/SIGHUP/SIGQUIT to the host */
  addOption(l, "--enable-native-access=ALL-UNNAMED"); /* FFM upcalls/downcalls: no restricted-method warning */
  if (!userGc) addOption(l, "-XX:+UseSerialGC");      /* defaults give way to the user's choice */
  if (!userHeap) {
    addOption(l, "-Xms8m");
    addOption(l, "-Xmx64m");
    /* A young generation of 1 MiB at start instead of a third of -Xms (2.7 MiB): the start
     * touches less of it (resident memory added 40.4 -> 39.4 MiB with the AOT cache). It grows
     * with the heap as the default would (a 10,000-rule YAML policy starts as fast); the per-call
     * path allocates nothing, so its collections are the inits' alone. */
    addOption(l, "-XX:NewSize=1m");
  }
  addOption(l, "-XX:-UsePerfData");                   /* no hsperfdata files */
  /* Start-up: compile with C1 only after 2000 calls instead of 200, so the compiler threads do not
   * compete with JVM start-up for the cores (first init with the AOT cache, 2 cores: median
   * 130 -> 107 ms). The hot path still reaches C2 after a few thousand calls. */
  addOption(l, "-XX:Tier3InvocationThreshold=2000");
  addOption(l, "-XX:Tier3MinInvocationThreshold=1000");
  addOption(l, "-XX:Tier3CompileThreshold=20000");
  /* The engine's per-call path inlined into the upcall's target whatever the compile order: C2
   * refuses to inline a method it already compiled on its own into more than InlineSmallCode
   * bytes ("already compiled into a big method", seen in shadow mode), and each call then pays a
   * call with eleven arguments (about 5 ns). quiet: HotSpot would print the command on stdout. */
  addOption(l, "-XX:CompileCommand=quiet");
  addOption(l, "-XX:CompileCommand=inline,io.nccltuner.engine.Engine::getCollInfo");
  addOption(l, "-XX:CompileCommand=inline,io.nccltuner.engine.Engine::decide");
  addOption(l, "-XX:CompileCommand=inline,io.nccltuner.ffm.Upcalls::getCollInfo");
  /* Footprint (docs/benchmarks.md, "Start-up and footprint"): no attach listener (no thread, no
   * /tmp/.java_pid<pid> socket, no jcmd or agent into the host), no finalizer thread. */
  addOption(l, "-XX:+DisableAttachMechanism");
  addOption(l, "--finalization=disabled");
  /* HotSpot's SIGSEGV/SIGBUS/SIGFPE/SIGILL handlers stay for the life of the process (the JVM
   * needs them), so a crash in the host's own code reaches HotSpot's error reporter, which prints
   * its fatal-error banner on fd 1 and writes an hs_err file (found by a hostile host). With this
   * it aborts at once, silently: the host's crash still ends the process (SIGABRT, a core where
   * the host allows one). NCCL_TUNER_JAVA_OPTS=-XX:-SuppressFatalErrorMessage brings the reports
   * back, for diagnosing a crash in the plugin's JVM. */
  addOption(l, "-XX:+SuppressFatalErrorMessage");
  addOption(l, "-Dnccltj.library=%s", libraryPath);
  if (aotCache != NULL) {
    addOption(l, "-XX:AOTCache=%s", aotCache);
    addOption(l, "-Dnccltj.aotCache=%s", aotCache); /* the engine's INFO line says if it was used */
    /* No "Training replay" thread compiling the training run's methods during the start (-40 ms
     * CPU, -3 MiB). A diagnostic flag of JDK 25 (the oldest runtime the plugin takes); a JDK
     * that drops it fails creation, which the plugin reports in one WARN and steps aside. */
    addOption(l, "-XX:+UnlockDiagnosticVMOptions");
    addOption(l, "-XX:-AOTReplayTraining");
    /* One compiler thread (C2; the hot path is C2-compiled as before). Only with the cache: its
     * start (classes archived, the policy's compiled form that bin/nccl-tuner-aot writes) runs
     * little Java, while parsing a large YAML policy without C1 takes 40-60% more CPU. */
    addOption(l, "-XX:-TieredCompilation");
    /* C2 after 100,000 invocations rather than 10,000: at the start HotSpot otherwise compiles
     * some 70 small JDK methods of the method-handle spinning (ClassFile API accessors) and
     * initialises C2 meanwhile: first init 150 -> 118 ms (median of 5, CPU 146 -> 108 ms). The
     * per-call path reaches C2 after 100,000 calls (a few seconds of a training job; interpreted
     * before, a few microseconds a call). */
    addOption(l, "-XX:CompileThresholdScaling=10");
    /* The init/destroy path compiled after a few communicators, not after tens of thousands (with
     * the AOT cache's CompileThresholdScaling=10 it ran interpreted, ~200 us a pair, and its late
     * compilations grew the C2 thread's malloc arena as communicators came and went; issue 23).
     * Only here, where C2 is the only compiler: with C1 (no cache) it would add C2 compilations that
     * C1 otherwise serves, 1.5-3 MiB within GuestIT's first 1,000 reloads. Per method, so the start
     * and the per-call path keep their thresholds; one option (HotSpot
     * takes commands separated by newlines), so the options stay within MAX_OPTIONS. NativeLog::lo*
     * is NativeLog::log: HotSpot 25's parser refuses a method pattern "log" ("Did not specify any
     * method name"). */
    static const char* initPath[] = {"ffm.Upcalls::control", "ffm.Upcalls::init", "ffm.Upcalls::destroy",
                                     "ffm.Upcalls::signature", "ffm.Upcalls::gpuName", "engine.Engine::init",
                                     "engine.Engine::destroy", "engine.Engine::shape", "engine.Engine::summary",
                                     "ffm.NativeLog::lo*", "ffm.NativeLog::repeated", NULL};
    char scaling[1400] = "-XX:CompileCommand=";
    for (int i = 0; initPath[i] != NULL; i++)
      snprintf(scaling + strlen(scaling), sizeof scaling - strlen(scaling), "%sCompileThresholdScaling,io.nccltuner.%s,0.001",
               i == 0 ? "" : "\n", initPath[i]);
    addOption(l, "%s", scaling);
  }
  for (int i = 0; i < nTok; i++) addOption(l, "%s", toks[i]);
  /* Last, so that nothing before them wins: an engine OutOfMemoryError stays inside the engine
   * (it steps aside) instead of ending or dumping the process, and a crash report goes to a
   * documented place. */
  addOption(l, "-XX:-ExitOnOutOfMemoryError");
  addOption(l, "-XX:-CrashOnOutOfMemoryError");
  addOption(l, "-XX:-HeapDumpOnOutOfMemoryError");
  char ef[4200];
  errorFile(ef, sizeof ef);
  addOption(l, "-XX:ErrorFile=%s", ef);
  /* A compiler crash's replay file goes beside the crash report, not into the working directory;
   * a .hotspotrc or .hotspot_compiler there is not read (HotSpot warns on stderr when it finds one
   * and no -XX:Flags / -XX:CompileCommandFile is given; found by a hostile host). */
  char* rf = strstr(ef, "hs_err_pid");
  if (rf != NULL) {
    char replay[4200];
    snprintf(replay, sizeof replay, "%.*sreplay_pid%%p.log", (int)(rf - ef), ef);
    addOption(l, "-XX:ReplayDataFile=%s", replay);
  }
  addOption(l, "-XX:Flags=/dev/null");
  addOption(l, "-XX:CompileCommandFile=/dev/null");
  free(copy);
  return 0;
}

/* ---- the environment the JVM sees ------------------------------------------------------------ */

/* JAVA_TOOL_OPTIONS and _JAVA_OPTIONS are read by HotSpot itself during creation (arguments.cpp:
 * JAVA_TOOL_OPTIONS before the JavaVMInitArgs options, _JAVA_OPTIONS after them, so neither can
 * be overridden from here, and HotSpot prints "Picked up ..." to fd 2 before any hook is set).
 * They are meant for the job's other Java tools: the plugin's JVM does not take them. The host's
 * environment is not touched (the shim used to point `environ` at a copy during creation; a host
 * thread's setenv beside it crashed the process, 2 runs of 7, with 64 communicators starting):
 * instead libjvm's own calls to getenv and secure_getenv go through jvmGetenv, by rewriting
 * libjvm's GOT slots for them (libjvm is the plugin's, loaded by the shim, and it is linked with
 * full RELRO: the page is made writable for the one store and read-only again). jvmGetenv hides
 * the two variables and gives HotSpot the shim's _JAVA_SR_SIGNUM; every other name is the host's
 * live environment. */
static char* (*realGetenv)(const char*);
static char* (*realSecureGetenv)(const char*);
static char srValue[16];                 /* the _JAVA_SR_SIGNUM value the JVM sees, "" for the host's */
static int envHooked;

static int hiddenName(const char* name) {
  return strcmp(name, "JAVA_TOOL_OPTIONS") == 0 || strcmp(name, "_JAVA_OPTIONS") == 0;
}

static char* jvmGetenv(const char* name) {
  if (name == NULL) return realGetenv(name);
  if (hiddenName(name)) return NULL;
  if (srValue[0] != '\0' && strcmp(name, "_JAVA_SR_SIGNUM") == 0) return srValue;
  return realGetenv(name);
}

static char* jvmSecureGetenv(const char* name) {
  if (name == NULL) return realSecureGetenv(name);
  if (hiddenName(name)) return NULL;
  if (srValue[0] != '\0' && strcmp(name, "_JAVA_SR_SIGNUM") == 0) return srValue;
  return realSecureGetenv(name);
}

typedef struct {
  ElfW(Addr) base;
  ElfW(Addr) relroStart, relroEnd;
} relroSearch;

static int findRelro(struct dl_phdr_info* info, size_t size, void* data) {
  (void)size;
  relroSearch* r = data;
  if (info->dlpi_addr != r->base) return 0;
  for (int i = 0; i < info->dlpi_phnum; i++)
    if (info->dlpi_phdr[i].p_type == PT_GNU_RELRO) {
      r->relroStart = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
      r->relroEnd = r->relroStart + info->dlpi_phdr[i].p_memsz;
    }
  return 1;
}

/* Points every GOT slot of `handle` that binds `name` (JUMP_SLOT or GLOB_DAT) at `to`; the old
 * target goes to *from. Returns the number of slots rewritten. */
static int rewriteGot(void* handle, const char* name, void* to, void** from) {
  struct link_map* lm = NULL;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &lm) != 0 || lm == NULL || lm->l_ld == NULL) return 0;
  ElfW(Addr) base = lm->l_addr;
  const ElfW(Sym)* symtab = NULL;
  const char* strtab = NULL;
  const ElfW(Rela)* tables[2] = {NULL, NULL};
  size_t sizes[2] = {0, 0};
  for (const ElfW(Dyn)* d = lm->l_ld; d->d_tag != DT_NULL; d++) {
    ElfW(Addr) v = d->d_un.d_ptr;
    ElfW(Addr) abs = v < base ? v + base : v; /* glibc relocates these in place on x86-64 */
    switch (d->d_tag) {
      case DT_SYMTAB: symtab = (const ElfW(Sym)*)abs; break;
      case DT_STRTAB: strtab = (const char*)abs; break;
      case DT_JMPREL: tables[0] = (const ElfW(Rela)*)abs; break;
      case DT_PLTRELSZ: sizes[0] = d->d_un.d_val; break;
      case DT_RELA: tables[1] = (const ElfW(Rela)*)abs; break;
      case DT_RELASZ: sizes[1] = d->d_un.d_val; break;
      default: break;
    }
  }
  if (symtab == NULL || strtab == NULL) return 0;
  relroSearch relro = {base, 0, 0};
  dl_iterate_phdr(findRelro, &relro);
  long page = sysconf(_SC_PAGESIZE);
  int rewritten = 0;
  for (int t = 0; t < 2; t++) {
    for (size_t i = 0; tables[t] != NULL && i < sizes[t] / sizeof(ElfW(Rela)); i++) {
      const ElfW(Rela)* r = &tables[t][i];
      unsigned type = (unsigned)ELF64_R_TYPE(r->r_info);
      if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT) continue;
      size_t sym = ELF64_R_SYM(r->r_info);
      if (sym == 0 || strcmp(strtab + symtab[sym].st_name, name) != 0) continue;
      void** slot = (void**)(base + r->r_offset);
      int readOnly = (ElfW(Addr))slot >= relro.relroStart && (ElfW(Addr))slot < relro.relroEnd;
      void* pageStart = (void*)((uintptr_t)slot & ~(uintptr_t)(page - 1));
      if (readOnly && mprotect(pageStart, (size_t)page, PROT_READ | PROT_WRITE) != 0) continue;
      void* old = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
      if (old != to) {
        if (*from == NULL) *from = old;
        __atomic_store_n(slot, to, __ATOMIC_RELEASE);
      }
      if (readOnly) mprotect(pageStart, (size_t)page, PROT_READ);
      rewritten++;
    }
  }
  return rewritten;
}

/* A _JAVA_SR_SIGNUM value HotSpot 25 takes without a warning on stderr: above SIGSEGV and SIGBUS,
 * below NSIG (signals_posix.cpp SR_initialize). */
static int srValueValid(const char* v) {
  char* end = NULL;
  long sig = strtol(v, &end, 10);
  return end != v && *end == '\0' && sig > SIGSEGV && sig > SIGBUS && sig < NSIG;
}

/* Notes the env options (one WARN for agents among them, else one INFO) and hooks libjvm's getenv.
 * Returns 0 after failf() where the variables are set and cannot be hidden. */
static int hideEnvironmentOptions(void* libjvmHandle) {
  static const char* hidden[] = {"JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", NULL};
  char agents[512] = "", names[64] = "";
  int present[2] = {0, 0};
  for (int h = 0; hidden[h] != NULL; h++) {
    const char* value = getenv(hidden[h]);
    if (value == NULL || value[0] == '\0') continue;
    present[h] = 1;
    char* v = strdup(value);
    char* save = NULL;
    for (char* t = v ? strtok_r(v, " \t\n", &save) : NULL; t != NULL; t = strtok_r(NULL, " \t\n", &save)) {
      if (!isAgentOption(t)) continue;
      size_t al = strlen(agents);
      snprintf(agents + al, sizeof agents - al, "%s'%s'", al ? ", " : "", t);
    }
    free(v);
  }
  snprintf(names, sizeof names, "%s%s%s", present[0] ? "JAVA_TOOL_OPTIONS" : "",
           present[0] && present[1] ? " and " : "", present[1] ? "_JAVA_OPTIONS" : "");
  const char* sr = getenv("_JAVA_SR_SIGNUM");
  if ((sr == NULL || !srValueValid(sr)) && srSignal > 0) snprintf(srValue, sizeof srValue, "%d", srSignal);
  if (!envHooked) {
    void* g = NULL;
    void* sg = NULL;
    int n = rewriteGot(libjvmHandle, "getenv", (void*)jvmGetenv, &g);
    if (g != NULL) realGetenv = (char* (*)(const char*))g;
    int m = rewriteGot(libjvmHandle, "secure_getenv", (void*)jvmSecureGetenv, &sg);
    if (sg != NULL) realSecureGetenv = (char* (*)(const char*))sg;
    if (realGetenv == NULL) realGetenv = getenv;
    if (realSecureGetenv == NULL) realSecureGetenv = secure_getenv;
    envHooked = n > 0;
    (void)m;
  }
  if (!envHooked) {
    /* No getenv slot found in this libjvm: HotSpot reads the host's environment as it is. */
    srValue[0] = '\0';
    srSignal = sr != NULL && srValueValid(sr) ? atoi(sr) : SIGUSR2;
    if (names[0] != '\0') {
      failf("%s set, and this libjvm's getenv could not be hooked to hide them from the plugin's JVM (they are "
            "meant for other Java tools and would change it); the plugin changes nothing", names);
      return 0;
    }
    return 1;
  }
  if (agents[0] != '\0') {
    pthread_mutex_lock(&nccltjLogMutex);
    char msg[800];
    snprintf(msg, sizeof msg, "%s hold the agent option(s) %s: refused, the plugin's JVM runs no agent or "
             "debugger (it would stop or end the process); the plugin works without them", names, agents);
    nccltjLog((void*)nccltjFirstLogger, NCCL_LOG_WARN, msg);
    pthread_mutex_unlock(&nccltjLogMutex);
  } else if (names[0] != '\0') {
    noticef("%s not applied to the plugin's JVM (meant for other Java tools; NCCL_TUNER_JAVA_OPTS "
            "is the plugin's)", names);
  }
  return 1;
}

/* ---- signals and locale ------------------------------------------------------------------------ */

static struct sigaction savedActions[NSIG];
static struct sigaction jvmActions[NSIG];  /* the dispositions when the engine had started */
static int jvmActionsKnown;

static int jvmOwns(int sig) {
  return sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL || sig == srSignal;
}

/* HotSpot's suspend/resume signal is SIGUSR2 unless _JAVA_SR_SIGNUM names another one above
 * SIGBUS (HotSpot 25, signals_posix.cpp SR_initialize). SLURM and training frameworks use
 * SIGUSR2, so the shim picks the highest real-time signal from SIGRTMAX down to SIGRTMIN+4 that
 * the host has left at SIG_DFL; 0 (HotSpot's default) if none is free. */
static int pickSrSignal(void) {
  const char* user = getenv("_JAVA_SR_SIGNUM");
  if (user != NULL && srValueValid(user)) return atoi(user);
  for (int sig = SIGRTMAX; sig >= SIGRTMIN + 4; sig--) {
    struct sigaction a;
    if (sigaction(sig, NULL, &a) == 0 && !(a.sa_flags & SA_SIGINFO) && a.sa_handler == SIG_DFL) return sig;
  }
  return 0;
}

static void saveSignals(void) {
  for (int sig = 1; sig < NSIG; sig++) sigaction(sig, NULL, &savedActions[sig]);
}

/* On the start thread once the engine started (or creation gave up): what the JVM left. */
static void noteJvmSignals(void) {
  for (int sig = 1; sig < NSIG; sig++) sigaction(sig, NULL, &jvmActions[sig]);
  jvmActionsKnown = 1;
}

static int sameAction(const struct sigaction* a, const struct sigaction* b) {
  /* SA_RESTORER (0x04000000) is glibc's own addition to any sigaction it installs. */
  return a->sa_handler == b->sa_handler && (a->sa_flags & ~0x04000000) == (b->sa_flags & ~0x04000000);
}

/* Whether `handler` is code of the Java runtime (libjvm, libjava, ...): a disposition the JVM
 * installed. One a host thread installed meanwhile (NCCL's non-blocking init runs the first init on
 * a thread while the main thread goes on) is the host's and stays. */
static int jvmHandler(const struct sigaction* a) {
  void* h = (a->sa_flags & SA_SIGINFO) ? (void*)a->sa_sigaction : (void*)a->sa_handler;
  if (h == (void*)SIG_DFL || h == (void*)SIG_IGN) return 0;
  Dl_info info;
  if (dladdr(h, &info) == 0 || info.dli_fname == NULL) return 0;
  const char* f = info.dli_fname;
  size_t n = strlen(f);
  if (n >= 9 && strcmp(f + n - 9, "libjvm.so") == 0) return 1;
  size_t hn = strlen(javaHome);
  return hn > 0 && strncmp(f, javaHome, hn) == 0 && f[hn] == '/';
}

/* The default action of a fault, for HotSpot to chain to. HotSpot's SIGSEGV, SIGBUS, SIGFPE and
 * SIGILL handlers stay for the life of the process; a fault that is not the JVM's goes to the
 * handler that was installed before HotSpot's (UseSignalChaining), or, where that was SIG_DFL, to
 * HotSpot's fatal-error path, which aborts (SIGABRT, not the host's own signal; found by a host
 * with Python's faulthandler, which puts back the previous handler, HotSpot's, and re-raises).
 * This handler, installed before the JVM where the host left SIG_DFL, makes the end the default
 * action's: the disposition back to SIG_DFL, and the signal again (a fault re-executes). */
static void defaultAction(int sig, siginfo_t* info, void* uc) {
  (void)uc;
  struct sigaction dfl;
  memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(sig, &dfl, NULL);
  if (info == NULL || info->si_code <= 0) { /* sent (kill, raise): no instruction to re-execute */
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, sig);
    pthread_sigmask(SIG_UNBLOCK, &one, NULL);
    raise(sig);
  }
}

static const int faultSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL};
static int defaultActionInstalled[NSIG];

static void installDefaultActions(void) {
  for (size_t i = 0; i < sizeof faultSignals / sizeof faultSignals[0]; i++) {
    int sig = faultSignals[i];
    const struct sigaction* was = &savedActions[sig];
    if ((was->sa_flags & SA_SIGINFO) || was->sa_handler != SIG_DFL) continue;
    struct sigaction a;
    memset(&a, 0, sizeof a);
    a.sa_sigaction = defaultAction;
    sigemptyset(&a.sa_mask);
    a.sa_flags = SA_SIGINFO | SA_NODEFER | SA_ONSTACK;
    defaultActionInstalled[sig] = sigaction(sig, &a, NULL) == 0;
  }
}

/* Puts back every disposition the JVM changed, except those HotSpot needs (jvmOwns): its handlers
 * for SIGSEGV, SIGBUS, SIGFPE and SIGILL chain to the host's earlier ones (UseSignalChaining).
 * Only a disposition that still holds the JVM's handler is put back; where the JVM did not start,
 * the shim's own default-action handlers go too. */
static void restoreSignals(void) {
  for (int sig = 1; sig < NSIG; sig++) {
    if (sig == SIGKILL || sig == SIGSTOP) continue;
    struct sigaction now;
    if (sigaction(sig, NULL, &now) != 0) continue;
    if (defaultActionInstalled[sig]) {
      if ((now.sa_flags & SA_SIGINFO) && now.sa_sigaction == defaultAction) sigaction(sig, &savedActions[sig], NULL);
      continue;
    }
    if (jvmOwns(sig) || sameAction(&now, &savedActions[sig])) continue;
    /* The JVM's: a handler in the runtime's code, or SIG_DFL/SIG_IGN as the JVM left it (libjava's
     * ProcessImpl init sets SIGCHLD to SIG_DFL). A host function installed meanwhile stays. */
    int dflOrIgn = !(now.sa_flags & SA_SIGINFO) && (now.sa_handler == SIG_DFL || now.sa_handler == SIG_IGN);
    if (jvmHandler(&now) || (dflOrIgn && jvmActionsKnown && sameAction(&now, &jvmActions[sig])))
      sigaction(sig, &savedActions[sig], NULL);
  }
}

/* ---- the floating-point environment ---------------------------------------------------------- */

/* A host may trap FP exceptions (feenableexcept, FE_INEXACT included) or keep its own rounding and
 * sticky flags. HotSpot's C++ code (JVM creation, a thread's JNI attach) runs on the FP environment
 * it finds: with FE_INEXACT trapped the host died by SIGFPE in JVM creation, and after an init the
 * calling thread's sticky inexact flag was set. The start thread (and so every JVM thread) begins
 * in the default environment, and the calling thread's whole environment (x87 control and status,
 * MXCSR) is put back after the start and after its attach. x86-64 only, without libm: fnstenv and
 * stmxcsr, then fldenv and ldmxcsr, as glibc's fegetenv/fesetenv do. Upcalls keep the caller's
 * MXCSR themselves (HotSpot's upcall stubs load the standard one and restore the caller's). */
typedef struct {
  unsigned char x87[28];
  unsigned int mxcsr;
} fpEnv;

static void fpSave(fpEnv* e) {
#if defined(__x86_64__)
  __asm__ volatile("fnstenv %0\n\tfldenv %0\n\tstmxcsr %1" : "=m"(e->x87), "=m"(e->mxcsr));
#else
  (void)e;
#endif
}

static void fpRestore(const fpEnv* e) {
#if defined(__x86_64__)
  __asm__ volatile("fldenv %0\n\tldmxcsr %1" : : "m"(e->x87), "m"(e->mxcsr));
#else
  (void)e;
#endif
}

/* The default environment: x87 control word 0x37f, no x87 flags, MXCSR 0x1f80. */
static void fpDefault(void) {
#if defined(__x86_64__)
  unsigned short cw = 0x37f;
  unsigned int mxcsr = 0x1f80;
  __asm__ volatile("fnclex\n\tfldcw %0\n\tldmxcsr %1" : : "m"(cw), "m"(mxcsr));
#endif
}

/* ---- file descriptors 0-2 ----------------------------------------------------------------------- */

/* A daemon may close fds 0-2 before NCCL starts: the JVM's own files (lib/modules, the jar) would
 * then take them, a host write(2, ...) that failed with EBADF would reach the jar, and a later
 * dup2(log, 1) by the host would put its log where the JVM reads its jar (SIGSEGV at the next
 * destroy). During the start each closed one of 0-2 holds /dev/null (close-on-exec), so the JVM's
 * descriptors land at 3 or above; each is closed after the start if it is still the shim's (same
 * file, still close-on-exec: a host thread's dup2 onto it meanwhile clears the flag). */
static struct stat heldLowStat[3];
static int heldLow[3];

static void holdLowFds(void) {
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

static void releaseLowFds(void) {
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

HIDDEN void nccltjAttachCurrentThread(void) {
  JNIEnv* env = NULL;
  if (nccltjJvm == NULL || (*nccltjJvm)->GetEnv(nccltjJvm, (void**)&env, JNI_VERSION_10) != JNI_EDETACHED) return;
  sigset_t before;
  pthread_sigmask(SIG_SETMASK, NULL, &before);
  fpEnv fp;
  fpSave(&fp);
  fpDefault();
  if ((*nccltjJvm)->AttachCurrentThreadAsDaemon(nccltjJvm, (void**)&env, NULL) == JNI_OK)
    pthread_setspecific(nccltjAttachKey, (void*)1);
  fpRestore(&fp);
  /* HotSpot's attach unblocks its signals on this thread (PosixSignals::hotspot_sigmask). The
   * host's mask comes back, but for the synchronous faults: compiled Java code takes SIGSEGV by
   * design (safepoint polls, implicit null checks), and a blocked synchronous fault kills the
   * process. */
  sigdelset(&before, SIGSEGV);
  sigdelset(&before, SIGBUS);
  sigdelset(&before, SIGFPE);
  sigdelset(&before, SIGILL);
  pthread_sigmask(SIG_SETMASK, &before, NULL);
}

/* ---- start-up ------------------------------------------------------------------------------ */

/* Loads the Bootstrap class: from the class path, else (a JVM the host created) through a new
 * URLClassLoader over the engine jar. */
static jclass loadBootstrap(JNIEnv* env, const char* jar) {
  jclass c = (*env)->FindClass(env, BOOTSTRAP_CLASS);
  if (c != NULL) return c;
  (*env)->ExceptionClear(env);
  jclass fileCls = (*env)->FindClass(env, "java/io/File");
  jclass urlCls = (*env)->FindClass(env, "java/net/URL");
  jclass uriCls = (*env)->FindClass(env, "java/net/URI");
  jclass loaderCls = (*env)->FindClass(env, "java/net/URLClassLoader");
  if (!fileCls || !urlCls || !uriCls || !loaderCls) return NULL;
  jmethodID fileCtor = (*env)->GetMethodID(env, fileCls, "<init>", "(Ljava/lang/String;)V");
  jmethodID toUri = (*env)->GetMethodID(env, fileCls, "toURI", "()Ljava/net/URI;");
  jmethodID toUrl = (*env)->GetMethodID(env, uriCls, "toURL", "()Ljava/net/URL;");
  jmethodID loaderCtor = (*env)->GetMethodID(env, loaderCls, "<init>", "([Ljava/net/URL;)V");
  jmethodID loadClass = (*env)->GetMethodID(env, loaderCls, "loadClass", "(Ljava/lang/String;)Ljava/lang/Class;");
  if (!fileCtor || !toUri || !toUrl || !loaderCtor || !loadClass) return NULL;
  jobject file = (*env)->NewObject(env, fileCls, fileCtor, (*env)->NewStringUTF(env, jar));
  jobject uri = file ? (*env)->CallObjectMethod(env, file, toUri) : NULL;
  jobject url = uri ? (*env)->CallObjectMethod(env, uri, toUrl) : NULL;
  jobjectArray urls = url ? (*env)->NewObjectArray(env, 1, urlCls, url) : NULL;
  jobject loader = urls ? (*env)->NewObject(env, loaderCls, loaderCtor, urls) : NULL;
  if (loader == NULL) return NULL;
  jobject cls = (*env)->CallObjectMethod(env, loader, loadClass,
                                         (*env)->NewStringUTF(env, "io.nccltuner.ffm.Bootstrap"));
  return (jclass)cls;
}

static void describeException(JNIEnv* env, const char* what) {
  jthrowable t = (*env)->ExceptionOccurred(env);
  (*env)->ExceptionClear(env);
  char detail[512] = "";
  if (t != NULL) {
    jclass obj = (*env)->FindClass(env, "java/lang/Object");
    jmethodID toString = obj ? (*env)->GetMethodID(env, obj, "toString", "()Ljava/lang/String;") : NULL;
    jstring s = toString ? (jstring)(*env)->CallObjectMethod(env, t, toString) : NULL;
    if ((*env)->ExceptionCheck(env)) (*env)->ExceptionClear(env);
    const char* c = s ? (*env)->GetStringUTFChars(env, s, NULL) : NULL;
    if (c != NULL) {
      snprintf(detail, sizeof detail, ": %s", c);
      (*env)->ReleaseStringUTFChars(env, s, c);
    }
  }
  failf("%s%s; the plugin changes nothing", what, detail);
}

/* A JVM does not survive fork: its threads (VM thread, compiler, the decision-log writer) stayed
 * in the parent, and the first call that needs one of them hangs for ever (measured: a child
 * making getCollInfo calls hung), and so does a child forked while another thread was creating
 * the JVM. The child steps aside (the exit-time flush included) and says so once. */
HIDDEN void nccltjInForkedChild(int starting) {
  nccltjForkedAfterStart = 1;
  nccltjBridge.control = NULL;
  nccltjBridge.getCollInfo = NULL;
  snprintf(nccltjStartFailure, sizeof nccltjStartFailure,
           "this process was forked %s the plugin's JVM started and a JVM does not survive fork; the "
           "plugin changes nothing in this process", starting ? "while" : "after");
  nccltjFailureLogged = 0;
  nccltjStackWarned = 1;
  pthread_mutex_init(&nccltjLogMutex, NULL);
  pthread_mutex_init(&outMutex, NULL);
  pthread_mutex_init(&deferredMutex, NULL);
}

/* What JVM creation needs of the process's limits before it can even report a failure: HotSpot
 * reserves its heap, code cache and class space up front and, when a reservation or an early
 * open() fails, exits or aborts the process (found by a hostile host: `ulimit -v` near 2 GB made
 * the host exit 1, near 200 MB it crashed in libjimage; one free file descriptor aborted it).
 * Below these the plugin steps aside instead. Training processes with CUDA run with no
 * address-space limit (CUDA reserves far more), so the margins cost nothing there. */
#define MIN_FREE_ADDRESS_SPACE (4ULL << 30) /* bytes of ulimit -v left above what the process uses */
#define MIN_FREE_FDS 16

static int resourcesOk(void) {
  struct rlimit as;
  if (getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY) {
    unsigned long long used = 0;
    FILE* f = fopen("/proc/self/statm", "r");
    if (f != NULL) {
      unsigned long pages = 0;
      if (fscanf(f, "%lu", &pages) == 1) used = (unsigned long long)pages * (unsigned long long)sysconf(_SC_PAGESIZE);
      fclose(f);
    }
    if ((unsigned long long)as.rlim_cur < used + MIN_FREE_ADDRESS_SPACE) {
      failf("the address-space limit (ulimit -v) is %llu MiB and the process uses %llu MiB: the JVM needs %llu "
            "MiB more (HotSpot reserves its heap, code cache and class space at start and ends the process when "
            "it cannot); the plugin changes nothing", (unsigned long long)as.rlim_cur >> 20, used >> 20,
            MIN_FREE_ADDRESS_SPACE >> 20);
      return 0;
    }
  }
  int fds[MIN_FREE_FDS];
  int n = 0;
  while (n < MIN_FREE_FDS && (fds[n] = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0) n++;
  for (int i = 0; i < n; i++) close(fds[i]);
  if (n < MIN_FREE_FDS) {
    failf("only %d file descriptors are free (ulimit -n); the JVM needs at least %d to start (HotSpot aborts the "
          "process when an early open fails); the plugin changes nothing", n, MIN_FREE_FDS);
    return 0;
  }
  return 1;
}

/* What HotSpot needs of the runtime and the process before its hooks exist: HotSpot finds its
 * runtime through the real path of libjvm (os::jvm_path, realpath) and its classes in
 * <home>/lib/modules, both before it reads the JavaVMInitArgs options; when either fails it prints
 * "Error occurred during initialization of VM / Failed setting boot class path." on fd 1 and calls
 * exit(1) with no hook set (found by a hostile host: a jlinked runtime without lib/modules, a seccomp
 * filter denying readlink). A sandbox denying sched_getaffinity makes it print three lines on fd 2,
 * again before the hooks, and give up. Checked here first; the plugin steps aside instead. */
static int runtimeOk(const char* libjvm) {
  char real[4096];
  if (realpath(libjvm, real) == NULL) {
    failf("cannot resolve the real path of %s (%s): HotSpot finds its runtime through it (readlink denied by a "
          "sandbox?) and would exit the process; the plugin changes nothing", libjvm, strerror(errno));
    return 0;
  }
  char server[4096], lib[4096], modules[4200];
  dirOf(real, server, sizeof server);
  dirOf(server, lib, sizeof lib);
  snprintf(modules, sizeof modules, "%s/modules", lib);
  int fd = open(modules, O_RDONLY | O_CLOEXEC);
  struct stat st;
  int ok = fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  int why = errno;
  if (fd >= 0) close(fd);
  if (!ok) {
    failf("the Java runtime of %s has no readable lib/modules (%s): an incomplete runtime, with which HotSpot "
          "would exit the process; the plugin changes nothing", real, fd < 0 ? strerror(why) : "not a regular file");
    return 0;
  }
  cpu_set_t cpus;
  if (sched_getaffinity(0, sizeof cpus, &cpus) != 0 && errno != EINVAL) {
    failf("sched_getaffinity fails in this process (%s; a seccomp sandbox?): HotSpot would print on stderr and give "
          "up; the plugin changes nothing", strerror(errno));
    return 0;
  }
  return 1;
}

static char jvmLocale[512];                /* setlocale(LC_ALL, NULL) right after the JVM's start set it */

static void noteJvmLocale(void) {
  const char* l = setlocale(LC_ALL, NULL);
  snprintf(jvmLocale, sizeof jvmLocale, "%s", l != NULL ? l : "");
}

/* The locale the JVM's setlocale(LC_ALL, "") sets, from the environment as glibc reads it
 * (LC_ALL, else LC_<category>, else LANG, else C; POSIX reads as C), computed before the JVM is
 * created so that a host thread's setlocale after the JVM's is told apart from it. NULL where the
 * categories differ (the snapshot after creation is used then); the caller's value where that
 * locale does not exist (setlocale fails and changes nothing). */
static const char* environmentLocale(const char* current) {
  static char name[256];
  static const char* cats[] = {"LC_CTYPE", "LC_NUMERIC", "LC_TIME", "LC_COLLATE", "LC_MONETARY", "LC_MESSAGES",
                               "LC_PAPER", "LC_NAME", "LC_ADDRESS", "LC_TELEPHONE", "LC_MEASUREMENT",
                               "LC_IDENTIFICATION", NULL};
  const char* all = getenv("LC_ALL");
  const char* lang = getenv("LANG");
  const char* first = NULL;
  for (int i = 0; cats[i] != NULL; i++) {
    const char* v = all != NULL && all[0] != '\0' ? all : getenv(cats[i]);
    if (v == NULL || v[0] == '\0') v = lang != NULL && lang[0] != '\0' ? lang : "C";
    if (strcmp(v, "POSIX") == 0) v = "C";
    if (first == NULL) first = v;
    else if (strcmp(first, v) != 0) return NULL;
  }
  locale_t l = newlocale(LC_ALL_MASK, first, (locale_t)0);
  if (l == (locale_t)0) return current;
  freelocale(l);
  snprintf(name, sizeof name, "%s", first);
  return name;
}

/* Creates the JVM through libjvm at `libjvm`; 0 after failf(). */
static int createJvm(const char* libjvm, const char* libDir, const char* jar, JavaVM** vm, JNIEnv** env) {
  if (!resourcesOk() || !runtimeOk(libjvm)) return 0;
  void* h = dlopen(libjvm, RTLD_NOW | RTLD_GLOBAL);
  if (h == NULL) {
    failf("cannot load %s (%s); the plugin changes nothing", libjvm, dlerror());
    return 0;
  }
  create_vm_fn create = (create_vm_fn)dlsym(h, "JNI_CreateJavaVM");
  if (create == NULL) {
    failf("%s is not a JVM (no JNI_CreateJavaVM); the plugin changes nothing", libjvm);
    return 0;
  }
  char aot[4200];
  snprintf(aot, sizeof aot, "%s/" AOT_NAME, libDir);
  optionList opts = {0};
  if (buildOptions(&opts, jar, isFile(aot) ? aot : NULL) < 0) {
    freeOptions(&opts);
    return 0;
  }
  JavaVMInitArgs args;
  args.version = JNI_VERSION_10;
  args.nOptions = opts.n;
  args.options = opts.opts;
  args.ignoreUnrecognized = JNI_FALSE;
  if (!hideEnvironmentOptions(h)) {
    freeOptions(&opts);
    return 0;
  }
  creatorThread = pthread_self();
  creating = 1;
  /* Should HotSpot give up, the exit/abort hook ends this thread here: nccltjStart reads
   * creationAborted after the join. */
  jint rc = create(vm, (void**)env, &args);
  noteJvmLocale();
  creating = 0;
  freeOptions(&opts);
  if (rc != JNI_OK) {
    failf("NCCL_TUNER_JAVA_OPTS or the JVM refused to start (JNI_CreateJavaVM %d: %s); the plugin "
          "changes nothing", (int)rc, creationError());
    return 0;
  }
  return 1;
}

/* Runs on the start thread. */
static void startJvm(void) {
  char libDir[4096];
  dirOf(libraryPath, libDir, sizeof libDir);

  char jar[4200];
  const char* cp = getenv("NCCL_TUNER_JAVA_CLASSPATH");
  if (cp != NULL && cp[0] != '\0') {
    snprintf(jar, sizeof jar, "%s", cp);
  } else {
    snprintf(jar, sizeof jar, "%s/" JAR_NAME, libDir);
    if (!isFile(jar)) {
      failf("engine jar %s not found (set NCCL_TUNER_JAVA_CLASSPATH to it); the plugin changes nothing", jar);
      return;
    }
  }

  snprintf(engineJar, sizeof engineJar, "%s", jar);

  JavaVM* vm = NULL;
  JNIEnv* env = NULL;
  /* Join a JVM the process already runs (for example a host that embeds Java itself). */
  created_vms_fn getCreated = (created_vms_fn)dlsym(RTLD_DEFAULT, "JNI_GetCreatedJavaVMs");
  jsize count = 0;
  if (getCreated != NULL && getCreated(&vm, 1, &count) == JNI_OK && count > 0) {
    if ((*vm)->AttachCurrentThread(vm, (void**)&env, NULL) != JNI_OK) {
      failf("cannot attach to the process's existing JVM; the plugin changes nothing");
      return;
    }
  } else {
    char libjvm[4200];
    if (!findLibjvm(libDir, libjvm, sizeof libjvm)) return;
    char ours[4200], other[4096];
    if (realpath(libjvm, ours) == NULL) snprintf(ours, sizeof ours, "%s", libjvm);
    libjvmSearch s = {ours, other, sizeof other, 0};
    dl_iterate_phdr(findLoadedLibjvm, &s);
    if (s.found) {
      /* Its own runtime is usable if it is new enough: use that libjvm, not a second one. */
      char server[4096], lib[4096], home[4096];
      dirOf(other, server, sizeof server); /* .../lib/server */
      dirOf(server, lib, sizeof lib);      /* .../lib */
      dirOf(lib, home, sizeof home);       /* the Java home */
      int feature = javaFeature(home);
      if (feature < MIN_JAVA_FEATURE) {
        failf("another Java runtime's libjvm (%s, Java %d) is already loaded in this process with no JVM "
              "created, and a second libjvm in one process crashes it; the engine needs Java %d+, so the "
              "plugin changes nothing", other, feature, MIN_JAVA_FEATURE);
        return;
      }
      snprintf(libjvm, sizeof libjvm, "%s", other);
      snprintf(javaHome, sizeof javaHome, "%s", home);
      noticef("using the Java %d runtime whose libjvm the process had already loaded (%s)", feature, other);
    }
    if (!createJvm(libjvm, libDir, jar, &vm, &env)) return;
  }

  nccltjJvm = vm;
  jclass boot = loadBootstrap(env, jar);
  if (boot == NULL) {
    describeException(env, "cannot load the engine from the jar");
  } else {
    jmethodID m = (*env)->GetStaticMethodID(env, boot, "start", "(J)I");
    if (m == NULL) {
      describeException(env, "the engine jar has no Bootstrap.start(long): wrong version");
    } else {
      nccltjBridge.abiVersion = NCCL_TUNER_JAVA_ABI_VERSION;
      nccltjBridge.log = nccltjLog;
      nccltjBridge.libraryPath = libraryPath;
      jint rc = (*env)->CallStaticIntMethod(env, boot, m, (jlong)(intptr_t)&nccltjBridge);
      if ((*env)->ExceptionCheck(env)) {
        describeException(env, "the engine failed to start");
      } else if (nccltjBridge.engineAbiVersion != NCCL_TUNER_JAVA_ABI_VERSION) {
        failf("engine jar speaks bridge ABI %d, this library %d: the jar and the library come from "
              "different versions; the plugin changes nothing",
              (int)nccltjBridge.engineAbiVersion, NCCL_TUNER_JAVA_ABI_VERSION);
      } else if (rc == 2) {
        failf("another copy of the plugin (another libnccl-tuner-java.so) already serves this process's "
              "JVM; this copy (%s) changes nothing", libraryPath);
      } else if (rc != 0 || nccltjBridge.control == NULL || nccltjBridge.getCollInfo == NULL) {
        failf("the engine did not start (code %d); the plugin changes nothing", (int)rc);
      }
    }
  }
  if (nccltjStartFailure[0] != '\0') {
    nccltjBridge.control = NULL;
    nccltjBridge.getCollInfo = NULL;
  }
  /* The thread stays usable for upcalls (FFM attaches threads itself); it need not stay attached
   * through JNI. */
  (*vm)->DetachCurrentThread(vm);
}

static void* startThread(void* unused) {
  (void)unused;
  startJvm();
  noteJvmSignals();
  return NULL;
}

/* The real paths the plugin's own descriptors point at, resolved once (realpath costs a few
 * system calls per path component; the scan runs at every init and destroy). */
static char realJar[4200], realHome[4200];
static size_t realHomeLength;
static int realPathsKnown;

static void knowRealPaths(void) {
  if (realPathsKnown) return;
  if (engineJar[0] == '\0' || realpath(engineJar, realJar) == NULL) realJar[0] = '\0';
  if (javaHome[0] == '\0' || realpath(javaHome, realHome) == NULL) realHome[0] = '\0';
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

HIDDEN void nccltjStart(void) {
  Dl_info info;
  if (dladdr((void*)&nccltjLog, &info) != 0 && info.dli_fname != NULL) {
    if (realpath(info.dli_fname, libraryPath) == NULL)
      snprintf(libraryPath, sizeof libraryPath, "%s", info.dli_fname);
    /* Pin: NCCL 2.22+ dlcloses the tuner when its last communicator is destroyed and dlopens it
     * again for the next (src/plugin/tuner.cc ncclTunerPluginUnload, src/plugin/plugin_open.cc).
     * The JVM, the engine's upcall stubs (which point at nccltjLog) and the pthread key destructor
     * outlive any one mapping, so this one stays mapped; the next dlopen returns it, statics and all. */
    if (dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE) == NULL)
      noticef("could not pin %s in memory (%s)", libraryPath, dlerror());
  }
  pthread_key_create(&nccltjAttachKey, nccltjDetachThread);

  /* Everything the JVM's start may change in the host, saved on the calling thread. */
  char* locale = setlocale(LC_ALL, NULL);
  char* savedLocale = locale != NULL ? strdup(locale) : NULL;
  const char* envLocale = savedLocale != NULL ? environmentLocale(savedLocale) : NULL;
  char* expectedLocale = envLocale != NULL ? strdup(envLocale) : NULL;
  saveSignals();
  srSignal = pickSrSignal();
  installDefaultActions();
  holdLowFds();
  fpEnv fp;
  fpSave(&fp);

  /* The start thread, and so every JVM thread (they inherit its mask), blocks every signal but
   * the synchronous faults, which HotSpot unblocks itself with its suspend/resume signal. */
  sigset_t all, callerMask;
  sigfillset(&all);
  sigdelset(&all, SIGSEGV);
  sigdelset(&all, SIGBUS);
  sigdelset(&all, SIGFPE);
  sigdelset(&all, SIGILL);
  pthread_attr_t attr;
  pthread_t t;
  int err = pthread_attr_init(&attr);
  if (err == 0) err = pthread_attr_setstacksize(&attr, START_THREAD_STACK);
  pthread_sigmask(SIG_SETMASK, &all, &callerMask);
  fpDefault(); /* the start thread inherits it */
  if (err == 0) err = pthread_create(&t, &attr, startThread, NULL);
  fpRestore(&fp);
  pthread_sigmask(SIG_SETMASK, &callerMask, NULL);
  pthread_attr_destroy(&attr);
  if (err == 0) {
    pthread_join(t, NULL);
  } else {
    failf("cannot create a thread to start the JVM (%s): the process is at its thread or memory limit "
          "(pids cgroup, ulimit -u, ulimit -v); the plugin changes nothing", strerror(err));
  }
  if (creationAborted) {
    creating = 0;
    failf("the JVM gave up during creation (HotSpot exit or abort: %s); out of threads or memory "
          "(pids cgroup, ulimit -u, ulimit -v) or a bad NCCL_TUNER_JAVA_OPTS value; the plugin changes nothing",
          creationError());
    nccltjBridge.control = NULL;
    nccltjBridge.getCollInfo = NULL;
  }
  restoreSignals();
  releaseLowFds();
  fpRestore(&fp);
  /* The JVM's start set the locale from the environment (setlocale(LC_ALL, "")): put back the
   * host's only if it still holds the value the JVM set (a host thread may have set its own). */
  if (savedLocale != NULL) {
    const char* now = setlocale(LC_ALL, NULL);
    const char* jvms = expectedLocale != NULL ? expectedLocale : jvmLocale;
    if (now != NULL && jvms[0] != '\0' && strcmp(now, jvms) == 0 && strcmp(now, savedLocale) != 0)
      setlocale(LC_ALL, savedLocale);
    free(savedLocale);
    free(expectedLocale);
  }
  if (nccltjBridge.control != NULL) {
    atexit(nccltjFlushAtExit);
    nccltjCloseOnExecOwnFiles();
  }
}
