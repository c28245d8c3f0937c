package io.nccltuner.jmh;

import static java.lang.foreign.ValueLayout.JAVA_INT;

import io.nccltuner.engine.DecisionTable;
import io.nccltuner.engine.Engine;
import io.nccltuner.policy.Mode;
import io.nccltuner.policy.Policy;
import io.nccltuner.policy.PolicyLoader;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The Java side of the hot path without the FFM upcall: {@link DecisionTable#find} alone, and
 * {@link Engine#getCollInfo} (enforce) over native cost tables, cycling through the get rows of the
 * captured traces as the C bench driver does. {@code resetOnly} is the per-op cost-table reset that
 * {@code engineGetCollInfo} also pays (the driver does it outside its timer); subtract it.
 * Run with {@code -prof gc} for bytes allocated per op ({@code gc.alloc.rate.norm}).
 */
@BenchmarkMode(org.openjdk.jmh.annotations.Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(
        value = 1,
        jvmArgsAppend = {"-XX:+UseSerialGC", "-Xms8m", "-Xmx64m", "--enable-native-access=ALL-UNNAMED"})
@State(Scope.Thread)
public class LookupBenchmark {
    /** Policy file, relative to the repository root (-Dnccltj.repo). */
    @Param("policies/h200-2rank.yaml")
    public String policy;

    private Arena arena;
    private TraceRows rows;
    private DecisionTable table;
    private Engine engine;
    private long handle;
    private MemorySegment work;
    private MemorySegment nChannels;
    private int i;

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        Path repo = TraceRows.repo();
        Policy p = PolicyLoader.load(repo.resolve(policy));
        arena = Arena.ofShared();
        rows = TraceRows.load(repo.resolve("tests/traces"), -1, arena);
        table = DecisionTable.compile(p.profileFor(2, 2));
        engine = new Engine(p, Mode.ENFORCE, (logger, level, message) -> {}, null);
        handle = engine.init(2, 2, MemorySegment.NULL);
        work = arena.allocate((long) Engine.MAX_TABLE_ENTRIES * Float.BYTES, 64);
        nChannels = arena.allocate(JAVA_INT);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        engine.destroy(handle);
        arena.close();
    }

    private int next() {
        int k = i + 1;
        if (k == rows.n) {
            k = 0;
        }
        i = k;
        return k;
    }

    private void reset(int k) {
        MemorySegment.copy(
                rows.costs,
                (long) k * TraceRows.ROW_FLOATS * Float.BYTES,
                work,
                0,
                (long) rows.numAlgo[k] * rows.numProto[k] * Float.BYTES);
        nChannels.set(JAVA_INT, 0, 0);
    }

    /** DecisionTable.find alone: bucket, head, chain, numPipeOps check. */
    @Benchmark
    public int find() {
        int k = next();
        return table.find(rows.coll[k], rows.nBytes[k], rows.numPipeOps[k]);
    }

    /** The cost-table reset (copy of one trace row, nChannels = 0): the baseline of the next one. */
    @Benchmark
    public void resetOnly() {
        reset(next());
    }

    /** Reset plus Engine.getCollInfo in enforce mode: what the upcall target does per call. */
    @Benchmark
    public void engineGetCollInfo() {
        int k = next();
        reset(k);
        engine.getCollInfo(
                handle,
                rows.coll[k],
                rows.nBytes[k],
                rows.numPipeOps[k],
                work,
                rows.numAlgo[k],
                rows.numProto[k],
                nChannels);
    }
}
