//! plot_hydro against the loopback mock services (download mode): the
//! requests the spec prescribes, and the numbers of the real Yahara data.

use hydroplot::plot::{plot_hydro, Layer, Outlet, PlotRequest};
use hydroplot::Error;
use hydroplot_mock::{context, MockServer};

fn data_only(outlets: Vec<Outlet>) -> PlotRequest {
    PlotRequest {
        outlets,
        actually_plot: false,
        ..Default::default()
    }
}

#[test]
fn upstream_of_13293970_is_251_flowlines_and_250_catchments() {
    let server = MockServer::start();
    let ctx = context(&server);
    let d = plot_hydro(&ctx, &data_only(vec![Outlet::Comid(13293970)]), None)
        .unwrap()
        .data;
    assert_eq!(d.layer(Layer::Flowline).len(), 251);
    assert_eq!(d.layer(Layer::Catchment).len(), 250);
    assert_eq!(d.layer(Layer::Basin).len(), 1);
    assert_eq!(d.layer(Layer::Outlets).len(), 1);
    assert_eq!(
        d.layer(Layer::Outlets).to_features()[0].get_str("type"),
        Some("comid")
    );
    // Requests: one feature lookup and one basin, then one R4 page per layer.
    let log = server.requests();
    let paths: Vec<String> = log
        .iter()
        .map(|r| format!("{} {}?{}", r.method, r.path, r.query))
        .collect();
    assert!(
        paths.contains(&"GET /nldi/linked-data/comid/13293970?".to_string()),
        "{paths:#?}"
    );
    assert!(
        paths.contains(
            &"GET /nldi/linked-data/comid/13293970/basin?simplify=true&splitCatchment=false"
                .to_string()
        ),
        "{paths:#?}"
    );
    let flowline_pages: Vec<&String> = paths
        .iter()
        .filter(|p| p.contains("nhdflowline_network/items"))
        .collect();
    assert_eq!(flowline_pages.len(), 1, "{paths:#?}");
    assert!(flowline_pages[0]
        .starts_with("GET /fabric/pygeoapi/collections/nhdflowline_network/items?bbox="));
    assert!(
        flowline_pages[0].ends_with("&limit=500&offset=0&sortby=comid"),
        "{}",
        flowline_pages[0]
    );
}

#[test]
fn stream_order_n_sends_the_spec_filter() {
    let server = MockServer::start();
    let ctx = context(&server);
    let mut req = data_only(vec![Outlet::Comid(13293970)]);
    req.streamorder = Some(3);
    let d = plot_hydro(&ctx, &req, None).unwrap().data;
    let log = server.requests();
    let page = log
        .iter()
        .find(|r| r.path.ends_with("nhdflowline_network/items"))
        .unwrap();
    assert!(
        page.query.contains("filter=streamorde%20%3E%202"),
        "{}",
        page.query
    );
    assert!(d
        .layer(Layer::Flowline)
        .to_features()
        .iter()
        .all(|f| f.get_i64("streamorde").unwrap() >= 3));
    assert!(d.layer(Layer::Flowline).len() < 251);
}

#[test]
fn a_gauge_site_gives_the_upstream_set_of_its_comid() {
    let server = MockServer::start();
    let ctx = context(&server);
    let by_site = plot_hydro(
        &ctx,
        &data_only(vec![Outlet::Site("05429500".into())]),
        None,
    )
    .unwrap()
    .data;
    let outlets = by_site.layer(Layer::Outlets).to_features();
    let outlet = &outlets[0];
    assert_eq!(outlet.get_str("id"), Some("USGS-05429500"));
    let comid = outlet.get_i64("comid").unwrap();
    let by_comid = plot_hydro(&ctx, &data_only(vec![Outlet::Comid(comid)]), None)
        .unwrap()
        .data;
    assert_eq!(by_site.flowline_comids, by_comid.flowline_comids);
    assert!(server
        .requests()
        .iter()
        .any(|r| r.path == "/nldi/linked-data/nwissite/USGS-05429500"));
}

#[test]
fn the_integer_comid_set_returns_exactly_those_with_one_post() {
    let server = MockServer::start();
    let ctx = context(&server);
    let set = vec![13293970, 13294312, 13293454];
    let req = PlotRequest {
        comid_set: Some(set.clone()),
        actually_plot: false,
        ..Default::default()
    };
    let d = plot_hydro(&ctx, &req, None).unwrap().data;
    let mut got = d.flowline_comids.clone();
    got.sort();
    let mut want = set;
    want.sort();
    assert_eq!(got, want);
    let post = server
        .requests()
        .into_iter()
        .find(|r| r.method == "POST" && r.path.ends_with("nhdflowline_network/items"))
        .unwrap();
    assert_eq!(post.query, "limit=500&offset=0&sortby=comid");
    let body: serde_json::Value = serde_json::from_str(&post.body).unwrap();
    assert_eq!(body["op"], "in");
    assert_eq!(body["args"][0]["property"], "comid");
    assert_eq!(body["args"][1].as_array().unwrap().len(), 3);
}

