#!/usr/bin/env bash
# run_bench.sh -- `make bench` (make/bench.mk builds everything first and sets the paths below).
# Runs bench_driver over the captured traces for the no-op plugin, the C reference and the Java
# plugin (enforce, shadow, no rules, 1/100/10,000 rules, 8 threads), the start-up runs, JMH, and
# prints one table with the 1-minute load average next to every figure. docs/dev/benchmarks.md
# explains each figure. Raw outputs: $BENCH_DIR/raw/; the table: $BENCH_DIR/results.txt.
# Exit status: 0, or 1 if the C reference and the Java plugin disagree on a decision (the figures
# are printed either way; missed targets are reported, they do not fail the run).
set -euo pipefail
export LC_ALL=C

: "${REPO:?}" "${BENCH_DIR:?}" "${BENCH_DRIVER:?}" "${BENCH_CREF:?}" "${SHIM_SO:?}" "${HARNESS_NOOP:?}"
: "${BENCH_JMH_JAR:?}" "${BENCH_AOT_DIR:?}" "${JAVA_HOME:?}"
CALLS=${BENCH_CALLS:-10000000}
WARMUP=${BENCH_WARMUP:-1000000}
WARMUP_MS=${BENCH_WARMUP_MS:-1000}
MT_CALLS=${BENCH_MT_CALLS:-2000000}
STARTS=${BENCH_STARTS:-10}
INITS=${BENCH_INITS:-512}
CYCLES=${BENCH_CYCLES:-31000}
REPEATS=${BENCH_REPEATS:-3}
FRESH=${BENCH_FRESH:-20}
FRESH_CALLS=${BENCH_FRESH_CALLS:-2000000}
JMH=${BENCH_JMH:-1}
JMH_ARGS=${BENCH_JMH_ARGS:-}
DIST_DIR=${DIST_DIR:-}

# Nothing from the caller's environment may change what the plugin does.
unset NCCL_TUNER_JAVA_POLICY NCCL_TUNER_JAVA_MODE NCCL_TUNER_JAVA_LOG NCCL_TUNER_JAVA_LOG_QUEUE \
      NCCL_TUNER_JAVA_OPTS NCCL_TUNER_JAVA_CLASSPATH NCCL_TUNER_JAVA_HOME NCCL_TUNER_CONFIG_FILE \
      NCCL_TUNER_PLUGIN NCCL_TUNER_REF_TABLE NCCL_DEBUG
export JAVA_HOME

RAW=$BENCH_DIR/raw
rm -rf "$RAW"
mkdir -p "$RAW"
POL=$BENCH_DIR/policies
TAB=$BENCH_DIR/tables
H200=$REPO/policies/h200-2rank.yaml
mapfile -t TRACES < <(ls "$REPO"/tests/traces/trace_*.csv)
OUT=$BENCH_DIR/results.txt
: >"$OUT"
FAIL=0

say() { printf '%s\n' "$*" | tee -a "$OUT"; }
load1() { cut -d' ' -f1 /proc/loadavg; }
progress() { printf '  .. %s (load %s)\n' "$*" "$(load1)" >&2; }
# kv FILE LINE KEY: value of KEY= on the "bench: LINE ..." line of a driver output
kv() { grep -E "^bench: $2 " "$1" | head -1 | grep -oE " $3=[^ ]+" | head -1 | cut -d= -f2 || true; }
median() { sort -g | awk '{v[NR]=$1} END {if (NR==0) print "-"; else if (NR%2) print v[(NR+1)/2]; else printf "%.3f\n", (v[NR/2]+v[NR/2+1])/2}'; }
minmax() { sort -g | awk 'NR==1{lo=$1} {hi=$1} END {print lo "-" hi}'; }
calc() { awk "BEGIN { printf \"%s\", $1 }"; }
f1() { awk -v v="$1" 'BEGIN { if (v == "" || v == "-") print "-"; else printf "%.1f", v }'; }

# java_env MODE POLICY [GCLOG]: the environment of a Java-plugin run
java_env() {
  local opts=""
  [ -n "${3:-}" ] && opts="-Xlog:gc,gc+heap:file=$3"
  echo "NCCL_TUNER_JAVA_MODE=$1 NCCL_TUNER_JAVA_POLICY=$2 NCCL_TUNER_JAVA_OPTS=$opts"
}

# calls NAME PLUGIN ENV... -- DRIVER-ARGS...: one per-call run; the load before it goes to NAME.load
calls() {
  local name=$1 plugin=$2
  shift 2
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  progress "$name"
  load1 >"$RAW/$name.load"
  if ! env "${envs[@]}" "$BENCH_DRIVER" --plugin "$plugin" --calls "$CALLS" --warmup "$WARMUP" --warmup-ms "$WARMUP_MS" "$@" \
       >"$RAW/$name.txt" 2>"$RAW/$name.err"; then
    echo "bench: $name: bench_driver failed (exit $?); see $RAW/$name.err" >&2
    cat "$RAW/$name.err" >&2
    exit 2
  fi
}

java_calls() { # NAME MODE POLICY DRIVER-ARGS...
  local name=$1 mode=$2 policy=$3
  shift 3
  local gc=$RAW/$name.gc.log
  calls "$name" "$SHIM_SO" NCCL_TUNER_JAVA_MODE="$mode" NCCL_TUNER_JAVA_POLICY="$policy" \
    NCCL_TUNER_JAVA_OPTS="-Xlog:gc,gc+heap:file=$gc" -- --gc-log "$gc" "$@" "${TRACES[@]}"
}

java_log_calls() { # NAME MODE POLICY LOG_CALLS(0|1): as java_calls, with a decision log at $RAW/NAME.jsonl
  local name=$1 mode=$2 policy=$3 percall=$4
  local gc=$RAW/$name.gc.log
  rm -f "$RAW/$name.jsonl"
  calls "$name" "$SHIM_SO" NCCL_TUNER_JAVA_MODE="$mode" NCCL_TUNER_JAVA_POLICY="$policy" \
    NCCL_TUNER_JAVA_LOG="$RAW/$name.jsonl" NCCL_TUNER_JAVA_LOG_CALLS="$percall" \
    NCCL_TUNER_JAVA_OPTS="-Xlog:gc,gc+heap:file=$gc" -- --gc-log "$gc" "${TRACES[@]}"
}
# logsum NAME KEY [TYPE]: sum of "KEY":N over the decision log's lines (of "type":TYPE if given)
logsum() {
  local f=$RAW/$1.jsonl
  [ -f "$f" ] || { echo 0; return; }
  if [ -n "${3:-}" ]; then grep -F "\"type\":\"$3\"" "$f"; else cat "$f"; fi \
    | grep -oE "\"$2\":[0-9]+" | cut -d: -f2 | awk '{s+=$1} END {printf "%d", s}'
}

