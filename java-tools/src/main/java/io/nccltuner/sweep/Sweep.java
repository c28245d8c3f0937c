package io.nccltuner.sweep;

import static io.nccltuner.compile.TextReport.count;

import io.nccltuner.compile.NcclTestsLog;
import io.nccltuner.compile.Repeats;
import io.nccltuner.policy.Collective;
import io.nccltuner.policy.ForcePolicy.Forced;
import io.nccltuner.validate.PolicyCheck;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

/**
 * Runs a sweep: each run of a {@link SweepPlan} as a fresh process of an nccl-tests binary,
 * through the user's launcher, with the tuner plugin in force mode
 * ({@code NCCL_TUNER_PLUGIN}, {@code NCCL_TUNER_JAVA_FORCE}); NCCL's own pick runs load the
 * same plugin with no policy, so it changes nothing. Each run's stdout and stderr go to
 * {@code runs/<id>.txt}; {@code manifest.json} is rewritten after every run, so a sweep that is
 * interrupted resumes where it stopped (finished runs are skipped, failed, interrupted and unfinished
 * ones run again). A run stopped by a signal from outside (Ctrl-C's SIGINT, SIGTERM as a scheduler's
 * pre-emption sends it, SIGHUP), the sweep's or its own, is {@code interrupted}, not {@code failed}:
 * the program did not fail, and the resume re-runs it.
 *
 * <p>Every run gets {@code NCCL_DEBUG=INFO} and {@code NCCL_DEBUG_SUBSYS=INIT,ENV,TUNING,GRAPH} unless
 * the user set them: the INIT lines give the signature ({@link RunHardware}), NCCL's TUNING
 * selection lines tell compile what actually ran where a forced candidate was not offered, the GRAPH
 * lines are what calibrate reads (so a sweep serves both without another run). The
 * variables that would make the plugin do something else ({@code NCCL_TUNER_JAVA_POLICY},
 * {@code _MODE}, {@code NCCL_TUNER_CONFIG_FILE}) are removed. The launcher must pass the
 * environment on to the ranks (srun does by default; Open MPI's mpirun needs {@code -x
 * NCCL_TUNER_PLUGIN -x NCCL_TUNER_JAVA_FORCE ...}).
 */
public final class Sweep {
    /** Variables the sweep removes from every run's environment. */
    static final List<String> REMOVED = List.of(
            "NCCL_TUNER_JAVA_POLICY",
            "NCCL_TUNER_JAVA_MODE",
            "NCCL_TUNER_CONFIG_FILE",
            "NCCL_TUNER_JAVA_FORCE",
            "NCCL_TUNER_JAVA_RECORD");

    /**
     * What to sweep.
     *
     * @param dir the sweep directory (created)
     * @param programs nccl-tests programs without {@code _perf} (all_reduce, all_gather, ...)
     * @param binary one binary for every program, or null: a {@code *_perf} file runs as is, any
     *     other binary (the simulated cluster) gets {@code <program>_perf} as its first argument
     * @param testsDir directory of the nccl-tests binaries, or null to find them on PATH
     * @param launch the launcher's words, empty for none
     * @param plugin the plugin to load
     * @param candidates forced candidates
     * @param replicates R >= 1
     * @param seed the order's seed
     * @param testsArgs options for every nccl-tests run
     * @param timeoutSeconds longest a run may take before it is killed and counted failed
     * @param env the environment the runs inherit (System.getenv())
     */
    public record Config(
            Path dir,
            List<String> programs,
            Path binary,
            Path testsDir,
            List<String> launch,
            Path plugin,
            List<Forced> candidates,
            int replicates,
            long seed,
            List<String> testsArgs,
            long timeoutSeconds,
            Map<String, String> env) {}

    private final Config cfg;
    private final PrintWriter progress;

    // What the run loop and the shutdown hook of a stopped sweep share, guarded by this object: the
    // manifest as last written, its file, the run in progress (an index into the manifest's runs, -1
    // for none) and when it started, and whether the hook has begun (no run starts or is recorded after).
    private Manifest live;
    private Path liveFile;
    private int current = -1;
    private long currentStart;
    private boolean stopping;
    /** Every how many runs a progress line ({@code sweep: 10/48 ...}) ends with {@code ; seed S}. */
    public static final int SEED_EVERY = 10;

    /**
     * @param cfg what to sweep
     * @param progress where progress lines go (stderr in the CLI)
     */
    public Sweep(Config cfg, PrintWriter progress) {
        this.cfg = cfg;
        this.progress = progress;
    }

