//! The certificates that TLS to Redis (`rediss://`) and to PostgreSQL trusts: the system's
//! root certificates, or a CA file of the application's (a private CA, or a test's).

use std::path::Path;

use rustls::RootCertStore;
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;

use crate::tool::error::{ErrorKind, ToolError};

/// The certificates of the PEM file at `path`, each one usable as a trust anchor. `option`
/// names the setting that gave the path, for the error: a file that cannot be read, that is
/// not PEM, that holds no certificate or a certificate that is not a CA's fails the start,
/// naming the option and the path (never a URL, which may hold a password).
pub(crate) fn ca_file(
    path: &Path,
    option: &str,
) -> Result<Vec<CertificateDer<'static>>, ToolError> {
    let refused = |why: String| {
        ToolError::new(
            ErrorKind::UNAVAILABLE,
            format!("{option} ({}): {why}", path.display()),
        )
    };
    let bytes = std::fs::read(path).map_err(|e| refused(format!("cannot read it: {e}")))?;
    let certificates = CertificateDer::pem_slice_iter(&bytes)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| refused(format!("not a PEM file: {e}")))?;
    if certificates.is_empty() {
        return Err(refused(
            "holds no PEM certificate (-----BEGIN CERTIFICATE-----)".to_owned(),
        ));
    }
    let mut check = RootCertStore::empty();
    for (index, certificate) in certificates.iter().enumerate() {
        check.add(certificate.clone()).map_err(|e| {
            refused(format!(
                "certificate {} cannot be trusted as a CA: {e}",
                index + 1
            ))
        })?;
    }
    Ok(certificates)
}

#[cfg(feature = "postgres")]
/// The system's root certificates that can be trust anchors (those that cannot are left out);
/// none when the system has none, which the caller warns of.
pub(crate) fn system_roots() -> Vec<CertificateDer<'static>> {
    let mut check = RootCertStore::empty();
    let mut roots = rustls_native_certs::load_native_certs().certs;
    roots.retain(|root| check.add(root.clone()).is_ok());
    roots
}
