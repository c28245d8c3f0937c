package io.nccltuner.ffm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nccltuner.engine.CompiledPolicy;
import io.nccltuner.engine.TunerLog;
import io.nccltuner.policy.PolicyLoader;
import java.io.DataOutputStream;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 23 item 5: the plugin's init notice says whether a YAML policy was read from its compiled
 * form or parsed, and for a parsed one why its {@code FILE.compiled} was not used (a parsed YAML
 * starts slower, and a user who edited the YAML or copied it without its form should see why).
 */
@Timeout(60)
class PluginConfigPolicyFormTest {
    private static final TunerLog QUIET = (logger, level, message) -> {};

    private static final String YAML = """
            schema: nccl-tuner-java/v1
            name: form-note
            mode: enforce
            profiles:
              - name: any
                rules:
                  - collective: AllReduce
                    bytes: {from: 0 B, to: 64 KiB}
                    candidates:
                      - {algorithm: RING, protocol: LL}
            """;

    private static String info(Path yaml, Path dir) {
        return PluginConfig.fromEnvironment(Map.of("NCCL_TUNER_JAVA_POLICY", yaml.toString()), QUIET, dir)
                .info();
    }

    @Test
    void theNoticeSaysWhichFormWasReadAndWhyNotTheCompiledOne(@TempDir Path dir) throws Exception {
        Path yaml = dir.resolve("p.yaml");
        Files.writeString(yaml, YAML);
        assertTrue(
                info(yaml, dir).contains("policy " + yaml + " parsed from its YAML (no p.yaml.compiled beside it; "),
                info(yaml, dir));

        Path bin = CompiledPolicy.write(yaml);
        String compiled = info(yaml, dir);
        assertTrue(compiled.contains("policy " + yaml + " read from its compiled form"), compiled);
        assertFalse(compiled.contains("parsed from its YAML"), compiled);

        Files.writeString(yaml, YAML.replace("form-note", "form-edit"));
        String stale = info(yaml, dir);
        assertTrue(
                stale.contains("p.yaml.compiled is of another YAML (written before the YAML was last edited)"), stale);

        CompiledPolicy.write(yaml);
        Files.setPosixFilePermissions(bin, PosixFilePermissions.fromString("rw-rw-rw-"));
        String open = info(yaml, dir);
        assertTrue(open.contains("p.yaml.compiled is writable by others"), open);
        Files.setPosixFilePermissions(bin, PosixFilePermissions.fromString("rw-r--r--"));

        byte[] form = Files.readAllBytes(bin);
        ByteBuffer.wrap(form).putInt(4, ByteBuffer.wrap(form).getInt(4) + 1); // the format version
        Files.write(bin, form);
        assertTrue(info(yaml, dir).contains("p.yaml.compiled is of another format version"), info(yaml, dir));

        Files.write(bin, new byte[] {'N', 'o', 'p', 'e'});
        assertTrue(info(yaml, dir).contains("p.yaml.compiled is not a compiled policy"), info(yaml, dir));

        byte[] whole = Files.readAllBytes(CompiledPolicy.write(yaml));
        try (DataOutputStream out = new DataOutputStream(Files.newOutputStream(bin))) {
            out.write(whole, 0, whole.length - 3); // truncated inside the rules
        }
        assertTrue(info(yaml, dir).contains("p.yaml.compiled is damaged"), info(yaml, dir));

        Files.delete(bin);
        Files.createDirectory(bin);
        assertTrue(info(yaml, dir).contains("p.yaml.compiled is not a regular file"), info(yaml, dir));
    }

