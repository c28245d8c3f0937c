#!/usr/bin/env python3
"""Checks one e2e run (tests/gpu/e2e.sh) from NCCL's own logs; Python 3 standard library only.

Usage: e2e_check.py OUT_DIR [--policy FILE]
OUT_DIR holds none/, shadow/ and enforce/, each with, per rank r: nccl.rank<r>.log (NCCL_DEBUG_FILE),
rc.rank<r> (exit status), result.rank<r>.json (from e2e_worker.py), rank<r>.out (stdout+stderr) and,
for the plugin runs, decisions.rank<r>.jsonl (NCCL_TUNER_JAVA_LOG). Prints one PASS/FAIL line per
check, the latency table and `e2e: N passed, M failed`; exit 0 only if nothing failed.
"""
import json
import math
import os
import re
import sys
from collections import Counter, defaultdict

from checks import Checks, read_jsonl

MODES = ("none", "shadow", "enforce")
RANKS = (0, 1)
ALGOS = ("TREE", "RING", "COLLNET_DIRECT", "COLLNET_CHAIN", "NVLS", "NVLS_TREE", "PAT")
PROTOS = ("LL", "LL128", "SIMPLE")
PLUGIN = "nccl-tuner-java"

# NCCL 2.24+ (enqueue.cc, rank 0 only): "AllReduce: 1048576 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..0}"
# AllGather/ReduceScatter print bytes per rank; the tuner sees nRanks times that.
SEL = re.compile(r"(?:^|\s)([A-Za-z]+): (\d+) Bytes -> Algo (\w+) proto (\w+)"
                 r"(?: channel\{Lo\.\.Hi\}=\{(?:(\d+)\.\.(\d+)|auto)\})?")
# NCCL 2.22/2.23 (topoGetAlgoInfo, rank 0 only): "1048576 Bytes -> Algo 1 proto 0 time 12.3"; no collective.
SEL_OLD = re.compile(r"NCCL INFO (\d+) Bytes -> Algo (\d+) proto (\d+) time")
USING = re.compile(r"TUNER/Plugin: Using (?:tuner plugin )?(\S+)(?: \(v(\d+)\))?")
POLICY = re.compile(r"TUNER/Java: policy (.+?) profile (.+?) mode (\w+) rules (\d+) sha256 ([0-9a-f]{64}) "
                    r"\(nRanks=(\d+) nNodes=(\d+)\)")
WARN = re.compile(r"WARN TUNER/Java: (.*)")
SUMMARY = re.compile(r"TUNER/Java: (summary .*)")
COMM = re.compile(r"rank (\d+) nRanks (\d+) nNodes (\d+)")
SUMMARY_FIELDS = re.compile(r"summary profile .+? mode (\w+): calls (\d+), rule hits (\d+), applied (\d+)")
CHANNELS = re.compile(r"(\d+) coll channels")


def fmt_bytes(n):
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return "%d %s" % (n >> shift, unit)
    return "%d B" % n


class Log:
    """What one rank's NCCL debug file says."""

    def __init__(self, path):
        self.path = path
        self.exists = os.path.isfile(path)
        self.sel = []            # (coll, bytes as printed, algo, proto, lo, hi); lo/hi None if not printed
        self.old_format = False
        self.using = []          # plugin names NCCL loaded
        self.policy = []         # (name, profile, mode, rules, sha, nRanks, nNodes)
        self.warns = []
        self.summaries = []
        self.n_ranks = self.n_nodes = self.coll_channels = None
        if not self.exists:
            return
        with open(path, errors="replace") as f:
            for line in f:
                m = SEL.search(line)
                if m:
                    lo = int(m.group(5)) if m.group(5) is not None else None
                    hi = int(m.group(6)) if m.group(6) is not None else None
                    self.sel.append((m.group(1), int(m.group(2)), m.group(3), m.group(4), lo, hi))
                    continue
                m = SEL_OLD.search(line)
                if m:
                    self.old_format = True
                    a, p = int(m.group(2)), int(m.group(3))
                    self.sel.append(("*", int(m.group(1)), ALGOS[a] if a < len(ALGOS) else str(a),
                                     PROTOS[p] if p < len(PROTOS) else str(p), None, None))
                    continue
                m = USING.search(line)
                if m:
                    self.using.append(m.group(1))
                m = POLICY.search(line)
                if m:
                    self.policy.append(m.groups())
                m = WARN.search(line)
                if m:
                    self.warns.append(m.group(1).strip())
                m = SUMMARY.search(line)
                if m:
                    self.summaries.append(m.group(1).strip())
                if "NCCL INFO comm " in line and self.n_ranks is None:
                    m = COMM.search(line)
                    if m:
                        self.n_ranks, self.n_nodes = int(m.group(2)), int(m.group(3))
                m = CHANNELS.search(line)
                if m and self.coll_channels is None:
                    self.coll_channels = int(m.group(1))

    def key(self, s, n_ranks):
        """(collective, nBytes as the tuner saw it) for a selection line."""
        coll, nbytes = s[0], s[1]
        if coll in ("AllGather", "ReduceScatter"):
            nbytes *= n_ranks
        return (coll, nbytes)


