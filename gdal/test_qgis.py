#!/usr/bin/python3
"""The HYDROPLOT GDAL driver in QGIS (docs/gdal.md), headless:

    GDAL_DRIVER_PATH=<plugin dir> tests/bindings/with-mock.sh \\
        /usr/bin/python3 gdal/test_qgis.py

Opens the Yahara sample through `hydro_data` as QgsVectorLayers (the
`HYDROPLOT:` string names a .gpkg, so QGIS passes NOLOCK=ON), and checks each
against an independent truth: the published counts, plain SQL on the sample
(sqlite3), GDAL's GPKG driver on the sample, the pixels of a rendering,
sqlite3 on the GeoPackage QGIS writes, the basin layer's area against
Processing's dissolve of the catchments; and the string entered in the Add
Vector Layer dialog as docs/gdal.md says. The trace comes from the mock
(with-mock.sh's HYDROPLOT_* environment). Each check prints ok/FAIL; the exit
status is 1 if any failed. HYDROPLOT_QGIS_IMAGE=path.png keeps the rendering
for a look. Without QGIS (python3-qgis, qgis-providers) it
fails under CI=true and is skipped otherwise.
"""

import os
import sqlite3
import sys
import tempfile
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SAMPLE = os.path.join(ROOT, "tests", "data", "yahara_sample.gpkg")
CONN = f"HYDROPLOT:comid=13293970&hydro_data={SAMPLE}"
TRACE = "HYDROPLOT:trace=-89.2158,42.9561&direction=up"
# The published Yahara figures (fixtures/README.md); the two waterbody
# layers together hold 117.
COUNTS = {
    "flowline": 251,
    "basin": 1,
    "catchment": 250,
    "nhdarea": 3,
    "flowline_nonnetwork": 48,
    "gage": 44,
}
WATERBODIES = ("network_wtbd", "off_network_wtbd")
RECT = (-89.5, 43.0, -89.3, 43.1)

# QGIS writes its profile and Qt its settings under these: a scratch folder,
# never the user's home.
scratch = tempfile.TemporaryDirectory(prefix="hydroplot-qgis-")
for var in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_RUNTIME_DIR"):
    os.environ[var] = os.path.join(scratch.name, var.lower())
    os.makedirs(os.environ[var], mode=0o700)
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

try:
    from qgis.analysis import QgsNativeAlgorithms
    from qgis.core import (
        QgsApplication,
        QgsCoordinateReferenceSystem,
        QgsCoordinateTransform,
        QgsDistanceArea,
        QgsFeatureRequest,
        QgsMapRendererParallelJob,
        QgsMapSettings,
        QgsProject,
        QgsRectangle,
        QgsVectorFileWriter,
        QgsVectorLayer,
    )
    from qgis.PyQt.QtCore import QSize, QVariant
    from qgis.PyQt.QtGui import QColor
except ImportError as e:
    if os.environ.get("CI") == "true":
        print(f"FAIL: QGIS: cannot import PyQGIS ({e}); install python3-qgis qgis-providers")
        sys.exit(1)
    print(f"skipped: QGIS checks, no PyQGIS ({e})")
    sys.exit(0)


def upstream_comids():
    """The upstream comid set by plain SQL over the sample (gdal/upstream.sql)."""
    with open(os.path.join(ROOT, "gdal", "upstream.sql")) as f:
        sql = f.read()
    db = sqlite3.connect(":memory:")
    db.execute("ATTACH ? AS s", (SAMPLE,))
    return {row[0] for row in db.execute(sql)}


def layer(name, conn=CONN):
    return QgsVectorLayer(f"{conn}|layername={name}", name, "ogr")


def comids(lyr, request=None):
    return {f["comid"] for f in lyr.getFeatures(request or QgsFeatureRequest())}


def expect(cond, what):
    if not cond:
        raise AssertionError(what)


def check_layers():
    for name, want in list(COUNTS.items()) + [(w, None) for w in WATERBODIES]:
        lyr = layer(name)
        expect(lyr.isValid(), f"{name}: invalid layer")
        expect(lyr.crs().authid() == "EPSG:4269", f"{name}: CRS {lyr.crs().authid()}")
        n = lyr.featureCount()
        if want is not None:
            expect(n == want, f"{name}: featureCount {n}, want {want}")
        feats = list(lyr.getFeatures())
        expect(len(feats) == n, f"{name}: iterated {len(feats)} of {n}")
        expect(all(f.hasGeometry() for f in feats), f"{name}: a feature without geometry")
    wtbd = sum(layer(w).featureCount() for w in WATERBODIES)
    expect(wtbd == 117, f"waterbodies: {wtbd}, want 117")


