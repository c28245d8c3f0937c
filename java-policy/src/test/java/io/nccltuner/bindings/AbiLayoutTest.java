package io.nccltuner.bindings;

import static java.lang.foreign.MemoryLayout.PathElement.groupElement;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.lang.foreign.AddressLayout;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.GroupLayout;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.PaddingLayout;
import java.lang.foreign.ValueLayout;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Checks the jextract bindings against the C compiler's view of the same header: compiles and
 * runs {@code tests/abi/abi_layout.c} (which prints sizes, alignments, field offsets, function
 * pointer signatures and constant values of {@code plugin-shim/include/nccl_tuner_java.h}, which includes nccl_tuner_abi.h and nccltj_bridge.h) and
 * compares every printed value with the generated Java classes. Fails when the header changed
 * without {@code make bindings}, or the bindings were edited by hand.
 */
class AbiLayoutTest {

    private static final String PKG = "io.nccltuner.bindings.";
    /** Every struct of every tuner version the library exports (v3 .. v7), and the bridge's. */
    private static final Map<String, Class<?>> STRUCTS = Map.ofEntries(
            Map.entry("ncclTuner_v3_t", ncclTuner_v3_t.class),
            Map.entry("ncclTuner_v4_t", ncclTuner_v4_t.class),
            Map.entry("ncclTuner_v5_t", ncclTuner_v5_t.class),
            Map.entry("ncclTuner_v6_t", ncclTuner_v6_t.class),
            Map.entry("ncclTuner_v7_t", ncclTuner_v7_t.class),
            Map.entry("ncclNvlDomainInfo_v5_t", ncclNvlDomainInfo_v5_t.class),
            Map.entry("ncclNvlDomainInfo_v6_t", ncclNvlDomainInfo_v6_t.class),
            Map.entry("ncclNvlDomainInfo_v7_t", ncclNvlDomainInfo_v7_t.class),
            Map.entry("ncclTunerConstants_v5_t", ncclTunerConstants_v5_t.class),
            Map.entry("ncclTunerConstants_v6_t", ncclTunerConstants_v6_t.class),
            Map.entry("ncclTunerConstants_v7_t", ncclTunerConstants_v7_t.class),
            Map.entry("nccltj_bridge_t", nccltj_bridge_t.class),
            Map.entry("nccltj_hw_t", nccltj_hw_t.class),
            Map.entry("nccltj_call_t", nccltj_call_t.class),
            Map.entry("nccltj_get_t", nccltj_get_t.class),
            Map.entry("nccltj_series_t", nccltj_series_t.class),
            Map.entry("nccltj_measured_t", nccltj_measured_t.class));

    /** key -> value, in the order abi_layout printed them. */
    private static Map<String, String> c;

    @BeforeAll
    static void runAbiLayout() throws IOException, InterruptedException {
        String repoProp = System.getProperty("nccltj.repo");
        assertTrue(repoProp != null, "system property nccltj.repo (the repository root) is not set");
        Path repo = Path.of(repoProp).toAbsolutePath().normalize();
        Path source = repo.resolve("tests/abi/abi_layout.c");
        assertTrue(Files.isRegularFile(source), "missing " + source);
        Path outDir = repo.resolve("java-policy/target/abi");
        Files.createDirectories(outDir);
        Path exe = outDir.resolve("abi_layout");

        String cc = System.getenv().getOrDefault("CC", "gcc");
        run(
                List.of(
                        cc,
                        "-std=c11",
                        "-Wall",
                        "-Wextra",
                        "-Werror",
                        "-pedantic",
                        "-I",
                        repo.resolve("plugin-shim/include").toString(),
                        source.toString(),
                        "-o",
                        exe.toString()),
                outDir.resolve("cc.log"));
        Path out = outDir.resolve("abi_layout.txt");
        run(List.of(exe.toString()), out);

        c = new LinkedHashMap<>();
        for (String line : Files.readAllLines(out, StandardCharsets.UTF_8)) {
            if (line.isBlank()) {
                continue;
            }
            int sp = line.indexOf(' ');
            assertTrue(sp > 0, "malformed abi_layout line: " + line);
            String prev = c.put(line.substring(0, sp), line.substring(sp + 1));
            assertTrue(prev == null, "duplicate abi_layout key: " + line);
        }
        assertTrue(c.size() > 50, "abi_layout printed too little: " + c);
    }

