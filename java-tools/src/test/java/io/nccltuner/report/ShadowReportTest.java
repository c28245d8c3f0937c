package io.nccltuner.report;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nccltuner.compile.Compiler;
import io.nccltuner.compile.MeasurementCsv;
import io.nccltuner.compile.MeasurementSet;
import io.nccltuner.policy.Collective;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The shadow report over logs the fixtures do not cover: tuner v3/v4 logs (commScope "process":
 * the comm is the engine's handle, not NCCL's commId, so ranks cannot be matched by communicator),
 * a full aggregate table, and measurements without NCCL's own pick.
 */
class ShadowReportTest {
    @TempDir
    Path tmp;

    static final String SHA = "a".repeat(64);

    static String comm(String host, int pid, long comm, String scope, long nRanks, long nNodes, long unaggregated) {
        return "{\"type\":\"comm\",\"comm\":" + comm + ",\"host\":\"" + host + "\",\"pid\":" + pid
                + ",\"policy\":\"v4\",\"profile\":\"p\",\"sha256\":\"" + SHA + "\",\"mode\":\"shadow\",\"nRanks\":"
                + nRanks + ",\"nNodes\":" + nNodes + ",\"calls\":100,\"ruleHits\":13,\"applied\":0,\"unaggregated\":"
                + unaggregated + ",\"at\":\"destroy\",\"commScope\":\"" + scope + "\"}\n";
    }

    /** An aggregate line: NCCL's pick RING/LL, the policy's pick with its channels. */
    static String agg(long comm, Collective c, long from, long to, String policy, int channels, long count) {
        return "{\"type\":\"aggregate\",\"comm\":" + comm + ",\"collective\":\"" + c + "\",\"nBytes\":" + from
                + ",\"toBytes\":" + to + ",\"ncclPick\":\"RING/LL\",\"policyPick\":\"" + policy + "\",\"channels\":"
                + channels + ",\"count\":" + count + "}\n";
    }

    ShadowReport report(String... files) throws Exception {
        List<DecisionLogFile> logs = new ArrayList<>();
        for (int i = 0; i < files.length; i++) {
            Path p = tmp.resolve("rank" + i + ".jsonl");
            Files.writeString(p, files[i]);
            logs.add(DecisionLogFile.read(p));
        }
        return ShadowReport.build(logs, List.of());
    }

    @Test
    void tunerV4RanksWithoutARuleHitAreNotCompared() throws Exception {
        // h:1 has rule hits at 4 B and 16 KiB, h:2 (the same 2 x 2 shape) at 4 B only: whether h:2 made
        // 16 KiB calls at all is unknown without NCCL's commId
        String h1 = comm("h", 1, 7, "process", 2, 2, 5)
                + agg(7, Collective.AllReduce, 4, 5, "RING/SIMPLE", 8, 3)
                + agg(7, Collective.AllReduce, 16384, 20480, "TREE/SIMPLE", 0, 10);
        String h2 = comm("h", 2, 9, "process", 2, 2, 0) + agg(9, Collective.AllReduce, 4, 5, "RING/SIMPLE", 8, 3);
        ShadowReport r = report(h1, h2);
        assertEquals(List.of("h:2 at AllReduce 16 KiB"), r.notCompared());
        assertEquals(List.of(), r.decisionProblems(), "where both decided, they agree");
        String t = r.text();
        assertTrue(t.contains(", rule hits 13, applied 0, 5 hits not broken down\n"), t);
        assertTrue(
                t.contains("decisions: every rank reaches the same decision at every size\n"
                        + "decisions not compared at 1 size: ranks with no rule hit where other ranks of the shape"
                        + " have one (h:2 at AllReduce 16 KiB); their logs do not name NCCL's commId (tuner v3/v4),"
                        + " so whether they ran those calls is unknown\n"),
                t);
        assertTrue(
                t.replaceAll(" +", " ")
                        .contains("nRanks=2 nNodes=2 AllReduce [4 B, 5 B) 6 2 RING/LL RING/SIMPLE/8ch\n"),
                t);
        assertTrue(ShadowReportHtml.render(r)
                .contains("<li>Not compared (the logs do not name NCCL's commId, tuner v3/v4): ranks with no"
                        + " rule hit where other ranks of the shape have one: h:2 at AllReduce 16 KiB</li>\n"));
    }

