#!/usr/bin/env python3
"""Independent oracle of NCCL 2.28.9's cost model (tuner v5 constants).

Written from NCCL's source alone (tag v2.28.9-1), not from this project's Java:
  src/graph/tuning.cc   ncclTunerConstantsDefaults (l.142-199), ncclTopoTuneModel (l.230-574),
                        treeCorrectionFactor (l.578-582), ncclTopoGetAlgoTime (l.584-601)
  src/enqueue.cc        updateCollCostTable / topoGetAlgoInfo (strict minimum, algorithm-major)
  src/init.cc           l.1178-1192: graphs' nChannels = min over ranks, then
                        ring/tree nChannels = min(ring, tree); l.1351-1356 tuner init (v5 constants)
                        before ncclTopoTuneModel; l.854 graphs[PAT] = treeGraph
  src/graph/connect.cc  l.452, 473: comm->nChannels doubled after the graph search (the printed
                        "N coll channels"), which is what ncclTopoGetAlgoTime's plateau test reads,
                        while the bandwidths use graphs[a]->nChannels
  src/graph/search.cc   l.1201 the "Pattern %d, crossNic %d, nChannels %d, bw %f/%f, type %s/%s,
                        sameChannels %d" line (bwIntra/bwInter, typeIntra/typeInter)
  src/include/plugin/tuner/tuner_v5.h  ncclTunerConstants_v5_t layout

float32 arithmetic is emulated where NCCL stores floats (bandwidths, latencies, times).

Library use: build_table(topo, consts) -> (lat, bw) [coll][algo][proto];
algo_time(...); costs(...); pick(...); format_log(...).
CLI: `tune_oracle.py fake-nccl-tests OP ARGS` acts as an nccl-tests binary for `nccl-tuner sweep
--binary` (shape, truth and logged constants from ORACLE_SPEC, a JSON file).
"""
import copy
import json
import math
import os
import sys

import numpy as np

f32 = np.float32

ALGOS = ["TREE", "RING", "COLLNET_DIRECT", "COLLNET_CHAIN", "NVLS", "NVLS_TREE", "PAT"]
LOG_ALGOS = ["Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT"]
PROTOS = ["LL", "LL128", "SIMPLE"]
LOG_PROTOS = ["LL", "LL128", "Simple"]
COLLS = ["Broadcast", "Reduce", "AllGather", "ReduceScatter", "AllReduce"]
TREE, RING, CND, CNC, NVLS, NVLST, PAT = range(7)
LL, LL128, SIMPLE = range(3)
BCAST, REDUCE, AG, RS, AR = range(5)
HW_NVLINK, HW_PCI, HW_NET = range(3)
PATH_TYPES = ["LOC", "NVL", "NVB", "C2C", "PIX", "PXB", "P2C", "PXN", "PHB", "SYS", "NET", "DIS"]
PATH = {n: i for i, n in enumerate(PATH_TYPES)}
PATTERN_TREE = 3
COMPCAP_NAMES = ["VOLTA", "AMPERE", "HOPPER", "BLACKWELL"]
SCALE_NAMES = ["1NODE", "2NODES", "4NODES"]
HW_NAMES = ["NVLINK", "PCI", "NET"]
NCCL_MAX_DEV_WORK_BATCH_COLLS = 10  # 1024 / sizeof(ncclDevWorkColl) in 2.28 (docs/cost-model.md; not re-derived)

# tuning.cc:142-199
DEFAULTS = {
    "baseLatencies": [[6.8, 14.0, 8.4], [6.6, 14.0, 8.4], [0, 0, 0], [0, 0, 0], [0, 0, 0], [0, 0, 0], [8.0, 8.0, 8.0]],
    "hwLatencies": [
        [[.6, 1.25, 4.0], [.6, 1.9, 3.4], [0, 0, 3.7], [0, 0, 2.8], [0, 0, 25], [0, 0, 25], [0, 0, 4.0]],
        [[1.0, 1.9, 4.0], [1.0, 2.5, 5.7], [0, 0, 3.7], [0, 0, 2.8], [0, 0, 0], [0, 0, 0], [0, 0, 4.0]],
        [[5.0, 8.5, 14], [2.7, 4.0, 14.0], [0, 0, 31], [0, 0, 30], [0, 0, 18], [0, 0, 20.9], [0, 0, 14]],
    ],
    "llMaxBws": [[39.0, 39.0, 20.4], [87.7, 22.5, 19.0], [141.0, 45.0, 35.0], [2 * 141.0, 2 * 45.0, 2 * 35.0]],
    "perChMaxRingLL128Bws": [[20.0, 20.0, 20.0], [20.0, 20.0, 20.0], [36.7, 36.7, 36.7], [2 * 36.7, 34.6, 2 * 36.7]],
    "perChMaxTreeLL128Bws": [[20.0, 20.0, 20.0], [20.0, 20.0, 20.0], [36.7, 36.7, 29.0], [55.6, 31.67, 20.0]],
    "perChMaxTreeBws": [[26.5, 18.5, 10.0], [24.0, 23.6, 17.8], [38.7, 41.4, 36.0], [70.0, 42.8, 24.0]],
    "perChMaxNVLSTreeBws": [[26.5, 18.5, 10.0], [24.0, 23.6, 17.8], [0.0, 57.7, 45.5], [0.0, 96.0, 43.8]],
}

