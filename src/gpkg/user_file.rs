//! A user's own GeoPackage: the checks before it is indexed (it is only
//! read), and the one write this library still makes to it, the removal of
//! an index of release 0.2 on request (`hydroplot index --remove`): the
//! connection that writes and its errors.

use super::reader::{watch_connection, GeoPackage};
use crate::cancel::Stop;
use crate::{Error, Result};
use rusqlite::{Connection, OpenFlags};
use std::io::Read;
use std::path::Path;

/// The error refusing a change to the file: `why`, then that nothing was
/// changed, after `limit` (what the change is for) when there is one.
pub(super) fn refused(why: &str, limit: Option<&str>) -> Error {
    let why = why.trim_end_matches('.');
    Error::Gpkg(match limit {
        Some(limit) => format!("{why}; {limit}, nothing was changed."),
        None => format!("{why}; nothing was changed."),
    })
}

/// `Ok` when the file at `path` is an SQLite database, else the error of
/// [`refused`] with `limit`; `Error::Io` when it cannot be read.
pub(super) fn require_sqlite(path: &Path, limit: Option<&str>) -> Result<()> {
    const HEADER: &[u8; 16] = b"SQLite format 3\0";
    let mut head = [0u8; 16];
    crate::paths::check_regular(path, "GeoPackage")?;
    let mut file = std::fs::File::open(path).map_err(|e| crate::error::io_error(path, e))?;
    match file.read_exact(&mut head).is_ok() && &head == HEADER {
        true => Ok(()),
        false => Err(refused(
            &format!("{} is not an SQLite database", path.display()),
            limit,
        )),
    }
}

/// The NHDPlus GeoPackage at `path`, opened to read, once it is checked to
/// be one (an SQLite database with the flowline layer and its topology
/// columns); else the error of [`refused`] saying that `limit`.
pub(super) fn open_nhdplus(path: &Path, limit: &str, stop: &Stop) -> Result<GeoPackage> {
    require_sqlite(path, Some(limit))?;
    let refuse = |e: Error| match e {
        Error::Cancelled(_) | Error::InvalidArgument(_) => e,
        e => refused(&e.to_string(), Some(limit)),
    };
    let gpkg = GeoPackage::open_watched(path, stop).map_err(refuse)?;
    gpkg.topology_columns().map_err(refuse)?;
    Ok(gpkg)
}

/// The file at `path` opened to be written, its statements interrupted
/// once `stop` is; errors as [`write_failed`] with `failure`.
pub(super) fn open_for_writing(path: &Path, failure: &str, stop: &Stop) -> Result<Connection> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| write_failed(path, failure, e))?;
    watch_connection(&conn, stop);
    Ok(conn)
}

/// The error of a failed write to the file at `path`: `Error::Cancelled`
/// when a stop interrupted it, else an `Error::Io` saying `failure` (what
/// could not be done) and SQLite's reason.
pub(super) fn write_failed(path: &Path, failure: &str, e: rusqlite::Error) -> Error {
    match e.sqlite_error_code() {
        Some(rusqlite::ErrorCode::OperationInterrupted) => Error::from(e),
        _ => Error::Io(format!("{}: {failure}: {e}", path.display())),
    }
}