cref_calls() { # NAME TABLE DRIVER-ARGS...
  local name=$1 table=$2
  shift 2
  calls "$name" "$BENCH_CREF" NCCL_TUNER_REF_TABLE="$table" -- "$@" "${TRACES[@]}"
}

row() { # LABEL NAME [alloc] [nobatch]: median p99 p99.9 batch-mean alloc load
  local f=$RAW/$2.txt alloc="-" batch
  batch=$(kv "$f" calls batch_mean_ns)
  [ "${3:-}" = alloc ] && alloc=$(kv "$f" after_calls alloc_bytes_per_call)
  [ "${4:-}" = nobatch ] && batch="-"
  printf '  %-48s %7s %7s %7s %7s %8s  %s\n' "$1" "$(f1 "$(kv "$f" calls median_ns)")" \
    "$(f1 "$(kv "$f" calls p99_ns)")" "$(f1 "$(kv "$f" calls p999_ns)")" \
    "$(f1 "$batch")" "$(f1 "$alloc")" "$(cat "$RAW/$2.load")" | tee -a "$OUT"
}
header() { printf '  %-48s %7s %7s %7s %7s %8s  %s\n' "" "median" "p99" "p99.9" "batch" "alloc B" "load" | tee -a "$OUT"; }

check_same() { # WHAT NAME... : all digests equal
  local what=$1 first d
  shift
  first=$(grep -oE 'digest=[0-9a-f]+' "$RAW/$1.txt" | cut -d= -f2)
  for n in "$@"; do
    d=$(grep -oE 'digest=[0-9a-f]+' "$RAW/$n.txt" | cut -d= -f2)
    if [ "$d" != "$first" ]; then
      say "  CHECK FAILED: $what: $1 digest $first, $n digest $d"
      FAIL=1
      return
    fi
  done
  say "  check: $what: same decisions on every row (digest $first)"
}

# ---- runs ---------------------------------------------------------------------------------------

START_UPTIME=$(uptime)
echo "bench: $START_UPTIME" >&2

# 1. per call, all rows of the traces
calls a_noop "$HARNESS_NOOP" -- "${TRACES[@]}"
cref_calls b_cref "$TAB/h200-2rank.table"
java_calls c_enforce enforce "$H200"
java_calls d_shadow shadow "$H200"
java_log_calls d_shadow_agg shadow "$H200" 0
java_log_calls d_shadow_calls shadow "$H200" 1
java_calls e_norules enforce "$POL/rules-0.yaml"
# (g) the bare upcall: the same shim with bench/callfloor's engine, getCollInfo's upcall stub into an
# empty static method (the per-call floor of the Java rows)
calls g_bare "$BENCH_DIR/callfloor/libnccl-tuner-java.so" -- "${TRACES[@]}"
# canary mode (issue 23 item 7): the same policy, every call's arm drawn from its index and commId
# (engine/Canary), no profiler loaded, so both arms run and nothing measures them
calls f_canary "$SHIM_SO" NCCL_TUNER_JAVA_MODE=canary NCCL_TUNER_JAVA_CANARY=0.1 NCCL_TUNER_JAVA_POLICY="$H200" \
  NCCL_TUNER_JAVA_OPTS="-Xlog:gc,gc+heap:file=$RAW/f_canary.gc.log" -- --gc-log "$RAW/f_canary.gc.log" "${TRACES[@]}"

# 1b. the per-call cost over fresh processes (issue 23 item 1): FRESH processes each of (c) enforce
# and (e) no rules, interleaved (c, e, c, e, ...), FRESH_CALLS timed calls each; each process's
# median is one sample. A process's steady state is fixed once C2 has compiled the upcall's path
# (during the warm-up), so the spread over processes is what a job sees from one start to the next.
# (b), the C reference over the same compiled table, runs in the same rotation as the control: its
# spread is the machine's own from one process to the next (vCPU placement, address layout), with
# no JVM in it. (g), the bare upcall, is the floor of the Java rows: the same shim and HotSpot's
# transition into an empty static method, the spread an upcall has on this machine with no engine.
# (f), canary, is in the rotation so that (f) - (c) is a difference of medians over processes.
for i in $(seq 1 "$FRESH"); do
  CALLS=$FRESH_CALLS java_calls "p_c.$i" enforce "$H200"
  CALLS=$FRESH_CALLS java_calls "p_e.$i" enforce "$POL/rules-0.yaml"
  CALLS=$FRESH_CALLS cref_calls "p_b.$i" "$TAB/h200-2rank.table"
  CALLS=$FRESH_CALLS calls "p_g.$i" "$BENCH_DIR/callfloor/libnccl-tuner-java.so" -- "${TRACES[@]}"
  CALLS=$FRESH_CALLS calls "p_f.$i" "$SHIM_SO" NCCL_TUNER_JAVA_MODE=canary NCCL_TUNER_JAVA_CANARY=0.1 \
    NCCL_TUNER_JAVA_POLICY="$H200" -- "${TRACES[@]}"
done

# 2. rule count, AllReduce rows: REPEATS processes per policy, interleaved so that a change of
# load hits every policy alike; the table shows the median over the repeats of each figure.
# o_mix: the same rule counts as profiles of one policy (rules-mix.yaml, one shape each), a
# communicator of each in one process, their calls timed in turns (bench_driver --shapes): the
# comparison the target is on, since it is free of the machine's spread between processes.
MIX_SHAPES=2x2,3x3,4x4,5x5,6x6
for r in $(seq 1 "$REPEATS"); do
  for n in 1 100 10000 10000-last; do
    java_calls "o_java_$n.r$r" enforce "$POL/rules-$n.yaml" --coll 4
    cref_calls "o_cref_$n.r$r" "$TAB/rules-$n.table" --coll 4
  done
  java_calls "o_mix.r$r" enforce "$POL/rules-mix.yaml" --coll 4 --shapes "$MIX_SHAPES"
