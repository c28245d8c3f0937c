package io.nccltuner.it;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nccltuner.trace.TraceCall;
import io.nccltuner.trace.TraceFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Record mode through the built plugin: the harness replays a captured NCCL 2.28.9 trace with
 * NCCL_TUNER_JAVA_RECORD set; the recorded file must hold the same calls, field by field (the
 * cost table as NCCL passed it, before the policy edited it), and replaying the recording must
 * give the same decisions as replaying the original.
 */
@Timeout(180)
class RecordModeIT {
    @TempDir
    Path tmp;

    @BeforeAll
    static void built() {
        Harness.requireBuilt();
    }

    @ParameterizedTest(name = "{0} with policy {1} in mode {2}")
    @CsvSource({
        "fsdp, h200-2rank.yaml, enforce",
        "tp_infer, channel-override.yaml, shadow",
        "coalesced, -, off",
        "sweep, -, -"
    })
    void recordingReplaysToTheSameCallsAndDecisions(String workload, String policyFile, String mode) throws Exception {
        Path trace = Harness.TRACES.resolve("trace_" + workload + ".csv");
        Map<String, String> env = new HashMap<>();
        if (!policyFile.equals("-")) {
            env.put(
                    "NCCL_TUNER_JAVA_POLICY",
                    Harness.REPO.resolve("policies").resolve(policyFile).toString());
        }
        if (!mode.equals("-")) {
            env.put("NCCL_TUNER_JAVA_MODE", mode);
        }
        Map<String, String> recording = new HashMap<>(env);
        recording.put("NCCL_TUNER_JAVA_RECORD", tmp.resolve("rec-%h-%p.csv").toString());
        Harness.Result original = Harness.replay(recording, trace);
        assertEquals(0, original.exit(), original.text());
        assertTrue(original.warnings().isEmpty(), original.warnings().toString());
        List<Path> files;
        try (var s = Files.list(tmp)) {
            files = s.filter(p -> p.getFileName().toString().startsWith("rec-")).toList();
        }
        assertEquals(1, files.size(), files.toString());
        Path rec = files.getFirst();
        assertEquals(1, original.grep("recording every tuner call to " + rec).size(), original.text());

        TraceFile want = TraceFile.read(trace);
        TraceFile got = TraceFile.read(rec);
        assertEquals(want.events().size(), got.events().size(), "init, get and destroy rows");
        for (int i = 0; i < want.events().size(); i++) {
            TraceFile.Event w = want.events().get(i);
            TraceFile.Event g = got.events().get(i);
            String at = rec + " row " + i + " vs " + trace + ":" + w.line();
            assertEquals(w.getClass(), g.getClass(), at);
            switch (w) {
                case TraceFile.Init wi -> {
                    TraceFile.Init gi = (TraceFile.Init) g;
                    assertEquals(
                            List.of(wi.comm(), wi.nRanks(), wi.nNodes()),
                            List.of(gi.comm(), gi.nRanks(), gi.nNodes()),
                            at);
                }
                case TraceFile.Destroy wd -> assertEquals(wd.comm(), ((TraceFile.Destroy) g).comm(), at);
                case TraceFile.Get wg -> {
                    TraceCall a = wg.call();
                    TraceCall b = ((TraceFile.Get) g).call();
                    assertEquals(a.comm(), b.comm(), at + " comm");
                    assertEquals(a.nRanks(), b.nRanks(), at + " nRanks");
                    assertEquals(a.nNodes(), b.nNodes(), at + " nNodes");
                    assertEquals(a.collective(), b.collective(), at + " collective");
                    assertEquals(a.nBytes(), b.nBytes(), at + " nBytes");
                    assertEquals(a.numPipeOps(), b.numPipeOps(), at + " numPipeOps");
                    assertEquals(a.numAlgo(), b.numAlgo(), at + " numAlgo");
                    assertEquals(a.numProto(), b.numProto(), at + " numProto");
                    assertEquals(a.nChannelsIn(), b.nChannelsIn(), at + " nChannelsIn");
                    assertArrayEquals(a.costs(), b.costs(), at + " cost table");
                }
            }
        }
        int rows = want.events().size();
        assertTrue(
                original.grep("record " + rec + ": " + rows + " rows written").size() >= 1, original.text());

        Harness.Result replayed = Harness.replay(env, rec);
        assertEquals(0, replayed.exit(), replayed.text());
        assertEquals(original.selections(), replayed.selections(), "the recording replays to the same decisions");
        assertEquals(
                original.summary().replaceAll("us_per_call=\\S+", ""),
                replayed.summary().replaceAll("us_per_call=\\S+", ""));
    }
}
