#!/usr/bin/env bash
# CI for the language bindings, run from the repository root as
# `bash bindings/ci.sh` (.ci/run calls it). Installs what is missing (Debian
# packages for R, sf, png, jsonlite, ggplot2 and doxygen), then against the
# loopback mock and the Yahara sample:
#   packaging checks (SONAME, exported symbols, install layout),
#   a C program linking our library with the system SQLite,
#   the C++ example,
#   the R package installed twice, built from the crate's sources (R CMD
#   INSTALL bindings/r) and against the install prefix (HYDROPLOT_PREFIX),
#   each tested with and without sf and with sf loaded in the same session
#   R CMD build + R CMD check of the source tarball (HYDROPLOT_CI_R_CHECK=0 skips it),
#   the Python package as a user installs it (pip install bindings/python in
#   a fresh venv under target/, which builds the crate) and its tests
#   (pytest, Dask, geopandas) against the installed wheel,
#   the API reference (doxygen) and the docs' code blocks.
# Prints one `test result: ...` line per test runner at the end, in cargo's
# format, so .ci/run's summary counts them. Writes only under target/ (the
# in-place R install removes its objects again: R CMD INSTALL --clean).
set -euo pipefail

cd "$(dirname "$0")/.."
root=$PWD
target="${CARGO_TARGET_DIR:-$root/target}"
work="$target/bindings"
mkdir -p "$work"
summary="$work/summary"
: >"$summary"
export HYDROPLOT_TEST_DATA="$root/tests/data"
export PYTHONDONTWRITEBYTECODE=1
export HYDROPLOT_TEST_MOCK_BIN="$target/debug/hydroplot-mock"
with_mock="$root/tests/bindings/with-mock.sh"

# shellcheck source=../.ci/pytest_counts.sh
. .ci/pytest_counts.sh
# Each section's start, in seconds since the step began: where its time goes.
section() { echo; echo "--- bindings: $* --- (at ${SECONDS} s)"; }
# result NAME PASSED FAILED [IGNORED]: one cargo-style summary line.
result() {
    local status=ok
    [ "$3" -eq 0 ] || status=FAILED
    echo "test result: $status. $2 passed; $3 failed; ${4:-0} ignored; ($1)" >>"$summary"
}

section "system packages"
need=()
command -v Rscript >/dev/null || need+=(r-base-core)
command -v doxygen >/dev/null || need+=(doxygen)
for pkg in r-cran-jsonlite r-cran-png r-cran-sf r-cran-ggplot2; do
    dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    export DEBIAN_FRONTEND=noninteractive
    $sudo apt-get update -qq
    # r-cran-sf and r-cran-ggplot2 are optional: without sf the R tests take
    # the data.frame path, without ggplot2 they skip its recipe.
    $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" ||
        $sudo apt-get install -y -qq --no-install-recommends $(printf '%s\n' "${need[@]}" | grep -vE '^r-cran-(sf|ggplot2)$')
fi
R --version | head -n 1
doxygen --version

section "library and mock"
cargo build -q -p hydroplot-mock
# The install prefix the bindings use: the CMake install of .ci/run when there
# is one (so its layout is what gets tested), else the debug build laid out the same way.
soname="libhydroplot.so.$(sed -n 's/^version = "\([0-9.]*\)"/\1/p' Cargo.toml | head -n 1)"
if [ -f "$target/stage/lib/$soname" ]; then
    prefix="$target/stage"
else
    cargo build -q --lib
    prefix="$work/prefix"
    rm -rf "$prefix"
    mkdir -p "$prefix/include" "$prefix/lib"
    cp include/hydroplot.h "$prefix/include/"
    cp "$target/debug/libhydroplot.so" "$prefix/lib/$soname"
    ln -s "$soname" "$prefix/lib/libhydroplot.so"
fi
echo "prefix: $prefix"
libso="$prefix/lib/$soname"

