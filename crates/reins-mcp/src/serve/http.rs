//! Serving an [`McpService`] over streamable HTTP: rmcp's tower service on a hyper HTTP/1
//! server, one task per connection, with an optional bearer token checked first (without
//! one, only loopback and the allowed `Host`s are served). A client is held to bounds: its
//! request headers must arrive within the header timeout, and connections past the cap are
//! closed at once. Connections are accepted with [`accept_connection`], which outlasts a
//! listener's passing failures. Sessions are rmcp's, with what a client may not send in one
//! refused first (`sessions.rs`); a `DELETE` naming a session the server does not know is
//! answered `404`, as every request naming one is.

use super::McpService;
use super::accept::accept_connection;
use super::sessions::Sessions;
use crate::weighed::is_light;
use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, LengthLimitError, Limited};
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;
use tower_service::Service;

/// How long an HTTP client may take to send a request's headers unless told otherwise
/// ([`McpService::http_header_timeout`]).
pub const DEFAULT_HTTP_HEADER_TIMEOUT: Duration = Duration::from_secs(30);

/// How long an HTTP client may take to send a request's body unless told otherwise
/// ([`McpService::http_body_timeout`]).
pub const DEFAULT_HTTP_BODY_TIMEOUT: Duration = Duration::from_secs(30);

/// The browser origins a server without a bearer token accepts unless told more: pages
/// served from this machine.
const LOOPBACK_ORIGINS: [&str; 6] = [
    "http://localhost:*",
    "http://127.0.0.1:*",
    "http://[::1]:*",
    "https://localhost:*",
    "https://127.0.0.1:*",
    "https://[::1]:*",
];

/// The most bytes of a request's body read (rmcp's own bound).
const MAX_REQUEST_BODY: usize = 4 * 1024 * 1024;

/// How many sessions are open at once unless told otherwise
/// ([`McpService::max_http_sessions`]).
pub const DEFAULT_MAX_HTTP_SESSIONS: usize = 1024;

/// How many HTTP connections are served at once unless told otherwise
/// ([`McpService::max_http_connections`]).
pub const DEFAULT_MAX_HTTP_CONNECTIONS: usize = 256;

/// An [`McpService`] served over streamable HTTP, from
/// [`McpService::serve_http`]. It serves until [`shutdown`](McpHttpServer::shutdown) or
/// until dropped.
///
/// Clients cannot hold it with connections they do not use: a connection whose request
/// headers have not all arrived within [`McpService::http_header_timeout`] (counted from
/// the start of each request, so an idle kept-alive connection too) is closed, a request
/// whose body has not all arrived within [`McpService::http_body_timeout`] is answered
/// `408` and its connection closed, and a connection accepted while
/// [`McpService::max_http_connections`] are open is closed at once, unanswered. A response
/// being sent (an event stream, say) is not timed. Nor can a request's body take more
/// memory than its length says: a body over 4 MiB is answered `413`, and so is one whose
/// JSON would take more than 32 MiB once parsed (a few megabytes of small objects).
///
/// ```no_run
/// use reins::tool::ToolSet;
/// use reins_mcp::{McpServer, McpService};
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
/// let served = McpService::new(ToolSet::new()).serve_http_with_bearer_token(listener, "s3cret")?;
/// let client = McpServer::http(served.url()).bearer_token("s3cret").connect().await?;
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct McpHttpServer {
    address: SocketAddr,
    stop: CancellationToken,
}

impl McpHttpServer {
    pub(crate) fn start(
        service: McpService,
        listener: TcpListener,
        bearer_token: Option<String>,
    ) -> std::io::Result<Self> {
        let address = listener.local_addr()?;
        let stop = CancellationToken::new();
        let mut config = StreamableHttpServerConfig::default();
        config.cancellation_token = stop.child_token();
        // rmcp accepts loopback `Host`s only, against DNS rebinding. A token keeps a
        // rebound page out as well (the page cannot know it), and its clients are usually
        // elsewhere, naming the server by its own name.
        if bearer_token.is_some() {
            config = config.disable_allowed_hosts();
        } else {
            config
                .allowed_hosts
                .extend(service.allowed_hosts.iter().cloned());
            // A page of another site must not reach the tools through a visitor's browser.
            let origins = LOOPBACK_ORIGINS.iter().map(|origin| (*origin).to_owned());
            config =
                config.with_allowed_origins(origins.chain(service.allowed_origins.iter().cloned()));
        }
        let limits = ConnectionLimits {
            header_timeout: service.http_header_timeout,
            body_timeout: service.http_body_timeout,
            slots: Arc::new(Semaphore::new(service.max_http_connections)),
        };
        let sessions = Arc::new(Sessions::default());
        let session_cap = SessionCap {
            sessions: sessions.clone(),
            max: service.max_http_sessions,
        };
        let rmcp_service =
            StreamableHttpService::new(move || Ok(service.clone()), sessions, config);
        let expected = bearer_token.map(|token| Arc::<str>::from(format!("Bearer {token}")));
        tokio::spawn(accept_loop(
            listener,
            (rmcp_service, session_cap),
            expected,
            limits,
            stop.clone(),
        ));
        Ok(McpHttpServer { address, stop })
    }

