"""Basins against GEOS: hydroplot's basin equals shapely's (GEOS's)
``union_all(make_valid(catchments))`` on the samples and on hostile variants
of them this test makes with plain SQL and shapely.

The oracle is shapely 2 only: the catchments are read from the GeoPackage
with sqlite3 and parsed by shapely; hydroplot is asked (its CLI) for the
basin and the featureids of the catchments it dissolved, and the set is
checked against an upstream walk of the flowline table (FromNode/ToNode) in
plain Python. Checks, per basin: the symmetric difference's area is at most
1e-9 of the basin's area, and every hole of GEOS's basin over 1e-9 of the
area is a hole of hydroplot's (docs/reliability.md).

Run: ``HYDROPLOT_BIN=target/release/hydroplot python -m pytest tests/geos``
(HYDROPLOT_TEST_DATA: the samples' directory, default tests/data). Needs
shapely >= 2 and pytest; under CI=true a missing tool fails.
"""

import json
import os
import random
import shutil
import sqlite3
import struct
import subprocess
from pathlib import Path

import pytest

shapely = pytest.importorskip("shapely") if os.environ.get("CI") != "true" else __import__("shapely")
from shapely.geometry import MultiPolygon, Polygon, shape  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(os.environ.get("HYDROPLOT_TEST_DATA", ROOT / "tests" / "data"))
SAMPLES = sorted(DATA.glob("*.gpkg"))
TOLERANCE = 1e-9
RANDOM_REACHES = 3


def hydroplot_bin():
    explicit = os.environ.get("HYDROPLOT_BIN")
    if explicit:
        return explicit
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    for build in ("release", "debug"):
        candidate = target / build / "hydroplot"
        if candidate.exists():
            return str(candidate)
    if os.environ.get("CI") == "true":
        pytest.fail("no hydroplot binary: set HYDROPLOT_BIN or build it")
    pytest.skip("no hydroplot binary built")


# --- GeoPackage geometry blobs, by hand (GeoPackage 1.3, section 2.1.3) ---


def blob_wkb(blob):
    """The WKB of a GeoPackage geometry blob."""
    flags = blob[3]
    envelope = (0, 32, 48, 48, 64)[(flags >> 1) & 7]
    return bytes(blob[8 + envelope:])


def wkb_multipolygon(polygons):
    """Little-endian WKB of a MultiPolygon given as polygons of rings of
    (x, y), written as given (unclosed or repeated points stay)."""
    out = [struct.pack("<BII", 1, 6, len(polygons))]
    for rings in polygons:
        out.append(struct.pack("<BII", 1, 3, len(rings)))
        for ring in rings:
            out.append(struct.pack("<I", len(ring)))
            out.extend(struct.pack("<dd", x, y) for x, y in ring)
    return b"".join(out)


def gpkg_blob(srs_id, wkb):
    return b"GP" + bytes([0, 1]) + struct.pack("<i", srs_id) + wkb


def rings_of(geom):
    """A polygonal shapely geometry as polygons of rings of (x, y)."""
    parts = geom.geoms if geom.geom_type == "MultiPolygon" else [geom]
    return [
        [list(p.exterior.coords)] + [list(h.coords) for h in p.interiors]
        for p in parts
    ]


def wkb_points(wkb):
    """Every (x, y) of a little-endian Polygon or MultiPolygon WKB, read by
    hand (shapely refuses rings left open)."""
    (kind,) = struct.unpack_from("<I", wkb, 1)
    at, polygons = (9, struct.unpack_from("<I", wkb, 5)[0]) if kind == 6 else (0, 1)
    points = []
    for _ in range(polygons):
        (rings,) = struct.unpack_from("<I", wkb, at + 5)
        at += 9
        for _ in range(rings):
            (n,) = struct.unpack_from("<I", wkb, at)
            points += [struct.unpack_from("<dd", wkb, at + 4 + 16 * i) for i in range(n)]
            at += 4 + 16 * n
    return points


def register_st_functions(db):
    """The functions the GeoPackage R-tree triggers call."""

    def bound(i):
        def f(blob):
            if blob is None:
                return None
            xs = [p[i % 2] for p in wkb_points(blob_wkb(blob))]
            return float(min(xs) if i < 2 else max(xs))

        return f

    db.create_function("ST_IsEmpty", 1, lambda b: 1 if b is None or not wkb_points(blob_wkb(b)) else 0)
    for name, i in (("ST_MinX", 0), ("ST_MinY", 1), ("ST_MaxX", 2), ("ST_MaxY", 3)):
        db.create_function(name, 1, bound(i))


