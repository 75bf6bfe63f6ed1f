//! Reading the NHDPlus layers of a GeoPackage: whole layers for small files,
//! and for national files the topology columns alone, then features by key or
//! by bounding box, so memory follows the subset rather than the file.
//!
//! Rows go straight into a [`TableBuilder`]: each SQLite value is pushed as
//! a [`Scalar`] of its own type, and each geometry blob is parsed into the
//! table's flat geometry buffers ([`blob::parse_into`]), so no per-row
//! feature map or `geo` geometry is built.

use std::borrow::Cow;
use std::cell::OnceCell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::cancel::Stop;
use geo::{Intersects, Rect};
use rusqlite::config::DbConfig;
use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags, Row};

use super::blob;
use super::index_file::{FlowlineRowids, IndexFile, StoredPart};
use super::layer::{covering_index, quote, Layer};
use super::wanted::WantedIds;
use crate::collection::Collection;
use crate::network::{IdMap, IdSet, Reach};
use crate::table::column::Scalar;
use crate::table::geometry::GeometryBuilder;
use crate::table::{Table, TableBuilder};
use crate::{Error, Result};

/// Ids per `IN (...)` query of [`GeoPackage::read_by_ids`]. Ids are inlined as
/// integer literals (no bound-parameter limit), so a table without an index on
/// the key is scanned once per chunk, not once per few hundred ids.
const IDS_PER_QUERY: usize = 20_000;

/// [`GeoPackage::read_by_ids`] reads the whole table in file order, keeping
/// the rows whose key is asked for, when the ids number at least this
/// fraction of its rows: one sequential pass then beats a lookup per id.
const SCAN_FRACTION: usize = 8;

/// A GeoPackage opened read-only. Layers are found once, at open, by their
/// names in [`Collection::gpkg_names`] (case-insensitive); columns are matched
/// case-insensitively. A layer read is a [`Table`]: one column per table
/// column (lower-case names, in name order; the key and geometry columns
/// excluded), the `fid` as each row's id, geometries in NAD83 lon/lat.
///
/// Not `Sync` (one SQLite connection): use from one thread at a time.
pub struct GeoPackage {
    conn: Connection,
    path: PathBuf,
    /// The call's stop the connection watches ([`GeoPackage::watch`]);
    /// a connection of [`GeoPackage::reopen`] watches it too.
    stop: Option<Stop>,
    /// Each layer found in the file; `Err` when its description failed (for
    /// example an unknown CRS), reported when the layer is used.
    layers: HashMap<Collection, Result<Layer>>,
    /// The index file in use ([`GeoPackage::use_index`]), held open for
    /// as long as this lives; a connection of [`GeoPackage::reopen`] has none.
    index: Option<IndexFile>,
    /// The rowid of each flowline by comid, from the index file in use,
    /// read at the first read of flowlines by comid or the first
    /// [`GeoPackage::reopen`], which shares it.
    flowline_rowids: OnceCell<Option<Arc<FlowlineRowids>>>,
    /// The basin parts this plot made that the index file in use lacks
    /// ([`super::make_basin_parts`]), by the comid closing each. Held while this lives, dropped with the index in use;
    /// a connection of [`GeoPackage::reopen`] has none.
    made_parts: IdMap<Arc<StoredPart>>,
}

impl std::fmt::Debug for GeoPackage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "GeoPackage({})", self.path.display())
    }
}

/// A read-only connection to `path`, through the read-ahead VFS when it
/// is registered ([`super::readahead`]).
/// The connection never checkpoints a WAL into the file when it closes:
/// the user's file is only read.
fn open_read_only(path: &Path) -> rusqlite::Result<Connection> {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = match super::readahead::vfs_name() {
        Some(vfs) => Connection::open_with_flags_and_vfs(path, flags, vfs),
        None => Connection::open_with_flags(path, flags),
    }?;
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, true)?;
    Ok(conn)
}

pub(crate) use super::watch::watch_connection;

impl GeoPackage {
    /// Opens `path` read-only. `Error::InvalidArgument` when it is not a
    /// regular file (a FIFO, a directory, a device: refused before any open),
    /// `Error::Io` when the file cannot be read,
    /// `Error::Gpkg` when it is not an SQLite database or has no `gpkg_contents`.
    pub fn open(path: &Path) -> Result<GeoPackage> {
        Self::open_with(path, None)
    }

    /// [`GeoPackage::open`] watched by `stop` from its first statement
    /// ([`GeoPackage::watch`]): a file another program holds locked is
    /// waited for at most `stop`'s lock timeout, or until a cancel.
    pub fn open_watched(path: &Path, stop: &Stop) -> Result<GeoPackage> {
        Self::open_with(path, Some(stop))
    }

    fn open_with(path: &Path, stop: Option<&Stop>) -> Result<GeoPackage> {
        crate::paths::check_regular(path, "GeoPackage")?;
        std::fs::File::open(path).map_err(|e| crate::error::io_error(path, e))?;
        let not_gpkg =
            |why: String| Error::Gpkg(format!("{} is not a GeoPackage: {why}.", path.display()));
        let conn = open_read_only(path).map_err(|e| not_gpkg(e.to_string()))?;
        if let Some(stop) = stop {
            watch_connection(&conn, stop);
        }
        let tables = feature_tables(&conn).map_err(|e| match e {
            rusqlite::Error::SqliteFailure(_, Some(m)) if m.contains("no such table") => {
                not_gpkg("it has no gpkg_contents table".to_string())
            }
            e if matches!(
                e.sqlite_error_code(),
                Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
            ) =>
            {
                Error::from(e).context(&path.display().to_string())
            }
            e => not_gpkg(e.to_string()),
        })?;
        let mut layers = HashMap::new();
        for c in Collection::ALL {
            let found = c
                .gpkg_names()
                .iter()
                .find_map(|name| tables.iter().find(|t| t.eq_ignore_ascii_case(name)));
            if let Some(table) = found {
                let layer = Layer::describe(&conn, table)
                    .map_err(|e| e.context(&path.display().to_string()));
                layers.insert(c, layer);
            }
        }
        Ok(GeoPackage {
            conn,
            path: path.to_path_buf(),
            stop: stop.cloned(),
            layers,
            index: None,
            flowline_rowids: OnceCell::new(),
            made_parts: IdMap::default(),
        })
    }

