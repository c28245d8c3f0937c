package io.nccltuner.policy;

/**
 * An input the tools cannot use: a file the compiler or importer refuses, or an option value the
 * command line refuses. The one error carrier of the {@code nccl-tuner} commands: they throw it,
 * and the command line prints {@code nccl-tuner <command>: <message>} and exits 1. The message
 * starts with {@code file:line:} (or {@code file:}, or the option) and says what to do.
 */
public final class InputException extends Exception {
    private static final long serialVersionUID = 1L;

    private final String where;

    /**
     * @param where {@code file:line} (or {@code file}) of the problem
     * @param message what is wrong and what to do, without the location
     */
    public InputException(String where, String message) {
        super(where + ": " + message);
        this.where = where;
    }

    /**
     * An input error whose message already says where (an option name, or several places).
     *
     * @param message what is wrong, where, and what to do
     */
    public InputException(String message) {
        super(message);
        this.where = "";
    }

    /**
     * The one spelling of a place in an input file, as every message of the tools and the plugin's
     * config readers starts.
     *
     * @param file the file (a path, or a name)
     * @param line its 1-based line number
     * @return {@code file:line}
     */
    public static String at(Object file, long line) {
        return file + ":" + line;
    }

    /** @return {@code file:line} (or {@code file}) of the problem; empty when the message says where */
    public String where() {
        return where;
    }
}
