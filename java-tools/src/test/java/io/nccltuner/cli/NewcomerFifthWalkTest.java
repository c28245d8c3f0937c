package io.nccltuner.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 21 (fifth newcomer walk, with nccl-tests outputs, NCCL logs and the tarball): try, report,
 * show and validate. Each test asserts the message and exit code the CLI prints now; its comment
 * says what it printed before. The try tests run the build tree's harness and plugin (make build)
 * and skip without them, as TryCommandTest.
 */
@Timeout(240)
class NewcomerFifthWalkTest {
    @TempDir
    Path tmp;

    static final Path REPO = CliRun.REPO;
    static final String TRACE = CliRun.trace("trace_tp_infer.csv");

    /**
     * A policy for the tp_infer trace (nRanks=2 nNodes=2, NCCL 2.28.9's cost tables: TREE/LL128 and
     * RING/LL128 are -1 there; NCCL picks RING/LL at 4 B and 16 KiB, RING/SIMPLE from 64 KiB) whose
     * rules hit 257 calls: RING/LL128 at 4 B (1 call) and TREE/LL128, RING/LL128 at 64 KiB (64) are
     * never offered; RING/LL at 16 KiB (64) is NCCL's own pick; TREE/SIMPLE at 256 KiB and 1 MiB
     * (128) changes NCCL's pick.
     */
    static final String UNCHANGED = """
            schema: nccl-tuner-java/v1
            name: unchanged-hits
            mode: enforce
            profiles:
              - name: nRanks2-nNodes2
                match: {nRanks: 2, nNodes: 2}
                rules:
                  - collective: AllReduce
                    bytes: {from: 4 B, to: 8 B}
                    candidates:
                      - {algorithm: RING, protocol: LL128}
                  - collective: AllReduce
                    bytes: {from: 8 KiB, to: 32 KiB}
                    candidates:
                      - {algorithm: RING, protocol: LL}
                  - collective: AllReduce
                    bytes: {from: 64 KiB, to: 128 KiB}
                    candidates:
                      - {algorithm: TREE, protocol: LL128}
                      - {algorithm: RING, protocol: LL128}
                  - collective: AllReduce
                    bytes: {from: 256 KiB, to: 2 MiB}
                    candidates:
                      - {algorithm: TREE, protocol: SIMPLE}
            """;

    /** @return try's arguments: the harness and plugin of the build tree, then {@code more} */
    private static List<String> tryArgs(String... more) {
        return CliRun.tryArgs(more);
    }

    private static CliRun tryRun(String... more) {
        return CliRun.tryRun(more);
    }

    /** @return the last line of a command's stdout */
    private static String lastLine(CliRun r) {
        List<String> lines = r.out().lines().toList();
        return lines.getLast();
    }

    /**
     * Item 1. Before: try's last line said "would change 128 of 273 calls (rule hits 257 ...)" and
     * nothing of the 129 hits that changed nothing, nor why. Now it counts them per reason, naming
     * what NCCL's table lacks; the report counts them from the decision logs alone.
     */
    @Test
    void tryCountsTheRuleHitsThatChangeNothingPerReason() throws Exception {
        Path policy = CliRun.write(tmp, "unchanged.yaml", UNCHANGED);
        CliRun r = tryRun("--policy", policy.toString(), "--trace", TRACE);
        assertEquals(0, r.exit(), r.err() + r.out());
        String why = "candidate not offered (RING/LL128 is -1 in NCCL's table at AllReduce 4 B: 1 call; TREE/LL128"
                + " and RING/LL128 are -1 in NCCL's table at AllReduce 64 KiB: 64 calls) 65, already NCCL's pick 64";
        assertEquals(
                "try: the policy would change 128 of 273 calls (rule hits 257; changed: where its pick differs from"
                        + " NCCL's); 129 rule hits would change nothing: " + why
                        + "; run it with NCCL_TUNER_JAVA_MODE=shadow in the job next",
                lastLine(r));
        assertTrue(
                r.out()
                        .contains(
                                "\n129 rule hits would change nothing: candidate not offered (NCCL's cost table has -1"
                                        + " for each of the rule's candidates) 65, already NCCL's pick 64\n"),
                r.out());
        CliRun e = tryRun("--policy", policy.toString(), "--trace", TRACE, "--mode", "enforce");
        assertEquals(0, e.exit(), e.err() + e.out());
        assertEquals(
                "try: the policy changed 128 of 273 calls (rule hits 257); 129 rule hits changed nothing: " + why,
                lastLine(e));
    }

