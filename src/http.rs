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
//! [`crate::parallel::parallel_map`]); the caller's [`Stop`] ends a request
//! at once when its call is cancelled, in a wait or on the wire.

use crate::cancel::{Stop, POLL};
use crate::config::{Config, ProxySetting};
use crate::observer::LogLevel;
use crate::url::{host_of, redact_url, split_url};
use crate::{Error, Result};
use std::collections::hash_map::RandomState;
use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};
use std::sync::mpsc::{sync_channel, RecvTimeoutError};
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// The largest response body read, in bytes (512 MiB), counted after gzip
/// decoding; a larger one is an `Error::Service`. Whole-state flowline pages
/// stay far below this.
pub const MAX_RESPONSE_BYTES: u64 = 512 * 1024 * 1024;

/// The first retry waits up to this long; each further retry doubles it.
const BACKOFF_BASE: Duration = Duration::from_millis(100);
/// No backoff wait is longer than this.
const BACKOFF_CAP: Duration = Duration::from_secs(5);
/// A server's `Retry-After` is waited up to this many seconds; a longer
/// one ends the request (and every later one to that server until then).
const RETRY_AFTER_CAP: Duration = Duration::from_secs(30);
/// How much of an error body (not JSON with a `description`) a message quotes.
const EXCERPT_CHARS: usize = 200;
/// Error bodies are read up to this size for their description.
const ERROR_BODY_LIMIT: u64 = 1024 * 1024;
/// Redirects followed for one request, at most (curl's and browsers'
/// limits are larger, but a service that moved needs one or two).
const MAX_REDIRECTS: u32 = 5;

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
    /// Until when a host's `Retry-After` (on a 429 or 503) holds every
    /// request of this client to it (the limit is the server's, not one
    /// request's; other hosts are not held), by host in lower case.
    holds: Mutex<HashMap<String, Instant>>,
}

/// Requests per second across all threads: the next free start time.
struct RateLimit {
    interval: Duration,
    next_slot: Mutex<Instant>,
}

