package io.nccltuner.cli;

import io.nccltuner.compile.Compiler;
import io.nccltuner.policy.InputException;
import io.nccltuner.compile.MeasurementSet;
import io.nccltuner.compile.NcclTestsLog;
import io.nccltuner.report.DecisionLogFile;
import io.nccltuner.report.ShadowReport;
import io.nccltuner.report.ShadowReportHtml;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code nccl-tuner report LOGS... [--measurements DIR_OR_CSV] [--html out.html]}: reads the
 * decision logs of a job's ranks ({@code NCCL_TUNER_JAVA_LOG}, one per process) and reports per
 * communicator shape, collective and size the rule hits, NCCL's pick and the policy's pick; whether
 * all ranks run the same table and reach the same decisions (naming any rank that differs); with
 * measurements (a sweep CSV, nccl-tests output, or a folder of them), the expected time saved per
 * call and over the whole log ({@link ShadowReport}). Text on stdout; {@code --html} also writes a
 * page ({@link ShadowReportHtml}).
 *
 * <p>Exit codes (cli.Main's scheme): 0 done (also when ranks differ: the report says so), 1 an
 * input error (a log or measurement file unreadable or malformed), 2 a usage error, 70 an
 * internal error.
 */
@Command(
    name = "report",
    description = {
      "Summarise decision logs of many ranks: decisions per size and cross-rank agreement.",
      "With measurements, also the expected time saved."
    })
final class ReportCommand extends ToolCommand {
  @Parameters(arity = "1..*", paramLabel = "LOG", description = "decision logs (NCCL_TUNER_JAVA_LOG), one per rank")
  List<Path> logs;

  @Option(names = "--measurements", paramLabel = "DIR_OR_FILE",
      description = "sweep CSV or nccl-tests output, or a folder: its *.csv and *.txt files")
  Path measurements;

  @Option(names = "--html", paramLabel = "FILE", description = "also write the report as an HTML page")
  Path html;

  @Override
  int run(PrintWriter out, PrintWriter err) throws InputException, IOException {
    List<DecisionLogFile> files = new ArrayList<>();
    for (Path l : logs) {
      InputFiles.requireReadable(l);
      files.add(DecisionLogFile.read(l));
    }
    List<Compiler.Group> groups = List.of();
    if (measurements != null) {
      MeasurementSet data = new MeasurementSet();
      if (Files.isDirectory(measurements)) {
        List<Path> in;
        try (Stream<Path> s = Files.list(measurements)) {
          in = s.filter(p -> Files.isRegularFile(p) && (p.toString().endsWith(".csv") || p.toString().endsWith(".txt")))
              .sorted().toList();
        }
        if (in.isEmpty()) {
          throw new InputException(measurements.toString(), "no *.csv or *.txt measurement files in this folder");
        }
        for (Path p : in) {
          InputFiles.readMeasurements(p, NcclTestsLog.Options.NONE, data);
        }
      } else {
        InputFiles.readMeasurements(measurements, NcclTestsLog.Options.NONE, data);
      }
      groups = Compiler.compile(data, Compiler.Options.defaults("report")).groups();
    }
    ShadowReport r = ShadowReport.build(files, groups);
    out.print(r.text());
    if (html != null) {
      writeFile(html, ShadowReportHtml.render(r));
      out.println("html: " + html);
    }
    out.flush();
    return Main.EXIT_OK;
  }
}
