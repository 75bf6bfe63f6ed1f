"""The Python stack a user would pick, doing hydroplot's benchmark work
against the same loopback mock: pynhd's NLDI (basin) and OGCAPIBase /
FabricData (paged OGC API items), pandas for the upstream navigation,
geopandas + matplotlib + contextily for the 2048 x 2048 map.

pynhd hardcodes the production URLs and discovers each OGC API collection
(`/collections`, queryables, `/schema`) when constructed; the mock serves only
the data endpoints. So the objects are built without their discovery step,
pointed at the mock, and the one discovery answer used later (the sort key
from `/schema`) is given as pynhd would read it. Every data request and all
decoding are pynhd's own code (async_retriever + pygeoutils.json2geodf).

Usage: python peer.py BASE_URL NETWORK.json BASIN(1k|10k|all) OUT.json [--map]
Prints `name value unit` lines; one basin per process so the peak RSS is its own.
"""

import json
import os
import resource
import sys
import time
from collections import defaultdict

os.environ["HYRIVER_CACHE_DISABLE"] = "true"  # cold requests, like hydroplot's

import geopandas as gpd  # noqa: E402
import pandas as pd  # noqa: E402
from pynhd import NLDI, FabricData  # noqa: E402
from pynhd.ogcapi import EndPoints  # noqa: E402

PAGE = 1000  # pynhd FabricData's maximum page; hydroplot is run with the same


def nldi(base):
    n = NLDI.__new__(NLDI)
    n._dev = False
    n.base_url = f"{base}/nldi"
    n.valid_fsources = {"comid": "NHDPlus comid"}
    return n


def fabric(base, item, key):
    f = FabricData.__new__(FabricData)
    f.max_nfeatures = PAGE
    f.dev_url = None
    f.prod_url = f"{base}/fabric/pygeoapi"
    f.api_key = None
    f._user_agent = "pynhd-bench"
    f._dev = False
    f.base_url = f"{f.prod_url}/collections"
    f.endpoints = {
        item: EndPoints(
            name=item,
            description=item,
            url=f"{f.base_url}/{item}/items",
            query_fields=[key],
            extent=(-180.0, -90.0, 180.0, 90.0),
            dtypes={key: "int64"},
        )
    }
    f._item = item
    f.query_url = f.endpoints[item].url
    f.item_extent = f.endpoints[item].extent
    f._get_sort_attr = lambda endpoint: key
    return f


def upstream(flowlines, outlet):
    """Comids upstream of (and including) outlet over hydroseq/dnhydroseq."""
    tributaries = defaultdict(list)
    for hs, dn in zip(flowlines["hydroseq"].to_numpy(), flowlines["dnhydroseq"].to_numpy()):
        tributaries[dn].append(hs)
    start = flowlines.loc[flowlines["comid"] == outlet, "hydroseq"]
    seen, stack = set(start), list(start)
    while stack:
        for t in tributaries.get(stack.pop(), ()):
            if t not in seen:
                seen.add(t)
                stack.append(t)
    return flowlines[flowlines["hydroseq"].isin(seen)]


def put(figures, name, value, unit):
    print(f"{name:<40} {value:>14.3f} {unit}", flush=True)
    figures[name] = value


def draw(layers, tiles, path):
    import contextily as cx
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig = plt.figure(figsize=(20.48, 20.48), dpi=100)
    ax = fig.add_axes([0, 0, 1, 1])
    basin, catchments, waterbodies, flowlines = (g.to_crs(3857) for g in layers)
    basin.plot(ax=ax, facecolor="none", edgecolor="black", linewidth=1)
    catchments.plot(ax=ax, facecolor="none", edgecolor="grey", linewidth=0.2)
    waterbodies.plot(ax=ax, facecolor="lightblue", edgecolor="none")
    flowlines.plot(ax=ax, color="blue", linewidth=0.5)
    ax.set_axis_off()
    cx.add_basemap(ax, source=tiles, crs="EPSG:3857", attribution=False)
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main():
    base, sidecar, basin_name, out = sys.argv[1:5]
    with_map = "--map" in sys.argv
    outlet = json.load(open(sidecar))["outlets"][basin_name]
    figures = {}
    t, cpu = time.perf_counter(), time.process_time()
    basin = nldi(base).get_basins(str(outlet), fsource="comid")
    bbox = tuple(basin.total_bounds)
    flowlines = fabric(base, "nhdflowline_network", "comid").bygeometry(bbox)
    flowlines = upstream(flowlines, outlet)
    keep = set(flowlines["comid"])
    catchments = fabric(base, "catchmentsp", "featureid").bygeometry(bbox)
    catchments = catchments[catchments["featureid"].isin(keep)]
    waterbodies = fabric(base, "nhdwaterbody", "comid").bygeometry(bbox)
    areas = fabric(base, "nhdarea", "comid").bygeometry(bbox)
    nonnetwork = fabric(base, "nhdflowline_nonnetwork", "comid").bygeometry(bbox)
    wall, cpu = time.perf_counter() - t, time.process_time() - cpu
    put(figures, f"py_e2e_{basin_name}_flowlines", len(flowlines), "flowlines")
    put(figures, f"py_e2e_{basin_name}_layers", len(catchments) + len(waterbodies) + len(areas) + len(nonnetwork), "features")
    put(figures, f"py_e2e_{basin_name}_wall", wall, "s")
    put(figures, f"py_e2e_{basin_name}_cpu", cpu, "s")
    put(figures, f"py_e2e_{basin_name}_peak_rss", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "MB")
    if with_map:
        tiles = f"{base}/tiles/{{z}}/{{x}}/{{y}}.png"
        layers = (basin, catchments, waterbodies, flowlines)
        png = f"{out}.png"
        draw(layers, tiles, png)  # fills contextily's tile cache
        t, cpu = time.perf_counter(), time.process_time()
        draw(layers, tiles, png)
        put(figures, "py_render_cached_wall", time.perf_counter() - t, "s")
        put(figures, "py_render_cached_cpu", time.process_time() - cpu, "s")
    with open(out, "w") as f:
        json.dump(figures, f)


def run_and_exit(main):
    """Runs `main`, then leaves without the interpreter's shutdown, which
    sometimes deadlocks on async_retriever's worker threads (all threads
    waiting on futexes); the figures are written by then."""
    main()
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    run_and_exit(main)
