package io.nccltuner.policy;

import io.nccltuner.policy.Policy.Candidate;
import io.nccltuner.policy.Policy.Profile;
import io.nccltuner.policy.Policy.Range;
import io.nccltuner.policy.Policy.Rule;
import io.nccltuner.policy.YamlTree.Entry;
import io.nccltuner.policy.YamlTree.ListNode;
import io.nccltuner.policy.YamlTree.MapNode;
import io.nccltuner.policy.YamlTree.Node;
import io.nccltuner.policy.YamlTree.Scalar;
import io.nccltuner.policy.YamlTree.Type;
import java.io.IOException;
import java.io.Reader;
import java.io.StringReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Loads a YAML policy (schema {@code nccl-tuner-java/v1}, docs/policy-format.md) in three visible
 * steps: parse ({@link YamlTree}, SnakeYAML's parser with explicit limits), bind (this class,
 * field by field, refusing unknown fields and names) and validate (grid bounds, overlaps, counts).
 *
 * <p>Every problem is reported as {@code file:line:column: field.path: message}, e.g.
 * {@code p.yaml:14:22: profiles[0].rules[2].candidates[0].algorithm: unknown algorithm 'RINGG';
 * did you mean RING?}. All problems of a file are collected before {@link PolicyException} is
 * thrown.
 */
public final class PolicyLoader {
    /**
     * Files larger than this (bytes) are refused before parsing. Parsed, a policy takes about 20
     * bytes of heap per byte of YAML, and the plugin's JVM has 64 MB (-Xmx64m): at 4 MiB a file ran
     * it out of memory after seconds of garbage collection. 2 MiB (a 10,000-rule policy of `make
     * bench` is 1.8 MB) loads in under a second; HostilePolicyTest loads just under 2 MiB of profiles
     * in a child JVM with -Xmx64m.
     */
    public static final long MAX_FILE_BYTES = 2L * 1024 * 1024;

    /** Most candidates a rule may rank. */
    public static final int MAX_CANDIDATES = 4;

    /** Most rules that may cover one (collective, size bucket), told apart by numPipeOps. */
    public static final int MAX_RULES_PER_BUCKET = 4;

    /**
     * Largest channel count a candidate may name: NCCL_MAXCHANNELS, 64 (NCCL 2.19+ src/include/device.h).
     * The one home of this fact in Java; the C side's is NCCL_TUNER_JAVA_MAX_CHANNELS in
     * plugin-shim/include/nccl_tuner_abi.h, and AbiLayoutTest checks that the two agree.
     */
    public static final int MAX_CHANNELS = 64;

    /** Largest chunkSize a candidate may name, bytes: NCCL holds the chunk size in an int (src/enqueue.cc). */
    public static final long MAX_CHUNK_SIZE = Integer.MAX_VALUE;

    /**
     * Most distinct chunkSizes one profile's candidates may name: the decision table packs a
     * candidate's chunk size as an 8-bit index into the profile's chunk sizes (docs/policy-format.md,
     * "sha256"; engine/DecisionTable).
     */
    public static final int MAX_CHUNK_SIZES = 255;

    /** Problems listed in full; further ones are only counted (a file of N copies of one rule has
     * N^2/2 overlapping pairs). */
    public static final int MAX_PROBLEMS = 100;

    private final String file;
    private final List<String> problems = new ArrayList<>();
    private long unlisted;

    private PolicyLoader(String file) {
        this.file = file;
    }

    /**
     * Loads and validates a policy file.
     *
     * @param path a YAML file of at most {@link #MAX_FILE_BYTES} bytes
     * @return the validated policy, with {@link Policy#source()} set to {@code path}
     * @throws PolicyException if the file is missing, unreadable, too large, not UTF-8 ({@code
     *     file:line:column: not UTF-8 ...}), malformed or invalid; the message names file:line:column and
     *     the field
     */
    public static Policy load(Path path) throws PolicyException {
        String name = path.toString();
        if (Files.exists(path) && !Files.isRegularFile(path)) {
            throw new PolicyException(
                    name + ": not a regular file (a directory, FIFO or device); a policy is a YAML file");
        }
        long size;
        try {
            size = Files.size(path);
        } catch (IOException e) {
            throw new PolicyException(name + ": cannot read policy: " + describe(e));
        }
        if (size > MAX_FILE_BYTES) {
            throw new PolicyException(name + ": policy is " + size + " bytes, over the limit of " + MAX_FILE_BYTES
                    + " bytes; split it or drop unused rules");
        }
        String text;
        try {
            text = PolicyText.read(path, MAX_FILE_BYTES); // strict UTF-8: a stray byte is named by line
        } catch (InputException e) {
            throw new PolicyException(e.getMessage());
        } catch (IOException e) {
            throw new PolicyException(name + ": cannot read policy: " + describe(e));
        }
        return new PolicyLoader(name).load(new StringReader(text), path);
    }

