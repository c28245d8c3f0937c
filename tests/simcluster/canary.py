#!/usr/bin/env python3
"""The canary on the simulated cluster: measured gain against the model's truth (docs/dev/simcluster.md).

The simulated cluster (build/tests/simcluster --nccl-era) loads the plugin as NCCL loads it, as
tuner and as profiler from the same library, and calls the profiler the way that NCCL release does
(the Coll event with what ran, the KernelCh events with the GPU times of the true model plus noise,
from a second thread). Steps, each with its figures printed:

1. The host itself, against a checking profiler (build/tests/libsim-profcheck.so,
   tests/simcluster/profcheck.c): in every era (2.27 .. 2.30) and for the activation masks
   KernelCh, Coll, 0, the events NCCL would send and no other, in NCCL's order, with the device
   times of the model.
2. A policy written from the model's known errors (E1/E2: TREE/LL128 at 32 and 64 KiB; E3:
   RING/SIMPLE on 16 channels from 1 MiB), run in canary mode (fraction 0.3) on two ranks, two
   processes with the same commId, NCCL 2.28's ABIs (tuner v5, profiler v5): both ranks take the
   same arm on every call (their executed sequences are identical); every policy-arm collective
   ran as decided; per size the measured gain of the policy's arm over NCCL's arm (from the
   `measured` lines of both ranks' decision logs: mean, with a 99.9% interval from the lines'
   sums of squares) holds the model's truth gain (--truth, noiseless: NCCL's pick against the
   candidate) and is narrower than 10 points; `nccl-tuner report` is run on the logs and its
   canary figures printed beside.
3. NCCL 2.27 (tuner v4 with no commId, profiler v4) and 2.30 (tuner v6, profiler v6, the KernelCh
   events on the main thread): measured lines appear for both arms, both ranks agree.
4. Negative control: 2.28 with the simulator running RING whatever was selected (like NCCL_ALGO
   set): the policy arm's TREE/LL128 decisions are measured with asDecided false.

Usage: canary.py [--keep DIR]. Exit 0 when every check holds, 1 otherwise, 2 when the build is missing.
"""
import argparse
import json
import math
import os
import re
import subprocess
import sys
import tempfile

from simdriver import BUILD, JAR, JAVA, JAVA_HOME, PLUGIN, SIM, build_missing, fmt_size

PROFCHECK = os.path.join(BUILD, "tests", "libsim-profcheck.so")

FRACTION = 0.3
COMM_ID = "0x5eedc0ffee001002"
SEED = 20261202
Z = 3.29  # 99.9%: 7 sizes with a gain are checked; a 95% interval would miss one in three runs
MAX_WIDTH = 0.10

POLICY = """schema: nccl-tuner-java/v1
name: simcluster-canary
description: written from the simulated cluster's known model errors (docs/measure.md E1, E2, E3)
profiles:
  - name: sim-16rank-2node
    match: {nRanks: 16, nNodes: 2}
    rules:
      - collective: AllReduce
        bytes: {from: 32 KiB, to: 128 KiB}
        candidates:
          - {algorithm: TREE, protocol: LL128}
      - collective: AllReduce
        bytes: {from: 1 MiB, to: 32 MiB}
        candidates:
          - {algorithm: RING, protocol: SIMPLE, channels: 16}
"""
CANDIDATE = [((32 << 10, 128 << 10), "TREE/LL128/8"), ((1 << 20, 32 << 20), "RING/SIMPLE/16")]

failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("canary: FAIL: " + what)
    return ok


def env(**extra):
    e = {k: v for k, v in os.environ.items() if not k.startswith(("NCCL_", "SIMCLUSTER_", "PROFCHECK_"))}
    e["JAVA_HOME"] = JAVA_HOME
    e.update({k: str(v) for k, v in extra.items()})
    return e


def run(cmd, e, timeout=600):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=e)
    if r.returncode != 0:
        sys.stderr.write(r.stdout[-4000:] + r.stderr[-4000:])
        raise SystemExit("canary: failed (exit %d): %s" % (r.returncode, " ".join(cmd)))
    return r


def candidate(n):
    for (lo, hi), c in CANDIDATE:
        if lo <= n < hi:
            return c
    return None


def sizes(b, e, f):
    out, n = [], b
    while n <= e:
        out.append(n)
        n = int(n * f + 0.5)
    return out


# ---- 1. the host against the checking profiler -------------------------------------------------

