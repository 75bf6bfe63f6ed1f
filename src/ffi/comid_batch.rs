//! `hydroplot_comid_batch`: the per-point results of `hydroplot_comid_lookup`.

use super::context::hydroplot_context;
use super::trace_batch::{point_http_status, point_message, point_status, points_arg, PointError};
use super::{
    arg_opt_str, arg_ref, boundary, boundary_or, check_out, hydroplot_status, take_handle,
    write_out, Opaque,
};
use crate::lookup::comids_at_points;
use std::ffi::c_char;
use std::path::Path;

/// The results of a point-to-comid lookup, one per input point in input
/// order: a comid (or none: the point is in no catchment) or the error of
/// that point. Immutable: read it from any thread. Free once with
/// `hydroplot_comid_batch_free`.
pub struct hydroplot_comid_batch {
    _private: [u8; 0],
}

impl Opaque for hydroplot_comid_batch {
    type Rust = Vec<Result<Option<i64>, PointError>>;
}

fn item<'a>(
    b: *const hydroplot_comid_batch,
    i: usize,
) -> Option<&'a Result<Option<i64>, PointError>> {
    unsafe { arg_ref(b, "b") }.ok()?.get(i)
}

/// Looks up the comid (`featureid`) of the NHDPlus catchment holding each
/// point. Without `hydro_data`, the fabric service answers (one request per
/// distinct point, at most the context's `concurrency` at once); with it,
/// the GeoPackage's catchments do (their R-tree, then an exact
/// point-in-polygon test) and no request is made. A point on the edge of
/// two catchments gets the smaller featureid. Progress is reported as stage
/// `"comid"`. A failing point does not fail the others. When the service
/// answers HTTP 429 beyond the context's retries, the point is queued
/// again after its `Retry-After` and fewer requests run at once.
///
/// \param ctx        The context; only read.
/// \param xy         The points, `x0, y0, x1, y1, ...`: 2 * `n_points` doubles.
/// \param n_points   The number of points; 0 gives an empty batch.
/// \param crs        The CRS of the points, or NULL for `"EPSG:4326"`.
/// \param hydro_data A local NHDPlus GeoPackage (UTF-8 path) with a
///                   catchment layer, or NULL to ask the fabric service.
/// \param out        Receives the batch on success; not written on failure.
///
/// \return `HYDROPLOT_OK`, or an error status below. Only errors of the whole
/// call are returned; the points' errors are in the batch.
///
/// \par Errors
/// - `HYDROPLOT_ERR_NULL_ARGUMENT`: `ctx` or `out` is NULL, or `xy` is NULL
///   and `n_points` > 0.
/// - `HYDROPLOT_ERR_INVALID_ARGUMENT`: `n_points` too large, or a string
///   that is not UTF-8 (before any request).
/// - `HYDROPLOT_ERR_CRS`: `crs` is unknown (before any request).
/// - `HYDROPLOT_ERR_IO`, `HYDROPLOT_ERR_GPKG`: `hydro_data` cannot be read,
///   is not a GeoPackage or has no catchment layer.
///
/// \par Ownership
/// On success the caller owns `*out`; free it once with
/// `hydroplot_comid_batch_free`. `hydro_data` is only read during the call.
///
/// \par Thread safety
/// Any thread; `ctx` may be shared. Callbacks run on the calling thread.
///
/// \since 0.3
#[no_mangle]
pub extern "C" fn hydroplot_comid_lookup(
    ctx: *const hydroplot_context,
    xy: *const f64,
    n_points: usize,
    crs: *const c_char,
    hydro_data: *const c_char,
    out: *mut *mut hydroplot_comid_batch,
) -> hydroplot_status {
    boundary(|| {
        check_out(out, "out")?;
        let ctx = unsafe { arg_ref(ctx, "ctx") }?;
        let points = unsafe { points_arg(xy, n_points) }?;
        let crs = unsafe { arg_opt_str(crs, "crs") }?;
        let hydro_data = unsafe { arg_opt_str(hydro_data, "hydro_data") }?.map(Path::new);
        let results = comids_at_points(&ctx.core.for_call(), &points, crs, hydro_data)?;
        let items = results
            .into_iter()
            .map(|r| r.map_err(|e| PointError::new(&e)))
            .collect();
        unsafe { write_out(out, hydroplot_comid_batch::into_handle(items), "out") }
    })
}

