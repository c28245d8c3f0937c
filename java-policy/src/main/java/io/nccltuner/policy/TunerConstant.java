package io.nccltuner.policy;

import io.nccltuner.bindings.NcclTunerAbi;
import io.nccltuner.bindings.ncclTunerConstants_v5_t;
import io.nccltuner.bindings.ncclTunerConstants_v7_t;
import java.util.List;
import java.util.Locale;

/**
 * One entry of NCCL's model constants that a profile sets at init, named {@code array.INDEX.INDEX}
 * in the policy's {@code constants:} map. The struct NCCL passes depends on the tuner version:
 * ncclTunerConstants_v5_t under v5 and v6 (NCCL 2.28.3+ src/include/plugin/tuner/tuner_v5.h;
 * tuner_v6.h typedefs it), ncclTunerConstants_v7_t under v7 (NCCL 2.32.6
 * src/include/plugin/tuner/tuner_v7.h, read at NVIDIA/nccl 2449986): the same seven arrays in the
 * same order, but the five bandwidth arrays have a fifth compute-capability row (RUBIN), so every
 * array after llMaxBws starts further on. Byte offsets and dimensions come from the jextract
 * bindings of both structs ({@link ncclTunerConstants_v5_t}, {@link ncclTunerConstants_v7_t}).
 *
 * <table>
 *   <caption>arrays</caption>
 *   <tr><th>name</th><th>indices</th><th>unit</th></tr>
 *   <tr><td>baseLatencies</td><td>ALGORITHM.PROTOCOL</td><td>microseconds</td></tr>
 *   <tr><td>hwLatencies</td><td>LINK.ALGORITHM.PROTOCOL</td><td>microseconds</td></tr>
 *   <tr><td>llMaxBws, perChMaxRingLL128Bws, perChMaxTreeLL128Bws, perChMaxTreeBws,
 *       perChMaxNVLSTreeBws</td><td>COMPCAP.SCALE</td><td>GB/s</td></tr>
 * </table>
 *
 * ALGORITHM is NCCL's (TREE .. PAT), PROTOCOL LL, LL128 or SIMPLE, LINK NVLINK, PCI or NET,
 * COMPCAP VOLTA, AMPERE, HOPPER, BLACKWELL or RUBIN, SCALE 1NODE, 2NODES or 4NODES (NCCL_HW_*,
 * NCCL_*_COMPCAP_IDX, NCCL_TUNING_SCALE_*; src/include/plugin/nccl_tuner.h, 2.28.3 .. 2.32.6;
 * NCCL_RUBIN_COMPCAP_IDX 4 from 2.32.6). A RUBIN entry exists only in v7's struct: under v5/v6
 * the engine does not set it ({@link #fits}).
 *
 * @param name the name as written ("baseLatencies.RING.LL")
 * @param array the array ("baseLatencies")
 * @param index the indices, outermost first
 * @param value the value to set: microseconds for latencies, GB/s for bandwidths
 */
public record TunerConstant(String name, String array, List<Integer> index, double value) {
    /** Arrays in struct order, with their dimensions. */
    static final List<String> ARRAYS = List.of(
            "baseLatencies",
            "hwLatencies",
            "llMaxBws",
            "perChMaxRingLL128Bws",
            "perChMaxTreeLL128Bws",
            "perChMaxTreeBws",
            "perChMaxNVLSTreeBws");

    /** Link types (NCCL_HW_NVLINK 0, PCI 1, NET 2). */
    public static final List<String> LINKS = List.of("NVLINK", "PCI", "NET");

    /**
     * Compute-capability rows (NCCL_VOLTA_COMPCAP_IDX 0 .. BLACKWELL 3, RUBIN 4): v5/v6's struct
     * has the first four, v7's all five.
     */
    public static final List<String> COMPCAPS = List.of("VOLTA", "AMPERE", "HOPPER", "BLACKWELL", "RUBIN");

    /** NCCL_RUBIN_COMPCAP_IDX: the row only tuner v7 (NCCL 2.32.6) has. */
    public static final int RUBIN = NcclTunerAbi.NCCL_RUBIN_COMPCAP_IDX();

    /** The first tuner version whose constants have the RUBIN row. */
    public static final int RUBIN_TUNER_VERSION = 7;

    /** Tuning scales (NCCL_TUNING_SCALE_1NODE 0, 2NODES 1, 4NODES 2). */
    public static final List<String> SCALES = List.of("1NODE", "2NODES", "4NODES");