impl RateLimit {
    /// Blocks until this request's slot, or a cancel. A cancelled call
    /// takes no slot: the calls after it do not wait for its requests.
    fn wait(&self, stop: &Stop) -> Result<()> {
        stop.check()?;
        let now = Instant::now();
        Ok(stop.sleep(self.take_slot(now).saturating_duration_since(now))?)
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

#[derive(Clone, Copy, PartialEq)]
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
#[derive(Clone, Copy)]
struct Request<'a> {
    service: Service,
    method: Method,
    url: &'a str,
    /// Extra request headers (conditional GETs); a 304 answers one.
    headers: &'a [(String, String)],
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

/// A request's parts owned, for an attempt on a thread of its own.
struct OwnedRequest {
    service: Service,
    method: Method,
    url: String,
    headers: Vec<(String, String)>,
    body: Option<(String, Vec<u8>)>,
}

impl OwnedRequest {
    fn of(request: &Request) -> OwnedRequest {
        OwnedRequest {
            service: request.service,
            method: request.method,
            url: request.url.to_string(),
            headers: request.headers.to_vec(),
            body: request.body.map(|(t, b)| (t.to_string(), b.to_vec())),
        }
    }

    fn view(&self) -> Request<'_> {
        Request {
            service: self.service,
            method: self.method,
            url: &self.url,
            headers: &self.headers,
            body: self.body.as_ref().map(|(t, b)| (t.as_str(), b.as_slice())),
        }
    }
}

/// What one attempt came to.
enum Attempt {
    Done(Response),
    /// The server sent the request elsewhere: the same request (method,
    /// headers, body) goes to this URL.
    Moved(String),
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
    ///
    /// Offline, nothing is ever sent, so neither the trust roots nor the
    /// proxy are read: a stale `SSL_CERT_FILE` or proxy variable does not
    /// stop a run that the caches and local files serve.
    pub fn new(config: &Config) -> Result<HttpClient> {
        let (roots, proxy) = match config.offline {
            true => (ureq::tls::RootCerts::new_with_certs(&[]), None),
            false => (
                crate::tls::root_certs(config.ca_bundle.as_deref())?,
                proxy(&config.proxy)?,
            ),
        };
        let tls = ureq::tls::TlsConfig::builder().root_certs(roots).build();
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .tls_config(tls)
            .proxy(proxy)
            .timeout_connect(Some(config.connect_timeout))
            .timeout_global(Some(config.timeout))
            .user_agent(config.user_agent.as_str())
            .http_status_as_error(false)
            .max_redirects(0)
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
            holds: Mutex::new(HashMap::new()),
        })
    }

    /// The same client with a smaller cap on decoded response bodies, for
    /// embedders short of memory (and tests).
    pub fn with_response_limit(mut self, bytes: u64) -> HttpClient {
        self.max_body = bytes.min(MAX_RESPONSE_BYTES);
        self
    }

    /// GET with retries; retry messages go to `log`; a cancel of `stop`
    /// ends it with `Error::Cancelled`.
    pub fn get(&self, log: LogSink, stop: &Stop, service: Service, url: &str) -> Result<Response> {
        self.get_conditional(log, stop, service, url, &[])
    }

    /// A conditional GET with retries: `validators` are request headers
    /// (`If-None-Match`, `If-Modified-Since`); a `304 Not Modified` answer is
    /// a success with status 304 and an empty body.
    pub fn get_conditional(
        &self,
        log: LogSink,
        stop: &Stop,
        service: Service,
        url: &str,
        validators: &[(&str, String)],
    ) -> Result<Response> {
        let headers: Vec<(String, String)> = validators
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect();
        let request = Request {
            service,
            method: Method::Get,
            url,
            headers: &headers,
            body: None,
        };
        self.send(&request, log, stop)
    }

    /// POST `body` with `content_type`, with retries; retry messages go to `log`.
    pub fn post(
        &self,
        log: LogSink,
        stop: &Stop,
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
        self.send(&request, log, stop)
    }

    /// The retry loop: network errors, 408, 429 and 5xx are retried up to
    /// `retries` times with backoff; everything else returns at once.
    /// Redirects are followed here, not by ureq, which would turn a POST
    /// into a GET without its body (a comid set's query lost, the whole
    /// collection answered): see [`redirect`]. In offline mode nothing is
    /// sent: an `Error::Network` names the request. A cancel of `stop`
    /// ends every wait (hold, rate limit, backoff, the answer) at once.
    fn send(&self, request: &Request, log: LogSink, stop: &Stop) -> Result<Response> {
        if self.offline {
            return Err(Error::Network(format!(
                "offline mode is on (option offline, HYDROPLOT_OFFLINE): {} was not sent, \
                 and nothing cached or local answers it; turn offline mode off once to fetch it",
                request.describe()
            )));
        }
        let (mut retry, mut redirects) = (0, 0);
        let mut url = request.url.to_string();
        loop {
            let host = host_of(&url).to_ascii_lowercase();
            self.wait_for_hold(&host, request, stop)?;
            if let Some(rate) = &self.rate {
                rate.wait(stop)?;
            }
            let this = Request {
                url: &url,
                ..*request
            };
            let (error, wait) = match self.watched_attempt(&this, stop)? {
                Attempt::Done(response) => return Ok(response),
                Attempt::Fail(error) => return Err(error),
                Attempt::Moved(next) if redirects < MAX_REDIRECTS => {
                    (redirects, url) = (redirects + 1, next);
                    continue;
                }
                Attempt::Moved(next) => {
                    return Err(Error::Network(format!(
                        "{} was redirected {MAX_REDIRECTS} times, then to {}: a redirect loop? \
                         Give the service's current address",
                        request.describe(),
                        redact_url(&next)
                    )))
                }
                Attempt::Retry { error, wait } => (error, wait),
            };
            if let Some(wait) = wait {
                self.hold_for(&host, wait);
                if wait > RETRY_AFTER_CAP {
                    return Err(asked_to_wait(error, wait));
                }
            }
            if retry >= self.retries {
                return Err(if self.retries == 0 {
                    error
                } else {
                    gave_up(error, self.retries)
                });
            }
            retry += 1;
            let delay = wait.unwrap_or_else(|| backoff(retry));
            log(
                LogLevel::Warning,
                &format!(
                    "{error}; retry {retry} of {} in {:.1} s",
                    self.retries,
                    delay.as_secs_f64()
                ),
            );
            stop.sleep(delay)?;
        }
    }

    /// Sleeps until the end of the hold `host` asked for, if any; a hold
    /// longer than [`RETRY_AFTER_CAP`] is an error at once, with nothing
    /// sent (a batch's other requests to a server that asked for an hour's
    /// rest do not each ask again).
    fn wait_for_hold(&self, host: &str, request: &Request, stop: &Stop) -> Result<()> {
        let until = self
            .holds
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(host)
            .copied();
        let Some(left) = until.map(|u| u.saturating_duration_since(Instant::now())) else {
            return Ok(());
        };
        if left > RETRY_AFTER_CAP {
            return Err(Error::Network(format!(
                "{} was not sent: the server asked for no requests for another {:.0} s \
                 (Retry-After); try again later",
                request.describe(),
                left.as_secs_f64()
            )));
        }
        Ok(stop.sleep(left)?)
    }

    /// Holds every request of this client to `host` for `wait` from now (a
    /// later hold wins).
    fn hold_for(&self, host: &str, wait: Duration) {
        let until = Instant::now() + wait;
        let mut holds = self.holds.lock().unwrap_or_else(|p| p.into_inner());
        let hold = holds.entry(host.to_string()).or_insert(until);
        *hold = (*hold).max(until);
    }

    /// One attempt on a thread of its own while this thread watches
    /// `stop`: a cancel ends the wait within [`POLL`], even for a server
    /// that sends nothing (the attempt's thread is left to end by itself,
    /// at the latest at the timeout, and its answer is dropped). Without a
    /// thread to spare, the attempt runs here.
    fn watched_attempt(&self, request: &Request, stop: &Stop) -> Result<Attempt> {
        stop.check()?;
        let (agent, max_body) = (self.agent.clone(), self.max_body);
        let owned = OwnedRequest::of(request);
        let (answer, answered) = sync_channel(1);
        let spawned = std::thread::Builder::new()
            .name("hydroplot-request".to_string())
            .spawn(move || {
                // The receiver is gone when the call was cancelled.
                let _ = answer.send(attempt(&agent, max_body, &owned.view()));
            });
        if spawned.is_err() {
            return Ok(attempt(&self.agent, self.max_body, request));
        }
        loop {
            match answered.recv_timeout(POLL) {
                // Cancelled while on the wire: the answer is not used.
                Ok(attempt) => return stop.check().map(|()| attempt).map_err(Error::from),
                Err(RecvTimeoutError::Timeout) => stop.check()?,
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(Error::Internal(format!(
                        "{} ended without an answer",
                        request.describe()
                    )))
                }
            }
        }
    }
}

