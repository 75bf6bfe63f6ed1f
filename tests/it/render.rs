//! Pixel tests of the map renderer against the loopback mock tile server
//! (one solid colour per tile, `mock::tile_color`) and the Yahara sample.
//!
//! Reference images live in `tests/data/render/`. A test run never writes
//! them: blessing is a separate, reviewed step.
//!
//! 1. `cargo xtask bless-render` runs these tests with
//!    `HYDROPLOT_RENDER_CANDIDATES` set to `<target dir>/bless`; the tests
//!    write each image they render there (and still compare it with the
//!    reference), and the task prints the candidates' paths for review.
//! 2. `cargo xtask bless-render --accept` copies the reviewed
//!    candidates in `<target dir>/bless` over `tests/data/render/`.
//!
//! Besides the references, the pixel tests assert facts computed by hand in
//! the test (Web Mercator positions of known points, colours of the styles).

use crate::support;

use hydroplot::config::Config;
use hydroplot::crs::Transformer;
use hydroplot::feature::Feature;
use hydroplot::plot::{plot_hydro, Layer, Outlet, PlotData, PlotRequest};
use hydroplot::render::style::PlotStyles;
use hydroplot::render::tile_cache::{TileCache, DEFAULT_MAX_BYTES};
use hydroplot::render::tiles::{tile_range, zoom_for, TILE_PX};
use hydroplot::render::view::HALF_WORLD_M;
use hydroplot::render::{Map, MapSpec, TileCacheMode};
use hydroplot::Context;
use hydroplot_mock::{self as mock, Fault, FaultKind, MockServer};
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use support::georef::rgba;

const YAHARA_OUTLET: i64 = 13293970;

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

fn temp_dir(name: &str) -> PathBuf {
    crate::scratch::temp_dir(&format!("render-{name}"))
}

/// The Yahara sample upstream of the outlet, from the local GeoPackage, not drawn.
fn yahara(ctx: &Context) -> PlotData {
    let req = PlotRequest {
        outlets: vec![Outlet::Comid(YAHARA_OUTLET)],
        hydro_data: Some(data_dir().join("yahara_sample.gpkg")),
        actually_plot: false,
        ..PlotRequest::default()
    };
    let plot = plot_hydro(ctx, &req, None).unwrap();
    assert!(plot.map.is_none(), "actually_plot = false builds no map");
    let data = plot.data;
    assert_eq!(data.layer(Layer::Flowline).len(), 251);
    data
}

fn tile_requests(server: &MockServer) -> usize {
    server
        .requests()
        .iter()
        .filter(|r| r.path.starts_with("/tiles/"))
        .count()
}

fn rgb(map: &Map, x: f32, y: f32) -> [u8; 3] {
    let c = map.pixmap().pixel(x as u32, y as u32).unwrap().demultiply();
    [c.red(), c.green(), c.blue()]
}

fn near(a: [u8; 3], b: [u8; 3], tol: u8) -> bool {
    a.iter().zip(b).all(|(x, y)| x.abs_diff(y) <= tol)
}

/// The pixel position of a lon/lat (NAD83) point on `map`.
fn px(map: &Map, lon: f64, lat: f64) -> (f32, f32) {
    let (x, y) = Transformer::new("EPSG:4269", "EPSG:3857")
        .unwrap()
        .point(lon, lat)
        .unwrap();
    map.view().to_px(x, y)
}

fn vertices(f: &Feature) -> Vec<(f64, f64)> {
    use geo::CoordsIter;
    f.geometry
        .as_ref()
        .map(|g| g.coords_iter().map(|c| (c.x, c.y)).collect())
        .unwrap_or_default()
}

/// Distance (pixels) from `p` to the segment `a`-`b`.
fn seg_dist(p: (f32, f32), a: (f32, f32), b: (f32, f32)) -> f32 {
    let (dx, dy) = (b.0 - a.0, b.1 - a.1);
    let len2 = dx * dx + dy * dy;
    let t = if len2 == 0.0 {
        0.0
    } else {
        (((p.0 - a.0) * dx + (p.1 - a.1) * dy) / len2).clamp(0.0, 1.0)
    };
    ((p.0 - a.0 - t * dx).powi(2) + (p.1 - a.1 - t * dy).powi(2)).sqrt()
}

/// Distance (pixels) from `p` to the nearest drawn segment of `features`.
fn dist_to_lines(map: &Map, p: (f32, f32), features: &[&Feature]) -> f32 {
    let mut best = f32::INFINITY;
    for f in features {
        let pts: Vec<(f32, f32)> = vertices(f)
            .into_iter()
            .map(|(x, y)| px(map, x, y))
            .collect();
        for w in pts.windows(2) {
            best = best.min(seg_dist(p, w[0], w[1]));
        }
    }
    best
}

/// A map of `bbox` in `crs` with no basemap and no tile cache.
/// A map of `bbox` (NAD83) on the OpenStreetMap basemap, its tiles as the
/// context's `tile_url` says.
fn osm_map(
    ctx: &hydroplot::Context,
    bbox: [f64; 4],
    size: (u32, u32),
    cache: &TileCacheMode,
    warnings: &mut Vec<String>,
) -> Map {
    Map::new(
        ctx,
        bbox,
        "EPSG:4269",
        size,
        "OpenStreetMap",
        None,
        cache,
        warnings,
    )
    .unwrap()
}

