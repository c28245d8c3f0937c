package io.nccltuner.ffm;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import io.nccltuner.bindings.nccltj_call_t;
import io.nccltuner.engine.TunerLog;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;

/**
 * {@link TunerLog} of the plugin: each line waits in a queue until the shim takes it, after the
 * upcall in which it was logged returns (or the next one, for a line of a JVM thread): the oldest
 * comes back in the control call's own text buffer ({@link #take}, so an init or destroy that logs
 * one line needs no second upcall), the others with NCCLTJ_CALL_TAKE_LINE; the shim calls NCCL's variadic ncclDebugLogger_t from C as
 * {@code logger(level, NCCL_TUNING, file, line, "TUNER/Java: %s", line)} (bridge 10,
 * plugin-shim/include/nccltj_bridge.h). The engine makes no downcall: making the one it had and
 * linking its first call took about 6 ms of a 62 ms first init (10 method-handle classes spun;
 * bench_driver, AOT cache, Intel Xeon, 2026-12-03), and NCCL's logger now never runs beneath Java
 * frames. The bridge's {@code linesQueued} is non-zero while a line waits.
 *
 * <p>At most {@link #MAX_QUEUED} lines wait (a JVM thread logging without a host call between
 * them); the lines beyond are counted and said in one line after the last taken.
 */
final class NativeLog implements TunerLog {
    /** Lines that may wait at once. */
    static final int MAX_QUEUED = 4096;

    /** NCCL's logger of the latest init: used for lines that arise outside any call (decision log). */
    static volatile MemorySegment latestLogger = MemorySegment.NULL;

    /** One waiting line: NCCL's logger as an address, NCCL_LOG_* level, printable UTF-8 bytes. */
    private record Line(long logger, int level, byte[] utf8) {}

    private final ArrayDeque<Line> queue = new ArrayDeque<>(); // guarded by this
    private long dropped; // guarded by this
    private final long linesQueued;

    /** @param linesQueued the address of the bridge's linesQueued (0: none, as in tests) */
    NativeLog(long linesQueued) {
        this.linesQueued = linesQueued;
    }

    @Override
    public void log(MemorySegment ncclLogger, int level, String message) {
        long logger = (ncclLogger.address() == 0 ? latestLogger : ncclLogger).address();
        byte[] utf8 = known(message);
        if (utf8 == null) {
            utf8 = message.getBytes(StandardCharsets.UTF_8);
            if (!plainAscii(utf8)) { // a control or a non-ASCII character: the full check
                utf8 = printable(message).getBytes(StandardCharsets.UTF_8);
            }
            keep(message, utf8);
        }
        synchronized (this) {
            if (queue.size() < MAX_QUEUED) {
                queue.add(new Line(logger, level, utf8));
            } else {
                dropped++;
            }
            setQueued(1);
        }
    }

    /**
     * NCCLTJ_CALL_TAKE_LINE: the oldest waiting line into the shim's buffer ({@code text}, {@code
     * textBytes} bytes), cut at a character boundary to fit with its NUL, and its level and logger
     * into the call; level 0 (NCCL_LOG_NONE) when none waits. After the last line, a count of the
     * lines dropped, if any.
     *
     * @param call the nccltj_call_t's address
     */
    synchronized void take(long call) {
        MemorySegment all = Upcalls.ALL;
        // bulk copies, not a VarHandle access per field: each access path is one more that HotSpot
        // compiles as communicators come and go (GuestIT's reload window grew 1-6 MiB with them)
        MemorySegment.copy(all, JAVA_LONG, call + TEXT, buffer, 0, 2); // text, textBytes
        long text = buffer[0];
        long textBytes = buffer[1];
        boolean room = text != 0 && textBytes >= 2;
        Line line = room ? queue.poll() : null; // no buffer: the line waits
        if (line == null && room && dropped > 0) {
            line = new Line(
                    latestLogger.address(),
                    LEVEL_INFO,
                    (dropped + " lines of the engine were dropped (more than " + MAX_QUEUED
                                    + " waiting for a host call)")
                            .getBytes(StandardCharsets.US_ASCII));
            dropped = 0;
        }
        if (queue.isEmpty() && dropped == 0) {
            setQueued(0);
        }
        if (line == null) {
            level[0] = 0;
            MemorySegment.copy(level, 0, all, JAVA_INT, call + LEVEL, 1);
            return;
        }
        int n = (int) Math.min(line.utf8().length, textBytes - 1);
        while (n < line.utf8().length && n > 0 && (line.utf8()[n] & 0xc0) == 0x80) {
            n--; // not inside a UTF-8 sequence
        }
        MemorySegment.copy(line.utf8(), 0, all, JAVA_BYTE, text, n);
        MemorySegment.copy(NUL, 0, all, JAVA_BYTE, text + n, 1);
        buffer[0] = line.logger();
        MemorySegment.copy(buffer, 0, all, JAVA_LONG, call + LOGGER, 1);
        level[0] = line.level();
        MemorySegment.copy(level, 0, all, JAVA_INT, call + LEVEL, 1);
    }

    private static final long TEXT = nccltj_call_t.text$offset(); // textBytes follows it
    private static final long LOGGER = nccltj_call_t.logger$offset();
    private static final long LEVEL = nccltj_call_t.level$offset();
    private static final byte[] NUL = {0};
    private final long[] buffer = new long[2]; // guarded by this
    private final int[] level = new int[1]; // guarded by this
    private final int[] flag = new int[1]; // guarded by this
    private volatile boolean queued;

    /*
     * The printable bytes of the last lines logged, by the String's identity: the engine keeps an
     * init's line per communicator shape (with no commId every init logs the same object), so a
     * communicator that comes and goes costs no encoding and no byte scan (plainAscii's loop,
     * run per init, made HotSpot compile it within GuestIT's reload window). Guarded by this.
     */
    private static final int KNOWN = 8;
    private final String[] knownText = new String[KNOWN];
    private final byte[][] knownBytes = new byte[KNOWN][];
    private int knownNext;

    private synchronized byte[] known(String message) {
        for (int i = 0; i < KNOWN; i++) {
            if (knownText[i] == message) {
                return knownBytes[i];
            }
        }
        return null;
    }

    private synchronized void keep(String message, byte[] utf8) {
        knownText[knownNext] = message;
        knownBytes[knownNext] = utf8;
        knownNext = (knownNext + 1) % KNOWN;
    }

    /** @return whether a line waits */
    boolean waiting() {
        return queued;
    }

    /** NCCL_LOG_INFO (NCCL's ncclDebugLogLevel). */
    private static final int LEVEL_INFO = io.nccltuner.bindings.NcclTunerAbi.NCCL_LOG_INFO();

    private void setQueued(int v) { // called with this held
        queued = v != 0;
        if (linesQueued != 0) {
            flag[0] = v;
            MemorySegment.copy(flag, 0, Upcalls.ALL, JAVA_INT, linesQueued, 1);
        }
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
