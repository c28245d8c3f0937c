package io.nccltuner.engine;

import static java.lang.foreign.ValueLayout.JAVA_DOUBLE;
import static java.lang.foreign.ValueLayout.JAVA_FLOAT_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import io.nccltuner.policy.ByteSize;
import io.nccltuner.policy.Collective;
import io.nccltuner.policy.ForcePolicy;
import io.nccltuner.policy.Mode;
import io.nccltuner.policy.Policy;
import io.nccltuner.policy.Signature;
import io.nccltuner.policy.SizeGrid;
import io.nccltuner.policy.TunerConstant;
import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The policy engine behind the three tuner entry points, in plain Java (the FFM upcalls in
 * {@code io.nccltuner.ffm} only forward to it, and offline tools call it directly).
 *
 * <p>{@link #init} picks the policy profile matching (nRanks, nNodes) and the hardware
 * {@link Signature}, sets the profile's model constants under tuner v5+ and returns a communicator
 * handle; {@link #getCollInfo} edits NCCL's cost table in place, O(1) with no allocation, lock or
 * I/O: it looks up the rule for (collective, nBytes, numPipeOps, regBuff), applies the first ranked
 * candidate NCCL offers (entry >= 0, algorithm < numAlgo, protocol < numProto) by setting that
 * entry to 0.0 and, when the candidate names one, setting nChannels. NCCL then selects the strict
 * minimum (NCCL src/enqueue.cc, topoGetAlgoInfo, 2.19 .. 2.28), so the candidate wins. It never
 * writes a -1 entry, never writes outside numAlgo x numProto and never writes in shadow or off
 * mode. Decisions depend only on the policy, nRanks, nNodes, the hardware signature, the
 * collective, nBytes, numPipeOps, regBuff and which entries are -1, so every rank decides the same.
 * {@link #getChunkSize} (tuner v6+) gives NCCL a candidate's chunkSize.
 *
 * <p>Not final so that tests can inject faults from the test side: a subclass that throws in an
 * entry point, named by {@code -Dnccltj.engine=CLASS} (see {@code ffm.PluginConfig}); production
 * code has no test branch.
 *
 * <p>Threads: init and destroy are serialized on the engine; getCollInfo reads the handle table
 * (one volatile read of the array, then its slot) and may run on any thread. init and destroy
 * write a slot in place and then write the array field again (the volatile write publishes the
 * slot); the array is copied only when it grows (doubling), so an init or destroy allocates the
 * same few hundred bytes however many communicators are open (a copy per init and per destroy
 * made both O(communicators): 15 KB an init with 5,000 open; issue 23). A slot is cleared only by
 * its communicator's destroy, which NCCL never runs beside that communicator's own calls; a
 * reused slot carries a new generation in its handle, so a stale handle matches nothing.
 * Per-communicator counters are plain fields: NCCL enqueues one communicator's collectives from
 * one thread at a time.
 */
public class Engine {
    /** Largest numAlgo x numProto the engine edits (NCCL 2.28: 7 x 3); larger tables are left alone. */
    public static final int MAX_TABLE_ENTRIES = 64;

    /**
     * Set in a communicator's handle when {@link #getChunkSize} may change NCCL's chunk size for it
     * (enforce mode, and its profile's candidates name chunk sizes); without it the shim does not
     * make the getChunkSize upcall at all (NCCL 2.30+ asks once per collective, src/enqueue.cc).
     * The handle's other bits: slot (bits 0-31), generation (bits 32-61). nccltj_bridge.h's
     * NCCLTJ_HANDLE_CHUNK_SIZES.
     */
    public static final long CHUNK_SIZES = 1L << 62;

    /** Longest wait at destroy for the decision log to reach the disk, in milliseconds. */
    static final long FLUSH_WAIT_MILLIS = 2000;

    private final Policy policy;
    private final Mode mode;
    private final TunerLog log;
    private final DecisionLog decisionLog;
    private final Map<String, DecisionTable> tables = new HashMap<>();
    private final AtomicBoolean warnedFailure = new AtomicBoolean();
    private volatile int canaryThreshold = Canary.threshold(Canary.DEFAULT_FRACTION);
    private volatile Comm[] comms = new Comm[16];
    private final ArrayDeque<Integer> freeSlots = new ArrayDeque<>();
    private int nextSlot = 1;
    private int generation;

    /** State of one communicator, reached through its handle. */
    static final class Comm {
        final long handle;
        final long commId;
        final long nRanks;
        final long nNodes;
        final DecisionTable table;
        final String profile;
        final boolean write;
        final boolean observe;
        /** Canary: the policy's candidate applies when {@link Canary#policyArm} holds; ALL in enforce mode. */
        final int canaryThreshold;

        final long canarySeed;
        final MemorySegment logger;
        long calls;
        long hits;
        long applied;
        long chunkSizes;
        final long[] disagreements; // per (collective, bucket); null unless NCCL's pick is observed
        final ShadowAggregate aggregate;

        /** "summary profile P mode M": the head of the destroy's line, shared by a shape's communicators. */
        final String summaryHead;

        Comm(
                long handle,
                long commId,
                long nRanks,
                long nNodes,
                DecisionTable table,
                String profile,
                Mode mode,
                boolean observe,
                MemorySegment logger,
                int canaryThreshold,
                long seedBits,
                String summaryHead) {
            this.handle = handle;
            this.commId = commId;
            this.logger = logger;
            this.nRanks = nRanks;
            this.nNodes = nNodes;
            this.table = table;
            this.profile = profile;
            this.write = mode == Mode.ENFORCE || mode == Mode.CANARY;
            this.observe = observe || mode == Mode.SHADOW || mode == Mode.CANARY;
            this.canaryThreshold = mode == Mode.CANARY ? canaryThreshold : Canary.ALL;
            this.canarySeed = table == null ? 0 : Canary.seed(seedBits, commId);
            this.summaryHead = summaryHead;
            // Only where NCCL's pick is observed: 10 KB per communicator otherwise spent for nothing
            // (4,350 open enforce-mode communicators filled the 64 MB heap; found by a hostile host).
            this.disagreements = this.observe ? new long[Collective.COUNT * SizeGrid.BUCKETS] : null;
            this.aggregate = observe ? new ShadowAggregate() : null;
        }
    }

    /**
     * Creates an engine.
     *
     * @param policy the loaded policy, or null to change nothing
     * @param mode the effective mode (the policy's, or NCCL_TUNER_JAVA_MODE's)
     * @param log where INFO/WARN lines go
     * @param decisionLog where per-call records go, or null for none
     */
    public Engine(Policy policy, Mode mode, TunerLog log, DecisionLog decisionLog) {
        this.policy = policy;
        this.mode = policy == null ? Mode.OFF : mode;
        this.log = log;
        this.decisionLog = decisionLog;
    }

    /**
     * Sets the canary fraction (canary mode; {@code NCCL_TUNER_JAVA_CANARY}) for communicators opened
     * after this call.
     *
     * @param fraction of the rule hits that get the policy's candidate, in [0, 1]
     * @throws IllegalArgumentException outside [0, 1] or NaN
     */
    public void canaryFraction(double fraction) {
        canaryThreshold = Canary.threshold(fraction);
    }

    /** @return the effective mode */
    public Mode mode() {
        return mode;
    }

    /** @return where INFO/WARN lines go */
    public TunerLog log() {
        return log;
    }

    /** @return the policy, or null */
    public Policy policy() {
        return policy;
    }

    /**
     * Opens a communicator.
     *
     * @param nRanks ranks in the communicator
     * @param nNodes nodes in the communicator
     * @param ncclLogger NCCL's logger from init, or {@link MemorySegment#NULL}
     * @return a non-zero handle to pass to {@link #getCollInfo} and {@link #destroy}
     */
    public long init(long nRanks, long nNodes, MemorySegment ncclLogger) {
        return init(nRanks, nNodes, ncclLogger, Signature.UNKNOWN, MemorySegment.NULL);
    }

    /**
     * Opens a communicator, knowing what NCCL's tuner version passes (v5+: commId, NVLink domains,
     * model constants) and the process's hardware signature.
     *
     * @param nRanks ranks in the communicator
     * @param nNodes nodes in the communicator
     * @param ncclLogger NCCL's logger from init, or {@link MemorySegment#NULL}
     * @param sig the signature; {@link Signature#UNKNOWN} when nothing is known
     * @param constants NCCL's constants struct (v5, v6: ncclTunerConstants_v5_t; v7:
     *     ncclTunerConstants_v7_t; at least {@link TunerConstant#structBytes} of the signature's
     *     tuner version bytes), which enforce mode edits with the profile's constants; NULL before v5
     * @return a non-zero handle to pass to {@link #getCollInfo} and {@link #destroy}
     */
    public synchronized long init(
            long nRanks, long nNodes, MemorySegment ncclLogger, Signature sig, MemorySegment constants) {
        Shape s = shape(nRanks, nNodes, sig);
        Policy.Profile p = s.profile;
        DecisionTable t = s.table;
        int slot = freeSlots.isEmpty() ? nextSlot++ : freeSlots.pop();
        long handle = ((long) (++generation & 0x3fffffff) << 32) | slot;
        if (s.chunkSizes) {
            handle |= CHUNK_SIZES;
        }
        long commId = sig.commId();
        Comm c = new Comm(
                handle,
                commId,
                nRanks,
                nNodes,
                t,
                p == null ? null : p.name(),
                mode,
                decisionLog != null,
                ncclLogger,
                s.canaryThreshold,
                s.seedBits,
                s.summaryHead);
        Comm[] cur = comms;
        if (slot >= cur.length) {
            cur = java.util.Arrays.copyOf(cur, Math.max(cur.length * 2, slot + 1));
        }
        cur[slot] = c;
        comms = cur; // the volatile write publishes the slot, also when the array is the same one
        // By commId only: the profiler's measurements name their communicator by NCCL's commId, never
        // by a handle (under tuner v3/v4, commId 0, the handle-keyed entries were never read and
        // filled the map to its 4,096 entries).
        if (t != null && commId != 0) {
            tableOfComm.put(commId, t.sha256()); // as the comm lines name it
        }
        if (policy == null) {
            return handle;
        }
        for (String line : s.skipped) {
            log.log(ncclLogger, TunerLog.INFO, line);
        }
        log.log(ncclLogger, TunerLog.INFO, commId == 0 ? s.line : s.head + commIdText(commId) + s.tail);
        if (p != null) {
            if (!s.noted) {
                versionNotes(p, s.namesChunkSizes, sig.tunerVersion(), ncclLogger);
                s.noted = true;
            }
            if (mode != Mode.OFF) {
                if (s.constantLines != null) {
                    for (String line : s.constantLines) {
                        log.log(ncclLogger, TunerLog.INFO, line);
                    }
                } else {
                    applyConstants(p, sig.tunerVersion(), constants, ncclLogger);
                }
            }
        }
        return handle;
    }

    /**
     * What an init works out from values that repeat across communicators: nRanks, nNodes, the
     * signature without its commId and the canary threshold decide the profile (and the lines
     * saying why others were skipped), its compiled table, the INFO line but for the commId, the
     * canary seed's table part and the summary line's head. Computed at the first init of each
     * such shape (issue 23: each further init ran Policy.profileFor, Signature.describe through
     * String.format and the line's concatenation again, mostly interpreted: 100-200 us).
     */
    private static final class Shape {
        final Policy.Profile profile;
        final DecisionTable table;
        final boolean chunkSizes;
        final int canaryThreshold;
        final long seedBits;
        final String summaryHead;
        final String[] skipped;
        /** The INFO line up to where the commId goes, the rest after it, and both for commId 0. */
        final String head;

        final String tail;
        final String line;
        /** The constants' lines when the key decides them (none, canary, tuner v3/v4); null: applyConstants. */
        final String[] constantLines;
        /**
         * Some candidate of the profile names a chunk size (its table has one): read from the
         * table, since walking every rule's candidates took 13 ms for 4,960 rules in the
         * interpreted first init (issue 23 item 6).
         */
        final boolean namesChunkSizes;
        /** versionNotes ran for this shape (it says things once per profile and tuner version). */
        boolean noted;

        Shape(
                Policy.Profile profile,
                DecisionTable table,
                boolean chunkSizes,
                int canaryThreshold,
                long seedBits,
                String summaryHead,
                String[] skipped,
                String head,
                String tail,
                String[] constantLines,
                boolean namesChunkSizes) {
            this.profile = profile;
            this.table = table;
            this.chunkSizes = chunkSizes;
            this.canaryThreshold = canaryThreshold;
            this.seedBits = seedBits;
            this.summaryHead = summaryHead;
            this.skipped = skipped;
            this.head = head;
            this.tail = tail;
            this.line = head + tail;
            this.constantLines = constantLines;
            this.namesChunkSizes = namesChunkSizes;
        }
    }

    /** A shape's key: everything an init's decisions and lines depend on but the commId. */
    private static final class ShapeKey {
        final long nRanks;
        final long nNodes;
        final int tunerVersion;
        final int nNvlDomains;
        final int minRanks;
        final int maxRanks;
        final int ncclVersion;
        final int ccMajor;
        final int ccMinor;
        final int canaryThreshold;
        final String gpuName;

        ShapeKey(long nRanks, long nNodes, Signature sig, int canaryThreshold) {
            this.nRanks = nRanks;
            this.nNodes = nNodes;
            this.tunerVersion = sig.tunerVersion();
            this.nNvlDomains = sig.nNvlDomains();
            this.minRanks = sig.minRanksPerNvlDomain();
            this.maxRanks = sig.maxRanksPerNvlDomain();
            this.ncclVersion = sig.ncclVersion();
            this.ccMajor = sig.ccMajor();
            this.ccMinor = sig.ccMinor();
            this.canaryThreshold = canaryThreshold;
            this.gpuName = sig.gpuName();
        }

        @Override
        public int hashCode() { // written out: a record's goes through an invokedynamic bootstrap
            long h = nRanks * 31 + nNodes;
            h = h * 31 + tunerVersion;
            h = h * 31 + nNvlDomains;
            h = h * 31 + minRanks;
            h = h * 31 + maxRanks;
            h = h * 31 + ncclVersion;
            h = h * 31 + ccMajor * 100 + ccMinor;
            h = h * 31 + canaryThreshold;
            h = h * 31 + gpuName.hashCode();
            return (int) (h ^ (h >>> 32));
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof ShapeKey k
                    && k.nRanks == nRanks
                    && k.nNodes == nNodes
                    && k.tunerVersion == tunerVersion
                    && k.nNvlDomains == nNvlDomains
                    && k.minRanks == minRanks
                    && k.maxRanks == maxRanks
                    && k.ncclVersion == ncclVersion
                    && k.ccMajor == ccMajor
                    && k.ccMinor == ccMinor
                    && k.canaryThreshold == canaryThreshold
                    && k.gpuName.equals(gpuName);
        }
    }

    /** Shapes seen; bounded (a process opens communicators of a handful of shapes). */
    private final Map<ShapeKey, Shape> shapes = new HashMap<>();

    private static final int MAX_SHAPES = 256;

    private Shape shape(long nRanks, long nNodes, Signature sig) {
        int threshold = mode == Mode.CANARY ? canaryThreshold : Canary.ALL;
        ShapeKey key = new ShapeKey(nRanks, nNodes, sig, threshold);
        Shape s = shapes.get(key);
        if (s == null) {
            s = newShape(nRanks, nNodes, sig, threshold);
            if (shapes.size() >= MAX_SHAPES) {
                shapes.clear();
            }
            shapes.put(key, s);
        }
        return s;
    }

    private Shape newShape(long nRanks, long nNodes, Signature sig, int threshold) {
        java.util.List<String> skipped = new java.util.ArrayList<>();
        Policy.Profile p = policy == null ? null : policy.profileFor(nRanks, nNodes, sig, skipped);
        DecisionTable t = p == null || mode == Mode.OFF
                ? null
                : tables.computeIfAbsent(p.name(), n -> CompiledPolicy.tableFor(p));
        boolean chunk = t != null && mode == Mode.ENFORCE && t.chunkSizes().length > 0;
        long seedBits = t == null ? 0 : Canary.seedBits(t.sha256());
        String summaryHead = "summary profile " + (p == null ? null : p.name()) + " mode " + mode.spelling();
        if (policy == null) {
            return new Shape(p, t, chunk, threshold, seedBits, summaryHead, new String[0], "", "", null, false);
        }
        String[] skippedLines = new String[skipped.size()];
        for (int i = 0; i < skippedLines.length; i++) {
            skippedLines[i] = "policy " + policy.name() + ": " + skipped.get(i);
        }
        String head;
        String tail = "; " + sig.describe();
        String[] constantLines = null;
        boolean namesChunkSizes = false;
        if (p == null) {
            head = "policy " + policy.name() + ": no profile matches nRanks=" + nRanks + " nNodes=" + nNodes
                    + "; changing nothing for this communicator";
        } else {
            DecisionTable dt = t != null ? t : CompiledPolicy.tableFor(p);
            head = "policy " + policy.name() + " profile " + p.name() + " mode " + mode.spelling()
                    + (mode == Mode.CANARY ? " " + Canary.fraction(threshold) : "") + " rules " + dt.ruleCount()
                    + " sha256 "
                    + dt.sha256() + " (nRanks=" + nRanks + " nNodes=" + nNodes + ")";
            constantLines = constantLines(p, sig.tunerVersion());
            namesChunkSizes = dt.chunkSizes().length > 0;
        }
        return new Shape(
                p,
                t,
                chunk,
                threshold,
                seedBits,
                summaryHead,
                skippedLines,
                head,
                tail,
                constantLines,
                namesChunkSizes);
    }

    /**
     * The lines {@link #applyConstants} logs where the profile and tuner version alone decide them
     * (no constants, canary mode, tuner v3/v4: nothing is written), or null where it must run.
     */
    private String[] constantLines(Policy.Profile p, int tunerVersion) {
        if (p.constants().isEmpty()) {
            return new String[0];
        }
        if (mode == Mode.CANARY) {
            return new String[] {
                "profile " + p.name() + ": " + p.constants().size() + " constants not set in "
                        + "canary mode: NCCL's model constants apply to every call, so both arms would run with them"
            };
        }
        if (tunerVersion < 5) {
            return notSetLines(p, tunerVersion);
        }
        return null;
    }

    private static String[] notSetLines(Policy.Profile p, int tunerVersion) {
        return new String[] {
            "profile " + p.name() + ": " + p.constants().size() + " constants not set: "
                    + (tunerVersion < 5
                            ? "NCCL passes its model constants from tuner v5 (2.28); this NCCL uses v" + tunerVersion
                            // NCCL 2.28+ always passes the struct; an offline replay (explain, replay) may not
                            : "init was given no constants struct (tuner v" + tunerVersion + ")"),
            "profile " + p.name() + ": "
                    + (p.rules().isEmpty()
                            ? "no rules either, so NCCL's own model applies unchanged"
                            : "its " + p.rules().size() + " measured rules apply without the constants")
        };
    }

    private static String commIdText(long commId) {
        return commId == 0 ? "" : " commId 0x" + Long.toHexString(commId);
    }

    private final java.util.Set<String> notedProfiles = new java.util.HashSet<>();

    /**
     * Says once per profile and tuner version what that version cannot do for the profile;
     * {@code namesChunkSizes}: its table holds a chunk size (a candidate names one).
     */
    private void versionNotes(Policy.Profile p, boolean namesChunkSizes, int tunerVersion, MemorySegment ncclLogger) {
        if (!notedProfiles.add(p.name() + "/" + tunerVersion)) {
            return;
        }
        if (tunerVersion < 4 && p.needsRegBuff()) {
            long n = p.rules().stream().filter(r -> r.regBuff() != null).count();
            log.log(
                    ncclLogger,
                    TunerLog.INFO,
                    "profile " + p.name() + ": " + n + " rules name regBuff, which NCCL passes "
                            + "from tuner v4 (2.24); under v" + tunerVersion
                            + " regBuff is unknown and they never match");
        }
        if (tunerVersion < 6 && namesChunkSizes) {
            log.log(
                    ncclLogger,
                    TunerLog.INFO,
                    "profile " + p.name() + ": candidates name chunkSize, which NCCL asks for "
                            + "from tuner v6 (2.30); under v" + tunerVersion + " NCCL keeps its own chunk sizes");
        }
    }

    /**
     * Writes the profile's constants into NCCL's constants struct (v5+, enforce mode), or says why
     * not. The struct's layout is the tuner version's: ncclTunerConstants_v5_t under v5 and v6,
     * ncclTunerConstants_v7_t (a fifth, RUBIN, compute-capability row) under v7; a RUBIN entry is
     * not set under v5/v6, with one INFO line (NCCL 2.32.6's v5/v6 adapters pass a 4-row copy).
     * NCCL computes its latencies and bandwidths from them after init returns (src/init.cc then
     * src/graph/tuning.cc, 2.28.3 .. 2.30.7).
     */
    private void applyConstants(Policy.Profile p, int tunerVersion, MemorySegment constants, MemorySegment ncclLogger) {
        if (p.constants().isEmpty()) {
            return;
        }
        if (mode == Mode.CANARY) {
            log.log(
                    ncclLogger,
                    TunerLog.INFO,
                    "profile " + p.name() + ": " + p.constants().size() + " constants not set in "
                            + "canary mode: NCCL's model constants apply to every call, so both arms would run with them");
            return;
        }
        if (tunerVersion < 5 || constants.address() == 0) {
            for (String line : notSetLines(p, tunerVersion)) {
                log.log(ncclLogger, TunerLog.INFO, line);
            }
            return;
        }
        java.util.List<TunerConstant> fit = new java.util.ArrayList<>();
        java.util.List<String> rubin = new java.util.ArrayList<>();
        for (TunerConstant tc : p.constants()) {
            if (tc.fits(tunerVersion)) {
                fit.add(tc);
            } else {
                rubin.add(tc.name());
            }
        }
        if (!rubin.isEmpty()) {
            log.log(
                    ncclLogger,
                    TunerLog.INFO,
                    "profile " + p.name() + ": " + rubin.size() + " constants not set ("
                            + String.join(", ", rubin)
                            + "): the RUBIN row is in NCCL's constants from tuner v7 (2.32.6); this NCCL "
                            + "uses v" + tunerVersion + ", whose constants have the rows VOLTA..BLACKWELL only");
        }
        if (fit.isEmpty()) {
            return;
        }
        long bytes = TunerConstant.structBytes(tunerVersion);
        MemorySegment k = constants.byteSize() >= bytes ? constants : constants.reinterpret(bytes);
        StringBuilder sb = new StringBuilder();
        for (TunerConstant tc : fit) {
            long at = tc.byteOffset(tunerVersion);
            double before = k.get(JAVA_DOUBLE, at);
            if (mode == Mode.ENFORCE) {
                k.set(JAVA_DOUBLE, at, tc.value());
            }
            sb.append(sb.isEmpty() ? "" : ", ")
                    .append(tc.name())
                    .append(' ')
                    .append(before)
                    .append(" -> ")
                    .append(tc.value())
                    .append(tc.unit().equals("GB/s") ? " GB/s" : " us");
        }
        log.log(
                ncclLogger,
                TunerLog.INFO,
                "profile " + p.name() + ": " + (mode == Mode.ENFORCE ? "set " : "would set (shadow) ") + fit.size()
                        + (fit.size() == 1 ? " constant: " : " constants: ") + sb);
    }

    /**
     * The per-call decision: edits NCCL's cost table in place. See the class comment for the rules.
     *
     * @param handle from {@link #init}; an unknown or destroyed handle changes nothing
     * @param collType ncclFunc_t value
     * @param nBytes message size as NCCL passes it (size_t, read unsigned)
     * @param numPipeOps operations NCCL pipelines together
     * @param costTable numAlgo x numProto floats, algorithm-major, predicted microseconds; -1 =
     *     unavailable; must be at least {@code 4 * numAlgo * numProto} bytes long
     * @param numAlgo rows in the table (7 in NCCL 2.23+, 6 before)
     * @param numProto columns in the table (3)
     * @param nChannels the int NCCL reads back; 0 = NCCL decides
     * @return the call's {@link Decision} code
     */
    public int getCollInfo(
            long handle,
            int collType,
            long nBytes,
            int numPipeOps,
            MemorySegment costTable,
            int numAlgo,
            int numProto,
            MemorySegment nChannels) {
        return getCollInfo(handle, collType, nBytes, numPipeOps, costTable, 0L, numAlgo, numProto, -1, nChannels, 0L);
    }

    /**
     * The per-call path, whole: from the upcall ({@code ffm.Upcalls.getCollInfo}, which only
     * forwards) to the write into NCCL's table, with the cost table and nChannels given as a segment
     * and a byte offset each (the plugin passes one constant segment over all memory and NCCL's
     * addresses as offsets, so a call creates no objects; offline callers pass their own segments
     * and offset 0) and the call's regBuff (tuner v4+: 0 or 1; -1 under v3, where rules naming regBuff
     * do not match). Steps: (1) the communicator from its handle and the call's index on it, (2)
     * the size bucket, computed once, and the rule for (collective, bucket, numPipeOps), (3) the
     * first ranked candidate NCCL offers (an entry {@code >= 0}: not -1 and not NaN), then in
     * {@link #decide} (4) the arm (canary mode) and, in shadow or canary mode or with a decision log,
     * NCCL's own pick beside the policy's, (5) on the policy's arm the write: that entry to 0.0, and
     * nChannels when the candidate names channels.
     *
     * @return the call's {@link Decision} code: 0 when the engine did not look at the call
     */
    public int getCollInfo(
            long handle,
            int collType,
            long nBytes,
            int numPipeOps,
            MemorySegment mem,
            long costTable,
            int numAlgo,
            int numProto,
            int regBuff,
            MemorySegment chMem,
            long nChannels) {
        // (1) The communicator: an unknown or destroyed handle changes nothing.
        Comm[] cs = comms;
        int slot = (int) handle;
        if (slot <= 0 || slot >= cs.length) {
            return 0;
        }
        Comm c = cs[slot];
        if (c == null || c.handle != handle) {
            return 0;
        }
        long index = ++c.calls;
        DecisionTable t = c.table;
        int bucket = SizeGrid.bucket(nBytes);
        if (t == null || !tableFits(numAlgo, numProto)) {
            return Decision.SEEN | bucket;
        }
        // (2) The rule: O(1), see DecisionTable.
        int r = t.findInBucket(collType, bucket, numPipeOps, regBuff);
        if (r < 0) {
            return Decision.SEEN | bucket;
        }
        c.hits++;
        // (3) The first candidate NCCL offers: inside the table, and its entry >= 0 (not -1, not NaN).
        int[] rules = t.rules;
        int first = r + DecisionTable.FIRST_CANDIDATE;
        for (int k = first, end = first + rules[r + DecisionTable.CANDIDATE_COUNT]; k < end; k++) {
            int cand = rules[k];
            if (PackedCandidate.algorithm(cand) >= numAlgo || PackedCandidate.protocol(cand) >= numProto) {
                continue;
            }
            long entry = costTable + (long) PackedCandidate.entry(cand, numProto) * Float.BYTES;
            if (!(mem.get(JAVA_FLOAT_UNALIGNED, entry) >= 0f)) {
                continue;
            }
            return decide(
                    c,
                    index,
                    collType,
                    bucket,
                    nBytes,
                    numPipeOps,
                    mem,
                    costTable,
                    numAlgo,
                    numProto,
                    cand,
                    entry,
                    chMem,
                    nChannels);
        }
        return notOffered(c, bucket, mem, costTable, numAlgo, numProto);
    }

    /**
     * getCollInfo calls the plugin received on a communicator but did not pass to the engine (too
     * little free stack on the calling thread, a NULL cost table or nChannels; each changed
     * nothing): they count in the call index all the same, so that the next call's index, and
     * with it its canary arm, is the one it has on every other rank (docs/canary.md). Counted
     * like {@link #getCollInfo}: an unknown or destroyed handle counts nothing.
     *
     * @param handle from {@link #init}
     * @param count calls skipped since the last one passed up
     */
    public void skipped(long handle, long count) {
        Comm[] cs = comms;
        int slot = (int) handle;
        if (count <= 0 || slot <= 0 || slot >= cs.length) {
            return;
        }
        Comm c = cs[slot];
        if (c != null && c.handle == handle) {
            c.calls += count;
        }
    }

    /**
     * Steps (4) and (5) of {@link #getCollInfo}: the arm, the observation of NCCL's pick (before any
     * write, so it is read from NCCL's own table) and, on the policy's arm, the write. Kept apart so
     * that getCollInfo stays under HotSpot's FreqInlineSize; the shim forces both inlines.
     */
    private int decide(
            Comm c,
            long index,
            int collType,
            int bucket,
            long nBytes,
            int numPipeOps,
            MemorySegment mem,
            long costTable,
            int numAlgo,
            int numProto,
            int cand,
            long entry,
            MemorySegment chMem,
            long nChannels) {
        boolean apply = c.write
                && (c.canaryThreshold == Canary.ALL || Canary.policyArm(c.canarySeed, index, c.canaryThreshold));
        int nccl = c.observe
                ? observe(c, collType, bucket, nBytes, numPipeOps, mem, costTable, numAlgo, numProto, cand, apply)
                : Decision.NONE;
        int channels = PackedCandidate.channels(cand);
        if (apply) {
            mem.set(JAVA_FLOAT_UNALIGNED, entry, 0f);
            if (channels != 0) {
                chMem.set(JAVA_INT_UNALIGNED, nChannels, channels);
            }
            c.applied++;
        }
        return Decision.rule(
                bucket,
                apply ? Decision.ARM_POLICY : Decision.ARM_NCCL,
                nccl,
                PackedCandidate.entry(cand, numProto),
                channels);
    }

    /** A rule matched but NCCL offers none of its candidates: NCCL's pick stays (and is reported). */
    private static int notOffered(Comm c, int bucket, MemorySegment mem, long costTable, int numAlgo, int numProto) {
        int nccl = c.observe ? ncclPick(mem, costTable, numAlgo, numProto) : -1;
        return Decision.rule(bucket, Decision.ARM_NOT_OFFERED, nccl < 0 ? Decision.NONE : nccl, Decision.NONE, 0);
    }

    /**
     * Whether a cost table of numAlgo x numProto entries is one the engine edits: both positive and
     * at most {@link #MAX_TABLE_ENTRIES} entries in all. Kept out of {@link #getCollInfo} so that
     * its bytecode stays under HotSpot's FreqInlineSize (325 bytes on x86_64) and C2 inlines the
     * whole per-call path into the upcall's target (measured: about 5 ns per call).
     */
    private static boolean tableFits(int numAlgo, int numProto) {
        return numAlgo > 0
                && numProto > 0
                && numAlgo <= MAX_TABLE_ENTRIES
                && numProto <= MAX_TABLE_ENTRIES
                && numAlgo * numProto <= MAX_TABLE_ENTRIES;
    }

    /**
     * NCCL's getChunkSize (tuner v6+), after it chose algorithm, protocol and channels: in enforce
     * mode, writes the chunkSize of the first rule covering (collective, nBytes) whose candidate
     * names this algorithm and protocol with one ({@link DecisionTable#chunkSize}); leaves NCCL's
     * value otherwise. NCCL then clamps it to the buffer's maximum and rounds it down to its grain
     * (src/enqueue.cc, 2.30.7).
     *
     * @param handle from {@link #init}
     * @param collType ncclFunc_t value
     * @param nBytes message size, unsigned
     * @param algorithm the algorithm NCCL chose
     * @param protocol the protocol NCCL chose
     * @param nChannels the channels NCCL uses (not part of the decision)
     * @param mem a segment holding NCCL's size_t
     * @param chunkSize its byte offset in {@code mem}
     */
    public void getChunkSize(
            long handle,
            int collType,
            long nBytes,
            int algorithm,
            int protocol,
            int nChannels,
            MemorySegment mem,
            long chunkSize) {
        Comm[] cs = comms;
        int slot = (int) handle;
        if (slot <= 0 || slot >= cs.length) {
            return;
        }
        Comm c = cs[slot];
        if (c == null || c.handle != handle || c.table == null || !c.write) {
            return;
        }
        long v = c.table.chunkSize(collType, SizeGrid.bucket(nBytes), algorithm, protocol);
        if (v != 0) {
            mem.set(JAVA_LONG, chunkSize, v);
            c.chunkSizes++;
        }
    }

    /**
     * NCCL's own pick beside the policy's: counted per (collective, bucket), aggregated, and
     * decision-logged.
     *
     * @return NCCL's pick ({@code algorithm * numProto + protocol}), or {@link Decision#NONE}
     */
    private int observe(
            Comm c,
            int coll,
            int bucket,
            long nBytes,
            int numPipeOps,
            MemorySegment mem,
            long costTable,
            int numAlgo,
            int numProto,
            int cand,
            boolean applied) {
        int nccl = ncclPick(mem, costTable, numAlgo, numProto);
        if (nccl != PackedCandidate.entry(cand, numProto) || PackedCandidate.channels(cand) != 0) {
            c.disagreements[coll * SizeGrid.BUCKETS + bucket]++;
        }
        if (c.aggregate != null) {
            c.aggregate.count(coll, bucket, nccl, numProto, cand);
        }
        if (decisionLog != null && decisionLog.logsCalls()) {
            decisionLog.offer(
                    c.commId != 0 ? c.commId : c.handle,
                    coll,
                    nBytes,
                    numPipeOps,
                    nccl < 0 ? -1 : nccl / numProto,
                    nccl < 0 ? -1 : nccl % numProto,
                    PackedCandidate.algorithm(cand),
                    PackedCandidate.protocol(cand),
                    PackedCandidate.channels(cand),
                    applied);
        }
        return nccl < 0 ? Decision.NONE : nccl;
    }

    /**
     * NCCL's selection over a cost table: the strict minimum over entries >= 0, scanned
     * algorithm-major from a starting minimum of 3600000000 us (so larger entries are never
     * picked), the first minimum winning ties (NCCL src/enqueue.cc topoGetAlgoInfo, 2.19 .. 2.30;
     * the same loop in getAlgoInfo of 2.18). The one implementation of this rule in the project:
     * shadow mode uses it on NCCL's table and the offline model on captured ones.
     *
     * @param table numAlgo x numProto floats (microseconds), algorithm-major; -1 = unavailable
     * @return {@code algorithm * numProto + protocol}, or -1 if no entry is selectable
     */
    public static int ncclPick(MemorySegment table, int numAlgo, int numProto) {
        return ncclPick(table, 0L, numAlgo, numProto);
    }

    /**
     * As {@link #ncclPick(MemorySegment, int, int)}, for a table at a byte offset in a segment.
     * NCCL's {@code time >= 0 && time < minTime} as one unsigned compare of bit patterns: after
     * {@code + 0f} (-0.0 becomes +0.0, which NCCL's {@code >= 0} also accepts) the non-negative
     * floats order as their bits do, and negatives (sign bit), NaN and the infinities (exponent all
     * ones) lie above the starting minimum's bits, so they are never picked. Shadow and canary run it
     * on every rule hit: 3-4 ns per call less than the float compares (bench_driver, Intel Xeon,
     * 2026-12-03); {@code EngineTest.ncclPickTreatsSpecialValuesAsNcclsFloatLoop} holds it to NCCL's loop.
     *
     * @param mem the segment holding the table
     * @param costTable byte offset of the table in {@code mem}
     * @param numAlgo rows
     * @param numProto columns
     * @return {@code algorithm * numProto + protocol}, or -1 if no entry is selectable
     */
    public static int ncclPick(MemorySegment mem, long costTable, int numAlgo, int numProto) {
        int best = -1;
        int bestBits = START_MINIMUM_BITS;
        for (int i = 0, n = numAlgo * numProto; i < n; i++) {
            int bits = Float.floatToRawIntBits(mem.get(JAVA_FLOAT_UNALIGNED, costTable + (long) i * Float.BYTES) + 0f);
            if (Integer.compareUnsigned(bits, bestBits) < 0) {
                bestBits = bits;
                best = i;
            }
        }
        return best;
    }

    /**
     * The minimum NCCL's selection loop starts from, microseconds (src/enqueue.cc, 2.18 .. 2.30):
     * entries at or above it are never picked. The one home of this fact (the offline cost model
     * reads it from here).
     */
    public static final float NCCL_START_MINIMUM = 3600000000.0f;

    private static final int START_MINIMUM_BITS = Float.floatToRawIntBits(NCCL_START_MINIMUM);

    /**
     * Closes a communicator and logs its summary line (calls, rule hits, disagreements by
     * collective and size) when a policy is active.
     *
     * @param handle from {@link #init}; unknown, zero or already destroyed handles are ignored
     * @return the summary line, or null if the handle was unknown or no policy applied
     */
    public synchronized String destroy(long handle) {
        Comm[] cur = comms;
        int slot = (int) handle;
        if (slot <= 0 || slot >= cur.length || cur[slot] == null || cur[slot].handle != handle) {
            return null;
        }
        Comm c = cur[slot];
        cur[slot] = null;
        comms = cur; // as in init: the volatile write publishes the cleared slot
        freeSlots.push(slot);
        if (policy == null || c.table == null) {
            return null;
        }
        String line = summary(c);
        log.log(c.logger, TunerLog.INFO, line);
        String none = forcedNone(c);
        if (none != null) {
            log.log(c.logger, TunerLog.INFO, none);
        }
        ShadowAggregate.write(c, mode, policy.name(), decisionLog, "destroy");
        if (decisionLog != null) {
            decisionLog.awaitFlushed(FLUSH_WAIT_MILLIS);
        }
        if (decisionLog != null && decisionLog.dropped() > 0) {
            log.log(c.logger, TunerLog.INFO, "decision log dropped " + decisionLog.dropped() + " records (queue full)");
        }
        return line;
    }

    /**
     * Force mode's line at destroy when the forced candidate applied to none of the calls (NCCL
     * marked it -1 on every call): then NCCL's own pick ran, and a sweep run of that candidate
     * measured NCCL's pick, not the candidate ({@code nccl-tuner compile} reads this line).
     *
     * @return {@code force RING/LL128/8 applied to none of the 31 calls (NCCL offered it for none:
     *     its cost-table entry was -1 on every call), so NCCL's own pick ran instead}, or null
     */
    static String forcedNone(Comm c) {
        String prefix = ForcePolicy.PROFILE_PREFIX;
        if (!c.write || c.profile == null || !c.profile.startsWith(prefix) || c.hits == 0 || c.applied != 0) {
            return null;
        }
        return FORCED_NONE + c.profile.substring(prefix.length()) + " applied to none of the " + c.calls
                + " calls (NCCL offered it for none: its cost-table entry was -1 on every call), so NCCL's own pick ran instead";
    }

    /** How {@link #forcedNone}'s line starts (after {@code TUNER/Java: }). */
    public static final String FORCED_NONE = "force ";

    private String summary(Comm c) {
        StringBuilder sb = new StringBuilder(160); // the line without disagreements fits: no regrowth
        sb.append(c.summaryHead)
                .append(commIdText(c.commId))
                .append(": calls ")
                .append(c.calls)
                .append(", rule hits ")
                .append(c.hits)
                .append(", applied ")
                .append(c.applied);
        if (c.chunkSizes != 0) {
            sb.append(", chunk sizes set ").append(c.chunkSizes);
        }
        if (c.observe) {
            TreeMap<Integer, Long> d = new TreeMap<>();
            long total = 0;
            for (int i = 0; i < c.disagreements.length; i++) {
                if (c.disagreements[i] != 0) {
                    d.put(i, c.disagreements[i]);
                    total += c.disagreements[i];
                }
            }
            sb.append(", disagreements ").append(total);
            String sep = " (";
            for (var e : d.entrySet()) {
                sb.append(sep)
                        .append(Collective.ofId(e.getKey() / SizeGrid.BUCKETS))
                        .append(' ')
                        .append(ByteSize.format(SizeGrid.lowerBound(e.getKey() % SizeGrid.BUCKETS)))
                        .append(": ")
                        .append(e.getValue());
                sep = ", ";
            }
            if (!d.isEmpty()) {
                sb.append(')');
            }
        }
        return sb.toString();
    }

    /**
     * The compiled tables of recently opened communicators by commId, for the profiler's
     * measurements, which NCCL hands over after the tuner's destroy (src/init.cc commFree, 2.28).
     * Bounded: the oldest entries go first.
     */
    private final Map<Long, String> tableOfComm = new java.util.LinkedHashMap<>(16, 0.75f, false) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<Long, String> eldest) {
            return size() > 4096;
        }
    };

    /**
     * The profiler's measurements of one communicator, at its finalize: logs the summary line
     * ({@link Measurement#summary}) at INFO and, with a decision log, writes the {@code measured}
     * and {@code profiled} lines (docs/canary.md). Never changes a decision.
     *
     * @param m what was measured
     * @param ncclLogger the profiler init's logger, or {@link MemorySegment#NULL}
     */
    public void measured(Measurement m, MemorySegment ncclLogger) {
        String sha;
        synchronized (this) {
            sha = tableOfComm.get(m.commId());
        }
        if (m.collectives() > 0 || m.joined()) {
            log.log(ncclLogger, TunerLog.INFO, m.summary());
        }
        if (decisionLog != null) {
            decisionLog.writeLines(m.toJsonLines(
                    ShadowAggregate.host(),
                    ProcessHandle.current().pid(),
                    policy == null ? null : policy.name(),
                    sha,
                    mode.spelling()));
            decisionLog.awaitFlushed(FLUSH_WAIT_MILLIS);
        }
    }

    /** Writes out queued decision-log records (at process exit); waits up to one second. */
    public void flush() {
        if (decisionLog != null) {
            for (Comm c : comms) {
                ShadowAggregate.write(c, mode, policy == null ? null : policy.name(), decisionLog, "exit");
            }
            decisionLog.awaitFlushed(1000);
        }
    }

    /**
     * Records an internal failure: logs one WARN per engine (not one per call) and lets the caller
     * change nothing.
     *
     * @param entry the entry point that failed
     * @param t what was thrown
     * @param ncclLogger NCCL's logger, or {@link MemorySegment#NULL}
     */
    public void failed(String entry, Throwable t, MemorySegment ncclLogger) {
        if (warnedFailure.compareAndSet(false, true)) {
            log.log(
                    ncclLogger,
                    TunerLog.WARN,
                    "internal error in " + entry + " (" + t
                            + "); this and later failures change nothing and are not logged again");
        }
    }
}
