package io.nccltuner.policy;

import io.nccltuner.policy.Policy.Candidate;
import io.nccltuner.policy.Policy.Profile;
import io.nccltuner.policy.Policy.Range;
import io.nccltuner.policy.Policy.Rule;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeSet;
import java.util.function.Consumer;

/**
 * Converts the CSV config of NCCL's example tuner plugin (NCCL plugins/tuner/example, 2.27+,
 * read from {@code NCCL_TUNER_CONFIG_FILE}) into an equivalent {@link Policy}.
 *
 * <p>Format (plugin.c {@code loadConfig}): one rule per line,
 * {@code collective,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks[,numPipeOps[,regBuff]]};
 * lines starting with {@code #} and blank lines are skipped; fields are trimmed of spaces and
 * tabs; -1 means "any" for nNodes, nRanks, numPipeOps and regBuff and "NCCL's default" for
 * channels; the byte range is inclusive. EnumNames are lower case: collectives {@code broadcast,
 * reduce, allgather, reducescatter, allreduce}; algorithms {@code tree, ring, collnet_direct,
 * collnet_chain, nvls, nvls_tree, pat}; protocols {@code ll, ll128, simple}.
 *
 * <p>Where NCCL's plugin is silent this converter refuses, with the line number: an unknown or
 * differently-cased name (the plugin compares with strcmp and turns unknown names into
 * allreduce / ring / simple without a word), fewer than 8 or more than 10 fields (the plugin skips
 * or truncates them), a field that is not a number (the plugin's atoi reads garbage as 0),
 * a negative min_bytes, min above max, channels outside -1..64.
 *
 * <p>Semantics kept exactly: for a call, the plugin walks the lines in file order and applies the
 * first line that matches (collective, size, nNodes, nRanks, numPipeOps, regBuff) and whose
 * algorithm/protocol NCCL offers (cost not -1); a line NCCL does not offer passes to the next
 * matching line. So each policy rule lists, as candidates, the first up to four distinct
 * algorithm/protocol pairs of the lines that match there, in file order; a fifth distinct line
 * there (which NCCL reaches only when it offers none of the four) is left out with a warning
 * naming it. Lines with specific
 * nNodes/nRanks become profiles: one per combination of the values the file names, most specific
 * first, each holding the lines that apply to it; profiles that change nothing are dropped. An
 * NCCLX interval ({@code [2,8]}, {@code (1,)}; see {@link ConfigFormats}) names a range: each axis
 * is cut at the ends of every range and value, and each piece some line names becomes a profile
 * matching that piece.
 *
 * <p>Approximations, each reported as a warning naming the line:
 *
 * <ul>
 *   <li>Byte ranges: policies use half-open ranges on the size grid ({@link SizeGrid}), so each
 *       grid bucket gets what NCCL's plugin does for the bucket's smallest size: [min, max]
 *       becomes [ceil(min), ceil(max + 1)) in grid points. Exact when min and max + 1 are grid
 *       points (0, 1024, 65536, 4 GiB...; e.g. 0..65535); otherwise the warning names the sizes
 *       that change hands (for 0..65536: sizes 65537..81919 B follow this line too). A line that
 *       covers no grid point is dropped. max_bytes of 2^64 - 1 (or -1) means no upper bound.
 *   <li>regBuff: kept. Where lines name regBuff 0 or 1, the first-match resolution runs once
 *       for unregistered and once for registered buffers; rules the same in both stay
 *       {@code regBuff: any}, the others become {@code regBuff: false} / {@code true} rules, which
 *       NCCL 2.24+ (tuner v4) lets match and a v3 NCCL never does (said once per such line).
 * </ul>
 *
 * <p>Not replicated: the example plugin sets {@code *nChannels = 1} at the top of every
 * getCollInfo call (plugin.c, 2.28.9 and 2.30.7), so with it every call NCCL plans, matched or not,
 * runs on one channel; here no match and channels -1 leave NCCL's channel count alone, as the
 * config file's own comment ("-1 to keep default") says.
 */
public final class NcclExampleConfig {
    private static final String[] COLLS = {"broadcast", "reduce", "allgather", "reducescatter", "allreduce"};
    private static final String[] ALGOS = {"tree", "ring", "collnet_direct", "collnet_chain", "nvls", "nvls_tree", "pat"
    };
    private static final String[] PROTOS = {"ll", "ll128", "simple"};

    /**
     * One config line.
     *
     * @param line 1-based line number
     * @param collective the collective
     * @param from first byte (grid point) after rounding
     * @param to end (exclusive grid point) after rounding, -1 for no bound
     * @param candidate algorithm, protocol, channels (0 = NCCL's default)
     * @param nNodes nodes matched, {@link Range#ANY} any (an NCCLX interval can name a range)
     * @param nRanks ranks matched, {@link Range#ANY} any
     * @param numPipeOps numPipeOps matched, {@link Range#ANY} any (an NCCLX interval can name a range)
     */
    record Line(
            int line,
            Collective collective,
            long from,
            long to,
            Candidate candidate,
            Range nNodes,
            Range nRanks,
            Range numPipeOps,
            int regBuff) {}

    /**
     * The converted policy and what did not convert exactly.
     *
     * @param policy the policy (one or more profiles)
     * @param warnings {@code file:line: text} for each approximation
     * @param ruleLines for each rule (by identity), the config lines it comes from
     */
    public record Result(Policy policy, List<String> warnings, Map<Rule, List<Integer>> ruleLines) {}

    /**
     * Largest config file read, bytes (the limit of a YAML policy, {@link PolicyLoader#MAX_FILE_BYTES}):
     * refused before it is read, naming the file and the limit. NCCL's example plugin reads at most
     * 100 lines of 1 KiB (plugin.c's MAX_LINE_LENGTH, MAX_CONFIGS); 2 MiB is some 30,000 lines.
     */
    public static final long MAX_FILE_BYTES = PolicyLoader.MAX_FILE_BYTES;

