/*
 * hh_opts -- NCCL_TUNER_JAVA_OPTS with compiler options, good and bogus, each in its own process
 * (fork before the plugin is loaded; policy: $NCCL_TUNER_JAVA_POLICY). Per value: every entry point
 * returns 0; the child ends by itself (no crash, no exit from inside the plugin, within 90 s);
 * either the decisions equal the run without options (whole-grid fingerprint, stride 4) or the
 * plugin stepped aside (nothing changed) with exactly one WARN; stdout/stderr get nothing from the
 * plugin; the host state (fds, mask, dispositions but SEGV/BUS/FPE/ILL and real-time signals,
 * locale, FP, env, cwd, umask) is as before. Extra values: hh_opts 'OPTS' ...
 */
#include "hhc2.h"
#include <sys/wait.h>

static const char* k_opts[] = {
  "",
  "-XX:+TieredCompilation",
  "-XX:+TieredCompilation -XX:CICompilerCount=2",
  "-XX:CICompilerCount=2",
  "-XX:CICompilerCount=0",
  "-XX:CICompilerCount=-1",
  "-XX:CICompilerCount=abc",
  "-XX:CICompilerCount=100000",
  "-XX:CICompilerCount=99999999999999999999",
  "-Xint",
  "-Xcomp",
  "-XX:TieredStopAtLevel=1",
  "-XX:TieredStopAtLevel=0",
  "-XX:TieredStopAtLevel=9",
  "-XX:+TieredCompilation -XX:TieredStopAtLevel=1",
  "-XX:-UseCompiler",
  "-XX:CompileThresholdScaling=0",
  "-XX:CompileThresholdScaling=-1",
  "-XX:CompileThresholdScaling=1e308",
  "-XX:CompileThreshold=1",
  "-XX:+UseJVMCICompiler",
  "-XX:+UnlockExperimentalVMOptions -XX:+UseJVMCICompiler",
  "-XX:+BackgroundCompilation",
  "-XX:-BackgroundCompilation",
  "-XX:CompileCommand=exclude,*.*",
  "-XX:CompileCommand=compileonly,nothing.Nothing::x",
  "-XX:CompileCommand=bogus",
  "-XX:CompileCommand=quiet -XX:CompileCommand=print,*.*",
  "-XX:ReservedCodeCacheSize=1",
  "-XX:ReservedCodeCacheSize=2496k",
  "-XX:+SegmentedCodeCache -XX:ReservedCodeCacheSize=3m",
  "-XX:CICompilerCount=1 -XX:+CICompilerCountPerCPU",
  "-XX:+UnlockDiagnosticVMOptions -XX:+AOTReplayTraining",
  "-XX:AOTCache=/nonexistent.aot",
  "-XX:AOTMode=on",
  "-XX:AOTMode=bogus",
  "-XX:+UnlockDiagnosticVMOptions -XX:+StressLCM",
  "-XX:+UnlockDiagnosticVMOptions -XX:-InlineWarmCalls -XX:MaxInlineSize=0",
  "-XX:+UnlockDiagnosticVMOptions -XX:+PrintCompilation",
  "-XX:+PrintCompilation",
  "-XX:+UnlockDiagnosticVMOptions -XX:+LogCompilation",
  "-XX:+UnlockDiagnosticVMOptions -XX:+PrintInlining",
  "-XX:+UseSerialGC -XX:+UseParallelGC",
  "-Xss64k",
  "-Xmx1m",
  "-XX:",
  "-XX:+",
  "-XX:=",
  "-XX:+TieredCompilation\t-XX:CICompilerCount=1",
  "-XX:CICompilerCount=1 -XX:CICompilerCount=1 -XX:CICompilerCount=2 -XX:+TieredCompilation",
};

static void logger(ncclDebugLogLevel level, unsigned long flags, const char* file, int line, const char* fmt, ...) {
  (void)flags, (void)file, (void)line;
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (level == NCCL_LOG_WARN) {
    atomic_fetch_add(&g_warns, 1);
    dprintf(900, "    WARN %.240s\n", buf);
  } else atomic_fetch_add(&g_infos, 1);
}

static int documented_signal(int s) {
  return s == SIGSEGV || s == SIGBUS || s == SIGFPE || s == SIGILL || s >= SIGRTMIN;
}

static int child(const char* opts, unsigned long long* hash, long* changed) {
  if (*opts) setenv("NCCL_TUNER_JAVA_OPTS", opts, 1);
  g_logger = logger;
  hh_state a, b;
  hh_snap(&a);
  hh_tuner t;
  hh_open(&t, 6);
  void* ctx = hh_init(&t, 2, 2, 0x77);
  hh_fp_t fp = hh_fingerprint(&t, ctx, 4);
  hh_fin(&t, ctx);
  /* 200,000 more calls: past the C2 threshold (CompileThresholdScaling 10) */
  ctx = hh_init(&t, 2, 2, 0x78);
  for (int i = 0; i < 20; i++) {
    hh_fp_t f2 = hh_fingerprint(&t, ctx, 4);
    if (f2.hash != fp.hash) FAIL("fingerprint %d of a communicator differs from the first (JIT?)", i);
  }
  hh_fin(&t, ctx);
  hh_snap(&b);
  for (int i = 1; i < NSIG; i++)
    if (documented_signal(i))
      b.act[i] = a.act[i], sigismember(&a.mask, i) ? sigaddset(&b.mask, i) : sigdelset(&b.mask, i);
  for (int i = 0; i < HH_MAXFD; i++)
    if (!a.fd[i][0] && b.fd[i][0] && b.fdflags[i] == FD_CLOEXEC &&
        (strstr(b.fd[i], "/lib/modules") || (strstr(b.fd[i], ".jar") && !getenv("HH_STRICT_FD")))) {
      /* the failed JVM's modules image (documented) and the engine jar the JVM keeps open (close
       * on exec; seen in every process; HH_STRICT_FD=1 counts it) */
      printf("NOTE fd %d '%s' open after the calls (FD_CLOEXEC)\n", i, b.fd[i]);
      b.fd[i][0] = 0, b.fdflags[i] = -1;
    }
  hh_state_diff(&a, &b, "state");
  *hash = fp.hash;
  *changed = fp.changed;
  return atomic_load(&g_fails);
}

