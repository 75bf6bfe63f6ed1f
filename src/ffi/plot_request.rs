//! `hydroplot_plot_request`: the parameters of plot_hydro, and `hydroplot_plot`.

use super::context::hydroplot_context;
use super::map::hydroplot_map;
use super::plot_data::{hydroplot_plot_data, FfiPlotData};
use super::{
    arg_mut, arg_opt_str, arg_ref, arg_slice, arg_str, boundary, boundary_or, check_out,
    take_handle, write_out,
};
use super::{hydroplot_status, FfiResult, Opaque};
use crate::plot::{CacheSetting, PlotRequest};
use std::ffi::c_char;
use std::path::Path;

/// The parameters of one plot_hydro call. Create with
/// `hydroplot_plot_request_new`, set what you need, pass to `hydroplot_plot`
/// (any number of times), free once with `hydroplot_plot_request_free`.
/// A request is used by one thread at a time while being set; once set it
/// may be read by many `hydroplot_plot` calls at once.
pub struct hydroplot_plot_request {
    _private: [u8; 0],
}

impl Opaque for hydroplot_plot_request {
    type Rust = PlotRequest;
}

/// A new plot request with the spec's defaults: no outlets, no bbox, basemap
/// `Esri.NatGeoWorldMap`, 1024 x 768 pixels, actually_plot and overwrite true,
/// automatic flowline_only, the context's caches.
///
/// \return The new request; NULL only after an internal error
/// (`hydroplot_last_error()` says why).
///
/// \par Errors
/// None but `HYDROPLOT_ERR_INTERNAL`, reported as a NULL return.
///
/// \par Ownership
/// The caller owns the request; free it once with `hydroplot_plot_request_free`.
///
/// \par Thread safety
/// Any thread.
///
/// \since 0.1
#[no_mangle]
pub extern "C" fn hydroplot_plot_request_new() -> *mut hydroplot_plot_request {
    boundary_or(std::ptr::null_mut(), || {
        hydroplot_plot_request::into_handle(PlotRequest::default())
    })
}

/// Frees a plot request.
///
/// \param req The request, or NULL (a no-op).
///
/// \par Errors
/// None.
///
/// \par Ownership
/// `req` is invalid afterwards; plot data made with it stays valid. Never free
/// a request twice.
///
/// \par Thread safety
/// Not while a `hydroplot_plot` call reads `req`.
///
/// \since 0.1
#[no_mangle]
pub extern "C" fn hydroplot_plot_request_free(req: *mut hydroplot_plot_request) {
    boundary_or((), || drop(unsafe { take_handle(req) }))
}

/// Runs `change` on the request behind `req`.
fn with_request(
    req: *mut hydroplot_plot_request,
    change: impl FnOnce(&mut PlotRequest) -> FfiResult,
) -> hydroplot_status {
    boundary(|| change(unsafe { arg_mut(req, "req") }?))
}

/// Adds a comid outlet: the flowline and its upstream tributaries are
/// plotted (outlet form 2).
///
/// \param req The request.
/// \param comid The NHDPlus comid, > 0.
///
/// \return `HYDROPLOT_OK`, or an error status below; on failure the
/// request is unchanged.
///
/// \par Errors
/// - `HYDROPLOT_ERR_NULL_ARGUMENT`: `req` is NULL.
/// - `HYDROPLOT_ERR_INVALID_ARGUMENT`: `comid` is not positive.
///
/// \par Ownership
/// Nothing is allocated but the outlet, owned by `req`.
///
/// \par Thread safety
/// One thread at a time per request, and not while a `hydroplot_plot`
/// call reads it.
///
/// \since 0.1
#[no_mangle]
pub extern "C" fn hydroplot_plot_request_add_comid(
    req: *mut hydroplot_plot_request,
    comid: i64,
) -> hydroplot_status {
    with_request(req, |r| Ok(r.add_comid(comid)?))
}