    /**
     * Item 6. Before: enforce mode printed 128 identical-looking selection lines, one per changed call.
     * Now a run of identical lines prints once, then {@code ... N more like this}.
     */
    @Test
    void enforceFoldsRepeatedChangedLines() throws Exception {
        Path policy = CliRun.write(tmp, "unchanged.yaml", UNCHANGED);
        CliRun e = tryRun("--policy", policy.toString(), "--trace", TRACE, "--mode", "enforce");
        assertEquals(0, e.exit(), e.err() + e.out());
        assertTrue(
                e.out()
                        .contains("\nAllReduce: 262144 Bytes -> Algo TREE proto SIMPLE channel{Lo..Hi}={NCCL decides}"
                                + " [changed]\n... 63 more like this\nAllReduce: 1048576 Bytes -> Algo TREE proto"
                                + " SIMPLE channel{Lo..Hi}={NCCL decides} [changed]\n... 63 more like this\n"),
                e.out());
        assertEquals(2, e.out().lines().filter(l -> l.contains("[changed]")).count(), e.out());
    }

    /**
     * Item 1, from the logs: report reads the reasons off the decision logs (comm line's ruleHits, the
     * aggregates' counts and picks). Before: a rule hit NCCL offered no candidate for was in the
     * rank's "rule hits" and in no row, unexplained.
     */
    @Test
    void reportCountsUnchangedHitsFromTheLogs() throws Exception {
        Path shadow = CliRun.write(tmp, "shadow.jsonl", decisionLog("shadow", 0));
        CliRun s = CliRun.run("report", shadow.toString());
        assertEquals(0, s.exit(), s.err());
        assertTrue(
                s.out()
                        .contains("\n40 rule hits would change nothing: candidate not offered (NCCL's cost table has -1"
                                + " for each of the rule's candidates) 15, already NCCL's pick 25\n"),
                s.out());
        Path canary = CliRun.write(tmp, "canary.jsonl", decisionLog("canary", 30));
        CliRun c = CliRun.run("report", canary.toString());
        assertEquals(0, c.exit(), c.err());
        assertTrue(
                c.out()
                        .contains("\n70 rule hits changed nothing: candidate not offered (NCCL's cost table has -1 for"
                                + " each of the rule's candidates) 15, on NCCL's arm (canary) 55\n"),
                c.out());
        // more hits applied (90) than the aggregates count offered (85): its aggregates are cut, no count
        Path cut = CliRun.write(tmp, "cut.jsonl", decisionLog("canary", 90));
        CliRun x = CliRun.run("report", cut.toString());
        assertEquals(0, x.exit(), x.err());
        assertFalse(x.out().contains("changed nothing"), x.out());
    }

