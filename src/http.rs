//! HTTP core (OWNED BY the http/mock helper; this is the agreed API, bodies to come).

use crate::config::Config;
use crate::context::Context;
use crate::Result;

/// Which remote service a request goes to; named in every error message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Service {
    Index,
    Fabric,
    Process,
    Tiles,
}

/// A successful (2xx) response.
#[derive(Debug, Clone)]
pub struct Response {
    pub status: u16,
    /// Header names in lower case.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

/// One ureq agent with the context's timeouts, User-Agent, retry policy,
/// rate limit and response size cap.
pub struct HttpClient {}

impl HttpClient {
    pub fn new(_config: &Config) -> Result<HttpClient> {
        Ok(HttpClient {})
    }

    /// GET with retries; the log goes to `ctx`.
    pub fn get(&self, _ctx: &Context, _service: Service, _url: &str) -> Result<Response> {
        todo!()
    }

    /// POST `body` with `content_type`, with retries.
    pub fn post(
        &self,
        _ctx: &Context,
        _service: Service,
        _url: &str,
        _content_type: &str,
        _body: &[u8],
    ) -> Result<Response> {
        todo!()
    }
}

/// Runs `work` over `items` on at most `concurrency` threads; results in input
/// order. `on_done(index, &result)` runs on the calling thread as each finishes.
pub fn parallel_map<T: Sync, R: Send>(
    _concurrency: usize,
    _items: &[T],
    _work: impl Fn(&T) -> R + Sync,
    _on_done: impl FnMut(usize, &R),
) -> Vec<R> {
    todo!()
}

/// Appends percent-encoded query parameters to `base`.
pub fn with_query(_base: &str, _params: &[(&str, &str)]) -> String {
    todo!()
}