/// Sets the integer comid set: exactly these flowlines, no upstream
/// expansion (outlet form 3). Replaces an earlier set.
///
/// \param req The request.
/// \param comids The comids, each > 0.
/// \param n      How many there are, > 0.
///
/// \return `HYDROPLOT_OK`, or an error status below; on failure the
/// request is unchanged.
///
/// \par Errors
/// - `HYDROPLOT_ERR_NULL_ARGUMENT`: `req` is NULL, or `comids` is NULL and `n` > 0.
/// - `HYDROPLOT_ERR_INVALID_ARGUMENT`: `n` is 0 or a comid is not positive.
/// - (`hydroplot_plot` gives `HYDROPLOT_ERR_LIMIT` for more than 100,000 comids.)
///
/// \par Ownership
/// `comids` is copied; the caller keeps it.
///
/// \par Thread safety
/// One thread at a time per request, and not while a `hydroplot_plot`
/// call reads it.
///
/// \since 0.1
#[no_mangle]
pub extern "C" fn hydroplot_plot_request_set_comid_set(
    req: *mut hydroplot_plot_request,
    comids: *const i64,
    n: usize,
) -> hydroplot_status {
    with_request(req, |r| {
        let comids = unsafe { arg_slice(comids, n, "comids") }?;
        Ok(r.set_comid_set(comids)?)
    })
}

/// Adds a gauge site outlet, `"05428500"` (the `USGS-` prefix is added) or
/// `"USGS-05428500"` (outlet form 4).
///
/// \param req The request.
/// \param site_id The site id; surrounding blanks are ignored.
///
/// \return `HYDROPLOT_OK`, or an error status below; on failure the
/// request is unchanged.
///
/// \par Errors
/// - `HYDROPLOT_ERR_NULL_ARGUMENT`: `req` or `site_id` is NULL.
/// - `HYDROPLOT_ERR_INVALID_ARGUMENT`: `site_id` is empty or not UTF-8.
///
/// \par Ownership
/// Strings are copied; the caller keeps them.
///
/// \par Thread safety
/// One thread at a time per request, and not while a `hydroplot_plot`
/// call reads it.
///
/// \since 0.1
#[no_mangle]
pub extern "C" fn hydroplot_plot_request_add_site(
    req: *mut hydroplot_plot_request,
    site_id: *const c_char,
) -> hydroplot_status {
    with_request(req, |r| {
        Ok(r.add_site(unsafe { arg_str(site_id, "site_id") }?)?)
    })
}

/// Adds a linked-data feature outlet (outlet form 5).
///
/// \param req The request.
/// \param source The index source: `comid`, `nwissite`/`gaugesite`, `huc12pp`,
///        `wqp` or another source of the index (case-insensitive).
/// \param id     The feature's id in that source.
///
/// \return `HYDROPLOT_OK`, or an error status below; on failure the
/// request is unchanged.
///
/// \par Errors
/// - `HYDROPLOT_ERR_NULL_ARGUMENT`: `req`, `source` or `id` is NULL.
/// - `HYDROPLOT_ERR_INVALID_ARGUMENT`: `source` or `id` is empty, holds a `/`
///   or is not UTF-8, or source `comid` has an id that is not an integer.
///
/// \par Ownership
/// Strings are copied; the caller keeps them.
///
/// \par Thread safety
/// One thread at a time per request, and not while a `hydroplot_plot`
/// call reads it.
///
/// \since 0.1
#[no_mangle]
pub extern "C" fn hydroplot_plot_request_add_feature(
    req: *mut hydroplot_plot_request,
    source: *const c_char,
    id: *const c_char,
) -> hydroplot_status {
    with_request(req, |r| {
        let source = unsafe { arg_str(source, "source") }?;
        let id = unsafe { arg_str(id, "id") }?;
        Ok(r.add_feature(source, id)?)
    })
}

