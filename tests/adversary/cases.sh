# The cases (sourced by run.sh). tc NAME REPS TIMEOUT_S COMMAND...
for v in 3 4 5 6 7; do tc state-v$v 3 60 $R ADV_VER=$v $A state; done
tc noop-state 2 30 $N $A state
tc sigwindow 6 90 $R $A sigwindow
tc noop-sigwindow 2 30 $N $A sigwindow
tc sigwindow-pipe-dfl 3 90 $R $A sigwindow pipe-dfl
tc spawn-during-init 6 90 $R $A spawn
tc noop-spawn 2 30 $N $A spawn
tc mask-all-blocked 3 60 $R $A mask blocked
tc thread-hop 3 60 $R $A mask hop
tc noop-threads-all 3 60 $N $A threads storm suspend prof spin monitor
for m in storm suspend prof "spin monitor" "storm suspend prof spin monitor"; do
  tc "threads-${m// /-}" 10 90 $R $A threads $m
done
tc threads-monitor-CUTF8 4 90 $R LANG=C.UTF-8 LC_ALL=C.UTF-8 $A threads monitor spin
tc threads-monitor-deDE 4 90 $R $LOC LANG=de_DE.UTF-8 LC_ALL=de_DE.UTF-8 $A threads monitor spin
tc threads-monitor-JTO 4 90 $R JAVA_TOOL_OPTIONS=-Dx=1 _JAVA_OPTIONS=-Dy=2 $A threads monitor
for us in 0 2000 30000 100000 250000; do
  tc cancel-$us 3 90 $R $A cancel $us
  tc cancel-async-$us 3 90 $R ADV_ASYNC=1 $A cancel $us
done
for k in 16 32 64 100 128 256; do tc stack-$k 3 60 $R $A stack $k; tc stack-pre-$k 3 60 $R ADV_PREINIT=1 $A stack $k; done
for k in 32 64 100 128 256 1024; do tc coro-$k 3 60 $R $A coro $k; tc coro-pre-$k 3 60 $R ADV_PREINIT=1 $A coro $k; done
tc noop-coro-32 2 30 $N $A coro 32
tc concurrent-16x10 3 180 $R $A concurrent 16 10
tc concurrent-64x3 3 180 $R $A concurrent 64 3
for us in 0 3000 30000 120000; do tc fork-$us 3 120 $R $A fork $us; tc fork-call-$us 3 120 $R ADV_CHILD=call $A fork $us; done
tc stdio-closed 3 60 $R $A stdio-closed
for n in 8 12 16 20 32 64; do tc nofile-$n 3 60 $R bash -c "ulimit -n $n; exec $A state"; done
for m in 300 1000 2000 4000 6000 16000; do tc as-${m}M 3 60 $R bash -c "ulimit -v $((m*1024)); exec $A state"; done
tc ulimit-s-256 3 60 $R bash -c "ulimit -s 256; exec $A state"
tc ulimit-s-unlimited 3 60 $R bash -c "ulimit -s unlimited; exec $A state"
tc umask-777 3 60 $R bash -c "umask 777; exec $A state"
tc cwd-deleted 3 60 $R bash -c "d=\$(mktemp -d); cd \$d; rmdir \$d; exec $A state"
tc tmpdir-missing 3 60 $R TMPDIR=/nonexistent/x $A state
tc tmpdir-proc 3 60 $R TMPDIR=/proc/self $A state
tc tmpdir-devfull 3 60 $R TMPDIR=/dev/full $A state
tc home-unset 3 60 $R bash -c "unset HOME USER LOGNAME PATH; exec $A state"
tc env-empty 3 60 env -i ADV_PLUGIN=$REAL JAVA_HOME=$JAVA_HOME NCCL_TUNER_JAVA_POLICY=$NCCL_TUNER_JAVA_POLICY ADV_TRACE=$ADV_TRACE $A state
tc poison-malloc 3 90 $R LD_PRELOAD=$PWD/build/adversary/poison_malloc.so $A state
tc noop-poison-malloc 2 30 $N LD_PRELOAD=$PWD/build/adversary/poison_malloc.so $A state
tc malloc-perturb 3 60 $R MALLOC_PERTURB_=165 MALLOC_CHECK_=3 $A state
for v in 3 5 7; do tc tables-v$v 3 60 $R ADV_VER=$v $A tables; done
tc noop-tables 1 30 $N $A tables
tc log-null 3 60 $R $A log null
tc log-null-badpolicy 3 60 $R NCCL_TUNER_JAVA_POLICY=/nonexistent.yaml $A log null
tc log-null-nojava 3 60 $R JAVA_HOME=/nonexistent NCCL_TUNER_JAVA_HOME=/nonexistent $A log null
tc log-reenter 3 60 $R ADV_LOGV=1 $A log reenter
tc log-reenter-badpolicy 3 60 $R NCCL_TUNER_JAVA_POLICY=/nonexistent.yaml $A log reenter
tc sigtid 3 60 $R $A sigtid
tc segvchain-before 3 60 $R $A segvchain before
tc segvchain-after 3 60 $R $A segvchain after
for m in traps alltraps ftz round flags x87 clear; do tc fp-$m 3 60 $R $A fp $m; done
for us in 0 2000 20000 80000 200000; do tc exit-during-init-$us 3 60 $R $A exit init $us; done
for us in 0 50000; do tc exit-during-calls-$us 3 60 $R $A exit calls $us; done
tc nullctx 3 60 $R $A nullctx
for v in 4 5 6; do
  tc prof-v$v 3 60 $R $A prof $v
  tc prof-v$v-tuner 3 60 $R NCCL_TUNER_JAVA_MODE=canary $A prof $v tuner
  tc prof-v$v-stale 3 60 $R ADV_PROF_STALE=1 NCCL_TUNER_JAVA_MODE=canary $A prof $v tuner
