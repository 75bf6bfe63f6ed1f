//! Local OGC GeoPackage (1.2+) files: reading the NHDPlus layers (whole, as
//! topology only, by key or by bounding box) and writing the plotted layers.
//!
//! - [`blob`]: the geometry blob format and its WKB, parsed without panics.
//! - [`GeoPackage`] (`reader.rs`, with `layer.rs` describing each table).
//! - [`write`] (`writer.rs`): a new file, written beside the target and renamed.

pub mod blob;
mod layer;
mod reader;
mod writer;

pub use reader::GeoPackage;
pub use writer::{check_output_path, write};
