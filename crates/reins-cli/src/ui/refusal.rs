//! A refused request's answer: an HTML page that says why (escaped) and leads back to the
//! run, never a bare line of text.

use super::html;
use axum::http::{StatusCode, header};
use axum::response::{Html, IntoResponse, Response};

/// `status` with a page that says `why`, linking back to `run` when it was about one.
pub(super) fn refused(status: StatusCode, why: &str, run: Option<&str>) -> Response {
    let title = match status {
        StatusCode::NOT_FOUND => "not found",
        StatusCode::BAD_REQUEST => "not understood",
        StatusCode::CONFLICT => "not done",
        StatusCode::PAYLOAD_TOO_LARGE => "too large",
        StatusCode::REQUEST_TIMEOUT => "too slow",
        StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => "refused",
        _ => "something went wrong",
    };
    (status, Html(html::error_page(title, why, run))).into_response()
}

/// The most bytes of the framework's own text read into a page.
const MOST_OF_A_PLAIN_REFUSAL: usize = 4 * 1024;

/// A refusal the framework answered itself, as a bare line or nothing (a form it could not
/// read, a body too large, a method or an address the inbox does not serve), made a page like
/// the inbox's own, its headers kept. Every other answer passes as it is.
pub(super) async fn as_page(response: Response) -> Response {
    let status = response.status();
    let is_page = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|kind| kind.to_str().ok())
        .is_some_and(|kind| kind.starts_with("text/html"));
    if is_page || !(status.is_client_error() || status.is_server_error()) {
        return response;
    }
    let (parts, body) = response.into_parts();
    let said = axum::body::to_bytes(body, MOST_OF_A_PLAIN_REFUSAL)
        .await
        .map(|text| String::from_utf8_lossy(&text).trim().to_owned())
        .unwrap_or_default();
    let why = if said.is_empty() {
        match status {
            StatusCode::NOT_FOUND => "the inbox has no page at this address",
            StatusCode::METHOD_NOT_ALLOWED => "this address does not take this kind of request",
            _ => "the request could not be taken",
        }
        .to_owned()
    } else {
        said
    };
    let mut page = refused(status, &why, None);
    for (name, value) in &parts.headers {
        if name != header::CONTENT_TYPE && name != header::CONTENT_LENGTH {
            page.headers_mut().append(name.clone(), value.clone());
        }
    }
    page
}
