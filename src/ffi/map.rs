//! `hydroplot_map`: a drawn map (EPSG:3857) that more layers can be added to.

// These functions are called from C, where `unsafe` means nothing; every
// pointer goes through the NULL-checking `arg_*` helpers instead.

use super::context::hydroplot_context;
use super::trace::hydroplot_trace;
use super::{
    arg_mut, arg_opt_str, arg_ref, arg_slice, arg_str, boundary, boundary_or, buffer, check_out,
    hydroplot_status, take_handle, write_out, FfiResult, Opaque,
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

/// Creates a map of a box, fitted with margins into `width_px` x `height_px`
/// pixels, over a basemap. The context's `tile_url` overrides the provider's
/// tiles; tiles are cached in its `tile_cache_dir` unless its `tile_cache`
/// option is `off`. Tiles that cannot be fetched are left blank and reported
/// to the log callback as warnings; they never fail the call.
///
/// \param ctx       The context; only read.
/// \param xmin      The west edge of the box.
/// \param ymin      The south edge.
/// \param xmax      The east edge, >= `xmin` (equal edges: a map of at
///                  least a kilometre around them).
/// \param ymax      The north edge, >= `ymin`.
/// \param crs       The CRS of the box, or NULL for `"EPSG:4326"`.
/// \param width_px  The width in pixels, up to 16384; 0 (either side): 1024 x 768.
/// \param height_px The height in pixels, up to 16384; 0 (either side): 1024 x 768.
/// \param basemap   A provider (`"Esri.NatGeoWorldMap"`, `"OpenStreetMap"`,
///           `"CartoDB.Positron"`, `"Esri.WorldImagery"`,
///           `"Esri.WorldTopoMap"`), `"none"`, or NULL for
///           `Esri.NatGeoWorldMap`.
/// \param out       Receives the new map on success; not written on failure.
///
/// \return `HYDROPLOT_OK`, or an error status below.
///
/// \par Errors
/// - `HYDROPLOT_ERR_NULL_ARGUMENT`: `ctx` or `out` is NULL.
/// - `HYDROPLOT_ERR_INVALID_ARGUMENT`: an unknown basemap, an inverted or
///   non-finite box, a side over 16384 pixels, or a string that is not
///   UTF-8.
/// - `HYDROPLOT_ERR_CRS`: `crs` is unknown or the box cannot be transformed.
/// - `HYDROPLOT_ERR_RENDER`: the image cannot be made.
///
/// \par Ownership
/// On success the caller owns `*out`; free it once with `hydroplot_map_free`.
/// The map keeps no reference to `ctx`.
///
/// \par Thread safety
/// `ctx` may be shared with other threads; the new map is the caller's.
///
/// \since 0.1
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
        let ctx = &unsafe { arg_ref(ctx, "ctx") }?.core.for_call();
        check_out(out, "out")?;
        let (crs, basemap, size) = unsafe {
            canvas(
                crs,
                basemap,
                // Documented since 0.1: either side 0 gives the default.
                match (width_px, height_px) {
                    (0, _) | (_, 0) => (0, 0),
                    size => size,
                },
                crate::render::view::DEFAULT_SIZE,
            )
        }?;
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

/// Draws GeoJSON (a geometry, a Feature or a FeatureCollection), projecting
/// it: lines and polygon borders in `col`, polygons filled with `fill`,
/// points as R's `pch = 19`. Colours as R writes them: names (`"grey40"`),
/// `"#RRGGBB"`, `"#RRGGBBAA"`, `"NA"` for none.
///
/// \param map     The map.
/// \param geojson `len` bytes of UTF-8 GeoJSON (no NUL needed).
/// \param len     The number of bytes at `geojson`.
/// \param crs     The CRS of the coordinates, or NULL for `"EPSG:4326"`.
/// \param col     The line colour, or NULL for black.
/// \param fill    The fill colour, or NULL for none.
/// \param lwd     The line width in R's units (1 = one pixel), finite and >= 0.
///
/// \return `HYDROPLOT_OK`, or an error status below. The map is unchanged by an invalid
/// argument; on `HYDROPLOT_ERR_CRS` the features before the one that failed
/// stay drawn.
///
/// \par Errors
/// - `HYDROPLOT_ERR_NULL_ARGUMENT`: `map` is NULL, or `geojson` is NULL and
///   `len` > 0.
/// - `HYDROPLOT_ERR_INVALID_ARGUMENT`: unreadable GeoJSON (or none), a bad
///   colour or `lwd`, or a string that is not UTF-8.
/// - `HYDROPLOT_ERR_CRS`: `crs` is unknown or a coordinate cannot be
///   transformed.
///
/// \par Ownership
/// `geojson` and the strings are only read; the caller keeps them.
///
/// \par Thread safety
/// One thread at a time per map.
///
/// \since 0.1
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

/// Draws R plotting symbol `pch` at a point.
///
/// \param map The map.
/// \param x   The x coordinate.
/// \param y   The y coordinate.
/// \param crs The CRS of `x` and `y`, or NULL for `"EPSG:4326"`.
/// \param pch The R symbol, 0 to 25.
/// \param col The colour, as R writes it.
/// \param cex The size, times R's default symbol size, finite and >= 0.
///
/// \return `HYDROPLOT_OK`, or an error status below.
///
/// \par Errors
/// - `HYDROPLOT_ERR_NULL_ARGUMENT`: `map` or `col` is NULL.
/// - `HYDROPLOT_ERR_INVALID_ARGUMENT`: `pch` outside 0..25, a bad colour or
///   `cex`, or a string that is not UTF-8.
/// - `HYDROPLOT_ERR_CRS`: `crs` is unknown or the point cannot be
///   transformed.
///
/// \par Ownership
/// The strings are only read; the caller keeps them.
///
/// \par Thread safety
/// One thread at a time per map.
///
/// \since 0.1
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
/// raindrop's path in `trace_col`.
///
/// \param map          The map.
/// \param t            The trace (owned, or borrowed from a batch).
/// \param flowline_col The colour of the flowline portion.
/// \param trace_col    The colour of the raindrop's path.
/// \param lwd          The line width in R's units, finite and >= 0.
///
/// \return `HYDROPLOT_OK`, or an error status below.
///
/// \par Errors
/// - `HYDROPLOT_ERR_NULL_ARGUMENT`: `map`, `t`, `flowline_col` or `trace_col`
///   is NULL.
/// - `HYDROPLOT_ERR_INVALID_ARGUMENT`: a bad colour or `lwd`, or a string that
///   is not UTF-8.
///
/// \par Ownership
/// `t` and the strings are only read and stay the caller's.
///
/// \par Thread safety
/// One thread at a time per map. `t` may be read by other threads meanwhile.
///
/// \since 0.1
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

/// Creates the interface spec's trace map of a trace: the trace's bounding
/// box enlarged by 0.005 degrees on each side, the traced point as R's
/// `pch = 19` in black, the flowline portion in red and the raindrop's path
/// in black, `lwd` 2, over a basemap. Tiles come and are cached as for
/// `hydroplot_map_new`; tiles that cannot be fetched are left blank and
/// reported to the log callback.
///
/// \param ctx       The context (services, tile cache, log callback).
/// \param t         The trace to draw.
/// \param x         The traced point's x (longitude in EPSG:4326).
/// \param y         The traced point's y (latitude in EPSG:4326).
/// \param crs       The point's CRS, `"EPSG:<code>"`; NULL: `"EPSG:4326"`.
/// \param width_px  Width in pixels (16..16384; 0 with `height_px` 0: 800).
/// \param height_px Height in pixels (16..16384; 0 with `width_px` 0: 800).
/// \param basemap   A provider name as for `hydroplot_map_new`, or `"none"`;
///                  NULL: the default provider.
/// \param out       Receives the new map on success; not written on failure.
///
/// \return `HYDROPLOT_OK`, or an error status below.
///
/// \par Errors
/// - `HYDROPLOT_ERR_NULL_ARGUMENT`: `ctx`, `t` or `out` is NULL.
/// - `HYDROPLOT_ERR_INVALID_ARGUMENT`: an unknown basemap, a side outside
///   16..16384 pixels, a string that is not UTF-8.
/// - `HYDROPLOT_ERR_CRS`: an unknown CRS, or a point it cannot transform.
/// - `HYDROPLOT_ERR_RENDER`: drawing failed.
///
/// \par Ownership
/// `t` and the strings are only read and stay the caller's. On success
/// `*out` owns the new map (free with `hydroplot_map_free`), to which more
/// layers can be added.
///
/// \par Thread safety
/// Any thread; `ctx` and `t` may be shared with other threads meanwhile.
///
/// \since 0.2
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
        let ctx = &unsafe { arg_ref(ctx, "ctx") }?.core.for_call();
        let trace = &unsafe { arg_ref(t, "t") }?.core;
        check_out(out, "out")?;
        let (crs, basemap, size) = unsafe {
            canvas(
                crs,
                basemap,
                (width_px, height_px),
                crate::trace::map::DEFAULT_SIZE,
            )
        }?;
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

/// Encodes the map, with north arrow, scale bar and attribution, as an 8-bit
/// RGBA PNG. The map is unchanged and can take more layers.
///
/// \param map The map; only read.
/// \param out Receives the PNG bytes on success; not written on failure.
///
/// \return `HYDROPLOT_OK`, or an error status below.
///
/// \par Errors
/// - `HYDROPLOT_ERR_NULL_ARGUMENT`: `map` or `out` is NULL.
/// - `HYDROPLOT_ERR_RENDER`: encoding failed.
///
/// \par Ownership
/// On success the caller owns `*out`; free it once with
/// `hydroplot_buffer_free`.
///
/// \par Thread safety
/// One thread at a time per map.
///
/// \since 0.1
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

/// Writes the map as a PNG file, replacing it atomically: the bytes go to a
/// temporary file in the same directory, renamed over `path`, so readers
/// never see a partial file.
///
/// \param map  The map; only read.
/// \param path The file's path (UTF-8).
///
/// \return `HYDROPLOT_OK`, or an error status below.
///
/// \par Errors
/// - `HYDROPLOT_ERR_NULL_ARGUMENT`: `map` or `path` is NULL.
/// - `HYDROPLOT_ERR_INVALID_ARGUMENT`: `path` is not UTF-8, or ends in
///   another image or document format's extension (`.jpg`, `.pdf`, ...):
///   the map is a PNG only. Nothing is written.
/// - `HYDROPLOT_ERR_IO`: the file cannot be written (the message names it).
/// - `HYDROPLOT_ERR_RENDER`: encoding failed.
///
/// \par Ownership
/// `path` is only read; the caller keeps it. The file is the caller's.
///
/// \par Thread safety
/// One thread at a time per map.
///
/// \since 0.1
#[no_mangle]
pub extern "C" fn hydroplot_map_write_png(
    map: *const hydroplot_map,
    path: *const c_char,
) -> hydroplot_status {
    boundary(|| {
        let map = unsafe { arg_ref(map, "map") }?;
        let path = Path::new(unsafe { arg_str(path, "path") }?);
        crate::render::check_png_name(path)?;
        Ok(crate::output::write_atomically(path, &map.png()?)?)
    })
}

/// The map's extent in Web Mercator (EPSG:3857) metres: the outer edges of
/// the PNG's corner pixels, which are square (metres per pixel
/// `(xmax - xmin) / width = (ymax - ymin) / height`, in the PNG's real
/// pixels). A GIS places the PNG with it; `hydroplot_map_write_world_file`
/// writes it in GDAL's form.
///
/// \param map    The map; only read.
/// \param bounds Receives xmin, ymin, xmax, ymax: room for 4 doubles; not
///               written on failure.
///
/// \return `HYDROPLOT_OK`, or an error status below.
///
/// \par Errors
/// - `HYDROPLOT_ERR_NULL_ARGUMENT`: `map` or `bounds` is NULL.
///
/// \par Ownership
/// Nothing is allocated; the 4 doubles are the caller's.
///
/// \par Thread safety
/// One thread at a time per map.
///
/// \since 0.3
#[no_mangle]
pub extern "C" fn hydroplot_map_bounds(
    map: *const hydroplot_map,
    bounds: *mut f64,
) -> hydroplot_status {
    boundary(|| {
        let map = unsafe { arg_ref(map, "map") }?;
        check_out(bounds, "bounds")?;
        let out = unsafe { std::slice::from_raw_parts_mut(bounds, 4) };
        out.copy_from_slice(&map.bounds());
        Ok(())
    })
}

/// Georeferences the map's PNG at `png_path` (written before or after, e.g.
/// by `hydroplot_map_write_png`): writes its world file beside it (GDAL's
/// convention: `map.png` -> `map.pgw`, the centre of the top-left pixel and
/// the pixel size in EPSG:3857 metres) and `<png_path>.aux.xml` naming the
/// CRS, EPSG:3857, so GDAL and QGIS open the PNG in place. Each file is
/// written atomically (a temporary sibling renamed), replacing an earlier one.
///
/// \param map      The map; only read.
/// \param png_path The PNG's path (UTF-8); it need not exist yet.
///
/// \return `HYDROPLOT_OK`, or an error status below.
///
/// \par Errors
/// - `HYDROPLOT_ERR_NULL_ARGUMENT`: `map` or `png_path` is NULL.
/// - `HYDROPLOT_ERR_INVALID_ARGUMENT`: `png_path` is not UTF-8, or its world
///   file would be the image itself (an extension such as `.www`).
/// - `HYDROPLOT_ERR_IO`: a file cannot be written (the message names it).
///
/// \par Ownership
/// `png_path` is only read; the caller keeps it. The files are the caller's.
///
/// \par Thread safety
/// One thread at a time per map.
///
/// \since 0.3
#[no_mangle]
pub extern "C" fn hydroplot_map_write_world_file(
    map: *const hydroplot_map,
    png_path: *const c_char,
) -> hydroplot_status {
    boundary(|| {
        let map = unsafe { arg_ref(map, "map") }?;
        let png = Path::new(unsafe { arg_str(png_path, "png_path") }?);
        map.write_georeference(png)?;
        Ok(())
    })
}

/// Frees a map.
///
/// \param map The map, or NULL (a no-op).
///
/// \par Errors
/// None.
///
/// \par Ownership
/// `map` is invalid afterwards. Never free a map twice, nor a map still held
/// by plot data (free that with `hydroplot_plot_data_free`, or take it first
/// with `hydroplot_plot_data_take_map`).
///
/// \par Thread safety
/// Not while another thread uses `map`.
///
/// \since 0.1
#[no_mangle]
pub extern "C" fn hydroplot_map_free(map: *mut hydroplot_map) {
    boundary_or((), || drop(unsafe { take_handle(map) }))
}

/// A new map's CRS (NULL: EPSG:4326), basemap (NULL: the default provider)
/// and size (`(0, 0)`: `default_size`; one side 0 is left for the size
/// check to refuse), read from the C arguments.
///
/// # Safety
/// `crs` and `basemap` are NULL or NUL-terminated strings.
unsafe fn canvas<'a>(
    crs: *const c_char,
    basemap: *const c_char,
    size: (u32, u32),
    default_size: (u32, u32),
) -> FfiResult<(&'a str, &'a str, (u32, u32))> {
    let crs = unsafe { arg_opt_str(crs, "crs") }?.unwrap_or(crate::crs::DEFAULT_CRS);
    let basemap = unsafe { arg_opt_str(basemap, "basemap") }?.unwrap_or(tiles::DEFAULT_PROVIDER);
    let size = if size == (0, 0) { default_size } else { size };
    Ok((crs, basemap, size))
}
