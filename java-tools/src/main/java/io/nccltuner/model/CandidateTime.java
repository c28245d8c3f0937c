package io.nccltuner.model;

/**
 * The model's predicted time for one cost-table entry of one call.
 *
 * @param algoProto the entry
 * @param availability whether NCCL offers it
 * @param time predicted time in microseconds from the table's printed values (or, after
 *     tightening, the middle of what the captured costs allow); -1 when unavailable
 * @param range every time the table's rounding (and any unknown communicator property) allows,
 *     microseconds; null when unavailable
 */
public record CandidateTime(AlgoProto algoProto, Availability availability, double time, Interval range) {
    /** @return whether NCCL's selection considers this entry (available or conditional) */
    public boolean offered() {
        return availability != Availability.UNAVAILABLE;
    }
}
