//! `hydroplot_trace_batch`: the per-point results of
//! `hydroplot_raindrop_trace_batch`.

use super::context::hydroplot_context;
use super::status::of_error;
use super::trace::{hydroplot_trace, FfiTrace, Owner};
use super::{
    arg_opt_str, arg_ref, arg_slice, boundary, boundary_or, check_out, hydroplot_status,
    take_handle, write_out, FfiResult, Opaque,
};
use crate::services::flowtrace;
use crate::Error;
use std::ffi::{c_char, CString};

/// The results of a batch of raindrop traces, one per input point in input
/// order: a trace or the error of that point. Immutable: read it from any
/// thread. Free once with `hydroplot_trace_batch_free`.
pub struct hydroplot_trace_batch {
    _private: [u8; 0],
}

impl Opaque for hydroplot_trace_batch {
    type Rust = Vec<Result<FfiTrace, PointError>>;
}

/// Why one point of a batch failed, kept in C form (shared with
/// `hydroplot_comid_batch`).
pub(crate) struct PointError {
    status: hydroplot_status,
    http_status: i32,
    message: CString,
}

impl PointError {
    pub(super) fn new(e: &Error) -> PointError {
        PointError {
            status: of_error(e),
            http_status: i32::from(e.http_status()),
            message: CString::new(e.to_string().replace('\0', " ")).unwrap_or_default(),
        }
    }
}

fn item<'a>(b: *const hydroplot_trace_batch, i: usize) -> Option<&'a Result<FfiTrace, PointError>> {
    unsafe { arg_ref(b, "b") }.ok()?.get(i)
}

/// The points of a batch call: `n_points` pairs `x, y` at `xy` (which may
/// be NULL when `n_points` is 0).
///
/// # Safety
/// `xy` is NULL or points to 2 * `n_points` readable doubles.
pub(super) unsafe fn points_arg(xy: *const f64, n_points: usize) -> FfiResult<Vec<(f64, f64)>> {
    let len = n_points
        .checked_mul(2)
        .ok_or_else(|| Error::InvalidArgument(format!("n_points ({n_points}) is too large")))?;
    let xy = unsafe { arg_slice(xy, len, "xy") }?;
    Ok(xy.chunks_exact(2).map(|p| (p[0], p[1])).collect())
}

/// The status of point `i` of a batch's results (`None`: a NULL batch),
/// as the batch `_status` functions return it.
pub(super) fn point_status<T>(
    items: Option<&[Result<T, PointError>]>,
    i: usize,
) -> hydroplot_status {
    use hydroplot_status::*;
    match items.map(|items| items.get(i)) {
        None => HYDROPLOT_ERR_NULL_ARGUMENT,
        Some(None) => HYDROPLOT_ERR_INVALID_ARGUMENT,
        Some(Some(Ok(_))) => HYDROPLOT_OK,
        Some(Some(Err(e))) => e.status,
    }
}

/// The message of a failed point; NULL otherwise.
pub(super) fn point_message<T>(item: Option<&Result<T, PointError>>) -> *const c_char {
    match item {
        Some(Err(e)) => e.message.as_ptr(),
        _ => std::ptr::null(),
    }
}

/// The HTTP status of a failed point; 0 otherwise.
pub(super) fn point_http_status<T>(item: Option<&Result<T, PointError>>) -> i32 {
    match item {
        Some(Err(e)) => e.http_status,
        _ => 0,
    }
}

