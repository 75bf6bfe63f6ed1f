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
//!
//! This file knows the index file alone (where it lives, what it records,
//! reading it); making one from a GeoPackage, finding the current one of a
//! GeoPackage and its status are `index_build.rs`, above the reader.

use super::layer::quote;
use super::stored_network::{self, BASIN_NETWORK, BASIN_PARTS, FLOWLINE_ROWIDS};
use crate::network::{IdMap, IdSet, Network, Reach};
use crate::{Error, Result};
use rusqlite::{Connection, OpenFlags};
use std::io::Read;
use std::path::{Path, PathBuf};

/// The extension of an index file.
pub const INDEX_EXTENSION: &str = "hydroplot-index";

/// The index file's format, as its SQLite `user_version`.
/// Format 2 records whether the basin parts are complete (made by
/// `hydroplot index`) or those of the basins plotted so far; format 3
/// stores the network with its upstream links and comid order, read in
/// place (`stored_upstream.rs`).
pub(super) const FORMAT: i64 = 3;

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
pub(super) struct Identity {
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
    pub(super) fn of(path: &Path) -> std::io::Result<Identity> {
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
    pub(super) fn stored(&self) -> [i64; 8] {
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

    pub(super) fn from_stored(v: [i64; 8]) -> Identity {
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
pub(super) type TableCounts = Vec<(String, i64, i64)>;

/// What an index file records of the GeoPackage it was made from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Source {
    pub(super) identity: Identity,
    pub(super) tables: TableCounts,
}

/// An index file opened to be read: immutable (it is never changed in
/// place), held open for as long as this lives, whatever replaces it.
pub(super) struct IndexFile {
    conn: Connection,
    path: PathBuf,
    pub(super) source: Source,
}

impl std::fmt::Debug for IndexFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "IndexFile({})", self.path.display())
    }
}

impl IndexFile {
    /// The index file at `path`, when it is one this library can read;
    /// `None` when there is none or it is not one.
    pub(super) fn open(path: &Path) -> Option<IndexFile> {
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
        stored_network::decode(&self.blob(BASIN_NETWORK, "reaches")?)
    }

    /// The blob in `column` of the first row of `table`, if any.
    fn blob(&self, table: &str, column: &str) -> Option<Vec<u8>> {
        let select = format!("SELECT {column} FROM {} LIMIT 1", quote(table));
        self.conn.query_row(&select, [], |r| r.get(0)).ok()
    }

    /// The flowlines' comids and rowids; `None` when the file has no stored
    /// network or its blobs cannot be read.
    pub(super) fn flowline_rowids(&self) -> Option<FlowlineRowids> {
        let comids = stored_network::comids(&self.blob(BASIN_NETWORK, "reaches")?)?;
        let rowids = stored_network::decode_rowids(&self.blob(FLOWLINE_ROWIDS, "rowids")?)?;
        FlowlineRowids::every(comids, rowids)
    }

    /// What the file records of its basin parts; `None` when it cannot be
    /// read.
    pub(super) fn parts_made(&self) -> Option<PartsRecord> {
        self.conn
            .query_row(
                "SELECT reaches_per_part, no_parts, parts_complete FROM source",
                [],
                |r| Ok((r.get::<_, i64>(0)?, r.get(1)?, r.get::<_, bool>(2)?)),
            )
            .ok()
            .and_then(|(size, no_parts, complete)| {
                Some(PartsRecord {
                    reaches_per_part: usize::try_from(size).ok()?,
                    no_parts,
                    complete,
                })
            })
    }

    /// The stored network and rowids as blobs, to be carried into a new
    /// index file; `None` when the file has none.
    pub(super) fn network_blobs(&self) -> Option<(Vec<u8>, Vec<u8>)> {
        Some((
            self.blob(BASIN_NETWORK, "reaches")?,
            self.blob(FLOWLINE_ROWIDS, "rowids")?,
        ))
    }

    /// Every stored basin part, as stored, to be carried into a new index
    /// file.
    pub(super) fn stored_parts(&self) -> Result<Vec<StoredPart>> {
        let sql = |e: rusqlite::Error| Error::from(e).context(&self.path.display().to_string());
        let mut stmt = (self.conn)
            .prepare(&format!(
                "SELECT min_x, min_y, max_x, max_y, outline, comid FROM {}",
                quote(BASIN_PARTS)
            ))
            .map_err(sql)?;
        let rows = stmt
            .query_map([], |r| Ok((r.get(5)?, bbox_of(r)?, r.get(4)?)))
            .map_err(sql)?;
        rows.collect::<rusqlite::Result<_>>().map_err(sql)
    }
}

