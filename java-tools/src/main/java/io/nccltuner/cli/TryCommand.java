package io.nccltuner.cli;

import io.nccltuner.model.JobShape;
import io.nccltuner.policy.InputException;
import io.nccltuner.policy.Policy;
import io.nccltuner.report.DecisionLogFile;
import io.nccltuner.report.UnchangedHits;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code nccl-tuner try --policy P --trace T...}: tries a policy without a GPU through the real
 * plugin. The host harness (tests/harness/harness.c; {@code libexec/nccl-tuner-harness} in the
 * distribution, {@code build/tests/harness} in a build tree) loads {@code libnccl-tuner-java.so}
 * as NCCL does and replays each captured trace, in shadow mode (default) with a decision log in a
 * temporary folder; then the plugin's own lines (the profile each communicator matched, or why none
 * did, its summary), the harness's count, the report of the decision logs ({@code nccl-tuner
 * report}, priced with {@code --measurements}, NCCL's picks also from {@code --nccl-log}, the log
 * compile took, whose NCCL release is checked against {@code --nccl-era} and the measurements')
 * and a verdict line: how many calls the policy would change and how many rule hits change
 * nothing, per reason (a candidate NCCL's table does not offer, named from an in-process replay of
 * the traces; NCCL's own pick already), or why it changes nothing at all (no profile matches the
 * shape; a profile of the shape skipped for its hardware, with the {@code --gpu}/{@code
 * --nccl-version} that match it). The replay presents a GPU and NCCL version to the plugin
 * ({@link TryHardware}: {@code --gpu}, {@code --nccl-version}, else what {@code --nccl-log} and
 * {@code --measurements} name); enforce mode's per-call lines are folded ({@link Fold}).
 *
 * <p>Exit codes (cli.Main's scheme): 0 done (also when the policy would change nothing for a shape
 * it has a profile for: the last line says why), 1 an input error (no profile matches the shape
 * tried, as {@code validate --nranks N --nnodes M} exits 1 for it; a policy that does not load, a missing trace, no harness or
 * plugin found, the harness failing; a folder --keep-logs made is removed again when nothing was
 * logged), 2 a usage error (also an --nccl-era the harness does not know, --cc without --gpu, a
 * --nccl-version another era calls the tuner as), 3 ({@link Main#EXIT_CHECK}) when the report
 * finds that the traces' ranks run different tables or decide differently (the report and the
 * verdict are printed first), 70 an internal error.
 */
@Command(
        name = "try",
        customSynopsis = {
            "nccl-tuner try --policy POLICY --trace TRACE.csv... [--mode MODE]",
            "         [--nranks N --nnodes M] [--nccl-era E] [--gpu NAME [--cc M.m]]",
            "         [--nccl-version V] [--measurements DIR_OR_FILE [--nccl-log LOG]...]",
            "         [--html FILE] [--keep-logs DIR] [--harness PATH] [--plugin PATH]"
        },
        description = {
            "Try a policy without a GPU: replay captured tuner calls through the real plugin.",
            "Shadow mode by default; prints what it decided and the report of its decision",
            "logs. Several --trace files are replayed as the ranks of one job: one process",
            "each, one report over all their decision logs (the report's ranks); try each",
            "trace alone for its own report. The policy is a YAML policy or NCCL's",
            "example-tuner CSV (read as NCCL_TUNER_CONFIG_FILE). The replay presents the",
            "GPU and NCCL version of --gpu and --nccl-version (default: what --nccl-log and",
            "--measurements name) to profiles that match on them. Exits 1 where no profile",
            "matches the shape tried, as validate --nranks N --nnodes M does.",
            ""
        },
        footer = {"", Main.EXIT_CODES},
        sortOptions = false)
final class TryCommand extends ToolCommand {
    @Option(
            names = "--policy",
            required = true,
            paramLabel = "POLICY",
            description = "the policy to try: YAML, or NCCL's example-tuner CSV (nccl_tuner.conf)")
    Path policy;

    @Option(
            names = "--trace",
            required = true,
            arity = "1..*",
            paramLabel = "TRACE.csv",
            description = "captured tuner calls (NCCL_TUNER_JAVA_RECORD, or examples/traces/trace_*.csv); repeatable:"
                    + " several are the ranks of one job")
    List<Path> traces = new ArrayList<>();

    @Option(
            names = "--mode",
            paramLabel = "MODE",
            defaultValue = "shadow",
            description = "shadow (default: log what would change) or enforce (also print each changed call)")
    String mode;

    @Option(
            names = {"--nranks", "--ranks"},
            paramLabel = "N",
            description = "run the traces as nRanks N (with --nnodes)")
    int nRanks;

    @Option(
            names = {"--nnodes", "--nodes"},
            paramLabel = "M",
            description = "run the traces as nNodes M (with --nranks)")
    int nNodes;

    @Option(
            names = "--nccl-era",
            paramLabel = "E",
            defaultValue = io.nccltuner.model.NcclEra.DEFAULT,
            description =
                    "load and call the plugin as NCCL E does: 2.22, 2.24, 2.28, 2.30 or 2.32.6 (default: ${DEFAULT-VALUE})")
    String era;

    @Option(
            names = "--gpu",
            paramLabel = "NAME",
            description = "the GPU the replay presents to the plugin, as a job's CUDA driver names it"
                    + " (\"NVIDIA H200\"; a profile's gpu: matches a name that contains it); default: the one"
                    + " --nccl-log or --measurements name, else none (a profile naming gpu or"
                    + " computeCapability is skipped)")
    String gpu;

    @Option(
            names = "--cc",
            paramLabel = "M.m",
            description = "the presented GPU's compute capability (default: from its name, 9.0 for H100/H200)")
    String cc;

    @Option(
            names = "--nccl-version",
            paramLabel = "V",
            description = "the NCCL version the replay presents (ncclGetVersion), e.g. 2.27.7; it also picks"
                    + " --nccl-era when that is not given; default: the one --nccl-log or --measurements"
                    + " name (with --nccl-era, only a release of that era), else --nccl-era's release")
    String ncclVersion;

    @Option(
            names = "--measurements",
            paramLabel = "DIR_OR_FILE",
            description = "price the decisions with measured times (as report --measurements)")
    Path measurements;

    @picocli.CommandLine.Mixin
    SharedOptions.ReportHtml html;

    @Option(
            names = "--keep-logs",
            paramLabel = "DIR",
            description = "write the decision logs into DIR, a new or empty folder, and keep them (default: a temporary"
                    + " folder, removed)")
    Path keepLogs;

    @Option(
            names = "--harness",
            paramLabel = "PATH",
            description = "the host harness (default: found beside this tool)")
    Path harness;

    @Option(
            names = "--plugin",
            paramLabel = "PATH",
            description = "the plugin library (default: found beside this tool)")
    Path plugin;

    @Option(
            names = "--nccl-log",
            paramLabel = "LOG",
            description =
                    "the NCCL INFO log of the measured runs (as compile --nccl-log; repeatable): its NCCL release is"
                            + " checked against --nccl-era and the --measurements', and with --measurements its selection lines"
                            + " name NCCL's picks for the report's prices (as report --nccl-log)")
    List<Path> ncclLogs = new ArrayList<>();

    /** --nccl-era parsed ({@link #checkOptions}), its versionCode --nccl-version's when given. */
    private io.nccltuner.model.NcclEra tried;

    /** What the replay presents to the plugin: the GPU and NCCL's version ({@link TryHardware}). */
    private TryHardware hardware;

    private static final Pattern SUMMARY =
            Pattern.compile("summary profile .*?: calls (\\d+), rule hits (\\d+), applied (\\d+)");
    private static final Pattern DISAGREE = Pattern.compile("applied \\d+, disagreements (\\d+)");
    private static final Pattern NO_MATCH = Pattern.compile("no profile matches (nRanks=\\d+ nNodes=\\d+)");

    /** What the plugin's lines said over all traces: its summary counts and the shapes no profile matched. */
    private static final class Tally {
        long calls;
        long hits;
        long applied;
        long differ;
        final List<String> unmatched = new ArrayList<>();

        /** Adds what one line of the harness's output says. */
        void read(String line) {
            Matcher m = SUMMARY.matcher(line);
            if (m.find()) {
                calls += Long.parseLong(m.group(1));
                hits += Long.parseLong(m.group(2));
                applied += Long.parseLong(m.group(3));
            }
            Matcher dm = DISAGREE.matcher(line);
            if (dm.find()) {
                differ += Long.parseLong(dm.group(1));
            }
            Matcher nm = NO_MATCH.matcher(line);
            if (nm.find() && !unmatched.contains(nm.group(1))) {
                unmatched.add(nm.group(1));
            }
        }
    }

    @Override
    int run(PrintWriter out, PrintWriter err) throws Exception {
        checkOptions();
        PolicyFiles.Loaded loaded = PolicyFiles.load(policy); // YAML, or NCCL's example CSV
        Policy p = loaded.policy();
        for (String w : loaded.warnings()) {
            err.println("nccl-tuner try: warning: " + w);
        }
        List<InputException> refused = new ArrayList<>(); // every input is checked before any refuses the try
        for (Path f : inputFiles()) {
            try {
                InputFiles.requireReadable(f);
            } catch (InputException e) {
                refused.add(e);
            }
        }
        if (measurements != null) { // before the harness runs; report prints the folder's notes
            try {
                InputFiles.measurementData(measurements, new PrintWriter(java.io.Writer.nullWriter()));
            } catch (InputException e) {
                refused.add(e);
            }
        }
        InputFiles.refuseInputs("nccl-tuner try", refused, inputCount(), "nothing tried", err);
        Path lib = toolDir();
        Path h = harnessPath(lib);
        Path so = pluginPath(lib);
        checkKeepLogs();
        hardware = TryHardware.resolve(
                gpu,
                cc,
                tried,
                ncclVersion != null,
                spec.commandLine().getParseResult().hasMatchedOption("--nccl-era"),
                ncclLogs,
                measurements);
        tried = hardware.era(); // its versionCode the one presented (--nccl-version, or what an input names)
        Path driver = hardware.driver(h);
        boolean created = keepLogs != null && !Files.exists(keepLogs); // removed again if nothing is written
        Path logs = keepLogs != null ? Files.createDirectories(keepLogs) : Files.createTempDirectory("nccl-tuner-try");
        try {
            out.println("try: policy " + p.name() + " (" + policy + "), mode " + mode + ", "
                    + Main.count(traces.size(), "trace")
                    + (nRanks > 0 ? " as " + JobShape.of(nRanks, nNodes) : "") + ", NCCL " + tried.name() + ", plugin "
                    + so);
            if (loaded.csv()) {
                out.println("try: " + policy
                        + " is NCCL's example-tuner CSV: given to the plugin as NCCL_TUNER_CONFIG_FILE");
            }
            if (traces.size() > 1) {
                out.println(severalTraces(traces.size()));
            }
            checkNcclLogs(out, err);
            checkLogShapes(err);
            if (hardware.gpu() != null // given or named by an input, as the version below
                    || hardware.gpuFrom() != null
                    || !hardware.versionFrom().startsWith("--nccl-era ")
                    || namesHardware(p)) {
                out.println(hardware.line());
            }
            Tally tally = new Tally();
            List<Path> replayed = new ArrayList<>();
            for (Path t : traces) { // each trace replayed, so that one run names every trace the harness refuses
                try {
                    replayed.add(replayTrace(out, h, so, driver, loaded.csv(), t, logs, tally));
                } catch (InputException e) {
                    refused.add(e);
                }
            }
            out.flush();
            InputFiles.refuseInputs("nccl-tuner try", refused, traces.size(), "no report", err);
            int rc = tally.hits > 0 ? report(out, err, logs) : Main.EXIT_OK;
            if (rc != Main.EXIT_OK && rc != Main.EXIT_CHECK) {
                return rc;
            }
            String verdict = verdict(p, tally, tally.hits > 0 ? unchanged(p, logs, replayed) : null);
            out.println(verdict);
            if (created && !wroteDecisions(logs)) {
                out.println("try: --keep-logs " + keepLogs + ": the plugin logged no decision (no log, or empty"
                        + " ones), so the folder try made for them is removed");
            }
            out.flush();
            err.flush();
            return exitCode(rc, verdict);
        } finally {
            if (keepLogs == null || (created && !wroteDecisions(logs))) {
                try (Stream<Path> s = Files.walk(logs)) {
                    for (Path f : s.sorted(java.util.Comparator.reverseOrder()).toList()) {
                        Files.deleteIfExists(f);
                    }
                }
            }
        }
    }

    /**
     * try's exit code: the report's, or {@link Main#EXIT_INPUT} where no profile matches the shape
     * tried, as {@code validate --nranks N --nnodes M} exits for that shape (a profile skipped only
     * for its hardware, and rule hits that change nothing, exit 0 as validate does).
     *
     * @param rc the report's exit code (0 or {@link Main#EXIT_CHECK})
     * @param verdict try's last line
     * @return the exit code
     */
    static int exitCode(int rc, String verdict) {
        return rc == Main.EXIT_OK && verdict.startsWith("try: the policy changes nothing: no profile matches ")
                ? Main.EXIT_INPUT
                : rc;
    }

    /**
     * A line of the harness's output as try prints it: in shadow mode the harness's {@code
     * changed=0} says so (the plugin only logs there, the verdict says what it would change), and the
     * plugin's constants line says its "before" values are the harness's, not NCCL's.
     *
     * @param line the line, NCCL's prefix removed
     * @param mode try's --mode
     * @return the line, labelled where it would mislead
     */
    static String relayed(String line, String mode) {
        if (mode.equals("shadow") && line.startsWith("harness: calls=")) {
            Matcher m = Pattern.compile(" changed=(\\d+) ").matcher(line);
            if (m.find()) {
                return line + " (in shadow mode the plugin changed " + m.group(1) + ": it only logs)";
            }
        }
        if (CONSTANTS_LINE.matcher(line).find()) {
            return line + " " + HARNESS_CONSTANTS;
        }
        return line;
    }

    /**
     * What the plugin's constants line says its "before" values are: the harness's (tests/harness's
     * CONSTANTS_DEFAULTS), NCCL 2.30.7's baseLatencies and 0 for every other constant.
     */
    static final String HARNESS_CONSTANTS = "(before: the harness's constants, NCCL 2.30.7's baseLatencies and 0 for"
            + " every other constant; a job's NCCL starts from its own, not known here)";

    private static final Pattern CONSTANTS_LINE =
            Pattern.compile("TUNER/Java: .*profile .*: (set|would set \\(shadow\\)) \\d+ constants?: ");

    /** @return whether a profile of the policy names the GPU, its compute capability or NCCL's version */
    private static boolean namesHardware(Policy p) {
        return p.profiles().stream()
                .map(Policy.Profile::hardware)
                .anyMatch(hw -> hw.gpu() != null || hw.computeCapability() != null || hw.ncclVersion() != null);
    }

    /** @return whether a decision log in the folder has a line (the plugin creates one empty where no profile matches) */
    private static boolean wroteDecisions(Path logs) throws IOException {
        for (Path f : decisionLogs(logs)) {
            if (Files.size(f) > 0) {
                return true;
            }
        }
        return false;
    }

    /** @return the decision logs the plugin wrote into the folder, sorted */
    private static List<Path> decisionLogs(Path logs) throws IOException {
        if (!Files.isDirectory(logs)) {
            return List.of();
        }
        try (Stream<Path> s = Files.list(logs)) {
            return s.filter(f -> f.getFileName().toString().endsWith(".jsonl"))
                    .sorted()
                    .toList();
        }
    }

    /** @return the files try reads: each --trace, then each --nccl-log */
    private List<Path> inputFiles() {
        List<Path> all = new ArrayList<>(traces);
        all.addAll(ncclLogs);
        return all;
    }

    /** @return the inputs given: the --trace and --nccl-log files and --measurements */
    private int inputCount() {
        return traces.size() + ncclLogs.size() + (measurements == null ? 0 : 1);
    }

    /** NCCL's INFO line of a communicator's shape: {@code comm 0x... rank 0 nRanks 2 nNodes 1 localRanks 2 ...}. */
    private static final Pattern LOG_SHAPE =
            Pattern.compile("\\bcomm 0x\\p{XDigit}+ rank \\d+ nRanks (\\d+) nNodes (\\d+)\\b");

    /**
     * The communicator shapes an NCCL INFO log ran: its {@code comm 0x.. rank R nRanks N nNodes M}
     * INIT lines; a log without any (nccl-tests output with TUNING alone) is read as {@code explain}
     * reads it ({@link io.nccltuner.model.LogShape}: the {@code # Rank} lines, the calls'
     * {@code [nranks=N]}, the ring lines), so that a log of another job is told apart all the same.
     *
     * @param log an NCCL INFO log
     * @return the shapes ({@link JobShape}, in order; {@code nRanks=2} alone where nothing tells the
     *     nodes), an inferred one followed by {@link #INFERRED}; empty when nothing tells
     * @throws IOException if reading fails
     */
    static java.util.Set<String> logShapes(Path log) throws IOException {
        java.util.Set<String> shapes = new java.util.LinkedHashSet<>();
        List<String> lines = Files.readAllLines(log, StandardCharsets.ISO_8859_1);
        for (String l : lines) {
            Matcher m = LOG_SHAPE.matcher(l);
            if (m.find()) {
                shapes.add(JobShape.of(Long.parseLong(m.group(1)), Long.parseLong(m.group(2))));
            }
        }
        if (shapes.isEmpty()) {
            io.nccltuner.model.LogShape inferred = io.nccltuner.model.LogShape.of(lines);
            if (inferred.nRanks() > 0) {
                shapes.add((inferred.nNodes() > 0
                                ? JobShape.of(inferred.nRanks(), inferred.nNodes())
                                : "nRanks=" + inferred.nRanks())
                        + INFERRED);
            }
        }
        return shapes;
    }

    /**
     * What follows a shape {@link #logShapes} inferred: the log has no INIT line naming it, as
     * explain says.
     */
    static final String INFERRED = " (inferred: the log has no 'comm ... nRanks N nNodes M' line)";

    /**
     * Whether a shape a log ran is one the traces are tried as.
     *
     * @param logShape {@code nRanks=2 nNodes=1}, or {@code nRanks=2} (nodes unknown), either
     *     possibly followed by {@link #INFERRED}
     * @param tried the traces' shapes ({@link JobShape})
     * @return whether some traces' shape has its nRanks and (where the log tells) its nNodes
     */
    static boolean sameShape(String logShape, java.util.Collection<String> tried) {
        String s =
                logShape.endsWith(INFERRED) ? logShape.substring(0, logShape.length() - INFERRED.length()) : logShape;
        return tried.stream().anyMatch(t -> t.equals(s) || t.startsWith(s + " "));
    }

    /**
     * Warns (one line per --nccl-log, stderr) where the log's communicators have none of the shapes
     * the traces' communicators are tried as (--nranks/--nnodes, else the traces' own): the GPU and
     * NCCL version it names, presented to the plugin, and its selection lines are then another job's.
     */
    private void checkLogShapes(PrintWriter err) throws IOException {
        if (ncclLogs.isEmpty()) {
            return;
        }
        java.util.Set<String> tried = new java.util.LinkedHashSet<>();
        if (nRanks > 0) {
            tried.add(JobShape.of(nRanks, nNodes));
        } else {
            for (Path t : traces) {
                try {
                    long[] shape = traceShape(io.nccltuner.trace.TraceFile.read(t));
                    if (shape[0] > 0) {
                        tried.add(JobShape.of(shape[0], shape[1]));
                    }
                } catch (IllegalArgumentException e) { // the harness names what is wrong with it
                    continue;
                }
            }
        }
        for (Path l : ncclLogs) {
            java.util.Set<String> shapes = logShapes(l);
            if (!tried.isEmpty() && !shapes.isEmpty() && shapes.stream().noneMatch(x -> sameShape(x, tried))) {
                err.println(otherShape(l, shapes, tried));
            }
        }
        err.flush();
    }

    /**
     * The warning when an --nccl-log's communicators have another shape than the traces'.
     *
     * @param log the log
     * @param logShapes the shapes its communicators have ({@link JobShape})
     * @param traceShapes the shapes the traces are tried as
     * @return {@code nccl-tuner try: warning: --nccl-log LOG ran nRanks=2 nNodes=1, the traces
     *     nRanks=16 nNodes=2: the GPU and NCCL version it names are another job's; ...}
     */
    static String otherShape(
            Path log, java.util.Collection<String> logShapes, java.util.Collection<String> traceShapes) {
        return "nccl-tuner try: warning: --nccl-log " + log + " ran " + String.join(", ", logShapes)
                + ", the traces " + String.join(", ", traceShapes)
                + ": the GPU and NCCL version it names, presented to the plugin, are another job's; give the traces'"
                + " own job's log, or --gpu NAME and --nccl-version V";
    }

    /** Refuses --mode, --nranks/--nnodes and --nccl-era values try cannot run with (usage errors, exit 2). */
    private void checkOptions() {
        try {
            tried = io.nccltuner.model.NcclEra.parse(era);
            if (cc != null) {
                TryHardware.parseCc(cc);
            }
        } catch (IllegalArgumentException e) { // as replay: the spellings the harness knows
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
        }
        if (cc != null && gpu == null) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(), "--cc is the compute capability of --gpu's GPU: give --gpu NAME with it");
        }
        if (ncclVersion != null) {
            tried = versionEra(
                    ncclVersion, tried, spec.commandLine().getParseResult().hasMatchedOption("--nccl-era"));
        }
        if (!mode.equals("shadow") && !mode.equals("enforce")) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(), "--mode must be shadow or enforce, not '" + mode + "'");
        }
        if ((nRanks > 0) != (nNodes > 0) || nRanks < 0 || nNodes < 0 || (nRanks > 0 && nNodes > nRanks)) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(), "--nranks and --nnodes go together, 1 <= nnodes <= nranks");
        }
    }

    /**
     * The era that presents --nccl-version: --nccl-era's when given (it must be the release's own),
     * else the release's.
     *
     * @param version --nccl-version, "2.27.7"
     * @param era --nccl-era parsed (its default when not given)
     * @param eraGiven whether --nccl-era was given
     * @return the era, its versionCode the version's (22707)
     * @throws CommandLine.ParameterException (exit 2) for a version that does not parse, or one whose
     *     NCCL calls the tuner otherwise than the --nccl-era given
     */
    private io.nccltuner.model.NcclEra versionEra(String version, io.nccltuner.model.NcclEra era, boolean eraGiven) {
        long code;
        try {
            code = io.nccltuner.policy.Signature.parseVersion(version);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--nccl-version " + e.getMessage());
        }
        io.nccltuner.model.NcclEra ran = io.nccltuner.model.NcclEra.forVersion(code);
        if (eraGiven && !ran.name().equals(era.name())) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(),
                    "--nccl-version " + version + " calls the tuner as NCCL " + ran.name() + " does (tuner v"
                            + ran.tunerVersion() + "), not as --nccl-era " + era.name() + " (tuner v"
                            + era.tunerVersion() + "); give --nccl-era " + ran.name() + ", or leave it out");
        }
        return ran;
    }

    /** @return --harness, or the host harness found beside this tool's jar */
    private Path harnessPath(Path lib) throws InputException {
        if (harness != null) {
            if (!Files.isExecutable(harness)) {
                throw new InputException("--harness " + harness, "not an executable file");
            }
            return harness;
        }
        return find(
                "host harness",
                lib == null
                        ? List.of()
                        : List.of(
                                lib.resolveSibling("libexec").resolve("nccl-tuner-harness"),
                                lib.resolveSibling("tests").resolve("harness")),
                "--harness");
    }

    /** @return --plugin, or the plugin library found beside this tool's jar */
    private Path pluginPath(Path lib) throws InputException {
        if (plugin != null) {
            if (!Files.isRegularFile(plugin)) {
                throw new InputException("--plugin " + plugin, "no such file");
            }
            return plugin;
        }
        return find(
                "plugin library", lib == null ? List.of() : List.of(lib.resolve("libnccl-tuner-java.so")), "--plugin");
    }

    /** Refuses a --keep-logs folder that already holds files: the report would read them too. */
    private void checkKeepLogs() throws IOException, InputException {
        if (keepLogs == null || !Files.isDirectory(keepLogs)) {
            return;
        }
        long n;
        try (Stream<Path> s = Files.list(keepLogs)) {
            n = s.count();
        }
        if (n > 0) {
            throw new InputException("--keep-logs " + keepLogs, keepLogsNotEmpty(n));
        }
    }

    /**
     * What each --nccl-log is used for (one line each on stdout), and warnings (stderr) where its
     * NCCL release is not the one --nccl-era runs the plugin as, or where --measurements were taken
     * with another release or on other GPUs than the log's ({@link MeasuredOn}).
     */
    private void checkNcclLogs(PrintWriter out, PrintWriter err) throws IOException {
        if (ncclLogs.isEmpty()) {
            return;
        }
        MeasuredOn measuredOn = measurements == null ? null : MeasuredOn.of(measurements);
        for (Path l : ncclLogs) {
            MeasuredOn logOn = MeasuredOn.of(l);
            out.println(ncclLogLine(l, logOn, measurements != null));
            for (String v : logOn.ncclVersions()) {
                io.nccltuner.model.NcclEra ran =
                        io.nccltuner.model.NcclEra.forVersion(io.nccltuner.policy.Signature.parseVersion(v));
                if (!ran.name().equals(tried.name())) {
                    err.println(otherEra(l, v, tried, ran));
                }
            }
            if (measuredOn != null) {
                measuredOn.otherMachine(measurements, logOn, l).forEach(w -> err.println("nccl-tuner try: " + w));
            }
        }
        err.flush();
    }

    /**
     * The line try prints for an --nccl-log: its NCCL release and what the log serves.
     *
     * @param log the log
     * @param on the releases and GPUs it names
     * @param priced whether --measurements were given (the log's selection lines then price NCCL's picks)
     * @return {@code try: --nccl-log LOG: NCCL 2.28.9; its selection lines name NCCL's picks for the
     *     report's prices}
     */
    static String ncclLogLine(Path log, MeasuredOn on, boolean priced) {
        return "try: --nccl-log " + log + ": "
                + (on.ncclVersions().isEmpty()
                        ? "no 'NCCL version' line, so its release is not checked against --nccl-era"
                        : "NCCL " + String.join(", ", on.ncclVersions()))
                + (priced
                        ? "; its selection lines name NCCL's picks for the report's prices"
                        : "; add --measurements for the report's prices (its selection lines then name NCCL's picks)");
    }

    /**
     * The warning when an --nccl-log's release calls the tuner otherwise than --nccl-era.
     *
     * @param log the log
     * @param version its release, {@code 2.27.7}
     * @param tried the era try runs the plugin as
     * @param ran the era of the log's release
     * @return {@code nccl-tuner try: warning: --nccl-log LOG: NCCL 2.27.7 ran there (tuner v4), but
     *     the plugin is tried as NCCL 2.28 calls it (tuner v5); give --nccl-era 2.24 to try it as
     *     that release}
     */
    static String otherEra(Path log, String version, io.nccltuner.model.NcclEra tried, io.nccltuner.model.NcclEra ran) {
        return "nccl-tuner try: warning: --nccl-log " + log + ": NCCL " + version + " ran there (tuner v"
                + ran.tunerVersion() + "), but the plugin is tried as NCCL " + tried.name() + " calls it (tuner v"
                + tried.tunerVersion() + "); give --nccl-era " + ran.name() + " to try it as that release";
    }

    /** The rest of the harness's line refusing a trace's row, after {@code harness: TRACE:}: {@code 5: why}. */
    private static final Pattern BAD_ROW = Pattern.compile("(\\d+): (.*)");

    /**
     * Replays one trace through the harness, prints the plugin's lines (identical lines in a row
     * folded: {@link Fold}) and adds its counts to the tally.
     *
     * @return the trace the harness replayed (reshaped into the logs' folder for --nranks)
     * @throws InputException {@code TRACE:LINE: why} where the harness refuses a row of the trace
     *     (its line printed once, in the error), or the harness's exit code and the lines it printed
     *     that were not relayed above
     */
    private Path replayTrace(PrintWriter out, Path h, Path so, Path driver, boolean csv, Path t, Path logs, Tally tally)
            throws IOException, InterruptedException, InputException {
        Path trace = nRanks > 0 ? reshaped(t, logs) : t;
        List<String> cmd = new ArrayList<>(
                List.of(h.toString(), "--plugin", so.toAbsolutePath().toString(), "--nccl-era", tried.name()));
        if (hardware.otherVersion()) { // the harness's ncclGetVersion reports it instead of the era's release
            cmd.addAll(List.of("--nccl-version", Integer.toString(tried.versionCode())));
        }
        cmd.addAll(List.of("--trace", trace.toString()));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        Map<String, String> env = pb.environment();
        env.keySet()
                .removeIf(k -> k.startsWith("NCCL_TUNER_JAVA_")
                        && !k.equals("NCCL_TUNER_JAVA_HOME")
                        && !k.equals("NCCL_TUNER_JAVA_OPTS"));
        env.remove("NCCL_TUNER_PLUGIN");
        env.remove("NCCL_TUNER_CONFIG_FILE");
        env.remove("NCCL_DEBUG_FILE");
        env.put("NCCL_DEBUG", "INFO");
        env.put(
                csv ? "NCCL_TUNER_CONFIG_FILE" : "NCCL_TUNER_JAVA_POLICY",
                policy.toAbsolutePath().toString());
        env.put("NCCL_TUNER_JAVA_MODE", mode);
        env.put(
                "NCCL_TUNER_JAVA_LOG",
                logs.toAbsolutePath().resolve("tuner-%h-%p.jsonl").toString());
        env.putIfAbsent("NCCL_TUNER_JAVA_HOME", System.getProperty("java.home"));
        hardware.environment(env, driver);
        Process pr = pb.start();
        pr.getOutputStream().close();
        String text = new String(pr.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!pr.waitFor(300, TimeUnit.SECONDS)) {
            pr.destroyForcibly();
            throw new InputException(h.toString(), "the harness did not finish in 300 s on " + t);
        }
        out.println("== " + t);
        Fold fold = new Fold(out);
        String badRow = "harness: " + trace + ":";
        InputException refusal = null; // the harness's line naming the trace's bad row: the error says it, once
        StringBuilder unprinted = new StringBuilder(); // the lines not relayed, for an error's tail
        for (String line : text.split("\n")) {
            Matcher bad = BAD_ROW.matcher(line.startsWith(badRow) ? line.substring(badRow.length()) : "");
            if (pr.exitValue() != 0 && refusal == null && bad.matches()) {
                refusal = new InputException(t + ":" + bad.group(1), bad.group(2));
            } else if (line.contains("TUNER/")
                    || line.startsWith("harness:")
                    || line.contains("WARN")
                    || (mode.equals("enforce") && line.contains("[changed]"))) {
                fold.println(relayed(line.replaceFirst("^\\S+ \\[\\d+\\] NCCL ", ""), mode));
            } else {
                unprinted.append(line).append('\n');
            }
            tally.read(line);
        }
        fold.flush();
        if (refusal != null) {
            throw refusal;
        }
        if (pr.exitValue() != 0) {
            String tail =
                    unprinted.length() > 2000 ? unprinted.substring(unprinted.length() - 2000) : unprinted.toString();
            throw new InputException(
                    h.toString(),
                    "the harness exited " + pr.exitValue() + " on " + t
                            + (tail.isBlank() ? " (its lines above)" : ":\n" + tail.strip()));
        }
        return trace;
    }

    /**
     * Prints lines, each run of identical lines as its first and {@code ... N more like this}
     * (enforce mode's per-call selection lines: 64 calls of one size print 2 lines, not 64).
     */
    static final class Fold {
        private final PrintWriter out;
        private String last;
        private long repeats;

        Fold(PrintWriter out) {
            this.out = out;
        }

        /** Prints a line, or counts it when it repeats the one before. */
        void println(String line) {
            if (line.equals(last)) {
                repeats++;
                return;
            }
            flush();
            out.println(line);
            last = line;
        }

        /** Ends the current run: its {@code ... N more like this} line when it repeated. */
        void flush() {
            if (repeats > 0) {
                out.println("... " + repeats + " more like this");
            }
            repeats = 0;
            last = null;
        }
    }

    /**
     * Runs {@code nccl-tuner report} over the decision logs the plugin wrote (with --measurements,
     * --nccl-log and --html as given) into {@code out}; its stderr is copied to {@code err}, each
     * {@code nccl-tuner report: } as {@code nccl-tuner try: report: } (the user ran try).
     *
     * @return report's exit code: 0, {@link Main#EXIT_CHECK} when the ranks decide differently, or
     *     another for an error; 0 when the plugin wrote no log. An empty log (the plugin makes one for a
     *     trace no profile matches) is not handed to report, which would warn of it (and refuses
     *     the report where every log is empty); try's verdict line says why that trace changed nothing
     */
    private int report(PrintWriter out, PrintWriter err, Path logs) throws IOException {
        List<Path> written = new ArrayList<>(); // the empty log of a trace no profile matches is not a rank's decisions
        for (Path f : decisionLogs(logs)) {
            if (Files.size(f) > 0) {
                written.add(f);
            }
        }
        if (written.isEmpty()) {
            return Main.EXIT_OK;
        }
        out.println("== nccl-tuner report of the decision logs" + (keepLogs != null ? " in " + logs : ""));
        List<String> args = new ArrayList<>(List.of("report"));
        written.forEach(f -> args.add(f.toString()));
        if (measurements != null) {
            args.add("--measurements");
            args.add(measurements.toString());
            for (Path l : ncclLogs) {
                args.add("--nccl-log");
                args.add(l.toString());
            }
        }
        if (html.file != null) {
            args.add("--html");
            args.add(html.file.toString());
        }
        StringWriter reportErr = new StringWriter();
        CommandLine cl = Main.commandLine();
        cl.setOut(out);
        cl.setErr(new PrintWriter(reportErr, true));
        int rc = cl.execute(args.toArray(String[]::new));
        out.flush();
        err.print(reportErr.toString().replace("nccl-tuner report: ", "nccl-tuner try: report: "));
        err.flush();
        return rc;
    }

    /**
     * The policy's profiles and the shapes each matches, for the "changes nothing" verdicts of try,
     * replay and explain: {@code name (nRanks=R nNodes=N); ...} ({@link JobShape}).
     */
    static String profileShapes(Policy p) {
        List<String> shapes = new ArrayList<>();
        for (Policy.Profile pr : p.profiles()) {
            shapes.add(pr.name() + " (" + JobShape.of(pr.nRanks(), pr.nNodes()) + ")");
        }
        return String.join("; ", shapes);
    }

    /**
     * The verdict of try, replay and explain when the policy changes nothing because no profile
     * matches the communicators' shapes.
     *
     * @param command "try", "replay" or "explain"
     * @param p the policy
     * @param shapes the shapes no profile matches ({@link JobShape})
     * @param whose what the shapes are ("the traces' shape"), or null to say nothing
     * @param action what to do, a sentence
     * @return {@code COMMAND: the policy changes nothing: no profile matches SHAPES (WHOSE); its
     *     profiles: NAME (nRanks=R nNodes=N); ... ACTION}
     */
    static String noProfileMatches(
            String command, Policy p, java.util.Collection<String> shapes, String whose, String action) {
        return command + ": the policy changes nothing: no profile matches " + String.join(", ", shapes)
                + (whose == null ? "" : " (" + whose + ")") + "; its profiles: " + profileShapes(p) + ". " + action;
    }

    /**
     * The rule hits that changed nothing, from the decision logs the plugin wrote.
     *
     * @param hits the counts per reason ({@link UnchangedHits})
     * @param why what "candidate not offered" names: which candidates NCCL's tables lack where, as an
     *     in-process replay of the traces finds it, or {@link UnchangedHits#NOT_OFFERED_WHY}
     * @param channelsOnly the rule hits whose pick is NCCL's own but that set a channel count (the
     *     plugin's summary counts them among its disagreements; replay says {@code (+ N channels
     *     only)} for them)
     */
    private record Unchanged(UnchangedHits hits, String why, long channelsOnly) {}

    /** The unchanged rule hits of the decision logs in the folder, the not-offered ones named from the traces. */
    private Unchanged unchanged(Policy p, Path logs, List<Path> replayed) throws IOException, InputException {
        List<DecisionLogFile> files = new ArrayList<>();
        for (Path f : decisionLogs(logs)) {
            files.add(DecisionLogFile.read(f));
        }
        UnchangedHits u = UnchangedHits.of(files);
        String why = u.notOffered() > 0 ? notOfferedWhy(p, replayed, u.notOffered()) : null;
        long channelsOnly = files.stream()
                .flatMap(f -> f.aggregates().stream())
                .filter(a -> a.channels() != 0
                        && a.policyPick() != null
                        && a.policyPick().equals(a.ncclPick()))
                .mapToLong(DecisionLogFile.Aggregate::count)
                .sum();
        return new Unchanged(u, why == null ? UnchangedHits.NOT_OFFERED_WHY : why, channelsOnly);
    }

    /**
     * Which candidates NCCL's cost tables lack where the plugin's rule hits found none offered: the
     * get rows of the traces the harness replayed (read, not run again), each one whose rule NCCL
     * offers none of the candidates of ({@link #notOffered}, the engine's ARM_NOT_OFFERED) put to its
     * rule.
     *
     * @param p the policy
     * @param replayed the traces the harness replayed
     * @param expected the not-offered hits the decision logs count
     * @return {@code RING/LL128 is -1 in NCCL's table at AllReduce 128 B .. 512 B} (groups joined by
     *     "; ", each with its calls when there are several; sizes as replay and explain print a call's,
     *     {@link ExplainCommand.Sizes#format}: {@code ~24.03 MiB} for 25192448 B), or null when the replay does not find
     *     the logs' count (then the report's generic reason stands)
     */
    private String notOfferedWhy(Policy p, List<Path> replayed, long expected) throws IOException {
        Map<String, long[]> groups = new java.util.LinkedHashMap<>(); // text -> {calls, min nBytes, max nBytes}
        long found = 0;
        for (Path t : replayed) {
            io.nccltuner.trace.TraceFile tf;
            try {
                tf = io.nccltuner.trace.TraceFile.read(t);
            } catch (IllegalArgumentException e) {
                return null; // the harness read it, the offline reader does not: the logs' count stands alone
            }
            long[] shape = traceShape(tf);
            io.nccltuner.policy.Signature sig = hardware.signature(shape[0], shape[1]);
            for (io.nccltuner.trace.TraceFile.Event e : tf.events()) {
                if (!(e instanceof io.nccltuner.trace.TraceFile.Get get) || !notOffered(p, sig, get.call())) {
                    continue;
                }
                found++;
                io.nccltuner.trace.TraceCall c = get.call();
                String text = notOfferedText(p, sig, c) + " at " + c.collective();
                long[] g = groups.computeIfAbsent(text, k -> new long[] {0, Long.MAX_VALUE, 0});
                g[0]++;
                g[1] = Math.min(g[1], c.nBytes());
                g[2] = Math.max(g[2], c.nBytes());
            }
        }
        if (found != expected || groups.isEmpty()) {
            return null; // not the plugin's count (another signature?): the logs' count stands alone
        }
        List<String> parts = new ArrayList<>();
        List<Map.Entry<String, long[]>> bySize = new ArrayList<>(groups.entrySet());
        bySize.sort(java.util.Comparator.comparingLong(e -> e.getValue()[1])); // smallest size first
        bySize.forEach(e -> parts.add(e.getKey() + " "
                + (e.getValue()[1] == e.getValue()[2]
                        ? ExplainCommand.Sizes.format(e.getValue()[1])
                        : ExplainCommand.Sizes.format(e.getValue()[1]) + " .. "
                                + ExplainCommand.Sizes.format(e.getValue()[2]))
                + (groups.size() > 1 ? ": " + Main.count(e.getValue()[0], "call") : "")));
        return String.join("; ", parts);
    }

    /** @return {nRanks, nNodes} of a trace's first communicator ({0, 0} for a trace without one) */
    private static long[] traceShape(io.nccltuner.trace.TraceFile tf) {
        for (io.nccltuner.trace.TraceFile.Event e : tf.events()) {
            if (e instanceof io.nccltuner.trace.TraceFile.Init i) {
                return new long[] {i.nRanks(), i.nNodes()};
            }
            if (e instanceof io.nccltuner.trace.TraceFile.Get g) {
                return new long[] {g.call().nRanks(), g.call().nNodes()};
            }
        }
        return new long[] {0, 0};
    }

    /**
     * What NCCL's cost table lacks for a call whose rule the engine found no candidate offered for.
     *
     * @return {@code RING/LL128 is -1 in NCCL's table}, {@code RING/LL128 and TREE/LL are -1 in NCCL's
     *     table}, {@code NVLS/SIMPLE is not in NCCL's table} (an algorithm or protocol past its
     *     numAlgo x numProto), or {@code none of the rule's candidates is offered} when the rule is not found
     */
    static String notOfferedText(Policy p, io.nccltuner.policy.Signature sig, io.nccltuner.trace.TraceCall c) {
        Policy.Rule rule = ruleFor(p, sig, c);
        if (rule == null) {
            return "none of the rule's candidates is offered";
        }
        List<String> minusOne = new ArrayList<>();
        List<String> absent = new ArrayList<>();
        for (Policy.Candidate x : rule.candidates()) {
            String name = x.algorithm() + "/" + x.protocol();
            List<String> into = inside(x, c) ? minusOne : absent;
            if (!into.contains(name)) {
                into.add(name);
            }
        }
        List<String> said = new ArrayList<>();
        if (!minusOne.isEmpty()) {
            said.add(String.join(" and ", minusOne) + (minusOne.size() == 1 ? " is" : " are") + " -1");
        }
        if (!absent.isEmpty()) {
            said.add(String.join(" and ", absent) + (absent.size() == 1 ? " is" : " are") + " not");
        }
        return String.join(", ", said) + " in NCCL's table";
    }

    /**
     * Whether the plugin's engine found a rule for a call and NCCL offering none of its candidates
     * (its ARM_NOT_OFFERED decision): a table the engine edits (at most {@link
     * io.nccltuner.engine.Engine#MAX_TABLE_ENTRIES} entries), a rule of the call's profile for it
     * ({@link #ruleFor}), and each candidate outside the table or its entry not {@code >= 0} (-1, NaN).
     */
    static boolean notOffered(Policy p, io.nccltuner.policy.Signature sig, io.nccltuner.trace.TraceCall c) {
        int max = io.nccltuner.engine.Engine.MAX_TABLE_ENTRIES;
        if (c.numAlgo() <= 0
                || c.numProto() <= 0
                || c.numAlgo() > max
                || c.numProto() > max
                || c.numAlgo() * c.numProto() > max) {
            return false;
        }
        Policy.Rule rule = ruleFor(p, sig, c);
        if (rule == null) {
            return false;
        }
        for (Policy.Candidate x : rule.candidates()) {
            if (inside(x, c)
                    && c.costs()[
                                    x.algorithm().id() * c.numProto()
                                            + x.protocol().id()]
                            >= 0f) {
                return false;
            }
        }
        return true;
    }

    /** @return whether a candidate lies inside a call's numAlgo x numProto cost table */
    private static boolean inside(Policy.Candidate x, io.nccltuner.trace.TraceCall c) {
        return x.algorithm().id() < c.numAlgo() && x.protocol().id() < c.numProto();
    }

    /**
     * @return the rule of the call's profile (its shape, and the hardware the replay presents) that
     *     the plugin puts the call to: the first for its collective, size and numPipeOps (and regBuff,
     *     as try's replay passes it: 0 from tuner v4, the harness's --regbuff 0); null for none
     */
    private static Policy.Rule ruleFor(Policy p, io.nccltuner.policy.Signature sig, io.nccltuner.trace.TraceCall c) {
        Policy.Profile pr = p.profileFor(c.nRanks(), c.nNodes(), sig, new ArrayList<>());
        int regBuff = sig.tunerVersion() >= 4 ? 0 : -1; // what try's replay passes (the harness's --regbuff 0)
        int j = pr == null ? -1 : pr.ruleIndexFor(c.collective(), c.nBytes(), c.numPipeOps(), regBuff);
        return j < 0 ? null : pr.rules().get(j);
    }

    /**
     * try's last line: how many calls the policy changes (or would), and how many rule hits change
     * nothing and why; or why it changes nothing at all.
     *
     * @param p the policy
     * @param t what the plugin's lines said
     * @param u the rule hits that changed nothing (null without rule hits)
     */
    private String verdict(Policy p, Tally t, Unchanged u) {
        long calls = t.calls;
        long hits = t.hits;
        List<String> unmatched = t.unmatched;
        String nothing = u == null ? null : u.hits().line(u.why());
        long channelsOnly = u == null ? 0 : u.channelsOnly();
        String channels = channelsOnly == 0 ? "" : "+ " + channelsOnly + " channels only; "; // as replay counts
        if (hits > 0 && mode.equals("enforce")) {
            return "try: the policy changed "
                    + (t.applied - (u == null ? 0 : u.hits().alreadyPick()) - channelsOnly) + " of "
                    + Main.count(calls, "call") + " (" + channels + "rule hits " + hits + ")"
                    + (nothing == null ? "" : "; " + nothing);
        }
        if (hits > 0) {
            return "try: the policy would change " + (t.differ - channelsOnly) + " of " + Main.count(calls, "call")
                    + " (" + channels + "rule hits " + hits + "; changed: where its pick differs from NCCL's)"
                    + (nothing == null ? "" : "; " + nothing) + "; " + next(t.differ, policy.toString());
        }
        if (!unmatched.isEmpty()) {
            List<String> args = spec.commandLine().getParseResult().originalArgs();
            String skipped = hardwareSkipped(p, unmatched, args);
            if (skipped != null) {
                return skipped;
            }
            long[] at = profileShape(p);
            String again = at == null ? "" : ": `" + commandAt(args, at[0], at[1]) + "`";
            if (nRanks > 0) {
                return noProfileMatches(
                        "try",
                        p,
                        unmatched,
                        "--nranks " + nRanks + " --nnodes " + nNodes,
                        "Give --nranks and --nnodes of one of them, the job's shape" + again);
            }
            return noProfileMatches(
                    "try",
                    p,
                    unmatched,
                    "the traces' shape",
                    (at == null ? "" : "Try it at its profile's shape" + again + "; for the traces' shape, ")
                            + (at == null ? "C" : "c") + "ompile a policy from measurements of " + unmatched.getFirst()
                            + " (" + measureAt(unmatched.getFirst()) + "), or capture a trace of the job's shape "
                            + "(NCCL_TUNER_JAVA_RECORD=FILE)");
        }
        return "try: the policy changes nothing: no rule covers any of the " + Main.count(calls, "call")
                + " (collective, size and numPipeOps outside its rules, or no candidate NCCL offers)";
    }

    /**
     * What to do after a shadow-mode try whose rule hits were counted.
     *
     * @param differ the calls the policy would change
     * @param policy the policy file
     * @return the shadow-mode advice where it would change calls; where it changes none, that it
     *     changes nothing for these traces and to check its shapes and sizes with show
     */
    static String next(long differ, String policy) {
        return differ > 0
                ? "run it with NCCL_TUNER_JAVA_MODE=shadow in the job next"
                : "the policy changes nothing for these traces; check the shapes and sizes it covers with"
                        + " `nccl-tuner show " + policy + "`";
    }

    /**
     * The verdict when a profile has the shape of a communicator no profile matched, so its hardware
     * (gpu, computeCapability, ncclVersion, nvlDomain) did not match what the replay presented.
     *
     * @param p the policy
     * @param unmatched the shapes no profile matched ({@link JobShape})
     * @param args the command line, to repeat with the hardware options that make the profile match
     * @return {@code try: the policy changes nothing: profile P has nRanks=2 nNodes=2 (the traces'
     *     shape) but was skipped: gpu 'H200' named but the GPU is unknown. Try it on the hardware it
     *     names: `nccl-tuner try ... --gpu H200`}, or null when no profile has such a shape
     */
    private String hardwareSkipped(Policy p, List<String> unmatched, List<String> args) {
        for (String shape : unmatched) {
            Matcher m = SHAPE.matcher(shape);
            if (!m.matches()) {
                continue;
            }
            TryHardware.Skipped s = hardware.skipped(p, Long.parseLong(m.group(1)), Long.parseLong(m.group(2)));
            if (s == null) {
                continue;
            }
            return "try: the policy changes nothing: profile " + s.profile() + " has " + shape + " ("
                    + (nRanks > 0 ? "--nranks " + nRanks + " --nnodes " + nNodes : "the traces' shape")
                    + ") but was skipped: " + s.why() + " (the replay " + hardware.presents() + "). "
                    + (s.options() == null
                            ? "try cannot present what it names (the harness passes one NVLink domain per node, and"
                                    + " NCCL releases from 2.9): try it in a job on that hardware, in shadow mode"
                            : "Try it on the hardware it names: `" + commandWith(args, s.options()) + "`");
        }
        return null;
    }

    /**
     * A shape the policy's first profile that admits one matches: its least nNodes (at least 1) and
     * least nRanks (at least 2 and at least nNodes), for the command line that tries the policy where
     * it applies.
     *
     * @param p the policy
     * @return {nRanks, nNodes}, or null when no profile admits such a shape
     */
    static long[] profileShape(Policy p) {
        for (Policy.Profile pr : p.profiles()) {
            long nodes = Math.max(1, pr.nNodes().min());
            long ranks = Math.max(Math.max(2, nodes), pr.nRanks().min());
            if (pr.nRanks().contains(ranks) && pr.nNodes().contains(nodes)) {
                return new long[] {ranks, nodes};
            }
        }
        return null;
    }

    /**
     * The command line the user ran (as {@link Main} got it) at another shape: {@code --nranks} and
     * {@code --nnodes} (both spellings) replaced by the shape's.
     *
     * @param args the original arguments, the command's name first
     * @param nRanks the shape's ranks
     * @param nNodes its nodes
     * @return {@code nccl-tuner try --policy p8.yaml --trace t.csv --nranks 8 --nnodes 1}, words with
     *     spaces or quotes single-quoted
     */
    static String commandAt(List<String> args, long nRanks, long nNodes) {
        return commandWith(args, List.of("--nranks", Long.toString(nRanks), "--nnodes", Long.toString(nNodes)));
    }

    /**
     * The command line the user ran with some options set anew: each option of {@code set} (and
     * {@code --cc} with a new {@code --gpu}) removed in both spellings, then {@code set} appended.
     *
     * @param args the original arguments, the command's name first
     * @param set option, value, option, value...
     * @return {@code nccl-tuner try --policy p.yaml --trace t.csv --gpu H200}, words with spaces or
     *     quotes single-quoted
     */
    static String commandWith(List<String> args, List<String> set) {
        java.util.Set<String> names = new java.util.HashSet<>();
        for (int i = 0; i < set.size(); i += 2) {
            names.add(set.get(i));
        }
        if (names.contains("--gpu")) {
            names.add("--cc");
        }
        List<String> out = new ArrayList<>(List.of("nccl-tuner"));
        List<String> all = new ArrayList<>(args);
        all.addAll(set);
        for (int i = 0; i < all.size(); i++) {
            String a = all.get(i);
            if (i < args.size() && names.contains(a)) {
                i++;
            } else if (i >= args.size() || !names.contains(a.replaceFirst("=.*", ""))) {
                out.add(a.matches("[A-Za-z0-9_./:=@%+,-]+") ? a : "'" + a.replace("'", "'\\''") + "'");
            }
        }
        return String.join(" ", out);
    }

    private static final Pattern SHAPE = Pattern.compile("nRanks=(\\d+) nNodes=(\\d+)");

    /**
     * How to measure a shape for {@code compile}: a sweep launched on its nodes, then the compile.
     *
     * @param shape {@code nRanks=16 nNodes=2} ({@link JobShape})
     * @return {@code `nccl-tuner sweep -o DIR --launch "srun -N 2 --ntasks-per-node 8" --algorithms
     *     TREE,RING --protocols LL,LL128,SIMPLE`, then `nccl-tuner compile DIR -o POLICY`}
     */
    static String measureAt(String shape) {
        return sweepAt(shape) + ", then `nccl-tuner compile DIR -o POLICY`";
    }

    /**
     * The sweep that measures a shape: launched on its nodes with its ranks per node.
     *
     * @param shape {@code nRanks=16 nNodes=2} ({@link JobShape})
     * @return {@code `nccl-tuner sweep -o DIR --launch "srun -N 2 --ntasks-per-node 8" --algorithms
     *     TREE,RING --protocols LL,LL128,SIMPLE`} (without {@code --launch} for a shape it cannot read)
     */
    static String sweepAt(String shape) {
        Matcher m = SHAPE.matcher(shape);
        String launch = "";
        if (m.matches()) {
            long r = Long.parseLong(m.group(1));
            long n = Long.parseLong(m.group(2));
            launch = " --launch \"srun -N " + n + (r % n == 0 ? " --ntasks-per-node " + r / n : " -n " + r) + "\"";
        }
        return "`nccl-tuner sweep -o DIR" + launch + " --algorithms TREE,RING --protocols LL,LL128,SIMPLE`";
    }

    /** Why a non-empty --keep-logs folder is refused. */
    static String keepLogsNotEmpty(long entries) {
        return "not empty (" + entries + (entries == 1 ? " entry" : " entries")
                + "): the report would read the decision logs of an earlier try"
                + " with this one's; give a new or empty folder";
    }

    /** The line a try of several traces prints: they are one job's ranks. */
    static String severalTraces(int n) {
        return "try: the " + n
                + " traces are replayed as the ranks of one job (one process each); the report reads their"
                + " decision logs together, as that job's ranks; try each trace alone for a report of its own";
    }

    /** The trace with every init and get row's nRanks and nNodes set to --nranks/--nnodes. */
    private Path reshaped(Path t, Path dir) throws IOException {
        List<String> lines = new ArrayList<>();
        for (String l : Files.readAllLines(t, StandardCharsets.UTF_8)) {
            if (l.startsWith("init,") || l.startsWith("get,")) {
                String[] f = l.split(",", -1);
                if (f.length >= 4) {
                    f[2] = Integer.toString(nRanks);
                    f[3] = Integer.toString(nNodes);
                    l = String.join(",", f);
                }
            }
            lines.add(l);
        }
        Path out = dir.resolve("trace-" + nRanks + "x" + nNodes + "-" + t.getFileName());
        Files.write(out, lines, StandardCharsets.UTF_8);
        return out;
    }

    /** @return the folder of this tool's jar (lib/ in the distribution, build/lib in a build tree), or null */
    private static Path toolDir() {
        try {
            Path jar = Path.of(TryCommand.class
                    .getProtectionDomain()
                    .getCodeSource()
                    .getLocation()
                    .toURI());
            return Files.isRegularFile(jar) ? jar.toAbsolutePath().getParent() : null;
        } catch (URISyntaxException | SecurityException | IllegalArgumentException e) {
            return null;
        }
    }

    private static Path find(String what, List<Path> candidates, String option) throws InputException {
        for (Path c : candidates) {
            if (Files.isExecutable(c) || (option.equals("--plugin") && Files.isRegularFile(c))) {
                return c;
            }
        }
        throw new InputException("no " + what + " found"
                + (candidates.isEmpty()
                        ? ""
                        : " (looked for "
                                + String.join(
                                        ", ",
                                        candidates.stream().map(Path::toString).toList()) + ")")
                + "; the distribution has libexec/nccl-tuner-harness and lib/libnccl-tuner-java.so, a build tree"
                + " build/tests/harness and build/lib (make build); or give " + option);
    }
}
