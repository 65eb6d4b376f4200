//! TLS to PostgreSQL as the URL's `sslmode` and `sslrootcert` ask: which of them this module
//! reads itself (`tokio-postgres` knows neither `verify-ca`, `verify-full` nor `sslrootcert`),
//! the roots, and the verifier of `verify-ca` that checks the chain and not the host name.

use std::path::PathBuf;
use std::sync::Arc;

use percent_encoding::percent_decode_str;
use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, DistinguishedName, SignatureScheme};
use tokio_postgres::config::SslMode;

use crate::tool::error::ToolError;

/// `sslmode`, with libpq's names. Every mode that uses TLS verifies the server's certificate
/// against the roots; `require` and `prefer` check its host name too, as `verify-full` does
/// (stricter than libpq, whose `require` and `prefer` verify nothing).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Mode {
    /// Plain text only.
    Disable,
    /// TLS when the server offers it, plain text when it does not.
    Prefer,
    /// TLS or no connection.
    Require,
    /// TLS; the certificate's chain verified, not its host name.
    VerifyCa,
    /// TLS; the certificate's chain and host name verified.
    VerifyFull,
}

impl Mode {
    fn parse(value: &str) -> Option<Self> {
        Some(match value {
            "disable" => Self::Disable,
            "prefer" => Self::Prefer,
            "require" => Self::Require,
            "verify-ca" => Self::VerifyCa,
            "verify-full" => Self::VerifyFull,
            _ => return None,
        })
    }

    /// What `tokio-postgres` is told: whether TLS is tried, and whether it is required.
    pub(super) fn ssl_mode(self) -> SslMode {
        match self {
            Self::Disable => SslMode::Disable,
            Self::Prefer => SslMode::Prefer,
            Self::Require | Self::VerifyCa | Self::VerifyFull => SslMode::Require,
        }
    }

    fn of(ssl_mode: SslMode) -> Self {
        match ssl_mode {
            SslMode::Disable => Self::Disable,
            SslMode::Require => Self::Require,
            _ => Self::Prefer,
        }
    }
}

/// The URL's TLS settings: the mode, and the CA file that replaces the system's roots.
#[derive(Debug, Clone)]
pub(super) struct Tls {
    pub(super) mode: Mode,
    root_cert: Option<PathBuf>,
}

impl Tls {
    /// The settings of a URL (`postgres://` or `postgresql://`) and the URL without them, for
    /// `tokio-postgres`: `sslmode` and `sslrootcert` are taken out of its query. A connection
    /// string of `key=value` words is left whole (`tokio-postgres` reads its `sslmode`, and
    /// knows neither `verify-ca`, `verify-full` nor `sslrootcert`). Fails, with the reason,
    /// on an `sslmode` that is not one of libpq's that this module supports.
    pub(super) fn split(url: &str) -> Result<(String, Option<Mode>, Option<PathBuf>), String> {
        let Some(rest) = ["postgres://", "postgresql://"]
            .iter()
            .find_map(|scheme| url.strip_prefix(scheme))
        else {
            return Ok((url.to_owned(), None, None));
        };
        // Where the query starts, found as `tokio-postgres` finds it: after the credentials
        // (up to the first `@`), whose password may hold a `?`.
        let after_credentials = rest.find('@').map_or(0, |at| at + 1);
        let Some(question) = rest[after_credentials..].find('?') else {
            return Ok((url.to_owned(), None, None));
        };
        let query_start = url.len() - rest.len() + after_credentials + question;
        let (base, query) = (&url[..query_start], &url[query_start + 1..]);
        let (mut mode, mut root_cert) = (None, None);
        let mut kept = Vec::new();
        for pair in query.split('&') {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            let decoded = |text: &str| percent_decode_str(text).decode_utf8_lossy().into_owned();
            match decoded(key).as_str() {
                "sslmode" => {
                    let value = decoded(value);
                    mode = Some(Mode::parse(&value).ok_or_else(|| {
                        format!(
                            "sslmode={value} is not one of disable, prefer, require, verify-ca, \
                             verify-full"
                        )
                    })?);
                }
                "sslrootcert" => root_cert = Some(PathBuf::from(decoded(value))),
                _ => kept.push(pair),
            }
        }
        let url = if kept.is_empty() {
            base.to_owned()
        } else {
            format!("{base}?{}", kept.join("&"))
        };
        Ok((url, mode, root_cert))
    }

