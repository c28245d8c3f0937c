package io.nccltuner.jmh;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.stream.Stream;

/**
 * {@code make bench}'s "report over 4,096 rank logs": {@code nccl-tuner report} over one job's
 * canary logs, against a floor measured in the same run.
 *
 * <pre>
 *   java -cp benchmarks.jar io.nccltuner.jmh.ReportBench TOOLS_CLASSPATH [RANKS [SERIES]]
 * </pre>
 *
 * <p>Writes RANKS (4,096) synthetic decision logs into a temporary folder, each one process: a comm
 * line, SERIES (20) measured lines (10 AllReduce size buckets x 2 arms, 8-bucket histograms, the
 * format of docs/canary.md) and a profiled line. Then two fresh JVMs with the same options, each
 * over the same files in the same order: the floor ({@code --floor}: a bare line count with
 * {@link BufferedReader#readLine}) and the report ({@code --report}: {@code io.nccltuner.cli.Main
 * report FILES...} from TOOLS_CLASSPATH, stdout discarded, in a heap capped at half the logs' bytes
 * (at least 32 MiB)). Each prints its wall and CPU time (from its main's start, JVM start-up
 * excluded), the peak of its heap pools (MiB) and its peak resident set (VmHWM, MiB). Targets,
 * against what the same run measured: report wall time at most 15 x the floor's; the report
 * completes within the capped heap (it keeps aggregates, not lines: a report that kept the lines,
 * or their JSON trees, would not fit in half their bytes). Prints one "bench: report ..." line per
 * run and one "target:" line per target; exits 0 either way (missed targets are reported). The
 * folder is removed at the end.
 */
public final class ReportBench {
    private ReportBench() {}

    /** Wall-time target: report / floor. */
    static final double WALL_LIMIT = 15;

