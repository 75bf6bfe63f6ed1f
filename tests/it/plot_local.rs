//! plot_hydro from a local GeoPackage (`hydro_data`): no network at all.
//! The numbers are the nhdplusTools test suite's published facts about the
//! Yahara sample.

use crate::support;

use hydroplot::cancel::Stop;
use hydroplot::plot::{plot_hydro, Layer, Layers, Outlet, PlotRequest};
use hydroplot::table::Table;
use hydroplot::Error;
use support::{offline, sample};

fn request(outlets: Vec<Outlet>) -> PlotRequest {
    PlotRequest {
        outlets,
        hydro_data: Some(sample()),
        actually_plot: false,
        ..Default::default()
    }
}

#[test]
fn upstream_of_13293970_matches_the_reference() {
    let d = plot_hydro(&offline(), &request(vec![Outlet::Comid(13293970)]), None)
        .unwrap()
        .data;
    support::assert_yahara_counts(&d);
    assert_eq!(d.layer(Layer::Basin).len(), 1);
    assert_eq!(d.layer(Layer::Outlets).len(), 1);
    assert_eq!(
        d.layer(Layer::Outlets).to_features()[0].get_i64("comid"),
        Some(13293970)
    );
    assert_eq!(d.flowline_comids.len(), 251);
    assert!(d.flowline_comids.contains(&13293970));
    // The basin is one valid polygon covering the catchments.
    let basins = d.layer(Layer::Basin).to_features();
    let basin = basins[0].geometry.as_ref().unwrap();
    assert!(matches!(
        basin,
        geo::Geometry::Polygon(_) | geo::Geometry::MultiPolygon(_)
    ));
    let b = d.bbox;
    assert!(
        b[0] < -89.5 && b[2] > -89.3 && b[1] > 42.9 && b[3] < 43.4,
        "{b:?}"
    );
}

#[test]
fn bbox_with_stream_order_2_matches_the_reference() {
    let req = PlotRequest {
        bbox: Some((
            [-89.56684, 42.99816, -89.24681, 43.17192],
            "EPSG:4269".into(),
        )),
        streamorder: Some(2),
        hydro_data: Some(sample()),
        actually_plot: false,
        ..Default::default()
    };
    let d = plot_hydro(&offline(), &req, None).unwrap().data;
    assert_eq!(d.layer(Layer::Flowline).len(), 76);
    assert_eq!(d.layer(Layer::NetworkWtbd).len(), 10);
    assert_eq!(d.layer(Layer::OffNetworkWtbd).len(), 43);
    assert_eq!(d.layer(Layer::Basin).len(), 0);
    assert_eq!(d.bbox, [-89.56684, 42.99816, -89.24681, 43.17192]);
}

#[test]
fn gauge_sites_resolve_through_the_gage_layer() {
    // Gage 05429500 lies on the Yahara.
    let d = plot_hydro(
        &offline(),
        &request(vec![Outlet::Site("05429500".into())]),
        None,
    )
    .unwrap()
    .data;
    let outlets = d.layer(Layer::Outlets).to_features();
    let outlet = &outlets[0];
    assert_eq!(outlet.get_str("type"), Some("nwissite"));
    assert_eq!(outlet.get_str("id"), Some("USGS-05429500"));
    let comid = outlet.get_i64("comid").unwrap();
    assert!(d.flowline_comids.contains(&comid));
    assert!(d.layer(Layer::Flowline).len() > 10);
}

#[test]
fn the_comid_set_is_exactly_those_flowlines() {
    let set = vec![13293970, 13294312, 13293454];
    let req = PlotRequest {
        comid_set: Some(set.clone()),
        hydro_data: Some(sample()),
        actually_plot: false,
        ..Default::default()
    };
    let d = plot_hydro(&offline(), &req, None).unwrap().data;
    let mut got = d.flowline_comids.clone();
    got.sort();
    let mut want = set;
    want.sort();
    assert_eq!(got, want);
    assert_eq!(d.layer(Layer::Catchment).len(), 3);
    assert_eq!(d.layer(Layer::Basin).len(), 1);
}

#[test]
fn a_point_outlet_finds_its_catchment() {
    // A vertex of the Yahara near Lake Mendota's outlet (flowline 13294312).
    let outlet = Outlet::Point {
        x: -89.36,
        y: 43.09,
        crs: "EPSG:4326".into(),
    };
    let d = plot_hydro(&offline(), &request(vec![outlet]), None)
        .unwrap()
        .data;
    assert_eq!(d.layer(Layer::Outlets).len(), 1);
    assert!(!d.flowline_comids.is_empty());
}

