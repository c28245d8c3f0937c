package io.nccltuner.model;

import io.nccltuner.policy.Collective;
import io.nccltuner.policy.Protocol;
import java.util.ArrayList;
import java.util.List;

/**
 * What {@code nccl-tuner explain} computes: for one communicator, collective and numPipeOps, per
 * size every entry's predicted time, NCCL's pick, what NCCL logged for that size, and optionally
 * what a tuner policy makes NCCL pick.
 */
public final class Explain {
    private Explain() {}

    /**
     * A v3 tuner as NCCL calls it: it may edit the cost table in place and returns the nChannels it
     * sets (0 leaves NCCL's choice).
     */
    @FunctionalInterface
    public interface Tuner {
        /**
         * @param collective the collective
         * @param nBytes message size, bytes
         * @param numPipeOps pipelined operations
         * @param costTable numAlgo x numProto times in microseconds, algorithm-major, -1 = ignore; in/out
         * @param numAlgo algorithms
         * @param numProto protocols
         * @return nChannels, 0 for no change
         */
        int getCollInfo(
                Collective collective, long nBytes, int numPipeOps, float[] costTable, int numAlgo, int numProto);
    }

    /**
     * One size.
     *
     * @param nBytes message size as NCCL passes it to the tuner, bytes
     * @param prediction the model's prediction
     * @param logged selection lines of this collective and size (see {@link #loggedFor})
     * @param match how the model's pick compares with them; UNMATCHED when there are none
     * @param policyPick NCCL's pick after the tuner edited the model's cost table, or null without a
     *     tuner (or when the edited table has no entry {@code >= 0})
     * @param policyChannels nChannels the tuner set, 0 for none
     */
    public record Row(
            long nBytes,
            Prediction prediction,
            List<LoggedSelection> logged,
            TraceCheck.Verdict match,
            AlgoProto policyPick,
            int policyChannels) {
        public Row {
            logged = List.copyOf(logged);
        }

        /** @return the pick all logged lines agree on, or null when there are none or they differ */
        public AlgoProto loggedPick() {
            AlgoProto p = null;
            for (LoggedSelection s : logged) {
                if (p != null && !p.equals(s.pick())) {
                    return null;
                }
                p = s.pick();
            }
            return p;
        }
    }

    /**
     * Explains a list of sizes.
     *
     * @param model the communicator's model
     * @param selections the communicator's selection lines (may be empty)
     * @param collective the collective
     * @param sizes sizes in bytes, as NCCL passes them to the tuner
     * @param numPipeOps pipelined operations, >= 1
     * @param tuner the policy to apply, or null
     * @return one row per size
     */
    public static List<Row> rows(
            CostModel model,
            List<LoggedSelection> selections,
            Collective collective,
            List<Long> sizes,
            int numPipeOps,
            Tuner tuner) {
        List<Row> out = new ArrayList<>();
        int numProto = Protocol.values().length;
        for (long n : sizes) {
            Prediction p = model.predict(collective, n, numPipeOps);
            List<LoggedSelection> logged = loggedFor(model, selections, collective, n, numPipeOps);
            AlgoProto policyPick = null;
            int channels = 0;
            if (tuner != null) {
                float[] table = p.costTable();
                channels = tuner.getCollInfo(
                        collective, n, numPipeOps, table, model.table().numAlgorithms(), numProto);
                policyPick = NcclSelect.pick(table, numProto);
            }
            out.add(new Row(n, p, logged, verdict(p, logged), policyPick, channels));
        }
        return out;
    }

    /**
     * The selection lines that speak about a collective and size: lines naming the collective whose
     * nBytes (per-rank bytes times nRanks for 2.24+ AllGather/ReduceScatter) equals the size; lines
     * that name no collective (2.21 .. 2.22) only where their logged time fits the model's range for
     * the logged pick, since the same size of another collective costs differently.
     */
    static List<LoggedSelection> loggedFor(
            CostModel model, List<LoggedSelection> selections, Collective collective, long nBytes, int numPipeOps) {
        List<LoggedSelection> out = new ArrayList<>();
        int nRanks = model.shape().nRanks();
        Prediction p = null;
        for (LoggedSelection s : selections) {
            if (s.nBytes(nRanks) != nBytes) {
                continue;
            }
            if (s.collective() == collective) {
                out.add(s);
            } else if (s.collective() == null) {
                if (p == null) {
                    p = model.predict(collective, nBytes, numPipeOps);
                }
                CandidateTime t = p.candidate(s.pick());
                if (t != null && t.offered() && t.range().contains(s.time(), 5e-7 + 1e-6 * Math.abs(s.time()))) {
                    out.add(s);
                }
            }
        }
        return out;
    }

    private static TraceCheck.Verdict verdict(Prediction p, List<LoggedSelection> logged) {
        if (logged.isEmpty()) {
            return TraceCheck.Verdict.UNMATCHED;
        }
        for (LoggedSelection s : logged) {
            if (!p.possiblePicks().contains(s.pick())) {
                return TraceCheck.Verdict.MISMATCH;
            }
        }
        return p.ambiguous() ? TraceCheck.Verdict.AMBIGUOUS : TraceCheck.Verdict.EXACT;
    }
}
