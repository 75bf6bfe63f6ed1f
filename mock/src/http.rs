//! The mock's HTTP/1.1 server on std::net: a thread per connection,
//! keep-alive, `Content-Length` bodies, request logging, fault injection,
//! and answers through the shaped link when one is set.

use super::fault::FaultKind;
use super::link::Pacer;
use super::state::{LoggedRequest, Shared, Transfer};
use super::wire::{Reply, Request};
use hydroplot::config::Names;
use std::io::{ErrorKind, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Largest request head accepted.
const MAX_HEAD: usize = 64 * 1024;
/// Largest request body accepted.
const MAX_BODY: usize = 16 * 1024 * 1024;
/// How often idle connections check whether the server is stopping.
const POLL: Duration = Duration::from_millis(100);

/// Accepts connections until the server stops.
pub(super) fn spawn_acceptor(listener: TcpListener, shared: Arc<Shared>) -> JoinHandle<()> {
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            if shared.stop.load(Ordering::SeqCst) {
                break;
            }
            let Ok(stream) = stream else { continue };
            let shared = shared.clone();
            std::thread::spawn(move || serve_connection(stream, &shared));
        }
    })
}

/// Serves requests on one connection until it closes, errs or the server stops.
fn serve_connection(mut stream: TcpStream, shared: &Shared) {
    let _ = stream.set_read_timeout(Some(POLL));
    let _ = stream.set_nodelay(true);
    let mut buffer = Vec::new();
    loop {
        let Some((request, keep_alive)) = read_request(&mut stream, &mut buffer, shared) else {
            return;
        };
        let arrived = Instant::now();
        let pacer = shared.pacer();
        let target = if request.raw_query.is_empty() {
            request.path.clone()
        } else {
            format!("{}?{}", request.path, request.raw_query)
        };
        shared
            .requests
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(LoggedRequest {
                method: request.method.clone(),
                path: request.path.clone(),
                query: request.raw_query.clone(),
                headers: request.headers.clone(),
                body: String::from_utf8_lossy(&request.body).into_owned(),
            });
        shared.request_logged.notify_all();
        let fault = shared
            .take_fault(&target)
            .or_else(|| shared.periodic.take(&target));
        let reply = match &fault {
            _ if !shared.within_budget() => {
                Reply::error(503, "the mock's request budget is spent")
            }
            Some(FaultKind::Status(status)) => {
                Reply::error(*status, format!("injected fault: HTTP {status} for {}", request.path))
            }
            Some(FaultKind::TooManyRequests { retry_after_s }) => {
                let mut r = Reply::error(429, "injected fault: too many requests");
                r.headers.push(("Retry-After", retry_after_s.to_string()));
                r
            }
            Some(FaultKind::Html) => Reply {
                status: 200,
                content_type: "text/html; charset=utf-8",
                headers: Vec::new(),
                body: b"<!DOCTYPE html><html><body><h1>Service temporarily unavailable</h1></body></html>".to_vec(),
            },
            Some(FaultKind::DropConnection) => return,
            Some(FaultKind::Slow(d)) => {
                std::thread::sleep(*d);
                route(&request, shared)
            }
            _ => route(&request, shared),
        };
        let reply = super::gzip::compress_if_accepted(
            reply,
            &request,
            shared.gzip.load(Ordering::Relaxed),
            &shared.compressed,
        );
        if let Some(pacer) = &pacer {
            pacer.await_first_byte(arrived);
        }
        let first_byte = Instant::now();
        let (declared, body, keep_alive) = match fault {
            Some(FaultKind::TruncatedBody) => {
                (reply.body.len(), &reply.body[..reply.body.len() / 2], false)
            }
            Some(FaultKind::WrongContentLength) => (reply.body.len() / 2, &reply.body[..], false),
            _ => (reply.body.len(), &reply.body[..], keep_alive),
        };
        let mut out = Out {
            stream: &mut stream,
            pacer: pacer.as_deref(),
        };
        let written = write_reply(&mut out, &reply, declared, body, keep_alive);
        if let Some(bytes) = written {
            let since = |t: Instant| t.duration_since(shared.started);
            shared
                .transfers
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(Transfer {
                    method: request.method.clone(),
                    target,
                    arrived: since(arrived),
                    first_byte: since(first_byte),
                    done: since(Instant::now()),
                    bytes,
                });
        }
        if !(written.is_some() && keep_alive) {
            return;
        }
    }
}

