/*
 * signals.c -- signal dispositions around the JVM's start: HotSpot's suspend/resume signal moved
 * off SIGUSR2; the runtime's sigaction and signal hooked (GOT slots of libjvm, libjava, libnio),
 * so that the runtime sets only the dispositions HotSpot needs (SIGSEGV, SIGBUS, SIGFPE, SIGILL
 * and its suspend/resume signal, unless a host thread took that one during the start) and every
 * other one stays the host's throughout; the host's dispositions saved before the start and put back after it where a runtime without those slots
 * changed them; and a default-action handler for HotSpot to chain to where the host left a fault
 * at SIG_DFL.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "jvm_internal.h"

static int srSignal; /* HotSpot's suspend/resume signal in this process */

HIDDEN int nccltjSrSignal(void) {
  return srSignal;
}

HIDDEN void nccltjSetSrSignal(int sig) {
  srSignal = sig;
}

/* Above SIGSEGV and SIGBUS, below NSIG (signals_posix.cpp SR_initialize), in ASCII digits alone:
 * HotSpot 25 refuses " 64" and "+63", which strtol reads, with a warning on the host's stderr
 * (found by a hostile host); such a value is replaced by the shim's own pick, as an invalid one is. */
HIDDEN int nccltjSrValueValid(const char* v) {
  if (v[0] == '\0' || strlen(v) > 4) return 0;
  for (const char* c = v; *c != '\0'; c++)
    if (*c < '0' || *c > '9') return 0;
  long sig = strtol(v, NULL, 10);
  return sig > SIGSEGV && sig > SIGBUS && sig < NSIG;
}

/* A signal whose default action nobody relies on but a sender that means to end the process:
 * SIGUSR1, SIGUSR2 and the real-time signals. HotSpot takes any above SIGBUS, but a user's
 * _JAVA_SR_SIGNUM=13 took SIGPIPE (a write to a broken pipe no longer ended the host), 20 SIGTSTP
 * (Ctrl-Z no longer stopped it) and 17 SIGCHLD (found by a hostile host). */
static int userSignalOk(int sig) {
  return sig == SIGUSR1 || sig == SIGUSR2 || (sig >= SIGRTMIN && sig <= SIGRTMAX);
}

static struct sigaction savedActions[NSIG];
static struct sigaction jvmActions[NSIG]; /* the dispositions when the engine had started */
static int jvmActionsKnown;

/* HotSpot's suspend/resume signal: SIGUSR2 where the shim found none free (srSignal 0). */
static int jvmSrSignal(void) {
  return srSignal > 0 ? srSignal : SIGUSR2;
}

static int jvmOwns(int sig) {
  return sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL || sig == jvmSrSignal();
}

/* Whether a disposition is SIG_DFL (a plain handler field, not an SA_SIGINFO function). */
static int atDefault(const struct sigaction* a) {
  return !(a->sa_flags & SA_SIGINFO) && a->sa_handler == SIG_DFL;
}

/* Set once a host thread took HotSpot's suspend/resume signal during the start (srSigaction). */
static volatile int srLost;

/* The suspend/resume action HotSpot installed (srSigaction, where the signal was at SIG_DFL), for
 * jvmPthreadKill to tell whether a host thread replaced it after the start. */
static struct sigaction srInstalled;
static volatile int srInstalledSet;

/* The runtime sets dispositions during the start: HotSpot SIGPIPE and SIGXFSZ (handlers that
 * chain to the host's), libjava's ProcessImpl SIGCHLD (SIG_DFL), libnio's NativeThread SIGRTMAX-2
 * (its interrupt signal); put back after the start, they were the runtime's for its whole length,
 * and another host thread's raise(SIGCHLD) meanwhile never reached the host's handler (found by a
 * hostile host: 18590 of 37035 lost, SIGRTMAX-2 6962). The runtime's sigaction and signal come
 * here instead: for a signal HotSpot needs (jvmOwns) the call goes through; for any other the
 * action asked for is recorded (a later query of the runtime's reads it back, as if set) and the
 * host's disposition stays, for the life of the process. HotSpot's checks that its handlers are
 * still in place run only under -Xcheck:jni (PosixSignals::check_signal_handlers), and warn then
 * as they did when the put-back had replaced them after the start. The JVM's threads block every
 * signal but HotSpot's own (the start thread's mask), so a SIGRTMAX-2 that libnio sends one of
 * them stays pending, as it did after the put-back. */
