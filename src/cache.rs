//! The plot-data cache file (`cache_data = path`): a store of byte entries
//! under string keys in one SQLite file. It keeps what it is given: the
//! plot module owns the key (the normalized request) and the entry format.
//! An entry is a body (`plot_data`) and any number of named parts
//! (`plot_data_part`, one row each), written in one transaction but one
//! part at a time, so that a writer holds one part in memory, not the
//! whole entry; the plot data stores one layer per part.
//!
//! Why SQLite: commits are atomic (a crash never leaves half an entry), and
//! several processes may read and write one file at once (the busy timeout
//! serializes writers; nothing is lost). rusqlite is already linked for
//! GeoPackages.
//!
//! File safety: the library only ever writes a file it can prove is its
//! own. A new cache is built under a temporary name and linked into place
//! whole, so nobody sees it half made. An existing file is classified from
//! its first 100 bytes (the SQLite header), read under SQLite's shared lock
//! through SQLite's own file ([`lock`]), so never in the middle of another
//! process's commit, and before any SQL runs on it:
//! - ours (SQLite with our `application_id`) in this format: used (SQLite
//!   rolls back a crashed writer's hot journal on the first read);
//! - ours but of an older format, or corrupt by SQLite's verdict at any step
//!   (opening, reading an entry, writing one): replaced (a warning names the
//!   file);
//! - ours in a newer format: left alone, no caching, a warning;
//! - anything else (text, `.rds`, a GeoPackage, another program's SQLite,
//!   an empty file, a directory): left byte-for-byte untouched, no caching,
//!   a warning that names the file.
//!
//! Only corruption (`SQLITE_CORRUPT`, `SQLITE_NOTADB`) counts as damage; any
//! other SQLite error (I/O, a lock held too long, memory, a read-only file)
//! is a warning and no caching, the file left as it is. A replacement holds
//! SQLite's exclusive lock on the damaged file, so no reader or writer is
//! inside it; checks that the path still names that file (else another
//! process replaced it first, and the new file is opened instead); removes
//! the file's `-journal`, `-wal` and `-shm` (a crashed writer's, since
//! nobody holds a lock: left, SQLite would play them back into the new
//! file); then renames the new cache over it.
//!
//! A cache never fails a plot: every problem is a warning and no caching.

mod lock;

use crate::context::Context;
use crate::output::TempFile;
use crate::{Error, Result};
use lock::FileLock;
use rusqlite::{params, Connection, OpenFlags, OptionalExtension};
use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Marks our files (`PRAGMA application_id`), "HYDP".
const APPLICATION_ID: i32 = 0x4859_4450;
/// The file format; a file with a newer one is left alone, never misread,
/// one with an older one is replaced. 2: entries have parts.
const FORMAT_VERSION: i32 = 2;
/// How long a writer waits for another process's transaction, and the
/// cache for a lock on a file.
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);
/// How many files one open replaces at most before it gives up (each
/// replacement may be raced by another process's).
const ATTEMPTS: usize = 3;

/// What a file's SQLite header says it is.
#[derive(Debug, PartialEq)]
enum Header {
    /// A hydroplot cache of format `version`.
    Ours { version: i32 },
    /// Not provably ours; the reason, for the warning.
    Foreign(String),
}

/// Classifies a file by its first 100 bytes (the SQLite header:
/// `user_version` at offset 60 and `application_id` at 68, big-endian).
/// Sizes are not judged here: a header counting more pages than the file
/// holds is SQLite's to report (as corruption) once any hot journal is
/// rolled back.
fn classify_header(header: &[u8]) -> Header {
    let be = |at: usize| {
        i32::from_be_bytes([header[at], header[at + 1], header[at + 2], header[at + 3]])
    };
    if header.is_empty() {
        return Header::Foreign("it is an empty file".into());
    }
    if header.len() < 100 || !header.starts_with(b"SQLite format 3\0") {
        return Header::Foreign("it is not a SQLite database".into());
    }
    match be(68) {
        APPLICATION_ID => Header::Ours { version: be(60) },
        0 => Header::Foreign("it is a SQLite database of another program".into()),
        id => Header::Foreign(format!(
            "it is a SQLite database of another program (application id {id:#010x})"
        )),
    }
}

