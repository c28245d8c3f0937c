package io.nccltuner.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nccltuner.policy.Mode;
import io.nccltuner.policy.Policy;
import io.nccltuner.policy.PolicyLoader;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Compiled form 4 (e07682f) with forms whose trailer matches (the CRC-32C recomputed after an
 * edit), so that each check stands on its own: the format version, and the plugin's start taking
 * the stored table.
 */
class CompiledPolicyStoredTest {
    /** The trailer recomputed over the edited bytes, as a writer of its own would. */
    private static void recomputeTrailer(byte[] form) {
        CRC32C crc = new CRC32C();
        crc.update(form, 0, form.length - Integer.BYTES);
        ByteBuffer.wrap(form).putInt(form.length - Integer.BYTES, (int) crc.getValue());
    }

    /**
     * A form of another format version is not read even when its trailer matches: format 3 held no
     * tables, and a later one may hold them otherwise; the YAML is parsed and whyNotUsed says why.
     */
    @Test
    void aFormOfAnotherVersionIsNotReadEvenWithAMatchingTrailer(@TempDir Path tmp) throws Exception {
        Path yaml = CompiledPolicyTest.copy("h200-2rank.yaml", tmp);
        Path bin = CompiledPolicy.write(yaml);
        byte[] good = Files.readAllBytes(bin);
        byte[] key = CompiledPolicy.key(yaml);
        assertNotNull(CompiledPolicy.decode(good, key, yaml));
        for (int version : new int[] {CompiledPolicy.VERSION - 1, CompiledPolicy.VERSION + 1}) {
            byte[] other = good.clone();
            ByteBuffer.wrap(other).putInt(Integer.BYTES, version); // after the int magic
            recomputeTrailer(other);
            assertNull(CompiledPolicy.decode(other, key, yaml), "version " + version);
            Files.write(bin, other);
            assertEquals(PolicyLoader.load(yaml), CompiledPolicy.load(yaml));
            assertEquals(
                    "h200-2rank.yaml.compiled is of another format version (an older or newer nccl-tuner-java wrote it)",
                    CompiledPolicy.whyNotUsed(yaml));
        }
    }

    /**
     * The engine takes a decoded profile's stored table (CompiledPolicy.tableFor), not one compiled
     * again: a form whose stored sha256 was edited (trailer recomputed; DecisionTable.stored does not
     * hash the arrays again, which is what storing them saves) shows that sha256 in the init line.
     */
    @Test
    void theEngineTakesTheStoredTableOfADecodedProfile(@TempDir Path tmp) throws Exception {
        Path yaml = CompiledPolicyTest.copy("h200-2rank.yaml", tmp);
        Path bin = CompiledPolicy.write(yaml);
        byte[] form = Files.readAllBytes(bin);
        Policy fromYaml = PolicyLoader.load(yaml);
        String compiled = DecisionTable.compile(fromYaml.profiles().get(0)).sha256();
        byte[] sha = HexFormat.of().parseHex(compiled);
        int at = -1;
        for (int i = 0; i + sha.length <= form.length && at < 0; i++) {
            if (java.util.Arrays.equals(form, i, i + sha.length, sha, 0, sha.length)) {
                at = i;
            }
        }
        assertTrue(at > 0, "the stored sha256 is in the form");
        form[at] ^= 0x01;
        recomputeTrailer(form);
        Files.write(bin, form);
        Policy loaded = CompiledPolicy.load(yaml);
        String stored = CompiledPolicy.tableFor(loaded.profiles().get(0)).sha256();
        assertEquals(compiled.substring(2), stored.substring(2));
        assertTrue(!compiled.equals(stored), "the form's sha256 was edited");
        List<String> logged = new ArrayList<>();
        Engine e = new Engine(loaded, Mode.ENFORCE, (l, level, m) -> logged.add(m), null);
        e.init(2, 2, MemorySegment.NULL);
        assertTrue(logged.get(0).contains(" sha256 " + stored + " "), logged.get(0));
    }

    /**
     * A candidate's chunk field is 1 + an index into the chunk sizes (0: NCCL's): the stored table
     * takes the last index there is and refuses one past it, which a lookup would follow out of the
     * array.
     */
    @Test
    void aChunkIndexPastTheChunkSizesIsRefused() throws Exception {
        Policy p = PolicyLoader.parse("every.yaml", CompiledPolicyTest.EVERY_FIELD);
        DecisionTable t = DecisionTable.compile(p.profiles().get(0));
        int n = t.chunkSizes().length;
        assertEquals(2, n, "512 KiB and 131072");
        int k = DecisionTable.FIRST_CANDIDATE; // the first rule's first candidate
        for (int chunk = 0; chunk <= n + 2; chunk++) {
            int[] rules = t.rules.clone();
            rules[k] = (rules[k] & 0x00ffffff) | (chunk << 24);
            assertEquals(chunk, PackedCandidate.chunk(rules[k]));
            DecisionTable s = DecisionTable.stored(t.head, t.chains, rules, t.chunkSizes(), t.ruleCount(), t.sha256());
            if (chunk <= n) {
                assertNotNull(s, "chunk " + chunk + " of " + n);
            } else {
                assertNull(s, "chunk " + chunk + " of " + n);
            }
        }
    }

    /** A rule's regBuff is 0 (any), 1 (false) or 2 (true): another value in a stored record is refused. */
    @Test
    void aRegBuffOutsideItsThreeValuesIsRefused() throws Exception {
        Policy p = PolicyLoader.parse("every.yaml", CompiledPolicyTest.EVERY_FIELD);
        DecisionTable t = DecisionTable.compile(p.profiles().get(0));
        for (int regBuff = -2; regBuff <= 4; regBuff++) {
            int[] rules = t.rules.clone();
            rules[DecisionTable.REG_BUFF] = regBuff; // the first rule's
            DecisionTable s = DecisionTable.stored(t.head, t.chains, rules, t.chunkSizes(), t.ruleCount(), t.sha256());
            if (regBuff >= 0 && regBuff <= 2) {
                assertNotNull(s, "regBuff " + regBuff);
            } else {
                assertNull(s, "regBuff " + regBuff);
            }
        }
    }
}
