#!/usr/bin/env bash
# Compiles and runs every code block of README.md and docs/*.md that follows
# a `<!-- ci: run -->` line (languages c, cpp, python, r), each against the
# loopback mock, so the quick starts cannot rot.
#
#   tests/bindings/doc_snippets.sh PREFIX R_LIBS PYTHON
# PREFIX: an install prefix (include/, lib/); R_LIBS: where the R package is
# installed; PYTHON: a Python with the package and the test deps installed.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
prefix="$1"
rlibs="$2"
python="$3"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

# Writes each marked block to $out/<n>.<lang> and prints "<file> <source>:<line>".
extract() {
    awk -v out="$out" -v id="$(echo "$1" | tr '/.' '__')" -v src="$1" '
        /^<!-- ci: run -->$/ { armed = 1; next }
        armed && /^```[a-z+]+$/ { file = out "/" id "-" (++n) "." substr($0, 4); start = NR; inblock = 1; armed = 0; next }
        inblock && /^```$/ { inblock = 0; close(file); print file, src ":" start; next }
        inblock { print > file; next }
        { armed = 0 }
    ' "$1"
}

run() { # run FILE WHERE
    local file="$1" where="$2" exe="${1%.*}"
    echo "--- $where (${file##*.})"
    case "$file" in
    *.c) cc -std=c99 -Wall -Wextra -Wpedantic -Werror -I"$prefix/include" -x c "$file" \
            -L"$prefix/lib" -Wl,-rpath,"$prefix/lib" -lhydroplot -o "$exe" && "$root/tests/bindings/with-mock.sh" "$exe" ;;
    *.cpp) c++ -std=c++17 -Wall -Wextra -Wpedantic -Werror -I"$root/include" -I"$prefix/include" -x c++ "$file" \
            -L"$prefix/lib" -Wl,-rpath,"$prefix/lib" -lhydroplot -o "$exe" && "$root/tests/bindings/with-mock.sh" "$exe" ;;
    *.python) env -u HYDROPLOT_LIBRARY -u PYTHONPATH "$root/tests/bindings/with-mock.sh" "$python" "$file" ;;
    *.r) R_LIBS="$rlibs" "$root/tests/bindings/with-mock.sh" Rscript "$file" ;;
    *) echo "unknown snippet language: $file"; return 1 ;;
    esac
}

cd "$out"
failed=0
total=0
for doc in "$root"/README.md "$root"/docs/*.md; do
    [ -f "$doc" ] || continue
    while read -r file where; do
        total=$((total + 1))
        run "$file" "${where#"$root"/}" || { failed=$((failed + 1)); echo "FAILED: ${where#"$root"/}"; }
    done < <(extract "$doc")
done
echo "doc snippets: $((total - failed)) passed, $failed failed"
[ "$total" -gt 0 ] && [ "$failed" -eq 0 ]
