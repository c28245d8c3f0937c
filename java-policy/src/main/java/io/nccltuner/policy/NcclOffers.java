package io.nccltuner.policy;

import io.nccltuner.policy.Policy.Rule;

/**
 * What NCCL never offers a tuner, whatever the communicator, for the plugin's CSV reader, import
 * and validate alike.
 *
 * <p>NCCL facts (src/graph/tuning.cc, ncclTopoTuneModel, the same in 2.23 .. 2.30.7; 2.19 .. 2.22
 * offer a subset): an algorithm/protocol pair NCCL skips there keeps bandwidth 0, and
 * updateCollCostTable (src/enqueue.cc) leaves its cost-table entry at -1, so a tuner can never
 * select it.
 */
public final class NcclOffers {
    private NcclOffers() {}

    /**
     * Why NCCL never offers a candidate for a collective, whatever the communicator.
     *
     * @param c the collective
     * @param a the algorithm
     * @param p the protocol
     * @return the reason, or null when NCCL may offer it
     */
    public static String neverOffered(Collective c, Algorithm a, Protocol p) {
        String src = " (NCCL 2.23 .. 2.30 src/graph/tuning.cc, ncclTopoTuneModel)";
        switch (c) {
            case Broadcast, Reduce -> {
                if (a != Algorithm.RING) {
                    return "NCCL offers only RING for " + c + src;
                }
            }
            case AllGather, ReduceScatter -> {
                if (a != Algorithm.RING && a != Algorithm.PAT && a != Algorithm.NVLS && a != Algorithm.COLLNET_DIRECT) {
                    return "NCCL offers only RING, PAT, NVLS and COLLNET_DIRECT for " + c + src;
                }
            }
            case AllReduce -> {
                if (a == Algorithm.PAT) {
                    return "NCCL never offers PAT for AllReduce" + src;
                }
            }
            default -> {
                return null;
            }
        }
        if ((a == Algorithm.NVLS || a == Algorithm.NVLS_TREE || a == Algorithm.PAT) && p != Protocol.SIMPLE) {
            return "NCCL offers " + a + " only with SIMPLE" + src;
        }
        return null;
    }

    /**
     * A rule's collective and byte range as messages name it.
     *
     * @param r the rule
     * @return {@code AllReduce [1 MiB, 2 MiB)}, with {@code , numPipeOps 1..4} when not any
     */
    public static String describe(Rule r) {
        return r.collective() + " " + ByteSize.range(r.fromBytes(), r.toBytes())
                + (r.numPipeOps().equals(Policy.Range.ANY) ? "" : ", numPipeOps " + r.numPipeOps());
    }
}