    /**
     * Longest CSV line, characters: a line of ten fields is under 200; NCCL's example plugin reads
     * lines with a 1 KiB fgets buffer. A longer line is refused naming file:line and the limit.
     */
    public static final int MAX_LINE_CHARS = 4096;

    private NcclExampleConfig() {}

    /**
     * What a file's name says it is: NCCL's example-tuner CSV ({@code .conf}, {@code .csv}, {@code
     * .txt}: true), a YAML policy ({@code .yaml}, {@code .yml}: false), or neither (null). The one
     * rule for the plugin (which of NCCL_TUNER_JAVA_POLICY and NCCL_TUNER_CONFIG_FILE may name
     * either) and the tools' POLICY argument (which looks at the content when the name says
     * neither).
     *
     * @param file a policy file
     * @return true for a CSV name, false for a YAML name, null otherwise
     */
    public static Boolean csvByName(Path file) {
        Path f = file.getFileName();
        String n = f == null ? "" : f.toString().toLowerCase(java.util.Locale.ROOT);
        if (n.endsWith(".yaml") || n.endsWith(".yml")) {
            return false;
        }
        if (n.endsWith(".conf") || n.endsWith(".csv") || n.endsWith(".txt")) {
            return true;
        }
        return null;
    }

    /**
     * Converts a config file, for the plugin when {@code NCCL_TUNER_CONFIG_FILE} names one, without
     * the lines that can never apply ({@link #withoutWhatNeverApplies}, as import leaves them out).
     *
     * @param csv the config file
     * @param warnings receives each approximation as {@code file:line: text}
     * @return the policy, named after the file, mode enforce, {@link Policy#source()} the file
     * @throws IOException if the file cannot be read
     * @throws InputException on the first line the converter refuses (see the class comment)
     */
    public static Policy toPolicy(Path csv, Consumer<String> warnings) throws IOException, InputException {
        Result r = convert(csv);
        List<String> all = new ArrayList<>(r.warnings());
        Policy p = withoutWhatNeverApplies(r, csv.toString(), all);
        all.forEach(warnings);
        return p;
    }

    /**
     * The converted policy without what can never apply, which validate refuses and NCCL's example
     * plugin never applies either, as the plugin reads the CSV ({@link #toPolicy}) and {@code
     * nccl-tuner import} writes it, so that both compile the same table (the same sha256, which seeds
     * canary mode's draw; before issue 21 the plugin kept such a line and import left it out): a rule none of whose candidates NCCL offers for its collective
     * (the example plugin passes over a line NCCL does not offer, so the rule changes nothing; its
     * bucket stays NCCL's), and a profile for one-rank communicators only (NCCL does not call the
     * tuner for them). Each is said once in a warning naming its CSV lines and how many profiles held
     * it. The profiles keep the converter's names, which are compile's ({@link Profile#nameOf}).
     *
     * @param r the conversion
     * @param file the CSV, for messages
     * @param warnings receives one warning per left-out line and reason
     * @return the policy (the same rule objects, so {@link #linesOf} still finds them)
     */
    public static Policy withoutWhatNeverApplies(Result r, String file, List<String> warnings) {
        Policy p = r.policy();
        Map<String, Integer> left = new java.util.LinkedHashMap<>(); // warning text -> profiles
        List<Profile> profiles = new ArrayList<>();
        for (Profile pr : p.profiles()) {
            if (pr.nRanks().max() < 2) {
                java.util.TreeSet<Integer> lines = new java.util.TreeSet<>();
                pr.rules().forEach(x -> lines.addAll(linesOf(x, r)));
                left.merge(
                        at(file, lines) + ": profile " + pr.name() + " (nRanks " + pr.nRanks() + ") left out: "
                                + "NCCL never calls the tuner for one-rank communicators, so it could never apply",
                        1,
                        Integer::sum);
                continue;
            }
            List<Rule> rules = new ArrayList<>();
            for (Rule rule : pr.rules()) {
                List<String> why = rule.candidates().stream()
                        .map(c -> NcclOffers.neverOffered(rule.collective(), c.algorithm(), c.protocol()))
                        .toList();
                if (why.stream().allMatch(java.util.Objects::nonNull)) {
                    List<Integer> ls = linesOf(rule, r);
                    left.merge(
                            at(file, ls) + ": " + NcclOffers.describe(rule) + " left out: "
                                    + String.join(
                                            ", ",
                                            rule.candidates().stream()
                                                    .map(c -> c.algorithm() + "/" + c.protocol())
                                                    .toList())
                                    + " is never offered there (" + why.getFirst()
                                    + "), and NCCL's example plugin passes over a line NCCL"
                                    + " does not offer, so it never applies this one either (NCCL picks there)",
                            1,
                            Integer::sum);
                    continue;
                }
                rules.add(rule);
            }
            profiles.add(pr.withRules(rules));
        }
        if (profiles.isEmpty()) {
            profiles.add(new Profile("any", Policy.Range.ANY, Policy.Range.ANY, List.of()));
        }
        left.forEach((w, n) -> warnings.add(w + (n > 1 ? " (in " + n + " profiles)" : "")));
        return p.withProfiles(profiles);
    }

    /** @return {@code file:3,5} naming a left-out rule's CSV lines, or {@code file} when none is known */
    private static String at(String file, java.util.Collection<Integer> lines) {
        return file
                + (lines.isEmpty()
                        ? ""
                        : ":" + lines.stream().map(String::valueOf).collect(java.util.stream.Collectors.joining(",")));
    }

    /**
     * As {@link #toPolicy(Path, Consumer)}, dropping the warnings.
     *
     * @param csv the config file
     * @return the policy
     * @throws IOException if the file cannot be read
     * @throws InputException on a line the converter refuses
     */
    public static Policy toPolicy(Path csv) throws IOException, InputException {
        return toPolicy(csv, w -> {});
    }

