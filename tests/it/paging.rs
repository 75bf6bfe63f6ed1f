//! Paging always ends, and never ends early, through plot_hydro, against
//! mock fabric services that page differently from pygeoapi's offsets: by
//! an opaque cursor (offset ignored, no `numberMatched`), by `next` links
//! that lead back to the first page forever (with or without feature ids),
//! without `sortby` (a 400, as pygeoapi answers for a provider that cannot
//! sort), without any `next` link or count, and with a `numberMatched` too
//! low. Counts are the published nhdplusTools figures for the Yahara
//! sample, or counted in the mock's data; pages of 20 make every query
//! page. The last tests run the `hydroplot` command line against the same
//! servers.

use crate::support;
use geo::Intersects;
use hydroplot::collection::Collection;
use hydroplot::context::{LogLevel, Observer};
use hydroplot::plot::{plot_hydro, Layer, Outlet, PlotData, PlotRequest};
use hydroplot::services::fabric::{self, ItemsQuery};
use hydroplot::{Context, Error};
use hydroplot_mock::data::Data;
use hydroplot_mock::{context, LoggedRequest, MockServer, Paging};
use std::collections::{HashMap, HashSet};
use std::process::Output;
use std::sync::{Arc, Mutex};

/// Requests a client may make before the mock answers only 503s: far more
/// than these plots need, so a client that pages forever fails instead of
/// hanging the test.
const BUDGET: u64 = 400;

/// A server with `paging`, a request budget, and a context on it with pages
/// of 20 whose warnings land in the returned list.
fn setup(paging: Paging) -> (MockServer, Context, Arc<Warnings>) {
    setup_with_pages(paging, 20)
}

