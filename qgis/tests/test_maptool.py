"""The map tool's click handler on a canvas that is never shown: a click
inside catchment 13293970 adds its upstream network and basin (from the
mock services, through the first algorithm in a background task) as styled
layers in a group named after the outlet. The rendered result is written to
target/qgis/qgis-maptool.png: docs/qgis-maptool.png is a copy of it."""

import time

import pytest
from conftest import ARTIFACTS, YAHARA_FLOWLINES, YAHARA_WATERBODIES, catchment_points

#: How long a request may take before the test gives up waiting (not a speed check).
PATIENCE_S = 120


def click(tool, canvas, map_point, button):
    """The tool's release handler with a mouse event at ``map_point``."""
    from qgis.gui import QgsMapMouseEvent
    from qgis.PyQt.QtCore import QEvent, QPoint

    event = QgsMapMouseEvent(canvas, QEvent.MouseButtonRelease, QPoint(0, 0), button)
    event.setMapPoint(map_point)
    tool.canvasReleaseEvent(event)


def wait_for(tool):
    from qgis.core import QgsApplication

    deadline = time.monotonic() + PATIENCE_S
    while tool.requests and time.monotonic() < deadline:
        QgsApplication.processEvents()
        time.sleep(0.01)
    assert not tool.requests, "the request did not end"


def in_canvas_crs(canvas, lon, lat):
    from qgis.core import (
        QgsCoordinateReferenceSystem,
        QgsCoordinateTransform,
        QgsPointXY,
        QgsProject,
    )

    to_canvas = QgsCoordinateTransform(QgsCoordinateReferenceSystem("EPSG:4326"),
                                       canvas.mapSettings().destinationCrs(), QgsProject.instance())
    return to_canvas.transform(QgsPointXY(lon, lat))


@pytest.fixture()
def canvas(iface):
    from qgis.core import QgsCoordinateReferenceSystem

    canvas = iface.mapCanvas()
    canvas.setDestinationCrs(QgsCoordinateReferenceSystem("EPSG:3857"))
    return canvas


def symbol_of(layer):
    return layer.renderer().symbol()


def test_a_click_adds_the_styled_upstream_network_and_basin_in_a_group(plugin, canvas, sample_gpkg):
    from qgis.core import QgsProject
    from qgis.PyQt.QtCore import Qt

    project = QgsProject.instance()
    before = set(project.mapLayers())
    [(lon, lat)] = catchment_points(sample_gpkg, [13293970])
    tool = plugin.tool
    click(tool, canvas, in_canvas_crs(canvas, lon, lat), Qt.RightButton)
    assert tool.requests == []  # only the left button asks
    click(tool, canvas, in_canvas_crs(canvas, lon, lat), Qt.LeftButton)
    assert len(tool.requests) == 1
    request = tool.requests[0]
    wait_for(tool)
    group = request.group
    assert group is not None, request.feedback.textLog()
    try:
        assert group.name() == "Upstream of comid 13293970"
        assert project.layerTreeRoot().children()[0] is group
        layers = {node.layer().name(): node.layer() for node in group.findLayers()}
        assert [node.layer().name() for node in group.findLayers()] == [
            "Outlets", "Flowlines", "Network waterbodies", "Off-network waterbodies", "Basin"]
        assert set(project.mapLayers()) - before == {layer.id() for layer in layers.values()}
        assert layers["Flowlines"].featureCount() == YAHARA_FLOWLINES
        assert layers["Basin"].featureCount() == 1
        assert layers["Network waterbodies"].featureCount() + layers["Off-network waterbodies"].featureCount() \
            == YAHARA_WATERBODIES
        check_styles(layers)
        render(canvas, layers, ARTIFACTS / "qgis-maptool.png")
    finally:
        for layer in group.findLayers():
            project.removeMapLayer(layer.layerId())
        project.layerTreeRoot().removeChildNode(group)


def check_styles(layers):
    """The library's map styles (src/render/style.rs)."""
    from qgis.PyQt.QtCore import Qt

    assert symbol_of(layers["Flowlines"]).color().name() == "#0000ff"
    basin = symbol_of(layers["Basin"]).symbolLayer(0)
    assert basin.brushStyle() == Qt.NoBrush
    assert basin.strokeColor().name() == "#000000"
    for name, fill in (("Network waterbodies", "#add8e6"), ("Off-network waterbodies", "#00008b")):
        layer = symbol_of(layers[name]).symbolLayer(0)
        assert (layer.fillColor().name(), layer.strokeColor().name()) == (fill, "#000000"), name
    assert symbol_of(layers["Outlets"]).color().name() == "#000000"


def render(canvas, layers, path):
    """Draws the group's layers as the canvas would, framed on the basin,
    to ``path`` (a PNG)."""
    from qgis.core import QgsMapRendererParallelJob, QgsMapSettings
    from qgis.PyQt.QtCore import QSize
    from qgis.PyQt.QtGui import QColor

    settings = QgsMapSettings()
    settings.setDestinationCrs(canvas.mapSettings().destinationCrs())
    settings.setOutputSize(QSize(900, 700))
    settings.setBackgroundColor(QColor("white"))
    settings.setLayers([layers[name] for name in
                        ("Outlets", "Flowlines", "Network waterbodies", "Off-network waterbodies", "Basin")])
    basin = layers["Basin"]
    extent = settings.layerExtentToOutputExtent(basin, basin.extent())
    extent.scale(1.05)
    settings.setExtent(extent)
    job = QgsMapRendererParallelJob(settings)
    job.start()
    job.waitForFinished()
    path.parent.mkdir(parents=True, exist_ok=True)
    assert job.renderedImage().save(str(path))


def test_a_failed_click_says_why_and_adds_nothing(plugin, iface, canvas):
    from qgis.core import QgsProject
    from qgis.PyQt.QtCore import Qt

    project = QgsProject.instance()
    before = set(project.mapLayers())
    iface.messageBar.reset_mock()
    tool = plugin.tool
    click(tool, canvas, in_canvas_crs(canvas, -100.0, 40.0), Qt.LeftButton)  # outside the data
    request = tool.requests[0]
    wait_for(tool)
    assert request.group is None
    assert set(project.mapLayers()) == before
    [call] = iface.messageBar.return_value.pushMessage.call_args_list
    text = call.args[1]
    assert text.startswith("hydroplot at (-100.00000, 40.00000): "), text
    assert "Traceback" not in text, text
