"""Writes N pseudo-random points (a fixed seed) over the catchments of a
GeoPackage, as the CSV `hydroplot comid --points` reads: id,lon,lat.

    python3 bench/make_points.py NETWORK.gpkg N OUT.csv
"""

import random
import sqlite3
import sys

network, n, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
with sqlite3.connect(network) as db:
    x0, y0, x1, y1 = db.execute(
        "SELECT min_x, min_y, max_x, max_y FROM gpkg_contents WHERE lower(table_name) = 'catchmentsp'"
    ).fetchone()
rng = random.Random(27)
with open(out, "w") as f:
    f.write("id,lon,lat\n")
    for i in range(n):
        f.write(f"site-{i},{rng.uniform(x0, x1)!r},{rng.uniform(y0, y1)!r}\n")
