package io.nccltuner.compile;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nccltuner.compile.Compiler.Compilation;
import io.nccltuner.compile.HeldOut.Score;
import io.nccltuner.policy.Mode;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Held-out scoring of the compile on the two-rank H200 sweep: compile on one replicate, score on
 * the other, both ways. Replicate 2 is simulated ({@link PlateauReplicas}, seed 2) because only
 * replicate 1 was measured; the figure is printed on every {@code make test}.
 */
@Timeout(120)
class HeldOutScoringTest {
    static final String REP1 = "h200-2rank-sweep_allreduce.rep1.csv";
    static final String REP2 = "h200-2rank-sweep_allreduce.rep2-simulated.csv";

    static Score heldOut(MeasurementSet compileOn, MeasurementSet scoreOn, Compiler.Options o) throws Exception {
        Compilation c = Compiler.compile(compileOn, o);
        return HeldOut.score(c.policy(), scoreOn);
    }

    static String pct(double f) {
        return String.format(Locale.ROOT, "%.1f%%", f * 100);
    }

    static String line(String what, Score s) {
        var w = s.worst();
        return String.format(
                Locale.ROOT,
                "%-34s mean regret %7s (NCCL's own picks %7s), worst %7s at %s (%s)",
                what,
                pct(s.meanPolicyRegret()),
                pct(s.meanNcclRegret()),
                pct(w.policyRegret()),
                io.nccltuner.policy.ByteSize.format(w.nBytes()),
                w.ran().label());
    }

    @Test
    void simulatedReplicate2IsReproducible() throws Exception {
        String rep1 = Files.readString(Fixtures.path(REP1), StandardCharsets.UTF_8);
        assertEquals(
                PlateauReplicas.generate(rep1, 2, 2), Files.readString(Fixtures.path(REP2), StandardCharsets.UTF_8));
    }

    @Test
    void robustCompileHeldOutRegretIsAtMostFivePercent() throws Exception {
        MeasurementSet rep1 = Fixtures.read(REP1);
        MeasurementSet rep2 = Fixtures.read(REP2);
        Compiler.Options robust = Compiler.Options.defaults("held-out");
        Compiler.Options perSize =
                new Compiler.Options(0.05, 2.0, 0.0, false, Compiler.Merge.RANKING, "held-out", Mode.ENFORCE, null, 0);
        Score a = heldOut(rep1, rep2, robust);
        Score b = heldOut(rep2, rep1, robust);
        Score a0 = heldOut(rep1, rep2, perSize);
        Score b0 = heldOut(rep2, rep1, perSize);
        double mean = (a.meanPolicyRegret() + b.meanPolicyRegret()) / 2;
        double mean0 = (a0.meanPolicyRegret() + b0.meanPolicyRegret()) / 2;
        System.out.println("held-out scoring, AllReduce nRanks 2 nNodes 2, 25 sizes 4 B .. 64 MiB (rep2 simulated):");
        System.out.println("  " + line("robust compile rep1 -> score rep2", a));
        System.out.println("  " + line("robust compile rep2 -> score rep1", b));
        System.out.println("  " + line("per-size compile rep1 -> rep2", a0));
        System.out.println("  " + line("per-size compile rep2 -> rep1", b0));
        System.out.println(String.format(
                Locale.ROOT, "  HELD-OUT MEAN REGRET robust %s (target <= 5%%), per-size %s", pct(mean), pct(mean0)));
        assertEquals(25, a.sizes().size());
        assertEquals(25, b.sizes().size());
        assertTrue(mean <= 0.05, "held-out mean regret " + pct(mean));
        assertTrue(mean < mean0, "robust " + pct(mean) + " vs per-size " + pct(mean0));
    }

    @Test
    void furtherSimulatedReplicatesArePrinted() throws Exception {
        String rep1Text = Files.readString(Fixtures.path(REP1), StandardCharsets.UTF_8);
        MeasurementSet rep1 = Fixtures.read(REP1);
        Compilation c = Compiler.compile(rep1, Compiler.Options.defaults("held-out"));
        double sum = 0;
        double worst = 0;
        int n = 0;
        for (int seed = 3; seed <= 12; seed++) {
            Path f = Files.createTempFile("rep" + seed, ".csv");
            try {
                Files.writeString(f, PlateauReplicas.generate(rep1Text, seed, seed), StandardCharsets.UTF_8);
                MeasurementSet s = new MeasurementSet();
                MeasurementCsv.parse(f, s);
                double m = HeldOut.score(c.policy(), s).meanPolicyRegret();
                sum += m;
                worst = Math.max(worst, m);
                n++;
            } finally {
                Files.deleteIfExists(f);
            }
        }
        System.out.println(String.format(
                Locale.ROOT,
                "held-out: policy compiled on rep1, scored on 10 further simulated replicates (seeds 3..12): mean %s, worst %s",
                pct(sum / n),
                pct(worst)));
        assertEquals(10, n);
        assertTrue(sum / n <= 0.05, pct(sum / n));
    }
}
