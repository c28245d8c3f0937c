package io.nccltuner.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nccltuner.policy.Policy;
import io.nccltuner.policy.PolicyLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The newcomer's compile/validate findings: an input naming no machine next to one that does, and
 * profiles that differ only in their hardware match.
 */
@Timeout(60)
class NewcomerCompileTest {
  @TempDir Path tmp;

  @Test
  void aSignaturelessInputNextToANamedMachineCompilesToALoadablePolicy() throws Exception {
    String gb = CliRun.fixture("gb300-nvl72-8ranks-2hosts_all_reduce.txt");
    String csv = CliRun.fixture("no-machine-8ranks-2hosts_allreduce.csv");
    Path yaml = tmp.resolve("pooled.yaml");
    CliRun r = CliRun.run("compile", gb, csv, "-o", yaml.toString(), "--summary");
    assertEquals(0, r.exit(), r.out() + r.err());
    assertTrue(r.out().contains("  inputs: AllReduce at nRanks 8, nNodes 2 was measured on 2 machines (NVIDIA GB300, "
        + "NCCL 2.27.3: " + gb + "; machine not printed: " + csv + "): compiled separately, not pooled as replicates; "
        + "each profile matches its gpu (and ncclVersion); the inputs that name no machine make a profile for any "
        + "machine, placed after the named machines' profiles\n"), r.out());
    assertTrue(r.out().contains("policy: " + yaml + " (2 rules)\n"), r.out());
    Policy p = PolicyLoader.load(yaml);
    assertEquals(2, p.profiles().size());
    assertEquals("nRanks8-nNodes2-GB300-nccl2.27.3", p.profiles().get(0).name());
    assertEquals(1, p.profiles().get(0).rules().size());
    assertEquals("LL128", p.profiles().get(0).rules().getFirst().candidates().getFirst().protocol().name());
    assertEquals("nRanks8-nNodes2", p.profiles().get(1).name());
    assertEquals("SIMPLE", p.profiles().get(1).rules().getFirst().candidates().getFirst().protocol().name());

    CliRun v = CliRun.run("validate", yaml.toString(), "--nranks", "8", "--nnodes", "2");
    assertEquals(0, v.exit(), v.out());
    assertTrue(v.out().contains("nRanks=8 nNodes=2: profile nRanks8-nNodes2-GB300-nccl2.27.3 (profiles[0], 1 rule) on "
        + "gpu \"NVIDIA GB300\", ncclVersion 2.27.3; any other machine: profile nRanks8-nNodes2 (profiles[1], 1 rule)\n"),
        v.out());
    assertTrue(v.out().contains("result: OK (0 errors, 0 warnings)"), v.out());
  }

  static final String TWO_MACHINES = """
      schema: nccl-tuner-java/v1
      name: pooled2
      profiles:
        - name: a100
          match: {nRanks: 2, nNodes: 2, gpu: "NVIDIA A100-SXM4-80GB", ncclVersion: "2.28.9"}
          rules:
            - collective: AllReduce
              bytes: {from: 0 B}
              candidates:
                - {algorithm: RING, protocol: LL}
        - name: h200
          match: {nRanks: 2, nNodes: 2, gpu: "NVIDIA H200", ncclVersion: "2.28.9"}
          rules:
            - collective: AllReduce
              bytes: {from: 0 B}
              candidates:
                - {algorithm: TREE, protocol: LL}
      """;

  @Test
  void profilesOfDifferentMachinesDoNotShadowEachOther() throws Exception {
    Path f = tmp.resolve("pooled2.yaml");
    Files.writeString(f, TWO_MACHINES);
    CliRun r = CliRun.run("validate", f.toString(), "--nranks", "2", "--nnodes", "2");
    assertEquals(0, r.exit(), r.out());
    assertTrue(r.out().contains("  profiles[0] a100: nRanks 2, nNodes 2, needs gpu \"NVIDIA A100-SXM4-80GB\", "
        + "ncclVersion 2.28.9, 1 rule, sha256 "), r.out());
    assertTrue(r.out().contains("nRanks=2 nNodes=2: profile a100 (profiles[0], 1 rule) on gpu \"NVIDIA A100-SXM4-80GB\", "
        + "ncclVersion 2.28.9; else profile h200 (profiles[1], 1 rule) on gpu \"NVIDIA H200\", ncclVersion 2.28.9; "
        + "any other machine: no profile, the plugin changes nothing there\n"), r.out());
    assertTrue(r.out().contains("result: OK (0 errors, 0 warnings)\n"), r.out());
  }

  @Test
  void aWiderHardwareMatchFirstStillShadows() throws Exception {
    Path f = tmp.resolve("wide.yaml");
    Files.writeString(f, TWO_MACHINES.replace("gpu: \"NVIDIA A100-SXM4-80GB\", ncclVersion: \"2.28.9\"", "gpu: \"H200\""));
    CliRun r = CliRun.run("validate", f.toString());
    assertEquals(1, r.exit(), r.out());
    assertTrue(r.out().contains("error: profiles[1] (h200): can never match: profiles[0] (a100) comes first and matches "
        + "every shape it matches (the first matching profile is used)\n"), r.out());
  }
}
