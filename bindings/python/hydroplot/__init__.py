"""hydroplot for Python: basins, flowline networks and raindrop traces from the
US national hydrography web services, through the hydroplot C library.

Two functions follow the interface spec, with its parameter names and
defaults::

    import hydroplot
    data = hydroplot.plot_hydro([13293970], file="yahara.png")
    len(data["flowline"]["features"])          # 251 on the Yahara sample
    trace = hydroplot.get_raindrop_trace((-89.2158, 42.9561), direction="up")

Results are GeoDataFrames when geopandas is installed (made from the C
library's Arrow streams when pyarrow is too, with no GeoJSON on the way),
else :class:`ArrowStream` objects (the Arrow PyCapsule protocol) when pyarrow
is installed, else GeoJSON dicts: that is ``output="auto"``, the default;
``"geopandas"``, ``"arrow"`` or ``"geojson"`` force one.
Services are the public USGS ones unless a :class:`Context` or the
``HYDROPLOT_*`` environment variables (``HYDROPLOT_INDEX_URL``, ...) say
otherwise.
"""

import ctypes
import json
import os
import threading
import urllib.parse
import warnings

from . import _args, _ffi
from ._args import box, flag, real, size_pair, string, whole
from ._arrow import ArrowStream, _Handle
from ._ffi import HydroplotError, check, lib, text
from ._request import build_request

__all__ = [
    "ArrowStream",
    "Context",
    "HydroplotError",
    "HydroplotWarning",
    "Map",
    "PlotData",
    "get_raindrop_trace",
    "get_raindrop_traces",
    "get_comids",
    "index_geopackage",
    "plot_hydro",
    "unindex_geopackage",
    "version",
]

#: The layers of plot data, in the order the spec lists them.
LAYERS = ("outlets", "flowline", "basin", "catchment", "network_wtbd", "off_network_wtbd")


def version():
    """The C library's version, ``"MAJOR.MINOR.PATCH"``."""
    return lib.hydroplot_version().decode()


class Context:
    """Service URLs, timeouts, retries, rate limit and caches for calls.

    ``Context(index_url=..., fabric_url=..., tile_url=..., rate_limit_per_s=0.25)``
    starts from the defaults and the ``HYDROPLOT_*`` environment, then sets
    each keyword as a ``hydroplot_context_set_option`` key (an unknown key or
    bad value raises :class:`HydroplotError`). A context may be shared by many
    threads; its requests, from all of them together, respect
    ``rate_limit_per_s``. It is freed with the object.

    Behind an agency network (docs/network.md): ``ca_bundle="agency-root.pem"``
    (else ``SSL_CERT_FILE``, ``REQUESTS_CA_BUNDLE``, ``CURL_CA_BUNDLE`` serve),
    ``proxy="http://user:password@proxy:3128"`` or ``proxy="none"``. With
    ``offline=True`` (or ``HYDROPLOT_OFFLINE=1``) no request is ever sent: the
    plot-data cache, local GeoPackages and the tile cache serve, anything else
    raises at once naming offline mode.

    Secrets stay in the C context: an option whose value is a URL with
    credentials (``proxy="http://user:password@..."``) is not kept in
    :attr:`options`, a repr or a pickle. A context pickled to another process
    (a Dask worker) is rebuilt there from its other options and takes that
    option from the worker's own environment (``HYDROPLOT_PROXY``), or
    raises saying so; or build the worker's context with the secret given
    explicitly, ``Context(**ctx.options, proxy=secret)``.
    """

    def __init__(self, **options):
        handle = ctypes.c_void_p()
        check(lib.hydroplot_context_new(ctypes.byref(handle)))
        self._handle = handle
        #: The options set, by key, but secrets (see the class).
        self.options = {}
        #: The keys of the secret options set, withheld from ``options``.
        self._withheld = set()
        for key, value in options.items():
            self.set_option(key, value)

    def set_option(self, key, value):
        """Sets one option; not while another thread uses this context."""
        check(lib.hydroplot_context_set_option(self._handle, text(key), text(value)))
        if _has_credentials(value):
            self.options.pop(key, None)
            self._withheld.add(key)
        else:
            self.options[key] = value
            self._withheld.discard(key)

    def set_progress_callback(self, fn):
        """Calls ``fn(stage, done, total)`` as a call with this context
        progresses (``stage`` a str such as ``"flowline"``, ``"tiles"``;
        ``total`` 0 when unknown), on the thread that made the call; None
        removes it. ``fn`` may call :meth:`cancel` (a GUI's progress bar with
        a Cancel button). An exception ``fn`` raises is reported as
        unraisable (``sys.unraisablehook``) and the call goes on. Not while
        another thread uses this context."""
        relay = _ffi.PROGRESS_FN()  # NULL: none
        if fn is not None:
            relay = _ffi.PROGRESS_FN(lambda _user, stage, done, total: fn(stage.decode(), done, total))
        check(lib.hydroplot_context_set_progress_callback(self._handle, relay, None))
        self._progress = relay  # the library calls it until replaced: kept alive here

    def set_log_callback(self, fn):
        """Calls ``fn(level, message)`` with every log line of a call with
        this context (``level`` 1 error, 2 warning, 3 info, 4 debug: retries,
        warnings), on the thread that made the call; None removes it.
        Exceptions as in :meth:`set_progress_callback`."""
        relay = _ffi.LOG_FN()  # NULL: none
        if fn is not None:
            relay = _ffi.LOG_FN(lambda _user, level, message: fn(level, message.decode("utf-8", "replace")))
        check(lib.hydroplot_context_set_log_callback(self._handle, relay, None))
        self._log = relay  # the library calls it until replaced: kept alive here

    def cancel(self):
        """Stops every call running with this context, from any thread (a
        GUI's Cancel button, a watchdog): each raises :class:`HydroplotError`
        ``HYDROPLOT_ERR_CANCELLED``, no output left partly written; calls begun
        afterwards run. Ctrl-C does the same for a call on the main thread.
        """
        lib.hydroplot_context_cancel(self._handle)

    def __del__(self):
        handle, self._handle = getattr(self, "_handle", None), None
        if handle:
            lib.hydroplot_context_free(handle)

    def __reduce__(self):
        # Handles do not cross processes: a pickled context is rebuilt from
        # its options; secrets are named, never carried.
        return (_context_from_options, (self.options, sorted(self._withheld)))


