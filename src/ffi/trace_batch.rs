//! `hydroplot_trace_batch`: the per-point results of
//! `hydroplot_raindrop_trace_batch`.

use super::context::hydroplot_context;
use super::status::of_error;
use super::trace::{hydroplot_trace, FfiTrace, Owner};
use super::{
    arg_opt_str, arg_ref, arg_slice, boundary, boundary_or, check_out, hydroplot_status,
    take_handle, write_out, Opaque,
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

/// Why one point failed, kept in C form.
pub(crate) struct PointError {
    status: hydroplot_status,
    http_status: i32,
    message: CString,
}

impl PointError {
    fn new(e: &Error) -> PointError {
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

/// Traces `n_points` points given as `xy = x0, y0, x1, y1, ...` in `crs`
/// (NULL: `"EPSG:4326"`), each as `hydroplot_raindrop_trace` would, with at
/// most the context's `concurrency` requests at once; progress is reported as
/// stage `"trace"`. A bad direction or unknown CRS fails the whole call before
/// any request; otherwise the call succeeds and each point has its own result
/// (a failing point does not fail the others): read them with
/// `hydroplot_trace_batch_status`, `_error` and `_get`. On success `*out` owns
/// the batch; free it with `hydroplot_trace_batch_free`.
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
        let len = n_points
            .checked_mul(2)
            .ok_or_else(|| Error::InvalidArgument(format!("n_points ({n_points}) is too large")))?;
        let xy = unsafe { arg_slice(xy, len, "xy") }?;
        let crs = unsafe { arg_opt_str(crs, "crs") }?;
        let direction = unsafe { arg_opt_str(direction, "direction") }?;
        let points: Vec<(f64, f64)> = xy.chunks_exact(2).map(|p| (p[0], p[1])).collect();
        let results = flowtrace::raindrop_trace_batch(&ctx.core, &points, crs, direction)?;
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

/// The number of points (results) in `b`; 0 when `b` is NULL.
#[no_mangle]
pub extern "C" fn hydroplot_trace_batch_len(b: *const hydroplot_trace_batch) -> usize {
    boundary_or(0, || unsafe { arg_ref(b, "b") }.map_or(0, Vec::len))
}

/// `HYDROPLOT_OK` when point `i` was traced, else the status its error maps
/// to (as `hydroplot_raindrop_trace` would return); `HYDROPLOT_ERR_NULL_ARGUMENT`
/// when `b` is NULL and `HYDROPLOT_ERR_INVALID_ARGUMENT` when `i` is out of
/// range. Does not change `hydroplot_last_error()`.
#[no_mangle]
pub extern "C" fn hydroplot_trace_batch_status(
    b: *const hydroplot_trace_batch,
    i: usize,
) -> hydroplot_status {
    use hydroplot_status::*;
    boundary_or(HYDROPLOT_ERR_INTERNAL, || {
        match unsafe { arg_ref(b, "b") } {
            Err(_) => HYDROPLOT_ERR_NULL_ARGUMENT,
            Ok(items) => match items.get(i) {
                None => HYDROPLOT_ERR_INVALID_ARGUMENT,
                Some(Ok(_)) => HYDROPLOT_OK,
                Some(Err(e)) => e.status,
            },
        }
    })
}

/// The error message of point `i`, owned by `b`; NULL when the point was
/// traced, when `b` is NULL or `i` is out of range.
#[no_mangle]
pub extern "C" fn hydroplot_trace_batch_error(
    b: *const hydroplot_trace_batch,
    i: usize,
) -> *const c_char {
    boundary_or(std::ptr::null(), || match item(b, i) {
        Some(Err(e)) => e.message.as_ptr(),
        _ => std::ptr::null(),
    })
}

/// The HTTP status behind the error of point `i` (e.g. 500 for a point outside
/// the service's domain); 0 when none, when the point was traced, when `b` is
/// NULL or `i` is out of range.
#[no_mangle]
pub extern "C" fn hydroplot_trace_batch_http_status(
    b: *const hydroplot_trace_batch,
    i: usize,
) -> i32 {
    boundary_or(0, || match item(b, i) {
        Some(Err(e)) => e.http_status,
        _ => 0,
    })
}

/// The trace of point `i`, borrowed from `b`: read it with the
/// `hydroplot_trace_*` accessors; valid until `b` is freed, which frees it
/// (`hydroplot_trace_free` on it is a no-op).
/// NULL when the point failed, when `b` is NULL or `i` is out of range.
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

/// Frees `b` and every trace and string borrowed from it. NULL is a no-op.
/// Never free twice.
#[no_mangle]
pub extern "C" fn hydroplot_trace_batch_free(b: *mut hydroplot_trace_batch) {
    boundary_or((), || drop(unsafe { take_handle(b) }))
}
