/*
 * jvm_internal.h -- what the files of the JVM's start-up share among themselves (plugin.c and
 * profiler.c see only shim_internal.h). One file per concern:
 *   log.c            NCCL's logger, the deferred-log ring, the start failure and notice texts
 *   hotspot_output.c HotSpot's output and exits during creation (the JavaVMInitArgs hooks)
 *   find_runtime.c   finding a Java runtime, a libjvm already loaded, and the engine jar
 *   jvm_options.c    the JVM's options (a table, one comment per row) and NCCL_TUNER_JAVA_OPTS
 *   got.c            the runtime's libraries loaded by full path, their GOT slots rewritten
 *   env_hide.c       the environment the JVM sees (libjvm's getenv hooked through its GOT)
 *   signals.c        signal dispositions around the start, HotSpot's suspend/resume signal
 *   locale.c         the locale the JVM's start sets, put back
 *   host_fds.c       file descriptors 0-2 held during the start
 *   fp_env.c         the floating-point environment around the start and each attach
 *   proc_state.c     process-wide settings HotSpot's creation writes (/proc/self/coredump_filter)
 *   start.c          the start-up thread, JVM creation or joining, Bootstrap.start, fork, attach
 *   cloexec.c        close-on-exec for the plugin's own descriptors (the runtime's opens, sockets,
 *                    pipes, ... hooked)
 *   stack_guard.c    a calling thread's stack pages put back after HotSpot's detach left them
 *                    PROT_NONE
 * Everything here is cold-path (once per process, or per init and destroy) and hidden.
 */
#ifndef NCCLTJ_JVM_INTERNAL_H_
#define NCCLTJ_JVM_INTERNAL_H_

#include <jni.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#include "shim_internal.h"

#define MIN_JAVA_FEATURE 25

/* ---- log.c ---------------------------------------------------------------------------------- */

