//! Proxies: the `proxy` option (a URL with optional credentials, or `none`),
//! else `HTTPS_PROXY` / `HTTP_PROXY` / `ALL_PROXY`; `NO_PROXY` honoured both
//! ways. A tiny CONNECT proxy on 127.0.0.1 counts the tunnels it opens and
//! the `Proxy-Authorization` it was sent. One test, so no other thread of
//! this process reads the environment while it changes.

use hydroplot::config::Config;
use hydroplot::services::index;
use hydroplot::{Context, Error};
use hydroplot_mock::{self as mock, MockServer};
use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

/// One CONNECT the proxy received: its target and `Proxy-Authorization`.
#[derive(Debug, Clone, PartialEq)]
struct Tunnel {
    target: String,
    authorization: Option<String>,
}

/// A CONNECT proxy: a thread per tunnel; with `required` set, tunnels
/// without that `Proxy-Authorization` get a 407. Stops when dropped.
struct ConnectProxy {
    port: u16,
    tunnels: Arc<Mutex<Vec<Tunnel>>>,
    stop: Arc<AtomicBool>,
    acceptor: Option<JoinHandle<()>>,
}

impl ConnectProxy {
    fn start(required: Option<&str>) -> ConnectProxy {
        let listener = TcpListener::bind(("127.0.0.1", 0)).unwrap();
        let port = listener.local_addr().unwrap().port();
        let tunnels = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let required = required.map(str::to_string);
        let acceptor = {
            let (tunnels, stop) = (tunnels.clone(), stop.clone());
            std::thread::spawn(move || {
                for client in listener.incoming() {
                    if stop.load(Ordering::SeqCst) {
                        break;
                    }
                    let Ok(client) = client else { continue };
                    let (tunnels, required) = (tunnels.clone(), required.clone());
                    std::thread::spawn(move || tunnel(client, &tunnels, required.as_deref()));
                }
            })
        };
        ConnectProxy {
            port,
            tunnels,
            stop,
            acceptor: Some(acceptor),
        }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn tunnels(&self) -> Vec<Tunnel> {
        self.tunnels.lock().unwrap().clone()
    }
}

impl Drop for ConnectProxy {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(("127.0.0.1", self.port));
        if let Some(a) = self.acceptor.take() {
            let _ = a.join();
        }
    }
}

/// Reads the CONNECT head byte by byte (nothing past it), records it,
/// answers, then copies both ways until either side closes.
fn tunnel(mut client: TcpStream, tunnels: &Mutex<Vec<Tunnel>>, required: Option<&str>) {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") && head.len() < 16 * 1024 {
        if client.read(&mut byte).unwrap_or(0) == 0 {
            return;
        }
        head.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&head).into_owned();
    let mut lines = head.lines();
    let target = match lines.next().map(|l| l.split(' ').collect::<Vec<_>>()) {
        Some(parts) if parts.len() == 3 && parts[0] == "CONNECT" => parts[1].to_string(),
        _ => {
            let _ = client.write_all(b"HTTP/1.1 405 Method Not Allowed\r\n\r\n");
            return;
        }
    };
    let authorization = lines
        .filter_map(|l| l.split_once(':'))
        .find(|(k, _)| k.trim().eq_ignore_ascii_case("proxy-authorization"))
        .map(|(_, v)| v.trim().to_string());
    tunnels.lock().unwrap().push(Tunnel {
        target: target.clone(),
        authorization: authorization.clone(),
    });
    if required.is_some() && authorization.as_deref() != required {
        let _ = client
            .write_all(b"HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 0\r\n\r\n");
        return;
    }
    let Ok(upstream) = TcpStream::connect(&target) else {
        let _ = client.write_all(b"HTTP/1.1 502 Bad Gateway\r\n\r\n");
        return;
    };
    if client
        .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
        .is_err()
    {
        return;
    }
    let (mut up_w, mut client_r) = (upstream.try_clone().unwrap(), client.try_clone().unwrap());
    let up = std::thread::spawn(move || {
        let _ = std::io::copy(&mut client_r, &mut up_w);
        let _ = up_w.shutdown(Shutdown::Write);
    });
    let (mut up_r, mut client_w) = (upstream, client);
    let _ = std::io::copy(&mut up_r, &mut client_w);
    let _ = client_w.shutdown(Shutdown::Both);
    let _ = up.join();
}

const PROXY_VARIABLES: [&str; 8] = [
    "ALL_PROXY",
    "all_proxy",
    "HTTPS_PROXY",
    "https_proxy",
    "HTTP_PROXY",
    "http_proxy",
    "NO_PROXY",
    "no_proxy",
];

/// A mock context with `proxy` set (when given) and exactly `vars` in the
/// environment; its one feature request's outcome.
fn fetch(server: &MockServer, proxy: Option<&str>, vars: &[(&str, &str)]) -> hydroplot::Result<()> {
    for var in PROXY_VARIABLES {
        std::env::remove_var(var);
    }
    let mut config: Config = mock::context(server).config;
    config.retries = 0;
    for (var, value) in vars {
        std::env::set_var(var, value);
    }
    if let Some(p) = proxy {
        config.set("proxy", p).unwrap();
    }
    let ctx = Context::new(config)?;
    index::feature(&ctx, "comid", "13293454").map(|_| ())
}

