"""The "Comid at points" algorithm: ``hydroplot.get_comids`` of every point
of a layer, from the fabric service or a local NHDPlus GeoPackage; the layer
comes back with a ``comid`` field."""

import hydroplot
from qgis.core import (
    QgsFeatureSink,
    QgsProcessing,
    QgsProcessingException,
    QgsProcessingParameterFeatureSink,
    QgsProcessingParameterFeatureSource,
    QgsProcessingParameterFile,
)
from qgis.PyQt.QtCore import QVariant

from . import features
from .algorithm import HydroplotAlgorithm, points_of
from .trace import ERROR, POINT_INDEX, refuse_clashes

COMID = "comid"

HELP = """<p>The NHDPlus comid of the catchment holding each point of a layer (or of its selected
features), through the hydroplot Python package's <code>get_comids</code>.</p>
<p>Without a <b>local NHDPlus GeoPackage</b> the fabric service answers (one request per distinct point,
several at once, slowing down when the service asks to); with one, its catchments answer and no request
is made. A point on the edge of two catchments gets the smaller comid, from either source.</p>
<h3>Outputs</h3>
<p><b>Points with comids</b>: the layer as it is, with a <code>comid</code> field added (NULL for a point in
no catchment, or one that failed). <b>Points that failed</b>: <code>point_index</code> (0-based), the
point's attributes and <code>error</code> (the library's message), as the batch CLI lists them.</p>
<p>Cancel stops the requests within a second.</p>"""


class ComidAtPointsAlgorithm(HydroplotAlgorithm):
    """Point-to-comid lookups as a Processing algorithm."""

    NAME = "comid_at_points"
    DISPLAY_NAME = "Comid at points"
    HELP = HELP

    INPUT = "INPUT"
    HYDRO_DATA = "HYDRO_DATA"
    OUTPUT = "OUTPUT"
    ERRORS = "ERRORS"

    def initAlgorithm(self, config=None):
        self.addParameter(QgsProcessingParameterFeatureSource(
            self.INPUT, "Point layer", [QgsProcessing.TypeVectorPoint]))
        self.addParameter(QgsProcessingParameterFile(
            self.HYDRO_DATA, "Local NHDPlus GeoPackage", extension="gpkg", optional=True))
        self.add_context_options()
        self.addParameter(QgsProcessingParameterFeatureSink(
            self.OUTPUT, "Points with comids", QgsProcessing.TypeVectorPoint))
        self.addParameter(QgsProcessingParameterFeatureSink(
            self.ERRORS, "Points that failed", QgsProcessing.TypeVector, optional=True, createByDefault=True))

    def processAlgorithm(self, parameters, context, feedback):
        source = self.parameterAsSource(parameters, self.INPUT, context)
        if source is None:
            raise QgsProcessingException(self.invalidSourceError(parameters, self.INPUT))
        carried = [source.fields().at(i) for i in range(source.fields().count())]
        refuse_clashes(carried, [COMID])
        rows, points = points_of(source, context, "Point layer")
        run = self.library(parameters, context, feedback)
        hydro_data = self.parameterAsFile(parameters, self.HYDRO_DATA, context) or None
        results = run.call(hydroplot.get_comids, points, hydro_data=hydro_data)
        out_fields = features.make_fields(carried + [features.field(COMID, QVariant.LongLong)])
        sink, dest = self.sink(parameters, self.OUTPUT, context, out_fields, source.wkbType(), source.sourceCrs())
        error_fields = features.make_fields(
            [features.field(POINT_INDEX, QVariant.LongLong)] + carried + [features.field(ERROR, QVariant.String)])
        errors, errors_dest = self.sink(parameters, self.ERRORS, context, error_fields, "none", "")
        counts = {"resolved": 0, "in no catchment": 0, "failed": 0}
        for index, (row, result) in enumerate(zip(rows, results)):
            failed = isinstance(result, hydroplot.HydroplotError)
            if failed:
                message = result.message or result.name
                feedback.reportError(f"point {index}: {message}")
                if errors is not None:
                    errors.addFeature(features.feature(error_fields, [index] + row.attributes() + [message]),
                                      QgsFeatureSink.FastInsert)
            counts["failed" if failed else "resolved" if result else "in no catchment"] += 1
            comid = None if failed else result
            sink.addFeature(features.feature(out_fields, row.attributes() + [comid], row.geometry()),
                            QgsFeatureSink.FastInsert)
        feedback.pushInfo(", ".join(f"{n} {what}" for what, n in counts.items()))
        outputs = {self.OUTPUT: dest}
        if errors is not None:
            outputs[self.ERRORS] = errors_dest
        return outputs