    /**
     * A decision log of one communicator (nRanks=2 nNodes=2): 100 rule hits, of which 60 at 4 B
     * changed RING/LL to RING/SIMPLE and 25 at 16 KiB picked RING/LL, NCCL's own; the other 15 found
     * no candidate offered (no aggregate line).
     */
    private static String decisionLog(String mode, int applied) {
        String common =
                "\"comm\":7,\"host\":\"h\",\"pid\":1,\"sha256\":\"" + "a".repeat(64) + "\",\"nRanks\":2,\"nNodes\":2,";
        return "{\"type\":\"comm\"," + common + "\"policy\":\"p\",\"profile\":\"nRanks2-nNodes2\",\"mode\":\"" + mode
                + "\",\"calls\":120,\"ruleHits\":100,\"applied\":" + applied
                + ",\"unaggregated\":0,\"at\":\"destroy\",\"commScope\":\"job\"}\n"
                + "{\"type\":\"aggregate\"," + common + "\"collective\":\"AllReduce\",\"nBytes\":4,\"toBytes\":5,"
                + "\"bucket\":\"[4 B, 5 B)\",\"ncclPick\":\"RING/LL\",\"policyPick\":\"RING/SIMPLE\",\"channels\":0,"
                + "\"count\":60}\n"
                + "{\"type\":\"aggregate\"," + common + "\"collective\":\"AllReduce\",\"nBytes\":16384,"
                + "\"toBytes\":20480,\"bucket\":\"[16 KiB, 20 KiB)\",\"ncclPick\":\"RING/LL\",\"policyPick\":"
                + "\"RING/LL\",\"channels\":0,\"count\":25}\n";
    }

    /**
     * Item 1, replay: before, its "matched a rule but changed nothing" line counted the not-offered
     * calls only (65), not the 64 whose rule picks NCCL's own (rows marked kept).
     */
    @Test
    void replayCountsBothReasons() throws Exception {
        Path policy = CliRun.write(tmp, "unchanged.yaml", UNCHANGED);
        CliRun r = CliRun.run("replay", "--mode", "shadow", "--trace", TRACE, "--policy", policy.toString());
        assertEquals(0, r.exit(), r.err());
        assertTrue(
                r.out()
                        .contains("\nall: 273 calls, 0 changed, 128 would change in enforce mode\nmatched a rule but"
                                + " changed nothing: 129 calls: NCCL offers none of the rule's candidates 65 (below),"
                                + " already NCCL's pick 64 (kept)\n  AllReduce 64 KiB (65536 B), numPipeOps 1: 64"
                                + " calls; rule profiles[0].rules[2] candidates TREE/LL128 RING/LL128; NCCL offers"
                                + " TREE/LL TREE/SIMPLE RING/LL RING/SIMPLE\n"),
                r.out());
    }

    /**
     * Item 2. Before: a profile naming {@code gpu: H200} never matched in try (the harness has no
     * GPU), and the advice was to try it "at its profile's shape", the same command. Now the last
     * line names the hardware the profile was skipped for and a command with {@code --gpu}; that
     * command runs the profile.
     */
    @Test
    void hardwareProfileAdviceWorksWhenFollowed() throws Exception {
        Path policy = Files.writeString(
                tmp.resolve("h200.yaml"),
                Files.readString(REPO.resolve("policies/h200-2rank.yaml"))
                        .replace("match: {nRanks: 2, nNodes: 2}", "match: {nRanks: 2, nNodes: 2, gpu: H200}"));
        CliRun r = tryRun("--policy", policy.toString(), "--trace", TRACE);
        assertEquals(0, r.exit(), r.err() + r.out());
        String again = "nccl-tuner " + String.join(" ", tryArgs("--policy", policy.toString(), "--trace", TRACE));
        assertEquals(
                "try: the policy changes nothing: profile two-ranks-socket has nRanks=2 nNodes=2 (the traces' shape)"
                        + " but was skipped: gpu 'H200' named but the GPU is unknown (the replay presents no GPU (as a"
                        + " process without a CUDA driver: a profile naming gpu or computeCapability is skipped) and"
                        + " NCCL 2.28.9 (--nccl-era 2.28's release)). Try it on the hardware it names: `" + again
                        + " --gpu H200`",
                lastLine(r));
        assertTrue(
                r.out()
                        .contains("\ntry: the replay presents no GPU (as a process without a CUDA driver: a profile"
                                + " naming gpu or computeCapability is skipped) and NCCL 2.28.9 (--nccl-era 2.28's"
                                + " release) to the plugin, as a job's CUDA driver and NCCL would; --gpu NAME and"
                                + " --nccl-version V present others\n"),
                r.out());
        CliRun followed = tryRun("--policy", policy.toString(), "--trace", TRACE, "--gpu", "H200");
        assertEquals(0, followed.exit(), followed.err() + followed.out());
        assertTrue(
                followed.out()
                        .contains("\ntry: the replay presents GPU H200 (cc 9.0, --gpu) and NCCL 2.28.9 (--nccl-era"
                                + " 2.28's release) to the plugin, as a job's CUDA driver and NCCL would; --gpu NAME"
                                + " and --nccl-version V present others\n"),
                followed.out());
        assertTrue(followed.out().contains("; tuner v5, NCCL 2.28.9, GPU H200 (cc 9.0), nvlDomains 2"), followed.out());
        assertTrue(
                lastLine(followed).startsWith("try: the policy would change 257 of 273 calls (rule hits 257;"),
                followed.out());
    }

