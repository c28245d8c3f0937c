package io.nccltuner.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.nccltuner.engine.Engine;
import io.nccltuner.policy.Mode;
import io.nccltuner.policy.Policy;
import io.nccltuner.policy.PolicyException;
import io.nccltuner.policy.PolicyLoader;
import io.nccltuner.reliability.RandomWorkload.Call;
import io.nccltuner.reliability.RandomWorkload.Guarded;
import java.io.IOException;
import java.io.Writer;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.io.TempDir;

/**
 * Hostile policies: the files in src/test/resources/hostile/ (each names what must happen in its
 * first line, {@code # expect: accepted} or {@code # expect: refused LINE:COLUMN text}) and large
 * ones generated here (10 MB, alias bombs, 10,000 levels of nesting, thousands of overlapping
 * rules). Each is refused with {@code file:line:column: field: message} (a file-level message for
 * a file too large), quickly and without an exception escaping the loader, or accepted and then
 * used safely by the engine. The parser's limits are explicit: PolicyLoader.MAX_FILE_BYTES (2 MiB),
 * 32 levels of nesting, no anchors, aliases or tags (so no polymorphic typing), no duplicate keys.
 */
class HostilePolicyTest {
    static final Pattern EXPECT = Pattern.compile("^# expect: (accepted|refused (\\d+):(\\d+) (.*))$");
    /**
     * How long a hostile file may take to load or be refused: 3x the floor measured in this run (the
     * largest valid policy the loader accepts, {@link #justUnderTwoMiB}, loaded after a warm-up), and
     * never under 5 s. A pathological parse (quadratic, exponential) exceeds it on any machine; a
     * loaded machine slows the floor too (the 2 MiB file took 6.5 s at load 12 on 2 cores).
     */
    static long slowNanos() {
        if (slowNanos == 0) {
            try {
                Path p = write("floor-just-under.yaml", justUnderTwoMiB());
                PolicyLoader.load(p);
                long t0 = System.nanoTime();
                PolicyLoader.load(p);
                slowNanos = Math.max(5_000_000_000L, 3 * (System.nanoTime() - t0));
            } catch (Exception e) {
                throw new AssertionError("the floor policy does not load", e);
            }
        }
        return slowNanos;
    }

    private static long slowNanos;

    /** Valid profiles up to 400 bytes under PolicyLoader.MAX_FILE_BYTES: the largest file it accepts. */
    static String justUnderTwoMiB() {
        StringBuilder y = new StringBuilder(HEAD + "profiles:\n");
        for (int i = 0; y.length() < PolicyLoader.MAX_FILE_BYTES - 400; i++) {
            y.append("  - name: p")
                    .append(i)
                    .append("\n    match: {nRanks: ")
                    .append(i + 100)
                    .append("}\n    rules:\n")
                    .append(rule("AllReduce", "{from: 4 KiB, to: 8 KiB}", null));
        }
        return y.toString();
    }

    @TempDir
    static Path tmp;

    static Path resources() throws Exception {
        return Path.of(HostilePolicyTest.class.getResource("/hostile").toURI());
    }

    @TestFactory
    Stream<DynamicTest> hostilePolicies() throws Exception {
        List<DynamicTest> tests = new ArrayList<>();
        try (Stream<Path> files = Files.list(resources())) {
            for (Path f : files.sorted().toList()) {
                tests.add(DynamicTest.dynamicTest(f.getFileName().toString(), () -> fromFile(f)));
            }
        }
        tests.addAll(generated());
        assertTrue(tests.size() >= 50, tests.size() + " hostile policies");
        return tests.stream();
    }

    /** Checks one resource file against the expectation in its first line. */
    static void fromFile(Path f) throws Exception {
        String text = new String(Files.readAllBytes(f), StandardCharsets.UTF_8);
        String first = text.isEmpty() ? "" : text.lines().findFirst().orElse("").replace("\uFEFF", "");
        if (f.getFileName().toString().equals("empty.yaml")) {
            assertEquals("", text, "empty.yaml is empty (no room for an expectation line)");
            first = "# expect: refused 1:1 the policy is empty";
        }
        Matcher m = EXPECT.matcher(first);
        assertTrue(m.matches(), f + ": the first line must say '# expect: accepted' or '# expect: refused L:C text'");
        if (m.group(1).equals("accepted")) {
            useSafely(load(f));
        } else {
            PolicyException e = refused(f);
            String head = f + ":" + m.group(2) + ":" + m.group(3) + ": ";
            assertTrue(e.getMessage().startsWith(head), "want " + head + "...\n got " + e.getMessage());
            assertTrue(e.getMessage().contains(m.group(4)), "want '" + m.group(4) + "'\n got " + e.getMessage());
        }
    }

