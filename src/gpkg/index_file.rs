//! The index of a local NHDPlus GeoPackage, in a file of hydroplot's own:
//! the GeoPackage itself is never written.
//!
//! The index file (an SQLite database, [`INDEX_EXTENSION`]) holds the
//! flowline network as one blob and each flowline's rowid
//! (`stored_network.rs`; they replace the topology index of release 0.2: a
//! plot reads the network in one step and the flowlines by rowid), the
//! basin parts (`basin_parts.rs`) and
//! what it was made from: the GeoPackage's identity ([`Identity`]: device,
//! inode, size, modification time, SQLite's change counter and schema
//! cookie, the WAL file's size and time) and each read table's least and
//! greatest rowid. An index whose record differs in anything from the
//! file as it is now is never used: the plot reads the GeoPackage alone,
//! which gives the same basins.
//!
//! Where it lives ([`IndexPlace`]): in the index directory (the `index_dir`
//! option; by default the user's cache, `$XDG_CACHE_HOME/hydroplot/index`),
//! named after the GeoPackage's canonical path, or beside the GeoPackage
//! (`FILE.gpkg.hydroplot-index`). A plot looks beside the file first.
//!
//! An index file is never changed once in place: it is written under a
//! temporary name in its directory and renamed over the old one (the last
//! rename wins when two runs index one file at once), and a reader opens it
//! as immutable and keeps the file it opened, whatever replaces it.

use super::basin_parts::{cut, made_parts, StoredPart, BASIN_PARTS};
use super::layer::quote;
use super::reader::GeoPackage;
use super::stored_network::{self, BASIN_NETWORK, FLOWLINE_ROWIDS};
use crate::cancel::Stop;
use crate::collection::Collection;
use crate::network::{IdMap, IdSet, Network, Reach};
use crate::{Error, Result};
use rusqlite::{params, Connection, OpenFlags, OptionalExtension};
use std::io::Read;
use std::path::{Path, PathBuf};

/// The extension of an index file.
pub const INDEX_EXTENSION: &str = "hydroplot-index";

/// The index file's format, as its SQLite `user_version`.
const FORMAT: i64 = 1;

/// Where an index file is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IndexPlace<'a> {
    /// Beside the GeoPackage: `FILE.gpkg.hydroplot-index`.
    Beside,
    /// In this directory, named after the GeoPackage's canonical path.
    Dir(&'a Path),
}

/// The path of the index of the GeoPackage at `gpkg` in `place`. For a
/// directory the name is the file's name and a hash of its canonical path
/// (two files of one name in different folders have different indexes), so
/// the GeoPackage must exist (`Error::Io` when it cannot be resolved).
pub fn index_path(gpkg: &Path, place: IndexPlace) -> Result<PathBuf> {
    match place {
        IndexPlace::Beside => {
            let mut name = gpkg.as_os_str().to_owned();
            name.push(format!(".{INDEX_EXTENSION}"));
            Ok(PathBuf::from(name))
        }
        IndexPlace::Dir(dir) => {
            let canonical =
                std::fs::canonicalize(gpkg).map_err(|e| crate::error::io_error(gpkg, e))?;
            let stem = canonical
                .file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
            let hash = fnv1a(canonical.as_os_str().as_encoded_bytes());
            Ok(dir.join(format!("{stem}-{hash:016x}.{INDEX_EXTENSION}")))
        }
    }
}

/// FNV-1a of `bytes`.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// What identifies one state of a GeoPackage on disk, read without opening
/// it as a database: any write (in rollback-journal or WAL mode, by any
/// program) or a copy over the file changes one of these.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Identity {
    device: u64,
    inode: u64,
    size: u64,
    mtime_ns: i64,
    /// SQLite's file change counter (header bytes 24..28).
    change_counter: u32,
    /// SQLite's schema cookie (header bytes 40..44).
    schema_cookie: u32,
    /// The `-wal` file's size and modification time; 0 and 0 when there is
    /// none or it is empty (a reader in WAL mode may leave an empty one).
    wal_size: u64,
    wal_mtime_ns: i64,
}

/// The device, inode and modification time (ns since the epoch) of `meta`.
fn file_keys(meta: &std::fs::Metadata) -> (u64, u64, i64) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        (
            meta.dev(),
            meta.ino(),
            meta.mtime().saturating_mul(1_000_000_000) + meta.mtime_nsec(),
        )
    }
    #[cfg(not(unix))]
    {
        let mtime = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX));
        (0, 0, mtime)
    }
}

