/*
 * guest_host.c -- hostile hosts for "A perfect guest" (issue 10, docs/dev/reliability.md cases 1-11):
 * each command is a process that loads a v3 tuner the way NCCL does (tests/include/test_host.h),
 * does to it what real training processes do (reload it, fork, limit it, own signals and the
 * locale, ignore children, redirect output), and checks that nothing in the host changed but the
 * cost tables. The Java drivers (io.nccltuner.reliability.it.GuestIT) run one command per
 * process with a timeout and check the exit status and the printed facts.
 *
 *   guest-host --plugin P --trace T [--log FILE] COMMAND [ARGS]
 *
 * Every replay makes the trace's get rows (tests/traces/README.md) on one communicator of the
 * trace's shape and counts the calls whose cost table or nChannels came back changed.
 *
 * Commands (the facts each prints, as key=value on a "guest-host:" line):
 *   basic                 init, replay, destroy: changed=N
 *   reload N              N cycles of dlopen, init, replay on a new thread, destroy, dlclose;
 *                         the thread exits after the dlclose. Fails if a cycle decides unlike the
 *                         first. Prints rss_kib/threads after cycle 10 (rss1000_kib after 1,000) and at the end, and whether
 *                         pthread_key_create still works.
 *   two-copies P2         a second copy of the library at path P2 beside P: changed=/changed2=
 *   fork-during-init US   a thread starts the first init, the main thread forks US microseconds
 *                         later; the child (20 s alarm) replays and exits; the parent reports how
 *                         the child ended, then replays itself
 *   stack KIB             replays on a thread whose calls have about KIB KiB of stack free
 *   signals               host handlers for USR1, USR2, CHLD, TERM, INT, HUP, SIGPIPE ignored,
 *                         a blocked-signals mask on the calling thread: dispositions and mask
 *                         compared before and after; each signal raised and its handler counted;
 *                         a process-directed SIGUSR2 must reach the host's sigwait;
 *                         GUEST_HOST_TAKE_RT=1: host handlers on SIGRTMIN+4..SIGRTMAX too;
 *                         usr2_unblocked_threads= threads that do not block SIGUSR2 after the init
 *   locale                host locale before and after init (setlocale, strtod of "0.125")
 *   capture DIR           fds 1 and 2 redirected to DIR/fd1, DIR/fd2 before loading the plugin
 *                         (the facts go to the original stdout)
 *   rlimit-as MIB         RLIMIT_AS set to the current size + MIB MiB before the first init
 *   preload-libjvm PATH   PATH dlopened RTLD_GLOBAL (no JVM created) before the plugin
 *   sigchld ign|reaper    SIGCHLD ignored, or a thread reaping every child (waitpid(-1))
 *   init-rc               prints init's return code (rc=) and replays if it is ncclSuccess
 *   footprint             init, replay: the process's thread names (thread_names=, from
 *                         /proc/self/task/TID/comm, sorted, blanks as _) and whether HotSpot's
 *                         /tmp/hsperfdata_USER/PID exists (hsperfdata=yes|no)
 *   setenv-race           a host thread calls setenv (of existing names) in a loop during the first init; afterwards
 *                         JAVA_TOOL_OPTIONS and _JAVA_OPTIONS are as before and _JAVA_SR_SIGNUM
 *                         is not set
 *   closed-stdio DIR      fds 0-2 closed before the first init (a daemon): afterwards 0-2 must still
 *                         be closed (open_low=), write(2) fails with EBADF; then the host dup2s
 *                         /dev/null onto 0 and DIR/log onto 1 and 2 and opens a second communicator
 *   fenv traps|flags      traps: FE_ALL_EXCEPT trapped (feenableexcept) before the first init;
 *                         flags: sticky flags cleared, rounding FE_UPWARD; both: the calling
 *                         thread's FP environment (traps, flags, rounding) compared after
 *   jvm-after HOME        after the first init the host loads HOME's libjvm and makes a JVM of its
 *                         own (JPype, JNI embedding): create_rc=, created=, and whether the JVM it
 *                         finds through JNI_GetCreatedJavaVMs runs Java (find_class=)
 *   during-init           while the first init runs on a thread, the main thread installs handlers
 *                         (TERM, INT, USR1, HUP, CHLD, PIPE) once HotSpot's own are in, changes
 *                         LC_NUMERIC after them, unsetenv(JAVA_TOOL_OPTIONS): all must stay the
 *                         host's
 *   setenv-storm N        a host thread adds 512 names, then overwrites them in a loop while N
 *                         threads make the first init at once (see storm_setenv)
 *   faulthandler DIR      after one communicator, a handler like CPython's faulthandler (installed
 *                         over HotSpot's, restores it and re-raises), then the host's own SIGSEGV:
 *                         the process must die by SIGSEGV (fds 1 and 2 go to DIR/fd1, DIR/fd2)
 *   thread-locale         the init thread's own uselocale() locale is the same object after the
 *                         first init
 *   nonascii-policy DIR utf8|latin1  the policy copied to a file whose name has a non-ASCII byte
 *                         sequence (U+00FC in UTF-8, or the Latin-1 byte 0xFC), LANG/LC_ALL unset
 *   sigwindow             host handlers on SIGCHLD, SIGPIPE, SIGXFSZ, SIGRTMAX-2; while the first init
 *                         runs, a host thread raise()s them in a loop (lost= raises whose handler
 *                         did not run) and another polls their dispositions (polls_changed=)
 *   sr-window US          a host thread installs its handler on SIGRTMAX (the shim's pick for HotSpot's
 *                         suspend/resume signal, free here) US microseconds after libjvm is loaded,
 *                         while the first init creates the JVM (HotSpot installs its own later):
 *                         host_first= whether the host's came first (it replaced SIG_DFL, not
 *                         HotSpot's), during_init=, kept= whether the handler is the host's after the
 *                         init, hits= runs of it up to one kill(getpid(), SIGRTMAX) after it;
 *                         GUEST_HOST_BUSY_S=N: N seconds of replays (replays=) on a second
 *                         communicator before the kill (hits_before_kill=)
 *   locale-window         while the first init runs, a host thread prints "%.1f" of 0.5 and reads
 *                         setlocale(LC_ALL, NULL) (comma=, name_changed=); afterwards the JVM's
 *                         file.encoding, sun.jnu.encoding, native.encoding, user.language and
 *                         user.country, read through JNI
 *   spawn-window          while the first init runs, two host threads posix_spawn children that count
 *                         their descriptors above 2 (leaked= children with more than one spawned
 *                         before the init)
 *   runtime-slots         after the first init, every descriptor-making libc call of the runtime's
 *                         libjvm, libjava, libnet, libnio, libzip and libjimage, made through that
 *                         library's own GOT slot as its code makes it: LIB.CALL=cloexec|inheritable
 *                         (the descriptor it made) or failed; slots= how many were found
 *   process-state         a soft RLIMIT_NOFILE below the hard one and SIGRTMAX-1, SIGRTMAX blocked (taken
 *                         with sigtimedwait) before the first init: nofile_soft_before/_after=,
 *                         coredump_filter_before/_after= (/proc/self/coredump_filter), blocked_rt_handled=
 *                         (blocked real-time signals given a handler), rt_received= (of 50 SIGRTMAX queued)
 *   stdio-buffers DIR     fds 1 and 2 on DIR/fd1, DIR/fd2, stdout and stderr fully buffered with bytes of the
 *                         host's in them across the first init: fd1_bytes=, fd2_bytes= (before the host's
 *                         own fflush), fd1_after_flush=, fd2_after_flush=
 *   dlmopen               the plugin loaded with dlmopen(LM_ID_NEWLM): rc=, changed=
 *   logger-exit           a thread's init with a logger that calls pthread_exit at the first WARN, then
 *                         another init on the main thread: ended_in_logger=, second_rc= (alarm 30 s)
 *   logger-exit-notice    the same, the logger ending its thread at the shim's INFO notice naming
 *                         _JAVA_SR_SIGNUM (set it to a signal the plugin does not take)
 *   lines-in-call         init, replay, destroy with a logger that notes the engine's lines:
 *                         profile_line_at_init=, summary_before_destroy=, summary_at_destroy=
 *   logger-exit-engine    the same with the engine: the logger ends its thread at the engine's first INFO
 *                         line (the policy and profile), which the shim logs after the upcall returned;
 *                         the second init must return and decide: second_changed=
 *   logger-jvm exit|jmp|reenter  with NCCL_TUNER_JAVA_OPTS=-Xlog:class+load (HotSpot prints on the thread
 *                         that loads a class, inside an upcall): a first communicator opened and closed,
 *                         then a thread opens a second and replays it with a logger that, at the first
 *                         "JVM: " line logged on that thread, ends the thread (exit), siglongjmps out of
 *                         the call (jmp) or opens and closes a third communicator from inside (reenter);
 *                         then the main thread opens another and replays it (alarm 30 s): acted=,
 *                         second_rc=, second_changed=
 *   stack-after-thread    a thread on a glibc stack (1 MiB) and one on a stack the host mapped itself
 *                         (1 MiB, its lowest page made PROT_NONE by the host) each init, replay and
 *                         destroy, and end; then the KiB of each stack that are not read-write:
 *                         changed_sys=, protected_kib_sys= (0), changed_own=, protected_kib_own= (4:
 *                         the host's own page); a later thread on the same glibc stack recursing all
 *                         but 12 KiB of it: deep_ok=; threads of 8 MiB and 1 MiB that never call the
 *                         plugin, and the first thread when it began, KiB of their stacks not
 *                         read-write: plain_default_kib=, plain_1mib_kib=, sys_at_start_kib= (0)
 * GUEST_HOST_FDLOG=FILE (spawn-window): each child appends "fd target" for every descriptor it counted.
 * GUEST_HOST_DENY=name,... (capture): a seccomp filter makes those system calls fail with EPERM
 * before the first init.
 * Every command ends with "guest-host: done warn=W" (W: WARN lines the plugin logged) and exits
 * 0; a check that fails prints "guest-host: FAIL ..." and exits 3; usage errors exit 2.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fenv.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <fcntl.h>
#include <link.h>
#include <locale.h>
#include <pthread.h>
#include <pwd.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <ucontext.h>
#include <setjmp.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "nccl_tuner_abi.h"
#include "test_host.h"

static const char* plugin;
static const char* tracePath;
static FILE* facts;  /* where the "guest-host:" lines go */
static FILE* logOut; /* where logger lines go */
static atomic_ulong warns;
static atomic_int failures;
static th_get_row* rows;
static size_t nRows;
static size_t nRanks = 2, nNodes = 2;

TH_DIE_FUNCTION(usage_exit, "guest-host: ", "\n", TH_EXIT_USAGE)

static void fact(const char* fmt, ...) {
  TH_VPRINT(facts, "guest-host: ", "\n", fmt);
  fflush(facts);
}

static void fail(const char* fmt, ...) {
  atomic_fetch_add(&failures, 1);
  TH_VPRINT(facts, "guest-host: FAIL ", "\n", fmt);
  fflush(facts);
}

static void logLine(ncclDebugLogLevel level, const char* fmt, va_list ap) {
  if (level == NCCL_LOG_WARN) atomic_fetch_add(&warns, 1);
  if (fmt == NULL) return;
  char msg[2048];
  th_format_log(msg, sizeof msg, fmt, ap);
  fprintf(logOut, "guest-host: NCCL %s %s\n", th_level_name(level), msg);
  fflush(logOut);
}

/* logLine, and the line's text in msg (empty without a format): for loggers that act on a line. */
static void logLineAndText(char* msg, size_t size, ncclDebugLogLevel level, const char* fmt, va_list ap) {
  va_list copy;
  va_copy(copy, ap);
  logLine(level, fmt, copy);
  va_end(copy);
  msg[0] = '\0';
  if (fmt != NULL) th_format_log(msg, size, fmt, ap);
}

static void logger(ncclDebugLogLevel level, unsigned long flags, const char* file, int line, const char* fmt, ...) {
  (void)flags;
  (void)file;
  (void)line;
  va_list ap;
  va_start(ap, fmt);
  logLine(level, fmt, ap);
  va_end(ap);
}

/* ---- trace and replay ------------------------------------------------------------------- */

static void read_trace(void) {
  FILE* f = fopen(tracePath, "r");
  if (!f) usage_exit("cannot open %s: %s", tracePath, strerror(errno));
  char* line = NULL;
  size_t cap = 0, capRows = 0;
  while (getline(&line, &cap, f) != -1) {
    if (strncmp(line, "get,", 4) != 0) continue;
    char* field[10 + TH_MAX_TABLE + 1];
    int nf = th_split_csv(line, field, 10 + TH_MAX_TABLE + 1);
    char why[256];
    if (nRows == capRows) {
      capRows = capRows ? 2 * capRows : 64;
      rows = realloc(rows, capRows * sizeof *rows);
      if (!rows) usage_exit("out of memory");
    }
    if (nf < 0 || th_parse_get_row(field, nf, &rows[nRows], why, sizeof why) != NULL)
      usage_exit("%s: bad get row (%s)", tracePath, nf < 0 ? "too many fields" : why);
    long long r = 0, n = 0;
    if (nRows == 0 && th_parse_ll(field[2], 1, 1 << 20, &r) && th_parse_ll(field[3], 1, 1 << 20, &n)) {
      nRanks = (size_t)r;
      nNodes = (size_t)n;
    }
    nRows++;
  }
  free(line);
  fclose(f);
  if (nRows == 0) usage_exit("%s: no get rows", tracePath);
}

