package io.nccltuner.it;

import io.nccltuner.engine.DecisionLog;
import io.nccltuner.engine.Engine;
import io.nccltuner.engine.TunerLog;
import io.nccltuner.policy.Mode;
import io.nccltuner.policy.Policy;
import java.lang.foreign.MemorySegment;

/**
 * A fault injected from the test side: the plugin builds this engine in place of its own when the
 * test passes {@code -Dnccltj.engine=io.nccltuner.it.ThrowingEngine} (NCCL_TUNER_JAVA_OPTS) with
 * the test classes on NCCL_TUNER_JAVA_CLASSPATH. {@code -Dnccltj.test.throwIn=init|getCollInfo|getChunkSize|destroy}
 * names the entry point that throws, to prove the upcalls contain it.
 */
public class ThrowingEngine extends Engine {
    private final String throwIn = System.getProperty("nccltj.test.throwIn", "");

    /** The plugin's engine constructor, as {@code ffm.PluginConfig} calls it. */
    public ThrowingEngine(Policy policy, Mode mode, TunerLog log, DecisionLog decisionLog) {
        super(policy, mode, log, decisionLog);
    }

    /**
     * The options and class path that make the plugin use this engine.
     *
     * @param entry the entry point to throw in
     * @return NCCL_TUNER_JAVA_OPTS and NCCL_TUNER_JAVA_CLASSPATH values
     */
    public static java.util.Map<String, String> environment(String entry) {
        String testClasses = java.nio.file.Path.of(System.getProperty("nccltj.repo"), "java-policy/target/test-classes")
                .toAbsolutePath()
                .normalize()
                .toString();
        return java.util.Map.of(
                "NCCL_TUNER_JAVA_OPTS",
                        "-Dnccltj.engine=" + ThrowingEngine.class.getName() + " -Dnccltj.test.throwIn=" + entry,
                "NCCL_TUNER_JAVA_CLASSPATH", Harness.JAR + ":" + testClasses);
    }

    /** The entry points the plugin calls (every tuner version goes through these). */
    @Override
    public synchronized long init(
            long nRanks,
            long nNodes,
            MemorySegment ncclLogger,
            io.nccltuner.policy.Signature sig,
            MemorySegment constants) {
        if (throwIn.equals("init")) {
            throw new IllegalStateException("test hook: exception in init");
        }
        return super.init(nRanks, nNodes, ncclLogger, sig, constants);
    }

    @Override
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
        if (throwIn.equals("getCollInfo")) {
            throw new IllegalStateException("test hook: exception in getCollInfo");
        }
        return super.getCollInfo(
                handle, collType, nBytes, numPipeOps, mem, costTable, numAlgo, numProto, regBuff, chMem, nChannels);
    }

    @Override
    public void getChunkSize(
            long handle,
            int collType,
            long nBytes,
            int algorithm,
            int protocol,
            int nChannels,
            MemorySegment mem,
            long chunkSize) {
        if (throwIn.equals("getChunkSize")) {
            throw new IllegalStateException("test hook: exception in getChunkSize");
        }
        super.getChunkSize(handle, collType, nBytes, algorithm, protocol, nChannels, mem, chunkSize);
    }

    @Override
    public synchronized String destroy(long handle) {
        if (throwIn.equals("destroy")) {
            throw new IllegalStateException("test hook: exception in destroy");
        }
        return super.destroy(handle);
    }
}
