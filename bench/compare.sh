#!/usr/bin/env bash
# hydroplot against the Python stack a user would pick, on the same loopback
# mock, in one run; prints every figure and the ratios against the targets of
# every issue, and writes them as bench/RESULTS.md's first table
# (bench/ratios.py). Needs cargo, python3 (with venv) and network access to PyPI once.
#
#   bench/compare.sh            # everything (national-scale files: 2 x 5.7 GB, ~3 min each, once)
#   NATIONAL=0 bench/compare.sh # skip the national-scale local-mode benchmark
#
# Generated data and the virtualenv live under target/ (never committed).
set -euo pipefail
cd "$(dirname "$0")/.."
DATA=target/bench-data
VENV=target/bench-venv
BIN=target/release
mkdir -p "$DATA"
# The indexes the benchmarks make live with their data, and each run starts
# from none: the first plot of a file is measured as a user meets it.
export HYDROPLOT_INDEX_DIR=$PWD/$DATA/index
rm -rf "$HYDROPLOT_INDEX_DIR"

echo "== machine"
uname -srm
grep -m1 "model name" /proc/cpuinfo || true
echo "cores: $(nproc), memory: $(awk '/MemTotal/ {printf "%.1f GB", $2/1048576}' /proc/meminfo)"

echo "== build (release)"
cargo build --release -p hydroplot-bench \
  --bin bench_make_network --bin bench_mock_server --bin bench_hydroplot --bin bench_bbox --bin bench_link --bin bench_million
cargo build --release -p hydroplot --bin hydroplot
[ -x /usr/bin/time ] || { echo "bench_bbox needs GNU time: apt-get install time" >&2; exit 1; }
# The shared library the bindings' benchmarks load: built from this tree,
# never a stale one from an earlier build.
cargo build --release -p hydroplot --lib

# The GDAL driver (issue 25's ogr2ogr case in bench_bbox), where GDAL's
# headers are installed: built by CMake against the same release library.
if command -v gdal-config >/dev/null && command -v ogr2ogr >/dev/null; then
  cmake -S . -B target/bench-cmake -DCMAKE_BUILD_TYPE=Release -DHYDROPLOT_GDAL_PLUGIN=ON \
    -DBUILD_TESTING=OFF >/dev/null
  cmake --build target/bench-cmake -j 2 >/dev/null
  export GDAL_DRIVER_PATH=$PWD/target/bench-cmake/gdalplugins
fi

echo "== data"
[ -f "$DATA/network_50k.gpkg" ] ||
  "$BIN/bench_make_network" --cols 5 --rows 10 --out "$DATA/network_50k.gpkg"
if [ "${NATIONAL:-1}" != 0 ] && [ ! -f "$DATA/national_2m.gpkg" ]; then
  "$BIN/bench_make_network" --cols 50 --rows 40 --out "$DATA/national_2m.gpkg"
fi
if [ "${NATIONAL:-1}" != 0 ] && [ ! -f "$DATA/national_2m_topo.gpkg" ]; then
  "$BIN/bench_make_network" --cols 50 --rows 40 --topology-index --out "$DATA/national_2m_topo.gpkg"
fi

echo "== python stack (throwaway virtualenv $VENV)"
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q pynhd geopandas matplotlib contextily pyarrow
fi
"$VENV/bin/python" -c "import pyarrow" 2>/dev/null || "$VENV/bin/pip" install -q pyarrow
"$VENV/bin/python" -c "import pynhd, geopandas, contextily; print('pynhd', pynhd.__version__, 'geopandas', geopandas.__version__, 'contextily', contextily.__version__)"

echo "== hydroplot"
"$BIN/bench_hydroplot" navigation 1000000 | tee "$DATA/navigation.txt"
"$BIN/bench_hydroplot" services "$DATA/network_50k.gpkg" "$DATA/rust.json"
if [ -f "$DATA/national_2m.gpkg" ]; then
  "$BIN/bench_hydroplot" local "$DATA/national_2m.gpkg" "$DATA/local.json" off
fi
if [ -f "$DATA/national_2m_topo.gpkg" ]; then
  echo "-- the same file with a covering (COMID, Hydroseq, DnHydroseq, StreamOrde) index (the generator's), no index of ours"
  sha256sum "$DATA/national_2m_topo.gpkg" | tee "$DATA/national_2m_topo.sha256"
  "$BIN/bench_hydroplot" local "$DATA/national_2m_topo.gpkg" "$DATA/local_topo.json" off
  echo "-- the same file, index on: the first plot stores the network and its basin's parts"
  "$BIN/bench_hydroplot" local "$DATA/national_2m_topo.gpkg" "$DATA/local_first_use.json" on
  echo "-- the same file after \`hydroplot index\` (all the basin parts; the index removed again after)"
  /usr/bin/time -f "hydroplot index: %e s, %M KB peak" "$BIN/hydroplot" index "$DATA/national_2m_topo.gpkg"
  "$BIN/hydroplot" index --status "$DATA/national_2m_topo.gpkg"
  "$BIN/bench_hydroplot" local "$DATA/national_2m_topo.gpkg" "$DATA/local_indexed.json" on
  "$BIN/hydroplot" index --remove "$DATA/national_2m_topo.gpkg" >/dev/null
  echo "-- the GeoPackage, byte for byte as before the plots and the index (sha256sum -c)"
  sha256sum -c "$DATA/national_2m_topo.sha256"
fi

