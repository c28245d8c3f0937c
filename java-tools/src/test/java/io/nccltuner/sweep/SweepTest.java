package io.nccltuner.sweep;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nccltuner.compile.MeasurementSet;
import io.nccltuner.compile.NcclTestsLog;
import io.nccltuner.compile.RunConfig;
import io.nccltuner.policy.ForcePolicy;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The sweep runner with a stand-in nccl-tests binary (a shell script printing a fixed nccl-tests
 * 2.18 output whose time says which candidate was forced, and logging each invocation).
 */
@Timeout(60)
class SweepTest {
    @TempDir
    Path tmp;

    /** A fake nccl-tests: logs each call; fails while $FAIL_FLAG exists for $FAIL_ON; a time per candidate. */
    private Path fakeBinary() throws Exception {
        return FakeNcclTestsBinary.write(tmp.resolve("fake_driver"), """
                echo "$NCCL_TUNER_JAVA_FORCE|$1" >> "$CALLS"
                if [ -n "$FAIL_ON" ] && [ "$NCCL_TUNER_JAVA_FORCE" = "$FAIL_ON" ] && [ -e "$FAIL_FLAG" ]; then echo boom; exit 3; fi
                case "$NCCL_TUNER_JAVA_FORCE" in RING/LL) t=30.00;; RING/SIMPLE) t=10.00;; *) t=20.00;; esac
                """, "$1", "$t");
    }

    private Sweep.Config config(Path dir, Path bin, Map<String, String> env, long seed) throws Exception {
        Path plugin = FakeNcclTestsBinary.plugin(tmp);
        return new Sweep.Config(
                dir,
                List.of("all_reduce", "all_gather"),
                bin,
                null,
                List.of(),
                plugin,
                List.of(ForcePolicy.parse("RING/LL"), ForcePolicy.parse("RING/SIMPLE")),
                2,
                seed,
                List.of("-b", "1K", "-e", "1K"),
                30,
                env);
    }

    /**
     * Issue 21: each run's environment names the sweep's seed and its replicate, so a simulated
     * cluster seeded by SIMCLUSTER_SEED draws each replicate's own noise (before, every replicate of
     * the docs' seeded sweep measured the same times: CV 0.00%).
     */
    @Test
    void eachRunIsToldTheSweepsSeedAndItsReplicate() throws Exception {
        Path calls = tmp.resolve("calls.txt");
        Path bin = FakeNcclTestsBinary.write(tmp.resolve("fake_driver"), """
                echo "$1 $NCCL_TUNER_JAVA_FORCE seed=$NCCL_TUNER_SWEEP_SEED replicate=$NCCL_TUNER_SWEEP_REPLICATE" >> "$CALLS"
                """, "$1", "20.00");
        Path dir = tmp.resolve("sweep");
        new Sweep(config(dir, bin, Map.of("CALLS", calls.toString()), 7), new PrintWriter(new StringWriter())).run();
        List<String> lines = Files.readAllLines(calls);
        assertEquals(12, lines.size(), lines.toString());
        for (String program : List.of("all_reduce_perf", "all_gather_perf")) {
            for (String forced : List.of("", "RING/LL", "RING/SIMPLE")) {
                for (int r = 1; r <= 2; r++) {
                    String line = program + " " + forced + " seed=7 replicate=" + r;
                    assertEquals(1, lines.stream().filter(line::equals).count(), line + " in " + lines);
                }
            }
        }
    }

    @Test
    void planIsBalancedRandomizedAndReproducible() {
        var cands = List.of(ForcePolicy.parse("RING/LL"), ForcePolicy.parse("TREE/SIMPLE/4"));
        var a = SweepPlan.plan(List.of("all_reduce", "all_gather"), cands, 3, 42);
        assertEquals(a, SweepPlan.plan(List.of("all_reduce", "all_gather"), cands, 3, 42));
        assertFalse(a.equals(SweepPlan.plan(List.of("all_reduce", "all_gather"), cands, 3, 43)));
        assertEquals(18, a.size());
        for (int r = 1; r <= 3; r++) {
            Set<String> block = new HashSet<>();
            for (int i = (r - 1) * 6; i < r * 6; i++) {
                assertEquals(r, a.get(i).replicate());
                assertEquals(i, a.get(i).order());
                block.add(a.get(i).program() + " " + a.get(i).label());
            }
            assertEquals(6, block.size(), "each replicate block holds every cell once");
        }
        assertTrue(a.stream().anyMatch(x -> x.id().equals("all_gather_TREE-SIMPLE-4_r2")));
        assertTrue(a.stream().anyMatch(x -> x.id().equals("all_reduce_NCCL_r3")));
    }