/// Dispatches to the endpoint modules by path prefix, strictly: each
/// resource answers only its method, the body type the real service
/// requires, its own query parameters and the names of the served profile.
fn route(request: &Request, shared: &Shared) -> Reply {
    answer(request, shared).unwrap_or_else(|refusal| refusal)
}

fn answer(request: &Request, shared: &Shared) -> Result<Reply, Reply> {
    let path = request.path.as_str();
    let names = shared.names();
    if let Some(rest) = path.strip_prefix("/nldi/linked-data/") {
        only(request, "GET")?;
        return Ok(super::index::linked_data(
            rest,
            request,
            &shared.data,
            &shared.base_url,
            names,
        ));
    }
    if path == flowtrace_path(names) {
        only(request, "POST")?;
        request.only_params(&|_| false)?;
        request.body_of_type("application/json")?;
        return Ok(super::flowtrace::execute(request, &shared.data));
    }
    if let Some(rest) = path.strip_prefix("/fabric/pygeoapi/collections/") {
        if let Some(collection) = rest.strip_suffix("/items") {
            match request.method.as_str() {
                "POST" => request.body_of_type(super::fabric::CQL_JSON)?,
                _ => only(request, "GET")?,
            }
            let serving = super::fabric::Serving {
                names,
                max_limit: shared.max_limit.load(Ordering::Relaxed),
                shuffle: shared.shuffle_seed(),
                number_matched: !shared.uncounted.load(Ordering::Relaxed),
                paging: *shared.paging.lock().unwrap_or_else(|p| p.into_inner()),
                sortable: shared.sortable.load(Ordering::Relaxed),
                selections: &shared.selections,
            };
            return Ok(super::fabric::items(
                collection,
                request,
                &shared.data,
                &shared.base_url,
                &serving,
            ));
        }
    }
    if let Some(rest) = path.strip_prefix("/tiles/") {
        only(request, "GET")?;
        return Ok(super::tiles::tile(
            rest,
            request.header("if-none-match"),
            request.header("if-modified-since"),
        ));
    }
    Err(Reply::error(404, format!("no such resource: {path}")))
}

/// The path of the flowtrace process in each naming profile.
fn flowtrace_path(names: Names) -> &'static str {
    match names {
        Names::Usgs => "/nldi/pygeoapi/processes/nldi-flowtrace/execution",
        Names::Neutral => "/nldi/processes/index-flowtrace/execution",
    }
}

fn only(request: &Request, method: &str) -> Result<(), Reply> {
    if request.method == method {
        Ok(())
    } else {
        Err(method_not_allowed(request))
    }
}

fn method_not_allowed(request: &Request) -> Reply {
    Reply::error(
        405,
        format!(
            "method {} is not allowed on {}",
            request.method, request.path
        ),
    )
}

