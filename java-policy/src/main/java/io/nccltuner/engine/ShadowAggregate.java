package io.nccltuner.engine;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import io.nccltuner.policy.Algorithm;
import io.nccltuner.policy.ByteSize;
import io.nccltuner.policy.Collective;
import io.nccltuner.policy.Protocol;
import io.nccltuner.policy.SizeGrid;
import java.io.IOException;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.List;

/**
 * Per-communicator counts of the engine's decisions, kept in memory: how many rule hits had each
 * (collective, size-grid bucket, NCCL's pick, the policy's pick) combination. Written as JSON lines
 * to the decision log at communicator destroy and at process exit, so a shadow run loses nothing
 * however fast the calls come, and per-call records become optional
 * ({@code NCCL_TUNER_JAVA_LOG_CALLS=1}).
 *
 * <p>Storage is preallocated at communicator init: an open-addressing table of {@value #SLOTS}
 * (key, count) pairs, 16 KiB. {@link #count} hashes the key and probes at most {@value #PROBES}
 * slots; it never allocates, locks or does I/O. A key that finds no free slot in its probe window
 * is counted in {@link #unaggregated()} (calls still in the communicator's totals, just not broken
 * down; the comm line reports them). Counts are plain longs: NCCL enqueues one communicator's
 * collectives from one thread at a time (as for the engine's other per-communicator counters).
 *
 * <p>Key: collective (8 bits) | bucket (16) | numProto (8) | NCCL's pick as algorithm * numProto +
 * protocol (8; 0xff when NCCL had no selectable entry) | the policy's candidate as the decision
 * table packs it (algorithm, protocol, channels: 24 bits).
 */
public final class ShadowAggregate {
    /** Slots in the table (a power of two). */
    static final int SLOTS = 1024;

    /** Longest probe sequence before a key counts as unaggregated. */
    static final int PROBES = 16;

    /** (key, count) pairs side by side, so a probe touches one cache line; count 0 = free slot. */
    private final long[] slots = new long[2 * SLOTS];

    private long unaggregated;
    private final java.util.concurrent.atomic.AtomicBoolean written = new java.util.concurrent.atomic.AtomicBoolean();
    private static volatile String host;

    /**
     * Counts one decision.
     *
     * @param coll ncclFunc_t value (0..255)
     * @param bucket the size-grid bucket of nBytes ({@link SizeGrid#bucket})
     * @param ncclPick NCCL's pick as {@code algorithm * numProto + protocol}, or -1 for none
     * @param numProto columns of NCCL's cost table (to split ncclPick)
     * @param cand the policy's candidate as packed by {@link DecisionTable}: algorithm | protocol
     *     &lt;&lt; 8 | channels &lt;&lt; 16
     */
    public void count(int coll, int bucket, int ncclPick, int numProto, int cand) {
        // NCCL's pick kept as (numProto, index): split into algorithm and protocol when written, not per call
        long key = (long) (coll & 0xff) << 56
                | (long) (bucket & 0xffff) << 40
                | (long) (numProto & 0xff) << 32
                | (long) (ncclPick & 0xff) << 24
                | (cand & 0xffffffL);
        int h = (int) ((key * 0x9E3779B97F4A7C15L) >>> 54); // 10 bits: SLOTS = 1024
        long[] t = slots;
        for (int p = 0; p < PROBES; p++) {
            int i = ((h + p) & (SLOTS - 1)) << 1;
            long c = t[i + 1];
            if (c != 0 && t[i] == key) {
                t[i + 1] = c + 1;
                return;
            }
            if (c == 0) {
                t[i] = key;
                t[i + 1] = 1;
                return;
            }
        }
        unaggregated++;
    }

    /** @return decisions that found no slot (not broken down by size and pick) */
    public long unaggregated() {
        return unaggregated;
    }

    /**
     * One aggregate.
     *
     * @param collective the collective (null for an ncclFunc_t the policy does not know)
     * @param collId the ncclFunc_t value
     * @param fromBytes the bucket's first size
     * @param toBytes the bucket's end (exclusive), -1 for none
     * @param ncclPick NCCL's pick ("RING/LL"), or null when NCCL had no selectable entry
     * @param policyPick the policy's pick ("TREE/SIMPLE")
     * @param channels the channel count the policy sets (0 = NCCL decides)
     * @param count rule hits with this combination
     */
    public record Entry(
            Collective collective,
            int collId,
            long fromBytes,
            long toBytes,
            String ncclPick,
            String policyPick,
            int channels,
            long count) {}

