#!/usr/bin/env python3
"""Random shapes x random constants: NCCL 2.28.9's table from the oracle, printed as NCCL prints it,
then `nccl-tuner explain --log` per collective and size; compare each candidate's time and the pick.

usage: compare_explain.py N_CASES SEED [--policy-baselat]
  --policy-baselat: the log holds NCCL's defaults and a policy sets random baseLatencies; explain's
  post-policy pick is compared with the oracle's pick under the edited constants.
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
JAVA = os.environ.get("JAVA", "/usr/lib/jvm/temurin-25-jdk-amd64/bin/java")
JAR = os.path.join(ROOT, "build/lib/nccl-tuner-tools.jar")

SIZES = [1 << k for k in range(2, 31)] + [3, 100, 1000, 65537, 1000000, 12345678, 300000000]


def size_arg(n):
    return "%dB" % n


def rand_topo(rng):
    nNodes = rng.choice([1, 1, 2, 2, 3, 4, 5, 8, 16])
    ppn = rng.choice([1, 2, 4, 8])
    if nNodes == 1 and ppn == 1:
        ppn = 2
    cc = rng.choice([70, 80, 90, 90, 90, 100])
    cpu = rng.choice(["intel", "amd"])
    intra = rng.choice(["NVL", "NVL", "NVB", "PIX", "PXB", "SYS"])
    inter = rng.choice(["PIX", "PXB", "PXN", "PHB", "NET", "LOC"])
    def g(pattern):
        return O.Graph(pattern, rng.choice([1, 2, 4, 8, 12, 16]), rng.choice([6.0, 12.0, 20.0, 24.0, 40.0, 60.0]),
                       rng.choice([5.0, 10.0, 12.5, 20.0, 25.0, 50.0]), intra, inter, rng.choice([0, 1, 1]))
    ring, tree = g(4), g(rng.choice([1, 2, 3]))
    tree.nChannels = ring.nChannels if rng.random() < 0.7 else tree.nChannels
    coll = min(ring.nChannels, tree.nChannels) * rng.choice([1, 2, 2, 4])
    return O.Topo(nNodes * ppn, nNodes, cc, cpu, ring, tree, coll)


def rand_consts(rng, prob=0.3):
    C = O.defaults()
    for k in O.flat_keys():
        if rng.random() < prob:
            v = O.get(C, k)
            O.put(C, k, round(v * rng.uniform(0.25, 4.0), 3) if v else round(rng.uniform(0.1, 30), 3))
    return C


def parse_explain(out):
    """{collective: {nBytes: (times dict, pick, also)}}"""
    res, coll, header = {}, None, None
    for line in out.splitlines():
        m = re.match(r"(\w+), numPipeOps (\d+): predicted", line)
        if m:
            coll = m.group(1); res[coll] = {}; header = None
            continue
        if coll and line.strip().startswith("size") and "nBytes" in line:
            header = line.split()
            continue
        if coll and header and re.match(r"\s*[\d.~]+ \w+\s+\d+\s", line):
            toks = line.split()
            # size is two tokens ("4 B"), then nBytes, then one column per candidate
            cands = [h for h in header if "/" in h]
            nb = int(toks[2])
            vals = toks[3:3 + len(cands)]
            times = {c: float(v) for c, v in zip(cands, vals)}
            rest = toks[3 + len(cands):]
            pick = rest[0] if rest else None
            also = [r for r in rest[1:] if "/" in r]
            res[coll][nb] = (times, pick, also)
        elif coll and header and not line.strip():
            header = None if res[coll] else header
    return res


def run_explain(logpath, cc, pipe, policy=None):
    cmd = [JAVA, "-jar", JAR, "explain", "--log", logpath, "--sizes", ",".join(size_arg(s) for s in SIZES),
           "--compute-capability", str(cc), "--collective", "all", "--pipe-ops", str(pipe)]
    if policy:
        cmd += ["--policy", policy]
    p = subprocess.run(cmd, capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def main():
    n, seed = int(sys.argv[1]), int(sys.argv[2])
    policy_mode = "--policy-baselat" in sys.argv
    rng = random.Random(seed)
    stats = dict(cases=0, cand=0, cand_ok=0, pick=0, pick_ok=0, pick_exact_ok=0, pick_exact_amb=0, rc_fail=0)
    disagreements = []
    tmp = tempfile.mkdtemp(prefix="orc-explain-")
    for case in range(n):
        t = rand_topo(rng)
        C = O.defaults() if policy_mode else rand_consts(rng)
        pipe = rng.choice([1, 1, 1, 4, 11, 25])
        logp = os.path.join(tmp, "c%d.log" % case)
        open(logp, "w").write("\n".join(O.format_log(t, C)) + "\n")
        pol = None
        C2 = C
        if policy_mode:
            C2 = O.defaults()
            edits = {}
            for a in (O.TREE, O.RING):
                for p in range(3):
                    if rng.random() < 0.5:
                        v = round(C2["baseLatencies"][a][p] * rng.uniform(0.1, 5.0), 2)
                        C2["baseLatencies"][a][p] = v
                        edits["baseLatencies.%s.%s" % (O.ALGOS[a], O.PROTOS[p])] = v
            if not edits:
                edits["baseLatencies.RING.SIMPLE"] = 30.0
                C2["baseLatencies"][O.RING][O.SIMPLE] = 30.0
            pol = os.path.join(tmp, "c%d.yaml" % case)
            with open(pol, "w") as f:
                f.write("schema: nccl-tuner-java/v1\nname: orc%d\nmode: enforce\nprofiles:\n  - name: p\n    match: {nRanks: %d, nNodes: %d}\n    constants:\n" % (case, t.nRanks, t.nNodes))
                for k, v in edits.items():
                    f.write("      %s: %s\n" % (k, v))
                f.write("    rules: []\n")
        rc, out = run_explain(logp, t.cc, pipe, pol)
        stats["cases"] += 1
        if rc != 0:
            stats["rc_fail"] += 1
            disagreements.append(dict(case=case, kind="exit %d" % rc, topo=t.to_json(), out=out[-2000:]))
            continue
        if policy_mode:
            check_policy(t, C2, pipe, out, case, stats, disagreements, pol)
            continue
        parsed = parse_explain(out)
        lat, bwt = O.build_table(t, C)
        plat, pbw = O.printed_table(t, lat, bwt)
        for ci, cname in enumerate(O.COLLS):
            if cname not in parsed:
                disagreements.append(dict(case=case, kind="collective missing", coll=cname, topo=t.to_json()))
                continue
            for nb, (times, epick, also) in parsed[cname].items():
                tabp = O.costs(t, plat, pbw, ci, nb, pipe)
                tabx = O.costs(t, lat, bwt, ci, nb, pipe)
                offered = {O.name((a, p)) for a in range(7) for p in range(3) if tabp[a][p] >= 0}
                for cand in set(times) | offered:
                    a, p = O.ALGOS.index(cand.split("/")[0]), O.PROTOS.index(cand.split("/")[1])
                    ov = tabp[a][p]
                    ev = times.get(cand)
                    stats["cand"] += 1
                    if ev is not None and ov >= 0 and abs(ev - ov) <= 0.0011 + 2e-6 * abs(ov):
                        stats["cand_ok"] += 1
                    else:
                        disagreements.append(dict(case=case, kind="time", coll=cname, nBytes=nb, cand=cand,
                                                  explain=ev, oracle=ov, pipe=pipe, topo=t.to_json(), log=logp))
                op = O.name(O.pick(tabp))
                ox = O.name(O.pick(tabx))
                stats["pick"] += 1
                if op == epick:
                    stats["pick_ok"] += 1
                else:
                    disagreements.append(dict(case=case, kind="pick", coll=cname, nBytes=nb, explain=epick,
                                              oracle=op, pipe=pipe, topo=t.to_json(), log=logp))
                if ox == epick:
                    stats["pick_exact_ok"] += 1
                elif ox in also:
                    stats["pick_exact_amb"] += 1
                else:
                    disagreements.append(dict(case=case, kind="pick vs exact table (not in also-possible)", coll=cname,
                                              nBytes=nb, explain=epick, also=also, oracle_exact=ox, pipe=pipe,
                                              topo=t.to_json(), log=logp))
    json.dump(dict(stats=stats, disagreements=disagreements), open(os.path.join(tmp, "result.json"), "w"), indent=1)
    print(json.dumps(stats))
    kinds = {}
    for d in disagreements:
        kinds[d["kind"]] = kinds.get(d["kind"], 0) + 1
    print("disagreements by kind:", kinds)
    for d in disagreements[:8]:
        print(json.dumps(d)[:1500])
    print("details:", os.path.join(tmp, "result.json"))
    # make tune-oracle: any disagreement or failed explain run fails the target
    sys.exit(1 if disagreements or stats["rc_fail"] else 0)


def check_policy(t, C2, pipe, out, case, stats, disagreements, pol):
    """explain --policy (baseLatencies only): times and picks vs the printed default table with each
    edited entry's latency moved by (value - default) (tuning.cc:353: the base latency starts every
    collective's latency), the plateau factor then applying to the moved latency (tuning.cc:593-596)."""
    D = O.defaults()
    lat, bwt = O.build_table(t, D)
    plat, pbw = O.printed_table(t, lat, bwt)
    for c in range(5):
        for a in (O.TREE, O.RING):
            for p in range(3):
                d = C2["baseLatencies"][a][p] - D["baseLatencies"][a][p]
                plat[c][a][p] = O.f32(float(plat[c][a][p]) + d)
    xl, xb = O.build_table(t, C2)
    parsed = parse_explain(out)
    for ci, cname in enumerate(O.COLLS):
        for nb, (times, epick, also) in parsed.get(cname, {}).items():
            tab = O.costs(t, plat, pbw, ci, nb, pipe)
            for cand, ev in times.items():
                a, p = O.ALGOS.index(cand.split("/")[0]), O.PROTOS.index(cand.split("/")[1])
                stats["cand"] += 1
                if abs(ev - tab[a][p]) <= 0.0011 + 2e-6 * abs(tab[a][p]):
                    stats["cand_ok"] += 1
                else:
                    disagreements.append(dict(case=case, kind="policy time", coll=cname, nBytes=nb, cand=cand,
                                              explain=ev, oracle=tab[a][p], pipe=pipe, topo=t.to_json(), policy=pol))
            op = O.name(O.pick(tab))
            stats["pick"] += 1
            if op == epick:
                stats["pick_ok"] += 1
            else:
                disagreements.append(dict(case=case, kind="policy pick", coll=cname, nBytes=nb, explain=epick,
                                          oracle=op, pipe=pipe, topo=t.to_json(), policy=pol))
            ox = O.name(O.pick(O.costs(t, xl, xb, ci, nb, pipe)))
            if ox == epick:
                stats["pick_exact_ok"] += 1
            elif ox in also:
                stats["pick_exact_amb"] += 1


if __name__ == "__main__":
    main()
