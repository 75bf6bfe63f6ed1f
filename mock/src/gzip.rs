//! gzip answers, as pygeoapi gives them with `server.gzip` on (off by
//! default there and here): the body is compressed when the request's
//! `Accept-Encoding` takes gzip, with `Content-Encoding: gzip` and
//! `Vary: Accept-Encoding`.
//!
//! A real service compresses on its own processors; the mock shares the
//! benchmark machine's with the client it serves, so an answer it has
//! compressed once is remembered ([`Compressed`]) and a repeated query
//! costs the mock no compression again. Items pages that differ only in
//! their `timeStamp` count as one answer: a repeated query gets the first
//! answer's time, as from a caching front of the service.

use super::wire::{Reply, Request};
use flate2::write::GzEncoder;
use flate2::Compression;
use std::collections::hash_map::DefaultHasher;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::io::Write;
use std::sync::Mutex;

/// At most this many compressed bytes are remembered.
const REMEMBERED_BYTES: usize = 512 << 20;

/// Compressed bodies by the hash and length of their plain body. Owned by
/// the server's shared state for its lifetime.
#[derive(Default)]
pub(crate) struct Compressed(Mutex<Remembered>);

/// The compressed bodies and their bytes in all.
#[derive(Default)]
struct Remembered {
    bodies: HashMap<(u64, usize), Vec<u8>>,
    bytes: usize,
}

impl Compressed {
    /// `plain` compressed, from memory when it was compressed before.
    fn get_or_compress(&self, plain: &[u8]) -> Option<Vec<u8>> {
        let mut hasher = DefaultHasher::new();
        let (before, after) = around_timestamp(plain);
        before.hash(&mut hasher);
        after.hash(&mut hasher);
        let key = (hasher.finish(), plain.len());
        if let Some(body) = self.lock().bodies.get(&key) {
            return Some(body.clone());
        }
        let mut encoder = GzEncoder::new(Vec::new(), Compression::default());
        encoder.write_all(plain).ok()?;
        let body = encoder.finish().ok()?;
        let mut memory = self.lock();
        if memory.bytes + body.len() <= REMEMBERED_BYTES && !memory.bodies.contains_key(&key) {
            memory.bytes += body.len();
            memory.bodies.insert(key, body.clone());
        }
        Some(body)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Remembered> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// `body` without the value of its `"timeStamp"` key, which items pages
/// write near their end: the bytes before and after it (all of `body` and
/// nothing when there is none).
fn around_timestamp(body: &[u8]) -> (&[u8], &[u8]) {
    const KEY: &[u8] = br#""timeStamp":""#;
    let tail = body.len().saturating_sub(256);
    let Some(at) = body[tail..].windows(KEY.len()).position(|w| w == KEY) else {
        return (body, &[]);
    };
    let value = tail + at + KEY.len();
    match body[value..].iter().position(|&b| b == b'"') {
        Some(end) => (&body[..value], &body[value + end..]),
        None => (body, &[]),
    }
}

/// `reply` compressed when `on` and the request accepts gzip; empty bodies
/// (304s) stay as they are.
pub(super) fn compress_if_accepted(
    mut reply: Reply,
    request: &Request,
    on: bool,
    memory: &Compressed,
) -> Reply {
    if !on || reply.body.is_empty() || !accepts_gzip(request.header("accept-encoding")) {
        return reply;
    }
    let Some(body) = memory.get_or_compress(&reply.body) else {
        return reply;
    };
    reply.body = body;
    reply.headers.push(("Content-Encoding", "gzip".into()));
    reply.headers.push(("Vary", "Accept-Encoding".into()));
    reply
}

/// Whether an `Accept-Encoding` value takes gzip: `gzip` or `*` listed
/// without `q=0` (RFC 9110 12.5.3).
fn accepts_gzip(header: Option<&str>) -> bool {
    header.is_some_and(|value| {
        value.split(',').any(|item| {
            let mut parts = item.split(';');
            let coding = parts.next().unwrap_or("").trim();
            let refused = parts.any(|p| {
                p.trim()
                    .strip_prefix("q=")
                    .and_then(|q| q.trim().parse::<f64>().ok())
                    == Some(0.0)
            });
            (coding.eq_ignore_ascii_case("gzip") || coding == "*") && !refused
        })
    })
}

#[cfg(test)]
mod tests {
    use super::{accepts_gzip, around_timestamp, Compressed};
    use flate2::read::GzDecoder;
    use std::io::Read;

    #[test]
    fn a_body_compressed_once_is_remembered() {
        let memory = Compressed::default();
        let plain = br#"{"type":"FeatureCollection","features":[]}"#.repeat(100);
        let first = memory.get_or_compress(&plain).unwrap();
        let mut back = Vec::new();
        GzDecoder::new(&first[..]).read_to_end(&mut back).unwrap();
        assert_eq!(back, plain);
        assert_eq!(memory.get_or_compress(&plain).unwrap(), first);
        memory.get_or_compress(b"another body").unwrap();
        // Pages made a second apart are one answer.
        let page =
            |t: &str| format!(r#"{{"features":[],"timeStamp":"{t}","type":"FeatureCollection"}}"#);
        let early = memory.get_or_compress(page("2026-11-25T12:00:00.000001Z").as_bytes());
        let late = memory.get_or_compress(page("2026-11-25T12:00:01.000001Z").as_bytes());
        assert_eq!(early, late);
        let held = memory.lock();
        assert_eq!(held.bodies.len(), 3);
        assert_eq!(
            held.bytes,
            held.bodies.values().map(Vec::len).sum::<usize>()
        );
    }

    #[test]
    fn the_timestamp_is_left_out_of_what_identifies_a_page() {
        let page = br#"{"features":[],"timeStamp":"2026-11-25T12:00:00Z","type":"x"}"#;
        assert_eq!(
            around_timestamp(page),
            (
                &br#"{"features":[],"timeStamp":""#[..],
                &br#"","type":"x"}"#[..]
            )
        );
        assert_eq!(around_timestamp(b"{}"), (&b"{}"[..], &b""[..]));
    }

    #[test]
    fn accept_encoding_lists_are_read_with_their_weights() {
        assert!(accepts_gzip(Some("gzip")));
        assert!(accepts_gzip(Some("br, GZIP;q=0.5")));
        assert!(accepts_gzip(Some("*")));
        assert!(!accepts_gzip(Some("gzip;q=0")));
        assert!(!accepts_gzip(Some("identity")));
        assert!(!accepts_gzip(None));
    }
}
