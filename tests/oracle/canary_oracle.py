#!/usr/bin/env python3
"""canary_oracle.py -- an independent model of canary mode and the profiler's measured lines.

Written from the documentation alone (docs/canary.md, docs/policy-format.md, the NCCLTJ_DECISION_*
and NCCLTJ_HIST_* comments of plugin-shim/include/nccltj_bridge.h, the NCCL ABI headers), never
from the implementation. For random policies (1..6 rules, 1..3 candidates, optional channels),
random canary fractions, a random commId and random call streams it drives the built library
through tests/oracle/canary_host.c (NCCL 2.28's tuner v5 + profiler v5, two ranks, two processes,
the same stream) and compares:

  - per call: the returned cost table and nChannels (so the arm: policy / nccl / notOffered /
    unruled), NCCL's selection after it, and that both ranks got the same answer;
  - at finalize, per rank: every `measured` line (series key, count, timed, sumUs, sumSqUs, minUs,
    maxUs, meanUs, p50/p95/p99, the sparse histogram, asDecided, channels, kernelChannels), the
    `profiled` line and the `comm` line's calls / ruleHits / applied.

One fact the docs do not give exactly is the canary draw. docs/canary.md says
`splitmix64(seed + index)` with `seed` "derived from the first 64 bits of the table's sha256 and
commId"; what the library does (found black-box, by matching 200-call streams against candidate
formulas) is the index-th output of a SplitMix64 generator: with mix64 the SplitMix64 finalizer
and G = 0x9E3779B97F4A7C15, seed = mix64(sha64 ^ commId) (sha64 = the first 16 hex digits,
big-endian), z = mix64(seed + index * G), policy iff (z >>> 11) * 2^-53 < F. canary_draw() below.

The table's sha256 (the canary seed's source) is computed here from docs/policy-format.md "The
table's sha256" (table_sha256() below) and compared with the one each rank's init line names; some
policies set random `constants:` (not applied in canary mode, yet part of the digest).

  python3 tests/oracle/canary_oracle.py [--seed S] [--policies N] [--calls N] [--only I] [-v]
Exit 0: every field agreed; 1: disagreements (each printed with its reproducer); 2: setup error.
stdlib only.
"""
import argparse
import json
import math
import os
import random
import re
import struct
import subprocess
import sys
import tempfile

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
LIB = os.path.join(REPO, "build", "lib", "libnccl-tuner-java.so")
HOST = os.path.join(REPO, "build", "tests", "canary_host")
JAVA_HOME = os.environ.get("NCCL_TUNER_JAVA_HOME", "/usr/lib/jvm/temurin-25-jdk-amd64")

COLLS = ["Broadcast", "Reduce", "AllGather", "ReduceScatter", "AllReduce"]  # ncclFunc_t 0..4
ALGOS = ["TREE", "RING", "COLLNET_DIRECT", "COLLNET_CHAIN", "NVLS", "NVLS_TREE", "PAT"]
PROTOS = ["LL", "LL128", "SIMPLE"]
NALGO, NPROTO = 7, 3
START_MIN = 3.6e9  # NCCL's selection: strict minimum from 3.6e9 us, first minimum wins
M64 = (1 << 64) - 1
GAMMA = 0x9E3779B97F4A7C15
HIST_SUB, HIST_MIN_LOG2, HIST_OCTAVES = 16, 8, 24
HIST_LAST = HIST_SUB * HIST_OCTAVES + 1
MAX_SERIES = 64
args_debug = False
# A collective whose channels span 0 ns (every KernelCh stop pTimer equal to the earliest start)
# is a timed collective in histogram bucket 0 (docs/canary.md). --zero-span-untimed models the
# reading that it is untimed (the library's before this was found by this oracle).
ZERO_SPAN_UNTIMED = False
args_pool = 0


# ---- size grid (docs/policy-format.md "Sizes") -------------------------------------------------
def grid_point(i):
    if i < 8:
        return i
    e, s = 3 + (i - 8) // 4, (i - 8) % 4
    return (1 << e) + s * (1 << (e - 2))


def bucket_of(n):
    if n < 8:
        return n
    e = n.bit_length() - 1
    return 8 + 4 * (e - 3) + ((n >> (e - 2)) & 3)


UNITS = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}


