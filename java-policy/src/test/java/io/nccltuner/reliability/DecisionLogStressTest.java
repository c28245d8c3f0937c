package io.nccltuner.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.nccltuner.engine.DecisionLog;
import io.nccltuner.policy.Algorithm;
import io.nccltuner.policy.Collective;
import io.nccltuner.policy.Protocol;
import java.io.FileInputStream;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.BitSet;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The decision log under stress: 16 threads offering 100,000 records at once, every field of
 * every record derived from the record's id so that a torn record (fields of two records mixed)
 * cannot pass; a queue too small (drops counted, the rest whole); and files that fail: a path that
 * cannot be opened, /dev/full, a FIFO nobody reads (the writer blocks for ever). In each, offer
 * never blocks and one WARN says what happened.
 */
class DecisionLogStressTest {
    static final int THREADS = 16;
    static final int TOTAL = 100_000;

    /** Offers record {@code id}: every field is a function of id. */
    static boolean offer(DecisionLog log, int id) {
        return log.offer(
                id, id % 5, id * 7L + 3, id % 1000, id % 7, id % 3, (id / 7) % 7, (id / 3) % 3, id % 65, id % 2 == 0);
    }

    /** Checks that a line is one whole record: parses, and every field matches the id in "comm". */
    static int checkRecord(ObjectMapper m, String line) throws Exception {
        JsonNode n = m.readTree(line);
        int id = n.get("comm").asInt();
        assertEquals(8, n.size(), line);
        assertEquals(Collective.ofId(id % 5).name(), n.get("collective").asText(), line);
        assertEquals(id * 7L + 3, n.get("nBytes").asLong(), line);
        assertEquals(id % 1000, n.get("numPipeOps").asInt(), line);
        assertEquals(
                Algorithm.ofId(id % 7) + "/" + Protocol.ofId(id % 3),
                n.get("ncclPick").asText(),
                line);
        assertEquals(
                Algorithm.ofId((id / 7) % 7) + "/" + Protocol.ofId((id / 3) % 3),
                n.get("policyPick").asText(),
                line);
        assertEquals(id % 65, n.get("channels").asInt(), line);
        assertEquals(id % 2 == 0, n.get("applied").asBoolean(), line);
        return id;
    }

    /** 16 threads offer ids t, t+16, t+32, ... below TOTAL; returns how many offers were accepted. */
    static long offerConcurrently(DecisionLog log) throws InterruptedException {
        AtomicLong accepted = new AtomicLong();
        Thread[] ts = new Thread[THREADS];
        for (int t = 0; t < THREADS; t++) {
            final int first = t;
            ts[t] = Thread.ofPlatform().start(() -> {
                long ok = 0;
                for (int id = first; id < TOTAL; id += THREADS) {
                    ok += offer(log, id) ? 1 : 0;
                }
                accepted.addAndGet(ok);
            });
        }
        for (Thread t : ts) {
            t.join();
        }
        return accepted.get();
    }

    @Test
    void hundredThousandConcurrentRecordsAllWholeNoneLost(@TempDir Path dir) throws Exception {
        List<String> warns = new CopyOnWriteArrayList<>();
        Path file = dir.resolve("decisions.jsonl");
        DecisionLog log = new DecisionLog(file, 1 << 17, (l, level, msg) -> warns.add(msg));
        assertEquals(TOTAL, offerConcurrently(log), "the queue has room for every record");
        assertTrue(log.awaitFlushed(30_000));
        assertEquals(0, log.dropped());
        assertEquals(TOTAL, log.written());
        List<String> lines = Files.readAllLines(file);
        assertEquals(TOTAL, lines.size());
        ObjectMapper m = new ObjectMapper();
        BitSet seen = new BitSet(TOTAL);
        for (String line : lines) {
            int id = checkRecord(m, line);
            assertFalse(seen.get(id), "record " + id + " twice");
            seen.set(id);
        }
        assertEquals(TOTAL, seen.cardinality());
        assertTrue(warns.isEmpty(), warns.toString());
    }

    @Test
    void queueTooSmallDropsAndCountsTheRestWhole(@TempDir Path dir) throws Exception {
        List<String> warns = new CopyOnWriteArrayList<>();
        Path file = dir.resolve("decisions.jsonl");
        DecisionLog log = new DecisionLog(file, 256, (l, level, msg) -> warns.add(msg));
        long accepted = offerConcurrently(log);
        assertTrue(log.awaitFlushed(30_000));
        assertTrue(log.dropped() > 0, "256 slots for 100,000 records from 16 threads: some are dropped");
        assertEquals(TOTAL, accepted + log.dropped(), "every record is written or counted as dropped");
        assertEquals(accepted, log.written());
        List<String> lines = Files.readAllLines(file);
        assertEquals(accepted, lines.size());
        ObjectMapper m = new ObjectMapper();
        for (String line : lines) {
            checkRecord(m, line);
        }
        assertTrue(warns.isEmpty(), "a full queue is not an error: " + warns);
    }

