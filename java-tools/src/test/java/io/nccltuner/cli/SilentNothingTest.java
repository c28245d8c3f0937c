package io.nccltuner.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * Issue 21 item 7: no silent "nothing happened". Replay counts and shows the calls a rule matched
 * without effect (NCCL offers none of its candidates); explain warns when --measurements are of
 * another GPU or NCCL release; report without --measurements says how to price; an unknown
 * command exits 2 naming it; report --check exits 3 when ranks disagree.
 */
class SilentNothingTest {
    static final String F = CliRun.fixture("nvidia-boundaries.conf");

    @Test
    void replayShowsMatchedRulesNcclDoesNotOffer() {
        CliRun r = CliRun.run("replay", "--trace", CliRun.trace("trace_fsdp.csv"), "--policy", F, "--changes-only");
        assertEquals(0, r.exit(), r.err());
        assertTrue(
                r.out()
                        .contains("all: 61 calls, 0 changed\n"
                                + "matched a rule but changed nothing: 40 calls: NCCL offers none of the rule's candidates 39 "
                                + "(below), already NCCL's pick 1 (kept)\n"
                                + "  AllGather ~125.06 MiB (131136000 B), numPipeOps 1: 3 calls; rule " + F
                                + ":6 candidates NVLS/SIMPLE; "
                                + "NCCL offers RING/LL RING/SIMPLE PAT/SIMPLE\n"),
                r.out());
        // line 8 (ReduceScatter TREE/SIMPLE) is never offered: left out as the plugin leaves it out (issue 21,
        // twelfth walk), so its calls are no rule's
        assertFalse(r.out().contains(F + ":8 "), r.out());
    }

    /**
     * Issue 21 (second walk), item 6: a rule that matched and kept NCCL's pick had no mark in replay's
     * change column (blank, as calls no rule covers). nvidia-boundaries.conf line 3 names RING/LL for
     * small AllReduce, NCCL's own pick at 4 B in the FSDP trace: "kept"; lines 6 and 8 name
     * candidates NCCL does not offer: "kept: not offered". The legend under the table says so.
     */
    @Test
    void replayMarksRulesThatKeptNcclsPick() {
        CliRun r = CliRun.run("replay", "--trace", CliRun.trace("trace_fsdp.csv"), "--policy", F);
        assertEquals(0, r.exit(), r.err());
        String t = r.out().replaceAll(" +", " ");
        assertTrue(t.contains("\nAllReduce 4 B 4 1 1 RING/LL 16.607 RING/LL 16.607 kept\n"), r.out());
        assertTrue(
                t.contains("\nAllGather ~24.03 MiB 25192448 1 36 RING/SIMPLE 10519.300 RING/SIMPLE 10519.300 kept: not "
                        + "offered\n"),
                r.out());
        assertTrue(r.out().contains("\n" + ReplayCommand.LEGEND + "\n"), r.out());
        assertTrue(ReplayCommand.LEGEND.contains("kept = a rule matched and NCCL's own pick stays"));
        CliRun shadow =
                CliRun.run("replay", "--trace", CliRun.trace("trace_fsdp.csv"), "--policy", F, "--mode", "shadow");
        assertTrue(
                shadow.out().replaceAll(" +", " ").contains("RING/LL 16.607 would pick RING/LL 16.607 kept\n"),
                shadow.out());
    }

    /**
     * A replay whose communicators no profile matches says so in a verdict line, with the shapes and
     * what to do (it was "all: N calls, 0 changed" and the reason only in an engine INFO line).
     */
    @Test
    void replayOfAShapeNoProfileMatchesSaysSo() {
        String h200 = java.nio.file.Path.of("..", "policies", "h200-2rank.yaml").toString(); // profiles of 2 ranks
        CliRun r = CliRun.run(
                "replay",
                "--trace",
                CliRun.trace("trace_fsdp.csv"),
                "--policy",
                h200,
                "--nranks",
                "16",
                "--nnodes",
                "2");
        assertEquals(0, r.exit(), r.err());
        assertTrue(r.out().contains("all: 61 calls, 0 changed"), r.out());
        assertTrue(
                r.out()
                        .contains(
                                "replay: the policy changes nothing: no profile matches nRanks=16 nNodes=2; its profiles: "),
                r.out());
        assertTrue(r.out().contains("Give --nranks and --nnodes of one of them"), r.out());
        CliRun matching = CliRun.run("replay", "--trace", CliRun.trace("trace_fsdp.csv"), "--policy", h200);
        assertEquals(0, matching.exit(), matching.err());
        assertFalse(matching.out().contains("replay: the policy changes nothing"), matching.out());
    }

