package io.nccltuner.ffm;

import static org.junit.jupiter.api.Assertions.assertFalse;

import io.nccltuner.engine.TunerLog;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** NCCL_TUNER_JAVA_MODE=off changes nothing and writes nothing: NCCL_TUNER_JAVA_LOG opens no file. */
class PluginConfigOffModeLogTest {
    @Test
    void offModeOpensNoDecisionLog(@TempDir Path tmp) throws Exception {
        Path log = tmp.resolve("decisions.jsonl");
        TunerLog quiet = (l, level, m) -> {};
        PluginConfig c = PluginConfig.fromEnvironment(
                Map.of(
                        "NCCL_TUNER_JAVA_FORCE", "RING/LL",
                        "NCCL_TUNER_JAVA_MODE", "off",
                        "NCCL_TUNER_JAVA_LOG", log.toString()),
                quiet,
                tmp);
        if (c.engine() != null) {
            c.engine().flush();
        }
        assertFalse(Files.exists(log), "off mode opened " + log);
    }
}
