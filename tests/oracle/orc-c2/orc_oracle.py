#!/usr/bin/env python3
"""Oracle of the policy semantics, written from docs/policy-format.md and docs/abi-versions.md
alone, compared with the built plugin reading a policy's YAML and its `FILE.yaml.compiled`.

Usage (from the repository root, after `make -s build` and `make -s $PWD/build/tests/oracle-host`):
  python3 tests/oracle/orc-c2/orc_oracle.py [--policies N] [--calls M] [--seed S] [--out DIR]
Exit 0 when every output agreed with the model, 1 otherwise (disagreements in DIR/disagreements/).
"""
import argparse
import hashlib
import math
import os
import random
import re
import shutil
import struct
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
JAVA_HOME = os.environ.get("JAVA_HOME", "/usr/lib/jvm/temurin-25-jdk-amd64")
HOST = os.path.join(ROOT, "build/tests/oracle-host")
LIB = os.path.join(ROOT, "build/lib/libnccl-tuner-java.so")
JAR = os.path.join(ROOT, "build/lib/nccl-tuner-java.jar")

COLLS = ["Broadcast", "Reduce", "AllGather", "ReduceScatter", "AllReduce"]
ALGOS = ["TREE", "RING", "COLLNET_DIRECT", "COLLNET_CHAIN", "NVLS", "NVLS_TREE", "PAT"]
PROTOS = ["LL", "LL128", "SIMPLE"]
NB = 252
I32MAX = 2**31 - 1
INF = float("inf")


# ---------------------------------------------------------------- size grid (docs: Sizes)
def grid_value(b):
    if b < 8:
        return b
    e = 3 + (b - 8) // 4
    q = (b - 8) % 4
    return (4 + q) << (e - 2)


def bucket(n):
    if n < 8:
        return n
    e = n.bit_length() - 1
    return 8 + 4 * (e - 3) + ((n >> (e - 2)) & 3)


assert all(bucket(grid_value(b)) == b for b in range(NB))
MAX_FROM_B = bucket(2**63) - 1  # the largest grid point below 2^63


def spell_size(rnd, v, allow_units=True):
    """A valid spelling of byte count v (docs: Sizes)."""
    opts = [v]
    if allow_units:
        for unit, sh, letter in (("KiB", 10, "K"), ("MiB", 20, "M"), ("GiB", 30, "G"), ("TiB", 40, "T")):
            if v >= (1 << sh):
                q = v / (1 << sh)
                if v % (1 << sh) == 0:
                    n = v >> sh
                    opts += ["%d %s" % (n, unit), "%d%s" % (n, unit), "%d%s" % (n, letter)]
                elif (v * 4) % (1 << sh) == 0:
                    opts += ["%s %s" % (repr(q), unit)]
        if v < 4096:
            opts.append("%d B" % v)
    s = rnd.choice(opts)
    if isinstance(s, str) and rnd.random() < 0.3:
        s = '"%s"' % s
    return s


def rcase(rnd, name):
    r = rnd.random()
    if r < 0.75:
        return name
    if r < 0.87:
        return name.lower()
    return "".join(c.upper() if rnd.random() < 0.5 else c.lower() for c in name)


# ---------------------------------------------------------------- policy model
class Cand:
    __slots__ = ("algo", "proto", "channels", "regret", "chunk")

    def __init__(self, algo, proto, channels=None, regret=None, chunk=None):
        self.algo, self.proto, self.channels, self.regret, self.chunk = algo, proto, channels, regret, chunk

    def key(self):
        return (self.algo, self.proto, self.channels)

    def copy(self):
        return Cand(self.algo, self.proto, self.channels, self.regret, self.chunk)


class Rule:
    def __init__(self, coll, b0, b1, pmin, pmax, regbuff, cands):
        self.coll, self.b0, self.b1 = coll, b0, b1  # buckets [b0, b1); b1 == NB: no `to`
        self.pmin, self.pmax = pmin, pmax  # pmin None: no lower bound (0); pmax None: none
        self.regbuff = regbuff  # None any, False, True
        self.cands = cands
        self.pspell = None


class Profile:
    def __init__(self, name):
        self.name = name
        self.match = {}  # key -> spec
        self.rules = []
        self.constants = []  # (yaml name, sortkey tuple, value)


