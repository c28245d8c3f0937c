#!/bin/bash
# Runs the adversarial cases: tests/adversary/run.sh [FILTER] (from the repository root).
# Each case runs REPS times under `timeout`; per case one summary line in build/adversary/out/summary.tsv:
# name, reps, exit statuses (histogram), runs with FAIL lines, runs with bytes on stdout/stderr,
# distinct decision hashes, and the first distinct FAIL/WARN lines.
cd "$(dirname "$0")/../.." || exit 2
export JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}
export NCCL_TUNER_JAVA_POLICY=${NCCL_TUNER_JAVA_POLICY:-$PWD/policies/h200-2rank.yaml}
export ADV_TRACE=${ADV_TRACE:-$PWD/tests/traces/trace_ddp.csv}
A=$PWD/build/adversary/adv
REAL=$PWD/build/lib/libnccl-tuner-java.so
NOOP=$PWD/build/adversary/libnoop-tuner.so
O=$PWD/build/adversary/out
mkdir -p $O
FILTER=${1:-.}
tc() { # tc NAME REPS TIMEOUT cmd...
  local name=$1 reps=$2 to=$3; shift 3
  [[ $name =~ $FILTER ]] || return 0
  local d=$O/$name; rm -rf $d; mkdir -p $d
  local rcs="" nfail=0 nout=0
  for i in $(seq 1 $reps); do
    ADV_REPORT=$d/rep.$i timeout -k 5 $to "$@" >$d/out.$i 2>$d/err.$i </dev/null
    local rc=$?
    rcs="$rcs $rc"
    grep -q '^FAIL' $d/rep.$i 2>/dev/null && nfail=$((nfail+1))
    if [ -s $d/out.$i ] || [ -s $d/err.$i ]; then nout=$((nout+1)); fi
  done
  local hist=$(echo $rcs | tr ' ' '\n' | sort | uniq -c | awk '{printf "%s:%s ",$2,$1}')
  local hashes=$(cat $d/rep.* 2>/dev/null | awk '/^HASH/{print $3" ch"$5}' | sort | uniq -c | awk '{printf "%s(%s) ",$2" "$3,$1}')
  local fails=$(cat $d/rep.* 2>/dev/null | grep -E '^(FAIL|LOG WARN)' | sed 's/[0-9a-fx]\{10,\}/N/g; s/pid[0-9]*/pidN/g' | sort | uniq -c | sort -rn | head -4 | sed 's/^ *//' | tr '\n' '|')
  printf '%s\treps %s\trc %s\tFAILruns %s\tstdio-bytes-runs %s\thashes %s\t%s\n' "$name" "$reps" "$hist" "$nfail" "$nout" "$hashes" "$fails" | tee -a $O/summary.tsv
  echo "$*" > $d/cmd
}
R="env ADV_PLUGIN=$REAL"
N="env ADV_PLUGIN=$NOOP"
LOC="LOCPATH=/tmp/adv1-loc"
. tests/adversary/cases.sh
