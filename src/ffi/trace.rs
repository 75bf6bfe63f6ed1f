//! `hydroplot_trace`: the result of `hydroplot_raindrop_trace`, read through
//! the `hydroplot_trace_*` accessors.

use super::arrow_stream::{self, ArrowArrayStream};
use super::context::hydroplot_context;
use super::{
    arg_opt_str, arg_ref, boundary, boundary_or, buffer, check_out, hydroplot_status, take_handle,
    write_out, Opaque,
};
use crate::services::flowtrace;
use crate::trace::{Trace, TraceFeature};
use std::ffi::{c_char, CString};

/// A raindrop trace: 2 LineString features in WGS 84 longitude/latitude, the
/// flowline portion (index 0, id `upstreamFlowline`, `downstreamFlowline` or
/// `nhdFlowline`) and the raindrop's path (index 1, id `raindropPath`).
/// Immutable: read it from any thread. Strings and coordinates it returns are
/// owned by it and valid until `hydroplot_trace_free`.
pub struct hydroplot_trace {
    _private: [u8; 0],
}

impl Opaque for hydroplot_trace {
    type Rust = FfiTrace;
}

/// The Rust side of a trace handle: the core trace and C copies of its strings.
pub(crate) struct FfiTrace {
    pub(crate) core: Trace,
    strings: Vec<FeatureStrings>,
    /// Whose the trace is: a trace inside a batch belongs to the batch, and
    /// `hydroplot_trace_free` leaves it alone.
    owner: Owner,
}

/// Who frees a trace.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Owner {
    /// The caller, with `hydroplot_trace_free`.
    Caller,
    /// The `hydroplot_trace_batch` holding it, with `hydroplot_trace_batch_free`.
    Batch,
}

/// NUL-terminated copies of one feature's strings, made once.
struct FeatureStrings {
    id: CString,
    gnis_name: Option<CString>,
    reachcode: Option<CString>,
}

impl FfiTrace {
    pub(crate) fn new(core: Trace, owner: Owner) -> FfiTrace {
        let strings = core
            .features
            .iter()
            .map(|f| FeatureStrings {
                id: c_string(&f.id),
                gnis_name: f.gnis_name.as_deref().map(c_string),
                reachcode: f.reachcode.as_deref().map(c_string),
            })
            .collect();
        FfiTrace {
            core,
            strings,
            owner,
        }
    }
}

/// A C copy of `s`; an interior NUL (never sent by the service) becomes a space.
fn c_string(s: &str) -> CString {
    CString::new(s.replace('\0', " ")).unwrap_or_default()
}

/// Feature `i` of `t` and its C strings; `None` when `t` is NULL or `i` is out of range.
fn feature<'a>(
    t: *const hydroplot_trace,
    i: usize,
) -> Option<(&'a TraceFeature, &'a FeatureStrings)> {
    let t = unsafe { arg_ref(t, "t") }.ok()?;
    Some((t.core.features.get(i)?, t.strings.get(i)?))
}

fn str_ptr(s: Option<&CString>) -> *const c_char {
    s.map_or(std::ptr::null(), |s| s.as_ptr())
}

/// Writes `value` to `out` when both are present; the accessors' boolean answer.
fn give_opt<T>(value: Option<T>, out: *mut T) -> bool {
    match value {
        Some(v) if !out.is_null() => {
            unsafe { out.write(v) };
            true
        }
        _ => false,
    }
}

