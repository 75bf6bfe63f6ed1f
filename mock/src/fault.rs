//! The faults the mock injects: per path for a number of requests
//! ([`Fault`]), or on every Nth matching request ([`PeriodicFault`]: a service
//! that turns away a share of the traffic, a rate limit that "429s one
//! request in ten").

use std::sync::Mutex;
use std::time::Duration;

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
    /// Matched against `path?query` (query still encoded).
    pub path_contains: String,
    /// Every how many matching requests the fault strikes.
    pub every: u32,
    /// What goes wrong.
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

/// The periodic faults of a server and how many matching requests each has seen.
#[derive(Default)]
pub(crate) struct Periodic {
    faults: Mutex<Vec<(PeriodicFault, u64)>>,
}

impl Periodic {
    pub(crate) fn add(&self, fault: PeriodicFault) {
        self.lock().push((fault, 0));
    }

    pub(crate) fn clear(&self) {
        self.lock().clear();
    }

    /// Counts `target` against every periodic fault it matches; the first
    /// whose count reaches a multiple of its `every` applies.
    pub(crate) fn take(&self, target: &str) -> Option<FaultKind> {
        let mut hit = None;
        for (fault, seen) in self.lock().iter_mut() {
            if target.contains(&fault.path_contains) {
                *seen += 1;
                if hit.is_none() && *seen % u64::from(fault.every.max(1)) == 0 {
                    hit = Some(fault.kind.clone());
                }
            }
        }
        hit
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<(PeriodicFault, u64)>> {
        self.faults.lock().unwrap_or_else(|p| p.into_inner())
    }
}
