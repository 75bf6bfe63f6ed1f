//! The state a running mock server shares between its threads: the
//! fixture data, the request log, the injected faults and the behaviour
//! settings of the served profile. Owned by [`crate::MockServer`] (an
//! `Arc`), read by the router in `http`.

use super::data;
use super::fabric;
use super::fault::{Fault, FaultKind, Periodic};
use super::gzip::Compressed;
use super::link::Pacer;
use hydroplot::config::Names;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

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

/// How one answer went out: when its request arrived, when the answer's
/// first and last bytes were written, and how many bytes it took on the
/// wire (head and body, after gzip). Times count from the server's start.
#[derive(Debug, Clone, PartialEq)]
pub struct Transfer {
    /// `GET`, `POST`, ...
    pub method: String,
    /// `path?query` as requested (query still encoded).
    pub target: String,
    /// The request was read whole.
    pub arrived: Duration,
    /// The answer's first byte was written.
    pub first_byte: Duration,
    /// Its last byte was written.
    pub done: Duration,
    /// Head and body bytes written.
    pub bytes: u64,
}

/// State shared by the server threads.
pub(crate) struct Shared {
    pub(crate) data: Arc<data::Data>,
    pub(crate) base_url: String,
    pub(crate) requests: Mutex<Vec<LoggedRequest>>,
    /// Notified at every request logged, for tests that wait for one.
    pub(crate) request_logged: Condvar,
    pub(crate) faults: Mutex<Vec<Fault>>,
    /// Faults on every Nth matching request.
    pub(crate) periodic: Periodic,
    pub(crate) max_limit: AtomicUsize,
    /// Serve the neutral names of the spec instead of the USGS ones.
    pub(crate) neutral: AtomicBool,
    /// Answer items queries without `sortby` in a new order each time.
    pub(crate) unordered: AtomicBool,
    /// Leave `numberMatched` out of items pages (pygeoapi may).
    pub(crate) uncounted: AtomicBool,
    /// Compress answers for clients that accept gzip (pygeoapi's `server.gzip`).
    pub(crate) gzip: AtomicBool,
    /// The answers compressed so far, so a repeated one is not compressed again.
    pub(crate) compressed: Compressed,
    /// The shaped link answers go through; `None`: loopback speed.
    pub(crate) link: Mutex<Option<Arc<Pacer>>>,
    /// When the server started: the origin of the [`Transfer`] times.
    pub(crate) started: Instant,
    /// How each answer went out, in the order they were finished.
    pub(crate) transfers: Mutex<Vec<Transfer>>,
    /// How items queries page.
    pub(crate) paging: Mutex<fabric::Paging>,
    /// Whether items queries may carry `sortby` (else 400, as pygeoapi
    /// answers for a provider that cannot sort).
    pub(crate) sortable: AtomicBool,
    /// Requests still answered; every further one gets a 503.
    pub(crate) budget: AtomicU64,
    /// Counts unordered answers, so each gets its own order.
    pub(crate) shuffles: AtomicU64,
    /// The sorted selections of recent items queries.
    pub(crate) selections: fabric::Selections,
    pub(crate) stop: AtomicBool,
}

impl Shared {
    /// The naming profile served.
    pub(crate) fn names(&self) -> Names {
        if self.neutral.load(Ordering::Relaxed) {
            Names::Neutral
        } else {
            Names::Usgs
        }
    }

    /// A fresh seed for the order of one unordered answer, `None` when the
    /// server keeps its stored order.
    pub(crate) fn shuffle_seed(&self) -> Option<u64> {
        self.unordered
            .load(Ordering::Relaxed)
            .then(|| self.shuffles.fetch_add(1, Ordering::Relaxed))
    }

    /// Uses up one request of the budget; false when none is left.
    pub(crate) fn within_budget(&self) -> bool {
        self.budget
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1))
            .is_ok()
    }

    /// The link answers go through now.
    pub(crate) fn pacer(&self) -> Option<Arc<Pacer>> {
        self.link.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// The first active fault matching `target`, using up one of its `times`.
    pub(crate) fn take_fault(&self, target: &str) -> Option<FaultKind> {
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
