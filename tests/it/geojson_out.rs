//! GeoJSON out is byte-identical to what the geojson crate and serde_json
//! write for the same features, their rings wound by geo's `Orient` as RFC
//! 7946 requires, for every layer of the real fixtures: local
//! mode on the Yahara sample (upstream of a comid and a bbox), download mode
//! through the mock, and the recorded raindrop trace.

use crate::support;

use hydroplot::feature::Feature;
use hydroplot::plot::{plot_hydro, Layer, Outlet, PlotData, PlotRequest};
use hydroplot::table::Table;
use hydroplot_mock::MockServer;
use std::path::PathBuf;
use support::{offline, sample};

/// The reference: a `geojson::FeatureCollection` of the layer's features
/// serialized by serde_json (sorted property keys, as its default `Map`),
/// their polygons wound by geo's `Orient` as RFC 7946 (3.1.6) requires:
/// exteriors counterclockwise, holes clockwise.
fn reference(table: &Table) -> Vec<u8> {
    let feature = |f: Feature| geojson::Feature {
        bbox: None,
        geometry: f
            .geometry
            .map(support::rfc_7946_winding)
            .as_ref()
            .map(|g| geojson::Geometry::new(geojson::GeometryValue::from(g))),
        id: f.id.and_then(|v| match v {
            serde_json::Value::String(s) => Some(geojson::feature::Id::String(s)),
            serde_json::Value::Number(n) => Some(geojson::feature::Id::Number(n)),
            _ => None,
        }),
        properties: Some(f.properties),
        foreign_members: None,
    };
    let collection = geojson::FeatureCollection {
        bbox: None,
        features: table.to_features().into_iter().map(feature).collect(),
        foreign_members: None,
    };
    serde_json::to_vec(&collection).unwrap()
}

/// The library's GeoJSON of one layer, streamed from the columns.
fn written(table: &Table) -> Vec<u8> {
    let mut out = Vec::new();
    hydroplot::table::geojson::write_collection(&mut out, table).unwrap();
    out
}

fn assert_identical(what: &str, table: &Table) {
    let (got, want) = (written(table), reference(table));
    if got != want {
        let at = got.iter().zip(&want).take_while(|(a, b)| a == b).count();
        let show = |b: &[u8]| {
            String::from_utf8_lossy(&b[at.saturating_sub(80)..(at + 80).min(b.len())]).into_owned()
        };
        panic!(
            "{what}: differs at byte {at} ({} vs {} bytes)\n got: {}\nwant: {}",
            got.len(),
            want.len(),
            show(&got),
            show(&want)
        );
    }
}

fn assert_every_layer(mode: &str, data: &PlotData) {
    let mut rows = 0;
    for layer in Layer::ALL {
        rows += data.layer(layer).len();
        assert_identical(&format!("{mode} {}", layer.name()), data.layer(layer));
    }
    assert!(rows > 0, "{mode}: the fixture gave no rows");
}

#[test]
fn local_mode_layers_are_identical() {
    let upstream = PlotRequest {
        outlets: vec![Outlet::Comid(13293970)],
        hydro_data: Some(sample()),
        actually_plot: false,
        ..Default::default()
    };
    let d = plot_hydro(&offline(), &upstream, None).unwrap().data;
    assert_every_layer("local upstream", &d);
    let bbox = PlotRequest {
        outlets: vec![],
        bbox: Some((
            [-89.56684, 42.99816, -89.24681, 43.17192],
            "EPSG:4269".into(),
        )),
        streamorder: Some(2),
        ..upstream
    };
    let d = plot_hydro(&offline(), &bbox, None).unwrap().data;
    assert_every_layer("local bbox", &d);
}

#[test]
fn download_mode_layers_are_identical() {
    let server = MockServer::start();
    let ctx = hydroplot_mock::context(&server);
    let req = PlotRequest {
        outlets: vec![Outlet::Comid(13293970)],
        actually_plot: false,
        ..Default::default()
    };
    let d = plot_hydro(&ctx, &req, None).unwrap().data;
    assert_every_layer("download", &d);
}

#[test]
fn the_trace_as_a_table_is_identical() {
    let body = std::fs::read(
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/responses/flowtrace_up_yahara.json"),
    )
    .unwrap();
    let trace = hydroplot::trace::Trace::parse(&body).unwrap();
    let table = Table::from_features(&trace.to_features()).unwrap();
    assert_identical("trace", &table);
}
