package io.nccltuner.compile;

import io.nccltuner.compile.Compiler.Compilation;
import io.nccltuner.compile.Compiler.Group;
import io.nccltuner.compile.Compiler.SizeResult;
import io.nccltuner.compile.Compiler.Stats;
import io.nccltuner.policy.ByteSize;
import io.nccltuner.policy.Policy.Candidate;
import io.nccltuner.policy.Policy.Rule;
import java.util.List;
import java.util.Locale;

/**
 * The compile report for a terminal: per group a table with one row per measured size (the size
 * range it governs, NCCL's pick and time, the best, the policy's pick, regret before and after,
 * the noise), then the merged rules, the workload weighting, refused rows and warnings.
 *
 * <p>Times are microseconds. "regret before" is NCCL's: its time / best - 1; "after" is the
 * policy's first candidate's (NCCL's own where no rule applies). "noise" is the margin the verdict
 * compared a gain with ({@link Compiler.SizeResult#noiseMargin}: the policy's pick's where a rule
 * applies, else the fastest candidate's NCCL's pick was kept against), "n/a" where unknown.
 *
 * <p>The report starts with a summary ({@link #summary}): how many rules, why sizes got none
 * (each reason once, with its count), and what to collect next (replicates, NCCL's own pick). A
 * note shared by several rows of a size table is printed once under it, the rows marking it
 * {@code [1]}, {@code [2]}, ...
 */
public final class TextReport {
    private TextReport() {}

    /**
     * Renders the report.
     *
     * @param c the compilation
     * @param savings workload weighting, empty when no workload was given
     * @return the text, ending in a newline
     */
    public static String render(Compilation c, List<Workload.Savings> savings) {
        return render(c, savings, true);
    }

    /**
     * Renders the report.
     *
     * @param c the compilation
     * @param savings workload weighting, empty when no workload was given
     * @param perSize whether to print the per-size tables (false: summary, rules, ranges only)
     * @return the text, ending in a newline
     */
    public static String render(Compilation c, List<Workload.Savings> savings, boolean perSize) {
        return render(c, savings, perSize, true);
    }

    /**
     * As {@link #render(Compilation, List, boolean)}, with the per-size tables of groups that got
     * no rule left out unless {@code ruleless} (compile's {@code --verbose}) or no group got one (then
     * the tables are what says why): one rule from three
     * public files printed 422 lines, mostly tables of groups with nothing to pick (found by the
     * ninth newcomer walk). A line after the groups counts the tables left out.
     *
     * @param ruleless whether groups without a rule print their per-size tables too
     */
    public static String render(Compilation c, List<Workload.Savings> savings, boolean perSize, boolean ruleless) {
        return render(c, savings, perSize, ruleless, false);
    }

    /**
     * As {@link #render(Compilation, List, boolean, boolean)}, under a verdict line that compile
     * prints above the report when no rule can be compiled (why, and what to collect): the summary
     * then counts the sizes of that reason and points at the first line ({@code 3 sizes: no forced
     * candidate measured (see the first line)}) instead of saying it again ({@link #summary(Compilation,
     * boolean)}).
     *
     * @param verdictAbove whether the line above the report says why no rule could be compiled
     */
    public static String render(
            Compilation c, List<Workload.Savings> savings, boolean perSize, boolean ruleless, boolean verdictAbove) {
        StringBuilder sb = new StringBuilder();
        int leftOut = 0;
        boolean anyRule = c.groups().stream().anyMatch(g -> !g.rules().isEmpty()); // else the tables say why
        boolean allTables = ruleless || !anyRule;
        sb.append(summary(c, verdictAbove)).append('\n');
        boolean first = true; // the first group: the noise legend under its table
        boolean explained = false; // whether a ranges heading said what its numbers are
        boolean singleSaid = false; // the one-replicate note: in full on the first such group only
        for (Group g : c.groups()) {
            singleSaid |= inputLines(sb, g, c.options(), singleSaid);
            if (perSize && (allTables || !g.rules().isEmpty())) {
                sizeTable(sb, g);
                if (first) { // the same for every group: once, under the first table
                    sb.append(noiseLegend(c.options())).append('\n');
                    first = false;
                }
            } else if (perSize) {
                leftOut++;
            }
            sb.append("rules: ").append(g.rules().size()).append('\n');
            for (Rule r : g.rules()) {
                sb.append("  ").append(describe(r)).append('\n');
            }
            explained |= ranges(sb, g, !explained);
            sb.append('\n');
        }
        if (leftOut > 0) {
            sb.append("per-size tables of the ")
                    .append(leftOut == 1 ? "group" : leftOut + " groups")
                    .append(" without a rule: --verbose prints them\n\n");
        }
        for (Workload.Savings s : savings) {
            workload(sb, s);
        }
        listed(sb, "refused rows (wrong results or mangled, never used): ", c.refused());
        listed(sb, "warnings: ", c.warnings());
        return sb.toString();
    }

