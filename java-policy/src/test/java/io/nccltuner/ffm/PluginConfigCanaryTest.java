package io.nccltuner.ffm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nccltuner.engine.TunerLog;
import io.nccltuner.policy.Mode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Canary mode's configuration: the fraction, and the one line that says when nothing measures it. */
class PluginConfigCanaryTest {
    private static final TunerLog QUIET = (logger, level, message) -> {};

    static Map<String, String> env(Path dir, String... kv) throws Exception {
        Path p = dir.resolve("p.yaml");
        Files.writeString(p, """
        schema: nccl-tuner-java/v1
        name: c
        profiles:
          - name: two
            match: {nRanks: 2}
            rules:
              - collective: AllReduce
                bytes: {from: 0 B}
                candidates: [{algorithm: RING, protocol: LL}]
        """);
        Map<String, String> m = new HashMap<>(Map.of("NCCL_TUNER_JAVA_POLICY", p.toString()));
        for (int i = 0; i < kv.length; i += 2) {
            m.put(kv[i], kv[i + 1]);
        }
        return m;
    }

    @Test
    void canaryWithoutTheProfilerSaysNothingMeasuresIt(@TempDir Path dir) throws Exception {
        String lib = System.getProperty("nccltj.library");
        try {
            System.setProperty("nccltj.library", "/opt/x/lib/libnccl-tuner-java.so");
            PluginConfig unset = PluginConfig.fromEnvironment(env(dir, "NCCL_TUNER_JAVA_MODE", "canary"), QUIET, dir);
            assertEquals(Mode.CANARY, unset.engine().mode());
            assertNull(unset.warning());
            assertTrue(
                    unset.info()
                            .contains("canary mode, fraction 0.1: NCCL_PROFILER_PLUGIN does not name this library "
                                    + "(unset), so both arms run but nothing measures them"),
                    unset.info());
            PluginConfig other = PluginConfig.fromEnvironment(
                    env(
                            dir,
                            "NCCL_TUNER_JAVA_MODE",
                            "canary",
                            "NCCL_PROFILER_PLUGIN",
                            "/opt/inspector/libnccl-profiler-inspector.so"),
                    QUIET,
                    dir);
            assertTrue(
                    other.info().contains("(/opt/inspector/libnccl-profiler-inspector.so), so both arms run"),
                    other.info());
            PluginConfig ours = PluginConfig.fromEnvironment(
                    env(
                            dir,
                            "NCCL_TUNER_JAVA_MODE",
                            "canary",
                            "NCCL_TUNER_JAVA_CANARY",
                            "0.25",
                            "NCCL_PROFILER_PLUGIN",
                            "/elsewhere/libnccl-tuner-java.so"),
                    QUIET,
                    dir);
            assertTrue(ours.info().contains("canary mode, fraction 0.25"), ours.info());
            assertFalse(ours.info().contains("nothing measures"), ours.info());
            PluginConfig enforce = PluginConfig.fromEnvironment(env(dir), QUIET, dir);
            assertFalse(enforce.info().contains("canary"), enforce.info());
        } finally {
            if (lib == null) {
                System.clearProperty("nccltj.library");
            } else {
                System.setProperty("nccltj.library", lib);
            }
        }
    }

    @Test
    void aCanaryFractionOutsideZeroToOneChangesNothing(@TempDir Path dir) throws Exception {
        PluginConfig c = PluginConfig.fromEnvironment(
                env(dir, "NCCL_TUNER_JAVA_MODE", "canary", "NCCL_TUNER_JAVA_CANARY", "2"), QUIET, dir);
        assertEquals(Mode.OFF, c.engine().mode());
        assertEquals(
                "NCCL_TUNER_JAVA_CANARY=2 is not a fraction in [0, 1] (e.g. 0.1); the plugin changes nothing",
                c.warning());
    }
}