    /// The settings: `mode` if the URL's query named one, else what `tokio-postgres` read
    /// (`prefer` by default).
    pub(super) fn new(mode: Option<Mode>, ssl_mode: SslMode, root_cert: Option<PathBuf>) -> Self {
        Self {
            mode: mode.unwrap_or(Mode::of(ssl_mode)),
            root_cert,
        }
    }

    /// The connector for every mode but `disable`: rustls (the aws-lc-rs provider) trusting
    /// the `sslrootcert` file's certificates when the URL names one, else the system's roots.
    /// Fails, naming `sslrootcert` and the path, when that file cannot be used.
    pub(super) fn connector(&self) -> Result<tokio_postgres_rustls::MakeRustlsConnect, ToolError> {
        let certificates = if let Some(path) = &self.root_cert {
            crate::tls::ca_file(path, "the PostgreSQL URL's sslrootcert")?
        } else {
            let system = crate::tls::system_roots();
            if system.is_empty() {
                tracing::warn!(
                    target: "tool_runtime::postgres",
                    "no system root certificates found: a PostgreSQL server offering TLS \
                     cannot be verified (name a CA file with sslrootcert)"
                );
            }
            system
        };
        let mut roots = rustls::RootCertStore::empty();
        roots.add_parsable_certificates(certificates);
        let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
        let builder = rustls::ClientConfig::builder_with_provider(Arc::clone(&provider))
            .with_safe_default_protocol_versions()
            .map_err(|e| ToolError::internal(format!("rustls for PostgreSQL: {e}")))?;
        // With no roots nothing verifies, whatever the mode: rustls's own verifier refuses
        // every certificate (its builder, used for verify-ca, would not build).
        let config = if self.mode == Mode::VerifyCa && !roots.is_empty() {
            let full = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider)
                .build()
                .map_err(|e| ToolError::internal(format!("rustls for PostgreSQL: {e}")))?;
            builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(ChainOnly(full)))
                .with_no_client_auth()
        } else {
            builder.with_root_certificates(roots).with_no_client_auth()
        };
        Ok(tokio_postgres_rustls::MakeRustlsConnect::new(config))
    }
}

/// `verify-ca`: the server's certificate must chain to a trusted root (signatures, validity
/// dates, key usage: everything rustls's own verifier checks) but need not name the host.
///
/// It asks rustls's verifier, which checks the chain first and the name last, and accepts
/// only its refusal of the name (`NotValidForName`): any other refusal, an unknown issuer or
/// an expired certificate among them, stands, whatever the name.
#[derive(Debug)]
pub(super) struct ChainOnly(pub(super) Arc<WebPkiServerVerifier>);

impl ServerCertVerifier for ChainOnly {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self
            .0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
        {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }

    fn root_hint_subjects(&self) -> Option<&[DistinguishedName]> {
        self.0.root_hint_subjects()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rcgen::{
        BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, KeyUsagePurpose,
        date_time_ymd,
    };

    /// A CA: its certificate, and the issuer that signs with its key.
    fn ca(name: &str) -> (CertificateDer<'static>, Issuer<'static, KeyPair>) {
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.distinguished_name.push(DnType::CommonName, name);
        params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let key = KeyPair::generate().unwrap();
        let certificate = params.self_signed(&key).unwrap();
        (certificate.der().clone(), Issuer::new(params, key))
    }

    /// A server certificate for `names`, signed by `issuer`; expired long ago if `expired`.
    fn server(
        names: &[&str],
        issuer: &Issuer<'_, KeyPair>,
        expired: bool,
    ) -> CertificateDer<'static> {
        let names: Vec<String> = names.iter().map(|n| (*n).to_owned()).collect();
        let mut params = CertificateParams::new(names).unwrap();
        if expired {
            params.not_before = date_time_ymd(2000, 1, 1);
            params.not_after = date_time_ymd(2001, 1, 1);
        }
        params
            .signed_by(&KeyPair::generate().unwrap(), issuer)
            .unwrap()
            .der()
            .clone()
    }