if [ "${NATIONAL:-1}" != 0 ]; then
  echo "== a million-flowline basin from one file (issue 26): hydroplot index, the SQLite scan bound, the full plot, flowline-only, sf::st_read"
  [ -f "$DATA/network_1m_topo.gpkg" ] ||
    "$BIN/bench_make_network" --cols 50 --rows 20 --topology-index --out "$DATA/network_1m_topo.gpkg"
  OUTLET=$(python3 -c "import json, sys; print(json.load(open(sys.argv[1]))['outlets']['all'])" "$DATA/network_1m_topo.json")
  "$BIN/bench_million" "$DATA/network_1m_topo.gpkg" "$BIN/hydroplot" "$OUTLET" "$DATA/million.png" "$DATA/million.json"
  echo "-- the same network with seamless copies (catchments that tile, as a real basin's do)"
  [ -f "$DATA/network_1m_seamless.gpkg" ] ||
    "$BIN/bench_make_network" --cols 50 --rows 20 --topology-index --seamless --out "$DATA/network_1m_seamless.gpkg"
  "$BIN/bench_million" "$DATA/network_1m_seamless.gpkg" "$BIN/hydroplot" "$OUTLET" "$DATA/million_seamless.png" \
    "$DATA/million_seamless.json" million_seamless
fi

echo "== 10,000 points to comids from the local 50k file (issue 27): the R-tree and an exact test, no request"
[ -f "$DATA/points_10k.csv" ] || python3 bench/make_points.py "$DATA/network_50k.gpkg" 10000 "$DATA/points_10k.csv"
/usr/bin/time -f "comid 10k points: %e s elapsed, %U s user, %M KB max RSS" \
  "$BIN/hydroplot" comid --points "$DATA/points_10k.csv" --hydro-data "$DATA/network_50k.gpkg" \
  --out "$DATA/comids_10k.csv" 2>&1 | tee "$DATA/comids_10k.txt"
if [ -f "$DATA/national_2m.gpkg" ]; then
  [ -f "$DATA/points_10k_national.csv" ] ||
    python3 bench/make_points.py "$DATA/national_2m.gpkg" 10000 "$DATA/points_10k_national.csv"
  /usr/bin/time -f "comid 10k points, national 2M file: %e s elapsed, %U s user, %M KB max RSS" \
    "$BIN/hydroplot" comid --points "$DATA/points_10k_national.csv" --hydro-data "$DATA/national_2m.gpkg" \
    --out "$DATA/comids_10k_national.csv" 2>&1 | tee -a "$DATA/comids_10k.txt"
fi

echo "== one bbox of all 50k flowlines: fetch, cache, map, GeoJSON, GeoPackage (CLI and ogr2ogr); hydroplot's CLI and the Python peer"
"$BIN/bench_bbox" "$DATA/network_50k.gpkg" "$BIN/hydroplot" "$VENV/bin/python" bench/peer_bbox.py "$DATA/bbox.json"

echo "== link profile (100 Mbit/s, 40 ms): the 50k box over the real services' link, hydroplot and pynhd, with and without gzip and --properties plot"
"$BIN/bench_link" "$DATA/network_50k.gpkg" "$BIN/hydroplot" "$VENV/bin/python" bench/peer_bbox.py "$DATA/link.json"

echo "== python stack, same mock"
FIFO=$(mktemp -u)
mkfifo "$FIFO"
"$BIN/bench_mock_server" "$DATA/network_50k.gpkg" <"$FIFO" >"$DATA/mock.out" &
MOCK=$!
exec 3>"$FIFO" # keeps the mock's stdin open until the end
trap 'exec 3>&-; kill $MOCK 2>/dev/null || true; rm -f "$FIFO"' EXIT
until grep -q listening "$DATA/mock.out" 2>/dev/null; do sleep 0.2; done
BASE=$(awk '/listening/ {print $2}' "$DATA/mock.out")
for basin in 1k 10k all; do
  MAP=""
  [ "$basin" = all ] && MAP="--map"
  "$VENV/bin/python" bench/peer.py "$BASE" "$DATA/network_50k.json" "$basin" "$DATA/py_$basin.json" $MAP
done

echo "== bindings: 50k flowlines to GeoDataFrames and sf, Arrow streams vs GeoJSON text"
LIBSO=$PWD/target/release/libhydroplot.so
HYDROPLOT_LIBRARY=$LIBSO PYTHONPATH=bindings/python "$VENV/bin/python" bench/bindings.py "$BASE" "$DATA/network_50k.json" "$DATA/py_binding.json"
if ! command -v Rscript >/dev/null ||
  ! Rscript -e 'quit(status = !all(sapply(c("sf", "jsonlite"), requireNamespace, quietly = TRUE)))' 2>/dev/null; then
  echo "(R with sf and jsonlite not installed: the R binding's figures are skipped)"
else
  PREFIX=target/bench-prefix
  RLIB=target/bench-rlib
  mkdir -p "$PREFIX/include" "$PREFIX/lib" "$RLIB"
  cp include/hydroplot.h "$PREFIX/include/"
  soname=$(objdump -p "$LIBSO" | awk '/SONAME/ {print $2}')
  ln -sf "$LIBSO" "$PREFIX/lib/libhydroplot.so"
  [ -z "$soname" ] || ln -sf "$LIBSO" "$PREFIX/lib/$soname"
  rm -rf target/bench-r-src && cp -r bindings/r target/bench-r-src
  HYDROPLOT_PREFIX=$PWD/$PREFIX R CMD INSTALL --no-docs -l "$RLIB" target/bench-r-src >"$DATA/r-install.log" 2>&1
  R_LIBS=$RLIB Rscript bench/bindings.R "$BASE" "$DATA/network_50k.json" "$DATA/r_binding.json"
fi

echo "== ratios, written as bench/RESULTS.md's first table"
"$VENV/bin/python" bench/ratios.py "$DATA" bench/RESULTS.md \
  "$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- src bench mock || echo ' with uncommitted changes')" \
  "NATIONAL=${NATIONAL:-1} bench/compare.sh"
