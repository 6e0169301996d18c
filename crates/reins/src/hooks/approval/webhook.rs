//! [`WebhookDecider`]: asks an HTTP service about each call, and denies on anything but a
//! clear answer.

use super::decider::{ApprovalDecider, ApprovalRequest, DeciderFailure, Decision};
use crate::hex::push_lower_hex;
use crate::providers::ApiKey;
use hmac::{Hmac, Mac};
use reqwest::header::{AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use reqwest::{Client, StatusCode, Url, redirect};
use serde::Deserialize;
use serde_json::Value;
use sha2::Sha256;
use std::fmt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The most bytes of an answer read: a decision is a few hundred bytes, and a service that
/// sends more is not answering the question.
const MAX_ANSWER_BYTES: usize = 64 * 1024;

/// How long connecting to the service may take, so that an unreachable service denies at once
/// rather than at the policy's timeout.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The longest `Retry-After` honoured; a longer one is cut to this (the policy's timeout
/// still bounds the whole).
const MAX_RETRY_AFTER: Duration = Duration::from_secs(30);

/// Asks an HTTP service: each call the policy asks about is `POST`ed to the service's URL as
/// the JSON of its [`ApprovalRequest`], and the service answers with a JSON decision:
///
/// | answer | decision |
/// |---|---|
/// | `{"decision": "approve"}` | run the call as it is |
/// | `{"decision": "approve", "args": {...}}` | run it with these arguments |
/// | `{"decision": "deny", "message": "..."}` | don't run it; the model receives the message |
/// | `{"decision": "suspend", "reason": "..."}` | suspend the run for a durable decision |
///
/// (`message` and `reason` may be left out; other fields are ignored. `args` that are not a
/// JSON object deny the call, as for any decider.) The service may hold
/// the request open while a person decides, up to the policy's
/// [`timeout`](super::ApprovalPolicy::timeout); for decisions that take hours, answer
/// `suspend` and resume the run once decided.
///
/// With a [`signing_secret`](Self::signing_secret), each request is signed so the service can
/// tell it came from this decider and is not a replay: see that method.
///
/// A service that cannot be reached, or answers `429`, `502`, `503` or `504`, is asked again
/// ([`retries`](Self::retries)). Every request for a call carries the same
/// [`IDEMPOTENCY_KEY_HEADER`], `<run id>/<internal call id>`, so a service can tell a
/// retried request from a new one.
///
/// It fails closed. The call is denied, with a message saying why but never the URL or the
/// token, when the service cannot be reached, answers with a status other than `2xx` (a
/// redirect is not followed, so the token never goes to another server), sends more than
/// 64 KiB, or sends anything but one of the answers above. Each such denial is also logged
/// as a warning. Such a denial is the policy's, not the service's: the decider answers
/// [`DeciderFailure::NoDecision`] to [`try_decide`](ApprovalDecider::try_decide), and the
/// policy denies the call and tells the decider
/// ([`failed_to_answer`](ApprovalDecider::failed_to_answer)), as when it times out.
///
/// ```
/// use reins::hooks::approval::{ApprovalPolicy, Rule, WebhookDecider};
///
/// # fn main() -> Result<(), reins::hooks::approval::WebhookError> {
/// let decider = WebhookDecider::new("https://approvals.example.com/reins")?
///     .bearer_token("s3cret")
///     .signing_secret("whsec-1234")
///     .header("x-team", "payments")?;
/// // Neither the token, the signing secret nor the URL's query shows in its `Debug`.
/// let shown = format!("{decider:?}");
/// assert!(!shown.contains("s3cret") && !shown.contains("whsec-1234"));
/// let policy = ApprovalPolicy::new()
///     .rule(Rule::allow("read_*"))
///     .rule(Rule::ask("*"))
///     .decider(decider);
/// # let _ = policy;
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct WebhookDecider {
    http: Client,
    url: Url,
    token: Option<ApiKey>,
    signing_secret: Option<ApiKey>,
    headers: HeaderMap,
    retries: u32,
    retry_delay: Duration,
}

/// The header holding a signed request's time, in Unix seconds.
pub const TIMESTAMP_HEADER: &str = "x-reins-timestamp";

/// The header holding a signed request's signature: `sha256=` and the hex HMAC-SHA256 of
/// `<timestamp>.<body>`.
pub const SIGNATURE_HEADER: &str = "x-reins-signature";

/// The header naming the call a request asks about, `<run id>/<internal call id>`: the same
/// on every retry, and whenever the same call is asked again (a resumed run).
pub const IDEMPOTENCY_KEY_HEADER: &str = "idempotency-key";

/// Why a [`WebhookDecider`] could not be built.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WebhookError {
    /// The URL is not an absolute `http` or `https` URL. (The URL itself is not repeated: it
    /// may hold a secret.)
    #[error("the approval webhook's URL is not an absolute http or https URL")]
    InvalidUrl,
    /// A header's name or value cannot be sent.
    #[error("the header `{0}` cannot be sent: its name or value is not valid in HTTP")]
    InvalidHeader(String),
    /// The HTTP client could not be built (its TLS setup failed).
    #[error("the approval webhook's HTTP client could not be built: {0}")]
    Client(String),
}

