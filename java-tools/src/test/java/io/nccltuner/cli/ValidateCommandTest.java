package io.nccltuner.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(60)
class ValidateCommandTest {
    @TempDir
    Path tmp;

    static final String UNREACHABLE = """
      schema: nccl-tuner-java/v1
      name: v
      profiles:
        - name: big
          match: {nRanks: {min: 8}, nNodes: any}
          rules:
            - collective: Broadcast
              bytes: {from: 0 B}
              candidates:
                - {algorithm: NVLS, protocol: SIMPLE}
            - collective: AllGather
              bytes: {from: 0 B}
              candidates:
                - {algorithm: PAT, protocol: SIMPLE}
                - {algorithm: TREE, protocol: LL}
            - collective: AllReduce
              bytes: {from: 1 MiB, to: 2 MiB}
              candidates:
                - {algorithm: NVLS, protocol: LL}
                - {algorithm: RING, protocol: LL}
        - name: shadowed
          match: {nRanks: 16, nNodes: 2}
          rules:
            - collective: AllReduce
              bytes: {from: 0 B}
              candidates:
                - {algorithm: RING, protocol: LL}
      """;

    @Test
    void twoRulesOfOneProfileSplitByRegBuffAreTwoFindings() throws Exception {
        Path f = CliRun.write(tmp, "rb-split.yaml", """
        schema: nccl-tuner-java/v1
        name: rb-split
        profiles:
          - name: p0
            rules:
              - collective: Broadcast
                bytes: {from: 0 B, to: 8 B}
                regBuff: true
                candidates:
                  - {algorithm: TREE, protocol: LL}
              - collective: Broadcast
                bytes: {from: 0 B, to: 8 B}
                regBuff: false
                candidates:
                  - {algorithm: NVLS, protocol: SIMPLE}
        """);
        CliRun r = CliRun.run("validate", f.toString());
        assertEquals(1, r.exit(), r.out() + r.err());
        List<String> errors =
                r.out().lines().filter(l -> l.startsWith("error: ")).toList();
        assertEquals(
                List.of(
                        "error: " + f
                                + ":6:9: profiles[0].rules[0] (Broadcast [0 B, 8 B)): can never apply: NCCL offers none of its"
                                + " candidates for Broadcast",
                        "error: " + f
                                + ":11:9: profiles[0].rules[1] (Broadcast [0 B, 8 B)): can never apply: NCCL offers none of its"
                                + " candidates for Broadcast"),
                errors,
                r.out());
        assertTrue(r.out().contains("result: FAILED (2 errors, 4 warnings)"), r.out());
    }

    @Test
    void cleanPolicyAndItsShapeExitZero() {
        String policy = CliRun.trace("../../policies/h200-2rank-measured.yaml");
        CliRun r = CliRun.run("validate", policy, "--nranks", "2", "--nnodes", "2");
        assertEquals(0, r.exit(), r.out() + r.err());
        assertTrue(r.out().contains(": policy h200-2rank-measured, mode enforce, 1 profile, 5 rules: loads"), r.out());
        assertTrue(r.out().contains("nRanks=2 nNodes=2: profile nRanks2-nNodes2 (profiles[0], 5 rules)"), r.out());
        assertTrue(r.out().contains("result: OK (0 errors, 0 warnings)"), r.out());
    }

    @Test
    void everyProblemIsListedNotOnlyTheFirst() throws Exception {
        Path f = CliRun.write(tmp, "bad.yaml", """
        schema: nccl-tuner-java/v1
        name: bad
        profiles:
          - name: p
            match: {nRanks: 2}
            rules:
              - collective: AllReduce
                bytes: {from: 0 B, to: 1 MiB}
                regBuff: 1
                candidates:
                  - {algorithm: RINGG, protocol: LL}
                  - {algorithm: RING, protocol: SIMPLE, channels: 65}
        """);
        CliRun r = CliRun.run("validate", f.toString());
        assertEquals(1, r.exit(), r.out() + r.err());
        List<String> lines = r.out().lines().toList();
        assertEquals(f + ": refused, 3 problems:", lines.get(0), r.out());
        assertTrue(lines.get(1).startsWith("  " + f + ":9:"), lines.get(1));
        assertTrue(lines.get(1).contains("regBuff: expected true, false or any, found '1'"), lines.get(1));
        assertTrue(lines.get(2).contains(f + ":11:") && lines.get(2).contains("RINGG"), lines.get(2));
        assertTrue(lines.get(3).contains(f + ":12:") && lines.get(3).contains("channels"), lines.get(3));
        assertTrue(lines.get(4).startsWith("result: FAILED"), r.out());
    }

