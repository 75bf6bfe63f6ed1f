//! The `hydroplot` command line against the loopback mock: `--version`, the
//! spec's trace map (`trace --out`), georeferenced maps (`--world-file`), and
//! `index` on a copy of the Yahara sample (the index kept apart, the file
//! never written) and on files it must refuse.

use crate::support;

use hydroplot::render::{Map, TileCacheMode};
use hydroplot::services::flowtrace::raindrop_trace;
use hydroplot_mock::{self as mock, MockServer};
use std::path::{Path, PathBuf};
use std::process::Output;
use support::georef::*;

/// The recorded point (lon, lat), traced up: the Yahara near Stoughton.
const YAHARA: (f64, f64) = (-89.2158, 42.9561);
const SAMPLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/yahara_sample.gpkg");

fn temp_dir(name: &str) -> PathBuf {
    crate::scratch::temp_dir(&format!("cli-{name}"))
}

/// `hydroplot ARGS` with the services and tiles of `server` (if any), by
/// environment for the tiles and by `--option` for the index, as users do.
fn hydroplot(server: Option<&MockServer>, args: &[&str]) -> Output {
    let mut cmd = support::cli_command();
    cmd.args(args);
    if let Some(s) = server {
        cmd.env("HYDROPLOT_TILE_URL", s.tile_url())
            .args(["--option", &format!("index_url={}", s.index_url())]);
    }
    cmd.output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn version() {
    let out = hydroplot(None, &["--version"]);
    assert!(out.status.success());
    assert_eq!(
        text(&out.stdout),
        format!("hydroplot {}\n", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn trace_out_draws_the_specs_trace_map() {
    let server = MockServer::start();
    let dir = temp_dir("trace-map");
    let png_path = dir.join("trace.png");
    let point = format!("{},{}", YAHARA.0, YAHARA.1);
    let out = hydroplot(
        Some(&server),
        &[
            "trace",
            "--point",
            &point,
            "--direction",
            "up",
            "--out",
            png_path.to_str().unwrap(),
            "--no-cache",
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("comid 13297178"));
    let bytes = std::fs::read(&png_path).unwrap();
    let (w, h, px) = rgba(&bytes);
    assert_eq!((w, h), (800, 800));
    let at = |lon: f64, lat: f64| -> [u8; 4] {
        // The recorded trace's box [-89.222294, 42.956, -89.212523, 42.969406]
        // plus 0.005 degrees, fitted with a 4 % margin; it is taller than wide.
        let (x0, y0) = mercator(-89.222294 - 0.005, 42.956 - 0.005);
        let (x1, y1) = mercator(-89.212523 + 0.005, 42.969406 + 0.005);
        let res = (y1 - y0) / (800.0 * 0.92);
        let (x, y) = mercator(lon, lat);
        let col = (400.0 + (x - (x0 + x1) / 2.0) / res) as usize;
        let row = (400.0 - (y - (y0 + y1) / 2.0) / res) as usize;
        let i = (row * 800 + col) * 4;
        [px[i], px[i + 1], px[i + 2], px[i + 3]]
    };
    // The point (pch 19, black), a flowline vertex (red), a raindrop-path vertex (black).
    assert_eq!(at(YAHARA.0, YAHARA.1), [0, 0, 0, 255]);
    assert_eq!(at(-89.217264, 42.969177), [255, 0, 0, 255]);
    assert_eq!(at(-89.214561, 42.956497), [0, 0, 0, 255]);
    // The basemap came from the mock's tiles, with caching off.
    assert!(server
        .requests()
        .iter()
        .any(|r| r.path.starts_with("/tiles/")));

    // The same map as the spec's example composes it from the map primitives
    // (what examples-c/raindrop.c does through the C API).
    let ctx = mock::context(&server);
    let t = raindrop_trace(&ctx, YAHARA.0, YAHARA.1, None, Some("up")).unwrap();
    let [a, b, c, d] = t.bbox();
    let m = 0.005;
    let mut map = Map::new(
        &ctx,
        [a - m, b - m, c + m, d + m],
        "EPSG:4326",
        (800, 800),
        "Esri.NatGeoWorldMap",
        None,
        &TileCacheMode::Off,
        &mut Vec::new(),
    )
    .unwrap();
    t.draw(&mut map, "red", "black", 2.0).unwrap();
    map.add_point(YAHARA.0, YAHARA.1, "EPSG:4326", 19, "black", 1.0)
        .unwrap();
    assert!(
        map.png().unwrap() == bytes,
        "the CLI map differs from the example's"
    );
    // And the same as the C API's trace map (what the C example now calls).
    assert!(c_trace_map(&server) == bytes, "the C API's map differs");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The PNG of `hydroplot_trace_map` for the recorded trace, with defaults
/// (800 x 800, the default basemap) and no tile cache.
fn c_trace_map(server: &MockServer) -> Vec<u8> {
    use hydroplot::ffi::buffer::*;
    use hydroplot::ffi::context::*;
    use hydroplot::ffi::hydroplot_status::HYDROPLOT_OK;
    use hydroplot::ffi::map::*;
    use hydroplot::ffi::trace::*;
    use std::ffi::CString;
    let c = |s: &str| CString::new(s).unwrap();
    let mut ctx = std::ptr::null_mut();
    assert_eq!(hydroplot_context_new(&mut ctx), HYDROPLOT_OK);
    for (k, v) in [
        ("index_url", server.index_url()),
        ("tile_url", server.tile_url()),
        ("tile_cache", "off".into()),
    ] {
        assert_eq!(
            hydroplot_context_set_option(ctx, c(k).as_ptr(), c(&v).as_ptr()),
            HYDROPLOT_OK
        );
    }
    let null = std::ptr::null();
    let (mut t, mut map, mut buf) = (
        std::ptr::null_mut(),
        std::ptr::null_mut(),
        std::ptr::null_mut(),
    );
    let up = c("up");
    assert_eq!(
        hydroplot_raindrop_trace(ctx, YAHARA.0, YAHARA.1, null, up.as_ptr(), &mut t),
        HYDROPLOT_OK
    );
    assert_eq!(
        hydroplot_trace_map(ctx, t, YAHARA.0, YAHARA.1, null, 0, 0, null, &mut map),
        HYDROPLOT_OK
    );
    assert_eq!(hydroplot_map_png(map, &mut buf), HYDROPLOT_OK);
    // SAFETY: the buffer holds `len` bytes until it is freed below.
    let png = unsafe {
        std::slice::from_raw_parts(hydroplot_buffer_data(buf), hydroplot_buffer_len(buf))
    }
    .to_vec();
    hydroplot_buffer_free(buf);
    hydroplot_map_free(map);
    hydroplot_trace_free(t);
    hydroplot_context_free(ctx);
    png
}

#[test]
fn trace_out_refuses_bad_input_before_any_request() {
    let server = MockServer::start();
    let dir = temp_dir("trace-bad");
    let png_path = dir.join("trace.png");
    let png = png_path.to_str().unwrap();
    let point = format!("{},{}", YAHARA.0, YAHARA.1);
    for (extra, needle) in [
        (&["--basemap", "Stamen.Toner"][..], "unknown basemap"),
        (&["--size", "8x8"][..], "between 16 and 16384"),
        (&["--size", "wide"][..], "--size takes WxH"),
    ] {
        let mut args = vec!["trace", "--point", &point, "--out", png];
        args.extend_from_slice(extra);
        let out = hydroplot(Some(&server), &args);
        assert!(!out.status.success(), "{extra:?}");
        assert!(text(&out.stderr).contains(needle), "{}", text(&out.stderr));
    }
    assert!(server.requests().is_empty());
    assert!(!png_path.exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A plot of the sample's basin of 13293970 from `copy`, no map, no cache,
/// with the context option `option`; it succeeded.
fn plot_of_the_sample(copy: &Path, option: &str) -> Output {
    let file = copy.to_str().unwrap();
    let args = [
        "plot",
        "--hydro-data",
        file,
        "--comid",
        "13293970",
        "--no-plot",
        "--no-cache",
        "--option",
        option,
    ];
    let plot = hydroplot(None, &args);
    assert!(plot.status.success(), "{}", text(&plot.stderr));
    plot
}

/// A folder of the test's own named after `name`, a copy of the sample in
/// it, and the copy's bytes.
fn sample_in_a_folder(name: &str) -> (PathBuf, PathBuf, Vec<u8>) {
    let dir = temp_dir(name);
    let copy = dir.join("yahara.gpkg");
    std::fs::copy(SAMPLE, &copy).unwrap();
    let bytes = std::fs::read(&copy).unwrap();
    (dir, copy, bytes)
}

#[test]
fn an_index_directory_that_cannot_be_made_is_one_warning_and_no_index() {
    let (dir, copy, bytes) = sample_in_a_folder("unwritable-index");
    std::fs::write(dir.join("a-file"), "").unwrap();
    let option = format!("index_dir={}", dir.join("a-file").join("indexes").display());
    let plot = plot_of_the_sample(&copy, &option);
    let stderr = text(&plot.stderr);
    let warned: Vec<&str> = (stderr.lines())
        .filter(|l| l.starts_with("warning:") && l.contains("was not stored"))
        .collect();
    assert_eq!(warned.len(), 1, "{stderr}");
    assert!(text(&plot.stdout).contains("flowline"));
    assert_eq!(std::fs::read(&copy).unwrap(), bytes);
    let mut left: Vec<_> = (std::fs::read_dir(&dir).unwrap())
        .map(|e| e.unwrap().file_name())
        .collect();
    left.sort();
    assert_eq!(left, ["a-file", "yahara.gpkg"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn index_stores_the_index_apart_and_never_writes_the_file() {
    let (dir, copy, bytes) = sample_in_a_folder("index");
    let file = copy.to_str().unwrap();
    let indexes = dir.join("indexes");
    let option = format!("index_dir={}", indexes.display());
    let first = hydroplot(None, &["index", "--option", &option, file]);
    assert!(first.status.success(), "{}", text(&first.stderr));
    let said = text(&first.stdout);
    assert!(
        said.contains("indexed") && said.contains(".hydroplot-index"),
        "{said}"
    );
    // Too small a network for a basin part, said so.
    assert!(said.contains("no basin parts"), "{said}");
    let stored: Vec<_> = std::fs::read_dir(&indexes).unwrap().collect();
    assert_eq!(stored.len(), 1);
    let second = hydroplot(None, &["index", file, "--option", &option]);
    assert!(second.status.success(), "{}", text(&second.stderr));
    assert!(text(&second.stdout).contains("nothing changed"));
    assert!(
        support::index_names(&copy).is_empty(),
        "no index in the file"
    );
    // The indexed file still plots the published upstream counts.
    let plot = plot_of_the_sample(&copy, &option);
    let stdout = text(&plot.stdout);
    let count = |layer: &str| {
        stdout
            .lines()
            .find(|l| l.split_whitespace().next() == Some(layer))
            .and_then(|l| l.split_whitespace().nth(1))
            .map(|n| n.parse::<usize>().unwrap())
    };
    assert_eq!(count("flowline"), Some(251), "{stdout}");
    assert_eq!(count("catchment"), Some(250), "{stdout}");
    // Beside the file on request; --status lists both as current.
    let beside = hydroplot(None, &["index", "--beside", file, "--option", &option]);
    assert!(beside.status.success(), "{}", text(&beside.stderr));
    assert!(dir.join("yahara.gpkg.hydroplot-index").exists());
    let status = hydroplot(None, &["index", "--status", file, "--option", &option]);
    let said = text(&status.stdout);
    assert_eq!(said.matches("(current)").count(), 2, "{said}");
    // The sample is smaller than a part of the default size.
    assert_eq!(said.matches("; no basin parts: ").count(), 2, "{said}");
    assert_eq!(
        std::fs::read(&copy).unwrap(),
        bytes,
        "the file never written"
    );
    // --remove deletes both, and then finds nothing.
    let removed = hydroplot(None, &["index", "--remove", file, "--option", &option]);
    assert!(removed.status.success(), "{}", text(&removed.stderr));
    assert_eq!(text(&removed.stdout).matches("deleted ").count(), 2);
    assert!(!dir.join("yahara.gpkg.hydroplot-index").exists());
    let again = hydroplot(None, &["index", file, "--remove", "--option", &option]);
    assert!(text(&again.stdout).contains("nothing changed"));
    let status = hydroplot(None, &["index", "--status", file, "--option", &option]);
    assert!(text(&status.stdout).contains("has no index"));
    assert_eq!(std::fs::read(&copy).unwrap(), bytes);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn index_refuses_other_files_untouched() {
    let dir = temp_dir("index-refuse");
    let notes = dir.join("notes.txt");
    std::fs::write(&notes, "not a database\n").unwrap();
    let plain = dir.join("plain.sqlite");
    rusqlite::Connection::open(&plain)
        .unwrap()
        .execute_batch("CREATE TABLE t (a INTEGER); INSERT INTO t VALUES (1);")
        .unwrap();
    for (path, needle) in [
        (&notes, "is not an SQLite database"),
        (&plain, "is not a GeoPackage"),
    ] {
        let before = std::fs::read(path).unwrap();
        let out = hydroplot(None, &["index", path.to_str().unwrap()]);
        assert!(!out.status.success());
        let err = text(&out.stderr);
        assert!(
            err.contains(needle) && err.contains("nothing was changed"),
            "{err}"
        );
        assert_eq!(std::fs::read(path).unwrap(), before);
    }
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 2);
    let none = hydroplot(None, &["index"]);
    assert!(!none.status.success());
    assert!(text(&none.stderr).contains("index takes the GeoPackage file"));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `plot --html` streams the page into its file as it is made: the bytes
/// are those of the page the library makes whole for the same request (the
/// local sample, no basemap), whose contents `tests/it/html.rs` checks.
#[test]
fn the_plot_page_is_streamed_to_the_bytes_of_the_whole_page() {
    use hydroplot::html::{plot_data_html, HtmlOptions};
    use hydroplot::plot::{plot_hydro, CacheSetting, Outlet, PlotRequest};
    let dir = temp_dir("html");
    let path = dir.join("yahara.html");
    let out = hydroplot(
        None,
        &[
            "plot",
            "--hydro-data",
            SAMPLE,
            "--comid",
            "13293970",
            "--basemap",
            "none",
            "--no-plot",
            "--no-cache",
            "--html",
            path.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let ctx = hydroplot::Context::new(support::config()).unwrap();
    let req = PlotRequest {
        outlets: vec![Outlet::Comid(13293970)],
        hydro_data: Some(PathBuf::from(SAMPLE)),
        basemap: "none".into(),
        actually_plot: false,
        cache: CacheSetting::Disabled,
        ..PlotRequest::default()
    };
    let plot = plot_hydro(&ctx, &req, None).unwrap();
    let page = plot_data_html(&plot.data, &plot.drawing, &HtmlOptions::default()).unwrap();
    assert!(page.html.len() > 500_000, "the whole Yahara page");
    assert!(std::fs::read_to_string(&path).unwrap() == page.html);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn cli_trace_world_file_gives_the_specs_trace_map_extent() {
    let server = MockServer::start();
    let dir = temp_dir("world-trace");
    let png = dir.join("trace.png");
    let out = hydroplot(
        Some(&server),
        &[
            "trace",
            "--point",
            "-89.2158,42.9561",
            "--direction",
            "up",
            "--out",
            png.to_str().unwrap(),
            "--no-cache",
            "--world-file",
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("trace.pgw"),
        "{}",
        text(&out.stdout)
    );
    // The recorded trace's box [-89.222294, 42.956, -89.212523, 42.969406]
    // plus 0.005 degrees, in an 800 x 800 map.
    let want = extent_by_hand([-89.227294, 42.951, -89.207523, 42.974406], (800.0, 800.0));
    assert_close(
        world_extent(world_file(&dir.join("trace.pgw")), (800, 800)),
        want,
        0.01,
    );
    if let Some((size, extent, wkt)) = gdalinfo(&png) {
        assert_eq!(size, (800, 800));
        assert_close(extent, want, 0.01);
        assert_epsg_3857(&wkt);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn cli_plot_world_file_places_the_sample_map() {
    let dir = temp_dir("world-plot");
    let png = dir.join("yahara.png");
    let out = hydroplot(
        None,
        &[
            "plot",
            "--sample",
            "--size",
            "400x300",
            "--out",
            png.to_str().unwrap(),
            "--world-file",
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let wf = world_file(&dir.join("yahara.pgw"));
    let extent = world_extent(wf, (400, 300));
    // The sample's flowlines are on the Yahara, about 89.4 W 43.1 N.
    let (x, y) = mercator(-89.4, 43.1);
    assert!(
        extent[0] < x && x < extent[2] && extent[1] < y && y < extent[3],
        "{extent:?}"
    );
    assert!(dir.join("yahara.png.aux.xml").exists());
    if let Some((size, gdal_extent, wkt)) = gdalinfo(&png) {
        assert_eq!(size, (400, 300));
        assert_close(gdal_extent, extent, GDAL_MM);
        assert_epsg_3857(&wkt);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn cli_world_file_refusals_come_before_any_request_or_file() {
    let server = MockServer::start();
    let dir = temp_dir("world-refuse");
    // trace without --out: no PNG to place.
    let out = hydroplot(
        Some(&server),
        &["trace", "--point", "-89.2158,42.9561", "--world-file"],
    );
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("--world-file"),
        "{}",
        text(&out.stderr)
    );
    // A world file that would land on the trace's own GeoJSON.
    let out = hydroplot(
        Some(&server),
        &[
            "trace",
            "--point",
            "-89.2158,42.9561",
            "--out",
            dir.join("t.png").to_str().unwrap(),
            "--geojson",
            dir.join("t.png.aux.xml").to_str().unwrap(),
            "--world-file",
        ],
    );
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("--world-file"),
        "{}",
        text(&out.stderr)
    );
    // plot --no-plot: no map either.
    let out = hydroplot(None, &["plot", "--sample", "--no-plot", "--world-file"]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("--world-file"),
        "{}",
        text(&out.stderr)
    );
    // A world file that would land on another output (here the GeoJSON).
    let png = dir.join("map.png");
    let geojson = dir.join("map.pgw");
    let out = hydroplot(
        None,
        &[
            "plot",
            "--sample",
            "--out",
            png.to_str().unwrap(),
            "--geojson",
            geojson.to_str().unwrap(),
            "--world-file",
        ],
    );
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("--world-file"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(server.requests().len(), 0);
    assert_eq!(
        std::fs::read_dir(&dir).unwrap().count(),
        0,
        "nothing written"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn cli_properties_plot_sends_properties_and_an_unknown_name_is_refused_before_any_request() {
    let server = MockServer::start();
    let fabric = format!("fabric_url={}", server.fabric_url());
    let run = |spec: &str| {
        server.clear_requests();
        let args = ["plot", "--comid", "13293970", "--no-plot", "--no-cache"];
        let out = hydroplot(
            Some(&server),
            &[&args[..], &["--option", &fabric, "--properties", spec]].concat(),
        );
        let items: Vec<String> = server
            .requests()
            .into_iter()
            .filter(|r| r.path.ends_with("/items"))
            .map(|r| r.query)
            .collect();
        (out, items)
    };
    let (out, items) = run("plot");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(!items.is_empty());
    assert!(
        items.iter().all(|q| q.contains("properties=")),
        "{items:#?}"
    );

    let (out, _) = run("comid,nosuch");
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("\"nosuch\""),
        "{}",
        text(&out.stderr)
    );
    assert!(server.requests().is_empty(), "{:#?}", server.requests());
}

/// The CLI reads only the columns its outputs need: a map alone asks the
/// fabric service for the plot's columns, a data output (GeoJSON here) for
/// every column, and `--properties` always wins.
#[test]
fn cli_fetches_every_column_only_for_a_data_output() {
    let server = MockServer::start();
    let fabric = format!("fabric_url={}", server.fabric_url());
    let dir = temp_dir("columns");
    let geojson = dir.join("layers.json");
    let run = |extra: &[&str]| {
        server.clear_requests();
        let args = [
            "plot",
            "--comid",
            "13293970",
            "--no-plot",
            "--no-cache",
            "--option",
            &fabric,
        ];
        let out = hydroplot(Some(&server), &[&args[..], extra].concat());
        assert!(out.status.success(), "{}", text(&out.stderr));
        let items: Vec<String> = (server.requests().into_iter())
            .filter(|r| r.path.ends_with("/items"))
            .map(|r| r.query)
            .collect();
        assert!(!items.is_empty());
        items.iter().filter(|q| q.contains("properties=")).count() * 2 / items.len()
    };
    assert_eq!(run(&[]), 2, "a map alone: every request narrowed");
    assert_eq!(
        run(&["--geojson", geojson.to_str().unwrap()]),
        0,
        "GeoJSON: no request narrowed"
    );
    std::fs::remove_file(&geojson).unwrap();
    assert_eq!(run(&["--properties", "all"]), 0);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// With only a map to write, the CLI reads only the layers the map draws
/// and prints their counts; a data output reads and prints every layer.
/// The map is the same byte for byte.
#[test]
fn cli_reads_only_the_drawn_layers_for_a_map_alone() {
    let dir = temp_dir("drawn-layers");
    let run = |name: &str, extra: &[&str]| {
        let png = dir.join(name);
        let args = [
            "plot",
            "--sample",
            "--no-cache",
            "--out",
            png.to_str().unwrap(),
        ];
        let out = hydroplot(None, &[&args[..], extra].concat());
        assert!(out.status.success(), "{}", text(&out.stderr));
        let layers: Vec<String> = text(&out.stdout)
            .lines()
            .filter(|l| l.ends_with(" features"))
            .filter_map(|l| l.split_whitespace().next().map(str::to_string))
            .collect();
        (std::fs::read(&png).unwrap(), layers)
    };
    let gpkg = dir.join("subset.gpkg");
    let (alone, alone_layers) = run("alone.png", &[]);
    let (with_data, data_layers) = run("with-data.png", &["--gpkg", gpkg.to_str().unwrap()]);
    assert_eq!(
        alone_layers,
        [
            "basin",
            "network_wtbd",
            "off_network_wtbd",
            "flowline",
            "outlets"
        ]
    );
    assert_eq!(data_layers.len(), 9, "{data_layers:?}");
    assert!(data_layers.iter().any(|l| l == "catchment"));
    assert!(alone == with_data, "the maps differ");
    std::fs::remove_dir_all(&dir).unwrap();
}
