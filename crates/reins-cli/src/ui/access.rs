//! Who may use the inbox: a request needs the inbox's token ([`super::inbox_token`]: made at
//! start unless given or `--no-token`), sent once as `?token=`, then a session secret of
//! this inbox kept in a cookie (never the token: the browser sends it to every port of the
//! host), the address redirected to the same page without it; and a state-changing request needs the
//! page's anti-forgery token and, when the browser sends one, an `Origin` matching the
//! `Host`. On loopback (always with `--no-token`), a request must name a loopback host
//! (against DNS rebinding). Wrong tokens past a few a minute are answered 429
//! ([`super::wrong_tokens`]). A request refused at the door ends its connection
//! ([`at_the_door`]). Who decides through the inbox follows from the same: with the
//! token made at start or none, the user running it; with one given, whoever holds it
//! ([`decider`]).

use super::App;
use super::inbox_token::InboxToken;
use super::refused;
use crate::listen_address::loopback_ip;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode, Uri, header};
use axum::middleware;
use axum::response::{IntoResponse, Redirect, Response};
use std::collections::HashMap;
use std::sync::Arc;

/// The token check (when one is set) and the cross-site checks of state-changing requests;
/// every answer, a refusal too, carries the headers that guard a page ([`secured`]).
pub(super) async fn guard(
    State(app): State<Arc<App>>,
    Query(query): Query<HashMap<String, String>>,
    request: axum::extract::Request,
    next: middleware::Next,
) -> Response {
    let (response, set_cookie) = checked(&app, &query, request, next).await;
    secured(response, set_cookie)
}

/// [`guard`]'s answer before its guarding headers, with the token's cookie when the request
/// just gave the token.
async fn checked(
    app: &App,
    query: &HashMap<String, String>,
    request: axum::extract::Request,
    next: middleware::Next,
) -> (Response, Option<String>) {
    let headers = request.headers().clone();
    // With a token too: a site whose name an attacker points at 127.0.0.1 is the inbox's
    // origin to the browser. Only the cookie keeps it out then, which the browser keeps for
    // the name the person opened; refused here, it is not even read.
    if app.on_loopback && !loopback_host(&headers) {
        return (
            at_the_door(
                StatusCode::FORBIDDEN,
                "this inbox listens on loopback and answers only to localhost, 127.0.0.1 or \
                 [::1] (or another loopback address): open it by one of those, even when \
                 --bind named it otherwise",
            ),
            None,
        );
    }
    let mut set_cookie = None;
    if let Some(token) = app.token.secret() {
        let from_query = query
            .get("token")
            .is_some_and(|given| constant_eq(given, token));
        // The cookie holds the inbox's session secret, not the token: a browser sends it to
        // every port of the host, to whatever else listens there.
        let given_in_cookies = cookies(&headers, &app.token_cookie);
        let from_cookie = given_in_cookies
            .iter()
            .any(|given| constant_eq(given, &app.session));
        if !from_query && !from_cookie {
            // Only a token given and wrong is a guess (a page opened without one is not).
            let guessed = query.contains_key("token") || !given_in_cookies.is_empty();
            if let Some(wait) = guessed.then(|| app.wrong_tokens.count()).flatten() {
                let mut response = at_the_door(
                    StatusCode::TOO_MANY_REQUESTS,
                    "too many wrong tokens this minute: try again when it is over",
                );
                if let Ok(seconds) = wait.as_secs().max(1).to_string().parse() {
                    response.headers_mut().insert(header::RETRY_AFTER, seconds);
                }
                return (response, None);
            }
            return (
                at_the_door(
                    StatusCode::UNAUTHORIZED,
                    "a token is required: open the address `reins ui` printed when it started \
                     (with ?token=…), or the inbox's address with the token given with --token",
                ),
                None,
            );
        }
        if from_query {
            set_cookie = Some(format!(
                "{}={}; HttpOnly; SameSite=Strict; Path=/",
                app.token_cookie, app.session
            ));
        }
    }
    if request.method() == axum::http::Method::POST && !same_origin(&headers) {
        return (
            at_the_door(StatusCode::FORBIDDEN, "cross-site request refused"),
            None,
        );
    }
    let token_in_address = set_cookie.is_some()
        && matches!(
            *request.method(),
            axum::http::Method::GET | axum::http::Method::HEAD
        );
    let response = if token_in_address {
        // The same page without the token: the address bar, the browser's history and a link
        // copied from the page keep none (the cookie carries it from now on).
        Redirect::to(&without_token(request.uri(), query)).into_response()
    } else {
        next.run(request).await
    };
    (response, set_cookie)
}

/// A refusal at the door (`status`, saying `why`) that ends its connection: the inbox holds
/// a few hundred connections at once ([`super::listening`]), and a client without the token
/// that kept as many alive, asking again within the deadline for a head, would keep the
/// person's browser waiting unaccepted for as long as it liked. Closed, each connection it
/// opens again waits behind the person's.
fn at_the_door(status: StatusCode, why: &str) -> Response {
    let mut response = refused(status, why, None);
    response.headers_mut().insert(
        header::CONNECTION,
        header::HeaderValue::from_static("close"),
    );
    response
}