    /// From now on every statement of this connection (and of those
    /// [`GeoPackage::reopen`] makes) ends with `Error::Cancelled` soon after
    /// `stop` is cancelled: SQLite calls back every few thousand steps; and
    /// a wait for another program's lock on the file lasts at most `stop`'s
    /// lock timeout, a cancel ending it.
    pub fn watch(&mut self, stop: &Stop) {
        watch_connection(&self.conn, stop);
        self.stop = Some(stop.clone());
    }

    /// A second connection to the same file, with the same layers (narrowed
    /// as this one is) and the flowlines' rowids of the index in use: for
    /// reading on another thread.
    pub fn reopen(&self) -> Result<GeoPackage> {
        let conn = open_read_only(&self.path).map_err(|e| self.context(e.into()))?;
        if let Some(stop) = &self.stop {
            watch_connection(&conn, stop);
        }
        Ok(GeoPackage {
            conn,
            path: self.path.clone(),
            stop: self.stop.clone(),
            layers: self.layers.clone(),
            index: None,
            flowline_rowids: OnceCell::from(self.flowline_rowids().cloned()),
            made_parts: IdMap::default(),
        })
    }

    /// From now on the stored network and basin parts are read from `index`
    /// (found by [`GeoPackage::use_index`]), or from the file alone: the
    /// index file's path, if any.
    pub(super) fn set_index(&mut self, index: Option<IndexFile>) -> Option<&Path> {
        self.index = index;
        self.flowline_rowids = OnceCell::new();
        self.made_parts = IdMap::default();
        self.index.as_ref().map(IndexFile::path)
    }

    /// The index file in use, if any.
    pub(super) fn index(&self) -> Option<&IndexFile> {
        self.index.as_ref()
    }

    /// The basin parts this plot made that the index file in use lacks.
    pub(super) fn made_parts(&self) -> &IdMap<Arc<StoredPart>> {
        &self.made_parts
    }

    /// Adds `parts`, made for the index file in use, to
    /// [`GeoPackage::made_parts`].
    pub(super) fn add_made_parts(&mut self, parts: &[Arc<StoredPart>]) {
        self.made_parts
            .extend(parts.iter().map(|p| (p.0, Arc::clone(p))));
    }

    /// From now on the flowlines of `rowids` are read by their rowid, which
    /// the index file in use gave (or the read of its network), and others
    /// by comid.
    pub(super) fn set_flowline_rowids(&mut self, rowids: Arc<FlowlineRowids>) {
        self.flowline_rowids = OnceCell::from(Some(rowids));
    }

    /// The rowids the flowlines are read by, when known already (set, or
    /// read from the index file in use), without reading them.
    pub(super) fn known_flowline_rowids(&self) -> Option<Arc<FlowlineRowids>> {
        self.flowline_rowids.get().cloned().flatten()
    }

    /// The comid and rowid of each flowline, as the index file in use
    /// stores them while the file is as it recorded: flowlines are then
    /// read by rowid (the table's own key), without an index on their comid.
    fn flowline_rowids(&self) -> Option<&Arc<FlowlineRowids>> {
        self.flowline_rowids
            .get_or_init(|| {
                let index = self.index.as_ref()?;
                let current = index.still_current(&self.path);
                current.then(|| index.flowline_rowids().map(Arc::new))?
            })
            .as_ref()
    }

    /// The file's path, as opened.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// True when the file has a feature table for `c`.
    pub fn has_layer(&self, c: Collection) -> bool {
        self.layers.contains_key(&c)
    }

    /// From now on, reads of the layer `c` return only the columns named in
    /// `names` (case-insensitive; names the file lacks are ignored) and the
    /// columns the reader itself needs: the layer's keys and topology. An
    /// empty `names` keeps every column.
    pub fn narrow(&mut self, c: Collection, names: &[&str]) {
        if let (Some(Ok(layer)), false) = (self.layers.get_mut(&c), names.is_empty()) {
            let needed = key_columns(c)
                .iter()
                .chain(TOPOLOGY.iter().flat_map(|n| n.iter()));
            let wanted: Vec<&str> = names.iter().copied().chain(needed.copied()).collect();
            layer.keep_attributes(&wanted);
        }
    }

    /// Every feature of the layer, in primary-key order. Meant for small files.
    pub fn read_all(&self, c: Collection) -> Result<Table> {
        let layer = self.layer(c)?;
        let sql = format!("{} ORDER BY {}", layer.select(), quote(&layer.pk));
        let mut rows = Rows::new(layer);
        self.query(&mut rows, &sql, [], Keep::All)?;
        rows.finish()
    }

    /// The topology of the flowline layer, reading only the comid, hydroseq,
    /// dnhydroseq and stream order columns, in row order. Rows without a
    /// comid are skipped; a NULL hydroseq, dnhydroseq or stream order reads
    /// as 0. With an index leading with those columns in the file (release
    /// 0.2's `hydroplot_topology`, or one made by hand) SQLite reads the
    /// index alone; the rows are sorted here, so the order is the same with
    /// or without it. Read in shares, one per core, each on a connection of
    /// its own. ([`GeoPackage::read_network`] reads the network stored in
    /// a current index file instead.)
    pub fn read_topology(&self) -> Result<Vec<Reach>> {
        Ok(self
            .read_topology_rows()?
            .into_iter()
            .map(|(_, reach)| reach)
            .collect())
    }

    /// [`GeoPackage::read_topology`] with each reach's rowid, in row order.
    pub(super) fn read_topology_rows(&self) -> Result<Vec<(i64, Reach)>> {
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        self.read_topology_in(cores)
    }