/// One attempt of `request` with `agent`, its decoded body read up to
/// `max_body` bytes.
fn attempt(agent: &ureq::Agent, max_body: u64, request: &Request) -> Attempt {
    let what = request.describe();
    let result = match request.body {
        None => request
            .headers
            .iter()
            .fold(agent.get(request.url), |r, (k, v)| r.header(k, v))
            .call(),
        Some((content_type, body)) => agent
            .post(request.url)
            .header("Content-Type", content_type)
            .send(body),
    };
    let mut response = match result {
        Ok(r) => r,
        Err(e) => return network_failure(&what, request.url, e, max_body),
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
    if let Some(attempt) = redirect(request, status, &headers) {
        return attempt;
    }
    if status == 304 && !request.headers.is_empty() {
        return Attempt::Done(Response {
            status,
            headers,
            body: Vec::new(),
        });
    }
    if (200..300).contains(&status) {
        if let Some(encoding) = unasked_encoding(&headers) {
            return Attempt::Fail(Error::Service(format!(
                "{what} sent its body in the {encoding:?} encoding, which was not asked \
                     for (Accept-Encoding: gzip) and cannot be read"
            )));
        }
        return match read_capped(response.body_mut(), max_body) {
            Ok(body) => Attempt::Done(Response {
                status,
                headers,
                body,
            }),
            Err(e) => network_failure(&what, request.url, e, max_body),
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
        408 | 429 | 500..=599 => Attempt::Retry {
            error: Error::Http { status, message },
            wait: match status {
                429 | 503 => retry_after(&headers, SystemTime::now()),
                _ => None,
            },
        },
        _ => Attempt::Fail(Error::Http { status, message }),
    }
}

/// A `Content-Encoding` other than the gzip asked for (which ureq decodes,
/// spelled exactly so) or none: its body would read as garbage ("not
/// JSON"), so it is named instead.
fn unasked_encoding(headers: &[(String, String)]) -> Option<&str> {
    let (_, encoding) = headers.iter().find(|(k, _)| k == "content-encoding")?;
    let encoding = encoding.trim();
    (!matches!(encoding, "" | "gzip" | "identity")).then_some(encoding)
}

/// Where a redirect answer sends `request`, if `status` is one: `Moved`
/// with the new URL, or `Fail` when it cannot be followed safely. A POST
/// (a query in its body) is sent again as it was on 301, 302, 307 and 308;
/// a 303 would turn it into a GET without its query and fails instead. A
/// redirect from https to plain http is refused: it would send the rest of
/// the exchange, and any credentials in later URLs, in the clear.
fn redirect(request: &Request, status: u16, headers: &[(String, String)]) -> Option<Attempt> {
    if !matches!(status, 301 | 302 | 303 | 307 | 308) {
        return None;
    }
    let what = request.describe();
    let Some((_, location)) = headers.iter().find(|(k, _)| k == "location") else {
        return Some(Attempt::Fail(Error::Service(format!(
            "{what} answered HTTP {status} without a Location to go to"
        ))));
    };
    let next = resolve_location(request.url, location.trim());
    let shown = redact_url(&next);
    if is_https(request.url) && !is_https(&next) {
        return Some(Attempt::Fail(Error::Network(format!(
            "{what} redirected to {shown}, from https to plain http: refused. \
             Give the service's https address"
        ))));
    }
    if request.method == Method::Post && status == 303 {
        return Some(Attempt::Fail(Error::Service(format!(
            "{what} answered 303 See Other ({shown}): its query would be lost \
             on the way. Give the service's current address"
        ))));
    }
    Some(Attempt::Moved(next))
}

fn is_https(url: &str) -> bool {
    url.get(..8)
        .is_some_and(|s| s.eq_ignore_ascii_case("https://"))
}

/// A `Location` resolved against the URL it answered (RFC 3986 5.2, the
/// forms servers send): absolute, scheme-relative (`//host/...`),
/// absolute path, or a path relative to the URL's own. The URL's
/// credentials go only to a location on the same host.
fn resolve_location(base: &str, location: &str) -> String {
    let has_scheme = location.split_once("://").is_some_and(|(s, _)| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"+.-".contains(&b))
    });
    if has_scheme {
        return location.to_string();
    }
    let (scheme, _, tail) = split_url(base);
    if let Some(rest) = location.strip_prefix("//") {
        return format!("{scheme}{rest}");
    }
    let origin = &base[..base.len() - tail.len()];
    if location.starts_with('/') {
        return format!("{origin}{location}");
    }
    let path = tail.split(['?', '#']).next().unwrap_or("");
    let dir = path.rfind('/').map_or("/", |i| &path[..=i]);
    format!("{origin}{dir}{location}")
}