/* Replays every get row on ctx; returns the calls whose table or nChannels changed (-1 if a call
 * returned an error). */
static int replay(const ncclTuner_v3_t* t, void* ctx) {
  int changed = 0;
  for (size_t i = 0; i < nRows; i++) {
    const th_get_row* r = &rows[i];
    float table[TH_MAX_TABLE];
    int n = r->numAlgo * r->numProto;
    memcpy(table, r->costs, (size_t)n * sizeof(float));
    int nChannels = 0;
    ncclResult_t rc = t->getCollInfo(ctx, (ncclFunc_t)r->coll, r->nBytes, r->numPipeOps, (float**)table, r->numAlgo,
                                     r->numProto, &nChannels);
    if (rc != ncclSuccess) return -1;
    if (nChannels != 0 || memcmp(table, r->costs, (size_t)n * sizeof(float)) != 0) changed++;
  }
  return changed;
}

static const ncclTuner_v3_t* load(const char* path, void** lib) {
  char why[512];
  const ncclTuner_v3_t* t = th_load_tuner(path, lib, why, sizeof why);
  if (!th_tuner_complete(t)) usage_exit("cannot load a v3 tuner from %s: %s", path, t ? "NULL entry point" : why);
  return t;
}

/* init, replay, destroy on one new communicator; returns changed (or -1). */
static int one_comm(const ncclTuner_v3_t* t) {
  void* ctx = NULL;
  ncclResult_t rc = t->init(nRanks, nNodes, logger, &ctx);
  if (rc != ncclSuccess) fail("init returned %d", rc);
  int changed = replay(t, ctx);
  if (changed < 0) fail("getCollInfo returned an error");
  t->destroy(ctx);
  return changed;
}

static void proc_status(long* rssKib, long* threads) {
  FILE* f = fopen("/proc/self/status", "r");
  char line[256];
  *rssKib = *threads = -1;
  while (f && fgets(line, sizeof line, f)) {
    if (strncmp(line, "VmRSS:", 6) == 0) *rssKib = atol(line + 6);
    if (strncmp(line, "Threads:", 8) == 0) *threads = atol(line + 8);
  }
  if (f) fclose(f);
}

/* The process's threads by name (/proc/self/task/TID/comm), comma-separated, spaces as '_': what
 * a failed "no thread added" check names (GuestIT once saw 11 threads where cycle 10 had 10). */
static void thread_names(char* out, size_t n) {
  out[0] = '\0';
  DIR* d = opendir("/proc/self/task");
  struct dirent* e;
  while (d && (e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    char path[64], name[32] = "";
    snprintf(path, sizeof path, "/proc/self/task/%.20s/comm", e->d_name);
    FILE* f = fopen(path, "r");
    if (f && fgets(name, sizeof name, f)) name[strcspn(name, "\n")] = '\0';
    if (f) fclose(f);
    for (char* c = name; *c; c++)
      if (*c == ' ' || *c == ',') *c = '_';
    size_t used = strlen(out);
    snprintf(out + used, n - used, "%s%s", used ? "," : "", name);
  }
  if (d) closedir(d);
}

/* The threads of the process (/proc/self/task/TID/status SigBlk) that do not block sig. */
static int threads_unblocking(int sig) {
  int n = 0;
  DIR* d = opendir("/proc/self/task");
  struct dirent* e;
  while (d && (e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/self/task/%.20s/status", e->d_name);
    FILE* f = fopen(path, "r");
    while (f && fgets(line, sizeof line, f))
      if (strncmp(line, "SigBlk:", 7) == 0 && !((strtoull(line + 7, NULL, 16) >> (sig - 1)) & 1)) n++;
    if (f) fclose(f);
  }
  if (d) closedir(d);
  return n;
}

/* ---- case 1: reloads -------------------------------------------------------------------- */

typedef struct {
  const ncclTuner_v3_t* t;
  void* ctx;
  int changed;
  pthread_mutex_t m;
  pthread_cond_t c;
  bool closed;
} cycle_t;

static void* cycle_thread(void* arg) {
  cycle_t* cy = arg;
  cy->changed = replay(cy->t, cy->ctx);
  pthread_mutex_lock(&cy->m);
  pthread_cond_signal(&cy->c);
  while (!cy->closed) pthread_cond_wait(&cy->c, &cy->m); /* exits after the dlclose */
  pthread_mutex_unlock(&cy->m);
  return NULL;
}

static void cmd_reload(long cycles) {
  int first = -1;
  long rss10 = 0, thr10 = 0, rss1000 = 0, thr1000 = 0, rss1000Cycle = 0;
  for (long k = 0; k < cycles; k++) {
    void* lib = NULL;
    const ncclTuner_v3_t* t = load(plugin, &lib);
    cycle_t cy = {.t = t, .changed = -2, .m = PTHREAD_MUTEX_INITIALIZER, .c = PTHREAD_COND_INITIALIZER};
    if (t->init(nRanks, nNodes, logger, &cy.ctx) != ncclSuccess) fail("cycle %ld: init failed", k);
    pthread_t th;
    if (pthread_create(&th, NULL, cycle_thread, &cy) != 0) {
      fail("pthread_create failed in cycle %ld", k);
      break;
    }
    pthread_mutex_lock(&cy.m);
    while (cy.changed == -2) pthread_cond_wait(&cy.c, &cy.m);
    pthread_mutex_unlock(&cy.m);
    t->destroy(cy.ctx);
    dlclose(lib);
    pthread_mutex_lock(&cy.m);
    cy.closed = true;
    pthread_cond_signal(&cy.c);
    pthread_mutex_unlock(&cy.m);
    pthread_join(th, NULL);
    if (k == 0) first = cy.changed;
    if (cy.changed != first) {
      fail("cycle %ld changed %d calls, the first %d", k, cy.changed, first);
      break;
    }
    if (k == 9) proc_status(&rss10, &thr10);
    if (k == 999) {
      proc_status(&rss1000, &thr1000);
      rss1000Cycle = k + 1;
    }
  }
  long rss, thr;
  proc_status(&rss, &thr);
  /* A thread the count catches while it starts (not yet named, so it shows the process's name: two
   * fresh make test runs saw an eleventh "guest-host" thread where cycle 10 had 10; 20 runs alone
   * did not) is not one the reloads added: wait up to 2 s for the count to come back. A thread that
   * stays is still counted. */
  int settleMs = 0;
  for (; thr != thr10 && settleMs < 2000; settleMs += 100) {
    usleep(100 * 1000);
    proc_status(&rss, &thr);
  }
  pthread_key_t key;
  int keyRc = pthread_key_create(&key, NULL);
  char names[1024];
  thread_names(names, sizeof names);
  fact("cycles=%ld changed_each=%d rss10_kib=%ld rss1000_kib=%ld rss1000_cycle=%ld rss_kib=%ld threads10=%ld "
       "threads=%ld settle_ms=%d "
       "key_create=%s thread_names=%s",
       cycles, first, rss10, rss1000, rss1000Cycle, rss, thr10, thr, settleMs, keyRc == 0 ? "ok" : strerror(keyRc),
       names);
}

static void cmd_two_copies(const char* second) {
  void *lib1 = NULL, *lib2 = NULL;
  const ncclTuner_v3_t* t1 = load(plugin, &lib1);
  int c1 = one_comm(t1);
  const ncclTuner_v3_t* t2 = load(second, &lib2);
  if (lib1 == lib2) fail("the two paths loaded one library");
  int c2 = one_comm(t2);
  int c1again = one_comm(t1);
  fact("changed=%d changed2=%d changed_again=%d", c1, c2, c1again);
}

/* ---- case 7: fork during the first init -------------------------------------------------- */

static const ncclTuner_v3_t* forkTuner;
static void* init_thread(void* arg) {
  int* changed = arg;
  *changed = one_comm(forkTuner);
  return NULL;
}

static void cmd_fork_during_init(long delayUs) {
  void* lib = NULL;
  forkTuner = load(plugin, &lib);
  pthread_t th;
  int parentFirst = -2;
  pthread_create(&th, NULL, init_thread, &parentFirst);
  usleep((useconds_t)delayUs);
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    alarm(20);
    int c = one_comm(forkTuner);
    fact("child changed=%d warn=%lu", c, atomic_load(&warns));
    fflush(NULL);
    exit(atomic_load(&failures) ? TH_EXIT_MISBEHAVIOUR : TH_EXIT_OK);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  pthread_join(th, NULL);
  int again = one_comm(forkTuner);
  fact("child_exit=%d child_signal=%d parent_changed=%d parent_again=%d", WIFEXITED(status) ? WEXITSTATUS(status) : -1,
       WIFSIGNALED(status) ? WTERMSIG(status) : 0, parentFirst, again);
}

/* ---- case 5: free stack at the call ------------------------------------------------------ */

static const ncclTuner_v3_t* stackTuner;
static void* stackCtx;
static long stackFreeKib;

static __attribute__((noinline)) int call_with_free(size_t targetFree) {
  pthread_attr_t a;
  void* low = NULL;
  size_t size = 0;
  pthread_getattr_np(pthread_self(), &a);
  pthread_attr_getstack(&a, &low, &size);
  pthread_attr_destroy(&a);
  char here;
  size_t freeNow = (size_t)(&here - (char*)low);
  size_t burn = freeNow > targetFree + 4096 ? freeNow - targetFree : 0;
  volatile char* pad = alloca(burn);
  if (burn) pad[0] = 0;
  int c = replay(stackTuner, stackCtx);
  if (burn) pad[burn - 1] = 1;
  return c;
}

static void* stack_thread(void* arg) {
  int* out = arg;
  out[0] = call_with_free((size_t)stackFreeKib * 1024);
  out[1] = call_with_free((size_t)stackFreeKib * 1024); /* a second round: said once per thread */
  return NULL;
}

static void cmd_stack(long freeKib) {
  void* lib = NULL;
  stackTuner = load(plugin, &lib);
  if (stackTuner->init(nRanks, nNodes, logger, &stackCtx) != ncclSuccess) fail("init failed");
  stackFreeKib = freeKib;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 8 << 20);
  int out[2] = {-2, -2};
  pthread_t th;
  pthread_create(&th, &attr, stack_thread, out);
  pthread_join(th, NULL);
  int normal = replay(stackTuner, stackCtx);
  stackTuner->destroy(stackCtx);
  fact("free_kib=%ld changed=%d changed_second=%d changed_main=%d", freeKib, out[0], out[1], normal);
}

/* ---- case 9: signals --------------------------------------------------------------------- */

static volatile sig_atomic_t ran[NSIG];
static void on_signal(int sig) {
  ran[sig]++;
}

/* Installs handler h for each of the n signals as a host does: SA_RESTART, an empty sa_mask. */
static void host_handlers(const int* sigs, size_t n, void (*h)(int)) {
  for (size_t i = 0; i < n; i++) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = h;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(sigs[i], &sa, NULL);
  }
}

