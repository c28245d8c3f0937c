package io.nccltuner.cli;

import io.nccltuner.model.Replay;
import io.nccltuner.model.TextTable;
import io.nccltuner.policy.ByteSize;
import io.nccltuner.policy.Collective;
import io.nccltuner.policy.InputException;
import io.nccltuner.policy.Mode;
import io.nccltuner.policy.Policy;
import io.nccltuner.report.ShadowReport;
import io.nccltuner.trace.TraceFile;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code nccl-tuner replay}: runs captured getCollInfo calls (the CSV the trace tuner writes)
 * through the policy engine in this process, exactly as the plugin does (native cost table and
 * nChannels in off-heap memory, see {@link Replay}), applies NCCL's strict-minimum selection before
 * and after, and reports per collective, size and numPipeOps what NCCL would have run with and
 * without the policy. Times are NCCL's own predictions from the captured table (microseconds), not
 * measurements.
 *
 * <p>Exit codes as for every command ({@link Main}): 0 done, 1 an input error (a policy or
 * trace that does not load), 2 a usage error, 70 an internal error.
 */
@Command(
        name = "replay",
        description = {
            "Replay captured tuner calls through the policy engine and report what the policy changes.",
            "Times are NCCL's predicted microseconds from the captured cost tables."
        })
final class ReplayCommand extends ToolCommand {
    @Option(names = "--trace", required = true, paramLabel = "FILE", description = "captured calls (CSV)")
    Path trace;

    @Option(
            names = "--policy",
            required = true,
            paramLabel = "FILE",
            description = SharedOptions.PolicyArgument.DESCRIPTION)
    Path policy;

    @Option(
            names = "--mode",
            defaultValue = "enforce",
            paramLabel = "MODE",
            description =
                    "enforce (default: show what the policy changes), shadow or off; the policy's own mode is shown")
    String mode;

    @Option(names = "--changes-only", description = "list only sizes where the policy changes NCCL's choice")
    boolean changesOnly;

    @Option(
            names = {"--nranks", "--ranks"},
            paramLabel = "N",
            description = "run every communicator of the trace as nRanks N (the policy's profile is matched on it; "
                    + "NCCL's captured cost tables stay as they are)")
    Integer nRanks;

    @Option(
            names = {"--nnodes", "--nodes"},
            paramLabel = "M",
            description = "run every communicator as nNodes M (see --nranks)")
    Integer nNodes;

    @Option(
            names = "--measurements",
            paramLabel = "DIR_OR_FILE",
            description =
                    "price NCCL's and the policy's picks with measured times (sweep CSV or nccl-tests output, or a "
                            + "folder: its *.csv and *.txt files, or a `nccl-tuner sweep` folder)")
    Path measurements;

    @Option(
            names = "--nccl-era",
            paramLabel = "E",
            defaultValue = io.nccltuner.model.NcclEra.DEFAULT,
            description =
                    "run the engine as NCCL E calls the tuner (its tuner version, version and regBuff 0 from 2.24; "
                            + "as try --nccl-era): 2.22, 2.24, 2.28, 2.30 or 2.32.6 (default: ${DEFAULT-VALUE})")
    String era;

    @picocli.CommandLine.Mixin
    SharedOptions.Gpu gpu;

    private io.nccltuner.model.NcclEra ncclEra;
    private List<io.nccltuner.compile.Compiler.Group> measured = List.of();
    private PolicyFiles.Loaded loaded;

    /** What the replay's inits present (--nccl-era, --gpu): the engine's profile lookup takes it. */
    private io.nccltuner.policy.Signature signature;

    @Override
    Path inputFile() {
        return trace;
    }

