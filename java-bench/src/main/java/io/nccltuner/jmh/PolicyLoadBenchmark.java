package io.nccltuner.jmh;

import io.nccltuner.engine.DecisionTable;
import io.nccltuner.policy.Policy;
import io.nccltuner.policy.PolicyLoader;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * YAML load (parse, bind, validate) plus compile of the profile a two-rank communicator matches,
 * for the generated 10,000-rule policy ({@code -Dnccltj.bench.policies=DIR}, written by
 * {@link GenPolicies}); and the compile step alone. Warm (steady-state JIT) figures; the cold
 * first load is part of the start-up measurement of {@code make bench}.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 5, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(
        value = 1,
        jvmArgsAppend = {"-XX:+UseSerialGC", "-Xmx512m"})
@State(Scope.Benchmark)
public class PolicyLoadBenchmark {
    /** Policy file name in the generated-policies directory. */
    @Param("rules-10000.yaml")
    public String policy;

    private Path path;
    private Policy.Profile profile;

    @Setup
    public void setUp() throws Exception {
        path = Path.of(System.getProperty("nccltj.bench.policies", "build/bench/policies"))
                .resolve(policy);
        profile = PolicyLoader.load(path).profileFor(2, 2);
    }

    /** PolicyLoader.load plus DecisionTable.compile of the matched profile. */
    @Benchmark
    public DecisionTable loadAndCompile() throws Exception {
        return DecisionTable.compile(PolicyLoader.load(path).profileFor(2, 2));
    }

    /** DecisionTable.compile alone (including its SHA-256). */
    @Benchmark
    public DecisionTable compileOnly() {
        return DecisionTable.compile(profile);
    }
}
