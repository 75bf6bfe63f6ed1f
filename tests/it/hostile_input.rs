//! Hostile and silly input (issue 8, part 2), through the C ABI where a host
//! program would send it: invalid UTF-8, non-finite coordinates, inverted and
//! world-sized boxes, a million outlets, cyclic topology, deeply nested JSON,
//! GeoPackages with the wrong geometry types and tile templates with path
//! tricks. Each must end in its documented status, never a crash, a hang or
//! an exhausted memory. (NULL in every pointer position: tests/c/test_null_args.c.)

use hydroplot::ffi::comid_batch::*;
use hydroplot::ffi::context::*;
use hydroplot::ffi::gpkg_index::*;
use hydroplot::ffi::hydroplot_status::{self, *};
use hydroplot::ffi::library::hydroplot_last_error;
use hydroplot::ffi::map::*;
use hydroplot::ffi::plot_data::*;
use hydroplot::ffi::plot_request::*;
use hydroplot::ffi::trace::*;
use hydroplot::ffi::trace_batch::*;
use hydroplot::network::{upstream_comids, Reach};
use hydroplot::render::tile_cache::TileCache;
use hydroplot_mock::MockServer;
use std::ffi::{CStr, CString};
use std::os::raw::c_char;
use std::path::{Path, PathBuf};
use std::ptr::{null, null_mut};

/// Bytes that are not UTF-8, NUL-terminated.
const BAD_UTF8: &[u8] = b"USGS-\xff\xfe05427718\0";

fn c(s: &str) -> CString {
    CString::new(s).unwrap()
}

fn last_error() -> String {
    unsafe { CStr::from_ptr(hydroplot_last_error()) }
        .to_string_lossy()
        .into_owned()
}

/// `status` must be `want`, and the message must mention `needle`.
#[track_caller]
fn expect(status: hydroplot_status, want: hydroplot_status, needle: &str) {
    let message = last_error();
    assert_eq!(status, want, "{message}");
    assert!(message.contains(needle), "{needle:?} not in {message:?}");
}

fn bad_utf8() -> *const c_char {
    BAD_UTF8.as_ptr().cast()
}

/// A context pointed at `server` (or at nothing), with no retries.
fn context(server: Option<&MockServer>) -> *mut hydroplot_context {
    let mut ctx = null_mut();
    assert_eq!(hydroplot_context_new(&mut ctx), HYDROPLOT_OK);
    let set = |k: &str, v: &str| {
        assert_eq!(
            hydroplot_context_set_option(ctx, c(k).as_ptr(), c(v).as_ptr()),
            HYDROPLOT_OK,
            "{}",
            last_error()
        )
    };
    set("retries", "0");
    set("tile_cache_dir", &temp_dir("tiles").to_string_lossy());
    set("index_dir", &temp_dir("index").to_string_lossy());
    if let Some(s) = server {
        set("index_url", &s.index_url());
        set("fabric_url", &s.fabric_url());
        set("tile_url", &s.tile_url());
    }
    ctx
}

fn temp_dir(name: &str) -> PathBuf {
    crate::scratch::temp_dir(&format!("hostile-{name}"))
}

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

/// A copy of the Yahara sample at `path` changed by `sql` (statements; with the R-tree
/// triggers dropped: they call SpatiaLite functions that plain SQLite lacks).
fn doctored_sample(path: &Path, sql: &str) {
    std::fs::copy(data("yahara_sample.gpkg"), path).unwrap();
    let db = rusqlite::Connection::open(path).unwrap();
    let triggers: Vec<String> = db
        .prepare("SELECT name FROM sqlite_master WHERE type = 'trigger'")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    for t in triggers {
        db.execute(&format!("DROP TRIGGER \"{t}\""), []).unwrap();
    }
    db.execute_batch(sql).unwrap();
}

/// Runs `req` on `ctx`; the plot data is freed.
fn plot(ctx: *const hydroplot_context, req: *const hydroplot_plot_request) -> hydroplot_status {
    let mut pd = null_mut();
    let status = hydroplot_plot(ctx, req, null_mut(), &mut pd);
    assert_eq!(status == HYDROPLOT_OK, !pd.is_null());
    hydroplot_plot_data_free(pd);
    status
}

