package io.nccltuner.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nccltuner.sweep.Manifest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The newcomer's sweep findings: a relative {@code --tests-dir} is the current directory's, and the
 * dry run's lines carry the variables they need, say the seed is not kept, and warn about missing
 * binaries.
 */
@Timeout(60)
class NewcomerSweepTest {
    @TempDir
    Path tmp;

    /** tmp/fakent/all_reduce_perf: a stand-in printing one size row. */
    private Path testsDir() throws Exception {
        Path d = Files.createDirectories(tmp.resolve("fakent"));
        Path bin = d.resolve("all_reduce_perf");
        Files.writeString(bin, """
        #!/bin/sh
        cat <<OUT
        # nccl-tests version 2.18.5 nccl-headers=22809 nccl-library=22809
        # Collective test starting: all_reduce_perf
        # nThread 1 nGpus 1 minBytes 1024 maxBytes 1024 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0
        #  Rank  0 Group  0 Pid   100 on      nodeA device  0 [0x18] NVIDIA H200
        #  Rank  1 Group  0 Pid   101 on      nodeA device  1 [0x19] NVIDIA H200
        #       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
        #        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
                1024           256     float     sum      -1    10.0    0.10    0.10      0    10.0    0.10    0.10      0
        # Avg bus bandwidth    : 0.10
        OUT
        """);
        Files.setPosixFilePermissions(bin, PosixFilePermissions.fromString("rwxr-xr-x"));
        return d;
    }

    private String plugin() throws Exception {
        Path p = tmp.resolve("libnccl-tuner-java.so");
        if (!Files.exists(p)) {
            Files.writeString(p, "not loaded by the fake");
        }
        return p.toString();
    }

    @Test
    void aRelativeTestsDirIsTheCurrentDirectorysNotTheOutputFolders() throws Exception {
        Path abs = testsDir();
        String rel = Path.of("").toAbsolutePath().relativize(abs).toString();
        assertFalse(Path.of(rel).isAbsolute());
        Path dir = tmp.resolve("sw");
        CliRun r = CliRun.run(
                "sweep",
                "-o",
                dir.toString(),
                "--tests-dir",
                rel,
                "--plugin",
                plugin(),
                "--candidate",
                "RING/LL",
                "--replicates",
                "1",
                "-b",
                "1K",
                "-e",
                "1K",
                "--seed",
                "7");
        assertEquals(0, r.exit(), r.err());
        assertTrue(r.out().startsWith("sweep: " + dir + ": 2 of 2 runs done"), r.out());
        Manifest m = Manifest.read(dir.resolve(Manifest.FILE));
        assertEquals(
                abs.resolve("all_reduce_perf").toString(),
                m.runs().getFirst().command().getFirst());
    }

    @Test
    void theDryRunsLinesCarryTheirEnvironmentTheSeedAndWarnOfMissingBinaries() throws Exception {
        Path dir = tmp.resolve("sw");
        String p = plugin();
        CliRun r = CliRun.run(
                "sweep",
                "-o",
                dir.toString(),
                "--tests-dir",
                tmp.resolve("nothere").toString(),
                "--plugin",
                p,
                "--candidate",
                "RING/LL",
                "--replicates",
                "1",
                "-b",
                "1K",
                "-e",
                "1K",
                "--dry-run");
        assertEquals(0, r.exit(), r.err());
        List<String> lines = r.out().lines().toList();
        String bin = tmp.resolve("nothere/all_reduce_perf").toString();
        String env = "NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,ENV,TUNING,GRAPH NCCL_TUNER_PLUGIN=" + p + " ";
        assertTrue(
                lines.contains(env + "NCCL_TUNER_JAVA_FORCE=RING/LL " + bin + " -b 1K -e 1K -f 2 -g 1 -n 20 -w 5 -c 1 "
                        + "-d float > " + dir.resolve("runs/all_reduce_RING-LL_r1.txt")),
                r.out());
        assertTrue(
                lines.contains(env + bin + " -b 1K -e 1K -f 2 -g 1 -n 20 -w 5 -c 1 -d float > "
                        + dir.resolve("runs/all_reduce_NCCL_r1.txt")),
                r.out());
        String seed = lines.getFirst().replaceFirst("^.*, seed (\\d+);.*$", "$1");
        assertEquals(
                "# seed " + seed + " was drawn for this dry run and is not kept: run with --seed " + seed
                        + " for this order (without --seed the real run draws a new one)",
                lines.getLast());
        assertEquals(
                "warning: " + bin + ": no such executable file; the runs would fail (fix --tests-dir, --binary or "
                        + "PATH)\n",
                r.err());
        assertFalse(Files.exists(dir));

        // with --seed: no seed note, and no warning where the binaries exist
        CliRun s = CliRun.run(
                "sweep",
                "-o",
                dir.toString(),
                "--tests-dir",
                testsDir().toString(),
                "--plugin",
                p,
                "--candidate",
                "RING/LL",
                "--replicates",
                "1",
                "--seed",
                "9",
                "--dry-run");
        assertEquals(0, s.exit(), s.err());
        assertFalse(s.out().contains("was drawn"), s.out());
        assertEquals("", s.err());
    }
}