    /**
     * Converts a config file.
     *
     * @param csv the config file, at most {@link #MAX_FILE_BYTES} bytes of UTF-8, each CSV line at
     *     most {@link #MAX_LINE_CHARS} characters
     * @return the policy, the warnings and where each rule came from
     * @throws IOException if the file cannot be read
     * @throws InputException on a line the converter refuses, a file over the size limit (naming the
     *     file and the limit) or a byte that is not UTF-8 ({@code file:line:column: not UTF-8 ...})
     */
    public static Result convert(Path csv) throws IOException, InputException {
        String name = csv.getFileName().toString().replaceFirst("\\.(conf|csv|txt|json)$", "");
        // size first (a stat), then strict UTF-8: a 14 MB line ran the plugin's 64 MB heap out
        String text = PolicyText.read(csv, MAX_FILE_BYTES);
        Result r = convert(csv.toString(), name, text.lines().toList());
        return new Result(r.policy().withSource(csv), r.warnings(), r.ruleLines());
    }

    /**
     * Converts config text.
     *
     * @param file the name used in messages
     * @param policyName the policy's name
     * @param text the lines of the file
     * @return the policy, the warnings and where each rule came from
     * @throws InputException on a line the converter refuses
     */
    public static Result convert(String file, String policyName, List<String> text) throws InputException {
        List<String> warnings = new ArrayList<>();
        String first = text.stream()
                .map(String::strip)
                .filter(x -> !x.isEmpty())
                .findFirst()
                .orElse("");
        List<Line> lines = first.startsWith("{") || first.startsWith("[{") || first.equals("[")
                ? jsonLines(file, text, warnings)
                : csvLines(file, text, warnings);
        if (lines.isEmpty()) {
            warnings.add(file + ": no config lines; the policy changes nothing");
        }
        // the nNodes / nRanks the file names, cut into pieces no line's range splits (a value the
        // example names is a piece of its own; an NCCLX interval [2,8] may become several), plus
        // "other" (Range.ANY: a value no line names)
        List<Range> nodeSegs = segments(lines.stream().map(Line::nNodes).toList());
        List<Range> rankSegs = segments(lines.stream().map(Line::nRanks).toList());
        Map<Rule, List<Integer>> ruleLines = new IdentityHashMap<>();
        Map<Integer, Dropped> dropped = new java.util.TreeMap<>();
        List<Profile> profiles = new ArrayList<>();
        for (Cell c : cells(nodeSegs, rankSegs)) {
            List<Line> applicable = lines.stream()
                    .filter(l -> covers(l.nNodes(), c.nNodes()) && covers(l.nRanks(), c.nRanks()))
                    .toList();
            if (applicable.isEmpty()) {
                continue;
            }
            profiles.add(new Profile(
                    Profile.nameOf(c.nRanks(), c.nNodes()),
                    c.nRanks(),
                    c.nNodes(),
                    rulesByRegBuff(file, applicable, ruleLines, dropped)));
        }
        for (var e : dropped.entrySet()) {
            warnings.add(
                    InputException.at(file, e.getKey()) + ": " + e.getValue().message(e.getKey()));
        }
        profiles = withoutUnused(profiles, nodeSegs, rankSegs);
        if (profiles.isEmpty()) {
            profiles.add(new Profile(Profile.nameOf(Range.ANY, Range.ANY), Range.ANY, Range.ANY, List.of()));
        }
        Policy policy = new Policy(
                policyName,
                Mode.ENFORCE,
                "Imported by nccl-tuner import from NCCL example-tuner config " + file + " (first matching line wins).",
                profiles,
                null);
        return new Result(policy, warnings, ruleLines);
    }

    /** The rules of a JSON file (NCCLX style), one per object, as config lines. */
    private static List<Line> jsonLines(String file, List<String> text, List<String> warnings) throws InputException {
        List<Line> lines = new ArrayList<>();
        for (ConfigFormats.JsonLine j : ConfigFormats.json(file, String.join("\n", text))) {
            Line l = parse(
                    InputException.at(file, j.line()),
                    j.line(),
                    String.join(",", j.fields()),
                    j.bytesKey() ? BytesSyntax.JSON_INTERVAL : BytesSyntax.JSON_FIELDS,
                    warnings);
            if (l != null) {
                lines.add(l);
            }
        }
        warnings.add(file + ": read as JSON rules (NCCLX style), one rule per object");
        return lines;
    }

    /**
     * The lines of a CSV file; a first line that is a spreadsheet's header row is skipped with a
     * warning, one in another tuner's format is refused naming it (RCCL, AWS OFI NCCL).
     */
    private static List<Line> csvLines(String file, List<String> text, List<String> warnings) throws InputException {
        List<Line> lines = new ArrayList<>();
        boolean seenLine = false;
        for (int i = 0; i < text.size(); i++) {
            if (text.get(i).length() > MAX_LINE_CHARS) {
                throw new InputException(
                        InputException.at(file, i + 1),
                        "a line of " + text.get(i).length() + " characters, over the limit of " + MAX_LINE_CHARS
                                + " for a config line (NCCL's example plugin reads 1 KiB lines)");
            }
            String t = text.get(i).strip();
            if (!seenLine && !t.isEmpty() && !t.startsWith("#")) {
                seenLine = true;
                String[] f = ConfigFormats.split(t);
                String why = ConfigFormats.headerProblem(f);
                if (why != null) {
                    throw new InputException(InputException.at(file, i + 1), why);
                }
                if (ConfigFormats.looksLikeHeader(f)) {
                    warnings.add(
                            InputException.at(file, i + 1) + ": a header row ('"
                                    + (t.length() > 60 ? t.substring(0, 60) + "..." : t)
                                    + "'), as a spreadsheet writes it; skipped (NCCL's plugin would refuse it as an unknown collective)");
                    continue;
                }
            }
            Line l;
            try {
                l = parse(InputException.at(file, i + 1), i + 1, text.get(i), BytesSyntax.FIELDS, warnings);
            } catch (InputException e) {
                if (e.getMessage().contains(" fields; a line has 8 to 10") && ConfigFormats.looksLikeAwsOfi(text)) {
                    throw new InputException(InputException.at(file, i + 1), ConfigFormats.AWS_OFI);
                }
                throw e;
            }
            if (l != null) {
                lines.add(l);
            }
        }
        return lines;
    }

