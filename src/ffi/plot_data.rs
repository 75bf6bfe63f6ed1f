//! `hydroplot_plot_data`: the result of `hydroplot_plot`.

use super::arrow_stream::{self, ArrowArrayStream};
use super::buffer::{give, hydroplot_buffer};
use super::map::hydroplot_map;
use super::{arg_mut, arg_ref, arg_str, boundary, boundary_or, check_out, take_handle, write_out};
use super::{hydroplot_status, FfiResult, Opaque};
use crate::plot::{Drawing, Layer, Plot, PlotData, PLOT_DATA_CRS};
use crate::render::Map;
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
    /// The drawn map, until `hydroplot_plot_data_take_map` moves it out.
    map: Option<Map>,
    pub(crate) drawing: Drawing,
    warnings: Vec<CString>,
}

impl FfiPlotData {
    pub(crate) fn new(plot: Plot) -> FfiPlotData {
        let Plot { data, map, drawing } = plot;
        let warnings = data
            .warnings
            .iter()
            .map(|w| CString::new(w.replace('\0', " ")).unwrap_or_default())
            .collect();
        FfiPlotData {
            data,
            map,
            drawing,
            warnings,
        }
    }
}

impl Opaque for hydroplot_plot_data {
    type Rust = FfiPlotData;
}

/// Frees plot data, and its map unless it was taken.
///
/// \param pd The plot data, or NULL (a no-op).
///
/// \par Errors
/// None.
///
/// \par Ownership
/// `pd` and every pointer read from it (comids, warnings) are invalid
/// afterwards; buffers made from it and a taken map stay valid. Never free
/// plot data twice.
///
/// \par Thread safety
/// Not while another thread reads `pd`.
///
/// \since 0.1
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

/// The number of features of a layer.
///
/// \param pd    The plot data.
/// \param layer `outlets`, `flowline`, `basin`, `catchment`, `network_wtbd`,
///           `off_network_wtbd`, `nhdarea`, `flowline_nonnetwork` or `gage`.
/// \param n     Receives the count on success.
///
/// \return `HYDROPLOT_OK`, or an error status below.
///
/// \par Errors
/// - `HYDROPLOT_ERR_NULL_ARGUMENT`: `pd`, `layer` or `n` is NULL.
/// - `HYDROPLOT_ERR_INVALID_ARGUMENT`: an unknown layer name (the message
///   lists them), or it is not UTF-8.
///
/// \par Ownership
/// Nothing is allocated.
///
/// \par Thread safety
/// Any thread: plot data is immutable (but for
/// `hydroplot_plot_data_take_map`).
///
/// \since 0.1
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
/// case names; NAD83 longitude/latitude; polygon exteriors counterclockwise,
/// holes clockwise, whatever the source's winding).
///
/// \param pd    The plot data.
/// \param layer `outlets`, `flowline`, `basin`, `catchment`, `network_wtbd`,
///           `off_network_wtbd`, `nhdarea`, `flowline_nonnetwork` or `gage`.
/// \param out   Receives the GeoJSON bytes on success; not written on failure.
///
/// \return `HYDROPLOT_OK`, or an error status below.
///
/// \par Errors
/// - `HYDROPLOT_ERR_NULL_ARGUMENT`: `pd`, `layer` or `out` is NULL.
/// - `HYDROPLOT_ERR_INVALID_ARGUMENT`: an unknown layer name (the message
///   lists them), or it is not UTF-8.
///
/// \par Ownership
/// On success the caller owns `*out`; free it once with
/// `hydroplot_buffer_free`. It outlives `pd`.
///
/// \par Thread safety
/// Any thread: plot data is immutable (but for
/// `hydroplot_plot_data_take_map`).
///
/// \since 0.1
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
        let mut geojson = Vec::new();
        crate::table::geojson::write_collection(&mut geojson, pd.data.layer(layer))
            .expect("writing to a Vec never fails");
        give(geojson, out)
    })
}

