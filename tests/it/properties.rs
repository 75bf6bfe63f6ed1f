//! The `properties` setting: `plot` asks the fabric service for the
//! columns plot_hydro reads (`properties=` on every items request), which
//! costs fewer bytes and draws the same map; a list adds the user's flowline
//! columns; an unknown name is refused before any request; each setting is
//! its own cache entry; the C setter takes the same words. Counts come from the mock's request log; bytes from
//! replaying the logged requests against the mock.

use crate::support;

use hydroplot::ffi::context::{hydroplot_context_new, hydroplot_context_set_option};
use hydroplot::ffi::hydroplot_status::{self, *};
use hydroplot::http::Service;
use hydroplot::plot::{plot_hydro, CacheSetting, Layer, Outlet, PlotRequest, Properties};
use hydroplot::{Context, Error};
use hydroplot_mock::{context, LoggedRequest, MockServer};

/// Upstream of comid 13293970, drawn without a basemap.
fn upstream(properties: &str) -> PlotRequest {
    let mut req = PlotRequest {
        outlets: vec![Outlet::Comid(13293970)],
        basemap: "none".into(),
        cache: CacheSetting::Disabled,
        ..Default::default()
    };
    req.set_properties(properties).unwrap();
    req
}

/// The fabric service's items requests in `log`.
fn items_requests(log: &[LoggedRequest]) -> Vec<&LoggedRequest> {
    log.iter().filter(|r| r.path.ends_with("/items")).collect()
}

/// The bytes the mock answers to the GET items requests in `log` on
/// collections whose path ends in `collection_items`, asked again.
fn bytes_served(
    ctx: &Context,
    server: &MockServer,
    log: &[LoggedRequest],
    collection_items: &str,
) -> usize {
    items_requests(log)
        .iter()
        .filter(|r| r.path.ends_with(collection_items))
        .map(|r| {
            assert_eq!(r.method, "GET");
            let url = format!("{}{}?{}", server.base_url(), r.path, r.query);
            ctx.get(Service::Fabric, &url).unwrap().body.len()
        })
        .sum()
}

/// The number of columns of `layer` in a plot's data.
fn columns(plot: &hydroplot::plot::Plot, layer: Layer) -> usize {
    plot.data.layer(layer).schema().fields().len()
}

#[test]
fn plot_sends_properties_on_every_fabric_request_and_draws_the_same_map_from_fewer_bytes() {
    let server = MockServer::start();
    let ctx = context(&server);

    let full = plot_hydro(&ctx, &upstream("all"), None).unwrap();
    let full_log = server.requests();
    assert!(items_requests(&full_log)
        .iter()
        .all(|r| !r.query.contains("properties=")));

    server.clear_requests();
    let slim = plot_hydro(&ctx, &upstream("plot"), None).unwrap();
    let slim_log = server.requests();
    let items = items_requests(&slim_log);
    // Flowlines, catchments, waterbodies, NHDArea, non-network flowlines.
    assert!(items.len() >= 5, "{items:#?}");
    let with_properties = items
        .iter()
        .filter(|r| r.query.contains("properties="))
        .count();
    assert_eq!(with_properties, items.len(), "{items:#?}");

    let full_bytes = bytes_served(&ctx, &server, &full_log, "/items");
    let slim_bytes = bytes_served(&ctx, &server, &slim_log, "/items");
    assert!(
        slim_bytes < full_bytes,
        "plot: {slim_bytes} bytes, all: {full_bytes} bytes"
    );
    // The flowlines, whose 136 properties outweigh their geometry: under half.
    let flowlines = "/nhdflowline_network/items";
    let full_bytes = bytes_served(&ctx, &server, &full_log, flowlines);
    let slim_bytes = bytes_served(&ctx, &server, &slim_log, flowlines);
    assert!(
        slim_bytes * 2 < full_bytes,
        "flowlines with plot: {slim_bytes} bytes, all: {full_bytes} bytes"
    );
    // 8 of the flowlines' 136 served properties, plus the geometry column.
    assert!(columns(&slim, Layer::Flowline) < columns(&full, Layer::Flowline) / 4);
    assert_eq!(
        slim.data.layer(Layer::Flowline).len(),
        full.data.layer(Layer::Flowline).len()
    );

    let png = |p: &hydroplot::plot::Plot| p.map.as_ref().unwrap().png().unwrap();
    assert!(png(&slim) == png(&full), "the PNGs differ");
}

#[test]
fn a_comid_set_posts_its_queries_with_properties() {
    let server = MockServer::start();
    let ctx = context(&server);
    let mut req = PlotRequest {
        comid_set: Some(vec![13296606, 13297170]),
        actually_plot: false,
        cache: CacheSetting::Disabled,
        ..Default::default()
    };
    req.set_properties("plot").unwrap();
    let plot = plot_hydro(&ctx, &req, None).unwrap();
    assert_eq!(plot.data.layer(Layer::Flowline).len(), 2);
    let log = server.requests();
    let posts = items_requests(&log)
        .into_iter()
        .filter(|r| r.method == "POST")
        .count();
    assert_eq!(posts, 2, "flowlines and catchments by id: {log:#?}");
    assert!(items_requests(&log)
        .iter()
        .all(|r| r.query.contains("properties=")));
}