    /// [`GeoPackage::read_topology`] in `shares` shares (at least one), on
    /// `shares` threads. With a covering index a share is a range of comid
    /// values, so that each reads its part of the index; without one it is
    /// a range of row ids, so that each reads its part of the table.
    pub(super) fn read_topology_in(&self, shares: usize) -> Result<Vec<(i64, Reach)>> {
        let (table, cols) = self.topology_columns()?;
        let covered =
            covering_index(&self.conn, table, &cols).map_err(|e| self.context(e.into()))?;
        let select = format!(
            "SELECT rowid, {} FROM {}",
            cols.iter().map(|c| quote(c)).collect::<Vec<_>>().join(", "),
            quote(table)
        );
        let ranges = match covered {
            Some(_) => self.comid_ranges(table, cols[0], shares)?,
            None => {
                let max = self.max_rowid(self.layer(Collection::FlowlineNetwork)?)?;
                (0..shares.max(1))
                    .map(|index| {
                        let share = Share {
                            index,
                            of: shares.max(1),
                        };
                        let (low, high) = share.fids(max);
                        format!("WHERE rowid > {low} AND rowid <= {high}")
                    })
                    .collect()
            }
        };
        // Each share sorted by rowid on its own thread, then merged.
        let in_row_order = |gpkg: &GeoPackage, sql: &str| -> Result<Vec<(i64, Reach)>> {
            let mut rows = gpkg.topology_rows(sql)?;
            rows.sort_unstable_by_key(|(rowid, _)| *rowid);
            Ok(rows)
        };
        let parts = std::thread::scope(|s| -> Result<Vec<Vec<(i64, Reach)>>> {
            let mut handles = Vec::new();
            for range in ranges.iter().skip(1) {
                let (sql, gpkg) = (format!("{select} {range}"), self.reopen()?);
                handles.push(s.spawn(move || in_row_order(&gpkg, &sql)));
            }
            let mut parts = vec![in_row_order(self, &format!("{select} {}", ranges[0]))?];
            for h in handles {
                parts.push(h.join().expect("a topology reader does not panic")?);
            }
            Ok(parts)
        })?;
        Ok(merged_by_rowid(parts))
    }

    /// `WHERE` clauses cutting the values of the column `comid` of `table`
    /// into `shares` ranges of equal width that together hold every value
    /// but NULL (text and blobs sort after numbers, into the last); one
    /// clause for all when its least or greatest value is not an integer.
    fn comid_ranges(&self, table: &str, comid: &str, shares: usize) -> Result<Vec<String>> {
        let c = quote(comid);
        // One aggregate a query: SQLite then reads one end of the index.
        let end = |f: &str| -> Result<Option<i64>> {
            let sql = format!("SELECT {f}({c}) FROM {}", quote(table));
            (self.conn)
                .query_row(&sql, [], |r| {
                    r.get_ref(0).map(|v| match v {
                        ValueRef::Integer(i) => Some(i),
                        _ => None,
                    })
                })
                .map_err(|e| self.context(e.into()))
        };
        let (Some(min), Some(max)) = (end("min")?, end("max")?) else {
            return Ok(vec![String::new()]);
        };
        let shares = shares.max(1) as i128;
        let bound = |i: i128| min as i128 + (max as i128 - min as i128 + 1) * i / shares;
        Ok((0..shares)
            .map(|i| match (i, i + 1 == shares) {
                (_, true) if i == 0 => String::new(),
                (0, _) => format!("WHERE {c} < {}", bound(1)),
                (_, true) => format!("WHERE {c} >= {}", bound(i)),
                _ => format!("WHERE {c} >= {} AND {c} < {}", bound(i), bound(i + 1)),
            })
            .collect())
    }

    /// The (rowid, reach) rows of the topology query `sql`, without those
    /// that have no comid.
    fn topology_rows(&self, sql: &str) -> Result<Vec<(i64, Reach)>> {
        let run = || -> rusqlite::Result<Vec<(i64, Reach)>> {
            let mut stmt = self.conn.prepare(sql)?;
            let mut rows = stmt.query([])?;
            let mut out = Vec::new();
            while let Some(r) = rows.next()? {
                let int = |i: usize| r.get_ref(i).map(|v| integer(v).unwrap_or(0));
                let comid = int(1)?;
                if comid != 0 {
                    let reach = Reach {
                        comid,
                        hydroseq: int(2)?,
                        dnhydroseq: int(3)?,
                        streamorder: i32::try_from(int(4)?).unwrap_or(0),
                    };
                    out.push((int(0)?, reach));
                }
            }
            Ok(out)
        };
        run().map_err(|e| self.context(e.into()))
    }

    /// The flowline table and its topology columns (comid, hydroseq,
    /// dnhydroseq, stream order) as the file spells them: what
    /// [`GeoPackage::read_topology`] reads and the topology index covers.
    pub fn topology_columns(&self) -> Result<(&str, [&str; 4])> {
        let layer = self.layer(Collection::FlowlineNetwork)?;
        let col = |names: &[&str]| layer.require(names).map_err(|e| self.context(e));
        let [a, b, c, d] = TOPOLOGY;
        Ok((&layer.table, [col(a)?, col(b)?, col(c)?, col(d)?]))
    }

    /// The features whose key (`featureid` for catchments, `flcomid` for gages,
    /// else `comid`) is in `ids`, in the order of `ids` (duplicates once; ids
    /// without a feature are skipped).
    pub fn read_by_ids(&self, c: Collection, ids: &[i64]) -> Result<Table> {
        let layer = self.layer(c)?;
        let mut rows = Rows::new(layer);
        let (key, unique) = self.select_by_ids(c, ids, &mut rows)?;
        Ok(in_order_of(rows.finish()?, key, &unique))
    }