    /**
     * Loads a policy from text, for tests and tools.
     *
     * @param name the name used in messages in place of a file name
     * @param yaml the policy text
     * @return the validated policy, with no source path
     * @throws PolicyException as {@link #load(Path)}
     */
    public static Policy parse(String name, String yaml) throws PolicyException {
        if (yaml.length() > MAX_FILE_BYTES) {
            throw new PolicyException(name + ": policy is over the limit of " + MAX_FILE_BYTES + " bytes");
        }
        return new PolicyLoader(name).load(new StringReader(yaml), null);
    }

    private static String describe(IOException e) {
        return e instanceof java.nio.file.NoSuchFileException
                ? "no such file"
                : e.getClass().getSimpleName() + (e.getMessage() == null ? "" : ": " + e.getMessage());
    }

    private Policy load(Reader r, Path source) throws PolicyException {
        Node root;
        try {
            root = YamlTree.parse(r);
        } catch (YamlTree.ParseError e) {
            throw new PolicyException(
                    PolicyProblem.at(file, e.line, e.column, e.getMessage()).format());
        }
        if (root == null) {
            throw new PolicyException(PolicyProblem.at(file, 1, 1, "the policy is empty")
                    .detail("it needs at least 'schema: " + Policy.SCHEMA + "', 'name' and 'profiles'")
                    .format());
        }
        Policy p = bindPolicy(root, source);
        if (!problems.isEmpty()) {
            if (unlisted > 0) {
                problems.add(
                        file + ": " + unlisted + " more problems not listed (only the first " + MAX_PROBLEMS + " are)");
            }
            throw new PolicyException(problems);
        }
        return p;
    }

    // ---- binding ------------------------------------------------------------------------------

    private void problem(Node at, String path, String message) {
        add(PolicyProblem.at(file, at.line(), at.column(), message).path(path));
    }

    /**
     * A required enum-valued field (collective, algorithm, protocol): its value, or null after a
     * problem (missing, not a string, or a name that is none of the values: then the closest one, or
     * the list).
     */
    private <E extends Enum<E>> E requireName(
            MapNode m, Node n, String field, String path, java.util.function.Function<String, E> parse, E[] values) {
        String written = requireString(m, n, field, path);
        if (written == null) {
            return null;
        }
        E v = parse.apply(written);
        if (v == null) {
            unknownName(get(m, field), path, field, written, values);
        }
        return v;
    }

    private <E extends Enum<E>> void unknownName(Node at, String path, String field, String written, E[] values) {
        add(PolicyProblem.at(file, at.line(), at.column(), "unknown " + field + " '" + written + "'")
                .path(path + "." + field)
                .suggest(EnumNames.suggest(values, written), false)
                .allowed(java.util.Arrays.stream(values).map(Enum::name).toList(), "use "));
    }

    private void add(PolicyProblem problem) {
        add(problem.format());
    }

    private void add(String problem) {
        if (problems.size() < MAX_PROBLEMS) {
            problems.add(problem);
        } else {
            unlisted++;
        }
    }

    private MapNode map(Node n, String path, Set<String> allowed) {
        if (!(n instanceof MapNode m)) {
            problem(n, path, "expected a mapping (key: value), found " + kind(n));
            return null;
        }
        for (Entry e : m.entries().values()) {
            if (e.key().equals("<<")) { // YAML 1.1's merge key: refused as such, not as a mistyped field
                add(PolicyProblem.at(
                                file,
                                e.keyLine(),
                                e.keyColumn(),
                                "YAML merge keys (<<) are not allowed in a policy; write the fields out")
                        .path(path));
            } else if (!allowed.contains(e.key())) {
                add(PolicyProblem.at(file, e.keyLine(), e.keyColumn(), "unknown field '" + e.key() + "'")
                        .path(path)
                        .suggest(EnumNames.suggest(allowed, e.key()), true)
                        .allowed(List.copyOf(allowed), "allowed: "));
            }
        }
        return m;
    }

