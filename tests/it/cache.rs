//! The plot-data cache (`cache_data`): keyed, atomic, safe to share.

use crate::support;

use hydroplot::plot::{plot_hydro, CacheSetting, Layer, Outlet, PlotData, PlotRequest};
use hydroplot_mock::{context, MockServer};
use std::path::{Path, PathBuf};

fn tmpdir(name: &str) -> PathBuf {
    crate::scratch::temp_dir(&format!("cache-{name}"))
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
    for (file, why) in [(&truncated, "damaged"), (&older, "older format")] {
        let d = plot_hydro(&ctx, &cached(13293970, file), None)
            .unwrap()
            .data;
        assert_eq!(d.layer(Layer::Flowline).len(), 251);
        assert!(
            d.warnings.iter().any(|w| w.contains(why)
                && w.contains("replacing")
                && w.contains(&*file.to_string_lossy())),
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
    let ctx = hydroplot::Context::new(support::config()).unwrap();
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
                    let mut cache =
                        PlotCache::open(ctx, file, &mut warnings).expect("the cache opens");
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

/// `a` and `b` hold the same data, compared independently of the entry
/// format: every layer's schema (names and types), then row by row the id,
/// every property's value, the geometry type and every coordinate to 1e-9.
fn same_feature_by_feature(a: &PlotData, b: &PlotData) {
    use hydroplot::table::Table;
    let close = |x: f64, y: f64| (x - y).abs() <= 1e-9;
    for l in Layer::ALL {
        let (s, t): (&Table, &Table) = (a.layer(l), b.layer(l));
        let name = l.name();
        assert_eq!(s.len(), t.len(), "{name}: rows");
        assert_eq!(s.schema(), t.schema(), "{name}: columns");
        for row in 0..s.len() {
            assert_eq!(s.id(row), t.id(row), "{name} row {row}: id");
            for (i, field) in s.schema().fields().iter().enumerate() {
                let (x, y) = (s.column_at(i).unwrap(), t.column_at(i).unwrap());
                assert_eq!(
                    x.value(row),
                    y.value(row),
                    "{name} row {row}: {}",
                    field.name()
                );
            }
            let (g, h) = (s.geometries(), t.geometries());
            assert_eq!(g.kinds[row], h.kinds[row], "{name} row {row}: type");
            let (p, q) = (g.row_xy(row), h.row_xy(row));
            assert_eq!(p.len(), q.len(), "{name} row {row}: vertices");
            assert!(
                p.iter().zip(q).all(|(u, v)| close(*u, *v)),
                "{name} row {row}: coordinates"
            );
            // The ring and part structure too.
            assert_eq!(s.geometry(row), t.geometry(row), "{name} row {row}");
        }
    }
    assert_eq!(a.bbox, b.bbox);
    assert_eq!(a.warnings, b.warnings);
    assert_eq!(a.flowline_comids, b.flowline_comids);
}

#[test]
fn an_entry_reads_back_feature_by_feature_in_local_and_download_mode() {
    let server = MockServer::start();
    let ctx = context(&server);
    let dir = tmpdir("round-trip");
    let sample = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/yahara_sample.gpkg"
    ));
    let local = PlotRequest {
        hydro_data: Some(sample),
        ..cached(13293970, &dir.join("local.cache"))
    };
    let download = cached(13293970, &dir.join("download.cache"));
    for (mode, req) in [("local", &local), ("download", &download)] {
        let built = plot_hydro(&ctx, req, None).unwrap().data;
        server.clear_requests();
        let hit = plot_hydro(&ctx, req, None).unwrap().data;
        assert!(server.requests().is_empty(), "{mode}: a hit");
        if mode == "local" {
            support::assert_yahara_counts(&hit);
        } else {
            assert_eq!(hit.layer(Layer::Flowline).len(), 251);
            assert_eq!(hit.layer(Layer::Catchment).len(), 250);
        }
        same_feature_by_feature(&built, &hit);
    }
}

#[test]
fn a_damaged_layer_is_a_miss_and_is_written_again() {
    let server = MockServer::start();
    let ctx = context(&server);
    let file = tmpdir("damaged-part").join("plot.cache");
    let built = plot_hydro(&ctx, &cached(13293970, &file), None)
        .unwrap()
        .data;
    let conn = rusqlite::Connection::open(&file).unwrap();
    let damage = [
        "UPDATE plot_data_part SET body = substr(body, 1, length(body) / 2) WHERE part = 'flowline'",
        "UPDATE plot_data_part SET body = zeroblob(length(body)) WHERE part = 'catchment'",
        "UPDATE plot_data_part SET body = x'' WHERE part = 'basin'",
        "DELETE FROM plot_data_part WHERE part = 'outlets'",
    ];
    for sql in damage {
        conn.execute(sql, []).unwrap();
        server.clear_requests();
        let d = plot_hydro(&ctx, &cached(13293970, &file), None)
            .unwrap()
            .data;
        assert!(!server.requests().is_empty(), "{sql}: a miss");
        same_feature_by_feature(&built, &d);
        server.clear_requests();
        plot_hydro(&ctx, &cached(13293970, &file), None).unwrap();
        assert!(server.requests().is_empty(), "{sql}: written again");
    }
}

#[test]
fn a_layer_blob_damaged_anywhere_is_an_error_never_a_panic() {
    use hydroplot::plot::cached::{decode_layer, encode_layer};
    let ctx = hydroplot::Context::new(support::config()).unwrap();
    let req = PlotRequest {
        outlets: vec![Outlet::Comid(13293970)],
        hydro_data: Some(
            concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/yahara_sample.gpkg").into(),
        ),
        actually_plot: false,
        cache: CacheSetting::Disabled,
        ..Default::default()
    };
    let data = plot_hydro(&ctx, &req, None).unwrap().data;
    let blob = encode_layer(data.layer(Layer::Gage)).unwrap();
    assert!(decode_layer(blob.clone()).is_ok());
    for cut in [0, 1, 4, blob.len() / 2, blob.len() - 1] {
        assert!(decode_layer(blob[..cut].to_vec()).is_err(), "cut at {cut}");
    }
    for at in (0..blob.len()).step_by(7) {
        let mut bad = blob.clone();
        bad[at] ^= 0x5a;
        assert!(decode_layer(bad).is_err(), "byte {at} changed");
    }
    // Damage that passes the CRC (a stream changed and its CRC recomputed)
    // reaches the Arrow reader: an error or the data, never a panic. Each
    // damaged stream's CRC goes on from the CRC of the bytes before the
    // damage, which are the same for all of them.
    let stream = blob.len() - 4;
    let table = crc32_table();
    let mut prefix = Vec::with_capacity(stream);
    let mut crc = !0u32;
    for &b in &blob[..stream] {
        prefix.push(crc);
        crc = crc32_update(&table, crc, &[b]);
    }
    assert_eq!((!crc).to_le_bytes(), blob[stream..], "the layer's own CRC");
    let mut errors = 0;
    for at in (0..stream).step_by(3) {
        let mut bad = blob[..stream].to_vec();
        bad[at] ^= 0xff;
        let crc = !crc32_update(&table, prefix[at], &bad[at..]);
        bad.extend_from_slice(&crc.to_le_bytes());
        errors += decode_layer(bad).is_err() as usize;
    }
    assert!(errors > 0);
}

/// CRC-32 (IEEE), written here from its polynomial (the checksum of a cached
/// layer): the remainder of each byte value, bit by bit.
fn crc32_table() -> [u32; 256] {
    let mut table = [0u32; 256];
    for (byte, entry) in table.iter_mut().enumerate() {
        let mut crc = byte as u32;
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
        *entry = crc;
    }
    table
}

/// `crc` (the register before `bytes`, not inverted) carried over `bytes`.
fn crc32_update(table: &[u32; 256], mut crc: u32, bytes: &[u8]) -> u32 {
    for &b in bytes {
        crc = table[((crc ^ u32::from(b)) & 0xff) as usize] ^ (crc >> 8);
    }
    crc
}

/// The Yahara request of `file`, built once with the mock, so that a hit
/// (no request) shows the cache works.
fn built_cache(server: &MockServer, ctx: &hydroplot::Context, file: &Path) -> PlotData {
    let d = plot_hydro(ctx, &cached(13293970, file), None).unwrap().data;
    assert!(!server.requests().is_empty());
    assert_eq!(d.layer(Layer::Flowline).len(), 251);
    d
}

/// `path` with `suffix` appended (`plot.cache-journal`).
fn beside(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// Issue 22, item 6: a cache of ours whose header is intact but whose pages
/// are damaged. The plot succeeds, a warning names the file, and the file
/// is replaced whichever step SQLite finds the damage at (reading the
/// entry, or writing the new one), so the next plot is a hit.
#[test]
fn a_damaged_cache_of_ours_is_replaced_and_serves_the_next_plot() {
    let server = MockServer::start();
    let ctx = context(&server);
    let dir = tmpdir("damaged-pages");
    let pristine = dir.join("pristine.cache");
    let built = built_cache(&server, &ctx, &pristine);
    let bytes = std::fs::read(&pristine).unwrap();
    let page = 4096;
    assert_eq!(u16::from_be_bytes([bytes[16], bytes[17]]) as usize, page);
    // Garbage over whole pages at several places past the header page.
    for at in [2, 4, 8] {
        let file = dir.join(format!("damaged-{at}.cache"));
        let mut damaged = bytes.clone();
        let start = (bytes.len() / page * at / 10).max(1) * page;
        damaged[start..start + 3 * page].fill(0xa5);
        std::fs::write(&file, &damaged).unwrap();
        server.clear_requests();
        let d = plot_hydro(&ctx, &cached(13293970, &file), None)
            .unwrap()
            .data;
        same(&built, &d);
        let name = file.to_string_lossy();
        assert!(
            d.warnings
                .iter()
                .any(|w| w.contains(&*name) && w.contains("damaged") && w.contains("replacing")),
            "page {start}: {:?}",
            d.warnings
        );
        assert!(!d
            .warnings
            .iter()
            .any(|w| w.contains("malformed") && !w.contains("replacing")));
        server.clear_requests();
        let again = plot_hydro(&ctx, &cached(13293970, &file), None)
            .unwrap()
            .data;
        assert_eq!(server.requests().len(), 0, "page {start}: a hit");
        assert!(again.warnings.is_empty(), "{:?}", again.warnings);
        same(&built, &again);
        // The new file is ours and whole, by plain SQL.
        let conn = rusqlite::Connection::open(&file).unwrap();
        let check: String = conn
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .unwrap();
        assert_eq!(check, "ok");
    }
}

/// The state a writer leaves when it dies while committing: its journal
/// synced (SQLite spilled pages of a large transaction into the file) and
/// the first page written with the new page count before the pages it
/// counts. Made by copying the file and journal of a transaction held
/// open here, then raising the header's page count past the file's end.
fn crashed_writer(from: &Path, to: &Path) {
    let conn = rusqlite::Connection::open(from).unwrap();
    conn.execute_batch("PRAGMA cache_size = 8; BEGIN IMMEDIATE;")
        .unwrap();
    conn.execute(
        "INSERT INTO plot_data (key, created, body) VALUES ('dying', 0, zeroblob(4000000))",
        [],
    )
    .unwrap();
    let journal = std::fs::read(beside(from, "-journal")).expect("a journal");
    let mut file = std::fs::read(from).unwrap();
    conn.execute_batch("ROLLBACK").unwrap();
    let page = u16::from_be_bytes([file[16], file[17]]) as usize;
    let pages = (file.len() / page + 10) as u32;
    file[28..32].copy_from_slice(&pages.to_be_bytes());
    std::fs::write(to, file).unwrap();
    std::fs::write(beside(to, "-journal"), journal).unwrap();
}

/// Issue 22, item 6 (hot journals): a file that counts more pages than it
/// holds beside a crashed writer's journal is not "cut short": SQLite rolls
/// the journal back and every entry is still there, in the same file.
#[cfg(unix)]
#[test]
fn a_crashed_writers_journal_is_rolled_back_not_replaced() {
    use std::os::unix::fs::MetadataExt;
    let server = MockServer::start();
    let ctx = context(&server);
    let dir = tmpdir("hot-journal");
    let live = dir.join("live.cache");
    let built = built_cache(&server, &ctx, &live);
    let file = dir.join("crashed.cache");
    crashed_writer(&live, &file);
    let inode = std::fs::metadata(&file).unwrap().ino();
    server.clear_requests();
    let d = plot_hydro(&ctx, &cached(13293970, &file), None)
        .unwrap()
        .data;
    assert_eq!(server.requests().len(), 0, "the entry survived: a hit");
    assert!(d.warnings.is_empty(), "{:?}", d.warnings);
    same(&built, &d);
    assert_eq!(
        std::fs::metadata(&file).unwrap().ino(),
        inode,
        "not replaced"
    );
    assert!(!beside(&file, "-journal").exists(), "rolled back");
}

/// A replaced file's stale journal goes with it: left, SQLite would play it
/// back into the new file. (An older format with a crashed writer's
/// journal: replaced at once, before SQLite reads it.)
#[test]
fn replacing_our_cache_removes_its_stale_journal() {
    let server = MockServer::start();
    let ctx = context(&server);
    let dir = tmpdir("stale-journal");
    let live = dir.join("live.cache");
    built_cache(&server, &ctx, &live);
    rusqlite::Connection::open(&live)
        .unwrap()
        .execute_batch("PRAGMA user_version = 1")
        .unwrap();
    let file = dir.join("older.cache");
    crashed_writer(&live, &file);
    let d = plot_hydro(&ctx, &cached(13293970, &file), None)
        .unwrap()
        .data;
    let replacing: Vec<_> = d
        .warnings
        .iter()
        .filter(|w| w.contains("replacing"))
        .collect();
    assert_eq!(replacing.len(), 1, "{:?}", d.warnings);
    assert!(replacing[0].contains("older format"), "{replacing:?}");
    assert!(!beside(&file, "-journal").exists());
    server.clear_requests();
    let again = plot_hydro(&ctx, &cached(13293970, &file), None)
        .unwrap()
        .data;
    assert_eq!(server.requests().len(), 0, "the new file holds the entry");
    assert!(again.warnings.is_empty(), "{:?}", again.warnings);
}

/// The environment variable that turns this test binary into the second
/// writer of `a_second_process_committing_large_transactions_loses_nothing`.
const SECOND_WRITER: &str = "HYDROPLOT_TEST_SECOND_WRITER";
/// How many transactions the second writer commits, each adding an entry
/// of `WRITER_BYTES` (the file grows by as much each time), and how many
/// opens the test makes, one as each commit starts.
const WRITER_COMMITS: usize = 100;
const WRITER_BYTES: usize = 2 << 20;

/// The bytes of the second writer's entry `i`.
fn writer_entry(i: usize) -> Vec<u8> {
    let mut body = vec![(i % 251) as u8; WRITER_BYTES];
    body[..8].copy_from_slice(&(i as u64).to_le_bytes());
    body
}

/// The second writer, run as a child process of the test below (and a
/// no-op as a test of its own): another program's plain SQLite writes into
/// our cache, with a page cache large enough that a whole transaction is
/// written at its commit, first page (and its new page count) first, and
/// without syncs, so that the file is short of its header's count for as
/// long as the writing takes. Each transaction starts on a line of its
/// input and prints `committing N` (the first behind the test harness's
/// own words on that line) as its commit begins; it holds no lock while it
/// waits for the next line.
#[test]
fn second_writer_process() {
    use std::io::{BufRead, Write};
    let Some(file) = std::env::var_os(SECOND_WRITER).map(PathBuf::from) else {
        return;
    };
    let conn = rusqlite::Connection::open(&file).unwrap();
    conn.busy_timeout(std::time::Duration::from_secs(60))
        .unwrap();
    conn.execute_batch("PRAGMA cache_size = -65536; PRAGMA synchronous = OFF;")
        .unwrap();
    let mut out = std::io::stdout().lock();
    let mut go = std::io::stdin().lock().lines();
    for i in 0..WRITER_COMMITS {
        go.next().expect("a go line").unwrap();
        conn.execute_batch("BEGIN IMMEDIATE").unwrap();
        conn.execute(
            "INSERT INTO plot_data (key, created, body) VALUES (?1, 0, ?2)",
            rusqlite::params![format!("writer{i}"), writer_entry(i)],
        )
        .unwrap();
        writeln!(out, "committing {i}").unwrap();
        out.flush().unwrap();
        conn.execute_batch("COMMIT").unwrap();
    }
}

/// Issue 22, item 6 (the race): while another process commits large,
/// file-growing transactions into the cache, 100 opens, reads and writes
/// here never find it "cut short" or damaged: the file is never replaced
/// (same inode), no warning is given, and every entry of both processes is
/// there at the end. Each open starts as one of the writer's commits does
/// (told by the writer's output), and each transaction of the writer
/// starts when told: paced by events, not time.
#[cfg(unix)]
#[test]
fn a_second_process_committing_large_transactions_loses_nothing() {
    use hydroplot::cache::PlotCache;
    use std::io::{BufRead, Write};
    use std::os::unix::fs::MetadataExt;
    let ctx = hydroplot::Context::new(support::config()).unwrap();
    let dir = tmpdir("second-writer");
    let file = dir.join("plot.cache");
    PlotCache::open(&ctx, &file, &mut Vec::new())
        .unwrap()
        .put("first", b"1")
        .unwrap();
    let inode = std::fs::metadata(&file).unwrap().ino();
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "cache::second_writer_process",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(SECOND_WRITER, &file)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut go = child.stdin.take().unwrap();
    let mut committing = std::io::BufReader::new(child.stdout.take().unwrap())
        .lines()
        .map(|l| l.unwrap())
        .filter(|l| l.contains("committing "));
    for i in 0..WRITER_COMMITS {
        writeln!(go, "go").unwrap();
        go.flush().unwrap();
        committing.next().expect("the writer goes on");
        let mut warnings = Vec::new();
        let mut cache = PlotCache::open(&ctx, &file, &mut warnings).expect("opens");
        assert!(warnings.is_empty(), "open {i}: {warnings:?}");
        assert_eq!(cache.get("first").as_deref(), Some(&b"1"[..]), "open {i}");
        if i > 0 {
            let before = format!("here{}", i - 1);
            assert!(cache.get(&before).is_some(), "open {i}: {before} lost");
        }
        cache.put(&format!("here{i}"), &[i as u8; 100]).unwrap();
        assert!(cache.take_warnings().is_empty(), "open {i}");
    }
    drop(go);
    assert!(child.wait().unwrap().success(), "the writer failed");
    assert_eq!(
        std::fs::metadata(&file).unwrap().ino(),
        inode,
        "never replaced"
    );
    let conn = rusqlite::Connection::open(&file).unwrap();
    for i in 0..WRITER_COMMITS {
        let body: Vec<u8> = conn
            .query_row(
                "SELECT body FROM plot_data WHERE key = ?1",
                [format!("writer{i}")],
                |r| r.get(0),
            )
            .unwrap_or_else(|e| panic!("writer{i} lost: {e}"));
        assert!(body == writer_entry(i), "writer{i} changed");
    }
    let here: i64 = conn
        .query_row(
            "SELECT count(*) FROM plot_data WHERE key LIKE 'here%'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(here, WRITER_COMMITS as i64);
    drop(conn);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Two openers find the same damage: the first replaces the file, the
/// second (still on the damaged one) sees that the path names another file
/// by now and moves to it, never replacing the first one's new cache, whose
/// entries stay; and its own write lands there too.
#[cfg(unix)]
#[test]
fn a_file_another_opener_replaced_first_is_not_replaced_again() {
    use hydroplot::cache::PlotCache;
    use std::os::unix::fs::MetadataExt;
    let ctx = hydroplot::Context::new(support::config()).unwrap();
    let file = tmpdir("replaced-first").join("plot.cache");
    let mut first = PlotCache::open(&ctx, &file, &mut Vec::new()).unwrap();
    first.put("old", &[7u8; 100_000]).unwrap();
    // Garbage over pages past the first, and a new change counter so that
    // no opener trusts the pages it has cached.
    let mut bytes = std::fs::read(&file).unwrap();
    bytes[24..28].copy_from_slice(&0xdead_beef_u32.to_be_bytes());
    bytes[2 * 4096..5 * 4096].fill(0xa5);
    std::fs::write(&file, &bytes).unwrap();
    let mut second = PlotCache::open(&ctx, &file, &mut Vec::new()).unwrap();
    assert_eq!(second.read(|c| c.get("old")), None, "damage is a miss");
    let replaced = second.take_warnings();
    assert!(
        replaced
            .iter()
            .any(|w| w.contains("damaged") && w.contains("replacing")),
        "{replaced:?}"
    );
    let inode = std::fs::metadata(&file).unwrap().ino();
    second.put("second", b"2").unwrap();
    assert_eq!(first.read(|c| c.get("old")), None, "damage is a miss");
    first.put("first", b"1").unwrap();
    assert_eq!(
        first.take_warnings(),
        Vec::<String>::new(),
        "no replacement"
    );
    assert_eq!(
        std::fs::metadata(&file).unwrap().ino(),
        inode,
        "replaced once"
    );
    let conn = rusqlite::Connection::open(&file).unwrap();
    let keys: Vec<String> = conn
        .prepare("SELECT key FROM plot_data ORDER BY key")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(keys, ["first", "second"]);
}
