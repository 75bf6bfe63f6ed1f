//! `hydroplot_plot_data`: the result of `hydroplot_plot`.

use super::buffer::{give, hydroplot_buffer};
use super::map::hydroplot_map;
use super::{arg_mut, arg_ref, arg_str, boundary, boundary_or, check_out, take_handle, write_out};
use super::{hydroplot_status, FfiResult, Opaque};
use crate::plot::{Layer, PlotData};
use crate::Error;
use std::ffi::{c_char, CString};

/// The plot data of one `hydroplot_plot` call: layers in NAD83 lon/lat, the
/// bbox, warnings and the drawn map. Immutable (except
/// `hydroplot_plot_data_take_map`); may be read from any thread. Free once
/// with `hydroplot_plot_data_free`; every pointer it hands out dies with it.
pub struct hydroplot_plot_data {
    _private: [u8; 0],
}

/// The Rust side of a plot data handle: the data and C copies of its warnings.
pub(crate) struct FfiPlotData {
    pub(crate) data: PlotData,
    warnings: Vec<CString>,
}

impl FfiPlotData {
    pub(crate) fn new(data: PlotData) -> FfiPlotData {
        let warnings = data
            .warnings
            .iter()
            .map(|w| CString::new(w.replace('\0', " ")).unwrap_or_default())
            .collect();
        FfiPlotData { data, warnings }
    }
}

impl Opaque for hydroplot_plot_data {
    type Rust = FfiPlotData;
}

/// Frees plot data (and its map, unless taken). NULL is a no-op. Never free twice.
#[no_mangle]
pub extern "C" fn hydroplot_plot_data_free(pd: *mut hydroplot_plot_data) {
    boundary_or((), || drop(unsafe { take_handle(pd) }))
}

/// Reads the layer named by `layer`.
fn layer_arg(layer: *const c_char) -> FfiResult<Layer> {
    let name = unsafe { arg_str(layer, "layer") }?;
    Layer::from_name(name).ok_or_else(|| {
        let known: Vec<&str> = Layer::ALL.iter().map(|l| l.name()).collect();
        Error::InvalidArgument(format!(
            "unknown layer {name:?}; layers: {}",
            known.join(", ")
        ))
        .into()
    })
}

/// The number of features of a layer (`outlets`, `flowline`, `basin`,
/// `catchment`, `network_wtbd`, `off_network_wtbd`, and `nhdarea`,
/// `flowline_nonnetwork`, `gage`) into `*n`. An unknown layer name gives
/// `HYDROPLOT_ERR_INVALID_ARGUMENT`.
#[no_mangle]
pub extern "C" fn hydroplot_plot_data_layer_count(
    pd: *const hydroplot_plot_data,
    layer: *const c_char,
    n: *mut usize,
) -> hydroplot_status {
    boundary(|| {
        let pd = unsafe { arg_ref(pd, "pd") }?;
        let layer = layer_arg(layer)?;
        unsafe { write_out(n, pd.data.layer(layer).len(), "n") }
    })
}

/// A layer as an RFC 7946 GeoJSON FeatureCollection (all properties, lower
/// case names) in `*out`; free it with `hydroplot_buffer_free`.
#[no_mangle]
pub extern "C" fn hydroplot_plot_data_layer_geojson(
    pd: *const hydroplot_plot_data,
    layer: *const c_char,
    out: *mut *mut hydroplot_buffer,
) -> hydroplot_status {
    boundary(|| {
        let pd = unsafe { arg_ref(pd, "pd") }?;
        let layer = layer_arg(layer)?;
        check_out(out, "out")?;
        give(crate::feature::to_geojson(pd.data.layer(layer)), out)
    })
}

