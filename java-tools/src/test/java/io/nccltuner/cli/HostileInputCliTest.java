package io.nccltuner.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nccltuner.policy.PolicyLoader;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Hostile inputs written from the docs, each refused with the documented exit code (1 an input
 * error, 2 a usage error) and one message naming the file and line (or the option) and what is
 * wrong: a byte that is not UTF-8, a file over the size limit, a JSON key twice, digits of another
 * script, sweep option values nccl-tests would misread, a cost beyond a float, YAML's merge keys,
 * aliases and second documents, a heap too small for the input, and decision-log lines with a
 * negative size, a negative or too large count, or an unknown type.
 */
@Timeout(120)
class HostileInputCliTest {
    private static final String YAML = """
            schema: nccl-tuner-java/v1
            name: hostile
            mode: enforce
            profiles:
              - name: any
                rules:
                  - collective: AllReduce
                    bytes: {from: 0 B, to: 64 KiB}
                    candidates:
                      - {algorithm: RING, protocol: LL}
            """;

    private static final String POLICY = Path.of(System.getProperty("nccltj.repo", ".."))
            .resolve("policies/h200-2rank.yaml")
            .toString();

    private static byte[] withByte(String before, int bad, String after) {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        b.writeBytes(before.getBytes(StandardCharsets.UTF_8));
        b.write(bad);
        b.writeBytes(after.getBytes(StandardCharsets.UTF_8));
        return b.toByteArray();
    }

    private static void input(CliRun r, String command, String message) {
        assertEquals(Main.EXIT_INPUT, r.exit(), r.err());
        assertEquals("nccl-tuner " + command + ": " + message + "\n", r.err());
    }

    private static void usage(CliRun r, String command, String message) {
        assertEquals(Main.EXIT_USAGE, r.exit(), r.err());
        assertEquals("nccl-tuner " + command + ": " + message + "\nsee 'nccl-tuner " + command + " --help'\n", r.err());
    }

    @Test
    void aByteThatIsNotUtf8IsNamedByFileLineAndColumn(@TempDir Path dir) throws Exception {
        Path conf = dir.resolve("bad.conf");
        Files.write(
                conf,
                withByte("allreduce,0,65535,ring,ll,-1,-1,-1\nallreduce,65536,", 0xff, "-1,tree,simple,-1,-1,-1\n"));
        input(
                CliRun.run(
                        "import", conf.toString(), "-o", dir.resolve("o.yaml").toString()),
                "import",
                conf + ":2:17: not UTF-8 (byte 0xff at byte 17 of the line); save the file as UTF-8");
        Path yaml = dir.resolve("bad.yaml");
        Files.write(yaml, withByte(YAML + "# caf", 0xe9, "\n"));
        CliRun v = CliRun.run("validate", yaml.toString());
        assertEquals(Main.EXIT_INPUT, v.exit(), v.out() + v.err());
        assertTrue(v.out().contains(yaml + ":11:6: not UTF-8 (byte 0xe9 at byte 6 of the line)"), v.out() + v.err());
    }

    @Test
    void aTraceByteThatIsNotUtf8IsNamedByFileLineAndColumn(@TempDir Path dir) throws Exception {
        List<String> lines =
                Files.readAllLines(Path.of(CliRun.trace("trace_ddp.csv"))).subList(0, 3);
        Path t = dir.resolve("t.csv");
        Files.write(t, withByte(String.join("\n", lines) + "\n# caf", 0xe9, "\n"));
        input(
                CliRun.run("replay", "--policy", POLICY, "--trace", t.toString()),
                "replay",
                t + ":4:6: not UTF-8 (byte 0xe9 at byte 6 of the line); save the file as UTF-8");
    }

    @Test
    void aConfigOverTheSizeLimitIsRefusedNamingTheFileAndTheLimit(@TempDir Path dir) throws Exception {
        Path conf = dir.resolve("big.conf");
        Files.writeString(conf, "allreduce,0,65535,ring,ll,-1,-1,-1," + "1".repeat(3 << 20) + "\n");
        input(
                CliRun.run(
                        "import", conf.toString(), "-o", dir.resolve("o.yaml").toString()),
                "import",
                conf + ": " + Files.size(conf) + " bytes, over the limit of " + PolicyLoader.MAX_FILE_BYTES
                        + " bytes for a policy file; split it or drop unused rules");
    }

