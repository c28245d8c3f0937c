package io.nccltuner.engine;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import io.nccltuner.policy.Algorithm;
import io.nccltuner.policy.Collective;
import io.nccltuner.policy.Protocol;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.Writer;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.LockSupport;

/**
 * The decision log ({@code NCCL_TUNER_JAVA_LOG}): one JSON object per line per decision, written
 * off the hot path.
 *
 * <p>{@link #offer} claims a slot in a preallocated ring of {@link #capacity} records with one
 * atomic increment, writes the record as longs and publishes it; it never blocks, never allocates
 * and never does I/O. When the ring is full the record is dropped and counted ({@link
 * #dropped()}). A daemon thread drains the ring into the file. A path that cannot be opened or a
 * write that fails (full disk) is reported once through the {@link TunerLog} and the log goes
 * quiet; the plugin keeps working. The file is flushed whenever the queue runs empty and at least
 * every {@value #FLUSH_EVERY} records.
 *
 * <p>Record fields: {@code comm} (NCCL's commId under tuner v5+, unsigned: the same on every
 * rank of a communicator; before v5 the plugin's process-local handle), {@code collective} (NCCL name), {@code nBytes},
 * {@code numPipeOps}, {@code ncclPick} (NCCL's strict-minimum pick, {@code "RING/LL"}),
 * {@code policyPick} ({@code "TREE/SIMPLE"}), {@code channels} (0 = NCCL decides), {@code
 * applied} (false in shadow mode). Per-call records are written only when the log was opened with
 * {@code logCalls} ({@code NCCL_TUNER_JAVA_LOG_CALLS=1}); otherwise the engine counts decisions in
 * a {@link ShadowAggregate} per communicator and hands its lines to {@link #writeLines} at destroy
 * and at exit (queued like records, written by the same thread, never blocking the caller).
 */
public final class DecisionLog {
  private static final int FIELDS = 5;
  /** Records written between two flushes of the file, at most. */
  private static final int FLUSH_EVERY = 1024;
  private final int capacity;
  private final int mask;
  private final AtomicLongArray ring;
  private final AtomicLong tail = new AtomicLong();
  private final AtomicLong dropped = new AtomicLong();
  private final AtomicLong written = new AtomicLong();
  private long head;
  private volatile long flushed;
  private final Path path;
  private final TunerLog log;
  private volatile boolean failed;
  private final Thread writer;
  private Writer out; // null until the writer thread opens a FIFO
  private long stalledAt = -1; // records flushed when a wait last ran out with the writer stuck
  private final boolean logCalls;
  private final java.util.concurrent.ConcurrentLinkedQueue<String> lines = new java.util.concurrent.ConcurrentLinkedQueue<>();
  private final AtomicLong linesQueued = new AtomicLong();
  private long linesTaken; // writer thread only
  private volatile long linesFlushed;

  /**
   * Expands {@code %h} (host name) and {@code %p} (process id) in a path, as NCCL does for
   * NCCL_DEBUG_FILE.
   */
  public static Path expand(String pattern) {
    String host;
    try {
      host = InetAddress.getLocalHost().getHostName();
    } catch (IOException e) {
      host = "localhost";
    }
    int dot = host.indexOf('.');
    host = dot > 0 ? host.substring(0, dot) : host;
    return Path.of(pattern.replace("%h", host).replace("%p", Long.toString(ProcessHandle.current().pid())));
  }

  /**
   * Opens the log and starts its writer thread.
   *
   * @param path the file to append to (created if missing)
   * @param capacity ring size in records, rounded up to a power of two
   * @param log where the one warning about a failed write goes
   * @throws IOException if the file cannot be opened for appending (the caller warns once and runs
   *     without a decision log). A FIFO is opened by the writer thread instead: opening one blocks
   *     until a reader appears, and NCCL's communicator init waited for ever.
   */
  public DecisionLog(Path path, int capacity, TunerLog log) throws IOException {
    this(path, capacity, log, true);
  }

