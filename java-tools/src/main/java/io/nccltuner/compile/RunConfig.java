package io.nccltuner.compile;

import io.nccltuner.policy.Algorithm;
import io.nccltuner.policy.Protocol;

/**
 * The configuration a measurement ran with: what was forced through NCCL_ALGO, NCCL_PROTO and
 * NCCL_MAX_NCHANNELS (or NCCL_MAX_CTAS), or nothing at all ({@link #AUTO}: NCCL's own pick).
 *
 * <p>A candidate for a policy names both an algorithm and a protocol; the channel count is
 * optional (0 = NCCL decides), as in a policy candidate, because a tuner can only set NCCL's
 * nMaxChannels (NCCL src/enqueue.cc: a non-zero nChannels from getCollInfo replaces it).
 *
 * @param algorithm forced algorithm, or null when NCCL chose it
 * @param protocol forced protocol, or null when NCCL chose it
 * @param channels forced (maximum) channel count, 1..64, or 0 when NCCL chose it
 */
public record RunConfig(Algorithm algorithm, Protocol protocol, int channels) {
    /** Nothing forced: the run measures NCCL's own choice. */
    public static final RunConfig AUTO = new RunConfig(null, null, 0);

    /** @return whether nothing was forced */
    public boolean isAuto() {
        return algorithm == null && protocol == null && channels == 0;
    }

    /** @return whether algorithm and protocol are both known, so a policy can name it */
    public boolean isCandidate() {
        return algorithm != null && protocol != null;
    }

    /** @return "RING/LL128", "RING/SIMPLE/1ch", "auto", or "auto/LL" for partial forcing */
    public String label() {
        if (isAuto()) {
            return "auto";
        }
        String s =
                (algorithm == null ? "auto" : algorithm.name()) + "/" + (protocol == null ? "auto" : protocol.name());
        return withChannels(s, channels);
    }

    /**
     * How the tools spell a configuration with its channel count (a measured one's label, a logged
     * decision's pick).
     *
     * @param algoProto the configuration, "RING/SIMPLE"
     * @param channels its channel count, 0 when NCCL decides it
     * @return "RING/SIMPLE" (0 channels) or "RING/SIMPLE/8ch"
     */
    public static String withChannels(String algoProto, int channels) {
        return channels == 0 ? algoProto : algoProto + "/" + channels + "ch";
    }

    @Override
    public String toString() {
        return label();
    }
}
