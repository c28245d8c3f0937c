package io.nccltuner.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 21 (fourth newcomer walk, from the tarball): the report, try, replay and explain side, and
 * the exit codes against docs/compile.md's table. Each test asserts the message and exit code the
 * CLI prints now; its comment says what it printed before.
 */
class NewcomerFourthWalkTest {
    @TempDir
    Path tmp;

    static final String CONF = CliRun.fixture("nvidia-boundaries.conf");
    static final String POLICY = Path.of(System.getProperty("nccltj.repo", ".."))
            .resolve("policies/h200-2rank.yaml")
            .toString();

    /**
     * Item 16. Before: bare {@code nccl-tuner} printed the usage on stdout and exited 0, {@code show
     * --nodes 0} exited 1 while {@code try --mode enforced} exited 2. Now an option value that makes
     * no sense is a usage error in every command: exit 2, the message, {@code see 'nccl-tuner
     * <command> --help'}.
     */
    @Test
    void everyCommandExitsTwoForAnOptionValueThatMakesNoSense() {
        String missing = tmp.resolve("missing.txt").toString();
        String yaml = tmp.resolve("p.yaml").toString();
        List<List<String>> bad = List.of(
                List.of("compile", missing, "--window", "9"),
                List.of("calibrate", missing, "-o", yaml, "--lambda", "-1"),
                List.of("import", CONF, "--no-such-option"),
                List.of("explain", "--log", missing, "--sizes", "1MiB:4KiB"),
                List.of("replay", "--trace", missing, "--policy", CONF, "--mode", "enforced"),
                List.of("sweep", "-o", tmp.resolve("s").toString(), "--candidate", "RING/LL", "-b", "1G", "-e", "64M"),
                List.of("validate", CONF, "--nranks", "0"),
                List.of("show", CONF, "--nodes", "0"),
                List.of("report", missing, "--min-calls", "1"),
                List.of("try", "--policy", CONF, "--trace", missing, "--mode", "enforced"));
        List<String> firstLines = List.of(
                "nccl-tuner compile: --window: 9 is outside 0..8",
                "nccl-tuner calibrate: --lambda and --mu must be >= 0",
                "nccl-tuner import: Unknown option: '--no-such-option'",
                "nccl-tuner explain: --sizes: '1MiB:4KiB' needs 0 < FROM <= TO",
                "nccl-tuner replay: --mode: 'enforced' is not shadow, canary, enforce or off",
                "nccl-tuner sweep: -b 1G (1 GiB) is above -e 64M (64 MiB): nccl-tests sweeps from -b up to -e; give the "
                        + "smaller size to -b",
                "nccl-tuner validate: --nranks and --nnodes must be >= 1 (got 0)",
                "nccl-tuner show: --nodes: 0 is outside 1..1048576",
                "nccl-tuner report: --min-calls must be at least 2, not 1",
                "nccl-tuner try: --mode must be shadow or enforce, not 'enforced'");
        for (int i = 0; i < bad.size(); i++) {
            CliRun r = CliRun.run(bad.get(i).toArray(String[]::new));
            String c = bad.get(i).getFirst();
            assertEquals(Main.EXIT_USAGE, r.exit(), c + ": " + r.err());
            List<String> lines = r.err().lines().toList();
            assertEquals(firstLines.get(i), lines.getFirst(), r.err());
            assertEquals("see 'nccl-tuner " + c + " --help'", lines.getLast(), r.err());
            assertEquals("", r.out(), c);
        }
    }

    /** Item 16. Bare {@code nccl-tuner}: the usage on stderr and exit 2; {@code --help} stays 0. */
    @Test
    void noCommandIsAUsageError() {
        CliRun bare = CliRun.run();
        assertEquals(2, bare.exit());
        assertEquals("", bare.out());
        assertTrue(bare.err().startsWith("Usage: nccl-tuner [-hV] [COMMAND]\n"), bare.err());
        assertTrue(bare.err().endsWith("\nnccl-tuner: no command given\nsee 'nccl-tuner --help'\n"), bare.err());
        CliRun help = CliRun.run("--help");
        assertEquals(0, help.exit());
        assertTrue(help.out().startsWith("Usage: nccl-tuner [-hV] [COMMAND]\n"), help.out());
        assertFalse(help.out().contains("no command given"), help.out());
    }

