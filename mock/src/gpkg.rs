//! The mock's GeoPackage reading: plain SQL through rusqlite, so that the
//! data it serves never passes through the library's reader.
//!
//! A layer is found by the names `Collection::gpkg_names` gives
//! (case-insensitive) among the feature tables of `gpkg_contents`. A row
//! becomes a [`Feature`]: its integer primary key as `id`, its geometry
//! column parsed by [`super::wkb`], and every other column as a property
//! under its lower-case name (of names equal but for case, the first in the
//! table): integers and finite reals as JSON numbers, text as strings,
//! anything else as null. Only longitude/latitude layers are read: the
//! mock serves coordinates as stored.

use super::feature::Feature;
use super::wkb::parse_blob;
use hydroplot::collection::Collection;
use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags, OptionalExtension};
use serde_json::{Map, Number, Value};
use std::path::Path;

/// A GeoPackage opened read-only, with its feature tables' names.
pub struct GeoPackage {
    conn: Connection,
    tables: Vec<String>,
}

/// What a layer's rows are read with.
struct Layer {
    /// `SELECT key, geometry, columns... FROM table ORDER BY key`.
    select: String,
    /// The property name of each selected column after the first two;
    /// `None` for a column whose name an earlier one already has.
    names: Vec<Option<String>>,
}

impl GeoPackage {
    /// Opens `path` read-only and lists its feature tables.
    pub fn open(path: &Path) -> Result<GeoPackage, String> {
        let fail = |e: rusqlite::Error| e.to_string();
        let conn =
            Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY).map_err(fail)?;
        let tables = conn
            .prepare(
                "SELECT table_name FROM gpkg_contents WHERE data_type = 'features' COLLATE NOCASE",
            )
            .and_then(|mut s| s.query_map([], |r| r.get(0))?.collect())
            .map_err(fail)?;
        Ok(GeoPackage { conn, tables })
    }

    /// The features of the layer of `collection` in primary-key order;
    /// `None` when the file has no such layer.
    pub fn read(&self, collection: Collection) -> Option<Result<Vec<Feature>, String>> {
        let table = collection
            .gpkg_names()
            .iter()
            .find_map(|name| self.tables.iter().find(|t| t.eq_ignore_ascii_case(name)))?;
        Some(
            self.read_table(table)
                .map_err(|e| format!("layer {table}: {e}")),
        )
    }

    fn read_table(&self, table: &str) -> Result<Vec<Feature>, String> {
        let layer = self.describe(table)?;
        let mut statement = self
            .conn
            .prepare(&layer.select)
            .map_err(|e| e.to_string())?;
        let mut rows = statement.query([]).map_err(|e| e.to_string())?;
        let mut features = Vec::new();
        while let Some(row) = rows.next().map_err(|e| e.to_string())? {
            let value = |i: usize| row.get_ref(i).map_err(|e| e.to_string());
            let id = match value(0)? {
                ValueRef::Integer(fid) => Some(Value::from(fid)),
                _ => None,
            };
            let geometry = match value(1)? {
                ValueRef::Null => None,
                ValueRef::Blob(blob) => parse_blob(blob).map_err(|e| format!("row {id:?}: {e}"))?,
                _ => return Err(format!("row {id:?}: the geometry is not a blob")),
            };
            let mut properties = Map::new();
            for (i, name) in layer.names.iter().enumerate() {
                if let Some(name) = name {
                    properties.insert(name.clone(), json_of(value(i + 2)?));
                }
            }
            features.push(Feature {
                id,
                geometry,
                properties,
            });
        }
        Ok(features)
    }

    /// The geometry column, key and property columns of `table`, checking
    /// that its coordinates are longitude/latitude.
    fn describe(&self, table: &str) -> Result<Layer, String> {
        let (geometry, srs_id): (String, i64) = self
            .conn
            .query_row(
                "SELECT column_name, srs_id FROM gpkg_geometry_columns WHERE table_name = ?1 COLLATE NOCASE",
                [table],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .map_err(|e| format!("no row in gpkg_geometry_columns ({e})"))?;
        if !self.is_lon_lat(srs_id)? {
            return Err(format!(
                "srs_id {srs_id} is not longitude/latitude, which the mock serves as stored"
            ));
        }
        let mut key = None;
        let mut columns = Vec::new();
        let mut info = (self.conn)
            .prepare(&format!("PRAGMA table_info({})", quote(table)))
            .map_err(|e| e.to_string())?;
        let mut rows = info.query([]).map_err(|e| e.to_string())?;
        while let Some(row) = rows.next().map_err(|e| e.to_string())? {
            let column = |i| row.get::<_, String>(i).map_err(|e| e.to_string());
            let (name, kind) = (column(1)?, column(2)?);
            let primary = row.get::<_, i64>(5).map_err(|e| e.to_string())? == 1;
            if primary && kind.eq_ignore_ascii_case("INTEGER") {
                key = Some(name);
            } else if !name.eq_ignore_ascii_case(&geometry) {
                columns.push(name);
            }
        }
        let key = key.unwrap_or_else(|| "rowid".into());
        let mut seen = std::collections::HashSet::new();
        let names = (columns.iter())
            .map(|c| Some(c.to_ascii_lowercase()).filter(|n| seen.insert(n.clone())))
            .collect();
        let selected: Vec<String> = [&key, &geometry]
            .into_iter()
            .chain(&columns)
            .map(|c| quote(c))
            .collect();
        Ok(Layer {
            select: format!(
                "SELECT {} FROM {} ORDER BY {}",
                selected.join(", "),
                quote(table),
                quote(&key)
            ),
            names,
        })
    }

    /// Whether `srs_id` is a geographic CRS: 0 ("undefined geographic") or
    /// a WKT definition of one (`GEOGCS[`, WKT2's `GEOGCRS[`/`GEODCRS[`).
    fn is_lon_lat(&self, srs_id: i64) -> Result<bool, String> {
        if srs_id == 0 {
            return Ok(true);
        }
        let definition: Option<String> = self
            .conn
            .query_row(
                "SELECT definition FROM gpkg_spatial_ref_sys WHERE srs_id = ?1",
                [srs_id],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| e.to_string())?;
        let wkt = definition
            .unwrap_or_default()
            .trim_start()
            .to_ascii_uppercase();
        Ok(["GEOGCS[", "GEOGCRS[", "GEODCRS["]
            .iter()
            .any(|p| wkt.starts_with(p)))
    }
}