    /**
     * Expected findings, from NCCL 2.28.9 src/graph/tuning.cc lines 273-282: Broadcast only RING;
     * AllGather RING/PAT/NVLS/COLLNET_DIRECT; NVLS only SIMPLE; PAT only with nNodes == nRanks.
     */
    @Test
    void rulesThatCanNeverApplyAndShapes() throws Exception {
        Path f = CliRun.write(tmp, "v.yaml", UNREACHABLE);
        CliRun r = CliRun.run(
                "validate", f.toString(), "--nranks", "16", "--nnodes", "2", "--nranks", "4", "--nnodes", "1");
        assertEquals(1, r.exit(), r.out() + r.err());
        String o = r.out();
        assertTrue(o.contains("nRanks=16 nNodes=2: profile big (profiles[0], 3 rules)"), o);
        assertTrue(o.contains("nRanks=4 nNodes=1: no profile matches"), o);
        assertTrue(
                o.contains("error: " + f
                        + ":21:5: profiles[1] (shadowed): can never match: profiles[0] (big) comes first"),
                o);
        assertTrue(
                o.contains("warning: " + f
                        + ":10:13: profiles[0].rules[0] (Broadcast [0 B, inf)).candidates[0]: NVLS/SIMPLE is never "
                        + "offered: NCCL offers only RING for Broadcast"),
                o);
        assertTrue(o.contains("error: " + f + ":7:9: profiles[0].rules[0] (Broadcast [0 B, inf)): can never apply"), o);
        assertTrue(
                o.contains(
                        "warning: " + f
                                + ":15:13: profiles[0].rules[1] (AllGather [0 B, inf)).candidates[1]: TREE/LL is never offered"),
                o);
        assertTrue(
                o.contains("warning: " + f
                        + ":19:13: profiles[0].rules[2] (AllReduce [1 MiB, 2 MiB)).candidates[0]: NVLS/LL is never "
                        + "offered: NCCL offers NVLS only with SIMPLE"),
                o);
        assertTrue(
                o.contains("warning: " + f
                        + ":14:13: profiles[0].rules[1] (AllGather [0 B, inf)).candidates[0]: PAT is offered only with "
                        + "one rank per node"),
                o);
        assertTrue(
                o.contains("warning: " + f
                        + ":11:9: profiles[0].rules[1] (AllGather [0 B, inf)): cannot apply at nRanks=16 nNodes=2"),
                o);
        assertTrue(o.contains("result: FAILED (3 errors, 5 warnings)"), o);
    }

