package io.nccltuner.reliability.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.nccltuner.it.Harness;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the profiler measures, end to end through the built library: profiler_hostile --case
 * measure (tests/reliability/profiler_hostile.c) replays a fixed stream of getCollInfo, Coll and
 * KernelCh events with known GPU timestamps, in enforce mode with policies/h200-2rank.yaml, and
 * this test checks the decision log's measured and profiled lines field by field: the join (oldest
 * covering decision, AllGather bytes times nRanks), the decoded decision (numProto 2 and 3), the
 * device time (earliest start to latest stop), the histogram bucket, the counts.
 */
@Timeout(120)
class ProfilerMeasureIT {
    static final Path BIN = Harness.BUILD.resolve("tests/reliability/profiler_hostile");

    @TempDir
    Path dir;

    @Test
    void measuredLinesAreExact() throws Exception {
        Harness.requireBuilt();
        Path report = dir.resolve("report");
        Path log = dir.resolve("log.jsonl");
        List<String> cmd = List.of(
                BIN.toString(),
                "--plugin",
                Harness.PLUGIN.toString(),
                "--case",
                "measure",
                "--report",
                report.toString());
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.environment().keySet().removeIf(k -> k.startsWith("NCCL_") || k.startsWith("JAVA_"));
        pb.environment()
                .putAll(Map.of(
                        "NCCL_TUNER_JAVA_HOME",
                        Harness.JAVA_HOME,
                        "NCCL_TUNER_JAVA_POLICY",
                        HostileHost.POLICY.toString(),
                        "NCCL_TUNER_JAVA_MODE",
                        "enforce",
                        "NCCL_TUNER_JAVA_LOG",
                        log.toString()));
        Harness.Result r = Harness.waitFor(pb, cmd, 60);
        String rep = Files.exists(report) ? Files.readString(report) : "";
        assertEquals(0, r.exit(), rep + r.lines());
        assertTrue(r.lines().isEmpty(), "output on fd 1/2: " + r.lines());

        ObjectMapper json = new ObjectMapper();
        Map<String, JsonNode> series = new TreeMap<>();
        JsonNode profiled = null;
        for (String l : Files.readAllLines(log)) {
            JsonNode n = json.readTree(l);
            if (n.path("type").asText().equals("measured")) {
                String key = n.get("collective").asText() + " "
                        + n.get("bucket").asText() + " " + n.get("arm").asText();
                assertTrue(series.put(key, n) == null, "two series " + key);
            } else if (n.path("type").asText().equals("profiled")) {
                profiled = n;
            }
        }
        List<String> keys = new ArrayList<>(series.keySet());
        assertEquals(
                List.of(
                        "AllGather [512 KiB, 640 KiB) unruled",
                        "AllGather [8 KiB, 10 KiB) unruled",
                        "AllReduce [4 KiB, 5 KiB) policy",
                        "Broadcast [8 KiB, 10 KiB) unruled",
                        "Broadcast null unjoined"),
                keys,
                series.toString());

        JsonNode ar = series.get("AllReduce [4 KiB, 5 KiB) policy");
        assertEquals("RING/LL128", ar.get("decided").asText(), "decided (7x3 and 7x2 tables): " + ar);
        assertEquals("RING/LL128", ar.get("executed").asText());
        assertTrue(ar.get("asDecided").asBoolean(), ar.toString());
        assertEquals(20, ar.get("count").asLong(), ar.toString());
        assertEquals(20, ar.get("timed").asLong(), ar.toString());
        assertEquals(2, ar.get("kernelChannels").asInt());
        assertEquals(5.0, ar.get("minUs").asDouble(), 1e-9, ar.toString());
        assertEquals(20.0, ar.get("maxUs").asDouble(), 1e-9, ar.toString());
        assertEquals(250.0, ar.get("sumUs").asDouble(), 1e-9, ar.toString());
        // 5000 ns: octave 2^12, sixteenth 3 -> bucket 1 + 4 * 16 + 3; 20000 ns: 1 + 6 * 16 + 3.
        assertEquals("[[68,10],[100,10]]", ar.get("hist").toString());
        // p50: rank ceil(0.5 * 20) = 10 -> bucket 68, [4864, 5120) ns, midpoint 4.992 us; p95 -> bucket 100.
        assertEquals(4.992, ar.get("p50Us").asDouble(), 1e-9, ar.toString());
        assertEquals(19.968, ar.get("p95Us").asDouble(), 1e-9, ar.toString());

        for (String k : List.of("AllGather [512 KiB, 640 KiB) unruled", "AllGather [8 KiB, 10 KiB) unruled")) {
            assertEquals(5, series.get(k).get("count").asLong(), k + ": " + series);
            assertEquals(3.0, series.get(k).get("minUs").asDouble(), 1e-9);
        }
        assertEquals(
                1, series.get("Broadcast [8 KiB, 10 KiB) unruled").get("count").asLong());
        assertEquals(1, series.get("Broadcast null unjoined").get("count").asLong());

        assertTrue(profiled != null, "no profiled line");
        assertEquals(32, profiled.get("collectives").asLong());
        assertEquals(1, profiled.get("unjoined").asLong());
        assertEquals(0, profiled.get("untimed").asLong());
        assertTrue(profiled.get("joined").asBoolean());
    }