int main(int argc, char** argv) {
  int n = argc > 1 ? argc - 1 : (int)(sizeof k_opts / sizeof *k_opts);
  unsigned long long base = 0;
  long baseChanged = 0;
  int breaks = 0;
  fflush(stdout);
  for (int i = 0; i < n + (argc > 1); i++) {
    const char* o = argc > 1 ? (i == 0 ? "" : argv[i]) : k_opts[i];
    int pfd[2], ofd[2];
    if (pipe(pfd) || pipe(ofd)) return 2;
    double t0 = hh_now();
    pid_t pid = fork();
    if (pid == 0) {
      close(pfd[0]);
      close(ofd[0]);
      dup2(pfd[1], 900);
      dup2(pfd[1], 1); /* the host's FAIL lines; any other line on stdout is stray */
      dup2(ofd[1], 2); /* whatever reaches stderr is stray */
      unsigned long long h = 0;
      long ch = 0;
      int f = child(o, &h, &ch);
      dprintf(900, "R %llu %ld %d %d\n", h, ch, f, atomic_load(&g_warns));
      _exit(0);
    }
    close(pfd[1]);
    close(ofd[1]);
    fcntl(ofd[0], F_SETFL, O_NONBLOCK);
    fcntl(pfd[0], F_SETFL, O_NONBLOCK);
    char rep[8192] = {0}, junk[4096];
    size_t rl = 0, stray = 0;
    int st = 0, killed = 0;
    for (;;) {
      ssize_t k;
      while ((k = read(pfd[0], rep + rl, sizeof rep - 1 - rl)) > 0) rl += k;
      while ((k = read(ofd[0], junk, sizeof junk)) > 0) {
        if (!stray) fprintf(stdout, "  stray stderr: %.*s\n", (int)(k > 200 ? 200 : k), junk);
        stray += k;
      }
      if (waitpid(pid, &st, WNOHANG) == pid) break;
      if (hh_now() - t0 > 90) kill(pid, SIGKILL), killed = 1;
      usleep(10000);
    }
    ssize_t k;
    while ((k = read(pfd[0], rep + rl, sizeof rep - 1 - rl)) > 0) rl += k;
    close(pfd[0]);
    close(ofd[0]);
    for (char *l = rep, *e; *l; l = e + 1) { /* stray stdout lines: not the host's */
      e = strchr(l, '\n');
      if (!e) e = l + strlen(l);
      if (strncmp(l, "R ", 2) && strncmp(l, "FAIL ", 5) && strncmp(l, "    WARN ", 9) && strncmp(l, "NOTE ", 5) &&
          e > l) {
        if (!stray) fprintf(stdout, "  stray stdout: %.*s\n", (int)(e - l > 200 ? 200 : e - l), l);
        stray += (size_t)(e - l) + 1;
      }
      if (!*e) break;
    }
    char* r = strstr(rep, "R ");
    unsigned long long h = 0;
    long ch = -1;
    int f = -1, w = -1;
    if (r) sscanf(r, "R %llu %ld %d %d", &h, &ch, &f, &w);
    if (i == 0) base = h, baseChanged = ch;
    const char* verdict;
    int bad = 0;
    if (killed) verdict = "HANG (killed after 90 s)", bad = 1;
    else if (st) verdict = WIFSIGNALED(st) ? "CRASH" : "EXIT from inside", bad = 1;
    else if (!r) verdict = "no report", bad = 1;
    else if (f) verdict = "host checks failed", bad = 1;
    else if (h == base && w == 0) verdict = "ran, same decisions";
    else if (ch == 0 && w == 1) verdict = "stepped aside with one WARN";
    else if (h == base) verdict = "same decisions but WARNs", bad = w > 1;
    else verdict = "other decisions", bad = 1;
    if (stray) bad = 1;
    breaks += bad;
    printf("%s opts '%s': %s (status 0x%x, %.1f s, warns %d, changed %ld of %ld, stray stdout/stderr bytes %zu)\n",
           bad ? "BAD" : "OK ", o, verdict, st, hh_now() - t0, w, ch, baseChanged, stray);
    if (bad || getenv("HH_VERBOSE")) printf("%s", rep);
    fflush(stdout);
  }
  printf("END values %d broken %d\n", n, breaks);
  return breaks ? 3 : 0;
}