    /**
     * Item 16. A file the parsers refuse stays an input error (exit 1, one line, no "see ...
     * --help"): the code says whether the command line or the file is to fix.
     */
    @Test
    void aFileProblemStaysExitOne() {
        String missing = tmp.resolve("missing.txt").toString();
        CliRun r = CliRun.run("show", missing, "--nodes", "2");
        assertEquals(Main.EXIT_INPUT, r.exit());
        assertEquals("nccl-tuner show: " + missing + ": no such file\n", r.err());
    }

    /** nccl-tests output of 2 ranks with no '# Rank' lines and no NCCL INIT line: nNodes cannot be told. */
    private Path bareTable(Path dir) throws Exception {
        Path f = dir.resolve("bare_all_reduce.txt");
        List<String> lines = Files.readAllLines(Path.of(CliRun.fixture("plain-all_reduce_auto.txt")));
        Files.write(f, lines.stream().filter(l -> !l.contains("Rank  ")).toList());
        return f;
    }

    /**
     * Item 6. Before: one file of a {@code --measurements} folder the parsers refuse failed the whole
     * folder (exit 1), and its advice was "pass --nodes", which report does not have. Now the file is
     * skipped with a warning naming it, the others price the report, a note counts the files, and the
     * advice names the command that takes --nodes.
     */
    @Test
    void aRefusedFileOfAMeasurementsFolderIsSkippedNamingIt() throws Exception {
        Path d = tmp.resolve("m");
        Files.createDirectories(d);
        Files.copy(Path.of(CliRun.fixture("h200-2rank-sweep_allreduce.rep1.csv")), d.resolve("rep1.csv"));
        Path bare = bareTable(d);
        CliRun r = CliRun.run("report", ReportCommandTest.res("rank-a.jsonl"), "--measurements", d.toString());
        assertEquals(0, r.exit(), r.err());
        assertEquals(
                "warning: " + bare + ":5: cannot tell nNodes: no '# Rank N ... on HOST' device lines and no NCCL "
                        + "'comm ... nNodes' line before this table (nRanks 2 is inferred from busbw/algbw 1.0000); pass "
                        + "--nodes to `nccl-tuner compile` (report has no --nodes: it reads --measurements files as they "
                        + "stand); file skipped, the folder's other files are read\n"
                        + "note: " + d + ": read 1 of 2 measurement files (1 refused, 0 skipped)\n",
                r.err());
        assertTrue(
                r.out()
                        .replaceAll(" +", " ")
                        .contains("AllReduce [4 B, 5 B) 3 1 RING/LL RING/SIMPLE 4 B 4806.6 2453.2"),
                r.out());
    }

    /** Item 6. The same file alone: the error, exit 1, with replay's advice naming compile. */
    @Test
    void replaysAdviceNamesTheCommandThatHasTheOption() throws Exception {
        Path bare = bareTable(tmp);
        CliRun r = CliRun.run(
                "replay",
                "--trace",
                CliRun.trace("trace_tp_infer.csv"),
                "--policy",
                Path.of(System.getProperty("nccltj.repo", ".."))
                        .resolve("policies/h200-2rank.yaml")
                        .toString(),
                "--measurements",
                bare.toString());
        assertEquals(1, r.exit(), r.err());
        assertTrue(r.err().startsWith("nccl-tuner replay: " + bare + ":5: cannot tell nNodes: "), r.err());
        assertTrue(
                r.err()
                        .endsWith("; pass --nodes to `nccl-tuner compile` (replay has no --nodes: it reads "
                                + "--measurements files as they stand)\n"),
                r.err());
    }

