package io.nccltuner.reliability;

import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import io.nccltuner.engine.Engine;
import io.nccltuner.engine.TunerLog;
import io.nccltuner.policy.Algorithm;
import io.nccltuner.policy.Mode;
import io.nccltuner.policy.Policy;
import io.nccltuner.policy.PolicyException;
import io.nccltuner.policy.PolicyLoader;
import io.nccltuner.policy.Protocol;
import io.nccltuner.policy.SizeGrid;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.TreeSet;

/**
 * Seeded random policies, cost tables and calls for the invariant, concurrency and determinism
 * tests, an independent oracle for what the engine must do with a call, and guarded native memory
 * to call {@link Engine#getCollInfo} with, as the FFM upcall does.
 *
 * <p>{@link #main} prints the digest of a fixed seeded workload, so that two JVMs can be compared
 * (the cross-rank guarantee: every rank decides the same).
 */
public final class RandomWorkload {
    /** The (nRanks, nNodes) shapes communicators are opened with. */
    public static final long[][] SHAPES = {{2, 1}, {2, 2}, {4, 1}, {8, 2}, {16, 4}, {3, 3}};

    /** Table shapes, weighted towards NCCL 2.23+'s 7 x 3. */
    static final int[][] TABLE_SHAPES = {
        {7, 3},
        {7, 3},
        {7, 3},
        {7, 3},
        {6, 3},
        {8, 4},
        {1, 1},
        {4, 2},
        {9, 7},
        {10, 7},
        {7, 1},
        {0, 3},
        {7, 0},
        {-1, 3},
        {64, 1},
        {1, 64},
        {65, 1},
        {Integer.MAX_VALUE, 2}
    };

    private RandomWorkload() {}

    // ---- random policies ------------------------------------------------------------------------

    /** A random valid policy as YAML: 1-3 profiles, rules on random grid ranges, 1-4 candidates. */
    public static String randomPolicyYaml(Random r, String name, String mode) {
        StringBuilder y = new StringBuilder("schema: nccl-tuner-java/v1\nname: ")
                .append(name)
                .append("\nmode: ")
                .append(mode)
                .append("\nprofiles:\n");
        int profiles = 1 + r.nextInt(3);
        for (int p = 0; p < profiles; p++) {
            y.append("  - name: p").append(p).append('\n');
            if (p < profiles - 1 || r.nextBoolean()) {
                long[] shape = SHAPES[r.nextInt(SHAPES.length)];
                y.append("    match: {nRanks: ")
                        .append(r.nextBoolean() ? Long.toString(shape[0]) : "{min: 2, max: " + shape[0] + "}")
                        .append(", nNodes: ")
                        .append(r.nextInt(3) == 0 ? "any" : Long.toString(shape[1]))
                        .append("}\n");
            }
            y.append("    rules:\n");
            for (int coll = 0; coll < 5; coll++) {
                if (r.nextInt(10) < 3) {
                    continue;
                }
                TreeSet<Integer> cuts = new TreeSet<>();
                int k = 2 + r.nextInt(6);
                while (cuts.size() < k) {
                    cuts.add(r.nextInt(SizeGrid.bucket(Long.MAX_VALUE) + 1)); // grid points below 2^63
                }
                Integer[] b = cuts.toArray(Integer[]::new);
                boolean openEnd = r.nextInt(3) == 0;
                for (int i = 0; i < b.length - (openEnd ? 0 : 1); i++) {
                    String bytes = "{from: " + SizeGrid.lowerBound(b[i])
                            + (i + 1 < b.length ? ", to: " + SizeGrid.lowerBound(b[i + 1]) : "") + "}";
                    for (String pipe : pipeSplit(r)) {
                        y.append("      - collective: ")
                                .append(new String[] {"Broadcast", "Reduce", "AllGather", "ReduceScatter", "AllReduce"}
                                        [coll])
                                .append("\n        bytes: ")
                                .append(bytes)
                                .append('\n');
                        if (pipe != null) {
                            y.append("        numPipeOps: ").append(pipe).append('\n');
                        }
                        y.append("        candidates:\n");
                        List<Integer> used = new ArrayList<>();
                        int n = 1 + r.nextInt(4);
                        while (used.size() < n) {
                            int ap = r.nextInt(7 * 3);
                            if (used.contains(ap)) {
                                continue;
                            }
                            used.add(ap);
                            y.append("          - {algorithm: ")
                                    .append(Algorithm.ofId(ap / 3))
                                    .append(", protocol: ")
                                    .append(Protocol.ofId(ap % 3));
                            if (r.nextBoolean()) {
                                y.append(", channels: ").append(1 + r.nextInt(64));
                            }
                            y.append(", regret: ")
                                    .append(used.size() == 1 ? "0.0" : String.format("%.3f", r.nextDouble()))
                                    .append("}\n");
                        }
                    }
                }
            }
        }
        return y.toString();
    }

