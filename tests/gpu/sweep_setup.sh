# tests/gpu/sweep_setup.sh -- the start that sweep_gpu.sh and calibrate_gpu.sh share, sourced with the
# script's name, its default output folder and its arguments (HERE set to tests/gpu first):
#   . "$HERE/sweep_setup.sh" NAME DEFAULT_OUT_DIR "$@"        (the arguments: DIST_DIR [OUT_DIR])
# Checks that its sweeps can run here, else exits 2 with one line saying why: a python3 (PYTHON) with
# PyTorch and a CUDA GPU (sweep_gpu_worker.py --probe), bin/nccl-tuner and lib/libnccl-tuner-java.so in
# DIST_DIR. Then sets PY, DIST, OUT (made, absolute) and info (the probe's line), drops the caller's
# settings that would change NCCL's choices, exports PYTHON for the drivers and prints
# "NAME: INFO; output OUT".
PY=${PYTHON:-python3}
[ $# -ge 3 ] && [ $# -le 4 ] || { echo "usage: $0 DIST_DIR [OUT_DIR]" >&2; exit 2; }
DIST=$(cd "$3" 2>/dev/null && pwd) || { echo "$1: no directory $3"; exit 2; }
command -v "$PY" >/dev/null || { echo "$1: needs a CUDA GPU and PyTorch (no $PY)"; exit 2; }
if ! info=$("$PY" "$HERE/sweep_gpu_worker.py" --probe 2>&1); then
  echo "$1: needs a CUDA GPU and PyTorch ($(echo "$info" | tail -n 1))"
  exit 2
fi
for f in "$DIST/bin/nccl-tuner" "$DIST/lib/libnccl-tuner-java.so"; do
  [ -e "$f" ] || { echo "$1: $f not found (DIST_DIR must be an unpacked distribution)"; exit 2; }
done
OUT=${4:-$2}
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd) || exit 2
unset NCCL_ALGO NCCL_PROTO NCCL_MIN_NCHANNELS NCCL_MAX_NCHANNELS NCCL_DEBUG_FILE
export PYTHON=$PY
echo "$1: $info; output $OUT"