    /**
     * Item 6, the class of bug: every "pass --OPTION" a command prints names an option of that
     * command, or the commands that have it. Walks every subcommand against each option the parsers
     * advise.
     */
    @Test
    void everyCommandsAdviceNamesAnOptionItHasOrTheCommandsThatDo() {
        picocli.CommandLine root = Main.commandLine();
        for (String opt : List.of("--nodes", "--ranks", "--collective", "--pool-runs", "--any-pipe-ops", "--nnodes")) {
            for (var e : root.getSubcommands().entrySet()) {
                var spec = e.getValue().getCommandSpec();
                String said = Main.advice(spec, "x.txt:3: cannot tell; pass " + opt);
                // compile's per-file options mean a file's shape; try's --nodes (the traces' shape) is not it
                boolean own = spec.findOption(opt) != null
                        && (e.getKey().equals("compile") || !CompileCommand.PER_FILE.contains(opt));
                if (own && e.getKey().equals("compile") && CompileCommand.PER_FILE.contains(opt)) {
                    // compile's per-file options: after --in with the file the message names
                    assertEquals(
                            "x.txt:3: cannot tell; pass --in x.txt " + opt
                                    + (opt.equals("--collective") ? " NAME" : " N"),
                            said,
                            e.getKey());
                } else if (own) {
                    assertEquals("x.txt:3: cannot tell; pass " + opt, said, e.getKey());
                } else {
                    java.util.regex.Matcher m = java.util.regex.Pattern.compile("to `nccl-tuner ([a-z]+)`")
                            .matcher(said);
                    assertTrue(m.find(), e.getKey() + ": " + said);
                    assertTrue(
                            root.getSubcommands()
                                            .get(m.group(1))
                                            .getCommandSpec()
                                            .findOption(opt)
                                    != null,
                            said);
                    assertTrue(said.contains("(" + e.getKey() + " has no " + opt), said);
                }
            }
        }
    }

    /**
     * Item 10. Before: try ran the harness over every trace first and then failed in report, as
     * "nccl-tuner report: ...". Now --measurements is read before anything runs, and the error is
     * try's: exit 1, nothing on stdout (no "try: policy ..." line, no harness run).
     */
    @Test
    void tryReadsItsMeasurementsBeforeRunningTheHarness() throws Exception {
        Path bare = bareTable(tmp);
        CliRun r = CliRun.run(
                "try",
                "--policy",
                POLICY,
                "--trace",
                CliRun.trace("trace_tp_infer.csv"),
                "--measurements",
                bare.toString());
        assertEquals(1, r.exit(), r.err());
        assertEquals("", r.out());
        assertTrue(r.err().startsWith("nccl-tuner try: " + bare + ":5: cannot tell nNodes: "), r.err());
        assertTrue(r.err().endsWith("(try has no --nodes: it reads --measurements files as they stand)\n"), r.err());
        String missing = tmp.resolve("none").toString();
        CliRun m = CliRun.run(
                "try", "--policy", POLICY, "--trace", CliRun.trace("trace_tp_infer.csv"), "--measurements", missing);
        assertEquals(1, m.exit());
        assertEquals("nccl-tuner try: " + missing + ": no such file\n", m.err());
        assertEquals("", m.out());
    }

    /** A copy of a decision log fixture with its commId and host changed: a rank of another communicator. */
    private Path otherCommunicator(String fixture, String host) throws Exception {
        Path f = tmp.resolve(host + ".jsonl");
        Files.writeString(
                f,
                Files.readString(Path.of(ReportCommandTest.res(fixture)))
                        .replace("17293822569102704642", "17293822569102704643")
                        .replaceAll("\"host\":\"[a-z]\",\"pid\":[0-9]+", "\"host\":\"" + host + "\",\"pid\":13"));
        return f;
    }