    private static String kind(Node n) {
        if (n instanceof MapNode) {
            return "a mapping";
        }
        if (n instanceof ListNode) {
            return "a list";
        }
        Scalar s = (Scalar) n;
        return s.isNull() ? "nothing" : "'" + s.text() + "'";
    }

    private static Node get(MapNode m, String key) {
        if (m == null) {
            return null;
        }
        Entry e = m.entries().get(key);
        return e == null || (e.value() instanceof Scalar s && s.isNull()) ? null : e.value();
    }

    private String requireString(MapNode m, Node parent, String key, String path) {
        Node n = get(m, key);
        if (n == null) {
            if (m != null) {
                problem(parent, path, "missing required field '" + key + "'");
            }
            return null;
        }
        return string(n, path.isEmpty() ? key : path + "." + key);
    }

    private String string(Node n, String path) {
        if (n instanceof Scalar s && s.type() == Type.STRING) {
            if (s.text().chars().anyMatch(c -> Character.isISOControl(c) && c != '\n' && c != '\t')) {
                problem(n, path, "control characters are not allowed here (they would garble the log lines)");
                return null;
            }
            return s.text();
        }
        problem(n, path, "expected text, found " + kind(n));
        return null;
    }

    private Long integer(Node n, String path, long min, long max) {
        if (n instanceof Scalar s && s.type() == Type.INT) {
            try {
                long v = Long.parseLong(s.text());
                if (v >= min && v <= max) {
                    return v;
                }
            } catch (NumberFormatException ignored) {
                // fall through to the range message
            }
            problem(n, path, s.text() + " is outside " + min + ".." + max);
            return null;
        }
        problem(n, path, "expected an integer, found " + kind(n));
        return null;
    }

    private double regret(Node n, String path) {
        if (n == null) {
            return Double.NaN;
        }
        if (n instanceof Scalar s && (s.type() == Type.INT || s.type() == Type.FLOAT)) {
            double v;
            try {
                v = Double.parseDouble(s.text());
            } catch (NumberFormatException e) {
                v = Double.NaN; // YAML's .nan and .inf spellings
            }
            if (Double.isFinite(v) && v >= 0 && v <= 1e6) {
                return v;
            }
            problem(n, path, s.text() + " is not a regret; write a fraction >= 0 (0.21 = 21% slower than the best)");
            return Double.NaN;
        }
        problem(n, path, "expected a number (0.21 = 21% slower than the best), found " + kind(n));
        return Double.NaN;
    }

    private Policy bindPolicy(Node root, Path source) {
        MapNode m = map(root, "", Set.of("schema", "name", "mode", "description", "profiles"));
        if (m == null) {
            return null;
        }
        String schema = requireString(m, root, "schema", "");
        if (schema != null && !schema.equals(Policy.SCHEMA)) {
            problem(
                    get(m, "schema"),
                    "schema",
                    "unknown schema version '" + schema + "'; this release reads '" + Policy.SCHEMA + "'");
        }
        String name = requireString(m, root, "name", "");
        Mode mode = Mode.ENFORCE;
        Node modeNode = get(m, "mode");
        if (modeNode != null) {
            // YAML 1.1 (SnakeYAML) reads a plain `off` as the boolean false; here it is the mode.
            String s = modeNode instanceof Scalar sc
                            && sc.type() == Type.FALSE
                            && sc.text().equalsIgnoreCase("off")
                    ? "off"
                    : string(modeNode, "mode");
            if (s != null) {
                mode = Mode.parse(s);
                if (mode == null) {
                    add(PolicyProblem.at(file, modeNode.line(), modeNode.column(), "unknown mode '" + s + "'")
                            .path("mode")
                            .allowed(List.of("enforce", "shadow", "off", "canary"), "use "));
                }
            }
        }
        Node descNode = get(m, "description");
        String description = descNode == null ? "" : string(descNode, "description");
        List<Profile> profiles = new ArrayList<>();
        Node profilesNode = get(m, "profiles");
        if (profilesNode == null) {
            problem(root, "", "missing required field 'profiles' (a list of at least one profile)");
        } else if (!(profilesNode instanceof ListNode list) || list.items().isEmpty()) {
            problem(profilesNode, "profiles", "expected a list of at least one profile, found " + kind(profilesNode));
        } else {
            Set<String> names = new HashSet<>();
            for (int i = 0; i < list.items().size(); i++) {
                Node pn = list.items().get(i);
                Profile p = bindProfile(pn, "profiles[" + i + "]");
                if (p != null) {
                    if (!names.add(p.name())) {
                        problem(pn, "profiles[" + i + "].name", "duplicate profile name '" + p.name() + "'");
                    }
                    profiles.add(p);
                }
            }
        }
        if (!problems.isEmpty()) {
            return null;
        }
        return new Policy(name, mode == null ? Mode.ENFORCE : mode, description, profiles, source);
    }

