package io.nccltuner.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nccltuner.policy.Algorithm;
import io.nccltuner.policy.Mode;
import io.nccltuner.policy.Policy;
import io.nccltuner.policy.PolicyLoader;
import io.nccltuner.policy.Protocol;
import java.io.ByteArrayInputStream;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

/**
 * {@code report} over the canary fixtures (src/test/resources/report/canary): text, --check, the
 * emitted policy, the HTML chart. Ranks a, b, c agree; d runs another table; e decides RING/SIMPLE
 * at 1 MiB. Verdicts: 1 MiB and 1.5 MiB promote, 64 KiB and 1.25 MiB keep NCCL, 4 KiB not enough.
 */
@Timeout(60)
class CanaryReportCommandTest {
    @TempDir
    Path tmp;

    static String res(String name) {
        try {
            return Path.of(CanaryReportCommandTest.class
                            .getResource("/report/canary/" + name)
                            .toURI())
                    .toString();
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    static String[] args(String... extra) {
        List<String> a = new java.util.ArrayList<>(
                List.of("report", res("canary-a.jsonl"), res("canary-b.jsonl"), res("canary-c.jsonl")));
        a.addAll(List.of(extra));
        return a.toArray(String[]::new);
    }

    @Test
    void textHasBothArmsTheGainAndTheVerdicts() {
        CliRun r = CliRun.run(args());
        assertEquals(0, r.exit(), r.err());
        String t = r.out().replaceAll(" +", " ");
        assertTrue(
                t.contains(
                        "nRanks=3 nNodes=1 AllReduce [1 MiB, 1.25 MiB) 300 300 100.4 108.5 100.0 125 120 79.9 88.1 80.1 TREE/SIMPLE"
                                + " +19.9% [+17.6%, +22.1%] ranks promote\n"),
                r.out());
        assertTrue(
                t.contains(
                        "nRanks=3 nNodes=1 AllReduce [4 KiB, 5 KiB) 150 150 12.0 13.6 12.0 24 24 10.0 12.0 10.2 TREE/LL"
                                + " +14.7% [-0.7%, +30.1%] ranks not enough calls\n"),
                r.out());
        assertTrue(t.contains("[1.5 MiB, 1.75 MiB) policy 135 0 135 0 channels differ 135\n"), r.out());
        assertTrue(t.contains("verdicts: 2 promote, 2 keep NCCL, 1 not enough calls\n"), r.out());
    }

    @Test
    void checkExitsThreeWhenRanksDisagree() {
        assertEquals(0, CliRun.run(args("--check")).exit());
        CliRun tables = CliRun.run(args(res("canary-d.jsonl")));
        assertEquals(Main.EXIT_CHECK, tables.exit(), "a difference is an exit code, with or without --check");
        assertTrue(tables.out().contains("measured tables: DIFFER"), tables.out());
        CliRun t = CliRun.run(args(res("canary-d.jsonl"), "--check"));
        assertEquals(Main.EXIT_CHECK, t.exit(), t.err());
        assertEquals(3, t.exit());
        assertTrue(t.err().contains("ranks disagree (1 shape with different compiled tables): exit 3"), t.err());
        CliRun d = CliRun.run(args(res("canary-e.jsonl"), "--check"));
        assertEquals(3, d.exit(), d.err());
        assertTrue(d.out().contains("measured decisions: DIFFER"), d.out());
        assertTrue(d.err().contains("ranks disagree (1 size with different decisions): exit 3"), d.err());
    }

    @Test
    void emittedPolicyLoadsAndHoldsExactlyThePromotedRanges() throws Exception {
        Path out = tmp.resolve("promoted.yaml");
        CliRun r = CliRun.run(args("--policy", res("canary-policy.yaml"), "--emit-policy", out.toString()));
        assertEquals(0, r.exit(), r.err());
        assertTrue(r.out().contains("(0 rules kept, 2 cut to promoted ranges, 3 dropped; mode enforce)"), r.out());
        Policy p = PolicyLoader.load(out);
        assertEquals(Mode.ENFORCE, p.mode());
        assertEquals("canary-test", p.name());
        assertEquals(1, p.profiles().size());
        List<Policy.Rule> rules = p.profiles().get(0).rules();
        assertEquals(2, rules.size(), Files.readString(out));
        assertEquals(1 << 20, rules.get(0).fromBytes());
        assertEquals(1310720, rules.get(0).toBytes()); // [1 MiB, 1.5 MiB) cut: 1.25 MiB keeps NCCL
        assertEquals(Policy.Range.exactly(1), rules.get(0).numPipeOps());
        assertEquals(2, rules.get(0).candidates().size());
        assertEquals(Algorithm.TREE, rules.get(0).candidates().get(0).algorithm());
        assertEquals(1572864, rules.get(1).fromBytes());
        assertEquals(1835008, rules.get(1).toBytes()); // [1.5 MiB, 2 MiB) cut: 1.75 MiB was not measured
        assertEquals(Protocol.SIMPLE, rules.get(1).candidates().get(0).protocol());
        assertEquals(16, rules.get(1).candidates().get(0).channels());
        assertTrue(
                Files.readString(out).contains("# [1 MiB, 1.25 MiB) nRanks=3 nNodes=1: gain +19.9% [+17.6%, +22.1%]"));
        // more calls needed: nothing promoted, every rule dropped
        CliRun none = CliRun.run(
                args("--policy", res("canary-policy.yaml"), "--emit-policy", out.toString(), "--min-calls", "1000"));
        assertEquals(0, none.exit(), none.err());
        assertTrue(PolicyLoader.load(out).profiles().get(0).rules().isEmpty());
    }

    /** The promoted policy keeps each profile's hardware match and model constants (PolicyYaml writes both). */
    @Test
    void emittedPolicyKeepsHardwareMatchAndConstants() throws Exception {
        String src = Files.readString(Path.of(res("canary-policy.yaml")))
                .replace(
                        "    match: {nRanks: 3, nNodes: 1}\n",
                        "    match: {nRanks: 3, nNodes: 1, gpu: H200, computeCapability: {min: \"9.0\", max: \"10.0\"}, "
                                + "ncclVersion: {min: \"2.28.3\"}, nvlDomain: {nNvlDomains: 2, maxRanksPerNvlDomain: {min: 1, max: 4}}}\n"
                                + "    constants:\n      baseLatencies.RING.LL: 7.5\n      llMaxBws.HOPPER.1NODE: 150\n");
        Path in = tmp.resolve("with-hardware.yaml");
        Files.writeString(in, src);
        Path out = tmp.resolve("promoted-hw.yaml");
        CliRun r = CliRun.run(args("--policy", in.toString(), "--emit-policy", out.toString()));
        assertEquals(0, r.exit(), r.err());
        assertFalse(r.err().contains("warning"), r.err());
        Policy.Profile p = PolicyLoader.load(out).profiles().get(0);
        assertEquals(PolicyLoader.load(in).profiles().get(0).hardware(), p.hardware(), Files.readString(out));
        assertEquals(2, p.constants().size(), Files.readString(out));
        assertEquals("baseLatencies.RING.LL", p.constants().get(0).name());
        assertEquals(7.5, p.constants().get(0).value(), 1e-9);
        assertEquals("llMaxBws.HOPPER.1NODE", p.constants().get(1).name());
        assertEquals(150.0, p.constants().get(1).value(), 1e-9);
    }

    @Test
    void emitPolicyNeedsThePolicy() {
        CliRun r = CliRun.run(args("--emit-policy", tmp.resolve("x.yaml").toString()));
        assertEquals(Main.EXIT_USAGE, r.exit());
        assertTrue(r.err().contains("--emit-policy needs --policy"), r.err());
        assertFalse(Files.exists(tmp.resolve("x.yaml")));
        assertEquals(Main.EXIT_USAGE, CliRun.run(args("--min-calls", "1")).exit());
    }

    @Test
    void htmlChartHasBothArmsAtEverySize() throws Exception {
        Path html = tmp.resolve("c.html");
        CliRun r = CliRun.run(args("--html", html.toString()));
        assertEquals(0, r.exit(), r.err());
        String page = Files.readString(html);
        assertFalse(page.contains("<script"));
        Matcher m = Pattern.compile("<svg class=\"chart canary\".*?</svg>", Pattern.DOTALL)
                .matcher(page);
        assertTrue(m.find(), "the canary chart");
        String svg = m.group();
        var doc = DocumentBuilderFactory.newInstance()
                .newDocumentBuilder()
                .parse(new ByteArrayInputStream(svg.getBytes(StandardCharsets.UTF_8)));
        NodeList groups = doc.getElementsByTagName("g");
        List<String> nccl = new java.util.ArrayList<>();
        List<String> policy = new java.util.ArrayList<>();
        for (int i = 0; i < groups.getLength(); i++) {
            Element g = (Element) groups.item(i);
            String title = g.getElementsByTagName("title").getLength() > 0
                    ? g.getElementsByTagName("title").item(0).getTextContent()
                    : "";
            if (g.getAttribute("class").equals("arm nccl")) {
                nccl.add(title.substring(0, title.indexOf(')') + 1));
            } else if (g.getAttribute("class").equals("arm policy")) {
                policy.add(title.substring(0, title.indexOf(')') + 1));
            }
        }
        List<String> sizes = List.of(
                "[4 KiB, 5 KiB)",
                "[64 KiB, 80 KiB)",
                "[1 MiB, 1.25 MiB)",
                "[1.25 MiB, 1.5 MiB)",
                "[1.5 MiB, 1.75 MiB)");
        assertEquals(sizes, nccl, "NCCL's arm at every size");
        assertEquals(sizes, policy, "the policy's arm at every size");
        assertTrue(svg.contains("[1 MiB, 1.25 MiB) policy arm: p50 79.9 us"), svg);
        assertEquals(1, count(svg, "NCCL's arm (NCCL's pick)"), "one legend entry per series");
        assertEquals(1, count(svg, "policy's arm (the policy's candidate)"));
        assertEquals(2, count(svg, ": promote, gain"), "the two promoted sizes are banded");
        assertTrue(page.contains("<td class=\"l ok\">promote</td>"));
        assertTrue(page.contains("<td class=\"l bad\">keep NCCL</td>"));
        assertTrue(page.contains("<td class=\"l noise\">not enough calls</td>"));
    }

    private static int count(String s, String what) {
        int n = 0;
        for (int i = s.indexOf(what); i >= 0; i = s.indexOf(what, i + 1)) {
            n++;
        }
        return n;
    }

    /** A canary log without the profiler (or a shadow log) has no measured lines: nothing to promote. */
    @Test
    void emitPolicyRefusesLogsWithoutMeasuredLines() throws Exception {
        Path log = tmp.resolve("tuner-vm-1.jsonl");
        Files.writeString(log, """
        {"type":"comm","comm":7,"host":"vm","pid":1,"policy":"canary-test","profile":"p","sha256":"%s","mode":"canary",\
        "nRanks":2,"nNodes":2,"calls":64,"ruleHits":64,"applied":6,"unaggregated":0,"at":"destroy"}
        {"type":"aggregate","comm":7,"host":"vm","pid":1,"sha256":"%s","nRanks":2,"nNodes":2,"collective":"AllReduce",\
        "nBytes":16384,"toBytes":20480,"bucket":"[16 KiB, 20 KiB)","ncclPick":"RING/LL","policyPick":"RING/SIMPLE",\
        "channels":0,"count":64}
        """.formatted("a".repeat(64), "a".repeat(64)));
        Path out = tmp.resolve("promoted.yaml");
        CliRun r = CliRun.run(
                "report", log.toString(), "--policy", res("canary-policy.yaml"), "--emit-policy", out.toString());
        assertEquals(1, r.exit(), r.out() + r.err());
        assertEquals(
                "nccl-tuner report: --emit-policy: the 1 log has no `measured` line: they are written at each"
                        + " communicator's end by a canary run (NCCL_TUNER_JAVA_MODE=canary) that also loads the profiler,"
                        + " NCCL_PROFILER_PLUGIN=.../libnccl-tuner-java.so (docs/canary.md); nothing measured to promote, "
                        + out
                        + " not written\n",
                r.err());
        assertFalse(Files.exists(out));
        Path shadow = Path.of(CanaryReportCommandTest.class
                .getResource("/report/rank-a.jsonl")
                .toURI());
        CliRun s = CliRun.run(
                "report", shadow.toString(), "--policy", res("canary-policy.yaml"), "--emit-policy", out.toString());
        assertEquals(1, s.exit(), s.out() + s.err());
        assertTrue(s.err().contains("the 1 log has no `measured` line"), s.err());
        assertFalse(Files.exists(out));
    }
}
