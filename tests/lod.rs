//! The level of detail (issue 26, item 2): a map too dense to read is drawn
//! by stream order, the samples' maps stay as they are, the data is never
//! thinned, and the setting reaches the core through each interface.
//!
//! Truths computed here, not by the library: ink counted pixel by pixel,
//! Web Mercator positions by hand, counts read back with plain SQL.

mod support;

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
