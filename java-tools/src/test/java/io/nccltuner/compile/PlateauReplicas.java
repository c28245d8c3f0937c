package io.nccltuner.compile;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;

/**
 * Simulated replicates of the two-rank H200 sweep (sweep CSV format), for held-out scoring where
 * only one real replicate exists.
 *
 * <p>Model, from the sweep's README (two ranks time-slicing one H200: small-message latency sits on
 * plateaus near 2.45, 3.5 and 4.5 ms) and from replicate 1 itself:
 *
 * <ul>
 *   <li>Each replicate-1 reading of configuration c at size s is split into a plateau and the work
 *       above it: readings under 5 ms are put on the nearest plateau (2450, 3500, 4530 us), larger
 *       ones on the plateau c sat on at its largest reading under 5 ms (4530 us if none).
 *   <li>c's regime at s is the plateau most of c's readings sit on at the five measured sizes
 *       around s (s, two below, two above; a tie keeps s's own); q(c) = (readings of c off their
 *       regime + 0.5) / (readings of c + 1) is how often a single reading of c jumps plateaus.
 *   <li>A simulated reading is work * exp(N(0, 0.02)) + the regime's plateau, except that with
 *       probability q(c) it sits on the other plateau (2450 <-> 4530 us; from 3500 us either),
 *       independently per configuration and size.
 *   <li>P95: with the frequency of c's replicate-1 rows whose P95 lies more than 1 ms above their
 *       median, the simulated P95 is the reading + 2080 us (a tail on the slow plateau); otherwise
 *       the reading + 0.2%.
 * </ul>
 *
 * <p>Rows keep replicate 1's order and set; {@code replicate} is the replicate number. The output
 * is deterministic for a given seed. {@code main} writes one replicate:
 * {@code PlateauReplicas REP1.csv SEED REPLICATE OUT.csv}.
 */
final class PlateauReplicas {
    static final double LOW = 2450;
    static final double MID = 3500;
    static final double HIGH = 4530;

    private PlateauReplicas() {}

    static String generate(String rep1Csv, long seed, int replicate) {
        List<String[]> rows = new ArrayList<>();
        String header = null;
        for (String line : rep1Csv.split("\n")) {
            if (line.isBlank() || line.startsWith("#")) {
                continue;
            }
            if (header == null) {
                header = line;
                continue;
            }
            rows.add(line.split(",", -1));
        }
        // columns:
        // collective,size_bytes,algorithm,protocol,max_channels,ranks,nodes,config,replicate,median_us,p95_us,busbw_gbps,wrong
        Map<String, double[]> lowCount = new HashMap<>(); // low, classified, tail flips, rows (per configuration)
        Map<String, Double> lastPlateau = new HashMap<>();
        double[] plateau = new double[rows.size()];
        for (int i = 0; i < rows.size(); i++) {
            String[] r = rows.get(i);
            double m = Double.parseDouble(r[9]);
            double p95 = Double.parseDouble(r[10]);
            double[] c = lowCount.computeIfAbsent(r[7], x -> new double[4]);
            c[3]++;
            if (p95 - m > 1000) {
                c[2]++;
            }
            if (m < 5000) {
                double p = nearest(m);
                plateau[i] = p;
                c[1]++;
                if (p == LOW) {
                    c[0]++;
                }
                lastPlateau.put(r[7], p);
            } else {
                plateau[i] = Double.NaN;
            }
        }
        for (int i = 0; i < rows.size(); i++) {
            if (Double.isNaN(plateau[i])) {
                plateau[i] = lastPlateau.getOrDefault(rows.get(i)[7], HIGH);
            }
        }
        // regime: majority plateau of the same configuration over the 5 sizes around (rows of one
        // configuration are consecutive and ascending in size in the sweep CSV)
        double[] regime = new double[rows.size()];
        Map<String, double[]> offRegime = new HashMap<>(); // off, rows
        for (int i = 0; i < rows.size(); i++) {
            Map<Double, Integer> votes = new HashMap<>();
            for (int j = i - 2; j <= i + 2; j++) {
                if (j >= 0 && j < rows.size() && rows.get(j)[7].equals(rows.get(i)[7])) {
                    votes.merge(plateau[j], 1, Integer::sum);
                }
            }
            double reg = plateau[i];
            int most = votes.get(plateau[i]);
            for (var v : votes.entrySet()) {
                if (v.getValue() > most) {
                    most = v.getValue();
                    reg = v.getKey();
                }
            }
            regime[i] = reg;
            double[] o = offRegime.computeIfAbsent(rows.get(i)[7], x -> new double[2]);
            o[1]++;
            if (reg != plateau[i]) {
                o[0]++;
            }
        }
        Random rnd = new Random(seed);
        StringBuilder out = new StringBuilder(
                        "# SIMULATED replicate " + replicate + " of the two-rank H200 sweep (not measured):"
                                + " io.nccltuner.compile.PlateauReplicas, seed " + seed + ", from replicate 1\n")
                .append(header)
                .append('\n');
        for (int i = 0; i < rows.size(); i++) {
            String[] r = rows.get(i);
            double[] c = lowCount.get(r[7]);
            double[] o = offRegime.get(r[7]);
            double q = (o[0] + 0.5) / (o[1] + 1);
            double pTail = c[2] / c[3];
            double work = Double.parseDouble(r[9]) - plateau[i];
            double base = regime[i];
            if (rnd.nextDouble() < q) {
                base = base == LOW ? HIGH : base == HIGH ? LOW : (rnd.nextBoolean() ? LOW : HIGH);
            }
            double t = Math.max(1.0, work * Math.exp(0.02 * rnd.nextGaussian()) + base);
            double p95 = rnd.nextDouble() < pTail ? t + (HIGH - LOW) : t * 1.002;
            long size = Long.parseLong(r[1]);
            double busbw = size / (t * 1e-6) / 1e9;
            out.append(String.join(
                            ",",
                            r[0],
                            r[1],
                            r[2],
                            r[3],
                            r[4],
                            r[5],
                            r[6],
                            r[7],
                            Integer.toString(replicate),
                            String.format(Locale.ROOT, "%.3f", t),
                            String.format(Locale.ROOT, "%.3f", p95),
                            String.format(Locale.ROOT, "%.4f", busbw),
                            "0"))
                    .append('\n');
        }
        return out.toString();
    }

    private static double nearest(double m) {
        double best = LOW;
        for (double p : new double[] {MID, HIGH}) {
            if (Math.abs(m - p) < Math.abs(m - best)) {
                best = p;
            }
        }
        return best;
    }

    public static void main(String[] args) throws IOException {
        String rep1 = Files.readString(Path.of(args[0]), StandardCharsets.UTF_8);
        Files.writeString(
                Path.of(args[3]),
                generate(rep1, Long.parseLong(args[1]), Integer.parseInt(args[2])),
                StandardCharsets.UTF_8);
    }
}
