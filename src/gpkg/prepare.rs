//! `hydroplot index --remove`: a GeoPackage's index files deleted, and an
//! index of release 0.2 inside the file taken out (the topology index, the
//! basin parts), the only write this library makes to a user's file, and
//! only when one is found.

use super::basin_parts::remove_basin_parts;
use super::index_file::{index_path, IndexPlace};
use super::layer::quote;
use super::stored_network::{BASIN_NETWORK, BASIN_PARTS, TOPOLOGY_INDEX};
use super::user_file::{open_for_writing, require_sqlite, write_failed};
use crate::cancel::Stop;
use crate::{Error, Result};
use rusqlite::{Connection, OpenFlags, TransactionBehavior};
use std::path::{Path, PathBuf};

/// What [`unindex_geopackage`] removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unindexed {
    /// The index files deleted (beside the file, in the index directory).
    pub index_files: Vec<PathBuf>,
    /// Release 0.2's topology index ([`TOPOLOGY_INDEX`]) was in the file.
    pub topology_index: bool,
    /// Release 0.2's basin parts (tables, registration or triggers) were in
    /// the file.
    pub parts: bool,
}

/// Removes the indexes of the GeoPackage at `path`: its index files beside
/// it and in `dir`, and an index of release 0.2 inside it (the index named
/// [`TOPOLOGY_INDEX`], the basin parts' tables, registration and triggers,
/// in one transaction; an index made by hand under another name stays).
/// The file is opened for writing only when it holds such an index. A file
/// that is not an SQLite database is an `Error::Gpkg`, left untouched.
pub fn unindex_geopackage(path: &Path, dir: &Path, stop: &Stop) -> Result<Unindexed> {
    require_sqlite(path, None)?;
    let mut index_files = Vec::new();
    for place in [IndexPlace::Beside, IndexPlace::Dir(dir)] {
        let file = index_path(path, place)?;
        match std::fs::remove_file(&file) {
            Ok(()) => index_files.push(file),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(crate::error::io_error(&file, e)),
        }
    }
    let (topology_index, parts) = match has_release_0_2_index(path)? {
        true => remove_release_0_2_index(path, stop)?,
        false => (false, false),
    };
    Ok(Unindexed {
        index_files,
        topology_index,
        parts,
    })
}

/// Whether the file at `path` holds anything of release 0.2's index, read
/// without writing.
fn has_release_0_2_index(path: &Path) -> Result<bool> {
    let conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY)
        .map_err(|e| Error::Gpkg(format!("{}: {e}", path.display())))?;
    let pattern = format!("{BASIN_PARTS}_stale_on_*");
    let found: i64 = conn
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE name IN (?1, ?2, ?3) OR (type = 'trigger' AND name GLOB ?4)",
            [TOPOLOGY_INDEX, BASIN_PARTS, BASIN_NETWORK, &pattern],
            |r| r.get(0),
        )
        .map_err(|e| Error::Gpkg(format!("{}: {e}", path.display())))?;
    Ok(found > 0)
}

/// Takes release 0.2's index out of the file at `path`, in one transaction:
/// (topology index was there, basin parts were there).
fn remove_release_0_2_index(path: &Path, stop: &Stop) -> Result<(bool, bool)> {
    const FAILURE: &str = "the index of release 0.2 cannot be removed";
    let failed = |e| write_failed(path, FAILURE, e);
    let mut conn = open_for_writing(path, FAILURE, stop)?;
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(failed)?;
    let topology_index: i64 = tx
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = ?1",
            [TOPOLOGY_INDEX],
            |r| r.get(0),
        )
        .map_err(failed)?;
    tx.execute_batch(&format!("DROP INDEX IF EXISTS {}", quote(TOPOLOGY_INDEX)))
        .map_err(failed)?;
    let parts = remove_basin_parts(&tx).map_err(failed)?;
    tx.commit().map_err(failed)?;
    Ok((topology_index > 0, parts))
}