section "packaging: SONAME, exported symbols, install layout"
pack_pass=0
pack_fail=0
pack() { # pack NAME CMD...: one packaging check
    if "${@:2}"; then pack_pass=$((pack_pass + 1)); echo "ok   $1"; else pack_fail=$((pack_fail + 1)); echo "FAIL $1"; fi
}
soname_is() { objdump -p "$libso" | grep -q "SONAME *$soname\$"; }
only_hydroplot_exported() {
    local others
    others=$(nm -D --defined-only "$libso" | awk '{print $NF}' | grep -v '^hydroplot_' || true)
    [ -z "$others" ] || { echo "exported besides hydroplot_*:"; echo "$others" | head; return 1; }
}
no_sqlite_exported() { ! nm -D --defined-only "$libso" | grep -q ' sqlite3_'; }
version_macros() { grep -q "#define HYDROPLOT_VERSION \"${soname#libhydroplot.so.}\"" "$prefix/include/hydroplot.h"; }
installed_layout() {
    [ "$prefix" = "$work/prefix" ] && { echo "(no CMake install: layout not checked)"; return 0; }
    local f
    for f in include/hydroplot.h "lib/$soname" lib/libhydroplot.so lib/libhydroplot.a \
        lib/pkgconfig/hydroplot.pc lib/cmake/hydroplot/hydroplotConfig.cmake; do
        [ -e "$prefix/$f" ] || { echo "missing $f"; return 1; }
    done
    PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --modversion hydroplot
}
pack "SONAME is $soname" soname_is
pack "only hydroplot_* symbols exported (nm -D)" only_hydroplot_exported
pack "the bundled SQLite is not exported" no_sqlite_exported
pack "version macros match Cargo.toml" version_macros
pack "installed layout (header, libraries, hydroplot.pc, CMake package)" installed_layout
result packaging "$pack_pass" "$pack_fail"

section "C: our library with the system SQLite in one process"
cc -std=c99 -Wall -Wextra -Wpedantic -Werror -I"$prefix/include" tests/bindings/sqlite_together.c \
    -L"$prefix/lib" -Wl,-rpath,"$prefix/lib" -lhydroplot -lsqlite3 -o "$work/sqlite_together"
sq_pass=0
sq_fail=0
sq_ignored=0
if "$work/sqlite_together" "$HYDROPLOT_TEST_DATA/yahara_sample.gpkg"; then sq_pass=1; else sq_fail=1; fi
# The static archive bundles SQLite with global symbols: linked beside the
# system libsqlite3 its copy answers the host's calls (docs/packaging.md).
# cmake/isolate_sqlite.sh renames them; check that recipe, and the
# installed archive, which is isolated once the CMake build applies it.
static_link() { # static_link ARCHIVE OUT
    cc -std=c99 -I"$prefix/include" tests/bindings/sqlite_together.c "$1" -lsqlite3 -lpthread -ldl -lm -o "$2"
}
archive="$prefix/lib/libhydroplot.a"
[ -f "$archive" ] || archive="$target/debug/libhydroplot.a"
cmake/isolate_sqlite.sh "$archive" "$work/libhydroplot-isolated.a"
if static_link "$work/libhydroplot-isolated.a" "$work/sqlite_static_isolated" &&
    "$work/sqlite_static_isolated" "$HYDROPLOT_TEST_DATA/yahara_sample.gpkg"; then
    sq_pass=$((sq_pass + 1))
else
    sq_fail=$((sq_fail + 1))
fi
if static_link "$archive" "$work/sqlite_static" && "$work/sqlite_static" "$HYDROPLOT_TEST_DATA/yahara_sample.gpkg"; then
    sq_pass=$((sq_pass + 1))
else
    echo "NOTE: $archive is not isolated yet: apply cmake/isolate_sqlite.sh when installing it"
    sq_ignored=1
fi
rm -f "$work/libhydroplot-isolated.a"
result sqlite "$sq_pass" "$sq_fail" "$sq_ignored"

section "C++: the example against the mock"
cxx_out="$work/cpp"
rm -rf "$cxx_out"
mkdir -p "$cxx_out"
c++ -std=c++17 -Wall -Wextra -Wpedantic -Werror -I"$root/include" -I"$prefix/include" examples-cpp/plot_trace.cpp \
    -L"$prefix/lib" -Wl,-rpath,"$prefix/lib" -lhydroplot -o "$work/plot_trace"
