package io.nccltuner.cli;

import io.nccltuner.calibrate.ModelConstants;
import io.nccltuner.calibrate.ModelDecisions;
import io.nccltuner.calibrate.Topology;
import io.nccltuner.calibrate.TuneModel;
import io.nccltuner.engine.Decision;
import io.nccltuner.model.AlgoProto;
import io.nccltuner.model.JobShape;
import io.nccltuner.model.TextTable;
import io.nccltuner.policy.Collective;
import io.nccltuner.policy.InputException;
import io.nccltuner.policy.Mode;
import io.nccltuner.policy.Policy;
import io.nccltuner.policy.TunerConstant;
import java.io.IOException;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * {@code nccl-tuner explain --topology SWEEP_OR_LOG [--policy P] --nranks N --nnodes M}: NCCL
 * 2.28.9's model computed from constants ({@link TuneModel}) at any shape, with the topology a
 * calibration read; with a policy, its decisions there as {@link ModelDecisions} makes them (the
 * plugin's engine at init and per call). Per size: every Ring/Tree candidate's predicted time with
 * the constants the matching profile sets, NCCL's pick at its default constants, the calibrated
 * pick, the measured rule's pick where a rule of the profile covers the size, and what NCCL runs.
 */
final class ModelExplain {
    private final ExplainCommand o;

    ModelExplain(ExplainCommand options) {
        this.o = options;
    }

    /**
     * Prints the model's decisions at the shape {@code --nranks}/{@code --nnodes}.
     *
     * @param out stdout: a header naming the shape, topology and policy, a table per collective
     * @param err stderr: the CSV conversion's warnings
     * @return {@link Main#EXIT_OK}
     * @throws InputException for {@code --log} or an option of {@code --log} alone, a bad {@code
     *     --pipe-ops}, {@code --collective}, {@code --sizes} or {@code --mode}, a policy or topology
     *     that does not load, or a shape NCCL does not tune (one rank, nNodes above nRanks)
     * @throws IOException if a file cannot be read
     */
    int run(PrintWriter out, PrintWriter err) throws InputException, IOException {
        refuseLogOptions();
        o.pipeOps.check();
        List<Collective> colls = ToolCommand.parseCollectives(o.collective);
        List<Long> sizes = ExplainCommand.Sizes.parseList(o.sizes == null ? "4B:1GiB" : o.sizes);
        Mode mode = ToolCommand.parseMode(o.mode);
        Policy policy = o.policy != null ? PolicyFiles.load(o.policy, err).policy() : null;
        At at = at(TopologyInputs.read(o.topology, o.modelInputs));
        TopologyInputs src = at.src();
        out.printf(
                Locale.ROOT,
                "NCCL %s's model from constants (Ring and Tree; docs/calibrate.md) at %s%s%n",
                TuneModel.VERSION,
                JobShape.of(at.nRanks(), at.nNodes()),
                o.nRanks == null
                        ? " (" + Main.count(Math.round(src.topology().ppn()), "rank") + " per node, as measured)"
                        : "");
        Topology t = src.topology();
        boolean same = t.nRanks() == at.nRanks() && t.nNodes() == at.nNodes();
        out.printf(
                Locale.ROOT,
                "Topology: %s%s; %s.%n",
                src.describe(),
                same ? "" : ", its graphs at this shape",
                src.logged().check());
        decisions(out, policy, mode, at, colls, sizes);
        out.println("Not modelled: COLLNET_DIRECT, COLLNET_CHAIN, NVLS, NVLS_TREE, PAT (NCCL may offer them on this "
                + "hardware; calibrate fits Ring and Tree only).");
        out.flush();
        return Main.EXIT_OK;
    }

    /**
     * Refuses {@code --log} beside {@code --topology}, and the options that read the log's table
     * alone: {@code --trace}, {@code --comm}, {@code --channels}, {@code --measurements}, {@code
     * --intervals}, named together in one message.
     */
    private void refuseLogOptions() throws InputException {
        if (o.log != null) {
            throw new UsageException(
                    "--topology: give --log or --topology, not both (--log explains the table an NCCL log "
                            + "printed; --topology computes NCCL's model from constants at any shape)");
        }
        List<String> logOnly = new ArrayList<>();
        if (o.trace != null) {
            logOnly.add("--trace");
        }
        if (o.comm != null) {
            logOnly.add("--comm");
        }
        if (o.channels != null) {
            logOnly.add("--channels");
        }
        if (!o.measurements.isEmpty()) {
            logOnly.add("--measurements");
        }
        if (o.intervals) {
            logOnly.add("--intervals");
        }
        if (!logOnly.isEmpty()) {
            throw new UsageException("--topology: " + String.join(", ", logOnly) + " apply to --log only");
        }
    }

    /**
     * The shape to predict at and the topology to predict with.
     *
     * @param src the input measured nearest the shape ({@link TopologyInputs#nearest})
     * @param nRanks ranks of the shape
     * @param nNodes nodes of the shape
     * @param topology {@code src}'s topology with its graphs at this shape
     */
    private record At(TopologyInputs src, int nRanks, int nNodes, Topology topology) {}

    /**
     * The shape {@code --nranks}/{@code --nnodes} name: without {@code --nnodes}, the first input's
     * nNodes (when {@code --nranks} is absent or its nRanks); without {@code --nranks}, nNodes x the
     * nearest input's ranks per node.
     *
     * @param inputs the topologies read, at least one
     * @return the shape and the input nearest it
     * @throws InputException for {@code --nranks} alone at another nRanks than the first input's,
     *     nNodes above nRanks or below 1, or one rank (NCCL does not call the tuner)
     */
    private At at(List<TopologyInputs> inputs) throws InputException {
        TopologyInputs first = inputs.getFirst();
        int nNodes = o.nNodes != null
                ? o.nNodes
                : o.nRanks != null && o.nRanks == first.topology().nRanks()
                        ? first.topology().nNodes()
                        : o.nRanks != null ? -1 : first.topology().nNodes();
        if (nNodes == -1) {
            throw new UsageException("--nranks " + o.nRanks + ": give --nnodes too");
        }
        TopologyInputs src = TopologyInputs.nearest(inputs, o.nRanks != null ? o.nRanks : -1, nNodes);
        int nRanks = o.nRanks != null
                ? o.nRanks
                : (int) Math.round(nNodes * src.topology().ppn());
        if (nNodes < 1 || nRanks < nNodes) {
            throw new UsageException(
                    "--nranks/--nnodes: need 1 <= nNodes <= nRanks, got nRanks " + nRanks + " nNodes " + nNodes);
        }
        if (nRanks < 2) {
            throw new UsageException("--nranks " + nRanks + ": one rank: NCCL does not call the tuner");
        }
        src = TopologyInputs.nearest(inputs, nRanks, nNodes);
        return new At(src, nRanks, nNodes, src.topology().atShape(nRanks, nNodes));
    }

    /**
     * Prints the decisions at the shape: with a policy, what the engine's init logged and which
     * profile matched; then a table per collective ({@link #table}).
     *
     * @param policy the policy, or null (NCCL's model alone)
     * @param mode the mode to run the policy in
     */
    private void decisions(PrintWriter out, Policy policy, Mode mode, At at, List<Collective> colls, List<Long> sizes) {
        TopologyInputs src = at.src();
        Policy pol = policy != null ? policy : new Policy("none", Mode.OFF, "", List.of(), null);
        io.nccltuner.policy.Signature sig = o.gpu.present(src.signature()); // --gpu over the log's GPU
        try (ModelDecisions d = ModelDecisions.open(pol, policy != null ? mode : Mode.OFF, at.topology(), sig)) {
            Policy.Profile pr = d.profile();
            if (policy != null) {
                out.printf(
                        Locale.ROOT,
                        "Policy %s (%s, mode %s in the file), run in %s mode; the engine's init sees what NCCL "
                                + "%s passes and the topology's log names: %s%n",
                        policy.name(),
                        o.policy,
                        policy.mode().spelling(),
                        mode.spelling(),
                        TuneModel.VERSION,
                        sig.describe() + (o.gpu.name != null ? " (GPU: --gpu)" : ""));
                d.log().forEach(l -> out.println("  engine: " + l));
                if (pr == null) {
                    out.println(
                            "No profile matches: the plugin changes nothing; NCCL runs its own pick with its default "
                                    + "constants at every size.");
                }
            }
            List<TunerConstant> set = d.constants().differences(ModelConstants.defaults());
            boolean calibrated = !set.isEmpty();
            for (Collective c : colls) {
                table(out, d, c, sizes, pr, calibrated);
            }
            if (pr != null && !pr.constants().isEmpty() && !calibrated) {
                out.println("The profile's constants are not set here (" + mode.spelling()
                        + " mode; the plugin sets them in "
                        + "enforce mode from tuner v5): times and picks are at NCCL's defaults.");
            }
        }
    }

    private void table(
            PrintWriter out, ModelDecisions d, Collective c, List<Long> sizes, Policy.Profile pr, boolean calibrated) {
        List<ModelDecisions.Row> rows = new ArrayList<>();
        for (long n : sizes) {
            rows.add(d.row(c, n, o.pipeOps.n));
        }
        List<AlgoProto> shown = rows.getFirst().times().keySet().stream().toList();
        boolean anyRule = rows.stream().anyMatch(ModelDecisions.Row::ruled);
        out.printf(
                Locale.ROOT,
                "%n%s, numPipeOps %d: predicted time per candidate%s, microseconds%n%n",
                c,
                o.pipeOps.n,
                calibrated ? " with the constants profile " + pr.name() + " sets" : " at NCCL's default constants");
        List<String> headers = new ArrayList<>(List.of(">size", ">nBytes"));
        shown.forEach(ap -> headers.add(">" + ap));
        headers.add("NCCL default");
        if (pr != null) {
            headers.add("calibrated");
            if (anyRule) {
                headers.add("measured rule");
            }
            headers.add("NCCL runs");
        }
        TextTable tt = new TextTable(headers.toArray(String[]::new));
        int differ = 0;
        int ruled = 0;
        int changed = 0;
        for (ModelDecisions.Row r : rows) {
            List<String> cells =
                    new ArrayList<>(List.of(ExplainCommand.Sizes.format(r.nBytes()), Long.toString(r.nBytes())));
            for (AlgoProto ap : shown) {
                Double t = r.times().get(ap);
                cells.add(t == null ? "-" : String.format(Locale.ROOT, "%.3f", t));
            }
            cells.add(name(r.ncclDefault()));
            if (pr != null) {
                cells.add(name(r.calibrated()));
                if (anyRule) {
                    cells.add(
                            r.arm() == Decision.ARM_POLICY
                                    ? name(r.rulePick())
                                            + (r.channels() != 0 ? ", " + Main.count(r.channels(), "channel") : "")
                                    : r.arm() == Decision.ARM_NOT_OFFERED ? "none offered" : "");
                }
                cells.add(name(r.runs()) + (r.arm() == Decision.ARM_POLICY ? " (rule)" : ""));
            }
            tt.row(cells.toArray(String[]::new));
            differ += java.util.Objects.equals(r.calibrated(), r.ncclDefault()) ? 0 : 1;
            ruled += r.ruled() ? 1 : 0;
            changed += java.util.Objects.equals(r.runs(), r.ncclDefault()) && r.channels() == 0 ? 0 : 1;
        }
        out.print(tt.render());
        out.println();
        if (pr == null) {
            return;
        }
        out.printf(
                Locale.ROOT,
                "The calibrated pick differs from NCCL's default at %d of %s%s.%n",
                differ,
                Main.count(rows.size(), "size"),
                calibrated ? "" : " (no constants set: the same model)");
        if (anyRule) {
            out.printf(
                    Locale.ROOT,
                    "A measured rule of profile %s %s: there NCCL runs the rule's pick (the "
                            + "engine zeroes its first offered candidate in the cost table NCCL computed with the constants); elsewhere "
                            + "NCCL runs the calibrated pick.%n",
                    pr.name(),
                    rows.size() != 1
                            ? "covers " + ruled + " of the " + rows.size() + " sizes"
                            : ruled == 1 ? "covers the size" : "does not cover the size");
        }
        out.printf(
                Locale.ROOT,
                "With the policy NCCL runs another pick (or channel count) than its default at %d of %s.%n",
                changed,
                Main.count(rows.size(), "size"));
    }

    private static String name(AlgoProto ap) {
        return ap == null ? "none" : ap.toString();
    }
}