static void cmd_signals(void) {
  static const int mine[] = {SIGUSR1, SIGUSR2, SIGCHLD, SIGTERM, SIGINT, SIGHUP};
  host_handlers(mine, sizeof mine / sizeof mine[0], on_signal);
  signal(SIGPIPE, SIG_IGN);
  /* GUEST_HOST_TAKE_RT=1: every real-time signal the shim would pick is the host's too, so
   * HotSpot's suspend/resume signal stays SIGUSR2, which the host handles. */
  const char* takeRt = getenv("GUEST_HOST_TAKE_RT");
  if (takeRt != NULL && strcmp(takeRt, "1") == 0)
    for (int s = SIGRTMIN + 4; s <= SIGRTMAX; s++) host_handlers(&s, 1, on_signal);
  /* The calling thread blocks every signal but the synchronous faults, like a host that sigwaits. */
  sigset_t block, maskBefore, maskAfter;
  sigfillset(&block);
  sigdelset(&block, SIGSEGV);
  sigdelset(&block, SIGBUS);
  sigdelset(&block, SIGFPE);
  sigdelset(&block, SIGILL);
  pthread_sigmask(SIG_SETMASK, &block, NULL);
  struct sigaction before[NSIG], after[NSIG];
  bool known[NSIG];
  for (int s = 1; s < NSIG; s++) known[s] = sigaction(s, NULL, &before[s]) == 0;
  pthread_sigmask(SIG_SETMASK, NULL, &maskBefore);

  void* lib = NULL;
  const ncclTuner_v3_t* t = load(plugin, &lib);
  int changed = one_comm(t);

  pthread_sigmask(SIG_SETMASK, NULL, &maskAfter);
  for (int s = 1; s < NSIG; s++)
    if (known[s]) sigaction(s, NULL, &after[s]);
  int changedDispositions = 0, jvmRt = 0;
  char list[512] = "";
  for (int s = 1; s < NSIG; s++) {
    if (!known[s]) continue; /* glibc's own (SIGCANCEL, SIGSETXID) */
    /* SA_RESTORER (0x04000000) is glibc's own addition to every sigaction it installs. */
    if (before[s].sa_handler == after[s].sa_handler &&
        (before[s].sa_flags & ~0x04000000) == (after[s].sa_flags & ~0x04000000))
      continue;
    if (s == SIGSEGV || s == SIGBUS || s == SIGFPE || s == SIGILL) continue; /* HotSpot's, chained */
    if (s >= SIGRTMIN + 4 && before[s].sa_handler == SIG_DFL && jvmRt == 0) {
      jvmRt = s;
      continue;
    }
    changedDispositions++;
    size_t l = strlen(list);
    snprintf(list + l, sizeof list - l, "%s%d", l ? "," : "", s);
  }
  int maskDiff = 0;
  for (int s = 1; s < NSIG; s++)
    if (sigismember(&maskBefore, s) != sigismember(&maskAfter, s)) maskDiff++;
  int usr2Unblocked = threads_unblocking(SIGUSR2); /* the calling thread blocks it: the JVM's threads */
  /* A process-directed SIGUSR2 while the host blocks it: it must stay pending for the host's
   * sigwait, not be taken by a JVM thread. */
  kill(getpid(), SIGUSR2);
  sigset_t one;
  sigemptyset(&one);
  sigaddset(&one, SIGUSR2);
  struct timespec ts = {2, 0};
  int got = sigtimedwait(&one, NULL, &ts);
  /* Then each host handler, unblocked, runs when its signal arrives. */
  pthread_sigmask(SIG_SETMASK, &maskBefore, NULL);
  sigset_t none;
  sigemptyset(&none);
  pthread_sigmask(SIG_SETMASK, &none, NULL);
  int handled = 0;
  for (size_t i = 0; i < sizeof mine / sizeof mine[0]; i++) {
    int s = mine[i];
    int was = ran[s];
    kill(getpid(), s);
    for (int w = 0; w < 200 && ran[s] == was; w++) usleep(1000);
    if (ran[s] > was) handled++;
    else fail("the host's handler for signal %d did not run", s);
  }
  fact("changed=%d dispositions_changed=%d [%s] jvm_signal=%d mask_changed=%d sigwait_usr2=%s handlers_ran=%d "
       "usr2_unblocked_threads=%d",
       changed, changedDispositions, list, jvmRt, maskDiff, got == SIGUSR2 ? "ok" : "lost", handled, usr2Unblocked);
}

/* ---- case 8: locale ---------------------------------------------------------------------- */

static void cmd_locale(void) {
  char before[256];
  snprintf(before, sizeof before, "%s", setlocale(LC_ALL, NULL));
  void* lib = NULL;
  const ncclTuner_v3_t* t = load(plugin, &lib);
  int changed = one_comm(t);
  const char* after = setlocale(LC_ALL, NULL);
  double d = strtod("0.125", NULL);
  char printed[32];
  snprintf(printed, sizeof printed, "%.3f", 0.125);
  fact("changed=%d locale_before=%s locale_after=%s strtod=%g printf=%s", changed, before, after, d, printed);
}

static void deny_syscalls(const char* names);
/* ---- case 10: stdout and stderr ---------------------------------------------------------- */

/* fds 1 and 2 on DIR/fd1 and DIR/fd2 (paths into p1, p2, 4096 bytes each); the facts and the log
 * lines go on the original stdout. */
static void redirect_stdio(const char* dir, char* p1, char* p2) {
  snprintf(p1, 4096, "%s/fd1", dir);
  snprintf(p2, 4096, "%s/fd2", dir);
  int fd1 = open(p1, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  int fd2 = open(p2, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd1 < 0 || fd2 < 0) usage_exit("cannot create %s or %s", p1, p2);
  fflush(NULL);
  int keep = dup(1);
  facts = fdopen(keep, "w");
  if (logOut == stdout) logOut = facts;
  dup2(fd1, 1);
  dup2(fd2, 2);
  close(fd1);
  close(fd2);
}

static void cmd_capture(const char* dir) {
  char p1[4096], p2[4096];
  redirect_stdio(dir, p1, p2);
  void* lib = NULL;
  const ncclTuner_v3_t* t = load(plugin, &lib);
  const char* deny = getenv("GUEST_HOST_DENY");
  if (deny != NULL && deny[0] != '\0') deny_syscalls(deny);
  int changed = one_comm(t);
  struct stat s1, s2;
  stat(p1, &s1);
  stat(p2, &s2);
  fact("changed=%d fd1_bytes=%lld fd2_bytes=%lld", changed, (long long)s1.st_size, (long long)s2.st_size);
}

/* ---- case 3: address-space limit ---------------------------------------------------------- */

static void cmd_rlimit_as(long mib) {
  void* lib = NULL;
  const ncclTuner_v3_t* t = load(plugin, &lib);
  long vm = 0;
  FILE* f = fopen("/proc/self/status", "r");
  char line[256];
  while (f && fgets(line, sizeof line, f))
    if (strncmp(line, "VmSize:", 7) == 0) vm = atol(line + 7);
  if (f) fclose(f);
  struct rlimit rl;
  getrlimit(RLIMIT_AS, &rl);
  rl.rlim_cur = (rlim_t)(vm + mib * 1024) * 1024;
  if (setrlimit(RLIMIT_AS, &rl) != 0) usage_exit("setrlimit: %s", strerror(errno));
  int changed = one_comm(t);
  /* The host still works: it can allocate and start a thread of its own. */
  void* p = malloc(1 << 20);
  fact("changed=%d vmsize_kib=%ld limit_mib=%ld host_malloc=%s", changed, vm, mib, p ? "ok" : "failed");
  free(p);
}

/* ---- case 2: children ---------------------------------------------------------------------- */

static void* reaper(void* arg) {
  (void)arg;
  for (;;) {
    if (waitpid(-1, NULL, 0) < 0) usleep(1000);
  }
  return NULL;
}

static void cmd_sigchld(const char* mode) {
  if (strcmp(mode, "ign") == 0) {
    signal(SIGCHLD, SIG_IGN);
  } else {
    pthread_t th;
    pthread_create(&th, NULL, reaper, NULL);
    pthread_detach(th);
  }
  struct sigaction before, after;
  sigaction(SIGCHLD, NULL, &before);
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  void* lib = NULL;
  const ncclTuner_v3_t* t = load(plugin, &lib);
  int changed = one_comm(t);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  sigaction(SIGCHLD, NULL, &after);
  double ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
  fact("changed=%d init_ms=%.0f sigchld_kept=%s", changed, ms, before.sa_handler == after.sa_handler ? "yes" : "no");
}

static atomic_int stopSetenv;
static int lastWritten[64];
static void* setenv_loop(void* arg) {
  (void)arg;
  char name[32], value[16];
  for (int i = 0; !atomic_load(&stopSetenv) || i < 64; i++) {
    snprintf(name, sizeof name, "GUEST_HOST_VAR_%d", i % 64);
    snprintf(value, sizeof value, "%d", i);
    setenv(name, value, 1);
    lastWritten[i % 64] = i;
    if (i % 64 == 63) usleep(100);
  }
  return NULL;
}

static void cmd_setenv_race(void) {
  const char* jto = getenv("JAVA_TOOL_OPTIONS");
  const char* jo = getenv("_JAVA_OPTIONS");
  char jtoBefore[512], joBefore[512];
  snprintf(jtoBefore, sizeof jtoBefore, "%s", jto ? jto : "(unset)");
  snprintf(joBefore, sizeof joBefore, "%s", jo ? jo : "(unset)");
  /* The names exist before the thread starts, so its setenv calls replace values in place: a
   * setenv of a new name beside getenv on another thread is a race in glibc itself. */
  for (int k = 0; k < 64; k++) {
    char name[32];
    snprintf(name, sizeof name, "GUEST_HOST_VAR_%d", k);
    setenv(name, "-1", 1);
  }
  pthread_t th;
  pthread_create(&th, NULL, setenv_loop, NULL);
  void* lib = NULL;
  int changed = one_comm(load(plugin, &lib));
  atomic_store(&stopSetenv, 1);
  pthread_join(th, NULL);
  jto = getenv("JAVA_TOOL_OPTIONS");
  jo = getenv("_JAVA_OPTIONS");
  int same = strcmp(jtoBefore, jto ? jto : "(unset)") == 0 && strcmp(joBefore, jo ? jo : "(unset)") == 0;
  int lost = 0;
  for (int k = 0; k < 64; k++) {
    char name[32];
    snprintf(name, sizeof name, "GUEST_HOST_VAR_%d", k);
    const char* v = getenv(name);
    if (!v || atoi(v) != lastWritten[k]) lost++;
  }
  fact("changed=%d env_options_kept=%s sr_signum=%s host_writes_lost=%d", changed, same ? "yes" : "no",
       getenv("_JAVA_SR_SIGNUM") ? getenv("_JAVA_SR_SIGNUM") : "unset", lost);
}

/* ---- found by the hostile-host review: coroutines, pthread_cancel, file descriptors ----------- */

/* getCollInfo from a makecontext/swapcontext coroutine with its own mmap'd stack of `kib` KiB
 * (after a normal first init): must change nothing and return ncclSuccess, not abort. */
static const ncclTuner_v3_t* coT;
static void* coCtx;
static int coChanged = -2;
static ucontext_t coMain, coCtxU;
static void coroutine_body(void) {
  coChanged = replay(coT, coCtx);
}

static void cmd_coroutine(long kib) {
  void* lib = NULL;
  coT = load(plugin, &lib);
  if (coT->init(nRanks, nNodes, logger, &coCtx) != ncclSuccess) fail("init failed");
  size_t size = (size_t)kib * 1024;
  void* stack = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (stack == MAP_FAILED) usage_exit("mmap: %s", strerror(errno));
  getcontext(&coCtxU);
  coCtxU.uc_stack.ss_sp = stack;
  coCtxU.uc_stack.ss_size = size;
  coCtxU.uc_link = &coMain;
  makecontext(&coCtxU, coroutine_body, 0);
  swapcontext(&coMain, &coCtxU);
  if (coChanged < 0) fail("getCollInfo from a coroutine returned an error");
  fact("coroutine_changed=%d thread_changed=%d", coChanged, replay(coT, coCtx));
  coT->destroy(coCtx);
}

/* Threads looping on the tuner are cancelled (deferred) at random moments, `trials` times; then
 * the process must still decide as before. */
static const ncclTuner_v3_t* caT;
static void* caCtx;
static void* cancel_loop(void* unused) {
  (void)unused;
  for (;;) {
    replay(caT, caCtx);
    pthread_testcancel();
  }
  return NULL;
}

/* The same with communicators opened and closed in the loop (init/destroy upcalls allocate, log
 * and take locks: where the hostile host's cancellations crashed the process). */
static void* cancel_comm_loop(void* unused) {
  (void)unused;
  for (;;) {
    void* c = NULL;
    caT->init(nRanks, nNodes, logger, &c);
    pthread_testcancel();
    replay(caT, c);
    caT->destroy(c);
    pthread_testcancel();
  }
  return NULL;
}

static void cmd_cancel(long trials) {
  void* lib = NULL;
  caT = load(plugin, &lib);
  if (caT->init(nRanks, nNodes, logger, &caCtx) != ncclSuccess) fail("init failed");
  int first = replay(caT, caCtx);
  for (long k = 0; k < trials; k++) {
    pthread_t th[3];
    for (int i = 0; i < 3; i++) pthread_create(&th[i], NULL, i == 1 ? cancel_comm_loop : cancel_loop, NULL);
    usleep((useconds_t)(2000 + (k * 7919) % 30000));
    for (int i = 0; i < 3; i++) pthread_cancel(th[i]);
    for (int i = 0; i < 3; i++) pthread_join(th[i], NULL);
  }
  int after = replay(caT, caCtx);
  if (after != first) fail("after the cancellations %d calls changed, before %d", after, first);
  fact("cancel_trials=%ld changed=%d", trials, after);
  caT->destroy(caCtx);
}

/* Leaves only `free` file descriptors free (RLIMIT_NOFILE stays), then the first init. */
static void cmd_fds(long freeFds) {
  void* lib = NULL;
  const ncclTuner_v3_t* t = load(plugin, &lib); /* mapped before the descriptors are used up */
  struct rlimit rl;
  getrlimit(RLIMIT_NOFILE, &rl);
  rl.rlim_cur = 64; /* a small table, filled but for `freeFds` */
  if (setrlimit(RLIMIT_NOFILE, &rl) != 0) usage_exit("setrlimit: %s", strerror(errno));
  int held[64];
  int n = 0;
  while (n < 64 && (held[n] = open("/dev/null", O_RDONLY)) >= 0) n++;
  for (long k = 0; k < freeFds && n > 0; k++) close(held[--n]);
  void* ctx = NULL;
  ncclResult_t rc = t->init(nRanks, nNodes, logger, &ctx);
  fact("fds_free=%ld init_rc=%d changed=%d", freeFds, rc, rc == ncclSuccess ? replay(t, ctx) : -1);
}

/* ---- found by the second hostile-host review: a crash of the host's own, inherited fds ------ */

/* The end of host-crash and faulthandler: fds 1 and 2 (flushed) pointed at the files DIR/fd1 and
 * DIR/fd2, which the test reads, then the host's own bug, a write through a bad pointer. */
static void crash_into(const char* dir) {
  char p1[4096], p2[4096];
  snprintf(p1, sizeof p1, "%s/fd1", dir);
  snprintf(p2, sizeof p2, "%s/fd2", dir);
  fflush(NULL);
  int fd1 = open(p1, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  int fd2 = open(p2, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd1 < 0 || fd2 < 0) usage_exit("cannot create %s or %s", p1, p2);
  dup2(fd1, 1);
  dup2(fd2, 2);
  volatile uintptr_t bad = 16;
  *(volatile int*)bad = 1;
}

/* After one communicator, the host's own code dereferences a bad pointer: the process must end
 * by a signal with nothing written to fds 1 and 2 (HotSpot's error reporter is off). Output goes
 * to the files DIR/fd1 and DIR/fd2; the test reads them and the exit status. */
static void cmd_host_crash(const char* dir) {
  void* lib = NULL;
  const ncclTuner_v3_t* t = load(plugin, &lib);
  fact("changed=%d", one_comm(t));
  crash_into(dir);
}

/* After init and destroy, no descriptor the plugin opened survives an exec: prints how many
 * descriptors lack close-on-exec before the plugin and after it. */
static int open_without_cloexec(void) {
  int n = 0;
  for (int fd = 3; fd < 1024; fd++) {
    int fl = fcntl(fd, F_GETFD);
    if (fl >= 0 && !(fl & FD_CLOEXEC)) n++;
  }
  return n;
}

static void cmd_cloexec(void) {
  int before = open_without_cloexec();
  void* lib = NULL;
  const ncclTuner_v3_t* t = load(plugin, &lib);
  int changed = one_comm(t);
  void* ctx = NULL; /* a second communicator: the decision log is open by now */
  t->init(nRanks, nNodes, logger, &ctx);
  replay(t, ctx);
  t->destroy(ctx);
  fact("changed=%d inheritable_before=%d inheritable_after=%d", changed, before, open_without_cloexec());
}

/* The host holds its own (recursive) lock around every tuner call and its logger takes the same
 * lock: a line the plugin logs from another thread while the caller waits would deadlock. Two
 * communicators, each init, replay and destroy under the lock. */
static pthread_mutex_t hostLock;
static void lockingLogger(ncclDebugLogLevel level, unsigned long flags, const char* file, int line, const char* fmt,
                          ...) {
  (void)flags;
  (void)file;
  (void)line;
  pthread_mutex_lock(&hostLock);
  va_list ap;
  va_start(ap, fmt);
  logLine(level, fmt, ap);
  va_end(ap);
  pthread_mutex_unlock(&hostLock);
}

static void cmd_logger_lock(void) {
  pthread_mutexattr_t a;
  pthread_mutexattr_init(&a);
  pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
  pthread_mutex_init(&hostLock, &a);
  void* lib = NULL;
  const ncclTuner_v3_t* t = load(plugin, &lib);
  int changed = 0;
  ncclResult_t rc = ncclSuccess;
  for (int k = 0; k < 2; k++) {
    pthread_mutex_lock(&hostLock);
    void* ctx = NULL;
    rc |= t->init(nRanks, nNodes, lockingLogger, &ctx);
    changed = replay(t, ctx);
    t->destroy(ctx);
    pthread_mutex_unlock(&hostLock);
  }
  fact("init_rc=%d changed=%d", rc, changed);
}

/* ---- the fourth pass: the host boundary (daemons, FP state, other threads, a JVM of its own) -- */

/* A seccomp filter: the named system calls fail with EPERM (a sandbox). */
static void deny_syscalls(const char* names) {
  static const struct {
    const char* name;
    int nr;
  } known[] = {
    {"readlink", SYS_readlink},     {"readlinkat", SYS_readlinkat}, {"sched_getaffinity", SYS_sched_getaffinity},
    {"prctl", SYS_prctl},           {"mlock", SYS_mlock},           {"madvise", SYS_madvise},
    {"membarrier", SYS_membarrier}, {"sysinfo", SYS_sysinfo},       {"getrlimit", SYS_getrlimit},
    {"prlimit64", SYS_prlimit64}};
  struct sock_filter f[64];
  int n = 0;
  f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
  char copy[512];
  snprintf(copy, sizeof copy, "%s", names);
  char* save = NULL;
  for (char* t = strtok_r(copy, ",", &save); t != NULL && n < 60; t = strtok_r(NULL, ",", &save)) {
    int nr = -1;
    for (size_t k = 0; k < sizeof known / sizeof known[0]; k++)
      if (strcmp(t, known[k].name) == 0) nr = known[k].nr;
    if (nr < 0) usage_exit("GUEST_HOST_DENY: unknown system call %s", t);
    f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)nr, 0, 1);
    f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM);
  }
  f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
  struct sock_fprog prog = {(unsigned short)n, f};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0)
    usage_exit("seccomp: %s", strerror(errno));
}

