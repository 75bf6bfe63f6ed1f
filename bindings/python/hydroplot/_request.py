"""Builds a ``hydroplot_plot_request`` from plot_hydro's Python arguments.

The outlet forms of the spec map onto the request setters:

=====================================  ======================================
Python value                           C call
=====================================  ======================================
int in a list                          ``add_comid`` (upstream tributaries)
set / numpy array of ints              ``set_comid_set`` (exactly these)
str, or str in a list                  ``add_site``
(source, id) pair of str in a list     ``add_feature``
(x, y) pair of numbers in a list       ``add_point`` (EPSG:4326)
GeoJSON FeatureCollection of points    ``add_point`` per feature
GeoDataFrame of points                 ``add_point`` per row, in its CRS
=====================================  ======================================
"""

import ctypes
import numbers

from ._args import flag, holds, path, size_pair, whole
from ._ffi import check, lib, text


def build_request(
    *, outlets, bbox, streamorder, hydro_data, gpkg, plot_config, basemap, zoom, actually_plot,
    overwrite, flowline_only, cache_data, size, file, properties=None, lod=True,
):
    """A new request handle owned by the caller (free with ``hydroplot_plot_request_free``)."""
    req = lib.hydroplot_plot_request_new()
    try:
        _set_outlets(req, outlets)
        if bbox is not None:
            _set_bbox(req, bbox)
        if streamorder is not None:
            if isinstance(streamorder, str) and streamorder != "auto":
                raise TypeError(f'streamorder must be a whole number or "auto", not {streamorder!r}')
            order = -1 if streamorder == "auto" else whole("streamorder", streamorder)
            check(lib.hydroplot_plot_request_set_streamorder(req, order))
        if hydro_data is not None:
            check(lib.hydroplot_plot_request_set_hydro_data(req, text(path("hydro_data", hydro_data))))
        if gpkg is not None:
            check(lib.hydroplot_plot_request_set_gpkg(req, text(path("gpkg", gpkg))))
        if file is not None:
            # The core checks it with the other files before any work and writes it.
            check(lib.hydroplot_plot_request_set_png_file(req, text(path("file", file))))
        for element, prop, value in _styles(plot_config or {}):
            check(lib.hydroplot_plot_request_set_style(req, text(element), text(prop), _r_value(value)))
        if basemap is not None:
            check(lib.hydroplot_plot_request_set_basemap(req, text(basemap)))
        if zoom is not None:
            check(lib.hydroplot_plot_request_set_zoom(req, whole("zoom", zoom)))
        if size is not None:
            check(lib.hydroplot_plot_request_set_size(req, *size_pair("size", size)))
        check(lib.hydroplot_plot_request_set_actually_plot(req, flag("actually_plot", actually_plot)))
        check(lib.hydroplot_plot_request_set_overwrite(req, flag("overwrite", overwrite)))
        if flowline_only is not None:
            check(lib.hydroplot_plot_request_set_flowline_only(req, flag("flowline_only", flowline_only)))
        if cache_data is False:
            check(lib.hydroplot_plot_request_disable_cache(req))
        elif cache_data is not None and cache_data is not True:
            check(lib.hydroplot_plot_request_set_cache_file(req, text(path("cache_data", cache_data))))
        if properties is not None:
            check(lib.hydroplot_plot_request_set_properties(req, text(_properties_spec(properties))))
        check(lib.hydroplot_plot_request_set_lod(req, flag("lod", lod)))
        return req
    except BaseException:
        lib.hydroplot_plot_request_free(req)
        raise


def _properties_spec(properties):
    """``"all"``, ``"plot"`` or a comma list: a list or tuple of names is joined."""
    if isinstance(properties, str):
        return properties
    return ",".join(properties)


def _is_int(v):
    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


def _is_number(v):
    return isinstance(v, numbers.Real) and not isinstance(v, bool)