/// The wait a `Retry-After` header asks for: seconds, or an HTTP date
/// (RFC 9110 10.2.3) after `now` (a date past is no wait).
fn retry_after(headers: &[(String, String)], now: SystemTime) -> Option<Duration> {
    let value = headers.iter().find(|(k, _)| k == "retry-after")?.1.trim();
    if let Ok(seconds) = value.parse::<f64>() {
        // At most a year: Duration::from_secs_f64 panics on overflow.
        return (seconds.is_finite() && seconds >= 0.0)
            .then(|| Duration::from_secs_f64(seconds.min(365.0 * 86_400.0)));
    }
    let at = UNIX_EPOCH + Duration::from_secs(u64::try_from(http_date_seconds(value)?).ok()?);
    Some(at.duration_since(now).unwrap_or_default())
}

/// Seconds since 1970 of an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`),
/// the form RFC 9110 has senders use.
fn http_date_seconds(date: &str) -> Option<i64> {
    let (_, rest) = date.split_once(", ")?;
    let fields: Vec<&str> = rest.split(' ').collect();
    let [day, month, year, time, "GMT"] = fields[..] else {
        return None;
    };
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let month = MONTHS.iter().position(|m| *m == month)? as i64 + 1;
    let (day, year): (i64, i64) = (day.parse().ok()?, year.parse().ok()?);
    let hms: Vec<i64> = time
        .split(':')
        .map(|t| t.parse().ok())
        .collect::<Option<_>>()?;
    let [h, m, sec] = hms[..] else { return None };
    if !(1..=31).contains(&day) || h > 23 || m > 59 || sec > 60 {
        return None;
    }
    // Days from 1970-01-01 to year-month-day (Howard Hinnant's days_from_civil).
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * ((month + 9) % 12) + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(days * 86_400 + h * 3600 + m * 60 + sec)
}