static void cmd_closed_stdio(const char* dir) {
  fflush(NULL);
  int keep = fcntl(1, F_DUPFD_CLOEXEC, 10);
  facts = fdopen(keep, "w");
  logOut = facts;
  void* lib = NULL;
  const ncclTuner_v3_t* t = load(plugin, &lib);
  close(0);
  close(1);
  close(2);
  int changed = one_comm(t);
  char low[32] = "";
  for (int fd = 0; fd < 3; fd++)
    if (fcntl(fd, F_GETFD) >= 0) snprintf(low + strlen(low), sizeof low - strlen(low), "%s%d", low[0] ? "," : "", fd);
  errno = 0;
  ssize_t w = write(2, "x", 1);
  int werr = errno;
  /* The daemon then points 0-2 somewhere, as daemons do. */
  char p[4096];
  snprintf(p, sizeof p, "%s/log", dir);
  int devnull = open("/dev/null", O_RDWR);
  int logfd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  dup2(devnull, 0);
  dup2(logfd, 1);
  dup2(logfd, 2);
  if (devnull > 2) close(devnull);
  if (logfd > 2) close(logfd);
  int again = one_comm(t);
  void* ctx = NULL;
  t->init(nRanks, nNodes, logger, &ctx);
  replay(t, ctx);
  t->destroy(ctx);
  fact("changed=%d open_low=%s write2=%s changed_after_dup2=%d", changed, low[0] ? low : "none",
       w < 0 && werr == EBADF ? "EBADF" : "written", again);
}

static void cmd_fenv(const char* mode) {
  void* lib = NULL;
  const ncclTuner_v3_t* t = load(plugin, &lib);
  int traps = strcmp(mode, "traps") == 0;
  feclearexcept(FE_ALL_EXCEPT);
  if (traps) feenableexcept(FE_ALL_EXCEPT);
  else fesetround(FE_UPWARD);
  int exceptBefore = fegetexcept(), roundBefore = fegetround();
  int changed = one_comm(t);
  int flags = fetestexcept(FE_ALL_EXCEPT), exceptAfter = fegetexcept(), roundAfter = fegetround();
  void* ctx = NULL; /* a second communicator: a thread already attached, the engine running */
  t->init(nRanks, nNodes, logger, &ctx);
  int changed2 = replay(t, ctx);
  t->destroy(ctx);
  int flags2 = fetestexcept(FE_ALL_EXCEPT);
  fedisableexcept(FE_ALL_EXCEPT);
  fesetround(FE_TONEAREST);
  fact("changed=%d changed2=%d traps_kept=%s rounding_kept=%s sticky_flags=%#x sticky_flags2=%#x", changed, changed2,
       exceptAfter == exceptBefore ? "yes" : "no", roundAfter == roundBefore ? "yes" : "no", flags, flags2);
}

/* Enough of jni.h for a host (the reliability hosts build without a JDK's headers). */
typedef struct {
  int version;
  int nOptions;
  void* options;
  unsigned char ignoreUnrecognized;
} th_vm_args;
typedef int (*th_create_fn)(void**, void**, void*);
typedef int (*th_created_fn)(void**, int, int*);
static void cmd_jvm_after(const char* home) {
  void* lib = NULL;
  const ncclTuner_v3_t* t = load(plugin, &lib);
  int changed = one_comm(t);
  char path[4096];
  snprintf(path, sizeof path, "%s/lib/server/libjvm.so", home);
  fflush(NULL);
  void* jvm = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
  if (jvm == NULL) {
    fact("changed=%d dlopen=%s", changed, dlerror());
    return;
  }
  th_create_fn create = (th_create_fn)dlsym(jvm, "JNI_CreateJavaVM");
  th_created_fn created = (th_created_fn)dlsym(jvm, "JNI_GetCreatedJavaVMs");
  void* vm = NULL;
  void* env = NULL;
  int count = 0;
  int crc = created(&vm, 1, &count);
  th_vm_args args = {0x000a0000 /* JNI_VERSION_10 */, 0, NULL, 0};
  void* vm2 = NULL;
  int rc = create(&vm2, &env, &args);
  const char* found = "no-vm";
  if (count > 0) {
    /* (*vm)->AttachCurrentThread(vm, &env, NULL): index 4 of JNIInvokeInterface_ */
    void** invoke = *(void***)vm;
    int (*attach)(void*, void**, void*) = (int (*)(void*, void**, void*))invoke[4];
    if (attach(vm, &env, NULL) == 0) {
      void** fns = *(void***)env;
      void* (*findClass)(void*, const char*) = (void* (*)(void*, const char*))fns[6];
      found = findClass(env, "java/lang/String") != NULL ? "ok" : "failed";
      int (*detach)(void*) = (int (*)(void*))invoke[5];
      detach(vm);
    } else {
      found = "attach-failed";
    }
  }
  fact("changed=%d created_rc=%d created=%d create_rc=%d find_class=%s changed_after=%d", changed, crc, count, rc,
       found, one_comm(t));
}

/* During the first init (on another thread) the host goes on: handlers, locale, environment. */
static const ncclTuner_v3_t* diT;
static atomic_int diDone;
static void* during_init_thread(void* arg) {
  int* changed = arg;
  *changed = one_comm(diT);
  atomic_store(&diDone, 1);
  return NULL;
}

static void on_host_signal(int sig) {
  ran[sig]++;
}

static void cmd_during_init(void) {
  static const int mine[] = {SIGTERM, SIGINT, SIGUSR1, SIGHUP, SIGCHLD, SIGPIPE};
  void* lib = NULL;
  diT = load(plugin, &lib);
  int changed = -2;
  pthread_t th;
  pthread_create(&th, NULL, during_init_thread, &changed);
  /* Once HotSpot installed its handlers (its suspend/resume signal, SIGRTMAX here, comes last of
   * them: PosixSignals::init), the host installs its own. */
  int waited = 0;
  for (; waited < 20000; waited++) {
    struct sigaction sr;
    sigaction(SIGRTMAX, NULL, &sr);
    if (((sr.sa_flags & SA_SIGINFO) || sr.sa_handler != SIG_DFL) || atomic_load(&diDone)) break;
    usleep(500);
  }
  int afterJvmHandlers = !atomic_load(&diDone);
  host_handlers(mine, sizeof mine / sizeof mine[0], on_host_signal);
  unsetenv("JAVA_TOOL_OPTIONS");
  /* The JVM's setlocale(LC_ALL, "") (LANG=C.UTF-8) no longer shows in the process's locale: the
   * host sets LC_NUMERIC while the init still runs, after HotSpot's handlers, and then waits a
   * little, since the JVM's properties come after them. */
  for (int w = 0; w < 50 && !atomic_load(&diDone); w++) usleep(1000);
  int afterJvmLocale = !atomic_load(&diDone);
  setlocale(LC_NUMERIC, "C");
  char hostLocale[512];
  snprintf(hostLocale, sizeof hostLocale, "%s", setlocale(LC_ALL, NULL));
  pthread_join(th, NULL);
  int kept = 0;
  for (size_t i = 0; i < sizeof mine / sizeof mine[0]; i++) {
    struct sigaction now;
    sigaction(mine[i], NULL, &now);
    if (now.sa_handler == on_host_signal) kept++;
    else fact("lost_signal=%d", mine[i]);
  }
  const char* loc = setlocale(LC_ALL, NULL);
  const char* jto = getenv("JAVA_TOOL_OPTIONS");
  fact("changed=%d timing_ok=%s handlers_kept=%d locale_kept=%s jto=%s", changed,
       afterJvmHandlers && afterJvmLocale ? "yes" : "no", kept, strcmp(loc, hostLocale) == 0 ? "yes" : "no",
       jto ? jto : "unset");
}

/* HotSpot's suspend/resume signal taken by a host thread during the start: the shim picks
 * SIGRTMAX (the host left it at SIG_DFL) before it loads libjvm, and HotSpot installs its handler
 * on it during JNI_CreateJavaVM, a few milliseconds after libjvm is loaded. A host thread that
 * installs its own in between must keep it (HotSpot's used to replace it: the host's kill then
 * reached HotSpot's handler, which dropped it). */
static atomic_int srHits;
static void on_sr_signal(int sig) {
  (void)sig;
  atomic_fetch_add(&srHits, 1);
}