typedef int (*sigactionFn)(int, const struct sigaction*, struct sigaction*);
typedef void (*handlerFn)(int);
static sigactionFn realSigaction;
static pthread_mutex_t askedMutex = PTHREAD_MUTEX_INITIALIZER;
static struct sigaction askedActions[NSIG]; /* guarded by askedMutex */
static int asked[NSIG];                     /* the runtime asked for askedActions[sig] */

static int hostSigaction(int sig, const struct sigaction* act, struct sigaction* old) {
  return (realSigaction != NULL ? realSigaction : sigaction)(sig, act, old);
}

static int sameAction(const struct sigaction* a, const struct sigaction* b) {
  /* SA_RESTORER (0x04000000) is glibc's own addition to any sigaction it installs. */
  return a->sa_handler == b->sa_handler && (a->sa_flags & ~0x04000000) == (b->sa_flags & ~0x04000000);
}

/* HotSpot 25's SR_initialize (signals_posix.cpp) installs its suspend/resume handler with one
 * sigaction(SR_signum, &act, NULL), asking nothing first. pickSignal chose a signal the host had
 * left at SIG_DFL, but before the JVM's start, some 20 ms earlier, and a host thread may have
 * installed its own handler on it since (found by a hostile host: SIGRTMAX's handler, installed
 * 20 ms after the first init began, lost to HotSpot's in 3 of 6 runs; a kill(SIGRTMAX) then reached
 * HotSpot's handler, which dropped it). The real sigaction returns the action it replaced, in the
 * same call: where that is not SIG_DFL, a host thread set it, and it goes back at once, if what is
 * there is still the runtime's (a host thread that changed it again meanwhile keeps its own).
 * HotSpot then has no suspend/resume handler. It sends that signal only to suspend a thread running
 * Java code for JFR's execution sampling (SuspendedThreadTask, JfrSamplerThread), which runs only
 * where a flight recording with jdk.ExecutionSample was started (-XX:StartFlightRecording with a
 * runtime that has jdk.jfr; the plugin's runtime has java.base alone); jvmPthreadKill drops those
 * sends, so a sampling attempt times out (2 ms) and gives up instead of running the host's handler
 * on a JVM thread. Said once, at INFO. */
static int srSigaction(int sig, const struct sigaction* act, struct sigaction* old) {
  struct sigaction was;
  int rc = hostSigaction(sig, act, &was);
  if (rc != 0) return rc;
  if (old != NULL) *old = was;
  if (atDefault(&was)) {
    srInstalled = *act;
    __atomic_store_n(&srInstalledSet, 1, __ATOMIC_RELEASE);
    return 0;
  }
  struct sigaction now;
  if (hostSigaction(sig, NULL, &now) == 0 && sameAction(&now, act)) hostSigaction(sig, &was, NULL);
  if (!srLost) {
    srLost = 1;
    /* Handled before the start too: SIGUSR2 where no real-time signal was free, or a
     * _JAVA_SR_SIGNUM that libjvm's getenv could not be hooked to replace. */
    const struct sigaction* before = &savedActions[sig];
    if (!atDefault(before))
      nccltjNoticef("the process handles signal %d, HotSpot's suspend/resume signal (no other was free): the host's "
                    "handler stays, and the plugin's JVM goes without (JFR's execution sampling does not work in it)",
                    sig);
    else
      nccltjNoticef("a host thread installed its own handler on signal %d, HotSpot's suspend/resume signal, while the "
                    "plugin's JVM started: the host's handler stays, and the JVM goes without (JFR's execution "
                    "sampling does not work in it)",
                    sig);
  }
  return 0;
}

static int jvmSigaction(int sig, const struct sigaction* act, struct sigaction* old) {
  if (sig > 0 && sig < NSIG && sig == jvmSrSignal() && act != NULL) return srSigaction(sig, act, old);
  if (sig <= 0 || sig >= NSIG || sig == SIGKILL || sig == SIGSTOP || jvmOwns(sig)) return hostSigaction(sig, act, old);
  struct sigaction was;
  pthread_mutex_lock(&askedMutex);
  int rc = 0;
  if (asked[sig]) was = askedActions[sig];
  else rc = hostSigaction(sig, NULL, &was);
  if (rc == 0 && act != NULL) {
    askedActions[sig] = *act;
    asked[sig] = 1;
  }
  pthread_mutex_unlock(&askedMutex);
  if (rc == 0 && old != NULL) *old = was;
  return rc;
}

