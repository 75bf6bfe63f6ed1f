//! Basin parts: outlines of parts of the network, stored in the index file
//! of `hydroplot index` (`index_file.rs`), so that a large basin is folded
//! from a few stored outlines and the catchments near its outlet instead of
//! from every one of its catchments.
//!
//! The network is cut into parts of at least [`REACHES_PER_PART`] reaches
//! ([`Network::parts`]). Each part's catchments are folded, and what their
//! union leaves (its rings, directed, the coordinates as read, bit for bit)
//! is stored with their box in the table [`BASIN_PARTS`], one row per part,
//! keyed by the comid of the reach that closes it. A basin hands the rings
//! of the parts it holds whole to its overlay, beside the rings its other
//! catchments' counted edges leave
//! ([`crate::table::dissolve::Dissolver::add_lines`]): every point's
//! winding number is what counting every catchment gives, so the basin is
//! the same region, and the overlay keeps the input's vertices bit for bit
//! (the same bytes as without parts on the samples and the million
//! files). The network the parts were cut from is stored beside them
//! (`stored_network.rs`, the table `hydroplot_basin_network`), for plots
//! to read in one step.
//!
//! Stale parts are never used: an index file counts only while the
//! GeoPackage is as it recorded (`index_file.rs`), and a plot looks again
//! after reading, so a write meanwhile is an error, never a basin of old
//! parts and new catchments. Catchments in another CRS than NAD83 lon/lat,
//! or flowlines whose comids or hydroseqs repeat, get no parts.
//!
//! Release 0.2 stored the same two tables inside the user's file, with a
//! registration in `gpkg_contents` (complete, with a fingerprint of the
//! tables' definitions) and triggers on the flowline, catchment and parts
//! tables that withdrew it at any write. Such parts are still read while
//! that registration and all twelve triggers say they are current, and
//! [`remove_basin_parts`] takes them out (`hydroplot index --remove`).

use super::blob;
use super::fold::{catchment_key, Fold};
use super::index_file::{bbox_of, StoredPart};
use super::layer::quote;
use super::reader::GeoPackage;
use super::stored_network::{self, BASIN_NETWORK, BASIN_PARTS};
use crate::cancel::Stop;
use crate::collection::Collection;
use crate::feature::union_bbox;
use crate::network::{IdMap, IdSet, Network, Reach};
use crate::parallel::parallel_map;
use crate::table::geometry::GeometryBuilder;
use crate::table::Table;
use crate::{Error, Result};
use geo::{Geometry, MultiLineString};
use rusqlite::{params, Connection, OptionalExtension};
use std::sync::Mutex;

/// The fewest reaches of a part: a basin smaller than this is folded from
/// its catchments alone, as without parts.
pub const REACHES_PER_PART: usize = 4096;

/// The registration's description of complete parts in a user's file
/// (release 0.2), before the fingerprint of the tables they were made from ([`fingerprint`]).
const COMPLETE: &str = "hydroplot basin parts (complete): outlines of parts of the network, for large basins; made by `hydroplot index`; tables";

/// The writes that make stored parts stale.
const EVENTS: [&str; 3] = ["insert", "update", "delete"];

