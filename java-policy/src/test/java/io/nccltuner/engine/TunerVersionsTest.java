package io.nccltuner.engine;

import static java.lang.foreign.ValueLayout.JAVA_DOUBLE;
import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nccltuner.policy.Mode;
import io.nccltuner.policy.Policy;
import io.nccltuner.policy.PolicyException;
import io.nccltuner.policy.PolicyLoader;
import io.nccltuner.policy.Signature;
import io.nccltuner.policy.TunerConstant;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * What tuner v4..v6 add, through the engine directly: regBuff in the rule lookup, chunkSize for
 * getChunkSize, constants written at init, hardware matching; and the loader's view of them.
 * Expected values are written in the test (byte offsets from the struct's declared dimensions).
 */
class TunerVersionsTest {
    final Arena arena = Arena.ofConfined();
    final List<String> logged = new ArrayList<>();
    final TunerLog log = (l, level, m) -> logged.add(m);

    @AfterEach
    void close() {
        arena.close();
    }

    static final String HEAD = "schema: nccl-tuner-java/v1\nname: t\nprofiles:\n";

    static Policy parse(String profiles) throws PolicyException {
        return PolicyLoader.parse("t.yaml", HEAD + profiles);
    }

    /** A 7x3 table with every entry 10 us (all offered). */
    MemorySegment table() {
        MemorySegment t = arena.allocate(JAVA_FLOAT, 21);
        for (int i = 0; i < 21; i++) {
            t.setAtIndex(JAVA_FLOAT, i, 10f);
        }
        return t;
    }

    /** The entry the engine zeroed, as algorithm*3+protocol, or -1. */
    static int zeroed(MemorySegment t) {
        for (int i = 0; i < 21; i++) {
            if (t.getAtIndex(JAVA_FLOAT, i) == 0f) {
                return i;
            }
        }
        return -1;
    }

    static Signature sig(int version, int nvl, int nccl) {
        return new Signature(version, 0x1234abcdL, nvl, nvl < 0 ? -1 : 4, nvl < 0 ? -1 : 4, nccl, "", -1, -1);
    }

    static final String REGBUFF = """
        - name: p
          rules:
            - collective: AllReduce
              bytes: {from: 0 B, to: 1 MiB}
              regBuff: true
              candidates: [{algorithm: NVLS, protocol: SIMPLE}]
            - collective: AllReduce
              bytes: {from: 0 B, to: 1 MiB}
              regBuff: false
              candidates: [{algorithm: RING, protocol: LL}]
            - collective: AllReduce
              bytes: {from: 1 MiB}
              regBuff: any
              candidates: [{algorithm: TREE, protocol: SIMPLE}]
      """;

    @Test
    void regBuffJoinsTheLookup() throws Exception {
        Engine e = new Engine(parse(REGBUFF), Mode.ENFORCE, log, null);
        long h = e.init(2, 1, MemorySegment.NULL, sig(4, -1, -1), MemorySegment.NULL);
        MemorySegment ch = arena.allocate(JAVA_INT);
        int[][] cases = {{1, 4 * 3 + 2}, {0, 1 * 3 + 0}, {-1, -1}}; // NVLS/SIMPLE, RING/LL, nothing under v3
        for (int[] c : cases) {
            MemorySegment t = table();
            e.getCollInfo(h, 4, 4096, 1, t, 0L, 7, 3, c[0], ch, 0L);
            assertEquals(c[1], zeroed(t), "regBuff " + c[0]);
        }
        // a regBuff: any rule matches whatever NCCL passes, v3's unknown included
        for (int reg : new int[] {-1, 0, 1}) {
            MemorySegment t = table();
            e.getCollInfo(h, 4, 4L << 20, 1, t, 0L, 7, 3, reg, ch, 0L);
            assertEquals(0 * 3 + 2, zeroed(t));
        }
        // under v3 the engine says the regBuff rules cannot match
        logged.clear();
        e.init(2, 1, MemorySegment.NULL, sig(3, -1, -1), MemorySegment.NULL);
        assertEquals(
                1,
                logged.stream()
                        .filter(l -> l.equals("profile p: 2 rules name regBuff, which NCCL passes from "
                                + "tuner v4 (2.24); under v3 regBuff is unknown and they never match"))
                        .count(),
                logged.toString());
    }

    @Test
    void regBuffTrueAndFalseDoNotOverlapButAnyDoes() {
        PolicyException ex = assertThrows(PolicyException.class, () -> parse("""
          - name: p
            rules:
              - {collective: AllReduce, bytes: {from: 0 B, to: 1 MiB}, regBuff: true, candidates: [{algorithm: RING, protocol: LL}]}
              - {collective: AllReduce, bytes: {from: 0 B, to: 1 MiB}, candidates: [{algorithm: RING, protocol: LL}]}
        """));
        assertTrue(ex.getMessage().contains("overlaps rules[0]"), ex.getMessage());
        PolicyException bad = assertThrows(PolicyException.class, () -> parse("""
          - name: p
            rules:
              - {collective: AllReduce, bytes: {from: 0 B}, regBuff: maybe, candidates: [{algorithm: RING, protocol: LL}]}
        """));
        assertTrue(bad.getMessage().contains("regBuff: expected true, false or any, found 'maybe'"), bad.getMessage());
    }

    static final String CHUNK = """
        - name: p
          rules:
            - collective: AllGather
              bytes: {from: 64 KiB, to: 16 MiB}
              candidates:
                - {algorithm: RING, protocol: SIMPLE, chunkSize: 512 KiB}
                - {algorithm: RING, protocol: LL128, chunkSize: 131072}
                - {algorithm: TREE, protocol: SIMPLE}
      """;

    @Test
    void chunkSizeForTheCandidateNcclChose() throws Exception {
        for (Mode mode : new Mode[] {Mode.ENFORCE, Mode.SHADOW}) {
            Engine e = new Engine(parse(CHUNK), mode, log, null);
            long h = e.init(8, 1, MemorySegment.NULL, sig(6, 1, 23007), MemorySegment.NULL);
            MemorySegment size = arena.allocate(JAVA_LONG);
            long[][] cases = { // algo, proto, nBytes, expected (NCCL's 4096 when unchanged)
                {1, 2, 1 << 20, mode == Mode.ENFORCE ? 512 << 10 : 4096},
                {1, 1, 1 << 20, mode == Mode.ENFORCE ? 131072 : 4096},
                {0, 2, 1 << 20, 4096}, // a candidate without chunkSize
                {1, 0, 1 << 20, 4096}, // not a candidate
                {1, 2, 16 << 20, 4096}, // outside the rule's sizes
                {1, 2, 32 << 10, 4096}
            };
            for (long[] c : cases) {
                size.set(JAVA_LONG, 0, 4096);
                e.getChunkSize(h, 2, c[2], (int) c[0], (int) c[1], 8, size, 0L);
                assertEquals(c[3], size.get(JAVA_LONG, 0), mode + " " + java.util.Arrays.toString(c));
            }
        }
        PolicyException ex = assertThrows(PolicyException.class, () -> parse(CHUNK.replace("512 KiB", "0")));
        assertTrue(ex.getMessage().contains("chunkSize must be 1 .. 2147483647 bytes"), ex.getMessage());
    }

    @Test
    void handleSaysWhetherGetChunkSizeCanChangeAnything() throws Exception {
        // The shim skips the getChunkSize upcall for a handle without Engine.CHUNK_SIZES.
        long enforce = new Engine(parse(CHUNK), Mode.ENFORCE, log, null)
                .init(8, 1, MemorySegment.NULL, sig(6, 1, 23007), MemorySegment.NULL);
        long shadow = new Engine(parse(CHUNK), Mode.SHADOW, log, null)
                .init(8, 1, MemorySegment.NULL, sig(6, 1, 23007), MemorySegment.NULL);
        long noChunks = new Engine(
                        parse(CHUNK.replace(", chunkSize: 512 KiB", "").replace(", chunkSize: 131072", "")),
                        Mode.ENFORCE,
                        log,
                        null)
                .init(8, 1, MemorySegment.NULL, sig(6, 1, 23007), MemorySegment.NULL);
        assertEquals(Engine.CHUNK_SIZES, enforce & Engine.CHUNK_SIZES);
        assertEquals(0, shadow & Engine.CHUNK_SIZES);
        assertEquals(0, noChunks & Engine.CHUNK_SIZES);
        assertTrue(enforce > 0 && shadow > 0 && noChunks > 0, "handles stay positive");
    }

    static final String CONSTANTS = """
        - name: p
          constants:
            baseLatencies.RING.LL: 7.5
            hwLatencies.PCI.TREE.SIMPLE: 4.25
            perChMaxTreeBws.BLACKWELL.4NODES: 30
          rules: []
      """;

    @Test
    void constantsWrittenAtInitFromV5InEnforceOnly() throws Exception {
        // offsets from the struct's dimensions: baseLatencies[7][3], hwLatencies[3][7][3], then five [4][3]
        long ringLl = (1 * 3 + 0) * 8;
        long pciTreeSimple = (21 + (1 * 7 + 0) * 3 + 2) * 8;
        long treeBwBlackwell4 = (21 + 63 + 3 * 12 + 3 * 3 + 2) * 8;
        for (int version : new int[] {4, 5, 6}) {
            for (Mode mode : new Mode[] {Mode.ENFORCE, Mode.SHADOW}) {
                MemorySegment k = arena.allocate(TunerConstant.STRUCT_BYTES_V5, 8);
                k.fill((byte) 0);
                k.set(JAVA_DOUBLE, ringLl, 6.6);
                Engine e = new Engine(parse(CONSTANTS), mode, log, null);
                e.init(2, 2, MemorySegment.NULL, sig(version, 2, 22809), version >= 5 ? k : MemorySegment.NULL);
                boolean written = version >= 5 && mode == Mode.ENFORCE;
                assertEquals(written ? 7.5 : 6.6, k.get(JAVA_DOUBLE, ringLl));
                assertEquals(written ? 4.25 : 0, k.get(JAVA_DOUBLE, pciTreeSimple));
                assertEquals(written ? 30 : 0, k.get(JAVA_DOUBLE, treeBwBlackwell4));
                double sum = 0;
                for (long o = 0; o < TunerConstant.STRUCT_BYTES_V5; o += 8) {
                    sum += k.get(JAVA_DOUBLE, o);
                }
                assertEquals(written ? 7.5 + 4.25 + 30 : 6.6, sum, 1e-12, "nothing else written");
            }
        }
        assertTrue(
                logged.contains(
                        "profile p: set 3 constants: baseLatencies.RING.LL 6.6 -> 7.5 us, "
                                + "hwLatencies.PCI.TREE.SIMPLE 0.0 -> 4.25 us, perChMaxTreeBws.BLACKWELL.4NODES 0.0 -> 30.0 GB/s"),
                logged.toString());
        assertTrue(
                logged.contains("profile p: 3 constants not set: NCCL passes its model constants from tuner v5 (2.28); "
                        + "this NCCL uses v4"),
                logged.toString());
        // v5 without a struct (an offline replay; NCCL 2.28+ always passes one): said as it is, not "this NCCL uses v5"
        logged.clear();
        new Engine(parse(CONSTANTS), Mode.ENFORCE, log, null)
                .init(2, 2, MemorySegment.NULL, sig(5, 2, 22809), MemorySegment.NULL);
        assertTrue(
                logged.contains("profile p: 3 constants not set: init was given no constants struct (tuner v5)"),
                logged.toString());
        PolicyException ex = assertThrows(PolicyException.class, () -> parse(CONSTANTS.replace("BLACKWELL", "VERA")));
        assertTrue(
                ex.getMessage()
                        .contains("unknown compCap 'VERA' in perChMaxTreeBws.VERA.4NODES; use "
                                + "[VOLTA, AMPERE, HOPPER, BLACKWELL, RUBIN]"),
                ex.getMessage());
    }

    static final String CONSTANTS_V7 = """
        - name: p
          constants:
            baseLatencies.RING.LL: 7.5
            hwLatencies.NET.PAT.SIMPLE: 2.5
            llMaxBws.RUBIN.1NODE: 111
            perChMaxRingLL128Bws.HOPPER.2NODES: 22
            perChMaxTreeBws.BLACKWELL.4NODES: 30
            perChMaxNVLSTreeBws.RUBIN.4NODES: 44
          rules: []
      """;

    /**
     * Tuner v7 (NCCL 2.32.6, tuner_v7.h at NVIDIA/nccl 2449986): the constants struct has five
     * compute-capability rows, so each bandwidth array after llMaxBws starts 3 doubles per earlier
     * bandwidth array later than in v5. Offsets written out from tuner_v7.h's dimensions.
     */
    @Test
    void v7ConstantsLandInTheFiveRowStructIncludingRubin() throws Exception {
        long ringLl = (1 * 3 + 0) * 8; // baseLatencies[RING][LL]
        long netPatSimple = (21 + (2 * 7 + 6) * 3 + 2) * 8; // hwLatencies[NET][PAT][SIMPLE]
        long llRubin1 = (84 + 0 * 15 + 4 * 3 + 0) * 8; // llMaxBws[RUBIN][1NODE]
        long ringLl128Hopper2 = (84 + 1 * 15 + 2 * 3 + 1) * 8; // perChMaxRingLL128Bws[HOPPER][2NODES]
        long treeBlackwell4 = (84 + 3 * 15 + 3 * 3 + 2) * 8; // perChMaxTreeBws[BLACKWELL][4NODES]
        long nvlsTreeRubin4 = (84 + 4 * 15 + 4 * 3 + 2) * 8; // perChMaxNVLSTreeBws[RUBIN][4NODES]
        assertEquals(1272, TunerConstant.structBytes(7));
        assertEquals(1272 - 8, nvlsTreeRubin4, "the last double of the struct");
        MemorySegment k = arena.allocate(1272, 8);
        k.fill((byte) 0);
        k.set(JAVA_DOUBLE, ringLl, 6.6);
        Engine e = new Engine(parse(CONSTANTS_V7), Mode.ENFORCE, log, null);
        e.init(2, 2, MemorySegment.NULL, sig(7, 2, 23206), k);
        assertEquals(7.5, k.get(JAVA_DOUBLE, ringLl));
        assertEquals(2.5, k.get(JAVA_DOUBLE, netPatSimple));
        assertEquals(111, k.get(JAVA_DOUBLE, llRubin1));
        assertEquals(22, k.get(JAVA_DOUBLE, ringLl128Hopper2));
        assertEquals(30, k.get(JAVA_DOUBLE, treeBlackwell4));
        assertEquals(44, k.get(JAVA_DOUBLE, nvlsTreeRubin4));
        double sum = 0;
        for (long o = 0; o < 1272; o += 8) {
            sum += k.get(JAVA_DOUBLE, o);
        }
        assertEquals(7.5 + 2.5 + 111 + 22 + 30 + 44, sum, 1e-12, "nothing else written");
        assertTrue(
                logged.contains("profile p: set 6 constants: baseLatencies.RING.LL 6.6 -> 7.5 us, "
                        + "hwLatencies.NET.PAT.SIMPLE 0.0 -> 2.5 us, llMaxBws.RUBIN.1NODE 0.0 -> 111.0 GB/s, "
                        + "perChMaxRingLL128Bws.HOPPER.2NODES 0.0 -> 22.0 GB/s, perChMaxTreeBws.BLACKWELL.4NODES 0.0 -> 30.0 GB/s, "
                        + "perChMaxNVLSTreeBws.RUBIN.4NODES 0.0 -> 44.0 GB/s"),
                logged.toString());
        assertTrue(logged.stream().noneMatch(l -> l.contains("not set")), logged.toString());
    }

    /** Under v5/v6 (4-row struct; NCCL 2.32.6's v6 adapter copies four rows) RUBIN entries are not set, with one INFO line. */
    @Test
    void rubinEntriesNotSetUnderV5AndV6() throws Exception {
        long ringLl128Hopper2 = (84 + 1 * 12 + 2 * 3 + 1) * 8; // v5's perChMaxRingLL128Bws[HOPPER][2NODES]
        long treeBlackwell4 = (84 + 3 * 12 + 3 * 3 + 2) * 8; // v5's perChMaxTreeBws[BLACKWELL][4NODES]
        for (int version : new int[] {5, 6}) {
            logged.clear();
            MemorySegment k = arena.allocate(TunerConstant.STRUCT_BYTES_V5, 8);
            k.fill((byte) 0);
            new Engine(parse(CONSTANTS_V7), Mode.ENFORCE, log, null)
                    .init(2, 2, MemorySegment.NULL, sig(version, 2, 23206), k);
            assertEquals(1152, k.byteSize());
            assertEquals(7.5, k.get(JAVA_DOUBLE, 3 * 8));
            assertEquals(2.5, k.get(JAVA_DOUBLE, (21 + (2 * 7 + 6) * 3 + 2) * 8));
            assertEquals(22, k.get(JAVA_DOUBLE, ringLl128Hopper2));
            assertEquals(30, k.get(JAVA_DOUBLE, treeBlackwell4));
            double sum = 0;
            for (long o = 0; o < 1152; o += 8) {
                sum += k.get(JAVA_DOUBLE, o);
            }
            assertEquals(
                    7.5 + 2.5 + 22 + 30, sum, 1e-12, "v" + version + ": no RUBIN value anywhere in the 4-row struct");
            List<String> notSet =
                    logged.stream().filter(l -> l.contains("not set")).toList();
            assertEquals(
                    List.of("profile p: 2 constants not set (llMaxBws.RUBIN.1NODE, perChMaxNVLSTreeBws.RUBIN.4NODES): "
                            + "the RUBIN row is in NCCL's constants from tuner v7 (2.32.6); this NCCL uses v" + version
                            + ", whose constants have the rows VOLTA..BLACKWELL only"),
                    notSet);
            assertTrue(
                    logged.stream()
                            .anyMatch(l ->
                                    l.startsWith("profile p: set 4 constants: baseLatencies.RING.LL 0.0 -> 7.5 us")),
                    logged.toString());
        }
        TunerConstant rubin = TunerConstant.parse("llMaxBws.RUBIN.1NODE", 1);
        assertTrue(rubin.rubin());
        assertTrue(!rubin.fits(6) && rubin.fits(7));
        assertThrows(IllegalArgumentException.class, () -> rubin.byteOffset(6));
        // baseLatencies' algorithm 4 (NVLS) is not the RUBIN row
        assertTrue(TunerConstant.parse("baseLatencies.NVLS.SIMPLE", 1).fits(5));
    }

    static final String HARDWARE = """
        - name: mnnvl
          match: {nNodes: 1, nvlDomain: {nNvlDomains: 1, maxRanksPerNvlDomain: {min: 72}}}
          rules: [{collective: AllReduce, bytes: {from: 0 B}, candidates: [{algorithm: NVLS, protocol: SIMPLE}]}]
        - name: hopper
          match: {ncclVersion: {min: 2.24.3, max: 2.30.7}, gpu: h100, computeCapability: {min: "9.0", max: "9.0"}}
          rules: [{collective: AllReduce, bytes: {from: 0 B}, candidates: [{algorithm: RING, protocol: LL}]}]
        - name: rest
          rules: [{collective: AllReduce, bytes: {from: 0 B}, candidates: [{algorithm: TREE, protocol: SIMPLE}]}]
      """;

    @Test
    void hardwareSignatureChoosesTheProfile() throws Exception {
        Policy p = parse(HARDWARE);
        record Case(Signature sig, String profile) {}
        List<Case> cases = List.of(
                new Case(new Signature(5, 1, 1, 72, 72, 22809, "NVIDIA GB200", 10, 0), "mnnvl"),
                new Case(new Signature(5, 1, 2, 36, 36, 22809, "NVIDIA GB200", 10, 0), "rest"),
                new Case(new Signature(4, 0, -1, -1, -1, 22403, "NVIDIA H100 80GB HBM3", 9, 0), "hopper"),
                new Case(new Signature(6, 1, 1, 8, 8, 23007, "NVIDIA H100 80GB HBM3", 9, 0), "hopper"),
                new Case(new Signature(6, 1, 1, 8, 8, 23206, "NVIDIA H100 80GB HBM3", 9, 0), "rest"), // NCCL too new
                new Case(new Signature(6, 1, 1, 8, 8, 23007, "NVIDIA H200", 9, 0), "rest"), // other GPU
                new Case(new Signature(6, 1, 1, 8, 8, -1, "NVIDIA H100", 9, 0), "rest"), // version unknown
                new Case(new Signature(6, 1, 1, 8, 8, 23007, "NVIDIA H100", -1, -1), "rest")); // cc unknown
        for (Case c : cases) {
            List<String> skipped = new ArrayList<>();
            assertEquals(c.profile(), p.profileFor(72, 1, c.sig(), skipped).name(), c.toString());
        }
        List<String> skipped = new ArrayList<>();
        p.profileFor(8, 1, new Signature(6, 1, 1, 8, 8, 23206, "NVIDIA H100", 9, 0), skipped);
        assertEquals(
                List.of(
                        "profile mnnvl skipped: nvlDomain.maxRanksPerNvlDomain 8 is outside 72..",
                        "profile hopper skipped: ncclVersion 2.32.6 is outside 2.24.3..2.30.7"),
                skipped);
        // the engine logs the skip and the signature at init
        Engine e = new Engine(p, Mode.ENFORCE, log, null);
        e.init(8, 1, MemorySegment.NULL, new Signature(3, 0, -1, -1, -1, -1, "", -1, -1), MemorySegment.NULL);
        assertTrue(
                logged.contains("policy t: profile mnnvl skipped: nvlDomain.nNvlDomains 1 named but it is unknown "
                        + "(NCCL passes NVLink domains from tuner v5, 2.28)"),
                logged.toString());
        assertTrue(
                logged.stream()
                        .anyMatch(
                                l -> l.startsWith("policy t profile rest mode enforce rules 1 sha256 ")
                                        && l.endsWith(
                                                "(nRanks=8 nNodes=1); tuner v3, NCCL unknown, GPU unknown (cc unknown), nvlDomains unknown")),
                logged.toString());
    }

    @Test
    void versionCodes() {
        assertEquals(22809, Signature.parseVersion("2.28.9"));
        assertEquals("2.28.9", Signature.versionString(22809));
        assertEquals("2.8.4", Signature.versionString(2804)); // before 2.9: major*1000 + minor*100 + patch
        assertThrows(IllegalArgumentException.class, () -> Signature.parseVersion("2.x"));
    }
}
