//! Layers as columns: one schema per layer (property names interned once,
//! lower-cased unless two differ only in case, see [`TableBuilder::finish`]),
//! typed Arrow columns with validity, and the geometries in flat
//! coordinate buffers. See `docs/columnar.md`.
//!
//! A [`Table`] is immutable and cheap to clone (its buffers are shared
//! `Arc`s); [`TableBuilder`] fills one row at a time, widening a column's
//! type when a row needs it (see [`column`]), and freezes into a `Table`
//! without copying. [`decode`] fills a builder straight from the bytes of an
//! OGC API Features page; [`geojson`] writes one out as GeoJSON, row by
//! row. [`export`] turns a table into the record batches of the Arrow
//! export and of the plot-data cache, and back from the latter.

pub mod column;
pub mod decode;
pub mod dissolve;
mod edge_counts;
mod edge_partitions;
pub mod export;
mod gallop;
pub mod geojson;
pub mod geometry;
mod import;
mod ring_repair;
pub mod schema;
mod scratch;
mod snap;

use crate::feature::{Feature, Properties};
use arrow_array::{Array, ArrayRef, Float64Array, Int64Array, UInt32Array};
use arrow_schema::{Field, Schema, SchemaRef};
use column::{scalar_of, ColumnBuilder, Kind, Scalar};
use geometry::{Geometries, GeometryBuilder};
use std::collections::HashMap;
use std::sync::Arc;

/// The Arrow field metadata naming a column's extension type.
pub const EXTENSION_NAME: &str = "ARROW:extension:name";
/// The canonical extension of UTF-8 columns holding JSON text.
pub const JSON_EXTENSION: &str = "arrow.json";
/// The field metadata holding a column's key as sent, on a column whose
/// name is that key lower-cased (so tables join by the keys as sent:
/// [`Table::concat`]). The Arrow export leaves it out.
pub(crate) const KEY_METADATA: &str = "hydroplot:key";

/// One layer's features as columns. Clones share the buffers.
#[derive(Debug, Clone)]
pub struct Table {
    /// The property columns' fields, first-seen order (names: see
    /// [`TableBuilder::finish`]).
    schema: SchemaRef,
    columns: Vec<ArrayRef>,
    /// Column index by name, and by name lower-cased ([`name_index`]).
    index: Arc<HashMap<Box<str>, usize>>,
    /// The GeoJSON `id` member of each row; `None` when no row has one.
    ids: Option<ArrayRef>,
    geometry: Geometries,
}

/// One property column of a [`Table`], read row by row.
#[derive(Debug, Clone, Copy)]
pub struct Column<'a> {
    array: &'a ArrayRef,
    json: bool,
}

impl<'a> Column<'a> {
    /// The Arrow array.
    pub fn array(&self) -> &'a ArrayRef {
        self.array
    }

    /// The value at `row`.
    pub fn scalar(&self, row: usize) -> Scalar<'a> {
        scalar_of(self.array, self.json, row)
    }

    /// An integer as [`Feature::get_i64`] reads one: integers, integral
    /// floats below 2^53 and numeric strings.
    pub fn i64(&self, row: usize) -> Option<i64> {
        match self.scalar(row) {
            Scalar::Int(i) => Some(i),
            Scalar::Float(f) => column::exact_i64(f),
            Scalar::Str(s) => s.trim().parse().ok(),
            _ => None,
        }
    }

    /// A number as [`Feature::get_f64`] reads one (numbers, numeric strings).
    pub fn f64(&self, row: usize) -> Option<f64> {
        match self.scalar(row) {
            Scalar::Int(i) => Some(i as f64),
            Scalar::Float(f) => Some(f),
            Scalar::Str(s) => s.trim().parse().ok(),
            _ => None,
        }
    }

    /// A string (string values only, as [`Feature::get_str`]).
    pub fn str(&self, row: usize) -> Option<&'a str> {
        match self.scalar(row) {
            Scalar::Str(s) => Some(s),
            _ => None,
        }
    }

    /// Every row's [`Column::i64`], the array's type resolved once (an
    /// integer column is read straight from its buffer).
    pub fn i64_values(&self) -> Vec<Option<i64>> {
        match self.array.as_any().downcast_ref::<Int64Array>() {
            Some(a) => a.iter().collect(),
            None => (0..self.array.len()).map(|r| self.i64(r)).collect(),
        }
    }

    /// The rows' [`Column::i64`] that are some, in row order: an integer
    /// column without nulls copied straight from its buffer.
    pub fn present_i64_values(&self) -> Vec<i64> {
        match self.array.as_any().downcast_ref::<Int64Array>() {
            Some(a) if a.null_count() == 0 => a.values().to_vec(),
            _ => self.i64_values().into_iter().flatten().collect(),
        }
    }

    /// Every row's [`Column::f64`], the array's type resolved once (a
    /// float column is read straight from its buffer).
    pub fn f64_values(&self) -> Vec<Option<f64>> {
        match self.array.as_any().downcast_ref::<Float64Array>() {
            Some(a) => a.iter().collect(),
            None => (0..self.array.len()).map(|r| self.f64(r)).collect(),
        }
    }

    /// The value as JSON.
    pub fn value(&self, row: usize) -> serde_json::Value {
        column::to_value(self.scalar(row))
    }
}

