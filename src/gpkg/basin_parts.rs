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
//! counted, so the basin is the same, bit for bit. The network the parts
//! were cut from is stored beside them (`stored_network.rs`, the table
//! `hydroplot_basin_network`), for plots to read in one step.
//!
//! Stale parts are never used. The table is registered in `gpkg_contents` (as
//! attributes, described as complete only once filled, with a fingerprint of
//! the two tables' definitions and SRS), and triggers on the flowline and
//! catchment tables and on the parts' own two tables delete that registration
//! at any insert, update or delete, whichever program makes it. The parts
//! count only while the registration says complete, its fingerprint matches
//! and all twelve triggers are in place: a table dropped and made again has
//! lost its triggers, a column added or renamed changes the fingerprint. A
//! plot looks again after reading them, so a write meanwhile is an error,
//! never a basin of old parts and new catchments. Catchments in another CRS
//! than NAD83 lon/lat, or flowlines whose comids or hydroseqs repeat, get no
//! parts. (A program that turns SQLite's triggers off can still make them
//! stale unseen.)

use super::blob;
use super::fold::{catchment_key, Fold};
use super::layer::quote;
use super::reader::GeoPackage;
use super::stored_network::{self, BASIN_NETWORK};
use super::user_file::{open_for_writing, open_nhdplus, write_failed};
use crate::cancel::Stop;
use crate::collection::Collection;
use crate::feature::union_bbox;
use crate::network::{IdMap, IdSet, Network, Reach};
use crate::table::geometry::GeometryBuilder;
use crate::table::Table;
use crate::{Error, Result};
use geo::{Geometry, MultiLineString};
use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};
use std::path::Path;

/// The table of the parts this library stores.
pub const BASIN_PARTS: &str = "hydroplot_basin_parts";

/// The fewest reaches of a part: a basin smaller than this is folded from
/// its catchments alone, as without parts.
pub const REACHES_PER_PART: usize = 4096;

/// The registration's description once the parts are all written, before
/// the fingerprint of the tables they were made from ([`fingerprint`]).
const COMPLETE: &str = "hydroplot basin parts (complete): outlines of parts of the network, for large basins; made by `hydroplot index`; tables";

/// The registration's description while the parts are being made, before
/// the run's own token (another run's build is told apart).
const BEING_MADE: &str = "hydroplot basin parts (being made)";

/// What a failed write of the parts could not do, for its error.
const FAILURE: &str = "the basin parts cannot be stored";

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

/// The tables whose writes make the parts stale: the flowlines, the
/// catchments and the parts' own two tables (an edited or deleted part,
/// the stored topology changed).
fn triggered_tables(tables: &[String; 2]) -> [&str; 4] {
    [&tables[0], &tables[1], BASIN_PARTS, BASIN_NETWORK]
}