    /// The features of [`GeoPackage::read_by_ids`], read by `shares`
    /// threads at once when the ids are a large share of the layer, each on
    /// a connection of its own. The table's rows are cut by fid into
    /// [`CHUNKS_PER_READER`] chunks per thread, claimed as the threads go:
    /// this thread reads them from the first up into one table, the others
    /// from the last down, each chunk into a table of its own, appended to
    /// the first table in fid order at the end (copied once). So a reader
    /// that gets less of the cores, or rows of more bytes, leaves the
    /// others at most a chunk to finish. Fewer ids, or one share: as
    /// [`GeoPackage::read_by_ids`].
    pub fn read_by_ids_in_shares(
        &self,
        c: Collection,
        ids: &[i64],
        shares: usize,
    ) -> Result<Table> {
        if shares <= 1 {
            return self.read_by_ids(c, ids);
        }
        let ByIds { key, unique, scan } = self.by_ids(c, ids)?;
        let Some(scan) = scan else {
            return self.read_by_ids(c, ids);
        };
        let chunks = shares * CHUNKS_PER_READER;
        let unclaimed = std::sync::Mutex::new(0..chunks);
        let lock = || unclaimed.lock().unwrap_or_else(|e| e.into_inner());
        let claim = |from_the_end: bool| match from_the_end {
            true => lock().next_back(),
            false => lock().next(),
        };
        let read_chunk = |gpkg: &GeoPackage, rows: &mut Rows, index: usize| -> Result<()> {
            let (low, high) = Share { index, of: chunks }.fids(scan.max_rowid);
            let pk = quote(&rows.layer.pk);
            let sql = format!("{} WHERE {pk} > ?1 AND {pk} <= ?2", rows.layer.select());
            let read = gpkg.query(rows, &sql, [low, high], scan.keep());
            if read.is_err() {
                // The read has failed: the other readers claim no more.
                *lock() = 0..0;
            }
            read
        };
        let read_from_the_end = |gpkg: &GeoPackage| -> Result<Vec<(usize, TableBuilder)>> {
            let mut read = Vec::new();
            while let Some(index) = claim(true) {
                let mut rows = Rows::measuring(gpkg.layer(c)?);
                read_chunk(gpkg, &mut rows, index)?;
                read.push((index, rows.finish_measured()));
            }
            Ok(read)
        };
        let (first, mut later) = std::thread::scope(|s| -> Result<_> {
            let others = (1..shares)
                .map(|_| {
                    let own = self.reopen()?;
                    Ok(s.spawn(move || read_from_the_end(&own)))
                })
                .collect::<Result<Vec<_>>>()?;
            // On an error here the scope still waits for the others.
            let mut rows = Rows::measuring(self.layer(c)?);
            while let Some(index) = claim(false) {
                read_chunk(self, &mut rows, index)?;
            }
            let mut later = Vec::new();
            for other in others {
                later.extend(other.join().expect("a share's reader does not panic")?);
            }
            Ok((rows.finish_measured(), later))
        })?;
        later.sort_unstable_by_key(|(index, _)| *index);
        let mut table = first;
        for (_, chunk) in later {
            table
                .append_table(&chunk.finish().map_err(Error::Gpkg)?)
                .map_err(Error::Gpkg)?;
        }
        Ok(in_order_of(
            table.finish().map_err(Error::Gpkg)?,
            key,
            &unique,
        ))
    }

    /// The features of [`GeoPackage::read_by_ids`] in the order the queries
    /// give them (file order when a large share of the layer is read): for
    /// callers to whom order does not matter, which then never pay for a
    /// reordered copy of the layer.
    pub fn read_by_ids_unordered(&self, c: Collection, ids: &[i64]) -> Result<Table> {
        let mut rows = Rows::new(self.layer(c)?);
        self.select_by_ids(c, ids, &mut rows)?;
        rows.finish()
    }

    /// The features of [`GeoPackage::read_by_ids_unordered`], handed to
    /// `each` in tables of at most `batch` rows: a caller that folds them
    /// (into a basin) never holds the whole layer.
    pub fn for_each_by_ids(
        &self,
        c: Collection,
        ids: &[i64],
        batch: usize,
        each: &mut BatchReceiver,
    ) -> Result<()> {
        self.in_batches(c, batch, each, |rows| {
            self.select_by_ids(c, ids, rows).map(drop)
        })
    }

    /// Runs the queries of [`GeoPackage::read_by_ids`] into `rows`: one pass
    /// over the table for a large share of it, else `IN (...)` lists on the
    /// key. Returns the key column's name and the ids without duplicates.
    fn select_by_ids<'l, 'i>(
        &'l self,
        c: Collection,
        ids: &'i [i64],
        rows: &mut Rows,
    ) -> Result<(&'l str, Cow<'i, [i64]>)> {
        let ByIds { key, unique, scan } = self.by_ids(c, ids)?;
        match scan {
            Some(scan) => self.query(rows, &rows.layer.select(), [], scan.keep())?,
            None => {
                let rowids = match c {
                    Collection::FlowlineNetwork => {
                        self.flowline_rowids().and_then(|r| r.of(&unique))
                    }
                    _ => None,
                };
                for chunk in unique.chunks(IDS_PER_QUERY) {
                    let (column, list): (String, Vec<String>) = match &rowids {
                        Some(rowids) => (
                            "rowid".into(),
                            (chunk.iter())
                                .filter_map(|id| rowids.get(id).map(i64::to_string))
                                .collect(),
                        ),
                        None => (quote(key), chunk.iter().map(i64::to_string).collect()),
                    };
                    let list = list.join(",");
                    // No ORDER BY: SQLite would sort whole rows, blobs and
                    // all; callers order the rows themselves.
                    let sql = format!("{} WHERE {column} IN ({list})", rows.layer.select());
                    self.query(rows, &sql, [], Keep::All)?;
                }
            }
        }
        Ok((key, unique))
    }

    /// How the features of layer `c` whose key is in `ids` are found.
    fn by_ids<'l, 'i>(&'l self, c: Collection, ids: &'i [i64]) -> Result<ByIds<'l, 'i>> {
        let layer = self.layer(c)?;
        let key = layer.require(key_columns(c)).map_err(|e| self.context(e))?;
        let (unique, sorted) = unique_ids(ids);
        let max_rowid = self.max_rowid(layer)?;
        let scan = (unique.len() * SCAN_FRACTION >= max_rowid).then(|| {
            let at = layer.attributes.iter().position(|a| a == key);
            IdScan {
                key_at: 2 + at.expect("the key is an attribute"),
                wanted: WantedIds::new(sorted),
                max_rowid,
            }
        });
        Ok(ByIds { key, unique, scan })
    }