fn map_without_basemap(
    ctx: &hydroplot::Context,
    bbox: [f64; 4],
    crs: &str,
    size: (u32, u32),
) -> Map {
    Map::new(
        ctx,
        bbox,
        crs,
        size,
        "none",
        None,
        &TileCacheMode::Off,
        &mut Vec::new(),
    )
    .unwrap()
}

#[test]
fn yahara_layers_land_on_their_pixels() {
    let server = MockServer::start();
    let ctx = mock::context(&server);
    let data = yahara(&ctx);
    let mut styles = PlotStyles::default();
    styles.set("flowline", "lwd", "3").unwrap();
    styles.set("basin", "lwd", "3").unwrap();
    let mut warnings = Vec::new();
    let mut map = Map::new(
        &ctx,
        data.bbox,
        "EPSG:4269",
        (1024, 768),
        "none",
        None,
        &TileCacheMode::Off,
        &mut warnings,
    )
    .unwrap();
    assert!(warnings.is_empty());
    assert_eq!(tile_requests(&server), 0, "basemap none fetches no tile");
    hydroplot::plot::draw_plot_data(&mut map, &data, &styles, true).unwrap();

    let outlets = data.layer(Layer::Outlets).to_features();
    assert_eq!(outlets.len(), 1);
    let (olon, olat) = vertices(&outlets[0])[0];
    let outlet_px = px(&map, olon, olat);

    // A flowline vertex far from the outlet symbol: the flowline colour.
    let flowlines = data.layer(Layer::Flowline).to_features();
    let (fx, fy) = flowlines
        .iter()
        .flat_map(vertices)
        .map(|(x, y)| px(&map, x, y))
        .find(|p| (p.0 - outlet_px.0).hypot(p.1 - outlet_px.1) > 40.0)
        .unwrap();
    assert_eq!(
        rgb(&map, fx, fy),
        [0, 0, 255],
        "flowline vertex at ({fx}, {fy})"
    );

    // The basin border vertex farthest from every flowline and waterbody: black.
    let other_features: Vec<Feature> = [Layer::Flowline, Layer::NetworkWtbd, Layer::OffNetworkWtbd]
        .iter()
        .flat_map(|l| data.layer(*l).to_features())
        .collect();
    let others: Vec<&Feature> = other_features.iter().collect();
    let basins = data.layer(Layer::Basin).to_features();
    let basin = &basins[0];
    let (bp, clearance) = vertices(basin)
        .into_iter()
        .step_by(7)
        .map(|(x, y)| px(&map, x, y))
        .map(|p| (p, dist_to_lines(&map, p, &others)))
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .unwrap();
    assert!(clearance > 5.0, "{clearance}");
    assert_eq!(rgb(&map, bp.0, bp.1), [0, 0, 0], "basin border at {bp:?}");

    // The outlet (a comid outlet: outlets.default, pch 19 black) covers its point.
    for (dx, dy) in [(0.0, 0.0), (3.0, 0.0), (0.0, -3.0), (-3.0, 2.0)] {
        assert_eq!(
            rgb(&map, outlet_px.0 + dx, outlet_px.1 + dy),
            [0, 0, 0],
            "outlet at {outlet_px:?}"
        );
    }
    // The basin is not filled (col = NA): the canvas shows through inside.
    let inside = vertices(flowlines.iter().max_by_key(|f| vertices(f).len()).unwrap());
    let mid = px(&map, inside[0].0, inside[0].1);
    let probe = (mid.0 + 12.0, mid.1);
    if dist_to_lines(&map, probe, &others) > 4.0 && dist_to_lines(&map, probe, &[basin]) > 4.0 {
        assert_eq!(rgb(&map, probe.0, probe.1), [255, 255, 255]);
    }

    // The PNG decodes to the canvas size, furniture included.
    let (w, h, pixels) = rgba(&map.png().unwrap());
    assert_eq!((w, h), (1024, 768));
    assert_eq!(pixels.len(), 1024 * 768 * 4);
}

