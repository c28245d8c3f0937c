package io.nccltuner.cli;

import io.nccltuner.model.AlgoProto;
import io.nccltuner.model.Availability;
import io.nccltuner.model.CandidateTime;
import io.nccltuner.model.CommShape;
import io.nccltuner.model.Communicator;
import io.nccltuner.model.CostModel;
import io.nccltuner.model.Explain;
import io.nccltuner.model.Interval;
import io.nccltuner.model.LogProblem;
import io.nccltuner.model.NcclFacts;
import io.nccltuner.model.NcclModelLog;
import io.nccltuner.model.NcclVersion;
import io.nccltuner.model.Prediction;
import io.nccltuner.model.Replay;
import io.nccltuner.model.TextTable;
import io.nccltuner.model.TraceCheck;
import io.nccltuner.policy.ByteSize;
import io.nccltuner.policy.Collective;
import io.nccltuner.policy.InputException;
import io.nccltuner.policy.Mode;
import io.nccltuner.policy.Policy;
import io.nccltuner.trace.TraceFile;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.TreeSet;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code nccl-tuner explain}: NCCL's cost model rebuilt from an NCCL INFO log ({@code
 * NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,TUNING}). For each communicator whose latency/bandwidth
 * table the log holds and each size: every candidate's predicted time in microseconds, NCCL's pick,
 * whether the one-decimal rounding of the table leaves the pick ambiguous, and, where the log has
 * selection lines for that size, whether the model's pick matches them. With {@code --trace} the
 * model is first narrowed with the cost tables a tuner captured.
 *
 * <p>Exit codes as for every command ({@link Main}): 0 done, 1 an input error (the message
 * names the file and line), 2 a usage error, 70 an internal error.
 */
@Command(
        name = "explain",
        description = {
            "Show what NCCL picks at each size, from the latency/bandwidth table in its INFO log.",
            "Times are microseconds: latency x latCount + nBytes / (1000 x bandwidth) (NCCL src/graph/tuning.cc)."
        })
final class ExplainCommand extends ToolCommand {
    @Option(names = "--log", paramLabel = "FILE", description = "NCCL log with the TUNING table (or --topology)")
    Path log;

    @Option(
            names = "--topology",
            paramLabel = "SWEEP_OR_LOG",
            description = "instead of --log: predict with NCCL 2.28.9's model computed from constants (Ring and Tree, "
                    + "docs/calibrate.md) at the shape --nranks/--nnodes, from the topology a sweep directory or NCCL log "
                    + "(NCCL_DEBUG_SUBSYS with INIT and GRAPH) holds, what `calibrate` read; repeatable (the one measured "
                    + "nearest the shape is used); with --policy, the matching profile's constants and rules")
    List<Path> topology = new ArrayList<>();

    @Option(
            names = "--sizes",
            paramLabel = "SIZES",
            description = "sizes as NCCL passes them to the tuner: FROM:TO (powers of two), or a comma list; "
                    + "units B, KiB, MiB, GiB, TiB (default: the powers of two 4B:1GiB and every size the log has a "
                    + "selection line for)")
    String sizes;

    @Option(
            names = "--collective",
            defaultValue = "AllReduce",
            paramLabel = "NAME",
            description = "Broadcast, Reduce, AllGather, ReduceScatter, AllReduce, or 'all' (each collective the "
                    + "log has selection lines for; all five where it has none) (default ${DEFAULT-VALUE})")
    String collective;

    @picocli.CommandLine.Mixin
    SharedOptions.PipeOps pipeOps;

    @Option(
            names = "--comm",
            paramLabel = "ID",
            description = "only this communicator: its number in the log (1, 2, ...) or its pointer (0x...)")
    String comm;

    @Option(
            names = "--trace",
            paramLabel = "FILE",
            description = "captured tuner calls (CSV); their cost tables narrow the model first")
    Path trace;

    @Option(
            names = {"--nranks", "--ranks"},
            paramLabel = "N",
            description =
                    "nRanks, where the log lacks INIT lines (where it has them, must agree); with --topology: the "
                            + "shape to predict (default: nNodes x the measured ranks per node)")
    Integer nRanks;

    @Option(
            names = {"--nnodes", "--nodes"},
            paramLabel = "N",
            description =
                    "nNodes, where the log lacks it (before 2.20; else must agree); with --topology: the shape to "
                            + "predict (default: the topology's own)")
    Integer nNodes;

    @Option(
            names = "--channels",
            paramLabel = "N",
            description = "the communicator's nChannels, where the log lacks it (else must agree)")
    Integer channels;

    @picocli.CommandLine.Mixin
    ModelInputOptions modelInputs;

    @picocli.CommandLine.Mixin
    SharedOptions.Gpu gpu;

    @Option(names = "--intervals", description = "print each time's range [low, high] too")
    boolean intervals;

    @Option(
            names = "--policy",
            paramLabel = "FILE",
            description =
                    "a policy YAML or NCCL example-tuner CSV: adds the pick NCCL makes after the policy engine edits the cost table")
    Path policy;

    @Option(
            names = "--mode",
            defaultValue = "enforce",
            paramLabel = "MODE",
            description = "mode to run the policy in: enforce (default), shadow or off")
    String mode;

    @Option(
            names = "--measurements",
            paramLabel = "DIR_OR_FILE",
            description = "price NCCL's pick (and the policy's) with measured times: a sweep CSV or nccl-tests output, "
                    + "or a folder (its *.csv and *.txt files, or a `nccl-tuner sweep` folder); repeatable, the files "
                    + "read as one set")
    List<Path> measurements = new ArrayList<>();

    private Policy loadedPolicy;
    /** The --policy as loaded, for its rules' names ({@code profiles[0].rules[1]}, a CSV's line). */
    private PolicyFiles.Loaded loadedFile;
    /** The regBuff the engine is called with (the log's release's tuner version), for rule lookups. */
    private int engineRegBuff;
    /** What the engine's init is presented (NCCL release, GPU), for finding the profile it uses. */
    private io.nccltuner.policy.Signature engineSignature;

    private io.nccltuner.model.LogShape hints;
    private Mode policyMode;
    private List<io.nccltuner.compile.Compiler.Group> measured = List.of();
    /** What each --measurements says about its machine, in the order given; empty without them. */
    private final java.util.Map<Path, MeasuredOn> measuredOn = new java.util.LinkedHashMap<>();
    /** The other-machine warnings printed so far: each once, however many tables follow. */
    private final java.util.Set<String> warnedOtherMachine = new java.util.HashSet<>();

    private MeasuredOn logOn;
    private PrintWriter warn;

    @Override
    Path inputFile() {
        return log;
    }

