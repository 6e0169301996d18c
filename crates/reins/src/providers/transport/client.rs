//! The configured connection to one API: its credential, timeouts and limits, how a wait is
//! bounded, and how a server's text is scrubbed of the key. Sending (`send`) and reading
//! bodies (`body`) build on it.

use super::credentials::endpoint_of;
use super::echoes::Secrets;
use super::retry::RetryPolicy;
use super::settings::{ApiKey, Limits, Timeouts, scrub_key, scrub_secret};
use crate::completion::CompletionError;
use reqwest::Url;
use reqwest::header::{HeaderName, HeaderValue};
use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;

/// A configured connection to one API: built once by a provider's builder, shared by its
/// models.
pub struct HttpClient {
    pub(crate) http: reqwest::Client,
    /// The base URL, without a trailing slash.
    pub(crate) base_url: String,
    /// The base URL without user info, query or fragment, and scrubbed of the key: what the
    /// models say of where they are served (`CompletionModel::endpoint`), and `Debug` shows.
    pub(crate) endpoint: String,
    /// Query parameters added to every request (e.g. Azure's `api-version`).
    pub(crate) query: Vec<(String, String)>,
    /// The header carrying the key, its value marked sensitive.
    pub(crate) credential: Option<(HeaderName, HeaderValue)>,
    /// The key, to scrub it from anything a server echoes back.
    pub(crate) api_key: Option<ApiKey>,
    /// Query values that look like credentials, as given and as the URL encodes them, and
    /// header values that do: scrubbed like the key.
    pub(crate) other_secrets: Vec<String>,
    /// The same secrets, replaced wherever an answer echoes them (`None` without any).
    pub(crate) echoes: Option<Arc<Secrets>>,
    pub(crate) timeouts: Timeouts,
    pub(crate) retry: RetryPolicy,
    pub(crate) limits: Limits,
}

/// Which wait a timeout ended, for its message.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Wait {
    /// The response's headers.
    FirstByte,
    /// The next read of a body or stream.
    Idle,
}

impl HttpClient {
    /// The deadline of a call starting now.
    pub(crate) fn deadline(&self) -> Instant {
        after(self.timeouts.total)
    }

    /// Awaits `future` for at most `step`, and not past `deadline`.
    pub(crate) async fn within<T>(
        &self,
        deadline: Instant,
        wait: Wait,
        future: impl Future<Output = T>,
    ) -> Result<T, CompletionError> {
        let step = match wait {
            Wait::FirstByte => self.timeouts.first_byte,
            Wait::Idle => self.timeouts.idle,
        };
        let step_end = after(step);
        match tokio::time::timeout_at(step_end.min(deadline), future).await {
            Ok(value) => Ok(value),
            Err(_) if deadline <= step_end => Err(CompletionError::Timeout(format!(
                "the call passed its total deadline of {} ms",
                self.timeouts.total.as_millis()
            ))),
            Err(_) => Err(CompletionError::Timeout(match wait {
                Wait::FirstByte => format!("no response headers within {} ms", step.as_millis()),
                Wait::Idle => format!("the server sent nothing for {} ms", step.as_millis()),
            })),
        }
    }

    /// Replaces the key, and query and header values that look like credentials, wherever a
    /// server's text (or a transport error quoting the URL) shows them, whole or cut short by
    /// an excerpt.
    pub(crate) fn scrub(&self, text: &str) -> String {
        let mut text = scrub_key(text, self.api_key.as_ref());
        for secret in &self.other_secrets {
            text = scrub_secret(&text, secret);
        }
        // An error body is often JSON: a secret it spells with escapes (`\u002d`) is one too.
        if let Some(echoes) = &self.echoes {
            echoes.scrub(&mut text);
        }
        text
    }

    /// A transport error, scrubbed like everything a server sends.
    pub(crate) fn transport_error(&self, error: &reqwest::Error) -> CompletionError {
        let text = self.scrub(&error_chain(error));
        if error.is_timeout() {
            CompletionError::Timeout(text)
        } else {
            CompletionError::Transport(text)
        }
    }

    pub(super) fn url(&self, path: &str) -> Result<Url, CompletionError> {
        let path = path.trim_start_matches('/');
        let joined = format!("{}/{path}", self.base_url);
        let mut url = Url::parse(&joined).map_err(|error| {
            // Named by the endpoint: the base URL as given may hold a credential.
            let shown = self.scrub(&format!("{}/{path}", self.endpoint));
            CompletionError::InvalidRequest(format!("`{shown}` is not a valid URL: {error}"))
        })?;
        if !self.query.is_empty() {
            url.query_pairs_mut().extend_pairs(&self.query);
        }
        Ok(url)
    }
}

/// The instant `wait` from now. A wait longer than the clock holds (`Duration::MAX`, how a
/// caller says "no limit") is a century: adding it as is would panic.
fn after(wait: Duration) -> Instant {
    const CENTURY: Duration = Duration::from_secs(100 * 365 * 24 * 3600);
    let now = Instant::now();
    now.checked_add(wait)
        .or_else(|| now.checked_add(CENTURY))
        .unwrap_or(now)
}

/// An error and its sources in one line: reqwest's own message alone ("error sending
/// request") hides the cause. Where reqwest quotes the request's URL, only where it points
/// is shown: its query (and the base URL's, if it had one) may hold a credential whose name
/// says nothing of it. A connection that could not be made is said as such, with where and
/// its deepest cause ("could not connect to http://127.0.0.1:9/v1/chat/completions
/// (Connection refused (os error 111))"): the wrappers between say nothing more.
fn error_chain(error: &reqwest::Error) -> String {
    if error.is_connect()
        && let Some(url) = error.url()
    {
        let mut cause = std::error::Error::source(error);
        let mut deepest = None;
        while let Some(inner) = cause {
            deepest = Some(inner);
            cause = inner.source();
        }
        if let Some(deepest) = deepest {
            return format!("could not connect to {} ({deepest})", endpoint_of(url));
        }
    }
    let text = crate::text::with_causes(error);
    match error.url() {
        Some(url) => text.replace(url.as_str(), &endpoint_of(url)),
        None => text,
    }
}

impl fmt::Debug for HttpClient {
    /// Query values that look like credentials are redacted; the credential header's value
    /// and the key redact themselves.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpClient")
            .field("http", &self.http)
            .field("endpoint", &self.endpoint)
            .field(
                "query",
                &super::credentials::shown_query(&self.query, self.api_key.as_ref()),
            )
            .field("credential", &self.credential)
            .field("api_key", &self.api_key)
            .field("timeouts", &self.timeouts)
            .field("retry", &self.retry)
            .field("limits", &self.limits)
            .finish()
    }
}

impl HttpClient {
    /// `error` with the key replaced in whatever text it carries.
    pub(crate) fn scrub_error(&self, error: CompletionError) -> CompletionError {
        if self.api_key.is_none() && self.other_secrets.is_empty() {
            return error;
        }
        match error {
            CompletionError::Http { status, body } => CompletionError::Http {
                status,
                body: self.scrub(&body),
            },
            CompletionError::Transport(text) => CompletionError::Transport(self.scrub(&text)),
            CompletionError::Timeout(text) => CompletionError::Timeout(self.scrub(&text)),
            CompletionError::Decode(text) => CompletionError::Decode(self.scrub(&text)),
            CompletionError::Other(text) => CompletionError::Other(self.scrub(&text)),
            other => other,
        }
    }
}
