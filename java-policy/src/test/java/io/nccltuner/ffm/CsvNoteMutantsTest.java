package io.nccltuner.ffm;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.nccltuner.engine.TunerLog;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Mutation tests of the init notice's CSV approximation note: counts, first, regBuff lines apart. */
class CsvNoteMutantsTest {
    private static final TunerLog QUIET = (logger, level, message) -> {};

    private static String info(Path dir, String csv) throws Exception {
        Path conf = dir.resolve("nccl_tuner.conf");
        Files.writeString(conf, csv);
        String info = PluginConfig.fromEnvironment(Map.of("NCCL_TUNER_CONFIG_FILE", conf.toString()), QUIET, dir)
                .info();
        int at = info.indexOf("; NCCL_TUNER_CONFIG_FILE read");
        return info.substring(at < 0 ? info.lastIndexOf("; ") : at).replace(conf.toString(), "C");
    }

    @Test
    void approximationsAndRegBuffLinesAreCountedApart(@TempDir Path dir) throws Exception {
        assertEquals(
                "; NCCL_TUNER_CONFIG_FILE read with 2 approximation(s), first: C:2: bytes 65536..100000 (inclusive) is"
                        + " not on the size grid; rounded to [64 KiB, 112 KiB): sizes 100001..114687 B follow this line"
                        + " too; write max_bytes 98303 to end it at 96 KiB, but the calls of 98304..100000 B then leave it"
                        + " (as is, they stay on this line, as in NCCL); 1 regBuff 0/1 line(s) kept as regBuff rules"
                        + " (they match from NCCL 2.24, tuner v4)",
                info(
                        dir,
                        "allreduce,0,65535,ring,ll,-1,-1,-1,-1,0\n"
                                + "allreduce,65536,100000,tree,simple,-1,-1,-1,-1,-1\n"
                                + "allgather,0,100000,ring,simple,-1,-1,-1,-1,-1\n"));
        assertEquals(
                "; 2 regBuff 0/1 line(s) kept as regBuff rules (they match from NCCL 2.24, tuner v4)",
                info(dir, "allreduce,0,65535,ring,ll,-1,-1,-1,-1,0\nallreduce,0,65535,tree,ll,-1,-1,-1,-1,1\n"));
        assertEquals(
                "; 1 regBuff 0/1 line(s) kept as regBuff rules (they match from NCCL 2.24, tuner v4)",
                info(dir, "allreduce,0,65535,ring,ll,-1,-1,-1,-1,1\n"));
    }
}
