package io.nccltuner.calibrate;

import io.nccltuner.compile.Measurement;
import io.nccltuner.compile.MeasurementSet;
import io.nccltuner.compile.NcclTestsLog;
import io.nccltuner.model.AlgoProto;
import io.nccltuner.model.CostTable;
import io.nccltuner.model.NcclModelLog;
import io.nccltuner.policy.Algorithm;
import io.nccltuner.policy.Collective;
import io.nccltuner.policy.InputException;
import io.nccltuner.policy.Protocol;
import io.nccltuner.sweep.SweepDirectory;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * One sweep directory ({@code nccl-tuner sweep -o DIR}) read for a calibration: the median time of
 * every forced Ring or Tree candidate (without a forced channel count) per collective and size, and
 * the topology NCCL logged in the runs' output (NCCL_DEBUG=INFO with the GRAPH and TUNING
 * subsystems: the graph lines and the latency/bandwidth table, {@link Topology}).
 *
 * @param dir the directory
 * @param shape the measurements with their topology
 * @param data everything the directory measured (for compiling the measured rules)
 * @param tableCheck how the model at NCCL's defaults compares with the table NCCL logged: one line
 * @param tableMismatches entries (Ring/Tree, latency or bandwidth) the model does not reproduce
 *     within the printed precision; -1 when the log has no table
 */
