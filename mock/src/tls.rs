//! The mock over HTTPS: a TLS terminator in front of the plain server, as a
//! real deployment puts nginx before pygeoapi. It holds the certificate the
//! test made (see [`TlsIdentity`]), counts the connections it accepts (a
//! refused certificate ends the connection in the handshake, so the plain
//! server never sees a request), and relays the decrypted bytes both ways.

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::{ServerConfig, ServerConnection};
use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

/// A server certificate chain (leaf first) and its private key, both PEM.
#[derive(Debug, Clone)]
pub struct TlsIdentity {
    pub cert_chain_pem: String,
    pub key_pem: String,
}

/// The running TLS front of a mock server; it stops when dropped.
pub(super) struct Front {
    port: u16,
    stop: Arc<AtomicBool>,
    connections: Arc<AtomicUsize>,
    acceptor: Option<JoinHandle<()>>,
}

fn server_config(identity: &TlsIdentity) -> ServerConfig {
    let certs: Vec<CertificateDer<'static>> =
        CertificateDer::pem_slice_iter(identity.cert_chain_pem.as_bytes())
            .collect::<Result<_, _>>()
            .expect("a PEM certificate chain");
    let key = PrivateKeyDer::from_pem_slice(identity.key_pem.as_bytes()).expect("a PEM key");
    ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .expect("TLS 1.2 and 1.3")
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .expect("a certificate that matches its key")
}

impl Front {
    /// Accepts TLS connections on `listener` with `identity` and relays
    /// each, decrypted, to the plain server on `backend_port`. Panics when
    /// the identity is not a usable certificate and key.
    /// How many connections this front accepted.
    pub(super) fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }

    pub(super) fn spawn(listener: TcpListener, identity: &TlsIdentity, backend_port: u16) -> Front {
        let config = Arc::new(server_config(identity));
        let port = listener.local_addr().map_or(0, |a| a.port());
        let stop = Arc::new(AtomicBool::new(false));
        let connections = Arc::new(AtomicUsize::new(0));
        let acceptor = {
            let (stop, connections) = (stop.clone(), connections.clone());
            std::thread::spawn(move || {
                for stream in listener.incoming() {
                    if stop.load(Ordering::SeqCst) {
                        break;
                    }
                    let Ok(stream) = stream else { continue };
                    connections.fetch_add(1, Ordering::SeqCst);
                    let config = config.clone();
                    std::thread::spawn(move || {
                        let _ = relay(stream, config, backend_port);
                    });
                }
            })
        };
        Front {
            port,
            stop,
            connections,
            acceptor: Some(acceptor),
        }
    }
}

impl Drop for Front {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the blocking accept so it sees the flag.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
        if let Some(acceptor) = self.acceptor.take() {
            let _ = acceptor.join();
        }
    }
}

type Shared = Arc<Mutex<ServerConnection>>;

/// Completes the handshake, then relays until either side closes.
fn relay(client: TcpStream, config: Arc<ServerConfig>, backend_port: u16) -> io::Result<()> {
    let mut connection = ServerConnection::new(config).map_err(io::Error::other)?;
    let mut client = client;
    while connection.is_handshaking() {
        connection.complete_io(&mut client)?;
    }
    let backend = TcpStream::connect(("127.0.0.1", backend_port))?;
    let connection: Shared = Arc::new(Mutex::new(connection));
    let down = {
        let (connection, from, to) = (
            connection.clone(),
            backend.try_clone()?,
            client.try_clone()?,
        );
        std::thread::spawn(move || {
            let _ = backend_to_client(&connection, from, &to);
            let _ = to.shutdown(Shutdown::Both);
        })
    };
    let result = client_to_backend(&connection, &client, &backend);
    let _ = backend.shutdown(Shutdown::Both);
    let _ = down.join();
    result
}

fn lock(connection: &Shared) -> std::sync::MutexGuard<'_, ServerConnection> {
    connection.lock().unwrap_or_else(|p| p.into_inner())
}

/// Decrypts what the client sends and passes it to the plain server. The
/// first round passes what came with the end of the handshake (a TLS 1.3
/// client sends its request right behind its `Finished`).
fn client_to_backend(
    connection: &Shared,
    client: &TcpStream,
    backend: &TcpStream,
) -> io::Result<()> {
    let mut buffer = [0u8; 16 * 1024];
    let mut received = 0;
    loop {
        let mut plain = Vec::new();
        let mut closed = false;
        {
            let mut c = lock(connection);
            let mut rest = &buffer[..received];
            loop {
                c.read_tls(&mut rest)?;
                let state = c.process_new_packets().map_err(io::Error::other)?;
                let mut chunk = vec![0; state.plaintext_bytes_to_read()];
                c.reader().read_exact(&mut chunk)?;
                plain.extend_from_slice(&chunk);
                closed |= state.peer_has_closed();
                if rest.is_empty() {
                    break;
                }
            }
            while c.wants_write() {
                c.write_tls(&mut &*client)?;
            }
        }
        (&*backend).write_all(&plain)?;
        if closed {
            return Ok(());
        }
        received = (&*client).read(&mut buffer)?;
        if received == 0 {
            return Ok(());
        }
    }
}

/// Encrypts what the plain server answers and sends it to the client.
fn backend_to_client(
    connection: &Shared,
    mut backend: TcpStream,
    client: &TcpStream,
) -> io::Result<()> {
    let mut buffer = [0u8; 16 * 1024];
    loop {
        let n = backend.read(&mut buffer)?;
        let mut c = lock(connection);
        if n == 0 {
            c.send_close_notify();
        } else {
            c.writer().write_all(&buffer[..n])?;
        }
        while c.wants_write() {
            c.write_tls(&mut &*client)?;
        }
        if n == 0 {
            return Ok(());
        }
    }
}
