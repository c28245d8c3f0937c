package io.nccltuner.compile;

import io.nccltuner.policy.Collective;
import io.nccltuner.policy.Policy.Range;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * What the input parsers collected: measurements, NCCL's selections, refused rows and warnings.
 * Parsers append to one set so that several files (replicates, one file per forced configuration)
 * compile together.
 */
public final class MeasurementSet {
    private final List<Measurement> measurements = new ArrayList<>();
    private final List<RunSelection> selections = new ArrayList<>();
    private final List<String> refused = new ArrayList<>();
    private final List<String> warnings = new ArrayList<>();
    private final List<Hole> holes = new ArrayList<>();
    private final List<NotOffered> notOffered = new ArrayList<>();
    private final java.util.Map<String, List<Integer>> pooledTables = new java.util.LinkedHashMap<>();
    private final java.util.Map<String, String> runsOf = new java.util.HashMap<>();
    private final List<Unfinished> unfinished = new ArrayList<>();

    /**
     * A {@code nccl-tuner sweep} folder read before all its runs finished.
     *
     * @param dir the sweep's folder, as given
     * @param pending how many of its planned runs have no finished output
     * @param planned how many runs its manifest plans
     */
    public record Unfinished(String dir, int pending, int planned) {}

    /**
     * Records a sweep folder read unfinished, for compile's "collect next" to say to finish it.
     *
     * @param u the folder and its counts of runs
     */
    public void unfinished(Unfinished u) {
        unfinished.add(u);
    }

    /** @return the sweep folders read unfinished, in reading order */
    public List<Unfinished> unfinished() {
        return Collections.unmodifiableList(unfinished);
    }

    /**
     * Records that {@code --pool-runs} pooled size tables of one file as replicates although nothing
     * says they are runs of one setup (no run headers of their own), so that the compiler can check
     * that they agree ({@link Compiler#unverifiedPooling}).
     *
     * @param file the file, as measurements name it in {@link Measurement#source()}
     * @param tableLines the line of each pooled table's column header, ascending
     */
    public void pooledTables(String file, List<Integer> tableLines) {
        pooledTables.merge(file, List.copyOf(tableLines), (a, b) -> {
            java.util.TreeSet<Integer> all = new java.util.TreeSet<>(a);
            all.addAll(b);
            return List.copyOf(all);
        });
    }

    /** @return per file, the header lines of the tables {@code --pool-runs} pooled */
    public java.util.Map<String, List<Integer>> pooledTables() {
        return Collections.unmodifiableMap(pooledTables);
    }

    /**
     * Records that a file is one run of a known set of runs of one machine (a {@code nccl-tuner sweep}
     * folder: one manifest, one signature), so its replicates need no check against the set's others.
     *
     * @param file the file, as measurements name it
     * @param runs the set, e.g. the sweep folder
     */
    public void sameRuns(String file, String runs) {
        runsOf.put(file, runs);
    }

    /** @return file to the set of runs it belongs to ({@link #sameRuns}) */
    public java.util.Map<String, String> runsOf() {
        return Collections.unmodifiableMap(runsOf);
    }

    /**
     * A size measured only by refused rows (a failed check): no rule may cover it, not even a
     * neighbouring size's.
     *
     * @param collective the collective
     * @param nRanks ranks
     * @param nNodes nodes
     * @param numPipeOps numPipeOps of the run
     * @param nBytes the size in bytes
     */
    public record Hole(Collective collective, int nRanks, int nNodes, Range numPipeOps, long nBytes) {}

    /**
     * Records that a row at this size was refused; if no valid measurement of the same group and
     * size exists, the compiler leaves the size's grid bucket without a rule.
     *
     * @param c the collective
     * @param nRanks ranks
     * @param nNodes nodes
     * @param numPipeOps numPipeOps of the run
     * @param nBytes the size in bytes
     */
    public void hole(Collective c, int nRanks, int nNodes, Range numPipeOps, long nBytes) {
        holes.add(new Hole(c, nRanks, nNodes, numPipeOps, nBytes));
    }