/// The error of a server that asked for a longer rest than this client
/// waits, saying so (not retried: a retry before then would be refused).
fn asked_to_wait(error: Error, wait: Duration) -> Error {
    let note = |m: String| {
        format!(
            "{m} (it asks for no requests for {:.0} s, Retry-After, longer than the {} s \
             this client waits: try again later)",
            wait.as_secs_f64(),
            RETRY_AFTER_CAP.as_secs()
        )
    };
    match error {
        Error::Http { status, message } => Error::Http {
            status,
            message: note(message),
        },
        other => other,
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

/// The proxy variables in the order they apply (curl's order for the
/// services' https URLs: `HTTPS_PROXY`, then `ALL_PROXY`; `HTTP_PROXY` last,
/// for services given as plain http), each lower case first as curl reads
/// them. An empty variable is unset.
const PROXY_VARIABLES: [&str; 6] = [
    "https_proxy",
    "HTTPS_PROXY",
    "all_proxy",
    "ALL_PROXY",
    "http_proxy",
    "HTTP_PROXY",
];

/// The proxy of the agent: none, the `proxy` option's URL, or the first
/// proxy variable set ([`PROXY_VARIABLES`]); with the environment's
/// `NO_PROXY` either way, as curl and requests apply it. A proxy URL that
/// cannot be used (unparsable, SOCKS) is an `Error::InvalidArgument` naming
/// where it came from, never silently a direct connection.
fn proxy(setting: &ProxySetting) -> Result<Option<ureq::Proxy>> {
    let (url, source) = match setting {
        ProxySetting::Off => return Ok(None),
        ProxySetting::Url(url) => (url.clone(), "option proxy".to_string()),
        ProxySetting::Environment => match PROXY_VARIABLES.iter().find_map(|v| {
            std::env::var(v)
                .ok()
                .filter(|u| !u.trim().is_empty())
                .map(|u| (u, v))
        }) {
            Some((url, variable)) => (url, format!("environment variable {variable}")),
            None => return Ok(None),
        },
    };
    let bad = |why: &str| Error::InvalidArgument(format!("{source}: {why}"));
    let parsed = ureq::Proxy::new(url.trim()).map_err(|_| bad("not a usable proxy URL"))?;
    if !matches!(
        parsed.protocol(),
        ureq::ProxyProtocol::Http | ureq::ProxyProtocol::Https
    ) {
        return Err(bad(
            "a SOCKS proxy, which hydroplot does not speak: give an HTTP proxy \
             (http://host:port)",
        ));
    }
    let mut builder = ureq::Proxy::builder(parsed.protocol())
        .host(parsed.host())
        .port(parsed.port());
    if let Some(user) = parsed.username() {
        builder = builder.username(user);
    }
    if let Some(password) = parsed.password() {
        builder = builder.password(password);
    }
    let no_proxy = ["no_proxy", "NO_PROXY"]
        .iter()
        .find_map(|v| std::env::var(v).ok())
        .unwrap_or_default();
    for pattern in no_proxy_patterns(&no_proxy) {
        builder = builder.no_proxy(&pattern);
    }
    builder
        .build()
        .map(Some)
        .map_err(|_| bad("not a usable proxy URL"))
}

/// A `NO_PROXY` list as ureq's host patterns, read as curl reads it:
/// entries split at commas and trimmed; `*` alone bypasses every host; a
/// domain (`usgs.gov`, `.usgs.gov` or `*.usgs.gov`) matches itself and
/// every host under it; a port after a host name is dropped (the host is
/// bypassed on every port). CIDR ranges are kept as written and match only
/// that text.
fn no_proxy_patterns(list: &str) -> Vec<String> {
    let mut patterns = Vec::new();
    for entry in list.split(',').map(str::trim).filter(|e| !e.is_empty()) {
        let entry = entry.to_ascii_lowercase();
        if entry == "*" {
            patterns.push(entry);
            continue;
        }
        let domain = entry.trim_start_matches('*').trim_start_matches('.');
        let domain = match domain.rsplit_once(':') {
            Some((host, port))
                if !host.contains(':') && port.bytes().all(|b| b.is_ascii_digit()) =>
            {
                host
            }
            _ => domain,
        };
        if !domain.is_empty() {
            patterns.push(domain.to_string());
            patterns.push(format!(".{domain}"));
        }
    }
    patterns
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
        ureq::Error::ConnectProxyFailed(reason) => proxy_refused(what, &reason),
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

/// A proxy that did not open the tunnel (ureq's reason reads "proxy
/// server responded 407/407 ..."): a refusal (407 and other 4xx) is final,
/// since retrying wrong credentials can lock an agency account; a proxy's
/// 5xx (its way to the server failed) is retried.
fn proxy_refused(what: &str, reason: &str) -> Attempt {
    let status = reason
        .trim_start_matches("proxy server responded ")
        .get(..3)
        .and_then(|s| s.parse::<u16>().ok());
    let error = |hint: &str| {
        Error::Network(format!(
            "{what}: the proxy did not connect ({reason}){hint}"
        ))
    };
    match status {
        Some(407) => Attempt::Fail(error(
            ": it asks for credentials, or refused those given; give them as \
             http://user:password@host:port in HTTPS_PROXY or the option proxy",
        )),
        Some(400..=499) => Attempt::Fail(error("")),
        _ => Attempt::Retry {
            error: error(""),
            wait: None,
        },
    }
}

/// What a JSON error body says: its `description` (pygeoapi) or, in RFC
/// 9457 problem details (the NLDI), its `detail`, else its `title`; else a
/// short excerpt of the text.
fn error_detail(body: &[u8]) -> Option<String> {
    if let Ok(serde_json::Value::Object(map)) = serde_json::from_slice::<serde_json::Value>(body) {
        let said = ["description", "detail", "title"].iter().find_map(|k| {
            map.get(*k)
                .and_then(|d| d.as_str())
                .filter(|d| !d.trim().is_empty())
        });
        if let Some(d) = said {
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
    fn error_bodies_give_their_description_or_an_excerpt() {
        assert_eq!(
            error_detail(br#"{"type":"error","description":"no such comid"}"#).unwrap(),
            "no such comid"
        );
        assert_eq!(
            error_detail(b"<html>\n  Bad   gateway</html>").unwrap(),
            "<html> Bad gateway</html>"
        );
        let problem = br#"{"type":"about:blank","title":"Not Found","status":404,
            "detail":"The comid 999 was not found in NHDPlus"}"#;
        assert_eq!(
            error_detail(problem).unwrap(),
            "The comid 999 was not found in NHDPlus"
        );
        assert_eq!(
            error_detail(br#"{"type":"about:blank","title":"Not Found","status":404}"#).unwrap(),
            "Not Found"
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
    fn a_cancelled_call_takes_no_rate_limit_slot() {
        let start = Instant::now();
        let rate = RateLimit {
            interval: Duration::from_secs(3600),
            next_slot: Mutex::new(start),
        };
        let canceller = crate::cancel::Canceller::new();
        let stop = canceller.stop_for_call();
        canceller.cancel();
        for _ in 0..10 {
            assert!(matches!(rate.wait(&stop), Err(Error::Cancelled(_))));
        }
        // The next call's request goes at once, not ten hours later.
        let later = start + Duration::from_secs(1);
        assert_eq!(rate.take_slot(later), later);
    }

    #[test]
    fn backoff_grows_and_is_capped() {
        assert!(backoff(1) <= BACKOFF_BASE && backoff(1) >= BACKOFF_BASE / 2);
        assert!(backoff(3) >= BACKOFF_BASE * 2);
        assert!(backoff(30) <= BACKOFF_CAP);
    }

    #[test]
    fn a_retry_after_hold_is_never_shortened_and_holds_its_host_alone() {
        let client = HttpClient::new(&Config::default()).unwrap();
        let until = |host| client.holds.lock().unwrap().get(host).copied();
        client.hold_for("a", Duration::from_secs(20));
        let long = until("a").unwrap();
        client.hold_for("a", Duration::from_secs(1));
        assert_eq!(
            until("a"),
            Some(long),
            "a shorter Retry-After keeps the longer hold"
        );
        client.hold_for("a", Duration::from_secs(25));
        assert!(until("a").unwrap() > long);
        assert_eq!(until("b"), None);
    }

    #[test]
    fn retry_after_reads_seconds_and_http_dates() {
        let header = |v: &str| vec![("retry-after".to_string(), v.to_string())];
        // 1994-11-06 08:49:37 UTC is 784111777 s after 1970 (RFC 9110's
        // example date; `date -u -d @784111777` prints it).
        let now = UNIX_EPOCH + Duration::from_secs(784_111_777 - 8);
        assert_eq!(
            retry_after(&header("Sun, 06 Nov 1994 08:49:37 GMT"), now),
            Some(Duration::from_secs(8))
        );
        let later = now + Duration::from_secs(60);
        assert_eq!(
            retry_after(&header("Sun, 06 Nov 1994 08:49:37 GMT"), later),
            Some(Duration::ZERO),
            "a date past asks for no wait"
        );
        assert_eq!(
            retry_after(&header(" 120 "), now),
            Some(Duration::from_secs(120))
        );
        assert_eq!(
            retry_after(&header("1.5"), now),
            Some(Duration::from_millis(1500))
        );
        for bad in [
            "-1",
            "soon",
            "Sun, 06 Nov 1994 08:49:37 CET",
            "Sun, 32 Nov 1994 08:49:37 GMT",
            "inf",
        ] {
            assert_eq!(retry_after(&header(bad), now), None, "{bad}");
        }
        assert_eq!(retry_after(&[], now), None);
        assert_eq!(http_date_seconds("Thu, 01 Jan 1970 00:00:00 GMT"), Some(0));
        assert_eq!(
            http_date_seconds("Tue, 29 Feb 2028 12:00:00 GMT"),
            Some(1_835_438_400)
        );
    }

    #[test]
    fn bodies_in_an_encoding_not_asked_for_are_named() {
        let encoded = |e: &str| vec![("content-encoding".to_string(), e.to_string())];
        for fine in ["gzip", "identity", " "] {
            assert_eq!(unasked_encoding(&encoded(fine)), None, "{fine}");
        }
        assert_eq!(unasked_encoding(&[]), None);
        for unasked in ["br", "deflate", "x-gzip", "GZIP"] {
            assert_eq!(unasked_encoding(&encoded(unasked)), Some(unasked));
        }
    }

    #[test]
    fn redirects_out_of_https_are_refused() {
        let request = Request {
            service: Service::Fabric,
            method: Method::Get,
            url: "https://api.example/fabric/items?f=json",
            headers: &[],
            body: None,
        };
        let to = |location: &str| vec![("location".to_string(), location.to_string())];
        let Some(Attempt::Fail(e)) =
            redirect(&request, 301, &to("http://api.example/fabric/items"))
        else {
            panic!("a downgrade is followed");
        };
        assert!(e.to_string().contains("plain http"), "{e}");
        for (status, location) in [(302, "https://mirror.example/items"), (308, "/v2/items")] {
            assert!(matches!(
                redirect(&request, status, &to(location)),
                Some(Attempt::Moved(_))
            ));
        }
        assert!(redirect(&request, 304, &to("/x")).is_none());
        assert!(matches!(
            redirect(&request, 301, &[]),
            Some(Attempt::Fail(Error::Service(_)))
        ));
    }

    #[test]
    fn no_proxy_reads_as_curl_reads_it() {
        assert_eq!(
            no_proxy_patterns(" usgs.gov , .Agency.gov,*.corp.example, host:8080,,*"),
            [
                "usgs.gov",
                ".usgs.gov",
                "agency.gov",
                ".agency.gov",
                "corp.example",
                ".corp.example",
                "host",
                ".host",
                "*"
            ]
        );
        assert!(no_proxy_patterns(" , ").is_empty());
    }

    #[test]
    fn locations_resolve_against_the_url_they_answer() {
        let base = "https://u:p@api.example/fabric/pygeoapi/collections/x/items?f=json";
        for (location, expected) in [
            ("https://other.example/a?b=1", "https://other.example/a?b=1"),
            ("//other.example/a", "https://other.example/a"),
            ("/moved/items", "https://u:p@api.example/moved/items"),
            (
                "items2?f=json",
                "https://u:p@api.example/fabric/pygeoapi/collections/x/items2?f=json",
            ),
        ] {
            assert_eq!(resolve_location(base, location), expected, "{location}");
        }
        assert_eq!(resolve_location("http://h", "a"), "http://h/a");
    }
}
