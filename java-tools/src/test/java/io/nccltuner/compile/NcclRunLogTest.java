package io.nccltuner.compile;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.nccltuner.policy.Algorithm;
import io.nccltuner.policy.Collective;
import io.nccltuner.policy.InputException;
import io.nccltuner.policy.Protocol;
import org.junit.jupiter.api.Test;

/** The compiler reads selection lines through the cost model's SelectionLine. */
class NcclRunLogTest {
    private static final String P = "h:1:1 [0] NCCL INFO ";

    @Test
    void selectionLinesOfEachEra() throws Exception {
        assertEquals(
                new RunSelection("f:1", null, 2, 1, 1048576, Algorithm.RING, Protocol.LL128),
                NcclRunLog.selection("f:1", P + "1048576 Bytes -> Algo 1 proto 1 time 39.646954")
                        .resolve(2, 1));
        assertEquals(
                new RunSelection("f:2", Collective.AllGather, 2, 1, 4096, Algorithm.RING, Protocol.LL),
                NcclRunLog.selection("f:2", P + "AllGather: 4096 Bytes -> Algo 1 proto 0 time 9.5")
                        .resolve(2, 1));
        NcclRunLog.RawSelection rs = NcclRunLog.selection(
                "f:3", P + "ReduceScatter: 4096 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..1}");
        assertEquals(
                new RunSelection("f:3", Collective.ReduceScatter, 2, 1, 8192, Algorithm.RING, Protocol.LL),
                rs.resolve(2, 1));
        assertNull(rs.resolve(0, 0), "per-rank bytes with nRanks unknown");
    }

    @Test
    void otherFunctionsAreSkippedAndUnreadableLinesRefused() throws Exception {
        assertNull(
                NcclRunLog.selection("f:1", P + "SendRecv: 64 Bytes -> Algo RING proto SIMPLE channel{Lo..Hi}={0..0}"));
        assertNull(NcclRunLog.selection("f:1", P + "comm 0x1 rank 0 nRanks 2 nNodes 1 localRanks 2 localRank 0"));
        InputException e = assertThrows(
                InputException.class,
                () -> NcclRunLog.selection(
                        "f:4", P + "AllReduce: 64 Bytes -> Algo RINGG proto LL channel{Lo..Hi}={0..0}"));
        assertEquals("f:4: selection line: unknown algorithm/protocol 'RINGG/LL'", e.getMessage());
    }
}
