//! What every HTTP provider shares: the API key that never shows, timeouts, retries with
//! backoff, typed errors, and streaming of server-sent events with an idle timeout.

use super::sse::{SseDecoder, SseEvent};
use crate::completion::{CompletionError, CompletionResponse, CompletionStream, StreamChunk};
use futures::{Stream, StreamExt};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue, RETRY_AFTER};
use reqwest::{RequestBuilder, Response, StatusCode};
use std::collections::VecDeque;
use std::fmt;
use std::time::Duration;

/// An API key. Its `Debug` and `Display` never show it.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// Wraps a key.
    pub fn new(key: impl Into<String>) -> Self {
        ApiKey(key.into())
    }

    /// The key itself, for building a request header.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(<redacted>)")
    }
}

impl fmt::Display for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

/// When and how often a failed request is tried again: HTTP 429 and 5xx, and connection
/// failures, with exponential backoff and jitter, honoring `Retry-After`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts after the first (0 disables retries).
    pub max_retries: u32,
    /// The wait before the first retry; it doubles each time.
    pub initial_backoff: Duration,
    /// The longest wait between attempts (a longer `Retry-After` is capped to it).
    pub max_backoff: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_retries: 3,
            initial_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(30),
        }
    }
}

impl RetryPolicy {
    /// No retries.
    pub fn none() -> Self {
        RetryPolicy {
            max_retries: 0,
            ..RetryPolicy::default()
        }
    }

    /// The wait before retry number `attempt` (1-based): the server's `Retry-After` when it
    /// gave one, else exponential backoff with full jitter.
    fn delay(&self, attempt: u32, retry_after: Option<Duration>) -> Duration {
        if let Some(wait) = retry_after {
            return wait.min(self.max_backoff);
        }
        let exponential = self
            .initial_backoff
            .saturating_mul(1u32 << attempt.saturating_sub(1).min(16))
            .min(self.max_backoff);
        // Full jitter keeps many clients that failed together from retrying together.
        let jitter = fastrand_fraction();
        exponential.mul_f64(0.5 + jitter / 2.0)
    }
}

/// A number in [0, 1) from the clock's sub-second noise: enough to spread retries, and no
/// extra dependency.
fn fastrand_fraction() -> f64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let mixed = (u64::from(nanos)).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 11;
    mixed as f64 / (1u64 << 53) as f64
}

/// Timeouts of one model call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    /// Establishing the connection.
    pub connect: Duration,
    /// From sending the request to the response's headers (the first byte).
    pub first_byte: Duration,
    /// The longest silence between two chunks of a streamed response, or reading a whole
    /// blocking response body.
    pub idle: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            connect: Duration::from_secs(10),
            first_byte: Duration::from_secs(120),
            idle: Duration::from_secs(120),
        }
    }
}

/// The settings every HTTP provider's builder shares.
#[derive(Debug, Clone)]
pub struct HttpSettings {
    /// The API's base URL, without a trailing slash.
    pub base_url: String,
    /// The key, when the API needs one.
    pub api_key: Option<ApiKey>,
    /// Headers sent with every request.
    pub headers: HeaderMap,
    /// Timeouts.
    pub timeouts: Timeouts,
    /// Retries.
    pub retry: RetryPolicy,
}

impl HttpSettings {
    pub(crate) fn new(base_url: impl Into<String>, api_key: Option<ApiKey>) -> Self {
        HttpSettings {
            base_url: trim_base_url(base_url.into()),
            api_key,
            headers: HeaderMap::new(),
            timeouts: Timeouts::default(),
            retry: RetryPolicy::default(),
        }
    }