def spec_ok(spec, v):
    """spec: ('any',) | ('eq', n) | ('range', lo|None, hi|None)"""
    if spec[0] == "any":
        return True
    if v is None:
        return False
    if spec[0] == "eq":
        return v == spec[1]
    lo, hi = spec[1], spec[2]
    return (lo is None or v >= lo) and (hi is None or v <= hi)


def profile_matches(p, nranks, nnodes, tv, nvl, ncclver):
    m = p.match
    if "nRanks" in m and not spec_ok(m["nRanks"], nranks):
        return False
    if "nNodes" in m and not spec_ok(m["nNodes"], nnodes):
        return False
    if "nvlDomain" in m:
        if tv < 5:
            return False  # unknown: never matches a profile that names it
        for k, idx in (("nNvlDomains", 0), ("minRanksPerNvlDomain", 1), ("maxRanksPerNvlDomain", 2)):
            if k in m["nvlDomain"] and not spec_ok(m["nvlDomain"][k], nvl[idx]):
                return False
    if "ncclVersion" in m:
        if ncclver is None:
            return False
        if not spec_ok(m["ncclVersion"], ncclver):
            return False
    if "gpu" in m or "computeCapability" in m:
        return False  # no CUDA driver in the host: GPU unknown
    return True


def lookup_rule(p, coll, nbytes, pipe, regbuff, tv):
    if coll < 0 or coll >= 5 or pipe < 0:
        return None
    b = bucket(nbytes)
    found = [r for r in p.rules if r.coll == coll and r.b0 <= b < r.b1
             and (r.pmin or 0) <= pipe and (r.pmax is None or pipe <= r.pmax)
             and (r.regbuff is None or (tv >= 4 and r.regbuff == bool(regbuff)))]
    assert len(found) <= 1, "generator made overlapping rules"
    return found[0] if found else None


def chunk_lookup(p, coll, nbytes, algo, proto):
    if coll < 0 or coll >= 5:
        return None
    b = bucket(nbytes)
    for r in p.rules:
        if r.coll == coll and r.b0 <= b < r.b1:
            for c in r.cands:
                if c.algo == algo and c.proto == proto and c.chunk is not None:
                    return c.chunk
    return None


# ---------------------------------------------------------------- sha256 (docs: The table's sha256)
def profile_sha(p):
    chunks = []
    for r in p.rules:
        for c in r.cands:
            if c.chunk is not None and c.chunk not in chunks:
                chunks.append(c.chunk)
    head, chains, seen = [], [], {}
    for coll in range(5):
        for b in range(NB):
            run = tuple(8 * i for i, r in enumerate(p.rules) if r.coll == coll and r.b0 <= b < r.b1)
            if not run:
                head.append(-1)
                continue
            if run not in seen:
                seen[run] = len(chains)
                chains.extend(run)
                chains.append(-1)
            head.append(seen[run])
    words = []
    for r in p.rules:
        lo = 0 if r.pmin is None else min(r.pmin, I32MAX)
        hi = I32MAX if r.pmax is None else min(r.pmax, I32MAX)
        cw = []
        for c in r.cands:
            ch = 0 if c.channels is None else c.channels
            ck = 0 if c.chunk is None else 1 + chunks.index(c.chunk)
            cw.append((c.algo | c.proto << 8 | ch << 16 | ck << 24) & 0xFFFFFFFF)
        cw += [0] * (4 - len(cw))
        rb = 0 if r.regbuff is None else (2 if r.regbuff else 1)
        words += [lo, hi, len(r.cands)] + cw + [rb]
    out = bytearray()
    for w in head + chains + words:
        out += struct.pack(">I", w & 0xFFFFFFFF)
    for c in chunks:
        out += struct.pack(">q", c)
    if p.constants:
        ent = {}
        for _, key, val in p.constants:
            ent[key] = val
        out += struct.pack(">i", len(ent))
        for key in sorted(ent):
            for k in key:
                out += struct.pack(">i", k)
            v = 0.0 if ent[key] == 0 else float(ent[key])
            out += struct.pack(">d", v)
    return hashlib.sha256(bytes(out)).hexdigest()


# ---------------------------------------------------------------- generator
def gen_match_spec(rnd, lo, hi):
    r = rnd.random()
    if r < 0.35:
        return ("eq", rnd.randint(lo, hi))
    if r < 0.5:
        return ("any",)
    a = rnd.randint(lo, hi)
    b = rnd.randint(a, hi + 4)
    w = rnd.random()
    if w < 0.33:
        return ("range", a, None)
    if w < 0.5:
        return ("range", None, b)
    return ("range", a, b)