    /**
     * LL128 with NVLS, NVLS_TREE and PAT: NCCL offers these three only with SIMPLE (the same
     * src/graph/tuning.cc check as LL above), so each LL128 candidate is a warning of its own.
     */
    @Test
    void ll128WithNvlsNvlsTreeOrPatIsNeverOffered() throws Exception {
        Path f = CliRun.write(tmp, "ll128.yaml", """
        schema: nccl-tuner-java/v1
        name: ll128
        profiles:
          - name: p
            rules:
              - collective: AllReduce
                bytes: {from: 0 B, to: 1 MiB}
                candidates:
                  - {algorithm: NVLS, protocol: LL128}
                  - {algorithm: RING, protocol: LL128}
              - collective: AllReduce
                bytes: {from: 1 MiB}
                candidates:
                  - {algorithm: NVLS_TREE, protocol: LL128}
                  - {algorithm: NVLS_TREE, protocol: SIMPLE}
              - collective: AllGather
                bytes: {from: 0 B}
                candidates:
                  - {algorithm: PAT, protocol: LL128}
                  - {algorithm: RING, protocol: SIMPLE}
        """);
        CliRun r = CliRun.run("validate", f.toString());
        String o = r.out();
        List<String> warnings = o.lines().filter(l -> l.startsWith("warning: ")).toList();
        assertEquals(
                List.of(
                        "warning: " + f
                                + ":9:13: profiles[0].rules[0] (AllReduce [0 B, 1 MiB)).candidates[0]: NVLS/LL128 is never offered: NCCL offers "
                                + "NVLS only with SIMPLE (NCCL 2.23 .. 2.30 src/graph/tuning.cc, ncclTopoTuneModel)",
                        "warning: " + f
                                + ":14:13: profiles[0].rules[1] (AllReduce [1 MiB, inf)).candidates[0]: NVLS_TREE/LL128 is never offered: NCCL "
                                + "offers NVLS_TREE only with SIMPLE (NCCL 2.23 .. 2.30 src/graph/tuning.cc, ncclTopoTuneModel)",
                        "warning: " + f
                                + ":19:13: profiles[0].rules[2] (AllGather [0 B, inf)).candidates[0]: PAT/LL128 is never offered: NCCL offers "
                                + "PAT only with SIMPLE (NCCL 2.23 .. 2.30 src/graph/tuning.cc, ncclTopoTuneModel)"),
                warnings,
                o);
        assertTrue(o.contains("(0 errors, 3 warnings)"), o);
    }

    /**
     * AllGather and ReduceScatter rules with COLLNET_DIRECT and NVLS (which NCCL offers for them), and
     * a Broadcast rule with RING: no finding; TREE for ReduceScatter is never offered.
     */
    @Test
    void collnetDirectForAllGatherAndReduceScatterIsOffered() throws Exception {
        Path f = CliRun.write(tmp, "offered.yaml", """
        schema: nccl-tuner-java/v1
        name: offered
        profiles:
          - name: p
            rules:
              - collective: AllGather
                bytes: {from: 0 B, to: 1 MiB}
                candidates:
                  - {algorithm: COLLNET_DIRECT, protocol: SIMPLE}
              - collective: ReduceScatter
                bytes: {from: 0 B, to: 1 MiB}
                candidates:
                  - {algorithm: COLLNET_DIRECT, protocol: SIMPLE}
                  - {algorithm: NVLS, protocol: SIMPLE}
                  - {algorithm: TREE, protocol: SIMPLE}
        """);
        CliRun r = CliRun.run("validate", f.toString());
        String o = r.out();
        assertEquals(
                List.of("warning: " + f
                        + ":15:13: profiles[0].rules[1] (ReduceScatter [0 B, 1 MiB)).candidates[2]: TREE/SIMPLE is never"
                        + " offered: NCCL offers only RING, PAT, NVLS and COLLNET_DIRECT for ReduceScatter (NCCL 2.23 .."
                        + " 2.30 src/graph/tuning.cc, ncclTopoTuneModel)"),
                o.lines().filter(l -> l.startsWith("warning: ")).toList(),
                o);
    }

    @Test
    void mismatchedShapeOptionsAreAUsageError() {
        CliRun r = CliRun.run(
                "validate",
                CliRun.trace("../../policies/h200-2rank-measured.yaml"),
                "--nranks",
                "2",
                "--nranks",
                "4",
                "--nnodes",
                "1",
                "--nnodes",
                "2",
                "--nnodes",
                "3");
        assertEquals(2, r.exit());
        assertEquals(
                "nccl-tuner validate: 2 --nranks but 3 --nnodes; give one --nnodes per --nranks, or one for all\n"
                        + "see 'nccl-tuner validate --help'\n",
                r.err());
    }