def _has_credentials(value):
    """Whether an option value is a URL carrying credentials (``user:password@``)."""
    if not isinstance(value, str) or "://" not in value:
        return False
    try:
        parts = urllib.parse.urlsplit(value)
        return parts.username is not None or parts.password is not None
    except ValueError:
        return "@" in value.split("://", 1)[1]


def _context_from_options(options, withheld=()):
    """A context unpickled: ``options``, and each withheld secret from this
    process's environment (``HYDROPLOT_<KEY>``), which the C context reads."""
    missing = [key for key in withheld if key not in options and not os.environ.get(f"HYDROPLOT_{key.upper()}")]
    if missing:
        names = ", ".join(f"HYDROPLOT_{key.upper()}" for key in missing)
        status = _ffi.INVALID_ARGUMENT
        raise HydroplotError(
            status, _ffi.status_name(status),
            f"the context's {', '.join(missing)} carried credentials, which are never pickled: "
            f"set {names} in this process's environment, or build its context with the value given",
        )
    return Context(**options)


_default = threading.local()


def _context(context):
    if context is not None:
        return context
    if getattr(_default, "context", None) is None:
        _default.context = Context()
    return _default.context


class Map:
    """A drawn map in Web Mercator (EPSG:3857); owns its ``hydroplot_map``.

    Georeferenced: :attr:`bounds` is its extent in EPSG:3857 metres,
    :meth:`show` draws it on a matplotlib Axes at those bounds (so
    ``gdf.to_crs(3857).plot(ax=ax)`` lands in place), and in Jupyter a map
    displays itself inline.
    """

    def __init__(self, handle):
        self._handle = handle

    @classmethod
    def new(cls, bbox, crs="EPSG:4326", size=(1024, 768), basemap=None, context=None):
        """A new map of ``bbox`` = (xmin, ymin, xmax, ymax) in ``crs``."""
        handle = ctypes.c_void_p()
        ctx = _context(context)
        args = (
            ctx._handle, *box("bbox", bbox), text(string("crs", crs)), *size_pair("size", size),
            text(string("basemap", basemap)), ctypes.byref(handle),
        )
        _ffi.check_interruptible(
            ctx._handle, lambda: lib.hydroplot_map_new(*args), lambda: lib.hydroplot_map_free(handle)
        )
        return cls(handle)

    def add_geojson(self, geojson, crs="EPSG:4326", col="black", fill=None, lwd=1.0):
        """Draws GeoJSON (a dict or text) given in ``crs``; colours as R writes them."""
        data = (geojson if isinstance(geojson, str) else json.dumps(geojson)).encode()
        check(
            lib.hydroplot_map_add_geojson(
                self._handle, data, len(data), text(crs), text(col), text(fill), real("lwd", lwd)
            )
        )
        return self

    def add_point(self, x, y, crs="EPSG:4326", pch=19, col="black", cex=1.0):
        """Draws R plotting symbol ``pch`` at (x, y)."""
        check(
            lib.hydroplot_map_add_point(
                self._handle, real("x", x), real("y", y), text(crs), whole("pch", pch), text(col), real("cex", cex)
            )
        )
        return self

    def png(self):
        """The map as PNG bytes (north arrow, scale bar and attribution on top)."""
        return _ffi.take_buffer(lambda out: lib.hydroplot_map_png(self._handle, out))

    def write_png(self, path):
        """Writes the PNG to ``path``, replacing it atomically."""
        check(lib.hydroplot_map_write_png(self._handle, text(_args.path("path", path))))

    @property
    def bounds(self):
        """The PNG's extent (xmin, ymin, xmax, ymax) in EPSG:3857 metres: the
        outer edges of its corner pixels, which are square."""
        box = (ctypes.c_double * 4)()
        check(lib.hydroplot_map_bounds(self._handle, box))
        return tuple(box)

    def write_world_file(self, png_path):
        """Georeferences the PNG at ``png_path`` for GIS: writes its world file
        (``map.png`` -> ``map.pgw``) and ``<png_path>.aux.xml`` (EPSG:3857)
        beside it, each atomically."""
        check(lib.hydroplot_map_write_world_file(self._handle, text(_args.path("png_path", png_path))))

    def _repr_png_(self):
        # Jupyter and IPython display a map inline with it.
        return self.png()

    def show(self, ax=None):
        """Draws the map on the matplotlib Axes ``ax`` (None: a new figure of
        the map's pixel size) at its :attr:`bounds`: the axes' limits are the
        bounds and their aspect equal, so data in EPSG:3857 drawn on ``ax``
        (``gdf.to_crs(3857).plot(ax=ax)``, ``ax.plot(x, y)``) lands where it
        belongs. Returns ``ax``. Needs matplotlib."""
        _axes(ax)
        import io

        import matplotlib.image

        img = matplotlib.image.imread(io.BytesIO(self.png()), format="png")
        if ax is None:
            import matplotlib.pyplot as plt

            dpi = 100
            fig = plt.figure(figsize=(img.shape[1] / dpi, img.shape[0] / dpi), dpi=dpi)
            ax = fig.add_axes((0, 0, 1, 1))
            ax.set_axis_off()
        xmin, ymin, xmax, ymax = self.bounds
        ax.imshow(img, extent=(xmin, xmax, ymin, ymax), origin="upper", interpolation="nearest")
        ax.set_xlim(xmin, xmax)
        ax.set_ylim(ymin, ymax)
        ax.set_aspect("equal")
        return ax

    def __del__(self):
        handle, self._handle = getattr(self, "_handle", None), None
        if handle:
            lib.hydroplot_map_free(handle)