    /** @return the aggregates, by collective, bucket and picks */
    public List<Entry> entries() {
        List<long[]> kc = new ArrayList<>();
        for (int i = 0; i < SLOTS; i++) {
            if (slots[2 * i + 1] != 0) {
                kc.add(new long[] {slots[2 * i], slots[2 * i + 1]});
            }
        }
        kc.sort((a, b) -> Long.compareUnsigned(a[0], b[0]));
        List<Entry> out = new ArrayList<>(kc.size());
        for (long[] e : kc) {
            long k = e[0];
            int coll = (int) (k >>> 56);
            int bucket = (int) ((k >>> 40) & 0xffff);
            int numProto = (int) ((k >>> 32) & 0xff);
            int pick = (int) ((k >>> 24) & 0xff);
            int na = pick == 0xff || numProto == 0 ? 0xff : pick / numProto;
            int np = pick == 0xff || numProto == 0 ? 0xff : pick % numProto;
            int cand = (int) (k & 0xffffff);
            String nccl = na >= Algorithm.values().length || np >= Protocol.values().length
                    ? null
                    : Algorithm.ofId(na) + "/" + Protocol.ofId(np);
            String pol = Algorithm.ofId(cand & 0xff) + "/" + Protocol.ofId((cand >>> 8) & 0xff);
            out.add(new Entry(
                    Collective.ofId(coll),
                    coll,
                    SizeGrid.lowerBound(bucket),
                    SizeGrid.upperBound(bucket),
                    nccl,
                    pol,
                    cand >>> 16,
                    e[1]));
        }
        return out;
    }

    /**
     * What identifies a communicator's lines in the decision log (the report groups and compares
     * ranks by these).
     *
     * @param comm NCCL's commId (tuner v5+: the same on every rank of the communicator), else the
     *     engine's handle (unique within the process only)
     * @param commScope {@code "job"} when {@code comm} is NCCL's commId, {@code "process"} when it
     *     is the engine's handle; written to the comm line so that the report knows which ranks
     *     logged the same communicator
     * @param host host name
     * @param pid process id
     * @param policy policy name
     * @param profile profile name
     * @param sha256 the compiled table's digest
     * @param mode enforce, shadow or off
     * @param nRanks ranks
     * @param nNodes nodes
     * @param calls getCollInfo calls
     * @param hits rule hits
     * @param applied decisions written to NCCL's table
     */
    public record CommInfo(
            long comm,
            String commScope,
            String host,
            long pid,
            String policy,
            String profile,
            String sha256,
            String mode,
            long nRanks,
            long nNodes,
            long calls,
            long hits,
            long applied) {}

    /**
     * The JSON lines for one communicator: a {@code "type":"comm"} line, then one {@code
     * "type":"aggregate"} line per entry. Each line carries comm, host and pid; aggregate lines
     * also nBytes (the bucket's first size) and count, so {@code nccl-tuner compile --workload} reads
     * them as weighted calls.
     *
     * @param info the communicator
     * @param reason "destroy" or "exit"
     * @return the lines, each ending in a newline
     */
    public String toJsonLines(CommInfo info, String reason) {
        StringWriter w = new StringWriter();
        JsonFactory json = new JsonFactory();
        try {
            try (JsonGenerator g = json.createGenerator(w)) {
                g.writeStartObject();
                g.writeStringField(LogField.TYPE, LogField.TYPE_COMM);
                common(g, info);
                g.writeStringField(LogField.POLICY, info.policy());
                g.writeStringField(LogField.PROFILE, info.profile());
                g.writeStringField(LogField.SHA256, info.sha256());
                g.writeStringField(LogField.MODE, info.mode());
                g.writeNumberField(LogField.N_RANKS, info.nRanks());
                g.writeNumberField(LogField.N_NODES, info.nNodes());
                g.writeNumberField(LogField.CALLS, info.calls());
                g.writeNumberField(LogField.RULE_HITS, info.hits());
                g.writeNumberField(LogField.APPLIED, info.applied());
                g.writeNumberField(LogField.UNAGGREGATED, unaggregated);
                g.writeStringField(LogField.AT, reason);
                g.writeStringField(LogField.COMM_SCOPE, info.commScope());
                g.writeEndObject();
            }
            w.write('\n');
            for (Entry e : entries()) {
                try (JsonGenerator g = json.createGenerator(w)) {
                    g.writeStartObject();
                    g.writeStringField(LogField.TYPE, LogField.TYPE_AGGREGATE);
                    common(g, info);
                    g.writeStringField(LogField.SHA256, info.sha256());
                    g.writeNumberField(LogField.N_RANKS, info.nRanks());
                    g.writeNumberField(LogField.N_NODES, info.nNodes());
                    g.writeStringField(
                            LogField.COLLECTIVE,
                            e.collective() == null
                                    ? Integer.toString(e.collId())
                                    : e.collective().name());
                    g.writeFieldName(LogField.N_BYTES);
                    g.writeNumber(Long.toUnsignedString(e.fromBytes()));
                    g.writeFieldName(LogField.TO_BYTES);
                    g.writeNumber(toBytesNumber(e.toBytes()));
                    g.writeStringField(LogField.BUCKET, bucket(e.fromBytes(), e.toBytes()));
                    g.writeStringField(LogField.NCCL_PICK, e.ncclPick());
                    g.writeStringField(LogField.POLICY_PICK, e.policyPick());
                    g.writeNumberField(LogField.CHANNELS, e.channels());
                    g.writeNumberField(LogField.COUNT, e.count());
                    g.writeEndObject();
                }
                w.write('\n');
            }
        } catch (IOException impossible) {
            throw new IllegalStateException(impossible); // a StringWriter does not fail
        }
        return w.toString();
    }

