#!/usr/bin/env python3
"""One rank of a two-rank nccl-tests stand-in on one GPU (see sweep_gpu.sh).

    sweep_gpu_worker.py --probe
    sweep_gpu_worker.py PROGRAM_perf [-b MIN] [-e MAX] [-f FACTOR] [-n ITERS] [-w WARMUP] [-c CHECK] [-g 1] [-d float]

Runs under torch.distributed (env://: RANK, WORLD_SIZE=2, MASTER_ADDR, MASTER_PORT; backend nccl) on
cuda:0. For each size from MIN to MAX by FACTOR it runs the collective (all_reduce, all_gather,
reduce_scatter; float32, sum) WARMUP times, then ITERS times between CUDA events, and rank 0 prints
one nccl-tests 2.13+ row with the mean time per iteration (out-of-place columns only; no in-place
run). Size is nccl-tests' "size": the total over ranks for all_gather and reduce_scatter, which is
the nBytes NCCL passes to the tuner; it is rounded to whole floats per rank. Results are checked
(every rank fills rank + 1: sums must be 3, gathered chunks 1 and 2); #wrong counts wrong elements.
Rank 0 prints the header nccl-tests prints (collective, options, one device line per rank, the host
names being the NCCL_HOSTID of each rank) so that `nccl-tuner compile` and `nccl-tuner sweep`'s
signature read it. `--probe` prints torch / CUDA / NCCL versions and exits 0, or exits 3 saying what
is missing.
"""
import os
import socket
import sys

import gpu_probe


def probe():
    return gpu_probe.probe(lambda torch, v: "PyTorch %s, NCCL %s, %s" % (
        torch.__version__, ".".join(map(str, v)), torch.cuda.get_device_name(0)))


def size_of(s):
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(float(s[:-1]) * mult[s[-1].upper()]) if s[-1].upper() in mult else int(s)


def main(argv):
    import torch
    import torch.distributed as dist
    prog = argv[0].replace("_perf", "")
    opts = {"-b": "4", "-e": "64M", "-f": "2", "-n": "20", "-w": "5", "-c": "1", "-g": "1", "-d": "float"}
    i = 1
    while i < len(argv):
        if argv[i] not in opts or i + 1 >= len(argv):
            print("sweep_gpu_worker: unknown option %s" % argv[i], file=sys.stderr)
            return 2
        opts[argv[i]] = argv[i + 1]
        i += 2
    if prog not in ("all_reduce", "all_gather", "reduce_scatter") or opts["-d"] != "float":
        print("sweep_gpu_worker: only all_reduce, all_gather, reduce_scatter in float", file=sys.stderr)
        return 2
    lo, hi, factor = size_of(opts["-b"]), size_of(opts["-e"]), float(opts["-f"])
    iters, warmup, check = int(opts["-n"]), int(opts["-w"]), int(opts["-c"])
    torch.cuda.set_device(0)
    dist.init_process_group("nccl", device_id=torch.device("cuda", 0))
    rank, world = dist.get_rank(), dist.get_world_size()
    dev = torch.device("cuda", 0)
    host = os.environ.get("NCCL_HOSTID", socket.gethostname())
    who = [None] * world
    dist.all_gather_object(who, (host, os.getpid()))
    out = sys.stdout if rank == 0 else open(os.devnull, "w")
    name = torch.cuda.get_device_name(0)
    bus = torch.cuda.get_device_properties(0).pci_bus_id if hasattr(torch.cuda.get_device_properties(0), "pci_bus_id") else "0x00"
    print("# Collective test starting: %s_perf" % prog, file=out)
    print("# nThread 1 nGpus 1 minBytes %d maxBytes %d step: %g(factor) warmup iters: %d iters: %d agg iters: 1 "
          "validation: %d graph: 0" % (lo, hi, factor, warmup, iters, check), file=out)
    print("#\n# Using devices", file=out)
    for r, (h, pid) in enumerate(who):
        print("#  Rank %2d Group  0 Pid %6d on %10s device  0 [%s] %s" % (r, pid, h, bus, name), file=out)
    print("#\n#       size         count      type   redop    root     time   algbw   busbw #wrong", file=out)
    print("#        (B)    (elements)                               (us)  (GB/s)  (GB/s)", file=out)
    out.flush()
    bf = {"all_reduce": 2.0 * (world - 1) / world}.get(prog, (world - 1) / world)
    n = lo
    seen = set()
    buses = []
    while n <= hi:
        per_rank = max(1, n // 4) if prog == "all_reduce" else max(1, n // (4 * world))
        size = per_rank * 4 if prog == "all_reduce" else per_rank * 4 * world
        n = max(n + 1, int(n * factor))
        if size in seen:
            continue
        seen.add(size)
        if prog == "reduce_scatter":
            src = torch.full((per_rank * world,), float(rank + 1), device=dev)
            dst = torch.empty(per_rank, device=dev)
            op = lambda: dist.reduce_scatter_tensor(dst, src)  # noqa: E731
        elif prog == "all_gather":
            src = torch.full((per_rank,), float(rank + 1), device=dev)
            dst = torch.empty(per_rank * world, device=dev)
            op = lambda: dist.all_gather_into_tensor(dst, src)  # noqa: E731
        else:
            src = torch.empty(per_rank, device=dev)
            dst = src
            op = lambda: dist.all_reduce(src)  # noqa: E731
        for _ in range(warmup):
            if prog == "all_reduce":
                src.fill_(rank + 1)
            op()
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        if prog == "all_reduce":
            # all_reduce is in place: time it on data that is already reduced, check a fresh one
            start.record()
            for _ in range(iters):
                op()
            end.record()
            torch.cuda.synchronize()
            src.fill_(rank + 1)
            op()
            torch.cuda.synchronize()
            wrong = int((dst != 3.0).sum().item()) if check else None
        else:
            start.record()
            for _ in range(iters):
                op()
            end.record()
            torch.cuda.synchronize()
            if prog == "all_gather":
                want = torch.arange(1, world + 1, device=dev, dtype=torch.float32).repeat_interleave(per_rank)
            else:
                want = torch.full((per_rank,), float(world * (world + 1) // 2), device=dev)
            wrong = int((dst != want).sum().item()) if check else None
        us = start.elapsed_time(end) * 1000.0 / iters
        t = torch.tensor([us, float(wrong or 0)], device=dev)
        dist.all_reduce(t, op=dist.ReduceOp.MAX)  # the slowest rank's time, all ranks' errors
        us, wrong_all = t[0].item(), int(t[1].item())
        algbw = size / us / 1e3
        buses.append(algbw * bf)
        count = per_rank if prog != "all_gather" else per_rank * world
        print("%12d  %12d  %8s  %6s  %6d  %7.2f  %6.2f  %6.2f  %5s" % (
            size, count, "float", "none" if prog == "all_gather" else "sum", -1, us, algbw, algbw * bf,
            str(wrong_all) if check else "N/A"), file=out)
        out.flush()
    print("# Out of bounds values : 0 OK\n# Avg bus bandwidth    : %.4f\n#" % (sum(buses) / max(1, len(buses))), file=out)
    out.flush()
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(probe() if sys.argv[1:] == ["--probe"] else main(sys.argv[1:]))
