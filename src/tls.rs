//! TLS trust: which root certificates a context trusts, and what a
//! certificate failure tells the user.
//!
//! The roots are the union of three sources, so an agency's root certificate
//! works wherever the user put it: Mozilla's roots compiled in (a machine
//! without a system store still works), the operating system's store
//! (`rustls-native-certs`: the distribution's bundle, or `SSL_CERT_FILE` /
//! `SSL_CERT_DIR` when set, as OpenSSL reads them), and the PEM bundle named
//! by the `ca_bundle` option, else every bundle [`CA_BUNDLE_VARIABLES`]
//! name. One exception, as in Python's requests and curl: a bundle named by
//! one of [`REPLACING_VARIABLES`], the only one of the variables set (and
//! the option unset), replaces the roots: nothing else is trusted. Nothing
//! here ever turns verification off.

use crate::{Error, Result};
use std::collections::HashSet;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use ureq::tls::{Certificate, PemItem, RootCerts};

/// The environment variables naming CA bundles when the `ca_bundle` option
/// is unset (OpenSSL's, Python requests', curl's); each one set counts.
pub const CA_BUNDLE_VARIABLES: [&str; 3] =
    ["SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE"];

/// The variables whose bundle, set alone, is the whole trust store, as in
/// the tools that own them: requests reads `REQUESTS_CA_BUNDLE`, else
/// `CURL_CA_BUNDLE`, instead of its own roots, and curl `CURL_CA_BUNDLE`
/// instead of the system's. (`SSL_CERT_FILE` is read as OpenSSL reads it,
/// in place of the distribution's bundle: Mozilla's roots stay.)
pub const REPLACING_VARIABLES: [&str; 2] = ["REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE"];

/// Whether the bundles replace the compiled-in roots and the system store:
/// the `ca_bundle` option unset and the only one of [`CA_BUNDLE_VARIABLES`]
/// set (non-empty) one of [`REPLACING_VARIABLES`].
pub fn bundle_replaces_roots(option: Option<&Path>) -> bool {
    let set: Vec<&str> = CA_BUNDLE_VARIABLES
        .into_iter()
        .filter(|var| std::env::var_os(var).is_some_and(|v| !v.is_empty()))
        .collect();
    option.is_none() && matches!(set[..], [only] if REPLACING_VARIABLES.contains(&only))
}

/// The CA bundles to add to the roots, each with where it was named:
/// `option` (the `ca_bundle` option or `HYDROPLOT_CA_BUNDLE`) alone when
/// set, else the file of every non-empty variable of
/// [`CA_BUNDLE_VARIABLES`], each file once. All count, because tools set
/// them for each other: conda points `SSL_CERT_FILE` at its own bundle
/// while the agency's root sits in `REQUESTS_CA_BUNDLE`.
pub fn bundle_paths(option: Option<&Path>) -> Vec<(PathBuf, String)> {
    if let Some(path) = option {
        return vec![(path.to_path_buf(), "option ca_bundle".to_string())];
    }
    let mut bundles: Vec<(PathBuf, String)> = Vec::new();
    for var in CA_BUNDLE_VARIABLES {
        let Some(value) = std::env::var_os(var).filter(|v| !v.is_empty()) else {
            continue;
        };
        let path = PathBuf::from(value);
        if !bundles.iter().any(|(p, _)| *p == path) {
            bundles.push((path, format!("environment variable {var}")));
        }
    }
    bundles
}

/// The trusted roots: the compiled-in Mozilla roots, the system store and
/// the CA bundles (see [`bundle_paths`]), or the bundle alone when it
/// replaces them ([`bundle_replaces_roots`]). A bundle that cannot be read or holds
/// no certificate is an `Error::InvalidArgument` naming the file and where
/// it was named; an unreadable system store only loses its certificates.
///
/// A context is rebuilt on every option set, so the roots are built once
/// per process for each [`RootsKey`] (the bundle file as it is now, and the
/// variables the system store reads) and shared (`RootCerts` is an `Arc`).
pub fn root_certs(ca_bundle: Option<&Path>) -> Result<RootCerts> {
    static BUILT: Mutex<Option<(RootsKey, RootCerts)>> = Mutex::new(None);
    let bundles = bundle_paths(ca_bundle);
    let replace = bundle_replaces_roots(ca_bundle);
    let key = RootsKey::now(bundles.iter().map(|(path, _)| path.as_path()), replace);
    if let Some((built_for, roots)) = &*BUILT.lock().unwrap_or_else(|p| p.into_inner()) {
        if *built_for == key {
            return Ok(roots.clone());
        }
    }
    let roots = build_roots(&bundles, replace)?;
    *BUILT.lock().unwrap_or_else(|p| p.into_inner()) = Some((key, roots.clone()));
    Ok(roots)
}