    /**
     * Item 2, NCCL's version: a profile of NCCL 2.27.7 (a tuner v4 release) is tried as that release,
     * --nccl-version picking --nccl-era 2.24; the advice names both, and following it matches.
     */
    @Test
    void versionProfileAdviceNamesTheReleaseAndItsEra() throws Exception {
        Path policy = Files.writeString(
                tmp.resolve("v2277.yaml"),
                Files.readString(REPO.resolve("policies/h200-2rank.yaml"))
                        .replace(
                                "match: {nRanks: 2, nNodes: 2}", "match: {nRanks: 2, nNodes: 2, ncclVersion: 2.27.7}"));
        CliRun r = tryRun("--policy", policy.toString(), "--trace", TRACE);
        assertEquals(0, r.exit(), r.err() + r.out());
        assertTrue(
                lastLine(r)
                        .endsWith(
                                "but was skipped: ncclVersion 2.28.9 is outside 2.27.7..2.27.7 (the replay presents no"
                                        + " GPU (as a process without a CUDA driver: a profile naming gpu or computeCapability is"
                                        + " skipped) and NCCL 2.28.9 (--nccl-era 2.28's release)). Try it on the hardware it"
                                        + " names: `nccl-tuner "
                                        + String.join(" ", tryArgs("--policy", policy.toString(), "--trace", TRACE))
                                        + " --nccl-version 2.27.7 --nccl-era 2.24`"),
                r.out());
        CliRun followed = tryRun(
                "--policy", policy.toString(), "--trace", TRACE, "--nccl-version", "2.27.7", "--nccl-era", "2.24");
        assertEquals(0, followed.exit(), followed.err() + followed.out());
        assertTrue(followed.out().contains("; tuner v4, NCCL 2.27.7, GPU unknown"), followed.out());
        assertTrue(lastLine(followed).startsWith("try: the policy would change 257 of 273 calls"), followed.out());
    }

    /**
     * Item 2, the defaults: an NCCL log whose nccl-tests '# Rank' lines name the GPU presents it (and
     * says so); its NCCL version line is the one presented.
     */
    @Test
    void theGpuANcclLogNamesIsPresented() throws Exception {
        Path log = CliRun.write(tmp, "tests-info.log", TESTS_INFO_LOG);
        Path policy = Files.writeString(
                tmp.resolve("h100.yaml"),
                Files.readString(REPO.resolve("policies/h200-2rank.yaml"))
                        .replace("match: {nRanks: 2, nNodes: 2}", "match: {nRanks: 2, nNodes: 2, gpu: H100}"));
        CliRun r = tryRun("--policy", policy.toString(), "--trace", TRACE, "--nccl-log", log.toString());
        assertEquals(0, r.exit(), r.err() + r.out());
        assertTrue(
                r.out()
                        .contains("\ntry: the replay presents GPU NVIDIA H100 80GB HBM3 (cc 9.0, named by --nccl-log "
                                + log + ") and NCCL 2.28.9 (named by --nccl-log " + log + ") to the plugin, as a job's"
                                + " CUDA driver and NCCL would; --gpu NAME and --nccl-version V present others\n"),
                r.out());
        assertTrue(lastLine(r).startsWith("try: the policy would change 257 of 273 calls"), r.out());
    }

