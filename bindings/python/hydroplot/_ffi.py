"""ctypes declarations of the hydroplot C API (include/hydroplot.h).

The library is found, in order, inside this package (the copy a wheel built
by ``pip install bindings/python`` carries, ``_libhydroplot`` with an
extension-module suffix), at the path in the ``HYDROPLOT_LIBRARY``
environment variable, by the system's search for ``hydroplot`` (ldconfig,
``LD_LIBRARY_PATH``), then as ``libhydroplot.so``. Every fallible call goes
through :func:`check`, which turns a status into :class:`HydroplotError`
carrying the library's message, status name and HTTP status.
"""

import ctypes
import ctypes.util
import importlib.machinery
import os
import pathlib
import signal
import threading
from ctypes import (
    POINTER,
    c_bool,
    c_char_p,
    c_double,
    c_int32,
    c_int64,
    c_size_t,
    c_uint32,
    c_uint64,
    c_uint8,
    c_void_p,
)

# The hydroplot_status values this package names.
OK = 0
INVALID_ARGUMENT = 2


class HydroplotError(RuntimeError):
    """A failed hydroplot call.

    ``status`` is the numeric ``hydroplot_status``, ``name`` its C name
    (``"HYDROPLOT_ERR_HTTP"``), ``http_status`` the HTTP status behind it
    (0 when none) and ``str(err)`` the library's message.
    """

    def __init__(self, status, name, message, http_status=0):
        super().__init__(f"{name}: {message}")
        self.status = status
        self.name = name
        self.message = message
        self.http_status = http_status

    def __reduce__(self):
        # Picklable (for process pools and Dask): rebuilt from its fields.
        return (HydroplotError, (self.status, self.name, self.message, self.http_status))


def _bundled():
    """The library the wheel carries in this package, or None (a source checkout)."""
    here = pathlib.Path(__file__).resolve().parent
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        path = here / f"_libhydroplot{suffix}"
        if path.is_file():
            return str(path)
    return None


def _load():
    path = _bundled() or os.environ.get("HYDROPLOT_LIBRARY") or ctypes.util.find_library("hydroplot")
    try:
        return ctypes.CDLL(path or "libhydroplot.so")
    except OSError as e:
        raise ImportError(
            f"cannot load the hydroplot C library ({path or 'libhydroplot.so'}): {e}; "
            "install the package with pip (which builds it), install the library "
            "(cmake --install) or set HYDROPLOT_LIBRARY to its path"
        ) from e


lib = _load()

# Opaque handles are plain void pointers on this side.
_status = c_int32
_ptr = c_void_p
_out = POINTER(c_void_p)

#: ``hydroplot_log_fn``: (user, level, message).
LOG_FN = ctypes.CFUNCTYPE(None, c_void_p, c_int32, c_char_p)
#: ``hydroplot_progress_fn``: (user, stage, done, total).
PROGRESS_FN = ctypes.CFUNCTYPE(None, c_void_p, c_char_p, c_uint64, c_uint64)