    /** @return sizes of refused rows, in reading order */
    public List<Hole> holes() {
        return Collections.unmodifiableList(holes);
    }

    /**
     * The algorithm/protocol pairs an NCCL log's cost table does not offer a communicator shape for
     * one collective: bandwidth 0.0 in the table NCCL prints at init (src/graph/tuning.cc,
     * ncclTopoTuneModel, 2.12 .. 2.30), so their cost is -1 in every getCollInfo call and the engine
     * passes over a rule's candidate there ({@link io.nccltuner.model.CostTable#offered}).
     *
     * @param source the log and its table's first line, {@code file:line}
     * @param nRanks the communicator's ranks
     * @param nNodes its nodes
     * @param collective the collective
     * @param pairs the pairs not offered
     */
    public record NotOffered(
            String source,
            int nRanks,
            int nNodes,
            Collective collective,
            java.util.Set<io.nccltuner.model.AlgoProto> pairs) {
        public NotOffered {
            pairs = java.util.Set.copyOf(pairs);
        }

        /** @return the log, {@link #source} without its line */
        public String file() {
            return source.replaceFirst(":\\d+$", "");
        }

        /**
         * @param tables what logged tables do not offer
         * @param c a collective
         * @param nRanks a communicator's ranks
         * @param nNodes its nodes
         * @return the tables of that collective and shape, in reading order
         */
        public static List<NotOffered> of(List<NotOffered> tables, Collective c, long nRanks, long nNodes) {
            return tables.stream()
                    .filter(t -> t.collective() == c && t.nRanks() == nRanks && t.nNodes() == nNodes)
                    .toList();
        }

        /**
         * @param tables tables of one collective and shape ({@link #of})
         * @return the pairs none of them offers (empty without tables)
         */
        public static java.util.Set<io.nccltuner.model.AlgoProto> common(List<NotOffered> tables) {
            java.util.Set<io.nccltuner.model.AlgoProto> common = null;
            for (NotOffered t : tables) {
                if (common == null) {
                    common = new java.util.HashSet<>(t.pairs());
                } else {
                    common.retainAll(t.pairs());
                }
            }
            return common == null ? java.util.Set.of() : common;
        }
    }

    /** @param n what a logged cost table does not offer */
    public void add(NotOffered n) {
        notOffered.add(n);
    }

    /** @return what the logged cost tables do not offer, in reading order */
    public List<NotOffered> notOffered() {
        return Collections.unmodifiableList(notOffered);
    }

    /** @param m a measurement to use */
    public void add(Measurement m) {
        measurements.add(m);
    }

    /** @param s a selection NCCL logged */
    public void add(RunSelection s) {
        selections.add(s);
    }

    /**
     * How a parser's refused-row entry ends for a mangled row (the wrong number of fields, a field
     * that is not a number, a row cut by another print): skipped, where {@code --strict} refuses
     * the file instead. Entries that end so are counted as mangled ({@link #mangled}).
     */
    public static final String MANGLED = "row skipped (--strict refuses the file)";

    /**
     * Records a mangled row: skipped, listed among the refused rows ending {@link #MANGLED}.
     *
     * @param where {@code file:line}
     * @param why what is wrong with it, e.g. "row has 10 fields but the column header names 13 ..."
     */
    public void refuseMangled(String where, String why) {
        refuse(where, why + "; " + MANGLED);
    }

    /**
     * The mangled rows among refused ones, however they were copied between sets.
     *
     * @param refused refused rows as {@code file:line: reason}
     * @return those ending {@link #MANGLED}, in order
     */
    public static List<String> mangled(List<String> refused) {
        return refused.stream().filter(r -> r.endsWith(MANGLED)).toList();
    }

    /**
     * Where a refused row is.
     *
     * @param refused a refused row as {@code file:line: reason}
     * @return its {@code file:line}
     */
    public static String where(String refused) {
        java.util.regex.Matcher m = WHERE.matcher(refused);
        return m.find() ? m.group(1) : refused.substring(0, Math.max(0, refused.indexOf(": ")));
    }

    private static final java.util.regex.Pattern WHERE = java.util.regex.Pattern.compile("^(.*?:[0-9]+): ");