/// Traces a raindrop from a point: where it lands on the flowline network,
/// and the flowline up- or downstream of there (the flowtrace service).
///
/// \param ctx       The context; only read.
/// \param x         The x coordinate (longitude in EPSG:4326).
/// \param y         The y coordinate (latitude in EPSG:4326).
/// \param crs       The CRS of `x` and `y`, or NULL for `"EPSG:4326"`.
/// \param direction direction `"down"` (or NULL), `"up"` or `"none"`.
/// \param out       Receives the trace on success; not written on failure.
///
/// \return `HYDROPLOT_OK`, or an error status below.
///
/// \par Errors
/// - `HYDROPLOT_ERR_NULL_ARGUMENT`: `ctx` or `out` is NULL.
/// - `HYDROPLOT_ERR_INVALID_ARGUMENT`: a bad direction, a non-finite or
///   out-of-range point, or a string that is not UTF-8 (before any request).
/// - `HYDROPLOT_ERR_CRS`: `crs` is unknown (before any request).
/// - `HYDROPLOT_ERR_NETWORK`: the service could not be reached, after retries.
/// - `HYDROPLOT_ERR_HTTP`: the service answered an error status, e.g. 500 for
///   a point outside its domain, with its description in
///   `hydroplot_last_error()`.
/// - `HYDROPLOT_ERR_NOT_FOUND`: the service answered 404.
/// - `HYDROPLOT_ERR_SERVICE`: the answer is not a 2-feature trace.
///
/// \par Ownership
/// On success the caller owns `*out`; free it once with
/// `hydroplot_trace_free`.
///
/// \par Thread safety
/// Any thread; `ctx` may be shared. Callbacks run on the calling thread.
///
/// \since 0.1
#[no_mangle]
pub extern "C" fn hydroplot_raindrop_trace(
    ctx: *const hydroplot_context,
    x: f64,
    y: f64,
    crs: *const c_char,
    direction: *const c_char,
    out: *mut *mut hydroplot_trace,
) -> hydroplot_status {
    boundary(|| {
        check_out(out, "out")?;
        let ctx = unsafe { arg_ref(ctx, "ctx") }?;
        let crs = unsafe { arg_opt_str(crs, "crs") }?;
        let direction = unsafe { arg_opt_str(direction, "direction") }?;
        let trace = flowtrace::raindrop_trace(&ctx.core.for_call(), x, y, crs, direction)?;
        unsafe {
            write_out(
                out,
                hydroplot_trace::into_handle(FfiTrace::new(trace, Owner::Caller)),
                "out",
            )
        }
    })
}

/// Frees a trace and everything read from it.
///
/// \param t The trace, or NULL (a no-op).
///
/// \par Errors
/// None.
///
/// \par Ownership
/// `t` and every pointer read from it are invalid afterwards. Never free a
/// trace twice. A trace borrowed from a batch (`hydroplot_trace_batch_get`)
/// belongs to the batch: freeing it here is a no-op, and it stays valid
/// until the batch is freed.
///
/// \par Thread safety
/// Not while another thread reads `t`.
///
/// \since 0.1
#[no_mangle]
pub extern "C" fn hydroplot_trace_free(t: *mut hydroplot_trace) {
    boundary_or((), || {
        let borrowed = unsafe { arg_ref(t, "t") }.is_ok_and(|t| t.owner == Owner::Batch);
        if !borrowed {
            drop(unsafe { take_handle(t) })
        }
    })
}

/// The number of features of a trace (2).
///
/// \param t The trace (owned, or borrowed from a batch), or NULL.
///
/// \return The count; 0 when `t` is NULL.
///
/// \par Errors
/// None: a NULL `t` gives 0 and leaves `hydroplot_last_error()` unchanged.
///
/// \par Ownership
/// Nothing is allocated.
///
/// \par Thread safety
/// Any thread: a trace is immutable.
///
/// \since 0.1
#[no_mangle]
pub extern "C" fn hydroplot_trace_len(t: *const hydroplot_trace) -> usize {
    boundary_or(0, || {
        unsafe { arg_ref(t, "t") }.map_or(0, |t| t.core.features.len())
    })
}

/// The id of a feature: `"upstreamFlowline"`, `"downstreamFlowline"` or
/// `"nhdFlowline"` (index 0), `"raindropPath"` (index 1).
///
/// \param t The trace (owned, or borrowed from a batch), or NULL.
/// \param i The feature: 0, the flowline portion; 1, the raindrop's path.
///
/// \return The id, empty when the service gave none; NULL when `t` is NULL or `i`
/// is out of range.
///
/// \par Errors
/// None: a NULL `t` or an out-of-range `i` gives NULL and leaves
/// `hydroplot_last_error()` unchanged.
///
/// \par Ownership
/// Owned by `t`, valid until it (or its batch) is freed; never free it.
///
/// \par Thread safety
/// Any thread: a trace is immutable.
///
/// \since 0.1
#[no_mangle]
pub extern "C" fn hydroplot_trace_id(t: *const hydroplot_trace, i: usize) -> *const c_char {
    boundary_or(std::ptr::null(), || {
        str_ptr(feature(t, i).map(|(_, s)| &s.id))
    })
}

