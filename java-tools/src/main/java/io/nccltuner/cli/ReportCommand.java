package io.nccltuner.cli;

import io.nccltuner.compile.Compiler;
import io.nccltuner.compile.MeasurementSet;
import io.nccltuner.compile.NcclTestsLog;
import io.nccltuner.compile.PolicyYaml;
import io.nccltuner.compile.TextReport;
import io.nccltuner.engine.LogField;
import io.nccltuner.policy.InputException;
import io.nccltuner.policy.Policy;
import io.nccltuner.policy.PolicyException;
import io.nccltuner.report.CanaryReport;
import io.nccltuner.report.DecisionLogFile;
import io.nccltuner.report.PromotedPolicy;
import io.nccltuner.report.ShadowReport;
import io.nccltuner.report.ShadowReportHtml;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code nccl-tuner report LOGS... [--measurements DIR_OR_CSV [--nccl-log LOG]...] [--html out.html]
 * [--min-calls N] [--check] [--emit-policy OUT.yaml --policy POLICY.yaml]}: reads the
 * decision logs of a job's ranks ({@code NCCL_TUNER_JAVA_LOG}, one per process) and reports per
 * communicator shape, collective and size the rule hits, NCCL's pick and the policy's pick; whether
 * all ranks run the same table and reach the same decisions (naming any rank that differs); with
 * measurements (a sweep CSV, nccl-tests output, or a folder of them), the expected time saved per
 * call and over the whole log ({@link ShadowReport}). Text on stdout; {@code --html} also writes a
 * page ({@link ShadowReportHtml}). The canary's measured and profiled lines (docs/canary.md) are
 * read in the same pass ({@link CanaryReport}): both arms per size, the measured gain with its 95%
 * interval, what executed as decided, a verdict per size; {@code --emit-policy} writes the policy
 * cut to the promoted ranges ({@link PromotedPolicy}), in mode enforce.
 *
 * <p>Exit codes (cli.Main's scheme): 0 done, every rank of each shape running the same table and
 * reaching the same decisions; 1 an input error (a log, measurement or policy file unreadable or
 * malformed); 2 a usage error ({@code --emit-policy} without {@code --policy}, {@code --min-calls}
 * below 2); 3 ({@link Main#EXIT_CHECK}) when the ranks of some shape run different tables or reach
 * different decisions, with or without {@code --check} (the report and any files are written
 * first); 70 an internal error.
 */
@Command(
        name = "report",
        description = {
            "Summarise decision logs of many ranks: decisions per size and cross-rank agreement.",
            "With measurements, also the expected time saved. With the canary's measured lines: both arms per size,",
            "the measured gain, verdicts, and (--emit-policy) the policy cut to the promoted ranges."
        },
        footer = {"", Main.EXIT_CODES})
final class ReportCommand extends ToolCommand {
    @Parameters(arity = "1..*", paramLabel = "LOG", description = "decision logs (NCCL_TUNER_JAVA_LOG), one per rank")
    List<Path> logs;

    @Option(
            names = "--measurements",
            paramLabel = "DIR_OR_FILE",
            description =
                    "sweep CSV or nccl-tests output, or a folder: its *.csv and *.txt files, or a `nccl-tuner sweep` "
                            + "folder (failed runs' *.failed.txt and empty files are skipped with a note)")
    Path measurements;

    @Option(
            names = "--nccl-log",
            paramLabel = "FILE",
            description =
                    "NCCL INFO log with TUNING selection lines naming NCCL's own pick (repeatable), as for compile:"
                            + " NCCL's time is then compile's estimate at sizes no rule hit names a pick for")
    List<Path> ncclLogs = new ArrayList<>();

    @picocli.CommandLine.Mixin
    SharedOptions.ReportHtml html;

    @Option(
            names = "--min-calls",
            paramLabel = "N",
            defaultValue = "30",
            description = "timed collectives each canary arm needs for a verdict (default ${DEFAULT-VALUE})")
    long minCalls;

    @Option(names = "--check", description = "kept for scripts: report exits 3 without it too (exit codes below)")
    boolean check;

    @Option(
            names = "--emit-policy",
            paramLabel = "OUT.yaml",
            description = "write --policy cut to the canary's promoted size ranges, in mode enforce")
    Path emitPolicy;

    @Option(
            names = "--policy",
            paramLabel = "POLICY.yaml",
            description = "the policy the canary ran (for --emit-policy)")
    Path policy;

    /**
     * The stderr line of a report whose ranks disagree, before exit {@link Main#EXIT_CHECK}: {@code
     * nccl-tuner report: ranks disagree (1 shape with different compiled tables, 2 sizes with
     * different decisions): exit 3; ...}, a count of 0 left out.
     *
     * @param shapes shapes whose ranks run different compiled tables (sha256 of the comm or measured
     *     lines), each counted once
     * @param sizes (shape, collective, size or size bucket) where ranks decide differently
     * @return the line
     */
    static String disagree(int shapes, int sizes) {
        List<String> parts = new ArrayList<>();
        if (shapes > 0) {
            parts.add(Main.count(shapes, "shape") + " with different compiled tables");
        }
        if (sizes > 0) {
            parts.add(Main.count(sizes, "size") + " with different decisions");
        }
        return "nccl-tuner report: ranks disagree (" + String.join(", ", parts) + "): exit " + Main.EXIT_CHECK
                + "; ranks of one communicator must run the same compiled table and decisions, or the job can hang";
    }

    /** The line a report without {@code --measurements} ends with: how to price it. */
    static final String PRICE_HINT = "not priced: add --measurements FILE_OR_DIR (a sweep CSV or nccl-tests output of "
            + "these GPUs, or a folder of them) for the expected time saved per size and over the log";

    /**
     * The refusal of {@code --emit-policy} over logs without a canary {@code measured} line (shadow
     * logs, or a canary run without the profiler): there is nothing measured to promote.
     */
    static String noMeasuredLines(int logs, Path out) {
        return "--emit-policy: " + (logs == 1 ? "the 1 log has no" : "none of the " + logs + " logs has a")
                + " `measured` line: they are written at each communicator's"
                + " end by a canary run (NCCL_TUNER_JAVA_MODE=canary) that also loads the profiler,"
                + " NCCL_PROFILER_PLUGIN=.../libnccl-tuner-java.so (docs/canary.md); nothing measured to promote, "
                + out
                + " not written";
    }

    /**
     * Why a log with no line the report reads is refused (after its path): an empty log, or one of
     * blank lines, workload lines or lines of unknown types only, is what a job leaves where the
     * plugin never loaded, and a report of it would pass a CI step.
     */
    static final String NO_DECISION_LINES = "no decision lines (no comm line, no aggregate line, no canary measured"
            + " line): did the plugin load? check NCCL_TUNER_PLUGIN (the library's path, or java) and"
            + " NCCL_TUNER_JAVA_LOG (where this log was to be) in the job's environment; the plugin also leaves"
            + " its log empty where no profile matches (validate POLICY --nranks N --nnodes M)";

    /**
     * Reads every log (its measured lines into the canary's builder) and --measurements before any
     * refuses the report ({@link InputFiles#refuseInputs}), so that one run names every refused input.
     *
     * @param files receives the logs read, in order
     * @param canary receives their measured lines
     * @param err where a log's warnings and the refused inputs' lines go
     * @return the measurements, or null without --measurements
     * @throws InputException for a refused input ({@link #NO_DECISION_LINES} for a log without any
     *     line it reads), or several ({@code 2 of 3 inputs refused ...})
     * @throws IOException if reading fails
     */
    private MeasurementSet readInputs(List<DecisionLogFile> files, CanaryReport.Builder canary, PrintWriter err)
            throws InputException, IOException {
        List<InputException> refused = new ArrayList<>(); // every input is read before any refuses the report
        List<InputException> empty = new ArrayList<>(); // logs without a decision line
        for (Path l : logs) { // one pass: each file once, its measured lines folded as they are read
            try {
                InputFiles.requireReadable(l);
                long[] canaryLines = {0};
                DecisionLogFile f = DecisionLogFile.read(
                        l,
                        (type, j, where) -> {
                            if (type.equals(LogField.TYPE_MEASURED) || type.equals(LogField.TYPE_PROFILED)) {
                                canaryLines[0]++;
                            }
                            canary.line(type, j, where);
                        },
                        w -> {
                            err.println(w);
                            err.flush();
                        });
                if (f.comms().isEmpty() && f.aggregates().isEmpty() && canaryLines[0] == 0) {
                    empty.add(new InputException(l.toString(), NO_DECISION_LINES));
                    continue;
                }
                canary.endRank(f.rank());
                files.add(f);
            } catch (InputException e) {
                refused.add(e);
            }
        }
        if (files.isEmpty()) {
            refused.addAll(empty); // nothing to report at all: the plugin never loaded anywhere
        } else if (!empty.isEmpty()) {
            // a rank whose communicators no profile matched leaves its log empty: the others report
            err.println("nccl-tuner report: warning: " + TextReport.count(empty.size(), "log") + " of " + logs.size()
                    + " with no decision lines, reported without "
                    + (empty.size() == 1 ? "it" : "them") + " ("
                    + String.join(
                            ", ", empty.stream().map(InputException::where).toList())
                    + "): ranks where no profile matched, or where the plugin did not load (check NCCL_TUNER_PLUGIN"
                    + " and NCCL_TUNER_JAVA_LOG there)");
            err.flush();
        }
        MeasurementSet data = null;
        if (measurements != null) {
            data = new MeasurementSet();
            try {
                InputFiles.readMeasurementsAt(measurements, NcclTestsLog.Options.NONE, data, err);
            } catch (InputException e) {
                refused.add(e);
            }
        }
        InputFiles.refuseInputs(
                "nccl-tuner report", refused, logs.size() + (measurements == null ? 0 : 1), "nothing reported", err);
        return data;
    }

    @Override
    int run(PrintWriter out, PrintWriter err) throws InputException, IOException {
        requireOutputDirectory("--emit-policy", emitPolicy);
        requireOutputDirectory("--html", html.file);
        if (emitPolicy != null && policy == null) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(), "--emit-policy needs --policy (the policy the canary ran)");
        }
        if (!ncclLogs.isEmpty() && measurements == null) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(), "--nccl-log names NCCL's picks for pricing and needs " + "--measurements");
        }
        if (minCalls < 2) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(), "--min-calls must be at least 2, not " + minCalls);
        }
        Policy ran = null;
        if (policy != null) {
            ran = PolicyFiles.load(policy).policy(); // YAML, or NCCL's example CSV
        }
        List<DecisionLogFile> files = new ArrayList<>();
        CanaryReport.Builder canary = new CanaryReport.Builder();
        MeasurementSet data = readInputs(files, canary, err);
        CanaryReport c = canary.build(minCalls);
        if (emitPolicy != null && c.isEmpty()) {
            throw new InputException(noMeasuredLines(files.size(), emitPolicy));
        }
        List<Compiler.Group> groups = List.of();
        if (data != null) {
            InputFiles.readNcclLogs(ncclLogs, data);
            ShadowReport.loggedPicks(files, data).forEach(data::add); // NCCL's picks as the decision logs name them
            groups = Compiler.compile(data, Compiler.Options.defaults("report")).groups();
        }
        ShadowReport r = ShadowReport.build(files, groups);
        out.print(r.text());
        if (!c.isEmpty()) {
            out.print('\n');
            out.print(c.text());
        }
        if (measurements == null && !r.rows().isEmpty()) {
            out.println(PRICE_HINT);
        }
        String picks = ncclLogs.isEmpty() ? r.pickSourceLine() : null;
        if (picks != null) { // priced without --nccl-log: where NCCL's pick came from
            out.println(picks);
        }
        if (html.file != null) {
            writeFile(html.file, ShadowReportHtml.render(r, c));
            out.println("html: " + html.file);
        }
        if (emitPolicy != null) {
            PromotedPolicy p = PromotedPolicy.of(ran, c);
            String yaml;
            try {
                yaml = PolicyYaml.writeChecked(
                        p.policy(),
                        List.of(
                                "written by nccl-tuner report --emit-policy from "
                                        + Main.count(files.size(), "rank log") + ": " + policy.getFileName()
                                        + " cut to the size ranges the canary promoted",
                                "(min calls " + minCalls + " per arm); NCCL picks everywhere else"),
                        p.comments(),
                        emitPolicy.toString());
            } catch (PolicyException e) {
                throw new IllegalStateException("the promoted policy does not load: " + e.getMessage(), e);
            }
            PolicyYaml.writeFiles(emitPolicy, yaml, err, "nccl-tuner report"); // and its compiled form beside it
            out.println("policy: " + emitPolicy + " (" + Main.count(p.kept(), "rule") + " kept, " + p.cut()
                    + " cut to promoted ranges, " + p.dropped() + " dropped; mode enforce)");
        }
        out.flush();
        if (!(r.tableProblems().isEmpty() && r.decisionProblems().isEmpty() && c.ranksAgree())) {
            java.util.Set<String> shapes = new java.util.HashSet<>(); // a canary log's comm and measured lines
            java.util.stream.Stream.concat(r.tableProblems().stream(), c.tableProblems().stream())
                    .forEach(t -> shapes.add(ShadowReport.tableProblemShape(t)));
            err.println(disagree(
                    shapes.size(),
                    r.decisionProblems().size() + c.decisionProblems().size()));
            err.flush();
            return Main.EXIT_CHECK;
        }
        return Main.EXIT_OK;
    }
}
