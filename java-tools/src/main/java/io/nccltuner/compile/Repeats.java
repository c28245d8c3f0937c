package io.nccltuner.compile;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * Folds repeated lines into one, so that a warning every input file draws is printed once with a
 * count and the first files it names (compile's, show's and validate's per-file warnings), and runs
 * of equal lines are printed once with what tells them apart summed up (sweep {@code --dry-run}'s
 * cells not scheduled, replay {@code --changes-only}'s sizes).
 */
public final class Repeats {
    /** How many of a folded warning's files are named before {@code ...}. */
    public static final int NAMED = 3;

    private Repeats() {}

    /**
     * Groups items by a key, in the order each key first appears (items of one key need not be
     * adjacent).
     *
     * @param items the items, in order
     * @param key what makes two items one (null is a key like any other)
     * @return the groups, each in its items' order; one item per group where no key repeats
     */
    public static <T, K> List<List<T>> grouped(List<T> items, Function<T, K> key) {
        Map<Object, List<T>> groups = new LinkedHashMap<>();
        for (T t : items) {
            groups.computeIfAbsent(new Key(key.apply(t)), k -> new ArrayList<>())
                    .add(t);
        }
        return List.copyOf(groups.values());
    }

    /**
     * Groups runs of adjacent items with one key (a key that comes back after another starts a new
     * run).
     *
     * @param items the items, in order
     * @param key what makes two adjacent items one
     * @return the runs, in order
     */
    public static <T, K> List<List<T>> runs(List<T> items, Function<T, K> key) {
        List<List<T>> out = new ArrayList<>();
        Object last = null;
        for (T t : items) {
            Key k = new Key(key.apply(t));
            if (out.isEmpty() || !k.equals(last)) {
                out.add(new ArrayList<>());
                last = k;
            }
            out.getLast().add(t);
        }
        return out;
    }

    /**
     * The first {@link #NAMED} names, then {@code ...} where there are more: {@code a.txt, b.txt,
     * c.txt, ...}.
     *
     * @param names the names, in order
     * @return them joined by ", "
     */
    public static String firstNamed(List<String> names) {
        return String.join(", ", names.subList(0, Math.min(NAMED, names.size())))
                + (names.size() > NAMED ? ", ..." : "");
    }

    /**
     * Folds warnings of the form {@code WHERE: message} ({@code WHERE} a file, or {@code FILE:LINE})
     * whose messages are one but for the file they name: each such group becomes one line at its
     * first warning's place, the message (the file's name in it written {@code FILE}) then {@code (15
     * files: a.txt:18, b.txt:18, c.txt:18, ...)}, or {@code (2 times in 1 file: a.txt:18,
     * a.txt:40)} where one file repeats it. A warning no other repeats is left as it is.
     *
     * @param warnings the warnings, in order
     * @return the warnings folded, in order
     */
    public static List<String> perFile(List<String> warnings) {
        List<String> out = new ArrayList<>();
        for (List<String> g : grouped(perTable(warnings), Repeats::messageKey)) {
            if (g.size() == 1) {
                out.add(g.getFirst());
                continue;
            }
            if (COUNTED.matcher(messageKey(g.getFirst())).matches()) {
                out.add(counted(g));
                continue;
            }
            List<String> wheres = new ArrayList<>();
            LinkedHashSet<String> files = new LinkedHashSet<>();
            for (String w : g) {
                wheres.add(where(w));
                files.add(file(where(w)));
            }
            String first = g.getFirst();
            if (where(first).length() == first.length()) { // no WHERE: the same line again
                out.add(first + " (" + TextReport.count(g.size(), "time") + ")");
                continue;
            }
            String message = first.substring(where(first).length() + 2);
            if (files.size() > 1) {
                message = message.replace(file(where(first)), "FILE");
            }
            out.add(message
                    + " ("
                    + (files.size() == g.size()
                            ? TextReport.count(g.size(), "file")
                            : TextReport.count(g.size(), "time") + " in " + TextReport.count(files.size(), "file"))
                    + ": " + firstNamed(wheres) + ")");
        }
        return out;
    }

    /**
     * Folds the warnings of one file's tables that are one but for the count they start with ({@code
     * FILE:16: 2 rows of 0 bytes skipped ...}, {@code FILE:70: 5 rows ...}): each such group becomes
     * one line at its first warning's place, {@code FILE:16,70: 7 rows of 0 bytes skipped ... (2, 5 at
     * those lines)}, the lines in increasing order, or {@code (2 at each line)} where the counts are
     * one. A warning without a {@code FILE:LINE} or a leading count is left as it is.
     *
     * @param warnings the warnings, {@code WHERE: message}, in order
     * @return the warnings folded, in order
     */
    static List<String> perTable(List<String> warnings) {
        List<String> out = new ArrayList<>();
        for (List<String> g : grouped(warnings, w -> tableKey(w) != null ? tableKey(w) : new Object())) {
            if (g.size() == 1) { // a warning perTable leaves as it is keys only itself
                out.add(g.getFirst());
                continue;
            }
            List<long[]> lineCount = new ArrayList<>(); // {line, count}, by line
            for (String w : g) {
                java.util.regex.Matcher m = LEADING_COUNT.matcher(w.substring(where(w).length() + 2));
                m.matches();
                String where = where(w);
                lineCount.add(new long[] {
                    Long.parseLong(where.substring(where.lastIndexOf(':') + 1)), Long.parseLong(m.group(1))
                });
            }
            lineCount.sort(java.util.Comparator.comparingLong(lc -> lc[0]));
            long total = lineCount.stream().mapToLong(lc -> lc[1]).sum();
            boolean oneCount =
                    lineCount.stream().allMatch(lc -> lc[1] == lineCount.getFirst()[1]);
            String first = g.getFirst();
            java.util.regex.Matcher m =
                    LEADING_COUNT.matcher(first.substring(where(first).length() + 2));
            m.matches();
            out.add(file(where(first)) + ":"
                    + lineCount.stream()
                            .map(lc -> String.valueOf(lc[0]))
                            .collect(java.util.stream.Collectors.joining(","))
                    + ": " + TextReport.count(total, m.group(2)) + m.group(4) + " ("
                    + (oneCount
                            ? lineCount.getFirst()[1] + " at each line"
                            : lineCount.stream()
                                            .map(lc -> String.valueOf(lc[1]))
                                            .collect(java.util.stream.Collectors.joining(", "))
                                    + " at those lines")
                    + ")");
        }
        return out;
    }

    /** A table's warning that starts with a count and its noun: {@code 2 rows of 0 bytes ...}. */
    private static final java.util.regex.Pattern LEADING_COUNT =
            java.util.regex.Pattern.compile("(\\d+) ([a-z]+?)(s?)( .*)", java.util.regex.Pattern.DOTALL);

    /**
     * @return what warnings of one file's tables share when {@link #perTable} folds them: the file,
     *     the noun and the message after the count; null for a warning it leaves as it is
     */
    private static String tableKey(String warning) {
        String where = where(warning);
        if (where.length() == warning.length() || !where.matches(".*:\\d+")) {
            return null;
        }
        java.util.regex.Matcher m = LEADING_COUNT.matcher(warning.substring(where.length() + 2));
        return m.matches() ? file(where) + "\u0000" + m.group(2) + "\u0000" + m.group(4) : null;
    }

    /** @return the text before a warning's first ": ", or the whole warning without one */
    private static String where(String warning) {
        int i = warning.indexOf(": ");
        return i < 0 ? warning : warning.substring(0, i);
    }

    /** @return a {@code FILE:LINE} (or {@code FILE:LINE,LINE}) without its lines */
    private static String file(String where) {
        return where.replaceFirst(":\\d+(?:,\\d+)*$", "");
    }

    /**
     * @return what two warnings share when they are one warning of different files: the message, its
     *     file blanked, and a count of lines it starts with ({@code 72 lines carry ...}, {@code 1 line
     *     carries ...}) written {@code # lines carry ...}
     */
    private static String messageKey(String warning) {
        String where = where(warning);
        if (where.length() == warning.length()) {
            return warning;
        }
        String file = file(where);
        String message = warning.substring(where.length() + 2).replace(file, "\u0000");
        java.util.regex.Matcher m = LINE_COUNT.matcher(message);
        return m.matches() && where.equals(file) ? "# lines " + plural(m.group(1), m.group(2)) + m.group(3) : message;
    }

    /** A file's warning that starts with a count of its lines and a verb: {@code 72 lines carry ...}. */
    private static final java.util.regex.Pattern LINE_COUNT =
            java.util.regex.Pattern.compile("(\\d+) lines? ([a-z]+)( .*)", java.util.regex.Pattern.DOTALL);

    /** {@link #messageKey}'s form of such a warning. */
    private static final java.util.regex.Pattern COUNTED =
            java.util.regex.Pattern.compile("# lines [a-z]+ .*", java.util.regex.Pattern.DOTALL);

    /** @return the verb after {@code N lines}: {@code carries} after {@code 1 line} is {@code carry} */
    private static String plural(String count, String verb) {
        if (!count.equals("1")) {
            return verb;
        }
        return verb.endsWith("ies") ? verb.substring(0, verb.length() - 3) + "y" : verb.replaceFirst("s$", "");
    }

    /**
     * @param g warnings of several files, each {@code FILE: N lines VERB ...}
     * @return one line: {@code 40 lines in 3 files carry ... (a.txt: 13, b.txt: 13, c.txt: 14)}, the
     *     first {@link #NAMED} files named
     */
    private static String counted(List<String> g) {
        long total = 0;
        List<String> each = new ArrayList<>();
        for (String w : g) {
            java.util.regex.Matcher m = LINE_COUNT.matcher(w.substring(where(w).length() + 2));
            m.matches();
            total += Long.parseLong(m.group(1));
            each.add(where(w) + ": " + m.group(1));
        }
        String key = messageKey(g.getFirst());
        int verbEnd = key.indexOf(' ', "# lines ".length());
        long files = g.stream().map(w -> where(w)).distinct().count();
        return total + " lines in " + TextReport.count(files, "file") + " "
                + key.substring("# lines ".length(), verbEnd)
                + key.substring(verbEnd).replace("\u0000", "FILE") + " (" + firstNamed(each) + ")";
    }

    /** A key that may be null. */
    private record Key(Object value) {}
}
