package io.nccltuner.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nccltuner.policy.PolicyLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The real plugin, in the JVM the shim starts (its heap is -Xmx64m), given an NCCL example-tuner
 * config of one 14 MB line: it ran out of heap and warned without naming the file. Now the size is
 * checked before the file is read: one WARN names the file and the limit, and the plugin changes
 * nothing.
 */
@Timeout(180)
class HostileConfigIT {
    @BeforeAll
    static void built() {
        Harness.requireBuilt();
    }

    @Test
    void aFourteenMegabyteLineIsRefusedNamingTheFileAndTheLimit(@TempDir Path dir) throws Exception {
        Path conf = dir.resolve("nccl_tuner.conf");
        Files.writeString(conf, "allreduce,0,65535,ring,ll,-1,-1,-1," + "1".repeat(14_000_000) + "\n");
        Harness.Result r = Harness.replay(
                Map.of("NCCL_TUNER_CONFIG_FILE", conf.toString()), Harness.TRACES.resolve("trace_ddp.csv"));
        assertEquals(0, r.exit(), r.text());
        assertEquals(1, r.warnings().size(), r.text());
        assertTrue(
                r.warnings()
                        .getFirst()
                        .endsWith("TUNER/Java: policy refused, the plugin changes nothing: " + conf + ": "
                                + Files.size(conf) + " bytes, over the limit of " + PolicyLoader.MAX_FILE_BYTES
                                + " bytes for a policy file; split it or drop unused rules"),
                r.text());
        assertTrue(r.summary().contains(" changed=0 "), r.summary());
    }
}