    public static void main(String[] args) throws Exception {
        if (args.length >= 2 && args[0].equals("--floor")) {
            floor(Path.of(args[1]));
            return;
        }
        if (args.length >= 2 && args[0].equals("--report")) {
            report(Path.of(args[1]));
            return;
        }
        if (args.length < 1) {
            System.err.println("usage: ReportBench TOOLS_CLASSPATH [RANKS [SERIES]]");
            System.exit(2);
        }
        String toolsCp = args[0];
        int ranks = args.length > 1 ? Integer.parseInt(args[1]) : 4096;
        int series = args.length > 2 ? Integer.parseInt(args[2]) : 20;
        Path dir = Files.createTempDirectory("nccltj-report-bench");
        try {
            long bytes = generate(dir, ranks, series);
            System.out.printf(
                    Locale.ROOT,
                    "bench: report-logs ranks=%d series_per_rank=%d files_mib=%.1f%n",
                    ranks,
                    series,
                    bytes / 1048576.0);
            String self = Path.of(ReportBench.class
                            .getProtectionDomain()
                            .getCodeSource()
                            .getLocation()
                            .toURI())
                    .toString();
            long xmx = Math.max(32, bytes / 2 / 1048576);
            double[] f = child(self, dir, "--floor", null);
            double[] r = child(self + java.io.File.pathSeparator + toolsCp, dir, "--report", "-Xmx" + xmx + "m");
            System.out.printf(
                    Locale.ROOT,
                    "target: report wall / floor wall %s x (limit %.0f x) %s%n",
                    r == null ? "-" : String.format(Locale.ROOT, "%.1f", r[0] / f[0]),
                    WALL_LIMIT,
                    r != null && r[0] / f[0] <= WALL_LIMIT ? "ok" : "MISSED");
            System.out.printf(
                    Locale.ROOT,
                    "target: report within -Xmx%dm (half the logs' %.1f MiB, at least 32) %s%n",
                    xmx,
                    bytes / 1048576.0,
                    r != null ? "ok" : "MISSED (it failed; see above)");
        } finally {
            try (Stream<Path> s = Files.walk(dir)) {
                for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
                    Files.deleteIfExists(p);
                }
            }
        }
    }

    /** Runs one mode in a fresh JVM; returns {wall ms, peak heap MiB, peak RSS MiB}, or null when it failed. */
    private static double[] child(String cp, Path dir, String mode, String heap)
            throws IOException, InterruptedException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> cmd = new ArrayList<>(List.of(java, "-Xshare:auto"));
        if (heap != null) {
            cmd.add(heap);
        }
        cmd.addAll(List.of("-cp", cp, ReportBench.class.getName(), mode, dir.toString()));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (p.waitFor() != 0) {
            String tail = out.length() > 2000 ? out.substring(out.length() - 2000) : out;
            System.out.println(
                    "bench: report " + mode.substring(2) + " FAILED (exit " + p.exitValue() + "): " + tail.strip());
            return null;
        }
        System.out.print(out);
        double[] v = new double[3];
        for (String tok : out.trim().split("\\s+")) {
            if (tok.startsWith("wall_ms=")) {
                v[0] = Double.parseDouble(tok.substring(8));
            } else if (tok.startsWith("peak_heap_mib=")) {
                v[1] = Double.parseDouble(tok.substring(14));
            } else if (tok.startsWith("peak_rss_mib=")) {
                v[2] = Double.parseDouble(tok.substring(13));
            }
        }
        return v;
    }

    private static List<Path> files(Path dir) throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            return s.sorted().toList();
        }
    }

    private static void floor(Path dir) throws IOException {
        long t0 = System.nanoTime();
        long lines = 0;
        for (Path f : files(dir)) {
            try (BufferedReader r = Files.newBufferedReader(f, StandardCharsets.UTF_8)) {
                while (r.readLine() != null) {
                    lines++;
                }
            }
        }
        print("floor", t0, "lines=" + lines);
    }

    private static void report(Path dir) throws Exception {
        long t0 = System.nanoTime();
        List<String> args = new ArrayList<>();
        args.add("report");
        for (Path f : files(dir)) {
            args.add(f.toString());
        }
        PrintStream out = System.out;
        System.setOut(new PrintStream(OutputStream.nullOutputStream()));
        int code;
        try {
            code = (int) Class.forName("io.nccltuner.cli.Main")
                    .getMethod("run", String[].class)
                    .invoke(null, (Object) args.toArray(String[]::new));
        } finally {
            System.setOut(out);
        }
        if (code != 0) {
            throw new IllegalStateException("report exited " + code);
        }
        print("report", t0, "exit=" + code);
    }

    private static void print(String what, long t0, String extra) throws IOException {
        double wall = (System.nanoTime() - t0) / 1e6;
        double cpu = ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
                        .getProcessCpuTime()
                / 1e6;
        long heap = 0;
        for (MemoryPoolMXBean m : ManagementFactory.getMemoryPoolMXBeans()) {
            if (m.getType() == MemoryType.HEAP && m.getPeakUsage() != null) {
                heap += m.getPeakUsage().getUsed();
            }
        }
        double rss = Double.NaN;
        for (String l : Files.readAllLines(Path.of("/proc/self/status"))) {
            if (l.startsWith("VmHWM:")) {
                rss = Long.parseLong(l.replaceAll("[^0-9]", "")) / 1024.0;
            }
        }
        System.out.printf(
                Locale.ROOT,
                "bench: report %s wall_ms=%.1f process_cpu_ms=%.0f peak_heap_mib=%.1f " + "peak_rss_mib=%.1f %s%n",
                what,
                wall,
                cpu,
                heap / 1048576.0,
                rss,
                extra);
    }

    /** Writes the logs; returns their bytes. */
    static long generate(Path dir, int ranks, int series) throws IOException {
        long bytes = 0;
        String sha = "8ab4".repeat(16);
        long[] sizes = new long[(series + 1) / 2];
        for (int i = 0; i < sizes.length; i++) {
            sizes[i] = 65536L << i; // 64 KiB, 128 KiB, ...: one bucket each
        }
        java.util.SplittableRandom rnd = new java.util.SplittableRandom(42);
        for (int r = 0; r < ranks; r++) {
            String host = "node" + (r / 8);
            int pid = 10000 + r;
            Path f = dir.resolve(String.format(Locale.ROOT, "tuner-%s-%d.jsonl", host, pid));
            StringBuilder sb = new StringBuilder(16384);
            commLine(sb, host, pid, ranks, sha);
            for (int i = 0; i < series; i++) {
                measuredLine(sb, rnd, host, pid, r, ranks, sha, sizes[i / 2], i % 2 == 1);
            }
            profiledLine(sb, host, pid, r, ranks);
            try (BufferedWriter w = Files.newBufferedWriter(f, StandardCharsets.UTF_8)) {
                w.write(sb.toString());
            }
            bytes += sb.length();
        }
        return bytes;
    }

    /** A rank's comm line: one communicator of all ranks, 8 per node, in canary mode. */
    private static void commLine(StringBuilder sb, String host, int pid, int ranks, String sha) {
        sb.append("{\"type\":\"comm\",\"comm\":-2863311531,\"host\":\"")
                .append(host)
                .append("\",\"pid\":")
                .append(pid)
                .append(",\"policy\":\"bench\",\"profile\":\"p\",\"sha256\":\"")
                .append(sha)
                .append("\",\"mode\":\"canary\",")
                .append("\"nRanks\":")
                .append(ranks)
                .append(",\"nNodes\":")
                .append(ranks / 8)
                .append(",\"calls\":5210,\"ruleHits\":5000,\"applied\":500,\"unaggregated\":0,\"at\":\"destroy\"}\n");
    }

    /**
     * One measured line of one arm at one size: 371 (NCCL's arm) or 41 (the policy's) collectives,
     * times uniform within +-10% of a mean that grows with the size, an 8-bucket histogram.
     */
    private static void measuredLine(
            StringBuilder sb,
            java.util.SplittableRandom rnd,
            String host,
            int pid,
            int rank,
            int ranks,
            String sha,
            long nBytes,
            boolean policy) {
        int count = policy ? 41 : 371;
        double mean = 20 + nBytes / 65536.0 * (policy ? 9 : 10);
        double sum = 0;
        double sq = 0;
        double min = Double.MAX_VALUE;
        double max = 0;
        int[] hist = new int[8];
        int base = 1 + 16 * (int) (Math.log(mean * 1000) / Math.log(2) - 8) - 4;
        for (int k = 0; k < count; k++) {
            double v = mean * (0.9 + 0.2 * rnd.nextDouble());
            sum += v;
            sq += v * v;
            min = Math.min(min, v);
            max = Math.max(max, v);
            hist[rnd.nextInt(8)]++;
        }
        rankLineHead(sb, "measured", host, pid, rank, ranks)
                .append(",\"policy\":\"bench\",\"sha256\":\"")
                .append(sha)
                .append("\",\"mode\":\"canary\",")
                .append("\"collective\":\"AllReduce\",\"nBytes\":")
                .append(nBytes)
                .append(",\"toBytes\":")
                .append(nBytes + nBytes / 4)
                .append(",\"bucket\":\"?\",\"arm\":\"")
                .append(policy ? "policy" : "nccl")
                .append("\",\"decided\":\"")
                .append(policy ? "TREE/SIMPLE" : "RING/SIMPLE")
                .append("\",\"decidedChannels\":0,\"executed\":\"")
                .append(policy ? "TREE/SIMPLE" : "RING/SIMPLE")
                .append("\",\"channels\":8,\"kernelChannels\":8,\"asDecided\":true,\"count\":")
                .append(count)
                .append(",\"timed\":")
                .append(count)
                .append(String.format(
                        Locale.ROOT,
                        ",\"meanUs\":%.1f,\"sumUs\":%.1f,\"sumSqUs\":%.1f,\"minUs\":%.1f,"
                                + "\"maxUs\":%.1f,\"p50Us\":%.1f,\"p95Us\":%.1f,\"p99Us\":%.1f,\"hist\":[",
                        sum / count,
                        sum,
                        sq,
                        min,
                        max,
                        mean,
                        mean * 1.08,
                        mean * 1.09));
        for (int k = 0; k < 8; k++) {
            sb.append(k == 0 ? "" : ",")
                    .append('[')
                    .append(base + k)
                    .append(',')
                    .append(hist[k])
                    .append(']');
        }
        sb.append("]}\n");
    }

    /** The fields a measured and a profiled line start with: type, comm, host, pid, rank and the shape. */
    private static StringBuilder rankLineHead(
            StringBuilder sb, String type, String host, int pid, int rank, int ranks) {
        return sb.append("{\"type\":\"")
                .append(type)
                .append("\",\"comm\":-2863311531,\"host\":\"")
                .append(host)
                .append("\",\"pid\":")
                .append(pid)
                .append(",\"rank\":")
                .append(rank)
                .append(",\"nRanks\":")
                .append(ranks)
                .append(",\"nNodes\":")
                .append(ranks / 8);
    }

    /** A rank's profiled line: every collective joined and timed. */
    private static void profiledLine(StringBuilder sb, String host, int pid, int rank, int ranks) {
        rankLineHead(sb, "profiled", host, pid, rank, ranks)
                .append(",\"profilerVersion\":5,\"joined\":true,\"collectives\":5210,\"unjoined\":0,\"untimed\":0,")
                .append("\"unaggregated\":0,\"decisionsDropped\":0}\n");
    }
}