def spell_spec(spec, fmt=str):
    if spec[0] == "any":
        return "any"
    if spec[0] == "eq":
        return fmt(spec[1])
    parts = []
    if spec[1] is not None:
        parts.append("min: %s" % fmt(spec[1]))
    if spec[2] is not None:
        parts.append("max: %s" % fmt(spec[2]))
    return "{%s}" % ", ".join(parts)


def ver_code(v):
    return v[0] * 10000 + v[1] * 100 + v[2]


VERSIONS = [(2, 22, 3), (2, 24, 3), (2, 27, 7), (2, 28, 3), (2, 28, 9), (2, 29, 2), (2, 30, 3), (2, 30, 7)]


def gen_candidate(rnd, big_chunks):
    c = Cand(rnd.randrange(7), rnd.randrange(3))
    if rnd.random() < 0.5:
        c.channels = rnd.choice([1, 2, 4, 8, 16, 32, 64, rnd.randint(1, 64)])
    if rnd.random() < 0.5:
        c.regret = rnd.choice([0.0, 0.05, 0.5, 1e-9, 3.0, rnd.random()])
    if rnd.random() < 0.45:
        c.chunk = rnd.choice([4096, 131072, 524288, 1 << 20, 1, I32MAX, rnd.randint(1, I32MAX),
                              rnd.randint(1, 1 << 20)])
    return c


def mutate(rnd, c):
    d = c.copy()
    f = rnd.choice(["algo", "proto", "channels", "chunk", "regret"])
    if f == "algo":
        d.algo = (d.algo + rnd.randint(1, 6)) % 7
    elif f == "proto":
        d.proto = (d.proto + rnd.randint(1, 2)) % 3
    elif f == "channels":
        d.channels = None if d.channels is not None and rnd.random() < 0.3 else rnd.randint(1, 64)
    elif f == "chunk":
        d.chunk = None if d.chunk is not None and rnd.random() < 0.3 else rnd.randint(1, I32MAX)
    else:
        d.regret = rnd.choice([None, 0.0, 0.25, 7.5])
    return d


