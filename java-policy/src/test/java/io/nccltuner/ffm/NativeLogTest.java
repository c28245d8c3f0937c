package io.nccltuner.ffm;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.nccltuner.bindings.NcclTunerAbi;
import io.nccltuner.bindings.nccltj_call_t;
import io.nccltuner.engine.TunerLog;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * The engine's lines wait for the shim (bridge 10): the bridge's linesQueued says so, and
 * NCCLTJ_CALL_TAKE_LINE hands them over oldest first, each with its level and NCCL logger.
 */
class NativeLogTest {
    private final Arena arena = Arena.ofAuto();
    private final MemorySegment flag = arena.allocate(JAVA_INT);
    private final MemorySegment call = nccltj_call_t.allocate(arena);
    private final NativeLog log = new NativeLog(flag.address());

    /** What the shim reads after one TAKE_LINE into a buffer of {@code bytes}: "level logger text". */
    private String take(int bytes) {
        MemorySegment text = arena.allocate(bytes);
        call.fill((byte) 0);
        nccltj_call_t.op(call, NcclTunerAbi.NCCLTJ_CALL_TAKE_LINE());
        nccltj_call_t.text(call, text.address());
        nccltj_call_t.textBytes(call, bytes);
        log.take(call.address());
        int level = nccltj_call_t.level(call);
        return level == 0 ? "none" : level + " " + nccltj_call_t.logger(call).address() + " " + text.getString(0);
    }

    @Test
    void linesWaitInOrderWithTheirLevelAndLoggerAndTheFlagSaysSo() {
        assertEquals(0, flag.get(JAVA_INT, 0));
        log.log(MemorySegment.ofAddress(0x1000), TunerLog.INFO, "first");
        assertEquals(1, flag.get(JAVA_INT, 0));
        log.log(MemorySegment.ofAddress(0x2000), TunerLog.WARN, "second\rline \u202e!");
        assertEquals(TunerLog.INFO + " 4096 first", take(256));
        assertEquals(1, flag.get(JAVA_INT, 0), "one line still waits");
        // control characters become spaces, invisible format characters '?': one printable line
        assertEquals(TunerLog.WARN + " 8192 second line ?!", take(256));
        assertEquals(0, flag.get(JAVA_INT, 0));
        assertEquals("none", take(256));
    }

    @Test
    void aLineOutsideAnyCallGoesToTheLatestInitsLogger() {
        MemorySegment before = NativeLog.latestLogger;
        try {
            NativeLog.latestLogger = MemorySegment.ofAddress(0x3000);
            log.log(MemorySegment.NULL, TunerLog.INFO, "from the writer thread");
            assertEquals(TunerLog.INFO + " 12288 from the writer thread", take(256));
        } finally {
            NativeLog.latestLogger = before;
        }
    }

    /** A line longer than the shim's buffer is cut to fit with its NUL, never inside a UTF-8 sequence. */
    @Test
    void aLongLineIsCutAtACharacterBoundary() {
        log.log(MemorySegment.ofAddress(1), TunerLog.INFO, "ab\u00e9cd"); // é is 2 bytes: a b 0xc3 0xa9 c d
        assertEquals(TunerLog.INFO + " 1 ab", take(4), "3 bytes fit; the third would split é");
        log.log(MemorySegment.ofAddress(1), TunerLog.INFO, "ab\u00e9cd");
        assertEquals(TunerLog.INFO + " 1 ab\u00e9", take(5));
        log.log(MemorySegment.ofAddress(1), TunerLog.INFO, "x".repeat(5000));
        MemorySegment text = arena.allocate(2048);
        call.fill((byte) 0);
        nccltj_call_t.text(call, text.address());
        nccltj_call_t.textBytes(call, 2048);
        log.take(call.address());
        assertEquals(2047, text.getString(0, StandardCharsets.UTF_8).length());
    }

    /** Lines beyond MAX_QUEUED are counted and said in one line after the last one taken. */
    @Test
    void linesBeyondTheQueueAreCountedInOneLine() {
        for (int i = 0; i < NativeLog.MAX_QUEUED + 3; i++) {
            log.log(MemorySegment.ofAddress(7), TunerLog.INFO, "line " + i);
        }
        for (int i = 0; i < NativeLog.MAX_QUEUED; i++) {
            assertEquals(TunerLog.INFO + " 7 line " + i, take(64));
        }
        assertEquals(1, flag.get(JAVA_INT, 0), "the count is still to be said");
        assertEquals(
                TunerLog.INFO + " 0 3 lines of the engine were dropped (more than 4096 waiting for a host call)",
                take(256));
        assertEquals(0, flag.get(JAVA_INT, 0));
        assertEquals("none", take(256));
    }

    /** A take with no buffer (text 0, as a call that carries none) hands nothing over: the line still waits. */
    @Test
    void aTakeWithNoBufferLeavesTheLineWaiting() {
        log.log(MemorySegment.ofAddress(0x1000), TunerLog.INFO, "kept");
        call.fill((byte) 0);
        nccltj_call_t.op(call, NcclTunerAbi.NCCLTJ_CALL_INIT());
        log.take(call.address());
        assertEquals(0, nccltj_call_t.level(call), "no line handed over without a buffer");
        assertEquals(1, flag.get(JAVA_INT, 0), "the line still waits");
        assertEquals(TunerLog.INFO + " 4096 kept", take(256));
    }

    /** The same String logged again (the identity cache) is as printable as the first time. */
    @Test
    void theSameLineLoggedTwiceIsPrintableBothTimes() {
        String line = "tab\tand\rreturn";
        log.log(MemorySegment.ofAddress(0x1000), TunerLog.INFO, line);
        log.log(MemorySegment.ofAddress(0x1000), TunerLog.INFO, line);
        assertEquals(TunerLog.INFO + " 4096 tab and return", take(256));
        assertEquals(TunerLog.INFO + " 4096 tab and return", take(256));
    }

    /**
     * A TAKE_LINE upcall hands over exactly one line: the control upcall hands over none of its
     * own into the same buffer after it (which would overwrite the line taken and lose it).
     */
    @Test
    void aTakeLineUpcallHandsOverOneLineOnly() {
        NativeLog before = Upcalls.lines;
        try {
            Upcalls.lines = log;
            log.log(MemorySegment.ofAddress(0x1000), TunerLog.INFO, "first");
            log.log(MemorySegment.ofAddress(0x2000), TunerLog.INFO, "second");
            MemorySegment text = arena.allocate(256);
            call.fill((byte) 0);
            nccltj_call_t.op(call, NcclTunerAbi.NCCLTJ_CALL_TAKE_LINE());
            nccltj_call_t.text(call, text.address());
            nccltj_call_t.textBytes(call, 256);
            assertEquals(NcclTunerAbi.NCCLTJ_CONTROL_OK(), Upcalls.control(call.address()));
            assertEquals("first", text.getString(0));
            assertEquals(1, flag.get(JAVA_INT, 0), "the second line still waits");
            assertEquals(TunerLog.INFO + " 8192 second", take(256));
        } finally {
            Upcalls.lines = before;
        }
    }
}