_SIGNATURES = {
    # library
    "hydroplot_version": (c_char_p, []),
    "hydroplot_last_error": (c_char_p, []),
    "hydroplot_last_http_status": (c_int32, []),
    "hydroplot_status_str": (c_char_p, [_status]),
    # buffers
    "hydroplot_buffer_data": (POINTER(c_uint8), [_ptr]),
    "hydroplot_buffer_len": (c_size_t, [_ptr]),
    "hydroplot_buffer_free": (None, [_ptr]),
    # context
    "hydroplot_context_new": (_status, [_out]),
    "hydroplot_context_set_option": (_status, [_ptr, c_char_p, c_char_p]),
    "hydroplot_context_free": (None, [_ptr]),
    "hydroplot_context_cancel": (None, [_ptr]),
    "hydroplot_context_set_log_callback": (_status, [_ptr, LOG_FN, c_void_p]),
    "hydroplot_context_set_progress_callback": (_status, [_ptr, PROGRESS_FN, c_void_p]),
    # maps
    "hydroplot_map_png": (_status, [_ptr, _out]),
    "hydroplot_map_write_png": (_status, [_ptr, c_char_p]),
    "hydroplot_map_bounds": (_status, [_ptr, POINTER(c_double)]),
    "hydroplot_map_write_world_file": (_status, [_ptr, c_char_p]),
    "hydroplot_map_add_geojson": (_status, [_ptr, c_char_p, c_size_t, c_char_p, c_char_p, c_char_p, c_double]),
    "hydroplot_map_add_trace": (_status, [_ptr, _ptr, c_char_p, c_char_p, c_double]),
    "hydroplot_map_add_point": (_status, [_ptr, c_double, c_double, c_char_p, c_int32, c_char_p, c_double]),
    "hydroplot_map_new": (
        _status,
        [_ptr, c_double, c_double, c_double, c_double, c_char_p, c_uint32, c_uint32, c_char_p, _out],
    ),
    "hydroplot_map_free": (None, [_ptr]),
    # plot requests
    "hydroplot_plot_request_new": (_ptr, []),
    "hydroplot_plot_request_free": (None, [_ptr]),
    "hydroplot_plot_request_add_comid": (_status, [_ptr, c_int64]),
    "hydroplot_plot_request_set_comid_set": (_status, [_ptr, POINTER(c_int64), c_size_t]),
    "hydroplot_plot_request_add_site": (_status, [_ptr, c_char_p]),
    "hydroplot_plot_request_add_feature": (_status, [_ptr, c_char_p, c_char_p]),
    "hydroplot_plot_request_add_point": (_status, [_ptr, c_double, c_double, c_char_p]),
    "hydroplot_plot_request_set_bbox": (_status, [_ptr, c_double, c_double, c_double, c_double, c_char_p]),
    "hydroplot_plot_request_set_streamorder": (_status, [_ptr, c_int32]),
    "hydroplot_plot_request_set_hydro_data": (_status, [_ptr, c_char_p]),
    "hydroplot_plot_request_set_gpkg": (_status, [_ptr, c_char_p]),
    "hydroplot_plot_request_set_png_file": (_status, [_ptr, c_char_p]),
    "hydroplot_plot_request_set_overwrite": (_status, [_ptr, c_bool]),
    "hydroplot_plot_request_set_flowline_only": (_status, [_ptr, c_bool]),
    "hydroplot_plot_request_set_style": (_status, [_ptr, c_char_p, c_char_p, c_char_p]),
    "hydroplot_plot_request_set_basemap": (_status, [_ptr, c_char_p]),
    "hydroplot_plot_request_set_zoom": (_status, [_ptr, c_int32]),
    "hydroplot_plot_request_set_size": (_status, [_ptr, c_uint32, c_uint32]),
    "hydroplot_plot_request_set_actually_plot": (_status, [_ptr, c_bool]),
    "hydroplot_plot_request_set_cache_file": (_status, [_ptr, c_char_p]),
    "hydroplot_plot_request_disable_cache": (_status, [_ptr]),
    "hydroplot_plot_request_set_properties": (_status, [_ptr, c_char_p]),
    "hydroplot_plot_request_set_lod": (_status, [_ptr, c_bool]),
    "hydroplot_plot": (_status, [_ptr, _ptr, _ptr, _out]),
    # plot data
    "hydroplot_plot_data_free": (None, [_ptr]),
    "hydroplot_plot_data_layer_count": (_status, [_ptr, c_char_p, POINTER(c_size_t)]),
    "hydroplot_plot_data_layer_geojson": (_status, [_ptr, c_char_p, _out]),
    "hydroplot_plot_data_layer_arrow": (_status, [_ptr, c_char_p, c_void_p]),
    "hydroplot_plot_data_bbox": (_status, [_ptr, POINTER(c_double)]),
    "hydroplot_plot_data_take_map": (_status, [_ptr, _out]),
    "hydroplot_plot_data_warning_count": (c_size_t, [_ptr]),
    "hydroplot_plot_data_warning": (c_char_p, [_ptr, c_size_t]),
    # traces
    "hydroplot_raindrop_trace": (_status, [_ptr, c_double, c_double, c_char_p, c_char_p, _out]),
    "hydroplot_trace_free": (None, [_ptr]),
    "hydroplot_trace_bbox": (_status, [_ptr, POINTER(c_double)]),
    "hydroplot_trace_geojson": (_status, [_ptr, _out]),
    "hydroplot_trace_arrow": (_status, [_ptr, c_void_p]),
    "hydroplot_raindrop_trace_batch": (_status, [_ptr, POINTER(c_double), c_size_t, c_char_p, c_char_p, _out]),
    "hydroplot_trace_batch_len": (c_size_t, [_ptr]),
    "hydroplot_trace_batch_status": (_status, [_ptr, c_size_t]),
    "hydroplot_trace_batch_error": (c_char_p, [_ptr, c_size_t]),
    "hydroplot_trace_batch_http_status": (c_int32, [_ptr, c_size_t]),
    "hydroplot_trace_batch_get": (_ptr, [_ptr, c_size_t]),
    "hydroplot_trace_batch_free": (None, [_ptr]),
    # point-to-comid lookups
    "hydroplot_comid_lookup": (_status, [_ptr, POINTER(c_double), c_size_t, c_char_p, c_char_p, _out]),
    "hydroplot_comid_batch_len": (c_size_t, [_ptr]),
    "hydroplot_comid_batch_status": (_status, [_ptr, c_size_t]),
    "hydroplot_comid_batch_get": (c_int64, [_ptr, c_size_t]),
    "hydroplot_comid_batch_error": (c_char_p, [_ptr, c_size_t]),
    "hydroplot_comid_batch_http_status": (c_int32, [_ptr, c_size_t]),
    "hydroplot_comid_batch_free": (None, [_ptr]),
    # national GeoPackages made fast
    "hydroplot_gpkg_index": (_status, [_ptr, c_char_p]),
    "hydroplot_gpkg_unindex": (_status, [_ptr, c_char_p]),
}