#[test]
fn tile_mosaic_is_placed_right_and_cached() {
    let server = MockServer::start();
    let ctx = mock::context(&server);
    let cache_dir = temp_dir("mosaic");
    let cache = TileCacheMode::Dir(cache_dir.clone());
    let bbox = [-89.56684, 42.99816, -89.24681, 43.17192];
    let mut warnings = Vec::new();
    let map = osm_map(&ctx, bbox, (1024, 768), &cache, &mut warnings);
    assert!(warnings.is_empty(), "{warnings:?}");
    let view = *map.view();
    let z = zoom_for(view.resolution(), TILE_PX, 19);
    assert_eq!(z, 12, "26 km across 1024 px: about 27 m per pixel");
    let (x0, x1, y0, y1) = tile_range(&view, z);
    assert_eq!(tile_requests(&server) as i64, (x1 - x0 + 1) * (y1 - y0 + 1));

    // Each interior tile corner: its own colour just inside, the neighbours' outside.
    let size = 2.0 * HALF_WORLD_M / f64::from(1u32 << z);
    let mut checked = 0;
    for x in x0 + 1..=x1 {
        for y in y0 + 1..=y1 {
            let (cx, cy) = view.to_px(
                x as f64 * size - HALF_WORLD_M,
                HALF_WORLD_M - y as f64 * size,
            );
            let color = |tx: i64, ty: i64| mock::tile_color(u32::from(z), tx as u32, ty as u32);
            assert!(
                near(rgb(&map, cx + 2.0, cy + 2.0), color(x, y), 2),
                "tile {z}/{x}/{y} at ({cx}, {cy})"
            );
            assert!(near(rgb(&map, cx - 2.0, cy - 2.0), color(x - 1, y - 1), 2));
            assert!(near(rgb(&map, cx + 2.0, cy - 2.0), color(x, y - 1), 2));
            checked += 1;
        }
    }
    assert!(checked >= 4, "{checked}");

    // The same map again comes from the cache: no tile request.
    server.clear_requests();
    let again = osm_map(&ctx, bbox, (1024, 768), &cache, &mut warnings);
    assert_eq!(tile_requests(&server), 0);
    assert_eq!(again.pixmap().data(), map.pixmap().data());
    let cached = std::fs::read_dir(&cache_dir).unwrap().count() as i64;
    assert_eq!(cached, (x1 - x0 + 1) * (y1 - y0 + 1));

    // cache_data = FALSE: fetched again, nothing new written.
    std::fs::remove_dir_all(&cache_dir).unwrap();
    osm_map(&ctx, bbox, (1024, 768), &TileCacheMode::Off, &mut warnings);
    assert!(tile_requests(&server) > 0);
    assert!(!cache_dir.exists());
}

#[test]
fn a_failing_tile_is_a_warning_and_a_blank_area() {
    let server = MockServer::start();
    let ctx = mock::context(&server);
    let bbox = [-89.56684, 42.99816, -89.24681, 43.17192];
    let probe = map_without_basemap(&ctx, bbox, "EPSG:4269", (600, 400));
    let view = *probe.view();
    let z = zoom_for(view.resolution(), TILE_PX, 19);
    let (x0, x1, y0, y1) = tile_range(&view, z);
    let (bx, by) = ((x0 + x1) / 2, (y0 + y1) / 2);
    server.set_fault(Fault {
        path_contains: format!("/tiles/{z}/{bx}/{by}.png"),
        kind: FaultKind::Status(404),
        times: None,
    });
    let mut warnings = Vec::new();
    let map = osm_map(&ctx, bbox, (600, 400), &TileCacheMode::Off, &mut warnings);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    let total = (x1 - x0 + 1) * (y1 - y0 + 1);
    assert!(
        warnings[0].starts_with(&format!("1 of {total} basemap tiles")),
        "{}",
        warnings[0]
    );
    assert!(warnings[0].contains(&format!("tile {z}/{bx}/{by}")));
    let size = 2.0 * HALF_WORLD_M / f64::from(1u32 << z);
    let centre = (
        (bx as f64 + 0.5) * size - HALF_WORLD_M,
        HALF_WORLD_M - (by as f64 + 0.5) * size,
    );
    let (cx, cy) = view.to_px(centre.0, centre.1);
    assert_eq!(
        rgb(&map, cx, cy),
        [255, 255, 255],
        "the failed tile is blank"
    );
    // A basemap that fails entirely still gives a map.
    server.set_fault(Fault {
        path_contains: "/tiles/".into(),
        kind: FaultKind::Status(404),
        times: None,
    });
    let mut warnings = Vec::new();
    let map = osm_map(&ctx, bbox, (600, 400), &TileCacheMode::Off, &mut warnings);
    assert!(warnings[0].starts_with(&format!("{total} of {total}")));
    assert!(map.png().is_ok());
}

/// A loopback tile server answering every request with `tile`, or, when
/// `None`, reading requests and never answering (a black-holed tile host).
/// Returns its `tile_url` template and the count of requests it has read.
fn loopback_tiles(tile: Option<Vec<u8>>) -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!(
        "http://{}/{{z}}/{{x}}/{{y}}.png",
        listener.local_addr().unwrap()
    );
    let requests = Arc::new(AtomicUsize::new(0));
    let (counter, tile) = (requests.clone(), Arc::new(tile));
    // Detached: the threads end with the test process.
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            let (counter, tile) = (counter.clone(), tile.clone());
            std::thread::spawn(move || answer_tiles(stream, tile.as_deref(), &counter));
        }
    });
    (url, requests)
}

