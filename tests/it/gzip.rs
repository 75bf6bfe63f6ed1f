//! gzip: the client asks for it (`Accept-Encoding: gzip`), decodes what the
//! mock compresses (as pygeoapi does with `server.gzip` on), and counts its
//! size cap on the decoded body, so a small compressed answer cannot decode
//! to any size.

use flate2::read::GzDecoder;
use flate2::write::GzEncoder;
use flate2::Compression;
use hydroplot::http::{HttpClient, Service};
use hydroplot::{Context, Error};
use hydroplot_mock::{self as mock, MockServer};
use std::io::{Read, Write};
use std::net::TcpStream;

/// The basin of comid 13293970: a polygon of some kilobytes.
fn basin_url(server: &MockServer) -> String {
    format!("{}/linked-data/comid/13293970/basin", server.index_url())
}

/// The answer's head and body to a GET sent by hand with `Accept-Encoding: gzip`.
fn raw_get(server: &MockServer, url: &str) -> (String, Vec<u8>) {
    let path = url.trim_start_matches(&server.base_url());
    let host = server.base_url().trim_start_matches("http://").to_string();
    let mut stream = TcpStream::connect(&host).unwrap();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {host}\r\nAccept-Encoding: gzip\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).unwrap();
    let split = answer.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    let head = String::from_utf8_lossy(&answer[..split]).to_ascii_lowercase();
    (head, answer[split + 4..].to_vec())
}

#[test]
fn the_client_asks_for_gzip_and_decodes_it() {
    let server = MockServer::start();
    let ctx = mock::context(&server);
    let url = basin_url(&server);
    let plain = ctx.get(Service::Index, &url).unwrap().body;
    server.set_gzip(true);
    // The mock compresses when asked: checked by hand, not through the client.
    let (head, body) = raw_get(&server, &url);
    assert!(head.contains("content-encoding: gzip"), "{head}");
    let mut decoded = Vec::new();
    GzDecoder::new(body.as_slice())
        .read_to_end(&mut decoded)
        .unwrap();
    assert_eq!(decoded, plain);
    assert!(body.len() < plain.len());

    server.clear_requests();
    let response = ctx.get(Service::Index, &url).unwrap();
    assert_eq!(response.body, plain, "the client decodes the gzip body");
    let requests = server.requests();
    let asked = requests[0]
        .headers
        .iter()
        .find(|(k, _)| k == "accept-encoding")
        .map(|(_, v)| v.clone());
    assert!(asked.is_some_and(|v| v.contains("gzip")), "{requests:?}");
}

#[test]
fn the_size_cap_counts_the_decoded_body() {
    let server = MockServer::start();
    let url = basin_url(&server);
    let plain = mock::context(&server)
        .get(Service::Index, &url)
        .unwrap()
        .body;
    let limit = plain.len() as u64 - 1;
    let mut encoder = GzEncoder::new(Vec::new(), Compression::default());
    encoder.write_all(&plain).unwrap();
    let compressed = encoder.finish().unwrap();
    assert!(
        (compressed.len() as u64) < limit / 2,
        "the wire size is far below the cap"
    );

    server.set_gzip(true);
    let capped = |limit: u64| {
        let config = mock::context(&server).config;
        let mut ctx = Context::new(config.clone()).unwrap();
        ctx.http = HttpClient::new(&config)
            .unwrap()
            .with_response_limit(limit)
            .into();
        ctx.get(Service::Index, &url)
    };
    let e = capped(limit).expect_err("a decoded body over the cap is refused");
    assert!(matches!(e, Error::Service(_)), "{e:?}");
    assert!(
        e.to_string().contains(&format!("{limit}-byte limit")),
        "{e}"
    );
    assert_eq!(capped(limit + 1).unwrap().body, plain);
}