impl Identity {
    /// The identity of the file at `path` now.
    fn of(path: &Path) -> std::io::Result<Identity> {
        let mut file = std::fs::File::open(path)?;
        let meta = file.metadata()?;
        let mut head = [0u8; 44];
        file.read_exact(&mut head)?;
        let be = |at: usize| u32::from_be_bytes(head[at..at + 4].try_into().expect("4 bytes"));
        let (device, inode, mtime_ns) = file_keys(&meta);
        let mut wal = path.as_os_str().to_owned();
        wal.push("-wal");
        let (wal_size, wal_mtime_ns) = match std::fs::metadata(PathBuf::from(wal)) {
            Ok(meta) if meta.len() > 0 => (meta.len(), file_keys(&meta).2),
            _ => (0, 0),
        };
        Ok(Identity {
            device,
            inode,
            size: meta.len(),
            mtime_ns,
            change_counter: be(24),
            schema_cookie: be(40),
            wal_size,
            wal_mtime_ns,
        })
    }

    /// The values as stored, in the order of the `source` table's columns.
    fn stored(&self) -> [i64; 8] {
        // Bit for bit: a device or inode past i64 reads back as it was.
        let bits = |v: u64| v as i64;
        [
            bits(self.device),
            bits(self.inode),
            bits(self.size),
            self.mtime_ns,
            i64::from(self.change_counter),
            i64::from(self.schema_cookie),
            bits(self.wal_size),
            self.wal_mtime_ns,
        ]
    }

    fn from_stored(v: [i64; 8]) -> Identity {
        Identity {
            device: v[0] as u64,
            inode: v[1] as u64,
            size: v[2] as u64,
            mtime_ns: v[3],
            change_counter: v[4] as u32,
            schema_cookie: v[5] as u32,
            wal_size: v[6] as u64,
            wal_mtime_ns: v[7],
        }
    }
}

/// Each read table of a GeoPackage (the flowlines, the catchments when
/// there are some) with its least and greatest rowid: found in the table's
/// b-tree without a scan. (A row count would read every page of the table
/// at every plot: about a second on a national file.)
type TableCounts = Vec<(String, i64, i64)>;

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

/// What an index file records of the GeoPackage it was made from.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Source {
    identity: Identity,
    tables: TableCounts,
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

/// An index file opened to be read: immutable (it is never changed in
/// place), held open for as long as this lives, whatever replaces it.
pub(super) struct IndexFile {
    conn: Connection,
    path: PathBuf,
    source: Source,
}

impl std::fmt::Debug for IndexFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "IndexFile({})", self.path.display())
    }
}

impl IndexFile {
    /// The index file at `path`, when it is one this library can read;
    /// `None` when there is none or it is not one.
    fn open(path: &Path) -> Option<IndexFile> {
        let uri = immutable_uri(&std::path::absolute(path).ok()?);
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
            | OpenFlags::SQLITE_OPEN_URI
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(uri, flags).ok()?;
        let format: i64 = conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .ok()?;
        if format != FORMAT {
            return None;
        }
        let identity = conn
            .query_row(
                "SELECT device, inode, size, mtime_ns, change_counter, schema_cookie, wal_size, wal_mtime_ns FROM source",
                [],
                |r| {
                    let mut v = [0i64; 8];
                    for (i, v) in v.iter_mut().enumerate() {
                        *v = r.get(i)?;
                    }
                    Ok(v)
                },
            )
            .ok()?;
        let tables = conn
            .prepare("SELECT name, min_rowid, max_rowid FROM source_tables ORDER BY position")
            .ok()?
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .ok()?
            .collect::<rusqlite::Result<TableCounts>>()
            .ok()?;
        Some(IndexFile {
            conn,
            path: path.to_path_buf(),
            source: Source {
                identity: Identity::from_stored(identity),
                tables,
            },
        })
    }

    /// The first current index of `gpkg`: beside it, then in `dir`.
    pub(super) fn find(gpkg: &GeoPackage, dir: &Path) -> Option<IndexFile> {
        let now = Source::now(gpkg).ok()?;
        [IndexPlace::Beside, IndexPlace::Dir(dir)]
            .into_iter()
            .filter_map(|place| index_path(gpkg.path(), place).ok())
            .filter_map(|path| IndexFile::open(&path))
            .find(|index| index.source == now)
    }

    /// The index file's path.
    pub(super) fn path(&self) -> &Path {
        &self.path
    }

    /// The connection, read-only, to read the parts and network.
    pub(super) fn connection(&self) -> &Connection {
        &self.conn
    }

    /// Whether the GeoPackage at `gpkg` is still as it was when this index
    /// was made, by its identity alone (no query): for a look again after a
    /// plot's reads.
    pub(super) fn still_current(&self, gpkg: &Path) -> bool {
        Identity::of(gpkg).is_ok_and(|now| now == self.source.identity)
    }

