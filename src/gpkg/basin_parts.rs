//! Basin parts: outlines of parts of the network, stored in the user's file
//! by `hydroplot index`, so that a large basin is folded from a few stored
//! outlines and the catchments near its outlet instead of from every one of
//! its catchments.
//!
//! The network is cut into parts of at least [`REACHES_PER_PART`] reaches
//! ([`Network::parts`]). Each part's catchments are folded, and what their
//! union leaves (its rings, directed, the coordinates as read, bit for bit)
//! is stored with their box in the table [`BASIN_PARTS`], one row per part,
//! keyed by the comid of the reach that closes it. A basin adds the rings of
//! the parts it holds whole to the edge counts of its other catchments
//! ([`crate::table::dissolve::Dissolver::add_lines`]): the same edges are
//! counted, so the basin is the same, bit for bit.
//!
//! Stale parts are never used. The table is registered in `gpkg_contents`
//! (as attributes, described as complete only once filled), and triggers on
//! the flowline and catchment tables delete that registration at any insert,
//! update or delete, whichever program makes it. The parts count only while
//! the registration says complete and all six triggers are in place; a
//! table dropped and made again has lost its triggers. Catchments in another
//! CRS than NAD83 lon/lat, or flowlines whose comids repeat, get no parts.

use super::blob;
use super::fold::Fold;
use super::index::is_sqlite;
use super::layer::quote;
use super::reader::{watch_connection, GeoPackage};
use crate::cancel::Stop;
use crate::collection::Collection;
use crate::feature::union_bbox;
use crate::network::{IdSet, Network};
use crate::table::geometry::GeometryBuilder;
use crate::table::Table;
use crate::{Error, Result};
use geo::{Geometry, MultiLineString};
use rusqlite::{params, Connection, OpenFlags, OptionalExtension, TransactionBehavior};
use std::path::Path;

/// The table of the parts this library stores.
pub const BASIN_PARTS: &str = "hydroplot_basin_parts";

/// The fewest reaches of a part: a basin smaller than this is folded from
/// its catchments alone, as without parts.
pub const REACHES_PER_PART: usize = 4096;

/// The registration's description once the parts are all written.
const COMPLETE: &str = "hydroplot basin parts (complete): outlines of parts of the network, for large basins; made by `hydroplot index`";

/// The registration's description while the parts are being made.
const BEING_MADE: &str = "hydroplot basin parts (being made)";

/// The writes that make stored parts stale.
const EVENTS: [&str; 3] = ["insert", "update", "delete"];

/// Spatial reference of the stored rings (NAD83 lon/lat, as read).
const SRS_ID: i32 = 4269;

/// What [`create_basin_parts`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PartsOutcome {
    /// `parts` parts were stored.
    Created { parts: usize },
    /// The file has current parts already (`parts` of them); nothing changed.
    Existing { parts: usize },
    /// The file gets no parts, for the reason `why`; nothing changed.
    Skipped { why: String },
}

/// The name of the trigger that marks the parts stale on `event` in `table`.
fn trigger_name(event: &str, table: &str) -> String {
    format!("{BASIN_PARTS}_stale_on_{event}_{table}")
}

/// The flowline and catchment tables, as the file spells them.
fn watched_tables(gpkg: &GeoPackage) -> Result<[String; 2]> {
    let flowlines = gpkg.layer(Collection::FlowlineNetwork)?.table.clone();
    let catchments = gpkg.layer(Collection::Catchment)?.table.clone();
    Ok([flowlines, catchments])
}