    @Test
    void explainWarnsOfMeasurementsFromAnotherMachine() {
        String log = CliRun.trace("nccl_sweep.rank0.log");
        String m = CliRun.fixture("nccl-tests-2.18_broadcast_no-validation.txt");
        CliRun r = CliRun.run(
                "explain", "--log", log, "--measurements", m, "--sizes", "1MiB", "--compute-capability", "70");
        assertEquals(0, r.exit(), r.err());
        assertEquals(
                "warning: --measurements " + m
                        + ": measured with NCCL 2.29.7, but communicator comm 0xc23bec0 (host vm,"
                        + " pid 746) of " + log + " runs NCCL 2.28.9; the times may not hold for this release's picks\n"
                        + "warning: --measurements " + m
                        + ": measured on NVIDIA H100 80GB HBM3 (compute capability 90), but communicator"
                        + " comm 0xc23bec0 (host vm, pid 746) has compute capability 70; the times price another GPU\n"
                        + "warning: --measurements " + m + ": no AllReduce measured (they hold Broadcast at nRanks=2 "
                        + "nNodes=2), so the measured columns stay empty ('-'); measure AllReduce at nRanks=2 nNodes=2 "
                        + "(`nccl-tuner sweep -o DIR --launch \"srun -N 2 --ntasks-per-node 1\" --algorithms TREE,RING "
                        + "--protocols LL,LL128,SIMPLE`, then --measurements DIR)\n",
                r.err());
        String csv = CliRun.fixture("h200-2rank-sweep_allreduce.rep1.csv");
        CliRun same = CliRun.run("explain", "--log", log, "--measurements", csv, "--sizes", "1MiB");
        // a sweep CSV names neither GPU nor release: nothing to compare, and explain says so (issue 21)
        assertEquals(ExplainCommand.namesNoMachine(Path.of(csv)) + "\n", same.err());
    }

    @Test
    void reportWithoutMeasurementsSaysHowToPrice() {
        CliRun r = CliRun.run("report", ReportCommandTest.res("rank-a.jsonl"));
        assertEquals(0, r.exit(), r.err());
        assertTrue(
                r.out()
                        .endsWith(
                                "\nnot priced: add --measurements FILE_OR_DIR (a sweep CSV or nccl-tests output of these "
                                        + "GPUs, or a folder of them) for the expected time saved per size and over the log\n"),
                r.out());
        CliRun priced = CliRun.run(
                "report",
                ReportCommandTest.res("rank-a.jsonl"),
                "--measurements",
                CliRun.fixture("h200-2rank-sweep_allreduce.rep1.csv"));
        assertTrue(!priced.out().contains("not priced"), priced.out());
    }

    @Test
    void reportCheckExitsThreeWhenRanksDisagree() {
        CliRun r = CliRun.run(
                "report",
                ReportCommandTest.res("rank-a.jsonl"),
                ReportCommandTest.res("rank-b.jsonl"),
                ReportCommandTest.res("rank-c.jsonl"),
                "--check");
        assertEquals(3, r.exit(), r.err());
        assertEquals(
                "nccl-tuner report: ranks disagree (1 shape with different compiled tables, 1 size with different decisions):"
                        + " exit 3; ranks of one communicator must run the same compiled table and decisions, or the job can"
                        + " hang\n",
                r.err());
        assertTrue(r.out().contains("tables: DIFFER\n"), "the report is written first");
        CliRun agree = CliRun.run("report", ReportCommandTest.res("rank-a.jsonl"), "--check");
        assertEquals(0, agree.exit(), agree.err());
    }

    @Test
    void anUnknownCommandExitsTwoNamingIt() {
        CliRun r = CliRun.run("vaildate", "--help");
        assertEquals(2, r.exit());
        assertEquals("", r.out());
        assertEquals(
                "nccl-tuner: unknown command 'vaildate'; did you mean validate?\nsee 'nccl-tuner --help'\n", r.err());
        CliRun none = CliRun.run("nosuch", "--help");
        assertEquals(2, none.exit());
        assertTrue(
                none.err()
                        .startsWith(
                                "nccl-tuner: unknown command 'nosuch'; the commands are compile, calibrate, import, explain, "),
                none.err());
    }
}
