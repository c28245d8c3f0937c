package io.nccltuner.policy;

import java.util.List;

/**
 * One problem of a policy file, and the one place its message is formatted (after Dropwizard's
 * {@code ConfigurationParsingException.Builder}: a summary, where, a detail, suggestions):
 *
 * <pre>file:line:column: field.path: summary; detail; did you mean X?</pre>
 *
 * or, where nothing close was written, {@code ...; use A, B or C}. Line and column are 1-based and
 * point at the offending key or value; {@code field.path} is the YAML path in the policy schema
 * ({@code profiles[0].rules[2].candidates[0].algorithm}), empty for the whole file.
 */
public final class PolicyProblem {
    private final String file;
    private final int line;
    private final int column;
    private String path = "";
    private final String summary;
    private String detail;
    private String suggestion;
    private String quoteSuggestion = "";
    private List<String> allowed = List.of();
    private String allowedPrefix = "use ";

    private PolicyProblem(String file, int line, int column, String summary) {
        this.file = file;
        this.line = line;
        this.column = column;
        this.summary = summary;
    }

    /**
     * @param file the file's name as messages give it
     * @param line 1-based line, or 0 for the whole file
     * @param column 1-based column (ignored when line is 0)
     * @param summary what is wrong, e.g. {@code unknown algorithm 'RINGG'}
     * @return a builder
     */
    public static PolicyProblem at(String file, int line, int column, String summary) {
        return new PolicyProblem(file, line, column, summary);
    }

    /** @param fieldPath the YAML path of the field, empty for none */
    public PolicyProblem path(String fieldPath) {
        this.path = fieldPath == null ? "" : fieldPath;
        return this;
    }

    /** @param text more about the problem or what to do, or null */
    public PolicyProblem detail(String text) {
        this.detail = text;
        return this;
    }

    /**
     * @param closest the closest allowed name ({@link EnumNames#suggest}), or null
     * @param quoted whether to quote it ({@code 'numPipeOps'} for fields, bare for enum values)
     */
    public PolicyProblem suggest(String closest, boolean quoted) {
        this.suggestion = closest;
        this.quoteSuggestion = quoted ? "'" : "";
        return this;
    }

    /**
     * Lists what is allowed when no suggestion is close enough.
     *
     * @param names the allowed names
     * @param prefix the words before the list, e.g. {@code "use "} or {@code "allowed: "}
     */
    public PolicyProblem allowed(List<String> names, String prefix) {
        this.allowed = List.copyOf(names);
        this.allowedPrefix = prefix;
        return this;
    }

    /** @return the one-line message */
    public String format() {
        StringBuilder sb = new StringBuilder(file);
        if (line > 0) {
            sb.append(':').append(line).append(':').append(column);
        }
        sb.append(": ");
        if (!path.isEmpty()) {
            sb.append(path).append(": ");
        }
        sb.append(summary);
        if (detail != null && !detail.isEmpty()) {
            sb.append("; ").append(detail);
        }
        if (suggestion != null) {
            sb.append("; did you mean ")
                    .append(quoteSuggestion)
                    .append(suggestion)
                    .append(quoteSuggestion)
                    .append('?');
        } else if (!allowed.isEmpty()) {
            sb.append("; ").append(allowedPrefix).append(list(allowed));
        }
        return sb.toString();
    }

    private String list(List<String> names) {
        if (!allowedPrefix.startsWith("use ") || names.size() < 2) {
            return String.join(", ", names);
        }
        return String.join(", ", names.subList(0, names.size() - 1)) + " or " + names.getLast();
    }

    @Override
    public String toString() {
        return format();
    }
}