    @Override
    int run(PrintWriter out, PrintWriter err) throws InputException, IOException {
        if (log == null && topology.isEmpty()) {
            err.println("nccl-tuner explain: Missing required option: '--log=FILE'");
            err.println(
                    "(or --topology SWEEP_OR_LOG, to predict with NCCL's model from constants at any --nranks/--nnodes)");
            err.println("see 'nccl-tuner explain --help'");
            err.flush();
            return Main.EXIT_USAGE;
        }
        if (!topology.isEmpty()) {
            return new ModelExplain(this).run(out, err);
        }
        List<Collective> asked = parseCollectives(collective); // all: those the log's lines name, else every one
        pipeOps.check();
        List<Long> sizeList = sizes == null ? null : Sizes.parseList(sizes);
        for (Path f : new Path[] {log, trace, policy}) {
            if (f != null) {
                InputFiles.requireReadable(f);
            }
        }
        if (policy != null) {
            policyMode = parseMode(mode);
            loadedFile = PolicyFiles.load(policy, err);
            loadedPolicy = loadedFile.policy();
        }
        if (!measurements.isEmpty()) {
            for (Path m : measurements) {
                InputFiles.measurementData(m, err); // refuses what does not load; priced per communicator
            }
            for (Path m : measurements) {
                MeasuredOn on = MeasuredOn.of(m);
                measuredOn.put(m, on);
                if (on.gpus().isEmpty() && on.ncclVersions().isEmpty()) {
                    err.println(namesNoMachine(m));
                }
            }
            logOn = MeasuredOn.of(log);
        }
        warn = err;
        logGpus = (logOn != null ? logOn : MeasuredOn.of(log)).gpus();
        NcclModelLog parsed = NcclModelLog.read(log);
        hints = io.nccltuner.model.LogShape.of(
                java.nio.file.Files.readAllLines(log, java.nio.charset.StandardCharsets.UTF_8));
        for (LogProblem p : parsed.problems()) {
            err.println(InputException.at(log, p.line()) + ": " + p.reason()
                    + (p.text().equals(NcclModelLog.SKIPPED) ? "" : " (line not used)"));
        }
        List<Communicator> comms = select(parsed);
        TraceFile traceFile = trace == null ? null : readTrace(trace);
        for (Communicator c : comms) {
            List<Collective> colls = asked;
            if (asked.size() > 1) {
                List<Collective> named = c.selections().stream()
                        .map(io.nccltuner.model.LoggedSelection::collective)
                        .filter(java.util.Objects::nonNull)
                        .distinct()
                        .sorted()
                        .toList();
                colls = named.isEmpty() ? asked : named;
            }
            for (Collective cc : colls) {
                explain(out, c, cc, sizeList, traceFile);
            }
        }
        out.flush();
        return 0;
    }

    private static TraceFile readTrace(Path file) throws IOException, InputException {
        try {
            return TraceFile.read(file);
        } catch (IllegalArgumentException e) {
            throw new InputException(e.getMessage());
        }
    }

    private List<Communicator> select(NcclModelLog parsed) throws InputException {
        if (parsed.communicators().isEmpty()) {
            throw new InputException(
                    log + ": no latency/bandwidth table (run with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,TUNING;"
                            + " only rank 0 of a communicator prints it)");
        }
        if (comm == null) {
            return parsed.communicators();
        }
        for (Communicator c : parsed.communicators()) {
            if (comm.equals(Integer.toString(c.index())) || comm.equalsIgnoreCase(c.commId())) {
                return List.of(c);
            }
        }
        throw new InputException("--comm " + comm + ": the log has "
                + parsed.communicators().size()
                + " communicator(s) with a table: "
                + String.join(
                        ", ",
                        parsed.communicators().stream()
                                .map(c -> c.index() + " = " + c.label())
                                .toList()));
    }

    /** The flag where the log is silent (logged 0); the logged value, which the flag may only repeat. */
    private int logged(Communicator c, String what, int inLog, Integer flag, String option) throws InputException {
        if (flag == null) {
            return inLog;
        }
        if (inLog > 0 && flag != inLog) {
            throw new InputException(log + ": communicator " + c.label() + ": the log says " + what + " " + inLog
                    + " but " + option + " says " + flag + "; " + option + " is only for logs that do not say");
        }
        return flag;
    }

    private List<String> inferred = List.of();

    /** The GPU names the compute capability was derived from (no --compute-capability), or null. */
    private String ccFrom;

    /** The GPU names the log prints. */
    private java.util.SortedSet<String> logGpus = new java.util.TreeSet<>();

    /**
     * The compute capability of a communicator's smallest GPU, from the GPU names its log prints.
     *
     * @param gpus the names ({@code NVIDIA A100 80GB PCIe})
     * @return major x 10 + minor (80), or 0 when there is none or one is not known
     */
    static int ccOfGpus(java.util.Collection<String> gpus) {
        int min = 0;
        for (String g : gpus) {
            int cc = MeasuredOn.computeCapability(g);
            if (cc == 0) {
                return 0;
            }
            min = min == 0 ? cc : Math.min(min, cc);
        }
        return min;
    }

    private CommShape shape(Communicator c) throws InputException {
        int r = logged(c, "nRanks", c.nRanks(), nRanks, "--nranks");
        int n = logged(c, "nNodes", c.nNodes(), nNodes, "--nnodes");
        inferred = new ArrayList<>();
        if (r <= 0 && hints != null && hints.nRanks() > 0) {
            r = hints.nRanks();
            inferred.add("nRanks " + r + " inferred from " + hints.nRanksFrom());
        }
        if (n <= 0 && hints != null && hints.nNodes() > 0 && (hints.nRanks() == 0 || hints.nRanks() == r)) {
            n = hints.nNodes();
            inferred.add("nNodes " + n + " inferred from " + hints.nNodesFrom());
        }
        if (r <= 0 || n <= 0) {
            throw new InputException(log + ": communicator " + c.label() + " has no nRanks/nNodes line "
                    + "(NCCL_DEBUG_SUBSYS=INIT, nNodes from 2.20)"
                    + (r > 0
                            ? " and nothing else in the file tells nNodes (nRanks " + r
                                    + (c.nRanks() > 0 || nRanks != null ? "" : ", inferred from " + hints.nRanksFrom())
                                    + ")"
                            : "")
                    + "; give " + (r > 0 ? "--nnodes" : n > 0 ? "--nranks" : "--nranks and --nnodes"));
        }
        int ch = channels != null
                ? logged(c, "nChannels", c.nChannels(), channels, "--channels")
                : Math.min(c.nChannels(), io.nccltuner.policy.PolicyLoader.MAX_CHANNELS);
        try {
            CommShape s = new CommShape(r, n, ch, 0, CommShape.CC_MAX, c.mnnvl(), null);
            int cc = modelInputs.computeCapability();
            ccFrom = null;
            if (cc == 0) { // as --compute-capability --help promises: from the GPU name the log prints
                java.util.SortedSet<String> gpus = logGpus;
                cc = ccOfGpus(gpus);
                ccFrom = cc > 0 ? String.join(", ", gpus) : null;
            }
            return cc > 0 ? s.withComputeCapability(cc) : s;
        } catch (IllegalArgumentException e) {
            throw new InputException(e.getMessage());
        }
    }