class HydroplotWarning(UserWarning):
    """What the library warns of while it plots (basemap tiles left blank,
    a layer a service lacks, ...): each also stays in
    :attr:`PlotData.warnings`. Filter it with the :mod:`warnings` module."""


class PlotData(dict):
    """The result of :func:`plot_hydro`: layer name -> GeoDataFrame,
    :class:`ArrowStream` or GeoJSON FeatureCollection (as ``output`` asks), in
    NAD83 lon/lat (EPSG:4269).

    Attributes: ``bbox`` (xmin, ymin, xmax, ymax), ``warnings`` (list of
    str, each also raised as a :class:`HydroplotWarning`), ``map`` (the
    drawn :class:`Map`, None when not plotted) and ``png`` (its PNG bytes,
    None when not plotted).
    """

    bbox = None
    warnings = ()
    map = None
    png = None


_current = threading.local()

#: What :meth:`Map.show` calls on its ``ax``.
_AXES_METHODS = ("imshow", "set_xlim", "set_ylim", "set_aspect")


def _axes(ax):
    """``ax`` when it is None or has what :meth:`Map.show` calls (a matplotlib
    Axes, known without importing matplotlib); a TypeError naming ``ax``
    otherwise. plot_hydro checks it before any request: the map is drawn on
    ``ax`` last, after its files are written."""
    if ax is None or all(callable(getattr(ax, method, None)) for method in _AXES_METHODS):
        return ax
    raise TypeError(f"ax must be a matplotlib Axes, not {ax!r}")