    private Profile bindProfile(Node n, String path) {
        MapNode m = map(n, path, Set.of("name", "match", "rules", "constants"));
        if (m == null) {
            return null;
        }
        String name = requireString(m, n, "name", path);
        Range nRanks = Range.ANY;
        Range nNodes = Range.ANY;
        HardwareMatch hardware = HardwareMatch.ANY;
        Node match = get(m, "match");
        if (match != null) {
            MapNode mm = map(
                    match,
                    path + ".match",
                    Set.of("nRanks", "nNodes", "nvlDomain", "ncclVersion", "gpu", "computeCapability"));
            if (mm != null) {
                Node r = get(mm, "nRanks");
                Node d = get(mm, "nNodes");
                nRanks = r == null ? Range.ANY : range(r, path + ".match.nRanks", 1);
                nNodes = d == null ? Range.ANY : range(d, path + ".match.nNodes", 1);
                hardware = bindHardware(mm, path + ".match");
            }
        }
        List<TunerConstant> constants = bindConstants(get(m, "constants"), path + ".constants");
        List<Rule> rules = new ArrayList<>();
        List<Node> ruleNodes = new ArrayList<>();
        Node rulesNode = get(m, "rules");
        if (rulesNode != null) {
            if (!(rulesNode instanceof ListNode list)) {
                problem(rulesNode, path + ".rules", "expected a list of rules, found " + kind(rulesNode));
            } else {
                for (int i = 0; i < list.items().size(); i++) {
                    Rule rule = bindRule(list.items().get(i), path + ".rules[" + i + "]");
                    if (rule != null) {
                        rules.add(rule);
                        ruleNodes.add(list.items().get(i));
                    }
                }
            }
        }
        checkOverlaps(rules, ruleNodes, path);
        checkChunkSizes(rules, ruleNodes, path);
        return name == null || nRanks == null || nNodes == null || hardware == null
                ? null
                : new Profile(name, nRanks, nNodes, rules, hardware, constants);
    }

    /** The hardware fields of a profile's match (docs/policy-format.md); null after a problem. */
    private HardwareMatch bindHardware(MapNode mm, String path) {
        boolean ok = true;
        Range nvl = null;
        Range minR = null;
        Range maxR = null;
        Node nd = get(mm, "nvlDomain");
        if (nd != null) {
            MapNode dm =
                    map(nd, path + ".nvlDomain", Set.of("nNvlDomains", "minRanksPerNvlDomain", "maxRanksPerNvlDomain"));
            if (dm == null) {
                return null;
            }
            Node a = get(dm, "nNvlDomains");
            Node b = get(dm, "minRanksPerNvlDomain");
            Node c = get(dm, "maxRanksPerNvlDomain");
            nvl = a == null ? null : range(a, path + ".nvlDomain.nNvlDomains", 1);
            minR = b == null ? null : range(b, path + ".nvlDomain.minRanksPerNvlDomain", 1);
            maxR = c == null ? null : range(c, path + ".nvlDomain.maxRanksPerNvlDomain", 1);
            ok = (a == null || nvl != null) && (b == null || minR != null) && (c == null || maxR != null);
        }
        Range version = null;
        Node vn = get(mm, "ncclVersion");
        if (vn != null) {
            version = dottedRange(vn, path + ".ncclVersion", false);
            ok &= version != null;
        }
        String gpu = null;
        Node gn = get(mm, "gpu");
        if (gn != null) {
            gpu = string(gn, path + ".gpu");
            ok &= gpu != null;
        }
        Range cc = null;
        Node cn = get(mm, "computeCapability");
        if (cn != null) {
            cc = dottedRange(cn, path + ".computeCapability", true);
            ok &= cc != null;
        }
        return ok ? new HardwareMatch(nvl, minR, maxR, version, gpu, cc) : null;
    }

