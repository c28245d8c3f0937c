#!/usr/bin/env bash
# An nccl-tests binary for `nccl-tuner sweep --binary` on one GPU: runs PROGRAM_perf as two rank
# processes of sweep_gpu_worker.py sharing GPU 0 (different NCCL_HOSTID, Socket transport over
# loopback: nRanks=2, nNodes=2) and prints rank 0's output plus both ranks' NCCL lines, as
# nccl-tests under a launcher would. Usage: sweep_gpu_driver.sh PROGRAM_perf [nccl-tests options].
# The environment (NCCL_TUNER_PLUGIN, NCCL_TUNER_JAVA_FORCE, NCCL_DEBUG...) passes to both ranks.
# Exit: 0, or the first failing rank's status (124: SWEEP_GPU_RUN_TIMEOUT seconds, default 120).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
PY=${PYTHON:-python3}
export NCCL_SOCKET_IFNAME=lo NCCL_IB_DISABLE=1 NCCL_MNNVL_ENABLE=0 MASTER_ADDR=127.0.0.1 WORLD_SIZE=2
export MASTER_PORT=$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
for r in 0 1; do
  RANK=$r NCCL_HOSTID="gpuhost$r" timeout -k 10 "${SWEEP_GPU_RUN_TIMEOUT:-120}" "$PY" "$HERE/sweep_gpu_worker.py" "$@" \
    >"$tmp/rank$r.out" 2>&1 &
  pids[r]=$!
done
rc=0
for r in 0 1; do
  wait "${pids[r]}"; s=$?
  [ $rc -eq 0 ] && rc=$s
done
cat "$tmp/rank0.out"
grep -a 'NCCL INFO\|NCCL WARN' "$tmp/rank1.out" || true
[ $rc -eq 0 ] || { echo "sweep_gpu_driver: rank failed (exit $rc); rank 1 tail:"; tail -n 20 "$tmp/rank1.out"; }
exit $rc