#[test]
fn unknown_comids_and_bad_requests_are_clear_errors() {
    let e = plot_hydro(&offline(), &request(vec![Outlet::Comid(1)]), None)
        .err()
        .unwrap();
    assert!(matches!(e, Error::NotFound { .. }), "{e}");
    assert!(e.to_string().contains("comid 1"), "{e}");

    let neither = PlotRequest {
        hydro_data: Some(sample()),
        ..Default::default()
    };
    let e = plot_hydro(&offline(), &neither, None).err().unwrap();
    assert!(
        matches!(e, Error::InvalidArgument(_)) && e.to_string().contains("neither"),
        "{e}"
    );

    let both = PlotRequest {
        bbox: Some(([0.0, 0.0, 1.0, 1.0], "EPSG:4326".into())),
        ..request(vec![Outlet::Comid(13293970)])
    };
    let e = plot_hydro(&offline(), &both, None).err().unwrap();
    assert!(e.to_string().contains("both"), "{e}");

    let missing = PlotRequest {
        hydro_data: Some("/nonexistent/x.gpkg".into()),
        ..request(vec![Outlet::Comid(13293970)])
    };
    assert!(plot_hydro(&offline(), &missing, None).is_err());
}

#[test]
fn automatic_stream_order_thins_a_large_basin() {
    let mut req = request(vec![Outlet::Comid(13293970)]);
    req.streamorder = Some(-1);
    let d = plot_hydro(&offline(), &req, None).unwrap().data;
    assert!(d.layer(Layer::Flowline).len() < 251);
    // flowline_only was turned on by the rule.
    assert_eq!(d.layer(Layer::Catchment).len(), 0);
}

/// The independent side of the layer checks below: plain SQL over the sample's
/// tables and the R*Tree indexes stored in it, none of the library's
/// reader, navigation or subsetting code.
mod sql {
    use rusqlite::Connection;

    pub use crate::support::{sample_sql as open, sql_ids as ids};

    /// The flowlines upstream of `outlet` through FromNode/ToNode, the outlet included.
    const UPSTREAM: &str = "WITH RECURSIVE up(comid, fromnode) AS (
          SELECT COMID, FromNode FROM NHDFlowline_Network WHERE COMID = ?1
          UNION SELECT f.COMID, f.FromNode FROM NHDFlowline_Network f JOIN up ON f.ToNode = up.fromnode)";

    /// `sql` after the upstream CTE, one integer column, sorted.
    pub fn upstream_ids(db: &Connection, outlet: i64, sql: &str) -> Vec<i64> {
        ids(db, &format!("{UPSTREAM} {sql}"), rusqlite::params![outlet])
    }

    /// `COMID`s of `table` whose R*Tree envelope meets `?1..?4` (xmin, ymin,
    /// xmax, ymax), as a CTE body.
    pub fn in_box(table: &str) -> String {
        format!(
            "SELECT t.COMID FROM \"{table}\" t JOIN \"rtree_{table}_geom\" r ON r.id = t.fid
             WHERE r.maxx >= ?1 AND r.minx <= ?3 AND r.maxy >= ?2 AND r.miny <= ?4"
        )
    }
}

/// The sorted `comid`s of a layer.
fn comids(d: &hydroplot::plot::PlotData, layer: Layer) -> Vec<i64> {
    let mut out: Vec<i64> = d
        .layer(layer)
        .to_features()
        .iter()
        .map(|f| f.get_i64("comid").unwrap())
        .collect();
    out.sort_unstable();
    out
}

