package io.nccltuner.cli;

import io.nccltuner.policy.InputException;
import java.util.Locale;
import picocli.CommandLine.Option;

/**
 * The inputs of NCCL's model that its logs do not print, shared by the commands that compute the
 * model from constants ({@code calibrate}; {@code explain --policy} and {@code show} with a sweep's
 * topology): a picocli {@code @Mixin}.
 */
final class ModelInputOptions {
    @Option(
            names = "--compute-capability",
            paramLabel = "CC",
            description =
                    "The GPUs' compute capability, MAJOR.MINOR or x10 (9.0 or 90 for H100/H200, 8.0 A100, 7.0 V100); "
                            + "default: from the GPU name the runs printed.")
    String computeCapability;

    @Option(
            names = "--cpu",
            paramLabel = "VENDOR",
            defaultValue = "auto",
            description =
                    "CPU vendor, intel, amd or auto: whichever reproduces NCCL's logged table (NCCL's llMaxBws row "
                            + "and net overhead on more than one node depend on it; default: ${DEFAULT-VALUE}).")
    String cpu;

    /**
     * @return the compute capability as major x 10 + minor, or 0 when not given
     * @throws InputException for a value that is not "X.Y" or major x 10 + minor (90)
     */
    int computeCapability() throws InputException {
        if (computeCapability == null) {
            return 0;
        }
        if (computeCapability.matches("\\d{2,3}")) {
            return Integer.parseInt(computeCapability);
        }
        if (!computeCapability.matches("\\d{1,2}\\.\\d")) {
            throw new UsageException(
                    "--compute-capability",
                    "'" + computeCapability + "' is not MAJOR.MINOR (9.0) or " + "major x 10 + minor (90)");
        }
        String[] p = computeCapability.split("\\.");
        return Integer.parseInt(p[0]) * 10 + Integer.parseInt(p[1]);
    }

    /**
     * @return "intel", "amd" or "auto"
     * @throws InputException for another value
     */
    String cpu() throws InputException {
        String c = cpu.toLowerCase(Locale.ROOT);
        if (!c.equals("intel") && !c.equals("amd") && !c.equals("auto")) {
            throw new UsageException("--cpu", "'" + cpu + "' is not intel, amd or auto");
        }
        return c;
    }
}