impl Default for Table {
    /// A table of no rows and no columns.
    fn default() -> Table {
        TableBuilder::default()
            .finish()
            .expect("an empty builder always finishes")
    }
}

impl Table {
    /// Rows (features).
    pub fn len(&self) -> usize {
        self.geometry.len()
    }

    /// True when the table has no rows.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The property fields (`arrow.json` metadata on JSON columns).
    pub fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    /// The property column named `name`: the column of exactly that name,
    /// else the one named `name` in lower case, else the first (in schema
    /// order) whose name equals it ignoring ASCII case; NHDPlus names are
    /// matched so (`COMID`, `comid`).
    pub fn column(&self, name: &str) -> Option<Column<'_>> {
        self.column_at(self.column_index(name)?)
    }

    /// The schema position of the column [`Table::column`] finds.
    fn column_index(&self, name: &str) -> Option<usize> {
        match self.index.get(name) {
            Some(&i) => Some(i),
            None => self.index.get(name.to_ascii_lowercase().as_str()).copied(),
        }
    }

    /// The property column at position `i` of the schema.
    pub fn column_at(&self, i: usize) -> Option<Column<'_>> {
        Some(Column {
            array: self.columns.get(i)?,
            json: is_json(self.schema.field(i)),
        })
    }

    /// `name` at `row` as an integer (see [`Column::i64`]).
    pub fn get_i64(&self, row: usize, name: &str) -> Option<i64> {
        self.column(name)?.i64(row)
    }

    /// `name` at `row` as a number (see [`Column::f64`]).
    pub fn get_f64(&self, row: usize, name: &str) -> Option<f64> {
        self.column(name)?.f64(row)
    }

    /// `name` at `row` as a string.
    pub fn get_str(&self, row: usize, name: &str) -> Option<&str> {
        self.column(name)?.str(row)
    }

    /// The GeoJSON `id` of `row`.
    pub fn id(&self, row: usize) -> Option<serde_json::Value> {
        let ids = self.ids.as_ref()?;
        match scalar_of(ids, false, row) {
            Scalar::Null => None,
            v => Some(column::to_value(v)),
        }
    }

    /// The bounding box `[xmin, ymin, xmax, ymax]` of every geometry;
    /// `None` when no row has one.
    pub fn bbox(&self) -> Option<[f64; 4]> {
        self.geometry.bbox_of_all()
    }

    /// The geometries.
    pub fn geometries(&self) -> &Geometries {
        &self.geometry
    }

    /// The geometries, the rest of the table dropped.
    pub fn into_geometries(self) -> Geometries {
        self.geometry
    }

    /// The geometry of `row` as a `geo` geometry (built on each call).
    pub fn geometry(&self, row: usize) -> Option<geo::Geometry<f64>> {
        self.geometry.get(row)
    }

    /// The rows at `indices`, in that order (indices may repeat; each must
    /// be below [`Table::len`]).
    pub fn take(&self, indices: &[usize]) -> Table {
        let idx = UInt32Array::from_iter_values(indices.iter().map(|&i| i as u32));
        let take = |a: &ArrayRef| {
            arrow_select::take::take(a.as_ref(), &idx, None).expect("indices checked by the caller")
        };
        let mut geometry = GeometryBuilder::default();
        geometry
            .extend_from(&self.geometry, indices.iter().copied())
            .expect("a subset holds fewer coordinates than its table");
        Table {
            schema: self.schema.clone(),
            columns: self.columns.iter().map(take).collect(),
            index: self.index.clone(),
            ids: self.ids.as_ref().map(take),
            geometry: geometry.finish(),
        }
    }

    /// The rows where `mask` is true (`mask` has one entry per row).
    pub fn filter(&self, mask: &[bool]) -> Table {
        let rows: Vec<usize> = (0..self.len()).filter(|&i| mask[i]).collect();
        self.take(&rows)
    }

    /// The rows of `tables` one after the other, under the union of their
    /// schemas (first-seen order; a column's type widened as needed; rows
    /// of a table without a column are null there).
    pub fn concat(tables: &[Table]) -> Result<Table, String> {
        let mut b = TableBuilder::default();
        for t in tables {
            b.append_table(t)?;
        }
        b.finish()
    }

    /// The features of the table (properties: every column, null where the
    /// row has no value).
    pub fn to_features(&self) -> Vec<Feature> {
        let cols: Vec<Column> = (0..self.columns.len())
            .filter_map(|i| self.column_at(i))
            .collect();
        (0..self.len())
            .map(|row| {
                let properties: Properties = self
                    .schema
                    .fields()
                    .iter()
                    .zip(&cols)
                    .map(|(f, c)| (f.name().clone(), c.value(row)))
                    .collect();
                Feature {
                    id: self.id(row),
                    geometry: self.geometry(row),
                    properties,
                }
            })
            .collect()
    }

    /// A table of `features` (keys are expected lower case already).
    pub fn from_features(features: &[Feature]) -> Result<Table, String> {
        let mut b = TableBuilder::default();
        let mut buf = String::new();
        for f in features {
            for (k, v) in &f.properties {
                let key = b.key(k);
                b.set(key, column::from_value(v, &mut buf))?;
            }
            if let Some(id) = &f.id {
                b.set_id(column::from_value(id, &mut buf))?;
            }
            match &f.geometry {
                Some(g) => b.geometry.push(g)?,
                None => b.geometry.push_none()?,
            }
            b.end_row();
        }
        b.finish()
    }

    /// Bytes held by the columns and geometries (Arrow buffers; a measure
    /// of the table's memory).
    pub fn heap_bytes(&self) -> usize {
        let arrays: usize = self
            .columns
            .iter()
            .chain(&self.ids)
            .map(|a| a.get_array_memory_size())
            .sum();
        arrays + self.geometry.heap_bytes()
    }
}

