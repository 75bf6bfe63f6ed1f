//! A table as an Arrow `RecordBatch`: the property columns in schema order,
//! then a `geometry` column in a GeoArrow native encoding, built around the
//! table's own buffers (the convention shared with the Arrow export; see
//! `docs/columnar.md`).
//!
//! A layer whose rows are all polygonal is `geoarrow.multipolygon`, all
//! linear `geoarrow.multilinestring`, all (single) points `geoarrow.point`.
//! Coordinates are interleaved (`FixedSizeList<f64, 2>`). Rows without a
//! geometry are null. A layer mixing dimensions or holding a
//! GeometryCollection has no native encoding and is refused for now.

use super::geometry::{kind, Geometries};
use super::{Table, EXTENSION_NAME};
use arrow_array::{ArrayRef, FixedSizeListArray, Float64Array, ListArray, RecordBatch};
use arrow_buffer::{NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field, Schema};
use std::sync::Arc;

/// The Arrow field metadata holding an extension's parameters.
const EXTENSION_METADATA: &str = "ARROW:extension:metadata";

impl Table {
    /// The table as a `RecordBatch` whose last column, `geometry`, is in the
    /// GeoArrow encoding of the layer's geometry type, its coordinates in
    /// `crs` (e.g. `"EPSG:4269"`). The batch shares the table's buffers.
    pub fn to_record_batch(&self, crs: &str) -> Result<RecordBatch, String> {
        if self.column("geometry").is_some() {
            return Err("the layer has a property named geometry".into());
        }
        let (encoding, geometry) = geoarrow(&self.geometry)?;
        let metadata = serde_json::json!({"crs": crs, "crs_type": "authority_code"}).to_string();
        let field = Field::new("geometry", geometry.data_type().clone(), true).with_metadata(
            [
                (EXTENSION_NAME.to_string(), encoding.to_string()),
                (EXTENSION_METADATA.to_string(), metadata),
            ]
            .into(),
        );
        let mut fields: Vec<Field> = self
            .schema
            .fields()
            .iter()
            .map(|f| f.as_ref().clone())
            .collect();
        fields.push(field);
        let mut columns = self.columns.clone();
        columns.push(geometry);
        RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).map_err(|e| e.to_string())
    }
}

/// The dimension class of a type code: 0 points, 1 lines, 2 polygons.
fn class(k: u8) -> Option<u8> {
    match k {
        kind::POINT => Some(0),
        kind::LINESTRING | kind::MULTILINESTRING => Some(1),
        kind::POLYGON | kind::MULTIPOLYGON => Some(2),
        _ => None,
    }
}

