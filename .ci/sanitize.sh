#!/usr/bin/env bash
# The C tests under AddressSanitizer + UndefinedBehaviorSanitizer (clang),
# leak checking on: the test programs are instrumented, the Rust library is
# the same build the other C tests use (ASan intercepts its
# allocations, so LeakSanitizer sees every byte it leaks). Zero errors and
# zero leaks, or this fails. Valgrind runs of the same tests are in .ci/run.
#
# Usage: bash .ci/sanitize.sh   (CARGO_TARGET_DIR defaults to ./target)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
target="${CARGO_TARGET_DIR:-$root/target}"

if ! command -v clang >/dev/null 2>&1 || ! ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.asan-x86_64.a >/dev/null 2>&1; then
    echo "installing clang and its sanitizer runtimes"
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    export DEBIAN_FRONTEND=noninteractive
    $sudo apt-get update -qq
    $sudo apt-get install -y -qq --no-install-recommends clang libclang-rt-14-dev
fi
clang --version | head -n 1

build="$target/cmake-asan"
flags="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -g"
CC=clang cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release \
    -DHYDROPLOT_CARGO_TARGET_DIR="$target" -DHYDROPLOT_VALGRIND=OFF \
    -DCMAKE_C_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined"
cmake --build "$build" -j 2

export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:halt_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
ctest --test-dir "$build" --output-on-failure -j 2 -R '^c_'