    /// Adds a header; a name or value that is not valid in HTTP is an error naming it.
    pub(crate) fn add_header(&mut self, name: &str, value: &str) -> Result<(), ProviderError> {
        let name = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| ProviderError::InvalidHeader(name.to_owned()))?;
        let mut value = HeaderValue::from_str(value)
            .map_err(|_| ProviderError::InvalidHeader(name.to_string()))?;
        // Credentials passed as plain headers must not show in `Debug` output either.
        let lower = name.as_str();
        if ["authorization", "key", "token", "secret", "cookie"]
            .iter()
            .any(|word| lower.contains(word))
        {
            value.set_sensitive(true);
        }
        self.headers.insert(name, value);
        Ok(())
    }

    pub(crate) fn client(&self) -> Result<reqwest::Client, ProviderError> {
        reqwest::Client::builder()
            .connect_timeout(self.timeouts.connect)
            .default_headers(self.headers.clone())
            .build()
            .map_err(|error| ProviderError::Client(error.to_string()))
    }

    pub(crate) fn url(&self, path: &str) -> String {
        format!("{}/{}", self.base_url, path.trim_start_matches('/'))
    }
}

fn trim_base_url(url: String) -> String {
    url.trim_end_matches('/').to_owned()
}

/// Why a provider could not be set up.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ProviderError {
    /// An environment variable the provider needs is not set.
    #[error("{0} is not set")]
    MissingEnv(&'static str),
    /// An environment variable is set but empty or not Unicode.
    #[error("{0} is set but empty or not valid Unicode")]
    InvalidEnv(&'static str),
    /// A header name or value is not valid in HTTP.
    #[error("invalid header `{0}`")]
    InvalidHeader(String),
    /// The HTTP client could not be built.
    #[error("the HTTP client could not be built: {0}")]
    Client(String),
}

/// Reads a required environment variable.
pub(crate) fn required_env(name: &'static str) -> Result<String, ProviderError> {
    match std::env::var(name) {
        Ok(value) if !value.trim().is_empty() => Ok(value),
        Ok(_) | Err(std::env::VarError::NotUnicode(_)) => Err(ProviderError::InvalidEnv(name)),
        Err(std::env::VarError::NotPresent) => Err(ProviderError::MissingEnv(name)),
    }
}

/// Reads an optional environment variable (unset or empty means absent).
pub(crate) fn optional_env(name: &str) -> Option<String> {
    std::env::var(name)
        .ok()
        .filter(|value| !value.trim().is_empty())
}

/// Sends a request, retrying as the policy allows, and returns a successful response. Other
/// statuses become [`CompletionError::Http`] with the provider's body.
pub(crate) async fn send(
    settings: &HttpSettings,
    build: impl Fn() -> RequestBuilder,
) -> Result<Response, CompletionError> {
    let mut attempt = 0;
    loop {
        let result = tokio::time::timeout(settings.timeouts.first_byte, build().send()).await;
        let failure = match result {
            Err(_) => CompletionError::Timeout(format!(
                "no response headers within {} ms",
                settings.timeouts.first_byte.as_millis()
            )),
            Ok(Err(error)) => transport_error(&error),
            Ok(Ok(response)) if response.status().is_success() => return Ok(response),
            Ok(Ok(response)) => {
                let status = response.status();
                let retry_after = retry_after(response.headers());
                let body = read_error_body(response, settings.timeouts.idle).await;
                let error = CompletionError::Http {
                    status: status.as_u16(),
                    body,
                };
                if retryable_status(status) && attempt < settings.retry.max_retries {
                    attempt += 1;
                    let wait = settings.retry.delay(attempt, retry_after);
                    tracing::warn!(
                        status = status.as_u16(),
                        attempt,
                        wait_ms = wait.as_millis() as u64,
                        "retrying the model call"
                    );
                    tokio::time::sleep(wait).await;
                    continue;
                }
                return Err(error);
            }
        };
        if attempt < settings.retry.max_retries {
            attempt += 1;
            let wait = settings.retry.delay(attempt, None);
            tracing::warn!(error = %failure, attempt, wait_ms = wait.as_millis() as u64, "retrying the model call");
            tokio::time::sleep(wait).await;
            continue;
        }
        return Err(failure);
    }
}

fn retryable_status(status: StatusCode) -> bool {
    status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error()
}

fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let value = headers.get(RETRY_AFTER)?.to_str().ok()?.trim();
    if let Ok(seconds) = value.parse::<f64>() {
        return (seconds.is_finite() && seconds >= 0.0).then(|| Duration::from_secs_f64(seconds));
    }
    // An HTTP date: wait until then.
    let when = httpdate_to_system_time(value)?;
    when.duration_since(std::time::SystemTime::now()).ok()
}

