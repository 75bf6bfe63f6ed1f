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
//! its first 100 bytes before SQLite opens it:
//! - ours (SQLite with our `application_id`) in this format: used;
//! - ours but corrupt, or of an older format: replaced (a warning says so);
//! - ours in a newer format: left alone, no caching, a warning;
//! - anything else (text, `.rds`, a GeoPackage, another program's SQLite,
//!   an empty file, a directory): left byte-for-byte untouched, no caching,
//!   a warning that names the file.
//!
//! A cache never fails a plot: every problem is a warning and no caching.

use crate::context::Context;
use crate::output::TempFile;
use crate::{Error, Result};
use rusqlite::{params, Connection, OpenFlags, OptionalExtension};
use std::io::Read;
use std::path::Path;
use std::time::Duration;

/// Marks our files (`PRAGMA application_id`), "HYDP".
const APPLICATION_ID: i32 = 0x4859_4450;
/// The file format; a file with a newer one is left alone, never misread,
/// one with an older one is replaced. 2: entries have parts.
const FORMAT_VERSION: i32 = 2;
/// How long a writer waits for another process's transaction.
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// What an existing file at the cache path is, from its SQLite header.
#[derive(Debug, PartialEq)]
enum Existing {
    /// Nothing there yet.
    Absent,
    /// A hydroplot cache of format `version`.
    Ours { version: i32 },
    /// A hydroplot cache cut short (shorter than its header says).
    Truncated { length: u64, expected: u64 },
    /// Not provably ours; the reason, for the warning.
    Foreign(String),
}

/// Reads the first 100 bytes of `path` (the SQLite header) without writing.
fn classify(path: &Path) -> std::io::Result<Existing> {
    let meta = match std::fs::metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Existing::Absent),
        Err(e) => return Err(e),
    };
    if !meta.is_file() {
        return Ok(Existing::Foreign("it is not a regular file".into()));
    }
    let mut header = Vec::with_capacity(100);
    std::fs::File::open(path)?
        .take(100)
        .read_to_end(&mut header)?;
    Ok(classify_header(&header, meta.len()))
}

/// Classifies a file of `length` bytes by its first 100 (the SQLite header:
/// page size at offset 16, page count at 28, `user_version` at 60 and
/// `application_id` at 68, big-endian).
fn classify_header(header: &[u8], length: u64) -> Existing {
    let be = |at: usize| {
        u32::from_be_bytes([header[at], header[at + 1], header[at + 2], header[at + 3]])
    };
    if header.is_empty() {
        return Existing::Foreign("it is an empty file".into());
    }
    if header.len() < 100 || !header.starts_with(b"SQLite format 3\0") {
        return Existing::Foreign("it is not a SQLite database".into());
    }
    let page_size = match u16::from_be_bytes([header[16], header[17]]) {
        1 => 65_536,
        n => u64::from(n),
    };
    let expected = page_size * u64::from(be(28));
    match be(68) as i32 {
        APPLICATION_ID if length < expected => Existing::Truncated { length, expected },
        APPLICATION_ID => Existing::Ours {
            version: be(60) as i32,
        },
        0 => Existing::Foreign("it is a SQLite database of another program".into()),
        id => Existing::Foreign(format!(
            "it is a SQLite database of another program (application id {id:#010x})"
        )),
    }
}

/// An open plot-data cache file.
pub struct PlotCache {
    conn: Connection,
}

