package io.nccltuner.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nccltuner.sweep.FakeNcclTestsBinary;
import io.nccltuner.sweep.Manifest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 21 (sixth walk), items 1 and 2: {@code nccl-tuner sweep --dry-run} over a folder holding
 * a partly finished sweep says how many runs are done, which remain, that the same command resumes
 * it and with which seed, and prints only the lines still to run; and the sweep's lines say "1 run",
 * "1 program", "1 replicate" where a count is 1.
 */
@Timeout(60)
class SweepDryRunResumeTest {
    @TempDir
    Path tmp;

    /** A stand-in nccl-tests binary: one size row; exits 3 for RING/LL while tmp/fail.flag exists. */
    private Path fake() throws Exception {
        return FakeNcclTestsBinary.write(
                tmp.resolve("fake_driver"),
                "if [ -e '" + tmp.resolve("fail.flag") + "' ] && [ \"$NCCL_TUNER_JAVA_FORCE\" = RING/LL ]; then "
                        + "echo boom; exit 3; fi\n",
                "$1",
                "10.0");
    }

    /** {@code nccl-tuner sweep -o dir --binary fake --plugin P -b 1K -e 1K}, then {@code options}. */
    private String[] sweep(Path dir, String... options) throws Exception {
        return Stream.concat(
                        Stream.of(
                                "sweep",
                                "-o",
                                dir.toString(),
                                "--binary",
                                fake().toString(),
                                "--plugin",
                                FakeNcclTestsBinary.plugin(tmp).toString(),
                                "-b",
                                "1K",
                                "-e",
                                "1K"),
                        Arrays.stream(options))
                .toArray(String[]::new);
    }

    /**
     * Leaves the sweep in {@code dir} as one stopped during its run {@code failedAt} (in run order)
     * leaves it: the runs before done, that one failed (exit 3, its output renamed .failed.txt), the
     * later ones pending with no output (the manifest is rewritten after each run).
     */
    private static void interrupt(Path dir, int failedAt) throws Exception {
        Path mf = dir.resolve(Manifest.FILE);
        Manifest m = Manifest.read(mf);
        List<Manifest.RunRecord> runs = new ArrayList<>();
        for (Manifest.RunRecord r : m.runs()) {
            Path out = dir.resolve(r.file());
            if (r.order() < failedAt) {
                runs.add(r);
                continue;
            }
            if (r.order() == failedAt) {
                Files.move(out, dir.resolve("runs/" + r.id() + ".failed.txt"));
            } else {
                Files.delete(out);
            }
            runs.add(new Manifest.RunRecord(
                    r.id(),
                    r.program(),
                    r.algorithm(),
                    r.protocol(),
                    r.channels(),
                    r.replicate(),
                    r.order(),
                    r.file(),
                    r.command(),
                    r.env(),
                    r.order() == failedAt ? "failed" : "pending",
                    r.order() == failedAt ? 3 : null,
                    r.order() == failedAt ? 0.5 : null));
        }
        m.with(runs, m.signature(), m.warnings()).write(mf);
    }

