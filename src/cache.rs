//! The plot-data cache (`cache_data = path`): one SQLite file holding many
//! entries, keyed by the normalized request, so a hit is exactly what a
//! fresh call returns and a changed request never reads a stale entry.
//!
//! Why SQLite: commits are atomic (a crash never leaves half an entry), and
//! several processes may read and write one file at once (the busy timeout
//! serializes writers; nothing is lost). rusqlite is already linked for
//! GeoPackages.
//!
//! A file that is not a hydroplot cache (corrupt, truncated, foreign, or
//! written by a newer format) is reported as a warning and replaced. A
//! location that cannot be written is a warning and no caching: a cache
//! must never fail a plot.

use crate::context::Context;
use crate::feature::{from_geojson_feature, to_geojson};
use crate::plot::{Layer, Outlet, PlotData, PlotRequest};
use crate::{Error, Result};
use rusqlite::{params, Connection, OpenFlags, OptionalExtension};
use serde_json::{json, Value};
use std::path::Path;
use std::time::Duration;

/// Marks our files (`PRAGMA application_id`), "HYDP".
const APPLICATION_ID: i32 = 0x4859_4450;
/// The entry format; a file with a newer one is replaced, never misread.
const FORMAT_VERSION: i32 = 1;
/// How long a writer waits for another process's transaction.
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// An open plot-data cache file.
pub struct PlotCache {
    conn: Connection,
}

impl PlotCache {
    /// Opens (creating when absent) the cache at `path`. Problems become
    /// warnings (pushed to `warnings` and the log): a bad file is replaced;
    /// an unwritable location gives `None`.
    pub fn open(ctx: &Context, path: &Path, warnings: &mut Vec<String>) -> Option<PlotCache> {
        match Self::try_open(path) {
            Ok(cache) => return Some(cache),
            Err(Error::Io(why)) => {
                warnings.push(ctx.warn(format!(
                    "plot-data cache {} cannot be used ({why}); not caching",
                    path.display()
                )));
                return None;
            }
            Err(why) => warnings.push(ctx.warn(format!(
                "plot-data cache {} is not a usable hydroplot cache ({why}); replacing it",
                path.display()
            ))),
        }
        if let Err(e) = std::fs::remove_file(path) {
            warnings.push(ctx.warn(format!(
                "plot-data cache {} cannot be replaced ({e}); not caching",
                path.display()
            )));
            return None;
        }
        match Self::try_open(path) {
            Ok(cache) => Some(cache),
            Err(e) => {
                warnings.push(ctx.warn(format!(
                    "plot-data cache {} cannot be created ({e}); not caching",
                    path.display()
                )));
                None
            }
        }
    }

    fn try_open(path: &Path) -> Result<PlotCache> {
        let dir = path
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        if !dir.is_dir() {
            return Err(Error::Io(format!(
                "directory {} does not exist",
                dir.display()
            )));
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn =
            Connection::open_with_flags(path, flags).map_err(|e| Error::Io(e.to_string()))?;
        conn.busy_timeout(BUSY_TIMEOUT)
            .map_err(|e| Error::Io(e.to_string()))?;
        let cache = PlotCache { conn };
        cache.check_or_init()?;
        Ok(cache)
    }

    /// Accepts our own format, initializes an empty file, rejects the rest.
    /// Runs under the write lock (`BEGIN IMMEDIATE`), so a process that opens
    /// the file while another initializes it waits and then sees it whole,
    /// instead of mistaking a half-read new file for a foreign one.
    fn check_or_init(&self) -> Result<()> {
        self.conn
            .execute_batch("BEGIN IMMEDIATE")
            .map_err(sqlite_error)?;
        let result = self.check_or_init_locked();
        let end = if result.is_ok() { "COMMIT" } else { "ROLLBACK" };
        let ended = self.conn.execute_batch(end).map_err(sqlite_error);
        result.and(ended)
    }

    fn check_or_init_locked(&self) -> Result<()> {
        let read = |sql: &str| -> Result<i64> {
            self.conn
                .query_row(sql, [], |r| r.get(0))
                .map_err(sqlite_error)
        };
        let app = read("PRAGMA application_id")?;
        let version = read("PRAGMA user_version")?;
        let tables = read("SELECT count(*) FROM sqlite_master")?;
        match (app, version) {
            (a, v) if a == i64::from(APPLICATION_ID) && v == i64::from(FORMAT_VERSION) => Ok(()),
            (a, v) if a == i64::from(APPLICATION_ID) => Err(Error::Service(format!(
                "cache format {v}, this library reads {FORMAT_VERSION}"
            ))),
            (0, 0) if tables == 0 => self
                .conn
                .execute_batch(&format!(
                    "CREATE TABLE plot_data (key TEXT PRIMARY KEY, created INTEGER NOT NULL, body BLOB NOT NULL);
                     PRAGMA application_id = {APPLICATION_ID};
                     PRAGMA user_version = {FORMAT_VERSION};"
                ))
                .map_err(sqlite_error),
            _ => Err(Error::Service("a SQLite file of another application".into())),
        }
    }

    /// The cached plot data of `key`, or `None` on a miss. An entry that does
    /// not decode is a miss (and is overwritten by the next store).
    pub fn get(&self, key: &str) -> Option<PlotData> {
        let body: Vec<u8> = self
            .conn
            .query_row(
                "SELECT body FROM plot_data WHERE key = ?1",
                params![key],
                |r| r.get(0),
            )
            .optional()
            .ok()??;
        decode(&body).ok()
    }

    /// Stores `data` under `key` in one transaction.
    pub fn put(&self, key: &str, data: &PlotData) -> Result<()> {
        let created = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as i64);
        self.conn
            .execute(
                "INSERT OR REPLACE INTO plot_data (key, created, body) VALUES (?1, ?2, ?3)",
                params![key, created, encode(data)],
            )
            .map(drop)
            .map_err(|e| Error::Io(format!("writing the plot-data cache: {e}")))
    }
}

