package io.nccltuner.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 21's frictions on the newcomer's path in explain and replay: {@code explain
 * --measurements} said nothing when the measurements name no GPU and no NCCL release (it could not
 * check they are of the job's machine); {@code explain --mode canary} said canary "leaves NCCL's
 * cost table as it is"; replay printed {@code 4 B (4 B)}; replay named the rule of the first
 * profile of the communicator's shape, not of the one whose hardware match holds (the engine's).
 */
class NewcomerPathIssue21Test {
    @TempDir
    Path tmp;

    /** The two-rank H200 log, NCCL 2.28.9, no GPU names. */
    private static final String LOG = CliRun.trace("nccl_sweep.rank0.log");

    /** The simcluster's sweep folder (manifest.json, runs/*.txt), its outputs with {@code keep} lines only. */
    private Path sweepFolder(String name, java.util.function.Predicate<String> keep) throws Exception {
        Path src = CliRun.REPO.resolve("java-tools/src/test/resources/calibrate/simcluster-tune/sweep-2nodes");
        Path dir = tmp.resolve(name);
        Files.createDirectories(dir.resolve("runs"));
        Files.copy(src.resolve("manifest.json"), dir.resolve("manifest.json"));
        try (var runs = Files.list(src.resolve("runs"))) {
            for (Path f : runs.toList()) {
                Files.write(
                        dir.resolve("runs").resolve(f.getFileName()),
                        Files.readAllLines(f).stream().filter(keep).toList());
            }
        }
        return dir;
    }

    private static List<String> notes(String err) {
        return err.lines()
                .filter(l -> l.contains(" names no GPU and no NCCL version"))
                .toList();
    }

    private static String note(Object path) {
        return "note: --measurements " + path + " names no GPU and no NCCL version: cannot check they are of this"
                + " job's hardware (nccl-tests outputs name both: give those, or make sure they were measured on the"
                + " log's machine)";
    }

    @Test
    void measurementsThatNameNoMachineSaySoOnce() throws Exception {
        String csv = CliRun.fixture("h200-2rank-sweep_allreduce.rep1.csv"); // a sweep CSV: neither
        CliRun file =
                CliRun.run("explain", "--log", LOG, "--sizes", "1MiB", "--collective", "all", "--measurements", csv);
        assertEquals(0, file.exit(), file.err());
        assertEquals(List.of(note(csv)), notes(file.err()), file.err()); // once, though five collectives follow
        Path silent = sweepFolder(
                "silent", l -> !l.contains("nccl-library=") && !l.contains("NCCL version") && !l.contains(" device "));
        CliRun folder = CliRun.run("explain", "--log", LOG, "--sizes", "1MiB", "--measurements", silent.toString());
        assertEquals(0, folder.exit(), folder.err());
        assertEquals(List.of(note(silent)), notes(folder.err()), folder.err());
        // a sweep folder one of whose outputs names its machine: no note
        Path named = sweepFolder("named", l -> true);
        CliRun told = CliRun.run("explain", "--log", LOG, "--sizes", "1MiB", "--measurements", named.toString());
        assertEquals(0, told.exit(), told.err());
        assertEquals(List.of(), notes(told.err()), told.err());
    }

    /** Measurements that name their GPU but no NCCL version (or the reverse) need no note. */
    @Test
    void measurementsThatNameTheirGpuOnlyNeedNoNote() throws Exception {
        Path gpuOnly = sweepFolder("gpu-only", l -> !l.contains("nccl-library=") && !l.contains("NCCL version"));
        CliRun r = CliRun.run("explain", "--log", LOG, "--sizes", "1MiB", "--measurements", gpuOnly.toString());
        assertEquals(0, r.exit(), r.err());
        assertEquals(List.of(), notes(r.err()), r.err());
    }

