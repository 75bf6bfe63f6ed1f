//! The core context: settings, the HTTP client built from them, and the
//! observer that receives log lines and progress.

use crate::config::Config;
use crate::http::HttpClient;
use crate::Result;
use std::sync::Arc;

/// Log levels, numbered as the C API's `hydroplot_log_fn` receives them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum LogLevel {
    Error = 1,
    Warning = 2,
    Info = 3,
    Debug = 4,
}

/// Receives log lines and progress. The library calls it only on the thread
/// that made the call (work done on helper threads is reported back there).
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
        Ok(Context { config, http, observer: None })
    }

    /// The same context reporting to `observer`.
    pub fn with_observer(mut self, observer: Option<Arc<dyn Observer>>) -> Context {
        self.observer = observer;
        self
    }

    /// Sends a log line to the observer, if any.
    pub fn log(&self, level: LogLevel, message: &str) {
        if let Some(o) = &self.observer {
            o.log(level, message);
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
            o.progress(stage, done, total);
        }
    }
}
