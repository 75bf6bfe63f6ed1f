"""The plugin: the Processing provider and the map tool's toolbar button."""

from qgis.core import Qgis, QgsApplication, QgsProject
from qgis.PyQt.QtGui import QIcon
from qgis.PyQt.QtWidgets import QAction

from .algorithm import ICON
from .maptool import UpstreamMapTool
from .provider import HydroplotProvider

MENU = "&hydroplot"


class HydroplotPlugin:
    """Created by :func:`classFactory`; owns its provider registration, its
    toolbar, action and map tool from ``initGui`` to ``unload``."""

    def __init__(self, iface):
        self.iface = iface
        self.provider = None
        self.toolbar = None
        self.action = None
        self.tool = None

    def initProcessing(self):
        # QGIS calls it alone where there is no GUI (qgis_process), and the
        # plugin from initGui otherwise: the provider is added once.
        if self.provider is None:
            self.provider = HydroplotProvider()
            QgsApplication.processingRegistry().addProvider(self.provider)

    def initGui(self):
        self.initProcessing()
        canvas = self.iface.mapCanvas()
        self.tool = UpstreamMapTool(canvas, QgsProject.instance(), self.notify)
        self.action = QAction(QIcon(ICON), "Upstream network and basin of a click", self.iface.mainWindow())
        self.action.setCheckable(True)
        self.action.setToolTip("hydroplot: click the map to add the upstream network and basin there")
        self.action.toggled.connect(self.toggle_tool)
        self.tool.setAction(self.action)
        self.toolbar = self.iface.addToolBar("hydroplot")
        self.toolbar.setObjectName("hydroplot")
        self.toolbar.addAction(self.action)
        self.iface.addPluginToMenu(MENU, self.action)

    def toggle_tool(self, on):
        canvas = self.iface.mapCanvas()
        if on:
            canvas.setMapTool(self.tool)
        elif canvas.mapTool() is self.tool:
            canvas.unsetMapTool(self.tool)

    def notify(self, level, text):
        """Shows ``text`` in the message bar (``level``: "error" or "info")."""
        self.iface.messageBar().pushMessage(
            "hydroplot", text, Qgis.Critical if level == "error" else Qgis.Info, 10)

    def unload(self):
        if self.tool is not None:
            self.tool.abandon()
            self.iface.mapCanvas().unsetMapTool(self.tool)
            self.tool = None
        if self.action is not None:
            self.iface.removePluginMenu(MENU, self.action)
            self.action.deleteLater()
            self.action = None
        if self.toolbar is not None:
            self.toolbar.deleteLater()
            self.toolbar = None
        if self.provider is not None:
            QgsApplication.processingRegistry().removeProvider(self.provider)
            self.provider = None
