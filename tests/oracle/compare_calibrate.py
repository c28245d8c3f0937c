#!/usr/bin/env python3
"""Synthetic sweeps from known true constants -> `nccl-tuner sweep --binary tune_oracle.py` ->
`nccl-tuner calibrate` -> checks:
  (1) every perturbed true constant lies in the reported uncertainty interval (and every constant
      the fit moved that was not perturbed has NCCL's default inside its interval);
  (2) the report's "NCCL's defaults X%" mean regret equals the oracle's (same measured times);
  (3) with the fitted constants as the policy writes them, the oracle's NCCL selection picks the
      measured best (regret 0) at every measured size, and its mean regret equals the report's;
  (4) held-out 8 and 16 nodes: the true regret of NCCL's selection with the fitted constants.

usage: compare_calibrate.py N_TRIALS SEED
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
FAKE = os.path.join(ROOT, "tests/oracle/tune_oracle.py")
CANDS = [(a, p) for a in (O.TREE, O.RING) for p in range(3)]


def relevant_keys(cpu):
    ks = []
    for k in O.flat_keys():
        n, idx = k
        if n in ("baseLatencies",):
            ks.append(k)
        elif n == "hwLatencies" and idx[0] in (O.HW_NVLINK, O.HW_NET):
            ks.append(k)
        elif n == "llMaxBws" and idx[0] == (1 if cpu == "amd" else 0) and idx[1] in (1, 2):
            ks.append(k)
        elif n in ("perChMaxRingLL128Bws", "perChMaxTreeLL128Bws", "perChMaxTreeBws") and idx[0] == 2 and idx[1] in (1, 2):
            ks.append(k)
    return ks


def measured(sweep_dir):
    """{(a,p): {nBytes: time}} from the runs (out-of-place time), plus NCCL's own run."""
    res = {}
    runs = os.path.join(sweep_dir, "runs")
    for fn in os.listdir(runs):
        m = re.match(r"all_reduce_(\w+?)(?:-(\w+))?_r\d+\.txt$", fn)
        if not m:
            continue
        key = "NCCL" if m.group(1) == "NCCL" else (O.ALGOS.index(m.group(1)), O.PROTOS.index(m.group(2)))
        d = {}
        for line in open(os.path.join(runs, fn)):
            toks = line.split()
            if len(toks) >= 13 and toks[0].isdigit() and toks[2] == "float":
                d[int(toks[0])] = float(toks[5])
        res[key] = d
    return res


def regret_with(t, C, meas):
    """Mean regret of NCCL's selection (constants C) over the measured candidates."""
    lat, bwt = O.build_table(t, C)
    regs, worst = [], []
    sizes = sorted(meas[CANDS[0]])
    for nb in sizes:
        tab = O.costs(t, lat, bwt, O.AR, nb)
        allowed = {c for c in CANDS if c in meas and nb in meas[c] and tab[c[0]][c[1]] >= 0}
        pk = O.pick(tab, allowed)
        best = min(meas[c][nb] for c in allowed)
        r = meas[pk][nb] / best - 1
        regs.append(r)
        if r > 1e-9:
            worst.append((nb, O.name(pk), r))
    return sum(regs) / len(regs), worst


def true_regret(t, C, truth, sizes):
    lat, bwt = O.build_table(t, C)
    tl, tb = O.build_table(t, truth)
    regs = []
    for nb in sizes:
        pk = O.pick(O.costs(t, lat, bwt, O.AR, nb))
        tt = O.costs(t, tl, tb, O.AR, nb)
        best = min(v for v in (tt[a][p] for a, p in CANDS) if v >= 0)
        regs.append(tt[pk[0]][pk[1]] / best - 1)
    return sum(regs) / len(regs), max(regs)


def parse_report(out):
    rows = {}
    for line in out.splitlines():
        m = re.match(r"\s+((?:baseLatencies|hwLatencies|llMaxBws|perChMax\w+)\.[\w.]+)\s+([\d.]+) (?:us|GB/s)\s+(\(default\)|[\d.]+) (?:us|GB/s)\s+(\.\.|[\d.]+) \.\. (\.\.|[\d.]+)", line)
        if m:
            rows[m.group(1)] = dict(default=float(m.group(2)),
                                    fitted=None if m.group(3) == "(default)" else float(m.group(3)),
                                    lo=None if m.group(4) == ".." else float(m.group(4)),
                                    hi=None if m.group(5) == ".." else float(m.group(5)))
    m = re.search(r"NCCL's defaults ([\d.]+)%, calibrated ([\d.]+)%", out)
    return rows, (float(m.group(1)), float(m.group(2))) if m else None


def parse_policy_constants(path):
    consts, inprof = {}, None
    for line in open(path):
        m = re.match(r"  - name: (\S+)", line)
        if m:
            inprof = m.group(1)
        m = re.match(r"\s+((?:baseLatencies|hwLatencies|llMaxBws|perChMax\w+)\.[\w.]+): ([\d.eE+-]+)\s*$", line)
        if m and inprof == "calibrated":
            consts[m.group(1)] = float(m.group(2))
    return consts


def apply(C, named):
    C = json.loads(json.dumps(C))
    lookup = {O.key_name(k): k for k in O.flat_keys()}
    for n, v in named.items():
        O.put(C, lookup[n], v)
    return C