/// The comids of the flowline layer: `*comids` points to `*n` values owned
/// by `pd`, valid until it is freed.
#[no_mangle]
pub extern "C" fn hydroplot_plot_data_flowline_comids(
    pd: *const hydroplot_plot_data,
    comids: *mut *const i64,
    n: *mut usize,
) -> hydroplot_status {
    boundary(|| {
        let pd = unsafe { arg_ref(pd, "pd") }?;
        check_out(comids, "comids")?;
        check_out(n, "n")?;
        unsafe {
            write_out(comids, pd.data.flowline_comids.as_ptr(), "comids")?;
            write_out(n, pd.data.flowline_comids.len(), "n")
        }
    })
}

/// The plot bbox (xmin, ymin, xmax, ymax; NAD83 lon/lat) into the 4 doubles at `out_xmin_ymin_xmax_ymax`.
#[no_mangle]
pub extern "C" fn hydroplot_plot_data_bbox(
    pd: *const hydroplot_plot_data,
    out_xmin_ymin_xmax_ymax: *mut f64,
) -> hydroplot_status {
    boundary(|| {
        let pd = unsafe { arg_ref(pd, "pd") }?;
        check_out(out_xmin_ymin_xmax_ymax, "out_xmin_ymin_xmax_ymax")?;
        let out = unsafe { std::slice::from_raw_parts_mut(out_xmin_ymin_xmax_ymax, 4) };
        out.copy_from_slice(&pd.data.bbox);
        Ok(())
    })
}

/// The drawn map as PNG bytes in `*out` (free with `hydroplot_buffer_free`).
/// `HYDROPLOT_ERR_RENDER` when nothing was drawn (actually_plot false), the
/// layers were drawn onto a caller's map (use `hydroplot_map_png`), or the
/// map was taken.
#[no_mangle]
pub extern "C" fn hydroplot_plot_data_png(
    pd: *const hydroplot_plot_data,
    out: *mut *mut hydroplot_buffer,
) -> hydroplot_status {
    boundary(|| {
        let pd = unsafe { arg_ref(pd, "pd") }?;
        check_out(out, "out")?;
        let map = pd.data.map.as_ref().ok_or_else(|| {
            Error::Render("this plot data holds no map: it was not plotted (actually_plot false), was drawn onto the caller's map, or its map was taken".into())
        })?;
        give(map.png()?, out)
    })
}

/// Moves the drawn map out of `pd` into `*out`, to keep drawing on it; the
/// caller owns it (free with `hydroplot_map_free`). `HYDROPLOT_ERR_RENDER`
/// when `pd` holds no map. Not while other threads read `pd`.
#[no_mangle]
pub extern "C" fn hydroplot_plot_data_take_map(
    pd: *mut hydroplot_plot_data,
    out: *mut *mut hydroplot_map,
) -> hydroplot_status {
    boundary(|| {
        let pd = unsafe { arg_mut(pd, "pd") }?;
        check_out(out, "out")?;
        let map = pd
            .data
            .map
            .take()
            .ok_or_else(|| Error::Render("this plot data holds no map to take".into()))?;
        unsafe { write_out(out, hydroplot_map::into_handle(map), "out") }
    })
}

/// The number of warnings met while building `pd` (0 when `pd` is NULL).
#[no_mangle]
pub extern "C" fn hydroplot_plot_data_warning_count(pd: *const hydroplot_plot_data) -> usize {
    boundary_or(0, || {
        unsafe { arg_ref(pd, "pd") }.map_or(0, |pd| pd.warnings.len())
    })
}

/// Warning `i`, owned by `pd` and valid until it is freed; NULL when `i` is
/// out of range or `pd` is NULL.
#[no_mangle]
pub extern "C" fn hydroplot_plot_data_warning(
    pd: *const hydroplot_plot_data,
    i: usize,
) -> *const c_char {
    boundary_or(std::ptr::null(), || {
        unsafe { arg_ref(pd, "pd") }
            .ok()
            .and_then(|pd| pd.warnings.get(i))
            .map_or(std::ptr::null(), |w| w.as_ptr())
    })
}
