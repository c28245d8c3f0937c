package io.nccltuner.engine;

import static java.lang.foreign.ValueLayout.JAVA_FLOAT_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.nccltuner.policy.Mode;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * How the engine reads and writes NCCL's cost table (ffe810f): at addresses that are not 4-byte
 * aligned (unaligned accesses, no alignment check), such a table decides as an aligned one (NCCL's
 * pick, the candidate's 0.0 and its channels); and an entry of 0.0 is offered, as NCCL's
 * {@code >= 0} takes it.
 */
class EngineTableAccessTest {
    static final float U = EngineTest.U;

    /** A 7 x 3 table written at byte offset {@code at} of {@code mem} (TREE, RING, ..., NVLS rows). */
    private static void fill(MemorySegment mem, long at, float... values) {
        for (int i = 0; i < 7 * 3; i++) {
            mem.set(JAVA_FLOAT_UNALIGNED, at + (long) i * Float.BYTES, i < values.length ? values[i] : U);
        }
    }

    @Test
    void ncclPickReadsAnUnalignedTable() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment mem = arena.allocate(7 * 3 * Float.BYTES + 8, 8);
            for (long at = 1; at <= 3; at++) {
                fill(mem, at, 10, 11, 12, /*RING*/ 20, 5, 22);
                assertEquals(4, Engine.ncclPick(mem, at, 7, 3), "RING/LL128 at offset " + at);
            }
        }
    }

    @Test
    void anUnalignedTableAndNChannelsAreWrittenInEnforceMode() throws Exception {
        List<String> logged = new ArrayList<>();
        TunerLog log = (l, level, m) -> logged.add(m);
        Engine e = new Engine(EngineTest.policy(EngineTest.RULES), Mode.ENFORCE, log, null);
        long h = e.init(2, 1, MemorySegment.NULL);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment mem = arena.allocate(7 * 3 * Float.BYTES + 8, 8);
            MemorySegment ch = arena.allocate(16, 8);
            long table = 1;
            long nChannels = 2;
            // RING row offered, NVLS and PAT unavailable: the rule's RING/LL with 4 channels
            fill(mem, table, 10, 11, 12, /*RING*/ 20, 21, 22);
            ch.set(JAVA_INT_UNALIGNED, nChannels, 0);
            e.getCollInfo(h, 4, 1 << 20, 1, mem, table, 7, 3, -1, ch, nChannels);
            assertEquals(0f, mem.get(JAVA_FLOAT_UNALIGNED, table + 3L * Float.BYTES), "RING/LL set to 0.0");
            assertEquals(4, ch.get(JAVA_INT_UNALIGNED, nChannels), "RING/LL's 4 channels");
            assertEquals(10f, mem.get(JAVA_FLOAT_UNALIGNED, table), "TREE/LL untouched");
            assertEquals("summary profile two mode enforce: calls 1, rule hits 1, applied 1", e.destroy(h));
        }
        assertEquals(
                List.of(),
                logged.stream()
                        .filter(m -> m.contains("WARN") || m.contains("fail"))
                        .toList());
    }

    /** A candidate whose entry is already 0.0 (another tuner's write, or NCCL's estimate) is offered: >= 0. */
    @Test
    void aCandidateWhoseEntryIsZeroIsOffered() throws Exception {
        Engine e = new Engine(EngineTest.policy(EngineTest.RULES), Mode.ENFORCE, (l, level, m) -> {}, null);
        long h = e.init(2, 1, MemorySegment.NULL);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment mem = arena.allocate(7 * 3 * Float.BYTES, 8);
            MemorySegment ch = arena.allocate(8, 8);
            // PAT and NVLS unavailable; RING/LL, the rule's third candidate, is 0.0
            fill(mem, 0, 10, 11, 12, /*RING*/ 0f, 21, 22);
            e.getCollInfo(h, 4, 1 << 20, 1, mem, 0, 7, 3, -1, ch, 0);
            assertEquals(4, ch.get(JAVA_INT_UNALIGNED, 0), "RING/LL's 4 channels, not TREE/LL128's none");
            assertEquals(0f, mem.get(JAVA_FLOAT_UNALIGNED, 3L * Float.BYTES));
            assertEquals(11f, mem.get(JAVA_FLOAT_UNALIGNED, 1L * Float.BYTES), "TREE/LL128 untouched");
        }
    }
}
