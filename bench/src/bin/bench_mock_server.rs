//! The loopback mock services over a generated benchmark GeoPackage, as a
//! process (the benchmark client's memory is then its own).
//!
//! Usage: `bench_mock_server FILE.gpkg [--port N] [--link RATE,DELAY] [--gzip]`:
//! `--link 100mbit,40ms` sends every answer through a shaped link (one
//! bandwidth shared by all connections, the delay from each request's
//! arrival to its answer's first byte; `MockServer::set_link`), `--gzip`
//! compresses answers for clients that accept it (off by default, as
//! pygeoapi). Prints `listening <base_url>`, then reads commands on stdin,
//! one per line, until EOF, and answers each with one line:
//! - `log PATH`: writes the requests received since the last `log` to PATH as
//!   JSON lines `{"method","target","body"}` (target = path?query) and forgets them;
//!   prints `logged N`.
//! - `timeline PATH`: writes how each answer since the last `timeline` went
//!   out to PATH as JSON lines `{"method","target","arrived","first_byte",
//!   "done","bytes"}` (seconds since the server started; bytes on the wire,
//!   head and body after gzip) and forgets them; prints `timeline N`.
//! - `link RATE,DELAY` or `link off`: shapes answers from now on, or stops;
//!   prints `link <setting>`.
//! - `gzip on` or `gzip off`: prints `gzip <setting>`.

use hydroplot_bench::transfer_json;
use hydroplot_mock::{Link, MockServer};
use std::io::{BufRead, Write};

const USAGE: &str = "usage: bench_mock_server FILE.gpkg [--port N] [--link RATE,DELAY] [--gzip]";

fn main() {
    let mut args = std::env::args().skip(1);
    let file = args.next().expect(USAGE);
    let (mut port, mut link, mut gzip) = (0, None, false);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--port" => port = args.next().and_then(|p| p.parse().ok()).expect(USAGE),
            "--link" => link = Some(Link::parse(&args.next().expect(USAGE)).expect(USAGE)),
            "--gzip" => gzip = true,
            _ => panic!("{USAGE}"),
        }
    }
    let t = std::time::Instant::now();
    let server = MockServer::start_with_data(&[file.clone().into()], port)
        .unwrap_or_else(|e| panic!("cannot serve {file}: {e}"));
    server.set_link(link);
    server.set_gzip(gzip);
    eprintln!(
        "bench_mock_server: {file} loaded in {:.1} s",
        t.elapsed().as_secs_f64()
    );
    let mut stdout = std::io::stdout();
    writeln!(stdout, "listening {}", server.base_url()).unwrap();
    stdout.flush().unwrap();
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        let answer = match line.trim().split_once(' ') {
            Some(("log", path)) => write_log(&server, path),
            Some(("timeline", path)) => write_timeline(&server, path),
            Some(("link", "off")) => {
                server.set_link(None);
                "link off".to_string()
            }
            Some(("link", spec)) => match Link::parse(spec) {
                Ok(link) => {
                    server.set_link(Some(link));
                    format!("link {spec}")
                }
                Err(e) => format!("error {e}"),
            },
            Some(("gzip", on @ ("on" | "off"))) => {
                server.set_gzip(on == "on");
                format!("gzip {on}")
            }
            _ => format!("error unknown command {line:?}"),
        };
        writeln!(stdout, "{answer}").unwrap();
        stdout.flush().unwrap();
    }
}

fn write_log(server: &MockServer, path: &str) -> String {
    let requests = server.requests();
    server.clear_requests();
    let mut out = String::new();
    for r in &requests {
        let target = match r.query.as_str() {
            "" => r.path.clone(),
            q => format!("{}?{q}", r.path),
        };
        let row = serde_json::json!({"method": r.method, "target": target, "body": r.body});
        out.push_str(&row.to_string());
        out.push('\n');
    }
    std::fs::write(path, out).expect("writing the request log");
    format!("logged {}", requests.len())
}

fn write_timeline(server: &MockServer, path: &str) -> String {
    let transfers = server.transfers();
    server.clear_transfers();
    let lines: Vec<String> = transfers
        .iter()
        .map(|t| transfer_json(t).to_string() + "\n")
        .collect();
    std::fs::write(path, lines.concat()).expect("writing the timeline");
    format!("timeline {}", transfers.len())
}
