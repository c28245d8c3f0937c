package io.nccltuner.cli;

import io.nccltuner.policy.Collective;
import io.nccltuner.policy.InputException;
import io.nccltuner.policy.Mode;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * What every {@code nccl-tuner} subcommand shares: {@code --help}/{@code --version} (picocli's
 * standard options, inherited by each subclass's {@code @Command}), its stdout/stderr, and the one
 * place where an {@link IOException} becomes an input error. A subcommand implements {@link #run}
 * and throws {@link InputException} for anything the user can fix; {@link Main}'s handler turns that
 * into one line on stderr and exit 1, other exceptions into exit 70 (the scheme in {@link Main}).
 */
@Command(mixinStandardHelpOptions = true)
abstract class ToolCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    /**
     * Runs the command with picocli's stdout and stderr.
     *
     * @return the exit code ({@link Main#EXIT_OK} or {@link Main#EXIT_INPUT})
     * @throws InputException for an input the command refuses, or an {@link IOException} it met,
     *     described as one line naming the file ({@link InputFiles#describe}, naming {@link
     *     #inputFile()} when the exception does not)
     */
    @Override
    public final Integer call() throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = Main.advising(spec, spec.commandLine().getErr()); // "pass --X" names an option it has
        try {
            return run(out, err);
        } catch (IOException e) {
            throw new InputException(InputFiles.describe(e, inputFile()));
        }
    }

    /**
     * The command's work.
     *
     * @param out stdout (the report)
     * @param err stderr (warnings)
     * @return the exit code
     */
    abstract int run(PrintWriter out, PrintWriter err) throws Exception;

    /** @return the file an I/O error is about when the exception names none (null: name none) */
    Path inputFile() {
        return null;
    }

    /**
     * The spelling of an option's name the user typed, for a usage error to name it ({@code
     * --ranks} where {@code --nranks} has that alias): the last of the option's names on the command
     * line, alone or as {@code --ranks=16}.
     *
     * @param option any one of the option's names, {@code --nranks}
     * @return the name as typed, or {@code option} when it was not typed (its default applies) or the
     *     command has no such option
     */
    final String typed(String option) {
        picocli.CommandLine.Model.OptionSpec o = spec.findOption(option);
        if (o == null) {
            return option;
        }
        String seen = option;
        for (String arg : spec.commandLine().getParseResult().originalArgs()) {
            for (String name : o.names()) {
                if (arg.equals(name) || arg.startsWith(name + "=")) {
                    seen = name;
                }
            }
        }
        return seen;
    }

    /**
     * Parses {@code --mode} as {@code explain} and {@code replay} spell its error.
     *
     * @param mode the option's value
     * @return the mode
     * @throws UsageException {@code --mode: 'x' is not shadow, canary, enforce or off} (compile's words too)
     */
    static Mode parseMode(String mode) {
        Mode m = Mode.parse(mode);
        if (m == null) {
            throw new UsageException("--mode", "'" + mode + "' is not shadow, canary, enforce or off");
        }
        return m;
    }

    /**
     * The line under {@code policy: FILE ...} of compile, calibrate and import, the commands that
     * write a policy ({@code --mode}: {@link SharedOptions.WrittenMode}): the mode the written
     * policy starts in, what the plugin does in it, and how to switch (the job's {@code
     * NCCL_TUNER_JAVA_MODE}, which overrides the policy's {@code mode}, or running the command again
     * with {@code --mode}); the product's flow is shadow, then canary, then enforce (docs/canary.md).
     *
     * @param m the policy's mode
     * @param command the command that wrote it ({@code compile}), named in how to switch
     * @return {@code mode: shadow (the plugin logs what the policy would change and changes nothing);
     *     ...}
     */
    static String modeLine(Mode m, String command) {
        return "mode: " + m.spelling()
                + switch (m) {
                    case SHADOW ->
                        " (the plugin logs what the policy would change and changes nothing); when its logs "
                                + "agree, run it with NCCL_TUNER_JAVA_MODE=canary, then enforce, or " + command
                                + " with --mode enforce "
                                + "(docs/canary.md)";
                    case CANARY ->
                        " (the policy's picks on a fraction of the calls each rule covers, "
                                + "NCCL_TUNER_JAVA_CANARY, default 0.1; NCCL's on the rest); when `nccl-tuner report` on its logs "
                                + "says so, run it with NCCL_TUNER_JAVA_MODE=enforce, or " + command
                                + " with --mode enforce "
                                + "(docs/canary.md)";
                    case ENFORCE ->
                        " (the plugin applies the policy's picks); NCCL_TUNER_JAVA_MODE=shadow in the job, or "
                                + command + " with --mode shadow, only logs them";
                    case OFF ->
                        " (the plugin loads and checks the policy and changes nothing); NCCL_TUNER_JAVA_MODE=shadow "
                                + "or enforce in the job, or " + command + " with --mode shadow or enforce, runs it";
                };
    }

    /**
     * Parses a {@code --collective} that takes one collective or {@code all}, as {@code show} and
     * {@code explain --topology} spell it (NCCL's ncclFunc_t names, {@link Collective#parse}).
     *
     * @param name the option's value
     * @return the collective, or for {@code all} (any case) all five in ncclFunc_t order (NCCL
     *     src/include/nccl_common.h): Broadcast, Reduce, AllGather, ReduceScatter, AllReduce
     * @throws InputException {@code --collective: unknown collective 'x'}
     */
    static List<Collective> parseCollectives(String name) throws InputException {
        if (name.equalsIgnoreCase("all")) {
            return List.of(Collective.values());
        }
        Collective c = Collective.parse(name);
        if (c == null) {
            throw new UsageException("--collective: unknown collective '" + name + "'");
        }
        return List.of(c);
    }

    /**
     * Refuses an output file whose folder does not exist, before any work: the commands write files
     * into existing folders and never create one (a mistyped folder would otherwise appear
     * silently). {@code -} (stdout) and null (not given) pass.
     *
     * @param option the option that names the file, {@code -o}, {@code --html}, {@code --emit-policy}
     * @param p the file
     * @throws InputException {@code -o /x/p.yaml: directory /x does not exist; compile writes into an
     *     existing directory (mkdir -p it first)}, or {@code ... /x is not a directory; ...}
     */
    final void requireOutputDirectory(String option, Path p) throws InputException {
        String why = outputDirectoryProblem(p, spec.name());
        if (why != null) {
            throw new InputException(option + " " + p, why);
        }
    }

    /**
     * Why a file cannot be written for want of its folder, and what to do.
     *
     * @param p the file, or null, or {@code -} (stdout)
     * @param command the command that writes it, named in the message, or null
     * @return {@code directory /x does not exist; compile writes into an existing directory (mkdir -p
     *     it first)} (without a command: {@code directory /x does not exist (mkdir -p it first)}), or
     *     {@code /x is not a directory ...}; null when the folder exists (also for null and {@code -})
     */
    private static String outputDirectoryProblem(Path p, String command) {
        if (p == null || p.toString().equals("-")) {
            return null;
        }
        Path parent = p.toAbsolutePath().getParent();
        if (parent == null || Files.isDirectory(parent)) {
            return null;
        }
        String why = Files.exists(parent) ? parent + " is not a directory" : "directory " + parent + " does not exist";
        return why + (command == null ? "" : "; " + command + " writes into an existing directory")
                + " (mkdir -p it first)";
    }

    /**
     * Writes a whole text file (UTF-8) into an existing folder (the command checked it with {@link
     * #requireOutputDirectory} first; checked here again, as the one place files are written).
     *
     * @param p the file
     * @param text its content
     * @throws InputException {@code p: directory /x does not exist ...} when its folder is missing
     * @throws IOException if the file cannot be written
     */
    static void writeFile(Path p, String text) throws IOException, InputException {
        String why = outputDirectoryProblem(p, null);
        if (why != null) {
            throw new InputException(p.toString(), why);
        }
        Files.writeString(p, text, StandardCharsets.UTF_8);
    }
}
