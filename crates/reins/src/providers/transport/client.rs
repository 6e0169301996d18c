//! Sending one request: the credential, retries with backoff, the first-byte timeout, the total
//! deadline, and error statuses and redirects turned into errors.

use super::body::{read_error_body, scrub_key};
use super::retry::{RetryPolicy, retry_after, retryable_status};
use super::settings::{ApiKey, Limits, Timeouts};
use crate::completion::CompletionError;
use bytes::Bytes;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderName, HeaderValue, LOCATION};
use reqwest::{Response, Url};
use std::future::Future;
use tokio::time::Instant;

/// A configured connection to one API: built once by a provider's builder, shared by its
/// models.
#[derive(Debug)]
pub struct HttpClient {
    pub(crate) http: reqwest::Client,
    /// The base URL, without a trailing slash.
    pub(crate) base_url: String,
    /// Query parameters added to every request (e.g. Azure's `api-version`).
    pub(crate) query: Vec<(String, String)>,
    /// The header carrying the key, its value marked sensitive.
    pub(crate) credential: Option<(HeaderName, HeaderValue)>,
    /// The key, to scrub it from anything a server echoes back.
    pub(crate) api_key: Option<ApiKey>,
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
        Instant::now() + self.timeouts.total
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
        let step_end = Instant::now() + step;
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

    /// Replaces the key wherever a server's text echoes it.
    pub(crate) fn scrub(&self, text: &str) -> String {
        scrub_key(text, self.api_key.as_ref())
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

    fn url(&self, path: &str) -> Result<Url, CompletionError> {
        let joined = format!("{}/{}", self.base_url, path.trim_start_matches('/'));
        let mut url = Url::parse(&joined).map_err(|error| {
            CompletionError::InvalidRequest(format!("`{joined}` is not a valid URL: {error}"))
        })?;
        if !self.query.is_empty() {
            url.query_pairs_mut().extend_pairs(&self.query);
        }
        Ok(url)
    }

    /// Posts `body` to `path`, retrying as the policy allows within the deadline, and returns
    /// a successful response. Error statuses become [`CompletionError::Http`] (the body's start,
    /// scrubbed), redirects [`CompletionError::Redirected`].
    pub(crate) async fn post(
        &self,
        path: &str,
        body: &serde_json::Value,
        stream: bool,
        deadline: Instant,
    ) -> Result<Response, CompletionError> {
        let url = self.url(path)?;
        let body = Bytes::from(serde_json::to_vec(body).map_err(|error| {
            CompletionError::InvalidRequest(format!("the request body is not JSON: {error}"))
        })?);
        let accept = if stream {
            "text/event-stream"
        } else {
            "application/json"
        };
        let mut attempt = 0;
        loop {
            let mut request = self
                .http
                .post(url.clone())
                .header(CONTENT_TYPE, "application/json")
                .header(ACCEPT, accept)
                .body(body.clone());
            if let Some((name, value)) = &self.credential {
                request = request.header(name.clone(), value.clone());
            }
            let (failure, retry_after) =
                match self.within(deadline, Wait::FirstByte, request.send()).await {
                    Ok(Ok(response)) if response.status().is_success() => return Ok(response),
                    Ok(Ok(response)) if response.status().is_redirection() => {
                        return Err(self.redirected(&response));
                    }
                    Ok(Ok(response)) => {
                        let status = response.status();
                        let wait = retry_after(response.headers());
                        let body = read_error_body(self, response, deadline).await;
                        let error = CompletionError::Http {
                            status: status.as_u16(),
                            body,
                        };
                        if !retryable_status(status) {
                            return Err(error);
                        }
                        (error, wait)
                    }
                    Ok(Err(error)) => (self.transport_error(&error), None),
                    Err(timeout) => (timeout, None),
                };
            if attempt >= self.retry.max_retries {
                return Err(failure);
            }
            attempt += 1;
            let wait = self.retry.delay(attempt, retry_after);
            if Instant::now() + wait >= deadline {
                // Waiting would pass the deadline: the last failure is the answer.
                return Err(failure);
            }
            tracing::warn!(error = %failure, attempt, wait_ms = wait.as_millis() as u64, "retrying the model call");
            tokio::time::sleep(wait).await;
        }
    }

    fn redirected(&self, response: &Response) -> CompletionError {
        let location = response
            .headers()
            .get(LOCATION)
            .map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned())
            .unwrap_or_else(|| "(no Location header)".to_owned());
        CompletionError::Redirected {
            status: response.status().as_u16(),
            location: self.scrub(&super::excerpt(&location)),
        }
    }
}

/// An error and its sources in one line: reqwest's own message alone ("error sending
/// request") hides the cause.
fn error_chain(error: &reqwest::Error) -> String {
    let mut text = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        let message = cause.to_string();
        if !text.contains(&message) {
            text.push_str(": ");
            text.push_str(&message);
        }
        source = cause.source();
    }
    text
}

impl HttpClient {
    /// `error` with the key replaced in whatever text it carries.
    pub(crate) fn scrub_error(&self, error: CompletionError) -> CompletionError {
        if self.api_key.is_none() {
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