def gen_profile(rnd, idx, big=False):
    p = Profile("prof-%d" % idx)
    # match
    if rnd.random() < 0.8:
        p.match["nRanks"] = gen_match_spec(rnd, 1, 16)
    if rnd.random() < 0.6:
        p.match["nNodes"] = gen_match_spec(rnd, 1, 4)
    if rnd.random() < 0.25:
        nd = {}
        for k, (lo, hi) in (("nNvlDomains", (1, 4)), ("minRanksPerNvlDomain", (1, 8)),
                            ("maxRanksPerNvlDomain", (1, 8))):
            if rnd.random() < 0.6:
                nd[k] = gen_match_spec(rnd, lo, hi)
        if not nd:
            nd["nNvlDomains"] = gen_match_spec(rnd, 1, 4)
        p.match["nvlDomain"] = nd
    if rnd.random() < 0.25:
        if rnd.random() < 0.4:
            p.match["ncclVersion"] = ("eq", rnd.choice(VERSIONS))
        else:
            a, b = sorted(rnd.sample(VERSIONS, 2))
            w = rnd.random()
            p.match["ncclVersion"] = ("range", a if w < 0.7 else None, b if w > 0.3 else None)
    if rnd.random() < 0.07:
        p.match["gpu"] = rnd.choice(["H200", "h100", "NVIDIA"])
    if rnd.random() < 0.04:
        p.match["computeCapability"] = ("eq", rnd.choice(["9.0", "8.0"]))
    # candidate pool: base candidates and single-field mutations of them
    pool = [gen_candidate(rnd, big) for _ in range(rnd.randint(1, 14 if not big else 40))]
    for _ in range(rnd.randint(0, 12 if not big else 60)):
        pool.append(mutate(rnd, rnd.choice(pool)))
    # rules: per collective, disjoint lanes (numPipeOps range x regBuff set), each segmented
    for coll in range(5):
        if rnd.random() < 0.25 and not big:
            continue
        m = rnd.choice([1, 1, 1, 2, 2, 3, 4])
        cuts = sorted(rnd.sample(range(1, 7), m - 1))
        first_lo = rnd.choice([None, None, 0, 1])
        pranges = []
        lo = first_lo
        for c in cuts:
            pranges.append((lo, c))
            lo = c + 1
        pranges.append((lo, None))
        if rnd.random() < 0.15:  # an exact upper bound past 2^31 - 1 (capped)
            a, _ = pranges[-1]
            pranges[-1] = (a, rnd.choice([I32MAX, I32MAX - 1, 1000]))
        rbsets = rnd.choice([[None], [None], [False, True], [True], [False]])
        for (plo, phi) in pranges:
            for rb in rbsets:
                nseg = rnd.randint(1, 6 if not big else 60)
                pts = sorted(rnd.sample(range(0, MAX_FROM_B + 2), min(nseg + 1, MAX_FROM_B + 2)))
                for a, b in zip(pts, pts[1:]):
                    if rnd.random() < 0.35:
                        continue
                    if b == MAX_FROM_B + 1:
                        b = NB  # no upper bound
                    k = rnd.randint(1, 4)
                    cands = []
                    for _ in range(k * 3):
                        c = rnd.choice(pool)
                        if all(c.key() != d.key() for d in cands):
                            cands.append(c)
                        if len(cands) == k:
                            break
                    p.rules.append(Rule(coll, a, b, plo, phi, rb, [c.copy() for c in cands]))
    if not p.rules:
        p.rules.append(Rule(rnd.randrange(5), 0, NB, None, None, None, [rnd.choice(pool).copy()]))
    rnd.shuffle(p.rules)
    # constants: only the sha256 sees them (the host does not print the struct)
    if rnd.random() < 0.15:
        seen = set()
        for _ in range(rnd.randint(1, 5)):
            w = rnd.randrange(3)
            if w == 0:
                a, pr = rnd.randrange(7), rnd.randrange(3)
                name, key = "baseLatencies.%s.%s" % (ALGOS[a], PROTOS[pr]), (0, a, pr)
            elif w == 1:
                l, a, pr = rnd.randrange(3), rnd.randrange(7), rnd.randrange(3)
                name = "hwLatencies.%s.%s.%s" % (["NVLINK", "PCI", "NET"][l], ALGOS[a], PROTOS[pr])
                key = (1, l, a, pr)
            else:
                arr = rnd.randrange(5)
                cap, sc = rnd.randrange(4), rnd.randrange(3)
                name = "%s.%s.%s" % (["llMaxBws", "perChMaxRingLL128Bws", "perChMaxTreeLL128Bws",
                                      "perChMaxTreeBws", "perChMaxNVLSTreeBws"][arr],
                                     ["VOLTA", "AMPERE", "HOPPER", "BLACKWELL"][cap],
                                     ["1NODE", "2NODES", "4NODES"][sc])
                key = (2 + arr, cap, sc)
            if key in seen:
                continue
            seen.add(key)
            p.constants.append((name, key, rnd.choice([0.0, 1.5, 7.5, 150.0, 1e6, round(rnd.random() * 100, 3)])))
    return p


def special_profile(rnd, idx, nchunks):
    """One profile whose rules each name a distinct chunkSize (nchunks of them, 255 is what 8 bits of
    a candidate word hold) and many distinct candidates: rules on consecutive buckets per collective."""
    p = Profile("special-%d" % idx)
    k = 0
    combos = [(a, pr, ch) for ch in [None] + list(range(1, 65)) for a in range(7) for pr in range(3)]
    rnd.shuffle(combos)
    for coll in range(5):
        for b in range(0, MAX_FROM_B):
            if k >= nchunks:
                break
            cands = []
            for j in range(rnd.randint(1, 4)):
                a, pr, ch = combos[(k * 4 + j) % len(combos)]
                if any(c.key() == (a, pr, ch) for c in cands):
                    continue
                cands.append(Cand(a, pr, ch, None, None))
            cands[0].chunk = 1000 + k
            p.rules.append(Rule(coll, b, b + 1, None, None, None, cands))
            k += 1
    rnd.shuffle(p.rules)
    return p


def fmt_ver(v):
    return "%d.%d.%d" % v