/// Why SQLite could not use a file of ours.
#[derive(Debug)]
enum Trouble {
    /// SQLite finds it corrupt: the file is replaced.
    Damage(String),
    /// Anything else (I/O, locks, memory, permissions): no caching.
    Other(String),
}

impl From<rusqlite::Error> for Trouble {
    fn from(e: rusqlite::Error) -> Trouble {
        if is_damage(&e) {
            Trouble::Damage(e.to_string())
        } else {
            Trouble::Other(e.to_string())
        }
    }
}

/// Whether SQLite reports `e` as damage to the file (and nothing else).
fn is_damage(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseCorrupt | rusqlite::ErrorCode::NotADatabase)
    )
}

/// What is at the cache path, ready or to be replaced.
enum Found {
    /// Ours, in this format, its schema read by SQLite.
    Usable(Connection),
    /// Ours but unusable (`why`); `conn` has that very file open, for the
    /// lock of its replacement.
    Unusable { conn: Connection, why: String },
}

/// Opens what is at `path`, creating a cache when nothing is: `Err` (why,
/// for the warning) when it is not ours to use or replace, or cannot be read.
fn attach(path: &Path) -> std::result::Result<Found, String> {
    match std::fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => create(path),
        _ => existing(path),
    }
}

/// Opens the file at `path` and judges it by its header (under SQLite's
/// shared lock), then by SQLite reading its schema.
fn existing(path: &Path) -> std::result::Result<Found, String> {
    let untouched = |why: &str| {
        Err(format!(
            "{why}, not a hydroplot cache, so it is left untouched"
        ))
    };
    let meta = std::fs::metadata(path).map_err(|e| format!("it cannot be read ({e})"))?;
    if !meta.is_file() {
        return untouched("it is not a regular file");
    }
    if meta.len() == 0 {
        return untouched("it is an empty file");
    }
    let mut conn = connect(path).map_err(|e| format!("it cannot be opened ({e})"))?;
    let header = FileLock::shared(&mut conn, BUSY_TIMEOUT)?.read_start(100)?;
    match classify_header(&header) {
        Header::Foreign(why) => untouched(&why),
        Header::Ours { version } if version > FORMAT_VERSION => Err(format!(
            "it is a hydroplot cache of a newer format ({version}; this library reads {FORMAT_VERSION}), so it is left untouched"
        )),
        Header::Ours { version } if version < FORMAT_VERSION => Ok(Found::Unusable {
            conn,
            why: format!("it has an older format ({version})"),
        }),
        Header::Ours { .. } => match check_schema(&conn) {
            Ok(()) => Ok(Found::Usable(conn)),
            Err(Trouble::Damage(why)) => Ok(Found::Unusable {
                conn,
                why: format!("it is damaged ({why})"),
            }),
            Err(Trouble::Other(why)) => Err(format!("it cannot be read ({why})")),
        },
    }
}

/// Builds a new cache under a temporary name and links it into place
/// (never over a file: when another process created one meanwhile, that
/// one is judged instead).
fn create(path: &Path) -> std::result::Result<Found, String> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if !dir.is_dir() {
        return Err(format!("directory {} does not exist", dir.display()));
    }
    match initialized_temp(path)?.persist(path, false) {
        Ok(()) | Err(Error::Exists(_)) => existing(path),
        Err(e) => Err(e.to_string()),
    }
}

/// Replaces what `found` says is unusable and opens what the path then
/// holds, until a usable cache (at most [`ATTEMPTS`] replacements). `warn`
/// hears of each replacement made here.
fn settle(
    path: &Path,
    mut found: Found,
    warn: &mut dyn FnMut(String),
) -> std::result::Result<Connection, String> {
    for _ in 0..ATTEMPTS {
        let (mut conn, why) = match found {
            Found::Usable(conn) => return Ok(conn),
            Found::Unusable { conn, why } => (conn, why),
        };
        match replace(&mut conn, path) {
            Ok(true) => warn(format!("{why}; replacing this hydroplot cache")),
            Ok(false) => {} // another process replaced it first
            Err(e) => return Err(format!("{why}, and it cannot be replaced ({e})")),
        }
        drop(conn);
        found = attach(path)?;
    }
    Err("it was replaced again and again while being opened".into())
}