    @Override
    int run(PrintWriter out, PrintWriter err) throws InputException, IOException {
        try {
            io.nccltuner.model.NcclEra e;
            try {
                e = io.nccltuner.model.NcclEra.parse(era);
            } catch (IllegalArgumentException ex) {
                throw new picocli.CommandLine.ParameterException(spec.commandLine(), ex.getMessage());
            }
            ncclEra = e;
            Mode m = parseMode(mode);
            InputFiles.requireReadable(trace);
            InputFiles.requireReadable(policy);
            if ((nRanks != null && nRanks < 1) || (nNodes != null && nNodes < 1)) {
                throw new UsageException("--nranks and --nnodes must be >= 1");
            }
            loaded = PolicyFiles.load(policy, err);
            Policy p = loaded.policy();
            TraceFile t = withShape(TraceFile.read(trace), nRanks, nNodes);
            if (measurements != null) {
                InputFiles.measurementData(measurements, err); // refuses what does not load, notes skipped files
            }
            io.nccltuner.policy.Signature sig = gpu.present(e.signature()); // as try --gpu presents it
            signature = sig;
            Replay.Result r = Replay.run(p, m, t, sig, e.regBuff());
            // shadow leaves NCCL's choice alone; what the policy would pick is its enforce-mode pick
            Replay.Result would = m == Mode.SHADOW ? Replay.run(p, Mode.ENFORCE, t, sig, e.regBuff()) : null;
            if (measurements != null) { // NCCL's picks priced as compile, report and try price them
                long ranks = t.calls().isEmpty() ? 0 : t.calls().getFirst().nRanks();
                long nodes = t.calls().isEmpty() ? 0 : t.calls().getFirst().nNodes();
                measured = InputFiles.pricedGroups(
                        measurements,
                        trace + " (trace)",
                        (would != null ? would : r)
                                .changes().stream()
                                        .filter(c -> c.ncclPick() != null)
                                        .map(c -> new ShadowReport.PickedCall(
                                                c.collective(),
                                                ranks,
                                                nodes,
                                                c.nBytes(),
                                                c.ncclPick().toString()))
                                        .toList(),
                        "replay");
            }
            report(out, p, m, t, r, would);
            out.flush();
            return 0;
        } catch (IllegalArgumentException e) { // a trace that does not load
            throw new InputException(e.getMessage());
        }
    }

    /**
     * The verdict when nothing changed because no profile matches the replayed communicators'
     * shapes (the engine says so only in an INFO line): the shapes, the policy's profiles, and
     * what to do, as {@code try} says it. Null when something changed or a profile matched.
     */
    static String changesNothing(Policy p, TraceFile t, Replay.Result r, Replay.Result would, List<String> args) {
        if (r.changedCalls() > 0
                || (would != null && would.changedCalls() > 0)
                || t.calls().isEmpty()) {
            return null;
        }
        java.util.Set<String> unmatched = new java.util.LinkedHashSet<>();
        for (var c : t.calls()) {
            if (p.profileFor(c.nRanks(), c.nNodes()) == null) {
                unmatched.add(io.nccltuner.model.JobShape.of(c.nRanks(), c.nNodes()));
            }
        }
        if (unmatched.isEmpty()) {
            return null;
        }
        long[] at = TryCommand.profileShape(p);
        return TryCommand.noProfileMatches(
                "replay",
                p,
                unmatched,
                null,
                "Give --nranks and --nnodes of one of them"
                        + (at == null ? "" : ": `" + TryCommand.commandAt(args, at[0], at[1]) + "`")
                        + ", or replay a trace of the job's shape");
    }

    /**
     * The trace with every communicator's shape replaced (null: keep the captured value). Only the
     * shape the engine matches profiles on changes; NCCL's cost tables are the captured ones.
     */
    static TraceFile withShape(TraceFile t, Integer nRanks, Integer nNodes) {
        if (nRanks == null && nNodes == null) {
            return t;
        }
        List<TraceFile.Event> events = new java.util.ArrayList<>();
        for (TraceFile.Event e : t.events()) {
            events.add(
                    switch (e) {
                        case TraceFile.Init i ->
                            new TraceFile.Init(
                                    i.line(),
                                    i.comm(),
                                    nRanks != null ? nRanks : i.nRanks(),
                                    nNodes != null ? nNodes : i.nNodes());
                        case TraceFile.Get g -> {
                            io.nccltuner.trace.TraceCall c = g.call();
                            yield new TraceFile.Get(new io.nccltuner.trace.TraceCall(
                                    c.line(),
                                    c.comm(),
                                    nRanks != null ? nRanks : c.nRanks(),
                                    nNodes != null ? nNodes : c.nNodes(),
                                    c.collective(),
                                    c.nBytes(),
                                    c.numPipeOps(),
                                    c.numAlgo(),
                                    c.numProto(),
                                    c.nChannelsIn(),
                                    c.costs(),
                                    c.costTolerance()));
                        }
                        case TraceFile.Destroy d -> d;
                    });
        }
        return new TraceFile(t.source(), events);
    }

