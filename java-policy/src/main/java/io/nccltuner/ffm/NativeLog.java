package io.nccltuner.ffm;

import io.nccltuner.bindings.nccltj_log_fn;
import io.nccltuner.engine.TunerLog;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

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

  @Override
  public void log(MemorySegment ncclLogger, int level, String message) {
    MemorySegment logger = ncclLogger.equals(MemorySegment.NULL) ? latestLogger : ncclLogger;
    try (Arena arena = Arena.ofConfined()) {
      nccltj_log_fn.invoke(logFn, logger, level, arena.allocateFrom(printable(message)));
    }
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
