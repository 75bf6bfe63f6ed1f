//! The core context: settings, the HTTP client built from them, and the
//! observer that receives log lines and progress.

use crate::config::Config;
use crate::http::HttpClient;
use crate::Result;
use std::cell::RefCell;
use std::sync::mpsc::Sender;
use std::sync::Arc;

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
/// (see `http::parallel_map`).
pub trait Observer: Send + Sync {
    /// One log line: retries, warnings, stages.
    fn log(&self, level: LogLevel, message: &str);
    /// Progress of a stage ("basin", "flowline", "tiles", ...); `total` is 0 when unknown.
    fn progress(&self, stage: &str, done: u64, total: u64);
}

/// Settings plus the HTTP client and observer built from them. Read-only
/// while in use: share it between threads freely.
pub struct Context {
    /// The settings this context was built from.
    pub config: Config,
    /// The one HTTP client (one connection pool) of this context.
    pub http: HttpClient,
    observer: Option<Arc<dyn Observer>>,
}

impl Context {
    /// Builds a context from settings.
    pub fn new(config: Config) -> Result<Context> {
        let http = HttpClient::new(&config)?;
        Ok(Context {
            config,
            http,
            observer: None,
        })
    }

    /// The same context reporting to `observer`.
    pub fn with_observer(mut self, observer: Option<Arc<dyn Observer>>) -> Context {
        self.observer = observer;
        self
    }

    /// Sends a log line to the observer, if any.
    pub fn log(&self, level: LogLevel, message: &str) {
        if let Some(o) = &self.observer {
            let (o, message) = (Arc::clone(o), message.to_string());
            deliver(Box::new(move || o.log(level, &message)));
        }
    }

    /// Sends a warning to the observer and returns it, for keeping on a result.
    pub fn warn(&self, message: String) -> String {
        self.log(LogLevel::Warning, &message);
        message
    }

    /// Reports progress of a stage to the observer, if any.
    pub fn progress(&self, stage: &str, done: u64, total: u64) {
        if let Some(o) = &self.observer {
            let (o, stage) = (Arc::clone(o), stage.to_string());
            deliver(Box::new(move || o.progress(&stage, done, total)));
        }
    }
}
