#!/usr/bin/env bash
# crosscheck.sh HARNESS PLUGIN TRACE NCCL_LOG
# Replays TRACE through PLUGIN (normally the noop plugin) and compares every selection line the
# harness prints with the "<Coll>: <bytes> Bytes -> Algo <A> proto <P>" lines NCCL itself logged
# (NCCL_LOG, one rank's NCCL_DEBUG=INFO log of the run that produced TRACE). NCCL 2.24+ logs
# AllGather/ReduceScatter bytes per rank (the tuner gets nRanks times that), and logs each
# operation of a coalesced group separately (the tuner gets one call for ops of one size class,
# with their bytes summed): a call is matched by consecutive log lines of the same collective
# whose bytes add up to the call's bytes. Lines are matched in order.
# Prints: crosscheck <trace>: calls=C matched=M mismatched=X unmatched=U log_lines=L log_used=K harness_rc=R
# Exit status: 0 when the harness exited 0, every call matched and every log line was used; else 1.
set -euo pipefail
[[ $# -eq 4 ]] || { echo "usage: crosscheck.sh HARNESS PLUGIN TRACE NCCL_LOG" >&2; exit 2; }
harness=$1 plugin=$2 trace=$3 log=$4
nranks=$(awk -F, '$1 == "init" || $1 == "get" { print $3; exit }' "$trace")
hrc=0
out=$("$harness" --plugin "$plugin" --trace "$trace") || hrc=$?
awk -v nranks="$nranks" -v name="${trace##*/}" -v hrc="$hrc" '
  # NCCL log: "... NCCL INFO AllGather: 8 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..0}"
  FNR == NR { if (match($0, /NCCL INFO [A-Za-z]+: [0-9]+ Bytes -> Algo [A-Z_]+ proto [A-Z0-9]+/)) {
                split(substr($0, RSTART, RLENGTH), f, " ")
                coll = f[3]; sub(/:$/, "", coll); b = f[4] + 0
                if (coll == "AllGather" || coll == "ReduceScatter") b *= nranks
                nl++; lc[nl] = coll; lb[nl] = b; la[nl] = f[8]; lp[nl] = f[10] }
              next }
  # harness: "AllGather: 16 Bytes -> Algo RING proto LL channel{Lo..Hi}={NCCL decides}"
  / Bytes -> Algo / { nh++; hc[nh] = $1; sub(/:$/, "", hc[nh]); hb[nh] = $2 + 0; ha[nh] = $6; hp[nh] = $8 }
  END {
    i = 1
    for (j = 1; j <= nh; j++) {
      sum = 0; k = 0; ok = 1; start = i
      while (i <= nl && sum < hb[j] && lc[i] == hc[j]) {
        sum += lb[i]; if (la[i] != ha[j] || lp[i] != hp[j]) ok = 0; i++; k++ }
      if (k > 0 && sum == hb[j]) {
        if (ok) { matched++; used += k }
        else { mismatched++; used += k
               printf "  mismatch: call %d %s %d -> %s/%s, NCCL log line(s) %d..%d say %s/%s\n", j, hc[j], hb[j], ha[j], hp[j], start, i - 1, la[start], lp[start] }
      } else {
        i = start; unmatched++
        printf "  unmatched: call %d %s %d -> %s/%s (next NCCL log line: %s %d)\n", j, hc[j], hb[j], ha[j], hp[j], lc[i], lb[i]
      }
    }
    printf "crosscheck %s: calls=%d matched=%d mismatched=%d unmatched=%d log_lines=%d log_used=%d harness_rc=%d\n", name, nh, matched + 0, mismatched + 0, unmatched + 0, nl, used + 0, hrc
    exit !(matched == nh && used == nl && hrc == 0)
  }' "$log" - <<<"$out"
