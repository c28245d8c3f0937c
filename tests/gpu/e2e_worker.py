#!/usr/bin/env python3
"""One rank of the e2e run (started twice by e2e.sh, with RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT and a
distinct NCCL_HOSTID). AllReduce sweep with correctness and CUDA-event timing, then a few DDP steps;
writes E2E_RESULT (JSON). Env: E2E_MAX_SHIFT (26 = 64 MiB), E2E_WARMUP (3), E2E_ITERS (10), E2E_DDP_STEPS (5);
E2E_DEVICE=cpu runs the same code on CPU with gloo and wall-clock timing (a smoke test of this file, no NCCL).

`e2e_worker.py --probe` prints torch / CUDA / NCCL versions and exits 0, or exits 3 saying what is missing."""
import datetime
import json
import math
import os
import sys
import time

import gpu_probe


def probe():
    return gpu_probe.probe(lambda torch, v: "torch %s, CUDA %s, NCCL %s, GPU %s" % (
        torch.__version__, torch.version.cuda, ".".join(map(str, v)), torch.cuda.get_device_name(0)))


def main():
    import torch
    import torch.distributed as dist
    import torch.nn as nn

    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    out = {"rank": rank, "world": world, "torch": torch.__version__, "allreduce": [], "ddp": None, "error": None}
    path = os.environ["E2E_RESULT"]

    def save():
        with open(path + ".tmp", "w") as f:
            json.dump(out, f, indent=1)
        os.replace(path + ".tmp", path)

    cpu = os.environ.get("E2E_DEVICE") == "cpu"
    dev = torch.device("cpu") if cpu else torch.device("cuda", 0)
    kw = dict(backend="gloo" if cpu else "nccl", init_method="env://", rank=rank, world_size=world,
              timeout=datetime.timedelta(seconds=int(os.environ.get("E2E_PG_TIMEOUT", "300"))))
    if cpu:
        dist.init_process_group(**kw)
    else:
        torch.cuda.set_device(0)
        try:
            dist.init_process_group(device_id=dev, **kw)
        except TypeError:  # torch without device_id
            dist.init_process_group(**kw)

    def timed_all_reduce(x):
        """One AllReduce; microseconds between CUDA events around it (wall clock on CPU)."""
        if cpu:
            t0 = time.perf_counter()
            dist.all_reduce(x)
            return (time.perf_counter() - t0) * 1e6
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        dist.all_reduce(x)
        e.record()
        e.synchronize()
        return s.elapsed_time(e) * 1000.0
    try:
        max_shift = int(os.environ.get("E2E_MAX_SHIFT", "26"))
        warmup, iters = int(os.environ.get("E2E_WARMUP", "3")), int(os.environ.get("E2E_ITERS", "10"))
        expect = float(sum(r + 1 for r in range(world)))  # each rank fills rank+1
        for shift in range(2, max_shift + 1):
            nbytes = 1 << shift
            x = torch.empty(nbytes // 4, dtype=torch.float32, device=dev)
            wrong = torch.zeros((), dtype=torch.int64, device=dev)
            times = []
            for i in range(warmup + iters):
                x.fill_(rank + 1.0)
                t = timed_all_reduce(x)
                if i >= warmup:
                    times.append(t)
                wrong += (x != expect).sum()
            times.sort()
            out["allreduce"].append({"bytes": nbytes, "median_us": times[len(times) // 2], "min_us": times[0],
                                     "max_us": times[-1], "iters": iters, "wrong": int(wrong.item())})
            if rank == 0:
                print("allreduce %9d B  median %10.1f us  wrong %d" % (nbytes, times[len(times) // 2], int(wrong.item())),
                      flush=True)

        # DDP: different initial weights and data per rank; DDP broadcasts rank 0's weights and averages gradients,
        # so the parameters must stay bit-identical on both ranks.
        torch.manual_seed(1000 + rank)
        model = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10)).to(dev)
        ddp = nn.parallel.DistributedDataParallel(model, device_ids=None if cpu else [0])
        opt = torch.optim.SGD(ddp.parameters(), lr=0.05, momentum=0.9)
        losses = []
        for _ in range(int(os.environ.get("E2E_DDP_STEPS", "5"))):
            xb, yb = torch.randn(32, 64, device=dev), torch.randint(0, 10, (32,), device=dev)
            loss = nn.functional.cross_entropy(ddp(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(float(loss.item()))
        with torch.no_grad():
            sums = torch.stack([t for p in model.parameters() for t in (p.double().sum(), p.double().pow(2).sum())])
            every = [torch.empty_like(sums) for _ in range(world)]
            dist.all_gather(every, sums)
            identical = all(bool(torch.equal(t, every[0])) for t in every)
        out["ddp"] = {"losses": losses, "finite": all(math.isfinite(v) for v in losses), "identical": identical,
                      "params": sum(p.numel() for p in model.parameters())}
        if rank == 0:
            print("ddp losses %s identical %s" % (" ".join("%.4f" % v for v in losses), identical), flush=True)
        if not cpu:
            torch.cuda.synchronize()
        dist.barrier()
    except Exception as e:  # noqa: BLE001 - recorded for the checker, then re-raised
        out["error"] = "%s: %s" % (type(e).__name__, e)
        save()
        raise
    save()
    dist.destroy_process_group()  # NCCL calls the tuner's destroy: summary line, decision log flushed
    return 0


if __name__ == "__main__":
    sys.exit(probe() if sys.argv[1:] == ["--probe"] else main())