    /**
     * A group's measured sizes, candidates and replicates, and the replicates' spread (CV).
     *
     * @param singleSaid whether a group above already said what one replicate leaves of the noise
     *     ({@link #singleReplicate}): this one then says {@code (one run each, as above)}
     * @return whether this group's line said it
     */
    private static boolean inputLines(StringBuilder sb, Group g, Compiler.Options o, boolean singleSaid) {
        int minRep = Integer.MAX_VALUE;
        int maxRep = 0;
        java.util.Set<RunConfig> configs = new java.util.HashSet<>();
        List<Double> cvs = new java.util.ArrayList<>();
        for (SizeResult s : g.sizes()) {
            for (Stats st : s.candidates()) {
                minRep = Math.min(minRep, st.replicates());
                maxRep = Math.max(maxRep, st.replicates());
                configs.add(st.config());
                if (!Double.isNaN(st.cv())) {
                    cvs.add(st.cv());
                }
            }
            if (s.ncclPick() != null && s.note().contains("unforced and forced runs pooled")) {
                configs.add(s.ncclPick()); // forced, and counted in NCCL's time (not among the candidates)
            }
            if (s.nccl() != null) {
                minRep = Math.min(minRep, s.nccl().replicates());
                maxRep = Math.max(maxRep, s.nccl().replicates());
                if (!Double.isNaN(s.nccl().cv())) {
                    cvs.add(s.nccl().cv());
                }
            }
        }
        if (minRep == Integer.MAX_VALUE) {
            minRep = 0;
        }
        sb.append(g.key())
                .append(": ")
                .append(count(g.sizes().size(), "size"))
                .append(", ")
                .append(configs.size())
                .append(configs.size() == 1 ? " candidate, " : " candidates, ")
                .append(minRep == maxRep ? minRep : minRep + ".." + maxRep)
                .append(maxRep == 1 ? " replicate" : " replicates")
                .append(" per configuration")
                .append(maxRep < 2 ? (singleSaid ? " (one run each, as above)" : singleReplicate(o)) : "")
                .append('\n');
        if (!cvs.isEmpty()) {
            java.util.Collections.sort(cvs);
            sb.append("replicate CV (coefficient of variation) over ")
                    .append(count(cvs.size(), "configuration"))
                    .append(" with 2+ replicates: median ")
                    .append(pct(cvs.get(cvs.size() / 2)))
                    .append(", max ")
                    .append(pct(cvs.getLast()))
                    .append('\n');
        }
        return maxRep < 2;
    }