    /** "2.28.9" or {min: "2.28.3", max: "2.30.7"} (versions), "9.0" or {min: "9.0", max: "10.0"}
     * (compute capabilities, as major * 10 + minor); YAML may read "9.0" as a number. */
    private Range dottedRange(Node n, String path, boolean computeCapability) {
        if (n instanceof MapNode) {
            MapNode m = map(n, path, Set.of("min", "max"));
            Node lo = get(m, "min");
            Node hi = get(m, "max");
            Long min = lo == null ? Long.valueOf(0) : dotted(lo, path + ".min", computeCapability);
            Long max = hi == null ? Long.valueOf(Long.MAX_VALUE) : dotted(hi, path + ".max", computeCapability);
            if (min == null || max == null) {
                return null;
            }
            if (min > max) {
                problem(n, path, "min is above max");
                return null;
            }
            return new Range(min, max);
        }
        Long v = dotted(n, path, computeCapability);
        return v == null ? null : Range.exactly(v);
    }

    private Long dotted(Node n, String path, boolean computeCapability) {
        if (!(n instanceof Scalar s) || s.isNull()) {
            problem(
                    n,
                    path,
                    "expected "
                            + (computeCapability
                                    ? "a compute capability such as \"9.0\""
                                    : "an NCCL version such as \"2.28.9\"")
                            + ", found " + kind(n));
            return null;
        }
        String t = s.text().trim();
        if (computeCapability) {
            String[] p = t.split("\\.");
            try {
                if (p.length == 2 && p[1].length() == 1) {
                    long major = Long.parseLong(p[0]);
                    long minor = Long.parseLong(p[1]);
                    if (major >= 1 && major <= 99) {
                        return major * 10 + minor;
                    }
                }
            } catch (NumberFormatException ignored) {
                // fall through
            }
            problem(n, path, "'" + t + "' is not a compute capability MAJOR.MINOR such as 9.0 or 10.0");
            return null;
        }
        try {
            return Signature.parseVersion(t);
        } catch (IllegalArgumentException e) {
            problem(n, path, e.getMessage());
            return null;
        }
    }

    /** A profile's constants: a mapping of names (TunerConstant) to microseconds or GB/s. */
    private List<TunerConstant> bindConstants(Node n, String path) {
        List<TunerConstant> out = new ArrayList<>();
        if (n == null) {
            return out;
        }
        if (!(n instanceof MapNode m)) {
            problem(
                    n,
                    path,
                    "expected a mapping of constant names to values (baseLatencies.RING.LL: 7.5), found " + kind(n));
            return out;
        }
        for (Entry e : m.entries().values()) {
            String at = path + "." + e.key();
            if (!(e.value() instanceof Scalar s) || (s.type() != Type.INT && s.type() != Type.FLOAT)) {
                problem(
                        e.value(),
                        at,
                        "expected a number (microseconds for latencies, GB/s for bandwidths), found "
                                + kind(e.value()));
                continue;
            }
            try {
                out.add(TunerConstant.parse(e.key(), Double.parseDouble(s.text())));
            } catch (IllegalArgumentException ex) {
                problem(e.value(), at, ex.getMessage());
            }
        }
        return out;
    }