    @Test
    void moreThanThreeSizesNotComparedAreNamedUpToThree() throws Exception {
        String h1 = comm("h", 1, 7, "process", 2, 2, 0)
                + agg(7, Collective.AllReduce, 4, 5, "RING/SIMPLE", 0, 1)
                + agg(7, Collective.Broadcast, 65536, 81920, "RING/SIMPLE", 0, 1)
                + agg(7, Collective.Reduce, 1024, 1280, "RING/SIMPLE", 0, 1)
                + agg(7, Collective.AllGather, 65536, 81920, "RING/SIMPLE", 0, 1)
                + agg(7, Collective.AllReduce, 16384, 20480, "TREE/SIMPLE", 0, 1);
        String h2 = comm("h", 2, 9, "process", 2, 2, 0) + agg(9, Collective.AllReduce, 4, 5, "RING/SIMPLE", 0, 1);
        ShadowReport r = report(h1, h2);
        // by NCCL's collective id (ncclFunc_t: Broadcast 0, Reduce 1, AllGather 2, AllReduce 4), then size
        assertEquals(
                List.of(
                        "h:2 at Broadcast 64 KiB",
                        "h:2 at Reduce 1 KiB",
                        "h:2 at AllGather 64 KiB",
                        "h:2 at AllReduce 16 KiB"),
                r.notCompared());
        assertTrue(
                r.text()
                        .contains("decisions not compared at 4 sizes: ranks with no rule hit where other ranks of the"
                                + " shape have one (h:2 at Broadcast 64 KiB; h:2 at Reduce 1 KiB; h:2 at AllGather"
                                + " 64 KiB; ...); their logs"),
                r.text());
    }

    @Test
    void measurementsWithoutNcclsOwnPickPriceNothing() throws Exception {
        // optimize_config.py rows of forced candidates only (8 ranks, 1 node, AllReduce 4 KiB .. 64 KiB): no
        // unforced run, so no regret to chart and no NCCL time to price with
        MeasurementSet data = new MeasurementSet();
        MeasurementCsv.parse(
                Path.of(ShadowReportTest.class
                        .getResource("/compile/inputs/optimize-config-no-auto_perf.csv")
                        .toURI()),
                data);
        List<Compiler.Group> groups =
                Compiler.compile(data, Compiler.Options.defaults("report")).groups();
        Path p = tmp.resolve("k.jsonl");
        Files.writeString(
                p,
                comm("k", 4, 5, "job", 8, 1, 0)
                        + agg(5, Collective.AllReduce, 65536, 81920, "TREE/SIMPLE", 0, 1)
                        + agg(5, Collective.AllReduce, 4096, 5120, "RING/LL", 4, 7));
        ShadowReport r = ShadowReport.build(List.of(DecisionLogFile.read(p)), groups);
        assertEquals(0, r.pricedCalls());
        String t = r.text().replaceAll(" +", " ");
        assertTrue(
                t.contains("nRanks=8 nNodes=1 AllReduce [4 KiB, 5 KiB) 7 1 RING/LL RING/LL/4ch - - - - - - -"
                        + " not measured: no measured size (numPipeOps 1, NCCL's pick timed) governs it\n"),
                t);
        String page = ShadowReportHtml.render(r);
        assertTrue(page.contains("<h2>AllReduce, nRanks 8, nNodes 1: regret by size</h2>\n"), "the group is charted");
        assertTrue(page.contains("<p class=\"noise\">no measured NCCL time</p>\n"), page);
        assertTrue(page.contains("<td colspan=\"6\"></td><td class=\"l noise\">not measured</td>"), page);
    }
}
