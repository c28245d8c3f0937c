package io.nccltuner.cli;

import io.nccltuner.compile.Repeats;
import io.nccltuner.policy.InputException;
import io.nccltuner.policy.NcclExampleConfig;
import io.nccltuner.policy.Policy;
import io.nccltuner.policy.PolicyException;
import io.nccltuner.policy.PolicyLoader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The policy file of every command that takes one ({@code validate}, {@code replay --policy},
 * {@code explain --policy}, {@code show}): a YAML policy, or NCCL's example-tuner CSV ({@code
 * nccl_tuner.conf}, what the plugin reads from {@code NCCL_TUNER_CONFIG_FILE}), converted as the
 * plugin converts it ({@link NcclExampleConfig}). Each rule knows where it was written, so messages
 * name the CSV line: for a CSV the file's line, for a YAML that {@code nccl-tuner import} wrote the
 * CSV line its comment names.
 */
final class PolicyFiles {
    private PolicyFiles() {}

    /**
     * A loaded policy and where its rules come from.
     *
     * @param policy the policy the plugin runs: for a CSV without the lines that can never apply
     *     ({@link NcclExampleConfig#withoutWhatNeverApplies}, as the plugin and import leave them
     *     out), so that its compiled tables and their sha256 are the plugin's
     * @param converted for a CSV the whole conversion, never-applicable lines included (validate
     *     reports those as errors); for a YAML {@code policy}
     * @param csv whether the file is NCCL's example-tuner CSV
     * @param warnings the conversion's approximations ({@code file:line: text}), those of one kind on
     *     several lines folded into one ({@link #folded}); empty for YAML
     * @param leftOut one warning per line or profile left out of {@code policy} (what the plugin and
     *     import warn of); empty for YAML
     * @param origins for each rule (by identity) where it was written in a CSV, e.g.
     *     {@code nccl_tuner.conf:3} or {@code nccl_tuner.conf:3,5}; absent when unknown
     */
    record Loaded(
            Policy policy,
            Policy converted,
            boolean csv,
            List<String> warnings,
            List<String> leftOut,
            Map<Policy.Rule, String> origins) {
        /**
         * The name of rule {@code r} of profile {@code p} of {@link #policy} in messages.
         *
         * @param p profile index
         * @param r rule index within the profile
         * @return {@code profiles[p].rules[r]}; for a CSV its line ({@code nccl_tuner.conf:3}); for a
         *     YAML that import wrote {@code profiles[p].rules[r] from nccl_tuner.conf:3}
         */
        String ruleName(int p, int r) {
            return ruleNameIn(policy, p, r);
        }

        /**
         * As {@link #ruleName}, of rule {@code r} of profile {@code p} of {@link #converted}.
         *
         * @param p profile index in {@link #converted}
         * @param r rule index within the profile
         * @return the rule's name in messages
         */
        String convertedRuleName(int p, int r) {
            return ruleNameIn(converted, p, r);
        }

        private String ruleNameIn(Policy of, int p, int r) {
            String path = "profiles[" + p + "].rules[" + r + "]";
            String o = origins.get(of.profiles().get(p).rules().get(r));
            if (o == null) {
                return path;
            }
            return csv ? o : path + " from " + o;
        }
    }

    private static final Pattern IMPORT_HEADER = Pattern.compile("^# Imported by `nccl-tuner import` from (.+)$");
    private static final Pattern RULE_COMMENT = Pattern.compile("^\\s+# (?:from \\S+ )?lines? ([0-9][0-9, ]*)$");

    /**
     * Whether a file is NCCL's example-tuner CSV rather than a YAML policy: named {@code .conf},
     * {@code .csv} or {@code .txt}, or its first line that is neither blank nor a comment has 8 to 10
     * comma-separated fields and no YAML key ({@code name:}).
     *
     * @param file the file (readable)
     * @return true for the CSV
     * @throws IOException if it cannot be read
     */
    static boolean isCsv(Path file) throws IOException {
        Boolean byName = io.nccltuner.policy.NcclExampleConfig.csvByName(file);
        if (byName != null) {
            return byName;
        }
        for (String l : Files.readAllLines(file, StandardCharsets.UTF_8)) {
            String t = l.strip();
            if (t.isEmpty() || t.startsWith("#") || t.equals("---")) {
                continue;
            }
            int fields = t.split(",", -1).length;
            return fields >= 8 && fields <= 10 && !t.matches("^[A-Za-z_]+\\s*:.*");
        }
        return false;
    }

