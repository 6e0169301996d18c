//! Who may use the inbox: an address other than loopback needs a token (sent once as
//! `?token=`, then kept in a cookie), and a state-changing request needs the page's
//! anti-forgery token and, when the browser sends one, an `Origin` matching the `Host`.

use super::App;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware;
use axum::response::{IntoResponse, Response};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;

/// Why the inbox may not listen on `bind` with `token`: an address other than loopback
/// needs a token.
pub fn unguarded(bind: SocketAddr, token: Option<&str>) -> Option<String> {
    (!bind.ip().is_loopback() && token.is_none_or(str::is_empty)).then(|| {
        format!("{bind} is not a loopback address: set a token with --token or REINS_UI_TOKEN")
    })
}

/// The token check (when one is set) and the cross-site checks of state-changing requests.
pub(super) async fn guard(
    State(app): State<Arc<App>>,
    Query(query): Query<HashMap<String, String>>,
    request: axum::extract::Request,
    next: middleware::Next,
) -> Response {
    let headers = request.headers().clone();
    let mut set_cookie = None;
    if let Some(token) = &app.token {
        let from_query = query
            .get("token")
            .is_some_and(|given| constant_eq(given, token));
        let from_cookie =
            cookie(&headers, "reins_token").is_some_and(|given| constant_eq(&given, token));
        if !from_query && !from_cookie {
            return (StatusCode::UNAUTHORIZED, "a token is required").into_response();
        }
        if from_query {
            set_cookie = Some(format!(
                "reins_token={token}; HttpOnly; SameSite=Strict; Path=/"
            ));
        }
    }
    if request.method() == axum::http::Method::POST && !same_origin(&headers) {
        return (StatusCode::FORBIDDEN, "cross-site request refused").into_response();
    }
    let mut response = next.run(request).await;
    if let Some(cookie) = set_cookie.and_then(|c| c.parse().ok()) {
        response.headers_mut().insert(header::SET_COOKIE, cookie);
    }
    let headers = response.headers_mut();
    headers.insert("x-frame-options", header::HeaderValue::from_static("DENY"));
    headers.insert(
        "content-security-policy",
        header::HeaderValue::from_static(
            "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; \
             connect-src 'self'; form-action 'self'; frame-ancestors 'none'",
        ),
    );
    response
}

/// Whether a request's `Origin` (if the browser sent one) is this server.
fn same_origin(headers: &HeaderMap) -> bool {
    let Some(origin) = headers.get(header::ORIGIN).and_then(|o| o.to_str().ok()) else {
        return true;
    };
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or_default();
    origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"))
        .is_some_and(|origin_host| origin_host == host)
}

fn cookie(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(key, _)| *key == name)
        .map(|(_, value)| value.to_owned())
}

/// Compares secrets without stopping at the first difference.
fn constant_eq(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

/// The anti-forgery check of a state-changing form: the refusal when its token is wrong.
pub(super) fn forged(app: &App, csrf: &str) -> Option<Response> {
    (!constant_eq(csrf, &app.csrf)).then(|| {
        (
            StatusCode::FORBIDDEN,
            "the form's anti-forgery token is wrong",
        )
            .into_response()
    })
}