"$with_mock" "$work/plot_trace" 13293970 "$cxx_out" | tee "$work/plot_trace.out"
cpp_pass=0
cpp_fail=0
# Published figures upstream of 13293970 (nhdplusTools, the Yahara sample):
# 251 flowlines, 250 catchments, 117 waterbodies network and off-network
# together (the split is not published); the trace is the recorded real answer
# (tests/data/responses/SOURCES.md).
for want in "flowline           251" "catchment          250" \
    'upstreamFlowline comid 13297178 "Yahara River" reachcode 07090002007369 raindrop_pathDist 242.09 measure 30.15' \
    "HYDROPLOT_ERR_HTTP (HTTP 500)"; do
    if grep -qF "$want" "$work/plot_trace.out"; then cpp_pass=$((cpp_pass + 1)); else cpp_fail=$((cpp_fail + 1)); echo "missing: $want"; fi
done
waterbodies=$(awk '$1 == "network_wtbd" || $1 == "off_network_wtbd" { n++; s += $2 } END { print (n == 2 ? s : -1) }' \
    "$work/plot_trace.out")
if [ "$waterbodies" -eq 117 ]; then
    cpp_pass=$((cpp_pass + 1))
else
    cpp_fail=$((cpp_fail + 1)); echo "network + off-network waterbodies: $waterbodies, not 117"
fi
for png in basin trace; do
    if head -c 8 "$cxx_out/$png.png" | od -An -tx1 | grep -q '89 50 4e 47 0d 0a 1a 0a'; then
        cpp_pass=$((cpp_pass + 1))
    else
        cpp_fail=$((cpp_fail + 1)); echo "not a PNG: $cxx_out/$png.png"
    fi
done
c++ -std=c++17 -Wall -Wextra -Wpedantic -Werror -Wno-self-move -I"$root/include" -I"$prefix/include" \
    tests/cpp/moved_from.cpp -L"$prefix/lib" -Wl,-rpath,"$prefix/lib" -lhydroplot -o "$work/moved_from"
if (cd "$cxx_out" && "$with_mock" "$work/moved_from"); then
    cpp_pass=$((cpp_pass + 1))
else
    cpp_fail=$((cpp_fail + 1)); echo "moved-from objects of the C++ wrapper: see above"
fi
[ ! -e "$cxx_out/never.png" ] || { cpp_fail=$((cpp_fail + 1)); echo "a moved-from map wrote never.png"; }
result c++ "$cpp_pass" "$cpp_fail"