static int libjvm_loaded(struct dl_phdr_info* info, size_t size, void* data) {
  (void)size;
  (void)data;
  size_t n = info->dlpi_name != NULL ? strlen(info->dlpi_name) : 0;
  return n >= 9 && strcmp(info->dlpi_name + n - 9, "libjvm.so") == 0;
}

static void cmd_sr_window(long delayUs) {
  void* lib = NULL;
  diT = load(plugin, &lib);
  int changed = -2;
  pthread_t th;
  pthread_create(&th, NULL, during_init_thread, &changed);
  int seen = 0;
  while (!atomic_load(&diDone) && !(seen = dl_iterate_phdr(libjvm_loaded, NULL))) usleep(50);
  if (delayUs > 0) usleep((useconds_t)delayUs);
  int during = !atomic_load(&diDone);
  struct sigaction sa, prev;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_sr_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGRTMAX, &sa, &prev);
  int hostFirst = !(prev.sa_flags & SA_SIGINFO) && prev.sa_handler == SIG_DFL;
  pthread_join(th, NULL);
  struct sigaction now;
  sigaction(SIGRTMAX, NULL, &now);
  int kept = !(now.sa_flags & SA_SIGINFO) && now.sa_handler == on_sr_signal;
  /* GUEST_HOST_BUSY_S: that long in getCollInfo calls first, the calling thread in the engine's
   * Java code again and again (where a JFR recording's execution sampler suspends threads). */
  const char* busy = getenv("GUEST_HOST_BUSY_S");
  long busyS = busy != NULL ? atol(busy) : 0, replays = 0;
  if (busyS > 0) {
    void* ctx = NULL;
    if (diT->init(nRanks, nNodes, logger, &ctx) != ncclSuccess) fail("init returned an error");
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do {
      if (replay(diT, ctx) < 0) fail("getCollInfo returned an error");
      replays++;
      clock_gettime(CLOCK_MONOTONIC, &t);
    } while (t.tv_sec - t0.tv_sec < busyS);
    diT->destroy(ctx);
  }
  int hitsBefore = atomic_load(&srHits);
  kill(getpid(), SIGRTMAX);
  for (int w = 0; w < 500 && atomic_load(&srHits) == hitsBefore; w++) usleep(1000);
  usleep(10000); /* a second run of the handler would come now */
  fact("changed=%d libjvm_seen=%d host_first=%s during_init=%s kept=%s replays=%ld hits_before_kill=%d hits=%d",
       changed, seen, hostFirst ? "yes" : "no", during ? "yes" : "no", kept ? "yes" : "no", replays, hitsBefore,
       atomic_load(&srHits));
}

/* The storm thread first adds its STORM_NAMES names, then only overwrites them until told to stop,
 * and records the value it gave each name last. Adding a name while another thread reads the
 * environment is a data race in glibc itself (setenv is MT-Unsafe const:env; glibc 2.36's setenv
 * reallocs the environ array and frees the old one under a reader): NCCL's own init, which calls
 * getenv throughout, would fault the same way, so a host cannot do that to any library. Overwriting
 * an existing name replaces one pointer and frees nothing, and is what a host may do meanwhile. */
enum {
  STORM_NAMES = 512
};
static atomic_int stormStop, stormAdded;
static unsigned stormLast[STORM_NAMES];
static void* storm_setenv(void* arg) {
  (void)arg;
  char name[32], value[16];
  for (unsigned i = 0; i < STORM_NAMES || !atomic_load(&stormStop); i++) {
    unsigned k = i % STORM_NAMES;
    snprintf(name, sizeof name, "GUEST_STORM_%u", k);
    snprintf(value, sizeof value, "%u", i);
    setenv(name, value, 1);
    stormLast[k] = i;
    if (i + 1 == STORM_NAMES) atomic_store(&stormAdded, 1);
  }
  return NULL;
}

static const ncclTuner_v3_t* stT;
static atomic_int stChanged;
static void* storm_init(void* arg) {
  (void)arg;
  atomic_fetch_add(&stChanged, one_comm(stT) == 23 ? 1 : 0);
  return NULL;
}

/* Facts: communicators, applied_all (inits whose replay changed all 23 calls) and kept (names whose
 * value afterwards is the one the host set last: the plugin never swapped or restored environ). */
static void cmd_setenv_storm(long n) {
  void* lib = NULL;
  stT = load(plugin, &lib);
  pthread_t setter, th[256];
  if (n > 256) n = 256;
  pthread_create(&setter, NULL, storm_setenv, NULL);
  while (!atomic_load(&stormAdded)) sched_yield();
  for (long i = 0; i < n; i++) pthread_create(&th[i], NULL, storm_init, NULL);
  for (long i = 0; i < n; i++) pthread_join(th[i], NULL);
  atomic_store(&stormStop, 1);
  pthread_join(setter, NULL);
  int kept = 0;
  for (unsigned k = 0; k < STORM_NAMES; k++) {
    char name[32], value[16];
    snprintf(name, sizeof name, "GUEST_STORM_%u", k);
    snprintf(value, sizeof value, "%u", stormLast[k]);
    const char* v = getenv(name);
    if (v != NULL && strcmp(v, value) == 0) kept++;
  }
  fact("communicators=%ld applied_all=%d kept=%d", n, atomic_load(&stChanged), kept);
}

/* CPython's faulthandler (Modules/faulthandler.c): installed with SA_NODEFER over the previous
 * handler; on a fault it writes the traceback, puts the previous handler back and raises. */
static struct sigaction fhPrevious;
static void fh_handler(int sig) {
  static const char tb[] = "Fatal Python error: Segmentation fault\n";
  ssize_t ignored = write(2, tb, sizeof tb - 1);
  (void)ignored;
  sigaction(sig, &fhPrevious, NULL);
  raise(sig);
}

static void cmd_faulthandler(const char* dir) {
  void* lib = NULL;
  const ncclTuner_v3_t* t = load(plugin, &lib);
  fact("changed=%d", one_comm(t));
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = fh_handler;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_NODEFER | SA_ONSTACK;
  sigaction(SIGSEGV, &sa, &fhPrevious);
  crash_into(dir); /* the script's own bug */
}

static void cmd_nonascii_policy(const char* dir, const char* how) {
  const char* src = getenv("NCCL_TUNER_JAVA_POLICY");
  if (src == NULL) usage_exit("NCCL_TUNER_JAVA_POLICY is not set");
  char sub[4096], dst[4200];
  snprintf(sub, sizeof sub, "%s/%s", dir, strcmp(how, "latin1") == 0 ? "r\xfcle" : "r\xc3\xbcle");
  mkdir(sub, 0755);
  snprintf(dst, sizeof dst, "%s/policy.yaml", sub);
  FILE* in = fopen(src, "r");
  FILE* out = fopen(dst, "w");
  if (!in || !out) usage_exit("cannot copy the policy to %s", dst);
  char buf[4096];
  size_t k;
  while ((k = fread(buf, 1, sizeof buf, in)) > 0) fwrite(buf, 1, k, out);
  fclose(in);
  fclose(out);
  setenv("NCCL_TUNER_JAVA_POLICY", dst, 1);
  unsetenv("LANG");
  unsetenv("LC_ALL");
  unsetenv("LC_CTYPE");
  void* lib = NULL;
  fact("changed=%d", one_comm(load(plugin, &lib)));
}

/* ---- the first init's window, seen from other host threads ----------------------------------- */

/* Set once the first init (on the main thread) returned: the window's threads stop. */
static atomic_int windowDone;

/* Signals a host thread raises while another runs the first init: the host's handler must run for
 * every one (the JVM's dispositions replaced the host's for the time of the start: SIGCHLD and
 * SIGRTMAX-2 were lost), and a polling thread must never see a disposition other than the host's. */
static int windowSignals[4];
static atomic_int windowRaised[NSIG], windowHandled[NSIG], windowPollsChanged, windowPolls;
static void on_window_signal(int sig) {
  atomic_fetch_add(&windowHandled[sig], 1);
}

static void* window_raiser(void* arg) {
  (void)arg;
  while (!atomic_load(&windowDone))
    for (int i = 0; i < 4; i++) {
      raise(windowSignals[i]); /* thread-directed: handled before raise returns */
      atomic_fetch_add(&windowRaised[windowSignals[i]], 1);
    }
  return NULL;
}

static void* window_sig_poller(void* arg) {
  (void)arg;
  while (!atomic_load(&windowDone)) {
    for (int i = 0; i < 4; i++) {
      struct sigaction now;
      sigaction(windowSignals[i], NULL, &now);
      if ((now.sa_flags & SA_SIGINFO) || now.sa_handler != on_window_signal) atomic_fetch_add(&windowPollsChanged, 1);
    }
    atomic_fetch_add(&windowPolls, 1);
  }
  return NULL;
}

static void cmd_sigwindow(void) {
  windowSignals[0] = SIGCHLD;
  windowSignals[1] = SIGPIPE;
  windowSignals[2] = SIGXFSZ;
  windowSignals[3] = SIGRTMAX - 2; /* libnio's NativeThread interrupt signal */
  host_handlers(windowSignals, 4, on_window_signal);
  void* lib = NULL;
  const ncclTuner_v3_t* t = load(plugin, &lib);
  pthread_t raiser, poller;
  pthread_create(&raiser, NULL, window_raiser, NULL);
  pthread_create(&poller, NULL, window_sig_poller, NULL);
  int changed = one_comm(t);
  atomic_store(&windowDone, 1);
  pthread_join(raiser, NULL);
  pthread_join(poller, NULL);
  int lost = 0;
  char list[256] = "";
  for (int i = 0; i < 4; i++) {
    int s = windowSignals[i], l = atomic_load(&windowRaised[s]) - atomic_load(&windowHandled[s]);
    lost += l;
    if (l != 0) snprintf(list + strlen(list), sizeof list - strlen(list), "%s%d:%d", list[0] ? "," : "", s, l);
  }
  fact("changed=%d rounds=%d lost=%d [%s] polls=%d polls_changed=%d", changed, atomic_load(&windowRaised[SIGCHLD]),
       lost, list, atomic_load(&windowPolls), atomic_load(&windowPollsChanged));
}

/* A host thread formats numbers and reads the locale's name while another runs the first init:
 * the process locale must stay the host's ("C": printf("%.1f") gives "0.5") throughout (the
 * JVM's setlocale(LC_ALL, "") set the environment's for the time of the start: "0,5" under
 * de_DE). Afterwards the Java properties that follow the environment's locale, read through JNI
 * from the plugin's JVM. */
static atomic_int windowComma, windowNameChanged, windowLocalePolls;
static void* window_locale_poller(void* arg) {
  const char* hostName = arg;
  while (!atomic_load(&windowDone)) {
    char buf[32];
    snprintf(buf, sizeof buf, "%.1f", 0.5);
    if (strcmp(buf, "0.5") != 0) atomic_fetch_add(&windowComma, 1);
    const char* now = setlocale(LC_ALL, NULL);
    if (now == NULL || strcmp(now, hostName) != 0) atomic_fetch_add(&windowNameChanged, 1);
    atomic_fetch_add(&windowLocalePolls, 1);
  }
  return NULL;
}

/* System.getProperty(name) in the plugin's JVM through JNI ("-" where unset), on `env`. */
static void java_property(void* env, const char* name, char* out, size_t n) {
  void** fns = *(void***)env;
  void* (*findClass)(void*, const char*) = (void* (*)(void*, const char*))fns[6];
  void* (*getStaticMethodId)(void*, void*, const char*, const char*) =
    (void* (*)(void*, void*, const char*, const char*))fns[113];
  void* (*callStaticObject)(void*, void*, void*, ...) = (void* (*)(void*, void*, void*, ...))fns[114];
  void* (*newStringUtf)(void*, const char*) = (void* (*)(void*, const char*))fns[167];
  const char* (*getUtf)(void*, void*, void*) = (const char* (*)(void*, void*, void*))fns[169];
  void (*releaseUtf)(void*, void*, const char*) = (void (*)(void*, void*, const char*))fns[170];
  snprintf(out, n, "-");
  void* system = findClass(env, "java/lang/System");
  void* get = system ? getStaticMethodId(env, system, "getProperty", "(Ljava/lang/String;)Ljava/lang/String;") : NULL;
  void* value = get ? callStaticObject(env, system, get, newStringUtf(env, name)) : NULL;
  const char* c = value ? getUtf(env, value, NULL) : NULL;
  if (c != NULL) {
    snprintf(out, n, "%s", c[0] ? c : "-");
    releaseUtf(env, value, c);
  }
}

static void java_properties(char* out, size_t n) {
  static const char* names[] = {"file.encoding", "sun.jnu.encoding", "native.encoding",
                                "user.language", "user.country",     NULL};
  snprintf(out, n, "props=no-vm");
  int (*created)(void**, int, int*) = (int (*)(void**, int, int*))dlsym(RTLD_DEFAULT, "JNI_GetCreatedJavaVMs");
  void* vm = NULL;
  void* env = NULL;
  int count = 0;
  if (created == NULL || created(&vm, 1, &count) != 0 || count < 1) return;
  void** invoke = *(void***)vm;
  int (*attach)(void*, void**, void*) = (int (*)(void*, void**, void*))invoke[4];
  int (*detach)(void*) = (int (*)(void*))invoke[5];
  sigset_t mask;
  pthread_sigmask(SIG_SETMASK, NULL, &mask);
  if (attach(vm, &env, NULL) != 0) return;
  out[0] = '\0';
  for (int i = 0; names[i] != NULL; i++) {
    char v[128];
    java_property(env, names[i], v, sizeof v);
    snprintf(out + strlen(out), n - strlen(out), "%s%s=%s", i ? " " : "", names[i], v);
  }
  detach(vm);
  pthread_sigmask(SIG_SETMASK, &mask, NULL);
}