    @Test
    void aDryRunOfAnInterruptedSweepSaysWhatIsDoneWhatRemainsAndThatTheSameCommandResumes() throws Exception {
        Path dir = tmp.resolve("sw");
        String[] planned = sweep(dir, "--candidate", "RING/LL", "--candidate", "RING/SIMPLE", "--replicates", "2");
        String[] first =
                Stream.concat(Arrays.stream(planned), Stream.of("--seed", "11")).toArray(String[]::new);
        assertEquals(0, CliRun.run(first).exit());
        interrupt(dir, 3);
        Manifest m = Manifest.read(dir.resolve(Manifest.FILE));
        List<Manifest.RunRecord> left = m.runs().subList(3, 6);
        byte[] before = Files.readAllBytes(dir.resolve(Manifest.FILE));

        // the same command without --seed, as a dry run
        String[] dry =
                Stream.concat(Arrays.stream(planned), Stream.of("--dry-run")).toArray(String[]::new);
        CliRun r = CliRun.run(dry);
        assertEquals(0, r.exit(), r.err());
        assertEquals("", r.err());
        List<String> lines = r.out().lines().toList();
        assertTrue(
                lines.getFirst()
                        .startsWith(
                                "# 6 runs (1 program x 3 candidates incl. NCCL's own pick x 2 replicates), seed 11; "
                                        + "every run: "),
                lines.getFirst());
        Manifest.RunRecord failed = left.getFirst();
        assertEquals(
                "# " + dir + " holds this sweep, unfinished: 3 of 6 runs done, 3 to do (all_reduce " + failed.label()
                        + " r2: failed, exit 3; all_reduce " + left.get(1).label() + " r2: not run; all_reduce "
                        + left.get(2).label() + " r2: not run); running the same command without --dry-run resumes it "
                        + "with seed 11 (recorded in " + dir.resolve("manifest.json") + "): it runs the 3 lines below "
                        + "and skips the done ones",
                lines.get(1));
        assertEquals(5, lines.size(), r.out());
        for (int i = 0; i < 3; i++) {
            assertTrue(lines.get(2 + i).endsWith(" > " + dir.resolve(left.get(i).file())), lines.get(2 + i));
        }
        assertArrayEquals(before, Files.readAllBytes(dir.resolve(Manifest.FILE)), "the dry run wrote the manifest");

        // the real run does what the dry run said: it resumes with seed 11 and runs those 3
        CliRun resumed = CliRun.run(planned);
        assertEquals(0, resumed.exit(), resumed.err());
        assertTrue(
                resumed.err().startsWith("sweep: resuming " + dir + ": 3 of 6 runs finished, skipped; seed 11\n"),
                resumed.err());
        assertEquals(
                3, resumed.err().lines().filter(l -> l.contains(": ok in ")).count(), resumed.err());

        // a finished sweep: nothing to run, and what comes next
        CliRun done = CliRun.run(dry);
        assertEquals(0, done.exit(), done.err());
        assertEquals(
                "# " + dir + " holds this sweep, finished: all 6 runs done; the same command runs nothing; next: "
                        + "nccl-tuner compile " + dir + " -o policy.yaml",
                done.out().lines().toList().get(1));
        assertEquals(2, done.out().lines().count(), done.out());

        // another seed is another sweep: the dry run refuses it as the real run would (exit 1)
        String[] other =
                Stream.concat(Arrays.stream(dry), Stream.of("--seed", "12")).toArray(String[]::new);
        CliRun refused = CliRun.run(other);
        assertEquals(1, refused.exit(), refused.out());
        assertEquals(
                "nccl-tuner sweep: " + dir + " holds a different sweep: --seed 12 (this sweep's: 11); resume needs the "
                        + "sweep's options (without --seed the sweep's seed is taken), or use a new directory\n",
                refused.err());
    }

    @Test
    void aDryRunOverASweepNotYetStartedSaysNoneIsDone() throws Exception {
        Path dir = tmp.resolve("sw");
        String[] cmd = sweep(dir, "--candidate", "RING/LL", "--replicates", "1", "--seed", "4");
        assertEquals(0, CliRun.run(cmd).exit());
        interrupt(dir, -1); // every run pending, as a sweep killed during its first run leaves it
        CliRun r = CliRun.run(
                Stream.concat(Arrays.stream(cmd), Stream.of("--dry-run")).toArray(String[]::new));
        assertEquals(0, r.exit(), r.err());
        List<String> lines = r.out().lines().toList();
        assertEquals(
                "# " + dir + " holds this sweep, not started: 0 of 2 runs done, 2 to do (all_reduce "
                        + Manifest.read(dir.resolve(Manifest.FILE))
                                .runs()
                                .get(0)
                                .label() + " r1: not run; all_reduce "
                        + Manifest.read(dir.resolve(Manifest.FILE))
                                .runs()
                                .get(1)
                                .label() + " r1: not run); running the "
                        + "same command without --dry-run resumes it with seed 4 (recorded in "
                        + dir.resolve("manifest.json") + "): it runs the 2 lines below",
                lines.get(1));
        assertEquals(4, lines.size(), r.out());
    }