def write_yaml(rnd, pol):
    L = ["schema: nccl-tuner-java/v1", "name: %s" % pol["name"]]
    if pol["mode"] is not None:
        L.append("mode: %s" % pol["mode"])
    if rnd.random() < 0.3:
        L.append("description: random policy from orc_oracle.py")
    L.append("profiles:")
    for p in pol["profiles"]:
        L.append("  - name: %s" % p.name)
        if p.match:
            L.append("    match:")
            for k, spec in p.match.items():
                if k == "nvlDomain":
                    L.append("      nvlDomain:")
                    for kk, ss in spec.items():
                        L.append("        %s: %s" % (kk, spell_spec(ss)))
                elif k == "ncclVersion":
                    L.append("      ncclVersion: %s" % spell_spec(spec, lambda v: '"%s"' % fmt_ver(v)))
                elif k == "gpu":
                    L.append("      gpu: %s" % spec)
                elif k == "computeCapability":
                    L.append('      computeCapability: "%s"' % spec[1])
                else:
                    L.append("      %s: %s" % (k, spell_spec(spec)))
        if p.constants:
            L.append("    constants:")
            for name, _, v in p.constants:
                L.append("      %s: %r" % (name, v))
        L.append("    rules:")
        for r in p.rules:
            L.append("      - collective: %s" % rcase(rnd, COLLS[r.coll]))
            fr = spell_size(rnd, grid_value(r.b0))
            if r.b1 == NB:
                L.append("        bytes: {from: %s}" % fr)
            else:
                L.append("        bytes: {from: %s, to: %s}" % (fr, spell_size(rnd, grid_value(r.b1))))
            if r.pmin is None and r.pmax is None:
                w = rnd.random()
                if w < 0.3:
                    L.append("        numPipeOps: any")
            elif r.pmin is not None and r.pmin == r.pmax and rnd.random() < 0.6:
                L.append("        numPipeOps: %d" % r.pmin)
            else:
                parts = []
                if r.pmin is not None:
                    parts.append("min: %d" % r.pmin)
                if r.pmax is not None:
                    parts.append("max: %d" % r.pmax)
                L.append("        numPipeOps: {%s}" % ", ".join(parts))
            if r.regbuff is None:
                if rnd.random() < 0.3:
                    L.append("        regBuff: any")
            else:
                L.append("        regBuff: %s" % ("true" if r.regbuff else "false"))
            if rnd.random() < 0.2:
                L.append("        ncclPick: {algorithm: %s, protocol: %s}" % (ALGOS[rnd.randrange(7)],
                                                                            PROTOS[rnd.randrange(3)]))
            if rnd.random() < 0.2:
                L.append("        ncclRegret: %s" % (rnd.choice([".nan", ".NaN"]) if pol.get("nan") else
                                                     repr(rnd.choice([0.0, 0.21, 3.5]))))
            L.append("        candidates:")
            for c in r.cands:
                fields = ["algorithm: %s" % rcase(rnd, ALGOS[c.algo]), "protocol: %s" % rcase(rnd, PROTOS[c.proto])]
                if c.channels is not None:
                    fields.append("channels: %d" % c.channels)
                if c.regret is not None:
                    fields.append("regret: %s" % (".nan" if pol.get("nan") else repr(c.regret)))
                if c.chunk is not None:
                    fields.append("chunkSize: %s" % spell_size(rnd, c.chunk))
                if rnd.random() < 0.5:
                    L.append("          - {%s}" % ", ".join(fields))
                else:
                    L.append("          - " + fields[0])
                    for f in fields[1:]:
                        L.append("            " + f)
    return "\n".join(L) + "\n"


def f32str(x):
    return "%.9g" % struct.unpack("f", struct.pack("f", x))[0]


