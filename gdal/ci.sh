#!/usr/bin/env bash
# Tests of the HYDROPLOT GDAL driver (docs/gdal.md), for CI:
#
#   gdal/ci.sh [PLUGIN_DIR]
#
# PLUGIN_DIR holds the built ogr_HYDROPLOT.so (default: the CMake build's
# $CARGO_TARGET_DIR/cmake-gdal/gdalplugins). Needs gdal-bin, libgdal-dev,
# sqlite3, gcc, g++; apt-get and dpkg-dev for GDAL's test_ogrsf
# (gdal/test_ogrsf.sh); R with sf, valgrind, and QGIS (python3-qgis,
# qgis-providers, python3-gdal) when present (their checks fail when they are
# missing, so CI cannot skip them by accident; QGIS's only under CI=true). The trace check
# runs against the loopback mock (tests/bindings/with-mock.sh). Every check
# prints ok/FAIL; the last line is the summary .ci/run counts.
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
target="${CARGO_TARGET_DIR:-$root/target}"
# Indexes of the local files plotted stay in the build tree, never in the
# user's cache directory (a HYDROPLOT_INDEX_DIR already set wins: .ci/run's).
export HYDROPLOT_INDEX_DIR="${HYDROPLOT_INDEX_DIR:-$target/hydroplot-index}"
export GDAL_DRIVER_PATH="${1:-$target/cmake-gdal/gdalplugins}"
# GDAL's own drivers are not needed to answer; keep the output ours.
export CPL_DEBUG=OFF
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
sample="$root/tests/data/yahara_sample.gpkg"
conn="HYDROPLOT:comid=13293970&hydro_data=$sample"
trace="HYDROPLOT:trace=-89.2158,42.9561&direction=up"
# Runs a command with the mock services up (HYDROPLOT_* pointing at them).
with_mock="$root/tests/bindings/with-mock.sh"
passed=0
failed=0

check() {
    local name="$1"
    shift
    if "$@" >"$work/out" 2>&1; then
        echo "ok: $name"
        passed=$((passed + 1))
    else
        echo "FAIL: $name"
        sed 's/^/    /' "$work/out" | tail -n 20
        failed=$((failed + 1))
    fi
}

# The feature count ogrinfo reports for one layer of a connection.
count() {
    ogrinfo -ro -so "$@" | sed -n 's/^Feature Count: //p'
}
equals() {
    [ "$1" = "$2" ] || { echo "got '$1', want '$2'"; return 1; }
}

# --- Registration and metadata ------------------------------------------------
check "ogrinfo --formats lists HYDROPLOT" \
    sh -c 'ogrinfo --formats | grep -q "HYDROPLOT -vector-"'
documents_keys() {
    local f
    f="$(ogrinfo --format HYDROPLOT 2>&1)"
    ! grep -qi 'could not parse' <<<"$f" &&
        grep -q 'Connection prefix: HYDROPLOT:' <<<"$f" &&
        for k in COMID COMID_SET SITE FEATURE POINT BBOX STREAMORDER FLOWLINE_ONLY \
            HYDRO_DATA CACHE_DATA TRACE DIRECTION INDEX_URL FABRIC_URL NAMES \
            CA_BUNDLE PROXY OFFLINE; do
            grep -q "name=\"$k\"" <<<"$f" || { echo "missing $k"; return 1; }
        done
}
check "ogrinfo --format HYDROPLOT documents every key" documents_keys
# GDAL's convention: a capability the driver lacks is left out, never "NO".
no_virtualio() {
    /usr/bin/python3 -c 'from osgeo import gdal
md = gdal.GetDriverByName("HYDROPLOT").GetMetadata()
assert md.get("DCAP_VECTOR") == "YES", md
bad = {k: v for k, v in md.items() if k.startswith("DCAP_") and v != "YES"}
assert not bad, bad'
}
check "driver metadata: only DCAP_* = YES (no DCAP_VIRTUALIO=NO; python3-gdal)" no_virtualio

