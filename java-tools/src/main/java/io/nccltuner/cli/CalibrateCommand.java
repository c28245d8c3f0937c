package io.nccltuner.cli;

import io.nccltuner.calibrate.CalibratedPolicy;
import io.nccltuner.calibrate.Calibrator;
import io.nccltuner.calibrate.ModelConstants;
import io.nccltuner.calibrate.SweepInputs;
import io.nccltuner.compile.Compiler;
import io.nccltuner.compile.MeasurementSet;
import io.nccltuner.compile.PolicyYaml;
import io.nccltuner.policy.HardwareMatch;
import io.nccltuner.policy.InputException;
import io.nccltuner.policy.Policy.Range;
import io.nccltuner.policy.PolicyException;
import io.nccltuner.policy.TunerConstant;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code nccl-tuner calibrate SWEEPS... -o policy.yaml}: fits the constants of NCCL's cost model
 * (tuner v5's ncclTunerConstants_v5_t) to sweeps of forced candidates at a few shapes, for NCCL's
 * selection, and writes a policy whose profiles carry them (docs/calibrate.md; the method is
 * {@link Calibrator}'s, the policy {@link CalibratedPolicy}'s).
 */
@Command(
        name = "calibrate",
        description = {
            "Fit NCCL's model constants to sweeps at a few shapes, so NCCL's own selection holds at shapes nobody measured.",
            "Inputs: directories written by `nccl-tuner sweep` with NCCL_DEBUG_SUBSYS including GRAPH and TUNING. "
                    + "Writes a policy with the fitted constants for a range of nNodes and the measured rules where they beat "
                    + "the calibrated model."
        },
        sortOptions = false)
final class CalibrateCommand extends ToolCommand {
    @Parameters(paramLabel = "SWEEP", arity = "1..*", description = "Sweep directories, one per measured shape.")
    List<Path> sweeps = new ArrayList<>();

    @Option(
            names = {"-o", "--output"},
            paramLabel = "FILE",
            description = "Write the policy here (without -o: report only).")
    Path output;

    @Mixin
    SharedOptions.PolicyName name;

    @Option(
            names = {"--nnodes", "--nodes"},
            paramLabel = "MIN:MAX",
            description = "nNodes the calibrated profile matches: MIN:MAX, MIN: (no upper bound) or any "
                    + "(default: the smallest measured nNodes and up).")
    String nNodes;

    @Option(
            names = "--no-match-gpu",
            description =
                    "Leave the GPU out of the calibrated profile's match (by default it names the GPU the sweeps ran "
                            + "on, and the plugin applies it only where the CUDA driver reports that GPU).")
    boolean noMatchGpu;

    @Option(
            names = "--lambda",
            paramLabel = "X",
            defaultValue = "0.0005",
            description =
                    "Weight of the pull toward NCCL's defaults, per ln(value/default)^2 (default: ${DEFAULT-VALUE}).")
    double lambda;

    @Option(
            names = "--mu",
            paramLabel = "X",
            defaultValue = "0.3",
            description = "Weight of the log prediction error beside the regret (default: ${DEFAULT-VALUE}).")
    double mu;

    @Mixin
    SharedOptions.WrittenMode mode;

    @Mixin
    ModelInputOptions model;

    @Override
    int run(PrintWriter out, PrintWriter err) throws Exception {
        if (!(lambda >= 0) || !(mu >= 0)) {
            throw new UsageException("--lambda and --mu must be >= 0");
        }
        io.nccltuner.policy.Mode m = mode.parse();
        requireOutputDirectory("-o", output);
        Sweeps sweepsRead = readSweeps(err);
        List<SweepInputs> in = sweepsRead.in();
        for (SweepInputs s : in) { // the rows its parsers skipped, each named (none dropped silently)
            InputFiles.warnSkippedRows(s.data().refused(), s.dir().toString(), err);
        }
        List<Calibrator.Shape> shapes = in.stream().map(SweepInputs::shape).toList();
        printInputs(out, in);
        Calibrator.Result r = Calibrator.fit(shapes, new Calibrator.Options(lambda, mu));
        List<TunerConstant> constants = new ArrayList<>();
        for (Calibrator.Fitted f : r.fitted()) {
            if (f.changed()) {
                constants.add(TunerConstant.parse(f.name(), Math.round(f.fitted() * 100) / 100.0));
            }
        }
        printFit(out, r, shapes, constants);
        String policyName = name.or(output, "calibrated");
        Compiler.Compilation measured = measuredRules(in, policyName);
        int minNodes =
                shapes.stream().mapToInt(s -> s.topology().nNodes()).min().orElse(1);
        Range nodes = parseRange(nNodes, minNodes);
        HardwareMatch hw = !noMatchGpu && sweepsRead.gpu() != null
                ? new HardwareMatch(null, null, null, null, gpuModel(sweepsRead.gpu()), null)
                : HardwareMatch.ANY;
        CalibratedPolicy.Built b = CalibratedPolicy.build(policyName, constants, in, measured, nodes, hw);
        out.printf(
                Locale.ROOT,
                "%nMeasured rules: %d kept (%d beat the calibrated model, %d tie it: the fallback under "
                        + "tuner v3/v4, which sets no constants), %d dropped (the calibrated model measured faster)%n",
                b.kept().size(),
                b.beat(),
                b.kept().size() - b.beat(),
                b.dropped().size());
        b.kept().forEach(k -> out.println("  kept " + k));
        b.dropped().forEach(k -> out.println("  dropped " + k));
        if (output == null) {
            out.println("no -o: policy not written");
            return 0;
        }
        writePolicy(out, b.policy().withMode(m), r, in, constants.size(), nodes, hw);
        out.println(modeLine(m, "calibrate"));
        return 0;
    }

    /**
     * The sweeps read, and the GPU the last sweep that names one ran on.
     *
     * @param in one per SWEEP argument, in order
     * @param gpu the device name its runs printed ("NVIDIA H100 80GB HBM3"), or null when none does
     */
    private record Sweeps(List<SweepInputs> in, String gpu) {}

    /**
     * Reads each SWEEP ({@link SweepInputs#read}) at {@code --compute-capability}, else at the
     * compute capability of the GPU its runs (or an earlier sweep's) name, and {@code --cpu}. Every
     * SWEEP is read before a refused one refuses the run, so that one run names them all ({@link
     * InputFiles#refuseInputs}: several refused, each on its line, then {@code 2 of 3 inputs refused
     * (each on its line above); nothing calibrated}).
     *
     * @param err where each refused sweep's line goes where several are refused
     */
    private Sweeps readSweeps(PrintWriter err) throws java.io.IOException, InputException {
        List<SweepInputs> in = new ArrayList<>();
        List<Exception> refused = new ArrayList<>();
        String gpu = null;
        for (Path s : sweeps) {
            int cc = model.computeCapability();
            MeasuredOn on = MeasuredOn.of(java.nio.file.Files.isDirectory(s.resolve("runs")) ? s.resolve("runs") : s);
            if (!on.gpus().isEmpty()) {
                gpu = on.gpus().first();
            }
            if (cc == 0 && gpu != null) {
                cc = MeasuredOn.computeCapability(gpu);
            }
            try {
                in.add(SweepInputs.read(s, cc, model.cpu()));
            } catch (InputException e) {
                refused.add(e);
            }
        }
        InputFiles.refuseInputs("nccl-tuner calibrate", refused, sweeps.size(), "nothing calibrated", err);
        return new Sweeps(in, gpu);
    }

    /** Prints the first lines: the sweeps, each with its shape and how NCCL's logged table compares. */
    private static void printInputs(PrintWriter out, List<SweepInputs> in) {
        out.println("calibrate: " + Main.count(in.size(), "sweep") + " (NCCL "
                + io.nccltuner.calibrate.TuneModel.VERSION + "'s model, Ring and Tree)");
        for (SweepInputs s : in) {
            out.printf(
                    Locale.ROOT,
                    "  %s: %s, %s; %s%n",
                    s.dir(),
                    TopologyInputs.shape(s.shape().topology()),
                    Main.count(s.shape().points().size(), "size"),
                    s.tableCheck());
        }
    }

    /** The fitted cell of a constant the fit left within 1% of NCCL's default (written unchanged). */
    static final String UNCHANGED = "unchanged";

    /**
     * Prints the fit: each constant's NCCL default, fitted value (microseconds or GB/s, {@link
     * ModelConstants#unit}; {@link #UNCHANGED} where the fit left the default), uncertainty and what it explains; the mean regret of NCCL's selection
     * at NCCL's defaults and with the constants as the policy writes them (two decimals); the
     * measured crossovers each reproduces.
     *
     * @param constants the changed constants, rounded as the policy writes them
     */
    private static void printFit(
            PrintWriter out, Calibrator.Result r, List<Calibrator.Shape> shapes, List<TunerConstant> constants) {
        ModelConstants rounded = ModelConstants.defaults();
        for (TunerConstant k : constants) {
            rounded = rounded.with(k);
        }
        out.println();
        out.printf(
                Locale.ROOT,
                "Fitted constants (%d of %d the measured shapes depend on; uncertainty: the values within "
                        + "%.1f%% objective of the fit, the others fixed; '..' where the data leave it open):%n",
                constants.size(),
                r.fitted().size(),
                Calibrator.TOLERANCE * 100);
        List<List<String>> rows = new ArrayList<>();
        rows.add(List.of("constant", "NCCL default", "fitted", "uncertainty", "explains"));
        for (Calibrator.Fitted f : r.fitted()) {
            String unit = " " + ModelConstants.unit(f.index());
            rows.add(List.of(
                    f.name(),
                    fmt(f.ncclDefault()) + unit,
                    f.changed() ? fmt(f.fitted()) + unit : UNCHANGED,
                    (f.lowOpen() ? ".." : fmt(f.low())) + " .. " + (f.highOpen() ? ".." : fmt(f.high())),
                    f.explains().isEmpty() ? "-" : String.join("; ", f.explains())));
        }
        printTable(out, rows);
        out.printf(
                Locale.ROOT,
                "%nMean regret of NCCL's selection at the measured sizes: NCCL's defaults %.2f%%, "
                        + "calibrated %.2f%% (%d objective evaluations)%n",
                r.regretDefault() * 100,
                Calibrator.regret(shapes, rounded) * 100,
                r.evaluations());
        out.printf(
                Locale.ROOT,
                "Measured crossovers: %d; NCCL's defaults reproduce %d, the calibrated model %d%n",
                r.crossovers().size(),
                r.reproducedDefault().size(),
                r.reproducedFitted().size());
        for (Calibrator.Crossover c : r.crossovers()) {
            out.println("  " + c + ": defaults " + (r.reproducedDefault().contains(c) ? "yes" : "no") + ", calibrated "
                    + (r.reproducedFitted().contains(c) ? "yes" : "no"));
        }
    }

    /**
     * The sweeps' measurements and NCCL's picks compiled with {@code compile}'s defaults ({@link
     * Compiler.Options#defaults}: 5% threshold, window 2, enforce).
     */
    private static Compiler.Compilation measuredRules(List<SweepInputs> in, String policyName) throws InputException {
        MeasurementSet all = new MeasurementSet();
        for (SweepInputs s : in) {
            s.data().measurements().forEach(all::add);
            s.data().selections().forEach(all::add);
        }
        return Compiler.compile(all, Compiler.Options.defaults(policyName));
    }

    /**
     * Writes {@code -o}: the policy with a header naming the sweeps and each fitted constant, then
     * says what it holds.
     *
     * @param policy the calibrated policy, in the mode {@code --mode} gives
     *
     * @throws IllegalStateException if the calibrated policy does not load (a bug: exit 70)
     */
    private void writePolicy(
            PrintWriter out,
            io.nccltuner.policy.Policy policy,
            Calibrator.Result r,
            List<SweepInputs> in,
            int nConstants,
            Range nodes,
            HardwareMatch hw)
            throws java.io.IOException, InputException {
        List<String> header = new ArrayList<>();
        header.add("Calibrated by `nccl-tuner calibrate` (docs/calibrate.md) from:");
        in.forEach(s -> header.add("  " + s.dir()));
        for (Calibrator.Fitted f : r.fitted()) {
            if (f.changed()) {
                header.add(String.format(
                        Locale.ROOT,
                        "  %s: NCCL %s -> %s %s (%s .. %s)",
                        f.name(),
                        fmt(f.ncclDefault()),
                        fmt(f.fitted()),
                        ModelConstants.unit(f.index()),
                        f.lowOpen() ? ".." : fmt(f.low()),
                        f.highOpen() ? ".." : fmt(f.high())));
            }
        }
        String yaml;
        try {
            yaml = PolicyYaml.writeChecked(policy, header, Map.of(), output.toString());
        } catch (PolicyException e) {
            throw new IllegalStateException("the calibrated policy does not load: " + e.getMessage(), e);
        }
        PolicyYaml.writeFiles(output, yaml, out, "nccl-tuner calibrate"); // and its compiled form beside it
        out.println("policy: " + output + " (" + Main.count(policy.profiles().size(), "profile") + ", "
                + Main.count(nConstants, "constant") + ", calibrated profile for nNodes " + nodes
                + (hw.gpu() == null ? "" : ", gpu " + hw.gpu()) + ")");
    }

    /** "NVIDIA H100 80GB HBM3" -> "H100": the model the profile's gpu match names. */
    static String gpuModel(String gpu) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("\\b(G?[A-Z]{1,2}\\d{2,3}[A-Z]?)\\b")
                .matcher(gpu);
        return m.find() ? m.group(1) : gpu;
    }

    private static Range parseRange(String text, int minNodes) throws InputException {
        if (text == null) {
            return new Range(minNodes, Long.MAX_VALUE);
        }
        if (text.equalsIgnoreCase("any")) {
            return Range.ANY;
        }
        java.util.regex.Matcher m =
                java.util.regex.Pattern.compile("(\\d+):(\\d*)").matcher(text);
        if (!m.matches()
                || Long.parseLong(m.group(1)) < 1
                || (!m.group(2).isEmpty() && Long.parseLong(m.group(2)) < Long.parseLong(m.group(1)))) {
            throw new UsageException("--nnodes", "'" + text + "' is not MIN:MAX, MIN: or any (1 <= MIN <= MAX)");
        }
        return new Range(
                Long.parseLong(m.group(1)), m.group(2).isEmpty() ? Long.MAX_VALUE : Long.parseLong(m.group(2)));
    }

    private static String fmt(double v) {
        return String.format(Locale.ROOT, v >= 100 ? "%.1f" : "%.3g", v);
    }

    private static void printTable(PrintWriter out, List<List<String>> rows) {
        int[] w = new int[rows.getFirst().size()];
        for (List<String> r : rows) {
            for (int i = 0; i < r.size() - 1; i++) {
                w[i] = Math.max(w[i], r.get(i).length());
            }
        }
        for (List<String> r : rows) {
            StringBuilder sb = new StringBuilder("  ");
            for (int i = 0; i < r.size(); i++) {
                sb.append(i < r.size() - 1 ? String.format("%-" + w[i] + "s  ", r.get(i)) : r.get(i));
            }
            out.println(sb.toString().stripTrailing());
        }
    }
}
