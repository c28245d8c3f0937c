#!/usr/bin/env python3
"""Tests of the e2e checker and driver without a GPU: python3 tests/gpu/test_e2e.py

Run trees are built from real material: rank 0's NCCL 2.28.9 logs captured on the H200 testbed
(tests/traces/nccl_<w>.rank0.log: NCCL's own selection lines, the no-plugin run) and decision logs and
TUNER/Java lines written by the real plugin replaying the getCollInfo calls of that same capture
(testdata/<w>.<policy>.<mode>.{jsonl,tuner}; regenerate with the JDK build:
NCCL_TUNER_JAVA_POLICY=policies/<policy>.yaml NCCL_TUNER_JAVA_MODE=<mode> NCCL_TUNER_JAVA_LOG=<jsonl>
build/tests/harness --plugin build/lib/libnccl-tuner-java.so --trace tests/traces/trace_<w>.csv).
The shadow run repeats NCCL's lines; the enforce run is what NCCL prints when it runs the policy's
pick. Each tampered copy must fail the check it targets.
"""
import contextlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import e2e_check as ec  # noqa: E402

TRACES = os.path.join(HERE, "..", "traces")
DATA = os.path.join(HERE, "testdata")
PREFIX = "vm:746:746 [0] NCCL INFO "


def read_lines(path):
    with open(path) as f:
        return f.read().splitlines()


def write(path, lines):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def sel_line(coll, nbytes, algo, proto, lo, hi):
    return PREFIX + "%s: %d Bytes -> Algo %s proto %s channel{Lo..Hi}={%d..%d}" % (coll, nbytes, algo, proto, lo, hi)


def build(root, workload="sweep", policy="h200-2rank", old_format=False):
    """A complete, correct run tree under root: none/, shadow/, enforce/."""
    src = [l for l in read_lines(os.path.join(TRACES, "nccl_%s.rank0.log" % workload))
           if not re.search(r"TUNER/Plugin|tuner plugin|NCCL_TUNER_PLUGIN", l)]  # captured with a trace plugin
    recs = {m: read_lines(os.path.join(DATA, "%s.%s.%s.jsonl" % (workload, policy, m))) for m in ("shadow", "enforce")}
    if old_format:  # NCCL 2.22/2.23: "<tuner bytes> Bytes -> Algo <i> proto <i> time <t>", no collective name
        keep = []
        for l in src:
            m = ec.SEL.search(l)
            if m and m.group(1) != "AllReduce":
                continue
            if m:
                l = PREFIX + "%s Bytes -> Algo %d proto %d time 12.5" % (
                    m.group(2), ec.ALGOS.index(m.group(3)), ec.PROTOS.index(m.group(4)))
            keep.append(l)
        src = keep
        recs = {m: [r for r in v if '"AllReduce"' in r] for m, v in recs.items()}
    sizes = sorted({int(m.group(2)) for m in map(ec.SEL.search, src) if m and m.group(1) == "AllReduce"} |
                   {int(m.group(1)) for m in map(ec.SEL_OLD.search, src) if m})
    for mode in ec.MODES:
        d = os.path.join(root, mode)
        rank0 = list(src)
        if mode != "none":
            tuner = [PREFIX + l for l in read_lines(os.path.join(DATA, "%s.%s.%s.tuner" % (workload, policy, mode)))]
            rank0 = [PREFIX + "TUNER/Plugin: Using %s (v3)" % ("tuner plugin nccl-tuner-java" if old_format else
                                                              "nccl-tuner-java")] + tuner[:-1] + rank0 + tuner[-1:]
            if old_format:
                rank0[0] = rank0[0].replace(" (v3)", "")
            write(os.path.join(d, "decisions.rank0.jsonl"), recs[mode])
            write(os.path.join(d, "decisions.rank1.jsonl"), recs[mode])
        if mode == "enforce":
            log = ec.Log(os.path.join(root, "none", "nccl.rank0.log"))
            picks = {}
            for r in map(json.loads, recs["enforce"]):
                picks[("*" if old_format else r["collective"], r["nBytes"])] = (r["policyPick"], r["channels"])
            out = []
            for l in rank0:
                m, mo = ec.SEL.search(l), ec.SEL_OLD.search(l)
                if m:
                    s = (m.group(1), int(m.group(2)), m.group(3), m.group(4), int(m.group(5)), int(m.group(6)))
                    k = log.key(s, 2)
                    if k in picks:
                        (a, p), ch = picks[k][0].split("/"), picks[k][1]
                        lo, hi = s[4], s[5]
                        if ch:
                            lo, hi = 0, ec.expected_channels(s[0], s[1], p, ch, 2, 2) - 1
                        l = sel_line(s[0], s[1], a, p, lo, hi)
                elif mo and ("*", int(mo.group(1))) in picks:
                    a, p = picks[("*", int(mo.group(1)))][0].split("/")
                    l = PREFIX + "%s Bytes -> Algo %d proto %d time 0.0" % (mo.group(1), ec.ALGOS.index(a), ec.PROTOS.index(p))
                out.append(l)
            rank0 = out
        write(os.path.join(d, "nccl.rank0.log"), rank0)
        # NCCL prints selection lines on rank 0 only
        write(os.path.join(d, "nccl.rank1.log"), [l.replace("rank 0 nRanks", "rank 1 nRanks") for l in rank0
                                                   if not (ec.SEL.search(l) or ec.SEL_OLD.search(l))])
        for r in (0, 1):
            write(os.path.join(d, "rc.rank%d" % r), ["0"])
            write(os.path.join(d, "rank%d.out" % r), ["allreduce done"])
            res = {"rank": r, "allreduce": [{"bytes": b, "median_us": 2400.0 + i, "wrong": 0} for i, b in enumerate(sizes)],
                   "ddp": {"losses": [2.31, 2.27, 2.2], "finite": True, "identical": True}, "error": None}
            with open(os.path.join(d, "result.rank%d.json" % r), "w") as f:
                json.dump(res, f)
    return root