/// A 200 x 200 map without basemap over the Yahara area; free it with `hydroplot_map_free`.
fn small_map(ctx: *const hydroplot_context) -> *mut hydroplot_map {
    let mut map = null_mut();
    let none = c("none");
    let status = hydroplot_map_new(
        ctx,
        -89.5,
        42.9,
        -89.2,
        43.1,
        null(),
        200,
        200,
        none.as_ptr(),
        &mut map,
    );
    assert_eq!(status, HYDROPLOT_OK);
    map
}

#[test]
fn invalid_utf8_is_an_invalid_argument_in_every_string_position() {
    let ctx = context(None);
    let req = hydroplot_plot_request_new();
    let ok = c("x");
    expect(
        hydroplot_context_set_option(ctx, bad_utf8(), ok.as_ptr()),
        HYDROPLOT_ERR_INVALID_ARGUMENT,
        "UTF-8",
    );
    expect(
        hydroplot_context_set_option(ctx, c("user_agent").as_ptr(), bad_utf8()),
        HYDROPLOT_ERR_INVALID_ARGUMENT,
        "UTF-8",
    );
    expect(
        hydroplot_plot_request_add_site(req, bad_utf8()),
        HYDROPLOT_ERR_INVALID_ARGUMENT,
        "UTF-8",
    );
    // A prefix with no site number would ask the service for "USGS-".
    for site in ["USGS-", " ", "05428500/basin"] {
        expect(
            hydroplot_plot_request_add_site(req, c(site).as_ptr()),
            HYDROPLOT_ERR_INVALID_ARGUMENT,
            "gauge site",
        );
    }
    expect(
        hydroplot_plot_request_add_feature(req, bad_utf8(), ok.as_ptr()),
        HYDROPLOT_ERR_INVALID_ARGUMENT,
        "UTF-8",
    );
    expect(
        hydroplot_plot_request_add_feature(req, ok.as_ptr(), bad_utf8()),
        HYDROPLOT_ERR_INVALID_ARGUMENT,
        "UTF-8",
    );
    expect(
        hydroplot_plot_request_add_point(req, -89.2, 43.0, bad_utf8()),
        HYDROPLOT_ERR_INVALID_ARGUMENT,
        "UTF-8",
    );
    expect(
        hydroplot_plot_request_set_gpkg(req, bad_utf8()),
        HYDROPLOT_ERR_INVALID_ARGUMENT,
        "UTF-8",
    );
    expect(
        hydroplot_plot_request_set_png_file(req, bad_utf8()),
        HYDROPLOT_ERR_INVALID_ARGUMENT,
        "UTF-8",
    );
    expect(
        hydroplot_plot_request_set_hydro_data(req, bad_utf8()),
        HYDROPLOT_ERR_INVALID_ARGUMENT,
        "UTF-8",
    );
    expect(
        hydroplot_plot_request_set_basemap(req, bad_utf8()),
        HYDROPLOT_ERR_INVALID_ARGUMENT,
        "UTF-8",
    );
    let mut t = null_mut();
    expect(
        hydroplot_raindrop_trace(ctx, -89.2, 43.0, null(), bad_utf8(), &mut t),
        HYDROPLOT_ERR_INVALID_ARGUMENT,
        "UTF-8",
    );
    expect(
        hydroplot_raindrop_trace(ctx, -89.2, 43.0, bad_utf8(), null(), &mut t),
        HYDROPLOT_ERR_INVALID_ARGUMENT,
        "UTF-8",
    );
    assert!(t.is_null());
    // Invalid UTF-8 inside GeoJSON given by length.
    let map = small_map(ctx);
    let geojson = b"{\"type\":\"Point\",\"coordinates\":[-89.3,43.0],\"x\":\"\xff\"}";
    let status = hydroplot_map_add_geojson(
        map,
        geojson.as_ptr().cast(),
        geojson.len(),
        null(),
        null(),
        null(),
        1.0,
    );
    assert_eq!(status, HYDROPLOT_ERR_INVALID_ARGUMENT, "{}", last_error());
    hydroplot_map_free(map);
    hydroplot_plot_request_free(req);
    hydroplot_context_free(ctx);
}