  /**
   * Opens the log and starts its writer thread.
   *
   * @param path the file to append to (created if missing)
   * @param capacity ring size in records, rounded up to a power of two
   * @param log where the one warning about a failed write goes
   * @param logCalls whether the engine writes one record per decision ({@link #logsCalls()})
   * @throws IOException as {@link #DecisionLog(Path, int, TunerLog)}
   */
  public DecisionLog(Path path, int capacity, TunerLog log, boolean logCalls) throws IOException {
    this.logCalls = logCalls;
    this.capacity = Integer.highestOneBit(Math.max(2, capacity - 1)) << 1;
    this.mask = this.capacity - 1;
    this.ring = new AtomicLongArray(this.capacity * FIELDS);
    for (int i = 0; i < this.capacity; i++) {
      ring.set(i * FIELDS, i); // sequence: slot i is free for ticket i
    }
    this.path = path;
    this.log = log;
    this.out = isFifo(path) ? null : open(path);
    this.writer = Thread.ofPlatform().daemon().name("nccl-tuner-java-log").unstarted(this::drain);
    this.writer.start();
  }

  /** @return whether per-call records are wanted (NCCL_TUNER_JAVA_LOG_CALLS=1) */
  public boolean logsCalls() {
    return logCalls;
  }

  /**
   * Queues whole lines (aggregates) for the writer thread; never blocks. Lines are dropped once the
   * log has failed.
   *
   * @param text one or more lines, each ending in a newline
   */
  public void writeLines(String text) {
    if (failed || text.isEmpty()) {
      return;
    }
    linesQueued.incrementAndGet();
    lines.add(text);
    LockSupport.unpark(writer);
  }

  /** @return records dropped because the ring was full or the file failed */
  public long dropped() {
    return dropped.get();
  }

  /** @return records written to the file so far */
  public long written() {
    return written.get();
  }

  /** @return ring capacity in records */
  public int capacity() {
    return capacity;
  }

  /**
   * Queues one record; never blocks.
   *
   * @return false if the record was dropped
   */
  public boolean offer(long comm, int coll, long nBytes, int numPipeOps, int ncclAlgo, int ncclProto,
      int algo, int proto, int channels, boolean applied) {
    if (failed) {
      dropped.incrementAndGet();
      return false;
    }
    // Bounded multi-producer ring (Vyukov): a slot's sequence equals the ticket that may fill it.
    long t;
    while (true) {
      t = tail.get();
      long diff = ring.getAcquire((int) (t & mask) * FIELDS) - t;
      if (diff == 0) {
        if (tail.compareAndSet(t, t + 1)) {
          break;
        }
      } else if (diff < 0) {
        dropped.incrementAndGet(); // the writer has not drained this slot's previous lap: full
        return false;
      }
    }
    int base = (int) (t & mask) * FIELDS;
    ring.setPlain(base + 1, comm);
    ring.setPlain(base + 2, nBytes);
    ring.setPlain(base + 3, (long) (coll & 0xff) | (long) (ncclAlgo & 0xff) << 8 | (long) (ncclProto & 0xff) << 16
        | (long) (algo & 0xff) << 24 | (long) (proto & 0xff) << 32 | (long) (channels & 0xff) << 40
        | (applied ? 1L : 0L) << 48);
    ring.setPlain(base + 4, numPipeOps);
    ring.setRelease(base, t + 1); // published: sequence = ticket + 1
    return true;
  }