/// Serves one connection until the client closes it: counts each request
/// (a head; tile requests have no body) and answers it with `tile`, if any.
fn answer_tiles(stream: TcpStream, tile: Option<&[u8]>, requests: &AtomicUsize) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut writer = stream;
    let (mut line, mut head_lines) = (String::new(), 0);
    loop {
        line.clear();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        if !line.trim().is_empty() {
            head_lines += 1;
            continue;
        }
        if head_lines == 0 {
            continue;
        }
        head_lines = 0;
        requests.fetch_add(1, Ordering::SeqCst);
        if let Some(tile) = tile {
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: image/png\r\nContent-Length: {}\r\n\r\n",
                tile.len()
            );
            if writer.write_all(head.as_bytes()).is_err() || writer.write_all(tile).is_err() {
                return;
            }
        }
    }
}

/// A `side` x `side` PNG of one colour.
fn solid_png(side: u32, color: [u8; 3]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut enc = png::Encoder::new(&mut out, side, side);
    enc.set_color(png::ColorType::Rgb);
    enc.set_depth(png::BitDepth::Eight);
    let pixels = color.repeat((side * side) as usize);
    enc.write_header()
        .unwrap()
        .write_image_data(&pixels)
        .unwrap();
    out
}

/// The leading count of the warning `w` ("3 of 20 basemap tiles ...").
fn leading_count(w: &str) -> i64 {
    w.split(' ').next().unwrap().parse().unwrap()
}

/// Tile servers send 256 or 512 pixels a side, 1,024 for the `@2x` of
/// 512-pixel tiles; a server sending more (a few KB of PNG that decodes to
/// tens of MiB) has every such tile refused and left blank, with one
/// warning, while the map is still made.
#[test]
fn tiles_larger_than_tile_servers_send_are_refused_and_left_blank() {
    let bbox = [-89.56684, 42.99816, -89.24681, 43.17192];
    let draw = |side: u32, color: [u8; 3]| {
        let (tile_url, requests) = loopback_tiles(Some(solid_png(side, color)));
        let ctx = Context::new(Config {
            tile_url: Some(tile_url),
            retries: 0,
            ..support::config()
        })
        .unwrap();
        let mut warnings = Vec::new();
        let map = osm_map(&ctx, bbox, (600, 400), &TileCacheMode::Off, &mut warnings);
        let view = *map.view();
        let (x0, x1, y0, y1) = tile_range(&view, zoom_for(view.resolution(), TILE_PX, 19));
        let total = (x1 - x0 + 1) * (y1 - y0 + 1);
        assert_eq!(requests.load(Ordering::SeqCst) as i64, total);
        (map, warnings, total)
    };
    let centre = (300.0, 200.0);

    let (map, warnings, _) = draw(1024, [30, 160, 90]);
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(rgb(&map, centre.0, centre.1), [30, 160, 90]);

    let (map, warnings, total) = draw(2048, [200, 30, 30]);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].starts_with(&format!("{total} of {total} basemap tiles")),
        "{}",
        warnings[0]
    );
    assert!(warnings[0].contains("2048x2048 pixels"), "{}", warnings[0]);
    assert_eq!(rgb(&map, centre.0, centre.1), [255, 255, 255]);
    assert!(map.png().is_ok());
}

/// A tile host that accepts connections and never answers: the tiles asked
/// for time out, and once the basemap's time budget (twice `timeout_s`) is
/// spent the others are not asked for at all, except that the tile cache
/// still serves; each group is one warning, and the map is still made.
#[test]
fn a_tile_host_that_never_answers_costs_the_basemap_its_time_budget_only() {
    let (tile_url, requests) = loopback_tiles(None);
    let timeout = Duration::from_millis(200);
    let ctx = Context::new(Config {
        tile_url: Some(tile_url.clone()),
        timeout,
        connect_timeout: timeout,
        retries: 0,
        concurrency: 1,
        ..support::config()
    })
    .unwrap();
    let bbox = [-89.56684, 42.99816, -89.24681, 43.17192];
    let view = *map_without_basemap(&ctx, bbox, "EPSG:4269", (1024, 768)).view();
    let z = zoom_for(view.resolution(), TILE_PX, 19);
    let (x0, x1, y0, y1) = tile_range(&view, z);
    let total = (x1 - x0 + 1) * (y1 - y0 + 1);
    // The last tile fetched (one at a time, row by row) is in the cache.
    let cache_dir = temp_dir("budget");
    let magenta = [255, 0, 255];
    let last = tile_url
        .replace("{z}", &z.to_string())
        .replace("{x}", &x1.to_string())
        .replace("{y}", &y1.to_string());
    let max_age = [("cache-control".to_string(), "max-age=3600".to_string())];
    TileCache::open(&cache_dir, DEFAULT_MAX_BYTES)
        .unwrap()
        .put(&last, &max_age, &solid_png(256, magenta))
        .unwrap();

    let mut warnings = Vec::new();
    let map = osm_map(
        &ctx,
        bbox,
        (1024, 768),
        &TileCacheMode::Dir(cache_dir.clone()),
        &mut warnings,
    );
    assert_eq!(*map.view(), view);
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    let (failed, skipped) = (leading_count(&warnings[0]), leading_count(&warnings[1]));
    assert!(
        warnings[0].starts_with(&format!(
            "{failed} of {total} basemap tiles could not be used"
        )) && warnings[0].contains("timed out"),
        "{}",
        warnings[0]
    );
    assert!(
        warnings[1].starts_with(&format!(
            "{skipped} of {total} basemap tiles were not requested"
        )) && warnings[1].contains("time budget"),
        "{}",
        warnings[1]
    );
    assert_eq!(failed + skipped + 1, total);
    assert!(failed >= 1 && skipped >= 1, "{warnings:?}");
    // The tiles given up on never reached the server.
    assert!(requests.load(Ordering::SeqCst) as i64 <= failed);
    assert_eq!(rgb(&map, 512.0, 384.0), [255, 255, 255]);
    // The cached tile is drawn: the middle of its part of the canvas.
    let size = 2.0 * HALF_WORLD_M / f64::from(1u32 << z);
    let corner = |x: i64, y: i64| {
        view.to_px(
            x as f64 * size - HALF_WORLD_M,
            HALF_WORLD_M - y as f64 * size,
        )
    };
    let ((left, top), (right, bottom)) = (corner(x1, y1), corner(x1 + 1, y1 + 1));
    let (right, bottom) = (right.min(1024.0), bottom.min(768.0));
    assert!(right - left > 8.0 && bottom - top > 8.0);
    assert_eq!(
        rgb(&map, (left + right) / 2.0, (top + bottom) / 2.0),
        magenta
    );
    std::fs::remove_dir_all(&cache_dir).unwrap();
}

