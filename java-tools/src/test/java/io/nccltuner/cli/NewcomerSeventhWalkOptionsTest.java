package io.nccltuner.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The seventh newcomer walk: option names, validate of a CSV, try's verdicts and labels, messages. */
class NewcomerSeventhWalkOptionsTest {
    @TempDir
    Path tmp;

    static final Path REPO = Path.of(System.getProperty("nccltj.repo", ".."));
    static final String POLICY = REPO.resolve("policies/h200-2rank.yaml").toString();

    /** Item 1: validate, try, replay and explain take --nodes/--ranks as compile does; show takes --nnodes. */
    @Test
    void nodesAndRanksAreAliasesAndAMistypedOptionGetsADidYouMean() {
        CliRun v = CliRun.run("validate", POLICY, "--nodes", "2", "--ranks", "2");
        CliRun vn = CliRun.run("validate", POLICY, "--nnodes", "2", "--nranks", "2");
        assertEquals(0, v.exit(), v.out() + v.err());
        assertEquals(vn.out(), v.out());
        assertTrue(v.out().contains("\nnRanks=2 nNodes=2: profile two-ranks-socket (profiles[0], 3 rules)\n"), v.out());
        for (String cmd : new String[] {"validate", "try", "replay", "explain"}) {
            String help = CliRun.run(cmd, "--help").out();
            assertTrue(help.contains("--ranks, --nranks="), cmd + ": " + help);
            assertTrue(help.contains("--nodes, --nnodes="), cmd + ": " + help);
        }
        assertTrue(CliRun.run("show", "--help").out().contains("--nodes, --nnodes=LIST"));
        CliRun show = CliRun.run("show", POLICY, "--nnodes", "2", "--ranks-per-node", "1");
        assertEquals(
                CliRun.run("show", POLICY, "--nodes", "2", "--ranks-per-node", "1")
                        .out(),
                show.out());
        CliRun typo = CliRun.run("validate", POLICY, "--nodez", "2");
        assertEquals(2, typo.exit());
        assertEquals(
                "nccl-tuner validate: Unknown options: '--nodez', '2'; did you mean --nodes?\n"
                        + "see 'nccl-tuner validate --help'\n",
                typo.err());
    }

    /** Item 2: every refused line of a CSV, file:line each, in the YAML path's layout. */
    @Test
    void validateOfACsvListsEveryBadLine() throws Exception {
        Path bad = Files.writeString(
                tmp.resolve("nccl_tuner.conf"),
                "allreduce,0,65535,rnig,ll,-1,-1,-1\nallreduce,65536,-1,tree,lll,-1,-1,-1\n"
                        + "allgather,0,-1,ring,simple,-1,-1,-1\nbogus,0,-1,ring,ll,-1,-1,-1\n");
        CliRun r = CliRun.run("validate", bad.toString());
        assertEquals(1, r.exit());
        assertEquals(
                bad + ": NCCL example-tuner CSV: refused, 3 problems:\n"
                        + "  " + bad + ":1: unknown algorithm 'rnig' (NCCL's example plugin would silently use 'ring');"
                        + " did you mean 'ring'? use one of tree, ring, collnet_direct, collnet_chain, nvls, nvls_tree, pat\n"
                        + "  " + bad + ":2: unknown protocol 'lll' (NCCL's example plugin would silently use 'simple');"
                        + " did you mean 'll'? use one of ll, ll128, simple\n"
                        + "  " + bad + ":4: unknown collective 'bogus' (NCCL's example plugin would silently use"
                        + " 'allreduce'); use one of broadcast, reduce, allgather, reducescatter, allreduce\n"
                        + "result: FAILED (the plugin would change nothing and log the first of these lines)\n",
                r.out());
    }

    /** Item 3: try exits 1 where no profile matches, as validate; its advice and harness line fit. */
    @Test
    void tryAgreesWithValidateAndSaysWhatFits() {
        assertEquals(
                Main.EXIT_INPUT,
                TryCommand.exitCode(
                        Main.EXIT_OK,
                        "try: the policy changes nothing: no profile matches nRanks=2 nNodes=2 (the traces' shape); x"));
        assertEquals(Main.EXIT_OK, TryCommand.exitCode(Main.EXIT_OK, "try: the policy would change 3 of 9 calls"));
        assertEquals(Main.EXIT_CHECK, TryCommand.exitCode(Main.EXIT_CHECK, "try: the policy changes nothing: no x"));
        CliRun v = CliRun.run("validate", POLICY, "--nranks", "8", "--nnodes", "1");
        assertEquals(Main.EXIT_INPUT, v.exit(), "validate exits 1 for the same shape");
        assertEquals("run it with NCCL_TUNER_JAVA_MODE=shadow in the job next", TryCommand.next(65, "p.yaml"));
        assertEquals(
                "the policy changes nothing for these traces; check the shapes and sizes it covers with"
                        + " `nccl-tuner show p.yaml`",
                TryCommand.next(0, "p.yaml"));
        assertEquals(
                "harness: calls=273 changed=0 warn=0 us_per_call=1.000 plugin=java (in shadow mode the plugin"
                        + " changed 0: it only logs)",
                TryCommand.relayed("harness: calls=273 changed=0 warn=0 us_per_call=1.000 plugin=java", "shadow"));
        assertEquals(
                "harness: calls=273 changed=257 warn=0 us_per_call=1.000 plugin=java",
                TryCommand.relayed("harness: calls=273 changed=257 warn=0 us_per_call=1.000 plugin=java", "enforce"));
        assertTrue(CliRun.run("try", "--help").out().contains("Exits 1 where no profile"));
    }

