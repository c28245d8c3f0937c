package io.nccltuner.compile;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nccltuner.compile.Compiler.Compilation;
import io.nccltuner.compile.Compiler.Group;
import io.nccltuner.compile.Compiler.SizeResult;
import io.nccltuner.policy.Algorithm;
import io.nccltuner.policy.Mode;
import io.nccltuner.policy.Policy;
import io.nccltuner.policy.Policy.Candidate;
import io.nccltuner.policy.Policy.Rule;
import io.nccltuner.policy.PolicyLoader;
import io.nccltuner.policy.Protocol;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * policies/h200-2rank-measured.yaml is what {@code nccl-tuner compile} makes of the shared H200
 * sweep with NCCL's picks from the same testbed's log (command in docs/compile.md); it loads with
 * the plugin's loader and matches a fresh compile.
 */
class MeasuredPolicyTest {
    static Compilation compile() throws Exception {
        return Compiler.compile(
                Fixtures.read("h200-2rank-sweep_allreduce.rep1.csv", "tests/traces/nccl_sweep.rank0.log"),
                Compiler.Options.defaults("h200-2rank-measured"));
    }

    @Test
    void committedPolicyIsTheCompilersOutputAndLoads() throws Exception {
        Policy committed = PolicyLoader.load(Fixtures.REPO.resolve("policies/h200-2rank-measured.yaml"));
        Policy fresh =
                PolicyLoader.parse("fresh.yaml", PolicyYaml.write(compile().policy(), List.of(), Map.of()));
        assertEquals("h200-2rank-measured", committed.name());
        assertEquals(Mode.ENFORCE, committed.mode());
        assertEquals(fresh.profiles(), committed.profiles());
        assertEquals(5, committed.profileFor(2, 2).rules().size());
    }

    /**
     * Issue 21 (third walk), item 12: the noise column is the margin the verdict used, so a size with
     * a rule has NCCL's regret above it, and a size where the noise kept NCCL's pick has it at most
     * that (with and without the log, with and without a window).
     */
    @Test
    void theNoiseMarginShownAgreesWithEachVerdict() throws Exception {
        for (String[] in : new String[][] {
            {"h200-2rank-sweep_allreduce.rep1.csv", "tests/traces/nccl_sweep.rank0.log"},
            {"h200-2rank-sweep_allreduce.rep1.csv"}
        }) {
            for (int window : new int[] {0, 2}) {
                Compiler.Options o = Compiler.Options.defaults("x");
                o = new Compiler.Options(
                        o.threshold(), o.noiseSigmas(), o.tie(), false, o.merge(), "x", o.mode(), null, window);
                int ruled = 0;
                int keptForNoise = 0;
                for (SizeResult s : Compiler.compile(Fixtures.read(in), o)
                        .groups()
                        .getFirst()
                        .sizes()) {
                    String at = String.join(" + ", in) + ", window " + window + ", " + s.nBytes() + " B";
                    if (s.ruled()) {
                        ruled++;
                        assertTrue(s.ncclRegret() > (Double.isNaN(s.noiseMargin()) ? 0 : s.noiseMargin()), at);
                    } else if (s.note().contains(Compiler.KEPT_FOR_NOISE)) {
                        keptForNoise++;
                        assertTrue(s.ncclRegret() <= s.noiseMargin(), at);
                    }
                }
                assertTrue(ruled > 0 && (window == 0 || keptForNoise > 0), String.join(" + ", in));
            }
        }
    }