/// What an index file records of its basin parts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct PartsRecord {
    /// The fewest reaches of a part; 0 while no part was made (an index
    /// a plot made, which stored the network alone).
    pub(super) reaches_per_part: usize,
    /// Why the file has no basin parts, when it will get none.
    pub(super) no_parts: Option<String>,
    /// Whether every part of the network is stored (`hydroplot index`);
    /// else those of the basins plotted so far.
    pub(super) complete: bool,
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

/// A part as stored: the comid closing it, its catchments' box and the
/// blob of its rings (none when its catchments cover nothing).
pub(super) type StoredPart = (i64, Option<[f64; 4]>, Option<Vec<u8>>);

/// The box of a part in the first four columns of `row` (`None` when one
/// is NULL: its catchments cover nothing).
pub(super) fn bbox_of(row: &rusqlite::Row) -> rusqlite::Result<Option<[f64; 4]>> {
    let corners: [Option<f64>; 4] = [row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?];
    Ok(match corners {
        [Some(x0), Some(y0), Some(x1), Some(y1)] => Some([x0, y0, x1, y1]),
        _ => None,
    })
}

/// The comid and rowid of flowlines of an index file, in the stored
/// network's row order: every flowline ([`IndexFile::flowline_rowids`]),
/// or those of the reaches a plot read ([`super::stored_upstream`]).
pub(super) struct FlowlineRowids {
    comids: Vec<i64>,
    rowids: Vec<i64>,
    /// Whether they are every flowline of the file: a comid not among them
    /// then has no flowline, rather than one not known here.
    every: bool,
}

impl FlowlineRowids {
    /// Every flowline's; `None` when the two lists differ in length.
    pub(super) fn every(comids: Vec<i64>, rowids: Vec<i64>) -> Option<FlowlineRowids> {
        (comids.len() == rowids.len()).then_some(FlowlineRowids {
            comids,
            rowids,
            every: true,
        })
    }

    /// Those of some flowlines: `rowids[i]` is the rowid of `comids[i]`.
    pub(super) fn of_some(comids: Vec<i64>, rowids: Vec<i64>) -> FlowlineRowids {
        debug_assert_eq!(comids.len(), rowids.len());
        FlowlineRowids {
            comids,
            rowids,
            every: false,
        }
    }

    /// The rowid of each of `comids` that the file has; `None` when they
    /// are not known (a comid outside the reaches read: the caller finds
    /// the flowlines by comid). One pass over the flowlines known with a
    /// set of the comids asked for, never a map of every flowline: a plot
    /// asks for a small share of a national file's, and a map of two
    /// million took a tenth of a plot of 10,000.
    pub(super) fn of(&self, comids: &[i64]) -> Option<IdMap<i64>> {
        let wanted: IdSet = comids.iter().copied().collect();
        let found: IdMap<i64> = (self.comids.iter().zip(&self.rowids))
            .filter(|(comid, _)| wanted.contains(comid))
            .map(|(&comid, &rowid)| (comid, rowid))
            .collect();
        (self.every || found.len() == wanted.len()).then_some(found)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rowids_of_some_flowlines_answer_only_for_those() {
        let map = |pairs: &[(i64, i64)]| pairs.iter().copied().collect::<IdMap<i64>>();
        let every = FlowlineRowids::every(vec![7, 5, 9], vec![1, 2, 3]).unwrap();
        assert_eq!(every.of(&[9, 7]), Some(map(&[(9, 3), (7, 1)])));
        // A comid the file has no flowline of: none to read, by any key.
        assert_eq!(every.of(&[5, 11]), Some(map(&[(5, 2)])));
        assert!(FlowlineRowids::every(vec![7], vec![]).is_none());

        let some = FlowlineRowids::of_some(vec![7, 9], vec![1, 3]);
        assert_eq!(some.of(&[9, 9, 7]), Some(map(&[(9, 3), (7, 1)])));
        // A comid outside the reaches read is not known: found by comid.
        assert_eq!(some.of(&[7, 5]), None);
    }
}
