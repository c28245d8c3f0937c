package io.nccltuner.compile;

import static org.junit.jupiter.api.Assertions.assertEquals;
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

class MeasurementCsvTest {
    @TempDir
    Path tmp;

    static final String SWEEP_HEADER =
            "collective,size_bytes,algorithm,protocol,max_channels,ranks,nodes,config,replicate,median_us,p95_us,busbw_gbps,wrong\n";

    @Test
    void readsTheSharedSweep() throws Exception {
        MeasurementSet s = Fixtures.read("h200-2rank-sweep_allreduce.rep1.csv");
        List<Measurement> ms = s.measurements();
        assertEquals(175, ms.size());
        assertEquals(25, ms.stream().filter(m -> m.config().isAuto()).count());
        assertTrue(ms.stream()
                .allMatch(m -> m.collective() == Collective.AllReduce
                        && m.nRanks() == 2
                        && m.nNodes() == 2
                        && m.numPipeOps().equals(Range.exactly(1))));
        Measurement oneChannel = ms.stream()
                .filter(m -> m.nBytes() == 4 && m.config().equals(new RunConfig(Algorithm.RING, Protocol.SIMPLE, 1)))
                .findFirst()
                .orElseThrow();
        assertEquals(4537.696, oneChannel.timeUs(), 1e-9);
        assertTrue(s.refused().isEmpty());
    }

    @Test
    void readsOptimizeConfigColumns() throws Exception {
        MeasurementSet s = Fixtures.read("optimize-config_perf.csv");
        // the regBuff 1 row is skipped with a warning
        assertEquals(6, s.measurements().size());
        assertEquals(1, s.warnings().size());
        assertTrue(
                s.warnings()
                        .getFirst()
                        .endsWith("1 row with regBuff 1 skipped: a v3 tuner is not told whether the "
                                + "user buffer is registered"),
                s.warnings().getFirst());
        Measurement m = s.measurements().get(1);
        assertEquals(new RunConfig(Algorithm.RING, Protocol.LL128, 0), m.config());
        assertEquals(Range.ANY, m.numPipeOps());
        assertEquals(8, m.nRanks());
        assertEquals(1, m.nNodes());
        assertEquals(24.0, m.timeUs(), 1e-9);
    }

    @Test
    void wrongRowsAreRefusedWithFileAndLine() throws Exception {
        Path f = tmp.resolve("sweep.csv");
        Files.writeString(
                f,
                SWEEP_HEADER
                        + "AllReduce,1024,auto,auto,auto,2,1,auto,1,10.0,11.0,0.1,0\n"
                        + "AllReduce,1024,Ring,LL,auto,2,1,ring_ll,1,8.0,9.0,0.1,3\n");
        MeasurementSet s = new MeasurementSet();
        MeasurementCsv.parse(f, s);
        assertEquals(1, s.measurements().size());
        assertEquals(List.of(f + ":3: wrong = 3: results were wrong; row never used"), s.refused());
    }

    @Test
    void unknownNamesAndBadNumbersNameFileAndLine() throws Exception {
        Path f = tmp.resolve("bad.csv");
        Files.writeString(f, SWEEP_HEADER + "AllReduce,1024,Rnig,LL,auto,2,1,x,1,8.0,9.0,0.1,0\n");
        InputException e = assertThrows(InputException.class, () -> MeasurementCsv.parse(f, new MeasurementSet()));
        assertTrue(e.getMessage().startsWith(f + ":2: unknown algorithm 'Rnig'"), e.getMessage());
        Files.writeString(f, SWEEP_HEADER + "AllReduce,1024,Ring,LL,auto,2,1,x,1,8.o,9.0,0.1,0\n");
        e = assertThrows(InputException.class, () -> MeasurementCsv.parse(f, new MeasurementSet()));
        assertEquals(f + ":2: median_us '8.o' is not a time: times must be finite numbers > 0 us", e.getMessage());
        Files.writeString(f, SWEEP_HEADER + "AllReduce,1024,Ring,LL,auto,2\n");
        e = assertThrows(InputException.class, () -> MeasurementCsv.parse(f, new MeasurementSet()));
        assertEquals(f + ":2: row has 6 fields, the header has 13; the row looks truncated", e.getMessage());
        Files.writeString(
                f,
                SWEEP_HEADER + "AllReduce,1024,auto,auto,auto,2,1,auto,1,10.0,11.0,0.1,0\n"
                        + "AllReduce,1024,Ring,LL,auto,2,1,ring_ll,1,8.0,9.0,0.1,0,extra\n");
        e = assertThrows(InputException.class, () -> MeasurementCsv.parse(f, new MeasurementSet()));
        assertEquals(
                f + ":3: row has 14 fields, the header has 13; a stray comma, or a value the header does not name",
                e.getMessage());
        Files.writeString(f, "size_bytes,foo\n1,2\n");
        e = assertThrows(InputException.class, () -> MeasurementCsv.parse(f, new MeasurementSet()));
        assertTrue(e.getMessage().startsWith(f + ":1: header names neither the sweep columns"), e.getMessage());
    }

    @Test
    void timesMustBePositiveAndFinite() throws Exception {
        Path f = tmp.resolve("zero.csv");
        for (String t : new String[] {"0", "0.0", "-5", "Infinity", "NaN"}) {
            Files.writeString(
                    f,
                    SWEEP_HEADER + "AllReduce,1024,auto,auto,auto,2,1,auto,1,10.0,11.0,0.1,0\n"
                            + "AllReduce,1024,Ring,LL,auto,2,1,ring_ll,1," + t + ",9.0,0.1,0\n");
            InputException e = assertThrows(InputException.class, () -> MeasurementCsv.parse(f, new MeasurementSet()));
            assertEquals(
                    f + ":3: median_us '" + t + "' is not a time: times must be finite numbers > 0 us", e.getMessage());
        }
        // rows of 0 bytes are skipped anyway, whatever their time
        Files.writeString(
                f,
                SWEEP_HEADER + "AllReduce,0,auto,auto,auto,2,1,auto,1,0,0,0,0\n"
                        + "AllReduce,1024,Ring,LL,auto,2,1,ring_ll,1,1e-300,9.0,0.1,0\n");
        MeasurementSet s = new MeasurementSet();
        MeasurementCsv.parse(f, s);
        assertEquals(
                List.of(1e-300),
                s.measurements().stream().map(Measurement::timeUs).toList());
    }
}