/// Adds a point outlet: the catchment holding it and its upstream
/// tributaries are plotted (outlet form 6).
///
/// \param req The request.
/// \param x   The x coordinate (longitude in EPSG:4326).
/// \param y   The y coordinate (latitude in EPSG:4326).
/// \param crs The CRS of `x` and `y` (`"EPSG:4326"`, `"EPSG:3857"`, ...), or NULL
///     for `"EPSG:4326"`.
///
/// \return `HYDROPLOT_OK`, or an error status below; on failure the
/// request is unchanged.
///
/// \par Errors
/// - `HYDROPLOT_ERR_NULL_ARGUMENT`: `req` is NULL.
/// - `HYDROPLOT_ERR_CRS`: `crs` is unknown.
/// - `HYDROPLOT_ERR_INVALID_ARGUMENT`: `x` or `y` is not finite, or `crs` is
///   not UTF-8.
///
/// \par Ownership
/// Strings are copied; the caller keeps them.
///
/// \par Thread safety
/// One thread at a time per request, and not while a `hydroplot_plot`
/// call reads it.
///
/// \since 0.1
#[no_mangle]
pub extern "C" fn hydroplot_plot_request_add_point(
    req: *mut hydroplot_plot_request,
    x: f64,
    y: f64,
    crs: *const c_char,
) -> hydroplot_status {
    with_request(req, |r| {
        Ok(r.add_point(x, y, unsafe { arg_opt_str(crs, "crs") }?)?)
    })
}

/// Sets the bbox: everything in it is plotted. Replaces an earlier bbox.
///
/// \param req The request.
/// \param xmin The west edge.
/// \param ymin The south edge.
/// \param xmax The east edge, > `xmin`.
/// \param ymax The north edge, > `ymin`.
/// \param crs  The CRS of the box, or NULL for `"EPSG:4326"`.
///
/// \return `HYDROPLOT_OK`, or an error status below; on failure the
/// request is unchanged.
///
/// \par Errors
/// - `HYDROPLOT_ERR_NULL_ARGUMENT`: `req` is NULL.
/// - `HYDROPLOT_ERR_CRS`: `crs` is unknown.
/// - `HYDROPLOT_ERR_INVALID_ARGUMENT`: a value is not finite, `xmin >= xmax`
///   or `ymin >= ymax`, or `crs` is not UTF-8.
///
/// \par Ownership
/// `crs` is copied; the caller keeps it.
///
/// \par Thread safety
/// One thread at a time per request, and not while a `hydroplot_plot`
/// call reads it.
///
/// \since 0.1
#[no_mangle]
pub extern "C" fn hydroplot_plot_request_set_bbox(
    req: *mut hydroplot_plot_request,
    xmin: f64,
    ymin: f64,
    xmax: f64,
    ymax: f64,
    crs: *const c_char,
) -> hydroplot_status {
    with_request(req, |r| {
        let crs = unsafe { arg_opt_str(crs, "crs") }?;
        Ok(r.set_bbox([xmin, ymin, xmax, ymax], crs)?)
    })
}

/// Plots only streams of order >= `min_order`.
///
/// \param req The request.
/// \param min_order 1 to 12; or -1, automatic from the largest basin's area (the
///           reference's rule, which also turns on flowline_only unless it was
///           set).
///
/// \return `HYDROPLOT_OK`, or an error status below; on failure the
/// request is unchanged.
///
/// \par Errors
/// - `HYDROPLOT_ERR_NULL_ARGUMENT`: `req` is NULL.
/// - `HYDROPLOT_ERR_INVALID_ARGUMENT`: `min_order` is not 1..12 or -1.
///
/// \par Ownership
/// Nothing is allocated.
///
/// \par Thread safety
/// One thread at a time per request, and not while a `hydroplot_plot`
/// call reads it.
///
/// \since 0.1
#[no_mangle]
pub extern "C" fn hydroplot_plot_request_set_streamorder(
    req: *mut hydroplot_plot_request,
    min_order: i32,
) -> hydroplot_status {
    with_request(req, |r| Ok(r.set_streamorder(min_order)?))
}

