#!/usr/bin/env python3
"""Tests of the canary checker and driver without a GPU: python3 tests/gpu/test_canary.py

testdata/canary/ is a run in the recorded format: decisions.rank<r>.jsonl written by the real plugin
(build/lib/libnccl-tuner-java.so as tuner and profiler) under tests/hosts/profiler_host.c playing NCCL 2.28's
v5 event sequence for two ranks (--rank 0/1, --colls 48 --channels 2 --sizes 65536,1048576,4194304) with
testdata/canary/policy.yaml in canary mode (NCCL_TUNER_JAVA_CANARY=0.5), report.txt from
`nccl-tuner report` over both logs. It must pass; each tampered copy must fail the check it targets.
"""
import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import canary_check as cc  # noqa: E402

DATA = os.path.join(HERE, "testdata", "canary")


def run_check(d):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        rc = cc.Checker(d).run()
    return rc, buf.getvalue()


class CanaryCheckTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="canary-test-")
        self.d = os.path.join(self.tmp, "run")
        shutil.copytree(DATA, self.d)

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def edit(self, rank, fn):
        """Rewrites rank's decision log: fn(record) returns the record, changed, or None to drop it."""
        p = os.path.join(self.d, "decisions.rank%d.jsonl" % rank)
        with open(p) as f:
            recs = [json.loads(line) for line in f if line.strip()]
        with open(p, "w") as f:
            for r in recs:
                r = fn(r)
                if r is not None:
                    f.write(json.dumps(r) + "\n")

    def assertFails(self, needle):
        rc, out = run_check(self.d)
        self.assertEqual(1, rc, out)
        fails = [l for l in out.splitlines() if l.startswith("FAIL ")]
        self.assertTrue(any(needle in l for l in fails), "no FAIL line with %r:\n%s" % (needle, out))

    def test_recorded_run_passes(self):
        rc, out = run_check(self.d)
        self.assertEqual(0, rc, out)
        self.assertIn("canary: 18 passed, 0 failed", out)
        self.assertIn("RING/LL/1ch", out)

    def test_missing_policy_arm_fails(self):
        self.edit(0, lambda r: None if r.get("arm") == "policy" else r)
        self.assertFails("rank 0: measured lines for the policy arm")

    def test_missing_nccl_arm_fails(self):
        self.edit(1, lambda r: None if r.get("arm") == "nccl" else r)
        self.assertFails("rank 1: measured lines for the nccl arm")

    def test_not_as_decided_fails(self):
        def f(r):
            if r.get("arm") == "policy":
                r["asDecided"], r["executed"] = False, "RING/SIMPLE"
            return r
        self.edit(0, f)
        self.assertFails("rank 0: every policy-arm series executed as decided")

    def test_channel_override_not_run_fails(self):
        def f(r):
            if r.get("arm") == "policy":
                r["kernelChannels"] = 2
            return r
        self.edit(1, f)
        self.assertFails("rank 1: the channel override ran")

    def test_two_tables_fail(self):
        def f(r):
            if r.get("type") == "comm":
                r["sha256"] = "0" * 64
            return r
        self.edit(1, f)
        self.assertFails("both ranks' comm lines carry one sha256")

    def test_unjoined_fails(self):
        def f(r):
            if r.get("type") == "profiled":
                r["unjoined"] = 3
            return r
        self.edit(0, f)
        self.assertFails("rank 0: the profiler joined every collective")

    def test_missing_log_fails(self):
        os.remove(os.path.join(self.d, "decisions.rank1.jsonl"))
        self.assertFails("rank 1: decision log exists")

    def test_failed_rank_and_report_fail(self):
        with open(os.path.join(self.d, "rc.rank0"), "w") as f:
            f.write("1\n")
        with open(os.path.join(self.d, "report.rc"), "w") as f:
            f.write("1\n")
        self.assertFails("rank 0 exited 0")
        self.assertFails("nccl-tuner report ran over both logs")


class CanaryScriptTest(unittest.TestCase):
    def test_check_only_runs_the_checker(self):
        p = subprocess.run(["bash", os.path.join(HERE, "canary.sh"), "--check-only", DATA],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(0, p.returncode, p.stdout + p.stderr)
        self.assertIn("canary: 18 passed, 0 failed", p.stdout)

    def test_exits_2_without_a_gpu(self):
        tmp = tempfile.mkdtemp(prefix="canary-dist-")
        try:
            for f in ("lib/libnccl-tuner-java.so", "lib/nccl-tuner-java.jar", "bin/nccl-tuner"):
                os.makedirs(os.path.dirname(os.path.join(tmp, f)), exist_ok=True)
                open(os.path.join(tmp, f), "w").close()
            os.makedirs(os.path.join(tmp, "runtime"))
            env = dict(os.environ, PATH="/usr/bin:/bin")  # no nvidia-smi there on a machine without a GPU
            has_gpu = shutil.which("nvidia-smi", path=env["PATH"]) is not None
            if has_gpu:  # a GPU machine: a PyTorch that cannot import stands in for "no CUDA"
                env["PYTHONPATH"] = os.path.join(tmp, "notorch")
                os.makedirs(os.path.join(env["PYTHONPATH"], "torch"))
                with open(os.path.join(env["PYTHONPATH"], "torch", "__init__.py"), "w") as f:
                    f.write("raise ImportError('no torch here')\n")
            p = subprocess.run(["bash", os.path.join(HERE, "canary.sh"), tmp, os.path.join(tmp, "out")],
                               capture_output=True, text=True, timeout=60, env=env)
            self.assertEqual(2, p.returncode, p.stdout + p.stderr)
            self.assertIn("canary: needs", p.stderr)
        finally:
            shutil.rmtree(tmp)


if __name__ == "__main__":
    unittest.main(verbosity=1)
