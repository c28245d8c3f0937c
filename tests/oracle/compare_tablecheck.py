#!/usr/bin/env python3
"""calibrate's own model at NCCL's defaults vs the table NCCL (the oracle) logs, over random shapes:
each case is a 3-run sweep (RING/LL, TREE/LL + NCCL's pick) of the oracle's fake nccl-tests; calibrate's
report says whether its model reproduces the logged table (docs/calibrate.md: it should).

usage: compare_tablecheck.py N SEED
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
from compare_calibrate import JAVA, JAR, FAKE  # noqa: E402


def main():
    n, seed = int(sys.argv[1]), int(sys.argv[2])
    rng = random.Random(seed)
    tmp = tempfile.mkdtemp(prefix="orc-tab-")
    res = dict(cases=0, reproduced=0, not_reproduced=[], errors=[])
    for i in range(n):
        nNodes = rng.choice([1, 2, 3, 4, 8])
        ppn = rng.choice([1, 2, 4, 8]) if nNodes > 1 else rng.choice([2, 4, 8])
        cpu = rng.choice(["intel", "amd"])
        intra = rng.choice(["NVL", "NVL", "PIX", "SYS"])
        inter = rng.choice(["PIX", "PXN", "NET"])
        nch = rng.choice([1, 2, 4, 8, 16])
        ring = O.Graph(4, nch, rng.choice([12.0, 20.0, 40.0]), rng.choice([6.0, 12.0, 25.0]), intra, inter, rng.choice([0, 1]))
        tree = O.Graph(rng.choice([1, 2, 3]), rng.choice([nch, 2 * nch]), rng.choice([12.0, 20.0, 40.0]), rng.choice([6.0, 12.0, 25.0]), intra, inter, 1)
        t = O.Topo(nNodes * ppn, nNodes, 90, cpu, ring, tree, nch * rng.choice([1, 2, 4]))
        spec = os.path.join(tmp, "s%d.json" % i)
        json.dump(dict(topo=t.to_json(), truth=O.defaults()), open(spec, "w"))
        d = os.path.join(tmp, "sw%d" % i)
        env = dict(os.environ, ORACLE_SPEC=spec)
        p = subprocess.run([JAVA, "-jar", JAR, "sweep", "-o", d, "--binary", FAKE, "--candidate", "RING/LL", "--candidate", "TREE/LL",
                            "--replicates", "1", "-b", "4", "-e", "1M", "-f", "4", "--seed", "1"], capture_output=True, text=True, env=env)
        if p.returncode != 0:
            res["errors"].append(dict(case=i, topo=t.to_json(), out=(p.stdout + p.stderr)[-800:]))
            continue
        p = subprocess.run([JAVA, "-jar", JAR, "calibrate", d, "--cpu", "auto"], capture_output=True, text=True)
        out = p.stdout + p.stderr
        res["cases"] += 1
        line = next((l for l in out.splitlines() if d in l and "ranks on" in l), out[-600:])
        if "reproduces the logged table" in line and "does not" not in line and "not reproduce" not in line:
            res["reproduced"] += 1
            m = re.search(r"(Intel|AMD) CPU", line)
            if m and m.group(1).lower() != cpu:
                res["not_reproduced"].append(dict(case=i, topo=t.to_json(), line=line, note="CPU vendor mis-detected"))
        else:
            res["not_reproduced"].append(dict(case=i, topo=t.to_json(), line=line.strip(), report=out[-1500:], dir=d))
        print(i, line.strip()[:200], flush=True)
    json.dump(res, open(os.path.join(tmp, "result.json"), "w"), indent=1)
    print(json.dumps(dict(cases=res["cases"], reproduced=res["reproduced"], bad=len(res["not_reproduced"]), errors=len(res["errors"]))))
    for b in res["not_reproduced"][:6]:
        print(json.dumps(b)[:2500])
    for e in res["errors"][:3]:
        print(json.dumps(e)[:1000])
    print("details:", tmp)


if __name__ == "__main__":
    main()