    /** Item 2, usage errors (exit 2): --cc without --gpu, and a --nccl-version another era calls the tuner as. */
    @Test
    void hardwareOptionsThatMakeNoSenseAreUsageErrors() {
        String policy = REPO.resolve("policies/h200-2rank.yaml").toString();
        CliRun cc = CliRun.run("try", "--policy", policy, "--trace", TRACE, "--cc", "9.0");
        assertEquals(2, cc.exit());
        assertTrue(
                cc.err()
                        .startsWith("nccl-tuner try: --cc is the compute capability of --gpu's GPU: give --gpu NAME"
                                + " with it\n"),
                cc.err());
        CliRun era = CliRun.run(
                "try", "--policy", policy, "--trace", TRACE, "--nccl-version", "2.27.7", "--nccl-era", "2.28");
        assertEquals(2, era.exit());
        assertTrue(
                era.err()
                        .startsWith("nccl-tuner try: --nccl-version 2.27.7 calls the tuner as NCCL 2.24 does (tuner"
                                + " v4), not as --nccl-era 2.28 (tuner v5); give --nccl-era 2.24, or leave it out\n"),
                era.err());
    }

    /**
     * Item 6. Before: {@code try --keep-logs DIR} made DIR before the harness ran and left it behind
     * when the harness failed or the plugin logged nothing. Now a folder try made is removed then.
     */
    @Test
    void keepLogsLeavesNoFolderWhenNothingIsLogged() throws Exception {
        Path failing = CliRun.write(tmp, "failing-harness", "#!/bin/sh\necho 'harness: cannot run'\nexit 2\n");
        assertTrue(failing.toFile().setExecutable(true));
        Path lib = CliRun.write(tmp, "libplugin.so", "");
        Path keep = tmp.resolve("keep");
        String policy = REPO.resolve("policies/h200-2rank.yaml").toString();
        CliRun r = CliRun.run(
                "try",
                "--harness",
                failing.toString(),
                "--plugin",
                lib.toString(),
                "--policy",
                policy,
                "--trace",
                TRACE,
                "--keep-logs",
                keep.toString());
        assertEquals(1, r.exit(), r.err());
        assertEquals(
                "nccl-tuner try: " + failing + ": the harness exited 2 on " + TRACE + " (its lines above)\n", r.err());
        assertTrue(r.out().contains("== " + TRACE + "\nharness: cannot run\n"), r.out()); // printed once, there
        assertFalse(Files.exists(keep), "the folder try made is removed");
        Path p8 = Files.writeString(
                tmp.resolve("p8.yaml"),
                Files.readString(Path.of(policy))
                        .replace("match: {nRanks: 2, nNodes: 2}", "match: {nRanks: 8, nNodes: 1}"));
        CliRun none = tryRun("--policy", p8.toString(), "--trace", TRACE, "--keep-logs", keep.toString());
        assertEquals(1, none.exit(), none.err() + none.out()); // no profile matches: exit 1, as validate
        assertTrue(
                none.out()
                        .contains("\ntry: --keep-logs " + keep + ": the plugin logged no decision (no log, or empty"
                                + " ones), so the folder try made for them is removed\n"),
                none.out());
        assertFalse(Files.exists(keep), "nothing logged: no folder");
    }

