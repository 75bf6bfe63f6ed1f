//! The level of detail (issue 26, item 2): a map too dense to read is drawn
//! by stream order, the samples' maps stay as they are, the data is never
//! thinned, and the setting reaches the core through each interface.
//!
//! Truths computed here, not by the library: ink counted pixel by pixel,
//! Web Mercator positions by hand, counts read back with plain SQL.

use crate::support;

// Only the selftest of the shared Chromium helpers is used here.
#[allow(dead_code)]
use crate::chromium;

use hydroplot::feature::Feature;
use hydroplot::plot::{plot_hydro, Layer, PlotData, PlotRequest};
use hydroplot::render::style::PlotStyles;
use hydroplot::render::{Map, TileCacheMode};
use hydroplot::table::Table;
use std::path::{Path, PathBuf};
use support::georef::{extent_by_hand, mercator};

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

/// Everything in a sample GeoPackage (a bbox around the whole file), not drawn.
fn whole_sample(ctx: &hydroplot::Context, file: &str, bbox: [f64; 4]) -> PlotData {
    let req = PlotRequest {
        bbox: Some((bbox, "EPSG:4269".into())),
        hydro_data: Some(data_dir().join(file)),
        actually_plot: false,
        ..PlotRequest::default()
    };
    plot_hydro(ctx, &req, None).unwrap().data
}

/// The New Hope flowline bbox (gpkg_contents), and the step of the grid of
/// copies: one bbox apart, so the copies tile the plane.
const NEW_HOPE: [f64; 4] = [-79.166, 35.785, -78.838, 36.026];
const STEP: (f64, f64) = (0.328, 0.241);

/// A network of `n` x `n` copies of the New Hope flowlines (746 each),
/// shifted by [`STEP`]; copy (0, 0) keeps its ids, the others' level paths
/// and hydroseqs are moved up by a multiple of 10^9, so the outlet (the
/// smallest hydroseq) and its level path are copy (0, 0)'s. The plot data
/// of the network (flowlines only) and the main stem's vertices.
fn dense_network(n: usize) -> (PlotData, Vec<Vec<(f64, f64)>>) {
    let ctx = support::offline();
    let sample = whole_sample(&ctx, "new_hope.gpkg", [-79.4, 35.6, -78.8, 36.1]);
    let flowlines = sample.layer(Layer::Flowline).to_features();
    assert_eq!(flowlines.len(), 746);
    let mut features = Vec::with_capacity(n * n * flowlines.len());
    for (i, j) in (0..n).flat_map(|i| (0..n).map(move |j| (i, j))) {
        let (dx, dy) = (i as f64 * STEP.0, j as f64 * STEP.1);
        let bump = ((i * n + j) as f64) * 1e9;
        for f in &flowlines {
            let mut f: Feature = f.clone();
            if let Some(g) = f.geometry.as_mut() {
                geo::MapCoordsInPlace::map_coords_in_place(g, |c| {
                    geo::coord! {
                        x: c.x + dx, y: c.y + dy
                    }
                });
            }
            for key in ["levelpathi", "hydroseq", "comid"] {
                let v = f.get_f64(key).unwrap();
                f.properties.insert(key.into(), serde_json::json!(v + bump));
            }
            features.push(f);
        }
    }
    let stem: Vec<Vec<(f64, f64)>> = flowlines
        .iter()
        .filter(|f| f.get_f64("levelpathi") == Some(250009005.0))
        .map(|f| match f.geometry.as_ref().unwrap() {
            geo::Geometry::LineString(l) => l.coords().map(|c| (c.x, c.y)).collect(),
            geo::Geometry::MultiLineString(m) => {
                m.0.iter()
                    .flat_map(|l| l.coords().map(|c| (c.x, c.y)))
                    .collect()
            }
            g => panic!("a flowline is a line: {g:?}"),
        })
        .collect();
    assert!(stem.len() > 10, "New Hope's main stem has many flowlines");
    let mut data = PlotData {
        bbox: [
            NEW_HOPE[0],
            NEW_HOPE[1],
            NEW_HOPE[0] + n as f64 * STEP.0,
            NEW_HOPE[1] + n as f64 * STEP.1,
        ],
        ..PlotData::default()
    };
    data.set_layer(Layer::Flowline, Table::from_features(&features).unwrap());
    (data, stem)
}

/// `data` drawn on a `size` map without basemap, level of detail `lod`.
fn draw(data: &PlotData, size: (u32, u32), lod: bool) -> Map {
    let ctx = support::offline();
    let mut map = Map::new(
        &ctx,
        data.bbox,
        "EPSG:4269",
        size,
        "none",
        None,
        &TileCacheMode::Off,
        &mut Vec::new(),
    )
    .unwrap();
    hydroplot::plot::draw_plot_data(&mut map, data, &PlotStyles::default(), lod).unwrap();
    map
}

