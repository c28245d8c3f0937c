package io.nccltuner.ffm;

import io.nccltuner.engine.TunerLog;
import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;

/**
 * System.out and System.err of a JVM the shim created: each line goes to NCCL's logger at INFO
 * ("TUNER/Java: System.err: ..."), so nothing in the plugin writes to the host's stdout or stderr
 * (docs/dev/reliability.md, case 10). Lines are cut at 1,000 bytes.
 */
final class LineToLog extends PrintStream {
    LineToLog(TunerLog log, String name) {
        super(new Lines(log, name), true, StandardCharsets.UTF_8);
    }

    private static final class Lines extends OutputStream {
        private final TunerLog log;
        private final String name;
        private final ByteArrayOutputStream line = new ByteArrayOutputStream();

        Lines(TunerLog log, String name) {
            this.log = log;
            this.name = name;
        }

        @Override
        public synchronized void write(int b) {
            if (b == '\n') {
                flushLine();
            } else if (line.size() < 1000) {
                line.write(b);
            }
        }

        private void flushLine() {
            String text = line.toString(StandardCharsets.UTF_8);
            line.reset();
            if (!text.isEmpty()) {
                try {
                    log.log(MemorySegment.NULL, TunerLog.INFO, name + ": " + text);
                } catch (Throwable ignored) {
                    // Best effort: a line that cannot be logged is dropped, never written to fd 1 or 2.
                }
            }
        }
    }
}
