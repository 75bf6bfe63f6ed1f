//! Writing layers to a new GeoPackage 1.2 file in NAD83 (EPSG:4269).
//!
//! Each layer is written from its [`Table`]: the SQLite column types come
//! from the Arrow schema, each blob is encoded from the row's flat
//! coordinates ([`blob::write_row`]) into one reused buffer, and the values
//! are bound straight from the columns, so no feature is built.
//!
//! The file is built under a temporary name in the target's directory and
//! renamed over the target only once complete, so a failure leaves no partial
//! file and writing over the GeoPackage being read (even while it is open)
//! never destroys it.

use std::collections::HashSet;
use std::path::Path;

use arrow_schema::DataType;
use rusqlite::types::Null;
use rusqlite::{params, Connection, Statement};

use super::blob;
use super::layer::quote;
use crate::cancel::Stop;
use crate::output::TempFile;
use crate::table::column::Scalar;
use crate::table::geometry::kind;
use crate::table::{Column, Table};
use crate::{Error, Result};

/// The SRS every layer is written in.
const SRS_ID: i32 = 4269;
/// `PRAGMA application_id` of a GeoPackage: "GPKG".
const APPLICATION_ID: i32 = 0x4750_4B47;
/// `PRAGMA user_version` of GeoPackage 1.2.0.
const USER_VERSION: i32 = 10200;
/// The name of the geometry column of every layer.
const GEOM: &str = "geom";

const NAD83_WKT: &str = r#"GEOGCS["NAD83",DATUM["North_American_Datum_1983",SPHEROID["GRS 1980",6378137,298.257222101,AUTHORITY["EPSG","7019"]],AUTHORITY["EPSG","6269"]],PRIMEM["Greenwich",0,AUTHORITY["EPSG","8901"]],UNIT["degree",0.0174532925199433,AUTHORITY["EPSG","9122"]],AXIS["Latitude",NORTH],AXIS["Longitude",EAST],AUTHORITY["EPSG","4269"]]"#;
const WGS84_WKT: &str = r#"GEOGCS["WGS 84",DATUM["WGS_1984",SPHEROID["WGS 84",6378137,298.257223563,AUTHORITY["EPSG","7030"]],AUTHORITY["EPSG","6326"]],PRIMEM["Greenwich",0,AUTHORITY["EPSG","8901"]],UNIT["degree",0.0174532925199433,AUTHORITY["EPSG","9122"]],AXIS["Latitude",NORTH],AXIS["Longitude",EAST],AUTHORITY["EPSG","4326"]]"#;

/// The mandatory tables of GeoPackage 1.2 (section 1.1), as the standard gives them.
const SCHEMA: &str = "
CREATE TABLE gpkg_spatial_ref_sys (srs_name TEXT NOT NULL, srs_id INTEGER NOT NULL PRIMARY KEY,
  organization TEXT NOT NULL, organization_coordsys_id INTEGER NOT NULL, definition TEXT NOT NULL,
  description TEXT);
CREATE TABLE gpkg_contents (table_name TEXT NOT NULL PRIMARY KEY, data_type TEXT NOT NULL,
  identifier TEXT UNIQUE, description TEXT DEFAULT '',
  last_change DATETIME NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
  min_x DOUBLE, min_y DOUBLE, max_x DOUBLE, max_y DOUBLE, srs_id INTEGER,
  CONSTRAINT fk_gc_r_srs_id FOREIGN KEY (srs_id) REFERENCES gpkg_spatial_ref_sys(srs_id));
CREATE TABLE gpkg_geometry_columns (table_name TEXT NOT NULL, column_name TEXT NOT NULL,
  geometry_type_name TEXT NOT NULL, srs_id INTEGER NOT NULL, z TINYINT NOT NULL, m TINYINT NOT NULL,
  CONSTRAINT pk_geom_cols PRIMARY KEY (table_name, column_name),
  CONSTRAINT uk_gc_table_name UNIQUE (table_name),
  CONSTRAINT fk_gc_tn FOREIGN KEY (table_name) REFERENCES gpkg_contents(table_name),
  CONSTRAINT fk_gc_srs FOREIGN KEY (srs_id) REFERENCES gpkg_spatial_ref_sys (srs_id));