    /**
     * Item 7. Before: two ranks' logs of one communicator (one commId) read "2 logs, 2
     * communicators", and the logs of two communicators (two commIds) passed the cross-rank check,
     * "every rank reaches the same decision", though no rank had another of its communicator to be
     * compared with. Now each commId counts once, ranks are compared within their communicator, and
     * the report says which communicators were compared with no other rank.
     */
    @Test
    void crossRankCheckComparesTheRanksOfOneCommunicator() throws Exception {
        CliRun one = CliRun.run(
                "report", ReportCommandTest.res("diverge-x.jsonl"), ReportCommandTest.res("diverge-y.jsonl"));
        assertEquals(3, one.exit());
        assertTrue(one.out().startsWith("policy diverge: 2 logs, 1 communicator\n"), one.out());
        Path w = otherCommunicator("diverge-x.jsonl", "w");
        CliRun two = CliRun.run("report", ReportCommandTest.res("diverge-x.jsonl"), w.toString());
        assertEquals(0, two.exit(), two.err());
        assertTrue(two.out().startsWith("policy diverge: 2 logs, 2 communicators\n"), two.out());
        assertTrue(
                two.out()
                        .contains("\ndecisions: no two logged ranks of one communicator decide differently\n"
                                + "  not compared across ranks: nRanks=2 nNodes=2: 2 of its 2 communicators are logged by "
                                + "one of their 2 ranks only (commId 0xf000000000000002: x:11; commId "
                                + "0xf000000000000003: w:13): ranks are compared only with the ranks of their own "
                                + "communicator; give the logs of every rank of one job\n"),
                two.out());
        assertFalse(two.out().contains("every rank reaches the same decision"), two.out());
        // two communicators deciding differently is no hang risk: no DIFFER (the tables still differ: exit 3)
        Path z = otherCommunicator("diverge-y.jsonl", "z");
        CliRun apart = CliRun.run("report", ReportCommandTest.res("diverge-x.jsonl"), z.toString());
        assertEquals(3, apart.exit());
        assertTrue(
                apart.out().contains("\ndecisions: no two logged ranks of one communicator decide differently\n"),
                apart.out());
        assertFalse(apart.out().contains("decisions: DIFFER"), apart.out());
    }

    /**
     * validate's --nccl-log. Before: validate had none, so an old policy's rule whose first candidate
     * the testbed never offers (RING/LL128, bandwidth 0.0 over sockets) passed unnoticed, though
     * compile, show and try all take the log. Now validate reads it as they do.
     */
    @Test
    void validateNamesARuleWhoseCandidateTheLoggedTableNeverOffers() {
        String log = CliRun.trace("nccl_sweep.rank0.log");
        CliRun r = CliRun.run("validate", POLICY, "--nccl-log", log);
        assertEquals(0, r.exit(), r.err());
        assertTrue(
                r.out()
                        .contains("\nwarning: " + POLICY
                                + ":18:9: profiles[0].rules[0] (AllReduce [0 B, 8 KiB)): NCCL never offers RING/LL128 "
                                + "at nRanks=2 nNodes=2 (bandwidth 0.0 in the cost table at " + log
                                + ":32), so the plugin "
                                + "passes over it there: RING/SIMPLE runs; compile with --nccl-log leaves such candidates "
                                + "out\nresult: OK (0 errors, 1 warning)\n"),
                r.out());
        CliRun without = CliRun.run("validate", POLICY);
        assertTrue(without.out().endsWith("\nresult: OK (0 errors, 0 warnings)\n"), without.out());
        String missing = tmp.resolve("none.log").toString();
        CliRun m = CliRun.run("validate", POLICY, "--nccl-log", missing);
        assertEquals(1, m.exit());
        assertEquals("nccl-tuner validate: " + missing + ": no such file\n", m.err());
    }