def profcheck_lines(stderr):
    summary, series = None, []
    for line in stderr.splitlines():
        if line.startswith("profcheck: v"):
            f = line.split()
            summary = {f[i]: f[i + 1] for i in range(2, len(f) - 1, 2)}
            summary["version"] = f[1]
        elif line.startswith("profcheck-series "):
            series.append(line)
        elif line.startswith("profcheck: ERROR"):
            print("  " + line)
    return summary, series


def host_check(work):
    print("canary: 1. the simulated host against the checking profiler (tests/simcluster/profcheck.c)")
    sz = sizes(32 << 10, 4 << 20, 4)
    w, n = 2, 10
    per = w + 2 * n
    truth = {}
    for line in run([SIM, "all_reduce_perf", "--truth", "-b", "32K", "-e", "4M", "-f", "4"], env()).stdout.splitlines():
        f = line.split()
        if f[1] == "truth-nccl":
            truth[int(f[3])] = (f[4], float(f[5]))
    want_version = {"2.27": "v4", "2.28": "v5", "2.29": "v6", "2.30": "v6"}
    for era in ("2.27", "2.28", "2.29", "2.30"):
        for mask, proxy in ((0x40, "thread"), (0x2, "thread"), (0, "thread"), (0x840, "inline")):
            r = run([SIM, "all_reduce_perf", "-b", "32K", "-e", "4M", "-f", "4", "-n", str(n), "-w", str(w), "--nccl-era", era],
                    env(NCCL_PROFILER_PLUGIN=PROFCHECK, PROFCHECK_MASK=hex(mask), SIMCLUSTER_SEED=SEED, SIMCLUSTER_PROXY=proxy))
            s, series = profcheck_lines(r.stderr)
            if not check(s is not None, "era %s mask 0x%x: the profiler's finalize was not called" % (era, mask)):
                continue
            colls = len(sz) * per
            v5 = era != "2.27"
            exp = {"errors": 0}
            if mask == 0:
                exp.update(events=0)
            else:
                exp.update(coll=colls, group=colls, groupApi=colls if v5 else 0, collApi=colls if v5 else 0,
                           kernelCh=colls * 8 if mask & 0x40 else 0,
                           offThread=colls * 8 if mask & 0x40 and proxy == "thread" else 0,
                           launches=colls if v5 and mask & 0x800 else 0)
            got = {k: int(s[k]) for k in exp}
            ok = check(got == exp and s["version"] == want_version[era],
                       "era %s mask 0x%x proxy %s: profcheck saw %s %s, expected %s %s"
                       % (era, mask, proxy, s["version"], got, want_version[era], exp))
            spans = []
            for line in series:
                m = re.match(r"profcheck-series AllReduce count=(\d+) ncclFloat32 (\S+) n=(\d+) kernelCh=(\d+) meanUs=(\S+)", line)
                nb = int(m.group(1)) * 4
                ok &= check(m.group(2) == truth[nb][0],
                            "era %s: at %s ran %s, NCCL's pick is %s" % (era, fmt_size(nb), m.group(2), truth[nb][0]))
                rel = float(m.group(5)) / truth[nb][1] - 1
                spans.append(rel)
                ok &= check(abs(rel) < 0.04, "era %s: device time at %s is %+.1f%% from the model's %.2f us"
                            % (era, fmt_size(nb), 100 * rel, truth[nb][1]))
            if mask & 0x40:
                ok &= check(len(series) == len(sz), "era %s mask 0x%x: %d series, expected %d" % (era, mask, len(series), len(sz)))
                ok &= check(int(s["interleaved"]) > 0, "era %s: KernelCh events never interleaved across channels" % era)
            if ok:
                print("  era %s %s mask 0x%03x proxy %-6s: %s events, coll %s, kernelCh %s (off the main thread %s), "
                      "errors 0%s" % (era, s["version"], mask, proxy, s["events"], s["coll"], s["kernelCh"], s["offThread"],
                                      "; device times within %.1f%% of the model" % (100 * max(map(abs, spans)))
                                      if spans else ""))


# ---- 2. the canary on two ranks ---------------------------------------------------------------