#[test]
fn add_draws_onto_an_existing_map_without_a_basemap() {
    let server = MockServer::start();
    let ctx = mock::context(&server);
    let data = yahara(&ctx);
    let mut map = map_without_basemap(&ctx, data.bbox, "EPSG:4269", (800, 600));
    let req = PlotRequest {
        outlets: vec![Outlet::Comid(YAHARA_OUTLET)],
        hydro_data: Some(data_dir().join("yahara_sample.gpkg")),
        styles: {
            let mut s = PlotStyles::default();
            s.set("flowline", "col", "red").unwrap();
            s.set("flowline", "lwd", "3").unwrap();
            s
        },
        ..PlotRequest::default()
    };
    let added = plot_hydro(&ctx, &req, Some(&mut map)).unwrap();
    assert!(added.map.is_none(), "drawn onto the caller's map");
    assert_eq!(tile_requests(&server), 0);
    let outlet = vertices(&data.layer(Layer::Outlets).to_features()[0])[0];
    let op = px(&map, outlet.0, outlet.1);
    let (x, y) = data
        .layer(Layer::Flowline)
        .to_features()
        .iter()
        .flat_map(vertices)
        .map(|(x, y)| px(&map, x, y))
        .find(|p| (p.0 - op.0).hypot(p.1 - op.1) > 40.0)
        .unwrap();
    assert_eq!(rgb(&map, x, y), [255, 0, 0]);
}

#[test]
fn added_layers_are_projected_from_their_crs() {
    let server = MockServer::start();
    let ctx = mock::context(&server);
    let bbox = [-89.5, 43.0, -89.3, 43.15];
    let mut map = map_without_basemap(&ctx, bbox, "EPSG:4326", (400, 300));
    // A point given in EPSG:5070 lands where its lon/lat projects.
    let (ax, ay) = Transformer::new("EPSG:4326", "EPSG:5070")
        .unwrap()
        .point(-89.4, 43.07)
        .unwrap();
    map.add_point(ax, ay, "EPSG:5070", 15, "red", 1.0).unwrap();
    let (x, y) = px(&map, -89.4, 43.07);
    assert_eq!(rgb(&map, x, y), [255, 0, 0]);
    // GeoJSON polygon in EPSG:3857, filled and bordered.
    let t = Transformer::new("EPSG:4326", "EPSG:3857").unwrap();
    let ring: Vec<(f64, f64)> = [
        (-89.48, 43.01),
        (-89.44, 43.01),
        (-89.44, 43.04),
        (-89.48, 43.04),
        (-89.48, 43.01),
    ]
    .iter()
    .map(|&(lon, lat)| t.point(lon, lat).unwrap())
    .collect();
    let coords: Vec<String> = ring.iter().map(|(x, y)| format!("[{x},{y}]")).collect();
    let gj = format!(
        r#"{{"type":"Polygon","coordinates":[[{}]]}}"#,
        coords.join(",")
    );
    map.add_geojson(
        gj.as_bytes(),
        "EPSG:3857",
        Some("black"),
        Some("#00FF0080"),
        2.0,
    )
    .unwrap();
    let (cx, cy) = px(&map, -89.46, 43.025);
    assert!(
        near(rgb(&map, cx, cy), [127, 255, 127], 2),
        "{:?}",
        rgb(&map, cx, cy)
    );
    let (ex, ey) = px(&map, -89.48, 43.025);
    assert_eq!(rgb(&map, ex, ey), [0, 0, 0]);
    // Bad input is an invalid argument and draws nothing.
    let before = map.pixmap().clone();
    assert!(map
        .add_geojson(b"{\"type\":\"Nope\"}", "EPSG:4326", None, None, 1.0)
        .is_err());
    assert!(map
        .add_point(-89.4, 43.1, "EPSG:4326", 26, "red", 1.0)
        .is_err());
    assert!(map
        .add_point(-89.4, 43.1, "EPSG:4326", 1, "rouge", 1.0)
        .is_err());
    assert!(map
        .add_point(-89.4, 43.1, "EPSG:99999", 1, "red", 1.0)
        .is_err());
    assert_eq!(map.pixmap(), &before);
}

