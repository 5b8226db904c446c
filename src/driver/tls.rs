//! TLS for `https://` targets (rustls, ring provider): the client configuration, built once per
//! run, with the system's usual web roots (webpki-roots), a CA of the user's (`--cacert`), or no
//! verification at all (`--insecure`, for self-signed test servers). For HTTP/2 the client
//! offers `h2` (then `http/1.1`) in ALPN, and a connection counts only if the server chose `h2`.
//!
//! Session resumption is on, as in browsers: each worker keeps its own session cache (see
//! [`TlsClient::for_worker`]), so a worker's next connection resumes with a ticket from an
//! earlier one (an abbreviated handshake, no certificate sent or checked). `--no-tls-resume`
//! turns it off, so that every connection pays a full handshake (handshake studies).

use crate::record::{ErrorKind, OpError};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::Resumption;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};
use std::sync::Arc;
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;
use tokio_rustls::TlsConnector;

/// A run's TLS client: configuration and the name the server's certificate must carry.
#[derive(Clone)]
pub struct TlsClient {
    connector: TlsConnector,
    /// The configuration behind `connector`, to give each worker a session cache of its own.
    config: Arc<ClientConfig>,
    name: ServerName<'static>,
    resume: bool,
}

/// Sessions a worker's cache keeps: one per server name (rustls keeps a few tickets per name).
const SESSIONS: usize = 32;

/// How the client trusts a TLS server (`--insecure`, `--cacert`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TlsOptions {
    /// Trust any certificate.
    pub insecure: bool,
    /// A PEM file of CA certificates to trust instead of the web roots.
    pub cacert: Option<String>,
    /// Every connection makes a full handshake: no session resumption (`--no-tls-resume`).
    pub no_resume: bool,
}

impl std::fmt::Debug for TlsClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "TlsClient({:?})", self.name)
    }
}

/// A TLS client that cannot be set up: bad input (a certificate file, a server name).
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// rustls refuses the protocol versions.
    #[error("TLS set-up: {0}")]
    Setup(rustls::Error),
    /// A host that is no server name.
    #[error("'{0}' is not a valid TLS server name")]
    Name(String),
    /// `--cacert` that cannot be read.
    #[error("--cacert {0}: {1}: give a PEM file")]
    Read(String, crate::sys::file::ReadError),
    /// `--cacert` that is not PEM.
    #[error("--cacert {0}: not PEM ({1})")]
    Pem(String, rustls::pki_types::pem::Error),
    /// A certificate rustls cannot use.
    #[error("--cacert {0}: unusable certificate ({1})")]
    Unusable(String, rustls::Error),
    /// `--cacert` without a certificate.
    #[error("--cacert {0} holds no certificate: give a PEM file")]
    Empty(String),
}

impl TlsClient {
    /// A client for `host`, verifying against `cacert` (PEM) or the web roots, or not at all
    /// (`options`); with `http2`, offering `h2` in ALPN.
    pub fn new(host: &str, options: &TlsOptions, http2: bool) -> Result<TlsClient, TlsError> {
        let (insecure, cacert) = (options.insecure, options.cacert.as_deref());
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = ClientConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .map_err(TlsError::Setup)?;
        let mut config = if insecure {
            builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(NoVerify(provider)))
                .with_no_client_auth()
        } else {
            builder
                .with_root_certificates(roots(cacert)?)
                .with_no_client_auth()
        };
        if http2 {
            // http/1.1 too, so a server without h2 still completes the handshake and says
            // what it speaks (nginx fails a handshake that shares no protocol with a fatal alert).
            config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        }
        let resume = !options.no_resume;
        if !resume {
            config.resumption = Resumption::disabled();
        }
        let bare = host.rsplit_once(':').map_or(host, |(h, _)| h);
        let bare = bare.trim_start_matches('[').trim_end_matches(']');
        let name =
            ServerName::try_from(bare.to_string()).map_err(|_| TlsError::Name(bare.into()))?;
        let config = Arc::new(config);
        Ok(TlsClient {
            connector: TlsConnector::from(config.clone()),
            config,
            name,
            resume,
        })
    }

    /// The client for one worker: the same configuration with a session cache of its own, so
    /// the worker's connections resume each other's sessions without a lock shared with the
    /// other workers (rustls's cache sits behind a mutex).
    pub fn for_worker(&self) -> TlsClient {
        if !self.resume {
            return self.clone();
        }
        let mut config = (*self.config).clone();
        config.resumption = Resumption::in_memory_sessions(SESSIONS);
        let config = Arc::new(config);
        TlsClient {
            connector: TlsConnector::from(config.clone()),
            config,
            name: self.name.clone(),
            resume: true,
        }
    }

    /// What a QUIC client (HTTP/3, [`crate::driver::h3`]) builds its own configuration from:
    /// this client's trust, without ALPN or session cache (the QUIC driver sets both), the
    /// server name as text, and whether sessions are resumed (no `--no-tls-resume`).
    pub fn quic_parts(&self) -> (ClientConfig, String, bool) {
        let mut config = (*self.config).clone();
        config.alpn_protocols.clear();
        (config, self.name.to_str().into_owned(), self.resume)
    }

    /// Runs the TLS handshake over a connected socket.
    pub async fn handshake(&self, tcp: TcpStream) -> std::io::Result<TlsStream<TcpStream>> {
        self.connector.connect(self.name.clone(), tcp).await
    }
}

