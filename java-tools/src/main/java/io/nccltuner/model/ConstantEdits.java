package io.nccltuner.model;

import io.nccltuner.policy.Algorithm;
import io.nccltuner.policy.Policy;
import io.nccltuner.policy.Protocol;
import io.nccltuner.policy.TunerConstant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * What a profile's {@code constants:} (written into NCCL's ncclTunerConstants_v5_t at init, tuner
 * v5+) do to the cost model, so that {@code explain --policy} predicts with them.
 *
 * <p>Modelled exactly: {@code baseLatencies.ALGO.PROTO}. NCCL starts every entry's latency from
 * baseLatencies[algorithm][protocol] and adds the hop terms to it (src/graph/tuning.cc, 2.28.3 ..
 * 2.30.7), except NVLS, whose latency it sets from the link latency alone; so a changed base moves
 * the logged latency of that entry, for every collective, by (new - NCCL's default). The defaults
 * are those of NCCL 2.28.3 .. 2.30.7 (the same in both): TREE 6.8/14.0/8.4, RING 6.6/14.0/8.4,
 * PAT 8.0/8.0/8.0 us (LL/LL128/SIMPLE), 0 for the CollNet and NVLS algorithms.
 *
 * <p>Not modelled (listed as such): hwLatencies (their weight is a hop count of the topology, which
 * the log does not print) and the bandwidth caps (llMaxBws, perChMax*Bws: NCCL takes a minimum of
 * them and topology figures the log does not print). The logged table is taken to have been
 * printed with NCCL's defaults, i.e. without this profile's constants.
 */
public final class ConstantEdits {
    private ConstantEdits() {}

    /** NCCL's default baseLatencies, microseconds, [algorithm][protocol] (2.28.3 .. 2.30.7). */
    static final double[][] DEFAULT_BASE_LATENCIES = {
        {6.8, 14.0, 8.4}, {6.6, 14.0, 8.4}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {8.0, 8.0, 8.0}
    };

    /**
     * @param model the value as the logged table says
     * @param applied one line per constant applied to the model
     * @param notModelled one line per constant the model cannot follow
     */
    public record Result(CostModel model, List<String> applied, List<String> notModelled) {}

    /**
     * Applies a profile's constants to a model.
     *
     * @param model the model from NCCL's logged table
     * @param profile the profile (its constants may be empty)
     * @return the edited model and what was and was not applied
     */
    public static Result apply(CostModel model, Policy.Profile profile) {
        List<String> applied = new ArrayList<>();
        List<String> not = new ArrayList<>();
        CostModel m = model;
        for (TunerConstant k : profile.constants()) {
            if (!k.array().equals("baseLatencies")) {
                not.add(k.name() + " = " + k.value() + " " + k.unit());
                continue;
            }
            Algorithm a = Algorithm.ofId(k.index().get(0));
            Protocol p = Protocol.ofId(k.index().get(1));
            if (a == Algorithm.NVLS) {
                not.add(k.name() + " = " + k.value() + " us (NVLS latency does not start from baseLatencies)");
                continue;
            }
            double delta = k.value() - DEFAULT_BASE_LATENCIES[a.id()][p.id()];
            m = m.withLatencyShift(new AlgoProto(a, p), delta);
            applied.add(
                    String.format(Locale.ROOT, "%s = %s us: %s/%s latency %+.2f us", k.name(), k.value(), a, p, delta));
        }
        return new Result(m, applied, not);
    }
}
