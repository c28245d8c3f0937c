package io.nccltuner.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Issue 21 item 6: {@code nccl-tuner show}, the decisions per job shape and size through the engine. */
class ShowCommandTest {
    @TempDir
    Path tmp;

    @Test
    void decisionsPerShapeAndSizeRange() {
        String f = CliRun.fixture("nvidia-boundaries.conf");
        CliRun r = CliRun.run("show", f, "--nodes", "1,2", "--ranks-per-node", "1,8");
        assertEquals(0, r.exit(), r.err());
        assertEquals(
                "policy nvidia-boundaries (" + f + ", NCCL example-tuner CSV, mode enforce in the file): the engine's "
                        + "decisions in enforce mode, numPipeOps 1, unregistered buffers\n"
                        + "NCCL's cost table: every algorithm/protocol NCCL can offer for the collective and shape; where NCCL lacks the "
                        + "hardware for a pick (NVLS: NVSwitch, COLLNET: CollNet) or does not offer LL128 (bandwidth 0.0 in its table, "
                        + "as over sockets), the pick after 'else' applies; --nccl-log LOG uses the table an NCCL log printed.\n"
                        + "\n"
                        + "nRanks=1 nNodes=1: one rank: NCCL does not call the tuner\n"
                        + "\n"
                        + "(3 shapes, the same) nRanks=2 nNodes=2, nRanks=8 nNodes=1, nRanks=16 nNodes=2: profile any (profiles[0], 3 rules)\n"
                        // line 8 (ReduceScatter TREE/SIMPLE, never offered) left out, as the plugin leaves it out
                        + "  collective  bytes            decision\n"
                        + "  AllGather   [0 B, inf)       NVLS/SIMPLE (needs NVSwitch), else NCCL decides\n"
                        + "  AllReduce   [0 B, 80 KiB)    RING/LL\n"
                        + "  AllReduce   [80 KiB, 4 GiB)  RING/SIMPLE\n"
                        + "  AllReduce   [4 GiB, inf)     NCCL decides\n"
                        + "  Broadcast, Reduce, ReduceScatter: NCCL decides at every size\n",
                r.out());
    }

    @Test
    void profilesPerShapeOverTheDefaultGrid() throws Exception {
        Path p = tmp.resolve("p.yaml");
        Files.writeString(p, """
        schema: nccl-tuner-java/v1
        name: two-shapes
        mode: enforce
        profiles:
          - name: one-node
            match: {nRanks: {min: 2, max: 8}, nNodes: 1}
            rules:
              - collective: AllReduce
                bytes: {from: 0 B, to: 64 KiB}
                candidates: [{algorithm: TREE, protocol: LL, channels: 4}, {algorithm: RING, protocol: LL}]
          - name: pat
            match: {nNodes: {min: 2, max: 64}}
            rules:
              - collective: AllGather
                bytes: {from: 1 MiB}
                candidates: [{algorithm: PAT, protocol: SIMPLE}, {algorithm: RING, protocol: SIMPLE}]
        """);
        CliRun r = CliRun.run("show", p.toString(), "--collective", "AllReduce");
        assertEquals(0, r.exit(), r.err());
        String o = r.out();
        assertTrue(
                o.contains("\nnRanks=8 nNodes=1: profile one-node (profiles[0], 1 rule)\n"
                        + "  collective  bytes          decision\n"
                        + "  AllReduce   [0 B, 64 KiB)  TREE/LL, 4 channels\n"
                        + "  AllReduce   [64 KiB, inf)  NCCL decides\n"),
                o);
        assertTrue(
                o.contains(
                        "\n(6 shapes, the same) nRanks=16 nNodes=2, nRanks=32 nNodes=4, nRanks=64 nNodes=8, nRanks=128 nNodes=16, nRanks=256 nNodes=32, nRanks=512 nNodes=64: profile pat "
                                + "(profiles[1], 1 rule)\n  AllReduce: NCCL decides at every size\n"),
                o);
        assertTrue(
                o.endsWith(
                        "\n(4 shapes, the same) nRanks=1024 nNodes=128, nRanks=2048 nNodes=256, nRanks=4096 nNodes=512, nRanks=8192 nNodes=1024: no profile "
                                + "matches; NCCL decides everything\n"),
                o);
        CliRun g = CliRun.run(
                "show", p.toString(), "--collective", "AllGather", "--nodes", "2", "--ranks-per-node", "1,8");
        assertTrue(
                g.out()
                        .contains("nRanks=2 nNodes=2: profile pat (profiles[1], 1 rule)\n"
                                + "  collective  bytes         decision\n  AllGather   [0 B, 1 MiB)  NCCL decides\n"
                                + "  AllGather   [1 MiB, inf)  PAT/SIMPLE\n"),
                g.out());
        assertTrue(
                g.out()
                        .contains("nRanks=16 nNodes=2: profile pat (profiles[1], 1 rule)\n"
                                + "  collective  bytes         decision\n  AllGather   [0 B, 1 MiB)  NCCL decides\n"
                                + "  AllGather   [1 MiB, inf)  RING/SIMPLE\n"),
                g.out());
    }

