package io.nccltuner.cli;

import io.nccltuner.compile.Compiler;
import io.nccltuner.compile.Compiler.Compilation;
import io.nccltuner.compile.Compiler.Group;
import io.nccltuner.compile.Compiler.SizeResult;
import io.nccltuner.compile.HtmlReport;
import io.nccltuner.compile.Measurement;
import io.nccltuner.compile.MeasurementSet;
import io.nccltuner.compile.NcclRunLog;
import io.nccltuner.compile.NcclTestsLog;
import io.nccltuner.compile.PolicyYaml;
import io.nccltuner.compile.TextReport;
import io.nccltuner.compile.Workload;
import io.nccltuner.policy.Algorithm;
import io.nccltuner.policy.ByteSize;
import io.nccltuner.policy.Collective;
import io.nccltuner.policy.InputException;
import io.nccltuner.policy.Mode;
import io.nccltuner.policy.Policy.Rule;
import io.nccltuner.policy.PolicyException;
import io.nccltuner.policy.Protocol;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code nccl-tuner compile}: measurements (nccl-tests output, sweep CSV, optimize_config.py CSV)
 * to a regret-ranked YAML policy, a text report on stdout and optionally an HTML chart. See
 * docs/compile.md and {@link Compiler} for the method.
 *
 * <p>Exit codes as for every command ({@link Main}): 0 success, 1 an input error (the
 * message names file and line), 2 a usage error, 70 an internal error (such as a compiled policy that does not load).
 */
@Command(
        name = "compile",
        description = {
            "Compile measurements into a regret-ranked policy.",
            "Inputs: nccl-tests output (all_reduce_perf, all_gather_perf, reduce_scatter_perf, broadcast_perf, "
                    + "reduce_perf; any version), the measurement sweep CSV, or optimize_config.py's CSV. Runs without "
                    + "NCCL_ALGO/NCCL_PROTO measure NCCL's own pick. A rule is emitted where NCCL's pick is slower than "
                    + "the best candidate by more than max(--threshold, noise margin)."
        },
        sortOptions = false)
final class CompileCommand extends ToolCommand {
    @Parameters(
            paramLabel = "FILE",
            arity = "0..*",
            description =
                    "Measurement files; the format is detected (CSV with a size_bytes column, else nccl-tests output), "
                            + "or a folder: one written by `nccl-tuner sweep`, or any other, whose *.txt, *.log, *.out "
                            + "and *.csv files are read in name order (a note names those read and skipped). A file of "
                            + "another kind (a policy, a trace, an NCCL log without size tables) is a usage error.")
    List<Path> files = new ArrayList<>();

    @ArgGroup(
            exclusive = false,
            multiplicity = "0..*",
            heading = "%nPer-file settings (for logs without NCCL INFO lines):%n")
    List<Input> inputs = new ArrayList<>();

    /**
     * One {@code --in FILE} with what to assume where its log does not say; without {@code --in}
     * (at most once) the settings apply to every FILE given as a plain argument.
     */
    static final class Input {
        @Option(
                names = "--in",
                paramLabel = "FILE",
                description =
                        "nccl-tests output file; without --in, the settings " + "below apply to every FILE argument.")
        Path file;

        @Option(
                names = "--collective",
                paramLabel = "NAME",
                description = "Collective (AllReduce, ...) if the log names none.")
        String collective;

        @Option(
                names = "--algo",
                paramLabel = "NAME",
                description = "NCCL_ALGO the run was forced to (TREE, RING, ...).")
        String algo;

        @Option(
                names = "--proto",
                paramLabel = "NAME",
                description = "NCCL_PROTO the run was forced to (LL, LL128, SIMPLE).")
        String proto;

        @Option(names = "--channels", paramLabel = "N", description = "NCCL_MAX_NCHANNELS the run was forced to.")
        int channels;

        @Option(
                names = {"--ranks", "--nranks"},
                paramLabel = "N",
                description = "nRanks, overriding the log's device lines.")
        Integer ranks;

        @Option(
                names = {"--nodes", "--nnodes"},
                paramLabel = "N",
                description = "nNodes, overriding the log's host names.")
        Integer nodes;
    }

    @Option(
            names = {"-o", "--output"},
            paramLabel = "FILE",
            description = "Write the YAML policy here; '-' prints it on stdout (the report then goes to stderr). "
                    + "Without -o no policy is written.")
    Path output;

    @picocli.CommandLine.Mixin
    SharedOptions.PolicyName name;

    @picocli.CommandLine.Mixin
    SharedOptions.WrittenMode mode;

    @Option(
            names = "--threshold",
            paramLabel = "PCT",
            defaultValue = "5",
            description = "Smallest regret of NCCL's pick worth a rule, in percent (default: ${DEFAULT-VALUE}).")
    double thresholdPct;

    @Option(
            names = "--noise-sigmas",
            paramLabel = "K",
            defaultValue = "2",
            description = "Noise margin = K x sqrt(n1^2 + n2^2), n = max(CV of the replicates, neighbour jump) "
                    + "(default: ${DEFAULT-VALUE}).")
    double noiseSigmas;

    @Option(
            names = "--window",
            paramLabel = "N",
            defaultValue = "2",
            description = "Measured sizes on each side a verdict looks at: neighbour jumps and minimax regret; "
                    + "0 decides each size alone (default: ${DEFAULT-VALUE}).")
    int window;

    @Option(
            names = "--tie",
            paramLabel = "PCT",
            defaultValue = "0",
            description = "Candidates closer than max(this percent, noise margin) are ordered by their regret over "
                    + "all sizes, not size by size (default: ${DEFAULT-VALUE}).")
    double tiePct;

    @Option(
            names = "--merge",
            paramLabel = "BY",
            defaultValue = "ranking",
            description = "Merge neighbouring sizes with the same 'ranking' (kept candidates in order) or the same "
                    + "'pick' (first candidate; fallbacks common to all merged sizes) (default: ${DEFAULT-VALUE}).")
    String merge;

    @Option(names = "--any-pipe-ops", description = "Rules for any numPipeOps, not just the measured one.")
    boolean anyPipeOps;

    @Option(
            names = "--placement",
            paramLabel = "WHICH",
            defaultValue = "out",
            description = "nccl-tests columns to use: out, in or both (default: ${DEFAULT-VALUE}).")
    String placement;

    @Option(
            names = "--pool-runs",
            description = "Pool size tables of one file that have no run header of their "
                    + "own ('# nThread ...') and measure the same collective and shape as replicates (refused by default: "
                    + "separate tables are separate runs).")
    boolean poolRuns;

