"""hydroplot's Python binding on the benchmark network: the largest basin
(50k flowlines) fetched from the loopback mock into GeoDataFrames, once
through the Arrow C streams (output="geopandas", GeoDataFrame.from_arrow) and
once through GeoJSON text (the binding's earlier path: the GeoJSON accessor,
json.loads, GeoDataFrame.from_features), plus the conversion of the flowline
layer alone both ways.

Usage: python bindings.py BASE_URL NETWORK.json OUT.json
(HYDROPLOT_LIBRARY names the release library). Prints `name value unit` lines.
"""

import time

t_import = time.perf_counter()
import json  # noqa: E402
import sys  # noqa: E402

import geopandas  # noqa: E402
import pyarrow  # noqa: E402,F401

import hydroplot  # noqa: E402
from hydroplot import _ffi  # noqa: E402
from hydroplot._ffi import lib, text  # noqa: E402

imports = time.perf_counter() - t_import
LAYERS = hydroplot.LAYERS


def put(figures, name, value, unit):
    print(f"{name:<40} {value:>14.3f} {unit}", flush=True)
    figures[name] = value


def geojson_frames(data):
    """The layers of an output="geojson" result as GeoDataFrames."""
    return {k: geopandas.GeoDataFrame.from_features(fc["features"], crs="EPSG:4269") for k, fc in data.items()}


def main():
    base, sidecar, out = sys.argv[1:4]
    outlet = json.load(open(sidecar))["outlets"]["all"]
    ctx = hydroplot.Context(index_url=f"{base}/nldi", fabric_url=f"{base}/fabric/pygeoapi",
                            page_size=1000, concurrency=4, timeout_s=600)
    figures = {}
    put(figures, "py_binding_imports", imports, "s")

    t = time.perf_counter()
    frames = hydroplot.plot_hydro([outlet], actually_plot=False, context=ctx, output="geopandas")
    put(figures, "py_binding_arrow_e2e_wall", time.perf_counter() - t, "s")
    put(figures, "py_binding_flowlines", len(frames["flowline"]), "flowlines")
    assert frames["flowline"].crs.to_epsg() == 4269

    t = time.perf_counter()
    geojson_frames(hydroplot.plot_hydro([outlet], actually_plot=False, context=ctx, output="geojson"))
    put(figures, "py_binding_geojson_e2e_wall", time.perf_counter() - t, "s")

    # The flowline layer alone, from the same plot data, both ways.
    # output="arrow" makes no columns until read: the fetch alone.
    t = time.perf_counter()
    streams = hydroplot.plot_hydro([outlet], actually_plot=False, context=ctx, output="arrow")
    put(figures, "py_binding_fetch_only_wall", time.perf_counter() - t, "s")
    flowline = streams["flowline"]
    t = time.perf_counter()
    geopandas.GeoDataFrame.from_arrow(flowline)
    put(figures, "py_binding_flowline_arrow_to_gdf", time.perf_counter() - t, "s")
    pd = flowline._owner.pointer
    t = time.perf_counter()
    fc = json.loads(_ffi.take_buffer(lambda o: lib.hydroplot_plot_data_layer_geojson(pd, text("flowline"), o)))
    geopandas.GeoDataFrame.from_features(fc["features"], crs="EPSG:4269")
    put(figures, "py_binding_flowline_geojson_to_gdf", time.perf_counter() - t, "s")
    with open(out, "w") as f:
        json.dump(figures, f)


if __name__ == "__main__":
    main()