    /**
     * Two profiles of the log's shape, the first for another NCCL release: explain names the rule of
     * the second, the one the engine uses for the log's NCCL 2.28.9.
     */
    @Test
    void explainNamesTheRuleOfTheProfileWhoseHardwareMatches() throws Exception {
        String keeps = Files.readString(keepingPolicy());
        String profile = keeps.substring(keeps.indexOf("  - name: two-ranks"));
        Path policy = CliRun.write(
                tmp,
                "two-releases.yaml",
                keeps.replace("match: {nRanks: 2, nNodes: 2}", "match: {nRanks: 2, nNodes: 2, ncclVersion: \"2.27.3\"}")
                        + profile.replace("name: two-ranks", "name: this-release")
                                .replace(
                                        "match: {nRanks: 2, nNodes: 2}",
                                        "match: {nRanks: 2, nNodes: 2, ncclVersion: \"2.28.9\"}"));
        CliRun r = CliRun.run("explain", "--log", LOG, "--policy", policy.toString(), "--sizes", "2MiB");
        assertEquals(0, r.exit(), r.err());
        assertTrue(
                r.out()
                        .contains("Kept NCCL's pick (=) at 1 size (2 MiB): rule profiles[1].rules[0] (candidates"
                                + " NVLS/SIMPLE RING/SIMPLE) matched"),
                r.out());
        assertFalse(r.out().contains("profiles[0].rules["), r.out());
    }

    /** Rules for the log's shape that change nothing at 2 MiB: RING/SIMPLE is NCCL's own pick there. */
    private Path keepingPolicy() throws Exception {
        return CliRun.write(tmp, "keeps.yaml", """
                schema: nccl-tuner-java/v1
                name: keeps
                mode: enforce
                profiles:
                  - name: two-ranks
                    match: {nRanks: 2, nNodes: 2}
                    rules:
                      - collective: AllReduce
                        bytes: {from: 1 MiB, to: 4 MiB}
                        candidates:
                          - {algorithm: NVLS, protocol: SIMPLE}
                          - {algorithm: RING, protocol: SIMPLE}
                """);
    }

    private String keptLine(String mode) throws Exception {
        CliRun r = CliRun.run(
                "explain", "--log", LOG, "--policy", keepingPolicy().toString(), "--sizes", "2MiB", "--mode", mode);
        assertEquals(0, r.exit(), r.err());
        return r.out()
                .lines()
                .filter(l -> l.startsWith("Kept NCCL's pick"))
                .findFirst()
                .orElse(r.out());
    }

    @Test
    void eachModeSaysWhatItDoesWithTheCostTable() throws Exception {
        String rule = "Kept NCCL's pick (=) at 1 size (2 MiB): rule profiles[0].rules[0] (candidates NVLS/SIMPLE"
                + " RING/SIMPLE) matched";
        assertEquals(
                "Kept NCCL's pick (=) at 1 size (2 MiB): the policy runs in off mode, which leaves every call to NCCL"
                        + " (--mode enforce applies it).",
                keptLine("off"));
        assertEquals(
                rule + ", but the policy runs in shadow mode, which leaves NCCL's cost table as it is (--mode"
                        + " enforce applies it).",
                keptLine("shadow"));
        assertEquals(
                rule + ", and the policy runs in canary mode, which applies its candidate on a fraction 0.1 of the"
                        + " calls a rule covers (NCCL_TUNER_JAVA_CANARY, default 0.1) and keeps NCCL's pick on the"
                        + " others: these calls drew NCCL's arm (--mode enforce applies it on every call).",
                keptLine("canary"));
        assertEquals(
                rule + ", and the first of them NCCL offers, RING/SIMPLE, is already NCCL's pick.",
                keptLine("enforce"));
    }

    @Test
    void replayPrintsASizeOfBytesOnce() throws Exception {
        Path policy = CliRun.write(tmp, "unchanged.yaml", NewcomerFifthWalkTest.UNCHANGED);
        CliRun r = CliRun.run("replay", "--trace", NewcomerFifthWalkTest.TRACE, "--policy", policy.toString());
        assertEquals(0, r.exit(), r.err());
        assertTrue(
                r.out()
                        .contains("\n  AllReduce 4 B, numPipeOps 1: 1 call; rule profiles[0].rules[0] candidates"
                                + " RING/LL128; NCCL offers TREE/LL TREE/SIMPLE RING/LL RING/SIMPLE\n"),
                r.out());
        assertTrue(r.out().contains("\n  AllReduce 64 KiB (65536 B), numPipeOps 1: 64 calls;"), r.out());
        assertTrue(!r.out().matches("(?s).*\\b(\\d+) B \\(\\1 B\\).*"), r.out());
    }