    /// The comids closing the stored basin parts (none when the file got
    /// no parts).
    pub(super) fn parts(&self) -> Result<IdSet> {
        let sql = |e: rusqlite::Error| Error::from(e).context(&self.path.display().to_string());
        let mut stmt = self
            .conn
            .prepare(&format!("SELECT comid FROM {}", quote(BASIN_PARTS)))
            .map_err(sql)?;
        let comids = stmt
            .query_map([], |r| r.get::<_, i64>(0))
            .map_err(sql)?
            .collect::<rusqlite::Result<IdSet>>()
            .map_err(sql)?;
        Ok(comids)
    }

    /// The stored network; `None` when the file has none or it cannot be
    /// read (the GeoPackage is then read row by row).
    pub(super) fn network(&self) -> Option<(Vec<Reach>, Network)> {
        let select = format!("SELECT reaches FROM {} LIMIT 1", quote(BASIN_NETWORK));
        let blob: Vec<u8> = self.conn.query_row(&select, [], |r| r.get(0)).ok()?;
        stored_network::decode(&blob)
    }

    /// The rowid of each flowline by comid; `None` when the file has no
    /// stored network or its blobs cannot be read.
    pub(super) fn flowline_rowids(&self) -> Option<IdMap<i64>> {
        let blob = |table: &str, column: &str| -> Option<Vec<u8>> {
            let select = format!("SELECT {column} FROM {} LIMIT 1", quote(table));
            self.conn.query_row(&select, [], |r| r.get(0)).ok()
        };
        let comids = stored_network::comids(&blob(BASIN_NETWORK, "reaches")?)?;
        let rowids = stored_network::decode_rowids(&blob(FLOWLINE_ROWIDS, "rowids")?)?;
        (comids.len() == rowids.len()).then(|| comids.into_iter().zip(rowids).collect())
    }

    /// The fewest reaches of its parts, and why the file has no basin
    /// parts, when it has none.
    fn parts_made(&self) -> Option<(usize, Option<String>)> {
        self.conn
            .query_row("SELECT reaches_per_part, no_parts FROM source", [], |r| {
                Ok((r.get::<_, i64>(0)?, r.get(1)?))
            })
            .ok()
            .and_then(|(size, why)| Some((usize::try_from(size).ok()?, why)))
    }
}

