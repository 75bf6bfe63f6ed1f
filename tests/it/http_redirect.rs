//! Redirects and `Retry-After` as real servers send them, through a small
//! front on 127.0.0.1 that answers every request with a status and headers
//! of the test's choosing (the mock behind it serves the data).

use hydroplot::collection::Collection;
use hydroplot::services::fabric::{self, ItemsQuery};
use hydroplot::services::index;
use hydroplot::{Context, Error};
use hydroplot_mock::{self as mock, MockServer};
use loopback::Loopback;

use crate::loopback;

/// A front answering every request with the status line and headers
/// `answer(method, target)` makes, and no body.
fn front(answer: impl Fn(&str, &str) -> String + Send + Sync + 'static) -> Loopback {
    Loopback::start(move |r| {
        let head = answer(&r.method, &r.target);
        format!("{head}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n").into_bytes()
    })
}

/// The requests the front received, as `METHOD body`.
fn received(front: &Loopback) -> Vec<String> {
    (front.requests().into_iter())
        .map(|r| format!("{} {}", r.method, String::from_utf8_lossy(&r.body)))
        .collect()
}

/// A mock context whose fabric (or index) service is the front.
fn through(front: &Loopback, server: &MockServer) -> Context {
    let mut config = mock::context(server).config;
    config.fabric_url = format!("{}/fabric/pygeoapi", front.base);
    config.index_url = format!("{}/nldi", front.base);
    Context::new(config).unwrap()
}

const COMIDS: [i64; 2] = [13293970, 13293750];

fn comid_query(ctx: &Context) -> hydroplot::Result<Vec<i64>> {
    let query = ItemsQuery::In {
        property: "comid",
        ids: &COMIDS,
    };
    let features = fabric::items(ctx, Collection::FlowlineNetwork, &query, "test")?;
    let mut comids: Vec<i64> = features.iter().filter_map(|f| f.get_i64("comid")).collect();
    comids.sort();
    Ok(comids)
}

#[test]
fn a_moved_service_gets_the_post_query_again_not_a_get_without_it() {
    for status in [301, 302, 307, 308] {
        let server = MockServer::start();
        let to = server.base_url();
        let front =
            front(move |_, target| format!("HTTP/1.1 {status} Moved\r\nLocation: {to}{target}"));
        let comids = comid_query(&through(&front, &server)).unwrap();
        assert_eq!(
            comids,
            COMIDS.iter().rev().copied().collect::<Vec<_>>(),
            "{status}"
        );
        let requests = server.requests();
        assert!(!requests.is_empty(), "{status}");
        for r in &requests {
            assert_eq!(r.method, "POST", "{status}: the query stays a POST");
            assert!(
                r.body.contains("13293970") && r.body.contains("13293750"),
                "{status}"
            );
        }
        let received = received(&front);
        assert!(
            received
                .iter()
                .all(|r| r.starts_with("POST ") && r.contains("13293970")),
            "{status}: {received:?}"
        );
    }
}

#[test]
fn a_303_to_a_post_query_fails_rather_than_lose_its_query() {
    let server = MockServer::start();
    let to = server.base_url();
    let front = front(move |_, target| format!("HTTP/1.1 303 See Other\r\nLocation: {to}{target}"));
    let e = comid_query(&through(&front, &server)).unwrap_err();
    assert!(
        matches!(e, Error::Service(_)) && e.to_string().contains("303"),
        "{e:?}"
    );
    assert_eq!(front.requests().len(), 1, "not retried");
    assert!(server.requests().is_empty());
}

#[test]
fn a_redirect_loop_ends_after_five_hops_with_a_clear_error() {
    let server = MockServer::start();
    let front = front(|_, target| format!("HTTP/1.1 302 Found\r\nLocation: {target}"));
    let e = index::feature(&through(&front, &server), "comid", "13293454").unwrap_err();
    assert!(matches!(e, Error::Network(_)), "{e:?}");
    assert!(e.to_string().contains("redirect loop"), "{e}");
    assert_eq!(
        front.requests().len(),
        6,
        "the request and five redirects, not retried"
    );
}

#[test]
fn a_server_asking_for_a_long_rest_gets_it_and_other_hosts_do_not_wait() {
    for status in ["429 Too Many Requests", "503 Service Unavailable"] {
        let server = MockServer::start();
        let front = front(move |_, _| format!("HTTP/1.1 {status}\r\nRetry-After: 3600"));
        let ctx = through(&front, &server);
        let e = index::feature(&ctx, "comid", "13293454").unwrap_err();
        assert!(e.to_string().contains("Retry-After"), "{status}: {e}");
        assert_eq!(
            front.requests().len(),
            1,
            "{status}: not retried before the hour"
        );
        // The next request to that server is not sent at all.
        let e = comid_query(&ctx).unwrap_err();
        assert!(e.to_string().contains("not sent"), "{status}: {e}");
        assert_eq!(front.requests().len(), 1, "{status}");
        // Another server is not held.
        let mut config = ctx.config.clone();
        config.index_url = server.index_url();
        let direct = Context::new(config).unwrap();
        index::feature(&direct, "comid", "13293454").unwrap();
    }
}