impl WebhookDecider {
    /// How many times a request is sent again, unless set: enough to ride out a restart of
    /// the service, few enough that a service that is down denies within seconds.
    pub const DEFAULT_RETRIES: u32 = 2;

    /// The wait before the first retry, unless set; it doubles at each retry.
    pub const DEFAULT_RETRY_DELAY: Duration = Duration::from_millis(500);

    /// A decider posting to `url`, which must be an absolute `http` or `https` URL.
    pub fn new(url: &str) -> Result<Self, WebhookError> {
        let url = Url::parse(url).map_err(|_| WebhookError::InvalidUrl)?;
        if !matches!(url.scheme(), "http" | "https") || url.cannot_be_a_base() {
            return Err(WebhookError::InvalidUrl);
        }
        let http = Client::builder()
            .connect_timeout(CONNECT_TIMEOUT)
            .redirect(redirect::Policy::none())
            .build()
            .map_err(|error| WebhookError::Client(error.without_url().to_string()))?;
        Ok(WebhookDecider {
            http,
            url,
            token: None,
            signing_secret: None,
            headers: HeaderMap::new(),
            retries: Self::DEFAULT_RETRIES,
            retry_delay: Self::DEFAULT_RETRY_DELAY,
        })
    }

    /// Sends `Authorization: Bearer <token>` with each request. The token never shows in
    /// `Debug`, logs or denial messages.
    pub fn bearer_token(mut self, token: impl Into<String>) -> Self {
        self.token = Some(ApiKey::new(token));
        self
    }

    /// Signs each request with `secret`, shared with the service: the request carries
    /// [`TIMESTAMP_HEADER`] (the time it was sent, in Unix seconds) and [`SIGNATURE_HEADER`],
    /// `sha256=` followed by the lower-case hex HMAC-SHA256, keyed by `secret`, of the
    /// timestamp, a `.` and the body's exact bytes. The service recomputes it, compares in
    /// constant time, and refuses a timestamp more than a few minutes old (a replay). The
    /// secret never shows in `Debug`, logs or denial messages.
    pub fn signing_secret(mut self, secret: impl Into<String>) -> Self {
        self.signing_secret = Some(ApiKey::new(secret));
        self
    }

    /// Sends the header `name: value` with each request (a shared secret, a tenant). Its value
    /// is treated as a secret: it never shows in `Debug` or logs.
    pub fn header(mut self, name: &str, value: &str) -> Result<Self, WebhookError> {
        let invalid = || WebhookError::InvalidHeader(name.to_owned());
        let header_name = HeaderName::from_bytes(name.as_bytes()).map_err(|_| invalid())?;
        let mut header_value = HeaderValue::from_str(value).map_err(|_| invalid())?;
        header_value.set_sensitive(true);
        self.headers.insert(header_name, header_value);
        Ok(self)
    }

    /// How many times a request is sent again when the service could not be reached or
    /// answered `429`, `502`, `503` or `504` ([`DEFAULT_RETRIES`](Self::DEFAULT_RETRIES) unless set; `0` sends each
    /// request once). Before each retry the decider waits what the service's `Retry-After`
    /// says (in seconds, at most 30), else the [`retry_delay`](Self::retry_delay), doubled
    /// at each retry. Any other status, or a service that stops answering midway, is not
    /// retried. The policy's timeout bounds the attempts and the waits together.
    pub fn retries(mut self, retries: u32) -> Self {
        self.retries = retries;
        self
    }

    /// The wait before the first retry ([`DEFAULT_RETRY_DELAY`](Self::DEFAULT_RETRY_DELAY) unless set); it doubles at
    /// each retry.
    pub fn retry_delay(mut self, delay: Duration) -> Self {
        self.retry_delay = delay;
        self
    }

