#!/usr/bin/env bash
# Runs a command with the loopback mock services up and the HYDROPLOT_*
# environment pointing every service at them, then stops the mock:
#
#   tests/bindings/with-mock.sh Rscript bindings/r/tests/test_hydroplot.R
#
# The mock is $HYDROPLOT_TEST_MOCK_BIN (default target/debug/hydroplot-mock,
# built by `cargo build -p hydroplot-mock`). Tiles are
# cached under a temporary directory removed on exit.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
mock="${HYDROPLOT_TEST_MOCK_BIN:-${CARGO_TARGET_DIR:-$root/target}/debug/hydroplot-mock}"
# Indexes of the local files plotted stay in the build tree, never in the
# user's cache directory (a HYDROPLOT_INDEX_DIR already set wins: .ci/run's).
export HYDROPLOT_INDEX_DIR="${HYDROPLOT_INDEX_DIR:-${CARGO_TARGET_DIR:-$root/target}/hydroplot-index}"
tmp="$(mktemp -d)"
mkfifo "$tmp/in"
"$mock" <"$tmp/in" >"$tmp/out" &
mock_pid=$!
exec 3>"$tmp/in" # holds the mock's stdin open; closing it stops the mock
cleanup() {
    exec 3>&-
    wait "$mock_pid" || true
    rm -rf "$tmp"
}
trap cleanup EXIT
for _ in $(seq 1 100); do
    grep -q '^listening ' "$tmp/out" 2>/dev/null && break
    sleep 0.1
done
base="$(sed -n 's/^listening \(.*[^/]\)\/*$/\1/p' "$tmp/out" | head -n 1)"
if [ -z "$base" ]; then
    echo "with-mock.sh: the mock $mock did not start" >&2
    exit 1
fi
export HYDROPLOT_INDEX_URL="$base/nldi"
export HYDROPLOT_FABRIC_URL="$base/fabric/pygeoapi"
export HYDROPLOT_TILE_URL="$base/tiles/{z}/{x}/{y}.png"
export HYDROPLOT_TILE_CACHE_DIR="$tmp/tiles"
export HYDROPLOT_TEST_MOCK_URL="$base"
"$@"