for _name, (_restype, _argtypes) in _SIGNATURES.items():
    _fn = getattr(lib, _name)
    _fn.restype = _restype
    _fn.argtypes = _argtypes


def status_name(status):
    """The C name of a status code, e.g. ``"HYDROPLOT_ERR_HTTP"``."""
    return lib.hydroplot_status_str(status).decode()


def error(status):
    """The :class:`HydroplotError` of a failed call, read on this thread."""
    return HydroplotError(
        status,
        status_name(status),
        lib.hydroplot_last_error().decode("utf-8", "replace"),
        lib.hydroplot_last_http_status(),
    )


def check(status):
    """Raises :class:`HydroplotError` unless ``status`` is ``HYDROPLOT_OK``."""
    if status != OK:
        raise error(status)


def check_interruptible(context_handle, call, discard=None):
    """Runs ``call()``, a C call with the context ``context_handle`` that
    returns a status, so that Ctrl-C (a notebook's "interrupt") stops it.

    On the main thread the call runs on a worker thread while this one
    waits. Any exception raised meanwhile (KeyboardInterrupt, an exception
    from a signal handler such as pytest-timeout's SIGALRM, SystemExit from
    a SIGTERM handler) cancels the context's calls
    (``hydroplot_context_cancel``), waits until the call has returned
    (never sooner: the caller frees what the call reads, and a call left
    running would go on sending requests), calls ``discard()`` when it had
    succeeded all the same, and is raised again; exceptions raised during
    that wait are dropped. Elsewhere the call runs here (Python runs signal
    handlers on the main thread only). Raises :class:`HydroplotError` as
    :func:`check` does.
    """
    if threading.current_thread() is not threading.main_thread():
        return check(call())
    outcome = []
    done = threading.Event()

    def run():
        try:
            status = call()
            # The error is the worker thread's: read it there.
            outcome.append(error(status) if status != OK else None)
        except BaseException as e:  # handed to the caller below
            outcome.append(e)
        finally:
            done.set()

    worker = threading.Thread(target=run, name="hydroplot-call", daemon=True)
    interruption = None
    try:
        _start_with_signals_held(worker)
        while not done.wait(0.1):
            pass
    except BaseException as e:  # raised again once the call has returned
        interruption = e
    while interruption is not None and not done.is_set():
        # Again until the call ends: a cancel reaches only the calls begun
        # before it, and the worker may not have begun its call yet.
        lib.hydroplot_context_cancel(context_handle)
        try:
            done.wait(0.05)
        except BaseException:
            pass  # Ctrl-C pressed again, another signal: the call still has to end first
    if interruption is not None:
        if outcome and outcome[0] is None and discard is not None:
            discard()
        raise interruption
    if outcome[0] is not None:
        raise outcome[0]


def _start_with_signals_held(worker):
    """Starts ``worker`` with the signals that have a Python handler (SIGINT
    and any the program set) blocked on this thread meanwhile, so a handler
    raises after the start, never inside it (where the worker's state would
    be unknown); the worker inherits the mask and so never takes them
    itself. Without pthread_sigmask, a plain start."""
    if not hasattr(signal, "pthread_sigmask"):
        worker.start()
        return
    handled = {s for s in signal.valid_signals() if callable(signal.getsignal(s))}
    held = signal.pthread_sigmask(signal.SIG_BLOCK, handled)
    try:
        worker.start()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)


def text(value):
    """A Python value as the NUL-terminated UTF-8 the C API takes (None stays NULL)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return b"TRUE" if value else b"FALSE"
    return str(value).encode()


def take_buffer(fill):
    """Calls ``fill(out)`` for a ``hydroplot_buffer`` and returns its bytes, freeing it."""
    buf = c_void_p()
    check(fill(ctypes.byref(buf)))
    try:
        return ctypes.string_at(lib.hydroplot_buffer_data(buf), lib.hydroplot_buffer_len(buf))
    finally:
        lib.hydroplot_buffer_free(buf)