#[test]
fn non_finite_coordinates_and_bad_boxes_are_refused_before_any_request() {
    let server = MockServer::start();
    let ctx = context(Some(&server));
    let req = hydroplot_plot_request_new();
    for (x, y) in [
        (f64::NAN, 43.0),
        (-89.0, f64::INFINITY),
        (f64::NEG_INFINITY, f64::NAN),
    ] {
        expect(
            hydroplot_plot_request_add_point(req, x, y, null()),
            HYDROPLOT_ERR_INVALID_ARGUMENT,
            "finite",
        );
        let mut t = null_mut();
        expect(
            hydroplot_raindrop_trace(ctx, x, y, null(), null(), &mut t),
            HYDROPLOT_ERR_INVALID_ARGUMENT,
            "finite",
        );
        let mut map = null_mut();
        let s = hydroplot_map_new(
            ctx,
            x,
            y,
            -89.0,
            44.0,
            null(),
            100,
            100,
            c("none").as_ptr(),
            &mut map,
        );
        expect(s, HYDROPLOT_ERR_INVALID_ARGUMENT, "not finite");
        assert!(map.is_null());
    }
    // Inverted, empty and non-finite boxes.
    for b in [
        [-89.2, 42.9, -89.5, 43.1],
        [-89.5, 43.1, -89.2, 42.9],
        [-89.5, 43.0, -89.5, 43.0],
        [f64::NAN, 0.0, 1.0, 1.0],
    ] {
        expect(
            hydroplot_plot_request_set_bbox(req, b[0], b[1], b[2], b[3], null()),
            HYDROPLOT_ERR_INVALID_ARGUMENT,
            "bbox",
        );
        // A map's box: inverted or not finite is refused, whatever its CRS
        // (the transform used to put the corners back in order); equal
        // edges are a map around them, as documented.
        for crs in ["EPSG:4326", "EPSG:4269"] {
            let (crs, mut map) = (c(crs), null_mut());
            let s = hydroplot_map_new(
                ctx,
                b[0],
                b[1],
                b[2],
                b[3],
                crs.as_ptr(),
                100,
                100,
                c("none").as_ptr(),
                &mut map,
            );
            if b[0] == b[2] {
                assert_eq!(s, HYDROPLOT_OK, "{}", last_error());
                hydroplot_map_free(map);
            } else {
                expect(s, HYDROPLOT_ERR_INVALID_ARGUMENT, "the map's box");
                assert!(map.is_null());
            }
        }
    }
    // Latitude beyond the pole, in range of nothing.
    let mut t = null_mut();
    expect(
        hydroplot_raindrop_trace(ctx, -89.0, 123.0, null(), null(), &mut t),
        HYDROPLOT_ERR_INVALID_ARGUMENT,
        "latitude",
    );
    // A batch: the bad points fail alone, the good one is traced.
    let xy = [f64::NAN, 1.0, -89.2158, 42.9561, 1e308, 1e308];
    let mut batch = null_mut();
    assert_eq!(
        hydroplot_raindrop_trace_batch(ctx, xy.as_ptr(), 3, null(), c("up").as_ptr(), &mut batch),
        HYDROPLOT_OK
    );
    assert_eq!(hydroplot_trace_batch_len(batch), 3);
    assert_eq!(
        hydroplot_trace_batch_status(batch, 0),
        HYDROPLOT_ERR_INVALID_ARGUMENT
    );
    assert_eq!(hydroplot_trace_batch_status(batch, 1), HYDROPLOT_OK);
    assert_eq!(
        hydroplot_trace_batch_status(batch, 2),
        HYDROPLOT_ERR_INVALID_ARGUMENT
    );
    // The trace map's size: both sides 0 is the default, one alone is not.
    let trace = hydroplot_trace_batch_get(batch, 1);
    for (w, h) in [(0, 500), (500, 0), (0, 20_000)] {
        let mut map = null_mut();
        let (x, y) = (-89.2158, 42.9561);
        let s = hydroplot_trace_map(ctx, trace, x, y, null(), w, h, c("none").as_ptr(), &mut map);
        expect(s, HYDROPLOT_ERR_INVALID_ARGUMENT, "size");
        assert!(map.is_null());
    }
    hydroplot_trace_batch_free(batch);
    // A count of points no memory holds (a negative number cast to size_t)
    // is refused before the points are read, never sliced or allocated.
    let huge = "more than any memory holds";
    for n in [usize::MAX / 2, 1 << 60, (1 << 62) + 1] {
        let (mut batch, mut comids) = (null_mut(), null_mut());
        let s = hydroplot_raindrop_trace_batch(ctx, xy.as_ptr(), n, null(), null(), &mut batch);
        expect(s, HYDROPLOT_ERR_INVALID_ARGUMENT, huge);
        let s = hydroplot_comid_lookup(ctx, xy.as_ptr(), n, null(), null(), &mut comids);
        expect(s, HYDROPLOT_ERR_INVALID_ARGUMENT, huge);
        assert!(batch.is_null() && comids.is_null());
    }
    // The whole globe: Web Mercator ends short of the poles, and says so.
    let mut map = null_mut();
    let (world, none) = ([-180.0, -90.0, 180.0, 90.0], c("none"));
    let s = hydroplot_map_new(
        ctx,
        world[0],
        world[1],
        world[2],
        world[3],
        null(),
        100,
        100,
        none.as_ptr(),
        &mut map,
    );
    expect(s, HYDROPLOT_ERR_CRS, "cannot be drawn in Web Mercator");
    assert!(map.is_null());
    // A map far larger than any screen is refused, not allocated.
    let mut map = null_mut();
    let s = hydroplot_map_new(
        ctx,
        -89.5,
        42.9,
        -89.2,
        43.1,
        null(),
        100_000,
        100_000,
        c("none").as_ptr(),
        &mut map,
    );
    assert_eq!(s, HYDROPLOT_ERR_INVALID_ARGUMENT, "{}", last_error());
    assert_eq!(
        server.requests().len(),
        1,
        "only the good batch point reached the service"
    );
    hydroplot_plot_request_free(req);
    hydroplot_context_free(ctx);
}

