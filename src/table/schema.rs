//! A layer's declared schema, and a table conformed to it: one schema per
//! layer whatever the source (`docs/columnar.md`, "Declared schemas").
//!
//! The sources write the same values with different types: a GeoPackage
//! gives each value in its SQLite storage class, a service page in the kind
//! of its JSON literal (the fabric service writes NHDPlusV2's integers as
//! `5.0`), and the column builder ([`super::column`]) types each column
//! after what it got. [`Table::conform`] then gives every declared field its
//! declared type: an integer sent as `5.0` becomes the integer 5, and a
//! value the type cannot hold (`5.5` or `"abc"` for an integer) is an error
//! naming the layer, the field, the feature and the value, never a column
//! of another type.

use super::column::{exact_i64, json_text, scalar_of, Scalar};
use super::geometry::kind;
use super::{is_json, name_index, Table};
use arrow_array::{new_null_array, Array, ArrayRef, Float64Array, Int64Array, StringArray};
use arrow_schema::{DataType, Field, Schema};
use std::collections::HashMap;
use std::sync::Arc;

/// The table schema metadata naming the declared geometry type of a
/// conformed table's rows (`"MULTILINESTRING"`); the Arrow export puts it on
/// the geometry field, the GeoPackage writer declares it.
pub const GEOMETRY_TYPE: &str = "hydroplot:geometry_type";

/// The type of a declared field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldType {
    /// A 64-bit integer (Arrow int64, SQLite INTEGER).
    Integer,
    /// A 64-bit float (Arrow float64, SQLite REAL).
    Real,
    /// UTF-8 text (Arrow utf8, SQLite TEXT).
    Text,
}

impl FieldType {
    /// The Arrow type of a column of this type.
    pub fn data_type(self) -> DataType {
        match self {
            FieldType::Integer => DataType::Int64,
            FieldType::Real => DataType::Float64,
            FieldType::Text => DataType::Utf8,
        }
    }

    /// The type as errors and the documentation name it.
    pub fn name(self) -> &'static str {
        match self {
            FieldType::Integer => "integer",
            FieldType::Real => "real",
            FieldType::Text => "text",
        }
    }
}

/// A layer's declared fields, in order, and its geometry type. Static
/// data: the declarations live in `collection` and `plot`.
#[derive(Debug, Clone, Copy)]
pub struct LayerSchema {
    /// The fields: lower-case name and type.
    pub fields: &'static [(&'static str, FieldType)],
    /// The geometry type code ([`kind`]): a multi type takes the rows of its
    /// single type too (promoted).
    pub geometry: u8,
    /// The field that names a feature in errors (`comid`), if any.
    pub key: Option<&'static str>,
}

impl LayerSchema {
    /// The declared type of the field `name` (lower case).
    pub fn field(&self, name: &str) -> Option<FieldType> {
        self.fields
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, t)| *t)
    }
}

impl Table {
    /// The table under `schema`: each declared field in declared order,
    /// with its declared type (the table's column of that name, matched as
    /// [`Table::column`] matches, converted where its type differs; a field
    /// the table lacks is a column of nulls, unless `wanted` leaves it out);
    /// then the table's other columns as they are, in their order. Rows of
    /// the single type of a multi geometry type become that multi type; the
    /// geometry type is declared in the schema metadata ([`GEOMETRY_TYPE`])
    /// when every row with a geometry then has it.
    ///
    /// `wanted`: the declared fields added when the table lacks them
    /// (`None`: all); a field the table has is always kept.
    ///
    /// Conversions: to integer, an integral float below 2^53 and text that
    /// reads as an integer; to real, an integer below 2^53 and text that
    /// reads as a finite number; to text, a number or boolean as its JSON
    /// text. Anything else (`5.5` or `"abc"` for an integer, a boolean for
    /// a number, an array or object for any type) is an error naming
    /// `layer`, the field, the feature (by the schema's key, else its id,
    /// else its row) and the value. Columns already of their type are
    /// shared, not copied.
    pub fn conform(
        &self,
        schema: &LayerSchema,
        layer: &str,
        wanted: Option<&[&str]>,
    ) -> Result<Table, String> {
        let rows = self.len();
        let mut used = vec![false; self.columns.len()];
        let mut fields = Vec::with_capacity(schema.fields.len() + self.columns.len());
        let mut columns = Vec::with_capacity(fields.capacity());
        for &(name, ty) in schema.fields {
            let found = self.column_index(name).filter(|&i| !used[i]);
            let array = match found {
                Some(i) => {
                    used[i] = true;
                    let field = self.schema.field(i);
                    convert(&self.columns[i], is_json(field), ty).map_err(|(row, value)| {
                        format!(
                            "layer {layer}, field {name} ({}), feature {}: {value} is not {}",
                            ty.name(),
                            self.feature_label(schema, name, row),
                            match ty {
                                FieldType::Integer => "an integer",
                                FieldType::Real => "a number",
                                FieldType::Text => "text",
                            }
                        )
                    })?
                }
                None if wanted.is_none_or(|w| w.contains(&name)) => {
                    new_null_array(&ty.data_type(), rows)
                }
                None => continue,
            };
            fields.push(Field::new(name, ty.data_type(), true));
            columns.push(array);
        }
        for (i, column) in self.columns.iter().enumerate() {
            if !used[i] {
                fields.push(self.schema.field(i).clone());
                columns.push(column.clone());
            }
        }
        let geometry = self.geometry.promoted_to(schema.geometry);
        let fits = geometry
            .kinds
            .iter()
            .all(|&k| k == kind::NONE || k == schema.geometry);
        let mut metadata = HashMap::new();
        if fits {
            let name = kind::name(schema.geometry).to_string();
            metadata.insert(GEOMETRY_TYPE.to_string(), name);
        }
        let index = name_index(&fields)?;
        Ok(Table {
            schema: Arc::new(Schema::new(fields).with_metadata(metadata)),
            columns,
            index: Arc::new(index),
            ids: self.ids.clone(),
            geometry,
        })
    }