    @Test
    void replayNamesTheRuleOfTheProfileWhoseHardwareMatches() throws Exception {
        // two profiles of the trace's shape, H100's first: on an H200 the engine uses the second
        String h100 = NewcomerFifthWalkTest.UNCHANGED.replace(
                "match: {nRanks: 2, nNodes: 2}", "match: {nRanks: 2, nNodes: 2, gpu: H100}");
        String h200 = NewcomerFifthWalkTest.UNCHANGED
                .substring(NewcomerFifthWalkTest.UNCHANGED.indexOf("  - name: nRanks2-nNodes2"))
                .replace("name: nRanks2-nNodes2", "name: h200")
                .replace("match: {nRanks: 2, nNodes: 2}", "match: {nRanks: 2, nNodes: 2, gpu: H200}");
        Path policy = CliRun.write(tmp, "two-gpus.yaml", h100 + h200);
        CliRun r = CliRun.run(
                "replay",
                "--trace",
                NewcomerFifthWalkTest.TRACE,
                "--policy",
                policy.toString(),
                "--gpu",
                "NVIDIA H200");
        assertEquals(0, r.exit(), r.err());
        assertTrue(
                r.out()
                        .contains(
                                "\n  AllReduce 64 KiB (65536 B), numPipeOps 1: 64 calls; rule profiles[1].rules[2]"
                                        + " candidates TREE/LL128 RING/LL128; NCCL offers TREE/LL TREE/SIMPLE RING/LL RING/SIMPLE\n"),
                r.out());
        assertTrue(!r.out().contains("profiles[0].rules["), r.out());
    }

    @Test
    void validateNamesTheYamlLineOfEachFinding() throws Exception {
        // the explain tests' policy (its one rule at line 8) and a Broadcast rule NCCL never offers
        Path policy = CliRun.write(tmp, "policy.yaml", Files.readString(keepingPolicy()) + """
                      - collective: Broadcast
                        bytes: {from: 4 KiB, to: 8 KiB}
                        candidates:
                          - {algorithm: TREE, protocol: SIMPLE}
                """);
        CliRun r = CliRun.run("validate", policy.toString());
        assertEquals(1, r.exit(), r.out() + r.err());
        List<String> found = r.out()
                .lines()
                .filter(l -> l.startsWith("error: ") || l.startsWith("warning: "))
                .toList();
        assertEquals(
                List.of(
                        "warning: " + policy + ":16:13: profiles[0].rules[1] (Broadcast [4 KiB, 8 KiB)).candidates[0]:"
                                + " TREE/SIMPLE is never offered: NCCL offers only RING for Broadcast (NCCL 2.23 .. 2.30"
                                + " src/graph/tuning.cc, ncclTopoTuneModel)",
                        "error: " + policy + ":13:9: profiles[0].rules[1] (Broadcast [4 KiB, 8 KiB)): can never apply:"
                                + " NCCL offers none of its candidates for Broadcast"),
                found,
                r.out());
    }

    @Test
    void validateNamesTheLineOfEachProfileOfAGroupedFinding() throws Exception {
        String rule = """
                    rules:
                      - collective: Broadcast
                        bytes: {from: 4 KiB, to: 8 KiB}
                        candidates:
                          - {algorithm: TREE, protocol: SIMPLE}
                """;
        Path policy = CliRun.write(tmp, "two.yaml", """
                schema: nccl-tuner-java/v1
                name: two
                mode: enforce
                profiles:
                  - name: two-ranks
                    match: {nRanks: 2, nNodes: 2}
                """ + rule + """
                  - name: four-ranks
                    match: {nRanks: 4, nNodes: 2}
                """ + rule);
        CliRun r = CliRun.run("validate", policy.toString());
        assertEquals(1, r.exit(), r.out() + r.err());
        assertTrue(
                r.out()
                        .contains(
                                "\nerror: rule (Broadcast [4 KiB, 8 KiB)) in 2 profiles (profiles[0].rules[0] two-ranks"
                                        + " (line 8), profiles[1].rules[0] four-ranks (line 15)): can never apply: NCCL offers none of"
                                        + " its candidates for Broadcast\n"),
                r.out());
    }

    /** @return each profile's compiled-table sha256, what the plugin logs at init and seeds canary draws with */
    private static List<String> sha256s(io.nccltuner.policy.Policy p) {
        return p.profiles().stream()
                .map(x -> io.nccltuner.engine.DecisionTable.compile(x).sha256())
                .toList();
    }

