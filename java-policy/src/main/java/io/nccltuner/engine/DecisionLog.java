package io.nccltuner.engine;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import io.nccltuner.policy.Algorithm;
import io.nccltuner.policy.Collective;
import io.nccltuner.policy.Protocol;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.Writer;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

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
    /** Longs a ring slot: sequence, comm, nBytes, coll|ncclAlgo|ncclProto|algo|proto|channels|applied, numPipeOps. */
    private static final int FIELDS = 5;
    /** Records written between two flushes of the file, at most. */
    private static final int FLUSH_EVERY = 1024;

    private final RecordRing ring;
    private final boolean logCalls;
    private final JsonFactory json = new JsonFactory();

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
        return Path.of(pattern.replace("%h", host)
                .replace("%p", Long.toString(ProcessHandle.current().pid())));
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
        this.ring = new RecordRing(
                path,
                capacity,
                log,
                new RecordRing.Config(
                        "nccl-tuner-java-log",
                        FIELDS,
                        FLUSH_EVERY,
                        DecisionLog::open,
                        this::write,
                        "cannot open decision log %s (%s); decisions are not logged",
                        "cannot write decision log %s (%s); decisions are no longer logged",
                        "decision log %s: nothing written for %d ms (is the file blocked?); communicator destroy no longer waits "
                                + "for it, and records are dropped (and counted) once the queue is full"));
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
        ring.writeLines(text);
    }

    /** @return records dropped because the ring was full or the file failed */
    public long dropped() {
        return ring.dropped();
    }

    /** @return records written to the file so far */
    public long written() {
        return ring.written();
    }

    /** @return ring capacity in records */
    public int capacity() {
        return ring.capacity();
    }

    /**
     * Queues one record; never blocks.
     *
     * @return false if the record was dropped
     */
    public boolean offer(
            long comm,
            int coll,
            long nBytes,
            int numPipeOps,
            int ncclAlgo,
            int ncclProto,
            int algo,
            int proto,
            int channels,
            boolean applied) {
        long t = ring.claim();
        if (t < 0) {
            return false; // ring full or file failed: dropped and counted
        }
        ring.put(t, 0, comm);
        ring.put(t, 1, nBytes);
        ring.put(
                t,
                2,
                (long) (coll & 0xff)
                        | (long) (ncclAlgo & 0xff) << 8
                        | (long) (ncclProto & 0xff) << 16
                        | (long) (algo & 0xff) << 24
                        | (long) (proto & 0xff) << 32
                        | (long) (channels & 0xff) << 40
                        | (applied ? 1L : 0L) << 48);
        ring.put(t, 3, numPipeOps);
        ring.publish(t);
        return true;
    }

    private static Writer open(Path path) throws IOException {
        return new BufferedWriter(Files.newBufferedWriter(
                path,
                StandardCharsets.UTF_8,
                StandardOpenOption.CREATE,
                StandardOpenOption.APPEND,
                StandardOpenOption.WRITE));
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
        return ring.awaitFlushed(timeoutMillis);
    }

    /** One JSON line for a record (comm, nBytes, packed fields, numPipeOps); on the writer thread. */
    private void write(Writer out, long[] record) throws IOException {
        long comm = record[0];
        long nBytes = record[1];
        long f = record[2];
        int numPipeOps = (int) record[3];
        JsonGenerator g = json.createGenerator(out);
        g.writeStartObject();
        g.writeFieldName(LogField.COMM);
        g.writeNumber(Long.toUnsignedString(comm)); // commId is a uint64_t
        Collective c = Collective.ofId((int) (f & 0xff));
        g.writeStringField(LogField.COLLECTIVE, c == null ? Long.toString(f & 0xff) : c.name());
        g.writeFieldName(LogField.N_BYTES);
        g.writeNumber(Long.toUnsignedString(nBytes));
        g.writeNumberField(LogField.NUM_PIPE_OPS, numPipeOps);
        int na = (int) ((f >>> 8) & 0xff);
        int np = (int) ((f >>> 16) & 0xff);
        g.writeStringField(
                LogField.NCCL_PICK,
                na >= Algorithm.values().length || np >= Protocol.values().length
                        ? null
                        : Algorithm.ofId(na) + "/" + Protocol.ofId(np));
        g.writeStringField(
                LogField.POLICY_PICK,
                Algorithm.ofId((int) ((f >>> 24) & 0xff)) + "/" + Protocol.ofId((int) ((f >>> 32) & 0xff)));
        g.writeNumberField(LogField.CHANNELS, (int) ((f >>> 40) & 0xff));
        g.writeBooleanField(LogField.APPLIED, ((f >>> 48) & 1) != 0);
        g.writeEndObject();
        g.flush();
        out.write('\n');
    }
}
