//! The HTTP client under rmcp's streamable HTTP transport: every message a server sends is
//! read bounded and weighed before it is parsed, as over stdio (`weighed.rs`).
//!
//! rmcp's transport is generic over the client that makes its HTTP requests
//! ([`StreamableHttpClient`]); its own, over `reqwest`, parses a JSON body within 16 MiB and
//! each SSE event within 16 MiB whatever the parsed structure costs, so that 16 MiB of
//! `{"a":0},…` takes gigabytes. This one makes the same requests (the session id header, the
//! bearer token, the headers configured, `Last-Event-ID` to resume a stream) and reads the
//! answers itself: a JSON body is read up to [`MAX_MESSAGE_BYTES`](crate::weighed::MAX_MESSAGE_BYTES) (not trusting its
//! `Content-Length`; past that it is left unread and the connection closed), weighed, then
//! parsed; an event stream is read by `http_events.rs`, which weighs each event's data.
//!
//! The trait gives rmcp a JSON body already parsed, so a body refused unread becomes, in its
//! place, the error answering the request (found by its `id`, or else the request the POST
//! sent: a JSON body is that request's answer), and rmcp hands that to the caller as the
//! server's answer. A refused body answering nothing (the answer to a notification) is
//! dropped with a warning. A body that is no JSON-RPC message rmcp reads becomes the error
//! answering its request the same way (`unreadable.rs`), rather than an error that fails
//! the request as a lost connection.
//!
//! A body holding a batch (`batch.rs`) is given to rmcp as an event stream of its messages.
//!
//! A 404 to a request carrying the session id means the server ended the session (or lost
//! it in a restart): the request fails with rmcp's `SessionExpired`, and the client marks its
//! [`SessionEnd`], which makes the connection dead (`client.rs`) so that the next request opens
//! a new one with a whole, checked handshake. rmcp's own recovery, which would send the first
//! `initialize` again behind the caller's back and retry the request in the new session, is
//! off (`connect.rs`): its new handshake's answer is never checked (a revision reins does not
//! speak would be taken) nor seen (the tools may have changed), and a call would be sent twice.
//!
//! What rmcp's client does for a `server/discover` a pre-2026 server rejects with a 4xx is
//! not done here: reins starts every connection with an `initialize` (`handler.rs`) and
//! never sends `server/discover`.
//!
//! The requests are made here; what a JSON answer holds is read in `answer.rs`, a body read
//! bounded in `body.rs`, what its headers say in `headers.rs`, redirects chosen in
//! `redirects.rs` and a session's end kept in `session_end.rs`.

mod answer;
mod body;
mod headers;
mod redirects;
mod session_end;

use crate::handshake::{events_with_capabilities, is_initialize};
use crate::hidden::Credentials;
use crate::http_events::weighed_events;
use body::{body_stream, unquoted};
use futures::stream::BoxStream;
use headers::{challenge, content_type, has_type, neither_json_nor_events, status_error};
use http::header::ACCEPT;
use http::{HeaderName, HeaderValue, StatusCode};
use redirects::same_origin_redirects;
use rmcp::model::{ClientJsonRpcMessage, JsonRpcMessage};
use rmcp::transport::common::http_header::{
    EVENT_STREAM_MIME_TYPE, HEADER_LAST_EVENT_ID, HEADER_SESSION_ID, JSON_MIME_TYPE,
};
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};
use sse_stream::Sse;
use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

pub(crate) use session_end::SessionEnd;

/// What an HTTP request of this client fails with.
type HttpError = StreamableHttpError<reqwest::Error>;

/// The headers rmcp sets itself, which a configured header may not replace.
const RESERVED_HEADERS: [&str; 3] = ["accept", "mcp-session-id", "last-event-id"];

/// What the client accepts as an answer to a POST or a GET.
const ACCEPTED_TYPES: &str = "text/event-stream, application/json";