    /**
     * A group's size table, a row per measured size, then the legend of the "NCCL's pick" column
     * and the notes several rows share (a row marks such a note [1], [2], ...; a note of one row
     * stands in it).
     */
    private static void sizeTable(StringBuilder sb, Group g) {
        String fmt = "%-22s %-18s %10s  %-18s %10s  %-18s %8s %8s %7s%s%n";
        java.util.Map<String, Integer> noteIds = new java.util.LinkedHashMap<>();
        java.util.Map<String, Integer> noteCounts = new java.util.HashMap<>();
        for (SizeResult s : g.sizes()) {
            if (!s.note().isEmpty()) {
                noteIds.putIfAbsent(s.note(), noteIds.size() + 1);
                noteCounts.merge(s.note(), 1, Integer::sum);
            }
        }
        sb.append(String.format(
                Locale.ROOT,
                fmt,
                "size range",
                "NCCL's pick",
                "NCCL us",
                "best",
                "best us",
                "policy's pick",
                "before",
                "after",
                "noise",
                ""));
        for (SizeResult s : g.sizes()) {
            Stats best = s.candidates().isEmpty() ? null : s.candidates().getFirst();
            String bestName = best == null || (!Double.isNaN(s.ncclUs()) && s.ncclUs() <= best.medianUs())
                    ? "NCCL"
                    : best.config().label();
            sb.append(String.format(
                    Locale.ROOT,
                    fmt,
                    ByteSize.format(s.fromBytes()) + " .. " + ByteSize.format(s.toBytes()),
                    s.ncclLabel(),
                    us(s.ncclUs()),
                    bestName,
                    us(s.bestUs()),
                    s.ruled() ? s.ranking().getFirst().config().label() : "NCCL",
                    pct(s.ncclRegret()),
                    pct(s.policyRegret()),
                    pct(s.noiseMargin()),
                    s.note().isEmpty()
                            ? ""
                            : noteCounts.get(s.note()) == 1
                                    ? "  (" + s.note() + ")"
                                    : "  [" + noteIds.get(s.note()) + "]"));
        }
        String legend = pickLegend(g.sizes());
        if (legend != null) {
            sb.append(legend).append('\n');
        }
        for (var e : noteIds.entrySet()) {
            int k = noteCounts.get(e.getKey());
            if (k > 1) {
                sb.append("  [")
                        .append(e.getValue())
                        .append("] ")
                        .append(e.getKey())
                        .append(": ")
                        .append(
                                k == g.sizes().size()
                                        ? "all " + k + " sizes"
                                        : k + " of " + g.sizes().size() + " sizes")
                        .append('\n');
            }
        }
    }

    /**
     * A group's expected regret per rule range, when the compile estimated any, under a heading
     * naming the group; what the numbers are is said at the first such heading only. A group none of
     * whose ranges was measured (no size timed both NCCL's own pick and a forced candidate: the
     * summary says why) prints nothing.
     *
     * @return whether the heading was printed
     */
    private static boolean ranges(StringBuilder sb, Group g, boolean first) {
        if (g.ranges().stream().allMatch(e -> Double.isNaN(e.expectedRegret()))) {
            return false;
        }
        sb.append("expected regret per range of ")
                .append(g.key())
                .append(first ? " (mean over its sizes +- their spread with the replicates' CV):\n" : ":\n");
        for (Compiler.RangeEstimate e : g.ranges()) {
            sb.append(String.format(
                                    Locale.ROOT,
                                    "  %-20s %-18s %-20s %s",
                                    ByteSize.range(e.fromBytes(), e.toBytes()),
                                    e.pick() == null ? "NCCL's pick" : e.pick().label(),
                                    Double.isNaN(e.expectedRegret())
                                            ? NOT_MEASURED
                                            : String.format(
                                                    Locale.ROOT,
                                                    "%8s +- %-8s",
                                                    pct(e.expectedRegret()),
                                                    pct(e.uncertainty())),
                                    e.keptForNoise()
                                            ? "NCCL's pick kept: faster candidates measured, gain within the noise"
                                            : "")
                            .stripTrailing())
                    .append('\n');
        }
        return true;
    }

    /** A workload's calls, and with any priced the expected saving. */
    private static void workload(StringBuilder sb, Workload.Savings s) {
        sb.append("workload ")
                .append(s.key())
                .append(": ")
                .append(count(s.calls(), "call"))
                .append(", ")
                .append(s.priced())
                .append(" inside the measured span\n");
        if (s.priced() > 0) {
            sb.append(String.format(
                    Locale.ROOT,
                    "  NCCL's default %.1f us (regret %s), policy %.1f us (regret %s), best %.1f us: expected saving %s"
                            + " of NCCL's time %s (%.1f us per pass)%n",
                    s.defaultUs(),
                    pct(s.defaultRegret()),
                    s.policyUs(),
                    pct(s.policyRegret()),
                    s.bestUs(),
                    pct(s.saving()),
                    s.baseline(),
                    s.defaultUs() - s.policyUs()));
        }
    }

