package io.nccltuner.model;

import io.nccltuner.policy.Algorithm;
import io.nccltuner.policy.Collective;
import io.nccltuner.policy.PolicyLoader;
import io.nccltuner.policy.Protocol;

/**
 * The constants and version differences of NCCL's per-call cost function ({@code
 * ncclTopoGetAlgoTime}, src/graph/tuning.cc) and of the candidate filter around it ({@code
 * updateCollCostTable}, src/enqueue.cc), as read in NVIDIA/nccl tags v2.18.6-1 .. v2.30.7-1. Facts
 * only: no NCCL code is copied; each method names the release range and file its answer comes from.
 */
public final class NcclFacts {
    private NcclFacts() {}

    /** Oldest release whose cost function these facts were checked against. */
    public static final NcclVersion OLDEST_CHECKED = new NcclVersion(2, 18, 0);

    /** Newest release whose cost function these facts were checked against. */
    public static final NcclVersion NEWEST_CHECKED = new NcclVersion(2, 30, 7);

    /**
     * NCCL's {@code treeCorrectionFactor[protocol][logSize]}, identical in 2.18 .. 2.29 (23 entries)
     * and extended by a 24th entry (1.0, 1.0, 0.9) in 2.30. Indexed by protocol id and {@code
     * log2(nBytes >> 6)}, so entry 0 covers 64 .. 127 B and entry 22 covers 256 .. 512 MiB.
     */
    private static final double[][] TREE_CORRECTION = {
        {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0, 1.0},
        {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0, 1.0},
        {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9, .9}
    };

    /** Ring/SIMPLE AllReduce latency factor when minCompCap is below 80 (tuning.cc, all releases). */
    public static final double RING_PLATEAU_PRE_AMPERE = 1.9;

    /** Ring/SIMPLE AllReduce latency factor when minCompCap is 80 or more (tuning.cc). */
    public static final double RING_PLATEAU = 1.4;

    /**
     * The plateau applies once {@code nBytes / (nChannels * nRanks) >= 64} (integer division).
     */
    public static final long RING_PLATEAU_BYTES_PER_RANK_CHANNEL = 64;

    /** NCCL_MAXCHANNELS: the largest possible comm nChannels; its one home is {@link PolicyLoader#MAX_CHANNELS}. */
    public static final int MAX_CHANNELS = PolicyLoader.MAX_CHANNELS;

    /**
     * Tree correction factor for one protocol and size, or 1.0 where NCCL applies none.
     *
     * <p>{@code logSize = log2i(nBytes >> 6)}. Up to 2.21 log2i(0) is 0 (a shift loop in
     * src/include/utils.h), so sizes below 64 B take entry 0; from 2.22 log2i is log2Down, which
     * returns -1 for 0, and tuning.cc checks {@code logSize >= 0}, so they take no correction. 2.18 ..
     * 2.30 apply it for {@code logSize < 23} (2.30's 24th entry is only read for NVLS_TREE).
     *
     * @param version NCCL release
     * @param protocol protocol
     * @param nBytes message size in bytes (unsigned)
     * @return the factor the Tree bandwidth is multiplied by, in (0, 1]
     */
    public static double treeCorrection(NcclVersion version, Protocol protocol, long nBytes) {
        int logSize = logSize(version, nBytes);
        if (logSize < 0 || logSize >= 23) {
            return 1.0;
        }
        return TREE_CORRECTION[protocol.id()][logSize];
    }

    /**
     * NVLS_TREE correction from 2.29 (tuning.cc): the Tree table applied to NVLS_TREE AllReduce for
     * {@code 0 <= logSize < 24} when minCompCap >= 100 and the CPU is x86. 2.29's rows have 23
     * entries, so its logSize 23 (512 MiB .. 1 GiB) reads past the row; the model uses 2.30's 24th
     * entry there.
     *
     * @param protocol protocol
     * @param nBytes message size in bytes
     * @return the factor, 1.0 outside the corrected range
     */
    public static double nvlsTreeCorrection(Protocol protocol, long nBytes) {
        int logSize = 63 - Long.numberOfLeadingZeros(nBytes >>> 6);
        if (logSize < 0 || logSize >= 24) {
            return 1.0;
        }
        return TREE_CORRECTION[protocol.id()][logSize];
    }

    /** @return whether this release has the NVLS_TREE size correction (2.29 and later) */
    public static boolean hasNvlsTreeCorrection(NcclVersion version) {
        return version.atLeast(2, 29);
    }

