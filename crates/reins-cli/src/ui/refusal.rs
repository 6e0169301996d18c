//! A refused request's answer: an HTML page that says why (escaped) and leads back to the
//! run, never a bare line of text.

use super::html;
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Response};

/// `status` with a page that says `why`, linking back to `run` when it was about one.
pub(super) fn refused(status: StatusCode, why: &str, run: Option<&str>) -> Response {
    let title = match status {
        StatusCode::NOT_FOUND => "not found",
        StatusCode::BAD_REQUEST => "not understood",
        StatusCode::CONFLICT => "not done",
        StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => "refused",
        _ => "something went wrong",
    };
    (status, Html(html::error_page(title, why, run))).into_response()
}