    /**
     * Loads a policy file, YAML or CSV.
     *
     * @param file the file (checked readable first)
     * @return the policy and its rules' origins
     * @throws InputException a file that does not load: for the YAML the loader's problems, for the
     *     CSV the first refused line ({@code file:line: ...}; validate lists the others itself)
     * @throws IOException if it cannot be read
     */
    static Loaded load(Path file) throws InputException, IOException {
        return load(file, false);
    }

    /**
     * @param everyLine for a refused CSV, name every refused line ({@link #convertCsv}), not only the first
     */
    private static Loaded load(Path file, boolean everyLine) throws InputException, IOException {
        InputFiles.requireReadable(file);
        if (isCsv(file)) {
            NcclExampleConfig.Result r = everyLine ? convertCsv(file) : NcclExampleConfig.convert(file);
            Map<Policy.Rule, String> origins = new IdentityHashMap<>();
            for (Policy.Profile pr : r.policy().profiles()) {
                for (Policy.Rule rule : pr.rules()) {
                    List<Integer> ls = NcclExampleConfig.linesOf(rule, r);
                    if (!ls.isEmpty()) {
                        origins.put(
                                rule,
                                file + ":"
                                        + String.join(
                                                ",",
                                                ls.stream().map(String::valueOf).toList()));
                    }
                }
            }
            List<String> leftOut = new ArrayList<>();
            Policy plugin = NcclExampleConfig.withoutWhatNeverApplies(r, file.toString(), leftOut);
            return new Loaded(plugin, r.policy(), true, csvWarnings(file, r.warnings()), leftOut, origins);
        }
        Policy p;
        try {
            p = PolicyLoader.load(file);
        } catch (PolicyException e) {
            throw new InputException(e.getMessage());
        }
        return new Loaded(
                p,
                p,
                false,
                List.of(),
                List.of(),
                importedOrigins(p, Files.readAllLines(file, StandardCharsets.UTF_8)));
    }

    /**
     * Converts NCCL's example-tuner CSV, refusing it with every line the converter refuses, as
     * {@code validate} lists them ({@link ValidateCommand#csvProblems}), not only the first (where
     * the plugin's converter stops).
     *
     * @param file the CSV (readable)
     * @return the conversion
     * @throws InputException the one refused line ({@code file:line: ...}); for several, {@code
     *     file: NCCL example-tuner CSV: refused, 3 problems:} then each on a line of its own, indented
     * @throws IOException if it cannot be read
     */
    static NcclExampleConfig.Result convertCsv(Path file) throws InputException, IOException {
        try {
            return NcclExampleConfig.convert(file);
        } catch (InputException e) {
            List<String> problems = ValidateCommand.csvProblems(file, e);
            if (problems.size() < 2) {
                throw e;
            }
            StringBuilder sb = new StringBuilder(
                    file + ": NCCL example-tuner CSV: refused, " + Main.count(problems.size(), "problem") + ":");
            problems.forEach(x -> sb.append("\n  ").append(x));
            throw new InputException(sb.toString());
        }
    }

    /**
     * Loads a policy file, YAML or CSV, and prints the CSV conversion's approximations and the lines
     * left out as never applicable ({@link #printWarnings}), as the commands that read a policy
     * report them.
     *
     * @param file the file (checked readable first)
     * @param warnings where the warnings go (stderr)
     * @return the policy and its rules' origins
     * @throws InputException as {@link #load(Path)}, but for a refused CSV every refused line
     *     ({@link #convertCsv}), as validate lists them
     * @throws IOException if it cannot be read
     */
    static Loaded load(Path file, java.io.PrintWriter warnings) throws InputException, IOException {
        Loaded l = load(file, true);
        int n = l.warnings().size() + l.leftOut().size();
        if (n <= MAX_WARNINGS_SAID) {
            printWarnings(warnings, "", l.warnings());
            printWarnings(warnings, "", l.leftOut()); // as the plugin and import warn of them
        } else {
            warnings.println(manyWarnings(file, l.warnings().size(), l.leftOut().size()));
        }
        return l;
    }

    /**
     * The most warnings of reading a policy that replay, explain, show and try print one by one;
     * above it, one line says how many and that validate lists them (newcomer walk 11: NVIDIA's
     * example CSV printed 9-12 lines before any output, on every run).
     */
    static final int MAX_WARNINGS_SAID = 3;

    /**
     * @param file the policy
     * @param read the conversion's warnings (rounded boundaries, regBuff lines, ...)
     * @param leftOut the lines left out as never applicable (the plugin leaves them out too)
     * @return {@code warning: FILE: read with 9 warnings (3 of them lines left out as never
     *     applicable, as the plugin leaves them out): nccl-tuner validate FILE lists them}
     */
    static String manyWarnings(Path file, int read, int leftOut) {
        return "warning: " + file + ": read with " + Main.count(read + leftOut, "warning")
                + (leftOut > 0
                        ? " (" + leftOut + " of them " + (leftOut == 1 ? "a line" : "lines")
                                + " left out as never applicable, as the plugin leaves them out)"
                        : "")
                + ": `nccl-tuner validate " + file + "` lists them";
    }

