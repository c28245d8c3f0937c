#!/usr/bin/env python3
"""One rank of the canary run (started twice by canary.sh, with RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT and a
distinct NCCL_HOSTID). AllReduce at CANARY_SIZES (bytes, comma-separated; default 64 KiB, 1 MiB, 4 MiB),
CANARY_WARMUP (5) + CANARY_ITERS (200) times each, checking every result; writes CANARY_RESULT (JSON) and
destroys the process group, so that NCCL finalizes the tuner and the profiler (the measured lines).

`canary_worker.py --probe` prints torch / CUDA / NCCL versions and exits 0, or exits 3 saying what is missing."""
import datetime
import json
import os
import sys

import gpu_probe


def main():
    import torch
    import torch.distributed as dist

    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    sizes = [int(s) for s in os.environ.get("CANARY_SIZES", "65536,1048576,4194304").split(",") if s]
    warmup, iters = int(os.environ.get("CANARY_WARMUP", "5")), int(os.environ.get("CANARY_ITERS", "200"))
    out = {"rank": rank, "world": world, "torch": torch.__version__, "allreduce": [], "error": None}
    dev = torch.device("cuda", 0)
    torch.cuda.set_device(0)
    kw = dict(backend="nccl", init_method="env://", rank=rank, world_size=world,
              timeout=datetime.timedelta(seconds=int(os.environ.get("CANARY_PG_TIMEOUT", "300"))))
    try:
        dist.init_process_group(device_id=dev, **kw)
    except TypeError:  # torch without device_id
        dist.init_process_group(**kw)
    try:
        expect = float(sum(r + 1 for r in range(world)))
        for nbytes in sizes:
            x = torch.empty(nbytes // 4, dtype=torch.float32, device=dev)
            wrong = torch.zeros((), dtype=torch.int64, device=dev)
            for _ in range(warmup + iters):
                x.fill_(rank + 1.0)
                dist.all_reduce(x)
                wrong += (x != expect).sum()
            torch.cuda.synchronize()
            out["allreduce"].append({"bytes": nbytes, "calls": warmup + iters, "wrong": int(wrong.item())})
            if rank == 0:
                print("allreduce %9d B x %d  wrong %d" % (nbytes, warmup + iters, int(wrong.item())), flush=True)
        dist.barrier()
    except Exception as e:  # noqa: BLE001 - recorded for the checker, then re-raised
        out["error"] = "%s: %s" % (type(e).__name__, e)
        raise
    finally:
        with open(os.environ["CANARY_RESULT"], "w") as f:
            json.dump(out, f, indent=1)
    dist.destroy_process_group()  # NCCL finalizes the tuner, then the profiler: measured lines written
    return 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--probe"]:
        sys.exit(gpu_probe.probe(lambda torch, v: "torch %s, CUDA %s, NCCL %s, GPU %s" % (
            torch.__version__, torch.version.cuda, ".".join(map(str, v)), torch.cuda.get_device_name(0))))
    sys.exit(main())
