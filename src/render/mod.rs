//! Drawing (in progress: owned by the render work).

pub mod style;
pub mod tiles;

/// A map canvas in EPSG:3857 (in progress).
pub struct Map {}
