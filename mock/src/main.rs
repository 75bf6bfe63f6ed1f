//! `hydroplot-mock`: the loopback mock services as a process, for the C tests
//! and examples. Prints `listening <base_url>` as its first stdout line, then
//! serves until stdin reaches EOF or the process is killed.
//!
//! Usage: `hydroplot-mock [--port N] [--names usgs|neutral] [--unordered]`
//! (default: a free port, the USGS names, the stored order).

use hydroplot::config::Names;
use std::io::{Read, Write};

fn main() {
    let mut args = std::env::args().skip(1);
    let (mut port, mut names, mut unordered) = (0u16, Names::Usgs, false);
    while let Some(arg) = args.next() {
        let parsed = match arg.as_str() {
            "--port" => args.next().and_then(|v| v.parse().ok()).map(|p| port = p),
            "--names" => args
                .next()
                .and_then(|v| Names::parse(&v).ok())
                .map(|n| names = n),
            "--unordered" => {
                unordered = true;
                Some(())
            }
            _ => None,
        };
        if parsed.is_none() {
            eprintln!("usage: hydroplot-mock [--port N] [--names usgs|neutral] [--unordered]");
            std::process::exit(2);
        }
    }
    let server = match hydroplot_mock::MockServer::start_on(port) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("hydroplot-mock: {e}");
            std::process::exit(1);
        }
    };
    server.set_names(names);
    server.set_unordered(unordered);
    let mut stdout = std::io::stdout();
    if writeln!(stdout, "listening {}", server.base_url())
        .and_then(|_| stdout.flush())
        .is_err()
    {
        std::process::exit(1);
    }
    // Serve until stdin closes (the parent exited or closed the pipe).
    let mut sink = [0u8; 1024];
    let mut stdin = std::io::stdin();
    while matches!(stdin.read(&mut sink), Ok(n) if n > 0) {}
    drop(server);
}