#[test]
fn requests_go_through_the_proxy_asked_for_and_no_proxy_bypasses_it() {
    let _environment = crate::environment();
    let server = MockServer::start();
    let target = server.base_url().trim_start_matches("http://").to_string();
    let proxy = ConnectProxy::start(None);
    let through = |n: usize| {
        let tunnels = proxy.tunnels();
        assert_eq!(tunnels.len(), n, "{tunnels:?}");
        assert!(tunnels.iter().all(|t| t.target == target), "{tunnels:?}");
    };

    // No proxy anywhere: direct.
    fetch(&server, None, &[]).unwrap();
    through(0);
    // The option.
    fetch(&server, Some(&proxy.url()), &[]).unwrap();
    through(1);
    // The environment, as curl and requests read it.
    fetch(&server, None, &[("HTTPS_PROXY", &proxy.url())]).unwrap();
    through(2);
    fetch(&server, None, &[("HTTP_PROXY", &proxy.url())]).unwrap();
    through(3);
    // NO_PROXY bypasses the environment's proxy and the option's.
    let no_proxy = [
        ("HTTPS_PROXY", proxy.url()),
        ("NO_PROXY", "127.0.0.1".into()),
    ];
    let no_proxy: Vec<(&str, &str)> = no_proxy.iter().map(|(k, v)| (*k, v.as_str())).collect();
    fetch(&server, None, &no_proxy).unwrap();
    through(3);
    fetch(
        &server,
        Some(&proxy.url()),
        &[("no_proxy", "localhost,127.0.0.1")],
    )
    .unwrap();
    through(3);
    // proxy=none ignores the environment.
    fetch(&server, Some("none"), &[("HTTPS_PROXY", &proxy.url())]).unwrap();
    through(3);
    assert_eq!(server.requests().len(), 7, "every request reached the mock");

    // As curl: HTTPS_PROXY before ALL_PROXY (nothing listens on port 9);
    // NO_PROXY's entries trimmed.
    let closed = "http://127.0.0.1:9";
    fetch(
        &server,
        None,
        &[("ALL_PROXY", closed), ("HTTPS_PROXY", &proxy.url())],
    )
    .unwrap();
    through(4);
    let spaced = [
        ("HTTPS_PROXY", closed),
        ("NO_PROXY", "example.com, 127.0.0.1"),
    ];
    fetch(&server, None, &spaced).unwrap();
    through(4);
    // A proxy that cannot be used is an error naming its variable, never a
    // silent direct connection.
    for (var, value, says) in [
        ("ALL_PROXY", "socks5://127.0.0.1:9", "SOCKS"),
        ("HTTPS_PROXY", "http://[bad", "not a usable proxy URL"),
    ] {
        let e = fetch(&server, None, &[(var, value)]).unwrap_err();
        assert!(matches!(e, Error::InvalidArgument(_)), "{e:?}");
        assert!(
            e.to_string().contains(var) && e.to_string().contains(says),
            "{e}"
        );
    }
    assert_eq!(
        server.requests().len(),
        9,
        "no request went around a bad proxy"
    );

    // Credentials: sent to the proxy, never shown in a message.
    let guarded = ConnectProxy::start(Some("Basic YWdlbnQ6czNjcmV0")); // agent:s3cret
    let with = |user_password: &str| {
        let url = guarded
            .url()
            .replace("://", &format!("://{user_password}@"));
        fetch(&server, Some(&url), &[])
    };
    with("agent:s3cret").unwrap();
    let e = with("agent:hunter2").unwrap_err();
    assert!(matches!(e, Error::Network(_)), "{e:?}");
    assert!(!e.to_string().contains("hunter2"), "{e}");
    let tunnels = guarded.tunnels();
    assert_eq!(tunnels.len(), 2, "{tunnels:?}");
    assert_eq!(
        tunnels[0].authorization.as_deref(),
        Some("Basic YWdlbnQ6czNjcmV0")
    );
    assert_eq!(
        server.requests().len(),
        10,
        "the refused tunnel reached nothing"
    );
    // A refusal is not retried: the same wrong password again could lock
    // an agency account.
    let mut config: Config = mock::context(&server).config;
    config.retries = 2;
    config
        .set("proxy", &guarded.url().replace("://", "://agent:hunter2@"))
        .unwrap();
    let e = index::feature(&Context::new(config).unwrap(), "comid", "13293454").unwrap_err();
    assert!(
        e.to_string().contains("407") && e.to_string().contains("credentials"),
        "{e}"
    );
    assert_eq!(
        guarded.tunnels().len(),
        3,
        "one tunnel asked for, not three"
    );
    for var in PROXY_VARIABLES {
        std::env::remove_var(var);
    }
}