    @Test
    void dryRunPrintsEveryCommandAndWritesNothing() throws Exception {
        Path dir = tmp.resolve("sweep");
        StringWriter out = new StringWriter();
        int n = new Sweep(
                        config(dir, fakeBinary(), Map.of("PATH", "/usr/bin:/bin"), 5),
                        new PrintWriter(new StringWriter()))
                .dryRun(new PrintWriter(out));
        assertEquals(12, n);
        List<String> lines = out.toString().lines().toList();
        assertEquals(13, lines.size(), out.toString());
        assertTrue(lines.getFirst()
                .startsWith("# 12 runs (2 programs x 3 candidates incl. NCCL's own pick x 2 replicates), seed 5"));
        // each line carries the variables the sweep sets, so that pasted it forces what it says
        String env = "NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,ENV,TUNING,GRAPH NCCL_TUNER_PLUGIN=";
        assertEquals(12, lines.stream().filter(l -> l.startsWith(env)).count(), out.toString());
        assertEquals(
                4,
                lines.stream()
                        .filter(l -> l.contains(" NCCL_TUNER_JAVA_FORCE=RING/LL "))
                        .count());
        assertEquals(
                4,
                lines.stream()
                        .filter(l -> l.matches(java.util.regex.Pattern.quote(env) + "\\S+ "
                                + java.util.regex.Pattern.quote(
                                        tmp.resolve("fake_driver").toString()) + " .*"))
                        .count(),
                "NCCL's own pick");
        assertTrue(
                lines.stream()
                        .anyMatch(l -> l.endsWith(" NCCL_TUNER_JAVA_FORCE=RING/SIMPLE " + tmp.resolve("fake_driver")
                                + " all_gather_perf -b 1K -e 1K > "
                                + dir.resolve("runs/all_gather_RING-SIMPLE_r2.txt"))),
                out.toString());
        assertFalse(Files.exists(dir));
    }

    @Test
    void runsWritesManifestWithSignatureAndResumesSkippingFinishedRuns() throws Exception {
        Path dir = tmp.resolve("sweep");
        Path calls = tmp.resolve("calls.log");
        Path flag = Files.createFile(tmp.resolve("fail.flag"));
        Map<String, String> env = new HashMap<>(Map.of(
                "PATH",
                "/usr/bin:/bin",
                "CALLS",
                calls.toString(),
                "FAIL_ON",
                "RING/LL",
                "FAIL_FLAG",
                flag.toString(),
                "NCCL_TUNER_JAVA_POLICY",
                "/should/be/removed.yaml",
                "NCCL_IB_HCA",
                "mlx5_0"));
        StringWriter progress = new StringWriter();
        Manifest m = new Sweep(config(dir, fakeBinary(), env, 9), new PrintWriter(progress)).run();
        assertEquals(12, Files.readAllLines(calls).size());
        assertEquals(
                4, m.runs().stream().filter(r -> "failed".equals(r.status())).count());
        assertEquals(8, m.runs().stream().filter(r -> "done".equals(r.status())).count());
        assertEquals(new RunHardware("2.28.9", "NVIDIA H200", 2, 2), m.signature());
        assertTrue(progress.toString().contains("sweep: 12/12 "), progress.toString());
        assertTrue(progress.toString().contains("ETA"), progress.toString());
        assertTrue(Files.exists(dir.resolve("runs/all_reduce_RING-LL_r1.failed.txt")));
        Manifest onDisk = Manifest.read(dir.resolve(Manifest.FILE));
        assertEquals(m, onDisk);
        assertEquals(9, onDisk.seed());
        assertEquals("mlx5_0", onDisk.environment().get("NCCL_IB_HCA"));
        assertNull(onDisk.environment().get("NCCL_TUNER_JAVA_POLICY"));
        // newcomer walk, item 6: GRAPH by default too, for calibrate (its --help and the README ask for it)
        assertEquals("INIT,ENV,TUNING,GRAPH", onDisk.environment().get("NCCL_DEBUG_SUBSYS"));
        var rec = onDisk.runs().stream()
                .filter(r -> r.id().equals("all_gather_RING-SIMPLE_r1"))
                .findFirst()
                .orElseThrow();
        assertEquals(Map.of("NCCL_TUNER_JAVA_FORCE", "RING/SIMPLE"), rec.env());
        assertEquals(
                List.of(tmp.resolve("fake_driver").toString(), "all_gather_perf", "-b", "1K", "-e", "1K"),
                rec.command());
        assertEquals(0, rec.exitCode());

        // resume: only the four failed runs run again
        Files.delete(flag);
        Files.delete(calls);
        StringWriter again = new StringWriter();
        Manifest m2 = new Sweep(config(dir, fakeBinary(), env, 9), new PrintWriter(again)).run();
        assertTrue(
                again.toString().startsWith("sweep: resuming " + dir + ": 8 of 12 runs finished, skipped"),
                again.toString());
        List<String> rerun = Files.readAllLines(calls);
        assertEquals(4, rerun.size(), rerun.toString());
        assertTrue(rerun.stream().allMatch(l -> l.startsWith("RING/LL|")), rerun.toString());
        assertTrue(m2.runs().stream().allMatch(r -> "done".equals(r.status())));
        assertEquals(m.created(), m2.created());

        // a third time: nothing left to run
        Files.delete(calls);
        new Sweep(config(dir, fakeBinary(), env, 9), new PrintWriter(new StringWriter())).run();
        assertFalse(Files.exists(calls));

        // another seed in the same directory is refused
        var e = assertThrows(
                java.io.IOException.class,
                () -> new Sweep(config(dir, fakeBinary(), env, 10), new PrintWriter(new StringWriter())).run());
        assertTrue(e.getMessage().contains("holds a different sweep"), e.getMessage());

        // compile's reader: the manifest says which run forced what
        MeasurementSet data = new MeasurementSet();
        List<Path> files = SweepDirectory.read(dir, NcclTestsLog.Placement.OUT_OF_PLACE, data);
        assertEquals(12, files.size());
        assertEquals(12, data.measurements().size());
        Map<RunConfig, Double> times = new HashMap<>();
        data.measurements().forEach(x -> times.merge(x.config(), x.timeUs(), (p, q) -> p));
        assertEquals(
                Map.of(
                        RunConfig.AUTO,
                        20.0,
                        new RunConfig(io.nccltuner.policy.Algorithm.RING, io.nccltuner.policy.Protocol.LL, 0),
                        30.0,
                        new RunConfig(io.nccltuner.policy.Algorithm.RING, io.nccltuner.policy.Protocol.SIMPLE, 0),
                        10.0),
                times);
        // The fake runs print two host names and no NCCL INIT line: the only note is the MNNVL one.
        assertTrue(
                data.warnings().stream().allMatch(w -> w.contains("counted from the host names")),
                data.warnings().toString());
    }