NVLS_EFF = [0.0, 0.0, 0.85, 0.74]

# tuning.cc:578-582
TREE_CORR = [
    [1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0],
    [1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0],
    [.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9],
]


def defaults():
    return copy.deepcopy(DEFAULTS)


def log2i(n):
    # NCCL's log2i: floor(log2(n)), -1 for n == 0 (src/include/bitops.h)
    return n.bit_length() - 1


def compcap_index(cc):
    return 3 if cc >= 100 else 2 if cc >= 90 else 1 if cc >= 80 else 0


def scale_index(nNodes):
    return nNodes - 1 if nNodes <= 2 else 2


class Graph:
    def __init__(self, pattern, nChannels, bwIntra, bwInter, typeIntra="NVL", typeInter="PIX", sameChannels=1, crossNic=0):
        self.pattern, self.nChannels, self.bwIntra, self.bwInter = pattern, nChannels, bwIntra, bwInter
        self.typeIntra, self.typeInter, self.sameChannels, self.crossNic = typeIntra, typeInter, sameChannels, crossNic
        self.latencyInter = 0.0

    def log_line(self):
        # search.cc:1201
        return "Pattern %d, crossNic %d, nChannels %d, bw %f/%f, type %s/%s, sameChannels %d" % (
            self.pattern, self.crossNic, self.nChannels, self.bwIntra, self.bwInter,
            self.typeIntra, self.typeInter, self.sameChannels)


class Topo:
    """One communicator as NCCL's tune model sees it."""

    def __init__(self, nRanks, nNodes, cc=90, cpu="intel", ring=None, tree=None, collChannels=None):
        self.nRanks, self.nNodes, self.cc, self.cpu = nRanks, nNodes, cc, cpu
        self.ring = ring or Graph(4, 8, 40.0, 20.0)
        self.tree = tree or Graph(1, 8, 40.0, 20.0)
        # comm->nChannels as printed ("N coll channels"): after connect.cc's duplication
        self.collChannels = collChannels if collChannels is not None else 2 * min(self.ring.nChannels, self.tree.nChannels)

    def graph_channels(self):
        # init.cc:1192
        return min(self.ring.nChannels, self.tree.nChannels)

    def to_json(self):
        g = lambda x: dict(pattern=x.pattern, nChannels=x.nChannels, bwIntra=x.bwIntra, bwInter=x.bwInter,
                           typeIntra=x.typeIntra, typeInter=x.typeInter, sameChannels=x.sameChannels)
        return dict(nRanks=self.nRanks, nNodes=self.nNodes, cc=self.cc, cpu=self.cpu, ring=g(self.ring),
                    tree=g(self.tree), collChannels=self.collChannels)

    @staticmethod
    def from_json(d):
        return Topo(d["nRanks"], d["nNodes"], d["cc"], d["cpu"], Graph(**d["ring"]), Graph(**d["tree"]), d["collChannels"])


