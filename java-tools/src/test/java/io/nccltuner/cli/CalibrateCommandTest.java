package io.nccltuner.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code nccl-tuner calibrate} end to end, as a user runs it, on two sweeps of the simulated
 * cluster's tune model (src/test/resources/calibrate/simcluster-tune: `nccl-tuner sweep --binary
 * build/tests/simcluster`, SIMCLUSTER_MODEL=tune, 16 ranks on 2 nodes and 32 ranks on 4 nodes,
 * AllReduce 4 B .. 1 GiB by x8, TREE and RING x LL, LL128, SIMPLE, one replicate). The model's
 * truth (tests/simcluster/tunemodel.h) differs from NCCL's defaults in two constants,
 * perChMaxTreeBws.HOPPER.4NODES (12 GB/s, not 36) and hwLatencies.NET.TREE.LL (10 us, not 5):
 * the fit finds both near their truth, a profile per measured shape is matched by its own nRanks
 * and nNodes, and the calibrated profile covers the shapes nobody swept.
 */
class CalibrateCommandTest {
    @TempDir
    static Path tmp;

    static CliRun run;
    static String policy;

    static String sweep(String name) {
        try {
            return Path.of(CalibrateCommandTest.class
                            .getResource("/calibrate/simcluster-tune/" + name)
                            .toURI())
                    .toString();
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    @BeforeAll
    static void calibrate() throws Exception {
        Path out = tmp.resolve("calibrated.yaml");
        run = CliRun.run(
                "calibrate", sweep("sweep-2nodes"), sweep("sweep-4nodes"), "-o", out.toString(), "--no-match-gpu");
        assertEquals(0, run.exit(), run.out() + run.err());
        policy = Files.readString(out);
    }

    /** The profiles of the written policy, by name: each one's text up to the next profile. */
    static Map<String, String> profiles() {
        Map<String, String> out = new LinkedHashMap<>();
        Matcher m = Pattern.compile("(?m)^  - name: (\\S+)\\n").matcher(policy);
        int start = -1;
        String name = null;
        while (m.find()) {
            if (name != null) {
                out.put(name, policy.substring(start, m.start()));
            }
            name = m.group(1);
            start = m.end();
        }
        if (name != null) {
            out.put(name, policy.substring(start));
        }
        return out;
    }

    static double constant(String profile, String name) {
        Matcher m = Pattern.compile("(?m)^      " + Pattern.quote(name) + ": ([0-9.]+)$")
                .matcher(profiles().get(profile));
        assertTrue(m.find(), name + " not in profile " + profile + ":\n" + policy);
        return Double.parseDouble(m.group(1));
    }

    @Test
    void readsEachSweepsShape() {
        assertTrue(
                run.out()
                        .contains("sweep-2nodes: 16 ranks on 2 nodes, cc 9.0, Intel CPU, 10 sizes; the model at"
                                + " NCCL's defaults reproduces the logged table"),
                run.out());
        assertTrue(run.out().contains("sweep-4nodes: 32 ranks on 4 nodes, cc 9.0, Intel CPU, 10 sizes;"), run.out());
        assertEquals("", run.err());
    }

    @Test
    void aProfilePerMeasuredShapeMatchedByItsRanksAndNodes() {
        Map<String, String> p = profiles();
        assertEquals(List.of("nRanks16-nNodes2", "nRanks32-nNodes4", "calibrated"), List.copyOf(p.keySet()), policy);
        assertTrue(p.get("nRanks16-nNodes2").startsWith("    match: {nRanks: 16, nNodes: 2}\n"), policy);
        assertTrue(p.get("nRanks32-nNodes4").startsWith("    match: {nRanks: 32, nNodes: 4}\n"), policy);
        assertTrue(p.get("calibrated").startsWith("    match: {nRanks: any, nNodes: {min: 2}}\n"), policy);
        assertTrue(run.out().contains("calibrated profile for nNodes 2..)"), run.out());
    }

    @Test
    void fitsTheTwoConstantsTheTruthChanged() {
        for (String profile : List.of("nRanks16-nNodes2", "nRanks32-nNodes4", "calibrated")) {
            double treeBw = constant(profile, "perChMaxTreeBws.HOPPER.4NODES");
            assertTrue(treeBw > 11 && treeBw < 13, profile + ": truth 12 GB/s (NCCL's 36), fitted " + treeBw);
            double treeLat = constant(profile, "hwLatencies.NET.TREE.LL");
            assertTrue(treeLat > 8.5 && treeLat < 11.5, profile + ": truth 10 us (NCCL's 5), fitted " + treeLat);
        }
        for (String name : List.of("perChMaxTreeBws.HOPPER.4NODES", "hwLatencies.NET.TREE.LL")) {
            // the report's fitted column (three significant digits) and the policy's value (two decimals)
            Matcher m = Pattern.compile(
                            "(?m)^  " + Pattern.quote(name) + "\\s+\\S+ (?:us|GB/s)\\s+([0-9.]+) (?:us|GB/s)")
                    .matcher(run.out());
            assertTrue(m.find(), name + " not in the report:\n" + run.out());
            double reported = Double.parseDouble(m.group(1));
            double written = constant("calibrated", name);
            assertEquals(reported, written, reported * 0.005, name + ": reported " + reported + ", written " + written);
        }
        assertTrue(
                run.out().contains("Measured crossovers: 5; NCCL's defaults reproduce 3, the calibrated model 5"),
                run.out());
    }

    /**
     * At 4 nodes the measured rules the calibrated model ties stay for tuner v3/v4 (which set no
     * constants): NCCL_ALGO_TREE / NCCL_PROTO_LL128 from 128 KiB, NCCL_ALGO_RING / NCCL_PROTO_LL128
     * from 8 MiB, where NCCL's defaults pick Tree/LL and Tree/LL128.
     */
    @Test
    void keepsTheMeasuredRulesTheModelTies() {
        String p4 = profiles().get("nRanks32-nNodes4");
        assertTrue(
                p4.contains("      - collective: AllReduce\n        bytes: {from: 128 KiB, to: 1 MiB}\n"
                        + "        numPipeOps: 1\n        ncclPick: {algorithm: TREE, protocol: LL}\n"),
                p4);
        assertTrue(p4.contains("          - {algorithm: TREE, protocol: LL128, regret: 0.0}\n"), p4);
        assertTrue(
                p4.contains("      - collective: AllReduce\n        bytes: {from: 8 MiB, to: 64 MiB}\n"
                        + "        numPipeOps: 1\n        ncclPick: {algorithm: TREE, protocol: LL128}\n"),
                p4);
        assertTrue(p4.contains("          - {algorithm: RING, protocol: LL128, regret: 0.0}\n"), p4);
        assertTrue(profiles().get("nRanks16-nNodes2").contains("    rules: []\n"), policy);
        // each rule judged by the calibrated model at its own shape (32 ranks on 4 nodes): a tie
        assertTrue(
                run.out()
                        .contains("Measured rules: 2 kept (0 beat the calibrated model, 2 tie it: the fallback under"
                                + " tuner v3/v4, which sets no constants), 0 dropped"),
                run.out());
        assertTrue(
                run.out().contains("  kept nRanks32-nNodes4: AllReduce [128 KiB, 1 MiB) TREE/LL128 (ties it)\n"),
                run.out());
        assertTrue(
                run.out().contains("  kept nRanks32-nNodes4: AllReduce [8 MiB, 64 MiB) RING/LL128 (ties it)\n"),
                run.out());
    }
}