    /** "title N" and an indented line per item, nothing for none. */
    private static void listed(StringBuilder sb, String title, List<String> items) {
        if (items.isEmpty()) {
            return;
        }
        sb.append(title).append(items.size()).append('\n');
        for (String x : items) {
            sb.append("  ").append(x).append('\n');
        }
    }

    /** What the summary counts over the groups' measured sizes. */
    private static final class SizeCounts {
        int sizes;
        int ruled;
        /** sizes without NCCL's own pick measured */
        int noNccl;
        /** sizes where NCCL's time is known but not which candidate it ran */
        int pickUnknown;
        /** sizes whose best candidate's gain is within the noise */
        int noise;
        /** sizes whose best candidate's gain is below the threshold */
        int small;
        /** sizes without a forced candidate */
        int noCandidate;
        /** sizes whose faster candidates NCCL's logged table never offers */
        int unoffered;
        /** groups with one replicate per configuration */
        int singleGroups;

        double maxMargin;
        /** per shape not compiled apart by machine, its groups' keys (several: other collectives, numPipeOps) */
        final java.util.Map<String, List<Compiler.GroupKey>> groupsOf = new java.util.LinkedHashMap<>();
        /** per machine the shapes measured on it, where a shape's inputs were compiled apart by machine */
        final java.util.Map<String, java.util.Set<String>> machines = new java.util.LinkedHashMap<>();

        SizeCounts(Compilation c) {
            java.util.Set<String> separated = new java.util.HashSet<>(); // shapes compiled apart by machine
            for (Group g : c.groups()) {
                if (g.key().hardware() != null) {
                    separated.add(io.nccltuner.model.JobShape.of(
                            g.key().nRanks(), g.key().nNodes()));
                }
            }
            for (Group g : c.groups()) {
                String shape =
                        io.nccltuner.model.JobShape.of(g.key().nRanks(), g.key().nNodes());
                if (separated.contains(shape)) {
                    machines.computeIfAbsent(machine(g.key().hardware()), x -> new java.util.LinkedHashSet<>())
                            .add(shape);
                } else {
                    groupsOf.computeIfAbsent(shape, x -> new java.util.ArrayList<>())
                            .add(g.key());
                }
                int maxRep = 0;
                for (SizeResult s : g.sizes()) {
                    sizes++;
                    for (Stats st : s.candidates()) {
                        maxRep = Math.max(maxRep, st.replicates());
                    }
                    if (s.nccl() != null) {
                        maxRep = Math.max(maxRep, s.nccl().replicates());
                    }
                    if (!Double.isNaN(s.noiseMargin())) {
                        maxMargin = Math.max(maxMargin, s.noiseMargin());
                    }
                    if (!Double.isNaN(s.ncclUs()) && s.ncclPick() == null) {
                        pickUnknown++;
                    }
                    classify(s);
                }
                if (maxRep < 2) {
                    singleGroups++;
                }
            }
        }

        /**
         * @param hw a group's machine, null where its inputs name none
         * @return {@link io.nccltuner.compile.Measurement.Hardware#label}, or {@code machine not printed}
         */
        static String machine(io.nccltuner.compile.Measurement.Hardware hw) {
            return hw == null ? "machine not printed" : hw.label();
        }

        /**
         * @return the groups' shapes as the summary names them: {@code nRanks=2 nNodes=1}; where a
         *     shape holds several groups (other collectives), each shape with its groups' collectives
         *     ({@code AllReduce and AllGather at nRanks=8 nNodes=1; AllReduce at nRanks=16 nNodes=2}); where
         *     a shape was compiled apart by machine, each machine with its shapes ({@code compiled apart
         *     by machine (NVIDIA H200 NCCL 2.28.9 at nRanks=8 nNodes=2; NVIDIA GB300 NCCL 2.29.7 at
         *     nRanks=8 nNodes=2)})
         */
        String shapesText() {
            // a shape of several groups (other collectives or numPipeOps): each shape says its groups
            boolean several = groupsOf.values().stream().anyMatch(k -> k.size() > 1);
            List<String> each = new java.util.ArrayList<>();
            groupsOf.forEach((shape, keys) -> each.add(several ? groupsText(keys) + " at " + shape : shape));
            if (machines.isEmpty()) {
                return "(" + String.join("; ", each) + ")";
            }
            machines.forEach((m, sh) -> each.add(m + " at " + String.join(", ", sh)));
            return "compiled apart by machine (" + String.join("; ", each) + ")";
        }

