#!/usr/bin/env bash
# test_harness.sh -- builds the host harness and its test plugins into a temp dir and checks
# what they must do. Counts failures instead of stopping at the first; the last line is
#   harness-tests: N passed, M failed
# and the exit status is 0 only when M is 0. Needs bash, make, a C compiler; uses valgrind and
# nm when present.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
TMP=$(mktemp -d "${TMPDIR:-/tmp}/harness-tests.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
TRACES=("$REPO"/tests/traces/trace_*.csv)
H=$TMP/tests/harness
NOOP=$TMP/tests/libnccl-tuner-noop.so
EVIL=$TMP/tests/libnccl-tuner-evil.so
SUMMARY_RE='^harness: calls=[0-9]+ changed=[0-9]+ warn=[0-9]+ us_per_call=[0-9]+\.[0-9]{3} plugin=[^ ]+$'

passed=0 failed=0
ok()  { passed=$((passed + 1)); echo "ok   $1"; }
bad() { failed=$((failed + 1)); echo "FAIL $1"; [[ -z ${2:-} ]] || sed 's/^/     | /' <<<"$2" | tail -n 8; }
finish() { echo "harness-tests: $passed passed, $failed failed"; exit $((failed > 0)); }

# run [ENV=VALUE...] -- ARGS...: runs the harness; sets OUT (stdout+stderr) and RC.
run() {
  local envs=()
  while [[ $1 != -- ]]; do envs+=("$1"); shift; done
  shift
  RC=0
  OUT=$(env -u NCCL_TUNER_PLUGIN -u NCCL_DEBUG -u NCCL_DEBUG_FILE -u EVIL_MODE "${envs[@]}" "$H" "$@" 2>&1) || RC=$?
}
summary() { grep -E "$SUMMARY_RE" <<<"$OUT" || true; }
field() { summary | sed -n "s/.* $1=\([^ ]*\).*/\1/p"; }
gets() { grep -c '^get,' "$1"; }
# expect NAME RC [REGEX...]: the last run exited RC and its output matches every REGEX (ERE).
expect() {
  local name=$1 rc=$2; shift 2
  if [[ $RC -ne $rc ]]; then bad "$name (exit $RC, wanted $rc)" "$OUT"; return; fi
  local re
  for re in "$@"; do
    if ! grep -Eq -- "$re" <<<"$OUT"; then bad "$name (no line matching /$re/)" "$OUT"; return; fi
  done
  ok "$name"
}

# ---- build ------------------------------------------------------------------------------
if BUILD_OUT=$(make -s -C "$REPO/tests/harness" BUILD="$TMP" harness 2>&1); then
  ok "build with -std=c11 -Wall -Wextra -Werror"
else
  bad "build" "$BUILD_OUT"; finish
fi

# NCCL's selection as the C hosts apply it (tests/include/nccl_select.h): ties, -1, NaN, 3.6e9 us.
if SEL_OUT=$(${CC:-cc} -std=c11 -Wall -Wextra -Werror -I"$REPO/plugin-shim/include" -I"$REPO/tests/include" \
    -o "$TMP/nccl_select_check" "$REPO/tests/harness/nccl_select_check.c" -lm 2>&1 && "$TMP/nccl_select_check" 2>&1); then
  ok "th_nccl_pick: NCCL's strict minimum, first minimum wins a tie"
else
  bad "th_nccl_pick" "$SEL_OUT"
fi

if command -v nm >/dev/null; then
  for so in "$NOOP" "$EVIL"; do
    syms=$(nm -D --defined-only "$so" | awk '{print $3}' | grep -v '^_' | sort | tr '\n' ' ')
    if [[ $syms == "ncclTunerPlugin_v3 " ]]; then ok "${so##*/} exports only ncclTunerPlugin_v3"
    else bad "${so##*/} exports: $syms"; fi
  done
fi

# ---- noop replay of every trace, and the cross-check against NCCL's own log ----------------
total=0
for t in "${TRACES[@]}"; do
  n=$(gets "$t"); total=$((total + n)); base=${t##*/}
  run -- --plugin "$NOOP" --trace "$t"
  expect "noop $base: exit 0, summary, plugin loaded" 0 "$SUMMARY_RE" '^TUNER/Plugin: Using noop \(v3\)$'
  [[ $(field calls) == "$n" && $(field changed) == 0 && $(field warn) == 0 && $(field plugin) == noop ]] \
    && ok "noop $base: calls=$n changed=0 warn=0" || bad "noop $base: summary $(summary), wanted calls=$n" "$OUT"
  lines=$(grep -cE '^[A-Za-z]+: [0-9]+ Bytes -> Algo [A-Z_]+ proto [A-Z0-9]+ channel\{Lo\.\.Hi\}=\{NCCL decides\}$' <<<"$OUT" || true)
  [[ $lines == "$n" ]] && ok "noop $base: $n selection lines" || bad "noop $base: $lines selection lines, wanted $n"
  log=$REPO/tests/traces/nccl_${base#trace_}; log=${log%.csv}.rank0.log
  if [[ -f $log ]]; then
    cc=0; cout=$("$REPO/tests/harness/crosscheck.sh" "$H" "$NOOP" "$t" "$log" 2>&1) || cc=$?
    [[ $cc -eq 0 ]] && ok "noop $base: $(tail -n 1 <<<"$cout")" || bad "noop $base: cross-check with ${log##*/}" "$cout"
  fi
done

run -- --quiet --plugin "$NOOP" "${TRACES[@]}"
[[ $RC -eq 0 && $(field calls) == "$total" && $(wc -l <<<"$OUT") -eq 1 ]] \
  && ok "all traces in one run, --quiet: one line, calls=$total" || bad "all traces --quiet" "$OUT"

# ---- plugin misbehaviour: exit 3 with a clear ERROR --------------------------------------
DDP=$REPO/tests/traces/trace_ddp.csv
declare -A WANT=(
  [enable]='enabled unavailable candidate'
  [error]='getCollInfo returned 3 \(ncclInternalError\)'
  [channels]='set nChannels = 1000'
  [negative]='wrote negative cost -5'
  [nan]='wrote NaN'
  [overflow]='wrote past the end of the 7x3 cost table'
  [none-left]='left no selectable candidate'
  [init-error]='init\(nRanks 2, nNodes 2\) returned 3'
  [destroy-error]='destroy returned 3'
)
for mode in enable error channels negative nan overflow none-left init-error destroy-error; do
  run EVIL_MODE="$mode" -- --quiet --plugin "$EVIL" "$DDP"
  expect "evil $mode: exit 3" 3 "^harness: ERROR .*trace_ddp\.csv:[0-9]+ .*${WANT[$mode]}" "$SUMMARY_RE"
done
# A negative cost the trace itself holds (-2 here) is the trace's, not the plugin's: the no-op plugin
# leaves it, and the harness used to report it as written (found by the oracle adversary).
NEG=$TMP/negative-in-trace.csv
sed '0,/^get,/s/^\(get,\([^,]*,\)\{9\}\)-1,/\1-2,/' "$DDP" >"$NEG"
run -- --quiet --plugin "$NOOP" "$NEG"
if grep -q '^get,\([^,]*,\)\{9\}-2,' "$NEG" && [[ $RC -eq 0 ]] && ! grep -q 'wrote negative cost' <<<"$OUT"; then
  ok "a negative cost in the trace is not blamed on the plugin"
else bad "a negative cost in the trace is blamed on the plugin (exit $RC)" "$OUT"; fi
run EVIL_MODE=sigint -- --quiet --sigint-handler --plugin "$EVIL" "$DDP"
expect "evil sigint + --sigint-handler: exit 3" 3 "^harness: ERROR plugin: the harness's SIGINT handler was replaced"
run EVIL_MODE=error -- --quiet --threads 4 --repeat 5 --plugin "$EVIL" "$DDP"
expect "evil error x4 threads: capped ERROR lines, all counted" 3 '^harness: ERROR [0-9]+ more errors not shown$' \
  "^harness: $((4 * 5 * $(gets "$DDP"))) plugin misbehaviour error\(s\); exit 3$"
run EVIL_MODE=warn -- --plugin "$EVIL" "$DDP"
expect "evil warn: allowed (exit 0), warn=$(gets "$DDP"), NCCL-format WARN lines" 0 \
  "warn=$(gets "$DDP") " '^[^ :]+:[0-9]+:[0-9]+ \[0\] NCCL WARN TUNER/Evil: warning for 16 bytes$'

# ---- loading like NCCL ------------------------------------------------------------------
run -- --quiet "$DDP"
[[ $RC -eq 0 && $(field plugin) == none && $(field calls) == "$(gets "$DDP")" ]] \
  && ok "no NCCL_TUNER_PLUGIN: internal choice, plugin=none" || bad "no plugin" "$OUT"
run NCCL_TUNER_PLUGIN=nosuch -- "$DDP"
expect "NCCL_TUNER_PLUGIN=nosuch: both names tried, exit 0" 0 '^TUNER/Plugin: Could not find: nosuch ' \
  '^TUNER/Plugin: Could not find: libnccl-tuner-nosuch\.so ' '^TUNER/Plugin: Using internal tuner' 'plugin=none$'
run NCCL_TUNER_PLUGIN=noop LD_LIBRARY_PATH="$TMP/tests" -- "$DDP"
expect "NCCL_TUNER_PLUGIN=noop finds libnccl-tuner-noop.so" 0 '^TUNER/Plugin: Using noop \(v3\)$' 'plugin=noop$'
run NCCL_TUNER_PLUGIN="$EVIL" EVIL_MODE=error -- --plugin "$NOOP" "$DDP"
expect "--plugin overrides NCCL_TUNER_PLUGIN" 0 'plugin=noop$'
run -- --plugin libc.so.6 "$DDP"
expect "library without the symbol: internal tuner, exit 0" 0 'Failed to find ncclTunerPlugin_v3 symbol' 'plugin=none$'

# ---- logger ------------------------------------------------------------------------------
run -- --plugin "$NOOP" "$DDP"
grep -q 'NCCL INFO' <<<"$OUT" && bad "NCCL_DEBUG unset: INFO lines printed" "$OUT" || ok "NCCL_DEBUG unset: no INFO lines"
run NCCL_DEBUG=INFO -- --plugin "$NOOP" "$DDP"
expect "NCCL_DEBUG=INFO: plugin INFO lines in NCCL format" 0 \
  '^[^ :]+:[0-9]+:[0-9]+ \[0\] NCCL INFO TUNER/Noop: init nRanks 2 nNodes 2$' '\[0\] NCCL INFO TUNER/Noop: destroy'
run NCCL_DEBUG=INFO NCCL_DEBUG_FILE="$TMP/nccl.%h.%p.log" -- --plugin "$NOOP" "$DDP"
logs=("$TMP"/nccl.*.log)
if [[ $RC -eq 0 && -f ${logs[0]} ]] && grep -q 'NCCL INFO TUNER/Noop: init' "${logs[0]}" && ! grep -q 'NCCL INFO' <<<"$OUT"; then
  ok "NCCL_DEBUG_FILE (%h %p expanded) gets the logger lines"
else bad "NCCL_DEBUG_FILE" "$OUT"; fi

# ---- replay semantics --------------------------------------------------------------------
grep '^get,' "$DDP" > "$TMP/gets_only.csv"
run NCCL_DEBUG=INFO -- --plugin "$NOOP" "$TMP/gets_only.csv"
[[ $RC -eq 0 && $(grep -c 'TUNER/Noop: init' <<<"$OUT") -eq 1 && $(grep -c 'TUNER/Noop: destroy' <<<"$OUT") -eq 1 ]] \
  && ok "trace without init/destroy rows: init on first use, destroy at the end" || bad "gets-only trace" "$OUT"
run NCCL_DEBUG=INFO -- --no-destroy --plugin "$NOOP" "$DDP"
[[ $RC -eq 0 && $(grep -c 'TUNER/Noop: destroy' <<<"$OUT") -eq 0 ]] && ok "--no-destroy: destroy never called" || bad "--no-destroy" "$OUT"
n=$(gets "$DDP")
run -- --threads 3 --repeat 2 --plugin "$NOOP" "$DDP"
[[ $RC -eq 0 && $(field calls) == $((3 * 2 * n)) && $(grep -c ' Bytes -> Algo ' <<<"$OUT") -eq $((2 * n)) ]] \
  && ok "--threads 3 --repeat 2: calls=$((6 * n)), thread 0's lines printed" || bad "--threads/--repeat" "$OUT"
run -- --quiet --stack-kib 64 --threads 2 --plugin "$NOOP" "$DDP"
expect "--stack-kib 64" 0 "calls=$((2 * n)) "
run -- --quiet --sigint-handler --plugin "$NOOP" "$DDP"
expect "--sigint-handler with noop" 0 '^harness: own SIGINT handler ran$'

# ---- usage and IO errors: exit 2 ---------------------------------------------------------
run -- --stack-kib 1 "$DDP";              expect "--stack-kib 1: exit 2" 2 'stack-kib'
run -- --frobnicate "$DDP";               expect "unknown option: exit 2" 2 'unknown option --frobnicate'
run -- "$TMP/missing.csv";                expect "missing trace: exit 2" 2 'cannot open trace'
run -- --nccl-version 22707 "$DDP";       expect "--nccl-version without --nccl-era: exit 2" 2 'nccl-version needs --nccl-era'
run -- --nccl-era 2.24 --nccl-version 27 "$DDP"; expect "--nccl-version 27: exit 2" 2 'nccl-version wants a number in 20900..999999'
run --;                                   expect "no trace: exit 2" 2 'no trace given'
printf 'init,0,2,2\nget,0,2,2,4,8,1,7,3,0,1.5,2\n' > "$TMP/short.csv"
run -- "$TMP/short.csv";                  expect "malformed trace: exit 2 with file:line" 2 'short\.csv:2: 2 costs for numAlgo\*numProto = 21'

# ---- memcheck -----------------------------------------------------------------------------
if command -v valgrind >/dev/null; then
  vg=0; vout=$(valgrind -q --leak-check=full --show-leak-kinds=all --errors-for-leak-kinds=all --error-exitcode=9 \
    "$H" --quiet --threads 2 --sigint-handler --plugin "$NOOP" "${TRACES[@]}" 2>&1) || vg=$?
  [[ $vg -eq 0 ]] && ok "valgrind memcheck clean (noop, 2 threads, all traces)" || bad "valgrind memcheck (exit $vg)" "$vout"
fi

finish
