//! hydroplot: basins, flowline networks and raindrop traces from the US national
//! hydrography web services (the linked-data index service, the OGC API Features
//! "fabric" service and the flowtrace process), drawn as Web Mercator maps.
//!
//! The crate is a plain Rust core (this module tree) under a thin C ABI in [`ffi`].
//! Everything below `ffi` is usable and tested from Rust without C.

pub mod arrow;
pub mod cache;
pub mod cancel;
pub mod collection;
pub mod config;
pub mod context;
pub mod crs;
pub mod error;
pub mod feature;
pub mod ffi;
pub mod gpkg;
pub mod html;
pub mod http;
pub mod lookup;
pub mod network;
pub mod observer;
pub mod output;
pub mod parallel;
pub mod paths;
pub mod plot;
pub mod points;
pub mod render;
pub mod services;
pub mod table;
pub mod tls;
pub mod trace;
pub mod url;

pub use context::Context;
pub use error::{Error, Result};

/// The library version, `MAJOR.MINOR.PATCH`, from `Cargo.toml`.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
