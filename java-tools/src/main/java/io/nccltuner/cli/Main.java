package io.nccltuner.cli;

import java.io.PrintWriter;
import java.util.List;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * {@code nccl-tuner}: the offline side of nccl-tuner-java. Subcommands compile measurements into a
 * policy, import NCCL example-tuner CSV configs, explain NCCL's cost model from its logs and replay
 * captured tuner calls through the same engine the plugin runs.
 *
 * <p>Exit codes, the same for every subcommand:
 *
 * <ul>
 *   <li>0: done (warnings, if any, went to the report or to stderr).
 *   <li>1: an input error: a file that does not exist or cannot be read, a line the parsers
 *       refuse, a policy that {@code validate} refuses. The
 *       commands throw {@link io.nccltuner.policy.InputException}, the one error carrier, and this
 *       class prints one line on stderr, {@code nccl-tuner <command>: <file>[:<line>]: <what is
 *       wrong>}.
 *   <li>2: a usage error (picocli's convention): no command, an unknown or malformed option or
 *       subcommand, an option value that makes no sense ({@code --nodes 0}, {@code --mode
 *       enforced}: {@link UsageException}), options that do not go together; the message, for
 *       a mistyped option or command the closest ones ({@code did you mean --nccl-log?}), and
 *       {@code see 'nccl-tuner <command> --help'}.
 *   <li>3: the ranks of some shape run different tables or reach different decisions ({@code
 *       report}, with or without {@code --check}, and {@code try}); the report itself was written
 *       ({@link #EXIT_CHECK_TEXT}).
 *   <li>70: an internal error (a bug; EX_SOFTWARE of sysexits.h): one line {@code nccl-tuner:
 *       internal error: <exception>}; the stack trace too when the environment sets
 *       {@code NCCL_TUNER_DEBUG=1}.
 * </ul>
 */
@Command(
        name = "nccl-tuner",
        mixinStandardHelpOptions = true,
        versionProvider = Main.Version.class,
        description = "Offline tools for the nccl-tuner-java NCCL tuner plugin.",
        footer = {
            "",
            "'nccl-tuner COMMAND --help' lists a command's options. " + Main.EXIT_CODES + " README.md and docs/ "
                    + "(in the distribution's folder) say how the commands fit together."
        },
        subcommands = {
            CompileCommand.class,
            CalibrateCommand.class,
            ImportCommand.class,
            ExplainCommand.class,
            ReplayCommand.class,
            SweepCommand.class,
            ValidateCommand.class,
            ShowCommand.class,
            ReportCommand.class,
            TryCommand.class,
            CommandLine.HelpCommand.class
        })
public final class Main implements Runnable {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    /** Exit code: done. */
    public static final int EXIT_OK = 0;
    /** Exit code: an input error (a file that is missing, or whose content is refused). */
    public static final int EXIT_INPUT = 1;
    /**
     * Exit code: a usage error (no command, an unknown or malformed option or subcommand, an option
     * value that makes no sense), picocli's convention.
     */
    public static final int EXIT_USAGE = 2;
    /** Exit code: the ranks disagree ({@code report} and {@code try}: {@link #EXIT_CHECK_TEXT}). */
    public static final int EXIT_CHECK = 3;
    /**
     * What exit code 3 means, one text for the help of every command that exits with it ({@code
     * nccl-tuner --help}, {@code report --help}, {@code try --help}).
     */
    public static final String EXIT_CHECK_TEXT =
            "3 the ranks disagree: ranks of one shape ran different tables or decisions (report and try, after the report)";
    /** The exit codes, one sentence for the help of nccl-tuner and of the commands that exit 3. */
    public static final String EXIT_CODES =
            "Exit codes: 0 done, 1 an input error, 2 a usage error, " + EXIT_CHECK_TEXT + ", 70 an internal error.";
    /** Exit code: an internal error (EX_SOFTWARE). */
    public static final int EXIT_INTERNAL = 70;
    /** Environment variable that adds the stack trace to an internal error. */
    public static final String DEBUG_ENV = "NCCL_TUNER_DEBUG";

    /** Entry point; exits the JVM with the command's exit code. */
    public static void main(String[] args) {
        System.exit(run(args));
    }

    /**
     * Runs the command line without exiting, for tests.
     *
     * @param args command-line arguments
     * @return the exit code
     */
    public static int run(String... args) {
        CommandLine cl = commandLine();
        if (args.length > 0 && !args[0].startsWith("-") && !cl.getSubcommands().containsKey(args[0])) {
            return unknownCommand(cl, args[0]); // picocli would print the top-level help for "nosuch --help" and exit 0
        }
        if (args.length > 1
                && args[0].equals("help")
                && !args[1].startsWith("-")
                && !cl.getSubcommands().containsKey(args[1])) {
            return unknownCommand(cl, args[1]); // picocli's help says "Unknown subcommand 'x'." with no suggestion
        }
        try {
            return cl.execute(args);
        } catch (OutOfMemoryError e) { // an input too large for the heap the launcher gives (-Xmx)
            return outOfMemory(cl.getErr());
        } catch (Error e) { // StackOverflowError: picocli passes Errors through
            return internalError(e, cl.getErr(), debug());
        }
    }

    /**
     * The command line with this tool's exit codes: usage errors exit {@link #EXIT_USAGE}, an
     * {@link io.nccltuner.policy.InputException} from a command prints one line and exits
     * {@link #EXIT_INPUT}, any other exception prints one line and exits {@link #EXIT_INTERNAL}.
     *
     * @return a fresh command line for {@code nccl-tuner}
     */
    static CommandLine commandLine() {
        CommandLine cl = new CommandLine(new Main()).setCaseInsensitiveEnumValuesAllowed(true);
        // every int and long option of every command: ASCII digits only (picocli's own converters
        // use Integer.valueOf, which reads '٢' and '２' as 2)
        cl.registerConverter(Integer.class, s -> (int) asciiWhole(s, "an int", Integer.MIN_VALUE, Integer.MAX_VALUE));
        cl.registerConverter(Integer.TYPE, s -> (int) asciiWhole(s, "an int", Integer.MIN_VALUE, Integer.MAX_VALUE));
        cl.registerConverter(Long.class, s -> asciiWhole(s, "a long", Long.MIN_VALUE, Long.MAX_VALUE));
        cl.registerConverter(Long.TYPE, s -> asciiWhole(s, "a long", Long.MIN_VALUE, Long.MAX_VALUE));
        // try's --trace takes several files: an unknown option after them ('--bogus') is a usage
        // error as in the other commands, not one more trace file (picocli's default takes it as one)
        cl.getSubcommands().get("try").setUnmatchedOptionsAllowedAsOptionParameters(false);
        cl.setParameterExceptionHandler(Main::usageError);
        cl.setExecutionExceptionHandler((ex, cmd, parsed) -> ex instanceof io.nccltuner.policy.InputException
                ? inputError(ex.getMessage(), cmd)
                : ex instanceof UsageException
                        ? usageError(new CommandLine.ParameterException(cmd, ex.getMessage()), new String[0])
                        : internalError(ex, cmd.getErr(), debug()));
        return cl;
    }

    /**
     * The value of an integer option: an optional sign and ASCII digits 0-9, within [min, max].
     *
     * @param s the option's value as given
     * @param type "an int" or "a long", as picocli's own message names it
     * @param min the smallest value the option's type holds
     * @param max the largest
     * @return the value
     * @throws CommandLine.TypeConversionException for anything else (picocli prints it as {@code
     *     Invalid value for option '--nodes': '٢' is not an int: a whole number in ASCII digits 0-9},
     *     exit 2)
     */
    static long asciiWhole(String s, String type, long min, long max) {
        String t = s.strip();
        if (!io.nccltuner.policy.AsciiNumbers.isInteger(t)) {
            throw new CommandLine.TypeConversionException(
                    "'" + s + "' is not " + type + ": a whole number in ASCII digits 0-9");
        }
        try {
            long v = io.nccltuner.policy.AsciiNumbers.parseLong(t);
            if (v >= min && v <= max) {
                return v;
            }
        } catch (NumberFormatException e) {
            // beyond a long: outside the range below
        }
        throw new CommandLine.TypeConversionException("'" + s + "' is not " + type + ": outside " + min + ".." + max);
    }

    private static boolean debug() {
        String v = System.getenv(DEBUG_ENV);
        return v != null && !v.isEmpty() && !v.equals("0");
    }

    /**
     * Prints a usage error: {@code nccl-tuner compile: Unknown option: '--nccl-lgo'; did you mean
     * --nccl-log?} and {@code see 'nccl-tuner compile --help'}. A mistyped option is named even where
     * picocli would first report a required option as missing (the mistyped one, usually: {@code try
     * --polcy p.yaml} says {@code Unknown option: '--polcy'; did you mean --policy?}).
     *
     * @param e picocli's exception
     * @param args the whole command line
     * @return {@link #EXIT_USAGE}
     */
    private static int usageError(CommandLine.ParameterException e, String[] args) {
        CommandLine cmd = e.getCommandLine();
        PrintWriter err = cmd.getErr();
        String name = cmd.getCommandSpec().qualifiedName();
        String message = e.getMessage();
        String unknown = null;
        if (e instanceof CommandLine.MissingParameterException) {
            unknown = unknownOption(cmd, args);
            if (unknown != null) {
                message = "Unknown option: '" + unknown + "'";
            }
        } else if (message != null && message.matches("(?s)Unknown option: '[^']+'; Expected parameter .*")) {
            // picocli's words for an unknown option where an option's value was due (try --trace
            // a.csv --bogus): one fact, as for an unknown option elsewhere
            unknown = message.substring("Unknown option: '".length(), message.indexOf("';"));
            message = "Unknown option: '" + unknown + "'";
        } else if (e instanceof CommandLine.UnmatchedArgumentException u) {
            unknown = u.getUnmatched().stream()
                    .filter(a -> a.startsWith("-") && a.length() > 1)
                    .findFirst()
                    .orElse(null);
        }
        List<String> near = unknown == null ? List.of() : closestOptions(cmd, unknown);
        err.println(
                name + ": " + message + (near.isEmpty() ? "" : "; did you mean " + String.join(" or ", near) + "?"));
        err.println("see '" + name + " --help'");
        err.flush();
        return EXIT_USAGE;
    }

    /**
     * The first word of a subcommand's arguments that looks like an option the command does not
     * have ({@code --polcy}), skipping the values of the options it has.
     *
     * @param cmd the subcommand
     * @param args the whole command line ({@code try --polcy p.yaml})
     * @return the word, without an {@code =VALUE}; null when every option word is known
     */
    static String unknownOption(CommandLine cmd, String[] args) {
        CommandLine.Model.CommandSpec spec = cmd.getCommandSpec();
        int from = List.of(args).indexOf(spec.name()) + 1;
        for (int i = from; i < args.length; i++) {
            String w = args[i];
            if (w.equals("--")) {
                return null;
            }
            if (!w.startsWith("-") || w.length() < 2 || w.matches("-[0-9.].*")) {
                continue;
            }
            String opt = w.contains("=") ? w.substring(0, w.indexOf('=')) : w;
            CommandLine.Model.OptionSpec o = spec.findOption(opt);
            if (o == null && !w.startsWith("--")) {
                o = spec.findOption(w.substring(0, 2)); // -b1K: a short option and its value
                if (o != null) {
                    continue;
                }
            }
            if (o == null) {
                return opt;
            }
            if (o.arity().min() > 0 && !w.contains("=")) {
                i += o.arity().min(); // its value, which may start with '-'
            }
        }
        return null;
    }

    /**
     * The options of a command closest to a mistyped one: of picocli's suggestions ({@link
     * CommandLine.UnmatchedArgumentException#getSuggestions}, by character-pair similarity), those
     * nearest in edits that are {@link #close} to it, compared without their leading dashes.
     *
     * @param cmd the command
     * @param typed the mistyped option, {@code --nccl-lgo}
     * @return {@code [--nccl-log]}; empty when none is close ({@code --bogus})
     */
    static List<String> closestOptions(CommandLine cmd, String typed) {
        String bare = typed.replaceFirst("^-+", "");
        List<String> close = new CommandLine.UnmatchedArgumentException(cmd, List.of(typed))
                .getSuggestions().stream()
                        .filter(o -> o.startsWith("-") && close(bare, o.replaceFirst("^-+", "")))
                        .distinct()
                        .toList();
        int best = close.stream()
                .mapToInt(o -> distance(bare, o.replaceFirst("^-+", "")))
                .min()
                .orElse(0);
        return close.stream()
                .filter(o -> distance(bare, o.replaceFirst("^-+", "")) == best)
                .toList();
    }

    /**
     * Refuses a first argument that names no subcommand: {@code nccl-tuner: unknown command 'x'; did
     * you mean a, b?} (picocli's closest names), or the list of commands when none is close.
     *
     * @return {@link #EXIT_USAGE}
     */
    private static int unknownCommand(CommandLine cl, String name) {
        List<String> near = new CommandLine.UnmatchedArgumentException(cl, List.of(name))
                .getSuggestions().stream().filter(c -> close(name, c)).toList();
        PrintWriter err = cl.getErr();
        err.println("nccl-tuner: unknown command '" + name + "'; "
                + (near.isEmpty()
                        ? "the commands are "
                                + String.join(", ", cl.getSubcommands().keySet())
                        : "did you mean " + String.join(", ", near) + "?"));
        err.println("see 'nccl-tuner --help'");
        err.flush();
        return EXIT_USAGE;
    }

    /**
     * Whether a mistyped command is close enough to a command to suggest it: one is the start of the
     * other (3 characters at least), or they differ by at most a third of the longer's characters
     * (at least 1) in edits ({@link #distance}). picocli's own suggestions name "calibrate, validate" for
     * "frobnicate".
     *
     * @param typed what the user typed
     * @param command a command's name
     * @return whether to suggest it
     */
    static boolean close(String typed, String command) {
        String a = typed.toLowerCase(java.util.Locale.ROOT);
        if (a.length() >= 3 && (command.startsWith(a) || a.startsWith(command))) {
            return true;
        }
        return distance(a, command) <= Math.max(1, Math.max(a.length(), command.length()) / 3);
    }

    /**
     * The edit distance between two words: insertions, deletions, substitutions and swaps of two
     * neighbouring characters, one edit each (optimal string alignment), so that {@code compiel} is
     * one edit from {@code compile}, as {@code --hepl} from {@code --help}.
     *
     * @param typed what the user typed (lower-cased here)
     * @param name a command's or option's name
     * @return the number of edits
     */
    static int distance(String typed, String name) {
        String a = typed.toLowerCase(java.util.Locale.ROOT);
        int[][] d = new int[a.length() + 1][name.length() + 1];
        for (int i = 0; i <= a.length(); i++) {
            d[i][0] = i;
        }
        for (int j = 0; j <= name.length(); j++) {
            d[0][j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            for (int j = 1; j <= name.length(); j++) {
                int sub = d[i - 1][j - 1] + (a.charAt(i - 1) == name.charAt(j - 1) ? 0 : 1);
                d[i][j] = Math.min(sub, Math.min(d[i - 1][j], d[i][j - 1]) + 1);
                if (i > 1 && j > 1 && a.charAt(i - 1) == name.charAt(j - 2) && a.charAt(i - 2) == name.charAt(j - 1)) {
                    d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
                }
            }
        }
        return d[a.length()][name.length()];
    }

    /**
     * Prints an input error as {@code nccl-tuner <command>: <message>}, each line of a message of
     * several (a file's problems, then what to do for all) with that prefix but indented ones (the
     * lines a first line lists); returns {@link #EXIT_INPUT}.
     */
    private static int inputError(String message, CommandLine cmd) {
        PrintWriter err = cmd.getErr();
        for (String line : String.valueOf(message).split("\n", -1)) {
            // an indented line lists its first line's problems (a CSV's refused lines): no prefix
            err.println((line.startsWith(" ") ? "" : cmd.getCommandSpec().qualifiedName() + ": ")
                    + advice(cmd.getCommandSpec(), line));
        }
        err.flush();
        return EXIT_INPUT;
    }

    /**
     * "pass --OPTION", or the parser's "pass --OPTION --OPTION for each part" (group 2): the
     * per-file options each part of a split file needs.
     */
    private static final java.util.regex.Pattern ADVICE =
            java.util.regex.Pattern.compile("\\bpass (--[a-z][a-z-]*)((?: --[a-z][a-z-]*)* for each part)?");

    /**
     * The parser's per-part advice as the command can follow it: compile's {@code pass --in PART
     * --collective NAME --nodes N for each part}; another command's names compile.
     *
     * @param advice {@code pass --collective --nodes for each part}
     */
    private static String eachPart(CommandLine.Model.CommandSpec cmd, String advice) {
        List<String> opts = List.of(advice.substring("pass ".length(), advice.length() - " for each part".length())
                .split(" "));
        if (!cmd.name().equals("compile")) {
            return advice + " (to `nccl-tuner compile`: " + cmd.name() + " reads files as they stand)";
        }
        StringBuilder b = new StringBuilder("pass --in PART");
        for (String o : opts) {
            b.append(' ').append(o).append(' ').append(PER_FILE_VALUE.getOrDefault(o, "N"));
        }
        return b.append(" for each part").toString();
    }

    /**
     * A message's advice as the command that prints it can follow: the parsers say "pass --nodes"
     * (compile's per-file options) whoever reads the file, so where the command has no such option
     * the advice names the commands that have it: {@code pass --nodes to `nccl-tuner compile` (report
     * has no --nodes: it reads --measurements files as they stand)}. Compile's own advice says how
     * the per-file option is given, after {@code --in} with the file the message names: {@code pass
     * --in bare.txt --nodes N}; the parser's {@code pass --collective --nodes for each part} (after
     * a split) {@code pass --in PART --collective NAME --nodes N for each part}.
     *
     * @param cmd the command that prints the message
     * @param message an error or warning
     * @return the message, each "pass --OPTION" the command lacks rewritten
     */
    static String advice(CommandLine.Model.CommandSpec cmd, String message) {
        if (message == null || cmd.parent() == null || !message.contains("pass --")) {
            return message;
        }
        java.util.regex.Matcher m = ADVICE.matcher(message);
        StringBuilder b = new StringBuilder();
        while (m.find()) {
            String opt = m.group(1);
            if (m.group(2) != null) { // the parser's "pass --collective --nodes for each part" (after a split)
                m.appendReplacement(b, java.util.regex.Matcher.quoteReplacement(eachPart(cmd, m.group())));
                continue;
            }
            // compile's per-file options (--nodes, --ranks, ...) mean a file's shape there; another
            // command's option of the same name (try's --nodes: the traces' shape) is not the one meant
            boolean own = cmd.findOption(opt) != null
                    && (cmd.name().equals("compile") || !CompileCommand.PER_FILE.contains(opt));
            List<String> owners = own ? List.of() : owners(cmd.root(), opt);
            String to = owners.isEmpty()
                    ? (own && cmd.name().equals("compile") && CompileCommand.PER_FILE.contains(opt)
                            ? "pass --in " + fileNamed(message) + " " + opt + " "
                                    + PER_FILE_VALUE.getOrDefault(opt, "N")
                            : m.group())
                    : m.group() + " to `nccl-tuner " + String.join("` or `nccl-tuner ", owners) + "` ("
                            + cmd.name() + " has no " + opt
                            + (cmd.findOption("--measurements") != null
                                    ? ": it reads --measurements files as they stand)"
                                    : ")");
            m.appendReplacement(b, java.util.regex.Matcher.quoteReplacement(to));
        }
        m.appendTail(b);
        return b.toString();
    }

    /** What a per-file option's value is, as compile's advice writes it ({@code --in FILE --nodes N}). */
    private static final java.util.Map<String, String> PER_FILE_VALUE =
            java.util.Map.of("--collective", "NAME", "--algo", "NAME", "--proto", "NAME");

    /**
     * {@code FILE} of a message (or report line) that starts {@code [nccl-tuner CMD: ][warning:
     * ]FILE[:LINE[,LINE...]]: }.
     */
    private static final java.util.regex.Pattern FILE_LINE = java.util.regex.Pattern.compile(
            "^ *(?:nccl-tuner [a-z-]+: )?(?:warning: )?((?:[^:\\n]|:(?! ))+?)(:[0-9]+(?:,[0-9]+)*)?: ");

    /**
     * The file a message is about, for advice to write as {@code --in FILE}.
     *
     * @param message an error or warning, {@code FILE:LINE: ...} (after the command's and {@code
     *     warning:} prefixes, where printed with them)
     * @return its FILE, or the placeholder {@code FILE} where the message names none
     */
    private static String fileNamed(String message) {
        java.util.regex.Matcher m = FILE_LINE.matcher(message);
        if (m.find() && (m.group(2) != null || java.nio.file.Files.isRegularFile(java.nio.file.Path.of(m.group(1))))) {
            return m.group(1); // FILE:LINE: ..., or FILE: ... naming a file (a file's last line of problems)
        }
        return "FILE";
    }

    /**
     * A command's stderr with {@link #advice} applied to each string printed on it, so that the
     * warnings of the parsers name options the command has, as its errors do.
     *
     * @param cmd the command
     * @param err its stderr
     * @return a writer onto {@code err} that flushes at each line
     */
    static PrintWriter advising(CommandLine.Model.CommandSpec cmd, PrintWriter err) {
        return new PrintWriter(err, true) {
            @Override
            public void print(String s) {
                super.print(advice(cmd, s));
            }
        };
    }

    /**
     * The commands to name for an option: {@code compile} when it takes it (the parsers' advice is
     * about compile's per-file options; show's {@code --nodes} is a shape grid), else every
     * subcommand that does.
     *
     * @return the names of the subcommands of {@code root} that take {@code option}, in order
     */
    private static List<String> owners(CommandLine.Model.CommandSpec root, String option) {
        CommandLine compile = root.subcommands().get("compile");
        if (compile != null && compile.getCommandSpec().findOption(option) != null) {
            return List.of("compile");
        }
        return root.subcommands().entrySet().stream()
                .filter(e -> e.getValue().getCommandSpec().findOption(option) != null)
                .map(java.util.Map.Entry::getKey)
                .toList();
    }

    /**
     * A count with its noun: "1 rule", "21 rules".
     *
     * @param n the count
     * @param noun the singular noun (plural adds "s")
     * @return the phrase
     */
    static String count(long n, String noun) {
        return io.nccltuner.compile.TextReport.count(n, noun);
    }

    /**
     * Reports an {@link OutOfMemoryError}: one line, no stack trace, naming the heap's limit.
     *
     * @param err where to print
     * @return {@link #EXIT_INPUT}: the inputs are larger than the heap holds
     */
    static int outOfMemory(PrintWriter err) {
        long max = Runtime.getRuntime().maxMemory() >> 20;
        err.println("nccl-tuner: out of memory: the inputs need more than the Java heap's " + max
                + " MiB; give fewer or smaller inputs, or a larger heap (NCCL_TUNER_CLI_HEAP=8g for bin/nccl-tuner)");
        err.flush();
        return EXIT_INPUT;
    }

    /**
     * Reports an exception no command handled.
     *
     * @param t the exception
     * @param err where to print
     * @param debug whether to print the stack trace too
     * @return {@link #EXIT_INTERNAL}
     */
    static int internalError(Throwable t, PrintWriter err, boolean debug) {
        err.println(
                "nccl-tuner: internal error: " + t + (debug ? "" : " (" + DEBUG_ENV + "=1 prints the stack trace)"));
        if (debug) {
            t.printStackTrace(err);
        }
        err.flush();
        return EXIT_INTERNAL;
    }

    /**
     * {@code nccl-tuner} with no command: the usage on stderr, then {@link UsageException} (exit
     * {@link #EXIT_USAGE}, as for an unknown command; {@code nccl-tuner --help} prints the same on
     * stdout and exits 0).
     */
    @Override
    public void run() {
        spec.commandLine().usage(spec.commandLine().getErr());
        throw new UsageException("no command given");
    }

    /** Version from the jar manifest (Implementation-Version), or "dev" when run from classes. */
    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            String v = Main.class.getPackage().getImplementationVersion();
            return new String[] {"nccl-tuner " + (v == null ? "dev" : v)};
        }
    }
}
