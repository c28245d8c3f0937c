package io.nccltuner.compile;

import io.nccltuner.policy.Collective;
import io.nccltuner.policy.Policy.Range;

/**
 * One timed result: one replicate of one configuration at one size.
 *
 * @param source {@code file:line} it was read from
 * @param collective the collective
 * @param nRanks ranks in the communicator
 * @param nNodes nodes in the communicator (as NCCL counts them)
 * @param numPipeOps numPipeOps the calls had ({@link Range#ANY} when unknown)
 * @param nBytes message size in bytes as NCCL passes it to getCollInfo (for AllGather and
 *     ReduceScatter the total over ranks, which is nccl-tests' "size" column)
 * @param config what was forced ({@link RunConfig#AUTO}: NCCL's own pick)
 * @param timeUs time of one call in microseconds (nccl-tests: average over its iterations;
 *     sweep CSV: median over its timed calls)
 * @param p95Us 95th percentile of the timed calls in microseconds where the input gives it (the
 *     sweep CSV's {@code p95_us}), else NaN
 * @param hardware the machine the run printed (GPU name, NCCL version), or null where it printed
 *     none
 */
public record Measurement(
        String source,
        Collective collective,
        int nRanks,
        int nNodes,
        Range numPipeOps,
        long nBytes,
        RunConfig config,
        double timeUs,
        double p95Us,
        Hardware hardware) {
    /**
     * The machine a run was measured on, as far as its output says.
     *
     * @param gpu the GPU name of the first {@code #  Rank 0 ... device 0 [0x..] NVIDIA H200} line, or
     *     null
     * @param ncclVersion NCCL's version, {@code 2.28.9} (NCCL's {@code NCCL version} INFO line, else
     *     nccl-tests' {@code nccl-library=} code), or null
     */
    public record Hardware(String gpu, String ncclVersion) {
        /** @return null when neither is known, else the hardware */
        public static Hardware of(String gpu, String ncclVersion) {
            return gpu == null && ncclVersion == null ? null : new Hardware(gpu, ncclVersion);
        }

        /** @return NCCL_VERSION_CODE of {@link #ncclVersion} (2.28.9: 22809), or -1 when unknown */
        public long versionCode() {
            if (ncclVersion == null) {
                return -1;
            }
            java.util.regex.Matcher m =
                    java.util.regex.Pattern.compile("^\\d+\\.\\d+\\.\\d+").matcher(ncclVersion);
            try {
                return m.find() ? io.nccltuner.policy.Signature.parseVersion(m.group()) : -1; // "2.28.9+cuda13.0"
            } catch (IllegalArgumentException e) {
                return -1; // not NCCL 2.x.y
            }
        }

        /**
         * Whether two inputs may have run on one machine: their GPU names agree where both print one,
         * and their NCCL releases (major.minor.patch) where both print one.
         *
         * @param o the other input's machine
         * @return true unless a GPU or an NCCL release both name differs
         */
        public boolean sameMachine(Hardware o) {
            return (gpu == null || o.gpu == null || gpu.equals(o.gpu))
                    && (ncclVersion == null
                            || o.ncclVersion == null
                            || release(ncclVersion).equals(release(o.ncclVersion)));
        }

        /** @return {@code 2.28.9} of {@code 2.28.9+cuda13.0} */
        private static String release(String v) {
            java.util.regex.Matcher m =
                    java.util.regex.Pattern.compile("^\\d+\\.\\d+\\.\\d+").matcher(v);
            return m.find() ? m.group() : v;
        }

        /**
         * The machine as the summaries name it.
         *
         * @return {@code NVIDIA H200 NCCL 2.28.9}, {@code NVIDIA H200, NCCL version not printed}, or
         *     {@code NCCL 2.28.9} where no GPU is named (an NCCL log without device lines)
         */
        public String label() {
            if (gpu == null) {
                return "NCCL " + ncclVersion;
            }
            return gpu + (ncclVersion == null ? ", NCCL version not printed" : " NCCL " + ncclVersion);
        }

        @Override
        public String toString() {
            return (gpu == null ? "GPU not printed" : gpu) + ", "
                    + (ncclVersion == null ? "NCCL version not printed" : "NCCL " + ncclVersion);
        }
    }

    /** A measurement of a machine the input does not name (optimize_config.py CSV, sweep CSV). */
    public Measurement(
            String source,
            Collective collective,
            int nRanks,
            int nNodes,
            Range numPipeOps,
            long nBytes,
            RunConfig config,
            double timeUs,
            double p95Us) {
        this(source, collective, nRanks, nNodes, numPipeOps, nBytes, config, timeUs, p95Us, null);
    }

    /** A measurement without a P95 (nccl-tests output, optimize_config.py CSV). */
    public Measurement(
            String source,
            Collective collective,
            int nRanks,
            int nNodes,
            Range numPipeOps,
            long nBytes,
            RunConfig config,
            double timeUs) {
        this(source, collective, nRanks, nNodes, numPipeOps, nBytes, config, timeUs, Double.NaN, null);
    }
}
