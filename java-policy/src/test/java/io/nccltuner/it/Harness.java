package io.nccltuner.it;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Runs the host harness (tests/harness/harness.c, built by `make build`) in a process of its own.
 * Public for the reliability tests (io.nccltuner.reliability.it).
 */
public final class Harness {
    public static final Path REPO =
            Path.of(System.getProperty("nccltj.repo", "..")).toAbsolutePath().normalize();
    public static final Path BUILD = REPO.resolve("build");
    public static final Path BIN = BUILD.resolve("tests/harness");
    public static final Path PLUGIN = BUILD.resolve("lib/libnccl-tuner-java.so");
    public static final Path JAR = BUILD.resolve("lib/nccl-tuner-java.jar");
    public static final Path NOOP = BUILD.resolve("tests/libnccl-tuner-noop.so");
    public static final Path TRACES = REPO.resolve("tests/traces");
    public static final String JAVA_HOME = System.getProperty("java.home");

    /** One selection line: {@code AllReduce: 1048576 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..3}}. */
    public record Selection(String collective, long nBytes, String algorithm, String protocol, int channels) {
        static final Pattern LINE = Pattern.compile(
                "^(\\w+): (\\d+) Bytes -> Algo (\\w+) proto (\\w+) channel\\{Lo\\.\\.Hi\\}=\\{(NCCL decides|0\\.\\.(\\d+))\\}.*$");

        public static Selection parse(String line) {
            Matcher m = LINE.matcher(line);
            if (!m.matches()) {
                return null;
            }
            int ch = m.group(6) == null ? 0 : Integer.parseInt(m.group(6)) + 1;
            return new Selection(m.group(1), Long.parseLong(m.group(2)), m.group(3), m.group(4), ch);
        }
    }

    public record Result(int exit, List<String> lines) {
        public List<Selection> selections() {
            List<Selection> out = new ArrayList<>();
            for (String l : lines) {
                Selection s = Selection.parse(l);
                if (s != null) {
                    out.add(s);
                }
            }
            return out;
        }

        public List<String> warnings() {
            return lines.stream().filter(l -> l.contains(" NCCL WARN ")).toList();
        }

        public List<String> grep(String needle) {
            return lines.stream().filter(l -> l.contains(needle)).toList();
        }

        public String summary() {
            return lines.stream()
                    .filter(l -> l.startsWith("harness: calls="))
                    .findFirst()
                    .orElse("(no summary)");
        }

        public String text() {
            return String.join("\n", lines);
        }
    }

    private Harness() {}

    public static void requireBuilt() {
        for (Path p : List.of(BIN, PLUGIN, JAR, NOOP)) {
            assertTrue(Files.exists(p), p + " is missing: integration tests run after `make build` (use `make test`)");
        }
    }

    /**
     * Runs the harness with a clean NCCL_* / JAVA environment plus {@code env}.
     *
     * @param env variables to set; a null value removes the variable
     */
    public static Result run(Map<String, String> env, String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>();
        cmd.add(BIN.toString());
        cmd.addAll(List.of(args));
        return exec(cmd, env, false);
    }

    /**
     * Runs the harness with the built plugin over one trace (the harness's default NCCL release), in
     * a clean NCCL_* / JAVA environment plus {@code env}.
     *
     * @param env variables to set; a null value removes the variable
     * @param trace the trace whose get rows it replays
     * @param more further harness options
     */
    public static Result replay(Map<String, String> env, Path trace, String... more)
            throws IOException, InterruptedException {
        List<String> args = new ArrayList<>(List.of("--plugin", PLUGIN.toString(), "--trace", trace.toString()));
        args.addAll(List.of(more));
        return run(env, args.toArray(String[]::new));
    }

    /**
     * Runs any command; with {@code bare} the environment is emptied first (no JAVA_HOME, no PATH),
     * as on a GPU node without a JDK.
     */
    public static Result exec(List<String> cmd, Map<String, String> env, boolean bare)
            throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        Map<String, String> e = pb.environment();
        if (bare) {
            e.clear();
            e.put("PATH", "/nonexistent");
        }
        e.keySet().removeIf(k -> k.startsWith("NCCL_") || k.startsWith("JAVA_") || k.equals("JDK_JAVA_OPTIONS"));
        if (!bare) {
            e.put("JAVA_HOME", JAVA_HOME);
        }
        e.put("NCCL_DEBUG", "INFO");
        env.forEach((k, v) -> {
            if (v == null) {
                e.remove(k);
            } else {
                e.put(k, v);
            }
        });
        return waitFor(pb, cmd, 120);
    }

    /**
     * Starts pb (output merged into a temporary file, so that a process that hangs cannot block
     * the reader) and waits at most timeoutSeconds for it; a process still running then is killed
     * and the test fails with what it printed so far.
     */
    public static Result waitFor(ProcessBuilder pb, List<String> cmd, long timeoutSeconds)
            throws IOException, InterruptedException {
        Path out = Files.createTempFile("nccltj-process", ".out");
        try {
            pb.redirectErrorStream(true).redirectOutput(out.toFile());
            Process p = pb.start();
            if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
                p.destroyForcibly().waitFor();
                throw new AssertionError("timed out after " + timeoutSeconds + " s (a hang): " + cmd + "\n"
                        + new String(Files.readAllBytes(out), StandardCharsets.UTF_8));
            }
            return new Result(
                    p.exitValue(),
                    new String(Files.readAllBytes(out), StandardCharsets.UTF_8)
                            .lines()
                            .toList());
        } finally {
            Files.deleteIfExists(out);
        }
    }
}
