//! The plot-data cache (`cache_data`): keyed, atomic, safe to share.

use hydroplot::mock::{context, MockServer};
use hydroplot::plot::{plot_hydro, CacheSetting, Layer, Outlet, PlotData, PlotRequest};
use std::path::{Path, PathBuf};

fn tmpdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("hydroplot-cache-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn cached(outlet: i64, file: &Path) -> PlotRequest {
    PlotRequest {
        outlets: vec![Outlet::Comid(outlet)],
        actually_plot: false,
        cache: CacheSetting::File(file.to_path_buf()),
        ..Default::default()
    }
}

fn same(a: &PlotData, b: &PlotData) {
    for l in Layer::ALL {
        assert_eq!(a.layer(l), b.layer(l), "layer {}", l.name());
    }
    assert_eq!(a.bbox, b.bbox);
    assert_eq!(a.flowline_comids, b.flowline_comids);
}

#[test]
fn a_hit_makes_no_request_and_returns_the_same_data() {
    let server = MockServer::start();
    let ctx = context(&server);
    let file = tmpdir("hit").join("plot.cache");
    let first = plot_hydro(&ctx, &cached(13293970, &file), None).unwrap();
    assert!(file.exists());
    let misses = server.requests().len();
    assert!(misses >= 6, "{misses}");
    server.clear_requests();
    let second = plot_hydro(&ctx, &cached(13293970, &file), None).unwrap();
    assert_eq!(server.requests().len(), 0, "a hit makes no request");
    same(&first, &second);
    assert_eq!(second.layer(Layer::Flowline).len(), 251);

    // A changed parameter misses (and is added beside the first entry).
    let mut other = cached(13293970, &file);
    other.streamorder = Some(2);
    let thinned = plot_hydro(&ctx, &other, None).unwrap();
    assert!(!server.requests().is_empty());
    assert!(thinned.layer(Layer::Flowline).len() < 251);
    server.clear_requests();
    plot_hydro(&ctx, &cached(13293970, &file), None).unwrap();
    plot_hydro(&ctx, &other, None).unwrap();
    assert_eq!(server.requests().len(), 0, "both entries are kept");
}

#[test]
fn corrupt_and_foreign_files_are_replaced_with_a_warning() {
    let server = MockServer::start();
    let ctx = context(&server);
    let dir = tmpdir("corrupt");
    for (name, bytes) in [
        ("garbage.cache", b"this is not a database at all".to_vec()),
        ("truncated.cache", b"SQLite format 3\0\x10\x00".to_vec()),
        (
            "foreign.cache",
            std::fs::read(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/tests/data/yahara_sample.gpkg"
            ))
            .unwrap(),
        ),
    ] {
        let file = dir.join(name);
        std::fs::write(&file, &bytes).unwrap();
        let d = plot_hydro(&ctx, &cached(13293970, &file), None).unwrap();
        assert_eq!(d.layer(Layer::Flowline).len(), 251, "{name}");
        assert!(
            d.warnings.iter().any(|w| w.contains("replacing")),
            "{name}: {:?}",
            d.warnings
        );
        server.clear_requests();
        let again = plot_hydro(&ctx, &cached(13293970, &file), None).unwrap();
        assert_eq!(
            server.requests().len(),
            0,
            "{name}: the replacement works as a cache"
        );
        same(&d, &again);
    }
}

#[test]
fn an_unwritable_location_is_a_warning_and_no_caching() {
    let server = MockServer::start();
    let ctx = context(&server);
    let file = PathBuf::from("/nonexistent-dir/hydroplot/plot.cache");
    let d = plot_hydro(&ctx, &cached(13293970, &file), None).unwrap();
    assert_eq!(d.layer(Layer::Flowline).len(), 251);
    assert!(
        d.warnings.iter().any(|w| w.contains("not caching")),
        "{:?}",
        d.warnings
    );
    assert!(!file.exists());
}

#[test]
fn concurrent_writers_lose_nothing() {
    let server = MockServer::start();
    let ctx = context(&server);
    let file = tmpdir("concurrent").join("plot.cache");
    let outlets = [13293970i64, 13294312, 13293454, 13293750];
    std::thread::scope(|s| {
        for &o in &outlets {
            let (ctx, file) = (&ctx, &file);
            s.spawn(move || plot_hydro(ctx, &cached(o, file), None).unwrap());
        }
    });
    server.clear_requests();
    for &o in &outlets {
        plot_hydro(&ctx, &cached(o, &file), None).unwrap();
    }
    assert_eq!(server.requests().len(), 0, "every writer's entry is there");
}

#[test]
fn disabled_cache_leaves_nothing_on_disk() {
    let server = MockServer::start();
    let dir = tmpdir("disabled");
    let mut config = context(&server).config.clone();
    config.tile_cache_dir = dir.join("tiles");
    config.tile_url = Some(server.tile_url());
    let ctx = hydroplot::Context::new(config).unwrap();
    let req = PlotRequest {
        outlets: vec![Outlet::Comid(13293970)],
        cache: CacheSetting::Disabled,
        size: (256, 256),
        ..Default::default()
    };
    let d = plot_hydro(&ctx, &req, None).unwrap();
    assert!(d.map.is_some());
    assert!(server
        .requests()
        .iter()
        .any(|r| r.path.starts_with("/tiles/")));
    assert_eq!(
        std::fs::read_dir(&dir).unwrap().count(),
        0,
        "nothing written"
    );
}

#[test]
fn many_first_openers_of_one_new_file_lose_nothing() {
    use hydroplot::cache::PlotCache;
    let ctx = hydroplot::Context::new(hydroplot::config::Config::default()).unwrap();
    let dir = tmpdir("first-openers");
    for round in 0..20 {
        let file = dir.join(format!("round{round}.cache"));
        let barrier = std::sync::Barrier::new(8);
        std::thread::scope(|s| {
            for i in 0..8 {
                let (ctx, file, barrier) = (&ctx, &file, &barrier);
                s.spawn(move || {
                    barrier.wait();
                    let mut warnings = Vec::new();
                    let cache = PlotCache::open(ctx, file, &mut warnings).expect("the cache opens");
                    assert!(warnings.is_empty(), "round {round}: {warnings:?}");
                    let data = PlotData {
                        bbox: [i as f64, 0.0, 1.0, 1.0],
                        ..Default::default()
                    };
                    cache.put(&format!("key{i}"), &data).unwrap();
                });
            }
        });
        let cache = PlotCache::open(&ctx, &file, &mut Vec::new()).unwrap();
        for i in 0..8 {
            let hit = cache
                .get(&format!("key{i}"))
                .unwrap_or_else(|| panic!("round {round}: key{i} lost"));
            assert_eq!(hit.bbox[0], i as f64);
        }
    }
}
