# tests/gpu/two_ranks.sh -- sourced by canary.sh and e2e.sh: two ranks of a Python worker on one GPU as two
# "hosts" over loopback (nRanks=2 nNodes=2), and the wait for both. Sourcing it exports the loopback
# settings; the caller sets PY (the python to run) first.
#   two_ranks LABEL DIR TIMEOUT GRACE ENV_FN WORKER
# runs "$PY" WORKER as RANK=0 and RANK=1 at once, each under `timeout -k 10 TIMEOUT` with MASTER_PORT (one
# free port) and the VAR=VALUE words that `ENV_FN R` leaves in the array rank_env, stdout and stderr in
# DIR/rankR.out; writes each rank's exit status to DIR/rc.rankR when it ends; once a rank failed, stops the
# other after GRACE s (a dead rank's peer hangs); then prints "LABEL: ranks exited A B after S s" and the
# tail of each failed rank's output.
export NCCL_SOCKET_IFNAME=lo NCCL_IB_DISABLE=1 NCCL_MNNVL_ENABLE=0   # two "hosts" on one GPU over loopback
export MASTER_ADDR=127.0.0.1 WORLD_SIZE=2

two_ranks() {
  local label=$1 dir=$2 timeout=$3 grace=$4 env_fn=$5 worker=$6 port r t0=$SECONDS failed_at=
  local -a pids=() rcs=() rank_env=()
  port=$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  for r in 0 1; do
    rank_env=()
    "$env_fn" "$r"
    env ${rank_env[@]+"${rank_env[@]}"} RANK=$r MASTER_PORT="$port" \
      timeout -k 10 "$timeout" "$PY" "$worker" >"$dir/rank$r.out" 2>&1 &
    pids[r]=$!
  done
  while [ -z "${rcs[0]:-}" ] || [ -z "${rcs[1]:-}" ]; do
    for r in 0 1; do
      if [ -z "${rcs[r]:-}" ] && ! kill -0 "${pids[r]}" 2>/dev/null; then
        wait "${pids[r]}"; rcs[r]=$?; echo "${rcs[r]}" >"$dir/rc.rank$r"
        [ "${rcs[r]}" = 0 ] || failed_at=${failed_at:-$SECONDS}
      fi
    done
    if [ -n "$failed_at" ] && [ $((SECONDS - failed_at)) -ge "$grace" ]; then
      for r in 0 1; do [ -n "${rcs[r]:-}" ] || kill "${pids[r]}" 2>/dev/null; done
    fi
    sleep 0.5
  done
  echo "$label: ranks exited ${rcs[0]} ${rcs[1]} after $((SECONDS - t0)) s"
  for r in 0 1; do
    [ "${rcs[r]}" = 0 ] || { echo "--- $dir/rank$r.out (tail)"; tail -n 15 "$dir/rank$r.out"; }
  done
}
