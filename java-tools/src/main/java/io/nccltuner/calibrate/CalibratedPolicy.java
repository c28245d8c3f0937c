package io.nccltuner.calibrate;

import io.nccltuner.compile.Compiler;
import io.nccltuner.model.AlgoProto;
import io.nccltuner.policy.HardwareMatch;
import io.nccltuner.policy.Mode;
import io.nccltuner.policy.Policy;
import io.nccltuner.policy.Policy.Profile;
import io.nccltuner.policy.Policy.Range;
import io.nccltuner.policy.Policy.Rule;
import io.nccltuner.policy.TunerConstant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The policy a calibration writes: per measured shape a profile (exact nRanks and nNodes) with the
 * fitted constants and the measured rules that the calibrated model does not match, then one
 * profile over a range of nNodes (and the hardware, when named) with the fitted constants alone.
 * The first matching profile applies (docs/policy-format.md), so the measured shapes keep their
 * rules and every other shape in the range gets the calibrated model.
 *
 * <p>A measured rule is kept unless the calibrated model's pick measured faster than the rule's
 * first candidate by more than 2% at every measured size the rule covers: rules that beat the
 * model are kept, and so are rules that tie it (they change nothing while the constants are set,
 * and under tuner v3/v4, which sets no constants, they are what the profile falls back to).
 */
public final class CalibratedPolicy {
    private CalibratedPolicy() {}

    /**
     * What the builder did with the measured rules.
     *
     * @param policy the policy
     * @param kept rules kept, as "profile: collective [from, to) candidate"
     * @param dropped rules dropped (the calibrated model measured faster)
     * @param beat how many kept rules beat the calibrated model (the others tie it)
     */
    public record Built(Policy policy, List<String> kept, List<String> dropped, int beat) {}

    /**
     * Builds the policy.
     *
     * @param name the policy's name
     * @param constants the fitted constants, as the profiles write them
     * @param sweeps the measured shapes
     * @param measured the measured-rules policy of the same sweeps ({@code nccl-tuner compile})
     * @param nNodes the nNodes range of the calibrated profile
     * @param hardware the hardware the calibrated profile names ({@link HardwareMatch#ANY}: none)
     * @return the policy
     */
    public static Built build(
            String name,
            List<TunerConstant> constants,
            List<SweepInputs> sweeps,
            Compiler.Compilation measured,
            Range nNodes,
            HardwareMatch hardware) {
        ModelConstants k = ModelConstants.defaults();
        for (TunerConstant c : constants) {
            k = k.with(c);
        }
        List<Profile> profiles = new ArrayList<>();
        List<String> kept = new ArrayList<>();
        List<String> dropped = new ArrayList<>();
        int beat = 0;
        for (Profile p : measured.policy().profiles()) {
            SweepInputs s = sweeps.stream()
                    .filter(x -> p.nRanks().contains(x.shape().topology().nRanks())
                            && p.nNodes().contains(x.shape().topology().nNodes()))
                    .findFirst()
                    .orElse(null);
            List<Rule> rules = new ArrayList<>();
            for (Rule r : p.rules()) {
                Verdict v = s == null
                        ? Verdict.BEATS
                        : verdict(r, s.shape(), TuneModel.of(s.shape().topology(), k));
                String what = p.name() + ": " + r.collective() + " "
                        + io.nccltuner.policy.ByteSize.range(r.fromBytes(), r.toBytes()) + " "
                        + r.candidates().getFirst().algorithm() + "/"
                        + r.candidates().getFirst().protocol();
                if (v == Verdict.LOSES) {
                    dropped.add(what);
                } else {
                    rules.add(r);
                    kept.add(what + (v == Verdict.BEATS ? " (beats the calibrated model)" : " (ties it)"));
                    beat += v == Verdict.BEATS ? 1 : 0;
                }
            }
            profiles.add(new Profile(p.name(), p.nRanks(), p.nNodes(), rules, p.hardware(), constants));
        }
        profiles.add(new Profile("calibrated", Range.ANY, nNodes, List.of(), hardware, constants));
        String desc = String.format(
                Locale.ROOT,
                "Calibrated by nccl-tuner calibrate: %d constants of NCCL's model fitted "
                        + "to %d measured shapes, for nNodes %s; measured rules kept where the calibrated model does not match them.",
                constants.size(),
                sweeps.size(),
                nNodes);
        return new Built(new Policy(name, Mode.ENFORCE, desc, profiles, null), kept, dropped, beat);
    }

    private enum Verdict {
        BEATS,
        TIES,
        LOSES
    }

    /** How the calibrated model's pick compares with a rule at the measured sizes the rule covers. */
    private static Verdict verdict(Rule r, Calibrator.Shape s, TuneModel m) {
        boolean anyBeat = false;
        boolean allLose = true;
        int covered = 0;
        AlgoProto cand = new AlgoProto(
                r.candidates().getFirst().algorithm(), r.candidates().getFirst().protocol());
        for (Calibrator.Point p : s.points()) {
            if (p.collective() != r.collective()
                    || !r.containsBytes(p.nBytes())
                    || !p.times().containsKey(cand)
                    || r.candidates().getFirst().channels() != 0) {
                continue;
            }
            AlgoProto pick =
                    m.pick(p.collective(), p.nBytes(), List.copyOf(p.times().keySet()));
            if (pick == null) {
                continue;
            }
            covered++;
            double tr = p.times().get(cand);
            double tm = p.times().get(pick);
            anyBeat |= tr < tm / 1.02;
            allLose &= tm < tr / 1.02;
        }
        if (covered == 0 || anyBeat) {
            return Verdict.BEATS;
        }
        return allLose ? Verdict.LOSES : Verdict.TIES;
    }
}
