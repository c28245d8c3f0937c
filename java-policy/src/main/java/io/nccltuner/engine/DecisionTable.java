package io.nccltuner.engine;

import io.nccltuner.policy.Collective;
import io.nccltuner.policy.Policy;
import io.nccltuner.policy.PolicyLoader;
import io.nccltuner.policy.SizeGrid;
import io.nccltuner.policy.TunerConstant;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;

/**
 * One profile's rules compiled for O(1) lookup.
 *
 * <p>Three int arrays, never written after construction:
 * <ul>
 *   <li>{@link #head}: {@code Collective.COUNT * SizeGrid.BUCKETS} entries, indexed by
 *       {@code collective * BUCKETS + SizeGrid.bucket(nBytes)}: an offset into {@link #chains},
 *       or -1 where no rule applies.
 *   <li>{@link #chains}: runs of rule offsets ended by -1; a run lists the rules covering one
 *       (collective, bucket), in file order, told apart only by numPipeOps (at most
 *       {@link PolicyLoader#MAX_RULES_PER_BUCKET}). Cells with the same rules share a run.
 *   <li>{@link #rules}: records of {@link #STRIDE} ints {@code [pipeLo, pipeHi, count, cand0,
 *       cand1, cand2, cand3, regBuff]}; each candidate is a {@link PackedCandidate}; regBuff is
 *       0 (any), 1 (the call's regBuff must be 0) or 2 (it must be 1): under tuner v3, where NCCL
 *       passes no regBuff (-1), only 0 matches.
 *   <li>{@link #chunkSizes}: the distinct chunk sizes (bytes) the candidates name, indexed by
 *       {@link PackedCandidate#chunk} - 1.
 * </ul>
 * A lookup is a bucket computation (a leading-zero count and a shift), two array loads and at
 * most four numPipeOps and regBuff comparisons: no scan over rules, no allocation, no lock.
 *
 * <p>The table's {@link #sha256} (logged at init, compared across ranks by {@code nccl-tuner
 * report}, and the canary seed's table part) covers everything of the profile that can change a
 * decision: the four arrays and the profile's {@code constants:}, which edit NCCL's own cost model
 * (ncclTunerConstants_v5_t, NCCL 2.28.3+ src/include/plugin/tuner/tuner_v5.h) and so change
 * NCCL's picks on the calls no rule covers. Its input bytes are in {@link #digestInput}
 * (docs/policy-format.md, "The table's sha256", gives them for an independent check).
 */
public final class DecisionTable {
    /** Ints per rule record. */
    public static final int STRIDE = 8;

    /** Offset of the candidate count within a record. */
    public static final int CANDIDATE_COUNT = 2;

    /** Offset of the first (best) candidate within a record; the others follow it, best first. */
    public static final int FIRST_CANDIDATE = 3;

    /** Offset of the regBuff condition within a record: 0 any, 1 regBuff 0, 2 regBuff 1. */
    public static final int REG_BUFF = 7;

    /** Most distinct chunk sizes one profile may name (8 bits of a packed candidate); the loader refuses more. */
    public static final int MAX_CHUNK_SIZES = io.nccltuner.policy.PolicyLoader.MAX_CHUNK_SIZES;

    final int[] head;
    final int[] chains;
    final int[] rules;
    private final long[] chunkSizes;
    private final int ruleCount;
    private final String sha256;

    private DecisionTable(
            int[] head, int[] chains, int[] rules, long[] chunkSizes, int ruleCount, List<TunerConstant> constants) {
        this(
                head,
                chains,
                rules,
                chunkSizes,
                ruleCount,
                HexFormat.of().formatHex(Sha256.digest(digestInput(head, chains, rules, chunkSizes, constants))));
    }

    private DecisionTable(int[] head, int[] chains, int[] rules, long[] chunkSizes, int ruleCount, String sha256) {
        this.head = head;
        this.chains = chains;
        this.rules = rules;
        this.chunkSizes = chunkSizes;
        this.ruleCount = ruleCount;
        this.sha256 = sha256;
    }

