package io.nccltuner.compile;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nccltuner.policy.InputException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 21: ranks on one machine with a distinct NCCL_HOSTID each are as many nodes to NCCL
 * (src/misc/utils.cc getHostHash), though every nccl-tests device line names the same host; the
 * shape compile reads (and so the profile that matches in the job) is NCCL's. Fixtures under
 * {@code src/test/resources/compile/inputs/hostid-*}, written from the nccl-tests 2.18 and NCCL 2.28
 * formats.
 */
class NcclHostIdTest {
    static final String INFO_LINES = "hostid-two-ranks-one-host_all_reduce.txt";
    static final String ECHOED = "hostid-echoed-per-rank_all_reduce.txt";

    @TempDir
    Path tmp;

    private static Path in(String name) {
        return Fixtures.path("inputs/" + name);
    }

    /** @return collective, nRanks, nNodes and size of each measurement */
    private static List<String> shapes(MeasurementSet s) {
        return s.measurements().stream()
                .map(m -> m.collective() + " nRanks " + m.nRanks() + " nNodes " + m.nNodes() + " " + m.nBytes())
                .toList();
    }

    private static MeasurementSet parse(Path f, NcclTestsLog.Options o) throws Exception {
        MeasurementSet s = new MeasurementSet();
        NcclTestsLog.parse(f, o, s);
        return s;
    }

    /** The fixture with its 1-based lines {@code from..to} replaced by {@code with}. */
    private Path edited(String name, int from, int to, String... with) throws Exception {
        List<String> lines = new ArrayList<>(Files.readAllLines(in(name)));
        lines.subList(from - 1, to).clear();
        lines.addAll(from - 1, List.of(with));
        Path f = tmp.resolve(name);
        Files.write(f, lines);
        return f;
    }

    @Test
    void ncclHostIdLinesOfEachRanksProcessCountItsNodes() throws Exception {
        MeasurementSet s = parse(in(INFO_LINES), NcclTestsLog.Options.NONE);
        assertEquals(List.of("AllReduce nRanks 2 nNodes 2 1048576", "AllReduce nRanks 2 nNodes 2 2097152"), shapes(s));
        assertEquals(
                List.of(in(INFO_LINES) + ":15: nNodes 2 counted from the NCCL_HOSTIDs of the ranks' processes "
                        + "(gpuhost0, gpuhost1, NCCL's 'NCCL_HOSTID set by environment' lines from line 11), not 1 from "
                        + "the host names of the '# Rank' lines (vm): a rank's NCCL_HOSTID is its host to NCCL "
                        + "(src/misc/utils.cc getHostHash); NCCL's 'comm ... nNodes' INFO line (NCCL_DEBUG_SUBSYS=INIT) "
                        + "would say so; pass --nodes if that is wrong"),
                s.warnings());
    }

    @Test
    void oneNcclHostIdPerRankOnTheCommandLineCountsOneNodeEach() throws Exception {
        MeasurementSet s = parse(in(ECHOED), NcclTestsLog.Options.NONE);
        assertEquals(List.of("AllReduce nRanks 2 nNodes 2 1048576", "AllReduce nRanks 2 nNodes 2 2097152"), shapes(s));
        assertEquals(2, s.warnings().size(), s.warnings().toString());
        assertEquals(
                in(ECHOED) + ":13: nNodes 2 counted from the 2 NCCL_HOSTID values set from line 3 (gpuhost0, "
                        + "gpuhost1), one per rank, not 1 from the host names of the '# Rank' lines (vm): a rank's "
                        + "NCCL_HOSTID is its host to NCCL (src/misc/utils.cc getHostHash); NCCL's 'comm ... nNodes' INFO "
                        + "line (NCCL_DEBUG_SUBSYS=INIT) would say so; pass --nodes if that is wrong",
                s.warnings().get(0));
        assertTrue(
                s.warnings()
                        .get(1)
                        .startsWith(in(ECHOED) + ": the run (table at line 13) names no forced configuration"),
                s.warnings().get(1));
    }

