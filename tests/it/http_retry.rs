//! The HTTP core against the loopback mock: which failures are retried, how
//! often, and what the final error says.

use hydroplot::context::{LogLevel, Observer};
use hydroplot::http::Service;
use hydroplot::services::{fabric, index};
use hydroplot::{Context, Error};
use hydroplot_mock::{self as mock, Fault, FaultKind, MockServer};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use support::Recorder;

use crate::support;

fn recorded(server: &MockServer) -> (Context, Arc<Recorder>) {
    Recorder::attach(mock::context(server))
}

fn fault(path: &str, kind: FaultKind, times: Option<u32>) -> Fault {
    Fault {
        path_contains: path.into(),
        kind,
        times,
    }
}

#[test]
fn a_500_then_200_succeeds_on_the_retry_and_logs_it() {
    let server = MockServer::start();
    let (ctx, log) = recorded(&server);
    server.set_fault(fault(
        "/linked-data/comid/13293454",
        FaultKind::Status(500),
        Some(1),
    ));
    let f = index::feature(&ctx, "comid", "13293454").unwrap();
    assert_eq!(f.get_i64("comid"), Some(13293454));
    assert_eq!(server.requests().len(), 2);
    let log = log.0.lock().unwrap();
    assert_eq!(log.len(), 1);
    assert_eq!(log[0].0, LogLevel::Warning);
    assert!(
        log[0].1.contains("index service GET") && log[0].1.contains("retry 1 of 2"),
        "{}",
        log[0].1
    );
}

#[test]
fn a_404_fails_at_once_as_not_found() {
    let server = MockServer::start();
    let ctx = mock::context(&server);
    let e = index::feature(&ctx, "comid", "1").unwrap_err();
    assert!(
        matches!(
            e,
            Error::NotFound {
                http_status: 404,
                ..
            }
        ),
        "{e:?}"
    );
    assert!(e.to_string().contains("comid/1"), "{e}");
    assert_eq!(server.requests().len(), 1);
}

