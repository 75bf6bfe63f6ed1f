"""The "Comid at points" algorithm through processing.run: each point
QGIS finds inside a catchment of the sample (pointOnSurface) gets that
catchment's FEATUREID, from the local GeoPackage and from the mock
services alike; the layer keeps its fields, geometry and CRS."""

import sqlite3

from conftest import catchment_points, point_layer, run

FEATUREIDS = [13293970, 13294312, 13293454, 13294176]


def some_featureids(sample_gpkg):
    """Four catchments of the sample, read with plain SQL."""
    with sqlite3.connect(f"file:{sample_gpkg}?mode=ro", uri=True) as db:
        ids = {row[0] for row in db.execute("SELECT FEATUREID FROM CatchmentSP")}
    return [i for i in FEATUREIDS if i in ids]


def layer_of(points, crs="EPSG:4326"):
    return point_layer([(x, y, {"name": f"p{i}"}) for i, (x, y) in enumerate(points)], ["name"], crs)


def check(results, featureids):
    out = results["OUTPUT"]
    assert out.fields().names() == ["name", "comid"]
    assert [(f["name"], f["comid"]) for f in out.getFeatures()] == [(f"p{i}", c) for i, c in enumerate(featureids)]
    assert results["ERRORS"].featureCount() == 0


def test_local_geopackage(plugin, sample_gpkg):
    featureids = some_featureids(sample_gpkg)
    assert len(featureids) >= 3
    layer = layer_of(catchment_points(sample_gpkg, featureids))
    results = run("comid_at_points", {"INPUT": layer, "HYDRO_DATA": sample_gpkg, "OUTPUT": "TEMPORARY_OUTPUT",
                                      "ERRORS": "TEMPORARY_OUTPUT",
                                      # No request may be made: a closed port as every service.
                                      "CONTEXT_OPTIONS": "fabric_url=http://127.0.0.1:9/fabric; retries=0"})
    check(results, featureids)


def test_services_in_the_layer_crs(plugin, mock_url, sample_gpkg):
    from qgis.core import (
        QgsCoordinateReferenceSystem,
        QgsCoordinateTransform,
        QgsPointXY,
        QgsProject,
    )

    featureids = some_featureids(sample_gpkg)
    to_3857 = QgsCoordinateTransform(QgsCoordinateReferenceSystem("EPSG:4326"),
                                     QgsCoordinateReferenceSystem("EPSG:3857"), QgsProject.instance())
    points = [to_3857.transform(QgsPointXY(x, y)) for x, y in catchment_points(sample_gpkg, featureids)]
    layer = layer_of([(p.x(), p.y()) for p in points], "EPSG:3857")
    results = run("comid_at_points", {"INPUT": layer, "OUTPUT": "TEMPORARY_OUTPUT", "ERRORS": "TEMPORARY_OUTPUT"})
    check(results, featureids)
    out = results["OUTPUT"]
    assert out.crs().authid() == "EPSG:3857"
    assert [f.geometry().asPoint() for f in out.getFeatures()] == points


def test_a_point_in_no_catchment_has_no_comid(plugin, sample_gpkg):
    results = run("comid_at_points", {"INPUT": layer_of([(-100.0, 40.0)]), "HYDRO_DATA": sample_gpkg,
                                      "OUTPUT": "TEMPORARY_OUTPUT", "ERRORS": "TEMPORARY_OUTPUT"})
    [f] = list(results["OUTPUT"].getFeatures())
    from qgis.core import NULL

    assert f["comid"] == NULL
    assert results["ERRORS"].featureCount() == 0