    /** A profile's shape: a piece of the nNodes axis and of the nRanks axis; ANY = any value the file does not name. */
    private record Cell(Range nNodes, Range nRanks) {}

    /**
     * The profiles' shapes in order, first match wins: pieces of both axes before a piece of one
     * before neither, i.e. more specific shapes before wider ones; pieces of one axis are disjoint,
     * so their order among themselves (ascending) changes nothing.
     */
    private static List<Cell> cells(List<Range> nodeSegs, List<Range> rankSegs) {
        List<Cell> cells = new ArrayList<>();
        for (Range n : nodeSegs) {
            for (Range r : rankSegs) {
                cells.add(new Cell(n, r));
            }
        }
        for (Range n : nodeSegs) {
            cells.add(new Cell(n, Range.ANY));
        }
        for (Range r : rankSegs) {
            cells.add(new Cell(Range.ANY, r));
        }
        cells.add(new Cell(Range.ANY, Range.ANY));
        return cells;
    }

    /** @return the profiles less each one whose removal changes no communicator's rules */
    private static List<Profile> withoutUnused(List<Profile> profiles, List<Range> nodeSegs, List<Range> rankSegs) {
        List<long[]> probes = new ArrayList<>();
        for (long n : probes(nodeSegs)) {
            for (long r : probes(rankSegs)) {
                probes.add(new long[] {n, r});
            }
        }
        for (int i = 0; i < profiles.size() && profiles.size() > 1; ) {
            List<Profile> without = new ArrayList<>(profiles);
            without.remove(i);
            boolean same = true;
            for (long[] p : probes) {
                if (!Objects.equals(effective(profiles, p), effective(without, p))) {
                    same = false;
                    break;
                }
            }
            if (same) {
                profiles = without;
            } else {
                i++;
            }
        }
        return profiles;
    }

    /**
     * Cuts the axis at each named range's ends.
     *
     * @param named each line's range on one axis, {@link Range#ANY} for any
     * @return the ascending, disjoint pieces some named range covers; each named range is a union of them
     */
    private static List<Range> segments(List<Range> named) {
        TreeSet<Long> cuts = new TreeSet<>();
        for (Range r : named) {
            if (!r.equals(Range.ANY)) {
                cuts.add(r.min());
                if (r.max() != Long.MAX_VALUE) {
                    cuts.add(r.max() + 1);
                }
            }
        }
        List<Range> out = new ArrayList<>();
        for (long lo : cuts) {
            Long next = cuts.higher(lo);
            Range seg = new Range(lo, next == null ? Long.MAX_VALUE : next - 1);
            if (named.stream().anyMatch(r -> !r.equals(Range.ANY) && r.contains(lo))) {
                out.add(seg);
            }
        }
        return out;
    }

    /** @return whether a line's range applies to a profile's piece (ANY: only lines for any value) */
    private static boolean covers(Range line, Range piece) {
        return line.equals(Range.ANY) || (!piece.equals(Range.ANY) && line.contains(piece.min()));
    }

    /** @return one value per piece, plus the smallest value (1 or more) no piece holds, if any */
    private static List<Long> probes(List<Range> segs) {
        List<Long> out = new ArrayList<>();
        long other = 1;
        for (Range s : segs) {
            out.add(s.min());
            if (s.contains(other)) {
                other = s.max() == Long.MAX_VALUE ? -1 : s.max() + 1;
            }
        }
        if (other != -1) {
            out.add(other);
        }
        return out;
    }

    /** The rules a communicator of (nNodes, nRanks) gets: the first matching profile's, by content. */
    private static List<String> effective(List<Profile> profiles, long[] probe) {
        for (Profile p : profiles) {
            if (p.nNodes().contains(probe[0]) && p.nRanks().contains(probe[1])) {
                return p.rules().stream().map(Object::toString).toList();
            }
        }
        return List.of();
    }

    /** A line left out of the rules where more than MAX_CANDIDATES distinct lines match before it. */
    private record Dropped(Collective collective, int firstBucket, int lastBucket, List<Integer> kept) {
        /** @return why config line {@code line} is not used over the buckets where it was left out */
        String message(int line) {
            long to = SizeGrid.upperBound(lastBucket);
            return "not used for " + collective + " " + ByteSize.range(SizeGrid.lowerBound(firstBucket), to)
                    + ": lines "
                    + kept.stream().map(String::valueOf).collect(java.util.stream.Collectors.joining(", "))
                    + " match there first with "
                    + PolicyLoader.MAX_CANDIDATES
                    + " different algorithm/protocol pairs and a policy rule lists at most "
                    + PolicyLoader.MAX_CANDIDATES + " candidates (NCCL reaches line " + line
                    + " there only when it offers none of them)";
        }
    }

