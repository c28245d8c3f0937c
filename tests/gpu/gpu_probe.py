"""What the GPU workers (e2e_worker.py, sweep_gpu_worker.py) check before they run: PyTorch with a
CUDA GPU and an NCCL backend of 2.22 or newer (the first NCCL whose tuner ABI the plugin serves).
Imported from the worker's own folder (python3 puts a script's folder first on sys.path)."""


def probe(describe):
    """Prints one line and returns the exit status of a worker's `--probe`.

    describe(torch, nccl) gives the line printed when everything is there (nccl: (major, minor, patch));
    otherwise prints what is missing and returns 3."""
    try:
        import torch
    except Exception as e:  # noqa: BLE001 - any import failure means "no usable torch"
        print("no PyTorch (%s: %s)" % (type(e).__name__, e))
        return 3
    if not torch.cuda.is_available() or torch.cuda.device_count() < 1:
        print("PyTorch %s sees no CUDA GPU" % getattr(torch, "__version__", "?"))
        return 3
    try:
        import torch.distributed as dist
        if not dist.is_available() or not dist.is_nccl_available():
            print("PyTorch %s has no NCCL backend" % torch.__version__)
            return 3
        import torch.cuda.nccl
        v = torch.cuda.nccl.version()
    except Exception as e:  # noqa: BLE001
        print("PyTorch %s: cannot read the NCCL version (%s)" % (torch.__version__, e))
        return 3
    v = tuple(v) if isinstance(v, (tuple, list)) else (v // 10000, v // 100 % 100, v % 100)
    if v < (2, 22):
        print("PyTorch %s bundles NCCL %s; needs 2.22 or newer" % (torch.__version__, ".".join(map(str, v))))
        return 3
    print(describe(torch, v))
    return 0