def run_ranks(work, tag, era, sim_args, extra, nranks=2):
    """Both ranks as two processes at once; returns [(log path, calls path, stdout)]."""
    procs = []
    for rank in range(nranks):
        log = os.path.join(work, "%s-r%d.jsonl" % (tag, rank))
        calls = os.path.join(work, "%s-r%d.calls" % (tag, rank))
        for p in (log, calls):
            if os.path.exists(p):
                os.remove(p)
        e = env(NCCL_TUNER_PLUGIN=PLUGIN, NCCL_PROFILER_PLUGIN=PLUGIN, NCCL_TUNER_JAVA_POLICY=os.path.join(work, "policy.yaml"),
                NCCL_TUNER_JAVA_MODE="canary", NCCL_TUNER_JAVA_CANARY=FRACTION, NCCL_TUNER_JAVA_LOG=log,
                NCCL_DEBUG="INFO", SIMCLUSTER_SEED=SEED, SIMCLUSTER_COMM_ID=COMM_ID, **extra)
        cmd = [SIM, "all_reduce_perf"] + sim_args + ["--nccl-era", era, "--rank", str(rank), "--calls", calls]
        procs.append((cmd, log, calls, subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=e)))
    out = []
    for cmd, log, calls, p in procs:
        text, _ = p.communicate(timeout=600)
        with open(log.replace(".jsonl", ".out"), "w") as f:
            f.write(text)
        if p.returncode != 0:
            sys.stderr.write(text[-4000:])
            raise SystemExit("canary: failed (exit %d): %s" % (p.returncode, " ".join(cmd)))
        out.append((log, calls, text))
    return out


def read_calls(path, spans=False):
    """The host's calls: (function, nBytes, executed ALGO/PROTO/CHANNELS), with its device time in ns if spans."""
    with open(path) as f:
        return [tuple(l.split()[1:5] if spans else l.split()[1:4]) for l in f]


def read_log(path):
    measured, profiled = [], []
    if not os.path.exists(path):
        return measured, profiled
    with open(path) as f:
        for line in f:
            try:
                r = json.loads(line)
            except ValueError:
                continue
            if r.get("type") == "measured":
                measured.append(r)
            elif r.get("type") == "profiled":
                profiled.append(r)
    return measured, profiled


def pool(lines):
    """Series of one (size, arm) pooled over ranks: count, timed, mean, sd, p50 (count-weighted)."""
    n = sum(l["timed"] for l in lines)
    if n == 0:
        return None
    s = sum(l["sumUs"] for l in lines)
    ss = sum(l["sumSqUs"] for l in lines)
    mean = s / n
    var = max(ss / n - mean * mean, 0.0) * n / max(n - 1, 1)
    p50 = sum(l["p50Us"] * l["timed"] for l in lines if l.get("p50Us") is not None) / n
    return {"calls": sum(l["count"] for l in lines), "timed": n, "mean": mean, "var": var, "p50": p50}


def agreement(tag, ranks):
    seqs = [read_calls(c) for _, c, _ in ranks]
    same = all(s == seqs[0] for s in seqs[1:])
    first = next((i for i in range(min(map(len, seqs))) if any(s[i] != seqs[0][i] for s in seqs)), None)
    check(same and len(seqs[0]) > 0, "%s: the ranks' executed sequences differ (first at call %s: %s)"
          % (tag, first + 1 if first is not None else "end", [s[first] if first is not None and first < len(s) else None
                                                             for s in seqs]))
    return seqs[0], same


