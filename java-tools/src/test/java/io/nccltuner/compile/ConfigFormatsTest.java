package io.nccltuner.compile;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nccltuner.policy.ConfigFormats;
import io.nccltuner.policy.InputException;
import io.nccltuner.policy.NcclExampleConfig;
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
                .map(ConfigFormatsTest::describe)
                .toList();
    }

    private static String describe(Rule r) {
        var c = r.candidates().getFirst();
        return r.collective() + " " + r.fromBytes() + ".." + r.toBytes() + " " + c.algorithm() + "/" + c.protocol()
                + (c.channels() == 0 ? "" : "/" + c.channels());
    }

    @Test
    void headerRowIsSkippedWithAWarning() throws Exception {
        NcclExampleConfig.Result r = NcclExampleConfig.convert(cfg("example-with-header-row.csv"));
        assertEquals(
                List.of("AllReduce 0..65536 TREE/LL", "AllReduce 65536..4294967296 RING/SIMPLE/16"),
                rules(r.policy(), "nRanks8-nNodes1"));
        assertTrue(
                r.warnings().getFirst().contains("example-with-header-row.csv:1: a header row"),
                r.warnings().toString());
    }

    @Test
    void intervalSyntaxBecomesTheSameRanges() throws Exception {
        NcclExampleConfig.Result r = NcclExampleConfig.convert(cfg("ncclx-intervals.csv"));
        // [0,65535] -> [0, 64 KiB); [65536,16777216) -> [64 KiB, 16 MiB); [16777216,) -> from 16 MiB
        assertEquals(
                List.of(
                        "AllGather 0..-1 RING/SIMPLE",
                        "AllReduce 0..65536 TREE/LL",
                        "AllReduce 65536..16777216 RING/LL128",
                        "AllReduce 16777216..-1 RING/SIMPLE/8"),
                rules(r.policy(), "nRanks8"));
        // issue 21 (second walk), item 9: a numPipeOps interval is the rule's numPipeOps range (before:
        // "numPipeOps '(1,)' spans several values (2..); this importer matches numPipeOps by one value")
        NcclExampleConfig.Result pipes = NcclExampleConfig.convert(
                "x.csv",
                "x",
                List.of(
                        "allgather,*,ring,simple,-1,*,*,(1,)",
                        "allreduce,*,ring,simple,-1,*,*,[2,4]",
                        "allreduce,*,tree,ll,-1,*,*,*"));
        List<Policy.Rule> rs = pipes.policy().profiles().getFirst().rules();
        assertEquals(
                List.of(
                        "AllGather 2.. [RING/SIMPLE]",
                        "AllReduce 0..1 [TREE/LL]", // * covers numPipeOps 0 too, as in NVIDIA's example tuner
                        "AllReduce 2..4 [RING/SIMPLE, TREE/LL]",
                        "AllReduce 5.. [TREE/LL]"),
                rs.stream()
                        .map(x -> x.collective() + " " + x.numPipeOps() + " "
                                + x.candidates().stream()
                                        .map(c -> c.algorithm() + "/" + c.protocol())
                                        .toList())
                        .toList());
        assertEquals(new Policy.Range(2, 4), rs.get(2).numPipeOps());
        long[] iv = ConfigFormats.interval("w", "(8,16]", "bytes");
        assertEquals(9, iv[0]);
        assertEquals(16, iv[1]);
    }

    /** Issue 21 item 8: an nNodes/nRanks interval spanning several values becomes a profile's match range. */
    @Test
    void shapeIntervalsBecomeProfileRanges() throws Exception {
        NcclExampleConfig.Result r = NcclExampleConfig.convert(
                "x.csv", "x", List.of("allreduce,*,ring,simple,-1,(1,),[2,8]", "allreduce,*,tree,ll,-1,*,*"));
        Policy p = r.policy();
        Policy.Profile wide = p.profiles().getFirst();
        assertEquals("nRanks2..8-nNodes2..", wide.name());
        assertEquals(new Policy.Range(2, Long.MAX_VALUE), wide.nNodes());
        assertEquals(new Policy.Range(2, 8), wide.nRanks());
        assertEquals(List.of("AllReduce 0..-1 RING/SIMPLE"), rules(p, wide.name()));
        // inside the range: the interval's line; outside (nNodes 1, nRanks 9 or 1): the catch-all line
        assertEquals(wide, p.profileFor(8, 2));
        assertEquals(wide, p.profileFor(2, 64));
        for (int[] out : new int[][] {{8, 1}, {9, 2}, {1, 2}}) {
            Policy.Profile other = p.profileFor(out[0], out[1]);
            assertEquals(
                    List.of("AllReduce 0..-1 TREE/LL"),
                    other.rules().stream().map(ConfigFormatsTest::describe).toList(),
                    out[0] + " ranks, " + out[1] + " nodes");
        }
        // an exact value inside an interval: its own profile first, the interval's pieces around it
        NcclExampleConfig.Result cut = NcclExampleConfig.convert(
                "y.csv",
                "y",
                List.of(
                        "allreduce,*,nvls,simple,-1,*,[4,4]",
                        "allreduce,*,ring,simple,-1,*,[2,8]",
                        "allreduce,*,tree,ll,-1,*,*"));
        assertEquals(
                List.of("nRanks2..3", "nRanks4", "nRanks5..8", "any"),
                cut.policy().profiles().stream().map(Policy.Profile::name).toList());
        assertEquals(List.of("AllReduce 0..-1 NVLS/SIMPLE"), rules(cut.policy(), "nRanks4"));
        assertEquals("nRanks5..8", cut.policy().profileFor(6, 1).name());
        assertEquals("any", cut.policy().profileFor(9, 1).name());
        // JSON rules take the same intervals
        NcclExampleConfig.Result json = NcclExampleConfig.convert(
                "z.json",
                "z",
                List.of(
                        "[{\"collective\": \"allreduce\", \"algorithm\": \"ring\", \"protocol\": \"simple\", \"nRanks\": \"(1,16)\"}]"));
        assertEquals(
                new Policy.Range(2, 15), json.policy().profiles().getFirst().nRanks());
        // the plain example CSV keeps NCCL's atoi fields: an interval there is refused
        InputException plain = assertThrows(
                InputException.class,
                () -> NcclExampleConfig.convert("p.csv", "p", List.of("allreduce,0,-1,ring,simple,-1,-1,[2,8]")));
        assertEquals(
                "p.csv:1: nRanks '[2,8]' is not a whole number (NCCL's atoi would read it as whatever digits it "
                        + "starts with)",
                plain.getMessage());
        InputException ch = assertThrows(
                InputException.class,
                () -> NcclExampleConfig.convert("c.csv", "c", List.of("allreduce,*,ring,simple,[4,8],*,*")));
        assertEquals(
                "c.csv:1: channels '[4,8]' spans several values (4..8); channels is not matched but set: the tuner "
                        + "writes one nChannels per call (getCollInfo's *nChannels; a policy candidate's channels, 1..64), so a range "
                        + "names no count to set: write one value, or -1 or * to keep NCCL's",
                ch.getMessage());
    }

    @Test
    void jsonRulesAreReadWithTheirLines() throws Exception {
        NcclExampleConfig.Result r = NcclExampleConfig.convert(cfg("ncclx-rules.json"));
        assertEquals("ncclx-rules", r.policy().name());
        assertEquals(
                List.of("AllReduce 0..65536 TREE/LL", "AllReduce 65536..4294967296 RING/SIMPLE/16"),
                rules(r.policy(), "nRanks8"));
        assertEquals(
                List.of(4),
                NcclExampleConfig.linesOf(
                        r.policy().profiles().getFirst().rules().getFirst(), r));
        InputException e = assertThrows(
                InputException.class,
                () -> NcclExampleConfig.convert(
                        "r.json", "r", List.of("[", "  {\"collective\": \"allreduce\", \"weight\": 3}", "]")));
        assertTrue(
                e.getMessage().startsWith("r.json:2: rule 1 has key \"weight\", which has no meaning here"),
                e.getMessage());
        InputException bad = assertThrows(
                InputException.class,
                () -> NcclExampleConfig.convert("b.json", "b", List.of("{\"rules\": [", "  {\"collective\": }", "]}")));
        assertTrue(bad.getMessage().startsWith("b.json:2:"), bad.getMessage());
    }

    @Test
    void formatsWithoutAMeaningHereAreRefusedWithTheReason() {
        InputException rccl =
                assertThrows(InputException.class, () -> NcclExampleConfig.convert(cfg("rccl-12-fields.conf")));
        assertTrue(
                rccl.getMessage()
                        .contains("rccl-12-fields.conf:2: 12 fields: RCCL's example-tuner rows add "
                                + "partitionMode and localGroup"),
                rccl.getMessage());
        InputException ofi =
                assertThrows(InputException.class, () -> NcclExampleConfig.convert(cfg("aws-ofi-nccl-table.txt")));
        assertTrue(
                ofi.getMessage().contains("aws-ofi-nccl-table.txt:3: an aws-ofi-nccl tuner decision table"),
                ofi.getMessage());
        InputException perf =
                assertThrows(InputException.class, () -> NcclExampleConfig.convert(cfg("optimize-config-perf.csv")));
        assertTrue(
                perf.getMessage().contains("optimize-config-perf.csv:1: this is measurement data"), perf.getMessage());
        assertTrue(perf.getMessage().endsWith("use 'nccl-tuner compile' on it"), perf.getMessage());
    }
}
