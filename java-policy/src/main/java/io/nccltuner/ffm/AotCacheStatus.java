package io.nccltuner.ffm;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Whether the JVM the shim created started from a JDK 25 AOT cache, for the first INFO line.
 *
 * <p>The shim passes {@code -XX:AOTCache=PATH} and {@code -Dnccltj.aotCache=PATH} when
 * {@code nccl-tuner-java.aot} sits beside the library. The JVM may still refuse the cache (it was
 * made by another runtime, or with other options: the JVM then starts without it and says so only
 * with {@code -Xlog:aot}); a cache in use is mapped into the process, so it shows in
 * {@code /proc/self/maps} (Linux, like the plugin).
 */
final class AotCacheStatus {
    private AotCacheStatus() {}

    /**
     * @return {@code "AOT cache PATH"} when it is mapped; {@code "AOT cache PATH not used (...)"}
     *     when the shim passed it but the JVM did not map it; {@code "no AOT cache (...)"} when there
     *     was none
     */
    static String describe() {
        String path = System.getProperty("nccltj.aotCache");
        if (path == null || path.isEmpty()) {
            return "no AOT cache: bin/nccl-tuner-aot or -XX:AOTCacheOutput makes nccl-tuner-java.aot beside the library";
        }
        return isMapped(Path.of("/proc/self/maps"), path)
                ? "AOT cache " + path
                : "AOT cache " + path
                        + " not used: made by another Java runtime or with other options; run bin/nccl-tuner-aot again";
    }

    /**
     * @param maps a file in the format of {@code /proc/self/maps}
     * @param path an absolute file path
     * @return whether a mapping of {@code path} is listed; false if {@code maps} cannot be read
     */
    static boolean isMapped(Path maps, String path) {
        try {
            // readAllBytes, not readAllLines: no Reader classes to load at start (/proc files read to EOF)
            String text = new String(Files.readAllBytes(maps), StandardCharsets.UTF_8);
            return text.contains(" " + path + "\n") || text.endsWith(" " + path);
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }
}
