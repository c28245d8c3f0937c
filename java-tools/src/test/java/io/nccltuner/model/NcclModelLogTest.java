package io.nccltuner.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nccltuner.policy.Algorithm;
import io.nccltuner.policy.Collective;
import io.nccltuner.policy.Protocol;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Reading NCCL INFO logs of three table/selection-line eras, and refusing what does not parse. */
class NcclModelLogTest {
    static final AlgoProto TREE_LL = new AlgoProto(Algorithm.TREE, Protocol.LL);
    static final AlgoProto RING_LL = new AlgoProto(Algorithm.RING, Protocol.LL);
    static final AlgoProto RING_LL128 = new AlgoProto(Algorithm.RING, Protocol.LL128);
    static final AlgoProto RING_SIMPLE = new AlgoProto(Algorithm.RING, Protocol.SIMPLE);
    static final AlgoProto PAT_SIMPLE = new AlgoProto(Algorithm.PAT, Protocol.SIMPLE);

    /** The header rows of a TUNING table over TREE and RING, as NCCL prints them. */
    static final String TREE_RING_ALGORITHMS =
            "  Algorithm   |                            Tree                  |                            Ring                  |";

    static final String TREE_RING_PROTOCOLS =
            "  Protocol    |             LL |          LL128 |         Simple |             LL |          LL128 |         Simple |";

    /** @return log lines (a mutable list): each message after the same NCCL prefix */
    static List<String> logLines(String prefix, String... messages) {
        List<String> lines = new ArrayList<>();
        for (String m : messages) {
            lines.add(prefix + m);
        }
        return lines;
    }

    static NcclModelLog read(String resource) throws Exception {
        if (resource.startsWith("/model/traces/nccl-2.28.9-h200-2rank/")) {
            return NcclModelLog.read(Path.of(System.getProperty("nccltj.repo", ".."))
                    .resolve("tests/traces")
                    .resolve(resource.substring(resource.lastIndexOf('/') + 1)));
        }
        return NcclModelLog.read(
                Path.of(NcclModelLogTest.class.getResource(resource).toURI()));
    }

    @Test
    void era224NamesAndChannels() throws Exception {
        NcclModelLog log = read("/model/traces/nccl-2.28.9-h200-2rank/nccl_sweep.rank0.log");
        assertEquals(List.of(), log.problems());
        Communicator c = log.communicators().get(0);
        assertEquals("0xc23bec0", c.commId());
        assertEquals(new NcclVersion(2, 28, 9), c.version());
        assertEquals(2, c.nRanks());
        assertEquals(2, c.nNodes());
        assertEquals(2, c.nChannels());
        assertEquals(746, c.pid());
        CostTable t = c.table();
        assertEquals(7, t.numAlgorithms());
        assertEquals(16.8, t.latency(Collective.AllReduce, TREE_LL));
        assertEquals(0.2, t.bandwidth(Collective.AllReduce, TREE_LL));
        assertEquals(new Interval(0.15000000000000002, 0.25), t.bandwidthRange(Collective.AllReduce, TREE_LL));
        assertEquals(17.6, t.latency(Collective.AllGather, PAT_SIMPLE));
        assertEquals(1.8, t.bandwidth(Collective.AllGather, PAT_SIMPLE));
        assertEquals(0.0, t.bandwidth(Collective.AllReduce, RING_LL128));
        assertEquals(256, t.maxThreads(RING_SIMPLE));
        assertEquals(640, t.maxThreads(new AlgoProto(Algorithm.NVLS_TREE, Protocol.SIMPLE)));
        assertEquals(141, c.selections().size());
        LoggedSelection first = c.selections().get(0);
        assertEquals(SelectionFormat.COLLECTIVE_NAMES_WITH_CHANNELS, first.format());
        assertEquals(Collective.AllReduce, first.collective());
        assertEquals(8, first.loggedBytes());
        assertEquals(RING_LL, first.pick());
        assertEquals(0, first.channelLo());
        assertEquals(0, first.channelHi());
        assertTrue(Double.isNaN(first.time()));
        LoggedSelection ag = c.selections().get(3);
        assertEquals(Collective.AllGather, ag.collective());
        assertEquals(8, ag.loggedBytes());
        assertEquals(16, ag.nBytes(c.nRanks()), "2.24+ prints AllGather bytes per rank");
        LoggedSelection pat = c.selections().stream()
                .filter(s -> s.pick().equals(PAT_SIMPLE))
                .findFirst()
                .orElseThrow();
        assertEquals(16384, pat.loggedBytes());
        assertEquals(1, pat.channelHi());
    }