def _resolve_add(add):
    if add is False or add is None:
        return None
    if isinstance(add, Map):
        return add
    if add is not True:
        raise TypeError(f"add must be True, False or a Map, not {add!r}")
    current = getattr(_current, "map", None)
    if current is None:
        raise ValueError("add=True needs a map drawn before on this thread (or pass add=<Map>)")
    return current


def plot_hydro(
    outlets=None,
    bbox=None,
    streamorder=None,
    hydro_data=None,
    gpkg=None,
    plot_config=None,
    basemap=None,
    zoom=None,
    add=False,
    actually_plot=True,
    overwrite=True,
    flowline_only=None,
    cache_data=None,
    *,
    size=None,
    file=None,
    properties=None,
    lod=True,
    context=None,
    output="auto",
    ax=None,
):
    """Fetches (or reads from ``hydro_data``) the basins and networks of
    ``outlets`` or ``bbox`` and draws them.

    ``outlets`` takes the spec's six forms: a list of ints (comids, upstream
    tributaries plotted), a set or numpy array of ints (exactly these
    comids), a str or list of str (gauge sites), a list of (source, id) pairs
    (index features), points as (x, y) tuples in EPSG:4326, a GeoJSON point
    collection or a GeoDataFrame of points; one list may mix comids, sites,
    features and points. ``bbox`` is (xmin, ymin, xmax, ymax) in EPSG:4326,
    or a dict with those keys and ``crs``. ``streamorder`` is an int >= 1 or
    ``"auto"``; ``plot_config`` a nested dict such as ``{"flowline": {"col":
    "red"}, "outlets": {"comid": {"pch": 17}}}``; ``cache_data`` a file path
    or False (no caches at all). ``add=True`` draws onto the last map drawn on
    this thread (or ``add=<Map>``). ``file`` writes the PNG there: it is
    checked with ``hydro_data``, ``gpkg`` and ``cache_data`` before anything
    is read or fetched (never one of them, however spelled; not named as
    another image format, ``.jpg`` or ``.pdf``: the map is a PNG; its folder
    must exist; kept when it exists and ``overwrite`` is False) and replaced
    atomically. ``ax`` (a matplotlib Axes) gets the map drawn at its EPSG:3857
    bounds, as :meth:`Map.show` does, ready for ``gdf.to_crs(3857).plot(ax=ax)``.
    ``properties`` is the columns asked of the fabric service: ``"all"`` (the
    default), ``"plot"`` (what the map reads: a smaller download, the same
    map), or a list (or comma string) of network flowline columns added to
    ``"plot"``, such as ``["totdasqkm", "slope"]``; an unknown name raises
    before any request. ``lod`` (default True) is the map's level of detail:
    a map too dense to read at its size shows flowlines by stream order
    (widths growing with order, the main stem always, features under a pixel
    left out); ``lod=False`` draws every feature. The data returned is the
    same either way, and the samples' maps at their usual sizes too.
    An argument of another type than it takes (``lod="no"``, ``zoom=3.7``, a
    list as ``file``, ``"abc"`` in ``bbox``, ``plot_config={"flowline":
    "red"}``, an ``ax`` that is no Axes) raises TypeError naming it, before
    any request or file; a number C cannot hold (a comid of ``2**63`` or
    more, ``zoom=2**40``) raises ValueError. A comid is a whole number in a
    list, a set or a numpy array alike.
    """
    actually_plot = flag("actually_plot", actually_plot)
    if ax is not None and not actually_plot:
        raise ValueError("ax= draws the map: it needs actually_plot=True")
    _axes(ax)
    ctx = _context(context)
    target = _resolve_add(add)
    req = build_request(
        outlets=outlets, bbox=bbox, streamorder=streamorder, hydro_data=hydro_data, gpkg=gpkg,
        plot_config=plot_config, basemap=basemap, zoom=zoom, actually_plot=actually_plot,
        overwrite=overwrite, flowline_only=flowline_only, cache_data=cache_data, size=size, file=file,
        properties=properties, lod=lod,
    )
    kind = _output_kind(output)
    pd = ctypes.c_void_p()
    try:
        target_handle = target._handle if target else None
        _ffi.check_interruptible(
            ctx._handle,
            lambda: lib.hydroplot_plot(ctx._handle, req, target_handle, ctypes.byref(pd)),
            lambda: lib.hydroplot_plot_data_free(pd),
        )
    finally:
        lib.hydroplot_plot_request_free(req)
    # Freed when the last layer reading it (an ArrowStream) goes.
    owner = _Handle(pd, lib.hydroplot_plot_data_free)
    result = PlotData(
        (layer, _layer(owner, layer, "EPSG:4269", kind)) for layer in LAYERS
    )
    box = (ctypes.c_double * 4)()
    check(lib.hydroplot_plot_data_bbox(pd, box))
    result.bbox = tuple(box)
    result.warnings = [
        lib.hydroplot_plot_data_warning(pd, i).decode() for i in range(lib.hydroplot_plot_data_warning_count(pd))
    ]
    if actually_plot:
        result.map = target or _take_map(pd)
        _current.map = result.map
    del owner
    if result.map is not None:
        result.png = result.map.png()
        if ax is not None:
            result.map.show(ax=ax)
    for message in result.warnings:
        warnings.warn(message, HydroplotWarning, stacklevel=2)
    return result