    private void explain(PrintWriter out, Communicator c, Collective coll, List<Long> sizeList, TraceFile traceFile)
            throws InputException {
        CommShape shape = shape(c);
        CostModel model = CostModel.of(c.versionOrAssumed(), shape, c.table());
        header(out, c, shape);
        List<Long> sizesShown = sizeList != null ? sizeList : defaultSizes(c, coll, shape);
        if (traceFile != null) {
            model = tighten(out, model, traceFile);
        }
        for (var m : measuredOn.entrySet()) {
            otherMachine(m.getKey(), m.getValue(), c, model.shape());
        }
        Predicted predicted = predict(out, c, coll, shape, model, sizesShown);
        model = predicted.model();
        List<Explain.Row> rows = predicted.rows();
        if (!measurements.isEmpty()) {
            priceWithMeasurements(coll, model, rows);
        }
        out.printf(Locale.ROOT, "%s, numPipeOps %d: predicted time per candidate, microseconds%n%n", coll, pipeOps.n);
        Columns cols = Columns.of(rows.get(0).prediction());
        Agreement agreed = table(out, rows, cols, coll, model);
        selectionLines(out, c, coll, rows, agreed);
        if (loadedPolicy != null) {
            policyLines(out, shape, coll, rows);
            keptLines(shape, coll, rows, predicted.decisions()).forEach(out::println);
            predicted.engineLog().forEach(l -> out.println("engine: " + l));
        }
        notes(out, coll, model.shape(), cols);
        out.println();
    }

    /** The communicator's lines above its table: the log, NCCL's release, the shape, what was inferred. */
    private void header(PrintWriter out, Communicator c, CommShape shape) {
        out.printf(Locale.ROOT, "%s: %s%n", log, c.label());
        out.printf(
                Locale.ROOT,
                "NCCL %s%s, %s, nChannels %s, compute capability %s%n",
                c.versionOrAssumed(),
                c.version() == null ? " (assumed: the log does not print its version)" : "",
                io.nccltuner.model.JobShape.of(shape.nRanks(), shape.nNodes()),
                shape.nChannels() == 0 ? "unknown" : Integer.toString(shape.nChannels()),
                shape.computeCapabilityText() + (ccFrom == null ? "" : " (from the log's GPU " + ccFrom + ")"));
        for (String i : inferred) {
            out.printf(Locale.ROOT, "Inferred (the log has no 'comm ... nRanks N nNodes M' line): %s.%n", i);
        }
        NcclVersion v = c.versionOrAssumed();
        if (v.compareTo(NcclFacts.OLDEST_CHECKED) < 0 || v.compareTo(NcclFacts.NEWEST_CHECKED) > 0) {
            out.printf(
                    Locale.ROOT,
                    "Note: NCCL %s is outside %s .. %s, the releases whose cost function this model was checked"
                            + " against; times may differ.%n",
                    v,
                    NcclFacts.OLDEST_CHECKED,
                    NcclFacts.NEWEST_CHECKED);
        }
    }

    /** @return the powers of two 4 B .. 1 GiB and every size the log has a selection line for */
    private static List<Long> defaultSizes(Communicator c, Collective coll, CommShape shape) throws InputException {
        TreeSet<Long> all = new TreeSet<>(Sizes.parseList("4B:1GiB"));
        for (io.nccltuner.model.LoggedSelection s : c.selections()) {
            if (s.collective() == null || s.collective() == coll) {
                all.add(s.nBytes(shape.nRanks()));
            }
        }
        return new ArrayList<>(all);
    }

    /**
     * What the model predicts per size, and with --policy what NCCL picks after the engine edits the
     * cost table (the model first given the matching profile's constants, in enforce mode).
     *
     * @param model the model predicted with (the constants applied)
     * @param rows one per size
     * @param engineLog the engine's INFO and WARN lines, empty without --policy
     */
    private record Predicted(
            CostModel model, List<Explain.Row> rows, List<String> engineLog, List<Integer> decisions) {}

    private Predicted predict(
            PrintWriter out, Communicator c, Collective coll, CommShape shape, CostModel model, List<Long> sizes) {
        if (loadedPolicy == null) {
            return new Predicted(
                    model, Explain.rows(model, c.selections(), coll, sizes, pipeOps.n, null), List.of(), List.of());
        }
        out.printf(
                Locale.ROOT,
                "Policy %s (%s, mode %s in the file), run in %s mode: its pick is NCCL's selection after the engine"
                        + " edits this cost table.%n",
                loadedPolicy.name(),
                policy,
                loadedPolicy.mode().spelling(),
                policyMode.spelling());
        CostModel m = withConstants(out, model, shape);
        io.nccltuner.model.NcclEra era = io.nccltuner.model.NcclEra.forVersion(
                io.nccltuner.policy.Signature.parseVersion(c.versionOrAssumed().toString()));
        String presented = gpu.name != null ? gpu.name.strip() : logGpus.size() == 1 ? logGpus.first() : null;
        io.nccltuner.policy.Signature sig = SharedOptions.Gpu.present(era.signature(), presented);
        engineRegBuff = era.regBuff();
        engineSignature = sig;
        out.printf(
                Locale.ROOT,
                "The engine runs as NCCL %s calls the tuner (%s): tuner v%d, regBuff %d; %s.%n",
                c.versionOrAssumed(),
                c.version() == null ? "assumed: the log does not print its version" : "the log's release",
                era.tunerVersion(),
                era.regBuff(),
                presented == null
                        ? "GPU unknown (--gpu NAME presents one)"
                        : "GPU " + presented + " (cc "
                                + (sig.computeCapability() < 0
                                        ? "unknown"
                                        : io.nccltuner.policy.Signature.ccString(sig.computeCapability()))
                                + ", " + (gpu.name != null ? "--gpu" : "the log's") + ")");
        try (Replay.EngineTuner tuner =
                new Replay.EngineTuner(loadedPolicy, policyMode, shape.nRanks(), shape.nNodes(), era, sig)) {
            List<Explain.Row> rows = Explain.rows(m, c.selections(), coll, sizes, pipeOps.n, tuner);
            return new Predicted(m, rows, tuner.log(), tuner.decisions());
        }
    }

    /** @return the --measurements given, joined by ", ", for messages */
    private String measurementsText() {
        return String.join(", ", measurements.stream().map(Path::toString).toList());
    }