#[test]
fn a_world_sized_bbox_stops_at_max_features_after_one_page() {
    let server = MockServer::start();
    let ctx = context(Some(&server));
    assert_eq!(
        hydroplot_context_set_option(ctx, c("max_features").as_ptr(), c("1000").as_ptr()),
        HYDROPLOT_OK
    );
    let req = hydroplot_plot_request_new();
    assert_eq!(
        hydroplot_plot_request_set_bbox(req, -180.0, -90.0, 180.0, 90.0, null()),
        HYDROPLOT_OK
    );
    assert_eq!(
        hydroplot_plot_request_set_actually_plot(req, false),
        HYDROPLOT_OK
    );
    let status = plot(ctx, req);
    expect(status, HYDROPLOT_ERR_LIMIT, "max_features (1000)");
    assert_eq!(server.requests().len(), 1, "refused after the first page");
    hydroplot_plot_request_free(req);
    hydroplot_context_free(ctx);
}

#[test]
fn a_million_outlets_is_a_limit_error_without_a_request() {
    let server = MockServer::start();
    let ctx = context(Some(&server));
    let req = hydroplot_plot_request_new();
    for comid in 1..=1_000_000 {
        assert_eq!(hydroplot_plot_request_add_comid(req, comid), HYDROPLOT_OK);
    }
    expect(plot(ctx, req), HYDROPLOT_ERR_LIMIT, "1000000 outlets");
    let ids: Vec<i64> = (1..=1_000_000).collect();
    let set = hydroplot_plot_request_new();
    assert_eq!(
        hydroplot_plot_request_set_comid_set(set, ids.as_ptr(), ids.len()),
        HYDROPLOT_OK
    );
    expect(plot(ctx, set), HYDROPLOT_ERR_LIMIT, "comid set of 1000000");
    assert!(server.requests().is_empty());
    hydroplot_plot_request_free(set);
    hydroplot_plot_request_free(req);
    hydroplot_context_free(ctx);
}

#[test]
fn cyclic_hydroseq_data_terminates() {
    let r = |comid, hydroseq, dnhydroseq| Reach {
        comid,
        hydroseq,
        dnhydroseq,
        streamorder: 1,
    };
    // 1 -> 2 -> 3 -> 1, 4 -> 1, 5 drains into itself.
    let reaches = [
        r(1, 10, 20),
        r(2, 20, 30),
        r(3, 30, 10),
        r(4, 40, 10),
        r(5, 50, 50),
    ];
    let mut up = upstream_comids(&reaches, &[1]);
    up.sort();
    assert_eq!(up, vec![1, 2, 3, 4]);
    assert_eq!(upstream_comids(&reaches, &[5]), vec![5]);

    // The Yahara sample with its outlet draining into a headwater: a cycle
    // through the whole network, read by the local pipeline.
    let dir = temp_dir("cyclic");
    let path = dir.join("cyclic.gpkg");
    doctored_sample(
        &path,
        "UPDATE NHDFlowline_Network SET dnhydroseq = (SELECT max(hydroseq) FROM NHDFlowline_Network) WHERE comid = 13293970",
    );
    let ctx = context(None);
    let req = hydroplot_plot_request_new();
    assert_eq!(
        hydroplot_plot_request_add_comid(req, 13293970),
        HYDROPLOT_OK
    );
    assert_eq!(
        hydroplot_plot_request_set_hydro_data(req, c(&path.to_string_lossy()).as_ptr()),
        HYDROPLOT_OK
    );
    assert_eq!(
        hydroplot_plot_request_set_actually_plot(req, false),
        HYDROPLOT_OK
    );
    let mut pd = null_mut();
    assert_eq!(
        hydroplot_plot(ctx, req, null_mut(), &mut pd),
        HYDROPLOT_OK,
        "{}",
        last_error()
    );
    let mut n = 0usize;
    assert_eq!(
        hydroplot_plot_data_layer_count(pd, c("flowline").as_ptr(), &mut n),
        HYDROPLOT_OK
    );
    assert!(
        n >= 251,
        "the cycle adds the headwater's branch to the 251 upstream flowlines: {n}"
    );
    hydroplot_plot_data_free(pd);
    hydroplot_plot_request_free(req);
    hydroplot_context_free(ctx);
}

