package io.nccltuner.ffm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nccltuner.engine.TunerLog;
import io.nccltuner.policy.Mode;
import io.nccltuner.policy.NcclExampleConfig;
import io.nccltuner.policy.PolicyLoader;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Hostile policy files the plugin must refuse with one warning naming the file and the line, and
 * then change nothing: a byte that is not UTF-8 (in a .conf and in a YAML), a file over the size
 * limit and a line over the line limit (a 14 MB line ran the plugin's 64 MB heap out), a
 * fullwidth digit in a .conf and a YAML merge key.
 */
@Timeout(60)
class PluginConfigHostileInputTest {
    private static final TunerLog QUIET = (logger, level, message) -> {};

    private static final String PREFIX = "policy refused, the plugin changes nothing: ";

    private static final String YAML = """
            schema: nccl-tuner-java/v1
            name: hostile
            mode: enforce
            profiles:
              - name: any
                rules:
                  - collective: AllReduce
                    bytes: {from: 0 B, to: 64 KiB}
                    candidates:
                      - {algorithm: RING, protocol: LL}
            """;

    private static PluginConfig load(String variable, Path file, Path dir) {
        return PluginConfig.fromEnvironment(Map.of(variable, file.toString()), QUIET, dir);
    }

    private static void refused(PluginConfig c, String warning) {
        assertEquals(Mode.OFF, c.engine().mode(), "the plugin changes nothing");
        assertEquals(PREFIX + warning, c.warning());
    }

    private static byte[] bytes(String before, int bad, String after) {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        b.writeBytes(before.getBytes(StandardCharsets.UTF_8));
        b.write(bad);
        b.writeBytes(after.getBytes(StandardCharsets.UTF_8));
        return b.toByteArray();
    }

    @Test
    void aByteThatIsNotUtf8IsNamedByFileLineAndColumn(@TempDir Path dir) throws Exception {
        Path conf = dir.resolve("nccl_tuner.conf");
        Files.write(
                conf,
                bytes(
                        "allreduce,0,65535,ring,ll,-1,-1,-1\n# comment\nallreduce,65536,",
                        0xff,
                        "1048575,tree,simple,-1,-1,-1\n"));
        String why = conf + ":3:17: not UTF-8 (byte 0xff at byte 17 of the line); save the file as UTF-8";
        refused(load("NCCL_TUNER_CONFIG_FILE", conf, dir), why);
        refused(load("NCCL_TUNER_JAVA_POLICY", conf, dir), why);

        Path yaml = dir.resolve("p.yaml");
        Files.write(yaml, bytes(YAML + "# caf", 0xe9, "\n"));
        refused(
                load("NCCL_TUNER_JAVA_POLICY", yaml, dir),
                yaml + ":11:6: not UTF-8 (byte 0xe9 at byte 6 of the line); save the file as UTF-8");
    }

    @Test
    void aFileOverTheLimitIsRefusedBeforeItIsRead(@TempDir Path dir) throws Exception {
        Path conf = dir.resolve("big.conf");
        Files.writeString(
                conf,
                "allreduce,0,65535,ring,ll,-1,-1,-1," + "1".repeat((int) NcclExampleConfig.MAX_FILE_BYTES) + "\n");
        refused(
                load("NCCL_TUNER_CONFIG_FILE", conf, dir),
                conf + ": " + Files.size(conf) + " bytes, over the limit of " + PolicyLoader.MAX_FILE_BYTES
                        + " bytes for a policy file; split it or drop unused rules");

        Path line = dir.resolve("line.conf");
        Files.writeString(
                line,
                "# a long line\nallreduce,0,65535,ring,ll,-1,-1,-1," + "1".repeat(NcclExampleConfig.MAX_LINE_CHARS)
                        + "\n");
        refused(
                load("NCCL_TUNER_CONFIG_FILE", line, dir),
                line + ":2: a line of " + (NcclExampleConfig.MAX_LINE_CHARS + 35) + " characters, over the limit of "
                        + NcclExampleConfig.MAX_LINE_CHARS + " for a config line (NCCL's example plugin reads 1 KiB"
                        + " lines)");
    }

    @Test
    void aFullwidthDigitIsNoNumber(@TempDir Path dir) throws Exception {
        Path conf = dir.resolve("fw.conf");
        Files.writeString(conf, "allreduce,0,\uff16\uff15\uff15\uff13\uff15,ring,ll,-1,-1,-1\n");
        refused(
                load("NCCL_TUNER_CONFIG_FILE", conf, dir),
                conf + ":1: max_bytes '\uff16\uff15\uff15\uff13\uff15' is not a whole number of bytes (only ASCII"
                        + " digits 0-9 are read as numbers)");
        Files.writeString(conf, "allreduce,0,65535,ring,ll,\u0664,-1,-1\n"); // Arabic-Indic 4 as channels
        String w = load("NCCL_TUNER_CONFIG_FILE", conf, dir).warning();
        assertTrue(w.startsWith(PREFIX + conf + ":1: channels '\u0664' is not a whole number (only ASCII"), w);
    }

    @Test
    void aYamlMergeKeyIsRefusedByName(@TempDir Path dir) throws Exception {
        Path yaml = dir.resolve("merge.yaml");
        Files.writeString(yaml, YAML.replace("mode: enforce\n", "mode: enforce\n<<: {description: merged}\n"));
        refused(
                load("NCCL_TUNER_JAVA_POLICY", yaml, dir),
                yaml + ":4:1: YAML merge keys (<<) are not allowed in a policy; write the fields out");
    }

    /**
     * A file of /proc is regular and empty to a stat, and reading /proc/kmsg blocks until the
     * kernel logs (a hostile host's init waited for ever, and the read takes the kernel's messages
     * from syslog): refused before any open, by name, as the policy, as the .conf and through a
     * symbolic link (as a nccl_tuner.conf in the working directory would be).
     */
    @Test
    void aFileOfProcIsRefusedBeforeItIsRead(@TempDir Path dir) throws Exception {
        String why = ": a file of the kernel's proc file system, not a policy file (reading one can block for ever:"
                + " /proc/kmsg does, and it takes the kernel's messages from their readers)";
        Path kmsg = Path.of("/proc/kmsg");
        refused(load("NCCL_TUNER_JAVA_POLICY", kmsg, dir), kmsg + why);
        refused(load("NCCL_TUNER_CONFIG_FILE", kmsg, dir), kmsg + why);
        Path status = Path.of("/proc/self/status"); // readable, never blocks: refused all the same
        refused(load("NCCL_TUNER_JAVA_POLICY", status, dir), status + why);
        Path link = dir.resolve("nccl_tuner.conf");
        Files.createSymbolicLink(link, kmsg);
        refused(load("NCCL_TUNER_CONFIG_FILE", link, dir), link + why);
    }
}