    /** Compiles --measurements with the model's picks as NCCL's, as compile, report and try price them. */
    private void priceWithMeasurements(Collective coll, CostModel model, List<Explain.Row> rows) throws InputException {
        long ranks = model.shape().nRanks();
        long nodes = model.shape().nNodes();
        try {
            measured = InputFiles.pricedGroups(
                    measurements,
                    log + " (explain's picks)",
                    rows.stream()
                            .filter(r -> r.prediction().pick() != null)
                            .map(r -> new io.nccltuner.report.ShadowReport.PickedCall(
                                    coll,
                                    ranks,
                                    nodes,
                                    r.nBytes(),
                                    r.prediction().pick().toString()))
                            .toList(),
                    "explain");
        } catch (IOException e) {
            throw new InputException(measurementsText() + ": " + e.getMessage());
        }
        otherShape(coll, ranks, nodes);
    }

    /**
     * Warns (stderr) when {@code --measurements} hold no measurement of the collective at the
     * communicator's shape: the measured columns then stay empty ({@code -}), since times of another
     * shape do not price this one. Names the shapes measured and how to measure this one.
     */
    private void otherShape(Collective coll, long ranks, long nodes) {
        String at = io.nccltuner.model.JobShape.of(ranks, nodes);
        if (measured.stream()
                .anyMatch(g -> g.key().collective() == coll
                        && g.key().nRanks() == ranks
                        && g.key().nNodes() == nodes)) {
            return;
        }
        java.util.Set<String> of = new java.util.TreeSet<>();
        java.util.Set<String> others = new java.util.TreeSet<>();
        for (var g : measured) {
            String shape =
                    io.nccltuner.model.JobShape.of(g.key().nRanks(), g.key().nNodes());
            if (g.key().collective() == coll) {
                of.add(shape);
            } else {
                others.add(g.key().collective() + " at " + shape);
            }
        }
        String measure = TryCommand.sweepAt(at) + ", then --measurements DIR";
        warn.println("warning: --measurements " + measurementsText() + ": "
                + (of.isEmpty()
                        ? "no " + coll + " measured (they hold " + String.join(", ", others)
                                + "), so the measured columns stay empty ('-'); measure " + coll + " at " + at + " ("
                                + measure + ")"
                        : coll + " measured at " + String.join(", ", of) + ", not at " + at + " (the communicator's "
                                + "shape), so the measured columns stay empty ('-'): times of another shape do not price "
                                + "this one; measure " + at + " (" + measure + ")"));
        warn.flush();
    }

    /**
     * The table's candidate columns: the candidates NCCL offers (in NCCL's order), those it offers
     * only for some datatypes or operations, and those it does not offer (bandwidth 0.0).
     */
    private record Columns(List<AlgoProto> shown, List<String> conditional, List<String> notOffered) {
        static Columns of(Prediction first) {
            List<AlgoProto> shown = new ArrayList<>();
            List<String> notOffered = new ArrayList<>();
            List<String> conditional = new ArrayList<>();
            for (CandidateTime t : first.candidates()) {
                if (t.offered()) {
                    shown.add(t.algoProto());
                    if (t.availability() == Availability.CONDITIONAL) {
                        conditional.add(t.algoProto().toString());
                    }
                } else {
                    notOffered.add(t.algoProto().toString());
                }
            }
            return new Columns(shown, conditional, notOffered);
        }
    }

    /**
     * How the model's picks compare with the log's selection lines over the sizes shown.
     *
     * @param ambiguous sizes whose pick the table's rounding leaves ambiguous
     * @param withLines sizes with selection lines
     * @param exact sizes where the logged pick is the model's
     * @param ambiguousLogged sizes with lines where the model's pick is ambiguous
     * @param differ sizes where the logged pick differs from the model's
     */
    private record Agreement(int ambiguous, int withLines, int exact, int ambiguousLogged, int differ) {}

    /** Prints the table, one row per size, and counts how its picks agree with the log's lines. */
    private Agreement table(PrintWriter out, List<Explain.Row> rows, Columns cols, Collective coll, CostModel model) {
        List<String> headers = new ArrayList<>(List.of(">size", ">nBytes"));
        cols.shown().forEach(ap -> headers.add(">" + ap));
        headers.addAll(List.of("NCCL pick", "also possible", "logged", "match"));
        if (loadedPolicy != null) {
            headers.addAll(List.of("policy pick", ">nChannels"));
        }
        if (!measured.isEmpty()) {
            headers.add(">measured NCCL us");
            if (loadedPolicy != null) {
                headers.addAll(List.of(">measured policy us", ">saved us"));
            }
        }
        TextTable table = new TextTable(headers.toArray(String[]::new));
        int ambiguous = 0;
        int withLines = 0;
        int[] byVerdict = new int[TraceCheck.Verdict.values().length];
        for (Explain.Row r : rows) {
            table.row(cells(r, cols, coll, model).toArray(String[]::new));
            if (r.prediction().ambiguous()) {
                ambiguous++;
            }
            if (r.match() != TraceCheck.Verdict.UNMATCHED) {
                withLines++;
            }
            byVerdict[r.match().ordinal()]++;
        }
        out.print(table.render());
        String dash = measuredDash(coll, model);
        if (dash != null) {
            out.println(dash);
        }
        out.println();
        return new Agreement(
                ambiguous,
                withLines,
                byVerdict[TraceCheck.Verdict.EXACT.ordinal()],
                byVerdict[TraceCheck.Verdict.AMBIGUOUS.ordinal()],
                byVerdict[TraceCheck.Verdict.MISMATCH.ordinal()]);
    }

    /** Sizes the table's measured columns leave '-' as no measured size governs them. */
    private int unpricedSizes;
    /** Sizes whose policy's pick no forced run measured ('-' in measured policy us and saved us). */
    private int unmeasuredPicks;

    /**
     * The line under the table that says what the measured columns' '-' means, or null where there
     * is none: sizes no measured size of the shape governs (outside the measured span), and sizes
     * whose policy's pick was never measured forced.
     */
    private String measuredDash(Collective coll, CostModel model) {
        List<String> why = new ArrayList<>();
        if (unpricedSizes > 0) {
            String span = measured.stream()
                    .filter(g -> g.key().collective() == coll
                            && g.key().nRanks() == model.shape().nRanks()
                            && g.key().nNodes() == model.shape().nNodes()
                            && !g.sizes().isEmpty())
                    .map(g -> io.nccltuner.policy.ByteSize.format(
                                    g.sizes().getFirst().nBytes())
                            + " .. "
                            + io.nccltuner.policy.ByteSize.format(
                                    g.sizes().getLast().nBytes()))
                    .findFirst()
                    .orElse(null);
            why.add(Main.count(unpricedSizes, "size") + ": no measured size governs them"
                    + (span == null ? "" : " (the measurements span " + span + ")"));
        }
        if (unmeasuredPicks > 0) {
            why.add(Main.count(unmeasuredPicks, "size") + ": the policy's pick was never measured forced (a"
                    + " file counts as forced where a `nccl-tuner sweep` folder's manifest.json, its NCCL INFO"
                    + " 'set by environment' lines or compile's --in FILE --algo X --proto Y say what it forced)");
        }
        unpricedSizes = 0;
        unmeasuredPicks = 0;
        return why.isEmpty() ? null : "measured '-': not priced, " + String.join("; ", why);
    }

