#!/usr/bin/env python3
"""gen_policy.py N SEED > p.yaml: a policy whose profile (nRanks 2, nNodes 2) has N non-overlapping
single-bucket rules (5 collectives x 248 buckets x numPipeOps {1},{2},{3},{min:4} x regBuff
true/false = 9,920 at most in one profile; the rest go to a second profile for nRanks 4)."""
import random, sys
n = int(sys.argv[1]); rnd = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 1)
COLL = ["Broadcast", "Reduce", "AllGather", "ReduceScatter", "AllReduce"]
ALG = ["TREE", "RING", "COLLNET_DIRECT", "COLLNET_CHAIN", "NVLS", "NVLS_TREE", "PAT"]
PRO = ["LL", "LL128", "SIMPLE"]
def lower(b):
    if b < 8: return b
    e = 3 + (b - 8) // 4; k = (b - 8) % 4
    return (1 << e) * (4 + k) // 4
PIPES = ["numPipeOps: 1", "numPipeOps: 2", "numPipeOps: 3", "numPipeOps: {min: 4}"]
def rules(count):
    out = []
    for c in COLL:
        for b in range(248):
            for p in PIPES:
                for rb in ("true", "false"):
                    if len(out) == count: return out
                    cands = rnd.sample([(a, q) for a in ALG for q in PRO], rnd.randint(1, 2))
                    cs = []
                    for a, q in cands:
                        x = "algorithm: %s, protocol: %s" % (a, q)
                        if rnd.random() < 0.4: x += ", channels: %d" % rnd.randint(1, 64)
                        if rnd.random() < 0.3: x += ", chunkSize: %d" % rnd.choice([4096, 65536, 131072, 524288, 1 << 20])
                        cs.append("{%s}" % x)
                    to = "" if b == 247 else ", to: %d" % lower(b + 1)
                    out.append("      - {collective: %s, bytes: {from: %d%s}, %s, regBuff: %s, candidates: [%s]}"
                               % (c, lower(b), to, p, rb, ", ".join(cs)))
    return out
first = rules(min(n, 9920))
print("schema: nccl-tuner-java/v1\nname: hhc2-%d\nmode: enforce\nprofiles:\n  - name: big\n    match: {nRanks: 2, nNodes: 2}\n    rules:" % n)
print("\n".join(first))
if n > 9920:
    print("  - name: rest\n    match: {nRanks: 4, nNodes: 2}\n    rules:")
    print("\n".join(rules(n - 9920)))
