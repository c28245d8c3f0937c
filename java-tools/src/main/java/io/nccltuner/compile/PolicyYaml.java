package io.nccltuner.compile;

import com.fasterxml.jackson.core.io.JsonStringEncoder;
import io.nccltuner.engine.CompiledPolicy;
import io.nccltuner.policy.ByteSize;
import io.nccltuner.policy.Policy;
import io.nccltuner.policy.Policy.Candidate;
import io.nccltuner.policy.Policy.Profile;
import io.nccltuner.policy.Policy.Range;
import io.nccltuner.policy.Policy.Rule;
import io.nccltuner.policy.PolicyException;
import java.io.IOException;
import java.io.PrintWriter;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * Writes a {@link Policy} as YAML in the schema of docs/policy-format.md, laid out for people:
 * sizes as IEC strings ({@code 1 MiB}), {@code bytes}, {@code match}, {@code ncclPick} and each
 * candidate as one-line flow maps, regrets rounded to 4 decimals, optional comments above the
 * file and above each rule. {@link io.nccltuner.policy.PolicyLoader} reads the output back to an
 * equal policy (up to that rounding).
 */
public final class PolicyYaml {
    private static final Pattern PLAIN = Pattern.compile("[A-Za-z][A-Za-z0-9_.-]*");

    private PolicyYaml() {}

    /**
     * Renders a policy and loads the text back with the plugin's own loader, so that what a
     * command writes is what the plugin accepts (the one home of this check for compile and import).
     *
     * @param p the policy
     * @param header comment lines for the top of the file (without "# "), may be empty
     * @param ruleComments comment lines to put above a rule (looked up by identity), may be empty
     * @param source the name the loader's messages give the text (the output file, or "stdout")
     * @return the YAML text, ending in a newline
     * @throws io.nccltuner.policy.PolicyException if the written text does not load (a bug in the writer)
     */
    public static String writeChecked(
            Policy p, List<String> header, Map<Rule, List<String>> ruleComments, String source)
            throws io.nccltuner.policy.PolicyException {
        String yaml = write(p, header, ruleComments);
        io.nccltuner.policy.PolicyLoader.parse(source, yaml);
        return yaml;
    }

    /**
     * Writes a policy's YAML file (UTF-8, into an existing folder: the commands refuse a missing one
     * before any work, {@code cli/ToolCommand.requireOutputDirectory}), then its compiled form beside it,
     * {@code FILE.compiled} ({@link CompiledPolicy#write}: the policy the
     * plugin's loader makes of the file as written, keyed by its bytes). With it the plugin
     * starts without parsing YAML (docs/dev/benchmarks.md, issue 23 item 5: a 10,000-rule policy's
     * first init in 0.36 s of CPU instead of seconds); once the YAML is edited the key no longer
     * matches and the plugin parses the YAML again. The one home of this for compile, import,
     * calibrate and report --emit-policy (the YAML from {@link #writeChecked}).
     *
     * <p>A policy whose compiled form cannot hold one of its fields (a bug of the format; the
     * writer checks by reading it back) gets none: the YAML is written, an older compiled form
     * beside it is removed, the plugin parses the YAML, and {@code warnings} gets a line saying so
     * ({@code nccl-tuner compile: warning: out.yaml: the binary form does not read back ...}).
     *
     * @param output the YAML file to write
     * @param yaml its text
     * @param warnings where the command prints its warnings (stderr)
     * @param command the command's name for that line ({@code nccl-tuner compile})
     * @return the compiled form written beside it, or null when there is none (see above)
     * @throws IOException if a file cannot be written (its folder missing, too)
     */
    public static Path writeFiles(Path output, String yaml, PrintWriter warnings, String command) throws IOException {
        Files.writeString(output, yaml, StandardCharsets.UTF_8);
        try {
            return CompiledPolicy.write(output);
        } catch (PolicyException e) {
            throw new IllegalStateException(output + ": the written policy does not load: " + e.getMessage(), e);
        } catch (IllegalStateException e) {
            Files.deleteIfExists(CompiledPolicy.pathFor(output));
            warnings.println(command + ": warning: " + e.getMessage() + " (it starts slower; please report it)");
            return null;
        }
    }

