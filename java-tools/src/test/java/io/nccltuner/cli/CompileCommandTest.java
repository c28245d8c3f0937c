package io.nccltuner.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nccltuner.policy.Algorithm;
import io.nccltuner.policy.Mode;
import io.nccltuner.policy.Policy;
import io.nccltuner.policy.Policy.Rule;
import io.nccltuner.policy.PolicyLoader;
import io.nccltuner.policy.Protocol;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CompileCommandTest {
    @TempDir
    Path tmp;

    @Test
    void helpListsTheOptions() {
        CliRun r = CliRun.run("compile", "--help");
        assertEquals(0, r.exit());
        for (String opt : new String[] {
            "--threshold",
            "--noise-sigmas",
            "--html",
            "--workload",
            "--nccl-log",
            "--in",
            "--algo",
            "--proto",
            "--channels",
            "--placement",
            "--merge",
            "--any-pipe-ops"
        }) {
            assertTrue(r.out().contains(opt), opt + " missing from:\n" + r.out());
        }
        assertTrue(CliRun.run("--help").out().contains("compile"));
    }

    @Test
    void compilesTheSharedSweepIntoALoadablePolicyAndAChart() throws Exception {
        Path yaml = tmp.resolve("h200.yaml");
        Path html = tmp.resolve("h200.html");
        CliRun r = CliRun.run(
                "compile",
                CliRun.fixture("h200-2rank-sweep_allreduce.rep1.csv"),
                "-o",
                yaml.toString(),
                "--html",
                html.toString(),
                "--workload",
                CliRun.trace("trace_tp_infer.csv"));
        assertEquals(0, r.exit(), r.err());
        assertTrue(
                r.out().contains("AllReduce, nRanks 2, nNodes 2, numPipeOps 1: 25 sizes, 6 candidates, 1 replicate"),
                r.out());
        String table = r.out().replaceAll(" +", " ");
        // noise: 2 x NCCL's neighbour jump ln(4806.560 / 4526.560) from 4 B to 16 B (one replicate: no CV)
        assertTrue(
                table.contains("4 B .. 8 B auto 4806.560 RING/SIMPLE 2453.248 RING/SIMPLE 95.93% 0.00% 12.00%"),
                r.out());
        assertTrue(
                table.contains("64 MiB .. 80 MiB auto 35056.992 TREE/SIMPLE 26286.144 TREE/SIMPLE 33.37% 0.00% 0.00%"),
                r.out());
        assertTrue(r.out().contains("expected saving 45.94% of NCCL's time over all calls of the workload ("), r.out());
        assertTrue(r.out().contains("policy: " + yaml + " (12 rules)"), r.out());

        Policy p = PolicyLoader.load(yaml);
        assertEquals("h200", p.name());
        Rule last = p.profileFor(2, 2).rules().getLast();
        assertEquals(64L << 20, last.fromBytes());
        assertEquals(Algorithm.TREE, last.candidates().getFirst().algorithm());
        assertEquals(Protocol.SIMPLE, last.candidates().getFirst().protocol());
        assertEquals(0.3337, last.ncclRegret(), 0);

        String page = Files.readString(html);
        assertTrue(page.startsWith("<!DOCTYPE html>"));
        assertFalse(page.contains("<script"), "no scripts");
        assertFalse(page.replace("http://www.w3.org/2000/svg", "").contains("http"), "no external references");
        Matcher m = Pattern.compile("<svg.*?</svg>", Pattern.DOTALL).matcher(page);
        assertTrue(m.find());
        var svg = DocumentBuilderFactory.newInstance()
                .newDocumentBuilder()
                .parse(new ByteArrayInputStream(m.group().getBytes(StandardCharsets.UTF_8)));
        // one line per candidate (6) plus NCCL's own pick; a ring per NCCL point, a diamond per ruled size
        assertEquals(7, svg.getElementsByTagName("polyline").getLength());
        var paths = svg.getElementsByTagName("path");
        int picks = 0;
        int noiseBars = 0;
        for (int i = 0; i < paths.getLength(); i++) {
            String cls = ((org.w3c.dom.Element) paths.item(i)).getAttribute("class");
            picks += cls.equals("pick") ? 1 : 0;
            noiseBars += cls.equals("noise-bar") ? 1 : 0;
        }
        assertEquals(24 + 1, picks); // 8 MiB keeps NCCL's pick (noise); + the legend's
        assertTrue(noiseBars > 20, "1 replicate: the neighbour-jump noise as dashed bars, " + noiseBars);
        // busbw on a log axis, as wide as the page, each legend entry once
        assertTrue(page.contains("bus bandwidth (bytes/s, log scale)"), "busbw axis");
        assertEquals("chart", svg.getDocumentElement().getAttribute("class"));
        assertEquals("", svg.getDocumentElement().getAttribute("width"), "no fixed width");
        var texts = svg.getElementsByTagName("text");
        java.util.List<String> legend = new java.util.ArrayList<>();
        for (int i = 0; i < texts.getLength(); i++) {
            if (((org.w3c.dom.Element) texts.item(i)).getAttribute("class").equals("legend")) {
                legend.add(texts.item(i).getTextContent());
            }
        }
        assertEquals(
                java.util.List.of(
                        "RING/LL128",
                        "RING/SIMPLE",
                        "RING/SIMPLE/1ch",
                        "TREE/LL",
                        "TREE/SIMPLE",
                        "TREE/SIMPLE/1ch",
                        "NCCL's own pick (auto)"),
                legend);
        assertTrue(page.contains("TREE/SIMPLE 64 MiB: 26286.144 us, busbw 2.553 GB/s"), "busbw tooltip");
        assertTrue(page.contains("policy's pick TREE/SIMPLE 64 MiB: 26286.144 us"), "tooltip of the 64 MiB pick");
    }

    @Test
    void readmeExampleExplainsItsPickMarkersAndSavingBaseline() throws Exception {
        CliRun r = CliRun.run(
                "compile",
                CliRun.fixture("h200-2rank-sweep_allreduce.rep1.csv"),
                "--nccl-log",
                CliRun.trace("nccl_sweep.rank0.log"),
                "--workload",
                CliRun.trace("trace_tp_infer.csv"),
                "-o",
                tmp.resolve("m.yaml").toString());
        assertEquals(0, r.exit(), r.err());
        assertTrue(
                r.out()
                        .contains("\n  NCCL's pick: auto=X: NCCL ran X (its selection lines say so at that size); "
                                + "auto~X: X inferred from the logged sizes around it; auto: not known which\n"),
                r.out());
        assertTrue(r.out().contains("expected saving 13.88% of NCCL's time over all calls of the workload ("), r.out());
    }

    @Test
    void seed001WithNcclLogAndThreshold() throws Exception {
        Path yaml = tmp.resolve("seed.yaml");
        CliRun r = CliRun.run(
                "compile",
                CliRun.fixture("seed001-v100-allreduce.csv"),
                "--nccl-log",
                CliRun.fixture("seed001-nccl-2.22.3-tuning.log"),
                "-o",
                yaml.toString(),
                "--name",
                "seed001");
        assertEquals(0, r.exit(), r.err());
        String table = r.out().replaceAll(" +", " ");
        assertTrue(
                table.contains("1 MiB .. 2 MiB auto=RING/LL128 50.425 RING/LL 41.675 RING/LL 21.00% 0.00%"), r.out());
        assertTrue(table.contains("128 B .. 1 MiB auto 18.675 TREE/LL 18.660 NCCL 0.08% 0.08%"), r.out());
        assertTrue(table.contains("2 MiB .. 2.5 MiB auto 74.465 RING/LL 74.290 NCCL 0.24% 0.24%"), r.out());
        // the markers of the "NCCL's pick" column are explained under the table
        assertTrue(
                r.out()
                        .contains("\n  NCCL's pick: auto=X: NCCL ran X (its selection lines say so at that size); "
                                + "auto: not known which\n"),
                r.out());
        String text = Files.readString(yaml);
        assertTrue(text.contains("""
              - collective: AllReduce
                bytes: {from: 1 MiB, to: 2 MiB}
                numPipeOps: 1
                ncclPick: {algorithm: RING, protocol: LL128}
                ncclRegret: 0.21
                candidates:
                  - {algorithm: RING, protocol: LL, regret: 0.0}
        """), text);
        assertEquals(1, PolicyLoader.load(yaml).profiles().getFirst().rules().size());
        assertTrue(r.out().contains("policy: " + yaml + " (1 rule)\n"), r.out());

        CliRun strict = CliRun.run("compile", CliRun.fixture("seed001-v100-allreduce.csv"), "--threshold", "25");
        assertEquals(0, strict.exit());
        assertTrue(strict.out().contains("rules: 0"), strict.out());
        assertTrue(
                strict.out().endsWith("no -o: policy not written (0 rules; -o FILE writes it, -o - prints it)\n"),
                strict.out());
    }

    /**
     * optimize_config.py's input (here written from its columns, forced runs only, as NCCL's sample
     * data is): no size can get a rule. The report says so in its first lines, with the reason once
     * (the verdict line, which says what to collect; the summary points at it) and what else to
     * collect next, before any table; the per-size note is printed once per table.
     */
    @Test
    void zeroRulesSaysWhyAndWhatToCollectFirst() {
        CliRun r = CliRun.run("compile", CliRun.fixture("inputs/optimize-config-no-auto_perf.csv"));
        assertEquals(0, r.exit(), r.err());
        assertTrue(r.out().startsWith("""
        policy not written: NCCL's own pick was never measured at a size with a forced candidate (no unforced \
        run there, and no NCCL log naming the pick), so no candidate can be compared with it and the policy \
        would have no rules. Collect NCCL's own pick: the same runs without NCCL_ALGO/NCCL_PROTO/\
        NCCL_MAX_NCHANNELS (in optimize_config.py's CSV: rows with algorithm and protocol 'auto'; \
        `nccl-tuner sweep` always runs it, named NCCL: all_reduce_NCCL_r1.txt), or give --nccl-log with their \
        NCCL_DEBUG=INFO \
        NCCL_DEBUG_SUBSYS=TUNING selection lines; --allow-empty writes the empty policy
        summary: 0 rules from 4 measured sizes in 2 groups (AllGather and AllReduce at nRanks=8 nNodes=1): 0 sizes get a rule; no rule at:
          4 sizes: NCCL's own pick not measured (see the first line)
        collect next:
          - replicates: every group has 1 run per configuration, so the noise is unknown: repeat each run, \
        3+ times (`nccl-tuner sweep --replicates 3`, or more files of the same runs)

        """), r.out());
        assertTrue(r.out().contains("  [1] no unforced run (NCCL's own pick) at this size: all 3 sizes\n"), r.out());
        assertEquals(
                2,
                r.out().split("no unforced run \\(NCCL's own pick\\) at this size", -1).length - 1,
                "the 1-size group's note stays on its row, the 3-size group's is printed once: " + r.out());
        // the first line says the policy is not written and why; -o FILE would refuse too, so no "-o FILE writes it"
        assertFalse(r.out().contains("no -o:"), r.out());

        CliRun brief = CliRun.run("compile", CliRun.fixture("inputs/optimize-config-no-auto_perf.csv"), "--summary");
        assertEquals(0, brief.exit(), brief.err());
        assertFalse(brief.out().contains("size range"), brief.out());
        assertTrue(brief.out().contains("rules: 0\n"), brief.out());
    }

    /** The measured H200 sweep without its NCCL log: the summary asks for the log and for replicates. */
    @Test
    void summaryNamesTheNcclLogAndReplicatesToCollect() {
        CliRun r = CliRun.run("compile", CliRun.fixture("h200-2rank-sweep_allreduce.rep1.csv"), "--summary");
        assertEquals(0, r.exit(), r.err());
        assertTrue(r.out().startsWith("""
        summary: 12 rules from 25 measured sizes in 1 group (nRanks=2 nNodes=2): 24 sizes get a rule; no rule at:
          1 size: NCCL's pick kept, a faster candidate's gain is within the noise
        collect next:
          - replicates: every group has 1 run per configuration, so the noise is unknown (only neighbouring \
        sizes bound it: margin up to 51.31%): repeat each run, 3+ times (`nccl-tuner sweep --replicates 3`, \
        or more files of the same runs)
          - noise: AllReduce at nRanks=2 nNodes=2: at 1 size (8 MiB) the noise margin (51.31%) exceeds NCCL's \
        regret (17.67%), so the noise, not the measurement, kept NCCL's pick: replicates of NCCL's pick and of \
        TREE/SIMPLE there decide whether the gain is real
          - which candidate NCCL runs at 25 of 25 sizes: --nccl-log with the unforced runs' NCCL_DEBUG=INFO \
        NCCL_DEBUG_SUBSYS=TUNING output (its selection lines name NCCL's pick; that pick's forced runs then \
        count as NCCL's replicates and it is never a rule's candidate)
        """), r.out());
        assertTrue(r.out().split("\n").length < 40, "no per-size table: " + r.out());
    }

    @Test
    void perFileFlagsForLogsWithoutInfoLines() {
        CliRun r = CliRun.run(
                "compile",
                "--in",
                CliRun.fixture("nccl-tests-2.10_all_reduce_error-column.txt"),
                "--ranks",
                "16",
                "--nodes",
                "2",
                "--algo",
                "ring",
                "--proto",
                "simple",
                "--in",
                CliRun.fixture("nccl-tests-2.19_all_reduce_timestamps.txt"));
        assertEquals(0, r.exit(), r.err());
        assertTrue(r.out().contains("AllReduce, nRanks 16, nNodes 2, numPipeOps 1: 3 sizes, 1 candidate"), r.out());
        assertTrue(r.out().contains("no unforced run (NCCL's own pick) at this size"), r.out());
        assertTrue(r.out().contains("AllReduce, nRanks 2, nNodes 1, numPipeOps 1: 3 sizes"), r.out());
        assertTrue(r.out().contains("error-column.txt:8: error 2e-04 (out-of-place)"), r.out());
    }

    /**
     * Issue 21 (second walk), item 7: per-file options bind to the preceding --in FILE, each once, and
     * a misplaced one is refused saying so. Before: a repeated --algo after one --in silently went to
     * the plain FILE arguments (auto.txt counted as forced TREE, exit 0); a repeated --proto after the
     * last --in failed with "... without --in apply to FILE arguments, and none is given; write --in
     * FILE before them"; an option after a plain FILE silently bound to the --in before that FILE.
     */
    @Test
    void aMisplacedPerFileOptionIsRefusedNamingTheInItBindsTo() {
        String auto = CliRun.fixture("plain-all_reduce_auto.txt");
        String ring = CliRun.fixture("plain-all_reduce_ring_ll.txt");
        String rule = "per-file options (--collective --algo --proto --channels --ranks --nodes) bind to the preceding "
                + "--in FILE, each once";
        CliRun again = CliRun.run("compile", auto, "--in", ring, "--algo", "RING", "--proto", "LL", "--algo", "TREE");
        assertEquals(2, again.exit(), again.out());
        assertEquals(
                "nccl-tuner compile: --algo TREE: " + rule + "; --in " + ring + " already has --algo RING, so this "
                        + "--algo would apply to the plain FILE arguments; write --in FILE before each file's options (--in FILE --algo "
                        + "X --proto Y)\nsee 'nccl-tuner compile --help'\n",
                again.err());
        assertEquals("", again.out(), "nothing compiled");
        CliRun last = CliRun.run(
                "compile", "--in", auto, "--in", ring, "--algo", "RING", "--proto", "LL", "--proto", "SIMPLE");
        assertEquals(2, last.exit());
        assertTrue(
                last.err()
                        .startsWith("nccl-tuner compile: --proto SIMPLE: " + rule + "; --in " + ring
                                + " already has --proto LL"),
                last.err());
        CliRun next = CliRun.run("compile", "--in", auto, "--algo=RING", "--algo=TREE", "--in", ring);
        assertEquals(2, next.exit());
        assertTrue(
                next.err().contains("so this --algo would apply to --in " + ring + ", which comes after it;"),
                next.err());
        CliRun after = CliRun.run("compile", "--in", auto, ring, "--algo", "RING", "--proto", "LL");
        assertEquals(2, after.exit());
        assertEquals(
                "nccl-tuner compile: --algo RING: " + rule + "; it follows the plain FILE " + ring + ", yet binds to "
                        + "the --in " + auto + " before it, not to " + ring + "; write --in " + ring
                        + " --algo RING for that file, or "
                        + "put the plain FILE arguments before the first --in\nsee 'nccl-tuner compile --help'\n",
                after.err());
        CliRun before = CliRun.run("compile", auto, "--algo", "RING", "--proto", "LL", "--in", ring);
        assertEquals(2, before.exit());
        assertTrue(
                before.err()
                        .contains("; it follows the plain FILE " + auto + " but comes before --in " + ring
                                + ", and so binds to " + ring + ", not to " + auto + ";"),
                before.err());
        // where each option binds to the --in it stands with, nothing changes
        CliRun ok = CliRun.run("compile", auto, "--in", ring, "--algo", "RING", "--proto", "LL", "--summary");
        assertEquals(0, ok.exit(), ok.err());
        assertTrue(ok.out().startsWith("summary: 1 rule from 3 measured sizes"), ok.out());
        CliRun lead = CliRun.run("compile", "--algo", "RING", "--proto", "LL", "--in", ring, auto, "--summary");
        assertEquals(0, lead.exit(), lead.err());
        assertEquals(ok.out(), lead.out());
    }

    @Test
    void inputErrorsExitOneNamingFileAndLine() {
        CliRun r = CliRun.run("compile", CliRun.fixture("bad-number_all_reduce.txt"));
        assertEquals(1, r.exit());
        assertTrue(r.err().startsWith("nccl-tuner compile: "), r.err());
        assertTrue(
                r.err().contains("bad-number_all_reduce.txt:21: time (out-of-place) '18.3x' is not a number"), r.err());
        CliRun t = CliRun.run("compile", CliRun.fixture("bad-truncated-row_all_reduce.txt"));
        assertEquals(1, t.exit());
        assertTrue(t.err().contains("bad-truncated-row_all_reduce.txt:21: row has 7 fields"), t.err());
        assertEquals(2, CliRun.run("compile").exit()); // no input: a usage error
        assertEquals(
                1, CliRun.run("compile", tmp.resolve("missing.txt").toString()).exit());
    }

    static final String SWEEP_HEADER =
            "collective,size_bytes,algorithm,protocol,max_channels,ranks,nodes,config,replicate,median_us,p95_us,busbw_gbps,wrong\n";

    @Test
    void zeroTimeIsAnInputErrorAndATinyOneStillCompiles() throws Exception {
        Path csv = tmp.resolve("tiny.csv");
        String rows = "AllReduce,1048576,auto,auto,auto,2,2,auto,1,4621.536,5021.984,0.2269,0\n"
                + "AllReduce,1048576,Ring,Simple,auto,2,2,ring_simple,1,2560.736,4613.536,0.4095,0\n"
                + "AllReduce,1048576,Tree,Simple,auto,2,2,tree_simple,1,TIME,2507.680,0.4187,0\n";
        Files.writeString(csv, SWEEP_HEADER + rows.replace("TIME", "0"));
        // a mangled row: skipped with a warning by default (as in nccl-tests output), refused with --strict
        CliRun skipped = CliRun.run("compile", csv.toString());
        assertEquals(0, skipped.exit(), skipped.err());
        assertTrue(skipped.out().contains(csv + ":4: median_us '0' is not a time"), skipped.out());
        CliRun zero = CliRun.run(
                "compile",
                "--strict",
                csv.toString(),
                "-o",
                tmp.resolve("z.yaml").toString());
        assertEquals(1, zero.exit(), zero.err());
        assertEquals(
                "nccl-tuner compile: " + csv + ":4: median_us '0' is not a time: times must be finite numbers > 0 us\n",
                zero.err());

        Files.writeString(csv, SWEEP_HEADER + rows.replace("TIME", "1e-300"));
        Path yaml = tmp.resolve("tiny.yaml");
        CliRun tiny = CliRun.run(
                "compile",
                csv.toString(),
                "-o",
                yaml.toString(),
                "--html",
                tmp.resolve("t.html").toString());
        assertEquals(0, tiny.exit(), tiny.err());
        assertEquals(
                1e6,
                PolicyLoader.load(yaml).profiles().getFirst().rules().getFirst().ncclRegret());
        assertTrue(Files.readString(tmp.resolve("t.html")).contains("drawn on the chart's edge"));
    }

    @Test
    void dashOutputPrintsTheYamlAloneOnStdout() throws Exception {
        CliRun r = CliRun.run(
                "compile",
                CliRun.fixture("seed001-v100-allreduce.csv"),
                "--nccl-log",
                CliRun.fixture("seed001-nccl-2.22.3-tuning.log"),
                "-o",
                "-");
        assertEquals(0, r.exit(), r.err());
        assertTrue(r.out().startsWith("# Compiled by `nccl-tuner compile` from:\n"), r.out());
        assertEquals("compiled", PolicyLoader.parse("stdout", r.out()).name());
        assertTrue(r.err().contains("AllReduce, nRanks 4, nNodes 1, numPipeOps 1: 3 sizes, 3 candidates"), r.err());
        assertTrue(
                r.err().endsWith("policy: stdout (1 rule)\n" + ToolCommand.modeLine(Mode.SHADOW, "compile") + "\n"),
                r.err());
    }
    /**
     * Newcomer walk, item 3: NCCL's pick is never compared with itself. A Broadcast sweep, 2 ranks on
     * 1 node; at 2 MiB the unforced runs took 3800 and 3900 us, RING/SIMPLE forced 1000 and 1060 us,
     * RING/LL forced 5000 and 5100 us, and the NCCL log says NCCL ran RING/SIMPLE there. The forced
     * RING/SIMPLE runs and NCCL's pick are one configuration: pooled, NCCL's time is their median
     * (1060 + 3800) / 2 = 2430 us and the RING/SIMPLE candidate's too, so the best is NCCL (regret
     * 0.00%) and no rule is written. Before, the forced runs alone were the "best" (1030 us) and the
     * row said NCCL lost 135.92% to RING/SIMPLE.
     */
    @Test
    void ncclsPickIsPooledWithItsForcedRunsNotACandidateAgainstItself() throws Exception {
        StringBuilder csv = new StringBuilder(
                "collective,size_bytes,algorithm,protocol,max_channels,ranks,nodes,config,replicate,median_us,p95_us,busbw_gbps,wrong\n");
        long[] sizes = {1 << 20, 2 << 20};
        double[][] auto = {{500, 510}, {3800, 3900}};
        double[][] simple = {{480, 490}, {1000, 1060}};
        double[][] ll = {{900, 910}, {5000, 5100}};
        for (int i = 0; i < sizes.length; i++) {
            for (int rep = 0; rep < 2; rep++) {
                csv.append("Broadcast,")
                        .append(sizes[i])
                        .append(",auto,auto,auto,2,1,auto,")
                        .append(rep + 1)
                        .append(',')
                        .append(auto[i][rep])
                        .append(',')
                        .append(auto[i][rep])
                        .append(",0,0\n");
                csv.append("Broadcast,")
                        .append(sizes[i])
                        .append(",Ring,Simple,auto,2,1,ring_simple,")
                        .append(rep + 1)
                        .append(',')
                        .append(simple[i][rep])
                        .append(',')
                        .append(simple[i][rep])
                        .append(",0,0\n");
                csv.append("Broadcast,")
                        .append(sizes[i])
                        .append(",Ring,LL,auto,2,1,ring_ll,")
                        .append(rep + 1)
                        .append(',')
                        .append(ll[i][rep])
                        .append(',')
                        .append(ll[i][rep])
                        .append(",0,0\n");
            }
        }
        Path sweep = tmp.resolve("bcast.csv");
        Files.writeString(sweep, csv);
        Path log = tmp.resolve("nccl.log");
        Files.writeString(
                log,
                "h:1:1 [0] NCCL INFO comm 0x1 rank 0 nRanks 2 nNodes 1 localRanks 2 localRank 0 MNNVL 0\n"
                        + "h:1:1 [0] NCCL INFO Broadcast: 1048576 Bytes -> Algo RING proto SIMPLE channel{Lo..Hi}={0..1}\n"
                        + "h:1:1 [0] NCCL INFO Broadcast: 2097152 Bytes -> Algo RING proto SIMPLE channel{Lo..Hi}={0..1}\n");
        Path out = tmp.resolve("p.yaml");
        CliRun r = CliRun.run(
                "compile", sweep.toString(), "--nccl-log", log.toString(), "-o", out.toString(), "--allow-empty");
        assertEquals(0, r.exit(), r.err());
        String t = r.out().replaceAll(" +", " ");
        assertTrue(t.contains("2 MiB .. 2.5 MiB auto=RING/SIMPLE 2430.000 NCCL 2430.000 NCCL 0.00% 0.00%"), r.out());
        assertFalse(t.contains("RING/SIMPLE 1030.000"), r.out());
        assertTrue(t.contains("rules: 0"), r.out());
    }

    /**
     * Newcomer walk, item 2: forced runs only, NCCL's own pick never timed (as in optimize_config.py's
     * sample CSV): -o exits 1 writing nothing and says what to collect; --allow-empty writes it.
     */
    @Test
    void neverMeasuringNcclsPickWritesNothingUnlessAllowEmpty() throws Exception {
        Path sweep = tmp.resolve("forced.csv");
        Files.writeString(
                sweep,
                "collective,size_bytes,algorithm,protocol,max_channels,ranks,nodes,config,replicate,"
                        + "median_us,p95_us,busbw_gbps,wrong\n"
                        + "AllReduce,1048576,Ring,Simple,auto,2,1,ring_simple,1,100.0,100.0,0,0\n"
                        + "AllReduce,1048576,Ring,LL,auto,2,1,ring_ll,1,200.0,200.0,0,0\n");
        Path out = tmp.resolve("p.yaml");
        CliRun r = CliRun.run("compile", sweep.toString(), "-o", out.toString());
        assertEquals(1, r.exit(), r.out());
        assertTrue(
                r.out()
                        .startsWith("policy not written: NCCL's own pick was never measured at a size with a forced "
                                + "candidate"),
                r.out());
        assertTrue(r.out().contains("Collect NCCL's own pick: the same runs without NCCL_ALGO/NCCL_PROTO"), r.out());
        assertEquals("nccl-tuner compile: policy not written (see above)\n", r.err());
        assertFalse(Files.exists(out));
        CliRun allowed = CliRun.run("compile", sweep.toString(), "-o", out.toString(), "--allow-empty");
        assertEquals(0, allowed.exit(), allowed.err());
        assertTrue(Files.exists(out));
    }
}
