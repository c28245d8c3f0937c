package io.nccltuner.engine;

import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nccltuner.bindings.NcclTunerAbi;
import io.nccltuner.policy.Mode;
import io.nccltuner.policy.Policy;
import io.nccltuner.policy.PolicyLoader;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class EngineTest {
    static final float U = -1f; // NCCL_ALGO_PROTO_IGNORE
    final Arena arena = Arena.ofConfined();
    final List<String> logged = new ArrayList<>();
    final TunerLog log = (l, level, m) -> logged.add((level == TunerLog.WARN ? "WARN " : "INFO ") + m);

    @AfterEach
    void close() {
        arena.close();
    }

    static Policy policy(String rules) throws Exception {
        return PolicyLoader.parse("t.yaml", """
        schema: nccl-tuner-java/v1
        name: t
        profiles:
          - name: two
            match: {nRanks: 2}
            rules:
        """ + rules.indent(6));
    }

    static final String RULES = """
      - collective: AllReduce
        bytes: {from: 1 MiB, to: 2 MiB}
        candidates:
          - {algorithm: PAT, protocol: SIMPLE}
          - {algorithm: NVLS, protocol: SIMPLE, channels: 16}
          - {algorithm: RING, protocol: LL, channels: 4}
          - {algorithm: TREE, protocol: LL128}
      - collective: AllGather
        bytes: {from: 0 B}
        numPipeOps: 1
        candidates:
          - {algorithm: RING, protocol: SIMPLE}
      - collective: AllGather
        bytes: {from: 0 B}
        numPipeOps: {min: 2}
        candidates:
          - {algorithm: RING, protocol: LL, channels: 2}
      """;

    MemorySegment table(int numAlgo, int numProto, float... values) {
        MemorySegment t = arena.allocate(JAVA_FLOAT, numAlgo * numProto);
        for (int i = 0; i < numAlgo * numProto; i++) {
            t.setAtIndex(JAVA_FLOAT, i, i < values.length ? values[i] : U);
        }
        return t;
    }

    MemorySegment channels() {
        MemorySegment c = arena.allocate(JAVA_INT);
        c.set(JAVA_INT, 0, 0);
        return c;
    }

    /** The init's note when a profile names chunk sizes under tuner v5 (Engine.versionNotes). */
    static final String CHUNK_NOTE = "candidates name chunkSize, which NCCL asks for from tuner v6 (2.30); under v5";

    static final io.nccltuner.policy.Signature V5_H200 =
            new io.nccltuner.policy.Signature(5, 0xabcL, 1, 2, 2, 22809, "NVIDIA H200", 9, 0);
    static final io.nccltuner.policy.Signature V6_H200 =
            new io.nccltuner.policy.Signature(6, 0xabcL, 1, 2, 2, 23003, "NVIDIA H200", 9, 0);

    /**
     * The note that NCCL asks for chunk sizes only from tuner v6 (2.30): said once under v5 for a
     * profile whose candidates name one, never for a profile whose candidates name none, nor under
     * v6. The engine reads it from the profile's table (issue 23 item 6: walking 4,960 rules'
     * candidates took 13 ms of the interpreted first init).
     */
    @Test
    void theChunkSizeNoteFollowsWhetherACandidateNamesOne() throws Exception {
        String chunkRule = """
          - collective: AllReduce
            bytes: {from: 1 MiB, to: 2 MiB}
            candidates:
              - {algorithm: RING, protocol: SIMPLE, chunkSize: 512 KiB}
          """;
        for (Mode m : new Mode[] {Mode.ENFORCE, Mode.SHADOW, Mode.OFF}) {
            logged.clear();
            Engine withChunk = new Engine(policy(chunkRule), m, log, null);
            withChunk.init(2, 1, MemorySegment.NULL, V5_H200, MemorySegment.NULL);
            withChunk.init(2, 1, MemorySegment.NULL, V5_H200, MemorySegment.NULL);
            assertEquals(
                    1,
                    logged.stream().filter(l -> l.contains(CHUNK_NOTE)).count(),
                    m + "\n" + String.join("\n", logged));
            logged.clear();
            new Engine(policy(RULES), m, log, null).init(2, 1, MemorySegment.NULL, V5_H200, MemorySegment.NULL);
            assertTrue(
                    logged.stream().noneMatch(l -> l.contains("candidates name chunkSize")),
                    m + "\n" + String.join("\n", logged));
            logged.clear();
            new Engine(policy(chunkRule), m, log, null).init(2, 1, MemorySegment.NULL, V6_H200, MemorySegment.NULL);
            assertTrue(
                    logged.stream().noneMatch(l -> l.contains("candidates name chunkSize")),
                    m + "\n" + String.join("\n", logged));
        }
    }

    /**
     * The chunk-size note is said once per profile and tuner version, in one engine: a first
     * communicator under v6 (nothing to say) does not keep it from the v5 communicator after it,
     * and a second v5 shape of the same profile (another nNodes) does not say it again.
     */
    @Test
    void theChunkSizeNoteIsSaidOncePerTunerVersion() throws Exception {
        String chunkRule = """
          - collective: AllReduce
            bytes: {from: 1 MiB, to: 2 MiB}
            candidates:
              - {algorithm: RING, protocol: SIMPLE}
              - {algorithm: TREE, protocol: SIMPLE, chunkSize: 256 KiB}
          """;
        logged.clear();
        Engine e = new Engine(policy(chunkRule), Mode.ENFORCE, log, null);
        e.init(2, 1, MemorySegment.NULL, V6_H200, MemorySegment.NULL);
        assertTrue(logged.stream().noneMatch(l -> l.contains("candidates name chunkSize")), String.join("\n", logged));
        e.init(2, 1, MemorySegment.NULL, V5_H200, MemorySegment.NULL);
        e.init(2, 2, MemorySegment.NULL, V5_H200, MemorySegment.NULL);
        assertEquals(1, logged.stream().filter(l -> l.contains(CHUNK_NOTE)).count(), String.join("\n", logged));
    }

    /**
     * Further inits of the same shape reuse what the first worked out (issue 23): their lines are
     * the first one's with their own commId, a new shape or canary fraction gets lines of its own,
     * and a profile skipped for its hardware is said again at each init.
     */
    @Test
    void furtherInitsLogAsTheFirstWithTheirOwnCommId() throws Exception {
        Policy p = PolicyLoader.parse("t.yaml", """
        schema: nccl-tuner-java/v1
        name: t
        profiles:
          - name: h100
            match: {nRanks: 2, gpu: H100}
            rules: []
          - name: two
            match: {nRanks: 2}
            rules:
        """ + RULES.indent(6));
        Engine e = new Engine(p, Mode.CANARY, log, null);
        io.nccltuner.policy.Signature v5 =
                new io.nccltuner.policy.Signature(5, 0xabcL, 1, 2, 2, 22809, "NVIDIA H200", 9, 0);
        e.init(2, 1, MemorySegment.NULL, v5, MemorySegment.NULL);
        List<String> first = List.copyOf(logged);
        logged.clear();
        e.init(
                2,
                1,
                MemorySegment.NULL,
                new io.nccltuner.policy.Signature(5, 0xdefL, 1, 2, 2, 22809, "NVIDIA H200", 9, 0),
                MemorySegment.NULL);
        assertEquals(
                first.stream()
                        .map(l -> l.replace("commId 0xabc", "commId 0xdef"))
                        .toList(),
                logged);
        assertTrue(first.stream().anyMatch(l -> l.contains("profile h100 skipped")), String.join("\n", first));
        assertTrue(
                first.stream()
                        .anyMatch(l -> l.contains("profile two mode canary fraction 0.1 ")
                                && l.endsWith("(nRanks=2 nNodes=1) commId 0xabc; " + v5.describe())),
                String.join("\n", first));
        logged.clear();
        e.init(2, 1, MemorySegment.NULL, io.nccltuner.policy.Signature.UNKNOWN, MemorySegment.NULL);
        e.init(2, 1, MemorySegment.NULL, io.nccltuner.policy.Signature.UNKNOWN, MemorySegment.NULL);
        assertEquals(logged.size() % 2, 0);
        assertEquals(logged.subList(0, logged.size() / 2), logged.subList(logged.size() / 2, logged.size()));
        assertTrue(logged.stream().noneMatch(l -> l.contains("commId")), String.join("\n", logged));
        logged.clear();
        e.canaryFraction(0.25);
        e.init(2, 1, MemorySegment.NULL, v5, MemorySegment.NULL);
        assertTrue(logged.stream().anyMatch(l -> l.contains("mode canary fraction 0.25 ")), String.join("\n", logged));
    }

    @Test
    void appliesFirstOfferedCandidate() throws Exception {
        Engine e = new Engine(policy(RULES), Mode.ENFORCE, log, null);
        long h = e.init(2, 1, MemorySegment.NULL);
        // 7 x 3 table: TREE row, RING row, then unavailable, NVLS row available, PAT unavailable.
        MemorySegment t = table(7, 3, 10, 11, 12, /*RING*/ 20, 21, 22, U, U, U, U, U, U, /*NVLS*/ 40, 41, 42);
        MemorySegment ch = channels();
        e.getCollInfo(h, 4, 1 << 20, 1, t, 7, 3, ch);
        // PAT/SIMPLE is -1: skipped; NVLS/SIMPLE (4*3+2) is offered: cost 0.0 and 16 channels.
        assertEquals(0f, t.getAtIndex(JAVA_FLOAT, 4 * 3 + 2));
        assertEquals(16, ch.get(JAVA_INT, 0));
        assertEquals(U, t.getAtIndex(JAVA_FLOAT, 6 * 3 + 2), "a -1 entry stays -1");
        assertEquals(10f, t.getAtIndex(JAVA_FLOAT, 0), "other entries untouched");
        assertEquals(4 * 3 + 2, Engine.ncclPick(t, 7, 3), "NCCL's strict minimum now picks NVLS/SIMPLE");
    }

    @Test
    void sixRowTablesBeforeNccl223SkipPat() throws Exception {
        Engine e = new Engine(policy(RULES), Mode.ENFORCE, log, null);
        long h = e.init(2, 1, MemorySegment.NULL);
        MemorySegment t = table(6, 3, 10, 11, 12, 20, 21, 22); // NVLS unavailable, no PAT row
        MemorySegment ch = channels();
        e.getCollInfo(h, 4, (1 << 20) + 5, 1, t, 6, 3, ch);
        assertEquals(0f, t.getAtIndex(JAVA_FLOAT, 3), "RING/LL: the first candidate inside 6 x 3 and offered");
        assertEquals(4, ch.get(JAVA_INT, 0));
        assertEquals(3, Engine.ncclPick(t, 6, 3));
    }

    @Test
    void numPipeOpsSelectsTheRule() throws Exception {
        Engine e = new Engine(policy(RULES), Mode.ENFORCE, log, null);
        long h = e.init(2, 2, MemorySegment.NULL);
        for (int pipe : new int[] {1, 4}) {
            MemorySegment t = table(7, 3, 10, 11, 12, 20, 21, 22);
            MemorySegment ch = channels();
            e.getCollInfo(h, 2, 4096, pipe, t, 7, 3, ch);
            assertEquals(pipe == 1 ? 5 : 3, Engine.ncclPick(t, 7, 3), "numPipeOps " + pipe);
            assertEquals(pipe == 1 ? 0 : 2, ch.get(JAVA_INT, 0));
        }
    }

    @Test
    void changesNothingWithoutRuleOrOffer() throws Exception {
        Engine e = new Engine(policy(RULES), Mode.ENFORCE, log, null);
        long h = e.init(2, 1, MemorySegment.NULL);
        float[] orig = {10, 11, 12, 20, 21, 22};
        for (long nBytes : new long[] {0, 1 << 19, 2 << 20, -1L}) {
            MemorySegment t = table(7, 3, orig);
            MemorySegment ch = channels();
            e.getCollInfo(h, 4, nBytes, 1, t, 7, 3, ch);
            assertEquals(0, ch.get(JAVA_INT, 0));
            for (int i = 0; i < orig.length; i++) {
                assertEquals(orig[i], t.getAtIndex(JAVA_FLOAT, i), "nBytes " + Long.toUnsignedString(nBytes));
            }
        }
        // A rule whose candidates are all unavailable: nothing changes.
        MemorySegment t = table(7, 3, 10, U, U, U, U, U);
        e.getCollInfo(h, 4, 1 << 20, 1, t, 7, 3, channels());
        assertEquals(10f, t.getAtIndex(JAVA_FLOAT, 0));
        // Point-to-point and unknown collectives are never tuned.
        for (int coll = 5; coll < 9; coll++) {
            MemorySegment t2 = table(7, 3, 10, 11, 12, 20, 21, 22);
            e.getCollInfo(h, coll, 1 << 20, 1, t2, 7, 3, channels());
            assertEquals(10f, t2.getAtIndex(JAVA_FLOAT, 0));
        }
    }

    @Test
    void forceThatAppliedToNoCallSaysSoAtDestroy() throws Exception {
        var forced = io.nccltuner.policy.ForcePolicy.parse("RING/LL128/8");
        Engine e = new Engine(io.nccltuner.policy.ForcePolicy.of(forced), Mode.ENFORCE, log, null);
        long h = e.init(2, 1, MemorySegment.NULL);
        for (int i = 0; i < 3; i++) {
            // RING/LL128 (index 1 * 3 + 1) is -1: NCCL never offers it
            e.getCollInfo(h, 4, 1 << 20, 1, table(7, 3, 10, 11, 12, 20, U, 22), 7, 3, channels());
        }
        assertEquals("summary profile force:RING/LL128/8 mode enforce: calls 3, rule hits 3, applied 0", e.destroy(h));
        assertEquals(
                "INFO force RING/LL128/8 applied to none of the 3 calls (NCCL offered it for none: its cost-table "
                        + "entry was -1 on every call), so NCCL's own pick ran instead",
                logged.getLast());
        // offered once: no such line
        logged.clear();
        long h2 = e.init(2, 1, MemorySegment.NULL);
        e.getCollInfo(h2, 4, 1 << 20, 1, table(7, 3, 10, 11, 12, 20, U, 22), 7, 3, channels());
        e.getCollInfo(h2, 4, 1 << 20, 1, table(7, 3, 10, 11, 12, 20, 21, 22), 7, 3, channels());
        assertEquals("summary profile force:RING/LL128/8 mode enforce: calls 2, rule hits 2, applied 1", e.destroy(h2));
        assertTrue(logged.stream().noneMatch(l -> l.contains("applied to none")), logged.toString());
    }

    @Test
    void shadowAndOffNeverWrite() throws Exception {
        for (Mode m : new Mode[] {Mode.SHADOW, Mode.OFF}) {
            Engine e = new Engine(policy(RULES), m, log, null);
            long h = e.init(2, 1, MemorySegment.NULL);
            MemorySegment t = table(7, 3, 10, 11, 12, 20, 21, 22);
            MemorySegment ch = channels();
            e.getCollInfo(h, 4, 1 << 20, 1, t, 7, 3, ch);
            assertEquals(20f, t.getAtIndex(JAVA_FLOAT, 3), m.toString());
            assertEquals(0, ch.get(JAVA_INT, 0));
            String summary = e.destroy(h);
            if (m == Mode.SHADOW) {
                assertEquals(
                        "summary profile two mode shadow: calls 1, rule hits 1, applied 0, disagreements 1 (AllReduce 1 MiB: 1)",
                        summary);
            } else {
                assertNull(summary);
            }
        }
    }

    @Test
    void handlesAreCheckedAndReusedSafely() throws Exception {
        Engine e = new Engine(policy(RULES), Mode.ENFORCE, log, null);
        long h1 = e.init(2, 1, MemorySegment.NULL);
        e.destroy(h1);
        long h2 = e.init(2, 1, MemorySegment.NULL);
        assertNotEquals(h1, h2, "a reused slot gets a new generation");
        MemorySegment t = table(7, 3, 10, 11, 12, 20, 21, 22);
        e.getCollInfo(h1, 4, 1 << 20, 1, t, 7, 3, channels());
        e.getCollInfo(0, 4, 1 << 20, 1, t, 7, 3, channels());
        e.getCollInfo(12345L << 32 | 999, 4, 1 << 20, 1, t, 7, 3, channels());
        assertEquals(20f, t.getAtIndex(JAVA_FLOAT, 3), "stale, zero and unknown handles change nothing");
        assertNull(e.destroy(h1), "destroy twice is ignored");
        assertNull(e.destroy(0));
        e.getCollInfo(h2, 4, 1 << 20, 1, t, 7, 3, channels());
        assertEquals(0f, t.getAtIndex(JAVA_FLOAT, 3));
    }

    @Test
    void initLogsPolicyProfileShaAndMode() throws Exception {
        Engine e = new Engine(policy(RULES), Mode.SHADOW, log, null);
        e.init(2, 8, MemorySegment.NULL);
        e.init(4, 1, MemorySegment.NULL);
        assertTrue(
                logged.get(0)
                        .matches(
                                "INFO policy t profile two mode shadow rules 3 sha256 [0-9a-f]{64} \\(nRanks=2 nNodes=8\\); "
                                        + "tuner v3, NCCL unknown, GPU unknown \\(cc unknown\\), nvlDomains unknown"),
                logged.get(0));
        assertEquals(
                "INFO policy t: no profile matches nRanks=4 nNodes=1; changing nothing for this communicator; "
                        + "tuner v3, NCCL unknown, GPU unknown (cc unknown), nvlDomains unknown",
                logged.get(1));
    }

    /** NCCL's loop starts from 3.6e9 us: a larger entry is never its pick, however alone. */
    @Test
    void ncclPickFollowsNcclsStartingMinimum() {
        assertEquals(-1, Engine.ncclPick(table(2, 3, 4e9f, U, U, U, U, U), 2, 3));
        assertEquals(4, Engine.ncclPick(table(2, 3, 4e9f, 5, 5, U, 3, 3), 2, 3), "first of equal minima");
    }

    /**
     * The selection compares bit patterns (one unsigned compare per entry, bench_driver: 3-4 ns per
     * shadow call less than two float compares); it must pick what NCCL's float loop picks
     * (src/enqueue.cc: {@code if (time >= 0 && time < minTime)}) for every value a table can hold:
     * -0.0 is >= 0 and is a pick, NaN, the infinities and negatives never are.
     */
    @Test
    void ncclPickTreatsSpecialValuesAsNcclsFloatLoop() {
        float nan = Float.NaN;
        float inf = Float.POSITIVE_INFINITY;
        assertEquals(1, Engine.ncclPick(table(1, 3, 5, -0.0f, 0f), 1, 3), "-0.0 is >= 0 and before +0.0");
        assertEquals(2, Engine.ncclPick(table(1, 3, nan, inf, 7), 1, 3));
        assertEquals(-1, Engine.ncclPick(table(1, 3, nan, inf, -inf), 1, 3));
        assertEquals(-1, Engine.ncclPick(table(1, 3, -2f, Engine.NCCL_START_MINIMUM, -0.5f), 1, 3));
        assertEquals(
                1,
                Engine.ncclPick(
                        table(1, 3, Engine.NCCL_START_MINIMUM, Math.nextDown(Engine.NCCL_START_MINIMUM), U), 1, 3));
        assertEquals(0, Engine.ncclPick(table(1, 3, Float.MIN_VALUE, Float.MIN_NORMAL, 0.5f), 1, 3), "a subnormal");
        // random tables over the values that matter, against NCCL's loop as written
        float[] values = {
            U, -2f, -0.0f, 0f, Float.MIN_VALUE, 1f, 1f, 2.5f, 3e9f, Engine.NCCL_START_MINIMUM, 4e9f, nan, inf, -inf
        };
        java.util.Random random = new java.util.Random(23);
        for (int round = 0; round < 20_000; round++) {
            int numAlgo = 1 + random.nextInt(7);
            int numProto = 1 + random.nextInt(3);
            float[] v = new float[numAlgo * numProto];
            for (int i = 0; i < v.length; i++) {
                v[i] = random.nextInt(4) == 0 ? random.nextFloat() * 100 : values[random.nextInt(values.length)];
            }
            int expected = -1;
            float minTime = 3600000000.0f;
            for (int i = 0; i < v.length; i++) {
                if (v[i] >= 0 && v[i] < minTime) {
                    minTime = v[i];
                    expected = i;
                }
            }
            assertEquals(
                    expected,
                    Engine.ncclPick(table(numAlgo, numProto, v), numAlgo, numProto),
                    java.util.Arrays.toString(v));
        }
    }

    @Test
    void failureWarnsOnce() throws Exception {
        Engine e = new Engine(policy(RULES), Mode.ENFORCE, log, null);
        for (int i = 0; i < 3; i++) {
            e.failed("getCollInfo", new IllegalStateException("x"), MemorySegment.NULL);
        }
        assertEquals(
                1,
                logged.stream()
                        .filter(l -> l.startsWith("WARN internal error in getCollInfo"))
                        .count());
    }

    /** The entry of algorithm a, protocol p in a numProto-wide table, NCCL's enums by name. */
    static long entry(int a, int p, int numProto) {
        return (long) a * numProto + p;
    }

    /**
     * A NaN cost is no offer (the engine takes an entry {@code >= 0}: not -1 and not NaN, as NCCL's
     * selection never picks NaN): NVLS/SIMPLE at NaN is passed over for RING/LL, the next
     * candidate, with its 4 channels, and the NaN stays.
     */
    @Test
    void aNanCostIsNotOffered() throws Exception {
        Engine e = new Engine(policy(RULES), Mode.ENFORCE, log, null);
        long h = e.init(2, 1, MemorySegment.NULL);
        int np = NcclTunerAbi.NCCL_NUM_PROTOCOLS();
        MemorySegment t = table(7, 3, 10, 11, 12, 20, 21, 22, U, U, U, U, U, U, 40, 41, 42);
        t.setAtIndex(JAVA_FLOAT, entry(NcclTunerAbi.NCCL_ALGO_NVLS(), NcclTunerAbi.NCCL_PROTO_SIMPLE(), np), Float.NaN);
        MemorySegment ch = channels();
        e.getCollInfo(h, NcclTunerAbi.ncclFuncAllReduce(), 1 << 20, 1, t, 7, 3, ch);
        assertEquals(
                0f, t.getAtIndex(JAVA_FLOAT, entry(NcclTunerAbi.NCCL_ALGO_RING(), NcclTunerAbi.NCCL_PROTO_LL(), np)));
        assertEquals(4, ch.get(JAVA_INT, 0));
        assertTrue(Float.isNaN(
                t.getAtIndex(JAVA_FLOAT, entry(NcclTunerAbi.NCCL_ALGO_NVLS(), NcclTunerAbi.NCCL_PROTO_SIMPLE(), np))));
    }

    /**
     * A candidate that names no channels leaves nChannels as the caller passed it: TREE/LL128 (the
     * first rule's last candidate, the others not offered) gets cost 0.0 and nChannels keeps 7.
     */
    @Test
    void aCandidateWithoutChannelsLeavesNChannelsAlone() throws Exception {
        Engine e = new Engine(policy(RULES), Mode.ENFORCE, log, null);
        long h = e.init(2, 1, MemorySegment.NULL);
        int np = NcclTunerAbi.NCCL_NUM_PROTOCOLS();
        MemorySegment t = table(7, 3, 10, 11, 12, U, 21, 22); // RING/LL, NVLS, PAT: -1
        MemorySegment ch = channels();
        ch.set(JAVA_INT, 0, 7);
        e.getCollInfo(h, NcclTunerAbi.ncclFuncAllReduce(), 1 << 20, 1, t, 7, 3, ch);
        assertEquals(
                0f,
                t.getAtIndex(JAVA_FLOAT, entry(NcclTunerAbi.NCCL_ALGO_TREE(), NcclTunerAbi.NCCL_PROTO_LL128(), np)));
        assertEquals(7, ch.get(JAVA_INT, 0), "nChannels written for a candidate without channels");
    }
}