    /**
     * A table as a compiled policy's binary form stored it ({@code CompiledPolicy}, which checks its
     * bytes' CRC-32C and wrote it from {@link #compile}, comparing with {@link #sameAs}). Every index
     * the lookups follow is checked here, so that even a form of consistent bytes that this code did
     * not write cannot send a call outside the arrays nor make it walk far: head's offsets into
     * chains, each run ended by -1 within chains after at most {@link #MAX_RUN} rules, each rule offset a record's start, each record's candidate count 1..4,
     * channels at most {@link PolicyLoader#MAX_CHANNELS} and chunk index within the chunk sizes
     * (each at most {@link PolicyLoader#MAX_CHUNK_SIZE}). What it does not check is that the arrays
     * are those of the form's rules, nor the sha256 against them (that costs what storing them
     * saves): who can write the form as the YAML's owner can write any rules into it.
     *
     * @param head {@code Collective.COUNT * SizeGrid.BUCKETS} offsets into chains, or -1
     * @param chains runs of rule offsets, each ended by -1
     * @param rules {@code ruleCount * STRIDE} ints
     * @param chunkSizes the distinct chunk sizes, bytes (each > 0)
     * @param ruleCount the profile's rules
     * @param sha256 64 lower-case hex digits, as {@link #sha256()}
     * @return the table, or null where any of the above does not hold
     */
    static DecisionTable stored(
            int[] head, int[] chains, int[] rules, long[] chunkSizes, int ruleCount, String sha256) {
        if (head.length != Collective.COUNT * SizeGrid.BUCKETS
                || ruleCount < 0
                || rules.length != ruleCount * STRIDE
                || chunkSizes.length > MAX_CHUNK_SIZES
                || sha256.length() != 64) {
            return null;
        }
        for (int h : head) {
            if (h < -1 || h >= chains.length) {
                return null;
            }
            // a run the lookup walks: at most MAX_RUN rules before its -1, as the loader allows (a
            // crafted run of 1.5M offsets made every call walk it: 4.4 ms a call)
            if (h >= 0) {
                int end = h;
                while (end < chains.length && chains[end] >= 0 && end - h <= MAX_RUN) {
                    end++;
                }
                if (end - h > MAX_RUN) {
                    return null;
                }
            }
        }
        if (chains.length > 0 && chains[chains.length - 1] != -1) {
            return null; // every run, the last one too, ends within the array
        }
        for (int r : chains) {
            if (r < -1 || (r >= 0 && (r % STRIDE != 0 || r >= rules.length))) {
                return null;
            }
        }
        for (int r = 0; r < rules.length; r += STRIDE) {
            int n = rules[r + CANDIDATE_COUNT];
            if (n < 1 || n > FIRST_CANDIDATE_SLOTS || rules[r + REG_BUFF] < 0 || rules[r + REG_BUFF] > 2) {
                return null;
            }
            for (int k = r + FIRST_CANDIDATE; k < r + FIRST_CANDIDATE + n; k++) {
                if (PackedCandidate.chunk(rules[k]) > chunkSizes.length
                        || PackedCandidate.channels(rules[k]) > PolicyLoader.MAX_CHANNELS) {
                    return null;
                }
            }
        }
        for (long c : chunkSizes) {
            if (c <= 0 || c > PolicyLoader.MAX_CHUNK_SIZE) {
                return null;
            }
        }
        return new DecisionTable(head, chains, rules, chunkSizes, ruleCount, sha256);
    }

    /**
     * The most rules one run may hold: {@link PolicyLoader#MAX_RULES_PER_BUCKET} for unregistered
     * buffers and as many for registered ones (the loader counts the two apart, a regBuff: any rule
     * in both), so 8 (four regBuff: false and four regBuff: true rules on one bucket).
     */
    static final int MAX_RUN = 2 * PolicyLoader.MAX_RULES_PER_BUCKET;

    /** Candidate slots of a record: {@link #REG_BUFF} - {@link #FIRST_CANDIDATE}. */
    private static final int FIRST_CANDIDATE_SLOTS = REG_BUFF - FIRST_CANDIDATE;

