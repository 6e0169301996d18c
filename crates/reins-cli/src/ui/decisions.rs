//! Deciding a waiting call from its form: approve (with the arguments as the person left
//! them; arguments that cannot be taken are shown again in the form, with why: [`KeptArgs`])
//! or deny, each checked first ([`checked_target`]: the page's anti-forgery token, and a
//! call that still waits), then recorded bound to the call as the page showed it
//! ([`decide()`], shared with the answers to a call in doubt, [`super::in_doubt`]).

use super::Resuming;
use super::forms::KeptArgs;
use super::{
    App, access, escape, forged, own_run, refused, run_page_html, run_parts, spawn_resume,
};
use crate::approve::parse_args;
use crate::{decide, runs};
use axum::extract::{Form, Path, State};
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Redirect, Response};
use reins::agent::ToolDecision;
use reins::store::{Decision, PendingApproval, RunStore};
use serde::Deserialize;
use std::sync::Arc;

#[derive(Deserialize)]
pub(super) struct ApproveForm {
    csrf: String,
    /// The call's binding as the page showed it: a decision for a call that changed since is
    /// refused by the store, never applied to the changed call.
    binding: Option<String>,
    args: Option<String>,
}

#[derive(Deserialize)]
pub(super) struct DenyForm {
    csrf: String,
    binding: Option<String>,
    message: Option<String>,
}

pub(super) async fn approve(
    State(app): State<Arc<App>>,
    Path((run, call)): Path<(String, String)>,
    Form(form): Form<ApproveForm>,
) -> Response {
    let _deciding = app.deciding.lock().await;
    let target = match checked_target(&app, &form.csrf, &run, call).await {
        Ok(target) => target,
        Err(refused) => return refused,
    };
    let decision = match form
        .args
        .as_deref()
        .map(str::trim)
        .filter(|a| !a.is_empty())
    {
        None => ToolDecision::approve(),
        Some(text) => match checked_args(&app, &target.tool_name, text).await {
            Ok(args) if args == target.arguments => ToolDecision::approve(),
            Ok(args) => ToolDecision::approve_with_args(args),
            Err(error) => {
                let Some(binding) = form.binding.as_deref() else {
                    return refused(StatusCode::BAD_REQUEST, &error, Some(&run));
                };
                let kept = KeptArgs {
                    call: &target.internal_call_id,
                    binding,
                    // As they wrote it, not trimmed: their text, whole.
                    text: form.args.as_deref().unwrap_or(text),
                    error: &error,
                };
                return edit_not_taken(&app, &run, &kept).await;
            }
        },
    };
    decide(Arc::clone(&app), run, &target, form.binding, decision).await
}

/// The answer to arguments a person edited that could not be taken: `run`'s page again
/// (400), their text kept in the call's form with why beside it, under the same
/// anti-forgery token; its refresh keeps the text while the run does not change.
async fn edit_not_taken(app: &App, run: &str, kept: &KeptArgs<'_>) -> Response {
    let live = match run_parts(app, run, None).await {
        Ok((_, live_forms)) => live_forms,
        Err(response) => return response,
    };
    match run_parts(app, run, Some(kept)).await {
        Ok((timeline, forms)) => (
            StatusCode::BAD_REQUEST,
            Html(run_page_html(app, run, &timeline, &forms, &live)),
        )
            .into_response(),
        Err(response) => response,
    }
}

/// The arguments a person edited in the form, read and checked against the tool's schema.
async fn checked_args(app: &App, tool: &str, text: &str) -> Result<serde_json::Value, String> {
    let args = parse_args(text)?;
    crate::edited_args::check(&app.agent, tool, &args).await?;
    Ok(args)
}

pub(super) async fn deny(
    State(app): State<Arc<App>>,
    Path((run, call)): Path<(String, String)>,
    Form(form): Form<DenyForm>,
) -> Response {
    let _deciding = app.deciding.lock().await;
    let target = match checked_target(&app, &form.csrf, &run, call).await {
        Ok(target) => target,
        Err(refused) => return refused,
    };
    let message = crate::approve::denial(form.message.as_deref());
    decide(
        Arc::clone(&app),
        run,
        &target,
        form.binding,
        ToolDecision::deny(message),
    )
    .await
}

/// A decision form's checks, shared by approve, deny, skip and supply: its anti-forgery token, then the
/// call it decides, which must wait for a decision.
pub(super) async fn checked_target(
    app: &App,
    csrf: &str,
    run: &str,
    call: String,
) -> Result<PendingApproval, Response> {
    if let Some(refused) = forged(app, csrf) {
        return Err(refused);
    }
    own_run(app, run).await?;
    // The inbox resumes a run once its last waiting call is decided here; one decided
    // elsewhere is resumed with the button its page shows.
    let continues = app.resuming.continues(&app.agent.path, run);
    decide::target_call(
        &app.store,
        run,
        Some(call),
        &continues,
        decide::Decided::Refuse,
    )
    .await
    .map_err(|error| refused(StatusCode::CONFLICT, &error, Some(run)))
}

/// Records the decision, bound to the call as the page showed it, then resumes the run in the
/// background once it waits for nothing.
pub(super) async fn decide(
    app: Arc<App>,
    run: String,
    target: &PendingApproval,
    shown_binding: Option<String>,
    decision: ToolDecision,
) -> Response {
    let Some(shown_binding) = shown_binding else {
        return refused(
            StatusCode::BAD_REQUEST,
            "the form does not say which version of the call it decides",
            Some(&run),
        );
    };
    let mut bound = Decision::new(target, decision, access::decider(&app));
    bound.binding = shown_binding;
    if let Err(error) = app.store.decide(&run, &bound).await {
        return refused(StatusCode::CONFLICT, &error.to_string(), Some(&run));
    }
    let still_waiting = runs::pending_of(&app.store, &run)
        .await
        .map(|p| !p.is_empty());
    if still_waiting == Ok(false) && matches!(app.resuming, Resuming::Here) {
        spawn_resume(app, run.clone());
    }
    Redirect::to(&format!("/runs/{}", escape::url_segment(&run))).into_response()
}
