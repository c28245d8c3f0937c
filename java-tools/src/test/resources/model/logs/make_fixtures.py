#!/usr/bin/env python3
"""Writes the synthetic NCCL log fixtures of this directory (see README.md).

Row layouts use the printf formats of NVIDIA/nccl src/graph/tuning.cc (ncclTopoTuneModel) and
the selection lines those of src/enqueue.cc, per release; the line prefix is src/debug.cc's
"host:pid:tid [dev] NCCL INFO ". Values come from seed 001 (4xV100, NCCL 2.22.3) and from the
project's H200 traces (data/traces/nccl-2.28.9-h200-2rank); see README.md for which is which.
"""

FUNCS = ["Broadcast", "Reduce", "AllGather", "ReduceScatter", "AllReduce"]
ALGOS = ["Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT"]
PROTOS = ["LL", "LL128", "Simple"]


def table(n_algos, block_size, lat_bw, threads):
    """lat_bw[func][algo][proto] = (lat, bw); threads[algo][proto]."""
    lines = []
    n_blocks = (n_algos + block_size - 1) // block_size
    for block in range(n_blocks):
        algos = [a for a in range(block * block_size, (block + 1) * block_size) if a < n_algos]
        line = "  Algorithm   |"
        for a in algos:
            line += " %14s   %14s   %14s |" % ("", ALGOS[a], "")
        lines.append(line)
        line = "  Protocol    |"
        for _ in range(block_size):  # NCCL prints every column here, even past the last algorithm
            for p in PROTOS:
                line += " %14s |" % p
        lines.append(line)
        line = " Max NThreads |"
        for a in algos:
            for p in range(3):
                line += " %14d |" % threads[a][p]
        lines.append(line)
        for f in range(5):
            line = "%13s |" % FUNCS[f]
            for a in algos:
                for p in range(3):
                    lat, bw = lat_bw[f][a][p]
                    line += "%8.1f/%6.1f |" % (lat, bw)
            lines.append(line)
    return lines


def zeros(n_algos):
    return [[[(0.0, 0.0)] * 3 for _ in range(n_algos)] for _ in range(5)]


def prefix(host, pid, tid, dev):
    return "%s:%d:%d [%d] NCCL INFO " % (host, pid, tid, dev)


# ---- seed 001: 4 x V100, NCCL 2.22.3, AllReduce row only -----------------------------------
V100_ALLREDUCE = [[(10.4, 14.5), (21.5, 42.9), (168.0, 55.2)],   # Tree LL, LL128, Simple
                  [(10.2, 26.0), (25.4, 73.6), (28.8, 80.0)]]    # Ring
V100_THREADS = [[512, 640, 512], [512, 640, 512], [0, 0, 640], [0, 0, 640], [0, 0, 0], [0, 0, 0]]


def v100_lat_bw(n_algos):
    """Seed 001's table: the AllReduce row's Tree and Ring entries, zeros elsewhere."""
    lb = zeros(n_algos)
    lb[4][0] = V100_ALLREDUCE[0]
    lb[4][1] = V100_ALLREDUCE[1]
    return lb


def v100_2_22():
    lb = v100_lat_bw(6)
    out = []
    host, pid = "dgx1", 4242
    out.append(prefix(host, pid, pid, 0) + "NCCL version 2.22.3+cuda12.6")
    for r in range(4):
        tid = pid + 10 + r
        out.append(prefix(host, pid, tid, r) + "ncclCommInitRank comm 0x55d0c0a0%d000 rank %d nranks 4 cudaDev %d nvmlDev %d busId %d000 commId 0x7c1e2f3a4b5c6d7e - Init START" % (r, r, r, r, 6 + r))
    for r in range(4):
        tid = pid + 10 + r
        out.append(prefix(host, pid, tid, r) + "comm 0x55d0c0a0%d000 rank %d nRanks 4 nNodes 1 localRanks 4 localRank %d MNNVL 0" % (r, r, r))
    for row in table(6, 3, lb, V100_THREADS):
        out.append(prefix(host, pid, pid + 10, 0) + row)
    out.append(prefix(host, pid, pid + 10, 0) + "threadThresholds 8/8/64 | 32/8/64 | 512 | 512")
    out.append(prefix(host, pid, pid + 10, 0) + "ncclCommInitRank comm 0x55d0c0a00000 rank 0 nranks 4 cudaDev 0 nvmlDev 0 busId 6000 commId 0x7c1e2f3a4b5c6d7e - Init COMPLETE")
    # the one selection line seed 001 quotes verbatim
    out.append(prefix(host, pid, pid, 0) + "1048576 Bytes -> Algo 1 proto 1 time 39.646954")
    return out