    /** numPipeOps ranges for the rules of one byte range: one rule (null: any) or 2-4 disjoint ones. */
    private static List<String> pipeSplit(Random r) {
        List<String> out = new ArrayList<>();
        if (r.nextInt(10) < 6) {
            out.add(null);
            return out;
        }
        int parts = 2 + r.nextInt(3);
        int lo = 0;
        for (int i = 0; i < parts; i++) {
            if (i == parts - 1) {
                out.add("{min: " + lo + "}");
            } else {
                int hi = lo + r.nextInt(3);
                out.add(lo == hi ? Integer.toString(lo) : "{min: " + lo + ", max: " + hi + "}");
                lo = hi + 1;
            }
        }
        return out;
    }

    static Policy randomPolicy(Random r, String name, Mode mode) {
        String yaml = randomPolicyYaml(r, name, mode.spelling());
        try {
            return PolicyLoader.parse(name + ".yaml", yaml);
        } catch (PolicyException e) {
            throw new AssertionError(
                    "the generator wrote a policy the loader refuses: " + e.getMessage() + "\n" + yaml, e);
        }
    }

    // ---- random calls ---------------------------------------------------------------------------

    /** One getCollInfo call. {@code costs} has numAlgo * numProto entries (none if that is not 1..128). */
    public record Call(int coll, long nBytes, int numPipeOps, int numAlgo, int numProto, float[] costs) {
        public int entries() {
            return numAlgo > 0 && numProto > 0 && (long) numAlgo * numProto <= 128 ? numAlgo * numProto : 0;
        }
    }

    static Call randomCall(Random r) {
        int[] shape = TABLE_SHAPES[r.nextInt(TABLE_SHAPES.length)];
        int coll = r.nextInt(20) == 0 ? r.nextInt(12) - 2 : r.nextInt(6); // mostly 0..5, sometimes out of range
        long nBytes = switch (r.nextInt(20)) {
            case 0 -> 0;
            case 1 -> -1L; // SIZE_MAX
            case 2 -> r.nextLong(); // anywhere in 0 .. 2^64-1
            default -> r.nextLong(1L << (1 + r.nextInt(40)));
        };
        int pipe = r.nextInt(30) == 0 ? (r.nextBoolean() ? -1 : Integer.MAX_VALUE) : r.nextInt(6);
        Call c = new Call(coll, nBytes, pipe, shape[0], shape[1], null);
        float[] costs = new float[c.entries()];
        int pattern = r.nextInt(6); // how many entries are -1
        for (int i = 0; i < costs.length; i++) {
            boolean off = switch (pattern) {
                case 0 -> false;
                case 1 -> true; // every entry -1
                case 2 -> r.nextInt(4) != 0;
                default -> r.nextInt(3) == 0;
            };
            costs[i] = off ? -1f : r.nextInt(40) == 0 ? 0f : 1f + r.nextFloat() * 5000f;
        }
        return new Call(coll, nBytes, pipe, shape[0], shape[1], costs);
    }

    // ---- the oracle -----------------------------------------------------------------------------

    /** What the engine must do: zero entry {@code index} (-1: change nothing) and set nChannels to {@code channels} (0: leave it). */
    public record Expect(int index, int channels) {
        public static final Expect NOTHING = new Expect(-1, 0);
    }

    /**
     * The decision, written from the policy format's rules (docs/policy-format.md), not from the
     * engine's compiled table: the profile's rule covering (collective, nBytes, numPipeOps), found by
     * a linear scan, and its first candidate NCCL offers.
     */
    public static Expect expect(Policy policy, Mode mode, long nRanks, long nNodes, Call c) {
        if (policy == null || mode != Mode.ENFORCE) {
            return Expect.NOTHING;
        }
        Policy.Profile p = policy.profileFor(nRanks, nNodes);
        if (p == null
                || c.numAlgo() <= 0
                || c.numProto() <= 0
                || (long) c.numAlgo() * c.numProto() > Engine.MAX_TABLE_ENTRIES) {
            return Expect.NOTHING;
        }
        for (Policy.Rule rule : p.rules()) {
            if (rule.collective().id() == c.coll()
                    && rule.containsBytes(c.nBytes())
                    && rule.numPipeOps().contains(c.numPipeOps())) {
                for (Policy.Candidate cand : rule.candidates()) {
                    int a = cand.algorithm().id();
                    int q = cand.protocol().id();
                    if (a < c.numAlgo() && q < c.numProto() && c.costs()[a * c.numProto() + q] >= 0f) {
                        return new Expect(a * c.numProto() + q, cand.channels());
                    }
                }
                return Expect.NOTHING;
            }
        }
        return Expect.NOTHING;
    }

    // ---- guarded native memory ------------------------------------------------------------------

