package io.nccltuner.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The eighth newcomer walkthrough's frictions in show, replay, explain, import and calibrate:
 * {@code --gpu NAME} so that a profile compile matched on the GPU can be viewed offline (and the
 * advice naming it), show's {@code --nranks N}, calibrate's {@code --nodes}, replay's note that its
 * times are NCCL's model's, and a refused CSV's every line outside validate.
 */
class NewcomerEighthWalkShowTest {
    @TempDir
    Path tmp;

    /** A policy as compile writes it for mixed hardware: its one profile matched on the GPU. */
    static final String MIXED = "schema: nccl-tuner-java/v1\nname: mixed\nmode: enforce\nprofiles:\n"
            + "  - name: h200-2node\n    match: {nRanks: 2, nNodes: 2, gpu: NVIDIA H200}\n    rules:\n"
            + "      - collective: AllReduce\n        bytes: {from: 0 B, to: 1 MiB}\n"
            + "        candidates: [{algorithm: RING, protocol: SIMPLE}]\n";

    /** A CSV with three refused lines: 2 (algorithm), 3 (protocol), 4 (channels). */
    static final String BAD_CSV = "# three refused lines\n"
            + "allreduce,0,65535,rign,simple,-1,-1,-1\n"
            + "allreduce,65536,131071,ring,simpel,-1,-1,-1\n"
            + "allgather,0,65535,ring,ll,x,-1,-1\n";

    /** What show prints for {@link #MIXED} at nRanks=2 nNodes=2 with --gpu 'NVIDIA H200'. */
    static final String MIXED_AT_TWO_NODES = "nRanks=2 nNodes=2: profile h200-2node (profiles[0], 1 rule)\n"
            + "  collective  bytes         decision\n"
            + "  AllReduce   [0 B, 1 MiB)  RING/SIMPLE\n"
            + "  AllReduce   [1 MiB, inf)  NCCL decides\n"
            + "  Broadcast, Reduce, AllGather, ReduceScatter: NCCL decides at every size\n";

    private Path mixed() throws Exception {
        return CliRun.write(tmp, "mixed.yaml", MIXED);
    }

    /** The show output's lines from the first shape on (the header names the temporary file). */
    static String shapes(String out) {
        return out.substring(out.indexOf("\nnRanks=") + 1);
    }

    /** Item 1: without a GPU the profile is skipped and the advice names --gpu, not the shape given. */
    @Test
    void showAdvisesGpuForAProfileSkippedForTheUnknownGpu() throws Exception {
        CliRun r = CliRun.run("show", mixed().toString(), "--nodes", "2", "--ranks-per-node", "1");
        assertEquals(0, r.exit(), r.err());
        assertEquals("", r.err());
        assertEquals(
                "nRanks=2 nNodes=2: no profile matches; NCCL decides everything\n"
                        + "  profile h200-2node skipped: gpu 'NVIDIA H200' named but the GPU is unknown\n\n"
                        + "No shape shown matches a profile; the policy's profiles match: h200-2node (nRanks=2 nNodes=2:"
                        + " --gpu 'NVIDIA H200')\n" + ShowCommand.VIEW_EXIT + "\n",
                shapes(r.out()));
    }

    /** Item 1: show --gpu presents the GPU, so the gpu-matched profile's decisions are shown. */
    @Test
    void showGpuMatchesTheGpuProfile() throws Exception {
        CliRun r =
                CliRun.run("show", mixed().toString(), "--nodes", "2", "--ranks-per-node", "1", "--gpu", "NVIDIA H200");
        assertEquals(0, r.exit(), r.err());
        assertTrue(
                r.out()
                        .contains("\nGPU NVIDIA H200 (--gpu, cc 9.0): the profiles are matched with it, as the plugin"
                                + " learns it from the CUDA driver.\n"),
                r.out());
        assertEquals(MIXED_AT_TWO_NODES, shapes(r.out()));
        // another GPU: skipped, with the name that does not match
        CliRun a = CliRun.run(
                "show", mixed().toString(), "--nodes", "2", "--ranks-per-node", "1", "--gpu", "NVIDIA A100 80GB PCIe");
        assertEquals(0, a.exit(), a.err());
        assertEquals(
                "nRanks=2 nNodes=2: no profile matches; NCCL decides everything\n"
                        + "  profile h200-2node skipped: gpu 'NVIDIA A100 80GB PCIe' does not contain 'NVIDIA H200'\n\n"
                        + "No shape shown matches a profile; the policy's profiles match: h200-2node (nRanks=2"
                        + " nNodes=2)\n" + ShowCommand.VIEW_EXIT + "\n",
                shapes(a.out()));
    }

