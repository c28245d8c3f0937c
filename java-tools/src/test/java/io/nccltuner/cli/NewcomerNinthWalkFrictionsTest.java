package io.nccltuner.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nccltuner.sweep.FakeNcclTestsBinary;
import io.nccltuner.sweep.Manifest;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The ninth newcomer walk's small frictions (issue 21) in show, report, try, replay, sweep, import
 * and validate: {@code show --ranks N} refused though try and compile take {@code --ranks}; report's
 * "ranks disagree (2 table, 0 decision problems)", one shape counted twice where a canary log's comm
 * and measured lines both name it; try's not-offered sizes in {@link io.nccltuner.policy.ByteSize#format}
 * ({@code 128062.5 KiB}) where replay prints the same call's {@code ~125.06 MiB}; a sweep run stopped
 * by Ctrl-C or SIGTERM recorded "failed" (exit 130/143) as if its program had failed; an NCCLX file's
 * boundary advice written in the example CSV's fields ("write max_bytes 65535") for an interval; and
 * validate exiting 0 (a warning) for a CSV line that can never apply where the same rule in YAML
 * exits 1 (an error).
 */
class NewcomerNinthWalkFrictionsTest {
    @TempDir
    Path tmp;

    /** Item 1: show takes --ranks as --nranks; the same shapes. */
    @Test
    void showTakesRanksAsNranks() throws Exception {
        Path p = CliRun.write(tmp, "mixed.yaml", NewcomerEighthWalkShowTest.MIXED);
        CliRun ranks = CliRun.run("show", p.toString(), "--ranks", "2", "--nodes", "2", "--gpu", "NVIDIA H200");
        CliRun nranks = CliRun.run("show", p.toString(), "--nranks", "2", "--nodes", "2", "--gpu", "NVIDIA H200");
        assertEquals(0, ranks.exit(), ranks.err());
        assertEquals("", ranks.err());
        assertEquals(nranks.out(), ranks.out());
        assertEquals(NewcomerEighthWalkShowTest.MIXED_AT_TWO_NODES, NewcomerEighthWalkShowTest.shapes(ranks.out()));
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

    /**
     * A diverge log (ReportCommandTest's two ranks, nRanks=2 nNodes=2) at another shape and
     * communicator: nRanks 4, commId ...43, pid + 10.
     */
    private Path atFourRanks(String name, String pid, String policyPick) throws Exception {
        String text = Files.readString(Path.of(ReportCommandTest.res(name)))
                .replace("\"nRanks\":2,\"nNodes\":2", "\"nRanks\":4,\"nNodes\":2")
                .replace("17293822569102704642", "17293822569102704643")
                .replace("\"pid\":" + pid, "\"pid\":2" + pid.charAt(1))
                .replace("\"policyPick\":\"TREE/LL\"", "\"policyPick\":\"" + policyPick + "\"");
        return CliRun.write(tmp, "four-" + name, text);
    }

    /** Item 2: the disagreement line counts shapes and sizes, in the plural where there are several. */
    @Test
    void reportDisagreementCountsShapesAndSizes() throws Exception {
        // nRanks=2: tables differ, 2 sizes; nRanks=4: tables differ, 1 size (4 B: no rule hit on y)
        CliRun r = CliRun.run(
                "report",
                ReportCommandTest.res("diverge-x.jsonl"),
                ReportCommandTest.res("diverge-y.jsonl"),
                atFourRanks("diverge-x.jsonl", "11", "TREE/LL").toString(),
                atFourRanks("diverge-y.jsonl", "12", "RING/SIMPLE").toString());
        assertEquals(3, r.exit(), r.err());
        assertEquals(
                "nccl-tuner report: ranks disagree (2 shapes with different compiled tables, 3 sizes with different"
                        + " decisions): exit 3; ranks of one communicator must run the same compiled table and decisions,"
                        + " or the job can hang\n",
                r.err());
    }

    /** Item 2: a canary log's table problem, in its comm and its measured lines, is one shape; no "0 sizes". */
    @Test
    void reportDisagreementCountsACanaryShapeOnce() {
        CliRun r = CliRun.run(CanaryReportCommandTest.args(CanaryReportCommandTest.res("canary-d.jsonl")));
        assertEquals(3, r.exit(), r.err());
        assertEquals(
                "nccl-tuner report: ranks disagree (1 shape with different compiled tables): exit 3; ranks of one"
                        + " communicator must run the same compiled table and decisions, or the job can hang\n",
                r.err());
    }

    /** A policy whose rules' one candidate, NVLS/SIMPLE, no two-node trace's cost table offers. */
    static final String NVLS_ONLY = "schema: nccl-tuner-java/v1\nname: nv\nmode: enforce\nprofiles:\n"
            + "  - name: any\n    match: {}\n    rules:\n"
            + "      - collective: AllGather\n        bytes: {from: 0 B, to: 1 GiB}\n"
            + "        candidates: [{algorithm: NVLS, protocol: SIMPLE}]\n"
            + "      - collective: AllReduce\n        bytes: {from: 0 B, to: 1 GiB}\n"
            + "        candidates: [{algorithm: NVLS, protocol: SIMPLE}]\n";

    /** Item 3: try names the not-offered calls' sizes as replay does (~24.03 MiB, not 24602 KiB). */
    @Test
    void tryAndReplayPrintACallsSizeTheSameWay() throws Exception {
        Path p = CliRun.write(tmp, "nv.yaml", NVLS_ONLY);
        String trace = CliRun.trace("trace_fsdp.csv"); // AllGather 25192448 B and 131136000 B
        CliRun t = CliRun.tryRun("--policy", p.toString(), "--mode", "enforce", "--trace", trace);
        assertEquals(0, t.exit(), t.err() + t.out());
        assertEquals(
                "try: the policy changed 0 of 61 calls (rule hits 40); 40 rule hits changed nothing: candidate not"
                        + " offered (NVLS/SIMPLE is -1 in NCCL's table at AllReduce 4 B: 1 call; NVLS/SIMPLE is -1 in"
                        + " NCCL's table at AllGather ~24.03 MiB .. ~125.06 MiB: 39 calls) 40",
                t.out().lines().toList().getLast());
        CliRun r = CliRun.run("replay", "--policy", p.toString(), "--trace", trace);
        assertEquals(0, r.exit(), r.err() + r.out());
        List<String> sizes =
                r.out().lines().filter(l -> l.startsWith("  AllGather ")).toList();
        assertEquals(
                List.of(
                        "  AllGather ~125.06 MiB (131136000 B), numPipeOps 1: 3 calls; rule profiles[0].rules[0]"
                                + " candidates NVLS/SIMPLE; NCCL offers RING/LL RING/SIMPLE PAT/SIMPLE",
                        "  AllGather ~24.03 MiB (25192448 B), numPipeOps 1: 36 calls; rule profiles[0].rules[0]"
                                + " candidates NVLS/SIMPLE; NCCL offers RING/LL RING/SIMPLE PAT/SIMPLE"),
                sizes);
    }

    /**
     * {@code nccl-tuner sweep -o dir} of AllReduce, NCCL's pick and RING/LL, one replicate, seed 4,
     * with a stand-in nccl-tests binary that runs {@code prologue} first.
     */
    private String[] sweep(Path dir, String prologue) throws Exception {
        Path fake = FakeNcclTestsBinary.write(tmp.resolve("fake_driver"), prologue, "$1", "10.0");
        return new String[] {
            "sweep",
            "-o",
            dir.toString(),
            "--binary",
            fake.toString(),
            "--plugin",
            FakeNcclTestsBinary.plugin(tmp).toString(),
            "-b",
            "1K",
            "-e",
            "1K",
            "--candidate",
            "RING/LL",
            "--replicates",
            "1",
            "--seed",
            "4"
        };
    }

    /** @return the run of a sweep's manifest that forced RING/LL */
    private static Manifest.RunRecord ringLl(Path dir) throws Exception {
        return Manifest.read(dir.resolve(Manifest.FILE)).runs().stream()
                .filter(r -> "LL".equals(r.protocol()))
                .findFirst()
                .orElseThrow();
    }

    /** Item 4: a run that SIGTERM stopped (as a pre-emption does) is interrupted, not failed; the resume runs it. */
    @Test
    void aSweepRunStoppedBySigtermIsInterruptedNotFailed() throws Exception {
        Path dir = tmp.resolve("sw");
        Path flag = tmp.resolve("stop.flag");
        Files.writeString(flag, "");
        String[] cmd = sweep(
                dir,
                "if [ -e '" + flag + "' ] && [ \"$NCCL_TUNER_JAVA_FORCE\" = RING/LL ]; then echo half; kill -TERM $$;"
                        + " fi\n");
        CliRun r = CliRun.run(cmd);
        assertEquals(1, r.exit(), r.err());
        List<String> lines = r.err().lines().toList();
        String stopped = lines.stream()
                .filter(l -> l.contains(" RING/LL r1: "))
                .findFirst()
                .orElseThrow();
        assertTrue(
                Pattern.matches(
                        Pattern.quote("sweep: ") + "[12]/2"
                                + Pattern.quote(" all_reduce RING/LL r1: interrupted (exit"
                                        + " 143, SIGTERM: stopped from outside, not failed; partial output"
                                        + " runs/all_reduce_RING-LL_r1.txt.part) in ")
                                + ".*",
                        stopped),
                stopped);
        assertEquals(
                "sweep: 1 run interrupted by a signal from outside (Ctrl-C, SIGTERM, a pre-emption); run the same"
                        + " command again to run it (seed 4)",
                lines.getLast());
        assertTrue(lines.stream().noneMatch(l -> l.contains("FAILED") || l.contains("run failed")), r.err());
        assertEquals("interrupted", ringLl(dir).status());
        assertEquals(143, ringLl(dir).exitCode());
        assertTrue(Files.exists(dir.resolve("runs/all_reduce_RING-LL_r1.txt.part")));
        assertTrue(Files.notExists(dir.resolve("runs/all_reduce_RING-LL_r1.failed.txt")));

        CliRun dry =
                CliRun.run(Stream.concat(Stream.of(cmd), Stream.of("--dry-run")).toArray(String[]::new));
        assertEquals(0, dry.exit(), dry.err());
        assertTrue(
                dry.out()
                        .contains("\n# " + dir + " holds this sweep, unfinished: 1 of 2 runs done, 1 to do (all_reduce"
                                + " RING/LL r1: interrupted (SIGTERM)); running the same command without --dry-run"
                                + " resumes it with seed 4 "),
                dry.out());

        Files.delete(flag);
        CliRun resumed = CliRun.run(cmd);
        assertEquals(0, resumed.exit(), resumed.err());
        assertTrue(
                resumed.err().startsWith("sweep: resuming " + dir + ": 1 of 2 runs finished, skipped; seed 4\n"),
                resumed.err());
        assertEquals("done", ringLl(dir).status());
    }

    /** Item 4: SIGTERM to the sweep itself (Ctrl-C's SIGINT alike) records the run it was in interrupted. */
    @Test
    @org.junit.jupiter.api.Timeout(90)
    void aSweepStoppedDuringARunRecordsItInterrupted() throws Exception {
        Path dir = tmp.resolve("sw");
        Path started = tmp.resolve("started.flag");
        String[] cmd = sweep(
                dir,
                "if [ \"$NCCL_TUNER_JAVA_FORCE\" = RING/LL ]; then echo half; touch '" + started + "'; sleep 60;"
                        + " fi\n");
        List<String> java = new java.util.ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp",
                System.getProperty("java.class.path"),
                Main.class.getName()));
        java.addAll(List.of(cmd));
        Process p = new ProcessBuilder(java)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .redirectError(tmp.resolve("err.txt").toFile())
                .start();
        for (int i = 0; i < 600 && Files.notExists(started); i++) {
            Thread.sleep(100);
        }
        assertTrue(Files.exists(started), "the RING/LL run started");
        p.destroy(); // SIGTERM
        assertTrue(p.waitFor(30, TimeUnit.SECONDS));
        assertEquals(143, p.exitValue());
        String err = Files.readString(tmp.resolve("err.txt"), StandardCharsets.UTF_8);
        assertTrue(
                Pattern.compile("\nsweep: interrupted: [01] of 2 runs done \\(" + Pattern.quote(dir + "/manifest.json")
                                + "\\); run the same command again to resume: it keeps seed 4, skips the runs done and"
                                + " runs the others, the interrupted one included\n")
                        .matcher(err)
                        .find(),
                err);
        assertTrue(!err.contains("FAILED"), err);
        assertEquals("interrupted", ringLl(dir).status());
        assertNull(ringLl(dir).exitCode());
    }

    /** NVIDIA-style boundaries (0..65536, then 65537..) in NCCLX's interval syntax. */
    static final String NCCLX_NVIDIA_BOUNDARIES =
            "allreduce,[0,65536],ring,ll,-1,*,*\nallreduce,[65537,4294967295],ring,simple,-1,*,*\n";

    /** Item 5: import and validate of an NCCLX interval file advise in intervals, not min_bytes/max_bytes. */
    @Test
    void ncclxIntervalBoundaryAdviceIsWrittenAsIntervals() throws Exception {
        Path f = CliRun.write(tmp, "ncclx.csv", NCCLX_NVIDIA_BOUNDARIES);
        String one = f + ":1: bytes 0..65536 (inclusive) is not on the size grid; rounded to [0 B, 80 KiB): sizes"
                + " 65537..81919 B follow this line too; write [0,65536) to end it at 64 KiB, but the 65536 B calls"
                + " then leave it (as is, they stay on this line, as in NCCL)";
        String two = f + ":2: bytes 65537..4294967295 (inclusive) is not on the size grid; rounded to [80 KiB, 4"
                + " GiB): sizes 65537..81919 B no longer follow this line; write [65536,4294967295] to start it at 64"
                + " KiB, but the 65536 B calls then join it (as is, they stay off this line, as in NCCL)";
        CliRun imp = CliRun.run(
                "import", f.toString(), "-o", tmp.resolve("ncclx.yaml").toString());
        assertEquals(0, imp.exit(), imp.err());
        assertEquals("warning: " + one + "\nwarning: " + two + "\n", imp.err());
        CliRun val = CliRun.run("validate", f.toString());
        assertEquals(0, val.exit(), val.err());
        assertTrue(val.out().contains("\n  warning: " + one + "\n  warning: " + two + "\n"), val.out());
    }

    /** Item 5: JSON rules get the advice in their keys: "max_bytes": N, or a "bytes" interval. */
    @Test
    void ncclxJsonBoundaryAdviceIsWrittenAsItsKeys() throws Exception {
        Path f = CliRun.write(
                tmp,
                "ncclx.json",
                "{\"rules\": [\n"
                        + " {\"collective\": \"allreduce\", \"min_bytes\": 0, \"max_bytes\": 65536, \"algorithm\":"
                        + " \"ring\", \"protocol\": \"ll\"},\n"
                        + " {\"collective\": \"allreduce\", \"bytes\": \"[65537,)\", \"algorithm\": \"ring\","
                        + " \"protocol\": \"simple\"}\n]}\n");
        CliRun imp = CliRun.run(
                "import", f.toString(), "-o", tmp.resolve("ncclx.yaml").toString());
        assertEquals(0, imp.exit(), imp.err());
        List<String> advice = imp.err()
                .lines()
                .map(l -> l.substring(l.indexOf("; write ") + 2))
                .toList();
        assertEquals(
                List.of(
                        "write \"max_bytes\": 65535 to end it at 64 KiB, but the 65536 B calls then leave it (as is,"
                                + " they stay on this line, as in NCCL)",
                        "write \"bytes\": \"[65536,)\" to start it at 64 KiB, but the 65536 B calls then join it (as is,"
                                + " they stay off this line, as in NCCL)"),
                advice.subList(0, 2),
                imp.err());
    }

    /** Item 6: the same rule that can never apply is an error in a YAML and in a CSV; exit 1 for both. */
    @Test
    void validateRefusesARuleThatCanNeverApplyInBothFormats() throws Exception {
        Path yaml = CliRun.write(
                tmp,
                "never.yaml",
                "schema: nccl-tuner-java/v1\nname: never\nmode: enforce\nprofiles:\n  - name: any\n    match: {}\n"
                        + "    rules:\n      - collective: Broadcast\n        bytes: {from: 0 B}\n"
                        + "        candidates: [{algorithm: TREE, protocol: SIMPLE}]\n");
        Path csv = CliRun.write(tmp, "nccl_tuner.conf", "broadcast,0,-1,tree,simple,-1,-1,-1\n");
        String why = " (Broadcast [0 B, inf)): can never apply: NCCL offers none of its candidates for Broadcast";
        CliRun y = CliRun.run("validate", yaml.toString());
        assertEquals(1, y.exit(), y.out());
        assertTrue(y.out().contains("\nerror: " + yaml + ":8:9: profiles[0].rules[0]" + why + "\n"), y.out());
        assertTrue(y.out().endsWith("\nresult: FAILED (1 error, 1 warning)\n"), y.out());
        CliRun c = CliRun.run("validate", csv.toString());
        assertEquals(1, c.exit(), c.out());
        assertTrue(
                c.out()
                        .contains("\nerror: " + csv + ":1" + why + "; NCCL's example plugin passes over such a line"
                                + " silently (NCCL picks there): delete the line, or import the file (import leaves it"
                                + " out)\n"),
                c.out());
        assertTrue(c.out().endsWith("\nresult: FAILED (1 error, 1 warning)\n"), c.out());
        // what import writes from it validates
        Path imported = tmp.resolve("imported.yaml");
        CliRun i = CliRun.run("import", csv.toString(), "-o", imported.toString());
        assertEquals(0, i.exit(), i.err());
    }
}