public record SweepInputs(
        Path dir, Calibrator.Shape shape, MeasurementSet data, String tableCheck, int tableMismatches) {

    /** NCCL's algorithm-major order of the entries (src/enqueue.cc scans it so). */
    public static final Comparator<AlgoProto> NCCL_ORDER = Comparator.comparingInt(ap -> ap.index(3));

    /**
     * Reads a sweep.
     *
     * @param dir the directory
     * @param computeCapability the GPUs' compute capability (major x 10 + minor, 90 for H100); the
     *     log does not print it
     * @param cpu "intel", "amd" or "auto" (whichever reproduces the logged table; Intel when the log
     *     has none)
     * @return the inputs
     * @throws IOException if a file cannot be read
     * @throws InputException if the directory is not a sweep, or its logs lack the graph lines
     */
    public static SweepInputs read(Path dir, int computeCapability, String cpu) throws IOException, InputException {
        if (!SweepDirectory.isSweep(dir)) {
            throw new InputException(
                    dir.toString(),
                    "not a sweep directory (no manifest); calibrate reads what " + "`nccl-tuner sweep -o DIR` writes");
        }
        MeasurementSet data = new MeasurementSet();
        SweepDirectory.read(dir, NcclTestsLog.Placement.OUT_OF_PLACE, data);
        Logged logged = readTopology(dir, computeCapability, cpu);
        Topology topo = logged.topology();
        int mismatches = logged.mismatches();
        String check = logged.check();
        Map<String, List<Double>> times = new LinkedHashMap<>();
        for (Measurement m : data.measurements()) {
            if (m.nRanks() != topo.nRanks()
                    || m.nNodes() != topo.nNodes()
                    || !m.config().isCandidate()
                    || m.config().channels() != 0
                    || (m.config().algorithm() != Algorithm.RING && m.config().algorithm() != Algorithm.TREE)) {
                continue;
            }
            String key = m.collective().id() + " " + m.nBytes() + " "
                    + m.config().algorithm().id() + " " + m.config().protocol().id();
            times.computeIfAbsent(key, k -> new ArrayList<>()).add(m.timeUs());
        }
        TreeMap<Long, Map<AlgoProto, Double>> byPoint = new TreeMap<>();
        for (var e : times.entrySet()) {
            String[] k = e.getKey().split(" ");
            long point = Long.parseLong(k[0]) << 58 | Long.parseLong(k[1]);
            byPoint.computeIfAbsent(point, x -> new TreeMap<>(NCCL_ORDER))
                    .put(
                            new AlgoProto(
                                    Algorithm.ofId(Integer.parseInt(k[2])), Protocol.ofId(Integer.parseInt(k[3]))),
                            median(e.getValue()));
        }
        List<Calibrator.Point> points = new ArrayList<>();
        for (var e : byPoint.entrySet()) {
            if (e.getValue().size() >= 2) {
                points.add(new Calibrator.Point(
                        Collective.ofId((int) (e.getKey() >>> 58)), e.getKey() & ((1L << 58) - 1), e.getValue()));
            }
        }
        if (points.isEmpty()) {
            throw new InputException(dir.toString(), "no size with two or more forced Ring/Tree candidates measured");
        }
        return new SweepInputs(dir, new Calibrator.Shape(dir.toString(), topo, points), data, check, mismatches);
    }

    /**
     * The topology NCCL logged in one run's output, with how the model at NCCL's defaults compares
     * with the latency/bandwidth table logged beside it.
     *
     * @param file the log file the topology came from
     * @param topology the topology
     * @param mismatches Ring/Tree entries of the logged table the model at NCCL's defaults does not
     *     reproduce; -1 when the file has no table
     * @param check that comparison in one line
     */
    public record Logged(Path file, Topology topology, int mismatches, String check) {}

    /**
     * Reads the topology a calibration reads: from a sweep directory (the first run output under it
     * with NCCL's graph lines) or from one NCCL log file.
     *
     * @param fileOrDir a sweep directory, or rank 0's NCCL log (NCCL_DEBUG_SUBSYS with INIT and GRAPH)
     * @param computeCapability the GPUs' compute capability (major x 10 + minor); the log does not print it
     * @param cpu "intel", "amd" or "auto" (whichever reproduces the logged table; Intel when the log
     *     has none)
     * @return the topology
     * @throws IOException if a file cannot be read
     * @throws InputException if no file has the graph lines, the comm line, or cc is unknown
     */
    public static Logged readTopology(Path fileOrDir, int computeCapability, String cpu)
            throws IOException, InputException {
        List<String> log = null;
        Path logFile = null;
        List<Path> files;
        if (Files.isDirectory(fileOrDir)) {
            try (var s = Files.walk(fileOrDir, 3)) { // a sweep's run outputs are under runs/
                files = s.filter(Files::isRegularFile).sorted().toList();
            }
        } else {
            files = List.of(fileOrDir);
        }
        for (Path f : files) {
            List<String> lines = Files.readAllLines(f, StandardCharsets.ISO_8859_1);
            if (lines.stream().anyMatch(l -> Topology.Graph.parse(l) != null)) {
                log = lines;
                logFile = f;
                break;
            }
        }
        if (log == null) {
            throw new InputException(
                    fileOrDir.toString(),
                    (Files.isDirectory(fileOrDir) ? "no run output has" : "no")
                            + " NCCL's graph lines ('Pattern 4, crossNic 0, nChannels ...'): run with NCCL_DEBUG=INFO "
                            + "NCCL_DEBUG_SUBSYS=INIT,ENV,TUNING,GRAPH");
        }
        int cc = computeCapability;
        if (cc <= 0) {
            throw new InputException(
                    fileOrDir.toString(),
                    "the runs do not name a GPU whose compute capability is known; "
                            + "give --compute-capability (9.0 for H100)");
        }
        NcclModelLog parsed = NcclModelLog.parse(logFile.toString(), log);
        CostTable table = parsed.communicators().isEmpty()
                ? null
                : parsed.communicators().getFirst().table();
        Topology topo = null;
        int mismatches = -1;
        if (cpu.equals("auto") && table != null) {
            Topology intel = Topology.read(log, cc, false);
            Topology amd = Topology.read(log, cc, true);
            if (intel != null) {
                int mi = mismatches(TuneModel.of(intel, ModelConstants.defaults()), table);
                int ma = mismatches(TuneModel.of(amd, ModelConstants.defaults()), table);
                topo = ma < mi ? amd : intel;
                mismatches = Math.min(mi, ma);
            }
        } else {
            topo = Topology.read(log, cc, cpu.equals("amd"));
            if (topo != null && table != null) {
                mismatches = mismatches(TuneModel.of(topo, ModelConstants.defaults()), table);
            }
        }
        if (topo == null) {
            throw new InputException(
                    logFile.toString(), "no comm line (nRanks N nNodes M) or no Ring / Tree graph line");
        }
        String check = table == null
                ? "no latency/bandwidth table in " + logFile.getFileName() + " to check the model against"
                : mismatches == 0
                        ? "the model at NCCL's defaults reproduces the logged table (Ring and Tree, "
                                + logFile.getFileName() + ")"
                        : mismatches
                                + " Ring/Tree entries of the logged table differ from the model at NCCL's defaults ("
                                + logFile.getFileName() + "): the fit may not describe this NCCL";
        return new Logged(logFile, topo, mismatches, check);
    }

    private static double median(List<Double> v) {
        List<Double> s = v.stream().sorted().toList();
        int n = s.size();
        return n % 2 == 1 ? s.get(n / 2) : (s.get(n / 2 - 1) + s.get(n / 2)) / 2;
    }

    /** Entries (Ring and Tree, every collective) whose latency or bandwidth misses the printed value. */
    static int mismatches(TuneModel m, CostTable t) {
        int bad = 0;
        for (Collective c : Collective.values()) {
            for (Algorithm a : new Algorithm[] {Algorithm.TREE, Algorithm.RING}) {
                for (Protocol p : Protocol.values()) {
                    AlgoProto ap = new AlgoProto(a, p);
                    if (!t.has(c, ap)) {
                        continue;
                    }
                    double bw = t.bandwidth(c, ap);
                    double lat = t.latency(c, ap);
                    if (Math.abs(m.bandwidth(c, ap) - bw) > 0.05 + 1e-6 * bw
                            || (bw > 0 && Math.abs(m.latency(c, ap) - lat) > 0.05 + 1e-6 * lat)) {
                        bad++;
                    }
                }
            }
        }
        return bad;
    }
}
