//! Loopback mock services for hydroplot's tests, examples and benchmarks:
//! a dev-only workspace crate, never published, never linked into the library.
//!
//! [`MockServer`] serves, on 127.0.0.1 and a free port, imitations of the
//! linked-data index service (`/nldi`), the fabric OGC API Features service
//! (`/fabric/pygeoapi`), the flowtrace process and an XYZ tile server
//! (`/tiles`), answering from the real NHDPlusV2 GeoPackages in `tests/data`
//! with the envelopes of the recorded responses in `tests/data/responses`.
//! Every request is logged, and faults (statuses, 429, slow answers, broken
//! bodies, dropped connections) can be injected per path.
//!
//! - [`data`]: the fixture data, loaded once per process, and upstream navigation.
//! - `http`: the HTTP/1.1 server (keep-alive, Content-Length bodies, faults).
//! - `index`, `fabric`, `flowtrace`, `tiles`: the endpoints.

pub mod data;
mod fabric;
mod flowtrace;
mod http;
mod index;
mod periodic;
mod tiles;

use hydroplot::config::{Config, Names};
use hydroplot::context::Context;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

pub use tiles::tile_color;

/// The default maximum `limit` of the mock fabric service (pygeoapi's clamp).
pub const DEFAULT_MAX_LIMIT: usize = 10_000;

/// One request as the mock received it.
#[derive(Debug, Clone, PartialEq)]
pub struct LoggedRequest {
    /// `GET`, `POST`, ...
    pub method: String,
    /// The path, percent-decoded, without the query.
    pub path: String,
    /// The raw query string (after `?`, still encoded), empty when none.
    pub query: String,
    /// The request headers, names lower-case, in order.
    pub headers: Vec<(String, String)>,
    /// The request body as text (lossy UTF-8).
    pub body: String,
}

/// A fault injected into the answers to requests whose path-and-query
/// contains `path_contains`.
#[derive(Debug, Clone, PartialEq)]
pub struct Fault {
    /// Matched against `path?query` (query still encoded).
    pub path_contains: String,
    /// What goes wrong.
    pub kind: FaultKind,
    /// How many matching requests it affects; `None` = every one.
    pub times: Option<u32>,
}

/// A fault on every `every`-th request whose path-and-query contains
/// `path_contains` (counted from the server's start), for as long as it is set;
/// [`Fault`]s are checked first.
#[derive(Debug, Clone, PartialEq)]
pub struct PeriodicFault {
    pub path_contains: String,
    pub every: u32,
    pub kind: FaultKind,
}

/// The kinds of injected faults.
#[derive(Debug, Clone, PartialEq)]
pub enum FaultKind {
    /// This status with a JSON `{"type":"error","description":...}` body.
    Status(u16),
    /// 429 with `Retry-After: <retry_after_s>`.
    TooManyRequests { retry_after_s: u32 },
    /// Sleep this long, then answer normally.
    Slow(Duration),
    /// `Content-Length` promises the whole answer, half is sent, the connection closes.
    TruncatedBody,
    /// 200 with an HTML page instead of JSON.
    Html,
    /// Close the connection without answering.
    DropConnection,
    /// `Content-Length` declares half the body, the whole body is sent, the connection closes.
    WrongContentLength,
}

/// State shared by the server threads.
struct Shared {
    data: Arc<data::Data>,
    base_url: String,
    requests: Mutex<Vec<LoggedRequest>>,
    faults: Mutex<Vec<Fault>>,
    periodic: periodic::Periodic,
    max_limit: AtomicUsize,
    /// Serve the neutral names of the spec instead of the USGS ones.
    neutral: AtomicBool,
    /// Answer items queries without `sortby` in a new order each time.
    unordered: AtomicBool,
    /// Leave `numberMatched` out of items pages (pygeoapi may).
    uncounted: AtomicBool,
    /// Counts unordered answers, so each gets its own order.
    shuffles: AtomicU64,
    /// The sorted selections of recent items queries.
    selections: fabric::Selections,
    stop: AtomicBool,
}

impl Shared {
    /// The naming profile served.
    fn names(&self) -> Names {
        if self.neutral.load(Ordering::Relaxed) {
            Names::Neutral
        } else {
            Names::Usgs
        }
    }

    /// A fresh seed for the order of one unordered answer, `None` when the
    /// server keeps its stored order.
    fn shuffle_seed(&self) -> Option<u64> {
        self.unordered
            .load(Ordering::Relaxed)
            .then(|| self.shuffles.fetch_add(1, Ordering::Relaxed))
    }

    /// The first active fault matching `target`, using up one of its `times`.
    fn take_fault(&self, target: &str) -> Option<FaultKind> {
        let mut faults = self.faults.lock().unwrap_or_else(|p| p.into_inner());
        let i = faults
            .iter()
            .position(|f| target.contains(&f.path_contains) && f.times != Some(0))?;
        let fault = &mut faults[i];
        if let Some(n) = &mut fault.times {
            *n -= 1;
        }
        Some(fault.kind.clone())
    }
}

/// A running mock server; it stops when dropped.
pub struct MockServer {
    shared: Arc<Shared>,
    port: u16,
    acceptor: Option<JoinHandle<()>>,
}

impl MockServer {
    /// Loads the fixture data (once per process) and serves on a free port.
    /// Panics when the fixture GeoPackages cannot be read or no port is free.
    pub fn start() -> MockServer {
        MockServer::start_on(0).unwrap_or_else(|e| panic!("the mock server cannot start: {e}"))
    }

