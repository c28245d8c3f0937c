package io.nccltuner.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** {@code nccl-tuner explain} end to end, on the seed 001 fixture and the captured H200 logs. */
class ExplainCommandTest {
    record Run(int code, String out, String err) {}

    static Run run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine cl = Main.commandLine();
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(err, true));
        int code = cl.execute(args);
        return new Run(code, out.toString(), err.toString());
    }

    static String resource(String name) throws Exception {
        if (name.startsWith(H200)) { // the captured traces live in tests/traces/
            return Path.of(System.getProperty("nccltj.repo", ".."))
                    .resolve("tests/traces")
                    .resolve(name.substring(H200.length()))
                    .toString();
        }
        return Path.of(ExplainCommandTest.class.getResource(name).toURI()).toString();
    }

    static final String SEED = "/model/logs/nccl-2.22.3_4xV100_seed001.log";
    static final String H200 = "/model/traces/nccl-2.28.9-h200-2rank/";

    static String line(String out, String startsWith) {
        return out.lines()
                .filter(l -> l.stripLeading().startsWith(startsWith))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no line starting '" + startsWith + "' in\n" + out));
    }

    @Test
    void seedTableAtOneMebibyte() throws Exception {
        Run r = run("explain", "--log", resource(SEED));
        assertEquals(0, r.code(), r.err());
        System.out.print(r.out());
        String header = line(r.out(), "size");
        assertEquals(
                List.of(
                        "size",
                        "nBytes",
                        "TREE/LL",
                        "TREE/LL128",
                        "TREE/SIMPLE",
                        "RING/LL",
                        "RING/LL128",
                        "RING/SIMPLE",
                        "NCCL",
                        "pick",
                        "also",
                        "possible",
                        "logged",
                        "match"),
                List.of(header.trim().split("\\s+")));
        List<String> oneMiB = List.of(line(r.out(), "1 MiB").trim().split("\\s+"));
        assertEquals("1048576", oneMiB.get(2));
        assertEquals(List.of("50.530", "39.647", "41.907", "RING/LL128", "RING/LL128", "yes"), oneMiB.subList(6, 12));
        assertEquals(
                29,
                r.out()
                        .lines()
                        .filter(l -> l.matches("\\s*\\d+ [KMG]?i?B\\s+\\d+\\s.*"))
                        .count());
        // pick column: size (2 tokens), nBytes, six times, then the pick
        assertEquals("RING/LL", line(r.out(), "512 KiB").trim().split("\\s+")[9]);
        assertEquals("RING/LL128", line(r.out(), "2 MiB").trim().split("\\s+")[9]);
        assertEquals("RING/SIMPLE", line(r.out(), "4 MiB").trim().split("\\s+")[9]);
        assertTrue(r.out().contains("29 sizes; the pick is clear at each (no two best candidates' ranges overlap"));
        // times keep three decimals and columns line up under their headers
        int col = header.indexOf("RING/LL128") + "RING/LL128".length();
        assertEquals("39.647", line(r.out(), "1 MiB").substring(col - 6, col));
    }

    @Test
    void capturedLogAgreesWithNcclAtEveryLoggedSize() throws Exception {
        Run r = run("explain", "--log", resource(H200 + "nccl_sweep.rank0.log"), "--sizes", "4B:256MiB");
        assertEquals(0, r.code(), r.err());
        System.out.print(r.out());
        // the sweep logged AllReduce at 15 of these sizes (4 B, 8 B, 16 B, 64 B, 256 B, ... 256 MiB)
        String summary = line(r.out(), "Selection lines for");
        assertTrue(summary.startsWith("Selection lines for 15 sizes"), summary);
        // 14 exact, 1 ambiguous at the table's rounding, none different (a zero count is not printed)
        assertTrue(
                summary.startsWith("Selection lines for 15 sizes: model pick = logged pick at 14, ambiguous at 1 ("),
                summary);
        assertFalse(summary.contains("different"), summary);
        assertTrue(r.out().contains("compute capability unknown"));
        assertTrue(r.out().contains("Compute capability unknown: RING/SIMPLE latency"));
        assertTrue(line(r.out(), "Not offered").contains("RING/LL128"), "LL128 has bandwidth 0.0 on this socket setup");
    }

    @Test
    void traceNarrowsTheModelAndFindsTheComputeCapabilityClass() throws Exception {
        Run r = run(
                "explain",
                "--log",
                resource(H200 + "nccl_sweep.rank0.log"),
                "--sizes",
                "256B,64KiB",
                "--trace",
                resource(H200 + "trace_sweep.csv"));
        assertEquals(0, r.code(), r.err());
        System.out.print(r.out());
        assertTrue(r.out().contains("compute capability now >= 80"), r.out());
        String treeLl = line(r.out(), "AllReduce      TREE/LL");
        assertTrue(treeLl.contains("0.1500 .. 0.2500"), treeLl);
        assertTrue(treeLl.contains("0.2469 .. 0.2469"), treeLl);
        // 256 B: RING/SIMPLE pays the plateau x1.4: 36.4 x 1.4 + 256 / 1200 = 51.173 us
        assertTrue(line(r.out(), "256 B").contains("51.173"), r.out());
        assertTrue(line(r.out(), "64 KiB").contains("RING/SIMPLE"));
        assertTrue(r.out().contains("2 sizes; the pick is clear at each"), r.out());
    }

    @Test
    void communicatorsOfOneLogStayApart() throws Exception {
        String log = resource("/model/logs/nccl-2.23.4_two-processes.log");
        Run all = run("explain", "--log", log, "--sizes", "1MiB");
        assertEquals(0, all.code(), all.err());
        assertEquals(
                2, all.out().lines().filter(l -> l.contains(": comm 0x5600")).count());
        assertTrue(
                all.err().contains("nccl-2.23.4_two-processes.log:")
                        && all.err().contains("selection line in no known format"),
                all.err());
        Run b = run("explain", "--log", log, "--comm", "2", "--sizes", "8B,64MiB");
        assertEquals(0, b.code(), b.err());
        assertTrue(b.out().contains("comm 0x5600bb000000"));
        assertFalse(b.out().contains("comm 0x5600aa000000"));
        assertTrue(line(b.out(), "Selection lines for").startsWith("Selection lines for 2 sizes"), b.out());
        Run a = run("explain", "--log", log, "--comm", "0x5600aa000000", "--sizes", "1MiB");
        assertTrue(a.out().contains("nChannels 24"), a.out());
        Run none = run("explain", "--log", log, "--comm", "3");
        assertEquals(1, none.code());
        assertTrue(none.err().contains("2 communicator(s) with a table"), none.err());
    }

    /**
     * policies/h200-2rank.yaml against the captured H200 table. Its AllReduce rules: [0, 8 KiB)
     * RING/LL128 (bandwidth 0.0 in this table, so not offered) then RING/SIMPLE; [8 KiB, 32 KiB)
     * TREE/LL; [32 KiB, 128 MiB) TREE/SIMPLE; nothing from 128 MiB.
     */
    @Test
    void policyPickGoesThroughTheEngine() throws Exception {
        String policy = Path.of(System.getProperty("nccltj.repo", ".."))
                .resolve("policies/h200-2rank.yaml")
                .toString();
        Run r = run(
                "explain",
                "--log",
                resource(H200 + "nccl_sweep.rank0.log"),
                "--sizes",
                "4B,16KiB,64MiB,256MiB",
                "--policy",
                policy);
        assertEquals(0, r.code(), r.err());
        System.out.print(r.out());
        assertTrue(line(r.out(), "size").trim().endsWith("policy pick  nChannels"));
        assertTrue(line(r.out(), "4 B").trim().endsWith("RING/SIMPLE"), r.out());
        assertTrue(line(r.out(), "16 KiB").trim().endsWith("TREE/LL"), r.out());
        assertTrue(line(r.out(), "64 MiB").trim().endsWith("TREE/SIMPLE"), r.out());
        assertTrue(line(r.out(), "256 MiB").trim().endsWith("="), r.out());
        assertTrue(r.out().contains("The policy changes NCCL's algorithm/protocol at 3 of 4 sizes ("), r.out());
        assertTrue(r.out().contains("engine: INFO policy h200-2rank-timesliced profile two-ranks-socket mode enforce"));

        Run shadow = run(
                "explain",
                "--log",
                resource(H200 + "nccl_sweep.rank0.log"),
                "--sizes",
                "64MiB",
                "--policy",
                policy,
                "--mode",
                "shadow");
        assertTrue(line(shadow.out(), "64 MiB").trim().endsWith("="), shadow.out());
    }

    /**
     * A profile's constants change the prediction: baseLatencies.RING.LL 106.6 us is NCCL's default
     * 6.6 us plus 100, so RING/LL's predicted time grows by exactly 100 us (latency counted once for
     * Ring at numPipeOps 1; the Ring plateau factor is for SIMPLE only); hwLatencies is listed as
     * not modelled; shadow mode sets nothing, so it predicts as NCCL does.
     */
    @Test
    void policyConstantsChangeThePrediction(@TempDir Path dir) throws Exception {
        Path policy = Files.writeString(dir.resolve("k.yaml"), """
        schema: nccl-tuner-java/v1
        name: k
        profiles:
          - name: two
            constants: {baseLatencies.RING.LL: 106.6, hwLatencies.NET.RING.LL: 3}
            rules: []
        """);
        String log = resource(H200 + "nccl_sweep.rank0.log");
        Run plain = run("explain", "--log", log, "--sizes", "4B,1MiB");
        Run edited = run("explain", "--log", log, "--sizes", "4B,1MiB", "--policy", policy.toString());
        Run shadow =
                run("explain", "--log", log, "--sizes", "4B,1MiB", "--policy", policy.toString(), "--mode", "shadow");
        assertEquals(0, edited.code(), edited.err());
        System.out.print(edited.out());
        int col = List.of(line(plain.out(), "size").trim().split("\\s+")).indexOf("RING/LL") + 1; // sizes are 2 tokens
        for (String size : List.of("4 B", "1 MiB")) {
            double before = Double.parseDouble(line(plain.out(), size).trim().split("\\s+")[col]);
            double after = Double.parseDouble(line(edited.out(), size).trim().split("\\s+")[col]);
            double same = Double.parseDouble(line(shadow.out(), size).trim().split("\\s+")[col]);
            assertEquals(before + 100, after, 0.002, size);
            assertEquals(before, same, 0.0005, size);
        }
        assertTrue(edited.out().contains("baseLatencies.RING.LL = 106.6 us: RING/LL latency +100.00 us"), edited.out());
        assertTrue(edited.out().contains("hwLatencies.NET.RING.LL = 3.0 microseconds (not modelled"), edited.out());
    }

    @Test
    void inputErrorsExitOne(@TempDir Path dir) throws Exception {
        Run badUnit = run("explain", "--log", resource(SEED), "--sizes", "4KB:1MB");
        assertEquals(2, badUnit.code()); // option values: usage errors
        assertTrue(badUnit.err().contains("unknown size unit 'KB'"), badUnit.err());
        Run badColl = run("explain", "--log", resource(SEED), "--collective", "AllToAll");
        assertEquals(2, badColl.code());
        Run missing = run("explain", "--log", dir.resolve("nope.log").toString());
        assertEquals(1, missing.code());
        assertEquals("nccl-tuner explain: " + dir.resolve("nope.log") + ": no such file\n", missing.err());
        Run directory = run("explain", "--log", dir.toString());
        assertEquals(1, directory.code());
        assertEquals("nccl-tuner explain: " + dir + ": is a directory, not a file\n", directory.err());
        Path empty = Files.writeString(dir.resolve("empty.log"), "h:1:1 [0] NCCL INFO NCCL version 2.28.9+cuda13.0\n");
        Run noTable = run("explain", "--log", empty.toString());
        assertEquals(1, noTable.code());
        assertTrue(noTable.err().contains("no latency/bandwidth table"), noTable.err());
    }

    @Test
    void selectionLinesWithoutACollectiveAreSaidToBeAssumed() throws Exception {
        Run r = run("explain", "--log", resource(SEED), "--sizes", "1MiB");
        assertEquals(0, r.code(), r.err());
        assertEquals(
                "Assumed AllReduce: 1 of the log's 1 selection line naming no collective (NCCL 2.21 .. 2.22 format) "
                        + "counts as an AllReduce line here because its logged time fits this model's time for its pick "
                        + "(--collective explains another).",
                line(r.out(), "Assumed"));
        // 2.24+ lines name their collective: nothing is assumed
        Run named = run("explain", "--log", resource(H200 + "nccl_sweep.rank0.log"), "--sizes", "1MiB");
        assertFalse(named.out().contains("Assumed"), named.out());
    }

    @Test
    void flagsThatContradictTheLogAreErrors() throws Exception {
        Run ranks = run("explain", "--log", resource(SEED), "--nranks", "8", "--sizes", "1MiB");
        assertEquals(1, ranks.code(), ranks.out());
        assertEquals(
                "nccl-tuner explain: " + resource(SEED) + ": communicator comm 0x55d0c0a00000 (host dgx1, pid 4242): "
                        + "the log says nRanks 4 but --nranks says 8; --nranks is only for logs that do not say\n",
                ranks.err());
        Run nodes = run("explain", "--log", resource(SEED), "--nnodes", "2", "--sizes", "1MiB");
        assertEquals(1, nodes.code());
        assertTrue(nodes.err().contains("the log says nNodes 1 but --nnodes says 2"), nodes.err());
        String two = resource("/model/logs/nccl-2.23.4_two-processes.log");
        Run ch = run("explain", "--log", two, "--comm", "0x5600aa000000", "--channels", "8", "--sizes", "1MiB");
        assertEquals(1, ch.code());
        assertTrue(ch.err().contains("the log says nChannels 24 but --channels says 8"), ch.err());
        // repeating the log, or filling in what it does not say, is fine
        Run same = run(
                "explain",
                "--log",
                resource(SEED),
                "--nranks",
                "4",
                "--nnodes",
                "1",
                "--channels",
                "2",
                "--sizes",
                "1MiB");
        assertEquals(0, same.code(), same.err());
        assertTrue(same.out().contains("NCCL 2.22.3, nRanks=4 nNodes=1, nChannels 2"), same.out());
    }

    @Test
    void sizes() throws Exception {
        assertEquals(29, ExplainCommand.Sizes.parseList("4B:1GiB").size());
        assertEquals(1L << 30, ExplainCommand.Sizes.parseList("4B:1GiB").get(28));
        assertEquals(List.of(3L, 4096L, 1572864L), ExplainCommand.Sizes.parseList("4KiB, 1.5 MiB,3,4KiB"));
        assertEquals(List.of(3L, 6L, 12L), ExplainCommand.Sizes.parseList("3:15"));
        assertEquals("512 KiB", ExplainCommand.Sizes.format(512 * 1024));
        assertEquals("1.5 KiB", ExplainCommand.Sizes.format(1536));
        assertEquals("1000 B", ExplainCommand.Sizes.format(1000));
        // ByteSize writes 131136000 B as "128062.5 KiB"; tables show it as about 125 MiB (nBytes alongside)
        assertEquals("~125.06 MiB", ExplainCommand.Sizes.format(131136000));
        assertEquals("~9.77 KiB", ExplainCommand.Sizes.format(10000));
        assertEquals("1023 KiB", ExplainCommand.Sizes.format(1023 * 1024));
        assertEquals("125 MiB", ExplainCommand.Sizes.format(125L << 20));
        assertThrows(UsageException.class, () -> ExplainCommand.Sizes.parse("1.3 B"));
        assertThrows(UsageException.class, () -> ExplainCommand.Sizes.parseList("1MiB:4KiB"));
    }

    /** Issue 13 item 10: a log without NCCL's INIT shape line, whose nccl-tests rank lines tell it. */
    @Test
    void shapeIsInferredFromTheSameFileAndSaidSo(@TempDir Path dir) throws Exception {
        List<String> seed = Files.readAllLines(Path.of(resource(SEED)));
        List<String> lines = new java.util.ArrayList<>(seed.stream()
                .filter(l -> !l.contains("nRanks 4 nNodes 1") && !l.contains("ncclCommInitRank"))
                .toList());
        lines.addAll(
                0,
                List.of(
                        "#  Rank  0 Group  0 Pid   4242 on       dgx1 device  0 [0x06] Tesla V100-SXM2-16GB",
                        "#  Rank  1 Group  0 Pid   4242 on       dgx1 device  1 [0x07] Tesla V100-SXM2-16GB",
                        "#  Rank  2 Group  0 Pid   4242 on       dgx1 device  2 [0x08] Tesla V100-SXM2-16GB",
                        "#  Rank  3 Group  0 Pid   4242 on       dgx1 device  3 [0x09] Tesla V100-SXM2-16GB"));
        lines.add("dgx1:4242:4242 [0] NCCL INFO 1000000 Bytes -> Algo 1 proto 1 time 38.9");
        Path log = dir.resolve("no-init-line.log");
        Files.write(log, lines);
        Run r = run("explain", "--log", log.toString());
        assertEquals(0, r.code(), r.err());
        assertTrue(r.out().contains(", nRanks=4 nNodes=1, nChannels "), r.out());
        assertTrue(
                r.out()
                        .contains("Inferred (the log has no 'comm ... nRanks N nNodes M' line): nRanks 4 inferred from "
                                + "the 4 '# Rank' lines (line 1)."),
                r.out());
        assertTrue(r.out().contains("nNodes 1 inferred from the host names of the '# Rank' lines (line 1)."), r.out());
        // by default every logged size is checked, not only powers of two: 1000000 B and 1 MiB
        assertTrue(line(r.out(), "~976.56 KiB").contains(" 1000000 "), r.out());
        assertTrue(line(r.out(), "1 MiB").contains("RING/LL128  yes"), r.out());
        // without the rank lines only nRanks can be told
        Path bare = dir.resolve("bare.log");
        Files.write(
                bare,
                seed.stream().filter(l -> !l.contains("nRanks 4 nNodes 1")).toList());
        Run b = run("explain", "--log", bare.toString(), "--sizes", "1MiB");
        assertEquals(1, b.code());
        assertTrue(b.err().contains("nothing else in the file tells nNodes (nRanks 4); give --nnodes"), b.err());
        Run given = run("explain", "--log", bare.toString(), "--sizes", "1MiB", "--nnodes", "1");
        assertEquals(0, given.code(), given.err());
        assertTrue(given.out().contains(", nRanks=4 nNodes=1, nChannels "), given.out());
    }

    @Test
    void collectiveAllExplainsEachCollective() throws Exception {
        Run r = run("explain", "--log", resource(SEED), "--collective", "all", "--sizes", "1MiB");
        assertEquals(0, r.code(), r.err());
        // the 2.22 lines name no collective: all five are explained
        for (String c : List.of("Broadcast", "Reduce", "AllGather", "ReduceScatter", "AllReduce")) {
            assertTrue(r.out().contains(c + ", numPipeOps 1: predicted time per candidate"), c + "\n" + r.out());
        }
        Run bad = run("explain", "--log", resource(SEED), "--collective", "every");
        assertEquals(2, bad.code()); // a usage error
    }

    /** Issue 13 item 13: a policy that only sets the channel count says so. */
    @Test
    void policyThatOnlyChangesChannelsSaysChannels(@TempDir Path dir) throws Exception {
        Path p = dir.resolve("channels.yaml");
        Files.writeString(p, """
        schema: nccl-tuner-java/v1
        name: channels-only
        mode: enforce
        profiles:
          - name: four
            match: {nRanks: 4, nNodes: 1}
            rules:
              - collective: AllReduce
                bytes: {from: 512 KiB, to: 2 MiB}
                candidates:
                  - {algorithm: RING, protocol: LL128, channels: 2}
        """);
        Run r = run("explain", "--log", resource(SEED), "--sizes", "256KiB,1MiB", "--policy", p.toString());
        assertEquals(0, r.code(), r.err());
        assertTrue(line(r.out(), "1 MiB").trim().matches(".*RING/LL128  yes +=  +2"), r.out());
        assertTrue(
                r.out()
                        .contains("The policy keeps NCCL's algorithm and protocol at every size and changes only the "
                                + "channel count, at 1 of 2 sizes"),
                r.out());
    }

    /**
     * A log whose every line carries a launcher prefix (Ray, mpirun --tag-output, srun -l) explains
     * as the plain log does: the same prefixes compile strips (model.LauncherPrefix).
     */
    @Test
    void launcherPrefixedLogsExplainAsThePlainLog(@TempDir Path dir) throws Exception {
        Path plain = Path.of(resource(H200 + "nccl_sweep.rank0.log"));
        List<String> lines = Files.readAllLines(plain, java.nio.charset.StandardCharsets.ISO_8859_1);
        Path copy = dir.resolve("plain.log");
        Files.write(copy, lines, java.nio.charset.StandardCharsets.ISO_8859_1);
        Run want = run("explain", "--log", copy.toString(), "--sizes", "256B,64KiB");
        assertEquals(0, want.code(), want.err());
        for (String prefix : List.of(
                "(RayWorkerWrapper pid=4711, ip=10.0.0.5) ",
                "[1,0]<stdout>:",
                "0: ",
                "  12: ",
                "(RayWorkerWrapper pid=4711) [1,0]<stdout>:")) {
            Path log = dir.resolve("prefixed.log");
            Files.write(
                    log, lines.stream().map(l -> prefix + l).toList(), java.nio.charset.StandardCharsets.ISO_8859_1);
            Run r = run("explain", "--log", log.toString(), "--sizes", "256B,64KiB");
            assertEquals(0, r.code(), prefix + ": " + r.err());
            assertFalse(r.err().contains("runs into other output"), prefix + ": " + r.err());
            assertFalse(r.out().contains("runs into other output"), prefix + ": " + r.out());
            assertEquals(want.out().replace(copy.toString(), log.toString()), r.out(), prefix);
            assertEquals(want.err().replace(copy.toString(), log.toString()), r.err(), prefix);
        }
    }
}
