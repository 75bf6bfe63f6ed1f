#!/usr/bin/env bash
# Bounded fuzzing of every parser of outside bytes (feature pages, traces,
# GeoPackage blobs, plot-cache and tile-cache entries, tile images).
#
# Always: the stable-toolchain mutation fuzzer (tests/it/fuzz_parsers.rs),
# FUZZ_SECONDS per target (default 20; six targets on two test threads).
# Also, with LIBFUZZER=1 and a nightly toolchain and cargo-fuzz installed
# (a stock machine has neither; nothing is installed here): libFuzzer on the
# same entry points (fuzz/), FUZZ_SECONDS per target. Opt-in, because its
# instrumented build alone takes about 8 minutes on two cores.
# A finding fails the run; its input is saved under target/fuzz-findings/
# (mutation fuzzer) or fuzz/artifacts/<target>/ (libFuzzer).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${FUZZ_SECONDS:-20}"

echo "stable mutation fuzzer: ${seconds}s per target"
HYDROPLOT_FUZZ_SECONDS="$seconds" cargo test --test it fuzz_parsers:: -- --nocapture --test-threads 2

if [ "${LIBFUZZER:-0}" = 1 ] && cargo +nightly fuzz --version >/dev/null 2>&1; then
    echo "libFuzzer (cargo +nightly fuzz): ${seconds}s per target"
    for target in $(cargo +nightly fuzz list); do
        cargo +nightly fuzz run -O "$target" -- -max_total_time="$seconds" -rss_limit_mb=2048 -print_final_stats=1
    done
else
    echo "libFuzzer skipped (LIBFUZZER=1 with nightly and cargo-fuzz runs it)"
fi
