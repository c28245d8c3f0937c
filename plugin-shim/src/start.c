/*
 * start.c -- the JVM's start-up, once per process from the first init (plugin.c serialises it):
 * creating the JVM on a thread of its own (or joining one the process already runs) and the one
 * JNI call, io.nccltuner.ffm.Bootstrap.start, that fills in the bridge; a forked child stepping
 * aside; attaching a host thread. The other concerns of the start are in the files that
 * jvm_internal.h lists.
 *
 * The host is someone else's house (docs/dev/reliability.md, "A perfect guest"). Around JVM creation
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
 *     src/hotspot/os/posix/signals_posix.cpp) and hooks the runtime's libc calls that would change
 *     the process (got.c): its sigaction sets only the dispositions HotSpot needs (SIGSEGV,
 *     SIGBUS, SIGFPE, SIGILL and its own suspend/resume signal, unless a host thread installed a
 *     handler on that one during the start: the host's goes back), its setlocale(LC_ALL, "") sets
 *     a locale of the start thread only, its opens, sockets and pipes are close-on-exec from the
 *     start; where a
 *     runtime has no such slot, the dispositions and the locale are put back once the engine
 *     started.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <jni.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jvm_internal.h"

#define AOT_NAME "nccl-tuner-java.aot"
#define BOOTSTRAP_CLASS "io/nccltuner/ffm/Bootstrap"
/* The JVM is created on a thread of its own with this much stack, whatever the caller has. */
#define START_THREAD_STACK (8 * 1024 * 1024)

typedef jint (*create_vm_fn)(JavaVM**, void**, void*);
typedef jint (*created_vms_fn)(JavaVM**, jsize, jsize*);

HIDDEN nccltj_bridge_t nccltjBridge;
HIDDEN JavaVM* nccltjJvm;
HIDDEN pthread_key_t nccltjAttachKey;
HIDDEN volatile int nccltjForkedAfterStart;
static char libraryPath[4096];

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
  jobject cls =
    (*env)->CallObjectMethod(env, loader, loadClass, (*env)->NewStringUTF(env, "io.nccltuner.ffm.Bootstrap"));
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
  nccltjFailf("%s%s; the plugin changes nothing", what, detail);
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
           "plugin changes nothing in this process",
           starting ? "while" : "after");
  nccltjFailureLogged = 0;
  nccltjLogInForkedChild();
  nccltjOutputInForkedChild();
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
    FILE* f = fopen("/proc/self/statm", "re");
    if (f != NULL) {
      unsigned long pages = 0;
      if (fscanf(f, "%lu", &pages) == 1) used = (unsigned long long)pages * (unsigned long long)sysconf(_SC_PAGESIZE);
      fclose(f);
    }
    if ((unsigned long long)as.rlim_cur < used + MIN_FREE_ADDRESS_SPACE) {
      nccltjFailf("the address-space limit (ulimit -v) is %llu MiB and the process uses %llu MiB: the JVM needs %llu "
                  "MiB more (HotSpot reserves its heap, code cache and class space at start and ends the process when "
                  "it cannot); the plugin changes nothing",
                  (unsigned long long)as.rlim_cur >> 20, used >> 20, MIN_FREE_ADDRESS_SPACE >> 20);
      return 0;
    }
  }
  int fds[MIN_FREE_FDS];
  int n = 0;
  while (n < MIN_FREE_FDS && (fds[n] = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0) n++;
  for (int i = 0; i < n; i++) close(fds[i]);
  if (n < MIN_FREE_FDS) {
    nccltjFailf("only %d file descriptors are free (ulimit -n); the JVM needs at least %d to start (HotSpot aborts the "
                "process when an early open fails); the plugin changes nothing",
                n, MIN_FREE_FDS);
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
    nccltjFailf("cannot resolve the real path of %s (%s): HotSpot finds its runtime through it (readlink denied by a "
                "sandbox?) and would exit the process; the plugin changes nothing",
                libjvm, strerror(errno));
    return 0;
  }
  char server[4096], lib[4096], modules[4200];
  nccltjDirOf(real, server, sizeof server);
  nccltjDirOf(server, lib, sizeof lib);
  snprintf(modules, sizeof modules, "%s/modules", lib);
  int fd = open(modules, O_RDONLY | O_CLOEXEC);
  struct stat st;
  int ok = fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  int why = errno;
  if (fd >= 0) close(fd);
  if (!ok) {
    nccltjFailf("the Java runtime of %s has no readable lib/modules (%s): an incomplete runtime, with which HotSpot "
                "would exit the process; the plugin changes nothing",
                real, fd < 0 ? strerror(why) : "not a regular file");
    return 0;
  }
  cpu_set_t cpus;
  if (sched_getaffinity(0, sizeof cpus, &cpus) != 0 && errno != EINVAL) {
    nccltjFailf(
      "sched_getaffinity fails in this process (%s; a seccomp sandbox?): HotSpot would print on stderr and give "
      "up; the plugin changes nothing",
      strerror(errno));
    return 0;
  }
  return 1;
}