    /**
     * As {@link #rules}, keeping the regBuff column: resolved once for regBuff 0 (lines naming 0 or
     * any) and once for regBuff 1 (1 or any); a rule the same in both is kept for any regBuff.
     */
    private static List<Rule> rulesByRegBuff(
            String file, List<Line> lines, Map<Rule, List<Integer>> ruleLines, Map<Integer, Dropped> dropped)
            throws InputException {
        if (lines.stream().allMatch(l -> l.regBuff() == -1)) {
            return rules(file, lines, ruleLines, dropped);
        }
        List<Rule> no0 =
                rules(file, lines.stream().filter(l -> l.regBuff() != 1).toList(), ruleLines, dropped);
        List<Rule> yes0 =
                rules(file, lines.stream().filter(l -> l.regBuff() != 0).toList(), ruleLines, dropped);
        List<Rule> no = cutAt(no0, yes0, ruleLines);
        List<Rule> yes = new ArrayList<>(cutAt(yes0, no0, ruleLines));
        List<Rule> out = new ArrayList<>();
        for (Rule r : no) {
            out.add(yes.remove(r) ? r : withRegBuff(r, false, ruleLines));
        }
        for (Rule r : yes) {
            out.add(withRegBuff(r, true, ruleLines));
        }
        return joined(out, ruleLines);
    }

    /**
     * Each rule cut at the byte bounds that {@code other}'s rules of its collective and numPipeOps
     * range have inside it, so that a piece the same for regBuff 0 and 1 compares equal and becomes
     * a {@code regBuff: any} rule. Uncut, a regBuff -1 line whose range a regBuff 1 line covered
     * only in part became regBuff true/false rules over the rest, which never match under tuner v3
     * (found by the oracle adversary: {@code allreduce,0,65535,ring,ll,-1,-1,-1} with {@code
     * allreduce,0,4095,tree,simple,-1,-1,-1,-1,1} left an 8 KiB call at NCCL's pick under NCCL 2.22).
     */
    private static List<Rule> cutAt(List<Rule> rules, List<Rule> other, Map<Rule, List<Integer>> ruleLines) {
        List<Rule> out = new ArrayList<>();
        for (Rule r : rules) {
            java.util.TreeSet<Long> cuts = new java.util.TreeSet<>(Long::compareUnsigned);
            for (Rule o : other) {
                if (o.collective() != r.collective() || !o.numPipeOps().equals(r.numPipeOps())) {
                    continue;
                }
                for (long b : new long[] {o.fromBytes(), o.toBytes()}) {
                    if (Long.compareUnsigned(b, r.fromBytes()) > 0 && Long.compareUnsigned(b, r.toBytes()) < 0) {
                        cuts.add(b);
                    }
                }
            }
            long from = r.fromBytes();
            for (long c : cuts) {
                out.add(piece(r, from, c, ruleLines));
                from = c;
            }
            out.add(cuts.isEmpty() ? r : piece(r, from, r.toBytes(), ruleLines));
        }
        return out;
    }

    private static Rule piece(Rule r, long from, long to, Map<Rule, List<Integer>> ruleLines) {
        Rule p = r.withRange(from, to);
        ruleLines.put(p, ruleLines.getOrDefault(r, List.of()));
        return p;
    }

    /** Neighbouring rules the same but for their byte ranges, one after the other, joined again. */
    private static List<Rule> joined(List<Rule> rules, Map<Rule, List<Integer>> ruleLines) {
        List<Rule> out = new ArrayList<>();
        for (Rule r : rules) {
            Rule last = out.isEmpty() ? null : out.getLast();
            if (last != null
                    && last.toBytes() == r.fromBytes()
                    && last.withRange(0, 0).equals(r.withRange(0, 0))) {
                out.set(out.size() - 1, piece(last, last.fromBytes(), r.toBytes(), ruleLines));
            } else {
                out.add(r);
            }
        }
        return out;
    }

    private static Rule withRegBuff(Rule r, boolean regBuff, Map<Rule, List<Integer>> ruleLines) {
        Rule t = r.withRegBuff(regBuff);
        ruleLines.put(t, ruleLines.getOrDefault(r, List.of()));
        return t;
    }

    /**
     * Resolves "first matching line wins" for one profile into non-overlapping rules.
     *
     * @param dropped receives, per config line, where it was left out (a rule keeps the first
     *     {@link PolicyLoader#MAX_CANDIDATES} distinct algorithm/protocol pairs)
     */
    private static List<Rule> rules(
            String file, List<Line> lines, Map<Rule, List<Integer>> ruleLines, Map<Integer, Dropped> dropped)
            throws InputException {
        List<Rule> out = new ArrayList<>();
        for (Collective coll : Collective.values()) {
            List<Line> ls = lines.stream().filter(l -> l.collective() == coll).toList();
            if (ls.isEmpty()) {
                continue;
            }
            List<Piece> pieces = new ArrayList<>();
            for (Range seg : pipeSegments(ls)) {
                pieces.addAll(pieces(coll, ls, seg, dropped));
            }
            for (Piece p : mergeNeighbours(pieces)) {
                Rule r = new Rule(coll, p.from(), p.to(), p.pipe(), null, Double.NaN, p.cands());
                out.add(r);
                ruleLines.put(r, p.lines().stream().sorted().toList());
            }
        }
        checkRulesPerBucket(file, out, ruleLines);
        return out;
    }

    /**
     * The numPipeOps axis from 0 cut at 1 and at the ends of each value or range the lines name, so
     * no line's numPipeOps splits a segment; one segment is {@link Range#ANY}. NCCL passes numPipeOps
     * >= 1, but a line's -1 matches every value, 0 included, in NVIDIA's example tuner
     * (plugins/tuner/example/plugin.c, pluginGetCollInfo: {@code config->numPipeOps == -1 ||
     * config->numPipeOps == numPipeOps}), so a harness calling with 0 gets the -1 lines there too;
     * before issue 21 the axis started at 1 and a -1 line beside lines naming numPipeOps covered no 0.
     */
    private static List<Range> pipeSegments(List<Line> ls) {
        TreeSet<Long> cuts = new TreeSet<>(List.of(0L, 1L));
        for (Line l : ls) {
            if (!l.numPipeOps().equals(Range.ANY)) {
                cuts.add(Math.max(1, l.numPipeOps().min()));
                if (l.numPipeOps().max() != Long.MAX_VALUE) {
                    cuts.add(l.numPipeOps().max() + 1);
                }
            }
        }
        List<Range> segs = new ArrayList<>();
        for (long lo : cuts) {
            Long next = cuts.higher(lo);
            segs.add(new Range(lo, next == null ? Long.MAX_VALUE : next - 1));
        }
        if (segs.size() == 1) {
            segs.set(0, Range.ANY);
        }
        return segs;
    }