/// The SQLite URI of the file at the absolute path `path`, opened as
/// immutable (no locks, no journal: it is never changed in place).
fn immutable_uri(path: &Path) -> String {
    let mut uri = String::from("file:");
    for &b in path.as_os_str().as_encoded_bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => {
                uri.push(char::from(b))
            }
            _ => uri.push_str(&format!("%{b:02X}")),
        }
    }
    uri.push_str("?immutable=1");
    uri
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
/// current index in `place` is kept as it is.
///
/// A file that is not an SQLite database, not a GeoPackage or without the
/// flowline layer and its topology columns is an `Error::Gpkg`; a file
/// written to while it is read is an `Error::Gpkg` (run again), and the old
/// index stays. A directory that cannot be written is an `Error::Io`. A
/// cancel of `stop` is `Error::Cancelled`, nothing written. `progress`
/// hears (parts made, parts in all) on the calling thread.
pub fn index_geopackage(
    path: &Path,
    place: IndexPlace,
    reaches_per_part: usize,
    stop: &Stop,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Indexed> {
    let mut gpkg = super::user_file::open_nhdplus(path, "only NHDPlus GeoPackages are indexed", stop)?;
    gpkg.watch(stop);
    let target = index_path(path, place)?;
    let source = Source::now(&gpkg)?;
    if let Some(kept) = current_index(&target, &source, reaches_per_part)? {
        return Ok(kept);
    }
    let (rowids, reaches): (Vec<i64>, Vec<Reach>) = gpkg.read_topology_rows()?.into_iter().unzip();
    let (network, parts) = match cut(&reaches, reaches_per_part) {
        Ok((network, closing)) => match catchments_usable(&gpkg) {
            Ok(()) => {
                let parts = made_parts(&gpkg, &reaches, &network, &closing, stop, progress)?;
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
    write_index(&target, &source, reaches_per_part, network.as_ref(), &parts)?;
    Ok(Indexed {
        path: target,
        written: true,
        reaches: reaches.len(),
        parts: outcome,
    })
}

/// What the index file at `target` holds when it is current for `source`
/// and was made with parts of `reaches_per_part` reaches, its network
/// readable ([`index_geopackage`] then keeps it); else `None`.
fn current_index(
    target: &Path,
    source: &Source,
    reaches_per_part: usize,
) -> Result<Option<Indexed>> {
    let Some(index) = IndexFile::open(target).filter(|i| &i.source == source) else {
        return Ok(None);
    };
    let (Some((reaches, _)), Some((size, why))) = (index.network(), index.parts_made()) else {
        return Ok(None);
    };
    if size != reaches_per_part {
        return Ok(None);
    }
    let parts = match why {
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

/// The fewest reaches of a part recorded by an index a plot made: none
/// (`hydroplot index` makes them).
const MADE_BY_A_PLOT: usize = 0;

/// The reaches of a file's network, in row order, and their network.
pub type NetworkRead = (Vec<Reach>, Network);

/// The network of `gpkg`, which has no current index, read from the file
/// in `threads` shares and stored as a new index file in `dir` (the network and the flowlines'
/// rowids; the basin parts are left to `hydroplot index`), which `gpkg`
/// then uses, and the next plots. The store is best effort: when the file
/// was written to meanwhile, or the index cannot be written, the network is
/// returned all the same, with the reason nothing was stored.
pub fn read_network_and_index(
    gpkg: &mut GeoPackage,
    dir: &Path,
    threads: usize,
) -> Result<(NetworkRead, Option<Error>)> {
    let source = Source::now(gpkg)?;
    let (rowids, reaches): (Vec<i64>, Vec<Reach>) =
        gpkg.read_topology_in(threads)?.into_iter().unzip();
    let network = Network::new(&reaches);
    let stored = (|| -> Result<()> {
        if !stored_network::fits(reaches.len()) {
            return Err(Error::Gpkg("too many flowlines for one blob".into()));
        }
        if Source::now(gpkg)? != source {
            return Err(Error::Gpkg(
                "the file was written to while it was read".into(),
            ));
        }
        let target = index_path(gpkg.path(), IndexPlace::Dir(dir))?;
        let blobs = (
            stored_network::encode(&reaches, &network),
            stored_network::encode_rowids(&rowids),
        );
        let no_parts = "made by a plot; `hydroplot index` makes the basin parts";
        write_index(
            &target,
            &source,
            MADE_BY_A_PLOT,
            Some(&blobs),
            &Err(no_parts.into()),
        )
    })();
    if stored.is_ok() {
        gpkg.use_index(dir);
    }
    Ok(((reaches, network), stored.err()))
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

/// Writes the index file `target`: under a temporary name in its directory
/// (made if needed; the temporary files of killed runs removed,
/// [`crate::output::TempFile`]), synced, then renamed over whatever is there.
fn write_index(
    target: &Path,
    source: &Source,
    reaches_per_part: usize,
    network: Option<&(Vec<u8>, Vec<u8>)>,
    parts: &std::result::Result<Vec<StoredPart>, String>,
) -> Result<()> {
    let dir = target.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| crate::error::io_error(dir, e))?;
    let temp = crate::output::TempFile::beside(target)?;
    fill(temp.path(), source, reaches_per_part, network, parts).map_err(|e| {
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
    reaches_per_part: usize,
    network: Option<&(Vec<u8>, Vec<u8>)>,
    parts: &std::result::Result<Vec<StoredPart>, String>,
) -> rusqlite::Result<()> {
    let mut conn = Connection::open_with_flags(
        temp,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE,
    )?;
    // A file of its own, renamed once complete: no journal needed.
    conn.execute_batch(&format!(
        "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA user_version = {FORMAT};
         CREATE TABLE source (device INTEGER, inode INTEGER, size INTEGER, mtime_ns INTEGER, change_counter INTEGER, schema_cookie INTEGER, wal_size INTEGER, wal_mtime_ns INTEGER, reaches_per_part INTEGER, no_parts TEXT);
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
        "INSERT INTO source VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
        params![
            v[0],
            v[1],
            v[2],
            v[3],
            v[4],
            v[5],
            v[6],
            v[7],
            reaches_per_part as i64,
            parts.as_ref().err()
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
    if let Ok(parts) = parts {
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
    /// Each index file found (beside the file, then in the directory),
    /// and whether it is current.
    pub found: Vec<(PathBuf, bool)>,
    /// Whether the GeoPackage holds an index of release 0.2 (tables,
    /// triggers or the topology index inside it).
    pub in_file: bool,
}

/// Where the indexes of the GeoPackage at `path` are (beside it and in
/// `dir`) and whether each is current.
pub fn index_status(path: &Path, dir: &Path) -> Result<IndexStatus> {
    let gpkg = GeoPackage::open(path)?;
    let now = Source::now(&gpkg)?;
    let found = [IndexPlace::Beside, IndexPlace::Dir(dir)]
        .into_iter()
        .filter_map(|place| index_path(path, place).ok())
        .filter(|p| p.exists())
        .map(|p| {
            let current = IndexFile::open(&p).is_some_and(|i| i.source == now);
            (p, current)
        })
        .collect();
    let in_file: i64 = gpkg
        .connection()
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE name IN (?1, ?2, ?3)",
            [BASIN_PARTS, BASIN_NETWORK, super::prepare::TOPOLOGY_INDEX],
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