/* Creates the JVM through libjvm at `libjvm`; 0 after nccltjFailf(). */
static int createJvm(const char* libjvm, const char* libDir, const char* jar, JavaVM** vm, JNIEnv** env) {
  if (!resourcesOk() || !runtimeOk(libjvm)) return 0;
  void* h = dlopen(libjvm, RTLD_NOW | RTLD_GLOBAL);
  if (h == NULL) {
    nccltjFailf("cannot load %s (%s); the plugin changes nothing", libjvm, dlerror());
    return 0;
  }
  create_vm_fn create = (create_vm_fn)dlsym(h, "JNI_CreateJavaVM");
  if (create == NULL) {
    nccltjFailf("%s is not a JVM (no JNI_CreateJavaVM); the plugin changes nothing", libjvm);
    return 0;
  }
  char aot[4200];
  snprintf(aot, sizeof aot, "%s/" AOT_NAME, libDir);
  optionList opts = {0};
  if (nccltjBuildOptions(&opts, jar, nccltjIsFile(aot) ? aot : NULL, libraryPath) < 0) {
    nccltjFreeOptions(&opts);
    return 0;
  }
  JavaVMInitArgs args;
  args.version = JNI_VERSION_10;
  args.nOptions = opts.n;
  args.options = opts.opts;
  args.ignoreUnrecognized = JNI_FALSE;
  if (!nccltjHideEnvironmentOptions(h)) {
    nccltjFreeOptions(&opts);
    return 0;
  }
  /* The runtime's open, fopen, socket (and its other descriptor-making calls), sigaction, signal
   * and setlocale through the shim's hooks, in every library of the runtime that calls them,
   * before any of them runs (got.c). */
  nccltjHookRuntime(h, libjvm);
  nccltjCreationBegin();
  /* Should HotSpot give up, the exit/abort hook ends this thread here: nccltjStart reads
   * nccltjCreationAborted() after the join. */
  jint rc = create(vm, (void**)env, &args);
  nccltjNoteJvmLocale();
  nccltjProcStateNoteJvm();
  nccltjCreationEnd();
  nccltjFreeOptions(&opts);
  if (rc != JNI_OK) {
    nccltjFailf("NCCL_TUNER_JAVA_OPTS or the JVM refused to start (JNI_CreateJavaVM %d: %s); the plugin "
                "changes nothing",
                (int)rc, nccltjCreationError());
    return 0;
  }
  return 1;
}