    @Test
    void aBadShapeListIsAUsageError() {
        CliRun r = CliRun.run("show", CliRun.fixture("nvidia-boundaries.conf"), "--nodes", "4..2");
        assertEquals(2, r.exit());
        assertEquals("nccl-tuner show: --nodes: '4..2' needs 1 <= A <= B\nsee 'nccl-tuner show --help'\n", r.err());
    }

    /**
     * A compiled 2-rank, 2-node policy: the default grid (x8 ranks per node) has no shape of it, so
     * its own profile's shape is added and named; rules the tables cannot show are counted; one
     * channel is "1 channel".
     */
    @Test
    void theDefaultGridAddsThePolicysOwnShapes() throws Exception {
        Path p = tmp.resolve("two-by-two.yaml");
        Files.writeString(p, """
        schema: nccl-tuner-java/v1
        name: two-by-two
        mode: enforce
        profiles:
          - name: nRanks2-nNodes2
            match: {nRanks: 2, nNodes: 2}
            rules:
              - collective: AllReduce
                bytes: {from: 4 B, to: 128 B}
                numPipeOps: 1
                candidates: [{algorithm: RING, protocol: SIMPLE, channels: 1}]
              - collective: AllReduce
                bytes: {from: 128 B, to: 1 MiB}
                numPipeOps: 2
                candidates: [{algorithm: RING, protocol: LL128}]
              - collective: AllReduce
                bytes: {from: 1 MiB}
                regBuff: true
                candidates: [{algorithm: RING, protocol: LL128}]
        """);
        CliRun r = CliRun.run("show", p.toString(), "--collective", "AllReduce");
        assertEquals(0, r.exit(), r.err());
        String o = r.out();
        assertTrue(
                o.contains(
                        "\nShapes: nNodes 1,2,4..1024 with 8 ranks per node, and the policy's profiles' nRanks=2 nNodes=2 "
                                + "(nRanks2-nNodes2)\nNot shown: 1 rule for numPipeOps other than 1 (--pipe-ops N shows them), 1 rule for "
                                + "registered buffers only (regBuff: true).\n"),
                o);
        assertTrue(
                o.endsWith("\nnRanks=2 nNodes=2: profile nRanks2-nNodes2 (profiles[0], 3 rules)\n"
                        + "  collective  bytes         decision\n"
                        + "  AllReduce   [0 B, 4 B)    NCCL decides\n"
                        + "  AllReduce   [4 B, 128 B)  RING/SIMPLE, 1 channel\n"
                        + "  AllReduce   [128 B, inf)  NCCL decides\n"),
                o);
        CliRun g = CliRun.run("show", p.toString(), "--collective", "AllReduce", "--nodes", "1..4");
        assertEquals(0, g.exit(), g.err());
        assertFalse(g.out().contains("Shapes:"), g.out());
        assertTrue(
                g.out()
                        .endsWith("\n\nNo shape shown matches a profile; the policy's profiles match: nRanks2-nNodes2 "
                                + "(nRanks=2 nNodes=2: --nodes 2 --ranks-per-node 1)\n" + ShowCommand.VIEW_EXIT + "\n"),
                g.out());
    }
    /**
     * Issue 21 (third walk), item 2: show printed {@code [128 B, 256 B) RING/LL128} for a rule whose
     * first candidate NCCL's log never offers. Without a log the row says LL128 runs only where NCCL
     * offers it, and what runs else; with the log's table (RING/LL128 at bandwidth 0.0) it says what
     * runs, and which candidate is passed over.
     */
    @Test
    void whichCandidateRunsWhereNcclOffersNoLl128() throws Exception {
        Path p = tmp.resolve("ll128.yaml");
        Files.writeString(p, """
        {schema: nccl-tuner-java/v1, name: ll128, mode: enforce, profiles: [{name: two-ranks, match: {nRanks: 2, nNodes: 2},
          rules: [{collective: AllReduce, bytes: {from: 128 B, to: 256 B},
            candidates: [{algorithm: RING, protocol: LL128}, {algorithm: RING, protocol: SIMPLE}]}]}]}
        """);
        String log = CliRun.trace("nccl_sweep.rank0.log");
        String[] shape = {"--collective", "AllReduce", "--nodes", "2", "--ranks-per-node", "1"};
        CliRun plain = CliRun.run(java.util.stream.Stream.concat(
                        java.util.stream.Stream.of("show", p.toString()), java.util.Arrays.stream(shape))
                .toArray(String[]::new));
        assertEquals(0, plain.exit(), plain.err());
        assertTrue(
                plain.out()
                        .contains(
                                "  AllReduce   [128 B, 256 B)  RING/LL128 (where NCCL offers LL128), else RING/SIMPLE\n"),
                plain.out());
        CliRun logged = CliRun.run(java.util.stream.Stream.concat(
                        java.util.stream.Stream.of("show", p.toString(), "--nccl-log", log),
                        java.util.Arrays.stream(shape))
                .toArray(String[]::new));
        assertEquals(0, logged.exit(), logged.err());
        assertTrue(
                logged.out()
                        .contains(
                                "\nNCCL's cost table: at nRanks=2 nNodes=2 the one " + log + " printed (bandwidth 0.0: "
                                        + "not offered); elsewhere every algorithm/protocol NCCL can offer"),
                logged.out());
        assertTrue(
                logged.out()
                        .contains("  AllReduce   [128 B, 256 B)  RING/SIMPLE (not RING/LL128: bandwidth 0.0 in " + log
                                + ")\n"),
                logged.out());
    }

