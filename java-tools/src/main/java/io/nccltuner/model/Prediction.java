package io.nccltuner.model;

import io.nccltuner.policy.Collective;
import java.util.List;

/**
 * The model's answer for one call: every entry's predicted time and NCCL's pick.
 *
 * @param collective the collective
 * @param nBytes message size as NCCL passes it to the tuner, bytes
 * @param numPipeOps pipelined operations
 * @param candidates one per cost-table entry of the communicator's table, algorithm-major
 * @param pick NCCL's pick by the model: strict minimum of the offered entries' times in
 *     algorithm-major order; null when no entry is offered
 * @param possiblePicks every offered entry whose lowest possible time is not above the lowest
 *     highest possible time of all of them, i.e. every entry that may be NCCL's pick given the
 *     rounding; contains {@code pick}
 */
public record Prediction(
        Collective collective,
        long nBytes,
        int numPipeOps,
        List<CandidateTime> candidates,
        AlgoProto pick,
        List<AlgoProto> possiblePicks) {
    public Prediction {
        candidates = List.copyOf(candidates);
        possiblePicks = List.copyOf(possiblePicks);
    }

    /** @return whether more than one entry may be NCCL's pick */
    public boolean ambiguous() {
        return possiblePicks.size() > 1;
    }

    /** @return the prediction for one entry, or null if the table has no such entry */
    public CandidateTime candidate(AlgoProto ap) {
        for (CandidateTime c : candidates) {
            if (c.algoProto().equals(ap)) {
                return c;
            }
        }
        return null;
    }

    /**
     * The cost table NCCL would hand a tuner for this call, as the model sees it: {@code
     * candidates().size()} floats (numAlgo x 3), algorithm-major, each entry's nominal time in
     * microseconds and -1 (NCCL_ALGO_PROTO_IGNORE) where the entry is not offered.
     *
     * @return a fresh array
     */
    public float[] costTable() {
        float[] t = new float[candidates.size()];
        for (int i = 0; i < t.length; i++) {
            CandidateTime c = candidates.get(i);
            t[i] = c.offered() ? (float) c.time() : -1f;
        }
        return t;
    }

    /** @return the pick's predicted time in microseconds, or -1 when there is no pick */
    public double pickTime() {
        return pick == null ? -1 : candidate(pick).time();
    }
}
