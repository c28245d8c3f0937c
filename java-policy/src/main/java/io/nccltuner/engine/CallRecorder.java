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

    private final RecordRing ring;
    private final Path path;
    private final StringBuilder row = new StringBuilder(512); // writer thread only

    /** Communicator number and shape by handle slot (low 32 bits of the engine's handle). */
    private volatile long[] bySlot = new long[64 * 3];

    private int nextComm;

    private CallRecorder(Path path, TunerLog log) throws IOException {
        this.path = path;
        String failed = "cannot write %s (%s); calls are no longer recorded";
        this.ring = new RecordRing(
                path,
                CAPACITY,
                log,
                new RecordRing.Config(
                        "nccl-tuner-java-record",
                        FIELDS,
                        Integer.MAX_VALUE,
                        CallRecorder::open,
                        this::write,
                        failed,
                        failed,
                        null));
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
        return ring.dropped();
    }

    /** @return rows written so far */
    public long written() {
        return ring.written();
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
    public void get(
            long handle,
            int collType,
            long nBytes,
            int numPipeOps,
            MemorySegment mem,
            long costTable,
            int numAlgo,
            int numProto,
            MemorySegment chMem,
            long nChannels) {
        long[] cur = bySlot;
        int slot = (int) handle;
        if (slot <= 0 || slot * 3 + 2 >= cur.length || cur[slot * 3] != handle) {
            return;
        }
        if (numAlgo <= 0 || numProto <= 0 || numAlgo * numProto > MAX_COSTS || numAlgo > MAX_COSTS) {
            ring.countDropped();
            return;
        }
        int chIn = Math.max(0, Math.min(255, chMem.get(JAVA_INT, nChannels)));
        offer(
                KIND_GET,
                (int) cur[slot * 3 + 1],
                cur[slot * 3 + 2],
                collType,
                nBytes,
                numPipeOps,
                numAlgo,
                numProto,
                chIn,
                mem,
                costTable);
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
        ring.awaitFlushed(2000);
        long d = ring.dropped();
        engineLog.log(
                ncclLogger,
                TunerLog.INFO,
                "record " + path + ": " + ring.written() + " rows written"
                        + (d > 0 ? ", " + d + " rows dropped (queue full or write failed)" : ""));
    }

    /**
     * Waits (at most the timeout) for the rows queued so far to reach the file.
     *
     * @param timeoutMillis longest wait in milliseconds
     * @return true if every queued row is written and flushed
     */
    public boolean flush(long timeoutMillis) {
        return ring.awaitFlushed(timeoutMillis);
    }

    /** Writes out queued rows (at process exit); waits up to one second. */
    public void flush() {
        ring.awaitFlushed(1000);
    }

    private boolean offer(
            int kind,
            int comm,
            long shape,
            int coll,
            long nBytes,
            int numPipeOps,
            int numAlgo,
            int numProto,
            int chIn,
            MemorySegment mem,
            long costTable) {
        long t = ring.claim();
        if (t < 0) {
            return false; // ring full or file failed: dropped and counted
        }
        ring.put(t, 0, (long) kind << 32 | (comm & 0xffffffffL));
        ring.put(t, 1, nBytes);
        ring.put(t, 2, shape);
        ring.put(
                t,
                3,
                (long) (coll & 0xff)
                        | (long) (numAlgo & 0xff) << 8
                        | (long) (numProto & 0xff) << 16
                        | (numPipeOps & 0xffffffffL) << 24
                        | (long) chIn << 56);
        int n = numAlgo * numProto;
        for (int k = 0; k < MAX_COSTS + 1; k += 2) {
            long lo = k < n
                    ? Float.floatToRawIntBits(mem.get(JAVA_FLOAT, costTable + (long) k * Float.BYTES)) & 0xffffffffL
                    : 0;
            long hi = k + 1 < n
                    ? Float.floatToRawIntBits(mem.get(JAVA_FLOAT, costTable + (long) (k + 1) * Float.BYTES))
                    : 0;
            ring.put(t, 4 + k / 2, lo | hi << 32);
        }
        ring.publish(t);
        return true;
    }

    private static Writer open(Path path) throws IOException {
        Writer w = new BufferedWriter(Files.newBufferedWriter(
                path,
                StandardCharsets.UTF_8,
                StandardOpenOption.CREATE,
                StandardOpenOption.TRUNCATE_EXISTING,
                StandardOpenOption.WRITE));
        w.write("# event,comm,nRanks,nNodes,coll,nBytes,numPipeOps,numAlgo,numProto,nChannelsIn,costs(algo-major)\n");
        return w;
    }

    /** One CSV row for a record; on the writer thread (the one user of {@link #row}). */
    private void write(Writer out, long[] record) throws IOException {
        row.setLength(0);
        format(row, record);
        out.append(row);
    }

    /** One CSV row for a record: kind|comm, nBytes, shape, packed, then the costs two floats a long. */
    static void format(StringBuilder sb, long[] record) {
        int kind = (int) (record[0] >>> 32);
        int comm = (int) record[0];
        long nBytes = record[1];
        long shape = record[2];
        long packed = record[3];
        long nRanks = shape & 0xffffffffL;
        long nNodes = shape >>> 32;
        switch (kind) {
            case KIND_INIT ->
                sb.append("init,")
                        .append(comm)
                        .append(',')
                        .append(nRanks)
                        .append(',')
                        .append(nNodes);
            case KIND_DESTROY -> sb.append("destroy,").append(comm);
            default -> {
                int numAlgo = (int) ((packed >>> 8) & 0xff);
                int numProto = (int) ((packed >>> 16) & 0xff);
                int numPipeOps = (int) (packed >>> 24);
                int chIn = (int) (packed >>> 56);
                sb.append("get,")
                        .append(comm)
                        .append(',')
                        .append(nRanks)
                        .append(',')
                        .append(nNodes)
                        .append(',')
                        .append(packed & 0xff)
                        .append(',')
                        .append(Long.toUnsignedString(nBytes))
                        .append(',')
                        .append(numPipeOps)
                        .append(',')
                        .append(numAlgo)
                        .append(',')
                        .append(numProto)
                        .append(',')
                        .append(chIn);
                for (int k = 0; k < numAlgo * numProto; k++) {
                    long w = record[4 + k / 2];
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
}