    /** One size's row: each candidate's time, NCCL's pick, the logged pick, the policy's, measured times. */
    private List<String> cells(Explain.Row r, Columns cols, Collective coll, CostModel model) {
        Prediction p = r.prediction();
        List<String> cells = new ArrayList<>(List.of(Sizes.format(r.nBytes()), Long.toString(r.nBytes())));
        for (AlgoProto ap : cols.shown()) {
            CandidateTime t = p.candidate(ap);
            cells.add(!t.offered() ? "-" : intervals ? time(t.time()) + " " + t.range() : time(t.time()));
        }
        cells.add(p.pick() == null ? "none" : p.pick().toString());
        List<String> others = p.possiblePicks().stream()
                .filter(x -> !x.equals(p.pick()))
                .map(AlgoProto::toString)
                .toList();
        cells.add(others.isEmpty() ? "" : String.join(" ", others));
        cells.add(logged(r));
        cells.add(
                switch (r.match()) {
                    case EXACT -> "yes";
                    case AMBIGUOUS -> "ambiguous";
                    case MISMATCH -> "NO";
                    case UNMATCHED -> "";
                });
        if (loadedPolicy != null) {
            boolean same = r.policyPick() != null && r.policyPick().equals(p.pick());
            cells.add(
                    r.policyPick() == null
                            ? "none"
                            : same ? "=" : r.policyPick().toString());
            cells.add(r.policyChannels() == 0 ? "" : Integer.toString(r.policyChannels()));
        }
        if (!measured.isEmpty()) {
            measuredCells(cells, r, coll, model);
        }
        return cells;
    }

    /** The measured times of the model's pick and of the policy's pick (ShadowReport's pricing). */
    private void measuredCells(List<String> cells, Explain.Row r, Collective coll, CostModel model) {
        Prediction p = r.prediction();
        String np = p.pick() == null ? "none" : p.pick().toString();
        boolean keeps = r.policyPick() == null || (r.policyPick().equals(p.pick()) && r.policyChannels() == 0);
        String pp = keeps ? np : r.policyPick().toString();
        io.nccltuner.report.ShadowReport.Price pr = io.nccltuner.report.ShadowReport.price(
                coll,
                model.shape().nRanks(),
                model.shape().nNodes(),
                r.nBytes(),
                np,
                pp,
                keeps ? 0 : r.policyChannels(),
                measured);
        double polUs = pr == null ? Double.NaN : keeps ? pr.ncclUs() : pr.policyUs();
        if (pr == null) {
            unpricedSizes++;
        } else if (loadedPolicy != null && Double.isNaN(polUs)) {
            unmeasuredPicks++;
        }
        cells.add(pr == null ? "-" : String.format(Locale.ROOT, "%.1f", pr.ncclUs()));
        if (loadedPolicy != null) {
            cells.add(Double.isNaN(polUs) ? "-" : String.format(Locale.ROOT, "%.1f", polUs));
            cells.add(
                    pr == null || Double.isNaN(polUs) ? "-" : String.format(Locale.ROOT, "%.1f", pr.ncclUs() - polUs));
        }
    }

    /**
     * The line for a table no selection line of the log checks: where the communicator's lines are
     * all of other collectives (explain's default --collective is AllReduce; a Broadcast-only job logs
     * none of it), which collectives they name and the --collective that explains them.
     *
     * @param c the communicator
     * @param coll the collective explained
     * @return {@code No AllReduce selection lines in the log: its selection lines are of Broadcast (25
     *     lines); explain those with --collective Broadcast.}, or {@code No
     *     selection lines for these sizes in the log.} where it has lines of {@code coll} (at other
     *     sizes), lines that name no collective (NCCL 2.21 .. 2.22), or none at all
     */
    static String noSelectionLines(Communicator c, Collective coll) {
        java.util.Map<Collective, Long> others = new java.util.TreeMap<>();
        for (io.nccltuner.model.LoggedSelection x : c.selections()) {
            if (x.collective() == null || x.collective() == coll) {
                return "No selection lines for these sizes in the log.";
            }
            others.merge(x.collective(), 1L, Long::sum);
        }
        if (others.isEmpty()) {
            return "No selection lines for these sizes in the log.";
        }
        List<String> named = others.entrySet().stream()
                .map(e -> e.getKey() + " (" + Main.count(e.getValue(), "line") + ")")
                .toList();
        List<String> options =
                others.keySet().stream().map(k -> "--collective " + k).toList();
        return "No " + coll + " selection lines in the log: its selection lines are of " + String.join(", ", named)
                + "; explain those with "
                + (options.size() == 1 ? options.getFirst() : String.join(", ", options) + " or --collective all")
                + ".";
    }

    /** The lines under the table on the picks: ambiguity, the log's selection lines, assumed collectives. */
    private void selectionLines(PrintWriter out, Communicator c, Collective coll, List<Explain.Row> rows, Agreement a) {
        out.println(Main.count(rows.size(), "size") + "; "
                + (a.ambiguous() == 0
                        ? "the pick is clear at " + (rows.size() == 1 ? "it" : "each")
                                + " (no two best candidates' ranges overlap at the table's one-decimal rounding)."
                        : "the pick is ambiguous at " + a.ambiguous()
                                + " (the ranges of the best candidates overlap at "
                                + "the table's one-decimal rounding)."));
        if (a.withLines() > 0) {
            List<String> parts = new ArrayList<>();
            parts.add("model pick = logged pick at " + (a.exact() == a.withLines() ? "all " : "") + a.exact());
            if (a.ambiguousLogged() > 0) {
                parts.add("ambiguous at " + a.ambiguousLogged());
            }
            if (a.differ() > 0) {
                parts.add("different at " + a.differ());
            }
            out.println("Selection lines for " + Main.count(a.withLines(), "size") + ": " + String.join(", ", parts)
                    + (pipeOps.n == 1 ? " (lines do not say numPipeOps; those of grouped calls may differ)" : "")
                    + ".");
        } else {
            out.println(noSelectionLines(c, coll));
        }
        long unnamed =
                c.selections().stream().filter(x -> x.collective() == null).count();
        long unnamedUsed = rows.stream()
                .flatMap(r -> r.logged().stream())
                .filter(x -> x.collective() == null)
                .count();
        if (unnamedUsed > 0) {
            String article = "AEIOU".indexOf(coll.name().charAt(0)) >= 0 ? "an " : "a ";
            out.printf(
                    Locale.ROOT,
                    "Assumed %s: %d of the log's %s naming no collective (NCCL 2.21 .. 2.22 format) %s here because %s"
                            + " logged time fits this model's time for %s pick (--collective explains another).%n",
                    coll,
                    unnamedUsed,
                    Main.count(unnamed, "selection line"),
                    unnamedUsed == 1 ? "counts as " + article + coll + " line" : "count as " + coll + " lines",
                    unnamedUsed == 1 ? "its" : "their",
                    unnamedUsed == 1 ? "its" : "their");
        }
        if (rows.stream().anyMatch(r -> r.prediction().pick() == null)) {
            out.println(
                    "none: no entry is offered; NCCL then fails, or (2.19 .. 2.23) falls back to a Ring bandwidth it does not log.");
        }
    }

