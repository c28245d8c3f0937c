package io.nccltuner.policy;

import java.util.Locale;

/**
 * A profile's hardware condition (the {@code match:} fields beyond nRanks and nNodes; see
 * docs/policy-format.md). Each field is null when the profile does not name it. A named field
 * matches only a value the plugin learnt: an unknown NCCL version, GPU or NVLink domain shape
 * never matches (so a policy measured on one cluster does not apply silently on another).
 *
 * @param nNvlDomains NVLink domains (tuner v5+ ncclNvlDomainInfo), or null
 * @param minRanksPerNvlDomain fewest ranks per domain, or null
 * @param maxRanksPerNvlDomain most ranks per domain, or null
 * @param ncclVersion NCCL version codes (2.28.9 = 22809), inclusive, or null
 * @param gpu text the GPU name must contain, case-insensitive ("H200"), or null
 * @param computeCapability {@code major * 10 + minor} (9.0 = 90), inclusive, or null
 */
public record HardwareMatch(
        Policy.Range nNvlDomains,
        Policy.Range minRanksPerNvlDomain,
        Policy.Range maxRanksPerNvlDomain,
        Policy.Range ncclVersion,
        String gpu,
        Policy.Range computeCapability) {
    /** EnumNames nothing: matches every process. */
    public static final HardwareMatch ANY = new HardwareMatch(null, null, null, null, null, null);

    /**
     * Whether this names no field, as {@link #ANY}: the fields compared one by one, not with the
     * record's equals, whose first call spins method-handle classes (ObjectMethods' bootstrap) that
     * the JDK 25 AOT cache does not keep: 7 classes at the plugin's first init (issue 23).
     *
     * @return true when every field is null
     */
    public boolean isAny() {
        return nNvlDomains == null
                && minRanksPerNvlDomain == null
                && maxRanksPerNvlDomain == null
                && ncclVersion == null
                && gpu == null
                && computeCapability == null;
    }

    /**
     * @param s the process's signature
     * @return null if it matches, else why not (for the INFO line)
     */
    public String mismatch(Signature s) {
        String w = range("nvlDomain.nNvlDomains", nNvlDomains, s.nNvlDomains(), false);
        if (w == null) {
            w = range("nvlDomain.minRanksPerNvlDomain", minRanksPerNvlDomain, s.minRanksPerNvlDomain(), false);
        }
        if (w == null) {
            w = range("nvlDomain.maxRanksPerNvlDomain", maxRanksPerNvlDomain, s.maxRanksPerNvlDomain(), false);
        }
        if (w == null) {
            w = range("ncclVersion", ncclVersion, s.ncclVersion(), true);
        }
        if (w == null && gpu != null) {
            if (s.gpuName().isEmpty()) {
                w = "gpu '" + gpu + "' named but the GPU is unknown";
            } else if (!s.gpuName().toLowerCase(Locale.ROOT).contains(gpu.toLowerCase(Locale.ROOT))) {
                w = "gpu '" + s.gpuName() + "' does not contain '" + gpu + "'";
            }
        }
        if (w == null && computeCapability != null) {
            int cc = s.computeCapability();
            if (cc < 0) {
                w = "computeCapability " + ccRange(computeCapability) + " named but the compute capability is unknown";
            } else if (!computeCapability.contains(cc)) {
                w = "computeCapability " + s.ccMajor() + "." + s.ccMinor() + " is outside "
                        + ccRange(computeCapability);
            }
        }
        return w;
    }

    private static String range(String field, Policy.Range want, long have, boolean version) {
        if (want == null) {
            return null;
        }
        String wants = version
                ? Signature.versionString(want.min()) + ".."
                        + (want.max() == Long.MAX_VALUE ? "" : Signature.versionString(want.max()))
                : want.toString();
        if (have < 0) {
            return field + " " + wants + " named but it is unknown"
                    + (field.startsWith("nvl") ? " (NCCL passes NVLink domains from tuner v5, 2.28)" : "");
        }
        if (!want.contains(have)) {
            return field + " " + (version ? Signature.versionString(have) : Long.toString(have)) + " is outside "
                    + wants;
        }
        return null;
    }

    /**
     * @param r a compute-capability range (major x 10 + minor)
     * @return "9.0", "9.0..10.0" or "9.0.." (open above), as validate and the init's INFO line say it
     */
    public static String ccRange(Policy.Range r) {
        return Signature.ccString(r.min())
                + (r.min() == r.max() ? "" : ".." + (r.max() == Long.MAX_VALUE ? "" : Signature.ccString(r.max())));
    }
}