    /**
     * A stretch of grid buckets of one numPipeOps segment with the same candidates.
     *
     * @param pipe the numPipeOps segment
     * @param from first byte
     * @param to end (exclusive), -1 for no bound
     * @param cands the candidates, in the order NCCL's plugin tries the lines
     * @param lines the config lines they come from
     */
    private record Piece(Range pipe, long from, long to, List<Candidate> cands, List<Integer> lines) {}

    /** The stretches of one numPipeOps segment where the same lines match first, bucket by bucket. */
    private static List<Piece> pieces(Collective coll, List<Line> ls, Range seg, Map<Integer, Dropped> dropped) {
        List<Piece> pieces = new ArrayList<>();
        Piece open = null;
        for (int b = 0; b <= SizeGrid.BUCKETS; b++) {
            List<Candidate> cands = new ArrayList<>();
            List<Integer> from = new ArrayList<>();
            if (b < SizeGrid.BUCKETS) {
                matching(coll, ls, seg, b, cands, from, dropped);
            }
            if (open != null && !open.cands().equals(cands)) {
                pieces.add(new Piece(open.pipe(), open.from(), SizeGrid.upperBound(b - 1), open.cands(), open.lines()));
                open = null;
            }
            if (open == null && !cands.isEmpty()) {
                open = new Piece(seg, SizeGrid.lowerBound(b), 0, cands, new ArrayList<>(from));
            } else if (open != null) {
                for (int x : from) {
                    if (!open.lines().contains(x)) {
                        open.lines().add(x);
                    }
                }
            }
        }
        return pieces;
    }

    /**
     * The candidates of the lines that match bucket b's smallest size in a numPipeOps segment, the
     * first line of each algorithm/protocol pair in file order, at most {@link
     * PolicyLoader#MAX_CANDIDATES}; a further one is recorded in {@code dropped}.
     */
    private static void matching(
            Collective coll,
            List<Line> ls,
            Range seg,
            int b,
            List<Candidate> cands,
            List<Integer> from,
            Map<Integer, Dropped> dropped) {
        long size = SizeGrid.lowerBound(b);
        for (Line l : ls) {
            boolean sizeOk = Long.compareUnsigned(size, l.from()) >= 0
                    && (l.to() == -1L || Long.compareUnsigned(size, l.to()) < 0);
            boolean pipeOk = l.numPipeOps().equals(Range.ANY) || l.numPipeOps().contains(seg.min());
            if (!sizeOk
                    || !pipeOk
                    || cands.stream()
                            .anyMatch(c -> c.algorithm() == l.candidate().algorithm()
                                    && c.protocol() == l.candidate().protocol())) {
                continue;
            }
            if (cands.size() == PolicyLoader.MAX_CANDIDATES) {
                // NCCL would try this line only after the first four, all not offered: keep those
                List<Integer> kept = List.copyOf(from);
                dropped.merge(
                        l.line(),
                        new Dropped(coll, b, b, kept),
                        (old, x) -> new Dropped(
                                old.collective(),
                                Math.min(old.firstBucket(), b),
                                Math.max(old.lastBucket(), b),
                                old.kept()));
                continue;
            }
            cands.add(l.candidate());
            from.add(l.line());
        }
    }

    /** Merges pieces that differ only by neighbouring numPipeOps segments. */
    private static List<Piece> mergeNeighbours(List<Piece> pieces) {
        List<Piece> merged = new ArrayList<>();
        for (Piece p : pieces) {
            Piece prev = null;
            for (Piece m : merged) {
                if (m.from() == p.from()
                        && m.to() == p.to()
                        && m.cands().equals(p.cands())
                        && m.pipe().max() != Long.MAX_VALUE
                        && m.pipe().max() + 1 == p.pipe().min()) {
                    prev = m;
                }
            }
            if (prev != null) {
                merged.remove(prev);
                List<Integer> ln = new ArrayList<>(prev.lines());
                p.lines().stream().filter(x -> !ln.contains(x)).forEach(ln::add);
                long max = p.pipe().max();
                Range r = prev.pipe().min() == 0 && max == Long.MAX_VALUE
                        ? Range.ANY
                        : new Range(prev.pipe().min(), max);
                merged.add(new Piece(r, p.from(), p.to(), p.cands(), ln));
            } else {
                merged.add(p);
            }
        }
        return merged;
    }

    /** Refuses more than {@link PolicyLoader#MAX_RULES_PER_BUCKET} numPipeOps-distinct rules per (collective, bucket). */
    private static void checkRulesPerBucket(String file, List<Rule> out, Map<Rule, List<Integer>> ruleLines)
            throws InputException {
        for (Collective coll : Collective.values()) {
            int[] count = new int[SizeGrid.BUCKETS];
            for (Rule r : out) {
                if (r.collective() != coll) {
                    continue;
                }
                int hi = SizeGrid.endBucket(r.toBytes());
                for (int b = SizeGrid.bucket(r.fromBytes()); b < hi; b++) {
                    if (++count[b] > PolicyLoader.MAX_RULES_PER_BUCKET) {
                        throw new InputException(
                                InputException.at(file, ruleLines.get(r).getFirst()),
                                "more than "
                                        + PolicyLoader.MAX_RULES_PER_BUCKET
                                        + " numPipeOps values get different rules for " + coll + " at "
                                        + ByteSize.format(SizeGrid.lowerBound(b)) + "; a policy allows "
                                        + PolicyLoader.MAX_RULES_PER_BUCKET);
                    }
                }
            }
        }
    }

    // ---- one line ------------------------------------------------------------------------------