/// A comid set has its catchments by id (R3): they are not fetched again by
/// the box, where a service could hold more than `max_features` of them.
#[test]
fn a_comid_set_fetches_its_catchments_once() {
    let server = MockServer::start();
    let mut config = context(&server).config.clone();
    config.set("max_features", "12").unwrap();
    let ctx = hydroplot::Context::new(config).unwrap();
    let req = PlotRequest {
        comid_set: Some(vec![13293970, 13293750]),
        actually_plot: false,
        ..Default::default()
    };
    let d = plot_hydro(&ctx, &req, None).unwrap().data;
    assert_eq!(d.layer(Layer::Catchment).len(), 2);
    assert!(!d.layer(Layer::OffNetworkWtbd).is_empty());
    let catchments: Vec<String> = (server.requests().iter())
        .filter(|r| r.path.ends_with("/catchmentsp/items"))
        .map(|r| format!("{} {}", r.method, r.query))
        .collect();
    assert_eq!(catchments.len(), 1, "{catchments:?}");
    assert!(catchments[0].starts_with("POST "), "{catchments:?}");
}

#[test]
fn a_bbox_over_several_pages_of_an_unordered_service_returns_every_feature_once() {
    let server = MockServer::start();
    server.set_unordered(true);
    let mut config = context(&server).config.clone();
    config.set("page_size", "20").unwrap();
    let ctx = hydroplot::Context::new(config).unwrap();
    // The published nhdplusTools figures for this box at stream order 2.
    let req = PlotRequest {
        bbox: Some((
            [-89.56684, 42.99816, -89.24681, 43.17192],
            "EPSG:4269".into(),
        )),
        streamorder: Some(2),
        actually_plot: false,
        ..Default::default()
    };
    for round in 0..3 {
        server.clear_requests();
        let d = plot_hydro(&ctx, &req, None).unwrap().data;
        let mut comids = d.flowline_comids.clone();
        comids.sort();
        comids.dedup();
        assert_eq!(
            (comids.len(), d.flowline_comids.len()),
            (76, 76),
            "round {round}"
        );
        // Published: 10 network + 43 off-network. The download splits them by
        // the filtered flowlines' wbareacomi (the service filters by stream
        // order): 4 + 49 (`tests/it/streamorder.rs` has it by SQL), and only
        // the total is the published one here; the local mode, which sees
        // every flowline in the box, gives 10 + 43.
        let network = d.layer(Layer::NetworkWtbd).len();
        let waterbodies = network + d.layer(Layer::OffNetworkWtbd).len();
        assert_eq!((network, waterbodies), (4, 10 + 43), "round {round}");
        let pages = server
            .requests()
            .iter()
            .filter(|r| r.path.ends_with("nhdflowline_network/items"))
            .count();
        assert_eq!(pages, 4, "76 flowlines in pages of 20");
    }
}

#[test]
fn errors_name_the_outlet() {
    let server = MockServer::start();
    let ctx = context(&server);
    let e = plot_hydro(&ctx, &data_only(vec![Outlet::Comid(1)]), None)
        .err()
        .unwrap();
    assert!(
        matches!(
            e,
            Error::NotFound {
                http_status: 404,
                ..
            }
        ),
        "{e}"
    );
    assert!(e.to_string().contains("comid/1"), "{e}");
    let sea = Outlet::Point {
        x: -60.0,
        y: 30.0,
        crs: "EPSG:4326".into(),
    };
    let e = plot_hydro(&ctx, &data_only(vec![sea]), None).err().unwrap();
    assert!(
        matches!(e, Error::NotFound { .. }) && e.to_string().contains("no catchment"),
        "{e}"
    );
}

#[test]
fn a_point_outlet_is_looked_up_with_r2() {
    let server = MockServer::start();
    let ctx = context(&server);
    let p = Outlet::Point {
        x: -89.36,
        y: 43.09,
        crs: "EPSG:4326".into(),
    };
    let d = plot_hydro(&ctx, &data_only(vec![p]), None).unwrap().data;
    assert!(!d.flowline_comids.is_empty());
    let lookup = server
        .requests()
        .into_iter()
        .find(|r| r.path.ends_with("catchmentsp/items"))
        .unwrap();
    assert_eq!(
        lookup.query,
        "bbox=-89.36,43.09,-89.36,43.09&properties=featureid&skipGeometry=true&sortby=featureid"
    );
}

