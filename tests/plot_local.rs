//! plot_hydro from a local GeoPackage (`hydro_data`): no network at all.
//! The numbers are the nhdplusTools test suite's published facts about the
//! Yahara sample.

use hydroplot::config::Config;
use hydroplot::plot::{plot_hydro, Layer, Outlet, PlotRequest};
use hydroplot::{Context, Error};
use std::path::PathBuf;

fn sample() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/yahara_sample.gpkg")
}

/// A context whose services are unreachable: any request would fail.
fn offline() -> Context {
    let mut c = Config::default();
    c.set("index_url", "http://127.0.0.1:9/nldi").unwrap();
    c.set("fabric_url", "http://127.0.0.1:9/fabric").unwrap();
    c.set("retries", "0").unwrap();
    Context::new(c).unwrap()
}

fn request(outlets: Vec<Outlet>) -> PlotRequest {
    PlotRequest {
        outlets,
        hydro_data: Some(sample()),
        actually_plot: false,
        ..Default::default()
    }
}

fn counts(d: &hydroplot::plot::PlotData) -> Vec<(&'static str, usize)> {
    Layer::ALL
        .iter()
        .map(|l| (l.name(), d.layer(*l).len()))
        .collect()
}

#[test]
fn upstream_of_13293970_matches_the_reference() {
    let d = plot_hydro(&offline(), &request(vec![Outlet::Comid(13293970)]), None).unwrap();
    assert_eq!(d.layer(Layer::Flowline).len(), 251, "{:?}", counts(&d));
    assert_eq!(d.layer(Layer::Catchment).len(), 250);
    assert_eq!(d.layer(Layer::Area).len(), 3);
    assert_eq!(
        d.layer(Layer::NetworkWtbd).len() + d.layer(Layer::OffNetworkWtbd).len(),
        117
    );
    assert_eq!(d.layer(Layer::FlowlineNonNetwork).len(), 48);
    assert_eq!(d.layer(Layer::Gage).len(), 44);
    assert_eq!(d.layer(Layer::Basin).len(), 1);
    assert_eq!(d.layer(Layer::Outlets).len(), 1);
    assert_eq!(d.layer(Layer::Outlets)[0].get_i64("comid"), Some(13293970));
    assert_eq!(d.flowline_comids.len(), 251);
    assert!(d.flowline_comids.contains(&13293970));
    // The basin is one valid polygon covering the catchments.
    let basin = d.layer(Layer::Basin)[0].geometry.as_ref().unwrap();
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
    let d = plot_hydro(&offline(), &req, None).unwrap();
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
    .unwrap();
    let outlet = &d.layer(Layer::Outlets)[0];
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
    let d = plot_hydro(&offline(), &req, None).unwrap();
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
    let d = plot_hydro(&offline(), &request(vec![outlet]), None).unwrap();
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
    let d = plot_hydro(&offline(), &req, None).unwrap();
    assert!(d.layer(Layer::Flowline).len() < 251);
    // flowline_only was turned on by the rule.
    assert_eq!(d.layer(Layer::Catchment).len(), 0);
}