    /**
     * What a command that reads measurements without compiling them (report, replay, try, explain
     * {@code --measurements}; calibrate) prints on stderr for the rows the parsers did not use, so
     * that none is dropped silently: a warning per mangled row, {@code warning: FILE:LINE: <why>; row
     * skipped, the other rows are read}, then a count, {@code note: SOURCE: skipped 1 mangled row
     * (FILE:LINE): ...}, and one of the rows refused for wrong results, {@code note: SOURCE: 2 rows
     * with wrong results not used (FILE:5, FILE:7)}. compile lists them in its own report.
     *
     * @param refused refused rows as {@code file:line: reason} ({@link #refused})
     * @param source what was read, as the user named it (a file or a folder)
     * @return the lines, none when every row was used
     */
    public static List<String> skippedRowLines(List<String> refused, String source) {
        List<String> mangled = mangled(refused);
        List<String> wrong = refused.stream().filter(r -> !r.endsWith(MANGLED)).toList();
        List<String> out = new ArrayList<>();
        for (String m : mangled) {
            out.add("warning: " + m.substring(0, m.length() - MANGLED.length())
                    + "row skipped, the other rows are read");
        }
        if (!mangled.isEmpty()) {
            out.add("note: " + source + ": skipped " + TextReport.count(mangled.size(), "mangled row") + " ("
                    + firstThree(mangled)
                    + "): the wrong number of fields or a field that is not a number, as a row cut by an NCCL line or "
                    + "another print leaves it");
        }
        if (!wrong.isEmpty()) {
            out.add("note: " + source + ": " + TextReport.count(wrong.size(), "row") + " with wrong results not used ("
                    + firstThree(wrong) + ")");
        }
        return out;
    }

    /** @return the first three rows' {@code file:line}, then {@code , ...} when there are more */
    private static String firstThree(List<String> refused) {
        return String.join(
                        ", ",
                        refused.stream().limit(3).map(MeasurementSet::where).toList())
                + (refused.size() > 3 ? ", ..." : "");
    }

    /**
     * Records a row that is never used.
     *
     * @param where {@code file:line}
     * @param why the reason, e.g. "#wrong = 4 (out-of-place)"
     */
    public void refuse(String where, String why) {
        refused.add(where + ": " + why);
    }

    /**
     * Records a warning for the report.
     *
     * @param where {@code file:line} or {@code file}
     * @param what what happened and what was done about it
     */
    public void warn(String where, String what) {
        warnings.add(where + ": " + what);
    }

    /**
     * Takes some warnings out of the report's, for the caller to say otherwise (compile's one note
     * for every run that names no forced configuration).
     *
     * @param which the warnings to take, as {@link #warnings} has them
     * @return the warnings taken, in order
     */
    public List<String> takeWarnings(java.util.function.Predicate<String> which) {
        List<String> taken = warnings.stream().filter(which).toList();
        warnings.removeIf(which);
        return taken;
    }

    /**
     * Appends everything another set collected, as if its files had been read into this one (a
     * folder's file read on its own first, so that a file the parsers refuse adds nothing).
     *
     * @param other the set to append
     */
    public void addAll(MeasurementSet other) {
        measurements.addAll(other.measurements);
        selections.addAll(other.selections);
        refused.addAll(other.refused);
        warnings.addAll(other.warnings);
        holes.addAll(other.holes);
        notOffered.addAll(other.notOffered);
        other.pooledTables.forEach(this::pooledTables);
        runsOf.putAll(other.runsOf);
        unfinished.addAll(other.unfinished);
    }

    /** @return measurements in reading order */
    public List<Measurement> measurements() {
        return Collections.unmodifiableList(measurements);
    }

    /** @return selections in reading order */
    public List<RunSelection> selections() {
        return Collections.unmodifiableList(selections);
    }

    /** @return refused rows as {@code file:line: reason} */
    public List<String> refused() {
        return Collections.unmodifiableList(refused);
    }

    /** @return warnings as {@code file[:line]: text} */
    public List<String> warnings() {
        return Collections.unmodifiableList(warnings);
    }
}
