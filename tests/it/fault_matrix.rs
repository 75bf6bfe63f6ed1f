//! The fault matrix (issue 8, part 1): every request kind the library makes
//! against every fault the mock can inject. Each cell must end in success
//! after a retry (with the same result as a fault-free run) or in the
//! documented error, whose message names the service and the URL; a failed
//! tile is a warning and a blank area, and is never written to the tile cache.
//! The matrix is printed as a table (`cargo test --test fault_matrix -- --nocapture`).
//!
//! A second test runs the whole plot pipeline with a GeoPackage output and a
//! plot-data cache under each fault: no output file, no temporary file and no
//! cache entry may be left behind by a failed run.

use hydroplot::cache::PlotCache;
use hydroplot::collection::Collection;
use hydroplot::config::Config;
use hydroplot::feature::{to_geojson, Feature};
use hydroplot::plot::cached::request_key;
use hydroplot::plot::{plot_hydro, CacheSetting, Layer, Outlet, PlotRequest};
use hydroplot::render::{Map, TileCacheMode};
use hydroplot::services::fabric::{self, ItemsQuery};
use hydroplot::services::{flowtrace, index};
use hydroplot::{Context, Error};
use hydroplot_mock::{Fault, FaultKind, MockServer};
use std::path::{Path, PathBuf};
use std::time::Duration;
use support::Recorder;

use crate::support;

/// The whole-request timeout of the `Slow` cells, which sleep longer.
const TIMEOUT: Duration = Duration::from_millis(1500);
const SLOW: Duration = Duration::from_millis(2300);
/// The timeout of every other context: generous, so that a loaded machine
/// (8 cells at once, a debug build) never turns a fault into a timeout. A
/// 429 that timed out before it arrived would test nothing.
const UNHURRIED: Duration = Duration::from_secs(30);
/// Retries of the matrix contexts.
const RETRIES: u32 = 2;
/// The Yahara outlet and a point on the Yahara River (recorded trace).
const OUTLET: i64 = 13293970;
const POINT: (f64, f64) = (-89.2158, 42.9561);
/// A small area of the Yahara sample for GET items and tiles.
const BBOX: [f64; 4] = [-89.40, 43.05, -89.33, 43.10];

/// The request kinds of the library.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Feature,
    Basin,
    CatchmentLookup,
    ItemsGet,
    ItemsPost,
    Flowtrace,
    Tiles,
}

const KINDS: [Kind; 7] = [
    Kind::Feature,
    Kind::Basin,
    Kind::CatchmentLookup,
    Kind::ItemsGet,
    Kind::ItemsPost,
    Kind::Flowtrace,
    Kind::Tiles,
];

impl Kind {
    fn label(self) -> &'static str {
        match self {
            Kind::Feature => "feature",
            Kind::Basin => "basin",
            Kind::CatchmentLookup => "catchment lookup",
            Kind::ItemsGet => "items GET",
            Kind::ItemsPost => "items POST",
            Kind::Flowtrace => "flowtrace",
            Kind::Tiles => "tiles",
        }
    }

    /// The part of `path?query` that only this kind's requests contain.
    fn path(self) -> &'static str {
        match self {
            Kind::Feature => "/linked-data/comid/13293970",
            Kind::Basin => "/basin",
            Kind::CatchmentLookup => "skipGeometry",
            Kind::ItemsGet => "nhdflowline_network/items?bbox",
            Kind::ItemsPost => "nhdflowline_network/items?limit",
            Kind::Flowtrace => "/processes/",
            Kind::Tiles => "/tiles/",
        }
    }

    /// The service name every error message of this kind must carry.
    fn service(self) -> &'static str {
        match self {
            Kind::Feature | Kind::Basin => "index service",
            Kind::CatchmentLookup | Kind::ItemsGet | Kind::ItemsPost => "fabric service",
            Kind::Flowtrace => "flowtrace process",
            Kind::Tiles => "tile server",
        }
    }
}

/// The faults of the matrix.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Shape {
    Status500Once,
    Status500Always,
    TooManyRequests,
    Slow,
    Truncated,
    Html,
    Drop,
    WrongLength,
}

