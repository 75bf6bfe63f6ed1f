"""The "Upstream network and basin" algorithm: ``hydroplot.plot_hydro`` with
its outlets, options and outputs as Processing parameters."""

import hydroplot
from qgis.core import (
    QgsCoordinateReferenceSystem,
    QgsProcessing,
    QgsProcessingException,
    QgsProcessingParameterBoolean,
    QgsProcessingParameterDefinition,
    QgsProcessingParameterEnum,
    QgsProcessingParameterExtent,
    QgsProcessingParameterFeatureSink,
    QgsProcessingParameterFeatureSource,
    QgsProcessingParameterFile,
    QgsProcessingParameterFileDestination,
    QgsProcessingParameterPoint,
    QgsProcessingParameterString,
)

from .algorithm import NAD83, WGS84, HydroplotAlgorithm, points_of
from .library import reported

#: (plot-data layer, output parameter, description, geometry kind), in the
#: order the outputs are listed.
LAYERS = (
    ("flowline", "FLOWLINE", "Flowlines", "line"),
    ("basin", "BASIN", "Basin", "polygon"),
    ("catchment", "CATCHMENT", "Catchments", "polygon"),
    ("network_wtbd", "NETWORK_WTBD", "Network waterbodies", "polygon"),
    ("off_network_wtbd", "OFF_NETWORK_WTBD", "Off-network waterbodies", "polygon"),
    ("outlets", "OUTLETS", "Outlets", "point"),
)

#: The choices of the CACHE parameter, in order.
CACHE_CHOICES = ("The plot-data and tile caches", "No caches")

HELP = """<p>The upstream flowline network, basin, catchments and waterbodies of
outlets, from the USGS services (NLDI and the NHDPlus fabric) or a local
NHDPlus GeoPackage, through the hydroplot Python package's
<code>plot_hydro</code>.</p>
<h3>Outlets</h3>
<p>Any of these, together (except <i>exactly these comids</i>, which stands alone):</p>
<ul>
<li><b>Outlet points</b>: a point layer (tick <i>selected features only</i> to use the selection); each point
is resolved to the catchment holding it.</li>
<li><b>Outlet point</b>: one point, clicked on the map.</li>
<li><b>Comids</b>: NHDPlus comids separated by commas or spaces; each with its upstream tributaries, or,
with <b>exactly these comids</b>, only those flowlines.</li>
<li><b>Gauge site ids</b>: USGS NWIS sites such as <code>05428500</code>.</li>
<li><b>Linked-data features</b>: <code>source:id</code> pairs of the NLDI, such as
<code>huc12pp:070900020602</code>.</li>
<li><b>Extent</b>: everything in the box (without outlets).</li>
</ul>
<h3>Options</h3>
<p><b>Stream order</b>: a whole number (flowlines of that order and above), <code>auto</code>, or empty for
all. <b>Flowlines only</b> skips the basin, catchments and waterbodies. <b>Local NHDPlus GeoPackage</b>
reads the data from that file (no request). <b>Properties</b>: <code>all</code>, <code>plot</code> (what
the map needs: smaller downloads), or flowline columns to add, such as <code>totdasqkm,slope</code>.
<b>Caches</b>: the library's plot-data and tile caches, or none; a cache file may be named instead.</p>
<h3>Outputs</h3>
<p>Flowlines, basin, catchments, network and off-network waterbodies and outlets, in NAD83
(EPSG:4269), with the services' attributes; and optionally the library's map as a PNG with its world
file (<code>.pgw</code>, EPSG:3857) beside it.</p>
<p>Cancel stops the download within a second. Errors are the library's messages.</p>"""


