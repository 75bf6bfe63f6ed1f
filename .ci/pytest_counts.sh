# Sourced by the CI scripts that run pytest (bindings/ci.sh, qgis/ci.sh,
# tests/geos/run.sh), which print one cargo-style summary line of it.
#
# pytest_counts LOG: sets passed, failed (failures and errors) and skipped
# from the last pytest summary line in LOG; all 0 when there is none.
pytest_counts() {
    local line
    line=$(grep -E '^[0-9]+ (passed|failed)|^=+ .*(passed|failed)' "$1" | tail -n 1 || true)
    read -r passed failed skipped < <(
        { grep -oE '[0-9]+ (passed|failed|errors?|skipped)' <<<"$line" || true; } | awk '
            $2 == "passed" { p += $1 }
            $2 ~ /^(failed|errors?)$/ { f += $1 }
            $2 == "skipped" { s += $1 }
            END { print p + 0, f + 0, s + 0 }'
    )
}