    @Option(
            names = "--pool-anyway",
            description = "Pool as replicates inputs that name no machine (or tables --pool-runs "
                    + "pooled) although their times disagree (median CV between them above 25%%: other machines or settings?); "
                    + "refused by default, naming the inputs and what differs.")
    boolean poolAnyway;

    @Option(
            names = "--strict",
            description =
                    "Refuse a file at its first mangled row (wrong number of fields, a field "
                            + "that is not a number); by default such a row is skipped with a warning naming file:line and counted refused.")
    boolean strict;

    @Option(
            names = "--nccl-log",
            paramLabel = "FILE",
            description = "NCCL INFO log with TUNING selection lines naming NCCL's own pick (repeatable); a log of "
                    + "another machine (GPU, NCCL version) or communicator shape than every measurement is not used, "
                    + "with a warning.")
    List<Path> ncclLogs = new ArrayList<>();

    @Option(
            names = "--workload",
            paramLabel = "FILE",
            description = "Trace CSV or shadow JSON-lines log: weight regret by its message sizes (repeatable); calls "
                    + "of a shape no measurement has are not weighted, with a warning.")
    List<Path> workloads = new ArrayList<>();

    @Option(
            names = "--html",
            paramLabel = "FILE",
            description = "Write a self-contained HTML report with an SVG chart.")
    Path html;

    @Option(
            names = "--allow-empty",
            description = "With -o, write the policy even when no input measured a forced "
                    + "candidate, so it has no rules (by default that is an input error, exit 1: say what each file forced with "
                    + "--in FILE --algo X --proto Y).")
    boolean allowEmpty;

    @Option(
            names = "--verbose",
            description = "Print every per-size table: also when -o writes no policy (by default such a compile "
                    + "prints the verdict first, then its summary), and those of groups that got no rule.")
    boolean verbose;

    @Option(
            names = "--summary",
            description = "Print the summary, the rules and the expected regret per range; "
                    + "leave out the per-size tables.")
    boolean summaryOnly;

    @Override
    int run(PrintWriter out, PrintWriter err) throws InputException, IOException {
        if (files.isEmpty() && inputs.isEmpty()) {
            throw new UsageException("no measurement files");
        }
        Checked checked = checkOptions();
        requireOutputDirectory("-o", output);
        requireOutputDirectory("--html", html);
        MeasurementSet data = new MeasurementSet();
        List<String> sources = readInputs(checked.placement(), data, err);
        int mangled = MeasurementSet.mangled(data.refused()).size();
        if (mangled > 0) { // the rows themselves: once, among the report's refused rows
            err.println("nccl-tuner compile: warning: skipped " + Main.count(mangled, "mangled row")
                    + " (listed under refused rows in the report); --strict refuses the file instead");
        }
        readNcclLogs(data, err);
        boolean yamlToStdout = output != null && output.toString().equals("-");
        String policyName = name.or(yamlToStdout ? null : output, "compiled");
        Compiler.Options opts = compilerOptions(policyName, checked.mode());
        checkPooling(data, opts, err);
        // the normal unforced run: one note (below), not a warning per file
        List<String> unforced = data.takeWarnings(w -> w.contains(NcclTestsLog.UNFORCED_RUN));
        Compilation c = Compiler.compile(data, opts);
        List<String> workloadWarnings = new ArrayList<>();
        List<Workload.Savings> savings = savings(c, workloadWarnings);
        workloadWarnings = io.nccltuner.compile.Repeats.perFile(workloadWarnings);
        if (!workloadWarnings.isEmpty()) { // once: among the report's warnings (its summary counts them)
            List<String> all = new ArrayList<>(c.warnings());
            all.addAll(workloadWarnings);
            c = new Compilation(c.policy(), c.groups(), all, c.refused(), c.options(), c.unfinished());
        }
        // with -o - stdout carries the YAML alone, so the report goes to stderr
        PrintWriter report = yamlToStdout ? err : out;
        int nRules = c.groups().stream().mapToInt(g -> g.rules().size()).sum();
        String[] zero = zeroRules(c, nRules);
        if (zero != null) { // the verdict once on the screen: atop the report, which points at it
            report.println("policy not written: " + zero[0] + ". " + zero[1]);
        }
        // last, after the report (the verdict, or the summary, stays the first line); not where the
        // verdict (or, with --allow-empty, the summary's "no input says which candidate a run
        // forced") says it of every input
        // nor where every unforced run stands beside forced runs of its group: there it is NCCL's pick
        java.util.Set<String> noRule = Compiler.filesInUnforcedGroups(data, c);
        unforced = unforced.stream()
                .filter(w -> noRule.stream().anyMatch(f -> w.startsWith(f + ": ")))
                .toList();
        String note = !unforced.isEmpty() && zero != NONE_FORCED && !(nRules == 0 && allowEmpty && noneForced(c))
                ? "nccl-tuner compile: note: " + unforcedNote(unforced)
                : null;
        if (zero != null && output != null) { // the summary next; the per-size tables with --verbose
            report.print(advised(TextReport.render(c, savings, verbose, true, true)));
            if (!verbose) {
                report.println("per-size tables: --verbose prints them");
            }
            report.flush();
            printNote(note, out, err);
            throw new InputException(NOT_WRITTEN); // the error line points at the verdict
        }
        report.print(advised(TextReport.render(c, savings, !summaryOnly, verbose, zero != null)));
        if (output == null && zero == null) { // with a verdict, its first line says it
            report.println("no -o: policy not written (" + Main.count(nRules, "rule")
                    + "; -o FILE writes it, -o - prints it)");
        } else if (output != null) {
            writePolicy(c, sources, nRules, yamlToStdout ? out : null, report);
        }
        if (html != null) {
            writeFile(
                    html,
                    HtmlReport.render(
                            c,
                            savings,
                            htmlTitle(policyName, yamlToStdout, sources),
                            data.measurements().stream()
                                    .map(io.nccltuner.compile.Measurement::hardware)
                                    .distinct()
                                    .toList()));
            report.println("html: " + html);
        }
        printNote(note, out, err);
        out.flush();
        err.flush();
        return 0;
    }

    /** Prints {@code note} on stderr after what stdout holds so far (nothing where it is null). */
    private static void printNote(String note, PrintWriter out, PrintWriter err) {
        if (note != null) {
            out.flush();
            err.println(note);
        }
    }