    /// The features whose geometry intersects `bbox` (`[xmin, ymin, xmax, ymax]`,
    /// NAD83 lon/lat): an R-tree prefilter when the file has the index and
    /// the box meets under an eighth of the rows (else one pass over the
    /// table, skipping blobs by their envelopes), then an exact intersection
    /// test. Features without a geometry never match.
    pub fn read_bbox(&self, c: Collection, bbox: [f64; 4]) -> Result<Table> {
        let mut rows = Rows::new(self.layer(c)?);
        self.select_in_bbox(c, bbox, Share::WHOLE, &mut rows)?;
        rows.finish()
    }

    /// The features of [`GeoPackage::read_bbox`] in `share` of the layer,
    /// handed to `each` in tables of at most `batch` rows: a caller that
    /// splits them never holds the layer twice, and callers on separate
    /// connections can each read a share.
    pub fn for_each_in_bbox(
        &self,
        c: Collection,
        bbox: [f64; 4],
        share: Share,
        batch: usize,
        each: &mut BatchReceiver,
    ) -> Result<()> {
        self.in_batches(c, batch, each, |rows| {
            self.select_in_bbox(c, bbox, share, rows)
        })
    }

    /// Runs `select` on the layer `c` with its rows handed to `each` in
    /// tables of at most `batch` rows.
    fn in_batches(
        &self,
        c: Collection,
        batch: usize,
        each: &mut BatchReceiver,
        select: impl FnOnce(&mut Rows) -> Result<()>,
    ) -> Result<()> {
        let mut rows = Rows::new(self.layer(c)?);
        rows.batch = Some((batch.max(1), each));
        select(&mut rows)?;
        rows.flush()
    }

    /// Runs the query of [`GeoPackage::read_bbox`], for the rows of `share`,
    /// into `rows`.
    fn select_in_bbox(
        &self,
        c: Collection,
        bbox: [f64; 4],
        share: Share,
        rows: &mut Rows,
    ) -> Result<()> {
        let [x0, y0, x1, y1] = bbox;
        if bbox.iter().any(|v| !v.is_finite()) || x0 > x1 || y0 > y1 {
            return Err(Error::InvalidArgument(format!(
                "The bounding box {bbox:?} is not [xmin, ymin, xmax, ymax] with finite values."
            )));
        }
        let layer = self.layer(c)?;
        let file_bbox = match &layer.from_lonlat {
            Some(t) => t.bbox(bbox)?,
            None => bbox,
        };
        let filter = Filter {
            rect: Rect::new((x0, y0), (x1, y1)),
            bbox,
            file_bbox,
        };
        let pk = quote(&layer.pk);
        let max_rowid = self.max_rowid(layer)?;
        let (low, high) = share.fids(max_rowid);
        let [fx0, fy0, fx1, fy1] = file_bbox;
        let in_rtree = |rtree: &str| {
            format!(
                "FROM {} WHERE minx <= ?3 AND maxx >= ?1 AND miny <= ?4 AND maxy >= ?2 AND id > ?5 AND id <= ?6",
                quote(rtree)
            )
        };
        let params = rusqlite::params![fx0, fy0, fx1, fy1, low, high];
        // A box that holds a large share of the rows is read in one pass
        // over the table, as `select_by_ids` reads many ids.
        let scan_from = max_rowid / share.of.max(1) / SCAN_FRACTION;
        let indexed = match &layer.rtree {
            Some(rtree) => {
                let count = format!(
                    "SELECT count(*) FROM (SELECT 1 {} LIMIT {scan_from})",
                    in_rtree(rtree)
                );
                let hits: usize = (self.conn)
                    .query_row(&count, params, |r| r.get(0))
                    .map_err(|e| self.context(e.into()))?;
                (hits < scan_from).then_some(rtree)
            }
            None => None,
        };
        match indexed {
            Some(rtree) => {
                let sql = format!(
                    "{} WHERE {pk} IN (SELECT id {}) ORDER BY {pk}",
                    layer.select(),
                    in_rtree(rtree),
                );
                self.query(rows, &sql, params, Keep::InBox(&filter))
            }
            None => {
                let sql = format!(
                    "{} WHERE {pk} > ?1 AND {pk} <= ?2 ORDER BY {pk}",
                    layer.select()
                );
                self.query(rows, &sql, [low, high], Keep::InBox(&filter))
            }
        }
    }

    /// The gage whose `SOURCE_FEA` (site number, e.g. `05429500`) is
    /// `site_no`: a table of that one row, empty when the layer has no such row.
    pub fn gage(&self, site_no: &str) -> Result<Table> {
        let layer = self.layer(Collection::Gage)?;
        let col = layer
            .require(&["source_fea", "site_no"])
            .map_err(|e| self.context(e))?;
        let sql = format!(
            "{} WHERE {} = ?1 ORDER BY {} LIMIT 1",
            layer.select(),
            quote(col),
            quote(&layer.pk)
        );
        let mut rows = Rows::new(layer);
        self.query(&mut rows, &sql, [site_no.trim()], Keep::All)?;
        rows.finish()
    }

    /// The NAD83 lon/lat extent of the layer: from `gpkg_contents`, else the
    /// R-tree, else the geometries. `None` when the layer has no geometry.
    pub fn bounds(&self, c: Collection) -> Result<Option<[f64; 4]>> {
        let layer = self.layer(c)?;
        let extent = |sql: &str, params: &[&str]| -> Result<Option<[f64; 4]>> {
            let row: [Option<f64>; 4] = self
                .conn
                .query_row(sql, rusqlite::params_from_iter(params), |r| {
                    Ok([r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?])
                })
                .map_err(|e| self.context(e.into()))?;
            Ok(match row {
                [Some(a), Some(b), Some(c), Some(d)]
                    if [a, b, c, d].iter().all(|v| v.is_finite()) =>
                {
                    Some([a, b, c, d])
                }
                _ => None,
            })
        };
        let mut found = extent(
            "SELECT min_x, min_y, max_x, max_y FROM gpkg_contents WHERE table_name = ?1 COLLATE NOCASE",
            &[&layer.table],
        )?;
        if let (None, Some(rtree)) = (found, &layer.rtree) {
            let sql = format!(
                "SELECT min(minx), min(miny), max(maxx), max(maxy) FROM {}",
                quote(rtree)
            );
            found = extent(&sql, &[])?;
        }
        if found.is_none() && layer.rtree.is_none() {
            return Ok(self.read_all(c)?.bbox());
        }
        match (found, &layer.to_lonlat) {
            (Some(b), Some(t)) => Ok(Some(t.bbox(b)?)),
            (b, _) => Ok(b),
        }
    }

