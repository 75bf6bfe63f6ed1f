//! `hydroplot-mock`: the loopback mock services as a process, for the C tests
//! and examples. Prints `listening <base_url>` as its first stdout line, then
//! serves until stdin reaches EOF or the process is killed.
//!
//! Usage: `hydroplot-mock [--port N]` (default 0: a free port).

use std::io::{Read, Write};

fn main() {
    let mut args = std::env::args().skip(1);
    let mut port = 0u16;
    while let Some(arg) = args.next() {
        match (arg.as_str(), args.next().map(|v| v.parse::<u16>())) {
            ("--port", Some(Ok(p))) => port = p,
            _ => {
                eprintln!("usage: hydroplot-mock [--port N]");
                std::process::exit(2);
            }
        }
    }
    let server = match hydroplot::mock::MockServer::start_on(port) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("hydroplot-mock: {e}");
            std::process::exit(1);
        }
    };
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
