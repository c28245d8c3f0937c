package io.nccltuner.engine;

import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.Writer;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.LockSupport;

/**
 * Record mode ({@code NCCL_TUNER_JAVA_RECORD=path}, {@code %h} host, {@code %p} pid): every tuner
 * call written in the project's trace CSV format ({@link io.nccltuner.trace.TraceFile}), which
 * {@code nccl-tuner replay}, {@code explain --trace}, {@code compile --workload} and the host
 * harness read:
 *
 * <pre>
 * init,&lt;comm&gt;,&lt;nRanks&gt;,&lt;nNodes&gt;
 * get,&lt;comm&gt;,&lt;nRanks&gt;,&lt;nNodes&gt;,&lt;collType&gt;,&lt;nBytes&gt;,&lt;numPipeOps&gt;,&lt;numAlgo&gt;,&lt;numProto&gt;,&lt;nChannelsIn&gt;,&lt;costs&gt;
 * destroy,&lt;comm&gt;
 * </pre>
 *
 * Communicators are numbered 0, 1, ... in the order this process initialized them; costs are the
 * cost table as NCCL passed it (before any policy edits it), algorithm-major, in microseconds,
 * each float written in the shortest decimal form that reads back to the same float, -1 where
 * NCCL marks the entry unavailable. It records in every mode, off included, and with no policy.
 *
 * <p>Off the hot path, like {@link DecisionLog}: a call copies its fields into one slot of a
 * preallocated ring with one CAS (no allocation, lock or I/O); a daemon thread formats and writes
 * them. A full ring drops the row and counts it; drops are reported at each communicator's
 * destroy. An unwritable path warns once and recording stops; the plugin keeps working. Tables
 * larger than 7 x 3 (NCCL passes 6 x 3 or 7 x 3) are not recorded and are counted as dropped.
 * {@code nChannelsIn} is written as NCCL passed it, clamped to 0..255 (NCCL 2.19 .. 2.28 always
 * passes 0).
 */
public final class CallRecorder {
  /** Most cost entries a row holds: NCCL 2.23+ passes 7 x 3. */
  public static final int MAX_COSTS = 21;

  /** Ring size in rows (16 longs each: 4 MiB). */
  public static final int CAPACITY = 1 << 15;

  /** Longs per ring slot: sequence, kind|comm, nBytes, nRanks|nNodes, collType|numAlgo|numProto|numPipeOps|nChannelsIn, 11 x 2 floats. */
  private static final int FIELDS = 16;
  private static final int KIND_INIT = 1;
  private static final int KIND_GET = 2;
  private static final int KIND_DESTROY = 3;

  private static volatile CallRecorder current;

  private final int mask;
  private final AtomicLongArray ring;
  private final AtomicLong tail = new AtomicLong();
  private final AtomicLong dropped = new AtomicLong();
  private final AtomicLong written = new AtomicLong();
  private volatile long flushed;
  private long head;
  private final Path path;
  private final TunerLog log;
  private Writer out; // null until the writer thread opens a FIFO
  private volatile boolean failed;
  private long stalledAt = -1; // rows flushed when a wait last ran out with the writer stuck
  private final Thread writer;

  /** Communicator number and shape by handle slot (low 32 bits of the engine's handle). */
  private volatile long[] bySlot = new long[64 * 3];
  private int nextComm;

  private CallRecorder(Path path, TunerLog log) throws IOException {
    this.mask = CAPACITY - 1;
    this.ring = new AtomicLongArray(CAPACITY * FIELDS);
    for (int i = 0; i < CAPACITY; i++) {
      ring.set(i * FIELDS, i);
    }
    this.path = path;
    this.log = log;
    // A FIFO is opened by the writer thread: opening one blocks until a reader appears.
    this.out = isFifo(path) ? null : open(path);
    this.writer = Thread.ofPlatform().daemon().name("nccl-tuner-java-record").unstarted(this::drain);
    writer.start();
  }

  /**
   * Reads {@code NCCL_TUNER_JAVA_RECORD} and, when set, opens the recorder the upcalls use. Never
   * throws.
   *
   * @param env the environment
   * @param log where a failure to open is reported (by the caller, once)
   * @return a one-line notice for init (recording to ..., or why not), or null when not set
   */
  public static String configure(Map<String, String> env, TunerLog log) {
    String p = env.get("NCCL_TUNER_JAVA_RECORD");
    if (p == null || p.isBlank()) {
      current = null;
      return null;
    }
    try {
      Path path = DecisionLog.expand(p.strip());
      current = new CallRecorder(path, log);
      return "recording every tuner call to " + path + " (NCCL_TUNER_JAVA_RECORD)";
    } catch (Throwable t) {
      current = null;
      return "cannot record to " + p + " (" + t + "); calls are not recorded";
    }
  }

  /** @return the recorder the upcalls use, or null when record mode is off */
  public static CallRecorder current() {
    return current;
  }

  /** @return rows dropped (ring full, or the file failed) */
  public long dropped() {
    return dropped.get();
  }

  /** @return rows written so far */
  public long written() {
    return written.get();
  }

