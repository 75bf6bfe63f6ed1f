//! Clients of the remote services: the linked-data index service
//! ([`index`]), the OGC API Features "fabric" service ([`fabric`]), the
//! flowtrace process and the tile servers.

pub mod fabric;
pub mod index;
// `pub mod flowtrace;` and `pub mod tiles;` are declared by their owners.
