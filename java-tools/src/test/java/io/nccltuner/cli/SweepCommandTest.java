package io.nccltuner.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nccltuner.sweep.FakeNcclTestsBinary;
import io.nccltuner.sweep.Manifest;
import io.nccltuner.sweep.Sweep;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code nccl-tuner sweep} from the command line (issue 21, item 1): resume without {@code --seed},
 * a refusal that names the option that differs, the seed in the progress lines, a missing program
 * stopping the sweep at its first run, the dry run leaving out candidates NCCL never offers,
 * sizes in either spelling ({@code 64M}, {@code 64MiB}), and a size range whose minimum is above its
 * maximum refused.
 */
@Timeout(60)
class SweepCommandTest {
    @TempDir
    Path tmp;

    /** A stand-in nccl-tests binary printing one size row (no NCCL lines). */
    private Path fake() throws Exception {
        return FakeNcclTestsBinary.write(tmp.resolve("fake_driver"), "", "$1", "10.0");
    }

    private String plugin() throws Exception {
        return FakeNcclTestsBinary.plugin(tmp).toString();
    }

    /** {@code nccl-tuner sweep -o dir} of {@link #fake()} with the plugin file, then {@code options}. */
    private String[] sweepOfTheFake(Path dir, String... options) throws Exception {
        return Stream.concat(
                        Stream.of("sweep", "-o", dir.toString(), "--binary", fake().toString(), "--plugin", plugin()),
                        Arrays.stream(options))
                .toArray(String[]::new);
    }

    @Test
    void theSameCommandWithoutSeedResumesAndTheProgressNamesTheSeed() throws Exception {
        Path dir = tmp.resolve("sweep");
        String[] cmd = sweepOfTheFake(dir, "--candidate", "RING/LL", "--replicates", "2", "-b", "1K", "-e", "1K");
        CliRun first = CliRun.run(cmd);
        assertEquals(0, first.exit(), first.err());
        long seed = Manifest.read(dir.resolve(Manifest.FILE)).seed();
        assertTrue(
                first.err()
                        .startsWith("sweep: " + dir + ": 4 runs, seed " + seed + " (recorded in manifest.json; "
                                + "to resume, run the same command again)\n"),
                first.err());
        // a run's output gone (a pre-empted job): the same command, still without --seed, resumes
        Files.delete(dir.resolve("runs/all_reduce_RING-LL_r2.txt"));
        CliRun again = CliRun.run(cmd);
        assertEquals(0, again.exit(), again.err());
        assertTrue(
                again.err()
                        .startsWith("sweep: resuming " + dir + ": 3 of 4 runs finished, skipped; seed " + seed + "\n"),
                again.err());
        assertEquals(seed, Manifest.read(dir.resolve(Manifest.FILE)).seed());
    }

    /**
     * Newcomer walk, item 12: compile of a sweep with no finished run says how to resume it (the
     * sweep command, its seed and replicates from the manifest), not only "no finished run".
     */
    @Test
    void compileOfASweepWithNoFinishedRunSaysHowToResume() throws Exception {
        Path dir = tmp.resolve("sweep");
        CliRun first = CliRun.run(sweepOfTheFake(
                dir, "--candidate", "RING/LL", "--replicates", "2", "--seed", "7", "-b", "1K", "-e", "1K"));
        assertEquals(0, first.exit(), first.err());
        try (var runs = Files.list(dir.resolve("runs"))) {
            for (Path f : runs.toList()) {
                Files.delete(f);
            }
        }
        CliRun c = CliRun.run("compile", dir.toString());
        assertEquals(1, c.exit(), c.out());
        assertEquals(
                "nccl-tuner compile: " + dir + ": no finished run in this sweep (4 planned, seed 7): run it, or "
                        + "resume it, with the command that planned it, `nccl-tuner sweep -o " + dir
                        + " --seed 7 --replicates 2 ...` "
                        + "(the same options: " + dir
                        + "/manifest.json lists its programs, candidates and launcher; finished runs are "
                        + "skipped), then compile " + dir + "\n",
                c.err());
    }