def canary_main(work):
    print("canary: 2. canary mode, fraction %.1f, two ranks (two processes, commId %s), NCCL 2.28 (tuner v5, profiler v5)"
          % (FRACTION, COMM_ID))
    sim_args = ["-b", "32K", "-e", "16M", "-f", "2", "-n", "150", "-w", "10"]
    ranks = run_ranks(work, "era2.28", "2.28", sim_args, {})
    calls, same = agreement("era 2.28", ranks)
    ruled = [c for c in calls if candidate(int(c[1]))]
    pol = [c for c in ruled if c[2] == candidate(int(c[1]))]
    frac = len(pol) / max(len(ruled), 1)
    print("  arms: %d calls per rank, %d covered by a rule, %d on the policy's arm (%.3f; fraction %.1f); both ranks took "
          "the same arm on every call: %s" % (len(calls), len(ruled), len(pol), frac, FRACTION, "yes" if same else "NO"))
    check(abs(frac - FRACTION) < 0.05, "policy-arm fraction %.3f, not %.1f +- 0.05" % (frac, FRACTION))
    # the model's truth at these sizes
    truth, nccl = {}, {}
    for line in run([SIM, "all_reduce_perf", "--truth"] + sim_args[:6], env()).stdout.splitlines():
        f = line.split()
        if f[1] == "truth":
            truth[(int(f[3]), f[4])] = float(f[5])
        elif f[1] == "truth-nccl":
            nccl[int(f[3])] = (f[4], float(f[5]))
    measured, profiled = [], []
    for log, _, _ in ranks:
        m, p = read_log(log)
        check(len(m) > 0 and len(p) == 1, "%s: %d measured lines, %d profiled lines" % (os.path.basename(log), len(m), len(p)))
        measured += m
        profiled += p
    for p in profiled:
        check(p.get("joined") is True and p.get("unjoined") == 0 and p.get("untimed") == 0 and p.get("unaggregated") == 0
              and p.get("profilerVersion") == 5 and p.get("collectives") == len(calls),
              "profiled line %s (expected joined, %d collectives, none unjoined/untimed/unaggregated, profilerVersion 5)"
              % (json.dumps(p), len(calls)))
    # executed as decided
    pol_lines = [l for l in measured if l["arm"] == "policy"]
    check(all(l["asDecided"] is True and l["executed"] + "/" + str(l["channels"]) == candidate(l["nBytes"])
              for l in pol_lines), "a policy-arm series did not run as decided: %s"
          % [l for l in pol_lines if l["asDecided"] is not True][:2])
    pol_count = sum(l["count"] for l in pol_lines)
    check(pol_count == 2 * len(pol), "policy-arm collectives measured %d, the hosts ran %d" % (pol_count, 2 * len(pol)))
    nccl_lines = [l for l in measured if l["arm"] == "nccl"]
    check(all(l["asDecided"] is True for l in nccl_lines), "a nccl-arm series did not run as decided")
    print("  executed as decided: policy arm %d collectives (both ranks) in %d series, all asDecided; nccl arm %d in %d"
          % (pol_count, len(pol_lines), sum(l["count"] for l in nccl_lines), len(nccl_lines)))
    # what the hosts ran and timed, per size and arm, against what the profiler measured
    host = {}
    for _, c, _ in ranks:
        for fn, nb, cfg, span in read_calls(c, spans=True):
            arm = "policy" if cfg == candidate(int(nb)) else "nccl" if candidate(int(nb)) else "unruled"
            h = host.setdefault((int(nb), arm), [0, 0.0])
            h[0] += 1
            h[1] += int(span) / 1000.0
    bad = []
    for (nb, arm), (cnt, sumus) in sorted(host.items()):
        lines = [l for l in measured if l["nBytes"] == nb and l["arm"] == arm and l["collective"] == "AllReduce"]
        mc, ms = sum(l["count"] for l in lines), sum(l["sumUs"] for l in lines)
        if mc != cnt or abs(ms - sumus) > 1e-6 * sumus + 0.05 * len(lines) + 1e-3:  # sumUs is printed to 0.1 us
            bad.append("%s %s: host %d collectives %.3f us, measured %d %.3f us" % (fmt_size(nb), arm, cnt, sumus, mc, ms))
    check(not bad, "measured lines differ from what the hosts timed: %s" % bad[:4])
    if not bad:
        print("  measured = timed: at every size and arm the measured lines' count and sumUs equal the hosts' own "
              "(%d series keys)" % len(host))
    # the gain per size
    print("  %-8s | %-30s | %-30s | %-22s | %s" % ("size", "NCCL's arm: calls p50 mean us", "policy's arm: calls p50 mean us",
                                                   "measured gain (99.9%)", "truth"))
    figures = {}
    for n in sorted(nccl):
        lines = [l for l in measured if l["nBytes"] == n and l["collective"] == "AllReduce"]
        a = pool([l for l in lines if l["arm"] == "nccl"])
        b = pool([l for l in lines if l["arm"] == "policy"])
        cand = candidate(n)
        if cand is None:
            arms = sorted({l["arm"] for l in lines})
            print("  %-8s | no rule: arms %s, %d collectives" % (fmt_size(n), arms, sum(l["count"] for l in lines)))
            check(arms == ["unruled"], "%s has no rule, its measured arms are %s" % (fmt_size(n), arms))
            continue
        if not check(a is not None and b is not None, "%s: an arm has no timed collective" % fmt_size(n)):
            continue
        r = b["mean"] / a["mean"]
        gain = 1 - r
        se = r * math.sqrt(b["var"] / (b["timed"] * b["mean"] ** 2) + a["var"] / (a["timed"] * a["mean"] ** 2))
        lo, hi = gain - Z * se, gain + Z * se
        tg = 1 - truth[(n, cand)] / nccl[n][1]
        figures[n] = (gain, lo, hi, tg)
        print("  %-8s | %5d %9.2f %9.2f %-5s | %5d %9.2f %9.2f %-5s | %+6.2f%% [%+.2f, %+.2f] | %+6.2f%% %s -> %s"
              % (fmt_size(n), a["calls"], a["p50"], a["mean"], "", b["calls"], b["p50"], b["mean"], "",
                 100 * gain, 100 * lo, 100 * hi, 100 * tg, nccl[n][0], cand))
        if tg > 0.02:  # a real gain
            check(lo <= tg <= hi, "%s: the truth gain %+.2f%% is outside the measured [%+.2f%%, %+.2f%%]"
                  % (fmt_size(n), 100 * tg, 100 * lo, 100 * hi))
            check(hi - lo < MAX_WIDTH, "%s: the interval is %.1f points wide" % (fmt_size(n), 100 * (hi - lo)))
    check(len(figures) == len([n for n in nccl if candidate(n)]), "not every ruled size has both arms measured")
    report(work, [l for l, _, _ in ranks], figures)


