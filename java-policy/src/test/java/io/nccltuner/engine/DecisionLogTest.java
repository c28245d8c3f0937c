package io.nccltuner.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
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
  void fullQueueDropsAndCounts(@TempDir Path dir) throws Exception {
    // An unwritable path: the writer fails once, warns once, and offers are dropped, never block.
    List<String> warns = new CopyOnWriteArrayList<>();
    DecisionLog log = new DecisionLog(dir.resolve("no/such/dir/d.jsonl"), 8, (l, level, m) -> warns.add(m));
    for (int i = 0; i < 10_000; i++) {
      log.offer(1, 4, i, 1, 1, 0, 0, 2, 0, true);
    }
    log.awaitFlushed(2000);
    assertEquals(1, warns.size(), warns.toString());
    assertTrue(warns.getFirst().startsWith("cannot open decision log "), warns.getFirst());
    assertTrue(log.dropped() >= 10_000 - 8, "dropped " + log.dropped());
    assertEquals(0, log.written());
  }
}
