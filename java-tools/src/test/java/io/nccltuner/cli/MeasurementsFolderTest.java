package io.nccltuner.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 21 (second walk), item 5: a measurements folder as an interrupted sweep leaves it, the
 * H200 sweep CSV beside a 0-byte {@code r0003.failed.txt} and an empty {@code notes.txt}. Before,
 * {@code report --measurements DIR} exited 1 with "r0003.failed.txt: no nccl-tests size table
 * found" and {@code explain --measurements DIR} with "is a directory, not a file". Now every
 * command's {@code --measurements} reads a folder through {@link InputFiles#readMeasurementsAt},
 * skipping such files with a note each.
 */
class MeasurementsFolderTest {
    @TempDir
    Path tmp;

    private Path folder() throws Exception {
        Path d = tmp.resolve("sweep-out");
        Files.createDirectories(d);
        Files.copy(Path.of(CliRun.fixture("h200-2rank-sweep_allreduce.rep1.csv")), d.resolve("rep1.csv"));
        Files.createFile(d.resolve("r0003.failed.txt"));
        Files.writeString(d.resolve("notes.txt"), "\n  \n");
        return d;
    }

    private static String notes(Path d) {
        return "note: " + d.resolve("notes.txt")
                + ": skipped: empty (4 bytes), as an interrupted run leaves its output; "
                + "nothing to read\n"
                + "note: " + d.resolve("r0003.failed.txt")
                + ": skipped: a failed or interrupted `nccl-tuner sweep` run's output"
                + " (0 bytes); its runs are not measurements (run the sweep again to retry them)\n";
    }

    @Test
    void reportSkipsFailedAndEmptyFilesWithANote() throws Exception {
        Path d = folder();
        CliRun r = CliRun.run("report", ReportCommandTest.res("rank-a.jsonl"), "--measurements", d.toString());
        assertEquals(0, r.exit(), r.err());
        assertEquals(notes(d), r.err());
        // priced as with the CSV alone: 4 B NCCL (unforced) 4806.560 us, RING/SIMPLE 2453.248 us
        assertTrue(
                r.out()
                        .replaceAll(" +", " ")
                        .contains("AllReduce [4 B, 5 B) 3 1 RING/LL RING/SIMPLE 4 B 4806.6 2453.2"),
                r.out());
    }

    @Test
    void explainAndReplayTakeAFolderLikeReport() throws Exception {
        Path d = folder();
        CliRun e = CliRun.run(
                "explain",
                "--log",
                CliRun.trace("nccl_sweep.rank0.log"),
                "--measurements",
                d.toString(),
                "--sizes",
                "1MiB");
        assertEquals(0, e.exit(), e.err());
        // the folder's sweep CSVs name no GPU and no release: explain says so once (issue 21)
        assertEquals(notes(d) + ExplainCommand.namesNoMachine(d) + "\n", e.err());
        assertTrue(e.out().contains("measured NCCL us"), e.out());
        // NCCL's pick RING/SIMPLE at 1 MiB priced as compile prices it, its unforced runs pooled with the
        // forced ones (compile's 3591.136 us), not the forced run alone (2560.704 us)
        assertTrue(e.out().replaceAll(" +", " ").contains("RING/SIMPLE x2 yes 3591.1"), e.out());
        CliRun r = CliRun.run(
                "replay",
                "--trace",
                CliRun.trace("trace_tp_infer.csv"),
                "--policy",
                Path.of(System.getProperty("nccltj.repo", ".."))
                        .resolve("policies/h200-2rank.yaml")
                        .toString(),
                "--measurements",
                d.toString());
        assertEquals(0, r.exit(), r.err());
        assertEquals(notes(d), r.err());
        assertTrue(r.out().contains("measured (" + d + "): "), r.out());
    }

    @Test
    void aFolderOfNothingButSkippedFilesIsRefusedNamingThem() throws Exception {
        Path d = tmp.resolve("empty");
        Files.createDirectories(d);
        Files.createFile(d.resolve("r0001.failed.txt"));
        CliRun r = CliRun.run("report", ReportCommandTest.res("rank-a.jsonl"), "--measurements", d.toString());
        assertEquals(1, r.exit());
        assertTrue(
                r.err()
                        .endsWith("nccl-tuner report: " + d + ": no measurement file in this folder but the skipped "
                                + "r0001.failed.txt\n"),
                r.err());
    }
}