#[test]
fn deeply_nested_and_malformed_json_is_an_error_not_a_stack_overflow() {
    let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n)).into_bytes();
    for body in [
        deep(100_000),
        b"{\"type\":\"FeatureCollection\",\"features\":".to_vec(),
        vec![0xff; 64],
        Vec::new(),
    ] {
        assert!(matches!(
            hydroplot::trace::Trace::parse(&body),
            Err(hydroplot::Error::Service(_))
        ));
        assert!(hydroplot::plot::cached::decode_layer(body.clone()).is_err());
    }
    let ctx = context(None);
    let map = small_map(ctx);
    let nested = format!(
        "{{\"type\":\"GeometryCollection\",\"geometries\":[{}]}}",
        "{\"type\":\"GeometryCollection\",\"geometries\":[".repeat(20_000) + &"]}".repeat(20_000)
    );
    let s = hydroplot_map_add_geojson(
        map,
        nested.as_ptr().cast(),
        nested.len(),
        null(),
        null(),
        null(),
        1.0,
    );
    assert_eq!(s, HYDROPLOT_ERR_INVALID_ARGUMENT, "{}", last_error());
    let s = hydroplot_map_add_geojson(
        map,
        deep(1_000_000).as_ptr().cast(),
        2_000_000,
        null(),
        null(),
        null(),
        1.0,
    );
    assert_eq!(s, HYDROPLOT_ERR_INVALID_ARGUMENT, "{}", last_error());
    hydroplot_map_free(map);
    hydroplot_context_free(ctx);
}

#[test]
fn a_geopackage_with_the_wrong_geometry_types_fails_cleanly() {
    let dir = temp_dir("wrong-geometry");
    let ctx = context(None);
    // Flowlines as points, catchments as lines; then blobs of garbage.
    let cases = [
        (
            "points.gpkg",
            "UPDATE NHDFlowline_Network SET geom = (SELECT geom FROM Gage LIMIT 1)",
        ),
        (
            "lines.gpkg",
            "UPDATE CatchmentSP SET geom = (SELECT geom FROM NHDFlowline_Network LIMIT 1)",
        ),
        (
            "garbage.gpkg",
            "UPDATE NHDFlowline_Network SET geom = X'4750000100000000DEADBEEF'",
        ),
        (
            "text.gpkg",
            "UPDATE NHDFlowline_Network SET geom = 'not a geometry'",
        ),
    ];
    for (name, sql) in cases {
        let path = dir.join(name);
        doctored_sample(&path, sql);
        let req = hydroplot_plot_request_new();
        assert_eq!(
            hydroplot_plot_request_add_comid(req, 13293970),
            HYDROPLOT_OK
        );
        assert_eq!(
            hydroplot_plot_request_set_hydro_data(req, c(&path.to_string_lossy()).as_ptr()),
            HYDROPLOT_OK
        );
        assert_eq!(
            hydroplot_plot_request_set_basemap(req, c("none").as_ptr()),
            HYDROPLOT_OK
        );
        let status = plot(ctx, req);
        let message = last_error();
        assert!(
            matches!(
                status,
                HYDROPLOT_OK | HYDROPLOT_ERR_GPKG | HYDROPLOT_ERR_NOT_FOUND
            ),
            "{name}: {status:?} {message}"
        );
        if status != HYDROPLOT_OK {
            assert!(
                message.contains(name) || message.contains("geometry") || message.contains("comid"),
                "{name}: {message}"
            );
        }
        hydroplot_plot_request_free(req);
    }
    hydroplot_context_free(ctx);
}