    /**
     * The line on what the policy changes: the verdict when no profile matches the communicator's
     * shape, else at how many sizes it changes NCCL's pick or only the channel count.
     */
    private void policyLines(PrintWriter out, CommShape shape, Collective coll, List<Explain.Row> rows) {
        if (loadedPolicy.profileFor(shape.nRanks(), shape.nNodes()) == null) {
            out.println(noProfileMatches(loadedPolicy, shape, policy));
            return;
        }
        long changed = rows.stream()
                .filter(r ->
                        !java.util.Objects.equals(r.policyPick(), r.prediction().pick()))
                .count();
        long channelsOnly = rows.stream()
                .filter(r ->
                        java.util.Objects.equals(r.policyPick(), r.prediction().pick()) && r.policyChannels() != 0)
                .count();
        if (changed == 0 && channelsOnly > 0) {
            out.printf(
                    Locale.ROOT,
                    "The policy keeps NCCL's algorithm and protocol at every size and changes only the "
                            + "channel count, at %d of %s ('=' keeps NCCL's pick).%n",
                    channelsOnly,
                    Main.count(rows.size(), "size"));
        } else {
            out.printf(
                    Locale.ROOT,
                    "The policy changes NCCL's algorithm/protocol at %d of %s%s ('=' keeps NCCL's pick).%n",
                    changed,
                    Main.count(rows.size(), "size"),
                    channelsOnly == 0 ? "" : ", and only the channel count at " + channelsOnly + " more");
        }
    }

    /**
     * Why the policy kept NCCL's pick ('=' in the policy pick column, no channel count set) where
     * its profile matches the communicator, as replay counts "matched a rule but changed nothing":
     * one line per reason and rule, each naming the sizes it holds at. The reasons, from the
     * engine's decision code per size ({@link io.nccltuner.engine.Decision}):
     *
     * <ul>
     *   <li>a rule matched but NCCL offers none of its candidates there (their cost-table entries
     *       are -1; the engine then leaves the table as it is);
     *   <li>a rule matched and the first of its candidates NCCL offers is NCCL's own pick (enforce
     *       mode, or a canary call that drew the policy's arm);
     *   <li>the policy runs in off mode, which leaves every call to NCCL;
     *   <li>a rule matched but the policy runs in shadow mode, which leaves NCCL's cost table as it
     *       is;
     *   <li>a rule matched, the policy runs in canary mode and the call drew NCCL's arm (the policy's
     *       candidate applies on a fraction F of the calls a rule covers, default 0.1:
     *       docs/canary.md); before issue 21 explain said canary "leaves NCCL's cost table as it is";
     *   <li>no rule of the profile covers the collective at those sizes and numPipeOps.
     * </ul>
     *
     * Before the ninth newcomer walk explain said only "changes NCCL's algorithm/protocol at 0 of N
     * sizes" and no why. A shape no profile matches has its own line ({@link #noProfileMatches}).
     *
     * @param shape the communicator's shape
     * @param coll the collective explained
     * @param rows one per size, ascending
     * @param decisions the engine's decision code per row (same order), empty without --policy
     * @return the lines, each starting {@code Kept NCCL's pick (=) at }; empty where the profile
     *     does not match or no row keeps NCCL's pick
     */
    private List<String> keptLines(CommShape shape, Collective coll, List<Explain.Row> rows, List<Integer> decisions) {
        int profileIndex = loadedPolicy.profileIndexFor(
                shape.nRanks(), shape.nNodes(), engineSignature, new ArrayList<>()); // the engine's profile
        if (profileIndex < 0 || decisions.size() != rows.size()) {
            return List.of();
        }
        Policy.Profile profile = loadedPolicy.profiles().get(profileIndex);
        int numProto = io.nccltuner.policy.Protocol.values().length;
        // reason text -> the rows (indices) it is said of, in the order first met
        java.util.Map<String, List<Integer>> reasons = new java.util.LinkedHashMap<>();
        for (int i = 0; i < rows.size(); i++) {
            Explain.Row r = rows.get(i);
            AlgoProto nccl = r.prediction().pick();
            if (nccl == null || !nccl.equals(r.policyPick()) || r.policyChannels() != 0) {
                continue;
            }
            int d = decisions.get(i);
            int arm = io.nccltuner.engine.Decision.arm(d);
            String why;
            if (policyMode == Mode.OFF) {
                why = "the policy runs in off mode, which leaves every call to NCCL (--mode enforce applies it)";
            } else if (arm == io.nccltuner.engine.Decision.ARM_UNRULED) {
                why = noRuleCovers(profile, coll, r.nBytes());
            } else {
                int ruleIndex = profile.ruleIndexFor(coll, r.nBytes(), pipeOps.n, engineRegBuff);
                String name = ruleIndex < 0 ? "a rule" : "rule " + loadedFile.ruleName(profileIndex, ruleIndex);
                String cands = ruleIndex < 0
                        ? ""
                        : " (candidates " + profile.rules().get(ruleIndex).candidatesText() + ")";
                if (arm == io.nccltuner.engine.Decision.ARM_NOT_OFFERED) {
                    List<String> offered = r.prediction().candidates().stream()
                            .filter(CandidateTime::offered)
                            .map(t -> t.algoProto().toString())
                            .toList();
                    why = name + cands + " matched, but NCCL offers none of them there (their cost-table entries"
                            + " are -1; NCCL offers " + String.join(" ", offered)
                            + ")";
                } else if (policyMode == Mode.SHADOW) {
                    why = name + cands + " matched, but the policy runs in shadow mode, which leaves NCCL's cost"
                            + " table as it is (--mode enforce applies it)";
                } else if (policyMode == Mode.CANARY && arm == io.nccltuner.engine.Decision.ARM_NCCL) {
                    why = name + cands + " matched, and the policy runs in canary mode, which applies its candidate on"
                            + " a fraction " + io.nccltuner.engine.Canary.DEFAULT_FRACTION + " of the calls a rule"
                            + " covers (NCCL_TUNER_JAVA_CANARY, default " + io.nccltuner.engine.Canary.DEFAULT_FRACTION
                            + ") and keeps NCCL's pick on the others: these calls drew NCCL's arm (--mode enforce"
                            + " applies it on every call)";
                } else {
                    int e = io.nccltuner.engine.Decision.candidate(d);
                    String pick = e == io.nccltuner.engine.Decision.NONE
                            ? ""
                            : ", "
                                    + new AlgoProto(
                                            io.nccltuner.policy.Algorithm.ofId(e / numProto),
                                            io.nccltuner.policy.Protocol.ofId(e % numProto))
                                    + ",";
                    why = name + cands + " matched, and the first of them NCCL offers" + pick
                            + " is already NCCL's pick";
                }
            }
            reasons.computeIfAbsent(why, k -> new ArrayList<>()).add(i);
        }
        List<String> out = new ArrayList<>();
        reasons.forEach((why, at) -> out.add("Kept NCCL's pick (=) at " + sizesText(rows, at) + ": " + why + "."));
        return out;
    }