    /**
     * Issue 21 (second walk), item 8: one form for a shape. Before, show wrote the two-rank, two-node
     * shape as "nNodes x ranks per node 2x1" and report wrote it "2x2" (nRanks x nNodes); both now
     * write nRanks=2 nNodes=2, the values NCCL's tuner init gets, in that order.
     */
    @Test
    void showAndReportWriteAShapeTheSameWay() {
        CliRun show = CliRun.run(
                "show",
                Path.of(System.getProperty("nccltj.repo", ".."))
                        .resolve("policies/h200-2rank.yaml")
                        .toString(),
                "--collective",
                "AllReduce");
        assertEquals(0, show.exit(), show.err());
        assertTrue(
                show.out().contains("\nnRanks=2 nNodes=2: profile two-ranks-socket (profiles[0], 3 rules)\n"),
                show.out());
        CliRun report = CliRun.run("report", ReportCommandTest.res("rank-a.jsonl"));
        assertEquals(0, report.exit(), report.err());
        assertTrue(report.out().contains("\nnRanks=2 nNodes=2  AllReduce   [4 B, 5 B)"), report.out());
        for (String o : new String[] {show.out(), report.out()}) {
            assertFalse(o.matches("(?s).*\\b\\d+x\\d+\\b.*"), "no AxB shape: " + o);
        }
    }
}
