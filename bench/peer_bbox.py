"""The Python peer of `bench_bbox` (issue 16): every flowline of a bounding
box, then what a Python user keeps and does with them. One step per process,
so `bench_bbox` measures each process's peak RSS and CPU like hydroplot's:

  pynhd    BASE BBOX OUT.json PICKLE   pynhd FabricData.bygeometry -> GeoDataFrame,
                                       then pickled (the Python user's cache write)
  requests BASE BBOX OUT.json URLS     the same pages with requests, one
                                       GeoDataFrame.from_features per page, concat
  hit      BASE BBOX OUT.json PICKLE   the pickle read back (a cache hit)
  map      BASE BBOX OUT.json PICKLE PNG
                                       pickle -> 2048 x 2048 map with contextily
                                       tiles from the mock (run twice: the first fills
                                       contextily's tile cache)
  geojson  BASE BBOX OUT.json PICKLE PATH
                                       pickle -> GeoJSON file (pyogrio)

Each step's own wall and CPU seconds exclude the imports and go to OUT.json.
"""

import json
import os
import pickle
import sys
import time

os.environ["HYRIVER_CACHE_DISABLE"] = "true"  # cold requests, like hydroplot's

import geopandas as gpd  # noqa: E402
import pandas as pd  # noqa: E402

from peer import fabric, run_and_exit  # noqa: E402


def timed(figures, name, step):
    t, cpu = time.perf_counter(), time.process_time()
    result = step()
    figures[f"{name}_wall"] = time.perf_counter() - t
    figures[f"{name}_cpu"] = time.process_time() - cpu
    return result


def requests_pages(urls):
    import requests

    frames = []
    with requests.Session() as s:
        for url in urls:
            page = s.get(url, timeout=600).json()
            frames.append(gpd.GeoDataFrame.from_features(page["features"], crs=4269))
    return pd.concat(frames, ignore_index=True)


def draw(flowlines, tiles, path):
    import contextily as cx
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig = plt.figure(figsize=(20.48, 20.48), dpi=100)
    ax = fig.add_axes([0, 0, 1, 1])
    flowlines.to_crs(3857).plot(ax=ax, color="blue", linewidth=0.5)
    ax.set_axis_off()
    cx.add_basemap(ax, source=tiles, crs="EPSG:3857", attribution=False)
    fig.savefig(path, dpi=100)
    plt.close(fig)


def load(path):
    with open(path, "rb") as f:
        return pickle.load(f)


def main():
    mode, base, bbox, out = sys.argv[1:5]
    extra = sys.argv[5:]
    bbox = tuple(float(v) for v in bbox.split(","))
    figures = {}
    if mode == "pynhd":
        flowlines = timed(figures, "pynhd", lambda: fabric(base, "nhdflowline_network", "comid").bygeometry(bbox))
        figures["pynhd_flowlines"] = len(flowlines)

        def write():
            with open(extra[0], "wb") as f:
                pickle.dump(flowlines, f, protocol=pickle.HIGHEST_PROTOCOL)

        timed(figures, "pickle_write", write)
    elif mode == "requests":
        urls = [u for u in open(extra[0]).read().split("\n") if "/items" in u]
        flowlines = timed(figures, "requests", lambda: requests_pages(urls))
        figures["requests_flowlines"] = len(flowlines)
    elif mode == "hit":
        figures["hit_flowlines"] = len(timed(figures, "hit", lambda: load(extra[0])))
    elif mode == "map":
        tiles = f"{base}/tiles/{{z}}/{{x}}/{{y}}.png"
        timed(figures, "map", lambda: draw(load(extra[0]), tiles, extra[1]))
    elif mode == "geojson":
        timed(figures, "geojson", lambda: load(extra[0]).to_file(extra[1], driver="GeoJSON"))
    else:
        sys.exit(f"unknown mode {mode}")
    with open(out, "w") as f:
        json.dump(figures, f)


if __name__ == "__main__":
    run_and_exit(main)