    /// Posts `request` (again while the service is briefly unavailable) and reads the
    /// service's decision, or says why there is none.
    async fn ask(&self, request: &ApprovalRequest) -> Result<Decision, Unanswered> {
        // Written once rather than by `RequestBuilder::json`: a signature covers these bytes.
        let body = serde_json::to_vec(request).map_err(|_| Unanswered::UnsendableRequest)?;
        // An id no header can carry (a control character) goes without the key.
        let key =
            HeaderValue::from_str(&format!("{}/{}", request.run_id, request.internal_call_id)).ok();
        let mut retried = 0;
        let mut response = loop {
            let sent = self.post(&body, key.as_ref()).await;
            let retry_after = match &sent {
                Err(Unanswered::Unreachable(error)) if error.is_connect() => Some(None),
                Ok(response) if is_transient(response.status()) => {
                    Some(retry_after(response.headers()))
                }
                _ => None,
            };
            match retry_after {
                Some(after) if retried < self.retries => {
                    let backoff = self
                        .retry_delay
                        .saturating_mul(2u32.saturating_pow(retried));
                    tokio::time::sleep(after.unwrap_or(backoff)).await;
                    retried += 1;
                }
                _ => break sent?,
            }
        };
        let status = response.status();
        if !status.is_success() {
            return Err(Unanswered::Status(status));
        }
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(Unanswered::unreachable)? {
            if body.len() + chunk.len() > MAX_ANSWER_BYTES {
                return Err(Unanswered::TooLarge);
            }
            body.extend_from_slice(&chunk);
        }
        // An object only: serde would also read `["approve"]` as a tagged answer.
        let answer = serde_json::from_slice::<serde_json::Map<String, Value>>(&body)
            .and_then(|fields| Answer::deserialize(Value::Object(fields)))
            .map_err(|_| Unanswered::NotADecision)?;
        Ok(answer.into_decision(&request.tool_name))
    }

    /// One request: `body` with the credentials, the idempotency `key`, and a signature of
    /// this attempt's time.
    async fn post(
        &self,
        body: &[u8],
        key: Option<&HeaderValue>,
    ) -> Result<reqwest::Response, Unanswered> {
        let mut post = self
            .http
            .post(self.url.clone())
            .headers(self.headers.clone())
            .header(CONTENT_TYPE, "application/json");
        if let Some(key) = key {
            post = post.header(IDEMPOTENCY_KEY_HEADER, key.clone());
        }
        if let Some(secret) = &self.signing_secret {
            let timestamp = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .unwrap_or_default()
                .as_secs()
                .to_string();
            let signature = signature(secret.expose().as_bytes(), &timestamp, body);
            post = post
                .header(TIMESTAMP_HEADER, timestamp)
                .header(SIGNATURE_HEADER, signature);
        }
        post = post.body(body.to_vec());
        if let Some(token) = &self.token {
            let mut value = HeaderValue::from_str(&format!("Bearer {}", token.expose()))
                .map_err(|_| Unanswered::UnsendableToken)?;
            value.set_sensitive(true);
            post = post.header(AUTHORIZATION, value);
        }
        post.send().await.map_err(Unanswered::unreachable)
    }
}

/// Whether a status says the service is briefly unable to answer: worth asking again.
fn is_transient(status: StatusCode) -> bool {
    matches!(
        status,
        StatusCode::TOO_MANY_REQUESTS
            | StatusCode::BAD_GATEWAY
            | StatusCode::SERVICE_UNAVAILABLE
            | StatusCode::GATEWAY_TIMEOUT
    )
}

/// The wait a `Retry-After` of whole seconds asks for, at most [`MAX_RETRY_AFTER`]; `None`
/// without one (or with an HTTP date, which is left to the backoff).
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let seconds: u64 = headers
        .get(reqwest::header::RETRY_AFTER)?
        .to_str()
        .ok()?
        .trim()
        .parse()
        .ok()?;
    Some(Duration::from_secs(seconds).min(MAX_RETRY_AFTER))
}

impl fmt::Debug for WebhookDecider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The origin and path only: a query or user info may hold a secret.
        f.debug_struct("WebhookDecider")
            .field(
                "url",
                &format_args!(
                    "{}{}",
                    self.url.origin().ascii_serialization(),
                    self.url.path()
                ),
            )
            .field("token", &self.token)
            .field("signing_secret", &self.signing_secret)
            .field("headers", &self.headers.keys().collect::<Vec<_>>())
            .field("retries", &self.retries)
            .field("retry_delay", &self.retry_delay)
            .finish()
    }
}

impl ApprovalDecider for WebhookDecider {
    /// The service's decision, or a denial saying why there is none (logged as a warning).
    async fn decide(&self, request: &ApprovalRequest) -> Decision {
        match self.try_decide(request).await {
            Ok(decision) => decision,
            Err(failure) => {
                tracing::warn!(
                    run_id = %request.run_id,
                    tool = %request.tool_name,
                    reason = %failure,
                    "the approval webhook gave no decision; the call is denied"
                );
                Decision::deny(format!("`{}` was not run: {failure}", request.tool_name))
            }
        }
    }

    /// The service's decision, or [`DeciderFailure::NoDecision`] saying why there is none:
    /// an [`ApprovalPolicy`](super::ApprovalPolicy) then denies the call as its own denial.
    async fn try_decide(&self, request: &ApprovalRequest) -> Result<Decision, DeciderFailure> {
        self.ask(request).await.map_err(|why| {
            DeciderFailure::NoDecision(format!("the approval service gave no decision ({why})"))
        })
    }
}