/* The init thread's own per-thread locale (uselocale, as a host may set on its thread) is the same
 * object after the first init: the runtime's setlocale on this thread took a thread locale of its
 * own during the start, and the shim puts the host's back (it was LC_GLOBAL_LOCALE before). */
static void cmd_thread_locale(void) {
  void* lib = NULL;
  const ncclTuner_v3_t* t = load(plugin, &lib);
  locale_t mine = newlocale(LC_ALL_MASK, "C.UTF-8", (locale_t)0);
  if (mine == (locale_t)0) mine = newlocale(LC_ALL_MASK, "C", (locale_t)0);
  uselocale(mine);
  int changed = one_comm(t);
  locale_t now = uselocale((locale_t)0);
  fact("changed=%d thread_locale_kept=%s", changed, now == mine ? "yes" : now == LC_GLOBAL_LOCALE ? "global" : "other");
  uselocale(LC_GLOBAL_LOCALE);
  freelocale(mine);
}

static void cmd_locale_window(void) {
  char hostName[256];
  snprintf(hostName, sizeof hostName, "%s", setlocale(LC_ALL, NULL));
  void* lib = NULL;
  const ncclTuner_v3_t* t = load(plugin, &lib);
  pthread_t poller;
  pthread_create(&poller, NULL, window_locale_poller, hostName);
  int changed = one_comm(t);
  atomic_store(&windowDone, 1);
  pthread_join(poller, NULL);
  char props[1024];
  java_properties(props, sizeof props);
  const char* after = setlocale(LC_ALL, NULL);
  fact("changed=%d locale_before=%s locale_after=%s polls=%d name_changed=%d comma=%d", changed, hostName, after,
       atomic_load(&windowLocalePolls), atomic_load(&windowNameChanged), atomic_load(&windowComma));
  fact("%s", props);
}

/* Children that host threads exec while another runs the first init: none may inherit a
 * descriptor of the plugin's (the JVM opened lib/modules, the jar and the policy without
 * O_CLOEXEC and marked them close-on-exec only after the start). Each child is this program
 * ("fdcount-child"), which exits with the number of its descriptors above 2. */
static atomic_int windowChildren, windowLeaks, windowMaxFds;
static int windowBaseline;

static int spawn_child_fds(void) {
  char* av[] = {"guest-host", "fdcount-child", NULL};
  extern char** environ;
  pid_t pid;
  if (posix_spawn(&pid, "/proc/self/exe", NULL, NULL, av, environ) != 0) return -1;
  int status = 0;
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

static void* window_spawner(void* arg) {
  (void)arg;
  while (!atomic_load(&windowDone)) {
    int n = spawn_child_fds();
    if (n < 0) continue;
    atomic_fetch_add(&windowChildren, 1);
    if (n > windowBaseline) {
      atomic_fetch_add(&windowLeaks, 1);
      if (n > atomic_load(&windowMaxFds)) atomic_store(&windowMaxFds, n);
    }
  }
  return NULL;
}

static int fdcount_child(void) {
  const char* logPath = getenv("GUEST_HOST_FDLOG"); /* appends "fd target" of each, for a person */
  FILE* log = logPath != NULL ? fopen(logPath, "ae") : NULL;
  DIR* d = opendir("/proc/self/fd");
  if (d == NULL) return 255;
  int n = 0;
  struct dirent* e;
  while ((e = readdir(d)) != NULL) {
    int fd = e->d_name[0] >= '0' && e->d_name[0] <= '9' ? atoi(e->d_name) : -1;
    if (fd <= 2 || fd == dirfd(d) || (log != NULL && fd == fileno(log))) continue;
    n++;
    char link[300], target[4096];
    snprintf(link, sizeof link, "/proc/self/fd/%s", e->d_name);
    ssize_t k = readlink(link, target, sizeof target - 1);
    if (log != NULL && k > 0) fprintf(log, "%s %.*s\n", e->d_name, (int)k, target);
  }
  if (log != NULL) fclose(log);
  closedir(d);
  return n > 254 ? 254 : n;
}

/* Objects loaded twice under one of the runtime's library names (the shim loads them by full path
 * before HotSpot does: HotSpot must find the same object). */
static int countRuntimeObject(struct dl_phdr_info* info, size_t size, void* data) {
  (void)size;
  static const char* names[] = {"/libjava.so", "/libnet.so", "/libnio.so", "/libzip.so", "/libjimage.so", NULL};
  int* counts = data;
  size_t n = info->dlpi_name ? strlen(info->dlpi_name) : 0;
  for (int i = 0; names[i] != NULL; i++) {
    size_t k = strlen(names[i]);
    if (n >= k && strcmp(info->dlpi_name + n - k, names[i]) == 0) counts[i]++;
  }
  return 0;
}

static void runtime_objects(char* out, size_t n) {
  int counts[5] = {0, 0, 0, 0, 0};
  dl_iterate_phdr(countRuntimeObject, counts);
  snprintf(out, n, "libjava=%d libnet=%d libnio=%d libzip=%d libjimage=%d", counts[0], counts[1], counts[2], counts[3],
           counts[4]);
}

static void cmd_spawn_window(void) {
  void* lib = NULL;
  const ncclTuner_v3_t* t = load(plugin, &lib);
  /* glibc 2.36 opens gconv-modules.cache without O_CLOEXEC (iconv/gconv_cache.c, then mmap and
   * close) the first time the process makes a locale whose name has a codeset: with LANG=C.UTF-8,
   * the shim's and the JVM's newlocale during the start in a host that made none before (found
   * here: 1 child in 360 runs, before the socket fix and after it). Inside libc, out of any GOT
   * slot's reach: a documented limit (docs/dev/reliability.md). A real host has made one long
   * before (CPython's startup calls setlocale(LC_CTYPE, "")); so does this one, changing nothing,
   * so that leaked= counts what the plugin's hooks are for. */
  locale_t codeset = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
  if (codeset != (locale_t)0) freelocale(codeset);
  windowBaseline = spawn_child_fds();
  if (windowBaseline < 0) usage_exit("cannot spawn %s", "/proc/self/exe");
  pthread_t spawner[2];
  for (int i = 0; i < 2; i++) pthread_create(&spawner[i], NULL, window_spawner, NULL);
  int changed = one_comm(t);
  atomic_store(&windowDone, 1);
  for (int i = 0; i < 2; i++) pthread_join(spawner[i], NULL);
  char objects[256];
  runtime_objects(objects, sizeof objects);
  fact("changed=%d baseline=%d children=%d leaked=%d max_fds=%d after=%d %s", changed, windowBaseline,
       atomic_load(&windowChildren), atomic_load(&windowLeaks), atomic_load(&windowMaxFds), spawn_child_fds(), objects);
}

/* The runtime's descriptor-making calls through their GOT slots (runtime-slots): a window of the
 * start (spawn-window) cannot be hit at will, but the same slots can be called afterwards, and
 * each makes its descriptor as the library's own code would (libnet's JNI_OnLoad, which runs
 * during the start, makes its probe sockets through libnet's "socket" slot). */
typedef ElfW(Rela) slotRela; /* a name clang-format reads as a type, unlike ElfW(Rela) */

static void** find_slot(void* handle, const char* name) {
  struct link_map* lm = NULL;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &lm) != 0 || lm == NULL || lm->l_ld == NULL) return NULL;
  ElfW(Addr) base = lm->l_addr;
  const ElfW(Sym)* symtab = NULL;
  const char* strtab = NULL;
  const slotRela* tables[2] = {NULL, NULL};
  size_t sizes[2] = {0, 0};
  for (const ElfW(Dyn)* d = lm->l_ld; d->d_tag != DT_NULL; d++) {
    ElfW(Addr) v = d->d_un.d_ptr < base ? d->d_un.d_ptr + base : d->d_un.d_ptr;
    if (d->d_tag == DT_SYMTAB) symtab = (const ElfW(Sym)*)v;
    else if (d->d_tag == DT_STRTAB) strtab = (const char*)v;
    else if (d->d_tag == DT_JMPREL) tables[0] = (const slotRela*)v;
    else if (d->d_tag == DT_PLTRELSZ) sizes[0] = d->d_un.d_val;
    else if (d->d_tag == DT_RELA) tables[1] = (const slotRela*)v;
    else if (d->d_tag == DT_RELASZ) sizes[1] = d->d_un.d_val;
  }
  if (symtab == NULL || strtab == NULL) return NULL;
  for (int t = 0; t < 2; t++)
    for (size_t i = 0; tables[t] != NULL && i < sizes[t] / sizeof(slotRela); i++) {
      unsigned type = (unsigned)ELF64_R_TYPE(tables[t][i].r_info);
      size_t sym = ELF64_R_SYM(tables[t][i].r_info);
      if ((type == R_X86_64_JUMP_SLOT || type == R_X86_64_GLOB_DAT) && sym != 0 &&
          strcmp(strtab + symtab[sym].st_name, name) == 0)
        return (void**)(base + tables[t][i].r_offset);
    }
  return NULL;
}

/* Whether any of fds[0..n) is inheritable (no FD_CLOEXEC); closes them. -1 where n is 0 (the
 * call failed). */
static int inheritable_then_close(const int* fds, int n) {
  int any = n > 0 ? 0 : -1;
  for (int j = 0; j < n; j++) {
    if (!(fcntl(fds[j], F_GETFD) & FD_CLOEXEC)) any = 1;
    close(fds[j]);
  }
  return any;
}

/* Calls `fn` (a slot's target) as libc's `name` would be called: 1 if the descriptor it made is
 * inheritable, 0 if close-on-exec, -1 if the call failed. */
static int call_slot(const char* name, void* fn) {
  int fds[2] = {-1, -1};
  int n = 0;
  if (strncmp(name, "fopen", 5) == 0) {
    FILE* f = ((FILE * (*)(const char*, const char*)) fn)("/dev/null", "r");
    if (f == NULL) return -1;
    int inheritable = !(fcntl(fileno(f), F_GETFD) & FD_CLOEXEC);
    fclose(f);
    return inheritable;
  } else if (strncmp(name, "openat", 6) == 0) {
    n = (fds[0] = ((int (*)(int, const char*, int, ...))fn)(AT_FDCWD, "/dev/null", O_RDONLY)) >= 0;
  } else if (strncmp(name, "open", 4) == 0) {
    n = (fds[0] = ((int (*)(const char*, int, ...))fn)("/dev/null", O_RDONLY)) >= 0;
  } else if (strcmp(name, "socket") == 0) {
    n = (fds[0] = ((int (*)(int, int, int))fn)(AF_UNIX, SOCK_STREAM, 0)) >= 0;
  } else if (strcmp(name, "socketpair") == 0) {
    n = ((int (*)(int, int, int, int*))fn)(AF_UNIX, SOCK_STREAM, 0, fds) == 0 ? 2 : 0;
  } else if (strcmp(name, "pipe") == 0) {
    n = ((int (*)(int*))fn)(fds) == 0 ? 2 : 0;
  } else if (strcmp(name, "eventfd") == 0) {
    n = (fds[0] = ((int (*)(unsigned, int))fn)(0, 0)) >= 0;
  } else if (strcmp(name, "epoll_create1") == 0) {
    n = (fds[0] = ((int (*)(int))fn)(0)) >= 0;
  } else if (strcmp(name, "epoll_create") == 0) {
    n = (fds[0] = ((int (*)(int))fn)(1)) >= 0;
  } else if (strcmp(name, "inotify_init") == 0) {
    n = (fds[0] = ((int (*)(void))fn)()) >= 0;
  } else if (strcmp(name, "dup") == 0) {
    int src = open("/dev/null", O_RDONLY | O_CLOEXEC); /* dup's copy is inheritable whatever this is */
    n = src >= 0 && (fds[0] = ((int (*)(int))fn)(src)) >= 0;
    if (src >= 0) close(src);
  } else if (strncmp(name, "mkstemp", 7) == 0) {
    char path[] = "/tmp/guest-host-slot-XXXXXX";
    n = (fds[0] = ((int (*)(char*))fn)(path)) >= 0;
    if (n) unlink(path);
  } else if (strcmp(name, "accept") == 0) { /* a connection waiting on an abstract-namespace listener */
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path + 1, sizeof a.sun_path - 1, "guest-host-slot-%d", (int)getpid());
    socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(a.sun_path + 1));
    int l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int c = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (l >= 0 && c >= 0 && bind(l, (struct sockaddr*)&a, len) == 0 && listen(l, 1) == 0 &&
        connect(c, (struct sockaddr*)&a, len) == 0)
      n = (fds[0] = ((int (*)(int, struct sockaddr*, socklen_t*))fn)(l, NULL, NULL)) >= 0;
    if (l >= 0) close(l);
    if (c >= 0) close(c);
  }
  return inheritable_then_close(fds, n);
}

