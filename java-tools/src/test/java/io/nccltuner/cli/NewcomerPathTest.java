package io.nccltuner.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 21, the newcomer's path: the items the last walk left open. try takes compile's
 * --nccl-log; validate says what an imported policy's regBuff rules do; explain says when no
 * profile matches; every command writes a shape as {@code nRanks=2 nNodes=2}; each saving
 * percentage names its baseline, one definition per word; compile's notes on missing replicates and
 * unmeasured regret say what they mean; make dist says what it made.
 */
@Timeout(240)
class NewcomerPathTest {
    @TempDir
    Path tmp;

    static final Path REPO = TryCommandTest.REPO;
    static final String SWEEP = CliRun.fixture("h200-2rank-sweep_allreduce.rep1.csv");
    static final String SWEEP_LOG = CliRun.trace("nccl_sweep.rank0.log");
    static final String MEASURED_POLICY =
            REPO.resolve("policies/h200-2rank-measured.yaml").toString();

    private static CliRun tryRun(String... more) {
        CliRun.needBuild();
        return CliRun.run(
                CliRun.tryArgs("--policy", MEASURED_POLICY, "--trace", CliRun.trace("trace_tp_infer.csv")), more);
    }

    /**
     * Item 1: {@code try --nccl-log} was picocli's unknown-option error (exit 2). Now it takes the
     * log compile took: the report prices NCCL's picks with its selection lines, as report
     * --nccl-log does, and its saving is the one replay gives for the same calls (item 5).
     */
    @Test
    void tryTakesTheNcclLogOfItsMeasurements() {
        CliRun r = tryRun("--measurements", SWEEP, "--nccl-log", SWEEP_LOG);
        assertEquals(0, r.exit(), r.err() + r.out());
        assertEquals("", r.err());
        assertTrue(
                r.out()
                        .contains("\ntry: --nccl-log " + SWEEP_LOG
                                + ": NCCL 2.28.9; its selection lines name NCCL's picks for the report's prices\n"),
                r.out());
        assertTrue(
                r.out()
                        .contains(
                                "\nexpected saving: 135227.6 us, 45.87% of the rule hits' time (NCCL's 294807.5 us over"
                                        + " the 65 of 65 rule hits priced); 2080.4 us per rule hit, 135227.6 us per rank over 1 log\n"),
                r.out());
    }

    /**
     * Item 1, the checks: a log of another NCCL release than --nccl-era, and measurements of another
     * release and GPU than the log's, each get a warning saying what to do or what it means.
     */
    @Test
    void tryWarnsWhenTheNcclLogIsOfAnotherReleaseOrMachine() throws Exception {
        Path a100 = Files.writeString(
                tmp.resolve("a100.log"),
                "host0:1:1 [0] NCCL INFO NCCL version 2.27.7+cuda12.4\n"
                        + "#  Rank  0 Group  0 Pid      1 on      host0 device  0 [0000:17:00] NVIDIA A100-SXM4-80GB\n"
                        // two ranks on two hosts, the traces' shape, so no shape warning (try infers it from these
                        // lines)
                        + "#  Rank  1 Group  0 Pid      2 on      host1 device  0 [0000:17:00] NVIDIA A100-SXM4-80GB\n");
        String h100 = CliRun.fixture("nccl-tests-2.18_broadcast_no-validation.txt"); // NCCL 2.29.7, H100
        CliRun r = tryRun("--measurements", h100, "--nccl-log", a100.toString());
        assertEquals(0, r.exit(), r.err() + r.out());
        assertEquals(
                "nccl-tuner try: warning: --nccl-log " + a100 + ": NCCL 2.27.7 ran there (tuner v4), but the plugin is"
                        + " tried as NCCL 2.28 calls it (tuner v5); give --nccl-era 2.24 to try it as that release\n"
                        + "nccl-tuner try: warning: --measurements " + h100 + ": measured with NCCL 2.29.7, but " + a100
                        + " ran NCCL 2.27.7; the times may not hold for that release's picks\n"
                        + "nccl-tuner try: warning: --measurements " + h100
                        + ": measured on NVIDIA H100 80GB HBM3, but "
                        + a100 + " ran on NVIDIA A100-SXM4-80GB; the times price another machine\n",
                r.err());
        CliRun asIts = tryRun("--nccl-log", a100.toString(), "--nccl-era", "2.24");
        assertEquals(0, asIts.exit(), asIts.err() + asIts.out());
        assertEquals("", asIts.err(), "tried as the log's release, no measurements: nothing to warn of");
        assertTrue(
                asIts.out()
                        .contains("\ntry: --nccl-log " + a100
                                + ": NCCL 2.27.7; add --measurements for the report's prices"
                                + " (its selection lines then name NCCL's picks)\n"),
                asIts.out());
    }