done
combine() { # NAME: NAME.txt with the median over NAME.r*.txt of each per-call figure
  local name=$1 f key line="bench: calls" loads
  for key in median_ns p99_ns p999_ns batch_mean_ns; do
    line="$line $key=$(for f in "$RAW/$name".r*.txt; do kv "$f" calls "$key"; done | median)"
  done
  {
    grep -hE '^bench: (plugin=|startup|footprint)' "$RAW/$name.r1.txt"
    echo "$line"
    if grep -q alloc_bytes_per_call "$RAW/$name.r1.txt"; then
      echo "bench: after_calls alloc_bytes_per_call=$(for f in "$RAW/$name".r*.txt; do kv "$f" after_calls alloc_bytes_per_call; done | median)"
    fi
    grep -h '^bench: digest=' "$RAW/$name.r1.txt"
  } >"$RAW/$name.txt"
  loads=$(cat "$RAW/$name".r*.load | minmax)
  [ "${loads%-*}" = "${loads#*-}" ] && loads=${loads%-*}
  echo "$loads" >"$RAW/$name.load"
}
for n in 1 100 10000 10000-last; do
  combine "o_java_$n"
  combine "o_cref_$n"
done

# 3. eight threads, each on its own communicator
CALLS_SAVED=$CALLS
CALLS=$MT_CALLS
java_calls t_java enforce "$H200" --threads 8
cref_calls t_cref "$TAB/h200-2rank.table" --threads 8
CALLS=$CALLS_SAVED

# 4/5. start-up and footprint: fresh processes
startup() { # NAME LIBDIR [EXTRA-ARGS...]; POLICY= (default h200-2rank.yaml) in the environment
  local name=$1 lib=$2 i
  shift 2
  progress "start-up $name x$STARTS"
  load1 >"$RAW/start_$name.load"
  for i in $(seq 1 "$STARTS"); do
    NCCL_TUNER_JAVA_MODE=enforce NCCL_TUNER_JAVA_POLICY=${POLICY:-$H200} \
      "$BENCH_DRIVER" --plugin "$lib/libnccl-tuner-java.so" --startup-only "$@" "${TRACES[@]}" \
      >"$RAW/start_$name.$i.txt" 2>&1 || { cat "$RAW/start_$name.$i.txt" >&2; exit 2; }
  done
}
startup noaot "$(dirname "$SHIM_SO")"
# the AOT copy: the cache, and the policy's binary form beside its copy of the policy (as
# bin/nccl-tuner-aot leaves a dist tree)
POLICY=$BENCH_AOT_DIR/h200-2rank.yaml startup aot "$BENCH_AOT_DIR"
# the floor: the same shim, options and AOT-cache recipe, one upcall into an empty static method
# (bench/floor/Bootstrap.java; make/bench.mk)
startup floor "$BENCH_DIR/floor"
HAVE_DIST=0
if [ -n "$DIST_DIR" ] && [ -f "$DIST_DIR/lib/nccl-tuner-java.aot" ]; then
  HAVE_DIST=1
  POLICY=$DIST_DIR/policies/h200-2rank.yaml startup dist "$DIST_DIR/lib"
