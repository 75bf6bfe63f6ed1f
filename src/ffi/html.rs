//! Interactive HTML maps (Leaflet, self-contained) of plot data and traces.

// These functions are called from C, where `unsafe` means nothing; every
// pointer goes through the NULL-checking `arg_*` helpers instead.

use super::buffer::{give, hydroplot_buffer};
use super::context::hydroplot_context;
use super::plot_data::hydroplot_plot_data;
use super::trace::hydroplot_trace;
use super::{arg_opt_str, arg_ref, boundary, check_out, hydroplot_status};
use crate::html::{self, HtmlOptions, TraceStyle};
use std::ffi::c_char;

/// The plot data as one self-contained interactive HTML map: Leaflet
/// (embedded, BSD-2 licence kept), basin, catchments, network and
/// off-network waterbodies, flowlines and outlets as GeoJSON (6 decimals),
/// styled by the request's plot_config, with popups, a layer control, a scale
/// bar, the view fitted to the plot bbox, and the request's basemap (or the
/// context's `tile_url`) with its attribution. Works whether or not a PNG map
/// was drawn. The page loads nothing but tiles; with basemap `"none"` it
/// loads nothing at all. Pages above 5,000,000 bytes open slowly: leave the
/// catchments out with `hydroplot_plot_data_html_ex` (the Yahara sample page
/// is about 0.8 MB).
///
/// \param pd  The plot data.
/// \param out Receives the page (UTF-8) on success; not written on failure.
///
/// \return `HYDROPLOT_OK`, or an error status below.
///
/// \par Errors
/// - `HYDROPLOT_ERR_NULL_ARGUMENT`: `pd` or `out` is NULL.
/// - `HYDROPLOT_ERR_INVALID_ARGUMENT`: the request's basemap is not a known
///   provider.
/// - `HYDROPLOT_ERR_RENDER`: a symbol icon cannot be drawn.
///
/// \par Ownership
/// On success the caller owns `*out`; free it once with
/// `hydroplot_buffer_free`.
///
/// \par Thread safety
/// Any thread: plot data is immutable (but for
/// `hydroplot_plot_data_take_map`).
///
/// \since 0.1
#[no_mangle]
pub extern "C" fn hydroplot_plot_data_html(
    pd: *const hydroplot_plot_data,
    out: *mut *mut hydroplot_buffer,
) -> hydroplot_status {
    hydroplot_plot_data_html_ex(pd, true, out)
}

/// `hydroplot_plot_data_html` with or without the catchment layer, usually
/// the largest.
///
/// \param pd         The plot data.
/// \param catchments False for a smaller page without catchments.
/// \param out        Receives the page (UTF-8) on success; not written on failure.
///
/// \return `HYDROPLOT_OK`, or an error status below.
///
/// \par Errors
/// As `hydroplot_plot_data_html`.
///
/// \par Ownership
/// On success the caller owns `*out`; free it once with
/// `hydroplot_buffer_free`.
///
/// \par Thread safety
/// Any thread: plot data is immutable (but for
/// `hydroplot_plot_data_take_map`).
///
/// \since 0.1
#[no_mangle]
pub extern "C" fn hydroplot_plot_data_html_ex(
    pd: *const hydroplot_plot_data,
    catchments: bool,
    out: *mut *mut hydroplot_buffer,
) -> hydroplot_status {
    boundary(|| {
        let pd = unsafe { arg_ref(pd, "pd") }?;
        check_out(out, "out")?;
        let options = HtmlOptions { catchments };
        let page = html::plot_data_html(&pd.data, &pd.drawing, &options)?;
        give(page.html.into_bytes(), out)
    })
}

/// A raindrop trace as one self-contained interactive HTML map: the flowline
/// portion in red, the raindrop's path in black (both 2 wide; the colours
/// of the spec's trace map, as `hydroplot_trace_map` draws it), the traced
/// point as a black pch 19, with popups, a layer control and a scale bar.
/// Warnings go to the context's log callback.
///
/// \param ctx     The context; only read (its `tile_url`, when set, gives the tiles).
/// \param t       The trace (owned, or borrowed from a batch); only read.
/// \param basemap A provider name, `"none"` (no tiles), or NULL for the default
///         provider.
/// \param out     Receives the page (UTF-8) on success; not written on failure.
///
/// \return `HYDROPLOT_OK`, or an error status below.
///
/// \par Errors
/// - `HYDROPLOT_ERR_NULL_ARGUMENT`: `ctx`, `t` or `out` is NULL.
/// - `HYDROPLOT_ERR_INVALID_ARGUMENT`: an unknown basemap, or it is not UTF-8.
/// - `HYDROPLOT_ERR_RENDER`: a symbol icon cannot be drawn.
///
/// \par Ownership
/// On success the caller owns `*out`; free it once with
/// `hydroplot_buffer_free`. `ctx` and `t` stay the caller's.
///
/// \par Thread safety
/// Any thread; `ctx` and `t` may be shared. The log callback runs on the
/// calling thread.
///
/// \since 0.1
#[no_mangle]
pub extern "C" fn hydroplot_trace_html(
    ctx: *const hydroplot_context,
    t: *const hydroplot_trace,
    basemap: *const c_char,
    out: *mut *mut hydroplot_buffer,
) -> hydroplot_status {
    boundary(|| {
        let ctx = &unsafe { arg_ref(ctx, "ctx") }?.core.for_call();
        let trace = &unsafe { arg_ref(t, "t") }?.core;
        let basemap = unsafe { arg_opt_str(basemap, "basemap") }?
            .unwrap_or(crate::render::tiles::DEFAULT_PROVIDER);
        check_out(out, "out")?;
        let page = html::trace_html(
            trace,
            &TraceStyle::default(),
            basemap,
            ctx.config.tile_url.as_deref(),
        )?;
        for w in &page.warnings {
            ctx.warn(w.clone());
        }
        give(page.html.into_bytes(), out)
    })
}