    @Test
    void aJsonKeyTwiceIsRefusedByName(@TempDir Path dir) throws Exception {
        Path json = dir.resolve("dup.json");
        Files.writeString(
                json,
                "[\n {\"collective\":\"allreduce\",\"min_bytes\":0,\"max_bytes\":65535,\"algorithm\":\"ring\","
                        + "\"algorithm\":\"tree\",\"protocol\":\"ll\"}\n]\n");
        input(
                CliRun.run(
                        "import", json.toString(), "-o", dir.resolve("o.yaml").toString()),
                "import",
                json + ":2:90: malformed JSON: Duplicate field 'algorithm'");
    }

    @Test
    void onlyAsciiDigitsAreNumbers(@TempDir Path dir) throws Exception {
        usage(
                CliRun.run("show", POLICY, "--nodes", "\u0662"),
                "show",
                "--nodes: '\u0662' is not a count or A..B (only ASCII digits 0-9 are read as numbers)");
        usage(
                CliRun.run("show", POLICY, "--nodes", "1..9223372036854775807"),
                "show",
                "--nodes: 9223372036854775807 is outside 1..1048576");
        usage(
                CliRun.run(
                        "replay", "--policy", POLICY, "--trace", CliRun.trace("trace_ddp.csv"), "--nnodes", "\uff12"),
                "replay",
                "Invalid value for option '--nnodes': '\uff12' is not an int: a whole number in ASCII digits 0-9");
        Path conf = dir.resolve("fw.conf");
        Files.writeString(conf, "allreduce,0,\uff16\uff15\uff15\uff13\uff15,ring,ll,-1,-1,-1\n");
        input(
                CliRun.run(
                        "import", conf.toString(), "-o", dir.resolve("o.yaml").toString()),
                "import",
                conf
                        + ":1: max_bytes '\uff16\uff15\uff15\uff13\uff15' is not a whole number of bytes (only ASCII digits"
                        + " 0-9 are read as numbers)");
    }

    @Test
    void sweepRefusesOptionValuesNcclTestsWouldMisread(@TempDir Path dir) {
        String[][] cases = {
            {"-f", "0", "-f/--step-factor: 0 is outside 2..1024"},
            {
                "-f",
                "1.5",
                "-f/--step-factor: '1.5' is not a whole number 2..1024 in ASCII digits (nccl-tests"
                        + " multiplies the size by it)"
            },
            {"-n", "-1", "-n/--iters: -1 is outside 1..1000000"},
            {"-w", "-3", "-w/--warmup: -3 is outside 0..1000000"},
            {"-g", "0", "-g/--gpus: 0 is outside 1..1024"},
            {"-c", "-1", "-c/--check: -1 is outside 0..1000000"},
            {"--timeout", "0", "--timeout: 0 is outside 1..604800"},
            {
                "-d",
                "1.5",
                "-d/--datatype: '1.5' is not a data type of nccl-tests; use int8, uint8, int32, uint32,"
                        + " int64, uint64, half, float, double, bfloat16, f8e4m3, f8e5m2, all"
            },
            {
                "-n",
                "\u0662",
                "Invalid value for option '--iters': '\u0662' is not a long: a whole number in ASCII digits 0-9"
            },
        };
        for (String[] c : cases) {
            usage(
                    CliRun.run(
                            "sweep",
                            "-o",
                            dir.resolve("sw").toString(),
                            "--algorithms",
                            "RING",
                            "--protocols",
                            "LL",
                            "--dry-run",
                            c[0],
                            c[1]),
                    "sweep",
                    c[2]);
        }
    }

    @Test
    void aCostBeyondAFloatIsRefusedNamingFileAndLine(@TempDir Path dir) throws Exception {
        List<String> lines = new ArrayList<>(
                Files.readAllLines(Path.of(CliRun.trace("trace_ddp.csv"))).subList(0, 4));
        lines.set(3, lines.get(3).replaceFirst(",11\\.9933,", ",1e400,"));
        Path t = dir.resolve("inf.csv");
        Files.write(t, lines);
        input(
                CliRun.run("replay", "--policy", POLICY, "--trace", t.toString()),
                "replay",
                t + ":4: field 14 (cost of RING/LL) '1e400' is beyond a float (NCCL's cost table holds floats,"
                        + " microseconds; -1 where NCCL does not offer the entry)");
    }