/// The GNIS name of a feature.
///
/// \param t The trace (owned, or borrowed from a batch), or NULL.
/// \param i The feature: 0, the flowline portion; 1, the raindrop's path.
///
/// \return The name; NULL when missing (the raindrop path, an unnamed flowline: the
/// service's `"none"`), when `t` is NULL or `i` is out of range.
///
/// \par Errors
/// None: a NULL `t` or an out-of-range `i` gives NULL and leaves
/// `hydroplot_last_error()` unchanged.
///
/// \par Ownership
/// Owned by `t`, valid until it (or its batch) is freed; never free it.
///
/// \par Thread safety
/// Any thread: a trace is immutable.
///
/// \since 0.1
#[no_mangle]
pub extern "C" fn hydroplot_trace_gnis_name(t: *const hydroplot_trace, i: usize) -> *const c_char {
    boundary_or(std::ptr::null(), || {
        str_ptr(feature(t, i).and_then(|(_, s)| s.gnis_name.as_ref()))
    })
}

/// The 14-digit reach code of a feature.
///
/// \param t The trace (owned, or borrowed from a batch), or NULL.
/// \param i The feature: 0, the flowline portion; 1, the raindrop's path.
///
/// \return The reach code; NULL when missing, when `t` is NULL or `i` is out of
/// range.
///
/// \par Errors
/// None: a NULL `t` or an out-of-range `i` gives NULL and leaves
/// `hydroplot_last_error()` unchanged.
///
/// \par Ownership
/// Owned by `t`, valid until it (or its batch) is freed; never free it.
///
/// \par Thread safety
/// Any thread: a trace is immutable.
///
/// \since 0.1
#[no_mangle]
pub extern "C" fn hydroplot_trace_reachcode(t: *const hydroplot_trace, i: usize) -> *const c_char {
    boundary_or(std::ptr::null(), || {
        str_ptr(feature(t, i).and_then(|(_, s)| s.reachcode.as_ref()))
    })
}

/// The comid of a feature.
///
/// \param t The trace (owned, or borrowed from a batch), or NULL.
/// \param i The feature: 0, the flowline portion; 1, the raindrop's path.
/// \param out Receives the value when there is one.
///
/// \return True when `*out` was written; false (and `*out` untouched) when the
/// feature has none, when `t` or `out` is NULL or `i` is out of range.
///
/// \par Errors
/// None: NULL arguments or an out-of-range `i` give false and leave
/// `hydroplot_last_error()` unchanged.
///
/// \par Ownership
/// Nothing is allocated; `*out` is the caller's.
///
/// \par Thread safety
/// Any thread: a trace is immutable.
///
/// \since 0.1
#[no_mangle]
pub extern "C" fn hydroplot_trace_comid(
    t: *const hydroplot_trace,
    i: usize,
    out: *mut i64,
) -> bool {
    boundary_or(false, || {
        give_opt(feature(t, i).and_then(|(f, _)| f.comid), out)
    })
}

/// The raindrop path length, in metres, of a feature.
///
/// \param t The trace (owned, or borrowed from a batch), or NULL.
/// \param i The feature: 0, the flowline portion; 1, the raindrop's path.
/// \param out Receives the value when there is one.
///
/// \return True when `*out` was written; false (and `*out` untouched) when the
/// feature has none, when `t` or `out` is NULL or `i` is out of range.
///
/// \par Errors
/// None: NULL arguments or an out-of-range `i` give false and leave
/// `hydroplot_last_error()` unchanged.
///
/// \par Ownership
/// Nothing is allocated; `*out` is the caller's.
///
/// \par Thread safety
/// Any thread: a trace is immutable.
///
/// \since 0.1
#[no_mangle]
pub extern "C" fn hydroplot_trace_raindrop_path_dist(
    t: *const hydroplot_trace,
    i: usize,
    out: *mut f64,
) -> bool {
    boundary_or(false, || {
        give_opt(feature(t, i).and_then(|(f, _)| f.raindrop_path_dist), out)
    })
}

