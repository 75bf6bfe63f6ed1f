//! `hydroplot_map`: a drawn map (EPSG:3857) that more layers can be added to.

// These functions are called from C, where `unsafe` means nothing; every
// pointer goes through the NULL-checking `arg_*` helpers instead.

use super::context::hydroplot_context;
use super::trace::hydroplot_trace;
use super::{
    arg_mut, arg_opt_str, arg_ref, arg_slice, arg_str, boundary, boundary_or, buffer, check_out,
    hydroplot_status, take_handle, write_out, Opaque,
};
use crate::render::{tiles, Map, TileCacheMode};
use crate::trace::map::{trace_map, TraceMapSpec};
use std::ffi::c_char;
use std::path::Path;

/// A map in Web Mercator (EPSG:3857) with a basemap, to which layers are
/// added in call order; the north arrow, scale bar and attribution are drawn
/// on top when the PNG is made. Created by `hydroplot_map_new` or taken from
/// plot data with `hydroplot_plot_data_take_map`; freed once with
/// `hydroplot_map_free`. Not thread-safe: a map may move between threads but
/// must be used by one thread at a time.
pub struct hydroplot_map {
    _private: [u8; 0],
}

impl Opaque for hydroplot_map {
    type Rust = Map;
}

/// Creates a map of the box `xmin, ymin, xmax, ymax` in `crs` (NULL:
/// `"EPSG:4326"`), fitted with margins into `width_px` x `height_px` pixels
/// (either 0: 1024 x 768), over the basemap `basemap`: a provider name
/// (`"Esri.NatGeoWorldMap"`, `"OpenStreetMap"`, `"CartoDB.Positron"`,
/// `"Esri.WorldImagery"`, `"Esri.WorldTopoMap"`; NULL: the default
/// `Esri.NatGeoWorldMap`) or `"none"`. The context's `tile_url` overrides the
/// provider's tiles; tiles are cached in its `tile_cache_dir` unless its
/// `tile_cache` option is `off`.
///
/// Tiles that cannot be fetched are left blank and reported to the log
/// callback as warnings; they never fail the call. On success `*out` owns
/// the new map (free with `hydroplot_map_free`); on failure `*out` is not
/// written. `ctx` is only read, and may be shared with other threads.
///
/// Errors: `HYDROPLOT_ERR_NULL_ARGUMENT` (`ctx`, `out`),
/// `HYDROPLOT_ERR_INVALID_ARGUMENT` (unknown basemap, empty or inverted box,
/// a size over 16384 pixels), `HYDROPLOT_ERR_CRS`, `HYDROPLOT_ERR_RENDER`.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "C" fn hydroplot_map_new(
    ctx: *const hydroplot_context,
    xmin: f64,
    ymin: f64,
    xmax: f64,
    ymax: f64,
    crs: *const c_char,
    width_px: u32,
    height_px: u32,
    basemap: *const c_char,
    out: *mut *mut hydroplot_map,
) -> hydroplot_status {
    boundary(|| {
        let ctx = &unsafe { arg_ref(ctx, "ctx") }?.core;
        check_out(out, "out")?;
        let crs = unsafe { arg_opt_str(crs, "crs") }?.unwrap_or(crate::crs::DEFAULT_CRS);
        let basemap =
            unsafe { arg_opt_str(basemap, "basemap") }?.unwrap_or(tiles::DEFAULT_PROVIDER);
        let size = if width_px == 0 || height_px == 0 {
            crate::render::view::DEFAULT_SIZE
        } else {
            (width_px, height_px)
        };
        let cache = TileCacheMode::of(&ctx.config);
        // Warnings already went to the log callback; there is no result to keep them on.
        let mut warnings = Vec::new();
        let map = Map::new(
            ctx,
            [xmin, ymin, xmax, ymax],
            crs,
            size,
            basemap,
            None,
            &cache,
            &mut warnings,
        )?;
        unsafe { write_out(out, hydroplot_map::into_handle(map), "out") }
    })
}