impl GeoPackage {
    /// The comids of the reaches that close the stored basin parts, when
    /// the file has current ones; `None` when it has none (never made,
    /// being made, or stale: the flowlines or catchments changed since).
    pub fn basin_parts(&self) -> Result<Option<IdSet>> {
        let Ok(tables) = watched_tables(self) else {
            return Ok(None);
        };
        let conn = self.connection();
        let sql = |e: rusqlite::Error| self.context(e.into());
        let complete: Option<String> = conn
            .query_row(
                "SELECT description FROM gpkg_contents WHERE table_name = ?1",
                [BASIN_PARTS],
                |r| r.get(0),
            )
            .optional()
            .map_err(sql)?;
        if complete.as_deref() != Some(COMPLETE) {
            return Ok(None);
        }
        let mut trigger = conn
            .prepare(
                "SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND name = ?1 AND tbl_name = ?2 COLLATE NOCASE",
            )
            .map_err(sql)?;
        for table in &tables {
            for event in EVENTS {
                let found: i64 = trigger
                    .query_row(params![trigger_name(event, table), table], |r| r.get(0))
                    .map_err(sql)?;
                if found == 0 {
                    return Ok(None);
                }
            }
        }
        let mut stmt = conn
            .prepare(&format!("SELECT comid FROM {}", quote(BASIN_PARTS)))
            .map_err(sql)?;
        let comids = stmt
            .query_map([], |r| r.get::<_, i64>(0))
            .map_err(sql)?
            .collect::<rusqlite::Result<IdSet>>()
            .map_err(sql)?;
        Ok(Some(comids))
    }

    /// Adds the stored parts closed by the reaches `comids` (of
    /// [`GeoPackage::basin_parts`]) to `fold`: their rings to its edge
    /// counts, their boxes to its box. One part is held at a time.
    pub fn add_basin_parts(&self, comids: &[i64], fold: &mut Fold) -> Result<()> {
        let sql = |e: rusqlite::Error| self.context(e.into());
        let mut stmt = self
            .connection()
            .prepare(&format!(
                "SELECT min_x, min_y, max_x, max_y, outline FROM {} WHERE comid = ?1",
                quote(BASIN_PARTS)
            ))
            .map_err(sql)?;
        let mut builder = GeometryBuilder::default();
        for &comid in comids {
            let mut rows = stmt.query([comid]).map_err(sql)?;
            let row = rows.next().map_err(sql)?.ok_or_else(|| {
                self.context(Error::Gpkg(format!(
                    "{BASIN_PARTS} has no part {comid}; run `hydroplot index` again"
                )))
            })?;
            let corners: [Option<f64>; 4] = [0, 1, 2, 3].map(|i| row.get(i).ok().flatten());
            if let [Some(x0), Some(y0), Some(x1), Some(y1)] = corners {
                fold.bbox = Some(
                    fold.bbox
                        .map_or([x0, y0, x1, y1], |b| union_bbox(b, [x0, y0, x1, y1])),
                );
            }
            if let Some(outline) = row
                .get_ref(4)
                .map_err(sql)?
                .as_blob_or_null()
                .map_err(|e| sql(e.into()))?
            {
                blob::parse_into(outline, &mut builder, None).map_err(|e| self.context(e))?;
                let rings = builder.finish();
                fold.dissolver.add_lines(&rings, &[0]);
                builder = rings.recycle();
            }
        }
        Ok(())
    }
}

