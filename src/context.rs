//! The core context: settings, the HTTP client built from them, the
//! observer that receives log lines and progress, and the canceller that
//! stops its calls in flight.

use crate::cancel::{Canceller, Stop};
use crate::config::Config;
use crate::http::{HttpClient, Response, Service};
use crate::observer::deliver;
pub use crate::observer::{LogLevel, Observer};
use crate::Result;
use std::path::PathBuf;
use std::sync::Arc;

/// Settings plus the HTTP client and observer built from them. Read-only
/// while in use: share it between threads freely.
///
/// A clone shares the client (its connections, rate limit and holds), the
/// observer and the canceller. [`Context::cancel`] stops the calls made
/// with this context or its clones; a call that should not be stopped by
/// cancels asked for before it began runs with [`Context::for_call`].
#[derive(Clone)]
pub struct Context {
    /// The settings this context was built from.
    pub config: Config,
    /// The one HTTP client (one connection pool) of this context.
    pub http: Arc<HttpClient>,
    observer: Option<Arc<dyn Observer>>,
    /// This call's stop; its canceller is the context's.
    stop: Stop,
}

impl Context {
    /// Builds a context from settings.
    pub fn new(config: Config) -> Result<Context> {
        let http = Arc::new(HttpClient::new(&config)?);
        Ok(Context {
            http,
            observer: None,
            stop: Canceller::new()
                .stop_for_call()
                .with_lock_timeout(config.lock_timeout),
            config,
        })
    }

    /// This context for a call that begins now: it shares everything, and
    /// only cancels asked for from now on stop it.
    pub fn for_call(&self) -> Context {
        Context {
            stop: (self.canceller().stop_for_call()).with_lock_timeout(self.config.lock_timeout),
            ..self.clone()
        }
    }

    /// Asks every call running with this context (or a clone or
    /// [`Context::for_call`] of it) to stop: each ends at its next
    /// checkpoint with `Error::Cancelled`, no output left partly written. Any
    /// thread, at any time.
    pub fn cancel(&self) {
        self.canceller().cancel();
    }

    /// The canceller of this context, for a thread or signal handler that
    /// holds no context (the CLI's Ctrl-C).
    pub fn canceller(&self) -> Canceller {
        self.stop.canceller()
    }

    /// What this call's work watches for a cancel.
    pub fn stop(&self) -> &Stop {
        &self.stop
    }

    /// A checkpoint: `Error::Cancelled` once this call was cancelled.
    pub fn check_stop(&self) -> Result<()> {
        Ok(self.stop.check()?)
    }

    /// The same context reporting to `observer`.
    pub fn with_observer(mut self, observer: Option<Arc<dyn Observer>>) -> Context {
        self.observe(observer);
        self
    }

    /// Reports to `observer` from now on (`None`: to nobody).
    pub fn observe(&mut self, observer: Option<Arc<dyn Observer>>) {
        self.observer = observer;
    }

    /// The files this context reads, each with where it was named: the CA
    /// bundles ([`crate::tls::bundle_paths`]: the `ca_bundle` option or the
    /// variables such as `SSL_CERT_FILE`). Every output is checked against
    /// them as against a request's inputs, so none is ever written over.
    pub fn files_read(&self) -> Vec<(String, PathBuf)> {
        crate::tls::bundle_paths(self.config.ca_bundle.as_deref())
            .into_iter()
            .map(|(path, named_by)| (named_by, path))
            .collect()
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

    /// GET `url` from `service` with this context's client; retry messages
    /// go to the observer.
    pub fn get(&self, service: Service, url: &str) -> Result<Response> {
        let log = |level, message: &str| self.log(level, message);
        self.http.get(&log, &self.stop, service, url)
    }

    /// A conditional GET (`validators`: `If-None-Match`, `If-Modified-Since`
    /// headers), as [`Context::get`]; a 304 is a success with status 304.
    pub fn get_conditional(
        &self,
        service: Service,
        url: &str,
        validators: &[(&str, String)],
    ) -> Result<Response> {
        let log = |level, message: &str| self.log(level, message);
        self.http
            .get_conditional(&log, &self.stop, service, url, validators)
    }

    /// POST `body` of `content_type` to `url` of `service`, as [`Context::get`].
    pub fn post(
        &self,
        service: Service,
        url: &str,
        content_type: &str,
        body: &[u8],
    ) -> Result<Response> {
        let log = |level, message: &str| self.log(level, message);
        self.http
            .post(&log, &self.stop, service, url, content_type, body)
    }

    /// Reports progress of a stage to the observer, if any.
    pub fn progress(&self, stage: &str, done: u64, total: u64) {
        if let Some(o) = &self.observer {
            let (o, stage) = (Arc::clone(o), stage.to_string());
            deliver(Box::new(move || o.progress(&stage, done, total)));
        }
    }
}