        /**
         * @param keys the groups of one shape
         * @return their collectives, {@code AllReduce and AllGather}; a collective of several
         *     numPipeOps once per numPipeOps, {@code AllReduce numPipeOps 1 and AllReduce numPipeOps
         *     [2, inf)}
         */
        private static String groupsText(List<Compiler.GroupKey> keys) {
            List<String> names = new java.util.ArrayList<>();
            for (Compiler.GroupKey k : keys) {
                boolean pipeOpsDiffer = keys.stream()
                        .anyMatch(o -> o.collective() == k.collective()
                                && !o.numPipeOps().equals(k.numPipeOps()));
                String name = k.collective() + (pipeOpsDiffer ? " numPipeOps " + k.numPipeOps() : "");
                if (!names.contains(name)) {
                    names.add(name);
                }
            }
            return String.join(" and ", names);
        }

        /** Counts a size under the first reason that fits: ruled, no NCCL, no candidate, noise, not offered, small. */
        private void classify(SizeResult s) {
            if (s.ruled()) {
                ruled++;
            } else if (Double.isNaN(s.ncclUs())) {
                noNccl++;
            } else if (s.candidates().isEmpty()) {
                noCandidate++;
            } else if (s.note().contains(Compiler.KEPT_FOR_NOISE)) {
                noise++;
            } else if (s.note().contains(Compiler.NEVER_OFFERED)) {
                unoffered++;
            } else {
                small++;
            }
        }
    }

    /**
     * The report's first lines: the rule count, why the other sizes got no rule (each reason once,
     * with how many sizes), and what to collect next where the inputs lack something a verdict needs
     * (NCCL's own pick, replicates, which candidate NCCL ran).
     *
     * @param c the compilation
     * @return lines, each ending in a newline
     */
    public static String summary(Compilation c) {
        return summary(c, false);
    }

    /**
     * As {@link #summary(Compilation)}; under compile's verdict line (no rule can be compiled: no
     * forced candidate, or NCCL's own pick never timed), that reason's no-rule line ends in {@code (see
     * the first line)} and its advice (which run to add) is left to that line.
     *
     * @param verdictAbove whether the line above says why no rule could be compiled
     */
    public static String summary(Compilation c, boolean verdictAbove) {
        SizeCounts n = new SizeCounts(c);
        int nRules = c.groups().stream().mapToInt(g -> g.rules().size()).sum();
        StringBuilder sb = new StringBuilder();
        sb.append("summary: ")
                .append(count(nRules, "rule"))
                .append(" from ")
                .append(count(n.sizes, "measured size"))
                .append(" in ")
                .append(count(c.groups().size(), "group"))
                .append(n.machines.isEmpty() ? " " : ", ")
                .append(n.shapesText())
                .append(": ")
                .append(n.ruled)
                .append(n.ruled == 1 ? " size gets" : " sizes get")
                .append(" a rule");
        sb.append(n.sizes == n.ruled ? "\n" : "; no rule at:\n");
        noRuleLines(sb, n, c, verdictAbove);
        // mangled rows: counted on compile's stderr and listed under refused rows, not a third time here
        List<String> next = collectNext(n, c, verdictAbove);
        if (next.isEmpty()) {
            sb.append("collect next: nothing missing (NCCL's own pick, NCCL's selections and replicates of every "
                    + "configuration are known, and no size's verdict is the noise's)\n");
        } else {
            sb.append("collect next:\n");
            for (String x : next) {
                sb.append("  - ").append(x).append('\n');
            }
        }
        // once per distinct line: groups of one shape on several machines would each print the same one
        java.util.Set<String> pastLines = new java.util.LinkedHashSet<>();
        for (Group g : c.groups()) {
            String past = pastLargest(g);
            if (past != null) {
                pastLines.add(past);
            }
        }
        pastLines.forEach(l -> sb.append(l).append('\n'));
        if (!c.refused().isEmpty() || !c.warnings().isEmpty()) {
            sb.append("below: ")
                    .append(
                            c.refused().isEmpty()
                                    ? ""
                                    : count(c.refused().size(), "refused row")
                                            + (c.warnings().isEmpty() ? "" : ", "))
                    .append(c.warnings().isEmpty() ? "" : count(c.warnings().size(), "warning"))
                    .append('\n');
        }
        return sb.toString();
    }