    fn verifiers(root: &CertificateDer<'static>) -> (Arc<WebPkiServerVerifier>, ChainOnly) {
        let mut roots = rustls::RootCertStore::empty();
        roots.add(root.clone()).unwrap();
        let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
        let full = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider)
            .build()
            .unwrap();
        (Arc::clone(&full), ChainOnly(full))
    }

    fn verify(
        verifier: &dyn ServerCertVerifier,
        certificate: &CertificateDer<'static>,
        host: &str,
    ) -> Result<(), rustls::Error> {
        let name = ServerName::try_from(host.to_owned()).unwrap();
        verifier
            .verify_server_cert(certificate, &[], &name, &[], UnixTime::now())
            .map(drop)
    }

    fn refusal(result: Result<(), rustls::Error>) -> CertificateError {
        match result {
            Err(rustls::Error::InvalidCertificate(why)) => why,
            other => panic!("not refused as an invalid certificate: {other:?}"),
        }
    }

    #[test]
    fn verify_ca_accepts_a_chain_to_the_roots_whatever_the_name_and_nothing_else() {
        let (root, issuer) = ca("the CA");
        let (_, other) = ca("another CA");
        let (full, chain_only) = verifiers(&root);
        let right = server(&["localhost", "127.0.0.1"], &issuer, false);
        let misnamed = server(&["other.example"], &issuer, false);

        // The host named: both accept, by name or by IP address.
        for host in ["localhost", "127.0.0.1"] {
            verify(&*full, &right, host).unwrap();
            verify(&chain_only, &right, host).unwrap();
        }
        // Another name: verify-full refuses it, verify-ca does not.
        assert!(matches!(
            refusal(verify(&*full, &misnamed, "localhost")),
            CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. }
        ));
        verify(&chain_only, &misnamed, "localhost").unwrap();

        // Signed by a CA not among the roots: refused, whether or not it names the host.
        for names in [&["localhost"][..], &["other.example"][..]] {
            let stranger = server(names, &other, false);
            assert_eq!(
                refusal(verify(&chain_only, &stranger, "localhost")),
                CertificateError::UnknownIssuer,
                "{names:?}"
            );
        }
        // Expired, from the right CA, naming another host: refused as expired.
        let expired = server(&["other.example"], &issuer, true);
        assert!(matches!(
            refusal(verify(&chain_only, &expired, "localhost")),
            CertificateError::Expired | CertificateError::ExpiredContext { .. }
        ));
        // The CA's own certificate presented as the server's: not a server certificate.
        assert!(verify(&chain_only, &root, "localhost").is_err());
    }

    #[test]
    fn sslmode_and_sslrootcert_are_read_from_the_query_and_the_rest_passes_through() {
        let split = |url: &str| Tls::split(url).unwrap();
        assert_eq!(
            split(
                "postgres://u:p@h:5433/db?application_name=x&sslmode=verify-full&sslrootcert=%2Ftmp%2Fca%20one.pem"
            ),
            (
                "postgres://u:p@h:5433/db?application_name=x".to_owned(),
                Some(Mode::VerifyFull),
                Some(PathBuf::from("/tmp/ca one.pem"))
            )
        );
        assert_eq!(
            split("postgresql://h/db?sslmode=verify-ca"),
            ("postgresql://h/db".to_owned(), Some(Mode::VerifyCa), None)
        );
        // A `?` in the password is not the query's.
        assert_eq!(
            split("postgres://u:a?b@h/db?sslmode=disable"),
            (
                "postgres://u:a?b@h/db".to_owned(),
                Some(Mode::Disable),
                None
            )
        );
        for untouched in [
            "postgres://u:a?b@h/db",
            "postgres://h/db",
            "host=h sslmode=require",
        ] {
            assert_eq!(split(untouched), (untouched.to_owned(), None, None));
        }
        let e = Tls::split("postgres://h/db?sslmode=allow").unwrap_err();
        assert!(e.contains("sslmode=allow is not one of"), "{e}");
        // What tokio-postgres is told, and the default.
        assert_eq!(Mode::VerifyCa.ssl_mode(), SslMode::Require);
        assert_eq!(Mode::VerifyFull.ssl_mode(), SslMode::Require);
        assert_eq!(Tls::new(None, SslMode::Prefer, None).mode, Mode::Prefer);
        assert_eq!(Tls::new(None, SslMode::Require, None).mode, Mode::Require);
    }
}