/// The pixel (column, row) of lon/lat on a `size` map of `bbox`, by hand.
fn pixel(bbox: [f64; 4], size: (u32, u32), lon: f64, lat: f64) -> (i64, i64) {
    let e = extent_by_hand(bbox, (f64::from(size.0), f64::from(size.1)));
    let res = (e[2] - e[0]) / f64::from(size.0);
    let (x, y) = mercator(lon, lat);
    (((x - e[0]) / res) as i64, ((e[3] - y) / res) as i64)
}

fn is_ink(map: &Map, (x, y): (i64, i64)) -> bool {
    let p = map.pixmap().pixel(x as u32, y as u32).unwrap().demultiply();
    (p.red(), p.green(), p.blue()) != (255, 255, 255)
}

/// The fraction of the data area (the plot bbox's pixels) that is not white.
fn ink_fraction(map: &Map, bbox: [f64; 4], size: (u32, u32)) -> f64 {
    let (x0, y1) = pixel(bbox, size, bbox[0], bbox[1]);
    let (x1, y0) = pixel(bbox, size, bbox[2], bbox[3]);
    let area: Vec<(i64, i64)> = (y0..=y1)
        .flat_map(|y| (x0..=x1).map(move |x| (x, y)))
        .collect();
    area.iter().filter(|&&p| is_ink(map, p)).count() as f64 / area.len() as f64
}

#[test]
fn a_dense_network_is_drawn_readable_with_its_main_stem_whole() {
    let (data, stem) = dense_network(10);
    assert_eq!(data.layer(Layer::Flowline).len(), 74_600);
    let size = (1024, 768);
    let full = ink_fraction(&draw(&data, size, false), data.bbox, size);
    let map = draw(&data, size, true);
    let thinned = ink_fraction(&map, data.bbox, size);
    assert!(
        full > 0.40,
        "without the level of detail, {full} of the data area is ink"
    );
    assert!(
        thinned <= 0.40,
        "with it, {thinned} of the data area is ink"
    );
    let missing: Vec<_> = stem
        .iter()
        .flatten()
        .map(|&(lon, lat)| pixel(data.bbox, size, lon, lat))
        .filter(|&p| !is_ink(&map, p))
        .collect();
    assert!(
        missing.is_empty(),
        "main stem vertices on white pixels: {missing:?}"
    );
}

/// A basin over the whole of `bbox` but for a slit `slit_px` pixels wide
/// (on a `size` map) cut down from its top edge to half its height at the
/// middle of each of `columns` columns; the slits' centres in degrees.
fn comb_basin(bbox: [f64; 4], size: (u32, u32), columns: usize, slit_px: f64) -> (Table, Vec<f64>) {
    let e = extent_by_hand(bbox, (f64::from(size.0), f64::from(size.1)));
    let px_deg = (e[2] - e[0]) / f64::from(size.0) / 6_378_137f64.to_radians();
    let half = slit_px * px_deg / 2.0;
    let (x0, y0, x1, y1) = (bbox[0], bbox[1], bbox[2], bbox[3]);
    let middle = (y0 + y1) / 2.0;
    let centres: Vec<f64> = (0..columns)
        .map(|k| x0 + (k as f64 + 0.5) * (x1 - x0) / columns as f64)
        .collect();
    let mut ring = vec![(x0, y0), (x1, y0), (x1, y1)];
    for &c in centres.iter().rev() {
        ring.extend([
            (c + half, y1),
            (c + half, middle),
            (c - half, middle),
            (c - half, y1),
        ]);
    }
    ring.extend([(x0, y1), (x0, y0)]);
    let polygon = geo::Polygon::new(ring.into(), Vec::new());
    let basin = Feature {
        id: None,
        geometry: Some(polygon.into()),
        properties: Default::default(),
    };
    (Table::from_features(&[basin]).unwrap(), centres)
}

/// Black or grey: the basin's outline (the flowlines are blue).
fn is_outline(map: &Map, (x, y): (i64, i64)) -> bool {
    let p = map.pixmap().pixel(x as u32, y as u32).unwrap().demultiply();
    p.red() == p.green() && p.green() == p.blue() && p.red() < 255
}