CREATE TABLE gpkg_tile_matrix_set (table_name TEXT NOT NULL PRIMARY KEY, srs_id INTEGER NOT NULL,
  min_x DOUBLE NOT NULL, min_y DOUBLE NOT NULL, max_x DOUBLE NOT NULL, max_y DOUBLE NOT NULL,
  CONSTRAINT fk_gtms_table_name FOREIGN KEY (table_name) REFERENCES gpkg_contents(table_name),
  CONSTRAINT fk_gtms_srs FOREIGN KEY (srs_id) REFERENCES gpkg_spatial_ref_sys (srs_id));
CREATE TABLE gpkg_tile_matrix (table_name TEXT NOT NULL, zoom_level INTEGER NOT NULL,
  matrix_width INTEGER NOT NULL, matrix_height INTEGER NOT NULL, tile_width INTEGER NOT NULL,
  tile_height INTEGER NOT NULL, pixel_x_size DOUBLE NOT NULL, pixel_y_size DOUBLE NOT NULL,
  CONSTRAINT pk_ttm PRIMARY KEY (table_name, zoom_level),
  CONSTRAINT fk_tmm_table_name FOREIGN KEY (table_name) REFERENCES gpkg_contents(table_name));
CREATE TABLE gpkg_extensions (table_name TEXT, column_name TEXT, extension_name TEXT NOT NULL,
  definition TEXT NOT NULL, scope TEXT NOT NULL,
  CONSTRAINT ge_tce UNIQUE (table_name, column_name, extension_name));
";

/// Writes `layers` (table name, rows in NAD83 lon/lat) to a new GeoPackage
/// at `path`, each table with an integer key `fid` (1, 2, ... in row order),
/// a geometry column `geom` (SRS EPSG:4269) and one column per property
/// column, in schema order (INTEGER for integer and boolean columns, REAL
/// for float, TEXT otherwise; JSON columns as their JSON text, strings
/// unquoted), plus an R-tree index.
///
/// Errors: `InvalidArgument` when `path` does not end in `.gpkg` or a layer
/// name is empty, reserved or repeated; `Exists` when the file exists and
/// `overwrite` is false (the file is left untouched); `Io`/`Gpkg` on failure,
/// after which no partial file remains. `Cancelled` soon after `stop` is
/// cancelled, and nothing is left either.
pub fn write(path: &Path, layers: &[(&str, &Table)], overwrite: bool, stop: &Stop) -> Result<()> {
    check_output_path(path, overwrite)?;
    check_names(layers)?;
    let temp = TempFile::beside(path)?;
    build(temp.path(), layers, stop)
        .map_err(|e| e.context(&format!("Writing {}", path.display())))?;
    stop.check()?;
    temp.persist(path, overwrite)
}

/// Checks, before any work, that a GeoPackage could be written at `path`:
/// it must end in `.gpkg` (`InvalidArgument`), must not exist when
/// `overwrite` is false (`Exists`), and must not be a special file (`Io`).
pub fn check_output_path(path: &Path, overwrite: bool) -> Result<()> {
    let is_gpkg = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("gpkg"));
    if !is_gpkg {
        return Err(Error::InvalidArgument(format!(
            "The GeoPackage path {} does not end in .gpkg.",
            path.display()
        )));
    }
    crate::output::check_target(path, overwrite)
}

fn check_names(layers: &[(&str, &Table)]) -> Result<()> {
    let mut seen = HashSet::new();
    for (name, _) in layers {
        let lower = name.to_ascii_lowercase();
        if name.trim().is_empty()
            || lower.starts_with("gpkg_")
            || lower.starts_with("rtree_")
            || lower.starts_with("sqlite_")
        {
            return Err(Error::InvalidArgument(format!(
                "\"{name}\" cannot name a GeoPackage layer (empty, or a reserved gpkg_/rtree_/sqlite_ prefix)."
            )));
        }
        if !seen.insert(lower) {
            return Err(Error::InvalidArgument(format!(
                "The layer name \"{name}\" is given twice (names are case-insensitive)."
            )));
        }
    }
    Ok(())
}