/// Draws GeoJSON (a geometry, a Feature or a FeatureCollection; `len` bytes
/// at `geojson`, UTF-8, no NUL needed) given in `crs` (NULL: `"EPSG:4326"`):
/// the library projects it. Lines and polygon borders in `col` (NULL:
/// black), polygons filled with `fill` (NULL: not filled), points as R's
/// `pch = 19`; `lwd` in R line widths (1 = one pixel). Colours as R writes
/// them: names (`"grey40"`), `"#RRGGBB"`, `"#RRGGBBAA"`, `"NA"` for none.
///
/// Errors: `HYDROPLOT_ERR_NULL_ARGUMENT`, `HYDROPLOT_ERR_INVALID_ARGUMENT`
/// (unreadable GeoJSON, bad colour or `lwd`), `HYDROPLOT_ERR_CRS`; the map is
/// unchanged by an invalid argument.
#[no_mangle]
pub extern "C" fn hydroplot_map_add_geojson(
    map: *mut hydroplot_map,
    geojson: *const c_char,
    len: usize,
    crs: *const c_char,
    col: *const c_char,
    fill: *const c_char,
    lwd: f64,
) -> hydroplot_status {
    boundary(|| {
        let map = unsafe { arg_mut(map, "map") }?;
        let bytes = unsafe { arg_slice(geojson.cast::<u8>(), len, "geojson") }?;
        let crs = unsafe { arg_opt_str(crs, "crs") }?.unwrap_or(crate::crs::DEFAULT_CRS);
        let col = unsafe { arg_opt_str(col, "col") }?;
        let fill = unsafe { arg_opt_str(fill, "fill") }?;
        Ok(map.add_geojson(bytes, crs, col, fill, lwd)?)
    })
}

/// Draws R plotting symbol `pch` (0-25) in colour `col` at (`x`, `y`) in
/// `crs` (NULL: `"EPSG:4326"`), `cex` times R's default symbol size.
///
/// Errors: `HYDROPLOT_ERR_NULL_ARGUMENT` (`map`, `col`),
/// `HYDROPLOT_ERR_INVALID_ARGUMENT` (`pch` outside 0-25, bad colour or
/// `cex`), `HYDROPLOT_ERR_CRS`.
#[no_mangle]
pub extern "C" fn hydroplot_map_add_point(
    map: *mut hydroplot_map,
    x: f64,
    y: f64,
    crs: *const c_char,
    pch: i32,
    col: *const c_char,
    cex: f64,
) -> hydroplot_status {
    boundary(|| {
        let map = unsafe { arg_mut(map, "map") }?;
        let crs = unsafe { arg_opt_str(crs, "crs") }?.unwrap_or(crate::crs::DEFAULT_CRS);
        let col = unsafe { arg_str(col, "col") }?;
        Ok(map.add_point(x, y, crs, pch, col, cex)?)
    })
}

/// Draws a raindrop trace: its flowline portion in `flowline_col` and the
/// raindrop's path in `trace_col`, `lwd` wide. `t` is only read and stays
/// owned by the caller.
///
/// Errors: `HYDROPLOT_ERR_NULL_ARGUMENT`, `HYDROPLOT_ERR_INVALID_ARGUMENT`
/// (bad colour or `lwd`).
#[no_mangle]
pub extern "C" fn hydroplot_map_add_trace(
    map: *mut hydroplot_map,
    t: *const hydroplot_trace,
    flowline_col: *const c_char,
    trace_col: *const c_char,
    lwd: f64,
) -> hydroplot_status {
    boundary(|| {
        let map = unsafe { arg_mut(map, "map") }?;
        let trace = &unsafe { arg_ref(t, "t") }?.core;
        let flowline_col = unsafe { arg_str(flowline_col, "flowline_col") }?;
        let trace_col = unsafe { arg_str(trace_col, "trace_col") }?;
        Ok(trace.draw(map, flowline_col, trace_col, lwd)?)
    })
}