    /**
     * profiler_hostile --case decode under NCCL_TUNER_JAVA_FORCE=COLLNET_DIRECT/LL128: a decision
     * made on a 7x2 table (numProto 2) names entry 5, NCCL_ALGO_COLLNET_DIRECT * 2 + NCCL_PROTO_LL128,
     * which the profiler decodes by the call's numProto (not NCCL_NUM_PROTOCOLS) as
     * COLLNET_DIRECT/LL128, the configuration NCCL executed; and a 5 s collective (above
     * 2^(8 + 24) ns) lands in the histogram's last bucket, NCCLTJ_HIST_BUCKETS - 1 = 385.
     */
    @Test
    void decisionOfANumProto2TableAndTheLastHistogramBucket() throws Exception {
        Harness.requireBuilt();
        Path report = dir.resolve("decode.report");
        Path log = dir.resolve("decode.jsonl");
        List<String> cmd = List.of(
                BIN.toString(),
                "--plugin",
                Harness.PLUGIN.toString(),
                "--case",
                "decode",
                "--report",
                report.toString());
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.environment().keySet().removeIf(k -> k.startsWith("NCCL_") || k.startsWith("JAVA_"));
        pb.environment()
                .putAll(Map.of(
                        "NCCL_TUNER_JAVA_HOME",
                        Harness.JAVA_HOME,
                        "NCCL_TUNER_JAVA_FORCE",
                        "COLLNET_DIRECT/LL128",
                        "NCCL_TUNER_JAVA_MODE",
                        "enforce",
                        "NCCL_TUNER_JAVA_LOG",
                        log.toString()));
        Harness.Result r = Harness.waitFor(pb, cmd, 60);
        String rep = Files.exists(report) ? Files.readString(report) : "";
        assertEquals(0, r.exit(), rep + r.lines());

        ObjectMapper json = new ObjectMapper();
        Map<String, JsonNode> measured = new TreeMap<>();
        for (String l : Files.readAllLines(log)) {
            JsonNode n = json.readTree(l);
            if (n.path("type").asText().equals("measured")) {
                assertTrue(measured.put(n.get("collective").asText(), n) == null, "two series: " + l);
            }
        }
        assertEquals(List.of("AllReduce", "Broadcast"), List.copyOf(measured.keySet()), measured.toString());

        JsonNode ar = measured.get("AllReduce");
        assertEquals("policy", ar.get("arm").asText(), ar.toString());
        assertEquals("COLLNET_DIRECT/LL128", ar.get("decided").asText(), "decided on a 7x2 table: " + ar);
        assertEquals("COLLNET_DIRECT/LL128", ar.get("executed").asText(), ar.toString());
        assertTrue(ar.get("asDecided").asBoolean(), ar.toString());
        assertEquals(10, ar.get("count").asLong(), ar.toString());
        // 1000 ns: octave 2^9, sixteenth 15 -> bucket 1 + 1 * 16 + 15
        assertEquals("[[32,10]]", ar.get("hist").toString());

        JsonNode bc = measured.get("Broadcast");
        assertEquals(5_000_000.0, bc.get("maxUs").asDouble(), 1e-6, bc.toString());
        assertEquals("[[385,1]]", bc.get("hist").toString(), "5 s: the last bucket: " + bc);
    }
}
