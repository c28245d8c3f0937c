#!/usr/bin/env bash
# An nccl-tests binary for `nccl-tuner sweep --binary` on one GPU, for calibration sweeps: as
# sweep_gpu_driver.sh, but CALIBRATE_GPU_NRANKS (default 2) rank processes of sweep_gpu_worker.py
# share GPU 0, each with its own NCCL_HOSTID, so NCCL sees nRanks = nNodes = N (Socket transport
# over loopback). Prints rank 0's output plus the other ranks' NCCL lines.
# Usage: calibrate_gpu_driver.sh PROGRAM_perf [nccl-tests options]. Exit: 0, or the first failing
# rank's status (124: SWEEP_GPU_RUN_TIMEOUT seconds, default 120).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
PY=${PYTHON:-python3}
N=${CALIBRATE_GPU_NRANKS:-2}
case "$N" in ''|*[!0-9]*) echo "calibrate_gpu_driver: CALIBRATE_GPU_NRANKS must be a number" >&2; exit 2;; esac
[ "$N" -ge 2 ] || { echo "calibrate_gpu_driver: CALIBRATE_GPU_NRANKS must be >= 2" >&2; exit 2; }
export NCCL_SOCKET_IFNAME=lo NCCL_IB_DISABLE=1 NCCL_MNNVL_ENABLE=0 MASTER_ADDR=127.0.0.1 WORLD_SIZE=$N
export MASTER_PORT=$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
for ((r = 0; r < N; r++)); do
  RANK=$r NCCL_HOSTID="gpuhost$r" timeout -k 10 "${SWEEP_GPU_RUN_TIMEOUT:-120}" "$PY" "$HERE/sweep_gpu_worker.py" "$@" \
    >"$tmp/rank$r.out" 2>&1 &
  pids[r]=$!
done
rc=0
for ((r = 0; r < N; r++)); do
  wait "${pids[r]}"; s=$?
  [ $rc -eq 0 ] && rc=$s
done
cat "$tmp/rank0.out"
for ((r = 1; r < N; r++)); do grep -a 'NCCL INFO\|NCCL WARN' "$tmp/rank$r.out" || true; done
[ $rc -eq 0 ] || echo "calibrate_gpu_driver: a rank failed (exit $rc)"
exit $rc