    /** Item 4: the RUBIN warning names docs/abi-versions.md's releases, singular for one constant. */
    @Test
    void rubinWarningMatchesTheDocs() throws Exception {
        String yaml = """
                schema: nccl-tuner-java/v1
                name: rubin
                mode: enforce
                profiles:
                  - name: all
                    match: {nRanks: any, nNodes: any}
                    constants:
                      llMaxBws.RUBIN.2NODES: 100
                %s
                    rules:
                      - collective: AllReduce
                        bytes: {from: 0 B, to: 64 KiB}
                        candidates:
                          - {algorithm: RING, protocol: LL}
                """;
        Path one = Files.writeString(tmp.resolve("one.yaml"), yaml.formatted(""));
        CliRun v = CliRun.run("validate", one.toString());
        assertEquals(0, v.exit(), v.out() + v.err());
        assertTrue(
                v.out()
                        .contains("\nwarning: " + one
                                + ":5:5: profiles[0] (all).constants: 1 RUBIN constant (llMaxBws.RUBIN.2NODES)"
                                + " takes effect only with NCCL >= 2.32.6 (tuner v7, whose constants have the RUBIN"
                                + " row); under tuner v5/v6 (NCCL 2.28 .. 2.32.5) the plugin does not set it\n"),
                v.out());
        Path two = Files.writeString(tmp.resolve("two.yaml"), yaml.formatted("      llMaxBws.RUBIN.1NODE: 90"));
        CliRun v2 = CliRun.run("validate", two.toString());
        assertTrue(
                v2.out()
                        .contains(" take effect only with NCCL >= 2.32.6 (tuner v7, whose constants have the RUBIN"
                                + " row); under tuner v5/v6 (NCCL 2.28 .. 2.32.5) the plugin does not set them\n"),
                v2.out());
    }

    /** Item 5: a value beyond an int gets the option's own range. */
    @Test
    void sweepOverflowGivesTheOptionsRange() {
        CliRun r = CliRun.run(
                "sweep",
                "-n",
                "99999999999",
                "-o",
                tmp.resolve("s").toString(),
                "--algorithms",
                "RING",
                "--protocols",
                "LL");
        assertEquals(2, r.exit());
        assertEquals(
                "nccl-tuner sweep: -n/--iters: 99999999999 is outside 1..1000000\nsee 'nccl-tuner sweep --help'\n",
                r.err());
    }

    /** Item 6: explain derives the compute capability from the GPU name the log prints. */
    @Test
    void explainDerivesTheComputeCapabilityFromTheGpuName() throws Exception {
        Path log = tmp.resolve("a100.log");
        Files.writeString(
                log,
                "#  Rank  0 Group  0 Pid   100 on      n1 device  0 [0x18] NVIDIA A100 80GB PCIe\n"
                        + Files.readString(Path.of(CliRun.trace("nccl_sweep.rank0.log"))));
        CliRun e = CliRun.run("explain", "--log", log.toString(), "--sizes", "1MiB");
        assertEquals(0, e.exit(), e.err());
        assertTrue(
                e.out()
                        .contains("\nNCCL 2.28.9, nRanks=2 nNodes=2, nChannels 2, compute capability 80 (from the log's"
                                + " GPU NVIDIA A100 80GB PCIe)\n"),
                e.out());
        CliRun given = CliRun.run("explain", "--log", log.toString(), "--sizes", "1MiB", "--compute-capability", "9.0");
        assertTrue(given.out().contains(", compute capability 90\n"), given.out());
    }

    /** Item 7: a rank whose rule hit found no candidate offered is named so, not "no rule hit". */
    @Test
    void reportNamesARuleHitWhoseCandidateWasNotOffered() throws Exception {
        Path x = Path.of(ReportCommandTest.res("diverge-x.jsonl"));
        Path y = tmp.resolve("diverge-y.jsonl");
        Files.writeString(
                y,
                Files.readString(Path.of(ReportCommandTest.res("diverge-y.jsonl")))
                        .replace("\"ruleHits\":20", "\"ruleHits\":30"));
        CliRun r = CliRun.run("report", x.toString(), y.toString());
        assertEquals(Main.EXIT_CHECK, r.exit(), r.out());
        assertTrue(
                r.out()
                        .contains(
                                "  nRanks=2 nNodes=2 AllReduce 4 B (NCCL RING/LL): ranks decide differently (hang risk):"
                                        + " x:11 -> RING/SIMPLE; y:12 -> rule hit, candidate not offered (NCCL's own pick"
                                        + " RING/LL)\n"),
                r.out());
    }

    /** Item 8: the plugin's constants line through try says what the harness's values start from. */
    @Test
    void constantsLineSaysWhatTheHarnessStartsFrom() {
        assertEquals(
                "INFO TUNER/Java: profile p: set 1 constant: llMaxBws.HOPPER.1NODE 0.0 -> 150.0 GB/s (before: the"
                        + " harness's constants, NCCL 2.30.7's baseLatencies and 0 for every other constant; a job's"
                        + " NCCL starts from its own, not known here)",
                TryCommand.relayed(
                        "INFO TUNER/Java: profile p: set 1 constant: llMaxBws.HOPPER.1NODE 0.0 -> 150.0 GB/s",
                        "shadow"));
    }
}
