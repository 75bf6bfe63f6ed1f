//! Making the index of a local NHDPlus GeoPackage ([`index_geopackage`],
//! and by a plot's first read, [`read_network_and_index`]), finding the
//! current one of an open GeoPackage ([`GeoPackage::use_index`]) and saying
//! where it is ([`index_status`]). The index file itself, what it records
//! and how it is read, is `index_file.rs`; the GeoPackage is only read.

use super::basin_parts::{cut, made_parts, partable};
use super::index_file::{
    index_path, FlowlineRowids, Identity, IndexFile, IndexPlace, PartsRecord, Source, StoredPart,
    TableCounts, FORMAT,
};
use super::layer::quote;
use super::reader::GeoPackage;
use super::stored_network::{self, BASIN_NETWORK, BASIN_PARTS, FLOWLINE_ROWIDS, TOPOLOGY_INDEX};
use super::stored_upstream::read_upstream;
use crate::cancel::Stop;
use crate::collection::Collection;
use crate::network::{IdSet, Network, Reach};
use crate::{Error, Result};
use rusqlite::{params, Connection, OpenFlags, OptionalExtension};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The [`TableCounts`] of `gpkg`.
fn table_counts(gpkg: &GeoPackage) -> Result<TableCounts> {
    let mut counts = Vec::new();
    for c in [Collection::FlowlineNetwork, Collection::Catchment] {
        let Ok(layer) = gpkg.layer(c) else { continue };
        // One aggregate a query: SQLite then reads one end of the b-tree.
        let end = |f: &str| -> Result<i64> {
            let sql = format!(
                "SELECT coalesce({f}(rowid), 0) FROM {}",
                quote(&layer.table)
            );
            (gpkg.connection().query_row(&sql, [], |r| r.get(0)))
                .map_err(|e| gpkg.context(e.into()))
        };
        counts.push((layer.table.clone(), end("min")?, end("max")?));
    }
    Ok(counts)
}

impl Source {
    /// The source as `gpkg` is now.
    fn now(gpkg: &GeoPackage) -> Result<Source> {
        let identity =
            Identity::of(gpkg.path()).map_err(|e| crate::error::io_error(gpkg.path(), e))?;
        Ok(Source {
            identity,
            tables: table_counts(gpkg)?,
        })
    }
}

/// The first current index of `gpkg`: beside it, then in `dir`.
fn find(gpkg: &GeoPackage, dir: &Path) -> Option<IndexFile> {
    let now = Source::now(gpkg).ok()?;
    [IndexPlace::Beside, IndexPlace::Dir(dir)]
        .into_iter()
        .filter_map(|place| index_path(gpkg.path(), place).ok())
        .filter_map(|path| IndexFile::open(&path))
        .find(|index| index.source == now)
}

impl GeoPackage {
    /// From now on the stored network and basin parts are read from the
    /// current index file of this GeoPackage, beside it or in `dir`
    /// ([`index_geopackage`]), when there is one: the index file's path, or
    /// `None` (the file is then read alone, or with an index of release 0.2
    /// inside it). An index that no longer matches the file is never used.
    pub fn use_index(&mut self, dir: &Path) -> Option<&Path> {
        let index = find(self, dir);
        self.set_index(index)
    }
}

/// What [`index_geopackage`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Indexed {
    /// The index file.
    pub path: PathBuf,
    /// Whether it was written (false: a current one was there already).
    pub written: bool,
    /// The flowlines in its stored network.
    pub reaches: usize,
    /// Its basin parts.
    pub parts: PartsOutcome,
}

/// What an index holds of basin parts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PartsOutcome {
    /// `parts` parts.
    Parts { parts: usize },
    /// None, for the reason `why`.
    Skipped { why: String },
}