    static Policy load(Path f) {
        long limit = slowNanos(); // before t0: the first call measures the floor
        long t0 = System.nanoTime();
        try {
            return PolicyLoader.load(f);
        } catch (PolicyException e) {
            throw new AssertionError(f + " should load: " + e.getMessage(), e);
        } finally {
            assertTrue(
                    System.nanoTime() - t0 < limit,
                    f + " took " + (System.nanoTime() - t0) / 1_000_000 + " ms (limit " + limit / 1_000_000 + " ms)");
        }
    }

    /** Loads a file that must be refused: only PolicyException, fast, every problem with a position. */
    static PolicyException refused(Path f) {
        long limit = slowNanos();
        long t0 = System.nanoTime();
        try {
            Policy p = PolicyLoader.load(f);
            throw new AssertionError(f + " should be refused, but loaded as policy " + p.name());
        } catch (PolicyException e) {
            long ms = (System.nanoTime() - t0) / 1_000_000;
            assertTrue(
                    ms < limit / 1_000_000, f + " took " + ms + " ms to refuse (limit " + limit / 1_000_000 + " ms)");
            assertTrue(
                    e.problems().size() <= PolicyLoader.MAX_PROBLEMS + 1,
                    e.problems().size() + " problems listed");
            Pattern at = Pattern.compile("^" + Pattern.quote(f.toString()) + ":(\\d+):(\\d+): \\S.*", Pattern.DOTALL);
            for (String problem : e.problems()) {
                Matcher pm = at.matcher(problem);
                boolean fileLevel = problem.startsWith(f + ": ");
                assertTrue(fileLevel || pm.matches(), "not file:line:column: " + problem);
                if (pm.matches()) {
                    assertTrue(Integer.parseInt(pm.group(1)) >= 1 && Integer.parseInt(pm.group(2)) >= 1, problem);
                }
            }
            return e;
        } catch (RuntimeException | Error x) {
            throw new AssertionError(f + ": the loader threw " + x + " instead of refusing the policy", x);
        }
    }

    /** An accepted policy is used: every profile compiles, and random calls keep the invariants. */
    static void useSafely(Policy policy) {
        List<String> lines = new ArrayList<>();
        Engine e = new Engine(policy, Mode.ENFORCE, (logger, level, message) -> lines.add(message), null);
        Random r = new Random(policy.name().hashCode());
        long[] handles = new long[RandomWorkload.SHAPES.length];
        for (int s = 0; s < handles.length; s++) {
            handles[s] = e.init(RandomWorkload.SHAPES[s][0], RandomWorkload.SHAPES[s][1], MemorySegment.NULL);
        }
        try (Guarded g = new Guarded()) {
            for (int i = 0; i < 20_000; i++) {
                Call c = RandomWorkload.randomCall(r);
                int s = r.nextInt(handles.length);
                g.load(c);
                RandomWorkload.call(e, handles[s], c, g, i);
                InvariantPropertyTest.check(g, c, policy.name() + " call " + i);
                RandomWorkload.Expect want = RandomWorkload.expect(
                        policy, Mode.ENFORCE, RandomWorkload.SHAPES[s][0], RandomWorkload.SHAPES[s][1], c);
                assertEquals(want.channels(), g.nChannels());
            }
        }
        for (long h : handles) {
            e.destroy(h);
        }
        assertTrue(lines.stream().anyMatch(l -> l.startsWith("policy ")), "init logs the policy: " + lines);
    }

    // ---- generated ------------------------------------------------------------------------------

    static final String HEAD = "schema: nccl-tuner-java/v1\nname: generated\n";

    static String rule(String coll, String bytes, String pipe) {
        return "      - {collective: " + coll + ", bytes: " + bytes + (pipe == null ? "" : ", numPipeOps: " + pipe)
                + ", candidates: [{algorithm: RING, protocol: SIMPLE, channels: 8}]}\n";
    }

    static Path write(String name, String text) throws IOException {
        Path p = tmp.resolve(name);
        Files.writeString(p, text);
        return p;
    }

