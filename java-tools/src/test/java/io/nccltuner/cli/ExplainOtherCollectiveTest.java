package io.nccltuner.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 21 (sixth walk), item 3: explain on the log of a job that ran only Broadcast explained
 * AllReduce (its default --collective) and said only "No selection lines for these sizes in the
 * log."; now it names the collectives the log's selection lines are of and the --collective that
 * explains them.
 */
class ExplainOtherCollectiveTest {
    @TempDir
    Path tmp;

    /** The first lines of an NCCL 2.28.9 INFO log (nRanks 2, nNodes 2, one communicator) and its table. */
    static final String HEAD = """
            nodeA:100:100 [0] NCCL INFO NCCL version 2.28.9+cuda13.0
            nodeA:100:100 [0] NCCL INFO comm 0x5a0 rank 0 nRanks 2 nNodes 2 localRanks 1 localRank 0 MNNVL 0
            nodeA:100:100 [0] NCCL INFO   Algorithm   |                            Tree                  |                            Ring                  |                   CollNetDirect                  |
            nodeA:100:100 [0] NCCL INFO   Protocol    |             LL |          LL128 |         Simple |             LL |          LL128 |         Simple |             LL |          LL128 |         Simple |
            nodeA:100:100 [0] NCCL INFO  Max NThreads |            512 |            640 |            512 |            512 |            640 |            256 |              0 |              0 |            640 |
            nodeA:100:100 [0] NCCL INFO     Broadcast |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |     9.3/   0.6 |    18.0/   0.0 |    22.4/   1.2 |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |
            nodeA:100:100 [0] NCCL INFO        Reduce |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |     9.3/   0.6 |    18.0/   0.0 |    22.4/   1.2 |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |
            nodeA:100:100 [0] NCCL INFO     AllGather |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |    11.6/   1.2 |    22.5/   0.0 |    22.4/   2.4 |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |
            nodeA:100:100 [0] NCCL INFO ReduceScatter |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |    11.6/   1.2 |    22.5/   0.0 |    22.4/   2.4 |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |
            nodeA:100:100 [0] NCCL INFO     AllReduce |    16.8/   0.2 |    31.0/   0.0 |    36.4/   0.9 |    16.6/   0.6 |    31.0/   0.0 |    36.4/   1.2 |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |
            nodeA:100:100 [0] NCCL INFO   Algorithm   |                    CollNetChain                  |                            NVLS                  |                        NVLSTree                  |
            nodeA:100:100 [0] NCCL INFO   Protocol    |             LL |          LL128 |         Simple |             LL |          LL128 |         Simple |             LL |          LL128 |         Simple |
            nodeA:100:100 [0] NCCL INFO  Max NThreads |              0 |              0 |            640 |              0 |              0 |            640 |              0 |              0 |            640 |
            nodeA:100:100 [0] NCCL INFO     Broadcast |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |
            nodeA:100:100 [0] NCCL INFO        Reduce |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |
            nodeA:100:100 [0] NCCL INFO     AllGather |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |
            nodeA:100:100 [0] NCCL INFO ReduceScatter |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |
            nodeA:100:100 [0] NCCL INFO     AllReduce |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |
            nodeA:100:100 [0] NCCL INFO   Algorithm   |                             PAT                  |
            nodeA:100:100 [0] NCCL INFO   Protocol    |             LL |          LL128 |         Simple |
            nodeA:100:100 [0] NCCL INFO  Max NThreads |              0 |              0 |              0 |
            nodeA:100:100 [0] NCCL INFO     Broadcast |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |
            nodeA:100:100 [0] NCCL INFO        Reduce |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |
            nodeA:100:100 [0] NCCL INFO     AllGather |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |
            nodeA:100:100 [0] NCCL INFO ReduceScatter |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |
            nodeA:100:100 [0] NCCL INFO     AllReduce |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |
            nodeA:100:100 [0] NCCL INFO 2 coll channels, 2 collnet channels, 0 nvls channels, 2 p2p channels, 2 p2p channels per peer
            """;