/// Traces many points, each as `hydroplot_raindrop_trace` would, with at most
/// the context's `concurrency` requests at once; progress is reported as
/// stage `"trace"`. A failing point does not fail the others: each point
/// has its own result, read with `hydroplot_trace_batch_status`,
/// `hydroplot_trace_batch_error` and `hydroplot_trace_batch_get`. When the
/// service answers HTTP 429 beyond the context's retries, the point is
/// queued again after its `Retry-After` and fewer requests run at once
/// (since 0.3); a point is never dropped.
///
/// \param ctx       The context; only read.
/// \param xy        The points, `x0, y0, x1, y1, ...`: 2 * `n_points` doubles.
/// \param n_points  The number of points; 0 gives an empty batch.
/// \param crs       The CRS of the points, or NULL for `"EPSG:4326"`.
/// \param direction direction `"down"` (or NULL), `"up"` or `"none"`.
/// \param out       Receives the batch on success; not written on failure.
///
/// \return `HYDROPLOT_OK`, or an error status below. Only errors of the whole call are
/// returned; the points' errors are in the batch.
///
/// \par Errors
/// - `HYDROPLOT_ERR_NULL_ARGUMENT`: `ctx` or `out` is NULL, or `xy` is NULL
///   and `n_points` > 0.
/// - `HYDROPLOT_ERR_INVALID_ARGUMENT`: a bad direction, `n_points` too large,
///   or a string that is not UTF-8 (before any request).
/// - `HYDROPLOT_ERR_CRS`: `crs` is unknown (before any request).
///
/// \par Ownership
/// On success the caller owns `*out`; free it once with
/// `hydroplot_trace_batch_free`.
///
/// \par Thread safety
/// Any thread; `ctx` may be shared. Callbacks run on the calling thread.
///
/// \since 0.1
#[no_mangle]
pub extern "C" fn hydroplot_raindrop_trace_batch(
    ctx: *const hydroplot_context,
    xy: *const f64,
    n_points: usize,
    crs: *const c_char,
    direction: *const c_char,
    out: *mut *mut hydroplot_trace_batch,
) -> hydroplot_status {
    boundary(|| {
        check_out(out, "out")?;
        let ctx = unsafe { arg_ref(ctx, "ctx") }?;
        let points = unsafe { points_arg(xy, n_points) }?;
        let crs = unsafe { arg_opt_str(crs, "crs") }?;
        let direction = unsafe { arg_opt_str(direction, "direction") }?;
        let results =
            flowtrace::raindrop_trace_batch(&ctx.core.for_call(), &points, crs, direction)?;
        let items = results
            .into_iter()
            .map(|r| {
                r.map(|t| FfiTrace::new(t, Owner::Batch))
                    .map_err(|e| PointError::new(&e))
            })
            .collect();
        unsafe { write_out(out, hydroplot_trace_batch::into_handle(items), "out") }
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
/// \since 0.1
#[no_mangle]
pub extern "C" fn hydroplot_trace_batch_len(b: *const hydroplot_trace_batch) -> usize {
    boundary_or(0, || unsafe { arg_ref(b, "b") }.map_or(0, Vec::len))
}

/// The result of one point, as a status.
///
/// \param b The batch, or NULL.
/// \param i The point's index, below `hydroplot_trace_batch_len`.
///
/// \return `HYDROPLOT_OK` when the point was traced, else the status its error maps
/// to (as `hydroplot_raindrop_trace` would return);
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
/// \since 0.1
#[no_mangle]
pub extern "C" fn hydroplot_trace_batch_status(
    b: *const hydroplot_trace_batch,
    i: usize,
) -> hydroplot_status {
    boundary_or(hydroplot_status::HYDROPLOT_ERR_INTERNAL, || {
        point_status(unsafe { arg_ref(b, "b") }.ok().map(Vec::as_slice), i)
    })
}

/// The error message of one point.
///
/// \param b The batch, or NULL.
/// \param i The point's index, below `hydroplot_trace_batch_len`.
///
/// \return The message; NULL when the point was traced, when `b` is NULL or `i` is
/// out of range.
///
/// \par Errors
/// None: NULL or an out-of-range `i` gives NULL and leaves
/// `hydroplot_last_error()` unchanged.
///
/// \par Ownership
/// Owned by `b`, valid until it is freed; never free it.
///
/// \par Thread safety
/// Any thread: a batch is immutable.
///
/// \since 0.1
#[no_mangle]
pub extern "C" fn hydroplot_trace_batch_error(
    b: *const hydroplot_trace_batch,
    i: usize,
) -> *const c_char {
    boundary_or(std::ptr::null(), || point_message(item(b, i)))
}

/// The HTTP status behind the error of one point (e.g. 500 for a point
/// outside the service's domain).
///
/// \param b The batch, or NULL.
/// \param i The point's index, below `hydroplot_trace_batch_len`.
///
/// \return The HTTP status; 0 when the error had none, when the point was traced,
/// when `b` is NULL or `i` is out of range.
///
/// \par Errors
/// None: NULL or an out-of-range `i` gives 0 and leaves
/// `hydroplot_last_error()` unchanged.
///
/// \par Ownership
/// Nothing is allocated.
///
/// \par Thread safety
/// Any thread: a batch is immutable.
///
/// \since 0.1
#[no_mangle]
pub extern "C" fn hydroplot_trace_batch_http_status(
    b: *const hydroplot_trace_batch,
    i: usize,
) -> i32 {
    boundary_or(0, || point_http_status(item(b, i)))
}

/// The trace of one point, borrowed from the batch: read it with the
/// `hydroplot_trace_*` accessors and draw it with `hydroplot_map_add_trace`.
///
/// \param b The batch, or NULL.
/// \param i The point's index, below `hydroplot_trace_batch_len`.
///
/// \return The trace; NULL when the point failed, when `b` is NULL or `i` is out of
/// range.
///
/// \par Errors
/// None: NULL or an out-of-range `i` gives NULL and leaves
/// `hydroplot_last_error()` unchanged.
///
/// \par Ownership
/// Owned by `b`, valid until `b` is freed, which frees it.
/// `hydroplot_trace_free` on it is a no-op.
///
/// \par Thread safety
/// Any thread: a batch is immutable.
///
/// \since 0.1
#[no_mangle]
pub extern "C" fn hydroplot_trace_batch_get(
    b: *const hydroplot_trace_batch,
    i: usize,
) -> *const hydroplot_trace {
    boundary_or(std::ptr::null(), || match item(b, i) {
        Some(Ok(t)) => (t as *const FfiTrace).cast(),
        _ => std::ptr::null(),
    })
}

/// Frees a batch and every trace and string borrowed from it.
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
/// Not while another thread reads `b` or a trace borrowed from it.
///
/// \since 0.1
#[no_mangle]
pub extern "C" fn hydroplot_trace_batch_free(b: *mut hydroplot_trace_batch) {
    boundary_or((), || drop(unsafe { take_handle(b) }))
}
