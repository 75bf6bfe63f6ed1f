//! The plot-data cache (`cache_data`): keyed, atomic, safe to share.

use hydroplot::plot::{plot_hydro, CacheSetting, Layer, Outlet, PlotData, PlotRequest};
use hydroplot_mock::{context, MockServer};
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
        assert_eq!(
            a.layer(l).to_features(),
            b.layer(l).to_features(),
            "layer {}",
            l.name()
        );
    }
    assert_eq!(a.bbox, b.bbox);
    assert_eq!(a.flowline_comids, b.flowline_comids);
}

#[test]
fn a_hit_makes_no_request_and_returns_the_same_data() {
    let server = MockServer::start();
    let ctx = context(&server);
    let file = tmpdir("hit").join("plot.cache");
    let first = plot_hydro(&ctx, &cached(13293970, &file), None)
        .unwrap()
        .data;
    assert!(file.exists());
    let misses = server.requests().len();
    assert!(misses >= 6, "{misses}");
    server.clear_requests();
    let second = plot_hydro(&ctx, &cached(13293970, &file), None)
        .unwrap()
        .data;
    assert_eq!(server.requests().len(), 0, "a hit makes no request");
    same(&first, &second);
    assert_eq!(second.layer(Layer::Flowline).len(), 251);

    // A changed parameter misses (and is added beside the first entry).
    let mut other = cached(13293970, &file);
    other.streamorder = Some(2);
    let thinned = plot_hydro(&ctx, &other, None).unwrap().data;
    assert!(!server.requests().is_empty());
    assert!(thinned.layer(Layer::Flowline).len() < 251);
    server.clear_requests();
    plot_hydro(&ctx, &cached(13293970, &file), None).unwrap();
    plot_hydro(&ctx, &other, None).unwrap();
    assert_eq!(server.requests().len(), 0, "both entries are kept");
}

/// A SQLite file of another program, made with the system's rules (no
/// application id of ours).
fn other_programs_sqlite(path: &Path) {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.execute_batch("CREATE TABLE notes (t TEXT); INSERT INTO notes VALUES ('mine');")
        .unwrap();
}

/// A file that holds our application id in a newer format than this library's.
fn newer_hydroplot_cache(path: &Path) {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.execute_batch(
        "CREATE TABLE plot_data_v9 (k TEXT); PRAGMA application_id = 1213809744; PRAGMA user_version = 9;",
    )
    .unwrap();
}

#[test]
fn files_that_are_not_ours_are_left_byte_for_byte_untouched() {
    let server = MockServer::start();
    let ctx = context(&server);
    let dir = tmpdir("foreign");
    let sample = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/yahara_sample.gpkg"
    ))
    .unwrap();
    let rds = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03 an R .rds file".to_vec();
    let files: Vec<(&str, Vec<u8>)> = vec![
        (
            "notes.txt",
            b"a user's notes, not a database at all\n".to_vec(),
        ),
        ("nhdplus.rds", rds),
        ("empty.cache", Vec::new()),
        (
            "sqlite-header-only.cache",
            b"SQLite format 3\0\x10\x00".to_vec(),
        ),
        ("sample.gpkg", sample),
    ];
    for (name, bytes) in &files {
        std::fs::write(dir.join(name), bytes).unwrap();
    }
    other_programs_sqlite(&dir.join("other.sqlite"));
    newer_hydroplot_cache(&dir.join("newer.cache"));
    for name in files
        .iter()
        .map(|f| f.0)
        .chain(["other.sqlite", "newer.cache"])
    {
        let file = dir.join(name);
        let before = std::fs::read(&file).unwrap();
        server.clear_requests();
        let d = plot_hydro(&ctx, &cached(13293970, &file), None)
            .unwrap()
            .data;
        assert_eq!(d.layer(Layer::Flowline).len(), 251, "{name}");
        assert!(
            d.warnings.iter().any(|w| w.contains(name)
                && w.contains("left untouched")
                && w.contains("not caching")),
            "{name}: {:?}",
            d.warnings
        );
        assert!(!server.requests().is_empty());
        assert_eq!(std::fs::read(&file).unwrap(), before, "{name} changed");
    }
    // Nothing else appeared beside them (no temporary left behind).
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), files.len() + 2);
}