/// Makes the index of the NHDPlus GeoPackage at `path` in `place`: its
/// network stored, and its basin parts of at least `reaches_per_part`
/// reaches ([`super::REACHES_PER_PART`] by default). The GeoPackage is only
/// read, so a read-only file is indexed like any other. Idempotent: a
/// current index in `place` is kept as it is; one that plots began
/// ([`make_basin_parts`]) is completed, its parts kept.
///
/// A file that is not an SQLite database, not a GeoPackage or without the
/// flowline layer and its topology columns is an `Error::Gpkg`; a file
/// written to while it is read is an `Error::Gpkg` (run again), and the old
/// index stays. A directory that cannot be written is an `Error::Io`. A
/// cancel of `stop` is `Error::Cancelled`, nothing written. `progress`
/// hears (parts made, parts to make) on the calling thread.
pub fn index_geopackage(
    path: &Path,
    place: IndexPlace,
    reaches_per_part: usize,
    threads: usize,
    stop: &Stop,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Indexed> {
    let mut gpkg =
        super::user_file::open_nhdplus(path, "only NHDPlus GeoPackages are indexed", stop)?;
    gpkg.watch(stop);
    let target = index_path(path, place)?;
    let source = Source::now(&gpkg)?;
    if let Some(kept) = current_index(&target, &source, reaches_per_part)? {
        return Ok(kept);
    }
    let begun = begun_parts(&target, &source, reaches_per_part);
    let (rowids, reaches): (Vec<i64>, Vec<Reach>) = gpkg.read_topology_rows()?.into_iter().unzip();
    let (network, parts) = match cut(&reaches, reaches_per_part) {
        Ok((network, closing)) => match catchments_usable(&gpkg) {
            Ok(()) => {
                let closed: IdSet = closing.iter().map(|&c| reaches[c].comid).collect();
                let mut parts: Vec<StoredPart> = begun
                    .into_iter()
                    .filter(|p| closed.contains(&p.0))
                    .collect();
                let have: IdSet = parts.iter().map(|p| p.0).collect();
                let make: Vec<usize> = (closing.iter().copied())
                    .filter(|&c| !have.contains(&reaches[c].comid))
                    .collect();
                let cut = (closing.as_slice(), make.as_slice());
                parts.extend(made_parts(
                    &gpkg, &reaches, &network, cut, threads, stop, progress,
                )?);
                (network, Ok(parts))
            }
            Err(why) => (network, Err(why)),
        },
        Err(why) => (Network::new(&reaches), Err(why)),
    };
    if Source::now(&gpkg)? != source {
        return Err(Error::Gpkg(format!(
            "{}: the file was written to while it was indexed; run `hydroplot index` again",
            path.display()
        )));
    }
    let network = stored_network::fits(reaches.len()).then(|| {
        let blob = stored_network::encode(&reaches, &network);
        (blob, stored_network::encode_rowids(&rowids))
    });
    drop(gpkg);
    let outcome = match &parts {
        Ok(parts) => PartsOutcome::Parts { parts: parts.len() },
        Err(why) => PartsOutcome::Skipped { why: why.clone() },
    };
    let made = Made {
        reaches_per_part,
        parts: parts
            .as_ref()
            .map(|p| p.iter().collect())
            .map_err(String::as_str),
        complete: true,
    };
    write_index(&target, &source, network.as_ref(), made)?;
    Ok(Indexed {
        path: target,
        written: true,
        reaches: reaches.len(),
        parts: outcome,
    })
}

/// What the index file at `target` holds when it is current for `source`
/// and was made with parts of `reaches_per_part` reaches, all of them
/// (not those of the basins plotted so far), its network readable
/// ([`index_geopackage`] then keeps it); else `None`.
fn current_index(
    target: &Path,
    source: &Source,
    reaches_per_part: usize,
) -> Result<Option<Indexed>> {
    let Some(index) = IndexFile::open(target).filter(|i| &i.source == source) else {
        return Ok(None);
    };
    let (Some((reaches, _)), Some(record)) = (index.network(), index.parts_made()) else {
        return Ok(None);
    };
    if record.reaches_per_part != reaches_per_part || !record.complete {
        return Ok(None);
    }
    let parts = match record.no_parts {
        Some(why) => PartsOutcome::Skipped { why },
        None => PartsOutcome::Parts {
            parts: index.parts()?.len(),
        },
    };
    Ok(Some(Indexed {
        path: target.to_path_buf(),
        written: false,
        reaches: reaches.len(),
        parts,
    }))
}

/// The parts of the index file at `target` when it is current for `source`
/// and plots began it ([`make_basin_parts`]) with parts of
/// `reaches_per_part` reaches: [`index_geopackage`] makes the rest. None
/// otherwise.
fn begun_parts(target: &Path, source: &Source, reaches_per_part: usize) -> Vec<StoredPart> {
    let Some(index) = IndexFile::open(target).filter(|i| &i.source == source) else {
        return Vec::new();
    };
    match index.parts_made() {
        Some(PartsRecord {
            complete: false,
            no_parts: None,
            reaches_per_part: size,
        }) if size == reaches_per_part => index.stored_parts().unwrap_or_default(),
        _ => Vec::new(),
    }
}

/// The reaches of a file's network, in row order, and their network.
pub type NetworkRead = (Vec<Reach>, Network);

/// The network of `gpkg`, which has no current index, read from the file
/// in `threads` shares, and what its new index file in `dir` needs beside
/// it: the index is written by [`make_basin_parts`] with the basin parts
/// the plot makes, in one write, or alone by [`NewIndex::store`]; `gpkg`
/// then uses it, and the next plots. The flowlines are read by the rowids
/// just read from now on. When the network cannot be stored (too many
/// flowlines for one blob), it is returned all the same, with the reason.
pub fn read_network_and_index(
    gpkg: &mut GeoPackage,
    dir: &Path,
    threads: usize,
) -> Result<(NetworkRead, Result<NewIndex>)> {
    let source = Source::now(gpkg)?;
    let (rowids, reaches): (Vec<i64>, Vec<Reach>) =
        gpkg.read_topology_in(threads)?.into_iter().unzip();
    let network = Network::new(&reaches);
    let new = match stored_network::fits(reaches.len()) {
        true => Ok(NewIndex {
            dir: dir.to_path_buf(),
            source,
            rowids: stored_network::encode_rowids(&rowids),
        }),
        false => Err(Error::Gpkg("too many flowlines for one blob".into())),
    };
    let comids = reaches.iter().map(|r| r.comid).collect();
    if let Some(known) = FlowlineRowids::every(comids, rowids) {
        gpkg.set_flowline_rowids(Arc::new(known));
    }
    Ok(((reaches, network), new))
}

/// A network read from a GeoPackage without a current index, not yet
/// stored ([`read_network_and_index`]): the index directory, the file as it
/// was before the read, the flowlines' rowids encoded. Dropped unstored
/// when the plot fails.
pub struct NewIndex {
    dir: PathBuf,
    source: Source,
    rowids: Vec<u8>,
}

impl NewIndex {
    /// Stores the network `read` of `gpkg` as its new index file, with no
    /// basin parts yet, written under a temporary name and renamed, which
    /// `gpkg` then uses with the rowids it knows. An error when the file
    /// was written to since it was read, or the index cannot be written:
    /// `gpkg` then uses none.
    pub fn store(self, gpkg: &mut GeoPackage, read: (&[Reach], &Network)) -> Result<()> {
        let dir = self.dir.clone();
        let network = stored_network::encode(read.0, read.1);
        self.write(gpkg, network, NO_PART_YET, Vec::new()).wait()?;
        // The rowids just stored, known without reading them back.
        let known = gpkg.known_flowline_rowids();
        if gpkg.use_index(&dir).is_some() {
            if let Some(known) = known {
                gpkg.set_flowline_rowids(known);
            }
        }
        Ok(())
    }

    /// Starts writing the network of `gpkg` (its blob `network`,
    /// [`stored_network::encode`]) and `parts` of `reaches_per_part`
    /// reaches as its new index file, on a thread of its own
    /// ([`IndexWrite`]); `gpkg` goes on without it.
    fn write(
        self,
        gpkg: &GeoPackage,
        network: Vec<u8>,
        reaches_per_part: usize,
        parts: Vec<Arc<StoredPart>>,
    ) -> IndexWrite {
        let target = index_path(gpkg.path(), IndexPlace::Dir(&self.dir));
        match target.and_then(|t| unchanged_since(gpkg, &self.source).map(|()| t)) {
            Ok(target) => {
                let blobs = (network, self.rowids);
                IndexWrite::start(target, self.source, blobs, reaches_per_part, parts)
            }
            Err(e) => IndexWrite::failed(e),
        }
    }
}

/// `Ok` when `gpkg` is as `source` recorded it, else why not.
fn unchanged_since(gpkg: &GeoPackage, source: &Source) -> Result<()> {
    match Source::now(gpkg)? == *source {
        true => Ok(()),
        false => Err(Error::Gpkg(
            "the file was written to while it was read".into(),
        )),
    }
}

/// An index file being written on a thread of its own while the plot that
/// made its parts goes on ([`make_basin_parts`]), or why it is not. Owns
/// the thread: dropping it waits for the write, so no file is written
/// once the plot has returned.
pub struct IndexWrite {
    /// The thread writing the file ([`write_index`]), until waited for.
    writer: Option<std::thread::JoinHandle<Result<()>>>,
    /// Why nothing is written, when known before any thread.
    failed: Option<Error>,
}

impl IndexWrite {
    /// Nothing to write.
    fn none() -> IndexWrite {
        IndexWrite {
            writer: None,
            failed: None,
        }
    }

    /// Nothing written, for the reason `why`.
    fn failed(why: Error) -> IndexWrite {
        IndexWrite {
            writer: None,
            failed: Some(why),
        }
    }

    /// Writes the index file `target` of `source` with its network blobs
    /// and `parts` of `reaches_per_part` reaches, on a new thread.
    fn start(
        target: PathBuf,
        source: Source,
        network: (Vec<u8>, Vec<u8>),
        reaches_per_part: usize,
        parts: Vec<Arc<StoredPart>>,
    ) -> IndexWrite {
        let write = move || {
            let made = Made {
                reaches_per_part,
                parts: Ok(parts.iter().map(|p| &**p).collect()),
                complete: false,
            };
            write_index(&target, &source, Some(&network), made)
        };
        let spawned = std::thread::Builder::new()
            .name("hydroplot-index-writer".into())
            .spawn(write);
        match spawned {
            Ok(writer) => IndexWrite {
                writer: Some(writer),
                failed: None,
            },
            Err(e) => IndexWrite::failed(Error::Io(format!("no thread to write the index: {e}"))),
        }
    }

    /// Waits for the write to end: `Ok` when the file was written.
    pub fn wait(mut self) -> Result<()> {
        if let Some(why) = self.failed.take() {
            return Err(why);
        }
        match self.writer.take().map(std::thread::JoinHandle::join) {
            None => Ok(()),
            Some(Ok(written)) => written,
            Some(Err(_)) => Err(Error::Internal("the index writer panicked".into())),
        }
    }
}

impl Drop for IndexWrite {
    fn drop(&mut self) {
        if let Some(writer) = self.writer.take() {
            let _ = writer.join();
        }
    }
}

impl GeoPackage {
    /// The upstream of the reaches of `comids` (each comid's first reach)
    /// and its network, read in place from the stored network of the index
    /// file in use while the file is as it recorded, with the number of
    /// reaches of the whole network; the flowlines of those reaches are
    /// read by rowid from now on. The same reaches, in the same order and
    /// with the same links, as the whole network's upstream of them, so the
    /// same basins. `parts_may_be_made`: the plot makes the basin parts it
    /// needs ([`make_basin_parts`]); the first parts of an index need the
    /// whole network (its checks), so there is then no upstream alone.
    /// `None` when it cannot be read so: the caller reads the whole network
    /// ([`GeoPackage::read_network`]).
    pub fn upstream_from_index(
        &mut self,
        comids: &[i64],
        parts_may_be_made: bool,
    ) -> Option<(NetworkRead, usize)> {
        let index = self.index().filter(|i| i.still_current(self.path()))?;
        let first_parts = matches!(
            index.parts_made(),
            Some(PartsRecord {
                complete: false,
                no_parts: None,
                reaches_per_part: NO_PART_YET,
            })
        );
        if parts_may_be_made && first_parts {
            return None;
        }
        let upstream = read_upstream(index, comids)?;
        self.set_flowline_rowids(Arc::new(upstream.rowids));
        Some(((upstream.reaches, upstream.network), upstream.total))
    }
}

/// The fewest reaches of a part recorded by an index without parts yet
/// (a plot made it, which stored the network alone): the size is chosen
/// by the first plot that makes some.
const NO_PART_YET: usize = 0;

/// Makes the basin parts a plot needs that the index file in use lacks,
/// when it holds the parts of the basins plotted so far (not all, not
/// none for good), or that the index `new` (read by this plot, not yet
/// stored) needs: those lying whole in the upstream of `outlets` (reach
/// indexes of `network`, the network of `reaches` as the file holds
/// them), of the size the index records, or `reaches_per_part` reaches
/// when it records none yet ([`super::REACHES_PER_PART`] by default). An
/// upstream smaller than one part makes nothing. The parts made are used
/// by `gpkg` from now on ([`GeoPackage::basin_parts`]), and stored with
/// the index's other parts in a new index file in the place of the one in
/// use (with `new`, its network and these parts, in one write), for the
/// next plots; the GeoPackage is only read. `new` is stored even when no
/// part is made.
///
/// Returns how many parts were made, and the write of the index file that
/// stores them (or `new` alone), going on on a thread of its own: its
/// [`IndexWrite::wait`] says why nothing was stored when nothing was (the
/// file was written to meanwhile, or the index cannot be written); the
/// plot goes on all the same. A failure to read the catchments is an
/// error, `new` then not stored; a cancel of `stop` is `Error::Cancelled`.
/// `progress` hears (parts made, parts to make) on the calling thread.
#[allow(clippy::too_many_arguments)]
pub fn make_basin_parts(
    gpkg: &mut GeoPackage,
    (reaches, network): (&[Reach], &Network),
    outlets: &[usize],
    reaches_per_part: usize,
    threads: usize,
    new: Option<NewIndex>,
    stop: &Stop,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<(usize, IndexWrite)> {
    let none_yet = PartsRecord {
        complete: false,
        no_parts: None,
        reaches_per_part: NO_PART_YET,
    };
    let record = match &new {
        Some(_) => Some(none_yet),
        None => (gpkg.index())
            .filter(|index| index.still_current(gpkg.path()))
            .and_then(IndexFile::parts_made),
    };
    let size = match &record {
        Some(PartsRecord {
            complete: false,
            no_parts: None,
            reaches_per_part: NO_PART_YET,
        }) => reaches_per_part.max(1),
        Some(PartsRecord {
            complete: false,
            no_parts: None,
            reaches_per_part: size,
        }) => *size,
        _ => return Ok((0, IndexWrite::none())),
    };
    let nothing_made = |gpkg: &mut GeoPackage, new: Option<NewIndex>| {
        let stored = new.map_or(Ok(()), |n| n.store(gpkg, (reaches, network)));
        Ok((
            0,
            stored
                .err()
                .map_or_else(IndexWrite::none, IndexWrite::failed),
        ))
    };
    let upstream = network.upstream_mask(outlets);
    // Parts made already passed the checks, on the file as it still is.
    let first = record.is_some_and(|r| r.reaches_per_part == NO_PART_YET);
    if upstream.iter().filter(|&&u| u).count() < size
        || (first && (partable(reaches).is_err() || catchments_usable(gpkg).is_err()))
    {
        return nothing_made(gpkg, new);
    }
    let stored = gpkg.basin_parts()?.unwrap_or_default();
    let closing = network.parts(size);
    let make: Vec<usize> = (closing.iter().copied())
        .filter(|&c| upstream[c] && !stored.contains(&reaches[c].comid))
        .collect();
    if make.is_empty() {
        return nothing_made(gpkg, new);
    }
    // A new index's network is encoded beside the fold, which it waits for.
    let (parts, encoded) = std::thread::scope(|s| {
        let encoding =
            (new.is_some()).then(|| s.spawn(|| stored_network::encode(reaches, network)));
        let cut = (closing.as_slice(), make.as_slice());
        let parts = made_parts(gpkg, reaches, network, cut, threads, stop, progress);
        let encoded = encoding.map(|e| e.join().expect("the network's encoding does not panic"));
        (parts, encoded)
    });
    let parts: Vec<Arc<StoredPart>> = parts?.into_iter().map(Arc::new).collect();
    let writing = match new.zip(encoded) {
        Some((new, encoded)) => new.write(gpkg, encoded, size, parts.clone()),
        None => write_more_parts(gpkg, size, &parts),
    };
    gpkg.add_made_parts(&parts);
    Ok((make.len(), writing))
}

/// Starts writing `parts` of `reaches_per_part` reaches, made for the
/// index file in use by `gpkg`, in a new index file in its place, with all
/// it holds and the parts `gpkg` made before ([`IndexWrite`]).
fn write_more_parts(
    gpkg: &GeoPackage,
    reaches_per_part: usize,
    parts: &[Arc<StoredPart>],
) -> IndexWrite {
    let read = (|| {
        let index = (gpkg.index()).ok_or_else(|| Error::Gpkg("no index file in use".into()))?;
        unchanged_since(gpkg, &index.source)?;
        let network = (index.network_blobs())
            .ok_or_else(|| Error::Gpkg("the index holds no readable network".into()))?;
        let stored = index.stored_parts()?.into_iter().map(Arc::new);
        let all = (stored.chain(gpkg.made_parts().values().cloned()))
            .chain(parts.iter().cloned())
            .collect();
        Ok((
            index.path().to_path_buf(),
            index.source.clone(),
            network,
            all,
        ))
    })();
    match read {
        Ok((target, source, network, all)) => {
            IndexWrite::start(target, source, network, reaches_per_part, all)
        }
        Err(e) => IndexWrite::failed(e),
    }
}

/// `Ok` when the catchments of `gpkg` can have parts: a catchment layer in
/// NAD83 longitude/latitude; else why not.
fn catchments_usable(gpkg: &GeoPackage) -> std::result::Result<(), String> {
    match gpkg.layer(Collection::Catchment) {
        Err(e) => Err(format!("its catchment layer cannot be used ({e})")),
        Ok(layer) if layer.to_lonlat.is_some() => {
            Err("its catchments are not in NAD83 longitude/latitude".into())
        }
        Ok(_) => Ok(()),
    }
}

/// The basin parts an index file is written with.
struct Made<'a> {
    /// The fewest reaches of a part.
    reaches_per_part: usize,
    /// The parts, or why the file gets none.
    parts: std::result::Result<Vec<&'a StoredPart>, &'a str>,
    /// Whether they are all the network's parts (else those of the basins
    /// plotted so far).
    complete: bool,
}

/// Writes the index file `target`: under a temporary name in its directory
/// (made if needed; the temporary files of killed runs removed,
/// [`crate::output::TempFile`]), synced, then renamed over whatever is there.
fn write_index(
    target: &Path,
    source: &Source,
    network: Option<&(Vec<u8>, Vec<u8>)>,
    made: Made,
) -> Result<()> {
    let dir = target.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| crate::error::io_error(dir, e))?;
    let temp = crate::output::TempFile::beside(target)?;
    fill(temp.path(), source, network, made).map_err(|e| {
        Error::Io(format!(
            "{}: the index cannot be written: {e}",
            target.display()
        ))
    })?;
    std::fs::File::open(temp.path())
        .and_then(|f| f.sync_all())
        .map_err(|e| crate::error::io_error(target, e))?;
    temp.persist(target, true)
}