    /**
     * Whether the Tree correction applies to a collective: every collective up to 2.22, only
     * AllReduce from 2.23 (tuning.cc adds {@code coll == ncclFuncAllReduce} in 2.23).
     */
    public static boolean treeCorrectionApplies(NcclVersion version, Collective collective) {
        return !version.atLeast(2, 23) || collective == Collective.AllReduce;
    }

    /**
     * NCCL's {@code log2i(nBytes >> 6)} for a release (see {@link #treeCorrection}).
     *
     * @return floor(log2(nBytes / 64)); for nBytes below 64: 0 up to 2.21, -1 from 2.22
     */
    public static int logSize(NcclVersion version, long nBytes) {
        long shifted = nBytes >>> 6;
        if (shifted == 0) {
            return version.atLeast(2, 22) ? -1 : 0;
        }
        return 63 - Long.numberOfLeadingZeros(shifted);
    }

    /**
     * How many collectives one device work batch holds: the divisor of numPipeOps for algorithms other
     * than Ring ({@code latCount = DIVUP(numPipeOps, N)}).
     *
     * <ul>
     *   <li>up to 2.21: NCCL_MAX_WORK_ELEMENTS, static_assert'ed to 9 in src/include/devcomm.h
     *       (2.18) / device.h (2.19 .. 2.21);
     *   <li>2.22 .. 2.30: NCCL_MAX_DEV_WORK_BATCH_COLLS = NCCL_MAX_DEV_WORK_BATCH_BYTES (1024) /
     *       sizeof(ncclDevWorkColl) (src/include/device.h). The struct measures 64 B in 2.22, 96 B in
     *       2.23 .. 2.29 (send/recv buffer offsets and remote address pointers added) and 128 B in
     *       2.30 (explicit padding): 16, 10 and 8. Sizes measured by compiling each release's struct
     *       for x86-64 (LP64).
     * </ul>
     *
     * @param version NCCL release
     * @return collectives per batch
     */
    public static int maxBatchColls(NcclVersion version) {
        if (!version.atLeast(2, 22)) {
            return 9;
        }
        if (!version.atLeast(2, 23)) {
            return 16;
        }
        if (!version.atLeast(2, 30)) {
            return 10;
        }
        return 8;
    }

    /**
     * latCount of the cost function: numPipeOps for Ring, {@code ceil(numPipeOps / maxBatchColls)}
     * for every other algorithm (tuning.cc, "Tree pipelining saves latency in aggregation cases").
     *
     * @param version NCCL release
     * @param algorithm algorithm
     * @param numPipeOps pipelined operations in the call, >= 1
     * @return how many times the latency is counted
     */
    public static int latCount(NcclVersion version, Algorithm algorithm, int numPipeOps) {
        if (algorithm == Algorithm.RING) {
            return numPipeOps;
        }
        int batch = maxBatchColls(version);
        return (numPipeOps + batch - 1) / batch;
    }

    /**
     * Whether a release falls back to Ring with its saved {@code ringbdw} bandwidth when the table's
     * Ring bandwidth is 0 (2.19 .. 2.23, tuning.cc / enqueue.cc "backup"); that bandwidth is not in
     * the log, so the model can only say that NCCL would use such a fallback.
     */
    public static boolean hasRingBackup(NcclVersion version) {
        return version.atLeast(2, 19) && !version.atLeast(2, 24);
    }

    /** Whether 2.20's plateau exception for MNNVL communicators applies (tuning.cc, 2.20 only). */
    public static boolean plateauSkipsMnnvl(NcclVersion version) {
        return version.atLeast(2, 20) && !version.atLeast(2, 21);
    }

    /**
     * Whether a candidate that has a bandwidth in the table may still be left at -1 by
     * updateCollCostTable for reasons the log does not show: CollNet and NVLS need per-call support
     * (datatype, reduction operation), and from 2.23 PAT is skipped for ReduceScatter with a
     * PreMulSum or SumPostDiv operation (e.g. ncclAvg).
     *
     * @return true if the candidate is conditional
     */
    public static boolean isConditional(NcclVersion version, Collective collective, Algorithm algorithm) {
        return switch (algorithm) {
            case COLLNET_DIRECT, COLLNET_CHAIN, NVLS, NVLS_TREE -> true;
            case PAT -> collective == Collective.ReduceScatter && version.atLeast(2, 23);
            default -> false;
        };
    }

    /**
     * Whether the selection lines of a release print per-rank bytes for AllGather and ReduceScatter
     * ({@code task->count * typeSize}, 2.24+ src/enqueue.cc), where getCollInfo gets nRanks times
     * that. Releases 2.21 .. 2.23 print the nBytes the cost table was computed for.
     */
    public static boolean selectionPrintsPerRankBytes(NcclVersion version) {
        return version.atLeast(2, 24);
    }
}