/// The GeoArrow extension name and array of `g`.
fn geoarrow(g: &Geometries) -> Result<(&'static str, ArrayRef), String> {
    let present = |k: &u8| *k != kind::NONE;
    let classes: Vec<Option<u8>> = g
        .kinds
        .iter()
        .filter(|k| present(k))
        .map(|&k| class(k))
        .collect();
    if classes.iter().any(Option::is_none) {
        return Err(
            "a layer with multipoints or geometry collections has no GeoArrow native encoding yet"
                .into(),
        );
    }
    let class = classes.first().copied().flatten().unwrap_or(1);
    if classes.iter().any(|&c| c != Some(class)) {
        return Err(
            "a layer mixing points, lines and polygons has no GeoArrow native encoding".into(),
        );
    }
    let nulls = g
        .kinds
        .iter()
        .any(|k| !present(k))
        .then(|| NullBuffer::from_iter(g.kinds.iter().map(present)));
    let xy = |values: ScalarBuffer<f64>, nulls: Option<NullBuffer>| -> Result<ArrayRef, String> {
        let field = Arc::new(Field::new("xy", DataType::Float64, false));
        let values = Arc::new(Float64Array::new(values, None));
        Ok(Arc::new(
            FixedSizeListArray::try_new(field, 2, values, nulls).map_err(|e| e.to_string())?,
        ))
    };
    let list = |name: &str,
                offsets: OffsetBuffer<i32>,
                values: ArrayRef,
                nulls: Option<NullBuffer>|
     -> Result<ArrayRef, String> {
        let field = Arc::new(Field::new(name, values.data_type().clone(), false));
        Ok(Arc::new(
            ListArray::try_new(field, offsets, values, nulls).map_err(|e| e.to_string())?,
        ))
    };
    match class {
        0 => {
            // One coordinate per row: a null row needs a placeholder.
            let values = if nulls.is_none() {
                g.xy.clone()
            } else {
                let mut v = Vec::with_capacity(2 * g.len());
                for row in 0..g.len() {
                    v.extend_from_slice(
                        match g.row_xy(row) {
                            [x, y] => [*x, *y],
                            _ => [f64::NAN, f64::NAN],
                        }
                        .as_slice(),
                    );
                }
                ScalarBuffer::from(v)
            };
            Ok(("geoarrow.point", xy(values, nulls)?))
        }
        1 => {
            // Every linear row is one part: row -> its lines directly.
            let row_lines = (0..=g.len()).map(|r| g.rings[g.parts[r] as usize]);
            let offsets = OffsetBuffer::new(ScalarBuffer::from_iter(row_lines));
            let vertices = list("vertices", g.coords.clone(), xy(g.xy.clone(), None)?, None)?;
            Ok((
                "geoarrow.multilinestring",
                list("linestrings", offsets, vertices, nulls)?,
            ))
        }
        _ => {
            let vertices = list("vertices", g.coords.clone(), xy(g.xy.clone(), None)?, None)?;
            let rings = list("rings", g.rings.clone(), vertices, None)?;
            Ok((
                "geoarrow.multipolygon",
                list("polygons", g.parts.clone(), rings, nulls)?,
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::feature::Feature;
    use crate::table::Table;
    use arrow_array::{Array, FixedSizeListArray, Float64Array, ListArray};
    use geo::{polygon, Geometry};

    fn table(geoms: Vec<Option<Geometry<f64>>>) -> Table {
        let features: Vec<Feature> = geoms
            .into_iter()
            .enumerate()
            .map(|(i, geometry)| Feature {
                geometry,
                properties: serde_json::json!({"comid": i}).as_object().unwrap().clone(),
                ..Default::default()
            })
            .collect();
        Table::from_features(&features).unwrap()
    }

    fn coords(a: &dyn Array) -> Vec<f64> {
        let mut a = a;
        while let Some(l) = a.as_any().downcast_ref::<ListArray>() {
            a = l.values().as_ref();
        }
        let fsl = a.as_any().downcast_ref::<FixedSizeListArray>().unwrap();
        fsl.values()
            .as_any()
            .downcast_ref::<Float64Array>()
            .unwrap()
            .values()
            .to_vec()
    }

    #[test]
    fn lines_polygons_and_points_export_natively() {
        let line = Geometry::LineString(vec![(1., 2.), (3., 4.)].into());
        let multi = Geometry::MultiLineString(geo::MultiLineString(vec![
            vec![(5., 6.), (7., 8.)].into(),
            vec![(9., 10.), (11., 12.)].into(),
        ]));
        let batch = table(vec![Some(line), None, Some(multi)])
            .to_record_batch("EPSG:4269")
            .unwrap();
        assert_eq!(batch.num_rows(), 3);
        assert_eq!(batch.schema().field(0).name(), "comid");
        let field = batch.schema().field(1).clone();
        assert_eq!(
            field.metadata()["ARROW:extension:name"],
            "geoarrow.multilinestring"
        );
        let geometry = batch
            .column(1)
            .as_any()
            .downcast_ref::<ListArray>()
            .unwrap();
        assert!(geometry.is_null(1));
        assert_eq!(geometry.value_offsets(), &[0, 1, 1, 3]);
        assert_eq!(
            coords(geometry),
            [1., 2., 3., 4., 5., 6., 7., 8., 9., 10., 11., 12.]
        );

        let square = polygon![(x: 0., y: 0.), (x: 1., y: 0.), (x: 1., y: 1.), (x: 0., y: 0.)];
        let batch = table(vec![Some(Geometry::Polygon(square))])
            .to_record_batch("EPSG:4269")
            .unwrap();
        let field = batch.schema().field(1).clone();
        assert_eq!(
            field.metadata()["ARROW:extension:name"],
            "geoarrow.multipolygon"
        );
        assert_eq!(coords(batch.column(1).as_ref()).len(), 8);

        let p = |x: f64| Some(Geometry::Point(geo::point!(x: x, y: -x)));
        let batch = table(vec![p(1.), None, p(2.)])
            .to_record_batch("EPSG:4269")
            .unwrap();
        let points = batch
            .column(1)
            .as_any()
            .downcast_ref::<FixedSizeListArray>()
            .unwrap();
        assert!(points.is_null(1) && points.is_valid(2));
        let xy = coords(points);
        assert_eq!((xy[0], xy[1], xy[4], xy[5]), (1., -1., 2., -2.));
    }

    #[test]
    fn mixed_dimensions_are_refused() {
        let line = Geometry::LineString(vec![(1., 2.), (3., 4.)].into());
        let point = Geometry::Point(geo::point!(x: 1., y: 2.));
        assert!(table(vec![Some(line), Some(point)])
            .to_record_batch("EPSG:4269")
            .is_err());
    }
}