/// Reads a local NHDPlus GeoPackage instead of downloading (`hydro_data`).
/// The file is opened by `hydroplot_plot`, which reports a missing file
/// (`HYDROPLOT_ERR_IO`) or a malformed one (`HYDROPLOT_ERR_GPKG`).
///
/// \param req The request.
/// \param gpkg_path The GeoPackage's path.
///
/// \return `HYDROPLOT_OK`, or an error status below; on failure the
/// request is unchanged.
///
/// \par Errors
/// - `HYDROPLOT_ERR_NULL_ARGUMENT`: `req` or `gpkg_path` is NULL.
/// - `HYDROPLOT_ERR_INVALID_ARGUMENT`: `gpkg_path` is empty or not UTF-8.
///
/// \par Ownership
/// Strings are copied; the caller keeps them.
///
/// \par Thread safety
/// One thread at a time per request, and not while a `hydroplot_plot`
/// call reads it.
///
/// \since 0.1
#[no_mangle]
pub extern "C" fn hydroplot_plot_request_set_hydro_data(
    req: *mut hydroplot_plot_request,
    gpkg_path: *const c_char,
) -> hydroplot_status {
    with_request(req, |r| {
        let path = unsafe { arg_str(gpkg_path, "gpkg_path") }?;
        Ok(r.set_hydro_data(Path::new(path))?)
    })
}

/// Writes the subset to a GeoPackage when plotted (`gpkg`).
///
/// \param req The request.
/// \param out_path The output's path, ending in `.gpkg` (any case).
///
/// \return `HYDROPLOT_OK`, or an error status below; on failure the
/// request is unchanged.
///
/// \par Errors
/// - `HYDROPLOT_ERR_NULL_ARGUMENT`: `req` or `out_path` is NULL.
/// - `HYDROPLOT_ERR_INVALID_ARGUMENT`: `out_path` does not end in `.gpkg` or
///   is not UTF-8.
///
/// \par Ownership
/// Strings are copied; the caller keeps them.
///
/// \par Thread safety
/// One thread at a time per request, and not while a `hydroplot_plot`
/// call reads it.
///
/// \since 0.1
#[no_mangle]
pub extern "C" fn hydroplot_plot_request_set_gpkg(
    req: *mut hydroplot_plot_request,
    out_path: *const c_char,
) -> hydroplot_status {
    with_request(req, |r| {
        Ok(r.set_gpkg(Path::new(unsafe { arg_str(out_path, "out_path") }?))?)
    })
}

/// Writes the drawn map as a PNG file (`file`): `hydroplot_plot` checks it
/// with the other files before anything is read or fetched (not the input,
/// the cache or the gpkg output, however spelled; its folder exists and takes
/// a file; not a directory; absent when overwrite is off) and writes it
/// atomically after drawing, whether onto a new map or onto the map given to
/// `hydroplot_plot`. Ignored when actually_plot is false.
///
/// \param req The request.
/// \param path The PNG file's path.
///
/// \return `HYDROPLOT_OK`, or an error status below; on failure the
/// request is unchanged.
///
/// \par Errors
/// - `HYDROPLOT_ERR_NULL_ARGUMENT`: `req` or `path` is NULL.
/// - `HYDROPLOT_ERR_INVALID_ARGUMENT`: `path` is empty, not UTF-8, or ends
///   in another image or document format's extension (`.jpg`, `.pdf`, ...):
///   the map is a PNG only.
/// - (`hydroplot_plot` reports a file that cannot be written as
///   `HYDROPLOT_ERR_IO`, one that exists with overwrite off as
///   `HYDROPLOT_ERR_EXISTS`, one naming another file of the request as
///   `HYDROPLOT_ERR_INVALID_ARGUMENT`.)
///
/// \par Ownership
/// Strings are copied; the caller keeps them. The file is the caller's.
///
/// \par Thread safety
/// One thread at a time per request, and not while a `hydroplot_plot`
/// call reads it.
///
/// \since 0.3
#[no_mangle]
pub extern "C" fn hydroplot_plot_request_set_png_file(
    req: *mut hydroplot_plot_request,
    path: *const c_char,
) -> hydroplot_status {
    with_request(req, |r| {
        Ok(r.set_png_file(Path::new(unsafe { arg_str(path, "path") }?))?)
    })
}

