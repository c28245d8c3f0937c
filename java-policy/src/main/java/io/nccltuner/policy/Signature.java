package io.nccltuner.policy;

/**
 * What the plugin knows about a communicator and its process at init, beyond nRanks and nNodes:
 * the tuner ABI version NCCL chose, NCCL's commId and NVLink domains (tuner v5+), NCCL's version
 * and the GPU (the shim's signature.c finds them without link-time dependencies). A field it
 * could not learn is -1 (or "" for the GPU name); a profile that names such a field never matches.
 *
 * @param tunerVersion the tuner ABI NCCL uses with this plugin: 3..6
 * @param commId NCCL's commHash (the same on every rank of a communicator), or 0 before v5
 * @param nNvlDomains NVLink domains of the communicator (ncclNvlDomainInfo_v5_t), or -1
 * @param minRanksPerNvlDomain fewest ranks in one NVLink domain, or -1
 * @param maxRanksPerNvlDomain most ranks in one NVLink domain, or -1
 * @param ncclVersion ncclGetVersion's code (2.28.9 is 22809), or -1
 * @param gpuName the current device's name ("NVIDIA H200"), or ""
 * @param ccMajor the current device's compute capability major, or -1
 * @param ccMinor its minor, or -1
 */
public record Signature(
        int tunerVersion,
        long commId,
        int nNvlDomains,
        int minRanksPerNvlDomain,
        int maxRanksPerNvlDomain,
        int ncclVersion,
        String gpuName,
        int ccMajor,
        int ccMinor) {
    /** Tuner v3 with nothing learnt. */
    public static final Signature UNKNOWN = new Signature(3, 0, -1, -1, -1, -1, "", -1, -1);

    public Signature {
        gpuName = gpuName == null ? "" : gpuName;
    }

    /** @return the compute capability as {@code major * 10 + minor} (9.0 is 90), or -1 */
    public int computeCapability() {
        return ccMajor < 0 || ccMinor < 0 ? -1 : ccMajor * 10 + ccMinor;
    }

    /**
     * @param code an NCCL version code (NCCL_VERSION_CODE: {@code major*10000 + minor*100 + patch}
     *     since 2.9, {@code major*1000 + minor*100 + patch} before)
     * @return "2.28.9", or "unknown" for a negative code
     */
    public static String versionString(long code) {
        if (code < 0) {
            return "unknown";
        }
        if (code >= 10000) {
            return code / 10000 + "." + (code / 100) % 100 + "." + code % 100;
        }
        return code / 1000 + "." + (code / 100) % 10 + "." + code % 100;
    }

    /**
     * @param cc a compute capability as major x 10 + minor (90 for Hopper's 9.0), as
     *     {@link #computeCapability()} and profiles' {@code computeCapability} hold it
     * @return "9.0"
     */
    public static String ccString(long cc) {
        return cc / 10 + "." + cc % 10;
    }

    /**
     * @param text "2.28.9" (or "2.28": patch 0)
     * @return its version code (22809)
     * @throws IllegalArgumentException if it is not major.minor[.patch] with minor and patch below 100
     */
    public static long parseVersion(String text) {
        String[] p = text.trim().split("\\.");
        if (p.length < 2 || p.length > 3) {
            throw new IllegalArgumentException("'" + text + "' is not an NCCL version such as 2.28.9");
        }
        try {
            long major = Long.parseLong(p[0]);
            long minor = Long.parseLong(p[1]);
            long patch = p.length == 3 ? Long.parseLong(p[2]) : 0;
            if (major < 2 || minor < 0 || minor > 99 || patch < 0 || patch > 99) {
                throw new IllegalArgumentException("'" + text + "' is not an NCCL version 2.x.y");
            }
            return major * 10000 + minor * 100 + patch;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("'" + text + "' is not an NCCL version such as 2.28.9");
        }
    }

    /** @return the INFO-line form: {@code tuner v5, NCCL 2.28.9, GPU NVIDIA H200 (cc 9.0), nvlDomains 1 (2..2 ranks)} */
    public String describe() {
        String gpu = gpuName.isEmpty() ? "unknown" : gpuName;
        String cc = computeCapability() < 0 ? "unknown" : ccMajor + "." + ccMinor;
        String nvl = nNvlDomains < 0
                ? "unknown"
                : nNvlDomains + " (" + minRanksPerNvlDomain + ".." + maxRanksPerNvlDomain + " ranks)";
        // Concatenation, not String.format: the engine builds this at inits, where a Formatter (its
        // parse and print, interpreted until compiled) was a sixth of an init's time (issue 23).
        return "tuner v" + tunerVersion + ", NCCL " + versionString(ncclVersion) + ", GPU " + gpu + " (cc " + cc
                + "), nvlDomains " + nvl;
    }
}