    /** Item 2: show --nranks N is the total ranks: the same as --ranks-per-node N / nNodes. */
    @Test
    void showNranksIsTheTotalRanks() throws Exception {
        Path p = mixed();
        CliRun n = CliRun.run("show", p.toString(), "--nranks", "2", "--nnodes", "2", "--gpu", "NVIDIA H200");
        CliRun r = CliRun.run("show", p.toString(), "--nodes", "2", "--ranks-per-node", "1", "--gpu", "NVIDIA H200");
        assertEquals(0, n.exit(), n.err());
        assertEquals(r.out(), n.out());
        assertTrue(n.out().contains("\nnRanks=2 nNodes=2: profile h200-2node (profiles[0], 1 rule)\n"), n.out());
        // without --nodes: the default node counts that divide it (1 and 2)
        CliRun d = CliRun.run("show", p.toString(), "--nranks", "2", "--collective", "AllReduce");
        assertEquals(0, d.exit(), d.err());
        assertTrue(d.out().contains("\nnRanks=2 nNodes=1: no profile matches; NCCL decides everything\n"), d.out());
        assertTrue(d.out().contains("\nnRanks=2 nNodes=2: no profile matches; NCCL decides everything\n"), d.out());
        assertFalse(d.out().contains("nNodes=4"), d.out());

        CliRun bad = CliRun.run("show", p.toString(), "--nranks", "3", "--nnodes", "2");
        assertEquals(2, bad.exit());
        assertEquals("", bad.out());
        assertEquals(
                "nccl-tuner show: --nranks 3 is not a multiple of --nnodes 2: every node has the same number of ranks"
                        + " (--ranks-per-node LIST gives them per node)\nsee 'nccl-tuner show --help'\n",
                bad.err());
        CliRun both = CliRun.run("show", p.toString(), "--nranks", "2", "--ranks-per-node", "1");
        assertEquals(2, both.exit());
        assertEquals(
                "nccl-tuner show: --nranks and --ranks-per-node: give one (--nranks N is N / nNodes ranks per node)\n"
                        + "see 'nccl-tuner show --help'\n",
                both.err());
    }

    /** Item 2: calibrate takes --nodes as well as --nnodes for the profile's nNodes range. */
    @Test
    void calibrateTakesNodes() throws Exception {
        Path out = tmp.resolve("cal.yaml");
        CliRun r = CliRun.run(
                "calibrate",
                CalibrateCommandTest.sweep("sweep-2nodes"),
                "-o",
                out.toString(),
                "--no-match-gpu",
                "--nodes",
                "2:4");
        assertEquals(0, r.exit(), r.out() + r.err());
        assertTrue(Files.readString(out).contains("nNodes: {min: 2, max: 4}"), Files.readString(out));
        CliRun bad = CliRun.run("calibrate", CalibrateCommandTest.sweep("sweep-2nodes"), "--nodes", "4:2");
        assertEquals(2, bad.exit());
        assertEquals(
                "nccl-tuner calibrate: --nnodes: '4:2' is not MIN:MAX, MIN: or any (1 <= MIN <= MAX)\n"
                        + "see 'nccl-tuner calibrate --help'\n",
                bad.err());
    }

    /** The replay command line on the captured 2-rank trace, then {@code more}. */
    private CliRun replay(String... more) throws Exception {
        List<String> a = new java.util.ArrayList<>(
                List.of("replay", "--trace", CliRun.trace("trace_tp_infer.csv"), "--policy", mixed().toString()));
        a.addAll(List.of(more));
        return CliRun.run(a.toArray(String[]::new));
    }

    private static final String MODEL_TIMES = "Times: NCCL's predicted microseconds for each pick, from the captured"
            + " cost tables (NCCL's cost model, not measurements: a policy compiled from measurements can look slower"
            + " under it; --measurements DIR_OR_FILE prices the picks with measured times).\n";

