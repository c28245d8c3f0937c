package io.nccltuner.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Issue 21 item 6: {@code nccl-tuner show}, the decisions per job shape and size through the engine. */
class ShowCommandTest {
  @TempDir Path tmp;

  @Test
  void decisionsPerShapeAndSizeRange() {
    String f = CliRun.fixture("nvidia-boundaries.conf");
    CliRun r = CliRun.run("show", f, "--nodes", "1,2", "--ranks-per-node", "1,8");
    assertEquals(0, r.exit(), r.err());
    assertEquals("policy nvidia-boundaries (" + f + ", NCCL example-tuner CSV, mode enforce in the file): the engine's "
        + "decisions in enforce mode, numPipeOps 1, unregistered buffers\n"
        + "NCCL's cost table: every algorithm/protocol NCCL can offer for the collective and shape; where NCCL lacks the "
        + "hardware for a pick (NVLS: NVSwitch, COLLNET: CollNet), the pick after 'else' applies.\n"
        + "\n"
        + "nNodes x ranks per node 1x1: one rank: NCCL does not call the tuner\n"
        + "\n"
        + "nNodes x ranks per node (3 shapes, the same) 2x1, 1x8, 2x8: profile any (profiles[0], 4 rules)\n"
        + "  collective     bytes            decision\n"
        + "  AllGather      [0 B, inf)       NVLS/SIMPLE (needs NVSwitch), else NCCL decides\n"
        + "  ReduceScatter  [0 B, inf)       NCCL decides (NCCL offers none of the rule's candidates)\n"
        + "  AllReduce      [0 B, 80 KiB)    RING/LL\n"
        + "  AllReduce      [80 KiB, 4 GiB)  RING/SIMPLE\n"
        + "  AllReduce      [4 GiB, inf)     NCCL decides\n"
        + "  Broadcast, Reduce: NCCL decides at every size\n", r.out());
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
    assertTrue(o.contains("\nnNodes x ranks per node 1x8: profile one-node (profiles[0], 1 rule)\n"
        + "  collective  bytes          decision\n"
        + "  AllReduce   [0 B, 64 KiB)  TREE/LL, 4 channels\n"
        + "  AllReduce   [64 KiB, inf)  NCCL decides\n"), o);
    assertTrue(o.contains("\nnNodes x ranks per node (6 shapes, the same) 2x8, 4x8, 8x8, 16x8, 32x8, 64x8: profile pat "
        + "(profiles[1], 1 rule)\n  AllReduce: NCCL decides at every size\n"), o);
    assertTrue(o.endsWith("\nnNodes x ranks per node (4 shapes, the same) 128x8, 256x8, 512x8, 1024x8: no profile "
        + "matches; NCCL decides everything\n"), o);
    CliRun g = CliRun.run("show", p.toString(), "--collective", "AllGather", "--nodes", "2", "--ranks-per-node", "1,8");
    assertTrue(g.out().contains("nNodes x ranks per node 2x1: profile pat (profiles[1], 1 rule)\n"
        + "  collective  bytes         decision\n  AllGather   [0 B, 1 MiB)  NCCL decides\n"
        + "  AllGather   [1 MiB, inf)  PAT/SIMPLE\n"), g.out());
    assertTrue(g.out().contains("nNodes x ranks per node 2x8: profile pat (profiles[1], 1 rule)\n"
        + "  collective  bytes         decision\n  AllGather   [0 B, 1 MiB)  NCCL decides\n"
        + "  AllGather   [1 MiB, inf)  RING/SIMPLE\n"), g.out());
  }

  @Test
  void aBadShapeListExitsOne() {
    CliRun r = CliRun.run("show", CliRun.fixture("nvidia-boundaries.conf"), "--nodes", "4..2");
    assertEquals(1, r.exit());
    assertEquals("nccl-tuner show: --nodes: '4..2' needs 1 <= A <= B\n", r.err());
  }
}
