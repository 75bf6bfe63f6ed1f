#!/usr/bin/env bash
# hydroplot against the Python stack a user would pick, on the same loopback
# mock, in one run; prints every figure and the ratios against the targets of
# issue 10. Needs cargo, python3 (with venv) and network access to PyPI once.
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
  "$BIN/bench_hydroplot" local "$DATA/national_2m.gpkg" "$DATA/local.json"
fi
if [ -f "$DATA/national_2m_topo.gpkg" ]; then
  echo "-- the same file with a covering (COMID, Hydroseq, DnHydroseq, StreamOrde) index"
  # Without basin parts, whatever an earlier run left (the covering index,
  # made by the generator under its own name, stays).
  "$BIN/hydroplot" index --remove "$DATA/national_2m_topo.gpkg" >/dev/null
  "$BIN/bench_hydroplot" local "$DATA/national_2m_topo.gpkg" "$DATA/local_topo.json"
  echo "-- the same file after \`hydroplot index\` (basin parts, the stored network; taken away again after)"
  /usr/bin/time -f "hydroplot index: %e s, %M KB peak" "$BIN/hydroplot" index "$DATA/national_2m_topo.gpkg"
  "$BIN/bench_hydroplot" local "$DATA/national_2m_topo.gpkg" "$DATA/local_indexed.json"
  "$BIN/hydroplot" index --remove "$DATA/national_2m_topo.gpkg" >/dev/null
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

echo "== ratios"
"$VENV/bin/python" - "$DATA" <<'EOF'
import json, os, sys
d = sys.argv[1]
f = {}
for name in ["rust.json", "link.json", "million.json", "million_seamless.json", "local.json", "py_1k.json", "py_10k.json", "py_all.json", "py_binding.json", "r_binding.json"]:
    p = os.path.join(d, name)
    if os.path.exists(p):
        f.update(json.load(open(p)))
for suffix in ["topo", "indexed"]:
    p = os.path.join(d, f"local_{suffix}.json")
    if os.path.exists(p):
        f.update({f"{k}_{suffix}": v for k, v in json.load(open(p)).items()})
nav = {l.split()[0]: float(l.split()[1]) for l in open(os.path.join(d, "navigation.txt")) if l.strip()}
def row(what, value, target, ok):
    print(f"{what:<62} {value:>10} {target:>14}  {'MET' if ok else 'NOT MET'}")
print(f"{'':<62} {'measured':>10} {'target':>14}")
for b in ["1k", "10k", "all"]:
    r = f[f"py_e2e_{b}_wall"] / f[f"e2e_{b}_wall"]
    row(f"end to end {b} ({f[f'e2e_{b}_flowlines']:.0f} flowlines): python / hydroplot, wall", f"{r:.1f}x", ">= 10x" if b == "all" else "", r >= 10 or b != "all")
    r = f[f"py_e2e_{b}_cpu"] / f[f"e2e_{b}_cpu"]
    row(f"  client CPU seconds: python / hydroplot", f"{r:.1f}x", "", True)
r = f["e2e_all_over_transfer_bound"]
row("end to end all / loopback transfer bound", f"{r:.2f}x", "<= 2x", r <= 2)
r = f["render_cached_wall"]
row("render 50k flowlines 2048x2048, cached tiles (s)", f"{r:.3f}", "< 0.5 s", r < 0.5)
if "py_render_cached_wall" in f:
    row("  python render (same layers, cached tiles) / hydroplot", f"{f['py_render_cached_wall'] / r:.1f}x", "", True)
r = nav["navigation_walk_all"]
row("navigation, 10^6 flowlines, walk of all 10^6 (ms)", f"{r:.1f}", "< 100 ms", r < 100)
r = nav["navigation_upstream_comids_total"]
row("navigation, 10^6 flowlines, upstream_comids: build + walk (ms)", f"{r:.1f}", "< 100 ms", r < 100)
r = f["e2e_all_rss_over_bytes"]
row("peak RSS / response bytes (all)", f"{r:.2f}x", "< 3x", r < 3)
if "local_wall_with_png" in f:
    row("local 2M file, 10k basin subset + map, page cache warm (s)", f"{f['local_wall_with_png']:.2f}", "< 2 s", f["local_wall_with_png"] < 2)
    if "local_first_wall" in f:
        print(f"{'  its first run, the pages as earlier steps left them (s)':<62} {f['local_first_wall']:>10.2f}")
    row("local 2M file, peak RSS (MB)", f"{f['local_peak_rss']:.0f}", "< 500 MB", f["local_peak_rss"] < 500)
if "local_wall_with_png_topo" in f:
    row("local 2M file + covering topology index, 10k basin + map, warm (s)", f"{f['local_wall_with_png_topo']:.2f}", "< 2 s", f["local_wall_with_png_topo"] < 2)
    if "local_first_wall_topo" in f:
        print(f"{'  its first run, the pages as earlier steps left them (s)':<62} {f['local_first_wall_topo']:>10.2f}")
    row("local 2M file + covering topology index, peak RSS (MB)", f"{f['local_peak_rss_topo']:.0f}", "< 500 MB", f["local_peak_rss_topo"] < 500)
