"""What the hydroplot Processing algorithms share: the advanced "Context
options" parameter, the library run wired to the feedback, point layers read
as the library takes points, and output sinks filled from GeoJSON."""

import os

from qgis.core import (
    QgsCoordinateReferenceSystem,
    QgsCoordinateTransform,
    QgsFeatureSink,
    QgsPointXY,
    QgsProcessingAlgorithm,
    QgsProcessingException,
    QgsProcessingParameterDefinition,
    QgsProcessingParameterString,
)
from qgis.PyQt.QtGui import QIcon

from . import features
from .library import LibraryRun, parse_options

#: The CRS the library takes points in when none is named.
WGS84 = "EPSG:4326"
#: The plot data's CRS (NAD83), as the library returns it.
NAD83 = "EPSG:4269"

ICON = os.path.join(os.path.dirname(__file__), "icon.png")


class HydroplotAlgorithm(QgsProcessingAlgorithm):
    """A Processing algorithm over the hydroplot package; subclasses declare
    ``NAME``, ``DISPLAY_NAME``, ``HELP`` and their parameters."""

    CONTEXT_OPTIONS = "CONTEXT_OPTIONS"

    def name(self):
        return self.NAME

    def displayName(self):
        return self.DISPLAY_NAME

    def shortHelpString(self):
        return self.HELP

    def icon(self):
        return QIcon(ICON)

    def createInstance(self):
        return type(self)()

    def add_context_options(self):
        """The advanced parameter of the library's context options."""
        param = QgsProcessingParameterString(
            self.CONTEXT_OPTIONS,
            "Context options (key=value; ...: proxy, ca_bundle, timeout_s, retries, index_url, ...)",
            optional=True,
        )
        param.setFlags(param.flags() | QgsProcessingParameterDefinition.FlagAdvanced)
        self.addParameter(param)

    def library(self, parameters, context, feedback):
        """A :class:`LibraryRun` for this run (its context options read from the parameter)."""
        options = parse_options(self.parameterAsString(parameters, self.CONTEXT_OPTIONS, context))
        return LibraryRun(feedback, options)

    def sink(self, parameters, name, context, fields, geometry_kind, crs):
        """The feature sink of output ``name`` with ``fields`` (a QgsFields),
        ``geometry_kind`` (a name :func:`features.wkb_type` takes, or a WKB
        type) in ``crs`` (a QgsCoordinateReferenceSystem or its id), and its id or path, or (None, None) when the output is not asked for."""
        if parameters.get(name) is None:
            return None, None
        if isinstance(crs, str):
            crs = QgsCoordinateReferenceSystem(crs)
        wkb = features.wkb_type(geometry_kind) if isinstance(geometry_kind, str) else geometry_kind
        sink, dest = self.parameterAsSink(parameters, name, context, fields, wkb, crs)
        if sink is None:
            raise QgsProcessingException(self.invalidSinkError(parameters, name))
        return sink, dest

    def write_geojson(self, parameters, name, context, collection, geometry_kind, crs):
        """Output ``name`` filled with a GeoJSON FeatureCollection's features;
        returns the output's id or path, or None when not asked for."""
        items = collection["features"]
        fields = features.make_fields(features.property_fields(items))
        sink, dest = self.sink(parameters, name, context, fields, geometry_kind, crs)
        if sink is None:
            return None
        multi = geometry_kind != "point"
        for item in items:
            sink.addFeature(features.from_geojson(fields, item, multi=multi), QgsFeatureSink.FastInsert)
        return dest


def points_of(source, context, name):
    """The features of a point ``source`` (a QgsProcessingFeatureSource), in
    its CRS, and their points as (lon, lat) in WGS 84, in the layer's order.
    A feature without exactly one point is refused, naming it, before any
    request."""
    to_wgs84 = QgsCoordinateTransform(source.sourceCrs(), QgsCoordinateReferenceSystem(WGS84),
                                      context.transformContext())
    rows, points = [], []
    for f in source.getFeatures():
        geom = f.geometry()
        parts = [] if geom.isNull() or geom.isEmpty() else list(geom.vertices())
        if len(parts) != 1:
            raise QgsProcessingException(f"{name}: feature {f.id()} has no single point (it has {len(parts)})")
        point = to_wgs84.transform(QgsPointXY(parts[0].x(), parts[0].y()))
        rows.append(f)
        points.append((point.x(), point.y()))
    return rows, points