/// Writes the whole GeoPackage into `file` (created empty) in one transaction.
fn build(file: &Path, layers: &[(&str, &Table)], stop: &Stop) -> Result<()> {
    let mut conn = Connection::open(file)?;
    super::reader::watch_connection(&conn, stop);
    conn.execute_batch(&format!(
        "PRAGMA application_id = {APPLICATION_ID}; PRAGMA user_version = {USER_VERSION}; PRAGMA journal_mode = OFF;"
    ))?;
    let tx = conn.transaction()?;
    tx.execute_batch(SCHEMA)?;
    let srs = [
        (
            "Undefined cartesian SRS",
            -1,
            "NONE",
            -1,
            "undefined",
            "undefined cartesian coordinate reference system",
        ),
        (
            "Undefined geographic SRS",
            0,
            "NONE",
            0,
            "undefined",
            "undefined geographic coordinate reference system",
        ),
        (
            "WGS 84 geodetic",
            4326,
            "EPSG",
            4326,
            WGS84_WKT,
            "longitude/latitude coordinates in decimal degrees on the WGS 84 spheroid",
        ),
        (
            "NAD83",
            4269,
            "EPSG",
            4269,
            NAD83_WKT,
            "longitude/latitude coordinates in decimal degrees on the NAD83 datum",
        ),
    ];
    for (name, id, org, code, def, desc) in srs {
        tx.execute(
            "INSERT INTO gpkg_spatial_ref_sys VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![name, id, org, code, def, desc],
        )?;
    }
    for (name, table) in layers {
        write_layer(&tx, name, table).map_err(|e| e.context(&format!("layer {name}")))?;
    }
    tx.commit()?;
    conn.close().map_err(|(_, e)| Error::from(e))?;
    std::fs::File::open(file)
        .and_then(|f| f.sync_all())
        .map_err(|e| crate::error::io_error(file, e))
}

/// The SQLite type of a property column of this type.
fn sql_type(t: &DataType) -> &'static str {
    match t {
        DataType::Int64 | DataType::Boolean => "INTEGER",
        DataType::Float64 => "REAL",
        _ => "TEXT",
    }
}

/// The property columns written: every column of the schema except those
/// named like the key and geometry columns (`fid`, `geom`, any case). SQLite
/// compares column names ignoring case, so a name equal to an earlier one
/// ignoring case (`comid` after `COMID`) is written with `_2` (`_3`, ...)
/// appended.
fn columns(table: &Table) -> Vec<(String, &'static str, Column<'_>)> {
    let mut taken = HashSet::new();
    (table.schema().fields().iter().enumerate())
        .filter(|(_, f)| {
            !f.name().eq_ignore_ascii_case("fid") && !f.name().eq_ignore_ascii_case(GEOM)
        })
        .filter_map(|(i, f)| {
            let name = (1..)
                .map(|n| match n {
                    1 => f.name().clone(),
                    n => format!("{}_{n}", f.name()),
                })
                .find(|n| taken.insert(n.to_ascii_lowercase()))?;
            Some((name, sql_type(f.data_type()), table.column_at(i)?))
        })
        .collect()
}

/// The declared geometry type of a layer: the table's own declaration
/// ([`Table::declared_geometry`], which holds for every row, so an empty
/// layer has its type too), else the common type of the rows with a
/// geometry, else GEOMETRY.
fn layer_type(table: &Table) -> &str {
    if let Some(declared) = table.declared_geometry() {
        return declared;
    }
    let mut kinds = (table.geometries().kinds.iter()).filter(|&&k| k != kind::NONE);
    match kinds.next() {
        Some(&first) if kinds.all(|&k| k == first) => kind::name(first),
        _ => "GEOMETRY",
    }
}

/// Binds `v` as parameter `i` of `stmt`: booleans as 0 or 1, JSON text as
/// is except a JSON string, which is bound unquoted.
fn bind(stmt: &mut Statement, i: usize, v: Scalar) -> rusqlite::Result<()> {
    match v {
        Scalar::Null => stmt.raw_bind_parameter(i, Null),
        Scalar::Bool(b) => stmt.raw_bind_parameter(i, i64::from(b)),
        Scalar::Int(n) => stmt.raw_bind_parameter(i, n),
        Scalar::UInt(n) => stmt.raw_bind_parameter(i, i64::try_from(n).ok()),
        Scalar::Float(f) => stmt.raw_bind_parameter(i, f),
        Scalar::Str(s) => stmt.raw_bind_parameter(i, s),
        Scalar::Json(s) => match s
            .starts_with('"')
            .then(|| serde_json::from_str::<String>(s))
        {
            Some(Ok(unquoted)) => stmt.raw_bind_parameter(i, unquoted),
            _ => stmt.raw_bind_parameter(i, s),
        },
    }
}

