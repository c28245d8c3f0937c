package io.nccltuner.ffm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nccltuner.engine.TunerLog;
import io.nccltuner.policy.Mode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Issue 13 item 11: {@code nccl_tuner.conf} in the working directory, as NCCL's example reads it. */
@Timeout(60)
class PluginConfigDefaultFileTest {
    private static final TunerLog QUIET = (logger, level, message) -> {};

    @Test
    void workingDirectorysNcclTunerConfIsReadWhenNothingIsSet(@TempDir Path dir) throws Exception {
        PluginConfig none = PluginConfig.fromEnvironment(Map.of(), QUIET, dir);
        assertEquals(Mode.OFF, none.engine().mode());
        assertNull(none.engine().policy());
        Files.writeString(dir.resolve("nccl_tuner.conf"), "allreduce,0,65535,tree,ll,-1,-1,-1\n");
        PluginConfig c = PluginConfig.fromEnvironment(Map.of(), QUIET, dir);
        assertEquals(Mode.ENFORCE, c.engine().mode());
        assertEquals(1, c.engine().policy().profiles().getFirst().rules().size());
        assertTrue(c.info().contains("nccl_tuner.conf (NCCL_TUNER_CONFIG_FILE unset"), c.info());
        // a named file wins, and so does a YAML policy
        Path other = dir.resolve("other.conf");
        Files.writeString(other, "allreduce,0,65535,ring,ll,-1,-1,-1\nallgather,0,65535,ring,ll,-1,-1,-1\n");
        PluginConfig named =
                PluginConfig.fromEnvironment(Map.of("NCCL_TUNER_CONFIG_FILE", other.toString()), QUIET, dir);
        assertEquals(2, named.engine().policy().profiles().getFirst().rules().size());
        assertTrue(!named.info().contains("unset"), named.info());
    }
}