    /**
     * How a file writes a line's byte range, so that the advice moving a boundary onto the size grid
     * ({@code write max_bytes 65535 to end it at 64 KiB}) is written the file's way.
     */
    enum BytesSyntax {
        /** NCCL's example CSV: the inclusive {@code min_bytes} and {@code max_bytes} fields. */
        FIELDS,
        /** NCCLX's interval syntax: the range as one field, {@code [lo,hi]} inclusive, {@code [lo,hi)} not. */
        INTERVAL,
        /** NCCLX's JSON rules with {@code "min_bytes"} and {@code "max_bytes"} keys. */
        JSON_FIELDS,
        /** NCCLX's JSON rules with a {@code "bytes"} interval. */
        JSON_INTERVAL;

        /**
         * @param down the new first size, bytes (unsigned)
         * @param max the line's last size, bytes (unsigned, inclusive; -1 for none)
         * @return what to write for the range to start at {@code down}: {@code min_bytes 65536},
         *     {@code [65536,4294967295]}, {@code "min_bytes": 65536}, {@code "bytes": "[65536,)"}
         */
        String start(long down, long max) {
            String lo = Long.toUnsignedString(down);
            String iv = "[" + lo + "," + (max == -1L ? ")" : Long.toUnsignedString(max) + "]");
            return text("min_bytes", lo, iv);
        }

        /**
         * @param min the line's first size, bytes (unsigned)
         * @param down the new end, bytes (unsigned, exclusive)
         * @return what to write for the range to end before {@code down}: {@code max_bytes 65535},
         *     {@code [0,65536)}, {@code "max_bytes": 65535}, {@code "bytes": "[0,65536)"}
         */
        String end(long min, long down) {
            return text(
                    "max_bytes",
                    Long.toUnsignedString(down - 1),
                    "[" + Long.toUnsignedString(min) + "," + Long.toUnsignedString(down) + ")");
        }

        private String text(String field, String value, String interval) {
            return switch (this) {
                case FIELDS -> field + " " + value;
                case INTERVAL -> interval;
                case JSON_FIELDS -> "\"" + field + "\": " + value;
                case JSON_INTERVAL -> "\"bytes\": \"" + interval + "\"";
            };
        }
    }

    /**
     * One config line.
     *
     * @param syntax how the file writes a byte range ({@link BytesSyntax#FIELDS} for a CSV line, which
     *     is {@link BytesSyntax#INTERVAL} where its second field is an interval); the line is NCCLX's
     *     (nNodes/nRanks may be [lo,hi]) unless it is a CSV line without one
     */
    private static Line parse(String where, int ln, String raw, BytesSyntax syntax, List<String> warnings)
            throws InputException {
        String t = raw.strip();
        if (t.isEmpty() || t.startsWith("#")) {
            return null;
        }
        boolean intervals = syntax != BytesSyntax.FIELDS;
        String[] f = ConfigFormats.split(t);
        if (f.length >= 2 && ConfigFormats.isInterval(f[1])) {
            f = ConfigFormats.fromIntervals(where, f); // NCCLX: the byte range as one interval field
            intervals = true;
            syntax = BytesSyntax.INTERVAL;
        }
        if (f.length == 11 || f.length == 12) {
            throw new InputException(where, ConfigFormats.rcclProblem(f.length));
        }
        if (f.length < 8 || f.length > 10) {
            throw new InputException(
                    where,
                    f.length + " fields; a line has 8 to 10: collective,min_bytes,max_bytes,"
                            + "algorithm,protocol,channels,nNodes,nRanks[,numPipeOps[,regBuff]] (NCCL's plugin would "
                            + (f.length < 8 ? "skip it silently)" : "ignore the fields after the 10th)"));
        }
        int ci = name(where, f[0], COLLS, "collective", "allreduce");
        int ai = name(where, f[3], ALGOS, "algorithm", "ring");
        int pi = name(where, f[4], PROTOS, "protocol", "simple");
        long min = unsigned(where, f[1], "min_bytes");
        long max = unsigned(where, f[2], "max_bytes");
        if (min == -1L) {
            throw new InputException(
                    where,
                    "min_bytes is -1 (2^64 - 1 to NCCL's strtoull), which no call reaches; "
                            + "write 0 for no lower bound");
        }
        if (max != -1L && Long.compareUnsigned(min, max) > 0) {
            throw new InputException(
                    where,
                    "min_bytes " + Long.toUnsignedString(min) + " is above max_bytes " + Long.toUnsignedString(max)
                            + "; the range is inclusive and would match nothing");
        }
        int channels = (int) integer(where, f[5], "channels", -1, PolicyLoader.MAX_CHANNELS);
        Range nNodes = shape(where, f[6], "nNodes", intervals);
        Range nRanks = shape(where, f[7], "nRanks", intervals);
        Range pipe = f.length > 8 ? shape(where, f[8], "numPipeOps", intervals) : Range.ANY;
        int reg = f.length > 9 ? (int) integer(where, f[9], "regBuff", -1, 1) : -1;
        if (nNodes.max() == 0 || nRanks.max() == 0 || pipe.max() == 0) {
            throw new InputException(
                    where,
                    (pipe.max() == 0
                                    ? "numPipeOps 0 matches no call (NCCL passes 1 or more)"
                                    : "nNodes/nRanks 0 matches no communicator")
                            + "; write -1 for any");
        }
        if (reg != -1) {
            warnings.add(
                    where + ": regBuff " + reg + ": kept as regBuff " + (reg == 1) + " rules, which match from "
                            + "NCCL 2.24 (tuner v4); a v3 NCCL does not say whether a buffer is registered and they never match there");
        }
        // inclusive [min, max] -> half-open grid range: each bucket follows its smallest size
        long from = SizeGrid.ceilGridPoint(min);
        long end = max == -1L ? -1L : max + 1; // max + 1 wraps to 0 only for 2^64 - 1, handled as -1
        long to = end == -1L ? -1L : SizeGrid.ceilGridPoint(end);
        if (to != -1L && Long.compareUnsigned(from, to) >= 0) {
            warnings.add(where + ": bytes " + Long.toUnsignedString(min) + ".." + Long.toUnsignedString(max)
                    + " contains no size-grid point (4 per power of two), so no grid bucket follows it; line dropped");
            return null;
        }
        List<String> moved = new ArrayList<>();
        List<String> write = new ArrayList<>();
        if (from != min) {
            moved.add("sizes " + Long.toUnsignedString(min) + ".." + Long.toUnsignedString(from - 1)
                    + " B no longer follow this line");
            long down = SizeGrid.floorGridPoint(min);
            // following the advice moves the sizes down..min-1 (a power of two among them) onto this line
            write.add(syntax.start(down, max) + " to start it at " + ByteSize.format(down) + ", but "
                    + calls(down, min - 1) + " then join it (as is, they stay off this line, as in NCCL)");
        }
        if (end != -1L && to != end) {
            moved.add("sizes " + Long.toUnsignedString(end) + ".."
                    + (to == -1L ? "unbounded" : Long.toUnsignedString(to - 1)) + " B follow this line too");
            long down = SizeGrid.floorGridPoint(end);
            if (Long.compareUnsigned(down, from) > 0) {
                // following the advice moves the sizes down..max (a power of two among them) off this line
                write.add(syntax.end(min, down) + " to end it at " + ByteSize.format(down) + ", but " + calls(down, max)
                        + " then leave it (as is, they stay on this line, as in NCCL)");
            }
        }
        if (!moved.isEmpty()) {
            warnings.add(where + ": bytes " + Long.toUnsignedString(min) + ".." + Long.toUnsignedString(max)
                    + " (inclusive) is not on the size grid; rounded to " + ByteSize.range(from, to) + ": "
                    + String.join(", ", moved)
                    // NVIDIA-style boundaries (0,65536 then 65537,...) are one byte off the grid: say what to write
                    + (write.isEmpty() ? "" : "; write " + String.join("; write ", write)));
        }
        Candidate c = new Candidate(Algorithm.ofId(ai), Protocol.ofId(pi), Math.max(channels, 0), Double.NaN);
        return new Line(ln, Collective.ofId(ci), from, to, c, nNodes, nRanks, pipe, reg);
    }