/// The same with pages of `page_size`.
fn setup_with_pages(paging: Paging, page_size: usize) -> (MockServer, Context, Arc<Warnings>) {
    let server = MockServer::start();
    server.set_paging(paging);
    server.set_request_budget(BUDGET);
    let mut config = context(&server).config.clone();
    config.set("page_size", &page_size.to_string()).unwrap();
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

/// The box of [`bbox_at_stream_order_2`].
const YAHARA_BOX: [f64; 4] = [-89.56684, 42.99816, -89.24681, 43.17192];

/// The flowlines the mock serves that meet `bbox`, counted in its data.
fn flowlines_in(bbox: [f64; 4]) -> usize {
    let rect = geo::Rect::new((bbox[0], bbox[1]), (bbox[2], bbox[3]));
    Data::shared()
        .unwrap()
        .layer(Collection::FlowlineNetwork)
        .iter()
        .filter(|item| {
            item.feature
                .geometry
                .as_ref()
                .is_some_and(|g| g.intersects(&rect))
        })
        .count()
}

/// Every flowline meeting `bbox`, by the library's pager, asserting that
/// each comid occurs once.
fn flowlines_by_pager(ctx: &Context, bbox: [f64; 4]) -> usize {
    let query = ItemsQuery::BBox { bbox, filter: None };
    let features = fabric::items(ctx, Collection::FlowlineNetwork, &query, "flowline").unwrap();
    let ids: HashSet<i64> = features
        .iter()
        .map(|f| f.get_i64("comid").unwrap())
        .collect();
    assert_eq!(ids.len(), features.len(), "duplicates");
    ids.len()
}

/// The `offset` of each query in `queries`.
fn offsets(queries: &[&str]) -> Vec<usize> {
    queries
        .iter()
        .map(|q| {
            let pair = q.split('&').find_map(|p| p.strip_prefix("offset="));
            pair.unwrap().parse().unwrap()
        })
        .collect()
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

/// Next links that go round in a circle end after two requests, with an
/// error naming the URL: the same features again (`Endless`), or, when the
/// features carry no id to repeat, the link back to a page already
/// requested (`EndlessWithoutIds`).
#[test]
fn an_endless_server_fails_naming_the_url_after_two_requests() {
    for (paging, says) in [
        (Paging::Endless, "repeats"),
        (Paging::EndlessWithoutIds, "already requested"),
    ] {
        for counted in [false, true] {
            let (server, ctx, _) = setup(paging);
            server.set_number_matched(counted);
            let e = plot_hydro(&ctx, &bbox_at_stream_order_2(), None)
                .err()
                .unwrap();
            assert!(matches!(e, Error::Service(_)), "{e:?}");
            let message = e.to_string();
            let log = server.requests();
            let pages = flowline_queries(&log);
            // The first page, then its next link.
            assert_eq!(
                pages.len(),
                2,
                "{paging:?}, numberMatched {counted}: {pages:#?}"
            );
            let repeated = format!("{}{}?{}", server.base_url(), log[1].path, pages[1]);
            assert!(
                message.contains(&repeated) && message.contains(says),
                "{message}"
            );
            assert_eq!(log.len(), 2, "nothing requested after the failure");
        }
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
    let mut cmd = support::cli_command();
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

#[test]
fn a_server_without_next_links_or_counts_is_paged_while_pages_come_back_full() {
    let (server, ctx, _) = setup(Paging::Unlinked);
    server.set_number_matched(false);
    let expected = flowlines_in(YAHARA_BOX);
    assert_eq!(expected, 159, "the audit's figure for this box");
    assert_eq!(flowlines_by_pager(&ctx, YAHARA_BOX), expected);
    // Pages of 20 at offsets 0, 20, ... until the short one (19 features).
    let log = server.requests();
    let pages = flowline_queries(&log);
    let want: Vec<usize> = (0..=expected / 20).map(|k| k * 20).collect();
    assert_eq!(offsets(&pages), want, "{pages:#?}");

    // Every layer of a plot, with the published counts.
    assert_bbox_counts(&plot(&ctx, &bbox_at_stream_order_2()));

    // One page exactly full: the next offset is asked for, and its empty
    // page ends the query.
    let (server, exact, _) = setup_with_pages(Paging::Unlinked, expected);
    server.set_number_matched(false);
    assert_eq!(flowlines_by_pager(&exact, YAHARA_BOX), expected);
    let log = server.requests();
    assert_eq!(offsets(&flowline_queries(&log)), [0, expected]);
}

#[test]
fn next_links_are_followed_past_a_number_matched_too_low() {
    let expected = flowlines_in(YAHARA_BOX);
    // Pages of 20 under a numberMatched of 79: offsets up to 60 fetched
    // together, then the last one's next links; pages of 100 (the audit's):
    // the first page's next link. Each page once.
    for page_size in [20, 100] {
        let (server, ctx, warnings) = setup_with_pages(Paging::Undercounted, page_size);
        assert_eq!(flowlines_by_pager(&ctx, YAHARA_BOX), expected);
        let log = server.requests();
        let mut got = offsets(&flowline_queries(&log));
        got.sort_unstable();
        let want: Vec<usize> = (0..expected.div_ceil(page_size))
            .map(|k| k * page_size)
            .collect();
        assert_eq!(got, want, "pages of {page_size}");
        let said = format!(
            "matches {} features but its pages held {expected}",
            expected / 2
        );
        let warned = warnings.0.lock().unwrap().clone();
        assert!(warned.iter().any(|w| w.contains(&said)), "{warned:#?}");
    }
    let (_server, ctx, _) = setup(Paging::Undercounted);
    assert_bbox_counts(&plot(&ctx, &bbox_at_stream_order_2()));
}

#[test]
fn a_cursor_server_with_one_full_page_gives_it_with_a_warning() {
    // Neither a next link nor a count: the full page asks for the next
    // offset, which a cursor server ignores, answering the same features.
    let expected = flowlines_in(YAHARA_BOX);
    let (server, ctx, warnings) = setup_with_pages(Paging::Cursor, expected);
    assert_eq!(flowlines_by_pager(&ctx, YAHARA_BOX), expected);
    assert_eq!(flowline_queries(&server.requests()).len(), 2);
    let warned = warnings.0.lock().unwrap().clone();
    assert!(
        warned.iter().any(|w| w.contains("not to page by offset")),
        "{warned:#?}"
    );
}
