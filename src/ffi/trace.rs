//! `hydroplot_trace`: the result of `hydroplot_raindrop_trace`, read through
//! the `hydroplot_trace_*` accessors.

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

/// Traces a raindrop from (`x`, `y`) in `crs` (NULL: `"EPSG:4326"`, x =
/// longitude) with `direction` `"down"` (NULL), `"up"` or `"none"`.
/// A bad direction, a non-finite or out-of-range point gives
/// `HYDROPLOT_ERR_INVALID_ARGUMENT` and an unknown CRS `HYDROPLOT_ERR_CRS`,
/// both before any request; a point outside the service's domain gives
/// `HYDROPLOT_ERR_HTTP` with the service's description in
/// `hydroplot_last_error()`; an answer that is not a 2-feature trace gives
/// `HYDROPLOT_ERR_SERVICE`. On success `*out` owns the trace; free it with
/// `hydroplot_trace_free`.
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
        let trace = flowtrace::raindrop_trace(&ctx.core, x, y, crs, direction)?;
        unsafe {
            write_out(
                out,
                hydroplot_trace::into_handle(FfiTrace::new(trace, Owner::Caller)),
                "out",
            )
        }
    })
}

/// Frees `t` and everything read from it. NULL is a no-op. Never free twice.
/// A trace borrowed from a batch (`hydroplot_trace_batch_get`) belongs to the
/// batch: freeing it here is a no-op, and it lives until the batch is freed.
#[no_mangle]
pub extern "C" fn hydroplot_trace_free(t: *mut hydroplot_trace) {
    boundary_or((), || {
        let borrowed = unsafe { arg_ref(t, "t") }.is_ok_and(|t| t.owner == Owner::Batch);
        if !borrowed {
            drop(unsafe { take_handle(t) })
        }
    })
}

/// The number of features of `t` (2); 0 when `t` is NULL.
#[no_mangle]
pub extern "C" fn hydroplot_trace_len(t: *const hydroplot_trace) -> usize {
    boundary_or(0, || {
        unsafe { arg_ref(t, "t") }.map_or(0, |t| t.core.features.len())
    })
}

/// The id of feature `i` (`"upstreamFlowline"`, ..., `"raindropPath"`; empty
/// when the service gave none), owned by `t`; NULL when `t` is NULL or `i` is
/// out of range.
#[no_mangle]
pub extern "C" fn hydroplot_trace_id(t: *const hydroplot_trace, i: usize) -> *const c_char {
    boundary_or(std::ptr::null(), || {
        str_ptr(feature(t, i).map(|(_, s)| &s.id))
    })
}

/// The GNIS name of feature `i`, owned by `t`; NULL when missing (the
/// raindrop path, an unnamed flowline: the service's `"none"`), when `t` is
/// NULL or `i` is out of range.
#[no_mangle]
pub extern "C" fn hydroplot_trace_gnis_name(t: *const hydroplot_trace, i: usize) -> *const c_char {
    boundary_or(std::ptr::null(), || {
        str_ptr(feature(t, i).and_then(|(_, s)| s.gnis_name.as_ref()))
    })
}

/// The 14-digit reach code of feature `i`, owned by `t`; NULL when missing,
/// when `t` is NULL or `i` is out of range.
#[no_mangle]
pub extern "C" fn hydroplot_trace_reachcode(t: *const hydroplot_trace, i: usize) -> *const c_char {
    boundary_or(std::ptr::null(), || {
        str_ptr(feature(t, i).and_then(|(_, s)| s.reachcode.as_ref()))
    })
}

/// Writes the comid of feature `i` to `*out` and returns true; false (and
/// `*out` untouched) when missing, when `t` or `out` is NULL or `i` is out of range.
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

/// Writes the raindrop path length of feature `i` (metres) to `*out` and
/// returns true; false as for `hydroplot_trace_comid`.
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

/// Writes the measure of feature `i` (percent along the flowline) to `*out`
/// and returns true; false as for `hydroplot_trace_comid` (also when the
/// service sent `"null"`).
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

/// Writes where the raindrop meets the flowline, longitude then latitude, to
/// `out_lon_lat[0..2]` and returns 2; returns 0 (and writes nothing) when
/// feature `i` has none (the raindrop path), when `t` or `out_lon_lat` is NULL
/// or `i` is out of range.
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

/// The vertices of feature `i`, `x0, y0, x1, y1, ...` (longitude, latitude),
/// owned by `t` and valid until it is freed; `*n_points` (when not NULL)
/// receives the number of vertices. NULL and `*n_points` = 0 when `t` is NULL,
/// `i` is out of range or the line has no vertex.
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

/// Writes the bounding box of every vertex of `t`, `xmin, ymin, xmax, ymax`
/// (longitude/latitude), to `out[0..4]`.
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

/// `t` as a GeoJSON FeatureCollection (current field names:
/// `raindrop_pathDist`, `intersection_point` as `[lon, lat]`; missing values
/// left out). On success `*out` owns the bytes; free with `hydroplot_buffer_free`.
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
