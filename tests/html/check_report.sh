#!/usr/bin/env bash
# tests/html/check_report.sh -- render a `nccl-tuner report --html` page in headless Chromium and
# save a screenshot, so a person (or ReportHtmlChromiumTest) can look at it.
#
#   tests/html/check_report.sh [REPORT.html] [OUT.png]
#
# Without REPORT.html it builds two from the test fixtures with build/lib's jar: the shadow page
# (three ranks' decision logs under java-tools/src/test/resources/report and the H200 sweep's
# replicate 1) -> OUT.png, the canary page (report/canary/canary-{a,b,c}.jsonl: both arms per
# size) -> OUT with "-canary" before ".png", and compile's page (`nccl-tuner compile --html` of the
# H200 sweep with its NCCL log: busbw by size, error bars) -> OUT with "-compile" before ".png".
# Needs Debian's `chromium` (tests/html/install_chromium.sh installs it; the Makefile's unit-test
# calls that); exits 3 when it is absent, so callers can skip. The window is 1200 x 1800 CSS
# pixels; the chart should span the page's width.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
chromium=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$chromium" ]; then
  echo "check_report.sh: chromium not found (apt-get install -y chromium); skipped" >&2
  exit 3
fi
out_png=${2:-$repo/build/html/report.png}
mkdir -p "$(dirname "$out_png")"
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
shot() { # HTML PNG
  # Headless, no sandbox (containers), no GPU, nothing fetched from the network.
  timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --disable-background-networking \
    --disable-component-update --disable-sync --no-first-run --user-data-dir="$profile" \
    --hide-scrollbars --window-size=1200,1800 --screenshot="$2" "file://$(realpath "$1")" >/dev/null 2>&1
  test -s "$2"
  echo "check_report.sh: $1 -> $2"
}
html=${1:-}
if [ -n "$html" ]; then
  shot "$html" "$out_png"
  exit 0
fi
html=$repo/build/html/report.html
java=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}/bin/java
res=$repo/java-tools/src/test/resources
"$java" -jar "$repo/build/lib/nccl-tuner-tools.jar" report "$res/report/rank-a.jsonl" "$res/report/rank-b.jsonl" \
  "$res/report/rank-c.jsonl" --measurements "$res/compile/h200-2rank-sweep_allreduce.rep1.csv" --html "$html" >/dev/null
shot "$html" "$out_png"
canary=$repo/build/html/report-canary.html
"$java" -jar "$repo/build/lib/nccl-tuner-tools.jar" report "$res/report/canary/canary-a.jsonl" \
  "$res/report/canary/canary-b.jsonl" "$res/report/canary/canary-c.jsonl" --html "$canary" >/dev/null
shot "$canary" "${out_png%.png}-canary.png"
compile=$repo/build/html/compile.html
"$java" -jar "$repo/build/lib/nccl-tuner-tools.jar" compile "$res/compile/h200-2rank-sweep_allreduce.rep1.csv" \
  --nccl-log "$repo/tests/traces/nccl_sweep.rank0.log" --html "$compile" --summary >/dev/null
shot "$compile" "${out_png%.png}-compile.png"
