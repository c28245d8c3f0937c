#!/usr/bin/env python3
"""Writes the canary fixtures (decision logs with measured/profiled lines, docs/canary.md) and prints
the figures CanaryReportTest asserts, computed here independently of the Java code:

    python3 gen_canary.py DIR      # writes DIR/canary-{a,b,c,d,e}.jsonl, prints the expected values

Three ranks (a, b, c) of one 3-rank, 1-node communicator run policy "canary-test" (sha256 c...c);
d runs another table (sha256 d...d), e decides RING/SIMPLE at 1 MiB where the others decide
TREE/SIMPLE. Device times are seeded normal draws rounded to 0.1 us.
"""
import json, math, random, sys

HIST_BUCKETS = 16 * 24 + 2
SHA = "c" * 64


def hbucket(us):
    t = us * 1000.0
    if t < 256:
        return 0
    k = int(math.floor(math.log2(t))) - 8
    if k >= 24:
        return HIST_BUCKETS - 1
    j = int((t / 2 ** (8 + k) - 1) * 16)
    return 1 + 16 * k + j


def mid(b):
    if b == 0:
        return 0.128
    if b == HIST_BUCKETS - 1:
        return 2 ** 32 / 1000
    k, j = divmod(b - 1, 16)
    return 2 ** (8 + k) * (1 + (j + 0.5) / 16) / 1000


def pct(hist, q):
    n = sum(hist.values())
    rank = max(1, math.ceil(q * n))
    seen = 0
    for b in sorted(hist):
        seen += hist[b]
        if seen >= rank:
            return mid(b)


GRID = {4096: 5120, 65536: 81920, 262144: 327680, 1048576: 1310720, 1310720: 1572864, 1572864: 1835008,
        16777216: 20971520}


def fmt_bytes(b):
    for unit, s in ((1 << 20, "MiB"), (1 << 10, "KiB")):
        if b >= unit:
            v = b / unit
            return (f"{v:g} {s}")
    return f"{b} B"


def measured(rank, host, pid, nBytes, arm, decided, dch, executed, ch, as_decided, values, count=None, sha=SHA):
    count = len(values) if count is None else count
    vals = [round(v, 1) for v in values]
    hist = {}
    for v in vals:
        hist[hbucket(v)] = hist.get(hbucket(v), 0) + 1
    o = {"type": "measured", "comm": -2863311531, "host": host, "pid": pid, "rank": rank, "nRanks": 3, "nNodes": 1,
         "policy": "canary-test", "sha256": sha, "mode": "canary", "collective": "AllReduce", "nBytes": nBytes,
         "toBytes": GRID[nBytes], "bucket": f"[{fmt_bytes(nBytes)}, {fmt_bytes(GRID[nBytes])})", "arm": arm,
         "decided": decided, "decidedChannels": dch, "executed": executed, "channels": ch, "kernelChannels": ch,
         "asDecided": as_decided, "count": count, "timed": len(vals)}
    if vals:
        s = round(sum(vals), 6)
        sq = round(sum(v * v for v in vals), 6)
        o.update({"meanUs": round(s / len(vals), 3), "sumUs": s, "sumSqUs": sq, "minUs": min(vals), "maxUs": max(vals),
                  "p50Us": round(pct(hist, .5), 3), "p95Us": round(pct(hist, .95), 3),
                  "p99Us": round(pct(hist, .99), 3)})
    else:
        o.update({"meanUs": 0, "sumUs": 0, "sumSqUs": 0, "minUs": 0, "maxUs": 0, "p50Us": 0, "p95Us": 0, "p99Us": 0})
    o["hist"] = [[b, hist[b]] for b in sorted(hist)]
    return o


