package io.nccltuner.engine;

import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nccltuner.policy.Algorithm;
import io.nccltuner.policy.Collective;
import io.nccltuner.policy.Mode;
import io.nccltuner.policy.Protocol;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;
import org.junit.jupiter.api.Test;

/**
 * Many communicators open at once (issue 23): an init or a destroy allocates the same few hundred
 * bytes whether 10 or 5,000 communicators are open (a copy of the handle table per init and per
 * destroy made both grow with the count: 15 KB an init with 5,000 open), and every handle still
 * decides after the table grew and after slots were reused.
 */
class EngineManyCommsTest {
    static final TunerLog QUIET = (logger, level, line) -> {};

    static long allocated() {
        return ((com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean())
                .getThreadAllocatedBytes(Thread.currentThread().threadId());
    }

    @Test
    void anInitAndADestroyAllocateAsMuchWithFiveThousandOpenAsWithTen() throws Exception {
        Engine e = new Engine(EngineTest.policy(EngineTest.RULES), Mode.ENFORCE, QUIET, null);
        int n = 5000;
        long[] h = new long[n];
        for (int i = 0; i < 10; i++) { // first-time paths out of the way
            e.destroy(e.init(2, 1, MemorySegment.NULL));
        }
        long b0 = allocated();
        for (int i = 0; i < 10; i++) {
            h[i] = e.init(2, 1, MemorySegment.NULL);
        }
        long firstTen = (allocated() - b0) / 10;
        for (int i = 10; i < n - 10; i++) {
            h[i] = e.init(2, 1, MemorySegment.NULL);
        }
        long b1 = allocated();
        for (int i = n - 10; i < n; i++) {
            h[i] = e.init(2, 1, MemorySegment.NULL);
        }
        long lastTen = (allocated() - b1) / 10;
        // An init allocates its Comm and a handful of small objects (about 200 B measured); the
        // table's copy alone was 4 bytes per open communicator (20 KB at 5,000).
        assertTrue(
                firstTen < 1024 && lastTen < 1024,
                "bytes per init: " + firstTen + " with 10 open, " + lastTen + " with " + (n - 10) + " open");
        long b2 = allocated();
        for (int i = n - 10; i < n; i++) {
            e.destroy(h[i]);
        }
        long destroyWithMany = (allocated() - b2) / 10;
        assertTrue(destroyWithMany < 4096, "bytes per destroy with " + n + " open: " + destroyWithMany);
    }

    @Test
    void everyHandleDecidesAfterTheTableGrewAndSlotsWereReused() throws Exception {
        Engine e = new Engine(EngineTest.policy(EngineTest.RULES), Mode.ENFORCE, QUIET, null);
        long[] h = new long[100];
        for (int i = 0; i < h.length; i++) {
            h[i] = e.init(2, 1, MemorySegment.NULL);
        }
        for (int i = 0; i < h.length; i += 2) { // free every other slot, then reuse them
            e.destroy(h[i]);
        }
        long[] again = new long[50];
        for (int i = 0; i < again.length; i++) {
            again[i] = e.init(2, 1, MemorySegment.NULL);
        }
        try (Arena arena = Arena.ofConfined()) {
            int gather = Collective.AllGather.id();
            int ringSimple = Algorithm.RING.id() * 3 + Protocol.SIMPLE.id();
            for (int i = 0; i < h.length; i++) {
                MemorySegment t = arena.allocate(JAVA_FLOAT, 21);
                t.fill((byte) 0x41); // every entry 12.07 us: offered
                MemorySegment ch = arena.allocate(JAVA_INT);
                int code = e.getCollInfo(h[i], gather, 4096, 1, t, 7, 3, ch);
                if (i % 2 == 0) {
                    assertEquals(0, code, "a destroyed handle decides nothing, its slot reused or not: " + i);
                    assertTrue(t.getAtIndex(JAVA_FLOAT, ringSimple) > 12f, "its cost table untouched: " + i);
                } else {
                    assertEquals(ringSimple, Engine.ncclPick(t, 7, 3), "AllGather RING/SIMPLE on open handle " + i);
                }
            }
            for (long a : again) {
                MemorySegment t = arena.allocate(JAVA_FLOAT, 21);
                t.fill((byte) 0x41);
                MemorySegment ch = arena.allocate(JAVA_INT);
                e.getCollInfo(a, gather, 4096, 1, t, 7, 3, ch);
                assertEquals(ringSimple, Engine.ncclPick(t, 7, 3), "AllGather RING/SIMPLE on a reused slot");
            }
        }
    }
}
