package io.nccltuner.ffm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * make/runtime-jar.allow and make/check-runtime-jar.sh, which `make build` runs on the plugin's
 * jar: the allow-list names each runtime class (a package prefix only for jextract's bindings and
 * the bundled libraries), every class it names is one of java-policy's, and the check fails naming
 * each entry the list does not allow (tool code: the CLI, the compiler, the cost model, picocli).
 */
class RuntimeJarAllowTest {
    static final Path REPO =
            Path.of(System.getProperty("nccltj.repo", "..")).toAbsolutePath().normalize();
    static final Path ALLOW = REPO.resolve("make/runtime-jar.allow");
    static final Path CHECK = REPO.resolve("make/check-runtime-jar.sh");

    @TempDir
    Path dir;

    static List<String> allowLines() throws IOException {
        return Files.readAllLines(ALLOW).stream()
                .filter(l -> !l.isEmpty() && !l.startsWith("#"))
                .toList();
    }

    @Test
    void onlyBindingsAndBundledLibrariesAreAllowedByPrefix() throws IOException {
        List<String> prefixes =
                allowLines().stream().filter(l -> l.endsWith("/")).toList();
        assertEquals(
                List.of("io/nccltuner/bindings/", "com/fasterxml/jackson/", "org/yaml/snakeyaml/", "META-INF/"),
                prefixes,
                "a package prefix in " + ALLOW + " lets any class of that package into the plugin's jar");
    }

    @Test
    void everyAllowedClassIsARuntimeSource() throws IOException {
        List<String> missing = new ArrayList<>();
        for (String l : allowLines()) {
            if (l.endsWith("/")) {
                continue;
            }
            Path src = REPO.resolve("java-policy/src/main/"
                    + (l.endsWith(".class") ? "java/" + l.replace(".class", ".java") : "resources/" + l));
            if (!Files.exists(src)) {
                missing.add(l);
            }
        }
        assertEquals(List.of(), missing, "entries of " + ALLOW + " with no java-policy source");
    }

    record Check(int exit, String output) {}

    Check check(List<String> entries) throws Exception {
        Path jar = dir.resolve("runtime.jar");
        try (OutputStream f = Files.newOutputStream(jar);
                JarOutputStream j = new JarOutputStream(f)) {
            for (String e : entries) {
                j.putNextEntry(new JarEntry(e));
                j.write(e.getBytes(StandardCharsets.UTF_8));
                j.closeEntry();
            }
        }
        ProcessBuilder pb = new ProcessBuilder("sh", CHECK.toString(), jar.toString(), ALLOW.toString());
        pb.environment().put("JAVA_HOME", System.getProperty("java.home"));
        pb.redirectErrorStream(true);
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        return new Check(p.waitFor(), out);
    }

    static final List<String> RUNTIME = List.of(
            "META-INF/MANIFEST.MF",
            "io/nccltuner/engine/Engine.class",
            "io/nccltuner/engine/Engine$Comm.class",
            "io/nccltuner/policy/PolicyLoader.class",
            "io/nccltuner/ffm/aot-training-trace.csv",
            "io/nccltuner/bindings/nccltj_call_t.class",
            "com/fasterxml/jackson/databind/ObjectMapper.class",
            "org/yaml/snakeyaml/Yaml.class");

    @Test
    void runtimeEntriesPass() throws Exception {
        Check c = check(RUNTIME);
        assertEquals(0, c.exit(), c.output());
        assertEquals("", c.output());
    }

    @Test
    void toolClassesFailTheCheckByName() throws Exception {
        List<String> tool = List.of(
                "io/nccltuner/cli/Main.class",
                "io/nccltuner/compile/Compiler.class",
                "io/nccltuner/model/CostModel$Prediction.class",
                "io/nccltuner/engine/EngineTest.class",
                "io/nccltuner/policy/PolicyLoader.java",
                "io/nccltuner/cli/shaded/com/fasterxml/jackson/core/JsonFactory.class",
                "picocli/CommandLine.class");
        List<String> all = new ArrayList<>(RUNTIME);
        all.addAll(tool);
        Check c = check(all);
        assertEquals(1, c.exit(), c.output());
        for (String t : tool) {
            assertTrue(c.output().contains("  " + t + "\n"), t + " not named:\n" + c.output());
        }
        for (String r : RUNTIME) {
            assertTrue(!c.output().contains("  " + r + "\n"), r + " named:\n" + c.output());
        }
    }
}
