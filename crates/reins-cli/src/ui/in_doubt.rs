//! Answers to a call in doubt — one that started before its run stopped and recorded no
//! result — without running it again: `skip` (the model is told, with the person's message)
//! and `supply` (what it returned, which the model reads as the tool's output). The decision
//! is the one `reins runs skip|supply` records ([`Answer`]), refused as there for a call that
//! is not in doubt; the checks are approve's and deny's ([`checked_target`]: anti-forgery
//! token, the run's owner, a call that waits; the token and Host checks before it, in
//! [`super::access::guard`]), and so is the record and the resume ([`decide()`]). A supplied
//! result is at most [`MOST_SUPPLIED_RESULT_BYTES`]; a form far larger is not kept whole
//! ([`route`]), and refused in the inbox's words too.

use super::{App, checked_target, decide, refused};
use crate::in_doubt::Answer;
use axum::body::Body;
use axum::extract::{Form, Path, Request, State};
use axum::http::StatusCode;
use axum::middleware;
use axum::response::Response;
use axum::routing::MethodRouter;
use futures::StreamExt;
use serde::Deserialize;
use std::sync::Arc;

/// The most bytes of a result supplied through the inbox: it goes into the run's history,
/// its trail and every model call after it. Four times the output a shell tool gives back.
pub(super) const MOST_SUPPLIED_RESULT_BYTES: usize = 64 * 1024;

/// The most bytes of a skip or supply form kept: a result of [`MOST_SUPPLIED_RESULT_BYTES`]
/// as a form encodes it (three characters a byte at most, `%XX`), and room for the other
/// fields. Past it the framework would answer in its own words (past its default of 2 MB).
const MOST_FORM_BYTES: usize = 3 * MOST_SUPPLIED_RESULT_BYTES + 16 * 1024;

/// The most bytes of a form read to its end, the rest past [`MOST_FORM_BYTES`] dropped: a
/// browser still sending a body the inbox answered without reading sees the connection
/// closed, not the answer. Past it, the connection is closed all the same.
const MOST_FORM_BYTES_READ: usize = 16 * 1024 * 1024;

/// `handler`'s route, which keeps at most [`MOST_FORM_BYTES`] of a form ([`bounded`]).
pub(super) fn route(handler: MethodRouter<Arc<App>>) -> MethodRouter<Arc<App>> {
    handler.layer(middleware::from_fn(bounded))
}

/// The request with its form, when it is at most [`MOST_FORM_BYTES`]; else a result too large
/// refused as [`suppliable`] refuses one, once the form is read (to
/// [`MOST_FORM_BYTES_READ`]).
async fn bounded(
    Path((run, _)): Path<(String, String)>,
    request: Request,
    next: middleware::Next,
) -> Response {
    let (parts, body) = request.into_parts();
    let mut body = body.into_data_stream();
    let mut kept = Vec::new();
    let mut read = 0usize;
    while let Some(chunk) = body.next().await {
        let Ok(chunk) = chunk else {
            return refused(StatusCode::BAD_REQUEST, "the form was cut off", Some(&run));
        };
        read = read.saturating_add(chunk.len());
        if read <= MOST_FORM_BYTES {
            kept.extend_from_slice(&chunk);
        } else if read > MOST_FORM_BYTES_READ {
            break;
        }
    }
    if read > MOST_FORM_BYTES {
        return refused(
            StatusCode::PAYLOAD_TOO_LARGE,
            &format!(
                "the form is over {} KiB; the inbox takes a result of at most \
                 {MOST_SUPPLIED_RESULT_BYTES} bytes ({} KiB): shorten it, or supply it with \
                 `reins runs supply --result`",
                MOST_FORM_BYTES / 1024,
                MOST_SUPPLIED_RESULT_BYTES / 1024
            ),
            Some(&run),
        );
    }
    next.run(Request::from_parts(parts, Body::from(kept))).await
}

#[derive(Deserialize)]
pub(super) struct SkipForm {
    csrf: String,
    /// The call's binding as the page showed it (see approve's form).
    binding: Option<String>,
    /// What the model is told, after "skipped by the user".
    message: Option<String>,
}

#[derive(Deserialize)]
pub(super) struct SupplyForm {
    csrf: String,
    binding: Option<String>,
    /// What the call returned, as the model reads it.
    result: Option<String>,
}

pub(super) async fn skip(
    State(app): State<Arc<App>>,
    Path((run, call)): Path<(String, String)>,
    Form(form): Form<SkipForm>,
) -> Response {
    let answer = Answer::Skip(form.message);
    answer_call(app, (run, call), &form.csrf, form.binding, answer).await
}

pub(super) async fn supply(
    State(app): State<Arc<App>>,
    Path((run, call)): Path<(String, String)>,
    Form(form): Form<SupplyForm>,
) -> Response {
    let answer = Answer::Supply(form.result.unwrap_or_default());
    answer_call(app, (run, call), &form.csrf, form.binding, answer).await
}

/// Records `answer` about the call, which must wait and be in doubt, then resumes the run
/// once it waits for nothing.
async fn answer_call(
    app: Arc<App>,
    (run, call): (String, String),
    csrf: &str,
    shown_binding: Option<String>,
    answer: Answer,
) -> Response {
    let _deciding = app.deciding.lock().await;
    let target = match checked_target(&app, csrf, &run, call).await {
        Ok(target) => target,
        Err(refused) => return refused,
    };
    let decision = match answer.decision_for(&target) {
        Ok(decision) => decision,
        Err(error) => return refused(StatusCode::CONFLICT, &error, Some(&run)),
    };
    if let Answer::Supply(result) = &answer
        && let Err((status, why)) = suppliable(result)
    {
        return refused(status, &why, Some(&run));
    }
    decide(Arc::clone(&app), run, &target, shown_binding, decision).await
}

/// Why a supplied result is not taken: empty (a form sent before anything was typed), or
/// longer than [`MOST_SUPPLIED_RESULT_BYTES`].
fn suppliable(result: &str) -> Result<(), (StatusCode, String)> {
    if result.trim().is_empty() {
        return Err((
            StatusCode::BAD_REQUEST,
            "the result is empty: type what the call returned (or skip it)".to_owned(),
        ));
    }
    if result.len() > MOST_SUPPLIED_RESULT_BYTES {
        return Err((
            StatusCode::PAYLOAD_TOO_LARGE,
            format!(
                "the result is {} bytes; the inbox takes at most {MOST_SUPPLIED_RESULT_BYTES} \
                 ({} KiB): shorten it, or supply it with `reins runs supply --result`",
                result.len(),
                MOST_SUPPLIED_RESULT_BYTES / 1024
            ),
        ));
    }
    Ok(())
}
