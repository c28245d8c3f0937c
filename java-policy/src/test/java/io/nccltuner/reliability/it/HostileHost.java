package io.nccltuner.reliability.it;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nccltuner.it.Harness;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Runs tests/reliability/hostile_host (built by `make build`, make/reliability.mk) in a process of its own,
 * through {@link Harness#exec}, and reads its output.
 */
final class HostileHost {
    static final Path BIN = Harness.BUILD.resolve("tests/reliability/hostile_host");
    /** The shim built with bridge ABI 9999 (make/reliability.mk). */
    static final Path SHIM_OTHER_ABI = Harness.BUILD.resolve("tests/reliability/abi-other/libnccl-tuner-java.so");

    static final Path POLICY = Harness.REPO.resolve("policies/h200-2rank.yaml");

    /** One "hostile_host: get" line: the table and nChannels after the call. */
    record Get(int line, int ret, int nChannels, float[] table) {
        static final Pattern LINE =
                Pattern.compile("^hostile_host: get line=(\\d+) ret=(-?\\d+) nch=(-?\\d+) table=(\\S*) guard=ok$");

        static Get parse(String s) {
            Matcher m = LINE.matcher(s);
            if (!m.matches()) {
                return null;
            }
            String[] v = m.group(4).isEmpty() ? new String[0] : m.group(4).split(",");
            float[] t = new float[v.length];
            for (int i = 0; i < v.length; i++) {
                t[i] = Float.parseFloat(v[i]);
            }
            return new Get(Integer.parseInt(m.group(1)), Integer.parseInt(m.group(2)), Integer.parseInt(m.group(3)), t);
        }
    }

    private HostileHost() {}

    static void requireBuilt() {
        Harness.requireBuilt();
        for (Path p : List.of(BIN, SHIM_OTHER_ABI)) {
            assertTrue(
                    Files.exists(p), p + " is missing: the reliability tests run after `make build` (use `make test`)");
        }
    }

    static Harness.Result run(Map<String, String> env, String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>();
        cmd.add(BIN.toString());
        cmd.addAll(List.of(args));
        return Harness.exec(cmd, env, false);
    }

    static List<Get> gets(Harness.Result r) {
        List<Get> out = new ArrayList<>();
        for (String l : r.lines()) {
            Get g = Get.parse(l);
            if (g != null) {
                out.add(g);
            }
        }
        return out;
    }

    static Path script(Path dir, String name, List<String> lines) throws IOException {
        Path p = dir.resolve(name + ".script");
        Files.write(p, lines);
        return p;
    }

    static String costs(float[] costs) {
        StringBuilder sb = new StringBuilder();
        for (float f : costs) {
            sb.append(',').append(f);
        }
        return sb.toString();
    }
}