#[test]
fn hidpi_doubles_the_png() {
    let server = MockServer::start();
    let ctx = mock::context(&server);
    let spec = MapSpec {
        bbox: [-89.5, 43.0, -89.3, 43.15],
        crs: "EPSG:4326",
        size: (300, 200),
        scale: 2.0,
        basemap: "OpenStreetMap",
        zoom: None,
    };
    let map = Map::with_spec(&ctx, &spec, &TileCacheMode::Off, &mut Vec::new()).unwrap();
    let (w, h, _) = rgba(&map.png().unwrap());
    assert_eq!((w, h), (600, 400));
}

/// Web Mercator by hand, independent of the library's projection code: the
/// spherical formulas of EPSG:3857 (R = 6378137 m), the slippy-map tile
/// numbering, and the frame a map of `bbox` gets (centred, aspect kept, 4 %
/// of the canvas free on each side, as `render::view` documents).
mod by_hand {
    pub use crate::support::georef::mercator;

    /// The 3857 extent `[xmin, ymin, xmax, ymax]` of a `w` x `h` canvas
    /// showing the lon/lat `bbox`.
    pub fn extent(bbox: [f64; 4], (w, h): (u32, u32)) -> [f64; 4] {
        crate::support::georef::extent_by_hand(bbox, (f64::from(w), f64::from(h)))
    }

    /// The pixel (column, row) holding a lon/lat point on a canvas `width`
    /// pixels wide covering `extent`.
    pub fn pixel(extent: [f64; 4], width: u32, lon: f64, lat: f64) -> (f64, f64) {
        let (x, y) = mercator(lon, lat);
        let res = (extent[2] - extent[0]) / f64::from(width);
        ((x - extent[0]) / res, (extent[3] - y) / res)
    }

    /// The slippy-map tile `(x, y)` holding a lon/lat point at zoom `z`, and
    /// the point's position inside it in 0..1 (to keep probes off borders).
    pub fn tile(z: u8, lon: f64, lat: f64) -> ((u32, u32), (f64, f64)) {
        let n = f64::from(1u32 << z);
        let lat = lat.to_radians();
        let tx = (lon + 180.0) / 360.0 * n;
        let ty = (1.0 - (lat.tan() + 1.0 / lat.cos()).ln() / std::f64::consts::PI) / 2.0 * n;
        ((tx as u32, ty as u32), (tx.fract(), ty.fract()))
    }
}

#[test]
fn hand_computed_web_mercator_pixels_have_the_layer_colours() {
    // Points read by hand from tests/data/yahara_sample.gpkg (NAD83 lon/lat):
    // the downstream (last) vertex of comid 13293970, where a comid outlet is
    // drawn; the 10th of the 19 vertices of comid 13293454 (Yahara River at
    // Windsor, upstream of 13293970).
    const OUTLET: (f64, f64) = (-89.3043319718218, 43.008721933241986);
    const FLOWLINE_VERTEX: (f64, f64) = (-89.34883970508605, 43.21065633292852);
    // West of every layer of the GeoPackage (gpkg_contents: the westmost
    // drawn layer, NHDWaterbody, starts at -89.7288), away from the furniture
    // (north arrow top right, scale bar bottom left, attribution bottom right).
    const EMPTY: (f64, f64) = (-90.05, 43.15);
    // The map: this lon/lat box on a 1024 x 768 canvas, tiles at zoom 10.
    const BBOX: [f64; 4] = [-89.80, 42.85, -89.05, 43.45];
    const SIZE: (u32, u32) = (1024, 768);
    const ZOOM: u8 = 10;
    const BLUE: [u8; 3] = [0, 0, 255];
    const BLACK: [u8; 3] = [0, 0, 0];

    let server = MockServer::start();
    let ctx = mock::context(&server);
    let data = yahara(&ctx);
    let mut styles = PlotStyles::default();
    styles.set("flowline", "lwd", "3").unwrap();
    let extent = by_hand::extent(BBOX, SIZE);
    let at = |map: &Map, (lon, lat): (f64, f64)| {
        let (x, y) = by_hand::pixel(extent, SIZE.0, lon, lat);
        rgb(map, x as f32, y as f32)
    };
    for basemap in ["none", "OpenStreetMap"] {
        let mut warnings = Vec::new();
        let mut map = Map::new(
            &ctx,
            BBOX,
            "EPSG:4269",
            SIZE,
            basemap,
            Some(ZOOM),
            &TileCacheMode::Off,
            &mut warnings,
        )
        .unwrap();
        assert!(warnings.is_empty(), "{warnings:?}");
        let view = map.view();
        assert_eq!((view.width, view.height), SIZE);
        for (got, want) in view.extent.iter().zip(extent) {
            assert!((got - want).abs() < 1.0, "{:?} vs {extent:?}", view.extent);
        }
        hydroplot::plot::draw_plot_data(&mut map, &data, &styles, true).unwrap();

        assert_eq!(at(&map, FLOWLINE_VERTEX), BLUE, "{basemap}");
        assert_eq!(at(&map, OUTLET), BLACK, "{basemap}");
        // pch 19 at cex 1 has a 6 px radius: 3 px off-centre is still black.
        let (ox, oy) = by_hand::pixel(extent, SIZE.0, OUTLET.0, OUTLET.1);
        for (dx, dy) in [(3.0, 0.0), (-3.0, 0.0), (0.0, 3.0), (0.0, -3.0)] {
            assert_eq!(rgb(&map, (ox + dx) as f32, (oy + dy) as f32), BLACK);
        }

        // Nothing is drawn far west of the data: the canvas, or the tile there.
        let background = if basemap == "none" {
            [255, 255, 255]
        } else {
            let ((tx, ty), inside) = by_hand::tile(ZOOM, EMPTY.0, EMPTY.1);
            assert!(
                [inside.0, inside.1]
                    .iter()
                    .all(|f| (0.05..0.95).contains(f)),
                "probe too near a tile border: {inside:?}"
            );
            mock::tile_color(u32::from(ZOOM), tx, ty)
        };
        assert!(
            near(at(&map, EMPTY), background, 2),
            "{basemap}: {:?} vs {background:?}",
            at(&map, EMPTY)
        );
    }
}

