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
//! The mock shares no code with the library it tests: it reads the
//! GeoPackages (SQL through rusqlite, its own WKB parsing), writes GeoJSON,
//! unites basins (with `geo`) and reads HTTP dates itself, and takes from
//! `hydroplot` only names (collections, service profiles), its error type
//! for [`MockServer`]'s results, and what builds a client's context
//! ([`context`]); `tests/it/architecture.rs` checks it.
//!
//! Files import downward only (tests/it/architecture.rs checks it), bottom up:
//! - `date`, `wkb`, [`feature`], `geojson`: HTTP dates and civil time, the
//!   geometry blobs, the feature model, GeoJSON geometry objects.
//! - `gpkg`: the GeoPackage reader.
//! - [`data`]: the fixture data, loaded once per process, and upstream navigation.
//! - `wire`: the parsed request and the answer, shared by the router and the endpoints.
//! - `index`, `fabric`, `flowtrace`, `tiles`: the endpoints.
//! - `state`: what the server's threads share (log, faults, settings).
//! - `gzip`: compressed answers ([`MockServer::set_gzip`]).
//! - `link`: a shaped link, bandwidth and delay ([`MockServer::set_link`]).
//! - `http`: the HTTP/1.1 server (keep-alive, Content-Length bodies,
//!   faults) and the router to the endpoints.
//! - `tls`: the HTTPS front ([`MockServer::start_https`]).

pub mod data;
mod date;
mod fabric;
mod fault;
pub mod feature;
mod flowtrace;
mod geojson;
mod gpkg;
mod gzip;
mod http;
mod index;
mod link;
mod state;
mod tiles;
mod tls;
mod wire;
mod wkb;

use hydroplot::config::{Config, Names};
use hydroplot::context::Context;
use state::Shared;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

pub use fabric::Paging;
pub use fault::{Fault, FaultKind, PeriodicFault};
pub use link::Link;
pub use state::{LoggedRequest, Transfer};
pub use tiles::tile_color;
pub use tls::TlsIdentity;

/// The default maximum `limit` of the mock fabric service (pygeoapi's clamp).
pub const DEFAULT_MAX_LIMIT: usize = 10_000;

/// A running mock server; it stops when dropped.
pub struct MockServer {
    shared: Arc<Shared>,
    port: u16,
    acceptor: Option<JoinHandle<()>>,
    /// The HTTPS front, when served over TLS.
    front: Option<tls::Front>,
}

impl MockServer {
    /// Loads the fixture data (once per process) and serves on a free port.
    /// Panics when the fixture GeoPackages cannot be read or no port is free.
    pub fn start() -> MockServer {
        MockServer::start_on(0).unwrap_or_else(|e| panic!("the mock server cannot start: {e}"))
    }

    /// Serves on `port` (0 = a free one).
    pub fn start_on(port: u16) -> hydroplot::Result<MockServer> {
        MockServer::serve(
            data::Data::shared().map_err(hydroplot::Error::Gpkg)?,
            port,
            None,
        )
    }

    /// Serves the GeoPackages `files` instead of the fixtures (benchmarks),
    /// on `port` (0 = a free one).
    pub fn start_with_data(
        files: &[std::path::PathBuf],
        port: u16,
    ) -> hydroplot::Result<MockServer> {
        let data = data::Data::load_from(files).map_err(hydroplot::Error::Gpkg)?;
        MockServer::serve(Arc::new(data), port, None)
    }

