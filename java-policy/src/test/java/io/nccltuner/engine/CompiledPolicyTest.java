package io.nccltuner.engine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nccltuner.policy.Policy;
import io.nccltuner.policy.PolicyException;
import io.nccltuner.policy.PolicyLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class CompiledPolicyTest {
    static Path repo(String path) {
        return Path.of(System.getProperty("nccltj.repo", "..")).resolve(path);
    }

    /** A copy of a repository policy in a temporary folder (tests never write beside the repo's). */
    static Path copy(String name, Path tmp) throws Exception {
        Path yaml = tmp.resolve(name);
        Files.copy(repo("policies/" + name), yaml);
        return yaml;
    }

    @ParameterizedTest
    @ValueSource(strings = {"h200-2rank.yaml", "channel-override.yaml", "h200-2rank-measured.yaml"})
    void theBinaryFormHoldsThePolicyTheYamlGives(String name, @TempDir Path tmp) throws Exception {
        Path yaml = copy(name, tmp);
        Policy fromYaml = PolicyLoader.load(yaml);
        Path bin = CompiledPolicy.write(yaml);
        assertEquals(tmp.resolve(name + ".compiled"), bin);
        Policy decoded = CompiledPolicy.decode(Files.readAllBytes(bin), CompiledPolicy.key(yaml), yaml);
        assertNotNull(decoded, "the file written is read back");
        assertEquals(fromYaml, decoded);
        assertEquals(fromYaml, CompiledPolicy.load(yaml));
        // the same compiled table, so the same sha256 in the INFO line on every rank
        for (int i = 0; i < fromYaml.profiles().size(); i++) {
            assertEquals(
                    DecisionTable.compile(fromYaml.profiles().get(i)).sha256(),
                    DecisionTable.compile(decoded.profiles().get(i)).sha256());
        }
    }

    /**
     * Format 4 stores each profile's compiled table: the plugin's start takes it instead of
     * compiling (and hashing) the profile again, and it is the table the YAML gives, sha256 included.
     */
    @ParameterizedTest
    @ValueSource(strings = {"h200-2rank.yaml", "channel-override.yaml", "h200-2rank-measured.yaml"})
    void theStartTakesTheStoredTableWhichIsTheCompiledOne(String name, @TempDir Path tmp) throws Exception {
        Path yaml = copy(name, tmp);
        CompiledPolicy.write(yaml);
        Policy loaded = CompiledPolicy.load(yaml);
        Policy fromYaml = PolicyLoader.load(yaml);
        for (int i = 0; i < loaded.profiles().size(); i++) {
            Policy.Profile p = loaded.profiles().get(i);
            DecisionTable stored = CompiledPolicy.tableFor(p);
            assertTrue(stored == CompiledPolicy.tableFor(p), "the stored table, not one compiled at each call");
            DecisionTable compiled = DecisionTable.compile(fromYaml.profiles().get(i));
            assertTrue(stored.sameAs(compiled), p.name());
            assertEquals(compiled.sha256(), stored.sha256());
        }
        // a profile of a policy parsed from YAML (not decoded) is compiled on the spot
        Policy.Profile parsed = fromYaml.profiles().get(0);
        assertFalse(CompiledPolicy.tableFor(parsed) == CompiledPolicy.tableFor(parsed));
    }

    /**
     * A stored table is trusted as DecisionTable.compile's output: a change of that output (its
     * arrays or sha256) must come with a new {@link CompiledPolicy#VERSION}, else a form written by
     * the previous engine would give this one another table than its YAML. This pins the sha256 of
     * the shipped policy's table (the INFO line's, which docs/policy-format.md lets anyone recompute).
     */
    @Test
    void aChangedTableCompilationNeedsANewFormatVersion() throws Exception {
        Policy p = PolicyLoader.load(repo("policies/h200-2rank.yaml"));
        assertEquals(
                4,
                CompiledPolicy.VERSION,
                "the format version changed: update the sha256 below only if compile's output did change");
        assertEquals(
                "50e87163f1f000d756d7053d8761e7ff02c3af2103a1cbb75dcc6d3d0a5e341c",
                DecisionTable.compile(p.profiles().get(0)).sha256(),
                "DecisionTable.compile's output changed: raise CompiledPolicy.VERSION (and this test)");
    }

    /**
     * A stored table is checked so that no lookup leaves its arrays, even for bytes this code did
     * not write: every single-int change of a real table's arrays is refused, or gives a table whose
     * every lookup (each collective, bucket, numPipeOps 1..8, regBuff -1..1, chunk sizes) stays in bounds.
     */
    @Test
    void aStoredTableThatWouldSendALookupOutOfItsArraysIsRefused() throws Exception {
        Policy p = PolicyLoader.load(repo("policies/h200-2rank-measured.yaml"));
        DecisionTable t = DecisionTable.compile(p.profiles().get(0));
        assertNotNull(DecisionTable.stored(
                t.head.clone(), t.chains.clone(), t.rules.clone(), t.chunkSizes(), t.ruleCount(), t.sha256()));
        java.util.Random random = new java.util.Random(4);
        int[] values = {
            -2,
            -1,
            0,
            1,
            3,
            7,
            8,
            9,
            255,
            256,
            1 << 16,
            65 << 16,
            1 << 24,
            2 << 24,
            Integer.MAX_VALUE,
            Integer.MIN_VALUE
        };
        int refused = 0;
        for (int round = 0; round < 3000; round++) {
            int[][] arrays = {t.head.clone(), t.chains.clone(), t.rules.clone()};
            int[] a = arrays[random.nextInt(3)];
            if (a.length == 0) {
                continue;
            }
            int at = random.nextInt(a.length);
            a[at] = random.nextBoolean() ? values[random.nextInt(values.length)] : a[at] + random.nextInt(17) - 8;
            DecisionTable s =
                    DecisionTable.stored(arrays[0], arrays[1], arrays[2], t.chunkSizes(), t.ruleCount(), t.sha256());
            if (s == null) {
                refused++;
                continue;
            }
            for (int coll = 0; coll < io.nccltuner.policy.Collective.COUNT; coll++) {
                for (int bucket = 0; bucket < io.nccltuner.policy.SizeGrid.BUCKETS; bucket++) {
                    for (int pipe = 1; pipe <= 8; pipe++) {
                        for (int regBuff = -1; regBuff <= 1; regBuff++) {
                            int r = s.findInBucket(coll, bucket, pipe, regBuff);
                            if (r >= 0) {
                                int n = s.rules[r + DecisionTable.CANDIDATE_COUNT];
                                assertTrue(n >= 1 && r + DecisionTable.FIRST_CANDIDATE + n <= s.rules.length);
                                assertTrue(PackedCandidate.channels(s.rules[r + DecisionTable.FIRST_CANDIDATE])
                                        <= PolicyLoader.MAX_CHANNELS);
                            }
                        }
                    }
                    s.chunkSize(coll, bucket, 1, 2);
                }
            }
        }
        assertTrue(refused > 500, "refused " + refused + " of 3000 changes");
        // a run longer than a bucket may hold (the hostile host's 1.5M-offset run: 4.4 ms a call)
        int[] longChains = new int[1_000_001];
        java.util.Arrays.fill(longChains, 0);
        longChains[longChains.length - 1] = -1;
        int[] pointAtIt = t.head.clone();
        pointAtIt[0] = 0;
        assertNull(DecisionTable.stored(pointAtIt, longChains, t.rules, t.chunkSizes(), t.ruleCount(), t.sha256()));
        int[] nineRules = {0, 0, 0, 0, 0, 0, 0, 0, 0, -1};
        assertNull(DecisionTable.stored(pointAtIt, nineRules, t.rules, t.chunkSizes(), t.ruleCount(), t.sha256()));
        int[] eightRules = {0, 0, 0, 0, 0, 0, 0, 0, -1};
        int[] onlyIt = new int[t.head.length];
        java.util.Arrays.fill(onlyIt, -1);
        onlyIt[0] = 0;
        assertNotNull(DecisionTable.stored(onlyIt, eightRules, t.rules, t.chunkSizes(), t.ruleCount(), t.sha256()));
        // lengths that do not fit
        assertNull(DecisionTable.stored(new int[3], t.chains, t.rules, t.chunkSizes(), t.ruleCount(), t.sha256()));
        assertNull(DecisionTable.stored(t.head, t.chains, t.rules, t.chunkSizes(), t.ruleCount() + 1, t.sha256()));
        assertNull(DecisionTable.stored(t.head, t.chains, t.rules, new long[] {-1}, t.ruleCount(), t.sha256()));
        assertNull(DecisionTable.stored(t.head, t.chains, t.rules, t.chunkSizes(), t.ruleCount(), "00"));
    }

    /**
     * The densest bucket a valid policy may have, four regBuff: false and four regBuff: true rules
     * told apart by numPipeOps (the loader counts the two apart), compiles to a run of 8 and its
     * form is written and read (the oracle helper found forms of such policies refused when runs
     * were limited to 4).
     */
    @Test
    void theDensestBucketTheLoaderAllowsHasABinaryForm(@TempDir Path tmp) throws Exception {
        StringBuilder rules = new StringBuilder();
        for (String reg : new String[] {"false", "true"}) {
            for (int k = 0; k < 4; k++) {
                rules.append("      - {collective: AllReduce, bytes: {from: 1 MiB, to: 2 MiB}, numPipeOps: ")
                        .append(k + 1)
                        .append(", regBuff: ")
                        .append(reg)
                        .append(", candidates: [{algorithm: RING, protocol: SIMPLE}]}\n");
            }
        }
        Path yaml = tmp.resolve("dense.yaml");
        Files.writeString(yaml, """
                schema: nccl-tuner-java/v1
                name: dense
                mode: enforce
                profiles:
                  - name: p
                    match: {nRanks: 2, nNodes: 1}
                    rules:
                """ + rules);
        Policy p = PolicyLoader.load(yaml);
        CompiledPolicy.write(yaml);
        assertTrue(CompiledPolicy.isCurrent(yaml), "the form is read back");
        DecisionTable stored =
                CompiledPolicy.tableFor(CompiledPolicy.load(yaml).profiles().get(0));
        assertTrue(stored.sameAs(DecisionTable.compile(p.profiles().get(0))));
    }

    /**
     * A form whose stored table is inconsistent, but whose trailer matches (written with a
     * recomputed CRC), is not read: the plugin parses the YAML.
     */
    @Test
    void aFormWithAnInconsistentStoredTableIsNotRead(@TempDir Path tmp) throws Exception {
        Path yaml = copy("h200-2rank.yaml", tmp);
        Path bin = CompiledPolicy.write(yaml);
        byte[] good = Files.readAllBytes(bin);
        byte[] key = CompiledPolicy.key(yaml);
        Policy p = PolicyLoader.load(yaml);
        DecisionTable t = DecisionTable.compile(p.profiles().get(0));
        // the first profile's head array starts with its length, Collective.COUNT * SizeGrid.BUCKETS
        byte[] headLength =
                java.nio.ByteBuffer.allocate(4).putInt(t.head.length).array();
        int at = indexOf(good, headLength);
        assertTrue(at > 0);
        byte[] bad = good.clone();
        java.nio.ByteBuffer.wrap(bad).putInt(at + 4, t.chains.length + 5); // head[0] beyond chains
        java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
        crc.update(bad, 0, bad.length - 4);
        java.nio.ByteBuffer.wrap(bad).putInt(bad.length - 4, (int) crc.getValue());
        assertNull(CompiledPolicy.decode(bad, key, yaml));
        assertNotNull(CompiledPolicy.decode(good, key, yaml));
        Files.write(bin, bad);
        assertEquals(p, CompiledPolicy.load(yaml));
        assertEquals("h200-2rank.yaml.compiled is damaged", CompiledPolicy.whyNotUsed(yaml));
    }

    private static int indexOf(byte[] data, byte[] what) {
        outer:
        for (int i = 0; i + what.length <= data.length; i++) {
            for (int k = 0; k < what.length; k++) {
                if (data[i + k] != what[k]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }

    /** Every field of the format: hardware match, constants, regBuff, chunkSize, NaN regrets. */
    static final String EVERY_FIELD = """
            schema: nccl-tuner-java/v1
            name: every-field
            mode: shadow
            description: all of docs/policy-format.md
            profiles:
              - name: hw
                match:
                  nRanks: {min: 2, max: 8}
                  nNodes: any
                  nvlDomain: {nNvlDomains: 1, minRanksPerNvlDomain: {min: 2}, maxRanksPerNvlDomain: 8}
                  ncclVersion: {min: 2.28.3, max: 2.30.7}
                  gpu: H200
                  computeCapability: {min: "9.0", max: "10.3"}
                constants:
                  baseLatencies.RING.LL: 7.5
                  llMaxBws.HOPPER.1NODE: 150
                rules:
                  - collective: AllReduce
                    bytes: {from: 4 KiB, to: 24 MiB}
                    numPipeOps: {min: 1, max: 4}
                    regBuff: true
                    ncclPick: {algorithm: RING, protocol: LL128}
                    ncclRegret: 0.21
                    candidates:
                      - {algorithm: RING, protocol: LL, channels: 4, regret: 0.0, chunkSize: 512 KiB}
                      - {algorithm: TREE, protocol: SIMPLE}
                  - collective: AllReduce
                    bytes: {from: 4 KiB, to: 24 MiB}
                    regBuff: false
                    candidates:
                      - {algorithm: NVLS, protocol: SIMPLE, chunkSize: 131072}
              - name: rest
                match: {gpu: H100}
                rules: []
            """;

    @Test
    void theBinaryFormHoldsEveryField(@TempDir Path tmp) throws Exception {
        Path yaml = tmp.resolve("every.yaml");
        Files.writeString(yaml, EVERY_FIELD);
        Policy fromYaml = PolicyLoader.load(yaml);
        Policy.Profile hw = fromYaml.profiles().get(0);
        assertEquals("H200", hw.hardware().gpu(), "the test policy names what it means to");
        assertEquals(2, hw.constants().size());
        assertEquals(Boolean.TRUE, hw.rules().get(0).regBuff());
        assertEquals(Boolean.FALSE, hw.rules().get(1).regBuff());
        assertEquals(512 * 1024, hw.rules().get(0).candidates().get(0).chunkSize());
        assertTrue(Double.isNaN(hw.rules().get(0).candidates().get(1).regret()));
        CompiledPolicy.write(yaml);
        Policy decoded = CompiledPolicy.load(yaml);
        assertEquals(fromYaml, decoded);
        assertEquals(
                DecisionTable.compile(hw).sha256(),
                DecisionTable.compile(decoded.profiles().get(0)).sha256());
    }

    /**
     * The reader hands out one object for equal candidates (its cache of the last 8 distinct
     * ones): candidates that differ from the one before in a single field each (algorithm,
     * protocol, channels, regret, chunk size), more than the cache holds, then each again, read
     * back as the YAML gives them, field for field.
     */
    @Test
    void candidatesThatDifferInOneFieldReadBackApart(@TempDir Path tmp) throws Exception {
        String[] variants = {
            "{algorithm: RING, protocol: LL, channels: 4, regret: 0.5, chunkSize: 512 KiB}",
            "{algorithm: TREE, protocol: LL, channels: 4, regret: 0.5, chunkSize: 512 KiB}",
            "{algorithm: TREE, protocol: SIMPLE, channels: 4, regret: 0.5, chunkSize: 512 KiB}",
            "{algorithm: TREE, protocol: SIMPLE, channels: 5, regret: 0.5, chunkSize: 512 KiB}",
            "{algorithm: TREE, protocol: SIMPLE, channels: 5, regret: 0.25, chunkSize: 512 KiB}",
            "{algorithm: TREE, protocol: SIMPLE, channels: 5, regret: 0.25, chunkSize: 256 KiB}",
            "{algorithm: TREE, protocol: SIMPLE, channels: 5, regret: 0.25}",
            "{algorithm: TREE, protocol: SIMPLE, regret: 0.25}",
            "{algorithm: NVLS, protocol: SIMPLE, regret: 0.25}",
            "{algorithm: NVLS, protocol: SIMPLE}",
        };
        StringBuilder y = new StringBuilder("""
                schema: nccl-tuner-java/v1
                name: one-field
                profiles:
                  - name: two
                    match: {nRanks: 2}
                    rules:
                """);
        long from = 1024;
        for (int round = 0; round < 2; round++) {
            for (String v : variants) {
                y.append("      - collective: AllReduce\n")
                        .append("        bytes: {from: ")
                        .append(from)
                        .append(", to: ")
                        .append(from * 2)
                        .append("}\n        candidates:\n          - ")
                        .append(v)
                        .append('\n');
                from *= 2;
            }
        }
        Path yaml = tmp.resolve("one-field.yaml");
        Files.writeString(yaml, y.toString());
        Policy fromYaml = PolicyLoader.load(yaml);
        CompiledPolicy.write(yaml);
        CompiledPolicy.Loaded loaded = CompiledPolicy.loadDescribed(yaml);
        assertTrue(loaded.compiled(), loaded.why());
        List<Policy.Rule> want = fromYaml.profiles().get(0).rules();
        List<Policy.Rule> got = loaded.policy().profiles().get(0).rules();
        assertEquals(2 * variants.length, got.size());
        for (int i = 0; i < want.size(); i++) {
            assertEquals(want.get(i).candidates(), got.get(i).candidates(), "rule " + i);
        }
        assertEquals(fromYaml, loaded.policy());
    }

    /**
     * The reader's cache of recent candidates keeps algorithm, protocol and channels apart, also
     * where one field's bits could stand in for another's (protocol id 1 with 4 channels and id 0
     * with 5 are both 5 in the low bits): every algorithm, protocol and channel count up to the
     * loader's largest (64, with its largest chunk size), read in an order that keeps such pairs
     * within the cache's 8 entries, reads back as written, candidate for candidate.
     */
    @Test
    void everyAlgorithmProtocolAndChannelCountReadsBackApart() {
        List<Policy.Candidate> all = new java.util.ArrayList<>();
        for (io.nccltuner.policy.Algorithm a : io.nccltuner.policy.Algorithm.values()) {
            for (int ch : new int[] {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 63, 64}) {
                for (io.nccltuner.policy.Protocol p : io.nccltuner.policy.Protocol.values()) {
                    long chunk = ch == PolicyLoader.MAX_CHANNELS ? PolicyLoader.MAX_CHUNK_SIZE : 1 << 20;
                    all.add(new Policy.Candidate(a, p, ch, 0.5, chunk));
                }
            }
        }
        List<Policy.Rule> rules = new java.util.ArrayList<>();
        for (int r = 0; r * PolicyLoader.MAX_CANDIDATES < all.size(); r++) {
            List<Policy.Candidate> cands = all.subList(
                    r * PolicyLoader.MAX_CANDIDATES, Math.min(all.size(), (r + 1) * PolicyLoader.MAX_CANDIDATES));
            int bit = r % 40;
            rules.add(new Policy.Rule(
                    io.nccltuner.policy.Collective.values()[r / 40],
                    1L << bit,
                    (1L << (bit + 1)) - 1,
                    Policy.Range.ANY,
                    null,
                    Double.NaN,
                    cands));
        }
        Policy.Profile profile =
                new Policy.Profile("all", Policy.Range.exactly(2), Policy.Range.ANY, rules, null, null);
        Path source = Path.of("all.yaml");
        Policy p = new Policy("all", io.nccltuner.policy.Mode.ENFORCE, "", List.of(profile), source);
        byte[] key = new byte[CompiledPolicy.KEY_BYTES];
        Policy decoded = CompiledPolicy.decode(CompiledPolicy.encode(p, key), key, source);
        assertNotNull(decoded, "the form is read");
        List<Policy.Rule> got = decoded.profiles().get(0).rules();
        for (int i = 0; i < rules.size(); i++) {
            assertEquals(rules.get(i).candidates(), got.get(i).candidates(), "rule " + i);
        }
        assertEquals(p, decoded);
    }

    /**
     * A rule's fields are checked where they are read, as the loader checks them, not only through
     * the stored table: a form whose rule bytes hold what the loader refuses while its table is
     * the valid one (written with a recomputed CRC) is not read. Each case changes one field of
     * the one rule: a channel count over {@link PolicyLoader#MAX_CHANNELS}, a chunk size over
     * {@link PolicyLoader#MAX_CHUNK_SIZE}, a numPipeOps range whose min is over its max, a regBuff
     * byte of 3, no candidate or one more than {@link PolicyLoader#MAX_CANDIDATES} (the candidate
     * count and the candidates' bytes).
     */
    @ParameterizedTest
    @ValueSource(strings = {"channels", "chunkSize", "numPipeOps", "regBuff", "noCandidate", "fiveCandidates"})
    void aRuleFieldTheLoaderWouldRefuseIsNotReadWhateverTheTableHolds(String field) {
        long chunk = 12345L * 4096;
        Policy.Candidate c = new Policy.Candidate(
                io.nccltuner.policy.Algorithm.RING, io.nccltuner.policy.Protocol.SIMPLE, 63, 0.375, chunk);
        Policy.Rule r = new Policy.Rule(
                io.nccltuner.policy.Collective.AllReduce,
                4096,
                8191,
                new Policy.Range(3, 5),
                null,
                Double.NaN,
                List.of(c),
                Boolean.TRUE);
        Policy.Profile profile =
                new Policy.Profile("one", Policy.Range.exactly(2), Policy.Range.ANY, List.of(r), null, null);
        Path source = Path.of("one.yaml");
        Policy p = new Policy("one", io.nccltuner.policy.Mode.ENFORCE, "", List.of(profile), source);
        byte[] key = new byte[CompiledPolicy.KEY_BYTES];
        byte[] good = CompiledPolicy.encode(p, key);
        assertEquals(p, CompiledPolicy.decode(good, key, source));
        byte[] bad = good.clone();
        java.nio.ByteBuffer b = java.nio.ByteBuffer.wrap(bad);
        // the rule as rule(DataOutputStream, Rule) wrote it: fromBytes, toBytes, numPipeOps, regBuff
        int rule = indexOf(
                good,
                java.nio.ByteBuffer.allocate(32)
                        .putLong(4096)
                        .putLong(8191)
                        .putLong(3)
                        .putLong(5)
                        .array());
        // its candidate: algorithm, protocol, channels, regret, chunk size
        int cand = indexOf(
                good,
                java.nio.ByteBuffer.allocate(22)
                        .put((byte) c.algorithm().id())
                        .put((byte) c.protocol().id())
                        .putInt(63)
                        .putDouble(0.375)
                        .putLong(chunk)
                        .array());
        assertTrue(rule > 0 && cand > rule, rule + " " + cand);
        switch (field) {
            case "channels" -> b.putInt(cand + 2, PolicyLoader.MAX_CHANNELS + 1);
            case "chunkSize" -> b.putLong(cand + 14, PolicyLoader.MAX_CHUNK_SIZE + 1);
            case "numPipeOps" -> b.putLong(rule + 16, 6);
            case "regBuff" -> b.put(rule + 32, (byte) 3);
            case "noCandidate", "fiveCandidates" -> {
                int n = field.equals("noCandidate") ? 0 : PolicyLoader.MAX_CANDIDATES + 1;
                java.io.ByteArrayOutputStream o = new java.io.ByteArrayOutputStream();
                o.write(good, 0, cand - 4);
                o.writeBytes(java.nio.ByteBuffer.allocate(4).putInt(n).array());
                for (int k = 0; k < n; k++) {
                    o.write(good, cand, 22);
                }
                o.write(good, cand + 22, good.length - cand - 22);
                bad = o.toByteArray();
                b = java.nio.ByteBuffer.wrap(bad);
            }
            default -> throw new AssertionError(field);
        }
        java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
        crc.update(bad, 0, bad.length - 4);
        b.putInt(bad.length - 4, (int) crc.getValue());
        assertNull(CompiledPolicy.decode(bad, key, source), field);
    }

    @Test
    void aFormOfTheFirstVersionIsNotRead(@TempDir Path tmp) throws Exception {
        // version 1 held no hardware match, constants, regBuff or chunkSize: a policy with any of
        // them read back as another policy. Such a file, left by an older bin/nccl-tuner-aot, is
        // not read: the YAML is parsed.
        Path yaml = tmp.resolve("every.yaml");
        Files.writeString(yaml, EVERY_FIELD);
        byte[] form = Files.readAllBytes(CompiledPolicy.write(yaml));
        form[7] = 1; // the int version, big-endian
        Files.write(CompiledPolicy.pathFor(yaml), form);
        assertNull(CompiledPolicy.decode(form, CompiledPolicy.key(yaml), yaml));
        assertEquals(PolicyLoader.load(yaml), CompiledPolicy.load(yaml));
    }

    @Test
    void anEditedYamlIsReadAgainNotTheStaleBinaryForm(@TempDir Path tmp) throws Exception {
        Path yaml = copy("h200-2rank.yaml", tmp);
        CompiledPolicy.write(yaml);
        String text = Files.readString(yaml);
        assertTrue(text.contains("name: h200-2rank-timesliced"), text.substring(0, 200));
        Files.writeString(yaml, text.replace("name: h200-2rank-timesliced", "name: edited"));
        Policy p = CompiledPolicy.load(yaml);
        assertEquals("edited", p.name());
        assertEquals(PolicyLoader.load(yaml), p);
    }

    @Test
    void anEditThatKeepsTheLengthChangesTheKey(@TempDir Path tmp) throws Exception {
        Path yaml = copy("h200-2rank.yaml", tmp);
        byte[] text = Files.readAllBytes(yaml);
        byte[] key = CompiledPolicy.key(yaml);
        assertEquals(CompiledPolicy.KEY_BYTES, key.length);
        // every byte changed in place (one bit, or swapped with its neighbour), as an editor would
        for (int i = 0; i < text.length; i++) {
            byte[] edited = text.clone();
            edited[i] ^= 1;
            assertFalse(
                    Arrays.equals(key, CompiledPolicy.key(new java.io.ByteArrayInputStream(edited))), "bit at " + i);
            if (i + 1 < text.length && text[i] != text[i + 1]) {
                edited = text.clone();
                edited[i] = text[i + 1];
                edited[i + 1] = text[i];
                assertFalse(
                        Arrays.equals(key, CompiledPolicy.key(new java.io.ByteArrayInputStream(edited))),
                        "swap at " + i);
            }
        }
        assertArrayEquals(key, CompiledPolicy.key(new java.io.ByteArrayInputStream(text)));
        // and the plugin then reads the edited YAML, not the binary form written before
        Policy before = PolicyLoader.load(yaml);
        CompiledPolicy.write(yaml);
        Files.writeString(yaml, Files.readString(yaml).replace("nRanks: 2,", "nRanks: 4,"));
        assertEquals(text.length, Files.size(yaml), "the same length");
        Policy after = CompiledPolicy.load(yaml);
        assertEquals(PolicyLoader.load(yaml), after);
        assertNotEquals(before, after);
    }

    @Test
    void aDamagedBinaryFormIsIgnored(@TempDir Path tmp) throws Exception {
        Path yaml = copy("h200-2rank.yaml", tmp);
        Path bin = CompiledPolicy.write(yaml);
        byte[] good = Files.readAllBytes(bin);
        byte[] key = CompiledPolicy.key(yaml);
        for (int cut : new int[] {0, 3, 40, good.length / 2, good.length - 1}) {
            assertNull(CompiledPolicy.decode(Arrays.copyOf(good, cut), key, yaml), "truncated to " + cut);
        }
        byte[] longer = Arrays.copyOf(good, good.length + 1);
        assertNull(CompiledPolicy.decode(longer, key, yaml), "trailing byte");
        byte[] otherVersion = good.clone();
        otherVersion[7] = (byte) (CompiledPolicy.VERSION + 1);
        assertNull(CompiledPolicy.decode(otherVersion, key, yaml), "another format version");
        byte[] otherKey = key.clone();
        otherKey[0] ^= 1;
        assertNull(CompiledPolicy.decode(good, otherKey, yaml), "keyed by another YAML");
        // and load() then parses the YAML
        Files.write(bin, Arrays.copyOf(good, good.length / 2));
        assertEquals(PolicyLoader.load(yaml), CompiledPolicy.load(yaml));
    }

    @Test
    void aBinaryFormOthersCanWriteIsIgnored(@TempDir Path tmp) throws Exception {
        Path yaml = copy("h200-2rank.yaml", tmp);
        Path bin = CompiledPolicy.write(yaml);
        assertTrue(CompiledPolicy.trusted(bin, yaml));
        // a binary form claiming this YAML but naming another policy: used only while trusted
        Policy p = PolicyLoader.load(yaml);
        Policy other = p.withName("planted");
        Files.write(bin, CompiledPolicy.encode(other, CompiledPolicy.key(yaml)));
        assertEquals("planted", CompiledPolicy.load(yaml).name());
        Files.setPosixFilePermissions(bin, java.nio.file.attribute.PosixFilePermissions.fromString("rw-rw-rw-"));
        assertFalse(CompiledPolicy.trusted(bin, yaml));
        assertEquals(p, CompiledPolicy.load(yaml), "world-writable: the YAML is parsed");
    }

    @Test
    void aChannelCountPolicyLoaderWouldRefuseIsNotRead(@TempDir Path tmp) throws Exception {
        Path yaml = copy("channel-override.yaml", tmp);
        Policy p = PolicyLoader.load(yaml);
        Policy.Rule r = p.profiles().get(0).rules().get(0);
        Policy.Candidate c = r.candidates().get(0);
        Policy.Rule bad =
                r.withCandidates(java.util.List.of(new Policy.Candidate(c.algorithm(), c.protocol(), 65, c.regret())));
        Policy tampered = p.withProfiles(java.util.List.of(p.profiles().get(0).withRules(java.util.List.of(bad))));
        byte[] key = CompiledPolicy.key(yaml);
        assertNull(CompiledPolicy.decode(CompiledPolicy.encode(tampered, key), key, yaml));
        assertNotNull(CompiledPolicy.decode(CompiledPolicy.encode(p, key), key, yaml));
    }

    @Test
    void anInvalidYamlIsRefusedAndNothingIsWritten(@TempDir Path tmp) throws Exception {
        Path yaml = tmp.resolve("bad.yaml");
        Files.writeString(yaml, "schema: nccl-tuner-java/v1\nname: x\nprofiles: 3\n");
        assertThrows(PolicyException.class, () -> CompiledPolicy.write(yaml));
        assertTrue(Files.notExists(CompiledPolicy.pathFor(yaml)));
        PolicyException e = assertThrows(PolicyException.class, () -> CompiledPolicy.load(yaml));
        assertEquals(
                assertThrows(PolicyException.class, () -> PolicyLoader.load(yaml))
                        .getMessage(),
                e.getMessage());
    }

    @Test
    void encodingDependsOnTheKey() throws Exception {
        Policy p = PolicyLoader.load(repo("policies/h200-2rank.yaml"));
        byte[] a = CompiledPolicy.encode(p, new byte[CompiledPolicy.KEY_BYTES]);
        byte[] k = new byte[CompiledPolicy.KEY_BYTES];
        k[CompiledPolicy.KEY_BYTES - 1] = 1;
        byte[] b = CompiledPolicy.encode(p, k);
        assertEquals(a.length, b.length);
        assertNotEquals(Arrays.toString(a), Arrays.toString(b));
        // the body between the key and the trailer (a CRC-32C over the key too) is the same
        assertArrayEquals(
                Arrays.copyOfRange(a, 8 + CompiledPolicy.KEY_BYTES, a.length - Integer.BYTES),
                Arrays.copyOfRange(b, 8 + CompiledPolicy.KEY_BYTES, b.length - Integer.BYTES));
        assertNotEquals(
                Arrays.toString(Arrays.copyOfRange(a, a.length - Integer.BYTES, a.length)),
                Arrays.toString(Arrays.copyOfRange(b, b.length - Integer.BYTES, b.length)));
    }
}
