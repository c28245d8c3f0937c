package io.nccltuner.compile;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nccltuner.policy.Algorithm;
import io.nccltuner.policy.Collective;
import io.nccltuner.policy.InputException;
import io.nccltuner.policy.Policy.Range;
import io.nccltuner.policy.Protocol;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class NcclTestsLogTest {
    @TempDir
    Path tmp;

    private static List<Measurement> of(MeasurementSet s, Collective c) {
        return s.measurements().stream().filter(m -> m.collective() == c).toList();
    }

    @Test
    void layout2019WithoutGroupFieldAndWithErrorColumn() throws Exception {
        MeasurementSet s = Fixtures.read("nccl-tests-2019_all_gather+broadcast_4xV100.txt");
        List<Measurement> ag = of(s, Collective.AllGather);
        List<Measurement> bc = of(s, Collective.Broadcast);
        // 7 rows: the 0-byte row is skipped, the 1 MiB row failed its check (error 1e+00)
        assertEquals(
                List.of(32L, 256L, 2048L, 16384L, 131072L),
                ag.stream().map(Measurement::nBytes).toList());
        assertEquals(6, bc.size());
        Measurement first = ag.getFirst();
        assertEquals(21.53, first.timeUs(), 1e-9);
        assertEquals(4, first.nRanks());
        assertEquals(1, first.nNodes());
        assertEquals(Range.exactly(1), first.numPipeOps());
        assertEquals(RunConfig.AUTO, first.config());
        assertTrue(first.source().endsWith("nccl-tests-2019_all_gather+broadcast_4xV100.txt:14"), first.source());
        assertEquals(97.31, bc.getLast().timeUs(), 1e-9);
        assertEquals(1, s.refused().size());
        assertTrue(
                s.refused()
                        .getFirst()
                        .contains("4xV100.txt:19: error 1e+00 (out-of-place) is above nccl-tests' "
                                + "bound 3.0e-05 for float with 4 ranks"),
                s.refused().getFirst());
    }

    @Test
    void errorColumnLayoutWithoutHeaderNeedsRanksAndNodes() throws Exception {
        Path f = Fixtures.path("nccl-tests-2.10_all_reduce_error-column.txt");
        InputException e = assertThrows(
                InputException.class, () -> NcclTestsLog.parse(f, NcclTestsLog.Options.NONE, new MeasurementSet()));
        // nRanks is inferred from busbw/algbw (AllReduce: 2(n-1)/n = 1.875 at 16 ranks); nNodes cannot be
        assertTrue(e.getMessage().contains("error-column.txt:3: cannot tell nNodes"), e.getMessage());
        assertTrue(e.getMessage().contains("(nRanks 16 is inferred from busbw/algbw 1.87"), e.getMessage());
        MeasurementSet s = new MeasurementSet();
        NcclTestsLog.parse(
                f, new NcclTestsLog.Options(null, null, null, 0, 16, 2, NcclTestsLog.Placement.OUT_OF_PLACE), s);
        // collective from the file name; 16 MiB row refused: 2e-04 > 1e-5 * (16 - 1)
        assertEquals(
                List.of(1048576L, 4194304L, 67108864L),
                s.measurements().stream().map(Measurement::nBytes).toList());
        assertEquals(Collective.AllReduce, s.measurements().getFirst().collective());
        assertEquals(16, s.measurements().getFirst().nRanks());
        assertEquals(2, s.measurements().getFirst().nNodes());
        assertEquals(180.2, s.measurements().getFirst().timeUs(), 1e-9);
        assertEquals(1, s.refused().size());
        assertTrue(
                s.refused().getFirst().contains("error-column.txt:8: error 2e-04"),
                s.refused().getFirst());
    }

    @Test
    void forcedConfigurationComesFromNcclInfoLines() throws Exception {
        MeasurementSet s = Fixtures.read("nccl-tests-2.13_all_reduce_forced-ring-ll128.txt");
        assertEquals(5, s.measurements().size());
        for (Measurement m : s.measurements()) {
            assertEquals(new RunConfig(Algorithm.RING, Protocol.LL128, 8), m.config());
            assertEquals(8, m.nRanks());
            assertEquals(1, m.nNodes());
        }
        assertEquals(60.12, s.measurements().getLast().timeUs(), 1e-9);
        assertEquals(
                List.of("nccl-tests-2.13_all_reduce_forced-ring-ll128.txt:24: #wrong = 2 (out-of-place): results "
                        + "were wrong; row never used"),
                s.refused().stream()
                        .map(r -> r.substring(r.lastIndexOf('/') + 1))
                        .toList());
    }

    @Test
    void optionsThatContradictTheLogAreErrors() {
        Path f = Fixtures.path("nccl-tests-2.13_all_reduce_forced-ring-ll128.txt");
        InputException e = assertThrows(
                InputException.class,
                () -> NcclTestsLog.parse(
                        f,
                        new NcclTestsLog.Options(
                                null, Algorithm.TREE, null, 0, 0, 0, NcclTestsLog.Placement.OUT_OF_PLACE),
                        new MeasurementSet()));
        assertTrue(
                e.getMessage().contains("forced-ring-ll128.txt:13: the log says NCCL_ALGO RING but --algo says TREE"),
                e.getMessage());
        InputException r = assertThrows(
                InputException.class,
                () -> NcclTestsLog.parse(
                        f,
                        new NcclTestsLog.Options(null, null, null, 0, 16, 0, NcclTestsLog.Placement.OUT_OF_PLACE),
                        new MeasurementSet()));
        assertTrue(r.getMessage().contains(":16: NCCL says nRanks 8 but --ranks says 16"), r.getMessage());
    }

    @Test
    void rootColumnAndUnvalidatedRows() throws Exception {
        MeasurementSet s = Fixtures.read("nccl-tests-2.18_broadcast_no-validation.txt");
        assertEquals(4, s.measurements().size());
        assertTrue(s.refused().isEmpty());
        Measurement m = s.measurements().get(2);
        assertEquals(Collective.Broadcast, m.collective());
        assertEquals(16384, m.nBytes());
        assertEquals(29.77, m.timeUs(), 1e-9);
        assertEquals(2, m.nRanks());
        assertEquals(2, m.nNodes()); // node-a and node-b
    }

    @Test
    void perIterationColumnsAndSelectionLines() throws Exception {
        MeasurementSet s = Fixtures.read("nccl-tests-2.19_reduce_scatter_per-iteration_auto.txt");
        assertEquals(
                List.of(10.21, 12.64, 19.87),
                s.measurements().stream().map(Measurement::timeUs).toList());
        assertTrue(s.measurements().stream()
                .allMatch(m -> m.config().isAuto() && m.collective() == Collective.ReduceScatter));
        // 2.24+ selection lines print ReduceScatter bytes per rank; the tuner sees nRanks (2) times that
        List<RunSelection> sel = s.selections();
        assertEquals(
                List.of(8192L, 65536L, 524288L),
                sel.stream().map(RunSelection::nBytes).toList());
        assertEquals(
                List.of(Protocol.LL, Protocol.LL128, Protocol.SIMPLE),
                sel.stream().map(RunSelection::protocol).toList());
        assertTrue(sel.stream().allMatch(x -> x.algorithm() == Algorithm.RING && x.nRanks() == 2 && x.nNodes() == 1));
    }

    @Test
    void timestampColumnAndPlacement() throws Exception {
        Path f = Fixtures.path("nccl-tests-2.19_all_reduce_timestamps.txt");
        MeasurementSet out = Fixtures.read(f.getFileName().toString());
        assertEquals(
                List.of(11.02, 11.40, 12.93),
                out.measurements().stream().map(Measurement::timeUs).toList());
        MeasurementSet in = new MeasurementSet();
        NcclTestsLog.parse(f, new NcclTestsLog.Options(null, null, null, 0, 0, 0, NcclTestsLog.Placement.IN_PLACE), in);
        assertEquals(
                List.of(10.95, 11.31, 12.80),
                in.measurements().stream().map(Measurement::timeUs).toList());
        MeasurementSet both = new MeasurementSet();
        NcclTestsLog.parse(f, new NcclTestsLog.Options(null, null, null, 0, 0, 0, NcclTestsLog.Placement.BOTH), both);
        assertEquals(6, both.measurements().size());
    }

    /** Strict: the file refused at its first mangled row. */
    static final NcclTestsLog.Options STRICT =
            new NcclTestsLog.Options(null, null, null, 0, 0, 0, NcclTestsLog.Placement.OUT_OF_PLACE, false, true);

    /** A truncated row and a bad number with --strict: errors naming the file and line 21. */
    @ParameterizedTest(name = "{0}")
    @CsvSource(
            delimiter = '|',
            quoteCharacter = '"',
            value = {
                "bad-truncated-row_all_reduce.txt | bad-truncated-row_all_reduce.txt:21: row has 7 fields but the column header "
                        + "names 13 (size count type redop root time algbw busbw #wrong time algbw busbw #wrong); the row looks "
                        + "truncated or mangled",
                "bad-number_all_reduce.txt | :21: time (out-of-place) '18.3x' is not a number"
            })
    void badRowIsAnErrorNamingFileAndLine(String fixture, String messageEnd) {
        Path f = Fixtures.path(fixture);
        InputException e =
                assertThrows(InputException.class, () -> NcclTestsLog.parse(f, STRICT, new MeasurementSet()));
        assertEquals(f + ":21", e.where());
        assertTrue(e.getMessage().endsWith(messageEnd), e.getMessage());
    }

    /**
     * Without --strict a mangled row (a cut excerpt, an interrupted print) is skipped: a warning
     * naming file:line, the row counted refused, the other rows used (issue 21, item 8).
     */
    @Test
    void aMangledRowIsSkippedWithAWarningNamingFileAndLine() throws Exception {
        Path f = Fixtures.path("mangled-mid-file_all_reduce.txt");
        MeasurementSet s = new MeasurementSet();
        NcclTestsLog.parse(f, NcclTestsLog.Options.NONE, s);
        String why = "row has 6 fields but the column header names 13 (size count type redop root time algbw busbw "
                + "#wrong time algbw busbw #wrong); the row looks truncated or mangled";
        assertEquals(
                List.of(
                        f + ":13: " + why + "; row skipped (--strict refuses the file)",
                        f
                                + ":15: time (out-of-place) '2o.51' is not a number; row skipped (--strict refuses the file)"),
                s.refused());
        // issue 21 (fourth walk), item 19: once, among the refused rows, not again among the warnings
        assertTrue(
                s.warnings().stream().noneMatch(w -> w.contains(":13: ") || w.contains(":15: ")),
                s.warnings().toString());
        assertEquals(
                List.of(1024L, 2048L, 8192L, 32768L),
                s.measurements().stream().map(Measurement::nBytes).toList());
        InputException e =
                assertThrows(InputException.class, () -> NcclTestsLog.parse(f, STRICT, new MeasurementSet()));
        assertEquals(f + ":13: " + why, e.getMessage());
    }

    @Test
    void runsWithoutForcingInfoAreNcclsPickWithOneWarningPerFile() throws Exception {
        Path f = Fixtures.path("nccl-tests-2.19_all_reduce_timestamps.txt");
        MeasurementSet s = new MeasurementSet();
        NcclTestsLog.parse(f, NcclTestsLog.Options.NONE, s);
        assertTrue(s.measurements().stream().allMatch(m -> m.config().isAuto()));
        assertEquals(
                List.of(f + ": the run (table at line 10) names no forced configuration (no NCCL INFO 'set by "
                        + "environment' lines, no --algo/--proto): counted as NCCL's own choice; if NCCL_ALGO/NCCL_PROTO were set, "
                        + "say so with --in " + f + " --algo X --proto Y"),
                s.warnings());
        // --algo/--proto say what was forced: no warning
        MeasurementSet forced = new MeasurementSet();
        NcclTestsLog.parse(
                f,
                new NcclTestsLog.Options(
                        null, Algorithm.RING, Protocol.LL, 0, 0, 0, NcclTestsLog.Placement.OUT_OF_PLACE),
                forced);
        assertEquals(List.of(), forced.warnings());
        // NCCL's own 'set by environment' lines say so too
        MeasurementSet logged = Fixtures.read("nccl-tests-2.13_all_reduce_forced-ring-ll128.txt");
        assertTrue(
                logged.warnings().stream().noneMatch(w -> w.contains("forced configuration")),
                logged.warnings().toString());
    }

    @Test
    void forcedRunWhoseForceAppliedToNoCallIsNotUsedWithAWarning() throws Exception {
        Path f = tmp.resolve("forced_all_reduce.txt");
        Files.writeString(f, """
        # nThread 1 nGpus 2 minBytes 1024 maxBytes 1024 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0
        #  Rank  0 Group  0 Pid   1 on     host-a device  0 [0x18] GPU
        #  Rank  1 Group  0 Pid   1 on     host-a device  1 [0x19] GPU
        #       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
                1024           256     float     sum      -1    9.00    0.11    0.11      0    8.90    0.12    0.12      0
        # Avg bus bandwidth    : 0.1
        host-a:1:1 [0] NCCL INFO TUNER/Java: summary profile force:RING/LL128/8 mode enforce: calls 31, rule hits 31, applied 0
        host-a:1:1 [0] NCCL INFO TUNER/Java: force RING/LL128/8 applied to none of the 31 calls (NCCL offered it for none: its cost-table entry was -1 on every call), so NCCL's own pick ran instead
        """);
        MeasurementSet s = new MeasurementSet();
        NcclTestsLog.parse(
                f,
                new NcclTestsLog.Options(
                        null, Algorithm.RING, Protocol.LL128, 8, 0, 0, NcclTestsLog.Placement.OUT_OF_PLACE),
                s);
        assertEquals(List.of(), s.measurements());
        assertEquals(
                List.of(f + ":8: the tuner plugin says its NCCL_TUNER_JAVA_FORCE=RING/LL128/8 applied to none of the "
                        + "calls (NCCL never offered it): this run measured NCCL's own pick, not RING/LL128/8; 1 row not used (log "
                        + "with NCCL_DEBUG_SUBSYS=TUNING to use them as what NCCL ran)"),
                s.warnings());
    }

    @Test
    void severalIndistinguishableRunsInOneFileArePooledWithAWarning() throws Exception {
        String run = """
        # nThread 1 nGpus 2 minBytes 1024 maxBytes 1024 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0
        #  Rank  0 Group  0 Pid   1 on     host-a device  0 [0x18] GPU
        #  Rank  1 Group  0 Pid   1 on     host-a device  1 [0x19] GPU
        #       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
                1024           256     float     sum      -1    TIME    0.11    0.11      0    8.90    0.12    0.12      0
        # Avg bus bandwidth    : 0.1
        """;
        Path f = tmp.resolve("two_all_reduce.txt");
        Files.writeString(f, run.replace("TIME", "9.00") + run.replace("TIME", "5.00"));
        MeasurementSet s = new MeasurementSet();
        NcclTestsLog.parse(f, NcclTestsLog.Options.NONE, s);
        assertEquals(
                List.of(9.0, 5.0),
                s.measurements().stream().map(Measurement::timeUs).toList());
        assertEquals(2, s.warnings().size(), s.warnings().toString());
        assertTrue(
                s.warnings().get(0).startsWith(f + ": 2 runs (tables at lines 4, 10) name no forced configuration"),
                s.warnings().get(0));
        assertEquals(
                f + ": 2 runs of AllReduce at nRanks 2, nNodes 1 (tables at lines 4, 10) cannot be told apart: pooled "
                        + "as replicates of NCCL's own pick; if they were forced differently, split the file and pass each with "
                        + "--in FILE --algo X --proto Y",
                s.warnings().get(1));
    }

    @Test
    void zeroTimeIsAnErrorNamingFileAndLine() throws Exception {
        Path f = tmp.resolve("zero_all_reduce.txt");
        Files.writeString(f, """
        # nThread 1 nGpus 2 minBytes 0 maxBytes 2048 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0
        #  Rank  0 Group  0 Pid   1 on     host-a device  0 [0x18] GPU
        #  Rank  1 Group  0 Pid   1 on     host-a device  1 [0x19] GPU
        #       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
                   0             0     float     sum      -1    0.00    0.00    0.00      0    0.00    0.00    0.00      0
                1024           256     float     sum      -1    9.00    0.11    0.11      0    0.00    0.12    0.12      0
        # Avg bus bandwidth    : 0.1
        """);
        InputException e = assertThrows(
                InputException.class, () -> NcclTestsLog.parse(f, NcclTestsLog.Options.NONE, new MeasurementSet()));
        // the 0-byte row may time 0 (it is skipped); a real size may not
        assertEquals(f + ":6: time (in-place) '0.00' is not a time: times must be > 0 us", e.getMessage());
    }

    @Test
    void partialForcingIsCompletedBySelectionLinesOrNotUsed() throws Exception {
        String head = """
        # nThread 1 nGpus 2 minBytes 1024 maxBytes 2048 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0
        #  Rank  0 Group  0 Pid   1 on     host-a device  0 [0x18] GPU
        #  Rank  1 Group  0 Pid   1 on     host-a device  1 [0x19] GPU
        host-a:1:1 [0] NCCL INFO NCCL_PROTO set by environment to LL
        #       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
        """;
        Path with = tmp.resolve("with_all_reduce.txt");
        Files.writeString(with, head + """
        host-a:1:1 [0] NCCL INFO AllReduce: 1024 Bytes -> Algo TREE proto LL channel{Lo..Hi}={0..0}
                1024           256     float     sum      -1    9.00    0.11    0.11      0    8.90    0.12    0.12      0
                2048           512     float     sum      -1    9.50    0.22    0.22      0    9.40    0.22    0.22      0
        # Avg bus bandwidth    : 0.1
        """);
        MeasurementSet s = new MeasurementSet();
        NcclTestsLog.parse(with, NcclTestsLog.Options.NONE, s);
        assertEquals(1, s.measurements().size());
        assertEquals(
                new RunConfig(Algorithm.TREE, Protocol.LL, 0),
                s.measurements().getFirst().config());
        assertEquals(1, s.warnings().size());
        assertTrue(
                s.warnings().getFirst().contains("1 row not used: the run forced auto/LL"),
                s.warnings().getFirst());
    }

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            quoteCharacter = '"',
            value = {
                "#  size  count  type  redop  root  time  algbw  busbw  #wrong  time  algbw  busbw  #wrong | 13 | false | 5,9",
                "#  size  count  type  time  algbw  busbw  error  time  algbw  busbw  error | 11 | true | 3,7",
                "#  size  count  type  redop  root  cputime  algbw  busbw  #wrong  time  algbw  busbw  #wrong  timestamp | 13 | false | 5,9",
            })
    void layoutsAreReadFromTheColumnHeader(String header, int cols, boolean error, String times) {
        NcclTestsLog.Layout l = NcclTestsLog.layout(header);
        assertEquals(cols, l.nCols());
        assertEquals(error, l.errorColumn());
        assertEquals(times, l.time()[0] + "," + l.time()[1]);
        assertNull(NcclTestsLog.layout("#  (B)  (elements)  (us)"));
    }

    /**
     * nccl-tests' bus bandwidth factors (doc/PERFORMANCE.md): AllReduce 2(n-1)/n, ReduceScatter and
     * AllGather (n-1)/n, Broadcast and Reduce 1, which the rank count is inferred from.
     */
    @Test
    void busFactorsAreNcclTests() {
        assertEquals(1.5, io.nccltuner.model.BusBandwidth.factor(io.nccltuner.policy.Collective.AllReduce, 4), 1e-12);
        assertEquals(
                0.75, io.nccltuner.model.BusBandwidth.factor(io.nccltuner.policy.Collective.ReduceScatter, 4), 1e-12);
        assertEquals(0.75, io.nccltuner.model.BusBandwidth.factor(io.nccltuner.policy.Collective.AllGather, 4), 1e-12);
        assertEquals(1.0, io.nccltuner.model.BusBandwidth.factor(io.nccltuner.policy.Collective.Broadcast, 4), 1e-12);
        assertEquals(1.0, io.nccltuner.model.BusBandwidth.factor(io.nccltuner.policy.Collective.Reduce, 4), 1e-12);
    }
}
