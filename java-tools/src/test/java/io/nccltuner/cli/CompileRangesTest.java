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
 * Issue 21, point 10's neighbour: the expected regret per range counts only the sizes where NCCL's
 * own pick was compared with a forced candidate, and a group with no such size prints no ranges.
 * Before, a size with NCCL's runs and no candidate counted as 0% regret (NCCL against itself), so a
 * group where nothing was compared printed {@code NCCL's pick 0.00% +- 0.00%}, and one where NCCL's
 * pick was never timed {@code NCCL's pick not measured}, each under the heading that explains the
 * mean and spread.
 */
@Timeout(120)
class CompileRangesTest {
    @TempDir
    Path tmp;

    private static final String HEADER = "collective,size_bytes,algorithm,protocol,max_channels,ranks,nodes,config,"
            + "replicate,median_us,p95_us,busbw_gbps,wrong\n";

    private Path csv(String name, String rows) throws Exception {
        Path f = tmp.resolve(name);
        Files.writeString(f, HEADER + rows);
        return f;
    }

    /** 1 MiB: NCCL 110 us, RING/LL 100 us (regret 10%); 2 MiB: NCCL alone, nothing to compare it with. */
    @Test
    void aSizeWithoutACandidateDoesNotCountAsZeroRegret() throws Exception {
        Path f = csv(
                "mixed.csv",
                "AllReduce,1048576,auto,auto,auto,2,1,auto,1,110.0,110.0,0,0\n"
                        + "AllReduce,1048576,Ring,LL,auto,2,1,ring_ll,1,100.0,100.0,0,0\n"
                        + "AllReduce,2097152,auto,auto,auto,2,1,auto,1,200.0,200.0,0,0\n");
        CliRun r = CliRun.run("compile", f.toString(), "--threshold", "50", "--summary");
        assertEquals(0, r.exit(), r.out() + r.err());
        assertTrue(
                r.out()
                        .contains("\nexpected regret per range of AllReduce, nRanks 2, nNodes 1, numPipeOps 1 (mean "
                                + "over its sizes +- their spread with the replicates' CV):\n"
                                + "  [1 MiB, 2.5 MiB)     NCCL's pick          10.00% +- 0.00%\n"),
                r.out());
    }

    /**
     * 1 MiB: NCCL 110 us, RING/LL 100 us (regret 10%, NCCL's pick kept under --threshold 50); 2 MiB:
     * NCCL 200 us, RING/LL 100 us (a rule). The range of NCCL's pick spreads over its own size only,
     * not over 2 MiB, where NCCL's pick does not run.
     */
    @Test
    void aRangesSpreadLeavesOutTheNeighbourWhereItsPickDoesNotRun() throws Exception {
        Path f = csv(
                "neighbour.csv",
                "AllReduce,1048576,auto,auto,auto,2,1,auto,1,110.0,110.0,0,0\n"
                        + "AllReduce,1048576,Ring,LL,auto,2,1,ring_ll,1,100.0,100.0,0,0\n"
                        + "AllReduce,2097152,auto,auto,auto,2,1,auto,1,200.0,200.0,0,0\n"
                        + "AllReduce,2097152,Ring,LL,auto,2,1,ring_ll,1,100.0,100.0,0,0\n");
        CliRun r = CliRun.run("compile", f.toString(), "--threshold", "50", "--summary");
        assertEquals(0, r.exit(), r.out() + r.err());
        assertTrue(
                r.out()
                        .contains("  [1 MiB, 2 MiB)       NCCL's pick          10.00% +- 0.00%\n"
                                + "  [2 MiB, 2.5 MiB)     RING/LL               0.00% +- 0.00%\n"),
                r.out());
    }

    /** Candidates at 1 MiB, NCCL's pick at 2 MiB: no size compares them, so no range is estimated. */
    @Test
    void aGroupWithNothingComparedPrintsNoRanges() throws Exception {
        Path f = csv(
                "apart.csv",
                "AllReduce,1048576,Ring,LL,auto,2,1,ring_ll,1,100.0,100.0,0,0\n"
                        + "AllReduce,2097152,auto,auto,auto,2,1,auto,1,200.0,200.0,0,0\n");
        CliRun r = CliRun.run("compile", f.toString(), "--summary");
        assertEquals(0, r.exit(), r.out() + r.err());
        assertTrue(
                r.out()
                        .endsWith(
                                "\nAllReduce, nRanks 2, nNodes 1, numPipeOps 1: 2 sizes, 1 candidate, 1 replicate per "
                                        + "configuration (one run each, so no margin against noise but the jumps between "
                                        + "neighbouring sizes; repeat each run 3+ times for one)\nrules: 0\n\n"),
                r.out());
        assertFalse(r.out().contains("expected regret"), r.out());
    }

    /** Nothing forced (NCCL's own pick twice over) and forced runs only: no ranges either. */
    @Test
    void noneForcedAndNeverTimedPrintNoRanges() {
        CliRun none = CliRun.run(
                "compile",
                CliRun.fixture("plain-all_reduce_auto.txt"),
                CliRun.fixture("plain-all_reduce_ring_ll.txt"),
                "--summary");
        assertEquals(0, none.exit(), none.out() + none.err());
        assertTrue(
                none.out()
                        .contains("\nAllReduce, nRanks 2, nNodes 1, numPipeOps 1: 3 sizes, 0 candidates, 2 replicates "
                                + "per configuration\nreplicate CV (coefficient of variation) over 3 configurations "
                                + "with 2+ replicates: median 47.14%, max 47.14%\nrules: 0\n\n"),
                none.out());
        assertFalse(none.out().contains("expected regret"), none.out());
        CliRun forced = CliRun.run("compile", CliRun.fixture("inputs/optimize-config-no-auto_perf.csv"), "--summary");
        assertEquals(0, forced.exit(), forced.out() + forced.err());
        assertFalse(forced.out().contains("expected regret"), forced.out());
        assertFalse(forced.out().contains("not measured\n"), forced.out());
    }
}