    /** Size of ncclTunerConstants_v5_t (v5, v6) in bytes: (21 + 63 + 5 * 12) doubles, 1152. */
    public static final long STRUCT_BYTES_V5 = ncclTunerConstants_v5_t.sizeof();

    /** Size of ncclTunerConstants_v7_t (v7) in bytes: (21 + 63 + 5 * 15) doubles, 1272. */
    public static final long STRUCT_BYTES_V7 = ncclTunerConstants_v7_t.sizeof();

    /**
     * @param tunerVersion the tuner ABI NCCL chose (5 or newer passes constants)
     * @return the size of the constants struct NCCL passes under that version
     */
    public static long structBytes(int tunerVersion) {
        return tunerVersion >= RUBIN_TUNER_VERSION ? STRUCT_BYTES_V7 : STRUCT_BYTES_V5;
    }

    /** Largest value accepted (microseconds or GB/s). */
    public static final double MAX_VALUE = 1e6;

    public TunerConstant {
        index = List.copyOf(index);
    }

    /**
     * @return the array's place in NCCL's struct, 0 (baseLatencies) .. 6 (perChMaxNVLSTreeBws): the
     *     order of ncclTunerConstants_v5_t and _v7_t (the table's sha256 names an entry by it)
     */
    public int arrayIndex() {
        return ARRAYS.indexOf(array);
    }

    /** @return "microseconds" or "GB/s" */
    public String unit() {
        return array.endsWith("Latencies") ? "microseconds" : "GB/s";
    }

    /** @return whether this entry names the RUBIN row, which only v7's struct has */
    public boolean rubin() {
        return !array.endsWith("Latencies") && index.get(0) == RUBIN;
    }

    /**
     * @param tunerVersion the tuner ABI NCCL chose
     * @return whether the constants struct of that version has this entry (a RUBIN entry needs v7)
     */
    public boolean fits(int tunerVersion) {
        return !rubin() || tunerVersion >= RUBIN_TUNER_VERSION;
    }

    /**
     * The entry's byte offset in the constants struct NCCL passes under a tuner version: the
     * array's offset and dimensions from the bindings (ncclTunerConstants_v7_t from v7,
     * ncclTunerConstants_v5_t before), the indices row-major within it.
     *
     * @param tunerVersion the tuner ABI NCCL chose (5 or newer)
     * @return the offset in bytes
     * @throws IllegalArgumentException if that version's struct has no such entry ({@link #fits})
     */
    public long byteOffset(int tunerVersion) {
        if (!fits(tunerVersion)) {
            throw new IllegalArgumentException(name + ": tuner v" + tunerVersion + "'s constants have no RUBIN row");
        }
        boolean v7 = tunerVersion >= RUBIN_TUNER_VERSION;
        long offset;
        long[] dims;
        switch (array) {
            case "baseLatencies" -> {
                offset = v7
                        ? ncclTunerConstants_v7_t.baseLatencies$offset()
                        : ncclTunerConstants_v5_t.baseLatencies$offset();
                dims = v7
                        ? ncclTunerConstants_v7_t.baseLatencies$dimensions()
                        : ncclTunerConstants_v5_t.baseLatencies$dimensions();
            }
            case "hwLatencies" -> {
                offset = v7
                        ? ncclTunerConstants_v7_t.hwLatencies$offset()
                        : ncclTunerConstants_v5_t.hwLatencies$offset();
                dims = v7
                        ? ncclTunerConstants_v7_t.hwLatencies$dimensions()
                        : ncclTunerConstants_v5_t.hwLatencies$dimensions();
            }
            case "llMaxBws" -> {
                offset = v7 ? ncclTunerConstants_v7_t.llMaxBws$offset() : ncclTunerConstants_v5_t.llMaxBws$offset();
                dims = v7
                        ? ncclTunerConstants_v7_t.llMaxBws$dimensions()
                        : ncclTunerConstants_v5_t.llMaxBws$dimensions();
            }
            case "perChMaxRingLL128Bws" -> {
                offset = v7
                        ? ncclTunerConstants_v7_t.perChMaxRingLL128Bws$offset()
                        : ncclTunerConstants_v5_t.perChMaxRingLL128Bws$offset();
                dims = v7
                        ? ncclTunerConstants_v7_t.perChMaxRingLL128Bws$dimensions()
                        : ncclTunerConstants_v5_t.perChMaxRingLL128Bws$dimensions();
            }
            case "perChMaxTreeLL128Bws" -> {
                offset = v7
                        ? ncclTunerConstants_v7_t.perChMaxTreeLL128Bws$offset()
                        : ncclTunerConstants_v5_t.perChMaxTreeLL128Bws$offset();
                dims = v7
                        ? ncclTunerConstants_v7_t.perChMaxTreeLL128Bws$dimensions()
                        : ncclTunerConstants_v5_t.perChMaxTreeLL128Bws$dimensions();
            }
            case "perChMaxTreeBws" -> {
                offset = v7
                        ? ncclTunerConstants_v7_t.perChMaxTreeBws$offset()
                        : ncclTunerConstants_v5_t.perChMaxTreeBws$offset();
                dims = v7
                        ? ncclTunerConstants_v7_t.perChMaxTreeBws$dimensions()
                        : ncclTunerConstants_v5_t.perChMaxTreeBws$dimensions();
            }
            default -> {
                offset = v7
                        ? ncclTunerConstants_v7_t.perChMaxNVLSTreeBws$offset()
                        : ncclTunerConstants_v5_t.perChMaxNVLSTreeBws$offset();
                dims = v7
                        ? ncclTunerConstants_v7_t.perChMaxNVLSTreeBws$dimensions()
                        : ncclTunerConstants_v5_t.perChMaxNVLSTreeBws$dimensions();
            }
        }
        long flat = 0;
        for (int i = 0; i < dims.length; i++) {
            flat = flat * dims[i] + index.get(i);
        }
        return offset + flat * Double.BYTES;
    }

