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
 * The eighth newcomer walk, through compile: mangled rows printed three times, "policy not
 * written" in two wordings, advice to "pass --nodes" that did not say how, {@code --nnodes} and
 * {@code --nranks} that compile did not take, and a multi-file compile that stopped at its first
 * refused file. Each test asserts what the CLI prints now; its comment says what it printed before.
 */
@Timeout(240)
class NewcomerEighthWalkCompileTest {
    @TempDir
    Path tmp;

    static final String PLAIN = CliRun.fixture("plain-all_reduce_auto.txt");
    static final String SWEEP = CliRun.fixture("h200-2rank-sweep_allreduce.rep1.csv");

    /** nccl-tests output of 2 ranks with no '# Rank' lines and no NCCL INIT line: nNodes cannot be told. */
    private Path bareTable(String name) throws Exception {
        Path f = tmp.resolve(name);
        List<String> lines = Files.readAllLines(Path.of(PLAIN));
        Files.write(f, lines.stream().filter(l -> !l.contains("Rank  ")).toList());
        return f;
    }

    /** The error compile prints for {@link #bareTable}. */
    private static String cannotTellNodes(Path bare) {
        return bare + ":5: cannot tell nNodes: no '# Rank N ... on HOST' device lines and no NCCL 'comm ... "
                + "nNodes' line before this table (nRanks 2 is inferred from busbw/algbw 1.0000); pass --in " + bare
                + " --nodes N";
    }

    /**
     * Item 1. Before: each mangled row printed three times (the summary's list, the report's refused
     * rows, a warning per row on stderr). Now once, among the refused rows; the summary and stderr
     * count them.
     */
    @Test
    void mangledRowsPrintOnce() {
        String f = CliRun.fixture("mangled-mid-file_all_reduce.txt");
        CliRun r = CliRun.run("compile", f);
        assertEquals(0, r.exit(), r.err());
        assertEquals(
                "nccl-tuner compile: warning: skipped 2 mangled rows (listed under refused rows in the report); "
                        + "--strict refuses the file instead\n",
                r.err());
        // the summary no longer repeats stderr's count (the ninth walk): it points at the list below
        assertFalse(r.out().contains("mangled rows"), r.out());
        assertTrue(r.out().contains("\nbelow: 2 refused rows"), r.out());
        assertTrue(
                r.out()
                        .contains("refused rows (wrong results or mangled, never used): 2\n  " + f + ":13: row has 6 "
                                + "fields but the column header names 13"),
                r.out());
        assertEquals(1, r.out().split(f + ":13:", -1).length - 1, r.out());
        assertEquals(1, r.out().split(f + ":15:", -1).length - 1, r.out());
    }

    /** Item 1: one mangled row is counted in the singular. */
    @Test
    void oneMangledRowIsCountedInTheSingular() throws Exception {
        List<String> lines = Files.readAllLines(Path.of(CliRun.fixture("mangled-mid-file_all_reduce.txt")));
        Path f = tmp.resolve("one-mangled_all_reduce.txt");
        Files.write(f, lines.stream().filter(l -> !l.contains("2o.51")).toList());
        CliRun r = CliRun.run("compile", f.toString());
        assertEquals(0, r.exit(), r.err());
        assertEquals(
                "nccl-tuner compile: warning: skipped 1 mangled row (listed under refused rows in the report); "
                        + "--strict refuses the file instead\n",
                r.err());
    }

    /**
     * Item 2. Before: "policy not written: WHY. WHAT" on stdout and "inputs: WHY; policy not
     * written. WHAT" on stderr. Then the same sentence on both; now (the ninth walk: the verdict
     * opened and closed the screen) in full atop the report, and stderr's error line points at it.
     */
    @Test
    void thePolicyNotWrittenReasonHasOneWording() {
        Path yaml = tmp.resolve("p.yaml");
        CliRun r = CliRun.run("compile", PLAIN, "-o", yaml.toString());
        assertEquals(1, r.exit(), r.err());
        String why = "policy not written: no input measured a forced candidate (every run counts as NCCL's own pick), "
                + "so the policy would have no rules. Say what each file forced: --in FILE --algo X --proto Y (or "
                + "give NCCL_DEBUG=INFO output, whose 'set by environment' lines say it); --allow-empty writes the "
                + "empty policy";
        assertTrue(r.out().startsWith(why + "\n"), r.out());
        assertEquals("nccl-tuner compile: policy not written (see above)\n", r.err());
        assertFalse(Files.exists(yaml));
    }

