"""The map tool: a click adds the upstream network and basin of the
catchment under it, through the "Upstream network and basin" algorithm in a
background task (the map stays responsive), styled as the library's map
and grouped under a layer group named after the outlet."""

from qgis.core import (
    QgsApplication,
    QgsCoordinateReferenceSystem,
    QgsCoordinateTransform,
    QgsProcessingAlgRunnerTask,
    QgsProcessingContext,
    QgsProcessingFeedback,
)
from qgis.gui import QgsMapToolEmitPoint
from qgis.PyQt.QtCore import Qt

from . import styles
from .upstream import UpstreamAlgorithm

#: (plot-data layer, output parameter, layer name), top of the group first.
LAYERS = (
    ("outlets", "OUTLETS", "Outlet"),
    ("flowline", "FLOWLINE", "Flowlines"),
    ("network_wtbd", "NETWORK_WTBD", "Network waterbodies"),
    ("off_network_wtbd", "OFF_NETWORK_WTBD", "Off-network waterbodies"),
    ("basin", "BASIN", "Basin"),
)
WGS84 = QgsCoordinateReferenceSystem("EPSG:4326")
#: The algorithm a click runs (the plugin's provider registers it).
ALGORITHM = "hydroplot:upstream"


class UpstreamMapTool(QgsMapToolEmitPoint):
    """Owned by the plugin; adds its layers to ``project``. ``notify(level,
    text)`` tells the user of failures (the message bar). Keeps each running
    :class:`UpstreamRequest` until it ends."""

    def __init__(self, canvas, project, notify):
        super().__init__(canvas)
        self.project = project
        self.notify = notify
        self.requests = []
        self.setCursor(Qt.CrossCursor)

    def canvasReleaseEvent(self, event):
        if event.button() == Qt.LeftButton:
            self.add_upstream(event.mapPoint())

    def add_upstream(self, map_point):
        """Starts the request for ``map_point`` (a QgsPointXY in the canvas's
        CRS) and returns it."""
        to_wgs84 = QgsCoordinateTransform(self.canvas().mapSettings().destinationCrs(), WGS84, self.project)
        request = UpstreamRequest(to_wgs84.transform(map_point), self.project, self.notify, self.requests.remove)
        self.requests.append(request)
        request.start()
        return request

    def abandon(self):
        """Cancels the running requests; their layers are never added."""
        for request in list(self.requests):
            request.abandon()


class UpstreamRequest:
    """One click's algorithm run as a ``QgsProcessingAlgRunnerTask``; owns
    the processing context and feedback the task uses until it ends, then
    adds the layers (on the main thread) unless abandoned."""

    def __init__(self, point, project, notify, ended):
        self.point = point
        self.project = project
        self.notify = notify
        self.ended = ended
        self.abandoned = False
        self.group = None
        self.context = QgsProcessingContext()
        self.context.setProject(project)
        self.feedback = QgsProcessingFeedback()
        parameters = {name: "TEMPORARY_OUTPUT" for _, name, _ in LAYERS}
        parameters[UpstreamAlgorithm.OUTLET_POINT] = f"{point.x()},{point.y()} [EPSG:4326]"
        algorithm = QgsApplication.processingRegistry().algorithmById(ALGORITHM)
        self.task = QgsProcessingAlgRunnerTask(algorithm, parameters, self.context, self.feedback)
        self.task.executed.connect(self.finished)
        # QGIS owns the task once added, and the task reads the context and
        # feedback until its end (its finished() too, on the main thread):
        # the task's wrapper, which sip keeps while QGIS holds the task,
        # holds this request, whoever else lets go of it (an unload).
        self.task.request = self

    def start(self):
        QgsApplication.taskManager().addTask(self.task)

    def abandon(self):
        self.abandoned = True
        self.task.cancel()

    def finished(self, successful, results):
        try:
            if self.abandoned:
                return
            if not successful:
                self.notify("error", failure_text(self.feedback, self.point))
                return
            self.group = self.add_layers(results)
        finally:
            self.ended(self)

    def add_layers(self, results):
        """The result layers, styled, in a new group at the top of the
        layer tree; returns the group."""
        layers = {kind: self.context.takeResultLayer(results[name]) for kind, name, _ in LAYERS}
        group = self.project.layerTreeRoot().insertGroup(0, group_name(layers["outlets"], self.point))
        for kind, _, title in LAYERS:
            layer = layers[kind]
            layer.setName(title)
            styles.apply(layer, kind)
            self.project.addMapLayer(layer, False)
            group.addLayer(layer)
        return group


def group_name(outlets, point):
    """The group's name: the outlet's comid when the outlet layer has one,
    else the clicked point."""
    names = outlets.fields().names()
    for f in outlets.getFeatures():
        for key in ("comid", "featureid", "identifier"):
            if key in names and f[key] not in (None, ""):
                return f"Upstream of comid {f[key]}"
    return f"Upstream of ({point.x():.5f}, {point.y():.5f})"


def failure_text(feedback, point):
    """What went wrong, as the algorithm reported it."""
    lines = [line for line in feedback.textLog().splitlines() if line.strip()]
    return f"hydroplot at ({point.x():.5f}, {point.y():.5f}): {lines[-1] if lines else 'cancelled'}"
