#!/bin/sh
# nccl-tuner-aot: builds lib/nccl-tuner-java.aot, the JDK 25 AOT cache that shortens the plugin's
# start (JVM creation to first decision), with a training run on the runtime bundled in this tree.
# Run it once after unpacking, as the user who owns lib/ (root for an install under /opt); the
# plugin uses the cache from then on, and its first INFO line says "AOT cache <path>". It also
# writes the binary form of the tree's policies and of NCCL_TUNER_JAVA_POLICY (FILE.yaml.compiled,
# read by the plugin instead of the YAML while the YAML is unchanged). One optional argument: a
# trace CSV in the shared format for the training run (else the trace bundled in the jar).
# Exit status: 0 with the cache written (or --help); 1 without it (lib/ not writable, the training
# run failed, or the runtime wrote no cache), with the reason on stderr; 2 for a wrong argument,
# before anything is written. (Installed by make/dist.mk, which fills in the JVM options.)
set -e
usage() {
  echo "Usage: bin/nccl-tuner-aot [TRACE.csv]"
  echo "Builds lib/nccl-tuner-java.aot (the JDK AOT cache that shortens the plugin's start) and writes"
  echo "policies/*.yaml.compiled (and NCCL_TUNER_JAVA_POLICY's), with a training run on the bundled runtime."
  echo "TRACE.csv: a captured trace to train on (default: the trace bundled in the jar)."
  echo "Run once after unpacking, as the owner of lib/. Exit 0: cache written; 1: no cache; 2: wrong argument."
}
for a in "$@"; do
  case "$a" in
    -h|--help) usage; exit 0 ;;
  esac
done
if [ $# -gt 1 ]; then
  echo "nccl-tuner-aot: takes at most one argument (a trace CSV), got $#; see bin/nccl-tuner-aot --help" >&2
  exit 2
fi
if [ $# -eq 1 ]; then
  case "$1" in
    -*) echo "nccl-tuner-aot: unknown option '$1'; see bin/nccl-tuner-aot --help" >&2; exit 2 ;;
  esac
  if [ ! -f "$1" ] || [ ! -r "$1" ]; then
    echo "nccl-tuner-aot: '$1' is not a readable trace CSV; see bin/nccl-tuner-aot --help" >&2
    exit 2
  fi
fi
here=$(cd "$(dirname "$0")/.." && pwd)
cache="$here/lib/nccl-tuner-java.aot"
if [ ! -w "$here/lib" ] || { [ -e "$cache" ] && [ ! -w "$cache" ]; }; then
  echo "nccl-tuner-aot: $here/lib is not writable by $(id -un 2>/dev/null || echo this user), so no AOT cache was made;" \
    "run bin/nccl-tuner-aot as the owner of $here/lib (for example with sudo), once after installing." \
    "The plugin works without the cache; it only starts slower." >&2
  exit 1
fi
rm -f "$cache"
# The plugin hides JAVA_TOOL_OPTIONS and _JAVA_OPTIONS from its JVM (README, environment table), so
# the runs here do not take them either: the cache then fits the plugin's JVM, and the runtime
# prints no "Picked up JAVA_TOOL_OPTIONS" line. JDK_JAVA_OPTIONS only reaches the java launcher.
if [ -n "${JAVA_TOOL_OPTIONS:-}${_JAVA_OPTIONS:-}${JDK_JAVA_OPTIONS:-}" ]; then
  echo "nccl-tuner-aot: JAVA_TOOL_OPTIONS, _JAVA_OPTIONS and JDK_JAVA_OPTIONS are not applied here, as the" \
    "plugin's JVM does not take them" >&2
fi
unset JAVA_TOOL_OPTIONS _JAVA_OPTIONS JDK_JAVA_OPTIONS
policy="${NCCL_TUNER_JAVA_POLICY:-$here/policies/h200-2rank.yaml}"
# First the policies' binary forms (FILE.yaml.compiled beside each, keyed by the YAML's length, CRC-32C and CRC-32):
# the plugin then starts without parsing YAML. The tree's policies, and NCCL_TUNER_JAVA_POLICY
# when its folder is writable; a policy without one still works (its YAML is parsed at start).
done=""
for f in "$here"/policies/*.yaml "$policy"; do
  case "$done" in *"|$f|"*) continue ;; esac
  done="$done|$f|"
  if [ ! -f "$f" ]; then
    echo "nccl-tuner-aot: $f: no such policy file, no binary form made" >&2
  elif [ -w "$(dirname "$f")" ]; then
    "$here/runtime/bin/java" -Xshare:auto -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
      -cp "$here/lib/nccl-tuner-java.jar" io.nccltuner.engine.CompiledPolicy "$f"
  else
    echo "nccl-tuner-aot: $f: folder not writable, no binary form made (the plugin parses its YAML at start)" >&2
  fi
done
# Then the training run for the AOT cache, which reads the policy as the plugin does. Its output
# goes to a log beside the cache, and only what the user needs is shown: the JVM's own lines about
# the cache it assembles (JDK 25's -XX:AOTCacheOutput: "Temporary AOTConfiguration recorded",
# "Launching child process", the child's "Picked up JAVA_TOOL_OPTIONS", which is how the JVM hands
# the child its options, "AOTCache creation is complete", ...) and the training's call count are
# left out (the last line says what was made), anything else (a warning, the training's error) is
# shown on stderr. A failed run may still leave a cache (the JVM assembles one at exit): it is
# removed. (Shell built-ins only: the tree needs no tools beyond rm and dirname.)
log="$cache.log"
calls=""
bytes=""
# show LOG: prints LOG's lines but the JVM's and the call count (noting these two)
show() {
  while IFS= read -r l || [ -n "$l" ]; do
    case "$l" in
      "AotTraining: "*" calls replayed") calls=${l#AotTraining: }; calls=${calls% calls replayed} ;;
      "AOTCache creation is complete: "*" bytes") bytes=${l% bytes}; bytes=${bytes##* } ;;
      "Picked up JAVA_TOOL_OPTIONS: "*|"Temporary AOTConfiguration recorded: "*|"Launching child process "*) ;;
      "Reading AOTConfiguration "*|"Removed temporary AOT configuration file "*) ;;
      *) printf '%s\n' "$l" ;;
    esac
  done < "$1"
}
rc=0
NCCL_TUNER_JAVA_POLICY="$policy" \
  "$here/runtime/bin/java" -XX:AOTCacheOutput="$cache" @AOT_OPTS@ \
  -cp "$here/lib/nccl-tuner-java.jar" io.nccltuner.ffm.AotTraining "$@" >"$log" 2>&1 || rc=$?
show "$log" >&2
rm -f "$log"
if [ "$rc" -ne 0 ]; then
  rm -f "$cache" "$cache.config"
  echo "nccl-tuner-aot: the training run failed (exit $rc, see its message above), so no AOT cache was made;" \
    "the plugin works without it, it only starts slower" >&2
  exit 1
fi
if [ ! -s "$cache" ]; then
  echo "nccl-tuner-aot: the Java runtime in $here/runtime wrote no AOT cache at $cache (see its messages above)" >&2
  exit 1
fi
case "$bytes" in
  ''|*[!0-9]*) size="" ;;
  *) size=" ($(((bytes + 1048575) / 1048576)) MiB)" ;;
esac
echo "nccl-tuner-aot: wrote $cache$size, the AOT cache the plugin starts from" \
  "(trained on ${calls:+$calls tuner calls of }${1:-the trace bundled in the jar})"
