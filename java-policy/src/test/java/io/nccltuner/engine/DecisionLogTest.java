package io.nccltuner.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DecisionLogTest {
    @Test
    void concurrentRecordsAreWholeAndNoneLost(@TempDir Path dir) throws Exception {
        List<String> warns = new CopyOnWriteArrayList<>();
        Path file = dir.resolve("d.jsonl");
        DecisionLog log = new DecisionLog(file, 1 << 17, (l, level, m) -> warns.add(m));
        int threads = 4;
        int per = 25_000;
        Thread[] ts = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            final int id = t;
            ts[t] = new Thread(() -> {
                for (int i = 0; i < per; i++) {
                    log.offer(id, 4, (long) id * per + i, 1 + (i % 3), 1, 0, 0, 2, i % 5, id % 2 == 0);
                }
            });
            ts[t].start();
        }
        for (Thread t : ts) {
            t.join();
        }
        assertTrue(log.awaitFlushed(10_000));
        List<String> lines = Files.readAllLines(file);
        assertEquals(threads * per, lines.size());
        assertEquals(0, log.dropped());
        ObjectMapper m = new ObjectMapper();
        Set<Long> seen = new HashSet<>();
        for (String l : lines) {
            JsonNode n = m.readTree(l);
            long nBytes = n.get("nBytes").asLong();
            long comm = n.get("comm").asLong();
            assertEquals(comm, nBytes / per, "fields of one record stay together: " + l);
            assertEquals("AllReduce", n.get("collective").asText());
            assertEquals("RING/LL", n.get("ncclPick").asText());
            assertEquals("TREE/SIMPLE", n.get("policyPick").asText());
            assertEquals(comm % 2 == 0, n.get("applied").asBoolean());
            assertTrue(seen.add(nBytes), "no duplicates");
        }
        assertTrue(warns.isEmpty());
    }

    @Test
    void unwritablePathIsRefusedUpFront(@TempDir Path dir) {
        assertThrows(
                java.io.IOException.class,
                () -> new DecisionLog(dir.resolve("no/such/dir/d.jsonl"), 8, (l, level, m) -> {}));
    }

    /** A full disk: the writer warns once, later offers are dropped and counted, none blocks. */
    @Test
    void fullDiskWarnsOnceAndDrops() throws Exception {
        List<String> warns = new CopyOnWriteArrayList<>();
        DecisionLog log = new DecisionLog(Path.of("/dev/full"), 8, (l, level, m) -> warns.add(m));
        long t0 = System.nanoTime();
        for (int i = 0; i < 100_000; i++) {
            log.offer(1, 4, i, 1, 1, 0, 0, 2, 0, true);
        }
        long ms = (System.nanoTime() - t0) / 1_000_000;
        log.awaitFlushed(2000);
        for (int i = 0; i < 10; i++) {
            log.offer(1, 4, i, 1, 1, 0, 0, 2, 0, true);
        }
        assertEquals(1, warns.size(), warns.toString());
        assertTrue(warns.getFirst().startsWith("cannot write decision log /dev/full"), warns.getFirst());
        assertTrue(log.dropped() >= 100_000 - 1024 - 8, "dropped " + log.dropped());
        System.out.println(
                "DecisionLogTest: 100000 offers against /dev/full took " + ms + " ms, dropped " + log.dropped());
    }

    /** No NCCL pick (every entry unavailable) and numPipeOps beyond 16 bits are recorded as they are. */
    @Test
    void oddValuesAreRecordedFaithfully(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("d.jsonl");
        DecisionLog log = new DecisionLog(file, 8, (l, level, m) -> {});
        log.offer(7, 2, -1L, Integer.MAX_VALUE, -1, -1, 6, 1, 64, false);
        assertTrue(log.awaitFlushed(5000));
        JsonNode n = new ObjectMapper().readTree(Files.readAllLines(file).getFirst());
        assertTrue(n.get("ncclPick").isNull());
        assertEquals("PAT/LL128", n.get("policyPick").asText());
        assertEquals(Integer.MAX_VALUE, n.get("numPipeOps").asInt());
        assertEquals("18446744073709551615", n.get("nBytes").asText());
        assertEquals("AllGather", n.get("collective").asText());
        assertEquals(64, n.get("channels").asInt());
    }
}