# --- The sample: published Yahara figures (fixtures/README.md) ------------------
published_counts() {
    equals "$(count "$conn" flowline)" 251 &&
        equals "$(count "$conn" catchment)" 250 &&
        equals "$(count "$conn" nhdarea)" 3 &&
        equals "$(count "$conn" flowline_nonnetwork)" 48 &&
        equals "$(count "$conn" gage)" 44 &&
        equals $(($(count "$conn" network_wtbd) + $(count "$conn" off_network_wtbd))) 117
}
check "ogrinfo counts: 251 flowlines, 250 catchments, 3 areas, 48 non-network, 44 gages, 117 waterbodies" \
    published_counts
srs_and_types() {
    local f
    f="$(ogrinfo -ro -so "$conn" flowline)"
    grep -q 'ID\["EPSG",4269\]' <<<"$f" &&
        grep -q '^Geometry: Multi Line String' <<<"$f" &&
        grep -q '^comid: Integer64' <<<"$f" &&
        grep -q '^gnis_name: String' <<<"$f" &&
        grep -q '^lengthkm: Real' <<<"$f" &&
        grep -q '^Geometry Column = geometry' <<<"$f"
}
check "flowline layer: EPSG:4269, multilinestring, Arrow field types" srs_and_types
# An empty layer keeps its declared fields and geometry type (flowlines
# only: no catchment is read); the fields and types the sample declares for
# CatchmentSP (MEDIUMINT, TEXT, REAL), written here by hand.
empty_layer_typed() {
    local f
    f="$(ogrinfo -ro -so "$conn&flowline_only=true" catchment)"
    equals "$(sed -n 's/^Feature Count: //p' <<<"$f")" 0 &&
        grep -q '^Geometry: Multi Polygon' <<<"$f" &&
        equals "$(grep -E '^[a-z_]+: ' <<<"$f" | cut -d' ' -f1-2 | tr '\n' ' ')" \
            "gridcode: Integer64 featureid: Integer64 sourcefc: String areasqkm: Real shape_length: Real shape_area: Real "
}
check "an empty layer (no catchment read) is Multi Polygon with its 6 typed fields" empty_layer_typed
open_options() {
    equals "$(count -oo COMID=13293970 -oo "HYDRO_DATA=$sample" -oo FLOWLINE_ONLY=YES HYDROPLOT: flowline)" 251 &&
        equals "$(count -oo FLOWLINE_ONLY=YES "$conn" catchment)" 0
}
check "open options (-oo COMID=...) as the connection keys" open_options
# QGIS passes NOLOCK=ON to a string naming a .gpkg, GDAL's utilities and sf
# pass others: GDAL's warning, and the open goes on. The string's own keys
# stay strict (bad_strings below).
foreign_open_options() {
    local out
    out="$(ogrinfo -ro -so -oo NOLOCK=ON -oo LIST_ALL_TABLES=YES "$conn" flowline 2>&1)" ||
        { echo "$out"; return 1; }
    grep -q '^Feature Count: 251$' <<<"$out" &&
        grep -q '^Warning 6: driver HYDROPLOT does not support open option NOLOCK$' <<<"$out" &&
        ! grep -q '^ERROR' <<<"$out" || { echo "$out"; return 1; }
}
check "open options not the driver's (NOLOCK, LIST_ALL_TABLES): a warning, and it opens" \
    foreign_open_options

