package io.nccltuner.jmh;

import io.nccltuner.trace.TraceCall;
import io.nccltuner.trace.TraceFile;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * The {@code get} rows of the captured traces (tests/traces/trace_*.csv, in file-name order), the
 * same rows and order the C bench driver replays: collective, nBytes, numPipeOps, numAlgo,
 * numProto and the cost table, kept in native memory so the engine reads them as it does NCCL's.
 */
final class TraceRows {
    /** Floats per row in {@link #costs} (the engine's largest table). */
    static final int ROW_FLOATS = 64;

    final int n;
    final int[] coll;
    final long[] nBytes;
    final int[] numPipeOps;
    final int[] numAlgo;
    final int[] numProto;
    /** n x ROW_FLOATS floats, row i at byte offset {@code i * ROW_FLOATS * 4}. */
    final MemorySegment costs;

    private TraceRows(List<TraceCall> rows, Arena arena) {
        n = rows.size();
        coll = new int[n];
        nBytes = new long[n];
        numPipeOps = new int[n];
        numAlgo = new int[n];
        numProto = new int[n];
        costs = arena.allocate((long) n * ROW_FLOATS * Float.BYTES, 64);
        for (int i = 0; i < n; i++) {
            TraceCall c = rows.get(i);
            coll[i] = c.collective().id();
            nBytes[i] = c.nBytes();
            numPipeOps[i] = c.numPipeOps();
            numAlgo[i] = c.numAlgo();
            numProto[i] = c.numProto();
            MemorySegment.copy(
                    c.costs(), 0, costs, ValueLayout.JAVA_FLOAT, (long) i * ROW_FLOATS * Float.BYTES, c.costs().length);
        }
    }

    /**
     * Reads the traces (through {@link TraceFile}, the one reader of the format).
     *
     * @param dir tests/traces
     * @param onlyColl a collective id to keep only its rows, or -1 for all
     */
    static TraceRows load(Path dir, int onlyColl, Arena arena) {
        List<TraceCall> rows = new ArrayList<>();
        try (Stream<Path> s = Files.list(dir)) {
            for (Path p : s.filter(p -> p.getFileName().toString().matches("trace_.*\\.csv"))
                    .sorted()
                    .toList()) {
                for (TraceCall c : TraceFile.read(p).calls()) {
                    if (onlyColl < 0 || c.collective().id() == onlyColl) {
                        rows.add(c);
                    }
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        if (rows.isEmpty()) {
            throw new IllegalStateException("no get rows in " + dir + "/trace_*.csv");
        }
        return new TraceRows(rows, arena);
    }

    /** The repository root: -Dnccltj.repo, else the working directory. */
    static Path repo() {
        return Path.of(System.getProperty("nccltj.repo", ".")).toAbsolutePath().normalize();
    }
}
