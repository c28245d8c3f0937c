package io.nccltuner.policy;

/**
 * NCCL algorithms, with the ids NCCL uses as the first index of the cost table.
 *
 * <p>Source: NCCL src/include/nccl_common.h (2.23 .. 2.28): NCCL_ALGO_TREE 0, RING 1,
 * COLLNET_DIRECT 2, COLLNET_CHAIN 3, NVLS 4, NVLS_TREE 5, PAT 6 (PAT added in 2.23, so tables
 * before 2.23 have 6 rows). EnumNames are NCCL's spellings as accepted by {@code NCCL_ALGO}.
 */
public enum Algorithm {
    TREE,
    RING,
    COLLNET_DIRECT,
    COLLNET_CHAIN,
    NVLS,
    NVLS_TREE,
    PAT;

    private static final Algorithm[] BY_ID = values();

    /** @return NCCL's algorithm id, the row index in the cost table */
    public int id() {
        return ordinal();
    }

    /**
     * @param id NCCL algorithm id
     * @return the algorithm
     * @throws IllegalArgumentException if the id is not in [0, 7)
     */
    public static Algorithm ofId(int id) {
        return EnumNames.ofId(BY_ID, id, "algorithm");
    }

    /**
     * Case-insensitive lookup of an NCCL spelling ("ring", "NVLS_TREE"; "CollNetDirect" as NCCL's
     * logs print it is accepted too).
     *
     * @return the algorithm, or null if the name is unknown
     */
    public static Algorithm parse(String name) {
        return EnumNames.lookup(BY_ID, name);
    }
}