/* glibc's signal(): BSD semantics (SA_RESTART, the handler stays). */
static handlerFn jvmSignal(int sig, handlerFn handler) {
  struct sigaction a, was;
  memset(&a, 0, sizeof a);
  a.sa_handler = handler;
  sigemptyset(&a.sa_mask);
  if (sig > 0 && sig < NSIG) sigaddset(&a.sa_mask, sig);
  a.sa_flags = SA_RESTART;
  if (jvmSigaction(sig, &a, &was) != 0) return SIG_ERR;
  return was.sa_handler;
}

/* The runtime's pthread_kill: HotSpot's suspend/resume signal, once the host's handler holds it
 * (srLost), is not sent; HotSpot's suspend then times out and gives up (PosixSignals::do_suspend).
 * Nor while the disposition is not the one HotSpot installed: a host thread that installs its own
 * handler after HotSpot's (after the start, or during it but after SR_initialize) replaces it
 * without the shim seeing the call, and JFR's execution sampler then ran the host's handler on the
 * JVM's threads (137 times in 4 s: GuestIT's JFR case when the host's came second, 2026-12-04).
 * Asked at each send, so a host that puts HotSpot's back gets sampling back; the sends are JFR's
 * alone, every 10-20 ms. Returns 0 as if sent: an error there is fatal to HotSpot
 * (ShouldNotReachHere). */
typedef int (*pthreadKillFn)(pthread_t, int);
static pthreadKillFn realPthreadKill;

static int jvmPthreadKill(pthread_t thread, int sig) {
  if (sig == jvmSrSignal()) {
    if (srLost) return 0;
    struct sigaction now;
    if (__atomic_load_n(&srInstalledSet, __ATOMIC_ACQUIRE) && hostSigaction(sig, NULL, &now) == 0 &&
        !sameAction(&now, &srInstalled))
      return 0;
  }
  return (realPthreadKill != NULL ? realPthreadKill : pthread_kill)(thread, sig);
}

/* The runtime's pthread_sigmask: HotSpot unblocks its suspend/resume signal on each of its threads
 * (PosixSignals::hotspot_sigmask, after SR_initialize); once the host's handler holds it (srLost),
 * it keeps the blocked state it has (blocked on the JVM's threads, which inherit the start
 * thread's mask), so that a process-directed one goes to a host thread, or stays pending for the
 * host's sigwait, as the host's other signals do. */
typedef int (*sigmaskFn)(int, const sigset_t*, sigset_t*);
static sigmaskFn realPthreadSigmask;

static int jvmPthreadSigmask(int how, const sigset_t* set, sigset_t* old) {
  sigmaskFn real = realPthreadSigmask != NULL ? realPthreadSigmask : pthread_sigmask;
  int sr = jvmSrSignal();
  if (!srLost || set == NULL || how == SIG_BLOCK) return real(how, set, old);
  sigset_t kept = *set, now;
  if (how == SIG_UNBLOCK) {
    sigdelset(&kept, sr);
  } else if (real(SIG_BLOCK, NULL, &now) == 0) {
    if (sigismember(&now, sr) == 1) sigaddset(&kept, sr);
    else sigdelset(&kept, sr);
  }
  return real(how, &kept, old);
}

HIDDEN void nccltjHookSignals(void* handle) {
  NCCLTJ_HOOK(handle, "sigaction", jvmSigaction, realSigaction);
  NCCLTJ_HOOK(handle, "pthread_kill", jvmPthreadKill, realPthreadKill);
  NCCLTJ_HOOK(handle, "pthread_sigmask", jvmPthreadSigmask, realPthreadSigmask);
  void* unused = NULL; /* jvmSignal goes through jvmSigaction */
  nccltjRewriteGot(handle, "signal", (void*)jvmSignal, &unused);
  nccltjRewriteGot(handle, "bsd_signal", (void*)jvmSignal, &unused);
}

/* HotSpot's suspend/resume signal is SIGUSR2 unless _JAVA_SR_SIGNUM names another one above
 * SIGBUS (HotSpot 25, signals_posix.cpp SR_initialize). SLURM and training frameworks use
 * SIGUSR2, so the shim picks the highest real-time signal from SIGRTMAX down to SIGRTMIN+4 that
 * the host has left at SIG_DFL; 0 (HotSpot's default) if none is free. */