    /**
     * Item 3. Before: "pass --nodes", which works only as {@code --in FILE --nodes N}. Now the
     * advice says so with the file the message names, and following it compiles.
     */
    @Test
    void theNodesAdviceSaysInFileNodesN() throws Exception {
        Path bare = bareTable("bare_all_reduce.txt");
        CliRun r = CliRun.run("compile", bare.toString());
        assertEquals(1, r.exit(), r.err());
        assertEquals("nccl-tuner compile: " + cannotTellNodes(bare) + "\n", r.err());
        CliRun followed = CliRun.run("compile", "--in", bare.toString(), "--nodes", "1");
        assertEquals(0, followed.exit(), followed.err());
        assertTrue(followed.out().contains("\nsummary: 0 rules from 3 measured sizes in 1 group (nRanks=2 nNodes=1)"));
    }

    /** Item 3: a parser's warning among the report's warnings says it the same way. */
    @Test
    void theReportsWarningsSayInFileNodesN() {
        String f = CliRun.fixture("inputs/hostid-two-ranks-one-host_all_reduce.txt");
        CliRun r = CliRun.run("compile", f);
        assertEquals(0, r.exit(), r.err());
        assertTrue(
                r.out()
                        .contains("\n  " + f + ":15: nNodes 2 counted from the NCCL_HOSTIDs of the ranks' processes "
                                + "(gpuhost0, gpuhost1, NCCL's 'NCCL_HOSTID set by environment' lines from line 11), "
                                + "not 1 from the host names of the '# Rank' lines (vm): a rank's NCCL_HOSTID is its "
                                + "host to NCCL (src/misc/utils.cc getHostHash); NCCL's 'comm ... nNodes' INFO line "
                                + "(NCCL_DEBUG_SUBSYS=INIT) would say so; pass --in " + f + " --nodes N if that is "
                                + "wrong\n"),
                r.out());
        assertFalse(r.out().contains("pass --nodes"), r.out());
    }

    /** Item 3: the collective's advice too ({@code --in FILE --collective NAME}). */
    @Test
    void theCollectiveAdviceSaysInFileCollectiveName() throws Exception {
        Path bare = bareTable("bare.txt");
        CliRun r = CliRun.run("compile", bare.toString());
        assertEquals(1, r.exit(), r.err());
        // with the nNodes it also lacks (no '# Rank' lines), said in the same run (InputProblemsAtOnceTest)
        assertEquals(
                "nccl-tuner compile: " + bare + ":5: cannot tell which collective this table measured (no "
                        + "'# Collective test starting' line, no *_perf program name, nothing in the file name)\n"
                        + "nccl-tuner compile: " + bare + ":5: cannot tell nNodes: no '# Rank N ... on HOST' device "
                        + "lines and no NCCL 'comm ... nNodes' line before this table\n"
                        + "nccl-tuner compile: " + bare + ": 2 problems (each on its line above), nothing read from "
                        + "this file: pass --in " + bare + " --collective NAME; then pass --in " + bare
                        + " --nodes N\n",
                r.err());
    }

    /**
     * Item 4. Before: compile refused {@code --nnodes}/{@code --nranks} (unknown options) while
     * explain and show take them. Now they are {@code --nodes}/{@code --ranks}: the same output.
     */
    @Test
    void nnodesAndNranksAreNodesAndRanks() throws Exception {
        Path bare = bareTable("bare_all_reduce.txt");
        CliRun nodes = CliRun.run("compile", "--in", bare.toString(), "--nodes", "2", "--ranks", "2");
        CliRun nnodes = CliRun.run("compile", "--in", bare.toString(), "--nnodes", "2", "--nranks", "2");
        assertEquals(0, nodes.exit(), nodes.err());
        assertTrue(nodes.out().contains("\nsummary: 0 rules from 3 measured sizes in 1 group (nRanks=2 nNodes=2)"));
        assertEquals(nodes, nnodes);
        String help = CliRun.run("compile", "--help").out();
        assertTrue(help.contains("--ranks, --nranks=N   nRanks, overriding the log's device lines.\n"), help);
        assertTrue(help.contains("--nodes, --nnodes=N   nNodes, overriding the log's host names.\n"), help);
    }

