package io.nccltuner.cli;

import io.nccltuner.policy.InputException;
import io.nccltuner.policy.NcclExampleConfig;
import io.nccltuner.compile.PolicyYaml;
import io.nccltuner.compile.TextReport;
import io.nccltuner.policy.Policy;
import io.nccltuner.policy.Policy.Profile;
import io.nccltuner.policy.Policy.Rule;
import io.nccltuner.policy.PolicyException;
import io.nccltuner.policy.PolicyLoader;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code nccl-tuner import}: an NCCL example-tuner CSV config ({@code NCCL_TUNER_CONFIG_FILE})
 * to a YAML policy; see {@link NcclExampleConfig} for the mapping and docs/compile.md.
 *
 * <p>Exit codes as for every command ({@link Main}): 0 success, 1 an input error (a missing
 * file, a line the converter refuses: the message names file:line), 2 a usage error, 70 an internal error (such as a
 * converted policy that does not load).
 */
@Command(
    name = "import",
    description = {
      "Convert an NCCL example-tuner CSV config to a YAML policy.",
      "Lines: collective,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks[,numPipeOps[,regBuff]].",
      "Unknown names are errors with line numbers; byte ranges off the size grid are rounded with a warning."
    })
final class ImportCommand extends ToolCommand {
  @Parameters(index = "0", paramLabel = "FILE", description = "The CSV config (e.g. nccl_tuner.conf).")
  Path file;

  @Option(names = {"-o", "--output"}, paramLabel = "FILE", description = "Write the YAML here (default, or '-': stdout).")
  Path output;

  @Option(names = "--name", paramLabel = "NAME", description = "Policy name (default: the config file name).")
  String name;

  @Override
  Path inputFile() {
    return file;
  }

  @Override
  int run(PrintWriter out, PrintWriter err) throws InputException, IOException {
    InputFiles.requireReadable(file);
    if (output != null && !output.toString().equals("-")) {
      Path parent = output.toAbsolutePath().getParent();
      if (parent != null && !java.nio.file.Files.isDirectory(parent)) {
        throw new InputException("-o " + output, (java.nio.file.Files.exists(parent) ? "" + parent
            + " is not a directory" : "directory " + parent + " does not exist") + "; import writes into an existing "
            + "directory (mkdir -p it first)");
      }
    }
    NcclExampleConfig.Result r = NcclExampleConfig.convert(file);
    Policy p = r.policy();
    if (name != null) {
      p = new Policy(name, p.mode(), p.description(), p.profiles(), p.source());
    }
    for (String w : r.warnings()) {
      err.println("warning: " + w);
    }
    Map<Rule, List<String>> comments = new IdentityHashMap<>();
    for (Profile pr : p.profiles()) {
      for (Rule rule : pr.rules()) {
        List<Integer> ls = NcclExampleConfig.linesOf(rule, r);
        comments.put(rule, List.of("from " + file.getFileName() + (ls.size() == 1 ? " line " : " lines ")
            + ls.stream().map(String::valueOf).collect(Collectors.joining(", "))));
      }
    }
    String yaml;
    try {
      yaml = PolicyYaml.writeChecked(p, List.of("Imported by `nccl-tuner import` from " + file), comments,
          output == null || output.toString().equals("-") ? "import" : output.toString());
    } catch (PolicyException e) {
      throw new IllegalStateException("the converted policy does not load: " + e.getMessage(), e);
    }
    if (output == null || output.toString().equals("-")) {
      out.print(yaml);
    } else {
      writeFile(output, yaml);
      int rules = p.profiles().stream().mapToInt(x -> x.rules().size()).sum();
      out.println("policy: " + output + " (" + Main.count(p.profiles().size(), "profile") + ", "
          + Main.count(rules, "rule") + ", " + Main.count(r.warnings().size(), "warning") + ")");
      for (Profile pr : p.profiles()) {
        out.println("  profile " + pr.name() + " (nRanks " + pr.nRanks() + ", nNodes " + pr.nNodes() + ")");
        for (Rule rule : pr.rules()) {
          out.println("    " + TextReport.describe(rule));
        }
      }
    }
    out.flush();
    err.flush();
    return 0;
  }
}