def report(work, logs, figures):
    """`nccl-tuner report` on both ranks' logs: its canary section printed, its gain per size compared with ours
    and with the truth. Its interval is 95%; with 7 sizes one in three runs would see a truth outside one of
    them by chance, so the check widens its half-width to 99.9% (x 3.29 / 1.96), like ours, and says where the
    truth falls outside the 95% one."""
    r = subprocess.run([JAVA, "-jar", JAR, "report"] + logs, capture_output=True, text=True, timeout=300, env=env())
    with open(os.path.join(work, "report.txt"), "w") as f:
        f.write(r.stdout + r.stderr)
    check(r.returncode == 0, "nccl-tuner report exited %d: %s" % (r.returncode, (r.stdout + r.stderr)[-500:]))
    out = r.stdout.splitlines()
    start = next((i for i, l in enumerate(out) if l.startswith("canary: measured lines")), None)
    if start is None:
        print("  nccl-tuner report: no canary section (this build's report predates it; report.txt kept); "
              "the figures above are this script's own")
        return
    end = next((i for i in range(start, len(out)) if out[i].startswith("verdicts:")), len(out) - 1)
    print("  nccl-tuner report, its canary section:")
    for l in out[start:end + 1]:
        print("    " + l)
    compared = 0
    for n, (gain, lo, hi, tg) in sorted(figures.items()):
        pat = re.compile(r"\[%s,[^)]*\).*?([+-]?\d+(?:\.\d+)?)%%\s*\[\s*([+-]?\d+(?:\.\d+)?)%%,\s*([+-]?\d+(?:\.\d+)?)%%\]"
                         % re.escape(fmt_size(n)))
        m = next((pat.search(l) for l in out[start:end + 1] if pat.search(l)), None)
        if not check(m is not None, "report: no gain with an interval for AllReduce at %s" % fmt_size(n)):
            continue
        g, rlo, rhi = (float(x) / 100 for x in m.groups())
        compared += 1
        half = (rhi - rlo) / 2 * Z / 1.96
        inside95 = rlo <= tg <= rhi
        print("  report at %-7s gain %+.1f%% [%+.1f%%, %+.1f%%] (95%%), this script %+.2f%%, truth %+.2f%%: %s"
              % (fmt_size(n) + ":", 100 * g, 100 * rlo, 100 * rhi, 100 * gain, 100 * tg,
                 "inside its 95% interval" if inside95 else "outside its 95% interval, inside 99.9%"
                 if abs(tg - g) <= half else "OUTSIDE"))
        check(abs(g - gain) <= 0.0006, "report at %s: gain %+.1f%%, this script's %+.2f%%" % (fmt_size(n), 100 * g, 100 * gain))
        if tg > 0.02:
            check(abs(tg - g) <= half + 0.0005, "report at %s: the truth %+.2f%% is outside its interval (even at 99.9%%)"
                  % (fmt_size(n), 100 * tg))
            check(rhi - rlo < MAX_WIDTH, "report at %s: interval %.1f points wide" % (fmt_size(n), 100 * (rhi - rlo)))
    print("  report compared at %d sizes" % compared)


# ---- 3. the other eras; 4. the negative control -----------------------------------------------

