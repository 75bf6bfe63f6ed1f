//! A throw-away certificate authority made in the test (rcgen), as an
//! agency's TLS-inspecting root would be, and server certificates it signs
//! for the HTTPS mock. Used by `tests/it/tls.rs` and `tests/process/tls_env.rs`.
#![allow(dead_code)]

use hydroplot_mock::TlsIdentity;
use rcgen::{
    date_time_ymd, BasicConstraints, Certificate, CertificateParams, DnType, IsCa, KeyPair,
    KeyUsagePurpose,
};
use std::path::{Path, PathBuf};

/// A root certificate and its key.
pub struct PrivateCa {
    cert: Certificate,
    key: KeyPair,
}

impl PrivateCa {
    /// A new root, "Test Agency Inspection Root".
    pub fn new() -> PrivateCa {
        PrivateCa::named("Test Agency Inspection Root")
    }

    /// A new root with this common name.
    pub fn named(common_name: &str) -> PrivateCa {
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params
            .distinguished_name
            .push(DnType::CommonName, common_name);
        params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let key = KeyPair::generate().unwrap();
        let cert = params.self_signed(&key).unwrap();
        PrivateCa { cert, key }
    }

    /// The root as PEM.
    pub fn pem(&self) -> String {
        self.cert.pem()
    }

    /// Writes the root's PEM to `dir/name` and returns the path.
    pub fn write(&self, dir: &Path, name: &str) -> PathBuf {
        std::fs::create_dir_all(dir).unwrap();
        let path = dir.join(name);
        std::fs::write(&path, self.pem()).unwrap();
        path
    }

    /// A server identity for `names` (an IP address becomes an IP SAN),
    /// valid now.
    pub fn server(&self, names: &[&str]) -> TlsIdentity {
        self.issue(names, false)
    }

    /// A server identity for `names` that expired in 2001.
    pub fn expired_server(&self, names: &[&str]) -> TlsIdentity {
        self.issue(names, true)
    }

    fn issue(&self, names: &[&str], expired: bool) -> TlsIdentity {
        let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
        let mut params = CertificateParams::new(names).unwrap();
        params
            .distinguished_name
            .push(DnType::CommonName, "hydroplot mock");
        if expired {
            params.not_before = date_time_ymd(2000, 1, 1);
            params.not_after = date_time_ymd(2001, 1, 1);
        }
        let key = KeyPair::generate().unwrap();
        let cert = params.signed_by(&key, &self.cert, &self.key).unwrap();
        TlsIdentity {
            cert_chain_pem: cert.pem(),
            key_pem: key.serialize_pem(),
        }
    }
}

/// A fresh directory of this test process's ([`crate::scratch`]).
pub fn temp_dir(name: &str) -> PathBuf {
    crate::scratch::temp_dir(&format!("tls-{name}"))
}
