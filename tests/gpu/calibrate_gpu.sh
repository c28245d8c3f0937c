#!/usr/bin/env bash
# Sweeps for `nccl-tuner calibrate` on one GPU with PyTorch, then the calibration:
#   tests/gpu/calibrate_gpu.sh DIST_DIR [OUT_DIR]
# For each N in CALIBRATE_GPU_RANKS (default "2 3"): N rank processes share GPU 0, each its own
# NCCL_HOSTID (calibrate_gpu_driver.sh), so NCCL sees nRanks = nNodes = N; `nccl-tuner sweep`
# forces AllReduce TREE, RING x LL, LL128, SIMPLE and NCCL's pick, 4 B .. 64 MiB by 2x,
# CALIBRATE_GPU_REPLICATES (2) replicates, with NCCL_DEBUG_SUBSYS=INIT,ENV,TUNING,GRAPH (the graph
# lines and the latency/bandwidth table the calibration reads) into OUT_DIR/sweep-N (default OUT_DIR
# /tmp/nccl-tuner-calibrate-gpu). Then `nccl-tuner calibrate` of all of them writes
# OUT_DIR/calibrated.yaml and OUT_DIR/calibrate-report.txt. On one time-sliced GPU the figures show
# the pipeline working, not a cluster's constants: run the same sweeps with a real launcher per shape
# on a cluster. Needs python3 with PyTorch (NCCL 2.28+ for the constants to apply) and one CUDA GPU;
# DIST_DIR is an unpacked distribution. Exit: 0 done, 1 a run or the calibration failed, 2 cannot run
# here (one line saying why). Run it again to resume the sweeps.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/sweep_setup.sh" calibrate_gpu "${TMPDIR:-/tmp}/nccl-tuner-calibrate-gpu" "$@"
export NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,ENV,TUNING,GRAPH
sweeps=()
t0=$SECONDS
for n in ${CALIBRATE_GPU_RANKS:-2 3}; do
  CALIBRATE_GPU_NRANKS=$n "$DIST/bin/nccl-tuner" sweep -o "$OUT/sweep-$n" --collectives all_reduce \
    --algorithms TREE,RING --protocols LL,LL128,SIMPLE --binary "$HERE/calibrate_gpu_driver.sh" \
    --plugin "$DIST/lib/libnccl-tuner-java.so" -b 4 -e 64M -f 2 -g 1 -n "${SWEEP_GPU_ITERS:-10}" \
    -w "${SWEEP_GPU_WARMUP:-3}" --replicates "${CALIBRATE_GPU_REPLICATES:-2}" --seed "${SWEEP_GPU_SEED:-1}" \
    --timeout 150 || exit 1
  sweeps+=("$OUT/sweep-$n")
done
"$DIST/bin/nccl-tuner" calibrate "${sweeps[@]}" -o "$OUT/calibrated.yaml" >"$OUT/calibrate-report.txt" || {
  cat "$OUT/calibrate-report.txt"; exit 1; }
cat "$OUT/calibrate-report.txt"
echo "calibrate_gpu: done in $((SECONDS - t0)) s; policy $OUT/calibrated.yaml"
