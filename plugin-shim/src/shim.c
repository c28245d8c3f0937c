/*
 * libnccl-tuner-java.so: the C side of nccl-tuner-java.
 *
 * NCCL (2.19+) dlopens this library and reads the one exported symbol, ncclTunerPlugin_v3
 * (NCCL src/plugin/tuner.cc). At the first init in the process the shim finds a Java runtime,
 * dlopens its libjvm (no link-time dependency), creates the JVM once (or joins one the process
 * already has) and makes one JNI call, io.nccltuner.shim.Bootstrap.start(bridge). Java answers by
 * writing FFM upcall stubs for init, getCollInfo and destroy into the bridge; from then on each
 * call from NCCL is a C function forwarding to an upcall, with no JNI.
 *
 * Whatever fails, every entry point returns ncclSuccess and changes nothing (NCCL wraps them in
 * NCCLCHECK, so an error would fail communicator creation or the collective); the reason is
 * logged once per process through NCCL's logger. The JVM is never destroyed.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <jni.h>
#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "nccl_tuner_java.h"

#define HIDDEN __attribute__((visibility("hidden")))
#define LOG_PREFIX "TUNER/Java: "
#define MAX_OPTIONS 72 /* 48 from NCCL_TUNER_JAVA_OPTS, up to 24 of our own */
#define JAR_NAME "nccl-tuner-java.jar"
#define AOT_NAME "nccl-tuner-java.aot"
#define BOOTSTRAP_CLASS "io/nccltuner/shim/Bootstrap"
#define MIN_JAVA_FEATURE 25
/* FFM upcalls from a native thread with 96 KiB of stack or less abort the process ("Could not
 * attach thread for upcall", measured with Temurin 25.0.3); 128 KiB worked. */
#define MIN_CALLER_STACK (128 * 1024)
/* The JVM is created on a thread of its own with this much stack, whatever the caller has. */
#define START_THREAD_STACK (8 * 1024 * 1024)

extern char** environ;

typedef jint (*create_vm_fn)(JavaVM**, void**, void*);
typedef jint (*created_vms_fn)(JavaVM**, jsize, jsize*);

static pthread_once_t startOnce = PTHREAD_ONCE_INIT;
static nccltj_bridge_t bridge;            /* upcalls are non-NULL only after a good start */
static char startFailure[1024];           /* why the JVM could not be used, logged once */
static int failureLogged;                 /* guarded by logMutex */
static pthread_mutex_t logMutex = PTHREAD_MUTEX_INITIALIZER;
static char libraryPath[4096];
static char javaHome[4096];               /* the runtime whose libjvm was loaded */
static ncclDebugLogger_t firstLogger;     /* for warnings that arise outside an init */
static int stackWarned;                   /* guarded by logMutex */
static JavaVM* theJvm;                    /* set once the engine started */
static pthread_key_t attachKey;           /* marks threads the shim attached; detaches them at exit */
static volatile int forkedAfterStart;     /* set in a child forked after the JVM started */

/* ---- logging ------------------------------------------------------------------------------ */

/* Forwards one line to NCCL's logger under the TUNING subsystem; also handed to Java. */
HIDDEN void nccltjLog(void* logger, int level, const char* message) {
  if (logger != NULL) {
    ((ncclDebugLogger_t)logger)((ncclDebugLogLevel)level, NCCL_TUNING, __FILE__, __LINE__,
                                LOG_PREFIX "%s", message);
  } else if (level == NCCL_LOG_WARN) {
    fprintf(stderr, "NCCL WARN " LOG_PREFIX "%s\n", message);
  }
}