fn write_layer(tx: &rusqlite::Transaction, name: &str, table: &Table) -> Result<()> {
    let cols = columns(table);
    let (quoted, rtree) = (quote(name), quote(&format!("rtree_{name}_{GEOM}")));
    let gtype = layer_type(table);
    let defs: String = cols
        .iter()
        .map(|(c, t, _)| format!(", {} {t}", quote(c)))
        .collect();
    tx.execute_batch(&format!(
        "CREATE TABLE {quoted} (fid INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL, {GEOM} {gtype}{defs});
         CREATE VIRTUAL TABLE {rtree} USING rtree(id, minx, maxx, miny, maxy);"
    ))?;
    let bbox = table.bbox();
    tx.execute(
        "INSERT INTO gpkg_contents (table_name, data_type, identifier, min_x, min_y, max_x, max_y, srs_id)
         VALUES (?1, 'features', ?1, ?2, ?3, ?4, ?5, ?6)",
        params![name, bbox.map(|b| b[0]), bbox.map(|b| b[1]), bbox.map(|b| b[2]), bbox.map(|b| b[3]), SRS_ID],
    )?;
    tx.execute(
        "INSERT INTO gpkg_geometry_columns VALUES (?1, ?2, ?3, ?4, 0, 0)",
        params![name, GEOM, gtype, SRS_ID],
    )?;
    tx.execute(
        "INSERT INTO gpkg_extensions VALUES (?1, ?2, 'gpkg_rtree_index', 'http://www.geopackage.org/spec120/#extension_rtree', 'write-only')",
        params![name, GEOM],
    )?;
    let placeholders: String = (0..cols.len()).map(|i| format!(", ?{}", i + 3)).collect();
    let names: String = cols
        .iter()
        .map(|(c, _, _)| format!(", {}", quote(c)))
        .collect();
    let mut insert = tx.prepare(&format!(
        "INSERT INTO {quoted} (fid, {GEOM}{names}) VALUES (?1, ?2{placeholders})"
    ))?;
    let mut index = tx.prepare(&format!("INSERT INTO {rtree} VALUES (?1, ?2, ?3, ?4, ?5)"))?;
    let geometries = table.geometries();
    let mut geom = Vec::new();
    for row in 0..table.len() {
        let fid = row as i64 + 1;
        insert.raw_bind_parameter(1, fid)?;
        geom.clear();
        if blob::write_row(geometries, row, SRS_ID, &mut geom) {
            insert.raw_bind_parameter(2, geom.as_slice())?;
        } else {
            insert.raw_bind_parameter(2, Null)?;
        }
        for (i, (_, _, c)) in cols.iter().enumerate() {
            bind(&mut insert, i + 3, c.scalar(row))?;
        }
        insert.raw_execute()?;
        // No bounding box for NULL or empty geometries: they stay out of the index.
        if let Some(b) = geometries.bbox(row) {
            index.execute(params![fid, b[0], b[2], b[1], b[3]])?;
        }
    }
    tx.execute_batch(&rtree_triggers(name))?;
    Ok(())
}