    /**
     * The summary's line where a group's last rule ends past its largest measured size: the last
     * measured size governs its own size-grid bucket (docs/compile.md, "Sizes to grid ranges"), so
     * the rule covers sizes up to that bucket's end that nothing measured.
     *
     * @param g a compiled group
     * @return {@code the last rule (AllReduce nRanks=2 nNodes=2) ends at 80 MiB, past the largest
     *     measured size 64 MiB: ...}, or null when it ends at or below it (or there is no rule)
     */
    static String pastLargest(Group g) {
        if (g.rules().isEmpty() || g.sizes().isEmpty()) {
            return null;
        }
        Rule last = g.rules().stream()
                .max((a, b) -> Long.compareUnsigned(a.toBytes(), b.toBytes()))
                .orElseThrow();
        long largest = g.sizes().getLast().nBytes();
        if (Long.compareUnsigned(last.toBytes(), largest) <= 0) {
            return null;
        }
        return "the last rule (" + g.key().collective() + " "
                + io.nccltuner.model.JobShape.of(g.key().nRanks(), g.key().nNodes()) + ") ends at "
                + ByteSize.format(last.toBytes()) + ", past the largest measured size " + ByteSize.format(largest)
                + ": the last measured size governs its own size-grid bucket " + ByteSize.range(largest, last.toBytes())
                + " (docs/compile.md); measure larger sizes (-e) to cover more";
    }

    /** Why sizes got no rule: a line per reason, with how many sizes. */
    private static void noRuleLines(StringBuilder sb, SizeCounts n, Compilation c, boolean verdictAbove) {
        if (n.noNccl > 0) {
            sb.append("  ")
                    .append(count(n.noNccl, "size"))
                    .append(
                            verdictAbove
                                    ? ": NCCL's own pick not measured" + SEE_FIRST_LINE + "\n"
                                    : ": NCCL's own pick not measured (no unforced run),"
                                            + " nothing to compare the candidates with\n");
        }
        boolean noneForced = n.noCandidate == n.sizes && n.sizes > 0;
        if (n.noCandidate > 0) {
            sb.append("  ")
                    .append(count(n.noCandidate, "size"))
                    .append(": no forced candidate measured")
                    .append(verdictAbove && noneForced ? SEE_FIRST_LINE : "")
                    .append('\n');
        }
        if (noneForced && !verdictAbove) {
            sb.append(
                    "  no input says which candidate a run forced (no NCCL INFO 'set by environment' lines, no --algo/"
                            + "--proto): every file counted as NCCL's own pick; say what each forced with --in FILE --algo X --proto Y\n");
        }
        if (n.noise > 0) {
            sb.append("  ")
                    .append(count(n.noise, "size"))
                    .append(": NCCL's pick kept, a faster candidate's gain is within" + " the noise\n");
        }
        if (n.unoffered > 0) {
            sb.append("  ")
                    .append(count(n.unoffered, "size"))
                    .append(
                            ": the candidates that beat NCCL's pick are never offered by NCCL (its log's cost table)\n");
        }
        if (n.small > 0) {
            sb.append("  ")
                    .append(count(n.small, "size"))
                    .append(": NCCL's pick within ")
                    .append(pct(c.options().threshold()))
                    .append(" of the best (--threshold)\n");
        }
    }