    /** Items 1 and 3: replay --gpu presents the GPU at every init; without --measurements the note. */
    @Test
    void replayGpuMatchesTheGpuProfileAndSaysTheTimesAreTheModels() throws Exception {
        CliRun g = replay("--gpu", "NVIDIA H200");
        assertEquals(0, g.exit(), g.err());
        assertTrue(
                g.out()
                        .contains("\nGPU NVIDIA H200 (--gpu, cc 9.0): every init presents it, as the plugin learns it"
                                + " from the CUDA driver.\n" + MODEL_TIMES),
                g.out());
        assertTrue(
                g.out()
                        .matches("(?s).*\nengine: INFO policy mixed profile h200-2node mode enforce rules 1 sha256"
                                + " [0-9a-f]{64} \\(nRanks=2 nNodes=2\\); tuner v5, NCCL 2\\.28\\.9, GPU NVIDIA H200"
                                + " \\(cc 9\\.0\\), nvlDomains unknown\n.*"),
                g.out());
        CliRun n = replay();
        assertEquals(0, n.exit(), n.err());
        assertTrue(
                n.out().contains(" --nccl-era)\n" + MODEL_TIMES + "\ncollective      size   nBytes  numPipeOps"),
                n.out());
        assertTrue(
                n.out()
                        .contains("\nengine: INFO policy mixed: no profile matches nRanks=2 nNodes=2; changing nothing"
                                + " for this communicator; tuner v5, NCCL 2.28.9, GPU unknown (cc unknown), nvlDomains"
                                + " unknown\n"),
                n.out());
        // with --measurements the times line says what is measured, and no note
        CliRun m =
                replay("--gpu", "NVIDIA H200", "--measurements", CliRun.fixture("h200-2rank-sweep_allreduce.rep1.csv"));
        assertEquals(0, m.exit(), m.err());
        assertFalse(m.out().contains("NCCL's cost model, not measurements"), m.out());
        assertTrue(
                m.out()
                        .contains("\nTimes: NCCL's predicted microseconds for each pick, from the captured cost tables;"
                                + " measured: median times from "),
                m.out());
    }

    /** Item 1: explain presents the GPU its log names, or --gpu's. */
    @Test
    void explainPresentsTheLogsGpuOrGpus() throws Exception {
        Path log = tmp.resolve("h200.log");
        Files.writeString(
                log,
                "#  Rank  0 Group  0 Pid  1 on host0 device  0 [0000:17:00] NVIDIA H200\n"
                        + Files.readString(CliRun.REPO.resolve("tests/traces/nccl_tp_infer.rank0.log")));
        CliRun r = CliRun.run("explain", "--log", log.toString(), "--sizes", "4KiB", "--policy", mixed().toString());
        assertEquals(0, r.exit(), r.err());
        assertTrue(
                r.out()
                        .contains("\nThe engine runs as NCCL 2.28.9 calls the tuner (the log's release): tuner v5,"
                                + " regBuff 0; GPU NVIDIA H200 (cc 9.0, the log's).\n"),
                r.out());
        assertTrue(
                r.out()
                        .matches("(?s).*\nengine: INFO policy mixed profile h200-2node mode enforce rules 1 sha256"
                                + " [0-9a-f]{64} \\(nRanks=2 nNodes=2\\); tuner v5, NCCL 2\\.28\\.9, GPU NVIDIA H200"
                                + " \\(cc 9\\.0\\), nvlDomains unknown\n.*"),
                r.out());
        CliRun a = CliRun.run(
                "explain",
                "--log",
                log.toString(),
                "--sizes",
                "4KiB",
                "--policy",
                mixed().toString(),
                "--gpu",
                "NVIDIA A100 80GB PCIe");
        assertEquals(0, a.exit(), a.err());
        assertTrue(
                a.out()
                        .contains("\nThe engine runs as NCCL 2.28.9 calls the tuner (the log's release): tuner v5,"
                                + " regBuff 0; GPU NVIDIA A100 80GB PCIe (cc 8.0, --gpu).\n"),
                a.out());
        CliRun u = CliRun.run(
                "explain",
                "--log",
                CliRun.REPO.resolve("tests/traces/nccl_tp_infer.rank0.log").toString(),
                "--sizes",
                "4KiB",
                "--policy",
                mixed().toString());
        assertEquals(0, u.exit(), u.err());
        assertTrue(
                u.out()
                        .contains("\nThe engine runs as NCCL 2.28.9 calls the tuner (the log's release): tuner v5,"
                                + " regBuff 0; GPU unknown (--gpu NAME presents one).\n"),
                u.out());
    }