def gen_calls(rnd, pol, tv, ncalls):
    """A host script and what the model expects for each R/K/I line."""
    S = ["version %d" % tv]
    ver = rnd.choice(VERSIONS + [None])
    S.append("ncclversion %d" % (0 if ver is None else ver_code(ver)))
    ncomm = rnd.randint(1, 6)
    comms = []
    for cid in range(ncomm):
        nr, nn = rnd.randint(1, 16), rnd.randint(1, 4)
        nvl = (rnd.randint(1, 4), rnd.randint(1, 8), rnd.randint(1, 8))  # NCCL passes >= 1; 0 vs an omitted min is unsaid
        S.append("init %d %d %d %d %d %d" % (cid, nr, nn, *nvl))
        prof = None
        for p in ([] if pol.get("nan") else pol["profiles"]):
            if profile_matches(p, nr, nn, tv, nvl, ver):
                prof = p
                break
        comms.append(prof)
    mode = pol["effmode"]
    enforce = mode == "enforce"
    exp = [("I", prof) for prof in comms]
    for _ in range(ncalls):
        cid = rnd.randrange(ncomm)
        p = comms[cid]
        coll = rnd.randrange(5) if rnd.random() < 0.97 else rnd.randint(5, 9)
        rules = p.rules if p is not None and p.rules else None
        w = rnd.random()
        if rules and w < 0.7:
            r = rnd.choice(rules)
            if rnd.random() < 0.8:
                coll = r.coll
            b = rnd.choice([r.b0, r.b0, max(r.b1 - 1, r.b0), min(r.b1, NB - 1), rnd.randint(r.b0, r.b1 - 1)])
            lo, hi = grid_value(b), (grid_value(b + 1) if b + 1 < NB else 2**64)
            nbytes = rnd.choice([lo, hi - 1, rnd.randrange(lo, hi)])
            if rnd.random() < 0.1 and nbytes > 0:
                nbytes -= 1
        elif w < 0.85:
            nbytes = rnd.randint(0, 2**rnd.randint(1, 64) - 1)
        else:
            nbytes = rnd.choice([0, 1, 7, 8, 9, 2**63, 2**64 - 1, 2**63 - 1, 65536, 65535])
        pipe = rnd.choice([1, 1, 1, 2, 3, 0, 4, 5, 6, 7, 8, 100, -1, I32MAX])
        regbuff = rnd.randint(0, 1)
        if rnd.random() < 0.92:
            nA, nP = rnd.choice([7, 7, 7, 6, 5, 2]), 3
        else:
            nA, nP = rnd.choice([(7, 2), (7, 1), (3, 2)])
        table = []
        pat = rnd.random()
        rowoff = [rnd.random() < 0.3 for _ in range(nA)] if pat < 0.4 else [False] * nA
        coloff = [rnd.random() < 0.25 for _ in range(nP)] if 0.3 < pat < 0.6 else [False] * nP
        for a in range(nA):
            for pr in range(nP):
                if rowoff[a] or coloff[pr] or rnd.random() < 0.15:
                    table.append("-1")
                else:
                    x = rnd.random()
                    if x < 0.03:
                        table.append("nan")
                    elif x < 0.06:
                        table.append("0")
                    elif x < 0.07:
                        table.append("-0")
                    elif x < 0.08:
                        table.append("-2.5")
                    else:
                        table.append(f32str(rnd.uniform(0.5, 5000)))
        nch = rnd.choice([0, 0, 1, 4, 16, 32, rnd.randint(0, 64)])
        S.append("call %d %d %d %d %d %d %d %d %s" % (cid, coll, nbytes, pipe, regbuff, nA, nP, nch, " ".join(table)))
        out_t, out_ch = list(table), nch
        if enforce and p is not None:
            r = lookup_rule(p, coll, nbytes, pipe, regbuff, tv)
            if r is not None:
                for c in r.cands:
                    if c.algo < nA and c.proto < nP:
                        v = float(table[c.algo * nP + c.proto])
                        if v >= 0:  # NaN is not offered
                            out_t[c.algo * nP + c.proto] = "0"
                            if c.channels is not None:
                                out_ch = c.channels
                            break
        exp.append(("R", "R 0 %d %s" % (out_ch, " ".join(out_t))))
        if tv == 6 and rnd.random() < 0.5:
            if p is not None and rnd.random() < 0.6 and p.rules:
                r = rnd.choice(p.rules)
                c = rnd.choice(r.cands)
                algo, proto = c.algo, c.proto
                if rnd.random() < 0.5:
                    coll = r.coll
                    b = rnd.randint(r.b0, r.b1 - 1)
                    nbytes = grid_value(b)
            else:
                algo, proto = rnd.randrange(7), rnd.randrange(3)
            dflt = rnd.choice([131072, 524288, 1 << 22, rnd.randint(1, 1 << 24)])
            S.append("chunk %d %d %d %d %d %d %d" % (cid, coll, nbytes, algo, proto, rnd.randint(1, 32), dflt))
            got = dflt
            if enforce and p is not None:
                ck = chunk_lookup(p, coll, nbytes, algo, proto)
                if ck is not None:
                    got = ck
            exp.append(("K", "K 0 %d" % got))
    for cid in range(ncomm):
        S.append("destroy %d" % cid)
        exp.append(("D", "D 0"))
    return "\n".join(S) + "\n", exp