  /** @return the file written */
  public Path path() {
    return path;
  }

  /**
   * Records a communicator's init; call after the engine's init returned its handle.
   *
   * @param handle the engine's handle
   * @param nRanks ranks
   * @param nNodes nodes
   */
  public synchronized void init(long handle, long nRanks, long nNodes) {
    int slot = (int) handle;
    if (slot <= 0) {
      return;
    }
    long[] cur = bySlot;
    if (slot * 3 + 2 >= cur.length) {
      cur = java.util.Arrays.copyOf(cur, Math.max(cur.length * 2, slot * 3 + 3));
    } else {
      cur = cur.clone();
    }
    int comm = nextComm++;
    cur[slot * 3] = handle;
    cur[slot * 3 + 1] = comm;
    cur[slot * 3 + 2] = (nRanks & 0xffffffffL) | nNodes << 32;
    bySlot = cur;
    offer(KIND_INIT, comm, cur[slot * 3 + 2], 0, 0, 0, 0, 0, 0, null, 0);
  }

  /**
   * Records one getCollInfo call; call before the engine edits the table. O(1), no allocation.
   * Same arguments as {@link Engine#getCollInfo(long, int, long, int, MemorySegment, long, int,
   * int, MemorySegment, long)}.
   */
  public void get(long handle, int collType, long nBytes, int numPipeOps, MemorySegment mem, long costTable,
      int numAlgo, int numProto, MemorySegment chMem, long nChannels) {
    long[] cur = bySlot;
    int slot = (int) handle;
    if (slot <= 0 || slot * 3 + 2 >= cur.length || cur[slot * 3] != handle) {
      return;
    }
    if (numAlgo <= 0 || numProto <= 0 || numAlgo * numProto > MAX_COSTS || numAlgo > MAX_COSTS) {
      dropped.incrementAndGet();
      return;
    }
    int chIn = Math.max(0, Math.min(255, chMem.get(JAVA_INT, nChannels)));
    offer(KIND_GET, (int) cur[slot * 3 + 1], cur[slot * 3 + 2], collType, nBytes, numPipeOps, numAlgo, numProto, chIn,
        mem, costTable);
  }

  /**
   * Records a communicator's destroy, waits (bounded) for the rows so far to reach the file, and
   * reports rows written and dropped through NCCL's logger.
   *
   * @param handle the engine's handle
   * @param ncclLogger the logger to report with
   * @param engineLog the engine's log sink
   */
  public synchronized void destroy(long handle, MemorySegment ncclLogger, TunerLog engineLog) {
    long[] cur = bySlot;
    int slot = (int) handle;
    if (slot <= 0 || slot * 3 + 2 >= cur.length || cur[slot * 3] != handle) {
      return;
    }
    offer(KIND_DESTROY, (int) cur[slot * 3 + 1], 0, 0, 0, 0, 0, 0, 0, null, 0);
    cur = cur.clone();
    cur[slot * 3] = 0;
    bySlot = cur;
    awaitFlushed(2000);
    long d = dropped.get();
    engineLog.log(ncclLogger, TunerLog.INFO, "record " + path + ": " + written.get() + " rows written"
        + (d > 0 ? ", " + d + " rows dropped (queue full or write failed)" : ""));
  }

  /**
   * Waits (at most the timeout) for the rows queued so far to reach the file.
   *
   * @param timeoutMillis longest wait in milliseconds
   * @return true if every queued row is written and flushed
   */
  public boolean flush(long timeoutMillis) {
    return awaitFlushed(timeoutMillis);
  }

  /** Writes out queued rows (at process exit); waits up to one second. */
  public void flush() {
    awaitFlushed(1000);
  }

  private boolean offer(int kind, int comm, long shape, int coll, long nBytes, int numPipeOps, int numAlgo,
      int numProto, int chIn, MemorySegment mem, long costTable) {
    if (failed) {
      dropped.incrementAndGet();
      return false;
    }
    long t;
    while (true) {
      t = tail.get();
      long diff = ring.getAcquire((int) (t & mask) * FIELDS) - t;
      if (diff == 0) {
        if (tail.compareAndSet(t, t + 1)) {
          break;
        }
      } else if (diff < 0) {
        dropped.incrementAndGet();
        return false;
      }
    }
    int base = (int) (t & mask) * FIELDS;
    ring.setPlain(base + 1, (long) kind << 32 | (comm & 0xffffffffL));
    ring.setPlain(base + 2, nBytes);
    ring.setPlain(base + 3, shape);
    ring.setPlain(base + 4, (long) (coll & 0xff) | (long) (numAlgo & 0xff) << 8 | (long) (numProto & 0xff) << 16
        | (numPipeOps & 0xffffffffL) << 24 | (long) chIn << 56);
    int n = numAlgo * numProto;
    for (int k = 0; k < MAX_COSTS + 1; k += 2) {
      long lo = k < n ? Float.floatToRawIntBits(mem.get(JAVA_FLOAT, costTable + (long) k * Float.BYTES)) & 0xffffffffL : 0;
      long hi = k + 1 < n ? Float.floatToRawIntBits(mem.get(JAVA_FLOAT, costTable + (long) (k + 1) * Float.BYTES)) : 0;
      ring.setPlain(base + 5 + k / 2, lo | hi << 32);
    }
    ring.setRelease(base, t + 1);
    return true;
  }

