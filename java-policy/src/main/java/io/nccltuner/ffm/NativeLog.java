package io.nccltuner.ffm;

import io.nccltuner.bindings.nccltj_log_fn;
import io.nccltuner.engine.TunerLog;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;

/**
 * {@link TunerLog} through the shim's {@code nccltj_log_fn} (a downcall), which calls NCCL's
 * variadic ncclDebugLogger_t as {@code logger(level, NCCL_TUNING, file, line, "TUNER/Java: %s",
 * message)}. Only used off the hot path (init, destroy, warnings), so it may allocate.
 */
final class NativeLog implements TunerLog {
    private final MemorySegment logFn;

    /** NCCL's logger of the latest init: used for lines that arise outside any call (decision log). */
    static volatile MemorySegment latestLogger = MemorySegment.NULL;

    /** @param logFn the shim's log function, from the bridge */
    NativeLog(MemorySegment logFn) {
        this.logFn = logFn;
    }

    /** A native buffer for the message, reused while no other thread logs; guarded by {@link #busy}. */
    private MemorySegment buffer = MemorySegment.NULL;

    private boolean busy; // guarded by this

    @Override
    public void log(MemorySegment ncclLogger, int level, String message) {
        MemorySegment logger = ncclLogger.address() == 0 ? latestLogger : ncclLogger;
        MemorySegment known = repeated(message);
        if (known != null) {
            nccltj_log_fn.invoke(logFn, logger, level, known);
            return;
        }
        byte[] utf8 = message.getBytes(StandardCharsets.UTF_8);
        if (!plainAscii(utf8)) { // a control or a non-ASCII character: the full check
            utf8 = printable(message).getBytes(StandardCharsets.UTF_8);
        }
        // One buffer instead of a confined arena per line (its opening, allocation and closing ran
        // interpreted at every init and destroy; issue 23). Not held across the downcall by a lock:
        // NCCL's logger may wait for a lock the host holds while another thread logs, so a second
        // thread here takes an arena of its own instead of waiting.
        if (claim()) {
            try {
                MemorySegment b = buffer;
                if (b.byteSize() < utf8.length + 1L) {
                    b = Arena.ofAuto().allocate(Math.max(1024, utf8.length + 1L));
                    buffer = b;
                }
                MemorySegment.copy(utf8, 0, b, ValueLayout.JAVA_BYTE, 0, utf8.length);
                b.set(ValueLayout.JAVA_BYTE, utf8.length, (byte) 0);
                nccltj_log_fn.invoke(logFn, logger, level, b);
            } finally {
                release();
            }
            return;
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment b = arena.allocate(utf8.length + 1L);
            MemorySegment.copy(utf8, 0, b, ValueLayout.JAVA_BYTE, 0, utf8.length);
            nccltj_log_fn.invoke(logFn, logger, level, b);
        }
    }

    /*
     * Lines that repeat as the same String (the engine keeps an init's line per communicator
     * shape; with no commId every init logs the same object): their printable native copy, made at
     * the second sighting, so one-off lines (destroy's summaries) allocate nothing native.
     * Identity only: a String's content cannot change. Guarded by this.
     */
    private static final int SLOTS = 8;
    private final String[] seen = new String[SLOTS];
    private int seenNext;
    private final String[] kept = new String[SLOTS];
    private final MemorySegment[] keptCopy = new MemorySegment[SLOTS];
    private int keptNext;

    /** @return the native copy of a message logged before as this same String, or null */
    private synchronized MemorySegment repeated(String message) {
        for (int i = 0; i < SLOTS; i++) {
            if (kept[i] == message) {
                return keptCopy[i];
            }
        }
        for (int i = 0; i < SLOTS; i++) {
            if (seen[i] == message) {
                seen[i] = null;
                MemorySegment copy = Arena.ofAuto().allocateFrom(printable(message));
                kept[keptNext] = message;
                keptCopy[keptNext] = copy;
                keptNext = (keptNext + 1) % SLOTS;
                return copy;
            }
        }
        seen[seenNext] = message;
        seenNext = (seenNext + 1) % SLOTS;
        return null;
    }

    /**
     * Whether every byte is printable ASCII (0x20..0x7e), so {@link #printable} would change
     * nothing. A method of its own: the plugin's JVM compiles {@link #log} early (the shim's
     * CompileThresholdScaling for the init path), and this loop inside it would have made that an
     * on-stack compilation during the JVM's start.
     */
    static boolean plainAscii(byte[] utf8) {
        for (byte b : utf8) {
            if (b < 0x20 || b == 0x7f) {
                return false;
            }
        }
        return true;
    }

    private synchronized boolean claim() {
        if (busy) {
            return false;
        }
        busy = true;
        return true;
    }

    private synchronized void release() {
        busy = false;
    }

    /**
     * One printable line: control characters (CR, LF, ESC, NUL, ...) become spaces and invisible
     * format characters (bidi overrides, zero-width spaces) become '?'. Messages quote policy text
     * (names, unknown fields); without this a policy name "x\rNCCL WARN ..." forged a log line and
     * ESC sequences reached the terminal.
     */
    static String printable(String message) {
        StringBuilder sb = null;
        for (int i = 0; i < message.length(); i++) {
            char c = message.charAt(i);
            int type = Character.getType(c);
            char r = type == Character.CONTROL ? ' ' : type == Character.FORMAT ? '?' : c;
            if (r != c && sb == null) {
                sb = new StringBuilder(message);
            }
            if (sb != null) {
                sb.setCharAt(i, r);
            }
        }
        return sb == null ? message : sb.toString();
    }
}