#[test]
fn our_own_damaged_or_older_cache_is_replaced_with_a_warning() {
    let server = MockServer::start();
    let ctx = context(&server);
    let dir = tmpdir("ours");
    let good = dir.join("good.cache");
    plot_hydro(&ctx, &cached(13293970, &good), None).unwrap();
    let bytes = std::fs::read(&good).unwrap();
    assert_eq!(&bytes[68..72], b"HYDP", "our application id");
    let truncated = dir.join("truncated.cache");
    std::fs::write(&truncated, &bytes[..bytes.len() / 2]).unwrap();
    let older = dir.join("older.cache");
    let mut old_format = bytes.clone();
    old_format[60..64].copy_from_slice(&0u32.to_be_bytes());
    std::fs::write(&older, &old_format).unwrap();
    for (file, why) in [(&truncated, "cut short"), (&older, "older format")] {
        let d = plot_hydro(&ctx, &cached(13293970, file), None)
            .unwrap()
            .data;
        assert_eq!(d.layer(Layer::Flowline).len(), 251);
        assert!(
            d.warnings
                .iter()
                .any(|w| w.contains(why) && w.contains("replacing")),
            "{why}: {:?}",
            d.warnings
        );
        server.clear_requests();
        let again = plot_hydro(&ctx, &cached(13293970, file), None)
            .unwrap()
            .data;
        assert_eq!(
            server.requests().len(),
            0,
            "{why}: the replacement works as a cache"
        );
        same(&d, &again);
    }
}

#[test]
fn a_cache_or_output_on_the_input_is_refused_before_anything_happens() {
    let server = MockServer::start();
    let ctx = context(&server);
    let dir = tmpdir("same-file");
    let input = dir.join("national.gpkg");
    std::fs::copy(
        concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/yahara_sample.gpkg"),
        &input,
    )
    .unwrap();
    let before = std::fs::read(&input).unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(&input, dir.join("link.gpkg")).unwrap();
    let spelled = dir.join(".").join("national.gpkg");
    let base = || PlotRequest {
        outlets: vec![Outlet::Comid(13293970)],
        hydro_data: Some(input.clone()),
        actually_plot: false,
        ..Default::default()
    };
    let cases = [
        (
            "cache_data",
            PlotRequest {
                cache: CacheSetting::File(spelled.clone()),
                ..base()
            },
        ),
        (
            "gpkg",
            PlotRequest {
                gpkg: Some(spelled.clone()),
                ..base()
            },
        ),
        (
            "gpkg",
            PlotRequest {
                gpkg: Some(dir.join("link.gpkg")),
                ..base()
            },
        ),
        (
            "cache_data",
            PlotRequest {
                hydro_data: None,
                gpkg: Some(dir.join("out.gpkg")),
                cache: CacheSetting::File(dir.join("out.gpkg")),
                ..base()
            },
        ),
    ];
    for (role, req) in cases {
        let Err(e) = plot_hydro(&ctx, &req, None) else {
            panic!("{role}: accepted")
        };
        assert!(
            matches!(&e, hydroplot::Error::InvalidArgument(m) if m.contains(role) && m.contains("same file")),
            "{e}"
        );
    }
    assert!(server.requests().is_empty(), "refused before any request");
    assert_eq!(
        std::fs::read(&input).unwrap(),
        before,
        "the input is intact"
    );
    assert!(!dir.join("out.gpkg").exists());
}

#[test]
fn an_unwritable_location_is_a_warning_and_no_caching() {
    let server = MockServer::start();
    let ctx = context(&server);
    let file = PathBuf::from("/nonexistent-dir/hydroplot/plot.cache");
    let d = plot_hydro(&ctx, &cached(13293970, &file), None)
        .unwrap()
        .data;
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
            s.spawn(move || plot_hydro(ctx, &cached(o, file), None).unwrap().data);
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
                    cache.put(&format!("key{i}"), &[i as u8; 3]).unwrap();
                });
            }
        });
        let cache = PlotCache::open(&ctx, &file, &mut Vec::new()).unwrap();
        for i in 0..8 {
            let hit = cache
                .get(&format!("key{i}"))
                .unwrap_or_else(|| panic!("round {round}: key{i} lost"));
            assert_eq!(hit, [i as u8; 3]);
        }
    }
}
