package io.nccltuner.engine;

import java.lang.foreign.MemorySegment;

/**
 * Where the engine's messages go. In the plugin this is NCCL's own logger (through the shim), so
 * lines read {@code NCCL INFO TUNER/Java: ...} under the TUNING subsystem; offline it is stderr or
 * a list in tests.
 */
@FunctionalInterface
public interface TunerLog {
    /** NCCL_LOG_WARN, from NCCL's ncclDebugLogLevel (nccl_common.h). */
    int WARN = 2;

    /** NCCL_LOG_INFO. */
    int INFO = 3;

    /**
     * Logs one line.
     *
     * @param ncclLogger NCCL's ncclDebugLogger_t passed to init, or {@link MemorySegment#NULL}
     * @param level {@link #WARN} or {@link #INFO}
     * @param message one line, without the "TUNER/Java: " prefix (the sink adds it)
     */
    void log(MemorySegment ncclLogger, int level, String message);

    /** A sink that prints WARN lines to stderr in NCCL's shape and drops INFO lines. */
    TunerLog STDERR = (logger, level, message) -> {
        if (level == WARN) {
            System.err.println("NCCL WARN TUNER/Java: " + message);
        }
    };
}
