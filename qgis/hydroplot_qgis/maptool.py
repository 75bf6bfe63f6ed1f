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

from . import styles, upstream
from .algorithm import WGS84

#: The plot-data layers a click adds, top of the group first (not the catchments).
ADDED = ("outlets", "flowline", "network_wtbd", "off_network_wtbd", "basin")
#: plot-data layer -> (output parameter, layer name), as the algorithm has them.
OUTPUTS = {layer: (name, description) for layer, name, description, _ in upstream.LAYERS}
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
        to_wgs84 = QgsCoordinateTransform(self.canvas().mapSettings().destinationCrs(),
                                          QgsCoordinateReferenceSystem(WGS84), self.project)
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
        parameters = {OUTPUTS[layer][0]: "TEMPORARY_OUTPUT" for layer in ADDED}
        parameters[upstream.UpstreamAlgorithm.OUTLET_POINT] = f"{point.x()},{point.y()} [EPSG:4326]"
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
        layers = {kind: self.context.takeResultLayer(results[OUTPUTS[kind][0]]) for kind in ADDED}
        group = self.project.layerTreeRoot().insertGroup(0, group_name(layers["outlets"], self.point))
        for kind in ADDED:
            layer = layers[kind]
            layer.setName(OUTPUTS[kind][1])
            styles.apply(layer, kind)
            self.project.addMapLayer(layer, False)
            group.addLayer(layer)
        return group


def group_name(outlets, point):
    """The group's name: the outlet's comid when the outlet layer has one,
    else the clicked point."""
    if "comid" in outlets.fields().names():
        for f in outlets.getFeatures():
            if f["comid"]:
                return f"Upstream of comid {f['comid']}"
    return f"Upstream of ({point.x():.5f}, {point.y():.5f})"


def failure_text(feedback, point):
    """What went wrong, as the algorithm reported it."""
    lines = [line for line in feedback.textLog().splitlines() if line.strip()]
    return f"hydroplot at ({point.x():.5f}, {point.y():.5f}): {lines[-1] if lines else 'cancelled'}"
