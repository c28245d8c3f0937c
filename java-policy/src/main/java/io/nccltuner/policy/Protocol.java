package io.nccltuner.policy;

/**
 * NCCL protocols, with the ids NCCL uses as the second index of the cost table.
 *
 * <p>Source: NCCL src/include/nccl_common.h: NCCL_PROTO_LL 0, LL128 1, SIMPLE 2
 * (NCCL_NUM_PROTOCOLS 3 in every release since 2.7).
 */
public enum Protocol {
    LL,
    LL128,
    SIMPLE;

    private static final Protocol[] BY_ID = values();

    /** @return NCCL's protocol id, the column index in the cost table */
    public int id() {
        return ordinal();
    }

    /**
     * @param id NCCL protocol id
     * @return the protocol
     * @throws IllegalArgumentException if the id is not in [0, 3)
     */
    public static Protocol ofId(int id) {
        return EnumNames.ofId(BY_ID, id, "protocol");
    }

    /** Case-insensitive lookup ("Simple" as NCCL logs print it, "SIMPLE"); null if unknown. */
    public static Protocol parse(String name) {
        return EnumNames.lookup(BY_ID, name);
    }
}