def norm(line):
    return " ".join("nan" if t in ("-nan", "nan") else t for t in line.split())


def check_output(out, exp, pol, want_compiled):
    """Returns a list of disagreement strings."""
    bad = []
    lines = out.splitlines()
    pend = []  # log lines since the last result line
    got = []
    for ln in lines:
        if ln.startswith("L "):
            pend.append(ln)
        else:
            got.append((ln, pend))
            pend = []
    if len(got) != len(exp):
        return ["output has %d result lines, expected %d" % (len(got), len(exp))]
    first_init = True
    for i, ((ln, logs), (kind, e)) in enumerate(zip(got, exp)):
        if kind == "I":
            if ln != "I 0":
                bad.append("line %d: got %r, expected 'I 0'" % (i, ln))
            logtxt = "\n".join(logs)
            if first_init:
                first_init = False
                src = ("read from its compiled form" if want_compiled else "parsed from its YAML")
                if pol.get("nan"):
                    src = "policy refused, the plugin changes nothing"
                if src not in logtxt:
                    bad.append("first init: expected the notice %r, log: %s" % (src, logtxt[:600]))
            prof = e
            m = re.search(r"profile (\S+) mode (\S+) rules (\d+) sha256 ([0-9a-f]{64})", logtxt)
            if prof is None:
                if m:
                    bad.append("init %d: expected no profile, got profile %s" % (i, m.group(1)))
            else:
                if not m:
                    bad.append("init %d: expected profile %s, log: %s" % (i, prof.name, logtxt[-600:]))
                else:
                    if m.group(1) != prof.name:
                        bad.append("init %d: expected profile %s, got %s" % (i, prof.name, m.group(1)))
                    elif int(m.group(3)) != len(prof.rules):
                        bad.append("init %d: profile %s: expected rules %d, got %s" % (i, prof.name, len(prof.rules), m.group(3)))
                    elif m.group(4) != prof.sha:
                        bad.append("init %d: profile %s: expected sha256 %s, got %s" % (i, prof.name, prof.sha, m.group(4)))
                    if m.group(2) != pol["effmode"]:
                        bad.append("init %d: expected mode %s, got %s" % (i, pol["effmode"], m.group(2)))
        elif norm(ln) != norm(e):
            bad.append("result line %d: expected %r, got %r" % (i, e, ln))
    return bad


