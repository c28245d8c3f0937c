"""What the GPU run checkers (e2e_check.py, canary_check.py) share; Python 3 standard library only.

Their lines: each check prints one, `PASS what` or `FAIL what: detail` (the detail when given), and the
run ends with `NAME: N passed, M failed`, the lines the scripts' callers and tests read. And how they
read a decision log (NCCL_TUNER_JAVA_LOG, one JSON object a line).
"""
import json
import os


def read_jsonl(path):
    """The records of a JSON-lines file, blank and unreadable lines skipped; None if the file is missing."""
    if not os.path.isfile(path):
        return None
    recs = []
    with open(path, errors="replace") as f:
        for line in f:
            line = line.strip()
            if line:
                try:
                    recs.append(json.loads(line))
                except ValueError:
                    pass
    return recs


class Checks:
    """Counts the checks of one run and prints a line for each."""

    def __init__(self):
        self.passed = self.failed = 0

    def check(self, ok, what, detail=""):
        """Counts and prints one check; returns ok."""
        if ok:
            self.passed += 1
        else:
            self.failed += 1
        print("%s %s%s" % ("PASS" if ok else "FAIL", what, (": " + detail) if detail else ""), flush=True)
        return ok

    def summary(self, name):
        """Prints `name: N passed, M failed`; returns True when nothing failed."""
        print("%s: %d passed, %d failed" % (name, self.passed, self.failed))
        return self.failed == 0
