#!/usr/bin/env python3
"""The effect of each constant end to end: a policy sets constants, the real plugin writes them into
the simulated NCCL 2.28's ncclTunerConstants_v5_t at init (SIMCLUSTER_MODEL=tune, tunemodel.h), the
simulated NCCL prints its latency/bandwidth table; compare every entry with the oracle's table for
the same constants and the graphs the run printed.

usage: compare_simcluster.py SEED N_RANDOM
"""
import json
import os
import random
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tune_oracle as O  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
JH = "/usr/lib/jvm/temurin-25-jdk-amd64"
SIM = os.path.join(ROOT, "build/tests/simcluster")


def run(nodes, consts, tmp, tag):
    pol = os.path.join(tmp, tag + ".yaml")
    with open(pol, "w") as f:
        f.write("schema: nccl-tuner-java/v1\nname: %s\nmode: enforce\nprofiles:\n  - name: p\n    constants:\n" % tag)
        for k, v in consts.items():
            f.write("      %s: %s\n" % (k, v))
        f.write("    rules: []\n")
    env = dict(os.environ, SIMCLUSTER_MODEL="tune", SIMCLUSTER_NODES=str(nodes), NCCL_DEBUG="INFO",
               NCCL_DEBUG_SUBSYS="INIT,ENV,TUNING,GRAPH", SIMCLUSTER_NOISE="0", SIMCLUSTER_NCCL_ERA="2.28",
               NCCL_TUNER_PLUGIN=os.path.join(ROOT, "build/lib/libnccl-tuner-java.so"),
               NCCL_TUNER_JAVA_HOME=JH, NCCL_TUNER_JAVA_POLICY=pol)
    p = subprocess.run([SIM, "all_reduce_perf", "-b", "4", "-e", "4", "-g", "8"], capture_output=True, text=True, env=env, timeout=120)
    return p.stdout + p.stderr


def parse(out):
    graphs, coll_ch, nranks, nnodes = [], None, None, None
    table = {}  # (coll, algo) -> [(lat,bw)]*3
    block_algos = None
    setline = None
    for line in out.splitlines():
        msg = line.split("NCCL INFO ", 1)[1] if "NCCL INFO " in line else None
        if msg is None:
            continue
        m = re.match(r"Pattern (\d+), crossNic (\d+), nChannels (\d+), bw ([\d.]+)/([\d.]+), type (\w+)/(\w+), sameChannels (\d)", msg)
        if m:
            graphs.append(O.Graph(int(m.group(1)), int(m.group(3)), float(m.group(4)), float(m.group(5)), m.group(6), m.group(7), int(m.group(8))))
        m = re.match(r"comm \S+ rank 0 nRanks (\d+) nNodes (\d+)", msg)
        if m:
            nranks, nnodes = int(m.group(1)), int(m.group(2))
        m = re.match(r"(\d+) coll channels", msg)
        if m:
            coll_ch = int(m.group(1))
        if "constants" in msg and "TUNER/Java" in msg:
            setline = msg
        if msg.strip().startswith("Algorithm"):
            block_algos = [a.strip() for a in msg.split("|")[1:] if a.strip()]
            continue
        m = re.match(r"\s*(Broadcast|Reduce|AllGather|ReduceScatter|AllReduce) \|(.*)", msg)
        if m and block_algos:
            cells = [c.strip() for c in m.group(2).split("|") if c.strip()]
            for i, a in enumerate(block_algos):
                table[(m.group(1), a.upper())] = [tuple(float(x) for x in cells[3 * i + j].split("/")) for j in range(3)]
    return graphs, coll_ch, nranks, nnodes, table, setline


def compare(nodes, consts, tmp, tag, res):
    out = run(nodes, consts, tmp, tag)
    graphs, coll_ch, nranks, nnodes, table, setline = parse(out)
    if len(graphs) < 2 or not table:
        res["errors"].append(dict(tag=tag, out=out[-1500:]))
        return
    t = O.Topo(nranks, nnodes, 90, "intel", graphs[0], graphs[1], coll_ch)
    C = O.defaults()
    lookup = {O.key_name(k): k for k in O.flat_keys()}
    for n, v in consts.items():
        O.put(C, lookup[n], v)
    lat, bwt = O.build_table(t, C)
    nbad = 0
    for ci, c in enumerate(O.COLLS):
        for a in (O.TREE, O.RING, O.PAT):
            key = (c, O.ALGOS[a].replace("_", ""))
            if key not in table:
                key = (c, O.ALGOS[a])
            if key not in table:
                continue
            for p in range(3):
                exp = ("%.1f" % float(lat[ci][a][p]), "%.1f" % float(bwt[ci][a][p]))
                got = ("%.1f" % table[key][p][0], "%.1f" % table[key][p][1])
                res["entries"] += 1
                if exp == got:
                    res["ok"] += 1
                else:
                    nbad += 1
                    res["bad"].append(dict(tag=tag, nodes=nodes, consts=consts, coll=c, cand=O.name((a, p)),
                                           simcluster=got, oracle=exp, setline=setline))
    res["runs"] += 1
    res["runs_ok"] += nbad == 0


def main():
    seed, nrand = int(sys.argv[1]), int(sys.argv[2])
    rng = random.Random(seed)
    tmp = tempfile.mkdtemp(prefix="orc-sim-")
    res = dict(runs=0, runs_ok=0, entries=0, ok=0, bad=[], errors=[])
    cases = []
    for nodes in (1, 2, 4):
        for k in O.flat_keys():
            n, idx = k
            if n == "hwLatencies" and idx[0] == (O.HW_NET if nodes == 1 else O.HW_PCI):
                continue
            if n not in ("baseLatencies", "hwLatencies"):
                if idx[1] != O.scale_index(nodes):
                    continue
                if n == "llMaxBws":
                    if idx[0] != (2 if nodes == 1 else 0):
                        continue
                elif idx[0] != 2:
                    continue
            v = O.get(O.DEFAULTS, k)
            cases.append((nodes, {O.key_name(k): round(v * rng.choice([0.25, 0.5, 2.5, 4.0]), 3) if v else 3.0}))
    for i in range(nrand):
        nodes = rng.choice([1, 2, 4])
        ks = rng.sample(O.flat_keys(), 6)
        cases.append((nodes, {O.key_name(k): round(rng.uniform(0.2, 60.0), 2) for k in ks}))
    for i, (nodes, consts) in enumerate(cases):
        compare(nodes, consts, tmp, "c%d" % i, res)
    json.dump(res, open(os.path.join(tmp, "result.json"), "w"), indent=1)
    print(json.dumps({k: v for k, v in res.items() if k not in ("bad", "errors")}), "bad", len(res["bad"]), "errors", len(res["errors"]))
    seen = set()
    for b in res["bad"]:
        key = (b["tag"])
        if key in seen:
            continue
        seen.add(key)
        print(json.dumps(b)[:600])
    for e in res["errors"][:3]:
        print(json.dumps(e)[:1500])
    print("details:", tmp)


if __name__ == "__main__":
    main()