    /**
     * A range's end as the decision log's {@code toBytes} field writes it: the unsigned number, or
     * -1 for no end (as a policy's {@code to_bytes}).
     *
     * @param toBytes the end (exclusive), bytes, unsigned; -1 for none
     * @return the JSON number's text, "-1" or e.g. "1310720"
     */
    static String toBytesNumber(long toBytes) {
        return toBytes == -1L ? "-1" : Long.toUnsignedString(toBytes);
    }

    /**
     * The decision log's {@code bucket} field: the range's spelling, {@link ByteSize#range}.
     *
     * @param fromBytes its first size, bytes
     * @param toBytes its end (exclusive), bytes; -1 for none
     * @return "[1 MiB, 1.25 MiB)"; the end "inf" when toBytes is -1
     */
    public static String bucket(long fromBytes, long toBytes) {
        return ByteSize.range(fromBytes, toBytes);
    }

    /**
     * Hands a communicator's lines to the decision log, once (at destroy, or at exit for a
     * communicator never destroyed). Not on the hot path: builds strings, looks up the host name.
     *
     * @param c the communicator (null, or one without aggregate or table: nothing)
     * @param mode the engine's mode
     * @param policy the policy name
     * @param log the decision log (null: nothing)
     * @param reason "destroy" or "exit"
     */
    static void write(Engine.Comm c, io.nccltuner.policy.Mode mode, String policy, DecisionLog log, String reason) {
        if (c == null
                || log == null
                || c.aggregate == null
                || c.table == null
                || !c.aggregate.written.compareAndSet(false, true)) {
            return;
        }
        CommInfo info = new CommInfo(
                c.commId != 0 ? c.commId : c.handle,
                c.commId != 0 ? "job" : "process",
                host(),
                ProcessHandle.current().pid(),
                policy,
                c.profile,
                c.table.sha256(),
                mode.spelling(),
                c.nRanks,
                c.nNodes,
                c.calls,
                c.hits,
                c.applied);
        log.writeLines(c.aggregate.toJsonLines(info, reason));
    }

    /** @return this host's name up to its first dot, as DecisionLog.expand's %h */
    static String host() {
        String h = host;
        if (h == null) {
            try {
                h = java.net.InetAddress.getLocalHost().getHostName();
            } catch (IOException e) {
                h = "localhost";
            }
            int dot = h.indexOf('.');
            h = dot > 0 ? h.substring(0, dot) : h;
            host = h;
        }
        return h;
    }

    private static void common(JsonGenerator g, CommInfo info) throws IOException {
        g.writeFieldName(LogField.COMM);
        g.writeNumber(Long.toUnsignedString(info.comm())); // NCCL's commHash is an unsigned 64-bit value
        g.writeStringField(LogField.HOST, info.host());
        g.writeNumberField(LogField.PID, info.pid());
    }
}