/// Network flowlines without geometry beside no catchments (the plot's box
/// has nothing to come from): the CLI exits 1 with a message, never 101
/// with a backtrace. Flowlines of which only some lack a geometry still
/// plot, drawn map included.
#[test]
fn geometry_less_flowlines_are_a_message_from_the_cli_never_a_panic() {
    let dir = temp_dir("no-geometry");
    let none = dir.join("none.gpkg");
    doctored_sample(
        &none,
        "UPDATE NHDFlowline_Network SET geom = NULL; DELETE FROM CatchmentSP;",
    );
    let some = dir.join("some.gpkg");
    doctored_sample(
        &some,
        "UPDATE NHDFlowline_Network SET geom = NULL WHERE comid % 2 = 0;",
    );
    let run = |file: &Path, extra: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_hydroplot"))
            .args(["plot", "--hydro-data"])
            .arg(file)
            .args(["--comid", "13293970", "--no-cache", "--basemap", "none"])
            .args(extra)
            .env_remove("RUST_BACKTRACE")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        (out.status.code(), stderr)
    };
    let (code, stderr) = run(&none, &["--no-plot"]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(stderr.contains("have a geometry"), "{stderr}");
    let png = dir.join("some.png");
    let (code, stderr) = run(&some, &["--out", png.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(png.exists());
}

/// A fabric service whose network flowlines come without geometry and
/// which has no catchments: a loopback server answering every items query
/// with one such page, until `requests` have been answered.
fn geometry_less_fabric(requests: usize) -> (String, std::thread::JoinHandle<()>) {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/fabric", listener.local_addr().unwrap());
    let serve = std::thread::spawn(move || {
        for stream in listener.incoming().take(requests) {
            let mut stream = stream.unwrap();
            let mut request = Vec::new();
            let mut buf = [0u8; 4096];
            // The head, then the body its Content-Length announces.
            let body_at = loop {
                let n = stream.read(&mut buf).unwrap();
                request.extend_from_slice(&buf[..n]);
                if let Some(i) = request.windows(4).position(|w| w == b"\r\n\r\n") {
                    break i + 4;
                }
            };
            let head = String::from_utf8_lossy(&request[..body_at]).to_lowercase();
            let length = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .map_or(0, |v| v.trim().parse::<usize>().unwrap());
            while request.len() < body_at + length {
                let n = stream.read(&mut buf).unwrap();
                request.extend_from_slice(&buf[..n]);
            }
            let features = if head.contains("catchment") {
                String::new()
            } else {
                r#"{"type":"Feature","id":1,"geometry":null,"properties":{"comid":13293970,"hydroseq":1,"dnhydroseq":0,"streamorde":1}}"#.to_string()
            };
            let n = usize::from(!features.is_empty());
            let body = format!(
                r#"{{"type":"FeatureCollection","features":[{features}],"numberMatched":{n},"numberReturned":{n},"links":[]}}"#
            );
            write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: application/geo+json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            )
            .unwrap();
        }
    });
    (url, serve)
}

/// The download path of the same defect: a comid set whose flowlines the
/// fabric service sends without geometry, and no catchments. The CLI exits
/// 1 with a message naming the service's answer, never 101.
#[test]
fn geometry_less_flowlines_from_the_service_are_a_message_never_a_panic() {
    let (fabric, serve) = geometry_less_fabric(2);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_hydroplot"))
        .args(["plot", "--comid-set", "13293970", "--no-plot", "--no-cache"])
        .args(["--option", &format!("fabric_url={fabric}")])
        .args(["--option", "retries=0"])
        .env_remove("RUST_BACKTRACE")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(stderr.contains("fabric service's answer"), "{stderr}");
    serve.join().unwrap();
}

#[test]
fn tile_templates_with_path_tricks_never_leave_the_cache_directory() {
    let ctx = context(None);
    for template in [
        "file:///etc/{z}/{x}/{y}",
        "/etc/passwd/{z}/{x}/{y}",
        "http:///{z}/{x}/{y}",
        "http://h/{z}/{x}",
    ] {
        let s = hydroplot_context_set_option(ctx, c("tile_url").as_ptr(), c(template).as_ptr());
        assert_eq!(
            s,
            HYDROPLOT_ERR_INVALID_ARGUMENT,
            "{template}: {}",
            last_error()
        );
    }
    let req = hydroplot_plot_request_new();
    expect(
        hydroplot_plot_request_set_basemap(req, c("../../etc/passwd").as_ptr()),
        HYDROPLOT_ERR_INVALID_ARGUMENT,
        "passwd",
    );
    hydroplot_plot_request_free(req);
    hydroplot_context_free(ctx);

    // Whatever the URL, a cache entry is a direct child of the cache directory.
    let dir = temp_dir("tile-cache-tricks");
    let cache = TileCache::open(&dir, 1 << 20).unwrap();
    for url in [
        "http://h/../../../etc/passwd",
        "http://h/%2e%2e/%2e%2e/x",
        "http://h/a/b\0c",
        "../../x",
    ] {
        assert_eq!(cache.path_for(url).parent(), Some(dir.as_path()), "{url}");
        cache.put(url, &[], b"tile").unwrap();
        assert_eq!(cache.get(url).as_deref(), Some(&b"tile"[..]));
    }
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 4);
}