/* Runs on the start thread. */
static void startJvm(void) {
  char libDir[4096];
  nccltjDirOf(libraryPath, libDir, sizeof libDir);

  char jar[4200];
  if (!nccltjFindJar(libDir, jar, sizeof jar)) return;

  JavaVM* vm = NULL;
  JNIEnv* env = NULL;
  /* Join a JVM the process already runs (for example a host that embeds Java itself). */
  created_vms_fn getCreated = (created_vms_fn)dlsym(RTLD_DEFAULT, "JNI_GetCreatedJavaVMs");
  jsize count = 0;
  if (getCreated != NULL && getCreated(&vm, 1, &count) == JNI_OK && count > 0) {
    if ((*vm)->AttachCurrentThread(vm, (void**)&env, NULL) != JNI_OK) {
      nccltjFailf("cannot attach to the process's existing JVM; the plugin changes nothing");
      return;
    }
  } else {
    char libjvm[4200];
    if (!nccltjFindLibjvm(libDir, libjvm, sizeof libjvm)) return;
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
      nccltjBridge.libraryPath = libraryPath;
      jint rc = (*env)->CallStaticIntMethod(env, boot, m, (jlong)(intptr_t)&nccltjBridge);
      if ((*env)->ExceptionCheck(env)) {
        describeException(env, "the engine failed to start");
      } else if (nccltjBridge.engineAbiVersion != NCCL_TUNER_JAVA_ABI_VERSION) {
        nccltjFailf("engine jar speaks bridge ABI %d, this library %d: the jar and the library come from "
                    "different versions; the plugin changes nothing",
                    (int)nccltjBridge.engineAbiVersion, NCCL_TUNER_JAVA_ABI_VERSION);
      } else if (rc == NCCLTJ_START_ANOTHER_COPY) {
        nccltjFailf("another copy of the plugin (another libnccl-tuner-java.so) already serves this process's "
                    "JVM; this copy (%s) changes nothing",
                    libraryPath);
      } else if (rc != NCCLTJ_START_OK || nccltjBridge.control == NULL || nccltjBridge.getCollInfo == NULL) {
        nccltjFailf("the engine did not start (code %d); the plugin changes nothing", (int)rc);
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

/* After the JVM let go of the start thread (its DetachCurrentThread, or a creation that ended the
 * thread): the stack's low end as it was, before glibc caches the stack for the host's next thread
 * (stack_guard.c). */
static void startThreadEnds(void* unused) {
  (void)unused;
  nccltjStackGuardRestore();
}

static void* startThread(void* unused) {
  (void)unused;
  uintptr_t lo, hi;
  nccltjThreadStack(&lo, &hi);
  nccltjStackGuardBefore(lo, hi);
  pthread_cleanup_push(startThreadEnds, NULL);
  startJvm();
  pthread_cleanup_pop(1);
  nccltjNoteJvmSignals();
  nccltjLocaleThreadEnd();
  return NULL;
}

HIDDEN void nccltjStart(void) {
  Dl_info info;
  if (dladdr((void*)&nccltjLog, &info) != 0 && info.dli_fname != NULL) {
    if (realpath(info.dli_fname, libraryPath) == NULL) snprintf(libraryPath, sizeof libraryPath, "%s", info.dli_fname);
    /* Pin: NCCL 2.22+ dlcloses the tuner when its last communicator is destroyed and dlopens it
     * again for the next (src/plugin/tuner.cc ncclTunerPluginUnload, src/plugin/plugin_open.cc).
     * The JVM, the engine's upcall stubs (which point at nccltjLog) and the pthread key destructor
     * outlive any one mapping, so this one stays mapped; the next dlopen returns it, statics and all. */
    void* self = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE);
    if (self == NULL) nccltjNoticef("could not pin %s in memory (%s)", libraryPath, dlerror());
    /* Loaded by dlmopen into a link-map namespace of its own: glibc crashes the process (SIGSEGV in
     * add_to_global_resize) when libjvm is opened RTLD_GLOBAL there, and a JVM needs its libraries
     * global (found by a hostile host). This process steps aside before anything starts. */
    Lmid_t lmid = LM_ID_BASE;
    if (self != NULL && dlinfo(self, RTLD_DI_LMID, &lmid) == 0 && lmid != LM_ID_BASE) {
      nccltjFailf("%s was loaded into a link-map namespace of its own (dlmopen), where a JVM cannot start; load it "
                  "with dlopen (as NCCL does); the plugin changes nothing",
                  libraryPath);
      return;
    }
  }
  pthread_key_create(&nccltjAttachKey, nccltjDetachThread);

  /* Everything the JVM's start may change in the host, saved on the calling thread. */
  nccltjLocale locale;
  nccltjLocaleSave(&locale);
  nccltjSaveSignals();
  nccltjPickSrSignal();
  nccltjInstallDefaultActions();
  nccltjHoldLowFds();
  nccltjFpEnv fp;
  nccltjFpSave(&fp);
  nccltjProcStateSave();

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
  nccltjFpDefault(); /* the start thread inherits it */
  if (err == 0) err = pthread_create(&t, &attr, startThread, NULL);
  nccltjFpRestore(&fp);
  pthread_sigmask(SIG_SETMASK, &callerMask, NULL);
  pthread_attr_destroy(&attr);
  if (err == 0) {
    pthread_join(t, NULL);
  } else {
    nccltjFailf("cannot create a thread to start the JVM (%s): the process is at its thread or memory limit "
                "(pids cgroup, ulimit -u, ulimit -v); the plugin changes nothing",
                strerror(err));
  }
  if (nccltjCreationAborted()) {
    nccltjCreationEnd();
    nccltjFailf("the JVM gave up during creation (HotSpot exit or abort: %s); out of threads or memory "
                "(pids cgroup, ulimit -u, ulimit -v) or a bad NCCL_TUNER_JAVA_OPTS value; the plugin changes nothing",
                nccltjCreationError());
    nccltjBridge.control = NULL;
    nccltjBridge.getCollInfo = NULL;
  }
  nccltjRestoreSignals();
  nccltjProcStateRestore();
  nccltjReleaseLowFds();
  nccltjFpRestore(&fp);
  nccltjLocaleRestore(&locale);
  if (nccltjBridge.control != NULL) {
    atexit(nccltjFlushAtExit);
    nccltjCloseOnExecOwnFiles();
  }
}

HIDDEN void nccltjAttachCurrentThread(uintptr_t stackLow, uintptr_t stackHigh) {
  JNIEnv* env = NULL;
  if (nccltjJvm == NULL || (*nccltjJvm)->GetEnv(nccltjJvm, (void**)&env, JNI_VERSION_10) != JNI_EDETACHED) return;
  nccltjStackGuardBefore(stackLow, stackHigh);
  sigset_t before;
  pthread_sigmask(SIG_SETMASK, NULL, &before);
  nccltjFpEnv fp;
  nccltjFpSave(&fp);
  nccltjFpDefault();
  if ((*nccltjJvm)->AttachCurrentThreadAsDaemon(nccltjJvm, (void**)&env, NULL) == JNI_OK)
    pthread_setspecific(nccltjAttachKey, (void*)1);
  nccltjFpRestore(&fp);
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
