package io.nccltuner.report;

import io.nccltuner.compile.Compiler;
import io.nccltuner.compile.RunConfig;
import io.nccltuner.compile.RunSelection;
import io.nccltuner.engine.ShadowAggregate;
import io.nccltuner.model.BusBandwidth;
import io.nccltuner.model.JobShape;
import io.nccltuner.model.TextTable;
import io.nccltuner.policy.Algorithm;
import io.nccltuner.policy.ByteSize;
import io.nccltuner.policy.Collective;
import io.nccltuner.policy.Protocol;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * What the decision logs of a job's ranks say, summed: per communicator shape, collective, size
 * bucket, NCCL's pick and the policy's pick, the rule hits over all ranks; whether every rank runs
 * the same compiled table (sha256) and reaches the same decision (a rank that differs is a hang
 * risk: ranks of one communicator must run the same algorithm and protocol); and, with
 * measurements, the expected time saved per call and over the whole log.
 *
 * <p>Pricing: the measurements are compiled ({@link Compiler#compile}, default options) with NCCL's
 * picks as the logs name them ({@link #loggedPicks}, and any {@code --nccl-log}), and each row is
 * priced at the measured size that governs its bucket ({@link Compiler.Group#governing}): NCCL's
 * pick at the compile's own estimate of NCCL's time there ({@link Compiler.SizeResult#ncclUs}: the
 * unforced runs pooled with the pick's forced runs, channels left to NCCL) when the compile knows
 * that pick at that size, else at the pick's forced time where it was measured forced, else at
 * NCCL's unforced time; the policy's pick at the forced time of that exact configuration (NCCL's
 * time when it is NCCL's pick, channels left to NCCL). The
 * HTML chart's NCCL regret is the same compile's ({@link Compiler.SizeResult#ncclRegret}), so the
 * report, its chart and {@code compile --nccl-log} agree on the same inputs. Saved per call
 * = NCCL's time - the policy's time (negative: the policy loses); saved in total = that x rule
 * hits. busbw: nccl-tests' bus bandwidth ({@link BusBandwidth}), GB/s, at the measured size. The
 * rule hits that changed nothing are counted per reason under the table ({@link UnchangedHits});
 * without {@code --nccl-log} a line says where NCCL's pick came from ({@link #pickSourceLine}).
 *
 * @param logs the logs read, one per process (rank)
 * @param policy the policy name(s) the logs name, joined by ", "
 * @param rows the decisions, by shape, collective, size, picks
 * @param tableProblems ranks whose shape's compiled table differs from the other ranks'
 * @param decisionProblems sizes where ranks of one communicator (by NCCL's commId where the logs name
 *     it, else of one shape) reach different decisions (a rank that logged the same communicator but
 *     no rule hit at the size counts as running NCCL's own pick)
 * @param notCompared "ranks at collective size" where ranks of a shape have no rule hit while others
 *     have one, and their logs do not name NCCL's commId (tuner v3/v4), so whether they ran those
 *     calls at all is unknown: not counted as differing
 * @param unchecked per shape whose logs hold several communicators (by NCCL's commId) some of which
 *     only one rank logged: ranks are compared within their communicator only, so those
 *     communicators' decisions were compared with no other rank's
 * @param groups the compiled measurements, empty without them
 */
public record ShadowReport(
        List<DecisionLogFile> logs,
        String policy,
        List<Row> rows,
        List<String> tableProblems,
        List<String> decisionProblems,
        List<String> notCompared,
        List<String> unchecked,
        List<Compiler.Group> groups) {
    /**
     * One decision, summed over ranks.
     *
     * @param nRanks ranks (0 when the log did not say)
     * @param nNodes nodes
     * @param collective the collective
     * @param fromBytes the bucket's first size
     * @param toBytes its end, -1 for none
     * @param ncclPick NCCL's pick
     * @param policyPick the policy's pick
     * @param channels the policy's channel count (0 = NCCL's)
     * @param calls rule hits over all ranks
     * @param ranks how many ranks made this decision
     * @param price the price at the governing measured size, or null without one
     */
    public record Row(
            long nRanks,
            long nNodes,
            Collective collective,
            long fromBytes,
            long toBytes,
            String ncclPick,
            String policyPick,
            int channels,
            long calls,
            int ranks,
            Price price) {
        /** @return "RING/SIMPLE" or "RING/SIMPLE/8ch" ({@link DecisionLogFile#pickLabel}) */
        public String policyLabel() {
            return DecisionLogFile.pickLabel(policyPick, channels);
        }

        /** @return the communicator shape, "nRanks=2 nNodes=2" ({@link JobShape#of}), "?" when the log did not say */
        public String shape() {
            return nRanks == 0 ? "?" : JobShape.of(nRanks, nNodes);
        }

        /** @return the size bucket, "[16 KiB, 20 KiB)" ({@link ShadowAggregate#bucket}) */
        public String range() {
            return ShadowAggregate.bucket(fromBytes, toBytes);
        }
    }

    /**
     * A row's price.
     *
     * @param measuredBytes the measured size governing the row's bucket
     * @param ncclUs NCCL's pick's time there, microseconds
     * @param policyUs the policy's pick's time there, microseconds (NaN when not measured)
     * @param bestUs the best time measured there
     * @param ncclBusbw busbw of NCCL's pick, GB/s
     * @param policyBusbw busbw of the policy's pick, GB/s (NaN when not measured)
     * @param keptByNoise whether the compile of these measurements would keep NCCL's pick here (its
     *     loss is within the noise)
     */
    public record Price(
            long measuredBytes,
            double ncclUs,
            double policyUs,
            double bestUs,
            double ncclBusbw,
            double policyBusbw,
            boolean keptByNoise) {
        /** @return NCCL's time - the policy's time per call, microseconds (NaN when unpriced) */
        public double savedUs() {
            return ncclUs - policyUs;
        }
    }

    /**
     * Builds the report.
     *
     * @param logs the decision logs, one per process
     * @param measured the compiled measurements (empty for none)
     * @return the report
     */
    public static ShadowReport build(List<DecisionLogFile> logs, List<Compiler.Group> measured) {
        Set<String> policies = new TreeSet<>();
        Tally tally = new Tally();
        for (DecisionLogFile f : logs) {
            for (DecisionLogFile.Comm c : f.comms()) {
                if (c.policy() != null) {
                    policies.add(c.policy());
                }
            }
            tally.add(f);
        }
        List<String> decisionProblems = new ArrayList<>();
        Set<String> notCompared = new LinkedHashSet<>();
        tally.compare(decisionProblems, notCompared);
        return new ShadowReport(
                List.copyOf(logs),
                policies.isEmpty() ? "(unnamed policy)" : String.join(", ", policies),
                List.copyOf(tally.rows(measured)),
                List.copyOf(tableProblems(logs)),
                List.copyOf(decisionProblems),
                List.copyOf(notCompared),
                List.copyOf(tally.unchecked()),
                List.copyOf(measured));
    }

    /** A communicator shape. */
    private record Shape(long nRanks, long nNodes) {}

    /** A size bucket of one shape (and communicator, {@link Decision#comm}) and collective (its first size). */
    private record Bucket(long nRanks, long nNodes, Long comm, int collId, long fromBytes) {}

    /**
     * A decision the ranks of one communicator must agree on: a bucket and NCCL's pick there.
     *
     * @param comm NCCL's commId where the logs name it (tuner v5+), so that only the ranks of one
     *     communicator are compared; null where they do not (every rank of the shape is compared)
     */
    private record Decision(long nRanks, long nNodes, Long comm, int collId, long fromBytes, String nccl) {
        Shape shape() {
            return new Shape(nRanks, nNodes);
        }

        Bucket bucket() {
            return new Bucket(nRanks, nNodes, comm, collId, fromBytes);
        }
    }

    /** Decisions by shape, communicator (those without a commId first), collective, size, then NCCL's pick. */
    private static final Comparator<Decision> DECISION_ORDER = Comparator.comparingLong(Decision::nRanks)
            .thenComparingLong(Decision::nNodes)
            .thenComparing(Decision::comm, Comparator.nullsFirst(Long::compareUnsigned))
            .thenComparingInt(Decision::collId)
            .thenComparing(Decision::fromBytes, Long::compareUnsigned)
            .thenComparing(Decision::nccl);

    /**
     * How a report names a communicator: NCCL's commId in hex, as the plugin's INFO lines print it.
     *
     * @param comm the commId
     * @return {@code commId 0xf000000000000002}
     */
    static String commId(long comm) {
        return "commId 0x" + Long.toHexString(comm);
    }

    /** Rows by shape, collective, size, NCCL's pick, then the policy's. */
    private static final Comparator<Row> ROW_ORDER = Comparator.comparingLong(Row::nRanks)
            .thenComparingLong(Row::nNodes)
            .thenComparingInt(r -> r.collective().id())
            .thenComparing(Row::fromBytes, Long::compareUnsigned)
            .thenComparing(Row::ncclPick)
            .thenComparing(Row::policyLabel);

    /** The logs' aggregates summed over ranks (the rows), and by rank (the cross-rank check). */
    private static final class Tally {
        /** A row before pricing. */
        private record Key(
                long nRanks,
                long nNodes,
                Collective collective,
                long fromBytes,
                long toBytes,
                String nccl,
                String policy,
                int channels) {}

        /** A communicator by NCCL's commId, which every rank of it logs. */
        private record JobComm(long nRanks, long nNodes, long comm) {}

        private final Map<Key, long[]> sums = new LinkedHashMap<>();
        private final Map<Key, Set<String>> rankSets = new HashMap<>();
        /** decision -> rank -> the policy's picks there */
        private final Map<Decision, Map<String, Set<String>>> decisions = new TreeMap<>(DECISION_ORDER);
        /** bucket -> the ranks with any rule hit there */
        private final Map<Bucket, Set<String>> present = new HashMap<>();
        /** communicator -> the ranks that logged it */
        private final Map<JobComm, Set<String>> commRanks = new HashMap<>();
        /** communicator -> the ranks with rule hits on it whose candidates NCCL did not offer */
        private final Map<JobComm, Set<String>> notOfferedRanks = new HashMap<>();
        /** shape -> the ranks that logged a communicator of it whose comm is no commId (tuner v3/v4) */
        private final Map<Shape, Set<String>> localRanks = new HashMap<>();

        void add(DecisionLogFile f) {
            Map<Long, DecisionLogFile.Comm> byComm = new HashMap<>();
            for (DecisionLogFile.Comm c : f.comms()) {
                byComm.put(c.comm(), c);
                if (c.jobWide()) {
                    commRanks
                            .computeIfAbsent(new JobComm(c.nRanks(), c.nNodes(), c.comm()), x -> new TreeSet<>())
                            .add(f.rank());
                } else {
                    localRanks
                            .computeIfAbsent(new Shape(c.nRanks(), c.nNodes()), x -> new TreeSet<>())
                            .add(f.rank());
                }
            }
            for (DecisionLogFile.Aggregate a : f.aggregates()) {
                DecisionLogFile.Comm c = byComm.get(a.comm());
                long r = c == null ? 0 : c.nRanks();
                long n = c == null ? 0 : c.nNodes();
                Key k = new Key(
                        r, n, a.collective(), a.fromBytes(), a.toBytes(), a.ncclPick(), a.policyPick(), a.channels());
                sums.computeIfAbsent(k, x -> new long[1])[0] += a.count();
                rankSets.computeIfAbsent(k, x -> new TreeSet<>()).add(f.rank());
                Long comm = c != null && c.jobWide() ? a.comm() : null;
                Decision d = new Decision(r, n, comm, a.collective().id(), a.fromBytes(), a.ncclPick());
                decisions
                        .computeIfAbsent(d, x -> new TreeMap<>())
                        .computeIfAbsent(f.rank(), x -> new TreeSet<>())
                        .add(a.policyLabel());
                present.computeIfAbsent(d.bucket(), x -> new HashSet<>()).add(f.rank());
            }
            Map<Long, Long> aggregated = new HashMap<>();
            f.aggregates().forEach(a -> aggregated.merge(a.comm(), a.count(), Long::sum));
            for (DecisionLogFile.Comm c : f.comms()) {
                if (c.jobWide() && c.ruleHits() > aggregated.getOrDefault(c.comm(), 0L) + c.unaggregated()) {
                    notOfferedRanks
                            .computeIfAbsent(new JobComm(c.nRanks(), c.nNodes(), c.comm()), x -> new TreeSet<>())
                            .add(f.rank());
                }
            }
        }

        /** @return how many communicators of the shape the logs name by commId */
        long commsOfShape(Shape s) {
            return commRanks.keySet().stream()
                    .filter(j -> j.nRanks() == s.nRanks() && j.nNodes() == s.nNodes())
                    .count();
        }

        /** @return distinct communicators: each commId once, each communicator without one per log */
        long communicators() {
            return commRanks.size()
                    + localRanks.values().stream().mapToLong(Set::size).sum();
        }

        /**
         * Shapes whose logs are of several communicators (by commId) of which some are logged by one
         * rank only: those decisions are compared with no other rank's, since ranks are compared only
         * within their communicator.
         *
         * @return a line per such shape: {@code nRanks=2 nNodes=2: 2 of its 2 communicators are logged
         *     by one of their 2 ranks only (commId 0x..: x:11; commId 0x..: y:12)}
         */
        List<String> unchecked() {
            Map<Shape, List<String>> alone =
                    new TreeMap<>(Comparator.comparingLong(Shape::nRanks).thenComparingLong(Shape::nNodes));
            Map<Shape, Integer> total = new HashMap<>();
            commRanks.entrySet().stream()
                    .sorted(Map.Entry.comparingByKey(Comparator.comparing(JobComm::comm, Long::compareUnsigned)))
                    .forEach(e -> {
                        Shape s = new Shape(e.getKey().nRanks(), e.getKey().nNodes());
                        total.merge(s, 1, Integer::sum);
                        if (e.getValue().size() == 1) {
                            alone.computeIfAbsent(s, x -> new ArrayList<>())
                                    .add(commId(e.getKey().comm()) + ": "
                                            + e.getValue().iterator().next());
                        }
                    });
            List<String> lines = new ArrayList<>();
            alone.forEach((s, comms) -> {
                if (total.get(s) > 1) {
                    lines.add(JobShape.of(s.nRanks(), s.nNodes()) + ": " + comms.size() + " of its "
                            + total.get(s) + " communicators are logged by one of their " + s.nRanks() + " ranks only ("
                            + String.join("; ", comms) + ")");
                }
            });
            return lines;
        }

        /** @return the rows, priced with the measurements, in {@link #ROW_ORDER} */
        List<Row> rows(List<Compiler.Group> measured) {
            List<Row> rows = new ArrayList<>();
            for (var e : sums.entrySet()) {
                Key k = e.getKey();
                rows.add(new Row(
                        k.nRanks(),
                        k.nNodes(),
                        k.collective(),
                        k.fromBytes(),
                        k.toBytes(),
                        k.nccl(),
                        k.policy(),
                        k.channels(),
                        e.getValue()[0],
                        rankSets.get(k).size(),
                        price(
                                k.collective(),
                                k.nRanks(),
                                k.nNodes(),
                                k.fromBytes(),
                                k.nccl(),
                                k.policy(),
                                k.channels(),
                                measured)));
            }
            rows.sort(ROW_ORDER);
            return rows;
        }

        /**
         * Compares the ranks' decisions, by shape, collective, size and NCCL's pick.
         *
         * @param problems receives a line per decision the ranks make differently
         * @param notCompared receives "ranks at collective size" per decision some ranks of the shape
         *     may not have made: no rule hit there, and their logs do not name NCCL's commId
         */
        void compare(List<String> problems, Set<String> notCompared) {
            for (var e : decisions.entrySet()) {
                Decision d = e.getKey();
                Set<String> decided = present.getOrDefault(d.bucket(), Set.of());
                // a rank that logged the same communicator but no rule hit in this bucket ran NCCL's own pick
                // there: it counts as deciding NCCL's pick, and is named as such
                Set<String> absent = new TreeSet<>();
                Set<String> notOffered = new TreeSet<>();
                if (d.comm() != null) {
                    JobComm jc = new JobComm(d.nRanks(), d.nNodes(), d.comm());
                    absent.addAll(commRanks.getOrDefault(jc, Set.of()));
                    notOffered.addAll(notOfferedRanks.getOrDefault(jc, Set.of()));
                }
                absent.removeAll(decided);
                notOffered.retainAll(absent);
                // ranks of the shape whose logs do not name NCCL's commId: whether they ran these calls is unknown
                Set<String> unknown = new TreeSet<>(localRanks.getOrDefault(d.shape(), Set.of()));
                unknown.removeAll(decided);
                unknown.removeAll(absent);
                if (!unknown.isEmpty() && !e.getValue().isEmpty()) {
                    notCompared.add(String.join(", ", unknown) + " at " + Collective.ofId(d.collId()) + " "
                            + ByteSize.format(d.fromBytes()));
                }
                String problem = decisionProblem(d, e.getValue(), absent, notOffered, commsOfShape(d.shape()) > 1);
                if (problem != null) {
                    problems.add(problem);
                }
            }
        }
    }

    /**
     * The line for a decision the ranks make differently, or null when they agree.
     *
     * @param d the decision
     * @param byRank each rank's picks there
     * @param absent the ranks that logged the communicator but no rule hit there (NCCL's own pick)
     * @param notOffered those of them whose rule hits on the communicator found no candidate offered
     *     (named {@link #NOT_OFFERED_HIT}: the same policy hits a rule there, as on the other ranks)
     * @param nameComm whether to name the communicator (the logs hold several of the shape)
     * @return "shape [commId 0x..] collective size (NCCL pick): ranks decide differently (hang risk):
     *     ranks -> picks; ...", the variant with the fewest ranks first
     */
    private static String decisionProblem(
            Decision d, Map<String, Set<String>> byRank, Set<String> absent, Set<String> notOffered, boolean nameComm) {
        Map<String, Set<String>> all = new TreeMap<>(byRank);
        absent.forEach(rank -> all.put(rank, Set.of(d.nccl())));
        Map<Set<String>, List<String>> variants = new LinkedHashMap<>();
        all.forEach((rank, picks) ->
                variants.computeIfAbsent(picks, x -> new ArrayList<>()).add(rank));
        if (variants.size() < 2) {
            return null;
        }
        List<List<String>> parts = new ArrayList<>(); // [ranks, decision, ranks of the variant]
        variants.forEach((picks, ranks) -> {
            List<String> decided =
                    ranks.stream().filter(x -> !absent.contains(x)).toList();
            List<String> none = ranks.stream()
                    .filter(x -> absent.contains(x) && !notOffered.contains(x))
                    .toList();
            List<String> unoffered = ranks.stream().filter(notOffered::contains).toList();
            if (!decided.isEmpty()) {
                parts.add(
                        List.of(String.join(", ", decided), String.join(" | ", picks), Integer.toString(ranks.size())));
            }
            if (!none.isEmpty()) {
                parts.add(List.of(
                        String.join(", ", none),
                        NO_RULE_HIT + " (NCCL's own pick " + d.nccl() + ")",
                        Integer.toString(ranks.size())));
            }
            if (!unoffered.isEmpty()) {
                parts.add(List.of(
                        String.join(", ", unoffered),
                        NOT_OFFERED_HIT + " (NCCL's own pick " + d.nccl() + ")",
                        Integer.toString(ranks.size())));
            }
        });
        StringBuilder sb = new StringBuilder(JobShape.of(d.nRanks(), d.nNodes())
                + (nameComm && d.comm() != null ? " " + commId(d.comm()) : "") + " " + Collective.ofId(d.collId())
                + " " + ByteSize.format(d.fromBytes()) + " (NCCL " + d.nccl()
                + "): ranks decide differently (hang risk):");
        parts.stream()
                .sorted(Comparator.comparingInt(v -> Integer.parseInt(v.get(2))))
                .forEach(v -> sb.append(' ')
                        .append(v.get(0))
                        .append(" -> ")
                        .append(v.get(1))
                        .append(';'));
        sb.setLength(sb.length() - 1);
        return sb.toString();
    }

    /** @return per shape whose ranks run different tables (sha256), the line that names them */
    private static List<String> tableProblems(List<DecisionLogFile> logs) {
        // shapes in the order of their text "[nRanks, nNodes]" ("[16, 2]" before "[2, 2]"), as the report has
        // always listed them
        Map<Shape, Map<String, Set<String>>> shaByShape = new TreeMap<>(Comparator.comparing(
                (Shape x) -> List.of(x.nRanks(), x.nNodes()).toString()));
        for (DecisionLogFile f : logs) {
            for (DecisionLogFile.Comm c : f.comms()) {
                shaByShape
                        .computeIfAbsent(new Shape(c.nRanks(), c.nNodes()), x -> new TreeMap<>())
                        .computeIfAbsent(String.valueOf(c.sha256()), x -> new TreeSet<>())
                        .add(f.rank());
            }
        }
        List<String> problems = new ArrayList<>();
        shaByShape.forEach((shape, bySha) -> {
            if (bySha.size() > 1) {
                problems.add(differentTables(
                        JobShape.of(shape.nRanks(), shape.nNodes()) + ": ranks run different tables:",
                        bySha,
                        ranks -> String.join(", ", ranks)));
            }
        });
        return problems;
    }

    /**
     * A line that names the tables ranks differ by.
     *
     * @param head what differs ("nRanks=2 nNodes=2: ranks run different tables:")
     * @param bySha the ranks of each table (sha256), in the order to name them
     * @param ranks how a table's ranks are named
     * @param <T> the ranks' type
     * @return head, then " sha256 aaaaaa...aaa on a:1, b:2" per table, joined by ';'
     */
    static <T> String differentTables(String head, Map<String, T> bySha, java.util.function.Function<T, String> ranks) {
        StringBuilder sb = new StringBuilder(head);
        bySha.forEach((sha, r) -> sb.append(" sha256 ")
                .append(shortSha(sha))
                .append(" on ")
                .append(ranks.apply(r))
                .append(';'));
        sb.setLength(sb.length() - 1);
        return sb.toString();
    }

    /**
     * The shape a {@link #differentTables} line is about, to count shapes once where the shadow and
     * the canary report both name one (a canary log's comm lines and measured lines).
     *
     * @param line a table problem, {@code nRanks=3 nNodes=1: ranks run different tables: ...}
     * @return its shape, {@code nRanks=3 nNodes=1} ({@link JobShape#of}): the text before the first
     *     {@code ": "}
     */
    public static String tableProblemShape(String line) {
        int colon = line.indexOf(": ");
        return colon < 0 ? line : line.substring(0, colon);
    }

    /**
     * How a DIFFER line names a rank that logged the communicator but no rule hit at the size: it ran
     * NCCL's own pick there (calls no rule covers are not logged one by one).
     */
    public static final String NO_RULE_HIT = "no rule hit";

    /**
     * How a DIFFER line names a rank whose rule hits on the communicator found none of the rule's
     * candidates offered (counted under "candidate not offered" below the report): it ran NCCL's own
     * pick there.
     */
    public static final String NOT_OFFERED_HIT = "rule hit, candidate not offered";

    /**
     * The footnote under the DIFFER lines (text and HTML) when one names a rank {@link
     * #NOT_OFFERED_HIT}: what the label means and that it is inferred, since a decision log counts
     * the rule hits whose candidates NCCL did not offer per communicator ({@code ruleHits} less the
     * aggregates' counts), not per size.
     */
    public static final String NOT_OFFERED_NOTE = NOT_OFFERED_HIT
            + ": inferred from the log's counts: the rank's log counts rule hits on that communicator that found"
            + " none of the rule's candidates offered (NCCL's own pick ran), per communicator, not per size; the"
            + " rank logged no pick at the size, so its calls there are taken to be such hits";

    /**
     * @return {@link #NOT_OFFERED_NOTE} when a DIFFER line names a rank {@link #NOT_OFFERED_HIT},
     *     else null
     */
    public String notOfferedNote() {
        return decisionProblems.stream().anyMatch(x -> x.contains(" -> " + NOT_OFFERED_HIT + " "))
                ? NOT_OFFERED_NOTE
                : null;
    }

    static String shortSha(String sha) {
        return sha.length() > 12 ? sha.substring(0, 6) + "..." + sha.substring(sha.length() - 3) : sha;
    }

    static RunConfig config(String pick, int channels) {
        int slash = pick.indexOf('/');
        if (slash < 0) {
            return null;
        }
        Algorithm a = Algorithm.parse(pick.substring(0, slash));
        Protocol p = Protocol.parse(pick.substring(slash + 1));
        return a == null || p == null ? null : new RunConfig(a, p, channels);
    }

    /**
     * Why {@link #price} found no price for a collective and shape: no such collective measured, the
     * measurements of other shapes (naming them), or no measured size governing the size.
     *
     * @param c collective
     * @param nRanks ranks
     * @param nNodes nodes
     * @param groups the compiled measurements
     * @return the reason, "AllReduce measured at nRanks=8 nNodes=1 only, not nRanks=2 nNodes=2"
     */
    public static String notPricedWhy(Collective c, long nRanks, long nNodes, List<Compiler.Group> groups) {
        if (groups.stream().noneMatch(g -> g.key().collective() == c)) {
            return "no " + c.name() + " measured";
        }
        if (groups.stream()
                .noneMatch(g -> g.key().collective() == c
                        && g.key().nRanks() == nRanks
                        && g.key().nNodes() == nNodes)) {
            return c.name() + " measured at " + measuredShapes(groups, c) + " only, not " + JobShape.of(nRanks, nNodes);
        }
        return "no measured size (numPipeOps 1, NCCL's pick timed) governs it";
    }

    /**
     * The line that says why nothing could be priced when no shape asked for was measured.
     *
     * @param what what has the shapes, "the trace's calls"
     * @param shapes their shapes as {@link JobShape#of} writes them ("nRanks=2 nNodes=2")
     * @param groups the compiled measurements
     * @return the line, or null when some of the shapes was measured (or there are none)
     */
    public static String shapesNotMeasured(String what, List<String> shapes, List<Compiler.Group> groups) {
        java.util.Set<String> want = new java.util.TreeSet<>(shapes);
        java.util.Set<String> have =
                new java.util.TreeSet<>(List.of(measuredShapes(groups, null).split(", ")));
        if (want.isEmpty() || groups.isEmpty() || want.stream().anyMatch(have::contains)) {
            return null;
        }
        return "nothing priced: the measurements are of " + measuredShapes(groups, null) + ", " + what + " of "
                + String.join(", ", want) + "; give measurements of that shape";
    }

    /**
     * @param groups the compiled measurements
     * @param c a collective, or null for all
     * @return their shapes, "nRanks=8 nNodes=1, nRanks=16 nNodes=2"
     */
    public static String measuredShapes(List<Compiler.Group> groups, Collective c) {
        java.util.TreeSet<List<Long>> shapes = new java.util.TreeSet<>(
                Comparator.<List<Long>>comparingLong(l -> l.get(0)).thenComparingLong(l -> l.get(1)));
        for (Compiler.Group g : groups) {
            if (c == null || g.key().collective() == c) {
                shapes.add(List.of((long) g.key().nRanks(), (long) g.key().nNodes()));
            }
        }
        return String.join(
                ", ", shapes.stream().map(l -> JobShape.of(l.get(0), l.get(1))).toList());
    }

    /**
     * Prices one decision with compiled measurements (see the class comment).
     *
     * @param c collective
     * @param nRanks ranks
     * @param nNodes nodes
     * @param fromBytes the size (or a bucket's first size)
     * @param nccl NCCL's pick, "RING/LL"
     * @param policy the policy's pick, "TREE/SIMPLE"
     * @param channels the policy's channels (0 = NCCL's)
     * @param groups the compiled measurements
     * @return the price, or null when no measured size governs it or NCCL's time is unknown
     */
    public static Price price(
            Collective c,
            long nRanks,
            long nNodes,
            long fromBytes,
            String nccl,
            String policy,
            int channels,
            List<Compiler.Group> groups) {
        for (Compiler.Group g : groups) {
            if (g.key().collective() != c
                    || g.key().nRanks() != nRanks
                    || g.key().nNodes() != nNodes
                    || !g.key().numPipeOps().contains(1)) {
                continue;
            }
            Compiler.SizeResult s = g.governing(fromBytes);
            if (s == null) {
                return null;
            }
            RunConfig nc = config(nccl, 0);
            RunConfig pc = config(policy, channels);
            // the compile knows NCCL's pick here (a log names it): its time is the compile's own estimate,
            // the unforced runs pooled with that pick's forced runs, as compile prints and report charts it
            boolean compiled = nc != null && nc.equals(s.ncclPick());
            double ncclUs = s.ncclUs();
            double policyUs = Double.NaN;
            for (Compiler.Stats st : s.candidates()) {
                if (!compiled && st.config().equals(nc)) {
                    ncclUs = st.medianUs();
                }
                if (st.config().equals(pc)) {
                    policyUs = st.medianUs();
                }
            }
            if (Double.isNaN(ncclUs)) {
                return null;
            }
            if (pc != null && pc.equals(nc)) { // the policy runs NCCL's own pick: the same time, whichever estimate
                policyUs = ncclUs;
            }
            boolean kept = !s.ruled() && s.note().contains("within the noise");
            return new Price(
                    s.nBytes(),
                    ncclUs,
                    policyUs,
                    s.bestUs(),
                    BusBandwidth.busbw(c, nRanks, s.nBytes(), ncclUs),
                    BusBandwidth.busbw(c, nRanks, s.nBytes(), policyUs),
                    kept);
        }
        return null;
    }

    /**
     * NCCL's picks the decision logs name, as selections for the compiler: for each measured size of a
     * logged shape and collective, the NCCL pick of every logged bucket that holds it. Given to
     * {@link Compiler#compile} with the measurements they make NCCL's time there the compile's own
     * estimate (its unforced runs pooled with the pick's forced runs, as {@code compile --nccl-log}
     * computes it), the one the report prices rows with and charts. Where ranks' logs name different
     * picks at a size, the compile leaves the pick unknown there.
     *
     * @param logs the decision logs
     * @param data the measurements (their sizes, collectives and shapes)
     * @return one selection per (log, bucket, measured size in it)
     */
    public static List<RunSelection> loggedPicks(List<DecisionLogFile> logs, io.nccltuner.compile.MeasurementSet data) {
        record Measured(Collective c, long nRanks, long nNodes, long nBytes) {}
        Set<Measured> sizes = new java.util.LinkedHashSet<>();
        for (io.nccltuner.compile.Measurement m : data.measurements()) {
            sizes.add(new Measured(m.collective(), m.nRanks(), m.nNodes(), m.nBytes()));
        }
        List<RunSelection> out = new ArrayList<>();
        for (DecisionLogFile f : logs) {
            Map<Long, DecisionLogFile.Comm> byComm = new HashMap<>();
            f.comms().forEach(c -> byComm.put(c.comm(), c));
            Set<List<Object>> seen = new java.util.HashSet<>();
            for (DecisionLogFile.Aggregate a : f.aggregates()) {
                DecisionLogFile.Comm c = byComm.get(a.comm());
                RunConfig pick = config(a.ncclPick(), 0);
                if (c == null || pick == null) {
                    continue;
                }
                for (Measured m : sizes) {
                    if (m.c() == a.collective()
                            && m.nRanks() == c.nRanks()
                            && m.nNodes() == c.nNodes()
                            && Long.compareUnsigned(m.nBytes(), a.fromBytes()) >= 0
                            && (a.toBytes() == -1L || Long.compareUnsigned(m.nBytes(), a.toBytes()) < 0)
                            && seen.add(List.of(m, pick))) {
                        out.add(new RunSelection(
                                f.file() + " (decision log)",
                                m.c(),
                                (int) m.nRanks(),
                                (int) m.nNodes(),
                                m.nBytes(),
                                pick.algorithm(),
                                pick.protocol()));
                    }
                }
            }
        }
        return out;
    }

    /**
     * One call (or table row) whose NCCL pick a command prices: the collective, its communicator's
     * shape, its size and NCCL's pick there ("RING/SIMPLE").
     *
     * @param collective collective
     * @param nRanks ranks
     * @param nNodes nodes
     * @param nBytes size in bytes
     * @param ncclPick NCCL's pick, "RING/SIMPLE"
     */
    public record PickedCall(Collective collective, long nRanks, long nNodes, long nBytes, String ncclPick) {}

    /**
     * NCCL's picks of priced calls as selections for the compiler, so that NCCL's time there is the
     * compile's own estimate (its unforced runs pooled with the pick's forced runs), the one
     * {@code compile --nccl-log}, {@code report} and {@code try} print: {@code replay} and
     * {@code explain} compile their {@code --measurements} with these. Each measured size of a
     * call's collective and shape gets the pick of the smallest call it governs (the call at the
     * measured size itself when there is one, else the nearest above it).
     *
     * @param source what named the picks ("trace.csv (trace)")
     * @param calls the priced calls
     * @param data the measurements (their sizes, collectives and shapes)
     * @return one selection per measured size that governs a call
     */
    public static List<RunSelection> callPicks(
            String source, List<PickedCall> calls, io.nccltuner.compile.MeasurementSet data) {
        record Key(Collective c, long nRanks, long nNodes) {}
        Map<Key, TreeSet<Long>> measured = new HashMap<>();
        for (io.nccltuner.compile.Measurement m : data.measurements()) {
            measured.computeIfAbsent(
                            new Key(m.collective(), m.nRanks(), m.nNodes()), k -> new TreeSet<>(Long::compareUnsigned))
                    .add(m.nBytes());
        }
        Map<List<Object>, long[]> nearest = new LinkedHashMap<>(); // (key, measured size) -> the call's size
        Map<List<Object>, RunConfig> pickAt = new HashMap<>();
        for (PickedCall call : calls) {
            RunConfig pick = call.ncclPick() == null ? null : config(call.ncclPick(), 0);
            Key k = new Key(call.collective(), call.nRanks(), call.nNodes());
            TreeSet<Long> sizes = measured.get(k);
            Long at = sizes == null || pick == null ? null : sizes.floor(call.nBytes());
            if (at == null) {
                continue;
            }
            List<Object> where = List.of(k, at);
            long[] seen = nearest.get(where);
            if (seen == null || Long.compareUnsigned(call.nBytes(), seen[0]) < 0) {
                nearest.put(where, new long[] {call.nBytes()});
                pickAt.put(where, pick);
            }
        }
        List<RunSelection> out = new ArrayList<>();
        for (List<Object> where : nearest.keySet()) {
            Key k = (Key) where.get(0);
            RunConfig pick = pickAt.get(where);
            out.add(new RunSelection(
                    source,
                    k.c(),
                    (int) k.nRanks(),
                    (int) k.nNodes(),
                    (Long) where.get(1),
                    pick.algorithm(),
                    pick.protocol()));
        }
        return out;
    }

    /**
     * Where a report priced without {@code --nccl-log} took NCCL's pick from: the decision logs'
     * rule hits name it at the measured sizes they fall on ({@link #loggedPicks}); at the other
     * measured sizes of the same collective and shape the compile knows no pick (or infers it from
     * the sizes around), so NCCL's time there is its unforced runs' alone, where {@code compile
     * --nccl-log} pools them with that pick's forced runs ({@link Compiler.SizeResult#ncclUs}): the
     * --html chart's NCCL regret there differs from compile's.
     *
     * @return {@code NCCL's pick: from the decision logs' rule hits, at 9 of 25 measured sizes of
     *     AllReduce nRanks=2 nNodes=2 (at the other 16, 64 KiB .. 32 MiB among them, ...)}, the
     *     {@code --nccl-log} advice at its end only where some size's pick is unknown or inferred; or
     *     null without measurements or decisions
     */
    public String pickSourceLine() {
        Set<List<Object>> decided = new HashSet<>();
        rows.forEach(r -> decided.add(List.of(r.collective(), r.nRanks(), r.nNodes())));
        long named = 0;
        long inferred = 0;
        long all = 0;
        List<String> unknown = new ArrayList<>(); // runs of neighbouring sizes, "64 KiB .. 32 MiB"
        long unknowns = 0;
        Set<String> shapes = new TreeSet<>();
        for (Compiler.Group g : groups) {
            if (!decided.contains(List.of(g.key().collective(), (long) g.key().nRanks(), (long)
                    g.key().nNodes()))) {
                continue;
            }
            shapes.add(g.key().collective() + " "
                    + JobShape.of(g.key().nRanks(), g.key().nNodes()));
            long[] run = null;
            for (Compiler.SizeResult sr : g.sizes()) {
                all++;
                if (sr.ncclPick() == null) {
                    unknowns++;
                    run = run == null ? new long[] {sr.nBytes(), sr.nBytes()} : new long[] {run[0], sr.nBytes()};
                    continue;
                }
                if (sr.pickInferred()) {
                    inferred++;
                } else {
                    named++;
                }
                if (run != null) {
                    unknown.add(sizes(run));
                    run = null;
                }
            }
            if (run != null) {
                unknown.add(sizes(run));
            }
        }
        if (all == 0) {
            return null;
        }
        return "NCCL's pick: from the decision logs' rule hits (and any selection lines in the measurements), at "
                + named + " of " + all + " measured sizes of " + String.join(", ", shapes)
                + (inferred == 0 ? "" : ", inferred from the sizes around at " + inferred)
                + (unknowns == 0
                        ? ""
                        : "; unknown at " + unknowns + " (" + String.join(", ", unknown)
                                + "), where NCCL's time is its unforced runs' alone, not pooled with its pick's forced runs as"
                                + " compile --nccl-log does (so the --html chart's NCCL regret there can differ from compile's)")
                + (named == all
                        ? "" // nothing missing: the advice would change nothing
                        : "; --nccl-log LOG (the measured runs' NCCL INFO log) makes NCCL's pick the logged one, as"
                                + " compile takes it");
    }

    /** @return "64 KiB" or "64 KiB .. 32 MiB" for a run of measured sizes */
    private static String sizes(long[] run) {
        return ByteSize.format(run[0]) + (run[0] == run[1] ? "" : " .. " + ByteSize.format(run[1]));
    }

    /** @return calls with a price for both picks */
    public long pricedCalls() {
        return rows.stream()
                .filter(r -> r.price() != null && !Double.isNaN(r.price().policyUs()))
                .mapToLong(Row::calls)
                .sum();
    }

    /** @return expected time saved over all priced calls of all logs, microseconds */
    public double savedUs() {
        return rows.stream()
                .filter(r -> r.price() != null && !Double.isNaN(r.price().policyUs()))
                .mapToDouble(r -> r.calls() * r.price().savedUs())
                .sum();
    }

    /** @return NCCL's time over the priced calls, microseconds */
    public double ncclUs() {
        return rows.stream()
                .filter(r -> r.price() != null && !Double.isNaN(r.price().policyUs()))
                .mapToDouble(r -> r.calls() * r.price().ncclUs())
                .sum();
    }

    private static String us(double v) {
        return Double.isNaN(v) ? "-" : String.format(Locale.ROOT, "%.1f", v);
    }

    private static String gbps(double v) {
        return io.nccltuner.compile.SvgChart.gbps(v);
    }

    /** @return the text report */
    public String text() {
        StringBuilder sb = new StringBuilder();
        logLines(sb);
        checkLines(sb);
        sb.append('\n');
        UnchangedHits unchanged = UnchangedHits.of(logs);
        if (!rows.isEmpty()) {
            sb.append(decisionTable());
        } else if (unchanged.total() == 0) {
            sb.append("no decisions in the logs (no rule hit)\n");
        }
        String nothing = unchanged.reportLines(); // and the aggregates missing, on a line of its own
        if (nothing != null) {
            sb.append(nothing).append('\n');
        }
        if (!groups.isEmpty()) {
            savingLines(sb);
        }
        return sb.toString();
    }

    /** The policy and the logs read, then a line per log (rank): its communicators, tables and counts. */
    private void logLines(StringBuilder sb) {
        // a communicator that several ranks logged by NCCL's commId counts once
        long comms = logs.stream()
                        .flatMap(l -> l.comms().stream())
                        .filter(DecisionLogFile.Comm::jobWide)
                        .map(c -> List.of(c.nRanks(), c.nNodes(), c.comm()))
                        .distinct()
                        .count()
                + logs.stream()
                        .flatMap(l -> l.comms().stream())
                        .filter(c -> !c.jobWide())
                        .count();
        sb.append("policy ")
                .append(policy)
                .append(": ")
                .append(logs.size())
                .append(logs.size() == 1 ? " log, " : " logs, ")
                .append(comms)
                .append(comms == 1 ? " communicator" : " communicators")
                .append('\n');
        for (DecisionLogFile f : logs) {
            Set<String> shas = new TreeSet<>();
            long calls = 0;
            long hits = 0;
            long applied = 0;
            long unagg = 0;
            Set<String> modes = new TreeSet<>();
            for (DecisionLogFile.Comm c : f.comms()) {
                shas.add(shortSha(String.valueOf(c.sha256())));
                calls += c.calls();
                hits += c.ruleHits();
                applied += c.applied();
                unagg += c.unaggregated();
                modes.add(String.valueOf(c.mode()));
            }
            sb.append("  rank ")
                    .append(f.rank())
                    .append(" (")
                    .append(f.file())
                    .append("): ")
                    .append(io.nccltuner.compile.TextReport.count(f.comms().size(), "comm"))
                    .append(", mode ")
                    .append(String.join("/", modes))
                    .append(", sha256 ")
                    .append(String.join(" ", shas))
                    .append(", calls ")
                    .append(calls)
                    .append(", rule hits ")
                    .append(hits)
                    .append(", applied ")
                    .append(applied)
                    .append(unagg > 0 ? ", " + unagg + " hits not broken down" : "")
                    .append('\n');
        }
    }

    /**
     * The decisions' verdict where no ranks of one communicator differ, as the text and the HTML page
     * say it: every rank agrees, or (some communicators logged by one rank only, {@link #unchecked})
     * no two logged ranks of one communicator differ.
     *
     * @return {@code every rank reaches the same decision at every size}, or {@code no two logged ranks
     *     of one communicator decide differently}
     */
    public String agreement() {
        return unchecked.isEmpty()
                ? "every rank reaches the same decision at every size"
                : "no two logged ranks of one communicator decide differently";
    }

    /**
     * @return what the text and the HTML page say of the communicators compared with no other rank
     *     ({@link #unchecked}), or null when there are none
     */
    public String notComparedAcrossRanks() {
        return unchecked.isEmpty()
                ? null
                : "not compared across ranks: " + String.join("; ", unchecked)
                        + ": ranks are compared only with the ranks of their own communicator; give the logs of "
                        + "every rank of one job";
    }

    /** The cross-rank checks: tables, decisions, and the sizes not compared. */
    private void checkLines(StringBuilder sb) {
        sb.append(
                tableProblems.isEmpty()
                        ? "tables: every rank of each shape runs the same table (sha256)\n"
                        : "tables: DIFFER\n  " + String.join("\n  ", tableProblems) + "\n");
        sb.append(
                decisionProblems.isEmpty()
                        ? "decisions: " + agreement() + "\n"
                        : "decisions: DIFFER at " + decisionProblems.size()
                                + (decisionProblems.size() == 1 ? " size" : " sizes") + ":\n  "
                                + String.join("\n  ", decisionProblems) + "\n");
        if (!unchecked.isEmpty()) {
            sb.append("  ").append(notComparedAcrossRanks()).append('\n');
        }
        if (decisionProblems.stream().anyMatch(x -> x.contains(" -> " + NO_RULE_HIT + " "))) {
            sb.append("  (" + NO_RULE_HIT
                    + ": the rank logged the same communicator but no rule hit in that size bucket, so "
                    + "it ran NCCL's own pick there)\n");
        }
        if (notOfferedNote() != null) {
            sb.append("  (").append(notOfferedNote()).append(")\n");
        }
        if (!notCompared.isEmpty()) {
            sb.append("decisions not compared at ")
                    .append(notCompared.size())
                    .append(notCompared.size() == 1 ? " size" : " sizes")
                    .append(": ranks with no rule hit where other ranks of the shape have one (")
                    .append(String.join("; ", notCompared.stream().limit(3).toList()))
                    .append(notCompared.size() > 3 ? "; ..." : "")
                    .append(
                            "); their logs do not name NCCL's commId (tuner v3/v4), so whether they ran those calls is unknown\n");
        }
    }

    /** @return the rows as a table, with measurements their prices and notes too */
    private String decisionTable() {
        boolean priced = !groups.isEmpty();
        List<String> headers = new ArrayList<>(
                List.of("shape", "collective", "size", ">calls", ">ranks", "NCCL's pick", "policy's pick"));
        if (priced) {
            headers.addAll(List.of(
                    ">at",
                    ">NCCL us",
                    ">policy us",
                    ">NCCL busbw GB/s",
                    ">policy busbw GB/s",
                    ">saved us/call",
                    ">saved us",
                    "note"));
        }
        TextTable t = new TextTable(headers.toArray(String[]::new));
        for (Row r : rows) {
            List<String> cells = new ArrayList<>(Arrays.asList(
                    r.shape(),
                    r.collective().name(),
                    r.range(),
                    Long.toString(r.calls()),
                    Integer.toString(r.ranks()),
                    r.ncclPick(),
                    r.policyLabel()));
            if (priced) {
                cells.addAll(priceCells(r));
            }
            t.row(cells.toArray(String[]::new));
        }
        return t.render();
    }

    /** @return a row's price cells: the measured size, times, busbw, savings and a note */
    private List<String> priceCells(Row r) {
        Price p = r.price();
        if (p == null) {
            return List.of(
                    "-",
                    "-",
                    "-",
                    "-",
                    "-",
                    "-",
                    "-",
                    "not measured: " + notPricedWhy(r.collective(), r.nRanks(), r.nNodes(), groups));
        }
        return List.of(
                ByteSize.format(p.measuredBytes()),
                us(p.ncclUs()),
                us(p.policyUs()),
                gbps(p.ncclBusbw()),
                gbps(p.policyBusbw()),
                us(p.savedUs()),
                Double.isNaN(p.policyUs()) ? "-" : us(p.savedUs() * r.calls()),
                Double.isNaN(p.policyUs())
                        ? "policy's pick not measured"
                        : p.keptByNoise() ? "measured gain within noise: a compile would keep NCCL's pick" : "");
    }

    /** The expected saving over the priced rule hits, or why nothing could be priced. */
    private void savingLines(StringBuilder sb) {
        long pc = pricedCalls();
        long all = rows.stream().mapToLong(Row::calls).sum();
        double saved = savedUs();
        if (pc == 0) { // no baseline to take a percentage of: not "0.00% of NCCL's 0.0 us"
            sb.append("\nexpected saving: no priced calls (0 of ")
                    .append(all)
                    .append(all == 1 ? " rule hit" : " rule hits")
                    .append(" priced), so no saving to show\n");
        } else {
            sb.append(String.format(
                    Locale.ROOT,
                    "%nexpected saving: %.1f us, %.2f%% of the rule hits' time (NCCL's %.1f us over the %d of %d rule"
                            + " hits priced); %.1f us per rule hit, %.1f us per rank over %d log%s%n",
                    saved,
                    ncclUs() > 0 ? 100 * saved / ncclUs() : 0.0,
                    ncclUs(),
                    pc,
                    all,
                    saved / pc,
                    logs.isEmpty() ? 0.0 : saved / logs.size(),
                    logs.size(),
                    logs.size() == 1 ? "" : "s"));
        }
        String why = shapesNotMeasured(
                "the logs' decisions",
                rows.stream()
                        .filter(r -> r.nRanks() > 0)
                        .map(r -> JobShape.of(r.nRanks(), r.nNodes()))
                        .toList(),
                groups);
        if (why != null) {
            sb.append(why).append('\n');
        }
    }
}
