//! Paging always ends, through plot_hydro, against mock fabric services that
//! page differently from pygeoapi's offsets: by an opaque cursor (offset
//! ignored, no `numberMatched`), by `next` links that lead back to the
//! first page forever, and without `sortby` (a 400, as pygeoapi answers for
//! a provider that cannot sort). Counts are the published nhdplusTools
//! figures for the Yahara sample; pages of 20 make every query page. The
//! last test runs the `hydroplot` command line against the same servers.

use hydroplot::context::{LogLevel, Observer};
use hydroplot::plot::{plot_hydro, Layer, Outlet, PlotData, PlotRequest};
use hydroplot::{Context, Error};
use hydroplot_mock::{context, LoggedRequest, MockServer, Paging};
use std::collections::{HashMap, HashSet};
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};

/// Requests a client may make before the mock answers only 503s: far more
/// than these plots need, so a client that pages forever fails instead of
/// hanging the test.
const BUDGET: u64 = 400;

/// A server with `paging`, a request budget, and a context on it with pages
/// of 20 whose warnings land in the returned list.
fn setup(paging: Paging) -> (MockServer, Context, Arc<Warnings>) {
    let server = MockServer::start();
    server.set_paging(paging);
    server.set_request_budget(BUDGET);
    let mut config = context(&server).config.clone();
    config.set("page_size", "20").unwrap();
    let warnings = Arc::new(Warnings::default());
    let ctx = Context::new(config)
        .unwrap()
        .with_observer(Some(warnings.clone() as Arc<dyn Observer>));
    (server, ctx, warnings)
}

/// The warnings logged.
#[derive(Default)]
struct Warnings(Mutex<Vec<String>>);

impl Observer for Warnings {
    fn log(&self, level: LogLevel, message: &str) {
        if level == LogLevel::Warning {
            self.0.lock().unwrap().push(message.to_string());
        }
    }
    fn progress(&self, _: &str, _: u64, _: u64) {}
}

/// Upstream of comid 13293970: 251 flowlines, 250 catchments (published).
fn upstream_of_13293970() -> PlotRequest {
    PlotRequest {
        outlets: vec![Outlet::Comid(13293970)],
        actually_plot: false,
        ..Default::default()
    }
}

/// The box of the published figures at stream order 2: 76 flowlines and
/// 10 + 43 waterbodies.
fn bbox_at_stream_order_2() -> PlotRequest {
    PlotRequest {
        bbox: Some((
            [-89.56684, 42.99816, -89.24681, 43.17192],
            "EPSG:4269".into(),
        )),
        streamorder: Some(2),
        actually_plot: false,
        ..Default::default()
    }
}

/// The number of features of `layer`, asserting that each comid (or
/// featureid) occurs once.
fn distinct(d: &PlotData, layer: Layer, key: &str) -> usize {
    let features = d.layer(layer).to_features();
    let ids: HashSet<i64> = features.iter().map(|f| f.get_i64(key).unwrap()).collect();
    assert_eq!(ids.len(), features.len(), "{layer:?} has duplicates");
    ids.len()
}

/// The published counts upstream of comid 13293970, each feature once.
fn assert_upstream_counts(d: &PlotData) {
    assert_eq!(distinct(d, Layer::Flowline, "comid"), 251);
    assert_eq!(distinct(d, Layer::Catchment, "featureid"), 250);
}

/// The published counts of [`bbox_at_stream_order_2`], each flowline once.
fn assert_bbox_counts(d: &PlotData) {
    assert_eq!(distinct(d, Layer::Flowline, "comid"), 76);
    let waterbodies = d.layer(Layer::NetworkWtbd).len() + d.layer(Layer::OffNetworkWtbd).len();
    assert_eq!(waterbodies, 10 + 43);
}

/// The data of `req`, which must succeed.
fn plot(ctx: &Context, req: &PlotRequest) -> PlotData {
    plot_hydro(ctx, req, None).unwrap().data
}

/// The query strings of the flowline items requests in `log`, in order.
fn flowline_queries(log: &[LoggedRequest]) -> Vec<&str> {
    log.iter()
        .filter(|r| r.path.ends_with("/nhdflowline_network/items"))
        .map(|r| r.query.as_str())
        .collect()
}

#[test]
fn a_cursor_server_gives_the_published_counts_with_no_duplicates() {
    let (server, ctx, _) = setup(Paging::Cursor);
    assert_upstream_counts(&plot(&ctx, &upstream_of_13293970()));

    server.clear_requests();
    assert_bbox_counts(&plot(&ctx, &bbox_at_stream_order_2()));
    // 76 flowlines in pages of 20: the first page, then the three pages
    // the cursors lead to, each requested once.
    let log = server.requests();
    let pages = flowline_queries(&log);
    assert_eq!(pages.len(), 4, "{pages:#?}");
    assert!(pages[1..].iter().all(|q| q.contains("cursor=")));
    assert_eq!(pages.iter().collect::<HashSet<_>>().len(), 4);
}

