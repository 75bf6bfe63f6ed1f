//! The mock's shaped link (`MockServer::set_link`, the benchmarks' profile
//! of the real services): every byte of every answer crosses it once,
//! concurrent answers included, and each answer's timeline is recorded with
//! its first byte no earlier than the link's delay after the request.
//! Nothing here times the machine: the link is fast and the checks count
//! bytes and order recorded times.

use hydroplot_mock::{Link, MockServer};
use std::io::{Read, Write};
use std::net::TcpStream;

/// The whole answer (head and body) to a GET of `path`, read until the
/// mock closes the connection.
fn raw_get(server: &MockServer, path: &str) -> Vec<u8> {
    let host = server.base_url().trim_start_matches("http://").to_string();
    let mut stream = TcpStream::connect(&host).unwrap();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).unwrap();
    answer
}

const PATHS: [&str; 3] = [
    "/nldi/linked-data/comid/13293970/basin",
    "/fabric/pygeoapi/collections/nhdflowline_network/items?bbox=-80,35,-78,37&limit=300&sortby=comid",
    "/fabric/pygeoapi/collections/catchmentsp/items?bbox=-80,35,-78,37&limit=200&sortby=featureid",
];

#[test]
fn every_byte_of_concurrent_answers_crosses_the_link_once() {
    let server = MockServer::start();
    let link = Link::parse("10gbit,2ms").unwrap();
    server.set_link(Some(link));
    let received: Vec<Vec<u8>> = std::thread::scope(|s| {
        let readers: Vec<_> = PATHS
            .iter()
            .map(|path| s.spawn(|| raw_get(&server, path)))
            .collect();
        readers.into_iter().map(|r| r.join().unwrap()).collect()
    });
    let total: u64 = received.iter().map(|a| a.len() as u64).sum();
    assert!(received.iter().all(|a| a.starts_with(b"HTTP/1.1 200")));
    assert!(
        total > 100_000,
        "the answers are pages, not errors: {total}"
    );
    assert_eq!(server.link(), Some((link, total)));

    let transfers = server.transfers();
    assert_eq!(transfers.len(), PATHS.len());
    for path in PATHS {
        let t = transfers.iter().find(|t| t.target == path).unwrap();
        let got = &received[PATHS.iter().position(|p| *p == path).unwrap()];
        assert_eq!(t.bytes, got.len() as u64, "{path}");
        assert!(t.first_byte >= t.arrived + link.delay, "{t:?}");
        assert!(t.done >= t.first_byte, "{t:?}");
    }

    // A new link starts with nothing counted; without one nothing is paced,
    // and answers are still recorded.
    server.set_link(Some(link));
    assert_eq!(server.link(), Some((link, 0)));
    server.set_link(None);
    server.clear_transfers();
    let answer = raw_get(&server, PATHS[0]);
    assert_eq!(server.link(), None);
    let transfers = server.transfers();
    assert_eq!(transfers.len(), 1);
    assert_eq!(transfers[0].bytes, answer.len() as u64);
    assert!(transfers[0].first_byte >= transfers[0].arrived);
}
