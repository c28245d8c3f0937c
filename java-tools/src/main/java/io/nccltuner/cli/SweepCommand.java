package io.nccltuner.cli;

import io.nccltuner.policy.ForcePolicy;
import io.nccltuner.policy.ForcePolicy.Forced;
import io.nccltuner.policy.InputException;
import io.nccltuner.sweep.Manifest;
import io.nccltuner.sweep.Sweep;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code nccl-tuner sweep}: measures forced candidates with nccl-tests through the plugin's force
 * mode, in fresh processes, R replicates in a randomized balanced order, into a directory that
 * {@code nccl-tuner compile DIR} reads. See {@link Sweep} and docs/measure.md.
 *
 * <p>Exit codes: 0 every run finished, 1 some run failed or was interrupted by a signal to it (run
 * again to retry) or an input error; 130 or 143 (the JVM's own) where Ctrl-C or SIGTERM stopped the
 * sweep itself, its run in progress recorded interrupted;
 * as for every command ({@link Main}), 2 a usage error and 70 an internal one.
 */
@Command(
        name = "sweep",
        customSynopsis = {
            "nccl-tuner sweep -o DIR [--algorithms ALGO,... --protocols PROTO,...]",
            "                        [--candidate ALGO/PROTO[/N]]... [OPTION...]"
        },
        description = {
            "Measure candidates with nccl-tests, through the plugin's force mode, into a folder compile reads.",
            "Runs nccl-tests once per candidate (plus NCCL's own pick), R replicates in a randomized balanced order; "
                    + "writes each run's output and manifest.json to DIR. An interrupted sweep resumes with the same "
                    + "command (--dry-run says what is done and what is left). Then: nccl-tuner compile DIR -o "
                    + "policy.yaml."
        },
        sortOptions = false)
final class SweepCommand extends ToolCommand {
    @Option(
            names = {"-o", "--output"},
            required = true,
            paramLabel = "DIR",
            description = "Sweep directory (created; resumed if it holds this sweep).")
    Path dir;

    @Option(
            names = "--collectives",
            split = ",",
            paramLabel = "NAME",
            defaultValue = "all_reduce",
            description =
                    "nccl-tests programs: all_reduce, all_gather, reduce_scatter, broadcast, reduce (default: ${DEFAULT-VALUE}).")
    List<String> collectives;

    @Option(
            names = "--algorithms",
            split = ",",
            paramLabel = "ALGO",
            description = "Algorithms to force (TREE,RING,...).")
    List<String> algorithms = new ArrayList<>();

    @Option(
            names = "--protocols",
            split = ",",
            paramLabel = "PROTO",
            description = "Protocols to force (LL,LL128,SIMPLE).")
    List<String> protocols = new ArrayList<>();

    @Option(
            names = "--channels",
            split = ",",
            paramLabel = "N",
            description = "Channel counts to force; 0 = NCCL decides (default: 0).")
    List<Integer> channels = new ArrayList<>();

    @Option(names = "--candidate", paramLabel = "ALGO/PROTO[/N]", description = "A further candidate (repeatable).")
    List<String> extra = new ArrayList<>();

    @Option(
            names = "--replicates",
            paramLabel = "R",
            defaultValue = "3",
            description = "Runs per candidate (default: ${DEFAULT-VALUE}).")
    int replicates;

    @Option(
            names = "--seed",
            paramLabel = "N",
            description = "Seed of the run order (default: the seed of the sweep in "
                    + "DIR when resuming, else drawn; recorded in DIR/manifest.json).")
    Long seed;

    @Option(
            names = "--launch",
            paramLabel = "CMD",
            description =
                    "Launcher prefix, split on whitespace, e.g. \"srun -N 2 --ntasks-per-node 8\" (default: none).")
    String launch;

    @Option(
            names = "--binary",
            paramLabel = "PATH",
            description = "One binary for every collective; a binary not named *_perf (a wrapper script, "
                    + "say) gets the program name (all_reduce_perf, ...) as its first argument.")
    Path binary;

    @Option(
            names = "--tests-dir",
            paramLabel = "DIR",
            description = "Directory of the nccl-tests binaries, relative to the current directory (default: PATH).")
    Path testsDir;

    @Option(
            names = "--plugin",
            paramLabel = "PATH",
            description = "Tuner plugin (default: libnccl-tuner-java.so beside this jar).")
    Path plugin;

    @Option(
            names = {"-b", "--min-bytes"},
            paramLabel = "SIZE",
            defaultValue = "4",
            description = "nccl-tests -b, bytes as nccl-tests (64M) or a "
                    + "policy (64MiB) writes them (default: ${DEFAULT-VALUE}).")
    String minBytes;

    @Option(
            names = {"-e", "--max-bytes"},
            paramLabel = "SIZE",
            defaultValue = "64M",
            description = "nccl-tests -e, likewise (default: ${DEFAULT-VALUE}).")
    String maxBytes;

    @Option(
            names = {"-f", "--step-factor"},
            paramLabel = "F",
            defaultValue = "2",
            description = "nccl-tests -f (default: ${DEFAULT-VALUE}).")
    String factor;

    @Option(
            names = {"-g", "--gpus"},
            paramLabel = "N",
            defaultValue = "1",
            description = "nccl-tests -g, GPUs per process (default: ${DEFAULT-VALUE}).")
    long gpus; // long: a value beyond an int still gets the range below

    @Option(
            names = {"-n", "--iters"},
            paramLabel = "N",
            defaultValue = "20",
            description = "nccl-tests -n (default: ${DEFAULT-VALUE}).")
    long iters;

    @Option(
            names = {"-w", "--warmup"},
            paramLabel = "N",
            defaultValue = "5",
            description = "nccl-tests -w (default: ${DEFAULT-VALUE}).")
    long warmup;

    @Option(
            names = {"-c", "--check"},
            paramLabel = "N",
            defaultValue = "1",
            description = "nccl-tests -c (default: ${DEFAULT-VALUE}).")
    long check;

    @Option(
            names = {"-d", "--datatype"},
            paramLabel = "TYPE",
            defaultValue = "float",
            description = "nccl-tests -d (default: ${DEFAULT-VALUE}).")
    String datatype;

    @Option(
            names = "--timeout",
            paramLabel = "S",
            defaultValue = "1800",
            description = "Kill a run after S seconds (default: ${DEFAULT-VALUE}).")
    long timeout;

    @Option(
            names = "--dry-run",
            description = "Print the commands, each with the variables it needs (pasted, a line "
                    + "forces what it says), and the seed; where DIR holds this sweep, how many runs are done and only "
                    + "the lines of those left; warn about binaries not found; run nothing, write nothing.")
    boolean dryRun;

    /** Whether the seed was drawn here (no --seed, no sweep to resume in DIR). */
    private boolean drawnSeed;

    @Override
    int run(PrintWriter out, PrintWriter err) throws InputException, InterruptedException {
        Sweep.Config cfg;
        try {
            cfg = config();
        } catch (IllegalArgumentException e) { // an option value sweep cannot run with
            throw new UsageException(e.getMessage());
        }
        Sweep s = new Sweep(cfg, err);
        if (dryRun) {
            try {
                s.dryRun(out);
            } catch (IOException e) { // DIR holds another sweep: the real run would refuse it likewise
                throw new InputException(e.getMessage());
            }
            if (drawnSeed) {
                out.println("# seed " + cfg.seed() + " was drawn for this dry run and is not kept: run with --seed "
                        + cfg.seed() + " for this order (without --seed the real run draws a new one)");
                out.flush();
            }
            return Main.EXIT_OK;
        }
        Manifest m;
        try {
            m = s.run();
        } catch (IOException e) {
            throw new InputException(e.getMessage());
        }
        long failed = m.runs().stream().filter(r -> !"done".equals(r.status())).count();
        out.println("sweep: " + dir + ": " + (m.runs().size() - failed) + " of "
                + Main.count(m.runs().size(), "run") + " done"
                + (m.signature() != null
                        ? "; signature: NCCL " + m.signature().ncclVersion() + ", "
                                + m.signature().gpu() + ", "
                                + io.nccltuner.model.JobShape.of(
                                        m.signature().nRanks(), m.signature().nNodes())
                        : "")
                + (failed == 0 ? "; next: nccl-tuner compile " + dir + " -o policy.yaml" : ""));
        out.flush();
        return failed == 0 ? Main.EXIT_OK : Main.EXIT_INPUT;
    }

    private Sweep.Config config() throws InputException {
        List<String> programs = new ArrayList<>();
        for (String c : collectives) {
            String p = c.strip().toLowerCase(Locale.ROOT).replaceFirst("_perf$", "");
            p = switch (p.replace("_", "")) {
                case "allreduce" -> "all_reduce";
                case "allgather" -> "all_gather";
                case "reducescatter" -> "reduce_scatter";
                case "broadcast" -> "broadcast";
                case "reduce" -> "reduce";
                default ->
                    throw new IllegalArgumentException("--collectives: '" + c + "' is not all_reduce, all_gather, "
                            + "reduce_scatter, broadcast or reduce");
            };
            if (!programs.contains(p)) {
                programs.add(p);
            }
        }
        List<Forced> cands = new ArrayList<>();
        if (algorithms.isEmpty() != protocols.isEmpty()) {
            throw new IllegalArgumentException(
                    "--algorithms and --protocols go together (their product is the candidates)");
        }
        List<Integer> chs = channels.isEmpty() ? List.of(0) : channels;
        for (String a : algorithms) {
            for (String p : protocols) {
                for (int ch : chs) {
                    if (ch < 0 || ch > io.nccltuner.policy.PolicyLoader.MAX_CHANNELS) {
                        throw new IllegalArgumentException(
                                "--channels: " + ch + " is not 0.." + io.nccltuner.policy.PolicyLoader.MAX_CHANNELS);
                    }
                    cands.add(ForcePolicy.parse(a + "/" + p + (ch > 0 ? "/" + ch : "")));
                }
            }
        }
        for (String e : extra) {
            cands.add(ForcePolicy.parse(e));
        }
        if (cands.isEmpty()) {
            throw new IllegalArgumentException("no candidates: give --algorithms and --protocols, or --candidate");
        }
        if (replicates < 1) {
            throw new IllegalArgumentException("--replicates must be >= 1");
        }
        checkRanges();
        checkSizeRange(minBytes, maxBytes);
        Path lib = plugin != null ? plugin : defaultPlugin();
        if (!Files.isRegularFile(lib)) {
            throw new InputException("plugin " + lib, "not found; give --plugin PATH");
        }
        if (binary != null && !Files.isExecutable(binary)) {
            throw new InputException("--binary " + binary, "not an executable file");
        }
        List<String> args = List.of(
                "-b",
                testsSize("-b", minBytes),
                "-e",
                testsSize("-e", maxBytes),
                "-f",
                factor,
                "-g",
                Long.toString(gpus),
                "-n",
                Long.toString(iters),
                "-w",
                Long.toString(warmup),
                "-c",
                Long.toString(check),
                "-d",
                datatype);
        List<String> words = launch == null || launch.isBlank()
                ? List.of()
                : List.of(launch.strip().split("\\s+"));
        long s = seed != null ? seed : resumedSeed().orElseGet(() -> new SecureRandom().nextLong() >>> 16);
        drawnSeed = seed == null && resumedSeed().isEmpty();
        // relative paths are the current directory's (the runs start in DIR)
        return new Sweep.Config(
                dir.toAbsolutePath(),
                programs,
                binary == null ? null : binary.toAbsolutePath(),
                testsDir == null ? null : testsDir.toAbsolutePath().normalize(),
                words,
                lib.toAbsolutePath(),
                cands,
                replicates,
                s,
                args,
                timeout,
                System.getenv());
    }

    /** The data types nccl-tests' {@code -d} takes (nccl-tests src/common.cu test_typenames, and all). */
    static final List<String> DATATYPES = List.of(
            "int8",
            "uint8",
            "int32",
            "uint32",
            "int64",
            "uint64",
            "half",
            "float",
            "double",
            "bfloat16",
            "f8e4m3",
            "f8e5m2",
            "all");

    /** Largest {@code -n}, {@code -w} and {@code -c}: a million iterations (nccl-tests' default -n is 20). */
    static final int MAX_ITERS = 1_000_000;

    /** Largest {@code -f}: 1024 (nccl-tests multiplies the size by it, an integer, from -b up to -e). */
    static final int MAX_FACTOR = 1024;

    /** Largest {@code -g}: GPUs per process (an NVL72 rack is 72). */
    static final int MAX_GPUS = 1024;

    /** Largest {@code --timeout}, seconds: one week. */
    static final long MAX_TIMEOUT_S = 7L * 24 * 3600;

    /**
     * Refuses the numeric options nccl-tests would misread or that make no run: {@code -f} a whole
     * number 2..{@value #MAX_FACTOR} (nccl-tests reads it with strtol: {@code 1.5} is 1, and a factor
     * below 2 steps by -i bytes instead), {@code -g} 1..{@value #MAX_GPUS}, {@code -n}
     * 1..{@value #MAX_ITERS}, {@code -w} and {@code -c} 0..{@value #MAX_ITERS}, {@code -d} one of
     * {@link #DATATYPES}, {@code --timeout} 1..{@value #MAX_TIMEOUT_S} seconds.
     *
     * @throws IllegalArgumentException naming the option, the value and the allowed range (exit 2)
     */
    void checkRanges() {
        long f;
        try {
            f = io.nccltuner.policy.AsciiNumbers.parseLong(factor.strip());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("-f/--step-factor: '" + factor + "' is not a whole number 2.."
                    + MAX_FACTOR + " in ASCII digits (nccl-tests multiplies the size by it)");
        }
        range("-f/--step-factor", f, 2, MAX_FACTOR);
        range("-g/--gpus", gpus, 1, MAX_GPUS);
        range("-n/--iters", iters, 1, MAX_ITERS);
        range("-w/--warmup", warmup, 0, MAX_ITERS);
        range("-c/--check", check, 0, MAX_ITERS);
        range("--timeout", timeout, 1, MAX_TIMEOUT_S);
        if (!DATATYPES.contains(datatype)) {
            throw new IllegalArgumentException("-d/--datatype: '" + datatype
                    + "' is not a data type of nccl-tests; use " + String.join(", ", DATATYPES));
        }
    }

    private static void range(String option, long v, long min, long max) {
        if (v < min || v > max) {
            throw new IllegalArgumentException(option + ": " + v + " is outside " + min + ".." + max);
        }
    }

    /**
     * The seed of the sweep already in {@code -o DIR}, so that the same command without {@code
     * --seed} resumes it.
     *
     * @return the manifest's seed, or empty when DIR holds no readable manifest
     */
    private java.util.Optional<Long> resumedSeed() {
        Path mf = dir.resolve(Manifest.FILE);
        if (!Files.isRegularFile(mf)) {
            return java.util.Optional.empty();
        }
        try {
            return java.util.Optional.of(Manifest.read(mf).seed());
        } catch (IOException e) {
            return java.util.Optional.empty(); // Sweep.run reports the unreadable manifest
        }
    }

    /**
     * Refuses a size range nccl-tests would not sweep: {@code -b} above {@code -e} (nccl-tests runs
     * its sizes from {@code -b} up to {@code -e}, and with {@code -b} above {@code -e} it measures
     * nothing useful).
     *
     * @param min the {@code -b} value as given
     * @param max the {@code -e} value as given
     * @throws IllegalArgumentException {@code -b 1G (1 GiB) is above -e 64M (64 MiB): ...}, or a value
     *     that does not parse
     */
    static void checkSizeRange(String min, String max) {
        long lo = bytes("-b", min);
        long hi = bytes("-e", max);
        if (Long.compareUnsigned(lo, hi) > 0) {
            throw new IllegalArgumentException("-b " + min + " (" + io.nccltuner.policy.ByteSize.format(lo)
                    + ") is above -e " + max + " (" + io.nccltuner.policy.ByteSize.format(hi)
                    + "): nccl-tests sweeps from -b up to -e; give the smaller size to -b");
        }
    }

    /** @return a size option's bytes, {@code option: ...} on a value that does not parse */
    private static long bytes(String option, String text) {
        try {
            return io.nccltuner.policy.ByteSize.parse(text);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(option + ": " + e.getMessage());
        }
    }

    /**
     * A size option as nccl-tests spells it: {@code 64M}, {@code 64MiB}, {@code 64 MiB} and {@code
     * 67108864} all give {@code 64M} (nccl-tests reads K, M, G as powers of 1024).
     *
     * @param option -b or -e, for the message
     * @param text the value given
     * @return the value for nccl-tests
     */
    static String testsSize(String option, String text) {
        long b = bytes(option, text);
        String[] units = {"K", "M", "G", "T"};
        for (int i = units.length; i >= 1; i--) {
            long u = 1L << (10 * i);
            if (b >= u && b % u == 0) {
                return b / u + units[i - 1];
            }
        }
        return Long.toString(b);
    }

    /** libnccl-tuner-java.so beside the jar this class came from (build/lib, or lib/ of the distribution). */
    static Path defaultPlugin() {
        try {
            Path jar = Path.of(SweepCommand.class
                    .getProtectionDomain()
                    .getCodeSource()
                    .getLocation()
                    .toURI());
            return (Files.isDirectory(jar) ? jar : jar.getParent()).resolve("libnccl-tuner-java.so");
        } catch (Exception e) {
            return Path.of("libnccl-tuner-java.so");
        }
    }
}