    private void report(PrintWriter out, Policy p, Mode m, TraceFile t, Replay.Result r, Replay.Result would) {
        header(out, p, m, r, would);
        List<Replay.Change> changes = (would != null ? would : r)
                .changes().stream()
                        .sorted(Comparator.comparing(
                                        (Replay.Change c) -> c.collective().id())
                                .thenComparingLong(Replay.Change::nBytes)
                                .thenComparingInt(Replay.Change::numPipeOps))
                        .toList();
        boolean priced = !measured.isEmpty();
        TextTable table = table(priced);
        long shapeRanks = t.calls().isEmpty() ? 0 : t.calls().getFirst().nRanks();
        long shapeNodes = t.calls().isEmpty() ? 0 : t.calls().getFirst().nNodes();
        MeasuredTotals all = new MeasuredTotals();
        MeasuredTotals hits = new MeasuredTotals();
        List<String[]> rows = new java.util.ArrayList<>();
        for (Replay.Change c : changes) {
            ShadowReport.Price pr = priced ? price(c, shapeRanks, shapeNodes) : null;
            if (pr != null && !Double.isNaN(pr.policyUs())) {
                all.add(pr, c.calls());
                if (c.ruleHit()) {
                    hits.add(pr, c.calls());
                }
            }
            if (!changesOnly || c.changed()) {
                rows.add(cells(c, would, pr, priced));
            }
        }
        boolean folded = false;
        // --changes-only folds adjacent sizes of one decision into a row (Repeats.runs)
        List<List<String[]>> runs = changesOnly
                ? io.nccltuner.compile.Repeats.runs(rows, ReplayCommand::decision)
                : rows.stream().map(x -> List.<String[]>of(x)).toList();
        for (List<String[]> run : runs) {
            table.row(run.size() == 1 ? run.getFirst() : folded(run));
            folded |= run.size() > 1;
        }
        if (table.size() > 0) {
            out.print(table.render());
            out.println(LEGEND);
            if (folded) {
                out.println(FOLDED);
            }
            List<Integer> grouped = changes.stream()
                    .filter(c -> !changesOnly || c.changed())
                    .map(Replay.Change::numPipeOps)
                    .filter(n -> n > 1)
                    .distinct()
                    .sorted()
                    .toList();
            if (!grouped.isEmpty()) {
                out.println(pipeOpsLegend(grouped));
            }
        } else {
            out.println(
                    would != null
                            ? "The policy would change nothing in this trace."
                            : "The policy changes nothing in this trace.");
        }
        out.println();
        counts(out, r, would);
        String nothing = changesNothing(
                p, t, r, would, spec.commandLine().getParseResult().originalArgs());
        if (nothing != null) {
            out.println(nothing);
        }
        notOffered(out, r, would);
        if (priced) {
            out.println(measuredLine(measurements, r.calls().size(), all, hits));
            String why = ShadowReport.shapesNotMeasured(
                    "the trace's calls",
                    r.calls().stream()
                            .map(o -> io.nccltuner.model.JobShape.of(
                                    o.call().nRanks(), o.call().nNodes()))
                            .distinct()
                            .toList(),
                    measured);
            if (why != null) {
                out.println(why);
            }
        }
        r.engineLog().forEach(l -> out.println("engine: " + l));
    }