/// Creates the interface spec's trace map of `t`: the trace's bounding box
/// enlarged by 0.005 degrees on each side, fitted into `width_px` x
/// `height_px` pixels (either 0: 800 x 800) over the basemap `basemap` (as
/// for `hydroplot_map_new`; NULL: the default), the traced point (`x`, `y`
/// in `crs`, NULL: `"EPSG:4326"`) as R's `pch = 19` in black, the flowline
/// portion in red and the raindrop's path in black, `lwd` 2. Tiles come and
/// are cached as for `hydroplot_map_new`; tiles that cannot be fetched are
/// left blank and reported to the log callback. `t` is only read and stays
/// owned by the caller. On success `*out` owns the new map (free with
/// `hydroplot_map_free`), to which more layers can be added; on failure
/// `*out` is not written.
///
/// Errors: `HYDROPLOT_ERR_NULL_ARGUMENT` (`ctx`, `t`, `out`),
/// `HYDROPLOT_ERR_INVALID_ARGUMENT` (unknown basemap, a side outside
/// 16-16384 pixels), `HYDROPLOT_ERR_CRS`, `HYDROPLOT_ERR_RENDER`.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "C" fn hydroplot_trace_map(
    ctx: *const hydroplot_context,
    t: *const hydroplot_trace,
    x: f64,
    y: f64,
    crs: *const c_char,
    width_px: u32,
    height_px: u32,
    basemap: *const c_char,
    out: *mut *mut hydroplot_map,
) -> hydroplot_status {
    boundary(|| {
        let ctx = &unsafe { arg_ref(ctx, "ctx") }?.core;
        let trace = &unsafe { arg_ref(t, "t") }?.core;
        check_out(out, "out")?;
        let crs = unsafe { arg_opt_str(crs, "crs") }?.unwrap_or(crate::crs::DEFAULT_CRS);
        let basemap =
            unsafe { arg_opt_str(basemap, "basemap") }?.unwrap_or(tiles::DEFAULT_PROVIDER);
        let size = if width_px == 0 || height_px == 0 {
            crate::trace::map::DEFAULT_SIZE
        } else {
            (width_px, height_px)
        };
        let spec = TraceMapSpec {
            point: [x, y],
            crs,
            size,
            basemap,
        };
        let cache = TileCacheMode::of(&ctx.config);
        // Warnings already went to the log callback; there is no result to keep them on.
        let map = trace_map(ctx, trace, &spec, &cache, &mut Vec::new())?;
        unsafe { write_out(out, hydroplot_map::into_handle(map), "out") }
    })
}

/// Encodes the map, with north arrow, scale bar and attribution, as PNG
/// (8-bit RGBA). On success `*out` owns a new buffer (free with
/// `hydroplot_buffer_free`); the map is unchanged and can take more layers.
#[no_mangle]
pub extern "C" fn hydroplot_map_png(
    map: *const hydroplot_map,
    out: *mut *mut buffer::hydroplot_buffer,
) -> hydroplot_status {
    boundary(|| {
        let map = unsafe { arg_ref(map, "map") }?;
        check_out(out, "out")?;
        buffer::give(map.png()?, out)
    })
}

/// Writes the map as a PNG file at `path` (UTF-8), replacing it atomically:
/// the bytes go to a temporary file in the same directory, renamed over
/// `path`, so readers never see a partial file.
///
/// Errors: `HYDROPLOT_ERR_NULL_ARGUMENT`, `HYDROPLOT_ERR_IO` naming the path,
/// `HYDROPLOT_ERR_RENDER`.
#[no_mangle]
pub extern "C" fn hydroplot_map_write_png(
    map: *const hydroplot_map,
    path: *const c_char,
) -> hydroplot_status {
    boundary(|| {
        let map = unsafe { arg_ref(map, "map") }?;
        let path = Path::new(unsafe { arg_str(path, "path") }?);
        Ok(crate::output::write_atomically(path, &map.png()?)?)
    })
}

/// Frees a map. NULL is a no-op. Never free a map twice, nor one taken from
/// plot data and still drawn on by another thread.
#[no_mangle]
pub extern "C" fn hydroplot_map_free(map: *mut hydroplot_map) {
    boundary_or((), || drop(unsafe { take_handle(map) }))
}