    /** The message of a refused {@link #BAD_CSV}: every refused line, as validate lists them. */
    private static String refused(String command, Path bad) {
        return "nccl-tuner " + command + ": " + bad + ": NCCL example-tuner CSV: refused, 3 problems:\n"
                + "  " + bad + ":2: unknown algorithm 'rign' (NCCL's example plugin would silently use 'ring'); did you"
                + " mean 'ring'? use one of tree, ring, collnet_direct, collnet_chain, nvls, nvls_tree, pat\n"
                + "  " + bad + ":3: unknown protocol 'simpel' (NCCL's example plugin would silently use 'simple'); did"
                + " you mean 'simple'? use one of ll, ll128, simple\n"
                + "  " + bad + ":4: channels 'x' is not a whole number (NCCL's atoi would read it as whatever digits it"
                + " starts with)\n";
    }

    /** Item 4: show, replay, explain and import name every refused line of a CSV, exit 1. */
    @Test
    void everyCommandListsEveryRefusedCsvLine() throws Exception {
        Path bad = CliRun.write(tmp, "bad.conf", BAD_CSV);
        CliRun s = CliRun.run("show", bad.toString());
        assertEquals(1, s.exit());
        assertEquals("", s.out());
        assertEquals(refused("show", bad), s.err());
        CliRun r = CliRun.run("replay", "--trace", CliRun.trace("trace_tp_infer.csv"), "--policy", bad.toString());
        assertEquals(1, r.exit());
        assertEquals(refused("replay", bad), r.err());
        CliRun e = CliRun.run(
                "explain",
                "--log",
                CliRun.REPO.resolve("tests/traces/nccl_tp_infer.rank0.log").toString(),
                "--policy",
                bad.toString());
        assertEquals(1, e.exit());
        assertEquals(refused("explain", bad), e.err());
        CliRun i = CliRun.run("import", bad.toString());
        assertEquals(1, i.exit());
        assertEquals("", i.out());
        assertEquals(refused("import", bad), i.err());
        // one refused line: the one line, as before
        Path one = CliRun.write(tmp, "one.conf", "allreduce,0,65535,rign,simple,-1,-1,-1\n");
        CliRun o = CliRun.run("show", one.toString());
        assertEquals(1, o.exit());
        assertEquals(
                "nccl-tuner show: " + one + ":1: unknown algorithm 'rign' (NCCL's example plugin would silently use"
                        + " 'ring'); did you mean 'ring'? use one of tree, ring, collnet_direct, collnet_chain, nvls,"
                        + " nvls_tree, pat\n",
                o.err());
    }

    /** Item 4: validating a CSV says of a regBuff 1 line what validating its imported YAML says. */
    @Test
    void csvRegBuffWarningSaysTryReplayAndExplainToo() throws Exception {
        Path reg = CliRun.write(tmp, "reg.conf", "allreduce,0,65535,ring,ll,-1,-1,-1,-1,1\n");
        CliRun v = CliRun.run("validate", reg.toString());
        assertEquals(0, v.exit(), v.out() + v.err());
        assertTrue(
                v.out()
                        .contains("\n  warning: " + reg + ":1: regBuff 1: kept as regBuff true rules, which match from"
                                + " NCCL 2.24 (tuner v4); a v3 NCCL does not say whether a buffer is registered and they"
                                + " never match there, nor in try, replay or explain, which call with regBuff 0\n"),
                v.out());
        Path yaml = tmp.resolve("reg.yaml");
        CliRun i = CliRun.run("import", reg.toString(), "-o", yaml.toString());
        assertEquals(0, i.exit(), i.err());
        assertEquals(
                "warning: " + reg + ":1: regBuff 1: kept as regBuff true rules, which match from NCCL 2.24 (tuner v4);"
                        + " a v3 NCCL does not say whether a buffer is registered and they never match there, nor in"
                        + " try, replay or explain, which call with regBuff 0\n",
                i.err());
        CliRun y = CliRun.run("validate", yaml.toString());
        assertTrue(y.out().contains(", nor in try, replay or explain, which call with regBuff 0; "), y.out());
    }
}
