package io.nccltuner.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nccltuner.sweep.FakeNcclTestsBinary;
import io.nccltuner.sweep.Manifest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;
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
        FakeNcclTestsBinary.write(d.resolve("all_reduce_perf"), "", "all_reduce_perf", "10.0");
        return d;
    }

    private String plugin() throws Exception {
        return FakeNcclTestsBinary.plugin(tmp).toString();
    }

    /** {@code nccl-tuner sweep -o dir --tests-dir testsDir}, RING/LL once with the plugin file, then {@code options}. */
    private String[] sweep(Path dir, String testsDir, String... options) throws Exception {
        return Stream.concat(
                        Stream.of(
                                "sweep",
                                "-o",
                                dir.toString(),
                                "--tests-dir",
                                testsDir,
                                "--plugin",
                                plugin(),
                                "--candidate",
                                "RING/LL",
                                "--replicates",
                                "1"),
                        Arrays.stream(options))
                .toArray(String[]::new);
    }

    @Test
    void aRelativeTestsDirIsTheCurrentDirectorysNotTheOutputFolders() throws Exception {
        Path abs = testsDir();
        String rel = Path.of("").toAbsolutePath().relativize(abs).toString();
        assertFalse(Path.of(rel).isAbsolute());
        Path dir = tmp.resolve("sw");
        CliRun r = CliRun.run(sweep(dir, rel, "-b", "1K", "-e", "1K", "--seed", "7"));
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
        CliRun r = CliRun.run(sweep(dir, tmp.resolve("nothere").toString(), "-b", "1K", "-e", "1K", "--dry-run"));
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
        CliRun s = CliRun.run(sweep(dir, testsDir().toString(), "--seed", "9", "--dry-run"));
        assertEquals(0, s.exit(), s.err());
        assertFalse(s.out().contains("was drawn"), s.out());
        assertEquals("", s.err());
    }
}