    /**
     * Why a cell is not run: NCCL never offers the forced candidate for the program's collective
     * ({@link PolicyCheck#neverOffered}), so its runs would measure NCCL's own pick again.
     *
     * @param program nccl-tests program without {@code _perf}
     * @param f the forced candidate
     * @return the reason, or null when the cell is run
     */
    static String notOffered(String program, Forced f) {
        Collective c = NcclTestsLog.collectiveOfProgram(program);
        return c == null ? null : PolicyCheck.neverOffered(c, f.algorithm(), f.protocol());
    }

    /**
     * The cells the plan leaves out, a line per program and reason, the candidates of one reason
     * folded into one line ({@link Repeats#grouped}): {@code all_gather TREE/LL, TREE/SIMPLE: NCCL
     * offers only ...}.
     *
     * @return the lines, in program and candidate order; empty when every cell runs
     */
    public List<String> notScheduled() {
        List<String> out = new ArrayList<>();
        for (String p : cfg.programs()) {
            List<String[]> cells = new ArrayList<>(); // {label, why}
            for (Forced f : cfg.candidates().stream().distinct().toList()) {
                String why = notOffered(p, f);
                if (why != null) {
                    cells.add(new String[] {f.label(), why});
                }
            }
            for (List<String[]> g : Repeats.grouped(cells, c -> c[1])) {
                out.add(p + " " + String.join(", ", g.stream().map(c -> c[0]).toList()) + ": " + g.getFirst()[1]
                        + "; not run (" + (g.size() == 1 ? "it" : "each") + " would measure NCCL's own pick again)");
            }
        }
        return out;
    }

    /** @return how many (program, candidate) cells the plan leaves out ({@link #notScheduled}'s, unfolded) */
    private int cellsNotScheduled() {
        int n = 0;
        for (String p : cfg.programs()) {
            for (Forced f : cfg.candidates().stream().distinct().toList()) {
                n += notOffered(p, f) == null ? 0 : 1;
            }
        }
        return n;
    }

    /** @return the plan as manifest records, every run pending */
    public Manifest planned() {
        List<Manifest.RunRecord> runs = new ArrayList<>();
        for (SweepPlan.Run r : SweepPlan.plan(
                cfg.programs(), cfg.candidates(), cfg.replicates(), cfg.seed(), (p, f) -> notOffered(p, f) == null)) {
            Map<String, String> env = new TreeMap<>();
            if (r.candidate() != null) {
                env.put("NCCL_TUNER_JAVA_FORCE", r.candidate().label());
            }
            Forced f = r.candidate();
            runs.add(new Manifest.RunRecord(
                    r.id(),
                    r.program(),
                    f == null ? null : f.algorithm().name(),
                    f == null ? null : f.protocol().name(),
                    f == null ? 0 : f.channels(),
                    r.replicate(),
                    r.order(),
                    "runs/" + r.id() + ".txt",
                    command(r.program()),
                    env,
                    "pending",
                    null,
                    null));
        }
        return new Manifest(
                Manifest.SCHEMA,
                Instant.now().toString(),
                cfg.seed(),
                cfg.replicates(),
                cfg.programs(),
                cfg.candidates().stream().map(Forced::label).toList(),
                cfg.launch(),
                cfg.plugin().toString(),
                cfg.testsArgs(),
                commonEnv(),
                null,
                List.of(),
                runs);
    }

    /** The words of one run's command: launcher, binary, [program], nccl-tests options. */
    List<String> command(String program) {
        List<String> c = new ArrayList<>(cfg.launch());
        if (cfg.binary() != null) {
            c.add(cfg.binary().toString());
            if (!cfg.binary().getFileName().toString().endsWith("_perf")) {
                c.add(program + "_perf");
            }
        } else if (cfg.testsDir() != null) {
            c.add(cfg.testsDir().resolve(program + "_perf").toString());
        } else {
            c.add(program + "_perf");
        }
        c.addAll(cfg.testsArgs());
        return c;
    }

    /** The variables every run sees that matter to NCCL and to the plugin, sorted. */
    Map<String, String> commonEnv() {
        Map<String, String> e = new TreeMap<>();
        cfg.env().forEach((k, v) -> {
            if ((k.startsWith("NCCL_")
                            || k.startsWith("CUDA_")
                            || k.startsWith("SIMCLUSTER_")
                            || k.startsWith("FI_")
                            || k.startsWith("UCX_")
                            || k.equals("LD_LIBRARY_PATH")
                            || k.equals("JAVA_HOME"))
                    && !REMOVED.contains(k)) {
                e.put(k, v);
            }
        });
        e.put("NCCL_TUNER_PLUGIN", cfg.plugin().toString());
        e.putIfAbsent("NCCL_DEBUG", "INFO");
        e.putIfAbsent("NCCL_DEBUG_SUBSYS", "INIT,ENV,TUNING,GRAPH");
        return e;
    }

