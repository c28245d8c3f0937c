package io.nccltuner.ffm;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nccltuner.policy.Collective;
import io.nccltuner.trace.TraceCall;
import io.nccltuner.trace.TraceFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * AotTraining's getCollInfo calls reach the engine with the trace's fields: it lays out an
 * nccltj_get_t of its own (bridge 11) and calls the real upcall stub, so a field it fills wrongly
 * (or not at all) trains the cache on calls the shim never makes, and a field Upcalls reads from
 * the wrong place shows here too. Record mode ({@code NCCL_TUNER_JAVA_RECORD}) writes every call
 * as the upcall read it, in the trace format; the training's run is a JVM of its own, since it
 * starts the engine.
 */
class AotTrainingCallsTest {
    /**
     * Two communicators: an AllGather over 6 GiB (past 32 bits) with numPipeOps 3 on a 7 x 3 table,
     * and an AllReduce on a 6 x 3 one, each cost distinct.
     */
    private static final String TRACE = """
            # event,comm,nRanks,nNodes,coll,nBytes,numPipeOps,numAlgo,numProto,nChannelsIn,costs(algo-major)
            init,0,8,2
            get,0,8,2,2,6442450944,3,7,3,0,11.5,12.5,13.5,-1,-1,-1,21.25,22.25,23.25,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,31.75
            destroy,0
            init,1,4,1
            get,1,4,1,4,1048576,1,6,3,0,41.5,42.5,-1,-1,44.5,45.5,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,46.5
            destroy,1
            """;

    @Test
    void trainingCallsReachTheEngineAsTheTraceHasThem(@TempDir Path tmp) throws Exception {
        Path trace = tmp.resolve("trace.csv");
        Files.writeString(trace, TRACE);
        Path rec = tmp.resolve("recorded.csv");
        ProcessBuilder pb = new ProcessBuilder(
                        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                        "--enable-native-access=ALL-UNNAMED",
                        "-cp",
                        System.getProperty("java.class.path"),
                        "io.nccltuner.ffm.AotTraining",
                        trace.toString())
                .redirectErrorStream(true);
        pb.environment().keySet().removeIf(k -> k.startsWith("NCCL_TUNER_JAVA_"));
        pb.environment().put("NCCL_TUNER_JAVA_RECORD", rec.toString());
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(120, TimeUnit.SECONDS), out);
        assertEquals(0, p.exitValue(), out);
        assertTrue(out.contains("AotTraining: 400 calls replayed"), out);

        List<TraceCall> want = TraceFile.read(trace).calls();
        List<TraceCall> got = TraceFile.read(rec).calls();
        assertEquals(400, got.size(), "getCollInfo calls recorded (200 rounds of 2)");
        assertEquals(Collective.AllGather, want.get(0).collective());
        assertEquals(Collective.AllReduce, want.get(1).collective());
        for (int i = 0; i < got.size(); i++) {
            TraceCall w = want.get(i % 2);
            TraceCall g = got.get(i);
            String at = "recorded call " + i + " (line " + g.line() + ")";
            assertEquals(i, g.comm(), at + ": each init a communicator of its own");
            assertEquals(w.nRanks(), g.nRanks(), at);
            assertEquals(w.nNodes(), g.nNodes(), at);
            assertEquals(w.collective(), g.collective(), at);
            assertEquals(w.nBytes(), g.nBytes(), at);
            assertEquals(w.numPipeOps(), g.numPipeOps(), at);
            assertEquals(w.numAlgo(), g.numAlgo(), at);
            assertEquals(w.numProto(), g.numProto(), at);
            assertArrayEquals(w.costs(), g.costs(), at);
        }
    }
}