done
tc noop-prof-v6 1 30 $N $A prof 6
tc prof-chain-self 3 60 $R NCCL_TUNER_JAVA_PROFILER_CHAIN=$REAL NCCL_TUNER_JAVA_MODE=canary $A prof 6 tuner
tc prof-chain-noop 3 60 $R NCCL_TUNER_JAVA_PROFILER_CHAIN=$NOOP NCCL_TUNER_JAVA_MODE=canary $A prof 6 tuner
tc prof-chain-missing 3 60 $R NCCL_TUNER_JAVA_PROFILER_CHAIN=/nonexistent.so $A prof 6 tuner
tc prof-chain-notlib 3 60 $R NCCL_TUNER_JAVA_PROFILER_CHAIN=$NCCL_TUNER_JAVA_POLICY $A prof 6 tuner
tc canary-determinism 4 60 $R NCCL_TUNER_JAVA_MODE=canary NCCL_TUNER_JAVA_CANARY=0.5 $A state
tc canary-determinism-deDE 4 60 $R $LOC ADV_SETLOCALE=de_DE.UTF-8 NCCL_TUNER_JAVA_MODE=canary NCCL_TUNER_JAVA_CANARY=0.5 $A state
tc canary-determinism-LANGdeDE 4 60 $R $LOC LANG=de_DE.UTF-8 LC_ALL=de_DE.UTF-8 NCCL_TUNER_JAVA_MODE=canary NCCL_TUNER_JAVA_CANARY=0.5 $A state
tc enforce-deDE 3 60 $R $LOC ADV_SETLOCALE=de_DE.UTF-8 $A state
# FIFOs nobody writes, where the plugin reads a file: each blocked the host's init for ever (a hostile
# host); now one WARN (the chain: an INFO) and nothing changed, well inside the timeout.
F=$O/fifos; mkdir -p $F
for f in cp.jar tuner.conf chain.so; do [ -p $F/$f ] || mkfifo $F/$f; done
if [ ! -p $F/jdk/release ]; then
  rm -rf $F/jdk; mkdir -p $F/jdk
  for e in $JAVA_HOME/*; do [ "${e##*/}" = release ] || ln -s $e $F/jdk/; done
  mkfifo $F/jdk/release
fi
tc fifo-classpath 2 30 $R NCCL_TUNER_JAVA_CLASSPATH=$F/cp.jar $A state
tc fifo-config-file 2 30 $R NCCL_TUNER_JAVA_POLICY= NCCL_TUNER_CONFIG_FILE=$F/tuner.conf $A state
tc fifo-prof-chain 2 30 $R NCCL_TUNER_JAVA_PROFILER_CHAIN=$F/chain.so NCCL_TUNER_JAVA_MODE=canary $A prof 6 tuner
tc fifo-java-home-release 2 30 $R NCCL_TUNER_JAVA_HOME=$F/jdk JAVA_HOME= $A state