    @Test
    void ncclsInitLineWinsAndADisagreeingHostCountIsSaid() throws Exception {
        String comm = "vm:101:101 [0] NCCL INFO comm 0x55d5f5ac09e0 rank 0 nRanks 2 nNodes 2 localRanks 1 localRank 0"
                + " MNNVL 0";
        // NCCL's INIT line, no NCCL_HOSTID lines: the host names count 1, NCCL 2
        Path f = edited(INFO_LINES, 11, 12, comm);
        MeasurementSet s = parse(f, NcclTestsLog.Options.NONE);
        assertEquals(List.of("AllReduce nRanks 2 nNodes 2 1048576", "AllReduce nRanks 2 nNodes 2 2097152"), shapes(s));
        assertEquals(
                f + ":11: NCCL says nNodes 2 but the host names of the '# Rank' lines (vm) count 1: used NCCL's (one "
                        + "host is several nodes to NCCL where its ranks set different NCCL_HOSTIDs)",
                s.warnings().getFirst());
        assertEquals(2, s.warnings().size(), s.warnings().toString()); // and: the run names no forced configuration
        // with the NCCL_HOSTID lines as well, all agree: nothing to say
        Path g = edited(
                INFO_LINES,
                11,
                12,
                "vm:101:101 [0] NCCL INFO NCCL_HOSTID set by environment to gpuhost0",
                "vm:102:102 [0] NCCL INFO NCCL_HOSTID set by environment to gpuhost1",
                comm);
        MeasurementSet t = parse(g, NcclTestsLog.Options.NONE);
        assertEquals(List.of("AllReduce nRanks 2 nNodes 2 1048576", "AllReduce nRanks 2 nNodes 2 2097152"), shapes(t));
        assertEquals(List.of(), t.warnings());
    }

    @Test
    void aHostIdLineForOnlySomeRanksLeavesNNodesToTheUser() throws Exception {
        Path f = edited(INFO_LINES, 11, 12, "vm:101:101 [0] NCCL INFO NCCL_HOSTID set by environment to gpuhost0");
        InputException e = assertThrows(InputException.class, () -> parse(f, NcclTestsLog.Options.NONE));
        assertEquals(
                f + ":14: cannot tell nNodes: NCCL's 'NCCL_HOSTID set by environment' lines (from line 11: "
                        + "gpuhost0) name the NCCL_HOSTID of the processes of 1 of the 2 ranks, so the host names of the "
                        + "'# Rank' lines (vm) do not count the nodes NCCL sees (a rank's NCCL_HOSTID is its host to "
                        + "NCCL), and there is no NCCL 'comm ... nNodes' line (NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT); "
                        + "pass --nodes",
                e.getMessage());
        MeasurementSet s =
                parse(f, new NcclTestsLog.Options(null, null, null, 0, 0, 2, NcclTestsLog.Placement.OUT_OF_PLACE));
        assertEquals(List.of("AllReduce nRanks 2 nNodes 2 1048576", "AllReduce nRanks 2 nNodes 2 2097152"), shapes(s));
        assertEquals(List.of(), s.warnings());
    }

    @Test
    void echoedHostIdsNotOnePerRankLeaveNNodesToTheUser() throws Exception {
        Path f = edited(
                ECHOED,
                9,
                10,
                "#  Rank  0 Group  0 Pid    101 on         vm device  0 [0000:18:00] NVIDIA H200",
                "#  Rank  1 Group  0 Pid    101 on         vm device  1 [0000:19:00] NVIDIA H200",
                "#  Rank  2 Group  0 Pid    102 on         vm device  0 [0000:18:00] NVIDIA H200",
                "#  Rank  3 Group  0 Pid    102 on         vm device  1 [0000:19:00] NVIDIA H200");
        InputException e = assertThrows(InputException.class, () -> parse(f, NcclTestsLog.Options.NONE));
        assertEquals(
                f + ":15: cannot tell nNodes: the NCCL_HOSTID values set from line 3 (gpuhost0, gpuhost1) are not one "
                        + "per rank (4 ranks), so the host names of the '# Rank' lines (vm) do not count the nodes NCCL "
                        + "sees (a rank's NCCL_HOSTID is its host to NCCL), and there is no NCCL 'comm ... nNodes' line "
                        + "(NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT); pass --nodes",
                e.getMessage());
    }
}
