//! Tile politeness: an expired cache entry is revalidated with the server's
//! validators, and a `304 Not Modified` renews it without a download.
//!
//! The mock tile server sends `ETag` and `Last-Modified` and answers 304 only
//! when `If-None-Match` (or, without it, `If-Modified-Since`) shows the copy
//! is current. To tell a 304 from a fresh download, the entries are given a
//! body the server never sends: it survives a 304 and is replaced by a 200.

use hydroplot::render::tile_cache::{Entry, TileCache, DEFAULT_MAX_BYTES};
use hydroplot::render::{Map, TileCacheMode};
use hydroplot_mock::{self as mock, MockServer};
use std::time::{SystemTime, UNIX_EPOCH};

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// A 256x256 PNG of one colour no mock tile has (the mock's channels are 40-239).
fn magenta_png() -> Vec<u8> {
    let mut out = Vec::new();
    let mut enc = png::Encoder::new(&mut out, 256, 256);
    enc.set_color(png::ColorType::Rgb);
    enc.set_depth(png::BitDepth::Eight);
    let pixels: Vec<u8> = [255u8, 0, 255].repeat(256 * 256);
    enc.write_header()
        .unwrap()
        .write_image_data(&pixels)
        .unwrap();
    out
}

/// The tile URLs the mock served since the last clear.
fn tile_urls(server: &MockServer) -> Vec<String> {
    server
        .requests()
        .iter()
        .filter(|r| r.path.starts_with("/tiles/"))
        .map(|r| format!("{}{}", server.base_url(), r.path))
        .collect()
}

#[test]
fn expired_tiles_are_revalidated_and_a_304_only_renews_them() {
    let server = MockServer::start();
    let ctx = mock::context(&server);
    let dir = ctx.config.tile_cache_dir.clone();
    let _ = std::fs::remove_dir_all(&dir);
    let mode = TileCacheMode::Dir(dir.clone());
    let draw = || {
        let mut warnings = Vec::new();
        Map::new(
            &ctx,
            [-89.40, 43.05, -89.30, 43.12],
            "EPSG:4326",
            (512, 512),
            "OpenStreetMap",
            None,
            &mode,
            &mut warnings,
        )
        .unwrap();
        assert!(warnings.is_empty(), "{warnings:?}");
    };

    draw();
    let urls = tile_urls(&server);
    assert!(urls.len() >= 4, "{urls:?}");
    let cache = TileCache::open(&dir, DEFAULT_MAX_BYTES).unwrap();
    let first = cache.lookup(&urls[0]).unwrap();
    assert!(first.is_fresh());
    assert!(first.etag.as_deref().is_some_and(|e| e.starts_with('"')));
    assert_eq!(
        first.last_modified.as_deref(),
        Some("Sun, 06 Nov 1994 08:49:37 GMT")
    );

    // Expire every entry (max-age=0) with these validators:
    // [0]: both, its body kept as the server sent it;
    // [1]: both, a body the server never sends;
    // [2]: only Last-Modified, that body too;
    // the rest: none, that body too.
    let magenta = magenta_png();
    let originals: Vec<Entry> = urls.iter().map(|u| cache.lookup(u).unwrap()).collect();
    let expire = [("cache-control".to_string(), "max-age=0".to_string())];
    for (i, (url, e)) in urls.iter().zip(&originals).enumerate() {
        let entry = Entry {
            expires: 0,
            etag: if i <= 1 { e.etag.clone() } else { None },
            last_modified: if i <= 2 {
                e.last_modified.clone()
            } else {
                None
            },
            body: if i == 0 {
                e.body.clone()
            } else {
                magenta.clone()
            },
        };
        cache.refresh(url, &expire, entry).unwrap();
        assert!(!cache.lookup(url).unwrap().is_fresh());
    }

    server.clear_requests();
    let before = now();
    draw();
    // Every tile was asked for again, once.
    let mut again = tile_urls(&server);
    again.sort();
    let mut expected = urls.clone();
    expected.sort();
    assert_eq!(again, expected);

    for (i, url) in urls.iter().enumerate() {
        let e = cache.lookup(url).unwrap();
        assert!(e.expires >= before + 3600, "tile {i}: expiry renewed");
        match i {
            // 304: the kept body is untouched, byte for byte.
            0 => assert_eq!(e.body, originals[0].body),
            1 | 2 => assert_eq!(e.body, magenta, "tile {i}: a 304, no download"),
            // No validator: an unconditional GET, the server's tile again.
            _ => assert_eq!(e.body, originals[i].body, "tile {i}: downloaded"),
        }
        assert_eq!(e.etag, originals[i].etag);
        assert_eq!(e.last_modified, originals[i].last_modified);
    }
    let _ = std::fs::remove_dir_all(&dir);
}