/// A streamable HTTP client reading each message bounded and weighed (see the module's
/// documentation). The transport passes the token and headers with each request; the client
/// knows the server's credentials only to keep them out of what it logs and answers of a
/// message it refuses or cannot read (whose `id` or parse error may quote them).
#[derive(Clone)]
pub(crate) struct WeighedHttpClient {
    client: reqwest::Client,
    server: Arc<str>,
    credentials: Arc<Credentials>,
    session_end: SessionEnd,
}

impl WeighedHttpClient {
    /// A client for the server named `server` (in warnings), whose credentials are
    /// `credentials`. Redirects are followed only to the same origin and only when they keep
    /// the method and body (307, 308): another host would be sent the session id and the
    /// headers, and a POST turned into a GET would lose its message. Idle connections are not kept, as rmcp's client does not keep them: a
    /// connection whose answer was left unread must not be reused.
    pub(crate) fn new(
        server: &str,
        credentials: Credentials,
    ) -> Result<WeighedHttpClient, reqwest::Error> {
        let client = reqwest::Client::builder()
            .pool_max_idle_per_host(0)
            .redirect(same_origin_redirects())
            .build()?;
        Ok(WeighedHttpClient {
            client,
            server: Arc::from(server),
            credentials: Arc::new(credentials),
            session_end: SessionEnd::default(),
        })
    }

    /// What says whether the server ended this client's session.
    pub(crate) fn session_end(&self) -> SessionEnd {
        self.session_end.clone()
    }

    /// Refuses a session id quoting the server's credentials: it would be sent back with
    /// every request, and rmcp logs it (at INFO, when the session ends). A server choosing
    /// such an id cannot be talked to without showing them; its handshake fails instead.
    fn refuse_quoting_credentials(&self, session_id: &str) -> Result<(), HttpError> {
        let quotes = self
            .credentials
            .echoes()
            .is_some_and(|echoes| matches!(echoes.redact(session_id), Cow::Owned(_)));
        if !quotes {
            return Ok(());
        }
        let why = "the server's session id (Mcp-Session-Id) quotes its credentials; it is refused";
        tracing::warn!(target: "reins_mcp", server = %self.server, "{why}");
        Err(StreamableHttpError::UnexpectedServerResponse(
            Cow::Borrowed(why),
        ))
    }

