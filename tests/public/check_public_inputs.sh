#!/usr/bin/env bash
# Manual check (not a test): every third-party file under ../shared/data/public goes through the
# command that fits it (compile for nccl-tests outputs, explain --collective all for NCCL logs with
# a TUNING table, import for tuner configs); prints per file the exit code and the result's gist
# (rules, or the refusal's file:line and reason). The files are not in the repository.
#
#   tests/public/check_public_inputs.sh [PUBLIC_DIR]     (default: ../shared/data/public)
set -u
REPO="$(cd "$(dirname "$0")/../.." && pwd)"
PUB="${1:-$REPO/../shared/data/public}"
JAVA="${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}/bin/java"
JAR="$REPO/build/lib/nccl-tuner-tools.jar"
[ -f "$JAR" ] || JAR="$REPO/java-tools/target/nccl-tuner-tools.jar"
[ -d "$PUB" ] || { echo "no public data at $PUB"; exit 0; }
nt() { timeout 120 "$JAVA" -jar "$JAR" "$@"; }
gist() { # the lines that carry the verdict
  grep -E "^nccl-tuner|^rules:|^  [A-Za-z]+ \[|^policy:|^  profile|inferred|NVLink domain|forced NCCL|Inferred|Selection lines for|launcher prefix|refused rows|is not a collective|header row|^[A-Za-z]+, nRanks" | cut -c1-260
}
for f in "$PUB"/nccl-tests/*; do
  echo "=== compile $(basename "$f")"; nt compile "$f" >/tmp/pub.$$ 2>&1; echo "exit $?"; gist </tmp/pub.$$
done
for f in "$PUB"/nccl-logs/*; do
  echo "=== explain --collective all $(basename "$f")"; nt explain --log "$f" --collective all >/tmp/pub.$$ 2>&1; echo "exit $?"; gist </tmp/pub.$$
  echo "=== compile $(basename "$f")"; nt compile "$f" >/tmp/pub.$$ 2>&1; echo "exit $?"; gist </tmp/pub.$$
done
for f in "$PUB"/tuner-configs/*; do
  echo "=== import $(basename "$f")"; nt import "$f" -o /tmp/pub.$$.yaml >/tmp/pub.$$ 2>&1; echo "exit $?"; gist </tmp/pub.$$
done
rm -f /tmp/pub.$$ /tmp/pub.$$.yaml