/// A file that cannot be written is `Error::Io` (no caching); anything else
/// wrong with it is `Error::Service` (the file is replaced).
fn sqlite_error(e: rusqlite::Error) -> Error {
    match e.sqlite_error_code() {
        Some(
            rusqlite::ErrorCode::ReadOnly
            | rusqlite::ErrorCode::CannotOpen
            | rusqlite::ErrorCode::PermissionDenied
            | rusqlite::ErrorCode::DatabaseBusy
            | rusqlite::ErrorCode::DatabaseLocked,
        ) => Error::Io(e.to_string()),
        _ => Error::Service(e.to_string()),
    }
}

/// The normalized request: everything that changes the plot data, and
/// nothing that only changes the drawing.
pub fn request_key(ctx: &Context, req: &PlotRequest) -> Result<String> {
    let source = match &req.hydro_data {
        Some(path) => {
            let meta = std::fs::metadata(path).map_err(|e| crate::error::io_error(path, e))?;
            let modified = meta
                .modified()
                .ok()
                .and_then(|m| m.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos());
            let canonical = std::fs::canonicalize(path).unwrap_or_else(|_| path.clone());
            json!({"gpkg": canonical.to_string_lossy(), "modified_ns": modified.to_string(), "len": meta.len()})
        }
        None => json!({
            "index": ctx.config.index_url,
            "fabric": ctx.config.fabric_url,
            "names": ctx.config.names.as_str(),
        }),
    };
    let outlets: Vec<Value> = req
        .outlets
        .iter()
        .map(|o| match o {
            Outlet::Comid(c) => json!(["comid", c]),
            Outlet::Site(s) => json!(["site", crate::plot::site_id(s)]),
            Outlet::Feature { source, id } => json!(["feature", source, id]),
            Outlet::Point { x, y, crs } => json!(["point", x, y, crs]),
        })
        .collect();
    Ok(json!({
        "format": FORMAT_VERSION,
        "library": crate::VERSION,
        "source": source,
        "outlets": outlets,
        "comid_set": req.comid_set,
        "bbox": req.bbox,
        "streamorder": req.streamorder,
        "flowline_only": req.flowline_only,
    })
    .to_string())
}

fn encode(data: &PlotData) -> Vec<u8> {
    let mut layers = serde_json::Map::new();
    for layer in Layer::ALL {
        let fc: Value =
            serde_json::from_slice(&to_geojson(data.layer(layer))).expect("our own GeoJSON parses");
        layers.insert(layer.name().into(), fc);
    }
    serde_json::to_vec(&json!({"bbox": data.bbox, "warnings": data.warnings, "layers": layers}))
        .expect("JSON values always serialize")
}

/// Decodes a cache entry; any defect is an error (treated as a miss).
pub fn decode(body: &[u8]) -> Result<PlotData> {
    #[derive(serde::Deserialize)]
    struct Entry {
        bbox: [f64; 4],
        warnings: Vec<String>,
        layers: std::collections::BTreeMap<String, geojson::FeatureCollection>,
    }
    let entry: Entry = serde_json::from_slice(body)
        .map_err(|e| Error::Service(format!("bad cache entry: {e}")))?;
    let mut data = PlotData {
        bbox: entry.bbox,
        warnings: entry.warnings,
        ..Default::default()
    };
    for (name, fc) in entry.layers {
        let layer = Layer::from_name(&name)
            .ok_or_else(|| Error::Service(format!("bad cache entry: layer {name}")))?;
        let features = fc
            .features
            .into_iter()
            .map(from_geojson_feature)
            .collect::<Result<Vec<_>>>()?;
        data.set_layer(layer, features);
    }
    Ok(data)
}
