//! Answers to a call in doubt — one that started before its run stopped and recorded no
//! result — without running it again: `skip` (the model is told, with the person's message)
//! and `supply` (what it returned, which the model reads as the tool's output). The decision
//! is the one `reins runs skip|supply` records ([`Answer`]), refused as there for a call that
//! is not in doubt; the checks are approve's and deny's ([`checked_target`]: anti-forgery
//! token, the run's owner, a call that waits; the token and Host checks before it, in
//! [`super::access::guard`]), and so is the record and the resume ([`decide`]). A supplied
//! result is at most [`MOST_SUPPLIED_RESULT_BYTES`].

use super::{App, checked_target, decide, refused};
use crate::in_doubt::Answer;
use axum::extract::{Form, Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use serde::Deserialize;
use std::sync::Arc;

/// The most bytes of a result supplied through the inbox: it goes into the run's history,
/// its trail and every model call after it. Four times the output a shell tool gives back.
pub(super) const MOST_SUPPLIED_RESULT_BYTES: usize = 64 * 1024;

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