    /**
     * An --nccl-era the harness does not know is a usage error naming the spellings, as replay's
     * (it was the harness's own failure, exit 1, after the JVM started), with or without --nccl-log.
     */
    @Test
    void tryRefusesAnUnknownEraAsReplayDoes() {
        CliRun r = CliRun.run(
                "try",
                "--policy",
                MEASURED_POLICY,
                "--trace",
                CliRun.trace("trace_tp_infer.csv"),
                "--nccl-log",
                SWEEP_LOG,
                "--nccl-era",
                "2.26");
        assertEquals(2, r.exit(), r.out());
        assertEquals("", r.out());
        assertEquals(
                "nccl-tuner try: --nccl-era '2.26' is not 2.22, 2.24, 2.28, 2.30 or 2.32.6\n"
                        + "see 'nccl-tuner try --help'\n",
                r.err());
    }

    /**
     * Item 2: import writes {@code regBuff: true/false} for the CSV's regBuff column, and validate of
     * that YAML said nothing of it (result OK, 0 warnings), while validate of the CSV warned. Now a
     * YAML's regBuff rules get one warning each (grouped over profiles): what they apply to, where
     * they never do, what to write instead; the CSV is not warned twice.
     */
    @Test
    void validateOfAnImportedPolicySaysWhatItsRegBuffRulesDo() throws Exception {
        Path conf = Files.writeString(
                tmp.resolve("rb.conf"),
                "allreduce,0,65535,tree,simple,2,1,-1,-1,1\nallreduce,0,65535,ring,ll,-1,-1,-1,-1,0\n"
                        + "allreduce,65536,-1,ring,simple,-1,2,2\n");
        Path yaml = tmp.resolve("rb.yaml");
        CliRun i = CliRun.run("import", conf.toString(), "-o", yaml.toString());
        assertEquals(0, i.exit(), i.err());
        assertEquals(
                "policy: " + yaml + " (3 profiles, 5 rules, 2 warnings)\n"
                        + "  profile nRanks2-nNodes2 (nRanks=2 nNodes=2)\n"
                        + "    AllReduce [0 B, 64 KiB): RING/LL (regBuff false)\n"
                        + "    AllReduce [64 KiB, inf): RING/SIMPLE\n"
                        + "  profile nNodes1 (nRanks=any nNodes=1)\n"
                        + "    AllReduce [0 B, 64 KiB): RING/LL (regBuff false)\n"
                        + "    AllReduce [0 B, 64 KiB): TREE/SIMPLE/2ch (regBuff true)\n"
                        + "  profile any (nRanks=any nNodes=any)\n"
                        + "    AllReduce [0 B, 64 KiB): RING/LL (regBuff false)\n"
                        + ToolCommand.modeLine(io.nccltuner.policy.Mode.SHADOW, "import") + "\n",
                i.out());
        CliRun v = CliRun.run("validate", yaml.toString());
        assertEquals(0, v.exit(), v.out());
        assertTrue(
                v.out()
                        .contains("\nwarning: " + conf
                                + ":2 (AllReduce [0 B, 64 KiB)) in 3 profiles (profiles[0].rules[0]"
                                + " nRanks2-nNodes2 (line 11), profiles[1].rules[0] nNodes1 (line 25), profiles[2].rules[0] any (line 39)):"
                                + " regBuff: false:"
                                + " applies only to calls on an unregistered buffer, and only from NCCL 2.24 (tuner v4 passes"
                                + " regBuff); never under NCCL 2.22 or 2.23 (tuner v3); write regBuff: any for a rule every"
                                + " call of its range gets\n"
                                + "warning: " + yaml + ":31:9: profiles[1].rules[1] from " + conf
                                + ":1 (AllReduce [0 B, 64 KiB)): regBuff: true:"
                                + " applies only to calls on a registered buffer, and only from NCCL 2.24 (tuner v4 passes"
                                + " regBuff); never under NCCL 2.22 or 2.23 (tuner v3), nor in try, replay or explain, which"
                                + " call with regBuff 0; write regBuff: any for a rule every call of its range gets\n"
                                + "result: OK (0 errors, 2 warnings)\n"),
                v.out());
        CliRun csv = CliRun.run("validate", conf.toString());
        assertEquals(0, csv.exit(), csv.out());
        assertFalse(csv.out().contains("applies only to calls on"), "the converter's own lines say it: " + csv.out());
        assertTrue(
                csv.out().endsWith("result: OK (0 errors, 2 warnings: 2 from reading the CSV, 0 of the policy)\n"),
                csv.out());
    }

