package io.nccltuner.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The ninth newcomer walk's frictions in {@code explain}: a {@code nccl-tuner sweep} folder measured
 * on another NCCL release or GPU than the log drew no warning, where one of its outputs given alone
 * did (its outputs are in {@code runs/}, one level down); several {@code --measurements} were
 * compared as one set, so a foreign one beside one of the log's machine was not named; and {@code
 * explain --policy} said "changes NCCL's algorithm/protocol at 0 of N sizes" with no why.
 */
class NewcomerNinthWalkExplainTest {
    @TempDir
    Path tmp;

    /** The two-rank H200 log, NCCL 2.28.9, no GPU names (cc unknown unless given). */
    private static final String LOG = CliRun.trace("nccl_sweep.rank0.log");

    private static final String COMM = "communicator comm 0xc23bec0 (host vm, pid 746) of " + LOG;

    /**
     * A sweep folder as `sweep` writes it (manifest.json, runs/*.txt): the simcluster's two-node
     * H100 sweep, its outputs rewritten to say NCCL {@code version} (nccl-library and NCCL's line).
     */
    private Path sweepFolder(String name, String version, int code) throws Exception {
        Path src = CliRun.REPO.resolve("java-tools/src/test/resources/calibrate/simcluster-tune/sweep-2nodes");
        Path dir = tmp.resolve(name);
        Files.createDirectories(dir.resolve("runs"));
        Files.copy(src.resolve("manifest.json"), dir.resolve("manifest.json"));
        try (var runs = Files.list(src.resolve("runs"))) {
            for (Path f : runs.toList()) {
                Files.writeString(
                        dir.resolve("runs").resolve(f.getFileName()),
                        Files.readString(f)
                                .replace("nccl-library=22809", "nccl-library=" + code)
                                .replace("NCCL version 2.28.9", "NCCL version " + version));
            }
        }
        return dir;
    }

    private static List<String> otherMachineLines(String err) {
        return err.lines()
                .filter(l -> l.contains(": measured with NCCL ") || l.contains(": measured on "))
                .toList();
    }

    @Test
    void aSweepFolderOfAnotherMachineWarnsAsItsOutputAloneDoes() throws Exception {
        Path dir = sweepFolder("sweep-2.27", "2.27.7", 22707);
        Path one = dir.resolve("runs/all_reduce_NCCL_r1.txt");
        List<String> args = List.of(
                "explain", "--log", LOG, "--sizes", "1MiB", "--compute-capability", "80", "--collective", "all");
        CliRun file = CliRun.run(args, "--measurements", one.toString());
        CliRun folder = CliRun.run(args, "--measurements", dir.toString());
        assertEquals(0, file.exit(), file.err());
        assertEquals(0, folder.exit(), folder.err());
        String release = ": measured with NCCL 2.27.7, but " + COMM
                + " runs NCCL 2.28.9; the times may not hold for this release's picks";
        String gpu = ": measured on NVIDIA H100 80GB HBM3 (simulated) (compute capability 90), but communicator"
                + " comm 0xc23bec0 (host vm, pid 746) has compute capability 80; the times price another GPU";
        assertEquals(
                List.of("warning: --measurements " + one + release, "warning: --measurements " + one + gpu),
                otherMachineLines(file.err()),
                file.err());
        // the same sentences naming the folder, each once though five collectives' tables follow
        assertEquals(
                List.of("warning: --measurements " + dir + release, "warning: --measurements " + dir + gpu),
                otherMachineLines(folder.err()),
                folder.err());
    }

    @Test
    void eachForeignMeasurementsIsNamedAmongSeveral() throws Exception {
        Path ours = sweepFolder("sweep-2.28", "2.28.9", 22809);
        String foreign = CliRun.fixture("nccl-tests-2.18_broadcast_no-validation.txt"); // NCCL 2.29.7, H100
        CliRun r = CliRun.run(
                "explain",
                "--log",
                LOG,
                "--sizes",
                "1MiB",
                "--measurements",
                ours.toString(),
                "--measurements",
                foreign);
        assertEquals(0, r.exit(), r.err());
        assertEquals(
                List.of("warning: --measurements " + foreign + ": measured with NCCL 2.29.7, but " + COMM
                        + " runs NCCL 2.28.9; the times may not hold for this release's picks"),
                otherMachineLines(r.err()),
                r.err());
    }

