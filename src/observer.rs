//! Log lines and progress: the [`Observer`] a caller installs, and the relay
//! that keeps its calls on the thread that called the library. Work on helper
//! threads ([`crate::parallel::parallel_map`]) sends its observer calls back
//! through the relay; the calling thread runs them in order.

use std::cell::RefCell;
use std::sync::mpsc::Sender;

/// An observer call waiting to run on the thread that made the library call.
pub(crate) type ObserverCall = Box<dyn FnOnce() + Send>;

thread_local! {
    /// Set on helper threads (see [`relay_observer_calls`]): where their observer calls go.
    static RELAY: RefCell<Option<Sender<ObserverCall>>> = const { RefCell::new(None) };
}

/// Runs `work` with every observer call it makes on this thread sent to
/// `relay` instead, for the calling thread to run (see [`deliver`]). Helper
/// threads use it so callbacks stay on the thread that made the call.
pub(crate) fn relay_observer_calls<R>(relay: Sender<ObserverCall>, work: impl FnOnce() -> R) -> R {
    RELAY.with(|r| *r.borrow_mut() = Some(relay));
    let result = work();
    RELAY.with(|r| *r.borrow_mut() = None);
    result
}

/// Runs an observer call here, or relays it when this is a helper thread.
pub(crate) fn deliver(call: ObserverCall) {
    RELAY.with(|r| match &*r.borrow() {
        Some(relay) => {
            // The receiver lives until every helper has finished.
            let _ = relay.send(call);
        }
        None => call(),
    })
}

/// Log levels, numbered as the C API's `hydroplot_log_fn` receives them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum LogLevel {
    Error = 1,
    Warning = 2,
    Info = 3,
    Debug = 4,
}

/// Receives log lines and progress. The library calls it only on the thread
/// that made the call: calls made on helper threads are relayed back there
/// (see `parallel::parallel_map`).
pub trait Observer: Send + Sync {
    /// One log line: retries, warnings, stages.
    fn log(&self, level: LogLevel, message: &str);
    /// Progress of a stage ("basin", "flowline", "tiles", ...); `total` is 0 when unknown.
    fn progress(&self, stage: &str, done: u64, total: u64);
}
