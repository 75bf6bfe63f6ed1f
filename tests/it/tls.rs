//! TLS against the mock served over HTTPS by a private certificate authority
//! made in the test: the `ca_bundle` option trusts it, and a refused
//! certificate fails at once (one connection, no retry) with a message that
//! names the host, the reason and the remedy. The environment variables are
//! in `tests/process/tls_env.rs` (a process of their own).

use crate::private_ca;

use hydroplot::services::index;
use hydroplot::{Context, Error};
use hydroplot_mock::{self as mock, MockServer};
use private_ca::{temp_dir, PrivateCa};

/// The mock's context with `ca_bundle` set, when given.
fn context(server: &MockServer, ca_bundle: Option<&std::path::Path>) -> Context {
    let mut config = mock::context(server).config;
    if let Some(path) = ca_bundle {
        config.set("ca_bundle", path.to_str().unwrap()).unwrap();
    }
    Context::new(config).unwrap()
}

#[test]
fn the_ca_bundle_option_trusts_a_private_root() {
    let ca = PrivateCa::new();
    let server = MockServer::start_https(&ca.server(&["127.0.0.1"]));
    assert!(server.base_url().starts_with("https://127.0.0.1:"));
    let path = ca.write(&temp_dir("option"), "agency-root.pem");
    let ctx = context(&server, Some(&path));
    let f = index::feature(&ctx, "comid", "13293454").unwrap();
    assert_eq!(f.get_i64("comid"), Some(13293454));
    assert_eq!(server.requests().len(), 1);
}

/// One refused handshake: a network error after one connection at the
/// HTTPS front and no request behind it (no retry), whose message holds
/// every one of `needles` and no "gave up".
fn assert_refused(
    identity: hydroplot_mock::TlsIdentity,
    ca_bundle: Option<&std::path::Path>,
    needles: &[&str],
) {
    let server = MockServer::start_https(&identity);
    let ctx = context(&server, ca_bundle);
    assert_eq!(ctx.config.retries, 2, "the mock context retries");
    let e = index::feature(&ctx, "comid", "13293454").unwrap_err();
    let Error::Network(message) = e else {
        panic!("a certificate error is a network error, got {e:?}")
    };
    let counts = (server.tls_connections(), server.requests().len());
    assert_eq!(counts, (1, 0), "{message}");
    for needle in needles {
        assert!(
            message.contains(needle),
            "{needle:?} missing from: {message}"
        );
    }
    assert!(!message.contains("gave up"), "{message}");
}

#[test]
fn an_unknown_issuer_fails_once_and_says_to_name_the_bundle() {
    let ca = PrivateCa::new();
    let needles = ["127.0.0.1", "unknown issuer", "ca_bundle", "SSL_CERT_FILE"];
    assert_refused(ca.server(&["127.0.0.1"]), None, &needles);
}

#[test]
fn an_expired_certificate_is_named_as_expired() {
    let ca = PrivateCa::new();
    let path = ca.write(&temp_dir("expired"), "agency-root.pem");
    let identity = ca.expired_server(&["127.0.0.1"]);
    assert_refused(identity, Some(&path), &["expired", "clock"]);
}

#[test]
fn a_certificate_for_another_host_is_named_as_the_wrong_name() {
    let ca = PrivateCa::new();
    let path = ca.write(&temp_dir("name"), "agency-root.pem");
    let identity = ca.server(&["tiles.example.org"]);
    assert_refused(identity, Some(&path), &["wrong name", "127.0.0.1"]);
}

#[test]
fn a_bundle_without_certificates_is_refused_before_any_request() {
    let dir = temp_dir("bad-bundle");
    let path = dir.join("notes.txt");
    std::fs::write(&path, "not a certificate\n").unwrap();
    let mut config = hydroplot::config::Config::default();
    config.set("ca_bundle", path.to_str().unwrap()).unwrap();
    let e = Context::new(config).err().expect("an unusable bundle");
    assert!(matches!(e, Error::InvalidArgument(_)), "{e:?}");
    let message = e.to_string();
    assert!(
        message.contains("notes.txt") && message.contains("option ca_bundle"),
        "{message}"
    );
    let missing = hydroplot::config::Config::default()
        .set("ca_bundle", dir.join("absent.pem").to_str().unwrap())
        .unwrap_err();
    assert!(missing.to_string().contains("ca_bundle"), "{missing}");
}
