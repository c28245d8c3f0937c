package io.nccltuner.model;

/**
 * What the cost function needs to know about a communicator besides its table.
 *
 * @param nRanks ranks in the communicator, >= 1
 * @param nNodes nodes, >= 1
 * @param nChannels the communicator's collective channels ({@code comm->nChannels}, printed as "N
 *     coll channels"), or 0 when unknown
 * @param minCompCapLo lowest compute capability (times 10, e.g. 90 for Hopper) the smallest GPU of
 *     the communicator may have
 * @param minCompCapHi highest value it may have; {@code minCompCapLo == minCompCapHi} when known
 * @param mnnvl whether the log reported a multi-node NVLink communicator ("MNNVL 1")
 * @param x86 whether the host CPU is x86, or null when unknown (only NVLS_TREE in 2.29+ cares)
 */
public record CommShape(
        int nRanks, int nNodes, int nChannels, int minCompCapLo, int minCompCapHi, boolean mnnvl, Boolean x86) {
    /** Upper bound used for an unknown compute capability. */
    public static final int CC_MAX = 1000;

    public CommShape {
        if (nRanks < 1 || nNodes < 1 || nNodes > nRanks) {
            throw new IllegalArgumentException("nRanks " + nRanks + ", nNodes " + nNodes);
        }
        if (nChannels < 0 || nChannels > NcclFacts.MAX_CHANNELS) {
            throw new IllegalArgumentException(
                    "nChannels " + nChannels + " outside [0, " + NcclFacts.MAX_CHANNELS + "]");
        }
        if (minCompCapLo < 0 || minCompCapLo > minCompCapHi) {
            throw new IllegalArgumentException("compute capability range " + minCompCapLo + ".." + minCompCapHi);
        }
    }

    /**
     * @return a shape with unknown compute capability and CPU
     */
    public static CommShape of(int nRanks, int nNodes, int nChannels) {
        return new CommShape(nRanks, nNodes, nChannels, 0, CC_MAX, false, null);
    }

    /**
     * @param cc compute capability times 10 (70 for V100, 90 for H100/H200)
     * @return this shape with a known minimum compute capability
     */
    public CommShape withComputeCapability(int cc) {
        return new CommShape(nRanks, nNodes, nChannels, cc, cc, mnnvl, x86);
    }

    /** @return this shape with the compute capability limited to [lo, hi] */
    public CommShape withComputeCapabilityRange(int lo, int hi) {
        return new CommShape(nRanks, nNodes, nChannels, lo, hi, mnnvl, x86);
    }

    /** @return this shape with nChannels set */
    public CommShape withChannels(int channels) {
        return new CommShape(nRanks, nNodes, channels, minCompCapLo, minCompCapHi, mnnvl, x86);
    }

    /** @return "90", "80..1000" style text, or "unknown" */
    public String computeCapabilityText() {
        if (minCompCapLo == 0 && minCompCapHi == CC_MAX) {
            return "unknown";
        }
        if (minCompCapLo == minCompCapHi) {
            return Integer.toString(minCompCapLo);
        }
        if (minCompCapHi == CC_MAX) {
            return ">= " + minCompCapLo;
        }
        return minCompCapLo == 0 ? "< " + (minCompCapHi + 1) : minCompCapLo + ".." + minCompCapHi;
    }
}
