package io.nccltuner.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The tenth newcomer walk's findings in compile's input warnings (issue 21): warnings of one file's
 * tables that differ only in a count or the table's values are one line ({@code FILE:16,70: ...}).
 */
@Timeout(240)
class NewcomerTenthWalkTest {
    @TempDir
    Path tmp;

    /** One superbench-style log: a '# ===== nccl_NAME.log' line, a run header, 8 ranks on one host. */
    static String log(String name, String collective, int zeroRows) {
        StringBuilder b = new StringBuilder();
        b.append("# ===== tests/data/nccl_").append(name).append(".log\n");
        b.append("# nThread 1 nGpus 8 minBytes 1 maxBytes 4096 step: 2(factor) warmup iters: 5 iters: 20 "
                + "validation: 0\n#\n# Using devices\n");
        for (int r = 0; r < 8; r++) {
            b.append("#   Rank  ")
                    .append(r)
                    .append(" Pid 112424 on localhost device  ")
                    .append(r)
                    .append(" [0x00] A100-SXM4-40GB\n");
        }
        b.append("#\n#                                             out-of-place                       in-place\n");
        b.append(
                "#       size         count    type     time   algbw   busbw  error     time   algbw   busbw  error\n");
        b.append("#        (B)    (elements)             (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)\n");
        for (int i = 0; i < zeroRows; i++) {
            b.append(
                    "           0             0   float    34.27    0.00    0.00    N/A    33.57    0.00    0.00    N/A\n");
        }
        for (long size = 1024; size <= 4096; size *= 2) {
            double us = 35.0 + size / 1024.0;
            double algbw = size / us / 1000.0;
            double busbw = algbw * (collective.equals("AllReduce") ? 2.0 * 7 / 8 : 7.0 / 8);
            b.append(String.format(
                    java.util.Locale.ROOT,
                    "  %10d  %12d   float  %7.2f  %6.2f  %6.2f    N/A  %7.2f  %6.2f  %6.2f    N/A%n",
                    size,
                    size / 4,
                    us,
                    algbw,
                    busbw,
                    us,
                    algbw,
                    busbw));
        }
        b.append("# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 0.1\n#\n");
        return b.toString();
    }

    /**
     * Item 1 (walk point 8). Before: {@code 2 rows of 0 bytes skipped ... (2 times in 1 file: FILE:16,
     * FILE:...)} and a {@code collective X read from line N} line per table.
     */
    @Test
    void aFilesTablesWarningsAreOneLineEach() throws Exception {
        String text = "# Source: two superbench logs concatenated\n"
                + log("allgather", "AllGather", 2) + log("reducescatter", "ReduceScatter", 5)
                + log("broadcast", "Broadcast", 2);
        Path f = CliRun.write(tmp, "superbench-testdata.txt", text);
        CliRun r = CliRun.run(
                "compile",
                f.toString(),
                "--allow-empty",
                "-o",
                tmp.resolve("p.yaml").toString());
        assertEquals(0, r.exit(), r.err());
        assertEquals(
                1,
                r.out()
                                .split(
                                        java.util.regex.Pattern.quote(
                                                "\n  " + f + ":16,40,67: 9 rows of 0 bytes skipped (NCCL "
                                                        + "does not call the tuner for empty collectives) (2, 5, 2 at those lines)\n"),
                                        -1)
                                .length
                        - 1,
                r.out());
        assertEquals(
                1,
                r.out()
                                .split(
                                        java.util.regex.Pattern.quote(
                                                "\n  " + f + ":16,40,67: each table's collective read "
                                                        + "from the one collective named before it: line 2 (AllGather), line 26 "
                                                        + "(ReduceScatter), line 53 (Broadcast); pass --in " + f
                                                        + " --collective NAME if that is wrong\n"),
                                        -1)
                                .length
                        - 1,
                r.out());
        assertEquals(-1, r.out().indexOf("times in 1 file"), r.out());
    }

    /**
     * Item 4. Before: {@code (srun -l '0: ', mpirun --tag-output '[1,0]<stdout>:', Ray '(head, rank=0,
     * pid=3808)')} for a file whose lines carry only srun's prefix.
     */
    @Test
    void theLauncherPrefixWarningNamesOnlyTheKindsFound() {
        String f = CliRun.fixture("inputs/srun-l-prefixed_all_reduce.txt");
        CliRun r = CliRun.run("compile", f);
        assertEquals(0, r.exit(), r.err());
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("\n  " + java.util.regex.Pattern.quote(f)
                        + ": \\d+ lines carry a launcher prefix \\(([^)]*)\\); read without it\n")
                .matcher(r.out());
        assertEquals(true, m.find(), r.out());
        assertEquals("srun -l '0: '", m.group(1), r.out());
    }

    /**
     * Walk 10: a sweep interrupted at some runs, compiled, put "replicates" first under "collect
     * next" and said "3 of 6 runs not finished" only among the warnings; finishing the sweep is now
     * the first thing to collect.
     */
    @Test
    void anUnfinishedSweepIsTheFirstThingToCollect() throws Exception {
        Path src = CliRun.REPO.resolve("java-tools/src/test/resources/calibrate/simcluster-tune/sweep-2nodes");
        Path dir = tmp.resolve("cut-sweep");
        java.nio.file.Files.createDirectories(dir.resolve("runs"));
        java.nio.file.Files.copy(src.resolve("manifest.json"), dir.resolve("manifest.json"));
        java.util.List<Path> runs;
        try (var s = java.nio.file.Files.list(src.resolve("runs"))) {
            runs = s.sorted().toList();
        }
        for (Path f : runs.subList(1, runs.size())) { // the first run's output missing: not finished
            java.nio.file.Files.copy(f, dir.resolve("runs").resolve(f.getFileName()));
        }
        CliRun r = CliRun.run("compile", dir.toString());
        assertEquals(0, r.exit(), r.err());
        int at = r.out().indexOf("collect next:\n  - ");
        assertEquals(true, at >= 0, r.out());
        String first = r.out()
                .substring(at + "collect next:\n  - ".length())
                .lines()
                .findFirst()
                .orElse("");
        assertEquals(
                "finish the sweep: " + dir + ": 1 of " + runs.size() + " runs not finished: run the same `nccl-tuner"
                        + " sweep` command again (it skips the runs done), then compile again",
                first,
                r.out());
    }
}
