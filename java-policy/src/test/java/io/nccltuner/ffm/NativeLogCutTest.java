package io.nccltuner.ffm;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.nccltuner.bindings.NcclTunerAbi;
import io.nccltuner.bindings.nccltj_call_t;
import io.nccltuner.engine.TunerLog;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * NCCLTJ_CALL_TAKE_LINE (bridge 10) beyond NativeLogTest: a cut never splits a character of 3 or 4
 * UTF-8 bytes, and the level is written NCCL_LOG_NONE when no line waits, whatever the call held.
 */
class NativeLogCutTest {
    private final Arena arena = Arena.ofAuto();
    private final MemorySegment flag = arena.allocate(java.lang.foreign.ValueLayout.JAVA_INT);
    private final MemorySegment call = nccltj_call_t.allocate(arena);
    private final NativeLog log = new NativeLog(flag.address());

    /** The bytes the shim reads after one TAKE_LINE into a buffer of {@code bytes}, up to the NUL. */
    private byte[] take(int bytes) {
        MemorySegment text = arena.allocate(bytes);
        call.fill((byte) 0);
        nccltj_call_t.op(call, NcclTunerAbi.NCCLTJ_CALL_TAKE_LINE());
        nccltj_call_t.text(call, text.address());
        nccltj_call_t.textBytes(call, bytes);
        log.take(call.address());
        return text.getString(0, StandardCharsets.ISO_8859_1).getBytes(StandardCharsets.ISO_8859_1);
    }

    /** "ab€d" (€ is e2 82 ac) and "ab😀d" (f0 9f 98 80) cut at every length: whole characters only. */
    @Test
    void aCutNeverSplitsACharacterOfThreeOrFourBytes() {
        for (String s : new String[] {"ab\u20acd", "ab\ud83d\ude00d"}) {
            byte[] utf8 = s.getBytes(StandardCharsets.UTF_8);
            int charEnd = utf8.length - 1; // the character ends before the 'd'
            for (int bytes = 2; bytes <= utf8.length + 1; bytes++) {
                log.log(MemorySegment.ofAddress(1), TunerLog.INFO, s);
                byte[] got = take(bytes);
                int fits = bytes - 1;
                int expected = fits >= utf8.length ? utf8.length : fits >= charEnd ? charEnd : Math.min(fits, 2);
                assertEquals(
                        new String(utf8, 0, expected, StandardCharsets.UTF_8),
                        new String(got, StandardCharsets.UTF_8),
                        s + " into " + bytes + " bytes");
                assertEquals(expected, got.length, s + " into " + bytes + " bytes");
            }
        }
    }

    /** No line waits: level NCCL_LOG_NONE is written, not left as the caller's memory held it. */
    @Test
    void noLineWaitingWritesLevelNone() {
        MemorySegment text = arena.allocate(64);
        call.fill((byte) 0);
        nccltj_call_t.op(call, NcclTunerAbi.NCCLTJ_CALL_TAKE_LINE());
        nccltj_call_t.text(call, text.address());
        nccltj_call_t.textBytes(call, 64);
        nccltj_call_t.level(call, TunerLog.WARN);
        log.take(call.address());
        assertEquals(0, nccltj_call_t.level(call));
    }
}
