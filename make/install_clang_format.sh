#!/usr/bin/env bash
# make/install_clang_format.sh -- make sure Debian's `clang-format` is installed, so that
# `make format-check` (part of `make test`) and `make format` can run.
#
# Called by the top Makefile's format-check and format recipes. Idempotent and quiet: nothing
# happens when $CLANG_FORMAT (default clang-format) is on PATH. Otherwise, as root with apt-get
# (CI), `apt-get update && apt-get install -y clang-format` (no recommends), output in
# ${TMPDIR:-/tmp}/install_clang_format.log; exit 1 with the log's tail if that fails, or when not
# root or without apt-get (the check cannot run then, and must not pass silently).
set -euo pipefail
cf=${CLANG_FORMAT:-clang-format}
if command -v "$cf" >/dev/null 2>&1; then
  exit 0
fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "install_clang_format.sh: $cf missing and not root with apt-get; install clang-format (Debian 12: 14.0)" \
    "or run make with CLANG_FORMAT=/path/to/clang-format" >&2
  exit 1
fi
log=${TMPDIR:-/tmp}/install_clang_format.log
echo "install_clang_format.sh: installing Debian's clang-format (log: $log)" >&2
if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends clang-format; } \
    >"$log" 2>&1; then
  echo "install_clang_format.sh: apt-get failed:" >&2
  tail -20 "$log" >&2
  exit 1
fi
command -v "$cf" >/dev/null