    /** A path that cannot be opened is refused when the log is made (the plugin then warns once and runs without it). */
    @Test
    void unwritablePathIsRefusedUpFront(@TempDir Path dir) {
        List<String> warns = new CopyOnWriteArrayList<>();
        java.io.IOException e = org.junit.jupiter.api.Assertions.assertThrows(
                java.io.IOException.class,
                () -> new DecisionLog(
                        dir.resolve("missing/dir/decisions.jsonl"), 1024, (l, level, msg) -> warns.add(msg)));
        assertTrue(e.toString().contains("missing/dir/decisions.jsonl"), e.toString());
        assertTrue(warns.isEmpty(), "the caller warns, once: " + warns);
    }

    @Test
    void fullDiskWarnsOnceAndOffersNeverBlock() throws Exception {
        Path devFull = Path.of("/dev/full");
        if (!Files.isWritable(devFull)) {
            throw new IllegalStateException("/dev/full is needed for this test (Linux)");
        }
        List<String> warns = new CopyOnWriteArrayList<>();
        DecisionLog log = new DecisionLog(devFull, 1024, (l, level, msg) -> warns.add(msg));
        offerConcurrently(log);
        log.awaitFlushed(5000);
        offerConcurrently(log);
        log.awaitFlushed(5000);
        assertEquals(1, warns.size(), warns.toString());
        assertTrue(warns.getFirst().startsWith("cannot write decision log /dev/full"), warns.getFirst());
        assertTrue(warns.getFirst().contains("No space left on device"), warns.getFirst());
        assertTrue(log.dropped() > 0);
    }

    /**
     * A FIFO nobody reads: the writer blocks in open() for ever. Offers still return at once (the
     * queue fills, then records are dropped and counted); the first wait at destroy runs out and
     * warns once, later waits return at once.
     */
    @Test
    void blockedWriterNeverBlocksOffersAndStallsDestroyOnce(@TempDir Path dir) throws Exception {
        Path fifo = dir.resolve("decisions.fifo");
        Process mk = new ProcessBuilder("mkfifo", fifo.toString()).inheritIO().start();
        assertEquals(0, mk.waitFor());
        List<String> warns = new CopyOnWriteArrayList<>();
        DecisionLog log = new DecisionLog(fifo, 1024, (l, level, msg) -> warns.add(msg));
        long t0 = System.nanoTime();
        long accepted = offerConcurrently(log);
        long offerNanos = System.nanoTime() - t0;
        assertEquals(1024, accepted, "the queue fills");
        assertEquals(TOTAL - 1024, log.dropped());
        assertTrue(offerNanos < 10_000_000_000L, "100,000 offers took " + offerNanos / 1_000_000 + " ms");
        long w0 = System.nanoTime();
        assertFalse(log.awaitFlushed(500));
        long firstWait = System.nanoTime() - w0;
        w0 = System.nanoTime();
        assertFalse(log.awaitFlushed(500));
        long secondWait = System.nanoTime() - w0;
        assertTrue(firstWait >= 400_000_000L, "the first wait runs its course: " + firstWait / 1_000_000 + " ms");
        assertTrue(secondWait < 100_000_000L, "later waits return at once: " + secondWait / 1_000_000 + " ms");
        assertEquals(1, warns.size(), warns.toString());
        assertTrue(warns.getFirst().contains("nothing written for 500 ms"), warns.getFirst());
        // Unblock the writer: it drains what it holds, and waits work again.
        try (InputStream in = new FileInputStream(fifo.toFile())) {
            Thread drainer = Thread.ofPlatform().daemon().start(() -> {
                try {
                    in.transferTo(java.io.OutputStream.nullOutputStream());
                } catch (java.io.IOException ignored) {
                    // closed below
                }
            });
            long deadline = System.nanoTime() + 10_000_000_000L;
            while (log.written() < 1024 && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            assertEquals(1024, log.written(), "the writer drains the queue once the FIFO is read");
            Thread.sleep(100); // let the writer flush on idle
            assertTrue(log.awaitFlushed(10_000), "waits work again once the writer moves");
            drainer.interrupt();
        }
    }
}
