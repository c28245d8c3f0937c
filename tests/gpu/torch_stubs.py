"""Stand-ins for PyTorch on a machine without a GPU, for the offline tests of the sweep scripts
(test_sweep_gpu.py, test_calibrate_gpu.py): one whose import fails, one that imports but sees no CUDA GPU."""
import os
import subprocess
import tempfile

STUBS = {
    "no-torch": 'raise ImportError("No module named torch (test stand-in)")\n',
    "no-gpu": ('__version__ = "2.11.0+stub"\n'
               'class cuda:\n'
               '    is_available = staticmethod(lambda: False)\n'
               '    device_count = staticmethod(lambda: 0)\n'),
}


def run_with(script, stub, dist):
    """Runs `bash SCRIPT DIST OUT` with STUBS[stub] as the torch module first on PYTHONPATH and OUT a new
    empty folder; returns (the completed process, OUT)."""
    with tempfile.TemporaryDirectory() as d:
        os.makedirs(os.path.join(d, "torch"))
        with open(os.path.join(d, "torch", "__init__.py"), "w") as f:
            f.write(STUBS[stub])
        env = dict(os.environ, PYTHONPATH=d)
        out = tempfile.mkdtemp()
        r = subprocess.run(["bash", script, dist, out], capture_output=True, text=True, env=env, timeout=60)
        return r, out