/// Replaces the file `conn` has open at `path` by a new empty cache, under
/// SQLite's exclusive lock on that file (see the module doc). `false` when
/// the path names another file by then: another process replaced it first.
fn replace(conn: &mut Connection, path: &Path) -> std::result::Result<bool, String> {
    let temp = initialized_temp(path)?;
    let lock = FileLock::exclusive(conn, BUSY_TIMEOUT)?;
    if lock.has_moved()? {
        return Ok(false);
    }
    for suffix in ["-journal", "-wal", "-shm"] {
        let mut name = path.as_os_str().to_owned();
        name.push(suffix);
        match std::fs::remove_file(&name) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(format!(
                    "its journal {} cannot be removed ({e})",
                    Path::new(&name).display()
                ))
            }
        }
    }
    temp.persist(path, true).map_err(|e| e.to_string())?;
    drop(lock);
    Ok(true)
}

/// Reads the schema of a file whose header is ours: our format and tables,
/// or the trouble SQLite has with it.
fn check_schema(conn: &Connection) -> std::result::Result<(), Trouble> {
    let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    let tables: i64 = conn.query_row(
        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ('plot_data', 'plot_data_part')",
        [],
        |r| r.get(0),
    )?;
    if version != i64::from(FORMAT_VERSION) || tables != 2 {
        return Err(Trouble::Damage(format!(
            "format {version} without the plot_data and plot_data_part tables"
        )));
    }
    Ok(())
}

/// An open plot-data cache file, borrowing the context its warnings go to.
pub struct PlotCache<'c> {
    ctx: &'c Context,
    path: PathBuf,
    /// `None` once the file proved unusable and could not be replaced: no
    /// caching from then on.
    conn: Option<Connection>,
    /// Damage SQLite reported inside [`PlotCache::read`]: the file is
    /// replaced when the read ends.
    damage: RefCell<Option<String>>,
    /// Warnings of replacements after the open ([`PlotCache::take_warnings`]).
    warnings: Vec<String>,
}