/// A layer as an Arrow C stream: one `geometry` column (GeoArrow
/// `geoarrow.wkb`: WKB, its field metadata `ARROW:extension:metadata` holding
/// the CRS, NAD83 (EPSG:4269), as PROJJSON: `{"crs":{"type":"GeographicCRS",
/// ..., "id":{"authority":"EPSG","code":4269}},"crs_type":"projjson"}`; null for a feature
/// without geometry), then one column per property.
///
/// \par One schema per layer, whatever the source
/// The same request gives the same schema from a local GeoPackage
/// (`hydro_data`), from the services and from the plot-data cache. A layer's
/// declared fields (listed below: NHDPlusV2's fields in the fabric service's
/// order, typed as the NHDPlusV2 GeoPackages declare them, MEDIUMINT int64,
/// REAL float64, TEXT and DATETIME utf8) come first, each always of its
/// declared type: an integer the service writes as `5.0` is an int64 5, and a
/// field the source lacks is null (`objectid` and `pathtimema` from a
/// GeoPackage, which has neither). With `properties` `plot` or a list, a
/// field the request did not ask for is left out rather than added as nulls.
/// A value its declared type cannot hold (`5.5` for `streamorde`, `"abc"` for
/// `comid`; an array or object anywhere) fails `hydroplot_plot_hydro` with
/// `HYDROPLOT_ERR_SERVICE` (services) or `HYDROPLOT_ERR_GPKG` (`hydro_data`),
/// the message naming the layer, the field, the feature and the value; a
/// number or boolean in a utf8 field is its JSON text. The geometry field's
/// metadata `hydroplot:geometry_type` names the layer's geometry type
/// (`MULTILINESTRING`; a LineString row is a MultiLineString of one line,
/// and so on) whenever every row has it, so an empty layer (no gage in a
/// basin) keeps its fields and its geometry type.
///
/// \par Declared fields (name and Arrow type, in order)
/// - `basin` (MULTIPOLYGON): comid int64, id utf8, type utf8.
/// - `catchment` (MULTIPOLYGON): gridcode int64, featureid int64,
///   sourcefc utf8, areasqkm float64, shape_length float64, shape_area float64.
/// - `nhdarea` (MULTIPOLYGON): objectid int64, comid int64, fdate utf8,
///   resolution utf8, gnis_id utf8, gnis_name utf8, areasqkm float64,
///   elevation float64, ftype utf8, fcode int64, shape_length float64,
///   shape_area float64, onoffnet int64, purpcode utf8, purpdesc utf8.
/// - `network_wtbd` (MULTIPOLYGON): objectid int64, comid int64, fdate utf8,
///   resolution utf8, gnis_id utf8, gnis_name utf8, areasqkm float64,
///   elevation float64, reachcode utf8, ftype utf8, fcode int64,
///   shape_length float64, shape_area float64, onoffnet int64, purpcode utf8,
///   purpdesc utf8, meandepth float64, lakevolume float64, maxdepth float64,
///   meandused float64, meandcode utf8, lakearea float64.
/// - `off_network_wtbd` (MULTIPOLYGON): objectid int64, comid int64,
///   fdate utf8, resolution utf8, gnis_id utf8, gnis_name utf8,
///   areasqkm float64, elevation float64, reachcode utf8, ftype utf8,
///   fcode int64, shape_length float64, shape_area float64, onoffnet int64,
///   purpcode utf8, purpdesc utf8, meandepth float64, lakevolume float64,
///   maxdepth float64, meandused float64, meandcode utf8, lakearea float64.
/// - `flowline_nonnetwork` (MULTILINESTRING): objectid int64, comid int64,
///   fdate utf8, resolution utf8, gnis_id utf8, gnis_name utf8,
///   lengthkm float64, reachcode utf8, flowdir utf8, wbareacomi int64,
///   ftype utf8, fcode int64, shape_length float64.
/// - `flowline` (MULTILINESTRING): objectid int64, comid int64, fdate utf8,
///   resolution utf8, gnis_id utf8, gnis_name utf8, lengthkm float64,
///   reachcode utf8, flowdir utf8, wbareacomi int64, ftype utf8, fcode int64,
///   shape_length float64, streamleve int64, streamorde int64,
///   streamcalc int64, fromnode float64, tonode float64, hydroseq float64,
///   levelpathi float64, pathlength float64, terminalpa float64,
///   arbolatesu float64, divergence int64, startflag int64, terminalfl int64,
///   dnlevel int64, uplevelpat float64, uphydroseq float64, dnlevelpat float64,
///   dnminorhyd float64, dndraincou int64, dnhydroseq float64,
///   frommeas float64, tomeas float64, rtndiv int64, vpuin int64, vpuout int64,
///   areasqkm float64, totdasqkm float64, divdasqkm float64, tidal int64,
///   totma float64, wbareatype utf8, pathtimema float64, hwnodesqkm float64,
///   maxelevraw float64, minelevraw float64, maxelevsmo float64,
///   minelevsmo float64, slope float64, elevfixed utf8, hwtype utf8,
///   slopelenkm float64, qa_ma float64, va_ma float64, qc_ma float64,
///   vc_ma float64, qe_ma float64, ve_ma float64, qa_01 float64, va_01 float64,
///   qc_01 float64, vc_01 float64, qe_01 float64, ve_01 float64, qa_02 float64,
///   va_02 float64, qc_02 float64, vc_02 float64, qe_02 float64, ve_02 float64,
///   qa_03 float64, va_03 float64, qc_03 float64, vc_03 float64, qe_03 float64,
///   ve_03 float64, qa_04 float64, va_04 float64, qc_04 float64, vc_04 float64,
///   qe_04 float64, ve_04 float64, qa_05 float64, va_05 float64, qc_05 float64,
///   vc_05 float64, qe_05 float64, ve_05 float64, qa_06 float64, va_06 float64,
///   qc_06 float64, vc_06 float64, qe_06 float64, ve_06 float64, qa_07 float64,
///   va_07 float64, qc_07 float64, vc_07 float64, qe_07 float64, ve_07 float64,
///   qa_08 float64, va_08 float64, qc_08 float64, vc_08 float64, qe_08 float64,
///   ve_08 float64, qa_09 float64, va_09 float64, qc_09 float64, vc_09 float64,
///   qe_09 float64, ve_09 float64, qa_10 float64, va_10 float64, qc_10 float64,
///   vc_10 float64, qe_10 float64, ve_10 float64, qa_11 float64, va_11 float64,
///   qc_11 float64, vc_11 float64, qe_11 float64, ve_11 float64, qa_12 float64,
///   va_12 float64, qc_12 float64, vc_12 float64, qe_12 float64, ve_12 float64,
///   lakefract float64, surfarea float64, rareahload float64, rpuid utf8,
///   vpuid utf8, enabled int64.
/// - `gage` (POINT): reachcode utf8, reachresol utf8, source_ori utf8,
///   source_fea utf8, featuredet utf8, measure float64, eventtype utf8,
///   flcomid int64, agency_cd utf8, station_nm utf8, state_cd utf8, state utf8,
///   dasqmi float64, dasqkm float64, latsite float64, lonsite float64,
///   active utf8, activedate utf8, gagesii utf8.
/// - `outlets` (POINT): comid int64, id utf8, type utf8.
///
/// \par Other fields
/// Fields a source has beyond the declared ones follow, in the source's
/// order, each typed after how its values were written (the JSON number
/// literals of the service's pages, the SQLite storage class of a
/// GeoPackage's values), never whether they happen to be integral:
/// - int64: every value an integer literal (`13293970`) or SQLite INTEGER;
/// - float64: every value a number and at least one written with a
///   fraction or an exponent (`510042379.0`, `1e3`) or a SQLite REAL; the
///   integers of such a column are converted exactly (|n| <= 2^53), and
///   `-0.0` keeps its sign;
/// - utf8 holding each value's text: an integer no float64 holds exactly
///   (beyond 2^53) in a column that also holds floats, or beyond the int64
///   range (up to 2^64), keeps its digits this way rather than being
///   rounded; so do the scalars of a column mixing kinds (number and string,
///   boolean and number). Integer literals beyond 2^64 arrive rounded, as
///   float64 (the JSON parser reads them so);
/// - bool: every value a boolean;
/// - utf8 with the canonical `arrow.json` extension: a column holding an
///   array or object anywhere; every value is its JSON text, strings quoted;
/// - utf8 nulls: a column without any value.
///
/// A missing or null value is a null. The values are those of
/// `hydroplot_plot_data_layer_geojson`.
///
/// Column names are the property names in lower case; two names that
/// differ only in case (`COMID` and `comid`) are two columns, each named
/// with its own spelling, so both values are kept (the declared field takes
/// the lower-case one). (Before 0.3, float columns whose values were all
/// integral were int64, and case-distinct names shared one column. Until
/// fields were declared, a field's type followed its source, and an empty
/// layer had no field.)
///
/// \param pd    The plot data.
/// \param layer `outlets`, `flowline`, `basin`, `catchment`, `network_wtbd`,
///           `off_network_wtbd`, `nhdarea`, `flowline_nonnetwork` or `gage`.
/// \param out   Receives the stream on success; not written on failure. Its
///           previous content is overwritten without being released: pass a
///           released or uninitialised struct.
///
/// \return `HYDROPLOT_OK`, or an error status below.
///
/// \par Errors
/// - `HYDROPLOT_ERR_NULL_ARGUMENT`: `pd`, `layer` or `out` is NULL.
/// - `HYDROPLOT_ERR_INVALID_ARGUMENT`: an unknown layer name (the message
///   lists them), or it is not UTF-8.
///
/// \par Ownership
/// On success the caller owns the stream and calls `out->release(out)` once
/// when done (after releasing the schema and arrays it got from it, each with
/// its own `release`). The stream holds its own copy of the data: it stays
/// valid after `pd` is freed.
///
/// \par Thread safety
/// Any thread: plot data is immutable (but for
/// `hydroplot_plot_data_take_map`). The stream is for one thread at a time,
/// as the Arrow specification says.
///
/// \since 0.2
#[no_mangle]
pub extern "C" fn hydroplot_plot_data_layer_arrow(
    pd: *const hydroplot_plot_data,
    layer: *const c_char,
    out: *mut ArrowArrayStream,
) -> hydroplot_status {
    boundary(|| {
        let pd = unsafe { arg_ref(pd, "pd") }?;
        let layer = layer_arg(layer)?;
        arrow_stream::check(out)?;
        let batch = crate::arrow::layer_batch(pd.data.layer(layer), PLOT_DATA_CRS)?;
        arrow_stream::export(batch, out)
    })
}

