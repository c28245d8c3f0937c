package io.nccltuner.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nccltuner.calibrate.Topology;
import io.nccltuner.policy.Collective;
import io.nccltuner.policy.InputException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Model.ArgSpec;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;

/**
 * Issue 22: an option several commands take with one meaning is declared once ({@link
 * SharedOptions}, {@link ModelInputOptions}) and reads the same in each command; one that means
 * something else per command is named here, so that a copied declaration is a choice.
 */
class SharedOptionsTest {
    /**
     * The options, by longest name, that a command declares itself although another command has
     * the name too: each means something else there (SharedOptions' class comment says what).
     */
    static final Set<String> OWN_MEANING = Set.of(
            "--channels",
            "--check",
            "--collective",
            "--gpu",
            "--html",
            "--measurements",
            "--mode",
            "--name",
            "--nccl-era",
            "--nccl-log",
            "--nnodes",
            "--nranks",
            "--output",
            "--plugin",
            "--policy",
            "--topology",
            "--trace");

    private static Map<String, CommandLine> commands() {
        Map<String, CommandLine> m = new TreeMap<>(Main.commandLine().getSubcommands());
        m.remove("help");
        return m;
    }

    /** How an option reads in help: names, label, default and description. */
    private static String reads(ArgSpec a) {
        String names = a instanceof OptionSpec o ? String.join(", ", o.names()) : "POSITIONAL";
        return names + " " + a.paramLabel() + " default=" + a.defaultValue() + ": " + String.join(" ", a.description());
    }

    /** The commands that mix {@code mixin} in, and how its options read in each. */
    private static Map<String, List<String>> readsIn(Object mixin) {
        CommandSpec own = CommandSpec.forAnnotatedObject(mixin);
        Map<String, List<String>> out = new TreeMap<>();
        commands().forEach((name, cl) -> {
            for (CommandSpec m : cl.getCommandSpec().mixins().values()) {
                if (m.userObject().getClass() == mixin.getClass()) {
                    List<String> r = new ArrayList<>();
                    m.args().forEach(a -> r.add(reads(a)));
                    out.put(name, r);
                }
            }
        });
        List<String> expected = new ArrayList<>();
        own.args().forEach(a -> expected.add(reads(a)));
        out.values().forEach(r -> assertEquals(expected, r, mixin.getClass().getSimpleName()));
        return out;
    }

    @Test
    void eachSharedOptionReadsTheSameInEveryCommandThatHasIt() {
        Map<String, List<String>> pipe = readsIn(new SharedOptions.PipeOps());
        assertEquals(Set.of("explain", "show"), pipe.keySet());
        assertEquals(List.of("--pipe-ops N default=1: numPipeOps (default 1)"), pipe.get("show"));

        Map<String, List<String>> name = readsIn(new SharedOptions.PolicyName());
        assertEquals(Set.of("compile", "calibrate"), name.keySet());
        assertEquals(
                List.of("--name NAME default=null: Policy name (default: the output file name)."), name.get("compile"));

        Map<String, List<String>> policy = readsIn(new SharedOptions.PolicyArgument());
        assertEquals(Set.of("show", "validate"), policy.keySet());
        assertEquals(
                List.of("POSITIONAL POLICY default=null: policy YAML, or NCCL's example-tuner CSV (nccl_tuner.conf)"),
                policy.get("validate"));

        Map<String, List<String>> html = readsIn(new SharedOptions.ReportHtml());
        assertEquals(Set.of("report", "try"), html.keySet());
        assertEquals(List.of("--html FILE default=null: also write the report as an HTML page"), html.get("try"));

        Map<String, List<String>> model = readsIn(new ModelInputOptions());
        assertEquals(Set.of("calibrate", "explain", "show"), model.keySet());
        assertTrue(model.get("explain").get(1).startsWith("--cpu VENDOR default=auto: CPU vendor, intel, amd or auto"));
    }