    /**
     * Item 18. Before: a policy whose profiles match none of the shapes said "Give --nranks and
     * --nnodes of one of them" (replay), "Capture a trace ... or try --nranks N --nnodes M" (try),
     * "--topology at their --nranks and --nnodes" (explain), naming no command line. Now each names
     * the command lines that run the policy where it applies and that measure the job's shape.
     */
    @Test
    void wrongShapeAdviceNamesTheCommandLines() throws Exception {
        Path p8 = tmp.resolve("p8.yaml");
        Files.writeString(
                p8,
                Files.readString(Path.of(POLICY))
                        .replace("match: {nRanks: 2, nNodes: 2}", "match: {nRanks: 8, nNodes: 1}"));
        String trace = CliRun.trace("trace_tp_infer.csv");
        CliRun r = CliRun.run("replay", "--trace", trace, "--policy", p8.toString());
        assertEquals(0, r.exit(), r.err());
        assertTrue(
                r.out()
                        .contains(
                                "replay: the policy changes nothing: no profile matches nRanks=2 nNodes=2; its profiles: "
                                        + "two-ranks-socket (nRanks=8 nNodes=1). Give --nranks and --nnodes of one of them: "
                                        + "`nccl-tuner replay --trace " + trace + " --policy " + p8
                                        + " --nranks 8 --nnodes 1`, or "
                                        + "replay a trace of the job's shape\n"),
                r.out());
        // the command it names runs the policy: 8 ranks on 1 node match the profile
        CliRun again =
                CliRun.run("replay", "--trace", trace, "--policy", p8.toString(), "--nranks", "8", "--nnodes", "1");
        assertEquals(0, again.exit(), again.err());
        assertFalse(again.out().contains("the policy changes nothing"), again.out());
        CliRun show = CliRun.run("show", p8.toString(), "--nodes", "1", "--ranks-per-node", "8");
        assertEquals(0, show.exit(), show.err());
        assertTrue(
                show.out().contains("\nnRanks=8 nNodes=1: profile two-ranks-socket (profiles[0], 3 rules)\n"),
                show.out());
        // try's command line, as Main got it, at the profile's shape (its --nranks/--nnodes replaced)
        assertEquals(
                "nccl-tuner try --policy p8.yaml --trace 'my trace.csv' --nranks 8 --nnodes 1",
                TryCommand.commandAt(
                        List.of("try", "--policy", "p8.yaml", "--nranks=4", "--trace", "my trace.csv", "--nnodes", "1"),
                        8,
                        1));
        assertEquals(
                "`nccl-tuner sweep -o DIR --launch \"srun -N 2 --ntasks-per-node 8\" --algorithms TREE,RING --protocols "
                        + "LL,LL128,SIMPLE`, then `nccl-tuner compile DIR -o POLICY`",
                TryCommand.measureAt("nRanks=16 nNodes=2"));
    }

    /**
     * Item 14. Before: explain --measurements of another shape (the two-rank sweep relabelled 8 ranks
     * on one node) against the 2-rank log printed '-' in every measured column without a word; replay
     * and report said why. Now explain warns, naming the shapes measured and how to measure this one.
     */
    @Test
    void explainSaysTheMeasurementsAreOfAnotherShape() throws Exception {
        Path csv = tmp.resolve("sweep-8x1.csv");
        String text = Files.readString(Path.of(CliRun.fixture("h200-2rank-sweep_allreduce.rep1.csv")));
        Files.writeString(csv, text.replaceAll("(?m)^(AllReduce,\\d+,[^,]+,[^,]+,[^,]+),2,2,", "$1,8,1,"));
        String log = CliRun.trace("nccl_sweep.rank0.log");
        CliRun r = CliRun.run("explain", "--log", log, "--measurements", csv.toString(), "--sizes", "1MiB");
        assertEquals(0, r.exit(), r.err());
        assertEquals(
                ExplainCommand.namesNoMachine(csv) + "\n" // a sweep CSV names no machine (issue 21)
                        + "warning: --measurements " + csv
                        + ": AllReduce measured at nRanks=8 nNodes=1, not at nRanks=2 nNodes=2 "
                        + "(the communicator's shape), so the measured columns stay empty ('-'): times of another shape "
                        + "do not price this one; measure nRanks=2 nNodes=2 (`nccl-tuner sweep -o DIR --launch \"srun -N 2 "
                        + "--ntasks-per-node 1\" --algorithms TREE,RING --protocols LL,LL128,SIMPLE`, then --measurements "
                        + "DIR)\n",
                r.err());
        CliRun same = CliRun.run(
                "explain",
                "--log",
                log,
                "--measurements",
                CliRun.fixture("h200-2rank-sweep_allreduce.rep1.csv"),
                "--sizes",
                "1MiB");
        assertEquals(
                ExplainCommand.namesNoMachine(Path.of(CliRun.fixture("h200-2rank-sweep_allreduce.rep1.csv"))) + "\n",
                same.err());
    }