/// The comids of the flowline layer.
///
/// \param pd     The plot data.
/// \param comids Receives a pointer to the comids on success.
/// \param n      Receives their number on success (0: do not read `*comids`).
///
/// \return `HYDROPLOT_OK`, or an error status below.
///
/// \par Errors
/// - `HYDROPLOT_ERR_NULL_ARGUMENT`: `pd`, `comids` or `n` is NULL.
///
/// \par Ownership
/// The comids are owned by `pd` and valid until it is freed; never free
/// them.
///
/// \par Thread safety
/// Any thread: plot data is immutable (but for
/// `hydroplot_plot_data_take_map`).
///
/// \since 0.1
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

/// The plot bbox, in NAD83 longitude/latitude.
///
/// \param pd                      The plot data.
/// \param out_xmin_ymin_xmax_ymax Receives xmin, ymin, xmax, ymax: room for 4
///                         doubles.
///
/// \return `HYDROPLOT_OK`, or an error status below.
///
/// \par Errors
/// - `HYDROPLOT_ERR_NULL_ARGUMENT`: `pd` or `out_xmin_ymin_xmax_ymax` is NULL.
///
/// \par Ownership
/// Nothing is allocated; the 4 doubles are the caller's.
///
/// \par Thread safety
/// Any thread: plot data is immutable (but for
/// `hydroplot_plot_data_take_map`).
///
/// \since 0.1
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

