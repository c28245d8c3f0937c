#!/bin/sh
# nccl-tuner-aot: builds lib/nccl-tuner-java.aot, the JDK 25 AOT cache that shortens the plugin's
# start (JVM creation to first decision), with a training run on the runtime bundled in this tree.
# Run it once after unpacking, as the user who owns lib/ (root for an install under /opt); the
# plugin uses the cache from then on, and its first INFO line says "AOT cache <path>". Any extra
# argument is passed to the training run (a trace CSV in the shared format).
# Exit status: 0 with the cache written; 1 without it (lib/ not writable, or the runtime wrote no
# cache), with the reason on stderr. (Installed by make/dist.mk, which fills in the JVM options.)
set -e
here=$(cd "$(dirname "$0")/.." && pwd)
cache="$here/lib/nccl-tuner-java.aot"
if [ ! -w "$here/lib" ] || { [ -e "$cache" ] && [ ! -w "$cache" ]; }; then
  echo "nccl-tuner-aot: $here/lib is not writable by $(id -un 2>/dev/null || echo this user), so no AOT cache was made;" \
    "run bin/nccl-tuner-aot as the owner of $here/lib (for example with sudo), once after installing." \
    "The plugin works without the cache; it only starts slower." >&2
  exit 1
fi
rm -f "$cache"
NCCL_TUNER_JAVA_POLICY="${NCCL_TUNER_JAVA_POLICY:-$here/policies/h200-2rank.yaml}" \
  "$here/runtime/bin/java" -XX:AOTCacheOutput="$cache" @AOT_OPTS@ \
  -cp "$here/lib/nccl-tuner-java.jar" io.nccltuner.shim.AotTraining "$@"
if [ ! -s "$cache" ]; then
  echo "nccl-tuner-aot: the Java runtime in $here/runtime wrote no AOT cache at $cache (see its messages above)" >&2
  exit 1
fi
echo "nccl-tuner-aot: wrote $cache"