if "local_wall_with_png_indexed" in f:
    row("local 2M file after hydroplot index, 10k basin + map, warm (s)", f"{f['local_wall_with_png_indexed']:.2f}", "< 2 s", f["local_wall_with_png_indexed"] < 2)
    row("local 2M file after hydroplot index, peak RSS (MB)", f"{f['local_peak_rss_indexed']:.0f}", "< 500 MB", f["local_peak_rss_indexed"] < 500)
for m, what in [("million", "a million flowlines"), ("million_seamless", "the same, seamless copies")]:
    if f"{m}_full_wall" not in f:
        continue
    b = f[f"{m}_scan_bound_wall"]
    if f"{m}_index_wall" in f:
        print(f"{what + ', hydroplot index: basin parts made (s, MB)':<62} {f[f'{m}_index_wall']:>10.1f} {f[f'{m}_index_peak_rss']:>13.0f}")
    print(f"{what + ', SQLite scan bound (s)':<62} {b:>10.2f}")
    r = f[f"{m}_full_over_bound"]
    row(f"  full plot + map: {f[f'{m}_full_wall']:.1f} s (median of 3) / bound", f"{r:.1f}x", "<= 4x", r <= 4)
    if f"{m}_full_wall_fastest" in f:
        print(f"{'    its 3 runs from, to (s)':<62} {f[f'{m}_full_wall_fastest']:>10.2f} {f[f'{m}_full_wall_slowest']:>13.2f}")
    r = f[f"{m}_full_peak_rss"]
    row("  full plot + map, peak RSS (MB)", f"{r:.0f}", "<= 1500", r <= 1500)
    r = f[f"{m}_flowline_only_over_bound"]
    row(f"  flowline-only, no map: {f[f'{m}_flowline_only_wall']:.1f} s (median of 3) / bound", f"{r:.1f}x", "<= 2x", r <= 2)
    if f"{m}_flowline_only_wall_fastest" in f:
        print(f"{'    its 3 runs from, to (s)':<62} {f[f'{m}_flowline_only_wall_fastest']:>10.2f} {f[f'{m}_flowline_only_wall_slowest']:>13.2f}")
    r = f[f"{m}_flowline_only_peak_rss"]
    row("  flowline-only, no map, peak RSS (MB)", f"{r:.0f}", "<= 1000", r <= 1000)
    r = f[f"{m}_ink"]
    row("  the map: share of the data area inked", f"{100 * r:.0f} %", "<= 40 %", r <= 0.4)
    if f"{m}_sf_st_read_wall" in f:
        print(f"{'  sf::st_read of the flowline layer (s, MB)':<62} {f[f'{m}_sf_st_read_wall']:>10.1f} {f[f'{m}_sf_st_read_peak_rss']:>13.0f}")
if "py_binding_arrow_e2e_wall" in f:
    r = f["py_binding_arrow_e2e_wall"]
    row("python: fetch 50k -> GeoDataFrames via Arrow (s)", f"{r:.2f}", "<= 1.0 s", r <= 1.0)
    row("  via GeoJSON text (s)", f"{f['py_binding_geojson_e2e_wall']:.2f}", "", True)
    row("  pynhd, same fetch (s)", f"{f['py_e2e_all_wall']:.2f}", "", True)
    row("  flowline layer -> GeoDataFrame, Arrow / GeoJSON (s)",
        f"{f['py_binding_flowline_arrow_to_gdf']:.2f}/{f['py_binding_flowline_geojson_to_gdf']:.2f}", "", True)
if "r_binding_arrow_e2e_wall" in f:
    r = f["r_binding_arrow_e2e_wall"]
    row("R: fetch 50k -> sf via Arrow (s)", f"{r:.2f}", "<= 2 s", r <= 2)
    row("  via GeoJSON text, jsonlite + st_read (s)", f"{f['r_binding_geojson_e2e_wall']:.2f}", "", True)
    row("  flowline layer -> sf, Arrow / GeoJSON (s)",
        f"{f['r_binding_flowline_arrow_to_sf']:.2f}/{f['r_binding_flowline_geojson_to_sf']:.2f}", "", True)
if "link_full_wall" in f:
    for case, what in [("full", "all columns"), ("full_gzip", "all columns, gzip"),
                       ("plot", "--properties plot"), ("plot_gzip", "--properties plot, gzip")]:
        r = f[f"link_{case}_over_bound"]
        row(f"link, 50k box, {what}: wall / bound", f"{r:.2f}x", "<= 1.15x", r <= 1.15)
    for plot, full in [("plot", "full"), ("plot_gzip", "full_gzip")]:
        r = f[f"link_{plot}_wall"] / f[f"link_{full}_wall"]
        row(f"  wall, {plot} / {full}", f"{r:.2f}x", "<= 0.6x", r <= 0.6)
    for case in ["py_full", "py_full_gzip"]:
        if f"link_{case}_wall" in f:
            what = f"  pynhd{', gzip' if 'gzip' in case else ''}: wall (s), wall / its bound"
            print(f"{what:<62} {f[f'link_{case}_wall']:>10.2f} {f[f'link_{case}_over_bound']:>13.2f}x")
print(f"{'1,000 raindrop traces in a batch (s)':<62} {f['traces_wall']:>10.2f}")
r = f["decode_throughput"]
row("page decode into columns, one thread (MB/s)", f"{r:.0f}", ">= 400", r >= 400)
print(f"{'GeoPackage write / read of the 50k subset (s)':<62} {f['gpkg_write']:>5.2f} / {f['gpkg_read']:.2f}")
EOF
