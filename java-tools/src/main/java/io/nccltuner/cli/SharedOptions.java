package io.nccltuner.cli;

import io.nccltuner.policy.InputException;
import io.nccltuner.policy.Signature;
import java.nio.file.Path;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * The options that several commands take with the same names and meaning, each declared once, as
 * a picocli {@code @Mixin} (picocli's way of sharing options): a command mixes the class in where
 * its own options stand, so the names, label, default and description read the same in every
 * command's help ({@code SharedOptionsTest} checks it), and what the option means beyond parsing
 * (a range check, a default derived from another option) is written once beside it. {@code
 * --compute-capability} and {@code --cpu} are {@link ModelInputOptions}.
 *
 * <p>Options with one name but another meaning per command stay with their commands, each
 * describing what that command does with it ({@code SharedOptionsTest.OWN_MEANING} lists them):
 * {@code -o} (compile's and calibrate's policy, import's YAML or stdout, sweep's directory),
 * {@code --nranks}/{@code --nnodes} (try: both together; replay: each alone; explain: the log's
 * shape; validate: a list of shapes; calibrate: a profile's range), {@code --measurements} and
 * {@code --nccl-log} (what each command prices with them; reading them is {@link InputFiles}'),
 * {@code --policy} (the policy tried, replayed, explained, or the one the canary ran), {@code
 * --topology} (explain predicts at one shape, show lists where constants change picks; reading it
 * is {@link TopologyInputs}'), {@code --mode} (the mode compile writes into the policy, the mode
 * explain and replay run it in, try's shadow or enforce), {@code --nccl-era} (the NCCL try loads
 * the plugin as, the NCCL replay runs the engine as), {@code --collective}, {@code --channels},
 * {@code --nodes}, {@code --trace}, {@code --plugin}, {@code --check}, compile's {@code --html}
 * and import's {@code --name}, and try's {@code --gpu} (presented through the harness; show,
 * replay and explain share {@link Gpu}).
 */
final class SharedOptions {
    private SharedOptions() {}

    /**
     * {@code --pipe-ops N} of {@code explain} and {@code show}: the numPipeOps the tuner is asked
     * at, the number of operations in NCCL's group, which NCCL passes to getCollInfo (every tuner
     * ABI, v3 to v7: plugin-shim/include/nccl_tuner_abi.h, from NCCL's ext-tuner headers).
     */
    static final class PipeOps {
        @Option(names = "--pipe-ops", paramLabel = "N", defaultValue = "1", description = "numPipeOps (default 1)")
        int n;

        /**
         * Refuses a numPipeOps below 1 (NCCL calls the tuner for at least one operation).
         *
         * @throws InputException {@code --pipe-ops: must be at least 1, got 0}
         */
        void check() throws InputException {
            if (n < 1) {
                throw new UsageException("--pipe-ops: must be at least 1, got " + n);
            }
        }
    }

    /**
     * {@code --gpu NAME} of {@code show}, {@code replay} and {@code explain}: the GPU the engine's
     * inits present, as the plugin learns it from the CUDA driver in a job, so that a profile naming
     * {@code gpu:} or {@code computeCapability:} (as compile writes them for mixed hardware) can be
     * viewed offline. The compute capability is the one the name implies ({@link
     * MeasuredOn#computeCapability}: H200 is 9.0), unknown for a name it does not know. ({@code
     * try}'s {@code --gpu} presents the GPU to the plugin through the harness and is its own.)
     */
    static final class Gpu {
        /** What {@code --gpu} is, in help. */
        static final String DESCRIPTION = "the GPU the engine presents to the policy's profiles, as a job's CUDA"
                + " driver names it (\"NVIDIA H200\"; a profile's gpu: matches a name that contains it; the compute"
                + " capability is the name's); default: the GPU the inputs name, else unknown (a profile naming gpu"
                + " or computeCapability is skipped)";

        @Option(names = "--gpu", paramLabel = "NAME", description = DESCRIPTION)
        String name;

        /**
         * A signature with a GPU presented.
         *
         * @param sig what the init presents otherwise (tuner version, NCCL's version)
         * @param gpu the GPU name ("NVIDIA H200"), or null or blank for none
         * @return {@code sig} with the GPU's name and compute capability (-1 where the name implies
         *     none); {@code sig} itself for no GPU
         */
        static Signature present(Signature sig, String gpu) {
            if (gpu == null || gpu.isBlank()) {
                return sig;
            }
            int cc = MeasuredOn.computeCapability(gpu);
            return new Signature(
                    sig.tunerVersion(),
                    sig.commId(),
                    sig.nNvlDomains(),
                    sig.minRanksPerNvlDomain(),
                    sig.maxRanksPerNvlDomain(),
                    sig.ncclVersion(),
                    gpu.strip(),
                    cc > 0 ? cc / 10 : -1,
                    cc > 0 ? cc % 10 : -1);
        }

        /**
         * @param sig what the init presents without {@code --gpu}
         * @return {@code sig} with {@code --gpu}'s GPU, or {@code sig} without the option
         */
        Signature present(Signature sig) {
            return present(sig, name);
        }
    }

    /**
     * {@code --name NAME} of {@code compile} and {@code calibrate}: the name of the policy they
     * write, by default the output file's name. ({@code import}'s {@code --name} defaults to the
     * CSV config's name, which its converter gives the policy, and is its own.)
     */
    static final class PolicyName {
        @Option(names = "--name", paramLabel = "NAME", description = "Policy name (default: the output file name).")
        String given;

        /**
         * The policy's name.
         *
         * @param output the policy file written, or null when none is (no {@code -o}, or {@code -o -})
         * @param fallback the name without {@code --name} and without a file, e.g. {@code compiled}
         * @return {@code --name}, else the file's name without {@code .yaml}/{@code .yml}
         *     ({@code out/h100.yaml} gives {@code h100}), else {@code fallback}
         */
        String or(Path output, String fallback) {
            if (given != null) {
                return given;
            }
            return output != null ? output.getFileName().toString().replaceFirst("\\.ya?ml$", "") : fallback;
        }
    }

    /**
     * The {@code POLICY} argument of {@code validate} and {@code show}: a YAML policy or NCCL's
     * example-tuner CSV, read by {@link PolicyFiles#load}.
     */
    static final class PolicyArgument {
        /** What a policy file is, in help: replay's {@code --policy} reads the same. */
        static final String DESCRIPTION = "policy YAML, or NCCL's example-tuner CSV (nccl_tuner.conf)";

        @Parameters(index = "0", paramLabel = "POLICY", description = DESCRIPTION)
        Path file;
    }

    /**
     * {@code --html FILE} of {@code report} and {@code try} (which passes it to the report it
     * runs): the report as an HTML page ({@link io.nccltuner.report.ShadowReportHtml}).
     * {@code compile}'s {@code --html} is its own report's page.
     */
    static final class ReportHtml {
        @Option(names = "--html", paramLabel = "FILE", description = "also write the report as an HTML page")
        Path file;
    }

    /**
     * {@code --mode MODE} of {@code compile}, {@code calibrate} and {@code import}: the mode the
     * policy they write starts in, shadow by default (the product's flow: shadow, then canary, then
     * enforce; docs/canary.md). Their last line says it ({@link ToolCommand#modeLine}).
     */
    static final class WrittenMode {
        @Option(
                names = "--mode",
                paramLabel = "MODE",
                defaultValue = "shadow",
                description = "The mode the written policy starts in: shadow (the plugin logs what it would change "
                        + "and changes nothing), canary (the policy's picks on a fraction of the calls), enforce or "
                        + "off (default: ${DEFAULT-VALUE}: first shadow, then canary, then enforce; "
                        + "NCCL_TUNER_JAVA_MODE overrides it in the job).")
        String given;

        /**
         * @return the mode
         * @throws UsageException {@code --mode: 'x' is not shadow, canary, enforce or off}
         */
        io.nccltuner.policy.Mode parse() {
            return ToolCommand.parseMode(given);
        }
    }
}