    /**
     * @param other another table
     * @return whether both have the same arrays, rule count and sha256 (a stored table against its
     *     profile compiled again)
     */
    boolean sameAs(DecisionTable other) {
        return Arrays.equals(head, other.head)
                && Arrays.equals(chains, other.chains)
                && Arrays.equals(rules, other.rules)
                && Arrays.equals(chunkSizes, other.chunkSizes)
                && ruleCount == other.ruleCount
                && sha256.equals(other.sha256);
    }

    /**
     * Compiles a validated profile.
     *
     * @param profile rules already checked by {@link PolicyLoader} (non-overlapping, bounds on the
     *     grid, 1..4 candidates, at most 4 rules per bucket, at most {@link #MAX_CHUNK_SIZES}
     *     distinct chunk sizes)
     * @return the compiled table
     * @throws IllegalArgumentException if the profile names more than {@link #MAX_CHUNK_SIZES} chunk sizes
     */
    public static DecisionTable compile(Policy.Profile profile) {
        List<Policy.Rule> list = profile.rules();
        int[] rules = new int[list.size() * STRIDE];
        List<Long> chunks = new java.util.ArrayList<>();
        List<List<Integer>> cells =
                new java.util.ArrayList<>(Collections.nCopies(Collective.COUNT * SizeGrid.BUCKETS, null));
        for (int i = 0; i < list.size(); i++) {
            Policy.Rule r = list.get(i);
            int off = i * STRIDE;
            rules[off] = (int) Math.min(r.numPipeOps().min(), Integer.MAX_VALUE);
            rules[off + 1] = (int) Math.min(r.numPipeOps().max(), Integer.MAX_VALUE);
            rules[off + CANDIDATE_COUNT] = r.candidates().size();
            for (int k = 0; k < r.candidates().size(); k++) {
                Policy.Candidate cand = r.candidates().get(k);
                int chunk = 0;
                if (cand.chunkSize() != 0) {
                    chunk = chunks.indexOf(cand.chunkSize()) + 1;
                    if (chunk == 0) {
                        chunks.add(cand.chunkSize());
                        chunk = chunks.size();
                    }
                    if (chunk > MAX_CHUNK_SIZES) {
                        throw new IllegalArgumentException("profile " + profile.name() + " names more than "
                                + MAX_CHUNK_SIZES + " distinct chunk sizes");
                    }
                }
                rules[off + FIRST_CANDIDATE + k] = PackedCandidate.pack(cand, chunk);
            }
            rules[off + REG_BUFF] = r.regBuff() == null ? 0 : r.regBuff() ? 2 : 1;
            int lo = SizeGrid.bucket(r.fromBytes());
            int hi = SizeGrid.endBucket(r.toBytes());
            int base = r.collective().id() * SizeGrid.BUCKETS;
            for (int b = lo; b < hi; b++) {
                if (cells.get(base + b) == null) {
                    cells.set(base + b, new java.util.ArrayList<>(1));
                }
                cells.get(base + b).add(off);
            }
        }
        int[] head = new int[cells.size()];
        Arrays.fill(head, -1);
        Map<List<Integer>, Integer> shared = new HashMap<>();
        int[] chains = new int[16];
        int used = 0;
        for (int cell = 0; cell < cells.size(); cell++) {
            List<Integer> run = cells.get(cell);
            if (run == null) {
                continue;
            }
            Integer at = shared.get(run);
            if (at == null) {
                if (used + run.size() + 1 > chains.length) {
                    chains = Arrays.copyOf(chains, Math.max(chains.length * 2, used + run.size() + 1));
                }
                at = used;
                for (int off : run) {
                    chains[used++] = off;
                }
                chains[used++] = -1;
                shared.put(run, at);
            }
            head[cell] = at;
        }
        return new DecisionTable(
                head,
                Arrays.copyOf(chains, used),
                rules,
                chunks.stream().mapToLong(Long::longValue).toArray(),
                list.size(),
                profile.constants());
    }

