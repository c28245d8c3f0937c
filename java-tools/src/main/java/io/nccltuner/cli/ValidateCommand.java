package io.nccltuner.cli;

import io.nccltuner.engine.DecisionTable;
import io.nccltuner.model.JobShape;
import io.nccltuner.policy.InputException;
import io.nccltuner.policy.Policy;
import io.nccltuner.policy.PolicyException;
import io.nccltuner.policy.PolicyLoader;
import io.nccltuner.validate.PolicyCheck;
import java.io.IOException;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code nccl-tuner validate policy.yaml [--nranks N --nnodes M]... [--nccl-log LOG]...}: loads a
 * policy as the plugin does and prints every problem (not only the first, as the plugin's WARN
 * does), the profile each given communicator shape matches, what can never apply ({@link
 * PolicyCheck}), and with {@code --nccl-log} the rules whose candidates the log's cost table does
 * not offer ({@link #notOffered}).
 *
 * <p>Exit codes: 0 the policy loads and nothing in it is unreachable; 1 it is refused, something
 * can never apply (an error finding; a CSV line as a YAML rule, {@link #csvLine}), or a given shape
 * matches no profile; as for every command
 * ({@link Main}), 2 a usage error and 70 an internal one. Warnings (a candidate NCCL never offers beside others it does) do not change the
 * exit code.
 */
@Command(
        name = "validate",
        description = {
            "Check a policy without running a job: every problem, the profile each shape matches, rules that can never apply.",
            "Exit 0 when it loads and everything in it can apply; 1 otherwise."
        })
final class ValidateCommand extends ToolCommand {
    @picocli.CommandLine.Mixin
    SharedOptions.PolicyArgument policy;

    @Option(
            names = {"--nranks", "--ranks"},
            paramLabel = "N",
            description = "a communicator's nRanks (repeat for several shapes)")
    List<Long> nRanks = new ArrayList<>();

    @Option(
            names = {"--nnodes", "--nodes"},
            paramLabel = "M",
            description = "its nNodes, paired with the --nranks in the same position (one --nnodes applies to all);"
                    + " needed with --nranks")
    List<Long> nNodes = new ArrayList<>();

    @Option(
            names = "--nccl-log",
            paramLabel = "LOG",
            description = "an NCCL INFO log with the latency/bandwidth table NCCL printed at init "
                    + "(NCCL_DEBUG_SUBSYS=INIT,TUNING), as compile, show and try take it: a rule whose candidates that "
                    + "table does not offer (bandwidth 0.0) at its shape is named; repeatable")
    List<java.nio.file.Path> ncclLogs = new ArrayList<>();

    @Override
    int run(PrintWriter out, PrintWriter err) throws InputException, IOException {
        if (nNodes.size() > 1 && nNodes.size() != nRanks.size()) {
            throw new UsageException(nRanks.size() + " --nranks but " + nNodes.size()
                    + " --nnodes; give one --nnodes per --nranks, or one for all");
        }
        for (long v : concat(nRanks, nNodes)) {
            if (v < 1) {
                throw new UsageException("--nranks and --nnodes must be >= 1 (got " + v + ")");
            }
        }
        if (!nRanks.isEmpty() && nNodes.isEmpty()) { // a profile matches nRanks and nNodes both: no silent 1
            throw new UsageException(missingNnodes(nRanks));
        }
        InputFiles.requireReadable(policy.file);
        List<io.nccltuner.compile.MeasurementSet.NotOffered> tables =
                CostTableLogs.read(ncclLogs, out, err, "nccl-tuner validate"); // as explain --log reads them
        PolicyFiles.Loaded loaded;
        if (PolicyFiles.isCsv(policy.file)) {
            try {
                loaded = PolicyFiles.load(policy.file);
            } catch (InputException e) { // the converter stops at the first line it refuses, as the plugin does
                return refusedCsv(out, e);
            }
            out.println(policy.file + ": NCCL example-tuner CSV (read as the plugin reads NCCL_TUNER_CONFIG_FILE), "
                    + Main.count(loaded.warnings().size(), "warning")
                    + (loaded.warnings().isEmpty() ? "" : ":"));
            PolicyFiles.printWarnings(out, "  ", loaded.warnings());
        } else {
            try {
                PolicyLoader.load(policy.file); // every problem, not only the first
            } catch (PolicyException e) {
                out.println(
                        policy.file + ": refused, " + Main.count(e.problems().size(), "problem") + ":");
                for (String problem : e.problems()) {
                    out.println("  " + problem);
                }
                out.println("result: FAILED (the plugin would change nothing and log the first problem and the count)");
                out.flush();
                return Main.EXIT_INPUT;
            }
            loaded = PolicyFiles.load(policy.file);
        }
        // the findings are of every line (what never applies is an error); the profiles, their tables'
        // sha256 and the shapes are of the policy the plugin runs, which leaves such CSV lines out
        Policy p = loaded.converted();
        Policy plugin = loaded.policy();
        int errors = 0;
        int warnings = 0;
        printProfiles(out, plugin);
        List<PolicyCheck.Finding> findings = new ArrayList<>(PolicyCheck.check(p, loaded::convertedRuleName));
        if (!loaded.csv()) { // the CSV's converter said it per line above
            findings.addAll(PolicyCheck.regBuff(p, loaded::convertedRuleName));
        } else {
            findings.replaceAll(ValidateCommand::csvLine);
        }
        findings.addAll(rubinConstants(p));
        for (int s = 0; s < nRanks.size(); s++) {
            long r = nRanks.get(s);
            long n = nNodes.size() == 1 ? nNodes.getFirst() : nNodes.get(s);
            PolicyCheck.ShapeResult sr = PolicyCheck.shape(plugin, r, n, loaded::ruleName);
            if (sr.profileIndex() < 0) {
                out.println(JobShape.of(r, n) + ": no profile matches; the plugin changes nothing there");
                errors++;
            } else {
                out.println(shapeLine(plugin, r, n));
            }
            findings.addAll(sr.findings());
        }
        findings.addAll(notOffered(p, tables, loaded::convertedRuleName));
        io.nccltuner.validate.PolicyLines at = loaded.csv() ? null : io.nccltuner.validate.PolicyLines.of(policy.file);
        for (String line : grouped(findings, p, w -> {
            String lc = at == null ? null : yamlAt(w, at);
            return lc == null ? null : policy.file + ":" + lc;
        })) {
            out.println(line);
            if (line.startsWith("error: ")) {
                errors++;
            } else {
                warnings++;
            }
        }
        // the CSV's own warnings (above, from reading it) count too: one total in the result line
        int read = loaded.csv() ? loaded.warnings().size() : 0;
        out.println("result: " + (errors == 0 ? "OK" : "FAILED") + " (" + Main.count(errors, "error") + ", "
                + Main.count(warnings + read, "warning")
                + (read == 0 ? "" : ": " + read + " from reading the CSV, " + warnings + " of the policy") + ")");
        out.flush();
        return errors == 0 ? Main.EXIT_OK : Main.EXIT_INPUT;
    }

    /**
     * The line of one {@code --nranks}/{@code --nnodes} shape some profile matches: the plugin takes
     * the first profile whose shape and hardware match both hold, so each machine's profile is named.
     *
     * @param plugin the policy the plugin runs
     * @param r nRanks
     * @param n nNodes
     * @return {@code nRanks=2 nNodes=2: profile P (profiles[0], 4 rules)}, then {@code ; else ...} per machine
     */
    private static String shapeLine(Policy plugin, long r, long n) {
        List<String> each = new ArrayList<>();
        for (int i : PolicyCheck.shapeProfiles(plugin, r, n)) {
            Policy.Profile pr = plugin.profiles().get(i);
            boolean any = pr.hardware().isAny();
            each.add((each.isEmpty() ? "" : any ? "any other machine: " : "else ") + "profile " + pr.name()
                    + " (profiles[" + i + "], " + Main.count(pr.rules().size(), "rule") + ")"
                    + (any ? "" : " on " + PolicyCheck.describe(pr.hardware())));
        }
        boolean allNamed = !plugin.profiles()
                .get(PolicyCheck.shapeProfiles(plugin, r, n).getLast())
                .hardware()
                .isAny();
        return JobShape.of(r, n) + ": " + String.join("; ", each)
                + (allNamed ? "; any other machine: no profile, the plugin changes nothing there" : "");
    }

    /** Prints every refused line of the CSV ({@link #csvProblems}) and the result; returns 1. */
    private int refusedCsv(PrintWriter out, InputException e) throws IOException {
        List<String> problems = csvProblems(policy.file, e);
        out.println(policy.file + ": NCCL example-tuner CSV: refused, " + Main.count(problems.size(), "problem") + ":");
        for (String problem : problems) {
            out.println("  " + problem);
        }
        out.println("result: FAILED (the plugin would change nothing and log "
                + (problems.size() == 1 ? "this line" : "the first of these lines") + ")");
        out.flush();
        return Main.EXIT_INPUT;
    }

    /**
     * Every line of a CSV the converter refuses, not only the first (the plugin's converter stops
     * there): the refused line is commented out and the file converted again, until it converts or
     * a problem names no line of its own (a file-wide one, or a JSON file's); a refusal of the
     * whole file (measurement data, an aws-ofi-nccl table: {@code ConfigFormats.refusesWholeFile})
     * is the one problem.
     *
     * @param file the CSV
     * @param first the converter's refusal of the whole file
     * @return the problems, {@code file:line: ...} each, in the order found (the first is the one the
     *     plugin logs)
     * @throws IOException if it cannot be read
     */
    static List<String> csvProblems(java.nio.file.Path file, InputException first) throws IOException {
        List<String> problems = new ArrayList<>(List.of(first.getMessage()));
        if (io.nccltuner.policy.ConfigFormats.refusesWholeFile(first.getMessage())) {
            return problems; // measurement data, another tuner's table: no line of it is a rule
        }
        List<String> text;
        try {
            text = new ArrayList<>(
                    io.nccltuner.policy.PolicyText.read(file, io.nccltuner.policy.NcclExampleConfig.MAX_FILE_BYTES)
                            .lines()
                            .toList());
        } catch (InputException e) {
            return problems;
        }
        boolean json = text.stream()
                .map(String::strip)
                .filter(x -> !x.isEmpty())
                .findFirst()
                .map(x -> x.startsWith("{") || x.startsWith("["))
                .orElse(false);
        java.util.Set<Integer> seen = new java.util.HashSet<>();
        InputException e = first;
        String prefix = file + ":";
        while (!json) {
            String where = e.where();
            if (!where.startsWith(prefix) || !where.substring(prefix.length()).matches("[0-9]{1,9}")) {
                break;
            }
            int line = Integer.parseInt(where.substring(prefix.length()));
            if (line < 1 || line > text.size() || !seen.add(line)) {
                break;
            }
            text.set(line - 1, "#");
            try {
                io.nccltuner.policy.NcclExampleConfig.convert(file.toString(), "p", text);
                break;
            } catch (InputException next) {
                problems.add(next.getMessage());
                e = next;
            }
        }
        return problems.stream().distinct().toList();
    }

    /**
     * A warning per profile that sets constants of the RUBIN row: only tuner v7's constants (NCCL
     * 2.32.6) have it, so under v5/v6 (NCCL 2.28 .. 2.32.5, or 2.32.6 through a v6 export) the plugin
     * does not set them (docs/policy-format.md, "Constants").
     *
     * @param p the policy
     * @return the warnings, in profile order; empty where no profile names the RUBIN row
     */
    static List<PolicyCheck.Finding> rubinConstants(Policy p) {
        List<PolicyCheck.Finding> out = new ArrayList<>();
        for (int i = 0; i < p.profiles().size(); i++) {
            Policy.Profile pr = p.profiles().get(i);
            List<String> rubin = pr.constants().stream()
                    .filter(io.nccltuner.policy.TunerConstant::rubin)
                    .map(io.nccltuner.policy.TunerConstant::name)
                    .toList();
            if (!rubin.isEmpty()) {
                out.add(new PolicyCheck.Finding(
                        PolicyCheck.Level.WARNING,
                        "profiles[" + i + "] (" + pr.name() + ").constants",
                        Main.count(rubin.size(), "RUBIN constant") + " ("
                                + io.nccltuner.compile.Repeats.firstNamed(rubin)
                                + (rubin.size() == 1 ? ") takes" : ") take")
                                + " effect only with NCCL >= 2.32.6 (tuner v7, whose constants have the RUBIN "
                                + "row); under tuner v5/v6 (NCCL 2.28 .. 2.32.5) the plugin"
                                + " does not set " + (rubin.size() == 1 ? "it" : "them"),
                        i));
            }
        }
        return out;
    }

    /**
     * A CSV line NCCL offers none of the candidates of is an error, as the same rule in a policy YAML
     * is: validate exits 1 when something in the file can never apply, whatever its format. NCCL's
     * example plugin passes over such a line silently (NCCL picks there), which is why validate says
     * so: the line reads as in force and is not. The error says so and what to do: delete the line,
     * or import the file ({@code import} leaves it out with a warning, so what it writes validates).
     *
     * @param f a finding of the policy read from the CSV
     * @return {@code f}, its "can never apply" error with what NCCL's example plugin does and the fix
     */
    static PolicyCheck.Finding csvLine(PolicyCheck.Finding f) {
        if (f.level() != PolicyCheck.Level.ERROR || !f.message().startsWith("can never apply")) {
            return f;
        }
        return new PolicyCheck.Finding(
                f.level(),
                f.where(),
                f.message() + "; NCCL's example plugin passes over such a line silently (NCCL picks there): delete"
                        + " the line, or import the file (import leaves it out)",
                f.profile());
    }

    /**
     * The usage error for --nranks without --nnodes: a profile matches a communicator's nRanks and
     * nNodes both, and 16 ranks on 1 node or on 2 may match different profiles.
     *
     * @param nRanks the --nranks given
     * @return {@code --nranks 16 needs --nnodes: the communicator's nodes (a profile matches nRanks
     *     and nNodes both); give --nnodes M, one for all --nranks or one per --nranks}
     */
    static String missingNnodes(List<Long> nRanks) {
        return "--nranks " + nRanks.getFirst() + " needs --nnodes: the communicator's nodes (a profile matches nRanks"
                + " and nNodes both); give --nnodes M, one for all --nranks or one per --nranks";
    }

    /**
     * The "loads" line and one line per profile: its shape ({@link JobShape}), the hardware it
     * needs, its rules and its compiled table's sha256 (what the plugin logs at init).
     */
    private void printProfiles(PrintWriter out, Policy p) {
        int rules = p.profiles().stream().mapToInt(x -> x.rules().size()).sum();
        out.println(policy.file + ": policy " + p.name() + ", mode " + p.mode().spelling() + ", "
                + Main.count(p.profiles().size(), "profile") + ", " + Main.count(rules, "rule") + ": loads");
        for (int i = 0; i < p.profiles().size(); i++) {
            Policy.Profile pr = p.profiles().get(i);
            out.println("  profiles[" + i + "] " + pr.name() + ": " + JobShape.of(pr.nRanks(), pr.nNodes())
                    + (pr.hardware().isAny() ? "" : ", needs " + PolicyCheck.describe(pr.hardware()))
                    + ", " + Main.count(pr.rules().size(), "rule") + ", sha256 "
                    + DecisionTable.compile(pr).sha256());
        }
    }

    private static final java.util.regex.Pattern RULE_PATH =
            java.util.regex.Pattern.compile("profiles\\[\\d+\\]\\.rules\\[\\d+\\]");

    /**
     * The findings as validate prints them, one line each, the same finding about a rule that
     * several profiles hold printed once (two rules of one profile are never one finding): {@code error: nccl_tuner.conf:9 (Broadcast [0 B, 40 KiB)) in 3
     * profiles (profiles[0] nRanks16-nNodes2, profiles[1] nNodes1, profiles[2] any): can never apply:
     * ...} (each profile named with the rule's path where the YAML has one).
     *
     * @param findings in file order
     * @param p the policy (profile names)
     * @return the lines, in the order of each finding's first occurrence; each starts with
     *     {@code error: } or {@code warning: }
     */
    static List<String> grouped(List<PolicyCheck.Finding> findings, Policy p) {
        return grouped(findings, p, w -> null);
    }

    private static final java.util.regex.Pattern YAML_NODE =
            java.util.regex.Pattern.compile("^profiles\\[\\d+\\](?:\\.rules\\[\\d+\\])?");
    private static final java.util.regex.Pattern CANDIDATE =
            java.util.regex.Pattern.compile("\\.candidates\\[\\d+\\]$");

    /**
     * Where in the YAML the node a finding is about starts (its candidate, rule or profile).
     *
     * @param where a finding's field path: {@code profiles[0].rules[2] (AllReduce [1 MiB, 2
     *     MiB)).candidates[1]}, {@code profiles[1] (name)}
     * @param at the YAML's node positions
     * @return {@code line:column}, or null where {@code where} names no node of the file
     */
    static String yamlAt(String where, io.nccltuner.validate.PolicyLines at) {
        java.util.regex.Matcher m = YAML_NODE.matcher(where);
        if (!m.find()) {
            return null;
        }
        java.util.regex.Matcher c = CANDIDATE.matcher(where);
        String candidate = m.group().contains(".rules[") && c.find() ? at.at(m.group() + c.group()) : null;
        return candidate != null ? candidate : at.at(m.group());
    }

    /**
     * As {@link #grouped(List, Policy)}, each finding's YAML position named (issue 21: validate's
     * findings named {@code profiles[0].rules[2]} and no line): a finding alone as {@code error:
     * p.yaml:14:9: profiles[0].rules[2] (...): ...}, as the loader names its problems, and each
     * profile of a grouped finding with {@code (line 14)}.
     *
     * @param findings in file order
     * @param p the policy (profile names)
     * @param located a finding's field path to {@code file:line:column} in the YAML, or null (a CSV,
     *     whose findings name its lines already)
     * @return the lines, as {@link #grouped(List, Policy)}
     */
    static List<String> grouped(
            List<PolicyCheck.Finding> findings, Policy p, java.util.function.Function<String, String> located) {
        java.util.Map<String, List<PolicyCheck.Finding>> groups = new java.util.LinkedHashMap<>();
        // Two rules of one profile that read alike (split only by regBuff, which the rule's name
        // leaves out) are two findings: the n-th such finding of a profile joins the n-th group.
        java.util.Map<String, Integer> perProfile = new java.util.HashMap<>();
        for (PolicyCheck.Finding f : findings) {
            String same = f.level() + "|" + RULE_PATH.matcher(f.where()).replaceAll("*") + "|" + f.message();
            String key = f.profile() < 0
                    ? "#" + groups.size() // not about one profile's rule: alone
                    : same + "|" + perProfile.merge(f.profile() + "|" + same, 1, Integer::sum);
            groups.computeIfAbsent(key, k -> new ArrayList<>()).add(f);
        }
        List<String> out = new ArrayList<>();
        for (List<PolicyCheck.Finding> g : groups.values()) {
            PolicyCheck.Finding f = g.getFirst();
            if (g.size() == 1) {
                String lc = located.apply(f.where());
                out.add((lc == null
                                ? f
                                : new PolicyCheck.Finding(f.level(), lc + ": " + f.where(), f.message(), f.profile()))
                        .toString());
                continue;
            }
            java.util.regex.Matcher m = RULE_PATH.matcher(f.where());
            String where = !m.find()
                    ? f.where()
                    : f.where().startsWith(m.group() + " from ")
                            ? f.where().replace(m.group() + " from ", "")
                            : f.where().replace(m.group(), "rule");
            List<String> each = new ArrayList<>();
            for (PolicyCheck.Finding x : g) {
                java.util.regex.Matcher mx = RULE_PATH.matcher(x.where());
                String lc = located.apply(x.where());
                each.add((mx.find() ? mx.group() : "profiles[" + x.profile() + "]") + " "
                        + p.profiles().get(x.profile()).name()
                        + (lc == null ? "" : " (line " + lc.replaceFirst("^.*:(\\d+):\\d+$", "$1") + ")"));
            }
            out.add((f.level() == PolicyCheck.Level.ERROR ? "error: " : "warning: ") + where + " in " + g.size()
                    + " profiles (" + String.join(", ", each) + "): " + f.message());
        }
        return out;
    }

    /**
     * The rules whose candidates a logged cost table does not offer at its shape (bandwidth 0.0:
     * cost -1 in every getCollInfo call, so the engine passes over them): a warning per rule and
     * table, naming what runs instead, the next candidate offered or NCCL's own pick.
     *
     * @param p the policy
     * @param tables what the logs' tables do not offer, per collective and shape
     * @param ruleName (profile, rule) to the rule's name
     * @return the warnings, in profile and rule order
     */
    static List<PolicyCheck.Finding> notOffered(
            Policy p,
            List<io.nccltuner.compile.MeasurementSet.NotOffered> tables,
            java.util.function.BiFunction<Integer, Integer, String> ruleName) {
        List<PolicyCheck.Finding> out = new ArrayList<>();
        for (int i = 0; i < p.profiles().size(); i++) {
            Policy.Profile pr = p.profiles().get(i);
            for (var t : tables) {
                if (!pr.nRanks().contains(t.nRanks()) || !pr.nNodes().contains(t.nNodes())) {
                    continue;
                }
                for (int r = 0; r < pr.rules().size(); r++) {
                    Policy.Rule rule = pr.rules().get(r);
                    if (rule.collective() != t.collective() || rule.candidates().isEmpty()) {
                        continue;
                    }
                    List<String> passed = new ArrayList<>();
                    String runs = null;
                    for (Policy.Candidate c : rule.candidates()) {
                        var pair = new io.nccltuner.model.AlgoProto(c.algorithm(), c.protocol());
                        if (!t.pairs().contains(pair)) {
                            runs = pair.toString();
                            break;
                        }
                        passed.add(pair.toString());
                    }
                    if (passed.isEmpty()) {
                        continue;
                    }
                    out.add(new PolicyCheck.Finding(
                            PolicyCheck.Level.WARNING,
                            ruleName.apply(i, r) + " (" + PolicyCheck.describe(rule) + ")",
                            "NCCL never offers " + String.join(", ", passed) + " at "
                                    + JobShape.of(t.nRanks(), t.nNodes()) + " (bandwidth 0.0 in the cost table at "
                                    + t.source() + "), so the plugin passes over "
                                    + (passed.size() == 1 ? "it" : "them") + " there: "
                                    + (runs != null
                                            ? runs + " runs"
                                            : "NCCL's own pick stands, the rule changes nothing")
                                    + "; compile with --nccl-log leaves such candidates out",
                            i));
                }
            }
        }
        return out;
    }

    private static List<Long> concat(List<Long> a, List<Long> b) {
        List<Long> all = new ArrayList<>(a);
        all.addAll(b);
        return all;
    }
}
