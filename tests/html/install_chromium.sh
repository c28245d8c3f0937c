#!/usr/bin/env bash
# tests/html/install_chromium.sh -- make sure Debian's `chromium` is installed, so
# ReportHtmlChromiumTest (tests/html/check_report.sh) runs instead of skipping.
#
# Called by the top Makefile's unit-test recipe before the JUnit run. Idempotent and quiet:
# nothing happens when chromium (or chromium-browser) is on PATH. Otherwise, as root with
# apt-get (CI), `apt-get update && apt-get install -y chromium` (no recommends), output in
# ${TMPDIR:-/tmp}/install_chromium.log; exit 1 with the log's tail if that fails. Not root or no
# apt-get: one line on stderr and exit 0 (the test then skips, as before).
set -euo pipefail
if command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1; then
  exit 0
fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "install_chromium.sh: chromium missing and not root with apt-get; ReportHtmlChromiumTest will skip" >&2
  exit 0
fi
log=${TMPDIR:-/tmp}/install_chromium.log
echo "install_chromium.sh: installing Debian's chromium (log: $log)" >&2
if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium; } \
    >"$log" 2>&1; then
  echo "install_chromium.sh: apt-get failed:" >&2
  tail -20 "$log" >&2
  exit 1
fi
command -v chromium >/dev/null