/// Column index by field name, plus each name lower-cased where that is
/// not a name itself (to the first such field in schema order); an error
/// when two fields share a name.
pub(crate) fn name_index(fields: &[Field]) -> Result<HashMap<Box<str>, usize>, String> {
    let mut index = HashMap::with_capacity(fields.len());
    for (i, f) in fields.iter().enumerate() {
        if index.insert(f.name().as_str().into(), i).is_some() {
            return Err(format!("column {} is repeated", f.name()));
        }
    }
    for (i, f) in fields.iter().enumerate() {
        index
            .entry(f.name().to_ascii_lowercase().into())
            .or_insert(i);
    }
    Ok(index)
}

/// True when a field holds JSON text (`arrow.json`).
pub fn is_json(field: &Field) -> bool {
    field.metadata().get(EXTENSION_NAME).map(String::as_str) == Some(JSON_EXTENSION)
}

/// A raw (as sent) property key: its spelling and its column (one column
/// per spelling).
#[derive(Debug)]
struct RawKey {
    text: Box<str>,
    column: usize,
}

/// True when two keys are equal; inline for the short keys of property
/// names, where calling `memcmp` costs more than the comparison.
#[inline]
fn same_key(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    // Two possibly overlapping words cover the whole key.
    let word =
        |s: &[u8], at: usize| u64::from_le_bytes(s[at..at + 8].try_into().unwrap_or_default());
    let half =
        |s: &[u8], at: usize| u32::from_le_bytes(s[at..at + 4].try_into().unwrap_or_default());
    match n {
        0 => true,
        1..=3 => a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1],
        4..=7 => half(a, 0) == half(b, 0) && half(a, n - 4) == half(b, n - 4),
        8..=16 => word(a, 0) == word(b, 0) && word(a, n - 8) == word(b, n - 8),
        _ => a == b,
    }
}

