package io.nccltuner.compile;

import io.nccltuner.policy.NcclExampleConfig;

import io.nccltuner.policy.InputException;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nccltuner.policy.ConfigFormats;
import io.nccltuner.policy.Policy;
import io.nccltuner.policy.Policy.Rule;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Issue 13 item 11: tuner-config dialects {@code import} meets (fixtures under compile/configs). */
@Timeout(60)
class ConfigFormatsTest {
  private static Path cfg(String name) {
    return Fixtures.path("configs/" + name);
  }

  private static List<String> rules(Policy p, String profile) {
    return p.profiles().stream().filter(x -> x.name().equals(profile)).findFirst().orElseThrow().rules().stream()
        .map(ConfigFormatsTest::describe).toList();
  }

  private static String describe(Rule r) {
    var c = r.candidates().getFirst();
    return r.collective() + " " + r.fromBytes() + ".." + r.toBytes() + " " + c.algorithm() + "/" + c.protocol()
        + (c.channels() == 0 ? "" : "/" + c.channels());
  }

  @Test
  void headerRowIsSkippedWithAWarning() throws Exception {
    NcclExampleConfig.Result r = NcclExampleConfig.convert(cfg("example-with-header-row.csv"));
    assertEquals(List.of("AllReduce 0..65536 TREE/LL", "AllReduce 65536..4294967296 RING/SIMPLE/16"),
        rules(r.policy(), "nNodes1-nRanks8"));
    assertTrue(r.warnings().getFirst().contains("example-with-header-row.csv:1: a header row"), r.warnings().toString());
  }

  @Test
  void intervalSyntaxBecomesTheSameRanges() throws Exception {
    NcclExampleConfig.Result r = NcclExampleConfig.convert(cfg("ncclx-intervals.csv"));
    // [0,65535] -> [0, 64 KiB); [65536,16777216) -> [64 KiB, 16 MiB); [16777216,) -> from 16 MiB
    assertEquals(List.of("AllGather 0..-1 RING/SIMPLE", "AllReduce 0..65536 TREE/LL",
        "AllReduce 65536..16777216 RING/LL128", "AllReduce 16777216..-1 RING/SIMPLE/8"), rules(r.policy(), "nRanks8"));
    InputException e = assertThrows(InputException.class, () -> NcclExampleConfig.convert("x.csv", "x",
        List.of("allgather,*,ring,simple,-1,(1,),*")));
    assertEquals("x.csv:1: nNodes '(1,)' spans several values (2..); this importer matches nNodes by one value or "
        + "any (-1, *), as NCCL's example does: write one line per value", e.getMessage());
    long[] iv = ConfigFormats.interval("w", "(8,16]", "bytes");
    assertEquals(9, iv[0]);
    assertEquals(16, iv[1]);
  }

  @Test
  void jsonRulesAreReadWithTheirLines() throws Exception {
    NcclExampleConfig.Result r = NcclExampleConfig.convert(cfg("ncclx-rules.json"));
    assertEquals("ncclx-rules", r.policy().name());
    assertEquals(List.of("AllReduce 0..65536 TREE/LL", "AllReduce 65536..4294967296 RING/SIMPLE/16"),
        rules(r.policy(), "nRanks8"));
    assertEquals(List.of(4), NcclExampleConfig.linesOf(r.policy().profiles().getFirst().rules().getFirst(), r));
    InputException e = assertThrows(InputException.class, () -> NcclExampleConfig.convert("r.json", "r",
        List.of("[", "  {\"collective\": \"allreduce\", \"weight\": 3}", "]")));
    assertTrue(e.getMessage().startsWith("r.json:2: rule 1 has key \"weight\", which has no meaning here"), e.getMessage());
    InputException bad = assertThrows(InputException.class, () -> NcclExampleConfig.convert("b.json", "b",
        List.of("{\"rules\": [", "  {\"collective\": }", "]}")));
    assertTrue(bad.getMessage().startsWith("b.json:2:"), bad.getMessage());
  }

  @Test
  void formatsWithoutAMeaningHereAreRefusedWithTheReason() {
    InputException rccl = assertThrows(InputException.class, () -> NcclExampleConfig.convert(cfg("rccl-12-fields.conf")));
    assertTrue(rccl.getMessage().contains("rccl-12-fields.conf:2: 12 fields: RCCL's example-tuner rows add "
        + "partitionMode and localGroup"), rccl.getMessage());
    InputException ofi = assertThrows(InputException.class, () -> NcclExampleConfig.convert(cfg("aws-ofi-nccl-table.txt")));
    assertTrue(ofi.getMessage().contains("aws-ofi-nccl-table.txt:3: an aws-ofi-nccl tuner decision table"), ofi.getMessage());
    InputException perf = assertThrows(InputException.class, () -> NcclExampleConfig.convert(cfg("optimize-config-perf.csv")));
    assertTrue(perf.getMessage().contains("optimize-config-perf.csv:1: this is measurement data"), perf.getMessage());
    assertTrue(perf.getMessage().endsWith("use 'nccl-tuner compile' on it"), perf.getMessage());
  }
}
