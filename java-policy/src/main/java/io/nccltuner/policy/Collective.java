package io.nccltuner.policy;

/**
 * The collectives a tuner is asked about, with their ncclFunc_t ids.
 *
 * <p>Source: NCCL src/include/nccl_common.h (2.19 .. 2.28): ncclFuncBroadcast 0, Reduce 1,
 * AllGather 2, ReduceScatter 3, AllReduce 4 (SendRecv 5, Send 6, Recv 7 never reach
 * getCollInfo). EnumNames are NCCL's ncclFuncStr spellings.
 */
public enum Collective {
    Broadcast,
    Reduce,
    AllGather,
    ReduceScatter,
    AllReduce;

    private static final Collective[] BY_ID = values();

    /** Number of collectives the engine's decision table is indexed by. */
    public static final int COUNT = BY_ID.length;

    /** @return the ncclFunc_t value */
    public int id() {
        return ordinal();
    }

    /**
     * @param id ncclFunc_t value
     * @return the collective, or null for ids outside [0, 5) (point-to-point or unknown)
     */
    public static Collective ofId(int id) {
        return id >= 0 && id < BY_ID.length ? BY_ID[id] : null;
    }

    /** Case-insensitive lookup ("allreduce", "AllReduce", "all_reduce"); null if unknown. */
    public static Collective parse(String name) {
        return EnumNames.lookup(BY_ID, name);
    }
}
