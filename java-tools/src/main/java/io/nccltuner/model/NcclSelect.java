package io.nccltuner.model;

import io.nccltuner.engine.Engine;
import io.nccltuner.policy.Algorithm;
import io.nccltuner.policy.Protocol;
import java.lang.foreign.MemorySegment;
import java.util.List;

/**
 * NCCL's selection over a cost table, for the tools: every pick the offline model, the
 * calibration and replay make goes through {@link Engine#ncclPick}, the rule's one home (the
 * strict minimum of the entries {@code >= 0} as floats, scanned in order from
 * {@link Engine#NCCL_START_MINIMUM}, 3600000000 us; src/enqueue.cc topoGetAlgoInfo, 2.19 .. 2.30,
 * and getAlgoInfo of 2.18). Ties keep the earlier entry; NaN and entries at or above the starting
 * minimum are never picked. A tool that computes its times as doubles passes them here as NCCL's
 * cost table holds them, as floats.
 */
public final class NcclSelect {
    private NcclSelect() {}

    /**
     * @param costTable numAlgo x numProto times in microseconds, algorithm-major; -1 = ignore
     * @param numProto protocols per algorithm
     * @return NCCL's pick, or null if no entry is selectable (NCCL then errors, or before 2.24
     *     falls back to its Ring backup)
     */
    public static AlgoProto pick(float[] costTable, int numProto) {
        int best = index(costTable);
        return best < 0 ? null : new AlgoProto(Algorithm.ofId(best / numProto), Protocol.ofId(best % numProto));
    }

    /**
     * @param times times in microseconds in NCCL's scan order; negative = not offered
     * @return the index NCCL picks, or -1 if none is selectable
     */
    public static int index(float[] times) {
        return Engine.ncclPick(MemorySegment.ofArray(times), 1, times.length);
    }

    /**
     * NCCL's pick among entries whose times a tool computed as doubles.
     *
     * @param entries the entries in NCCL's scan order (algorithm-major)
     * @param times their times, microseconds; negative or NaN = not offered
     * @param <T> the entry type
     * @return the entry NCCL picks, or null if none is selectable
     */
    public static <T> T pick(List<T> entries, double[] times) {
        float[] t = new float[times.length];
        for (int i = 0; i < t.length; i++) {
            t[i] = (float) times[i];
        }
        int best = index(t);
        return best < 0 ? null : entries.get(best);
    }
}
