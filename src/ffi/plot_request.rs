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
use std::path::{Path, PathBuf};

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

/// A new request with the spec's defaults (no outlets, no bbox, basemap
/// Esri.NatGeoWorldMap, 1024 x 768, actually_plot and overwrite true).
/// Never NULL; free it with `hydroplot_plot_request_free`.
#[no_mangle]
pub extern "C" fn hydroplot_plot_request_new() -> *mut hydroplot_plot_request {
    boundary_or(std::ptr::null_mut(), || {
        hydroplot_plot_request::into_handle(PlotRequest::default())
    })
}

/// Frees a request. NULL is a no-op. Never free twice.
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

/// Adds a comid outlet: its upstream tributaries are plotted (outlet form 2).
#[no_mangle]
pub extern "C" fn hydroplot_plot_request_add_comid(
    req: *mut hydroplot_plot_request,
    comid: i64,
) -> hydroplot_status {
    with_request(req, |r| Ok(r.add_comid(comid)?))
}

/// Sets the integer comid set: exactly these flowlines, no upstream
/// expansion (outlet form 3). `comids` is copied; `n` must be > 0.
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
/// `"USGS-05428500"` (outlet form 4). The string is copied.
#[no_mangle]
pub extern "C" fn hydroplot_plot_request_add_site(
    req: *mut hydroplot_plot_request,
    site_id: *const c_char,
) -> hydroplot_status {
    with_request(req, |r| {
        Ok(r.add_site(unsafe { arg_str(site_id, "site_id") }?)?)
    })
}

/// Adds a linked-data feature outlet (outlet form 5): `source` is `comid`,
/// `nwissite`/`gaugesite`, `huc12pp`, `wqp` or another index source, `id`
/// its id. Both strings are copied.
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

/// Adds a point outlet in `crs` (NULL = EPSG:4326): the catchment holding it
/// and its upstream tributaries are plotted (outlet form 6).
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

/// Sets the bbox in `crs` (NULL = EPSG:4326): everything in it is plotted.
/// Needs xmin < xmax and ymin < ymax, all finite.
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

/// Plots only streams of order >= `min_order` (>= 1); -1 = automatic from
/// the largest basin's area (the reference's rule, which also turns on
/// flowline_only unless it was set).
#[no_mangle]
pub extern "C" fn hydroplot_plot_request_set_streamorder(
    req: *mut hydroplot_plot_request,
    min_order: i32,
) -> hydroplot_status {
    with_request(req, |r| Ok(r.set_streamorder(min_order)?))
}

/// Reads a local NHDPlus GeoPackage instead of downloading (`hydro_data`).
/// The path is copied; the file is opened by `hydroplot_plot`.
#[no_mangle]
pub extern "C" fn hydroplot_plot_request_set_hydro_data(
    req: *mut hydroplot_plot_request,
    gpkg_path: *const c_char,
) -> hydroplot_status {
    with_request(req, |r| {
        r.hydro_data = Some(PathBuf::from(unsafe { arg_str(gpkg_path, "gpkg_path") }?));
        Ok(())
    })
}

/// Writes the subset to a GeoPackage at `out_path`, which must end in `.gpkg`.
#[no_mangle]
pub extern "C" fn hydroplot_plot_request_set_gpkg(
    req: *mut hydroplot_plot_request,
    out_path: *const c_char,
) -> hydroplot_status {
    with_request(req, |r| {
        Ok(r.set_gpkg(Path::new(unsafe { arg_str(out_path, "out_path") }?))?)
    })
}

/// Overwrite the gpkg output when it exists (default true). With false and
/// an existing file, `hydroplot_plot` fails with `HYDROPLOT_ERR_EXISTS` and
/// leaves the file untouched.
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

/// Only flowlines are subset and plotted. Unset = automatic: false, unless
/// stream order is automatic (-1) and the basin is large.
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

/// Overrides one style property (plot_config): `element` is `basin`,
/// `flowline`, `network_wtbd`, `off_network_wtbd` or `outlets.<source>`;
/// `property` is `lwd`, `col`, `border`, `pch` or `cex`; `value` as in R
/// (`"blue"`, `"#1f78b4"`, `"grey40"`, `"NA"`, `"2.5"`, `"17"`).
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

/// Sets the basemap provider (`Esri.NatGeoWorldMap`, `OpenStreetMap`,
/// `CartoDB.Positron`, `Esri.WorldImagery`, `Esri.WorldTopoMap`) or `"none"`.
#[no_mangle]
pub extern "C" fn hydroplot_plot_request_set_basemap(
    req: *mut hydroplot_plot_request,
    provider: *const c_char,
) -> hydroplot_status {
    with_request(req, |r| {
        let provider = unsafe { arg_str(provider, "provider") }?;
        if !provider.eq_ignore_ascii_case("none") {
            crate::render::tiles::provider(provider)?;
        }
        r.basemap = provider.to_string();
        Ok(())
    })
}

/// Sets the tile zoom level (0..=22), overriding the automatic choice.
#[no_mangle]
pub extern "C" fn hydroplot_plot_request_set_zoom(
    req: *mut hydroplot_plot_request,
    zoom: i32,
) -> hydroplot_status {
    with_request(req, |r| Ok(r.set_zoom(i64::from(zoom))?))
}

/// Sets the map size in pixels (each side 16..=16384; default 1024 x 768).
#[no_mangle]
pub extern "C" fn hydroplot_plot_request_set_size(
    req: *mut hydroplot_plot_request,
    width_px: u32,
    height_px: u32,
) -> hydroplot_status {
    with_request(req, |r| Ok(r.set_size(width_px, height_px)?))
}

/// With false, nothing is drawn (no tiles fetched); only the data is built.
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

/// Caches the plot data in the file at `path` (`cache_data = path`),
/// created when absent; entries are keyed by the request.
#[no_mangle]
pub extern "C" fn hydroplot_plot_request_set_cache_file(
    req: *mut hydroplot_plot_request,
    path: *const c_char,
) -> hydroplot_status {
    with_request(req, |r| {
        Ok(r.set_cache_file(Path::new(unsafe { arg_str(path, "path") }?))?)
    })
}

/// `cache_data = FALSE`: no plot-data cache and no persistent tile cache for this request.
#[no_mangle]
pub extern "C" fn hydroplot_plot_request_disable_cache(
    req: *mut hydroplot_plot_request,
) -> hydroplot_status {
    with_request(req, |r| {
        r.cache = CacheSetting::Disabled;
        Ok(())
    })
}

/// Runs plot_hydro. With `map` NULL a new map is drawn and kept in the
/// result (add = FALSE); with a map, the layers are drawn onto it and no
/// basemap is fetched (add = TRUE; the map stays the caller's). On success
/// `*out` owns the plot data; free it with `hydroplot_plot_data_free`.
/// `ctx` and `req` are only read: many threads may plot at once with them.
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
        let data = crate::plot::plot_hydro(&ctx.core, req, map)?;
        unsafe {
            write_out(
                out,
                hydroplot_plot_data::into_handle(FfiPlotData::new(data)),
                "out",
            )
        }
    })
}
