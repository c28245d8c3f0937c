package io.nccltuner.it;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The randomized oracle: random policies and random calls through the built plugin
 * (build/lib/libnccl-tuner-java.so, loaded by tests/oracle/oracle_host.c as ncclTunerPlugin_v3..v6),
 * every table entry, nChannels and chunk size compared with a model of the policy semantics
 * written from docs/policy-format.md alone (and NCCL's ABI header). It uses no class of the
 * runtime: the policy is generated as YAML text and modelled here, the expectation computed here.
 *
 * <p>Seeded and reproducible: {@code -Dnccltj.oracle.seed=S -Dnccltj.oracle.policies=N
 * -Dnccltj.oracle.calls=C}. A disagreement is written (policy, script, plugin output) under
 * target/oracle-failures/ and the test fails naming the policy, the call and both answers.
 */
@Timeout(600)
class OracleIT {
    static final long SEED = Long.getLong("nccltj.oracle.seed", 20261201L);
    static final int POLICIES = Integer.getInteger("nccltj.oracle.policies", 200);
    static final int CALLS = Integer.getInteger("nccltj.oracle.calls", 200);
    /** NaN entries in the cost tables (a NaN entry is not offered: the doc's ">= 0"). */
    static final boolean NAN = Boolean.parseBoolean(System.getProperty("nccltj.oracle.nan", "true"));

    static final Path HOST = Harness.BUILD.resolve("tests/oracle-host");

    static final String[] COLLS = {"Broadcast", "Reduce", "AllGather", "ReduceScatter", "AllReduce"};
    static final String[] ALGOS = {"TREE", "RING", "COLLNET_DIRECT", "COLLNET_CHAIN", "NVLS", "NVLS_TREE", "PAT"};
    static final String[] PROTOS = {"LL", "LL128", "SIMPLE"};
    static final int[] NCCL_VERSIONS = {0, 22203, 22403, 22809, 23007, 23206};

    @TempDir
    static Path tmp;

    @BeforeAll
    static void built() {
        Harness.requireBuilt();
        assertTrue(Files.isExecutable(HOST), HOST + " is built by `make build`");
    }

    // ---- the size grid (docs/policy-format.md "Sizes") --------------------------------------

    static final List<Long> GRID = new ArrayList<>();

    static {
        for (long b = 0; b < 8; b++) {
            GRID.add(b);
        }
        for (int e = 3; e <= 36; e++) {
            long p = 1L << e;
            GRID.add(p);
            GRID.add(p + p / 4);
            GRID.add(p + p / 2);
            GRID.add(p + 3 * p / 4);
        }
    }

    // ---- the model ----------------------------------------------------------------------------

    /** An inclusive range; null bound = open. {@code null} Range = omitted or any (matches all). */
    record Range(Long min, Long max) {
        boolean has(long v) {
            return (min == null || v >= min) && (max == null || v <= max);
        }

        boolean meets(Range o) {
            long lo = Math.max(min == null ? Long.MIN_VALUE : min, o.min == null ? Long.MIN_VALUE : o.min);
            long hi = Math.min(max == null ? Long.MAX_VALUE : max, o.max == null ? Long.MAX_VALUE : o.max);
            return lo <= hi;
        }
    }

    record Candidate(int algo, int proto, Integer channels, Long chunkSize) {}

    /** regBuff: null = any (or omitted), else true/false. to == null: no upper bound. */
    record Rule(int coll, long from, Long to, Range pipe, Boolean regBuff, List<Candidate> cands) {
        boolean covers(long nBytes) {
            return nBytes >= from && (to == null || nBytes < to);
        }
    }

    /** nvl: null = not named; else the three fields (each null = not named). version: null = not named. */
    record Profile(String name, Range nRanks, Range nNodes, Range[] nvl, Range version, String gpu, List<Rule> rules) {}

    record Policy(String mode, List<Profile> profiles) {}

    record Comm(long nRanks, long nNodes, int nvlN, int nvlMin, int nvlMax) {}

    /** The doc's profile choice at init. */
    static Profile pick(Policy pol, Comm c, int version, int ncclVersion) {
        for (Profile p : pol.profiles()) {
            if (p.nRanks() != null && !p.nRanks().has(c.nRanks())) {
                continue;
            }
            if (p.nNodes() != null && !p.nNodes().has(c.nNodes())) {
                continue;
            }
            if (p.nvl() != null) {
                if (version < 5) {
                    continue; // unknown before tuner v5: never matches a profile naming it
                }
                int[] got = {c.nvlN(), c.nvlMin(), c.nvlMax()};
                boolean ok = true;
                for (int i = 0; i < 3; i++) {
                    ok &= p.nvl()[i] == null || p.nvl()[i].has(got[i]);
                }
                if (!ok) {
                    continue;
                }
            }
            if (p.version() != null && (ncclVersion <= 0 || !p.version().has(ncclVersion))) {
                continue;
            }
            if (p.gpu() != null) {
                continue; // no CUDA driver in the host: the GPU is unknown
            }
            return p;
        }
        return null;
    }

    /** The rule for a call, or null; regBuff -1 = unknown (v3). */
    static Rule rule(Profile p, int coll, long nBytes, int pipe, int regBuff) {
        Rule found = null;
        for (Rule r : p.rules()) {
            if (r.coll() != coll
                    || !r.covers(nBytes)
                    || (r.pipe() != null && !r.pipe().has(pipe))) {
                continue;
            }
            if (r.regBuff() != null && (regBuff < 0 || r.regBuff() != (regBuff == 1))) {
                continue;
            }
            if (found != null) {
                throw new AssertionError("generator made overlapping rules: " + found + " and " + r);
            }
            found = r;
        }
        return found;
    }

    static long chunk(Profile p, int coll, long nBytes, int algo, int proto, long dflt) {
        for (Rule r : p.rules()) {
            if (r.coll() != coll || !r.covers(nBytes)) {
                continue;
            }
            for (Candidate c : r.cands()) {
                if (c.algo() == algo && c.proto() == proto && c.chunkSize() != null) {
                    return c.chunkSize();
                }
            }
        }
        return dflt;
    }

    /** NCCL's strict minimum over entries >= 0, algorithm-major, first wins; -1 for none. */
    static int ncclPick(float[] t) {
        int pick = -1;
        double min = 3600000000.0;
        for (int i = 0; i < t.length; i++) {
            if (t[i] >= 0 && t[i] < min) {
                min = t[i];
                pick = i;
            }
        }
        return pick;
    }

    // ---- the generator ------------------------------------------------------------------------

    static Range rangeAround(Random rnd, long v, long maxV) {
        switch (rnd.nextInt(5)) {
            case 0:
                return new Range(v, v);
            case 1:
                return new Range(Math.max(1, v - rnd.nextInt(3)), rnd.nextBoolean() ? null : v + rnd.nextInt(4));
            case 2:
                return new Range(null, Math.max(1, v + rnd.nextInt(3) - 1)); // counts are >= 1
            case 3: {
                long a = 1 + rnd.nextInt((int) maxV);
                long b = a + rnd.nextInt((int) maxV);
                return new Range(a, b);
            }
            default:
                return new Range(v + 1, null); // misses v
        }
    }

    static Range pipeRange(Random rnd) {
        switch (rnd.nextInt(4)) {
            case 0:
                return new Range(1L, 1L);
            case 1:
                return new Range(2L, null);
            case 2:
                return new Range(null, 2L);
            default: {
                long a = 1 + rnd.nextInt(4);
                return new Range(a, a + rnd.nextInt(3));
            }
        }
    }

    static List<Candidate> candidates(Random rnd) {
        int n = 1 + rnd.nextInt(4);
        List<Integer> pairs = new ArrayList<>();
        for (int i = 0; i < ALGOS.length * PROTOS.length; i++) {
            pairs.add(i);
        }
        Collections.shuffle(pairs, rnd);
        List<Candidate> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            int pr = pairs.get(i);
            Integer ch = rnd.nextInt(3) == 0 ? null : 1 + rnd.nextInt(64);
            Long chunk = null;
            switch (rnd.nextInt(4)) {
                case 0 -> chunk = 1L + rnd.nextInt(1 << 20);
                case 1 -> chunk = (1L << (10 + rnd.nextInt(12)));
                case 2 -> chunk = rnd.nextBoolean() ? Integer.MAX_VALUE : 1L;
                default -> {}
            }
            out.add(new Candidate(pr / PROTOS.length, pr % PROTOS.length, ch, chunk));
        }
        return out;
    }

    /** Rules over one collective: disjoint byte segments, each split by regBuff and/or numPipeOps. */
    static void rulesFor(Random rnd, int coll, List<Rule> out) {
        int segs = 1 + rnd.nextInt(3);
        List<Integer> idx = new ArrayList<>();
        while (idx.size() < 2 * segs) {
            int i = rnd.nextInt(GRID.size());
            if (!idx.contains(i)) {
                idx.add(i);
            }
        }
        Collections.sort(idx);
        for (int s = 0; s < segs; s++) {
            long from = GRID.get(idx.get(2 * s));
            Long to = s == segs - 1 && rnd.nextInt(4) == 0 ? null : GRID.get(idx.get(2 * s + 1));
            if (rnd.nextInt(5) == 0) {
                from = 0; // from 0 B: only the first segment may start there
                if (s > 0) {
                    from = GRID.get(idx.get(2 * s));
                }
            }
            switch (rnd.nextInt(5)) {
                case 0, 1 ->
                    out.add(new Rule(
                            coll,
                            from,
                            to,
                            rnd.nextBoolean() ? null : pipeRange(rnd),
                            rnd.nextInt(3) == 0 ? null : rnd.nextBoolean(),
                            candidates(rnd)));
                case 2 -> { // regBuff true / false
                    out.add(new Rule(coll, from, to, rnd.nextBoolean() ? null : pipeRange(rnd), true, candidates(rnd)));
                    out.add(new Rule(
                            coll, from, to, rnd.nextBoolean() ? null : pipeRange(rnd), false, candidates(rnd)));
                }
                case 3 -> { // numPipeOps split
                    long cut = 1 + rnd.nextInt(3);
                    Boolean rb = rnd.nextInt(3) == 0 ? null : rnd.nextBoolean();
                    out.add(new Rule(coll, from, to, new Range(null, cut), rb, candidates(rnd)));
                    out.add(new Rule(
                            coll,
                            from,
                            to,
                            new Range(cut + 1, rnd.nextBoolean() ? null : cut + 3),
                            rb,
                            candidates(rnd)));
                }
                default -> { // regBuff true split by numPipeOps, regBuff false whole
                    out.add(new Rule(coll, from, to, new Range(1L, 1L), true, candidates(rnd)));
                    out.add(new Rule(coll, from, to, new Range(2L, null), true, candidates(rnd)));
                    out.add(new Rule(coll, from, to, null, false, candidates(rnd)));
                }
            }
        }
    }

    static Policy policy(Random rnd, List<Comm> comms) {
        int n = 1 + rnd.nextInt(4);
        List<Profile> profiles = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            Comm c = comms.get(rnd.nextInt(comms.size()));
            Range nr = rnd.nextInt(4) == 0 ? null : rangeAround(rnd, c.nRanks(), 16);
            Range nn = rnd.nextInt(3) == 0 ? null : rangeAround(rnd, c.nNodes(), 8);
            Range[] nvl = null;
            if (rnd.nextInt(5) == 0) {
                nvl = new Range[3];
                nvl[0] = rnd.nextBoolean() ? rangeAround(rnd, c.nvlN(), 4) : null;
                nvl[1] = rnd.nextBoolean() ? rangeAround(rnd, c.nvlMin(), 8) : null;
                nvl[2] = rnd.nextBoolean() || (nvl[0] == null && nvl[1] == null)
                        ? rangeAround(rnd, c.nvlMax(), 8)
                        : null;
            }
            Range ver = null;
            if (rnd.nextInt(6) == 0) {
                int v = NCCL_VERSIONS[1 + rnd.nextInt(NCCL_VERSIONS.length - 1)];
                ver = rnd.nextBoolean()
                        ? new Range((long) v, (long) v)
                        : new Range(
                                rnd.nextBoolean() ? null : (long) v - 200, rnd.nextBoolean() ? null : (long) v + 300);
                if (ver.min() == null && ver.max() == null) {
                    ver = new Range((long) v, null);
                }
            }
            String gpu = rnd.nextInt(12) == 0 ? "H200" : null;
            List<Rule> rules = new ArrayList<>();
            int nColl = rnd.nextInt(6);
            List<Integer> colls = new ArrayList<>(List.of(0, 1, 2, 3, 4));
            Collections.shuffle(colls, rnd);
            for (int k = 0; k < nColl; k++) {
                rulesFor(rnd, colls.get(k), rules);
            }
            Collections.shuffle(rules, rnd); // file order matters only to getChunkSize
            profiles.add(new Profile("p" + i, nr, nn, nvl, ver, gpu, rules));
        }
        int m = rnd.nextInt(10);
        return new Policy(m < 8 ? "enforce" : m == 8 ? "shadow" : "off", profiles);
    }

    // ---- YAML --------------------------------------------------------------------------------

    static String bytes(Random rnd, long v) {
        if (v == 0) {
            return rnd.nextBoolean() ? "0" : "\"0 B\"";
        }
        String[] units = {"KiB", "MiB", "GiB"};
        int u = rnd.nextInt(4);
        if (u > 0) {
            long unit = 1L << (10 * u);
            if (v % (unit / 4) == 0 && v >= unit) {
                long whole = v / unit;
                long quarters = (v % unit) / (unit / 4);
                String frac = quarters == 0 ? "" : quarters == 1 ? ".25" : quarters == 2 ? ".5" : ".75";
                return "\"" + whole + frac + (rnd.nextBoolean() ? " " : "") + units[u - 1] + "\"";
            }
        }
        return rnd.nextInt(3) == 0 ? "\"" + v + " B\"" : Long.toString(v);
    }

    static String range(Random rnd, Range r, boolean version) {
        java.util.function.LongFunction<String> f =
                version ? x -> "\"" + (x / 10000) + "." + (x / 100 % 100) + "." + (x % 100) + "\"" : Long::toString;
        if (r.min() != null && r.min().equals(r.max()) && rnd.nextBoolean()) {
            return f.apply(r.min());
        }
        List<String> parts = new ArrayList<>();
        if (r.min() != null) {
            parts.add("min: " + f.apply(r.min()));
        }
        if (r.max() != null) {
            parts.add("max: " + f.apply(r.max()));
        }
        return "{" + String.join(", ", parts) + "}";
    }

    static String yaml(Random rnd, Policy pol) {
        StringBuilder y = new StringBuilder("schema: nccl-tuner-java/v1\nname: oracle\n");
        if (!pol.mode().equals("enforce") || rnd.nextBoolean()) {
            y.append("mode: ").append(pol.mode()).append('\n');
        }
        y.append("profiles:\n");
        for (Profile p : pol.profiles()) {
            y.append("  - name: ").append(p.name()).append('\n');
            List<String> match = new ArrayList<>();
            if (p.nRanks() != null) {
                match.add("nRanks: " + range(rnd, p.nRanks(), false));
            } else if (rnd.nextBoolean()) {
                match.add("nRanks: any");
            }
            if (p.nNodes() != null) {
                match.add("nNodes: " + range(rnd, p.nNodes(), false));
            } else if (rnd.nextBoolean()) {
                match.add("nNodes: any");
            }
            if (p.nvl() != null) {
                String[] names = {"nNvlDomains", "minRanksPerNvlDomain", "maxRanksPerNvlDomain"};
                List<String> f = new ArrayList<>();
                for (int i = 0; i < 3; i++) {
                    if (p.nvl()[i] != null) {
                        f.add(names[i] + ": " + range(rnd, p.nvl()[i], false));
                    }
                }
                match.add("nvlDomain: {" + String.join(", ", f) + "}");
            }
            if (p.version() != null) {
                match.add("ncclVersion: " + range(rnd, p.version(), true));
            }
            if (p.gpu() != null) {
                match.add("gpu: " + p.gpu());
            }
            if (!match.isEmpty() || rnd.nextBoolean()) {
                y.append("    match: {").append(String.join(", ", match)).append("}\n");
            }
            if (p.rules().isEmpty()) {
                y.append("    rules: []\n");
                continue;
            }
            y.append("    rules:\n");
            for (Rule r : p.rules()) {
                y.append("      - collective: ")
                        .append(rnd.nextInt(4) == 0 ? COLLS[r.coll()].toLowerCase() : COLLS[r.coll()])
                        .append('\n');
                y.append("        bytes: {from: ").append(bytes(rnd, r.from()));
                if (r.to() != null) {
                    y.append(", to: ").append(bytes(rnd, r.to()));
                }
                y.append("}\n");
                if (r.pipe() != null) {
                    y.append("        numPipeOps: ")
                            .append(range(rnd, r.pipe(), false))
                            .append('\n');
                } else if (rnd.nextInt(3) == 0) {
                    y.append("        numPipeOps: any\n");
                }
                if (r.regBuff() != null) {
                    y.append("        regBuff: ").append(r.regBuff()).append('\n');
                } else if (rnd.nextInt(3) == 0) {
                    y.append("        regBuff: any\n");
                }
                if (rnd.nextInt(4) == 0) {
                    y.append("        ncclPick: {algorithm: RING, protocol: LL128}\n        ncclRegret: 0.25\n");
                }
                y.append("        candidates:\n");
                for (Candidate c : r.cands()) {
                    y.append("          - {algorithm: ")
                            .append(ALGOS[c.algo()])
                            .append(", protocol: ")
                            .append(PROTOS[c.proto()]);
                    if (c.channels() != null) {
                        y.append(", channels: ").append(c.channels());
                    }
                    if (c.chunkSize() != null) {
                        y.append(", chunkSize: ").append(bytes(rnd, c.chunkSize()));
                    }
                    if (rnd.nextInt(4) == 0) {
                        y.append(", regret: 0.5");
                    }
                    y.append("}\n");
                }
            }
        }
        return y.toString();
    }

    // ---- calls -------------------------------------------------------------------------------

    static Comm comm(Random rnd) {
        long nodes = rnd.nextInt(4) == 0 ? 1 : 1 + rnd.nextInt(8);
        long rpn = new long[] {1, 2, 4, 8}[rnd.nextInt(4)];
        long ranks = nodes * rpn;
        if (rnd.nextInt(8) == 0) {
            ranks = nodes + rnd.nextInt(5); // uneven
        }
        int[] nvl = rnd.nextBoolean()
                ? new int[] {(int) nodes, (int) (ranks / nodes), (int) ((ranks + nodes - 1) / nodes)}
                : new int[] {1, (int) ranks, (int) ranks};
        return new Comm(ranks, nodes, nvl[0], nvl[1], nvl[2]);
    }

    static long nBytes(Random rnd, Profile p) {
        if (p != null && !p.rules().isEmpty() && rnd.nextInt(5) < 2) {
            Rule r = p.rules().get(rnd.nextInt(p.rules().size()));
            long b = rnd.nextBoolean() || r.to() == null ? r.from() : r.to();
            return Math.max(0, b + rnd.nextInt(3) - 1);
        }
        if (rnd.nextInt(10) == 0) {
            return rnd.nextInt(9);
        }
        double e = rnd.nextDouble() * 36;
        return (long) Math.pow(2, e);
    }

    static String fmt(float f) {
        return Float.isNaN(f) ? "nan" : Float.toString(f);
    }

    static float parse(String s) {
        return s.toLowerCase().contains("nan") ? Float.NaN : Float.parseFloat(s);
    }

    /** One expected line and a description of the call, for the failure message. */
    record Expect(String line, String what) {}

    record Case(
            int index,
            String yaml,
            String script,
            List<Expect> expects,
            Map<String, String> env,
            int calls,
            int chunks) {}

    static Case makeCase(int index, long seed) {
        Random rnd = new Random(seed);
        int version = 3 + rnd.nextInt(4);
        int ncclVersion = NCCL_VERSIONS[rnd.nextInt(NCCL_VERSIONS.length)];
        int nComms = 1 + rnd.nextInt(4);
        List<Comm> comms = new ArrayList<>();
        for (int i = 0; i < nComms; i++) {
            comms.add(comm(rnd));
        }
        Policy pol = policy(rnd, comms);
        String yaml = yaml(rnd, pol);
        String mode = pol.mode();
        Map<String, String> env = new java.util.HashMap<>();
        if (rnd.nextInt(10) == 0) {
            mode = new String[] {"enforce", "shadow", "off"}[rnd.nextInt(3)];
            env.put("NCCL_TUNER_JAVA_MODE", mode);
        }
        StringBuilder s = new StringBuilder();
        List<Expect> ex = new ArrayList<>();
        s.append("version ").append(version).append('\n');
        s.append("ncclversion ").append(ncclVersion).append('\n');
        Profile[] prof = new Profile[nComms];
        for (int i = 0; i < nComms; i++) {
            Comm c = comms.get(i);
            s.append("init ")
                    .append(i)
                    .append(' ')
                    .append(c.nRanks())
                    .append(' ')
                    .append(c.nNodes())
                    .append(' ')
                    .append(c.nvlN())
                    .append(' ')
                    .append(c.nvlMin())
                    .append(' ')
                    .append(c.nvlMax())
                    .append('\n');
            prof[i] = pick(pol, c, version, ncclVersion);
            ex.add(new Expect("I 0", "init " + c));
        }
        int calls = 0;
        int chunks = 0;
        boolean enforce = mode.equals("enforce");
        for (int k = 0; k < CALLS; k++) {
            int id = rnd.nextInt(nComms);
            Profile p = prof[id];
            int coll = rnd.nextInt(5);
            if (p != null && !p.rules().isEmpty() && rnd.nextBoolean()) {
                coll = p.rules().get(rnd.nextInt(p.rules().size())).coll();
            }
            long nb = nBytes(rnd, p);
            int pipe = rnd.nextInt(3) > 0 ? 1 : 1 + rnd.nextInt(8);
            int regBuff = rnd.nextInt(2);
            int nA = rnd.nextBoolean() ? 6 : 7;
            int nP = 3;
            int nCh = rnd.nextInt(5) == 0 ? 1 + rnd.nextInt(32) : 0;
            // -1 patterns: none, scattered at 20/50/90%, all -1, or whole algorithms (rows) unavailable
            float negRate = new float[] {0f, 0.2f, 0.5f, 0.9f, 1f, 0f}[rnd.nextInt(6)];
            boolean[] rowOff = new boolean[nA];
            if (negRate == 0f && rnd.nextBoolean()) {
                for (int a = 0; a < nA; a++) {
                    rowOff[a] = rnd.nextInt(5) < 2;
                }
            }
            float[] t = new float[nA * nP];
            for (int i = 0; i < t.length; i++) {
                int kind = rnd.nextInt(100);
                t[i] = rowOff[i / nP] || rnd.nextFloat() < negRate
                        ? -1f
                        : kind < 2 && NAN
                                ? Float.NaN
                                : kind < 4
                                        ? 0f
                                        : kind < 6
                                                ? 1e9f * (1 + rnd.nextFloat())
                                                : Math.round(rnd.nextFloat() * 100000) / 100f;
            }
            s.append("call ")
                    .append(id)
                    .append(' ')
                    .append(coll)
                    .append(' ')
                    .append(nb)
                    .append(' ')
                    .append(pipe)
                    .append(' ')
                    .append(regBuff)
                    .append(' ')
                    .append(nA)
                    .append(' ')
                    .append(nP)
                    .append(' ')
                    .append(nCh);
            for (float f : t) {
                s.append(' ').append(fmt(f));
            }
            s.append('\n');
            float[] want = t.clone();
            int wantCh = nCh;
            String why = "no profile";
            if (p != null) {
                Rule r = rule(p, coll, nb, pipe, version == 3 ? -1 : regBuff);
                why = "profile " + p.name() + ", rule " + r;
                if (r != null && enforce) {
                    for (Candidate c : r.cands()) {
                        if (c.algo() < nA && c.proto() < nP && t[c.algo() * nP + c.proto()] >= 0) {
                            want[c.algo() * nP + c.proto()] = 0f;
                            if (c.channels() != null) {
                                wantCh = c.channels();
                            }
                            why += ", applies " + c;
                            break;
                        }
                    }
                }
            }
            StringBuilder w = new StringBuilder("R 0 ").append(wantCh);
            for (float f : want) {
                w.append(' ').append(fmt(f));
            }
            ex.add(new Expect(
                    w.toString(),
                    "call comm " + id + " " + comms.get(id) + " " + COLLS[coll] + " nBytes " + nb
                            + " numPipeOps " + pipe + " regBuff " + regBuff + " " + nA + "x" + nP + " nChannels in "
                            + nCh + " mode "
                            + mode + " v" + version + "; " + why));
            calls++;
            if (version == 6 && rnd.nextInt(3) > 0) {
                int pick = ncclPick(want);
                int a;
                int pr;
                if (pick >= 0 && rnd.nextBoolean()) {
                    a = pick / nP;
                    pr = pick % nP;
                } else {
                    a = rnd.nextInt(7);
                    pr = rnd.nextInt(3);
                }
                long dflt = rnd.nextBoolean() ? 131072 : 1 + rnd.nextInt(1 << 22);
                int ch = wantCh > 0 ? wantCh : 1 + rnd.nextInt(8);
                s.append("chunk ")
                        .append(id)
                        .append(' ')
                        .append(coll)
                        .append(' ')
                        .append(nb)
                        .append(' ')
                        .append(a)
                        .append(' ')
                        .append(pr)
                        .append(' ')
                        .append(ch)
                        .append(' ')
                        .append(dflt)
                        .append('\n');
                long wantChunk = p != null && enforce ? chunk(p, coll, nb, a, pr, dflt) : dflt;
                ex.add(new Expect(
                        "K 0 " + wantChunk,
                        "getChunkSize comm " + id + " " + COLLS[coll] + " nBytes " + nb + " "
                                + ALGOS[a] + "/" + PROTOS[pr] + " default " + dflt + " mode " + mode + " profile "
                                + (p == null ? "none" : p.name())));
                chunks++;
            }
        }
        for (int i = 0; i < nComms; i++) {
            s.append("destroy ").append(i).append('\n');
            ex.add(new Expect("D 0", "destroy " + i));
        }
        return new Case(index, yaml, s.toString(), ex, env, calls, chunks);
    }

    // ---- running and comparing -------------------------------------------------------------

    static boolean sameLine(String want, String got) {
        String[] a = want.split(" ");
        String[] b = got.split(" ");
        if (a.length != b.length || !a[0].equals(b[0])) {
            return false;
        }
        if (!a[0].equals("R")) {
            return want.equals(got);
        }
        if (!a[1].equals(b[1]) || !a[2].equals(b[2])) {
            return false;
        }
        for (int i = 3; i < a.length; i++) {
            float x = parse(a[i]);
            float y = parse(b[i]);
            if (Float.isNaN(x) ? !Float.isNaN(y) : Float.floatToIntBits(x) != Float.floatToIntBits(y) && x != y) {
                return false;
            }
        }
        return true;
    }

    /** Runs one case; returns null when it agrees, else the disagreement. */
    static String run(Case c) throws IOException, InterruptedException {
        Path dir = tmp.resolve("case" + c.index());
        Files.createDirectories(dir);
        Path pol = dir.resolve("policy.yaml");
        Path script = dir.resolve("script.txt");
        Files.writeString(pol, c.yaml());
        Files.writeString(script, c.script());
        ProcessBuilder pb = new ProcessBuilder(HOST.toString(), Harness.PLUGIN.toString(), script.toString());
        Map<String, String> e = pb.environment();
        e.keySet().removeIf(k -> k.startsWith("NCCL_") || k.startsWith("JAVA_") || k.equals("JDK_JAVA_OPTIONS"));
        e.put("JAVA_HOME", Harness.JAVA_HOME);
        e.put("NCCL_TUNER_JAVA_POLICY", pol.toString());
        e.put("NCCL_TUNER_JAVA_OPTS", "-XX:TieredStopAtLevel=1");
        e.putAll(c.env());
        Harness.Result r = Harness.waitFor(pb, List.of(HOST.toString(), script.toString()), 120);
        List<String> got = r.lines().stream().filter(l -> !l.startsWith("L ")).toList();
        List<String> warns = r.lines().stream()
                .filter(l -> l.startsWith("L 2 ") || l.startsWith("L 1 "))
                .toList();
        String problem = null;
        if (r.exit() != 0) {
            problem = "host exit " + r.exit();
        } else if (!warns.isEmpty()) {
            problem = "plugin warned: " + warns.get(0);
        } else if (got.size() != c.expects().size()) {
            problem = got.size() + " result lines, expected " + c.expects().size();
        } else {
            for (int i = 0; i < got.size(); i++) {
                Expect x = c.expects().get(i);
                if (!sameLine(x.line(), got.get(i))) {
                    problem = "result " + i + ": " + x.what() + "\n    model:  " + x.line() + "\n    plugin: "
                            + got.get(i);
                    break;
                }
            }
        }
        if (problem == null) {
            return null;
        }
        Path keep = Harness.REPO.resolve("java-policy/target/oracle-failures/case" + c.index());
        Files.createDirectories(keep);
        Files.writeString(keep.resolve("policy.yaml"), c.yaml());
        Files.writeString(keep.resolve("script.txt"), c.script());
        Files.writeString(keep.resolve("env.txt"), c.env().toString());
        Files.writeString(keep.resolve("plugin.out"), r.text(), StandardCharsets.UTF_8);
        return "policy " + c.index() + " (" + keep + ", env " + c.env() + "): " + problem;
    }

    /**
     * docs/policy-format.md: a candidate is offered when its cost-table entry is >= 0. A NaN entry is
     * not: the next candidate applies, and the NaN stays as NCCL wrote it.
     */
    @Test
    void nanEntryIsNotOffered() throws Exception {
        String yaml = """
        schema: nccl-tuner-java/v1
        name: nan
        profiles:
          - name: p
            rules:
              - collective: AllReduce
                bytes: {from: 0 B}
                candidates:
                  - {algorithm: RING, protocol: LL, channels: 2}
                  - {algorithm: TREE, protocol: SIMPLE, channels: 5}
        """;
        StringBuilder costs = new StringBuilder();
        StringBuilder want = new StringBuilder();
        for (int i = 0; i < 21; i++) {
            String c = i == 3 ? "nan" : Float.toString(10f + i); // RING/LL = 1*3+0
            costs.append(' ').append(c);
            want.append(' ').append(i == 2 ? "0.0" : c); // TREE/SIMPLE = 0*3+2
        }
        for (int v = 4; v <= 6; v += 2) {
            String script = "version " + v + "\nncclversion 0\ninit 0 8 2 2 4 4\ncall 0 4 1048576 1 0 7 3 0" + costs
                    + "\ndestroy 0\n";
            Case c = new Case(
                    -v,
                    yaml,
                    script,
                    List.of(
                            new Expect("I 0", "init"),
                            new Expect("R 0 5" + want, "AllReduce 1 MiB, RING/LL NaN: TREE/SIMPLE on 5 channels"),
                            new Expect("D 0", "destroy")),
                    Map.of(),
                    1,
                    0);
            String problem = run(c);
            if (problem != null) {
                fail("v" + v + ": " + problem);
            }
        }
    }

    @Test
    void randomPoliciesAndCallsAgreeWithTheDocumentedSemantics() throws Exception {
        long t0 = System.nanoTime();
        Random seeds = new Random(SEED);
        List<Case> cases = new ArrayList<>();
        for (int i = 0; i < POLICIES; i++) {
            cases.add(makeCase(i, seeds.nextLong()));
        }
        int threads = Math.max(1, Math.min(8, Runtime.getRuntime().availableProcessors()));
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        List<Future<String>> results = new ArrayList<>();
        for (Case c : cases) {
            results.add(pool.submit(() -> run(c)));
        }
        pool.shutdown();
        List<String> problems = new ArrayList<>();
        for (Future<String> f : results) {
            String p = f.get();
            if (p != null) {
                problems.add(p);
            }
        }
        assertTrue(pool.awaitTermination(10, TimeUnit.SECONDS));
        long calls = cases.stream().mapToLong(Case::calls).sum();
        long chunks = cases.stream().mapToLong(Case::chunks).sum();
        double secs = (System.nanoTime() - t0) / 1e9;
        System.out.printf(
                "oracle: seed %d: compared %d policies, %d getCollInfo calls (every table entry and nChannels)"
                        + " and %d getChunkSize calls in %.1f s on %d threads; %d policies disagree%n",
                SEED, cases.size(), calls, chunks, secs, threads, problems.size());
        if (!problems.isEmpty()) {
            fail(problems.size() + " of " + cases.size() + " policies disagree with the model (first 10):\n"
                    + String.join("\n", problems.subList(0, Math.min(10, problems.size()))));
        }
    }
}
