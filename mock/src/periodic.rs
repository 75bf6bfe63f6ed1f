//! Faults on every Nth matching request: a service that turns away a share
//! of the traffic (a rate limit that "429s one request in ten").

use super::{FaultKind, PeriodicFault};
use std::sync::Mutex;

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
