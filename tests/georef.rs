//! The map is a georeferenced object: its EPSG:3857 bounds (C:
//! `hydroplot_map_bounds`) and the world file + `.aux.xml` written beside its
//! PNG (C, CLI `--world-file`) place it where Web Mercator by hand says, and
//! GDAL (`gdalinfo`, when installed) reads the same extent and EPSG:3857.

use hydroplot::ffi::hydroplot_status;
use hydroplot::ffi::map::*;
use hydroplot::render::{Map, MapSpec, TileCacheMode};
use hydroplot_mock::{self as mock, MockServer};
use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A lon/lat box on the Yahara.
const BBOX: [f64; 4] = [-89.5, 43.0, -89.3, 43.15];

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("hydroplot-georef-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Web Mercator metres of a WGS 84 point: x = R·λ, y = R·ln(tan(π/4 + φ/2)).
fn mercator(lon: f64, lat: f64) -> (f64, f64) {
    const R: f64 = 6_378_137.0;
    let (lon, lat) = (lon.to_radians(), lat.to_radians());
    (
        R * lon,
        R * (std::f64::consts::FRAC_PI_4 + lat / 2.0).tan().ln(),
    )
}

/// The 3857 extent of a `w` x `h` canvas showing the lon/lat `bbox`:
/// centred, aspect kept, 4 % of the canvas free on each side (as
/// `render::view` documents).
fn extent_by_hand(bbox: [f64; 4], (w, h): (f64, f64)) -> [f64; 4] {
    let (x0, y0) = mercator(bbox[0], bbox[1]);
    let (x1, y1) = mercator(bbox[2], bbox[3]);
    let res = ((x1 - x0) / (w * 0.92)).max((y1 - y0) / (h * 0.92));
    let (cx, cy) = ((x0 + x1) / 2.0, (y0 + y1) / 2.0);
    [
        cx - w / 2.0 * res,
        cy - h / 2.0 * res,
        cx + w / 2.0 * res,
        cy + h / 2.0 * res,
    ]
}

fn assert_close(a: [f64; 4], b: [f64; 4], tol: f64) {
    for (x, y) in a.iter().zip(b) {
        assert!((x - y).abs() <= tol, "{a:?} != {b:?}");
    }
}

/// The six numbers of a world file.
fn world_file(path: &Path) -> [f64; 6] {
    let text = std::fs::read_to_string(path).unwrap();
    let v: Vec<f64> = text.lines().map(|l| l.trim().parse().unwrap()).collect();
    v.try_into().unwrap()
}

/// The extent a world file gives a `w` x `h` image (its centres moved out
/// half a pixel to the outer edges).
fn world_extent(wf: [f64; 6], (w, h): (u32, u32)) -> [f64; 4] {
    let [a, d, b, e, c, f] = wf;
    assert_eq!((d, b), (0.0, 0.0), "no rotation");
    let (left, top) = (c - a / 2.0, f - e / 2.0);
    [left, top + e * f64::from(h), left + a * f64::from(w), top]
}

/// gdalinfo prints corner coordinates to the millimetre.
const GDAL_MM: f64 = 1.0e-3;

/// `gdalinfo -json` of a file: its size, corner extent and CRS WKT; None
/// (with the reason printed) when GDAL is not installed.
fn gdalinfo(path: &Path) -> Option<((u32, u32), [f64; 4], String)> {
    let out = match Command::new("gdalinfo").arg("-json").arg(path).output() {
        Ok(out) => out,
        Err(e) => {
            println!("SKIP the gdalinfo check: gdalinfo cannot run ({e}); CI installs gdal-bin");
            return None;
        }
    };
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let info: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let size = (
        info["size"][0].as_u64().unwrap() as u32,
        info["size"][1].as_u64().unwrap() as u32,
    );
    let corner = |name: &str, i: usize| info["cornerCoordinates"][name][i].as_f64().unwrap();
    let extent = [
        corner("lowerLeft", 0),
        corner("lowerLeft", 1),
        corner("upperRight", 0),
        corner("upperRight", 1),
    ];
    let wkt = info["coordinateSystem"]["wkt"]
        .as_str()
        .unwrap_or("")
        .to_string();
    Some((size, extent, wkt))
}

/// The width and RGBA bytes of a PNG.
fn decode_png(bytes: &[u8]) -> (usize, Vec<u8>) {
    let mut reader = png::Decoder::new(std::io::Cursor::new(bytes))
        .read_info()
        .unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!(info.color_type, png::ColorType::Rgba);
    (info.width as usize, buf)
}

fn assert_epsg_3857(wkt: &str) {
    assert!(
        wkt.contains("Pseudo-Mercator") && wkt.replace(' ', "").contains("ID[\"EPSG\",3857]"),
        "GDAL does not read EPSG:3857: {wkt}"
    );
}

/// `hydroplot ARGS` with the services and tiles of `server` (if any).
fn hydroplot(server: Option<&MockServer>, args: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_hydroplot"));
    for (k, _) in std::env::vars() {
        if k.starts_with("HYDROPLOT_") {
            cmd.env_remove(k);
        }
    }
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
fn c_bounds_and_world_file_place_the_png_where_gdal_reads_it() {
    use hydroplot::ffi::context::*;
    use hydroplot_status::{HYDROPLOT_ERR_NULL_ARGUMENT, HYDROPLOT_OK};
    let dir = temp_dir("c");
    let c = |s: &str| CString::new(s).unwrap();
    let mut ctx = std::ptr::null_mut();
    assert_eq!(hydroplot_context_new(&mut ctx), HYDROPLOT_OK);
    let mut map = std::ptr::null_mut();
    let none = c("none");
    assert_eq!(
        hydroplot_map_new(
            ctx,
            BBOX[0],
            BBOX[1],
            BBOX[2],
            BBOX[3],
            std::ptr::null(),
            300,
            200,
            none.as_ptr(),
            &mut map
        ),
        HYDROPLOT_OK
    );
    let mut bounds = [0.0; 4];
    assert_eq!(hydroplot_map_bounds(map, bounds.as_mut_ptr()), HYDROPLOT_OK);
    assert_close(bounds, extent_by_hand(BBOX, (300.0, 200.0)), 1e-3);
    // Square pixels: the same metres per pixel across and down.
    let res = (bounds[2] - bounds[0]) / 300.0;
    assert!(((bounds[3] - bounds[1]) / 200.0 - res).abs() < 1e-9);
    assert_eq!(
        hydroplot_map_bounds(std::ptr::null(), bounds.as_mut_ptr()),
        HYDROPLOT_ERR_NULL_ARGUMENT
    );
    assert_eq!(
        hydroplot_map_bounds(map, std::ptr::null_mut()),
        HYDROPLOT_ERR_NULL_ARGUMENT
    );
    assert_eq!(
        hydroplot_map_write_world_file(map, std::ptr::null()),
        HYDROPLOT_ERR_NULL_ARGUMENT
    );

    // A point drawn through the C API lands on the pixel the bounds and Web
    // Mercator by hand give it.
    let (lon, lat) = (-89.4012, 43.0731);
    let red = c("#FF0000");
    assert_eq!(
        hydroplot_map_add_point(map, lon, lat, std::ptr::null(), 15, red.as_ptr(), 1.0),
        HYDROPLOT_OK
    );
    let png = dir.join("map.png");
    let png_c = c(png.to_str().unwrap());
    assert_eq!(hydroplot_map_write_png(map, png_c.as_ptr()), HYDROPLOT_OK);
    let (x, y) = mercator(lon, lat);
    let (col, row) = ((x - bounds[0]) / res, (bounds[3] - y) / res);
    let (w, rgba) = decode_png(&std::fs::read(&png).unwrap());
    let at = |c: f64, r: f64| {
        let i = (r as usize * w + c as usize) * 4;
        [rgba[i], rgba[i + 1], rgba[i + 2]]
    };
    assert_eq!(at(col, row), [255, 0, 0], "the marker at ({col}, {row})");
    assert_ne!(at(col + 10.0, row), [255, 0, 0], "a small marker");
    assert_eq!(
        hydroplot_map_write_world_file(map, png_c.as_ptr()),
        HYDROPLOT_OK
    );
    let wf = world_file(&dir.join("map.pgw"));
    assert_eq!((wf[0], wf[3]), (res, -res), "pixel size, rows going south");
    assert_close(world_extent(wf, (300, 200)), bounds, 1e-6);
    let aux = std::fs::read_to_string(dir.join("map.png.aux.xml")).unwrap();
    assert!(aux.contains("<SRS") && aux.contains("3857"), "{aux}");
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["map.pgw", "map.png", "map.png.aux.xml"],
        "no temporaries left"
    );
    if let Some((size, extent, wkt)) = gdalinfo(&png) {
        assert_eq!(size, (300, 200));
        assert_close(extent, bounds, GDAL_MM);
        assert_epsg_3857(&wkt);
    }
    hydroplot_map_free(map);
    hydroplot_context_free(ctx);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_hidpi_world_file_follows_the_pngs_real_pixels() {
    let server = MockServer::start();
    let ctx = mock::context(&server);
    let spec = MapSpec {
        bbox: BBOX,
        crs: "EPSG:4326",
        size: (300, 200),
        scale: 2.0,
        basemap: "none",
        zoom: None,
    };
    let map = Map::with_spec(&ctx, &spec, &TileCacheMode::Off, &mut Vec::new()).unwrap();
    // The same extent as at scale 1, in twice the pixels each way.
    let bounds = map.bounds();
    assert_close(bounds, extent_by_hand(BBOX, (300.0, 200.0)), 1e-3);
    let dir = temp_dir("hidpi");
    let png = dir.join("map.png");
    hydroplot::output::write_atomically(&png, &map.png().unwrap()).unwrap();
    map.write_georeference(&png).unwrap();
    let wf = world_file(&dir.join("map.pgw"));
    assert!((wf[0] - (bounds[2] - bounds[0]) / 600.0).abs() < 1e-9);
    assert_close(world_extent(wf, (600, 400)), bounds, 1e-6);
    if let Some((size, extent, wkt)) = gdalinfo(&png) {
        assert_eq!(size, (600, 400));
        assert_close(extent, bounds, GDAL_MM);
        assert_epsg_3857(&wkt);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn cli_trace_world_file_gives_the_specs_trace_map_extent() {
    let server = MockServer::start();
    let dir = temp_dir("cli-trace");
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
    let dir = temp_dir("cli-plot");
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
    let dir = temp_dir("cli-refuse");
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