    /**
     * Resume trusts the output file, not the manifest alone: a run the manifest calls done whose
     * output was deleted runs again (and only it), and its file is back afterwards.
     */
    @Test
    void resumeRerunsADoneRunWhoseOutputIsGone() throws Exception {
        Path dir = tmp.resolve("sweep");
        Path calls = tmp.resolve("calls.log");
        Map<String, String> env = new HashMap<>(Map.of("PATH", "/usr/bin:/bin", "CALLS", calls.toString()));
        Manifest m = new Sweep(config(dir, fakeBinary(), env, 9), new PrintWriter(new StringWriter())).run();
        assertEquals(12, Files.readAllLines(calls).size());
        assertTrue(
                m.runs().stream().allMatch(r -> "done".equals(r.status())),
                m.runs().toString());
        Path gone = dir.resolve("runs/all_gather_RING-SIMPLE_r2.txt");
        assertTrue(Files.exists(gone));
        Files.delete(gone);
        Files.delete(calls);
        StringWriter again = new StringWriter();
        Manifest m2 = new Sweep(config(dir, fakeBinary(), env, 9), new PrintWriter(again)).run();
        assertTrue(
                again.toString().startsWith("sweep: resuming " + dir + ": 11 of 12 runs finished, skipped"),
                again.toString());
        assertEquals(List.of("RING/SIMPLE|all_gather_perf"), Files.readAllLines(calls));
        assertTrue(Files.exists(gone), gone + " is written again");
        assertTrue(Files.readString(gone).contains("# Collective test starting: all_gather_perf"));
        assertTrue(
                m2.runs().stream().allMatch(r -> "done".equals(r.status())),
                m2.runs().toString());
    }

    @Test
    void signatureFromNcclInfoLinesWinsOverTheHeader() {
        RunHardware s = RunHardware.read(List.of(
                "# nccl-tests version 2.18.5 nccl-headers=22809 nccl-library=22703",
                "#  Rank  0 Group  0 Pid   100 on      n1 device  0 [0x18] NVIDIA A100-SXM4-80GB",
                "n1:100:100 [0] NCCL INFO NCCL version 2.27.3+cuda12.9",
                "n1:100:100 [0] NCCL INFO comm 0x55d0c8a0 rank 0 nRanks 16 nNodes 2 localRanks 8 localRank 0 MNNVL 0"));
        assertEquals(new RunHardware("2.27.3+cuda12.9", "NVIDIA A100-SXM4-80GB", 16, 2), s);
        assertEquals(
                new RunHardware("2.27.3", null, 0, 0),
                RunHardware.read(List.of("# nccl-tests version 2.18.5 nccl-headers=22809 nccl-library=22703")));
    }
}