    /**
     * The sizes of one "Kept NCCL's pick" line. A span {@code A .. B} is written only where the
     * sizes are a contiguous run of the explained sizes; sizes with others between them (said on
     * lines of their own) are written as their separate runs. Before the twelfth newcomer walk a
     * line said "3 sizes, 8 KiB .. 64 KiB" though 16 KiB, between them, had a line of its own.
     *
     * @param rows the explained sizes, ascending
     * @param at indices into {@code rows}, ascending
     * @return "1 size (4 KiB)", "2 sizes (4 KiB, 1 MiB)", "7 sizes, 4 B .. 4 KiB" (one run), or
     *     "3 sizes (8 KiB; 32 KiB .. 64 KiB)" (runs apart)
     */
    private static String sizesText(List<Explain.Row> rows, List<Integer> at) {
        java.util.function.IntFunction<String> size =
                i -> Sizes.format(rows.get(i).nBytes());
        if (at.size() <= 2) {
            return Main.count(at.size(), "size") + " ("
                    + String.join(", ", at.stream().map(size::apply).toList()) + ")";
        }
        List<String> runs = new ArrayList<>();
        int start = 0;
        for (int k = 1; k <= at.size(); k++) {
            if (k == at.size() || at.get(k) != at.get(k - 1) + 1) {
                int first = at.get(start);
                int last = at.get(k - 1);
                runs.add(first == last ? size.apply(first) : size.apply(first) + " .. " + size.apply(last));
                start = k;
            }
        }
        return Main.count(at.size(), "size")
                + (runs.size() == 1 ? ", " + runs.getFirst() : " (" + String.join("; ", runs) + ")");
    }

    /**
     * @return {@code no rule of profile P covers AllReduce at these sizes with numPipeOps 1 (its
     *     AllReduce rules: 0 B .. 8 KiB, 1 MiB .. 4 MiB)}, or {@code (it has no AllReduce rule)}
     */
    private String noRuleCovers(Policy.Profile profile, Collective coll, long nBytes) {
        List<String> spans = profile.rules().stream()
                .filter(x -> x.collective() == coll)
                .map(x -> ByteSize.readable(x.fromBytes()) + " .. "
                        + (x.toBytes() < 0 ? "any size" : ByteSize.readable(x.toBytes()))
                        + (x.numPipeOps().contains(pipeOps.n) ? "" : " (numPipeOps " + x.numPipeOps() + ")"))
                .distinct()
                .toList();
        return "no rule of profile " + profile.name() + " covers " + coll + " there with numPipeOps " + pipeOps.n
                + (spans.isEmpty()
                        ? " (it has no " + coll + " rule)"
                        : " (its " + coll + " rules: " + String.join(", ", spans) + ")");
    }

    /**
     * The verdict when no profile of --policy matches a communicator's shape (the engine says so
     * only in an INFO line): the shape, the policy's profiles and what to do, as replay and try say it.
     *
     * @param p the policy
     * @param shape the communicator's shape
     * @param policyFile the --policy file (named in the show command line at the profile's shape)
     * @return {@code explain: the policy changes nothing: no profile matches nRanks=2 nNodes=1 (the
     *     log's communicator); its profiles: NAME (nRanks=2 nNodes=2). Explain ...}
     */
    static String noProfileMatches(Policy p, CommShape shape, Path policyFile) {
        String at = io.nccltuner.model.JobShape.of(shape.nRanks(), shape.nNodes());
        long[] their = TryCommand.profileShape(p);
        return TryCommand.noProfileMatches(
                "explain",
                p,
                List.of(at),
                "the log's communicator",
                "Explain a log of one of their shapes"
                        + (their == null
                                ? ""
                                : ", or see its decisions there: `" + showAt(policyFile, their[0], their[1]) + "`")
                        + "; or compile a policy from measurements of " + at + " (" + TryCommand.measureAt(at) + ")");
    }

    /**
     * The show command line of a policy at one shape.
     *
     * @return {@code nccl-tuner show P --nodes N --ranks-per-node R/N} ({@code --ranks-per-node} only
     *     where N divides R)
     */
    static String showAt(Path policyFile, long nRanks, long nNodes) {
        return "nccl-tuner show " + policyFile + " --nodes " + nNodes
                + (nRanks % nNodes == 0 ? " --ranks-per-node " + nRanks / nNodes : "");
    }

    /** The notes under a communicator's table: unknown compute capability, candidates not offered. */
    private static void notes(PrintWriter out, Collective coll, CommShape used, Columns cols) {
        if (coll == Collective.AllReduce
                && used.nNodes() > 1
                && used.minCompCapLo() < 80
                && used.minCompCapHi() >= 80) {
            out.println(
                    "Compute capability unknown: RING/SIMPLE latency is x1.9 (below 8.0) or x1.4 once nBytes / (nChannels x nRanks)"
                            + " >= 64; its times show the middle. Give --compute-capability, or --trace to infer it.");
        }
        if (!cols.notOffered().isEmpty()) {
            out.println("Not offered (bandwidth 0.0 in the table): " + String.join(" ", cols.notOffered()));
        }
        if (!cols.conditional().isEmpty()) {
            out.println("Assumed offered, though NCCL may skip them for some datatypes or operations: "
                    + String.join(" ", cols.conditional()));
        }
    }

    /**
     * The note (stderr, once per {@code --measurements} path) when it names neither a GPU nor an
     * NCCL release ({@link MeasuredOn}: a sweep CSV, or a folder or sweep folder none of whose files
     * print nccl-tests' device lines, {@code nccl-library=} or NCCL's version line), so that no
     * other-machine warning ({@link #otherMachine}) can follow. Before issue 21 explain said nothing.
     *
     * @param path the --measurements path, as given
     * @return {@code note: --measurements PATH names no GPU and no NCCL version: cannot check they are
     *     of this job's hardware (...)}
     */
    static String namesNoMachine(Path path) {
        return "note: --measurements " + path + " names no GPU and no NCCL version: cannot check they are of this"
                + " job's hardware (nccl-tests outputs name both: give those, or make sure they were measured on"
                + " the log's machine)";
    }

