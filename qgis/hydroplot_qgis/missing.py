"""The plugin as it loads without the hydroplot Python package: one message,
in the message bar and in the log, saying how to install it; nothing else."""

from qgis.core import Qgis, QgsMessageLog


class MissingPackagePlugin:
    """Stands in for :class:`~.plugin.HydroplotPlugin`; owns nothing."""

    def __init__(self, iface, message):
        self.iface = iface
        self.message = message

    def initProcessing(self):
        # Where QGIS runs Processing alone (qgis_process) there is only the log.
        QgsMessageLog.logMessage(self.message, "hydroplot", Qgis.Critical)

    def initGui(self):
        QgsMessageLog.logMessage(self.message, "hydroplot", Qgis.Critical)
        if self.iface is not None:
            self.iface.messageBar().pushMessage("hydroplot", self.message, Qgis.Critical, 0)

    def unload(self):
        pass
