package io.nccltuner.compile;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nccltuner.policy.Algorithm;
import io.nccltuner.policy.Collective;
import io.nccltuner.policy.InputException;
import io.nccltuner.policy.Policy.Rule;
import io.nccltuner.policy.Protocol;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 13: formats of real clusters' nccl-tests outputs (fixtures written for these tests under
 * {@code src/test/resources/compile/inputs}, from the layouts public files show).
 */
@Timeout(60)
class RealInputsTest {
    private static Path in(String name) {
        return Fixtures.path("inputs/" + name);
    }

    private static MeasurementSet parse(String name, NcclTestsLog.Options o) throws Exception {
        MeasurementSet s = new MeasurementSet();
        NcclTestsLog.parse(in(name), o, s);
        return s;
    }

    private static NcclTestsLog.Options nodes(int nNodes) {
        return new NcclTestsLog.Options(null, null, null, 0, 0, nNodes, NcclTestsLog.Placement.OUT_OF_PLACE);
    }

    private static boolean warned(MeasurementSet s, String text) {
        return s.warnings().stream().anyMatch(w -> w.contains(text));
    }

    @Test
    void nRanksFromTheRankIndexAndTheBusbwRatioNotTheLineCount() throws Exception {
        // one '# Rank 71' line, busbw/algbw 1.972 = 2*71/72: 72 ranks, not 1
        InputException e = assertThrows(
                InputException.class, () -> parse("nvl72-one-rank-line_all_reduce.txt", NcclTestsLog.Options.NONE));
        assertTrue(
                e.getMessage().contains(":9: cannot tell nNodes: the '# Rank' lines name only 1 of 72 ranks"),
                e.getMessage());
        MeasurementSet s = parse("nvl72-one-rank-line_all_reduce.txt", nodes(1));
        assertEquals(
                List.of(72, 72),
                s.measurements().stream().map(Measurement::nRanks).toList());
        assertEquals(
                List.of(671.1, 1118.5),
                s.measurements().stream().map(Measurement::timeUs).toList());
        assertTrue(
                warned(
                        s,
                        "nRanks 72 inferred from the highest rank index (Rank 71) of 1 '# Rank' line, consistent "
                                + "with busbw/algbw 1.97"),
                s.warnings().toString());
    }

    @Test
    void busFactorInversion() {
        double[] b = NcclTestsLog.ratioBounds(List.of(
                new NcclTestsLog.Row(1, 33554432, "float", new double[] {600}, new double[] {0}, true, 55.92, 104.86)));
        assertEquals(List.of(16), NcclTestsLog.ranksFitting(Collective.AllReduce, b));
        assertEquals(List.of(), NcclTestsLog.ranksFitting(Collective.Broadcast, b));
    }

    @Test
    void tablesWithoutRunHeadersAreSeparateRunsUnlessPooled() throws Exception {
        NcclTestsLog.Options o = nodes(2);
        InputException e =
                assertThrows(InputException.class, () -> parse("pasted-tables-no-run-header_all_reduce.txt", o));
        assertTrue(
                e.getMessage()
                        .contains("pasted-tables-no-run-header_all_reduce.txt:11: this size table and the one at "
                                + "line 5 both measure AllReduce at nRanks 16, nNodes 2"),
                e.getMessage());
        assertTrue(e.getMessage().contains("--pool-runs"), e.getMessage());
        MeasurementSet s = parse(
                "pasted-tables-no-run-header_all_reduce.txt",
                new NcclTestsLog.Options(null, null, null, 0, 0, 2, NcclTestsLog.Placement.OUT_OF_PLACE, true));
        // each table is read as its own run (four rows), not one run of mixed rows
        assertEquals(
                List.of(4400.0, 8350.0, 600.0, 900.0),
                s.measurements().stream().map(Measurement::timeUs).toList());
        assertTrue(
                s.measurements().get(2).source().endsWith(":14"),
                s.measurements().get(2).source());
        assertTrue(
                warned(s, "nRanks 16 inferred from busbw/algbw"), s.warnings().toString());
    }

