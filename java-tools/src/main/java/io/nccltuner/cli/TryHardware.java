package io.nccltuner.cli;

import io.nccltuner.model.NcclEra;
import io.nccltuner.policy.HardwareMatch;
import io.nccltuner.policy.InputException;
import io.nccltuner.policy.Policy;
import io.nccltuner.policy.Signature;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * The hardware {@code nccl-tuner try} presents to the plugin, so that a profile naming {@code gpu},
 * {@code computeCapability} or {@code ncclVersion} (docs/policy-format.md, "Hardware match") can
 * be tried on a trace. The plugin learns them as in a job (plugin-shim/src/signature.c): the GPU's
 * name and compute capability from the CUDA driver the process has loaded, here the fake one
 * (tests/plugins/fake_cuda.c: {@code libexec/fake-cuda/libcuda.so.1} in the distribution, {@code
 * build/tests/fake-cuda/libcuda.so.1} in a build tree) LD_PRELOADed into the harness with {@code
 * FAKE_CUDA_NAME} and {@code FAKE_CUDA_CC}; NCCL's version from ncclGetVersion, which the harness
 * exports ({@code --nccl-version}, else its era's release). Without a GPU the harness loads no CUDA
 * driver and the GPU is unknown, as in a process without one: a profile naming it is skipped.
 *
 * @param gpu the GPU name presented ("NVIDIA H200"), or null for none
 * @param cc its compute capability as major x 10 + minor (90), 0 when unknown
 * @param gpuFrom where the name came from ({@code --gpu}, {@code named by --measurements M}), or
 *     why none is presented
 * @param era the NCCL release the harness loads and calls the plugin as, its versionCode the one
 *     presented (2.27.7 under era 2.24 is 22707)
 * @param versionFrom where the version came from ({@code --nccl-version}, {@code --nccl-era 2.28's
 *     release}, {@code named by --nccl-log L})
 */
record TryHardware(String gpu, int cc, String gpuFrom, NcclEra era, String versionFrom) {
    /** The fake CUDA driver, relative to the harness's folder. */
    static final String FAKE_CUDA = "fake-cuda/libcuda.so.1";

    /**
     * What try presents, from its options or else what its inputs name ({@link MeasuredOn}).
     *
     * @param gpuOption --gpu, or null
     * @param ccOption --cc ("9.0"), or null for the GPU name's ({@link MeasuredOn#computeCapability})
     * @param era the era (its versionCode --nccl-version's when given)
     * @param versionGiven whether --nccl-version was given
     * @param logs the --nccl-log files
     * @param measurements --measurements, or null
     * @return what the replay presents, as {@link #resolve(String, String, NcclEra, boolean, boolean, List,
     *     Path)} with --nccl-era given
     * @throws IOException if an input cannot be read
     */
    static TryHardware resolve(
            String gpuOption, String ccOption, NcclEra era, boolean versionGiven, List<Path> logs, Path measurements)
            throws IOException {
        return resolve(gpuOption, ccOption, era, versionGiven, true, logs, measurements);
    }

    /**
     * What try presents, from its options or else what its inputs name ({@link MeasuredOn}): the one
     * NCCL release the inputs name, without --nccl-version, under its own era when --nccl-era is not
     * given (2.27.7 as 2.24), else only where it is of --nccl-era's (try's --nccl-log warning says
     * when it is not).
     *
     * @param gpuOption --gpu, or null
     * @param ccOption --cc ("9.0"), or null for the GPU name's ({@link MeasuredOn#computeCapability})
     * @param era the era (its versionCode --nccl-version's when given)
     * @param versionGiven whether --nccl-version was given
     * @param eraGiven whether --nccl-era was given
     * @param logs the --nccl-log files
     * @param measurements --measurements, or null
     * @return what the replay presents
     * @throws IOException if an input cannot be read
     */
    static TryHardware resolve(
            String gpuOption,
            String ccOption,
            NcclEra era,
            boolean versionGiven,
            boolean eraGiven,
            List<Path> logs,
            Path measurements)
            throws IOException {
        Map<String, MeasuredOn> named = new LinkedHashMap<>();
        for (Path l : logs) {
            named.put("--nccl-log " + l, MeasuredOn.of(l));
        }
        if (measurements != null) {
            named.put("--measurements " + measurements, MeasuredOn.of(measurements));
        }
        NcclEra at = era;
        String versionFrom = versionGiven ? "--nccl-version" : "--nccl-era " + era.name() + "'s release";
        Map<String, String> versions = new TreeMap<>();
        Map<String, String> gpus = new TreeMap<>();
        named.forEach((from, on) -> {
            on.ncclVersions().forEach(v -> versions.putIfAbsent(v, from));
            on.gpus().forEach(g -> gpus.putIfAbsent(g, from));
        });
        if (!versionGiven && versions.size() == 1) {
            String v = versions.keySet().iterator().next();
            NcclEra ran = NcclEra.forVersion(Signature.parseVersion(v));
            boolean known = NcclEra.parse(ran.name()).versionCode() / 100 * 100 <= ran.versionCode();
            if (ran.name().equals(era.name()) || (!eraGiven && known)) { // else try's --nccl-log warning says so
                at = ran;
                versionFrom = "named by " + versions.get(v);
            }
        }
        String gpu = gpuOption;
        String gpuFrom = "--gpu";
        if (gpu == null && gpus.size() == 1) {
            gpu = gpus.keySet().iterator().next();
            gpuFrom = "named by " + gpus.get(gpu);
        } else if (gpu == null) {
            gpuFrom = gpus.isEmpty()
                    ? null
                    : "the inputs name " + gpus.size() + " GPUs, " + String.join(", ", gpus.keySet());
        }
        int cc = gpu == null ? 0 : MeasuredOn.computeCapability(gpu);
        if (gpu != null && ccOption != null) {
            cc = (int) parseCc(ccOption);
            gpuFrom += ", --cc";
        }
        return new TryHardware(gpu, cc, gpuFrom, at, versionFrom);
    }

    /**
     * @param text a compute capability, "9.0"
     * @return it as major x 10 + minor (90)
     * @throws IllegalArgumentException for anything else
     */
    static long parseCc(String text) {
        if (!text.strip().matches("\\d{1,2}\\.\\d")) {
            throw new IllegalArgumentException("--cc '" + text + "' is not a compute capability such as 9.0");
        }
        String[] p = text.strip().split("\\.");
        return Long.parseLong(p[0]) * 10 + Long.parseLong(p[1]);
    }

    /** @return whether the harness is to present another version than its era's own release */
    boolean otherVersion() {
        return era.versionCode() != NcclEra.parse(era.name()).versionCode();
    }

    /**
     * The line try prints: what the replay presents and where it came from.
     *
     * @return {@code try: the replay presents GPU NVIDIA H200 (cc 9.0, named by --measurements M) and
     *     NCCL 2.28.9 (--nccl-era 2.28's release) to the plugin, as a job's CUDA driver and NCCL
     *     would; --gpu NAME and --nccl-version V present others}
     */
    String line() {
        return "try: the replay " + presents() + " to the plugin, as a job's CUDA driver and NCCL would; --gpu NAME"
                + " and --nccl-version V present others";
    }

    /**
     * @return {@code presents GPU NVIDIA H200 (cc 9.0, --gpu) and NCCL 2.28.9 (--nccl-era 2.28's
     *     release)}, or {@code presents no GPU (as a process without a CUDA driver: ...) and ...}
     */
    String presents() {
        String g = gpu == null
                ? "no GPU (" + (gpuFrom == null ? "" : gpuFrom + "; ")
                        + "as a process without a CUDA driver: a profile naming gpu or computeCapability is skipped)"
                : "GPU " + gpu + " (cc " + (cc > 0 ? Signature.ccString(cc) : "unknown") + ", " + gpuFrom + ")";
        return "presents " + g + " and NCCL " + Signature.versionString(era.versionCode()) + " (" + versionFrom + ")";
    }

    /**
     * The signature an init of the harness gives the plugin under this hardware: NVLink domains as
     * the harness passes them from tuner v5 (one per node: tests/harness/harness.c comm_init).
     *
     * @param nRanks the communicator's ranks
     * @param nNodes its nodes
     * @return the signature (commId 0)
     */
    Signature signature(long nRanks, long nNodes) {
        boolean v5 = era.tunerVersion() >= 5 && nNodes > 0;
        return new Signature(
                era.tunerVersion(),
                0,
                v5 ? (int) nNodes : -1,
                v5 ? (int) (nRanks / nNodes) : -1,
                v5 ? (int) ((nRanks + nNodes - 1) / nNodes) : -1,
                era.versionCode(),
                gpu == null ? "" : gpu,
                cc > 0 ? cc / 10 : -1,
                cc > 0 ? cc % 10 : -1);
    }

    /**
     * The fake CUDA driver beside the harness, when a GPU is presented.
     *
     * @param harness the harness
     * @return the driver, or null without a GPU
     * @throws InputException when a GPU is presented and there is no driver beside the harness
     */
    Path driver(Path harness) throws InputException {
        if (gpu == null) {
            return null;
        }
        Path lib = harness.toAbsolutePath().resolveSibling(FAKE_CUDA);
        if (!Files.isRegularFile(lib)) {
            throw new InputException("GPU " + gpu + " (" + gpuFrom + "): no fake CUDA driver beside the harness "
                    + harness + " (looked for " + lib + "); the distribution has libexec/" + FAKE_CUDA
                    + ", a build tree build/tests/" + FAKE_CUDA + " (make build)");
        }
        return lib;
    }

    /**
     * Sets the harness's environment for this hardware: the fake CUDA driver LD_PRELOADed with the
     * GPU's name and compute capability, or none of it.
     *
     * @param env the harness's environment
     * @param driver {@link #driver}'s result
     */
    void environment(Map<String, String> env, Path driver) {
        env.remove("FAKE_CUDA_NAME");
        env.remove("FAKE_CUDA_CC");
        env.remove("FAKE_CUDA_NO_CONTEXT");
        if (driver == null) {
            return;
        }
        String pre = env.get("LD_PRELOAD");
        env.put("LD_PRELOAD", driver + (pre == null || pre.isBlank() ? "" : ":" + pre));
        env.put("FAKE_CUDA_NAME", gpu);
        env.put("FAKE_CUDA_CC", cc > 0 ? Signature.ccString(cc) : "0.0"); // major 0: the shim's "unknown"
    }

    /** GPUs whose compute capability {@link MeasuredOn#computeCapability} knows, for a profile naming only that. */
    private static final List<String> KNOWN_GPUS =
            List.of("NVIDIA V100", "NVIDIA T4", "NVIDIA A100", "NVIDIA A10", "NVIDIA L4", "NVIDIA H100", "NVIDIA B200");

    /**
     * A profile skipped for its hardware.
     *
     * @param profile its name
     * @param why the plugin's reason ({@link HardwareMatch#mismatch})
     * @param options the options under which it matches ({@code --gpu H200 --nccl-version 2.28.9}),
     *     or null when try cannot present its hardware (NVLink domains, a version before 2.9)
     */
    record Skipped(String profile, String why, List<String> options) {}

    /**
     * Why the first profile whose shape a communicator has was skipped, and the hardware options
     * under which it matches, checked with the plugin's own test ({@link HardwareMatch#mismatch}).
     *
     * @param p the policy
     * @param nRanks the communicator's ranks
     * @param nNodes its nodes
     * @return the profile skipped, or null when no profile has the shape or the first one matches
     */
    Skipped skipped(Policy p, long nRanks, long nNodes) {
        for (Policy.Profile pr : p.profiles()) {
            if (!pr.nRanks().contains(nRanks) || !pr.nNodes().contains(nNodes)) {
                continue;
            }
            HardwareMatch hw = pr.hardware();
            String why = hw.mismatch(signature(nRanks, nNodes));
            return why == null ? null : new Skipped(pr.name(), why, options(hw, nRanks, nNodes));
        }
        return null;
    }

    /** The --gpu/--cc/--nccl-version/--nccl-era words under which a profile's hardware matches, or null. */
    private List<String> options(HardwareMatch hw, long nRanks, long nNodes) {
        String name = gpu;
        int c = cc;
        if (hw.gpu() != null
                && (name == null
                        || !name.toLowerCase(Locale.ROOT).contains(hw.gpu().toLowerCase(Locale.ROOT)))) {
            name = hw.gpu();
            c = MeasuredOn.computeCapability(name);
        }
        if (hw.computeCapability() != null && !hw.computeCapability().contains(c)) {
            if (name == null) {
                for (String g : KNOWN_GPUS) {
                    if (hw.computeCapability().contains(MeasuredOn.computeCapability(g))) {
                        name = g;
                        break;
                    }
                }
            }
            c = (int) hw.computeCapability().min();
        }
        if (name == null && hw.computeCapability() != null) {
            name = "GPU"; // any name: the profile names only the compute capability
        }
        NcclEra e = era;
        Policy.Range v = hw.ncclVersion();
        if (v != null && !v.contains(e.versionCode())) {
            long own = NcclEra.parse(era.name()).versionCode();
            long code = v.contains(own) ? own : v.min() >= 20900 ? v.min() : v.max();
            e = NcclEra.forVersion(code);
        }
        if (hw.mismatch(new TryHardware(name, c, "", e, "").signature(nRanks, nNodes)) != null) {
            return null; // the NVLink domains, or a version no era loads: not something try presents
        }
        List<String> words = new ArrayList<>();
        if (name != null && !name.equals(gpu)) {
            words.addAll(List.of("--gpu", name));
        }
        if (name != null && c > 0 && (c != MeasuredOn.computeCapability(name) || (name.equals(gpu) && c != cc))) {
            words.addAll(List.of("--cc", Signature.ccString(c)));
        }
        if (e.versionCode() != era.versionCode()) {
            words.addAll(List.of("--nccl-version", Signature.versionString(e.versionCode())));
        }
        if (!e.name().equals(era.name())) {
            words.addAll(List.of("--nccl-era", e.name()));
        }
        return words;
    }
}
