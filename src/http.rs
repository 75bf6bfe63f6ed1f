//! HTTP core: one ureq agent per context with explicit timeouts, TLS roots
//! ([`crate::tls`]), a proxy, a retry policy (exponential backoff with jitter,
//! `Retry-After`), a shared rate limit, a response size cap on the decoded
//! body, offline mode, and the mapping of statuses to [`Error`] variants.
//!
//! Every request of the library passes [`HttpClient::get_conditional`] or
//! [`HttpClient::post`], so offline mode is enforced here, once: it refuses
//! before any socket is opened.
//!
//! Transport only: it knows no service's documents and no context. Retry
//! messages go to the log sink the caller passes (the context's observer,
//! which relays them to the calling thread when the request runs inside
//! [`crate::parallel::parallel_map`]).

use crate::config::{Config, ProxySetting};
use crate::observer::LogLevel;
use crate::{Error, Result};
use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The largest response body read, in bytes (512 MiB), counted after gzip
/// decoding; a larger one is an `Error::Service`. Whole-state flowline pages
/// stay far below this.
pub const MAX_RESPONSE_BYTES: u64 = 512 * 1024 * 1024;

/// The first retry waits up to this long; each further retry doubles it.
const BACKOFF_BASE: Duration = Duration::from_millis(100);
/// No backoff wait is longer than this.
const BACKOFF_CAP: Duration = Duration::from_secs(5);
/// A server's `Retry-After` is honoured up to this many seconds.
const RETRY_AFTER_CAP: Duration = Duration::from_secs(30);
/// How much of an error body (not JSON with a `description`) a message quotes.
const EXCERPT_CHARS: usize = 200;
/// Error bodies are read up to this size for their description.
const ERROR_BODY_LIMIT: u64 = 1024 * 1024;

/// Where retry messages go: a level and a message.
pub type LogSink<'a> = &'a dyn Fn(LogLevel, &str);

/// Which remote service a request goes to; named in every error message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Service {
    Index,
    Fabric,
    Process,
    Tiles,
}

impl Service {
    /// The name used in messages: "index service", "fabric service", ...
    pub fn name(self) -> &'static str {
        match self {
            Service::Index => "index service",
            Service::Fabric => "fabric service",
            Service::Process => "flowtrace process",
            Service::Tiles => "tile server",
        }
    }
}

/// A successful (2xx) response.
#[derive(Debug, Clone)]
pub struct Response {
    pub status: u16,
    /// Header names in lower case.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    /// The first header named `name` (give it in lower case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// One ureq agent with the context's timeouts, User-Agent, TLS roots, proxy,
/// retry policy, rate limit, response size cap and offline switch. Shared by
/// all threads of a context.
pub struct HttpClient {
    agent: ureq::Agent,
    retries: u32,
    rate: Option<RateLimit>,
    /// Refuse every request (option `offline`).
    offline: bool,
    /// The largest decoded body accepted, [`MAX_RESPONSE_BYTES`] unless set.
    max_body: u64,
    /// Until when a server's 429 `Retry-After` holds every request of this
    /// client (the limit is the address's, not one request's).
    hold: Mutex<Option<Instant>>,
}

/// Requests per second across all threads: the next free start time.
struct RateLimit {
    interval: Duration,
    next_slot: Mutex<Instant>,
}

impl RateLimit {
    /// Blocks until this request's slot.
    fn wait(&self) {
        let now = Instant::now();
        std::thread::sleep(self.take_slot(now).saturating_duration_since(now));
    }

    /// The start time of a request asked for at `now`: the first free slot,
    /// which is then taken (the next one is an interval later).
    fn take_slot(&self, now: Instant) -> Instant {
        let mut next = self.next_slot.lock().unwrap_or_else(|p| p.into_inner());
        let slot = (*next).max(now);
        *next = slot + self.interval;
        slot
    }
}

#[derive(Clone, Copy)]
enum Method {
    Get,
    Post,
}

impl Method {
    fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Post => "POST",
        }
    }
}

/// One request as the retry loop sees it.
struct Request<'a> {
    service: Service,
    method: Method,
    url: &'a str,
    /// Extra request headers (conditional GETs); a 304 answers one.
    headers: &'a [(&'a str, String)],
    /// Content type and body of a POST.
    body: Option<(&'a str, &'a [u8])>,
}

impl Request<'_> {
    /// "fabric service GET http://host/path?query", credentials removed.
    fn describe(&self) -> String {
        format!(
            "{} {} {}",
            self.service.name(),
            self.method.as_str(),
            redact_url(self.url)
        )
    }
}