/// Whether to overwrite an existing gpkg or PNG output (default true). With
/// false and an existing file, `hydroplot_plot` fails with
/// `HYDROPLOT_ERR_EXISTS` before any work and leaves the file untouched.
///
/// \param req The request.
/// \param overwrite True to overwrite.
///
/// \return `HYDROPLOT_OK`, or an error status below; on failure the
/// request is unchanged.
///
/// \par Errors
/// - `HYDROPLOT_ERR_NULL_ARGUMENT`: `req` is NULL.
///
/// \par Ownership
/// Nothing is allocated.
///
/// \par Thread safety
/// One thread at a time per request, and not while a `hydroplot_plot`
/// call reads it.
///
/// \since 0.1
#[no_mangle]
pub extern "C" fn hydroplot_plot_request_set_overwrite(
    req: *mut hydroplot_plot_request,
    overwrite: bool,
) -> hydroplot_status {
    with_request(req, |r| {
        r.overwrite = overwrite;
        Ok(())
    })
}

/// Whether only flowlines are subset and plotted. Unset: automatic, false
/// unless the stream order is automatic (-1) and the basin is large.
///
/// \param req The request.
/// \param flowline_only True for flowlines only.
///
/// \return `HYDROPLOT_OK`, or an error status below; on failure the
/// request is unchanged.
///
/// \par Errors
/// - `HYDROPLOT_ERR_NULL_ARGUMENT`: `req` is NULL.
///
/// \par Ownership
/// Nothing is allocated.
///
/// \par Thread safety
/// One thread at a time per request, and not while a `hydroplot_plot`
/// call reads it.
///
/// \since 0.1
#[no_mangle]
pub extern "C" fn hydroplot_plot_request_set_flowline_only(
    req: *mut hydroplot_plot_request,
    flowline_only: bool,
) -> hydroplot_status {
    with_request(req, |r| {
        r.flowline_only = Some(flowline_only);
        Ok(())
    })
}

/// Overrides one style property (`plot_config`).
///
/// \param req The request.
/// \param element  `basin`, `flowline`, `network_wtbd`, `off_network_wtbd` or
///          `outlets.<source>`.
/// \param property `lwd`, `col`, `border`, `pch` or `cex`.
/// \param value    As R writes it: `"blue"`, `"#1f78b4"`, `"grey40"`, `"NA"`,
///          `"2.5"`, `"17"`.
///
/// \return `HYDROPLOT_OK`, or an error status below; on failure the
/// request is unchanged.
///
/// \par Errors
/// - `HYDROPLOT_ERR_NULL_ARGUMENT`: `req`, `element`, `property` or `value`
///   is NULL.
/// - `HYDROPLOT_ERR_INVALID_ARGUMENT`: an unknown element or property, a
///   value that does not fit the property, or a string that is not UTF-8;
///   the message names them.
///
/// \par Ownership
/// Strings are copied; the caller keeps them.
///
/// \par Thread safety
/// One thread at a time per request, and not while a `hydroplot_plot`
/// call reads it.
///
/// \since 0.1
#[no_mangle]
pub extern "C" fn hydroplot_plot_request_set_style(
    req: *mut hydroplot_plot_request,
    element: *const c_char,
    property: *const c_char,
    value: *const c_char,
) -> hydroplot_status {
    with_request(req, |r| {
        let element = unsafe { arg_str(element, "element") }?;
        let property = unsafe { arg_str(property, "property") }?;
        let value = unsafe { arg_str(value, "value") }?;
        Ok(r.styles.set(element, property, value)?)
    })
}

/// Sets the basemap.
///
/// \param req The request.
/// \param provider `Esri.NatGeoWorldMap`, `OpenStreetMap`, `CartoDB.Positron`,
///          `Esri.WorldImagery`, `Esri.WorldTopoMap`, or `"none"`.
///
/// \return `HYDROPLOT_OK`, or an error status below; on failure the
/// request is unchanged.
///
/// \par Errors
/// - `HYDROPLOT_ERR_NULL_ARGUMENT`: `req` or `provider` is NULL.
/// - `HYDROPLOT_ERR_INVALID_ARGUMENT`: an unknown provider (the message lists
///   them), or `provider` is not UTF-8.
///
/// \par Ownership
/// Strings are copied; the caller keeps them.
///
/// \par Thread safety
/// One thread at a time per request, and not while a `hydroplot_plot`
/// call reads it.
///
/// \since 0.1
#[no_mangle]
pub extern "C" fn hydroplot_plot_request_set_basemap(
    req: *mut hydroplot_plot_request,
    provider: *const c_char,
) -> hydroplot_status {
    with_request(req, |r| {
        let provider = unsafe { arg_str(provider, "provider") }?;
        Ok(r.set_basemap(provider)?)
    })
}