    /**
     * Parses a name and value.
     *
     * @param name {@code array.INDEX.INDEX} as in the class comment
     * @param value microseconds or GB/s, 0 .. {@link #MAX_VALUE}
     * @return the entry
     * @throws IllegalArgumentException with a message naming what is wrong
     */
    public static TunerConstant parse(String name, double value) {
        String[] p = name.split("\\.");
        String array = p[0];
        if (!ARRAYS.contains(array)) {
            throw new IllegalArgumentException("unknown constant array '" + array + "'; use one of " + ARRAYS);
        }
        List<String> kinds = switch (array) {
            case "baseLatencies" -> List.of("algorithm", "protocol");
            case "hwLatencies" -> List.of("link", "algorithm", "protocol");
            default -> List.of("compCap", "scale");
        };
        if (p.length != kinds.size() + 1) {
            throw new IllegalArgumentException(array + " takes "
                    + String.join(
                            ".",
                            kinds.stream().map(k -> k.toUpperCase(Locale.ROOT)).toList()) + " (e.g. " + example(array)
                    + ")");
        }
        Integer[] idx = new Integer[kinds.size()];
        for (int i = 0; i < idx.length; i++) {
            String v = p[i + 1].toUpperCase(Locale.ROOT);
            int k = switch (kinds.get(i)) {
                case "algorithm" -> {
                    Algorithm a = Algorithm.parse(v);
                    yield a == null ? -1 : a.id();
                }
                case "protocol" -> {
                    Protocol pr = Protocol.parse(v);
                    yield pr == null ? -1 : pr.id();
                }
                case "link" -> LINKS.indexOf(v);
                case "compCap" -> COMPCAPS.indexOf(v);
                default -> SCALES.indexOf(v);
            };
            if (k < 0) {
                throw new IllegalArgumentException(
                        "unknown " + kinds.get(i) + " '" + p[i + 1] + "' in " + name + "; use "
                                + switch (kinds.get(i)) {
                                    case "algorithm" -> java.util.Arrays.toString(Algorithm.values());
                                    case "protocol" -> "LL, LL128 or SIMPLE";
                                    case "link" -> LINKS.toString();
                                    case "compCap" -> COMPCAPS.toString();
                                    default -> SCALES.toString();
                                });
            }
            idx[i] = k;
        }
        if (!Double.isFinite(value) || value < 0 || value > MAX_VALUE) {
            throw new IllegalArgumentException(value + " is outside 0.." + (long) MAX_VALUE);
        }
        return new TunerConstant(name, array, List.of(idx), value);
    }

    private static String example(String array) {
        return switch (array) {
            case "baseLatencies" -> "baseLatencies.RING.LL";
            case "hwLatencies" -> "hwLatencies.NVLINK.RING.SIMPLE";
            default -> array + ".HOPPER.1NODE";
        };
    }
}