#[test]
fn the_basin_of_a_dense_map_is_drawn_without_its_narrow_inlets() {
    let (mut data, _) = dense_network(10);
    let size = (1024, 768);
    let (basin, slits) = comb_basin(data.bbox, size, 10, 2.0);
    data.set_layer(Layer::Basin, basin);
    let top = data.bbox[3];
    let depth = (data.bbox[3] - data.bbox[1]) / 2.0;
    // Each slit's centre line, from 5 pixels below the top edge to 5
    // above the slit's end.
    let in_slits: Vec<(i64, i64)> = slits
        .iter()
        .flat_map(|&lon| {
            let (x, y0) = pixel(data.bbox, size, lon, top);
            let (_, y1) = pixel(data.bbox, size, lon, top - depth);
            (y0 + 5..y1 - 5).map(move |y| (x, y))
        })
        .collect();
    let exact = draw(&data, size, false);
    assert!(
        in_slits.iter().any(|&p| is_outline(&exact, p)),
        "without the level of detail the slits are outlined"
    );
    let generalized = draw(&data, size, true);
    let outlined: Vec<_> = in_slits
        .iter()
        .filter(|&&p| is_outline(&generalized, p))
        .collect();
    assert!(
        outlined.is_empty(),
        "{} outline pixels inside the slits, the first {:?}",
        outlined.len(),
        outlined.first()
    );
    // The top edge is drawn across every slit.
    for &lon in &slits {
        let (x, y) = pixel(data.bbox, size, lon, top);
        assert!(
            (y - 1..=y + 1).any(|y| is_outline(&generalized, (x, y))),
            "the top edge is open at {lon}"
        );
    }
}

#[test]
fn samples_at_their_usual_sizes_are_drawn_as_before() {
    let ctx = support::offline();
    let samples = [
        whole_sample(&ctx, "new_hope.gpkg", [-79.4, 35.6, -78.8, 36.1]),
        whole_sample(&ctx, "yahara_sample.gpkg", [-90.0, 42.5, -88.9, 43.6]),
    ];
    for data in &samples {
        for size in [(256, 192), (480, 360), (1024, 768), (2048, 1536)] {
            let (on, off) = (draw(data, size, true), draw(data, size, false));
            assert!(on.pixmap() == off.pixmap(), "{size:?} differs");
        }
    }
}

fn temp_dir(name: &str) -> PathBuf {
    crate::scratch::temp_dir(&format!("lod-{name}"))
}

/// Rows of `table` in the GeoPackage at `path`, by plain SQL.
fn rows(path: &Path, table: &str) -> i64 {
    let db = rusqlite::Connection::open(path).unwrap();
    db.query_row(&format!("SELECT count(*) FROM \"{table}\""), [], |r| {
        r.get(0)
    })
    .unwrap()
}

/// Upstream of the Yahara outlet from the sample, drawn at 32 x 24 pixels
/// (too small to show its 251 flowlines) to `dir/map.png`, the subset to
/// `dir/subset.gpkg`.
fn small_yahara_map(dir: &Path, lod: bool) -> (PlotData, Vec<u8>) {
    let req = PlotRequest {
        outlets: vec![hydroplot::plot::Outlet::Comid(13293970)],
        hydro_data: Some(support::sample()),
        basemap: "none".into(),
        size: (32, 24),
        png_file: Some(dir.join("map.png")),
        gpkg: Some(dir.join("subset.gpkg")),
        lod,
        ..PlotRequest::default()
    };
    let data = plot_hydro(&support::offline(), &req, None).unwrap().data;
    (data, std::fs::read(dir.join("map.png")).unwrap())
}

#[test]
fn the_data_is_never_thinned() {
    let (on_dir, off_dir) = (temp_dir("data-on"), temp_dir("data-off"));
    let (on, on_png) = small_yahara_map(&on_dir, true);
    let (off, off_png) = small_yahara_map(&off_dir, false);
    assert!(on_png != off_png, "at 32 x 24 the level of detail applies");
    support::assert_yahara_counts(&on);
    support::assert_yahara_counts(&off);
    assert_eq!(on.flowline_comids, off.flowline_comids);
    for (table, published) in [
        ("NHDFlowline_Network", 251),
        ("CatchmentSP", 250),
        ("NHDWaterbody", 117),
    ] {
        assert_eq!(
            rows(&on_dir.join("subset.gpkg"), table),
            published,
            "{table}"
        );
        assert_eq!(
            rows(&off_dir.join("subset.gpkg"), table),
            published,
            "{table}"
        );
    }
    let _ = std::fs::remove_dir_all(on_dir);
    let _ = std::fs::remove_dir_all(off_dir);
}

