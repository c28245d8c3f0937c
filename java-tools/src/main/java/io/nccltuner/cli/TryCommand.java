package io.nccltuner.cli;

import io.nccltuner.model.JobShape;
import io.nccltuner.policy.InputException;
import io.nccltuner.policy.Policy;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code nccl-tuner try --policy P --trace T...}: tries a policy without a GPU through the real
 * plugin. The host harness (tests/harness/harness.c; {@code libexec/nccl-tuner-harness} in the
 * distribution, {@code build/tests/harness} in a build tree) loads {@code libnccl-tuner-java.so}
 * as NCCL does and replays each captured trace, in shadow mode (default) with a decision log in a
 * temporary folder; then the plugin's own lines (the profile each communicator matched, or why none
 * did, its summary), the harness's count, the report of the decision logs ({@code nccl-tuner
 * report}, priced with {@code --measurements}, NCCL's picks also from {@code --nccl-log}, the log
 * compile took, whose NCCL release is checked against {@code --nccl-era} and the measurements')
 * and a verdict line: how many calls the policy would change, or why it changes nothing.
 *
 * <p>Exit codes (cli.Main's scheme): 0 done (also when the policy would change nothing: the last
 * line says why), 1 an input error (a policy that does not load, a missing trace, no harness or
 * plugin found, the harness failing), 2 a usage error (also an --nccl-era the harness does not know), 3 ({@link Main#EXIT_CHECK}) when the report
 * finds that the traces' ranks run different tables or decide differently (the report and the
 * verdict are printed first), 70 an internal error.
 */
@Command(
        name = "try",
        description = {
            "Try a policy without a GPU: replay captured tuner calls through the real plugin.",
            "Shadow mode by default; prints what it decided and the report of its decision logs.",
            "Several --trace files are replayed as the ranks of one job: one process each, one report over",
            "all their decision logs (the report's ranks); try each trace alone for its own report.",
            "The policy is a YAML policy or NCCL's example-tuner CSV (read as NCCL_TUNER_CONFIG_FILE)."
        },
        sortOptions = false)
final class TryCommand extends ToolCommand {
    @Option(
            names = "--policy",
            required = true,
            paramLabel = "POLICY",
            description = "the policy to try: YAML, or NCCL's example-tuner CSV (nccl_tuner.conf)")
    Path policy;

    @Option(
            names = "--trace",
            required = true,
            arity = "1..*",
            paramLabel = "TRACE.csv",
            description = "captured tuner calls (NCCL_TUNER_JAVA_RECORD, or examples/traces/trace_*.csv); repeatable:"
                    + " several are the ranks of one job")
    List<Path> traces = new ArrayList<>();

    @Option(
            names = "--mode",
            paramLabel = "MODE",
            defaultValue = "shadow",
            description = "shadow (default: log what would change) or enforce (also print each changed call)")
    String mode;

    @Option(names = "--nranks", paramLabel = "N", description = "run the traces as nRanks N (with --nnodes)")
    int nRanks;

    @Option(names = "--nnodes", paramLabel = "M", description = "run the traces as nNodes M (with --nranks)")
    int nNodes;

    @Option(
            names = "--nccl-era",
            paramLabel = "E",
            defaultValue = io.nccltuner.model.NcclEra.DEFAULT,
            description =
                    "load and call the plugin as NCCL E does: 2.22, 2.24, 2.28, 2.30 or 2.32.6 (default: ${DEFAULT-VALUE})")
    String era;

    @Option(
            names = "--measurements",
            paramLabel = "DIR_OR_FILE",
            description = "price the decisions with measured times (as report --measurements)")
    Path measurements;

    @picocli.CommandLine.Mixin
    SharedOptions.ReportHtml html;

    @Option(
            names = "--keep-logs",
            paramLabel = "DIR",
            description = "write the decision logs into DIR, a new or empty folder, and keep them (default: a temporary"
                    + " folder, removed)")
    Path keepLogs;

    @Option(
            names = "--harness",
            paramLabel = "PATH",
            description = "the host harness (default: found beside this tool)")
    Path harness;

    @Option(
            names = "--plugin",
            paramLabel = "PATH",
            description = "the plugin library (default: found beside this tool)")
    Path plugin;

    @Option(
            names = "--nccl-log",
            paramLabel = "LOG",
            description =
                    "the NCCL INFO log of the measured runs (as compile --nccl-log; repeatable): its NCCL release is"
                            + " checked against --nccl-era and the --measurements', and with --measurements its selection lines"
                            + " name NCCL's picks for the report's prices (as report --nccl-log)")
    List<Path> ncclLogs = new ArrayList<>();

    /** --nccl-era parsed ({@link #checkOptions}). */
    private io.nccltuner.model.NcclEra tried;

    private static final Pattern SUMMARY =
            Pattern.compile("summary profile .*?: calls (\\d+), rule hits (\\d+), applied (\\d+)");
    private static final Pattern DISAGREE = Pattern.compile("applied \\d+, disagreements (\\d+)");
    private static final Pattern NO_MATCH = Pattern.compile("no profile matches (nRanks=\\d+ nNodes=\\d+)");

    /** What the plugin's lines said over all traces: its summary counts and the shapes no profile matched. */
    private static final class Tally {
        long calls;
        long hits;
        long applied;
        long differ;
        final List<String> unmatched = new ArrayList<>();

        /** Adds what one line of the harness's output says. */
        void read(String line) {
            Matcher m = SUMMARY.matcher(line);
            if (m.find()) {
                calls += Long.parseLong(m.group(1));
                hits += Long.parseLong(m.group(2));
                applied += Long.parseLong(m.group(3));
            }
            Matcher dm = DISAGREE.matcher(line);
            if (dm.find()) {
                differ += Long.parseLong(dm.group(1));
            }
            Matcher nm = NO_MATCH.matcher(line);
            if (nm.find() && !unmatched.contains(nm.group(1))) {
                unmatched.add(nm.group(1));
            }
        }
    }

    @Override
    int run(PrintWriter out, PrintWriter err) throws Exception {
        checkOptions();
        PolicyFiles.Loaded loaded = PolicyFiles.load(policy); // YAML, or NCCL's example CSV
        Policy p = loaded.policy();
        for (String w : loaded.warnings()) {
            err.println("nccl-tuner try: warning: " + w);
        }
        for (Path t : traces) {
            InputFiles.requireReadable(t);
        }
        for (Path l : ncclLogs) {
            InputFiles.requireReadable(l);
        }
        if (measurements != null) { // before the harness runs; report prints the folder's notes
            InputFiles.measurementData(measurements, new PrintWriter(java.io.Writer.nullWriter()));
        }
        Path lib = toolDir();
        Path h = harnessPath(lib);
        Path so = pluginPath(lib);
        checkKeepLogs();
        Path logs = keepLogs != null ? Files.createDirectories(keepLogs) : Files.createTempDirectory("nccl-tuner-try");
        try {
            out.println("try: policy " + p.name() + " (" + policy + "), mode " + mode + ", "
                    + Main.count(traces.size(), "trace")
                    + (nRanks > 0 ? " as " + JobShape.of(nRanks, nNodes) : "") + ", NCCL " + era + ", plugin " + so);
            if (loaded.csv()) {
                out.println("try: " + policy
                        + " is NCCL's example-tuner CSV: given to the plugin as NCCL_TUNER_CONFIG_FILE");
            }
            if (traces.size() > 1) {
                out.println(severalTraces(traces.size()));
            }
            checkNcclLogs(out, err);
            Tally tally = new Tally();
            for (Path t : traces) {
                replayTrace(out, h, so, loaded.csv(), t, logs, tally);
            }
            int rc = tally.hits > 0 ? report(out, err, logs) : Main.EXIT_OK;
            if (rc != Main.EXIT_OK && rc != Main.EXIT_CHECK) {
                return rc;
            }
            out.println(verdict(p, tally)); // also when the traces' ranks decide differently: then report's exit
            out.flush();
            err.flush();
            return rc;
        } finally {
            if (keepLogs == null) {
                try (Stream<Path> s = Files.walk(logs)) {
                    for (Path f : s.sorted(java.util.Comparator.reverseOrder()).toList()) {
                        Files.deleteIfExists(f);
                    }
                }
            }
        }
    }

    /** Refuses --mode, --nranks/--nnodes and --nccl-era values try cannot run with (usage errors, exit 2). */
    private void checkOptions() {
        try {
            tried = io.nccltuner.model.NcclEra.parse(era);
        } catch (IllegalArgumentException e) { // as replay: the spellings the harness knows
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
        }
        if (!mode.equals("shadow") && !mode.equals("enforce")) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(), "--mode must be shadow or enforce, not '" + mode + "'");
        }
        if ((nRanks > 0) != (nNodes > 0) || nRanks < 0 || nNodes < 0 || (nRanks > 0 && nNodes > nRanks)) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(), "--nranks and --nnodes go together, 1 <= nnodes <= nranks");
        }
    }

    /** @return --harness, or the host harness found beside this tool's jar */
    private Path harnessPath(Path lib) throws InputException {
        if (harness != null) {
            if (!Files.isExecutable(harness)) {
                throw new InputException("--harness " + harness, "not an executable file");
            }
            return harness;
        }
        return find(
                "host harness",
                lib == null
                        ? List.of()
                        : List.of(
                                lib.resolveSibling("libexec").resolve("nccl-tuner-harness"),
                                lib.resolveSibling("tests").resolve("harness")),
                "--harness");
    }

    /** @return --plugin, or the plugin library found beside this tool's jar */
    private Path pluginPath(Path lib) throws InputException {
        if (plugin != null) {
            if (!Files.isRegularFile(plugin)) {
                throw new InputException("--plugin " + plugin, "no such file");
            }
            return plugin;
        }
        return find(
                "plugin library", lib == null ? List.of() : List.of(lib.resolve("libnccl-tuner-java.so")), "--plugin");
    }

    /** Refuses a --keep-logs folder that already holds files: the report would read them too. */
    private void checkKeepLogs() throws IOException, InputException {
        if (keepLogs == null || !Files.isDirectory(keepLogs)) {
            return;
        }
        long n;
        try (Stream<Path> s = Files.list(keepLogs)) {
            n = s.count();
        }
        if (n > 0) {
            throw new InputException("--keep-logs " + keepLogs, keepLogsNotEmpty(n));
        }
    }

    /**
     * What each --nccl-log is used for (one line each on stdout), and warnings (stderr) where its
     * NCCL release is not the one --nccl-era runs the plugin as, or where --measurements were taken
     * with another release or on other GPUs than the log's ({@link MeasuredOn}).
     */
    private void checkNcclLogs(PrintWriter out, PrintWriter err) throws IOException {
        if (ncclLogs.isEmpty()) {
            return;
        }
        MeasuredOn measuredOn = measurements == null ? null : MeasuredOn.of(measurements);
        for (Path l : ncclLogs) {
            MeasuredOn logOn = MeasuredOn.of(l);
            out.println(ncclLogLine(l, logOn, measurements != null));
            for (String v : logOn.ncclVersions()) {
                io.nccltuner.model.NcclEra ran =
                        io.nccltuner.model.NcclEra.forVersion(io.nccltuner.policy.Signature.parseVersion(v));
                if (!ran.name().equals(tried.name())) {
                    err.println(otherEra(l, v, tried, ran));
                }
            }
            if (measuredOn != null) {
                measuredOn.otherMachine(measurements, logOn, l).forEach(w -> err.println("nccl-tuner try: " + w));
            }
        }
        err.flush();
    }

    /**
     * The line try prints for an --nccl-log: its NCCL release and what the log serves.
     *
     * @param log the log
     * @param on the releases and GPUs it names
     * @param priced whether --measurements were given (the log's selection lines then price NCCL's picks)
     * @return {@code try: --nccl-log LOG: NCCL 2.28.9; its selection lines name NCCL's picks for the
     *     report's prices}
     */
    static String ncclLogLine(Path log, MeasuredOn on, boolean priced) {
        return "try: --nccl-log " + log + ": "
                + (on.ncclVersions().isEmpty()
                        ? "no 'NCCL version' line, so its release is not checked against --nccl-era"
                        : "NCCL " + String.join(", ", on.ncclVersions()))
                + (priced
                        ? "; its selection lines name NCCL's picks for the report's prices"
                        : "; add --measurements for the report's prices (its selection lines then name NCCL's picks)");
    }

    /**
     * The warning when an --nccl-log's release calls the tuner otherwise than --nccl-era.
     *
     * @param log the log
     * @param version its release, {@code 2.27.7}
     * @param tried the era try runs the plugin as
     * @param ran the era of the log's release
     * @return {@code nccl-tuner try: warning: --nccl-log LOG: NCCL 2.27.7 ran there (tuner v4), but
     *     the plugin is tried as NCCL 2.28 calls it (tuner v5); give --nccl-era 2.24 to try it as
     *     that release}
     */
    static String otherEra(Path log, String version, io.nccltuner.model.NcclEra tried, io.nccltuner.model.NcclEra ran) {
        return "nccl-tuner try: warning: --nccl-log " + log + ": NCCL " + version + " ran there (tuner v"
                + ran.tunerVersion() + "), but the plugin is tried as NCCL " + tried.name() + " calls it (tuner v"
                + tried.tunerVersion() + "); give --nccl-era " + ran.name() + " to try it as that release";
    }

    /** Replays one trace through the harness, prints the plugin's lines and adds its counts to the tally. */
    private void replayTrace(PrintWriter out, Path h, Path so, boolean csv, Path t, Path logs, Tally tally)
            throws IOException, InterruptedException, InputException {
        Path trace = nRanks > 0 ? reshaped(t, logs) : t;
        List<String> cmd = List.of(
                h.toString(),
                "--plugin",
                so.toAbsolutePath().toString(),
                "--nccl-era",
                era,
                "--trace",
                trace.toString());
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        Map<String, String> env = pb.environment();
        env.keySet()
                .removeIf(k -> k.startsWith("NCCL_TUNER_JAVA_")
                        && !k.equals("NCCL_TUNER_JAVA_HOME")
                        && !k.equals("NCCL_TUNER_JAVA_OPTS"));
        env.remove("NCCL_TUNER_PLUGIN");
        env.remove("NCCL_TUNER_CONFIG_FILE");
        env.remove("NCCL_DEBUG_FILE");
        env.put("NCCL_DEBUG", "INFO");
        env.put(
                csv ? "NCCL_TUNER_CONFIG_FILE" : "NCCL_TUNER_JAVA_POLICY",
                policy.toAbsolutePath().toString());
        env.put("NCCL_TUNER_JAVA_MODE", mode);
        env.put(
                "NCCL_TUNER_JAVA_LOG",
                logs.toAbsolutePath().resolve("tuner-%h-%p.jsonl").toString());
        env.putIfAbsent("NCCL_TUNER_JAVA_HOME", System.getProperty("java.home"));
        Process pr = pb.start();
        pr.getOutputStream().close();
        String text = new String(pr.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!pr.waitFor(300, TimeUnit.SECONDS)) {
            pr.destroyForcibly();
            throw new InputException(h.toString(), "the harness did not finish in 300 s on " + t);
        }
        out.println("== " + t);
        for (String line : text.split("\n")) {
            if (line.contains("TUNER/")
                    || line.startsWith("harness:")
                    || line.contains("WARN")
                    || (mode.equals("enforce") && line.contains("[changed]"))) {
                out.println(line.replaceFirst("^\\S+ \\[\\d+\\] NCCL ", ""));
            }
            tally.read(line);
        }
        if (pr.exitValue() != 0) {
            String tail = text.length() > 2000 ? text.substring(text.length() - 2000) : text;
            throw new InputException(
                    h.toString(), "the harness exited " + pr.exitValue() + " on " + t + ":\n" + tail.strip());
        }
    }

    /**
     * Runs {@code nccl-tuner report} over the decision logs the plugin wrote (with --measurements,
     * --nccl-log and --html as given) into {@code out}; its stderr is copied to {@code err}, each
     * {@code nccl-tuner report: } as {@code nccl-tuner try: report: } (the user ran try).
     *
     * @return report's exit code: 0, {@link Main#EXIT_CHECK} when the ranks decide differently, or
     *     another for an error; 0 when the plugin wrote no log
     */
    private int report(PrintWriter out, PrintWriter err, Path logs) throws IOException {
        List<Path> written;
        try (Stream<Path> s = Files.list(logs)) {
            written = s.filter(f -> f.getFileName().toString().endsWith(".jsonl"))
                    .sorted()
                    .toList();
        }
        if (written.isEmpty()) {
            return Main.EXIT_OK;
        }
        out.println("== nccl-tuner report of the decision logs" + (keepLogs != null ? " in " + logs : ""));
        List<String> args = new ArrayList<>(List.of("report"));
        written.forEach(f -> args.add(f.toString()));
        if (measurements != null) {
            args.add("--measurements");
            args.add(measurements.toString());
            for (Path l : ncclLogs) {
                args.add("--nccl-log");
                args.add(l.toString());
            }
        }
        if (html.file != null) {
            args.add("--html");
            args.add(html.file.toString());
        }
        StringWriter reportErr = new StringWriter();
        CommandLine cl = Main.commandLine();
        cl.setOut(out);
        cl.setErr(new PrintWriter(reportErr, true));
        int rc = cl.execute(args.toArray(String[]::new));
        out.flush();
        err.print(reportErr.toString().replace("nccl-tuner report: ", "nccl-tuner try: report: "));
        err.flush();
        return rc;
    }

    /**
     * The policy's profiles and the shapes each matches, for the "changes nothing" verdicts of try,
     * replay and explain: {@code name (nRanks=R nNodes=N); ...} ({@link JobShape}).
     */
    static String profileShapes(Policy p) {
        List<String> shapes = new ArrayList<>();
        for (Policy.Profile pr : p.profiles()) {
            shapes.add(pr.name() + " (" + JobShape.of(pr.nRanks(), pr.nNodes()) + ")");
        }
        return String.join("; ", shapes);
    }

    /**
     * The verdict of try, replay and explain when the policy changes nothing because no profile
     * matches the communicators' shapes.
     *
     * @param command "try", "replay" or "explain"
     * @param p the policy
     * @param shapes the shapes no profile matches ({@link JobShape})
     * @param whose what the shapes are ("the traces' shape"), or null to say nothing
     * @param action what to do, a sentence
     * @return {@code COMMAND: the policy changes nothing: no profile matches SHAPES (WHOSE); its
     *     profiles: NAME (nRanks=R nNodes=N); ... ACTION}
     */
    static String noProfileMatches(
            String command, Policy p, java.util.Collection<String> shapes, String whose, String action) {
        return command + ": the policy changes nothing: no profile matches " + String.join(", ", shapes)
                + (whose == null ? "" : " (" + whose + ")") + "; its profiles: " + profileShapes(p) + ". " + action;
    }

    private String verdict(Policy p, Tally t) {
        long calls = t.calls;
        long hits = t.hits;
        List<String> unmatched = t.unmatched;
        if (hits > 0 && mode.equals("enforce")) {
            return "try: the policy changed " + t.applied + " of " + Main.count(calls, "call") + " (rule hits " + hits
                    + "; a hit changes nothing where NCCL offers none of its candidates)";
        }
        if (hits > 0) {
            return "try: the policy would change " + t.differ + " of " + Main.count(calls, "call") + " (rule hits "
                    + hits
                    + "; changed: where its pick differs from NCCL's); run it with NCCL_TUNER_JAVA_MODE=shadow in the job next";
        }
        if (!unmatched.isEmpty()) {
            List<String> args = spec.commandLine().getParseResult().originalArgs();
            long[] at = profileShape(p);
            String again = at == null ? "" : ": `" + commandAt(args, at[0], at[1]) + "`";
            if (nRanks > 0) {
                return noProfileMatches(
                        "try",
                        p,
                        unmatched,
                        "--nranks " + nRanks + " --nnodes " + nNodes,
                        "Give --nranks and --nnodes of one of them, the job's shape" + again);
            }
            return noProfileMatches(
                    "try",
                    p,
                    unmatched,
                    "the traces' shape",
                    (at == null ? "" : "Try it at its profile's shape" + again + "; for the traces' shape, ")
                            + (at == null ? "C" : "c") + "ompile a policy from measurements of " + unmatched.getFirst()
                            + " (" + measureAt(unmatched.getFirst()) + "), or capture a trace of the job's shape "
                            + "(NCCL_TUNER_JAVA_RECORD=FILE)");
        }
        return "try: the policy changes nothing: no rule covers any of the " + Main.count(calls, "call")
                + " (collective, size and numPipeOps outside its rules, or no candidate NCCL offers)";
    }

    /**
     * A shape the policy's first profile that admits one matches: its least nNodes (at least 1) and
     * least nRanks (at least 2 and at least nNodes), for the command line that tries the policy where
     * it applies.
     *
     * @param p the policy
     * @return {nRanks, nNodes}, or null when no profile admits such a shape
     */
    static long[] profileShape(Policy p) {
        for (Policy.Profile pr : p.profiles()) {
            long nodes = Math.max(1, pr.nNodes().min());
            long ranks = Math.max(Math.max(2, nodes), pr.nRanks().min());
            if (pr.nRanks().contains(ranks) && pr.nNodes().contains(nodes)) {
                return new long[] {ranks, nodes};
            }
        }
        return null;
    }

    /**
     * The command line the user ran (as {@link Main} got it) at another shape: {@code --nranks} and
     * {@code --nnodes} (both spellings) replaced by the shape's.
     *
     * @param args the original arguments, the command's name first
     * @param nRanks the shape's ranks
     * @param nNodes its nodes
     * @return {@code nccl-tuner try --policy p8.yaml --trace t.csv --nranks 8 --nnodes 1}, words with
     *     spaces or quotes single-quoted
     */
    static String commandAt(List<String> args, long nRanks, long nNodes) {
        List<String> out = new ArrayList<>(List.of("nccl-tuner"));
        for (int i = 0; i < args.size(); i++) {
            String a = args.get(i);
            if (a.equals("--nranks") || a.equals("--nnodes")) {
                i++;
            } else if (!a.startsWith("--nranks=") && !a.startsWith("--nnodes=")) {
                out.add(a.matches("[A-Za-z0-9_./:=@%+,-]+") ? a : "'" + a.replace("'", "'\\''") + "'");
            }
        }
        out.addAll(List.of("--nranks", Long.toString(nRanks), "--nnodes", Long.toString(nNodes)));
        return String.join(" ", out);
    }

    private static final Pattern SHAPE = Pattern.compile("nRanks=(\\d+) nNodes=(\\d+)");

    /**
     * How to measure a shape for {@code compile}: a sweep launched on its nodes, then the compile.
     *
     * @param shape {@code nRanks=16 nNodes=2} ({@link JobShape})
     * @return {@code `nccl-tuner sweep -o DIR --launch "srun -N 2 --ntasks-per-node 8" --algorithms
     *     TREE,RING --protocols LL,LL128,SIMPLE`, then `nccl-tuner compile DIR -o POLICY`}
     */
    static String measureAt(String shape) {
        return sweepAt(shape) + ", then `nccl-tuner compile DIR -o POLICY`";
    }

    /**
     * The sweep that measures a shape: launched on its nodes with its ranks per node.
     *
     * @param shape {@code nRanks=16 nNodes=2} ({@link JobShape})
     * @return {@code `nccl-tuner sweep -o DIR --launch "srun -N 2 --ntasks-per-node 8" --algorithms
     *     TREE,RING --protocols LL,LL128,SIMPLE`} (without {@code --launch} for a shape it cannot read)
     */
    static String sweepAt(String shape) {
        Matcher m = SHAPE.matcher(shape);
        String launch = "";
        if (m.matches()) {
            long r = Long.parseLong(m.group(1));
            long n = Long.parseLong(m.group(2));
            launch = " --launch \"srun -N " + n + (r % n == 0 ? " --ntasks-per-node " + r / n : " -n " + r) + "\"";
        }
        return "`nccl-tuner sweep -o DIR" + launch + " --algorithms TREE,RING --protocols LL,LL128,SIMPLE`";
    }

    /** Why a non-empty --keep-logs folder is refused. */
    static String keepLogsNotEmpty(long entries) {
        return "not empty (" + entries + (entries == 1 ? " entry" : " entries")
                + "): the report would read the decision logs of an earlier try"
                + " with this one's; give a new or empty folder";
    }

    /** The line a try of several traces prints: they are one job's ranks. */
    static String severalTraces(int n) {
        return "try: the " + n
                + " traces are replayed as the ranks of one job (one process each); the report reads their"
                + " decision logs together, as that job's ranks; try each trace alone for a report of its own";
    }

    /** The trace with every init and get row's nRanks and nNodes set to --nranks/--nnodes. */
    private Path reshaped(Path t, Path dir) throws IOException {
        List<String> lines = new ArrayList<>();
        for (String l : Files.readAllLines(t, StandardCharsets.UTF_8)) {
            if (l.startsWith("init,") || l.startsWith("get,")) {
                String[] f = l.split(",", -1);
                if (f.length >= 4) {
                    f[2] = Integer.toString(nRanks);
                    f[3] = Integer.toString(nNodes);
                    l = String.join(",", f);
                }
            }
            lines.add(l);
        }
        Path out = dir.resolve("trace-" + nRanks + "x" + nNodes + "-" + t.getFileName());
        Files.write(out, lines, StandardCharsets.UTF_8);
        return out;
    }

    /** @return the folder of this tool's jar (lib/ in the distribution, build/lib in a build tree), or null */
    private static Path toolDir() {
        try {
            Path jar = Path.of(TryCommand.class
                    .getProtectionDomain()
                    .getCodeSource()
                    .getLocation()
                    .toURI());
            return Files.isRegularFile(jar) ? jar.toAbsolutePath().getParent() : null;
        } catch (URISyntaxException | SecurityException | IllegalArgumentException e) {
            return null;
        }
    }

    private static Path find(String what, List<Path> candidates, String option) throws InputException {
        for (Path c : candidates) {
            if (Files.isExecutable(c) || (option.equals("--plugin") && Files.isRegularFile(c))) {
                return c;
            }
        }
        throw new InputException("no " + what + " found"
                + (candidates.isEmpty()
                        ? ""
                        : " (looked for "
                                + String.join(
                                        ", ",
                                        candidates.stream().map(Path::toString).toList()) + ")")
                + "; the distribution has libexec/nccl-tuner-harness and lib/libnccl-tuner-java.so, a build tree"
                + " build/tests/harness and build/lib (make build); or give " + option);
    }
}