    /** The lines above the table: the trace, the policy, the mode and era, the shape, what the times are. */
    private void header(PrintWriter out, Policy p, Mode m, Replay.Result r, Replay.Result would) {
        out.printf(
                Locale.ROOT,
                "%s: %s; policy %s (%s, mode %s in the file), replayed in %s mode as NCCL %s calls the "
                        + "tuner (tuner v%d, regBuff %d; --nccl-era)%n",
                trace,
                Main.count(r.calls().size(), "call"),
                p.name(),
                policy,
                p.mode().spelling(),
                m.spelling(),
                io.nccltuner.policy.Signature.versionString(ncclEra.versionCode()),
                ncclEra.tunerVersion(),
                ncclEra.regBuff());
        if (gpu.name != null) {
            int cc = MeasuredOn.computeCapability(gpu.name);
            out.println("GPU " + gpu.name.strip() + " (--gpu, cc "
                    + (cc > 0 ? io.nccltuner.policy.Signature.ccString(cc) : "unknown")
                    + "): every init presents it, as the plugin learns it from the CUDA driver.");
        }
        if (nRanks != null || nNodes != null) {
            out.println("Shape: every communicator run as "
                    + (nRanks != null && nNodes != null
                            ? io.nccltuner.model.JobShape.of(nRanks, nNodes)
                            : nRanks != null ? "nRanks=" + nRanks : "nNodes=" + nNodes)
                    + " (profile matched on it; NCCL's cost tables as captured"
                    + " for the trace's own shape).");
        }
        out.println("Times: NCCL's predicted microseconds for each pick, from the captured cost tables"
                + (measurements == null
                        ? NO_MEASUREMENTS
                        : measured.isEmpty()
                                ? "."
                                : "; measured: median times from " + measurements
                                        + " at the measured size governing each size (NCCL's pick: its unforced runs pooled with its forced runs,"
                                        + " as compile, report and try price it)."));
        if (would != null) {
            out.println(
                    "Shadow mode leaves NCCL's choice as it is; 'would pick' is what the policy picks in enforce mode.");
        }
        out.println();
    }

    /**
     * The end of the times line without {@code --measurements}: the times are NCCL's cost model's,
     * under which a policy compiled from measurements can look slower than NCCL's pick.
     */
    static final String NO_MEASUREMENTS = " (NCCL's cost model, not measurements: a policy compiled from"
            + " measurements can look slower under it; --measurements DIR_OR_FILE prices the picks with measured"
            + " times).";

    /** The table's columns: NCCL's predicted times, and with --measurements the measured ones. */
    private static TextTable table(boolean priced) {
        List<String> h = new java.util.ArrayList<>(List.of(
                "collective",
                ">size",
                ">nBytes",
                ">numPipeOps",
                ">calls",
                "NCCL pick",
                ">NCCL us",
                "policy pick",
                ">policy us",
                ">nChannels",
                "change"));
        if (priced) {
            h.addAll(List.of(">measured NCCL us", ">measured policy us", ">saved us"));
        }
        return new TextTable(h.toArray(String[]::new));
    }

    /**
     * The measured price of one row ({@link ShadowReport#price}); a row the policy leaves alone costs
     * NCCL's time under both. Null where NCCL or the policy has no pick or nothing is measured there.
     */
    private ShadowReport.Price price(Replay.Change c, long shapeRanks, long shapeNodes) {
        if (c.ncclPick() == null || c.policyPick() == null) {
            return null;
        }
        ShadowReport.Price pr = ShadowReport.price(
                c.collective(),
                shapeRanks,
                shapeNodes,
                c.nBytes(),
                c.ncclPick().toString(),
                c.policyPick().toString(),
                c.changed() ? c.nChannels() : 0,
                measured);
        if (pr != null && !c.changed()) { // the policy runs NCCL's own pick: the same time
            pr = new ShadowReport.Price(
                    pr.measuredBytes(),
                    pr.ncclUs(),
                    pr.ncclUs(),
                    pr.bestUs(),
                    pr.ncclBusbw(),
                    pr.ncclBusbw(),
                    pr.keptByNoise());
        }
        return pr;
    }

    /** The legend of --changes-only's folded rows. */
    static final String FOLDED = "a size range with (N sizes): N adjacent sizes of one decision (collective, "
            + "numPipeOps, both picks, nChannels, change) in one row (--changes-only); calls summed, times from the "
            + "smallest to the largest";

    /** @return what makes adjacent rows one decision: all but the size, nBytes, calls and times */
    private static List<String> decision(String[] cells) {
        return List.of(cells[0], cells[3], cells[5], cells[7], cells[9], cells[10]);
    }