def other_eras(work):
    print("canary: 3. NCCL 2.27 (tuner v4, no commId; profiler v4) and 2.30 (tuner v6, profiler v6, KernelCh on the main thread)")
    sim_args = ["-b", "32K", "-e", "4M", "-f", "4", "-n", "40", "-w", "5"]
    for era, ver, extra in (("2.27", 4, {}), ("2.30", 6, {"SIMCLUSTER_PROXY": "inline"})):
        ranks = run_ranks(work, "era" + era, era, sim_args, extra)
        calls, same = agreement("era " + era, ranks)
        ms = [read_log(l) for l, _, _ in ranks]
        arms = sorted({m["arm"] for mm, _ in ms for m in mm})
        npol = sum(m["count"] for mm, _ in ms for m in mm if m["arm"] == "policy")
        ok = check(all(len(mm) > 0 for mm, _ in ms), "era %s: a rank wrote no measured line" % era)
        ok &= check({"nccl", "policy", "unruled"} <= set(arms), "era %s: measured arms %s" % (era, arms))
        ok &= check(all(len(p) == 1 and p[0].get("profilerVersion") == ver and p[0].get("collectives") == len(calls)
                        and p[0].get("joined") is True for _, p in ms),
                    "era %s: profiled lines %s" % (era, [p for _, p in ms]))
        ok &= check(all(m["asDecided"] is True for mm, _ in ms for m in mm if m["arm"] == "policy"),
                    "era %s: a policy-arm series not asDecided" % era)
        print("  era %s: %d calls per rank, ranks agree: %s; measured arms %s, policy arm %d collectives, profiler v%d"
              % (era, len(calls), "yes" if same else "NO", arms, npol, ver))
        # docs/canary.md: the comm lines use the measured lines' comm value (a report joins them by host, pid, comm)
        for log, _, _ in ranks:
            with open(log) as f:
                recs = [json.loads(l) for l in f if l.startswith("{")]
            comm = {r["comm"] for r in recs if r.get("type") == "comm"}
            meas = {r["comm"] for r in recs if r.get("type") in ("measured", "profiled")}
            ok &= check(comm == meas, "era %s %s: comm lines say comm %s, measured/profiled lines %s (docs/canary.md: "
                        "the same value)" % (era, os.path.basename(log), sorted(comm), sorted(meas)))


def negative(work):
    print("canary: 4. negative control: NCCL 2.28, the simulator runs RING whatever was selected (like NCCL_ALGO=RING)")
    sim_args = ["-b", "32K", "-e", "1M", "-f", "32", "-n", "40", "-w", "5"]
    ranks = run_ranks(work, "override", "2.28", sim_args, {"SIMCLUSTER_EXEC_ALGO": "RING"}, nranks=1)
    measured, _ = read_log(ranks[0][0])
    tree = [l for l in measured if l["arm"] == "policy" and l["nBytes"] == 32 << 10]
    ring16 = [l for l in measured if l["arm"] == "policy" and l["nBytes"] == 1 << 20]
    ok = check(len(tree) > 0 and all(l["decided"] == "TREE/LL128" and l["executed"] == "RING/LL128" and l["asDecided"] is False
                                     for l in tree),
               "override: the 32 KiB policy arm should be decided TREE/LL128, executed RING/LL128, asDecided false: %s" % tree)
    ok &= check(len(ring16) > 0 and all(l["asDecided"] is True for l in ring16),
                "override: the 1 MiB policy arm (RING/SIMPLE/16) should stay asDecided: %s" % ring16)
    if ok:
        print("  32 KiB policy arm: decided %s, executed %s, asDecided %s (%d collectives); 1 MiB: decided %s/%d, asDecided %s"
              % (tree[0]["decided"], tree[0]["executed"], tree[0]["asDecided"], sum(l["count"] for l in tree),
                 ring16[0]["decided"], ring16[0]["decidedChannels"], ring16[0]["asDecided"]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--keep", metavar="DIR")
    a = ap.parse_args()
    if build_missing("canary", PROFCHECK):
        return 2
    work = a.keep or tempfile.mkdtemp(prefix="nccltj-canary-")
    os.makedirs(work, exist_ok=True)
    with open(os.path.join(work, "policy.yaml"), "w") as f:
        f.write(POLICY)
    host_check(work)
    canary_main(work)
    other_eras(work)
    negative(work)
    if failures:
        print("canary: %d check(s) failed; outputs in %s" % (len(failures), work))
        return 1
    print("canary: ok (outputs in %s)" % work)
    return 0


if __name__ == "__main__":
    sys.exit(main())