/// Parses an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), the form `Retry-After` uses.
fn httpdate_to_system_time(value: &str) -> Option<std::time::SystemTime> {
    let parts: Vec<&str> = value.split_whitespace().collect();
    let [_, day, month, year, time, "GMT"] = parts.as_slice() else {
        return None;
    };
    let day: u64 = day.parse().ok()?;
    let month = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ]
    .iter()
    .position(|m| m == month)? as u64
        + 1;
    let year: u64 = year.parse().ok()?;
    let mut hms = time.split(':').map(|p| p.parse::<u64>().ok());
    let (h, m, s) = (hms.next()??, hms.next()??, hms.next()??);
    // Days from the civil date (Howard Hinnant's algorithm).
    let (y, mo) = if month <= 2 {
        (year - 1, month + 9)
    } else {
        (year, month - 3)
    };
    let era = y / 400;
    let yoe = y - era * 400;
    let doy = (153 * mo + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = (era * 146_097 + doe).checked_sub(719_468)?;
    let secs = days * 86_400 + h * 3600 + m * 60 + s;
    Some(std::time::UNIX_EPOCH + Duration::from_secs(secs))
}

async fn read_error_body(response: Response, limit: Duration) -> String {
    match tokio::time::timeout(limit, response.text()).await {
        Ok(Ok(body)) if body.len() > 8_192 => format!("{}… [truncated]", truncate(&body, 8_192)),
        Ok(Ok(body)) => body,
        Ok(Err(error)) => format!("<the error body could not be read: {error}>"),
        Err(_) => "<the error body did not arrive in time>".to_owned(),
    }
}

fn truncate(text: &str, max: usize) -> &str {
    let mut end = max.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// A transport error without anything that could hold a secret (URLs of reins' requests
/// carry no key; Gemini's key travels in a header).
fn transport_error(error: &reqwest::Error) -> CompletionError {
    if error.is_timeout() {
        CompletionError::Timeout(error.to_string())
    } else {
        CompletionError::Transport(error.to_string())
    }
}

/// Reads a whole JSON body within the idle timeout.
pub(crate) async fn read_json(
    response: Response,
    limit: Duration,
) -> Result<serde_json::Value, CompletionError> {
    let bytes = tokio::time::timeout(limit, response.bytes())
        .await
        .map_err(|_| {
            CompletionError::Timeout(format!(
                "the response body did not arrive within {} ms",
                limit.as_millis()
            ))
        })?
        .map_err(|error| transport_error(&error))?;
    serde_json::from_slice(&bytes).map_err(|error| {
        CompletionError::Decode(format!(
            "the response is not JSON ({error}); received: {}",
            truncate(&String::from_utf8_lossy(&bytes), 2_000)
        ))
    })
}

/// Turns a streamed response into its server-sent events, failing when the connection is
/// silent longer than `idle`, breaks, or sends something that is not an event stream.
pub(crate) fn sse_events(
    response: Response,
    idle: Duration,
) -> impl Stream<Item = Result<SseEvent, CompletionError>> + Send + 'static {
    let state = (
        response.bytes_stream(),
        SseDecoder::new(),
        VecDeque::new(),
        false,
    );
    futures::stream::unfold(
        state,
        move |(mut bytes, mut decoder, mut ready, mut ended)| async move {
            loop {
                if let Some(event) = ready.pop_front() {
                    return Some((Ok(event), (bytes, decoder, ready, ended)));
                }
                if ended {
                    return None;
                }
                match tokio::time::timeout(idle, bytes.next()).await {
                    Err(_) => {
                        ended = true;
                        let error = CompletionError::Timeout(format!(
                            "the stream was silent for {} ms",
                            idle.as_millis()
                        ));
                        return Some((Err(error), (bytes, decoder, ready, ended)));
                    }
                    Ok(Some(Ok(chunk))) => {
                        if let Err(error) = decoder.feed(&chunk, |event| ready.push_back(event)) {
                            ended = true;
                            return Some((
                                Err(CompletionError::Decode(error.to_string())),
                                (bytes, decoder, ready, ended),
                            ));
                        }
                    }
                    Ok(Some(Err(error))) => {
                        ended = true;
                        return Some((
                            Err(transport_error(&error)),
                            (bytes, decoder, ready, ended),
                        ));
                    }
                    Ok(None) => {
                        ended = true;
                        if let Err(error) = decoder.finish(|event| ready.push_back(event)) {
                            return Some((
                                Err(CompletionError::Decode(error.to_string())),
                                (bytes, decoder, ready, ended),
                            ));
                        }
                    }
                }
            }
        },
    )
}