  private static Writer open(Path path) throws IOException {
    Writer w = new BufferedWriter(Files.newBufferedWriter(path, StandardCharsets.UTF_8, StandardOpenOption.CREATE,
        StandardOpenOption.TRUNCATE_EXISTING, StandardOpenOption.WRITE));
    w.write("# event,comm,nRanks,nNodes,coll,nBytes,numPipeOps,numAlgo,numProto,nChannelsIn,costs(algo-major)\n");
    return w;
  }

  private static boolean isFifo(Path path) {
    try {
      return ((Integer) Files.getAttribute(path, "unix:mode") & 0170000) == 0010000; // S_IFIFO
    } catch (IOException | RuntimeException e) {
      return false;
    }
  }

  private void drain() {
    if (out == null) {
      try {
        out = open(path);
      } catch (IOException | RuntimeException e) {
        fail(e);
        return;
      }
    }
    StringBuilder sb = new StringBuilder(512);
    int idle = 0;
    while (true) {
      int base = (int) (head & mask) * FIELDS;
      if (ring.getAcquire(base) == head + 1) {
        long kc = ring.getPlain(base + 1);
        long nBytes = ring.getPlain(base + 2);
        long shape = ring.getPlain(base + 3);
        long packed = ring.getPlain(base + 4);
        long[] costs = new long[MAX_COSTS / 2 + 1];
        for (int k = 0; k < costs.length; k++) {
          costs[k] = ring.getPlain(base + 5 + k);
        }
        ring.setRelease(base, head + CAPACITY);
        head++;
        sb.setLength(0);
        format(sb, (int) (kc >>> 32), (int) kc, shape, nBytes, packed, costs);
        try {
          out.append(sb);
          written.incrementAndGet();
        } catch (IOException | RuntimeException e) {
          fail(e);
          return;
        }
        idle = 0;
      } else {
        try {
          if (idle++ == 0) {
            out.flush();
            flushed = head;
          }
        } catch (IOException e) {
          fail(e);
          return;
        }
        LockSupport.parkNanos(idle > 100 ? 10_000_000L : 200_000L);
      }
    }
  }

  /** One CSV row for a ring slot. */
  static void format(StringBuilder sb, int kind, int comm, long shape, long nBytes, long packed, long[] costs) {
    long nRanks = shape & 0xffffffffL;
    long nNodes = shape >>> 32;
    switch (kind) {
      case KIND_INIT -> sb.append("init,").append(comm).append(',').append(nRanks).append(',').append(nNodes);
      case KIND_DESTROY -> sb.append("destroy,").append(comm);
      default -> {
        int numAlgo = (int) ((packed >>> 8) & 0xff);
        int numProto = (int) ((packed >>> 16) & 0xff);
        int numPipeOps = (int) (packed >>> 24);
        int chIn = (int) (packed >>> 56);
        sb.append("get,").append(comm).append(',').append(nRanks).append(',').append(nNodes).append(',')
            .append(packed & 0xff).append(',').append(Long.toUnsignedString(nBytes)).append(',').append(numPipeOps)
            .append(',').append(numAlgo).append(',').append(numProto).append(',').append(chIn);
        for (int k = 0; k < numAlgo * numProto; k++) {
          long w = costs[k / 2];
          float f = Float.intBitsToFloat((int) (k % 2 == 0 ? w : w >>> 32));
          sb.append(',').append(cost(f));
        }
      }
    }
    sb.append('\n');
  }

  /** The shortest decimal that reads back to the same float; whole numbers without ".0". */
  static String cost(float f) {
    if (f == (long) f && Math.abs(f) < 1e15f) {
      return Long.toString((long) f);
    }
    return Float.toString(f);
  }

  /**
   * Waits, bounded, for the rows queued so far to reach the file. A writer stuck on a FIFO nobody
   * reads (or a hung file system) would make every destroy wait the whole timeout, so after one
   * wait ran out with nothing written, later waits return at once until the writer moves again.
   */
  private synchronized boolean awaitFlushed(long timeoutMillis) {
    long target = tail.get();
    if (flushed == stalledAt && flushed < target) {
      return false;
    }
    long start = flushed;
    long deadline = System.nanoTime() + timeoutMillis * 1_000_000L;
    while (flushed < target && !failed && System.nanoTime() < deadline) {
      LockSupport.unpark(writer);
      LockSupport.parkNanos(100_000L);
    }
    if (flushed < target && !failed && flushed == start) {
      stalledAt = flushed;
    }
    return flushed >= target;
  }

  private void fail(Exception e) {
    try {
      log.log(MemorySegment.NULL, TunerLog.WARN, "cannot write " + path + " (" + e + "); calls are no longer recorded");
    } finally {
      failed = true;
    }
  }
}