    /**
     * Renders a policy.
     *
     * @param p the policy
     * @param header comment lines for the top of the file (without "# "), may be empty
     * @param ruleComments comment lines to put above a rule (looked up by identity), may be empty
     * @return the YAML text, ending in a newline
     */
    public static String write(Policy p, List<String> header, Map<Rule, List<String>> ruleComments) {
        StringBuilder sb = new StringBuilder();
        for (String h : header) {
            sb.append(h.isEmpty() ? "#" : "# " + h).append('\n');
        }
        sb.append("schema: ").append(Policy.SCHEMA).append('\n');
        sb.append("name: ").append(str(p.name())).append('\n');
        sb.append("mode: ").append(p.mode().spelling()).append('\n');
        if (!p.description().isEmpty()) {
            sb.append("description: ").append(str(p.description())).append('\n');
        }
        sb.append("profiles:\n");
        for (Profile pr : p.profiles()) {
            sb.append("  - name: ").append(str(pr.name())).append('\n');
            String machine = hardware(pr.hardware());
            if (!pr.nRanks().equals(Range.ANY) || !pr.nNodes().equals(Range.ANY) || !machine.isEmpty()) {
                sb.append("    match: {nRanks: ")
                        .append(range(pr.nRanks()))
                        .append(", nNodes: ")
                        .append(range(pr.nNodes()))
                        .append(machine)
                        .append("}\n");
            }
            if (!pr.constants().isEmpty()) { // NCCL's model constants, set at init under tuner v5+
                sb.append("    constants:\n");
                for (io.nccltuner.policy.TunerConstant k : pr.constants()) {
                    sb.append("      ")
                            .append(k.name())
                            .append(": ")
                            .append(number(k.value()))
                            .append('\n');
                }
            }
            if (pr.rules().isEmpty()) {
                sb.append("    rules: []\n");
                continue;
            }
            sb.append("    rules:\n");
            for (Rule r : pr.rules()) {
                for (var e : ruleComments.entrySet()) {
                    if (e.getKey() == r) {
                        for (String c : e.getValue()) {
                            sb.append("      # ").append(c).append('\n');
                        }
                    }
                }
                sb.append("      - collective: ").append(r.collective().name()).append('\n');
                sb.append("        bytes: {from: ").append(ByteSize.format(r.fromBytes()));
                if (r.toBytes() != -1L) {
                    sb.append(", to: ").append(ByteSize.format(r.toBytes()));
                }
                sb.append("}\n");
                if (!r.numPipeOps().equals(Range.ANY)) {
                    sb.append("        numPipeOps: ")
                            .append(range(r.numPipeOps()))
                            .append('\n');
                }
                if (r.regBuff() != null) {
                    sb.append("        regBuff: ").append(r.regBuff()).append('\n');
                }
                if (r.ncclPick() != null) {
                    sb.append("        ncclPick: ")
                            .append(candidate(r.ncclPick(), false))
                            .append('\n');
                }
                if (!Double.isNaN(r.ncclRegret())) {
                    sb.append("        ncclRegret: ")
                            .append(number(r.ncclRegret()))
                            .append('\n');
                }
                sb.append("        candidates:\n");
                for (Candidate c : r.candidates()) {
                    sb.append("          - ").append(candidate(c, true)).append('\n');
                }
            }
        }
        return sb.toString();
    }

    private static String candidate(Candidate c, boolean withRegret) {
        StringBuilder sb = new StringBuilder("{algorithm: ")
                .append(c.algorithm().name())
                .append(", protocol: ")
                .append(c.protocol().name());
        if (c.channels() > 0) {
            sb.append(", channels: ").append(c.channels());
        }
        if (withRegret && !Double.isNaN(c.regret())) {
            sb.append(", regret: ").append(number(c.regret()));
        }
        if (c.chunkSize() != 0) {
            sb.append(", chunkSize: ").append(c.chunkSize());
        }
        return sb.append('}').toString();
    }

