package io.nccltuner.ffm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The AOT cache's training options ({@code DIST_AOT_OPTS} in make/dist.mk) are a copy, across the
 * C/make boundary, of options the shim creates its JVM with (plugin-shim/src/jvm_options.c, one
 * {@code ROW} each): HotSpot uses a cache only under the options it was trained with. Each training
 * option must be one of the shim's, but for {@code -XX:-AOTRecordTraining}, which only a training
 * run takes (the shim runs with {@code -XX:-AOTReplayTraining}).
 */
class AotOptionsTest {
    private static final Path REPO =
            Path.of(System.getProperty("nccltj.repo", "..")).toAbsolutePath().normalize();

    /** The training-only option dist.mk adds. */
    private static final String TRAINING_ONLY = "-XX:-AOTRecordTraining";

    static List<String> distAotOptions() throws Exception {
        List<String> lines = Files.readAllLines(REPO.resolve("make/dist.mk"));
        StringBuilder value = new StringBuilder();
        boolean in = false;
        for (String l : lines) {
            if (!in && l.startsWith("DIST_AOT_OPTS :=")) {
                in = true;
                l = l.substring("DIST_AOT_OPTS :=".length());
            }
            if (in) {
                boolean more = l.endsWith("\\");
                value.append(' ').append(more ? l.substring(0, l.length() - 1) : l);
                if (!more) {
                    break;
                }
            }
        }
        return new ArrayList<>(Arrays.asList(value.toString().trim().split("\\s+")));
    }

    static Set<String> shimOptions() throws Exception {
        String c = Files.readString(REPO.resolve("plugin-shim/src/jvm_options.c"));
        Set<String> rows = new LinkedHashSet<>();
        Matcher m = Pattern.compile("\\bROW\\(\"([^\"]+)\"\\s*,").matcher(c);
        while (m.find()) {
            rows.add(m.group(1));
        }
        return rows;
    }

    @Test
    void everyTrainingOptionIsOneTheShimPasses() throws Exception {
        List<String> dist = distAotOptions();
        Set<String> shim = shimOptions();
        assertTrue(shim.contains("-Xrs") && shim.contains("-XX:-AOTReplayTraining"), shim.toString());
        assertTrue(dist.contains(TRAINING_ONLY), dist.toString());
        List<String> notTheShims = new ArrayList<>(dist);
        notTheShims.removeAll(shim);
        assertEquals(List.of(TRAINING_ONLY), notTheShims, "DIST_AOT_OPTS options the shim does not pass");
    }
}
