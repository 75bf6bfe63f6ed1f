"""hydroplot in QGIS: Processing algorithms and a map tool over the hydroplot
Python package (``import hydroplot``), which does all the work.

QGIS calls :func:`classFactory` when it loads the plugin. Without the Python
package the plugin still loads and says, once, how to install it.
"""


def classFactory(iface):
    """The plugin object for QGIS's ``iface`` (a ``QgisInterface``)."""
    from .requirement import missing_package

    problem = missing_package()
    if problem is not None:
        from .missing import MissingPackagePlugin

        return MissingPackagePlugin(iface, problem)
    from .plugin import HydroplotPlugin

    return HydroplotPlugin(iface)