    /** The words of the warning after "DIR: 3 of 6" for a sweep read unfinished. */
    public static final String UNFINISHED = " runs not finished; compiled from the others";

    /**
     * @return what to collect next: an unfinished sweep's runs, NCCL's own pick, replicates, which
     *     candidate NCCL ran (empty: nothing)
     */
    private static List<String> collectNext(SizeCounts n, Compilation c, boolean verdictAbove) {
        List<String> next = new java.util.ArrayList<>();
        for (MeasurementSet.Unfinished u : c.unfinished()) { // first: finishing it may settle the rest (walk 10)
            next.add("finish the sweep: " + u.dir() + ": " + u.pending() + " of " + u.planned()
                    + " runs not finished: run the same `nccl-tuner sweep`"
                    + " command again (it skips the runs done), then compile again");
        }
        if (n.noNccl > 0 && !verdictAbove) { // else the verdict line says it
            next.add("NCCL's own pick at " + n.noNccl + " of " + count(n.sizes, "size")
                    + ": run the same tests once more " + UNFORCED_RUNS);
        }
        if (n.singleGroups > 0) {
            next.add(
                    "replicates: "
                            + (n.singleGroups == c.groups().size()
                                    ? "every group has"
                                    : n.singleGroups + " of " + count(c.groups().size(), "group") + " have")
                            + " 1 run per configuration, so the noise is unknown"
                            + (n.maxMargin > 0
                                    ? " (only neighbouring sizes bound it: margin up to " + pct(n.maxMargin) + ")"
                                    : "")
                            + ": repeat each run, 3+ times (`nccl-tuner sweep --replicates 3`, or more files of the same runs)");
        }
        next.addAll(WeakEvidence.lines(c));
        boolean anyPick = c.groups().stream().flatMap(g -> g.sizes().stream()).anyMatch(s -> s.ncclPick() != null);
        if (n.pickUnknown > 0 && anyPick) {
            next.add("which candidate NCCL runs at " + n.pickUnknown + " of " + count(n.sizes, "size")
                    + ": the NCCL logs"
                    + " given have no selection line for them (log the unforced runs at every size with NCCL_DEBUG=INFO"
                    + " NCCL_DEBUG_SUBSYS=TUNING)");
        } else if (n.pickUnknown > 0) {
            next.add(
                    "which candidate NCCL runs at " + n.pickUnknown + " of " + count(n.sizes, "size")
                            + ": --nccl-log with"
                            + " the unforced runs' NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING output (its selection lines name NCCL's"
                            + " pick; that pick's forced runs then count as NCCL's replicates and it is never a rule's candidate)");
        }
        return next;
    }

    /**
     * One line describing a rule, e.g.
     * {@code AllReduce [1 MiB, 2 MiB) numPipeOps 1: RING/LL +0.00% | NCCL RING/LL128 loses >= 21.00%}.
     *
     * @param r the rule
     * @return the line
     */
    public static String describe(Rule r) {
        StringBuilder sb = new StringBuilder();
        sb.append(r.collective()).append(' ').append(ByteSize.range(r.fromBytes(), r.toBytes()));
        if (!r.numPipeOps().equals(io.nccltuner.policy.Policy.Range.ANY)) {
            sb.append(" numPipeOps ").append(r.numPipeOps());
        }
        sb.append(":");
        for (Candidate c : r.candidates()) {
            sb.append(' ').append(label(c));
            if (!Double.isNaN(c.regret())) {
                sb.append(" +").append(pct(c.regret()));
            }
        }
        if (r.ncclPick() != null || !Double.isNaN(r.ncclRegret())) {
            sb.append(" | NCCL");
            if (r.ncclPick() != null) {
                sb.append(' ').append(label(r.ncclPick()));
            }
            if (!Double.isNaN(r.ncclRegret())) {
                sb.append(" loses >= ").append(pct(r.ncclRegret()));
            }
        }
        return sb.toString();
    }