    /**
     * The report with compile's advice in each line, as its stderr has it ({@link Main#advice}): a
     * parser's warning among the report's warnings says {@code pass --in FILE --nodes N}, not {@code
     * pass --nodes}.
     *
     * @param text the report, lines ending in newlines
     * @return the same lines, advice rewritten
     */
    private String advised(String text) {
        if (!text.contains("pass --")) {
            return text;
        }
        return String.join(
                "\n",
                java.util.Arrays.stream(text.split("\n", -1))
                        .map(l -> Main.advice(spec, l))
                        .toList());
    }

    /** {@code --placement} and {@code --mode} as {@link #checkOptions} parsed them. */
    private record Checked(NcclTestsLog.Placement placement, Mode mode) {}

    /**
     * Refuses what makes no sense before a file is read, in this order: a per-file option bound
     * elsewhere than it stands ({@link #misplacedPerFileOption}), {@code --ranks} or {@code --nodes}
     * below 1, {@code --placement}, {@code --mode}, {@code --window} outside 0..8, a negative {@code --threshold}, {@code --noise-sigmas}
     * or {@code --tie}.
     *
     * @return the placement and the mode
     * @throws UsageException naming the option (exit 2)
     * @throws InputException as {@link ToolCommand#parseMode} declares (its bad {@code --mode} is a
     *     UsageException)
     */
    private Checked checkOptions() throws InputException {
        List<String> given = spec.commandLine().getParseResult().originalArgs();
        int self = given.indexOf(spec.name()); // the command line as Main got it: "compile" first
        String misplaced = misplacedPerFileOption(given.subList(self + 1, given.size()), spec);
        if (misplaced != null) {
            throw new UsageException(misplaced);
        }
        for (Input in : inputs) { // 0 and below would read as not given, and the log's own count be used
            for (Object[] o : new Object[][] {{"--ranks", in.ranks, "rank"}, {"--nodes", in.nodes, "node"}}) {
                if (o[1] != null && (Integer) o[1] < 1) {
                    throw new UsageException(
                            (String) o[0],
                            o[1] + " is not a " + o[2] + " count: give 1 or more"
                                    + (in.file == null ? "" : " (for --in " + in.file + ")"));
                }
            }
        }
        NcclTestsLog.Placement pl = switch (placement.toLowerCase(Locale.ROOT)) {
            case "out", "out-of-place" -> NcclTestsLog.Placement.OUT_OF_PLACE;
            case "in", "in-place" -> NcclTestsLog.Placement.IN_PLACE;
            case "both" -> NcclTestsLog.Placement.BOTH;
            default -> throw new UsageException("--placement", "'" + placement + "' is not out, in or both");
        };
        Mode m = mode.parse();
        if (window < 0 || window > 8) {
            throw new UsageException("--window", window + " is outside 0..8");
        }
        if (!(thresholdPct >= 0) || !(noiseSigmas >= 0) || !(tiePct >= 0)) {
            throw new UsageException("--threshold, --noise-sigmas and --tie must be >= 0");
        }
        return new Checked(pl, m);
    }

    /**
     * Reads the measurements: each FILE argument (a {@code nccl-tuner sweep} directory, any other
     * folder's files ({@link #readFolder}), or a file with the settings given without {@code --in}),
     * then each {@code --in FILE} with its own. Every input is read before any refused one refuses
     * the compile, so that one run names them all ({@link InputFiles#refuseInputs}).
     *
     * @param pl the nccl-tests columns to read
     * @param data receives the measurements and selections
     * @param err where a folder's note and its skipped files' warnings go, and each refused input's
     *     line where several are refused
     * @return the inputs as the policy's header names them ({@code dir (sweep)} for a sweep)
     * @throws InputException for settings without {@code --in} given twice or with no FILE, and
     *     for a file that does not read (file:line), or several ({@code 2 of 3 inputs refused ...})
     * @throws UsageException for a file of another kind than measurements ({@link #requireMeasurements}),
     *     where it is the first refused input
     * @throws IOException if reading fails
     */
    private List<String> readInputs(NcclTestsLog.Placement pl, MeasurementSet data, PrintWriter err)
            throws InputException, IOException {
        List<String> sources = new ArrayList<>();
        List<Input> global = inputs.stream().filter(in -> in.file == null).toList();
        if (global.size() > 1) {
            throw new UsageException("--collective/--algo/--proto/--channels/--ranks/--nodes without --in are "
                    + "given " + global.size()
                    + " times; give them once (they apply to every FILE argument), or per file with "
                    + "--in FILE");
        }
        if (!global.isEmpty() && files.isEmpty()) {
            throw new UsageException("--collective/--algo/--proto/--channels/--ranks/--nodes without --in apply "
                    + "to FILE arguments, and none is given; per-file options bind to the preceding --in FILE: write --in FILE "
                    + "before them");
        }
        Input all = global.isEmpty() ? new Input() : global.getFirst();
        seen = new Seen();
        keepAnnotated(all);
        List<Exception> refused = new ArrayList<>(); // each refused input's UsageException or InputException
        int nInputs = 0;
        for (Path f : files) {
            nInputs++;
            try {
                readPlain(f, all, pl, data, sources, err);
            } catch (UsageException | InputException e) {
                refused.add(e);
            }
        }
        for (Input in : inputs) {
            if (in.file == null) {
                continue;
            }
            nInputs++;
            try {
                int before = data.measurements().size();
                requireMeasurements(in.file);
                if (!readOnce(in.file, in, pl, data, err)) {
                    continue;
                }
                refuseIgnoredOptions(in.file, in, false, data, before);
                sources.add(in.file.toString());
            } catch (UsageException | InputException e) {
                refused.add(e);
            }
        }
        InputFiles.refuseInputs("nccl-tuner compile", refused, nInputs, "nothing compiled", err);
        return sources;
    }

    /**
     * Reads one plain FILE argument: a {@code nccl-tuner sweep} folder, another folder ({@link
     * #readFolder}) or a measurement file, with the settings given without {@code --in}.
     *
     * @throws InputException for a file that does not read (file:line)
     * @throws UsageException for a file of another kind than measurements
     */
    private void readPlain(
            Path f, Input all, NcclTestsLog.Placement pl, MeasurementSet data, List<String> sources, PrintWriter err)
            throws InputException, IOException {
        int before = data.measurements().size();
        if (io.nccltuner.sweep.SweepDirectory.isSweep(f)) { // a `nccl-tuner sweep` directory
            io.nccltuner.sweep.SweepDirectory.read(f, pl, strict, data);
            refuseIgnoredOptions(f, all, true, data, before);
            sources.add(f + " (sweep)");
            return;
        }
        if (java.nio.file.Files.isDirectory(f)) {
            readFolder(f, all, pl, data, sources, err);
            return;
        }
        requireMeasurements(f);
        if (!readOnce(f, all, pl, data, err)) {
            return;
        }
        refuseIgnoredOptions(f, all, false, data, before);
        sources.add(f.toString());
    }

