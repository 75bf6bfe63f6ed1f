//! gzip answers, as pygeoapi gives them with `server.gzip` on (off by
//! default there and here): the body is compressed when the request's
//! `Accept-Encoding` takes gzip, with `Content-Encoding: gzip` and
//! `Vary: Accept-Encoding`.

use super::wire::{Reply, Request};
use flate2::write::GzEncoder;
use flate2::Compression;
use std::io::Write;

/// `reply` compressed when `on` and the request accepts gzip; empty bodies
/// (304s) stay as they are.
pub(super) fn compress_if_accepted(mut reply: Reply, request: &Request, on: bool) -> Reply {
    if !on || reply.body.is_empty() || !accepts_gzip(request.header("accept-encoding")) {
        return reply;
    }
    let mut encoder = GzEncoder::new(Vec::new(), Compression::default());
    if encoder.write_all(&reply.body).is_err() {
        return reply;
    }
    let Ok(body) = encoder.finish() else {
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
    use super::accepts_gzip;

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
