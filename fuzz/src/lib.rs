//! The fuzz entry points of hydroplot (see `targets`).
pub mod targets;
pub use targets::*;