    /** The inputs read so far, by their bytes and by their runs, so that none counts twice. */
    private static final class Seen {
        final Map<String, Path> bytes = new java.util.HashMap<>();
        final Map<List<Measurement>, Path> runs = new java.util.HashMap<>();
        /** bytes -> the one input of them to read, where they are given with different per-file options */
        final Map<String, Given> keep = new java.util.HashMap<>();
        /** each given file's place on the command line (FILE arguments first, then each --in FILE) */
        final List<Given> order = new ArrayList<>();
        /** path -> the SHA-256 of its bytes: each file hashed once, by keepAnnotated or readOnce */
        final Map<Path, String> hashes = new java.util.HashMap<>();
    }

    /** The SHA-256 of a file's bytes ({@link #sha256}), read once in this compile. */
    private String hashOf(Path f) throws IOException {
        String h = seen.hashes.get(f);
        if (h == null) {
            h = sha256(f);
            seen.hashes.put(f, h);
        }
        return h;
    }

    /** A measurement file as the command line gives it: its path and its per-file options. */
    private record Given(Path file, Input in) {}

    /**
     * Chooses, for each set of FILE arguments and {@code --in} files that hold the same bytes but are
     * given with different per-file options ({@link #perFileOptions}), the one to read: the first
     * given with options (the one the user annotated: {@code a.txt --in copy.txt --algo RING} reads
     * copy.txt as RING's runs, not a.txt as NCCL's own pick). Folders and files that do not read are
     * left to {@link #readOnce} and the readers.
     *
     * @param all the settings given without {@code --in}
     * @throws IOException if hashing a file fails
     */
    private void keepAnnotated(Input all) throws IOException {
        Map<String, List<Given>> byBytes = new java.util.HashMap<>();
        List<Given> given = new ArrayList<>();
        files.forEach(f -> given.add(new Given(f, all)));
        inputs.stream().filter(in -> in.file != null).forEach(in -> given.add(new Given(in.file, in)));
        for (Given g : given) {
            seen.order.add(g);
            if (java.nio.file.Files.isRegularFile(g.file()) && java.nio.file.Files.isReadable(g.file())) {
                byBytes.computeIfAbsent(hashOf(g.file()), x -> new ArrayList<>())
                        .add(g);
            }
        }
        byBytes.forEach((hash, same) -> {
            if (same.stream().map(g -> perFileOptions(g.in())).distinct().count() > 1) {
                seen.keep.put(
                        hash,
                        same.stream()
                                .filter(g -> !perFileOptions(g.in()).isEmpty())
                                .findFirst()
                                .orElseThrow());
            }
        });
    }

    /**
     * The per-file options an input is given with, as the command line spells them.
     *
     * @return {@code [--algo RING, --proto LL]}; empty where none
     */
    private static List<String> perFileOptions(Input in) {
        List<String> given = new ArrayList<>();
        for (String[] o : new String[][] {
            {"--collective", in.collective},
            {"--algo", in.algo},
            {"--proto", in.proto},
            {"--channels", in.channels == 0 ? null : Integer.toString(in.channels)},
            {"--ranks", in.ranks == null ? null : Integer.toString(in.ranks)},
            {"--nodes", in.nodes == null ? null : Integer.toString(in.nodes)}
        }) {
            if (o[1] != null) {
                given.add(o[0] + " " + o[1]);
            }
        }
        return given;
    }

    /** What {@link #readOnce} has read in this compile. */
    private Seen seen = new Seen();

    /**
     * Reads one measurement file unless an earlier input holds the same bytes or the same runs (every
     * measurement equal but for where it stands): the same data given twice would count as replicates
     * of itself, with a replicate CV of 0 and a policy of its own. Such a file is read once, with
     * {@code warning: x.csv and copy.csv hold the same bytes: read once} (or {@code the same runs},
     * or {@code x.csv is given twice}) on stderr.
     *
     * @return whether the file was read (false: a duplicate, skipped)
     * @throws InputException for a file the parsers refuse
     */
    private boolean readOnce(Path f, Input in, NcclTestsLog.Placement pl, MeasurementSet data, PrintWriter err)
            throws InputException, IOException {
        String hash = hashOf(f);
        Given keep = seen.keep.get(hash);
        if (keep != null && !(keep.file().equals(f) && keep.in() == in)) {
            Given dropped = new Given(f, in);
            boolean keptFirst = seen.order.indexOf(keep) < seen.order.indexOf(dropped);
            String kept = "read once, " + (keep.file().equals(f) ? "" : "as " + keep.file() + " ") + "with "
                    + String.join(" ", perFileOptions(keep.in()));
            List<String> lost = perFileOptions(in);
            duplicate(
                    keptFirst ? keep.file() : f,
                    keptFirst ? f : keep.file(),
                    "the same bytes",
                    kept + (lost.isEmpty() ? "" : "; " + f + "'s " + String.join(" ", lost) + " dropped with it"),
                    err);
            return false;
        }
        Path same = seen.bytes.get(hash);
        if (same != null) {
            duplicate(same, f, "the same bytes", "read once", err);
            return false;
        }
        MeasurementSet one = new MeasurementSet();
        InputFiles.readMeasurements(f, options(in, f, pl), one);
        List<Measurement> runs = one.measurements().stream()
                .map(m -> new Measurement(
                        "",
                        m.collective(),
                        m.nRanks(),
                        m.nNodes(),
                        m.numPipeOps(),
                        m.nBytes(),
                        m.config(),
                        m.timeUs(),
                        m.p95Us(),
                        m.hardware()))
                .toList();
        Path sameRuns = runs.isEmpty() ? null : seen.runs.get(runs);
        if (sameRuns != null) {
            duplicate(sameRuns, f, "the same runs (every measurement equal)", "read once", err);
            return false;
        }
        seen.bytes.put(hash, f);
        if (!runs.isEmpty()) {
            seen.runs.put(runs, f);
        }
        data.addAll(one);
        return true;
    }

    /**
     * Warns of an input skipped as a duplicate: {@code warning: a.txt and copy.txt hold the same
     * bytes: read once} ({@code a.txt is given twice: ...} for one path).
     *
     * @param first the input given first
     * @param again the one given after it
     * @param what what they share: {@code the same bytes}
     * @param how what was read: {@code read once}, or {@code read once, as copy.txt with --algo RING}
     */
    private static void duplicate(Path first, Path again, String what, String how, PrintWriter err) {
        boolean samePath =
                first.toAbsolutePath().normalize().equals(again.toAbsolutePath().normalize());
        err.println("nccl-tuner compile: warning: "
                + (samePath ? first + " is given twice" : first + " and " + again + " hold " + what)
                + ": " + how);
    }

