/*
 * hh_compiled -- the compiled policy form (POLICY.yaml.compiled) against its YAML.
 *   hh_compiled YAML OTHER.compiled    (YAML.compiled must exist: the intact compiled form;
 *                                       OTHER.compiled: the compiled form of another YAML)
 * Every case is its own process (fork before the plugin is loaded): init(nRanks 2, nNodes 2) under
 * tuner v$HH_VER (default 6), the whole-grid fingerprint (hhc2.h), finalize. The baseline is the
 * YAML alone (no .compiled); every other case must give its decisions and chunk sizes, return 0
 * everywhere, and finish within 120 s: intact, truncated, byte-flipped, extended, another YAML's
 * compiled body under this YAML's key, a FIFO, /dev/zero, /dev/urandom, a directory, a 256 MiB
 * sparse file. Then one process inits 40 communicators while a thread rewrites the file in place.
 */
#include "hhc2.h"
#include <sys/wait.h>

static const char* g_yaml;
static char g_comp[4096];
static unsigned char *g_orig, *g_other;
static size_t g_origLen, g_otherLen;
static atomic_int g_fromCompiled, g_fromYaml;

static void logger(ncclDebugLogLevel level, unsigned long flags, const char* file, int line, const char* fmt, ...) {
  (void)flags, (void)file, (void)line;
  char buf[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (level == NCCL_LOG_WARN) atomic_fetch_add(&g_warns, 1);
  else atomic_fetch_add(&g_infos, 1);
  if (strstr(buf, "read from its compiled form")) atomic_fetch_add(&g_fromCompiled, 1);
  if (strstr(buf, "parsed from its YAML")) atomic_fetch_add(&g_fromYaml, 1);
  if (level == NCCL_LOG_WARN || getenv("HH_VERBOSE"))
    fprintf(stderr, "  LOG %s %s\n", level == NCCL_LOG_WARN ? "WARN" : "INFO", buf);
}

static unsigned char* slurp(const char* p, size_t* n) {
  FILE* f = fopen(p, "rb");
  if (!f) {
    printf("SETUP cannot read %s\n", p);
    exit(2);
  }
  fseek(f, 0, SEEK_END);
  *n = (size_t)ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char* b = malloc(*n + 1);
  if (fread(b, 1, *n, f) != *n) exit(2);
  fclose(f);
  return b;
}

static void put(const unsigned char* b, size_t n) {
  unlink(g_comp);
  rmdir(g_comp);
  FILE* f = fopen(g_comp, "wb");
  if (!f || fwrite(b, 1, n, f) != n || fclose(f)) {
    printf("SETUP cannot write %s\n", g_comp);
    exit(2);
  }
}

typedef struct {
  unsigned long long hash, chunk;
  long changed, fails, warns, fromC, fromY;
  int status;
} res_t;

/* one process: the fingerprint of one init */
static res_t run_case(void) {
  res_t r = {0};
  int pfd[2];
  if (pipe(pfd)) exit(2);
  pid_t pid = fork();
  if (pid == 0) {
    close(pfd[0]);
    setenv("NCCL_TUNER_JAVA_POLICY", g_yaml, 1);
    g_logger = logger;
    hh_tuner t;
    hh_open(&t, getenv("HH_VER") ? atoi(getenv("HH_VER")) : 6);
    void* ctx = hh_init(&t, 2, 2, 0x1234);
    hh_fp_t fp = hh_fingerprint(&t, ctx, 1);
    hh_fin(&t, ctx);
    dprintf(pfd[1], "%llu %llu %ld %d %d %d %d\n", (unsigned long long)fp.hash, (unsigned long long)fp.chunk,
            fp.changed, atomic_load(&g_fails), atomic_load(&g_warns), atomic_load(&g_fromCompiled),
            atomic_load(&g_fromYaml));
    _exit(0);
  }
  close(pfd[1]);
  double t0 = hh_now();
  int st = 0, done = 0;
  while (!done) {
    pid_t w = waitpid(pid, &st, WNOHANG);
    if (w == pid) done = 1;
    else if (hh_now() - t0 > 120) {
      kill(pid, SIGKILL);
      waitpid(pid, &st, 0);
      r.status = -1;
      close(pfd[0]);
      return r;
    } else usleep(20000);
  }
  char buf[512] = {0};
  ssize_t n = read(pfd[0], buf, sizeof buf - 1);
  close(pfd[0]);
  r.status = st;
  int fc = 0, fy = 0, fl = 0, wn = 0;
  if (n <= 0 || sscanf(buf, "%llu %llu %ld %d %d %d %d", &r.hash, &r.chunk, &r.changed, &fl, &wn, &fc, &fy) != 7)
    r.status = st ? st : -2;
  r.fails = fl, r.warns = wn, r.fromC = fc, r.fromY = fy;
  return r;
}

static res_t g_base;
static int g_cases, g_breaks;
static void check(const char* what, res_t r, int expectCompiled) {
  g_cases++;
  const char* src = r.fromC ? "compiled" : r.fromY ? "yaml" : "?";
  if (r.status == -1) {
    FAIL("%s: no end within 120 s (killed)", what);
    g_breaks++;
    return;
  }
  if (r.status != 0) {
    FAIL("%s: child status 0x%x (%s)", what, r.status, WIFSIGNALED(r.status) ? strsignal(WTERMSIG(r.status)) : "exit");
    g_breaks++;
    return;
  }
  int bad = 0;
  if (r.hash != g_base.hash || r.chunk != g_base.chunk) {
    FAIL("%s: decisions differ from the YAML alone's (hash %016llx chunk %016llx changed %ld; YAML alone %016llx "
         "%016llx %ld; read from %s)",
         what, r.hash, r.chunk, r.changed, g_base.hash, g_base.chunk, g_base.changed, src);
    bad = 1;
  }
  if (r.fails) FAIL("%s: %ld checks failed in the child", what, r.fails), bad = 1;
  if (expectCompiled >= 0 && (expectCompiled ? !r.fromC : r.fromC))
    FAIL("%s: read from %s, expected %s", what, src, expectCompiled ? "compiled" : "yaml"), bad = 1;
  g_breaks += bad;
  printf("%s %s: same decisions=%d read from %s warns %ld\n", bad ? "BAD" : "OK ", what, !bad, src, r.warns);
  fflush(stdout);
}

static atomic_int g_stop;
static void* rewriter(void* a) {
  (void)a;
  unsigned k = 0;
  while (!atomic_load(&g_stop)) {
    int fd = open(g_comp, O_WRONLY | O_CREAT, 0644);
    if (fd < 0) continue;
    switch (k++ % 4) {
      case 0:
        (void)!write(fd, g_orig, g_origLen);
        (void)!ftruncate(fd, g_origLen);
        break;
      case 1: /* the other body under this key, in place */
        (void)!write(fd, g_orig, 24);
        (void)!write(fd, g_other + 24, g_otherLen - 24);
        (void)!ftruncate(fd, g_otherLen);
        break;
      case 2: (void)!ftruncate(fd, g_origLen / 2); break;
      case 3:
        (void)!pwrite(fd, g_other + g_origLen / 3, 64 < g_otherLen - g_origLen / 3 ? 64 : 1, g_origLen / 3);
        break;
    }
    close(fd);
  }
  return NULL;
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: hh_compiled YAML OTHER.compiled\n");
    return 2;
  }
  g_yaml = argv[1];
  snprintf(g_comp, sizeof g_comp, "%s.compiled", g_yaml);
  g_orig = slurp(g_comp, &g_origLen);
  g_other = slurp(argv[2], &g_otherLen);
  const char* only = getenv("HH_ONLY");
  printf("yaml %s, compiled %zu bytes, other %zu bytes\n", g_yaml, g_origLen, g_otherLen);

  unlink(g_comp);
  g_base = run_case();
  if (g_base.status) {
    printf("SETUP the YAML alone failed: status 0x%x\n", g_base.status);
    return 2;
  }
  printf("BASE YAML alone: hash %016llx chunk %016llx changed %ld of the grid, read from %s\n", g_base.hash,
         g_base.chunk, g_base.changed, g_base.fromY ? "yaml" : "?");
  char what[256];
  unsigned char* buf = malloc(g_origLen + g_otherLen + 64);

  if (!only || strstr(only, "intact")) {
    put(g_orig, g_origLen);
    check("intact", run_case(), 1);
  }
  if (!only || strstr(only, "trunc")) {
    size_t cuts[] = {0,
                     1,
                     4,
                     8,
                     23,
                     24,
                     25,
                     64,
                     g_origLen / 4,
                     g_origLen / 2,
                     g_origLen - 40,
                     g_origLen - 33,
                     g_origLen - 32,
                     g_origLen - 1};
    for (size_t i = 0; i < sizeof cuts / sizeof *cuts; i++) {
      put(g_orig, cuts[i]);
      snprintf(what, sizeof what, "truncated to %zu", cuts[i]);
      check(what, run_case(), 0);
    }
  }
  if (!only || strstr(only, "flip")) {
    int nflip = getenv("HH_FLIPS") ? atoi(getenv("HH_FLIPS")) : 40;
    for (int i = 0; i < nflip; i++) {
      size_t at = i < 24 ? (size_t)i : 24 + (size_t)((unsigned long long)(i - 24) * 2654435761u % (g_origLen - 24));
      memcpy(buf, g_orig, g_origLen);
      buf[at] ^= (unsigned char)(1u << (i % 8));
      put(buf, g_origLen);
      snprintf(what, sizeof what, "bit %d of byte %zu flipped", i % 8, at);
      check(what, run_case(), -1);
    }
  }
  if (!only || strstr(only, "extend")) {
    memcpy(buf, g_orig, g_origLen);
    memset(buf + g_origLen, 0, 64);
    put(buf, g_origLen + 64);
    check("64 zero bytes appended", run_case(), -1);
  }
  if (!only || strstr(only, "craft")) {
    memcpy(buf, g_orig, 24);
    memcpy(buf + 24, g_other + 24, g_otherLen - 24);
    put(buf, g_otherLen);
    check("another YAML's compiled body under this YAML's 24-byte key", run_case(), -1);
  }
  if (!only || strstr(only, "special")) {
    unlink(g_comp);
    mkfifo(g_comp, 0644);
    check("a FIFO (no writer)", run_case(), 0);
    unlink(g_comp);
    const char* devs[] = {"/dev/zero", "/dev/urandom", "/dev/null"};
    for (int i = 0; i < 3; i++) {
      symlink(devs[i], g_comp);
      snprintf(what, sizeof what, "a symlink to %s", devs[i]);
      check(what, run_case(), 0);
      unlink(g_comp);
    }
    mkdir(g_comp, 0755);
    check("a directory", run_case(), 0);
    rmdir(g_comp);
    int fd = open(g_comp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    (void)!write(fd, g_orig, g_origLen);
    (void)!ftruncate(fd, 256l << 20);
    close(fd);
    check("intact + sparse zeros to 256 MiB", run_case(), -1);
  }
  if (!only || strstr(only, "concurrent")) {
    /* one process, 40 communicators while the file is rewritten in place */
    put(g_orig, g_origLen);
    pid_t pid = fork();
    if (pid == 0) {
      setenv("NCCL_TUNER_JAVA_POLICY", g_yaml, 1);
      g_logger = logger;
      hh_tuner t;
      hh_open(&t, getenv("HH_VER") ? atoi(getenv("HH_VER")) : 6);
      pthread_t th;
      pthread_create(&th, NULL, rewriter, NULL);
      int diff = 0;
      for (int i = 0; i < 40; i++) {
        void* ctx = hh_init(&t, 2, 2, 0x1234 + i);
        hh_fp_t fp = hh_fingerprint(&t, ctx, 1);
        hh_fin(&t, ctx);
        if (fp.hash != g_base.hash || fp.chunk != g_base.chunk) {
          diff++;
          printf("BAD concurrent rewrite: communicator %d decides differently (hash %016llx changed %ld)\n", i,
                 (unsigned long long)fp.hash, fp.changed);
        }
      }
      atomic_store(&g_stop, 1);
      pthread_join(th, NULL);
      printf("%s concurrent rewrite: %d of 40 communicators differ; inits read the compiled form %d, the YAML %d; "
             "fails %d\n",
             diff ? "BAD" : "OK ", diff, atomic_load(&g_fromCompiled), atomic_load(&g_fromYaml), atomic_load(&g_fails));
      fflush(stdout);
      _exit(diff || atomic_load(&g_fails) ? 3 : 0);
    }
    int st;
    waitpid(pid, &st, 0);
    g_cases++;
    if (st) FAIL("concurrent rewrite: child status 0x%x", st), g_breaks++;
  }
  put(g_orig, g_origLen);
  printf("END cases %d broken %d fails %d\n", g_cases, g_breaks, atomic_load(&g_fails));
  return g_breaks || atomic_load(&g_fails) ? 3 : 0;
}