    @Test
    void ncclsInitLineWinsOverHostNamesOnMnnvl() throws Exception {
        MeasurementSet s = parse("mnnvl-two-trays_all_reduce.txt", NcclTestsLog.Options.NONE);
        assertEquals(1, s.measurements().getFirst().nNodes());
        assertEquals(4, s.measurements().getFirst().nRanks());
        // NCCL's count is used, and where it differs from the host names' the warning says both
        assertEquals(
                in("mnnvl-two-trays_all_reduce.txt") + ":13: NCCL says nNodes 1 but the host names of the '# Rank' "
                        + "lines (tray0, tray1) count 2: used NCCL's (MNNVL 1: the hosts of one NVLink domain are one "
                        + "node to NCCL)",
                s.warnings().getFirst());
        assertTrue(
                s.warnings().stream().noneMatch(w -> w.contains("counted from the host names")),
                s.warnings().toString());
        MeasurementSet t = parse("mnnvl-two-trays-no-init-line_all_reduce.txt", NcclTestsLog.Options.NONE);
        assertEquals(2, t.measurements().getFirst().nNodes());
        assertTrue(
                warned(
                        t,
                        "nNodes 2 counted from the host names of the '# Rank' lines (tray0, tray1); hosts that "
                                + "share one NVLink domain (MNNVL, as these NVIDIA GB300 GPUs may)"),
                t.warnings().toString());
    }

    @Test
    void forcedRunsReadFromEchoedCommandLines() throws Exception {
        MeasurementSet s = parse("forced-by-echoed-env_all_reduce.txt", NcclTestsLog.Options.NONE);
        List<String> got = s.measurements().stream()
                .map(m -> m.collective() + " " + m.nBytes() + " " + m.config().label() + " " + m.timeUs())
                .toList();
        assertEquals(
                List.of(
                        "AllReduce 1048576 auto 30.0",
                        "AllReduce 2097152 auto 50.0",
                        "AllReduce 1048576 TREE/LL 20.0",
                        "AllReduce 2097152 TREE/LL 45.0",
                        "AllReduce 1048576 RING/LL128 25.0",
                        "AllReduce 2097152 RING/LL128 35.0",
                        // Broadcast runs only RING in NCCL, so NCCL_PROTO alone names the candidate
                        "Broadcast 1048576 RING/SIMPLE 40.0"),
                got);
        assertTrue(
                warned(s, "forced NCCL_ALGO=Tree (line 19), NCCL_PROTO=LL (line 21), read from a command line"),
                s.warnings().toString());
        // Per size (window 0): the forced runs' own readings decide, so TREE/LL wins at 1 MiB. (The
        // default window of 2 would rank by the worst regret over both sizes and pick RING/LL128.)
        Compiler.Options d = Compiler.Options.defaults("t");
        Compiler.Options perSize = new Compiler.Options(
                d.threshold(),
                d.noiseSigmas(),
                d.tie(),
                d.anyPipeOps(),
                d.merge(),
                d.name(),
                d.mode(),
                d.description(),
                0);
        Compiler.Compilation c = Compiler.compile(s, perSize);
        List<Rule> rules = c.policy().profiles().getFirst().rules();
        assertEquals(Algorithm.TREE, rules.getFirst().candidates().getFirst().algorithm());
        assertEquals(Protocol.LL, rules.getFirst().candidates().getFirst().protocol());
        assertEquals(1048576L, rules.getFirst().fromBytes());
    }

    @Test
    void rowsSplitByNcclLinesAreRejoinedAndTheSameFilesSelectionLinesUsed() throws Exception {
        MeasurementSet s = parse("split-rows-with-selections_all_reduce.txt", NcclTestsLog.Options.NONE);
        assertEquals(
                List.of(1048576L, 2097152L),
                s.measurements().stream().map(Measurement::nBytes).toList());
        assertEquals(
                List.of(41.2, 75.5),
                s.measurements().stream().map(Measurement::timeUs).toList());
        assertTrue(
                s.measurements().getFirst().source().endsWith(":15"),
                s.measurements().getFirst().source());
        assertEquals(
                List.of("1048576 RING/LL128", "2097152 RING/SIMPLE"),
                s.selections().stream()
                        .map(x -> x.nBytes() + " " + x.config().label())
                        .toList());
        assertTrue(s.refused().isEmpty(), s.refused().toString());
    }