    /**
     * The calls a boundary advice moves between lines, for its warning.
     *
     * @param lo smallest size, bytes (unsigned)
     * @param hi largest size, bytes (unsigned, {@code >= lo})
     * @return {@code the 65536 B calls} for one size, {@code the calls of 98304..100000 B} for several
     */
    private static String calls(long lo, long hi) {
        return lo == hi
                ? "the " + Long.toUnsignedString(lo) + " B calls"
                : "the calls of " + Long.toUnsignedString(lo) + ".." + Long.toUnsignedString(hi) + " B";
    }

    /**
     * @return nNodes/nRanks/numPipeOps matched: ANY for -1, one value, or (NCCLX, {@code [lo,hi]} /
     *     {@code [lo,]} as {@link ConfigFormats#count} writes it) a range, its lower end raised to 1
     */
    private static Range shape(String where, String s, String what, boolean intervals) throws InputException {
        if (intervals && ConfigFormats.isInterval(s)) {
            long[] iv = ConfigFormats.interval(where, s, what);
            long hi = iv[1] == -1L || Long.compareUnsigned(iv[1], Integer.MAX_VALUE) > 0 ? Long.MAX_VALUE : iv[1];
            return new Range(Math.max(iv[0], 1), hi);
        }
        long v = integer(where, s, what, -1, Integer.MAX_VALUE);
        return v == -1 ? Range.ANY : Range.exactly(v);
    }

    private static int name(String where, String s, String[] names, String what, String dflt) throws InputException {
        for (int i = 0; i < names.length; i++) {
            if (names[i].equals(s)) {
                return i;
            }
        }
        for (String n : names) {
            if (n.equalsIgnoreCase(s)) {
                throw new InputException(
                        where,
                        what + " '" + s + "': NCCL's example plugin compares names exactly "
                                + "(strcmp) and would read this as its default '" + dflt + "'; write '" + n + "'");
            }
        }
        String near = EnumNames.suggest(java.util.Arrays.asList(names), s); // the CLI's did-you-mean
        throw new InputException(
                where,
                "unknown " + what + " '" + s + "' (NCCL's example plugin would silently use '" + dflt
                        + "'); " + (near == null ? "" : "did you mean '" + near + "'? ") + "use one of "
                        + String.join(", ", names));
    }

    private static long unsigned(String where, String s, String what) throws InputException {
        if (s.equals("-1")) {
            return -1L;
        }
        try {
            return AsciiNumbers.parseUnsignedLong(s);
        } catch (NumberFormatException e) {
            throw new InputException(
                    where, what + " '" + s + "' is not a whole number of bytes" + AsciiNumbers.hint(s));
        }
    }

    private static long integer(String where, String s, String what, long min, long max) throws InputException {
        long v;
        try {
            v = AsciiNumbers.parseLong(s);
        } catch (NumberFormatException e) {
            throw new InputException(
                    where,
                    what + " '" + s + "' is not a whole number" + AsciiNumbers.hint(s)
                            + " (NCCL's atoi would read it as whatever digits it starts with)");
        }
        if (v < min || v > max) {
            throw new InputException(where, what + " " + v + " is outside " + min + ".." + max);
        }
        return v;
    }

    /**
     * Lines a rule came from, for comments.
     *
     * @param r a rule of {@link Result#policy()}
     * @param result the conversion
     * @return the config line numbers, ascending; empty when unknown
     */
    public static List<Integer> linesOf(Rule r, Result result) {
        return result.ruleLines().getOrDefault(r, List.of());
    }
}