/// The measure (percent along the flowline) of a feature. Missing also when the service sent
/// `"null"`.
///
/// \param t The trace (owned, or borrowed from a batch), or NULL.
/// \param i The feature: 0, the flowline portion; 1, the raindrop's path.
/// \param out Receives the value when there is one.
///
/// \return True when `*out` was written; false (and `*out` untouched) when the
/// feature has none, when `t` or `out` is NULL or `i` is out of range.
///
/// \par Errors
/// None: NULL arguments or an out-of-range `i` give false and leave
/// `hydroplot_last_error()` unchanged.
///
/// \par Ownership
/// Nothing is allocated; `*out` is the caller's.
///
/// \par Thread safety
/// Any thread: a trace is immutable.
///
/// \since 0.1
#[no_mangle]
pub extern "C" fn hydroplot_trace_measure(
    t: *const hydroplot_trace,
    i: usize,
    out: *mut f64,
) -> bool {
    boundary_or(false, || {
        give_opt(feature(t, i).and_then(|(f, _)| f.measure), out)
    })
}

/// Where the raindrop meets the flowline, longitude then latitude.
///
/// \param t The trace (owned, or borrowed from a batch), or NULL.
/// \param i The feature: 0, the flowline portion; 1, the raindrop's path.
/// \param out_lon_lat Receives the point: room for 2 doubles.
///
/// \return 2 when the point was written; 0 (and nothing written) when feature `i` has
/// none (the raindrop path), when `t` or `out_lon_lat` is NULL or `i` is out
/// of range.
///
/// \par Errors
/// None: NULL arguments or an out-of-range `i` give 0 and leave
/// `hydroplot_last_error()` unchanged.
///
/// \par Ownership
/// Nothing is allocated; the 2 doubles are the caller's.
///
/// \par Thread safety
/// Any thread: a trace is immutable.
///
/// \since 0.1
#[no_mangle]
pub extern "C" fn hydroplot_trace_intersection_point(
    t: *const hydroplot_trace,
    i: usize,
    out_lon_lat: *mut f64,
) -> usize {
    boundary_or(0, || {
        let point = feature(t, i).and_then(|(f, _)| f.intersection_point);
        if give_opt(point, out_lon_lat.cast::<[f64; 2]>()) {
            2
        } else {
            0
        }
    })
}

/// The vertices of a feature, `x0, y0, x1, y1, ...` (longitude, latitude).
///
/// \param t The trace (owned, or borrowed from a batch), or NULL.
/// \param i The feature: 0, the flowline portion; 1, the raindrop's path.
/// \param n_points Receives the number of vertices (0 when NULL is returned);
///          may be NULL.
///
/// \return The first coordinate; NULL when `t` is NULL, `i` is out of range or the
/// line has no vertex.
///
/// \par Errors
/// None: NULL or an out-of-range `i` gives NULL (and `*n_points` = 0) and
/// leaves `hydroplot_last_error()` unchanged.
///
/// \par Ownership
/// Owned by `t`, valid until it (or its batch) is freed; never free them.
///
/// \par Thread safety
/// Any thread: a trace is immutable.
///
/// \since 0.1
#[no_mangle]
pub extern "C" fn hydroplot_trace_coords(
    t: *const hydroplot_trace,
    i: usize,
    n_points: *mut usize,
) -> *const f64 {
    boundary_or(std::ptr::null(), || {
        let coords = feature(t, i).map_or(&[][..], |(f, _)| f.coords.as_slice());
        give_opt(Some(coords.len() / 2), n_points);
        if coords.is_empty() {
            std::ptr::null()
        } else {
            coords.as_ptr()
        }
    })
}