/// Writes every rendered image to `HYDROPLOT_RENDER_CANDIDATES` when it is
/// set (by `cargo xtask bless-render`), then compares each with its
/// reference. All candidates are written before the first comparison, so one
/// differing image does not hide the others.
fn check_references(images: &[(&str, Vec<u8>)]) {
    if let Some(dir) = std::env::var_os("HYDROPLOT_RENDER_CANDIDATES") {
        let dir = PathBuf::from(dir);
        std::fs::create_dir_all(&dir).unwrap();
        for (name, png) in images {
            std::fs::write(dir.join(name), png).unwrap();
        }
    }
    for (name, png) in images {
        compare_with_reference(name, png);
    }
}

/// Compares `png` with the reference image `name`: same size, mean channel
/// difference under 1, at most 0.5 % of the pixels off by more than 32.
fn compare_with_reference(name: &str, png: &[u8]) {
    let path = data_dir().join("render").join(name);
    let (w, h, got) = rgba(png);
    let (rw, rh, want) = rgba(&std::fs::read(&path).unwrap());
    assert_eq!((w, h), (rw, rh), "{name}");
    let diffs: Vec<u8> = got.iter().zip(&want).map(|(a, b)| a.abs_diff(*b)).collect();
    let mean = diffs.iter().map(|d| f64::from(*d)).sum::<f64>() / diffs.len() as f64;
    let bad = diffs
        .chunks(4)
        .filter(|p| p.iter().any(|d| *d > 32))
        .count();
    let review = "to review the new rendering: cargo xtask bless-render";
    assert!(mean < 1.0, "{name}: mean difference {mean}; {review}");
    assert!(
        bad * 200 <= (w * h) as usize,
        "{name}: {bad} pixels differ; {review}"
    );
}

#[test]
fn yahara_matches_the_reference_images() {
    let server = MockServer::start();
    let ctx = mock::context(&server);
    let data = yahara(&ctx);
    let images: Vec<(&str, Vec<u8>)> = [
        ("none", "yahara_none_480x360.png"),
        ("OpenStreetMap", "yahara_mock_tiles_480x360.png"),
    ]
    .into_iter()
    .map(|(basemap, name)| {
        let mut map = Map::new(
            &ctx,
            data.bbox,
            "EPSG:4269",
            (480, 360),
            basemap,
            None,
            &TileCacheMode::Off,
            &mut Vec::new(),
        )
        .unwrap();
        hydroplot::plot::draw_plot_data(&mut map, &data, &PlotStyles::default(), true).unwrap();
        (name, map.png().unwrap())
    })
    .collect();
    check_references(&images);
}

#[test]
fn outlets_are_styled_by_their_feature_source() {
    let server = MockServer::start();
    let ctx = mock::context(&server);
    let bbox = [-89.5, 43.0, -89.3, 43.15];
    let mut map = map_without_basemap(&ctx, bbox, "EPSG:4269", (400, 300));
    let sources = [
        ("nwissite", -89.45),
        ("huc12pp", -89.42),
        ("wqp", -89.39),
        ("comid", -89.36),
    ];
    let outlet = |source: &str, lon: f64| Feature {
        geometry: Some(geo::Geometry::Point(geo::Point::new(lon, 43.07))),
        properties: serde_json::json!({ "type": source })
            .as_object()
            .unwrap()
            .clone(),
        ..Feature::default()
    };
    let mut data = PlotData::default();
    let outlets: Vec<Feature> = sources.iter().map(|(s, lon)| outlet(s, *lon)).collect();
    data.set_layer(
        Layer::Outlets,
        hydroplot::table::Table::from_features(&outlets).unwrap(),
    );
    hydroplot::plot::draw_plot_data(&mut map, &data, &PlotStyles::default(), true).unwrap();
    let at = |lon: f64, dx: f32| {
        let (x, y) = px(&map, lon, 43.07);
        rgb(&map, x + dx, y)
    };
    // nwissite uses the gaugesite style: pch 17 (solid triangle), grey40.
    assert_eq!(at(-89.45, 0.0), [102, 102, 102]);
    // huc12pp: pch 22, white inside a black border (half side 5.3 px).
    assert_eq!(at(-89.42, 0.0), [255, 255, 255]);
    assert!(at(-89.42, 5.0)[0] < 100, "{:?}", at(-89.42, 5.0));
    // wqp: pch 20, a small red circle (radius 4 px).
    assert_eq!(at(-89.39, 0.0), [255, 0, 0]);
    assert_eq!(at(-89.39, 6.0), [255, 255, 255]);
    // comid has no style of its own: outlets.default, black pch 19 (radius 6 px).
    assert_eq!(at(-89.36, 5.0), [0, 0, 0]);
}