    @Test
    void era222TwoBlocksWithIdsAndTime() throws Exception {
        NcclModelLog log = read("/model/logs/nccl-2.22.3_4xV100_seed001.log");
        assertEquals(List.of(), log.problems());
        assertEquals(1, log.communicators().size(), "only rank 0 prints a table");
        Communicator c = log.communicators().get(0);
        assertEquals("0x55d0c0a00000", c.commId());
        assertEquals(4252, c.tid());
        assertEquals(4, c.nRanks());
        assertEquals(1, c.nNodes());
        assertEquals(0, c.nChannels(), "no 'coll channels' line in this log");
        assertEquals(6, c.table().numAlgorithms());
        assertEquals(168.0, c.table().latency(Collective.AllReduce, new AlgoProto(Algorithm.TREE, Protocol.SIMPLE)));
        assertEquals(73.6, c.table().bandwidth(Collective.AllReduce, RING_LL128));
        LoggedSelection s = c.selections().get(0);
        assertEquals(SelectionFormat.IDS_WITH_TIME, s.format());
        assertNull(s.collective());
        assertEquals(1048576, s.loggedBytes());
        assertEquals(RING_LL128, s.pick());
        assertEquals(39.646954, s.time());
    }

    @Test
    void era223TwoProcessesStayApart() throws Exception {
        NcclModelLog log = read("/model/logs/nccl-2.23.4_two-processes.log");
        assertEquals(2, log.communicators().size());
        Communicator a = log.communicators().get(0);
        Communicator b = log.communicators().get(1);
        assertEquals("nodeA", a.host());
        assertEquals("0x5600aa000000", a.commId());
        assertEquals(4, a.nRanks());
        assertEquals(24, a.nChannels());
        assertEquals(7, a.table().numAlgorithms());
        assertEquals(10.2, a.table().latency(Collective.AllReduce, RING_LL));
        assertEquals("nodeB", b.host());
        assertEquals(2, b.nNodes());
        assertEquals(2, b.nChannels());
        assertEquals(0.6, b.table().bandwidth(Collective.AllReduce, RING_LL));
        assertEquals(new NcclVersion(2, 23, 4), b.version());

        assertEquals(1, a.selections().size());
        assertEquals(
                SelectionFormat.COLLECTIVE_IDS_WITH_TIME, a.selections().get(0).format());
        assertEquals(39.646954, a.selections().get(0).time());
        List<Long> bBytes = new ArrayList<>();
        b.selections().forEach(s -> bBytes.add(s.nBytes(b.nRanks())));
        assertEquals(List.of(8L, 16L, 67108864L), bBytes, "2.23 prints the nBytes the cost table used");
        assertEquals(Collective.AllGather, b.selections().get(1).collective());

        assertEquals(1, log.problems().size(), () -> log.problems().toString());
        LogProblem p = log.problems().get(0);
        assertTrue(p.text().endsWith("Algo 1 pro"), p::toString);
        assertEquals("selection line in no known format", p.reason());
    }

    @Test
    void aTableRowThatDoesNotParseIsReportedAndTheTableDropped() {
        List<String> lines = logLines(
                "h:1:1 [0] NCCL INFO ",
                TREE_RING_ALGORITHMS,
                TREE_RING_PROTOCOLS,
                "     Broadcast |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |     9.3/   0.6 |    18.0/   0.0 |    22.4/   1.2 |",
                "        Reduce |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |     9.3/   0.6 |    18.0/   0.0 |",
                "AllReduce: 8 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..0}");
        NcclModelLog log = NcclModelLog.parse("inline", lines);
        assertEquals(List.of(), log.communicators());
        assertEquals(4, log.problems().get(0).line());
        assertTrue(
                log.problems().get(0).reason().startsWith("Reduce row has 5 entries for 2 algorithms"),
                log.problems()::toString);
        assertEquals(
                "selection line before any table of process h:1",
                log.problems().get(1).reason());
    }

    @Test
    void oneBadCellIsReportedOnceAndTheRestOfItsTableSkippedWithOneLine() throws Exception {
        List<String> lines = new ArrayList<>(java.nio.file.Files.readAllLines(Path.of(NcclModelLogTest.class
                .getResource("/model/logs/nccl-2.22.3_4xV100_seed001.log")
                .toURI())));
        assertTrue(lines.get(12).contains("Broadcast |     0.0/   0.0 |"), lines.get(12));
        lines.set(12, lines.get(12).replaceFirst("0\\.0/   0\\.0", "0.0/   0.X"));
        lines.add("dgx1:4242:4242 [0] NCCL INFO 2097152 Bytes -> Algo 1 proto 2 time 74.3");
        lines.add("dgx1:4242:4242 [0] NCCL INFO 4194304 Bytes -> Algo 1 proto 2 time 120.1");
        NcclModelLog log = NcclModelLog.parse("inline", lines);
        assertEquals(List.of(), log.communicators());
        assertEquals(
                List.of(
                        "line 13: entry '0.0/   0.X' is not latency/bandwidth; the rest of this table is skipped",
                        "line 14: 12 more lines of the table abandoned at line 13 skipped (lines 14..25)",
                        "line 28: selection line before any table of process dgx1:4242",
                        "line 29: 2 more selection lines of process dgx1:4242 before any of its tables skipped (lines 29..30)"),
                log.problems().stream()
                        .map(p -> "line " + p.line() + ": " + p.reason())
                        .toList());
    }