    /**
     * A count with its noun, the one spelling of counts in the tools' output (compile, sweep and the
     * commands all call this).
     *
     * @param n the count
     * @param noun the singular noun, whose plural adds "s"
     * @return "1 size", "25 sizes"
     */
    public static String count(long n, String noun) {
        return n + " " + noun + (n == 1 ? "" : "s");
    }

    static String label(Candidate c) {
        return new RunConfig(c.algorithm(), c.protocol(), c.channels()).label();
    }

    /**
     * The legend of the "NCCL's pick" column's markers that the table uses, or null when it uses
     * none: {@code auto} NCCL's own pick (the unforced runs), {@code auto=X} X named by NCCL's
     * selection lines at that size, {@code auto~X} X inferred from the logged sizes around it, and
     * {@code -} NCCL's own pick not measured.
     */
    static String pickLegend(List<SizeResult> sizes) {
        List<String> parts = new java.util.ArrayList<>();
        java.util.Set<String> kinds = new java.util.HashSet<>();
        for (SizeResult s : sizes) {
            String l = s.ncclLabel();
            kinds.add(l.startsWith("auto=") ? "=" : l.startsWith("auto~") ? "~" : l);
        }
        if (kinds.contains("=")) {
            parts.add("auto=X: NCCL ran X (its selection lines say so at that size)");
        }
        if (kinds.contains("~")) {
            parts.add("auto~X: X inferred from the logged sizes around it");
        }
        if (parts.isEmpty()) {
            return null;
        }
        if (kinds.contains("auto")) {
            parts.add("auto: not known which");
        }
        return "  NCCL's pick: " + String.join("; ", parts);
    }

    /**
     * The group line's note when no configuration has 2+ replicates: the noise margin then comes
     * only from the jumps between neighbouring measured sizes.
     */
    static final String NO_REPLICATES = " (one run each, so no margin against noise but the jumps between neighbouring"
            + " sizes; repeat each run 3+ times for one)";

    /**
     * What one replicate per configuration leaves of the noise, for the group's line: with a window,
     * the jumps between neighbouring sizes ({@link #NO_REPLICATES}); without one, nothing.
     */
    static String singleReplicate(Compiler.Options o) {
        return o.window() > 0
                ? NO_REPLICATES
                : " (one run each and --window 0, so the noise is unknown: margin 0; repeat each run 3+ times for one)";
    }

    /** The legend of the noise column: the margin each verdict compared a gain with, and whose. */
    static String noiseLegend(Compiler.Options o) {
        return "  noise: the margin NCCL's time / a candidate's - 1 must exceed (as must --threshold "
                + pct(o.threshold()) + ") for a rule: "
                + java.math.BigDecimal.valueOf(o.noiseSigmas())
                        .stripTrailingZeros()
                        .toPlainString()
                + " x sqrt(noise(NCCL)^2 + noise(c)^2), noise = "
                + (o.window() > 0
                        ? "max(replicate CV, neighbour jump within " + o.window() + " sizes)"
                        : "the replicates' CV (n/a with one replicate)")
                + "; c = the policy's pick where a rule applies, else the fastest candidate NCCL's pick was kept against";
    }

    /**
     * How to time NCCL's own pick, for the summary's "collect next" and compile's verdict line when
     * no size has it.
     */
    public static final String UNFORCED_RUNS =
            "without NCCL_ALGO/NCCL_PROTO/NCCL_MAX_NCHANNELS (in optimize_config.py's"
                    + " CSV: rows with algorithm and protocol 'auto'; `nccl-tuner sweep` always runs it, named NCCL: all_reduce_NCCL_r1.txt)";

    /** A no-rule line's end where compile's first line (the verdict) says the reason and what to collect. */
    static final String SEE_FIRST_LINE = " (see the first line)";

    /** The expected-regret cell of a range whose regret no size measured (no unforced run of NCCL's pick). */
    static final String NOT_MEASURED = "not measured";

    static String pct(double f) {
        return Double.isNaN(f) ? "n/a" : String.format(Locale.ROOT, "%.2f%%", f * 100);
    }

    static String us(double v) {
        return Double.isNaN(v) ? "-" : String.format(Locale.ROOT, "%.3f", v);
    }
}
