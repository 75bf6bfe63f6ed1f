"""Fixtures of the QGIS plugin's tests: one headless QGIS application
(QT_QPA_PLATFORM=offscreen) with Processing, the plugin loaded from
qgis/hydroplot_qgis through qgis.utils as QGIS loads it, the loopback mock
services (target/debug/hydroplot-mock, or HYDROPLOT_TEST_MOCK_BIN) with
the HYDROPLOT_* environment pointing every service at it, and the Yahara
sample GeoPackage.

The hydroplot Python package must be importable (qgis/ci.sh installs it
with pip into target/qgis/site and puts that on PYTHONPATH)."""

import os
import pathlib
import subprocess
import sys

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

ROOT = pathlib.Path(__file__).resolve().parents[2]
PLUGIN_DIR = ROOT / "qgis"
TARGET = pathlib.Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
#: Where tests leave what a person looks at (the map tool's screenshot).
ARTIFACTS = TARGET / "qgis"
QGIS_PLUGINS = "/usr/share/qgis/python/plugins"  # Processing itself

# Published figures upstream of comid 13293970 (nhdplusTools, the Yahara sample).
YAHARA_FLOWLINES = 251
YAHARA_CATCHMENTS = 250
YAHARA_WATERBODIES = 117  # network and off-network together

#: The comids upstream of 13293970, computed independently: a recursive
#: CTE down the sample's Hydroseq -> DnHydroseq links.
UPSTREAM_SQL = """WITH RECURSIVE up(h) AS (
  SELECT Hydroseq FROM NHDFlowline_Network WHERE COMID = 13293970
  UNION SELECT f.Hydroseq FROM NHDFlowline_Network f JOIN up ON f.DnHydroseq = up.h)
SELECT COMID FROM NHDFlowline_Network WHERE Hydroseq IN (SELECT h FROM up)"""


@pytest.fixture(scope="session")
def qgis_app(tmp_path_factory):
    """The QGIS application, Processing initialised; its profile and caches
    (XDG_CACHE_HOME: the library's tile cache) under a temporary folder."""
    home = tmp_path_factory.mktemp("qgis-home")
    os.environ["XDG_CACHE_HOME"] = str(home / "cache")
    from qgis.core import QgsApplication

    QgsApplication.setPrefixPath("/usr", True)
    app = QgsApplication([], False, str(home / "profile"))
    app.initQgis()
    if QGIS_PLUGINS not in sys.path:
        sys.path.append(QGIS_PLUGINS)
    from processing.core.Processing import Processing

    Processing.initialize()
    yield app
    # exitQgis() is left to the process's end: QGIS 3.22 may crash in it
    # while Python still holds layers and providers.