/// The drawn map as PNG bytes.
///
/// \param pd  The plot data.
/// \param out Receives the PNG bytes on success; not written on failure.
///
/// \return `HYDROPLOT_OK`, or an error status below.
///
/// \par Errors
/// - `HYDROPLOT_ERR_NULL_ARGUMENT`: `pd` or `out` is NULL.
/// - `HYDROPLOT_ERR_RENDER`: `pd` holds no map: nothing was drawn
///   (actually_plot false), the layers were drawn onto a caller's map (use
///   `hydroplot_map_png`), or the map was taken; or encoding failed.
///
/// \par Ownership
/// On success the caller owns `*out`; free it once with
/// `hydroplot_buffer_free`. It outlives `pd`.
///
/// \par Thread safety
/// Any thread: plot data is immutable (but for
/// `hydroplot_plot_data_take_map`).
///
/// \since 0.1
#[no_mangle]
pub extern "C" fn hydroplot_plot_data_png(
    pd: *const hydroplot_plot_data,
    out: *mut *mut hydroplot_buffer,
) -> hydroplot_status {
    boundary(|| {
        let pd = unsafe { arg_ref(pd, "pd") }?;
        check_out(out, "out")?;
        let map = pd.map.as_ref().ok_or_else(|| {
            Error::Render("this plot data holds no map: it was not plotted (actually_plot false), was drawn onto the caller's map, or its map was taken".into())
        })?;
        give(map.png()?, out)
    })
}

