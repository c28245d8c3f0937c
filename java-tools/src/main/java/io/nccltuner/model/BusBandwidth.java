package io.nccltuner.model;

import io.nccltuner.policy.Collective;

/**
 * nccl-tests' bus bandwidth: busbw = algbw x a factor of the collective and the rank count, so that
 * a collective's busbw compares with the links' speed whatever its rank count.
 *
 * <p>Source: nccl-tests src/*.cu, each collective's {@code GetBw} ({@code AllReduceGetBw} in
 * src/all_reduce.cu, {@code AllGatherGetBw} in src/all_gather.cu, ...; doc/PERFORMANCE.md): algbw =
 * bytes / 1e9 / seconds, and the factor is {@code 2 * (nranks - 1) / nranks} for AllReduce, {@code
 * (nranks - 1) / nranks} for AllGather and ReduceScatter, 1 for Broadcast and Reduce (the NVLS
 * AllReduce variant, {@code (n - 1) / (n + 1)} under {@code NCCL_ALGO=NVLS}, is not used here: the
 * tools compare configurations at one factor). The edges are nccl-tests': one rank makes the
 * factor 0 (nccl-tests prints busbw 0 for a one-rank AllReduce, AllGather or ReduceScatter) and 1
 * for Broadcast and Reduce. A rank count below 1 (not known) has no factor: NaN, so that a busbw of
 * an unknown communicator reads as unknown rather than as a number.
 */
public final class BusBandwidth {
    private BusBandwidth() {}

    /**
     * busbw / algbw.
     *
     * @param c the collective
     * @param nRanks the communicator's ranks
     * @return the factor (0 for one rank of AllReduce, AllGather or ReduceScatter), NaN when nRanks &lt; 1
     */
    public static double factor(Collective c, long nRanks) {
        if (nRanks < 1) {
            return Double.NaN;
        }
        return switch (c) {
            case AllReduce -> 2.0 * (nRanks - 1) / nRanks;
            case AllGather, ReduceScatter -> (double) (nRanks - 1) / nRanks;
            case Broadcast, Reduce -> 1.0;
        };
    }

    /**
     * nccl-tests' algbw.
     *
     * @param nBytes bytes as NCCL passes them to getCollInfo (nccl-tests' size column)
     * @param timeUs microseconds
     * @return GB/s (1e9 bytes per second)
     */
    public static double algbw(long nBytes, double timeUs) {
        return nBytes / 1.0e9 / (timeUs * 1e-6);
    }

    /**
     * nccl-tests' busbw.
     *
     * @param c the collective
     * @param nRanks the communicator's ranks
     * @param nBytes bytes as NCCL passes them to getCollInfo (nccl-tests' size column)
     * @param timeUs microseconds
     * @return GB/s (1e9 bytes per second): 0 for one rank of AllReduce, AllGather or ReduceScatter, NaN
     *     when nRanks &lt; 1 or the time is NaN
     */
    public static double busbw(Collective c, long nRanks, long nBytes, double timeUs) {
        return algbw(nBytes, timeUs) * factor(c, nRanks);
    }
}