    /// The largest row id of `layer` (0 when empty): an upper bound of its
    /// row count that SQLite finds without a scan.
    fn max_rowid(&self, layer: &Layer) -> Result<usize> {
        let sql = format!("SELECT max(rowid) FROM {}", quote(&layer.table));
        let max: Option<i64> =
            (self.conn.query_row(&sql, [], |r| r.get(0))).map_err(|e| self.context(e.into()))?;
        Ok(max.map_or(0, |m| usize::try_from(m).unwrap_or(0)))
    }

    /// The description of layer `c`; `Error::Gpkg` when the file has none.
    pub(super) fn layer(&self, c: Collection) -> Result<&Layer> {
        match self.layers.get(&c) {
            Some(Ok(layer)) => Ok(layer),
            Some(Err(e)) => Err(e.clone()),
            None => Err(Error::Gpkg(format!(
                "{} has no {} layer (looked for {}).",
                self.path.display(),
                c.gpkg_names()[0],
                c.gpkg_names().join(", ")
            ))),
        }
    }

    /// `e` with the file's path before it.
    pub(super) fn context(&self, e: Error) -> Error {
        e.context(&self.path.display().to_string())
    }

    /// The connection, read-only, for the other readers of this module.
    pub(super) fn connection(&self) -> &Connection {
        &self.conn
    }

    /// Runs a `layer.select()` query into `rows`, keeping the rows `keep` says.
    fn query(
        &self,
        rows: &mut Rows,
        sql: &str,
        params: impl rusqlite::Params,
        keep: Keep,
    ) -> Result<()> {
        let mut stmt = self.conn.prepare(sql).map_err(|e| self.context(e.into()))?;
        let mut results = stmt.query(params).map_err(|e| self.context(e.into()))?;
        while let Some(row) = results.next().map_err(|e| self.context(e.into()))? {
            self.row(rows, row, keep)?;
        }
        Ok(())
    }

    /// Adds one result row to `rows` when `keep` keeps it (attributes are
    /// only read for kept rows; the WKB of a row whose key is not asked for,
    /// or whose blob envelope is outside the box, is never parsed).
    fn row(&self, rows: &mut Rows, row: &Row, keep: Keep) -> Result<()> {
        let layer = rows.layer;
        let filter = match keep {
            Keep::All => None,
            Keep::InBox(filter) => Some(filter),
            Keep::KeyIn(at, ids) => {
                let key = row.get_ref(at).map_err(|e| self.context(e.into()))?;
                if !integer(key).is_some_and(|k| ids.contains(k)) {
                    return Ok(());
                }
                None
            }
        };
        let fid = row.get_ref(0).ok().and_then(integer);
        let where_ = || {
            format!(
                "{}: layer {}, feature {}",
                self.path.display(),
                layer.table,
                fid.unwrap_or(-1)
            )
        };
        let geometry = &mut rows.table.geometry;
        match row.get_ref(1).map_err(|e| self.context(e.into()))? {
            ValueRef::Null if filter.is_some() => return Ok(()),
            ValueRef::Null => geometry.push_none().map_err(Error::Gpkg)?,
            ValueRef::Blob(bytes) => {
                let context = |e: Error| e.context(&where_());
                if let Some(filter) = filter {
                    let envelope = blob::header(bytes).map_err(context)?.envelope;
                    if !envelope.is_none_or(|e| filter.envelope_may_intersect(e)) {
                        return Ok(());
                    }
                }
                let bbox = blob::parse_into(bytes, geometry, layer.to_lonlat.as_deref())
                    .map_err(context)?;
                if let Some(filter) = filter {
                    if !filter.keeps(bbox, bytes, layer).map_err(context)? {
                        geometry.pop_row();
                        return Ok(());
                    }
                }
            }
            _ => {
                return Err(Error::Gpkg(format!(
                    "{}: the geometry is not a blob.",
                    where_()
                )))
            }
        }
        rows.properties(row).map_err(|e| self.context(e))?;
        if let Some(fid) = fid {
            rows.table.set_id(Scalar::Int(fid)).map_err(Error::Gpkg)?;
        }
        rows.table.end_row();
        if rows.measuring && rows.table.rows() % MEASURED_ROWS == 0 {
            rows.table.measure_extent();
        }
        match &rows.batch {
            Some((size, _)) if rows.table.rows() >= *size => rows.flush(),
            _ => Ok(()),
        }
    }
}

/// A share of a layer's rows by feature id, for readers on separate
/// connections: share `index` of `of` holds the fids in the `index`-th of
/// `of` equal ranges up to the largest row id (the first and last shares
/// open-ended), so the shares together hold every row, each once, and in
/// fid order one after the other.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Share {
    pub index: usize,
    pub of: usize,
}

impl Share {
    /// Every row.
    pub const WHOLE: Share = Share { index: 0, of: 1 };

    /// The share's fids as `(low, high]`, given the layer's largest row id.
    fn fids(self, max_rowid: usize) -> (i64, i64) {
        let bound = |i: usize| i64::try_from(max_rowid * i / self.of.max(1)).unwrap_or(i64::MAX);
        let low = if self.index == 0 {
            i64::MIN
        } else {
            bound(self.index)
        };
        let high = if self.index + 1 >= self.of {
            i64::MAX
        } else {
            bound(self.index + 1)
        };
        (low, high)
    }
}

/// What [`GeoPackage::for_each_by_ids`] hands each batch of rows to. It
/// may hand back an emptied builder (an earlier batch's, from
/// [`crate::table::geometry::Geometries::recycle`]), whose memory the next
/// batch's geometries then fill.
pub type BatchReceiver<'a> = dyn FnMut(Table) -> Result<Option<GeometryBuilder>> + 'a;

/// The table a layer's queries fill, one result row at a time.
struct Rows<'a> {
    layer: &'a Layer,
    table: TableBuilder,
    /// The builder's key of each of `layer.properties`, interned at the
    /// first row of each table (a read of no rows has no columns).
    keys: Vec<u32>,
    /// When set, each `size` rows are handed over as a table and forgotten.
    batch: Option<(usize, &'a mut BatchReceiver<'a>)>,
    /// Whether the table's box is measured as the rows come
    /// ([`Rows::measuring`]).
    measuring: bool,
}