const SHAPES: [Shape; 8] = [
    Shape::Status500Once,
    Shape::Status500Always,
    Shape::TooManyRequests,
    Shape::Slow,
    Shape::Truncated,
    Shape::Html,
    Shape::Drop,
    Shape::WrongLength,
];

/// What a cell must come to.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Expect {
    /// The fault-free result, after one retry.
    Recovered,
    /// This error (status name as the C API reports it).
    Fails(&'static str),
}

impl Shape {
    fn label(self) -> &'static str {
        match self {
            Shape::Status500Once => "500 once",
            Shape::Status500Always => "500 always",
            Shape::TooManyRequests => "429+Retry-After",
            Shape::Slow => "slow>timeout",
            Shape::Truncated => "truncated",
            Shape::Html => "HTML",
            Shape::Drop => "dropped conn",
            Shape::WrongLength => "wrong length",
        }
    }

    fn fault(self, path: &str) -> Fault {
        let (kind, times) = match self {
            Shape::Status500Once => (FaultKind::Status(500), Some(1)),
            Shape::Status500Always => (FaultKind::Status(500), None),
            Shape::TooManyRequests => (FaultKind::TooManyRequests { retry_after_s: 1 }, Some(1)),
            Shape::Slow => (FaultKind::Slow(SLOW), None),
            Shape::Truncated => (FaultKind::TruncatedBody, None),
            Shape::Html => (FaultKind::Html, None),
            Shape::Drop => (FaultKind::DropConnection, None),
            Shape::WrongLength => (FaultKind::WrongContentLength, None),
        };
        Fault {
            path_contains: path.to_string(),
            kind,
            times,
        }
    }

    /// The whole-request timeout of this shape's context: short only where
    /// the timeout is the behaviour under test.
    fn timeout(self) -> Duration {
        match self {
            Shape::Slow => TIMEOUT,
            _ => UNHURRIED,
        }
    }

    fn expect(self) -> Expect {
        match self {
            Shape::Status500Once | Shape::TooManyRequests => Expect::Recovered,
            Shape::Status500Always => Expect::Fails("HTTP 500"),
            Shape::Slow | Shape::Truncated | Shape::Drop => Expect::Fails("NETWORK"),
            // A 200 whose body is not the document: not worth retrying.
            Shape::Html | Shape::WrongLength => Expect::Fails("SERVICE"),
        }
    }

    /// Whether the failure is retried (so the faulted path sees 1 + RETRIES requests).
    fn retried(self) -> bool {
        !matches!(self, Shape::Html | Shape::WrongLength)
    }
}

/// The C API's name of an error's status.
fn status_name(e: &Error) -> String {
    match e {
        Error::Http { status, .. } => format!("HTTP {status}"),
        Error::Network(_) => "NETWORK".into(),
        Error::Service(_) => "SERVICE".into(),
        Error::NotFound { .. } => "NOT_FOUND".into(),
        Error::Limit(_) => "LIMIT".into(),
        other => format!("{other:?}"),
    }
}

fn context(server: &MockServer, tile_cache: &Path, timeout: Duration) -> Context {
    Context::new(Config {
        index_url: server.index_url(),
        fabric_url: server.fabric_url(),
        tile_url: Some(server.tile_url()),
        tile_cache_dir: tile_cache.to_path_buf(),
        timeout,
        connect_timeout: Duration::from_secs(1),
        retries: RETRIES,
        ..support::config()
    })
    .unwrap()
}

fn temp_dir(name: &str) -> PathBuf {
    crate::scratch::temp_dir(&format!("faults-{name}"))
}

/// Files in `dir` (none when it does not exist).
fn files_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// What one request kind produced: a comparable rendering of its result,
/// the warnings (tiles), or its error.
struct Outcome {
    result: Result<Vec<u8>, Error>,
    warnings: Vec<String>,
}

fn features_bytes(r: hydroplot::Result<Vec<Feature>>) -> Result<Vec<u8>, Error> {
    r.map(|f| to_geojson(&f))
}