    /**
     * Prints every run's command line, shell-quoted, with the variables it sets; runs nothing and
     * writes nothing. Where the directory already holds this sweep (an interrupted or finished one),
     * it says how many runs are done, names those still to do, prints only their lines, and says
     * that the same command without {@code --dry-run} resumes it, with the seed it will use.
     *
     * @param out where
     * @return the number of runs printed (those still to do)
     * @throws IOException if the directory holds a different sweep (the message the real run would
     *     print), or a manifest that does not read
     */
    public int dryRun(PrintWriter out) throws IOException {
        Manifest m = planned();
        Manifest old = existing(m);
        Map<String, String> common = m.environment();
        // what every run sets: the plugin and NCCL's INFO lines (they name NCCL's picks and the forcing)
        String everyRun = assignments(Map.of(
                "NCCL_TUNER_PLUGIN",
                common.get("NCCL_TUNER_PLUGIN"),
                "NCCL_DEBUG",
                common.get("NCCL_DEBUG"),
                "NCCL_DEBUG_SUBSYS",
                common.get("NCCL_DEBUG_SUBSYS")));
        List<String> skipped = notScheduled();
        out.println("# " + count(m.runs().size(), "run") + " ("
                + count(m.programs().size(), "program") + " x "
                + count(m.candidates().size() + 1, "candidate")
                + " incl. NCCL's own pick x " + count(m.replicates(), "replicate")
                + (skipped.isEmpty()
                        ? ""
                        : ", less " + count(cellsNotScheduled(), "(program, candidate) cell") + " NCCL never offers")
                + "), seed " + m.seed()
                + "; every run: "
                + everyRun);
        for (String w : skipped) {
            out.println("# not scheduled: " + w);
        }
        List<Manifest.RunRecord> toDo = new ArrayList<>();
        for (int i = 0; i < m.runs().size(); i++) {
            if (old == null || !finished(old.runs().get(i))) {
                toDo.add(m.runs().get(i));
            }
        }
        if (old != null) {
            out.println(resumeLine(old, m.runs().size() - toDo.size()));
        }
        // each line carries what the sweep sets, so that a pasted line forces what it says: the variables the
        // sweep removes (unset with env -u where this environment has them), then the plugin, NCCL's INFO
        // lines (they name NCCL's picks and the forcing) and the candidate forced
        List<String> unset = REMOVED.stream().filter(cfg.env()::containsKey).toList();
        String prefix = (unset.isEmpty()
                        ? ""
                        : "env" + unset.stream().map(v -> " -u " + v).reduce("", String::concat) + " ")
                + everyRun
                + " ";
        for (Manifest.RunRecord r : toDo) {
            out.println(prefix + (r.env().isEmpty() ? "" : assignments(r.env()) + " ")
                    + String.join(" ", r.command().stream().map(Sweep::quote).toList()) + " > "
                    + quote(cfg.dir().resolve(r.file()).toString()));
        }
        out.flush();
        for (String w : missingBinaries(toDo)) {
            progress.println("warning: " + w);
        }
        progress.flush();
        return toDo.size();
    }

    /** Runs still to do named in the dry run's resume line; the others are counted. */
    static final int NAMED_TO_DO = 8;

    /**
     * The dry run's line on the sweep the directory already holds.
     *
     * @param old the directory's manifest (this sweep)
     * @param done how many of its runs are finished
     * @return {@code # DIR holds this sweep, unfinished: 2 of 3 runs done, 1 to do (all_reduce
     *     RING/SIMPLE r1: failed, exit 3); running the same command without --dry-run resumes it
     *     with seed S (recorded in DIR/manifest.json): it runs the line below and skips the done
     *     ones} ("not started" where none is done), or for a finished sweep {@code # DIR holds this sweep, finished: all 3 runs done;
     *     the same command runs nothing; next: nccl-tuner compile DIR -o policy.yaml}
     */
    private String resumeLine(Manifest old, int done) {
        int total = old.runs().size();
        if (done == total) {
            return "# " + cfg.dir() + " holds this sweep, finished: all " + count(total, "run")
                    + " done; the same command runs nothing; next: nccl-tuner compile " + cfg.dir() + " -o policy.yaml";
        }
        List<String> named = new ArrayList<>();
        for (Manifest.RunRecord r : old.runs()) {
            if (!finished(r) && named.size() < NAMED_TO_DO) {
                named.add(r.program() + " " + r.label() + " r" + r.replicate() + ": " + state(r));
            }
        }
        int toDo = total - done;
        if (toDo > named.size()) {
            named.add("and " + (toDo - named.size()) + " more");
        }
        return "# " + cfg.dir() + " holds this sweep, " + (done == 0 ? "not started" : "unfinished") + ": " + done
                + " of " + count(total, "run") + " done, " + toDo + " to do (" + String.join("; ", named)
                + "); running the same command without --dry-run resumes it with seed " + old.seed() + " (recorded in "
                + cfg.dir().resolve(Manifest.FILE) + "): it runs the " + (toDo == 1 ? "line" : toDo + " lines")
                + " below" + (done == 0 ? "" : " and skips the done " + (done == 1 ? "run" : "ones"));
    }

