//! Sending one request: retries with backoff within the total deadline, the first-byte
//! timeout, and error statuses (with the start of their body) and redirects turned into errors.

use super::body::read_error_body;
use super::client::{HttpClient, Wait};
use super::retry::{retry_after, retryable_status, retrying_in_words};
use crate::completion::CompletionError;
use bytes::Bytes;
use reqwest::Response;
use reqwest::header::{ACCEPT, CONTENT_TYPE, LOCATION};
use tokio::time::Instant;

impl HttpClient {
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
            // Waiting would pass the deadline (or more than the clock holds, for a policy
            // that does not cap a server's `Retry-After`): the last failure is the answer.
            if Instant::now()
                .checked_add(wait)
                .is_none_or(|end| end >= deadline)
            {
                return Err(failure);
            }
            // The failure's kind, not its text: inside the call's `chat` span, the provider's
            // error body (which may echo the prompt) would be recorded on it whether the
            // subscriber records content or not. The message says it all in words, for a
            // person; the fields, for a collector or a log's reader.
            tracing::warn!(
                error.type = %failure.error_type(),
                attempt,
                max_attempts = self.retry.max_retries.saturating_add(1),
                wait_ms = wait.as_millis() as u64,
                "{}",
                retrying_in_words(&failure.kind_in_words(), wait, attempt, self.retry.max_retries)
            );
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