    /**
     * Adjacent rows of one decision as one: the size range and the number of sizes, the nBytes range,
     * the calls summed, each time column from its smallest to its largest value.
     */
    private static String[] folded(List<String[]> run) {
        String[] first = run.getFirst();
        String[] last = run.getLast();
        String[] out = first.clone();
        out[1] = first[1] + " .. " + last[1] + " (" + run.size() + " sizes)";
        out[2] = first[2] + ".." + last[2];
        out[4] = Long.toString(run.stream().mapToLong(r -> Long.parseLong(r[4])).sum());
        for (int i = 6; i < out.length; i++) {
            if (i == 7 || i == 9 || i == 10) {
                continue; // the decision's own columns
            }
            final int col = i;
            java.util.DoubleSummaryStatistics t = run.stream()
                    .map(r -> r[col])
                    .filter(x -> x.matches("-?[0-9.]+"))
                    .mapToDouble(Double::parseDouble)
                    .summaryStatistics();
            if (t.getCount() > 0 && t.getMin() != t.getMax()) {
                String lo = run.stream()
                        .filter(r -> r[col].matches("-?[0-9.]+") && Double.parseDouble(r[col]) == t.getMin())
                        .findFirst()
                        .orElseThrow()[col];
                String hi = run.stream()
                        .filter(r -> r[col].matches("-?[0-9.]+") && Double.parseDouble(r[col]) == t.getMax())
                        .findFirst()
                        .orElseThrow()[col];
                out[i] = lo + ".." + hi;
            }
        }
        return out;
    }

    /** One table row: the change, and with --measurements its measured times. */
    private static String[] cells(Replay.Change c, Replay.Result would, ShadowReport.Price pr, boolean priced) {
        String change = c.kept()
                ? (c.notOffered() ? KEPT_NOT_OFFERED : KEPT)
                : !c.changed()
                        ? ""
                        : c.ncclPick() != null && c.ncclPick().equals(c.policyPick()) ? "channels" : "changed";
        List<String> cells = new java.util.ArrayList<>(List.of(
                c.collective().name(),
                ExplainCommand.Sizes.format(c.nBytes()),
                Long.toString(c.nBytes()),
                Integer.toString(c.numPipeOps()),
                Integer.toString(c.calls()),
                name(c.ncclPick()),
                time(c.ncclTime()),
                (would != null ? "would pick " : "") + name(c.policyPick()),
                time(c.policyTime()),
                c.nChannels() == 0 ? "" : Integer.toString(c.nChannels()),
                would == null || change.isEmpty() || c.kept()
                        ? change
                        : change.equals("channels") ? "would set channels" : "would change"));
        if (priced) {
            boolean both = pr != null && !Double.isNaN(pr.policyUs());
            cells.add(pr == null ? "-" : String.format(Locale.ROOT, "%.1f", pr.ncclUs()));
            cells.add(both ? String.format(Locale.ROOT, "%.1f", pr.policyUs()) : "-");
            cells.add(both ? String.format(Locale.ROOT, "%.1f", pr.savedUs()) : "-");
        }
        return cells.toArray(String[]::new);
    }

    /**
     * Per collective and over all: the calls, how many changed NCCL's algorithm or protocol, how many
     * changed the channel count only ({@code channels only}, where there are any), and in shadow mode
     * the same in enforce mode.
     */
    private static void counts(PrintWriter out, Replay.Result r, Replay.Result would) {
        for (Collective coll : Collective.values()) {
            long calls = r.calls().stream()
                    .filter(o -> o.call().collective() == coll)
                    .count();
            if (calls == 0) {
                continue;
            }
            out.printf(
                    Locale.ROOT,
                    "%s: %s, %s%s%n",
                    coll,
                    Main.count(calls, "call"),
                    changed(r, coll, "changed"),
                    would == null ? "" : ", " + changed(would, coll, "would change") + " in enforce mode");
        }
        out.printf(
                Locale.ROOT,
                "all: %s, %s%s%n",
                Main.count(r.calls().size(), "call"),
                changed(r, null, "changed"),
                would == null ? "" : ", " + changed(would, null, "would change") + " in enforce mode");
    }

    /**
     * @param coll the collective, null for all
     * @return {@code 3 changed}: the calls whose algorithm or protocol the policy changed, then {@code
     *     (+ 2 channels only)} where it changed only the channel count of others
     */
    static String changed(Replay.Result r, Collective coll, String verb) {
        long picks = r.calls().stream()
                .filter(o -> (coll == null || o.call().collective() == coll) && o.changed() && !o.channelsOnly())
                .count();
        long channels = r.calls().stream()
                .filter(o -> (coll == null || o.call().collective() == coll) && o.channelsOnly())
                .count();
        return picks + " " + verb + (channels == 0 ? "" : " (+ " + channels + " channels only)");
    }

    /** Measured time over priced calls: NCCL's, the policy's, and how many calls. */
    static final class MeasuredTotals {
        double ncclUs;
        double policyUs;
        long calls;