    /**
     * Issue 21 (third walk), item 2: the log's cost table gives RING/LL128 bandwidth 0.0 for AllReduce
     * (NCCL 2.28.9 over sockets), so the engine would pass over it; compile leaves it out of the
     * rules, and where it measured fastest (128 B .. 512 B) the row prices what runs instead.
     */
    @Test
    void aCandidateTheLogNeverOffersIsLeftOutOfTheRules() throws Exception {
        Compilation c = compile();
        Group g = c.groups().getFirst();
        for (Rule r : g.rules()) {
            assertTrue(r.candidates().stream().noneMatch(x -> x.protocol() == Protocol.LL128), r.toString());
        }
        SizeResult b128 = CompilerTest.at(g, 128);
        assertEquals(
                new RunConfig(Algorithm.RING, Protocol.LL128, 0),
                b128.candidates().getFirst().config());
        assertEquals(
                new RunConfig(Algorithm.RING, Protocol.SIMPLE, 0),
                b128.ranking().getFirst().config());
        assertEquals("0.65%", TextReport.pct(b128.policyRegret()));
        assertEquals(
                "RING/LL128 left out: NCCL never offers it (bandwidth 0.0 in the cost table at "
                        + Fixtures.REPO.resolve("tests/traces/nccl_sweep.rank0.log") + ":32)",
                b128.note());
        Rule first = g.rules().getFirst();
        assertEquals(4, first.fromBytes());
        assertEquals(256, first.toBytes());
        assertEquals(1, first.candidates().size());
        assertEquals(Protocol.SIMPLE, first.candidates().getFirst().protocol());
        assertEquals("0.68%", TextReport.pct(first.candidates().getFirst().regret()));
        assertTrue(
                c.warnings()
                        .contains(
                                "AllReduce, nRanks 2, nNodes 2, numPipeOps 1: RING/LL128 beat NCCL's pick by more than "
                                        + "the threshold and the noise at 3 sizes (128 B .. 512 B) in its forced runs, but NCCL "
                                        + "never offers it at nRanks=2 nNodes=2 (bandwidth 0.0 in the cost table at "
                                        + Fixtures.REPO.resolve("tests/traces/nccl_sweep.rank0.log")
                                        + ":32), so the plugin would pass over it: left out of the rules"),
                c.warnings().toString());
    }

    @Test
    void ncclPicksFromTheLogPoolWithForcedRunsOfTheSameConfiguration() throws Exception {
        Group g = compile().groups().getFirst();
        SizeResult kib32 = CompilerTest.at(g, 32);
        assertEquals(new RunConfig(Algorithm.RING, Protocol.LL, 0), kib32.ncclPick());
        assertTrue(kib32.pickInferred()); // logged at 16 B and 64 B, both RING/LL
        SizeResult mib1 = CompilerTest.at(g, 1 << 20);
        assertEquals(new RunConfig(Algorithm.RING, Protocol.SIMPLE, 0), mib1.ncclPick());
        assertFalse(mib1.pickInferred());
        // unforced 4621.536 us and forced RING/SIMPLE 2560.736 us: the same configuration, so two replicates
        assertEquals((4621.536 + 2560.736) / 2, mib1.ncclUs(), 1e-9);
        assertEquals(2, mib1.nccl().replicates());
        assertFalse(mib1.ruled()); // 43% regret inside an 81% noise margin
        assertEquals("81.16%", TextReport.pct(mib1.noiseMargin()));
        // from 64 KiB to 32 MiB NCCL's pick cannot be told from the best on this data; above, it can
        List<Rule> rules = g.rules();
        assertTrue(rules.stream().noneMatch(r -> r.fromBytes() >= 64 << 10 && r.fromBytes() < 32L << 20));
        Rule r32 = rules.stream()
                .filter(r -> r.fromBytes() == 32L << 20)
                .findFirst()
                .orElseThrow();
        assertEquals(64L << 20, r32.toBytes());
        assertEquals(new Candidate(Algorithm.RING, Protocol.SIMPLE, 0, Double.NaN), r32.ncclPick());
        assertEquals((18597.631 + 16862.368) / 2 / 13034.816 - 1, r32.ncclRegret(), 1e-12);
        assertEquals(List.of(new Candidate(Algorithm.TREE, Protocol.SIMPLE, 0, 0.0)), r32.candidates());
    }
}