    private static void run(List<String> cmd, Path output) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(cmd)
                .redirectErrorStream(true)
                .redirectOutput(output.toFile())
                .start();
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            fail("timed out: " + String.join(" ", cmd));
        }
        if (p.exitValue() != 0) {
            fail("exit " + p.exitValue() + ": " + String.join(" ", cmd) + "\n" + Files.readString(output));
        }
    }

    private static long cLong(String key) {
        String v = c.get(key);
        assertTrue(v != null, "abi_layout did not print " + key);
        return Long.parseLong(v);
    }

    /** The channel limit has one home per language; the C header's and the policy loader's agree. */
    @Test
    void channelLimitAgreesWithThePolicyLoader() {
        assertEquals(NcclTunerAbi.NCCL_TUNER_JAVA_MAX_CHANNELS(), io.nccltuner.policy.PolicyLoader.MAX_CHANNELS);
    }

    /**
     * The decision code and the measurement layout have one home per language: nccltj_bridge.h
     * (through these bindings) and engine.Decision / engine.Measurement; they agree.
     */
    @Test
    void decisionCodeAndHistogramAgreeWithTheEngine() {
        assertEquals(NcclTunerAbi.NCCLTJ_DECISION_SEEN(), io.nccltuner.engine.Decision.SEEN);
        assertEquals(NcclTunerAbi.NCCLTJ_DECISION_RULE(), io.nccltuner.engine.Decision.RULE);
        assertEquals(NcclTunerAbi.NCCLTJ_DECISION_NONE(), io.nccltuner.engine.Decision.NONE);
        assertEquals(NcclTunerAbi.NCCLTJ_ARM_NCCL(), io.nccltuner.engine.Decision.ARM_NCCL);
        assertEquals(NcclTunerAbi.NCCLTJ_ARM_POLICY(), io.nccltuner.engine.Decision.ARM_POLICY);
        assertEquals(NcclTunerAbi.NCCLTJ_ARM_NOT_OFFERED(), io.nccltuner.engine.Decision.ARM_NOT_OFFERED);
        assertEquals(NcclTunerAbi.NCCLTJ_ARM_UNRULED(), io.nccltuner.engine.Decision.ARM_UNRULED);
        assertEquals(NcclTunerAbi.NCCLTJ_ARM_UNJOINED(), io.nccltuner.engine.Decision.ARM_UNJOINED);
        int code = io.nccltuner.engine.DecisionTestAccess.rule(17, io.nccltuner.engine.Decision.ARM_POLICY, 5, 2, 16);
        assertEquals(17, code & NcclTunerAbi.NCCLTJ_DECISION_BUCKET_MASK());
        assertEquals(5, code >> NcclTunerAbi.NCCLTJ_DECISION_NCCL_SHIFT() & NcclTunerAbi.NCCLTJ_DECISION_ENTRY_MASK());
        assertEquals(2, code >> NcclTunerAbi.NCCLTJ_DECISION_CAND_SHIFT() & NcclTunerAbi.NCCLTJ_DECISION_ENTRY_MASK());
        assertEquals(
                16,
                code >> NcclTunerAbi.NCCLTJ_DECISION_CHANNELS_SHIFT() & NcclTunerAbi.NCCLTJ_DECISION_CHANNELS_MASK());
        assertEquals(1, code >> NcclTunerAbi.NCCLTJ_DECISION_ARM_SHIFT() & 3);
        assertEquals(NcclTunerAbi.NCCLTJ_HIST_BUCKETS(), io.nccltuner.engine.Measurement.HIST_BUCKETS);
        assertEquals(NcclTunerAbi.NCCLTJ_HIST_SUB(), io.nccltuner.engine.Measurement.HIST_SUB);
        assertEquals(NcclTunerAbi.NCCLTJ_HIST_MIN_LOG2(), io.nccltuner.engine.Measurement.HIST_MIN_LOG2);
    }

    @Test
    void structSizesAlignmentsAndFieldOffsetsMatch() throws ReflectiveOperationException {
        List<String> errors = new ArrayList<>();
        for (var e : STRUCTS.entrySet()) {
            String s = e.getKey();
            Class<?> cls = e.getValue();
            GroupLayout layout = (GroupLayout) cls.getMethod("layout").invoke(null);
            check(errors, s, cLong(s), layout.byteSize());
            check(errors, s + " sizeof()", cLong(s), (long)
                    cls.getMethod("sizeof").invoke(null));
            check(errors, s + ":align", cLong(s + ":align"), layout.byteAlignment());

            Set<String> javaFields = new TreeSet<>();
            for (MemoryLayout m : layout.memberLayouts()) {
                if (m instanceof PaddingLayout) {
                    continue;
                }
                String f = m.name().orElseThrow();
                javaFields.add(f);
                String key = s + "." + f;
                if (!c.containsKey(key)) {
                    continue; // reported below as a field-set mismatch
                }
                check(errors, key, cLong(key), layout.byteOffset(groupElement(f)));
                check(errors, key + " " + f + "$offset()", cLong(key), (long)
                        cls.getMethod(f + "$offset").invoke(null));
                check(errors, key + ":size", cLong(key + ":size"), m.byteSize());
            }
            Set<String> cFields = c.keySet().stream()
                    .filter(k -> k.startsWith(s + ".") && !k.contains(":"))
                    .map(k -> k.substring(s.length() + 1))
                    .collect(Collectors.toCollection(TreeSet::new));
            if (!cFields.equals(javaFields)) {
                errors.add(s + ": fields in C " + cFields + " but in Java " + javaFields);
            }
        }
        assertTrue(errors.isEmpty(), "C and Java layouts differ:\n" + String.join("\n", errors));
    }

    @Test
    void functionPointerSignaturesMatch() throws ReflectiveOperationException {
        List<String> errors = new ArrayList<>();
        Set<String> cSigs = new TreeSet<>();
        for (var e : c.entrySet()) {
            if (!e.getKey().startsWith("sig:")) {
                continue;
            }
            String name = e.getKey().substring(4);
            cSigs.add(name);
            Class<?> cls = Class.forName(PKG + name.replace('.', '$'));
            FunctionDescriptor d =
                    (FunctionDescriptor) cls.getMethod("descriptor").invoke(null);
            if (!e.getValue().equals(signature(d))) {
                errors.add(name + ": C " + e.getValue() + " != Java " + signature(d) + " (" + d + ")");
            }
        }
        // every function-pointer field the bindings have must have been checked
        for (var e : STRUCTS.entrySet()) {
            for (Class<?> nested : e.getValue().getDeclaredClasses()) {
                String name = e.getKey() + "." + nested.getSimpleName();
                if (!cSigs.contains(name)) {
                    errors.add(name + ": function-pointer field not printed by abi_layout.c");
                }
            }
        }
        // the bridge fields are declared with the nccltj_*_fn typedefs
        for (String[] p :
                new String[][] {{"control", "nccltj_control_fn"}, {"getCollInfo", "nccltj_get_coll_info_fn"}}) {
            FunctionDescriptor field = (FunctionDescriptor) Class.forName(PKG + "nccltj_bridge_t$" + p[0])
                    .getMethod("descriptor")
                    .invoke(null);
            FunctionDescriptor typedef = (FunctionDescriptor)
                    Class.forName(PKG + p[1]).getMethod("descriptor").invoke(null);
            if (!field.equals(typedef)) {
                errors.add("nccltj_bridge_t." + p[0] + " " + field + " != " + p[1] + " " + typedef);
            }
        }
        assertTrue(cSigs.size() >= 17, "too few signatures printed: " + cSigs);
        assertTrue(errors.isEmpty(), "C and Java signatures differ:\n" + String.join("\n", errors));
    }

    /** Same notation as abi_layout.c: i/f/p/v + size, e.g. {@code i4(i8,p8)}. */
    private static String signature(FunctionDescriptor d) {
        String ret = d.returnLayout().map(AbiLayoutTest::kind).orElse("v0");
        return ret + d.argumentLayouts().stream().map(AbiLayoutTest::kind).collect(Collectors.joining(",", "(", ")"));
    }

    private static String kind(MemoryLayout l) {
        char k;
        if (l instanceof AddressLayout) {
            k = 'p';
        } else if (l instanceof ValueLayout v && (v.carrier() == float.class || v.carrier() == double.class)) {
            k = 'f';
        } else if (l instanceof ValueLayout) {
            k = 'i';
        } else {
            k = '?';
        }
        return k + Long.toString(l.byteSize());
    }

    @Test
    void constantsMatch() throws ReflectiveOperationException {
        List<String> errors = new ArrayList<>();
        Set<String> javaConstants = Arrays.stream(NcclTunerAbi.class.getDeclaredMethods())
                .filter(m -> Modifier.isPublic(m.getModifiers())
                        && Modifier.isStatic(m.getModifiers())
                        && m.getParameterCount() == 0)
                .map(Method::getName)
                .collect(Collectors.toCollection(TreeSet::new));
        Set<String> cConstants = new TreeSet<>();
        for (var e : c.entrySet()) {
            String name = e.getKey();
            if (name.contains(".") || name.contains(":") || STRUCTS.containsKey(name)) {
                continue;
            }
            cConstants.add(name);
            if (!javaConstants.contains(name)) {
                continue; // reported below
            }
            Method m = NcclTunerAbi.class.getMethod(name);
            Object java = m.invoke(null);
            boolean same = switch (java) {
                case Integer i -> i.longValue() == Long.parseLong(e.getValue());
                case Long l -> l == Long.parseLong(e.getValue());
                case Double d -> d == Double.parseDouble(e.getValue());
                case MemorySegment s -> s.getString(0).equals(e.getValue());
                default -> false;
            };
            if (!same) {
                errors.add(name + ": C " + e.getValue() + " != Java " + describe(java));
            }
        }
        if (!cConstants.equals(javaConstants)) {
            Set<String> onlyC = new TreeSet<>(cConstants);
            onlyC.removeAll(javaConstants);
            Set<String> onlyJava = new TreeSet<>(javaConstants);
            onlyJava.removeAll(cConstants);
            errors.add("constants only in abi_layout.c " + onlyC + ", only in NcclTunerAbi " + onlyJava);
        }
        assertTrue(errors.isEmpty(), "C and Java constants differ:\n" + String.join("\n", errors));
    }

    private static String describe(Object v) {
        return v instanceof MemorySegment s ? '"' + s.getString(0) + '"' : String.valueOf(v);
    }

    /** The accessors hand-written code uses, by name: a rename in the bindings breaks compilation. */
    @Test
    void accessorsUsedByHandWrittenCode() {
        assertEquals(cLong("nccltj_bridge_t"), nccltj_bridge_t.sizeof());
        assertEquals(cLong("nccltj_bridge_t.abiVersion"), nccltj_bridge_t.abiVersion$offset());
        assertEquals(cLong("nccltj_bridge_t.engineAbiVersion"), nccltj_bridge_t.engineAbiVersion$offset());
        assertEquals(cLong("nccltj_bridge_t.control"), nccltj_bridge_t.control$offset());
        assertEquals(cLong("nccltj_bridge_t.getCollInfo"), nccltj_bridge_t.getCollInfo$offset());
        assertEquals(cLong("nccltj_call_t"), nccltj_call_t.sizeof());
        assertEquals(cLong("nccltj_call_t.handle"), nccltj_call_t.handle$offset());
        assertEquals(cLong("nccltj_call_t.chunkSize"), nccltj_call_t.chunkSize$offset());
        assertEquals(cLong("NCCLTJ_CALL_INIT"), NcclTunerAbi.NCCLTJ_CALL_INIT());
        assertEquals(cLong("NCCLTJ_HANDLE_CHUNK_SIZES"), io.nccltuner.engine.Engine.CHUNK_SIZES);
        assertEquals(cLong("NCCL_TUNER_JAVA_ABI_VERSION"), NcclTunerAbi.NCCL_TUNER_JAVA_ABI_VERSION());
        assertEquals(cLong("NCCL_NUM_ALGORITHMS"), NcclTunerAbi.NCCL_NUM_ALGORITHMS());
        assertEquals(cLong("NCCL_NUM_PROTOCOLS"), NcclTunerAbi.NCCL_NUM_PROTOCOLS());
        assertEquals(cLong("NCCL_TUNING"), NcclTunerAbi.NCCL_TUNING());
        assertEquals(cLong("NCCL_LOG_WARN"), NcclTunerAbi.NCCL_LOG_WARN());
        assertEquals(cLong("NCCL_LOG_INFO"), NcclTunerAbi.NCCL_LOG_INFO());
        assertEquals(cLong("ncclFuncAllReduce"), NcclTunerAbi.ncclFuncAllReduce());
        assertEquals(cLong("ncclSuccess"), NcclTunerAbi.ncclSuccess());
        assertEquals(cLong("nccltj_hw_t"), nccltj_hw_t.sizeof());
        assertEquals(cLong("ncclNvlDomainInfo_v5_t"), ncclNvlDomainInfo_v5_t.sizeof());
        // TunerConstant's offsets (from the bindings) are the C compiler's, for v5/v6 and for v7
        assertEquals(cLong("ncclTunerConstants_v5_t"), io.nccltuner.policy.TunerConstant.STRUCT_BYTES_V5);
        assertEquals(1152, io.nccltuner.policy.TunerConstant.structBytes(6));
        assertEquals(cLong("ncclTunerConstants_v7_t"), io.nccltuner.policy.TunerConstant.STRUCT_BYTES_V7);
        assertEquals(1272, io.nccltuner.policy.TunerConstant.structBytes(7));
        assertEquals(
                cLong("ncclTunerConstants_v5_t.hwLatencies"),
                io.nccltuner.policy.TunerConstant.parse("hwLatencies.NVLINK.TREE.LL", 1)
                        .byteOffset(5));
        assertEquals(
                cLong("ncclTunerConstants_v5_t.perChMaxNVLSTreeBws") + (3 * 3 + 2) * 8,
                io.nccltuner.policy.TunerConstant.parse("perChMaxNVLSTreeBws.BLACKWELL.4NODES", 1)
                        .byteOffset(6));
        assertEquals(
                cLong("ncclTunerConstants_v5_t.llMaxBws") + (2 * 3) * 8,
                io.nccltuner.policy.TunerConstant.parse("llMaxBws.HOPPER.1NODE", 1)
                        .byteOffset(5));
        assertEquals(
                cLong("ncclTunerConstants_v7_t.hwLatencies") + ((2 * 7 + 6) * 3 + 2) * 8,
                io.nccltuner.policy.TunerConstant.parse("hwLatencies.NET.PAT.SIMPLE", 1)
                        .byteOffset(7));
        assertEquals(
                cLong("ncclTunerConstants_v7_t.perChMaxRingLL128Bws") + (2 * 3 + 1) * 8,
                io.nccltuner.policy.TunerConstant.parse("perChMaxRingLL128Bws.HOPPER.2NODES", 1)
                        .byteOffset(7));
        assertEquals(
                cLong("ncclTunerConstants_v7_t.perChMaxNVLSTreeBws") + (4 * 3 + 2) * 8,
                io.nccltuner.policy.TunerConstant.parse("perChMaxNVLSTreeBws.RUBIN.4NODES", 1)
                        .byteOffset(7));
        assertEquals(
                cLong("ncclTunerConstants_v7_t.llMaxBws") + (4 * 3) * 8,
                io.nccltuner.policy.TunerConstant.parse("llMaxBws.RUBIN.1NODE", 1)
                        .byteOffset(7));
        // the last double of v7's struct
        assertEquals(
                cLong("ncclTunerConstants_v7_t") - 8,
                io.nccltuner.policy.TunerConstant.parse("perChMaxNVLSTreeBws.RUBIN.4NODES", 1)
                        .byteOffset(7));
    }

    private static void check(List<String> errors, String what, long cValue, long javaValue) {
        if (cValue != javaValue) {
            errors.add(what + ": C " + cValue + " != Java " + javaValue);
        }
    }
}
