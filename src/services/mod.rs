//! Clients of the remote services: the linked-data index service
//! ([`index`]), the OGC API Features "fabric" service ([`fabric`]), the
//! flowtrace process and the tile servers.

pub mod batch;
pub mod fabric;
pub mod flowtrace;
pub mod index;
// `pub mod tiles;` is declared by its owner.