static void cmd_runtime_slots(void) {
  static const char* libs[] = {"server/libjvm", "libjava", "libnet", "libnio", "libzip", "libjimage", NULL};
  static const char* calls[] = {"open",          "open64",       "openat", "openat64", "fopen",     "fopen64",
                                "socket",        "socketpair",   "accept", "pipe",     "eventfd",   "epoll_create",
                                "epoll_create1", "inotify_init", "dup",    "mkstemp",  "mkstemp64", NULL};
  void* lib = NULL;
  int changed = one_comm(load(plugin, &lib));
  const char* home = getenv("JAVA_HOME");
  if (home == NULL) usage_exit("runtime-slots needs %s", "JAVA_HOME");
  char line[4096];
  int at = snprintf(line, sizeof line, "changed=%d", changed), slots = 0;
  for (int i = 0; libs[i] != NULL; i++) {
    char path[4200];
    snprintf(path, sizeof path, "%s/lib/%s.so", home, libs[i]);
    void* h = dlopen(path, RTLD_LAZY | RTLD_NOLOAD);
    if (h == NULL) continue;
    const char* short_name = strrchr(libs[i], '/') ? strrchr(libs[i], '/') + 1 : libs[i];
    for (int k = 0; calls[k] != NULL; k++) {
      void** slot = find_slot(h, calls[k]);
      if (slot == NULL) continue;
      slots++;
      int r = call_slot(calls[k], __atomic_load_n(slot, __ATOMIC_ACQUIRE));
      at += snprintf(line + at, sizeof line - (size_t)at, " %s.%s=%s", short_name, calls[k],
                     r < 0 ? "failed" :
                     r     ? "inheritable" :
                             "cloexec");
      if (at >= (int)sizeof line) at = (int)sizeof line - 1;
    }
    dlclose(h);
  }
  fact("%s slots=%d", line, slots);
}

static void cmd_basic(void) {
  void* lib = NULL;
  fact("changed=%d", one_comm(load(plugin, &lib)));
}

static void cmd_preload_libjvm(const char* path) {
  if (!dlopen(path, RTLD_NOW | RTLD_GLOBAL)) usage_exit("cannot preload %s: %s", path, dlerror());
  cmd_basic();
}

static void cmd_init_rc(void) {
  void* lib = NULL;
  const ncclTuner_v3_t* t = load(plugin, &lib);
  void* ctx = NULL;
  ncclResult_t rc = t->init(nRanks, nNodes, logger, &ctx);
  int changed = rc == ncclSuccess ? replay(t, ctx) : 0;
  fact("rc=%d changed=%d", rc, changed);
  if (rc == ncclSuccess) t->destroy(ctx);
}

/* For footprint: thread names sorted as strcmp orders them. */
static int compare_names(const void* a, const void* b) {
  return strcmp((const char*)a, (const char*)b);
}

static void cmd_footprint(void) {
  void* lib = NULL;
  const ncclTuner_v3_t* t = load(plugin, &lib);
  void* ctx = NULL;
  if (t->init(nRanks, nNodes, logger, &ctx) != ncclSuccess) fail("init failed");
  int changed = replay(t, ctx);
  static char names[256][16];
  int n = 0;
  DIR* d = opendir("/proc/self/task");
  for (struct dirent* e; d != NULL && (e = readdir(d)) != NULL && n < 256;) {
    if (e->d_name[0] == '.') continue;
    char path[300];
    snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
    FILE* f = fopen(path, "r");
    if (f == NULL) continue;
    if (fgets(names[n], sizeof names[n], f) != NULL) {
      names[n][strcspn(names[n], "\n")] = '\0';
      for (char* c = names[n]; *c; c++)
        if (*c == ' ') *c = '_';
      n++;
    }
    fclose(f);
  }
  if (d != NULL) closedir(d);
  qsort(names, (size_t)n, sizeof names[0], compare_names);
  char list[256 * 17] = "";
  for (int i = 0; i < n; i++) {
    size_t l = strlen(list);
    snprintf(list + l, sizeof list - l, "%s%s", i ? "," : "", names[i]);
  }
  char perf[300];
  struct passwd* pw = getpwuid(geteuid());
  snprintf(perf, sizeof perf, "/tmp/hsperfdata_%s/%d", pw != NULL ? pw->pw_name : "?", (int)getpid());
  fact("changed=%d threads=%d thread_names=%s hsperfdata=%s", changed, n, list, access(perf, F_OK) == 0 ? "yes" : "no");
  t->destroy(ctx);
}

/* ---- found by the fourth hostile-host review: process-wide state, dlmopen, a logger that ends its thread ---- */

static void read_coredump_filter(char* out, size_t n) {
  out[0] = '\0';
  FILE* f = fopen("/proc/self/coredump_filter", "r");
  if (f == NULL) return;
  if (fgets(out, (int)n, f) == NULL) out[0] = '\0';
  out[strcspn(out, "\n")] = '\0';
  fclose(f);
}

static void cmd_process_state(void) {
  struct rlimit rl;
  getrlimit(RLIMIT_NOFILE, &rl);
  if (rl.rlim_max > 256 && rl.rlim_cur >= rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max - 1; /* a soft limit below the hard one, as hosts and shells set it */
    if (setrlimit(RLIMIT_NOFILE, &rl) != 0) usage_exit("setrlimit: %s", strerror(errno));
  }
  struct rlimit before;
  getrlimit(RLIMIT_NOFILE, &before);
  char filterBefore[32], filterAfter[32];
  /* the kernel's default (0x33), without the file-backed bits HotSpot sets: a process started by
   * a JVM (the test's) inherits that JVM's 0x3f, where the JVM's change would not show */
  FILE* cf = fopen("/proc/self/coredump_filter", "w");
  if (cf != NULL) {
    fputs("0x33", cf);
    fclose(cf);
  }
  read_coredump_filter(filterBefore, sizeof filterBefore);
  /* SIGRTMAX-1 and SIGRTMAX blocked and taken with sigtimedwait, as a signalfd host takes them */
  sigset_t rt;
  sigemptyset(&rt);
  sigaddset(&rt, SIGRTMAX - 1);
  sigaddset(&rt, SIGRTMAX);
  pthread_sigmask(SIG_BLOCK, &rt, NULL);
  void* lib = NULL;
  const ncclTuner_v3_t* t = load(plugin, &lib);
  void* ctx = NULL;
  if (t->init(nRanks, nNodes, logger, &ctx) != ncclSuccess) fail("init failed");
  int changed = replay(t, ctx);
  struct rlimit after;
  getrlimit(RLIMIT_NOFILE, &after);
  read_coredump_filter(filterAfter, sizeof filterAfter);
  int handled = 0; /* blocked real-time signals with a handler now: HotSpot's suspend/resume one */
  for (int sig = SIGRTMAX - 1; sig <= SIGRTMAX; sig++) {
    struct sigaction a;
    if (sigaction(sig, NULL, &a) == 0 && a.sa_handler != SIG_DFL) handled++;
  }
  int received = 0;
  for (int i = 0; i < 50; i++) {
    union sigval v = {.sival_int = i};
    sigqueue(getpid(), SIGRTMAX, v);
    struct timespec ts = {0, 200000000};
    siginfo_t info;
    if (sigtimedwait(&rt, &info, &ts) == SIGRTMAX) received++;
  }
  fact("changed=%d nofile_soft_before=%llu nofile_soft_after=%llu coredump_filter_before=%s coredump_filter_after=%s "
       "blocked_rt_handled=%d rt_received=%d",
       changed, (unsigned long long)before.rlim_cur, (unsigned long long)after.rlim_cur, filterBefore, filterAfter,
       handled, received);
  t->destroy(ctx);
}

/* Fully buffered stdout and stderr (fds 1 and 2 on DIR/fd1, DIR/fd2) holding unflushed bytes of
 * the host's across the first init: HotSpot's creation used to flush them. */
static void cmd_stdio_buffers(const char* dir) {
  char p1[4096], p2[4096];
  redirect_stdio(dir, p1, p2);
  static char outBuf[65536], errBuf[4096];
  setvbuf(stdout, outBuf, _IOFBF, sizeof outBuf);
  setvbuf(stderr, errBuf, _IOFBF, sizeof errBuf);
  fputs("host-stdout-pending\n", stdout);
  fputs("host-stderr-pending\n", stderr);
  void* lib = NULL;
  const ncclTuner_v3_t* t = load(plugin, &lib);
  int changed = one_comm(t);
  struct stat s1, s2;
  stat(p1, &s1);
  stat(p2, &s2);
  fflush(stdout);
  fflush(stderr);
  struct stat e1, e2;
  stat(p1, &e1);
  stat(p2, &e2);
  fact("changed=%d fd1_bytes=%lld fd2_bytes=%lld fd1_after_flush=%lld fd2_after_flush=%lld", changed,
       (long long)s1.st_size, (long long)s2.st_size, (long long)e1.st_size, (long long)e2.st_size);
}

/* The plugin loaded with dlmopen(LM_ID_NEWLM) (a host isolating its libraries). */
static void cmd_dlmopen(void) {
  void* lib = dlmopen(LM_ID_NEWLM, plugin, RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL) usage_exit("dlmopen %s: %s", plugin, dlerror());
  const ncclTuner_v3_t* t = (const ncclTuner_v3_t*)dlsym(lib, "ncclTunerPlugin_v3");
  if (!th_tuner_complete(t)) usage_exit("no v3 tuner in %s", plugin);
  void* ctx = NULL;
  ncclResult_t rc = t->init(nRanks, nNodes, logger, &ctx);
  fact("rc=%d changed=%d", rc, rc == ncclSuccess && ctx != NULL ? replay(t, ctx) : 0);
  if (rc == ncclSuccess && ctx != NULL) t->destroy(ctx);
}

/* A logger that ends its thread (pthread_exit) at the plugin's first WARN (logger-exit-notice: at
 * the shim's once-only INFO notice naming _JAVA_SR_SIGNUM instead), then a second communicator's
 * init on another thread, which must return (alarm: 30 s). */
static const ncclTuner_v3_t* exitT;
static int exitAtNotice;
static int exitAtEngine; /* logger-exit-engine: at the engine's INFO line naming the profile */
static void exiting_logger(ncclDebugLogLevel level, unsigned long flags, const char* file, int line, const char* fmt,
                           ...) {
  char msg[2048];
  va_list ap;
  va_start(ap, fmt);
  logLineAndText(msg, sizeof msg, level, fmt, ap);
  va_end(ap);
  (void)flags;
  (void)file;
  (void)line;
  if (exitAtEngine ? level == NCCL_LOG_INFO && strstr(msg, " profile ") != NULL :
      exitAtNotice ? level == NCCL_LOG_INFO && strstr(msg, "_JAVA_SR_SIGNUM") != NULL :
                     level == NCCL_LOG_WARN)
    pthread_exit((void*)1);
}
static void* exiting_init(void* unused) {
  (void)unused;
  void* ctx = NULL;
  exitT->init(nRanks, nNodes, exiting_logger, &ctx);
  return NULL; /* not reached where the logger ended the thread */
}
static void cmd_logger_exit(void) {
  void* lib = NULL;
  exitT = load(plugin, &lib);
  pthread_t th;
  void* ended = NULL;
  pthread_create(&th, NULL, exiting_init, NULL);
  pthread_join(th, &ended);
  alarm(30);
  void* ctx = NULL;
  ncclResult_t rc = exitT->init(nRanks, nNodes, logger, &ctx);
  alarm(0);
  fact("ended_in_logger=%d second_rc=%d second_changed=%d", ended == (void*)1, rc,
       rc == ncclSuccess && ctx != NULL ? replay(exitT, ctx) : 0);
  if (rc == ncclSuccess && ctx != NULL) exitT->destroy(ctx);
}
static void cmd_logger_exit_notice(void) {
  exitAtNotice = 1;
  cmd_logger_exit();
}
static void cmd_logger_exit_engine(void) {
  exitAtEngine = 1;
  cmd_logger_exit();
}

/* lines-in-call: which of the engine's lines the logger has seen when init and destroy return
 * (bridge 10: the shim logs them after the upcall, before the entry point returns). */
static atomic_int sawProfileLine, sawSummaryLine;
static void watching_logger(ncclDebugLogLevel level, unsigned long flags, const char* file, int line, const char* fmt,
                            ...) {
  char msg[2048];
  va_list ap;
  va_start(ap, fmt);
  logLineAndText(msg, sizeof msg, level, fmt, ap);
  va_end(ap);
  (void)flags;
  (void)file;
  (void)line;
  if (strstr(msg, " profile ") != NULL && strstr(msg, " sha256 ") != NULL) atomic_store(&sawProfileLine, 1);
  if (strstr(msg, "summary profile ") != NULL) atomic_store(&sawSummaryLine, 1);
}
/* stack-after-thread: HotSpot's detach leaves the guard zones it put at the low end of an attached
 * thread's stack PROT_NONE (16 KiB); glibc hands the cached stack to the host's next thread. */