    @Test
    void yamlFeaturesAreRefusedAsThePluginRefusesThem(@TempDir Path dir) throws Exception {
        String[][] cases = {
            {
                "merge.yaml",
                YAML.replace("mode: enforce\n", "mode: enforce\n<<: {description: merged}\n"),
                ":4:1: YAML merge keys (<<) are not allowed in a policy; write the fields out"
            },
            {"two.yaml", YAML + "---\n" + YAML, ":12:1: more than one YAML document; a policy is one document"},
            {
                "tag.yaml",
                YAML.replace("name: hostile", "name: !!python/object:os.system hostile"),
                ":2:7: YAML tags (tag:yaml.org,2002:python/object:os.system) are not allowed in a policy"
            },
            {
                "bomb.yaml",
                YAML.replace("mode: enforce\n", "mode: enforce\ndescription: &a [lol, lol]\n")
                        + "x: [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n",
                ":4:14: YAML anchors (&a) are not allowed in a policy"
            },
        };
        for (String[] c : cases) {
            Path p = dir.resolve(c[0]);
            Files.writeString(p, c[1]);
            CliRun v = CliRun.run("validate", p.toString());
            assertEquals(Main.EXIT_INPUT, v.exit(), v.out() + v.err());
            assertTrue(v.out().contains("  " + p + c[2] + "\n"), c[0] + ": " + v.out());
        }
    }

    @Test
    void aHeapTooSmallForTheInputEndsWithOneLine(@TempDir Path dir) throws Exception {
        Path t = dir.resolve("huge.csv");
        try (var w = Files.newBufferedWriter(t)) {
            String comment = "# " + "x".repeat(98) + "\n";
            for (int i = 0; i < 400_000; i++) { // 40 MB of comment lines, held as a list of lines
                w.write(comment);
            }
        }
        Process p = new ProcessBuilder(
                        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                        "-Xmx24m",
                        "-cp",
                        System.getProperty("java.class.path"),
                        Main.class.getName(),
                        "replay",
                        "--policy",
                        POLICY,
                        "--trace",
                        t.toString())
                .redirectErrorStream(true)
                .start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(90, TimeUnit.SECONDS));
        assertEquals(Main.EXIT_INPUT, p.exitValue(), out);
        assertTrue(
                out.matches("nccl-tuner: out of memory: the inputs need more than the Java heap's \\d+ MiB; give fewer"
                        + " or smaller inputs, or a larger heap \\(NCCL_TUNER_CLI_HEAP=8g for bin/nccl-tuner\\)\n"),
                out);
        String dist = Files.readString(
                Path.of(System.getProperty("nccltj.repo", "..")).resolve("make/dist.mk"));
        assertTrue(dist.contains("-Xmx$${NCCL_TUNER_CLI_HEAP:-2g}"), "bin/nccl-tuner caps the heap");
    }

    @Test
    void decisionLogLinesOutOfRangeAreInputErrors(@TempDir Path dir) throws Exception {
        Path src = Path.of(
                HostileInputCliTest.class.getResource("/report/rank-c.jsonl").toURI());
        List<String> lines = Files.readAllLines(src);
        String[][] cases = {
            {
                "2",
                "\"nBytes\":4",
                "\"nBytes\":-1",
                ":2: nBytes -1 is not a size in bytes (a whole number" + " 0..18446744073709551615)"
            },
            {
                "1",
                "\"calls\":100",
                "\"calls\":-100",
                ":1: calls -100 is not a count (a whole number" + " 0..9223372036854775807)"
            },
            {
                "1",
                "\"calls\":100",
                "\"calls\":18446744073709551616",
                ":1: calls 18446744073709551616 is not a count (a" + " whole number 0..9223372036854775807)"
            },
        };
        for (String[] c : cases) {
            List<String> l = new ArrayList<>(lines);
            int n = Integer.parseInt(c[0]) - 1;
            l.set(n, l.get(n).replace(c[1], c[2]));
            Path f = dir.resolve("bad" + c[2].hashCode() + ".jsonl");
            Files.write(f, l);
            input(CliRun.run("report", f.toString()), "report", f + c[3]);
        }
        List<String> l = new ArrayList<>(lines);
        l.add("{\"type\":\"frob\",\"x\":1}");
        l.add("{\"type\":\"frob\",\"x\":2}");
        Path f = dir.resolve("unknown.jsonl");
        Files.write(f, l);
        CliRun r = CliRun.run("report", f.toString());
        assertEquals(Main.EXIT_OK, r.exit(), r.err());
        assertEquals(
                "warning: " + f + ":" + (lines.size() + 1) + ": 2 lines of an unknown type ('frob' first) skipped; the"
                        + " reports read the types aggregate, comm, measured, profiled and per-call records (a newer"
                        + " plugin's log?)\n",
                r.err());
    }
}