/// The outcome with the server's own address (in link URLs) replaced, so
/// results from different servers compare equal.
fn normalized(mut out: Outcome, server: &MockServer) -> Outcome {
    if let Ok(bytes) = &mut out.result {
        if let Ok(text) = std::str::from_utf8(bytes) {
            *bytes = text.replace(&server.base_url(), "BASE").into_bytes();
        }
    }
    out
}

/// Runs `kind` once against the context.
fn run(kind: Kind, ctx: &Context, tile_cache: &Path) -> Outcome {
    let mut warnings = Vec::new();
    let result = match kind {
        Kind::Feature => {
            index::feature(ctx, "comid", &OUTLET.to_string()).map(|f| to_geojson(&[f]))
        }
        Kind::Basin => index::basin(ctx, "comid", &OUTLET.to_string()).map(|f| to_geojson(&[f])),
        Kind::CatchmentLookup => fabric::catchments_at_point(ctx, POINT.0, POINT.1)
            .map(|ids| format!("{ids:?}").into_bytes()),
        Kind::ItemsGet => features_bytes(fabric::items(
            ctx,
            Collection::FlowlineNetwork,
            &ItemsQuery::BBox {
                bbox: BBOX,
                filter: None,
            },
            "flowline",
        )),
        Kind::ItemsPost => features_bytes(fabric::items(
            ctx,
            Collection::FlowlineNetwork,
            &ItemsQuery::In {
                property: "comid",
                ids: &[13293970, 13294176, 13293454, 13294312],
            },
            "flowline",
        )),
        Kind::Flowtrace => flowtrace::raindrop_trace(ctx, POINT.0, POINT.1, None, Some("up"))
            .map(|t| t.to_geojson()),
        Kind::Tiles => Map::new(
            ctx,
            BBOX,
            "EPSG:4269",
            (300, 200),
            "OpenStreetMap",
            None,
            &TileCacheMode::Dir(tile_cache.to_path_buf()),
            &mut warnings,
        )
        .map(|m| m.pixmap().data().to_vec()),
    };
    Outcome { result, warnings }
}

/// One cell: runs `kind` under `shape` on a server of its own and checks it.
/// Returns the table text, or a failure description.
fn cell(
    kind: Kind,
    shape: Shape,
    baseline: &[u8],
    baseline_requests: usize,
) -> Result<String, String> {
    let server = MockServer::start();
    let cache = temp_dir(&format!("{kind:?}-{shape:?}"));
    // The log says what the client decided (a retry's wait), so no clock is read.
    let (ctx, log) = Recorder::attach(context(&server, &cache, shape.timeout()));
    server.set_fault(shape.fault(kind.path()));
    let out = normalized(run(kind, &ctx, &cache), &server);
    let faulted = server
        .requests()
        .iter()
        .filter(|r| {
            let target = if r.query.is_empty() {
                r.path.clone()
            } else {
                format!("{}?{}", r.path, r.query)
            };
            target.contains(kind.path())
        })
        .count();
    let base = server.base_url();
    let fail = |why: String| Err(format!("{} x {}: {why}", kind.label(), shape.label()));

    // Tiles: a failed tile is a warning and never a failed map.
    let (outcome, message) = match (&out.result, kind) {
        (Err(e), _) => (Err(status_name(e)), e.to_string()),
        (Ok(_), Kind::Tiles) if !out.warnings.is_empty() => {
            let w = out.warnings.join(" | ");
            let status = if w.contains("HTTP 500") {
                "HTTP 500"
            } else if w.contains("timed out") || w.contains("failed:") {
                "NETWORK"
            } else if w.contains("unreadable image") {
                "SERVICE"
            } else {
                "?"
            };
            (Err(status.to_string()), w)
        }
        (Ok(bytes), _) => (Ok(bytes.clone()), String::new()),
    };
    let text = match (shape.expect(), outcome) {
        (Expect::Recovered, Ok(bytes)) => {
            if bytes != baseline {
                return fail("recovered with a result that differs from the fault-free run".into());
            }
            if faulted < 2 {
                return fail(format!("recovered without a retry ({faulted} requests)"));
            }
            if shape == Shape::TooManyRequests && !log.warned("in 1.0 s") {
                return fail("Retry-After: 1 not honoured (no retry waited 1.0 s)".into());
            }
            if kind == Kind::Tiles && files_in(&cache).len() != baseline_requests {
                return fail(format!(
                    "{} tiles cached, {baseline_requests} expected",
                    files_in(&cache).len()
                ));
            }
            format!("ok, {} req", server.requests().len())
        }
        (Expect::Recovered, Err(status)) => {
            return fail(format!("expected recovery, got {status}: {message}"))
        }
        (Expect::Fails(want), Ok(_)) => return fail(format!("expected {want}, got success")),
        (Expect::Fails(want), Err(status)) => {
            if status != want {
                return fail(format!("expected {want}, got {status}: {message}"));
            }
            if !message.contains(kind.service())
                && !message.contains(&kind.service().replace(' ', ""))
            {
                return fail(format!(
                    "message does not name the {}: {message}",
                    kind.service()
                ));
            }
            if !message.contains(&base) {
                return fail(format!(
                    "message does not name the URL ({base}...): {message}"
                ));
            }
            let want_requests = if shape.retried() {
                1 + RETRIES as usize
            } else {
                1
            };
            // Tiles: every tile of the map is faulted.
            let want_requests = if kind == Kind::Tiles {
                want_requests * baseline_requests
            } else {
                want_requests
            };
            if faulted != want_requests {
                return fail(format!(
                    "{faulted} requests to the faulted path, {want_requests} expected"
                ));
            }
            if shape.retried() && !message.contains(&format!("gave up after {RETRIES} retries")) {
                return fail(format!(
                    "message does not say it gave up after retrying: {message}"
                ));
            }
            if kind == Kind::Tiles && !files_in(&cache).is_empty() {
                return fail(format!("a failed tile was cached: {:?}", files_in(&cache)));
            }
            status
        }
    };
    let _ = std::fs::remove_dir_all(&cache);
    Ok(text)
}