impl PlotCache {
    /// Opens the cache at `path`, creating it when absent and replacing it
    /// only when it is provably ours and unusable (see the module doc).
    /// Every problem is a warning (pushed to `warnings` and the log); `None`
    /// means no caching.
    pub fn open(ctx: &Context, path: &Path, warnings: &mut Vec<String>) -> Option<PlotCache> {
        let mut warn = |message: String| {
            warnings.push(ctx.warn(format!("plot-data cache {}: {message}", path.display())))
        };
        let replace = |why: String, warn: &mut dyn FnMut(String)| {
            warn(format!("{why}; replacing this hydroplot cache"));
            Self::replace(path)
        };
        let opened = match classify(path) {
            Err(e) => Err(format!("it cannot be read ({e})")),
            Ok(Existing::Foreign(why)) => Err(format!(
                "{why}, not a hydroplot cache, so it is left untouched"
            )),
            Ok(Existing::Ours { version }) if version > FORMAT_VERSION => Err(format!(
                "it is a hydroplot cache of a newer format ({version}; this library reads {FORMAT_VERSION}), so it is left untouched"
            )),
            Ok(Existing::Absent) => Self::create(path),
            Ok(Existing::Truncated { length, expected }) => replace(
                format!("it is cut short ({length} of {expected} bytes)"),
                &mut warn,
            ),
            Ok(Existing::Ours { version }) if version < FORMAT_VERSION => {
                replace(format!("it has an older format ({version})"), &mut warn)
            }
            Ok(Existing::Ours { .. }) => match Self::open_existing(path) {
                Err(Error::Service(why)) => replace(format!("it is damaged ({why})"), &mut warn),
                other => other.map_err(|e| e.to_string()),
            },
        };
        match opened {
            Ok(cache) => Some(cache),
            Err(why) => {
                warn(format!("{why}; not caching"));
                None
            }
        }
    }

    /// Builds a new cache under a temporary name and links it into place;
    /// when another process created one meanwhile, opens that one instead.
    fn create(path: &Path) -> std::result::Result<PlotCache, String> {
        let dir = path
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        if !dir.is_dir() {
            return Err(format!("directory {} does not exist", dir.display()));
        }
        match initialized_temp(path)?.persist(path, false) {
            Ok(()) | Err(Error::Exists(_)) => {}
            Err(e) => return Err(e.to_string()),
        }
        match classify(path) {
            Ok(Existing::Ours { version }) if version == FORMAT_VERSION => {
                Self::open_existing(path).map_err(|e| e.to_string())
            }
            _ => Err(
                "another program created a file there meanwhile, so it is left untouched".into(),
            ),
        }
    }

    /// Replaces our own unusable cache file by a new empty one, atomically
    /// (other readers see the old file or the new one, never half of one).
    fn replace(path: &Path) -> std::result::Result<PlotCache, String> {
        initialized_temp(path)?
            .persist(path, true)
            .map_err(|e| e.to_string())?;
        Self::open_existing(path).map_err(|e| e.to_string())
    }