impl<'c> PlotCache<'c> {
    /// Opens the cache at `path`, creating it when absent and replacing it
    /// only when it is provably ours and unusable (see the module doc).
    /// Every problem is a warning that names the file (pushed to `warnings`
    /// and the log); `None` means no caching.
    pub fn open(
        ctx: &'c Context,
        path: &Path,
        warnings: &mut Vec<String>,
    ) -> Option<PlotCache<'c>> {
        let mut warn = |message: String| warnings.push(warning(ctx, path, message));
        let opened = attach(path).and_then(|found| settle(path, found, &mut warn));
        match opened {
            Ok(conn) => Some(PlotCache {
                ctx,
                path: path.to_path_buf(),
                conn: Some(conn),
                damage: RefCell::new(None),
                warnings: Vec::new(),
            }),
            Err(why) => {
                warn(format!("{why}; not caching"));
                None
            }
        }
    }

    /// The stop of the call this cache serves: reads and writes of large
    /// entries look at it between parts.
    pub fn stop(&self) -> &crate::cancel::Stop {
        self.ctx.stop()
    }

    /// The warnings of replacements made since the open (a damaged file
    /// found while reading or writing), taken.
    pub fn take_warnings(&mut self) -> Vec<String> {
        std::mem::take(&mut self.warnings)
    }

    /// Replaces the damaged file (`why`, SQLite's verdict) and opens the
    /// new one; when that fails, a warning and no caching from then on.
    fn repair(&mut self, why: String) {
        let Some(conn) = self.conn.take() else { return };
        let (ctx, path) = (self.ctx, self.path.as_path());
        let mut warn = |message: String| self.warnings.push(warning(ctx, path, message));
        let found = Found::Unusable {
            conn,
            why: format!("it is damaged ({why})"),
        };
        match settle(path, found, &mut warn) {
            Ok(conn) => self.conn = Some(conn),
            Err(why) => warn(format!("{why}; not caching")),
        }
    }

    /// Runs a query on the connection: `None` on a miss or any error, and
    /// damage noted for [`PlotCache::read`] to repair.
    fn query(
        &self,
        query: impl FnOnce(&Connection) -> rusqlite::Result<Option<Vec<u8>>>,
    ) -> Option<Vec<u8>> {
        match query(self.conn.as_ref()?) {
            Ok(found) => found,
            Err(e) => {
                if is_damage(&e) {
                    *self.damage.borrow_mut() = Some(e.to_string());
                }
                None
            }
        }
    }

    /// The entry stored under `key`, or `None` on a miss (or an unreadable row).
    pub fn get(&self, key: &str) -> Option<Vec<u8>> {
        self.query(|conn| {
            conn.query_row(
                "SELECT body FROM plot_data WHERE key = ?1",
                params![key],
                |r| r.get(0),
            )
            .optional()
        })
    }

    /// Part `part` of the entry under `key`, or `None` (a miss).
    pub fn get_part(&self, key: &str, part: &str) -> Option<Vec<u8>> {
        self.query(|conn| {
            conn.query_row(
                "SELECT body FROM plot_data_part WHERE key = ?1 AND part = ?2",
                params![key, part],
                |r| r.get(0),
            )
            .optional()
        })
    }

    /// Runs `read` (calls of [`PlotCache::get`] and [`PlotCache::get_part`])
    /// in one read transaction, so that an entry's body and parts come from
    /// one write even while another process replaces it. When SQLite found
    /// the file damaged meanwhile, it is replaced (a miss).
    pub fn read<T>(&mut self, read: impl FnOnce(&Self) -> Option<T>) -> Option<T> {
        let out = {
            let tx = self.conn.as_ref()?.unchecked_transaction();
            let out = tx.as_ref().ok().and_then(|_| read(self));
            drop(tx); // a read-only transaction: rolling back changes nothing
            out
        };
        match self.damage.take() {
            Some(why) => {
                self.repair(why);
                None
            }
            None => out,
        }
    }

    /// Stores `body` under `key` in one transaction, replacing any entry there.
    pub fn put(&mut self, key: &str, body: &[u8]) -> Result<()> {
        self.put_entry(key, body, std::iter::empty)
    }

    /// Stores `body` and the parts of `parts()` (`(name, bytes)`, each made
    /// only when the one before is written) under `key` in one transaction,
    /// replacing any entry there. A part that fails to be made aborts the
    /// whole entry. When SQLite finds the file damaged, it is replaced and
    /// the entry written again (`parts` is called again) into the new file.
    pub fn put_entry<I>(&mut self, key: &str, body: &[u8], parts: impl Fn() -> I) -> Result<()>
    where
        I: Iterator<Item = Result<(String, Vec<u8>)>>,
    {
        let file = self.path.display().to_string();
        let failed = |why: String| Error::Io(format!("writing the plot-data cache {file}: {why}"));
        for first in [true, false] {
            let Some(conn) = &self.conn else {
                return Err(failed("the file is unusable".into()));
            };
            // A cancelled call stops between parts; its entry is rolled back.
            let stop = self.ctx.stop();
            let watched = parts().map(|part| stop.check().map_err(Error::from).and(part));
            match write_entry(conn, key, body, watched) {
                Ok(()) => return Ok(()),
                Err(Trouble::Damage(why)) if first => self.repair(why),
                Err(Trouble::Damage(why) | Trouble::Other(why)) => return Err(failed(why)),
            }
        }
        unreachable!("the second attempt returns")
    }
}

/// A cache warning: it names the file and goes to the log too.
fn warning(ctx: &Context, path: &Path, message: String) -> String {
    ctx.warn(format!("plot-data cache {}: {message}", path.display()))
}

/// Writes one entry in one transaction (see [`PlotCache::put_entry`]).
fn write_entry(
    conn: &Connection,
    key: &str,
    body: &[u8],
    parts: impl Iterator<Item = Result<(String, Vec<u8>)>>,
) -> std::result::Result<(), Trouble> {
    let created = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    // IMMEDIATE: take the write lock first, so two writers queue on the
    // busy timeout instead of deadlocking on a lock upgrade.
    let tx = rusqlite::Transaction::new_unchecked(conn, rusqlite::TransactionBehavior::Immediate)?;
    tx.execute("DELETE FROM plot_data_part WHERE key = ?1", params![key])?;
    tx.execute(
        "INSERT OR REPLACE INTO plot_data (key, created, body) VALUES (?1, ?2, ?3)",
        params![key, created, body],
    )?;
    for part in parts {
        let (name, bytes) = part.map_err(|e| Trouble::Other(e.to_string()))?;
        // The bytes go into the row's blob through incremental I/O: a
        // bound blob would be copied whole by SQLite first, another
        // layer's worth of memory at the peak of a cache write.
        tx.execute(
            "INSERT INTO plot_data_part (key, part, body) VALUES (?1, ?2, zeroblob(?3))",
            params![key, name, bytes.len() as i64],
        )?;
        let mut blob = tx.blob_open(
            rusqlite::MAIN_DB,
            "plot_data_part",
            "body",
            tx.last_insert_rowid(),
            false,
        )?;
        blob.write_at(&bytes, 0)?;
    }
    tx.commit()?;
    Ok(())
}