    @Test
    void aDifferentSweepIsRefusedNamingTheOptionsThatDiffer() throws Exception {
        Path dir = tmp.resolve("sweep");
        CliRun first = CliRun.run(sweepOfTheFake(
                dir, "--candidate", "RING/LL", "--replicates", "1", "--seed", "9", "-b", "1K", "-e", "1K"));
        assertEquals(0, first.exit(), first.err());
        CliRun other = CliRun.run(sweepOfTheFake(
                dir, "--candidate", "RING/LL", "--replicates", "1", "--seed", "10", "-b", "1K", "-e", "2K"));
        assertEquals(1, other.exit());
        assertEquals(
                "nccl-tuner sweep: " + dir + " holds a different sweep: --seed 10 (this sweep's: 9); -e 2K (this "
                        + "sweep's: 1K); resume needs the sweep's options (without --seed the sweep's seed is taken), or use a new "
                        + "directory\n",
                other.err().substring(other.err().indexOf("nccl-tuner sweep: ")));
    }

    @Test
    void aMissingProgramStopsTheSweepAtItsFirstRun() throws Exception {
        Path dir = tmp.resolve("sweep");
        Path tests = tmp.resolve("no-such-build");
        CliRun r = CliRun.run(
                "sweep",
                "-o",
                dir.toString(),
                "--tests-dir",
                tests.toString(),
                "--plugin",
                plugin(),
                "--algorithms",
                "RING",
                "--protocols",
                "LL,SIMPLE",
                "--replicates",
                "3",
                "--seed",
                "1");
        assertEquals(1, r.exit());
        Manifest m = Manifest.read(dir.resolve(Manifest.FILE));
        assertEquals(9, m.runs().size());
        assertEquals(
                1,
                m.runs().stream().filter(x -> "failed".equals(x.status())).count(),
                m.runs().toString());
        assertEquals(
                8, m.runs().stream().filter(x -> "pending".equals(x.status())).count());
        String first = m.runs().getFirst().command().getFirst();
        assertTrue(
                r.err()
                        .contains(
                                "sweep: stopped at the first run: " + first + " not found (exit 127: nccl-tuner sweep: "
                                        + "cannot start " + first + ": Cannot run program \"" + first + "\""),
                r.err());
        assertTrue(
                r.err()
                        .contains("; the other 8 runs were not started; fix --tests-dir, --binary, --launch or PATH, "
                                + "then run the same command again (seed 1)\n"),
                r.err());
        assertTrue(r.out().startsWith("sweep: " + dir + ": 0 of 9 runs done"), r.out());
    }

    /**
     * The advice after a missing program ("fix --tests-dir, ... then run the same command again")
     * works: the same command with the fixed --tests-dir resumes, its runs use the binary found
     * there, and the progress says so (a newcomer's fifth walk found it refused as "a different
     * sweep"). Another program name in that folder is still another sweep.
     */
    @Test
    void aFixedTestsDirResumesTheSweepItsMissingProgramStopped() throws Exception {
        Path dir = tmp.resolve("sweep");
        List<String> common = List.of(
                "--plugin",
                plugin(),
                "--algorithms",
                "RING",
                "--protocols",
                "LL,SIMPLE",
                "--replicates",
                "1",
                "--seed",
                "1",
                "-b",
                "1K",
                "-e",
                "1K");
        List<String> broken = new java.util.ArrayList<>(List.of(
                "sweep",
                "-o",
                dir.toString(),
                "--tests-dir",
                tmp.resolve("no-such-build").toString()));
        broken.addAll(common);
        assertEquals(1, CliRun.run(broken.toArray(String[]::new)).exit());
        Path fixed = Files.createDirectories(tmp.resolve("build"));
        FakeNcclTestsBinary.write(fixed.resolve("all_reduce_perf"), "", "$1", "10.0");
        List<String> again =
                new java.util.ArrayList<>(List.of("sweep", "-o", dir.toString(), "--tests-dir", fixed.toString()));
        again.addAll(common);
        CliRun r = CliRun.run(again.toArray(String[]::new));
        assertEquals(0, r.exit(), r.err());
        assertTrue(r.err().contains("sweep: the binary is now " + fixed.resolve("all_reduce_perf")), r.err());
        Manifest m = Manifest.read(dir.resolve(Manifest.FILE));
        assertEquals(3, m.runs().size());
        assertTrue(
                m.runs().stream().allMatch(x -> "done".equals(x.status())),
                m.runs().toString());
        assertTrue(m.runs().stream()
                .allMatch(x ->
                        x.command().contains(fixed.resolve("all_reduce_perf").toString())));
        assertFalse(Sweep.sameButTheBinarysFolder(
                List.of("/a/all_reduce_perf", "-b", "1K"), List.of("/a/all_gather_perf", "-b", "1K")));
        assertFalse(Sweep.sameButTheBinarysFolder(
                List.of("/a/all_reduce_perf", "-b", "1K"), List.of("/b/all_reduce_perf", "-b", "2K")));
    }

