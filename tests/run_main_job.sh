#!/usr/bin/env bash
# The main job (`make run`): replays the tuner calls captured from NCCL 2.28.9 under PyTorch DDP,
# FSDP, tensor-parallel decode and a coalesced group (tests/traces/) through the built
# libnccl-tuner-java.so, loaded by the host harness exactly as NCCL loads a tuner, in enforce
# mode and in shadow mode. Full outputs go to build/run/.
set -euo pipefail
export JAVA_HOME="${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}"
repo="$(cd "$(dirname "$0")/.." && pwd)"
build="$repo/build"
out="$build/run"
mkdir -p "$out"
rm -f "$out"/*.jsonl
harness="$build/tests/harness"
plugin="$build/lib/libnccl-tuner-java.so"
policy="${POLICY:-$repo/policies/h200-2rank.yaml}"
export NCCL_DEBUG=INFO

show() { # trace mode policy
  local trace=$1 mode=$2 pol=$3 name log
  name=$(basename "$trace" .csv)
  log="$out/$name.$mode.log"
  NCCL_TUNER_JAVA_POLICY="$pol" NCCL_TUNER_JAVA_MODE="$mode" \
  NCCL_TUNER_JAVA_LOG="$out/$name.$mode.%p.jsonl" \
    "$harness" --plugin "$plugin" --trace "$trace" >"$log" 2>&1
  echo "== ${name#trace_} / $mode / $(basename "$pol")"
  grep -E 'TUNER/Java' "$log" | sed -E 's/^[^ ]+ \[[0-9]+\] NCCL (INFO|WARN) /  \1 /'
  # Each distinct (collective, size, pick) once, in order of first appearance.
  grep -E ' Bytes -> ' "$log" | awk '!seen[$0]++' | head -n 12 | sed 's/^/  /'
  local distinct
  distinct=$(grep -E ' Bytes -> ' "$log" | sort -u | wc -l)
  [ "$distinct" -gt 12 ] && echo "  ... ($distinct distinct lines; all in $log)"
  # us_per_call is the harness's mean over this trace's few hundred calls in a fresh process: mostly the
  # JVM's interpreter and JIT warm-up on the first calls. Shown as such; the steady-state per-call cost
  # is what `make bench` measures (docs/dev/benchmarks.md).
  grep -E '^harness:' "$log" | sed -E 's/ us_per_call=([0-9.]+)/ mean_us_per_call=\1 (fresh JVM, warm-up included)/; s/^/  /'
}

echo "nccl-tuner-java main job: traces from NCCL 2.28.9, 2 ranks on one H200 (nRanks=2 nNodes=2)"
echo "policy: $policy"
echo "(mean_us_per_call: getCollInfo's mean over one trace in a fresh process, JVM warm-up included;"
echo " the steady-state cost per call is in make bench: about 40-55 ns, docs/dev/benchmarks.md)"
for t in ddp fsdp tp_infer coalesced; do
  show "$repo/tests/traces/trace_$t.csv" enforce "$policy"
  show "$repo/tests/traces/trace_$t.csv" shadow "$policy"
done
show "$repo/tests/traces/trace_fsdp.csv" enforce "$repo/policies/channel-override.yaml"
# Every NCCL era: the same trace and policy, loaded as that NCCL loads a tuner (its symbol order,
# its core's adaptation of older versions); which version each chose, and the same decisions.
echo "== NCCL eras: tp_infer with $(basename "$policy"), the plugin loaded as each NCCL release does"
ref=""
for era in 2.22 2.24 2.28 2.30 2.32.6; do
  log="$out/trace_tp_infer.era-$era.log"
  NCCL_TUNER_JAVA_POLICY="$policy" "$harness" --nccl-era "$era" --plugin "$plugin" \
    --trace "$repo/tests/traces/trace_tp_infer.csv" >"$log" 2>&1
  picks=$(grep -E ' Bytes -> ' "$log" | sed 's/ \[changed\]//' | md5sum | cut -c1-12)
  [ -z "$ref" ] && ref=$picks
  printf '  NCCL %-6s %s; %s; decisions %s%s\n' "$era" \
    "$(grep -E 'TUNER/Plugin: Using' "$log" | sed 's/TUNER\/Plugin: //')" \
    "$(grep -E '^harness: calls=' "$log" | sed -E 's/^harness: (calls=[0-9]+ changed=[0-9]+).*/\1/')" \
    "$picks" "$([ "$picks" = "$ref" ] && echo " (same as 2.22)" || echo " (DIFFERENT from 2.22)")"
done
echo "== shadow decision logs (JSON lines): $(cat "$out"/*.shadow.*.jsonl 2>/dev/null | wc -l) records in $out"
head -n 2 "$(ls "$out"/trace_ddp.shadow.*.jsonl | head -1)" | sed 's/^/  /'
echo "== nccl-tuner report: the shadow logs of the four traces (each counts as a rank here), priced with the measured sweep"
"$JAVA_HOME/bin/java" -jar "$build/lib/nccl-tuner-tools.jar" report "$out"/trace_*.shadow.*.jsonl \
  --measurements "$repo/java-tools/src/test/resources/compile/h200-2rank-sweep_allreduce.rep1.csv" \
  --html "$out/shadow-report.html" | sed 's/^/  /'

# Offline: measurements -> regret-ranked policy -> the plugin runs it. --mode enforce: the shipped
# policies/h200-2rank-measured.yaml is in enforce mode (compile's default is shadow), and explain below
# shows what it changes.
echo "== nccl-tuner compile: the measured AllReduce sweep of this testbed (NCCL 2.28.9) into a policy"
"$JAVA_HOME/bin/java" -jar "$build/lib/nccl-tuner-tools.jar" compile \
  "$repo/java-tools/src/test/resources/compile/h200-2rank-sweep_allreduce.rep1.csv" \
  --nccl-log "$repo/tests/traces/nccl_sweep.rank0.log" --workload "$repo/tests/traces/trace_tp_infer.csv" \
  --name h200-2rank-measured --mode enforce -o "$out/h200-2rank-measured.yaml" --html "$out/h200-2rank-measured.html" \
  | sed 's/^/  /'
show "$repo/tests/traces/trace_tp_infer.csv" enforce "$out/h200-2rank-measured.yaml"
echo "== nccl-tuner explain: NCCL's cost model from its own log, and what the compiled policy changes"
"$JAVA_HOME/bin/java" -jar "$build/lib/nccl-tuner-tools.jar" explain --log "$repo/tests/traces/nccl_sweep.rank0.log" \
  --policy "$out/h200-2rank-measured.yaml" --collective AllReduce --sizes 4B,1KiB,16KiB,1MiB,32MiB,64MiB \
  --trace "$repo/tests/traces/trace_sweep.csv" | sed 's/^/  /'

echo "== measure -> compile -> enforce on the simulated cluster (tests/simcluster; docs/measure.md)"
python3 "$repo/tests/simcluster/loop.py" --short --keep "$out/simcluster-loop" | sed 's/^/  /'
