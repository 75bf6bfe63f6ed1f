"""Builds a ``hydroplot_plot_request`` from plot_hydro's Python arguments.

The outlet forms of the spec map onto the request setters:

=====================================  ======================================
Python value                           C call
=====================================  ======================================
whole number in a list                 ``add_comid`` (upstream tributaries)
set / numpy array of whole numbers     ``set_comid_set`` (exactly these)
str, or str in a list                  ``add_site``
(source, id) pair of str in a list     ``add_feature``
(x, y) pair of numbers in a list       ``add_point`` (EPSG:4326)
GeoJSON FeatureCollection of points    ``add_point`` per feature
GeoDataFrame of points                 ``add_point`` per row, in its CRS
=====================================  ======================================

A comid is what :func:`~hydroplot._args.whole` takes within ``c_int64``
(``INT64``), in a list, a set or an array alike: ``2**64 + 13293970`` would
otherwise cross as comid 13293970.
"""

import ctypes
import numbers

from ._args import INT64, box, flag, mapping, path, point, size_pair, string, whole
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
        for element, prop, value in _styles({} if plot_config is None else plot_config):
            check(lib.hydroplot_plot_request_set_style(req, text(element), text(prop), _r_value(value)))
        if basemap is not None:
            check(lib.hydroplot_plot_request_set_basemap(req, text(string("basemap", basemap))))
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
        for i, geom in enumerate(outlets.geometry):
            _add_point(req, point(f"outlets.geometry[{i}]", geom), crs)
        return
    if isinstance(outlets, dict):
        _add_geojson_points(req, "outlets", outlets)
        return
    if isinstance(outlets, str):
        outlets = [outlets]
    if isinstance(outlets, (set, frozenset)) or type(outlets).__name__ == "ndarray":
        comids = sorted(_comid_set(outlets))
        arr = (ctypes.c_int64 * len(comids))(*comids)
        check(lib.hydroplot_plot_request_set_comid_set(req, arr, len(comids)))
        return
    for i, item in enumerate(outlets):
        _add_outlet(req, f"outlets[{i}]", item)


def _comid_set(outlets):
    """The comids of a set or numpy array, each taken as a list's comid is
    (:func:`whole` within ``INT64``): a set has no order, so its items are
    named by the set, an array's by their index."""
    if isinstance(outlets, (set, frozenset)):
        return [whole("a comid in outlets", c, INT64) for c in outlets]
    return [whole(f"outlets[{i}]", c, INT64) for i, c in enumerate(outlets)]


def _add_outlet(req, name, item):
    if isinstance(item, numbers.Real):
        # bool too: whole() refuses True as a comid, naming it.
        check(lib.hydroplot_plot_request_add_comid(req, whole(name, item, INT64)))
    elif isinstance(item, str):
        check(lib.hydroplot_plot_request_add_site(req, text(item)))
    elif isinstance(item, dict) and "featureSource" in item:
        check(lib.hydroplot_plot_request_add_feature(req, text(item["featureSource"]), text(item["featureID"])))
    elif isinstance(item, dict):
        _add_geojson_points(req, name, item)
    elif isinstance(item, (tuple, list)) and len(item) == 2 and all(isinstance(v, str) for v in item):
        check(lib.hydroplot_plot_request_add_feature(req, text(item[0]), text(item[1])))
    elif isinstance(item, (tuple, list)) and len(item) == 2 and all(_is_number(v) for v in item):
        _add_point(req, point(name, item), None)
    else:
        raise TypeError(
            f"cannot read {item!r} as an outlet: give a comid (int), a site id (str), "
            "a (source, id) pair of str or an (x, y) point"
        )


def _add_geojson_points(req, name, obj):
    """The Points of a GeoJSON outlet, each named as the caller indexes it."""
    kind = obj.get("type")
    if kind == "FeatureCollection":
        for i, feature in enumerate(obj.get("features", [])):
            _add_geojson_points(req, f"{name}['features'][{i}]", feature)
    elif kind == "Feature":
        _add_geojson_points(req, f"{name}['geometry']", obj.get("geometry") or {})
    elif kind == "Point":
        _add_point(req, point(name, obj), None)
    else:
        raise TypeError(f"a GeoJSON outlet must hold Points, not {kind!r}")


def _add_point(req, xy, crs):
    check(lib.hydroplot_plot_request_add_point(req, *xy, text(crs)))


def _set_bbox(req, bbox):
    crs = None
    if isinstance(bbox, dict):
        crs = bbox.get("crs")
        # A missing key is None, which box() refuses naming it.
        bbox = tuple(bbox.get(key) for key in ("xmin", "ymin", "xmax", "ymax"))
    check(lib.hydroplot_plot_request_set_bbox(req, *box("bbox", bbox), text(crs)))


def _styles(plot_config):
    """(element, property, value) triples of a nested plot_config; outlets
    nest by source. Each level must be a dict (:func:`mapping` names it)."""
    for element, props in mapping("plot_config", plot_config):
        where = f"plot_config[{element!r}]"
        if element == "outlets":
            for source, source_props in mapping(where, props):
                for prop, value in mapping(f"{where}[{source!r}]", source_props):
                    yield f"outlets.{source}", prop, value
        else:
            for prop, value in mapping(where, props):
                yield element, prop, value


def _r_value(value):
    """A style value as R would print it: None is ``NA``."""
    return b"NA" if value is None else text(value)
