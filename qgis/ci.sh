#!/usr/bin/env bash
# CI of the QGIS plugin, run from anywhere as `bash qgis/ci.sh` (.ci/run may
# call it). Installs what is missing (Debian's QGIS 3.22 Python bindings and
# providers, pytest), installs the hydroplot Python package for the system
# Python as a user would (pip install bindings/python, which builds the
# crate, into target/qgis/site, put on PYTHONPATH), builds the mock, then
# runs qgis/tests headless (QT_QPA_PLATFORM=offscreen) with /usr/bin/python3.
# Prints one cargo-style `test result: ...` line at the end, as bindings/ci.sh
# does. Under CI=true a missing QGIS is a failure; elsewhere it is a skip.
# Writes only under target/ (CARGO_TARGET_DIR when set).
set -euo pipefail

cd "$(dirname "$0")/.."
root=$PWD
# shellcheck source=../.ci/pytest_counts.sh
. .ci/pytest_counts.sh
target="${CARGO_TARGET_DIR:-$root/target}"
# Indexes of the local files plotted stay in the build tree, never in the
# user's cache directory (a HYDROPLOT_INDEX_DIR already set wins: .ci/run's).
export HYDROPLOT_INDEX_DIR="${HYDROPLOT_INDEX_DIR:-$target/hydroplot-index}"
work="$target/qgis"
mkdir -p "$work"
# QGIS leaves its Qt temporary folders behind: they go in the work folder,
# emptied at each run, not in the system's temporary folder.
export TMPDIR="$work/tmp"
rm -rf "$TMPDIR"
mkdir -p "$TMPDIR"
python=/usr/bin/python3
export PYTHONDONTWRITEBYTECODE=1
export QT_QPA_PLATFORM=offscreen
export HYDROPLOT_TEST_DATA="$root/tests/data"
export HYDROPLOT_TEST_MOCK_BIN="$target/debug/hydroplot-mock"

result() { # result PASSED FAILED [IGNORED]
    local status=ok
    [ "$2" -eq 0 ] || status=FAILED
    echo "test result: $status. $1 passed; $2 failed; ${3:-0} ignored; (qgis)"
}

echo "--- qgis: system packages ---"
need=()
for pkg in python3-qgis qgis-providers python3-pytest python3-pip; do
    dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    export DEBIAN_FRONTEND=noninteractive
    { $sudo apt-get update -qq && $sudo apt-get install -y -qq --no-install-recommends "${need[@]}"; } || true
fi
if ! "$python" -c 'import qgis.core, pytest' 2>/dev/null; then
    echo "QGIS's Python bindings (python3-qgis) or pytest are missing"
    if [ "${CI:-}" = true ]; then result 0 1; exit 1; fi
    result 0 0 1
    exit 0
fi
"$python" -c 'from qgis.core import Qgis; print("QGIS", Qgis.QGIS_VERSION)'

echo "--- qgis: the mock and the hydroplot Python package ---"
cargo build -q -p hydroplot-mock
site="$work/site"
rm -rf "$site"
start=$SECONDS
# pip builds the crate in cargo's target directory shared with CI:
# the CMake build's, reused as it is (bindings/python/pyproject.toml).
(cd "$work" && CARGO_TARGET_DIR="$target" "$python" -m pip install -q --no-deps --target "$site" "$root/bindings/python") ||
    { echo "pip install bindings/python failed"; result 0 1; exit 1; }
echo "pip install --target $site bindings/python: $((SECONDS - start)) s"
export PYTHONPATH="$site"

echo "--- qgis: tests (pytest, headless) ---"
log="$work/pytest.log"
rc=0
(cd "$work" && env -u HYDROPLOT_LIBRARY CARGO_TARGET_DIR="$target" \
    "$python" -m pytest -q -p no:cacheprovider "$root/qgis/tests") 2>&1 | tee "$log" || rc=$?
pytest_counts "$log"
[ "$rc" -eq 0 ] || [ "$failed" -gt 0 ] || failed=1
if [ "${CI:-}" = true ] && [ "$skipped" -gt 0 ]; then
    failed=$((failed + skipped)); skipped=0 # in CI a skip is a missing tool: a failure
fi
# docs/qgis.md's screenshot is what this run rendered, byte for byte (after a
# deliberate change of the map tool, copy the new rendering over it).
if cmp -s "$work/qgis-maptool.png" "$root/docs/qgis-maptool.png"; then
    passed=$((passed + 1))
    echo "ok: docs/qgis-maptool.png is this run's rendering ($work/qgis-maptool.png)"
else
    failed=$((failed + 1))
    echo "FAIL: docs/qgis-maptool.png differs from this run's rendering $work/qgis-maptool.png"
fi
result "$passed" "$failed" "$skipped"
[ "$failed" -eq 0 ]