/// Sets the tile zoom level, overriding the automatic choice.
///
/// \param req The request.
/// \param zoom 0 to 22.
///
/// \return `HYDROPLOT_OK`, or an error status below; on failure the
/// request is unchanged.
///
/// \par Errors
/// - `HYDROPLOT_ERR_NULL_ARGUMENT`: `req` is NULL.
/// - `HYDROPLOT_ERR_INVALID_ARGUMENT`: `zoom` is outside 0..22.
///
/// \par Ownership
/// Nothing is allocated.
///
/// \par Thread safety
/// One thread at a time per request, and not while a `hydroplot_plot`
/// call reads it.
///
/// \since 0.1
#[no_mangle]
pub extern "C" fn hydroplot_plot_request_set_zoom(
    req: *mut hydroplot_plot_request,
    zoom: i32,
) -> hydroplot_status {
    with_request(req, |r| Ok(r.set_zoom(i64::from(zoom))?))
}

/// Sets the map size in pixels (default 1024 x 768).
///
/// \param req The request.
/// \param width_px  The width, 16 to 16384.
/// \param height_px The height, 16 to 16384.
///
/// \return `HYDROPLOT_OK`, or an error status below; on failure the
/// request is unchanged.
///
/// \par Errors
/// - `HYDROPLOT_ERR_NULL_ARGUMENT`: `req` is NULL.
/// - `HYDROPLOT_ERR_INVALID_ARGUMENT`: a side is outside 16..16384.
///
/// \par Ownership
/// Nothing is allocated.
///
/// \par Thread safety
/// One thread at a time per request, and not while a `hydroplot_plot`
/// call reads it.
///
/// \since 0.1
#[no_mangle]
pub extern "C" fn hydroplot_plot_request_set_size(
    req: *mut hydroplot_plot_request,
    width_px: u32,
    height_px: u32,
) -> hydroplot_status {
    with_request(req, |r| Ok(r.set_size(width_px, height_px)?))
}

/// Whether to draw (default true). With false nothing is drawn and no tile
/// is fetched; only the data is built.
///
/// \param req The request.
/// \param plot True to draw.
///
/// \return `HYDROPLOT_OK`, or an error status below; on failure the
/// request is unchanged.
///
/// \par Errors
/// - `HYDROPLOT_ERR_NULL_ARGUMENT`: `req` is NULL.
///
/// \par Ownership
/// Nothing is allocated.
///
/// \par Thread safety
/// One thread at a time per request, and not while a `hydroplot_plot`
/// call reads it.
///
/// \since 0.1
#[no_mangle]
pub extern "C" fn hydroplot_plot_request_set_actually_plot(
    req: *mut hydroplot_plot_request,
    plot: bool,
) -> hydroplot_status {
    with_request(req, |r| {
        r.actually_plot = plot;
        Ok(())
    })
}

/// Caches the plot data in the file at `path` (`cache_data = path`), created
/// when absent; entries are keyed by the request. The later of this and
/// `hydroplot_plot_request_disable_cache` wins.
///
/// \param req The request.
/// \param path The cache file's path.
///
/// \return `HYDROPLOT_OK`, or an error status below; on failure the
/// request is unchanged.
///
/// \par Errors
/// - `HYDROPLOT_ERR_NULL_ARGUMENT`: `req` or `path` is NULL.
/// - `HYDROPLOT_ERR_INVALID_ARGUMENT`: `path` is empty or not UTF-8.
/// - (`hydroplot_plot` reports an unusable file as `HYDROPLOT_ERR_IO`.)
///
/// \par Ownership
/// Strings are copied; the caller keeps them.
///
/// \par Thread safety
/// One thread at a time per request, and not while a `hydroplot_plot`
/// call reads it.
///
/// \since 0.1
#[no_mangle]
pub extern "C" fn hydroplot_plot_request_set_cache_file(
    req: *mut hydroplot_plot_request,
    path: *const c_char,
) -> hydroplot_status {
    with_request(req, |r| {
        Ok(r.set_cache_file(Path::new(unsafe { arg_str(path, "path") }?))?)
    })
}

