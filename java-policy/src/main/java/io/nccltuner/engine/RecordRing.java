package io.nccltuner.engine;

import java.io.IOException;
import java.io.Writer;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.LockSupport;

/**
 * The off-hot-path file writer that {@link DecisionLog} and {@link CallRecorder} share: a bounded
 * multi-producer ring of fixed-width records (Vyukov's bounded MPMC queue, drained by one
 * consumer) and the daemon thread that drains it into a file.
 *
 * <p>Producer side ({@link #claim}, {@link #put}, {@link #publish}): a caller claims a slot with
 * one CAS, writes the record's longs and publishes it; it never blocks, never allocates and never
 * does I/O. A full ring, or a file that failed, drops the record and counts it ({@link
 * #dropped()}). Whole text lines can be queued beside the records ({@link #writeLines}).
 *
 * <p>Writer side: the thread opens the file itself when it is a FIFO (opening one blocks until a
 * reader appears, and NCCL's communicator init waited for ever), hands each record to the owner's
 * {@link Format} and flushes whenever the queue runs empty and at least every {@code flushEvery}
 * records. A failed open or write is reported once through the {@link TunerLog} (WARN) and the
 * ring goes quiet: later records are dropped.
 *
 * <p>Slot layout: {@code fields} longs a slot, the first the slot's sequence (the ticket that may
 * fill it, ticket + 1 once published), then the record's {@code fields - 1} longs.
 */
final class RecordRing {
    /** Opens the file (the writer thread calls it for a FIFO, the constructor otherwise). */
    interface Opener {
        Writer open(Path path) throws IOException;
    }

    /** Writes one record (its {@code fields - 1} longs, reused between calls) on the writer thread. */
    interface Format {
        void write(Writer out, long[] record) throws IOException;
    }

    /**
     * What a ring writes and how it says it failed.
     *
     * @param threadName the writer thread's name
     * @param fields longs a slot, the sequence included (so a record has {@code fields - 1})
     * @param flushEvery records written between two flushes, at most
     * @param opener opens the file
     * @param format writes one record
     * @param openFailed the warning when the writer thread cannot open a FIFO: a format with the
     *     path and the exception ({@code %s} each)
     * @param writeFailed the warning when a write fails, the same two {@code %s}
     * @param stalled the one warning when a wait runs out with nothing written (path {@code %s},
     *     timeout in milliseconds {@code %d}), or null for none
     */
    record Config(
            String threadName,
            int fields,
            int flushEvery,
            Opener opener,
            Format format,
            String openFailed,
            String writeFailed,
            String stalled) {}

    private final int capacity;
    private final int mask;
    private final int fields;
    private final AtomicLongArray ring;
    private final AtomicLong tail = new AtomicLong();
    private final AtomicLong dropped = new AtomicLong();
    private final AtomicLong written = new AtomicLong();
    private long head; // writer thread only
    private volatile long flushed;
    private final ConcurrentLinkedQueue<String> lines = new ConcurrentLinkedQueue<>();
    private final AtomicLong linesQueued = new AtomicLong();
    private long linesTaken; // writer thread only
    private volatile long linesFlushed;
    private final Path path;
    private final TunerLog log;
    private final Config config;
    private volatile boolean failed;
    private Writer out; // null until the writer thread opens a FIFO
    private long stalledAt = -1; // records and lines flushed when a wait last ran out with the writer stuck
    private final Thread writer;

    /**
     * Allocates the ring, opens the file (unless it is a FIFO) and starts the writer thread.
     *
     * @param path the file
     * @param capacity ring size in records, rounded up to a power of two
     * @param log where the one warning about a failed open or write goes
     * @param config what the ring writes and its warnings
     * @throws IOException if the opener cannot open a file that is not a FIFO
     */
    RecordRing(Path path, int capacity, TunerLog log, Config config) throws IOException {
        this.capacity = Integer.highestOneBit(Math.max(2, capacity - 1)) << 1;
        this.mask = this.capacity - 1;
        this.fields = config.fields();
        this.ring = new AtomicLongArray(this.capacity * fields);
        for (int i = 0; i < this.capacity; i++) {
            ring.set(i * fields, i); // sequence: slot i is free for ticket i
        }
        this.path = path;
        this.log = log;
        this.config = config;
        this.out = isFifo(path) ? null : config.opener().open(path);
        this.writer = Thread.ofPlatform().daemon().name(config.threadName()).unstarted(this::drain);
        this.writer.start();
    }

    /** @return ring capacity in records */
    int capacity() {
        return capacity;
    }

    /** @return records dropped because the ring was full or the file failed */
    long dropped() {
        return dropped.get();
    }

    /** Counts one record the owner dropped before claiming (one it cannot record). */
    void countDropped() {
        dropped.incrementAndGet();
    }

    /** @return records written to the file so far */
    long written() {
        return written.get();
    }

    /** @return whether the file failed (records are dropped from then on) */
    boolean failed() {
        return failed;
    }

