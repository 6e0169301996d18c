//! Every ready-made hook answers without an allocation of its own: the future of each method
//! it implements fits the room a stack gives a hook's answer inline (`HOOK_FUTURE_BYTES`); a
//! larger one would be boxed on every call. Paths that await something slow (asking a
//! person, running a check) box what they await, and only when they take it.

use super::approval::ApprovalPolicy;
use super::audit::AuditLog;
use super::budget::Budget;
use super::cache::ResponseCache;
use super::fallback::ModelFallback;
use super::guardrail::Guardrails;
use super::loop_breaker::LoopBreaker;
use super::redaction::Redaction;
use super::tool_choice::ToolChoiceByTurn;
use crate::agent::hook::{HOOK_FUTURE_BYTES, called_on_first_poll};
use crate::agent::{
    AgentHook, CompletionCallEvent, DispatchEvent, DispatchKind, EffectCall, EffectOutput, Flow,
    HookContext, ModelTurnFinished, OutcomeEvent, RunSettledEvent, RunStartEvent, StepEvent,
};
use crate::completion::{CompletionRequest, RawResponse};
use crate::message::{AssistantContent, Message, OneOrMany};
use serde_json::json;

/// Asserts that a hook's answer to `$method` fits inline, as a stack holds it (the method
/// called on the answer's first poll, with the event it lends).
macro_rules! fits {
    ($name:expr, $hook:expr, $method:ident, $ctx:expr, $event:expr) => {{
        let (hook, ctx, event) = (&$hook, &$ctx, &$event);
        let answer = called_on_first_poll(move || hook.$method(ctx, *event));
        let size = std::mem::size_of_val(&answer);
        assert!(
            size <= HOOK_FUTURE_BYTES,
            "{}: {size} bytes, more than the {HOOK_FUTURE_BYTES} held inline",
            $name
        );
    }};
}

/// Watches every step through `on_event`, and nothing else.
struct StepViewOnly;

impl AgentHook for StepViewOnly {
    async fn on_event(&self, _ctx: &HookContext, event: StepEvent<'_>) -> Flow {
        std::hint::black_box(event.kind());
        Flow::Continue
    }
}

#[test]
fn every_ready_made_hooks_answer_fits_inline() {
    let ctx = HookContext::new("run-1");
    let payload = json!({});
    let call = EffectCall::new("effect", &payload);
    let dispatch = DispatchEvent::effect(DispatchKind::Custom, &call);
    let output = EffectOutput::new("effect", &payload);
    let outcome = OutcomeEvent::effect(DispatchKind::Custom, &output);
    let prompt = Message::user("hi");
    let run_start = RunStartEvent {
        prompt: &prompt,
        history: &[],
    };
    let content = OneOrMany::one(AssistantContent::text("an answer"));
    let raw = RawResponse::none();
    let turn = ModelTurnFinished {
        turn: 1,
        content: &content,
        usage: Default::default(),
        finish_reason: None,
        response_id: None,
        raw: &raw,
    };
    let request = CompletionRequest::default();
    let completion_call = CompletionCallEvent {
        prompt: &prompt,
        history: &[],
        turn: 1,
        request: &request,
    };
    let settled = RunSettledEvent {
        result: Ok("an answer"),
        history: &[],
        usage: Default::default(),
        turns: 1,
    };

    // A hook written against the step view alone: every typed method's default holds its
    // event and the future of the `on_event` it asks.
    let step_view = StepViewOnly;
    fits!(
        "on_run_start's default",
        step_view,
        on_run_start,
        ctx,
        run_start
    );
    fits!(
        "on_completion_call's default",
        step_view,
        on_completion_call,
        ctx,
        completion_call
    );
    fits!(
        "on_dispatch's default",
        step_view,
        on_dispatch,
        ctx,
        dispatch
    );
    fits!("on_outcome's default", step_view, on_outcome, ctx, outcome);
    fits!(
        "on_model_turn_finished's default",
        step_view,
        on_model_turn_finished,
        ctx,
        turn
    );
    fits!(
        "on_run_settled's default",
        step_view,
        on_run_settled,
        ctx,
        settled
    );

    let approval = ApprovalPolicy::new();
    fits!(
        "ApprovalPolicy::on_dispatch",
        approval,
        on_dispatch,
        ctx,
        dispatch
    );

    let audit = AuditLog::new(std::io::sink());
    fits!("AuditLog::on_dispatch", audit, on_dispatch, ctx, dispatch);
    fits!("AuditLog::on_outcome", audit, on_outcome, ctx, outcome);
    fits!(
        "AuditLog::on_run_settled",
        audit,
        on_run_settled,
        ctx,
        settled
    );

    let budget = Budget::new();
    fits!("Budget::on_run_start", budget, on_run_start, ctx, run_start);
    fits!("Budget::on_dispatch", budget, on_dispatch, ctx, dispatch);
    fits!("Budget::on_outcome", budget, on_outcome, ctx, outcome);

    let cache = ResponseCache::in_memory();
    fits!(
        "ResponseCache::on_dispatch",
        cache,
        on_dispatch,
        ctx,
        dispatch
    );
    fits!("ResponseCache::on_outcome", cache, on_outcome, ctx, outcome);

    let fallback = ModelFallback::new(["backup"]);
    fits!(
        "ModelFallback::on_outcome",
        fallback,
        on_outcome,
        ctx,
        outcome
    );

    let guardrails = Guardrails::new();
    fits!(
        "Guardrails::on_run_start",
        guardrails,
        on_run_start,
        ctx,
        run_start
    );
    fits!(
        "Guardrails::on_model_turn_finished",
        guardrails,
        on_model_turn_finished,
        ctx,
        turn
    );
    fits!(
        "Guardrails::on_dispatch",
        guardrails,
        on_dispatch,
        ctx,
        dispatch
    );

    let loop_breaker = LoopBreaker::new();
    fits!(
        "LoopBreaker::on_dispatch",
        loop_breaker,
        on_dispatch,
        ctx,
        dispatch
    );

    let redaction = Redaction::new();
    fits!(
        "Redaction::on_dispatch",
        redaction,
        on_dispatch,
        ctx,
        dispatch
    );
    fits!("Redaction::on_outcome", redaction, on_outcome, ctx, outcome);

    let tool_choice = ToolChoiceByTurn::new();
    fits!(
        "ToolChoiceByTurn::on_completion_call",
        tool_choice,
        on_completion_call,
        ctx,
        completion_call
    );
}
