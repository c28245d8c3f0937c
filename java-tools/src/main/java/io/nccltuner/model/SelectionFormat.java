package io.nccltuner.model;

/**
 * The eras of NCCL's per-call selection line (NCCL_DEBUG_SUBSYS=TUNING, printed by rank 0).
 * Before 2.21 the line exists only at TRACE level and is not read.
 */
public enum SelectionFormat {
    /**
     * 2.21 .. 2.22, src/enqueue.cc: {@code "%ld Bytes -> Algo %d proto %d time %f"}: no collective;
     * one line per cost-table evaluation, nBytes as the tuner gets it.
     */
    IDS_WITH_TIME,
    /**
     * 2.23, src/enqueue.cc: {@code "%s: %ld Bytes -> Algo %d proto %d time %f"} with the collective
     * name; one line per cost-table evaluation.
     */
    COLLECTIVE_IDS_WITH_TIME,
    /**
     * 2.24 .. 2.30, src/enqueue.cc: {@code "%s: %ld Bytes -> Algo %s proto %s
     * channel{Lo..Hi}={%d..%d}"}: algorithm and protocol names, one line per task (a coalesced call
     * prints one line per operation), bytes {@code count * typeSize}, i.e. per rank for AllGather and
     * ReduceScatter.
     */
    COLLECTIVE_NAMES_WITH_CHANNELS
}