/// `work` over `items` on `threads` plain threads; results in input order.
///
/// Not `hydroplot::parallel::parallel_map`: that relays the observer calls
/// of its helper threads to the calling thread, which runs them only as
/// items finish, so a cell reading its own log could miss its retry
/// messages still queued there. Each cell here is its own caller.
fn on_plain_threads<T: Sync, R: Send>(
    threads: usize,
    items: &[T],
    work: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let done = std::sync::Mutex::new(Vec::with_capacity(items.len()));
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(item) = items.get(i) else { break };
                let r = work(item);
                done.lock().unwrap().push((i, r));
            });
        }
    });
    let mut done = done.into_inner().unwrap();
    done.sort_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, r)| r).collect()
}

#[test]
fn every_request_kind_under_every_fault() {
    // Fault-free results and request counts, one server per kind.
    let baselines: Vec<(Vec<u8>, usize)> = KINDS
        .iter()
        .map(|&kind| {
            let server = MockServer::start();
            let cache = temp_dir(&format!("{kind:?}-baseline"));
            let out = normalized(
                run(kind, &context(&server, &cache, UNHURRIED), &cache),
                &server,
            );
            assert!(out.warnings.is_empty(), "{:?}", out.warnings);
            let bytes = out
                .result
                .unwrap_or_else(|e| panic!("{} without faults: {e}", kind.label()));
            let n = server
                .requests()
                .iter()
                .filter(|r| r.path.starts_with("/tiles/"))
                .count();
            let _ = std::fs::remove_dir_all(&cache);
            (bytes, n)
        })
        .collect();
    assert!(baselines[6].1 >= 2, "the tile map spans several tiles");

    // Every cell on a server of its own, 8 cells at a time (most of a cell is waiting).
    let cells: Vec<(usize, usize)> = (0..KINDS.len())
        .flat_map(|k| (0..SHAPES.len()).map(move |s| (k, s)))
        .collect();
    let results = on_plain_threads(8, &cells, |&(k, s)| {
        cell(KINDS[k], SHAPES[s], &baselines[k].0, baselines[k].1)
    });

    let mut table = format!("\n{:<17}", "request \\ fault");
    for s in SHAPES {
        table.push_str(&format!("| {:<15}", s.label()));
    }
    table.push('\n');
    table.push_str(&"-".repeat(17 + 17 * SHAPES.len()));
    table.push('\n');
    for (k, kind) in KINDS.iter().enumerate() {
        table.push_str(&format!("{:<17}", kind.label()));
        for s in 0..SHAPES.len() {
            let text = match &results[k * SHAPES.len() + s] {
                Ok(t) => t.clone(),
                Err(_) => "FAILED".into(),
            };
            table.push_str(&format!("| {text:<15}"));
        }
        table.push('\n');
    }
    println!("{table}");
    let failures: Vec<&String> = results.iter().filter_map(|r| r.as_ref().err()).collect();
    assert!(
        failures.is_empty(),
        "{} of {} cells failed:\n{}",
        failures.len(),
        results.len(),
        failures
            .iter()
            .map(|f| f.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// Upstream of the Yahara outlet, written to `gpkg` and cached in `cache`.
fn pipeline_request(gpkg: &Path, cache: &Path) -> PlotRequest {
    PlotRequest {
        outlets: vec![Outlet::Comid(OUTLET)],
        gpkg: Some(gpkg.to_path_buf()),
        cache: CacheSetting::File(cache.to_path_buf()),
        basemap: "none".into(),
        actually_plot: false,
        ..PlotRequest::default()
    }
}

#[test]
fn a_failed_plot_leaves_no_output_no_temp_file_and_no_cache_entry() {
    let shapes = [
        Shape::Status500Always,
        Shape::Truncated,
        Shape::Html,
        Shape::Drop,
        Shape::WrongLength,
    ];
    let paths = ["nhdflowline_network/items", "catchmentsp/items", "/basin"];
    let cases: Vec<(Shape, &str)> = shapes
        .iter()
        .flat_map(|&s| paths.iter().map(move |&p| (s, p)))
        .collect();
    let outcomes = hydroplot::parallel::parallel_map(
        8,
        &cases,
        |&(shape, path)| {
            let server = MockServer::start();
            let dir = temp_dir(&format!("pipeline-{shape:?}-{}", path.replace('/', "_")));
            let ctx = context(&server, &dir.join("tiles"), UNHURRIED);
            let (gpkg, cache) = (dir.join("out.gpkg"), dir.join("plot-cache.sqlite"));
            let req = pipeline_request(&gpkg, &cache);
            server.set_fault(shape.fault(path));
            let failed = plot_hydro(&ctx, &req, None).err().map(|e| status_name(&e));
            let left = files_in(&dir);
            let key = request_key(&ctx, &req).unwrap();
            let cached = PlotCache::open(&ctx, &cache, &mut Vec::new())
                .and_then(|c| c.get(&key))
                .is_some();

            // The same request without faults fetches afresh and succeeds.
            server.clear_faults();
            server.clear_requests();
            let data = plot_hydro(&ctx, &req, None).unwrap().data;
            let refetched = !server.requests().is_empty();
            let again = files_in(&dir);
            let _ = std::fs::remove_dir_all(&dir);
            (
                failed,
                left,
                cached,
                refetched,
                data.layer(Layer::Flowline).len(),
                again,
            )
        },
        |_, _| {},
    );
    for ((shape, path), (failed, left, cached, refetched, flowlines, again)) in
        cases.iter().zip(outcomes)
    {
        let case = format!("{} on {path}", shape.label());
        let Expect::Fails(want) = shape.expect() else {
            unreachable!()
        };
        assert_eq!(failed.as_deref(), Some(want), "{case}");
        assert!(
            !left.iter().any(|f| f.contains("gpkg") || f.contains("tmp")),
            "{case}: left {left:?}"
        );
        assert!(!cached, "{case}: the failed run left a cache entry");
        assert!(
            refetched,
            "{case}: the retry was answered from a poisoned cache"
        );
        assert_eq!(flowlines, 251, "{case}");
        assert!(again.contains(&"out.gpkg".to_string()), "{case}: {again:?}");
    }
}