/// `response` with the token's cookie (when it was just given) and the headers every page
/// carries.
fn secured(mut response: Response, set_cookie: Option<String>) -> Response {
    if let Some(cookie) = set_cookie.and_then(|c| c.parse().ok()) {
        response.headers_mut().insert(header::SET_COOKIE, cookie);
    }
    let headers = response.headers_mut();
    headers.insert("x-frame-options", header::HeaderValue::from_static("DENY"));
    // Pages hold the anti-forgery token and the calls' arguments: kept by no cache, a
    // proxy's or the browser's; and read only as what they say they are.
    headers.insert(
        "cache-control",
        header::HeaderValue::from_static("no-store"),
    );
    headers.insert(
        "x-content-type-options",
        header::HeaderValue::from_static("nosniff"),
    );
    // A link to another site (a trace viewer) does not tell it the inbox's addresses.
    headers.insert(
        "referrer-policy",
        header::HeaderValue::from_static("same-origin"),
    );
    // `base-uri` and `form-action` are no fetches, so `default-src` does not cover them: a
    // `<base>` that ever got onto a page would point its forms and links elsewhere.
    headers.insert(
        "content-security-policy",
        header::HeaderValue::from_static(
            "default-src 'none'; style-src 'unsafe-inline'; script-src 'self'; \
             connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
        ),
    );
    // Another site's page may not load the inbox's answers into its own (as an image, a
    // script): with `--no-token` it would reach them.
    headers.insert(
        "cross-origin-resource-policy",
        header::HeaderValue::from_static("same-origin"),
    );
    response
}

/// The path of `uri` (with one leading slash) with the query's other parameters (as read, so however `token` was
/// spelled in the address it is gone; in the order of their names).
fn without_token(uri: &Uri, query: &HashMap<String, String>) -> String {
    use super::escape::url_segment;
    let mut rest: Vec<(&String, &String)> =
        query.iter().filter(|(name, _)| *name != "token").collect();
    rest.sort();
    let rest: Vec<String> = rest
        .into_iter()
        .map(|(name, value)| format!("{}={}", url_segment(name), url_segment(value)))
        .collect();
    // One leading slash: a browser reads `//host/…` (or `/\host/…`) as another site's
    // address, so `//evil.example/?token=…` would lead a person holding the token away.
    let path = format!("/{}", uri.path().trim_start_matches(['/', '\\']));
    if rest.is_empty() {
        path
    } else {
        format!("{path}?{}", rest.join("&"))
    }
}

/// Whether the request's `Host` (when it has one) names a loopback address. A site whose name
/// an attacker rebinds to 127.0.0.1 would otherwise be the same origin to the browser: without
/// a token it would read the pages (and their anti-forgery token) and decide calls; with one,
/// only the cookie, kept for the name the person opened, stands in its way. Such a request
/// carries the site's name in `Host`.
fn loopback_host(headers: &HeaderMap) -> bool {
    let Some(host) = headers.get(header::HOST) else {
        // Browsers always send it; a client that does not is not a page being rebound.
        return true;
    };
    let Ok(host) = host.to_str() else {
        return false;
    };
    let name = match host.strip_prefix('[') {
        // `[::1]:8080`
        Some(rest) => rest.split(']').next().unwrap_or_default(),
        None => host.split(':').next().unwrap_or_default(),
    };
    name.eq_ignore_ascii_case("localhost")
        || name.parse::<std::net::IpAddr>().is_ok_and(loopback_ip)
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

/// The values of every cookie `name` the request carries. A browser sends a host's cookies
/// to all its ports, so a page of another server on this machine can set one of the inbox's
/// name, for a longer path, which the browser sends before the person's own: the first alone
/// would lock the person out.
fn cookies<'a>(headers: &'a HeaderMap, name: &str) -> Vec<&'a str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .filter(|(key, _)| *key == name)
        .map(|(_, value)| value)
        .collect()
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
        refused(
            StatusCode::FORBIDDEN,
            "the form's anti-forgery token is wrong: reload the page (the inbox was \
             restarted since it was opened) and decide again",
            None,
        )
    })
}

/// Who a decision made in the inbox is recorded as made by. With the token made at start
/// (shown only to the user running the inbox) or none (only this machine reaches it), that
/// user decides; with one given, anyone it was given to may have, which the record says
/// rather than naming that user.
pub(super) fn decider(app: &App) -> String {
    match app.token {
        InboxToken::Off | InboxToken::Generated(_) => {
            crate::decided_by::decided_by("the reins web inbox")
        }
        InboxToken::Supplied(_) => format!(
            "a holder of the token of the reins web inbox {} runs",
            crate::decided_by::user_name()
        ),
    }
}
