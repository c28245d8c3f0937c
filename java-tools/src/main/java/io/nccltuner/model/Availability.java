package io.nccltuner.model;

/** Whether NCCL offers a cost-table entry for a call, as far as the log tells. */
public enum Availability {
    /** The table has a non-zero bandwidth and NCCL computes a cost for it. */
    AVAILABLE,
    /**
     * The table has a bandwidth, but NCCL may still leave the entry at -1 for reasons the log does
     * not show (see {@link NcclFacts#isConditional}); the model assumes it is offered.
     */
    CONDITIONAL,
    /** Bandwidth 0.0 in the table (or not in the log): NCCL's cost is -1. */
    UNAVAILABLE
}
