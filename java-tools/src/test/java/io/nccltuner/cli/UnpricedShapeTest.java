package io.nccltuner.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Measurements of another shape than the trace's or the logs' price nothing; replay and report say
 * why (the measurements' shapes against the calls'), not only "0 of N calls priced" or "not
 * measured".
 */
@Timeout(120)
class UnpricedShapeTest {
    @TempDir
    Path tmp;

    /** The two-rank sweep relabelled as 8 ranks on one node. */
    private Path eightByOne() throws Exception {
        Path csv = tmp.resolve("sweep-8x1.csv");
        String text = Files.readString(Path.of(CliRun.fixture("h200-2rank-sweep_allreduce.rep1.csv")));
        Files.writeString(csv, text.replaceAll("(?m)^(AllReduce,\\d+,[^,]+,[^,]+,[^,]+),2,2,", "$1,8,1,"));
        assertTrue(Files.readString(csv).contains(",8,1,"));
        return csv;
    }

    @Test
    void replaySaysTheMeasurementsAreOfAnotherShape() throws Exception {
        Path csv = eightByOne();
        CliRun r = CliRun.run(
                "replay",
                "--trace",
                CliRun.trace("trace_tp_infer.csv"),
                "--policy",
                TryCommandTest.REPO.resolve("policies/h200-2rank.yaml").toString(),
                "--measurements",
                csv.toString());
        assertEquals(0, r.exit(), r.err());
        assertTrue(r.out().contains("measured (" + csv + "): 0 of 273 calls priced"), r.out());
        assertTrue(
                r.out()
                        .contains("\nnothing priced: the measurements are of nRanks=8 nNodes=1, the trace's calls of "
                                + "nRanks=2 nNodes=2; give measurements of that shape\n"),
                r.out());
    }

    @Test
    void reportSaysWhyARowIsNotMeasured() throws Exception {
        Path csv = eightByOne();
        CliRun r = CliRun.run(
                "report",
                CanaryReportCommandTest.class
                        .getResource("/report/rank-a.jsonl")
                        .getPath(),
                "--measurements",
                csv.toString());
        assertEquals(0, r.exit(), r.err());
        assertTrue(
                r.out().contains("not measured: AllReduce measured at nRanks=8 nNodes=1 only, not nRanks=2 nNodes=2\n"),
                r.out());
        assertTrue(
                r.out()
                        .contains("\nnothing priced: the measurements are of nRanks=8 nNodes=1, the logs' decisions of "
                                + "nRanks=2 nNodes=2; give measurements of that shape\n"),
                r.out());
    }
}