    /// The declared geometry type of a conformed table (`"MULTIPOLYGON"`),
    /// when every row fits it ([`Table::conform`]).
    pub fn declared_geometry(&self) -> Option<&str> {
        self.schema
            .metadata()
            .get(GEOMETRY_TYPE)
            .map(String::as_str)
    }

    /// How an error names the feature at `row`: by the schema's key unless
    /// that is the field in error (`comid 13293454`), else by its id, else
    /// by its row.
    fn feature_label(&self, schema: &LayerSchema, field: &str, row: usize) -> String {
        let key = schema.key.filter(|&k| k != field);
        if let Some((k, c)) = key.and_then(|k| Some((k, self.column(k)?))) {
            if !matches!(c.scalar(row), Scalar::Null) {
                return format!("{k} {}", json_text(c.scalar(row)));
            }
        }
        match self.id(row) {
            Some(id) => format!("id {id}"),
            None => format!("row {}", row + 1),
        }
    }
}

/// The row and the JSON text of the first value of a column that its
/// declared type cannot hold.
type Misfit = (usize, String);

/// `array` (JSON text when `json`) as a column of `ty` (module doc).
fn convert(array: &ArrayRef, json: bool, ty: FieldType) -> Result<ArrayRef, Misfit> {
    let rows = array.len();
    let same = match ty {
        FieldType::Integer => array.data_type() == &DataType::Int64,
        FieldType::Real => array.data_type() == &DataType::Float64,
        FieldType::Text => array.data_type() == &DataType::Utf8 && !json,
    };
    if same {
        return Ok(array.clone());
    }
    if array.data_type() == &DataType::Null {
        return Ok(new_null_array(&ty.data_type(), rows));
    }
    let misfit = |row: usize, v: Scalar| Err((row, json_text(v)));
    let values = (0..rows).map(|row| (row, scalar_of(array, json, row)));
    Ok(match ty {
        FieldType::Integer => {
            let mut out = Vec::with_capacity(rows);
            for (row, v) in values {
                out.push(match v {
                    Scalar::Null => None,
                    Scalar::Int(i) => Some(i),
                    Scalar::Float(f) => match exact_i64(f) {
                        Some(i) => Some(i),
                        None => return misfit(row, v),
                    },
                    Scalar::Str(s) => match s.trim().parse() {
                        Ok(i) => Some(i),
                        Err(_) => return misfit(row, v),
                    },
                    _ => return misfit(row, v),
                });
            }
            Arc::new(Int64Array::from(out))
        }
        FieldType::Real => {
            let mut out = Vec::with_capacity(rows);
            for (row, v) in values {
                out.push(match v {
                    Scalar::Null => None,
                    Scalar::Float(f) => Some(f),
                    Scalar::Int(i) if exact_i64(i as f64) == Some(i) => Some(i as f64),
                    Scalar::Str(s) => match s.trim().parse::<f64>() {
                        Ok(f) if f.is_finite() => Some(f),
                        _ => return misfit(row, v),
                    },
                    _ => return misfit(row, v),
                });
            }
            Arc::new(Float64Array::from(out))
        }
        FieldType::Text => {
            let mut out = Vec::with_capacity(rows);
            for (row, v) in values {
                out.push(match v {
                    Scalar::Null => None,
                    Scalar::Str(s) => Some(s.to_string()),
                    Scalar::Bool(_) | Scalar::Int(_) | Scalar::UInt(_) | Scalar::Float(_) => {
                        Some(json_text(v))
                    }
                    Scalar::Json(_) => return misfit(row, v),
                });
            }
            Arc::new(StringArray::from(out))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::table_of_rows;
    use serde_json::json;

    const SCHEMA: LayerSchema = LayerSchema {
        fields: &[
            ("comid", FieldType::Integer),
            ("streamorde", FieldType::Integer),
            ("lengthkm", FieldType::Real),
            ("reachcode", FieldType::Text),
            ("pathtimema", FieldType::Real),
        ],
        geometry: kind::MULTILINESTRING,
        key: Some("comid"),
    };

    fn line() -> Option<geo::Geometry<f64>> {
        Some(geo::Geometry::LineString(vec![(0., 0.), (1., 1.)].into()))
    }

    fn conformed(rows: Vec<serde_json::Value>) -> Result<Table, String> {
        let t = table_of_rows(rows.into_iter().map(|p| (p, None, line())));
        t.conform(&SCHEMA, "flowline", None)
    }

    fn types(t: &Table) -> Vec<(String, DataType)> {
        (t.schema().fields().iter())
            .map(|f| (f.name().clone(), f.data_type().clone()))
            .collect()
    }

    #[test]
    fn declared_fields_come_first_typed_then_the_others_as_they_are() {
        let a = conformed(vec![
            json!({"extra": "x", "streamorde": 5.0, "comid": 7, "lengthkm": 1}),
        ]);
        let b = conformed(vec![
            json!({"reachcode": "07", "streamorde": 5, "comid": 7.0}),
        ]);
        let (a, b) = (a.unwrap(), b.unwrap());
        let declared: Vec<(String, DataType)> = (SCHEMA.fields.iter())
            .map(|(n, t)| (n.to_string(), t.data_type()))
            .collect();
        assert_eq!(types(&a)[..5], declared[..]);
        assert_eq!(types(&a)[5], ("extra".to_string(), DataType::Utf8));
        assert_eq!(types(&b), declared);
        assert_eq!(a.get_i64(0, "streamorde"), Some(5));
        assert_eq!(a.get_f64(0, "lengthkm"), Some(1.0));
        assert_eq!(b.get_str(0, "pathtimema"), None);
        assert_eq!(a.declared_geometry(), Some("MULTILINESTRING"));
        assert_eq!(a.geometries().kinds[0], kind::MULTILINESTRING);
        let only = table_of_rows([(json!({"comid": 1}), None, line())]);
        let narrow = only
            .conform(&SCHEMA, "flowline", Some(&["reachcode"]))
            .unwrap();
        let names: Vec<String> = types(&narrow).into_iter().map(|(n, _)| n).collect();
        assert_eq!(names, ["comid", "reachcode"]);
    }

    #[test]
    fn an_empty_table_has_every_declared_field() {
        let t = Table::default().conform(&SCHEMA, "flowline", None).unwrap();
        assert_eq!(t.len(), 0);
        assert_eq!(t.schema().fields().len(), SCHEMA.fields.len());
        assert_eq!(t.declared_geometry(), Some("MULTILINESTRING"));
    }

    #[test]
    fn a_value_its_type_cannot_hold_is_an_error_naming_it() {
        let err = conformed(vec![
            json!({"comid": 1, "streamorde": 5.0}),
            json!({"comid": 13293454, "streamorde": 5.5}),
        ])
        .unwrap_err();
        assert_eq!(
            err,
            "layer flowline, field streamorde (integer), feature comid 13293454: 5.5 is not an integer"
        );
        let err = conformed(vec![json!({"comid": 1}), json!({"comid": "abc"})]).unwrap_err();
        assert_eq!(
            err,
            "layer flowline, field comid (integer), feature row 2: \"abc\" is not an integer"
        );
        let err = conformed(vec![json!({"lengthkm": true})]).unwrap_err();
        assert!(err.contains("field lengthkm (real)") && err.contains("true is not a number"));
        let err = conformed(vec![json!({"comid": 3, "reachcode": [1]})]).unwrap_err();
        assert!(err.contains("feature comid 3: [1] is not text"), "{err}");
    }

    #[test]
    fn a_geometry_of_another_family_leaves_the_type_undeclared() {
        let point = Some(geo::Geometry::Point(geo::point!(x: 1.0, y: 2.0)));
        let t = table_of_rows([(json!({}), None, point), (json!({}), None, line())]);
        let t = t.conform(&SCHEMA, "flowline", None).unwrap();
        assert_eq!(t.declared_geometry(), None);
    }
}
