//! The fuzz entry points: one function per parser of outside bytes. Each
//! must return (an error is fine) without panicking, and whatever it accepts
//! must survive the library's own round trip. Shared by the libFuzzer targets
//! (`fuzz/fuzz_targets/*.rs`, `cargo +nightly fuzz run <name>`) and the
//! stable-toolchain mutation fuzzer (`tests/it/fuzz_parsers.rs`).

use hydroplot::feature::to_geojson;
use hydroplot::gpkg::blob;
use hydroplot::render::tile_cache::TileCache;
use hydroplot::trace::Trace;

/// A fabric items page (OGC API Features GeoJSON).
pub fn feature_page(data: &[u8]) {
    if let Ok(features) = hydroplot::services::fabric::parse_items_page(data) {
        let fc = to_geojson(&features);
        let again = serde_json::from_slice::<geojson::FeatureCollection>(&fc);
        assert!(again.is_ok(), "an accepted page does not round-trip");
    }
}

/// A flowtrace process answer.
pub fn trace(data: &[u8]) {
    if let Ok(t) = Trace::parse(data) {
        assert_eq!(t.features.len(), 2);
        let _ = t.bbox();
        let _ = t.to_geojson();
    }
}

/// A GeoPackage geometry blob.
pub fn gpkg_blob(data: &[u8]) {
    let _ = blob::header(data);
    if let Ok(Some(g)) = blob::parse(data) {
        let written = blob::write(&g, 4269);
        assert!(
            blob::parse(&written).is_ok(),
            "a parsed blob does not round-trip"
        );
    }
}

/// A layer of a plot-data cache entry: the Arrow IPC stream, past the CRC
/// (which would reject almost every mutation before the reader).
pub fn plot_cache_entry(data: &[u8]) {
    let _ = hydroplot::plot::cached::decode_stream(data.to_vec());
}

/// A basemap tile (PNG or JPEG).
pub fn tile_image(data: &[u8]) {
    if let Ok(p) = hydroplot::render::tiles::decode(data) {
        assert!(p.width() <= 4096 && p.height() <= 4096);
    }
}

/// A tile cache file as found on disk, read through the cache.
pub fn tile_cache_entry(cache: &TileCache, data: &[u8]) {
    const URL: &str = "http://127.0.0.1/tiles/1/0/0.png";
    if std::fs::write(cache.path_for(URL), data).is_ok() {
        let _ = cache.get(URL);
    }
}
