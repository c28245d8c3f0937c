#!/usr/bin/env python3
"""Calibration on the simulated cluster, scored at shapes nobody swept (docs/calibrate.md).

The simulated cluster in its tune model (SIMCLUSTER_MODEL=tune, tests/simcluster/tunemodel.h):
NCCL's cost table is NCCL 2.28.9's model computed from the constants the tuner's init leaves;
the truth differs from NCCL's defaults in two constants (F1 perChMaxTreeBws.HOPPER.4NODES,
F2 hwLatencies.NET.TREE.LL), whose effect grows with nNodes, and in one effect no constant
expresses (U: Tree/LL128 30% slower from 1 MiB to 4 MiB).

1. `nccl-tuner sweep` at 2 and 4 nodes (8 GPUs each): TREE, RING x LL, LL128, SIMPLE and NCCL's
   pick, 4 B .. 1 GiB by 2x, 2 replicates, NCCL_DEBUG_SUBSYS with GRAPH (the topology lines).
2. `nccl-tuner compile` of both sweeps: the measured-rules-only policy.
3. `nccl-tuner calibrate` of both sweeps: the calibrated policy (--no-match-gpu: the simulated
   process has no CUDA driver, so the plugin cannot learn the GPU and a gpu match never applies).
4. At 8 and 16 nodes, never swept: the noiseless truth of every candidate (--truth), and what NCCL
   runs (selection lines, NCCL 2.28's tuner v5 ABI, which passes the constants) with no policy,
   with the measured-rules policy and with the calibrated one; regret = true time of the pick /
   fastest true time - 1, per size.
5. At 4 nodes under NCCL 2.27 (tuner v4: no constants): the plugin says the constants are not set
   and the measured rules still apply.

Prints per held-out shape the mean regret of each policy over all sizes and over the sizes where
NCCL's default loses 20% or more. Checks: such sizes exist at each held-out shape; there the
calibrated policy's mean regret is within 5% (and the measured-rules policy changes nothing);
the calibrated policy is no worse than NCCL's default over all sizes; the v4 run says so and
applies the rules. Exit 0 when all hold, 1 otherwise, 2 when the build is missing.

Usage: calibrate_heldout.py [--keep DIR]
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

from simdriver import JAR, JAVA, JAVA_HOME, PLUGIN, SIM, build_missing, fmt_size, verdict
SWEPT = (2, 4)
HELD_OUT = (8, 16)
SIZES = ["-b", "4", "-e", "1G", "-f", "2", "-g", "8"]
LOSS = 0.20      # where NCCL's default loses this much or more ...
TARGET = 0.05    # ... the calibrated policy must be within this
SEL = re.compile(r"AllReduce: (\d+) Bytes -> Algo (\w+) proto (\w+)")


def env(nodes, **extra):
    e = {k: v for k, v in os.environ.items() if not k.startswith(("NCCL_", "SIMCLUSTER_"))}
    e.update(JAVA_HOME=JAVA_HOME, SIMCLUSTER_MODEL="tune", SIMCLUSTER_NODES=str(nodes))
    e.update(extra)
    return e


def run(cmd, e):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=e)
    if r.returncode != 0:
        sys.stderr.write(r.stdout + r.stderr)
        raise SystemExit("calibrate_heldout: failed (exit %d): %s" % (r.returncode, " ".join(cmd)))
    return r.stdout + r.stderr


def truth(nodes):
    """{size: {ALGO/PROTO: true us}}, {size: NCCL's default pick}."""
    best, default = {}, {}
    for line in run([SIM, "all_reduce_perf", "--truth"] + SIZES, env(nodes)).splitlines():
        f = line.split()
        if len(f) >= 6 and f[1] == "truth":
            ap = "/".join(f[4].split("/")[:2])
            best.setdefault(int(f[3]), {})[ap] = float(f[5])
        elif len(f) >= 6 and f[1] == "truth-nccl":
            default[int(f[3])] = "/".join(f[4].split("/")[:2])
    return best, default


def picks(nodes, policy, era="2.28"):
    """{size: ALGO/PROTO NCCL ran} with the plugin enforcing a policy, and the run's output."""
    out = run([SIM, "all_reduce_perf", "--nccl-era", era, "-n", "1", "-w", "0"] + SIZES,
              env(nodes, NCCL_DEBUG="INFO", SIMCLUSTER_NOISE="0", NCCL_TUNER_PLUGIN=PLUGIN,
                  NCCL_TUNER_JAVA_POLICY=policy))
    return {int(m.group(1)): m.group(2) + "/" + m.group(3) for m in SEL.finditer(out)}, out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--keep", metavar="DIR")
    a = ap.parse_args()
    if build_missing("calibrate_heldout"):
        return 2
    work = a.keep or tempfile.mkdtemp(prefix="nccltj-calibrate-")
    os.makedirs(work, exist_ok=True)
    sweeps = []
    for i, nodes in enumerate(SWEPT):
        d = os.path.join(work, "sweep-%dnodes" % nodes)
        shutil.rmtree(d, ignore_errors=True)
        out = run([JAVA, "-jar", JAR, "sweep", "-o", d, "--binary", SIM, "--algorithms", "TREE,RING",
                   "--protocols", "LL,LL128,SIMPLE", "--replicates", "2", "--seed", str(20261224 + i)] + SIZES,
                  env(nodes, NCCL_DEBUG_SUBSYS="INIT,ENV,TUNING,GRAPH"))
        print("calibrate_heldout: " + out.strip().splitlines()[-1].split("; next:")[0])
        sweeps.append(d)
    measured = os.path.join(work, "measured.yaml")
    calibrated = os.path.join(work, "calibrated.yaml")
    # enforce: picks() runs them with no NCCL_TUNER_JAVA_MODE (compile's and calibrate's default is shadow)
    run([JAVA, "-jar", JAR, "compile"] + sweeps + ["-o", measured, "--summary", "--mode", "enforce"], env(1))
    report = run([JAVA, "-jar", JAR, "calibrate"] + sweeps + ["-o", calibrated, "--no-match-gpu", "--mode", "enforce"],
                 env(1))
    with open(os.path.join(work, "calibrate-report.txt"), "w") as f:
        f.write(report)
    print("calibrate_heldout: calibrate report (%s):" % os.path.join(work, "calibrate-report.txt"))
    for line in report.splitlines():
        if (line.startswith("  ") and " us " in line or " GB/s " in line) and "(default)" not in line:
            print("  " + line.strip())
        elif line.startswith(("Mean regret", "Measured crossovers", "Measured rules", "policy:")):
            print("  " + line)
    failures = []
    print("calibrate_heldout: held-out shapes (never swept), AllReduce 4 B .. 1 GiB, regret = true time of what NCCL "
          "ran / fastest - 1")
    for nodes in HELD_OUT:
        best, default = truth(nodes)
        got = {"NCCL default": default}
        got["measured rules"], _ = picks(nodes, measured)
        got["calibrated"], log = picks(nodes, calibrated)
        if "set %d constants" % 0 in log or not re.search(r"profile calibrated: set \d+ constants", log):
            failures.append("%d nodes: the plugin did not set the calibrated constants" % nodes)
        sizes = sorted(best)
        regret = {k: {n: best[n][v[n]] / min(best[n].values()) - 1 for n in sizes if n in v} for k, v in got.items()}
        lossy = [n for n in sizes if regret["NCCL default"][n] >= LOSS]
        window = [n for n in sizes if (1 << 20) <= n < (4 << 20)]
        print("  %d ranks on %d nodes:" % (8 * nodes, nodes))
        print("    %-16s %12s %22s %14s" % ("policy", "all sizes", "where default >= 20%", "1..4 MiB (U)"))
        for k in got:
            r = regret[k]
            if len(r) != len(sizes):
                failures.append("%d nodes: %s: %d of %d sizes ran" % (nodes, k, len(r), len(sizes)))
                continue
            m_all = sum(r.values()) / len(r)
            m_loss = sum(r[n] for n in lossy) / len(lossy) if lossy else 0.0
            mx_loss = max((r[n] for n in lossy), default=0.0)
            m_win = sum(r[n] for n in window) / len(window)
            print("    %-16s %11.2f%% %13.2f%% (max %4.1f%%) %13.2f%%" % (k, 100 * m_all, 100 * m_loss,
                                                                       100 * mx_loss, 100 * m_win))
        print("    sizes where NCCL's default loses >= 20%%: %s" % (", ".join(
            "%s (%s %.0f%%, calibrated %s %.1f%%)" % (fmt_size(n), default[n], 100 * regret["NCCL default"][n],
                                                    got["calibrated"][n], 100 * regret["calibrated"][n])
            for n in lossy) or "none"))
        if not lossy:
            failures.append("%d nodes: NCCL's default loses 20%% nowhere; the held-out test shows nothing" % nodes)
            continue
        cal = sum(regret["calibrated"][n] for n in lossy) / len(lossy)
        if not cal <= TARGET:
            failures.append("%d nodes: calibrated regret %.1f%% where NCCL's default loses >= 20%% (target <= 5%%)"
                            % (nodes, 100 * cal))
        if got["measured rules"] != default:
            failures.append("%d nodes: the measured-rules policy changed NCCL's picks at an unmeasured shape" % nodes)
        if sum(regret["calibrated"].values()) > sum(regret["NCCL default"].values()):
            failures.append("%d nodes: the calibrated policy is worse than NCCL's default over all sizes" % nodes)
    # tuner v4 (NCCL 2.27): no constants; the measured rules of the measured shape still apply
    v4, log = picks(4, calibrated, era="2.27")
    said = re.search(r"constants not set: NCCL passes its model constants from tuner v5 \(2\.28\); this NCCL uses v4",
                     log) and re.search(r"profile nRanks32-nNodes4: (its \d+ measured rules apply without the constants|no rules "
                              r"either, so NCCL's own model applies unchanged)", log)
    rules = re.findall(r"bytes: \{from: ([^,]+), to: ([^}]+)\}\n(?:.*\n)*?\s+- \{algorithm: (\w+), protocol: (\w+)",
                       open(calibrated).read().split("- name: calibrated")[0].split("nNodes: 4}")[-1])
    print("calibrate_heldout: tuner v4 at 4 nodes: %s; %d measured rules of that shape" % (
        "init says the constants are not set and the measured rules apply" if said else "no such init line",
        len(rules)))
    if not said:
        failures.append("tuner v4: the plugin did not say that the constants are not set and the rules apply")

    def to_bytes(t):
        num, unit = t.split()
        return int(float(num) * {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}[unit])
    for lo, hi, alg, proto in rules:
        for n, ran in v4.items():
            if to_bytes(lo) <= n < to_bytes(hi) and ran != alg + "/" + proto:
                failures.append("tuner v4: at %s NCCL ran %s, the measured rule says %s/%s" % (fmt_size(n), ran,
                                                                                               alg, proto))
    if verdict("calibrate_heldout", failures, work):
        return 1
    if not a.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