def _layer(owner, layer, crs, kind):
    """One layer of the plot data behind ``owner`` as ``kind`` asks."""
    pd = owner.pointer
    stream = ArrowStream(owner, lambda out: lib.hydroplot_plot_data_layer_arrow(pd, text(layer), out))
    return _convert(stream, lambda: _geojson(lambda out: lib.hydroplot_plot_data_layer_geojson(pd, text(layer), out)), crs, kind)


def _take_map(pd):
    handle = ctypes.c_void_p()
    check(lib.hydroplot_plot_data_take_map(pd, ctypes.byref(handle)))
    return Map(handle)


def _geojson(fill):
    return json.loads(_ffi.take_buffer(fill))


def _trace_geojson(trace):
    return _geojson(lambda out: lib.hydroplot_trace_geojson(trace, out))


def _points_xy(points):
    """x0, y0, x1, y1, ... of a list of points, each read by
    :func:`_args.point` and named by its index."""
    return [c for i, p in enumerate(points) for c in _args.point(f"points[{i}]", p)]


def get_raindrop_trace(point, direction="down", *, crs=None, context=None, output="auto"):
    """Traces a raindrop from ``point`` ((lon, lat), a GeoJSON Point or a
    shapely Point; in ``crs``, default EPSG:4326) to the nearest flowline.

    ``direction`` is ``"down"``, ``"up"`` or ``"none"``. Returns 2 LineString
    features in WGS 84, the flowline portion then the raindrop path, each
    with the spec's 7 fields whatever the service sent: ``id``,
    ``gnis_name``, ``comid``, ``reachcode``, ``raindrop_pathDist``,
    ``measure`` (None when missing) and ``intersection_point`` (``[lon,
    lat]`` on the flowline, ``[]`` on the raindrop path). As Arrow
    (``output="arrow"``, or a GeoDataFrame made from it) the columns are
    typed even when every value is null, ``intersection_point`` a list of
    doubles; in a GeoDataFrame ``comid`` is pandas' nullable ``Int64`` (the
    raindrop path has none). A ``point`` that is no (x, y) pair, or an empty
    shapely Point, raises TypeError or ValueError naming it, before any
    request.
    """
    x, y = _args.point("point", point)
    kind = _output_kind(output)
    trace = ctypes.c_void_p()
    crs, direction = string("crs", crs), string("direction", direction)
    ctx = _context(context)
    args = (ctx._handle, x, y, text(crs), text(direction), ctypes.byref(trace))
    _ffi.check_interruptible(
        ctx._handle, lambda: lib.hydroplot_raindrop_trace(*args), lambda: lib.hydroplot_trace_free(trace)
    )
    return _trace(_Handle(trace, lib.hydroplot_trace_free), trace, kind)