typedef struct {
  const ncclTuner_v3_t* t;
  uintptr_t lo, hi;
  int changed;
  size_t atStartKib; /* of its own stack not read-write when the thread began */
} guardRun;
static size_t not_rw_kib(uintptr_t lo, uintptr_t hi);
/* the calling thread's stack (pthread_getattr_np) */
static void own_stack(void** lo, size_t* len) {
  pthread_attr_t a;
  if (pthread_getattr_np(pthread_self(), &a) == 0) {
    pthread_attr_getstack(&a, lo, len);
    pthread_attr_destroy(&a);
  }
}
static void* guard_thread(void* arg) {
  guardRun* r = arg;
  void* lo = NULL;
  size_t len = 0;
  own_stack(&lo, &len);
  r->lo = (uintptr_t)lo;
  r->hi = (uintptr_t)lo + len;
  r->atStartKib = not_rw_kib(r->lo, r->hi);
  void* ctx = NULL;
  if (r->t && r->t->init(nRanks, nNodes, logger, &ctx) == ncclSuccess && ctx != NULL) {
    r->changed = replay(r->t, ctx);
    r->t->destroy(ctx);
  }
  return NULL;
}
/* KiB of [lo, hi) that /proc/self/maps does not show read-write (unmapped counts too) */
static size_t not_rw_kib(uintptr_t lo, uintptr_t hi) {
  FILE* f = fopen("/proc/self/maps", "r");
  if (!f) fail("cannot read /proc/self/maps");
  size_t rw = 0;
  char line[4096];
  while (fgets(line, sizeof line, f)) {
    unsigned long a, b;
    char perm[8];
    if (sscanf(line, "%lx-%lx %7s", &a, &b, perm) != 3 || b <= lo || a >= hi) continue;
    if (perm[0] == 'r' && perm[1] == 'w') rw += (b > hi ? hi : b) - (a < lo ? lo : a);
  }
  fclose(f);
  return (hi - lo - rw) / 1024;
}
static __attribute__((noinline)) int guard_deep_frames(size_t n) {
  volatile char buf[1000];
  buf[0] = (char)n;
  if (n == 0) return buf[0];
  return guard_deep_frames(n - 1) + buf[0];
}
static atomic_int guardDeepReturned;
static void* guard_deep_thread(void* arg) {
  (void)arg;
  void* lo = NULL;
  size_t len = 0;
  own_stack(&lo, &len);
  guard_deep_frames(len / 1024 - 12);
  atomic_store(&guardDeepReturned, 1);
  return lo;
}
static void cmd_stack_after_thread(void) {
  void* lib = NULL;
  guardRun sys = {.t = load(plugin, &lib)}, own = {.t = sys.t};
  const size_t size = 1024 * 1024;
  pthread_attr_t a;
  pthread_t th;
  pthread_attr_init(&a);
  pthread_attr_setstacksize(&a, size);
  if (pthread_create(&th, &a, guard_thread, &sys) != 0) fail("pthread_create");
  pthread_join(th, NULL);
  size_t sysKib = not_rw_kib(sys.lo, sys.hi);
  /* the next thread of the same size takes the cached stack (glibc); a deep recursion there */
  void* deepLo = NULL;
  if (pthread_create(&th, &a, guard_deep_thread, NULL) != 0) fail("pthread_create");
  pthread_join(th, &deepLo);
  char* mem = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (mem == MAP_FAILED) fail("mmap");
  if (mprotect(mem, 4096, PROT_NONE) != 0) fail("mprotect");
  pthread_attr_t ownAttr;
  pthread_attr_init(&ownAttr);
  pthread_attr_setstack(&ownAttr, mem, size);
  if (pthread_create(&th, &ownAttr, guard_thread, &own) != 0) fail("pthread_create");
  pthread_join(th, NULL);
  pthread_attr_destroy(&ownAttr);
  /* threads of the default size (8 MiB here) and of 1 MiB that never call the plugin: glibc may give
   * them the cached stack of a thread the JVM or the shim ended (the shim's start thread, 8 MiB) */
  guardRun plain8 = {0}, plain1 = {0};
  if (pthread_create(&th, NULL, guard_thread, &plain8) != 0) fail("pthread_create");
  pthread_join(th, NULL);
  if (pthread_create(&th, &a, guard_thread, &plain1) != 0) fail("pthread_create");
  pthread_join(th, NULL);
  pthread_attr_destroy(&a);
  fact("plain_default_kib=%zu plain_1mib_kib=%zu sys_at_start_kib=%zu", plain8.atStartKib, plain1.atStartKib,
       sys.atStartKib);
  fact("changed_sys=%d protected_kib_sys=%zu deep_ok=%d deep_same_stack=%d changed_own=%d protected_kib_own=%zu",
       sys.changed, sysKib, atomic_load(&guardDeepReturned), (uintptr_t)deepLo == sys.lo, own.changed,
       not_rw_kib((uintptr_t)mem, (uintptr_t)mem + size));
}

static void cmd_lines_in_call(void) {
  void* lib = NULL;
  const ncclTuner_v3_t* t = load(plugin, &lib);
  void* ctx = NULL;
  ncclResult_t rc = t->init(nRanks, nNodes, watching_logger, &ctx);
  int atInit = atomic_load(&sawProfileLine);
  int changed = rc == ncclSuccess && ctx != NULL ? replay(t, ctx) : 0;
  int beforeDestroy = atomic_load(&sawSummaryLine);
  if (ctx != NULL) t->destroy(ctx);
  fact("rc=%d changed=%d profile_line_at_init=%d summary_before_destroy=%d summary_at_destroy=%d", rc, changed, atInit,
       beforeDestroy, atomic_load(&sawSummaryLine));
}

/* logger-jvm: a logger that acts at a HotSpot line ("JVM: ...", -Xlog to stdout) logged on the
 * calling thread while it is inside the plugin. */
static const ncclTuner_v3_t* jvmT;
static const char* jvmAct;
static atomic_int jvmActed;
static __thread int jvmArmed;
static __thread sigjmp_buf jvmJump;
static void jvm_logger(ncclDebugLogLevel level, unsigned long flags, const char* file, int line, const char* fmt, ...) {
  char msg[2048];
  va_list ap;
  va_start(ap, fmt);
  logLineAndText(msg, sizeof msg, level, fmt, ap);
  va_end(ap);
  (void)flags;
  (void)file;
  (void)line;
  if (!jvmArmed || strstr(msg, "JVM: ") == NULL) return;
  jvmArmed = 0;
  atomic_fetch_add(&jvmActed, 1);
  if (strcmp(jvmAct, "exit") == 0) pthread_exit((void*)1);
  if (strcmp(jvmAct, "jmp") == 0) siglongjmp(jvmJump, 1);
  void* ctx = NULL; /* reenter */
  if (jvmT->init(nRanks, nNodes, logger, &ctx) == ncclSuccess && ctx != NULL) jvmT->destroy(ctx);
}
static void* jvm_thread(void* unused) {
  (void)unused;
  void* ctx = NULL;
  jvmT->init(nRanks, nNodes, jvm_logger, &ctx);
  if (sigsetjmp(jvmJump, 1) == 0) {
    jvmArmed = 1;
    replay(jvmT, ctx);
  }
  jvmArmed = 0;
  return NULL;
}
static void cmd_logger_jvm(const char* act) {
  if (strcmp(act, "exit") != 0 && strcmp(act, "jmp") != 0 && strcmp(act, "reenter") != 0)
    usage_exit("logger-jvm: exit, jmp or reenter, not %s", act);
  jvmAct = act;
  void* lib = NULL;
  jvmT = load(plugin, &lib);
  void* first = NULL;
  /* HotSpot's lines go to the first init's logger */
  if (jvmT->init(nRanks, nNodes, jvm_logger, &first) == ncclSuccess && first != NULL) jvmT->destroy(first);
  pthread_t th;
  pthread_create(&th, NULL, jvm_thread, NULL);
  pthread_join(th, NULL);
  alarm(30);
  void* ctx = NULL;
  ncclResult_t rc = jvmT->init(nRanks, nNodes, logger, &ctx);
  int changed = rc == ncclSuccess && ctx != NULL ? replay(jvmT, ctx) : 0;
  alarm(0);
  fact("acted=%d second_rc=%d second_changed=%d", atomic_load(&jvmActed), rc, changed);
  if (rc == ncclSuccess && ctx != NULL) jvmT->destroy(ctx);
}

/* The commands (the header comment says what each does), by the argument each takes: none (plain),
 * a word, or a number (atol); nonascii-policy, with none of the three set, takes two words. */
typedef struct {
  const char* name;
  void (*plain)(void);
  void (*word)(const char*);
  void (*number)(long);
} command_t;

static const command_t kCommands[] = {
  {.name = "basic", .plain = cmd_basic},
  {.name = "reload", .number = cmd_reload},
  {.name = "two-copies", .word = cmd_two_copies},
  {.name = "fork-during-init", .number = cmd_fork_during_init},
  {.name = "stack", .number = cmd_stack},
  {.name = "signals", .plain = cmd_signals},
  {.name = "locale", .plain = cmd_locale},
  {.name = "capture", .word = cmd_capture},
  {.name = "rlimit-as", .number = cmd_rlimit_as},
  {.name = "preload-libjvm", .word = cmd_preload_libjvm},
  {.name = "sigchld", .word = cmd_sigchld},
  {.name = "setenv-race", .plain = cmd_setenv_race},
  {.name = "coroutine", .number = cmd_coroutine},
  {.name = "cancel", .number = cmd_cancel},
  {.name = "fds", .number = cmd_fds},
  {.name = "host-crash", .word = cmd_host_crash},
  {.name = "cloexec", .plain = cmd_cloexec},
  {.name = "logger-lock", .plain = cmd_logger_lock},
  {.name = "closed-stdio", .word = cmd_closed_stdio},
  {.name = "fenv", .word = cmd_fenv},
  {.name = "jvm-after", .word = cmd_jvm_after},
  {.name = "during-init", .plain = cmd_during_init},
  {.name = "setenv-storm", .number = cmd_setenv_storm},
  {.name = "faulthandler", .word = cmd_faulthandler},
  {.name = "nonascii-policy"},
  {.name = "sigwindow", .plain = cmd_sigwindow},
  {.name = "sr-window", .number = cmd_sr_window},
  {.name = "locale-window", .plain = cmd_locale_window},
  {.name = "thread-locale", .plain = cmd_thread_locale},
  {.name = "spawn-window", .plain = cmd_spawn_window},
  {.name = "runtime-slots", .plain = cmd_runtime_slots},
  {.name = "init-rc", .plain = cmd_init_rc},
  {.name = "footprint", .plain = cmd_footprint},
  {.name = "process-state", .plain = cmd_process_state},
  {.name = "stdio-buffers", .word = cmd_stdio_buffers},
  {.name = "dlmopen", .plain = cmd_dlmopen},
  {.name = "logger-exit", .plain = cmd_logger_exit},
  {.name = "logger-exit-notice", .plain = cmd_logger_exit_notice},
  {.name = "logger-exit-engine", .plain = cmd_logger_exit_engine},
  {.name = "lines-in-call", .plain = cmd_lines_in_call},
  {.name = "stack-after-thread", .plain = cmd_stack_after_thread},
  {.name = "logger-jvm", .word = cmd_logger_jvm},
};

int main(int argc, char** argv) {
  if (argc == 2 && strcmp(argv[1], "fdcount-child") == 0) return fdcount_child();
  facts = stdout;
  logOut = stdout;
  int i = 1;
  for (; i < argc && argv[i][0] == '-'; i += 2) {
    if (i + 1 >= argc) usage_exit("%s needs a value", argv[i]);
    if (strcmp(argv[i], "--plugin") == 0) plugin = argv[i + 1];
    else if (strcmp(argv[i], "--trace") == 0) tracePath = argv[i + 1];
    else if (strcmp(argv[i], "--log") == 0) {
      logOut = fopen(argv[i + 1], "w");
      if (!logOut) usage_exit("cannot open %s", argv[i + 1]);
    } else usage_exit("unknown option %s", argv[i]);
  }
  if (!plugin || !tracePath || i >= argc)
    usage_exit("usage: guest-host --plugin P --trace T COMMAND [ARG] (see guest_host.c)");
  read_trace();
  const char* cmd = argv[i];
  const char* arg = i + 1 < argc ? argv[i + 1] : NULL;
  const command_t* c = NULL;
  for (size_t k = 0; k < sizeof kCommands / sizeof kCommands[0] && !c; k++)
    if (strcmp(cmd, kCommands[k].name) == 0) c = &kCommands[k];
  if (!c) usage_exit("unknown command %s", cmd);
  if (c->plain) c->plain();
  else if (!arg) usage_exit("%s needs an argument", cmd);
  else if (c->word) c->word(arg);
  else if (c->number) c->number(atol(arg));
  else {
    if (i + 2 >= argc) usage_exit("nonascii-policy DIR utf8|latin1");
    cmd_nonascii_policy(arg, argv[i + 2]);
  }
  fact("done warn=%lu", atomic_load(&warns));
  fflush(NULL);
  return atomic_load(&failures) ? TH_EXIT_MISBEHAVIOUR : TH_EXIT_OK;
}
