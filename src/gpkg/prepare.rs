//! A national NHDPlus GeoPackage made ready for local reads, and back: what
//! `hydroplot index` adds (the topology index, the basin parts) and what
//! `hydroplot index --remove` takes away again.

use super::basin_parts::{create_basin_parts, remove_basin_parts, PartsOutcome, REACHES_PER_PART};
use super::index::{create_topology_index, IndexOutcome, TOPOLOGY_INDEX};
use super::layer::quote;
use super::user_file::{open_for_writing, refused, require_sqlite, write_failed};
use crate::cancel::Stop;
use crate::Result;
use rusqlite::TransactionBehavior;
use std::path::Path;

/// What [`index_geopackage`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Indexed {
    pub topology: IndexOutcome,
    pub parts: PartsOutcome,
}

/// What [`unindex_geopackage`] removed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unindexed {
    /// The topology index this library names ([`TOPOLOGY_INDEX`]) was there.
    pub topology_index: bool,
    /// Basin parts (their table, registration or triggers) were there.
    pub parts: bool,
}

/// Makes the NHDPlus GeoPackage at `path` fast for local reads: the
/// topology index ([`create_topology_index`]), then the basin parts
/// ([`create_basin_parts`], reporting (parts made, parts in all) to
/// `progress` on this thread). Idempotent; errors and cancels as theirs.
pub fn index_geopackage(
    path: &Path,
    stop: &Stop,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Indexed> {
    let topology = create_topology_index(path, stop)?;
    let parts = create_basin_parts(path, REACHES_PER_PART, stop, progress)?;
    Ok(Indexed { topology, parts })
}

/// Removes from the GeoPackage at `path` what [`index_geopackage`] adds:
/// the index named [`TOPOLOGY_INDEX`] (an index made by hand under another
/// name stays) and the basin parts, in one transaction. A file that is not
/// a GeoPackage is an `Error::Gpkg` and left untouched; one with nothing to
/// remove is left unchanged.
pub fn unindex_geopackage(path: &Path, stop: &Stop) -> Result<Unindexed> {
    const FAILURE: &str = "the index cannot be removed";
    require_sqlite(path, None)?;
    let failed = |e| write_failed(path, FAILURE, e);
    let mut conn = open_for_writing(path, FAILURE, stop)?;
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(failed)?;
    let is_gpkg: i64 = tx
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'gpkg_contents'",
            [],
            |r| r.get(0),
        )
        .map_err(failed)?;
    if is_gpkg == 0 {
        let why = format!("{} is not a GeoPackage (no gpkg_contents)", path.display());
        return Err(refused(&why, None));
    }
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
    Ok(Unindexed {
        topology_index: topology_index > 0,
        parts,
    })
}