    /**
     * Prints a CSV's warnings, one {@code warning: text} line each after {@code indent}: the one
     * place import, validate, replay, explain and show print them, so that each is said once a run.
     *
     * @param to stderr, or validate's stdout
     * @param indent written before each line ({@code ""}, or validate's {@code "  "})
     * @param warnings the warnings, already {@link #folded}
     */
    static void printWarnings(java.io.PrintWriter to, String indent, List<String> warnings) {
        warnings.forEach(w -> to.println(indent + "warning: " + w));
    }

    /** What regBuff 1 lines also never match offline: the clause validate's YAML warning has too. */
    static final String REGBUFF_OFFLINE = ", nor in try, replay or explain, which call with regBuff 0";

    /**
     * A CSV conversion's warnings as the commands print them: regBuff 1 lines' warning with the
     * clause the same rules' warning has in the YAML import writes ({@link #REGBUFF_OFFLINE}), then
     * {@link #folded}.
     *
     * @param file the CSV, as its warnings name it
     * @param warnings the converter's warnings, in order
     * @return the warnings to print, in order
     */
    static List<String> csvWarnings(Path file, List<String> warnings) {
        return folded(
                file,
                warnings.stream()
                        .map(w -> w.contains(": regBuff 1: kept as regBuff true rules,") && !w.endsWith(REGBUFF_OFFLINE)
                                ? w + REGBUFF_OFFLINE
                                : w)
                        .toList());
    }

    /**
     * Folds a CSV's warnings that say one thing of several lines ({@code file:3: text}, {@code
     * file:4: text}, ...) into one at the first one's place: {@code file: 40 lines (3, 4, 5, ...):
     * text}, the first {@link Repeats#NAMED} line numbers named. A warning no other line repeats
     * keeps its {@code file:line: text} form; one that names no single line of {@code file} is left
     * as it is.
     *
     * @param file the CSV, as its warnings name it
     * @param warnings the warnings, in order
     * @return the warnings folded, in order
     */
    static List<String> folded(Path file, List<String> warnings) {
        String prefix = file + ":";
        List<String> out = new ArrayList<>();
        for (List<String> g : Repeats.grouped(warnings, w -> lineText(prefix, w))) {
            if (g.size() == 1 || !(lineText(prefix, g.getFirst()) instanceof String text)) {
                out.addAll(g);
                continue;
            }
            List<String> lines = g.stream()
                    .map(w -> w.substring(prefix.length(), w.indexOf(": ", prefix.length())))
                    .distinct()
                    .toList();
            out.add(
                    lines.size() == 1
                            ? g.getFirst()
                            : file + ": " + lines.size() + " lines (" + Repeats.firstNamed(lines) + "): " + text);
        }
        return out;
    }

    /** @return the text of a {@code file:LINE: text} warning; a key of its own for any other (never folded) */
    private static Object lineText(String prefix, String warning) {
        int colon = warning.startsWith(prefix) ? warning.indexOf(": ", prefix.length()) : -1;
        if (colon > prefix.length() && warning.substring(prefix.length(), colon).matches("[0-9]{1,9}")) {
            return warning.substring(colon + 2);
        }
        return new Object();
    }

    /**
     * The CSV lines of the rules of a YAML that {@code nccl-tuner import} wrote: its header names the
     * CSV, and a comment above each rule its lines, in rule order.
     *
     * @return rule to {@code csv:line[,line]}; empty when the file is not such a YAML or was edited
     *     so that the comments no longer pair with the rules
     */
    static Map<Policy.Rule, String> importedOrigins(Policy p, List<String> text) {
        Map<Policy.Rule, String> out = new IdentityHashMap<>();
        String csv = null;
        List<String> lines = new ArrayList<>();
        for (String l : text) {
            Matcher h = IMPORT_HEADER.matcher(l);
            if (csv == null && h.matches()) {
                csv = h.group(1).strip();
                continue;
            }
            Matcher m = RULE_COMMENT.matcher(l);
            if (m.matches()) {
                lines.add(m.group(1).replace(" ", ""));
            }
        }
        List<Policy.Rule> rules =
                p.profiles().stream().flatMap(x -> x.rules().stream()).toList();
        if (csv == null || lines.size() != rules.size()) {
            return out;
        }
        for (int i = 0; i < rules.size(); i++) {
            out.put(rules.get(i), csv + ":" + lines.get(i));
        }
        return out;
    }
}
