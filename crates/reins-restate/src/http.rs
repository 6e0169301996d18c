//! What the ingress client and the registration share: the connect timeout, which addresses
//! are taken, and the bearer token's header.

use crate::client_error::ClientError;
use base64::Engine as _;
use base64::prelude::BASE64_STANDARD;
use percent_encoding::percent_decode_str;
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

/// What a transport error says, for [`ClientError`]'s text: reqwest's message without the URL
/// it quotes (whose query, a gateway's `?token=…`, may hold a credential; the caller names
/// the server), and its causes, which say why (a refused connection, a reset).
pub(crate) fn transport_text(error: reqwest::Error) -> String {
    reins::text::with_causes(&error.without_url())
}

/// The `Authorization` header of a bearer token, marked sensitive (so the HTTP stack never
/// logs it).
pub(crate) fn bearer(token: &str) -> Result<HeaderValue, ClientError> {
    let mut value =
        HeaderValue::from_str(&format!("Bearer {token}")).map_err(|_| ClientError::InvalidToken)?;
    value.set_sensitive(true);
    Ok(value)
}

/// The credentials a call to `url` with `authorization` sends, to mask wherever a server's
/// answer is quoted: the bearer token, and the password of user info in the URL — as written,
/// percent-decoded (as it is sent) and inside the `Basic` header reqwest builds from it (a
/// server that echoes its request would otherwise quote the base64 of `user:password`).
pub(crate) fn credentials(url: &reqwest::Url, authorization: Option<&HeaderValue>) -> Vec<String> {
    let mut secrets = Vec::new();
    let token = authorization
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "));
    secrets.extend(token.map(str::to_owned));
    if let Some(password) = url.password() {
        let decoded = percent_decode_str(password)
            .decode_utf8_lossy()
            .into_owned();
        let user = percent_decode_str(url.username()).decode_utf8_lossy();
        secrets.push(BASE64_STANDARD.encode(format!("{user}:{decoded}")));
        secrets.push(decoded);
        secrets.push(password.to_owned());
    }
    secrets.retain(|secret| !secret.is_empty());
    secrets
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

#[cfg(test)]
mod tests {
    use super::{bearer, credentials};

    /// The credentials to mask: the bearer token, and a URL's password as written, as sent
    /// (percent-decoded) and inside the `Basic` header sent with it; a URL without one adds
    /// nothing.
    #[test]
    fn the_credentials_of_a_call_are_its_token_and_its_urls_password() {
        let url = reqwest::Url::parse("http://ops:p%40ss%2Fw0rd@restate:8080").unwrap();
        let token = bearer("tok-9f8e7d").unwrap();
        assert_eq!(
            credentials(&url, Some(&token)),
            [
                "tok-9f8e7d",
                // base64 of `ops:p@ss/w0rd`
                "b3BzOnBAc3MvdzByZA==",
                "p@ss/w0rd",
                "p%40ss%2Fw0rd"
            ]
        );
        let plain = reqwest::Url::parse("http://restate:8080").unwrap();
        assert!(credentials(&plain, None).is_empty());
    }
}
