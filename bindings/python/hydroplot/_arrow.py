"""Layers and traces as Arrow C streams, through the Arrow PyCapsule protocol.

:class:`ArrowStream` implements ``__arrow_c_stream__``: each call asks the C
library for a fresh ``struct ArrowArrayStream`` (``hydroplot_plot_data_layer_arrow``
or ``hydroplot_trace_arrow``) in memory from ``malloc`` and hands it over in a
PyCapsule named ``"arrow_array_stream"``. The consumer (pyarrow, polars, DuckDB,
geopandas) moves the stream out; the capsule's destructor releases a stream
nobody took and frees the struct. No pyarrow is needed to make one.
"""

import ctypes
from ctypes import c_char_p, c_size_t, c_void_p

from ._ffi import check


class _CStream(ctypes.Structure):
    """``struct ArrowArrayStream`` of the Arrow C stream interface."""

    _fields_ = [
        ("get_schema", c_void_p),
        ("get_next", c_void_p),
        ("get_last_error", c_void_p),
        ("release", c_void_p),
        ("private_data", c_void_p),
    ]


_RELEASE = ctypes.CFUNCTYPE(None, c_void_p)

_libc = ctypes.CDLL(None)
_libc.malloc.restype = c_void_p
_libc.malloc.argtypes = [c_size_t]
_libc.free.restype = None
_libc.free.argtypes = [c_void_p]

# The capsule name must outlive every capsule: a module constant does.
_NAME = b"arrow_array_stream"
_DESTRUCTOR = ctypes.CFUNCTYPE(None, c_void_p)
_capsule_new = ctypes.PYFUNCTYPE(ctypes.py_object, c_void_p, c_char_p, _DESTRUCTOR)(
    ("PyCapsule_New", ctypes.pythonapi)
)
_capsule_pointer = ctypes.PYFUNCTYPE(c_void_p, c_void_p, c_char_p)(("PyCapsule_GetPointer", ctypes.pythonapi))


@_DESTRUCTOR
def _destroy(capsule):
    """Releases a stream the consumer did not take, then frees its struct."""
    address = _capsule_pointer(capsule, _NAME)
    if not address:
        return
    stream = _CStream.from_address(address)
    if stream.release:
        _RELEASE(stream.release)(address)
    _libc.free(address)


class _Handle:
    """Owns one C handle and frees it with ``free`` when the last user goes."""

    def __init__(self, pointer, free):
        self.pointer = pointer
        self._free = free

    def __del__(self):
        pointer, self.pointer = getattr(self, "pointer", None), None
        if pointer:
            self._free(pointer)


class ArrowStream:
    """A layer or a trace readable as Arrow: ``pyarrow.table(s)``,
    ``polars.from_arrow(s)``, ``duckdb.sql("select * from s")``,
    ``geopandas.GeoDataFrame.from_arrow(s)``.

    Columns: ``geometry`` (GeoArrow ``geoarrow.wkb``, CRS in its metadata),
    then one typed column per property (comid int64, gnis_name string,
    lengthkm double, ...). Each ``__arrow_c_stream__`` call makes a new
    stream, so the object can be read any number of times; it keeps the C
    data it reads from alive.
    """

    def __init__(self, owner, export):
        self._owner = owner  # keeps the plot data or trace alive
        self._export = export

    def __arrow_c_stream__(self, requested_schema=None):
        """A PyCapsule ``"arrow_array_stream"`` holding a new stream.
        ``requested_schema`` is ignored: the layer has one schema."""
        size = ctypes.sizeof(_CStream)
        address = _libc.malloc(size)
        if not address:
            raise MemoryError("allocating an ArrowArrayStream")
        ctypes.memset(address, 0, size)
        try:
            check(self._export(c_void_p(address)))
        except BaseException:
            _libc.free(address)
            raise
        return _capsule_new(address, _NAME, _destroy)

    def to_pyarrow(self):
        """The data as a ``pyarrow.Table``."""
        import pyarrow

        return pyarrow.table(self)

    def __repr__(self):
        return f"<hydroplot.ArrowStream at {id(self):#x}>"