/// Stores the basin parts of the NHDPlus GeoPackage at `path`, parts of at
/// least `reaches_per_part` reaches ([`REACHES_PER_PART`] by default),
/// unless it has current ones. Idempotent. The file is checked as
/// [`super::create_topology_index`] checks it (a refused file is left
/// untouched); one without a catchment layer, or too small for a single
/// part, gets none. A cancel of `stop` ends with
/// `Error::Cancelled` and leaves parts that are never used (the next run
/// makes them again). A write to the flowlines or catchments while the
/// parts are made is an `Error::Gpkg` (run again).
///
/// `progress` hears (parts made, parts in all) on the calling thread, from
/// (0, n) before the first part to (n, n) after the last.
pub fn create_basin_parts(
    path: &Path,
    reaches_per_part: usize,
    stop: &Stop,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<PartsOutcome> {
    let refuse = |why: String| {
        Error::Gpkg(format!(
            "{}; basin parts are only for NHDPlus GeoPackages, nothing was changed.",
            why.trim_end_matches('.')
        ))
    };
    if !is_sqlite(path)? {
        return Err(refuse(format!(
            "{} is not an SQLite database",
            path.display()
        )));
    }
    let mut gpkg = GeoPackage::open(path).map_err(|e| refuse(e.to_string()))?;
    gpkg.watch(stop);
    gpkg.topology_columns().map_err(|e| refuse(e.to_string()))?;
    let skip = |why: &str| Ok(PartsOutcome::Skipped { why: why.into() });
    let Ok(tables) = watched_tables(&gpkg) else {
        return skip("it has no catchment layer");
    };
    if let Some(parts) = gpkg.basin_parts()? {
        return Ok(PartsOutcome::Existing { parts: parts.len() });
    }
    if gpkg.layer(Collection::Catchment)?.to_lonlat.is_some() {
        return skip("its catchments are not in NAD83 longitude/latitude");
    }
    let reaches = gpkg.read_topology()?;
    let mut comids: Vec<i64> = reaches.iter().map(|r| r.comid).collect();
    comids.sort_unstable();
    if comids.windows(2).any(|w| w[0] == w[1]) {
        return skip("a comid repeats among its flowlines");
    }
    let network = Network::new(&reaches);
    let closing = network.parts(reaches_per_part);
    if closing.is_empty() {
        return skip(&format!(
            "no basin in it has {reaches_per_part} reaches, the fewest a part holds"
        ));
    }
    let writer = PartsWriter::begin(path, &tables, stop)?;
    let every_row = |t: &Table| vec![(0..t.len()).collect()];
    let mut parts = Vec::with_capacity(closing.len());
    for (&c, part) in closing.iter().zip(network.reaches_of_parts(&closing)) {
        progress(parts.len(), closing.len());
        stop.check()?;
        let ids: Vec<i64> = part.iter().map(|&i| reaches[i].comid).collect();
        let fold = gpkg.fold_catchments(&ids, 1, &every_row)?;
        let fold = fold.into_iter().next().unwrap_or_default();
        let rings = fold.dissolver.rings();
        let outline = (!rings.is_empty())
            .then(|| blob::write(&Geometry::MultiLineString(MultiLineString(rings)), SRS_ID));
        parts.push((reaches[c].comid, fold.bbox, outline));
    }
    progress(parts.len(), closing.len());
    drop(gpkg);
    writer.finish(&parts)
}

/// Removes the basin parts in the transaction `tx`: the table, its
/// registration and its triggers, whichever are there. True when any was.
pub fn remove_basin_parts(tx: &rusqlite::Transaction) -> rusqlite::Result<bool> {
    let triggers: Vec<String> = tx
        .prepare(&format!(
            "SELECT name FROM sqlite_master WHERE type = 'trigger' AND name GLOB '{BASIN_PARTS}_stale_on_*'"
        ))?
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    for name in &triggers {
        tx.execute_batch(&format!("DROP TRIGGER {}", quote(name)))?;
    }
    let table: i64 = tx.query_row(
        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?1",
        [BASIN_PARTS],
        |r| r.get(0),
    )?;
    tx.execute_batch(&format!("DROP TABLE IF EXISTS {}", quote(BASIN_PARTS)))?;
    let registered = tx.execute(
        "DELETE FROM gpkg_contents WHERE table_name = ?1",
        [BASIN_PARTS],
    )?;
    Ok(!triggers.is_empty() || table > 0 || registered > 0)
}

/// A part as stored: the comid closing it, its catchments' box and the
/// blob of its rings (none when its catchments cover nothing).
type StoredPart = (i64, Option<[f64; 4]>, Option<Vec<u8>>);

/// The two writes of [`create_basin_parts`]: first the triggers, an empty
/// table and its registration as being made; then, if the registration is
/// still there (nothing was written to the watched tables meanwhile), the
/// parts and the registration as complete.
struct PartsWriter {
    conn: Connection,
    path: std::path::PathBuf,
}

impl PartsWriter {
    fn begin(path: &Path, tables: &[String; 2], stop: &Stop) -> Result<PartsWriter> {
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|e| unwritable(path, e))?;
        watch_connection(&conn, stop);
        let mut sql = format!(
            "DROP TABLE IF EXISTS {t};
             CREATE TABLE {t} (comid INTEGER PRIMARY KEY NOT NULL, min_x REAL, min_y REAL, max_x REAL, max_y REAL, outline BLOB);
             DELETE FROM gpkg_contents WHERE table_name = '{BASIN_PARTS}';
             INSERT INTO gpkg_contents (table_name, data_type, identifier, description) VALUES ('{BASIN_PARTS}', 'attributes', '{BASIN_PARTS}', '{BEING_MADE}');",
            t = quote(BASIN_PARTS)
        );
        for table in tables {
            for event in EVENTS {
                let name = quote(&trigger_name(event, table));
                sql.push_str(&format!(
                    "DROP TRIGGER IF EXISTS {name};
                     CREATE TRIGGER {name} AFTER {event} ON {} BEGIN DELETE FROM gpkg_contents WHERE table_name = '{BASIN_PARTS}'; END;",
                    quote(table)
                ));
            }
        }
        let mut writer = PartsWriter {
            conn,
            path: path.to_path_buf(),
        };
        writer.transaction(|tx| tx.execute_batch(&sql))?;
        Ok(writer)
    }

    /// Stores `parts` (closing comid, box, rings) and marks them complete.
    fn finish(mut self, parts: &[StoredPart]) -> Result<PartsOutcome> {
        let mut changed = false;
        self.transaction(|tx| {
            let registered: i64 = tx.query_row(
                "SELECT count(*) FROM gpkg_contents WHERE table_name = ?1 AND description = ?2",
                [BASIN_PARTS, BEING_MADE],
                |r| r.get(0),
            )?;
            if registered == 0 {
                changed = true;
                return Ok(());
            }
            let mut insert = tx.prepare(&format!(
                "INSERT INTO {} (comid, min_x, min_y, max_x, max_y, outline) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                quote(BASIN_PARTS)
            ))?;
            for (comid, bbox, outline) in parts {
                let corner = |i: usize| bbox.map(|b| b[i]);
                insert.execute(params![comid, corner(0), corner(1), corner(2), corner(3), outline])?;
            }
            tx.execute(
                "UPDATE gpkg_contents SET description = ?2 WHERE table_name = ?1",
                [BASIN_PARTS, COMPLETE],
            )?;
            Ok(())
        })?;
        if changed {
            return Err(Error::Gpkg(format!(
                "{}: the flowlines or catchments changed while the basin parts were made; run `hydroplot index` again.",
                self.path.display()
            )));
        }
        Ok(PartsOutcome::Created { parts: parts.len() })
    }

    /// Runs `f` in a write transaction, committed when it succeeds.
    fn transaction(
        &mut self,
        f: impl FnOnce(&rusqlite::Transaction) -> rusqlite::Result<()>,
    ) -> Result<()> {
        let path = self.path.clone();
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| unwritable(&path, e))?;
        f(&tx).map_err(|e| unwritable(&path, e))?;
        tx.commit().map_err(|e| unwritable(&path, e))
    }
}

/// A write's error: `Cancelled` when the call was, else `Error::Io`.
fn unwritable(path: &Path, e: rusqlite::Error) -> Error {
    match e.sqlite_error_code() {
        Some(rusqlite::ErrorCode::OperationInterrupted) => Error::from(e),
        _ => Error::Io(format!(
            "{}: the basin parts cannot be stored: {e}",
            path.display()
        )),
    }
}