    /** Item 2: "1 programs", "1 replicates", "1 runs failed", "the other 1 runs" where a count is 1. */
    @Test
    void countsOfOneAreSingular() throws Exception {
        Path dir = tmp.resolve("sw");
        // broadcast offers only RING: TREE/LL is not scheduled, so the sweep is one run, NCCL's own pick
        String[] one = sweep(dir, "--collectives", "broadcast", "--candidate", "TREE/LL", "--replicates", "1");
        CliRun plan = CliRun.run(Stream.concat(Arrays.stream(one), Stream.of("--seed", "5", "--dry-run"))
                .toArray(String[]::new));
        assertEquals(0, plan.exit(), plan.err());
        assertTrue(
                plan.out()
                        .startsWith("# 1 run (1 program x 2 candidates incl. NCCL's own pick x 1 replicate, less 1 "
                                + "(program, candidate) cell NCCL never offers), seed 5; every run: "),
                plan.out());
        CliRun ran = CliRun.run(
                Stream.concat(Arrays.stream(one), Stream.of("--seed", "5")).toArray(String[]::new));
        assertEquals(0, ran.exit(), ran.err());
        assertTrue(
                ran.err()
                        .contains("sweep: " + dir + ": 1 run, seed 5 (recorded in manifest.json; to resume, run the "
                                + "same command again)\n"),
                ran.err());
        assertTrue(ran.out().startsWith("sweep: " + dir + ": 1 of 1 run done; "), ran.out());

        // one failed run of two
        Path dir2 = tmp.resolve("sw2");
        Files.createFile(tmp.resolve("fail.flag"));
        CliRun failed = CliRun.run(sweep(dir2, "--candidate", "RING/LL", "--replicates", "1", "--seed", "5"));
        assertEquals(1, failed.exit(), failed.err());
        assertTrue(
                failed.err().endsWith("sweep: 1 run failed; run the same command again to retry it (seed 5)\n"),
                failed.err());
        assertTrue(failed.out().startsWith("sweep: " + dir2 + ": 1 of 2 runs done; "), failed.out());

        // a missing program stops a two-run sweep: "the other run was not started"
        Path dir3 = tmp.resolve("sw3");
        CliRun stopped = CliRun.run(
                "sweep",
                "-o",
                dir3.toString(),
                "--tests-dir",
                tmp.resolve("no-such-build").toString(),
                "--plugin",
                FakeNcclTestsBinary.plugin(tmp).toString(),
                "--candidate",
                "RING/LL",
                "--replicates",
                "1",
                "--seed",
                "5");
        assertEquals(1, stopped.exit());
        assertTrue(
                stopped.err()
                        .contains("; the other run was not started; fix --tests-dir, --binary, --launch or PATH, then "
                                + "run the same command again (seed 5)\n"),
                stopped.err());
    }

    /** One run done of two: the dry run says it skips "the done run", and runs "the line below". */
    @Test
    void aDryRunWithOneRunDoneSaysTheDoneRun() throws Exception {
        Path dir = tmp.resolve("sw");
        String[] planned = sweep(dir, "--candidate", "RING/LL", "--replicates", "1", "--seed", "5");
        assertEquals(0, CliRun.run(planned).exit());
        interrupt(dir, 1);
        Manifest.RunRecord left =
                Manifest.read(dir.resolve(Manifest.FILE)).runs().get(1);
        CliRun r = CliRun.run(
                Stream.concat(Arrays.stream(planned), Stream.of("--dry-run")).toArray(String[]::new));
        assertEquals(0, r.exit(), r.err());
        assertEquals(
                "# " + dir + " holds this sweep, unfinished: 1 of 2 runs done, 1 to do (all_reduce " + left.label()
                        + " r1: failed, exit 3); running the same command without --dry-run resumes it with seed 5 "
                        + "(recorded in " + dir.resolve("manifest.json") + "): it runs the line below and skips the "
                        + "done run",
                r.out().lines().toList().get(1));
    }
}
