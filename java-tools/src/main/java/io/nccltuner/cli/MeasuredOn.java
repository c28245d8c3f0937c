package io.nccltuner.cli;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The GPUs and NCCL releases a file says it ran on, for warning when measurements price a
 * communicator of another machine: nccl-tests' device lines ({@code #  Rank  0 Group  0 Pid 4001
 * on node-a device  0 [0000:17:00] NVIDIA H100 80GB HBM3}), its header's {@code
 * nccl-library=22907} (NCCL_VERSION_CODE: major x 10000 + minor x 100 + patch) and NCCL's own
 * {@code NCCL version 2.23.4+cuda12.6} line. Files that print neither (a sweep CSV) say nothing.
 *
 * @param gpus GPU names, sorted
 * @param ncclVersions NCCL releases as {@code major.minor.patch}, sorted
 */
record MeasuredOn(TreeSet<String> gpus, TreeSet<String> ncclVersions) {
    private static final Pattern DEVICE = Pattern.compile(
            "#\\s*Rank\\s+\\d+\\s+Group\\s+\\d+\\s+Pid\\s+\\d+\\s+on\\s+\\S+\\s+device\\s+\\d+\\s+\\[[^\\]]*\\]\\s+(.+?)\\s*$");
    private static final Pattern LIBRARY = Pattern.compile("nccl-library=(\\d{5,})");
    private static final Pattern VERSION = Pattern.compile("NCCL version (\\d+\\.\\d+\\.\\d+)");

    /**
     * What several files or folders say about their machines, together ({@link #of(Path)} of each).
     *
     * @param fs files or folders
     * @return the GPUs and releases named, empty sets when none
     * @throws IOException if reading fails
     */
    static MeasuredOn of(List<Path> fs) throws IOException {
        TreeSet<String> gpus = new TreeSet<>();
        TreeSet<String> versions = new TreeSet<>();
        for (Path f : fs) {
            MeasuredOn one = of(f);
            gpus.addAll(one.gpus());
            versions.addAll(one.ncclVersions());
        }
        return new MeasuredOn(gpus, versions);
    }

    /**
     * Reads what a file (or every *.csv and *.txt of a folder, and of a {@code nccl-tuner sweep}
     * folder the outputs its manifest.json lists, {@code runs/<id>.txt}) says about its machine.
     * Before the ninth newcomer walk a sweep folder said nothing (its outputs are one level down), so
     * {@code explain --measurements SWEEP_DIR} did not warn where the same output given alone did.
     *
     * @param f a file or folder
     * @return the GPUs and releases named, empty sets when none
     * @throws IOException if reading fails (a sweep folder's manifest.json among them)
     */
    static MeasuredOn of(Path f) throws IOException {
        TreeSet<String> gpus = new TreeSet<>();
        TreeSet<String> versions = new TreeSet<>();
        List<Path> files;
        if (Files.isDirectory(f)) {
            java.util.List<Path> all = new java.util.ArrayList<>();
            try (var s = Files.list(f)) {
                s.filter(p -> p.toString().endsWith(".csv") || p.toString().endsWith(".txt"))
                        .sorted()
                        .forEach(all::add);
            }
            if (io.nccltuner.sweep.SweepDirectory.isSweep(f)) {
                for (io.nccltuner.sweep.Manifest.RunRecord r : io.nccltuner.sweep.Manifest.read(
                                f.resolve(io.nccltuner.sweep.Manifest.FILE))
                        .runs()) {
                    Path out = f.resolve(r.file());
                    if (Files.isRegularFile(out) && !all.contains(out)) {
                        all.add(out);
                    }
                }
            }
            files = all;
        } else {
            files = List.of(f);
        }
        for (Path p : files) {
            for (String l : Files.readAllLines(p, StandardCharsets.ISO_8859_1)) {
                Matcher m = DEVICE.matcher(l);
                if (m.find()) {
                    gpus.add(m.group(1));
                }
                m = LIBRARY.matcher(l);
                if (m.find()) {
                    versions.add(io.nccltuner.policy.Signature.versionString(Integer.parseInt(m.group(1))));
                }
                m = VERSION.matcher(l);
                if (m.find()) {
                    versions.add(m.group(1));
                }
            }
        }
        return new MeasuredOn(gpus, versions);
    }