    /**
     * A cost table and an nChannels int in native memory, each with guard words on both sides. The
     * engine is handed what the upcall hands it: a 64-float view starting at the table (the floats
     * past numAlgo x numProto are guard too) and a 4-byte nChannels.
     */
    static final class Guarded implements AutoCloseable {
        static final int GUARD = 16;
        static final int GUARD_BITS = 0x7fc0dea1; // a quiet NaN nobody writes by accident
        private final Arena arena = Arena.ofConfined();
        private final MemorySegment all = arena.allocate((GUARD + 128 + GUARD) * 4L, 64);
        final MemorySegment table = all.asSlice(GUARD * 4L, Engine.MAX_TABLE_ENTRIES * 4L);
        private final MemorySegment chAll = arena.allocate(3 * 4L, 4);
        final MemorySegment nChannels = chAll.asSlice(4, 4);
        private int n;

        void load(Call c) {
            n = c.entries();
            for (long i = 0; i < all.byteSize() / 4; i++) {
                all.setAtIndex(JAVA_INT, i, GUARD_BITS);
            }
            for (int i = 0; i < n; i++) {
                all.setAtIndex(JAVA_FLOAT, GUARD + i, c.costs()[i]);
            }
            chAll.setAtIndex(JAVA_INT, 0, GUARD_BITS);
            chAll.setAtIndex(JAVA_INT, 1, 0);
            chAll.setAtIndex(JAVA_INT, 2, GUARD_BITS);
        }

        /** @return null if no guard word changed, else where */
        String brokenGuard() {
            for (int i = 0; i < GUARD; i++) {
                if (all.getAtIndex(JAVA_INT, i) != GUARD_BITS) {
                    return "float " + (i - GUARD) + " before the table";
                }
            }
            for (long i = GUARD + n; i < all.byteSize() / 4; i++) {
                if (all.getAtIndex(JAVA_INT, i) != GUARD_BITS) {
                    return "float " + (i - GUARD) + " past the " + n + "-entry table";
                }
            }
            if (chAll.getAtIndex(JAVA_INT, 0) != GUARD_BITS || chAll.getAtIndex(JAVA_INT, 2) != GUARD_BITS) {
                return "an int beside nChannels";
            }
            return null;
        }

        float entry(int i) {
            return all.getAtIndex(JAVA_FLOAT, GUARD + i);
        }

        int nChannels() {
            return nChannels.get(JAVA_INT, 0);
        }

        /** FNV-1a over the table's bits after the call and nChannels. */
        long hash() {
            long h = 0xcbf29ce484222325L;
            for (int i = 0; i < n; i++) {
                h = (h ^ all.getAtIndex(JAVA_INT, GUARD + i)) * 0x100000001b3L;
            }
            return (h ^ nChannels()) * 0x100000001b3L;
        }

        @Override
        public void close() {
            arena.close();
        }
    }

    // ---- the fixed workload for digests ---------------------------------------------------------

    static final TunerLog QUIET = (logger, level, message) -> {};

    /** All of memory, as the getCollInfo upcall reads NCCL's table and nChannels (by address). */
    static final MemorySegment ALL = MemorySegment.NULL.reinterpret(Long.MAX_VALUE);

    /**
     * Calls the engine as the plugin does, alternating between its two entry forms: odd calls by
     * address through one all-memory segment (the upcall's form), even calls with sized segments.
     */
    static void call(Engine e, long handle, Call c, Guarded g, long k) {
        if ((k & 1) != 0) {
            e.getCollInfo(
                    handle,
                    c.coll(),
                    c.nBytes(),
                    c.numPipeOps(),
                    ALL,
                    g.table.address(),
                    c.numAlgo(),
                    c.numProto(),
                    -1,
                    ALL,
                    g.nChannels.address());
        } else {
            e.getCollInfo(
                    handle, c.coll(), c.nBytes(), c.numPipeOps(), g.table, c.numAlgo(), c.numProto(), g.nChannels);
        }
    }

    /**
     * Runs {@code policies} random enforce-mode policies with {@code callsPerPolicy} random calls
     * each (seeded), on one thread, and returns the FNV digest of every call's result in order.
     */
    static long digest(long seed, int policies, int callsPerPolicy) {
        long d = 0xcbf29ce484222325L;
        try (Guarded g = new Guarded()) {
            for (int p = 0; p < policies; p++) {
                Random r = new Random(seed * 1_000_003L + p);
                Policy policy = randomPolicy(r, "digest" + p, Mode.ENFORCE);
                Engine e = new Engine(policy, Mode.ENFORCE, QUIET, null);
                long[] handles = new long[SHAPES.length];
                for (int s = 0; s < SHAPES.length; s++) {
                    handles[s] = e.init(SHAPES[s][0], SHAPES[s][1], MemorySegment.NULL);
                }
                for (int i = 0; i < callsPerPolicy; i++) {
                    Call c = randomCall(r);
                    g.load(c);
                    call(e, handles[r.nextInt(handles.length)], c, g, i);
                    d = (d ^ g.hash()) * 0x100000001b3L;
                }
            }
        }
        return d;
    }

    /** {@code java ... io.nccltuner.reliability.RandomWorkload SEED POLICIES CALLS}: prints the digest. */
    public static void main(String[] args) {
        long d = digest(Long.parseLong(args[0]), Integer.parseInt(args[1]), Integer.parseInt(args[2]));
        System.out.println("digest=" + Long.toHexString(d));
    }
}