/// The number of points (results) in a batch.
///
/// \param b The batch, or NULL.
///
/// \return The count; 0 when `b` is NULL.
///
/// \par Errors
/// None: a NULL `b` gives 0 and leaves `hydroplot_last_error()` unchanged.
///
/// \par Ownership
/// Nothing is allocated.
///
/// \par Thread safety
/// Any thread: a batch is immutable.
///
/// \since 0.3
#[no_mangle]
pub extern "C" fn hydroplot_comid_batch_len(b: *const hydroplot_comid_batch) -> usize {
    boundary_or(0, || unsafe { arg_ref(b, "b") }.map_or(0, Vec::len))
}

/// The result of one point, as a status.
///
/// \param b The batch, or NULL.
/// \param i The point's index, below `hydroplot_comid_batch_len`.
///
/// \return `HYDROPLOT_OK` when the point was looked up (whether or not a
/// catchment holds it), else the status its error maps to;
/// `HYDROPLOT_ERR_NULL_ARGUMENT` when `b` is NULL;
/// `HYDROPLOT_ERR_INVALID_ARGUMENT` when `i` is out of range.
///
/// \par Errors
/// The statuses above are answers, not failures of this call:
/// `hydroplot_last_error()` is unchanged.
///
/// \par Ownership
/// Nothing is allocated.
///
/// \par Thread safety
/// Any thread: a batch is immutable.
///
/// \since 0.3
#[no_mangle]
pub extern "C" fn hydroplot_comid_batch_status(
    b: *const hydroplot_comid_batch,
    i: usize,
) -> hydroplot_status {
    boundary_or(hydroplot_status::HYDROPLOT_ERR_INTERNAL, || {
        point_status(unsafe { arg_ref(b, "b") }.ok().map(Vec::as_slice), i)
    })
}

/// The comid of the catchment holding one point.
///
/// \param b The batch, or NULL.
/// \param i The point's index, below `hydroplot_comid_batch_len`.
///
/// \return The comid (NHDPlus comids are positive); 0 when no catchment
/// holds the point, when the point failed (see
/// `hydroplot_comid_batch_status`), when `b` is NULL or `i` is out of range.
///
/// \par Errors
/// None: `hydroplot_last_error()` is unchanged.
///
/// \par Ownership
/// Nothing is allocated.
///
/// \par Thread safety
/// Any thread: a batch is immutable.
///
/// \since 0.3
#[no_mangle]
pub extern "C" fn hydroplot_comid_batch_get(b: *const hydroplot_comid_batch, i: usize) -> i64 {
    boundary_or(0, || match item(b, i) {
        Some(Ok(Some(comid))) => *comid,
        _ => 0,
    })
}

/// The error message of one point.
///
/// \param b The batch, or NULL.
/// \param i The point's index, below `hydroplot_comid_batch_len`.
///
/// \return The message; NULL when the point was looked up, when `b` is NULL
/// or `i` is out of range.
///
/// \par Errors
/// None: `hydroplot_last_error()` is unchanged.
///
/// \par Ownership
/// Owned by `b`, valid until it is freed; never free it.
///
/// \par Thread safety
/// Any thread: a batch is immutable.
///
/// \since 0.3
#[no_mangle]
pub extern "C" fn hydroplot_comid_batch_error(
    b: *const hydroplot_comid_batch,
    i: usize,
) -> *const c_char {
    boundary_or(std::ptr::null(), || point_message(item(b, i)))
}

/// The HTTP status behind the error of one point (429 when the service
/// still refused it after every retry and re-queue).
///
/// \param b The batch, or NULL.
/// \param i The point's index, below `hydroplot_comid_batch_len`.
///
/// \return The HTTP status; 0 when the error had none, when the point was
/// looked up, when `b` is NULL or `i` is out of range.
///
/// \par Errors
/// None: `hydroplot_last_error()` is unchanged.
///
/// \par Ownership
/// Nothing is allocated.
///
/// \par Thread safety
/// Any thread: a batch is immutable.
///
/// \since 0.3
#[no_mangle]
pub extern "C" fn hydroplot_comid_batch_http_status(
    b: *const hydroplot_comid_batch,
    i: usize,
) -> i32 {
    boundary_or(0, || point_http_status(item(b, i)))
}

/// Frees a batch and every string borrowed from it.
///
/// \param b The batch, or NULL (a no-op).
///
/// \par Errors
/// None.
///
/// \par Ownership
/// `b` and everything borrowed from it are invalid afterwards. Never free a
/// batch twice.
///
/// \par Thread safety
/// Not while another thread reads `b`.
///
/// \since 0.3
#[no_mangle]
pub extern "C" fn hydroplot_comid_batch_free(b: *mut hydroplot_comid_batch) {
    boundary_or((), || drop(unsafe { take_handle(b) }))
}