    @Test
    void theDryRunLeavesOutCandidatesNcclNeverOffersAndSaysSo() throws Exception {
        Path dir = tmp.resolve("sweep");
        CliRun r = CliRun.run(sweepOfTheFake(
                dir,
                "--collectives",
                "all_reduce,all_gather",
                "--algorithms",
                "TREE,RING",
                "--protocols",
                "SIMPLE",
                "--replicates",
                "1",
                "--seed",
                "3",
                "--dry-run",
                "-e",
                "64MiB"));
        assertEquals(0, r.exit(), r.err());
        List<String> lines = r.out().lines().toList();
        assertTrue(
                lines.getFirst()
                        .startsWith("# 5 runs (2 programs x 3 candidates incl. NCCL's own pick x 1 replicate, "
                                + "less 1 (program, candidate) cell NCCL never offers), seed 3; "),
                lines.getFirst());
        assertEquals(
                "# not scheduled: all_gather TREE/SIMPLE: NCCL offers only RING, PAT, NVLS and COLLNET_DIRECT for "
                        + "AllGather (NCCL 2.23 .. 2.30 src/graph/tuning.cc, ncclTopoTuneModel); not run (it would measure NCCL's own "
                        + "pick again)",
                lines.get(1));
        assertFalse(r.out().contains("TREE/SIMPLE " + tmp.resolve("fake_driver") + " all_gather_perf"), r.out());
        assertTrue(
                r.out().contains("TREE/SIMPLE " + tmp.resolve("fake_driver") + " all_reduce_perf -b 4 -e 64M "),
                r.out());
        assertFalse(Files.exists(dir));
    }

    @Test
    void sizesInEitherSpelling() throws Exception {
        assertEquals("64M", SweepCommand.testsSize("-e", "64M"));
        assertEquals("64M", SweepCommand.testsSize("-e", "64 MiB"));
        assertEquals("64M", SweepCommand.testsSize("-e", "67108864"));
        assertEquals("1G", SweepCommand.testsSize("-e", "1GiB"));
        assertEquals("1536", SweepCommand.testsSize("-b", "1.5KiB"));
        CliRun bad = dryRunWithSizes("-e", "64MB");
        assertEquals(2, bad.exit());
        assertEquals(
                "nccl-tuner sweep: -e: unknown size unit 'MB' in '64MB'; SI units are ambiguous here, write MiB\n"
                        + "see 'nccl-tuner sweep --help'\n",
                bad.err());
    }

    /**
     * Issue 21 (third walk), item 15: {@code -b 1G -e 64M --dry-run} listed 6 runs. A minimum above
     * the maximum is an option value that makes no sense: exit 2 (docs/compile.md's exit codes),
     * naming both, and no run is listed.
     */
    @Test
    void aMinimumSizeAboveTheMaximumIsRefused() throws Exception {
        CliRun r = dryRunWithSizes("-b", "1G", "-e", "64M");
        assertEquals(2, r.exit());
        assertEquals(
                "nccl-tuner sweep: -b 1G (1 GiB) is above -e 64M (64 MiB): nccl-tests sweeps from -b up to -e; give "
                        + "the smaller size to -b\nsee 'nccl-tuner sweep --help'\n",
                r.err());
        assertEquals("", r.out());
        CliRun same = dryRunWithSizes("-b", "64M", "-e", "64MiB");
        assertEquals(0, same.exit(), same.err());
    }

    /** A dry run of one candidate, RING/LL, with the size options given. */
    private CliRun dryRunWithSizes(String... sizes) throws Exception {
        List<String> a = new java.util.ArrayList<>(
                List.of("sweep", "-o", tmp.resolve("s").toString(), "--candidate", "RING/LL", "--plugin", plugin()));
        a.addAll(List.of(sizes));
        a.add("--dry-run");
        return CliRun.run(a.toArray(String[]::new));
    }
}