/// Why the service's answer is not a decision. Its `Display` is what the denial says, so it
/// never holds the URL, the token or the service's own words; nor does its `Debug` (the
/// transport error is kept without the URL it quotes).
#[derive(Debug)]
enum Unanswered {
    Unreachable(reqwest::Error),
    UnsendableRequest,
    UnsendableToken,
    Status(StatusCode),
    TooLarge,
    NotADecision,
}

impl Unanswered {
    /// The service could not be reached, or the transfer broke: `error` without the URL,
    /// whose query may hold a secret.
    fn unreachable(error: reqwest::Error) -> Unanswered {
        Unanswered::Unreachable(error.without_url())
    }
}

impl fmt::Display for Unanswered {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unanswered::Unreachable(error) if error.is_timeout() => {
                f.write_str("it did not answer in time")
            }
            Unanswered::Unreachable(error) if error.is_connect() => {
                f.write_str("it could not be reached")
            }
            Unanswered::Unreachable(_) => f.write_str("the connection to it failed"),
            Unanswered::UnsendableRequest => f.write_str("the request could not be written"),
            Unanswered::UnsendableToken => f.write_str("its token cannot be sent in a header"),
            Unanswered::Status(status) => write!(f, "it answered with status {}", status.as_u16()),
            Unanswered::TooLarge => write!(f, "its answer was over {MAX_ANSWER_BYTES} bytes"),
            Unanswered::NotADecision => f.write_str("its answer was not a decision"),
        }
    }
}

/// A decision as the service sends it.
#[derive(Deserialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
enum Answer {
    Approve {
        #[serde(default)]
        args: Option<Value>,
    },
    Deny {
        #[serde(default)]
        message: Option<String>,
    },
    Suspend {
        #[serde(default)]
        reason: Option<String>,
    },
}

impl Answer {
    fn into_decision(self, tool_name: &str) -> Decision {
        match self {
            Answer::Approve { args: None } => Decision::approve(),
            Answer::Approve { args: Some(args) } => Decision::approve_with_args(args),
            Answer::Deny { message } => Decision::deny(message.unwrap_or_else(|| {
                format!("`{tool_name}` was not run: the approval service denied it")
            })),
            Answer::Suspend { reason } => Decision::suspend(reason.unwrap_or_else(|| {
                format!("`{tool_name}` awaits a decision from the approval service")
            })),
        }
    }
}

/// `sha256=` and the hex HMAC-SHA256, keyed by `secret`, of `<timestamp>.<body>`.
pub(super) fn signature(secret: &[u8], timestamp: &str, body: &[u8]) -> String {
    // HMAC takes a key of any length: `new_from_slice` cannot fail for it.
    let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(secret) else {
        return String::new();
    };
    mac.update(timestamp.as_bytes());
    mac.update(b".");
    mac.update(body);
    let digest = mac.finalize().into_bytes();
    let mut text = String::with_capacity(7 + 2 * digest.len());
    text.push_str("sha256=");
    push_lower_hex(&mut text, &digest);
    text
}

#[cfg(test)]
mod tests {
    use super::{ApprovalRequest, WebhookDecider, signature};
    use serde_json::json;

    #[tokio::test]
    async fn an_unreachable_service_s_failure_shows_nothing_of_its_url() {
        // A port nothing listens on: bound, then released.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|listener| listener.local_addr())
            .map(|address| address.port())
            .unwrap_or(1);
        let url = format!("http://ops:pw-in-url@127.0.0.1:{port}/approve?code=q-secret-77");
        let decider = WebhookDecider::new(&url).unwrap().retries(0);
        let request = ApprovalRequest {
            run_id: "run-1".into(),
            turn: 1,
            tool_name: "transfer".into(),
            tool_call_id: "call-1".into(),
            internal_call_id: "c1".into(),
            args: json!({}),
            rule: None,
            reason: None,
            traits: None,
        };
        let failure = decider.ask(&request).await.unwrap_err();
        let shown = format!("{failure} {failure:?}");
        for secret in ["pw-in-url", "q-secret-77"] {
            assert!(!shown.contains(secret), "`{secret}` shows in {shown}");
        }
    }

    #[test]
    fn the_signature_is_hmac_sha256_of_the_timestamp_a_dot_and_the_body() {
        // The expected digest was computed with Python's `hmac` module (an implementation
        // of RFC 2104 independent of this crate's) over `1700000000.{"tool_name":"transfer"}`.
        assert_eq!(
            signature(b"Jefe", "1700000000", br#"{"tool_name":"transfer"}"#),
            "sha256=2c97fc95f30dc97f4084882c9a5c0e73c754d568749ce6ac8225c2d338c78698"
        );
    }
}
