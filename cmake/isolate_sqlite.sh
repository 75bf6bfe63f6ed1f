#!/usr/bin/env bash
# Renames the SQLite bundled in a static libhydroplot.a (sqlite3_* ->
# hydroplot_private_sqlite3_*, definitions and references alike), so a
# program that links the archive and the system libsqlite3 keeps the system
# SQLite for its own calls and for every library it loads (GDAL, PROJ, ...).
# Without it the archive's copy answers the host's sqlite3_* calls.
#
#   cmake/isolate_sqlite.sh IN.a OUT.a   (CMake runs it on every build)
set -euo pipefail
in="$1"
out="$2"
map="$(mktemp)"
trap 'rm -f "$map"' EXIT
nm --defined-only "$in" 2>/dev/null |
    awk '$2 ~ /^[TDBRCW]$/ && $3 ~ /^sqlite3/ { print $3, "hydroplot_private_" $3 }' | sort -u >"$map"
cp "$in" "$out.tmp"
objcopy --redefine-syms="$map" "$out.tmp"
mv "$out.tmp" "$out"
echo "isolate_sqlite: renamed $(wc -l <"$map") bundled SQLite symbols in $out"