#[test]
fn upstream_layers_are_the_ones_sql_over_the_file_gives() {
    let db = sql::open();
    let flowlines = sql::upstream_ids(&db, 13293970, "SELECT comid FROM up");
    let catchments = sql::upstream_ids(
        &db,
        13293970,
        "SELECT FEATUREID FROM CatchmentSP WHERE FEATUREID IN (SELECT comid FROM up)",
    );
    // Waterbodies whose envelope meets the basin's (the upstream catchments'
    // envelopes together); network ones are a WBAREACOMI of an upstream flowline.
    let waterbodies = "box AS (SELECT min(r.minx) x0, min(r.miny) y0, max(r.maxx) x1, max(r.maxy) y1
          FROM rtree_CatchmentSP_geom r JOIN CatchmentSP c ON c.fid = r.id
          WHERE c.FEATUREID IN (SELECT comid FROM up)),
        wb AS (SELECT w.COMID FROM NHDWaterbody w JOIN rtree_NHDWaterbody_geom r ON r.id = w.fid, box
          WHERE r.maxx >= box.x0 AND r.minx <= box.x1 AND r.maxy >= box.y0 AND r.miny <= box.y1),
        marks AS (SELECT WBAREACOMI FROM NHDFlowline_Network WHERE COMID IN (SELECT comid FROM up))";
    let network = sql::upstream_ids(
        &db,
        13293970,
        &format!(", {waterbodies} SELECT COMID FROM wb WHERE COMID IN marks"),
    );
    let off_network = sql::upstream_ids(
        &db,
        13293970,
        &format!(", {waterbodies} SELECT COMID FROM wb WHERE COMID NOT IN marks"),
    );
    // The SQL agrees with the published figures (251, 250, 117 waterbodies).
    assert_eq!(
        (
            flowlines.len(),
            catchments.len(),
            network.len() + off_network.len()
        ),
        (251, 250, 117)
    );

    let d = plot_hydro(&offline(), &request(vec![Outlet::Comid(13293970)]), None)
        .unwrap()
        .data;
    assert_eq!(comids(&d, Layer::Flowline), flowlines);
    let mut got_catchments: Vec<i64> = d
        .layer(Layer::Catchment)
        .to_features()
        .iter()
        .map(|f| f.get_i64("featureid").unwrap())
        .collect();
    got_catchments.sort_unstable();
    assert_eq!(got_catchments, catchments);
    assert_eq!(comids(&d, Layer::NetworkWtbd), network);
    assert_eq!(comids(&d, Layer::OffNetworkWtbd), off_network);
}

#[test]
fn the_bbox_case_layers_are_the_ones_sql_over_the_file_gives() {
    let bbox = [-89.56684, 42.99816, -89.24681, 43.17192];
    let db = sql::open();
    let query = |select: &str| {
        let ctes = format!(
            "WITH fl AS ({}), wb AS ({}), marks AS (SELECT WBAREACOMI FROM NHDFlowline_Network WHERE COMID IN fl)",
            sql::in_box("NHDFlowline_Network"),
            sql::in_box("NHDWaterbody")
        );
        sql::ids(&db, &format!("{ctes} {select}"), bbox)
    };
    // Stream order filters the flowlines drawn; every flowline in the box
    // marks its waterbody as a network one.
    let flowlines =
        query("SELECT COMID FROM NHDFlowline_Network WHERE COMID IN fl AND StreamOrde >= 2");
    let network = query("SELECT COMID FROM wb WHERE COMID IN marks");
    let off_network = query("SELECT COMID FROM wb WHERE COMID NOT IN marks");
    // The SQL agrees with the published figures.
    assert_eq!(
        (flowlines.len(), network.len(), off_network.len()),
        (76, 10, 43)
    );

    let req = PlotRequest {
        bbox: Some((bbox, "EPSG:4269".into())),
        streamorder: Some(2),
        hydro_data: Some(sample()),
        actually_plot: false,
        ..Default::default()
    };
    let d = plot_hydro(&offline(), &req, None).unwrap().data;
    assert_eq!(comids(&d, Layer::Flowline), flowlines);
    assert_eq!(comids(&d, Layer::NetworkWtbd), network);
    assert_eq!(comids(&d, Layer::OffNetworkWtbd), off_network);
}

/// The basin dissolved from the sample's catchments covers what `geo`'s
/// general overlay makes of the same polygons: the same area and parts.
#[test]
fn the_dissolved_basin_is_the_overlay_union_of_the_catchments() {
    use geo::Area;
    use hydroplot::collection::Collection;
    let gpkg = hydroplot::gpkg::GeoPackage::open(&sample()).unwrap();
    let catchments = gpkg.read_all(Collection::Catchment).unwrap();
    let rows: Vec<usize> = (0..catchments.len()).collect();
    let dissolved =
        hydroplot::table::dissolve::dissolve(catchments.geometries(), &rows, 2, &Stop::never())
            .unwrap()
            .unwrap();
    let polygons: Vec<geo::Geometry<f64>> = rows
        .iter()
        .filter_map(|&r| catchments.geometry(r))
        .collect();
    let overlay = hydroplot::feature::union_polygons(polygons.iter()).unwrap();
    let parts = |g: &geo::Geometry<f64>| match g {
        geo::Geometry::Polygon(_) => 1,
        geo::Geometry::MultiPolygon(m) => m.0.len(),
        _ => 0,
    };
    assert!(catchments.len() > 250, "{} catchments", catchments.len());
    assert_eq!(parts(&dissolved), parts(&overlay));
    let (a, b) = (dissolved.unsigned_area(), overlay.unsigned_area());
    assert!((a - b).abs() <= 1e-9 * b, "{a} vs {b}");
}