/// Opens `path` read-write (never creating it: only [`initialized_temp`]
/// creates files) with the busy timeout. A file that cannot be written is
/// opened read-only by SQLite, and its writes fail (no caching).
fn connect(path: &Path) -> rusqlite::Result<Connection> {
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(path, flags)?;
    conn.busy_timeout(BUSY_TIMEOUT)?;
    Ok(conn)
}

/// A new, empty cache of this format in a temporary file beside `path`,
/// ready to be persisted to `path`.
fn initialized_temp(path: &Path) -> std::result::Result<TempFile, String> {
    let temp = TempFile::beside(path).map_err(|e| e.to_string())?;
    let init = || -> rusqlite::Result<()> {
        let conn = connect(temp.path())?;
        conn.execute_batch(&format!(
            "CREATE TABLE plot_data (key TEXT PRIMARY KEY, created INTEGER NOT NULL, body BLOB NOT NULL);
             CREATE TABLE plot_data_part (key TEXT NOT NULL, part TEXT NOT NULL, body BLOB NOT NULL, PRIMARY KEY (key, part));
             PRAGMA application_id = {APPLICATION_ID};
             PRAGMA user_version = {FORMAT_VERSION};"
        ))?;
        conn.close().map_err(|(_, e)| e)
    };
    init().map_err(|e| format!("a new cache cannot be written ({e})"))?;
    Ok(temp)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Only SQLite's corruption verdicts replace a file; I/O errors, full
    /// disks, memory, locks and permissions leave it as it is.
    #[test]
    fn only_corruption_counts_as_damage() {
        let error = |code| rusqlite::Error::SqliteFailure(rusqlite::ffi::Error::new(code), None);
        for code in [rusqlite::ffi::SQLITE_CORRUPT, rusqlite::ffi::SQLITE_NOTADB] {
            assert!(is_damage(&error(code)), "{code}");
            assert!(matches!(Trouble::from(error(code)), Trouble::Damage(_)));
        }
        for code in [
            rusqlite::ffi::SQLITE_IOERR,
            rusqlite::ffi::SQLITE_IOERR_READ,
            rusqlite::ffi::SQLITE_NOMEM,
            rusqlite::ffi::SQLITE_FULL,
            rusqlite::ffi::SQLITE_BUSY,
            rusqlite::ffi::SQLITE_LOCKED,
            rusqlite::ffi::SQLITE_READONLY,
            rusqlite::ffi::SQLITE_CANTOPEN,
            rusqlite::ffi::SQLITE_PERM,
        ] {
            assert!(!is_damage(&error(code)), "{code}");
            assert!(matches!(Trouble::from(error(code)), Trouble::Other(_)));
        }
    }

    /// The header alone never calls a file damaged: one that counts more
    /// pages than the file holds (normal while another process commits) is
    /// ours, for SQLite to judge under its locks.
    #[test]
    fn a_header_counting_more_pages_is_still_ours() {
        let mut header = b"SQLite format 3\0".to_vec();
        header.resize(100, 0);
        header[16..18].copy_from_slice(&4096u16.to_be_bytes());
        header[28..32].copy_from_slice(&1000u32.to_be_bytes());
        header[60..64].copy_from_slice(&FORMAT_VERSION.to_be_bytes());
        header[68..72].copy_from_slice(&APPLICATION_ID.to_be_bytes());
        assert_eq!(
            classify_header(&header),
            Header::Ours {
                version: FORMAT_VERSION
            }
        );
        header[68..72].copy_from_slice(&0i32.to_be_bytes());
        assert!(matches!(classify_header(&header), Header::Foreign(_)));
        assert!(matches!(classify_header(&header[..50]), Header::Foreign(_)));
    }
}