#[test]
fn the_c_setter_turns_the_level_of_detail_off() {
    use hydroplot::ffi::context::hydroplot_context_new;
    use hydroplot::ffi::hydroplot_status::*;
    use hydroplot::ffi::plot_request::*;
    use std::ffi::CString;
    assert_eq!(
        hydroplot_plot_request_set_lod(std::ptr::null_mut(), false),
        HYDROPLOT_ERR_NULL_ARGUMENT
    );
    let dir = temp_dir("c");
    let cstr = |s: &str| CString::new(s).unwrap();
    let c_map = |lod: Option<bool>, name: &str| -> Vec<u8> {
        let mut ctx = std::ptr::null_mut();
        assert_eq!(hydroplot_context_new(&mut ctx), HYDROPLOT_OK);
        let req = hydroplot_plot_request_new();
        let png = dir.join(name);
        let sample = support::sample();
        for status in [
            hydroplot_plot_request_add_comid(req, 13293970),
            hydroplot_plot_request_set_hydro_data(req, cstr(sample.to_str().unwrap()).as_ptr()),
            hydroplot_plot_request_set_basemap(req, cstr("none").as_ptr()),
            hydroplot_plot_request_set_size(req, 32, 24),
            hydroplot_plot_request_set_png_file(req, cstr(png.to_str().unwrap()).as_ptr()),
            lod.map_or(HYDROPLOT_OK, |on| hydroplot_plot_request_set_lod(req, on)),
        ] {
            assert_eq!(status, HYDROPLOT_OK);
        }
        support::c_api::plot_and_free(ctx, req);
        std::fs::read(png).unwrap()
    };
    let default = c_map(None, "default.png");
    assert_eq!(default, c_map(Some(true), "on.png"), "on by default");
    assert!(default != c_map(Some(false), "off.png"));
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn the_cli_no_lod_flag_turns_it_off_and_the_geojson_is_the_same() {
    let dir = temp_dir("cli");
    let run = |name: &str, extra: &[&str]| -> (Vec<u8>, Vec<u8>) {
        let (png, json) = (
            dir.join(format!("{name}.png")),
            dir.join(format!("{name}.json")),
        );
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_hydroplot"))
            .args([
                "plot",
                "--sample",
                "--basemap",
                "none",
                "--size",
                "32x24",
                "--no-cache",
            ])
            .args([
                "--out",
                png.to_str().unwrap(),
                "--geojson",
                json.to_str().unwrap(),
            ])
            .args(extra)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        (std::fs::read(png).unwrap(), std::fs::read(json).unwrap())
    };
    let (on_png, on_json) = run("on", &[]);
    let (off_png, off_json) = run("off", &["--no-lod"]);
    assert!(on_png != off_png, "--no-lod draws every flowline");
    assert!(on_json == off_json, "the GeoJSON is the same");
    let flowlines = serde_json::from_slice::<serde_json::Value>(&on_json).unwrap()["flowline"]
        ["features"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(flowlines, 251, "the published count upstream of 13293970");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn the_html_page_applies_the_same_rule_per_zoom_level() {
    let req = PlotRequest {
        outlets: vec![hydroplot::plot::Outlet::Comid(13293970)],
        hydro_data: Some(support::sample()),
        basemap: "none".into(),
        actually_plot: false,
        ..PlotRequest::default()
    };
    let plot = plot_hydro(&support::offline(), &req, None).unwrap();
    let options = hydroplot::html::HtmlOptions { catchments: false };
    let page = hydroplot::html::plot_data_html(&plot.data, &plot.drawing, &options).unwrap();
    let off = hydroplot::html::plot_data_html(
        &plot.data,
        &hydroplot::plot::Drawing {
            lod: false,
            ..plot.drawing.clone()
        },
        &options,
    )
    .unwrap();
    assert!(
        !off.html.contains(r#""lod":"#),
        "lod = false: no level of detail"
    );
    let Some(browser) = chromium::Chromium::find() else {
        return;
    };
    let dir = chromium::TempDir::new("lod");
    let file = dir.path().join("yahara.html");
    std::fs::write(&file, &page.html).unwrap();
    let result = browser.selftest(&file);
    let lod = &result["lod"];
    // Fitted to the 960 x 600 selftest map, Yahara is drawn whole, as the
    // static map at its usual sizes.
    assert_eq!(lod["stroked"], 251, "{result}");
    let fitted = lod["zoom"].as_f64().unwrap() as usize;
    assert!(lod["minOrder"][fitted].is_null(), "{result}");
    // At every zoom the page's minimum order is the library's at that
    // zoom's resolution (metres per CSS pixel: the world over 256 * 2^z).
    let density = hydroplot::plot::lod::Density::of(&plot.data);
    let world = 2.0 * hydroplot::render::view::HALF_WORLD_M;
    for z in 0..=20 {
        let res = world / (256.0 * f64::from(1u32 << z));
        let want = density.min_order(res, 1.0);
        assert_eq!(
            lod["minOrder"][z].as_i64(),
            want.map(i64::from),
            "zoom {z}: {result}"
        );
    }
    assert!(
        lod["minOrder"][0].is_i64(),
        "the whole world at zoom 0 is dense"
    );
}