def sweep(spec, d):
    env = dict(os.environ, ORACLE_SPEC=spec)
    p = subprocess.run([JAVA, "-jar", JAR, "sweep", "-o", d, "--binary", FAKE, "--algorithms", "TREE,RING",
                        "--protocols", "LL,LL128,SIMPLE", "--replicates", "1", "-b", "4", "-e", "1G", "-f", "2",
                        "--seed", "1"], capture_output=True, text=True, env=env)
    if p.returncode != 0:
        raise RuntimeError(p.stdout + p.stderr)


def main():
    n, seed = int(sys.argv[1]), int(sys.argv[2])
    rng = random.Random(seed)
    tmp = tempfile.mkdtemp(prefix="orc-cal-")
    results = []
    for trial in range(n):
        cpu = rng.choice(["intel", "amd"])
        ppn = rng.choice([4, 8])
        nch = rng.choice([4, 8, 16])
        bwI, bwX = rng.choice([(40.0, 20.0), (20.0, 12.0), (60.0, 25.0), (24.0, 24.0)])
        ring = O.Graph(4, nch, bwI, bwX, "NVL", "PIX", 1)
        tree = O.Graph(rng.choice([1, 1, 2, 3]), nch, bwI, bwX, "NVL", "PIX", 1)
        truth = O.defaults()
        keys = relevant_keys(cpu)
        pert = rng.sample(keys, rng.choice([1, 2, 3]))
        for k in pert:
            v = O.get(truth, k)
            f = rng.choice([rng.uniform(0.3, 0.6), rng.uniform(1.8, 3.0)])
            O.put(truth, k, round(v * f, 3))
        shapes = [2, 4]
        dirs = []
        for nn in shapes:
            t = O.Topo(ppn * nn, nn, 90, cpu, ring, tree, 2 * nch)
            spec = os.path.join(tmp, "t%d_n%d.json" % (trial, nn))
            json.dump(dict(topo=t.to_json(), truth=truth), open(spec, "w"))
            d = os.path.join(tmp, "t%d_sw%d" % (trial, nn))
            sweep(spec, d)
            dirs.append((t, d))
        pol = os.path.join(tmp, "t%d.yaml" % trial)
        p = subprocess.run([JAVA, "-jar", JAR, "calibrate"] + [d for _, d in dirs] + ["-o", pol], capture_output=True, text=True)
        out = p.stdout + p.stderr
        open(os.path.join(tmp, "t%d.report.txt" % trial), "w").write(out)
        rows, regrets = parse_report(out)
        fitted = parse_policy_constants(pol) if p.returncode == 0 else {}
        r = dict(trial=trial, cpu=cpu, ppn=ppn, nch=nch, bw=[bwI, bwX], treePattern=tree.pattern, rc=p.returncode,
                 perturbed={O.key_name(k): [O.get(O.DEFAULTS, k), O.get(truth, k)] for k in pert},
                 fitted=fitted, report_regret=regrets, dir=tmp)
        # (1) recovery within uncertainty
        rec = {}
        for k in pert:
            nm = O.key_name(k)
            row = rows.get(nm)
            tv = O.get(truth, k)
            if row is None:
                rec[nm] = "not listed"
                continue
            lo = row["lo"] if row["lo"] is not None else -1e9
            hi = row["hi"] if row["hi"] is not None else 1e9
            fv = row["fitted"] if row["fitted"] is not None else row["default"]
            rec[nm] = dict(true=tv, fitted=fv, lo=row["lo"], hi=row["hi"], inside=lo <= tv * 1.0 <= hi)
        others = {}
        for nm, row in rows.items():
            if row["fitted"] is not None and nm not in r["perturbed"]:
                lo = row["lo"] if row["lo"] is not None else -1e9
                hi = row["hi"] if row["hi"] is not None else 1e9
                others[nm] = dict(default=row["default"], fitted=row["fitted"], lo=row["lo"], hi=row["hi"],
                                  inside=lo <= row["default"] <= hi)
        r["recovery"], r["moved_unperturbed"] = rec, others
        # (2) (3) regrets
        meas = {i: measured(d) for i, (_, d) in enumerate(dirs)}
        Cfit = apply(O.defaults(), fitted)
        dreg, creg, cworst = [], [], []
        for i, (t, d) in enumerate(dirs):
            a, _ = regret_with(t, O.defaults(), meas[i])
            b, w = regret_with(t, Cfit, meas[i])
            dreg.append(a); creg.append(b); cworst += [(t.nNodes,) + x for x in w]
        r["oracle_regret_defaults_pct"] = 100 * sum(dreg) / len(dreg)
        r["oracle_regret_fitted_pct"] = 100 * sum(creg) / len(creg)
        r["fitted_nonbest_sizes"] = cworst
        # (4) held out
        ho = {}
        for nn in (8, 16):
            t = O.Topo(ppn * nn, nn, 90, cpu, ring, tree, 2 * nch)
            sizes = [1 << k for k in range(2, 31)]
            ho[nn] = dict(defaults=true_regret(t, O.defaults(), truth, sizes), fitted=true_regret(t, Cfit, truth, sizes))
        r["heldout"] = ho
        results.append(r)
        print(json.dumps(r), flush=True)
    json.dump(results, open(os.path.join(tmp, "results.json"), "w"), indent=1)
    print("details:", tmp)


if __name__ == "__main__":
    main()