def _trace(owner, trace, kind):
    """A trace (kept alive by ``owner``) as ``kind`` asks."""
    stream = ArrowStream(owner, lambda out: lib.hydroplot_trace_arrow(trace, out))
    return _convert(stream, lambda: _trace_geojson(trace), "EPSG:4326", kind)


def get_raindrop_traces(points, direction="down", *, crs=None, context=None, output="auto"):
    """Traces many points at once (at most the context's ``concurrency``
    requests in flight). Returns one entry per point, in order: its trace (as
    :func:`get_raindrop_trace` would) or the :class:`HydroplotError` of that
    point; one bad point never fails the others.
    """
    xy = _points_xy(points)
    kind = _output_kind(output)
    arr = (ctypes.c_double * len(xy))(*xy)
    batch = ctypes.c_void_p()
    ctx = _context(context)
    args = (
        ctx._handle, arr, len(xy) // 2, text(string("crs", crs)), text(string("direction", direction)),
        ctypes.byref(batch),
    )
    _ffi.check_interruptible(
        ctx._handle,
        lambda: lib.hydroplot_raindrop_trace_batch(*args),
        lambda: lib.hydroplot_trace_batch_free(batch),
    )
    owner = _Handle(batch, lib.hydroplot_trace_batch_free)  # owns the traces it holds
    results = []
    for i in range(lib.hydroplot_trace_batch_len(batch)):
        status = lib.hydroplot_trace_batch_status(batch, i)
        if status == _ffi.OK:
            results.append(_trace(owner, lib.hydroplot_trace_batch_get(batch, i), kind))
        else:
            results.append(
                HydroplotError(
                    status,
                    _ffi.status_name(status),
                    lib.hydroplot_trace_batch_error(batch, i).decode("utf-8", "replace"),
                    lib.hydroplot_trace_batch_http_status(batch, i),
                )
            )
    return results


