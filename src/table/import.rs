//! A table back from the lossless store layout of [`Table::to_store_batch`]
//! (the plot-data cache's Arrow IPC entries). The arrays are taken as they
//! are, so a batch decoded zero-copy from an IPC buffer stays zero-copy;
//! anything that is not exactly that layout is an error, never a panic.

use super::export::{role, ROLE};
use super::geometry::Geometries;
use super::{is_json, name_index, Table};
use arrow_array::cast::AsArray;
use arrow_array::types::UInt8Type;
use arrow_array::{Array, ArrayRef, ListArray, RecordBatch};
use arrow_buffer::OffsetBuffer;
use arrow_schema::{DataType, Field, Schema};
use std::sync::Arc;

impl Table {
    /// The table that [`Table::to_store_batch`] wrote as `batch`: the same
    /// columns (types, `arrow.json`), ids, geometries and schema metadata
    /// (the declared geometry type), sharing the batch's buffers.
    pub fn from_store_batch(batch: &RecordBatch) -> Result<Table, String> {
        let mut fields: Vec<Field> = Vec::new();
        let mut columns: Vec<ArrayRef> = Vec::new();
        let (mut ids, mut kinds, mut geometry, mut collections) = (None, None, None, None);
        for (field, column) in batch.schema().fields().iter().zip(batch.columns()) {
            let bad = |what: &str| format!("column {}: {what}", field.name());
            match field.metadata().get(ROLE).map(String::as_str) {
                None => {
                    if !scalar_type(column.data_type())
                        || (is_json(field) && column.data_type() != &DataType::Utf8)
                    {
                        return Err(bad("not a property type"));
                    }
                    fields.push(field.as_ref().clone());
                    columns.push(column.clone());
                }
                Some(role::ID) if scalar_type(column.data_type()) => ids = Some(column.clone()),
                Some(role::KIND) => {
                    let k = column
                        .as_primitive_opt::<UInt8Type>()
                        .filter(|k| k.null_count() == 0)
                        .ok_or_else(|| bad("not type codes"))?;
                    kinds = Some(k.values().clone());
                }
                Some(role::GEOMETRY) => geometry = Some(column.clone()),
                Some(role::COLLECTION) => {
                    let text = column
                        .as_string_opt::<i32>()
                        .ok_or_else(|| bad("not text"))?;
                    let rows = (0..text.len()).filter(|&r| text.is_valid(r));
                    collections = Some(
                        rows.map(|r| Ok((r, collection(text.value(r)).map_err(|e| bad(&e))?)))
                            .collect::<Result<Vec<_>, String>>()?,
                    );
                }
                Some(_) => return Err(bad("unknown role")),
            }
        }
        let kinds = kinds.ok_or("no geometry type codes")?;
        let geometry = geometry.ok_or("no geometry column")?;
        let (parts, rings) = offsets(&geometry)?;
        let (rings, coords) = offsets(&rings)?;
        let (coords, xy) = offsets(&coords)?;
        let xy = xy
            .as_fixed_size_list_opt()
            .filter(|l| l.value_length() == 2 && l.values().len() == 2 * l.len())
            .and_then(|l| {
                l.values()
                    .as_primitive_opt::<arrow_array::types::Float64Type>()
            })
            .ok_or("the coordinates are not x, y pairs")?
            .values()
            .clone();
        let geometry = Geometries::from_buffers(
            kinds,
            parts,
            rings,
            coords,
            xy,
            collections.unwrap_or_default(),
        )?;
        if geometry.len() != batch.num_rows() {
            return Err("one geometry type code per row expected".into());
        }
        let index = Arc::new(name_index(&fields)?);
        // The schema metadata (the declared geometry type) as written.
        let metadata = batch.schema().metadata().clone();
        Ok(Table {
            schema: Arc::new(Schema::new(fields).with_metadata(metadata)),
            columns,
            index,
            ids,
            geometry,
        })
    }
}

/// The types a property column (or the ids) may have.
fn scalar_type(t: &DataType) -> bool {
    matches!(
        t,
        DataType::Null | DataType::Boolean | DataType::Int64 | DataType::Float64 | DataType::Utf8
    )
}

/// The offsets and values of a list level.
fn offsets(a: &ArrayRef) -> Result<(OffsetBuffer<i32>, ArrayRef), String> {
    let list: &ListArray = a
        .as_list_opt::<i32>()
        .ok_or("the geometry is not nested lists")?;
    Ok((list.offsets().clone(), list.values().clone()))
}

/// A GeometryCollection from its GeoJSON text.
fn collection(text: &str) -> Result<geo::Geometry<f64>, String> {
    let g: geojson::Geometry = text.parse().map_err(|e| format!("{e}"))?;
    geo::Geometry::try_from(g).map_err(|e| format!("{e}"))
}

#[cfg(test)]
mod tests {
    use crate::feature::Feature;
    use crate::table::Table;
    use geo::{point, polygon, Geometry};
    use serde_json::json;

    /// Every property, id and geometry of `t` equals that of `u`.
    fn same(t: &Table, u: &Table) {
        assert_eq!(t.schema(), u.schema());
        assert_eq!(t.to_features(), u.to_features());
        for row in 0..t.len() {
            assert_eq!(t.geometries().kinds[row], u.geometries().kinds[row]);
        }
    }

    #[test]
    fn heterogeneous_tables_round_trip() {
        let poly = polygon![(x: 0., y: 0.), (x: 1., y: 0.), (x: 1., y: 1.), (x: 0., y: 0.)];
        let rows: Vec<(
            serde_json::Value,
            Option<serde_json::Value>,
            Option<Geometry<f64>>,
        )> = vec![
            (
                json!({"a": 1, "b": "x", "nested": {"k": [1, 2]}, "mixed": 1, "flag": true}),
                Some(json!(7)),
                Some(Geometry::Point(point!(x: 1.5, y: 2.5))),
            ),
            (
                json!({"a": 2.5, "nested": "text", "mixed": "one", "nothing": null}),
                None,
                None,
            ),
            (
                json!({"b": null, "mixed": false}),
                Some(json!("eight")),
                Some(Geometry::GeometryCollection(geo::GeometryCollection(vec![
                    Geometry::Polygon(poly.clone()),
                    Geometry::Point(point!(x: 9., y: 9.)),
                ]))),
            ),
            (
                json!({}),
                None,
                Some(Geometry::MultiPolygon(geo::MultiPolygon(vec![
                    poly.clone(),
                    poly,
                ]))),
            ),
        ];
        let t = crate::table::table_of_rows(rows);
        let back = Table::from_store_batch(&t.to_store_batch().unwrap()).unwrap();
        same(&t, &back);
        assert_eq!(back.id(0), Some(json!("7")));
        assert_eq!(back.id(1), None);
        assert_eq!(back.get_str(2, "mixed"), Some("false"));
        assert_eq!(
            back.column("nested").unwrap().value(0),
            json!({"k": [1, 2]})
        );
        // No rows, no columns.
        let empty = Table::default();
        let back = Table::from_store_batch(&empty.to_store_batch().unwrap()).unwrap();
        assert_eq!((back.len(), back.schema().fields().len()), (0, 0));
    }

    #[test]
    fn a_batch_of_another_layout_is_an_error() {
        let t = Table::from_features(&[Feature::default()]).unwrap();
        let batch = t.to_store_batch().unwrap();
        let without_geometry = batch.project(&[0]).unwrap();
        assert!(Table::from_store_batch(&without_geometry).is_err());
        let export = t.to_record_batch("EPSG:4269").unwrap();
        assert!(Table::from_store_batch(&export).is_err());
    }
}
