package io.nccltuner.calibrate;

import io.nccltuner.policy.Algorithm;
import io.nccltuner.policy.Protocol;
import io.nccltuner.policy.TunerConstant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A full set of NCCL's cost-model constants, {@code ncclTunerConstants_v5_t} (NCCL 2.28.3+
 * src/include/plugin/tuner/tuner_v5.h): baseLatencies[7 algorithms][3 protocols] and
 * hwLatencies[3 links][7][3] in microseconds, then llMaxBws, perChMaxRingLL128Bws,
 * perChMaxTreeLL128Bws, perChMaxTreeBws, perChMaxNVLSTreeBws, each [4 compute-capability rows][3
 * node scales] in GB/s. Held as one flat array of 144 doubles in that order; each entry is named as
 * a policy's {@code constants:} names it ({@link TunerConstant}: {@code hwLatencies.NET.RING.SIMPLE},
 * {@code perChMaxTreeBws.HOPPER.4NODES}). Immutable: {@link #with} returns a copy.
 *
 * <p>{@link #defaults()} are NCCL 2.28.9's {@code ncclTunerConstantsDefaults} (src/graph/tuning.cc,
 * what {@code ncclTopoInitTunerConstants} copies before the tuner's init). NCCL 2.30.7 has the same
 * values except perChMaxRingLL128Bws.BLACKWELL (40.0 at every scale there).
 */
public final class ModelConstants {
    /** Entries of baseLatencies (7 x 3). */
    static final int BASE = 0;
    /** First entry of hwLatencies (3 x 7 x 3). */
    static final int HW = 21;
    /** First entry of the five bandwidth arrays (5 x 4 x 3). */
    static final int BW = 84;
    /** Entries in all. */
    public static final int SIZE = 144;

    /** The bandwidth arrays in struct order. */
    public static final List<String> BW_ARRAYS = List.of(
            "llMaxBws", "perChMaxRingLL128Bws", "perChMaxTreeLL128Bws", "perChMaxTreeBws", "perChMaxNVLSTreeBws");

    private static final double[] DEFAULTS = new double[SIZE];

    static {
        double[][] base = {
            {6.8, 14.0, 8.4}, {6.6, 14.0, 8.4}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {8.0, 8.0, 8.0}
        };
        double[][][] hw = {
            {{.6, 1.25, 4.0}, {.6, 1.9, 3.4}, {0, 0, 3.7}, {0, 0, 2.8}, {0, 0, 25}, {0, 0, 25}, {0, 0, 4.0}}, // NVLINK
            {{1.0, 1.9, 4.0}, {1.0, 2.5, 5.7}, {0, 0, 3.7}, {0, 0, 2.8}, {0, 0, 0}, {0, 0, 0}, {0, 0, 4.0}}, // PCI
            {{5.0, 8.5, 14}, {2.7, 4.0, 14.0}, {0, 0, 31}, {0, 0, 30}, {0, 0, 18}, {0, 0, 20.9}, {0, 0, 14}}
        }; // NET
        double[][][] bw = {
            {{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}, {2 * 141.0, 2 * 45.0, 2 * 35.0}},
            {{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 36.7}, {2 * 36.7, 34.6, 2 * 36.7}},
            {{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}, {55.6, 31.67, 20.0}},
            {{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {70.0, 42.8, 24.0}},
            {{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {0.0, 57.7, 45.5}, {0.0, 96.0, 43.8}}
        };
        for (int a = 0; a < 7; a++) {
            for (int p = 0; p < 3; p++) {
                DEFAULTS[BASE + a * 3 + p] = base[a][p];
                for (int l = 0; l < 3; l++) {
                    DEFAULTS[HW + (l * 7 + a) * 3 + p] = hw[l][a][p];
                }
            }
        }
        for (int k = 0; k < 5; k++) {
            for (int c = 0; c < 4; c++) {
                for (int s = 0; s < 3; s++) {
                    DEFAULTS[BW + (k * 4 + c) * 3 + s] = bw[k][c][s];
                }
            }
        }
    }

    private static final ModelConstants DEFAULT = new ModelConstants(DEFAULTS.clone());

    private final double[] v;

    private ModelConstants(double[] v) {
        this.v = v;
    }

    /** @return NCCL 2.28.9's default constants (src/graph/tuning.cc ncclTunerConstantsDefaults) */
    public static ModelConstants defaults() {
        return DEFAULT;
    }

    /** @return the index of baseLatencies[algorithm][protocol] */
    public static int base(Algorithm a, Protocol p) {
        return BASE + a.id() * 3 + p.id();
    }

    /** @return the index of hwLatencies[link][algorithm][protocol]; link 0 NVLINK, 1 PCI, 2 NET */
    public static int hw(int link, Algorithm a, Protocol p) {
        return HW + (link * 7 + a.id()) * 3 + p.id();
    }

    /**
     * @param array 0 llMaxBws, 1 perChMaxRingLL128Bws, 2 perChMaxTreeLL128Bws, 3 perChMaxTreeBws, 4
     *     perChMaxNVLSTreeBws
     * @param row compute-capability row 0..3 (for llMaxBws on more than one node: the CPU row, 0
     *     Intel, 1 AMD)
     * @param scale 0 one node, 1 two nodes, 2 more
     * @return the index of that bandwidth entry
     */
    public static int bw(int array, int row, int scale) {
        return BW + (array * 4 + row) * 3 + scale;
    }

    /** @return the value at an index (microseconds or GB/s) */
    public double get(int index) {
        return v[index];
    }

    /** @return a copy with one entry changed */
    public ModelConstants with(int index, double value) {
        double[] c = v.clone();
        c[index] = value;
        return new ModelConstants(c);
    }

    /** @return a copy with a policy's constant applied (names outside the 4-row struct are ignored) */
    public ModelConstants with(TunerConstant k) {
        int i = indexOf(k);
        return i < 0 ? this : with(i, k.value());
    }

    /**
     * @param k a constant as a policy names it
     * @return its index here, or -1 for a RUBIN entry (tuner v7's fifth row, not in this struct)
     */
    public static int indexOf(TunerConstant k) {
        List<Integer> x = k.index();
        return switch (k.array()) {
            case "baseLatencies" -> BASE + x.get(0) * 3 + x.get(1);
            case "hwLatencies" -> HW + (x.get(0) * 7 + x.get(1)) * 3 + x.get(2);
            default -> x.get(0) >= 4 ? -1 : BW + (BW_ARRAYS.indexOf(k.array()) * 4 + x.get(0)) * 3 + x.get(1);
        };
    }

    /** @return the policy name of an index, e.g. {@code hwLatencies.NET.RING.SIMPLE} */
    public static String name(int i) {
        if (i < HW) {
            return "baseLatencies." + Algorithm.ofId(i / 3) + "." + Protocol.ofId(i % 3);
        }
        if (i < BW) {
            int j = i - HW;
            return "hwLatencies." + TunerConstant.LINKS.get(j / 21) + "." + Algorithm.ofId(j / 3 % 7) + "."
                    + Protocol.ofId(j % 3);
        }
        int j = i - BW;
        return BW_ARRAYS.get(j / 12) + "." + TunerConstant.COMPCAPS.get(j / 3 % 4) + "."
                + TunerConstant.SCALES.get(j % 3);
    }

    /** @return "us" for the latency arrays, "GB/s" for the bandwidth arrays */
    public static String unit(int i) {
        return i < BW ? "us" : "GB/s";
    }

    /** @return the entries that differ from {@code other}, as policy constants */
    public List<TunerConstant> differences(ModelConstants other) {
        List<TunerConstant> out = new ArrayList<>();
        for (int i = 0; i < SIZE; i++) {
            if (v[i] != other.v[i]) {
                out.add(TunerConstant.parse(name(i), v[i]));
            }
        }
        return out;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ModelConstants m && Arrays.equals(v, m.v);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(v);
    }
}
