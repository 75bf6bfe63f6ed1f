//! The generated network the scale benchmarks read: what `make_network`
//! promises, checked on a 1 x 10 grid (10 units, 10,130 flowlines) by SQL
//! over the file and by hydroplot's own basin.

use super::Options;
use hydroplot::config::Config;
use hydroplot::context::Context;
use hydroplot::plot::{plot_hydro, CacheSetting, Layer, Outlet, PlotRequest};
use rusqlite::Connection;
use std::path::{Path, PathBuf};

/// The terminal outlet of every grid: New Hope's outlet comid plus 10^9.
const TERMINAL: i64 = 1_008_897_784;

/// Generates a 1 x 10 grid, seamless or not, in a folder of its own named
/// after `test`.
fn generate(test: &str, seamless: bool) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "hydroplot-generator-{test}-{seamless}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("grid.gpkg");
    super::generate(&Options {
        cols: 1,
        rows: 10,
        out: out.clone(),
        topology_index: false,
        seamless,
    });
    out
}

/// The basin of the terminal outlet, as hydroplot dissolves it.
fn basin(file: &Path) -> geo::Geometry<f64> {
    let req = PlotRequest {
        outlets: vec![Outlet::Comid(TERMINAL)],
        hydro_data: Some(file.to_path_buf()),
        flowline_only: Some(true),
        actually_plot: false,
        ..Default::default()
    };
    // A local file: no request is made, and none could be.
    let mut config = Config::default();
    config.set("offline", "true").unwrap();
    config.set("index", "off").unwrap(); // the generator is tested, not the index
    let ctx = Context::new(config).unwrap();
    let data = plot_hydro(&ctx, &req, None).unwrap().data;
    assert_eq!(data.layer(Layer::Flowline).len(), 10_130);
    let basins = data.layer(Layer::Basin).to_features();
    basins[0].geometry.clone().unwrap()
}

/// The one number `sql` answers with `param` as `?1`.
fn scalar(db: &Connection, sql: &str, param: impl rusqlite::ToSql) -> f64 {
    db.query_row(sql, [param], |r| r.get(0)).unwrap()
}

#[test]
fn the_grid_has_one_main_stem_through_every_unit() {
    let file = generate("main-stem", false);
    let db = Connection::open(&file).unwrap();
    let path = scalar(
        &db,
        "SELECT LevelPathI FROM NHDFlowline_Network WHERE COMID = ?1",
        TERMINAL,
    );
    let dn = scalar(
        &db,
        "SELECT DnHydroseq FROM NHDFlowline_Network WHERE COMID = ?1",
        TERMINAL,
    );
    assert_eq!(dn, 0.0, "the terminal drains nowhere");
    // With one column every unit is on the main stem: New Hope's main stem
    // has 75 flowlines (tests/data/new_hope.gpkg), so 10 x 75.
    let on_stem = scalar(
        &db,
        "SELECT count(*) FROM NHDFlowline_Network WHERE LevelPathI = ?1",
        path,
    );
    assert_eq!(on_stem, 750.0);
    // Unit 1's outlet drains into the headwater of unit 0's main stem: the
    // flowline of largest hydroseq on that level path.
    let headwater = scalar(
        &db,
        "SELECT max(Hydroseq) FROM NHDFlowline_Network WHERE LevelPathI = ?1 AND COMID < 2000000000",
        path,
    );
    let unit_1_outlet = TERMINAL + 2_000_000_000;
    let drains_into = scalar(
        &db,
        "SELECT DnHydroseq FROM NHDFlowline_Network WHERE COMID = ?1",
        unit_1_outlet,
    );
    assert_eq!(drains_into, headwater);
    std::fs::remove_dir_all(file.parent().unwrap()).unwrap();
}

#[test]
fn seamless_copies_make_a_basin_of_one_outline() {
    use geo::{Area, BoundingRect};
    let seamless = generate("outline", true);
    // A basin layer is MultiPolygon (its declared type): one outline is
    // one polygon in it.
    let rectangle = match basin(&seamless) {
        geo::Geometry::MultiPolygon(m) if m.0.len() == 1 => m.0[0].clone(),
        other => panic!("one polygon, not {other:?}"),
    };
    // One outline, a rectangle: its area is its box's, to rounding.
    let area = rectangle.unsigned_area();
    let b = rectangle.bounding_rect().unwrap();
    assert!(
        (area / (b.width() * b.height()) - 1.0).abs() < 1e-9,
        "{area}"
    );
    assert!(rectangle
        .interiors()
        .iter()
        .all(|h| h.bounding_rect().is_none_or(|r| r.width() < 1e-6)));
    // The default layout overlaps the copies: its basin weaves, far from
    // filling its box.
    let overlapping = generate("outline", false);
    let weaving = basin(&overlapping);
    let b = weaving.bounding_rect().unwrap();
    assert!(weaving.unsigned_area() < 0.8 * b.width() * b.height());
    for f in [seamless, overlapping] {
        std::fs::remove_dir_all(f.parent().unwrap()).unwrap();
    }
}

/// The outputs of a plot of `file` upstream of `comid` on `threads` threads,
/// each with its name: the GeoJSON of every layer, the GeoPackage (its
/// `last_change` stamps, the time of writing, set to one value first) and
/// the PNG, written in `dir`.
fn outputs(file: &Path, comid: i64, threads: usize, dir: &Path) -> Vec<(String, Vec<u8>)> {
    let (gpkg, png) = (
        dir.join(format!("{threads}.gpkg")),
        dir.join(format!("{threads}.png")),
    );
    let mut req = PlotRequest {
        outlets: vec![Outlet::Comid(comid)],
        hydro_data: Some(file.to_path_buf()),
        cache: CacheSetting::Disabled,
        size: (640, 480),
        ..Default::default()
    };
    req.set_gpkg(&gpkg).unwrap();
    req.set_png_file(&png).unwrap();
    req.set_basemap("none").unwrap();
    let mut config = Config::default();
    config.set("offline", "true").unwrap();
    config.set("index", "off").unwrap(); // the generator is tested, not the index
    config.set("threads", &threads.to_string()).unwrap();
    let data = plot_hydro(&Context::new(config).unwrap(), &req, None)
        .unwrap()
        .data;
    let mut out: Vec<(String, Vec<u8>)> = Layer::ALL
        .iter()
        .map(|&layer| {
            let mut json = Vec::new();
            hydroplot::table::geojson::write_collection(&mut json, data.layer(layer)).unwrap();
            (format!("{layer:?}.geojson"), json)
        })
        .collect();
    Connection::open(&gpkg)
        .unwrap()
        .execute_batch("UPDATE gpkg_contents SET last_change = '2000-01-01T00:00:00.000Z'")
        .unwrap();
    out.push(("plot.gpkg".into(), std::fs::read(&gpkg).unwrap()));
    out.push(("map.png".into(), std::fs::read(&png).unwrap()));
    out
}

#[test]
fn outputs_are_the_same_bytes_on_1_2_and_7_threads() {
    let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data/yahara_sample.gpkg");
    let grid = generate("threads", false);
    let grid_dir = grid.parent().unwrap().to_path_buf();
    for (file, comid) in [(sample, 13293970), (grid, TERMINAL)] {
        let dir = file.with_extension("outputs");
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let one = outputs(&file, comid, 1, &dir);
        for threads in [2, 7] {
            for ((name, a), (_, b)) in one.iter().zip(outputs(&file, comid, threads, &dir)) {
                assert!(
                    *a == b,
                    "{name} of {} differs on {threads} threads",
                    file.display()
                );
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
    std::fs::remove_dir_all(grid_dir).unwrap();
}