/// What the roots are built from: each bundle's path, modification time
/// and length (a changed file is read again), whether the bundles replace
/// the other roots, and `SSL_CERT_FILE` / `SSL_CERT_DIR`, which the system
/// store reads.
#[derive(PartialEq)]
struct RootsKey {
    bundles: Vec<(PathBuf, Option<std::time::SystemTime>, u64)>,
    replace: bool,
    system: Vec<Option<OsString>>,
}

impl RootsKey {
    fn now<'a>(bundles: impl Iterator<Item = &'a Path>, replace: bool) -> RootsKey {
        RootsKey {
            replace,
            bundles: bundles
                .map(|path| {
                    let meta = std::fs::metadata(path).ok();
                    let modified = meta.as_ref().and_then(|m| m.modified().ok());
                    (path.to_path_buf(), modified, meta.map_or(0, |m| m.len()))
                })
                .collect(),
            system: ["SSL_CERT_FILE", "SSL_CERT_DIR"]
                .iter()
                .map(std::env::var_os)
                .collect(),
        }
    }
}

/// The roots of [`root_certs`], built afresh: the bundles alone when they
/// `replace` the others.
fn build_roots(bundles: &[(PathBuf, String)], replace: bool) -> Result<RootCerts> {
    let mut roots: Vec<Certificate<'static>> = Vec::new();
    if !replace {
        let bundled = webpki_root_certs::TLS_SERVER_ROOT_CERTS
            .iter()
            .map(|c| Certificate::from_der(c.as_ref()).to_owned());
        roots.extend(bundled);
        roots.extend(
            rustls_native_certs::load_native_certs()
                .certs
                .iter()
                .map(|c| Certificate::from_der(c.as_ref()).to_owned()),
        );
    }
    for (path, origin) in bundles {
        roots.extend(read_bundle(path).map_err(|why| {
            Error::InvalidArgument(format!("the CA bundle {} ({origin}) {why}", path.display()))
        })?);
    }
    // The system bundle repeats most bundled roots (and its directory the
    // bundle file): each root once keeps the store ureq builds small.
    let mut seen = HashSet::new();
    roots.retain(|c| seen.insert(c.der().to_vec()));
    Ok(RootCerts::from(roots))
}

/// The certificates of a PEM file (other PEM items, such as keys, are
/// skipped); `Err` says why the file is unusable.
fn read_bundle(path: &Path) -> std::result::Result<Vec<Certificate<'static>>, String> {
    let pem = std::fs::read(path).map_err(|e| format!("cannot be read: {e}"))?;
    let mut certs = Vec::new();
    for item in ureq::tls::parse_pem(&pem) {
        match item {
            Ok(PemItem::Certificate(c)) => certs.push(c),
            Ok(_) => {}
            Err(e) => return Err(format!("is not valid PEM: {e}")),
        }
    }
    if certs.is_empty() {
        return Err("holds no PEM certificate (-----BEGIN CERTIFICATE-----)".into());
    }
    Ok(certs)
}

/// The certificate error inside a ureq failure, if it is one.
pub fn certificate_error(e: &ureq::Error) -> Option<&rustls::CertificateError> {
    let rustls_error = match e {
        ureq::Error::Rustls(r) => r,
        ureq::Error::Io(io) => io.get_ref()?.downcast_ref::<rustls::Error>()?,
        _ => return None,
    };
    match rustls_error {
        rustls::Error::InvalidCertificate(c) => Some(c),
        _ => None,
    }
}

/// The message for a certificate `error` of `host`: the reason in words
/// and what to do about it.
pub fn certificate_message(what: &str, host: &str, error: &rustls::CertificateError) -> String {
    use rustls::CertificateError as C;
    let (reason, hint) = match error {
        C::UnknownIssuer => (
            "unknown issuer: no trusted certificate authority signed it".to_string(),
            "If your network inspects TLS with its own root certificate, name that \
             certificate's PEM file with the option ca_bundle (HYDROPLOT_CA_BUNDLE) or \
             SSL_CERT_FILE, or add it to the operating system's certificate store",
        ),
        C::Expired | C::ExpiredContext { .. } => (
            "expired".to_string(),
            "Check the computer's clock; if it is right, the server's certificate has run out \
             (an inspecting proxy's own root goes in ca_bundle or SSL_CERT_FILE)",
        ),
        C::NotValidYet | C::NotValidYetContext { .. } => {
            ("not valid yet".to_string(), "Check the computer's clock")
        }
        C::NotValidForName | C::NotValidForNameContext { .. } => (
            format!("wrong name: the certificate is not issued for {host}"),
            "Check the host in the service URL; a proxy that inspects TLS must present a \
             certificate for the host asked for (its root goes in ca_bundle or SSL_CERT_FILE)",
        ),
        other => (
            format!("{other:?}"),
            "Name the root certificate of your network with the option ca_bundle \
             (HYDROPLOT_CA_BUNDLE) or SSL_CERT_FILE",
        ),
    };
    format!(
        "{what}: the TLS certificate of {host} was refused ({reason}). {hint}. \
         Certificate verification cannot be turned off."
    )
}
