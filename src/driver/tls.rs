//! TLS for `https://` targets (rustls, ring provider): the client configuration, built once per
//! run, with the system's usual web roots (webpki-roots), a CA of the user's (`--cacert`), or no
//! verification at all (`--insecure`, for self-signed test servers). For HTTP/2 the client
//! offers `h2` (then `http/1.1`) in ALPN, and a connection counts only if the server chose `h2`.
//!
//! `--cacert` also trusts a server whose certificate is byte for byte one given there, as curl
//! does: the self-signed certificate `openssl req -x509` makes says CA:TRUE, which the web PKI
//! refuses as a server's own ([`Pinned`]). A refused handshake is told in words
//! ([`describe`]), never as a library's debug value.
//!
//! Session resumption is on, as in browsers: each worker keeps its own session cache (see
//! [`TlsClient::for_worker`]), so a worker's next connection resumes with a ticket from an
//! earlier one (an abbreviated handshake, no certificate sent or checked). `--no-tls-resume`
//! turns it off, so that every connection pays a full handshake (handshake studies).

use crate::record::{ErrorKind, OpError};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::Resumption;
use rustls::client::WebPkiServerVerifier;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
};
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
    #[error("TLS set-up: {why}", why = describe(.0))]
    Setup(rustls::Error),
    /// A verifier that cannot be built from the certificates given.
    #[error("--cacert {0}: {1}")]
    Verifier(String, rustls::server::VerifierBuilderError),
    /// A host that is no server name.
    #[error("'{0}' is not a valid TLS server name")]
    Name(String),
    /// `--cacert` that cannot be read.
    #[error("--cacert {0}: {1}: give a PEM file")]
    Read(String, crate::sys::file::ReadError),
    /// `--cacert` that is not PEM.
    #[error("--cacert {0}: not a PEM file ({why}): give the certificate as `openssl req -x509` writes it", why = pem_problem(.1))]
    Pem(String, rustls::pki_types::pem::Error),
    /// A certificate rustls cannot use.
    #[error("--cacert {0}: unusable certificate ({why})", why = describe(.1))]
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
        } else if let Some(path) = cacert {
            let pinned = certificates(path)?;
            let mut store = RootCertStore::empty();
            for cert in &pinned {
                store
                    .add(cert.clone())
                    .map_err(|e| TlsError::Unusable(path.into(), e))?;
            }
            let chain = WebPkiServerVerifier::builder_with_provider(Arc::new(store), provider)
                .build()
                .map_err(|e| TlsError::Verifier(path.into(), e))?;
            builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(Pinned { chain, pinned }))
                .with_no_client_auth()
        } else {
            let mut store = RootCertStore::empty();
            store.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
            builder.with_root_certificates(store).with_no_client_auth()
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
    match err
        .get_ref()
        .and_then(|e| e.downcast_ref::<rustls::Error>())
    {
        Some(rustls::Error::AlertReceived(rustls::AlertDescription::NoApplicationProtocol)) => {
            OpError::fatal(
                ErrorKind::Tls,
                format!(
                    "the server refused every protocol offered in ALPN (h2, http/1.1): {H2_FIX}"
                ),
            )
        }
        Some(e) => OpError::fatal(
            ErrorKind::Tls,
            format!("TLS handshake failed: {}; {}", describe(e), fix(e)),
        ),
        None => OpError::new(ErrorKind::Tls, format!("TLS handshake: {err}")),
    }
}

/// The certificates of a `--cacert` file (PEM), at least one.
fn certificates(path: &str) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let pem = crate::sys::file::read(path, crate::sys::file::PEM_LIMIT)
        .map_err(|e| TlsError::Read(path.into(), e))?;
    let mut out = vec![];
    for cert in CertificateDer::pem_slice_iter(&pem) {
        out.push(cert.map_err(|e| TlsError::Pem(path.into(), e))?);
    }
    if out.is_empty() {
        return Err(TlsError::Empty(path.into()));
    }
    Ok(out)
}