/* Sets nccltjStartFailure: why this process steps aside (logged once as a WARN). */
HIDDEN void nccltjFailf(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
/* Appends to nccltjNotice ("; "-separated), logged at INFO by the next init. */
HIDDEN void nccltjNoticef(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
/* In a forked child: the log's mutexes, which a thread of the parent may have held. */
HIDDEN void nccltjLogInForkedChild(void);

/* ---- hotspot_output.c ------------------------------------------------------------------------ */

/* The JavaVMInitArgs hooks ("vfprintf", "exit", "abort"), rows of jvm_options.c's table. */
HIDDEN jint JNICALL nccltjVfprintfHook(FILE* stream, const char* fmt, va_list ap);
HIDDEN void JNICALL nccltjExitHook(jint code);
HIDDEN void JNICALL nccltjAbortHook(void);
/* Around JNI_CreateJavaVM on the start thread: the exit and abort hooks end that thread only
 * between Begin and End; HotSpot's lines meanwhile are kept for nccltjCreationError. */
HIDDEN void nccltjCreationBegin(void);
HIDDEN void nccltjCreationEnd(void);
/* Whether HotSpot called exit() or abort() during creation (the start thread then ended). */
HIDDEN int nccltjCreationAborted(void);
/* The first line HotSpot printed during creation that is not its generic closing words. */
HIDDEN const char* nccltjCreationError(void);
HIDDEN void nccltjOutputInForkedChild(void);

/* The runtime's fflush of the host's stdout, stderr or every stream does nothing (hotspot_output.c). */
HIDDEN void nccltjHookOutput(void* handle);

/* ---- find_runtime.c -------------------------------------------------------------------------- */

HIDDEN int nccltjIsFile(const char* path);
/* The directory part of path ("." if none). */
HIDDEN void nccltjDirOf(const char* path, char* out, size_t n);
/* The engine jar: NCCL_TUNER_JAVA_CLASSPATH, else nccl-tuner-java.jar in libDir. 0 after failf. */
HIDDEN int nccltjFindJar(const char* libDir, char* jar, size_t n);
/* The libjvm to load: NCCL_TUNER_JAVA_HOME, a runtime beside the library, JAVA_HOME; or the one
 * the process already loaded where there is one (two libjvms in one process crash). 0 after failf. */
HIDDEN int nccltjFindLibjvm(const char* libDir, char* libjvm, size_t n);
/* The runtime whose libjvm was loaded, and the engine jar ("" until known). */
HIDDEN const char* nccltjJavaHome(void);
HIDDEN const char* nccltjEngineJar(void);

/* ---- jvm_options.c --------------------------------------------------------------------------- */

#define MAX_USER_OPTIONS 48 /* from NCCL_TUNER_JAVA_OPTS */
#define OWN_OPTIONS 48      /* jvm_options.c's rows, hooks included (38 today) */
#define MAX_OPTIONS (MAX_USER_OPTIONS + OWN_OPTIONS)

typedef struct {
  JavaVMOption opts[MAX_OPTIONS];
  char* owned[MAX_OPTIONS];
  int n;
} optionList;

/* The JVM's options, NCCL_TUNER_JAVA_OPTS's among them. aotCache NULL: none. 0, or -1 after failf. */
HIDDEN int nccltjBuildOptions(optionList* l, const char* classPath, const char* aotCache, const char* libraryPath);
HIDDEN void nccltjFreeOptions(optionList* l);
/* -agentlib, -agentpath, -javaagent, -Xrun, -Xdebug. */
HIDDEN int nccltjIsAgentOption(const char* o);

/* ---- got.c ----------------------------------------------------------------------------------- */

/* Points every GOT slot of `handle` that binds `name` (JUMP_SLOT or GLOB_DAT) at `to`, the page
 * made writable for the store where full RELRO made it read-only; the old target goes to *from
 * if *from is NULL. Returns the number of slots found. */
HIDDEN int nccltjRewriteGot(void* handle, const char* name, void* to, void** from);
/* nccltjRewriteGot of `name` to `hook`; `real` (a function pointer) takes the old target, the
 * first time one is found. */
#define NCCLTJ_HOOK(handle, name, hook, real) \
  do { \
    void* old_ = NULL; \
    nccltjRewriteGot((handle), (name), (void*)(hook), &old_); \
    if (old_ != NULL && (real) == NULL) (real) = (__typeof__(real))old_; \
  } while (0)
/* Before JNI_CreateJavaVM: loads the runtime's lib/libjava.so, libnet.so, libnio.so, libzip.so
 * and libjimage.so (those it has) beside `libjvm` by full path and hooks them and libjvm. */
HIDDEN void nccltjHookRuntime(void* libjvmHandle, const char* libjvm);
/* Every hook below in one library: nccltjHookDescriptors, nccltjHookSignals, nccltjHookLocale,
 * nccltjHookOutput. */
HIDDEN void nccltjHookLibrary(void* handle);

/* ---- env_hide.c ------------------------------------------------------------------------------ */

/* Hides JAVA_TOOL_OPTIONS and _JAVA_OPTIONS from libjvm and gives it the shim's _JAVA_SR_SIGNUM;
 * notes the env options (one WARN for agents among them, else one INFO). 0 after failf. */
HIDDEN int nccltjHideEnvironmentOptions(void* libjvmHandle);

/* ---- signals.c ------------------------------------------------------------------------------- */

/* Saves every disposition, picks HotSpot's suspend/resume signal and installs the default-action
 * handlers for the faults the host left at SIG_DFL: before the JVM is created. */
HIDDEN void nccltjSaveSignals(void);
HIDDEN void nccltjPickSrSignal(void);
HIDDEN void nccltjInstallDefaultActions(void);
/* On the start thread once the engine started (or creation gave up): what the JVM left. */
HIDDEN void nccltjNoteJvmSignals(void);
/* After the start: every disposition the JVM changed and does not need goes back. */
HIDDEN void nccltjRestoreSignals(void);
/* The runtime's sigaction and signal: for any signal but SIGSEGV, SIGBUS, SIGFPE, SIGILL and
 * HotSpot's suspend/resume signal, the action asked for is recorded and the host's stays; the
 * suspend/resume handler goes in, but where it replaced one a host thread installed since the
 * pick, that one goes back (one INFO line) and the runtime's pthread_kill of the signal is
 * dropped from then on. */
HIDDEN void nccltjHookSignals(void* handle);
/* HotSpot's suspend/resume signal in this process (0: HotSpot's default). */
HIDDEN int nccltjSrSignal(void);
HIDDEN void nccltjSetSrSignal(int sig);
/* A _JAVA_SR_SIGNUM value HotSpot 25 takes without a warning on stderr. */
HIDDEN int nccltjSrValueValid(const char* v);

/* ---- locale.c -------------------------------------------------------------------------------- */

typedef struct {
  char* saved;    /* the host's locale before the start (NULL if unknown) */
  char* expected; /* the one the JVM's setlocale(LC_ALL, "") will set (NULL: use the snapshot) */
} nccltjLocale;

HIDDEN void nccltjLocaleSave(nccltjLocale* l);
/* Right after the JVM's start set the locale (also from the exit hook). */
HIDDEN void nccltjNoteJvmLocale(void);
HIDDEN void nccltjLocaleRestore(nccltjLocale* l);
/* The runtime's setlocale: a setting call sets a locale of the calling thread only (uselocale),
 * never the process's, and a query on that thread names it. */
HIDDEN void nccltjHookLocale(void* handle);
/* At the end of a thread the runtime's setlocale gave a locale of its own (the start thread). */
HIDDEN void nccltjLocaleThreadEnd(void);

/* ---- cloexec.c ------------------------------------------------------------------------------- */

/* The runtime's open, open64, openat, openat64 (O_CLOEXEC added), fopen, fopen64 ("e"), socket,
 * socketpair (SOCK_CLOEXEC), eventfd, epoll_create1 (their CLOEXEC flag), accept, pipe (not
 * libjava's), epoll_create, inotify_init, dup, mkstemp, mkstemp64 (their close-on-exec sibling). */
HIDDEN void nccltjHookDescriptors(void* handle);

/* ---- host_fds.c ------------------------------------------------------------------------------ */

HIDDEN void nccltjHoldLowFds(void);
HIDDEN void nccltjReleaseLowFds(void);

/* ---- proc_state.c ---------------------------------------------------------------------------- */

/* /proc/self/coredump_filter: the host's value, read on the calling thread before the start. */
HIDDEN void nccltjProcStateSave(void);
/* The JVM's value, read on the start thread right after JNI_CreateJavaVM. */
HIDDEN void nccltjProcStateNoteJvm(void);
/* The host's value back, where the file still holds the JVM's. */
HIDDEN void nccltjProcStateRestore(void);

/* ---- fp_env.c -------------------------------------------------------------------------------- */

typedef struct {
  unsigned char x87[28];
  unsigned int mxcsr;
} nccltjFpEnv;

HIDDEN void nccltjFpSave(nccltjFpEnv* e);
HIDDEN void nccltjFpRestore(const nccltjFpEnv* e);
/* The default environment: x87 control word 0x37f, no x87 flags, MXCSR 0x1f80. */
HIDDEN void nccltjFpDefault(void);

#endif /* NCCLTJ_JVM_INTERNAL_H_ */