/// Builds a [`Table`] row by row: `key`/`set` the properties, `set_id`,
/// push one geometry row, then `end_row`. Owns growing buffers.
#[derive(Debug, Default)]
pub struct TableBuilder {
    /// The key (as sent) of each column.
    column_keys: Vec<Box<str>>,
    by_key: HashMap<Box<str>, usize>,
    columns: Vec<ColumnBuilder>,
    raw: Vec<RawKey>,
    raw_index: HashMap<Box<str>, u32>,
    /// Raw keys of the previous row, in order, and the current row's so far:
    /// features of a page repeat their keys in order, so the next key is
    /// usually predicted without hashing.
    last_order: Vec<u32>,
    order: Vec<u32>,
    ids: ColumnBuilder,
    /// The decoder's scratch: the coordinates of the geometry being read.
    coords: Vec<scratch::Step>,
    /// How the decoder reads property keys.
    keys: scratch::KeyMode,
    /// The geometry of each row; pushed by the filler.
    pub geometry: GeometryBuilder,
    rows: usize,
}

impl TableBuilder {
    /// Rows ended so far.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Measures the box of the rows so far on the calling thread
    /// ([`GeometryBuilder::measure_extent`]): for a share of a layer read
    /// on a thread of its own, so that the tables joined from such shares
    /// ([`TableBuilder::append_table`]) know their box
    /// ([`Table::bbox`]) without a pass over every coordinate on one
    /// thread.
    pub fn measure_extent(&mut self) {
        self.geometry.measure_extent();
    }

    /// Appends every row of `t`, under the union of the schemas (as
    /// [`Table::concat`]).
    pub fn append_table(&mut self, t: &Table) -> Result<(), String> {
        self.append(t, None)
    }

    /// Appends the rows `rows` of `t`, in that order (each below
    /// `t.len()`), under the union of the schemas: a subset of a table
    /// copied once, straight into this one.
    pub fn append_rows(&mut self, t: &Table, rows: &[usize]) -> Result<(), String> {
        self.append(t, Some(rows))
    }

    /// Appends the rows `rows` of `t` (all of them when `None`).
    fn append(&mut self, t: &Table, rows: Option<&[usize]>) -> Result<(), String> {
        let indices = rows.map(|r| UInt32Array::from_iter_values(r.iter().map(|&i| i as u32)));
        let pick = |a: &ArrayRef| match &indices {
            Some(idx) => arrow_select::take::take(a.as_ref(), idx, None)
                .map_err(|e| format!("rows out of the table: {e}")),
            None => Ok(a.clone()),
        };
        for (i, field) in t.schema.fields().iter().enumerate() {
            let key = field.metadata().get(KEY_METADATA).unwrap_or(field.name());
            let col = self.column_keyed(key);
            self.columns[col].pad_to(self.rows)?;
            self.columns[col].append_array(&pick(&t.columns[i])?, is_json(field))?;
        }
        if let Some(ids) = &t.ids {
            self.ids.pad_to(self.rows)?;
            self.ids.append_array(&pick(ids)?, false)?;
        }
        match rows {
            Some(rows) => self
                .geometry
                .extend_from(&t.geometry, rows.iter().copied())?,
            None => self.geometry.append_all(&t.geometry)?,
        }
        self.rows += rows.map_or(t.len(), <[usize]>::len);
        Ok(())
    }

