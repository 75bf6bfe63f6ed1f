//! A loopback HTTP/1.1 server for answers the mock does not give: each
//! request is read whole (its head, and its body by `Content-Length`),
//! logged, and answered with the bytes `answer` makes of it (status line,
//! headers, body); then the connection closes. Its threads end with the
//! test process. Use it as `#[path = "support/loopback.rs"] mod loopback;`.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

/// One request as the server read it.
#[derive(Debug, Clone)]
pub struct Request {
    pub method: String,
    /// The path and query, as sent.
    pub target: String,
    pub body: Vec<u8>,
}

/// The server: its `http://127.0.0.1:<port>` and the requests so far.
pub struct Loopback {
    pub base: String,
    log: Arc<Mutex<Vec<Request>>>,
}

impl Loopback {
    pub fn start(answer: impl Fn(&Request) -> Vec<u8> + Send + Sync + 'static) -> Loopback {
        let listener = TcpListener::bind(("127.0.0.1", 0)).unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let log = Arc::new(Mutex::new(Vec::new()));
        let (requests, answer) = (log.clone(), Arc::new(answer));
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (requests, answer) = (requests.clone(), answer.clone());
                std::thread::spawn(move || {
                    let request = read_request(&stream);
                    requests.lock().unwrap().push(request.clone());
                    (&stream).write_all(&answer(&request)).unwrap();
                });
            }
        });
        Loopback { base, log }
    }

    /// The requests so far, in the order they were read.
    pub fn requests(&self) -> Vec<Request> {
        self.log.lock().unwrap().clone()
    }
}

fn read_request(stream: &TcpStream) -> Request {
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    reader.read_line(&mut line).unwrap();
    let mut parts = line.split_whitespace();
    let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    let mut length = 0;
    loop {
        let mut header = String::new();
        reader.read_line(&mut header).unwrap();
        if header.trim().is_empty() {
            break;
        }
        if let Some((k, v)) = header.split_once(':') {
            if k.eq_ignore_ascii_case("content-length") {
                length = v.trim().parse().unwrap();
            }
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).unwrap();
    Request {
        method: method.to_string(),
        target: target.to_string(),
        body,
    }
}