    /**
     * Finds the rule for a call: O(1), no allocation.
     *
     * @param coll ncclFunc_t value
     * @param nBytes message size as NCCL passes it, unsigned
     * @param numPipeOps number of operations NCCL pipelines together (>= 1)
     * @return the offset of the rule record in {@link #rules}, or -1 if no rule applies
     */
    public int find(int coll, long nBytes, int numPipeOps) {
        return findInBucket(coll, SizeGrid.bucket(nBytes), numPipeOps);
    }

    /**
     * As {@link #find}, for a size already bucketed (the per-call path computes the bucket once).
     *
     * @param coll ncclFunc_t value
     * @param bucket {@code SizeGrid.bucket(nBytes)}
     * @param numPipeOps number of operations NCCL pipelines together (>= 1)
     * @return the offset of the rule record in {@link #rules}, or -1 if no rule applies
     */
    public int findInBucket(int coll, int bucket, int numPipeOps) {
        return findInBucket(coll, bucket, numPipeOps, -1);
    }

    /**
     * As {@link #findInBucket(int, int, int)}, with the call's regBuff.
     *
     * @param coll ncclFunc_t value
     * @param bucket {@code SizeGrid.bucket(nBytes)}
     * @param numPipeOps number of operations NCCL pipelines together (>= 1)
     * @param regBuff as NCCL passes it (tuner v4+: 0, or non-zero for a registered buffer), or
     *     negative when unknown (v3): then a rule that names regBuff does not match
     * @return the offset of the rule record in {@link #rules}, or -1 if no rule applies
     */
    public int findInBucket(int coll, int bucket, int numPipeOps, int regBuff) {
        if (coll < 0 || coll >= Collective.COUNT) {
            return -1;
        }
        int c = head[coll * SizeGrid.BUCKETS + bucket];
        if (c < 0) {
            return -1;
        }
        int have = regBuff < 0 ? 0 : regBuff == 0 ? 1 : 2; // as rules store it: 0 any, 1 false, 2 true
        for (int r; (r = chains[c]) >= 0; c++) {
            int want = rules[r + REG_BUFF];
            if (numPipeOps >= rules[r] && numPipeOps <= rules[r + 1] && (want == 0 || want == have)) {
                return r;
            }
        }
        return -1;
    }

    /**
     * The chunk size for NCCL's getChunkSize (tuner v6+): NCCL passes no numPipeOps or regBuff
     * there, so the first rule covering (collective, bucket), in file order, with a candidate of
     * this algorithm and protocol that names a chunk size gives it.
     *
     * @param coll ncclFunc_t value
     * @param bucket {@code SizeGrid.bucket(nBytes)}
     * @param algorithm the algorithm NCCL chose
     * @param protocol the protocol NCCL chose
     * @return the chunk size in bytes, or 0 to leave NCCL's
     */
    public long chunkSize(int coll, int bucket, int algorithm, int protocol) {
        if (chunkSizes.length == 0 || coll < 0 || coll >= Collective.COUNT) {
            return 0;
        }
        int c = head[coll * SizeGrid.BUCKETS + bucket];
        if (c < 0) {
            return 0;
        }
        for (int r; (r = chains[c]) >= 0; c++) {
            for (int k = r + FIRST_CANDIDATE, end = k + rules[r + CANDIDATE_COUNT]; k < end; k++) {
                int cand = rules[k];
                if (PackedCandidate.algorithm(cand) == algorithm
                        && PackedCandidate.protocol(cand) == protocol
                        && PackedCandidate.chunk(cand) != 0) {
                    return chunkSizes[PackedCandidate.chunk(cand) - 1];
                }
            }
        }
        return 0;
    }

    /** @return a copy of the distinct chunk sizes (bytes) the candidates name */
    public long[] chunkSizes() {
        return chunkSizes.clone();
    }

    /** @return the rule records (read only by convention; see the class comment for the layout) */
    public int[] rules() {
        return rules;
    }

    /** @return the number of rules compiled */
    public int ruleCount() {
        return ruleCount;
    }

