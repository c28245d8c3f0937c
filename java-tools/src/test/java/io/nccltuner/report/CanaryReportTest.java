package io.nccltuner.report;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nccltuner.policy.Collective;
import io.nccltuner.policy.InputException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The canary fixtures (src/test/resources/report/canary, written by gen_canary.py there): ranks a,
 * b, c of one 3 x 1 communicator. The expected figures are the script's, computed in Python from
 * the lines it wrote (sums, merged histograms, the delta method and the t-interval over the three
 * ranks' gains).
 */
class CanaryReportTest {
    @TempDir
    Path tmp;

    static Path res(String name) {
        try {
            return Path.of(
                    CanaryReportTest.class.getResource("/report/canary/" + name).toURI());
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    static CanaryReport build(long minCalls, String... ranks) throws Exception {
        CanaryReport.Builder b = new CanaryReport.Builder();
        for (String r : ranks) {
            DecisionLogFile f = DecisionLogFile.read(res("canary-" + r + ".jsonl"), b);
            b.endRank(f.rank());
        }
        return b.build(minCalls);
    }

    static CanaryReport.Row row(CanaryReport c, long nBytes) {
        return c.rows().stream()
                .filter(r -> r.fromBytes() == nBytes)
                .findFirst()
                .orElseThrow();
    }

    @Test
    void armsAndGainMatchTheFixture() throws Exception {
        CanaryReport c = build(30, "a", "b", "c");
        assertEquals(3, c.ranks());
        assertEquals(5, c.rows().size());
        CanaryReport.Row r = row(c, 1 << 20);
        assertEquals(Collective.AllReduce, r.collective());
        assertEquals(3, r.nRanks());
        assertEquals(1, r.nNodes());
        assertEquals(1310720, r.toBytes());
        assertEquals(300, r.nccl().count());
        assertEquals(300, r.nccl().timed());
        assertEquals(100.00633333333333, r.nccl().meanUs(), 1e-9);
        assertEquals(100.352, r.nccl().p50Us(), 1e-9);
        assertEquals(108.544, r.nccl().p95Us(), 1e-9);
        assertEquals(125, r.policy().count()); // 5 of rank c's ran RING/SIMPLE, untimed: still the policy's arm
        assertEquals(120, r.policy().timed());
        assertEquals(80.135, r.policy().meanUs(), 1e-9);
        assertEquals(79.872, r.policy().p50Us(), 1e-9);
        assertEquals(88.064, r.policy().p95Us(), 1e-9);
        assertEquals("TREE/SIMPLE", r.policy().decided());
        CanaryReport.Gain g = r.gain();
        assertEquals(0.1987007489525663, g.gain(), 1e-9);
        assertEquals(0.008967811409299975, g.callsHalf(), 1e-9);
        assertEquals(0.022310424653552968, g.ranksHalf(), 1e-6); // t(0.975, 2) = 4.3027 from the table
        assertEquals(3, g.ranksBoth());
        assertEquals("ranks", g.method(), "the ranks' interval is the wider here");
        assertEquals(0.17639032429901333, g.lo(), 1e-6);
        assertEquals(0.22101117360611924, g.hi(), 1e-6);
        CanaryReport.Gain g15 = row(c, 1572864).gain();
        assertEquals(0.1972496968765265, g15.gain(), 1e-9);
        assertEquals(0.15911367826497413, g15.lo(), 1e-6);
        assertEquals(0.23538571548807885, g15.hi(), 1e-6);
        assertEquals(-0.02243361457013804, row(c, 65536).gain().gain(), 1e-9);
        assertEquals(0.05063889579703329, row(c, 65536).gain().callsHalf(), 1e-9);
        assertEquals("calls", row(c, 65536).gain().method(), "the calls' interval is the wider at 64 KiB");
    }

    @Test
    void aVerdictOfEachKind() throws Exception {
        CanaryReport c = build(30, "a", "b", "c");
        assertEquals(CanaryReport.Verdict.PROMOTE, row(c, 1 << 20).verdict());
        assertEquals(CanaryReport.Verdict.PROMOTE, row(c, 1572864).verdict());
        CanaryReport.Row worse = row(c, 1310720); // the policy 18% slower: the whole interval below 0
        assertTrue(worse.gain().hi() < 0, "" + worse.gain());
        assertEquals(CanaryReport.Verdict.KEEP_NCCL, worse.verdict());
        CanaryReport.Row same = row(c, 65536); // no difference: the interval holds 0, with enough calls
        assertTrue(same.gain().lo() < 0 && same.gain().hi() > 0, "" + same.gain());
        assertEquals(CanaryReport.Verdict.KEEP_NCCL, same.verdict());
        CanaryReport.Row few = row(c, 4096); // 24 policy collectives < 30
        assertEquals(24, few.policy().timed());
        assertEquals(CanaryReport.Verdict.NOT_ENOUGH_CALLS, few.verdict());
        // with --min-calls 20 the same 4 KiB range is judged: its interval [-0.7%, +30.1%] holds 0
        assertEquals(
                CanaryReport.Verdict.KEEP_NCCL,
                row(build(20, "a", "b", "c"), 4096).verdict());
        assertEquals(
                CanaryReport.Verdict.NOT_ENOUGH_CALLS,
                row(build(200, "a", "b", "c"), 1 << 20).verdict());
    }

    @Test
    void executedAsDecidedAndItsReasons() throws Exception {
        CanaryReport c = build(30, "a", "b", "c");
        CanaryReport.Execution p1m = exec(c, 1 << 20, CanaryReport.Arm.POLICY);
        assertEquals(125, p1m.collectives());
        assertEquals(120, p1m.asDecided());
        assertEquals(5, p1m.notAsDecided());
        assertEquals(Map.of(CanaryReport.Reason.ALGORITHM, 5L), p1m.reasons()); // TREE/SIMPLE decided, RING/SIMPLE ran
        CanaryReport.Execution p15 = exec(c, 1572864, CanaryReport.Arm.POLICY);
        assertEquals(Map.of(CanaryReport.Reason.CHANNELS, 135L), p15.reasons()); // 16 decided, 8 ran
        assertEquals("channels differ 135", p15.reasonText());
        assertEquals(
                Map.of(CanaryReport.Reason.NOT_OFFERED, 21L),
                exec(c, 262144, CanaryReport.Arm.NOT_OFFERED).reasons());
        CanaryReport.Execution unjoined = exec(c, 1 << 20, CanaryReport.Arm.UNJOINED);
        assertEquals(9, unjoined.noDecision());
        assertEquals(Map.of(CanaryReport.Reason.NO_DECISION, 9L), unjoined.reasons());
        assertEquals(300, exec(c, 1 << 20, CanaryReport.Arm.NCCL).asDecided());
        assertEquals(3000, c.profiled().collectives());
        assertEquals(5, c.profiled().untimed());
    }

    private static CanaryReport.Execution exec(CanaryReport c, long nBytes, CanaryReport.Arm arm) {
        return c.executed().stream()
                .filter(e -> e.fromBytes() == nBytes && e.arm() == arm)
                .findFirst()
                .orElseThrow();
    }

    @Test
    void ranksThatDisagreeAreNamed() throws Exception {
        assertTrue(build(30, "a", "b", "c").ranksAgree());
        CanaryReport t = build(30, "a", "b", "c", "d");
        assertEquals(1, t.tableProblems().size(), "" + t.tableProblems());
        assertTrue(
                t.tableProblems()
                        .get(0)
                        .contains("sha256 cccccc...ccc on na:11, nb:12, nc:13; sha256 dddddd...ddd on nd:14"),
                t.tableProblems().get(0));
        CanaryReport d = build(30, "a", "b", "c", "e");
        assertTrue(d.tableProblems().isEmpty());
        assertEquals(1, d.decisionProblems().size(), "" + d.decisionProblems());
        assertTrue(
                d.decisionProblems()
                        .get(0)
                        .startsWith(
                                "nRanks=3 nNodes=1 AllReduce [1 MiB, 1.25 MiB): ranks' policy arms"
                                        + " decided differently (hang risk): ne:15 -> RING/SIMPLE; na:11, nb:12, nc:13 -> TREE/SIMPLE"),
                d.decisionProblems().get(0));
    }

    @Test
    void histogramBucketsAndTheTQuantile() {
        assertEquals(0.128, CanaryReport.histMidUs(0), 1e-12);
        assertEquals(0.256 * (1 + 0.5 / 16), CanaryReport.histMidUs(1), 1e-12); // [256, 272) ns
        assertEquals(65.536 * (1 + 2.5 / 16), CanaryReport.histMidUs(1 + 16 * 8 + 2), 1e-12); // 2^16 ns, j = 2
        assertEquals(4294967.296, CanaryReport.histMidUs(CanaryReport.HIST_BUCKETS - 1), 1e-6); // at or above 2^32 ns
        assertThrows(IllegalArgumentException.class, () -> CanaryReport.histMidUs(CanaryReport.HIST_BUCKETS));
        long[] h = new long[CanaryReport.HIST_BUCKETS];
        h[10] = 1;
        h[20] = 1;
        h[30] = 2;
        assertEquals(CanaryReport.histMidUs(20), CanaryReport.percentileUs(h, 0.5), 0); // 2nd of 4
        assertEquals(CanaryReport.histMidUs(30), CanaryReport.percentileUs(h, 0.95), 0);
        assertEquals(CanaryReport.histMidUs(10), CanaryReport.percentileUs(h, 0.05), 0);
        assertTrue(Double.isNaN(CanaryReport.percentileUs(new long[4], 0.5)));
        assertEquals(4.3027, CanaryReport.t975(2), 0);
        assertEquals(2.0423, CanaryReport.t975(30), 0);
        assertEquals(2.0211, CanaryReport.t975(40), 1e-4); // exact 2.02108
        assertEquals(1.9840, CanaryReport.t975(100), 1e-4); // exact 1.98397
    }

    @Test
    void aMalformedMeasuredLineNamesItsLine() throws Exception {
        Path f = tmp.resolve("bad.jsonl");
        Files.writeString(
                f, "{\"type\":\"measured\",\"collective\":\"AllReduce\",\"arm\":\"sideways\",\"nBytes\":4}\n");
        InputException e =
                assertThrows(InputException.class, () -> DecisionLogFile.read(f, new CanaryReport.Builder()));
        assertTrue(e.getMessage().contains("bad.jsonl:1"), e.getMessage());
        assertTrue(e.getMessage().contains("unknown arm 'sideways'"), e.getMessage());
        Files.writeString(
                f,
                "{\"type\":\"measured\",\"collective\":\"AllReduce\",\"arm\":\"nccl\",\"nBytes\":4,"
                        + "\"hist\":[[386,1]]}\n");
        e = assertThrows(InputException.class, () -> DecisionLogFile.read(f, new CanaryReport.Builder()));
        assertTrue(e.getMessage().contains("histogram bucket 386 outside [0, 386)"), e.getMessage());
        assertNotNull(DecisionLogFile.read(f)); // without a sink the line is ignored, as before
    }

    /**
     * Arms without a timed collective (the profiler saw the collectives but no device time), and
     * each reason a collective did not execute as decided: the policy decided TREE/SIMPLE on 4
     * channels and NCCL ran TREE/LL on 8; an unruled collective whose decision is unknown.
     */
    @Test
    void untimedArmsAndWhyCollectivesDidNotRunAsDecided() throws Exception {
        String m = "{\"type\":\"measured\",\"comm\":5,\"host\":\"u\",\"pid\":1,\"nRanks\":2,\"nNodes\":1,"
                + "\"collective\":\"AllReduce\",\"nBytes\":1048576,\"arm\":\"%s\",\"decided\":%s,"
                + "\"decidedChannels\":%d,\"executed\":%s,\"channels\":8,\"asDecided\":%s,\"count\":10,\"timed\":0,"
                + "\"sumUs\":0,\"sumSqUs\":0,\"hist\":[]}\n";
        Path f = tmp.resolve("untimed.jsonl");
        Files.writeString(
                f,
                String.format(m, "nccl", "\"RING/LL\"", 0, "\"RING/LL\"", "true")
                        + String.format(m, "policy", "\"TREE/SIMPLE\"", 4, "\"TREE/LL\"", "false")
                        + String.format(m, "notOffered", "null", 0, "null", "null")
                        + String.format(m, "unruled", "null", 0, "\"RING/LL\"", "false")
                        + "{\"type\":\"profiled\",\"joined\":false,\"collectives\":40,\"unjoined\":0,\"untimed\":40,"
                        + "\"unaggregated\":0,\"decisionsDropped\":0}\n");
        CanaryReport.Builder b = new CanaryReport.Builder();
        b.endRank(DecisionLogFile.read(f, b).rank());
        CanaryReport c = b.build(30);
        CanaryReport.Row r = row(c, 1 << 20);
        assertEquals(CanaryReport.Verdict.NOT_ENOUGH_CALLS, r.verdict());
        assertEquals(0, r.nccl().timed());
        assertTrue(Double.isNaN(r.policy().p50Us()));
        assertEquals("TREE/SIMPLE/4ch", r.policy().decided());
        assertEquals(
                Map.of(CanaryReport.Reason.PROTOCOL, 10L, CanaryReport.Reason.CHANNELS, 10L),
                c.executed().get(1).reasons());
        assertEquals(
                "protocol differs 10, channels differ 10", c.executed().get(1).reasonText());
        assertEquals("not offered 10", c.executed().get(2).reasonText());
        assertEquals("no rule 10, executed unknown 10", c.executed().get(3).reasonText());
        String t = c.text();
        assertTrue(
                t.contains("  profiled: 1 communicators (1 not joined to the tuner), 40 collectives, 0 unjoined,"
                        + " 40 untimed, 0 unaggregated, 0 decisions dropped\n"),
                t);
        assertTrue(t.contains("verdicts: 0 promote, 0 keep NCCL, 1 not enough calls\n"), t);
        String h = CanaryReportHtml.section(c);
        assertTrue(
                h.contains("<h2>AllReduce, nRanks 2, nNodes 1: device time by size, both arms</h2>\n"
                        + "<p class=\"noise\">no timed collectives</p>\n"),
                h);
        assertTrue(h.contains("<td>0 / 10</td><td>-</td><td>-</td><td>-</td>"), "NCCL's arm: no time, no busbw");
    }
}