    /**
     * A profile's hardware fields as the loader reads them (docs/policy-format.md "Hardware match"),
     * each with a leading ", ": gpu, ncclVersion as dotted versions (NCCL_VERSION_CODE
     * 22809 = "2.28.9"), computeCapability as "major.minor" (90 = "9.0"), nvlDomain's three ranges.
     * A range open at one end leaves that end out.
     */
    private static String hardware(io.nccltuner.policy.HardwareMatch hw) {
        StringBuilder sb = new StringBuilder();
        if (hw.gpu() != null) {
            sb.append(", gpu: ").append(str(hw.gpu()));
        }
        if (hw.ncclVersion() != null) {
            sb.append(", ncclVersion: ").append(dotted(hw.ncclVersion(), false));
        }
        if (hw.computeCapability() != null) {
            sb.append(", computeCapability: ").append(dotted(hw.computeCapability(), true));
        }
        if (hw.nNvlDomains() != null || hw.minRanksPerNvlDomain() != null || hw.maxRanksPerNvlDomain() != null) {
            List<String> d = new ArrayList<>();
            if (hw.nNvlDomains() != null) {
                d.add("nNvlDomains: " + range(hw.nNvlDomains()));
            }
            if (hw.minRanksPerNvlDomain() != null) {
                d.add("minRanksPerNvlDomain: " + range(hw.minRanksPerNvlDomain()));
            }
            if (hw.maxRanksPerNvlDomain() != null) {
                d.add("maxRanksPerNvlDomain: " + range(hw.maxRanksPerNvlDomain()));
            }
            sb.append(", nvlDomain: {").append(String.join(", ", d)).append('}');
        }
        return sb.toString();
    }

    private static String dotted(Range r, boolean computeCapability) {
        java.util.function.LongFunction<String> f = v -> computeCapability
                ? "\"" + io.nccltuner.policy.Signature.ccString(v) + "\""
                : "\"" + io.nccltuner.policy.Signature.versionString(v) + "\"";
        if (r.min() == r.max()) {
            return f.apply(r.min());
        }
        List<String> ends = new ArrayList<>();
        if (r.min() > 0) {
            ends.add("min: " + f.apply(r.min()));
        }
        if (r.max() != Long.MAX_VALUE) {
            ends.add("max: " + f.apply(r.max()));
        }
        return "{" + String.join(", ", ends) + "}";
    }

    private static String range(Range r) {
        if (r.equals(Range.ANY)) {
            return "any";
        }
        if (r.min() == r.max()) {
            return Long.toString(r.min());
        }
        return r.max() == Long.MAX_VALUE ? "{min: " + r.min() + "}" : "{min: " + r.min() + ", max: " + r.max() + "}";
    }

    /**
     * A regret for the file: 4 decimals, trailing zeros dropped, always with a decimal point.
     *
     * @param v a regret: a finite fraction from 0 to {@link Compiler#MAX_REGRET}
     * @return e.g. "0.21", "0.0", "1.2345"
     * @throws IllegalArgumentException for anything else (never written: the loader would refuse it)
     */
    static String number(double v) {
        if (!Double.isFinite(v) || v < 0 || v > Compiler.MAX_REGRET) {
            // the compiler caps regrets; a value outside what the loader accepts is a bug, not input
            throw new IllegalArgumentException("regret " + v + " is outside 0.." + Compiler.MAX_REGRET);
        }
        String s = BigDecimal.valueOf(v)
                .setScale(4, RoundingMode.HALF_UP)
                .stripTrailingZeros()
                .toPlainString();
        return s.contains(".") ? s : s + ".0";
    }

    /** A string scalar: plain when it is a simple word, else a double-quoted (JSON-escaped) one. */
    static String str(String s) {
        if (PLAIN.matcher(s).matches()
                && !List.of("true", "false", "null", "yes", "no", "on", "off", "y", "n")
                        .contains(s.toLowerCase(java.util.Locale.ROOT))) {
            return s;
        }
        return "\"" + new String(JsonStringEncoder.getInstance().quoteAsString(s)) + "\"";
    }
}