def check_expression_filter():
    db = sqlite3.connect(SAMPLE)
    up = upstream_comids()
    want = {c for (c,) in db.execute("SELECT COMID FROM NHDFlowline_Network WHERE StreamOrde >= 3")} & up
    got = comids(layer("flowline"), QgsFeatureRequest().setFilterExpression('"streamorde" >= 3'))
    expect(want and got == want, f"{len(got)} comids, SQL says {len(want)}")


def check_rectangle_filter():
    from osgeo import ogr

    up = upstream_comids()
    sample = ogr.Open(SAMPLE)
    truth = sample.GetLayerByName("NHDFlowline_Network")
    truth.SetSpatialFilterRect(*RECT)
    want = {f.GetField("COMID") for f in truth} & up
    got = comids(layer("flowline"), QgsFeatureRequest().setFilterRect(QgsRectangle(*RECT)))
    expect(want and len(want) < len(up), f"the rectangle holds {len(want)} of {len(up)}")
    expect(got == want, f"{len(got)} comids, the GPKG driver says {len(want)}")


def check_render():
    lyr = layer("flowline")
    blue = QColor(0, 0, 255)
    symbol = lyr.renderer().symbol()
    symbol.setColor(blue)
    symbol.setWidth(0.8)
    mercator = QgsCoordinateReferenceSystem("EPSG:3857")
    to_mercator = QgsCoordinateTransform(lyr.crs(), mercator, QgsProject.instance())
    settings = QgsMapSettings()
    settings.setLayers([lyr])
    settings.setDestinationCrs(mercator)
    settings.setOutputSize(QSize(500, 500))
    settings.setBackgroundColor(QColor(255, 255, 255))
    settings.setFlag(QgsMapSettings.Antialiasing, False)
    settings.setExtent(to_mercator.transformBoundingBox(lyr.extent()).buffered(2000))
    job = QgsMapRendererParallelJob(settings)
    job.start()
    job.waitForFinished()
    image = job.renderedImage()
    if os.environ.get("HYDROPLOT_QGIS_IMAGE"):
        image.save(os.environ["HYDROPLOT_QGIS_IMAGE"])

    def is_blue(x, y):
        c = image.pixelColor(x, y)
        return c.blue() > 200 and c.red() < 60 and c.green() < 60

    def blue_near(px, py):
        x0, y0 = round(px), round(py)
        return any(is_blue(x, y) for x in range(x0 - 1, x0 + 2) for y in range(y0 - 1, y0 + 2)
                   if 0 <= x < image.width() and 0 <= y < image.height())

    to_pixel = settings.mapToPixel()
    vertices = 0
    misses = []
    for f in lyr.getFeatures():
        for v in list(f.geometry().vertices())[::5]:
            p = to_pixel.transform(to_mercator.transform(v.x(), v.y()))
            vertices += 1
            if not blue_near(p.x(), p.y()):
                misses.append((f["comid"], round(p.x()), round(p.y())))
    expect(vertices > 251, f"only {vertices} vertices looked at")
    expect(not misses, f"{len(misses)} of {vertices} flowline vertices not blue: {misses[:5]}")
    blue_share = sum(is_blue(x, y) for x in range(0, 500, 5) for y in range(0, 500, 5)) / 10000
    expect(0.005 < blue_share < 0.3, f"blue in {blue_share:.1%} of the image")


def check_file_writer():
    lyr = layer("flowline")
    out = os.path.join(scratch.name, "flowline.gpkg")
    options = QgsVectorFileWriter.SaveVectorOptions()
    options.driverName = "GPKG"
    options.layerName = "flowline"
    err = QgsVectorFileWriter.writeAsVectorFormatV3(
        lyr, out, QgsProject.instance().transformContext(), options)
    expect(err[0] == QgsVectorFileWriter.NoError, f"writer: {err}")
    db = sqlite3.connect(out)
    n, distinct = db.execute("SELECT count(*), count(DISTINCT comid) FROM flowline").fetchone()
    expect(n == 251 and distinct == 251, f"{n} rows, {distinct} comids")
    written = {c for (c,) in db.execute("SELECT comid FROM flowline")}
    expect(written == upstream_comids(), "the written comids are not the upstream set")