/// What one attempt came to.
enum Attempt {
    Done(Response),
    /// Worth retrying, after at least `wait` when the server asked for it.
    Retry {
        error: Error,
        wait: Option<Duration>,
    },
    Fail(Error),
}

impl HttpClient {
    /// Builds the agent from the context settings. An unusable CA bundle
    /// (option `ca_bundle` or `SSL_CERT_FILE`, ...) is an
    /// `Error::InvalidArgument` naming the file.
    pub fn new(config: &Config) -> Result<HttpClient> {
        let tls = ureq::tls::TlsConfig::builder()
            .root_certs(crate::tls::root_certs(config.ca_bundle.as_deref())?)
            .build();
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .tls_config(tls)
            .proxy(proxy(&config.proxy)?)
            .timeout_connect(Some(config.connect_timeout))
            .timeout_global(Some(config.timeout))
            .user_agent(config.user_agent.as_str())
            .http_status_as_error(false)
            .build()
            .into();
        let rate = (config.rate_limit_per_s > 0.0).then(|| RateLimit {
            interval: Duration::from_secs_f64((1.0 / config.rate_limit_per_s).min(86_400.0)),
            next_slot: Mutex::new(Instant::now()),
        });
        Ok(HttpClient {
            agent,
            retries: config.retries,
            rate,
            offline: config.offline,
            max_body: MAX_RESPONSE_BYTES,
            hold: Mutex::new(None),
        })
    }

    /// The same client with a smaller cap on decoded response bodies, for
    /// embedders short of memory (and tests).
    pub fn with_response_limit(mut self, bytes: u64) -> HttpClient {
        self.max_body = bytes.min(MAX_RESPONSE_BYTES);
        self
    }

    /// GET with retries; retry messages go to `log`.
    pub fn get(&self, log: LogSink, service: Service, url: &str) -> Result<Response> {
        self.get_conditional(log, service, url, &[])
    }

    /// A conditional GET with retries: `validators` are request headers
    /// (`If-None-Match`, `If-Modified-Since`); a `304 Not Modified` answer is
    /// a success with status 304 and an empty body.
    pub fn get_conditional(
        &self,
        log: LogSink,
        service: Service,
        url: &str,
        validators: &[(&str, String)],
    ) -> Result<Response> {
        let request = Request {
            service,
            method: Method::Get,
            url,
            headers: validators,
            body: None,
        };
        self.send(&request, log)
    }

    /// POST `body` with `content_type`, with retries; retry messages go to `log`.
    pub fn post(
        &self,
        log: LogSink,
        service: Service,
        url: &str,
        content_type: &str,
        body: &[u8],
    ) -> Result<Response> {
        let request = Request {
            service,
            method: Method::Post,
            url,
            headers: &[],
            body: Some((content_type, body)),
        };
        self.send(&request, log)
    }

    /// The retry loop: network errors, 408, 429 and 5xx are retried up to
    /// `retries` times with backoff; everything else returns at once. In
    /// offline mode nothing is sent: an `Error::Network` names the request.
    fn send(&self, request: &Request, log: LogSink) -> Result<Response> {
        if self.offline {
            return Err(Error::Network(format!(
                "offline mode is on (option offline, HYDROPLOT_OFFLINE): {} was not sent, \
                 and nothing cached or local answers it; turn offline mode off once to fetch it",
                request.describe()
            )));
        }
        let mut retry = 0;
        loop {
            self.wait_for_hold();
            if let Some(rate) = &self.rate {
                rate.wait();
            }
            let (error, wait) = match self.attempt(request) {
                Attempt::Done(response) => return Ok(response),
                Attempt::Fail(error) => return Err(error),
                Attempt::Retry { error, wait } => (error, wait),
            };
            if let (429, Some(wait)) = (error.http_status(), wait) {
                self.hold_for(wait.min(RETRY_AFTER_CAP));
            }
            if retry >= self.retries {
                return Err(if self.retries == 0 {
                    error
                } else {
                    gave_up(error, self.retries)
                });
            }
            retry += 1;
            let delay = wait.map_or_else(|| backoff(retry), |w| w.min(RETRY_AFTER_CAP));
            log(
                LogLevel::Warning,
                &format!(
                    "{error}; retry {retry} of {} in {:.1} s",
                    self.retries,
                    delay.as_secs_f64()
                ),
            );
            std::thread::sleep(delay);
        }
    }