    /**
     * @return why a run is still to do: {@code failed, exit 3}, {@code interrupted (SIGTERM)} (a
     *     signal from outside stopped it; {@code interrupted} where the sweep itself was stopped),
     *     {@code not run} (pending: not started, or running when a sweep of an earlier release was
     *     stopped), {@code done, but its output runs/x.txt is gone}
     */
    private static String state(Manifest.RunRecord r) {
        return switch (r.status()) {
            case "failed" -> "failed" + (r.exitCode() == null ? "" : ", exit " + r.exitCode());
            case INTERRUPTED -> INTERRUPTED + (signal(r.exitCode()) == null ? "" : " (" + signal(r.exitCode()) + ")");
            case "done" -> "done, but its output " + r.file() + " is gone";
            default -> "not run";
        };
    }

    /**
     * The binaries of a plan's runs that are not executable files here (on PATH where a bare name is
     * given), for the dry run's warnings.
     *
     * @param runs the runs (those still to do)
     * @return one line per missing binary
     */
    List<String> missingBinaries(List<Manifest.RunRecord> runs) {
        List<String> out = new ArrayList<>();
        java.util.Set<String> seen = new java.util.LinkedHashSet<>();
        for (Manifest.RunRecord r : runs) {
            seen.add(r.command().get(cfg.launch().size()));
        }
        String path = cfg.env().getOrDefault("PATH", "");
        for (String b : seen) {
            boolean found;
            if (b.contains("/")) {
                found = Files.isRegularFile(Path.of(b)) && Files.isExecutable(Path.of(b));
            } else {
                found = java.util.Arrays.stream(path.split(":"))
                        .filter(d -> !d.isEmpty())
                        .map(d -> Path.of(d, b))
                        .anyMatch(x -> Files.isRegularFile(x) && Files.isExecutable(x));
            }
            if (!found) {
                out.add(b
                        + (b.contains("/") ? ": no such executable file" : ": not found on PATH")
                        + (cfg.launch().isEmpty()
                                ? "; the runs would fail (fix --tests-dir, --binary or PATH)"
                                : "; the runs would fail unless it exists where "
                                        + cfg.launch().getFirst() + " runs them"));
            }
        }
        return out;
    }

    private static String assignments(Map<String, String> env) {
        return String.join(
                " ",
                new TreeMap<>(env)
                        .entrySet().stream()
                                .map(e -> e.getKey() + "=" + quote(e.getValue()))
                                .toList());
    }

    /** @return the word, single-quoted for a POSIX shell where it needs to be */
    static String quote(String w) {
        if (!w.isEmpty() && w.matches("[A-Za-z0-9_@%+=:,./-]+")) {
            return w;
        }
        return "'" + w.replace("'", "'\\''") + "'";
    }

