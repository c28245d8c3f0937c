#!/usr/bin/env python3
"""Checks one canary run (tests/gpu/canary.sh) from its decision logs; Python 3 standard library only.

Usage: canary_check.py OUT_DIR
OUT_DIR holds, per rank r: decisions.rank<r>.jsonl (NCCL_TUNER_JAVA_LOG: comm, aggregate, measured, profiled
lines), rc.rank<r> (exit status; optional), result.rank<r>.json (canary_worker.py; optional), and report.txt /
report.rc (`nccl-tuner report` over both logs). Prints one PASS/FAIL line per check, a table of the measured
series and `canary: N passed, M failed`; exit 0 only if nothing failed.
Checks: both ranks exited 0 and computed correct results; each rank's profiler joined every collective;
measured lines exist for both arms (policy, nccl) on each rank; every policy-arm series ran as decided, and
at least one names a channel count that NCCL executed (`channels`) and the kernel ran on (`kernelChannels`);
both ranks' comm lines carry one sha256 (the measured lines too) and one commId; the report ran and says
every rank runs the same table.
"""
import json
import os
import sys

from checks import Checks, read_jsonl

RANKS = (0, 1)


def read_text(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return None


class Checker(Checks):
    def __init__(self, out):
        super().__init__()
        self.out = out

    def f(self, name):
        return os.path.join(self.out, name)

    def run(self):
        logs = {r: read_jsonl(self.f("decisions.rank%d.jsonl" % r)) for r in RANKS}
        for r in RANKS:
            rc = read_text(self.f("rc.rank%d" % r))
            if rc is not None:
                self.check(rc.strip() == "0", "rank %d exited 0" % r, "exit %s" % rc.strip())
            res = read_text(self.f("result.rank%d.json" % r))
            if res is not None:
                try:
                    j = json.loads(res)
                except ValueError:
                    j = {"error": "unreadable result"}
                wrong = sum(a.get("wrong", 0) for a in j.get("allreduce", []))
                self.check(j.get("error") is None and wrong == 0, "rank %d: every AllReduce correct" % r,
                           "error %s, %d wrong elements" % (j.get("error"), wrong))
        for r in RANKS:
            self.check(logs[r] is not None, "rank %d: decision log exists" % r, self.f("decisions.rank%d.jsonl" % r))
        if any(logs[r] is None for r in RANKS):
            return self.done()
        comms = {r: [x for x in logs[r] if x.get("type") == "comm"] for r in RANKS}
        measured = {r: [x for x in logs[r] if x.get("type") == "measured"] for r in RANKS}
        profiled = {r: [x for x in logs[r] if x.get("type") == "profiled"] for r in RANKS}
        for r in RANKS:
            p = profiled[r]
            self.check(len(p) >= 1 and all(x.get("joined") is True and x.get("unjoined") == 0 and
                                           x.get("collectives", 0) > 0 for x in p),
                       "rank %d: the profiler joined every collective with the tuner's decision" % r,
                       json.dumps(p)[:300])
            for arm in ("policy", "nccl"):
                s = [x for x in measured[r] if x.get("arm") == arm and x.get("timed", 0) > 0]
                self.check(bool(s), "rank %d: measured lines for the %s arm" % (r, arm),
                           "%d series, %d collectives timed" % (len(s), sum(x.get("timed", 0) for x in s)))
            pol = [x for x in measured[r] if x.get("arm") == "policy"]
            bad = [x for x in pol if x.get("asDecided") is not True or x.get("executed") != x.get("decided")]
            self.check(not bad, "rank %d: every policy-arm series executed as decided" % r,
                       "; ".join("%s %s decided %s executed %s asDecided %s" % (
                           x.get("collective"), x.get("bucket"), x.get("decided"), x.get("executed"),
                           x.get("asDecided")) for x in bad))
            ch = [x for x in pol if x.get("decidedChannels", 0) > 0]
            badch = [x for x in ch if not (x.get("channels") == x.get("decidedChannels") == x.get("kernelChannels"))]
            self.check(bool(ch) and not badch, "rank %d: the channel override ran (channels, kernelChannels)" % r,
                       "%d series name channels; %s" % (len(ch), "; ".join(
                           "%s decidedChannels %s channels %s kernelChannels %s" % (
                               x.get("bucket"), x.get("decidedChannels"), x.get("channels"), x.get("kernelChannels"))
                           for x in (badch or ch))))
        shas = {x.get("sha256") for r in RANKS for x in comms[r]}
        self.check(all(comms[r] for r in RANKS) and len(shas) == 1,
                   "both ranks' comm lines carry one sha256", ", ".join(sorted(str(s) for s in shas)) or "no comm lines")
        msha = {x.get("sha256") for r in RANKS for x in measured[r]}
        self.check(msha == shas, "the measured lines carry the same sha256", ", ".join(sorted(str(s) for s in msha)))
        ids = {x.get("comm") for r in RANKS for x in measured[r] + profiled[r]}
        self.check(len(ids) == 1, "both ranks measured one communicator (commId)", ", ".join(map(str, sorted(ids))))
        rc, rep = read_text(self.f("report.rc")), read_text(self.f("report.txt"))
        self.check(rc is not None and rc.strip() == "0" and rep is not None and
                   "every rank of each shape runs the same table" in rep,
                   "nccl-tuner report ran over both logs and found one table",
                   "exit %s" % (rc.strip() if rc else "missing"))
        self.table(measured)
        return self.done()

    def table(self, measured):
        print("\n%-4s %-10s %-22s %-7s %-12s %-12s %4s %6s %6s %9s" % (
            "rank", "collective", "bucket", "arm", "decided", "executed", "ch", "kernCh", "timed", "mean us"))
        for r in RANKS:
            for x in sorted(measured[r], key=lambda x: (x.get("nBytes", 0), x.get("arm", ""))):
                print("%-4d %-10s %-22s %-7s %-12s %-12s %4s %6s %6s %9.1f" % (
                    r, x.get("collective"), x.get("bucket"), x.get("arm"),
                    "%s%s" % (x.get("decided"), "/%dch" % x["decidedChannels"] if x.get("decidedChannels") else ""),
                    x.get("executed"), x.get("channels"), x.get("kernelChannels"), x.get("timed"),
                    x.get("meanUs") or 0.0))
        print()

    def done(self):
        return 0 if self.summary("canary") else 1


def main(argv):
    if len(argv) != 1 or not os.path.isdir(argv[0]):
        print("usage: canary_check.py OUT_DIR", file=sys.stderr)
        return 2
    return Checker(argv[0]).run()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
