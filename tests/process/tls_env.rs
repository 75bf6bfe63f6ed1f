//! Where a user's agency root comes from besides the `ca_bundle` option:
//! `HYDROPLOT_CA_BUNDLE` (the option's variable), else every one of
//! `SSL_CERT_FILE`, `REQUESTS_CA_BUNDLE`, `CURL_CA_BUNDLE` set (the last
//! two, set alone, replacing the other roots as in requests and curl), and the
//! system store (pointed at a temp
//! directory through `SSL_CERT_DIR`, never /etc). One test, so no other
//! thread of this process reads the environment while it changes.

use crate::private_ca;

use hydroplot::config::Config;
use hydroplot::ffi::context::*;
use hydroplot::ffi::hydroplot_status::HYDROPLOT_OK;
use hydroplot::services::index;
use hydroplot::Context;
use hydroplot_mock::{self as mock, MockServer};
use private_ca::{temp_dir, PrivateCa};

const VARIABLES: [&str; 5] = [
    "HYDROPLOT_CA_BUNDLE",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "REQUESTS_CA_BUNDLE",
    "CURL_CA_BUNDLE",
];

/// Whether the feature request over HTTPS succeeds with exactly `vars` set,
/// the context made as `hydroplot_context_new` makes it (`Config::from_env`).
fn trusted_with(server: &MockServer, vars: &[(&str, &std::path::Path)]) -> bool {
    for var in VARIABLES {
        std::env::remove_var(var);
    }
    for (var, value) in vars {
        std::env::set_var(var, value);
    }
    let mock = mock::context(server).config;
    let config = Config {
        retries: 0,
        ..Config::from_env().unwrap()
    };
    let config = Config {
        index_url: mock.index_url,
        fabric_url: mock.fabric_url,
        ..config
    };
    let ctx = Context::new(config).unwrap();
    match index::feature(&ctx, "comid", "13293454") {
        Ok(_) => true,
        Err(e) => {
            assert!(e.to_string().contains("unknown issuer"), "{e}");
            false
        }
    }
}

#[test]
fn the_environment_names_the_agency_root_like_curl_and_requests() {
    let _environment = crate::environment();
    let ca = PrivateCa::new();
    let other = PrivateCa::named("Another Agency Root");
    let server = MockServer::start_https(&ca.server(&["127.0.0.1"]));
    let dir = temp_dir("env");
    let root = ca.write(&dir, "agency-root.pem");
    let wrong = other.write(&dir, "other-root.pem");
    let store = dir.join("store");
    ca.write(&store, "agency-root.crt");

    assert!(
        !trusted_with(&server, &[]),
        "the private root is trusted unasked"
    );
    for var in [
        "HYDROPLOT_CA_BUNDLE",
        "SSL_CERT_FILE",
        "REQUESTS_CA_BUNDLE",
        "CURL_CA_BUNDLE",
    ] {
        assert!(
            trusted_with(&server, &[(var, &root)]),
            "{var} is not honoured"
        );
    }
    assert!(
        trusted_with(&server, &[("SSL_CERT_DIR", &store)]),
        "a root added to the system store is not trusted"
    );
    // REQUESTS_CA_BUNDLE or CURL_CA_BUNDLE set alone is the whole trust
    // store, as in requests and curl: the system store's root is not trusted.
    for var in ["REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE"] {
        assert!(
            !trusted_with(&server, &[("SSL_CERT_DIR", &store), (var, &wrong)]),
            "{var} set alone adds to the roots instead of replacing them"
        );
    }
    // SSL_CERT_FILE is read as OpenSSL reads it: the system store stays.
    assert!(trusted_with(
        &server,
        &[("SSL_CERT_DIR", &store), ("SSL_CERT_FILE", &wrong)]
    ));
    // Every variable set counts: conda sets SSL_CERT_FILE to its own
    // bundle while the agency root is in REQUESTS_CA_BUNDLE.
    assert!(trusted_with(
        &server,
        &[("SSL_CERT_FILE", &wrong), ("REQUESTS_CA_BUNDLE", &root)]
    ));
    assert!(trusted_with(
        &server,
        &[("REQUESTS_CA_BUNDLE", &wrong), ("CURL_CA_BUNDLE", &root)]
    ));
    assert!(!trusted_with(
        &server,
        &[("REQUESTS_CA_BUNDLE", &wrong), ("CURL_CA_BUNDLE", &wrong)]
    ));
    // The option (here its variable) is the one bundle when set.
    assert!(trusted_with(
        &server,
        &[("HYDROPLOT_CA_BUNDLE", &root), ("SSL_CERT_FILE", &wrong)]
    ));
    // A callback set after a variable changed keeps the context as it was
    // built: only set_option rebuilds it (and reads the variables again).
    for var in VARIABLES {
        std::env::remove_var(var);
    }
    let mut ctx = std::ptr::null_mut();
    assert_eq!(hydroplot_context_new(&mut ctx), HYDROPLOT_OK);
    std::env::set_var("SSL_CERT_FILE", dir.join("gone.pem"));
    let status = hydroplot_context_set_log_callback(ctx, Some(ignore), std::ptr::null_mut());
    assert_eq!(status, HYDROPLOT_OK);
    let status = hydroplot_context_set_progress_callback(ctx, None, std::ptr::null_mut());
    assert_eq!(status, HYDROPLOT_OK);
    hydroplot_context_free(ctx);
    for var in VARIABLES {
        std::env::remove_var(var);
    }
}

unsafe extern "C" fn ignore(
    _user: *mut std::ffi::c_void,
    _level: i32,
    _message: *const std::ffi::c_char,
) {
}