# The packages are built from the clone the way a user installs them, from
# another working directory; the Python and R builds share cargo's target
# directory with the rest of CI (the CMake build's profile), so
# the crate compiles once: R's cargo build and pip's (pyproject.toml asks
# for Cargo.toml's crate types) are the CMake build's. pip's install, its
# dependencies mostly, runs in the background of R's tests.
section "R: R CMD INSTALL (crate built from source; CMake-installed library), tests with and without sf, sf in one session"
r_pass=0
r_fail=0
# r_tests LIB: the test script with sf and without, and sf with our library
# in one session, against the package installed in LIB.
r_tests() {
    local mode log rc counts
    for mode in sf no-sf; do
        log="$work/r-$mode.log"
        rc=0
        if [ "$mode" = no-sf ]; then export HYDROPLOT_R_NO_SF=1; else unset HYDROPLOT_R_NO_SF; fi
        R_LIBS="$1" "$with_mock" Rscript bindings/r/tests/test_hydroplot.R 2>&1 | tee "$log" || rc=$?
        unset HYDROPLOT_R_NO_SF
        counts=$(sed -n 's/^hydroplot-r: \([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p' "$log")
        [ -n "$counts" ] || counts="0 1" # the script died before its summary
        r_pass=$((r_pass + ${counts% *}))
        r_fail=$((r_fail + ${counts#* }))
        [ "$rc" -eq 0 ] || [ "${counts#* }" -gt 0 ] || r_fail=$((r_fail + 1))
    done
    rc=0
    R_LIBS="$1" Rscript tests/bindings/sf_together.R "$HYDROPLOT_TEST_DATA/yahara_sample.gpkg" || rc=$?
    if [ "$rc" -eq 0 ]; then r_pass=$((r_pass + 1)); else r_fail=$((r_fail + 1)); fi
}
# 1. As a user installs it: from the clone, the crate built by cargo and
#    linked statically (--clean: configure's and make's output leave the clone).
rlib="$work/rlib"
rm -rf "$rlib"
mkdir -p "$rlib"
start=$SECONDS
(cd "$work" && env -u HYDROPLOT_PREFIX HYDROPLOT_CARGO_TARGET_DIR="$target" PKG_CONFIG_PATH= \
    R CMD INSTALL --no-docs --clean -l "$rlib" "$root/bindings/r") >"$work/r-install.log" 2>&1 ||
    { cat "$work/r-install.log"; exit 1; }
grep -q '^configure: hydroplot built from source' "$work/r-install.log" ||
    { cat "$work/r-install.log"; echo "R CMD INSTALL did not build the crate"; exit 1; }
echo "R CMD INSTALL bindings/r: $((SECONDS - start)) s"
# docs/r.md's install check: the sample's 251 flowlines upstream of 13293970.
if [ "$(R_LIBS="$rlib" Rscript -e 'library(hydroplot); nrow(plot_hydro(list(13293970), hydro_data = "tests/data/yahara_sample.gpkg", actually_plot = FALSE)$flowline)')" = "[1] 251" ]; then
    r_pass=$((r_pass + 1))
else
    r_fail=$((r_fail + 1)); echo "FAIL docs/r.md's install one-liner"
fi
# pip's install (its cargo build is R's, fresh in the same target
# directory; the rest is the venv's dependencies) runs in the background
# while R runs its tests and checks; the Python section waits for it.
venv="$work/venv"
rm -rf "$venv"
python3 -m venv "$venv"
pip_log="$work/pip-install.log"
pip_start=$SECONDS
(cd "$work" && CARGO_TARGET_DIR="$target" "$venv/bin/pip" install -q "$root/bindings/python[test,dask,geo,plot]" numpy \
    && echo "pip install bindings/python: $((SECONDS - pip_start)) s, in the background") >"$pip_log" 2>&1 &
pip_install=$!
r_tests "$rlib"
# 2. Against the install prefix (HYDROPLOT_PREFIX), from a copy of the sources.
rlib_prefix="$work/rlib-prefix"
rsrc="$work/r-src"
rm -rf "$rlib_prefix" "$rsrc"
mkdir -p "$rlib_prefix"
cp -r bindings/r "$rsrc"
HYDROPLOT_PREFIX="$prefix" R CMD INSTALL --no-docs -l "$rlib_prefix" "$rsrc" >"$work/r-install-prefix.log" 2>&1 ||
    { cat "$work/r-install-prefix.log"; exit 1; }
r_tests "$rlib_prefix"
result R "$r_pass" "$r_fail"

# 3. The source tarball as CRAN would take it (HYDROPLOT_CI_R_CHECK=0 skips
#    it): R CMD build (vendors the dependencies) then R CMD check --no-manual,
#    which builds the crate again offline from the vendored sources. Nothing
#    can be shared with the builds above (cargo keys a dependency's build to
#    the path of its sources), so CI has cargo compile that build without
#    optimisation (CARGO_PROFILE_RELEASE_OPT_LEVEL=0): what the check checks
#    is that the tarball builds offline and passes, not its speed. It builds
#    the release profile whatever HYDROPLOT_CARGO_PROFILE says: CI's one
#    build of that profile's settings (.ci/run builds the rest as dev).
if [ "${HYDROPLOT_CI_R_CHECK:-1}" = 1 ]; then
    section "R: R CMD build, R CMD check --no-manual of the tarball"
    rcheck="$work/rcheck"
    rm -rf "$rcheck"
    mkdir -p "$rcheck"
    rc=0
    (cd "$rcheck" && R CMD build "$root/bindings/r" &&
        env -u HYDROPLOT_CARGO_PROFILE CARGO_PROFILE_RELEASE_OPT_LEVEL=0 \
            "$with_mock" R CMD check --no-manual hydroplot_*.tar.gz) 2>&1 |
        tee "$work/r-check.log" || rc=$?
    # Passes with NOTEs (installed size, Rust's std calling abort), not with WARNINGs or ERRORs.
    if [ "$rc" -eq 0 ] && grep -qE '^Status: (OK|[0-9]+ NOTEs?)$' "$work/r-check.log"; then
        result R-check 1 0
    else
        result R-check 0 1
    fi
fi

section "Python: pip install bindings/python in a fresh venv, then pytest (plots, traces, Dask)"
pip_rc=0
wait "$pip_install" || pip_rc=$?
cat "$pip_log"
[ "$pip_rc" -eq 0 ] || { echo "pip install bindings/python failed"; exit 1; }
# The wheel pip built, checked by auditwheel: which manylinux tag it meets
# (auditwheel repair would give it; pip's own wheel says linux_x86_64).
wheels="$work/wheels"
rm -rf "$wheels" "$work/auditwheel.log"
(cd "$work" && CARGO_TARGET_DIR="$target" "$venv/bin/pip" wheel -q --no-deps -w "$wheels" "$root/bindings/python") &&
    "$venv/bin/pip" install -q auditwheel && "$venv/bin/auditwheel" show "$wheels"/hydroplot-*.whl | tee "$work/auditwheel.log" ||
    true # judged below, with the tests
py_log="$work/pytest.log"
rc=0
# The installed package, not the sources: no PYTHONPATH, no HYDROPLOT_LIBRARY,
# run from outside the source tree.
(cd "$work" && env -u HYDROPLOT_LIBRARY -u PYTHONPATH "$venv/bin/python" - <<'PY'
import pathlib, sys
import hydroplot, hydroplot._ffi as ffi
bundled = ffi._bundled()
print("hydroplot", hydroplot.__file__, "library", bundled)
assert bundled and pathlib.Path(hydroplot.__file__).is_relative_to(sys.prefix), "not the installed wheel's library"
PY
) 2>&1 | tee "$py_log" || rc=$?
grep -q 'consistent with the following platform tag: *"manylinux' <(tr '\n' ' ' <"$work/auditwheel.log") ||
    { echo "the wheel meets no manylinux policy"; rc=1; }
(cd "$work" && env -u HYDROPLOT_LIBRARY -u PYTHONPATH \
    "$venv/bin/python" -m pytest -q -p no:cacheprovider "$root/bindings/python/tests") 2>&1 | tee -a "$py_log" || rc=$?
pytest_counts "$py_log"
py_pass=$passed
py_fail=$failed
py_skip=$skipped
[ "$rc" -eq 0 ] || [ "${py_fail:-0}" -gt 0 ] || py_fail=1
# docs/python.md's install check: the sample's 251 flowlines upstream of 13293970.
one_liner='import hydroplot; print(len(hydroplot.plot_hydro([13293970], hydro_data="tests/data/yahara_sample.gpkg", actually_plot=False, output="geojson")["flowline"]["features"]))'
if [ "$(env -u HYDROPLOT_LIBRARY -u PYTHONPATH "$venv/bin/python" -c "$one_liner")" = 251 ]; then
    py_pass=$((py_pass + 1))
else
    py_fail=$((py_fail + 1)); echo "FAIL docs/python.md's install one-liner"
fi
result python "${py_pass:-0}" "${py_fail:-0}" "${py_skip:-0}"

section "docs: API reference and the guides' code"
rm -rf "$work/api"
(cat docs/Doxyfile; echo "OUTPUT_DIRECTORY = $work/api") | doxygen - >"$work/doxygen.log" 2>&1
doc_pass=0
doc_fail=0
if [ -s "$work/api/html/hydroplot_8h.html" ] && ! grep -qE 'warning:|error:' "$work/doxygen.log"; then
    doc_pass=$((doc_pass + 1))
else
    doc_fail=$((doc_fail + 1)); grep -E 'warning:|error:' "$work/doxygen.log" | head
fi
rc=0
"$root/tests/bindings/doc_snippets.sh" "$prefix" "$rlib" "$venv/bin/python" || rc=$?
if [ "$rc" -eq 0 ]; then doc_pass=$((doc_pass + 1)); else doc_fail=$((doc_fail + 1)); fi
result docs "$doc_pass" "$doc_fail"

echo
echo "=== bindings summary ==="
cat "$summary"
! grep -q 'test result: FAILED' "$summary"