/// Reads one request; `None` when the connection closed, broke, sent garbage
/// (answered with 400 first) or the server is stopping.
fn read_request(
    stream: &mut TcpStream,
    buffer: &mut Vec<u8>,
    shared: &Shared,
) -> Option<(Request, bool)> {
    let head_end = loop {
        if let Some(i) = find(buffer, b"\r\n\r\n") {
            break i;
        }
        if buffer.len() > MAX_HEAD {
            bad_request(stream, "the request head is too large");
            return None;
        }
        fill(stream, buffer, shared)?;
    };
    let head = String::from_utf8_lossy(&buffer[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut parts = lines.next()?.split(' ');
    let (Some(method), Some(target), Some(version)) = (parts.next(), parts.next(), parts.next())
    else {
        bad_request(stream, "malformed request line");
        return None;
    };
    let mut content_length = 0usize;
    let mut keep_alive = version == "HTTP/1.1";
    let mut headers = Vec::new();
    for line in lines {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        let (name, value) = (name.trim().to_ascii_lowercase(), value.trim());
        headers.push((name.clone(), value.to_string()));
        match name.as_str() {
            "content-length" => match value.parse() {
                Ok(n) if n <= MAX_BODY => content_length = n,
                _ => {
                    bad_request(stream, "bad or too large Content-Length");
                    return None;
                }
            },
            "connection" => keep_alive = !value.eq_ignore_ascii_case("close"),
            "transfer-encoding" => {
                bad_request(
                    stream,
                    "chunked request bodies are not supported by the mock",
                );
                return None;
            }
            _ => {}
        }
    }
    let body_start = head_end + 4;
    while buffer.len() < body_start + content_length {
        fill(stream, buffer, shared)?;
    }
    let body = buffer[body_start..body_start + content_length].to_vec();
    buffer.drain(..body_start + content_length);
    let (raw_path, raw_query) = target.split_once('?').unwrap_or((target, ""));
    let request = Request {
        method: method.to_string(),
        path: percent_decode(raw_path, false),
        raw_query: raw_query.to_string(),
        query: raw_query
            .split('&')
            .filter(|p| !p.is_empty())
            .map(|p| {
                let (k, v) = p.split_once('=').unwrap_or((p, ""));
                (percent_decode(k, true), percent_decode(v, true))
            })
            .collect(),
        headers,
        body,
    };
    Some((request, keep_alive))
}

/// Reads more bytes; `None` on EOF, error or stop.
fn fill(stream: &mut TcpStream, buffer: &mut Vec<u8>, shared: &Shared) -> Option<()> {
    let mut chunk = [0u8; 16 * 1024];
    loop {
        if shared.stop.load(Ordering::SeqCst) {
            return None;
        }
        match stream.read(&mut chunk) {
            Ok(0) => return None,
            Ok(n) => {
                buffer.extend_from_slice(&chunk[..n]);
                return Some(());
            }
            Err(e)
                if matches!(
                    e.kind(),
                    ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted
                ) => {}
            Err(_) => return None,
        }
    }
}

fn bad_request(stream: &mut TcpStream, why: &str) {
    let reply = Reply::error(400, why);
    let mut out = Out {
        stream,
        pacer: None,
    };
    write_reply(&mut out, &reply, reply.body.len(), &reply.body, false);
}

/// Where answers are written: the connection, through the link when one is set.
struct Out<'a> {
    stream: &'a mut TcpStream,
    pacer: Option<&'a Pacer>,
}

impl Out<'_> {
    fn send(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        match self.pacer {
            Some(pacer) => pacer.write(self.stream, bytes),
            None => self.stream.write_all(bytes),
        }
    }
}

/// Writes the status line, headers with `Content-Length: declared`, and
/// `body`; the bytes written, `None` when the connection broke.
fn write_reply(
    out: &mut Out,
    reply: &Reply,
    declared: usize,
    body: &[u8],
    keep_alive: bool,
) -> Option<u64> {
    let reason = match reply.status {
        200 => "OK",
        304 => "Not Modified",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        415 => "Unsupported Media Type",
        408 => "Request Timeout",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => "Status",
    };
    let mut head = format!(
        "HTTP/1.1 {} {reason}\r\nContent-Type: {}\r\nContent-Length: {declared}\r\nConnection: {}\r\n",
        reply.status,
        reply.content_type,
        if keep_alive { "keep-alive" } else { "close" }
    );
    for (name, value) in &reply.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    out.send(head.as_bytes())
        .and_then(|_| out.send(body))
        .and_then(|_| out.stream.flush())
        .ok()
        .map(|_| (head.len() + body.len()) as u64)
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Decodes `%XX` (and `+` as space in query components); bad escapes stay as they are.
fn percent_decode(s: &str, plus_is_space: bool) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' if i + 2 < bytes.len() => {
                let hex = |b: u8| (b as char).to_digit(16).map(|d| d as u8);
                match (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                    (Some(high), Some(low)) => {
                        out.push(high * 16 + low);
                        i += 3;
                        continue;
                    }
                    _ => out.push(b'%'),
                }
            }
            b'+' if plus_is_space => out.push(b' '),
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::percent_decode;

    #[test]
    fn query_components_decode() {
        assert_eq!(
            percent_decode("streamorde%20%3E%202", true),
            "streamorde > 2"
        );
        assert_eq!(percent_decode("a+b%2C", true), "a b,");
        assert_eq!(percent_decode("a+b", false), "a+b");
        assert_eq!(percent_decode("100%", true), "100%");
        assert_eq!(percent_decode("%zz", true), "%zz");
    }
}