/// `cache_data = FALSE`: no plot-data cache and no persistent tile cache for
/// this request. The later of this and `hydroplot_plot_request_set_cache_file`
/// wins.
///
/// \param req The request.
///
/// \return `HYDROPLOT_OK`, or an error status below; on failure the
/// request is unchanged.
///
/// \par Errors
/// - `HYDROPLOT_ERR_NULL_ARGUMENT`: `req` is NULL.
///
/// \par Ownership
/// Nothing is allocated.
///
/// \par Thread safety
/// One thread at a time per request, and not while a `hydroplot_plot`
/// call reads it.
///
/// \since 0.1
#[no_mangle]
pub extern "C" fn hydroplot_plot_request_disable_cache(
    req: *mut hydroplot_plot_request,
) -> hydroplot_status {
    with_request(req, |r| {
        r.cache = CacheSetting::Disabled;
        Ok(())
    })
}

/// Sets which properties the fabric service is asked for (`properties=` on
/// every items request, and part of the cache key).
///
/// \param req The request.
/// \param spec `"all"` (the default: every property), `"plot"` (only the
/// columns navigation, the waterbody split, styling, popups and the outputs'
/// keys read: a smaller download, the same map), or a comma list of network
/// flowline properties such as `"totdasqkm,slope"` (added to `plot` on the
/// network flowlines). Case and spaces around names are ignored.
///
/// \return `HYDROPLOT_OK`, or an error status below; on failure the
/// request is unchanged.
///
/// \par Errors
/// - `HYDROPLOT_ERR_NULL_ARGUMENT`: `req` or `spec` is NULL.
/// - `HYDROPLOT_ERR_INVALID_ARGUMENT`: `spec` is neither word nor a list of
///   network flowline properties (the message names the word refused), or
///   is not UTF-8. Nothing is requested.
///
/// \par Ownership
/// Strings are copied; the caller keeps them.
///
/// \par Thread safety
/// One thread at a time per request, and not while a `hydroplot_plot`
/// call reads it.
///
/// \since 0.3
#[no_mangle]
pub extern "C" fn hydroplot_plot_request_set_properties(
    req: *mut hydroplot_plot_request,
    spec: *const c_char,
) -> hydroplot_status {
    with_request(req, |r| {
        Ok(r.set_properties(unsafe { arg_str(spec, "spec") }?)?)
    })
}

/// Whether the map's level of detail is on (default true): a map whose
/// flowlines are too dense to read at its size is drawn by stream order,
/// widths growing with order, the main stem always, features smaller than a
/// pixel left out. Maps that are not dense (the samples at their usual
/// sizes) are drawn the same either way. The plot data (layers, GeoPackage,
/// GeoJSON) is never thinned. The HTML map made from the plot data follows
/// the setting per zoom level.
///
/// \param req The request.
/// \param on False to draw every feature at every scale (the maps before 0.3).
///
/// \return `HYDROPLOT_OK`, or an error status below; on failure the
/// request is unchanged.
///
/// \par Errors
/// - `HYDROPLOT_ERR_NULL_ARGUMENT`: `req` is NULL.
///
/// \par Ownership
/// Nothing is allocated.
///
/// \par Thread safety
/// One thread at a time per request, and not while a `hydroplot_plot`
/// call reads it.
///
/// \since 0.3
#[no_mangle]
pub extern "C" fn hydroplot_plot_request_set_lod(
    req: *mut hydroplot_plot_request,
    on: bool,
) -> hydroplot_status {
    with_request(req, |r| {
        r.lod = on;
        Ok(())
    })
}

