//! The topology index of a local NHDPlus GeoPackage: one SQLite index on the
//! flowline layer's comid, hydroseq, dnhydroseq and stream order columns,
//! which lets [`GeoPackage::read_topology`] read the index alone and
//! [`GeoPackage::read_by_ids`] find flowlines by comid without scanning, so
//! a national-scale file answers in about a second.
//!
//! The file is checked before anything is written: it must be an SQLite
//! database, a GeoPackage (`gpkg_contents`) and hold the network flowline
//! layer with its topology columns. A refused file is never opened for
//! writing. The only change to an accepted file is the new index.

use super::layer::{covering_index, quote};
use super::user_file::{open_for_writing, open_nhdplus, write_failed};
use crate::cancel::Stop;
use crate::Result;
use rusqlite::TransactionBehavior;
use std::path::Path;

/// The name of the index this library creates.
pub const TOPOLOGY_INDEX: &str = "hydroplot_topology";

/// What [`create_topology_index`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IndexOutcome {
    /// The index `name` was created on `table`.
    Created { name: String, table: String },
    /// The file already has `name`, an index on `table` leading with the
    /// topology columns (created by this library or by hand); nothing changed.
    Existing { name: String, table: String },
}

/// Creates the topology index in the NHDPlus GeoPackage at `path`, unless it
/// has one already. Idempotent. A file that is not an SQLite database, not a
/// GeoPackage or without the flowline layer or its topology columns is an
/// `Error::Gpkg` and is left untouched; an unwritable file is an `Error::Io`.
/// A cancel of `stop` ends the creation with `Error::Cancelled`, the file
/// as it was (the transaction rolled back).
pub fn create_topology_index(path: &Path, stop: &Stop) -> Result<IndexOutcome> {
    let (table, columns) = {
        let gpkg = open_nhdplus(
            path,
            "the topology index is only for NHDPlus GeoPackages",
            stop,
        )?;
        let (table, columns) = gpkg.topology_columns()?;
        (table.to_string(), columns.map(str::to_string))
    };
    const FAILURE: &str = "the topology index cannot be created";
    let writable = |e| write_failed(path, FAILURE, e);
    let mut conn = open_for_writing(path, FAILURE, stop)?;
    // The look for an index and its creation are one write transaction:
    // two runs at once on one file take turns (the second, within SQLite's
    // busy wait, finds the first's index) instead of both creating it.
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(writable)?;
    if let Some(name) = covering_index(&tx, &table, &columns).map_err(writable)? {
        return Ok(IndexOutcome::Existing { name, table });
    }
    let sql = format!(
        "CREATE INDEX {} ON {} ({})",
        quote(TOPOLOGY_INDEX),
        quote(&table),
        columns
            .iter()
            .map(|c| quote(c))
            .collect::<Vec<_>>()
            .join(", ")
    );
    tx.execute_batch(&sql).map_err(writable)?;
    tx.commit().map_err(writable)?;
    Ok(IndexOutcome::Created {
        name: TOPOLOGY_INDEX.to_string(),
        table,
    })
}