def run_checks(root, policy_file=None):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        ok = ec.Checker(root, ec.policy_name(policy_file) if policy_file else None).run()
    text = buf.getvalue()
    failed = [l[5:] for l in text.splitlines() if l.startswith("FAIL ")]
    return ok, failed, text


def edit(path, fn):
    lines = read_lines(path)
    write(path, fn(lines))


class CheckerOnRealLogs(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="e2e-test-")

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def assertPasses(self, root, policy_file=None):
        ok, failed, text = run_checks(root, policy_file)
        self.assertTrue(ok, text)
        self.assertRegex(text, r"e2e: \d+ passed, 0 failed\n$")
        return text

    def assertFailsOnly(self, root, *prefixes):
        ok, failed, text = run_checks(root)
        self.assertFalse(ok, text)
        for f in failed:
            self.assertTrue(any(f.startswith(p) for p in prefixes), "unexpected FAIL %s\n%s" % (f, text))
        for p in prefixes[:1]:
            self.assertTrue(any(f.startswith(p) for f in failed), "no FAIL %s\n%s" % (p, text))
        self.assertRegex(text, r"e2e: \d+ passed, [1-9]\d* failed\n$")
        return text

    def test_parses_real_nccl_log(self):
        log = ec.Log(os.path.join(TRACES, "nccl_sweep.rank0.log"))
        self.assertEqual((log.n_ranks, log.n_nodes, log.coll_channels), (2, 2, 2))
        self.assertEqual(len(log.sel), 141)  # one per getCollInfo call in trace_sweep.csv
        self.assertIn(("AllReduce", 1048576, "RING", "SIMPLE", 0, 1), log.sel)
        self.assertEqual(log.key(("AllGather", 8, "RING", "LL", 0, 0), 2), ("AllGather", 16))
        self.assertEqual(log.using, ["ceo-trace-v3"])
        calls = sum(1 for l in read_lines(os.path.join(TRACES, "trace_sweep.csv")) if l.startswith("get,"))
        self.assertEqual(calls, len(log.sel))

    def test_good_runs_pass(self):
        for w, p in (("sweep", "h200-2rank"), ("sweep", "channel-override"), ("ddp", "h200-2rank")):
            with self.subTest(workload=w, policy=p):
                root = build(os.path.join(self.tmp, w + p), w, p)
                text = self.assertPasses(root, os.path.join(HERE, "..", "..", "policies", p + ".yaml"))
                self.assertIn("disagreements (ncclPick != policyPick)", text)

    def test_table_and_disagreements(self):
        text = self.assertPasses(build(self.tmp))
        self.assertRegex(text, r"\n1 MiB +2410\.0 +2410\.0 +2410\.0  RING/SIMPLE \{0\.\.1\} +TREE/SIMPLE \{0\.\.1\} +\*\n")
        self.assertIn("shadow decision log (rank 0): 27 records, 27 disagreements", text)

    def test_old_nccl_format(self):
        self.assertPasses(build(self.tmp, old_format=True))

    def test_channel_expectation(self):
        # NCCL 2.28 enqueue.cc, one collective per plan, 2 comm channels: >= 16 KiB traffic per channel.
        e = ec.expected_channels
        self.assertEqual(e("AllReduce", 8, "SIMPLE", 1, 2, 2), 1)
        self.assertEqual(e("AllReduce", 8192, "SIMPLE", 2, 2, 2), 1)      # 16 KiB traffic: one channel
        self.assertEqual(e("AllReduce", 16384, "SIMPLE", 2, 2, 2), 2)
        self.assertEqual(e("AllReduce", 4096, "LL", 2, 2, 2), 2)          # LL counts traffic x4
        self.assertEqual(e("AllGather", 8, "SIMPLE", 2, 2, 2), 1)
        self.assertEqual(e("ReduceScatter", 1 << 20, "SIMPLE", 4, 2, 2), 2)  # capped at the comm's channels
        self.assertEqual(e("AllReduce", 1 << 26, "SIMPLE", 8, 16, 2), 8)

    def test_shadow_changed_a_selection(self):
        root = build(self.tmp)
        edit(os.path.join(root, "shadow", "nccl.rank0.log"),
             lambda ls: [l.replace("AllReduce: 1048576 Bytes -> Algo RING", "AllReduce: 1048576 Bytes -> Algo TREE")
                         for l in ls])
        self.assertFailsOnly(root, "shadow: NCCL's selections equal", "shadow: the decision log's ncclPick")

    def test_enforce_ran_nccls_pick(self):
        root = build(self.tmp)
        edit(os.path.join(root, "enforce", "nccl.rank0.log"),
             lambda ls: [l.replace("AllReduce: 4194304 Bytes -> Algo TREE proto SIMPLE", "AllReduce: 4194304 Bytes -> Algo RING proto SIMPLE")
                         for l in ls])
        text = self.assertFailsOnly(root, "enforce: NCCL ran the policy's")
        self.assertIn("AllReduce 4 MiB ran RING/SIMPLE {0..1}, policy TREE/SIMPLE", text)

    def test_enforce_wrong_channels(self):
        root = build(self.tmp, policy="channel-override")
        for bad in ("{0..0}", "{0..3}"):
            edit(os.path.join(root, "enforce", "nccl.rank0.log"),
                 lambda ls: [re.sub(r"(ReduceScatter: 2097152 Bytes -> Algo RING proto SIMPLE channel\{Lo\.\.Hi\}=)\{\d+\.\.\d+\}",
                                    lambda m: m.group(1) + bad, l) for l in ls])
            text = self.assertFailsOnly(root, "enforce: NCCL ran the policy's")
            self.assertIn("ReduceScatter 2 MiB ran RING/SIMPLE %s, policy channels 4: expected 2" % bad, text)

    def test_enforce_changed_a_call_without_rule(self):
        root = build(self.tmp)
        edit(os.path.join(root, "enforce", "nccl.rank0.log"),
             lambda ls: [l.replace("Broadcast: 1048576 Bytes -> Algo RING", "Broadcast: 1048576 Bytes -> Algo TREE") for l in ls])
        self.assertFailsOnly(root, "enforce: collectives without a rule hit")

    def test_plugin_not_loaded(self):
        root = build(self.tmp)
        for r in (0, 1):
            edit(os.path.join(root, "enforce", "nccl.rank%d.log" % r), lambda ls: [l for l in ls if "TUNER/" not in l])
        self.assertFailsOnly(root, "enforce: NCCL loaded nccl-tuner-java", "enforce: policy line", "policy sha256",
                             "enforce: summary at destroy")

    def test_plugin_loaded_without_being_asked(self):
        root = build(self.tmp)
        edit(os.path.join(root, "none", "nccl.rank1.log"), lambda ls: ls + [PREFIX + "TUNER/Plugin: Using nccl-tuner-java (v3)"])
        self.assertFailsOnly(root, "none: plugin not loaded")

    def test_sha_differs_between_ranks(self):
        root = build(self.tmp)
        edit(os.path.join(root, "shadow", "nccl.rank1.log"), lambda ls: [re.sub(r"sha256 \w{6}", "sha256 000000", l) for l in ls])
        self.assertFailsOnly(root, "policy sha256 identical")

    def test_wrong_policy_or_mode(self):
        root = build(self.tmp)
        edit(os.path.join(root, "enforce", "nccl.rank1.log"), lambda ls: [l.replace(" mode enforce rules", " mode shadow rules") for l in ls])
        self.assertFailsOnly(root, "enforce: policy line")
        ok, failed, _ = run_checks(build(os.path.join(self.tmp, "b")), os.path.join(HERE, "..", "..", "policies", "channel-override.yaml"))
        self.assertEqual([f[:21] for f in failed], ["shadow: policy line o", "enforce: policy line "])

    def test_plugin_warning(self):
        root = build(self.tmp)
        write(os.path.join(root, "shadow", "rank1.out"), ["NCCL WARN TUNER/Java: no Java runtime found (...)"])
        self.assertFailsOnly(root, "shadow: no TUNER/Java warnings")

    def test_wrong_allreduce_result(self):
        root = build(self.tmp)
        p = os.path.join(root, "enforce", "result.rank1.json")
        with open(p) as f:
            res = json.load(f)
        res["allreduce"][3]["wrong"] = 7
        with open(p, "w") as f:
            json.dump(res, f)
        text = self.assertFailsOnly(root, "enforce: AllReduce float32 sum correct")
        self.assertIn("rank 1: AllReduce 64 B: 7 wrong elements", text)

    def test_ddp_diverged(self):
        root = build(self.tmp)
        p = os.path.join(root, "shadow", "result.rank0.json")
        with open(p) as f:
            res = json.load(f)
        res["ddp"]["identical"] = False
        res["ddp"]["losses"][1] = float("nan")
        with open(p, "w") as f:
            json.dump(res, f)
        self.assertFailsOnly(root, "shadow: DDP training")

    def test_rank_timed_out(self):
        root = build(self.tmp)
        write(os.path.join(root, "none", "rc.rank1"), ["124"])
        os.remove(os.path.join(root, "none", "result.rank1.json"))
        text = self.assertFailsOnly(root, "none: both ranks exited 0", "none: AllReduce", "none: DDP")
        self.assertIn("(124 = timeout)", text)

    def test_shadow_record_applied_and_enforce_log_missing(self):
        root = build(self.tmp)
        edit(os.path.join(root, "shadow", "decisions.rank1.jsonl"), lambda ls: [l.replace('"applied":false', '"applied":true') for l in ls])
        self.assertFailsOnly(root, "shadow: decision log on both ranks")
        root = build(os.path.join(self.tmp, "b"))
        os.remove(os.path.join(root, "enforce", "decisions.rank1.jsonl"))
        self.assertFailsOnly(root, "enforce: decision log on both ranks", "enforce: summary at destroy")

    def test_destroy_not_called(self):
        root = build(self.tmp)
        edit(os.path.join(root, "shadow", "nccl.rank1.log"), lambda ls: [l for l in ls if "summary" not in l])
        text = self.assertFailsOnly(root, "shadow: summary at destroy")
        self.assertIn("rank 1: no summary line", text)

    def test_missing_selection_lines(self):
        root = build(self.tmp)
        edit(os.path.join(root, "none", "nccl.rank0.log"), lambda ls: [l for l in ls if "AllReduce: 4096 Bytes" not in l])
        text = self.assertFailsOnly(root, "none: NCCL (rank 0) saw", "shadow: NCCL's selections equal",
                                    "enforce: collectives without a rule hit")
        self.assertIn("no line for 4 KiB", text)