def size_text(n, rnd):
    """A size as the policy may spell it: an integer or an IEC string (exact)."""
    opts = [str(n)]
    for u, m in UNITS.items():
        if n % m == 0 and u != "B":
            opts.append("%d %s" % (n // m, u))
        elif m > 1 and (4 * n) % m == 0 and n >= m:
            opts.append("%s %s" % (repr(n / m), u))
    return rnd.choice(opts)


def parse_size(t):
    m = re.fullmatch(r"\s*([0-9.]+)\s*([KMGT]i)?B\s*", t)
    if not m:
        return None
    return int(round(float(m.group(1)) * UNITS[(m.group(2) or "") + "B"]))


# ---- the canary draw ---------------------------------------------------------------------------
def mix64(z):
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


def canary_draw(sha256, comm_id, index, fraction):
    seed = mix64(int(sha256[:16], 16) ^ comm_id)
    z = mix64((seed + index * GAMMA) & M64)
    return (z >> 11) * 2.0 ** -53 < fraction


# ---- the table's sha256 (docs/policy-format.md "The table's sha256") ----------------------------
NBUCKETS = 8 + 61 * 4
CONST_ARRAYS = ["baseLatencies", "hwLatencies", "llMaxBws", "perChMaxRingLL128Bws", "perChMaxTreeLL128Bws",
                "perChMaxTreeBws", "perChMaxNVLSTreeBws"]
LINKS = ["NVLINK", "PCI", "NET"]
COMPCAPS = ["VOLTA", "AMPERE", "HOPPER", "BLACKWELL", "RUBIN"]
SCALES = ["1NODE", "2NODES", "4NODES"]
INT_MAX = (1 << 31) - 1


def constant_key(name):
    """(array, indices...) of a constant's name, by the docs' numbering; names are case-insensitive."""
    p = name.split(".")
    a = CONST_ARRAYS.index(p[0])
    if a == 0:
        kinds = [ALGOS, PROTOS]
    elif a == 1:
        kinds = [LINKS, ALGOS, PROTOS]
    else:
        kinds = [COMPCAPS, SCALES]
    return tuple([a] + [k.index(v.upper()) for k, v in zip(kinds, p[1:])])


def table_sha256(rules, constants):
    """rules as gen_policy makes them (file order); constants: [(name, value)] in file order."""
    import hashlib
    head = [-1] * (len(COLLS) * NBUCKETS)
    cells = {}
    for i, r in enumerate(rules):
        lo = bucket_of(r["lo"])
        hi = NBUCKETS if r["hi"] is None else bucket_of(r["hi"])
        for b in range(lo, hi):
            cells.setdefault(r["coll"] * NBUCKETS + b, []).append(8 * i)
    chains, shared = [], {}
    for cell in sorted(cells):
        run = tuple(cells[cell])
        if run not in shared:
            shared[run] = len(chains)
            chains += list(run) + [-1]
        head[cell] = shared[run]
    recs = []
    for r in rules:
        cands = [(c // NPROTO) | (c % NPROTO) << 8 | ch << 16 for c, ch in r["cands"]]
        recs += [0, INT_MAX, len(cands)] + cands + [0] * (4 - len(cands)) + [0]
    data = struct.pack(">%di" % (len(head) + len(chains) + len(recs)), *(head + chains + recs))
    if constants:
        entries = {}
        for name, value in constants:
            entries[constant_key(name)] = value  # the last spelling of an entry wins
        data += struct.pack(">i", len(entries))
        for key in sorted(entries):
            data += struct.pack(">%di" % len(key), *key) + struct.pack(">d", entries[key] + 0.0)
    return hashlib.sha256(data).hexdigest()


def gen_constants(rnd):
    """0..4 random constants, at times one entry spelled twice (the later spelling wins)."""
    out = []
    for _ in range(rnd.choice([0, 0, 1, 2, 4])):
        a = rnd.randrange(len(CONST_ARRAYS))
        if a == 0:
            idx = [rnd.choice(ALGOS), rnd.choice(PROTOS)]
        elif a == 1:
            idx = [rnd.choice(LINKS), rnd.choice(ALGOS), rnd.choice(PROTOS)]
        else:
            idx = [rnd.choice(COMPCAPS), rnd.choice(SCALES)]
        name = ".".join([CONST_ARRAYS[a]] + idx)
        if any(constant_key(n) == constant_key(name) for n, _ in out):
            continue  # one spelling per entry, but for the deliberate second one below
        out.append((name, rnd.choice([0.0, float(rnd.randint(1, 500)), round(rnd.uniform(0, 1000), 3)])))
    if out and rnd.random() < 0.3:
        name, _ = out[0]
        p = name.split(".")
        out.append((".".join([p[0]] + [x.lower() for x in p[1:]]), round(rnd.uniform(0, 50), 2)))
    return out


# ---- NCCL's selection and float32 ---------------------------------------------------------------
def f32(x):
    return struct.unpack("f", struct.pack("f", x))[0]


def nccl_pick(table):
    best, pick = START_MIN, None
    for i, c in enumerate(table):
        if c >= 0.0 and c < best:
            best, pick = c, i
    return pick


def cfg_name(i):
    return None if i is None else "%s/%s" % (ALGOS[i // NPROTO], PROTOS[i % NPROTO])


# ---- histogram (nccltj_bridge.h NCCLTJ_HIST_*) ---------------------------------------------------
def hist_bucket(ns):
    if ns < (1 << HIST_MIN_LOG2):
        return 0
    if ns >= (1 << (HIST_MIN_LOG2 + HIST_OCTAVES)):
        return HIST_LAST
    k = ns.bit_length() - 1 - HIST_MIN_LOG2
    j = (ns >> (k + HIST_MIN_LOG2 - 4)) - HIST_SUB
    return 1 + HIST_SUB * k + j


def hist_mid_us(b):
    if b == 0:
        return (1 << HIST_MIN_LOG2) / 2 / 1000.0
    if b == HIST_LAST:
        return (1 << (HIST_MIN_LOG2 + HIST_OCTAVES)) / 1000.0  # the last bucket: its lower bound
    k, j = (b - 1) // HIST_SUB, (b - 1) % HIST_SUB
    return (1 << (HIST_MIN_LOG2 + k)) * (1 + (j + 0.5) / HIST_SUB) / 1000.0


def percentile_us(hist, n, q):
    rank = max(1, math.ceil(q * n))
    acc = 0
    for b in sorted(hist):
        acc += hist[b]
        if acc >= rank:
            return hist_mid_us(b)
    return None


# ---- random policies and streams ---------------------------------------------------------------
def gen_policy(rnd, idx):
    nrules = rnd.randint(1, 6)
    rules, by_coll = [], {}
    for _ in range(nrules * 4):
        if len(rules) == nrules:
            break
        coll = rnd.randrange(5)
        lo = rnd.randint(0, 110)
        hi = None if rnd.random() < 0.12 else lo + rnd.randint(1, 14)
        hi_b = 10 ** 9 if hi is None else hi
        if any(not (hi_b <= a or lo >= (10 ** 9 if b is None else b)) for a, b in by_coll.get(coll, [])):
            continue
        by_coll.setdefault(coll, []).append((lo, hi))
        ncand = rnd.randint(1, 3)
        cands = rnd.sample(range(NALGO * NPROTO), ncand)
        cl = []
        for c in cands:
            ch = rnd.randint(1, 64) if rnd.random() < 0.45 else 0
            cl.append((c, ch))
        rules.append({"coll": coll, "lo": grid_point(lo), "hi": None if hi is None else grid_point(hi), "cands": cl})
    mode = rnd.choice(["enforce", "shadow", "canary", "off", None])
    y = ["schema: nccl-tuner-java/v1", "name: oracle-%d" % idx]
    if mode:
        y.append("mode: %s" % mode)
    y += ["profiles:", "  - name: p%d" % idx, "    match:", "      nRanks: 2"]
    # a stream of its own, so that the rules, streams and draws of a seed stay those before constants
    constants = gen_constants(random.Random("constants %d %r" % (idx, rules)))
    if constants:
        y.append("    constants:")
        y += ["      %s: %r" % (n, v) for n, v in constants]
    y.append("    rules:")
    for r in rules:
        y.append("      - collective: %s" % rnd.choice([COLLS[r["coll"]], COLLS[r["coll"]].lower()]))
        if r["hi"] is None:
            y.append("        bytes: {from: %s}" % size_text(r["lo"], rnd))
        else:
            y.append("        bytes: {from: %s, to: %s}" % (size_text(r["lo"], rnd), size_text(r["hi"], rnd)))
        y.append("        candidates:")
        for c, ch in r["cands"]:
            y.append("          - algorithm: %s" % ALGOS[c // NPROTO])
            y.append("            protocol: %s" % PROTOS[c % NPROTO])
            if ch:
                y.append("            channels: %d" % ch)
    return rules, constants, "\n".join(y) + "\n"


def find_rule(rules, coll, n):
    for r in rules:
        if r["coll"] == coll and r["lo"] <= n and (r["hi"] is None or n < r["hi"]):
            return r
    return None


def gen_sizes(rnd, rules, pool):
    sizes = []
    for _ in range(pool):
        if rules and rnd.random() < 0.7:
            r = rnd.choice(rules)
            hi = r["hi"] if r["hi"] is not None else r["lo"] * 4 + 8
            choice = rnd.random()
            if choice < 0.2:
                n = r["lo"]
            elif choice < 0.35:
                n = hi - 1
            elif choice < 0.45:
                n = hi
            elif choice < 0.5:
                n = max(1, r["lo"] - 1)
            else:
                n = rnd.randint(r["lo"], max(r["lo"], hi - 1))
            sizes.append((r["coll"] if rnd.random() < 0.85 else rnd.randrange(5), max(1, n)))
        else:
            sizes.append((rnd.randrange(5), max(1, int(2 ** rnd.uniform(0, 33)))))
    return sizes


def gen_table(rnd, pneg):
    while True:
        t = []
        for _ in range(NALGO * NPROTO):
            u = rnd.random()
            if u < pneg:
                t.append(-1.0)
            elif u < pneg + 0.03:
                t.append(0.0)
            elif u < pneg + 0.05:
                t.append(4e9)  # offered, never NCCL's pick (at or above 3.6e9)
            else:
                t.append(rnd.randint(4, 40000) / 4.0)  # exact in float32
        if nccl_pick(t) is not None:
            return t


def default_channels(coll, bucket):
    """The host's channel count when the tuner sets none: one per (collective, size bucket)."""
    return 1 + (coll * 7 + bucket * 13) % 32


def gen_times(rnd, n, base):
    """n channels' (start, stop) pTimers; stop 0 = no KernelChStop record. Returns (pairs, span or None)."""
    if rnd.random() < 0.05:
        return [(base + rnd.randint(0, 500), 0) for _ in range(n)], None
    u = rnd.random()
    if u < 0.15:  # a histogram bucket's edge, or one below it
        k, j = rnd.randint(0, HIST_OCTAVES - 1), rnd.randrange(HIST_SUB)
        span = (1 << (HIST_MIN_LOG2 + k)) * (HIST_SUB + j) // HIST_SUB - rnd.randint(0, 1)
    elif u < 0.2:
        span = rnd.choice([0, 1, 255, 256, (1 << 32) - 1, 1 << 32, 5_000_000_000])
    else:
        span = int(2 ** rnd.uniform(6, 33))
    t0 = base + rnd.randint(0, 1000)
    pairs = []
    for c in range(n):
        s = t0 + (0 if c == 0 else rnd.randint(0, span // 2))
        pairs.append([s, s + rnd.randint(0, max(0, t0 + span - s))])
    pairs[rnd.randrange(n)][1] = t0 + span
    for p in pairs:
        if p[1] < p[0]:
            p[1] = p[0]
    return [tuple(p) for p in pairs], span


# ---- the host processes ------------------------------------------------------------------------
class Host:
    def __init__(self, env, log):
        self.log = log
        self.p = subprocess.Popen([HOST, LIB], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  env=env, text=True, bufsize=1)
        self.info = []

    def send(self, line):
        self.p.stdin.write(line + "\n")
        self.p.stdin.flush()

    def expect(self, tag):
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise RuntimeError("host ended: " + self.p.stderr.read()[-2000:])
            if line.startswith("NCCL "):
                self.info.append(line.rstrip("\n"))
                continue
            if line.split()[0] == tag:
                return line.split()
            raise RuntimeError("unexpected host line: " + line)

    def close(self):
        self.p.stdin.close()
        rc = self.p.wait(timeout=60)
        err = self.p.stderr.read()
        if rc != 0:
            raise RuntimeError("host exit %d: %s" % (rc, err[-2000:]))


class Checker:
    def __init__(self, verbose):
        self.fields = 0
        self.bad = []
        self.verbose = verbose
        self.arms = {}
        self.unaggregated = 0

    def eq(self, what, got, want, ctx, tol=None):
        self.fields += 1
        ok = got == want
        if not ok and tol is not None and isinstance(got, (int, float)) and isinstance(want, (int, float)):
            ok = abs(got - want) <= tol * max(1.0, abs(want))
        if not ok:
            self.bad.append("%s: %s = %r, oracle %r" % (ctx, what, got, want))
        return ok


def run_policy(seed, idx, ncalls, chk, tmp):
    rnd = random.Random(seed * 100003 + idx)
    rules, constants, yaml = gen_policy(rnd, idx)
    frac = 0.0 if rnd.random() < 0.1 else (1.0 if rnd.random() < 0.1 else round(rnd.uniform(0.05, 1.0), 3))
    frac_text = {0.0: rnd.choice(["0", "0.0"]), 1.0: rnd.choice(["1", "1.0"])}.get(frac, repr(frac))
    comm_id = rnd.getrandbits(64)
    nnodes = rnd.choice([1, 2])
    pneg = rnd.uniform(0.0, 0.7)
    pool = rnd.choice([4, 6, 10, 16, 40])  # 40: more series than a communicator keeps, at times
    if args_pool:
        pool = args_pool
    sizes = gen_sizes(rnd, rules, pool)
    repro = "seed %d policy %d (--seed %d --only %d)" % (seed, idx, seed, idx)
    ppath = os.path.join(tmp, "policy-%d.yaml" % idx)
    with open(ppath, "w") as f:
        f.write(yaml)
    hosts = []
    for rank in (0, 1):
        log = os.path.join(tmp, "log-%d-r%d.jsonl" % (idx, rank))
        env = dict(os.environ, NCCL_TUNER_JAVA_HOME=JAVA_HOME, NCCL_TUNER_JAVA_POLICY=ppath,
                   NCCL_TUNER_JAVA_MODE="canary", NCCL_TUNER_JAVA_CANARY=frac_text, NCCL_TUNER_JAVA_LOG=log)
        env.pop("NCCL_TUNER_JAVA_LOG_CALLS", None)
        hosts.append(Host(env, log))
    for rank, h in enumerate(hosts):
        h.send("init %d %d 2 %d" % (rank, comm_id, nnodes))
    for rank, h in enumerate(hosts):
        r = h.expect("I")
        chk.eq("init rc/mask", r[1:], ["0", "0", str(0x40)], "%s rank %d init" % (repro, rank))
    shas = []
    for h in hosts:
        m = [re.search(r"sha256 ([0-9a-f]{64})", l) for l in h.info]
        m = [x.group(1) for x in m if x]
        if not m:
            raise RuntimeError("%s: no sha256 in the init lines: %s" % (repro, h.info))
        shas.append(m[0])
    chk.eq("sha256 rank1", shas[1], shas[0], repro)
    chk.eq("sha256 (docs/policy-format.md)", shas[0], table_sha256(rules, constants), repro)
    sha = shas[0]

    series = [dict(), dict()]  # per rank: key -> aggregate, insertion order = slot order
    unagg = [0, 0]
    untimed = [0, 0]
    counts = {"calls": 0, "ruleHits": 0, "applied": 0}
    base = [10 ** 12, 2 * 10 ** 12]
    base_tables = {}
    for i in range(1, ncalls + 1):
        coll, n = rnd.choice(sizes)
        if coll in (2, 3):  # NCCL's nBytes there is nRanks x count x type size: a multiple of 2
            n = max(2, n - n % 2)
        regbuff = rnd.randrange(2)
        # Mostly the (collective, nBytes)'s own table, as NCCL's model gives (keeps the series
        # within the communicator's 64), at times a fresh random one.
        if (coll, n) not in base_tables or rnd.random() < 0.15:
            base_tables[(coll, n)] = [f32(x) for x in gen_table(rnd, pneg)]
        table = base_tables[(coll, n)]
        rule = find_rule(rules, coll, n)
        bucket = bucket_of(n)
        out, ch, arm, decided, dch = list(table), 0, "unruled", None, 0
        chk_arms = chk.arms
        counts["calls"] += 1
        if rule is not None:
            counts["ruleHits"] += 1
            offered = next(((c, cc) for c, cc in rule["cands"] if table[c] >= 0.0), None)
            if offered is None:
                arm, decided = "notOffered", nccl_pick(table)
            elif canary_draw(sha, comm_id, i, frac):
                arm, decided, dch = "policy", offered[0], offered[1]
                out[offered[0]] = 0.0
                ch = offered[1]
                counts["applied"] += 1
            else:
                arm, decided = "nccl", nccl_pick(table)
        chk_arms[arm] = chk_arms.get(arm, 0) + 1
        executed = nccl_pick(out)
        defch = default_channels(coll, bucket)
        nch = ch if ch > 0 else defch
        want_r = ["0", str(ch), str(executed // NPROTO), str(executed % NPROTO), str(nch)] + ["%.9g" % x for x in out]
        ctx = "%s call %d (%s nBytes %d, arm %s, table %s)" % (repro, i, COLLS[coll], n, arm,
                                                             " ".join("%g" % x for x in table))
        line = "call %d %d 1 %d %d %s" % (coll, n, regbuff, defch, " ".join("%.9g" % x for x in table))
        for h in hosts:
            h.send(line)
        got = [h.expect("R")[1:] for h in hosts]
        chk.eq("ranks' answers", got[1], got[0], ctx)
        chk.eq("getCollInfo answer [rc nChannels algo proto nChannelsExecuted table]", got[0], want_r, ctx)
        gch = int(got[0][4])
        for rank, h in enumerate(hosts):
            base[rank] += 10 ** 10
            pairs, span = gen_times(rnd, gch, base[rank])
            k = 2 if coll in (2, 3) else 1
            dtype = rnd.choice([d for d, s in (("ncclInt8", 1), ("ncclFloat16", 2), ("ncclBfloat16", 2),
                                               ("ncclFloat32", 4), ("ncclFloat64", 8)) if n % (s * k) == 0] or ["ncclInt8"])
            size = {"ncclInt8": 1, "ncclFloat16": 2, "ncclBfloat16": 2, "ncclFloat32": 4, "ncclFloat64": 8}[dtype]
            # NCCL's nBytes for AllGather and ReduceScatter is nRanks x count x type size
            # (src/enqueue.cc ncclFuncMaxSendRecvCount); the Coll event carries the count.
            count = n // (size * (2 if coll in (2, 3) else 1))
            if args_debug:
                print("DEBUG call %d rank %d %s n %d arm %s decided %s executed %s nch %d span %s count %d %s" % (
                    i, rank, COLLS[coll], n, arm, cfg_name(decided), cfg_name(executed), gch, span, count, dtype))
            h.send("ev %s %d %d %s" % (dtype, count, gch, " ".join("%d %d" % p for p in pairs)))
            key = (coll, bucket, arm, decided, executed, nch)
            ser = series[rank]
            if key not in ser:
                if len(ser) >= MAX_SERIES:
                    unagg[rank] += 1
                    if span is None or (span == 0 and ZERO_SPAN_UNTIMED):
                        untimed[rank] += 1
                    continue
                ser[key] = {"count": 0, "timed": 0, "sum": 0.0, "sumSq": 0.0, "min": None, "max": None,
                            "hist": {}, "kch": 0, "dch": dch}
            a = ser[key]
            a["count"] += 1
            a["kch"] = max(a["kch"], gch)
            if span == 0 and ZERO_SPAN_UNTIMED:
                span = None
            if span is None:
                untimed[rank] += 1
            else:
                us = span / 1000.0
                a["timed"] += 1
                a["sum"] += us
                a["sumSq"] += us * us
                a["min"] = us if a["min"] is None else min(a["min"], us)
                a["max"] = us if a["max"] is None else max(a["max"], us)
                b = hist_bucket(span)
                a["hist"][b] = a["hist"].get(b, 0) + 1
        for h in hosts:
            h.expect("E")
    for h in hosts:
        h.send("fin")
    for h in hosts:
        h.expect("F")
        h.close()

    for rank, h in enumerate(hosts):
        recs = []
        with open(h.log) as f:
            for l in f:
                recs.append(json.loads(l))
        rctx = "%s rank %d" % (repro, rank)
        comm = [r for r in recs if r.get("type") == "comm"]
        if chk.eq("comm lines", len(comm), 1, rctx):
            c = comm[0]
            for k in ("calls", "ruleHits", "applied"):
                chk.eq("comm." + k, c.get(k), counts[k], rctx)
            chk.eq("comm.mode", c.get("mode"), "canary", rctx)
            chk.eq("comm.comm", c.get("comm"), comm_id, rctx)
            chk.eq("comm.sha256", c.get("sha256"), sha, rctx)
        prof = [r for r in recs if r.get("type") == "profiled"]
        if chk.eq("profiled lines", len(prof), 1, rctx):
            p = prof[0]
            want = {"comm": comm_id, "rank": rank, "nRanks": 2, "nNodes": nnodes, "profilerVersion": 5, "joined": True,
                    "collectives": ncalls, "unjoined": 0, "untimed": untimed[rank], "unaggregated": unagg[rank],
                    "decisionsDropped": 0}
            for k, v in want.items():
                chk.eq("profiled." + k, p.get(k), v, rctx)
            chk.unaggregated += unagg[rank]
        meas = [r for r in recs if r.get("type") == "measured"]
        got_by_key = {}
        for m in meas:
            dec = None
            if m.get("decided") is not None:
                a, pr = m["decided"].split("/")
                dec = ALGOS.index(a) * NPROTO + PROTOS.index(pr)
            ex = m.get("executed")
            ex = None if ex is None else ALGOS.index(ex.split("/")[0]) * NPROTO + PROTOS.index(ex.split("/")[1])
            key = (COLLS.index(m["collective"]), None if m.get("nBytes") is None else bucket_of(m["nBytes"]), m["arm"],
                   dec, ex, m["channels"])
            if key in got_by_key:
                chk.bad.append("%s: two measured lines for one series %r" % (rctx, key))
            got_by_key[key] = m
        want_keys = set(series[rank])
        chk.eq("measured series", sorted(map(repr, got_by_key)), sorted(map(repr, want_keys)), rctx)
        for key, a in series[rank].items():
            m = got_by_key.get(key)
            if m is None:
                continue
            coll, bucket, arm, dec, ex, nch = key
            sctx = "%s series %s %s arm %s decided %s executed %s ch %d" % (
                rctx, COLLS[coll], bucket, arm, cfg_name(dec), cfg_name(ex), nch)
            lo, hi = grid_point(bucket), grid_point(bucket + 1)
            chk.eq("nBytes", m["nBytes"], lo, sctx)
            chk.eq("toBytes", m["toBytes"], hi, sctx)
            lab = re.fullmatch(r"\[(.*), (.*)\)", m.get("bucket", ""))
            chk.eq("bucket label", lab and (parse_size(lab.group(1)), parse_size(lab.group(2))), (lo, hi), sctx)
            for k, v in (("comm", comm_id), ("rank", rank), ("nRanks", 2), ("nNodes", nnodes), ("sha256", sha),
                         ("mode", "canary"), ("policy", "oracle-%d" % idx), ("decidedChannels", a["dch"]),
                         ("kernelChannels", a["kch"]), ("count", a["count"]), ("timed", a["timed"])):
                chk.eq(k, m.get(k), v, sctx)
            if arm in ("unruled", "unjoined"):
                as_dec = None
            else:
                as_dec = ex == dec and (a["dch"] == 0 or nch == a["dch"])
            chk.eq("asDecided", m.get("asDecided"), as_dec, sctx)
            hist = sorted([list(x) for x in m.get("hist", [])])
            chk.eq("hist", hist, sorted([[b, c] for b, c in a["hist"].items()]), sctx)
            if a["timed"]:
                tol = 1e-9
                chk.eq("sumUs", m.get("sumUs"), a["sum"], sctx, tol)
                chk.eq("sumSqUs", m.get("sumSqUs"), a["sumSq"], sctx, tol)
                chk.eq("minUs", m.get("minUs"), a["min"], sctx, tol)
                chk.eq("maxUs", m.get("maxUs"), a["max"], sctx, tol)
                # meanUs is written to the nanosecond (3 decimals; the docs do not say)
                mean = a["sum"] / a["timed"]
                chk.eq("meanUs", m.get("meanUs"), mean, sctx, 0.0005000001 / max(1.0, abs(mean)))
                for q, k in ((0.5, "p50Us"), (0.95, "p95Us"), (0.99, "p99Us")):
                    chk.eq(k, m.get(k), percentile_us(a["hist"], a["timed"], q), sctx, tol)
    return ncalls


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=20250611)
    ap.add_argument("--policies", type=int, default=50)
    ap.add_argument("--calls", type=int, default=300)
    ap.add_argument("--only", type=int, default=None)
    ap.add_argument("--keep", action="store_true", help="keep the policies and logs (printed)")
    ap.add_argument("-v", "--verbose", action="store_true")
    ap.add_argument("--zero-span-untimed", action="store_true", help="model a 0 ns span as untimed (not the docs' reading)")
    ap.add_argument("--jobs", type=int, default=2, help="policies run at a time")
    ap.add_argument("--pool", type=int, default=0, help="distinct (collective, nBytes) per stream")
    ap.add_argument("--debug", action="store_true", help="print each call's prediction")
    args = ap.parse_args()
    global args_debug, args_pool, ZERO_SPAN_UNTIMED
    if args.zero_span_untimed:
        ZERO_SPAN_UNTIMED = True
    args_debug = args.debug
    args_pool = args.pool
    for p in (LIB, HOST):
        if not os.path.exists(p):
            print("canary_oracle: %s missing (make build)" % p, file=sys.stderr)
            return 2
    tmp = tempfile.mkdtemp(prefix="canary-oracle-")
    idxs = [args.only] if args.only is not None else list(range(args.policies))
    from concurrent.futures import ThreadPoolExecutor

    def one(i):  # each policy's two host processes; two policies at a time
        c = Checker(args.verbose)
        run_policy(args.seed, i, args.calls, c, tmp)
        return c

    chk = Checker(args.verbose)
    with ThreadPoolExecutor(max_workers=args.jobs) as ex:
        for i, c in zip(idxs, ex.map(one, idxs)):
            chk.fields += c.fields
            chk.bad += c.bad
            chk.unaggregated += c.unaggregated
            for k, v in c.arms.items():
                chk.arms[k] = chk.arms.get(k, 0) + v
            if args.verbose or c.bad:
                print("policy %d: %d disagreements" % (i, len(c.bad)))
    calls = len(idxs) * args.calls
    for b in chk.bad[:200]:
        print("DISAGREE " + b)
    if len(chk.bad) > 200:
        print("... %d more" % (len(chk.bad) - 200))
    print("canary oracle: %d policies, %d calls (x2 ranks; arms %s; %d collectives past the series table), "
          "%d fields compared, %d disagreements%s" % (
              len(idxs), calls, ", ".join("%s %d" % kv for kv in sorted(chk.arms.items())), chk.unaggregated,
              chk.fields, len(chk.bad), (" (files in %s)" % tmp) if args.keep or chk.bad else ""))
    bad = len(chk.bad) + leftover_bytes(tmp)
    if not args.keep and not bad:
        import shutil
        shutil.rmtree(tmp, ignore_errors=True)
    return 1 if bad else 0


def leftover_bytes(tmp):
    """Decisions whose bytes no Coll event uses up (getCollInfo 5 bytes, the Coll event 4): each
    Coll event still finds its own decision, and the leftovers are dropped and counted
    (docs/canary.md, Limits: the join), instead of clogging the queue so that every later
    collective is unjoined (found by this oracle). Returns the number of failed checks."""
    pol = os.path.join(tmp, "leftover.yaml")
    with open(pol, "w") as f:
        f.write("schema: nccl-tuner-java/v1\nname: leftover\nprofiles:\n  - name: p\n    rules:\n"
                "      - {collective: AllReduce, bytes: {from: 1 MiB}, candidates: [{algorithm: RING, protocol: LL}]}\n")
    log = os.path.join(tmp, "leftover.jsonl")
    table = "5 -1 6 4 3 7 " + " ".join(["-1"] * 15)
    script = ["init 0 0x1234 2 1"]
    for _ in range(100):
        script += ["call 3 5 1 0 2 " + table, "ev ncclInt8 2 2 1000 2000 1000 3000"]
    script.append("fin")
    env = dict(os.environ, NCCL_TUNER_JAVA_LOG=log, NCCL_TUNER_JAVA_POLICY=pol, NCCL_TUNER_JAVA_MODE="canary",
               NCCL_TUNER_JAVA_HOME=os.environ.get("JAVA_HOME", "/usr/lib/jvm/temurin-25-jdk-amd64"))
    subprocess.run([HOST, LIB], input="\n".join(script) + "\n", env=env, capture_output=True, text=True, timeout=120)
    prof = [json.loads(l) for l in open(log) if '"profiled"' in l] if os.path.exists(log) else []
    ok = len(prof) == 1 and prof[0]["collectives"] == 100 and prof[0]["unjoined"] == 0 \
        and prof[0]["decisionsDropped"] >= 30
    print("canary oracle: leftover bytes: %s: %s" % ("ok" if ok else "FAIL", prof))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