    /**
     * Item 6. Before: try --help's description broke mid-sentence ("one report over" / "all their
     * ...") and its synopsis split "TRACE.csv" over two lines at 80 columns. Now no line is wider
     * than 80 columns and each breaks between words.
     */
    @Test
    void tryHelpFitsEightyColumns() {
        CliRun r = CliRun.run("try", "--help");
        assertEquals(0, r.exit(), r.err());
        List<String> lines = r.out().lines().toList();
        assertEquals("Usage: nccl-tuner try --policy POLICY --trace TRACE.csv... [--mode MODE]", lines.getFirst());
        assertEquals(List.of(), lines.stream().filter(l -> l.length() > 80).toList(), "lines wider than 80 columns");
        assertTrue(
                r.out()
                        .contains("\nlogs. Several --trace files are replayed as the ranks of one job: one process\n"
                                + "each, one report over all their decision logs (the report's ranks); try each\n"),
                r.out());
        assertTrue(lines.stream().noneMatch(l -> l.endsWith("TRACE.")), r.out());
    }

    /**
     * Item 3. Before: report without --nccl-log took NCCL's pick from the decision logs only where
     * a rule hit, so at 64 KiB (no rule hit there) its chart showed NCCL's unforced time alone,
     * 86.1% regret, where compile --nccl-log said 43.38%; nothing said so. Now one line says where
     * NCCL's pick came from, where it is unknown, and that --nccl-log makes it the logged one.
     */
    @Test
    void reportSaysWhereNcclsPickCameFrom() throws Exception {
        Path shadow = CliRun.write(tmp, "shadow.jsonl", decisionLog("shadow", 0));
        String csv = CliRun.fixture("h200-2rank-sweep_allreduce.rep1.csv");
        CliRun r = CliRun.run("report", shadow.toString(), "--measurements", csv);
        assertEquals(0, r.exit(), r.err());
        assertEquals(
                "NCCL's pick: from the decision logs' rule hits (and any selection lines in the measurements), at 2 of"
                        + " 25 measured sizes of AllReduce nRanks=2 nNodes=2, inferred from the sizes around at 11;"
                        + " unknown at 12 (32 KiB .. 64 MiB), where NCCL's time is its unforced runs'"
                        + " alone, not pooled with its pick's forced runs as compile --nccl-log does (so the --html"
                        + " chart's NCCL regret there can differ from compile's); --nccl-log LOG (the measured runs'"
                        + " NCCL INFO log) makes NCCL's pick the logged one, as compile takes it",
                lastLine(r));
        CliRun logged = CliRun.run(
                "report", shadow.toString(), "--measurements", csv, "--nccl-log", CliRun.trace("nccl_sweep.rank0.log"));
        assertEquals(0, logged.exit(), logged.err());
        assertFalse(logged.out().contains("NCCL's pick: from"), logged.out());
    }

    /**
     * An nccl-tests output with NCCL's INFO lines (NCCL 2.28.9, TUNING only): two ranks on hostA and
     * hostB, H100s; a latency/bandwidth table in which RING/LL128 has bandwidth 0.0 (not offered) and
     * no 'comm ... nRanks N nNodes M' line, so the shape comes from the '# Rank' lines, as explain reads it.
     */
    static final String TESTS_INFO_LOG = testsInfoLog(true);