fi
# issue 23 items 5 and 6, in fresh processes interleaved (ac, ay, r1, r10k, ac, ...) so that a
# change of load hits each alike: the AOT copy with h200-2rank.yaml's compiled form beside it (ac)
# and a copy of the same YAML with none (ay, a user's own YAML); the 1-rule and the 10,000-rule
# policy, each with its compiled form (r1, r10k; make/bench.mk writes them in build/bench/compiled)
YAMLONLY=$BENCH_DIR/yamlonly
rm -rf "$YAMLONLY"
mkdir -p "$YAMLONLY"
cp "$H200" "$YAMLONLY/"
progress "start-up, compiled form vs YAML alone, 1 vs 10,000 rules, interleaved x$STARTS"
load1 >"$RAW/start_pairs.load"
for i in $(seq 1 "$STARTS"); do
  for pair in "ac:$BENCH_AOT_DIR/h200-2rank.yaml" "ay:$YAMLONLY/h200-2rank.yaml" \
              "r1:$BENCH_DIR/compiled/rules-1.yaml" "r10k:$BENCH_DIR/compiled/rules-10000.yaml"; do
    NCCL_TUNER_JAVA_MODE=enforce NCCL_TUNER_JAVA_POLICY=${pair#*:} \
      "$BENCH_DRIVER" --plugin "$BENCH_AOT_DIR/libnccl-tuner-java.so" --startup-only "${TRACES[@]}" \
      >"$RAW/start_${pair%%:*}.$i.txt" 2>&1 || { cat "$RAW/start_${pair%%:*}.$i.txt" >&2; exit 2; }
  done
done
for n in ac ay r1 r10k; do cp "$RAW/start_pairs.load" "$RAW/start_$n.load"; done
# the method-handle classes spun at the first init (LambdaForms and the linker's stubs, not from
# the AOT cache): a count, the same on any machine, for the engine (AOT copy) and the floor
spun() { # NAME LIBDIR POLICY
  NCCL_TUNER_JAVA_MODE=enforce NCCL_TUNER_JAVA_POLICY=$3 NCCL_TUNER_JAVA_OPTS="-Xlog:class+load=info:file=$RAW/classes_$1.log" \
    "$BENCH_DRIVER" --plugin "$2/libnccl-tuner-java.so" --startup-only "${TRACES[@]}" >/dev/null 2>&1 || true
  grep 'class,load' "$RAW/classes_$1.log" 2>/dev/null | grep -v 'shared objects file' \
    | grep -c '__JVM_LookupDefineClass__\|\$\$TypeSwitch' || true
}
SPUN_AOT=$(spun aot "$BENCH_AOT_DIR" "$BENCH_AOT_DIR/h200-2rank.yaml")
SPUN_FLOOR=$(spun floor "$BENCH_DIR/floor" "$H200")
progress "$INITS further inits"
load1 >"$RAW/inits.load"
NCCL_TUNER_JAVA_MODE=enforce NCCL_TUNER_JAVA_POLICY=$H200 "$BENCH_DRIVER" \
  --plugin "$BENCH_AOT_DIR/libnccl-tuner-java.so" --startup-only --inits "$INITS" "${TRACES[@]}" >"$RAW/inits.txt" 2>&1
# init+destroy pairs of one communicator, one getCollInfo each: resident memory after the first
# 1,000 and after all (issue 23: growth with communicators), the AOT copy, build/lib and the C
# reference (the floor: a calloc and a free)
cycles() { # NAME PLUGIN ENV...
  local name=$1 plugin=$2
  shift 2
  progress "$CYCLES init+destroy pairs ($name)"
  load1 >"$RAW/cycles_$name.load"
  env "$@" "$BENCH_DRIVER" --plugin "$plugin" --startup-only --cycles "$CYCLES" "${TRACES[@]}" \
    >"$RAW/cycles_$name.txt" 2>&1 || { cat "$RAW/cycles_$name.txt" >&2; exit 2; }
}
cycles cref "$BENCH_CREF" NCCL_TUNER_REF_TABLE="$TAB/h200-2rank.table"
cycles aot "$BENCH_AOT_DIR/libnccl-tuner-java.so" NCCL_TUNER_JAVA_MODE=enforce NCCL_TUNER_JAVA_POLICY="$BENCH_AOT_DIR/h200-2rank.yaml"
cycles noaot "$SHIM_SO" NCCL_TUNER_JAVA_MODE=enforce NCCL_TUNER_JAVA_POLICY="$H200"

# 6. JMH
if [ "$JMH" != 0 ]; then
  progress "JMH (about 90 s)"
  load1 >"$RAW/jmh.load"
  # shellcheck disable=SC2086
  "$JAVA_HOME/bin/java" -jar "$BENCH_JMH_JAR" -prof gc -rf csv -rff "$RAW/jmh.csv" \
    -jvmArgsPrepend "-Dnccltj.repo=$REPO -Dnccltj.bench.policies=$POL" $JMH_ARGS >"$RAW/jmh.txt" 2>&1 \
    || { tail -40 "$RAW/jmh.txt" >&2; exit 2; }
  load1 >"$RAW/jmh.load.end"
fi

# 7. nccl-tuner report over 4,096 synthetic canary rank logs, against a bare line count of the same
#    files (io.nccltuner.jmh.ReportBench; TOOLS_CP: the tools and engine jars)
if [ -n "${TOOLS_CP:-}" ]; then
  progress "report over 4,096 rank logs (about 30 s)"
  load1 >"$RAW/report.load"
  "$JAVA_HOME/bin/java" -cp "$BENCH_JMH_JAR" io.nccltuner.jmh.ReportBench "$TOOLS_CP" >"$RAW/report.txt" 2>&1 \
    || { tail -20 "$RAW/report.txt" >&2; exit 2; }
fi
END_UPTIME=$(uptime)

# ---- the table -----------------------------------------------------------------------------------

col() { # per-start values of KEY on LINE
  local name=$1 line=$2 key=$3 f
  for f in "$RAW"/start_"$name".*.txt; do kv "$f" "$line" "$key"; done
}
jmh() { # BENCHMARK[:SECONDARY] -> score
  [ -f "$RAW/jmh.csv" ] || { echo "-"; return; }
  awk -F, -v b="\"io.nccltuner.jmh.$1\"" '$1 == b { gsub(/"/, "", $5); print $5; exit }' "$RAW/jmh.csv"
}

ROWS=$(grep -oE ' rows=[0-9]+' "$RAW/c_enforce.txt" | cut -d= -f2)
AR_ROWS=$(grep -oE ' rows=[0-9]+' "$RAW/o_java_1.txt" | cut -d= -f2)
say "nccl-tuner-java bench: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(date -u '+%Y-%m-%d %H:%M UTC')"
say "load at start: $START_UPTIME"
say "load at end:   $END_UPTIME"
say "(load = 1-minute load average just before each run; ns are per call, timer overhead $(f1 "$(kv "$RAW/c_enforce.txt" calls timer_overhead_ns)") ns subtracted,"
say " TSC step $(kv "$RAW/c_enforce.txt" calls tsc_step_ticks) ticks at $(kv "$RAW/c_enforce.txt" calls tsc_ghz) GHz; batch = mean from batches of 1000 calls; alloc = JVM bytes per call in situ)"
say ""
say "1. per call: $ROWS get rows of tests/traces, $CALLS timed calls after $WARMUP warm-up calls (and >= $WARMUP_MS ms), 1 thread"
header
row "(a) no-op C plugin" a_noop
row "(b) C reference lookup (same compiled table)" b_cref
row "(c) Java, enforce, h200-2rank.yaml (3 rules)" c_enforce alloc
row "(d) Java, shadow, same policy" d_shadow alloc
row "(d2) Java, shadow + decision log (aggregated)" d_shadow_agg alloc
row "(d3) Java, shadow + per-call records (LOG_CALLS=1)" d_shadow_calls alloc
row "(e) Java, policy with no rules (upcall alone)" e_norules alloc
row "(f) Java, canary 0.1, same policy (no profiler)" f_canary alloc
row "(g) bare upcall: the shim, HotSpot's, an empty method" g_bare
C_MED=$(kv "$RAW/c_enforce.txt" calls median_ns)
B_MED=$(kv "$RAW/b_cref.txt" calls median_ns)
E_MED=$(kv "$RAW/e_norules.txt" calls median_ns)
C_P99=$(kv "$RAW/c_enforce.txt" calls p99_ns)
C_ALLOC=$(kv "$RAW/c_enforce.txt" after_calls alloc_bytes_per_call)
C_BOUND=$(kv "$RAW/c_enforce.txt" after_calls alloc_bound_bytes_per_call)
say "  ratios (medians): c/b = $(calc "$C_MED / $B_MED" | awk '{ printf "%.2f", $1 }')   c/e = $(calc "$C_MED / $E_MED" | awk '{ printf "%.2f", $1 }')"
check_same "(b) C reference vs (c) Java enforce" b_cref c_enforce
check_same "(a) no-op, (d), (d2), (d3) shadow, (e) no rules change nothing" a_noop d_shadow d_shadow_agg d_shadow_calls e_norules
D_MED=$(kv "$RAW/d_shadow.txt" calls median_ns)
D2_MED=$(kv "$RAW/d_shadow_agg.txt" calls median_ns)
F_MED=$(kv "$RAW/f_canary.txt" calls median_ns)
say "  canary - enforce (medians): (f) - (c) = $(calc "$F_MED - $C_MED" | awk '{ printf "%.1f", $1 }') ns (one process each; the target is on the medians over 1b's processes)"
say "  shadow - enforce (medians): (d) - (c) = $(calc "$D_MED - $C_MED" | awk '{ printf "%.1f", $1 }') ns," \
    "(d2) - (c) = $(calc "$D2_MED - $C_MED" | awk '{ printf "%.1f", $1 }') ns (target: <= 10 ns)"
AGG_HITS=$(logsum d_shadow_agg ruleHits comm)
AGG_COUNT=$(logsum d_shadow_agg count aggregate)
AGG_UN=$(logsum d_shadow_agg unaggregated comm)
AGG_LOST=$((AGG_HITS - AGG_COUNT - AGG_UN))
say "  (d2) decision log: rule hits $AGG_HITS, counted in $(grep -cF '"type":"aggregate"' "$RAW/d_shadow_agg.jsonl" 2>/dev/null || echo 0) aggregate lines $AGG_COUNT, unaggregated $AGG_UN: dropped $AGG_LOST"
[ "$AGG_HITS" -gt 0 ] && [ "$AGG_LOST" -eq 0 ] && [ "$AGG_UN" -eq 0 ] || { say "  CHECK FAILED: (d2) aggregates do not account for every rule hit"; FAIL=1; }
CALLS_HITS=$(logsum d_shadow_calls ruleHits comm)
CALLS_LINES=$(grep -cvF '"type":' "$RAW/d_shadow_calls.jsonl" 2>/dev/null || echo 0)
say "  (d3) per-call records: $CALLS_LINES of $CALLS_HITS rule hits written ($(calc "100 * ($CALLS_HITS - $CALLS_LINES) / $CALLS_HITS" | awk '{ printf "%.1f", $1 }')% dropped; the aggregates still count all $(logsum d_shadow_calls count aggregate))"
say ""
say "1b. per call over $FRESH fresh processes each of (c), (e), (f), the bare upcall (g) and the C reference (b),"
say "   interleaved ($FRESH_CALLS timed calls each); one median per process (ns); (g) is the floor: an upcall's"
say "   own spread between processes on this machine; (b) the control with no JVM (its medians sit on the"
say "   TSC's step, so its batch figure is shown too); p10 = 10th percentile of a process's batch means"
# fresh_key NAME KEY: KEY of each fresh process of NAME; fresh_meds NAME: their medians
fresh_key() { for i in $(seq 1 "$FRESH"); do kv "$RAW/p_$1.$i.txt" calls "$2"; done; }
fresh_meds() { fresh_key "$1" median_ns; }
# spread FMT: "min X, median Y, max Z" of the numbers on stdin, each printed with FMT (median as median() takes it)
spread() {
  local v
  v=$(sort -g)
  printf "min $1, median $1, max $1" "$(head -1 <<<"$v")" "$(median <<<"$v")" "$(tail -1 <<<"$v")"
}
A_MED=$(kv "$RAW/a_noop.txt" calls median_ns)
ratio_of() { local v; v=$(sort -g); calc "$(tail -1 <<<"$v") / $(head -1 <<<"$v")" | awk '{ printf "%.3f", $1 }'; }
G_SPREAD=$(fresh_meds g | ratio_of)
G_TARGET=$(calc "1.15 * $G_SPREAD" | awk '{ printf "%.2f", $1 }')
for w in c e f g b; do
  M=$(fresh_meds "$w" | sort -g)
  target="(target: <= 1.15 x (g)'s = ${G_TARGET}x)"
  [ "$w" = g ] && target="(the floor)"
  [ "$w" = b ] && target="(control)"
  say "  ($w): $(spread %.1f <<<"$M"); slowest/fastest $(ratio_of <<<"$M" | awk '{ printf "%.2f", $1 }')x" \
      "$target; p10 $(fresh_key "$w" batch_p10_ns | ratio_of | awk '{ printf "%.2f", $1 }')x   load $(cat "$RAW/p_$w.1.load")-$(cat "$RAW/p_$w.$FRESH.load")"
done
C_FRESH=$(fresh_meds c | median); E_FRESH=$(fresh_meds e | median); F_FRESH=$(fresh_meds f | median)
G_FRESH=$(fresh_meds g | median)
C_SPREAD=$(fresh_meds c | ratio_of); E_SPREAD=$(fresh_meds e | ratio_of)
say "  medians over the processes: (c) $(f1 "$C_FRESH"), (e) $(f1 "$E_FRESH"), (f) $(f1 "$F_FRESH"), (g) $(f1 "$G_FRESH") ns;" \
    "(c) - (g) = $(calc "$C_FRESH - $G_FRESH" | awk '{ printf "%.1f", $1 }') ns, (f) - (c) = $(calc "$F_FRESH - $C_FRESH" | awk '{ printf "%.1f", $1 }') ns"
# (c_i - a) / (e_i - a) over the interleaved pairs: the engine's work over the upcall, pair by pair
PAIRS=$(for i in $(seq 1 "$FRESH"); do
  echo "$(kv "$RAW/p_c.$i.txt" calls median_ns) $(kv "$RAW/p_e.$i.txt" calls median_ns)"
done | awk -v a="$A_MED" '{r = ($1 - a) / ($2 - a); printf "%.2f\n", r}')
say "  ((c) - (a)) / ((e) - (a)) per interleaved pair, (a) = $(f1 "$A_MED") ns: $(spread %.2f <<<"$PAIRS")" \
    "(adjacent processes; the target is on one process: section 2)"
say ""
say "2. rule count: (c) on the $AR_ROWS AllReduce rows, every policy making the same decision on every call;"
say "   median over $REPEATS processes per policy, run interleaved (load: min-max over them)"
header
compiled() { grep -m1 -F "/rules-$1.yaml:" "$POL.txt" 2>/dev/null | sed -E 's/.* ([0-9]+) compiled.*/\1/' || true; }
row "Java, 1 rule" o_java_1 alloc
row "Java, 100 rules" o_java_100 alloc
row "Java, 10,000 rules ($(compiled 10000) in the matched profile)" o_java_10000 alloc
row "Java, 10,000 rules, match at chain end" o_java_10000-last alloc
row "C reference, 1 rule" o_cref_1
row "C reference, 100 rules" o_cref_100
row "C reference, 10,000 rules" o_cref_10000
row "C reference, 10,000 rules, match at chain end" o_cref_10000-last
O_MEDS=$(for n in 1 100 10000; do kv "$RAW/o_java_$n.txt" calls median_ns; done)
O_SEP_SPREAD=$(echo "$O_MEDS" | sort -g | awk 'NR==1{lo=$1} {hi=$1} END {printf "%.1f", (hi-lo)/lo*100}')
say "  spread of the Java medians over 1, 100, 10,000 rules, separate processes: $O_SEP_SPREAD% of the smallest"
say "  in one process (rules-mix.yaml, a communicator per profile, turns of 1000 calls), median over $REPEATS processes:"
# mixkv NRANKS KEY: the median over the o_mix runs of KEY on the line of the communicator of NRANKS
mixkv() { for f in "$RAW"/o_mix.r*.txt; do kv "$f" "shape nRanks=$1" "$2"; done | median; }
mixrow() { # LABEL NRANKS
  printf '  %-48s %7s %7s %7s\n' "$1" "$(f1 "$(mixkv "$2" median_ns)")" "$(f1 "$(mixkv "$2" p99_ns)")" \
    "$(f1 "$(mixkv "$2" p999_ns)")" | tee -a "$OUT"
}
mixrow "Java, 1 rule (nRanks 2)" 2
mixrow "Java, 100 rules (nRanks 3)" 3
mixrow "Java, 4,960 rules (nRanks 4)" 4
mixrow "Java, 4,960 rules, match at chain end (nRanks 5)" 5
mixrow "Java, no rules (nRanks 6: the upcall alone)" 6
O_MIX_MEDS=$(for n in 2 3 4; do mixkv "$n" median_ns; done)
O_SPREAD=$(echo "$O_MIX_MEDS" | sort -g | awk 'NR==1{lo=$1} {hi=$1} END {printf "%.1f", (hi-lo)/lo*100}')
say "  spread of the Java medians over 1, 100, 4,960 rules in one process: $O_SPREAD% of the smallest"
# item 1's "(c) - (a) within 1.2x of (e) - (a) in every process", in one process: the 1-rule
# communicator's median over the no-op against the no-rules one's, in each o_mix process
O_PAIRS=$(for f in "$RAW"/o_mix.r*.txt; do
  r1=$(kv "$f" "shape nRanks=2" median_ns)
  r0=$(kv "$f" "shape nRanks=6" median_ns)
  calc "($r1 - $A_MED) / ($r0 - $A_MED)"
  echo
done)
O_PAIR_MAX=$(sort -g <<<"$O_PAIRS" | tail -1)
say "  (1 rule - (a)) / (no rules - (a)), each of the $REPEATS processes: $(sort -g <<<"$O_PAIRS" | awk '{ printf "%s%.2f", (NR > 1 ? ", " : ""), $1 }') (target: max <= 1.2)"
mapfile -t O_RUNS < <(cd "$RAW" && ls o_java_*.r*.txt o_cref_*.r*.txt | sed 's/\.txt$//')
check_same "rule-count policies, Java and C, all decide alike" "${O_RUNS[@]}"
O_FIRST=$(grep -oE 'digest=[0-9a-f]+' "$RAW/o_java_1.r1.txt" | cut -d= -f2)
O_MIX_BAD=$(for f in "$RAW"/o_mix.r*.txt; do grep -E '^bench: shape nRanks=[2345] ' "$f"; done | grep -vc "digest=$O_FIRST" || true)
if [ "$O_MIX_BAD" = 0 ] && [ -n "$O_FIRST" ]; then
  say "  check: rules-mix.yaml's four rule-count communicators decide as the policies above (digest $O_FIRST)"
else
  say "  CHECK FAILED: rules-mix.yaml: $O_MIX_BAD communicator lines decide otherwise than rules-1.yaml ($O_FIRST)"
  FAIL=1
fi
say ""
say "3. eight threads at once, each on its own communicator ($MT_CALLS timed calls each, $(nproc) cores)"
header
row "Java enforce, 8 threads" t_java alloc nobatch
row "C reference, 8 threads" t_cref "" nobatch
say "  (batch means are left out here: with 8 threads on $(nproc) cores they include time spent descheduled)"
say ""
say "4. start-up (fresh process, JVM creation to first decision; median of $STARTS, min-max; CPU = user+sys of"
say "   the whole process over the same span, median: the load-independent figure)"
startrow() { # LABEL NAME
  local med p2 inits
  med=$(col "$2" startup first_decision_ms | median)
  p2=$(col "$2" startup process_to_first_decision_ms | median)
  printf '  %-48s %7s ms  (%s)  process start to first decision %s ms  CPU %s ms  load %s\n' "$1" "$(f1 "$med")" \
    "$(col "$2" startup first_decision_ms | minmax | awk -F- '{printf "%.0f-%.0f", $1, $2}')" "$(f1 "$p2")" \
    "$(f1 "$(col "$2" startup cpu_ms | median)")" "$(cat "$RAW/start_$2.load")" | tee -a "$OUT"
}
startrow "first init, build/lib, no AOT cache" noaot
startrow "first init, with AOT cache (build/bench/aot)" aot
startrow "floor: JVM + one empty upcall, AOT cache" floor
say "  classes spun at the first init (method handles, not from the AOT cache): engine $SPUN_AOT, floor $SPUN_FLOOR"
[ "$HAVE_DIST" = 1 ] && startrow "first init, dist tree (jlinked runtime + AOT)" dist
startrow "first init, AOT, h200-2rank + compiled form (ac)" ac
startrow "first init, AOT, the same YAML alone (ay)" ay
startrow "first init, AOT, 1-rule policy + compiled (r1)" r1
startrow "first init, AOT, 10,000 rules + compiled (r10k)" r10k
AC_CPU=$(col ac startup cpu_ms | median); AY_CPU=$(col ay startup cpu_ms | median)
AC_MED=$(col ac startup first_decision_ms | median); AY_MED=$(col ay startup first_decision_ms | median)
R1_CPU=$(col r1 startup cpu_ms | median); R10K_CPU=$(col r10k startup cpu_ms | median)
R1_MED=$(col r1 startup first_decision_ms | median); R10K_MED=$(col r10k startup first_decision_ms | median)
R1_RSS=$(col r1 footprint added_rss_mb | median); R10K_RSS=$(col r10k footprint added_rss_mb | median)
say "  (ac, ay, r1, r10k: $STARTS fresh processes each, interleaved) YAML alone / compiled form: wall $(calc "$AY_MED / $AC_MED" | awk '{ printf "%.2f", $1 }')x," \
    "CPU $(calc "$AY_CPU / $AC_CPU" | awk '{ printf "%.2f", $1 }')x (target 1.3x); 10,000 / 1 rule: wall $(calc "$R10K_MED / $R1_MED" | awk '{ printf "%.2f", $1 }')x," \
    "CPU $(calc "$R10K_CPU / $R1_CPU" | awk '{ printf "%.2f", $1 }')x (target 2x)"
say "  resident memory added: 1 rule $(f1 "$R1_RSS") MiB, 10,000 rules $(f1 "$R10K_RSS") MiB:" \
    "$(calc "($R10K_RSS - $R1_RSS) / 9.999" | awk '{ printf "%.2f", $1 }') MiB per 1,000 rules"
printf '  %-48s %7s ms  (1 process, from the rule-count run)  load %s\n' "first init, 10,000-rule policy, no AOT cache" \
  "$(f1 "$(kv "$RAW/o_java_10000.txt" startup first_decision_ms)")" "$(cat "$RAW/o_java_10000.r1.load")" | tee -a "$OUT"
INIT_MED=$(kv "$RAW/inits.txt" inits median_us)
printf '  %-48s %7s us  (p99 %s us, max %s us)  load %s\n' "each further init ($INITS in one process)" \
  "$INIT_MED" "$(kv "$RAW/inits.txt" inits p99_us)" "$(kv "$RAW/inits.txt" inits max_us)" "$(cat "$RAW/inits.load")" | tee -a "$OUT"
INIT_P99=$(kv "$RAW/inits.txt" inits p99_us)
# steps NAME: what pairs 1k..11k, 11k..21k, ... each added (bench_driver's cycles_steps)
steps() { kv "$RAW/cycles_$1.txt" cycles_steps added_mb; }
for n in aot noaot cref; do
  label="init+destroy pair, $n ($CYCLES, one call each)"
  [ $n = cref ] && label="init+destroy pair, C reference (the floor)"
  printf '  %-48s %7s us  (p99 %s us)  resident added, each 10,000 pairs after the first %s: %s MiB  load %s\n' "$label" \
    "$(kv "$RAW/cycles_$n.txt" cycles median_us)" "$(kv "$RAW/cycles_$n.txt" cycles p99_us)" \
    "$(kv "$RAW/cycles_$n.txt" cycles warm)" "$(steps "$n" | sed 's/,/, /g')" \
    "$(cat "$RAW/cycles_$n.load")" | tee -a "$OUT"
done
say "  (the first 10,000 after the first 1,000 are the target's; the JIT's warm-up of the init/destroy path can reach"
say "   into them; growth per communicator would go on to the last)"
CYC_AOT=$(steps aot | cut -d, -f1)
CYC_NOAOT=$(steps noaot | cut -d, -f1)
CYC_FLOOR=$(steps cref | cut -d, -f1)
CYC_AOT_LATE=$(steps aot | tr ',' '\n' | tail -1)
CYC_NOAOT_LATE=$(steps noaot | tr ',' '\n' | tail -1)
say ""
say "5. footprint after first init (median of $STARTS processes)"
for n in noaot aot; do
  printf '  %-48s %7s MiB resident, +%s threads\n' "added by the plugin ($n)" \
    "$(f1 "$(col $n footprint added_rss_mb | median)")" "$(col $n footprint added_threads | median | awk '{ printf "%.0f", $1 }')" | tee -a "$OUT"
done
say "  threads after the first init (aot): $(kv "$RAW/start_aot.1.txt" threads after_first_init)"
printf '  %-48s %7s MiB resident, +%s threads (1 process)\n' "added with the 10,000-rule policy (noaot)" \
  "$(kv "$RAW/o_java_10000.txt" footprint added_rss_mb)" "$(kv "$RAW/o_java_10000.txt" footprint added_threads)" | tee -a "$OUT"
printf '  %-48s %7s MiB resident (driver arrays excluded)\n' "after (c)'s warm-up, timed and batch calls" \
  "$(kv "$RAW/c_enforce.txt" after_calls added_rss_mb)" | tee -a "$OUT"
say ""
if [ "$JMH" != 0 ]; then
  say "6. JMH (1 fork, -prof gc; load $(cat "$RAW/jmh.load") at start, $(cat "$RAW/jmh.load.end") at end)"
  for b in find resetOnly engineGetCollInfo; do
    printf '  %-48s %7s ns/op %9s B/op\n' "LookupBenchmark.$b" "$(f1 "$(jmh "LookupBenchmark.$b")")" \
      "$(jmh "LookupBenchmark.$b:gc.alloc.rate.norm" | awk '{ printf "%.3f", $1 }')" | tee -a "$OUT"
  done
  for b in loadAndCompile compileOnly; do
    printf '  %-48s %7s ms/op %9s MB/op allocated\n' "PolicyLoadBenchmark.$b (10,000 rules)" \
      "$(f1 "$(jmh "PolicyLoadBenchmark.$b")")" \
      "$(jmh "PolicyLoadBenchmark.$b:gc.alloc.rate.norm" | awk '{ printf "%.1f", $1 / 1048576 }')" | tee -a "$OUT"
  done
  say ""
fi

# ---- the profiler's cost per collective ------------------------------------------------------------
# tests/hosts/profiler_host.c --bench: NCCL 2.28's v5 events of one 1 MiB AllReduce (host thread:
# GroupApi start/record/record, CollApi start/stop, Group start, Coll start/stop, Group stop,
# GroupApi stop; proxy thread, per channel: KernelCh start/record/stop) through the no-op
# profiler (the floor) and through this library's, each after getCollInfo through the tuner in
# canary mode (untimed); alternating batches of 64 collectives, the 10th percentile of the batches.
PROF_CALLS=${BENCH_PROF_CALLS:-500000}
PROF_HOST_ADDED=""
PROF_PROXY_ADDED=""
if [ -n "${PROFILER_HOST:-}" ] && [ -x "$PROFILER_HOST" ]; then
  progress "profiler per collective"
  say "7. profiler per collective: $PROF_CALLS collectives of 1 MiB AllReduce per arm, NCCL 2.28's v5 events,"
  say "   canary mode (h200-2rank, fraction 0.1); 10th percentile of batches of 64 (load $(load1))"
  env NCCL_TUNER_JAVA_MODE=canary NCCL_TUNER_JAVA_CANARY=0.1 NCCL_TUNER_JAVA_POLICY="$H200" \
    "$PROFILER_HOST" --bench "$PROF_CALLS" --profiler "$SHIM_SO" --tuner "$SHIM_SO" --floor "$NOOP_PROFILER" \
    --channels 8,32 >"$RAW/profiler.txt" 2>"$RAW/profiler.err" || { cat "$RAW/profiler.err" >&2; exit 2; }
  grep '^profiler bench: ' "$RAW/profiler.txt" | sed 's/^profiler bench: /  /' | tee -a "$OUT"
  pk() { grep "^profiler bench result: channels=$1 " "$RAW/profiler.txt" | grep -oE " $2=[^ ]+" | cut -d= -f2; }
  PROF_HOST_ADDED=$(printf '%s\n%s\n' "$(pk 8 hostAddedNs)" "$(pk 32 hostAddedNs)" | sort -g | tail -1)
  PROF_PROXY_ADDED=$(printf '%s\n%s\n' "$(pk 8 proxyAddedPerChannelNs)" "$(pk 32 proxyAddedPerChannelNs)" | sort -g | tail -1)
  say ""
fi

# ---- targets -------------------------------------------------------------------------------------
target() { # LABEL VALUE LIMIT UNIT
  local verdict
  verdict=$(awk -v v="$2" -v l="$3" 'BEGIN { if (v == "" || v == "-") print "n/a"; else if (v <= l) print "ok"; else printf "MISSED by %.1f (%.0f%%)", v - l, (v - l) / l * 100 }')
  printf '  %-52s %10s %-4s  limit %-8s %s\n' "$1" "$(f1 "$2")" "$4" "$3" "$verdict" | tee -a "$OUT"
}
AOT_MED=$(col aot startup first_decision_ms | median)
RSS_MED=$(col aot footprint added_rss_mb | median)
THR_MED=$(col aot footprint added_threads | median)
say "targets (2-core machine)"
target "(c) - (g) bare upcall, medians over 1b's processes" "$(calc "$C_FRESH - $G_FRESH")" 15 ns
target "(c) / (e), medians over 1b's processes" "$(calc "$C_FRESH / $E_FRESH")" 1.3 x
target "1b: (c) slowest/fastest, over (g)'s ($(f1 "$G_SPREAD")x)" "$(calc "$C_SPREAD / $G_SPREAD")" 1.15 x
target "1b: (e) slowest/fastest, over (g)'s" "$(calc "$E_SPREAD / $G_SPREAD")" 1.15 x
target "(c) p99" "$C_P99" 250 ns
target "(f) canary - (c), medians over 1b's processes" "$(calc "$F_FRESH - $C_FRESH")" 10 ns
target "(c) bytes allocated per call, in situ (+-$C_BOUND)" "$C_ALLOC" 1 B
target "rule count: spread of 1/100/4,960-rule medians, one process" "$O_SPREAD" 10 %
target "(1 rule - (a)) / (no rules - (a)), one process, the largest" "$O_PAIR_MAX" 1.2 x
FLOOR_MED=$(col floor startup first_decision_ms | median)
AOT_CPU=$(col aot startup cpu_ms | median)
FLOOR_CPU=$(col floor startup cpu_ms | median)
target "first init (AOT) / floor, wall ($(f1 "$FLOOR_MED") ms)" "$(calc "$AOT_MED / $FLOOR_MED")" 1.3 x
target "first init (AOT) / floor, CPU ($(f1 "$FLOOR_CPU") ms)" "$(calc "$AOT_CPU / $FLOOR_CPU")" 1.3 x
target "YAML alone / its compiled form, first init wall (AOT)" "$(calc "$AY_MED / $AC_MED")" 1.3 x
target "YAML alone / its compiled form, first init CPU (AOT)" "$(calc "$AY_CPU / $AC_CPU")" 1.3 x
target "10,000 / 1 rule, both compiled, first init wall (AOT)" "$(calc "$R10K_MED / $R1_MED")" 2 x
target "10,000 / 1 rule, both compiled, first init CPU (AOT)" "$(calc "$R10K_CPU / $R1_CPU")" 2 x
target "each further init, median" "$INIT_MED" 50 us
target "each further init, p99" "$INIT_P99" 200 us
# the floor: what the C reference's pairs add (limit: 0.5 MiB over it)
CYC_LIMIT=$(calc "0.5 + ${CYC_FLOOR:-0}" | awk '{ printf "%.2f", $1 }')
target "pairs 1k..11k: resident added, AOT (floor $CYC_FLOOR)" "$CYC_AOT" "$CYC_LIMIT" MiB
target "pairs 1k..11k: resident added, no AOT (floor $CYC_FLOOR)" "$CYC_NOAOT" "$CYC_LIMIT" MiB
target "pairs, the last 10,000 of ${CYCLES}: resident added, AOT" "$CYC_AOT_LATE" "$CYC_LIMIT" MiB
target "pairs, the last 10,000 of ${CYCLES}: resident added, no AOT" "$CYC_NOAOT_LATE" "$CYC_LIMIT" MiB
target "resident memory added (AOT cache)" "$RSS_MED" 40 MiB
target "threads added (AOT cache)" "$THR_MED" 8 ""
target "profiler: host side added per collective (8, 32 ch)" "$PROF_HOST_ADDED" 150 ns
target "profiler: proxy side added per channel (8, 32 ch)" "$PROF_PROXY_ADDED" 40 ns
if [ -f "$RAW/report.txt" ]; then
  say ""
  say "report over 4,096 rank logs (load $(cat "$RAW/report.load"); times exclude JVM start-up):"
  grep -E '^(bench|target): ' "$RAW/report.txt" | sed 's/^/  /' | tee -a "$OUT"
fi
say ""
say "raw outputs: $RAW; this table: $OUT"
exit "$FAIL"