    /**
     * Claims the next slot; never blocks, never allocates.
     *
     * @return the ticket to {@link #put} the record's fields under and {@link #publish}, or -1 when
     *     the record is dropped (ring full or file failed; counted)
     */
    long claim() {
        if (failed) {
            dropped.incrementAndGet();
            return -1;
        }
        // Bounded multi-producer ring (Vyukov): a slot's sequence equals the ticket that may fill it.
        while (true) {
            long t = tail.get();
            long diff = ring.getAcquire((int) (t & mask) * fields) - t;
            if (diff == 0) {
                if (tail.compareAndSet(t, t + 1)) {
                    return t;
                }
            } else if (diff < 0) {
                dropped.incrementAndGet(); // the writer has not drained this slot's previous lap: full
                return -1;
            }
        }
    }

    /**
     * Sets one field of a claimed record.
     *
     * @param ticket from {@link #claim}
     * @param field 0 .. fields - 2
     * @param value the field's value
     */
    void put(long ticket, int field, long value) {
        ring.setPlain((int) (ticket & mask) * fields + 1 + field, value);
    }

    /** Publishes a claimed record to the writer thread (after its {@link #put}s). */
    void publish(long ticket) {
        ring.setRelease((int) (ticket & mask) * fields, ticket + 1); // published: sequence = ticket + 1
    }

    /**
     * Queues whole lines for the writer thread; never blocks. Lines are dropped once the file failed.
     *
     * @param text one or more lines, each ending in a newline
     */
    void writeLines(String text) {
        if (failed || text.isEmpty()) {
            return;
        }
        linesQueued.incrementAndGet();
        lines.add(text);
        LockSupport.unpark(writer);
    }

    private static boolean isFifo(Path path) {
        try {
            return ((Integer) Files.getAttribute(path, "unix:mode") & 0170000) == 0010000; // S_IFIFO
        } catch (IOException | RuntimeException e) {
            return false; // missing (it will be a regular file) or not a Unix file system
        }
    }

    private void drain() {
        if (out == null) {
            try {
                out = config.opener().open(path); // a FIFO: blocks here, on this thread, until a reader appears
            } catch (IOException | RuntimeException e) {
                fail(config.openFailed(), e);
                return;
            }
        }
        long[] record = new long[fields - 1];
        Format format = config.format();
        int flushEvery = config.flushEvery();
        int idle = 0;
        int sinceFlush = 0;
        while (true) {
            String text = lines.poll();
            if (text != null) {
                try {
                    out.write(text);
                    linesTaken++;
                } catch (IOException | RuntimeException e) {
                    fail(config.writeFailed(), e);
                    return;
                }
                idle = 0;
                continue;
            }
            int base = (int) (head & mask) * fields;
            if (ring.getAcquire(base) == head + 1) {
                for (int i = 0; i < record.length; i++) {
                    record[i] = ring.getPlain(base + 1 + i);
                }
                ring.setRelease(base, head + capacity); // free for the ticket one lap later
                head++;
                try {
                    format.write(out, record);
                    written.incrementAndGet();
                    if (++sinceFlush >= flushEvery) {
                        flush();
                        sinceFlush = 0;
                    }
                } catch (IOException | RuntimeException e) {
                    fail(config.writeFailed(), e);
                    return;
                }
                idle = 0;
            } else {
                try {
                    if (idle++ == 0) {
                        flush();
                        sinceFlush = 0;
                    }
                } catch (IOException e) {
                    fail(config.writeFailed(), e);
                    return;
                }
                LockSupport.parkNanos(idle > 100 ? 10_000_000L : 200_000L);
            }
        }
    }

    /** Flushes the file and publishes how far it got (writer thread only). */
    private void flush() throws IOException {
        out.flush();
        linesFlushed = linesTaken;
        flushed = head;
    }

    /**
     * Waits until every record and line queued so far is written and flushed, or the file failed, or
     * the timeout passed. Never on the hot path.
     *
     * <p>A writer that is stuck (a FIFO nobody reads, a hung network file system) would make every
     * wait run the whole timeout: 1,000 communicator destroys, 2,000 s. So once a wait runs out with
     * nothing written, later calls return at once until the writer moves again (and the {@code
     * stalled} warning, where there is one, says so once).
     *
     * @param timeoutMillis longest wait in milliseconds
     * @return true if everything queued was flushed
     */
    synchronized boolean awaitFlushed(long timeoutMillis) {
        long target = tail.get() + linesQueued.get(); // tickets issued (dropped records took none), line batches
        if (done() == stalledAt && done() < target) {
            return false; // still stuck since the last wait ran out
        }
        long start = done();
        long deadline = System.nanoTime() + timeoutMillis * 1_000_000L;
        while (done() < target && !failed && System.nanoTime() < deadline) {
            LockSupport.unpark(writer);
            LockSupport.parkNanos(100_000L);
        }
        if (done() < target && !failed && done() == start) {
            if (stalledAt < 0 && config.stalled() != null) {
                log.log(MemorySegment.NULL, TunerLog.WARN, String.format(config.stalled(), path, timeoutMillis));
            }
            stalledAt = done();
        }
        return done() >= target;
    }

    /** Records and line batches flushed so far (linesFlushed first: it is published before flushed). */
    private long done() {
        long l = linesFlushed;
        return flushed + l;
    }

    private void fail(String message, Exception e) {
        try {
            log.log(MemorySegment.NULL, TunerLog.WARN, String.format(message, path, e));
        } finally {
            failed = true; // after the warning, so awaitFlushed() returns with it logged
        }
    }
}