    /** Item 4: a misplaced --nnodes is refused as a misplaced --nodes is, in the spelling given. */
    @Test
    void aMisplacedNnodesIsRefusedLikeAMisplacedNodes() throws Exception {
        Path bare = bareTable("bare_all_reduce.txt");
        for (String opt : List.of("--nodes", "--nnodes")) {
            CliRun r = CliRun.run("compile", bare.toString(), opt, "2", "--in", PLAIN);
            assertEquals(2, r.exit(), r.err());
            assertEquals(
                    "nccl-tuner compile: " + opt + " 2: per-file options (--collective --algo --proto --channels "
                            + "--ranks --nodes) bind to the preceding --in FILE, each once; it follows the plain FILE "
                            + bare + " but comes before --in " + PLAIN + ", and so binds to " + PLAIN + ", not to "
                            + bare + "; write --in " + bare + " " + opt + " 2 for that file, or --in " + PLAIN + " "
                            + opt + " 2 for " + PLAIN + "\nsee 'nccl-tuner compile --help'\n",
                    r.err());
        }
        // --nodes then --nnodes after one --in: the same option twice
        CliRun twice = CliRun.run("compile", "--in", bare.toString(), "--nodes", "1", "--nnodes", "2");
        assertEquals(2, twice.exit(), twice.err());
        assertEquals(
                "nccl-tuner compile: --nnodes 2: per-file options (--collective --algo --proto --channels --ranks "
                        + "--nodes) bind to the preceding --in FILE, each once; --in " + bare + " already has --nodes "
                        + "1, so this --nnodes would apply to the plain FILE arguments; write --in FILE before each "
                        + "file's options (--in FILE --algo X --proto Y)\nsee 'nccl-tuner compile --help'\n",
                twice.err());
    }

    /** Item 4: --nnodes on a CSV would be ignored, as --nodes would. */
    @Test
    void nnodesOnACsvWouldBeIgnoredAsNodes() {
        CliRun nodes = CliRun.run("compile", "--in", SWEEP, "--nodes", "2");
        CliRun nnodes = CliRun.run("compile", "--in", SWEEP, "--nnodes", "2");
        assertEquals(1, nnodes.exit(), nnodes.err());
        assertEquals(
                "nccl-tuner compile: " + SWEEP + ": --nodes 2 would be ignored: a measurement CSV names each row's "
                        + "collective, candidate and shape in its columns (its rows: nRanks=2 nNodes=2); "
                        + "--collective/--algo/--proto/--channels/--ranks/--nodes describe nccl-tests output only. Drop "
                        + "them (with --in FILE before them for an nccl-tests file among the inputs), or correct the "
                        + "CSV's columns\n",
                nnodes.err());
        assertEquals(nodes, nnodes);
    }

    /**
     * Item 5. Before: a compile of three files, two of them refused, named the first refused only
     * (fix, rerun, the next). Now every input is read first and each refused one named on its line,
     * then a count; exit 1, as for one refused file.
     */
    @Test
    void everyRefusedFileIsNamedInOneRun() throws Exception {
        Path noRows = CliRun.write(tmp, "norows_all_reduce.txt", "# nccl-tests version 2.18.5\n# nothing here\n");
        Path bare = bareTable("bare_all_reduce.txt");
        CliRun r = CliRun.run("compile", noRows.toString(), PLAIN, "--in", bare.toString());
        assertEquals(1, r.exit(), r.err());
        assertEquals(
                "nccl-tuner compile: " + noRows + ": no nccl-tests size table found (a '#  size  count  type ...' "
                        + "header followed by rows); is this nccl-tests output?\n"
                        + "nccl-tuner compile: " + cannotTellNodes(bare) + "\n"
                        + "nccl-tuner compile: 2 of 3 inputs refused (each on its line above); nothing compiled\n",
                r.err());
        assertEquals("", r.out());
    }

    /**
     * Item 5: with a file of another kind among them (a usage error alone, exit 2), the exit code is
     * the first refused file's, as it was when compile stopped there.
     */
    @Test
    void theFirstRefusedFileDecidesTheExitCode() {
        String policy = CliRun.repoFile("policies/h200-2rank.yaml");
        String missing = tmp.resolve("missing.txt").toString();
        CliRun r = CliRun.run("compile", policy, missing, PLAIN);
        assertEquals(2, r.exit(), r.err());
        assertEquals(
                "nccl-tuner compile: " + policy + ": this is a policy (YAML), not measurements; compile reads "
                        + "nccl-tests outputs, sweep CSVs or a sweep folder (validate, show and try read policies)\n"
                        + "nccl-tuner compile: " + missing + ": no such file\n"
                        + "nccl-tuner compile: 2 of 3 inputs refused (each on its line above); nothing compiled\n"
                        + "see 'nccl-tuner compile --help'\n",
                r.err());
        CliRun other = CliRun.run("compile", missing, policy);
        assertEquals(1, other.exit(), other.err());
    }
}
