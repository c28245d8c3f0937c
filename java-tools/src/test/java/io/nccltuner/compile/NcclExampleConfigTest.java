package io.nccltuner.compile;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nccltuner.policy.Algorithm;
import io.nccltuner.policy.Collective;
import io.nccltuner.policy.InputException;
import io.nccltuner.policy.NcclExampleConfig;
import io.nccltuner.policy.Policy;
import io.nccltuner.policy.Policy.Candidate;
import io.nccltuner.policy.Policy.Profile;
import io.nccltuner.policy.Policy.Range;
import io.nccltuner.policy.Policy.Rule;
import io.nccltuner.policy.PolicyLoader;
import io.nccltuner.policy.Protocol;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class NcclExampleConfigTest {
    static Candidate c(Algorithm a, Protocol p, int ch) {
        return new Candidate(a, p, ch, Double.NaN);
    }

    static Rule rule(Profile p, Collective coll, long from) {
        return p.rules().stream()
                .filter(r -> r.collective() == coll && r.fromBytes() == from)
                .findFirst()
                .orElseThrow();
    }

    static NcclExampleConfig.Result convert(String... lines) throws InputException {
        return NcclExampleConfig.convert("t.conf", "t", List.of(lines));
    }

    @Test
    void moreThanFourOverlappingLinesKeepTheFirstFourAndWarnAboutTheRest() throws Exception {
        NcclExampleConfig.Result r = convert(
                "allreduce,0,65535,tree,ll,-1,-1,-1",
                "allreduce,0,65535,ring,ll,-1,-1,-1",
                "allreduce,0,65535,ring,ll128,-1,-1,-1",
                "allreduce,0,1048575,tree,simple,-1,-1,-1",
                "allreduce,0,65535,ring,simple,-1,-1,-1",
                "allreduce,0,65535,tree,ll,-1,-1,-1");
        Profile any = r.policy().profiles().getFirst();
        Rule first = rule(any, Collective.AllReduce, 0);
        assertEquals(64L << 10, first.toBytes());
        assertEquals(
                List.of(
                        c(Algorithm.TREE, Protocol.LL, 0),
                        c(Algorithm.RING, Protocol.LL, 0),
                        c(Algorithm.RING, Protocol.LL128, 0),
                        c(Algorithm.TREE, Protocol.SIMPLE, 0)),
                first.candidates());
        assertEquals(
                List.of(c(Algorithm.TREE, Protocol.SIMPLE, 0)),
                rule(any, Collective.AllReduce, 64L << 10).candidates());
        // line 6 repeats line 1's pair: nothing is lost by it, so no warning
        assertEquals(
                List.of("t.conf:5: not used for AllReduce [0 B, 64 KiB): lines 1, 2, 3, 4 match there first with 4 "
                        + "different algorithm/protocol pairs and a policy rule lists at most 4 candidates (NCCL reaches line 5 "
                        + "there only when it offers none of them)"),
                r.warnings());
        PolicyLoader.parse("t.yaml", PolicyYaml.write(r.policy(), List.of(), Map.of()));
    }

    @Test
    void convertsTheExampleFixture() throws Exception {
        List<String> warnings = new ArrayList<>();
        // the whole conversion, as validate reads it; the plugin's (toPolicy) also leaves out line 9,
        // whose Broadcast TREE/SIMPLE NCCL never offers, as import does (NewcomerPathIssue21Test)
        NcclExampleConfig.Result full = NcclExampleConfig.convert(Fixtures.path("example-tuner.conf"));
        full.warnings().forEach(warnings::add);
        Policy p = full.policy();
        assertEquals("example-tuner", p.name());
        // nNodes 1 and 2, nRanks 16: profiles for the combinations that change something, most specific first
        assertEquals(
                List.of("nRanks16-nNodes2", "nNodes1", "any"),
                p.profiles().stream().map(Profile::name).toList());
        Profile any = p.profiles().getLast();
        Profile one = p.profiles().get(1);
        assertEquals(Range.exactly(1), one.nNodes());
        assertEquals(Range.ANY, one.nRanks());

        Rule small = rule(any, Collective.AllReduce, 0);
        assertEquals(64L << 10, small.toBytes());
        assertEquals(List.of(c(Algorithm.RING, Protocol.LL, 0)), small.candidates());
        Rule mid = rule(any, Collective.AllReduce, 64L << 10);
        assertEquals(1L << 20, mid.toBytes());
        assertEquals(List.of(c(Algorithm.RING, Protocol.LL128, 8)), mid.candidates());
        // 18446744073709551615 = SIZE_MAX: no upper bound
        assertEquals(-1L, rule(any, Collective.AllReduce, 1L << 20).toBytes());
        // on one node NVLS comes first up to 4 GiB, RING/SIMPLE is its fallback (the next matching line)
        Rule nvls = rule(one, Collective.AllReduce, 1L << 20);
        assertEquals(4L << 30, nvls.toBytes());
        assertEquals(
                List.of(c(Algorithm.NVLS, Protocol.SIMPLE, 0), c(Algorithm.RING, Protocol.SIMPLE, 0)),
                nvls.candidates());
        assertEquals(
                List.of(c(Algorithm.RING, Protocol.SIMPLE, 0)),
                rule(one, Collective.AllReduce, 4L << 30).candidates());

        // broadcast 0..32768 inclusive -> [0, 40 KiB); 32769.. -> [40 KiB, 4 GiB) for numPipeOps 1 only
        Rule b0 = rule(any, Collective.Broadcast, 0);
        assertEquals(40L << 10, b0.toBytes());
        assertEquals(Range.ANY, b0.numPipeOps());
        Rule b1 = rule(any, Collective.Broadcast, 40L << 10);
        assertEquals(Range.exactly(1), b1.numPipeOps());
        assertEquals(4L << 30, b1.toBytes());
        // the regBuff 1 line becomes a regBuff: true rule (in every profile); the reducescatter line
        // (regBuff 0) a regBuff: false rule, only for 2 nodes x 16 ranks; the rest stays regBuff any
        for (Profile x : p.profiles()) {
            Rule ag = rule(x, Collective.AllGather, 0);
            assertEquals(Boolean.TRUE, ag.regBuff());
            assertEquals(4L << 30, ag.toBytes());
            assertEquals(List.of(c(Algorithm.RING, Protocol.SIMPLE, 4)), ag.candidates());
            assertEquals(
                    1,
                    x.rules().stream()
                            .filter(r -> r.collective() == Collective.AllGather)
                            .count());
        }
        assertTrue(any.rules().stream().noneMatch(r -> r.collective() == Collective.ReduceScatter));
        Rule rs = rule(p.profiles().getFirst(), Collective.ReduceScatter, 0);
        assertEquals(List.of(c(Algorithm.RING, Protocol.SIMPLE, 0)), rs.candidates());
        assertEquals(Boolean.FALSE, rs.regBuff());
        assertEquals(null, small.regBuff());
        assertEquals(p.profiles().getFirst(), p.profileFor(16, 2));
        assertEquals(any, p.profileFor(16, 4));

        String f = Fixtures.path("example-tuner.conf").toString();
        assertEquals(
                List.of(
                        f + ":9: bytes 0..32768 (inclusive) is not on the size grid; rounded to [0 B, 40 KiB): sizes "
                                + "32769..40959 B follow this line too; write max_bytes 32767 to end it at 32 KiB, but the 32768 B calls "
                                + "then leave it (as is, they stay on this line, as in NCCL)",
                        f
                                + ":10: bytes 32769..4294967295 (inclusive) is not on the size grid; rounded to [40 KiB, 4 GiB): sizes "
                                + "32769..40959 B no longer follow this line; write min_bytes 32768 to start it at 32 KiB, but the 32768 B calls "
                                + "then join it (as is, they stay off this line, as in NCCL)",
                        f
                                + ":12: regBuff 1: kept as regBuff true rules, which match from NCCL 2.24 (tuner v4); a v3 NCCL does "
                                + "not say whether a buffer is registered and they never match there",
                        f
                                + ":13: regBuff 0: kept as regBuff false rules, which match from NCCL 2.24 (tuner v4); a v3 NCCL does "
                                + "not say whether a buffer is registered and they never match there"),
                warnings);

        // the YAML loads unchanged with the plugin's loader
        Policy loaded = PolicyLoader.parse("imported.yaml", PolicyYaml.write(p, List.of(), Map.of()));
        assertEquals(p.profiles().size(), loaded.profiles().size());
        assertEquals(
                rule(one, Collective.AllReduce, 1L << 20).candidates(),
                rule(loaded.profiles().get(1), Collective.AllReduce, 1L << 20).candidates());
        assertEquals(
                Boolean.TRUE,
                rule(loaded.profiles().get(1), Collective.AllGather, 0).regBuff());
        assertEquals(p.profiles(), loaded.profiles());
    }

    @Test
    void firstMatchWinsAcrossNumPipeOps() throws Exception {
        NcclExampleConfig.Result r =
                convert("allreduce,0,1048575,tree,ll,-1,-1,-1,4", "allreduce,0,4294967295,ring,simple,-1,-1,-1");
        List<Rule> rules = r.policy().profiles().getFirst().rules();
        assertTrue(r.warnings().isEmpty(), r.warnings().toString());
        Rule four = rules.stream()
                .filter(x -> x.numPipeOps().equals(Range.exactly(4)))
                .findFirst()
                .orElseThrow();
        assertEquals(
                List.of(c(Algorithm.TREE, Protocol.LL, 0), c(Algorithm.RING, Protocol.SIMPLE, 0)), four.candidates());
        assertEquals(1L << 20, four.toBytes());
        // other numPipeOps values get RING/SIMPLE at every size, 0 too (the -1 line matches it in
        // NVIDIA's example tuner); numPipeOps 4 gets it from 1 MiB
        List<Rule> others = rules.stream()
                .filter(x -> !x.numPipeOps().equals(Range.exactly(4)))
                .toList();
        assertEquals(
                List.of(new Range(0, 3), new Range(5, Long.MAX_VALUE)),
                others.stream().map(Rule::numPipeOps).toList());
        assertTrue(others.stream()
                .allMatch(x -> x.fromBytes() == 0
                        && x.toBytes() == 4L << 30
                        && x.candidates().equals(List.of(c(Algorithm.RING, Protocol.SIMPLE, 0)))));
        Rule above = rules.stream()
                .filter(x -> x.fromBytes() == 1L << 20)
                .findFirst()
                .orElseThrow();
        assertEquals(Range.exactly(4), above.numPipeOps());
        assertEquals(4, rules.size());
        assertEquals(List.of(1, 2), NcclExampleConfig.linesOf(four, r));
        PolicyLoader.parse("x.yaml", PolicyYaml.write(r.policy(), List.of(), Map.of()));
    }

    /**
     * A regBuff -1 line that a regBuff 1 line covers only in part: where the two regBuff values
     * agree (RING/LL from 4 KiB to 64 KiB) the rule is for any regBuff, so it matches under tuner
     * v3 too; below 4 KiB it stays split (regBuff 1: RING/LL, else TREE/SIMPLE). Before (found by the oracle adversary) the pieces were
     * compared uncut and became regBuff true/false rules over [4 KiB, 64 KiB) as well, which never
     * match under v3: an 8 KiB call there kept NCCL's pick under NCCL 2.22.
     */
    @Test
    void aPartlyCoveredRegBuffAnyLineStaysAnyWhereBothAgree() throws Exception {
        Policy p = convert("allreduce,0,65535,ring,ll,-1,-1,-1", "allreduce,0,4095,tree,simple,-1,-1,-1,-1,1")
                .policy();
        List<Rule> rules = p.profiles().getFirst().rules();
        List<String> got = rules.stream()
                .map(r -> r.fromBytes() + ".." + r.toBytes() + " " + r.regBuff() + " "
                        + r.candidates().getFirst().algorithm() + "/"
                        + r.candidates().getFirst().protocol())
                .toList();
        // line 1 comes first in file order, so regBuff 1 calls below 4 KiB try RING/LL, then TREE/SIMPLE
        assertEquals(List.of("0..4096 false RING/LL", "4096..65536 null RING/LL", "0..4096 true RING/LL"), got);
        assertEquals(2, rules.get(2).candidates().size(), rules.toString());
    }

    /** A line with no end (max_bytes -1) rounded onto the grid: its range reads "inf" as every range does. */
    @Test
    void roundedRangeWithNoEndReadsInf() throws Exception {
        NcclExampleConfig.Result r = convert("allreduce,1000,-1,ring,ll,-1,-1,-1");
        assertTrue(
                r.warnings()
                        .getFirst()
                        .startsWith("t.conf:1: bytes 1000..18446744073709551615 (inclusive) is not on the "
                                + "size grid; rounded to [1 KiB, inf): "),
                r.warnings().toString());
    }

    @Test
    void rangeWithoutAGridPointIsDropped() throws Exception {
        NcclExampleConfig.Result r = convert("allreduce,1025,1279,ring,ll,-1,-1,-1");
        assertTrue(r.policy().profiles().getFirst().rules().isEmpty());
        assertEquals(
                List.of(
                        "t.conf:1: bytes 1025..1279 contains no size-grid point (4 per power of two), so no grid "
                                + "bucket follows it; line dropped",
                        "t.conf: no config lines; the policy changes nothing"),
                r.warnings());
    }

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "allreduce,0,1024,rnig,ll,-1,-1,-1 | t.conf:1: unknown algorithm 'rnig' (NCCL's example plugin would silently use "
                        + "'ring'); did you mean 'ring'? use one of tree, ring, collnet_direct, collnet_chain, nvls, nvls_tree, pat",
                "AllReduce,0,1024,ring,ll,-1,-1,-1 | t.conf:1: collective 'AllReduce': NCCL's example plugin compares names "
                        + "exactly (strcmp) and would read this as its default 'allreduce'; write 'allreduce'",
                "allreduce,0,1024,Tree,ll,-1,-1,-1 | t.conf:1: algorithm 'Tree': NCCL's example plugin compares names exactly "
                        + "(strcmp) and would read this as its default 'ring'; write 'tree'",
                "allreduce,0,1024,ring,ll128x,-1,-1,-1 | t.conf:1: unknown protocol 'll128x' (NCCL's example plugin would "
                        + "silently use 'simple'); did you mean 'll128'? use one of ll, ll128, simple",
                "allreduce,0,1024,ring,ll,-1,-1 | t.conf:1: 7 fields; a line has 8 to 10: collective,min_bytes,max_bytes,"
                        + "algorithm,protocol,channels,nNodes,nRanks[,numPipeOps[,regBuff]] (NCCL's plugin would skip it silently)",
                "allreduce,0,1k,ring,ll,-1,-1,-1 | t.conf:1: max_bytes '1k' is not a whole number of bytes",
                "allreduce,0,1024,ring,ll,65,-1,-1 | t.conf:1: channels 65 is outside -1..64",
                "allreduce,2048,1024,ring,ll,-1,-1,-1 | t.conf:1: min_bytes 2048 is above max_bytes 1024; the range is "
                        + "inclusive and would match nothing",
                "allreduce,0,1024,ring,ll,-1,-1,-1,1,2 | t.conf:1: regBuff 2 is outside -1..1",
            })
    void refusedLinesNameTheLine(String line, String message) {
        InputException e = assertThrows(
                InputException.class, () -> convert("# comment", line).policy());
        assertEquals(message.replace("t.conf:1", "t.conf:2"), e.getMessage());
    }
}