    private Range range(Node n, String path, long floor) {
        if (n instanceof Scalar s && s.type() == Type.STRING && s.text().equalsIgnoreCase("any")) {
            return Range.ANY;
        }
        if (n instanceof Scalar s && s.type() == Type.INT) {
            Long v = integer(n, path, floor, Integer.MAX_VALUE);
            return v == null ? null : Range.exactly(v);
        }
        if (n instanceof MapNode) {
            MapNode m = map(n, path, Set.of("min", "max"));
            Node lo = get(m, "min");
            Node hi = get(m, "max");
            Long min = lo == null ? Long.valueOf(floor) : integer(lo, path + ".min", floor, Integer.MAX_VALUE);
            Long max = hi == null ? Long.valueOf(Long.MAX_VALUE) : integer(hi, path + ".max", floor, Integer.MAX_VALUE);
            if (min == null || max == null) {
                return null;
            }
            if (min > max) {
                problem(n, path, "min " + min + " is above max " + max);
                return null;
            }
            return floor == 0 && min == 0 && max == Long.MAX_VALUE ? Range.ANY : new Range(min, max);
        }
        problem(n, path, "expected an integer, {min: a, max: b} or any, found " + kind(n));
        return null;
    }

    private Rule bindRule(Node n, String path) {
        MapNode m = map(
                n,
                path,
                Set.of("collective", "bytes", "numPipeOps", "regBuff", "ncclPick", "ncclRegret", "candidates"));
        if (m == null) {
            return null;
        }
        Collective coll = requireName(m, n, "collective", path, Collective::parse, Collective.values());
        long from = 0;
        long to = -1L;
        boolean bytesOk = true;
        Node bytesNode = get(m, "bytes");
        if (bytesNode == null) {
            problem(n, path, "missing required field 'bytes' ({from: 4 KiB, to: 1 MiB}, to exclusive)");
            bytesOk = false;
        } else {
            MapNode bm = map(bytesNode, path + ".bytes", Set.of("from", "to"));
            if (bm == null) {
                bytesOk = false;
            } else {
                Node f = get(bm, "from");
                Node t = get(bm, "to");
                Long fv = f == null ? Long.valueOf(0) : size(f, path + ".bytes.from");
                Long tv = t == null ? Long.valueOf(-1L) : size(t, path + ".bytes.to");
                if (fv == null || tv == null) {
                    bytesOk = false;
                } else {
                    from = fv;
                    to = tv;
                    if (to != -1L && Long.compareUnsigned(from, to) >= 0) {
                        problem(
                                bytesNode,
                                path + ".bytes",
                                "from " + ByteSize.format(from) + " is not below to " + ByteSize.format(to)
                                        + "; the range is half-open [from, to)");
                        bytesOk = false;
                    }
                }
            }
        }
        Range pipe = Range.ANY;
        Node pn = get(m, "numPipeOps");
        if (pn != null) {
            pipe = range(pn, path + ".numPipeOps", 0);
        }
        Boolean regBuff = null;
        boolean regBuffOk = true;
        Node rb = get(m, "regBuff");
        if (rb != null) {
            if (rb instanceof Scalar s && (s.type() == Type.TRUE || s.type() == Type.FALSE)) {
                regBuff = s.type() == Type.TRUE;
            } else if (!(rb instanceof Scalar s
                    && s.type() == Type.STRING
                    && s.text().equalsIgnoreCase("any"))) {
                problem(rb, path + ".regBuff", "expected true, false or any, found " + kind(rb));
                regBuffOk = false;
            }
        }
        Candidate ncclPick = null;
        Node np = get(m, "ncclPick");
        if (np != null) {
            ncclPick = bindCandidate(np, path + ".ncclPick", false);
        }
        double ncclRegret = regret(get(m, "ncclRegret"), path + ".ncclRegret");
        List<Candidate> cands = new ArrayList<>();
        Node cn = get(m, "candidates");
        if (cn == null) {
            problem(n, path, "missing required field 'candidates' (1 to " + MAX_CANDIDATES + ", best first)");
        } else if (!(cn instanceof ListNode list)
                || list.items().isEmpty()
                || list.items().size() > MAX_CANDIDATES) {
            problem(
                    cn,
                    path + ".candidates",
                    "expected a list of 1 to " + MAX_CANDIDATES + " candidates, found "
                            + (cn instanceof ListNode l ? l.items().size() + " candidates" : kind(cn)));
        } else {
            Set<String> seen = new HashSet<>();
            for (int i = 0; i < list.items().size(); i++) {
                Candidate c = bindCandidate(list.items().get(i), path + ".candidates[" + i + "]", true);
                if (c != null) {
                    if (!seen.add(c.algorithm() + "/" + c.protocol() + "/" + c.channels())) {
                        problem(
                                list.items().get(i),
                                path + ".candidates[" + i + "]",
                                "candidate " + c.algorithm() + "/" + c.protocol() + " is listed twice");
                    }
                    cands.add(c);
                }
            }
        }
        if (coll == null || !bytesOk || pipe == null || cands.isEmpty() || !regBuffOk) {
            return null;
        }
        return new Rule(coll, from, to, pipe, ncclPick, ncclRegret, cands, regBuff);
    }

