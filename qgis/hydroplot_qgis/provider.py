"""The Processing provider "hydroplot" and its three algorithms."""

from qgis.core import QgsProcessingProvider
from qgis.PyQt.QtGui import QIcon

from .algorithm import ICON
from .comids import ComidAtPointsAlgorithm
from .trace import RaindropTraceAlgorithm
from .upstream import UpstreamAlgorithm


class HydroplotProvider(QgsProcessingProvider):
    """Registered by the plugin (``processing`` ids ``hydroplot:upstream``,
    ``hydroplot:raindrop_trace``, ``hydroplot:comid_at_points``); QGIS owns
    it once added to the registry."""

    def id(self):
        return "hydroplot"

    def name(self):
        return "hydroplot"

    def longName(self):
        import hydroplot

        return f"hydroplot {hydroplot.version()}"

    def icon(self):
        return QIcon(ICON)

    def loadAlgorithms(self):
        for algorithm in (UpstreamAlgorithm(), RaindropTraceAlgorithm(), ComidAtPointsAlgorithm()):
            self.addAlgorithm(algorithm)
