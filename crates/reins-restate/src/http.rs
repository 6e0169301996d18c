//! What the ingress client and the registration share: the connect timeout, which addresses
//! are taken, and the bearer token's header.

use crate::client_error::ClientError;
use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderValue};
use std::time::Duration;

/// How long [`RestateRuns`](crate::RestateRuns) (and a registration) waits to connect to
/// the ingress (the admin API).
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Why an address that parses is still no base for Restate's HTTP APIs.
pub(crate) const NOT_HTTP: &str = "the URL must start with `http://` or `https://`";

/// `url` parsed as the base of Restate's ingress or admin API: an `http` or `https` URL, or
/// why not. The reason never repeats the text: an address whose scheme was left out
/// (`ops:hunter2@restate:8080`) parses with its user name as the scheme and its password in
/// the path, and the error is shown and logged.
pub(crate) fn base_url(url: &str) -> Result<reqwest::Url, String> {
    let parsed = reqwest::Url::parse(url).map_err(|error| error.to_string())?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(NOT_HTTP.to_owned());
    }
    Ok(parsed)
}

/// The `Authorization` header of a bearer token, marked sensitive (so the HTTP stack never
/// logs it).
pub(crate) fn bearer(token: &str) -> Result<HeaderValue, ClientError> {
    let mut value =
        HeaderValue::from_str(&format!("Bearer {token}")).map_err(|_| ClientError::InvalidToken)?;
    value.set_sensitive(true);
    Ok(value)
}

/// `request` with `authorization`, if any, replacing the basic authentication reqwest derives
/// from user info in the URL (two `Authorization` headers would be refused, or one ignored).
pub(crate) fn authorized(
    request: reqwest::RequestBuilder,
    authorization: Option<&HeaderValue>,
) -> reqwest::RequestBuilder {
    match authorization {
        Some(value) => {
            let mut headers = HeaderMap::new();
            headers.insert(AUTHORIZATION, value.clone());
            request.headers(headers)
        }
        None => request,
    }
}