def catchment_table(db):
    for (name,) in db.execute("SELECT table_name FROM gpkg_contents"):
        if name.lower() in ("catchmentsp", "catchment"):
            return name
    raise AssertionError("no catchment table")


def flowline_table(db):
    for (name,) in db.execute("SELECT table_name FROM gpkg_contents"):
        if name.lower() in ("nhdflowline_network", "flowline"):
            return name
    raise AssertionError("no flowline table")


def column(db, table, wanted):
    for row in db.execute(f'PRAGMA table_info("{table}")'):
        if row[1].lower() == wanted:
            return row[1]
    raise AssertionError(f"no {wanted} in {table}")


# --- the hostile variants: each changes the catchment of one reach ---


def square(cx, cy, s):
    return [(cx - s, cy - s), (cx + s, cy - s), (cx + s, cy + s), (cx - s, cy + s), (cx - s, cy - s)]


def east_vertex(geom):
    rings = rings_of(geom)[0][0]
    return max(rings[:-1], key=lambda c: (c[0], c[1]))


def size(geom):
    return 0.05 * geom.area ** 0.5


def swapped(geom):
    """Two vertices of the first shell swapped, where that makes it cross
    itself."""
    polygons = rings_of(geom)
    shell = polygons[0][0][:-1]
    n = len(shell)
    for step in (2, 1, 3):
        for i in range(n // 3, n):
            ring = shell[:]
            j = (i + step) % n
            ring[i], ring[j] = ring[j], ring[i]
            candidate = Polygon(ring + [ring[0]], polygons[0][1:])
            if "Self-intersection" in shapely.is_valid_reason(candidate) and abs(candidate.area - geom.area) > 0:
                polygons[0][0] = ring + [ring[0]]
                return polygons, None
    raise AssertionError("no swap crosses the ring")


def hole_outside(geom):
    x, y = east_vertex(geom)
    s = size(geom)
    polygons = rings_of(geom)
    polygons[0].append(square(x + 2 * s, y, s)[::-1])
    return polygons, None


def spike(geom):
    polygons = rings_of(geom)
    shell = polygons[0][0]
    i = shell.index(east_vertex(geom))
    x, y = shell[i]
    shell[i + 1:i + 1] = [(x + 3 * size(geom), y + 0.5 * size(geom)), (x, y)]
    return polygons, None


def repeated_unclosed(geom):
    """Every vertex twice and every ring without its closing point (which
    shapely cannot build: GEOS reads the closed rings)."""
    polygons = rings_of(geom)
    stored = [[[c for c in ring[:-1] for _ in (0, 1)] for ring in rings] for rings in polygons]
    return stored, geom


def zero_area_part(geom):
    x, y = east_vertex(geom)
    s = size(geom)
    polygons = rings_of(geom)
    polygons.append([[(x, y), (x + 2 * s, y + s), (x + 4 * s, y + 2 * s), (x, y)]])
    return polygons, None


def reversed_rings(geom):
    return [[ring[::-1] for ring in rings] for rings in rings_of(geom)], None


def donut(geom):
    p = geom.representative_point()
    s = size(geom) / 4
    hole = Polygon(square(p.x, p.y, s))
    while not geom.contains(hole):
        s /= 2
        hole = Polygon(square(p.x, p.y, s))
    return rings_of(geom.difference(hole)), None


def split(geom):
    x0, y0, x1, y1 = geom.bounds
    mid = geom.centroid.x
    halves = [shapely.clip_by_rect(geom, x0 - 1, y0 - 1, mid, y1 + 1), shapely.clip_by_rect(geom, mid, y0 - 1, x1 + 1, y1 + 1)]
    return [r for h in halves for r in rings_of(h)], None


def corner_touch(geom):
    """A second part that touches the shell at its east vertex only, as the
    parts of a raster-derived catchment meet corner to corner."""
    x, y = east_vertex(geom)
    s = size(geom)
    polygons = rings_of(geom)
    polygons.append([[(x, y), (x + 2 * s, y - s), (x + 2 * s, y + s), (x, y)]])
    return polygons, None


def corner_cross(geom):
    """A second part that crosses the shell at two of its vertices and
    nowhere else: a kite whose diagonal is the shell's edge into the east
    vertex, one half inside the shell, one outside."""
    polygons = rings_of(geom)
    ring = polygons[0][0][:-1]
    i = ring.index(east_vertex(geom))
    (vx, vy), (px, py), (nx, ny) = ring[i], ring[i - 1], ring[(i + 1) % len(ring)]
    # Inside the corner: a tenth of the way towards its neighbours' middle.
    qx, qy = vx + 0.1 * ((px + nx) / 2 - vx), vy + 0.1 * ((py + ny) / 2 - vy)
    # Its mirror image across the edge p v, outside.
    dx, dy = vx - px, vy - py
    t = ((qx - px) * dx + (qy - py) * dy) / (dx * dx + dy * dy)
    fx, fy = px + t * dx, py + t * dy
    kite = [(vx, vy), (qx, qy), (px, py), (2 * fx - qx, 2 * fy - qy), (vx, vy)]
    polygons.append([kite])
    return polygons, None


VARIANTS = {
    "swapped_vertices": swapped,
    "hole_outside_shell": hole_outside,
    "spike": spike,
    "repeated_and_unclosed": repeated_unclosed,
    "zero_area_part": zero_area_part,
    "reversed_rings": reversed_rings,
    "donut": donut,
    "multipolygon_split": split,
    "parts_touching_at_a_corner": corner_touch,
    "parts_crossing_at_corners": corner_cross,
}


def make_variant(sample, variant, featureid, tmp_path):
    """A copy of `sample` with the catchment `featureid` changed by
    `variant` (or, for "duplicated_rows", every catchment row twice); the
    geometry GEOS is to read for the changed row when it cannot parse what
    was stored, else None."""
    path = tmp_path / f"{sample.stem}-{variant}-{featureid}.gpkg"
    shutil.copyfile(sample, path)
    db = sqlite3.connect(path)
    register_st_functions(db)
    table = catchment_table(db)
    fid_col = column(db, table, "featureid")
    (geom_col, srs_id) = db.execute(
        "SELECT column_name, srs_id FROM gpkg_geometry_columns WHERE table_name = ?", (table,)
    ).fetchone()
    oracle_geom = None
    if variant == "duplicated_rows":
        cols = [r[1] for r in db.execute(f'PRAGMA table_info("{table}")') if r[1].lower() != "fid"]
        names = ", ".join(f'"{c}"' for c in cols)
        db.execute(f'INSERT INTO "{table}" ({names}) SELECT {names} FROM "{table}"')
    else:
        rows = db.execute(
            f'SELECT fid, "{geom_col}" FROM "{table}" WHERE "{fid_col}" = ?', (featureid,)
        ).fetchall()
        assert rows, f"no catchment {featureid}"
        fid, blob = rows[0]
        geom = shapely.from_wkb(blob_wkb(blob))
        stored, oracle_geom = VARIANTS[variant](geom)
        db.execute(
            f'UPDATE "{table}" SET "{geom_col}" = ? WHERE fid = ?',
            (gpkg_blob(srs_id, wkb_multipolygon(stored)), fid),
        )
        oracle_geom = (fid, oracle_geom)
    db.commit()
    db.close()
    return path, oracle_geom


# --- the oracle and the comparison ---


def catchments(path, featureids, replaced):
    """The catchments of `featureids` in `path` as GEOS reads them (every
    row of each), the row `replaced[0]` read as `replaced[1]` when given."""
    db = sqlite3.connect(path)
    table = catchment_table(db)
    fid_col = column(db, table, "featureid")
    (geom_col,) = db.execute(
        "SELECT column_name FROM gpkg_geometry_columns WHERE table_name = ?", (table,)
    ).fetchone()
    wanted = set(featureids)
    out = []
    for fid, featureid, blob in db.execute(f'SELECT fid, "{fid_col}", "{geom_col}" FROM "{table}"'):
        if featureid in wanted:
            if replaced and replaced[1] is not None and fid == replaced[0]:
                out.append(replaced[1])
            else:
                out.append(shapely.from_wkb(blob_wkb(blob)))
    db.close()
    return out


def polygonal(geom):
    parts = [g for g in shapely.get_parts(geom) if g.geom_type in ("Polygon", "MultiPolygon")]
    return shapely.union_all(parts) if parts else MultiPolygon()


def upstream(path, comid):
    """The COMIDs upstream of `comid` with tributaries, by FromNode/ToNode."""
    db = sqlite3.connect(path)
    table = flowline_table(db)
    c, f, t = (column(db, table, k) for k in ("comid", "fromnode", "tonode"))
    rows = db.execute(f'SELECT "{c}", "{f}", "{t}" FROM "{table}"').fetchall()
    db.close()
    by_tonode = {}
    from_node = {}
    for cid, fn, tn in rows:
        by_tonode.setdefault(tn, []).append(cid)
        from_node[cid] = fn
    seen, todo = set(), [comid]
    while todo:
        cid = todo.pop()
        if cid in seen:
            continue
        seen.add(cid)
        todo.extend(by_tonode.get(from_node.get(cid), []))
    return seen


def basin_by_hydroplot(path, comid, tmp_path):
    out = tmp_path / f"{path.stem}-{comid}.json"
    run = subprocess.run(
        [hydroplot_bin(), "plot", "--hydro-data", str(path), "--comid", str(comid), "--no-plot", "--geojson", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    layers = json.loads(out.read_text())
    basin = shapely.union_all([shape(f["geometry"]) for f in layers["basin"]["features"]])
    featureids = {
        int(f["properties"][k])
        for f in layers["catchment"]["features"]
        for k in f["properties"]
        if k.lower() == "featureid"
    }
    return basin, featureids


def holes(geom):
    parts = geom.geoms if geom.geom_type == "MultiPolygon" else [geom]
    return [Polygon(h) for p in parts if p.geom_type == "Polygon" for h in p.interiors]


def compare(path, comid, replaced, tmp_path):
    ours, featureids = basin_by_hydroplot(path, comid, tmp_path)
    walked = upstream(path, comid)
    assert featureids <= walked and comid in featureids, (
        f"catchments not upstream: {sorted(featureids - walked)[:5]}"
    )
    geos = polygonal(shapely.union_all(shapely.make_valid(catchments(path, featureids, replaced))))
    area = geos.area
    assert area > 0
    difference = shapely.symmetric_difference(ours, geos).area
    assert difference <= TOLERANCE * area, f"{path.name} at {comid}: {difference / area:.3e} of the area differs"
    for hole in holes(geos):
        if hole.area > TOLERANCE * area:
            filled = shapely.intersection(ours, hole).area
            assert filled <= 1e-3 * hole.area, f"{path.name} at {comid}: a hole of {hole.area / area:.3e} filled"


def reaches(sample):
    """The outlet (least Hydroseq) and a few random reaches with a
    catchment, the same at every run."""
    db = sqlite3.connect(sample)
    table, ct = flowline_table(db), catchment_table(db)
    c = column(db, table, "comid")
    h = column(db, table, "hydroseq")
    fid_col = column(db, ct, "featureid")
    with_catchment = [
        r[0]
        for r in db.execute(
            f'SELECT "{c}" FROM "{table}" WHERE "{c}" IN (SELECT "{fid_col}" FROM "{ct}") ORDER BY "{h}"'
        )
    ]
    db.close()
    rng = random.Random(47)
    return [with_catchment[0]] + rng.sample(with_catchment[1:], RANDOM_REACHES)


CASES = [
    (sample, variant, comid)
    for sample in SAMPLES
    for variant in ["as_given", "duplicated_rows", *VARIANTS]
    for comid in reaches(sample)
]


def test_there_are_samples():
    assert len(SAMPLES) >= 2, f"samples in {DATA}: {SAMPLES}"


@pytest.mark.parametrize(
    "sample,variant,comid", CASES, ids=[f"{s.stem}-{v}-{c}" for s, v, c in CASES]
)
def test_basin_equals_geos_union_of_make_valid(sample, variant, comid, tmp_path):
    if variant == "as_given":
        compare(sample, comid, None, tmp_path)
        return
    path, replaced = make_variant(sample, variant, comid, tmp_path)
    valid = ("duplicated_rows", "reversed_rings", "donut", "multipolygon_split", "repeated_and_unclosed", "parts_touching_at_a_corner")
    if variant not in valid:
        changed = catchments(path, {comid}, None)
        assert not all(shapely.is_valid(changed)), "the variant is hostile"
    compare(path, comid, replaced, tmp_path)