  private static Writer open(Path path) throws IOException {
    return new BufferedWriter(Files.newBufferedWriter(path, StandardCharsets.UTF_8,
        StandardOpenOption.CREATE, StandardOpenOption.APPEND, StandardOpenOption.WRITE));
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
        out = open(path); // a FIFO: blocks here, on this thread, until a reader appears
      } catch (IOException | RuntimeException e) {
        fail("cannot open decision log " + path + " (" + e + "); decisions are not logged");
        return;
      }
    }
    JsonFactory json = new JsonFactory();
    int idle = 0;
    int sinceFlush = 0;
    while (true) {
      String text = lines.poll();
      if (text != null) {
        try {
          out.write(text);
          linesTaken++;
        } catch (IOException | RuntimeException e) {
          fail("cannot write decision log " + path + " (" + e + "); decisions are no longer logged");
          return;
        }
        idle = 0;
        continue;
      }
      int base = (int) (head & mask) * FIELDS;
      if (ring.getAcquire(base) == head + 1) {
        long comm = ring.getPlain(base + 1);
        long nBytes = ring.getPlain(base + 2);
        long f = ring.getPlain(base + 3);
        int numPipeOps = (int) ring.getPlain(base + 4);
        ring.setRelease(base, head + capacity); // free for the ticket one lap later
        head++;
        try {
          write(json, out, comm, nBytes, f, numPipeOps);
          written.incrementAndGet();
          if (++sinceFlush >= FLUSH_EVERY) {
            out.flush();
            linesFlushed = linesTaken;
            flushed = head;
            sinceFlush = 0;
          }
        } catch (IOException | RuntimeException e) {
          fail("cannot write decision log " + path + " (" + e + "); decisions are no longer logged");
          return;
        }
        idle = 0;
      } else {
        try {
          if (idle++ == 0) {
            out.flush();
            linesFlushed = linesTaken;
            flushed = head;
            sinceFlush = 0;
          }
        } catch (IOException e) {
          fail("cannot write decision log " + path + " (" + e + "); decisions are no longer logged");
          return;
        }
        LockSupport.parkNanos(idle > 100 ? 10_000_000L : 200_000L);
      }
    }
  }

  /**
   * Waits until every record queued so far is written and flushed, or the log failed, or the
   * timeout passed. Called at communicator destroy (never on the hot path), so a process that
   * exits right after destroying its communicators keeps its records.
   *
   * <p>A writer that is stuck (a FIFO nobody reads, a hung network file system) would make every
   * destroy wait the whole timeout: 1,000 communicators, 2,000 s. So once a wait runs out with
   * nothing written, one WARN says so and later calls return at once until the writer moves
   * again. Called by one thread at a time (Engine.destroy is synchronized).
   *
   * @param timeoutMillis longest wait in milliseconds
   * @return true if everything queued was flushed
   */
  public boolean awaitFlushed(long timeoutMillis) {
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
      if (stalledAt < 0) {
        log.log(MemorySegment.NULL, TunerLog.WARN, "decision log " + path + ": nothing written for "
            + timeoutMillis + " ms (is the file blocked?); communicator destroy no longer waits for it, "
            + "and records are dropped (and counted) once the queue is full");
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

  private static void write(JsonFactory json, Writer out, long comm, long nBytes, long f, int numPipeOps)
      throws IOException {
    JsonGenerator g = json.createGenerator(out);
    g.writeStartObject();
    g.writeFieldName("comm");
    g.writeNumber(Long.toUnsignedString(comm)); // commId is a uint64_t
    Collective c = Collective.ofId((int) (f & 0xff));
    g.writeStringField("collective", c == null ? Long.toString(f & 0xff) : c.name());
    g.writeFieldName("nBytes");
    g.writeNumber(Long.toUnsignedString(nBytes));
    g.writeNumberField("numPipeOps", numPipeOps);
    int na = (int) ((f >>> 8) & 0xff);
    int np = (int) ((f >>> 16) & 0xff);
    g.writeStringField("ncclPick", na >= Algorithm.values().length || np >= Protocol.values().length ? null
        : Algorithm.ofId(na) + "/" + Protocol.ofId(np));
    g.writeStringField("policyPick", Algorithm.ofId((int) ((f >>> 24) & 0xff)) + "/" + Protocol.ofId((int) ((f >>> 32) & 0xff)));
    g.writeNumberField("channels", (int) ((f >>> 40) & 0xff));
    g.writeBooleanField("applied", ((f >>> 48) & 1) != 0);
    g.writeEndObject();
    g.flush();
    out.write('\n');
  }

  private void fail(String message) {
    try {
      log.log(MemorySegment.NULL, TunerLog.WARN, message);
    } finally {
      failed = true; // after the warning, so awaitFlushed() returns with it logged
    }
  }
}