/// The index's tables and rows, in a new database at `temp`.
fn fill(
    temp: &Path,
    source: &Source,
    network: Option<&(Vec<u8>, Vec<u8>)>,
    made: Made,
) -> rusqlite::Result<()> {
    let mut conn = Connection::open_with_flags(
        temp,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE,
    )?;
    // A file of its own, renamed once complete: no journal needed. Its
    // largest pages: a read of the network blob in place walks its chain
    // of pages (`stored_upstream.rs`), 16 times shorter than at 4 KiB.
    conn.execute_batch(&format!(
        "PRAGMA page_size = 65536; PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA user_version = {FORMAT};
         CREATE TABLE source (device INTEGER, inode INTEGER, size INTEGER, mtime_ns INTEGER, change_counter INTEGER, schema_cookie INTEGER, wal_size INTEGER, wal_mtime_ns INTEGER, reaches_per_part INTEGER, no_parts TEXT, parts_complete INTEGER NOT NULL);
         CREATE TABLE source_tables (position INTEGER PRIMARY KEY, name TEXT NOT NULL, min_rowid INTEGER NOT NULL, max_rowid INTEGER NOT NULL);
         CREATE TABLE {} (reaches BLOB NOT NULL);
         CREATE TABLE {} (rowids BLOB NOT NULL);
         CREATE TABLE {} (comid INTEGER PRIMARY KEY NOT NULL, min_x REAL, min_y REAL, max_x REAL, max_y REAL, outline BLOB);",
        quote(BASIN_NETWORK),
        quote(FLOWLINE_ROWIDS),
        quote(BASIN_PARTS)
    ))?;
    let tx = conn.transaction()?;
    let v = source.identity.stored();
    tx.execute(
        "INSERT INTO source VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
        params![
            v[0],
            v[1],
            v[2],
            v[3],
            v[4],
            v[5],
            v[6],
            v[7],
            made.reaches_per_part as i64,
            made.parts.as_ref().err(),
            made.complete
        ],
    )?;
    for (position, (name, min, max)) in source.tables.iter().enumerate() {
        tx.execute(
            "INSERT INTO source_tables VALUES (?1, ?2, ?3, ?4)",
            params![position as i64, name, min, max],
        )?;
    }
    if let Some((network, rowids)) = network {
        tx.execute(
            &format!("INSERT INTO {} (reaches) VALUES (?1)", quote(BASIN_NETWORK)),
            [network],
        )?;
        tx.execute(
            &format!(
                "INSERT INTO {} (rowids) VALUES (?1)",
                quote(FLOWLINE_ROWIDS)
            ),
            [rowids],
        )?;
    }
    if let Ok(parts) = made.parts {
        let mut insert = tx.prepare(&format!(
            "INSERT INTO {} (comid, min_x, min_y, max_x, max_y, outline) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            quote(BASIN_PARTS)
        ))?;
        for (comid, bbox, outline) in parts {
            let corner = |i: usize| bbox.map(|b| b[i]);
            insert.execute(params![
                comid,
                corner(0),
                corner(1),
                corner(2),
                corner(3),
                outline
            ])?;
        }
    }
    tx.commit()?;
    conn.close().map_err(|(_, e)| e)
}