/// The bounding box of every vertex of a trace, in longitude/latitude.
///
/// \param t   The trace (owned, or borrowed from a batch).
/// \param out Receives xmin, ymin, xmax, ymax: room for 4 doubles.
///
/// \return `HYDROPLOT_OK`, or an error status below.
///
/// \par Errors
/// - `HYDROPLOT_ERR_NULL_ARGUMENT`: `t` or `out` is NULL.
///
/// \par Ownership
/// Nothing is allocated; the 4 doubles are the caller's.
///
/// \par Thread safety
/// Any thread: a trace is immutable.
///
/// \since 0.1
#[no_mangle]
pub extern "C" fn hydroplot_trace_bbox(
    t: *const hydroplot_trace,
    out: *mut f64,
) -> hydroplot_status {
    boundary(|| {
        check_out(out, "out")?;
        let t = unsafe { arg_ref(t, "t") }?;
        unsafe { write_out(out.cast::<[f64; 4]>(), t.core.bbox(), "out") }
    })
}

/// A trace as a GeoJSON FeatureCollection, with the current field names:
/// each feature has its `id` member and properties holding all of the
/// spec's 7 fields (`id`, `gnis_name`, `comid`, `reachcode`,
/// `raindrop_pathDist`, `measure`, `intersection_point`), a missing value
/// as `null`, `intersection_point` as `[lon, lat]` on the flowline and `[]`
/// on the raindrop path. (Before 0.3, missing values were left out.)
///
/// \param t   The trace (owned, or borrowed from a batch).
/// \param out Receives the GeoJSON bytes on success; not written on failure.
///
/// \return `HYDROPLOT_OK`, or an error status below.
///
/// \par Errors
/// - `HYDROPLOT_ERR_NULL_ARGUMENT`: `t` or `out` is NULL.
///
/// \par Ownership
/// On success the caller owns `*out`; free it once with
/// `hydroplot_buffer_free`. It outlives `t`.
///
/// \par Thread safety
/// Any thread: a trace is immutable.
///
/// \since 0.1
#[no_mangle]
pub extern "C" fn hydroplot_trace_geojson(
    t: *const hydroplot_trace,
    out: *mut *mut buffer::hydroplot_buffer,
) -> hydroplot_status {
    boundary(|| {
        check_out(out, "out")?;
        let t = unsafe { arg_ref(t, "t") }?;
        buffer::give(t.core.to_geojson(), out)
    })
}

/// A trace as an Arrow C stream: one row per feature (the flowline, then the
/// raindrop path), a `geometry` column (GeoArrow `geoarrow.wkb` LineStrings,
/// WGS 84 (EPSG:4326) as PROJJSON, `{"crs":{..., "id":{"authority":"EPSG",
/// "code":4326}},"crs_type":"projjson"}`, in its
/// `ARROW:extension:metadata`), then always the spec's 7 fields in its
/// order, whatever the service sent: `id` (utf8: the flowline's id or
/// `raindropPath`), `gnis_name` (utf8), `comid` (int64), `reachcode` (utf8),
/// `raindrop_pathDist` and `measure` (float64), `intersection_point` (a
/// list of float64: `[lon, lat]` on the flowline, an empty list on the
/// raindrop path). A value missing in a feature is a null; a column typed
/// as above even when both features miss it. The values are those of
/// `hydroplot_trace_geojson`. (Before 0.3, a column missing in both
/// features was absent and `intersection_point` was the JSON text.)
///
/// \param t   The trace (owned, or borrowed from a batch).
/// \param out Receives the stream on success; not written on failure. Its
///         previous content is overwritten without being released: pass a
///         released or uninitialised struct.
///
/// \return `HYDROPLOT_OK`, or an error status below.
///
/// \par Errors
/// - `HYDROPLOT_ERR_NULL_ARGUMENT`: `t` or `out` is NULL.
///
/// \par Ownership
/// On success the caller owns the stream and calls `out->release(out)` once
/// when done (after releasing the schema and arrays it got from it, each with
/// its own `release`). The stream holds its own copy of the data: it stays
/// valid after `t` is freed.
///
/// \par Thread safety
/// Any thread: a trace is immutable. The stream is for one thread at a time,
/// as the Arrow specification says.
///
/// \since 0.2
#[no_mangle]
pub extern "C" fn hydroplot_trace_arrow(
    t: *const hydroplot_trace,
    out: *mut ArrowArrayStream,
) -> hydroplot_status {
    boundary(|| {
        let t = unsafe { arg_ref(t, "t") }?;
        arrow_stream::check(out)?;
        arrow_stream::export(crate::arrow::trace_batch(&t.core)?, out)
    })
}