/// What the user can do about a refused handshake.
fn fix(e: &rustls::Error) -> &'static str {
    match e {
        rustls::Error::InvalidCertificate(
            CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
        ) => "use a host name the certificate names in the URL, or --insecure to skip the check",
        rustls::Error::InvalidCertificate(_) => {
            "to trust it, give the server's certificate (or the CA that signed it) with --cacert FILE, or skip the check with --insecure"
        }
        _ => "check that the target speaks TLS on that port (https://), or try --insecure",
    }
}

/// A TLS failure in words, never a library's debug value (`Other(OtherError(…))`).
pub fn describe(e: &rustls::Error) -> String {
    use rustls::Error as E;
    match e {
        E::InvalidCertificate(c) => format!("the server's certificate {}", certificate_problem(c)),
        E::AlertReceived(a) => format!(
            "the server ended the handshake with the alert \"{}\"",
            words(&format!("{a:?}"))
        ),
        E::NoCertificatesPresented => "the server presented no certificate".to_string(),
        E::PeerIncompatible(p) => format!(
            "the server's TLS has nothing in common with the client's ({})",
            words(&format!("{p:?}"))
        ),
        E::PeerMisbehaved(p) => format!(
            "the server broke the TLS protocol ({})",
            words(&format!("{p:?}"))
        ),
        E::InappropriateMessage { .. } | E::InappropriateHandshakeMessage { .. } => {
            "the server sent a TLS message out of turn".to_string()
        }
        E::InvalidMessage(m) => format!(
            "the server sent an invalid TLS message ({}); is it TLS at all?",
            words(&format!("{m:?}"))
        ),
        other => words(&format!("{other:?}")),
    }
}

/// What is wrong with a certificate, after "the server's certificate".
fn certificate_problem(c: &CertificateError) -> String {
    use CertificateError as C;
    match c {
        C::UnknownIssuer => "is not signed by any certificate given to trust".to_string(),
        C::NotValidForName => "is not valid for the URL's host name".to_string(),
        C::NotValidForNameContext {
            expected,
            presented,
        } => {
            let names: Vec<String> = presented.iter().map(|p| unquote(p)).collect();
            let expected = expected.to_str();
            if names.is_empty() {
                format!("is not valid for {expected} (it names no host)")
            } else {
                format!("is not valid for {expected} (it names {})", names.join(", "))
            }
        }
        C::Expired | C::ExpiredContext { .. } => "has expired".to_string(),
        C::NotValidYet | C::NotValidYetContext { .. } => "is not valid yet".to_string(),
        C::BadSignature => "carries a signature that does not verify".to_string(),
        C::BadEncoding => "is not a well-formed certificate".to_string(),
        C::Revoked => "has been revoked".to_string(),
        C::UnsupportedSignatureAlgorithmContext { .. }
        | C::UnsupportedSignatureAlgorithmForPublicKeyContext { .. } => {
            "is signed with an algorithm wirebench does not support".to_string()
        }
        C::Other(o) => match words(&format!("{:?}", o.0)).as_str() {
            "ca used as end entity" => {
                "is a CA certificate (CA:TRUE, as `openssl req -x509` makes) that is not among those given to trust".to_string()
            }
            w => format!("was refused ({w})"),
        },
        other => format!("was refused ({})", words(&format!("{other:?}"))),
    }
}

/// A debug value as words: `Other(OtherError(CaUsedAsEndEntity))` is "ca used as end entity",
/// `HandshakeFailure` "handshake failure"; wrappers (`Other`, `OtherError`, `Some`) and
/// punctuation go.
fn words(debug: &str) -> String {
    const WRAPPERS: [&str; 5] = ["Other", "OtherError", "Some", "None", "Error"];
    let mut out: Vec<String> = vec![];
    for token in debug.split(|c: char| !c.is_alphanumeric() && c != '.' && c != '-') {
        if token.is_empty() || WRAPPERS.contains(&token) {
            continue;
        }
        let mut word = String::new();
        let chars: Vec<char> = token.chars().collect();
        for (i, &ch) in chars.iter().enumerate() {
            let next_lower = chars.get(i + 1).is_some_and(|c| c.is_lowercase());
            let prev_lower = i > 0 && chars[i - 1].is_lowercase();
            if ch.is_uppercase() && i > 0 && (prev_lower || next_lower) && !word.is_empty() {
                out.push(std::mem::take(&mut word).to_lowercase());
            }
            word.push(ch);
        }
        if !word.is_empty() {
            out.push(word.to_lowercase());
        }
    }
    if out.is_empty() {
        "no reason given".to_string()
    } else {
        out.join(" ")
    }
}

