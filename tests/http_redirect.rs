//! Redirects and `Retry-After` as real servers send them, through a small
//! front on 127.0.0.1 that answers every request with a status and headers
//! of the test's choosing (the mock behind it serves the data).

use hydroplot::collection::Collection;
use hydroplot::services::fabric::{self, ItemsQuery};
use hydroplot::services::index;
use hydroplot::{Context, Error};
use hydroplot_mock::{self as mock, MockServer};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

/// A request the front received: method and target (path and query).
type Seen = (String, String);

/// Answers each request with `answer(method, target)`: a status line and
/// headers, no body. Its threads end with the test process.
struct Front {
    base: String,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl Front {
    fn start(answer: impl Fn(&str, &str) -> String + Send + Sync + 'static) -> Front {
        let listener = TcpListener::bind(("127.0.0.1", 0)).unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let (log, answer) = (seen.clone(), Arc::new(answer));
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (log, answer) = (log.clone(), answer.clone());
                std::thread::spawn(move || {
                    let mut reader = BufReader::new(stream.try_clone().unwrap());
                    let mut line = String::new();
                    reader.read_line(&mut line).unwrap();
                    let mut parts = line.split_whitespace();
                    let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
                    let mut length = 0;
                    loop {
                        let mut header = String::new();
                        reader.read_line(&mut header).unwrap();
                        if header.trim().is_empty() {
                            break;
                        }
                        if let Some((k, v)) = header.split_once(':') {
                            if k.eq_ignore_ascii_case("content-length") {
                                length = v.trim().parse().unwrap();
                            }
                        }
                    }
                    reader.read_exact(&mut vec![0; length]).unwrap();
                    log.lock()
                        .unwrap()
                        .push((method.to_string(), target.to_string()));
                    let head = answer(method, target);
                    let reply = format!("{head}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
                    (&stream).write_all(reply.as_bytes()).unwrap();
                });
            }
        });
        Front { base, seen }
    }

    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

/// A mock context whose fabric (or index) service is the front.
fn through(front: &Front, server: &MockServer) -> Context {
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
        let front = Front::start(move |_, target| {
            format!("HTTP/1.1 {status} Moved\r\nLocation: {to}{target}")
        });
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
        assert!(front.seen().iter().all(|(m, _)| m == "POST"), "{status}");
    }
}

#[test]
fn a_303_to_a_post_query_fails_rather_than_lose_its_query() {
    let server = MockServer::start();
    let to = server.base_url();
    let front =
        Front::start(move |_, target| format!("HTTP/1.1 303 See Other\r\nLocation: {to}{target}"));
    let e = comid_query(&through(&front, &server)).unwrap_err();
    assert!(
        matches!(e, Error::Service(_)) && e.to_string().contains("303"),
        "{e:?}"
    );
    assert_eq!(front.seen().len(), 1, "not retried");
    assert!(server.requests().is_empty());
}

#[test]
fn a_redirect_loop_ends_after_five_hops_with_a_clear_error() {
    let server = MockServer::start();
    let front = Front::start(|_, target| format!("HTTP/1.1 302 Found\r\nLocation: {target}"));
    let e = index::feature(&through(&front, &server), "comid", "13293454").unwrap_err();
    assert!(matches!(e, Error::Network(_)), "{e:?}");
    assert!(e.to_string().contains("redirect loop"), "{e}");
    assert_eq!(
        front.seen().len(),
        6,
        "the request and five redirects, not retried"
    );
}

#[test]
fn a_server_asking_for_a_long_rest_gets_it_and_other_hosts_do_not_wait() {
    for status in ["429 Too Many Requests", "503 Service Unavailable"] {
        let server = MockServer::start();
        let front = Front::start(move |_, _| format!("HTTP/1.1 {status}\r\nRetry-After: 3600"));
        let ctx = through(&front, &server);
        let e = index::feature(&ctx, "comid", "13293454").unwrap_err();
        assert!(e.to_string().contains("Retry-After"), "{status}: {e}");
        assert_eq!(
            front.seen().len(),
            1,
            "{status}: not retried before the hour"
        );
        // The next request to that server is not sent at all.
        let e = comid_query(&ctx).unwrap_err();
        assert!(e.to_string().contains("not sent"), "{status}: {e}");
        assert_eq!(front.seen().len(), 1, "{status}");
        // Another server is not held.
        let mut config = ctx.config.clone();
        config.index_url = server.index_url();
        let direct = Context::new(config).unwrap();
        index::feature(&direct, "comid", "13293454").unwrap();
    }
}
