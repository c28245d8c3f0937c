package io.nccltuner.engine;

import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.nccltuner.policy.Collective;
import io.nccltuner.policy.Mode;
import io.nccltuner.policy.PolicyLoader;
import io.nccltuner.policy.SizeGrid;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(60)
class ShadowAggregateTest {
    static final String POLICY = """
      schema: nccl-tuner-java/v1
      name: agg
      mode: shadow
      profiles:
        - name: two
          match: {nRanks: 2}
          rules:
            - collective: AllReduce
              bytes: {from: 1 MiB, to: 2 MiB}
              candidates:
                - {algorithm: RING, protocol: SIMPLE}
            - collective: AllGather
              bytes: {from: 0 B}
              candidates:
                - {algorithm: RING, protocol: LL, channels: 2}
      """;

    @Test
    void bucketSpellsTheSizeRange() {
        assertEquals("[1 MiB, 1.25 MiB)", ShadowAggregate.bucket(1 << 20, 5 << 18));
        assertEquals("[96 B, 112 B)", ShadowAggregate.bucket(96, 112));
        long last = SizeGrid.lowerBound(SizeGrid.BUCKETS - 1); // 7 x 2^61: the grid's last bucket has no end
        assertEquals(7L << 61, last);
        assertEquals("[16140901064495857664 B, inf)", ShadowAggregate.bucket(last, -1));
        // the log's field is the one spelling of a range: a rule with no end reads "inf", not "unbounded"
        assertEquals("[64 KiB, inf)", io.nccltuner.policy.ByteSize.range(64 << 10, -1L));
        assertEquals(io.nccltuner.policy.ByteSize.range(96, 112), ShadowAggregate.bucket(96, 112));
    }

    /** The toBytes field: -1 for no end, else the unsigned number (2^63 and up too). */
    @Test
    void toBytesNumberIsUnsignedWithMinusOneForNoEnd() {
        assertEquals("-1", ShadowAggregate.toBytesNumber(-1L));
        assertEquals("1310720", ShadowAggregate.toBytesNumber(5 << 18));
        assertEquals("16140901064495857664", ShadowAggregate.toBytesNumber(7L << 61));
    }

    @Test
    void countsByCollectiveBucketAndPicks() {
        ShadowAggregate a = new ShadowAggregate();
        int ringSimple = 1 | 2 << 8; // RING=1, SIMPLE=2
        for (int i = 0; i < 7; i++) {
            a.count(4, SizeGrid.bucket(1 << 20), 0, 3, ringSimple); // NCCL TREE/LL
        }
        a.count(4, SizeGrid.bucket((1 << 20) + 1), 0, 3, ringSimple); // same bucket [1 MiB, 1.25 MiB)
        a.count(4, SizeGrid.bucket(3 << 19), 1, 3, ringSimple); // 1.5 MiB, NCCL TREE/LL128
        a.count(2, SizeGrid.bucket(100), -1, 3, 1 | 0 << 8 | 2 << 16); // AllGather, no NCCL pick, RING/LL 2 channels
        List<ShadowAggregate.Entry> e = a.entries();
        assertEquals(3, e.size());
        assertEquals(new ShadowAggregate.Entry(Collective.AllGather, 2, 96, 112, null, "RING/LL", 2, 1), e.get(0));
        assertEquals(
                new ShadowAggregate.Entry(Collective.AllReduce, 4, 1 << 20, 5 << 18, "TREE/LL", "RING/SIMPLE", 0, 8),
                e.get(1));
        assertEquals(
                new ShadowAggregate.Entry(Collective.AllReduce, 4, 3 << 19, 7 << 18, "TREE/LL128", "RING/SIMPLE", 0, 1),
                e.get(2));
        assertEquals(0, a.unaggregated());
    }

    @Test
    void moreKeysThanSlotsAreCountedAsUnaggregated() {
        ShadowAggregate a = new ShadowAggregate();
        int keys = 3000;
        for (int k = 0; k < keys; k++) {
            a.count(
                    4,
                    SizeGrid.bucket(1L << (k % 40)),
                    k / 40 % 21,
                    3,
                    k / 840); // 3000 distinct (bucket, pick, cand) keys
        }
        long sum = a.entries().stream().mapToLong(ShadowAggregate.Entry::count).sum();
        assertEquals(keys, sum + a.unaggregated());
        assertTrue(a.entries().size() <= ShadowAggregate.SLOTS);
        assertTrue(a.unaggregated() >= keys - ShadowAggregate.SLOTS, "unaggregated " + a.unaggregated());
    }