    /** A 16-rank policy tried on the captured 2-rank trace: its 16 AllGather calls (RING/SIMPLE by NCCL) become RING/LL. */
    @Test
    void replayUnderAnotherShape() throws Exception {
        Path f = CliRun.write(tmp, "p16.yaml", """
        schema: nccl-tuner-java/v1
        name: p16
        profiles:
          - name: sixteen
            match: {nRanks: 16, nNodes: 2}
            rules:
              - collective: AllGather
                bytes: {from: 0 B}
                candidates:
                  - {algorithm: RING, protocol: LL}
        """);
        String trace = CliRun.trace("trace_tp_infer.csv");
        CliRun as2 = CliRun.run("replay", "--trace", trace, "--policy", f.toString());
        assertEquals(0, as2.exit(), as2.err());
        assertTrue(as2.out().contains("all: 273 calls, 0 changed"), as2.out());
        CliRun as16 =
                CliRun.run("replay", "--trace", trace, "--policy", f.toString(), "--nranks", "16", "--nnodes", "2");
        assertEquals(0, as16.exit(), as16.err());
        assertTrue(
                as16.out().contains("Shape: every communicator run as nRanks=16 nNodes=2 (profile matched on it; "),
                as16.out());
        assertTrue(as16.out().contains("AllGather: 16 calls, 16 changed"), as16.out());
        assertTrue(as16.out().contains("AllReduce: 257 calls, 0 changed"), as16.out());
        assertTrue(as16.out().contains("all: 273 calls, 16 changed"), as16.out());
    }

    /**
     * Replay priced with measurements: the shipped policy on the tp_infer trace. Changed: 1 call at
     * 4 B (NCCL RING/LL unforced 4806.560 us -> RING/SIMPLE 2453.248 us) and 64 at 16 KiB (4531.264 ->
     * 2455.104 us); unchanged sizes cost the same either way (64 KiB: NCCL's RING/SIMPLE as compile
     * prices it, its unforced and forced runs pooled: 3501.904 us).
     */
    @Test
    void replayPricesWithMeasurements() {
        CliRun r = CliRun.run(
                "replay",
                "--trace",
                CliRun.trace("trace_tp_infer.csv"),
                "--policy",
                CliRun.trace("../../policies/h200-2rank-measured.yaml"),
                "--measurements",
                CliRun.fixture("h200-2rank-sweep_allreduce.rep1.csv"));
        assertEquals(0, r.exit(), r.err());
        double saved = (4806.560 - 2453.248) + 64 * (4531.264 - 2455.104);
        assertTrue(r.out().contains(String.format(java.util.Locale.ROOT, "expected saving %.1f us", saved)), r.out());
        assertTrue(r.out().contains("257 of 273 calls priced"), r.out()); // AllGather was not measured
        assertTrue(
                r.out()
                        .replaceAll(" +", " ")
                        .contains("64 KiB 65536 1 64 RING/SIMPLE 105.573 RING/SIMPLE 105.573 3501.9 3501.9 0.0"),
                r.out());
    }

    /**
     * explain --measurements: the model's pick and the policy's pick priced with the sweep (4 B: NCCL's
     * RING/LL unforced 4806.560 us, RING/SIMPLE 2453.248 us; 64 KiB: the policy keeps NCCL's
     * RING/SIMPLE, its unforced and forced runs pooled as compile prices it: 3501.904 us).
     */
    @Test
    void explainPricesWithMeasurements() {
        CliRun r = CliRun.run(
                "explain",
                "--log",
                CliRun.trace("nccl_sweep.rank0.log"),
                "--policy",
                CliRun.trace("../../policies/h200-2rank-measured.yaml"),
                "--sizes",
                "4B,64KiB",
                "--measurements",
                CliRun.fixture("h200-2rank-sweep_allreduce.rep1.csv"));
        assertEquals(0, r.exit(), r.err());
        String t = r.out().replaceAll(" +", " ");
        assertTrue(t.contains("measured NCCL us measured policy us saved us"), r.out());
        assertTrue(
                t.contains("RING/SIMPLE 4806.6 2453.2 "
                        + String.format(java.util.Locale.ROOT, "%.1f", 4806.560 - 2453.248)),
                r.out());
        assertTrue(t.contains("= 3501.9 3501.9 0.0"), r.out());
    }
}