    /// Opens a file already classified as ours. `Error::Io` when it cannot be
    /// written (no caching), `Error::Service` when SQLite finds it damaged or
    /// its schema is not ours (it may be replaced).
    fn open_existing(path: &Path) -> Result<PlotCache> {
        let conn = connect(path)?;
        let version: i64 = conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(sqlite_error)?;
        let tables: i64 = conn
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ('plot_data', 'plot_data_part')",
                [],
                |r| r.get(0),
            )
            .map_err(sqlite_error)?;
        if version != i64::from(FORMAT_VERSION) || tables != 2 {
            return Err(Error::Service(format!(
                "format {version} without the plot_data and plot_data_part tables"
            )));
        }
        Ok(PlotCache { conn })
    }

    /// The entry stored under `key`, or `None` on a miss (or an unreadable row).
    pub fn get(&self, key: &str) -> Option<Vec<u8>> {
        self.conn
            .query_row(
                "SELECT body FROM plot_data WHERE key = ?1",
                params![key],
                |r| r.get(0),
            )
            .optional()
            .ok()?
    }

    /// Part `part` of the entry under `key`, or `None` (a miss).
    pub fn get_part(&self, key: &str, part: &str) -> Option<Vec<u8>> {
        self.conn
            .query_row(
                "SELECT body FROM plot_data_part WHERE key = ?1 AND part = ?2",
                params![key, part],
                |r| r.get(0),
            )
            .optional()
            .ok()?
    }

    /// Runs `read` (calls of [`PlotCache::get`] and [`PlotCache::get_part`])
    /// in one read transaction, so that an entry's body and parts come from
    /// one write even while another process replaces it.
    pub fn read<T>(&self, read: impl FnOnce(&Self) -> Option<T>) -> Option<T> {
        let tx = self.conn.unchecked_transaction().ok()?;
        let out = read(self);
        drop(tx); // a read-only transaction: rolling back changes nothing
        out
    }

    /// Stores `body` under `key` in one transaction, replacing any entry there.
    pub fn put(&self, key: &str, body: &[u8]) -> Result<()> {
        self.put_entry(key, body, std::iter::empty())
    }

    /// Stores `body` and `parts` (`(name, bytes)`, each made only when the
    /// one before is written) under `key` in one transaction, replacing any
    /// entry there. A part that fails to be made aborts the whole entry.
    pub fn put_entry(
        &self,
        key: &str,
        body: &[u8],
        parts: impl Iterator<Item = Result<(String, Vec<u8>)>>,
    ) -> Result<()> {
        let created = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as i64);
        let write = |e: rusqlite::Error| Error::Io(format!("writing the plot-data cache: {e}"));
        // IMMEDIATE: take the write lock first, so two writers queue on the
        // busy timeout instead of deadlocking on a lock upgrade.
        let tx = rusqlite::Transaction::new_unchecked(
            &self.conn,
            rusqlite::TransactionBehavior::Immediate,
        )
        .map_err(write)?;
        tx.execute("DELETE FROM plot_data_part WHERE key = ?1", params![key])
            .map_err(write)?;
        tx.execute(
            "INSERT OR REPLACE INTO plot_data (key, created, body) VALUES (?1, ?2, ?3)",
            params![key, created, body],
        )
        .map_err(write)?;
        for part in parts {
            let (name, bytes) = part?;
            // The bytes go into the row's blob through incremental I/O: a
            // bound blob would be copied whole by SQLite first, another
            // layer's worth of memory at the peak of a cache write.
            tx.execute(
                "INSERT INTO plot_data_part (key, part, body) VALUES (?1, ?2, zeroblob(?3))",
                params![key, name, bytes.len() as i64],
            )
            .map_err(write)?;
            let mut blob = tx
                .blob_open(
                    rusqlite::MAIN_DB,
                    "plot_data_part",
                    "body",
                    tx.last_insert_rowid(),
                    false,
                )
                .map_err(write)?;
            blob.write_at(&bytes, 0).map_err(write)?;
        }
        tx.commit().map_err(write)
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

/// Opens `path` read-write (never creating it: only [`initialized_temp`]
/// creates files) with the busy timeout.
fn connect(path: &Path) -> Result<Connection> {
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(path, flags).map_err(sqlite_error)?;
    conn.busy_timeout(BUSY_TIMEOUT).map_err(sqlite_error)?;
    Ok(conn)
}

/// A new, empty cache of this format in a temporary file beside `path`,
/// ready to be persisted to `path`.
fn initialized_temp(path: &Path) -> std::result::Result<TempFile, String> {
    let temp = TempFile::beside(path).map_err(|e| e.to_string())?;
    let init = || -> Result<()> {
        let conn = connect(temp.path())?;
        conn.execute_batch(&format!(
            "CREATE TABLE plot_data (key TEXT PRIMARY KEY, created INTEGER NOT NULL, body BLOB NOT NULL);
             CREATE TABLE plot_data_part (key TEXT NOT NULL, part TEXT NOT NULL, body BLOB NOT NULL, PRIMARY KEY (key, part));
             PRAGMA application_id = {APPLICATION_ID};
             PRAGMA user_version = {FORMAT_VERSION};"
        ))
        .map_err(sqlite_error)?;
        conn.close().map_err(|(_, e)| sqlite_error(e))
    };
    init().map_err(|e| format!("a new cache cannot be written ({e})"))?;
    Ok(temp)
}