/// The chunks of a layer's rows per thread of
/// [`GeoPackage::read_by_ids_in_shares`]: the most one reader can be left
/// to read alone is a chunk.
const CHUNKS_PER_READER: usize = 16;

/// The rows after which a measuring reader measures the box of the rows
/// just read ([`Rows::measuring`]): few enough that their coordinates are
/// still in the cache.
const MEASURED_ROWS: usize = 1024;

impl<'a> Rows<'a> {
    fn new(layer: &'a Layer) -> Rows<'a> {
        Rows {
            layer,
            table: TableBuilder::default(),
            keys: Vec::new(),
            batch: None,
            measuring: false,
        }
    }

    /// Rows whose table's box is measured as they are read, every
    /// [`MEASURED_ROWS`] rows while their coordinates are in the cache
    /// ([`TableBuilder::measure_extent`]), and at the end with
    /// [`Rows::finish_measured`]: for a share read on a thread of its own.
    fn measuring(layer: &'a Layer) -> Rows<'a> {
        Rows {
            measuring: true,
            ..Rows::new(layer)
        }
    }

    /// The table, its box measured to the last row.
    fn finish_measured(mut self) -> TableBuilder {
        self.table.measure_extent();
        self.table
    }

    /// Hands the rows gathered so far to the batch's receiver, if any rows.
    fn flush(&mut self) -> Result<()> {
        let Some((_, each)) = &mut self.batch else {
            return Ok(());
        };
        if self.table.rows() == 0 {
            return Ok(());
        }
        self.keys.clear();
        let table = std::mem::take(&mut self.table)
            .finish()
            .map_err(Error::Gpkg)?;
        if let Some(recycled) = each(table)? {
            self.table.geometry = recycled;
        }
        Ok(())
    }

    /// Sets the current row's properties from the attribute columns of `row`
    /// (a `layer.select()` row): integers, finite reals and text as they
    /// are; NULL, blobs and non-finite reals as null.
    fn properties(&mut self, row: &Row) -> Result<()> {
        if self.keys.len() != self.layer.properties.len() {
            self.keys = (self.layer.properties.iter())
                .map(|(_, name)| self.table.key(name))
                .collect();
        }
        for (&key, (i, _)) in self.keys.iter().zip(&self.layer.properties) {
            let text;
            let value = match row.get_ref(i + 2)? {
                ValueRef::Integer(v) => Scalar::Int(v),
                ValueRef::Real(v) if v.is_finite() => Scalar::Float(v),
                ValueRef::Text(t) => {
                    text = String::from_utf8_lossy(t);
                    Scalar::Str(&text)
                }
                _ => Scalar::Null,
            };
            self.table.set(key, value).map_err(Error::Gpkg)?;
        }
        Ok(())
    }

    fn finish(self) -> Result<Table> {
        self.table.finish().map_err(Error::Gpkg)
    }
}

/// Which rows of a query [`GeoPackage::query`] keeps.
#[derive(Clone, Copy)]
enum Keep<'a> {
    All,
    /// Rows whose geometry exists and passes the box test.
    InBox(&'a Filter),
    /// Rows whose key, the result column at this index, is in the set.
    KeyIn(usize, &'a WantedIds),
}

/// The rows of `shares`, each in rowid order, in one list in rowid order
/// (rowids are unique, so the order is the same however the rows were
/// shared out).
fn merged_by_rowid(mut shares: Vec<Vec<(i64, Reach)>>) -> Vec<(i64, Reach)> {
    if shares.len() <= 1 {
        return shares.pop().unwrap_or_default();
    }
    let mut merged = Vec::with_capacity(shares.iter().map(Vec::len).sum());
    let mut heads: Vec<_> = (shares.into_iter())
        .map(|share| share.into_iter().peekable())
        .collect();
    loop {
        let least = (heads.iter_mut().enumerate())
            .filter_map(|(i, head)| head.peek().map(|(rowid, _)| (*rowid, i)))
            .min();
        match least.and_then(|(_, i)| heads[i].next()) {
            Some(row) => merged.push(row),
            None => return merged,
        }
    }
}

/// The flowline topology columns, each by its names in order of preference:
/// comid, hydroseq, dnhydroseq, stream order.
const TOPOLOGY: [&[&str]; 4] = [
    &["comid", "nhdplusid"],
    &["hydroseq"],
    &["dnhydroseq"],
    &["streamorde", "streamorder"],
];

/// The test of [`GeoPackage::read_bbox`]: the box in NAD83 lon/lat for the
/// exact intersection, and in the file's CRS for blob envelopes.
struct Filter {
    rect: Rect<f64>,
    bbox: [f64; 4],
    file_bbox: [f64; 4],
}

impl Filter {
    /// Whether a parsed row whose NAD83 bounding box is `row_bbox` (`None`:
    /// no geometry) intersects the box: decided by the bounding box unless
    /// it straddles an edge of the box, then by the exact test on the
    /// geometry of the blob `bytes`, built for that row only.
    fn keeps(&self, row_bbox: Option<[f64; 4]>, bytes: &[u8], layer: &Layer) -> Result<bool> {
        let Some(r) = row_bbox else {
            return Ok(false);
        };
        let b = self.bbox;
        if r[2] < b[0] || r[0] > b[2] || r[3] < b[1] || r[1] > b[3] {
            return Ok(false);
        }
        if r[0] >= b[0] && r[2] <= b[2] && r[1] >= b[1] && r[3] <= b[3] {
            return Ok(true);
        }
        let Some(mut g) = blob::parse(bytes)? else {
            return Ok(false);
        };
        if let Some(t) = &layer.to_lonlat {
            t.geometry(&mut g)?;
        }
        Ok(g.intersects(&self.rect))
    }

    /// False when the envelope `[minx, miny, maxx, maxy]` (file CRS) is
    /// disjoint from the box.
    fn envelope_may_intersect(&self, e: [f64; 4]) -> bool {
        let b = self.file_bbox;
        e[0] <= b[2] && e[2] >= b[0] && e[1] <= b[3] && e[3] >= b[1]
    }
}

/// Names of the feature tables listed in `gpkg_contents`.
fn feature_tables(conn: &Connection) -> rusqlite::Result<Vec<String>> {
    let mut stmt = conn.prepare(
        "SELECT table_name FROM gpkg_contents WHERE data_type = 'features' COLLATE NOCASE ORDER BY table_name",
    )?;
    let names = stmt.query_map([], |r| r.get(0))?.collect();
    names
}

/// The key column of a layer for [`GeoPackage::read_by_ids`], by preference.
fn key_columns(c: Collection) -> &'static [&'static str] {
    match c {
        Collection::Catchment => &["featureid", "nhdplusid", "comid"],
        Collection::Gage => &["flcomid", "comid"],
        _ => &["comid", "nhdplusid"],
    }
}

/// The rows of `table` (read by the ids `unique`, whose key column is
/// `key`) in the order of `unique`: usually already so for flowlines (ids in
/// file order), then without a copy.
fn in_order_of(table: Table, key: &str, unique: &[i64]) -> Table {
    let keys = table.column(&key.to_ascii_lowercase());
    let in_order = table.len() == unique.len()
        && (0..table.len()).all(|row| keys.and_then(|k| k.i64(row)) == Some(unique[row]));
    if in_order {
        return table;
    }
    let mut by_id: HashMap<i64, Vec<usize>> = HashMap::with_capacity(unique.len());
    for row in 0..table.len() {
        if let Some(id) = keys.and_then(|k| k.i64(row)) {
            by_id.entry(id).or_default().push(row);
        }
    }
    let order: Vec<usize> = unique
        .iter()
        .filter_map(|id| by_id.remove(id))
        .flatten()
        .collect();
    if order.len() == table.len() && order.iter().enumerate().all(|(i, &row)| i == row) {
        return table;
    }
    table.take(&order)
}

/// How [`GeoPackage::read_by_ids`] finds its rows: the key column's name
/// (borrowed from the layer), the ids without duplicates (borrowed from the
/// caller's when they had none), and the scan when the ids are a large
/// share of the layer (else `IN` lists on the key).
struct ByIds<'l, 'i> {
    key: &'l str,
    unique: Cow<'i, [i64]>,
    scan: Option<IdScan>,
}

/// One pass over a layer keeping the rows whose key is wanted.
struct IdScan {
    /// The key's position in a selected row.
    key_at: usize,
    wanted: WantedIds,
    /// The layer's largest row id, which bounds the shares of the scan.
    max_rowid: usize,
}

impl IdScan {
    fn keep(&self) -> Keep<'_> {
        Keep::KeyIn(self.key_at, &self.wanted)
    }
}

/// `ids` without repeats (the first of each, in order), `ids` itself when
/// it has none; and `ids` sorted. Repeats are found in the sorted copy
/// rather than by hashing every id.
fn unique_ids(ids: &[i64]) -> (Cow<'_, [i64]>, Vec<i64>) {
    let mut sorted = ids.to_vec();
    sorted.sort_unstable();
    if sorted.windows(2).all(|w| w[0] != w[1]) {
        return (Cow::Borrowed(ids), sorted);
    }
    let mut seen = IdSet::with_capacity_and_hasher(sorted.len(), Default::default());
    let unique = ids.iter().copied().filter(|id| seen.insert(*id)).collect();
    (Cow::Owned(unique), sorted)
}

/// An SQLite value as an integer: integers, integral reals (R writes
/// `Hydroseq` as REAL) and numeric text.
fn integer(v: ValueRef) -> Option<i64> {
    match v {
        ValueRef::Integer(i) => Some(i),
        ValueRef::Real(f) => crate::table::column::exact_i64(f),
        ValueRef::Text(t) => std::str::from_utf8(t).ok()?.trim().parse().ok(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The real Yahara sample, copied into a folder of its own.
    fn sample_copy(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("hydroplot-reader-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("yahara.gpkg");
        let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/yahara_sample.gpkg");
        std::fs::copy(sample, &path).unwrap();
        path
    }

    /// The topology as plain SQL reads it, in row order.
    fn plain_sql(path: &Path) -> Vec<Reach> {
        let conn = Connection::open(path).unwrap();
        let mut stmt = conn
            .prepare(
                "SELECT CAST(COMID AS INTEGER), coalesce(CAST(Hydroseq AS INTEGER), 0), \
                 coalesce(CAST(DnHydroseq AS INTEGER), 0), coalesce(CAST(StreamOrde AS INTEGER), 0) \
                 FROM NHDFlowline_Network WHERE COMID IS NOT NULL ORDER BY rowid",
            )
            .unwrap();
        let rows = stmt.query_map([], |r| {
            Ok(Reach {
                comid: r.get(0)?,
                hydroseq: r.get(1)?,
                dnhydroseq: r.get(2)?,
                streamorder: r.get(3)?,
            })
        });
        rows.unwrap().collect::<rusqlite::Result<_>>().unwrap()
    }

    #[test]
    fn the_topology_read_in_any_number_of_shares_is_every_row_once_in_row_order() {
        let path = sample_copy("topology");
        let truth = plain_sql(&path);
        assert_eq!(truth.len(), 267);
        for indexed in [false, true] {
            if indexed {
                rusqlite::Connection::open(&path)
                    .unwrap()
                    .execute_batch("CREATE INDEX by_hand ON NHDFlowline_Network (COMID, Hydroseq, DnHydroseq, StreamOrde)")
                    .unwrap();
            }
            let gpkg = GeoPackage::open(&path).unwrap();
            for shares in [1, 2, 3, 7, 40] {
                let rows = gpkg.read_topology_in(shares).unwrap();
                assert!(rows.windows(2).all(|w| w[0].0 < w[1].0), "in rowid order");
                assert_eq!(
                    rows.into_iter().map(|(_, r)| r).collect::<Vec<_>>(),
                    truth,
                    "{shares} shares, index {indexed}"
                );
            }
        }
        let _ = std::fs::remove_dir_all(path.parent().unwrap());
    }
}