# The upstream set, computed independently (SQL over the sample).
upstream_sql="$(grep -v '^--' "$root/gdal/upstream.sql")"
ogr2ogr_set() {
    ogr2ogr -f GPKG "$work/yahara.gpkg" "$conn" || return 1
    local r
    r="$(sqlite3 "$work/yahara.gpkg" "ATTACH '$sample' AS s;
        WITH want AS ($upstream_sql)
        SELECT (SELECT count(*) FROM want), (SELECT count(DISTINCT comid) FROM flowline),
               (SELECT count(*) FROM want WHERE COMID NOT IN (SELECT comid FROM flowline)),
               (SELECT count(*) FROM flowline WHERE comid NOT IN (SELECT COMID FROM want)),
               (SELECT srs_id FROM gpkg_geometry_columns WHERE table_name = 'flowline');")"
    equals "$r" "251|251|0|0|4269"
}
check "ogr2ogr -f GPKG writes exactly the upstream comid set (SQL over the sample)" ogr2ogr_set
filters() {
    local want
    want="$(sqlite3 "$sample" "ATTACH '$sample' AS s; SELECT count(*) FROM ($upstream_sql) u
        JOIN NHDFlowline_Network f ON f.COMID = u.COMID WHERE f.StreamOrde >= 3;")"
    equals "$(count "$conn" flowline -where 'streamorde >= 3')" "$want" &&
        equals "$(count "$conn" flowline -spat -89.5 43.0 -89.3 43.1)" \
            "$(count "$work/yahara.gpkg" flowline -spat -89.5 43.0 -89.3 43.1)"
}
check "attribute filter (SQL count) and spatial filter (GPKG driver's count)" filters
random_read() {
    # ogr2ogr kept the order: our FID 7 is the GeoPackage's fid 8.
    local ours theirs
    ours="$(ogrinfo -ro -q "$conn" flowline -fid 7 | sed -n 's/^ *comid (Integer64) = //p')"
    theirs="$(sqlite3 "$work/yahara.gpkg" 'SELECT comid FROM flowline WHERE fid = 8')"
    [ -n "$ours" ] && equals "$ours" "$theirs" &&
        ! ogrinfo -ro -q "$conn" flowline -fid 251 | grep -q OGRFeature
}
check "random read by FID" random_read

# --- Arrow: hydroplot's own stream where it fits, GDAL's otherwise ------------
probe="$work/arrow_probe"
arrow_streams() {
    gcc -std=c99 -Wall -Wextra -Werror $(gdal-config --cflags) -o "$probe" \
        "$root/gdal/arrow_probe.c" $(gdal-config --libs) || return 1
    equals "$("$probe" "$conn" flowline NO)" \
        "rows=251 columns=$(($(ogrinfo -ro -so "$conn" flowline | grep -c '^[a-z_0-9]*: ') + 1)) first=geometry geometry_extension=geoarrow.wkb" &&
        "$probe" "$conn" flowline YES | grep -q '^rows=251 .* first=OGC_FID ' &&
        "$probe" "$conn" flowline NO 'streamorde >= 3' |
        grep -q "^rows=$(count "$conn" flowline -where 'streamorde >= 3') "
}
check "GetArrowStream: own stream (251 rows, GeoArrow WKB); FID and filters through GDAL" arrow_streams

# --- The layer over hand-made Arrow streams (gdal/layer_test.cpp) ----------------
if g++ -std=c++17 -Wall -Wextra -Werror $(gdal-config --cflags) -I"$root/include" \
    -o "$work/layer_test" "$root/gdal/layer_test.cpp" "$root/gdal/arrow_table.cpp" \
    "$root/gdal/ogrhydroplotlayer.cpp" $(gdal-config --libs) >"$work/out" 2>&1; then
    "$work/layer_test" | grep -E '^(ok|FAIL): ' | tee "$work/layer_test.out"
    passed=$((passed + $(grep -c '^ok: ' "$work/layer_test.out")))
    failed=$((failed + $(grep -c '^FAIL: ' "$work/layer_test.out")))
    grep -q '^ok: ' "$work/layer_test.out" || { echo "FAIL: layer_test ran no check"; failed=$((failed + 1)); }
else
    echo "FAIL: gdal/layer_test.cpp does not build"
    sed 's/^/    /' "$work/out" | tail -n 20
    failed=$((failed + 1))
fi

# --- The raindrop trace, through the mock ---------------------------------------
mock="${HYDROPLOT_TEST_MOCK_BIN:-$target/debug/hydroplot-mock}"
[ -x "$mock" ] || (cd "$root" && cargo build -q -p hydroplot-mock)
trace_fields() {
    local f
    f="$("$with_mock" ogrinfo -ro -al "$trace")" ||
        return 1
    equals "$(sed -n 's/^Feature Count: //p' <<<"$f")" 2 &&
        grep -q 'ID\["EPSG",4326\]' <<<"$f" &&
        grep -q '^Geometry: Line String' <<<"$f" &&
        for field in 'id: String' 'gnis_name: String' 'comid: Integer64' 'reachcode: String' \
            'raindrop_pathDist: Real' 'measure: Real' 'intersection_point: RealList'; do
            grep -q "^$field " <<<"$f" || { echo "missing field $field"; return 1; }
        done &&
        grep -q '^  comid (Integer64) = 13297178$' <<<"$f" &&
        grep -q '^  id (String) = raindropPath$' <<<"$f" &&
        grep -q '^  intersection_point (RealList) = (2:-89.21' <<<"$f"
}
check "trace: 2 features, the spec's 7 fields, EPSG:4326 (mock flowtrace)" trace_fields