class UpstreamAlgorithm(HydroplotAlgorithm):
    """``plot_hydro`` as a Processing algorithm."""

    NAME = "upstream"
    DISPLAY_NAME = "Upstream network and basin"
    HELP = HELP

    OUTLETS = "OUTLETS_LAYER"
    OUTLET_POINT = "OUTLET_POINT"
    COMIDS = "COMIDS"
    EXACT_COMIDS = "EXACT_COMIDS"
    SITES = "SITES"
    FEATURES = "FEATURES"
    EXTENT = "EXTENT"
    STREAMORDER = "STREAMORDER"
    FLOWLINE_ONLY = "FLOWLINE_ONLY"
    HYDRO_DATA = "HYDRO_DATA"
    PROPERTIES = "PROPERTIES"
    CACHE = "CACHE"
    CACHE_FILE = "CACHE_FILE"
    MAP = "MAP"

    def initAlgorithm(self, config=None):
        self.addParameter(QgsProcessingParameterFeatureSource(
            self.OUTLETS, "Outlet points", [QgsProcessing.TypeVectorPoint], optional=True))
        self.addParameter(QgsProcessingParameterPoint(self.OUTLET_POINT, "Outlet point (a map click)", optional=True))
        self.addParameter(QgsProcessingParameterString(self.COMIDS, "Comids", optional=True))
        self.addParameter(QgsProcessingParameterBoolean(
            self.EXACT_COMIDS, "Exactly these comids (no upstream tributaries)", defaultValue=False))
        self.addParameter(QgsProcessingParameterString(self.SITES, "Gauge site ids", optional=True))
        self.addParameter(QgsProcessingParameterString(
            self.FEATURES, "Linked-data features (source:id, ...)", optional=True))
        self.addParameter(QgsProcessingParameterExtent(self.EXTENT, "Extent", optional=True))
        self.addParameter(QgsProcessingParameterString(
            self.STREAMORDER, "Stream order (a whole number, auto, or empty for all)", optional=True))
        self.addParameter(QgsProcessingParameterBoolean(self.FLOWLINE_ONLY, "Flowlines only", defaultValue=False))
        self.addParameter(QgsProcessingParameterFile(
            self.HYDRO_DATA, "Local NHDPlus GeoPackage", extension="gpkg", optional=True))
        self.addParameter(QgsProcessingParameterString(
            self.PROPERTIES, "Properties (all, plot, or columns to add)", defaultValue="all", optional=True))
        self.addParameter(QgsProcessingParameterEnum(self.CACHE, "Caches", list(CACHE_CHOICES), defaultValue=0))
        cache_file = QgsProcessingParameterFile(self.CACHE_FILE, "Plot-data cache file", optional=True)
        cache_file.setFlags(cache_file.flags() | QgsProcessingParameterDefinition.FlagAdvanced)
        self.addParameter(cache_file)
        self.add_context_options()
        for _, name, description, kind in LAYERS:
            sink_type = QgsProcessing.TypeVectorPoint if kind == "point" else (
                QgsProcessing.TypeVectorLine if kind == "line" else QgsProcessing.TypeVectorPolygon)
            self.addParameter(QgsProcessingParameterFeatureSink(
                name, description, sink_type, optional=True, createByDefault=True))
        self.addParameter(QgsProcessingParameterFileDestination(
            self.MAP, "Map (PNG with world file)", "PNG files (*.png)", optional=True, createByDefault=False))

    def processAlgorithm(self, parameters, context, feedback):
        outlets = self.outlets(parameters, context)
        bbox = None
        if parameters.get(self.EXTENT) is not None:
            extent = self.parameterAsExtent(parameters, self.EXTENT, context, QgsCoordinateReferenceSystem(WGS84))
            bbox = (extent.xMinimum(), extent.yMinimum(), extent.xMaximum(), extent.yMaximum())
        map_path = self.parameterAsFileOutput(parameters, self.MAP, context) if parameters.get(self.MAP) else None
        run = self.library(parameters, context, feedback)
        data = run.call(
            hydroplot.plot_hydro,
            outlets,
            bbox=bbox,
            streamorder=streamorder(self.parameterAsString(parameters, self.STREAMORDER, context)),
            hydro_data=self.parameterAsFile(parameters, self.HYDRO_DATA, context) or None,
            flowline_only=self.parameterAsBoolean(parameters, self.FLOWLINE_ONLY, context),
            cache_data=self.cache_data(parameters, context),
            properties=self.parameterAsString(parameters, self.PROPERTIES, context) or None,
            actually_plot=map_path is not None,
            file=map_path,
            output="geojson",
        )
        results = {}
        if map_path is not None:
            with reported():
                data.map.write_world_file(map_path)
            results[self.MAP] = map_path
        for layer, name, _, kind in LAYERS:
            if feedback.isCanceled():
                break
            dest = self.write_geojson(parameters, name, context, data[layer], kind, NAD83)
            if dest is not None:
                results[name] = dest
        return results

    def outlets(self, parameters, context):
        """The outlets as ``plot_hydro`` takes them: a list mixing comids,
        sites, (source, id) pairs and (lon, lat) points; a set of comids
        with "exactly these"; None when there are none."""
        comids = [comid(token) for token in tokens(self.parameterAsString(parameters, self.COMIDS, context))]
        others = list(tokens(self.parameterAsString(parameters, self.SITES, context)))
        others += [linked_feature(token) for token in tokens(self.parameterAsString(parameters, self.FEATURES, context))]
        if parameters.get(self.OUTLETS) is not None:
            source = self.parameterAsSource(parameters, self.OUTLETS, context)
            if source is None:
                raise QgsProcessingException(self.invalidSourceError(parameters, self.OUTLETS))
            others += points_of(source, context, "Outlet points")[1]
        if parameters.get(self.OUTLET_POINT) not in (None, ""):
            point = self.parameterAsPoint(parameters, self.OUTLET_POINT, context, QgsCoordinateReferenceSystem(WGS84))
            others.append((point.x(), point.y()))
        if self.parameterAsBoolean(parameters, self.EXACT_COMIDS, context):
            if others:
                raise QgsProcessingException("Exactly these comids takes comids alone: leave the other outlets empty")
            return set(comids)
        return (comids + others) or None

    def cache_data(self, parameters, context):
        """``cache_data`` for plot_hydro: a file, False (no caches) or None (the default)."""
        path = self.parameterAsFile(parameters, self.CACHE_FILE, context)
        if path:
            return path
        return False if self.parameterAsEnum(parameters, self.CACHE, context) == 1 else None


def tokens(text):
    """The items of a list typed in a text box, separated by commas, semicolons or spaces."""
    return [t for t in (text or "").replace(",", " ").replace(";", " ").split() if t]


def comid(token):
    """A comid typed as text; the library checks its range."""
    try:
        return int(token)
    except ValueError:
        raise QgsProcessingException(f"Comids: {token!r} is not a whole number") from None


def linked_feature(token):
    """A ``source:id`` pair typed as text, as (source, id)."""
    source, sep, ident = token.partition(":")
    if not sep or not source or not ident:
        raise QgsProcessingException(f"Linked-data features: {token!r} is not source:id (such as huc12pp:070900020602)")
    return (source, ident)


def streamorder(text):
    """The stream order parameter for plot_hydro: None (all), ``"auto"``, or
    a whole number; anything else goes to the package, which names it."""
    text = (text or "").strip()
    if not text:
        return None
    return int(text) if text.lstrip("-").isdigit() else text
