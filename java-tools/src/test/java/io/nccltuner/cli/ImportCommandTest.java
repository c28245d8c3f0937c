package io.nccltuner.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nccltuner.policy.Policy;
import io.nccltuner.policy.PolicyLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ImportCommandTest {
  @TempDir Path tmp;

  @Test
  void importsTheExampleConfig() throws Exception {
    Path out = tmp.resolve("imported.yaml");
    CliRun r = CliRun.run("import", CliRun.fixture("example-tuner.conf"), "-o", out.toString());
    assertEquals(0, r.exit(), r.err());
    assertTrue(r.out().startsWith("policy: " + out + " (3 profiles, "), r.out());
    assertTrue(r.err().contains("example-tuner.conf:9: bytes 0..32768 (inclusive) is not on the size grid"), r.err());
    Policy p = PolicyLoader.load(out);
    assertEquals("example-tuner", p.name());
    assertTrue(Files.readString(out).contains("# from example-tuner.conf lines 6, 7\n"), Files.readString(out));
  }

  /** Issue 21 item 8: NCCLX nNodes/nRanks intervals import as profile match ranges and load back. */
  @Test
  void ncclxShapeIntervalsBecomeMatchRanges() throws Exception {
    Path conf = Files.writeString(tmp.resolve("ncclx.csv"),
        "allreduce,*,ring,simple,-1,(1,),[2,8]\nallreduce,*,tree,ll,-1,*,*\n");
    Path out = tmp.resolve("ncclx.yaml");
    CliRun r = CliRun.run("import", conf.toString(), "-o", out.toString());
    assertEquals(0, r.exit(), r.err());
    String yaml = Files.readString(out);
    assertTrue(yaml.contains("nRanks: {min: 2, max: 8}"), yaml);
    assertTrue(yaml.contains("nNodes: {min: 2}"), yaml);
    Policy p = PolicyLoader.load(out);
    assertEquals("nNodes2..-nRanks2..8", p.profileFor(4, 3).name());
    assertEquals("any", p.profileFor(4, 1).name());
    assertEquals("any", p.profileFor(16, 3).name());
  }

  @Test
  void yamlGoesToStdoutWithoutOutput() {
    CliRun r = CliRun.run("import", CliRun.fixture("example-tuner.conf"), "--name", "nccl-example");
    assertEquals(0, r.exit(), r.err());
    assertTrue(r.out().contains("schema: nccl-tuner-java/v1\nname: nccl-example\n"), r.out());
  }

  @Test
  void unknownNamesExitOneWithTheLine() throws Exception {
    Path conf = tmp.resolve("bad.conf");
    Files.writeString(conf, "# header\nallreduce,0,1024,ring,ll,-1,-1,-1\nallreduce,1025,2048,rnig,ll,-1,-1,-1\n");
    CliRun r = CliRun.run("import", conf.toString());
    assertEquals(1, r.exit());
    assertEquals("nccl-tuner import: " + conf + ":3: unknown algorithm 'rnig' (NCCL's example plugin would silently "
        + "use 'ring'); use one of tree, ring, collnet_direct, collnet_chain, nvls, nvls_tree, pat\n", r.err());
  }

  @Test
  void aMissingFileIsOneLineNamingIt() {
    CliRun r = CliRun.run("import", tmp.resolve("nope.conf").toString());
    assertEquals(1, r.exit());
    assertEquals("nccl-tuner import: " + tmp.resolve("nope.conf") + ": no such file\n", r.err());
  }

  @Test
  void dashOutputIsStdoutAndCountsArePluralized() throws Exception {
    CliRun dash = CliRun.run("import", CliRun.fixture("example-tuner.conf"), "-o", "-");
    assertEquals(0, dash.exit(), dash.err());
    assertTrue(dash.out().contains("schema: nccl-tuner-java/v1\nname: example-tuner\n"), dash.out());
    assertTrue(Files.notExists(Path.of("-")));
    Path conf = Files.writeString(tmp.resolve("one.conf"), "allreduce,0,65535,ring,ll,-1,-1,-1\n");
    CliRun one = CliRun.run("import", conf.toString(), "-o", tmp.resolve("one.yaml").toString());
    assertEquals(0, one.exit(), one.err());
    assertTrue(one.out().startsWith("policy: " + tmp.resolve("one.yaml") + " (1 profile, 1 rule, 0 warnings)\n"), one.out());
  }
}