    /// Serves `data` on `port`; the links the services write start with
    /// `public_url` (the HTTPS front's), else `http://127.0.0.1:<port>`.
    fn serve(
        data: Arc<data::Data>,
        port: u16,
        public_url: Option<String>,
    ) -> hydroplot::Result<MockServer> {
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
            base_url: public_url.unwrap_or_else(|| format!("http://127.0.0.1:{port}")),
            requests: Mutex::new(Vec::new()),
            request_logged: Condvar::new(),
            faults: Mutex::new(Vec::new()),
            periodic: fault::Periodic::default(),
            max_limit: AtomicUsize::new(DEFAULT_MAX_LIMIT),
            neutral: AtomicBool::new(false),
            unordered: AtomicBool::new(false),
            uncounted: AtomicBool::new(false),
            gzip: AtomicBool::new(false),
            compressed: gzip::Compressed::default(),
            link: Mutex::new(None),
            started: std::time::Instant::now(),
            transfers: Mutex::new(Vec::new()),
            paging: Mutex::new(Paging::Offset),
            sortable: AtomicBool::new(true),
            budget: AtomicU64::new(u64::MAX),
            shuffles: AtomicU64::new(0),
            selections: fabric::Selections::default(),
            stop: AtomicBool::new(false),
        });
        let acceptor = http::spawn_acceptor(listener, shared.clone());
        Ok(MockServer {
            shared,
            port,
            acceptor: Some(acceptor),
            front: None,
        })
    }

    /// `http://127.0.0.1:<port>` (`https://` for [`MockServer::start_https`]).
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

    /// Waits until a logged request satisfies `wanted` (one logged before
    /// the call counts too), or `limit` has passed; whether one did. Woken
    /// by each request as it is logged, so a test waits for the event, not
    /// for a guessed time.
    pub fn wait_for_request(
        &self,
        wanted: impl Fn(&LoggedRequest) -> bool,
        limit: std::time::Duration,
    ) -> bool {
        let requests = self
            .shared
            .requests
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        let (requests, _) = self
            .shared
            .request_logged
            .wait_timeout_while(requests, limit, |r| !r.iter().any(&wanted))
            .unwrap_or_else(|p| p.into_inner());
        requests.iter().any(&wanted)
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

    /// With `on`, answers are gzip-compressed for clients that send
    /// `Accept-Encoding: gzip`, as pygeoapi with `server.gzip` (default off).
    pub fn set_gzip(&self, on: bool) {
        self.shared.gzip.store(on, Ordering::Relaxed);
    }

    /// Sends every answer through `link` from now on (`None`: at loopback
    /// speed, the default): all connections share its bandwidth, and each
    /// answer's first byte leaves its delay after the request arrived. A
    /// new link starts with an idle wire and no bytes counted.
    pub fn set_link(&self, link: Option<Link>) {
        let pacer = link.map(|l| Arc::new(link::Pacer::new(l, self.shared.started)));
        *self.shared.link.lock().unwrap_or_else(|p| p.into_inner()) = pacer;
    }

    /// The link set now, and the bytes sent through it so far (heads and
    /// bodies as written, after gzip).
    pub fn link(&self) -> Option<(Link, u64)> {
        self.shared.pacer().map(|p| (p.link(), p.bytes()))
    }

    /// How each answer so far went out, in the order they were finished.
    pub fn transfers(&self) -> Vec<Transfer> {
        self.shared
            .transfers
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Forgets the transfers.
    pub fn clear_transfers(&self) {
        self.shared
            .transfers
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
    }

    /// With `on` (the default), items pages state `numberMatched`; off,
    /// clients have only `numberReturned` and `next` links to go by.
    pub fn set_number_matched(&self, on: bool) {
        self.shared.uncounted.store(!on, Ordering::Relaxed);
    }

    /// How items queries page (default [`Paging::Offset`], as pygeoapi).
    pub fn set_paging(&self, paging: Paging) {
        *self.shared.paging.lock().unwrap_or_else(|p| p.into_inner()) = paging;
    }

    /// With `on` (the default), items queries may carry `sortby`; off, any
    /// `sortby` is a 400, as pygeoapi answers for a provider that cannot sort.
    pub fn set_sortable(&self, on: bool) {
        self.shared.sortable.store(on, Ordering::Relaxed);
    }

    /// The next `n` requests are answered; every further one gets a 503, so
    /// a client that would request forever fails instead of hanging its test.
    pub fn set_request_budget(&self, n: u64) {
        self.shared.budget.store(n, Ordering::Relaxed);
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
        for what in OWN_DIRS {
            let _ = std::fs::remove_dir_all(own_dir(what, self.port));
        }
    }
}

/// The folders of a [`context`] of a server: its tile cache and its index
/// directory, removed when the server is dropped.
const OWN_DIRS: [&str; 2] = ["tiles", "index"];

/// The folder `what` of the contexts of the server on `port`.
fn own_dir(what: &str, port: u16) -> std::path::PathBuf {
    let name = format!("hydroplot-mock-{what}-{}-{port}", std::process::id());
    std::env::temp_dir().join(name)
}

/// A context whose index, process, fabric and tile URLs point at `server`,
/// with short timeouts, 2 retries, and a tile cache and an index directory
/// of its own (never the user's cache directory), which go with the
/// server.
pub fn context(server: &MockServer) -> Context {
    let own = |what: &str| own_dir(what, server.port);
    let config = Config {
        index_url: server.index_url(),
        fabric_url: server.fabric_url(),
        tile_url: Some(server.tile_url()),
        tile_cache_dir: own("tiles"),
        index_dir: own("index"),
        timeout: Duration::from_secs(20),
        connect_timeout: Duration::from_secs(2),
        retries: 2,
        ..Config::default()
    };
    Context::new(config).expect("a mock context always builds")
}

impl MockServer {
    /// Serves the fixtures over HTTPS with `identity` on a free port of
    /// 127.0.0.1: [`MockServer::base_url`] is `https://127.0.0.1:<port>`
    /// and the links the services write point there. Panics when the
    /// identity is not a usable certificate and key, or no port is free.
    pub fn start_https(identity: &TlsIdentity) -> MockServer {
        let front =
            std::net::TcpListener::bind(("127.0.0.1", 0)).expect("a free port for the TLS front");
        let port = front.local_addr().expect("a bound address").port();
        let data =
            data::Data::shared().unwrap_or_else(|e| panic!("the mock server cannot start: {e}"));
        let mut server = MockServer::serve(data, 0, Some(format!("https://127.0.0.1:{port}")))
            .unwrap_or_else(|e| panic!("the mock server cannot start: {e}"));
        server.front = Some(tls::Front::spawn(front, identity, server.port));
        server
    }

    /// How many connections the HTTPS front accepted (each is one TLS
    /// handshake, refused or not); 0 for a plain server.
    pub fn tls_connections(&self) -> usize {
        self.front.as_ref().map_or(0, tls::Front::connections)
    }
}