    /**
     * A hostile host flipped single bytes of a form: 40 of 249 flips decoded to another valid policy
     * with other decisions, on that rank alone. With the trailer, every flip of every byte either
     * leaves the form unread (the YAML is parsed) or, never, reads another policy.
     */
    @Test
    void aFlippedByteAnywhereInTheFormMeansTheYamlIsParsed(@TempDir Path dir) throws Exception {
        Path yaml = dir.resolve("p.yaml");
        Files.writeString(yaml, YAML.replace("mode: enforce", "mode: canary"));
        io.nccltuner.policy.Policy expected = PolicyLoader.load(yaml);
        Path bin = CompiledPolicy.write(yaml);
        byte[] whole = Files.readAllBytes(bin);
        assertTrue(CompiledPolicy.loadDescribed(yaml).compiled());
        for (int i = 0; i < whole.length; i++) {
            for (int bit : new int[] {0x01, 0x80}) {
                byte[] flipped = whole.clone();
                flipped[i] ^= (byte) bit;
                Files.write(bin, flipped);
                CompiledPolicy.Loaded l = CompiledPolicy.loadDescribed(yaml);
                assertFalse(l.compiled(), "byte " + i + " bit " + bit + " flipped, yet the form was read");
                assertEquals(expected, l.policy(), "byte " + i);
            }
        }
    }

    @Test
    void aFormLargerThanAnyPolicyIsNotRead(@TempDir Path dir) throws Exception {
        Path yaml = dir.resolve("p.yaml");
        Files.writeString(yaml, YAML);
        Path bin = CompiledPolicy.write(yaml);
        try (java.io.RandomAccessFile f = new java.io.RandomAccessFile(bin.toFile(), "rw")) {
            f.setLength(100L * 1024 * 1024); // sparse: no disk used
        }
        CompiledPolicy.Loaded l = CompiledPolicy.loadDescribed(yaml);
        assertFalse(l.compiled());
        assertEquals(PolicyLoader.load(yaml), l.policy());
        assertTrue(l.why().contains("p.yaml.compiled is larger than a compiled policy can be"), l.why());
    }

    /**
     * The tools take a YAML policy or NCCL's example-tuner CSV as a policy, so the plugin does too,
     * by the file's name: a CSV named by NCCL_TUNER_JAVA_POLICY was refused as malformed YAML and a
     * job ran untuned (the fifth newcomer walk), and the reverse for NCCL_TUNER_CONFIG_FILE.
     */
    @Test
    void eitherVariableReadsEitherFormatByItsName(@TempDir Path dir) throws Exception {
        Path csv = dir.resolve("nccl_tuner.conf");
        Files.writeString(csv, "allreduce,0,65535,ring,ll,-1,-1,-1\nallgather,0,65535,ring,simple,-1,-1,-1\n");
        PluginConfig c = PluginConfig.fromEnvironment(Map.of("NCCL_TUNER_JAVA_POLICY", csv.toString()), QUIET, dir);
        assertEquals(io.nccltuner.policy.Mode.ENFORCE, c.engine().mode(), c.info() + " / " + c.warning());
        assertEquals(2, c.engine().policy().profiles().getFirst().rules().size());
        assertTrue(c.info().contains("NCCL_TUNER_JAVA_POLICY=" + csv + " read as NCCL's example-tuner CSV"), c.info());

        Path yaml = dir.resolve("p.yaml");
        Files.writeString(yaml, YAML);
        PluginConfig y = PluginConfig.fromEnvironment(Map.of("NCCL_TUNER_CONFIG_FILE", yaml.toString()), QUIET, dir);
        assertEquals(PolicyLoader.load(yaml), y.engine().policy(), y.info() + " / " + y.warning());
        assertTrue(y.info().contains("NCCL_TUNER_CONFIG_FILE=" + yaml + " read as a YAML policy"), y.info());
    }

    @Test
    void loadDescribedReadsTheSamePolicyEitherWay(@TempDir Path dir) throws Exception {
        Path yaml = dir.resolve("p.yaml");
        Files.writeString(yaml, YAML);
        CompiledPolicy.Loaded parsed = CompiledPolicy.loadDescribed(yaml);
        assertFalse(parsed.compiled());
        CompiledPolicy.write(yaml);
        CompiledPolicy.Loaded compiled = CompiledPolicy.loadDescribed(yaml);
        assertTrue(compiled.compiled());
        assertEquals("", compiled.why());
        assertEquals(PolicyLoader.load(yaml), compiled.policy());
        assertEquals(parsed.policy(), compiled.policy());
    }
}