    @Test
    void aForcingNcclOverrodeNamesWhatRanInRowOrder() throws Exception {
        MeasurementSet s = parse(
                "split-rows-with-selections_all_reduce.txt",
                new NcclTestsLog.Options(null, Algorithm.TREE, null, 0, 0, 0, NcclTestsLog.Placement.OUT_OF_PLACE));
        assertEquals(
                List.of(in("split-rows-with-selections_all_reduce.txt")
                        + ":12: 2 rows ran [RING/LL128, RING/SIMPLE] per NCCL's selection lines, not the forced "
                        + "TREE/auto; used what NCCL ran"),
                s.warnings());
    }

    @Test
    void aRowCutOffByAnotherLineNamesBothLines() throws Exception {
        java.nio.file.Path tmp = java.nio.file.Files.createTempFile("cut", "_all_reduce.txt");
        try {
            List<String> lines = new java.util.ArrayList<>(
                    java.nio.file.Files.readAllLines(in("split-rows-with-selections_all_reduce.txt")));
            lines.add(17, "[... lines cut ...]");
            java.nio.file.Files.write(tmp, lines);
            InputException e = assertThrows(
                    InputException.class, () -> NcclTestsLog.parse(tmp, NcclTestsLogTest.STRICT, new MeasurementSet()));
            assertTrue(e.getMessage().contains(":15: row has 9 fields but the column header names 13"), e.getMessage());
            assertTrue(
                    e.getMessage()
                            .endsWith("(its parts, between NCCL lines, are on lines 15, 17; line 18 interrupts it)"),
                    e.getMessage());
        } finally {
            java.nio.file.Files.delete(tmp);
        }
    }

    @Test
    void launcherPrefixesAreStripped() throws Exception {
        for (String f : List.of("srun-l-prefixed_all_reduce.txt", "mpirun-tag-output_all_reduce.txt")) {
            MeasurementSet s = parse(f, NcclTestsLog.Options.NONE);
            assertEquals(
                    List.of(30.0, 50.0),
                    s.measurements().stream().map(Measurement::timeUs).toList(),
                    f);
            assertEquals(2, s.measurements().getFirst().nRanks(), f);
            assertTrue(
                    warned(s, "13 lines carry a launcher prefix"), s.warnings().toString());
        }
    }

    @Test
    void aRefusedSizeIsNotCoveredByItsNeighboursRule() throws Exception {
        MeasurementSet s = parse("refused-middle-size_all_reduce.txt", NcclTestsLog.Options.NONE);
        assertEquals(2, s.refused().size());
        Compiler.Compilation c = Compiler.compile(s, Compiler.Options.defaults("t"));
        List<String> rules = c.policy().profiles().getFirst().rules().stream()
                .map(r -> r.fromBytes() + ".." + r.toBytes() + " "
                        + r.candidates().getFirst().algorithm() + "/"
                        + r.candidates().getFirst().protocol())
                .toList();
        // 512 KiB governs [512 KiB, 1 MiB) only: 1 MiB has only refused rows
        assertEquals(List.of("524288..1048576 RING/LL", "2097152..2621440 RING/LL"), rules);
        assertTrue(
                c.warnings().stream().anyMatch(w -> w.contains("sizes in [1 MiB, 2 MiB) have only refused rows")),
                c.warnings().toString());
    }

    @Test
    void alltoallIsRefusedWithTheReason() {
        InputException e =
                assertThrows(InputException.class, () -> parse("alltoall_perf.txt", NcclTestsLog.Options.NONE));
        assertTrue(
                e.getMessage()
                        .contains("alltoall_perf.txt:9: the file name says alltoall; alltoall is not a "
                                + "collective NCCL asks a tuner about"),
                e.getMessage());
        assertTrue(e.getMessage().endsWith("nothing in this file can become a rule"), e.getMessage());
    }
}