    private static String testsInfoLog(boolean rankLines) {
        String p = "hostA:4001:4001 [0] NCCL INFO ";
        String proto = "             LL |          LL128 |         Simple |";
        String threads = "            512 |            640 |            512 |";
        String zero = "    0.0/   0.0 |";
        StringBuilder sb = new StringBuilder();
        sb.append("# nThread 1 nGpus 1 minBytes 1024 maxBytes 1048576 step: 4(factor) warmup iters: 5 iters: 20\n");
        sb.append("#\n# Using devices\n");
        if (rankLines) {
            sb.append("#  Rank  0 Group  0 Pid   4001 on      hostA device  0 [0000:17:00] NVIDIA H100 80GB HBM3\n");
            sb.append("#  Rank  1 Group  0 Pid   5002 on      hostB device  0 [0000:17:00] NVIDIA H100 80GB HBM3\n");
        }
        sb.append(p).append("NCCL version 2.28.9+cuda12.9\n");
        String[][] blocks = {{"Tree", "Ring", "CollNetDirect"}, {"CollNetChain", "NVLS", "NVLSTree"}, {"PAT"}};
        String[] colls = {"Broadcast", "Reduce", "AllGather", "ReduceScatter", "AllReduce"};
        for (int b = 0; b < blocks.length; b++) {
            sb.append(p).append("  Algorithm   |");
            for (String a : blocks[b]) {
                sb.append(String.format("%50s |", a));
            }
            sb.append('\n')
                    .append(p)
                    .append("  Protocol    |")
                    .append(proto.repeat(blocks[b].length))
                    .append('\n');
            sb.append(p)
                    .append(" Max NThreads |")
                    .append(threads.repeat(blocks[b].length))
                    .append('\n');
            for (String c : colls) {
                sb.append(p).append(String.format("%13s |", c));
                if (b == 0) { // TREE (AllReduce only) and RING: LL and SIMPLE offered, LL128 bandwidth 0.0
                    sb.append(c.equals("AllReduce") ? "    8.0/  37.9 |" + zero + "   16.4/ 144.0 |" : zero.repeat(3));
                    sb.append("    7.8/  87.7 |" + zero + "   15.2/ 240.0 |").append(zero.repeat(3));
                } else {
                    sb.append(zero.repeat(3 * blocks[b].length));
                }
                sb.append('\n');
            }
        }
        sb.append(p).append("AllReduce: 65536 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..1}\n");
        return sb.toString();
    }

    /** A policy whose first candidate is RING/LL128, which the log's table does not offer. */
    static final String LL128_FIRST = """
            schema: nccl-tuner-java/v1
            name: ll128-first
            profiles:
              - name: nRanks2-nNodes2
                match: {nRanks: 2, nNodes: 2}
                rules:
                  - collective: AllReduce
                    bytes: {from: 0 B, to: 1 MiB}
                    candidates:
                      - {algorithm: RING, protocol: LL128}
                      - {algorithm: TREE, protocol: SIMPLE}
            """;

    /**
     * Item 4. Before: show and validate --nccl-log refused this log ("no latency/bandwidth table of a
     * communicator whose nRanks and nNodes the log gives") while explain --log read it, inferring
     * nRanks and nNodes from the '# Rank' lines. Now they read it as explain does and say what they
     * inferred; a log with no such lines is refused with what it lacks.
     */
    @Test
    void showAndValidateReadTheLogsExplainReads() throws Exception {
        Path log = CliRun.write(tmp, "tests-info.log", TESTS_INFO_LOG);
        Path policy = CliRun.write(tmp, "ll128.yaml", LL128_FIRST);
        CliRun explain =
                CliRun.run("explain", "--log", log.toString(), "--collective", "AllReduce", "--sizes", "64KiB");
        assertEquals(0, explain.exit(), explain.err());
        assertTrue(explain.out().contains("\nNCCL 2.28.9, nRanks=2 nNodes=2, "), explain.out());
        String inferred = "--nccl-log " + log + ": table 1 (host hostA, pid 4001) has no 'comm ... nRanks N nNodes M'"
                + " line: nRanks 2 inferred from the 2 '# Rank' lines (line 4), nNodes 2 inferred from the host names"
                + " of the '# Rank' lines (line 4); hosts of one NVLink domain (MNNVL) are one node to NCCL (as"
                + " explain infers them)\n";
        CliRun v = CliRun.run("validate", policy.toString(), "--nccl-log", log.toString());
        assertEquals(0, v.exit(), v.err());
        assertTrue(v.out().startsWith(inferred), v.out());
        assertTrue(
                v.out()
                        .contains("\nwarning: " + policy
                                + ":7:9: profiles[0].rules[0] (AllReduce [0 B, 1 MiB)): NCCL never offers RING/LL128"
                                + " at nRanks=2 nNodes=2 (bandwidth 0.0 in the cost table at " + log
                                + ":7), so the"
                                + " plugin passes over it there: TREE/SIMPLE runs; compile with --nccl-log leaves such"
                                + " candidates out\nresult: OK (0 errors, 1 warning)\n"),
                v.out());
        CliRun s = CliRun.run("show", policy.toString(), "--nccl-log", log.toString());
        assertEquals(0, s.exit(), s.err());
        assertTrue(s.out().startsWith(inferred), s.out());
        assertTrue(
                s.out()
                        .replaceAll(" +", " ")
                        .contains("\n AllReduce [0 B, 1 MiB) TREE/SIMPLE (not RING/LL128: bandwidth 0.0 in " + log
                                + ")\n"),
                s.out());
        Path bare = CliRun.write(tmp, "bare.log", testsInfoLog(false));
        CliRun refused = CliRun.run("show", policy.toString(), "--nccl-log", bare.toString());
        assertEquals(1, refused.exit(), refused.out());
        assertEquals(
                "nccl-tuner show: " + bare + ":5: table 1 (host hostA, pid 4001): the log gives no nRanks or nNodes for"
                        + " this table: no 'comm ... nRanks N nNodes M' line (NCCL_DEBUG_SUBSYS=INIT; nNodes from NCCL"
                        + " 2.20), and nothing else in it tells (nccl-tests' '# Rank' lines with their hosts or"
                        + " NCCL_HOSTID, ncclCommInitRank's nranks, the calls' [nranks=N]); log the run with"
                        + " NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,TUNING\n",
                refused.err());
    }