    /** A selection line as NCCL 2.24+ prints it (src/enqueue.cc): {@code Broadcast: 1024 Bytes -> Algo RING ...}. */
    static String selection(String collective, long nBytes, String algorithm, String protocol) {
        return "nodeA:100:100 [0] NCCL INFO " + collective + ": " + nBytes + " Bytes -> Algo " + algorithm + " proto "
                + protocol + " channel{Lo..Hi}={0..0}\n";
    }

    private Path log(String selections) throws Exception {
        return CliRun.write(tmp, "nccl.rank0.log", HEAD + selections);
    }

    private static String line(String out, String start) {
        return out.lines()
                .filter(l -> l.startsWith(start))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no line starting '" + start + "' in\n" + out));
    }

    @Test
    void aBroadcastOnlyLogNamesBroadcastAndTheCollectiveOption() throws Exception {
        Path log = log(selection("Broadcast", 1024, "RING", "LL")
                + selection("Broadcast", 1024, "RING", "LL")
                + selection("Broadcast", 4096, "RING", "LL"));
        CliRun r = CliRun.run("explain", "--log", log.toString(), "--sizes", "1KiB:4KiB");
        assertEquals(0, r.exit(), r.err());
        assertEquals("", r.err());
        assertTrue(
                r.out().contains("\nAllReduce, numPipeOps 1: predicted time per candidate, microseconds\n"), r.out());
        assertEquals(
                "No AllReduce selection lines in the log: its selection lines are of Broadcast (3 lines); explain "
                        + "those with --collective Broadcast.",
                line(r.out(), "No "));

        // the option it names explains them: the model's RING/LL is the logged pick at both sizes
        CliRun b = CliRun.run("explain", "--log", log.toString(), "--sizes", "1KiB:4KiB", "--collective", "Broadcast");
        assertEquals(0, b.exit(), b.err());
        assertEquals(
                "Selection lines for 2 sizes: model pick = logged pick at all 2 (lines do not say numPipeOps; those of "
                        + "grouped calls may differ).",
                line(b.out(), "Selection lines"));
        assertTrue(b.out().lines().noneMatch(l -> l.startsWith("No ")), b.out());
    }

    @Test
    void aLogOfTwoOtherCollectivesNamesBothAndAll() throws Exception {
        Path log = log(selection("Broadcast", 1024, "RING", "LL") + selection("AllGather", 2048, "RING", "LL"));
        CliRun r = CliRun.run("explain", "--log", log.toString(), "--sizes", "1KiB");
        assertEquals(0, r.exit(), r.err());
        assertEquals(
                "No AllReduce selection lines in the log: its selection lines are of Broadcast (1 line), AllGather (1 "
                        + "line); explain those with --collective Broadcast, --collective AllGather or --collective all.",
                line(r.out(), "No "));
    }

    /** Item 2: at one size the policy's line says "of 1 size". */
    @Test
    void thePolicysLineAtOneSizeSaysSize() throws Exception {
        Path log = log(selection("Broadcast", 1024, "RING", "LL"));
        String policy = Path.of(System.getProperty("nccltj.repo", ".."))
                .resolve("policies/h200-2rank.yaml")
                .toString();
        CliRun r = CliRun.run("explain", "--log", log.toString(), "--sizes", "1KiB", "--policy", policy);
        assertEquals(0, r.exit(), r.err());
        assertEquals(
                "The policy changes NCCL's algorithm/protocol at 1 of 1 size ('=' keeps NCCL's pick).",
                line(r.out(), "The policy changes"));
    }

    /** Where the log has lines of the collective at other sizes, or none at all, the line is as before. */
    @Test
    void linesOfTheCollectiveAtOtherSizesOrNoneAtAllKeepTheOldLine() throws Exception {
        for (String selections : List.of(selection("AllReduce", 65536, "RING", "SIMPLE"), "")) {
            CliRun r = CliRun.run("explain", "--log", log(selections).toString(), "--sizes", "1KiB");
            assertEquals(0, r.exit(), r.err());
            assertEquals("No selection lines for these sizes in the log.", line(r.out(), "No "), selections);
        }
    }
}