class Driver(unittest.TestCase):
    """e2e.sh itself: argument checks, the no-torch exit, --check-only, and the whole flow with a stand-in python."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="e2e-sh-")
        self.dist = os.path.join(self.tmp, "dist")
        for d in ("lib", "runtime", "policies"):
            os.makedirs(os.path.join(self.dist, d))
        for f in ("lib/libnccl-tuner-java.so", "lib/nccl-tuner-java.jar"):
            open(os.path.join(self.dist, f), "w").close()
        shutil.copy(os.path.join(HERE, "..", "..", "policies", "h200-2rank.yaml"), os.path.join(self.dist, "policies"))

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def sh(self, *args, env=None):
        p = subprocess.run(["bash", os.path.join(HERE, "e2e.sh")] + list(args), capture_output=True, text=True,
                           env=dict(os.environ, **(env or {})), timeout=120)
        return p.returncode, p.stdout + p.stderr

    def fake_torch(self, cuda):
        d = os.path.join(self.tmp, "faketorch", "torch")
        os.makedirs(os.path.join(d, "cuda"), exist_ok=True)
        with open(os.path.join(d, "__init__.py"), "w") as f:
            f.write("__version__ = '9.9-fake'\nfrom . import cuda\n")
        with open(os.path.join(d, "cuda", "__init__.py"), "w") as f:
            f.write("def is_available(): return %r\ndef device_count(): return %d\n" % (cuda, int(cuda)))
        return os.path.dirname(d)

    def test_usage_and_missing_dist(self):
        self.assertEqual(self.sh()[0], 2)
        rc, out = self.sh(os.path.join(self.tmp, "nothing"))
        self.assertEqual(rc, 2)
        os.remove(os.path.join(self.dist, "lib", "nccl-tuner-java.jar"))
        rc, out = self.sh(self.dist)
        self.assertEqual(rc, 2)
        self.assertIn("nccl-tuner-java.jar not found", out)

    def test_no_torch_or_no_cuda(self):
        rc, out = self.sh(self.dist, env={"PYTHONPATH": os.path.join(self.tmp, "empty")})
        if "no PyTorch" not in out:
            self.skipTest("PyTorch is installed here")
        self.assertEqual(rc, 2)
        self.assertIn("e2e: needs a CUDA GPU and PyTorch (no PyTorch", out)
        rc, out = self.sh(self.dist, env={"PYTHONPATH": self.fake_torch(cuda=False)})
        self.assertEqual((rc, out.strip()), (2, "e2e: needs a CUDA GPU and PyTorch (PyTorch 9.9-fake sees no CUDA GPU)"))

    def test_check_only(self):
        root = build(os.path.join(self.tmp, "run"))
        rc, out = self.sh("--check-only", root)
        self.assertEqual(rc, 0, out)
        self.assertRegex(out, r"e2e: \d+ passed, 0 failed\n$")
        write(os.path.join(root, "enforce", "rc.rank0"), ["1"])
        rc, out = self.sh("--check-only", root)
        self.assertEqual(rc, 1, out)
        self.assertIn("FAIL enforce: both ranks exited 0", out)

    def fake_python(self, fixture, hang_rank=None):
        """Stands in for python3 running e2e_worker.py: checks the env each rank gets, copies the fixture's files."""
        p = os.path.join(self.tmp, "fakepy")
        with open(p, "w") as f:
            f.write("""#!/usr/bin/env bash
if [ "$(basename -- "${1:-x}")" != e2e_worker.py ]; then exec python3 "$@"; fi
[ "${2:-}" = --probe ] && { echo "torch fake, CUDA 13.0, NCCL 2.28.9, GPU none"; exit 0; }
mode=${NCCL_TUNER_JAVA_MODE:-none}; src=%s/$mode
[ "%s" = "$RANK" ] && exec sleep 300
fail() { echo "fake worker: $*" >&2; exit 7; }
[ "$NCCL_HOSTID" = "e2ehost$RANK" ] && [ "$NCCL_SOCKET_IFNAME" = lo ] && [ "$NCCL_IB_DISABLE" = 1 ] || fail hostid/socket
[ "$NCCL_DEBUG" = INFO ] && [ "$NCCL_DEBUG_SUBSYS" = INIT,TUNING ] && [ -n "$MASTER_PORT" ] && [ "$WORLD_SIZE" = 2 ] || fail debug
[ -z "${NCCL_ALGO:-}" ] || fail NCCL_ALGO leaked
if [ $mode = none ]; then [ -z "${NCCL_TUNER_PLUGIN:-}${NCCL_TUNER_JAVA_LOG:-}" ] || fail plugin set
else [ -f "$NCCL_TUNER_PLUGIN" ] && [ -f "$NCCL_TUNER_JAVA_POLICY" ] || fail plugin env
  cp $src/decisions.rank$RANK.jsonl "$NCCL_TUNER_JAVA_LOG"; fi
cp $src/nccl.rank$RANK.log "$NCCL_DEBUG_FILE"; cp $src/result.rank$RANK.json "$E2E_RESULT"
[ "$RANK" = 0 ] && [ -n "%s" ] && exit 1
exit 0
""" % (fixture, "" if hang_rank is None else hang_rank, "" if hang_rank is None else "x"))
        os.chmod(p, 0o755)
        return p

    def test_whole_flow_with_stand_in_python(self):
        fixture = build(os.path.join(self.tmp, "fixture"))
        out_dir = os.path.join(self.tmp, "out")
        rc, out = self.sh(self.dist, out_dir, env={"PYTHON": self.fake_python(fixture), "NCCL_ALGO": "RING"})
        self.assertEqual(rc, 0, out)
        for m in ("none", "shadow", "enforce"):
            self.assertIn("e2e: %s: ranks exited 0 0" % m, out)
        self.assertRegex(out, r"e2e: \d+ passed, 0 failed\n$")

    def test_dead_rank_stops_its_peer(self):
        fixture = build(os.path.join(self.tmp, "fixture"))
        t0 = time.time()
        rc, out = self.sh(self.dist, os.path.join(self.tmp, "out"),
                          env={"PYTHON": self.fake_python(fixture, hang_rank=1), "E2E_PEER_GRACE": "1"})
        self.assertLess(time.time() - t0, 60)
        self.assertEqual(rc, 1, out)
        self.assertIn("FAIL none: both ranks exited 0", out)
        self.assertRegex(out, r"e2e: \d+ passed, [1-9]\d* failed\n$")