#[test]
fn https_is_the_default_and_secrets_never_reach_messages() {
    let defaults = hydroplot::config::Config::default();
    assert!(
        defaults.index_url.starts_with("https://"),
        "{}",
        defaults.index_url
    );
    assert!(
        defaults.fabric_url.starts_with("https://"),
        "{}",
        defaults.fabric_url
    );

    // Credentials in the service URL and a key in the tile template.
    let server = MockServer::start();
    let ctx = context(Some(&server));
    let port = server.base_url().rsplit(':').next().unwrap().to_string();
    let index = format!("http://user:s3cret@127.0.0.1:{port}/nldi");
    let tiles = format!("http://127.0.0.1:{port}/tiles/{{z}}/{{x}}/{{y}}.png?apikey=s3cret");
    for (k, v) in [("index_url", index), ("tile_url", tiles)] {
        assert_eq!(
            hydroplot_context_set_option(ctx, c(k).as_ptr(), c(&v).as_ptr()),
            HYDROPLOT_OK
        );
    }
    server.set_fault(hydroplot_mock::Fault {
        path_contains: "/".into(),
        kind: hydroplot_mock::FaultKind::Status(500),
        times: None,
    });
    let mut t = null_mut();
    let s = hydroplot_raindrop_trace(ctx, -89.2158, 42.9561, null(), null(), &mut t);
    assert_eq!(s, HYDROPLOT_ERR_HTTP);
    let message = last_error();
    assert!(
        message.contains("flowtrace process") && message.contains("127.0.0.1"),
        "{message}"
    );
    assert!(
        !message.contains("s3cret") && !message.contains("user:"),
        "{message}"
    );

    let req = hydroplot_plot_request_new();
    assert_eq!(
        hydroplot_plot_request_add_comid(req, 13293970),
        HYDROPLOT_OK
    );
    assert_eq!(
        hydroplot_plot_request_set_hydro_data(
            req,
            c(&data("yahara_sample.gpkg").to_string_lossy()).as_ptr()
        ),
        HYDROPLOT_OK
    );
    assert_eq!(
        hydroplot_plot_request_set_basemap(req, c("OpenStreetMap").as_ptr()),
        HYDROPLOT_OK
    );
    assert_eq!(hydroplot_plot_request_disable_cache(req), HYDROPLOT_OK);
    assert_eq!(hydroplot_plot_request_set_size(req, 256, 256), HYDROPLOT_OK);
    let mut pd = null_mut();
    assert_eq!(
        hydroplot_plot(ctx, req, null_mut(), &mut pd),
        HYDROPLOT_OK,
        "{}",
        last_error()
    );
    assert_eq!(hydroplot_plot_data_warning_count(pd), 1);
    let warning = unsafe { CStr::from_ptr(hydroplot_plot_data_warning(pd, 0)) }
        .to_string_lossy()
        .into_owned();
    assert!(
        warning.contains("tile server") && warning.contains("apikey=***"),
        "{warning}"
    );
    assert!(!warning.contains("s3cret"), "{warning}");
    hydroplot_plot_data_free(pd);
    hydroplot_plot_request_free(req);
    hydroplot_context_free(ctx);
}