def run_host(d, yaml_name, script, env_mode):
    env = dict(os.environ)
    env["NCCL_TUNER_JAVA_POLICY"] = os.path.join(d, yaml_name)
    env["JAVA_HOME"] = JAVA_HOME
    env.pop("NCCL_TUNER_JAVA_MODE", None)
    if env_mode is not None:
        env["NCCL_TUNER_JAVA_MODE"] = env_mode
    sp = os.path.join(d, "script.txt")
    with open(sp, "w") as f:
        f.write(script)
    r = subprocess.run([HOST, LIB, sp], env=env, capture_output=True, text=True, timeout=120)
    return r.returncode, r.stdout, r.stderr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--policies", type=int, default=200)
    ap.add_argument("--calls", type=int, default=300, help="getCollInfo calls per policy (over the versions)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default="/tmp/orc-c2-run")
    ap.add_argument("--big-every", type=int, default=10, help="every Nth policy is a big one (many rules)")
    ap.add_argument("--nan-every", type=int, default=25, help="every Nth policy has NaN regrets (refused)")
    ap.add_argument("--special", action="store_true", help="profiles of 200..1000 rules, one chunkSize each")
    args = ap.parse_args()
    shutil.rmtree(args.out, ignore_errors=True)
    os.makedirs(os.path.join(args.out, "disagreements"))
    tot = {"policies": 0, "calls": 0, "chunks": 0, "inits": 0, "runs": 0, "bad": 0}
    for pi in range(args.policies):
        rnd = random.Random(args.seed * 1000003 + pi)
        big = args.big_every > 0 and pi % args.big_every == args.big_every - 1
        if args.special:
            profiles = [special_profile(rnd, 0, rnd.choice([200, 255, 256, 257, 300, 1000]))]
        else:
            profiles = [gen_profile(rnd, i, big) for i in range(rnd.randint(1, 4))]
        for p in profiles:
            p.sha = profile_sha(p)
        env_mode = rnd.choice(["enforce"] * 5 + ["shadow"] * 2 + [None])
        pmode = rnd.choice([None, "enforce", "shadow", "off"] + (["canary"] if env_mode else []))
        effmode = env_mode or pmode or "enforce"
        pol = {"name": "orc-%d-%d" % (args.seed, pi), "mode": pmode, "profiles": profiles, "effmode": effmode,
               "nan": args.nan_every > 0 and pi % args.nan_every == args.nan_every // 2}
        if pol["nan"]:  # make sure a NaN is written: every candidate names a regret
            for p in profiles:
                for r in p.rules:
                    r.cands[0].regret = 0.0
        text = write_yaml(rnd, pol)
        pd = os.path.join(args.out, "p%04d" % pi)
        dy, dc = os.path.join(pd, "yaml"), os.path.join(pd, "compiled")
        os.makedirs(dy)
        os.makedirs(dc)
        for d in (dy, dc):
            with open(os.path.join(d, "policy.yaml"), "w") as f:
                f.write(text)
        cr = subprocess.run([os.path.join(JAVA_HOME, "bin/java"), "--enable-native-access=ALL-UNNAMED", "-cp", JAR, "io.nccltuner.engine.CompiledPolicy",
                             os.path.join(dc, "policy.yaml")], capture_output=True, text=True)
        problems = []
        if pol["nan"]:
            if cr.returncode == 0 or os.path.exists(os.path.join(dc, "policy.yaml.compiled")):
                problems.append("CompiledPolicy wrote a policy with NaN regrets: rc %d" % cr.returncode)
        elif cr.returncode != 0 or not os.path.exists(os.path.join(dc, "policy.yaml.compiled")):
            problems.append("CompiledPolicy refused a valid policy: rc %d stdout %r stderr %r" % (
                cr.returncode, cr.stdout.strip()[:400], cr.stderr.strip()[:400]))
        versions = [4, 5, 6] + ([3] if rnd.random() < 0.3 else [])
        per = max(1, args.calls // len(versions))
        tot["policies"] += 1
        for tv in versions:
            script, exp = gen_calls(rnd, pol, tv, per)
            results = []
            for d, compiled in ((dy, False), (dc, True)):
                rc, out, err = run_host(d, "policy.yaml", script, env_mode)
                results.append([ln for ln in out.splitlines() if not ln.startswith("L ")])
                tot["runs"] += 1
                b = ["host rc %d: %s" % (rc, err[-400:])] if rc != 0 else check_output(out, exp, pol, compiled)
                if b:
                    problems.append("v%d %s: %d problem(s): %s" % (tv, "compiled" if compiled else "yaml", len(b), "; ".join(b[:6])))
                    with open(os.path.join(d, "script-v%d.txt" % tv), "w") as f:
                        f.write(script)
                    with open(os.path.join(d, "out-v%d.txt" % tv), "w") as f:
                        f.write(out + err)
                    with open(os.path.join(d, "expected-v%d.txt" % tv), "w") as f:
                        f.write("\n".join(e if isinstance(e, str) else ("I " + (e.name + " " + e.sha if e else "no-profile")) for _, e in exp) + "\n")
            if results[0] != results[1]:
                problems.append("v%d: YAML and compiled results differ from each other (first at result line %d)" % (
                    tv, next((i for i, (a, b) in enumerate(zip(*results)) if a != b), min(map(len, results)))))
            tot["calls"] += sum(1 for k, _ in exp if k == "R")
            tot["chunks"] += sum(1 for k, _ in exp if k == "K")
            tot["inits"] += sum(1 for k, _ in exp if k == "I")
        if problems:
            tot["bad"] += 1
            with open(os.path.join(args.out, "disagreements", "p%04d.txt" % pi), "w") as f:
                f.write("policy %s (env mode %s)\n" % (pd, env_mode) + "\n".join(problems) + "\n")
            print("p%04d: %s" % (pi, problems[0][:300]), flush=True)
        else:
            shutil.rmtree(pd)
        if pi % 20 == 19:
            print("progress: %s" % tot, flush=True)
    print("done: %d policies, %d host runs, %d getCollInfo calls x 2 (yaml, compiled), %d getChunkSize x 2, "
          "%d inits x 2; policies with a disagreement: %d" % (tot["policies"], tot["runs"], tot["calls"],
                                                              tot["chunks"], tot["inits"], tot["bad"]))
    return 1 if tot["bad"] else 0


if __name__ == "__main__":
    sys.exit(main())
