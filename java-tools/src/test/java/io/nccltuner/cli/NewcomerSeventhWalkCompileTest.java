package io.nccltuner.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The seventh newcomer walk, through compile: the same data given twice, per-file counts below 1,
 * the report's repeated lines, and which form of --nodes to pass. Each test asserts what the CLI
 * prints now; its comment says what it printed before.
 */
@Timeout(240)
class NewcomerSeventhWalkCompileTest {
    @TempDir
    Path tmp;

    static final String SWEEP = CliRun.fixture("h200-2rank-sweep_allreduce.rep1.csv");

    /** The policy's YAML without its header comments (which name the inputs). */
    private static String rules(Path yaml) throws Exception {
        return Files.readAllLines(yaml).stream()
                .filter(l -> !l.startsWith("#"))
                .collect(java.util.stream.Collectors.joining("\n"));
    }

    /**
     * Item 1. Before: {@code compile E copy-of-E} counted the copy as replicates ("2 replicates per
     * configuration", replicate CV 0.00%) and compiled another policy. Now the copy is read once,
     * with a warning naming both, and the policy is the single file's.
     */
    @Test
    void aByteIdenticalCopyIsReadOnce() throws Exception {
        Path copy = tmp.resolve("copy.csv");
        Files.copy(Path.of(SWEEP), copy);
        Path one = tmp.resolve("one.yaml");
        Path two = tmp.resolve("two.yaml");
        CliRun single = CliRun.run("compile", SWEEP, "-o", one.toString(), "--name", "p");
        assertEquals(0, single.exit(), single.err());
        CliRun r = CliRun.run("compile", SWEEP, copy.toString(), "-o", two.toString(), "--name", "p");
        assertEquals(0, r.exit(), r.err());
        assertTrue(
                r.err()
                        .contains("nccl-tuner compile: warning: " + SWEEP + " and " + copy
                                + " hold the same bytes: read once\n"),
                r.err());
        assertEquals(rules(one), rules(two));
        assertTrue(r.out().contains(": 25 sizes, 6 candidates, 1 replicate per configuration"), r.out());
        assertFalse(r.out().contains(copy.toString()), r.out());
    }

    /** Item 1. Before: {@code compile E E} pooled E with itself. Now: read once. */
    @Test
    void theSameFileTwiceIsReadOnce() throws Exception {
        Path one = tmp.resolve("one.yaml");
        Path two = tmp.resolve("two.yaml");
        assertEquals(
                0,
                CliRun.run("compile", SWEEP, "-o", one.toString(), "--name", "p")
                        .exit());
        CliRun r = CliRun.run("compile", SWEEP, SWEEP, "-o", two.toString(), "--name", "p");
        assertEquals(0, r.exit(), r.err());
        assertTrue(r.err().contains("nccl-tuner compile: warning: " + SWEEP + " is given twice: read once\n"), r.err());
        assertEquals(rules(one), rules(two));
    }

    /**
     * Item 1. Before: the same nccl-tests run with another header line counted as a replicate. Now
     * the file whose every measurement equals an earlier one's is read once.
     */
    @Test
    void theSameRunsUnderAnotherHeaderAreReadOnce() throws Exception {
        String log = CliRun.fixture("gh200-8ranks-2hosts_all_reduce.txt");
        Path again = tmp.resolve("again.txt");
        Files.writeString(again, Files.readString(Path.of(log)).replace("# nThread", "# rerun of the log\n# nThread"));
        CliRun r = CliRun.run("compile", log, again.toString());
        assertEquals(0, r.exit(), r.err());
        assertTrue(
                r.err()
                        .contains("nccl-tuner compile: warning: " + log + " and " + again
                                + " hold the same runs (every measurement equal): read once\n"),
                r.err());
        assertTrue(r.out().contains(": 3 sizes, 1 candidate, 1 replicate per configuration"), r.out());
    }

    /**
     * Item 2. Before: {@code --nodes -1}, {@code --nodes 0} and {@code --ranks -4} exited 0, the
     * value ignored (0 read as not given). Now a usage error naming the option (exit 2).
     */
    @Test
    void countsBelowOneAreRefusedNamingTheOption() {
        String log = CliRun.fixture("gh200-8ranks-2hosts_all_reduce.txt");
        String[][] cases = {
            {"--nodes", "-1", "nccl-tuner compile: --nodes: -1 is not a node count: give 1 or more\n"},
            {"--nodes", "0", "nccl-tuner compile: --nodes: 0 is not a node count: give 1 or more\n"},
            {"--ranks", "-4", "nccl-tuner compile: --ranks: -4 is not a rank count: give 1 or more\n"}
        };
        for (String[] c : cases) {
            CliRun r = CliRun.run("compile", log, c[0], c[1]);
            assertEquals(2, r.exit(), r.err());
            assertEquals(c[2] + "see 'nccl-tuner compile --help'\n", r.err());
        }
        CliRun in = CliRun.run("compile", "--in", log, "--nodes", "0");
        assertEquals(2, in.exit(), in.err());
        assertTrue(
                in.err()
                        .startsWith("nccl-tuner compile: --nodes: 0 is not a node count: give 1 or more (for --in "
                                + log + ")\n"),
                in.err());
    }

    /**
     * Item 3. Before: the noise legend and the "expected regret per range (...)" heading printed once
     * per group. Now the legend once, and each group's heading names the group, the explanation at
     * the first only (the 4xV100 groups measured no forced candidate, so they print no ranges).
     */
    @Test
    void theNoiseLegendAndTheRangesExplanationPrintOnce() {
        CliRun r = CliRun.run(
                "compile",
                CliRun.fixture("gh200-8ranks-2hosts_all_reduce.txt"),
                SWEEP,
                CliRun.fixture("nccl-tests-2019_all_gather+broadcast_4xV100.txt"));
        assertEquals(0, r.exit(), r.err());
        assertEquals(1, r.out().split("\n  noise: the margin", -1).length - 1, r.out());
        assertEquals(1, r.out().split("the replicates' CV\\)", -1).length - 1, r.out());
        assertTrue(
                r.out()
                        .contains(
                                "\nexpected regret per range of AllReduce, nRanks 2, nNodes 2, numPipeOps 1 (mean over "
                                        + "its sizes +- their spread with the replicates' CV):\n"),
                r.out());
        assertTrue(
                r.out().contains("\nexpected regret per range of AllReduce, nRanks 8, nNodes 2, numPipeOps 1:\n"),
                r.out());
    }
}