static int pickSignal(void) {
  const char* user = getenv("_JAVA_SR_SIGNUM");
  if (user != NULL && nccltjSrValueValid(user)) {
    /* Only a signal the host leaves at SIG_DFL: HotSpot installs its handler on it (a hostile
     * host's _JAVA_SR_SIGNUM=15 replaced its SIGTERM handler, silently). */
    struct sigaction a;
    int u = atoi(user);
    if (sigaction(u, NULL, &a) != 0 || !atDefault(&a))
      nccltjNoticef("_JAVA_SR_SIGNUM=%d names a signal the process handles; the plugin's JVM uses another", u);
    else if (userSignalOk(u)) return u;
    else
      nccltjNoticef("_JAVA_SR_SIGNUM=%d names a signal with a default action the process may rely on (only SIGUSR1, "
                    "SIGUSR2 and real-time signals are taken); the plugin's JVM uses another",
                    u);
  }
  /* First one the calling thread does not block: a host that blocks a signal at SIG_DFL means to
   * take it itself with sigwait, sigtimedwait or a signalfd, and a process-directed one would reach
   * a JVM thread (HotSpot unblocks its suspend/resume signal in its threads), whose handler drops it
   * (found by a hostile host: 32 of 200 SIGRTMAX it queued to itself lost). The first init's thread
   * stands for the host's: NCCL's threads inherit the mask of the thread that made them. Where the
   * thread blocks them all (a host that blocks every signal there), the highest free one, as
   * before. */
  sigset_t blocked;
  if (pthread_sigmask(SIG_BLOCK, NULL, &blocked) != 0) sigemptyset(&blocked);
  int blockedFree = 0;
  for (int sig = SIGRTMAX; sig >= SIGRTMIN + 4; sig--) {
    struct sigaction a;
    if (sigaction(sig, NULL, &a) != 0 || !atDefault(&a)) continue;
    if (!sigismember(&blocked, sig)) return sig;
    if (blockedFree == 0) blockedFree = sig;
  }
  return blockedFree;
}

HIDDEN void nccltjSaveSignals(void) {
  for (int sig = 1; sig < NSIG; sig++) sigaction(sig, NULL, &savedActions[sig]);
}

/* The runtime's value of each disposition: what it asked for where the hook took the call. */
HIDDEN void nccltjNoteJvmSignals(void) {
  pthread_mutex_lock(&askedMutex);
  for (int sig = 1; sig < NSIG; sig++) {
    if (asked[sig]) jvmActions[sig] = askedActions[sig];
    else sigaction(sig, NULL, &jvmActions[sig]);
  }
  pthread_mutex_unlock(&askedMutex);
  jvmActionsKnown = 1;
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
  const char* home = nccltjJavaHome();
  size_t hn = strlen(home);
  return hn > 0 && strncmp(f, home, hn) == 0 && f[hn] == '/';
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

HIDDEN void nccltjInstallDefaultActions(void) {
  for (size_t i = 0; i < sizeof faultSignals / sizeof faultSignals[0]; i++) {
    int sig = faultSignals[i];
    const struct sigaction* was = &savedActions[sig];
    if (!atDefault(was)) continue;
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
HIDDEN void nccltjRestoreSignals(void) {
  for (int sig = 1; sig < NSIG; sig++) {
    if (sig == SIGKILL || sig == SIGSTOP) continue;
    struct sigaction now;
    if (sigaction(sig, NULL, &now) != 0) continue;
    if (defaultActionInstalled[sig]) {
      if ((now.sa_flags & SA_SIGINFO) && now.sa_sigaction == defaultAction) sigaction(sig, &savedActions[sig], NULL);
      continue;
    }
    if (jvmOwns(sig) || sameAction(&now, &savedActions[sig])) continue;
    /* The hook kept the runtime's request for it off the process: what is there is the host's. */
    pthread_mutex_lock(&askedMutex);
    int kept = asked[sig];
    pthread_mutex_unlock(&askedMutex);
    if (kept) continue;
    /* The JVM's: a handler in the runtime's code, or SIG_DFL/SIG_IGN as the JVM left it (libjava's
     * ProcessImpl init sets SIGCHLD to SIG_DFL). A host function installed meanwhile stays. */
    int dflOrIgn = !(now.sa_flags & SA_SIGINFO) && (now.sa_handler == SIG_DFL || now.sa_handler == SIG_IGN);
    if (jvmHandler(&now) || (dflOrIgn && jvmActionsKnown && sameAction(&now, &jvmActions[sig])))
      sigaction(sig, &savedActions[sig], NULL);
  }
}

HIDDEN void nccltjPickSrSignal(void) {
  srSignal = pickSignal();
}