    /// The address it listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.address
    }

    /// The URL clients connect to (`http://<address>/mcp`).
    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.address)
    }

    /// Stops accepting connections and ends every session.
    pub fn shutdown(&self) {
        self.stop.cancel();
    }
}

impl Drop for McpHttpServer {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

type RmcpService = StreamableHttpService<McpService, Sessions>;

/// The sessions rmcp keeps, and how many may be open at once.
#[derive(Clone)]
struct SessionCap {
    sessions: Arc<Sessions>,
    max: usize,
}

impl SessionCap {
    /// Whether `request` would open a session (a POST without a session id: an `initialize`,
    /// or else one rmcp refuses) while as many as allowed are open. Checked before rmcp
    /// opens one, so requests arriving together may open a few more.
    async fn is_full(&self, request: &http::Request<Incoming>) -> bool {
        request.method() == http::Method::POST
            && !request.headers().contains_key("mcp-session-id")
            && self.sessions.count().await >= self.max
    }

    /// Whether `request` is a `DELETE` of a session that is not open (never was, or ended).
    /// rmcp answers it `202` as if it ended one; the specification asks a server to answer
    /// `404` to any request naming a session it does not know, so that a client knows it
    /// has none.
    async fn is_delete_of_unknown(&self, request: &http::Request<Incoming>) -> bool {
        if request.method() != http::Method::DELETE {
            return false;
        }
        match request.headers().get("mcp-session-id") {
            Some(id) => !self.sessions.is_open(id.to_str().unwrap_or_default()).await,
            None => false,
        }
    }
}

/// What bounds the server's connections: how long a request's headers may take, and the
/// slots of the connections served at once (a connection holds one for its life).
struct ConnectionLimits {
    header_timeout: Duration,
    body_timeout: Duration,
    slots: Arc<Semaphore>,
}

async fn accept_loop(
    listener: TcpListener,
    (service, session_cap): (RmcpService, SessionCap),
    expected: Option<Arc<str>>,
    limits: ConnectionLimits,
    stop: CancellationToken,
) {
    loop {
        let (stream, peer) = tokio::select! {
            () = stop.cancelled() => return,
            accepted = accept_connection(&listener) => accepted,
        };
        // Closed at once rather than left waiting: a waiting connection would be answered
        // only when another ends, and its client would time out not knowing why.
        let Ok(slot) = limits.slots.clone().try_acquire_owned() else {
            tracing::warn!(
                target: "reins_mcp::serve",
                %peer,
                "too many open connections; this one is closed"
            );
            continue;
        };
        tokio::spawn(serve_connection(
            stream,
            slot,
            (service.clone(), session_cap.clone()),
            expected.clone(),
            (limits.header_timeout, limits.body_timeout),
            stop.clone(),
        ));
    }
}

/// Serves one connection until it ends (or the server stops), holding `_slot` meanwhile.
async fn serve_connection(
    stream: TcpStream,
    _slot: OwnedSemaphorePermit,
    (service, session_cap): (RmcpService, SessionCap),
    expected: Option<Arc<str>>,
    (header_timeout, body_timeout): (Duration, Duration),
    stop: CancellationToken,
) {
    let handler = hyper::service::service_fn(move |request| {
        let mut service = service.clone();
        let expected = expected.clone();
        let session_cap = session_cap.clone();
        async move {
            if !authorized(&request, expected.as_deref()) {
                return Ok(unauthorized());
            }
            if session_cap.is_full(&request).await {
                return Ok(plain_response(
                    http::StatusCode::SERVICE_UNAVAILABLE,
                    "too many open sessions; try again once one has ended",
                ));
            }
            let deletes_unknown = session_cap.is_delete_of_unknown(&request).await;
            // Only the body is timed: the answer takes as long as the tool does (a client of
            // the 2026-07-28 revision gets it as the response itself, not as a stream that
            // rmcp starts at once).
            let (parts, body) = request.into_parts();
            let read = Limited::new(body, MAX_REQUEST_BODY).collect();
            let body = match tokio::time::timeout(body_timeout, read).await {
                Ok(Ok(body)) => body.to_bytes(),
                Ok(Err(error)) if error.is::<LengthLimitError>() => {
                    return Ok(plain_response(
                        http::StatusCode::PAYLOAD_TOO_LARGE,
                        "the request's body is larger than 4 MiB",
                    ));
                }
                Ok(Err(_)) => {
                    return Ok(plain_response(
                        http::StatusCode::BAD_REQUEST,
                        "the request's body could not be read",
                    ));
                }
                Err(_elapsed) => {
                    return Ok(plain_response(
                        http::StatusCode::REQUEST_TIMEOUT,
                        "the request's body did not arrive in time",
                    ));
                }
            };
            // rmcp parses a body into `serde_json` values: 4 MiB of `{"a":0},` would take
            // some 400 MB, and a few connections at once gigabytes. Weighed first, as the
            // client weighs a server's answers.
            if !is_light(&body) {
                return Ok(plain_response(
                    http::StatusCode::PAYLOAD_TOO_LARGE,
                    "the request's JSON would take more than 32 MiB of memory once parsed \
                     (too many small objects or values)",
                ));
            }
            let response = service
                .call(http::Request::from_parts(parts, Full::new(body)))
                .await;
            // Only a DELETE rmcp accepted: its refusals (a `Host` or `Origin` not allowed, a
            // revision not supported) stand.
            match response {
                Ok(response)
                    if deletes_unknown && response.status() == http::StatusCode::ACCEPTED =>
                {
                    Ok(plain_response(
                        http::StatusCode::NOT_FOUND,
                        "Not Found: Session not found",
                    ))
                }
                response => response,
            }
        }
    });
    let connection = hyper::server::conn::http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(header_timeout)
        .serve_connection(TokioIo::new(stream), handler);
    tokio::select! {
        () = stop.cancelled() => {}
        result = connection => {
            if let Err(error) = result {
                tracing::debug!(target: "reins_mcp::serve", %error, "connection ended");
            }
        }
    }
}

fn authorized(request: &http::Request<Incoming>, expected: Option<&str>) -> bool {
    let Some(expected) = expected else {
        return true;
    };
    request
        .headers()
        .get(http::header::AUTHORIZATION)
        .is_some_and(|value| same_secret(value.as_bytes(), expected.as_bytes()))
}

/// Whether `given` is `expected`, taking as long whichever byte differs: `==` stops at the
/// first difference, which lets a client time its way to the token byte by byte. (The
/// length may show; knowing it does not help find the bytes.)
fn same_secret(given: &[u8], expected: &[u8]) -> bool {
    given.len() == expected.len()
        && given
            .iter()
            .zip(expected)
            .fold(0u8, |difference, (a, b)| difference | (a ^ b))
            == 0
}

fn plain_response(
    status: http::StatusCode,
    text: &'static str,
) -> http::Response<BoxBody<Bytes, Infallible>> {
    let mut response = http::Response::new(
        Full::new(Bytes::from_static(text.as_bytes()))
            .map_err(|never| match never {})
            .boxed(),
    );
    *response.status_mut() = status;
    response
}

fn unauthorized() -> http::Response<BoxBody<Bytes, Infallible>> {
    let mut response = plain_response(
        http::StatusCode::UNAUTHORIZED,
        "missing or wrong bearer token",
    );
    response.headers_mut().insert(
        http::header::WWW_AUTHENTICATE,
        http::HeaderValue::from_static("Bearer"),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::same_secret;

    #[test]
    fn tokens_match_only_when_equal() {
        assert!(same_secret(b"Bearer s3cret", b"Bearer s3cret"));
        assert!(!same_secret(b"Bearer s3creT", b"Bearer s3cret"));
        assert!(!same_secret(b"Bearer s3cre", b"Bearer s3cret"));
        assert!(!same_secret(b"", b"Bearer s3cret"));
    }
}
