package io.nccltuner.model;

import java.util.List;

/**
 * One communicator whose latency/bandwidth table a log holds (NCCL prints it on the
 * communicator's rank 0 only), with the selection lines attributed to it.
 *
 * @param index 1-based order of the table in the log
 * @param host host name from the line prefix
 * @param pid process id from the line prefix
 * @param tid thread that printed the table
 * @param commId the communicator pointer NCCL printed ("0xc23bec0"), or null if the log had no
 *     INIT lines for it
 * @param rank rank of the process in the communicator (0 for a table), -1 if unknown
 * @param nRanks ranks, 0 if the log did not say
 * @param nNodes nodes, 0 if the log did not say (NCCL prints it from 2.20, INIT subsystem)
 * @param mnnvl whether NCCL reported "MNNVL 1"
 * @param nChannels collective channels ("N coll channels"), 0 if the log did not say
 * @param version the release the process printed ("NCCL version ..."), or null
 * @param table the table
 * @param tableLine line of the table's first row
 * @param selections selection lines of the same process after this table and before the next one
 */
public record Communicator(
        int index,
        String host,
        long pid,
        long tid,
        String commId,
        int rank,
        int nRanks,
        int nNodes,
        boolean mnnvl,
        int nChannels,
        NcclVersion version,
        CostTable table,
        int tableLine,
        List<LoggedSelection> selections) {
    public Communicator {
        selections = List.copyOf(selections);
    }

    /**
     * The release whose facts the model should use: the logged one, or else a guess from the table
     * and line formats (6 algorithms: 2.22.3; 7 with 2.23-style lines: 2.23.4; otherwise 2.28.9).
     *
     * @return the release
     */
    public NcclVersion versionOrAssumed() {
        if (version != null) {
            return version;
        }
        if (table.numAlgorithms() < 7) {
            return new NcclVersion(2, 22, 3);
        }
        for (LoggedSelection s : selections) {
            if (s.format() == SelectionFormat.COLLECTIVE_IDS_WITH_TIME) {
                return new NcclVersion(2, 23, 4);
            }
        }
        return new NcclVersion(2, 28, 9);
    }

    /**
     * @return the communicator's shape, compute capability unknown
     * @throws IllegalStateException if the log did not give nRanks or nNodes
     */
    public CommShape shape() {
        if (nRanks <= 0 || nNodes <= 0) {
            throw new IllegalStateException("the log does not give nRanks and nNodes for communicator " + label()
                    + " (NCCL prints them with NCCL_DEBUG_SUBSYS=INIT, nNodes from 2.20)");
        }
        return new CommShape(
                nRanks, nNodes, Math.min(nChannels, NcclFacts.MAX_CHANNELS), 0, CommShape.CC_MAX, mnnvl, null);
    }

    /** @return the cost model of this communicator with what the log says */
    public CostModel model() {
        return CostModel.of(versionOrAssumed(), shape(), table);
    }

    /** @return "comm 0xc23bec0 (host vm, pid 746)" or "table 1 (host vm, pid 746)" */
    public String label() {
        String who = commId != null ? "comm " + commId : "table " + index;
        return who + " (host " + host + ", pid " + pid + ")";
    }
}
