//! Local OGC GeoPackage (1.2+) files: reading the NHDPlus layers (whole, as
//! topology only, by key or by bounding box) and writing the plotted layers.
//!
//! - [`blob`]: the geometry blob format and its WKB, parsed without panics.
//! - [`GeoPackage`] (`reader.rs`, with `layer.rs` describing each table and
//!   `wanted.rs` testing the keys of a read by id).
//! - [`write`] (`writer.rs`): a new file, written beside the target and renamed.
//! - [`create_topology_index`] (`index.rs`): the index that makes national
//!   files fast, added to a user's file after checking it is NHDPlus.
//! - [`create_basin_parts`] (`basin_parts.rs`): outlines of parts of the
//!   network stored beside it, so that large basins are folded from a few
//!   outlines, and the topology they were cut from (`stored_network.rs`), so
//!   that a plot reads it in one step; [`Fold`] (`fold.rs`): catchments
//!   folded into basins as read.
//! - [`index_geopackage`] and [`unindex_geopackage`] (`prepare.rs`): both of
//!   those added to a user's file at once (`hydroplot index`), and removed;
//!   `user_file.rs`: the checks, connection and errors all three share.
//! - `watch.rs`: a call's stop on every connection: a cancel interrupts its
//!   statements, and a wait for another program's lock lasts at most the
//!   call's lock timeout.

mod basin_parts;
pub mod blob;
mod fold;
mod index;
mod layer;
mod prepare;
mod readahead;
mod reader;
mod stored_network;
mod user_file;
mod wanted;
mod watch;
mod writer;

pub use basin_parts::{create_basin_parts, PartsOutcome, BASIN_PARTS, REACHES_PER_PART};
pub use fold::{catchment_key, Fold, Route};
pub use index::{create_topology_index, IndexOutcome, TOPOLOGY_INDEX};
pub use prepare::{index_geopackage, unindex_geopackage, Indexed, Unindexed};
pub use reader::{GeoPackage, Share};
pub use writer::{check_output_path, write};
