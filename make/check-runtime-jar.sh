#!/bin/sh
# check-runtime-jar.sh JAR ALLOW: exits 1, naming each entry, when JAR holds an entry that the
# allow-list ALLOW (make/runtime-jar.allow) does not name; 0 otherwise. Folders are not entries;
# a nested class X$Y.class is checked as X.class.
set -e
jar="$1"
allow="$2"
entries=$(mktemp)
trap 'rm -f "$entries"' EXIT
"${JAVA_HOME:?}/bin/jar" tf "$jar" >"$entries"
extra=$(awk '
  NR == FNR { if ($0 !~ /^#/ && $0 != "") { if ($0 ~ /\/$/) prefix[$0] = 1; else exact[$0] = 1 } next }
  /\/$/ { next }
  {
    e = $0
    sub(/\$[^\/]*\.class$/, ".class", e)
    if (e in exact) next
    for (p in prefix) if (index(e, p) == 1) next
    print $0
  }' "$allow" "$entries")
if [ -n "$extra" ]; then
  echo "$extra" | sed 's/^/  /' >&2
  echo "make: the plugin's jar $jar holds the entries above, which $allow does not allow;" \
    "tool code belongs in java-tools, a new runtime class is added to $allow" >&2
  exit 1
fi
