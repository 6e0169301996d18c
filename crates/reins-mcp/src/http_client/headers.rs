//! What the headers of an HTTP answer say: its media type, an authorization challenge, a
//! rate limit or server failure.

use super::HttpError;
use http::header::{CONTENT_TYPE, RETRY_AFTER, WWW_AUTHENTICATE};
use http::{HeaderMap, StatusCode};
use rmcp::transport::streamable_http_client::{
    AuthRequiredError, HttpStatusError, InsufficientScopeError, StreamableHttpError,
};
use std::borrow::Cow;

/// The `Content-Type` of an answer, as text.
pub(super) fn content_type(headers: &HeaderMap) -> Option<String> {
    headers
        .get(CONTENT_TYPE)
        .map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned())
}

/// Whether an answer's `Content-Type` is `expected`, its parameters aside (media types are
/// not case-sensitive).
pub(super) fn has_type(headers: &HeaderMap, expected: &str) -> bool {
    headers.get(CONTENT_TYPE).is_some_and(|value| {
        let essence = value.as_bytes().split(|byte| *byte == b';').next();
        essence
            .and_then(|essence| std::str::from_utf8(essence).ok())
            .is_some_and(|essence| {
                essence
                    .trim_matches([' ', '\t'])
                    .eq_ignore_ascii_case(expected)
            })
    })
}

/// The error of a 401 or 403 that carries a `WWW-Authenticate` challenge, for an
/// application that authorizes again.
pub(super) fn challenge(status: StatusCode, headers: &HeaderMap) -> Result<(), HttpError> {
    let Some(value) = headers.get(WWW_AUTHENTICATE) else {
        return Ok(());
    };
    if !matches!(status, StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN) {
        return Ok(());
    }
    let Ok(value) = value.to_str() else {
        return Err(StreamableHttpError::UnexpectedServerResponse(
            Cow::Borrowed("invalid www-authenticate header value"),
        ));
    };
    Err(match status {
        StatusCode::UNAUTHORIZED => {
            StreamableHttpError::AuthRequired(AuthRequiredError::new(value.to_owned()))
        }
        _ => StreamableHttpError::InsufficientScope(InsufficientScopeError::new(
            value.to_owned(),
            scope_of(value),
        )),
    })
}

/// The `scope` a `WWW-Authenticate` challenge asks for, quoted or not.
pub(super) fn scope_of(challenge: &str) -> Option<String> {
    let at = challenge.to_ascii_lowercase().find("scope=")? + "scope=".len();
    let rest = challenge.get(at..)?;
    let scope = match rest.strip_prefix('"') {
        Some(quoted) => quoted.split_once('"')?.0,
        None => rest
            .split(|c: char| c == ',' || c == ';' || c.is_whitespace())
            .next()?,
    };
    (!scope.is_empty()).then(|| scope.to_owned())
}

/// The status of a rate limit (429) or a server failure (5xx), with its `Retry-After`.
pub(super) fn status_error(status: StatusCode, headers: &HeaderMap) -> Option<HttpStatusError> {
    if status != StatusCode::TOO_MANY_REQUESTS && !status.is_server_error() {
        return None;
    }
    let retry_after = headers
        .get(RETRY_AFTER)
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned);
    Some(HttpStatusError::new(status.as_u16(), retry_after))
}

/// What an answer of a type that is neither JSON nor an event stream is said to be.
pub(super) fn neither_json_nor_events(headers: &http::HeaderMap) -> String {
    match content_type(headers) {
        Some(kind) => format!(
            "the server answered with Content-Type `{kind}`, neither JSON nor an event stream"
        ),
        None => "the server answered without a Content-Type".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;
    use rmcp::transport::common::http_header::JSON_MIME_TYPE;

    #[test]
    fn a_challenge_s_scope_is_read_quoted_or_not() {
        assert_eq!(
            scope_of(r#"Bearer error="insufficient_scope", scope="files:read files:write""#)
                .as_deref(),
            Some("files:read files:write")
        );
        assert_eq!(
            scope_of("Bearer Scope=read:data, x=y").as_deref(),
            Some("read:data")
        );
        assert_eq!(scope_of("Bearer realm=x"), None);
        assert_eq!(scope_of(r#"Bearer scope="unterminated"#), None);
    }

    #[test]
    fn a_media_type_is_compared_without_its_parameters() {
        let headers = |value: &'static str| {
            let mut headers = HeaderMap::new();
            headers.insert(CONTENT_TYPE, HeaderValue::from_static(value));
            headers
        };
        assert!(has_type(
            &headers("Application/JSON; charset=utf-8"),
            JSON_MIME_TYPE
        ));
        assert!(!has_type(&headers("application/json-seq"), JSON_MIME_TYPE));
        assert!(!has_type(&HeaderMap::new(), JSON_MIME_TYPE));
    }
}
