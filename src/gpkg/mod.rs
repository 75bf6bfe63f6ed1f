//! Local OGC GeoPackage (1.2+) files: reading the NHDPlus layers (whole, as
//! topology only, by key or by bounding box) and writing the plotted layers.
//!
//! - [`blob`]: the geometry blob format and its WKB, parsed without panics.
//! - [`GeoPackage`] (`reader.rs`, with `layer.rs` describing each table and
//!   `wanted.rs` testing the keys of a read by id).
//! - [`write`] (`writer.rs`): a new file, written beside the target and renamed.
//! - [`index_geopackage`] (`index_build.rs`, the file itself `index_file.rs`): the index that makes national
//!   files fast, in a file of hydroplot's own (never in the user's file),
//!   recorded with the GeoPackage's identity so that a stale one is never
//!   used: the flowline network as one blob (`stored_network.rs`; a
//!   basin's upstream read from it in place, `stored_upstream.rs`), and the
//!   basin parts (`basin_parts.rs`): outlines of parts of the network, so
//!   that large basins are folded from a few outlines; [`Fold`]
//!   (`fold.rs`): catchments folded into basins as read.
//! - [`unindex_geopackage`] (`prepare.rs`): the index files deleted, and an
//!   index of release 0.2 inside a user's file taken out; `user_file.rs`:
//!   the checks of a user's file and the connection that removes it.
//! - `watch.rs`: a call's stop on every connection: a cancel interrupts its
//!   statements, and a wait for another program's lock lasts at most the
//!   call's lock timeout.

mod basin_parts;
pub mod blob;
mod fold;
mod index_build;
mod index_file;
mod layer;
mod prepare;
mod readahead;
mod reader;
mod stored_network;
mod stored_upstream;
mod user_file;
mod wanted;
mod watch;
mod writer;

pub use basin_parts::REACHES_PER_PART;
pub use fold::{catchment_key, Fold, Route};
pub use index_build::{
    index_geopackage, index_status, make_basin_parts, read_network_and_index, FoundIndex,
    IndexStatus, IndexWrite, Indexed, IndexedParts, NetworkRead, NewIndex, PartsOutcome,
};
pub use index_file::{index_path, IndexPlace, INDEX_EXTENSION};
pub use prepare::{unindex_geopackage, Unindexed};
pub use reader::{GeoPackage, Share};
pub use stored_network::{BASIN_PARTS, TOPOLOGY_INDEX};
pub use writer::{check_output_path, write};