/// Reads one provider's streamed turn out of its server-sent events.
pub(crate) trait TurnDecoder: Send + 'static {
    /// Reads one event, queueing the chunks it carries; returns the assembled response when
    /// the event ends the turn.
    fn event(
        &mut self,
        event: &SseEvent,
        out: &mut VecDeque<StreamChunk>,
    ) -> Result<Option<CompletionResponse>, CompletionError>;

    /// The connection closed before an event ended the turn: the response, for an API that
    /// ends a turn by closing the stream, or an error saying what was received.
    fn closed(self) -> Result<CompletionResponse, CompletionError>;

    /// The connection failed mid-stream: the error to report.
    fn failed(&self, error: CompletionError) -> CompletionError {
        error
    }
}

/// The chunks of a streamed turn: every event's chunks in order, then `Done` with the
/// assembled response — or an error, after which the stream ends.
pub(crate) fn chunk_stream<D: TurnDecoder>(
    events: impl Stream<Item = Result<SseEvent, CompletionError>> + Send + 'static,
    decoder: D,
) -> CompletionStream {
    let state = (Box::pin(events), Some(decoder), VecDeque::new());
    Box::pin(futures::stream::unfold(
        state,
        |(mut events, mut decoder, mut pending)| async move {
            loop {
                if let Some(chunk) = pending.pop_front() {
                    return Some((Ok(chunk), (events, decoder, pending)));
                }
                let active = decoder.as_mut()?;
                let finished = match events.next().await {
                    Some(Ok(event)) => match active.event(&event, &mut pending) {
                        Ok(None) => continue,
                        Ok(Some(response)) => Ok(response),
                        Err(error) => Err(error),
                    },
                    Some(Err(error)) => Err(active.failed(error)),
                    None => decoder.take()?.closed(),
                };
                decoder = None;
                match finished {
                    Ok(response) => pending.push_back(StreamChunk::Done(response)),
                    Err(error) => {
                        pending.clear();
                        return Some((Err(error), (events, decoder, pending)));
                    }
                }
            }
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_never_show() {
        let key = ApiKey::new("sk-secret-123");
        assert!(!format!("{key:?} {key}").contains("secret"));
    }

    #[test]
    fn backoff_grows_is_capped_and_honors_retry_after() {
        let policy = RetryPolicy {
            max_retries: 5,
            initial_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(1),
        };
        let first = policy.delay(1, None);
        assert!(first >= Duration::from_millis(50) && first <= Duration::from_millis(100));
        let fifth = policy.delay(5, None);
        assert!(fifth >= Duration::from_millis(500) && fifth <= Duration::from_secs(1));
        assert_eq!(
            policy.delay(1, Some(Duration::from_secs(60))),
            Duration::from_secs(1)
        );
        assert_eq!(
            policy.delay(1, Some(Duration::from_millis(7))),
            Duration::from_millis(7)
        );
    }

    #[test]
    fn retry_after_reads_seconds_and_dates() {
        let mut headers = HeaderMap::new();
        headers.insert(RETRY_AFTER, HeaderValue::from_static("2"));
        assert_eq!(retry_after(&headers), Some(Duration::from_secs(2)));
        assert_eq!(
            httpdate_to_system_time("Sun, 06 Nov 1994 08:49:37 GMT"),
            Some(std::time::UNIX_EPOCH + Duration::from_secs(784_111_777))
        );
        headers.insert(
            RETRY_AFTER,
            HeaderValue::from_static("Sun, 06 Nov 1994 08:49:37 GMT"),
        );
        assert_eq!(
            retry_after(&headers),
            None,
            "a date in the past means no wait"
        );
    }
}
