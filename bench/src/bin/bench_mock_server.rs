//! The loopback mock services over a generated benchmark GeoPackage, as a
//! process (the benchmark client's memory is then its own).
//!
//! Usage: `bench_mock_server FILE.gpkg [--port N]`. Prints `listening <base_url>`,
//! then reads commands on stdin, one per line, until EOF:
//! - `log PATH`: writes the requests received since the last `log` to PATH as
//!   JSON lines `{"method","target","body"}` (target = path?query) and forgets them;
//!   prints `logged N`.

use hydroplot_mock::MockServer;
use std::io::{BufRead, Write};

fn main() {
    let mut args = std::env::args().skip(1);
    let file = args
        .next()
        .expect("usage: bench_mock_server FILE.gpkg [--port N]");
    let port = match (args.next().as_deref(), args.next()) {
        (Some("--port"), Some(p)) => p.parse().expect("--port N"),
        _ => 0,
    };
    let t = std::time::Instant::now();
    let server = MockServer::start_with_data(&[file.clone().into()], port)
        .unwrap_or_else(|e| panic!("cannot serve {file}: {e}"));
    eprintln!(
        "bench_mock_server: {file} loaded in {:.1} s",
        t.elapsed().as_secs_f64()
    );
    let mut stdout = std::io::stdout();
    writeln!(stdout, "listening {}", server.base_url()).unwrap();
    stdout.flush().unwrap();
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        if let Some(path) = line.strip_prefix("log ") {
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
            std::fs::write(path.trim(), out).expect("writing the request log");
            writeln!(stdout, "logged {}", requests.len()).unwrap();
            stdout.flush().unwrap();
        }
    }
}
