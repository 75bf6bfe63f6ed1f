#!/usr/bin/env bash
# The GEOS oracle test (test_geos_oracle.py), run from the repository root
# as `bash tests/geos/run.sh` after `cargo build --release --bin hydroplot`
# (HYDROPLOT_BIN names another build of the CLI).
# Makes a venv under the target dir with shapely 2 and pytest (from PyPI),
# then runs pytest with CI=true semantics left to the caller: under CI=true
# a missing binary fails instead of skipping. Writes only under target/.
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=../../.ci/pytest_counts.sh
. .ci/pytest_counts.sh
target="${CARGO_TARGET_DIR:-$PWD/target}"
# Indexes of the local files plotted stay in the build tree, never in the
# user's cache directory (a HYDROPLOT_INDEX_DIR already set wins: .ci/run's).
export HYDROPLOT_INDEX_DIR="${HYDROPLOT_INDEX_DIR:-$target/hydroplot-index}"
venv="$target/geos-venv"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/python" -c 'import shapely, pytest' 2>/dev/null ||
    "$venv/bin/pip" install -q 'shapely>=2' pytest
export HYDROPLOT_BIN="${HYDROPLOT_BIN:-$target/release/hydroplot}"
export PYTHONDONTWRITEBYTECODE=1
log="$target/geos-pytest.log"
rc=0
"$venv/bin/python" -m pytest -q -p no:cacheprovider tests/geos "$@" 2>&1 | tee "$log" || rc=$?
# One cargo-style summary line, which .ci/run counts.
pytest_counts "$log"
[ "$rc" -eq 0 ] || [ "$failed" -gt 0 ] || failed=1
status=ok
[ "$failed" -eq 0 ] || status=FAILED
echo "test result: $status. $passed passed; $failed failed; $skipped ignored; (geos)"
exit "$rc"