    /**
     * An option name in several commands that a command declares itself is one of {@link
     * #OWN_MEANING}, and there reads otherwise than in every other command (the same reading
     * would be a copy: make it a mixin).
     */
    @Test
    void anOptionInSeveralCommandsIsSharedOrHasItsOwnMeaningInEach() {
        record Use(String command, String reading, boolean declaredThere) {}
        Map<String, List<Use>> uses = new TreeMap<>();
        commands().forEach((cmd, cl) -> {
            CommandSpec spec = cl.getCommandSpec();
            Set<OptionSpec> fromMixins = new HashSet<>();
            spec.mixins().values().forEach(m -> fromMixins.addAll(m.options()));
            for (OptionSpec o : spec.options()) {
                boolean there =
                        fromMixins.stream().noneMatch(m -> m.longestName().equals(o.longestName()));
                uses.computeIfAbsent(o.longestName(), k -> new ArrayList<>()).add(new Use(cmd, reads(o), there));
            }
        });
        Set<String> own = new TreeSet<>();
        uses.forEach((option, us) -> {
            if (us.size() < 2) {
                return;
            }
            for (Use u : us) {
                if (!u.declaredThere()) {
                    continue;
                }
                own.add(option);
                for (Use v : us) {
                    if (v != u) {
                        assertNotEquals(
                                u.reading(),
                                v.reading(),
                                option + " of " + u.command() + " reads as " + v.command() + "'s: make it a mixin");
                    }
                }
            }
        });
        assertEquals(new TreeSet<>(OWN_MEANING), own);
    }

    @Test
    void pipeOpsBelowOneIsRefusedAlikeByEveryCommand() {
        for (String[] args : List.of(
                new String[] {"explain", "--log", "/nonexistent/nccl.log", "--pipe-ops", "0"},
                new String[] {"explain", "--topology", "/nonexistent/sweep", "--pipe-ops", "0"},
                new String[] {"show", "/nonexistent/policy.yaml", "--pipe-ops", "0"})) {
            CliRun r = CliRun.run(args);
            assertEquals(2, r.exit(), r.err()); // a usage error, as picocli's own
            assertEquals(
                    "nccl-tuner " + args[0] + ": --pipe-ops: must be at least 1, got 0\nsee 'nccl-tuner " + args[0]
                            + " --help'\n",
                    r.err());
        }
    }

    @Test
    void aCollectiveOrAllIsParsedAlikeByShowAndExplainTopology() throws InputException {
        assertEquals(
                List.of(
                        Collective.Broadcast,
                        Collective.Reduce,
                        Collective.AllGather,
                        Collective.ReduceScatter,
                        Collective.AllReduce),
                ToolCommand.parseCollectives("ALL"));
        assertEquals(List.of(Collective.ReduceScatter), ToolCommand.parseCollectives("ReduceScatter"));
        for (String[] args : List.of(
                new String[] {"explain", "--topology", "/nonexistent/sweep", "--collective", "AllToAll"},
                new String[] {"show", "/nonexistent/policy.yaml", "--collective", "AllToAll"})) {
            CliRun r = CliRun.run(args);
            assertEquals(2, r.exit(), r.err());
            assertEquals(
                    "nccl-tuner " + args[0] + ": --collective: unknown collective 'AllToAll'\nsee 'nccl-tuner "
                            + args[0] + " --help'\n",
                    r.err());
        }
    }

    @Test
    void policyNameIsNameElseTheOutputFileElseTheFallback() throws Exception {
        SharedOptions.PolicyName n = new SharedOptions.PolicyName();
        assertEquals("h100-ring", n.or(Path.of("out/h100-ring.yaml"), "compiled"));
        assertEquals("a100", n.or(Path.of("a100.yml"), "compiled"));
        assertEquals("policy.json", n.or(Path.of("policy.json"), "compiled"));
        assertEquals("calibrated", n.or(null, "calibrated"));
        new CommandLine(n).parseArgs("--name", "tree-ll");
        assertEquals("tree-ll", n.or(Path.of("out/h100-ring.yaml"), "compiled"));
    }

    @Test
    void topologyShapeAsCalibrateAndExplainPrintIt() {
        assertEquals(
                "32 ranks on 4 nodes, cc 9.0, Intel CPU",
                TopologyInputs.shape(new Topology(32, 4, 90, false, 16, null, null)));
        assertEquals(
                "16 ranks on 2 nodes, cc 10.0, AMD CPU",
                TopologyInputs.shape(new Topology(16, 2, 100, true, 32, null, null)));
    }
}