    /// Sleeps until the end of the hold a 429 asked for, if any.
    fn wait_for_hold(&self) {
        let until = *self.hold.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(until) = until {
            std::thread::sleep(until.saturating_duration_since(Instant::now()));
        }
    }

    /// Holds every request of this client for `wait` from now (a later hold wins).
    fn hold_for(&self, wait: Duration) {
        let until = Instant::now() + wait;
        let mut hold = self.hold.lock().unwrap_or_else(|p| p.into_inner());
        *hold = Some(hold.map_or(until, |h| h.max(until)));
    }

    fn attempt(&self, request: &Request) -> Attempt {
        let what = request.describe();
        let result = match request.body {
            None => request
                .headers
                .iter()
                .fold(self.agent.get(request.url), |r, (k, v)| r.header(*k, v))
                .call(),
            Some((content_type, body)) => self
                .agent
                .post(request.url)
                .header("Content-Type", content_type)
                .send(body),
        };
        let mut response = match result {
            Ok(r) => r,
            Err(e) => return network_failure(&what, request.url, e, self.max_body),
        };
        let status = response.status().as_u16();
        let headers: Vec<(String, String)> = response
            .headers()
            .iter()
            .map(|(k, v)| {
                (
                    k.as_str().to_ascii_lowercase(),
                    String::from_utf8_lossy(v.as_bytes()).into_owned(),
                )
            })
            .collect();
        if status == 304 && !request.headers.is_empty() {
            return Attempt::Done(Response {
                status,
                headers,
                body: Vec::new(),
            });
        }
        if (200..300).contains(&status) {
            return match read_capped(response.body_mut(), self.max_body) {
                Ok(body) => Attempt::Done(Response {
                    status,
                    headers,
                    body,
                }),
                Err(e) => network_failure(&what, request.url, e, self.max_body),
            };
        }
        let body = response
            .body_mut()
            .with_config()
            .limit(ERROR_BODY_LIMIT)
            .read_to_vec()
            .unwrap_or_default();
        let reason = response.status().canonical_reason().unwrap_or("");
        let mut message = format!("{what} answered HTTP {status} {reason}")
            .trim_end()
            .to_string();
        if let Some(detail) = error_detail(&body) {
            message = format!("{message}: {detail}");
        }
        match status {
            404 => Attempt::Fail(Error::NotFound {
                http_status: 404,
                message,
            }),
            408 | 500..=599 => Attempt::Retry {
                error: Error::Http { status, message },
                wait: None,
            },
            429 => {
                let wait = headers
                    .iter()
                    .find(|(k, _)| k == "retry-after")
                    .and_then(|(_, v)| v.trim().parse::<f64>().ok())
                    .filter(|s| s.is_finite() && *s >= 0.0)
                    .map(|s| Duration::from_secs_f64(s.min(RETRY_AFTER_CAP.as_secs_f64())));
                Attempt::Retry {
                    error: Error::Http { status, message },
                    wait,
                }
            }
            _ => Attempt::Fail(Error::Http { status, message }),
        }
    }
}

/// Adds "(gave up after N retries)" to the message of a retried error.
fn gave_up(error: Error, retries: u32) -> Error {
    let note = |m: String| format!("{m} (gave up after {retries} retries)");
    match error {
        Error::Http { status, message } => Error::Http {
            status,
            message: note(message),
        },
        Error::Network(m) => Error::Network(note(m)),
        other => other,
    }
}

/// Reads a body, decoded (gzip), up to `limit` bytes: ureq's own limit counts
/// the bytes on the wire, so a small compressed body could decode to any size.
fn read_capped(body: &mut ureq::Body, limit: u64) -> std::result::Result<Vec<u8>, ureq::Error> {
    use std::io::Read;
    let mut out = Vec::new();
    body.with_config()
        .limit(limit)
        .reader()
        .take(limit.saturating_add(1))
        .read_to_end(&mut out)?;
    if out.len() as u64 > limit {
        return Err(ureq::Error::BodyExceedsLimit(limit));
    }
    Ok(out)
}