/// Runs plot_hydro: finds the basins and networks of the request's outlets (or
/// everything in its bbox), from the services or the request's GeoPackage,
/// writes the gpkg output if asked, and draws the map unless actually_plot is
/// false.
///
/// \param ctx The context (services, network settings, caches, callbacks).
/// \param req The request.
/// \param map NULL to draw a new map, kept in the result (`add = FALSE`); or a
///        map to draw the layers onto, without fetching a basemap (`add = TRUE`).
/// \param out Receives the plot data on success; not written on failure.
///
/// \return `HYDROPLOT_OK`, or an error status below.
///
/// \par Errors
/// - `HYDROPLOT_ERR_NULL_ARGUMENT`: `ctx`, `req` or `out` is NULL.
/// - `HYDROPLOT_ERR_INVALID_ARGUMENT`: neither outlets nor bbox, both, or a comid
///   set with other outlets; a feature id the local data cannot read; two of
///   hydro_data, the cache file and the outputs naming one file.
/// - `HYDROPLOT_ERR_CRS`: a point or bbox cannot be transformed.
/// - `HYDROPLOT_ERR_NETWORK`: a service could not be reached, after retries.
/// - `HYDROPLOT_ERR_HTTP`: a service answered an error status, after retries
///   (`hydroplot_last_http_status()` has it).
/// - `HYDROPLOT_ERR_NOT_FOUND`: an outlet the index or the local data does not
///   know (404), a point outside the network, a comid set with no network
///   flowline.
/// - `HYDROPLOT_ERR_SERVICE`: a service answered something that is not the
///   expected document, or a value a layer's declared field cannot hold
///   (`5.5` for `streamorde`; `hydroplot_plot_data_layer_arrow` lists the
///   declared fields).
/// - `HYDROPLOT_ERR_IO`: the hydro_data file cannot be read, the gpkg or PNG
///   output or the cache file cannot be written (an output's missing or
///   read-only folder, or a directory in its place, is found before any
///   work; the message names the output).
/// - `HYDROPLOT_ERR_GPKG`: the hydro_data GeoPackage lacks a layer or column,
///   is malformed, or holds a value a layer's declared field cannot hold.
/// - `HYDROPLOT_ERR_EXISTS`: the gpkg or PNG output exists and overwrite is
///   false (the file is untouched).
/// - `HYDROPLOT_ERR_LIMIT`: more than 10,000 outlets or 100,000 comids, or more
///   features than the context's `max_features`.
/// - `HYDROPLOT_ERR_RENDER`: drawing failed.
///
/// Basemap tiles that cannot be fetched are left blank and reported as
/// warnings (`hydroplot_plot_data_warning`); they never fail the call.
///
/// \par Ownership
/// On success the caller owns `*out`; free it once with
/// `hydroplot_plot_data_free`. `ctx`, `req` and `map` stay the caller's; a map
/// drawn into the result is owned by `*out` (or moved out with
/// `hydroplot_plot_data_take_map`).
///
/// \par Thread safety
/// `ctx` and `req` are only read: many threads may plot at once with the same
/// context and request. `map`, when given, must not be used by another thread
/// during the call. Callbacks run on the calling thread.
///
/// \since 0.1
#[no_mangle]
pub extern "C" fn hydroplot_plot(
    ctx: *const hydroplot_context,
    req: *const hydroplot_plot_request,
    map: *mut hydroplot_map,
    out: *mut *mut hydroplot_plot_data,
) -> hydroplot_status {
    boundary(|| {
        let ctx = unsafe { arg_ref(ctx, "ctx") }?;
        let req = unsafe { arg_ref(req, "req") }?;
        check_out(out, "out")?;
        let map = if map.is_null() {
            None
        } else {
            Some(unsafe { arg_mut(map, "map") }?)
        };
        let data = crate::plot::plot_hydro(&ctx.core.for_call(), req, map)?;
        unsafe {
            write_out(
                out,
                hydroplot_plot_data::into_handle(FfiPlotData::new(data)),
                "out",
            )
        }
    })
}
