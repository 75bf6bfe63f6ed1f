"""GeoJSON features from the hydroplot package as QGIS fields and features:
the one place the plugin converts the library's results.

Geometries go through GDAL's OGR (``ogr.CreateGeometryFromJson``, which
QGIS ships), attributes keep their JSON types: whole numbers as 64-bit
integers, other numbers as doubles, lists and objects as their JSON text
(``intersection_point`` is ``"[-89.21, 42.95]"``, ``"[]"`` on the raindrop
path), ``null`` as NULL.
"""

import json

from osgeo import ogr
from qgis.core import QgsFeature, QgsField, QgsFields, QgsGeometry, QgsWkbTypes
from qgis.PyQt.QtCore import QVariant


def field(name, kind):
    """A field of QVariant type ``kind``."""
    return QgsField(name, kind)


def property_fields(features):
    """The fields of the properties of GeoJSON ``features``, every name in
    the order first seen, each typed by its values (String when all are null)."""
    rows = [f.get("properties") or {} for f in features]
    names = dict.fromkeys(name for row in rows for name in row)
    return [field(name, value_type(row.get(name) for row in rows)) for name in names]


def value_type(values):
    """The QVariant type holding all of ``values`` (JSON values)."""
    kinds = {type(v) for v in values if v is not None}
    if not kinds:
        return QVariant.String
    if kinds == {bool}:
        return QVariant.Bool
    if kinds == {int}:
        return QVariant.LongLong
    if kinds <= {int, float}:
        return QVariant.Double
    return QVariant.String


def attribute(value, kind):
    """A JSON value as an attribute of a field of type ``kind``."""
    if value is None:
        return None
    if isinstance(value, (list, dict)):
        return json.dumps(value)
    if kind == QVariant.String and not isinstance(value, str):
        return json.dumps(value)
    return value


def make_fields(fields):
    """A QgsFields of a list of QgsField."""
    out = QgsFields()
    for f in fields:
        out.append(f)
    return out


def geometry(geojson_geometry, multi):
    """A GeoJSON geometry (a dict, or None) as a QgsGeometry: empty when
    None; made multi-part when ``multi`` (so one layer takes single and
    multi-part features alike)."""
    if not geojson_geometry:
        return QgsGeometry()
    ogr_geometry = ogr.CreateGeometryFromJson(json.dumps(geojson_geometry))
    geom = QgsGeometry()
    geom.fromWkb(bytes(ogr_geometry.ExportToIsoWkb()))
    if multi and not geom.isEmpty():
        geom.convertToMultiType()
    return geom


def wkb_type(geometry_kind):
    """The sink's WKB type for ``"point"``, ``"line"``, ``"polygon"`` or ``"none"``."""
    return {
        "point": QgsWkbTypes.Point,
        "line": QgsWkbTypes.MultiLineString,
        "polygon": QgsWkbTypes.MultiPolygon,
        "none": QgsWkbTypes.NoGeometry,
    }[geometry_kind]


def feature(fields, values, geom=None):
    """A feature of ``fields`` with ``values`` (in field order) and ``geom``."""
    f = QgsFeature(fields)
    f.setAttributes(list(values))
    if geom is not None:
        f.setGeometry(geom)
    return f


def from_geojson(fields, geojson_feature, leading=(), multi=True):
    """A feature of ``fields`` from a GeoJSON feature: ``leading`` values
    first (point index, carried attributes), then the properties named by
    the remaining fields."""
    props = geojson_feature.get("properties") or {}
    rest = [fields.at(i) for i in range(len(leading), fields.count())]
    values = list(leading) + [attribute(props.get(f.name()), f.type()) for f in rest]
    return feature(fields, values, geometry(geojson_feature.get("geometry"), multi))