    /**
     * The compute capability (x 10) of a GPU from its name, as NVIDIA's data sheets give it.
     *
     * @param gpu a device name, e.g. "NVIDIA H100 80GB HBM3"
     * @return 70 (V100), 75 (T4), 80 (A100, A30), 86 (A10, A40), 89 (L4, L40), 90 (H100, H200,
     *     GH200), 100 (B200, GB200, B300, GB300), or 0 when the name is not one of these
     */
    static int computeCapability(String gpu) {
        String g = gpu.toUpperCase(Locale.ROOT);
        if (g.matches(".*\\bG?B[23]00\\b.*")) {
            return 100;
        }
        if (g.matches(".*\\b(H100|H200|H800|H20|GH200)\\b.*")) {
            return 90;
        }
        if (g.matches(".*\\b(L4|L40S?)\\b.*")) {
            return 89;
        }
        if (g.matches(".*\\b(A10|A40|A6000)\\b.*")) {
            return 86;
        }
        if (g.matches(".*\\b(A100|A800|A30)\\b.*")) {
            return 80;
        }
        if (g.matches(".*\\bT4\\b.*")) {
            return 75;
        }
        if (g.matches(".*\\bV100\\b.*")) {
            return 70;
        }
        return 0;
    }

    /**
     * The warnings when measurements (this) were taken on another machine than a log ran on: both
     * name NCCL releases and share none, or both name GPUs and the names differ. {@code explain}
     * compares releases per communicator itself and uses {@link #otherGpus}; {@code try
     * --nccl-log} uses both.
     *
     * @param measurements the --measurements path, for the message
     * @param log what the log names
     * @param logFile the log, for the message
     * @return the warnings, each starting {@code warning: --measurements }; empty when they agree
     *     or either side is silent
     */
    List<String> otherMachine(Path measurements, MeasuredOn log, Path logFile) {
        List<String> out = new java.util.ArrayList<>();
        if (!ncclVersions.isEmpty()
                && !log.ncclVersions().isEmpty()
                && java.util.Collections.disjoint(ncclVersions, log.ncclVersions())) {
            out.add("warning: --measurements " + measurements + ": measured with NCCL "
                    + String.join(", ", ncclVersions)
                    + ", but " + logFile + " ran NCCL " + String.join(", ", log.ncclVersions())
                    + "; the times may not hold for that release's picks");
        }
        String gpus = otherGpus(measurements, log, logFile);
        if (gpus != null) {
            out.add(gpus);
        }
        return out;
    }

    /**
     * @param measurements the --measurements path, for the message
     * @param log what the log names
     * @param logFile the log, for the message
     * @return {@code warning: --measurements M: measured on G, but LOG ran on G2; the times price
     *     another machine}, or null when either names no GPU or they name the same
     */
    String otherGpus(Path measurements, MeasuredOn log, Path logFile) {
        return otherGpus(measurements.toString(), log, logFile);
    }

    /**
     * {@link #otherGpus(Path, MeasuredOn, Path)} for several {@code --measurements}.
     *
     * @param measurements the --measurements paths as the message names them ("a.csv, b/")
     * @param log what the log names
     * @param logFile the log, for the message
     * @return the warning, or null
     */
    String otherGpus(String measurements, MeasuredOn log, Path logFile) {
        if (gpus.isEmpty() || log.gpus().isEmpty() || gpus.equals(log.gpus())) {
            return null;
        }
        return "warning: --measurements " + measurements + ": measured on " + String.join(", ", gpus) + ", but "
                + logFile + " ran on " + String.join(", ", log.gpus()) + "; the times price another machine";
    }
}