/// The proxy of the agent: the environment's (ureq reads `ALL_PROXY`,
/// `HTTPS_PROXY`, `HTTP_PROXY` and `NO_PROXY`), none, or the `proxy` option's
/// URL with the environment's `NO_PROXY` list, as curl and requests apply it.
fn proxy(setting: &ProxySetting) -> Result<Option<ureq::Proxy>> {
    let url = match setting {
        ProxySetting::Environment => return Ok(ureq::Proxy::try_from_env()),
        ProxySetting::Off => return Ok(None),
        ProxySetting::Url(url) => url,
    };
    let bad = || Error::InvalidArgument("option proxy: not a usable proxy URL".into());
    let parsed = ureq::Proxy::new(url).map_err(|_| bad())?;
    let mut builder = ureq::Proxy::builder(parsed.protocol())
        .host(parsed.host())
        .port(parsed.port());
    if let Some(user) = parsed.username() {
        builder = builder.username(user);
    }
    if let Some(password) = parsed.password() {
        builder = builder.password(password);
    }
    let no_proxy = ["NO_PROXY", "no_proxy"]
        .iter()
        .find_map(|v| std::env::var(v).ok())
        .unwrap_or_default();
    for entry in no_proxy.split(',').map(str::trim).filter(|e| !e.is_empty()) {
        builder = builder.no_proxy(entry);
    }
    builder.build().map(Some).map_err(|_| bad())
}

/// The host (and port) of a URL, without credentials.
fn host_of(url: &str) -> &str {
    split_url(url).1
}

/// A URL's `scheme://` (empty when none), host without credentials, and
/// the rest (path, query, fragment).
fn split_url(url: &str) -> (&str, &str, &str) {
    let (scheme, rest) = match url.find("://") {
        Some(i) => (&url[..i + 3], &url[i + 3..]),
        None => ("", url),
    };
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    (scheme, host, tail)
}

/// Maps a ureq failure: oversize bodies, bad URLs and refused certificates
/// are final (a certificate does not change on a retry), the rest are
/// network errors worth retrying.
fn network_failure(what: &str, url: &str, e: ureq::Error, limit: u64) -> Attempt {
    if let Some(certificate) = crate::tls::certificate_error(&e) {
        return Attempt::Fail(Error::Network(crate::tls::certificate_message(
            what,
            host_of(url),
            certificate,
        )));
    }
    match e {
        ureq::Error::BodyExceedsLimit(_) => Attempt::Fail(Error::Service(format!(
            "{what} sent a response larger than the {limit}-byte limit"
        ))),
        ureq::Error::BadUri(_) | ureq::Error::Http(_) | ureq::Error::InvalidProxyUrl => {
            Attempt::Fail(Error::InvalidArgument(format!(
                "{what}: not a usable URL ({e})"
            )))
        }
        ureq::Error::Timeout(t) => Attempt::Retry {
            error: Error::Network(format!("{what} timed out ({t})")),
            wait: None,
        },
        e => Attempt::Retry {
            error: Error::Network(format!("{what} failed: {e}")),
            wait: None,
        },
    }
}

/// The `description` of a JSON error body, else a short excerpt of the text.
fn error_detail(body: &[u8]) -> Option<String> {
    if let Ok(serde_json::Value::Object(map)) = serde_json::from_slice::<serde_json::Value>(body) {
        if let Some(d) = map.get("description").and_then(|d| d.as_str()) {
            return Some(d.to_string());
        }
    }
    let text = String::from_utf8_lossy(body);
    let text: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if text.is_empty() {
        return None;
    }
    let mut excerpt: String = text.chars().take(EXCERPT_CHARS).collect();
    if excerpt.len() < text.len() {
        excerpt.push_str("...");
    }
    Some(excerpt)
}

/// Full-jitter exponential backoff: a random wait in [d/2, d], d = base * 2^(retry-1) capped.
fn backoff(retry: u32) -> Duration {
    let full = BACKOFF_BASE
        .saturating_mul(1u32 << retry.saturating_sub(1).min(16))
        .min(BACKOFF_CAP);
    let random = RandomState::new().build_hasher().finish();
    let fraction = 0.5 + 0.5 * (random as f64 / u64::MAX as f64);
    full.mul_f64(fraction)
}

/// The URL without credentials: no `user:password@`, and the values of
/// key/token query parameters replaced by `***`.
pub fn redact_url(url: &str) -> String {
    let (scheme, host, tail) = split_url(url);
    let (path, query) = match tail.split_once('?') {
        Some((p, q)) => (p, Some(q)),
        None => (tail, None),
    };
    let mut out = format!("{scheme}{host}{path}");
    if let Some(query) = query {
        let pairs: Vec<String> = query
            .split('&')
            .map(|pair| match pair.split_once('=') {
                Some((k, _)) if is_secret_param(k) => format!("{k}=***"),
                _ => pair.to_string(),
            })
            .collect();
        out.push('?');
        out.push_str(&pairs.join("&"));
    }
    out
}

