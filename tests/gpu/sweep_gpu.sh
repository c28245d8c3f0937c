#!/usr/bin/env bash
# Forced-candidate sweep on one GPU with PyTorch (two ranks on GPU 0, nRanks=2 nNodes=2), through
# the plugin's force mode, ready for `nccl-tuner compile`:
#   tests/gpu/sweep_gpu.sh DIST_DIR [OUT_DIR]
# Runs `nccl-tuner sweep` three times (one directory each under OUT_DIR, default
# /tmp/nccl-tuner-sweep-gpu): AllReduce with TREE, RING x LL, LL128, SIMPLE; AllGather and
# ReduceScatter with RING x LL, LL128, SIMPLE and PAT/SIMPLE; each plus NCCL's own pick, 4 B .. 64 MiB
# by 4x, SWEEP_GPU_REPLICATES (3) replicates, seed SWEEP_GPU_SEED (1). Then compiles the three
# into OUT_DIR/policy.yaml. About 50 runs of ~5 s: under 8 minutes on an H200. Run it again to
# resume. Needs python3 with PyTorch (NCCL 2.22+) and one CUDA GPU; DIST_DIR is an unpacked
# distribution (bin/nccl-tuner, lib/, runtime/). Exit: 0 done, 1 a run or compile failed,
# 2 cannot run here (one line saying why).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/sweep_setup.sh" sweep_gpu "${TMPDIR:-/tmp}/nccl-tuner-sweep-gpu" "$@"
common=(--binary "$HERE/sweep_gpu_driver.sh" --plugin "$DIST/lib/libnccl-tuner-java.so" -b 4 -e 64M -f 4 -g 1
        -n "${SWEEP_GPU_ITERS:-10}" -w "${SWEEP_GPU_WARMUP:-3}" --replicates "${SWEEP_GPU_REPLICATES:-3}"
        --seed "${SWEEP_GPU_SEED:-1}" --timeout 150)
t0=$SECONDS
"$DIST/bin/nccl-tuner" sweep -o "$OUT/all_reduce" --collectives all_reduce --algorithms TREE,RING \
  --protocols LL,LL128,SIMPLE "${common[@]}" || exit 1
for c in all_gather reduce_scatter; do
  "$DIST/bin/nccl-tuner" sweep -o "$OUT/$c" --collectives $c --algorithms RING --protocols LL,LL128,SIMPLE \
    --candidate PAT/SIMPLE "${common[@]}" || exit 1
done
"$DIST/bin/nccl-tuner" compile "$OUT/all_reduce" "$OUT/all_gather" "$OUT/reduce_scatter" \
  -o "$OUT/policy.yaml" --name gpu-sweep || exit 1
echo "sweep_gpu: done in $((SECONDS - t0)) s; policy $OUT/policy.yaml"