        void add(ShadowReport.Price pr, long n) {
            ncclUs += pr.ncclUs() * n;
            policyUs += pr.policyUs() * n;
            calls += n;
        }

        /** @return the saving as a percentage of NCCL's time over these calls (0 when none) */
        double percent() {
            return ncclUs > 0 ? 100 * (ncclUs - policyUs) / ncclUs : 0.0;
        }
    }

    /**
     * Replay's measured line: the expected saving (NCCL's measured time - the policy's, over the
     * priced calls; calls no rule matches cost the same under both, so the saving is the rule hits'),
     * as a percentage of each baseline, each named: of the rule hits' time (NCCL's time over the
     * priced calls a rule matched, report's and try's baseline) and of all calls' time (NCCL's time
     * over every priced call of the trace).
     *
     * @param measurements the --measurements path
     * @param calls the trace's calls
     * @param all totals over every priced call
     * @param hits totals over the priced calls a rule matched
     * @return {@code measured (M): 273 of 273 calls priced: NCCL's picks X us, the policy's Y us:
     *     expected saving Z us, P% of the rule hits' time (NCCL's A us over the 65 rule hits priced),
     *     Q% of all calls' time (NCCL's X us over the 273 calls priced)}; with no priced call or no
     *     priced rule hit, "no priced calls" / "no priced rule hits, so no expected saving" instead of
     *     percentages of 0 us
     */
    static String measuredLine(Path measurements, long calls, MeasuredTotals all, MeasuredTotals hits) {
        if (all.calls == 0) { // no baseline to take a percentage of
            return "measured (" + measurements + "): 0 of " + Main.count(calls, "call")
                    + " priced: no priced calls, so no expected "
                    + "saving";
        }
        if (hits.calls == 0) {
            return String.format(
                    Locale.ROOT,
                    "measured (%s): %d of %s priced: NCCL's picks %.1f us, the policy's %.1f us: no priced rule "
                            + "hits, so no expected saving (calls no rule matches cost the same under both)",
                    measurements,
                    all.calls,
                    Main.count(calls, "call"),
                    all.ncclUs,
                    all.policyUs);
        }
        return String.format(
                Locale.ROOT,
                "measured (%s): %d of %s priced: NCCL's picks %.1f us, the policy's %.1f us: expected saving %.1f"
                        + " us, %.2f%% of the rule hits' time (NCCL's %.1f us over the %s priced), %.2f%% of all calls'"
                        + " time (NCCL's %.1f us over the %s priced)",
                measurements,
                all.calls,
                Main.count(calls, "call"),
                all.ncclUs,
                all.policyUs,
                all.ncclUs - all.policyUs,
                hits.percent(),
                hits.ncclUs,
                Main.count(hits.calls, "rule hit"),
                all.percent(),
                all.ncclUs,
                Main.count(all.calls, "call"));
    }

    /**
     * The calls a rule matched that still changed nothing, because NCCL offers none of the rule's
     * candidates there (their cost-table entries are -1), or because the rule's pick is NCCL's own
     * (rows marked kept): a count, then one line per collective, size and numPipeOps NCCL offers
     * none at, with the rule, its candidates and what NCCL offered.
     */
    private void notOffered(PrintWriter out, Replay.Result r, Replay.Result would) {
        List<Replay.CallOutcome> none =
                r.calls().stream().filter(Replay.CallOutcome::notOffered).toList();
        long kept = (would != null ? would : r)
                .calls().stream()
                        .filter(o -> o.ruleHit() && !o.notOffered() && !o.changed())
                        .count();
        if (kept > 0) { // the two reasons, as try and report count them
            out.printf(
                    Locale.ROOT,
                    "matched a rule but changed nothing: %s: NCCL offers none of the rule's candidates %d%s,"
                            + " already NCCL's pick %d (kept)%n",
                    Main.count(none.size() + kept, "call"),
                    none.size(),
                    none.isEmpty() ? "" : " (below)",
                    kept);
        }
        if (none.isEmpty()) {
            return;
        }
        if (kept == 0) {
            out.printf(
                    Locale.ROOT,
                    "matched a rule but changed nothing: %s (NCCL offers none of the rule's candidates there)%n",
                    Main.count(none.size(), "call"));
        }
        java.util.Map<List<Object>, List<Replay.CallOutcome>> groups = new java.util.LinkedHashMap<>();
        for (Replay.CallOutcome o : none) {
            io.nccltuner.trace.TraceCall c = o.call();
            groups.computeIfAbsent(
                            List.of(c.collective(), c.nBytes(), c.numPipeOps(), c.nRanks(), c.nNodes()),
                            k -> new java.util.ArrayList<>())
                    .add(o);
        }
        for (List<Replay.CallOutcome> g : groups.values()) {
            io.nccltuner.trace.TraceCall c = g.getFirst().call();
            List<String> offered = new java.util.ArrayList<>();
            for (int a = 0; a < c.numAlgo(); a++) {
                for (int q = 0; q < c.numProto(); q++) {
                    if (c.cost(a, q) >= 0) {
                        offered.add(new io.nccltuner.model.AlgoProto(
                                        io.nccltuner.policy.Algorithm.ofId(a), io.nccltuner.policy.Protocol.ofId(q))
                                .toString());
                    }
                }
            }
            out.printf(
                    Locale.ROOT,
                    "  %s %s, numPipeOps %d: %s; %s; NCCL offers %s%n",
                    c.collective(),
                    ByteSize.withBytes(ExplainCommand.Sizes.format(c.nBytes()), c.nBytes()),
                    c.numPipeOps(),
                    Main.count(g.size(), "call"),
                    rule(c),
                    offered.isEmpty() ? "nothing" : String.join(" ", offered));
        }
    }

