//! The integration tests, gathered in one binary so `cargo test` links the
//! library once and runs every test on every core (STYLE.md 20). Each module
//! is one concern, as each file was its own binary before; tests that change
//! what the whole process shares (the environment, a thread's exit) are in
//! `tests/process/`, and the CRS tests that CI also runs with full PROJ are
//! `tests/crs.rs`.
//!
//! One module or test: `cargo test --test it gpkg::` or `--test it NAME`.

#[path = "../browser/chromium.rs"]
mod chromium;
#[path = "../support/loopback.rs"]
mod loopback;
#[path = "../support/private_ca.rs"]
mod private_ca;
#[path = "../support/scratch.rs"]
mod scratch;
#[path = "../support/mod.rs"]
mod support;
#[path = "../../fuzz/src/targets.rs"]
mod targets;

mod architecture;
mod basin_parts;
mod batch;
mod batch_cli;
mod cache;
mod cancel;
mod cli;
mod cli_checks;
mod cli_files;
mod concurrency;
mod fault_matrix;
mod fuzz_parsers;
mod geojson_out;
mod georef;
mod gpkg;
mod gpkg_index;
mod gzip;
mod header;
mod hostile_input;
mod html;
mod http_redirect;
mod http_retry;
mod lod;
mod mock_link;
mod mock_services;
mod offline;
mod paging;
mod plot_download;
mod plot_local;
mod properties;
mod recorded_responses;
mod render;
mod schema;
mod streamorder;
mod table_decode;
mod tile_revalidation;
mod tls;
mod trace;