    /**
     * Item 5. Before: validate --nranks 16 without --nnodes checked nRanks=16 nNodes=1 and said
     * nothing of the 1. Now --nnodes is required with --nranks, as try requires it: exit 2.
     */
    @Test
    void validateNranksNeedsNnodes() {
        String policy = REPO.resolve("policies/h200-2rank.yaml").toString();
        CliRun r = CliRun.run("validate", policy, "--nranks", "16");
        assertEquals(2, r.exit(), r.out());
        assertEquals("", r.out());
        assertEquals(
                "nccl-tuner validate: --nranks 16 needs --nnodes: the communicator's nodes (a profile matches nRanks"
                        + " and nNodes both); give --nnodes M, one for all --nranks or one per --nranks\n"
                        + "see 'nccl-tuner validate --help'\n",
                r.err());
        CliRun both = CliRun.run("validate", policy, "--nranks", "16", "--nnodes", "2");
        assertEquals(1, both.exit(), both.out());
        assertTrue(
                both.out().contains("\nnRanks=16 nNodes=2: no profile matches; the plugin changes nothing there\n"),
                both.out());
    }

    /**
     * Item 6. Before (abe15c4): validate of an NCCLX interval CSV named its profiles nNodes first
     * (nNodes2-nRanks16) while compile wrote nRanks first. Now every name is Profile.nameOf's.
     */
    @Test
    void validateNamesNcclxProfilesNranksFirst() throws Exception {
        Path csv = Files.writeString(
                tmp.resolve("ncclx.csv"),
                "allreduce,[0,65535],tree,ll,-1,[2,2],[16,16]\nallreduce,[0,65535],ring,simple,-1,[2,4],*\n");
        CliRun r = CliRun.run("validate", csv.toString());
        assertEquals(0, r.exit(), r.out());
        assertTrue(r.out().contains("\n  profiles[0] nRanks16-nNodes2: nRanks=16 nNodes=2, 1 rule, sha256 "), r.out());
        assertTrue(r.out().contains("\n  profiles[1] nNodes2: nRanks=any nNodes=2, 1 rule, sha256 "), r.out());
        assertTrue(r.out().contains("\n  profiles[2] nNodes3..4: nRanks=any nNodes=3..4, 1 rule, sha256 "), r.out());
    }
}