    /** The SHA-256 of a file's bytes, in hex. */
    private static String sha256(Path f) throws IOException {
        java.security.MessageDigest md;
        try {
            md = java.security.MessageDigest.getInstance("SHA-256");
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
        try (java.io.InputStream is = java.nio.file.Files.newInputStream(f)) {
            byte[] buf = new byte[1 << 16];
            for (int n; (n = is.read(buf)) > 0; ) {
                md.update(buf, 0, n);
            }
        }
        return java.util.HexFormat.of().formatHex(md.digest());
    }

    /**
     * Refuses a measurement argument that is plainly another kind of file (a policy, a decision log,
     * a trace, an NCCL log without nccl-tests tables, a tuner config, binary data): the command line
     * names the wrong file, so it is a usage error (exit 2), told in one line with what the file
     * looks like, what compile reads and, where one does, which option or command takes such a file.
     *
     * @param f the argument
     * @throws UsageException {@code x.yaml: this is a policy (YAML), not measurements; compile reads ...}
     * @throws InputException for a path that cannot be read
     * @throws IOException if reading fails
     */
    private static void requireMeasurements(Path f) throws InputException, IOException {
        InputFiles.requireReadable(f);
        if (InputFiles.isEmpty(f)) { // an input error (exit 1): the run left nothing
            throw new InputException(f.toString(), InputFiles.EMPTY + "; " + InputFiles.COMPILE_READS);
        }
        String other = InputFiles.otherKind(f, InputFiles.COMPILE_READS);
        if (other != null) {
            throw new UsageException(other);
        }
    }

    /**
     * Reads a folder that is not a {@code nccl-tuner sweep} folder (no {@code manifest.json}): its
     * {@code *.txt}, {@code *.log}, {@code *.out} and {@code *.csv} files, in name order, not those of
     * its subfolders, each with the settings given without {@code --in}. A file that is empty, a
     * failed sweep run's output, another kind of file ({@link InputFiles#otherKind}) or one the parsers
     * refuse (its error on a warning line; {@code --strict} refuses the compile there) is skipped, and
     * one note names the files read and those skipped, each with why.
     *
     * @param dir the folder
     * @param all the settings given without {@code --in}
     * @param pl the nccl-tests columns to read
     * @param data receives the measurements
     * @param sources receives each file read
     * @param err receives {@code nccl-tuner compile: warning: FILE:LINE: ...; file skipped} per refused
     *     file, then {@code nccl-tuner compile: note: DIR: read N of M entries ...}
     * @throws InputException when no file of the folder could be read (naming each skipped one), or
     *     with {@code --strict} at the first file the parsers refuse
     * @throws IOException if reading fails
     */
    private void readFolder(
            Path dir, Input all, NcclTestsLog.Placement pl, MeasurementSet data, List<String> sources, PrintWriter err)
            throws InputException, IOException {
        InputFiles.FolderEntries entries = InputFiles.folderEntries(dir);
        Map<String, String> skipped = new java.util.TreeMap<>(entries.skipped());
        List<String> read = new ArrayList<>();
        for (Path p : entries.files()) {
            MeasurementSet one = new MeasurementSet();
            try {
                if (!readOnce(p, all, pl, one, err)) {
                    skipped.put(p.getFileName().toString(), "the same data as another input: see its warning");
                    continue;
                }
            } catch (InputException e) {
                if (strict) {
                    throw e;
                }
                InputFiles.skippedFileLines(e, "nccl-tuner compile: warning: ").forEach(err::println);
                skipped.put(p.getFileName().toString(), "refused: see its warning");
                continue;
            }
            int before = data.measurements().size();
            data.addAll(one);
            refuseIgnoredOptions(p, all, false, data, before);
            read.add(p.getFileName().toString());
            sources.add(p.toString());
        }
        List<String> why = new ArrayList<>();
        skipped.forEach((n, w) -> why.add(n + " (" + w + ")"));
        String listed = (read.isEmpty() ? "" : String.join(", ", read))
                + (why.isEmpty() ? "" : (read.isEmpty() ? "" : "; ") + "skipped " + String.join(", ", why));
        if (read.isEmpty()) {
            throw new InputException(
                    dir.toString(),
                    why.isEmpty()
                            ? "no *.txt, *.log, *.out or *.csv file in this folder (and no manifest.json: not a "
                                    + "`nccl-tuner sweep` folder); " + InputFiles.COMPILE_READS
                            : "no file in this folder holds measurements: " + listed);
        }
        err.println("nccl-tuner compile: note: " + dir + ": not a `nccl-tuner sweep` folder (no manifest.json): read "
                + read.size() + " of " + (read.size() + skipped.size())
                + (read.size() + skipped.size() == 1 ? " entry" : " entries")
                + " in name order, not its subfolders: " + listed);
        err.flush();
    }

    /**
     * Reads the {@code --nccl-log} files' selection lines and cost tables, each only where it belongs
     * to the measurements: a log whose machine (GPU of its {@code # Rank} lines, NCCL's {@code NCCL
     * version} line) no measurement's machine matches, where both name one, or whose communicator
     * shape (its {@code comm ... nRanks N nNodes M} line, else what its other lines tell, {@link
     * io.nccltuner.model.LogShape}) no measured group has, is not used: NCCL's picks and cost table
     * are those of another machine or communicator. One warning line on stderr (and among the report's
     * warnings) names both sides and says so.
     *
     * @param data the measurements read; receives the logs' selections, tables and warnings
     * @param err where the warnings go
     * @throws InputException for an unreadable log or a malformed selection line (file:line)
     * @throws IOException if reading fails
     */
    private void readNcclLogs(MeasurementSet data, PrintWriter err) throws InputException, IOException {
        for (Path log : ncclLogs) {
            InputFiles.requireReadable(log);
            MeasurementSet one = new MeasurementSet();
            NcclRunLog.readSelections(log, one);
            String other = InputFiles.otherRun(log, one, data.measurements());
            if (other != null) {
                err.println("nccl-tuner compile: warning: --nccl-log " + log + ": " + other);
                data.warn("--nccl-log " + log, other);
                continue;
            }
            data.addAll(one);
        }
    }

    /**
     * Refuses per-file options for an input that states what they say itself, rather than ignore them:
     * a measurement CSV names each row's collective, candidate and shape in its columns, and a {@code
     * nccl-tuner sweep} folder's manifest each run's candidate (its runs' NCCL lines the shape).
     *
     * @param f the input just read
     * @param in its settings
     * @param sweep whether f is a sweep folder
     * @param data the measurements read so far, f's from index {@code before}
     * @throws InputException {@code f: --ranks 8 --nodes 1 would be ignored: ... (its rows: nRanks=2 nNodes=2)}
     */
    private static void refuseIgnoredOptions(Path f, Input in, boolean sweep, MeasurementSet data, int before)
            throws InputException, IOException {
        List<String> given = perFileOptions(in);
        if (given.isEmpty() || (!sweep && !io.nccltuner.compile.MeasurementCsv.looksLike(f))) {
            return;
        }
        java.util.Set<String> shapes = new java.util.LinkedHashSet<>();
        for (var m : data.measurements().subList(before, data.measurements().size())) {
            shapes.add(io.nccltuner.model.JobShape.of(m.nRanks(), m.nNodes()));
        }
        throw new InputException(
                f.toString(),
                String.join(" ", given) + " would be ignored: "
                        + (sweep
                                ? "a `nccl-tuner sweep` folder's manifest names each run's candidate and its runs' NCCL "
                                        + "lines the shape"
                                : "a measurement CSV names each row's collective, candidate and shape in its columns")
                        + (sweep ? " (its runs: " : " (its rows: ") + String.join(", ", shapes)
                        + "); --collective/--algo/--proto/--channels/"
                        + "--ranks/--nodes describe nccl-tests output only. Drop them (with --in FILE before them for an "
                        + "nccl-tests file among the inputs), or correct the "
                        + (sweep ? "runs" : "CSV's columns"));
    }

    /** The compiler's options from the command's; refuses a {@code --merge} that is not ranking or pick. */
    private Compiler.Options compilerOptions(String policyName, Mode m) throws InputException {
        Compiler.Merge mergeBy = switch (merge.toLowerCase(Locale.ROOT)) {
            case "ranking" -> Compiler.Merge.RANKING;
            case "pick" -> Compiler.Merge.PICK;
            default -> throw new UsageException("--merge", "'" + merge + "' is not ranking or pick");
        };
        return new Compiler.Options(
                thresholdPct / 100, noiseSigmas, tiePct / 100, anyPipeOps, mergeBy, policyName, m, null, window);
    }

    /**
     * Refuses inputs pooled as replicates whose times disagree ({@link Compiler#unverifiedPooling}),
     * naming the first; with {@code --pool-anyway} warns about each instead.
     */
    private void checkPooling(MeasurementSet data, Compiler.Options opts, PrintWriter err) throws InputException {
        List<Compiler.PoolingProblem> pooling = Compiler.unverifiedPooling(data, opts);
        if (!pooling.isEmpty() && !poolAnyway) {
            throw new InputException(
                    "inputs",
                    pooling.getFirst().message()
                            + (pooling.size() > 1
                                    ? " (and " + Main.count(pooling.size() - 1, "more group") + " like it)"
                                    : ""));
        }
        for (Compiler.PoolingProblem p : pooling) {
            err.println("nccl-tuner compile: warning: --pool-anyway: " + p.message());
        }
        for (String w : Compiler.disparateInputs(data, opts)) { // also among the report's warnings
            err.println("nccl-tuner compile: warning: " + w);
        }
    }

    /**
     * The {@code --workload} files' calls priced with the compilation; empty without {@code
     * --workload}. A file's calls of a collective and shape no measured group has are not weighted:
     * a warning per file names their shapes and the measured ones ({@link Workload#unmatched}).
     *
     * @param c the compilation
     * @param warnings receives {@code --workload FILE: ...} per file with such calls
     */
    private List<Workload.Savings> savings(Compilation c, List<String> warnings) throws InputException, IOException {
        if (workloads.isEmpty()) {
            return new ArrayList<>();
        }
        List<Workload.Call> calls = new ArrayList<>();
        for (Path w : workloads) {
            InputFiles.requireReadable(w);
            List<Workload.Call> these = Workload.read(w);
            String unmatched = Workload.unmatched(c, these);
            if (unmatched != null) {
                warnings.add("--workload " + w + ": " + unmatched);
            }
            calls.addAll(these);
        }
        return Workload.evaluate(c, calls);
    }

    /**
     * Why no policy can be compiled: none with rules because nothing could be compared, {@link
     * #NONE_FORCED} or {@link #NO_NCCL_PICK}. It is compile's first line, {@code policy not written:
     * WHY. WHAT}, with or without {@code -o} (with it compile exits 1); with {@code -o FILE
     * --allow-empty} the empty policy is written and the summary says why in full.
     *
     * @return {why, what to do}, or null when rules could be compiled (or the empty policy is written)
     */
    private String[] zeroRules(Compilation c, int nRules) {
        if (nRules > 0 || (allowEmpty && output != null)) {
            return null;
        }
        if (noneForced(c)) {
            return NONE_FORCED;
        }
        // no size with both NCCL's own time and a forced candidate: nothing was compared
        boolean noNccl = c.groups().stream()
                .flatMap(g -> g.sizes().stream())
                .allMatch(s -> Double.isNaN(s.ncclUs()) || s.candidates().isEmpty());
        return noNccl && !c.groups().isEmpty() ? NO_NCCL_PICK : null;
    }

    /**
     * The one note for every input run that names no forced configuration (the parser's {@link
     * NcclTestsLog#UNFORCED_RUN} warnings, one per file): how many files, each file with its tables'
     * lines (the first 3 files, then how many more), and how to say what a file forced.
     *
     * @param unforced the parser's warnings, {@code FILE: the run (table at line N) names ...} or
     *     {@code FILE: K runs (tables at lines A, B) name ...}
     * @return {@code runs in N files name no forced configuration (...): counted as NCCL's own choice
     *     (tables at FILE:N, FILE:A,B); ...}
     */
    static String unforcedNote(List<String> unforced) {
        List<String> where = new ArrayList<>();
        for (String w : unforced) {
            int lines = w.indexOf(" (table");
            if (lines < 0 || w.lastIndexOf(": ", lines) < 0) { // not the parser's words: as it stands
                where.add(w.substring(0, Math.max(0, w.indexOf(": "))));
                continue;
            }
            String numbers = w.substring(w.indexOf(" line", lines) + 1, w.indexOf(')', lines))
                    .replaceFirst("^lines? ", "")
                    .replace(", ", ",");
            where.add(w.substring(0, w.lastIndexOf(": ", lines)) + ":" + numbers);
        }
        String listed = where.size() <= 3
                ? String.join(", ", where)
                : String.join(", ", where.subList(0, 3)) + " and " + (where.size() - 3) + " more";
        return "runs in " + Main.count(unforced.size(), "file") + " name "
                + NcclTestsLog.UNFORCED_RUN + " (tables at " + listed
                + "); if NCCL_ALGO/NCCL_PROTO were set for a file's "
                + "runs, say so with --in FILE --algo X --proto Y";
    }

    /** @return whether no size of any group has a forced candidate measured (every run NCCL's own pick) */
    private static boolean noneForced(Compilation c) {
        return c.groups().stream()
                .flatMap(g -> g.sizes().stream())
                .allMatch(s -> s.candidates().isEmpty());
    }

    /**
     * Writes the policy ({@link PolicyYaml#writeChecked}) to {@code -o FILE}, or to stdout for
     * {@code -o -}, and says where on the report.
     *
     * @param stdout stdout for {@code -o -}, else null (write {@code -o FILE})
     * @throws IllegalStateException if the compiled policy does not load (a bug: exit 70)
     */
    private void writePolicy(Compilation c, List<String> sources, int nRules, PrintWriter stdout, PrintWriter report)
            throws IOException, InputException {
        String yaml;
        try {
            yaml = PolicyYaml.writeChecked(
                    c.policy(), header(sources, c), ruleComments(c), stdout != null ? "stdout" : output.toString());
        } catch (PolicyException e) {
            throw new IllegalStateException("the compiled policy does not load: " + e.getMessage(), e);
        }
        if (stdout != null) {
            stdout.print(yaml);
            report.println("policy: stdout (" + Main.count(nRules, "rule") + ")");
        } else {
            PolicyYaml.writeFiles(output, yaml, report, "nccl-tuner compile"); // and its compiled form beside it
            report.println("policy: " + output + " (" + Main.count(nRules, "rule") + ")");
        }
        report.println(modeLine(c.policy().mode(), "compile"));
    }

    /**
     * The HTML page's policy line (under its heading, {@link HtmlReport#heading}): the policy's name
     * where {@code --name} gave it; else the file {@code -o} writes and what it was compiled from
     * ({@code policy.yaml, compiled from sweep and 2 more}: a name taken from {@code -o policy.yaml}
     * alone would read "Policy policy"), or without {@code -o FILE} {@code compiled from sweep.csv
     * and 2 more}.
     */
    private String htmlTitle(String policyName, boolean yamlToStdout, List<String> sources) {
        if (name.given != null || sources.isEmpty()) {
            return policyName;
        }
        String from = "compiled from "
                + Path.of(sources.getFirst().replace(" (sweep)", "")).getFileName()
                + (sources.size() > 1 ? " and " + (sources.size() - 1) + " more" : "");
        return output != null && !yamlToStdout ? output.getFileName() + ", " + from : from;
    }

    /**
     * The per-file options: each binds to one {@code --in FILE} (picocli's argument group {@link
     * Input}); {@code --nranks} and {@code --nnodes} are {@code --ranks} and {@code --nodes} as
     * explain and show spell them ({@link #ALIAS}).
     */
    static final java.util.Set<String> PER_FILE = java.util.Set.of(
            "--collective", "--algo", "--proto", "--channels", "--ranks", "--nodes", "--nranks", "--nnodes");

    /** A per-file option's other spelling to the one this command's messages use. */
    static final Map<String, String> ALIAS = Map.of("--nranks", "--ranks", "--nnodes", "--nodes");

    /**
     * Checks where the per-file options stand on the command line. They bind to the preceding
     * {@code --in FILE}, each once (picocli starts a new group at an option the current one already
     * has, and a group without {@code --in} applies to the plain FILE arguments), so an option that
     * would bind elsewhere than to the {@code --in} it follows is refused, naming both: one repeated
     * after the same {@code --in} (it would go to the next {@code --in}, or to the plain FILE
     * arguments), one after a plain FILE that follows an {@code --in} (it binds to that {@code --in},
     * not to the FILE), and one between a plain FILE and the first {@code --in} (it binds to that
     * {@code --in}, not to the FILE). {@code --nodes 2 --in f.txt} stays as it was: the option binds
     * to the {@code --in} that follows, with no plain FILE before it to mistake it for.
     *
     * @param args the command line after {@code compile}, as given
     * @param spec the command's spec (which options take a value)
     * @return the refusal, {@code --algo TREE: ...}, or null when every option binds where it stands
     */
    static String misplacedPerFileOption(List<String> args, picocli.CommandLine.Model.CommandSpec spec) {
        record Use(String name, String value, String precedingIn, String fileAfterIn, int group) {}
        List<Map<String, String>> groups = new ArrayList<>();
        List<Use> uses = new ArrayList<>();
        List<String> plain = new ArrayList<>();
        String lastIn = null;
        String fileAfterIn = null;
        boolean positionalOnly = false;
        for (int i = 0; i < args.size(); i++) {
            String a = args.get(i);
            if (positionalOnly || a.equals("-") || !a.startsWith("-")) {
                plain.add(a);
                if (lastIn != null && fileAfterIn == null) {
                    fileAfterIn = a;
                }
                continue;
            }
            if (a.equals("--")) {
                positionalOnly = true;
                continue;
            }
            int eq = a.indexOf('=');
            String name = a.startsWith("--") && eq > 0 ? a.substring(0, eq) : a;
            String value = a.startsWith("--") && eq > 0 ? a.substring(eq + 1) : null;
            picocli.CommandLine.Model.OptionSpec o = spec.findOption(name);
            if (o != null && value == null && o.arity().max() > 0 && i + 1 < args.size()) {
                value = args.get(++i);
            }
            if (!name.equals("--in") && !PER_FILE.contains(name)) {
                continue;
            }
            String key = ALIAS.getOrDefault(name, name); // --nnodes is --nodes: one per --in
            if (groups.isEmpty() || groups.getLast().containsKey(key)) {
                groups.add(new java.util.LinkedHashMap<>());
            }
            groups.getLast().put(key, value);
            if (name.equals("--in")) {
                lastIn = value;
                fileAfterIn = null;
            } else {
                // before any --in: the plain FILE it follows, if any (an option after it may be meant for it)
                uses.add(new Use(
                        name,
                        value,
                        lastIn,
                        lastIn == null && !plain.isEmpty() ? plain.getLast() : fileAfterIn,
                        groups.size() - 1));
            }
        }
        String rule = "per-file options (--collective --algo --proto --channels --ranks --nodes) bind to the preceding "
                + "--in FILE, each once";
        for (Use u : uses) {
            String boundTo = groups.get(u.group()).get("--in");
            String opt = u.name() + " " + u.value();
            if (u.precedingIn() != null && !u.precedingIn().equals(boundTo)) {
                Map<String, String> prev = groups.get(u.group() - 1);
                String repeated = groups.get(u.group()).keySet().stream()
                        .filter(prev::containsKey)
                        .findFirst()
                        .orElse(ALIAS.getOrDefault(u.name(), u.name()));
                return opt + ": " + rule + "; --in " + u.precedingIn() + " already has " + repeated + " "
                        + prev.get(repeated)
                        + ", so this " + u.name() + " would apply to "
                        + (boundTo == null ? "the plain FILE arguments" : "--in " + boundTo + ", which comes after it")
                        + "; write --in FILE before each file's options "
                        + "(--in FILE --algo X --proto Y)";
            }
            if (u.precedingIn() != null && u.fileAfterIn() != null) {
                return opt + ": " + rule + "; it follows the plain FILE " + u.fileAfterIn() + ", yet binds to the --in "
                        + u.precedingIn() + " before it, not to " + u.fileAfterIn() + "; write --in " + u.fileAfterIn()
                        + " "
                        + opt + " for that file, or put the plain FILE arguments before the first --in";
            }
            if (u.precedingIn() == null && boundTo != null && u.fileAfterIn() != null) {
                return opt + ": " + rule + "; it follows the plain FILE " + u.fileAfterIn() + " but comes before --in "
                        + boundTo
                        + ", and so binds to " + boundTo + ", not to " + u.fileAfterIn() + "; write --in "
                        + u.fileAfterIn() + " "
                        + opt + " for that file, or --in " + boundTo + " " + opt + " for " + boundTo;
            }
        }
        return null;
    }

    /**
     * The error line of a compile whose -o writes no policy: the report above it (stdout, or stderr
     * with {@code -o -}) opens with the verdict in full, {@code policy not written: <why>. <what to do>}.
     */
    static final String NOT_WRITTEN = "policy not written (see above)";

    /** Why -o writes nothing when no forced candidate was measured (the summary says it too), and what to do. */
    static final String[] NONE_FORCED = {
        "no input measured a forced candidate (every run counts as NCCL's own pick), so the policy would have no rules",
        "Say what each file forced: --in FILE --algo X --proto Y (or give NCCL_DEBUG=INFO output, whose 'set by "
                + "environment' lines say it); --allow-empty writes the empty policy"
    };

    /** Why -o writes nothing when NCCL's own pick was never timed (only forced runs, no log naming the pick), and what to do. */
    static final String[] NO_NCCL_PICK = {
        "NCCL's own pick was never measured at a size with a forced candidate (no unforced run there, and no NCCL log "
                + "naming the pick), so no candidate can be compared with it and the policy would have no rules",
        "Collect NCCL's own pick: the same runs " + TextReport.UNFORCED_RUNS + ", or give "
                + "--nccl-log with their NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING selection lines; --allow-empty writes "
                + "the empty policy"
    };

    /** The parser's options for one file from its settings (those of --in FILE, or the file-less ones). */
    private NcclTestsLog.Options options(Input in, Path f, NcclTestsLog.Placement pl) throws InputException {
        Collective c = in.collective == null ? null : Collective.parse(in.collective);
        Algorithm a = in.algo == null ? null : Algorithm.parse(in.algo);
        Protocol p = in.proto == null ? null : Protocol.parse(in.proto);
        String where = in.file != null ? "--in " + in.file : f.toString();
        if ((in.collective != null && c == null) || (in.algo != null && a == null) || (in.proto != null && p == null)) {
            throw new UsageException(
                    where,
                    "unknown name in --collective/--algo/--proto (" + in.collective + "/" + in.algo + "/" + in.proto
                            + ")");
        }
        if (in.channels < 0 || in.channels > io.nccltuner.policy.PolicyLoader.MAX_CHANNELS) {
            throw new UsageException(where, "--channels must be 1.." + io.nccltuner.policy.PolicyLoader.MAX_CHANNELS);
        }
        return new NcclTestsLog.Options(
                c,
                a,
                p,
                in.channels,
                in.ranks == null ? 0 : in.ranks,
                in.nodes == null ? 0 : in.nodes,
                pl,
                poolRuns,
                strict);
    }

    private List<String> header(List<String> sources, Compilation c) {
        List<String> h = new ArrayList<>();
        h.add("Compiled by `nccl-tuner compile` from:");
        for (String s : sources) {
            h.add("  " + s);
        }
        for (Path l : ncclLogs) {
            h.add("  NCCL's picks: " + l);
        }
        h.add("Per size: median over replicates per configuration; regret = median / best median - 1.");
        h.add("A rule where NCCL's own pick (the unforced runs) loses more than max("
                + String.format(Locale.ROOT, "%.4g%%", c.options().threshold() * 100) + ", noise margin).");
        h.add("Merged ranges keep NCCL's smallest and each candidate's largest regret. See docs/compile.md.");
        return h;
    }

    private static Map<Rule, List<String>> ruleComments(Compilation c) {
        Map<Rule, List<String>> m = new IdentityHashMap<>();
        for (Group g : c.groups()) {
            for (Rule r : g.rules()) {
                List<SizeResult> in = g.sizes().stream()
                        .filter(s -> r.containsBytes(s.nBytes()))
                        .toList();
                if (in.isEmpty()) {
                    continue;
                }
                String sizes = in.size() == 1
                        ? ByteSize.format(in.getFirst().nBytes())
                        : ByteSize.format(in.getFirst().nBytes()) + " .. "
                                + ByteSize.format(in.getLast().nBytes()) + " (" + in.size() + " sizes)";
                m.put(
                        r,
                        List.of("measured " + sizes + ": NCCL " + span(in, true) + " us, "
                                + in.getFirst().ranking().getFirst().config().label() + " " + span(in, false) + " us"));
            }
        }
        return m;
    }

    private static String span(List<SizeResult> in, boolean nccl) {
        double lo = Double.POSITIVE_INFINITY;
        double hi = 0;
        for (SizeResult s : in) {
            double v = nccl ? s.ncclUs() : s.policyUs();
            lo = Math.min(lo, v);
            hi = Math.max(hi, v);
        }
        return lo == hi ? String.format(Locale.ROOT, "%.1f", lo) : String.format(Locale.ROOT, "%.1f..%.1f", lo, hi);
    }
}