@pytest.fixture(scope="session")
def mock_url():
    """The mock's base URL; the HYDROPLOT_* variables point at it for every
    Context the plugin makes."""
    binary = os.environ.get("HYDROPLOT_TEST_MOCK_BIN", str(TARGET / "debug/hydroplot-mock"))
    proc = subprocess.Popen([binary], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    assert line.startswith("listening "), f"the mock {binary} printed {line!r}"
    base = line.split(" ", 1)[1].strip().rstrip("/")
    saved = {k: os.environ.get(k) for k in SERVICE_VARIABLES}
    os.environ.update(service_variables(base))
    yield base
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value
    proc.stdin.close()
    assert proc.wait(timeout=30) == 0


SERVICE_VARIABLES = ("HYDROPLOT_INDEX_URL", "HYDROPLOT_FABRIC_URL", "HYDROPLOT_TILE_URL")


def service_variables(base, fabric_base=None):
    """The HYDROPLOT_* service URLs of a mock at ``base`` (the fabric at
    ``fabric_base`` when given)."""
    return {
        "HYDROPLOT_INDEX_URL": f"{base}/nldi",
        "HYDROPLOT_FABRIC_URL": f"{fabric_base or base}/fabric/pygeoapi",
        "HYDROPLOT_TILE_URL": f"{base}/tiles/{{z}}/{{x}}/{{y}}.png",
    }


@pytest.fixture(scope="session")
def iface(qgis_app):
    """A QGIS interface as qgis.testing.mocked makes one (which needs the
    ``mock`` package): a real map canvas in a main window never shown,
    mocks for the rest; qgis.utils.iface is it."""
    from unittest import mock

    import qgis.utils
    from qgis.gui import QgisInterface, QgsMapCanvas
    from qgis.PyQt.QtCore import QSize
    from qgis.PyQt.QtWidgets import QMainWindow

    iface = mock.Mock(spec=QgisInterface)
    iface.mainWindow.return_value = QMainWindow()
    canvas = QgsMapCanvas(iface.mainWindow())
    canvas.resize(QSize(800, 600))
    iface.mapCanvas.return_value = canvas
    qgis.utils.iface = iface
    return iface


def start_plugin():
    """Loads and starts the plugin from qgis/ as QGIS does (qgis.utils); returns it."""
    import qgis.utils

    if str(PLUGIN_DIR) not in qgis.utils.plugin_paths:
        qgis.utils.plugin_paths.insert(0, str(PLUGIN_DIR))
        sys.path.insert(0, str(PLUGIN_DIR))
    qgis.utils.updateAvailablePlugins()
    assert qgis.utils.loadPlugin("hydroplot_qgis")
    assert qgis.utils.startPlugin("hydroplot_qgis"), "startPlugin failed: see the exception above"
    return qgis.utils.plugins["hydroplot_qgis"]


@pytest.fixture(scope="session")
def started_plugin(iface, mock_url):
    start_plugin()
    yield
    import qgis.utils

    qgis.utils.unloadPlugin("hydroplot_qgis")


@pytest.fixture()
def plugin(started_plugin):
    """The running plugin (a test may unload and start it again)."""
    import qgis.utils

    return qgis.utils.plugins["hydroplot_qgis"]


@pytest.fixture(scope="session")
def sample_gpkg():
    return str(pathlib.Path(os.environ.get("HYDROPLOT_TEST_DATA", ROOT / "tests/data")) / "yahara_sample.gpkg")


def run(algorithm, parameters, feedback=None):
    """``processing.run`` of ``hydroplot:<algorithm>``."""
    import processing

    return processing.run(f"hydroplot:{algorithm}", parameters, feedback=feedback)


def failure(algorithm, parameters, feedback=None):
    """The message of the QgsProcessingException a run raises (never a traceback)."""
    from qgis.core import QgsProcessingException

    with pytest.raises(QgsProcessingException) as err:
        run(algorithm, parameters, feedback)
    message = str(err.value)
    assert "Traceback" not in message, message
    return message


def point_layer(points, fields=(), crs="EPSG:4326"):
    """A memory point layer of ``points`` ((x, y, {field: value}) tuples)
    with string ``fields``."""
    from qgis.core import QgsFeature, QgsField, QgsGeometry, QgsPointXY, QgsVectorLayer
    from qgis.PyQt.QtCore import QVariant

    layer = QgsVectorLayer(f"Point?crs={crs}", "points", "memory")
    provider = layer.dataProvider()
    provider.addAttributes([QgsField(name, QVariant.String) for name in fields])
    layer.updateFields()
    features = []
    for x, y, values in points:
        f = QgsFeature(layer.fields())
        f.setGeometry(QgsGeometry.fromPointXY(QgsPointXY(x, y)))
        f.setAttributes([values.get(name) for name in fields])
        features.append(f)
    assert provider.addFeatures(features)[0]
    return layer


def catchment_points(sample_gpkg, featureids):
    """A point inside each catchment ``featureids`` of the sample, found by
    QGIS itself (QgsGeometry.pointOnSurface), in EPSG:4326 (x, y)."""
    from qgis.core import (
        QgsCoordinateReferenceSystem,
        QgsCoordinateTransform,
        QgsFeatureRequest,
        QgsProject,
        QgsVectorLayer,
    )

    layer = QgsVectorLayer(f"{sample_gpkg}|layername=CatchmentSP", "catchments", "ogr")
    assert layer.isValid()
    to_wgs84 = QgsCoordinateTransform(layer.crs(), QgsCoordinateReferenceSystem("EPSG:4326"), QgsProject.instance())
    ids = ",".join(str(i) for i in featureids)
    points = {}
    for f in layer.getFeatures(QgsFeatureRequest().setFilterExpression(f'"FEATUREID" IN ({ids})')):
        p = to_wgs84.transform(f.geometry().pointOnSurface().asPoint())
        points[int(f["FEATUREID"])] = (p.x(), p.y())
    return [points[i] for i in featureids]


_EXIT_STATUS = []


def pytest_sessionfinish(session, exitstatus):
    _EXIT_STATUS.append(int(exitstatus))


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config):
    """Ends the process as soon as pytest is done, with its exit status:
    QGIS 3.22 may crash in its own teardown at interpreter exit (seen as a
    segmentation fault after every test had passed), which would turn a
    passing run into a failed one."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(_EXIT_STATUS[-1] if _EXIT_STATUS else 0)