    /// The column of property key `key` (as sent), added when new.
    fn column_keyed(&mut self, key: &str) -> usize {
        if let Some(&c) = self.by_key.get(key) {
            return c;
        }
        let c = self.columns.len();
        self.column_keys.push(key.into());
        self.by_key.insert(key.into(), c);
        self.columns.push(ColumnBuilder::default());
        c
    }

    /// The id of raw property key `raw` (interned once; its own column).
    pub fn key(&mut self, raw: &str) -> u32 {
        let pos = self.order.len();
        let id = match self.last_order.get(pos) {
            Some(&id) if same_key(self.raw[id as usize].text.as_bytes(), raw.as_bytes()) => id,
            _ => match self.raw_index.get(raw) {
                Some(&id) => id,
                None => {
                    let column = self.column_keyed(raw);
                    let id = self.raw.len() as u32;
                    self.raw.push(RawKey {
                        text: raw.into(),
                        column,
                    });
                    self.raw_index.insert(raw.into(), id);
                    id
                }
            },
        };
        self.order.push(id);
        id
    }

    /// [`TableBuilder::key`] of a key's bytes as serde_json's bytes parse
    /// gives them: escapes decoded, nothing checked. The predicted key
    /// needs no check (its spelling was checked when first seen); any other
    /// is checked as a string parse would (no control character, UTF-8).
    /// The decoder reads a key whose escapes decode to a control character
    /// as text instead (see `scratch::KeyMode`).
    #[inline]
    pub(super) fn key_bytes(&mut self, bytes: &[u8]) -> Result<u32, String> {
        if let Some(&id) = self.last_order.get(self.order.len()) {
            if same_key(self.raw[id as usize].text.as_bytes(), bytes) {
                self.order.push(id);
                return Ok(id);
            }
        }
        if bytes.iter().any(|&b| b < 0x20) {
            return Err("a control character in a property key".into());
        }
        let text = std::str::from_utf8(bytes)
            .map_err(|_| "a property key that is not UTF-8".to_string())?;
        Ok(self.key(text))
    }

    /// Sets property `key` of the current row. Keys that differ only in
    /// case fill columns of their own; a repeated key keeps its last value
    /// (as `serde_json` does).
    #[inline]
    pub fn set(&mut self, key: u32, v: Scalar) -> Result<(), String> {
        let RawKey { column, .. } = self.raw[key as usize];
        let c = &mut self.columns[column];
        if c.rows() == self.rows {
            // The common case: the column's first value in this row.
            return c.push(v);
        }
        if c.rows() > self.rows {
            c.truncate(self.rows);
        }
        c.pad_to(self.rows)?;
        c.push(v)
    }

    /// Sets the current row's GeoJSON `id`.
    pub fn set_id(&mut self, v: Scalar) -> Result<(), String> {
        self.ids.truncate(self.rows);
        self.ids.pad_to(self.rows)?;
        self.ids.push(v)
    }

    /// Ends the current row (its geometry must have been pushed).
    pub fn end_row(&mut self) {
        self.rows += 1;
        std::mem::swap(&mut self.last_order, &mut self.order);
        self.order.clear();
    }

