/*
 * jvm_options.c -- the options the shim creates the JVM with: one table, a comment per row
 * (NCCL keeps its constants as tables too, src/graph/tuning.cc), and the user's own options from
 * NCCL_TUNER_JAVA_OPTS, checked against an allow-list before the JVM is created.
 *
 * make/dist.mk's DIST_AOT_OPTS repeats the rows that the JDK 25 AOT cache must see at training
 * time (bin/nccl-tuner-aot): keep the two in step.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "jvm_internal.h"

/* Extra options from NCCL_TUNER_JAVA_OPTS must look like these; others (e.g. -version, -help,
 * agents) are refused before the JVM is created, and so are options that hand the process to
 * another program or stop it (-XX:OnError, -XX:OnOutOfMemoryError, -XX:+ShowMessageBoxOnError,
 * option files). A value the JVM itself refuses, even one that makes HotSpot exit() during
 * creation, fails the start through the exit and abort hooks. */
static int allowedOption(const char* o) {
  static const char* prefixes[] = {"-D",    "-Xmx",        "-Xms", "-Xss", "-Xlog", "-XX:", "-verbose:", "-Xshare:",
                                   "-Xint", "-Xcheck:jni", "-ea",  "-da",  "-esa",  "-dsa", NULL};
  /* Refused too, found by hostile hosts: PrintFlagsInitial, PrintFlagsRanges and
   * PrintSharedArchiveAndExit print to the host's stdout and end the process with exit 0;
   * PauseAtStartup stops the JVM until a file in the working directory is removed; PrintAssembly's
   * note and java.lang.invoke's traces print around the hooks (on stdout before System.out is
   * NCCL's logger). Epsilon never frees: every init allocates, so the heap fills and an
   * OutOfMemoryError is thrown inside the upcall machinery, outside any catch, and HotSpot aborts
   * the host (6 of 6 runs of 1,000 replays); the Abort* options abort the JVM on a slow safepoint or
   * VM operation, a loaded host's normal. (PrintFlagsFinal prints through the hooks and goes on.)
 * Files: LogVMOutput wrote hotspot_pid<pid>.log into the host's working directory, -Xshare:dump a
 * 14 MB classes.jsa into the runtime, which later JVMs used unasked (both found by a hostile host);
 * the other archive and dump options, heap dumps, perf data (hsperfdata in /tmp) and perf maps
 * write files the same way. -Xlog:...:file=PATH and a flight recording's filename= name their file
 * and stay. */
  // clang-format off
  static const char* refused[] = {
    "-XX:VMOptionsFile", "-XX:Flags", "-XX:OnError", "-XX:OnOutOfMemoryError", "-XX:+ShowMessageBoxOnError",
    "-XX:CompileCommandFile", "-XX:+PrintVMOptions", "-XX:+PrintCommandLineFlags", "-Xlog:help",
    "-XX:+PrintFlagsInitial", "-XX:+PrintFlagsRanges", "-XX:+PrintSharedArchiveAndExit",
    "-XX:+PauseAtStartup", "-XX:+PrintAssembly",
    "-Djava.lang.invoke.MethodHandle.TRACE", "-Djava.lang.invoke.MethodHandle.DUMP",
    "-XX:+UseEpsilonGC", "-XX:+AbortVMOnVMOperationTimeout", "-XX:+AbortVMOnSafepointTimeout",
    "-XX:+LogVMOutput", "-XX:LogFile", "-Xshare:dump", "-XX:ArchiveClassesAtExit", "-XX:AOTCacheOutput",
    "-XX:AOTConfiguration", "-XX:AOTMode=record", "-XX:AOTMode=create", "-XX:DumpLoadedClassList", "-XX:+HeapDumpOnOutOfMemoryError",
    "-XX:+HeapDumpBeforeFullGC", "-XX:+HeapDumpAfterFullGC", "-XX:HeapDumpPath", "-XX:+UsePerfData",
    "-XX:+DumpPerfMapAtExit", "-XX:+RecordDynamicDumpInfo",
    /* the fourth hostile-host review: AbortVMOnException aborted the host inside init (SIGABRT, no
     * WARN), ReplayCompiles made it exit(1) with a line on its stderr; the others end or abort the
     * process on an OutOfMemoryError or a failed compilation, or raise RLIMIT_NOFILE (MaxFDLimit,
     * off in the table below) */
    "-XX:AbortVMOnException", "-XX:+AbortVMOnCompilationFailure", "-XX:+ReplayCompiles", "-XX:ReplayDataFile",
    "-XX:+ExitOnOutOfMemoryError", "-XX:+CrashOnOutOfMemoryError", "-XX:ErrorHandlerTest", "-XX:+MaxFDLimit",
    /* the hostile host of 2026-12-04: a JVMCI compiler (none in the runtime) made the host exit(1) in
     * init from a compiler thread, silently; CICompilerCountPerCPU printed its override of the
     * table's one compiler thread on the host's stderr (and would start one per few cores);
     * LogCompilation wrote hotspot_pid<pid>.log into the working directory (as LogVMOutput) and
     * kept it open; the print command tried the disassembler and left libjvm.so open */
    "-XX:+UseJVMCICompiler", "-XX:+EnableJVMCI", "-XX:+EagerJVMCI", "-XX:+UseJVMCINativeLibrary",
    "-XX:+CICompilerCountPerCPU", "-XX:+LogCompilation", "-XX:CompileCommand=print", "-XX:CompileCommand=PrintAssembly",
    NULL};
  // clang-format on
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

/* The file an option names, for the options that open one at creation: -XX:AOTCache=,
 * -XX:SharedArchiveFile=, -XX:CompilerDirectivesFile= and -Xlog:...:file=PATH[:...]; NULL for the
 * others. Its text goes to out (n bytes). */
static const char* optionPath(const char* o, char* out, size_t n) {
  static const char* valued[] = {"-XX:AOTCache=", "-XX:SharedArchiveFile=", "-XX:CompilerDirectivesFile=", NULL};
  const char* v = NULL;
  for (int i = 0; valued[i] != NULL && v == NULL; i++)
    if (strncmp(o, valued[i], strlen(valued[i])) == 0) v = o + strlen(valued[i]);
  if (v == NULL && strncmp(o, "-Xlog:", 6) == 0) {
    const char* f = strstr(o, ":file=");
    if (f != NULL) v = f + 6;
  }
  if (v == NULL) return NULL;
  size_t len = strcspn(v, strncmp(o, "-Xlog:", 6) == 0 ? ":," : "");
  if (len >= n) len = n - 1;
  memcpy(out, v, len);
  out[len] = '\0';
  if (len >= 2 && out[0] == '"' && out[len - 1] == '"') { /* -Xlog's quoted file name */
    memmove(out, out + 1, len - 2);
    out[len - 2] = '\0';
  }
  return out;
}

/* Why a file an option names is no place for the JVM (NULL: it is fine): a FIFO or a device made
 * the first init wait for ever (-XX:AOTCache, -XX:SharedArchiveFile, -Xlog:gc:file=,
 * -XX:CompilerDirectivesFile naming a FIFO nobody writes), and /dev/stdout or /proc/self/fd/2 put
 * the JVM's log on the host's own output (found by the fourth hostile-host review). A file that
 * does not exist yet is fine: -Xlog creates it. */
static const char* unsafePath(const char* path) {
  if (strncmp(path, "/dev/", 5) == 0 || strncmp(path, "/proc/", 6) == 0) return "a device or a /proc file";
  struct stat st;
  if (stat(path, &st) != 0) return NULL;
  if (S_ISFIFO(st.st_mode)) return "a FIFO";
  if (S_ISDIR(st.st_mode)) return "a directory";
  if (!S_ISREG(st.st_mode)) return "a device or socket";
  return NULL;
}

static int isGcChoice(const char* o) {
  size_t n = strlen(o);
  return strncmp(o, "-XX:+Use", 8) == 0 && n > 10 && strcmp(o + n - 2, "GC") == 0;
}

HIDDEN int nccltjIsAgentOption(const char* o) {
  return strncmp(o, "-agentlib", 9) == 0 || strncmp(o, "-agentpath", 10) == 0 || strncmp(o, "-javaagent", 10) == 0 ||
         strncmp(o, "-Xrun", 5) == 0 || strcmp(o, "-Xdebug") == 0;
}

static int addOption(optionList* l, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
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

HIDDEN void nccltjFreeOptions(optionList* l) {
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

/* ---- the table ------------------------------------------------------------------------------ */

/* When a row applies. */
typedef enum {
  ALWAYS,
  NO_USER_GC,   /* NCCL_TUNER_JAVA_OPTS chooses no collector (-XX:+Use...GC) */
  NO_USER_HEAP, /* NCCL_TUNER_JAVA_OPTS sets neither -Xmx nor -Xms */
  AOT_CACHE,    /* an AOT cache (nccl-tuner-java.aot) lies beside the library */
  REPLAY_KNOWN, /* the replay file's name could be made from the crash report's */
  USER_OPTIONS, /* not an option: NCCL_TUNER_JAVA_OPTS's own go here, in their order */
} when_t;

/* What a row's "%s" stands for. */
typedef enum {
  NO_VALUE,
  CLASS_PATH,
  LIBRARY_PATH,
  AOT_PATH,
  ERROR_FILE,
  REPLAY_FILE
} value_t;

typedef struct {
  const char* option; /* the option, or with a value its format (one %s); a hook's name */
  when_t when;
  value_t value;
  void* hook; /* a JavaVMInitArgs hook: its function, passed as the option's extraInfo */
} optionRow;

/* Rows: ROW(option, when), VALUE(format, when, value) or HOOK(name, fn). */
/* clang-format off */
#define HOOK(name, fn) {name, ALWAYS, NO_VALUE, (void*)(fn)}
#define ROW(option, when) {option, when, NO_VALUE, NULL}
#define VALUE(format, when, value) {format, when, value, NULL}
/* clang-format on */

static const optionRow kOptions[] = {
  /* The hooks first, so that HotSpot's messages about the options after them are caught too:
   * every line HotSpot prints goes to NCCL's logger (hotspot_output.c). */
  HOOK("vfprintf", nccltjVfprintfHook),
  /* HotSpot's exit() during creation (a bad option value, no thread or memory) ends the start
   * thread, not the host. */
  HOOK("exit", nccltjExitHook),
  /* Likewise its abort(). */
  HOOK("abort", nccltjAbortHook),
  /* The engine jar. */
  VALUE("-Djava.class.path=%s", ALWAYS, CLASS_PATH),
  /* Leave SIGINT/SIGTERM/SIGHUP/SIGQUIT to the host. */
  ROW("-Xrs", ALWAYS),
  /* FFM upcalls/downcalls: no restricted-method warning. */
  ROW("--enable-native-access=ALL-UNNAMED", ALWAYS),
  /* The serial collector, unless the user chose one (defaults give way to the user's choice). */
  ROW("-XX:+UseSerialGC", NO_USER_GC),
  /* The heap's initial size, unless the user sets -Xmx or -Xms (as the two rows below). */
  ROW("-Xms8m", NO_USER_HEAP),
  /* Its largest size. */
  ROW("-Xmx64m", NO_USER_HEAP),
  /* A young generation of 1 MiB at start instead of a third of -Xms (2.7 MiB): the start
   * touches less of it (resident memory added 40.4 -> 39.4 MiB with the AOT cache). It grows
   * with the heap as the default would (a 10,000-rule YAML policy starts as fast); the per-call
   * path allocates nothing, so its collections are the inits' alone. */
  ROW("-XX:NewSize=1m", NO_USER_HEAP),
  /* No hsperfdata files. */
  ROW("-XX:-UsePerfData", ALWAYS),
  /* Compiler threads for the life of the process, one (the row below), whatever the host's core
   * count: HotSpot otherwise starts and stops compiler threads as
   * its queue grows and shrinks (one per few cores: dozens on a GPU node), and a thread that ends
   * leaves HotSpot's guard pages at the low end of its stack PROT_NONE (its exit uncommits them),
   * a stack glibc then hands to the host's next thread of about its size (found by a hostile host
   * with the engine's start thread, 2026-12-03; stack_guard.c puts back the shim's own threads). */
  ROW("-XX:-UseDynamicNumberOfCompilerThreads", ALWAYS),
  /* One compiler thread: C2 alone (-XX:-TieredCompilation below). */
  ROW("-XX:CICompilerCount=1", ALWAYS),
  /* HotSpot would print each CompileCommand below on stdout. */
  ROW("-XX:CompileCommand=quiet", ALWAYS),
  /* The engine's per-call path inlined into the upcall's target whatever the compile order: C2
   * refuses to inline a method it already compiled on its own into more than InlineSmallCode
   * bytes ("already compiled into a big method", seen in shadow mode), and each call then pays a
   * call with eleven arguments (about 5 ns). */
  ROW("-XX:CompileCommand=inline,io.nccltuner.engine.Engine::getCollInfo", ALWAYS),
  /* The same for Engine.decide, which getCollInfo calls. */
  ROW("-XX:CompileCommand=inline,io.nccltuner.engine.Engine::decide", ALWAYS),
  /* The same for the upcall's target, into which both are inlined. */
  ROW("-XX:CompileCommand=inline,io.nccltuner.ffm.Upcalls::getCollInfo", ALWAYS),
  /* Footprint (docs/dev/benchmarks.md, "Start-up and footprint"): no attach listener (no thread, no
   * /tmp/.java_pid<pid> socket, no jcmd or agent into the host). */
  ROW("-XX:+DisableAttachMechanism", ALWAYS),
  /* HotSpot raises the process's soft RLIMIT_NOFILE to its hard limit at creation (MaxFDLimit,
   * on by default: os::init_2 in os_linux.cpp), a limit the host set for itself and its children
   * (found by a hostile host: soft 1024 -> 20000). */
  ROW("-XX:-MaxFDLimit", ALWAYS),
  /* No finalizer thread. */
  ROW("--finalization=disabled", ALWAYS),
  /* HotSpot's SIGSEGV/SIGBUS/SIGFPE/SIGILL handlers stay for the life of the process (the JVM
   * needs them), so a crash in the host's own code reaches HotSpot's error reporter, which
   * prints its fatal-error banner on fd 1 and writes an hs_err file (found by a hostile host).
   * With this it aborts at once, silently: the host's crash still ends the process (SIGABRT, a
   * core where the host allows one). NCCL_TUNER_JAVA_OPTS=-XX:-SuppressFatalErrorMessage brings
   * the reports back, for diagnosing a crash in the plugin's JVM. */
  ROW("-XX:+SuppressFatalErrorMessage", ALWAYS),
  /* This library's path; Bootstrap.start reads from it that the shim created this JVM (System.out
   * and System.err then go to NCCL's logger). */
  VALUE("-Dnccltj.library=%s", ALWAYS, LIBRARY_PATH),
  /* The JDK 25 AOT cache that bin/nccl-tuner-aot wrote beside the library. */
  VALUE("-XX:AOTCache=%s", AOT_CACHE, AOT_PATH),
  /* The engine's INFO line says if the cache was used. */
  VALUE("-Dnccltj.aotCache=%s", AOT_CACHE, AOT_PATH),
  /* For the row below: a diagnostic flag of JDK 25 (the oldest runtime the plugin takes); a JDK
   * that drops it fails creation, which the plugin reports in one WARN and steps aside. */
  ROW("-XX:+UnlockDiagnosticVMOptions", AOT_CACHE),
  /* No "Training replay" thread compiling the training run's methods during the start (-40 ms
   * CPU, -3 MiB). */
  ROW("-XX:-AOTReplayTraining", AOT_CACHE),
  /* C2 alone, with or without the cache (one compiler configuration; the hot path is C2-compiled
   * either way). Without the cache too since 2026-12-04 (issue 23 item 4): with C1 beside C2, the
   * compilations of the per-call path (C1's took 2.7 MiB of arena memory) and of the init path
   * landed among the communicators that came and went, and glibc kept each compiler thread's
   * malloc arena at its high-water mark: pairs 1k..11k added 1.75-5.8 MiB on an Intel Xeon
   * (0.31-0.54 with C2 alone), released only by malloc_trim after HotSpot's chunk pool cleaner ran (5 s),
   * which the plugin may not do in the host. The start also costs less CPU (first init without the
   * cache, the 10,000-rule policy with its compiled form: 180 -> 156 ms CPU; h200-2rank's YAML
   * alone 184 -> 149 ms, 6 MiB less resident memory). Parsing
   * a 10,000-rule YAML that has no compiled form beside it, interpreted, takes about 2 s instead
   * of 1 s, as it did with the cache already; compile, import and calibrate write the form. */
  ROW("-XX:-TieredCompilation", ALWAYS),
  /* C2 after 100,000 invocations rather than 10,000: at the start HotSpot otherwise compiles
   * some 70 small JDK methods of the method-handle spinning (ClassFile API accessors) and
   * initialises C2 meanwhile: first init 150 -> 118 ms (median of 5, CPU 146 -> 108 ms). The
   * per-call path reaches C2 after 100,000 calls (a few seconds of a training job; interpreted
   * before, a few microseconds a call). */
  ROW("-XX:CompileThresholdScaling=10", ALWAYS),
  /* The init/destroy path compiled after a few communicators, not after tens of thousands (with
   * CompileThresholdScaling=10 it ran interpreted, ~200 us a pair, and its late
   * compilations grew the C2 thread's malloc arena as communicators came and went; issue 23).
   * Without the cache too since bridge 10 (2026-12-03): its lighter start (no logger downcall)
   * left the init path's compilations to the communicators that followed, where they landed late
   * and at random (GuestIT's reloads 1,000 to 3,000: 1-4.7 MiB; bench_driver's pairs 1k..11k:
   * 1.0-7.1 MiB); compiled early, within the first few hundred, they add 0.43-0.51 and 0.47-0.79
   * MiB. Per method, so the start and the per-call path keep their thresholds; one option (HotSpot takes
   * commands separated by newlines). NativeLog::lo* is NativeLog::log: HotSpot 25's parser refuses
   * a method pattern "log" ("Did not specify any method name"). */
  ROW("-XX:CompileCommand="
      "CompileThresholdScaling,io.nccltuner.ffm.Upcalls::control,0.001\n"
      "CompileThresholdScaling,io.nccltuner.ffm.Upcalls::init,0.001\n"
      "CompileThresholdScaling,io.nccltuner.ffm.Upcalls::destroy,0.001\n"
      "CompileThresholdScaling,io.nccltuner.ffm.Upcalls::signature,0.001\n"
      "CompileThresholdScaling,io.nccltuner.ffm.Upcalls::gpuName,0.001\n"
      "CompileThresholdScaling,io.nccltuner.engine.Engine::init,0.001\n"
      "CompileThresholdScaling,io.nccltuner.engine.Engine::destroy,0.001\n"
      "CompileThresholdScaling,io.nccltuner.engine.Engine::shape,0.001\n"
      "CompileThresholdScaling,io.nccltuner.engine.Engine::summary,0.001\n"
      "CompileThresholdScaling,io.nccltuner.ffm.NativeLog::lo*,0.001\n"
      "CompileThresholdScaling,io.nccltuner.ffm.NativeLog::take,0.001",
      ALWAYS),
  /* The SHA-256 of the table fingerprint (engine/Sha256.java) stays interpreted during the start:
   * a 10,000-rule policy's table (200 KB) crossed its loop's back-edge threshold, and C2 compiling
   * the 700-byte method on the spot cost more CPU than the interpretation it saved (first init
   * 403 -> 353 ms CPU, median of 8; issue 23 item 6). It runs once per distinct table, never hot.
   * A double: "100" is refused. */
  ROW("-XX:CompileCommand=CompileThresholdScaling,io.nccltuner.engine.Sha256::digest,100.0", ALWAYS),
  /* NCCL_TUNER_JAVA_OPTS: after the rows above, so that the user's options override them. */
  ROW(NULL, USER_OPTIONS),
  /* Last, so that nothing before them wins: an engine OutOfMemoryError stays inside the engine
   * (it steps aside) instead of ending the process, */
  ROW("-XX:-ExitOnOutOfMemoryError", ALWAYS),
  /* or crashing it, */
  ROW("-XX:-CrashOnOutOfMemoryError", ALWAYS),
  /* or dumping the heap. */
  ROW("-XX:-HeapDumpOnOutOfMemoryError", ALWAYS),
  /* A crash report goes to a documented place (errorFile). */
  VALUE("-XX:ErrorFile=%s", ALWAYS, ERROR_FILE),
  /* A compiler crash's replay file goes beside the crash report, not into the working
   * directory. */
  VALUE("-XX:ReplayDataFile=%s", REPLAY_KNOWN, REPLAY_FILE),
  /* A .hotspotrc in the working directory is not read (HotSpot warns on stderr when it finds
   * one and no -XX:Flags is given; found by a hostile host). */
  ROW("-XX:Flags=/dev/null", ALWAYS),
  /* Nor a .hotspot_compiler there (the same, for -XX:CompileCommandFile). */
  ROW("-XX:CompileCommandFile=/dev/null", ALWAYS),
};

#define OPTION_ROWS (sizeof kOptions / sizeof kOptions[0])
/* Every row finds room after the user's options (USER_OPTIONS's row adds none of its own). */
_Static_assert(OPTION_ROWS - 1 <= OWN_OPTIONS, "jvm_options.c has more rows than OWN_OPTIONS");

/* ---- building the list ---------------------------------------------------------------------- */

typedef struct {
  char* toks[MAX_OPTIONS];
  int n;
  int gc;   /* the user chose a collector */
  int heap; /* the user set -Xmx or -Xms */
} userOptions;

/* Splits NCCL_TUNER_JAVA_OPTS (in copy, modified in place) into u. 0, or -1 after failf(). */
static int parseUserOptions(char* copy, userOptions* u) {
  char* save = NULL;
  for (char* tok = strtok_r(copy, " \t\n", &save); tok != NULL; tok = strtok_r(NULL, " \t\n", &save)) {
    if (!allowedOption(tok)) {
      nccltjFailf("NCCL_TUNER_JAVA_OPTS: option '%s' is not allowed (use -D, -Xmx, -Xms, -Xss, -Xlog:TAGS, "
                  "-XX:, -verbose:; no agents, option files, OnError, OnOutOfMemoryError, output to stdout or "
                  "options that end or pause the JVM); "
                  "the plugin changes nothing",
                  tok);
      return -1;
    }
    char path[1024];
    const char* why = optionPath(tok, path, sizeof path) != NULL ? unsafePath(path) : NULL;
    if (why != NULL) {
      nccltjFailf("NCCL_TUNER_JAVA_OPTS: option '%s' names %s, %s: the JVM would wait on it for ever or write into "
                  "the host's own output; name a regular file; the plugin changes nothing",
                  tok, path, why);
      return -1;
    }
    if (u->n == MAX_USER_OPTIONS) {
      nccltjFailf("NCCL_TUNER_JAVA_OPTS: more than %d options; the plugin changes nothing", MAX_USER_OPTIONS);
      return -1;
    }
    u->gc |= isGcChoice(tok);
    u->heap |= strncmp(tok, "-Xmx", 4) == 0 || strncmp(tok, "-Xms", 4) == 0;
    u->toks[u->n++] = tok;
  }
  return 0;
}

HIDDEN int nccltjBuildOptions(optionList* l, const char* classPath, const char* aotCache, const char* libraryPath) {
  const char* extra = getenv("NCCL_TUNER_JAVA_OPTS");
  char* copy = strdup(extra != NULL ? extra : "");
  if (copy == NULL) { /* strtok_r(NULL, ...) would read its unset save pointer (a hostile host's malloc failure) */
    nccltjFailf("out of memory copying NCCL_TUNER_JAVA_OPTS; the plugin changes nothing");
    return -1;
  }
  userOptions user = {.n = 0};
  if (parseUserOptions(copy, &user) < 0) {
    free(copy);
    return -1;
  }
  char ef[4200], replay[4200] = "";
  errorFile(ef, sizeof ef);
  char* rf = strstr(ef, "hs_err_pid");
  if (rf != NULL) snprintf(replay, sizeof replay, "%.*sreplay_pid%%p.log", (int)(rf - ef), ef);
  const char* values[] = {
    [NO_VALUE] = "",       [CLASS_PATH] = classPath, [LIBRARY_PATH] = libraryPath,
    [AOT_PATH] = aotCache, [ERROR_FILE] = ef,        [REPLAY_FILE] = replay,
  };
  for (size_t i = 0; i < OPTION_ROWS; i++) {
    const optionRow* r = &kOptions[i];
    int applies = r->when == ALWAYS || (r->when == NO_USER_GC && !user.gc) || (r->when == NO_USER_HEAP && !user.heap) ||
                  (r->when == AOT_CACHE && aotCache != NULL) || (r->when == REPLAY_KNOWN && rf != NULL);
    if (r->when == USER_OPTIONS) {
      for (int t = 0; t < user.n; t++) addOption(l, "%s", user.toks[t]);
    } else if (applies && r->value != NO_VALUE) {
      addOption(l, r->option, values[r->value]);
    } else if (applies && addOption(l, "%s", r->option)) {
      l->opts[l->n - 1].extraInfo = r->hook;
    }
  }
  free(copy);
  return 0;
}