    /// A request to `uri` with the token and headers every request carries.
    fn request(
        &self,
        method: http::Method,
        uri: &str,
        session_id: Option<&str>,
        auth_token: Option<String>,
        headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<reqwest::RequestBuilder, HttpError> {
        let mut request = self.client.request(method, uri);
        if let Some(token) = auth_token {
            // Marked sensitive by reqwest: never shown in Debug output.
            request = request.bearer_auth(token);
        }
        for (name, value) in headers {
            if RESERVED_HEADERS.contains(&name.as_str()) {
                return Err(StreamableHttpError::ReservedHeaderConflict(
                    name.to_string(),
                ));
            }
            request = request.header(name, value);
        }
        if let Some(session_id) = session_id {
            request = request.header(HEADER_SESSION_ID, session_id);
        }
        Ok(request)
    }
}

impl StreamableHttpClient for WeighedHttpClient {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_token,
            custom_headers,
            StreamableHttpResponseLimits::default(),
        )
        .await
    }

    /// Sends `message`. Of rmcp's `limits`, only the length of an error's diagnostic is
    /// used: a message is held to [`MAX_MESSAGE_BYTES`](crate::weighed::MAX_MESSAGE_BYTES) and weighed, whatever else they say.
    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        let asked = match &message {
            JsonRpcMessage::Request(request) => Some(request.id.clone()),
            _ => None,
        };
        let session_sent = session_id.is_some();
        // Its answer is read leniently (`handshake.rs`) before rmcp's transport reads it.
        let initialize = is_initialize(&message);
        let response = self
            .request(
                http::Method::POST,
                &uri,
                session_id.as_deref(),
                auth_token,
                custom_headers,
            )?
            .header(ACCEPT, ACCEPTED_TYPES)
            .json(&message)
            .send()
            .await
            .map_err(unquoted)?;
        let status = response.status();
        challenge(status, response.headers())?;
        if matches!(status, StatusCode::ACCEPTED | StatusCode::NO_CONTENT) {
            return Ok(StreamableHttpPostResponse::Accepted);
        }
        if status == StatusCode::NOT_FOUND && session_sent {
            tracing::warn!(target: "reins_mcp", server = %self.server, "the MCP server ended the session (HTTP 404)");
            self.session_end.mark();
            return Err(StreamableHttpError::SessionExpired);
        }
        let session_id = response
            .headers()
            .get(HEADER_SESSION_ID)
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned);
        if let Some(session_id) = &session_id {
            self.refuse_quoting_credentials(session_id)?;
        }
        if !status.is_success() {
            return self
                .failure(response, limits, asked.as_ref(), session_id)
                .await;
        }
        if has_type(response.headers(), EVENT_STREAM_MIME_TYPE) {
            let kind = content_type(response.headers());
            let (server, credentials) = (self.server.clone(), self.credentials.clone());
            let events = weighed_events(body_stream(response), server, credentials, asked, kind);
            let events = events_with_capabilities(initialize, events);
            return Ok(StreamableHttpPostResponse::Sse(events, session_id));
        }
        // A notification or an answer of the client's awaits nothing: whatever comes back
        // (an empty 200, a body that is not a message) stands for "accepted".
        if !has_type(response.headers(), JSON_MIME_TYPE) {
            return match asked {
                None => Ok(StreamableHttpPostResponse::Accepted),
                Some(_) => Err(StreamableHttpError::UnexpectedServerResponse(Cow::Owned(
                    neither_json_nor_events(response.headers()),
                ))),
            };
        }
        self.json_answer(response, asked, initialize, session_id)
            .await
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), HttpError> {
        let response = self
            .request(
                http::Method::DELETE,
                &uri,
                Some(&session_id),
                auth_token,
                custom_headers,
            )?
            .send()
            .await
            .map_err(unquoted)?;
        if response.status() == StatusCode::METHOD_NOT_ALLOWED {
            tracing::debug!(target: "reins_mcp", server = %self.server, "the server keeps its sessions (DELETE not allowed)");
            return Ok(());
        }
        response.error_for_status().map_err(unquoted)?;
        Ok(())
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, HttpError> {
        let mut request = self
            .request(
                http::Method::GET,
                &uri,
                session_id.as_deref(),
                auth_token,
                custom_headers,
            )?
            .header(ACCEPT, ACCEPTED_TYPES);
        if let Some(last_event_id) = last_event_id {
            request = request.header(HEADER_LAST_EVENT_ID, last_event_id);
        }
        let response = request.send().await.map_err(unquoted)?;
        let status = response.status();
        if status == StatusCode::METHOD_NOT_ALLOWED {
            return Err(StreamableHttpError::ServerDoesNotSupportSse);
        }
        challenge(status, response.headers())?;
        if let Some(error) = status_error(status, response.headers()) {
            return Err(error.into());
        }
        let response = response.error_for_status().map_err(unquoted)?;
        // As rmcp's own client: a stream sent as JSON is read as events all the same.
        let headers = response.headers();
        if !has_type(headers, EVENT_STREAM_MIME_TYPE) && !has_type(headers, JSON_MIME_TYPE) {
            return Err(StreamableHttpError::UnexpectedContentType(content_type(
                headers,
            )));
        }
        let kind = content_type(headers);
        let (server, credentials) = (self.server.clone(), self.credentials.clone());
        Ok(weighed_events(
            body_stream(response),
            server,
            credentials,
            None,
            kind,
        ))
    }
}