    /**
     * @return hex SHA-256 (64 lower-case digits) of {@link #digestInput}: the compiled arrays and the
     *     profile's constants, equal on every rank that loaded the same rules and constants
     */
    public String sha256() {
        return sha256;
    }

    /**
     * The bytes the table's sha256 is taken over, all big-endian:
     *
     * <ol>
     *   <li>{@link #head}, {@code Collective.COUNT * SizeGrid.BUCKETS} int32s;
     *   <li>{@link #chains}, int32s; {@link #rules}, {@link #STRIDE} int32s a rule; {@link
     *       #chunkSizes}, int64s (these four are the whole digest of a profile without constants,
     *       as before the constants were covered);
     *   <li>only when the profile sets constants: int32 the number of distinct entries set, then per
     *       entry, ordered by array (struct order: baseLatencies 0 .. perChMaxNVLSTreeBws 6) and then
     *       by indices (outermost first), int32 the array, its indices as int32s (ALGORITHM.PROTOCOL,
     *       LINK.ALGORITHM.PROTOCOL or COMPCAP.SCALE: NCCL's ids, {@link TunerConstant}), int64 the
     *       IEEE-754 bits of the value ({@code Double.doubleToLongBits}, -0.0 as 0.0). An entry the
     *       profile names twice (two spellings of one entry) counts once, with the value named last:
     *       the one the engine's init leaves in NCCL's struct.
     * </ol>
     *
     * <p>No length is written, yet no two tables give the same bytes: every run of {@link #chains}
     * starts at an offset {@link #head} names and they are contiguous, so head fixes where chains
     * end; every rule is in a chain (its size range covers at least one bucket), so chains fix how
     * many rule records follow; every chunk size is named by a candidate, so the rules fix how many
     * chunk sizes follow; the array of a constant fixes how many indices it has.
     *
     * @param head {@link #head}
     * @param chains {@link #chains}
     * @param rules {@link #rules}
     * @param chunkSizes the chunk sizes in bytes
     * @param constants the profile's constants, in file order
     * @return the bytes to digest
     */
    static byte[] digestInput(int[] head, int[] chains, int[] rules, long[] chunkSizes, List<TunerConstant> constants) {
        java.util.TreeMap<List<Integer>, TunerConstant> set = new java.util.TreeMap<>(DecisionTable::compareKeys);
        for (TunerConstant c : constants) {
            List<Integer> key = new java.util.ArrayList<>(c.index().size() + 1);
            key.add(c.arrayIndex());
            key.addAll(c.index());
            set.put(key, c); // the last spelling of an entry wins, as NCCL's struct keeps the last write
        }
        int constantBytes = 0;
        for (List<Integer> key : set.keySet()) {
            constantBytes += 4 * key.size() + 8;
        }
        int arrays = 4 * (head.length + chains.length + rules.length) + 8 * chunkSizes.length;
        ByteBuffer buf = ByteBuffer.allocate(arrays + (set.isEmpty() ? 0 : 4 + constantBytes));
        buf.asIntBuffer().put(head).put(chains).put(rules); // bulk: the start runs interpreted
        buf.position(4 * (head.length + chains.length + rules.length));
        buf.asLongBuffer().put(chunkSizes);
        buf.position(arrays);
        if (!set.isEmpty()) {
            buf.putInt(set.size());
            set.forEach((key, c) -> {
                for (int v : key) {
                    buf.putInt(v);
                }
                buf.putLong(Double.doubleToLongBits(c.value() + 0.0)); // -0.0 + 0.0 is 0.0
            });
        }
        return buf.array();
    }

    /** Orders constant keys (array, indices...) lexicographically; keys of one array have one length. */
    private static int compareKeys(List<Integer> a, List<Integer> b) {
        for (int i = 0; i < Math.min(a.size(), b.size()); i++) {
            int c = Integer.compare(a.get(i), b.get(i));
            if (c != 0) {
                return c;
            }
        }
        return Integer.compare(a.size(), b.size());
    }
}