#[test]
fn a_list_adds_the_users_flowline_columns_to_what_the_plot_reads() {
    let server = MockServer::start();
    let ctx = context(&server);
    let mut req = upstream(" TotDASqKM , slope ");
    req.actually_plot = false;
    assert_eq!(
        req.properties,
        Properties::With(vec!["totdasqkm".into(), "slope".into()])
    );
    let plot = plot_hydro(&ctx, &req, None).unwrap();
    let flowlines = plot.data.layer(Layer::Flowline);
    for name in ["totdasqkm", "slope", "comid", "hydroseq", "streamorde"] {
        assert!(flowlines.column(name).is_some(), "{name}");
    }
    assert!(flowlines.column("qa_ma").is_none());
    let catchments = plot.data.layer(Layer::Catchment);
    assert!(catchments.column("featureid").is_some());
    assert!(catchments.column("slope").is_none());
}

#[test]
fn an_unknown_property_is_refused_before_any_request() {
    let server = MockServer::start();
    let ctx = context(&server);
    for spec in ["plots", "comid,nosuch", "", "comid,,slope", "comid;slope"] {
        let mut req = upstream("all");
        let e = req.set_properties(spec).unwrap_err();
        assert!(matches!(e, Error::InvalidArgument(_)), "{spec:?}: {e:?}");
        assert_eq!(req.properties, Properties::All, "unchanged");
    }
    let e = upstream("all")
        .set_properties("comid,nosuch")
        .unwrap_err()
        .to_string();
    assert!(e.contains("\"nosuch\"") && e.contains("properties"), "{e}");

    // Built field by field, the request is checked by plot_hydro.
    let req = PlotRequest {
        properties: Properties::With(vec!["nosuch".into()]),
        ..upstream("all")
    };
    let e = plot_hydro(&ctx, &req, None).err().unwrap();
    assert!(matches!(e, Error::InvalidArgument(_)), "{e:?}");
    assert!(server.requests().is_empty(), "{:#?}", server.requests());
}

#[test]
fn each_setting_is_its_own_cache_entry() {
    let server = MockServer::start();
    let ctx = context(&server);
    let dir = crate::scratch::temp_dir("properties");
    let cached = |spec: &str| PlotRequest {
        actually_plot: false,
        cache: CacheSetting::File(dir.join("cache.sqlite")),
        ..upstream(spec)
    };
    let fabric_requests = |req: &PlotRequest| {
        server.clear_requests();
        let plot = plot_hydro(&ctx, req, None).unwrap();
        (items_requests(&server.requests()).len(), plot)
    };
    let (first, full) = fabric_requests(&cached("all"));
    assert!(first > 0);
    let (miss, slim) = fabric_requests(&cached("plot"));
    assert!(miss > 0, "plot is not all's entry");
    assert!(columns(&slim, Layer::Flowline) < columns(&full, Layer::Flowline));
    let (hit, again) = fabric_requests(&cached("plot"));
    assert_eq!(hit, 0, "plot's own entry");
    assert_eq!(
        columns(&again, Layer::Flowline),
        columns(&slim, Layer::Flowline)
    );
    let (miss, _) = fabric_requests(&cached("slope"));
    assert!(miss > 0, "a list is another entry");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Runs a C request upstream of comid 13293970 (no map, no cache) with the
/// given `properties` spec on `server`, returning the setter's status and
/// whether every fabric items request carried `properties=`.
fn c_plot(server: &MockServer, spec: Option<&str>) -> (hydroplot_status, Option<bool>) {
    use hydroplot::ffi::plot_request::*;
    use std::ffi::CString;
    let cstr = |s: &str| CString::new(s).unwrap();
    let mut ctx = std::ptr::null_mut();
    assert_eq!(hydroplot_context_new(&mut ctx), HYDROPLOT_OK);
    for (k, v) in [
        ("index_url", server.index_url()),
        ("fabric_url", server.fabric_url()),
    ] {
        let status = hydroplot_context_set_option(ctx, cstr(k).as_ptr(), cstr(&v).as_ptr());
        assert_eq!(status, HYDROPLOT_OK);
    }
    let req = hydroplot_plot_request_new();
    assert_eq!(
        hydroplot_plot_request_add_comid(req, 13293970),
        HYDROPLOT_OK
    );
    assert_eq!(
        hydroplot_plot_request_set_actually_plot(req, false),
        HYDROPLOT_OK
    );
    assert_eq!(hydroplot_plot_request_disable_cache(req), HYDROPLOT_OK);
    let spec = spec.map(cstr);
    let status = hydroplot_plot_request_set_properties(
        req,
        spec.as_ref().map_or(std::ptr::null(), |s| s.as_ptr()),
    );
    server.clear_requests();
    support::c_api::plot_and_free(ctx, req);
    let log = server.requests();
    let items = items_requests(&log);
    let all_slim = items.iter().all(|r| r.query.contains("properties="));
    let none_slim = items.iter().all(|r| !r.query.contains("properties="));
    (status, (all_slim || none_slim).then_some(all_slim))
}

#[test]
fn the_c_setter_takes_the_same_words_and_leaves_the_request_unchanged_on_failure() {
    let server = MockServer::start();
    assert_eq!(c_plot(&server, Some("plot")), (HYDROPLOT_OK, Some(true)));
    assert_eq!(
        c_plot(&server, Some("slope,totdasqkm")),
        (HYDROPLOT_OK, Some(true))
    );
    assert_eq!(c_plot(&server, Some("all")), (HYDROPLOT_OK, Some(false)));
    assert_eq!(
        c_plot(&server, Some("nosuch")),
        (HYDROPLOT_ERR_INVALID_ARGUMENT, Some(false))
    );
    assert_eq!(
        c_plot(&server, None),
        (HYDROPLOT_ERR_NULL_ARGUMENT, Some(false))
    );
}
