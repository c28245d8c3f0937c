package io.nccltuner.cli;

/**
 * A usage error found after parsing: an option value that makes no sense ({@code --nodes 0}, {@code
 * --mode enforced}), options that do not go together, no input given. {@link Main} prints it as
 * picocli's own usage errors, {@code nccl-tuner <command>: <message>} then {@code see 'nccl-tuner
 * <command> --help'}, and exits {@link Main#EXIT_USAGE} (2). What a file holds is an {@link
 * io.nccltuner.policy.InputException} (exit 1), except a file of another kind than the command reads
 * ({@code compile policy.yaml}: a policy, not measurements), where the argument, not the file, is
 * wrong.
 */
final class UsageException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /**
     * A usage error.
     *
     * @param message what is wrong, starting with the option ({@code --nodes: 0 is outside
     *     1..1048576})
     */
    UsageException(String message) {
        super(message);
    }

    /**
     * A usage error about one option.
     *
     * @param option the option, as the user spells it ({@code --lambda})
     * @param message what is wrong with its value
     */
    UsageException(String option, String message) {
        super(option + ": " + message);
    }
}