/// `properties = plot` reads only the columns the plot needs from the file
/// (what the fabric service would send), and draws the same map.
#[test]
fn properties_plot_reads_fewer_columns_and_draws_the_same_map() {
    let draw = |spec: &str| {
        let mut req = request(vec![Outlet::Comid(13293970)]);
        req.actually_plot = true;
        req.basemap = "none".into();
        req.set_properties(spec).unwrap();
        plot_hydro(&offline(), &req, None).unwrap()
    };
    let (full, slim) = (draw("all"), draw("plot"));
    let names = |p: &hydroplot::plot::Plot, layer: Layer| -> Vec<String> {
        let schema = p.data.layer(layer).schema().clone();
        schema.fields().iter().map(|f| f.name().clone()).collect()
    };
    let flowline = names(&slim, Layer::Flowline);
    // The plot's columns, in the declared order of the layer's fields.
    let network = hydroplot::collection::Collection::FlowlineNetwork;
    let expected: Vec<&str> = (network.schema().fields.iter())
        .map(|(name, _)| *name)
        .filter(|name| network.plot_properties().contains(name))
        .collect();
    assert_eq!(flowline, expected);
    assert!(names(&full, Layer::Flowline).len() > 100);
    assert_eq!(names(&slim, Layer::Catchment), ["featureid", "areasqkm"]);
    for layer in Layer::ALL {
        assert_eq!(
            slim.data.layer(layer).len(),
            full.data.layer(layer).len(),
            "{layer:?}"
        );
    }
    let png = |p: &hydroplot::plot::Plot| p.map.as_ref().unwrap().png().unwrap();
    assert!(png(&slim) == png(&full), "the PNGs differ");
}

/// The sample upstream of its outlet, and a box of it.
fn by_outlet_and_in_box() -> [PlotRequest; 2] {
    let by_outlet = request(vec![Outlet::Comid(13293970)]);
    let mut in_box = request(Vec::new());
    in_box
        .set_bbox([-89.45, 43.05, -89.35, 43.12], Some("EPSG:4326"))
        .unwrap();
    [by_outlet, in_box]
}

/// `fewer` holds the rows of `all`, with the same geometries and, of the
/// columns it has, the same values.
fn assert_same_rows(all: &Table, fewer: &Table, layer: Layer) {
    let (a, f) = (all.to_features(), fewer.to_features());
    assert_eq!(f.len(), a.len(), "{layer:?}");
    for (a, f) in a.iter().zip(&f) {
        assert_eq!(f.geometry, a.geometry, "{layer:?}");
        for (name, value) in &f.properties {
            assert_eq!(Some(value), a.properties.get(name), "{layer:?} {name}");
        }
    }
}

/// The flowline columns a narrowed read holds: those the map draws with,
/// and the topology the reader keeps (no name, reach code or ftype).
const NARROWED_FLOWLINE_COLUMNS: [&str; 6] = [
    "comid",
    "dnhydroseq",
    "hydroseq",
    "levelpathi",
    "streamorde",
    "wbareacomi",
];

/// The columns of the first flowline of `p`, sorted.
fn flowline_columns(p: &hydroplot::plot::Plot) -> Vec<String> {
    let flowlines = p.data.layer(Layer::Flowline).to_features();
    let mut names: Vec<String> = flowlines[0].properties.keys().cloned().collect();
    names.sort();
    names
}

/// A caller that only writes the map (`Layers::Drawn`, the CLI's map alone)
/// gets the layers the map draws, row for row with the same geometries and
/// the values of the columns the map draws with (and no other), the same
/// plot bbox and the same PNG; the layers it does not draw are not read.
/// Upstream of an outlet and in a box.
#[test]
fn the_drawn_layers_alone_draw_the_same_map() {
    for mut req in by_outlet_and_in_box() {
        req.actually_plot = true;
        req.basemap = "none".into();
        let all = plot_hydro(&offline(), &req, None).unwrap();
        req.layers = Layers::Drawn;
        let drawn = plot_hydro(&offline(), &req, None).unwrap();
        for layer in Layer::ALL {
            let (a, d) = (all.data.layer(layer), drawn.data.layer(layer));
            if Layer::DRAWN.contains(&layer) {
                assert_same_rows(a, d, layer);
            } else {
                assert!(d.is_empty(), "{layer:?} not read");
            }
        }
        assert_eq!(flowline_columns(&drawn), NARROWED_FLOWLINE_COLUMNS);
        assert!(!all.data.layer(Layer::Catchment).is_empty());
        assert_eq!(drawn.data.bbox, all.data.bbox);
        let png = |p: &hydroplot::plot::Plot| p.map.as_ref().unwrap().png().unwrap();
        assert!(png(&drawn) == png(&all), "the PNGs differ");
    }
}