def get_comids(points, *, hydro_data=None, crs=None, context=None):
    """The comid of the NHDPlus catchment holding each point (pairs, GeoJSON
    Points or shapely Points; in ``crs``, default EPSG:4326), in order: an
    ``int``, ``None`` for a point in no catchment, or the
    :class:`HydroplotError` of a point that failed (one bad point never fails
    the others).

    Without ``hydro_data`` the fabric service answers (one request per
    distinct point, at most the context's ``concurrency`` at once, slowing
    down on HTTP 429); with a local NHDPlus GeoPackage path, its catchments
    answer and no request is made.
    """
    xy = _points_xy(points)
    arr = (ctypes.c_double * len(xy))(*xy)
    path = None if hydro_data is None else _args.path("hydro_data", hydro_data)
    batch = ctypes.c_void_p()
    ctx = _context(context)
    args = (ctx._handle, arr, len(xy) // 2, text(string("crs", crs)), text(path), ctypes.byref(batch))
    _ffi.check_interruptible(
        ctx._handle, lambda: lib.hydroplot_comid_lookup(*args), lambda: lib.hydroplot_comid_batch_free(batch)
    )
    try:
        return [_comid_result(batch, i) for i in range(lib.hydroplot_comid_batch_len(batch))]
    finally:
        lib.hydroplot_comid_batch_free(batch)


def index_geopackage(path, *, context=None):
    """Makes the NHDPlus GeoPackage at ``path`` fast as ``hydro_data``, as
    ``hydroplot index`` does, without ever writing it (a read-only file
    works): its flowline network, of which a plot reads only its basin's
    upstream, and (with a
    catchment layer) the basin parts, outlines of parts of the network from
    which large basins are folded, to the bit the same basins, are stored in
    an index file in the context's ``index_dir`` (by default
    ``$XDG_CACHE_HOME/hydroplot/index``). The index records the file's
    identity and rowid ranges: after any write or copy over the file it is
    not used until the next call. Running it again changes nothing. Ctrl-C
    stops it, the old index kept.
    """
    ctx = _context(context)
    args = (ctx._handle, text(_args.path("path", path)))
    _ffi.check_interruptible(ctx._handle, lambda: lib.hydroplot_gpkg_index(*args))


def unindex_geopackage(path, *, context=None):
    """Deletes the index files of the GeoPackage at ``path`` (in the
    context's ``index_dir`` and beside it), and takes out an index that
    release 0.2 wrote inside the file, if it holds one (the only change
    hydroplot makes to a user's file)."""
    ctx = _context(context)
    args = (ctx._handle, text(_args.path("path", path)))
    _ffi.check_interruptible(ctx._handle, lambda: lib.hydroplot_gpkg_unindex(*args))


def _comid_result(batch, i):
    """Point ``i`` of a comid batch: its comid, ``None`` or its error."""
    status = lib.hydroplot_comid_batch_status(batch, i)
    if status == _ffi.OK:
        return lib.hydroplot_comid_batch_get(batch, i) or None
    return HydroplotError(
        status,
        _ffi.status_name(status),
        lib.hydroplot_comid_batch_error(batch, i).decode("utf-8", "replace"),
        lib.hydroplot_comid_batch_http_status(batch, i),
    )


def _installed(module):
    import importlib.util

    return importlib.util.find_spec(module) is not None


def _output_kind(output):
    """What ``output`` asks for: ``"geojson"``, ``"arrow"`` or ``"geopandas"``;
    ``"auto"`` is geopandas when installed, else arrow when pyarrow is, else
    geojson. Checked before any request."""
    if output in ("geojson", "arrow", "geopandas"):
        return output
    if output != "auto":
        raise ValueError(f"output must be 'auto', 'arrow', 'geojson' or 'geopandas', not {output!r}")
    if _installed("geopandas"):
        return "geopandas"
    return "arrow" if _installed("pyarrow") else "geojson"


def _from_arrow_supported():
    """geopandas >= 1.0 (GeoDataFrame.from_arrow) and pyarrow are installed."""
    import geopandas

    return hasattr(geopandas.GeoDataFrame, "from_arrow") and _installed("pyarrow")


def _convert(stream, geojson, crs, kind):
    """An :class:`ArrowStream` as ``kind``: the stream itself, a GeoDataFrame
    made from it (or, without pyarrow or geopandas >= 1.0, from
    ``geojson()``; either way an integer column with a missing value is
    ``Int64``, not float64), or the FeatureCollection ``geojson()`` reads."""
    if kind == "arrow":
        return stream
    if kind == "geojson":
        return geojson()
    import geopandas

    if _from_arrow_supported():
        import pyarrow

        table = pyarrow.table(stream)
        return _nullable_integers(geopandas.GeoDataFrame.from_arrow(table), _integer_columns(table))
    fc = geojson()
    frame = geopandas.GeoDataFrame.from_features(fc["features"], crs=crs)
    # geopandas >= 1.2 keeps the features' ids itself.
    if "id" not in frame.columns and any("id" in f for f in fc["features"]):
        frame.insert(0, "id", [f.get("id") for f in fc["features"]])
    return _nullable_integers(frame, _integer_properties(fc["features"]))


def _integer_columns(table):
    """name -> values of the integer columns of a pyarrow table that hold a null."""
    import pyarrow

    return {
        field.name: table.column(field.name).to_pylist()
        for field in table.schema
        if pyarrow.types.is_integer(field.type) and table.column(field.name).null_count
    }


def _integer_properties(features):
    """name -> values of the properties that are ints wherever present and
    missing (None) somewhere: what an Arrow integer column with a null is in
    GeoJSON."""
    rows = [f.get("properties") or {} for f in features]
    names = {name for row in rows for name in row}
    columns = {name: [row.get(name) for row in rows] for name in names}
    return {name: values for name, values in columns.items() if _ints_with_a_gap(values)}


def _ints_with_a_gap(values):
    present = [v for v in values if v is not None]
    return 0 < len(present) < len(values) and all(type(v) is int for v in present)


def _nullable_integers(frame, columns):
    """``frame`` with ``columns`` (name -> values, ints and None) as pandas'
    nullable ``Int64``: pandas would make an integer column with a missing
    value float64 (comid ``13297178.0``), where the Arrow stream holds int64
    and R an integer column."""
    import pandas

    for name, values in columns.items():
        frame[name] = pandas.array(values, dtype="Int64")
    return frame
