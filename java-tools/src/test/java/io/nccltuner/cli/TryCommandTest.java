package io.nccltuner.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code nccl-tuner try}: the build tree's harness and plugin (make build) replay a captured trace
 * in shadow mode; the plugin's lines, the report of its decision logs and the verdict. Skipped
 * where the build tree has no harness or plugin (DistIT tries the distribution's).
 */
@Timeout(240)
class TryCommandTest {
  @TempDir Path tmp;

  static final Path REPO = Path.of(System.getProperty("nccltj.repo", ".."));
  static final Path HARNESS = REPO.resolve("build/tests/harness");
  static final Path PLUGIN = REPO.resolve("build/lib/libnccl-tuner-java.so");

  private static CliRun tryRun(String... more) {
    Assumptions.assumeTrue(Files.isExecutable(HARNESS) && Files.isRegularFile(PLUGIN), "make build first");
    String[] base = {"try", "--harness", HARNESS.toString(), "--plugin", PLUGIN.toString()};
    String[] args = new String[base.length + more.length];
    System.arraycopy(base, 0, args, 0, base.length);
    System.arraycopy(more, 0, args, base.length, more.length);
    return CliRun.run(args);
  }

  @Test
  void shadowRunPrintsDecisionsReportAndVerdict() {
    CliRun r = tryRun("--policy", REPO.resolve("policies/h200-2rank.yaml").toString(),
        "--trace", CliRun.trace("trace_tp_infer.csv"));
    assertEquals(0, r.exit(), r.err() + r.out());
    assertTrue(r.out().startsWith("try: policy h200-2rank-timesliced ("), r.out());
    assertTrue(r.out().contains("INFO TUNER/Java: policy h200-2rank-timesliced profile two-ranks-socket mode shadow "
        + "rules 3 sha256 50e87163f1f000d756d7053d8761e7ff02c3af2103a1cbb75dcc6d3d0a5e341c (nRanks=2 nNodes=2)"), r.out());
    assertTrue(r.out().contains("harness: calls=273 changed=0 warn=0"), r.out());
    assertTrue(r.out().contains("== nccl-tuner report of the decision logs\n"), r.out());
    assertTrue(r.out().replaceAll(" +", " ").contains("2x2 AllReduce [16 KiB, 20 KiB) 64 1 RING/LL TREE/LL"), r.out());
    assertTrue(r.out().endsWith("try: the policy would change 257 of 273 calls (rule hits 257; changed: where its pick "
        + "differs from NCCL's); run it with NCCL_TUNER_JAVA_MODE=shadow in the job next\n"), r.out());
    assertTrue(r.out().lines().noneMatch(l -> l.contains("Bytes -> ")), "no per-call lines in shadow mode");
  }

  /** The README's old trap: a policy for another shape than the job's says so in the last line. */
  @Test
  void policyOfAnotherShapeSaysItChangesNothing() throws Exception {
    Path p8 = tmp.resolve("p8.yaml");
    Files.writeString(p8, Files.readString(REPO.resolve("policies/h200-2rank.yaml"))
        .replace("match: {nRanks: 2, nNodes: 2}", "match: {nRanks: 8, nNodes: 1}"));
    CliRun r = tryRun("--policy", p8.toString(), "--trace", CliRun.trace("trace_tp_infer.csv"));
    assertEquals(0, r.exit(), r.err() + r.out());
    assertTrue(r.out().endsWith("try: the policy changes nothing: no profile matches nRanks=2 nNodes=2 (the traces' "
        + "shape); its profiles: two-ranks-socket (nRanks 8, nNodes 1). Capture a trace of the job's shape "
        + "(NCCL_TUNER_JAVA_RECORD) or try --nranks N --nnodes M\n"), r.out());
    CliRun as8 = tryRun("--policy", p8.toString(), "--trace", CliRun.trace("trace_tp_infer.csv"),
        "--nranks", "8", "--nnodes", "1", "--mode", "enforce");
    assertEquals(0, as8.exit(), as8.err() + as8.out());
    assertTrue(as8.out().contains("as nRanks 8, nNodes 1"), as8.out());
    assertTrue(as8.out().contains("[changed]"), as8.out());
    assertTrue(as8.out().endsWith("try: the policy changed 257 of 273 calls (rule hits 257; a hit changes nothing "
        + "where NCCL offers none of its candidates)\n"), as8.out());
  }

  @Test
  void inputAndUsageErrors() {
    CliRun noHarness = CliRun.run("try", "--policy", REPO.resolve("policies/h200-2rank.yaml").toString(),
        "--trace", CliRun.trace("trace_tp_infer.csv"), "--harness", tmp.resolve("nope").toString());
    assertEquals(1, noHarness.exit());
    assertEquals("nccl-tuner try: --harness " + tmp.resolve("nope") + ": not an executable file\n", noHarness.err());
    CliRun noPolicy = CliRun.run("try", "--policy", tmp.resolve("none.yaml").toString(),
        "--trace", CliRun.trace("trace_tp_infer.csv"));
    assertEquals(1, noPolicy.exit());
    assertEquals("nccl-tuner try: " + tmp.resolve("none.yaml") + ": no such file\n", noPolicy.err());
    CliRun half = CliRun.run("try", "--policy", REPO.resolve("policies/h200-2rank.yaml").toString(),
        "--trace", CliRun.trace("trace_tp_infer.csv"), "--nranks", "8");
    assertEquals(2, half.exit());
    assertTrue(half.err().startsWith("nccl-tuner try: --nranks and --nnodes go together, 1 <= nnodes <= nranks\n"),
        half.err());
  }
}
