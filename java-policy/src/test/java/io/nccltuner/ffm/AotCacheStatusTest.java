package io.nccltuner.ffm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class AotCacheStatusTest {
    static final String CACHE = "/opt/nccl-tuner-java-0.1.0-linux-x86_64/lib/nccl-tuner-java.aot";

    @Test
    void aCacheIsUsedWhenItIsMapped(@TempDir Path tmp) throws Exception {
        Path maps = tmp.resolve("maps");
        Files.writeString(maps, """
        7e000000-7e5d6000 rw-p 00001000 08:01 1234567                            %s
        7f6e74846000-7f6e74880000 r--p 00000000 08:01 2345678                    /usr/lib/x86_64-linux-gnu/libc.so.6
        """.formatted(CACHE));
        assertTrue(AotCacheStatus.isMapped(maps, CACHE));
        assertFalse(AotCacheStatus.isMapped(maps, "/opt/other/lib/nccl-tuner-java.aot"));
        // a path that is only a suffix of the mapped one is not it
        assertFalse(AotCacheStatus.isMapped(maps, "/lib/nccl-tuner-java.aot"));
    }

    @Test
    void anUnreadableMapsFileMeansNotMapped(@TempDir Path tmp) {
        assertFalse(AotCacheStatus.isMapped(tmp.resolve("absent"), CACHE));
    }

    @Test
    void thisTestJvmHasNoCacheFromTheShim() {
        // Maven's JVM is not started by the shim: nccltj.aotCache is unset
        assertEquals(null, System.getProperty("nccltj.aotCache"));
        assertTrue(AotCacheStatus.describe().startsWith("no AOT cache: "), AotCacheStatus.describe());
    }
}