#[test]
fn an_endless_server_fails_naming_the_url_after_two_requests() {
    for counted in [false, true] {
        let (server, ctx, _) = setup(Paging::Endless);
        server.set_number_matched(counted);
        let e = plot_hydro(&ctx, &bbox_at_stream_order_2(), None)
            .err()
            .unwrap();
        assert!(matches!(e, Error::Service(_)), "{e:?}");
        let message = e.to_string();
        let log = server.requests();
        let pages = flowline_queries(&log);
        // The first page, then its next link: the same features again.
        assert_eq!(pages.len(), 2, "numberMatched {counted}: {pages:#?}");
        let repeated = format!("{}{}?{}", server.base_url(), log[1].path, pages[1]);
        assert!(
            message.contains(&repeated) && message.contains("repeats"),
            "{message}"
        );
        assert_eq!(log.len(), 2, "nothing requested after the failure");
    }
}

#[test]
fn a_server_that_cannot_sort_is_paged_without_sortby_with_a_warning() {
    let (server, ctx, warnings) = setup(Paging::Offset);
    server.set_sortable(false);
    assert_bbox_counts(&plot(&ctx, &bbox_at_stream_order_2()));
    // Flowlines: the refused sorted page, then 4 pages of 20 without sortby.
    let log = server.requests();
    let pages = flowline_queries(&log);
    assert_eq!(pages.len(), 5, "{pages:#?}");
    assert!(pages[0].contains("sortby=comid"));
    assert!(pages[1..].iter().all(|q| !q.contains("sortby")));
    let warned = warnings.0.lock().unwrap().clone();
    let about_flowlines: Vec<&String> = warned
        .iter()
        .filter(|w| w.contains("nhdflowline_network") && w.contains("order was not guaranteed"))
        .collect();
    assert_eq!(about_flowlines.len(), 1, "{warned:#?}");

    // The same through the upstream pipeline: the published counts.
    assert_upstream_counts(&plot(&ctx, &upstream_of_13293970()));
}

/// `hydroplot plot ARGS --no-plot --no-cache` on `server`'s services with
/// pages of 20, as a user runs it.
fn cli_plot(server: &MockServer, args: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_hydroplot"));
    for (k, _) in std::env::vars() {
        if k.starts_with("HYDROPLOT_") {
            cmd.env_remove(k);
        }
    }
    cmd.arg("plot").args(args).args(["--no-plot", "--no-cache"]);
    for option in [
        format!("index_url={}", server.index_url()),
        format!("fabric_url={}", server.fabric_url()),
        "page_size=20".to_string(),
    ] {
        cmd.args(["--option", &option]);
    }
    cmd.output().unwrap()
}

#[test]
fn the_command_line_pages_a_cursor_server_and_stops_an_endless_one() {
    let (server, _, _) = setup(Paging::Cursor);
    let out = cli_plot(&server, &["--comid", "13293970"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // "flowline     251 features" and so on, a line per layer.
    let counts: HashMap<&str, &str> = stdout
        .lines()
        .filter_map(|l| {
            let mut words = l.split_whitespace();
            Some((words.next()?, words.next()?))
        })
        .collect();
    assert_eq!(counts.get("flowline"), Some(&"251"), "{stdout}");
    assert_eq!(counts.get("catchment"), Some(&"250"), "{stdout}");

    let (server, _, _) = setup(Paging::Endless);
    let out = cli_plot(
        &server,
        &["--bbox", "-89.56684,42.99816,-89.24681,43.17192"],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    let log = server.requests();
    assert_eq!(log.len(), 2, "{log:#?}");
    let repeated = format!("{}{}?{}", server.base_url(), log[1].path, log[1].query);
    assert!(stderr.contains(&repeated), "{stderr}");
}

#[test]
fn the_command_line_prints_the_warning_of_a_server_that_cannot_sort() {
    let (server, _, _) = setup(Paging::Offset);
    server.set_sortable(false);
    let out = cli_plot(&server, &["--comid", "13293970"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    // One warning per query the server refused to sort: the flowlines and
    // each of the four bbox layers, each naming its collection.
    let unsorted: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("warning: ") && l.contains("order was not guaranteed"))
        .collect();
    assert_eq!(unsorted.len(), 5, "{stderr}");
    assert!(
        unsorted.iter().any(|l| l.contains("nhdflowline_network")),
        "{stderr}"
    );
}