/// Spatial reference of the stored rings (NAD83 lon/lat, as read).
const SRS_ID: i32 = 4269;

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
    /// there are current ones: in the index file in use
    /// ([`GeoPackage::use_index`]) while the file is as it recorded (with
    /// those this plot made, [`super::make_basin_parts`]), those this plot
    /// made when it could not store them in an index, else in the file
    /// itself (release 0.2). `None` when there are none: never made, or
    /// stale (the file written to since; in the file itself, a table made
    /// again, a column or SRS changed).
    pub fn basin_parts(&self) -> Result<Option<IdSet>> {
        match self.index() {
            Some(index) if index.still_current(self.path()) => {
                let mut parts = index.parts()?;
                parts.extend(self.made_parts().keys());
                Ok(Some(parts))
            }
            Some(_) => Ok(None),
            None if !self.made_parts().is_empty() => {
                Ok(Some(self.made_parts().keys().copied().collect()))
            }
            None => self.in_file_basin_parts(),
        }
    }

    /// The basin parts stored in the file itself by release 0.2, when
    /// current ([`GeoPackage::basin_parts`]).
    fn in_file_basin_parts(&self) -> Result<Option<IdSet>> {
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

    /// The flowline network as stored in the index file in use
    /// ([`GeoPackage::use_index`]), or with current basin parts in the file
    /// itself (release 0.2): the reaches [`GeoPackage::read_topology`] read
    /// when they were stored, which no write has changed since, and their
    /// [`Network`]. `None` without a current one, or when the blob cannot
    /// be read or decoded: the network is then read row by row, and
    /// `hydroplot index` makes it again.
    pub fn stored_network(&self) -> Result<Option<(Vec<Reach>, Network)>> {
        if let Some(index) = self.index() {
            return Ok(index
                .still_current(self.path())
                .then(|| index.network())
                .flatten());
        }
        let conn = self.connection();
        let sql = |e: rusqlite::Error| self.context(e.into());
        // The look at the parts and the read see one state of the file.
        conn.execute_batch("SAVEPOINT hydroplot_stored_network")
            .map_err(sql)?;
        let blob = self.in_file_basin_parts().map(|parts| {
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
        let reaches: Vec<Reach> = (self.read_topology_in(threads)?.into_iter())
            .map(|(_, reach)| reach)
            .collect();
        let network = Network::new(&reaches);
        Ok((reaches, network))
    }

    /// Adds the stored parts closed by the reaches `comids` (of
    /// [`GeoPackage::basin_parts`]) to `fold`: their rings to its edge
    /// counts, their boxes to its box. One part is read at a time.
    pub fn add_basin_parts(&self, comids: &[i64], fold: &mut Fold) -> Result<()> {
        let sql = |e: rusqlite::Error| self.context(e.into());
        let conn = self.index().map_or(self.connection(), |i| i.connection());
        // Prepared at the first part not made by this plot: parts made
        // but not stored have no table to read.
        let mut stmt = None;
        let mut builder = GeometryBuilder::default();
        for &comid in comids {
            if let Some(part) = self.made_parts().get(&comid) {
                let (_, bbox, outline) = &**part;
                add_part(*bbox, outline.as_deref(), fold, &mut builder)
                    .map_err(|e| self.context(e))?;
                continue;
            }
            let stmt = match &mut stmt {
                Some(stmt) => stmt,
                None => stmt.insert(
                    conn.prepare(&format!(
                        "SELECT min_x, min_y, max_x, max_y, outline FROM {} WHERE comid = ?1",
                        quote(BASIN_PARTS)
                    ))
                    .map_err(sql)?,
                ),
            };
            let mut rows = stmt.query([comid]).map_err(sql)?;
            let row = rows.next().map_err(sql)?.ok_or_else(|| {
                self.context(Error::Gpkg(format!(
                    "{BASIN_PARTS} has no part {comid}; run `hydroplot index` again"
                )))
            })?;
            let outline =
                (row.get_ref(4).map_err(sql)?.as_blob_or_null()).map_err(|e| sql(e.into()))?;
            add_part(bbox_of(row).map_err(sql)?, outline, fold, &mut builder)
                .map_err(|e| self.context(e))?;
        }
        Ok(())
    }
}

/// Adds a part of box `bbox` and rings `outline` (a geometry blob) to
/// `fold`, parsed with `builder`.
fn add_part(
    bbox: Option<[f64; 4]>,
    outline: Option<&[u8]>,
    fold: &mut Fold,
    builder: &mut GeometryBuilder,
) -> Result<()> {
    if let Some(b) = bbox {
        fold.bbox = Some(fold.bbox.map_or(b, |f| union_bbox(f, b)));
    }
    if let Some(outline) = outline {
        blob::parse_into(outline, builder, None)?;
        let rings = std::mem::take(builder).finish();
        fold.dissolver.add_lines(&rings, &[0]);
        *builder = rings.recycle();
    }
    Ok(())
}

/// `Ok` when the network of `reaches` can have parts (stored, with
/// comids and hydroseqs that do not repeat); else why not.
pub(super) fn partable(reaches: &[Reach]) -> std::result::Result<(), String> {
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
    // Both keys sorted at once, the hydroseqs on a thread of their own.
    let (comids_repeat, hydroseqs_repeat) = std::thread::scope(|s| {
        let hydroseqs = s.spawn(|| repeats(reaches.iter().map(|r| r.hydroseq).collect()));
        let comids = repeats(reaches.iter().map(|r| r.comid).collect());
        (comids, hydroseqs.join().expect("a sort does not panic"))
    });
    if comids_repeat {
        return Err("a comid repeats among its flowlines".into());
    }
    // Which reach drains into which must not hang on row order.
    if hydroseqs_repeat {
        return Err("a hydroseq repeats among its flowlines".into());
    }
    Ok(())
}

/// The network of `reaches` and the reaches closing its parts of at least
/// `reaches_per_part` reaches; or why it gets no parts.
pub(super) fn cut(
    reaches: &[Reach],
    reaches_per_part: usize,
) -> std::result::Result<(Network, Vec<usize>), String> {
    partable(reaches)?;
    let network = Network::new(reaches);
    let closing = network.parts(reaches_per_part);
    if closing.is_empty() {
        return Err(format!(
            "no basin in it has {reaches_per_part} reaches, the fewest a part holds"
        ));
    }
    Ok((network, closing))
}

/// The parts closed by the reaches `make`, some of the reaches `closing`
/// that close the parts of `network` (of `reaches`, as [`cut`] gives
/// them), of the GeoPackage `gpkg`: every catchment of them read once and
/// folded into its part, each part's rings, in the order of `make`; the
/// catchments counted and the rings walked on up to `threads` threads
/// beside the reader (the same parts whatever `threads`).
pub(super) fn made_parts(
    gpkg: &GeoPackage,
    reaches: &[Reach],
    network: &Network,
    (closing, make): (&[usize], &[usize]),
    threads: usize,
    stop: &Stop,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Vec<StoredPart>> {
    progress(0, make.len());
    let parts = network.reaches_of_parts(closing, make);
    // Sized once: grown from empty, it would rehash a million comids.
    let mut part_of: IdMap<usize> = IdMap::default();
    part_of.reserve(parts.iter().map(Vec::len).sum());
    for (k, part) in parts.into_iter().enumerate() {
        part_of.extend(part.into_iter().map(|i| (reaches[i].comid, k)));
    }
    let ids: Vec<i64> = part_of.keys().copied().collect();
    let route = |batch: &Table| -> Vec<Vec<usize>> {
        let mut rows = vec![Vec::new(); make.len()];
        let key = catchment_key(batch);
        for row in 0..batch.len() {
            let part = key.and_then(|k| k.i64(row)).and_then(|id| part_of.get(&id));
            if let Some(&k) = part {
                rows[k].push(row);
            }
        }
        rows
    };
    let folds = gpkg.fold_catchments(&ids, make.len(), &route, threads)?;
    let outlines = outlines(folds, threads.clamp(1, WALKERS), stop, progress)?;
    Ok((make.iter().zip(outlines))
        .map(|(&c, (bbox, outline))| (reaches[c].comid, bbox, outline))
        .collect())
}

/// A part's box and rings, as a blob (`None` without rings).
type Outline = (Option<[f64; 4]>, Option<Vec<u8>>);

/// Threads that walk the parts' rings ([`outlines`]), at most.
const WALKERS: usize = 2;

/// Each fold's [`Outline`], in the order of `folds`, walked on up to
/// `walkers` threads ([`parallel_map`]; each part's rings are its own, so
/// the threads change nothing in them). `progress` hears (parts walked,
/// parts) on this thread as each is done; a cancel of `stop` ends the walk
/// with `Error::Cancelled`.
fn outlines(
    folds: Vec<Fold>,
    walkers: usize,
    stop: &Stop,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Vec<Outline>> {
    let all = folds.len();
    // Each fold taken whole by the thread that walks it.
    let folds: Vec<Mutex<Option<Fold>>> = (folds.into_iter())
        .map(|fold| Mutex::new(Some(fold)))
        .collect();
    let walk = |fold: &Mutex<Option<Fold>>| -> Option<Outline> {
        stop.check().ok()?;
        let fold = fold.lock().ok()?.take()?;
        let rings = fold.dissolver.rings();
        let outline = (!rings.is_empty())
            .then(|| blob::write(&Geometry::MultiLineString(MultiLineString(rings)), SRS_ID));
        Some((fold.bbox, outline))
    };
    let mut done = 0;
    let walked = parallel_map(walkers, &folds, walk, |_, _| {
        done += 1;
        progress(done, all);
    });
    stop.check()?;
    (walked.into_iter())
        .map(|w| w.ok_or_else(|| Error::Internal("a part's rings were not walked".into())))
        .collect()
}

/// Removes the basin parts of release 0.2 from a user's file in the transaction `tx`: their tables, their
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::network::tests::reach;

    #[test]
    fn a_network_whose_comids_or_hydroseqs_repeat_gets_no_parts() {
        let chain = [reach(1, 10, 0), reach(2, 20, 10), reach(3, 30, 20)];
        assert_eq!(partable(&chain), Ok(()));
        let comid_twice = [reach(1, 10, 0), reach(2, 20, 10), reach(2, 30, 20)];
        let why = partable(&comid_twice).unwrap_err();
        assert!(why.contains("comid repeats"), "{why}");
        let hydroseq_twice = [reach(1, 10, 0), reach(2, 20, 10), reach(3, 20, 10)];
        let why = partable(&hydroseq_twice).unwrap_err();
        assert!(why.contains("hydroseq repeats"), "{why}");
    }
}
