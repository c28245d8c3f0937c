package io.nccltuner.policy;

import java.util.List;
import java.util.Locale;

/**
 * One entry of NCCL's model constants (ncclTunerConstants_v5_t, NCCL 2.28.3+
 * src/include/plugin/tuner/tuner_v5.h; the same struct in v6) that a profile sets at init, named
 * {@code array.INDEX.INDEX} in the policy's {@code constants:} map:
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
 * COMPCAP VOLTA, AMPERE, HOPPER or BLACKWELL, SCALE 1NODE, 2NODES or 4NODES (NCCL_HW_*,
 * NCCL_*_COMPCAP_IDX, NCCL_TUNING_SCALE_*; src/include/plugin/nccl_tuner.h, 2.28.3 .. 2.30.7).
 * The struct is doubles only, in this order, with these dimensions: 7x3, 3x7x3, then five 4x3.
 *
 * @param name the name as written ("baseLatencies.RING.LL")
 * @param array the array ("baseLatencies")
 * @param index the indices, outermost first
 * @param value the value to set: microseconds for latencies, GB/s for bandwidths
 */
public record TunerConstant(String name, String array, List<Integer> index, double value) {
  /** Arrays in struct order, with their dimensions. */
  static final List<String> ARRAYS = List.of("baseLatencies", "hwLatencies", "llMaxBws", "perChMaxRingLL128Bws",
      "perChMaxTreeLL128Bws", "perChMaxTreeBws", "perChMaxNVLSTreeBws");

  /** Link types (NCCL_HW_NVLINK 0, PCI 1, NET 2). */
  public static final List<String> LINKS = List.of("NVLINK", "PCI", "NET");

  /** Compute-capability rows of v5/v6 (NCCL_VOLTA_COMPCAP_IDX 0 .. BLACKWELL 3). */
  public static final List<String> COMPCAPS = List.of("VOLTA", "AMPERE", "HOPPER", "BLACKWELL");

  /** Tuning scales (NCCL_TUNING_SCALE_1NODE 0, 2NODES 1, 4NODES 2). */
  public static final List<String> SCALES = List.of("1NODE", "2NODES", "4NODES");

  /** Size of ncclTunerConstants_v5_t in bytes: (21 + 63 + 5 * 12) doubles. */
  public static final long STRUCT_BYTES = (21 + 63 + 5 * 12) * Double.BYTES;

  /** Largest value accepted (microseconds or GB/s). */
  public static final double MAX_VALUE = 1e6;

  public TunerConstant {
    index = List.copyOf(index);
  }

  /** @return "microseconds" or "GB/s" */
  public String unit() {
    return array.endsWith("Latencies") ? "microseconds" : "GB/s";
  }

  /** @return the entry's byte offset in ncclTunerConstants_v5_t */
  public long byteOffset() {
    long doubles;
    switch (array) {
      case "baseLatencies" -> doubles = index.get(0) * 3L + index.get(1);
      case "hwLatencies" -> doubles = 21 + (index.get(0) * 7L + index.get(1)) * 3 + index.get(2);
      default -> doubles = 21 + 63 + ARRAYS.indexOf(array) * 12L - 2 * 12L + index.get(0) * 3L + index.get(1);
    }
    return doubles * Double.BYTES;
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
      throw new IllegalArgumentException(array + " takes " + String.join(".", kinds.stream()
          .map(k -> k.toUpperCase(Locale.ROOT)).toList()) + " (e.g. " + example(array) + ")");
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
        throw new IllegalArgumentException("unknown " + kinds.get(i) + " '" + p[i + 1] + "' in " + name + "; use "
            + switch (kinds.get(i)) {
              case "algorithm" -> java.util.Arrays.toString(Algorithm.values());
              case "protocol" -> "LL, LL128 or SIMPLE";
              case "link" -> LINKS.toString();
              case "compCap" -> COMPCAPS + " (v7's RUBIN row is not supported: the plugin exports v3..v6)";
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
