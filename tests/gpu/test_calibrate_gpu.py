#!/usr/bin/env python3
"""Offline tests of tests/gpu/calibrate_gpu.sh and calibrate_gpu_driver.sh:
python3 tests/gpu/test_calibrate_gpu.py

Without a GPU the script stops at once with exit 2 and one line saying why (stand-ins for PyTorch
first on PYTHONPATH: one whose import fails, one without a CUDA GPU); a missing distribution is
exit 2 too. The driver starts CALIBRATE_GPU_NRANKS rank processes, each with its own RANK and
NCCL_HOSTID and the same WORLD_SIZE, passes the nccl-tests options to each, prints rank 0's output
and the others' NCCL lines: checked with a stand-in python3 that prints what it was given.
"""
import os
import stat
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import torch_stubs  # noqa: E402

SCRIPT = os.path.join(HERE, "calibrate_gpu.sh")
DRIVER = os.path.join(HERE, "calibrate_gpu_driver.sh")


def run_with(stub, dist):
    return torch_stubs.run_with(SCRIPT, stub, dist)[0]


class NoGpu(unittest.TestCase):
    def test_no_torch_exits_2_with_one_line(self):
        with tempfile.TemporaryDirectory() as dist:
            r = run_with("no-torch", dist)
        self.assertEqual(2, r.returncode, r.stdout + r.stderr)
        self.assertEqual(1, len(r.stdout.strip().splitlines()), r.stdout)
        self.assertIn("calibrate_gpu: needs a CUDA GPU and PyTorch", r.stdout)

    def test_no_gpu_exits_2_with_one_line(self):
        with tempfile.TemporaryDirectory() as dist:
            r = run_with("no-gpu", dist)
        self.assertEqual(2, r.returncode, r.stdout + r.stderr)
        self.assertIn("calibrate_gpu: needs a CUDA GPU and PyTorch", r.stdout)

    def test_missing_dist_exits_2(self):
        r = subprocess.run(["bash", SCRIPT, "/nonexistent/dist"], capture_output=True, text=True, timeout=60)
        self.assertEqual(2, r.returncode)
        self.assertIn("calibrate_gpu: no directory /nonexistent/dist", r.stdout)


FAKE_PY = """#!/usr/bin/env python3
import os, sys
if len(sys.argv) > 1 and sys.argv[1] == "-c":
    print(29500)
    sys.exit(0)
r = os.environ["RANK"]
print("rank %s world %s host %s args %s" % (r, os.environ["WORLD_SIZE"], os.environ["NCCL_HOSTID"], " ".join(sys.argv[2:])))
print("node:1:1 [0] NCCL INFO from rank %s" % r)
"""


class Driver(unittest.TestCase):
    def run_driver(self, n):
        with tempfile.TemporaryDirectory() as d:
            py = os.path.join(d, "python3")
            with open(py, "w") as f:
                f.write(FAKE_PY)
            os.chmod(py, os.stat(py).st_mode | stat.S_IEXEC)
            env = dict(os.environ, PYTHON=py, CALIBRATE_GPU_NRANKS=str(n))
            return subprocess.run(["bash", DRIVER, "all_reduce_perf", "-b", "4", "-e", "8"], capture_output=True,
                                  text=True, env=env, timeout=60)

    def test_three_ranks_each_its_own_host(self):
        r = self.run_driver(3)
        self.assertEqual(0, r.returncode, r.stdout + r.stderr)
        self.assertIn("rank 0 world 3 host gpuhost0 args all_reduce_perf -b 4 -e 8", r.stdout)
        for k in (1, 2):
            self.assertIn("NCCL INFO from rank %d" % k, r.stdout)
            self.assertNotIn("rank %d world" % k, r.stdout)   # other ranks: NCCL lines only

    def test_one_rank_is_refused(self):
        r = self.run_driver(1)
        self.assertEqual(2, r.returncode)
        self.assertIn("CALIBRATE_GPU_NRANKS must be >= 2", r.stderr)


if __name__ == "__main__":
    unittest.main()
