"""The "Raindrop trace" algorithm: ``hydroplot.get_raindrop_trace`` of one
point, or ``get_raindrop_traces`` of every point of a layer as the batch CLI
does (docs/batch.md): each output feature carries the point's index and
attributes, and the points that failed go to the errors output."""

import hydroplot
from qgis.core import (
    QgsCoordinateReferenceSystem,
    QgsFeatureSink,
    QgsProcessing,
    QgsProcessingException,
    QgsProcessingParameterEnum,
    QgsProcessingParameterFeatureSink,
    QgsProcessingParameterFeatureSource,
    QgsProcessingParameterPoint,
)
from qgis.PyQt.QtCore import QVariant

from . import features
from .algorithm import WGS84, HydroplotAlgorithm, points_of

#: The trace's 7 fields, in the spec's order, and their types.
TRACE_FIELDS = (
    ("id", QVariant.String),
    ("gnis_name", QVariant.String),
    ("comid", QVariant.LongLong),
    ("reachcode", QVariant.String),
    ("raindrop_pathDist", QVariant.Double),
    ("measure", QVariant.Double),
    ("intersection_point", QVariant.String),
)
#: The field of a point's index in its layer (0-based, as the CLI's).
POINT_INDEX = "point_index"
#: The field of a failed point's message.
ERROR = "error"
DIRECTIONS = ("down", "up", "none")

HELP = """<p>The raindrop trace of a point: the path a raindrop falling there takes over the land to the
nearest flowline, and the portion of that flowline from the point where it arrives, downstream or
upstream (the NLDI's raindropTrace process, through the hydroplot Python package).</p>
<p><b>Point</b>: one point (click it on the map). <b>Point layer</b>: every point of a layer (or its
selected features), traced as a batch, several requests at once within the services' limits.</p>
<p><b>Direction</b>: <code>down</code>, <code>up</code> or <code>none</code>.</p>
<h3>Outputs</h3>
<p><b>Flowline portion</b> and <b>raindrop path</b>, lines in WGS 84 with the trace's 7 fields:
<code>id</code>, <code>gnis_name</code>, <code>comid</code>, <code>reachcode</code>,
<code>raindrop_pathDist</code>, <code>measure</code> and <code>intersection_point</code> (the
<code>[lon, lat]</code> where the raindrop meets the flowline, as JSON text; <code>[]</code> on the path).
From a point layer each feature starts with <code>point_index</code> (the point's 0-based position in the
layer) and the point's own attributes, as the batch CLI writes them.</p>
<p><b>Errors</b>: from a point layer, one row per point that could not be traced
(<code>point_index</code>, the point's attributes, <code>error</code>: the library's message); the
other points are traced all the same. A single point's failure is the algorithm's error.</p>
<p>Cancel stops the requests within a second.</p>"""


class RaindropTraceAlgorithm(HydroplotAlgorithm):
    """Raindrop traces as a Processing algorithm."""

    NAME = "raindrop_trace"
    DISPLAY_NAME = "Raindrop trace"
    HELP = HELP

    POINT = "POINT"
    POINTS = "POINTS"
    DIRECTION = "DIRECTION"
    FLOWLINE = "FLOWLINE"
    PATH = "RAINDROP_PATH"
    ERRORS = "ERRORS"

    def initAlgorithm(self, config=None):
        self.addParameter(QgsProcessingParameterPoint(self.POINT, "Point", optional=True))
        self.addParameter(QgsProcessingParameterFeatureSource(
            self.POINTS, "Point layer", [QgsProcessing.TypeVectorPoint], optional=True))
        self.addParameter(QgsProcessingParameterEnum(self.DIRECTION, "Direction", list(DIRECTIONS), defaultValue=0))
        self.add_context_options()
        self.addParameter(QgsProcessingParameterFeatureSink(
            self.FLOWLINE, "Flowline portion", QgsProcessing.TypeVectorLine, optional=True, createByDefault=True))
        self.addParameter(QgsProcessingParameterFeatureSink(
            self.PATH, "Raindrop path", QgsProcessing.TypeVectorLine, optional=True, createByDefault=True))
        self.addParameter(QgsProcessingParameterFeatureSink(
            self.ERRORS, "Points that failed", QgsProcessing.TypeVector, optional=True, createByDefault=True))

    def processAlgorithm(self, parameters, context, feedback):
        has_point = parameters.get(self.POINT) not in (None, "")
        has_layer = parameters.get(self.POINTS) is not None
        if has_point == has_layer:
            raise QgsProcessingException("Give either a point or a point layer")
        direction = DIRECTIONS[self.parameterAsEnum(parameters, self.DIRECTION, context)]
        run = self.library(parameters, context, feedback)
        if has_point:
            point = self.parameterAsPoint(parameters, self.POINT, context, QgsCoordinateReferenceSystem(WGS84))
            trace = run.call(hydroplot.get_raindrop_trace, (point.x(), point.y()), direction, output="geojson")
            return self.write_traces(parameters, context, [], [], [((), trace)], [])
        source = self.parameterAsSource(parameters, self.POINTS, context)
        if source is None:
            raise QgsProcessingException(self.invalidSourceError(parameters, self.POINTS))
        carried = [source.fields().at(i) for i in range(source.fields().count())]
        refuse_clashes(carried, [POINT_INDEX, ERROR] + [name for name, _ in TRACE_FIELDS])
        rows, points = points_of(source, context, "Point layer")
        results = run.call(hydroplot.get_raindrop_traces, points, direction, output="geojson")
        traced, failed = [], []
        for index, (row, result) in enumerate(zip(rows, results)):
            leading = [index] + row.attributes()
            if isinstance(result, hydroplot.HydroplotError):
                failed.append(leading + [result.message or result.name])
                feedback.reportError(f"point {index}: {result.message or result.name}")
            else:
                traced.append((leading, result))
        feedback.pushInfo(f"{len(traced)} traced, {len(failed)} failed")
        return self.write_traces(parameters, context, [features.field(POINT_INDEX, QVariant.LongLong)], carried,
                                 traced, failed)

    def write_traces(self, parameters, context, index_field, carried, traced, failed):
        """The outputs: each trace's 2 features (flowline portion, raindrop
        path) after the ``leading`` values of its point, and the failures."""
        leading_fields = index_field + carried
        fields = features.make_fields(leading_fields + [features.field(n, t) for n, t in TRACE_FIELDS])
        results = {}
        for position, name in ((0, self.FLOWLINE), (1, self.PATH)):
            sink, dest = self.sink(parameters, name, context, fields, "line", WGS84)
            if sink is None:
                continue
            for leading, trace in traced:
                item = trace["features"][position]
                sink.addFeature(features.from_geojson(fields, item, leading), QgsFeatureSink.FastInsert)
            results[name] = dest
        if index_field:
            error_fields = features.make_fields(leading_fields + [features.field(ERROR, QVariant.String)])
            sink, dest = self.sink(parameters, self.ERRORS, context, error_fields, "none", WGS84)
            if sink is not None:
                for values in failed:
                    sink.addFeature(features.feature(error_fields, values), QgsFeatureSink.FastInsert)
                results[self.ERRORS] = dest
        return results


def refuse_clashes(carried, names):
    """Refuses a carried field named as an output field (as the batch CLI
    refuses a column named point_index, comid or error), before any request."""
    taken = {name.lower() for name in names}
    for f in carried:
        if f.name().lower() in taken:
            raise QgsProcessingException(
                f"The point layer's field {f.name()!r} has the name of an output field: rename it first"
            )