    /**
     * @return "rule NAME candidates A/P B/P" for the rule the engine matched for a call, under the
     *     regBuff the replay passes ({@code --nccl-era}: 0 from tuner v4, so a {@code regBuff: false}
     *     rule matches; -1 under v3, where only a rule for any regBuff does)
     */
    private String rule(io.nccltuner.trace.TraceCall c) {
        Policy p = loaded.policy();
        int i = p.profileIndexFor(c.nRanks(), c.nNodes(), signature, new java.util.ArrayList<>()); // as the engine
        int j = i < 0
                ? -1
                : p.profiles().get(i).ruleIndexFor(c.collective(), c.nBytes(), c.numPipeOps(), ncclEra.regBuff());
        if (j < 0) {
            return "a rule";
        }
        return "rule " + loaded.ruleName(i, j) + " candidates "
                + p.profiles().get(i).rules().get(j).candidatesText();
    }

    /** The change column's mark for calls a rule matched that keep NCCL's own pick (the rule picks it). */
    static final String KEPT = "kept";
    /** The mark for calls a rule matched that keep NCCL's pick because NCCL offers none of its candidates. */
    static final String KEPT_NOT_OFFERED = "kept: not offered";
    /** The line under the table that says what each mark of the change column means. */
    static final String LEGEND =
            "change: changed = the policy's pick differs from NCCL's (would change: in enforce mode);"
                    + " channels = NCCL's pick, the policy sets nChannels; " + KEPT
                    + " = a rule matched and NCCL's own pick stays (the"
                    + " first of the rule's candidates NCCL offers is NCCL's pick); " + KEPT_NOT_OFFERED
                    + " = a rule matched, NCCL"
                    + " offers none of its candidates (listed below); blank = no rule covers these calls";

    /**
     * The legend line for rows of numPipeOps above 1, printed when the table has one.
     *
     * @param values the numPipeOps above 1 in the table, ascending
     * @return {@code numPipeOps 4 = ...}: what NCCL passes, what the times are, which rules match
     */
    static String pipeOpsLegend(List<Integer> values) {
        String n = values.stream().map(String::valueOf).collect(java.util.stream.Collectors.joining(", "));
        String many = values.size() == 1 ? n : "that many";
        return "numPipeOps " + n + " = NCCL asked once for " + many + " operations it runs together (collectives of "
                + "one ncclGroupStart/ncclGroupEnd, or a coalesced call, scheduled in one launch); the row's times are "
                + "NCCL's predictions for those operations together (Ring counts the latency once per operation, "
                + "the others once per batch: docs/cost-model.md, latCount), and only a rule whose numPipeOps range holds "
                + n + " applies to it "
                + "(compile writes rules for the numPipeOps measured, 1 for nccl-tests, unless --any-pipe-ops)";
    }

    private static String name(Object pick) {
        return pick == null ? "none" : pick.toString();
    }

    private static String time(float us) {
        return us < 0 ? "-" : String.format(Locale.ROOT, "%.3f", us);
    }
}