    /** Rules for the log's shape that change nothing: one NCCL does not offer, one NCCL's own pick. */
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
                        bytes: {from: 0 B, to: 8 KiB}
                        candidates:
                          - {algorithm: NVLS, protocol: SIMPLE}
                      - collective: AllReduce
                        bytes: {from: 1 MiB, to: 4 MiB}
                        candidates:
                          - {algorithm: NVLS, protocol: SIMPLE}
                          - {algorithm: RING, protocol: SIMPLE}
                """);
    }

    @Test
    void aPolicyThatChangesNothingSaysWhyAtEachSize() throws Exception {
        Path p = keepingPolicy();
        CliRun r =
                CliRun.run("explain", "--log", LOG, "--policy", p.toString(), "--sizes", "1KiB,4KiB,16KiB,2MiB,64MiB");
        assertEquals(0, r.exit(), r.err());
        String out = r.out();
        int at = out.indexOf("The policy changes NCCL's algorithm/protocol at 0 of 5 sizes");
        assertTrue(at >= 0, out);
        List<String> lines = out.substring(at).lines().limit(4).toList();
        assertEquals(
                List.of(
                        "The policy changes NCCL's algorithm/protocol at 0 of 5 sizes ('=' keeps NCCL's pick).",
                        "Kept NCCL's pick (=) at 2 sizes (1 KiB, 4 KiB): rule profiles[0].rules[0] (candidates"
                                + " NVLS/SIMPLE) matched, but NCCL offers none of them there (their cost-table entries"
                                + " are -1; NCCL offers TREE/LL TREE/SIMPLE RING/LL RING/SIMPLE).",
                        "Kept NCCL's pick (=) at 2 sizes (16 KiB, 64 MiB): no rule of profile two-ranks covers"
                                + " AllReduce there with numPipeOps 1 (its AllReduce rules: 0 B .. 8 KiB, 1 MiB .. 4"
                                + " MiB).",
                        "Kept NCCL's pick (=) at 1 size (2 MiB): rule profiles[0].rules[1] (candidates NVLS/SIMPLE"
                                + " RING/SIMPLE) matched, and the first of them NCCL offers, RING/SIMPLE, is already"
                                + " NCCL's pick."),
                lines,
                out);
    }

    @Test
    void shadowAndOffModesSayTheyLeaveTheTable() throws Exception {
        Path p = keepingPolicy();
        CliRun shadow =
                CliRun.run("explain", "--log", LOG, "--policy", p.toString(), "--sizes", "2MiB", "--mode", "shadow");
        assertEquals(0, shadow.exit(), shadow.err());
        assertTrue(
                shadow.out()
                        .contains("\nKept NCCL's pick (=) at 1 size (2 MiB): rule profiles[0].rules[1] (candidates"
                                + " NVLS/SIMPLE RING/SIMPLE) matched, but the policy runs in shadow mode, which leaves"
                                + " NCCL's cost table as it is (--mode enforce applies it).\n"),
                shadow.out());
        CliRun off =
                CliRun.run("explain", "--log", LOG, "--policy", p.toString(), "--sizes", "4KiB:64KiB", "--mode", "off");
        assertEquals(0, off.exit(), off.err());
        assertTrue(
                off.out()
                        .contains("\nKept NCCL's pick (=) at 5 sizes, 4 KiB .. 64 KiB: the policy runs in off mode,"
                                + " which leaves every call to NCCL (--mode enforce applies it).\n"),
                off.out());
    }

    @Test
    void aShapeNoProfileMatchesKeepsItsOneVerdictLine() throws Exception {
        Path p = CliRun.write(
                tmp,
                "other-shape.yaml",
                Files.readString(keepingPolicy()).replace("{nRanks: 2, nNodes: 2}", "{nRanks: 16, nNodes: 2}"));
        CliRun r = CliRun.run("explain", "--log", LOG, "--policy", p.toString(), "--sizes", "2MiB");
        assertEquals(0, r.exit(), r.err());
        assertTrue(
                r.out()
                        .contains("explain: the policy changes nothing: no profile matches nRanks=2 nNodes=2 (the log's"
                                + " communicator); its profiles: two-ranks (nRanks=16 nNodes=2)."),
                r.out());
        assertTrue(!r.out().contains("Kept NCCL's pick"), r.out());
    }
}
