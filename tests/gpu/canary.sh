#!/usr/bin/env bash
# The canary under real NCCL on one CUDA GPU: two ranks (nRanks=2 nNodes=2 over loopback), the tuner and the
# profiler both from the library (NCCL_TUNER_PLUGIN = NCCL_PROFILER_PLUGIN), NCCL_TUNER_JAVA_MODE=canary with a
# policy that changes something at some sizes (default: generated, RING/LL on one channel for AllReduce from
# 512 KiB to 2 MiB); AllReduce at 64 KiB, 1 MiB, 4 MiB; then canary_check.py and `nccl-tuner report`.
#   tests/gpu/canary.sh DIST_DIR [OUT_DIR]      run, report, check
#   tests/gpu/canary.sh --check-only OUT_DIR    only the checks over an earlier run's OUT_DIR
# DIST_DIR: lib/libnccl-tuner-java.so, lib/nccl-tuner-java.jar, runtime/, bin/nccl-tuner (make dist, unpacked).
# Env: POLICY (a policy file instead of the generated one), CANARY_FRACTION (0.5), CANARY_SIZES, CANARY_ITERS (200),
#      CANARY_WARMUP (5), CANARY_TIMEOUT (s per rank, 300), CANARY_PEER_GRACE (s, 30), PYTHON (python3).
# Exit: 0 all checks passed, 1 a check failed, 2 cannot run here (no GPU, no PyTorch, no dist).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
PY=${PYTHON:-python3}
usage() { echo "usage: $0 DIST_DIR [OUT_DIR] | $0 --check-only OUT_DIR" >&2; exit 2; }

if [ "${1:-}" = "--check-only" ]; then
  [ $# -eq 2 ] || usage
  exec "$PY" "$HERE/canary_check.py" "$2"
fi
[ $# -ge 1 ] && [ $# -le 2 ] || usage
DIST=$(cd "$1" 2>/dev/null && pwd) || { echo "canary: no directory $1" >&2; exit 2; }
OUT=${2:-${TMPDIR:-/tmp}/nccl-tuner-canary}
LIB=$DIST/lib/libnccl-tuner-java.so
for f in "$LIB" "$DIST/lib/nccl-tuner-java.jar" "$DIST/bin/nccl-tuner"; do
  [ -f "$f" ] || { echo "canary: $f not found" >&2; exit 2; }
done
[ -d "$DIST/runtime" ] || { echo "canary: $DIST/runtime/ not found (the Java runtime the plugin loads)" >&2; exit 2; }
command -v nvidia-smi >/dev/null || { echo "canary: needs a CUDA GPU (no nvidia-smi)" >&2; exit 2; }
command -v "$PY" >/dev/null || { echo "canary: needs PyTorch with CUDA (no $PY)" >&2; exit 2; }
if ! info=$("$PY" "$HERE/canary_worker.py" --probe 2>&1); then
  echo "canary: needs a CUDA GPU and PyTorch ($(echo "$info" | tail -n 1))" >&2
  exit 2
fi
rm -rf "$OUT" && mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd) || exit 2
if [ -n "${POLICY:-}" ]; then
  cp "$POLICY" "$OUT/policy.yaml" || exit 2
else
  cat >"$OUT/policy.yaml" <<'YAML'
schema: nccl-tuner-java/v1
name: canary-e2e
mode: canary
description: tests/gpu/canary.sh - RING/LL on one channel for AllReduce from 512 KiB to 2 MiB
profiles:
  - name: two-ranks-socket
    match: {nRanks: 2, nNodes: 2}
    rules:
      - collective: AllReduce
        bytes: {from: 512 KiB, to: 2 MiB}
        candidates:
          - {algorithm: RING, protocol: LL, channels: 1, regret: 0.0}
YAML
fi
echo "canary: $info"
echo "canary: plugin $LIB (tuner and profiler)"
echo "canary: policy $OUT/policy.yaml, fraction ${CANARY_FRACTION:-0.5}"
echo "canary: output $OUT"

# Settings of the caller that would change NCCL's choices or the plugin's are dropped.
unset NCCL_ALGO NCCL_PROTO NCCL_MIN_NCHANNELS NCCL_MAX_NCHANNELS NCCL_TUNER_CONFIG_FILE NCCL_TUNER_JAVA_FORCE \
      NCCL_TUNER_JAVA_PROFILER NCCL_TUNER_JAVA_PROFILER_CHAIN NCCL_PROFILE_EVENT_MASK NCCL_DEBUG_FILE
export NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,TUNING
export NCCL_TUNER_PLUGIN=$LIB NCCL_PROFILER_PLUGIN=$LIB NCCL_TUNER_JAVA_MODE=canary
export NCCL_TUNER_JAVA_CANARY=${CANARY_FRACTION:-0.5} NCCL_TUNER_JAVA_POLICY=$OUT/policy.yaml
. "$HERE/two_ranks.sh"

canary_rank_env() { # R
  rank_env=(NCCL_HOSTID="canaryhost$1" NCCL_DEBUG_FILE="$OUT/nccl.rank$1.log"
            NCCL_TUNER_JAVA_LOG="$OUT/decisions.rank$1.jsonl" CANARY_RESULT="$OUT/result.rank$1.json")
}
two_ranks canary "$OUT" "${CANARY_TIMEOUT:-300}" "${CANARY_PEER_GRACE:-30}" canary_rank_env "$HERE/canary_worker.py"

"$DIST/bin/nccl-tuner" report "$OUT/decisions.rank0.jsonl" "$OUT/decisions.rank1.jsonl" >"$OUT/report.txt" 2>&1
echo $? >"$OUT/report.rc"
echo "canary: nccl-tuner report (exit $(cat "$OUT/report.rc")):"
sed 's/^/  /' "$OUT/report.txt"
exec "$PY" "$HERE/canary_check.py" "$OUT"