fn is_secret_param(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    [
        "key",
        "apikey",
        "api_key",
        "token",
        "access_token",
        "password",
    ]
    .contains(&n.as_str())
}

/// Appends percent-encoded query parameters to `base` (RFC 3986: unreserved
/// characters and `,` kept, so a bbox reads `x,y,x,y` as the spec writes it;
/// everything else `%XX`, space as `%20`, `>` as `%3E`).
pub fn with_query(base: &str, params: &[(&str, &str)]) -> String {
    let mut url = base.to_string();
    for (i, (k, v)) in params.iter().enumerate() {
        url.push(if i == 0 && !base.contains('?') {
            '?'
        } else {
            '&'
        });
        encode_into(&mut url, k);
        url.push('=');
        encode_into(&mut url, v);
    }
    url
}

/// Percent-encodes one URL path segment or query component (RFC 3986
/// unreserved characters and `,` kept, so bboxes read `bbox=x,y,x,y` as the spec writes them).
pub fn encode_component(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    encode_into(&mut out, s);
    out
}

fn encode_into(out: &mut String, s: &str) {
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b',') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_values_are_percent_encoded() {
        let url = with_query(
            "http://h/fabric/collections/nhdflowline_network/items",
            &[
                ("bbox", "-89.5,42.9,-89.2,43.1"),
                ("filter", "streamorde > 2"),
                ("limit", "500"),
            ],
        );
        assert_eq!(
            url,
            "http://h/fabric/collections/nhdflowline_network/items?bbox=-89.5,42.9,-89.2,43.1&filter=streamorde%20%3E%202&limit=500"
        );
        assert_eq!(
            with_query("http://h/x?f=json", &[("a", "é~")]),
            "http://h/x?f=json&a=%C3%A9~"
        );
        assert_eq!(with_query("http://h/x", &[]), "http://h/x");
    }

    #[test]
    fn credentials_never_reach_messages() {
        assert_eq!(
            redact_url("https://user:pw@tiles.example/a/1/2/3.png?apikey=s3cret&x=1"),
            "https://tiles.example/a/1/2/3.png?apikey=***&x=1"
        );
        assert_eq!(
            redact_url("http://127.0.0.1:80/nldi"),
            "http://127.0.0.1:80/nldi"
        );
    }

    #[test]
    fn error_bodies_give_their_description_or_an_excerpt() {
        assert_eq!(
            error_detail(br#"{"type":"error","description":"no such comid"}"#).unwrap(),
            "no such comid"
        );
        assert_eq!(
            error_detail(b"<html>\n  Bad   gateway</html>").unwrap(),
            "<html> Bad gateway</html>"
        );
        assert_eq!(error_detail(b""), None);
        let long = "x".repeat(1000);
        assert_eq!(
            error_detail(long.as_bytes()).unwrap().len(),
            EXCERPT_CHARS + 3
        );
    }

    /// Requests asked for at once start an interval apart; one asked for
    /// after a quiet spell starts at once. (Instants are given, not measured.)
    #[test]
    fn rate_limit_slots_are_one_interval_apart() {
        let start = Instant::now();
        let interval = Duration::from_millis(100);
        let rate = RateLimit {
            interval,
            next_slot: Mutex::new(start),
        };
        let slots: Vec<Duration> = (0..6).map(|_| rate.take_slot(start) - start).collect();
        assert_eq!(slots, (0..6).map(|i| interval * i).collect::<Vec<_>>());
        let later = start + Duration::from_secs(60);
        assert_eq!(rate.take_slot(later), later);
        assert_eq!(rate.take_slot(later), later + interval);
    }

    #[test]
    fn backoff_grows_and_is_capped() {
        assert!(backoff(1) <= BACKOFF_BASE && backoff(1) >= BACKOFF_BASE / 2);
        assert!(backoff(3) >= BACKOFF_BASE * 2);
        assert!(backoff(30) <= BACKOFF_CAP);
    }

    #[test]
    fn a_retry_after_hold_is_never_shortened() {
        let client = HttpClient::new(&Config::default()).unwrap();
        let until = || client.hold.lock().unwrap().unwrap();
        client.hold_for(Duration::from_secs(20));
        let long = until();
        client.hold_for(Duration::from_secs(1));
        assert_eq!(until(), long, "a shorter Retry-After keeps the longer hold");
        client.hold_for(Duration::from_secs(25));
        assert!(until() > long);
    }
}