# ---- H200 2-rank table of data/traces/nccl-2.28.9-h200-2rank, 7 algorithms ---------------------
def h200_table():
    lb = zeros(7)
    for f, ring in [(0, [(9.3, 0.6), (18.0, 0.0), (22.4, 1.2)]), (1, [(9.3, 0.6), (18.0, 0.0), (22.4, 1.2)]),
                    (2, [(11.6, 1.2), (22.5, 0.0), (22.4, 2.4)]), (3, [(11.6, 1.2), (22.5, 0.0), (22.4, 2.4)]),
                    (4, [(16.6, 0.6), (31.0, 0.0), (36.4, 1.2)])]:
        lb[f][1] = ring
    lb[4][0] = [(16.8, 0.2), (31.0, 0.0), (36.4, 0.9)]
    for f in (2, 3, 4):
        lb[f][2] = [(5.0, 0.0), (8.5, 0.0), (14.0, 0.0)]
    lb[4][3] = [(5.0, 0.0), (8.5, 0.0), (14.0, 0.0)]
    lb[2][6] = [(0.0, 0.0), (0.0, 0.0), (17.6, 1.8)]
    lb[3][6] = [(0.0, 0.0), (0.0, 0.0), (17.6, 1.8)]
    threads = [[512, 640, 512], [512, 640, 256], [0, 0, 640], [0, 0, 640], [0, 0, 640], [0, 0, 640], [0, 0, 0]]
    return lb, threads


def two_processes_2_23():
    """Two processes (two communicators) writing one file, NCCL 2.23.4 formats, lines interleaved.
    Process A carries the seed's V100 table, process B the H200 table; rank 1 of B's node prints
    an unrelated line in the middle of B's table from another thread, and one selection line of A
    is truncated."""
    a = prefix("nodeA", 1001, 1001, 0)     # process A's one thread
    b = prefix("nodeB", 2002, 2002, 0)     # process B's main thread
    b_init = prefix("nodeB", 2002, 2010, 0)  # the thread that initializes B's communicator
    a_rows = [a + r for r in table(7, 3, v100_lat_bw(7), V100_THREADS + [[0, 0, 0]])]
    lb_b, th_b = h200_table()
    b_rows = [b_init + r for r in table(7, 3, lb_b, th_b)]
    out = [
        a + "NCCL version 2.23.4+cuda12.6",
        b + "NCCL version 2.23.4+cuda12.6",
        a + "ncclCommInitRank comm 0x5600aa000000 rank 0 nranks 4 cudaDev 0 nvmlDev 0 busId 6000 commId 0x1111 - Init START",
        b_init + "ncclCommInitRank comm 0x5600bb000000 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 60 commId 0x2222 - Init START",
        a + "comm 0x5600aa000000 rank 0 nRanks 4 nNodes 1 localRanks 4 localRank 0 MNNVL 0",
        b_init + "comm 0x5600bb000000 rank 0 nRanks 2 nNodes 2 localRanks 1 localRank 0 MNNVL 0",
    ]
    # interleave the two tables line by line, and drop a foreign-thread line into B's table
    for i in range(max(len(a_rows), len(b_rows))):
        if i < len(a_rows):
            out.append(a_rows[i])
        if i < len(b_rows):
            out.append(b_rows[i])
        if i == 9:
            out.append(prefix("nodeB", 2002, 2011, 1) + "init.cc:447 Cuda Alloc Size 23648 pointer 0x7fc3adc00000")
    out += [
        a + "threadThresholds 8/8/64 | 32/8/64 | 512 | 512",
        b_init + "threadThresholds 8/8/64 | 16/8/64 | 512 | 512",
        a + "24 coll channels, 24 collnet channels, 0 nvls channels, 32 p2p channels, 32 p2p channels per peer",
        b_init + "2 coll channels, 2 collnet channels, 0 nvls channels, 2 p2p channels, 2 p2p channels per peer",
        # times of B's lines: NCCL's own costs from data/traces/.../trace_sweep.csv
        b + "AllReduce: 8 Bytes -> Algo 1 proto 0 time 16.613300",
        a + "AllReduce: 1048576 Bytes -> Algo 1 proto 1 time 39.646954",
        b + "AllGather: 16 Bytes -> Algo 1 proto 0 time 11.613300",
        a + "AllReduce: 4194304 Bytes -> Algo 1 pro",
        b + "AllReduce: 67108864 Bytes -> Algo 1 proto 2 time 55975.000000",
    ]
    return out


if __name__ == "__main__":
    import os
    here = os.path.dirname(os.path.abspath(__file__))
    for name, lines in [("nccl-2.22.3_4xV100_seed001.log", v100_2_22()),
                        ("nccl-2.23.4_two-processes.log", two_processes_2_23())]:
        with open(os.path.join(here, name), "w") as f:
            f.write("\n".join(lines) + "\n")
