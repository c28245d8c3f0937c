/*
 * signals.c -- signal dispositions around the JVM's start: HotSpot's suspend/resume signal moved
 * off SIGUSR2, the host's dispositions saved before the start and put back after it (all but
 * those HotSpot needs: SIGSEGV, SIGBUS, SIGFPE, SIGILL and its suspend/resume signal), and a
 * default-action handler for HotSpot to chain to where the host left a fault at SIG_DFL.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
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

/* Above SIGSEGV and SIGBUS, below NSIG (signals_posix.cpp SR_initialize). */
HIDDEN int nccltjSrValueValid(const char* v) {
  char* end = NULL;
  long sig = strtol(v, &end, 10);
  return end != v && *end == '\0' && sig > SIGSEGV && sig > SIGBUS && sig < NSIG;
}

static struct sigaction savedActions[NSIG];
static struct sigaction jvmActions[NSIG]; /* the dispositions when the engine had started */
static int jvmActionsKnown;

static int jvmOwns(int sig) {
  return sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL || sig == srSignal;
}

/* HotSpot's suspend/resume signal is SIGUSR2 unless _JAVA_SR_SIGNUM names another one above
 * SIGBUS (HotSpot 25, signals_posix.cpp SR_initialize). SLURM and training frameworks use
 * SIGUSR2, so the shim picks the highest real-time signal from SIGRTMAX down to SIGRTMIN+4 that
 * the host has left at SIG_DFL; 0 (HotSpot's default) if none is free. */
static int pickSignal(void) {
  const char* user = getenv("_JAVA_SR_SIGNUM");
  if (user != NULL && nccltjSrValueValid(user)) return atoi(user);
  for (int sig = SIGRTMAX; sig >= SIGRTMIN + 4; sig--) {
    struct sigaction a;
    if (sigaction(sig, NULL, &a) == 0 && !(a.sa_flags & SA_SIGINFO) && a.sa_handler == SIG_DFL) return sig;
  }
  return 0;
}

HIDDEN void nccltjSaveSignals(void) {
  for (int sig = 1; sig < NSIG; sig++) sigaction(sig, NULL, &savedActions[sig]);
}

HIDDEN void nccltjNoteJvmSignals(void) {
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