def _set_outlets(req, outlets):
    if outlets is None:
        return
    if hasattr(outlets, "geometry") and hasattr(outlets, "crs"):  # a GeoDataFrame
        code = outlets.crs.to_epsg(min_confidence=100) if outlets.crs is not None else None
        if outlets.crs is not None and code is None:
            # The library knows EPSG codes only: a CRS that is not exactly one
            # (WKT, PROJ) is transformed by geopandas from its definition.
            outlets, code = outlets.to_crs(4326), 4326
        crs = f"EPSG:{code}" if code is not None else None
        for geom in outlets.geometry:
            _add_point(req, geom.x, geom.y, crs)
        return
    if isinstance(outlets, dict):
        _add_geojson_points(req, outlets)
        return
    if isinstance(outlets, str):
        outlets = [outlets]
    if isinstance(outlets, (set, frozenset)) or type(outlets).__name__ == "ndarray":
        comids = [int(c) for c in outlets]
        if not all(_is_int(c) or float(c).is_integer() for c in outlets):
            raise TypeError("a comid set holds integers only")
        arr = (ctypes.c_int64 * len(comids))(*sorted(comids))
        check(lib.hydroplot_plot_request_set_comid_set(req, arr, len(comids)))
        return
    for item in outlets:
        _add_outlet(req, item)


def _add_outlet(req, item):
    if _is_int(item):
        check(lib.hydroplot_plot_request_add_comid(req, int(item)))
    elif isinstance(item, str):
        check(lib.hydroplot_plot_request_add_site(req, text(item)))
    elif isinstance(item, dict) and "featureSource" in item:
        check(lib.hydroplot_plot_request_add_feature(req, text(item["featureSource"]), text(item["featureID"])))
    elif isinstance(item, dict):
        _add_geojson_points(req, item)
    elif isinstance(item, (tuple, list)) and len(item) == 2 and all(isinstance(v, str) for v in item):
        check(lib.hydroplot_plot_request_add_feature(req, text(item[0]), text(item[1])))
    elif isinstance(item, (tuple, list)) and len(item) == 2 and all(_is_number(v) for v in item):
        _add_point(req, item[0], item[1], None)
    else:
        raise TypeError(
            f"cannot read {item!r} as an outlet: give a comid (int), a site id (str), "
            "a (source, id) pair of str or an (x, y) point"
        )


def _add_geojson_points(req, obj):
    kind = obj.get("type")
    if kind == "FeatureCollection":
        for feature in obj.get("features", []):
            _add_geojson_points(req, feature)
    elif kind == "Feature":
        _add_geojson_points(req, obj.get("geometry") or {})
    elif kind == "Point":
        _add_point(req, *obj["coordinates"][:2], None)
    else:
        raise TypeError(f"a GeoJSON outlet must hold Points, not {kind!r}")


def _add_point(req, x, y, crs):
    check(lib.hydroplot_plot_request_add_point(req, float(x), float(y), text(crs)))


def _set_bbox(req, bbox):
    crs = None
    if isinstance(bbox, dict):
        crs = bbox.get("crs")
        bbox = (bbox["xmin"], bbox["ymin"], bbox["xmax"], bbox["ymax"])
    if not holds(bbox, 4):
        raise TypeError(f"bbox must be (xmin, ymin, xmax, ymax) or a dict of them, not {bbox!r}")
    xmin, ymin, xmax, ymax = (float(v) for v in bbox)
    check(lib.hydroplot_plot_request_set_bbox(req, xmin, ymin, xmax, ymax, text(crs)))


def _styles(plot_config):
    """(element, property, value) triples of a nested plot_config; outlets nest by source."""
    for element, props in plot_config.items():
        if element == "outlets":
            for source, source_props in props.items():
                for prop, value in source_props.items():
                    yield f"outlets.{source}", prop, value
        else:
            for prop, value in props.items():
                yield element, prop, value


def _r_value(value):
    """A style value as R would print it: None is ``NA``."""
    return b"NA" if value is None else text(value)