/// A column value as JSON: integers and finite reals as numbers, text as
/// a string (invalid UTF-8 replaced), NULL, blobs and non-finite reals as null.
fn json_of(value: ValueRef) -> Value {
    match value {
        ValueRef::Integer(i) => Value::from(i),
        ValueRef::Real(f) => Number::from_f64(f).map_or(Value::Null, Value::Number),
        ValueRef::Text(t) => Value::String(String::from_utf8_lossy(t).into_owned()),
        ValueRef::Null | ValueRef::Blob(_) => Value::Null,
    }
}

/// An SQL identifier in double quotes.
fn quote(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every row of the sample's layers is read (the counts of
    /// `sqlite3 tests/data/yahara_sample.gpkg 'SELECT count(*) FROM ...'`).
    #[test]
    fn every_row_of_the_yahara_sample_is_read() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data/yahara_sample.gpkg");
        let gpkg = GeoPackage::open(&path).unwrap();
        let count = |c| gpkg.read(c).unwrap().unwrap().len();
        assert_eq!(count(Collection::FlowlineNetwork), 267);
        assert_eq!(count(Collection::Catchment), 266);
        assert_eq!(count(Collection::Area), 3);
        assert_eq!(count(Collection::FlowlineNonNetwork), 49);
        assert_eq!(count(Collection::Gage), 46);
        assert_eq!(count(Collection::Waterbody), 128);
        let flowlines = gpkg.read(Collection::FlowlineNetwork).unwrap().unwrap();
        assert!(flowlines.iter().all(|f| f.geometry.is_some()));
        // `SELECT fid, COMID, GNIS_NAME, LENGTHKM ... ORDER BY fid LIMIT 1`.
        let first = &flowlines[0];
        assert_eq!(first.id, Some(Value::from(1)));
        assert_eq!(first.properties["comid"], Value::from(13296606));
        assert_eq!(first.properties["gnis_name"], "Yahara River");
        assert_eq!(first.properties["lengthkm"], Value::from(0.091));
        assert!(matches!(
            first.geometry,
            Some(geo::Geometry::MultiLineString(_))
        ));
        assert!(first
            .properties
            .keys()
            .all(|k| *k == k.to_ascii_lowercase()));
        assert!(!first.properties.contains_key("geom") && !first.properties.contains_key("fid"));
    }
}