def python_with_torch():
    for py in (os.environ.get("E2E_TORCH_PYTHON"), sys.executable, "/usr/bin/python3"):
        if py and os.path.exists(py) and subprocess.run([py, "-c", "import torch.distributed"],
                                                        capture_output=True).returncode == 0:
            return py
    return None


class WorkerOnCpu(unittest.TestCase):
    """e2e_worker.py's own code on two CPU ranks (gloo, E2E_DEVICE=cpu), where some python3 here has PyTorch."""

    def test_two_ranks(self):
        py = python_with_torch()
        if not py:
            self.skipTest("no PyTorch here")
        tmp = tempfile.mkdtemp(prefix="e2e-cpu-")
        try:
            port = __import__("socket").socket()
            port.bind(("127.0.0.1", 0))
            env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port.getsockname()[1]), WORLD_SIZE="2",
                       E2E_DEVICE="cpu", E2E_MAX_SHIFT="16", E2E_ITERS="3", E2E_WARMUP="1", E2E_DDP_STEPS="3")
            port.close()
            ps = [subprocess.Popen([py, os.path.join(HERE, "e2e_worker.py")], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                   env=dict(env, RANK=str(r), E2E_RESULT=os.path.join(tmp, "result.rank%d.json" % r)))
                  for r in (0, 1)]
            outs = [p.communicate(timeout=120)[0].decode() for p in ps]
            self.assertEqual([p.returncode for p in ps], [0, 0], outs)
            res = []
            for r in (0, 1):
                with open(os.path.join(tmp, "result.rank%d.json" % r)) as f:
                    res.append(json.load(f))
            for x in res:
                self.assertEqual([s["bytes"] for s in x["allreduce"]], [1 << k for k in range(2, 17)])
                self.assertTrue(all(s["wrong"] == 0 and s["median_us"] > 0 for s in x["allreduce"]))
                self.assertTrue(x["ddp"]["identical"] and x["ddp"]["finite"] and len(x["ddp"]["losses"]) == 3, x)
            self.assertEqual(res[0]["ddp"]["losses"] != res[1]["ddp"]["losses"], True)  # different data per rank
        finally:
            shutil.rmtree(tmp)


if __name__ == "__main__":
    unittest.main(verbosity=2)
