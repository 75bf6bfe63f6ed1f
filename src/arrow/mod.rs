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
//! metadata), then one column per property in first-seen order, typed as
//! [`columns`] infers. [`layer_batch`] and [`trace_batch`] are the only places
//! that turn features into columns.

mod columns;

use crate::feature::Feature;
use crate::{Error, Result};
use arrow_array::builder::BinaryBuilder;
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema};
use std::collections::HashMap;
use std::sync::Arc;

/// The name of the geometry column.
pub const GEOMETRY: &str = "geometry";

/// The batch of one layer: geometry as WKB in `crs` (an authority string such
/// as `"EPSG:4269"`), then the properties. A property named `geometry` is
/// kept as `geometry_property`, so no value is lost to the name clash.
///
/// Errors: `Internal` if Arrow refuses the columns (a bug).
pub fn layer_batch(features: &[Feature], crs: &str) -> Result<RecordBatch> {
    let mut fields = vec![geometry_field(crs)];
    let mut arrays = vec![geometry_column(features)];
    for (name, data_type, values) in columns::property_columns(features) {
        let name = if name == GEOMETRY {
            format!("{GEOMETRY}_property")
        } else {
            name
        };
        fields.push(Field::new(name, data_type, true));
        arrays.push(values);
    }
    RecordBatch::try_new(Arc::new(Schema::new(fields)), arrays)
        .map_err(|e| Error::Internal(format!("building an Arrow batch: {e}")))
}

/// The batch of a raindrop trace: one row per feature (flowline first, then
/// the raindrop path), geometry in WGS 84 (the trace's CRS); the columns are
/// those of [`crate::trace::Trace::to_features`] (`id`, `comid`, ...).
pub fn trace_batch(trace: &crate::trace::Trace) -> Result<RecordBatch> {
    layer_batch(&trace.to_features(), crate::trace::TRACE_CRS)
}

/// The GeoArrow WKB field, its CRS given as an authority code (GeoArrow's
/// `crs_type` `"authority_code"`, read by pyproj, GDAL and sf alike).
fn geometry_field(crs: &str) -> Field {
    let metadata = serde_json::json!({ "crs": crs, "crs_type": "authority_code" });
    Field::new(GEOMETRY, DataType::Binary, true).with_metadata(HashMap::from([
        (
            "ARROW:extension:name".to_string(),
            "geoarrow.wkb".to_string(),
        ),
        ("ARROW:extension:metadata".to_string(), metadata.to_string()),
    ]))
}

fn geometry_column(features: &[Feature]) -> ArrayRef {
    let mut builder = BinaryBuilder::with_capacity(features.len(), 64 * features.len());
    let mut wkb = Vec::new();
    for f in features {
        match &f.geometry {
            Some(g) => {
                wkb.clear();
                crate::gpkg::blob::write_wkb(g, &mut wkb);
                builder.append_value(&wkb);
            }
            None => builder.append_null(),
        }
    }
    Arc::new(builder.finish())
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::cast::AsArray;
    use arrow_array::Array;
    use geo::{point, Geometry};

    #[test]
    fn geometry_first_with_geoarrow_metadata_then_properties() {
        let features = vec![
            Feature {
                geometry: Some(Geometry::Point(point!(x: -89.4, y: 43.1))),
                properties: serde_json::json!({"comid": 1.0, "geometry": "x"})
                    .as_object()
                    .unwrap()
                    .clone(),
                ..Feature::default()
            },
            Feature::default(),
        ];
        let batch = layer_batch(&features, "EPSG:4269").unwrap();
        let schema = batch.schema();
        let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
        assert_eq!(names, ["geometry", "comid", "geometry_property"]);
        let meta = schema.field(0).metadata();
        assert_eq!(meta["ARROW:extension:name"], "geoarrow.wkb");
        let ext: serde_json::Value =
            serde_json::from_str(&meta["ARROW:extension:metadata"]).unwrap();
        assert_eq!(ext["crs"], "EPSG:4269");
        let geometry = batch.column(0).as_binary::<i32>();
        assert_eq!(geometry.value(0).len(), 21);
        assert!(geometry.is_null(1));
        assert_eq!(batch.num_rows(), 2);
    }
}
