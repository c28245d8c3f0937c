package io.nccltuner.engine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nccltuner.policy.Collective;
import io.nccltuner.trace.TraceCall;
import io.nccltuner.trace.TraceFile;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(60)
class CallRecorderTest {
    @TempDir
    Path tmp;

    final List<String> logged = new ArrayList<>();
    final TunerLog log = (l, level, m) -> logged.add(level + " " + m);

    @AfterEach
    void off() {
        CallRecorder.configure(Map.of(), log);
    }

    @Test
    void writesTraceRowsThatReadBackExactly() throws Exception {
        Path p = tmp.resolve("rec-%p.csv");
        String note = CallRecorder.configure(Map.of("NCCL_TUNER_JAVA_RECORD", p.toString()), log);
        CallRecorder r = CallRecorder.current();
        Path file = tmp.resolve("rec-" + ProcessHandle.current().pid() + ".csv");
        assertEquals("recording every tuner call to " + file + " (NCCL_TUNER_JAVA_RECORD)", note);
        float[] costs = {
            -1,
            -1,
            -1,
            11.6133f,
            1e-5f,
            442364f,
            3.6e9f,
            0.1f,
            -1,
            7,
            7.25f,
            123456.789f,
            -1,
            -1,
            -1,
            -1,
            -1,
            -1,
            1.17549435e-38f,
            3.4028235e38f,
            2
        };
        try (Arena a = Arena.ofConfined()) {
            MemorySegment t = a.allocateFrom(ValueLayout.JAVA_FLOAT, costs);
            MemorySegment ch = a.allocateFrom(ValueLayout.JAVA_INT, 4);
            long h1 = (7L << 32) | 1;
            long h2 = (8L << 32) | 70; // a slot beyond the first table
            r.init(h1, 16, 2);
            r.init(h2, 2, 2);
            r.get(h1, Collective.AllReduce.id(), -1L, 4, t, 0, 7, 3, ch, 0);
            r.get(h2, Collective.AllGather.id(), 1616, 1, t, 0, 6, 3, ch, 0);
            r.get(5, 4, 1, 1, t, 0, 7, 3, ch, 0); // unknown handle: not recorded
            r.get(h1, 4, 1, 1, t, 0, 8, 3, ch, 0); // larger than 7 x 3: dropped and counted
            r.destroy(h1, MemorySegment.NULL, log);
            r.destroy(h2, MemorySegment.NULL, log);
            r.get(h1, 4, 1, 1, t, 0, 7, 3, ch, 0); // destroyed: not recorded
        }
        assertTrue(r.flush(2000));
        TraceFile tf = TraceFile.read(file);
        assertEquals(6, tf.events().size());
        assertEquals(new TraceFile.Init(2, 0, 16, 2), tf.events().get(0));
        assertEquals(new TraceFile.Init(3, 1, 2, 2), tf.events().get(1));
        TraceCall c = tf.calls().get(0);
        assertEquals(
                List.of(0, 16, 2, Collective.AllReduce, -1L, 4, 7, 3, 4),
                List.of(
                        c.comm(),
                        c.nRanks(),
                        c.nNodes(),
                        c.collective(),
                        c.nBytes(),
                        c.numPipeOps(),
                        c.numAlgo(),
                        c.numProto(),
                        c.nChannelsIn()));
        assertArrayEquals(costs, c.costs());
        TraceCall d = tf.calls().get(1);
        assertEquals(
                List.of(1, Collective.AllGather, 1616L, 6), List.of(d.comm(), d.collective(), d.nBytes(), d.numAlgo()));
        assertArrayEquals(java.util.Arrays.copyOf(costs, 18), d.costs());
        assertEquals(new TraceFile.Destroy(6, 0), tf.events().get(4));
        assertEquals(1, r.dropped());
        assertTrue(
                logged.contains("3 record " + file + ": 5 rows written, 1 rows dropped (queue full or write failed)"),
                logged.toString());
        assertEquals("442364", CallRecorder.cost(442364f));
        assertEquals("-1", CallRecorder.cost(-1f));
        assertEquals("11.6133", CallRecorder.cost(11.6133f));
    }

    @Test
    void aFifoNobodyReadsNeitherBlocksNorGrowsDropsAreCounted() throws Exception {
        Path fifo = tmp.resolve("fifo.csv");
        assertEquals(0, new ProcessBuilder("mkfifo", fifo.toString()).start().waitFor());
        CallRecorder.configure(Map.of("NCCL_TUNER_JAVA_RECORD", fifo.toString()), log);
        CallRecorder r = CallRecorder.current();
        try (Arena a = Arena.ofConfined()) {
            MemorySegment t = a.allocate(ValueLayout.JAVA_FLOAT, 21);
            MemorySegment ch = a.allocate(ValueLayout.JAVA_INT);
            long h = (1L << 32) | 1;
            r.init(h, 2, 1);
            int n = CallRecorder.CAPACITY + 1000;
            for (int i = 0; i < n; i++) {
                r.get(h, 4, 1024, 1, t, 0, 7, 3, ch, 0);
            }
            assertEquals(
                    n - (CallRecorder.CAPACITY - 1), r.dropped(), "the init row and CAPACITY - 1 calls fit the ring");
            long t0 = System.nanoTime();
            r.destroy(h, MemorySegment.NULL, log);
            assertFalse(r.flush(50));
            assertTrue((System.nanoTime() - t0) / 1e9 < 5, "bounded waits");
        }
        assertTrue(logged.getLast().contains("1002 rows dropped"), logged.toString()); // the destroy row too
    }

    @Test
    void unwritablePathSaysWhyAndRecordsNothing() {
        String note = CallRecorder.configure(
                Map.of(
                        "NCCL_TUNER_JAVA_RECORD",
                        tmp.resolve("no/such/dir/r.csv").toString()),
                log);
        assertTrue(note.startsWith("cannot record to "), note);
        assertNull(CallRecorder.current());
        assertNull(CallRecorder.configure(Map.of(), log));
    }
}