    /**
     * Item 3: explain of a communicator no profile of --policy matches printed "The policy changes
     * NCCL's algorithm/protocol at 0 of N sizes" and an engine INFO line; now the verdict, as
     * replay's and try's.
     */
    @Test
    void explainOfAShapeNoProfileMatchesSaysSo() throws Exception {
        Path p8 = Files.writeString(
                tmp.resolve("p8.yaml"),
                Files.readString(REPO.resolve("policies/h200-2rank.yaml"))
                        .replace("match: {nRanks: 2, nNodes: 2}", "match: {nRanks: 8, nNodes: 1}"));
        CliRun r = CliRun.run("explain", "--log", SWEEP_LOG, "--policy", p8.toString(), "--sizes", "1MiB");
        assertEquals(0, r.exit(), r.err());
        assertTrue(
                r.out()
                        .contains(
                                "\nexplain: the policy changes nothing: no profile matches nRanks=2 nNodes=2 (the log's"
                                        + " communicator); its profiles: two-ranks-socket (nRanks=8 nNodes=1). Explain a log of one of"
                                        + " their shapes, or see its decisions there: `nccl-tuner show "
                                        + tmp.resolve("p8.yaml")
                                        + " --nodes 1 --ranks-per-node 8`; or compile a policy from measurements of nRanks=2 "
                                        + "nNodes=2 (`nccl-tuner sweep -o DIR --launch \"srun -N 2 --ntasks-per-node 1\" "
                                        + "--algorithms TREE,RING --protocols LL,LL128,SIMPLE`, then `nccl-tuner compile DIR -o "
                                        + "POLICY`)\n"),
                r.out());
        assertFalse(r.out().contains("The policy changes NCCL's algorithm/protocol"), r.out());
        CliRun matching = CliRun.run(
                "explain",
                "--log",
                SWEEP_LOG,
                "--policy",
                REPO.resolve("policies/h200-2rank.yaml").toString());
        assertEquals(0, matching.exit(), matching.err());
        assertFalse(matching.out().contains("the policy changes nothing"), matching.out());
    }

    /**
     * Item 4: a shape is written one way, {@code nRanks=2 nNodes=2} (model.JobShape), by compile's
     * summary, explain's header, import's and validate's profile lines; import names profiles as
     * compile does, nRanks first.
     */
    @Test
    void everyCommandWritesAShapeOneWay() throws Exception {
        Path yaml = tmp.resolve("p.yaml");
        CliRun c = CliRun.run("compile", SWEEP, "--nccl-log", SWEEP_LOG, "-o", yaml.toString());
        assertEquals(0, c.exit(), c.err());
        assertTrue(c.out().startsWith("summary: 5 rules from 25 measured sizes in 1 group (nRanks=2 nNodes=2): "));
        assertTrue(Files.readString(yaml).contains("  - name: nRanks2-nNodes2\n    match: {nRanks: 2, nNodes: 2}\n"));
        Path conf = CliRun.write(tmp, "two.conf", "allreduce,0,65535,ring,simple,-1,2,2\n");
        Path imported = tmp.resolve("two.yaml");
        CliRun i = CliRun.run("import", conf.toString(), "-o", imported.toString());
        assertEquals(0, i.exit(), i.err());
        assertEquals(
                "policy: " + imported
                        + " (1 profile, 1 rule, 0 warnings)\n  profile nRanks2-nNodes2 (nRanks=2 nNodes=2)\n"
                        + "    AllReduce [0 B, 64 KiB): RING/SIMPLE\n"
                        + ToolCommand.modeLine(io.nccltuner.policy.Mode.SHADOW, "import") + "\n",
                i.out());
        CliRun v = CliRun.run("validate", imported.toString(), "--nranks", "2", "--nnodes", "2");
        assertEquals(0, v.exit(), v.out());
        assertTrue(v.out().contains("\n  profiles[0] nRanks2-nNodes2: nRanks=2 nNodes=2, 1 rule, sha256 "), v.out());
        assertTrue(v.out().contains("\nnRanks=2 nNodes=2: profile nRanks2-nNodes2 (profiles[0], 1 rule)\n"), v.out());
        CliRun e = CliRun.run("explain", "--log", SWEEP_LOG, "--sizes", "1MiB");
        assertEquals(0, e.exit(), e.err());
        assertTrue(
                e.out().contains("\nNCCL 2.28.9, nRanks=2 nNodes=2, nChannels 2, compute capability unknown\n"),
                e.out());
    }