/// A fingerprint of what the parts were made from and are kept in, beyond
/// the rows the triggers watch: the definitions of the two tables and of
/// the parts' own two (a column added, renamed or dropped changes which is
/// the key, or what is read back) and the geometry columns' SRS (the
/// coordinates read). FNV-1a, in hex.
fn fingerprint(conn: &Connection, tables: &[String; 2]) -> rusqlite::Result<String> {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for table in triggered_tables(tables) {
        let mut text = String::new();
        for query in [
            "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?1 COLLATE NOCASE",
            "SELECT CAST(srs_id AS TEXT) FROM gpkg_geometry_columns WHERE table_name = ?1 COLLATE NOCASE",
        ] {
            let value: Option<String> = conn.query_row(query, [table], |r| r.get(0)).optional()?;
            text.push_str(&value.unwrap_or_default());
            text.push('\u{0}');
        }
        for byte in text.bytes() {
            hash = (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
        }
    }
    Ok(format!("{hash:016x}"))
}

/// The registration's description of complete parts made from `tables`.
fn complete(conn: &Connection, tables: &[String; 2]) -> rusqlite::Result<String> {
    Ok(format!("{COMPLETE} {}", fingerprint(conn, tables)?))
}

impl GeoPackage {
    /// The comids of the reaches that close the stored basin parts, when
    /// the file has current ones; `None` when it has none: never made,
    /// being made, or stale (a write to the flowlines, the catchments or
    /// the parts since, a table made again, a column or SRS changed).
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
        if complete != Some(self::complete(conn, &tables).map_err(sql)?) {
            return Ok(None);
        }
        let mut trigger = conn
            .prepare(
                "SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND name = ?1 AND tbl_name = ?2 COLLATE NOCASE",
            )
            .map_err(sql)?;
        // The parts' own triggers go with their table: a table dropped is
        // found here, before it is read.
        for table in triggered_tables(&tables) {
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

    /// The flowline network as stored with current basin parts
    /// ([`GeoPackage::basin_parts`]): the reaches [`GeoPackage::read_topology`]
    /// read when they were made, which no write has changed since, and
    /// their [`Network`]. `None` without current parts, or when the blob
    /// cannot be read or decoded: the network is then read row by row, and
    /// `hydroplot index` makes it again.
    pub fn stored_network(&self) -> Result<Option<(Vec<Reach>, Network)>> {
        let conn = self.connection();
        let sql = |e: rusqlite::Error| self.context(e.into());
        // The look at the parts and the read see one state of the file.
        conn.execute_batch("SAVEPOINT hydroplot_stored_network")
            .map_err(sql)?;
        let blob = self.basin_parts().map(|parts| {
            parts.and_then(|_| {
                let select = format!("SELECT reaches FROM {} LIMIT 1", quote(BASIN_NETWORK));
                conn.query_row(&select, [], |r| r.get::<_, Vec<u8>>(0)).ok()
            })
        });
        conn.execute_batch("RELEASE hydroplot_stored_network")
            .map_err(sql)?;
        Ok(blob?.as_deref().and_then(stored_network::decode))
    }

    /// The flowline network: [`GeoPackage::stored_network`] when the file
    /// has current basin parts, else the topology read in `threads` shares
    /// ([`GeoPackage::read_topology`]) and [`Network::new`]. The same
    /// reaches and network either way.
    pub fn read_network(&self, threads: usize) -> Result<(Vec<Reach>, Network)> {
        if let Some(stored) = self.stored_network()? {
            return Ok(stored);
        }
        let reaches = self.read_topology_in(threads)?;
        let network = Network::new(&reaches);
        Ok((reaches, network))
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
/// untouched); one without a catchment layer in NAD83 lon/lat, with
/// repeated comids or hydroseqs, too small for a single part or too large
/// for its network to be stored ([`stored_network::fits`]) gets none.
/// The triggers are in place before the topology is read, so a write to
/// the flowlines or catchments while the parts are made is an `Error::Gpkg`
/// (run again), as is another run taking over. On any failure (a cancel of
/// `stop` is `Error::Cancelled`) the parts are removed again, as far as the
/// file lets them be.
///
/// The catchments are read in one pass. `progress` hears (parts made,
/// parts in all) on the calling thread, from (0, n) to (n, n).
pub fn create_basin_parts(
    path: &Path,
    reaches_per_part: usize,
    stop: &Stop,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<PartsOutcome> {
    let gpkg = open_nhdplus(path, "basin parts are only for NHDPlus GeoPackages", stop)?;
    let skip = |why: &str| Ok(PartsOutcome::Skipped { why: why.into() });
    let tables = match watched_tables(&gpkg) {
        Ok(tables) => tables,
        Err(e) => return skip(&format!("its catchment layer cannot be used ({e})")),
    };
    // Current parts whose stored network cannot be read are made again.
    if let (Some(parts), Some(_)) = (gpkg.basin_parts()?, gpkg.stored_network()?) {
        return Ok(PartsOutcome::Existing { parts: parts.len() });
    }
    if gpkg.layer(Collection::Catchment)?.to_lonlat.is_some() {
        return skip("its catchments are not in NAD83 longitude/latitude");
    }
    // Whether the file gets parts at all, before anything is written; the
    // topology is read again once the triggers watch it.
    if let Err(why) = cut(&gpkg.read_topology()?, reaches_per_part) {
        return skip(&why);
    }
    let writer = PartsWriter::begin(path, &tables, stop)?;
    match made_parts(&gpkg, reaches_per_part, stop, progress) {
        Ok(Made::Parts { parts, network }) => {
            drop(gpkg);
            writer.finish(&tables, &parts, &network)
        }
        Ok(Made::Skipped(why)) => {
            writer.abandon();
            skip(&why)
        }
        Err(e) => {
            writer.abandon();
            Err(e)
        }
    }
}

/// The network of `reaches` and the reaches closing its parts of at least
/// `reaches_per_part` reaches; or why it gets no parts.
fn cut(
    reaches: &[Reach],
    reaches_per_part: usize,
) -> std::result::Result<(Network, Vec<usize>), String> {
    let repeats = |mut keys: Vec<i64>| {
        keys.sort_unstable();
        keys.windows(2).any(|w| w[0] == w[1])
    };
    if !stored_network::fits(reaches.len()) {
        return Err(format!(
            "its {} flowlines are more than one SQLite blob holds",
            reaches.len()
        ));
    }
    if repeats(reaches.iter().map(|r| r.comid).collect()) {
        return Err("a comid repeats among its flowlines".into());
    }
    // Which reach drains into which must not hang on row order.
    if repeats(reaches.iter().map(|r| r.hydroseq).collect()) {
        return Err("a hydroseq repeats among its flowlines".into());
    }
    let network = Network::new(reaches);
    let closing = network.parts(reaches_per_part);
    if closing.is_empty() {
        return Err(format!(
            "no basin in it has {reaches_per_part} reaches, the fewest a part holds"
        ));
    }
    Ok((network, closing))
}

/// The parts of [`made_parts`] and the network they were cut from (the
/// blob of [`stored_network::encode`]), or why the file gets none.
enum Made {
    Parts {
        parts: Vec<StoredPart>,
        network: Vec<u8>,
    },
    Skipped(String),
}

/// The parts of the network of `gpkg`: the topology read, the network cut,
/// every catchment read once and folded into its part, each part's rings.
fn made_parts(
    gpkg: &GeoPackage,
    reaches_per_part: usize,
    stop: &Stop,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Made> {
    let reaches = gpkg.read_topology()?;
    let (network, closing) = match cut(&reaches, reaches_per_part) {
        Ok(cut) => cut,
        Err(why) => return Ok(Made::Skipped(why)),
    };
    progress(0, closing.len());
    let mut part_of: IdMap<usize> = IdMap::default();
    for (k, part) in network.reaches_of_parts(&closing).into_iter().enumerate() {
        part_of.extend(part.into_iter().map(|i| (reaches[i].comid, k)));
    }
    let ids: Vec<i64> = part_of.keys().copied().collect();
    let route = |batch: &Table| -> Vec<Vec<usize>> {
        let mut rows = vec![Vec::new(); closing.len()];
        let key = catchment_key(batch);
        for row in 0..batch.len() {
            let part = key.and_then(|k| k.i64(row)).and_then(|id| part_of.get(&id));
            if let Some(&k) = part {
                rows[k].push(row);
            }
        }
        rows
    };
    let folds = gpkg.fold_catchments(&ids, closing.len(), &route)?;
    let mut parts = Vec::with_capacity(closing.len());
    for (&c, fold) in closing.iter().zip(folds) {
        stop.check()?;
        let rings = fold.dissolver.rings();
        let outline = (!rings.is_empty())
            .then(|| blob::write(&Geometry::MultiLineString(MultiLineString(rings)), SRS_ID));
        parts.push((reaches[c].comid, fold.bbox, outline));
        progress(parts.len(), closing.len());
    }
    let network = stored_network::encode(&reaches, &network);
    Ok(Made::Parts { parts, network })
}

/// Removes the basin parts in the transaction `tx`: their tables, their
/// registration and their triggers, whichever are there. True when any was.
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
    let mut table = 0;
    for name in [BASIN_PARTS, BASIN_NETWORK] {
        table += tx.query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?1",
            [name],
            |r| r.get::<_, i64>(0),
        )?;
        tx.execute_batch(&format!("DROP TABLE IF EXISTS {}", quote(name)))?;
    }
    let registered = tx.execute(
        "DELETE FROM gpkg_contents WHERE table_name = ?1",
        [BASIN_PARTS],
    )?;
    Ok(!triggers.is_empty() || table > 0 || registered > 0)
}

/// A part as stored: the comid closing it, its catchments' box and the
/// blob of its rings (none when its catchments cover nothing).
type StoredPart = (i64, Option<[f64; 4]>, Option<Vec<u8>>);

/// The two writes of [`create_basin_parts`]: first the triggers on the
/// flowlines and catchments, an empty table and its registration as being
/// made by this run (its token); then, if that registration is still there
/// (nothing was written to the watched tables meanwhile, no other run took
/// over), the parts, the triggers on their own table and the registration
/// as complete. Or, on failure, everything taken away again.
struct PartsWriter {
    conn: Connection,
    path: std::path::PathBuf,
    /// This run's registration while it makes the parts.
    being_made: String,
    /// The registration once made ([`complete`]), as the tables were
    /// defined when the triggers began to watch them.
    registered: String,
}

impl PartsWriter {
    fn begin(path: &Path, tables: &[String; 2], stop: &Stop) -> Result<PartsWriter> {
        let conn = open_for_writing(path, FAILURE, stop)?;
        let since_epoch = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let being_made = format!("{BEING_MADE} {} {since_epoch}", std::process::id());
        let mut writer = PartsWriter {
            conn,
            path: path.to_path_buf(),
            being_made,
            registered: String::new(),
        };
        let being_made = writer.being_made.clone();
        let mut made = String::new();
        writer.transaction(|tx| {
            remove_basin_parts(tx)?;
            tx.execute_batch(&format!(
                "CREATE TABLE {} (comid INTEGER PRIMARY KEY NOT NULL, min_x REAL, min_y REAL, max_x REAL, max_y REAL, outline BLOB);
                 CREATE TABLE {} (reaches BLOB NOT NULL);",
                quote(BASIN_PARTS),
                quote(BASIN_NETWORK)
            ))?;
            tx.execute(
                "INSERT INTO gpkg_contents (table_name, data_type, identifier, description) VALUES (?1, 'attributes', ?1, ?2)",
                [BASIN_PARTS, &being_made],
            )?;
            for table in tables {
                create_triggers(tx, table)?;
            }
            made = complete(tx, tables)?;
            Ok(())
        })?;
        writer.registered = made;
        Ok(writer)
    }

    /// Stores `parts` (closing comid, box, rings) and the `network` they
    /// were cut from (its blob), and marks them complete.
    fn finish(
        mut self,
        tables: &[String; 2],
        parts: &[StoredPart],
        network: &[u8],
    ) -> Result<PartsOutcome> {
        let mut taken_over = false;
        let (being_made, made) = (self.being_made.clone(), self.registered.clone());
        let stored = self.transaction(|tx| {
            // Rows written meanwhile withdrew the registration; a table
            // defined anew changed the fingerprint.
            if !is_ours(tx, &being_made)? || complete(tx, tables)? != made {
                taken_over = true;
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
                &format!("INSERT INTO {} (reaches) VALUES (?1)", quote(BASIN_NETWORK)),
                [network],
            )?;
            create_triggers(tx, BASIN_PARTS)?;
            create_triggers(tx, BASIN_NETWORK)?;
            tx.execute(
                "UPDATE gpkg_contents SET description = ?2 WHERE table_name = ?1",
                [BASIN_PARTS, &made],
            )?;
            Ok(())
        });
        if let Err(e) = stored {
            self.abandon();
            return Err(e);
        }
        if taken_over {
            let path = self.path.display().to_string();
            self.abandon();
            return Err(Error::Gpkg(format!(
                "{path}: the flowlines or catchments changed (their rows or definitions), or another `hydroplot index` ran, while the basin parts were made; run `hydroplot index` again."
            )));
        }
        Ok(PartsOutcome::Created { parts: parts.len() })
    }

    /// Takes the parts away again, unless another run has taken over: best
    /// effort (a failure leaves parts that are never used), and not stopped
    /// by the call's cancel.
    fn abandon(mut self) {
        self.conn.progress_handler(0, None::<fn() -> bool>);
        let being_made = self.being_made.clone();
        let _ = self.transaction(|tx| {
            if is_ours(tx, &being_made)? {
                remove_basin_parts(tx)?;
            }
            Ok(())
        });
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
            .map_err(|e| write_failed(&path, FAILURE, e))?;
        f(&tx).map_err(|e| write_failed(&path, FAILURE, e))?;
        tx.commit().map_err(|e| write_failed(&path, FAILURE, e))
    }
}

/// Whether the parts' registration is still the run's own, `being_made`
/// ([`PartsWriter`]): no write withdrew it, no other run took over.
fn is_ours(tx: &rusqlite::Transaction, being_made: &str) -> rusqlite::Result<bool> {
    let ours: i64 = tx.query_row(
        "SELECT count(*) FROM gpkg_contents WHERE table_name = ?1 AND description = ?2",
        [BASIN_PARTS, being_made],
        |r| r.get(0),
    )?;
    Ok(ours > 0)
}

/// Creates the triggers that withdraw the parts' registration at any
/// insert, update or delete in `table`.
fn create_triggers(tx: &rusqlite::Transaction, table: &str) -> rusqlite::Result<()> {
    for event in EVENTS {
        let name = quote(&trigger_name(event, table));
        tx.execute_batch(&format!(
            "DROP TRIGGER IF EXISTS {name};
             CREATE TRIGGER {name} AFTER {event} ON {} BEGIN DELETE FROM gpkg_contents WHERE table_name = '{BASIN_PARTS}'; END;",
            quote(table)
        ))?;
    }
    Ok(())
}