#[test]
fn written_files_are_not_world_writable_and_leave_no_temp_files() {
    use std::os::unix::fs::PermissionsExt;
    let dir = temp_dir("permissions");
    let out = dir.join("out.gpkg");
    let _ = std::fs::remove_file(&out);
    let ctx = context(None);
    let req = hydroplot_plot_request_new();
    assert_eq!(
        hydroplot_plot_request_add_comid(req, 13293970),
        HYDROPLOT_OK
    );
    assert_eq!(
        hydroplot_plot_request_set_hydro_data(
            req,
            c(&data("yahara_sample.gpkg").to_string_lossy()).as_ptr()
        ),
        HYDROPLOT_OK
    );
    assert_eq!(
        hydroplot_plot_request_set_gpkg(req, c(&out.to_string_lossy()).as_ptr()),
        HYDROPLOT_OK
    );
    assert_eq!(
        hydroplot_plot_request_set_actually_plot(req, false),
        HYDROPLOT_OK
    );
    assert_eq!(plot(ctx, req), HYDROPLOT_OK, "{}", last_error());
    let mode = std::fs::metadata(&out).unwrap().permissions().mode();
    assert_eq!(mode & 0o002, 0, "world-writable: {mode:o}");
    let names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, vec!["out.gpkg".to_string()]);
    hydroplot_plot_request_free(req);
    hydroplot_context_free(ctx);
}

#[test]
fn the_tile_cache_never_follows_a_symlink_out_of_its_directory() {
    let dir = temp_dir("symlink-cache");
    let outside = temp_dir("symlink-outside").join("victim.txt");
    std::fs::write(&outside, b"precious").unwrap();
    let cache = TileCache::open(&dir, 1 << 20).unwrap();
    let url = "http://127.0.0.1/tiles/3/1/2.png";
    let entry = cache.path_for(url);
    let _ = std::fs::remove_file(&entry);
    std::os::unix::fs::symlink(&outside, &entry).unwrap();
    assert_eq!(cache.get(url), None, "a link is a miss");
    cache.put(url, &[], b"tile").unwrap();
    assert_eq!(std::fs::read(&outside).unwrap(), b"precious");
    assert!(!std::fs::symlink_metadata(&entry)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(cache.get(url).as_deref(), Some(&b"tile"[..]));
}

/// A FIFO, a directory and a device given as `hydro_data` or `cache_data`
/// (or to the comid lookup, or to `hydroplot_gpkg_index`) are refused
/// before anything opens them, naming what they are: a FIFO's open would
/// wait for a writer forever. The test holds the FIFO open for writing, so
/// a library that opened it anyway would fail here instead of hanging.
#[test]
fn special_files_are_refused_as_inputs_before_any_open() {
    let dir = temp_dir("special");
    let fifo = dir.join("pipe.gpkg");
    let _ = std::fs::remove_file(&fifo);
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let _writer = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&fifo)
        .unwrap();
    let ctx = context(None);
    let cases = [
        (fifo.clone(), "a FIFO (named pipe)"),
        (dir.clone(), "a directory"),
        (PathBuf::from("/dev/null"), "a device"),
    ];
    for (path, kind) in &cases {
        let path_c = c(&path.to_string_lossy());
        for role in ["hydro_data", "cache_data"] {
            let req = hydroplot_plot_request_new();
            assert_eq!(
                hydroplot_plot_request_add_comid(req, 13293970),
                HYDROPLOT_OK
            );
            let set = match role {
                "hydro_data" => hydroplot_plot_request_set_hydro_data(req, path_c.as_ptr()),
                _ => hydroplot_plot_request_set_cache_file(req, path_c.as_ptr()),
            };
            assert_eq!(set, HYDROPLOT_OK);
            expect(plot(ctx, req), HYDROPLOT_ERR_INVALID_ARGUMENT, kind);
            assert!(
                last_error().starts_with(&format!("{role} {}", path.display())),
                "{}",
                last_error()
            );
            hydroplot_plot_request_free(req);
        }
        let point = [-89.4, 43.0];
        let mut batch = null_mut();
        let status =
            hydroplot_comid_lookup(ctx, point.as_ptr(), 1, null(), path_c.as_ptr(), &mut batch);
        expect(status, HYDROPLOT_ERR_INVALID_ARGUMENT, kind);
        expect(
            hydroplot_gpkg_index(ctx, path_c.as_ptr()),
            HYDROPLOT_ERR_INVALID_ARGUMENT,
            kind,
        );
    }
    assert!(fifo.exists(), "the FIFO is the user's: left as it was");
    hydroplot_context_free(ctx);
}