/// Moves the drawn map out of the plot data, to keep drawing on it.
///
/// \param pd  The plot data.
/// \param out Receives the map on success; not written on failure.
///
/// \return `HYDROPLOT_OK`, or an error status below.
///
/// \par Errors
/// - `HYDROPLOT_ERR_NULL_ARGUMENT`: `pd` or `out` is NULL.
/// - `HYDROPLOT_ERR_RENDER`: `pd` holds no map (not drawn, drawn onto a
///   caller's map, or already taken).
///
/// \par Ownership
/// On success the caller owns `*out`; free it once with `hydroplot_map_free`.
/// `pd` no longer holds it.
///
/// \par Thread safety
/// Not while other threads read `pd`.
///
/// \since 0.1
#[no_mangle]
pub extern "C" fn hydroplot_plot_data_take_map(
    pd: *mut hydroplot_plot_data,
    out: *mut *mut hydroplot_map,
) -> hydroplot_status {
    boundary(|| {
        let pd = unsafe { arg_mut(pd, "pd") }?;
        check_out(out, "out")?;
        let map = pd
            .map
            .take()
            .ok_or_else(|| Error::Render("this plot data holds no map to take".into()))?;
        unsafe { write_out(out, hydroplot_map::into_handle(map), "out") }
    })
}

/// The number of warnings met while building the plot data (tiles that
/// could not be fetched, ...).
///
/// \param pd The plot data, or NULL.
///
/// \return The count; 0 when `pd` is NULL.
///
/// \par Errors
/// None: a NULL `pd` gives 0 and leaves `hydroplot_last_error()` unchanged.
///
/// \par Ownership
/// Nothing is allocated.
///
/// \par Thread safety
/// Any thread: plot data is immutable (but for
/// `hydroplot_plot_data_take_map`).
///
/// \since 0.1
#[no_mangle]
pub extern "C" fn hydroplot_plot_data_warning_count(pd: *const hydroplot_plot_data) -> usize {
    boundary_or(0, || {
        unsafe { arg_ref(pd, "pd") }.map_or(0, |pd| pd.warnings.len())
    })
}

/// One warning of the plot data.
///
/// \param pd The plot data, or NULL.
/// \param i  The index, below `hydroplot_plot_data_warning_count`.
///
/// \return The warning; NULL when `pd` is NULL or `i` is out of range.
///
/// \par Errors
/// None: NULL or an out-of-range `i` gives NULL and leaves
/// `hydroplot_last_error()` unchanged.
///
/// \par Ownership
/// Owned by `pd`, valid until it is freed; never free it.
///
/// \par Thread safety
/// Any thread: plot data is immutable (but for
/// `hydroplot_plot_data_take_map`).
///
/// \since 0.1
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

#[cfg(test)]
mod tests {
    use crate::plot::Layer;
    use crate::table::geometry::kind;

    /// The "Declared fields" list of `hydroplot_plot_data_layer_arrow`'s
    /// doc comment, made from the declarations: each layer, its geometry
    /// type and its fields with their Arrow types, in order, wrapped.
    fn declared_fields_doc() -> String {
        let mut out = String::new();
        for layer in Layer::ALL {
            let schema = layer.schema();
            let mut line = format!(
                "/// - `{}` ({}):",
                layer.name(),
                kind::name(schema.geometry)
            );
            for (i, (name, ty)) in schema.fields.iter().enumerate() {
                let sep = if i + 1 < schema.fields.len() {
                    ","
                } else {
                    "."
                };
                let arrow = ty.data_type().to_string().to_lowercase();
                let word = format!(" {name} {arrow}{sep}");
                if line.len() + word.len() > 80 {
                    out.push_str(&line);
                    out.push('\n');
                    line = "///  ".to_string();
                }
                line.push_str(&word);
            }
            out.push_str(&line);
            out.push('\n');
        }
        out
    }

    #[test]
    fn the_header_lists_the_declared_fields_as_declared() {
        let source = include_str!("plot_data.rs");
        let doc = declared_fields_doc();
        assert!(source.contains(&doc), "the doc comment should list:\n{doc}");
    }
}
