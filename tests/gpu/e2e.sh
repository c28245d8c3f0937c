#!/usr/bin/env bash
# End-to-end check of nccl-tuner-java under real NCCL on one CUDA GPU (two ranks, nRanks=2 nNodes=2).
#   tests/gpu/e2e.sh DIST_DIR [OUT_DIR]      run: no plugin, shadow, enforce; then check and print the table
#   tests/gpu/e2e.sh --check-only OUT_DIR    re-run only the checks over an earlier run's OUT_DIR
# DIST_DIR: lib/libnccl-tuner-java.so, lib/nccl-tuner-java.jar, runtime/, policies/.
# Needs bash, python3 with PyTorch (NCCL 2.22+) and one CUDA GPU; no JDK, no network.
# Env: POLICY (default DIST_DIR/policies/h200-2rank.yaml), E2E_TIMEOUT (s per run, 300), E2E_ITERS (10),
#      E2E_WARMUP (3), E2E_MAX_SHIFT (26 = 64 MiB), E2E_DDP_STEPS (5), E2E_PEER_GRACE (s, 30), PYTHON (python3).
# Exit: 0 all checks passed, 1 a check failed, 2 cannot run here.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
PY=${PYTHON:-python3}
usage() { echo "usage: $0 DIST_DIR [OUT_DIR] | $0 --check-only OUT_DIR" >&2; exit 2; }

if [ "${1:-}" = "--check-only" ]; then
  [ $# -eq 2 ] || usage
  exec "$PY" "$HERE/e2e_check.py" "$2" ${POLICY:+--policy "$POLICY"}
fi
[ $# -ge 1 ] && [ $# -le 2 ] || usage
DIST=$(cd "$1" 2>/dev/null && pwd) || { echo "e2e: no directory $1" >&2; exit 2; }
OUT=${2:-${TMPDIR:-/tmp}/nccl-tuner-e2e}
POLICY=${POLICY:-$DIST/policies/h200-2rank.yaml}
LIB=$DIST/lib/libnccl-tuner-java.so

for f in "$LIB" "$DIST/lib/nccl-tuner-java.jar" "$POLICY"; do
  [ -f "$f" ] || { echo "e2e: $f not found" >&2; exit 2; }
done
[ -d "$DIST/runtime" ] || { echo "e2e: $DIST/runtime/ not found (the Java runtime the plugin loads)" >&2; exit 2; }
command -v "$PY" >/dev/null || { echo "e2e: needs a CUDA GPU and PyTorch (no $PY)" >&2; exit 2; }
if ! info=$("$PY" "$HERE/e2e_worker.py" --probe 2>&1); then
  echo "e2e: needs a CUDA GPU and PyTorch ($(echo "$info" | tail -n 1))" >&2
  exit 2
fi
POLICY=$(cd "$(dirname "$POLICY")" && pwd)/$(basename "$POLICY")
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd) || exit 2
echo "e2e: $info"
echo "e2e: plugin $LIB"
echo "e2e: policy $POLICY"
echo "e2e: output $OUT"

# Settings of the caller that would change NCCL's choices or the plugin's are dropped.
unset NCCL_ALGO NCCL_PROTO NCCL_MIN_NCHANNELS NCCL_MAX_NCHANNELS NCCL_TUNER_PLUGIN NCCL_TUNER_CONFIG_FILE \
      NCCL_TUNER_JAVA_POLICY NCCL_TUNER_JAVA_MODE NCCL_TUNER_JAVA_LOG NCCL_DEBUG_FILE E2E_DEVICE
export NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,TUNING
. "$HERE/two_ranks.sh"

e2e_rank_env() { # R, in run_mode's $mode and $dir
  rank_env=(NCCL_HOSTID="e2ehost$1" NCCL_DEBUG_FILE="$dir/nccl.rank$1.log" E2E_RESULT="$dir/result.rank$1.json")
  [ "$mode" = none ] || rank_env+=(NCCL_TUNER_PLUGIN="$LIB" NCCL_TUNER_JAVA_POLICY="$POLICY" NCCL_TUNER_JAVA_MODE="$mode"
                                   NCCL_TUNER_JAVA_LOG="$dir/decisions.rank$1.jsonl")
}

run_mode() { # none | shadow | enforce
  local mode=$1 dir=$OUT/$1
  rm -rf "$dir" && mkdir -p "$dir"
  two_ranks "e2e: $mode" "$dir" "${E2E_TIMEOUT:-300}" "${E2E_PEER_GRACE:-30}" e2e_rank_env "$HERE/e2e_worker.py"
}

for mode in none shadow enforce; do run_mode "$mode"; done
"$PY" "$HERE/e2e_check.py" "$OUT" --policy "$POLICY"
