//! Layers and traces as Arrow record batches: the data behind the C stream
//! export (`hydroplot_plot_data_layer_arrow`, `hydroplot_trace_arrow`) and so
//! behind the bindings' columnar path.
//!
//! arrow-rs is the Rust implementation of the Arrow format maintained by the
//! Apache Arrow project; its C data/stream interface is what pyarrow, polars,
//! DuckDB, geopandas and R's nanoarrow import.
//!
//! Schema of every batch: a `geometry` column first, GeoArrow `geoarrow.wkb`
//! (binary WKB, null for a feature without geometry, CRS in the extension
//! metadata), then one column per property. A layer's batch is
//! [`crate::table::Table::to_record_batch`]: its property arrays are the
//! table's own (shared, not copied) and the WKB is written from the flat
//! coordinate buffers. No `Feature` is built on the way.

use crate::table::export::{wkb_array, wkb_field};
use crate::table::geometry::{kind, GeometryBuilder};
use crate::table::Table;
use crate::trace::{Trace, TraceFeature, FIELDS};
use crate::{Error, Result};
use arrow_array::types::Float64Type;
use arrow_array::{ArrayRef, Float64Array, Int64Array, ListArray, RecordBatch, StringArray};
use arrow_schema::{Field, Schema};
use std::sync::Arc;

/// The batch of one layer: geometry as WKB in `crs` (an authority string such
/// as `"EPSG:4269"`), then the properties in the table's schema order. A
/// property named `geometry` is kept as `geometry_property`, so no value is
/// lost to the name clash.
///
/// Errors: `Internal` if Arrow refuses the columns (a bug).
pub fn layer_batch(table: &Table, crs: &str) -> Result<RecordBatch> {
    table.to_record_batch(crs).map_err(internal)
}

/// The batch of a raindrop trace: one row per feature (flowline first, then
/// the raindrop path), geometry in WGS 84 (the trace's CRS); then the spec's
/// 7 fields ([`crate::trace::FIELDS`]) in its order and spelling
/// (`raindrop_pathDist`), always all of them, each typed even when every
/// value is null: `id`, `gnis_name` and `reachcode` utf8, `comid` int64,
/// `raindrop_pathDist` and `measure` float64, `intersection_point` a list
/// of float64, `[lon, lat]` on the flowline and empty (not null) on the
/// raindrop path.
///
/// Built from the trace's fields directly: a [`Table`] lower-cases its
/// column names, and `raindrop_pathDist` is part of the documented schema.
pub fn trace_batch(trace: &Trace) -> Result<RecordBatch> {
    let fs = &trace.features;
    let mut geometry = GeometryBuilder::default();
    for f in fs {
        f.coords
            .chunks_exact(2)
            .for_each(|c| geometry.push_xy(c[0], c[1]));
        geometry.close_ring().map_err(internal)?;
        geometry.close_part().map_err(internal)?;
        geometry.finish_row(kind::LINESTRING).map_err(internal)?;
    }
    let text = |get: fn(&TraceFeature) -> Option<String>| -> ArrayRef {
        Arc::new(fs.iter().map(get).collect::<StringArray>())
    };
    let number = |get: fn(&TraceFeature) -> Option<f64>| -> ArrayRef {
        Arc::new(fs.iter().map(get).collect::<Float64Array>())
    };
    let points = fs.iter().map(|f| {
        let point = f.intersection_point.map_or_else(Vec::new, |p| p.to_vec());
        Some(point.into_iter().map(Some))
    });
    let columns: [ArrayRef; 7] = [
        text(|f| Some(f.id.clone())),
        text(|f| f.gnis_name.clone()),
        Arc::new(fs.iter().map(|f| f.comid).collect::<Int64Array>()),
        text(|f| f.reachcode.clone()),
        number(|f| f.raindrop_path_dist),
        number(|f| f.measure),
        Arc::new(ListArray::from_iter_primitive::<Float64Type, _, _>(points)),
    ];
    let mut fields = vec![wkb_field(crate::trace::TRACE_CRS)];
    fields.extend(
        FIELDS
            .iter()
            .zip(&columns)
            .map(|(name, c)| Field::new(*name, c.data_type().clone(), true)),
    );
    let mut arrays = vec![wkb_array(&geometry.finish()).map_err(internal)?];
    arrays.extend(columns);
    RecordBatch::try_new(Arc::new(Schema::new(fields)), arrays).map_err(internal)
}

fn internal(e: impl std::fmt::Display) -> Error {
    Error::Internal(format!("building an Arrow batch: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::cast::AsArray;
    use arrow_array::types::{Float64Type, Int64Type};
    use arrow_array::Array;
    use arrow_schema::DataType;

    fn feature(id: &str, comid: Option<i64>, coords: Vec<f64>) -> TraceFeature {
        TraceFeature {
            id: id.into(),
            gnis_name: None,
            comid,
            reachcode: None,
            raindrop_path_dist: comid.is_none().then_some(12.5),
            measure: None,
            intersection_point: comid.map(|_| [-89.25, 43.0]),
            coords,
        }
    }

    #[test]
    fn a_trace_batch_has_the_specs_7_typed_columns_and_line_wkb() {
        let trace = Trace {
            features: vec![
                feature("upstreamFlowline", Some(13297178), vec![0., 0., 1., 1.]),
                feature("raindropPath", None, vec![2., 2., 3., 3., 4., 4.]),
            ],
        };
        let batch = trace_batch(&trace).unwrap();
        let schema = batch.schema();
        let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
        assert_eq!((names[0], &names[1..]), ("geometry", &FIELDS[..]));
        let types: Vec<DataType> = schema
            .fields()
            .iter()
            .map(|f| f.data_type().clone())
            .collect();
        let (text, float) = (DataType::Utf8, DataType::Float64);
        let list = DataType::new_list(DataType::Float64, true);
        assert_eq!(
            types[1..],
            [
                text.clone(),
                text.clone(),
                DataType::Int64,
                text,
                float.clone(),
                float,
                list
            ]
        );
        let wkb = batch.column(0).as_binary::<i32>();
        // Byte order, type 2 (LineString), the count, 16 bytes a vertex.
        assert_eq!(wkb.value(0)[..5], [1, 2, 0, 0, 0]);
        assert_eq!((wkb.value(0).len(), wkb.value(1).len()), (9 + 32, 9 + 48));
        assert_eq!(batch.column(2).null_count(), 2, "no name: typed nulls");
        let comid = batch.column(3).as_primitive::<Int64Type>();
        assert!(comid.value(0) == 13297178 && comid.is_null(1));
        let dist = batch.column(5).as_primitive::<Float64Type>();
        assert!(dist.is_null(0) && dist.value(1) == 12.5);
        let point = batch.column(7).as_list::<i32>();
        assert_eq!(point.null_count(), 0);
        let lon_lat = point.value(0);
        assert_eq!(
            lon_lat.as_primitive::<Float64Type>().values(),
            &[-89.25, 43.0]
        );
        assert_eq!(point.value(1).len(), 0);
    }
}