def check_dissolve():
    sys.path.append("/usr/share/qgis/python/plugins")
    import processing
    from processing.core.Processing import Processing

    Processing.initialize()
    registry = QgsApplication.processingRegistry()
    if registry.providerById("native") is None:
        registry.addProvider(QgsNativeAlgorithms())
    result = processing.run("native:dissolve", {"INPUT": layer("catchment"), "OUTPUT": "memory:"})
    dissolved = list(result["OUTPUT"].getFeatures())
    basin = list(layer("basin").getFeatures())
    expect(len(dissolved) == 1 and len(basin) == 1, f"{len(dissolved)} dissolved, {len(basin)} basins")
    area = QgsDistanceArea()
    area.setSourceCrs(QgsCoordinateReferenceSystem("EPSG:4269"), QgsProject.instance().transformContext())
    area.setEllipsoid("GRS80")
    a = area.measureArea(dissolved[0].geometry())
    b = area.measureArea(basin[0].geometry())
    print(f"    dissolved catchments {a / 1e6:.6f} km2, basin {b / 1e6:.6f} km2, "
          f"relative difference {abs(a - b) / b:.1e}")
    expect(abs(a - b) <= 1e-9 * b, f"dissolved {a} m2, basin {b} m2")


def check_trace():
    lyr = layer("trace", TRACE)
    expect(lyr.isValid(), "invalid trace layer")
    expect(lyr.crs().authid() == "EPSG:4326", f"CRS {lyr.crs().authid()}")
    want = [("id", QVariant.String), ("gnis_name", QVariant.String), ("comid", QVariant.LongLong),
            ("reachcode", QVariant.String), ("raindrop_pathDist", QVariant.Double),
            ("measure", QVariant.Double), ("intersection_point", QVariant.List)]
    got = [(f.name(), f.type()) for f in lyr.fields()]
    expect(got == want, f"fields {got}")
    feats = list(lyr.getFeatures())
    expect(len(feats) == 2, f"{len(feats)} features")
    expect(feats[0]["comid"] == 13297178 and feats[1]["id"] == "raindropPath",
           f"comid {feats[0]['comid']}, id {feats[1]['id']}")
    point = feats[0]["intersection_point"]
    expect(len(point) == 2 and -89.22 < point[0] < -89.21, f"intersection_point {point}")


def check_protocol_dialog():
    """docs/gdal.md's way through the menus: Add Vector Layer > Protocol,
    protocol type GeoJSON, the string as URI."""
    from qgis.core import QgsProviderRegistry
    from qgis.gui import QgsGui
    from qgis.PyQt.QtWidgets import QComboBox, QLineEdit, QRadioButton

    dialog = QgsGui.sourceSelectProviderRegistry().providerByName("ogr").createDataSourceWidget()
    added = []
    dialog.addVectorLayers.connect(lambda uris, encoding, kind: added.extend(uris))
    dialog.findChild(QRadioButton, "radioSrcProtocol").setChecked(True)
    types = dialog.findChild(QComboBox, "cmbProtocolTypes")
    types.setCurrentIndex(types.findText("GeoJSON"))
    dialog.findChild(QLineEdit, "protocolURI").setText(CONN)
    dialog.addButtonClicked()
    expect(added == [CONN], f"the dialog added {added}")
    names = [d.name() for d in QgsProviderRegistry.instance().querySublayers(added[0])]
    expect(names == ["flowline", "basin", "catchment", "network_wtbd", "off_network_wtbd",
                     "outlets", "nhdarea", "flowline_nonnetwork", "gage"], f"sublayers {names}")


def check_bad_string():
    lyr = layer("flowline", "HYDROPLOT:comid=abc")
    expect(not lyr.isValid(), "a layer of HYDROPLOT:comid=abc is valid")


CHECKS = [
    ("every sample layer valid, EPSG:4269, the published counts, iterated", check_layers),
    ("expression filter \"streamorde\" >= 3 (SQL over the sample)", check_expression_filter),
    ("rectangle filter (GDAL's GPKG driver over the sample)", check_rectangle_filter),
    ("flowlines rendered in EPSG:3857: blue at their vertices", check_render),
    ("QgsVectorFileWriter to GeoPackage: the 251 upstream comids (sqlite3)", check_file_writer),
    ("native:dissolve of the catchments: the basin's area", check_dissolve),
    ("trace from the mock: 2 features, the 7 fields", check_trace),
    ("Add Vector Layer > Protocol (GeoJSON type): the string as URI, its 9 layers listed",
     check_protocol_dialog),
    ("a bad string: an invalid layer, no crash", check_bad_string),
]


def main():
    # With its GUI (offscreen): the Add Vector Layer dialog is a widget.
    app = QgsApplication([], True, os.path.join(scratch.name, "profile"))
    app.setPrefixPath("/usr", True)
    app.initQgis()
    failed = 0
    for name, run in CHECKS:
        try:
            run()
            print(f"ok: QGIS: {name}")
        except Exception:
            failed += 1
            print(f"FAIL: QGIS: {name}")
            for line in traceback.format_exc().splitlines()[-6:]:
                print(f"    {line}")
        sys.stdout.flush()
    app.exitQgis()
    scratch.cleanup()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