    /// Serves on `port` (0 = a free one).
    pub fn start_on(port: u16) -> hydroplot::Result<MockServer> {
        MockServer::serve(data::Data::shared()?, port)
    }

    /// Serves the GeoPackages `files` instead of the fixtures (benchmarks),
    /// on `port` (0 = a free one).
    pub fn start_with_data(
        files: &[std::path::PathBuf],
        port: u16,
    ) -> hydroplot::Result<MockServer> {
        MockServer::serve(Arc::new(data::Data::load_from(files)?), port)
    }

    fn serve(data: Arc<data::Data>, port: u16) -> hydroplot::Result<MockServer> {
        let listener = std::net::TcpListener::bind(("127.0.0.1", port)).map_err(|e| {
            hydroplot::Error::Io(format!(
                "the mock server cannot listen on 127.0.0.1:{port}: {e}"
            ))
        })?;
        let port = listener
            .local_addr()
            .map_err(|e| hydroplot::Error::Io(e.to_string()))?
            .port();
        let shared = Arc::new(Shared {
            data,
            base_url: format!("http://127.0.0.1:{port}"),
            requests: Mutex::new(Vec::new()),
            faults: Mutex::new(Vec::new()),
            periodic: periodic::Periodic::default(),
            max_limit: AtomicUsize::new(DEFAULT_MAX_LIMIT),
            neutral: AtomicBool::new(false),
            unordered: AtomicBool::new(false),
            uncounted: AtomicBool::new(false),
            shuffles: AtomicU64::new(0),
            selections: fabric::Selections::default(),
            stop: AtomicBool::new(false),
        });
        let acceptor = http::spawn_acceptor(listener, shared.clone());
        Ok(MockServer {
            shared,
            port,
            acceptor: Some(acceptor),
        })
    }

    /// `http://127.0.0.1:<port>`.
    pub fn base_url(&self) -> String {
        self.shared.base_url.clone()
    }

    /// The index service base (`<base>/nldi`).
    pub fn index_url(&self) -> String {
        format!("{}/nldi", self.shared.base_url)
    }

    /// The fabric service base (`<base>/fabric/pygeoapi`).
    pub fn fabric_url(&self) -> String {
        format!("{}/fabric/pygeoapi", self.shared.base_url)
    }

    /// The tile template (`<base>/tiles/{z}/{x}/{y}.png`).
    pub fn tile_url(&self) -> String {
        format!("{}/tiles/{{z}}/{{x}}/{{y}}.png", self.shared.base_url)
    }

    /// Every request received so far, in arrival order.
    pub fn requests(&self) -> Vec<LoggedRequest> {
        self.shared
            .requests
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Forgets the logged requests.
    pub fn clear_requests(&self) {
        self.shared
            .requests
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
    }

    /// Adds a fault; the first matching fault applies to each request.
    pub fn set_fault(&self, fault: Fault) {
        self.shared
            .faults
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(fault);
    }

    /// Adds a fault on every Nth matching request.
    pub fn set_periodic_fault(&self, fault: PeriodicFault) {
        self.shared.periodic.add(fault);
    }

    /// Removes every fault, periodic ones included.
    pub fn clear_faults(&self) {
        self.shared
            .faults
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
        self.shared.periodic.clear();
    }

    /// The largest `limit` the fabric service honours (larger ones are clamped).
    pub fn set_max_limit(&self, n: usize) {
        self.shared.max_limit.store(n.max(1), Ordering::Relaxed);
    }

    /// Serves the names of `profile` only (default: the USGS names); the
    /// other profile's collections, feature source and process are 404, as
    /// the real service would answer them.
    pub fn set_names(&self, profile: Names) {
        self.shared
            .neutral
            .store(profile == Names::Neutral, Ordering::Relaxed);
    }

    /// With `on`, answers every items query that has no `sortby` in a new
    /// order, as a database without `ORDER BY` may (default off).
    pub fn set_unordered(&self, on: bool) {
        self.shared.unordered.store(on, Ordering::Relaxed);
    }

    /// With `on` (the default), items pages state `numberMatched`; off,
    /// clients have only `numberReturned` and `next` links to go by.
    pub fn set_number_matched(&self, on: bool) {
        self.shared.uncounted.store(!on, Ordering::Relaxed);
    }
}

impl Drop for MockServer {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        // Wake the blocking accept so it sees the flag.
        let _ = std::net::TcpStream::connect(("127.0.0.1", self.port));
        if let Some(acceptor) = self.acceptor.take() {
            let _ = acceptor.join();
        }
    }
}

/// A context whose index, process, fabric and tile URLs point at `server`,
/// with short timeouts, 2 retries and a tile cache directory of its own.
pub fn context(server: &MockServer) -> Context {
    let config = Config {
        index_url: server.index_url(),
        fabric_url: server.fabric_url(),
        tile_url: Some(server.tile_url()),
        tile_cache_dir: std::env::temp_dir().join(format!(
            "hydroplot-mock-tiles-{}-{}",
            std::process::id(),
            server.port
        )),
        timeout: Duration::from_secs(20),
        connect_timeout: Duration::from_secs(2),
        retries: 2,
        ..Config::default()
    };
    Context::new(config).expect("a mock context always builds")
}