    /**
     * A byte count written as a whole number or with an IEC unit ({@link ByteSize}); null after a
     * problem (not a number or size, or above 2^63 - 1, reported as {@code tooLarge}).
     */
    private Long byteCount(Node n, String path, String example, String tooLarge) {
        if (n instanceof Scalar s && s.type() == Type.INT) {
            try {
                return Long.parseLong(s.text());
            } catch (NumberFormatException e) {
                problem(n, path, tooLarge);
                return null;
            }
        }
        if (n instanceof Scalar s && s.type() == Type.STRING) {
            try {
                return ByteSize.parse(s.text());
            } catch (IllegalArgumentException e) {
                problem(n, path, e.getMessage());
                return null;
            }
        }
        problem(n, path, "expected a size " + example + ", found " + kind(n));
        return null;
    }

    private Long size(Node n, String path) {
        Long parsed = byteCount(
                n,
                path,
                "such as 4096 or \"4 KiB\"",
                (n instanceof Scalar s ? s.text() : "") + " is too large; sizes are below 2^63 bytes");
        if (parsed == null) {
            return null;
        }
        long v = parsed;
        if (v < 0) {
            problem(n, path, "a size cannot be negative");
            return null;
        }
        if (!SizeGrid.isGridPoint(v)) {
            long lo = SizeGrid.floorGridPoint(v);
            long hi = SizeGrid.ceilGridPoint(v);
            problem(
                    n,
                    path,
                    ByteSize.withBytes(ByteSize.format(v), v)
                            + " is not on the size grid (4 points per power of two); nearest grid points are "
                            + ByteSize.format(lo) + " and " + ByteSize.format(hi));
            return null;
        }
        return v;
    }

    private Candidate bindCandidate(Node n, String path, boolean full) {
        MapNode m = map(
                n,
                path,
                full
                        ? Set.of("algorithm", "protocol", "channels", "regret", "chunkSize")
                        : Set.of("algorithm", "protocol", "channels"));
        if (m == null) {
            return null;
        }
        Algorithm a = requireName(m, n, "algorithm", path, Algorithm::parse, Algorithm.values());
        Protocol p = requireName(m, n, "protocol", path, Protocol::parse, Protocol.values());
        int channels = 0;
        Node chn = get(m, "channels");
        if (chn != null) {
            Long c = integer(chn, path + ".channels", 1, MAX_CHANNELS);
            if (c == null) {
                return null;
            }
            channels = c.intValue();
        }
        double regret = full ? regret(get(m, "regret"), path + ".regret") : Double.NaN;
        long chunkSize = 0;
        Node csn = get(m, "chunkSize");
        if (csn != null) {
            Long c = chunkSize(csn, path + ".chunkSize");
            if (c == null) {
                return null;
            }
            chunkSize = c;
        }
        return a == null || p == null ? null : new Candidate(a, p, channels, regret, chunkSize);
    }

    /** A candidate's chunkSize: bytes (4096 or "512 KiB"), 1 .. MAX_CHUNK_SIZE; NCCL keeps it in an int. */
    private Long chunkSize(Node n, String path) {
        String range = "chunkSize must be 1 .. " + MAX_CHUNK_SIZE + " bytes";
        Long parsed = byteCount(n, path, "in bytes such as 524288 or \"512 KiB\"", range);
        if (parsed == null) {
            return null;
        }
        long v = parsed;
        if (v < 1 || v > MAX_CHUNK_SIZE) {
            problem(n, path, range);
            return null;
        }
        return v;
    }

    // ---- validation ---------------------------------------------------------------------------