static void failf(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(startFailure, sizeof startFailure, fmt, ap);
  va_end(ap);
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

/* ---- JVM options --------------------------------------------------------------------------- */

/* Extra options from NCCL_TUNER_JAVA_OPTS must look like these; others (e.g. -version, -help,
 * which make the JVM exit during creation, or agents) are refused before the JVM is created. The
 * whole set is then tried in a child `java -version` first, because the JVM calls exit() on some
 * bad values (-Xms above -Xmx, two collectors) instead of returning an error. */
static int allowedOption(const char* o) {
  static const char* prefixes[] = {"-D", "-Xmx", "-Xms", "-Xss", "-Xlog", "-XX:", "-verbose:",
                                   "-Xshare:", "-Xint", "-Xcheck:jni", "-ea", "-da", "-esa",
                                   "-dsa", NULL};
  for (int i = 0; prefixes[i] != NULL; i++)
    if (strncmp(o, prefixes[i], strlen(prefixes[i])) == 0) return 1;
  return 0;
}

static int isGcChoice(const char* o) {
  size_t n = strlen(o);
  return strncmp(o, "-XX:+Use", 8) == 0 && n > 10 && strcmp(o + n - 2, "GC") == 0;
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

static void freeOptions(optionList* l) {
  for (int i = 0; i < l->n; i++) free(l->owned[i]);
  l->n = 0;
}

/* Returns the number of extra options added (>= 0), or -1 after failf(). */
static int buildOptions(optionList* l, const char* classPath, const char* aotCache) {
  const char* extra = getenv("NCCL_TUNER_JAVA_OPTS");
  char* copy = strdup(extra != NULL ? extra : "");
  char* toks[MAX_OPTIONS];
  int nTok = 0, userGc = 0, userHeap = 0;
  char* save = NULL;
  for (char* tok = strtok_r(copy, " \t\n", &save); tok != NULL; tok = strtok_r(NULL, " \t\n", &save)) {
    if (!allowedOption(tok) || strncmp(tok, "-XX:VMOptionsFile", 17) == 0 || strncmp(tok, "-XX:Flags", 9) == 0) {
      failf("NCCL_TUNER_JAVA_OPTS: option '%s' is not allowed (use -D, -Xmx, -Xms, -Xss, -Xlog, "
            "-XX:, -verbose:); the plugin changes nothing", tok);
      free(copy);
      return -1;
    }
    if (nTok == MAX_OPTIONS - 24) {
      failf("NCCL_TUNER_JAVA_OPTS: more than %d options; the plugin changes nothing", MAX_OPTIONS - 24);
      free(copy);
      return -1;
    }
    userGc |= isGcChoice(tok);
    userHeap |= strncmp(tok, "-Xmx", 4) == 0 || strncmp(tok, "-Xms", 4) == 0;
    toks[nTok++] = tok;
  }
  addOption(l, "-Djava.class.path=%s", classPath);
  addOption(l, "-Xrs");                               /* leave SIGINT/SIGTERM/SIGHUP to the host */
  addOption(l, "--enable-native-access=ALL-UNNAMED"); /* FFM upcalls/downcalls from the engine */
  if (!userGc) addOption(l, "-XX:+UseSerialGC");      /* defaults give way to the user's choice */
  if (!userHeap) {
    addOption(l, "-Xms8m");
    addOption(l, "-Xmx64m");
  }
  addOption(l, "-XX:-UsePerfData");                   /* no hsperfdata files */
  /* Start-up: compile with C1 only after 2000 calls instead of 200, so the compiler threads do not
   * compete with JVM start-up for the cores (first init with the AOT cache, 2 cores: median
   * 130 -> 107 ms). The hot path still reaches C2 after a few thousand calls. */
  addOption(l, "-XX:Tier3InvocationThreshold=2000");
  addOption(l, "-XX:Tier3MinInvocationThreshold=1000");
  addOption(l, "-XX:Tier3CompileThreshold=20000");
  /* Footprint (docs/benchmarks.md, "Start-up and footprint"): no attach listener (no thread, no
   * /tmp/.java_pid<pid> socket, no jcmd into the host), no finalizer thread. */
  addOption(l, "-XX:+DisableAttachMechanism");
  addOption(l, "--finalization=disabled");
  addOption(l, "-Dnccltj.library=%s", libraryPath);
  if (aotCache != NULL) {
    addOption(l, "-XX:AOTCache=%s", aotCache);
    addOption(l, "-Dnccltj.aotCache=%s", aotCache); /* the engine's INFO line says if it was used */
    /* No "Training replay" thread compiling the training run's methods during the start (-40 ms
     * CPU, -3 MiB). A diagnostic flag: ignoreUnrecognized below keeps a JDK without it working. */
    addOption(l, "-XX:+UnlockDiagnosticVMOptions");
    addOption(l, "-XX:-AOTReplayTraining");
    /* One compiler thread (C2; the hot path is C2-compiled as before, after 10000 calls). Only
     * with the cache: its start (classes archived, the policy's compiled form that
     * bin/nccl-tuner-aot writes) runs little Java, while parsing a large YAML policy without C1
     * takes 40-60% more CPU (10,000 rules: 1.7-2.0 -> 2.7-2.8 s). */
    addOption(l, "-XX:-TieredCompilation");
  }
  for (int i = 0; i < nTok; i++) addOption(l, "%s", toks[i]);
  free(copy);
  return nTok;
}

/* Runs `<javaHome>/bin/java <options> -version` in a child process; 1 if it exits 0. On failure
 * records the JVM's own first error line. */
static int probeOptions(const optionList* l) {
  char java[4200];
  snprintf(java, sizeof java, "%s/bin/java", javaHome);
  if (access(java, X_OK) != 0) {
    failf("JVM options are set (NCCL_TUNER_JAVA_OPTS, JAVA_TOOL_OPTIONS or _JAVA_OPTIONS) but %s is "
          "missing, so they cannot be checked; the plugin changes nothing", java);
    return 0;
  }
  char* argv[MAX_OPTIONS + 3];
  int n = 0;
  argv[n++] = java;
  for (int i = 0; i < l->n; i++)
    if (strncmp(l->opts[i].optionString, "-Djava.class.path=", 18) != 0 &&
        strcmp(l->opts[i].optionString, "-XX:-AOTReplayTraining") != 0) /* ours, may be unknown to the JDK */
      argv[n++] = l->opts[i].optionString;
  argv[n++] = "-version";
  argv[n] = NULL;
  int fds[2];
  if (pipe(fds) != 0) return 1; /* cannot check: go ahead as before */
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
  posix_spawn_file_actions_addclose(&fa, fds[0]);
  pid_t pid;
  int rc = posix_spawn(&pid, java, &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  close(fds[1]);
  char out[4096] = "";
  size_t got = 0;
  ssize_t r;
  while (got < sizeof out - 1 && (r = read(fds[0], out + got, sizeof out - 1 - got)) > 0) got += (size_t)r;
  out[got] = '\0';
  close(fds[0]);
  if (rc != 0) return 1;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return 1;
  /* The first line that is not the JVM's generic closing words. */
  char* line = out;
  for (char* p = strtok(out, "\n"); p != NULL; p = strtok(NULL, "\n")) {
    if (strncmp(p, "Picked up ", 10) != 0 &&
        strstr(p, "Could not create the Java Virtual Machine") == NULL &&
        strstr(p, "A fatal exception has occurred") == NULL && strstr(p, "Error occurred during initialization") == NULL) {
      line = p;
      break;
    }
  }
  failf("NCCL_TUNER_JAVA_OPTS, JAVA_TOOL_OPTIONS or _JAVA_OPTIONS rejected by the JVM (%s); the "
        "plugin changes nothing", line[0] ? line : "no message");
  return 0;
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
                                         (*env)->NewStringUTF(env, "io.nccltuner.shim.Bootstrap"));
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

/* pthread_atfork child handler, registered once a JVM runs in the process. A forked child has
 * only the forking thread: the JVM's own threads (VM thread, compiler, the decision-log writer)
 * stayed in the parent, and the first call that needs one of them hangs for ever (measured: a
 * child making getCollInfo calls hung). The child steps aside (the exit-time flush included) and
 * says so once. */
static void forkedChild(void) {
  forkedAfterStart = 1;
  static const char msg[] = "this process was forked after the plugin's JVM started and a JVM does "
                            "not survive fork; the plugin changes nothing in this process";
  bridge.init = NULL;
  bridge.getCollInfo = NULL;
  bridge.destroy = NULL;
  memcpy(startFailure, msg, sizeof msg);
  failureLogged = 0;
  stackWarned = 1;
  pthread_mutex_init(&logMutex, NULL);
}

static void startJvm(void) {
  Dl_info info;
  if (dladdr((void*)&nccltjLog, &info) != 0 && info.dli_fname != NULL) {
    if (realpath(info.dli_fname, libraryPath) == NULL)
      snprintf(libraryPath, sizeof libraryPath, "%s", info.dli_fname);
  }
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
    void* h = dlopen(libjvm, RTLD_NOW | RTLD_GLOBAL);
    if (h == NULL) {
      failf("cannot load %s (%s); the plugin changes nothing", libjvm, dlerror());
      return;
    }
    create_vm_fn create = (create_vm_fn)dlsym(h, "JNI_CreateJavaVM");
    if (create == NULL) {
      failf("%s is not a JVM (no JNI_CreateJavaVM); the plugin changes nothing", libjvm);
      return;
    }
    char aot[4200];
    snprintf(aot, sizeof aot, "%s/" AOT_NAME, libDir);
    optionList opts = {0};
    int extras = buildOptions(&opts, jar, isFile(aot) ? aot : NULL);
    /* The JVM also reads JAVA_TOOL_OPTIONS and _JAVA_OPTIONS from the environment, and some bad
     * values there make it exit(): they are tried in the child too. */
    const char* tool = getenv("JAVA_TOOL_OPTIONS");
    const char* under = getenv("_JAVA_OPTIONS");
    int envOpts = (tool != NULL && tool[0] != '\0') || (under != NULL && under[0] != '\0');
    if (extras < 0 || ((extras > 0 || envOpts) && !probeOptions(&opts))) {
      freeOptions(&opts);
      return;
    }
    JavaVMInitArgs args;
    args.version = JNI_VERSION_10;
    args.nOptions = opts.n;
    args.options = opts.opts;
    /* Our own -XX options that a future JDK may drop are then skipped, not fatal; the user's
     * options were already tried in a child `java -version`, which does not ignore them. */
    args.ignoreUnrecognized = JNI_TRUE;
    jint rc = create(&vm, (void**)&env, &args);
    freeOptions(&opts);
    if (rc != JNI_OK) {
      failf("JNI_CreateJavaVM failed with %d (check NCCL_TUNER_JAVA_OPTS, JAVA_TOOL_OPTIONS, _JAVA_OPTIONS); "
            "the plugin changes nothing", (int)rc);
      return;
    }
  }

  pthread_atfork(NULL, NULL, forkedChild);
  theJvm = vm;
  jclass boot = loadBootstrap(env, jar);
  if (boot == NULL) {
    describeException(env, "cannot load the engine from the jar");
  } else {
    jmethodID m = (*env)->GetStaticMethodID(env, boot, "start", "(J)I");
    if (m == NULL) {
      describeException(env, "the engine jar has no Bootstrap.start(long): wrong version");
    } else {
      bridge.abiVersion = NCCL_TUNER_JAVA_ABI_VERSION;
      bridge.log = nccltjLog;
      bridge.libraryPath = libraryPath;
      jint rc = (*env)->CallStaticIntMethod(env, boot, m, (jlong)(intptr_t)&bridge);
      if ((*env)->ExceptionCheck(env)) {
        describeException(env, "the engine failed to start");
      } else if (bridge.engineAbiVersion != NCCL_TUNER_JAVA_ABI_VERSION) {
        failf("engine jar speaks bridge ABI %d, this library %d: the jar and the library come from "
              "different versions; the plugin changes nothing",
              (int)bridge.engineAbiVersion, NCCL_TUNER_JAVA_ABI_VERSION);
      } else if (rc != 0 || bridge.init == NULL || bridge.getCollInfo == NULL || bridge.destroy == NULL) {
        failf("the engine did not start (code %d); the plugin changes nothing", (int)rc);
      }
    }
  }
  if (startFailure[0] != '\0') {
    bridge.init = NULL;
    bridge.getCollInfo = NULL;
    bridge.destroy = NULL;
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

static int flushAtExitUp(void);
static void detachThread(void* unused);

static void flushAtExit(void) {
  flushAtExitUp();
}

/* Creates the JVM on a thread with START_THREAD_STACK of stack (the JVM needs more than some
 * callers have), then registers the exit-time flush of the decision log. */
static void start(void) {
  pthread_key_create(&attachKey, detachThread);
  pthread_attr_t attr;
  pthread_t t;
  int ok = pthread_attr_init(&attr) == 0 && pthread_attr_setstacksize(&attr, START_THREAD_STACK) == 0 &&
           pthread_create(&t, &attr, startThread, NULL) == 0;
  pthread_attr_destroy(&attr);
  if (ok) {
    pthread_join(t, NULL);
  } else {
    startJvm();
  }
  if (bridge.destroy != NULL) atexit(flushAtExit);
}

/* ---- the entry points ------------------------------------------------------------------------ */

/* Whether the calling thread has stack enough for an FFM upcall; checked once per thread. */
static __thread int stackState __attribute__((tls_model("initial-exec")));

/* pthread key destructor: a thread the shim attached to the JVM detaches when it ends (not in a
 * forked child, whose JVM threads did not survive the fork). */
static void detachThread(void* unused) {
  (void)unused;
  if (!forkedAfterStart && theJvm != NULL) (*theJvm)->DetachCurrentThread(theJvm);
}

/* Attaches a calling thread to the JVM through JNI before its first upcall. FFM would attach it
 * by itself, but it registers a C++ thread_local destructor that detaches at exit(); in a child
 * forked after the JVM started that destructor waits for ever on a JVM lock held by a thread that
 * did not survive the fork (seen: a child hung in exit() in 4 runs of 15). A pthread key
 * destructor runs only when the thread itself ends, never in exit(), and is skipped in a child. */
static void attachThread(void) {
  JNIEnv* env = NULL;
  if (theJvm == NULL || (*theJvm)->GetEnv(theJvm, (void**)&env, JNI_VERSION_10) != JNI_EDETACHED) return;
  if ((*theJvm)->AttachCurrentThreadAsDaemon(theJvm, (void**)&env, NULL) == JNI_OK)
    pthread_setspecific(attachKey, (void*)1);
}

static int stackOk(void) {
  if (__builtin_expect(stackState == 0, 0)) {
    pthread_attr_t a;
    size_t size = 0;
    if (pthread_getattr_np(pthread_self(), &a) == 0) {
      pthread_attr_getstacksize(&a, &size);
      pthread_attr_destroy(&a);
    }
    stackState = (size == 0 || size >= MIN_CALLER_STACK) ? 1 : 2;
    if (stackState == 1) attachThread();
    if (stackState == 2) {
      pthread_mutex_lock(&logMutex);
      if (!stackWarned) {
        stackWarned = 1;
        char msg[256];
        snprintf(msg, sizeof msg, "a thread with %zu KiB of stack called the tuner; FFM upcalls need at "
                 "least %d KiB, so calls from such threads change nothing", size / 1024, MIN_CALLER_STACK / 1024);
        nccltjLog((void*)firstLogger, NCCL_LOG_WARN, msg);
      }
      pthread_mutex_unlock(&logMutex);
    }
  }
  return stackState == 1;
}

/* destroy(0) asks the engine to write out its decision log (see nccltj_destroy_fn). */
static int flushAtExitUp(void) {
  nccltj_destroy_fn up = bridge.destroy;
  if (up != NULL && stackOk()) up(0);
  return 0;
}

static void logFailureOnce(ncclDebugLogger_t logger) {
  pthread_mutex_lock(&logMutex);
  if (startFailure[0] != '\0' && !failureLogged) {
    failureLogged = 1;
    nccltjLog((void*)logger, NCCL_LOG_WARN, startFailure);
  }
  pthread_mutex_unlock(&logMutex);
}

static ncclResult_t tunerInit(size_t nRanks, size_t nNodes, ncclDebugLogger_t logFunction,
                              void** context) {
  if (context == NULL) return ncclSuccess;
  *context = NULL;
  if (firstLogger == NULL) firstLogger = logFunction;
  pthread_once(&startOnce, start);
  if (bridge.init == NULL) {
    logFailureOnce(logFunction);
    return ncclSuccess;
  }
  if (!stackOk()) return ncclSuccess;
  int64_t handle = 0;
  bridge.init(nRanks, nNodes, (void*)logFunction, &handle);
  *context = (void*)(intptr_t)handle;
  return ncclSuccess;
}

static ncclResult_t tunerGetCollInfo(void* context, ncclFunc_t collType, size_t nBytes,
                                     int numPipeOps, float** collCostTable, int numAlgo,
                                     int numProto, int* nChannels) {
  nccltj_get_coll_info_fn up = bridge.getCollInfo;
  if (context != NULL && up != NULL && collCostTable != NULL && nChannels != NULL && stackOk())
    up((int64_t)(intptr_t)context, (int)collType, nBytes, numPipeOps, (uintptr_t)collCostTable,
       numAlgo, numProto, (uintptr_t)nChannels);
  else if (context != NULL && up == NULL && !__atomic_load_n(&failureLogged, __ATOMIC_RELAXED))
    logFailureOnce(firstLogger); /* a forked child */
  return ncclSuccess;
}

static ncclResult_t tunerDestroy(void* context) {
  nccltj_destroy_fn up = bridge.destroy;
  if (context != NULL && up != NULL && stackOk()) up((int64_t)(intptr_t)context);
  return ncclSuccess;
}

/* The one exported symbol (NCCL src/plugin/tuner.cc looks it up by this name, 2.19+). */
__attribute__((visibility("default"))) const ncclTuner_v3_t ncclTunerPlugin_v3 = {
    .name = "nccl-tuner-java",
    .init = tunerInit,
    .getCollInfo = tunerGetCollInfo,
    .destroy = tunerDestroy,
};
