#!/usr/bin/env python3
"""Offline tests of tests/gpu/sweep_gpu.sh: python3 tests/gpu/test_sweep_gpu.py

Where there is no GPU the script must stop at once with exit 2 and one line saying why, before it
looks at the distribution or runs anything. Two stand-ins for PyTorch are put first on PYTHONPATH:
one whose import fails, one that imports but sees no CUDA GPU.
"""
import os
import subprocess
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "sweep_gpu.sh")

STUBS = {
    "no-torch": 'raise ImportError("No module named torch (test stand-in)")\n',
    "no-gpu": ('__version__ = "2.11.0+stub"\n'
               'class cuda:\n'
               '    is_available = staticmethod(lambda: False)\n'
               '    device_count = staticmethod(lambda: 0)\n'),
}


def run_with(stub, dist):
    with tempfile.TemporaryDirectory() as d:
        os.makedirs(os.path.join(d, "torch"))
        with open(os.path.join(d, "torch", "__init__.py"), "w") as f:
            f.write(stub)
        env = dict(os.environ, PYTHONPATH=d)
        out = tempfile.mkdtemp()
        r = subprocess.run(["bash", SCRIPT, dist, out], capture_output=True, text=True, env=env, timeout=60)
        return r, out


class NoGpu(unittest.TestCase):
    def test_no_torch_exits_2_with_one_line(self):
        with tempfile.TemporaryDirectory() as dist:
            r, out = run_with(STUBS["no-torch"], dist)
        self.assertEqual(2, r.returncode, r.stdout + r.stderr)
        lines = (r.stdout + r.stderr).splitlines()
        self.assertEqual(1, len(lines), lines)
        self.assertEqual("sweep_gpu: needs a CUDA GPU and PyTorch (no PyTorch (ImportError: No module named torch "
                         "(test stand-in)))", lines[0])
        self.assertEqual([], os.listdir(out), "nothing written")

    def test_no_gpu_exits_2_with_one_line(self):
        with tempfile.TemporaryDirectory() as dist:
            r, out = run_with(STUBS["no-gpu"], dist)
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