# properties=plot through the mock's fabric service: the published 251
# flowlines, with far fewer fields than the 138 the service holds.
properties_plot() {
    local f fields
    f="$("$with_mock" ogrinfo -ro -so "HYDROPLOT:comid=13293970&properties=plot" flowline)" ||
        return 1
    echo "$f" | grep -q '^Feature Count: 251$' || { echo "$f"; return 1; }
    fields=$(echo "$f" | grep -cE '^[A-Za-z_0-9]+: (Integer64|Integer|Real|String)')
    echo "fields: $fields"
    [ "$fields" -gt 0 ] && [ "$fields" -lt 20 ]
}
check "properties=plot: 251 flowlines from the mock with only the plot's fields" properties_plot

# The library's warnings reach GDAL as warnings, not only its debug output:
# no flowline upstream of the outlet has stream order 9.
library_warning() {
    local f
    f="$("$with_mock" ogrinfo -ro -so "HYDROPLOT:comid=13293970&streamorder=9" flowline 2>&1)" ||
        return 1
    grep -q '^Warning 1: HYDROPLOT: outlet comid/13293970 (comid 13293970) is not among the flowlines fetched' <<<"$f" ||
        { echo "$f"; return 1; }
}
check "the library's warnings are GDAL warnings (an outlet the stream order filter leaves out)" library_warning

# --- GDAL's own driver test program (gdal/test_ogrsf.sh builds it) --------------
# test_ogrsf -ro: counts, filters, extents, random reads, SQL, ignored fields,
# the Arrow stream, each feature's SRS object; -fsf adds the full spatial
# filter tests. Passing: exit 0 and no ERROR or FAILURE line.
ogrsf_clean() {
    local rc=0
    "$@" >"$work/ogrsf.out" 2>&1 || rc=$?
    if [ "$rc" -ne 0 ] || grep -qE '^(ERROR|FAILURE)' "$work/ogrsf.out"; then
        grep -E '^(ERROR|FAILURE)' "$work/ogrsf.out" | sort | uniq -c | head -n 15
        echo "exit $rc"
        return 1
    fi
}
started=$SECONDS
if test_ogrsf="$(bash "$root/gdal/test_ogrsf.sh" 2>"$work/test_ogrsf.build")"; then
    for fsf in "" -fsf; do
        check "test_ogrsf -ro${fsf:+ $fsf}: the sample through hydro_data" \
            ogrsf_clean "$test_ogrsf" -ro $fsf "$conn"
        check "test_ogrsf -ro${fsf:+ $fsf}: a comid plot from the mock" \
            ogrsf_clean "$with_mock" "$test_ogrsf" -ro $fsf "HYDROPLOT:comid=13293970"
        check "test_ogrsf -ro${fsf:+ $fsf}: a trace from the mock" \
            ogrsf_clean "$with_mock" "$test_ogrsf" -ro $fsf "$trace"
    done
else
    echo "FAIL: gdal/test_ogrsf.sh could not get test_ogrsf"
    sed 's/^/    /' "$work/test_ogrsf.build" | tail -n 20
    failed=$((failed + 1))
fi
echo "    (test_ogrsf, getting it and six runs: $((SECONDS - started)) s)"

# --- QGIS (gdal/test_qgis.py, headless PyQGIS) -------------------------------------
started=$SECONDS
rc=0
# QGIS's Qt temporary folders go in the work folder, removed at exit.
TMPDIR="$work" QT_QPA_PLATFORM=offscreen "$with_mock" /usr/bin/python3 "$root/gdal/test_qgis.py" \
    >"$work/qgis.out" 2>&1 || rc=$?