/// The protocol the server chose in ALPN, if any.
pub fn alpn(stream: &TlsStream<TcpStream>) -> Option<&[u8]> {
    stream.get_ref().1.alpn_protocol()
}

/// Why a connection cannot carry HTTP/2: the server chose another protocol in ALPN, or none.
pub fn not_h2(chosen: Option<&[u8]>) -> Option<String> {
    match chosen {
        Some(b"h2") => None,
        Some(p) => Some(format!(
            "the server chose {} in ALPN, not h2",
            String::from_utf8_lossy(p)
        )),
        None => Some("the server chose no protocol in ALPN (it does not offer h2)".to_string()),
    }
}

/// What the user can do when the server will not speak HTTP/2 over TLS.
pub const H2_FIX: &str =
    "enable HTTP/2 on the server (nginx: listen PORT ssl http2) or leave out --http2";

/// The error of a failed handshake. A failure TLS itself names (a certificate the client does
/// not trust, no protocol in common) is fatal: every connection would fail alike, and the fix
/// is the user's. A broken connection is an error of that connection.
pub fn handshake_error(err: &std::io::Error) -> OpError {
    match err.get_ref().and_then(|e| e.downcast_ref::<rustls::Error>()) {
        Some(rustls::Error::AlertReceived(rustls::AlertDescription::NoApplicationProtocol)) => {
            OpError::fatal(
                ErrorKind::Tls,
                format!("the server refused every protocol offered in ALPN (h2, http/1.1): {H2_FIX}"),
            )
        }
        Some(e) => OpError::fatal(
            ErrorKind::Tls,
            format!("TLS handshake failed: {e}; for a self-signed server use --insecure, or --cacert FILE with its CA"),
        ),
        None => OpError::new(ErrorKind::Tls, format!("TLS handshake: {err}")),
    }
}

fn roots(cacert: Option<&str>) -> Result<RootCertStore, TlsError> {
    let mut store = RootCertStore::empty();
    match cacert {
        None => store.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned()),
        Some(path) => {
            let pem = crate::sys::file::read(path, crate::sys::file::PEM_LIMIT)
                .map_err(|e| TlsError::Read(path.into(), e))?;
            for cert in CertificateDer::pem_slice_iter(&pem) {
                let cert = cert.map_err(|e| TlsError::Pem(path.into(), e))?;
                store
                    .add(cert)
                    .map_err(|e| TlsError::Unusable(path.into(), e))?;
            }
            if store.is_empty() {
                return Err(TlsError::Empty(path.into()));
            }
        }
    }
    Ok(store)
}

/// `--insecure`: accepts any certificate, but still checks the handshake signatures.
#[derive(Debug)]
struct NoVerify(Arc<rustls::crypto::CryptoProvider>);

impl ServerCertVerifier for NoVerify {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}