    /**
     * Item 11. Before: replay of the coalesced trace listed numPipeOps 4 rows beside numPipeOps 1 ones
     * and its legend explained only the change column. Now a line says what those rows are; a trace
     * without such rows gets no such line.
     */
    @Test
    void replaysLegendExplainsRowsOfSeveralPipeOps() {
        CliRun r = CliRun.run("replay", "--trace", CliRun.trace("trace_coalesced.csv"), "--policy", POLICY);
        assertEquals(0, r.exit(), r.err());
        assertTrue(
                r.out()
                        .contains("\n" + ReplayCommand.LEGEND
                                + "\nnumPipeOps 4 = NCCL asked once for 4 operations it runs "
                                + "together (collectives of one ncclGroupStart/ncclGroupEnd, or a coalesced call, scheduled in "
                                + "one launch); the row's times are NCCL's predictions for those operations together (Ring "
                                + "counts the latency once per operation, the others once per batch: docs/cost-model.md, "
                                + "latCount), and only a rule whose numPipeOps range holds 4 applies to it (compile writes "
                                + "rules for the numPipeOps measured, 1 for nccl-tests, unless --any-pipe-ops)\n"),
                r.out());
        assertTrue(
                ReplayCommand.pipeOpsLegend(List.of(2, 4))
                        .startsWith("numPipeOps 2, 4 = NCCL asked once for that many "),
                ReplayCommand.pipeOpsLegend(List.of(2, 4)));
        CliRun one = CliRun.run("replay", "--trace", CliRun.trace("trace_tp_infer.csv"), "--policy", POLICY);
        assertFalse(one.out().contains("\nnumPipeOps "), one.out());
    }

    /**
     * Item 19. Before: {@code nccl-tuner frobnicate} was answered "did you mean calibrate,
     * validate?". Now only a close name is suggested, and with none the commands are listed.
     */
    @Test
    void anUnknownCommandSuggestsOnlyCloseNames() {
        CliRun far = CliRun.run("frobnicate");
        assertEquals(2, far.exit());
        assertEquals(
                "nccl-tuner: unknown command 'frobnicate'; the commands are compile, calibrate, import, explain, replay, "
                        + "sweep, validate, show, report, try, help\nsee 'nccl-tuner --help'\n",
                far.err());
        CliRun near = CliRun.run("compil");
        assertEquals(2, near.exit());
        assertEquals(
                "nccl-tuner: unknown command 'compil'; did you mean compile?\nsee 'nccl-tuner --help'\n", near.err());
        assertTrue(Main.close("shw", "show"));
        assertTrue(Main.close("rep", "report"));
        assertFalse(Main.close("frobnicate", "calibrate"));
    }