mod ffi {
    use super::*;
    use hydroplot::ffi::buffer::{
        hydroplot_buffer_data, hydroplot_buffer_free, hydroplot_buffer_len,
    };
    use hydroplot::ffi::context::{
        hydroplot_context_free, hydroplot_context_new, hydroplot_context_set_option,
    };
    use hydroplot::ffi::hydroplot_status::{self, *};
    use hydroplot::ffi::map::*;
    use std::ffi::CString;
    use std::ptr::{null, null_mut};

    fn c(s: &str) -> CString {
        CString::new(s).unwrap()
    }

    #[test]
    fn map_handles_through_the_c_abi() {
        let server = MockServer::start();
        let mut ctx = null_mut();
        assert_eq!(hydroplot_context_new(&mut ctx), HYDROPLOT_OK);
        let cache = temp_dir("ffi");
        for (k, v) in [
            ("tile_url", server.tile_url()),
            ("tile_cache_dir", cache.display().to_string()),
        ] {
            assert_eq!(
                hydroplot_context_set_option(ctx, c(k).as_ptr(), c(&v).as_ptr()),
                HYDROPLOT_OK
            );
        }
        let new_map =
            |out: *mut *mut hydroplot_map, basemap: *const std::ffi::c_char| -> hydroplot_status {
                hydroplot_map_new(ctx, -89.5, 43.0, -89.3, 43.15, null(), 0, 0, basemap, out)
            };
        assert_eq!(new_map(null_mut(), null()), HYDROPLOT_ERR_NULL_ARGUMENT);
        let mut map = null_mut();
        assert_eq!(
            new_map(&mut map, c("Stamen.Toner").as_ptr()),
            HYDROPLOT_ERR_INVALID_ARGUMENT
        );
        assert!(map.is_null(), "not written on failure");
        // NULL crs = EPSG:4326, size 0 = 1024 x 768, NULL basemap = the default provider (tile_url overrides it).
        assert_eq!(new_map(&mut map, null()), HYDROPLOT_OK);
        assert!(tile_requests(&server) > 0);
        assert_eq!(
            hydroplot_map_add_point(map, -89.4, 43.07, null(), 19, null(), 1.0),
            HYDROPLOT_ERR_NULL_ARGUMENT
        );
        assert_eq!(
            hydroplot_map_add_point(map, -89.4, 43.07, null(), 19, c("red").as_ptr(), 1.0),
            HYDROPLOT_OK
        );
        let gj = r#"{"type":"LineString","coordinates":[[-89.45,43.02],[-89.35,43.12]]}"#;
        let status = hydroplot_map_add_geojson(
            map,
            gj.as_ptr().cast(),
            gj.len(),
            null(),
            c("blue").as_ptr(),
            null(),
            2.0,
        );
        assert_eq!(status, HYDROPLOT_OK);

        let mut buf = null_mut();
        assert_eq!(hydroplot_map_png(map, &mut buf), HYDROPLOT_OK);
        let bytes = unsafe {
            std::slice::from_raw_parts(hydroplot_buffer_data(buf), hydroplot_buffer_len(buf))
        };
        let (w, h, _) = rgba(bytes);
        assert_eq!((w, h), (1024, 768));
        hydroplot_buffer_free(buf);

        let out = cache.join("map.png");
        assert_eq!(
            hydroplot_map_write_png(map, c(&out.display().to_string()).as_ptr()),
            HYDROPLOT_OK
        );
        assert_eq!(rgba(&std::fs::read(&out).unwrap()).0, 1024);
        let missing = cache.join("no/such/dir/map.png");
        assert_eq!(
            hydroplot_map_write_png(map, c(&missing.display().to_string()).as_ptr()),
            HYDROPLOT_ERR_IO
        );
        assert_eq!(
            hydroplot_map_png(null(), &mut buf),
            HYDROPLOT_ERR_NULL_ARGUMENT
        );

        hydroplot_map_free(map);
        hydroplot_map_free(null_mut());
        hydroplot_context_free(ctx);
        let _ = std::fs::remove_dir_all(&cache);
    }
}
