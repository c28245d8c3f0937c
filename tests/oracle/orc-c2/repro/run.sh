#!/bin/sh
# A profile naming 256 distinct chunkSizes loads (nccl-tuner validate: "loads") but every init
# fails with "internal error in init (IllegalArgumentException: ... more than 255 distinct chunk
# sizes)" and the plugin changes nothing; with 255 the same calls are tuned. Expected from
# docs/policy-format.md (no such limit, not among the refusals): both print
#   R 0 0 1 1 1 1 1 0 1 ...   (AllReduce 0 B -> RING/SIMPLE, the first rule)
#   K 0 1000                  (its chunkSize)
cd "$(dirname "$0")"
W=$(cd ../../../.. && pwd)
export JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}
for n in 255 256; do
  echo "== chunks-$n.yaml"
  NCCL_TUNER_JAVA_POLICY=chunks-$n.yaml "$W/build/tests/oracle-host" "$W/build/lib/libnccl-tuner-java.so" chunks.script | grep -v "engine on"
done