    /**
     * Item 19. Before: {@code explain --sizes 1MiB,4B,1MiB} listed 1 MiB, 4 B, 1 MiB in that order,
     * and said "the pick is ambiguous at 0" and "ambiguous at 0, different at 0". Now the rows ascend,
     * each size once, and zero counts are not printed as counts.
     */
    @Test
    void explainListsSizesAscendingAndSaysWhenThePickIsClear() {
        CliRun r = CliRun.run(
                "explain",
                "--log",
                CliRun.trace("nccl_sweep.rank0.log"),
                "--sizes",
                "1MiB,4B,1MiB",
                "--collective",
                "AllReduce");
        assertEquals(0, r.exit(), r.err());
        List<String> rows = r.out()
                .lines()
                .filter(l -> l.matches(" *\\d+ [KMG]?i?B +\\d+ .*"))
                .toList();
        assertEquals(2, rows.size(), r.out());
        assertTrue(rows.get(0).trim().startsWith("4 B "), rows.toString());
        assertTrue(rows.get(1).trim().startsWith("1 MiB "), rows.toString());
        assertTrue(
                r.out()
                        .contains("\n2 sizes; the pick is clear at each (no two best candidates' ranges overlap at the "
                                + "table's one-decimal rounding).\nSelection lines for 2 sizes: model pick = logged pick at "
                                + "all 2 (lines do not say numPipeOps; those of grouped calls may differ).\n"),
                r.out());
        assertFalse(r.out().contains("at 0"), r.out());
    }

    /**
     * Item 19. Before: report's busbw columns had no unit (the HTML's said GB/s), and measurements
     * that price nothing read "expected saving: 0.0 us, 0.00% of the rule hits' time (NCCL's 0.0 us
     * over the 0 of 13 rule hits priced)"; replay's line the same. Now the headers say GB/s and an
     * unpriced log or trace says "no priced calls".
     */
    @Test
    void unitsInReportHeadersAndNoPercentOfNothing() throws Exception {
        String log = ReportCommandTest.res("rank-a.jsonl");
        CliRun priced =
                CliRun.run("report", log, "--measurements", CliRun.fixture("h200-2rank-sweep_allreduce.rep1.csv"));
        assertEquals(0, priced.exit(), priced.err());
        String header = priced.out()
                .lines()
                .filter(l -> l.startsWith("shape "))
                .findFirst()
                .orElseThrow();
        assertTrue(header.contains("NCCL busbw GB/s  policy busbw GB/s"), header);
        Path csv = tmp.resolve("sweep-8x1.csv");
        String text = Files.readString(Path.of(CliRun.fixture("h200-2rank-sweep_allreduce.rep1.csv")));
        Files.writeString(csv, text.replaceAll("(?m)^(AllReduce,\\d+,[^,]+,[^,]+,[^,]+),2,2,", "$1,8,1,"));
        CliRun none = CliRun.run("report", log, "--measurements", csv.toString());
        assertEquals(0, none.exit(), none.err());
        assertTrue(
                none.out()
                        .contains(
                                "\nexpected saving: no priced calls (0 of 13 rule hits priced), so no saving to show\n"),
                none.out());
        assertFalse(none.out().contains("0.00%"), none.out());
        CliRun replay = CliRun.run(
                "replay",
                "--trace",
                CliRun.trace("trace_tp_infer.csv"),
                "--policy",
                POLICY,
                "--measurements",
                csv.toString());
        assertEquals(0, replay.exit(), replay.err());
        assertTrue(
                replay.out()
                        .contains("measured (" + csv
                                + "): 0 of 273 calls priced: no priced calls, so no expected saving\n"),
                replay.out());
        assertFalse(replay.out().contains("0.00%"), replay.out());
    }

    /**
     * Item 19. Before: compile listed each mangled row twice, under "refused rows" and again under
     * "warnings" ("mangled row skipped: ..."), and counted it in both. Now once, as a refused row.
     */
    @Test
    void aMangledRowIsListedOnce() {
        String f = CliRun.fixture("mangled-mid-file_all_reduce.txt");
        CliRun r = CliRun.run("compile", f);
        assertEquals(0, r.exit(), r.err());
        assertEquals(1, r.out().split(java.util.regex.Pattern.quote(f + ":13: "), -1).length - 1, r.out());
        assertEquals(1, r.out().split(java.util.regex.Pattern.quote(f + ":15: "), -1).length - 1, r.out());
        assertTrue(r.out().contains("refused rows (wrong results or mangled, never used): 2\n"), r.out());
        // the file's one warning (no forced configuration) is the first line's verdict, said there only
        assertFalse(r.out().contains("\nwarnings:"), r.out());
    }
}
