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

#define MAX_OPTIONS 80 /* 48 from NCCL_TUNER_JAVA_OPTS, up to 32 of our own (hooks included) */
#define JAR_NAME "nccl-tuner-java.jar"
#define AOT_NAME "nccl-tuner-java.aot"
#define BOOTSTRAP_CLASS "io/nccltuner/ffm/Bootstrap"
#define MIN_JAVA_FEATURE 25
/* The JVM is created on a thread of its own with this much stack, whatever the caller has. */
#define START_THREAD_STACK (8 * 1024 * 1024)

extern char** environ;

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
 * errors) reaches NCCL's logger at INFO as "TUNER/Java: JVM: <line>" instead of fds 1 and 2. */
static jint JNICALL vfprintfHook(FILE* stream, const char* fmt, va_list ap) {
  (void)stream;
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
static void JNICALL exitHook(jint code) {
  (void)code;
  if (creating && pthread_equal(pthread_self(), creatorThread)) {
    creationAborted = 1;
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
    if (nTok == MAX_OPTIONS - 32) {
      failf("NCCL_TUNER_JAVA_OPTS: more than %d options; the plugin changes nothing", MAX_OPTIONS - 32);
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
 * They are meant for the job's other Java tools: the plugin's JVM does not take them. While the
 * JVM is created, `environ` points at a copy without them and with _JAVA_SR_SIGNUM (unless the
 * host set it); the host's own array is not written, and is put back right after creation. A host
 * thread that reads the environment meanwhile sees the copy; one that calls setenv meanwhile
 * keeps its change, and the two hidden variables are set again beside it (docs/reliability.md). */
static char** hostEnviron;
static char** jvmEnviron;
static char** jvmEnvironAsMade;   /* the copy's entries as the shim made them */
static char* hiddenEntries[2];     /* the host's JAVA_TOOL_OPTIONS=... and _JAVA_OPTIONS=... entries */
static int hostHadSr;              /* whether the host's environment had a valid _JAVA_SR_SIGNUM */
static const char* hostInvalidSr;  /* the host's own _JAVA_SR_SIGNUM entry when it is not valid */
static size_t jvmEnvironCount;

/* Notes the env options (one WARN for agents among them, else one INFO) and installs the copy. */
/* A _JAVA_SR_SIGNUM value HotSpot 25 takes without a warning on stderr: above SIGSEGV and SIGBUS,
 * below NSIG (signals_posix.cpp SR_initialize). */
static int srValueValid(const char* v) {
  char* end = NULL;
  long sig = strtol(v, &end, 10);
  return end != v && *end == '\0' && sig > SIGSEGV && sig > SIGBUS && sig < NSIG;
}

static void hideEnvironmentOptions(void) {
  static const char* hidden[] = {"JAVA_TOOL_OPTIONS=", "_JAVA_OPTIONS=", NULL};
  char** env = environ;
  size_t n = 0;
  int haveSr = 0;
  while (env != NULL && env[n] != NULL) {
    if (strncmp(env[n], "_JAVA_SR_SIGNUM=", 16) == 0 && srValueValid(env[n] + 16)) haveSr = 1;
    n++;
  }
  char** copy = calloc(n + 2, sizeof *copy);
  if (copy == NULL) return;
  size_t k = 0;
  char agents[512] = "", names[64] = "";
  int present[2] = {0, 0};
  for (size_t i = 0; i < n; i++) {
    /* An invalid value would make HotSpot print a warning on the host's stderr: the JVM sees ours. */
    if (strncmp(env[i], "_JAVA_SR_SIGNUM=", 16) == 0 && !srValueValid(env[i] + 16)) {
      hostInvalidSr = env[i];
      continue;
    }
    int hide = -1;
    for (int h = 0; hidden[h] != NULL; h++)
      if (strncmp(env[i], hidden[h], strlen(hidden[h])) == 0) hide = h;
    if (hide < 0) {
      copy[k++] = env[i];
      continue;
    }
    hiddenEntries[hide] = env[i];
    const char* value = env[i] + strlen(hidden[hide]);
    if (value[0] == '\0') continue;
    present[hide] = 1;
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
  if (!haveSr && srSignal > 0) {
    static char sr[32];
    snprintf(sr, sizeof sr, "_JAVA_SR_SIGNUM=%d", srSignal);
    copy[k++] = sr;
  }
  copy[k] = NULL;
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
  hostHadSr = haveSr;
  hostEnviron = env;
  jvmEnviron = copy;
  jvmEnvironCount = k;
  jvmEnvironAsMade = malloc((k + 1) * sizeof *copy);
  if (jvmEnvironAsMade != NULL) memcpy(jvmEnvironAsMade, copy, (k + 1) * sizeof *copy);
  __atomic_store_n(&environ, copy, __ATOMIC_SEQ_CST);
}

static void restoreEnvironment(void) {
  if (jvmEnviron == NULL) return;
  char** expected = jvmEnviron;
  /* Untouched by the host meanwhile: same array, same entries (a setenv of an existing variable
   * writes into the array in place). The copy is never freed: a host thread may still read it. */
  int untouched = __atomic_load_n(&environ, __ATOMIC_SEQ_CST) == jvmEnviron && jvmEnvironAsMade != NULL &&
                  memcmp(jvmEnviron, jvmEnvironAsMade, (jvmEnvironCount + 1) * sizeof *jvmEnviron) == 0;
  if (!untouched ||
      !__atomic_compare_exchange_n(&environ, &expected, hostEnviron, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
    /* The host called setenv (or putenv, unsetenv) meanwhile: its change is in the copy, or in a
     * new array glibc made from it. Keep it, and put back what the copy lacked or added with the
     * host's own calls (safe beside its other setenv calls). */
    /* glibc's setenv of a new name reallocates its last array, which may be the host's old one:
     * only the entries saved at hiding time are read, never hostEnviron. */
    for (int h = 0; h < 2; h++) {
      const char* e = hiddenEntries[h];
      const char* eq = e != NULL ? strchr(e, '=') : NULL;
      if (eq == NULL) continue;
      char name[32];
      snprintf(name, sizeof name, "%.*s", (int)(eq - e), e);
      if (getenv(name) == NULL) setenv(name, eq + 1, 0);
    }
    if (hostInvalidSr != NULL) {
      setenv("_JAVA_SR_SIGNUM", hostInvalidSr + 16, 1);
    } else if (!hostHadSr) {
      unsetenv("_JAVA_SR_SIGNUM");
    }
  }
  jvmEnviron = NULL;
}

/* ---- signals and locale ------------------------------------------------------------------------ */

static struct sigaction savedActions[NSIG];

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

/* Puts back every disposition that changed, except those HotSpot needs (jvmOwns): its handlers
 * for SIGSEGV, SIGBUS, SIGFPE and SIGILL chain to the host's earlier ones (UseSignalChaining). */
static void restoreSignals(void) {
  for (int sig = 1; sig < NSIG; sig++) {
    if (sig == SIGKILL || sig == SIGSTOP || jvmOwns(sig)) continue;
    struct sigaction now;
    if (sigaction(sig, NULL, &now) != 0) continue;
    /* SA_RESTORER (0x04000000) is glibc's own addition to any sigaction it installs. */
    if (now.sa_handler != savedActions[sig].sa_handler ||
        (now.sa_flags & ~0x04000000) != (savedActions[sig].sa_flags & ~0x04000000))
      sigaction(sig, &savedActions[sig], NULL);
  }
}

HIDDEN void nccltjAttachCurrentThread(void) {
  JNIEnv* env = NULL;
  if (nccltjJvm == NULL || (*nccltjJvm)->GetEnv(nccltjJvm, (void**)&env, JNI_VERSION_10) != JNI_EDETACHED) return;
  sigset_t before;
  pthread_sigmask(SIG_SETMASK, NULL, &before);
  if ((*nccltjJvm)->AttachCurrentThreadAsDaemon(nccltjJvm, (void**)&env, NULL) == JNI_OK)
    pthread_setspecific(nccltjAttachKey, (void*)1);
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

/* Creates the JVM through libjvm at `libjvm`; 0 after failf(). */
static int createJvm(const char* libjvm, const char* libDir, const char* jar, JavaVM** vm, JNIEnv** env) {
  if (!resourcesOk()) return 0;
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
  hideEnvironmentOptions();
  creatorThread = pthread_self();
  creating = 1;
  /* Should HotSpot give up, the exit/abort hook ends this thread here: nccltjStart reads
   * creationAborted after the join. The environment is put back there too. */
  jint rc = create(vm, (void**)env, &args);
  creating = 0;
  restoreEnvironment();
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
  saveSignals();
  srSignal = pickSrSignal();

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
  if (err == 0) err = pthread_create(&t, &attr, startThread, NULL);
  pthread_sigmask(SIG_SETMASK, &callerMask, NULL);
  pthread_attr_destroy(&attr);
  if (err == 0) {
    pthread_join(t, NULL);
  } else {
    failf("cannot create a thread to start the JVM (%s): the process is at its thread or memory limit "
          "(pids cgroup, ulimit -u, ulimit -v); the plugin changes nothing", strerror(err));
  }
  if (creationAborted) {
    restoreEnvironment();
    creating = 0;
    failf("the JVM gave up during creation (HotSpot exit or abort: %s); out of threads or memory "
          "(pids cgroup, ulimit -u, ulimit -v) or a bad NCCL_TUNER_JAVA_OPTS value; the plugin changes nothing",
          creationError());
    nccltjBridge.control = NULL;
    nccltjBridge.getCollInfo = NULL;
  }
  restoreSignals();
  if (savedLocale != NULL) {
    setlocale(LC_ALL, savedLocale);
    free(savedLocale);
  }
  if (nccltjBridge.control != NULL) {
    atexit(nccltjFlushAtExit);
    nccltjCloseOnExecOwnFiles();
  }
}
