package io.nccltuner.cli;

import io.nccltuner.compile.PolicyYaml;
import io.nccltuner.compile.TextReport;
import io.nccltuner.model.JobShape;
import io.nccltuner.policy.InputException;
import io.nccltuner.policy.NcclExampleConfig;
import io.nccltuner.policy.Policy;
import io.nccltuner.policy.Policy.Profile;
import io.nccltuner.policy.Policy.Rule;
import io.nccltuner.policy.PolicyException;
import io.nccltuner.validate.PolicyCheck;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
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
 * <p>What it writes always passes {@code nccl-tuner validate}: lines that can never apply (a
 * rule NCCL never offers any candidate of, a profile for one-rank communicators) are left out with
 * a warning naming the CSV line ({@link NcclExampleConfig#withoutWhatNeverApplies}); any other error validate would
 * report refuses the import.
 *
 * <p>Exit codes as for every command ({@link Main}): 0 success, 1 an input error (a missing
 * file, a line the converter refuses: the message names file:line; a converted policy validate
 * would refuse), 2 a usage error, 70 an internal error (such as a converted policy that does not
 * load).
 */
@Command(
        name = "import",
        description = {
            "Convert an NCCL example-tuner CSV config to a YAML policy.",
            "Lines: collective,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks[,numPipeOps[,regBuff]].",
            "Unknown names are errors with line numbers; byte ranges off the size grid are rounded with a warning;",
            "lines that can never apply (candidates NCCL never offers there, one-rank shapes) are left out with a warning,",
            "so the policy written always passes validate. The policy starts in mode shadow (--mode enforce",
            "applies it as NCCL's example plugin applies the CSV)."
        })
final class ImportCommand extends ToolCommand {
    @Parameters(index = "0", paramLabel = "FILE", description = "The CSV config (e.g. nccl_tuner.conf).")
    Path file;

    @Option(
            names = {"-o", "--output"},
            paramLabel = "FILE",
            description = "Write the YAML here (default, or '-': stdout).")
    Path output;

    @Option(names = "--name", paramLabel = "NAME", description = "Policy name (default: the config file name).")
    String name;

    @picocli.CommandLine.Mixin
    SharedOptions.WrittenMode mode;

    @Override
    Path inputFile() {
        return file;
    }

    @Override
    int run(PrintWriter out, PrintWriter err) throws InputException, IOException {
        io.nccltuner.policy.Mode m = mode.parse();
        InputFiles.requireReadable(file);
        requireOutputDirectory("-o", output);
        NcclExampleConfig.Result r = PolicyFiles.convertCsv(file); // every refused line, as validate lists them
        List<String> warnings = new ArrayList<>(PolicyFiles.csvWarnings(file, r.warnings()));
        Policy p = NcclExampleConfig.withoutWhatNeverApplies(r, file.toString(), warnings);
        PolicyFiles.printWarnings(err, "", warnings); // once, whether or not the policy is written
        if (name != null) {
            p = p.withName(name);
        }
        p = p.withMode(m); // shadow by default, as compile: NCCL's example plugin applies the CSV (enforce)
        List<PolicyCheck.Finding> errors = PolicyCheck.check(p).stream()
                .filter(f -> f.level() == PolicyCheck.Level.ERROR)
                .toList();
        if (!errors.isEmpty()) { // import writes only what validate accepts
            throw new InputException(
                    file.toString(),
                    "the converted policy would not validate (" + Main.count(errors.size(), "error") + "; the first: "
                            + errors.getFirst().where() + ": "
                            + errors.getFirst().message()
                            + "); nothing written");
        }
        Map<Rule, List<String>> comments = new IdentityHashMap<>();
        for (Profile pr : p.profiles()) {
            for (Rule rule : pr.rules()) {
                List<Integer> ls = NcclExampleConfig.linesOf(rule, r);
                comments.put(
                        rule,
                        List.of("from " + file.getFileName() + (ls.size() == 1 ? " line " : " lines ")
                                + ls.stream().map(String::valueOf).collect(Collectors.joining(", "))));
            }
        }
        String yaml;
        try {
            yaml = PolicyYaml.writeChecked(
                    p,
                    List.of("Imported by `nccl-tuner import` from " + file),
                    comments,
                    output == null || output.toString().equals("-") ? "import" : output.toString());
        } catch (PolicyException e) {
            throw new IllegalStateException("the converted policy does not load: " + e.getMessage(), e);
        }
        if (output == null || output.toString().equals("-")) {
            out.print(yaml);
            err.println(modeLine(m, "import")); // stdout is the policy alone
        } else {
            PolicyYaml.writeFiles(output, yaml, err, "nccl-tuner import"); // and its compiled form beside it
            int rules = p.profiles().stream().mapToInt(x -> x.rules().size()).sum();
            out.println("policy: " + output + " (" + Main.count(p.profiles().size(), "profile") + ", "
                    + Main.count(rules, "rule") + ", " + Main.count(warnings.size(), "warning") + ")");
            for (Profile pr : p.profiles()) {
                out.println("  profile " + pr.name() + " (" + JobShape.of(pr.nRanks(), pr.nNodes()) + ")");
                for (Rule rule : pr.rules()) {
                    out.println("    " + TextReport.describe(rule)
                            + (rule.regBuff() == null ? "" : " (regBuff " + rule.regBuff() + ")"));
                }
            }
            out.println(modeLine(m, "import"));
        }
        out.flush();
        err.flush();
        return 0;
    }
}