def rank_lines(idx, host, pid, rnd, sha=SHA, policy_1m="TREE/SIMPLE"):
    g = lambda m, s, n: [rnd.gauss(m, s) for _ in range(n)]
    line = lambda *a, **k: measured(*a, sha=sha, **k)
    d = [0.0, 2.0, -2.0][idx % 3]
    L = []
    L.append({"type": "comm", "comm": -2863311531, "host": host, "pid": pid, "policy": "canary-test", "profile": "p3",
              "sha256": sha, "mode": "canary", "nRanks": 3, "nNodes": 1, "calls": 1000, "ruleHits": 900,
              "applied": 300, "unaggregated": 0, "at": "destroy"})
    # 1 MiB: the policy 20% faster (promote)
    L.append(line(idx, host, pid, 1048576, "nccl", "RING/LL", 0, "RING/LL", 8, True, g(100, 5, 100)))
    L.append(line(idx, host, pid, 1048576, "policy", policy_1m, 0, policy_1m, 8, True, g(80 + d, 4, 40)))
    if idx == 2:  # NCCL_ALGO overrode 5 collectives, none timed
        L.append(line(idx, host, pid, 1048576, "policy", policy_1m, 0, "RING/SIMPLE", 8, False, [], count=5))
    L.append(line(idx, host, pid, 1048576, "unjoined", None, 0, "RING/LL", 8, None, g(100, 5, 3)))
    # 1.25 MiB: the policy 18% slower (keep NCCL, upper bound below 0)
    L.append(line(idx, host, pid, 1310720, "nccl", "RING/LL", 0, "RING/LL", 8, True, g(110, 5, 80)))
    L.append(line(idx, host, pid, 1310720, "policy", "TREE/SIMPLE", 0, "TREE/SIMPLE", 8, True, g(130, 5, 40)))
    # 1.5 MiB: faster, but NCCL capped the candidate's 16 channels at 8 (promote; channels differ)
    L.append(line(idx, host, pid, 1572864, "nccl", "RING/SIMPLE", 0, "RING/SIMPLE", 8, True, g(150, 6, 90)))
    L.append(line(idx, host, pid, 1572864, "policy", "TREE/SIMPLE", 16, "TREE/SIMPLE", 8, False, g(120, 6, 45)))
    # 64 KiB: no difference (keep NCCL, the interval holds 0)
    L.append(line(idx, host, pid, 65536, "nccl", "RING/LL", 0, "RING/LL", 8, True, g(50, 10, 60)))
    L.append(line(idx, host, pid, 65536, "policy", "RING/LL128", 0, "RING/LL128", 8, True, g(50, 10, 35)))
    # 4 KiB: 8 policy collectives per rank (not enough calls)
    L.append(line(idx, host, pid, 4096, "nccl", "RING/LL", 0, "RING/LL", 8, True, g(12, 1, 50)))
    L.append(line(idx, host, pid, 4096, "policy", "TREE/LL", 0, "TREE/LL", 8, True, g(10, 1, 8)))
    # 256 KiB: NCCL offered none of the rule's candidates
    L.append(line(idx, host, pid, 262144, "notOffered", "RING/LL", 0, "RING/LL", 8, True, g(30, 2, 7)))
    # 16 MiB: no rule
    L.append(line(idx, host, pid, 16777216, "unruled", None, 0, "RING/SIMPLE", 16, None, g(900, 20, 20)))
    L.append({"type": "profiled", "comm": -2863311531, "host": host, "pid": pid, "rank": idx, "nRanks": 3, "nNodes": 1,
              "profilerVersion": 5, "joined": True, "collectives": 1000, "unjoined": 3, "untimed": 5 if idx == 2 else 0,
              "unaggregated": 0, "decisionsDropped": 1})
    return L


def main():
    out = sys.argv[1]
    files = {}
    for idx, name in enumerate("abc"):
        files[name] = rank_lines(idx, "n" + name, 11 + idx, random.Random(1000 + idx))
    files["d"] = rank_lines(0, "nd", 14, random.Random(1003), sha="d" * 64)
    files["e"] = rank_lines(1, "ne", 15, random.Random(1004), policy_1m="RING/SIMPLE")
    for name, L in files.items():
        with open(f"{out}/canary-{name}.jsonl", "w") as f:
            for o in L:
                f.write(json.dumps(o, separators=(",", ":")) + "\n")
    # expected figures over a, b, c
    for nBytes in (4096, 65536, 1048576, 1310720, 1572864):
        arms = {}
        per_rank = []
        for name in "abc":
            r = {}
            for o in files[name]:
                if o["type"] == "measured" and o["nBytes"] == nBytes and o["arm"] in ("nccl", "policy"):
                    a = arms.setdefault(o["arm"], {"count": 0, "timed": 0, "sum": 0.0, "sq": 0.0, "hist": {}})
                    a["count"] += o["count"]; a["timed"] += o["timed"]; a["sum"] += o["sumUs"]; a["sq"] += o["sumSqUs"]
                    for b, c in o["hist"]:
                        a["hist"][b] = a["hist"].get(b, 0) + c
                    rr = r.setdefault(o["arm"], [0, 0.0]); rr[0] += o["timed"]; rr[1] += o["sumUs"]
            if r.get("nccl", [0])[0] > 0 and r.get("policy", [0])[0] > 0:
                per_rank.append(1 - (r["policy"][1] / r["policy"][0]) / (r["nccl"][1] / r["nccl"][0]))
        n, p = arms["nccl"], arms["policy"]
        mN, mP = n["sum"] / n["timed"], p["sum"] / p["timed"]
        vN = (n["sq"] - n["sum"] ** 2 / n["timed"]) / (n["timed"] - 1)
        vP = (p["sq"] - p["sum"] ** 2 / p["timed"]) / (p["timed"] - 1)
        R = mP / mN
        callsHalf = 1.959963984540054 * math.sqrt(R * R * (vP / (p["timed"] * mP * mP) + vN / (n["timed"] * mN * mN)))
        k = len(per_rank)
        gm = sum(per_rank) / k
        sd = math.sqrt(sum((x - gm) ** 2 for x in per_rank) / (k - 1))
        ranksHalf = 4.3027 * sd / math.sqrt(k)  # t(0.975, 2)
        half = max(callsHalf, ranksHalf)
        g = 1 - R
        print(f"{nBytes}: nccl count {n['count']} timed {n['timed']} mean {mN!r} p50 {pct(n['hist'], .5)!r} "
              f"p95 {pct(n['hist'], .95)!r}; policy count {p['count']} timed {p['timed']} mean {mP!r} "
              f"p50 {pct(p['hist'], .5)!r} p95 {pct(p['hist'], .95)!r}; gain {g!r} callsHalf {callsHalf!r} "
              f"ranksHalf {ranksHalf!r} lo {g - half!r} hi {g + half!r}")


main()