    @Test
    void thePluginReadsTheCsvAsImportWritesIt() throws Exception {
        // line 9 (Broadcast TREE/SIMPLE, in 3 profiles) is never offered: import leaves it out
        Path conf = Path.of(CliRun.fixture("example-tuner.conf"));
        Path yaml = tmp.resolve("e.yaml");
        assertEquals(
                0, CliRun.run("import", conf.toString(), "-o", yaml.toString()).exit());
        List<String> approximations = new java.util.ArrayList<>();
        io.nccltuner.policy.Policy plugin = io.nccltuner.policy.NcclExampleConfig.toPolicy(conf, approximations::add);
        io.nccltuner.policy.Policy imported = io.nccltuner.policy.PolicyLoader.load(yaml);
        assertEquals(3, sha256s(plugin).size());
        assertEquals(sha256s(imported), sha256s(plugin));
        assertTrue(
                approximations.contains(conf + ":9: Broadcast [0 B, 40 KiB) left out: TREE/SIMPLE is never offered"
                        + " there (NCCL offers only RING for Broadcast (NCCL 2.23 .. 2.30 src/graph/tuning.cc,"
                        + " ncclTopoTuneModel)), and NCCL's example plugin passes over a line NCCL does not offer, so"
                        + " it never applies this one either (NCCL picks there) (in 3 profiles)"),
                String.join("\n", approximations));
    }

    @Test
    void aCsvLineForAnyNumPipeOpsCoversNumPipeOpsZero() throws Exception {
        // NVIDIA's example tuner: numPipeOps -1 matches every value NCCL (or a harness) passes, 0 too
        io.nccltuner.policy.NcclExampleConfig.Result r = io.nccltuner.policy.NcclExampleConfig.convert(
                "t.conf",
                "t",
                List.of("allreduce,0,1048575,tree,ll,-1,-1,-1,4", "allreduce,0,4294967295,ring,simple,-1,-1,-1,-1"));
        io.nccltuner.policy.Policy.Profile p = r.policy().profiles().getFirst();
        for (long numPipeOps : new long[] {0, 1, 5}) {
            int i = p.ruleIndexFor(io.nccltuner.policy.Collective.AllReduce, 4096, numPipeOps, -1);
            assertTrue(i >= 0, "numPipeOps " + numPipeOps + ": " + p.rules());
            assertEquals("RING/SIMPLE", p.rules().get(i).candidatesText(), "numPipeOps " + numPipeOps);
        }
        int four = p.ruleIndexFor(io.nccltuner.policy.Collective.AllReduce, 4096, 4, -1);
        assertEquals("TREE/LL RING/SIMPLE", p.rules().get(four).candidatesText());
    }

    private static String profile(String name, String match, String candidate) {
        return "  - name: " + name + "\n    match: " + match + "\n    rules:\n      - collective: AllReduce\n"
                + "        bytes: {from: 1 MiB, to: 4 MiB}\n        candidates:\n          - " + candidate + "\n";
    }

    @Test
    void validateSaysAProfileShadowedOnEveryPossibleShapeNeverApplies() throws Exception {
        // four-any differs from four-ranks only at nNodes > nRanks, fallback from multi only at nRanks 1:
        // shapes NCCL never calls the tuner with, so neither ever applies
        Path policy = CliRun.write(
                tmp,
                "shadowed.yaml",
                "schema: nccl-tuner-java/v1\nname: shadowed\nmode: enforce\nprofiles:\n"
                        + profile("four-ranks", "{nRanks: 4, nNodes: {max: 4}}", "{algorithm: RING, protocol: SIMPLE}")
                        + profile("four-any", "{nRanks: 4, nNodes: any}", "{algorithm: RING, protocol: LL}")
                        + profile("multi", "{nRanks: {min: 2}, nNodes: any}", "{algorithm: TREE, protocol: SIMPLE}")
                        + profile("fallback", "{nRanks: any, nNodes: any}", "{algorithm: TREE, protocol: LL}"));
        CliRun r = CliRun.run("validate", policy.toString());
        assertEquals(1, r.exit(), r.out() + r.err());
        String possible = " every shape it matches that NCCL calls the tuner with (nRanks >= 2, 1 <= nNodes <= nRanks)"
                + " (the first matching profile is used)";
        assertEquals(
                List.of(
                        "error: " + policy + ":12:5: profiles[1] (four-any): can never match: profiles[0] (four-ranks)"
                                + " comes first and matches" + possible,
                        "error: " + policy + ":26:5: profiles[3] (fallback): can never match: profiles[2] (multi)"
                                + " comes first and matches" + possible),
                r.out().lines().filter(l -> l.startsWith("error: ")).toList(),
                r.out());
    }
}