/// A caller that only counts the features (`Layers::Counted`, the CLI with
/// no output) gets every layer row for row, with the same geometries, the
/// same values of the columns it reads, and of the flowlines only the
/// columns plot_hydro works with. Upstream of an outlet and in a box.
#[test]
fn the_counted_layers_hold_every_row_with_fewer_columns() {
    for mut req in by_outlet_and_in_box() {
        req.set_properties("plot").unwrap();
        let all = plot_hydro(&offline(), &req, None).unwrap();
        req.layers = Layers::Counted;
        let counted = plot_hydro(&offline(), &req, None).unwrap();
        for layer in Layer::ALL {
            assert_same_rows(all.data.layer(layer), counted.data.layer(layer), layer);
        }
        assert!(!all.data.layer(Layer::Catchment).is_empty());
        assert_eq!(flowline_columns(&counted), NARROWED_FLOWLINE_COLUMNS);
        assert_eq!(counted.data.bbox, all.data.bbox);
    }
}

/// Without catchments in the result the basin is folded from them a batch at
/// a time, never holding the layer: the same basin as from the layer held.
#[test]
fn the_flowline_only_basin_is_the_basin_of_the_full_subset() {
    use geo::Area;
    let basins = |flowline_only: bool| {
        let mut req = request(vec![Outlet::Comid(13293970), Outlet::Comid(13294176)]);
        req.flowline_only = Some(flowline_only);
        let d = plot_hydro(&offline(), &req, None).unwrap().data;
        assert_eq!(d.layer(Layer::Catchment).is_empty(), flowline_only);
        d.layer(Layer::Basin).to_features()
    };
    let (held, folded) = (basins(false), basins(true));
    assert_eq!(held.len(), 2);
    assert_eq!(folded.len(), 2);
    for (a, b) in held.iter().zip(&folded) {
        assert_eq!(a.properties, b.properties);
        let (a, b) = (
            a.geometry.as_ref().unwrap().unsigned_area(),
            b.geometry.as_ref().unwrap().unsigned_area(),
        );
        assert!(a > 0.0 && (a - b).abs() <= 1e-12 * a, "{a} vs {b}");
    }
}

/// Records each progress report with the thread that made it.
#[derive(Default)]
struct Stages(std::sync::Mutex<Vec<(String, u64, u64, std::thread::ThreadId)>>);

impl hydroplot::context::Observer for Stages {
    fn log(&self, _: hydroplot::context::LogLevel, _: &str) {}
    fn progress(&self, stage: &str, done: u64, total: u64) {
        let me = std::thread::current().id();
        self.0
            .lock()
            .unwrap()
            .push((stage.to_string(), done, total, me));
    }
}

#[test]
fn a_local_read_reports_its_stages_on_the_calling_thread() {
    let stages = std::sync::Arc::new(Stages::default());
    let ctx = offline().with_observer(Some(stages.clone()));
    let data = plot_hydro(&ctx, &request(vec![Outlet::Comid(13293970)]), None)
        .unwrap()
        .data;
    support::assert_yahara_counts(&data);
    let seen = stages.0.lock().unwrap();
    assert!(seen.iter().all(|s| s.3 == std::thread::current().id()));
    // Each stage ends with done = total: the reaches of the file, then the
    // published 251 upstream comids (whose catchments are looked up; 250
    // exist) and flowlines, and the one basin.
    let ended = |name: &str| seen.iter().rfind(|s| s.0 == name).map(|s| (s.1, s.2));
    let reaches: i64 = support::sample_sql()
        .query_row("SELECT count(*) FROM NHDFlowline_Network", [], |r| r.get(0))
        .unwrap();
    let reaches = reaches as u64;
    assert_eq!(ended("topology"), Some((reaches, reaches)));
    assert_eq!(ended("catchment"), Some((251, 251)));
    assert_eq!(ended("flowline"), Some((251, 251)));
    assert_eq!(ended("basin"), Some((1, 1)));
}