    /// Freezes the builder into a table (buffers moved, not copied).
    ///
    /// A column is named by its key lower-cased (`StreamOrde` gives
    /// `streamorde`), unless another key of the table differs from it only
    /// in case: then each of those keys names its column as spelled
    /// (`COMID` and `comid` give two columns, `COMID` and `comid`), so no
    /// value is lost and the names stay distinct.
    pub fn finish(self) -> Result<Table, String> {
        let rows = self.rows;
        let mut spellings: HashMap<String, usize> = HashMap::new();
        for k in &self.column_keys {
            *spellings.entry(k.to_ascii_lowercase()).or_default() += 1;
        }
        let mut fields = Vec::with_capacity(self.columns.len());
        let mut columns = Vec::with_capacity(self.columns.len());
        for (key, mut c) in self.column_keys.into_iter().zip(self.columns) {
            c.pad_to(rows)?;
            let (array, json) = c.finish();
            let lower = key.to_ascii_lowercase();
            let name = if spellings[&lower] > 1 { &*key } else { &lower };
            let mut metadata = HashMap::new();
            if json {
                metadata.insert(EXTENSION_NAME.to_string(), JSON_EXTENSION.to_string());
            }
            if name != &*key {
                metadata.insert(KEY_METADATA.to_string(), key.to_string());
            }
            let field = Field::new(name, array.data_type().clone(), true);
            fields.push(field.with_metadata(metadata));
            columns.push(array);
        }
        let index = name_index(&fields)?;
        let mut ids = self.ids;
        let ids = if ids.kind() == Kind::Null {
            None
        } else {
            ids.pad_to(rows)?;
            Some(ids.finish().0)
        };
        Ok(Table {
            schema: Arc::new(Schema::new(fields)),
            columns,
            index: Arc::new(index),
            ids,
            geometry: self.geometry.finish(),
        })
    }
}