    /**
     * At most {@link #MAX_CHUNK_SIZES} distinct chunkSizes in one profile; the rule that names the
     * first one past it is the one reported (the loader let 256 through and every init then failed
     * with an internal error, changing nothing: found by the docs oracle, 2026-12-04).
     */
    private void checkChunkSizes(List<Rule> rules, List<Node> nodes, String path) {
        java.util.Set<Long> seen = new java.util.HashSet<>();
        for (int i = 0; i < rules.size(); i++) {
            List<Candidate> cands = rules.get(i).candidates();
            for (int k = 0; k < cands.size(); k++) {
                long c = cands.get(k).chunkSize();
                if (c != 0 && seen.add(c) && seen.size() == MAX_CHUNK_SIZES + 1) {
                    problem(
                            nodes.get(i),
                            path + ".rules[" + i + "].candidates[" + k + "].chunkSize",
                            "the profile names more than " + MAX_CHUNK_SIZES + " distinct chunk sizes ("
                                    + ByteSize.format(c) + " is one more); name fewer");
                    return;
                }
            }
        }
    }

    private void checkOverlaps(List<Rule> rules, List<Node> nodes, String path) {
        Integer[] order = new Integer[rules.size()];
        for (int i = 0; i < order.length; i++) {
            order[i] = i;
        }
        Arrays.sort(
                order,
                Comparator.<Integer>comparingInt(i -> rules.get(i).collective().ordinal())
                        .thenComparing(i -> rules.get(i).fromBytes(), Long::compareUnsigned));
        // In a valid profile at most MAX_RULES_PER_BUCKET * BUCKETS rules start inside one rule's byte
        // range, so the scan stops there (the per-bucket check below refuses anything denser); without
        // the bound, N rules with disjoint numPipeOps and no upper byte bound cost N^2/2 comparisons.
        for (int a = 0; a < order.length && problems.size() < MAX_PROBLEMS; a++) {
            Rule ra = rules.get(order[a]);
            for (int b = a + 1; b < order.length && b - a <= MAX_RULES_PER_BUCKET * SizeGrid.BUCKETS; b++) {
                Rule rb = rules.get(order[b]);
                if (rb.collective() != ra.collective()
                        || (ra.toBytes() != -1L && Long.compareUnsigned(rb.fromBytes(), ra.toBytes()) >= 0)) {
                    break;
                }
                if (ra.numPipeOps().intersects(rb.numPipeOps())
                        && (ra.regBuff() == null
                                || rb.regBuff() == null
                                || ra.regBuff().equals(rb.regBuff()))) {
                    int first = Math.min(order[a], order[b]);
                    int second = Math.max(order[a], order[b]);
                    problem(
                            nodes.get(second),
                            path + ".rules[" + second + "]",
                            "overlaps rules[" + first + "] (line "
                                    + nodes.get(first).line() + "): both cover " + ra.collective() + " at "
                                    + ByteSize.format(rb.fromBytes())
                                    + " with numPipeOps " + ra.numPipeOps() + " / " + rb.numPipeOps()
                                    + "; make the byte or numPipeOps ranges disjoint");
                }
            }
        }
        // At most MAX_RULES_PER_BUCKET rules (told apart by numPipeOps) may share a size bucket, counted
        // for unregistered and registered buffers apart (a regBuff: any rule counts for both).
        int[][][] perBucket = new int[2][Collective.COUNT][SizeGrid.BUCKETS];
        for (int i = 0; i < rules.size(); i++) {
            Rule r = rules.get(i);
            int lo = SizeGrid.bucket(r.fromBytes());
            int hi = SizeGrid.endBucket(r.toBytes());
            for (int bkt = lo; bkt < hi; bkt++) {
                int worst = 0;
                for (int reg = 0; reg < 2; reg++) {
                    if (r.regBuff() == null || r.regBuff() == (reg == 1)) {
                        worst = Math.max(worst, ++perBucket[reg][r.collective().ordinal()][bkt]);
                    }
                }
                if (worst == MAX_RULES_PER_BUCKET + 1) {
                    problem(
                            nodes.get(i),
                            path + ".rules[" + i + "]",
                            "more than " + MAX_RULES_PER_BUCKET
                                    + " rules cover " + r.collective() + " at "
                                    + ByteSize.format(SizeGrid.lowerBound(bkt))
                                    + "; merge numPipeOps ranges");
                }
            }
        }
    }
}