def read_decisions(path, old_format=False):
    """Decision-log records by (collective, nBytes); None if the file is missing."""
    recs = read_jsonl(path)
    for r in recs or ():
        r["key"] = ("*" if old_format else r.get("collective"), int(r.get("nBytes", -1)))
    return recs


def read_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def read_rc(path):
    try:
        with open(path) as f:
            return int(f.read().strip())
    except (OSError, ValueError):
        return None


def expected_channels(coll, nbytes_printed, proto, forced, coll_channels, n_ranks):
    """Channels NCCL 2.24+ spreads one collective over when the tuner sets nChannels=forced and the
    collective is alone in its plan (NCCL src/enqueue.cc scheduleCollTasksToPlan): small messages use
    fewer channels (16 KiB of traffic per channel at least), and never more than the communicator has."""
    min_traffic = 16 << 10

    def div_up(a, b):
        return -(-a // b)
    per_byte = {"AllReduce": 2, "AllGather": n_ranks, "ReduceScatter": n_ranks}.get(coll, 1)
    if proto == "LL":
        per_byte *= 4
    traffic = max(min_traffic, nbytes_printed * per_byte)
    per_channel = max(min_traffic, traffic // min(forced, coll_channels))
    cell = div_up(div_up(min_traffic, per_byte), 16) * 16
    cells = max(1, div_up(nbytes_printed, cell))
    cells_per_channel = min(cells, div_up(per_channel, cell * per_byte))
    return min(coll_channels, div_up(cells, cells_per_channel))


def pick_str(s):
    if s is None:
        return "-"
    ch = "" if s[4] is None else " {%d..%d}" % (s[4], s[5])
    return "%s/%s%s" % (s[2], s[3], ch)


def policy_name(path):
    """The top-level `name:` of a policy YAML (the one thing read from it; no YAML library)."""
    try:
        with open(path) as f:
            for line in f:
                m = re.match(r"name:\s*(.*?)\s*(?:#.*)?$", line)
                if m:
                    return m.group(1).strip("'\"")
    except OSError:
        pass
    return None


class Checker(Checks):
    def __init__(self, out_dir, expect_policy=None):
        super().__init__()
        self.out = out_dir
        self.expect_policy = expect_policy
        self.lines = []

    def f(self, mode, name):
        return os.path.join(self.out, mode, name)

    def run(self):
        logs = {m: {r: Log(self.f(m, "nccl.rank%d.log" % r)) for r in RANKS} for m in MODES}
        results = {m: {r: read_json(self.f(m, "result.rank%d.json" % r)) for r in RANKS} for m in MODES}
        old = any(logs[m][0].old_format for m in MODES)
        decisions = {m: {r: read_decisions(self.f(m, "decisions.rank%d.jsonl" % r), old) for r in RANKS}
                     for m in ("shadow", "enforce")}
        n_ranks = logs["none"][0].n_ranks or 2

        # ---- each run: exit status, results, what NCCL saw ----
        for m in MODES:
            rcs = [read_rc(self.f(m, "rc.rank%d" % r)) for r in RANKS]
            self.check(all(rc == 0 for rc in rcs), "%s: both ranks exited 0" % m,
                       "exit status %s%s" % (rcs, " (124 = timeout)" if 124 in rcs else ""))
            self.check_results(m, results[m])
            l0 = logs[m][0]
            sizes = sorted({s["bytes"] for s in (results[m][0] or {}).get("allreduce", [])})
            seen = {s[1] for s in l0.sel if s[0] in ("AllReduce", "*")}
            missing = [fmt_bytes(b) for b in sizes if b not in seen]
            self.check(l0.exists and l0.sel and (l0.n_ranks, l0.n_nodes) == (2, 2) and not missing,
                       "%s: NCCL (rank 0) saw nRanks=2 nNodes=2 and logged its selection for every size" % m,
                       "%s, nRanks=%s nNodes=%s, %d selection lines%s" % (
                           m + "/nccl.rank0.log" + ("" if l0.exists else " missing"), l0.n_ranks, l0.n_nodes,
                           len(l0.sel), ", no line for " + ", ".join(missing) if missing else ""))

        # ---- the plugin: loaded or not, policy line, warnings ----
        loaded = [r for r in RANKS if PLUGIN in logs["none"][r].using]
        self.check(not loaded, "none: plugin not loaded", "loaded on ranks %s" % loaded if loaded else "")
        shas = set()
        for m in ("shadow", "enforce"):
            using = {r: logs[m][r].using for r in RANKS}
            self.check(all(PLUGIN in u for u in using.values()),
                       "%s: NCCL loaded %s on both ranks (TUNER/Plugin: Using %s)" % (m, PLUGIN, PLUGIN),
                       "" if all(PLUGIN in u for u in using.values()) else "plugins seen %s" % using)
            pol = {r: logs[m][r].policy for r in RANKS}
            bad = []
            for r in RANKS:
                if not pol[r]:
                    bad.append("rank %d: no 'TUNER/Java: policy ... sha256' line" % r)
                for name, profile, mode, rules, sha, nr, nn in pol[r]:
                    shas.add(sha)
                    if mode != m:
                        bad.append("rank %d: mode %s" % (r, mode))
                    if self.expect_policy and name != self.expect_policy:
                        bad.append("rank %d: policy %s, expected %s" % (r, name, self.expect_policy))
            first = pol[0][0] if pol[0] else None
            self.check(not bad, "%s: policy line on both ranks with mode %s and sha256" % (m, m),
                       "; ".join(bad) if bad else "policy %s profile %s rules %s sha256 %s..%s" % (
                           first[0], first[1], first[3], first[4][:6], first[4][-3:]))
            warns = [w for r in RANKS for w in logs[m][r].warns]
            for r in RANKS:
                try:
                    with open(self.f(m, "rank%d.out" % r), errors="replace") as f:
                        warns += [x.group(1) for x in WARN.finditer(f.read())]
                except OSError:
                    pass
            self.check(not warns, "%s: no TUNER/Java warnings" % m, "; ".join(sorted(set(warns)))[:400])
            bad = []
            for r in RANKS:
                sums = [SUMMARY_FIELDS.match(x) for x in logs[m][r].summaries]
                sums = [x for x in sums if x]
                recs = decisions[m][r] or []
                if not sums:
                    bad.append("rank %d: no summary line (the tuner's destroy did not run?)" % r)
                for x in sums:
                    mode, hits, applied = x.group(1), int(x.group(3)), int(x.group(4))
                    if mode != m or applied != (hits if m == "enforce" else 0) or hits != len(recs):
                        bad.append("rank %d: %s; %d decision-log records" % (r, x.group(0)[:120], len(recs)))
            s0 = [x for x in logs[m][0].summaries if SUMMARY_FIELDS.match(x)]
            self.check(not bad, "%s: summary at destroy on both ranks, rule hits = decision-log records, applied %s"
                       % (m, "= rule hits" if m == "enforce" else "0"),
                       "; ".join(bad[:3]) if bad else s0[0][:110] + "..." if s0 else "")
        self.check(len(shas) == 1, "policy sha256 identical on all ranks in shadow and enforce",
                   "%d distinct: %s" % (len(shas), ", ".join(sorted(x[:12] for x in shas))) if len(shas) != 1 else "")

        # ---- shadow: decision log, nothing changed ----
        sh = decisions["shadow"]
        bad = [r for r in RANKS if not sh[r]]
        applied = sum(1 for r in RANKS for x in (sh[r] or []) if x.get("applied"))
        self.check(not bad and applied == 0, "shadow: decision log on both ranks, no record applied",
                   "%s records; %s%d applied" % ([len(sh[r] or []) for r in RANKS],
                                                 "empty or missing on ranks %s; " % bad if bad else "", applied))
        none_sel = Counter(logs["none"][0].sel)
        shadow_sel = Counter(logs["shadow"][0].sel)
        diff = list((none_sel - shadow_sel).items())[:3] + list((shadow_sel - none_sel).items())[:3]
        self.check(none_sel == shadow_sel and sum(none_sel.values()) > 0,
                   "shadow: NCCL's selections equal the no-plugin run's",
                   "%d lines each" % sum(none_sel.values()) if none_sel == shadow_sel else
                   "none %d lines, shadow %d; differ e.g. %s" % (
                       sum(none_sel.values()), sum(shadow_sel.values()),
                       "; ".join("%s x%d" % (pick_line(s), c) for s, c in diff)))
        by_key = defaultdict(set)
        for r in sh[0] or []:
            by_key[r["key"]].add((r.get("policyPick"), int(r.get("channels", 0))))
        ran = defaultdict(set)
        for s in logs["shadow"][0].sel:
            ran[logs["shadow"][0].key(s, n_ranks)].add("%s/%s" % (s[2], s[3]))
        wrong = sorted({(r["key"], r.get("ncclPick")) for r in sh[0] or [] if r.get("ncclPick") not in ran[r["key"]]})
        self.check(sh[0] and not wrong, "shadow: the decision log's ncclPick is what NCCL ran",
                   "%d records" % len(sh[0] or []) if not wrong else "; ".join(
                       "%s %s: ncclPick %s, NCCL ran %s" % (k[0], fmt_bytes(k[1]), p, "|".join(sorted(ran[k])) or "nothing")
                       for k, p in wrong[:4]))
        disagree = sum(1 for r in sh[0] or [] if r.get("ncclPick") != r.get("policyPick"))

        # ---- enforce: NCCL ran the policy's pick ----
        le = logs["enforce"][0]
        cc = le.coll_channels
        checked, errs, unruled_e = 0, [], Counter()
        for s in le.sel:
            k = le.key(s, n_ranks)
            if k not in by_key:
                unruled_e[s] += 1
                continue
            checked += 1
            picks = by_key[k]
            if ("%s/%s" % (s[2], s[3])) not in {p for p, _ in picks}:
                errs.append("%s %s ran %s, policy %s" % (s[0], fmt_bytes(s[1]), pick_str(s), "|".join(sorted(p for p, _ in picks))))
                continue
            forced = {c for p, c in picks if p == "%s/%s" % (s[2], s[3])}
            if len(forced) == 1 and 0 not in forced and s[4] is not None:
                c = forced.pop()
                want = expected_channels(s[0], s[1], s[3], c, cc, n_ranks) if cc else None
                used = s[5] - s[4] + 1
                if (want is not None and used != want) or (want is None and used > c):
                    errs.append("%s %s ran %s, policy channels %d: expected %s channel(s)" % (
                        s[0], fmt_bytes(s[1]), pick_str(s), c, want if want is not None else "<= %d" % c))
        self.check(checked > 0 and not errs, "enforce: NCCL ran the policy's algorithm/protocol (and channels) at every rule hit",
                   "%d selection lines checked over %d sizes" % (checked, len({le.key(s, n_ranks) for s in le.sel} & set(by_key)))
                   if not errs else "%d of %d wrong: %s" % (len(errs), checked, "; ".join(errs[:4])))
        unruled_n = Counter({s: c for s, c in none_sel.items() if logs["none"][0].key(s, n_ranks) not in by_key})
        self.check(unruled_e == unruled_n, "enforce: collectives without a rule hit ran as without the plugin",
                   "%d lines" % sum(unruled_n.values()) if unruled_e == unruled_n else "none %d lines, enforce %d; e.g. %s" % (
                       sum(unruled_n.values()), sum(unruled_e.values()),
                       "; ".join(pick_line(s) for s in list((unruled_e - unruled_n) + (unruled_n - unruled_e))[:4])))
        en = decisions["enforce"]
        bad = []
        for r in RANKS:
            if not en[r]:
                bad.append("rank %d: decision log empty or missing" % r)
                continue
            na = sum(1 for x in en[r] if not x.get("applied"))
            if na:
                bad.append("rank %d: %d records not applied" % (r, na))
        other = sorted({(x["key"], x.get("policyPick")) for x in en[0] or []
                        if x["key"] in by_key and x.get("policyPick") not in {p for p, _ in by_key[x["key"]]}})
        bad += ["%s %s: enforce picked %s, shadow %s" % (k[0], fmt_bytes(k[1]), p, "|".join(sorted(q for q, _ in by_key[k])))
                for k, p in other[:4]]
        self.check(not bad, "enforce: decision log on both ranks, every record applied, same picks as shadow",
                   "; ".join(bad) if bad else "%s records" % [len(en[r]) for r in RANKS])

        self.table(results, logs)
        print("shadow decision log (rank 0): %d records, %d disagreements (ncclPick != policyPick)"
              % (len(sh[0] or []), disagree))
        return self.summary("e2e")

    def check_results(self, m, res):
        bad, n_sizes, info = [], 0, ""
        for r in RANKS:
            x = res[r]
            if x is None:
                bad.append("rank %d: no result file" % r)
                continue
            if x.get("error"):
                bad.append("rank %d: %s" % (r, x["error"][:200]))
            ar = x.get("allreduce", [])
            n_sizes = max(n_sizes, len(ar))
            if not ar:
                bad.append("rank %d: no AllReduce results" % r)
            for s in ar:
                if s.get("wrong", 1) != 0:
                    bad.append("rank %d: AllReduce %s: %s wrong elements" % (r, fmt_bytes(s["bytes"]), s.get("wrong")))
        sizes = [s["bytes"] for s in (res[0] or {}).get("allreduce", [])]
        rng = "%s..%s" % (fmt_bytes(min(sizes)), fmt_bytes(max(sizes))) if sizes else "-"
        self.check(not bad, "%s: AllReduce float32 sum correct on both ranks at %d sizes (%s)" % (m, n_sizes, rng),
                   "; ".join(bad[:4]))
        bad = []
        for r in RANKS:
            d = (res[r] or {}).get("ddp")
            if not d:
                bad.append("rank %d: no DDP result" % r)
                continue
            losses = d.get("losses", [])
            if not losses or not all(isinstance(v, (int, float)) and math.isfinite(v) for v in losses):
                bad.append("rank %d: losses %s" % (r, losses))
            if not d.get("identical"):
                bad.append("rank %d: parameters differ across ranks" % r)
            info = "%d steps, rank 0 loss %s" % (len(losses), " ".join("%.3f" % v for v in losses[:1] + losses[-1:]))
        self.check(not bad, "%s: DDP training: loss finite, parameters identical on both ranks" % m,
                   "; ".join(bad[:4]) if bad else info)

    def table(self, results, logs):
        sizes = sorted({s["bytes"] for m in MODES for s in (results[m][0] or {}).get("allreduce", [])})
        if not sizes:
            sizes = sorted({s[1] for s in logs["none"][0].sel if s[0] == "AllReduce"})
        med = {m: {s["bytes"]: s.get("median_us") for s in (results[m][0] or {}).get("allreduce", [])} for m in MODES}

        def picks(m, b):
            p = sorted({pick_str(s) for s in logs[m][0].sel if s[0] in ("AllReduce", "*") and s[1] == b})
            return "|".join(p) if p else "-"

        def us(v):
            return "%.1f" % v if isinstance(v, (int, float)) else "-"
        print("%-9s %10s %10s %10s  %-22s %-22s" % ("size", "none us", "shadow us", "enforce us", "NCCL pick (none)", "enforced pick"))
        for b in sizes:
            a, e = picks("none", b), picks("enforce", b)
            print("%-9s %10s %10s %10s  %-22s %-22s%s" % (fmt_bytes(b), us(med["none"].get(b)), us(med["shadow"].get(b)),
                                                        us(med["enforce"].get(b)), a, e, "" if a == e else " *"))
        print("(AllReduce float32 sum, median over timed iterations, CUDA events; * = the policy changed NCCL's pick)")


def pick_line(s):
    return "%s %s %s" % (s[0], fmt_bytes(s[1]), pick_str(s))


def main(argv):
    args = list(argv)
    expect = None
    if "--policy" in args:
        i = args.index("--policy")
        expect = policy_name(args[i + 1])
        del args[i:i + 2]
    if len(args) != 1 or not os.path.isdir(args[0]):
        print("usage: e2e_check.py OUT_DIR [--policy FILE]   (OUT_DIR with none/ shadow/ enforce/)", file=sys.stderr)
        return 2
    return 0 if Checker(args[0], expect).run() else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
