package io.nccltuner.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nccltuner.policy.Policy;
import io.nccltuner.policy.PolicyLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The built plugin loaded by the harness as each NCCL era loads a tuner (--nccl-era: symbol order,
 * the core's adaptation of older versions, ncclGetVersion), replaying the captured traces. Every
 * expectation comes from {@link TraceExpectation} (a linear scan of the policy's rules and NCCL's
 * selection rule) or from numbers written in the test, never from engine code.
 */
@Timeout(300)
class NcclErasIT {
    /** Era -> the tuner version it must choose from this library (v3..v7). */
    static final Map<String, Integer> ERAS = Map.of("2.22", 3, "2.24", 4, "2.28", 5, "2.30", 6, "2.32.6", 7);

    @TempDir
    static Path tmp;

    @BeforeAll
    static void built() {
        Harness.requireBuilt();
    }

    static Path trace(String w) {
        return Harness.TRACES.resolve("trace_" + w + ".csv");
    }

    static Harness.Result run(Path policy, String... args) throws Exception {
        List<String> a = new ArrayList<>(List.of("--plugin", Harness.PLUGIN.toString()));
        a.addAll(List.of(args));
        Map<String, String> env = new HashMap<>();
        env.put("NCCL_TUNER_JAVA_POLICY", policy.toString());
        return Harness.run(env, a.toArray(String[]::new));
    }

    /** The harness with the built plugin, as NCCL {@code era}, over a trace; env set, then {@code more} options. */
    static Harness.Result era(Map<String, String> env, String era, Path trace, String... more) throws Exception {
        List<String> a = new ArrayList<>(List.of("--plugin", Harness.PLUGIN.toString(), "--nccl-era", era));
        a.addAll(List.of(more));
        a.addAll(List.of("--trace", trace.toString()));
        return Harness.run(env, a.toArray(String[]::new));
    }

    static Path write(String name, String yaml) throws Exception {
        Path p = tmp.resolve(name);
        Files.writeString(p, yaml);
        return p;
    }

    /** Each era picks its version and reaches, call by call, the oracle's decision: the same in all eras. */
    @ParameterizedTest(name = "NCCL {0} on {1}")
    @CsvSource({
        "2.22, ddp",
        "2.24, ddp",
        "2.28, ddp",
        "2.30, ddp",
        "2.32.6, ddp",
        "2.22, tp_infer",
        "2.24, tp_infer",
        "2.28, tp_infer",
        "2.30, tp_infer",
        "2.32.6, tp_infer",
        "2.28, fsdp",
        "2.30, coalesced"
    })
    void erasPickTheirVersionAndAgreeWithTheOracle(String era, String workload) throws Exception {
        Path policyPath = Harness.REPO.resolve("policies/h200-2rank.yaml");
        Policy policy = PolicyLoader.load(policyPath);
        Harness.Result r =
                run(policyPath, "--nccl-era", era, "--trace", trace(workload).toString());
        assertEquals(0, r.exit(), r.text());
        int v = ERAS.get(era);
        assertEquals(
                1, r.grep("TUNER/Plugin: Using nccl-tuner-java (v" + v + ")").size(), r.text());
        assertEquals(List.of(), r.grep("Failed to find"), r.text()); // each era finds its newest symbol first
        // only the 2.32.6 era prints NCCL's closing line; under v7 NCCL's ncclTuner_t is the plugin's own
        assertEquals(
                era.equals("2.32.6") ? List.of("TUNER/Plugin: Closing tuner: 'nccl-tuner-java'") : List.of(),
                r.grep("Closing tuner"),
                r.text());
        List<TraceExpectation.Call> calls = TraceExpectation.read(trace(workload));
        List<Harness.Selection> got = r.selections();
        assertEquals(calls.size(), got.size());
        for (int i = 0; i < calls.size(); i++) {
            assertEquals(TraceExpectation.expect(calls.get(i), policy, true), got.get(i), era + " call " + i);
        }
        assertTrue(r.warnings().isEmpty(), r.warnings().toString());
        // the version the host's ncclGetVersion reports reaches the signature line; commId from v5
        String init = r.grep("TUNER/Java: policy ").get(0);
        assertTrue(
                init.contains("tuner v" + v + ", NCCL "
                        + (era.equals("2.28")
                                ? "2.28.9"
                                : era.equals("2.32.6") ? "2.32.6" : era + (era.equals("2.30") ? ".7" : ".3"))),
                init);
        assertEquals(v >= 5, init.contains(" commId 0x"), init);
    }

    /** Legacy loading (no era): v3 only, as before; NCCL's version unknown (the host exports it with an error). */
    @Test
    void withoutEraOnlyV3() throws Exception {
        Harness.Result r = run(
                Harness.REPO.resolve("policies/h200-2rank.yaml"),
                "--trace",
                trace("coalesced").toString());
        assertEquals(0, r.exit(), r.text());
        assertEquals(1, r.grep("Using nccl-tuner-java (v3)").size(), r.text());
        assertEquals(
                1,
                r.grep("tuner v3, NCCL unknown, GPU unknown (cc unknown), nvlDomains unknown")
                        .size(),
                r.text());
    }

    static final String HEAD = "schema: nccl-tuner-java/v1\nname: t\nprofiles:\n";

    /**
     * regBuff rules: true and false over the same sizes with different picks. A v4+ core passing
     * regBuff 1 gets the first, 0 the second; under v3 neither matches (said at init).
     */
    @ParameterizedTest(name = "NCCL {0} regBuff {1}")
    @CsvSource({"2.24, 1", "2.24, 0", "2.30, 1", "2.22, 0"})
    void regBuffRule(String era, int regBuff) throws Exception {
        Path p = write("regbuff.yaml", HEAD + """
          - name: two
            match: {nRanks: 2, nNodes: 2}
            rules:
              - collective: AllReduce
                bytes: {from: 0 B, to: 128 MiB}
                regBuff: true
                candidates: [{algorithm: TREE, protocol: SIMPLE}]
              - collective: AllReduce
                bytes: {from: 0 B, to: 128 MiB}
                regBuff: false
                candidates: [{algorithm: TREE, protocol: LL}]
        """);
        Policy policy = PolicyLoader.load(p);
        Harness.Result r = run(
                p,
                "--nccl-era",
                era,
                "--regbuff",
                Integer.toString(regBuff),
                "--trace",
                trace("tp_infer").toString());
        assertEquals(0, r.exit(), r.text());
        int passed = era.equals("2.22") ? -1 : regBuff;
        List<TraceExpectation.Call> calls = TraceExpectation.read(trace("tp_infer"));
        List<Harness.Selection> got = r.selections();
        int tree = 0;
        for (int i = 0; i < calls.size(); i++) {
            Harness.Selection want =
                    TraceExpectation.expect(calls.get(i), policy.profiles().get(0), true, passed);
            assertEquals(want, got.get(i), "call " + i);
            tree += got.get(i).algorithm().equals("TREE") ? 1 : 0;
        }
        // NCCL alone never picks TREE on tp_infer: every AllReduce call (all under 128 MiB) follows the rule
        long allReduce = calls.stream().filter(c -> c.coll() == 4).count();
        assertTrue(allReduce > 200, "tp_infer has 257 AllReduce calls: " + allReduce);
        assertEquals(passed < 0 ? 0 : allReduce, tree);
        if (passed >= 0) {
            assertTrue(
                    got.stream()
                            .filter(s -> s.collective().equals("AllReduce"))
                            .allMatch(s -> s.protocol().equals(regBuff == 1 ? "SIMPLE" : "LL")),
                    got.toString());
        }
        assertEquals(
                passed < 0 ? 1 : 0,
                r.grep("2 rules name regBuff, which NCCL passes from tuner v4 (2.24); under v3")
                        .size(),
                r.text());
    }

    static final String SHAPES = HEAD + """
        - name: eight-ranks-two-nodes
          match: {nRanks: 8, nNodes: 2}
          rules:
            - collective: AllReduce
              bytes: {from: 0 B, to: 128 MiB}
              candidates: [{algorithm: TREE, protocol: SIMPLE, channels: 6}]
        - name: two-ranks-eight-nodes
          match: {nRanks: 2, nNodes: 8}
          rules:
            - collective: AllReduce
              bytes: {from: 0 B, to: 128 MiB}
              candidates: [{algorithm: RING, protocol: LL, channels: 3}]
      """;

    /**
     * nRanks != nNodes (every other test has nRanks == nNodes): the tp_infer trace as a communicator
     * of 8 ranks on 2 nodes. Each tuner version (v3, v4 and v5/v6, whose init takes commId before
     * nRanks and nNodes) must reach the profile for 8 ranks on 2 nodes, never its swap.
     */
    @ParameterizedTest(name = "NCCL {0}")
    @CsvSource({"2.22", "2.24", "2.28", "2.30"})
    void nRanksAndNNodesReachTheirOwnFields(String era) throws Exception {
        List<String> rows = new ArrayList<>();
        for (String l : Files.readAllLines(trace("tp_infer"))) {
            String[] f = l.split(",", -1);
            if (f.length >= 4 && (f[0].equals("init") || f[0].equals("get"))) {
                f[2] = "8";
                f[3] = "2";
            }
            rows.add(String.join(",", f));
        }
        Path t = tmp.resolve("tp_infer_8x2.csv");
        Files.write(t, rows);
        Path p = write("shapes.yaml", SHAPES);
        Policy policy = PolicyLoader.load(p);
        Harness.Result r = run(p, "--nccl-era", era, "--trace", t.toString());
        assertEquals(0, r.exit(), r.text());
        assertEquals(
                1,
                r.grep("TUNER/Java: policy t profile eight-ranks-two-nodes mode enforce")
                        .size(),
                r.text());
        assertEquals(1, r.grep("(nRanks=8 nNodes=2)").size(), r.text());
        List<TraceExpectation.Call> calls = TraceExpectation.read(t);
        List<Harness.Selection> got = r.selections();
        assertEquals(calls.size(), got.size());
        int tree = 0;
        for (int i = 0; i < calls.size(); i++) {
            assertEquals(
                    TraceExpectation.expect(calls.get(i), policy.profiles().get(0), true, era.equals("2.22") ? -1 : 0),
                    got.get(i),
                    "call " + i);
            if (calls.get(i).coll() == 4) {
                assertEquals(
                        "TREE/SIMPLE/6",
                        got.get(i).algorithm() + "/" + got.get(i).protocol() + "/"
                                + got.get(i).channels());
                tree++;
            }
        }
        assertTrue(tree > 200, "tp_infer has 257 AllReduce calls: " + tree);
    }

    static final Pattern CHUNK = Pattern.compile(" chunkSize=(\\d+)");

    /** A chunkSize candidate: NCCL 2.30 (v6) asks for the chunk size of what it chose and gets it; 2.28 never asks. */
    @ParameterizedTest(name = "NCCL {0}")
    @CsvSource({"2.30", "2.32.6", "2.28"})
    void chunkSizeCandidate(String era) throws Exception {
        Path p = write("chunk.yaml", HEAD + """
          - name: two
            match: {nRanks: 2, nNodes: 2}
            rules:
              - collective: AllReduce
                bytes: {from: 32 KiB, to: 128 MiB}
                candidates:
                  - {algorithm: TREE, protocol: SIMPLE, chunkSize: 1 MiB}
                  - {algorithm: RING, protocol: SIMPLE}
        """);
        Policy policy = PolicyLoader.load(p);
        Harness.Result r = run(p, "--nccl-era", era, "--trace", trace("ddp").toString());
        assertEquals(0, r.exit(), r.text());
        List<TraceExpectation.Call> calls = TraceExpectation.read(trace("ddp"));
        List<String> lines = r.lines().stream()
                .filter(l -> Harness.Selection.parse(l) != null)
                .toList();
        int withChunk = 0;
        for (int i = 0; i < calls.size(); i++) {
            Harness.Selection want =
                    TraceExpectation.expect(calls.get(i), policy.profiles().get(0), true, 0);
            assertEquals(want, Harness.Selection.parse(lines.get(i)), "call " + i);
            long chunk = era.equals("2.28")
                    ? 0
                    : TraceExpectation.expectChunk(
                            calls.get(i), policy.profiles().get(0), want);
            Matcher m = CHUNK.matcher(lines.get(i));
            assertEquals(chunk, m.find() ? Long.parseLong(m.group(1)) : 0L, lines.get(i));
            withChunk += chunk != 0 ? 1 : 0;
        }
        if (!era.equals("2.28")) {
            assertTrue(withChunk > 10, "the trace has AllReduce calls of 32 KiB and more: " + withChunk);
            assertTrue(r.grep("chunk sizes set " + withChunk).size() == 1, r.text());
        } else {
            assertEquals(
                    1,
                    r.grep("candidates name chunkSize, which NCCL asks for from tuner v6 (2.30)")
                            .size(),
                    r.text());
        }
    }

    static final String CONSTANTS = HEAD + """
        - name: two
          match: {nRanks: 2, nNodes: 2}
          constants:
            baseLatencies.RING.LL: 7.5
            hwLatencies.NET.TREE.SIMPLE: 20
            llMaxBws.HOPPER.2NODES: 150.25
          rules: []
      """;

    /** A constants edit reaches NCCL's struct under v5+ (enforce), and nothing else changes; v4 gets none. */
    @ParameterizedTest(name = "NCCL {0} {1}")
    @CsvSource({"2.28, enforce", "2.30, enforce", "2.32.6, enforce", "2.28, shadow", "2.24, enforce"})
    void constantsEdit(String era, String mode) throws Exception {
        Path p = write("constants.yaml", CONSTANTS);
        Map<String, String> env = Map.of("NCCL_TUNER_JAVA_POLICY", p.toString(), "NCCL_TUNER_JAVA_MODE", mode);
        Harness.Result r = era(env, era, trace("coalesced"), "--print-constants");
        assertEquals(0, r.exit(), r.text());
        List<String> printed = r.grep("harness: constant ");
        if (era.equals("2.24") || mode.equals("shadow")) {
            assertEquals(List.of(), printed);
        } else {
            // the harness starts from NCCL 2.30.7's baseLatencies (RING/LL 6.6 us) and zeros elsewhere; under
            // 2.32.6 (v7) it names each changed double by its place in the 5-row struct
            assertEquals(
                    List.of(
                            "harness: constant baseLatencies.RING.LL 6.6 -> 7.5",
                            "harness: constant hwLatencies.NET.TREE.SIMPLE 0 -> 20",
                            "harness: constant llMaxBws.HOPPER.2NODES 0 -> 150.25"),
                    printed);
        }
        if (era.equals("2.24")) {
            assertEquals(
                    1,
                    r.grep(
                                    "3 constants not set: NCCL passes its model constants from tuner v5 (2.28); this NCCL uses v4")
                            .size(),
                    r.text());
        }
        // NCCL's own choice everywhere: the profile has no rules
        List<TraceExpectation.Call> calls = TraceExpectation.read(trace("coalesced"));
        for (int i = 0; i < calls.size(); i++) {
            assertEquals(
                    TraceExpectation.expect(calls.get(i), (Policy) null, false),
                    r.selections().get(i));
        }
    }

    static final String RUBIN = HEAD + """
        - name: two
          match: {nRanks: 2, nNodes: 2}
          constants:
            baseLatencies.RING.LL: 7.5
            llMaxBws.RUBIN.2NODES: 123.5
            perChMaxTreeBws.HOPPER.4NODES: 31
            perChMaxNVLSTreeBws.RUBIN.1NODE: 64
            perChMaxNVLSTreeBws.BLACKWELL.4NODES: 48
          rules: []
      """;

    /**
     * NCCL 2.32.6 takes ncclTunerPlugin_v7: every constant, the RUBIN row's too, lands in the 5-row
     * struct where the harness (compiled from tuner_v7.h's layout) names it.
     */
    @Test
    void v7ConstantsIncludingRubinUnder2326() throws Exception {
        Path p = write("rubin.yaml", RUBIN);
        Harness.Result r =
                era(Map.of("NCCL_TUNER_JAVA_POLICY", p.toString()), "2.32.6", trace("coalesced"), "--print-constants");
        assertEquals(0, r.exit(), r.text());
        assertEquals(1, r.grep("TUNER/Plugin: Using nccl-tuner-java (v7)").size(), r.text());
        assertEquals(
                List.of(
                        "harness: constant baseLatencies.RING.LL 6.6 -> 7.5",
                        "harness: constant llMaxBws.RUBIN.2NODES 0 -> 123.5",
                        "harness: constant perChMaxTreeBws.HOPPER.4NODES 0 -> 31",
                        "harness: constant perChMaxNVLSTreeBws.BLACKWELL.4NODES 0 -> 48",
                        "harness: constant perChMaxNVLSTreeBws.RUBIN.1NODE 0 -> 64"),
                r.grep("harness: constant "));
        assertEquals(List.of(), r.grep("constants not set"), r.text());
        assertEquals(List.of("TUNER/Plugin: Closing tuner: 'nccl-tuner-java'"), r.grep("Closing tuner"));
        assertTrue(r.warnings().isEmpty(), r.warnings().toString());
    }

    /**
     * A v6 export under NCCL 2.32.6 (the plugin's _v7 hidden: a build before v7): NCCL's v6 adapter
     * hands it four rows of the 5-row struct and copies them back, so the non-RUBIN constants land at
     * their v7 places, the RUBIN row stays NCCL's (the engine says once why it is not set), the
     * decisions are unchanged, getChunkSize is still asked, and NCCL's closing line names '(null)'.
     */
    @Test
    void v6ExportUnder2326ThroughNcclsAdapter() throws Exception {
        Path p = write("rubin-v6.yaml", RUBIN);
        Harness.Result r = era(
                Map.of("NCCL_TUNER_JAVA_POLICY", p.toString()),
                "2.32.6",
                trace("coalesced"),
                "--hide-symbol",
                "ncclTunerPlugin_v7",
                "--print-constants");
        assertEquals(0, r.exit(), r.text());
        assertEquals(List.of("TUNER/Plugin: Failed to find ncclTunerPlugin_v7 symbol."), r.grep("Failed to find"));
        assertEquals(1, r.grep("TUNER/Plugin: Using nccl-tuner-java (v6)").size(), r.text());
        assertEquals(
                List.of(
                        "harness: constant baseLatencies.RING.LL 6.6 -> 7.5",
                        "harness: constant perChMaxTreeBws.HOPPER.4NODES 0 -> 31",
                        "harness: constant perChMaxNVLSTreeBws.BLACKWELL.4NODES 0 -> 48"),
                r.grep("harness: constant "));
        assertEquals(
                1,
                r.grep("profile two: 2 constants not set (llMaxBws.RUBIN.2NODES, perChMaxNVLSTreeBws.RUBIN.1NODE): "
                                + "the RUBIN row is in NCCL's constants from tuner v7 (2.32.6); this NCCL uses v6, whose constants have the rows "
                                + "VOLTA..BLACKWELL only")
                        .size(),
                r.text());
        assertEquals(List.of("TUNER/Plugin: Closing tuner: '(null)'"), r.grep("Closing tuner"));
        String init = r.grep("TUNER/Java: policy ").get(0);
        assertTrue(init.contains("tuner v6, NCCL 2.32.6"), init);
        List<TraceExpectation.Call> calls = TraceExpectation.read(trace("coalesced"));
        for (int i = 0; i < calls.size(); i++) {
            assertEquals(
                    TraceExpectation.expect(calls.get(i), (Policy) null, false),
                    r.selections().get(i));
        }
        assertTrue(r.warnings().isEmpty(), r.warnings().toString());
    }

    static final String HARDWARE = HEAD + """
        - name: one-nvl-domain
          match: {nRanks: 2, nNodes: 2, nvlDomain: {nNvlDomains: 1, minRanksPerNvlDomain: 2}}
          rules:
            - collective: AllReduce
              bytes: {from: 0 B, to: 128 MiB}
              candidates: [{algorithm: TREE, protocol: SIMPLE}]
        - name: nccl-2.28-plus
          match: {nRanks: 2, nNodes: 2, ncclVersion: {min: 2.28.0}}
          rules:
            - collective: AllReduce
              bytes: {from: 0 B, to: 128 MiB}
              candidates: [{algorithm: TREE, protocol: LL}]
        - name: h200
          match: {nRanks: 2, gpu: H200, computeCapability: "9.0"}
          rules:
            - collective: AllReduce
              bytes: {from: 0 B, to: 128 MiB}
              candidates: [{algorithm: RING, protocol: LL}]
        - name: fallback
          match: {nRanks: 2}
          rules:
            - collective: AllReduce
              bytes: {from: 0 B, to: 128 MiB}
              candidates: [{algorithm: RING, protocol: SIMPLE}]
      """;

    /**
     * Hardware matching: an NVLink-domain profile matches only when NCCL (v5+) passes one domain of
     * two ranks; an NCCL-version profile only from 2.28; a GPU profile never here (no CUDA driver in
     * the process: unknown never matches); each skip is said at init.
     */
    @ParameterizedTest(name = "NCCL {0} --nvl-domain {1} -> {2}")
    @CsvSource({
        "2.28, '1,2,2', one-nvl-domain, TREE, SIMPLE",
        "2.30, '1,2,2', one-nvl-domain, TREE, SIMPLE",
        "2.28, '', nccl-2.28-plus, TREE, LL",
        "2.24, '', fallback, RING, SIMPLE",
        "2.22, '', fallback, RING, SIMPLE"
    })
    void hardwareMatchAndMismatch(String era, String nvl, String profile, String algo, String proto) throws Exception {
        Path p = write("hw.yaml", HARDWARE);
        List<String> args = new ArrayList<>(
                List.of("--nccl-era", era, "--trace", trace("tp_infer").toString()));
        if (!nvl.isEmpty()) {
            args.addAll(List.of("--nvl-domain", nvl));
        }
        Harness.Result r = run(p, args.toArray(String[]::new));
        assertEquals(0, r.exit(), r.text());
        assertEquals(
                1,
                r.grep("TUNER/Java: policy t profile " + profile + " mode enforce")
                        .size(),
                r.text());
        // every tp_infer AllReduce is under 128 MiB: all follow the chosen profile's one candidate
        for (Harness.Selection s : r.selections().stream()
                .filter(x -> x.collective().equals("AllReduce"))
                .toList()) {
            assertEquals(algo + "/" + proto, s.algorithm() + "/" + s.protocol(), s.toString());
        }
        boolean v5 = era.equals("2.28") || era.equals("2.30");
        if (!profile.equals("one-nvl-domain")) {
            // the harness's default under v5+: one domain per node (2 domains of 1 rank)
            assertEquals(
                    1,
                    r.grep("profile one-nvl-domain skipped: "
                                    + (v5
                                            ? "nvlDomain.nNvlDomains 2 is outside 1"
                                            : "nvlDomain.nNvlDomains 1 named but it is unknown"))
                            .size(),
                    r.text());
        }
        if (profile.equals("fallback")) {
            assertEquals(
                    1,
                    r.grep("profile nccl-2.28-plus skipped: ncclVersion " + era + ".3 is outside 2.28.0..")
                            .size(),
                    r.text());
            assertEquals(
                    1,
                    r.grep("profile h200 skipped: gpu 'H200' named but the GPU is unknown")
                            .size(),
                    r.text());
        }
    }

    static final Path FAKE_CUDA = Harness.BUILD.resolve("tests/fake-cuda/libcuda.so.1");

    /**
     * The GPU from a CUDA driver the process has loaded (a fake libcuda.so.1, LD_PRELOADed): an H200
     * at 9.0 matches the h200 profile; an A100 at 8.0, or a driver with no current context (device
     * unknown), does not, and the skip names why.
     */
    @ParameterizedTest(name = "{0} cc {1} context {2} -> {3}")
    @CsvSource({
        "NVIDIA H200, 9.0, true, h200, GPU NVIDIA H200 (cc 9.0)",
        "NVIDIA A100-SXM4-80GB, 8.0, true, fallback, GPU NVIDIA A100-SXM4-80GB (cc 8.0)",
        "NVIDIA H200, 9.0, false, fallback, GPU unknown (cc unknown)"
    })
    void gpuFromTheLoadedCudaDriver(String name, String cc, boolean context, String profile, String logged)
            throws Exception {
        assertTrue(Files.exists(FAKE_CUDA), FAKE_CUDA + " is built by `make build`");
        Map<String, String> env = new HashMap<>(Map.of(
                "NCCL_TUNER_JAVA_POLICY",
                write("hw.yaml", HARDWARE).toString(),
                "LD_PRELOAD",
                FAKE_CUDA.toString(),
                "FAKE_CUDA_NAME",
                name,
                "FAKE_CUDA_CC",
                cc));
        if (!context) {
            env.put("FAKE_CUDA_NO_CONTEXT", "1");
        }
        Harness.Result r = era(env, "2.24", trace("coalesced"));
        assertEquals(0, r.exit(), r.text());
        String init = r.grep("TUNER/Java: policy t profile ").get(0);
        assertTrue(init.contains("TUNER/Java: policy t profile " + profile + " mode enforce"), r.text());
        assertTrue(init.endsWith("; tuner v4, NCCL 2.24.3, " + logged + ", nvlDomains unknown"), init);
        if (!profile.equals("h200")) {
            assertEquals(
                    1,
                    r.grep("profile h200 skipped: gpu '"
                                    + (context
                                            ? name + "' does not contain 'H200'"
                                            : "H200' named but the GPU is unknown"))
                            .size(),
                    r.text());
        }
    }

    /** v5+: the decision log's comm is NCCL's commId (the init line's, as an unsigned number). */
    @Test
    void decisionLogCarriesCommId() throws Exception {
        Path log = tmp.resolve("decisions.jsonl");
        Harness.Result r = era(
                Map.of(
                        "NCCL_TUNER_JAVA_POLICY",
                        Harness.REPO.resolve("policies/h200-2rank.yaml").toString(),
                        "NCCL_TUNER_JAVA_MODE",
                        "shadow",
                        "NCCL_TUNER_JAVA_LOG",
                        log.toString(),
                        "NCCL_TUNER_JAVA_LOG_CALLS",
                        "1"),
                "2.28",
                trace("coalesced"));
        assertEquals(0, r.exit(), r.text());
        Matcher m = Pattern.compile(" commId 0x([0-9a-f]+);")
                .matcher(r.grep("TUNER/Java: policy ").get(0));
        assertTrue(m.find(), r.text());
        String id = Long.toUnsignedString(Long.parseUnsignedLong(m.group(1), 16));
        List<String> lines = Files.readAllLines(log);
        // per-call records (NCCL_TUNER_JAVA_LOG_CALLS=1), then the comm and aggregate lines at destroy
        List<String> records =
                lines.stream().filter(l -> !l.contains("\"type\":")).toList();
        assertEquals(19, records.size(), "one record per rule hit");
        assertTrue(records.stream().allMatch(l -> l.startsWith("{\"comm\":" + id + ",")), records.get(0) + " vs " + id);
        List<String> aggregates =
                lines.stream().filter(l -> l.contains("\"type\":")).toList();
        assertFalse(aggregates.isEmpty(), lines.toString());
        assertTrue(
                aggregates.stream().allMatch(l -> l.contains("\"comm\":" + id + ",")), aggregates.get(0) + " vs " + id);
        assertEquals(
                1,
                r.grep("summary profile two-ranks-socket mode shadow commId 0x" + m.group(1) + ": calls 19")
                        .size(),
                r.text());
    }

    /** An exception in getChunkSize (v6) is contained like the others: NCCL's chunk size, one WARN, exit 0. */
    @Test
    void exceptionInGetChunkSizeChangesNothing() throws Exception {
        Path p = write("chunk2.yaml", HEAD + """
          - name: two
            rules:
              - collective: AllReduce
                bytes: {from: 0 B}
                candidates: [{algorithm: RING, protocol: SIMPLE, chunkSize: 1 MiB}, {algorithm: RING, protocol: LL}]
        """);
        Map<String, String> env = new HashMap<>(ThrowingEngine.environment("getChunkSize"));
        env.put("NCCL_TUNER_JAVA_POLICY", p.toString());
        Harness.Result r = era(env, "2.30", trace("ddp"));
        assertEquals(0, r.exit(), r.text());
        assertEquals(1, r.warnings().size(), r.text());
        assertTrue(
                r.warnings().get(0).contains("internal error in getChunkSize"),
                r.warnings().get(0));
        assertTrue(r.lines().stream().noneMatch(l -> l.contains("chunkSize=")), r.text());
        assertTrue(r.summary().contains(" warn=1 "), r.summary());
    }
}