def build_table(t, C):
    """ncclTopoTuneModel (tuning.cc:230-497): latencies [us] and bandwidths [GB/s], float32."""
    lat = [[[f32(0)] * 3 for _ in range(7)] for _ in range(5)]
    bwt = [[[f32(0)] * 3 for _ in range(7)] for _ in range(5)]
    nNodes, nRanks = t.nNodes, t.nRanks
    if nRanks <= 1:
        return lat, bwt
    nch = t.graph_channels()
    # graphs[a]: tree, ring, collnet direct, collnet chain, nvls, nvls, tree (init.cc:854)
    # collnet and nvls graphs: not searched here (nChannels 0, type LOC)
    empty = Graph(0, 0, 0.0, 0.0, "LOC", "LOC", 0)
    ring = copy.copy(t.ring); ring.nChannels = nch
    tree = copy.copy(t.tree); tree.nChannels = nch
    graphs = [tree, ring, empty, empty, empty, empty, tree]
    ci = compcap_index(t.cc)
    i2 = scale_index(nNodes)
    amd = t.cpu == "amd"
    i1 = ci if nNodes == 1 else (1 if amd else 0)  # tuning.cc:252-253
    llMaxBw = float(C["llMaxBws"][i1][i2])
    perChMaxTreeBw = float(C["perChMaxTreeBws"][ci][i2])
    perChMaxRingLL128Bw = float(C["perChMaxRingLL128Bws"][ci][i2])
    perChMaxTreeLL128Bw = float(C["perChMaxTreeLL128Bws"][ci][i2])
    perChMaxNVLSTreeBw = float(C["perChMaxNVLSTreeBws"][ci][i2])
    ppn = f32(nRanks) / f32(nNodes)
    intraHw = [HW_NVLINK if PATH[g.typeIntra] == 1 else HW_PCI for g in graphs]  # LINK_NVL == 1
    hw = [intraHw[a] if nNodes == 1 else HW_NET for a in range(7)]
    netOverheadBase = 2.0 if amd else 1.0  # tuning.cc:214-219 (x86)
    for coll in range(5):
        nsteps = 2 * (nRanks - 1) if coll == AR else (nRanks - 1 if coll in (RS, AG) else nRanks)
        for a in range(7):
            if coll in (BCAST, REDUCE) and a != RING:
                continue
            if coll in (RS, AG) and a not in (PAT, RING, NVLS, CND):
                continue
            if coll == AR and a == PAT:
                continue
            for p in range(3):
                if a in (NVLS, NVLST) and p != SIMPLE:
                    continue
                patEnable = t.cc >= 60 and nNodes == nRanks  # ncclPatEnable, net device HOST
                if coll in (RS, AG) and a == PAT and (p != SIMPLE or not patEnable):
                    continue
                g = graphs[a]
                collnet = a in (CND, CNC)
                bw = f32(g.bwIntra if (nNodes <= 2 or collnet) else g.bwInter)
                if a in (NVLS, NVLST):
                    if g.nChannels < 2:
                        continue
                    raise NotImplementedError("NVLS graphs are not modelled by this oracle")
                busBw = f32(g.nChannels * bw)
                if a == RING and p == LL:
                    busBw = f32(min(llMaxBw, float(busBw) * .5))
                if a == RING and p == LL128:
                    busBw = f32(min(float(busBw) * 0.92, g.nChannels * perChMaxRingLL128Bw))
                if a == TREE and coll == AR:
                    busBw = f32(min(float(busBw) * .92, g.nChannels * perChMaxTreeBw))
                if a == TREE and p == LL:
                    busBw = f32(min(float(busBw) * 1.0 / 3.8, llMaxBw))
                if a == TREE and p == LL128:
                    busBw = f32(min(float(busBw) * (7.0 / 9.0 if nNodes == 1 else 120.0 / 128.0), g.nChannels * perChMaxTreeLL128Bw))
                if a == TREE and t.tree.pattern == PATTERN_TREE:  # comm->maxTreePattern
                    busBw = f32(float(busBw) * .85)
                if a == PAT:
                    busBw = f32(float(busBw) * .75)
                if collnet and p != SIMPLE:
                    busBw = f32(0)
                if collnet and p == SIMPLE:
                    busBw = f32(0)  # collnet disabled: zeroed below anyway
                if not (a != RING and coll in (AG, RS)):
                    ratio = (1.0 * nRanks) / nsteps if a in (RING, NVLS, NVLST) else .5
                    busBw = f32(float(busBw) * f32(ratio))
                bwt[coll][a][p] = busBw
                L = f32(C["baseLatencies"][a][p])
                intraLat = f32(C["hwLatencies"][intraHw[a]][a][p])
                interLat = f32(C["hwLatencies"][HW_NET][TREE][p] if ppn == 1 else C["hwLatencies"][HW_NET][a][p])
                interLat = f32(interLat + f32(g.latencyInter))
                if p == SIMPLE:
                    interLat = f32(interLat + f32(g.latencyInter))
                if a == RING:
                    rl = f32(C["hwLatencies"][hw[a]][a][p])
                    if coll in (REDUCE, BCAST):
                        if g.sameChannels:
                            L = f32(L + rl)
                        else:
                            if p == SIMPLE:
                                rl = f32(C["hwLatencies"][hw[a]][TREE][p])
                            L = f32(L + f32(nsteps * rl))
                    else:
                        netOverhead = f32(0.0)
                        if nNodes > 1:
                            netOverhead = f32(netOverheadBase)
                            if p == SIMPLE:
                                netOverhead = f32(netOverhead * 3)
                        intraLat = max(intraLat, netOverhead)
                        nInter = 0 if nNodes == 1 else (2 * (nNodes - 1) if coll == AR else nNodes - 1)
                        L = f32(L + f32(f32((nsteps - nInter) * intraLat) + f32(nInter * interLat)))
                elif a == TREE:
                    if coll == AR:
                        L = f32(L + f32(2 * f32(f32((nRanks // nNodes - 1) * intraLat) + f32(log2i(nNodes) * interLat))))
                elif a == CND:
                    L = f32(L + f32(2 * (min(1, nRanks // nNodes - 1) * intraLat + (nRanks // nNodes - 1) * 0.4) + interLat))
                elif a == CNC:
                    L = f32(L + f32(2 * (nRanks // nNodes - 1) * intraLat + interLat))
                elif a == PAT:
                    if coll in (AG, RS):
                        L = f32(L + f32(log2i(nNodes) * (interLat / f32(3.5)) + nRanks * 2.8))
                lat[coll][a][p] = L
    # enable/disable (tuning.cc:462-497): collnet off, NVLS off (no graph), NVLS_TREE off on 1 node
    for c in range(5):
        for a in range(7):
            for p in range(3):
                en = True
                if p == LL128:
                    g = graphs[a]
                    if t.cc >= 90:
                        en = PATH[g.typeInter] <= PATH["PXN"]
                    else:
                        en = PATH[g.typeInter] <= PATH["PXB"]
                    en = en and PATH[g.typeIntra] <= PATH["NVB"] and t.cc >= 70
                if a in (CND, CNC) or (a == NVLS and nNodes > 1) or (nNodes == 1 and a == NVLST):
                    en = False
                if not en:
                    bwt[c][a][p] = f32(0)
    return lat, bwt


def algo_time(t, lat, bwt, coll, a, p, nBytes, numPipeOps=1):
    """ncclTopoGetAlgoTime (tuning.cc:584-601)."""
    bw = bwt[coll][a][p]
    L = lat[coll][a][p]
    if bw == 0:
        return -1.0
    logSize = log2i(nBytes >> 6)
    if a == TREE and coll == AR and 0 <= logSize < 23:
        bw = f32(bw * f32(TREE_CORR[p][logSize]))
    if a == RING and p == SIMPLE and t.nNodes > 1 and coll == AR and nBytes // (t.collChannels * t.nRanks) >= 64:
        L = f32(float(L) * (1.9 if t.cc < 80 else 1.4))
    latCount = numPipeOps if a == RING else -(-numPipeOps // NCCL_MAX_DEV_WORK_BATCH_COLLS)
    return float(f32(f32(L * latCount) + f32(f32(nBytes) / f32(1000 * bw))))


def costs(t, lat, bwt, coll, nBytes, numPipeOps=1):
    """updateCollCostTable (enqueue.cc): collnet/NVLS not supported -> ignored (-1)."""
    tab = [[-1.0] * 3 for _ in range(7)]
    if t.nRanks == 1:
        tab[RING][SIMPLE] = 0.0
        return tab
    for a in range(7):
        if a in (CND, CNC, NVLS, NVLST):
            continue
        for p in range(3):
            tab[a][p] = algo_time(t, lat, bwt, coll, a, p, nBytes, numPipeOps)
    return tab


def pick(tab, allowed=None):
    """topoGetAlgoInfo: strict minimum over entries >= 0, algorithm-major."""
    best, bt = None, 3600000000.0
    for a in range(7):
        for p in range(3):
            if allowed is not None and (a, p) not in allowed:
                continue
            v = tab[a][p]
            if v >= 0 and f32(v) < f32(bt):
                best, bt = (a, p), v
    return best


def name(ap):
    return "%s/%s" % (ALGOS[ap[0]], PROTOS[ap[1]]) if ap else "none"


def table_lines(t, lat, bwt):
    """The TUNING table as ncclTopoTuneModel prints it (tuning.cc:499-539), messages only."""
    out = []
    maxThreads = [[512, 640, 512], [512, 640, 512 if t.ring.bwIntra * t.graph_channels() > 24 else 256],
                  [0, 0, 640], [0, 0, 640], [0, 0, 640], [0, 0, 640], [0, 0, 0]]
    for block in range(3):
        line = "  Algorithm   |"
        for ba in range(3):
            a = block * 3 + ba
            if a >= 7:
                continue
            line += " %14s   %14s   %14s |" % ("", LOG_ALGOS[a], "")
        out.append(line)
        line = "  Protocol    |"
        for ba in range(3):
            for p in range(3):
                line += " %14s |" % LOG_PROTOS[p]
        out.append(line)
        line = " Max NThreads |"
        for ba in range(3):
            a = block * 3 + ba
            if a >= 7:
                continue
            for p in range(3):
                line += " %14d |" % maxThreads[a][p]
        out.append(line)
        for c in range(5):
            line = "%13s |" % COLLS[c]
            for ba in range(3):
                a = block * 3 + ba
                if a >= 7:
                    continue
                for p in range(3):
                    line += "%8.1f/%6.1f |" % (float(lat[c][a][p]), float(bwt[c][a][p]))
            out.append(line)
    return out


def printed_table(t, lat, bwt):
    """The table as a reader of the log sees it: values rounded to one decimal."""
    rl = [[[f32(float("%.1f" % float(lat[c][a][p]))) for p in range(3)] for a in range(7)] for c in range(5)]
    rb = [[[f32(float("%.1f" % float(bwt[c][a][p]))) for p in range(3)] for a in range(7)] for c in range(5)]
    return rl, rb


def format_log(t, C, gpu="NVIDIA H100 80GB HBM3", host="orc-node0", pid=4242, selection=None):
    P = "%s:%d:%d [0] NCCL INFO " % (host, pid, pid)
    lat, bwt = build_table(t, C)
    out = [P + "NCCL version 2.28.9+cuda13.0",
           P + "comm 0x5a5a0001 rank 0 nRanks %d nNodes %d localRanks %d localRank 0 MNNVL 0" % (
               t.nRanks, t.nNodes, t.nRanks // t.nNodes),
           P + t.ring.log_line(), P + t.tree.log_line()]
    out += [P + l for l in table_lines(t, lat, bwt)]
    out.append(P + "%d coll channels, %d collnet channels, 0 nvls channels, %d p2p channels, 2 p2p channels per peer" % (
        t.collChannels, t.collChannels, t.collChannels))
    return out


# ---------------------------------------------------------------- constants helpers
def flat_keys():
    """Every (name, index tuple) of the v5 constants the tool may fit (Ring/Tree)."""
    keys = []
    for a in (TREE, RING):
        for p in range(3):
            keys.append(("baseLatencies", (a, p)))
    for h in range(3):
        for a in (TREE, RING):
            for p in range(3):
                keys.append(("hwLatencies", (h, a, p)))
    for n in ("llMaxBws", "perChMaxRingLL128Bws", "perChMaxTreeLL128Bws", "perChMaxTreeBws"):
        for c in range(4):
            for s in range(3):
                keys.append((n, (c, s)))
    return keys


def key_name(k):
    n, idx = k
    if n == "baseLatencies":
        return "baseLatencies.%s.%s" % (ALGOS[idx[0]], PROTOS[idx[1]])
    if n == "hwLatencies":
        return "hwLatencies.%s.%s.%s" % (HW_NAMES[idx[0]], ALGOS[idx[1]], PROTOS[idx[2]])
    return "%s.%s.%s" % (n, COMPCAP_NAMES[idx[0]], SCALE_NAMES[idx[1]])


def get(C, k):
    v = C[k[0]]
    for i in k[1]:
        v = v[i]
    return v


def put(C, k, val):
    v = C[k[0]]
    for i in k[1][:-1]:
        v = v[i]
    v[k[1][-1]] = val


# ---------------------------------------------------------------- fake nccl-tests
NCCLTESTS_COLL = {"all_reduce_perf": AR, "all_gather_perf": AG, "reduce_scatter_perf": RS,
                  "broadcast_perf": BCAST, "reduce_perf": REDUCE}


def parse_size(s):
    s = s.strip()
    mult = {"K": 1024, "M": 1024 ** 2, "G": 1024 ** 3}
    if s[-1].upper() in mult:
        return int(float(s[:-1]) * mult[s[-1].upper()])
    return int(s)


def fake_nccl_tests(argv):
    """Behave like nccl-tests: NCCL's log for the logged constants (defaults), each size run with
    the forced candidate where NCCL offers it (else NCCL's pick), timed with the true constants."""
    spec = json.load(open(os.environ["ORACLE_SPEC"]))
    op = argv[0]
    coll = NCCLTESTS_COLL[op]
    args = {"-b": "4", "-e": "64M", "-f": "2", "-g": "1"}
    i = 1
    while i < len(argv):
        if argv[i] in ("-b", "-e", "-f", "-g", "-n", "-w", "-c", "-d", "-o", "-t"):
            args[argv[i]] = argv[i + 1]
            i += 2
        else:
            i += 1
    t = Topo.from_json(spec["topo"])
    logged = spec.get("logged", DEFAULTS)
    truth = spec["truth"]
    Llog, Blog = build_table(t, logged)
    Ltru, Btru = build_table(t, truth)
    force = os.environ.get("NCCL_TUNER_JAVA_FORCE", "")
    fa = fp = None
    if force:
        parts = force.split("/")
        fa, fp = ALGOS.index(parts[0].upper()), PROTOS.index(parts[1].upper())
    gpu = spec.get("gpu", "NVIDIA H100 80GB HBM3")
    w = sys.stdout.write
    w("# nccl-tests version 2.18.5 nccl-headers=22809 nccl-library=22809\n")
    w("# Collective test starting: %s\n" % op)
    w("# nThread 1 nGpus 1 minBytes %s maxBytes %s step: %s(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n" % (
        parse_size(args["-b"]), parse_size(args["-e"]), args["-f"]))
    w("#\n# Using devices\n")
    ppn = t.nRanks // t.nNodes
    for r in range(t.nRanks):
        w("#  Rank %2d Group  0 Pid %6d on orc-node%d device %2d [0x%02x] %s\n" % (r, 1000 + r // ppn, r // ppn, r % ppn, 0x18 + 16 * (r % ppn), gpu))
    for l in format_log(t, logged, gpu):
        w(l + "\n")
    P = "orc-node0:4242:4242 [0] NCCL INFO "
    w(P + "TUNER/Plugin: Using nccl-tuner-java (v5)\n")
    w("#\n#                                              out-of-place                           in-place\n")
    w("#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n")
    w("#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)\n")
    n = parse_size(args["-b"])
    e = parse_size(args["-e"])
    fac = int(args["-f"])
    bsum, cnt = 0.0, 0
    while n <= e:
        nBytes = n  # what the tuner gets (AllGather/ReduceScatter: nRanks x per-rank bytes = nccl-tests size)
        tab = costs(t, Llog, Blog, coll, nBytes)
        ran = pick(tab)
        if fa is not None and tab[fa][fp] >= 0:
            ran = (fa, fp)
        ttrue = algo_time(t, Ltru, Btru, coll, ran[0], ran[1], nBytes)
        printed = nBytes // t.nRanks if coll in (AG, RS) else nBytes
        w(P + "%s: %d Bytes -> Algo %s proto %s channel{Lo..Hi}={0..%d}\n" % (COLLS[coll], printed, ALGOS[ran[0]], PROTOS[ran[1]], t.collChannels - 1))
        algbw = nBytes / ttrue / 1e3
        fac_bus = {AR: 2.0 * (t.nRanks - 1) / t.nRanks, AG: (t.nRanks - 1) / t.nRanks, RS: (t.nRanks - 1) / t.nRanks}.get(coll, 1.0)
        busbw = algbw * fac_bus
        bsum += busbw; cnt += 1
        w("%12d  %12d     float     sum      -1  %7.2f  %6.2f  %6.2f      0  %7.2f  %6.2f  %6.2f      0\n" % (
            nBytes, nBytes // 4, ttrue, algbw, busbw, ttrue, algbw, busbw))
        n *= fac
    w("# Out of bounds values : 0 OK\n# Avg bus bandwidth    : %.4f \n#\n# Collective test concluded: %s\n#\n" % (bsum / max(cnt, 1), op))


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "fake-nccl-tests":
        fake_nccl_tests(sys.argv[2:])
    elif len(sys.argv) > 1 and sys.argv[1] == "log":
        spec = json.load(open(sys.argv[2]))
        for l in format_log(Topo.from_json(spec["topo"]), spec.get("logged", DEFAULTS)):
            print(l)
    elif len(sys.argv) > 1 and NCCLTESTS_COLL.get(os.path.basename(sys.argv[1])) is not None:
        fake_nccl_tests(sys.argv[1:])
    else:
        print(__doc__)
