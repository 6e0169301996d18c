//! TLS for the PostgreSQL store's connections (the pool's and the decision listener's), over
//! rustls, the TLS stack the model providers' HTTP client already uses.
//!
//! `tokio-postgres` reads `sslmode` and decides whether to ask for TLS: never (`disable`),
//! if the server offers it (`prefer`, the default), or always, failing when the server does
//! not (`require`). What this module decides is which server certificate to accept:
//!
//! - with `sslmode=require`, or whenever `sslrootcert` names root certificates, the server's
//!   certificate must chain to a root the platform trusts (its certificate store) or one of
//!   the `sslrootcert` file, and be valid for the host connected to (libpq's `verify-full`);
//!   `sslrootcert=system` names the platform's roots only;
//! - with `prefer` and no `sslrootcert`, any certificate is accepted: the connection is
//!   encrypted against eavesdropping, as libpq's `prefer` is, but the server is not
//!   authenticated (a server that offers no TLS is talked to in clear text anyway).
//!
//! Channel binding (`SCRAM-SHA-256-PLUS`) is not offered: password authentication uses
//! `SCRAM-SHA-256` over the TLS connection.

use crate::store::StoreError;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::WebPkiSupportedAlgorithms;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, SignatureScheme};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio_postgres::config::SslMode;
use tokio_postgres::tls::{ChannelBinding, MakeTlsConnect, TlsConnect};

/// The value of `sslrootcert` that names the platform's roots rather than a file (libpq's).
const SYSTEM_ROOTS: &str = "system";

/// Makes the TLS side of a store's connections.
#[derive(Clone)]
pub(crate) struct MakeRustlsConnect {
    config: Arc<ClientConfig>,
}

impl MakeRustlsConnect {
    /// The TLS for connections made with `mode`, trusting the roots of the `sslrootcert`
    /// parameter `root_cert` (a PEM file's path, or `system`) besides the platform's.
    pub(crate) fn new(mode: SslMode, root_cert: Option<&str>) -> Result<Self, StoreError> {
        let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
        let builder = ClientConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .map_err(|error| tls_setup(&error))?;
        let config = if mode == SslMode::Require || root_cert.is_some() {
            let extra_roots = match root_cert {
                Some(SYSTEM_ROOTS) | None => Vec::new(),
                Some(path) => read_root_certs(path)?,
            };
            let verifier =
                rustls_platform_verifier::Verifier::new_with_extra_roots(extra_roots, provider)
                    .map_err(|error| tls_setup(&error))?;
            builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(verifier))
        } else {
            let algorithms = provider.signature_verification_algorithms;
            builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(EncryptOnly(algorithms)))
        };
        Ok(MakeRustlsConnect {
            config: Arc::new(config.with_no_client_auth()),
        })
    }
}

fn tls_setup(error: &dyn std::fmt::Display) -> StoreError {
    StoreError::Backend(format!("setting up TLS for PostgreSQL: {error}"))
}

/// The certificates of the PEM file at `path`.
fn read_root_certs(path: &str) -> Result<Vec<CertificateDer<'static>>, StoreError> {
    let unreadable = |error: &dyn std::fmt::Display| {
        StoreError::Backend(format!(
            "reading the root certificates of sslrootcert `{path}`: {error}"
        ))
    };
    let certs = CertificateDer::pem_file_iter(path)
        .map_err(|error| unreadable(&error))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|error| unreadable(&error))?;
    if certs.is_empty() {
        return Err(unreadable(&"the file holds no PEM certificate"));
    }
    Ok(certs)
}

impl<S> MakeTlsConnect<S> for MakeRustlsConnect
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    type Stream = RustlsStream<S>;
    type TlsConnect = RustlsConnect;
    type Error = StoreError;

    fn make_tls_connect(&mut self, host: &str) -> Result<RustlsConnect, StoreError> {
        // `tokio-postgres` asks for a connector before every connection, with an empty host
        // for a Unix socket (PostgreSQL has no TLS there, and `tokio-postgres` never starts
        // one): refusing the empty name would refuse every socket connection.
        if host.is_empty() {
            return Ok(RustlsConnect {
                connector: tokio_rustls::TlsConnector::from(self.config.clone()),
                server: None,
            });
        }
        let server = ServerName::try_from(host.to_owned()).map_err(|error| {
            StoreError::Backend(format!("`{host}` is no host name for TLS: {error}"))
        })?;
        let server = Some(server);
        Ok(RustlsConnect {
            connector: tokio_rustls::TlsConnector::from(self.config.clone()),
            server,
        })
    }
}

/// The TLS handshake of one connection.
pub(crate) struct RustlsConnect {
    connector: tokio_rustls::TlsConnector,
    /// The host connected to (`None`: a Unix socket, where no handshake is made).
    server: Option<ServerName<'static>>,
}

type Connecting<S> = Pin<Box<dyn Future<Output = Result<RustlsStream<S>, HandshakeError>> + Send>>;

impl<S> TlsConnect<S> for RustlsConnect
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    type Stream = RustlsStream<S>;
    type Error = HandshakeError;
    type Future = Connecting<S>;

    fn connect(self, stream: S) -> Connecting<S> {
        Box::pin(async move {
            let Some(server) = self.server else {
                return Err(HandshakeError::Other(std::io::Error::other(
                    "no host name for TLS (a Unix socket)",
                )));
            };
            match self.connector.connect(server, stream).await {
                Ok(stream) => Ok(RustlsStream(stream)),
                Err(error) => Err(HandshakeError::from(error)),
            }
        })
    }
}

/// Why a TLS handshake failed, saying plainly when the server's certificate is not trusted.
#[derive(Debug, thiserror::Error)]
pub(crate) enum HandshakeError {
    /// The server's certificate was refused.
    #[error(
        "the server's certificate is not trusted ({0}); name the root certificate that signed \
         it with sslrootcert=<PEM file> in the connection string"
    )]
    Untrusted(rustls::CertificateError),
    /// Anything else.
    #[error("{0}")]
    Other(std::io::Error),
}

impl From<std::io::Error> for HandshakeError {
    fn from(error: std::io::Error) -> Self {
        let refused = error
            .get_ref()
            .and_then(|inner| inner.downcast_ref::<rustls::Error>());
        match refused {
            Some(rustls::Error::InvalidCertificate(why)) => HandshakeError::Untrusted(why.clone()),
            _ => HandshakeError::Other(error),
        }
    }
}

/// A connection's TLS stream.
pub(crate) struct RustlsStream<S>(tokio_rustls::client::TlsStream<S>);

impl<S: AsyncRead + AsyncWrite + Unpin> AsyncRead for RustlsStream<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().0).poll_read(cx, buf)
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> AsyncWrite for RustlsStream<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.get_mut().0).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().0).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().0).poll_shutdown(cx)
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> tokio_postgres::tls::TlsStream for RustlsStream<S> {
    fn channel_binding(&self) -> ChannelBinding {
        ChannelBinding::none()
    }
}

/// `sslmode=prefer` without `sslrootcert`: accepts the server's certificate unchecked (the
/// handshake's signatures are still checked), so the connection is encrypted, not
/// authenticated.
#[derive(Debug)]
struct EncryptOnly(WebPkiSupportedAlgorithms);

impl ServerCertVerifier for EncryptOnly {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        signature: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, signature, &self.0)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        signature: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, signature, &self.0)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_schemes()
    }
}