#[test]
fn a_multi_outlet_run_makes_one_basin_and_one_feature_request_per_outlet() {
    let server = MockServer::start();
    let ctx = context(&server);
    let outlets = vec![
        Outlet::Comid(13293970),
        Outlet::Site("05427718".into()),
        Outlet::Feature {
            source: "huc12pp".into(),
            id: "070900020602".into(),
        },
    ];
    let d = plot_hydro(&ctx, &data_only(outlets), None).unwrap().data;
    assert_eq!(d.layer(Layer::Outlets).len(), 3);
    assert_eq!(d.layer(Layer::Basin).len(), 3);
    let outlets = d.layer(Layer::Outlets).to_features();
    let types: Vec<&str> = outlets.iter().filter_map(|f| f.get_str("type")).collect();
    assert_eq!(types, ["comid", "nwissite", "huc12pp"]);
    let log = server.requests();
    let basins = log.iter().filter(|r| r.path.ends_with("/basin")).count();
    let features = log
        .iter()
        .filter(|r| r.path.starts_with("/nldi/linked-data/") && !r.path.ends_with("/basin"))
        .count();
    assert_eq!((basins, features), (3, 3));
    // Every layer fits one page of 500: one request per collection.
    for collection in [
        "nhdflowline_network",
        "catchmentsp",
        "nhdwaterbody",
        "nhdarea",
        "nhdflowline_nonnetwork",
    ] {
        let pages = log
            .iter()
            .filter(|r| r.path.contains(&format!("/collections/{collection}/items")))
            .count();
        assert_eq!(pages, 1, "{collection}");
    }
    assert_eq!(log.len(), 3 + 3 + 5);
}

#[test]
fn a_missing_optional_layer_is_a_warning_and_progress_sees_every_stage() {
    use hydroplot::context::{LogLevel, Observer};
    use std::sync::{Arc, Mutex};
    #[derive(Default)]
    struct Stages(Mutex<Vec<(String, u64, u64)>>, Mutex<Vec<String>>);
    impl Observer for Stages {
        fn log(&self, level: LogLevel, message: &str) {
            if level == LogLevel::Warning {
                self.1.lock().unwrap().push(message.to_string());
            }
        }
        fn progress(&self, stage: &str, done: u64, total: u64) {
            self.0
                .lock()
                .unwrap()
                .push((stage.to_string(), done, total));
        }
    }
    let server = MockServer::start();
    server.set_fault(hydroplot_mock::Fault {
        path_contains: "/collections/nhdarea/items".into(),
        kind: hydroplot_mock::FaultKind::Status(404),
        times: None,
    });
    let stages = Arc::new(Stages::default());
    let ctx = context(&server).with_observer(Some(stages.clone()));
    let d = plot_hydro(&ctx, &data_only(vec![Outlet::Comid(13293970)]), None)
        .unwrap()
        .data;
    assert_eq!(d.layer(Layer::Flowline).len(), 251);
    assert_eq!(d.layer(Layer::Area).len(), 0);
    assert_eq!(d.warnings.len(), 1, "{:?}", d.warnings);
    assert!(d.warnings[0].contains("nhdarea"));
    assert_eq!(
        *stages.1.lock().unwrap(),
        d.warnings,
        "warnings also go to the log"
    );
    let seen: Vec<String> = stages
        .0
        .lock()
        .unwrap()
        .iter()
        .map(|(s, _, _)| s.clone())
        .collect();
    for stage in [
        "basin",
        "flowline",
        "catchment",
        "waterbody",
        "flowline_nonnetwork",
    ] {
        assert!(seen.iter().any(|s| s == stage), "{stage} in {seen:?}");
    }
    assert!(stages
        .0
        .lock()
        .unwrap()
        .contains(&("basin".to_string(), 1, 1)));
}

#[test]
fn neutral_names_change_every_path_the_library_builds() {
    let server = MockServer::start();
    server.set_names(hydroplot::config::Names::Neutral);
    let mut config = context(&server).config.clone();
    config.set("names", "neutral").unwrap();
    let ctx = hydroplot::Context::new(config).unwrap();
    let d = plot_hydro(
        &ctx,
        &data_only(vec![Outlet::Site("05429500".into())]),
        None,
    )
    .unwrap()
    .data;
    assert_eq!(
        d.layer(Layer::Outlets).to_features()[0].get_str("type"),
        Some("gaugesite")
    );
    let paths: Vec<String> = server.requests().into_iter().map(|r| r.path).collect();
    assert!(
        paths.contains(&"/nldi/linked-data/gaugesite/USGS-05429500".to_string()),
        "{paths:?}"
    );
    assert!(
        paths.contains(&"/fabric/pygeoapi/collections/flowline_network/items".to_string()),
        "{paths:?}"
    );
    assert!(
        !paths
            .iter()
            .any(|p| p.contains("nwissite") || p.contains("nhdflowline_network")),
        "{paths:?}"
    );
}
