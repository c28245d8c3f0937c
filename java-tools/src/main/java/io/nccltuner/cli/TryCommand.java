package io.nccltuner.cli;

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
 * report}, priced with {@code --measurements}) and a verdict line: how many calls the policy
 * would change, or why it changes nothing.
 *
 * <p>Exit codes (cli.Main's scheme): 0 done (also when the policy would change nothing: the last
 * line says why), 1 an input error (a policy that does not load, a missing trace, no harness or
 * plugin found, the harness failing), 2 a usage error, 3 ({@link Main#EXIT_CHECK}) when the report
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

    private static final Pattern SUMMARY =
            Pattern.compile("summary profile .*?: calls (\\d+), rule hits (\\d+), applied (\\d+)");
    private static final Pattern DISAGREE = Pattern.compile("applied \\d+, disagreements (\\d+)");
    private static final Pattern NO_MATCH = Pattern.compile("no profile matches (nRanks=\\d+ nNodes=\\d+)");

    @Override
    int run(PrintWriter out, PrintWriter err) throws Exception {
        if (!mode.equals("shadow") && !mode.equals("enforce")) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(), "--mode must be shadow or enforce, not '" + mode + "'");
        }
        if ((nRanks > 0) != (nNodes > 0) || nRanks < 0 || nNodes < 0 || (nRanks > 0 && nNodes > nRanks)) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(), "--nranks and --nnodes go together, 1 <= nnodes <= nranks");
        }
        PolicyFiles.Loaded loaded = PolicyFiles.load(policy); // YAML, or NCCL's example CSV
        Policy p = loaded.policy();
        for (String w : loaded.warnings()) {
            err.println("nccl-tuner try: warning: " + w);
        }
        for (Path t : traces) {
            InputFiles.requireReadable(t);
        }
        if (harness != null && !Files.isExecutable(harness)) {
            throw new InputException("--harness " + harness, "not an executable file");
        }
        if (plugin != null && !Files.isRegularFile(plugin)) {
            throw new InputException("--plugin " + plugin, "no such file");
        }
        Path lib = toolDir();
        Path h = harness != null
                ? harness
                : find(
                        "host harness",
                        lib == null
                                ? List.of()
                                : List.of(
                                        lib.resolveSibling("libexec").resolve("nccl-tuner-harness"),
                                        lib.resolveSibling("tests").resolve("harness")),
                        "--harness");
        Path so = plugin != null
                ? plugin
                : find(
                        "plugin library",
                        lib == null ? List.of() : List.of(lib.resolve("libnccl-tuner-java.so")),
                        "--plugin");
        if (keepLogs != null && Files.isDirectory(keepLogs)) {
            long n;
            try (Stream<Path> s = Files.list(keepLogs)) {
                n = s.count();
            }
            if (n > 0) {
                throw new InputException("--keep-logs " + keepLogs, keepLogsNotEmpty(n));
            }
        }
        Path logs = keepLogs != null ? Files.createDirectories(keepLogs) : Files.createTempDirectory("nccl-tuner-try");
        try {
            out.println("try: policy " + p.name() + " (" + policy + "), mode " + mode + ", "
                    + Main.count(traces.size(), "trace")
                    + (nRanks > 0 ? " as nRanks " + nRanks + ", nNodes " + nNodes : "") + ", NCCL " + era + ", plugin "
                    + so);
            if (loaded.csv()) {
                out.println("try: " + policy
                        + " is NCCL's example-tuner CSV: given to the plugin as NCCL_TUNER_CONFIG_FILE");
            }
            if (traces.size() > 1) {
                out.println(severalTraces(traces.size()));
            }
            long calls = 0;
            long hits = 0;
            long applied = 0;
            long differ = 0;
            List<String> unmatched = new ArrayList<>();
            for (Path t : traces) {
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
                        loaded.csv() ? "NCCL_TUNER_CONFIG_FILE" : "NCCL_TUNER_JAVA_POLICY",
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
                if (pr.exitValue() != 0) {
                    String tail = text.length() > 2000 ? text.substring(text.length() - 2000) : text;
                    throw new InputException(
                            h.toString(), "the harness exited " + pr.exitValue() + " on " + t + ":\n" + tail.strip());
                }
            }
            List<Path> written;
            try (Stream<Path> s = Files.list(logs)) {
                written = s.filter(f -> f.getFileName().toString().endsWith(".jsonl"))
                        .sorted()
                        .toList();
            }
            if (!written.isEmpty() && hits > 0) {
                out.println("== nccl-tuner report of the decision logs" + (keepLogs != null ? " in " + logs : ""));
                List<String> args = new ArrayList<>(List.of("report"));
                written.forEach(f -> args.add(f.toString()));
                if (measurements != null) {
                    args.add("--measurements");
                    args.add(measurements.toString());
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
                if (rc != Main.EXIT_OK && rc != Main.EXIT_CHECK) {
                    err.print(reportErr);
                    err.flush();
                    return rc;
                }
                err.print(reportErr);
                if (rc == Main.EXIT_CHECK) { // the traces' ranks decide differently: the verdict, then report's exit
                    out.println(verdict(p, calls, hits, applied, differ, unmatched));
                    out.flush();
                    err.flush();
                    return rc;
                }
            }
            out.println(verdict(p, calls, hits, applied, differ, unmatched));
            out.flush();
            return Main.EXIT_OK;
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

    /**
     * The policy's profiles and the shapes each matches, for the "changes nothing" verdicts of try
     * and replay: {@code name (nRanks R, nNodes N); ...}.
     */
    static String profileShapes(Policy p) {
        List<String> shapes = new ArrayList<>();
        for (Policy.Profile pr : p.profiles()) {
            shapes.add(pr.name() + " (nRanks " + pr.nRanks() + ", nNodes " + pr.nNodes() + ")");
        }
        return String.join("; ", shapes);
    }

    private String verdict(Policy p, long calls, long hits, long applied, long differ, List<String> unmatched) {
        if (hits > 0 && mode.equals("enforce")) {
            return "try: the policy changed " + applied + " of " + Main.count(calls, "call") + " (rule hits " + hits
                    + "; a hit changes nothing where NCCL offers none of its candidates)";
        }
        if (hits > 0) {
            return "try: the policy would change " + differ + " of " + Main.count(calls, "call") + " (rule hits " + hits
                    + "; changed: where its pick differs from NCCL's); run it with NCCL_TUNER_JAVA_MODE=shadow in the job next";
        }
        if (!unmatched.isEmpty()) {
            String shapes = profileShapes(p);
            if (nRanks > 0) {
                return "try: the policy changes nothing: no profile matches " + String.join(", ", unmatched)
                        + " (--nranks "
                        + nRanks + " --nnodes " + nNodes + "); its profiles: " + shapes
                        + ". Give --nranks and --nnodes of one of them, the job's shape";
            }
            return "try: the policy changes nothing: no profile matches " + String.join(", ", unmatched)
                    + " (the traces' shape); its profiles: " + shapes
                    + ". Capture a trace of the job's shape (NCCL_TUNER_JAVA_RECORD) or try --nranks N --nnodes M";
        }
        return "try: the policy changes nothing: no rule covers any of the " + Main.count(calls, "call")
                + " (collective, size and numPipeOps outside its rules, or no candidate NCCL offers)";
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