/// Where the index of a GeoPackage is and whether it is current
/// ([`index_status`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexStatus {
    /// Each index file found (beside the file, then in the directory).
    pub found: Vec<FoundIndex>,
    /// Whether the GeoPackage holds an index of release 0.2 (tables,
    /// triggers or the topology index inside it).
    pub in_file: bool,
}

/// An index file of a GeoPackage ([`index_status`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoundIndex {
    /// The index file.
    pub path: PathBuf,
    /// Whether it is current (a plot uses it).
    pub current: bool,
    /// Its basin parts; `None` when it cannot be read (another release's
    /// format: it is never used, and made again).
    pub parts: Option<IndexedParts>,
}

/// The basin parts an index file holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IndexedParts {
    /// Every part of the network, `parts` of them (`hydroplot index`).
    Complete { parts: usize },
    /// Those of the basins plotted so far, `parts` of them; `hydroplot
    /// index` makes the rest.
    Partial { parts: usize },
    /// None, for the reason `why`.
    Skipped { why: String },
}

impl IndexFile {
    /// The basin parts it holds; `None` when they cannot be read.
    fn indexed_parts(&self) -> Option<IndexedParts> {
        let record = self.parts_made()?;
        let parts = self.parts().ok()?.len();
        Some(match record {
            PartsRecord {
                no_parts: Some(why),
                ..
            } => IndexedParts::Skipped { why },
            PartsRecord { complete: true, .. } => IndexedParts::Complete { parts },
            PartsRecord { .. } => IndexedParts::Partial { parts },
        })
    }
}

/// Where the indexes of the GeoPackage at `path` are (beside it and in
/// `dir`), whether each is current and what basin parts it holds.
pub fn index_status(path: &Path, dir: &Path) -> Result<IndexStatus> {
    let gpkg = GeoPackage::open(path)?;
    let now = Source::now(&gpkg)?;
    let found = [IndexPlace::Beside, IndexPlace::Dir(dir)]
        .into_iter()
        .filter_map(|place| index_path(path, place).ok())
        .filter(|p| p.exists())
        .map(|path| {
            let index = IndexFile::open(&path);
            FoundIndex {
                current: index.as_ref().is_some_and(|i| i.source == now),
                parts: index.as_ref().and_then(IndexFile::indexed_parts),
                path,
            }
        })
        .collect();
    let in_file: i64 = gpkg
        .connection()
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE name IN (?1, ?2, ?3)",
            [BASIN_PARTS, BASIN_NETWORK, TOPOLOGY_INDEX],
            |r| r.get(0),
        )
        .optional()
        .map_err(|e| gpkg.context(e.into()))?
        .unwrap_or(0);
    Ok(IndexStatus {
        found,
        in_file: in_file > 0,
    })
}
