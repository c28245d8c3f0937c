package io.nccltuner.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The ninth newcomer walk's small frictions (issue 21) in show, report, try, replay, sweep, import
 * and validate: {@code show --ranks N} refused though try and compile take {@code --ranks}; report's
 * "ranks disagree (2 table, 0 decision problems)", one shape counted twice where a canary log's comm
 * and measured lines both name it; try's not-offered sizes in {@link io.nccltuner.policy.ByteSize#format}
 * ({@code 128062.5 KiB}) where replay prints the same call's {@code ~125.06 MiB}.
 */
class NewcomerNinthWalkFrictionsTest {
    @TempDir
    Path tmp;

    /** The show output's lines from the first shape on (the header names the temporary file). */
    private static String shapes(String out) {
        return out.substring(out.indexOf("\nnRanks=") + 1);
    }

    /** Item 1: show takes --ranks as --nranks; the same shapes. */
    @Test
    void showTakesRanksAsNranks() throws Exception {
        Path p = CliRun.write(tmp, "mixed.yaml", NewcomerEighthWalkShowTest.MIXED);
        CliRun ranks = CliRun.run("show", p.toString(), "--ranks", "2", "--nodes", "2", "--gpu", "NVIDIA H200");
        CliRun nranks = CliRun.run("show", p.toString(), "--nranks", "2", "--nodes", "2", "--gpu", "NVIDIA H200");
        assertEquals(0, ranks.exit(), ranks.err());
        assertEquals("", ranks.err());
        assertEquals(nranks.out(), ranks.out());
        assertEquals(
                "nRanks=2 nNodes=2: profile h200-2node (profiles[0], 1 rule)\n"
                        + "  collective  bytes         decision\n"
                        + "  AllReduce   [0 B, 1 MiB)  RING/SIMPLE\n"
                        + "  AllReduce   [1 MiB, inf)  NCCL decides\n"
                        + "  Broadcast, Reduce, AllGather, ReduceScatter: NCCL decides at every size\n",
                shapes(ranks.out()));
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
}
