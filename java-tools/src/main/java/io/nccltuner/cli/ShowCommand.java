package io.nccltuner.cli;

import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import io.nccltuner.engine.Decision;
import io.nccltuner.engine.Engine;
import io.nccltuner.model.JobShape;
import io.nccltuner.model.TextTable;
import io.nccltuner.policy.Algorithm;
import io.nccltuner.policy.AsciiNumbers;
import io.nccltuner.policy.ByteSize;
import io.nccltuner.policy.Collective;
import io.nccltuner.policy.InputException;
import io.nccltuner.policy.Mode;
import io.nccltuner.policy.Policy;
import io.nccltuner.policy.Protocol;
import io.nccltuner.policy.Signature;
import io.nccltuner.policy.SizeGrid;
import io.nccltuner.validate.PolicyCheck;
import java.io.IOException;
import java.io.PrintWriter;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code nccl-tuner show POLICY [--nodes 1,2,4..1024] [--ranks-per-node 8 | --nranks N] [--gpu NAME]}
 * ({@code --nnodes} and {@code --ranks} are the same as {@code --nodes} and {@code --nranks}): a
 * policy's decisions
 * over a grid of job shapes, as aws-ofi-nccl's show-tuner-decisions prints its own: per shape
 * (nNodes from {@code --nodes}, each with {@code --ranks-per-node} ranks; written {@code nRanks=16
 * nNodes=2} as everywhere, {@link JobShape}) the profile that matches, and per collective and size range the
 * policy's pick or "NCCL decides". The decisions come from the {@link Engine} the plugin runs, in
 * enforce mode, called once per size-grid bucket (at the bucket's smallest size, numPipeOps
 * {@code --pipe-ops}, unregistered buffers) with a synthetic NCCL cost table in off-heap memory:
 * every algorithm/protocol NCCL can offer for the collective and shape ({@link
 * PolicyCheck#neverOffered}; PAT only with one rank per node; COLLNET and NVLS_TREE only across
 * nodes) at cost 1 us, the rest -1. The engine's pick depends only on which entries are offered,
 * not on their costs. A pick that needs hardware NCCL may lack (NVLS: NVSwitch; COLLNET: a
 * CollNet network) is shown with the pick the engine makes where NCCL does not offer it.
 *
 * <p>Exit codes as for every command ({@link Main}): 0 done, 1 an input error (the policy does
 * not load, a shape list that does not parse), 2 a usage error, 70 an internal error.
 */
@Command(
        name = "show",
        description = {
            "Show a policy's decisions per job shape and size, through the engine the plugin runs.",
            "Per shape: the profile that matches; per collective and size range: the policy's pick or 'NCCL decides'."
        })
final class ShowCommand extends ToolCommand {
    @picocli.CommandLine.Mixin
    SharedOptions.PolicyArgument policy;

    @Option(
            names = {"--nodes", "--nnodes"},
            paramLabel = "LIST",
            defaultValue = "1,2,4..1024",
            description = "node counts: a comma list; A..B is the powers of two from A to B (default ${DEFAULT-VALUE})")
    String nodes;

    @Option(
            names = "--ranks-per-node",
            paramLabel = "LIST",
            defaultValue = "8",
            description = "ranks (GPUs) per node, a comma list as --nodes (default ${DEFAULT-VALUE})")
    String ranksPerNode;

    @Option(
            names = {"--nranks", "--ranks"},
            paramLabel = "N",
            description = "total ranks of each shape (--ranks is the same), in place of --ranks-per-node: ranks per "
                    + "node is N / nNodes "
                    + "(each node count of --nodes must divide N; without --nodes, the default counts that divide N)")
    Long nRanksTotal;

    @picocli.CommandLine.Mixin
    SharedOptions.Gpu gpu;

    @Option(
            names = "--collective",
            paramLabel = "NAME",
            defaultValue = "all",
            description = "Broadcast, Reduce, AllGather, ReduceScatter, AllReduce or all (default ${DEFAULT-VALUE})")
    String collective;

    @picocli.CommandLine.Mixin
    SharedOptions.PipeOps pipeOps;

    @Option(
            names = "--topology",
            paramLabel = "SWEEP_OR_LOG",
            description = "for profiles with model constants: the sweep directory (or NCCL log with the graph lines) "
                    + "`calibrate` read; per shape, lists the sizes where NCCL's pick with the constants (NCCL 2.28.9's model, "
                    + "Ring and Tree) differs from its default, and matches the profiles against the GPU and NCCL release the "
                    + "log names; repeatable (the one measured nearest each shape is used)")
    List<Path> topology = new ArrayList<>();

    @picocli.CommandLine.Mixin
    ModelInputOptions modelInputs;

    @Option(
            names = "--nccl-log",
            paramLabel = "LOG",
            description = "an NCCL INFO log with the latency/bandwidth table NCCL printed at init "
                    + "(NCCL_DEBUG_SUBSYS=INIT,TUNING): at its communicator's shape only what that table offers is offered "
                    + "(bandwidth 0.0: not), so the decisions are the ones NCCL with that table gets; repeatable")
    List<Path> ncclLogs = new ArrayList<>();

    /** What the {@code --nccl-log} tables do not offer, per collective and shape. */
    private List<io.nccltuner.compile.MeasurementSet.NotOffered> logged = List.of();

    private List<TopologyInputs> topologies = List.of();

    private static final int NUM_ALGO = Algorithm.values().length;
    private static final int NUM_PROTO = Protocol.values().length;

    @Override
    Path inputFile() {
        return policy.file;
    }

    @Override
    int run(PrintWriter out, PrintWriter err) throws InputException, IOException {
        List<Long> nodeList = counts(typed("--nodes"), nodes);
        boolean rpnGiven = spec.commandLine().getParseResult().hasMatchedOption("--ranks-per-node");
        List<long[]> grid = grid(nodeList, rpnGiven);
        pipeOps.check();
        List<Collective> colls = parseCollectives(collective);
        PolicyFiles.Loaded loaded = PolicyFiles.load(policy.file, err);
        Policy p = loaded.policy();
        topologies = TopologyInputs.read(topology, modelInputs);
        logged = CostTableLogs.read(ncclLogs, out, err, "nccl-tuner show"); // as explain --log reads them
        out.printf(
                Locale.ROOT,
                "policy %s (%s%s, mode %s in the file): the engine's decisions in enforce mode, numPipeOps %d,"
                        + " unregistered buffers%n",
                p.name(),
                policy.file,
                loaded.csv() ? ", NCCL example-tuner CSV" : "",
                p.mode().spelling(),
                pipeOps.n);
        out.println(costTableLine());
        if (!topologies.isEmpty()) {
            out.println("Hardware (the profiles' match; from the topology's log): "
                    + topologies.getFirst().signature().describe() + ". Model constants: NCCL "
                    + io.nccltuner.calibrate.TuneModel.VERSION + "'s model from "
                    + String.join(
                            ", ",
                            topologies.stream().map(TopologyInputs::describe).toList()) + ".");
        }
        if (p.mode() != Mode.ENFORCE) {
            out.println("The policy's mode is " + p.mode().spelling()
                    + ": the plugin applies these decisions only in enforce" + " mode (NCCL_TUNER_JAVA_MODE=enforce).");
        }
        if (gpu.name != null) {
            int cc = MeasuredOn.computeCapability(gpu.name);
            out.println("GPU " + gpu.name.strip() + " (--gpu, cc " + (cc > 0 ? Signature.ccString(cc) : "unknown")
                    + "): the profiles are matched with it, as the plugin learns it from the CUDA driver.");
        }
        boolean defaultGrid =
                !spec.commandLine().getParseResult().hasMatchedOption("--nodes") && !rpnGiven && nRanksTotal == null;
        if (defaultGrid) { // the default grid and the shapes the policy's own profiles name
            List<String> added = new ArrayList<>();
            for (Policy.Profile pr : p.profiles()) {
                long[] own = profileShape(pr);
                if (own != null && grid.stream().noneMatch(g -> g[0] == own[0] && g[1] == own[1])) {
                    grid.add(own);
                    added.add(JobShape.of(own[0] * own[1], own[0]) + " (" + pr.name() + ")");
                }
            }
            if (!added.isEmpty()) {
                out.println("Shapes: nNodes " + nodes + " with " + ranksPerNode + " ranks per node, and the policy's "
                        + "profiles' " + String.join(", ", added));
            }
        }
        String hidden = hiddenRules(p, pipeOps.n);
        if (hidden != null) {
            out.println(hidden);
        }
        // shapes with the same profile and decisions are printed once
        List<String> keys = new ArrayList<>();
        List<List<String>> shapes = new ArrayList<>();
        boolean anyMatch = false;
        for (long[] g : grid) {
            long n = g[0];
            long rpn = g[1];
            anyMatch |= p.profileFor(n * rpn, n, signature(n * rpn, n), new ArrayList<>()) != null;
            String text = shape(p, loaded, n, rpn, colls);
            String label = JobShape.of(n * rpn, n);
            if (!keys.isEmpty() && keys.getLast().equals(text)) {
                shapes.getLast().add(label);
            } else {
                keys.add(text);
                shapes.add(new ArrayList<>(List.of(label)));
            }
        }
        for (int i = 0; i < keys.size(); i++) {
            out.println();
            List<String> s = shapes.get(i);
            out.print(
                    (s.size() == 1 ? "" : "(" + s.size() + " shapes, the same) ") + String.join(", ", s) + keys.get(i));
        }
        if (!anyMatch) {
            out.println();
            out.println(profilesMatch(p, grid, signature(2, 1).gpuName().isEmpty()));
            out.println(VIEW_EXIT);
        }
        out.flush();
        return Main.EXIT_OK;
    }

    /**
     * The shapes asked for: each node count with {@code --nranks} / nNodes ranks per node, or with
     * each {@code --ranks-per-node} count.
     *
     * @param nodeList the node counts ({@code --nodes})
     * @param rpnGiven whether {@code --ranks-per-node} was given
     * @return {nNodes, ranks per node} per shape, in order
     * @throws InputException {@code --nranks} (or {@code --ranks}) with {@code --ranks-per-node},
     *     below 1, or not a multiple of a {@code --nodes} count (usage errors, naming the options as
     *     typed: {@code --ranks 12 is not a multiple of --nnodes 8: ...})
     */
    private List<long[]> grid(List<Long> nodeList, boolean rpnGiven) throws InputException {
        String nranks = typed("--nranks");
        if (nRanksTotal != null && rpnGiven) {
            throw new UsageException(
                    nranks + " and --ranks-per-node: give one (" + nranks + " N is N / nNodes ranks per node)");
        }
        if (nRanksTotal != null && nRanksTotal < 1) {
            throw new UsageException(nranks + ": must be at least 1, got " + nRanksTotal);
        }
        List<Long> rpnList = nRanksTotal == null ? counts("--ranks-per-node", ranksPerNode) : List.of();
        List<long[]> grid = new ArrayList<>();
        if (nRanksTotal != null) {
            boolean nodesGiven = spec.commandLine().getParseResult().hasMatchedOption("--nodes");
            for (long n : nodeList) {
                if (nRanksTotal % n != 0 && !nodesGiven) {
                    continue; // of the default node counts, those that divide N
                }
                if (nRanksTotal % n != 0) {
                    throw new UsageException(nranks + " " + nRanksTotal + " is not a multiple of " + typed("--nodes")
                            + " " + n
                            + ": every node has the same number of ranks (--ranks-per-node LIST gives them per node)");
                }
                grid.add(new long[] {n, nRanksTotal / n});
            }
        }
        for (long rpn : rpnList) {
            for (long n : nodeList) {
                grid.add(new long[] {n, rpn});
            }
        }
        return grid;
    }

    /** The header line saying which cost table the engine is called with. */
    private String costTableLine() {
        String generic = "every algorithm/protocol NCCL can offer for the collective and shape; where NCCL lacks the "
                + "hardware for a pick (NVLS: NVSwitch, COLLNET: CollNet) or does not offer LL128 (bandwidth 0.0 in "
                + "its table, as over sockets), the pick after 'else' applies";
        if (logged.isEmpty()) {
            return "NCCL's cost table: " + generic + "; --nccl-log LOG uses the table an NCCL log printed.";
        }
        java.util.Set<String> at = new java.util.LinkedHashSet<>();
        java.util.Set<String> files = new java.util.LinkedHashSet<>();
        for (var t : logged) {
            at.add(JobShape.of(t.nRanks(), t.nNodes()));
            files.add(t.file());
        }
        return "NCCL's cost table: at " + String.join(", ", at) + " the one " + String.join(", ", files)
                + " printed (bandwidth 0.0: not offered); elsewhere " + generic + ".";
    }

    /**
     * @return what the {@code --nccl-log} tables do not offer a collective at a shape, or null where
     *     no log has a table of that shape
     */
    private java.util.Set<io.nccltuner.model.AlgoProto> loggedOff(Collective c, long nRanks, long nNodes) {
        var mine = io.nccltuner.compile.MeasurementSet.NotOffered.of(logged, c, nRanks, nNodes);
        return mine.isEmpty() ? null : io.nccltuner.compile.MeasurementSet.NotOffered.common(mine);
    }

    /** @return {nNodes, ranks per node} of a profile that matches exactly one shape, or null */
    static long[] profileShape(Policy.Profile pr) {
        long r = pr.nRanks().min();
        long n = pr.nNodes().min();
        if (r != pr.nRanks().max() || n != pr.nNodes().max() || n < 1 || r < n || r % n != 0) {
            return null;
        }
        return new long[] {n, r / n};
    }

    /**
     * The line under {@link #profilesMatch}: why show exits 0 where no shape shown matches a profile,
     * while validate and try, the commands a CI step gates on, exit 1 for it.
     */
    static final String VIEW_EXIT = "show exits 0 all the same (it is a view of the shapes asked for); validate"
            + " POLICY --nranks N --nnodes M and try exit 1 where no profile matches a job's shape, for a CI step";

    /**
     * The line when no shape of the grid matches a profile: the shapes the profiles do match, and
     * the options that show them: {@code --nodes N --ranks-per-node R} for a shape not shown, {@code
     * --gpu 'NAME'} for a profile naming a GPU when none is presented.
     *
     * @param grid the shapes shown, {nNodes, ranks per node}
     * @param gpuUnknown whether no GPU is presented (no {@code --gpu}, none from {@code --topology})
     */
    static String profilesMatch(Policy p, List<long[]> grid, boolean gpuUnknown) {
        List<String> m = new ArrayList<>();
        for (Policy.Profile pr : p.profiles()) {
            long[] own = profileShape(pr);
            List<String> opts = new ArrayList<>();
            if (own != null && grid.stream().noneMatch(g -> g[0] == own[0] && g[1] == own[1])) {
                opts.add("--nodes " + own[0] + " --ranks-per-node " + own[1]);
            }
            if (gpuUnknown && pr.hardware().gpu() != null) {
                opts.add("--gpu '" + pr.hardware().gpu() + "'");
            }
            m.add(pr.name() + " (" + io.nccltuner.model.JobShape.of(pr.nRanks(), pr.nNodes())
                    + (opts.isEmpty() ? "" : ": " + String.join(" ", opts)) + ")");
        }
        return "No shape shown matches a profile; the policy's profiles match: " + String.join("; ", m);
    }

    /**
     * @return the line naming rules the tables cannot show (they match another numPipeOps, or only
     *     registered buffers), or null when there are none
     */
    static String hiddenRules(Policy p, int pipeOps) {
        long pipe = 0;
        long reg = 0;
        for (Policy.Profile pr : p.profiles()) {
            for (Policy.Rule r : pr.rules()) {
                if (!r.numPipeOps().contains(pipeOps)) {
                    pipe++;
                } else if (Boolean.TRUE.equals(r.regBuff())) {
                    reg++;
                }
            }
        }
        if (pipe == 0 && reg == 0) {
            return null;
        }
        List<String> parts = new ArrayList<>();
        if (pipe > 0) {
            parts.add(
                    Main.count(pipe, "rule") + " for numPipeOps other than " + pipeOps + " (--pipe-ops N shows them)");
        }
        if (reg > 0) {
            parts.add(Main.count(reg, "rule") + " for registered buffers only (regBuff: true)");
        }
        return "Not shown: " + String.join(", ", parts) + ".";
    }

    /** The text of one shape: ": profile ..." then its table, or ": no profile matches ...". */
    private String shape(Policy p, PolicyFiles.Loaded loaded, long nNodes, long rpn, List<Collective> colls) {
        long nRanks = nNodes * rpn;
        List<String> skipped = new ArrayList<>();
        Signature sig = signature(nRanks, nNodes);
        Policy.Profile pr = p.profileFor(nRanks, nNodes, sig, skipped);
        StringBuilder sb = new StringBuilder();
        if (nRanks < 2) {
            return sb.append(": one rank: NCCL does not call the tuner\n").toString();
        }
        if (pr == null) {
            sb.append(": no profile matches; NCCL decides everything\n");
            skipped.forEach(x -> sb.append("  ").append(x).append('\n'));
            return sb.toString();
        }
        sb.append(": profile ")
                .append(pr.name())
                .append(" (profiles[")
                .append(p.profiles().indexOf(pr))
                .append("], ")
                .append(Main.count(pr.rules().size(), "rule"))
                .append(")\n");
        TextTable t = new TextTable("collective", "bytes", "decision");
        List<String> allNccl = new ArrayList<>();
        Engine engine = new Engine(p, Mode.ENFORCE, (l, level, m) -> {}, null);
        long h = engine.init(nRanks, nNodes, MemorySegment.NULL, sig, MemorySegment.NULL);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment table = arena.allocate(JAVA_FLOAT, (long) NUM_ALGO * NUM_PROTO);
            MemorySegment ch = arena.allocate(JAVA_INT);
            for (Collective c : colls) {
                List<String[]> rows = new ArrayList<>();
                String open = null;
                long from = 0;
                Probe probe = new Probe(engine, h, table, ch, c, nRanks, nNodes);
                java.util.Set<io.nccltuner.model.AlgoProto> off = loggedOff(c, nRanks, nNodes);
                for (int b = 0; b <= SizeGrid.BUCKETS; b++) {
                    String d = b < SizeGrid.BUCKETS ? decideLogged(probe, SizeGrid.lowerBound(b), off) : null;
                    if (open != null && !open.equals(d)) {
                        rows.add(new String[] {c.name(), ByteSize.range(from, SizeGrid.upperBound(b - 1)), open});
                        open = null;
                    }
                    if (open == null && d != null) {
                        open = d;
                        from = SizeGrid.lowerBound(b);
                    }
                }
                if (rows.size() == 1 && rows.getFirst()[2].equals(NCCL_DECIDES)) {
                    allNccl.add(c.name());
                } else {
                    rows.forEach(t::row);
                }
            }
        } finally {
            engine.destroy(h);
        }
        if (t.size() > 0) {
            for (String line : t.render().split("\n")) {
                sb.append("  ").append(line).append('\n');
            }
        }
        if (!allNccl.isEmpty()) {
            sb.append("  ").append(String.join(", ", allNccl)).append(": NCCL decides at every size\n");
        }
        if (!pr.constants().isEmpty()) {
            calibrated(sb, p, pr, nRanks, nNodes, colls, sig);
        }
        return sb.toString();
    }

    /**
     * Profiles are matched with the hardware the topology's log names, or with nothing known; {@code
     * --gpu} presents its GPU in either.
     */
    private Signature signature(long nRanks, long nNodes) {
        return gpu.present(
                topologies.isEmpty()
                        ? Signature.UNKNOWN
                        : TopologyInputs.nearest(topologies, nRanks, nNodes).signature());
    }

    /** Sizes up to which the calibrated model's picks are listed. */
    static final long MODEL_MAX_BYTES = 1L << 40;

    /**
     * The lines of a profile with model constants: where NCCL's pick with them differs from its
     * default, per collective and size range (size-grid buckets, 0 B .. 1 TiB), as {@link
     * io.nccltuner.calibrate.ModelDecisions} computes them; or what is needed to compute them.
     */
    private void calibrated(
            StringBuilder sb,
            Policy p,
            Policy.Profile pr,
            long nRanks,
            long nNodes,
            List<Collective> colls,
            Signature sig) {
        String what = Main.count(pr.constants().size(), "model constant");
        if (topologies.isEmpty()) {
            sb.append("  ")
                    .append(what)
                    .append(" (NCCL's picks with them need the topology: give --topology SWEEP_OR_LOG, "
                            + "the sweep calibrate read or an NCCL log with the graph lines)\n");
            return;
        }
        io.nccltuner.calibrate.Topology at =
                TopologyInputs.nearest(topologies, nRanks, nNodes).topology().atShape((int) nRanks, (int) nNodes);
        TextTable t = new TextTable("collective", "bytes", "NCCL default", "calibrated", "note");
        try (io.nccltuner.calibrate.ModelDecisions d =
                io.nccltuner.calibrate.ModelDecisions.open(p, Mode.ENFORCE, at, sig)) {
            for (Collective c : colls) {
                String open = null;
                String[] cells = null;
                long from = 0;
                for (int b = 0; b <= SizeGrid.BUCKETS; b++) {
                    long lo = b < SizeGrid.BUCKETS ? SizeGrid.lowerBound(b) : MODEL_MAX_BYTES;
                    String key = null;
                    String[] row = null;
                    if (lo >= 0 && lo < MODEL_MAX_BYTES) {
                        io.nccltuner.calibrate.ModelDecisions.Row r = d.row(c, lo, pipeOps.n);
                        if (!java.util.Objects.equals(r.ncclDefault(), r.calibrated())) {
                            String note =
                                    r.arm() == Decision.ARM_POLICY ? "a measured rule applies: " + r.rulePick() : "";
                            row = new String[] {String.valueOf(r.ncclDefault()), String.valueOf(r.calibrated()), note};
                            key = String.join("|", row);
                        }
                    }
                    if (open != null && !open.equals(key)) {
                        t.row(c.name(), ByteSize.range(from, lo), cells[0], cells[1], cells[2]);
                        open = null;
                    }
                    if (open == null && key != null) {
                        open = key;
                        cells = row;
                        from = lo;
                    }
                    if (lo < 0 || lo >= MODEL_MAX_BYTES) {
                        break;
                    }
                }
            }
        }
        if (t.size() == 0) {
            sb.append("  ")
                    .append(what)
                    .append(": NCCL's pick with them is its default at every size (Ring and Tree, ")
                    .append("0 B .. 1 TiB)\n");
            return;
        }
        sb.append("  ")
                .append(what)
                .append(": where NCCL's pick with them differs from its default (NCCL ")
                .append(io.nccltuner.calibrate.TuneModel.VERSION)
                .append("'s model, Ring and Tree)\n");
        for (String line : t.render().split("\n")) {
            sb.append("    ").append(line).append('\n');
        }
    }

    static final String NCCL_DECIDES = "NCCL decides";

    /**
     * The engine's decision at one size with a logged table where there is one: the decision it gives
     * ({@link #decide}), and where it differs from the one with every entry NCCL can offer, the pick
     * the log's table does not offer: {@code RING/SIMPLE (not RING/LL128: bandwidth 0.0 in LOG)}.
     *
     * @param off what the log's table does not offer here, or null without one (then {@link #decide})
     */
    private String decideLogged(Probe p, long nBytes, java.util.Set<io.nccltuner.model.AlgoProto> off) {
        String d = decide(p, nBytes, off);
        if (off == null || off.isEmpty()) {
            return d;
        }
        String all = decide(p, nBytes, java.util.Set.of());
        if (all.equals(d)) {
            return d;
        }
        java.util.Set<String> files = new java.util.LinkedHashSet<>();
        io.nccltuner.compile.MeasurementSet.NotOffered.of(logged, p.c(), p.nRanks(), p.nNodes())
                .forEach(t -> files.add(t.file()));
        return d + " (not " + all + ": bandwidth 0.0 in " + String.join(", ", files) + ")";
    }

    /**
     * What one shape's decisions are asked of: the engine opened for it, its communicator, the
     * off-heap cost table and channel count it writes, the collective and the shape.
     */
    private record Probe(
            Engine engine, long h, MemorySegment table, MemorySegment ch, Collective c, long nRanks, long nNodes) {}

    /**
     * The engine's decision at one size: "RING/LL", "RING/SIMPLE, 8 channels", "NCCL decides (...)";
     * without a logged table a pick NCCL may not offer gets the pick after it ("NVLS/SIMPLE (needs
     * NVSwitch), else RING/LL", "RING/LL128 (where NCCL offers LL128), else RING/SIMPLE").
     *
     * @param off what the logged table does not offer, or null without one (every entry {@link
     *     #offered} is then offered, and the picks that depend on hardware or on LL128 get an 'else')
     */
    private String decide(Probe p, long nBytes, java.util.Set<io.nccltuner.model.AlgoProto> off) {
        Collective c = p.c();
        MemorySegment table = p.table();
        List<Integer> disabled = new ArrayList<>();
        StringBuilder sb = new StringBuilder();
        while (true) {
            for (int a = 0; a < NUM_ALGO; a++) {
                for (int q = 0; q < NUM_PROTO; q++) {
                    int e = a * NUM_PROTO + q;
                    boolean on = offered(c, Algorithm.ofId(a), Protocol.ofId(q), p.nRanks(), p.nNodes())
                            && !disabled.contains(e)
                            && (off == null
                                    || !off.contains(
                                            new io.nccltuner.model.AlgoProto(Algorithm.ofId(a), Protocol.ofId(q))));
                    table.setAtIndex(JAVA_FLOAT, e, on ? 1f : -1f);
                }
            }
            p.ch().set(JAVA_INT, 0, 0);
            int code = p.engine()
                    .getCollInfo(p.h(), c.id(), nBytes, pipeOps.n, table, 0L, NUM_ALGO, NUM_PROTO, 0, p.ch(), 0L);
            int arm = Decision.arm(code);
            if (arm == Decision.ARM_UNRULED) {
                return sb.isEmpty() ? NCCL_DECIDES : sb.append("NCCL decides").toString();
            }
            if (arm == Decision.ARM_NOT_OFFERED) {
                return sb.append(
                                disabled.isEmpty()
                                        ? "NCCL decides (NCCL offers none of the rule's candidates)"
                                        : "NCCL decides")
                        .toString();
            }
            int e = Decision.candidate(code);
            Algorithm a = Algorithm.ofId(e / NUM_PROTO);
            sb.append(a).append('/').append(Protocol.ofId(e % NUM_PROTO));
            int channels = Decision.channels(code);
            if (channels != 0) {
                sb.append(", ").append(Main.count(channels, "channel"));
            }
            boolean hardware = a == Algorithm.NVLS
                    || a == Algorithm.NVLS_TREE
                    || a == Algorithm.COLLNET_DIRECT
                    || a == Algorithm.COLLNET_CHAIN;
            if (off != null || (!hardware && Protocol.ofId(e % NUM_PROTO) != Protocol.LL128)) {
                return sb.toString(); // a logged table says what NCCL offers
            }
            sb.append(
                            hardware
                                    ? " (needs " + (a.name().startsWith("NVLS") ? "NVSwitch" : "CollNet")
                                    : " (where NCCL offers LL128")
                    .append("), else ");
            disabled.add(e);
        }
    }

    /**
     * Whether NCCL may offer an algorithm/protocol for a collective and shape: what {@link
     * PolicyCheck#neverOffered} allows, PAT only with one rank per node (NCCL_PAT_ENABLE's default),
     * COLLNET and NVLS_TREE only across nodes (NCCL src/graph/tuning.cc, ncclTopoTuneModel).
     */
    static boolean offered(Collective c, Algorithm a, Protocol p, long nRanks, long nNodes) {
        if (PolicyCheck.neverOffered(c, a, p) != null) {
            return false;
        }
        if (a == Algorithm.PAT && nRanks != nNodes) {
            return false;
        }
        return nNodes > 1
                || (a != Algorithm.NVLS_TREE && a != Algorithm.COLLNET_CHAIN && a != Algorithm.COLLNET_DIRECT);
    }

    /**
     * Parses a count list: {@code 1,2,4..1024} (A..B: the powers of two from A up to B), each
     * count in ASCII digits ({@code ٢}, an Arabic-Indic two, is refused) and in 1..2^20.
     *
     * @param option the option's name for messages
     * @param text the list
     * @return the counts, in order, each at least 1
     * @throws InputException naming the part that does not parse
     */
    static List<Long> counts(String option, String text) throws InputException {
        final long maxCount = 1 << 20;
        List<Long> out = new ArrayList<>();
        for (String part : text.split(",")) {
            String s = part.strip();
            try {
                int dots = s.indexOf("..");
                if (dots < 0) {
                    out.add(AsciiNumbers.parseLong(s));
                } else {
                    long a = AsciiNumbers.parseLong(s.substring(0, dots).strip());
                    long b = AsciiNumbers.parseLong(s.substring(dots + 2).strip());
                    if (a < 1 || a > b) {
                        throw new UsageException(option + ": '" + s + "' needs 1 <= A <= B");
                    }
                    if (b > maxCount) { // v *= 2 below would overflow and never pass b
                        throw new UsageException(option + ": " + b + " is outside 1.." + maxCount);
                    }
                    for (long v = a; v <= b; v *= 2) {
                        out.add(v);
                    }
                }
            } catch (NumberFormatException e) {
                throw new UsageException(option + ": '" + s + "' is not a count or A..B" + AsciiNumbers.hint(s));
            }
        }
        for (long v : out) {
            if (v < 1 || v > maxCount) {
                throw new UsageException(option + ": " + v + " is outside 1.." + maxCount);
            }
        }
        return out;
    }
}