    /**
     * Item 5: replay gave its saving as "% of NCCL's time over the priced calls" (every priced call
     * of the trace), report and try as "% of NCCL's ... over the calls the policy's rules match";
     * now each percentage names its baseline in the same words: "of the rule hits' time" is the same
     * 45.87% in replay as in try's report above, "of all calls' time" the 13.88% compile --workload
     * gives over all calls of the same trace (CompileCommandTest).
     */
    @Test
    void replayNamesBothBaselinesOfItsSaving() {
        CliRun r = CliRun.run(
                "replay",
                "--trace",
                CliRun.trace("trace_tp_infer.csv"),
                "--policy",
                MEASURED_POLICY,
                "--measurements",
                SWEEP);
        assertEquals(0, r.exit(), r.err());
        assertTrue(
                r.out()
                        .contains("\nmeasured (" + SWEEP + "): 257 of 273 calls priced: NCCL's picks 974034.8 us, the"
                                + " policy's 838807.3 us: expected saving 135227.6 us, 45.87% of the rule hits' time (NCCL's"
                                + " 294807.5 us over the 65 rule hits priced), 13.88% of all calls' time (NCCL's 974034.8 us"
                                + " over the 257 calls priced)\n"),
                r.out());
    }

    /**
     * Item 6: "(noise unknown: margin 0)" said what was missing but not what it meant (a margin may
     * still come from neighbouring sizes), and a range no size measured printed "n/a +- 0.00%"
     * (then "not measured"; now a group none of whose ranges was measured prints none).
     */
    @Test
    void compileSaysWhatMissingReplicatesAndUnmeasuredRegretMean() {
        CliRun r = CliRun.run("compile", CliRun.fixture("nccl-tests-2.13_all_reduce_forced-ring-ll128.txt"));
        assertEquals(0, r.exit(), r.err()); // without -o: nothing to refuse writing
        assertTrue(
                r.out()
                        .contains("\nAllReduce, nRanks 8, nNodes 1, numPipeOps 1: 5 sizes, 1 candidate, 1 replicate per"
                                + " configuration (one run each, so no margin against noise but the jumps between"
                                + " neighbouring sizes; repeat each run 3+ times for one)\n"),
                r.out());
        assertFalse(r.out().contains("expected regret per range"), r.out());
        assertFalse(r.out().contains("+- 0.00%"), r.out());
    }

    /** Item 6: make dist's last lines say what it made, why the AOT cache is not in the tarball, and how to make it. */
    @Test
    void distSaysWhatItMadeAndWhy() throws Exception {
        Path dist = REPO.resolve("dist");
        Assumptions.assumeTrue(Files.isDirectory(dist), "make dist first (make test does)");
        String tgz;
        try (Stream<Path> s = Files.list(dist)) {
            tgz = s.map(p -> p.getFileName().toString())
                    .filter(n -> n.endsWith("-linux-x86_64.tar.gz"))
                    .findFirst()
                    .orElse(null);
        }
        Assumptions.assumeTrue(tgz != null, "make dist first (make test does)");
        String tree = tgz.substring(0, tgz.length() - ".tar.gz".length());
        Assumptions.assumeTrue(Files.isRegularFile(dist.resolve(tree).resolve("lib/nccl-tuner-java.aot")));
        Process p = new ProcessBuilder("make", "-s", "--no-print-directory", "-C", REPO.toString(), "dist-message")
                .redirectErrorStream(true)
                .start();
        String text = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, p.waitFor(), text);
        String root = REPO.toRealPath().resolve("dist").toString();
        assertTrue(
                text.matches("dist: made \\Q" + root + "/" + tgz + "\\E \\(\\d+ MiB\\): the tarball to unpack on the"
                        + " nodes \\(the plugin, its own Java runtime, bin/nccl-tuner, policies/, examples/, docs/\\)\\n"
                        + "dist: the tarball holds no AOT cache \\(lib/nccl-tuner-java.aot, \\d+ MiB, left out to keep it"
                        + " small\\): after unpacking, run bin/nccl-tuner-aot once, as the owner of lib/, for a faster"
                        + " plugin start \\(the first init about 85 ms instead of 260 ms; it also writes the policies'"
                        + " compiled forms\\)\\n"
                        + "dist: \\Q" + root + "/" + tree + "\\E/ is the same tree unpacked, with that cache made in it"
                        + " \\(\\d+ MiB\\)\\n"),
                text);
    }
}
