package io.nccltuner.calibrate;

import static java.lang.foreign.ValueLayout.JAVA_DOUBLE;
import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import io.nccltuner.engine.Decision;
import io.nccltuner.engine.Engine;
import io.nccltuner.engine.TunerLog;
import io.nccltuner.model.AlgoProto;
import io.nccltuner.policy.Algorithm;
import io.nccltuner.policy.Collective;
import io.nccltuner.policy.Mode;
import io.nccltuner.policy.Policy;
import io.nccltuner.policy.Protocol;
import io.nccltuner.policy.Signature;
import io.nccltuner.policy.TunerConstant;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A calibrated policy's decisions at any shape, as NCCL 2.28.9 and the plugin make them: the
 * plugin's {@link Engine} is opened at the shape (tuner v5, with a native {@code
 * ncclTunerConstants_v5_t} holding NCCL's defaults, which the engine edits with the matching
 * profile's {@code constants:} in enforce mode), the constants it leaves are read back, and NCCL's
 * cost table is computed from them with {@link TuneModel} (Ring and Tree; the other algorithms are
 * not modelled, -1). Per call the engine then sees that table: where a measured rule of the profile
 * covers the size, it zeroes the rule's first offered candidate, so NCCL's strict-minimum selection
 * runs the rule's pick; elsewhere NCCL runs the calibrated model's own pick. So the rules apply over
 * the calibrated table, and the constants decide everywhere no rule covers (docs/policy-format.md).
 *
 * <p>NCCL's default pick is the same model at NCCL's default constants ({@link
 * ModelConstants#defaults()}).
 */
public final class ModelDecisions implements AutoCloseable {
    /** The tuner version NCCL 2.28.9 uses with this plugin: the one that passes constants. */
    public static final int TUNER_VERSION = 5;

    private static final int NUM_ALGO = Algorithm.values().length;
    private static final int NUM_PROTO = Protocol.values().length;

    /**
     * One size.
     *
     * @param collective the collective
     * @param nBytes bytes as NCCL passes them to the tuner
     * @param times predicted microseconds with the constants the engine left, per entry NCCL offers
     *     (Ring and Tree with a bandwidth), in NCCL's algorithm-major order
     * @param defaultTimes the same at NCCL's default constants
     * @param ncclDefault NCCL's pick at its default constants, or null when none is offered
     * @param calibrated NCCL's pick with the constants the engine left (the calibrated model)
     * @param arm the engine's arm ({@link Decision#ARM_UNRULED}: no rule covers the size; {@link
     *     Decision#ARM_POLICY}: a rule does and its candidate was written; {@link
     *     Decision#ARM_NOT_OFFERED}: a rule does but NCCL offers none of its candidates)
     * @param rulePick the rule's candidate the engine chose (where arm is ARM_POLICY), else null
     * @param channels the rule's channel count, 0 = NCCL decides
     * @param runs what NCCL runs: its strict minimum over the table after the engine's edit
     */
    public record Row(
            Collective collective,
            long nBytes,
            Map<AlgoProto, Double> times,
            Map<AlgoProto, Double> defaultTimes,
            AlgoProto ncclDefault,
            AlgoProto calibrated,
            int arm,
            AlgoProto rulePick,
            int channels,
            AlgoProto runs) {
        /** @return whether a rule of the profile covers the size */
        public boolean ruled() {
            return arm != Decision.ARM_UNRULED;
        }
    }

    private final Engine engine;
    private final long handle;
    private final Arena arena = Arena.ofConfined();
    private final List<String> log = new ArrayList<>();
    private final Policy.Profile profile;
    private final ModelConstants constants;
    private final TuneModel model;
    private final TuneModel defaults;
    private final MemorySegment table;
    private final MemorySegment channels;

    private ModelDecisions(Policy policy, Mode mode, Topology atShape, Signature sig) {
        Signature s = new Signature(
                TUNER_VERSION,
                sig.commId(),
                sig.nNvlDomains(),
                sig.minRanksPerNvlDomain(),
                sig.maxRanksPerNvlDomain(),
                sig.ncclVersion(),
                sig.gpuName(),
                sig.ccMajor(),
                sig.ccMinor());
        this.profile = policy.profileFor(atShape.nRanks(), atShape.nNodes(), s, new ArrayList<>());
        MemorySegment k = arena.allocate(TunerConstant.structBytes(TUNER_VERSION), 8);
        List<Long> offsets = new ArrayList<>();
        for (int i = 0; i < ModelConstants.SIZE; i++) {
            long at = TunerConstant.parse(ModelConstants.name(i), 0).byteOffset(TUNER_VERSION);
            offsets.add(at);
            k.set(JAVA_DOUBLE, at, ModelConstants.defaults().get(i));
        }
        this.engine = new Engine(
                policy, mode, (l, level, m) -> log.add((level == TunerLog.WARN ? "WARN " : "INFO ") + m), null);
        this.handle = engine.init(atShape.nRanks(), atShape.nNodes(), MemorySegment.NULL, s, k);
        ModelConstants left = ModelConstants.defaults();
        for (int i = 0; i < ModelConstants.SIZE; i++) {
            double v = k.get(JAVA_DOUBLE, offsets.get(i));
            if (v != left.get(i)) {
                left = left.with(i, v);
            }
        }
        this.constants = left;
        this.model = TuneModel.of(atShape, left);
        this.defaults = TuneModel.of(atShape, ModelConstants.defaults());
        this.table = arena.allocate(JAVA_FLOAT, (long) NUM_ALGO * NUM_PROTO);
        this.channels = arena.allocate(JAVA_INT);
    }

    /**
     * Opens the engine at a shape.
     *
     * @param policy the policy
     * @param mode the mode to run it in (constants are set in enforce mode only)
     * @param atShape the topology at the shape to predict ({@link Topology#atShape})
     * @param sig the hardware the profiles are matched against (its tuner version is replaced by 5)
     * @return the decisions
     */
    public static ModelDecisions open(Policy policy, Mode mode, Topology atShape, Signature sig) {
        return new ModelDecisions(policy, mode, atShape, sig);
    }

    /** @return the profile that matches, or null */
    public Policy.Profile profile() {
        return profile;
    }

    /** @return the constants NCCL computes its tables from after the engine's init */
    public ModelConstants constants() {
        return constants;
    }

    /** @return the calibrated model at the shape (the constants the engine left) */
    public TuneModel model() {
        return model;
    }

    /** @return the engine's INFO/WARN lines so far ("INFO ...", "WARN ...") */
    public List<String> log() {
        return List.copyOf(log);
    }

    /** @return Ring and Tree entries in NCCL's algorithm-major order */
    public static List<AlgoProto> modelled() {
        List<AlgoProto> out = new ArrayList<>();
        for (Algorithm a : new Algorithm[] {Algorithm.TREE, Algorithm.RING}) {
            for (Protocol p : Protocol.values()) {
                out.add(new AlgoProto(a, p));
            }
        }
        return out;
    }

    /**
     * The decisions at one size.
     *
     * @param c collective
     * @param nBytes bytes
     * @param numPipeOps pipelined operations, >= 1
     * @return the row
     */
    public Row row(Collective c, long nBytes, int numPipeOps) {
        Map<AlgoProto, Double> times = times(model, c, nBytes, numPipeOps);
        Map<AlgoProto, Double> def = times(defaults, c, nBytes, numPipeOps);
        for (int e = 0; e < NUM_ALGO * NUM_PROTO; e++) {
            table.setAtIndex(JAVA_FLOAT, e, -1f);
        }
        times.forEach((ap, t) -> table.setAtIndex(JAVA_FLOAT, ap.index(NUM_PROTO), (float) (double) t));
        AlgoProto calibrated = min(table);
        channels.set(JAVA_INT, 0, 0);
        int code =
                engine.getCollInfo(handle, c.id(), nBytes, numPipeOps, table, 0L, NUM_ALGO, NUM_PROTO, 0, channels, 0L);
        int arm = Decision.arm(code);
        AlgoProto rule = null;
        if (arm == Decision.ARM_POLICY) {
            int e = Decision.candidate(code);
            rule = new AlgoProto(Algorithm.ofId(e / NUM_PROTO), Protocol.ofId(e % NUM_PROTO));
        }
        return new Row(c, nBytes, times, def, pick(def), calibrated, arm, rule, channels.get(JAVA_INT, 0), min(table));
    }

    private static Map<AlgoProto, Double> times(TuneModel m, Collective c, long nBytes, int numPipeOps) {
        Map<AlgoProto, Double> out = new LinkedHashMap<>();
        for (AlgoProto ap : modelled()) {
            double t = m.time(c, ap, nBytes, numPipeOps);
            if (t >= 0) {
                out.put(ap, t);
            }
        }
        return out;
    }

    /** NCCL's strict minimum over the offered entries, algorithm-major, on float costs as NCCL holds them. */
    private static AlgoProto pick(Map<AlgoProto, Double> times) {
        AlgoProto best = null;
        float min = Float.POSITIVE_INFINITY;
        for (var e : times.entrySet()) {
            float t = (float) (double) e.getValue();
            if (t < min) {
                min = t;
                best = e.getKey();
            }
        }
        return best;
    }

    private static AlgoProto min(MemorySegment table) {
        AlgoProto best = null;
        float min = Float.POSITIVE_INFINITY;
        for (int e = 0; e < NUM_ALGO * NUM_PROTO; e++) {
            float t = table.getAtIndex(JAVA_FLOAT, e);
            if (t >= 0 && t < min) {
                min = t;
                best = new AlgoProto(Algorithm.ofId(e / NUM_PROTO), Protocol.ofId(e % NUM_PROTO));
            }
        }
        return best;
    }

    /** Destroys the communicator and frees the native memory. */
    @Override
    public void close() {
        engine.destroy(handle);
        arena.close();
    }
}