    static List<DynamicTest> generated() {
        List<DynamicTest> t = new ArrayList<>();
        t.add(DynamicTest.dynamicTest("generated: 10 MB file", () -> {
            Path p = tmp.resolve("ten-mb.yaml");
            try (Writer w = Files.newBufferedWriter(p)) {
                w.write(HEAD + "profiles:\n  - name: p\n    rules:\n");
                for (long n = 0; n < 10L * 1000 * 1000; n += 100) {
                    w.write(rule("AllReduce", "{from: 0}", null));
                }
            }
            assertTrue(Files.size(p) > 10_000_000);
            PolicyException e = refused(p);
            assertEquals(
                    p + ": policy is " + Files.size(p) + " bytes, over the limit of " + PolicyLoader.MAX_FILE_BYTES
                            + " bytes; split it or drop unused rules",
                    e.getMessage());
            String text = Files.readString(p);
            try {
                PolicyLoader.parse("ten-mb.yaml", text);
                fail("a 10 MB string should be refused");
            } catch (PolicyException x) {
                assertTrue(x.getMessage().contains("over the limit"), x.getMessage());
            }
        }));
        t.add(DynamicTest.dynamicTest("generated: one byte over the limit", () -> {
            String body = HEAD + "description: \"";
            String pad = "x"
                    .repeat((int) PolicyLoader.MAX_FILE_BYTES
                            - body.length()
                            - "\"\nprofiles:\n  - name: p\n".length()
                            + 1);
            Path p = write("over-by-one.yaml", body + pad + "\"\nprofiles:\n  - name: p\n");
            assertEquals(PolicyLoader.MAX_FILE_BYTES + 1, Files.size(p));
            assertTrue(refused(p).getMessage().contains("over the limit"));
        }));
        t.add(DynamicTest.dynamicTest(
                "generated: just under 2 MiB of valid profiles loads in the plugin's 64 MB heap", () -> {
                    Path p = write("just-under.yaml", justUnderTwoMiB());
                    Policy policy = load(p);
                    assertTrue(policy.profiles().size() > 5_000);
                    // The plugin's JVM options (plugin-shim/src/jvm_options.c): -Xmx64m, SerialGC.
                    assertEquals("loaded " + policy.profiles().size() + " profiles", loadInChildJvm(p, "-Xmx64m"));
                }));
        t.add(DynamicTest.dynamicTest("generated: billion laughs, 10 levels of 10 aliases", () -> {
            StringBuilder y = new StringBuilder(HEAD + "a0: &a0 [\"lol\"]\n");
            for (int i = 1; i <= 10; i++) {
                y.append('a')
                        .append(i)
                        .append(": &a")
                        .append(i)
                        .append(" [")
                        .append(String.join(", ", java.util.Collections.nCopies(10, "*a" + (i - 1))))
                        .append("]\n");
            }
            y.append("profiles: *a10\n");
            assertTrue(refused(write("billion-laughs-10.yaml", y.toString()))
                    .getMessage()
                    .contains("YAML anchors (&a0) are not allowed"));
        }));
        t.add(DynamicTest.dynamicTest("generated: 10,000 levels of flow nesting", () -> {
            String y = HEAD + "description: " + "[".repeat(10_000) + "]".repeat(10_000) + "\nprofiles:\n  - name: p\n";
            assertTrue(refused(write("nesting-10000.yaml", y))
                    .getMessage()
                    .contains("nesting depth (33) exceeds the maximum allowed (32"));
        }));
        t.add(DynamicTest.dynamicTest("generated: 200 levels of block mappings", () -> {
            StringBuilder y = new StringBuilder(HEAD + "profiles:\n");
            for (int i = 0; i < 200; i++) {
                y.append(" ".repeat(2 * i + 2)).append("k:\n");
            }
            String m = refused(write("block-nesting.yaml", y.toString())).getMessage();
            assertTrue(m.contains("nesting depth"), m);
        }));
        t.add(DynamicTest.dynamicTest("generated: 1,000 copies of one rule (499,500 overlapping pairs)", () -> {
            StringBuilder y = new StringBuilder(HEAD + "profiles:\n  - name: p\n    rules:\n");
            for (int i = 0; i < 1_000; i++) {
                y.append(rule("AllReduce", "{from: 0}", null));
            }
            PolicyException e = refused(write("thousand-copies.yaml", y.toString()));
            assertEquals(PolicyLoader.MAX_PROBLEMS + 1, e.problems().size());
            assertTrue(
                    e.problems().getLast().contains("more problems not listed"),
                    e.problems().getLast());
        }));
        t.add(DynamicTest.dynamicTest("generated: 7,000 rules, disjoint numPipeOps, one byte range", () -> {
            StringBuilder y = new StringBuilder(HEAD + "profiles:\n  - name: p\n    rules:\n");
            for (int i = 0; i < 7_000; i++) {
                y.append(rule("AllReduce", "{from: 0}", Integer.toString(i)));
            }
            String m = refused(write("seven-thousand.yaml", y.toString())).getMessage();
            assertTrue(m.contains("more than 4 rules cover AllReduce"), m);
        }));
        t.add(DynamicTest.dynamicTest("generated: 5,000 unknown fields", () -> {
            StringBuilder y = new StringBuilder(HEAD + "profiles:\n  - name: p\n");
            for (int i = 0; i < 5_000; i++) {
                y.append("    extra").append(i).append(": 1\n");
            }
            PolicyException e = refused(write("unknown-fields.yaml", y.toString()));
            assertEquals(PolicyLoader.MAX_PROBLEMS + 1, e.problems().size());
            assertTrue(
                    e.problems().getLast().endsWith("4900 more problems not listed (only the first 100 are)"),
                    e.problems().getLast());
        }));
        t.add(DynamicTest.dynamicTest("generated: a 200 KB key (YAML keys end at 1024 characters)", () -> {
            String y = HEAD + "k" + "e".repeat(200_000) + ": 1\nprofiles:\n  - name: p\n";
            String m = refused(write("long-key.yaml", y)).getMessage();
            assertTrue(
                    m.contains(
                            "malformed YAML: could not find expected ':' (while scanning a simple key started at line 3)"),
                    m.substring(0, Math.min(300, m.length())));
        }));
        t.add(DynamicTest.dynamicTest("generated: a 500 KB description is accepted (never logged)", () -> {
            String y = HEAD + "description: \"" + "d".repeat(500_000) + "\"\nprofiles:\n  - name: p\n    rules:\n"
                    + rule("AllReduce", "{from: 0}", null);
            useSafely(load(write("long-description.yaml", y)));
        }));
        t.add(DynamicTest.dynamicTest("generated: 1,000 profiles, 5 rules each, first match wins", () -> {
            StringBuilder y = new StringBuilder(HEAD + "profiles:\n");
            for (int i = 0; i < 1_000; i++) {
                y.append("  - name: p")
                        .append(i)
                        .append("\n    match: {nRanks: ")
                        .append(i % 40 + 1)
                        .append("}\n    rules:\n");
                for (String c : List.of("Broadcast", "Reduce", "AllGather", "ReduceScatter", "AllReduce")) {
                    y.append(rule(c, "{from: " + (1 << (i % 20)) + "}", null));
                }
            }
            Policy p = load(write("many-profiles.yaml", y.toString()));
            assertEquals("p0", p.profileFor(1, 1).name());
            assertEquals("p1", p.profileFor(2, 1).name());
            useSafely(p);
        }));
        return t;
    }

    /** Loads a policy in a child JVM with the given heap; returns its one line of output. */
    static String loadInChildJvm(Path policy, String heap) throws Exception {
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        ProcessBuilder pb = new ProcessBuilder(
                        java.toString(),
                        heap,
                        "-XX:+UseSerialGC",
                        "-cp",
                        System.getProperty("java.class.path"),
                        LoadMain.class.getName(),
                        policy.toString())
                .redirectErrorStream(true);
        pb.environment().remove("JAVA_TOOL_OPTIONS");
        Process proc = pb.start();
        String out = new String(proc.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        assertTrue(proc.waitFor(60, TimeUnit.SECONDS));
        return out;
    }

    /** {@code java ... HostilePolicyTest$LoadMain FILE}: loads a policy, prints how many profiles. */
    public static final class LoadMain {
        public static void main(String[] args) throws Exception {
            Policy p = PolicyLoader.load(Path.of(args[0]));
            for (Policy.Profile profile : p.profiles()) {
                io.nccltuner.engine.DecisionTable.compile(profile);
            }
            System.out.println("loaded " + p.profiles().size() + " profiles");
        }
    }
}
