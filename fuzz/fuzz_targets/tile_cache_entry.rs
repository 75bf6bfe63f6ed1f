#![no_main]
use hydroplot::render::tile_cache::TileCache;
use std::sync::OnceLock;

fn cache() -> &'static TileCache {
    static CACHE: OnceLock<TileCache> = OnceLock::new();
    CACHE.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("hydroplot-fuzz-tiles-{}", std::process::id()));
        TileCache::open(&dir, 1 << 20).expect("a temporary cache directory")
    })
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| hydroplot_fuzz::tile_cache_entry(cache(), data));
