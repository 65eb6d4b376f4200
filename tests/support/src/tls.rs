//! Certificates made for one test: a CA, server certificates it signs for the names a test
//! asks, and as many unrelated CAs as it needs, for TLS tested as a success and as a refusal.

use std::path::{Path, PathBuf};

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, KeyUsagePurpose};

/// A certificate authority of a test's own, with a fresh key.
#[derive(Debug)]
pub struct TestCa {
    pem: String,
    issuer: Issuer<'static, KeyPair>,
}

/// A server's certificate and key, PEM, and the certificate of the CA that signed it.
#[derive(Debug, Clone)]
pub struct ServerCertificate {
    /// The server's certificate.
    pub certificate: String,
    /// Its private key (PKCS#8).
    pub key: String,
    /// The certificate of the CA that signed it.
    pub ca: String,
}

impl TestCa {
    /// A CA named `name` (its common name).
    ///
    /// # Panics
    ///
    /// When rcgen cannot make the key or the certificate.
    #[must_use]
    pub fn new(name: &str) -> Self {
        let mut params = CertificateParams::new(Vec::<String>::new()).expect("CA parameters");
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.distinguished_name.push(DnType::CommonName, name);
        params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let key = KeyPair::generate().expect("a CA key");
        let pem = params
            .self_signed(&key)
            .expect("the CA's certificate")
            .pem();
        Self {
            pem,
            issuer: Issuer::new(params, key),
        }
    }

    /// Its certificate, PEM.
    #[must_use]
    pub fn pem(&self) -> &str {
        &self.pem
    }

    /// Writes its certificate to `path` (PEM) and returns the path.
    ///
    /// # Panics
    ///
    /// When the file cannot be written.
    #[must_use]
    pub fn write(&self, path: impl AsRef<Path>) -> PathBuf {
        let path = path.as_ref().to_owned();
        std::fs::write(&path, &self.pem).expect("the CA certificate written");
        path
    }

    /// A server certificate for `names` (host names, or IP addresses such as `127.0.0.1`),
    /// signed by this CA, with a fresh key.
    ///
    /// # Panics
    ///
    /// When a name is not a valid DNS name or IP address.
    #[must_use]
    pub fn server(&self, names: &[&str]) -> ServerCertificate {
        let names: Vec<String> = names.iter().map(|n| (*n).to_owned()).collect();
        let mut params = CertificateParams::new(names).expect("server certificate parameters");
        params
            .distinguished_name
            .push(DnType::CommonName, "tool-tests server");
        let key = KeyPair::generate().expect("a server key");
        let certificate = params
            .signed_by(&key, &self.issuer)
            .expect("the server's certificate");
        ServerCertificate {
            certificate: certificate.pem(),
            key: key.serialize_pem(),
            ca: self.pem.clone(),
        }
    }
}
