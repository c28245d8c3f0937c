"""The PASS/FAIL lines of the GPU run checkers (e2e_check.py, canary_check.py); Python 3 standard library only.

Each check prints one line, `PASS what` or `FAIL what: detail` (the detail when given), and the run ends
with `NAME: N passed, M failed`: the lines the scripts' callers and tests read.
"""


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