/// The text between the first pair of double quotes of a debug value (`DnsName("a")` is `a`),
/// else the value.
fn unquote(debug: &str) -> String {
    let inner = debug.split('"').nth(1);
    inner.unwrap_or(debug).replace('\\', "")
}

/// Why a PEM file could not be read, in words.
fn pem_problem(e: &rustls::pki_types::pem::Error) -> String {
    use rustls::pki_types::pem::Error as P;
    match e {
        P::MissingSectionEnd { .. } => "a section has no -----END line".to_string(),
        P::IllegalSectionStart { .. } => "a -----BEGIN line is malformed".to_string(),
        P::Base64Decode(_) => "a section is not valid base64".to_string(),
        P::Io(e) => e.to_string(),
        P::NoItemsFound => "no section found".to_string(),
        P::SectionTooLarge => "a section is over 10 MB".to_string(),
        _ => "unreadable".to_string(),
    }
}

/// `--cacert`: the web PKI's checks against the certificates given, and, as curl does, a
/// server whose own certificate is byte for byte one of them is trusted as itself. `openssl
/// req -x509` makes a self-signed certificate with CA:TRUE, which the web PKI refuses as a
/// server's (`CaUsedAsEndEntity`); a certificate the user gave is trusted for what it is, still
/// checked for its host name and (as the chain's checks do before its issuer) its dates.
#[derive(Debug)]
struct Pinned {
    chain: Arc<WebPkiServerVerifier>,
    pinned: Vec<CertificateDer<'static>>,
}

impl ServerCertVerifier for Pinned {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let verdict =
            self.chain
                .verify_server_cert(end_entity, intermediates, server_name, ocsp, now);
        let given = self
            .pinned
            .iter()
            .any(|c| c.as_ref() == end_entity.as_ref());
        match verdict {
            // The certificate's own dates were checked before either of these: only its
            // role (a CA as the server's certificate) or its issuer (none given) failed.
            Err(rustls::Error::InvalidCertificate(
                CertificateError::Other(_) | CertificateError::UnknownIssuer,
            )) if given => {
                let parsed = rustls::server::ParsedCertificate::try_from(end_entity)?;
                rustls::client::verify_server_name(&parsed, server_name)?;
                Ok(ServerCertVerified::assertion())
            }
            verdict => verdict,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.chain.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.chain.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.chain.supported_verify_schemes()
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_values_become_words() {
        assert_eq!(
            words("Other(OtherError(CaUsedAsEndEntity))"),
            "ca used as end entity"
        );
        assert_eq!(words("HandshakeFailure"), "handshake failure");
        assert_eq!(words(""), "no reason given");
    }

    #[test]
    fn refused_certificates_are_told_in_words() {
        let e = rustls::Error::InvalidCertificate(CertificateError::UnknownIssuer);
        let text = format!("{}; {}", describe(&e), fix(&e));
        assert!(
            text.contains("not signed by any certificate given"),
            "{text}"
        );
        assert!(text.contains("--cacert FILE"), "{text}");
        let e = rustls::Error::AlertReceived(rustls::AlertDescription::HandshakeFailure);
        assert_eq!(
            describe(&e),
            "the server ended the handshake with the alert \"handshake failure\""
        );
        for text in [describe(&e), unquote("DnsName(\"localhost\")")] {
            for debug in ["Other(", "Error {", "Some(", "DnsName("] {
                assert!(!text.contains(debug), "{text}");
            }
        }
    }
}