/// A table of test rows: properties (a JSON object), id and geometry each.
#[cfg(test)]
pub(crate) fn table_of_rows(
    rows: impl IntoIterator<
        Item = (
            serde_json::Value,
            Option<serde_json::Value>,
            Option<geo::Geometry<f64>>,
        ),
    >,
) -> Table {
    let features: Vec<Feature> = rows
        .into_iter()
        .map(|(p, id, geometry)| Feature {
            id,
            geometry,
            properties: p.as_object().expect("an object of properties").clone(),
        })
        .collect();
    Table::from_features(&features).expect("test rows make a table")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn feature(props: serde_json::Value, id: Option<serde_json::Value>) -> Feature {
        Feature {
            id,
            geometry: Some(geo::Geometry::Point(geo::point!(x: 1.0, y: 2.0))),
            properties: props.as_object().unwrap().clone(),
        }
    }

    #[test]
    fn features_round_trip_with_nulls_for_missing_properties() {
        let fs = vec![
            feature(json!({"comid": 1, "name": "a"}), Some(json!(1))),
            feature(
                json!({"comid": 2, "extra": [1, {"b": 2}]}),
                Some(json!("two")),
            ),
        ];
        let t = Table::from_features(&fs).unwrap();
        assert_eq!(t.len(), 2);
        assert_eq!(t.get_i64(1, "comid"), Some(2));
        assert_eq!(t.get_str(0, "name"), Some("a"));
        assert_eq!(t.get_str(1, "name"), None);
        let back = t.to_features();
        assert_eq!(back[0].properties["extra"], json!(null));
        assert_eq!(back[1].properties["extra"], json!([1, {"b": 2}]));
        assert_eq!(back[1].properties["name"], json!(null));
        assert_eq!(back[0].id, Some(json!("1")), "mixed ids become text");
        assert_eq!(back[1].id, Some(json!("two")));
        assert_eq!(back[0].geometry, fs[0].geometry);
    }

    #[test]
    fn a_column_read_whole_reads_as_its_rows_do() {
        let t = Table::from_features(&[
            feature(json!({"i": 1, "f": 1.5, "w": 3.0, "s": "7"}), None),
            feature(json!({"i": null, "f": null, "w": 2.5, "s": "x"}), None),
            feature(json!({"i": -4, "f": 2.0, "s": null}), None),
        ])
        .unwrap();
        for name in ["i", "f", "w", "s"] {
            let c = t.column(name).unwrap();
            let rows = 0..t.len();
            let i64s: Vec<_> = rows.clone().map(|r| c.i64(r)).collect();
            let f64s: Vec<_> = rows.map(|r| c.f64(r)).collect();
            assert_eq!(c.i64_values(), i64s, "{name}");
            let present: Vec<i64> = i64s.iter().flatten().copied().collect();
            assert_eq!(c.present_i64_values(), present, "{name}");
            assert_eq!(c.f64_values(), f64s, "{name}");
        }
        let c = t.column("i").unwrap();
        assert_eq!(c.i64_values(), [Some(1), None, Some(-4)]);
        assert_eq!(t.column("w").unwrap().i64_values(), [Some(3), None, None]);
        let whole = Table::from_features(&[
            feature(json!({"i": 7}), None),
            feature(json!({"i": -8}), None),
        ])
        .unwrap();
        assert_eq!(whole.column("i").unwrap().present_i64_values(), [7, -8]);
    }

    #[test]
    fn same_key_agrees_with_byte_equality_at_every_length() {
        for n in 0..24 {
            let a: Vec<u8> = (0..n as u8).map(|i| b'a' + i).collect();
            assert!(same_key(&a, &a.clone()));
            for at in 0..n {
                let mut b = a.clone();
                b[at] = b'_';
                assert!(!same_key(&a, &b), "length {n}, differing at {at}");
            }
            assert!(!same_key(&a, &[a.as_slice(), b"x"].concat()));
        }
    }

    #[test]
    fn take_filter_and_concat() {
        let a = Table::from_features(&[
            feature(json!({"comid": 1}), None),
            feature(json!({"comid": 2}), None),
        ])
        .unwrap();
        let b = Table::from_features(&[feature(json!({"comid": 2.5, "x": "y"}), None)]).unwrap();
        let c = Table::concat(&[a.clone(), b]).unwrap();
        assert_eq!(c.len(), 3);
        assert_eq!(c.get_f64(2, "comid"), Some(2.5));
        assert_eq!(c.get_i64(0, "comid"), Some(1));
        assert_eq!(c.get_str(2, "x"), Some("y"));
        assert!(c.column("x").unwrap().scalar(0) == Scalar::Null);
        let f = c.filter(&[false, true, true]);
        assert_eq!(f.len(), 2);
        assert_eq!(f.get_i64(0, "comid"), Some(2));
        let t = c.take(&[2, 0]);
        assert_eq!(t.get_f64(0, "comid"), Some(2.5));
        assert_eq!(t.geometry(1), a.geometry(0));
    }

    #[test]
    fn rows_appended_from_tables_of_other_schemas_read_as_their_take_concatenated() {
        let line = |x: f64| {
            Some(geo::Geometry::LineString(geo::LineString::from(vec![
                (x, 0.0),
                (x, 1.0),
            ])))
        };
        let features = |rows: &[(serde_json::Value, f64)]| {
            let fs: Vec<Feature> = (rows.iter())
                .map(|(props, x)| Feature {
                    id: Some(json!(*x as i64)),
                    geometry: line(*x),
                    properties: props.as_object().unwrap().clone(),
                })
                .collect();
            Table::from_features(&fs).unwrap()
        };
        let a = features(&[
            (json!({"comid": 1}), 1.0),
            (json!({"comid": 2, "name": "b"}), 2.0),
            (json!({"comid": 3}), 3.0),
        ]);
        let b = features(&[
            (json!({"comid": 4.5, "x": "y"}), 4.0),
            (json!({"comid": 5}), 5.0),
        ]);
        let mut built = TableBuilder::default();
        built.append_rows(&a, &[2, 1]).unwrap();
        built.append_rows(&b, &[]).unwrap();
        built.append_table(&b).unwrap();
        built.append_rows(&a, &[0]).unwrap();
        let built = built.finish().unwrap();
        let expected = Table::concat(&[a.take(&[2, 1]), b.clone(), a.take(&[0])]).unwrap();
        assert_eq!(built.len(), 5);
        assert_eq!(built.to_features(), expected.to_features());
        let comids: Vec<_> = (0..5).map(|r| built.get_f64(r, "comid")).collect();
        assert_eq!(
            comids,
            [Some(3.0), Some(2.0), Some(4.5), Some(5.0), Some(1.0)]
        );
        assert_eq!(built.get_str(1, "name"), Some("b"));
        assert_eq!(built.get_str(2, "x"), Some("y"));
        assert_eq!(built.geometry(4), line(1.0));
    }
}