/// The six R-tree maintenance triggers of GeoPackage 1.2 (extension F.3),
/// created after the explicit fill: they call ST_* functions that only
/// GeoPackage-aware SQLite builds (GDAL, SpatiaLite) provide.
fn rtree_triggers(name: &str) -> String {
    let (t, r) = (quote(name), quote(&format!("rtree_{name}_{GEOM}")));
    let trigger = |suffix: &str| quote(&format!("rtree_{name}_{GEOM}_{suffix}"));
    let g = quote(GEOM);
    let bounds =
        format!("NEW.fid, ST_MinX(NEW.{g}), ST_MaxX(NEW.{g}), ST_MinY(NEW.{g}), ST_MaxY(NEW.{g})");
    format!(
        "CREATE TRIGGER {ins} AFTER INSERT ON {t} WHEN (new.{g} NOT NULL AND NOT ST_IsEmpty(NEW.{g}))
           BEGIN INSERT OR REPLACE INTO {r} VALUES ({bounds}); END;
         CREATE TRIGGER {u1} AFTER UPDATE OF {g} ON {t} WHEN OLD.fid = NEW.fid AND (NEW.{g} NOTNULL AND NOT ST_IsEmpty(NEW.{g}))
           BEGIN INSERT OR REPLACE INTO {r} VALUES ({bounds}); END;
         CREATE TRIGGER {u2} AFTER UPDATE OF {g} ON {t} WHEN OLD.fid = NEW.fid AND (NEW.{g} ISNULL OR ST_IsEmpty(NEW.{g}))
           BEGIN DELETE FROM {r} WHERE id = OLD.fid; END;
         CREATE TRIGGER {u3} AFTER UPDATE ON {t} WHEN OLD.fid != NEW.fid AND (NEW.{g} NOTNULL AND NOT ST_IsEmpty(NEW.{g}))
           BEGIN DELETE FROM {r} WHERE id = OLD.fid; INSERT OR REPLACE INTO {r} VALUES ({bounds}); END;
         CREATE TRIGGER {u4} AFTER UPDATE ON {t} WHEN OLD.fid != NEW.fid AND (NEW.{g} ISNULL OR ST_IsEmpty(NEW.{g}))
           BEGIN DELETE FROM {r} WHERE id IN (OLD.fid, NEW.fid); END;
         CREATE TRIGGER {del} AFTER DELETE ON {t} WHEN old.{g} NOT NULL
           BEGIN DELETE FROM {r} WHERE id = OLD.fid; END;",
        ins = trigger("insert"),
        u1 = trigger("update1"),
        u2 = trigger("update2"),
        u3 = trigger("update3"),
        u4 = trigger("update4"),
        del = trigger("delete"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::feature::Feature;
    use geo::{line_string, point, Geometry};
    use serde_json::{json, Value};

    fn table(features: &[Feature]) -> Table {
        Table::from_features(features).unwrap()
    }

    #[test]
    fn column_types_come_from_the_schema() {
        let f = |p: Value| Feature {
            properties: p.as_object().unwrap().clone(),
            ..Default::default()
        };
        let t = table(&[
            f(json!({"comid": 1, "len": 1, "name": "a", "mix": 1, "none": null, "FID": 3})),
            f(json!({"comid": 2, "len": 2.5, "name": null, "mix": "x", "flag": true})),
        ]);
        let cols = columns(&t);
        let mut got: Vec<(&str, &str)> = cols.iter().map(|(c, t, _)| (c.as_str(), *t)).collect();
        got.sort_by_key(|(c, _)| *c);
        assert_eq!(
            got,
            [
                ("comid", "INTEGER"),
                ("flag", "INTEGER"),
                ("len", "REAL"),
                ("mix", "TEXT"),
                ("name", "TEXT"),
                ("none", "TEXT")
            ]
        );
    }

    #[test]
    fn case_distinct_columns_are_both_written() {
        let page = br#"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Point","coordinates":[1,2]},"properties":{"COMID":1,"comid":2,"Comid_2":3}}]}"#;
        let t = crate::table::decode::decode_page(page).unwrap().table;
        let dir = std::env::temp_dir().join(format!("hydroplot-case-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("case.gpkg");
        write(&path, &[("flowline", &t)], true, &Stop::never()).unwrap();
        let conn = Connection::open(&path).unwrap();
        let row: (i64, i64, i64) = conn
            .query_row(
                "SELECT \"COMID\", \"comid_2\", \"Comid_2_2\" FROM flowline",
                [],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .unwrap();
        assert_eq!(row, (1, 2, 3));
        drop(conn);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn mixed_geometry_types_declare_geometry() {
        let p = |x| Feature {
            geometry: Some(Geometry::Point(point!(x: x, y: 0.0))),
            ..Default::default()
        };
        assert_eq!(
            layer_type(&table(&[p(1.0), p(2.0), Feature::default()])),
            "POINT"
        );
        let l = Feature {
            geometry: Some(Geometry::LineString(
                line_string![(x: 0.0, y: 0.0), (x: 1.0, y: 1.0)],
            )),
            ..Default::default()
        };
        assert_eq!(layer_type(&table(&[p(1.0), l])), "GEOMETRY");
        assert_eq!(layer_type(&Table::default()), "GEOMETRY");
    }
}