    /** Calls through the engine in shadow mode; the log gets a comm line and the aggregates, no per-call records. */
    @Test
    void engineWritesAggregatesAtDestroyAndAtExit(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("d.jsonl");
        List<String> warns = new ArrayList<>();
        DecisionLog log = new DecisionLog(file, 2, (l, level, m) -> warns.add(m), false);
        Engine e = new Engine(PolicyLoader.parse("agg.yaml", POLICY), Mode.SHADOW, (l, level, m) -> {}, log);
        long h = e.init(2, 1, MemorySegment.NULL);
        long h2 = e.init(2, 1, MemorySegment.NULL);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment t = arena.allocate(JAVA_FLOAT, 21);
            MemorySegment ch = arena.allocate(JAVA_INT);
            for (int i = 0; i < 21; i++) {
                t.setAtIndex(JAVA_FLOAT, i, 10 + i); // TREE/LL (entry 0) is NCCL's pick
            }
            for (int i = 0; i < 1000; i++) {
                e.getCollInfo(h, 4, 1 << 20, 1, t, 7, 3, ch);
            }
            for (int i = 0; i < 300; i++) {
                e.getCollInfo(h, 4, 4096, 1, t, 7, 3, ch); // no rule
            }
            t.setAtIndex(JAVA_FLOAT, 0, -1f); // TREE/LL unavailable: TREE/LL128 is NCCL's pick
            for (int i = 0; i < 500; i++) {
                e.getCollInfo(h, 4, 3 << 19, 1, t, 7, 3, ch);
            }
            for (int i = 0; i < 200; i++) {
                e.getCollInfo(h, 2, 65536, 1, t, 7, 3, ch);
            }
            for (int i = 0; i < 42; i++) {
                e.getCollInfo(h2, 2, 65536, 1, t, 7, 3, ch);
            }
            assertEquals(10 + 1, t.getAtIndex(JAVA_FLOAT, 1), "shadow never writes");
        }
        e.destroy(h);
        List<String> lines = Files.readAllLines(file);
        assertEquals(4, lines.size(), String.join("\n", lines));
        ObjectMapper m = new ObjectMapper();
        JsonNode comm = m.readTree(lines.get(0));
        assertEquals("comm", comm.get("type").asText());
        assertEquals(h, comm.get("comm").asLong());
        assertEquals(2000, comm.get("calls").asLong());
        assertEquals(1700, comm.get("ruleHits").asLong());
        assertEquals(0, comm.get("applied").asLong());
        assertEquals("shadow", comm.get("mode").asText());
        assertEquals("agg", comm.get("policy").asText());
        assertEquals("destroy", comm.get("at").asText());
        assertEquals(64, comm.get("sha256").asText().length());
        assertEquals(ProcessHandle.current().pid(), comm.get("pid").asLong());
        List<String> got = new ArrayList<>();
        for (String l : lines.subList(1, 4)) {
            JsonNode n = m.readTree(l);
            assertEquals("aggregate", n.get("type").asText());
            assertEquals(comm.get("sha256").asText(), n.get("sha256").asText());
            got.add(n.get("collective").asText() + " " + n.get("nBytes").asLong() + ".."
                    + n.get("toBytes").asLong() + " "
                    + n.get("ncclPick").asText() + " -> " + n.get("policyPick").asText() + "/"
                    + n.get("channels").asInt() + " x"
                    + n.get("count").asLong());
        }
        assertEquals(
                List.of(
                        "AllGather 65536..81920 TREE/LL128 -> RING/LL/2 x200",
                        "AllReduce 1048576..1310720 TREE/LL -> RING/SIMPLE/0 x1000",
                        "AllReduce 1572864..1835008 TREE/LL128 -> RING/SIMPLE/0 x500"),
                got);
        // the second communicator is never destroyed: written at exit, once
        e.flush();
        e.flush();
        lines = Files.readAllLines(file);
        assertEquals(6, lines.size(), String.join("\n", lines));
        assertEquals("exit", m.readTree(lines.get(4)).get("at").asText());
        assertEquals(42, m.readTree(lines.get(5)).get("count").asLong());
        assertTrue(warns.isEmpty(), warns.toString());
    }

    /** Threads each driving their own communicator, as NCCL does: every rule hit is counted. */
    @Test
    void oneThreadPerCommunicatorCountsEveryHit(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("d.jsonl");
        DecisionLog log = new DecisionLog(file, 2, (l, level, m) -> {}, false);
        Engine e = new Engine(PolicyLoader.parse("agg.yaml", POLICY), Mode.SHADOW, (l, level, m) -> {}, log);
        int threads = 8;
        int per = 50_000;
        long[] h = new long[threads];
        for (int t = 0; t < threads; t++) {
            h[t] = e.init(2, 1, MemorySegment.NULL);
        }
        Thread[] ts = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            final int id = t;
            ts[t] = Thread.ofPlatform().start(() -> {
                try (Arena arena = Arena.ofConfined()) {
                    MemorySegment tab = arena.allocate(JAVA_FLOAT, 21);
                    MemorySegment ch = arena.allocate(JAVA_INT);
                    for (int k = 0; k < per; k++) {
                        for (int i = 0; i < 21; i++) {
                            tab.setAtIndex(JAVA_FLOAT, i, 1f + (i + k) % 21);
                        }
                        e.getCollInfo(h[id], 2, 1L + k, 1, tab, 7, 3, ch); // AllGather: every call a rule hit
                    }
                }
            });
        }
        for (Thread t : ts) {
            t.join();
        }
        for (long x : h) {
            e.destroy(x);
        }
        ObjectMapper m = new ObjectMapper();
        long counted = 0;
        long hits = 0;
        for (String l : Files.readAllLines(file)) {
            JsonNode n = m.readTree(l);
            if (n.get("type").asText().equals("aggregate")) {
                counted += n.get("count").asLong();
            } else {
                hits += n.get("ruleHits").asLong();
                counted += n.get("unaggregated").asLong();
            }
        }
        assertEquals((long) threads * per, hits);
        assertEquals((long) threads * per, counted);
    }
}