grep -E '^(ok|FAIL|skipped): |^    ' "$work/qgis.out"
passed=$((passed + $(grep -c '^ok: ' "$work/qgis.out")))
failed=$((failed + $(grep -c '^FAIL: ' "$work/qgis.out")))
if [ "$rc" -ne 0 ] && ! grep -q '^FAIL: ' "$work/qgis.out"; then
    echo "FAIL: gdal/test_qgis.py exited $rc"
    sed 's/^/    /' "$work/qgis.out" | tail -n 20
    failed=$((failed + 1))
fi
echo "    (QGIS: $((SECONDS - started)) s)"

# --- R's sf -----------------------------------------------------------------------
sf_read() {
    Rscript -e 'suppressPackageStartupMessages(library(sf))
        x <- sf::st_read(commandArgs(TRUE)[1], layer = "flowline", quiet = TRUE)
        stopifnot(nrow(x) == 251, sf::st_crs(x)$epsg == 4269, 13293970 %in% x$comid)
        stopifnot(nrow(sf::st_layers(commandArgs(TRUE)[1])) == 9)' "$conn"
}
check "R sf::st_read(\"HYDROPLOT:...\", layer = \"flowline\")" sf_read

# --- Bad strings: a GDAL error naming the key, never a crash ----------------------
bad() {
    local string="$1" want="$2" out rc=0
    out="$(ogrinfo -ro -so "$string" 2>&1)" || rc=$?
    [ "$rc" -eq 1 ] || { echo "$string: exit $rc"; return 1; }
    grep -q "^ERROR .*HYDROPLOT: .*$want" <<<"$out" || { echo "$string: $out" | head -3; return 1; }
}
bad_strings() {
    bad "HYDROPLOT:" "no outlet" &&
        bad "HYDROPLOT:comid=abc" "comid: 'abc' is not an integer" &&
        bad "HYDROPLOT:comid=-5" "comid: " &&
        bad "HYDROPLOT:comid=99999999999999999999" "comid: " &&
        bad "HYDROPLOT:comid" "'comid' .* is not key=value" &&
        bad "HYDROPLOT:comid=1&=3" "has no key" &&
        bad "HYDROPLOT:comid=1&bogus=1" "bogus: unknown option" &&
        bad "HYDROPLOT:bbox=1,2,3" "bbox: " &&
        bad "HYDROPLOT:bbox=3,2,1,4" "bbox: " &&
        bad "HYDROPLOT:point=1,2,EPSG:99999" "point: " &&
        bad "HYDROPLOT:streamorder=99&comid=1" "streamorder: " &&
        bad "HYDROPLOT:flowline_only=maybe&comid=1" "flowline_only: " &&
        bad "HYDROPLOT:timeout_s=abc&comid=1" "timeout_s: " &&
        bad "HYDROPLOT:properties=no_such_column&comid=1" "properties: .*no_such_column" &&
        bad "HYDROPLOT:trace=1,2&comid=5" "trace: cannot be combined" &&
        bad "HYDROPLOT:trace=-89,43&direction=sideways" "direction \"sideways\" is not one of" &&
        bad "HYDROPLOT:bbox=-0x1.66p6,42.9,-89.2,43.1" "bbox: '-0x1.66p6' is not a finite number" &&
        bad "HYDROPLOT:comid=1e3" "comid: '1e3' is not an integer" &&
        bad "HYDROPLOT:trace=200,100" "outside" &&
        bad "HYDROPLOT:comid=13293970&hydro_data=$work/missing.gpkg" "No such file" &&
        bad "HYDROPLOT:comid=1&cache_data=" "cache_data: the value is empty"
}
check "bad connection strings fail with an error naming the key" bad_strings

# --- valgrind: one ogrinfo ---------------------------------------------------------
under_valgrind() {
    valgrind --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
        ogrinfo -ro -al -q "$conn" gage >/dev/null
}
check "valgrind: ogrinfo of the gage layer, no memory errors or definite leaks" under_valgrind

echo "test result: $([ "$failed" -eq 0 ] && echo ok || echo FAILED). $passed passed; $failed failed; 0 ignored; (gdal)"
[ "$failed" -eq 0 ]