#[test]
fn retry_after_of_a_429_is_honoured() {
    let server = MockServer::start();
    let (ctx, log) = recorded(&server);
    server.set_fault(fault(
        "/linked-data/",
        FaultKind::TooManyRequests { retry_after_s: 1 },
        Some(1),
    ));
    index::feature(&ctx, "nwissite", "USGS-05427718").unwrap();
    // The wait chosen is the server's (backoff alone would be 0.1 s at most
    // for a first retry), logged before the retry sleeps it.
    let log = log.0.lock().unwrap();
    assert!(
        log.iter()
            .any(|(level, m)| *level == LogLevel::Warning && m.ends_with("retry 1 of 2 in 1.0 s")),
        "{log:?}"
    );
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn a_400_is_not_retried() {
    let server = MockServer::start();
    let ctx = mock::context(&server);
    server.set_fault(fault("/linked-data/", FaultKind::Status(400), None));
    let e = index::basin(&ctx, "comid", "13293970").unwrap_err();
    assert_eq!(e.http_status(), 400);
    assert!(matches!(e, Error::Http { status: 400, .. }));
    assert_eq!(server.requests().len(), 1);
}

#[test]
fn exhausted_retries_report_the_status_and_the_description() {
    let server = MockServer::start();
    let ctx = mock::context(&server);
    server.set_fault(fault("/collections/", FaultKind::Status(503), None));
    let e = fabric::catchments_at_point(&ctx, -89.35, 43.2).unwrap_err();
    let Error::Http {
        status: 503,
        message,
    } = &e
    else {
        panic!("{e:?}")
    };
    assert!(
        message.starts_with("fabric service GET http://127.0.0.1:"),
        "{message}"
    );
    assert!(
        message.contains(
            "injected fault: HTTP 503 for /fabric/pygeoapi/collections/catchmentsp/items"
        ),
        "{message}"
    );
    assert!(message.contains("gave up after 2 retries"), "{message}");
    assert_eq!(server.requests().len(), 3);
}

#[test]
fn a_timeout_is_a_network_error() {
    let server = MockServer::start();
    let mut config = mock::context(&server).config;
    config.timeout = Duration::from_millis(300);
    config.retries = 0;
    let ctx = Context::new(config).unwrap();
    server.set_fault(fault(
        "/linked-data/",
        FaultKind::Slow(Duration::from_millis(1500)),
        None,
    ));
    // The answer would come, whole, after 1.5 s: a timeout error proves the
    // client gave up first, at its configured limit.
    let e = index::feature(&ctx, "comid", "13293454").unwrap_err();
    assert!(matches!(e, Error::Network(_)), "{e:?}");
    assert!(e.to_string().contains("timed out"), "{e}");
    assert_eq!(server.requests().len(), 1);
}

#[test]
fn broken_bodies_and_dropped_connections_are_retried() {
    let server = MockServer::start();
    let ctx = mock::context(&server);
    for kind in [FaultKind::TruncatedBody, FaultKind::DropConnection] {
        server.clear_requests();
        server.set_fault(fault("/linked-data/comid/13293454", kind.clone(), Some(1)));
        let f =
            index::feature(&ctx, "comid", "13293454").unwrap_or_else(|e| panic!("{kind:?}: {e}"));
        assert_eq!(f.get_str("source"), Some("comid"));
        assert_eq!(server.requests().len(), 2, "{kind:?}");
    }
}

#[test]
fn html_or_short_bodies_are_service_errors_naming_the_url() {
    let server = MockServer::start();
    let ctx = mock::context(&server);
    for kind in [FaultKind::Html, FaultKind::WrongContentLength] {
        server.clear_faults();
        server.set_fault(fault("/collections/catchmentsp", kind.clone(), Some(1)));
        let e = fabric::catchments_at_point(&ctx, -89.35, 43.2).unwrap_err();
        assert!(matches!(e, Error::Service(_)), "{kind:?}: {e:?}");
        assert!(
            e.to_string()
                .contains("/fabric/pygeoapi/collections/catchmentsp/items?bbox="),
            "{e}"
        );
    }
}

#[test]
fn credentials_in_urls_stay_out_of_messages() {
    let server = MockServer::start();
    let mut config = mock::context(&server).config;
    config.index_url = server
        .index_url()
        .replace("http://", "http://alice:s3cret@");
    let ctx = Context::new(config).unwrap();
    let e = index::feature(&ctx, "comid", "1").unwrap_err();
    assert_eq!(e.http_status(), 404);
    assert!(
        !e.to_string().contains("s3cret") && !e.to_string().contains("alice"),
        "{e}"
    );
}

#[test]
fn the_rate_limit_spaces_requests() {
    let server = MockServer::start();
    let mut config = mock::context(&server).config;
    config.rate_limit_per_s = 10.0;
    let ctx = Context::new(config).unwrap();
    let url = format!("{}/linked-data/comid/13293454", server.index_url());
    hydroplot::parallel::parallel_map(
        3,
        &[0; 6],
        |_| ctx.get(Service::Index, &url).unwrap().status,
        |_, _| {},
    );
    // Every request goes through the limiter and is served; the spacing of
    // the slots it hands out is `http`'s unit test
    // `rate_limit_slots_are_one_interval_apart`, on given instants.
    assert_eq!(server.requests().len(), 6);
}

/// Records the threads the observer is called on.
struct ThreadRecorder(Mutex<Vec<(std::thread::ThreadId, String)>>);

impl Observer for ThreadRecorder {
    fn log(&self, _level: LogLevel, message: &str) {
        self.0
            .lock()
            .unwrap()
            .push((std::thread::current().id(), message.to_string()));
    }
    fn progress(&self, stage: &str, _done: u64, _total: u64) {
        self.0
            .lock()
            .unwrap()
            .push((std::thread::current().id(), stage.to_string()));
    }
}

#[test]
fn callbacks_from_helper_threads_run_on_the_calling_thread() {
    let server = MockServer::start();
    server.set_fault(Fault {
        path_contains: "/linked-data/comid/".into(),
        kind: FaultKind::Status(500),
        times: Some(4),
    });
    let recorder = Arc::new(ThreadRecorder(Default::default()));
    let ctx = mock::context(&server).with_observer(Some(recorder.clone()));
    let urls: Vec<String> = (0..8)
        .map(|_| format!("{}/linked-data/comid/13293454", server.index_url()))
        .collect();
    let statuses = hydroplot::parallel::parallel_map(
        4,
        &urls,
        |u| ctx.get(Service::Index, u).unwrap().status,
        |_, _| ctx.progress("test", 0, 0),
    );
    assert_eq!(statuses, vec![200; 8]);
    let calls = recorder.0.lock().unwrap();
    let retries = calls.iter().filter(|(_, m)| m.contains("retry")).count();
    assert_eq!(retries, 4, "{calls:?}");
    let me = std::thread::current().id();
    assert!(
        calls.iter().all(|(t, _)| *t == me),
        "every call on the calling thread: {calls:?}"
    );
}