    /**
     * Warns (stderr) when one {@code --measurements} (a file, a folder, a sweep folder) names
     * another NCCL release than the log's communicator, or GPUs other than the log's (by name where
     * the log names its GPUs, else by compute capability where it is known): their times then price
     * another machine's picks. Each foreign one is named alone (several given, the others agreeing),
     * and each warning is printed once, however many communicators and collectives follow.
     *
     * @param path the --measurements path, for the message
     * @param on what it says about its machine
     * @param c the communicator explained
     * @param shape its shape (compute capability where the log names no GPU)
     */
    private void otherMachine(Path path, MeasuredOn on, Communicator c, CommShape shape) {
        List<String> lines = new ArrayList<>();
        if (c.version() != null
                && !on.ncclVersions().isEmpty()
                && !on.ncclVersions().contains(c.version().toString())) {
            lines.add("warning: --measurements " + path + ": measured with NCCL "
                    + String.join(", ", on.ncclVersions()) + ", but communicator " + c.label() + " of " + log
                    + " runs NCCL " + c.version() + "; the times may not hold for this release's picks");
        }
        if (!on.gpus().isEmpty() && !logOn.gpus().isEmpty()) {
            String other = on.otherGpus(path, logOn, log);
            if (other != null) {
                lines.add(other);
            }
        } else if (!on.gpus().isEmpty() && shape.minCompCapLo() == shape.minCompCapHi()) {
            for (String g : on.gpus()) {
                int cc = MeasuredOn.computeCapability(g);
                if (cc != 0 && cc != shape.minCompCapLo()) {
                    lines.add("warning: --measurements " + path + ": measured on " + g
                            + " (compute capability "
                            + cc + "), but communicator " + c.label() + " has compute capability "
                            + shape.minCompCapLo()
                            + "; the times price another GPU");
                    break;
                }
            }
        }
        for (String l : lines) {
            if (warnedOtherMachine.add(l)) {
                warn.println(l);
            }
        }
        warn.flush();
    }

    /**
     * The profile's model constants (tuner v5+, set at init in enforce mode) applied to the model,
     * so the table below predicts with them (model.ConstantEdits says which are modelled).
     */
    private CostModel withConstants(PrintWriter out, CostModel model, CommShape shape) {
        Policy.Profile p = loadedPolicy.profileFor(shape.nRanks(), shape.nNodes());
        if (p == null || p.constants().isEmpty() || policyMode != Mode.ENFORCE) {
            return model;
        }
        io.nccltuner.model.ConstantEdits.Result r = io.nccltuner.model.ConstantEdits.apply(model, p);
        out.printf(
                Locale.ROOT,
                "Profile %s sets NCCL's model constants at init (NCCL 2.28+, tuner v5); predicted with:%n",
                p.name());
        r.applied().forEach(l -> out.printf(Locale.ROOT, "  %s%n", l));
        r.notModelled().forEach(l -> out.printf(Locale.ROOT, "  %s (not modelled: NCCL's own value kept here)%n", l));
        if (!r.notModelled().isEmpty()) {
            out.println("  (--topology SWEEP_OR_LOG instead of --log predicts with every constant: docs/calibrate.md)");
        }
        return r.model();
    }

    private CostModel tighten(PrintWriter out, CostModel model, TraceFile traceFile) {
        CostModel.Tightening t = model.tighten(traceFile.calls());
        out.printf(
                Locale.ROOT,
                "Narrowed with %d captured calls from %s; compute capability now %s.%n",
                t.callsUsed(),
                trace,
                t.model().shape().computeCapabilityText());
        for (String p : t.problems()) {
            out.println("  trace " + p);
        }
        if (!t.changes().isEmpty()) {
            TextTable tt = new TextTable(
                    "collective",
                    "entry",
                    "latency us (table)",
                    "latency us (narrowed)",
                    "bandwidth GB/s (table)",
                    "bandwidth GB/s (narrowed)",
                    ">costs");
            for (CostModel.EntryChange e : t.changes()) {
                tt.row(
                        e.collective().name(),
                        e.algoProto().toString(),
                        range(e.latencyBefore()),
                        range(e.latencyAfter()),
                        range(e.bandwidthBefore()),
                        range(e.bandwidthAfter()),
                        Integer.toString(e.observations()));
            }
            out.print(tt.render());
        }
        return t.model();
    }

    private static String range(Interval i) {
        return String.format(Locale.ROOT, "%.4f .. %.4f", i.lo(), i.hi());
    }

    private static String time(double us) {
        return String.format(Locale.ROOT, "%.3f", us);
    }

    private static String logged(Explain.Row r) {
        if (r.logged().isEmpty()) {
            return "";
        }
        AlgoProto agreed = r.loggedPick();
        if (agreed != null) {
            return r.logged().size() == 1
                    ? agreed.toString()
                    : agreed + " x" + r.logged().size();
        }
        java.util.Map<AlgoProto, Integer> counts = new java.util.LinkedHashMap<>();
        r.logged().forEach(s -> counts.merge(s.pick(), 1, Integer::sum));
        List<String> parts = new ArrayList<>();
        counts.forEach((k, v) -> parts.add(k + " x" + v));
        return String.join(", ", parts);
    }

    /** Size lists for {@code --sizes}; single sizes are {@link ByteSize} syntax. */
    static final class Sizes {
        private Sizes() {}

        /**
         * @param text "4B:1GiB" (powers of two from 4 B up to 1 GiB), "1MiB", or a comma list of those
         * @return the sizes in bytes, ascending, each once (the table's rows)
         * @throws UsageException naming the part that does not parse (exit 2)
         */
        static List<Long> parseList(String text) throws InputException {
            List<Long> out = new ArrayList<>();
            for (String part : text.split(",")) {
                String p = part.trim();
                int colon = p.indexOf(':');
                if (colon < 0) {
                    out.add(parse(p));
                    continue;
                }
                long from = parse(p.substring(0, colon));
                long to = parse(p.substring(colon + 1));
                if (from <= 0 || from > to) {
                    throw new UsageException("--sizes: '" + p + "' needs 0 < FROM <= TO");
                }
                for (long n = from; n <= to && n > 0; n <<= 1) {
                    out.add(n);
                }
            }
            return out.stream().distinct().sorted().toList(); // the table's rows ascend, each size once
        }

        /**
         * @param text "4096", "4KiB", "1 MiB", "1.5 MiB"
         * @return bytes
         * @throws UsageException for what {@link ByteSize#parse} refuses (exit 2)
         */
        static long parse(String text) {
            try {
                return ByteSize.parse(text);
            } catch (IllegalArgumentException e) {
                throw new UsageException("--sizes: " + e.getMessage());
            }
        }

        /**
         * A call's size in a table column or a message, as explain, replay and try print it: {@link
         * ByteSize#readable} ({@code 64 KiB}, {@code ~24.03 MiB} for 25192448 bytes).
         */
        static String format(long n) {
            return ByteSize.readable(n);
        }
    }
}
