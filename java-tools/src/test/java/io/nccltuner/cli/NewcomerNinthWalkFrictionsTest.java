package io.nccltuner.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The ninth newcomer walk's small frictions (issue 21) in show, report, try, replay, sweep, import
 * and validate: {@code show --ranks N} refused though try and compile take {@code --ranks}.
 */
class NewcomerNinthWalkFrictionsTest {
    @TempDir
    Path tmp;

    /** The show output's lines from the first shape on (the header names the temporary file). */
    private static String shapes(String out) {
        return out.substring(out.indexOf("\nnRanks=") + 1);
    }

    /** Item 1: show takes --ranks as --nranks; the same shapes. */
    @Test
    void showTakesRanksAsNranks() throws Exception {
        Path p = CliRun.write(tmp, "mixed.yaml", NewcomerEighthWalkShowTest.MIXED);
        CliRun ranks = CliRun.run("show", p.toString(), "--ranks", "2", "--nodes", "2", "--gpu", "NVIDIA H200");
        CliRun nranks = CliRun.run("show", p.toString(), "--nranks", "2", "--nodes", "2", "--gpu", "NVIDIA H200");
        assertEquals(0, ranks.exit(), ranks.err());
        assertEquals("", ranks.err());
        assertEquals(nranks.out(), ranks.out());
        assertEquals(
                "nRanks=2 nNodes=2: profile h200-2node (profiles[0], 1 rule)\n"
                        + "  collective  bytes         decision\n"
                        + "  AllReduce   [0 B, 1 MiB)  RING/SIMPLE\n"
                        + "  AllReduce   [1 MiB, inf)  NCCL decides\n"
                        + "  Broadcast, Reduce, AllGather, ReduceScatter: NCCL decides at every size\n",
                shapes(ranks.out()));
    }

    /** Item 1: a usage error names the spelling typed: --ranks, --nnodes; exit 2. */
    @Test
    void showUsageErrorsNameTheSpellingTyped() throws Exception {
        Path p = CliRun.write(tmp, "mixed.yaml", NewcomerEighthWalkShowTest.MIXED);
        CliRun notMultiple = CliRun.run("show", p.toString(), "--ranks", "12", "--nnodes", "8");
        assertEquals(2, notMultiple.exit(), notMultiple.err());
        assertEquals(
                "nccl-tuner show: --ranks 12 is not a multiple of --nnodes 8: every node has the same number of ranks"
                        + " (--ranks-per-node LIST gives them per node)\nsee 'nccl-tuner show --help'\n",
                notMultiple.err());
        CliRun both = CliRun.run("show", p.toString(), "--ranks=16", "--ranks-per-node", "8");
        assertEquals(2, both.exit(), both.err());
        assertEquals(
                "nccl-tuner show: --ranks and --ranks-per-node: give one (--ranks N is N / nNodes ranks per node)\n"
                        + "see 'nccl-tuner show --help'\n",
                both.err());
        CliRun zero = CliRun.run("show", p.toString(), "--ranks", "0");
        assertEquals(2, zero.exit(), zero.err());
        assertEquals("nccl-tuner show: --ranks: must be at least 1, got 0\nsee 'nccl-tuner show --help'\n", zero.err());
        CliRun nodes = CliRun.run("show", p.toString(), "--nnodes", "x");
        assertEquals(2, nodes.exit(), nodes.err());
        assertEquals(
                "nccl-tuner show: --nnodes: 'x' is not a count or A..B\nsee 'nccl-tuner show --help'\n", nodes.err());
        // the name written as the help lists it
        CliRun nranks = CliRun.run("show", p.toString(), "--nranks", "12", "--nodes", "8");
        assertEquals(
                "nccl-tuner show: --nranks 12 is not a multiple of --nodes 8: every node has the same number of ranks"
                        + " (--ranks-per-node LIST gives them per node)\nsee 'nccl-tuner show --help'\n",
                nranks.err());
    }
}