    /**
     * Runs the sweep, or resumes it when the directory already holds its manifest.
     *
     * @return the manifest as it stands at the end
     * @throws IOException if the directory cannot be written, or holds a different sweep
     * @throws InterruptedException if interrupted while a run is going (its process is killed)
     */
    public Manifest run() throws IOException, InterruptedException {
        Manifest plan = planned();
        Manifest old = existing(plan);
        Manifest m = old != null ? old : plan;
        Files.createDirectories(cfg.dir().resolve("runs"));
        Path mf = cfg.dir().resolve(Manifest.FILE);
        for (String w : notScheduled()) {
            progress.println("sweep: not scheduled: " + w);
        }
        List<Manifest.RunRecord> runs = new ArrayList<>(m.runs());
        RunHardware sig = m.signature();
        List<String> warnings = new ArrayList<>(m.warnings() == null ? List.of() : m.warnings());
        int total = runs.size();
        int done = 0;
        for (Manifest.RunRecord r : runs) {
            if (finished(r)) {
                done++;
            }
        }
        if (done > 0) {
            progress.println("sweep: resuming " + cfg.dir() + ": " + done + " of " + count(total, "run")
                    + " finished, skipped; seed " + m.seed());
        } else {
            progress.println("sweep: " + cfg.dir() + ": " + count(total, "run") + ", seed " + m.seed()
                    + " (recorded in " + Manifest.FILE + "; to resume, run the same command again)");
        }
        m.write(mf);
        synchronized (this) {
            live = m;
            liveFile = mf;
        }
        // SIGINT (Ctrl-C, exit 130) or SIGTERM (exit 143) ends the JVM in the middle of a run: its hook
        // records that run interrupted and says what is done
        java.util.concurrent.atomic.AtomicInteger ok = new java.util.concurrent.atomic.AtomicInteger(done);
        long seed = m.seed();
        Thread hook = new Thread(() -> {
            stopped();
            progress.println(interruptedLine(cfg.dir(), ok.get(), total, seed));
            progress.flush();
        });
        Runtime.getRuntime().addShutdownHook(hook);
        try {
            m = runAll(m, runs, mf, sig, warnings, done, ok);
        } finally {
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException e) { // the JVM is shutting down: the hook prints its line
            }
        }
        return m;
    }

    /**
     * The shutdown hook's work when the JVM is stopped (SIGINT, SIGTERM, SIGHUP) during the sweep:
     * no further run starts, the processes of the run in progress are killed, and that run is
     * recorded {@code interrupted} in the manifest (its partial output stays in {@code
     * runs/<id>.txt.part}; the resume runs it again).
     */
    private synchronized void stopped() {
        stopping = true;
        ProcessHandle.current().descendants().forEach(ProcessHandle::destroyForcibly);
        if (current < 0 || live == null) {
            return;
        }
        List<Manifest.RunRecord> runs = new ArrayList<>(live.runs());
        runs.set(current, runs.get(current).finished(INTERRUPTED, null, seconds(System.nanoTime() - currentStart)));
        try {
            live = live.with(runs, live.signature(), live.warnings());
            live.write(liveFile);
        } catch (IOException e) {
            progress.println("warning: " + liveFile + ": cannot record the interrupted run (" + e.getMessage()
                    + "); the resume runs it again all the same");
        }
    }

    /** A run's status in the manifest when a signal from outside stopped it ({@link #signal}). */
    public static final String INTERRUPTED = "interrupted";

    /**
     * The signal from outside that a run's exit status says stopped it: the process ended by SIGHUP,
     * SIGINT or SIGTERM, which Java reports as 128 + the signal's number (Linux signal(7): 1, 2, 15),
     * as a shell or a launcher passes a child's on. Not SIGKILL (137: the kernel's out-of-memory
     * killer sends it too) nor the sweep's own {@code --timeout} kill (124), which are failures.
     *
     * @param exit the run's exit status
     * @return {@code SIGINT}, {@code SIGTERM} or {@code SIGHUP}; null for another status
     */
    static String signal(Integer exit) {
        if (exit == null) {
            return null;
        }
        return switch (exit) {
            case 128 + 1 -> "SIGHUP";
            case 128 + 2 -> "SIGINT";
            case 128 + 15 -> "SIGTERM";
            default -> null;
        };
    }

    /** @return nanoseconds as seconds, to the millisecond, as the manifest records a run's time */
    private static double seconds(long nanos) {
        return Math.round(nanos / 1e6) / 1000.0;
    }

    /**
     * The last line of a sweep that SIGINT (Ctrl-C) interrupted: what is done, and how to resume.
     *
     * @param dir the sweep directory
     * @param ok runs done (exit 0, their outputs kept)
     * @param total the sweep's runs
     * @param seed the sweep's seed, kept in its manifest
     * @return {@code sweep: interrupted: 3 of 12 runs done (DIR/manifest.json); ...}
     */
    public static String interruptedLine(Path dir, int ok, int total, long seed) {
        return "sweep: interrupted: " + ok + " of " + count(total, "run") + " done (" + dir.resolve(Manifest.FILE)
                + "); run the same command again to resume: it keeps seed " + seed
                + ", skips the runs done and runs the others, the interrupted one included";
    }

    /** {@link #run}'s loop over the runs not finished; {@code ok} counts the runs done as they end. */
    private Manifest runAll(
            Manifest m,
            List<Manifest.RunRecord> runs,
            Path mf,
            RunHardware sig,
            List<String> warnings,
            int done,
            java.util.concurrent.atomic.AtomicInteger ok)
            throws IOException, InterruptedException {
        int total = runs.size();
        long t0 = System.nanoTime();
        int ranNow = 0;
        int failed = 0;
        int interrupted = 0;
        String stop = null;
        for (int i = 0; i < runs.size(); i++) {
            Manifest.RunRecord r = runs.get(i);
            if (finished(r)) {
                continue;
            }
            long s0 = System.nanoTime();
            Process proc;
            synchronized (this) { // the hook kills what runs, so a run starts only before it began
                if (stopping) {
                    break;
                }
                current = i;
                currentStart = s0;
                proc = start(r);
            }
            int exit = proc == null ? 127 : await(proc, r);
            double secs = (System.nanoTime() - s0) / 1e9;
            Path out = cfg.dir().resolve(r.file());
            Path part = out.resolveSibling(out.getFileName() + ".part");
            String signal = signal(exit);
            synchronized (this) {
                current = -1;
                if (stopping) {
                    break; // the hook recorded this run interrupted, and says so
                }
            }
            if (signal != null) {
                interrupted++; // its partial output stays in the .part file; the resume runs it again
            } else if (exit == 0) {
                Files.move(part, out, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
                RunHardware s = RunHardware.read(Files.readAllLines(out, StandardCharsets.UTF_8));
                if (sig == null) {
                    sig = s;
                } else if (!Objects.equals(sig, s)) {
                    warnings.add(r.id() + ": signature " + s + " differs from the first run's " + sig);
                }
            } else {
                Path failedOut = out.resolveSibling(r.id() + ".failed.txt");
                Files.move(part, failedOut, StandardCopyOption.REPLACE_EXISTING);
                failed++;
                stop = missingProgram(r, exit, failedOut);
            }
            runs.set(
                    i,
                    r.finished(
                            signal != null ? INTERRUPTED : exit == 0 ? "done" : "failed",
                            exit,
                            seconds(System.nanoTime() - s0)));
            m = m.with(runs, sig, warnings);
            synchronized (this) {
                m.write(mf);
                live = m;
            }
            if (exit == 0) {
                ok.incrementAndGet();
            }
            done++;
            ranNow++;
            double elapsed = (System.nanoTime() - t0) / 1e9;
            double eta = elapsed / ranNow * (total - done);
            progress.println(String.format(
                    Locale.ROOT,
                    "sweep: %d/%d %s %s r%d: %s in %.1f s; elapsed %s, ETA %s%s",
                    done,
                    total,
                    r.program(),
                    r.label(),
                    r.replicate(),
                    signal != null
                            ? "interrupted (exit " + exit + ", " + signal
                                    + ": stopped from outside, not failed; partial output " + r.file() + ".part)"
                            : exit == 0 ? "ok" : "FAILED (exit " + exit + ", see " + r.id() + ".failed.txt)",
                    secs,
                    duration(elapsed),
                    duration(eta),
                    // the seed on every 10th line too, not only at the start and end: short lines, yet on screen
                    done % SEED_EVERY == 0 ? "; seed " + m.seed() : ""));
            progress.flush();
            if (stop != null) {
                progress.println("sweep: stopped at the first run: " + stop + "; "
                        + (total - done == 1 ? "the other run was" : "the other " + (total - done) + " runs were")
                        + " not started; fix --tests-dir, --binary, --launch or PATH, then run the same command "
                        + "again (seed " + m.seed() + ")");
                break;
            }
        }
        retryLines(failed, interrupted, stop != null, m.seed());
        progress.flush();
        return m;
    }

    /**
     * The lines after a sweep's runs that say what the same command runs again: the failed runs
     * (unless a missing program stopped the sweep, said already), the interrupted ones.
     *
     * @param failed runs that failed now
     * @param interrupted runs a signal from outside stopped now ({@link #signal})
     * @param stopped whether a missing program stopped the sweep
     * @param seed the sweep's seed
     */
    private void retryLines(int failed, int interrupted, boolean stopped, long seed) {
        if (failed > 0 && !stopped) {
            progress.println("sweep: " + (failed == 1 ? "1 run failed" : failed + " runs failed")
                    + "; run the same command again to retry " + (failed == 1 ? "it" : "them") + " (seed " + seed
                    + ")");
        }
        if (interrupted > 0) {
            progress.println("sweep: " + count(interrupted, "run") + " interrupted by a signal from outside (Ctrl-C,"
                    + " SIGTERM, a pre-emption); run the same command again to run "
                    + (interrupted == 1 ? "it" : "them")
                    + " (seed " + seed + ")");
        }
    }

    /**
     * The sweep the directory already holds, to resume.
     *
     * @param plan the sweep the options ask for
     * @return the directory's manifest, with the planned command for each run still to do whose binary
     *     is now elsewhere (said once on the progress stream); null when the directory holds no manifest
     * @throws IOException if it holds a different sweep ({@code DIR holds a different sweep: --seed 10
     *     (this sweep's: 9); ...}), or a manifest that does not read
     */
    private Manifest existing(Manifest plan) throws IOException {
        Path mf = cfg.dir().resolve(Manifest.FILE);
        if (!Files.exists(mf)) {
            return null;
        }
        Manifest old = Manifest.read(mf);
        List<String> diff = differences(old, plan);
        if (!diff.isEmpty()) {
            throw new IOException(cfg.dir() + " holds a different sweep: " + String.join("; ", diff) + "; resume needs "
                    + "the sweep's options (without --seed the sweep's seed is taken), or use a new directory");
        }
        return binaryMoved(old, plan);
    }

    private boolean finished(Manifest.RunRecord r) {
        return "done".equals(r.status()) && Files.exists(cfg.dir().resolve(r.file()));
    }

    /**
     * How a directory's sweep differs from the one asked for, named by the options that differ.
     *
     * @param old the directory's manifest
     * @param plan the sweep the options ask for
     * @return e.g. "--seed 10 (this sweep's: 9)"; empty when it is the same sweep
     */
    static List<String> differences(Manifest old, Manifest plan) {
        List<String> d = new ArrayList<>();
        if (old.seed() != plan.seed()) {
            d.add("--seed " + plan.seed() + " (this sweep's: " + old.seed() + ")");
        }
        if (old.replicates() != plan.replicates()) {
            d.add("--replicates " + plan.replicates() + " (this sweep's: " + old.replicates() + ")");
        }
        if (!Objects.equals(old.programs(), plan.programs())) {
            d.add("--collectives " + String.join(",", plan.programs()) + " (this sweep's: "
                    + String.join(",", old.programs() == null ? List.of() : old.programs()) + ")");
        }
        if (!Objects.equals(old.candidates(), plan.candidates())) {
            d.add("candidates (--algorithms, --protocols, --channels, --candidate) "
                    + String.join(",", plan.candidates()) + " (this sweep's: "
                    + String.join(",", old.candidates() == null ? List.of() : old.candidates()) + ")");
        }
        if (!Objects.equals(old.launch(), plan.launch())) {
            d.add("--launch \"" + String.join(" ", plan.launch()) + "\" (this sweep's: \""
                    + String.join(" ", old.launch() == null ? List.of() : old.launch()) + "\")");
        }
        if (!Objects.equals(old.testsArgs(), plan.testsArgs())) {
            List<String> a = old.testsArgs() == null ? List.of() : old.testsArgs();
            List<String> b = plan.testsArgs();
            boolean named = false;
            for (int i = 0; i + 1 < Math.min(a.size(), b.size()); i += 2) {
                if (a.get(i).equals(b.get(i)) && !a.get(i + 1).equals(b.get(i + 1))) {
                    d.add(b.get(i) + " " + b.get(i + 1) + " (this sweep's: " + a.get(i + 1) + ")");
                    named = true;
                }
            }
            if (!named) {
                d.add("nccl-tests options " + String.join(" ", b) + " (this sweep's: " + String.join(" ", a) + ")");
            }
        }
        if (!Objects.equals(old.plugin(), plan.plugin())) {
            d.add("--plugin " + plan.plugin() + " (this sweep's: " + old.plugin() + ")");
        }
        if (d.isEmpty()) {
            boolean same = old.runs().size() == plan.runs().size();
            for (int i = 0; same && i < old.runs().size(); i++) {
                Manifest.RunRecord x = old.runs().get(i);
                Manifest.RunRecord y = plan.runs().get(i);
                if (!x.id().equals(y.id()) || !x.env().equals(y.env())) {
                    same = false;
                } else if (!x.command().equals(y.command()) && !sameButTheBinarysFolder(x.command(), y.command())) {
                    d.add("the binary (--binary, --tests-dir): " + String.join(" ", y.command()) + " (this sweep's: "
                            + String.join(" ", x.command()) + ")");
                    return d;
                }
            }
            if (!same) {
                d.add("its run plan (written by another release of nccl-tuner?)");
            }
        }
        return d;
    }

    /**
     * The sweep to resume: {@code old}, with the planned command for each run still to do whose
     * binary is now elsewhere (said once on the progress stream).
     */
    private Manifest binaryMoved(Manifest old, Manifest plan) {
        List<Manifest.RunRecord> runs = new ArrayList<>(old.runs());
        String moved = null;
        for (int i = 0; i < runs.size(); i++) {
            Manifest.RunRecord x = runs.get(i);
            List<String> now = plan.runs().get(i).command();
            if (!finished(x) && !x.command().equals(now)) {
                if (moved == null) {
                    moved = "sweep: the binary is now " + String.join(" ", now) + " (this sweep's runs named "
                            + String.join(" ", x.command()) + "); the runs still to do use the new one";
                }
                runs.set(i, x.withCommand(now));
            }
        }
        if (moved == null) {
            return old;
        }
        progress.println(moved);
        return old.with(runs, old.signature(), old.warnings());
    }

    /**
     * Whether two run commands differ only in the folder of the nccl-tests binary (the same program
     * name, every other word equal): the binary found elsewhere, as the advice after a run whose
     * program was missing says (fix --tests-dir, --binary, --launch or PATH, then run the same
     * command again). A resume takes the new commands for the runs still to do.
     *
     * @param a a run's command line as the manifest holds it
     * @param b the same run's command line as planned now
     * @return true if they differ in one word only, a path to a program of the same file name
     */
    public static boolean sameButTheBinarysFolder(List<String> a, List<String> b) {
        if (a.size() != b.size()) {
            return false;
        }
        int differing = 0;
        for (int i = 0; i < a.size(); i++) {
            if (!a.get(i).equals(b.get(i))) {
                String x = Path.of(a.get(i)).getFileName() == null
                        ? ""
                        : Path.of(a.get(i)).getFileName().toString();
                String y = Path.of(b.get(i)).getFileName() == null
                        ? ""
                        : Path.of(b.get(i)).getFileName().toString();
                if (!x.equals(y) || x.isEmpty() || ++differing > 1) {
                    return false;
                }
            }
        }
        return true;
    }

    /** What the launcher's shell, srun and mpirun print when the program does not exist. */
    private static final java.util.regex.Pattern NOT_FOUND = java.util.regex.Pattern.compile(
            "(?i)no such file or directory|command not found|not found|unable to find the executable"
                    + "|could not access or execute|cannot execute");

    /**
     * Whether a failed run failed because its program could not be run at all: the process did not
     * start, it exited 126/127 (the shell's "cannot execute" / "not found"), or the output says a
     * file named like the program was not found (srun's {@code execve(): all_reduce_perf: No such
     * file or directory}, mpirun's "unable to find the executable").
     *
     * @return the reason, or null when the run failed otherwise
     */
    private String missingProgram(Manifest.RunRecord r, int exit, Path output) throws IOException {
        List<String> lines = Files.readAllLines(output, StandardCharsets.ISO_8859_1);
        String first =
                lines.stream().filter(l -> !l.isBlank()).findFirst().orElse("").strip();
        if (exit == 126 || exit == 127) {
            return r.command().getFirst() + (exit == 127 ? " not found" : " cannot be executed") + " (exit " + exit
                    + (first.isEmpty() ? "" : ": " + first) + ")";
        }
        String prog = r.program() + "_perf";
        for (String l : lines) {
            if (l.contains(prog) && NOT_FOUND.matcher(l).find() && !l.contains("NCCL INFO")) {
                return prog + " not found (exit " + exit + ": " + l.strip() + ")";
            }
        }
        return null;
    }

    /**
     * Starts a run's process, its stdout and stderr to {@code runs/<id>.txt.part}; its environment
     * also names the sweep's seed and the run's replicate ({@code NCCL_TUNER_SWEEP_SEED}, {@code
     * NCCL_TUNER_SWEEP_REPLICATE}: the simulated cluster seeds its noise from them).
     *
     * @return the process, or null when it cannot start (the reason written to the .part file; the
     *     run counts as exit 127, the shell's "not found")
     */
    private Process start(Manifest.RunRecord r) throws IOException {
        Path out = cfg.dir().resolve(r.file());
        Path part = out.resolveSibling(out.getFileName() + ".part");
        ProcessBuilder pb = new ProcessBuilder(r.command())
                .redirectErrorStream(true)
                .redirectOutput(part.toFile())
                .directory(cfg.dir().toFile());
        Map<String, String> env = pb.environment();
        env.clear();
        env.putAll(cfg.env());
        REMOVED.forEach(env::remove);
        env.putAll(commonEnv());
        env.putAll(r.env());
        // which sweep and replicate the run is (a simulated cluster seeds its noise from them)
        env.put("NCCL_TUNER_SWEEP_SEED", Long.toString(cfg.seed()));
        env.put("NCCL_TUNER_SWEEP_REPLICATE", Integer.toString(r.replicate()));
        try {
            return pb.start();
        } catch (IOException e) {
            Files.writeString(
                    part, "nccl-tuner sweep: cannot start " + r.command().getFirst() + ": " + e.getMessage() + "\n");
            return null;
        }
    }

    /**
     * Waits for a run's process, killing it (and its children) after {@code --timeout}.
     *
     * @return its exit status; 124 when it was killed for the timeout (a line saying so appended to
     *     the .part file)
     */
    private int await(Process p, Manifest.RunRecord r) throws IOException, InterruptedException {
        Path out = cfg.dir().resolve(r.file());
        Path part = out.resolveSibling(out.getFileName() + ".part");
        try {
            if (!p.waitFor(cfg.timeoutSeconds(), TimeUnit.SECONDS)) {
                p.descendants().forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly();
                p.waitFor();
                Files.writeString(
                        part,
                        "\nnccl-tuner sweep: killed after " + cfg.timeoutSeconds() + " s\n",
                        java.nio.file.StandardOpenOption.APPEND);
                return 124;
            }
        } catch (InterruptedException e) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
            throw e;
        }
        return p.exitValue();
    }

    private static String duration(double s) {
        if (s < 60) {
            return String.format(Locale.ROOT, "%.1f s", s);
        }
        long t = Math.round(s);
        return t >= 3600
                ? String.format(Locale.ROOT, "%dh%02dm", t / 3600, t / 60 % 60)
                : String.format(Locale.ROOT, "%dm%02ds", t / 60, t % 60);
    }
}