    @Test
    void otherLinesWithBytesOrCollectiveNamesAreNotMistaken() {
        String pre = "h:1:1 [0] NCCL INFO ";
        List<String> lines = List.of(
                pre
                        + "AllReduce: opCount 0 sendbuff 0x7 recvbuff 0x9 count 4194304 datatype 7 op 0 root 0 comm 0x55 [nranks=2] stream 0x5",
                pre + "Channel 00/02 : 0 1",
                "     8388608       2097152     float     sum      -1mew0:1:1 [1] NCCL INFO AllReduce: 8 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..0}",
                pre + "AllReduce: 8 Bytes -> Algo RINGG proto LL channel{Lo..Hi}={0..0}",
                pre + "AlltoAll: 8 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..0}");
        NcclModelLog log = NcclModelLog.parse("inline", lines);
        assertEquals(3, log.problems().size(), log.problems()::toString);
        assertEquals(
                "NCCL line runs into other output; not used",
                log.problems().get(0).reason());
        assertEquals(
                "unknown algorithm/protocol 'RINGG/LL'", log.problems().get(1).reason());
        assertEquals(
                "'AlltoAll' is not a collective the tuner sees",
                log.problems().get(2).reason());
    }

    /** Up to 2.17 (src/graph/tuning.cc): one "Latency/AlgBw" row of " %7s/%6s |" cells, one block. */
    @Test
    void era217SingleHeaderRow() {
        String pre = "h:9:9 [0] NCCL INFO ";
        String[] algos = {"Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS"};
        String[] protos = {"LL", "LL128", "Simple"};
        StringBuilder header = new StringBuilder("Latency/AlgBw |");
        StringBuilder threads = new StringBuilder(" Max NThreads |");
        for (String a : algos) {
            for (String p : protos) {
                header.append(String.format(" %7s/%6s |", a, p));
                threads.append(String.format(" %14d |", 512));
            }
        }
        List<String> lines =
                new ArrayList<>(List.of(pre + "NCCL version 2.17.1+cuda12.0", pre + header, pre + threads));
        for (String coll : List.of("Broadcast", "Reduce", "AllGather", "ReduceScatter", "AllReduce")) {
            StringBuilder row = new StringBuilder(String.format("%13s |", coll));
            for (int i = 0; i < 15; i++) {
                row.append(String.format("%8.1f/%6.1f |", 4.0 + i, i < 6 ? 10.0 * (i + 1) : 0.0));
            }
            lines.add(pre + row);
        }
        lines.add(pre + "threadThresholds 8/8/64 | 32/8/64 | 512 | 512");
        NcclModelLog log = NcclModelLog.parse("inline", lines);
        assertEquals(List.of(), log.problems());
        CostTable t = log.communicators().get(0).table();
        assertEquals(5, t.numAlgorithms());
        assertEquals(9.0, t.latency(Collective.AllReduce, RING_SIMPLE));
        assertEquals(60.0, t.bandwidth(Collective.AllReduce, RING_SIMPLE));
        assertEquals(0.0, t.bandwidth(Collective.AllReduce, new AlgoProto(Algorithm.NVLS, Protocol.SIMPLE)));
        assertEquals(512, t.maxThreads(new AlgoProto(Algorithm.NVLS, Protocol.LL)));
    }

    @Test
    void timestampedPrefixIsRead() {
        String pre = "[2026-11-30 01:02:03] h:7:8 [0] NCCL INFO ";
        List<String> lines = logLines(
                pre,
                "NCCL version 2.28.9+cuda13.0",
                "comm 0xabc rank 0 nRanks 2 nNodes 1 localRanks 2 localRank 0 MNNVL 0",
                TREE_RING_ALGORITHMS,
                TREE_RING_PROTOCOLS,
                " Max NThreads |            512 |            640 |            512 |            512 |            640 |            512 |");
        for (String coll : List.of("Broadcast", "Reduce", "AllGather", "ReduceScatter", "AllReduce")) {
            lines.add(
                    pre + String.format("%13s |", coll)
                            + "     4.0/   1.5 |     5.0/   2.5 |     6.0/   3.5 |     7.0/   4.5 |     8.0/   5.5 |     9.0/   6.5 |");
        }
        lines.add(pre + "AllReduce: 4 Bytes -> Algo TREE proto LL channel{Lo..Hi}={0..0}");
        NcclModelLog log = NcclModelLog.parse("inline", lines);
        assertEquals(List.of(), log.problems());
        Communicator c = log.communicators().get(0);
        assertEquals(2, c.table().numAlgorithms());
        assertEquals(9.0, c.table().latency(Collective.AllReduce, RING_SIMPLE));
        assertEquals(1, c.selections().size());
    }
}
