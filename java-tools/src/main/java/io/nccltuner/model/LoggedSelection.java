package io.nccltuner.model;

import io.nccltuner.policy.Collective;

/**
 * One selection line: what NCCL picked for a call, as {@link SelectionLine} parses it.
 *
 * @param line line number in the log (1-based)
 * @param format the line's era
 * @param collective the collective, or null where the format does not name it (2.21 .. 2.22)
 * @param loggedBytes the byte count as printed
 * @param pick the algorithm and protocol NCCL ran
 * @param time the logged predicted time of the pick in microseconds, NaN where not printed (2.24+)
 * @param channelLo first channel used, -1 where not printed
 * @param channelHi last channel used, -1 where not printed
 */
public record LoggedSelection(
        int line,
        SelectionFormat format,
        Collective collective,
        long loggedBytes,
        AlgoProto pick,
        double time,
        int channelLo,
        int channelHi) {

    /**
     * @return whether the logged bytes are per rank: AllGather and ReduceScatter lines of the 2.24+
     *     format, which print {@code count * typeSize} where the tuner gets nRanks times that
     */
    public boolean perRankBytes() {
        return format == SelectionFormat.COLLECTIVE_NAMES_WITH_CHANNELS
                && (collective == Collective.AllGather || collective == Collective.ReduceScatter);
    }

    /**
     * The size NCCL passed to the tuner for this call: the logged bytes, times nRanks for AllGather
     * and ReduceScatter lines of the 2.24+ format (which print per-rank bytes).
     *
     * @param nRanks ranks of the communicator
     * @return nBytes as in getCollInfo
     */
    public long nBytes(int nRanks) {
        return perRankBytes() ? loggedBytes * nRanks : loggedBytes;
    }
}
