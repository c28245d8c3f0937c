#!/usr/bin/env python3
"""Offline tests of tests/gpu/sweep_gpu.sh: python3 tests/gpu/test_sweep_gpu.py

Where there is no GPU the script must stop at once with exit 2 and one line saying why, before it
looks at the distribution or runs anything. Two stand-ins for PyTorch are put first on PYTHONPATH:
one whose import fails, one that imports but sees no CUDA GPU.
"""
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import torch_stubs  # noqa: E402

SCRIPT = os.path.join(HERE, "sweep_gpu.sh")


def run_with(stub, dist):
    return torch_stubs.run_with(SCRIPT, stub, dist)


class NoGpu(unittest.TestCase):
    def test_no_torch_exits_2_with_one_line(self):
        with tempfile.TemporaryDirectory() as dist:
            r, out = run_with("no-torch", dist)
        self.assertEqual(2, r.returncode, r.stdout + r.stderr)
        lines = (r.stdout + r.stderr).splitlines()
        self.assertEqual(1, len(lines), lines)
        self.assertEqual("sweep_gpu: needs a CUDA GPU and PyTorch (no PyTorch (ImportError: No module named torch "
                         "(test stand-in)))", lines[0])
        self.assertEqual([], os.listdir(out), "nothing written")

    def test_no_gpu_exits_2_with_one_line(self):
        with tempfile.TemporaryDirectory() as dist:
            r, out = run_with("no-gpu", dist)
        self.assertEqual(2, r.returncode, r.stdout + r.stderr)
        lines = (r.stdout + r.stderr).splitlines()
        self.assertEqual(["sweep_gpu: needs a CUDA GPU and PyTorch (PyTorch 2.11.0+stub sees no CUDA GPU)"], lines)
        self.assertEqual([], os.listdir(out))

    def test_missing_dist_exits_2(self):
        r = subprocess.run(["bash", SCRIPT, "/nonexistent/dist"], capture_output=True, text=True, timeout=60)
        self.assertEqual(2, r.returncode)
        self.assertEqual(["sweep_gpu: no directory /nonexistent/dist"], (r.stdout + r.stderr).splitlines())


if __name__ == "__main__":
    unittest.main()
