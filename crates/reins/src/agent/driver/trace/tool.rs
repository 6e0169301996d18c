//! The `execute_tool` span of a tool call: its attributes, the hook decisions that change the
//! call, and its outcome.

use super::error_type::tool_failure_type;
use super::{current_span, hook_decision, record_error, record_exception};
use crate::agent::hook::ToolDispatchDecision;
use crate::observe::{ContentKind, Telemetry, shown_description, shown_name};
use crate::run::{PendingCall, ToolDecision};
use crate::tool::{ToolOutcome, ToolOutput, ToolSet};
use serde_json::Value;
use tracing::Span;
use tracing::field::Empty;

/// The span of one tool call: dispatch hooks, execution and outcome hooks.
/// Its arguments are recorded once settled ([`ToolArguments`]).
pub(in crate::agent::driver) fn tool_span(
    pending: &PendingCall,
    tools: &ToolSet,
    run_id: &str,
) -> Span {
    let span = tracing::info_span!(
        target: "reins",
        "execute_tool",
        otel.name = Empty,
        gen_ai.operation.name = "execute_tool",
        gen_ai.tool.name = shown_name(&pending.call.name).as_ref(),
        gen_ai.tool.call.id = shown_name(&pending.call.id).as_ref(),
        gen_ai.tool.type = "function",
        gen_ai.tool.description = Empty,
        gen_ai.tool.call.arguments = Empty,
        gen_ai.tool.call.result = Empty,
        input.value = Empty,
        input.mime_type = Empty,
        output.value = Empty,
        output.mime_type = Empty,
        reins.internal_call_id = pending.internal_call_id.as_str(),
        reins.effect_id = Empty,
        reins.hook.action = Empty,
        reins.tool.outcome = Empty,
        error.type = Empty,
        otel.status_code = Empty,
        otel.status_description = Empty,
    );
    if span.is_disabled() {
        return span;
    }
    span.record(
        "otel.name",
        format!("execute_tool {}", shown_name(&pending.call.name)),
    );
    if let Some(definition) = tools.definition(&pending.call.name) {
        span.record(
            "gen_ai.tool.description",
            shown_description(&definition.description).as_ref(),
        );
    }
    span.record("reins.effect_id", pending.effect_id(run_id));
    span
}

/// The arguments a call's `execute_tool` span shows: those its tool runs with, known once its
/// dispatch hooks or a stored decision settle them ([`settle`](Self::settle)), so a hook's
/// rewrite or a person's edit on approval is what the trace shows, not the model's ask (which
/// its `chat` span's output holds). Recorded once: OpenTelemetry appends an attribute recorded
/// again rather than replacing it. Dropped unsettled (the run cut off while the call's hooks
/// decide, or a hook failed), it records the model's ask, what was being decided.
pub(in crate::agent::driver) struct ToolArguments<'a> {
    /// The current `execute_tool` span, until the arguments are recorded on it. Boxed: an
    /// untraced call carries one word through its future, not a span's five.
    span: Option<Box<Span>>,
    asked: &'a Value,
}

impl<'a> ToolArguments<'a> {
    /// The arguments of the call of the current span, the model's `asked` until settled.
    pub(in crate::agent::driver) fn asked(asked: &'a Value) -> Self {
        ToolArguments {
            span: current_span().map(Box::new),
            asked,
        }
    }

    /// Records `arguments`, those the call runs with (or the model's ask, for a call not run).
    pub(in crate::agent::driver) fn settle(mut self, arguments: &Value) {
        if let Some(span) = self.span.take() {
            record_arguments(&span, arguments);
        }
    }
}

impl Drop for ToolArguments<'_> {
    fn drop(&mut self) {
        if let Some(span) = self.span.take() {
            record_arguments(&span, self.asked);
        }
    }
}

/// Records a call's arguments on its span when tool arguments are recorded.
fn record_arguments(span: &Span, arguments: &Value) {
    let arguments = Telemetry::content(span, ContentKind::ToolArguments, |limit| {
        serde_json::to_string(&limit.value(arguments)).ok()
    });
    if let Some(arguments) = arguments {
        span.record(ContentKind::ToolArguments.attribute(), arguments.as_str());
        // As the call's input too (OpenInference's `input.value`), which Phoenix lists for
        // the span and hands its evaluators: it reads none from the conventions' arguments.
        span.record("input.value", arguments.as_str());
        span.record("input.mime_type", "application/json");
    }
}

/// Records a hook's dispatch decision that changes the call on the current `execute_tool`
/// span, with its event. Inline: a call that goes on unchanged, the usual answer, records
/// nothing and pays nothing, not even a call.
#[inline]
pub(in crate::agent::driver) fn record_dispatch(decision: &ToolDispatchDecision) {
    if !matches!(decision, ToolDispatchDecision::Proceed(None)) {
        record_changed_dispatch(decision);
    }
}

#[inline(never)]
fn record_changed_dispatch(decision: &ToolDispatchDecision) {
    let action = match decision {
        ToolDispatchDecision::Proceed(None) => return,
        ToolDispatchDecision::Proceed(Some(_)) => "rewrite",
        ToolDispatchDecision::Skip(_) => "skip",
        ToolDispatchDecision::Deny(_) => "deny",
        ToolDispatchDecision::Stop(_) => "stop",
        ToolDispatchDecision::Suspend(_) => "suspend",
    };
    let Some(span) = current_span() else {
        return;
    };
    span.record("reins.hook.action", action);
    // A stop ends the run; its event is recorded once, on the run's span.
    if !matches!(decision, ToolDispatchDecision::Stop(_)) {
        hook_decision(action, "on_tool_dispatch");
    }
    if let ToolDispatchDecision::Suspend(reason) = decision {
        record_suspended(&span, reason);
    }
}

/// Marks a call that waits for a decision: its outcome is `suspended`, and its output (when
/// tool results are recorded) says why, as Phoenix shows a call by its output. No status:
/// waiting is not a failure, and the call has not succeeded either.
fn record_suspended(span: &Span, reason: &str) {
    span.record("reins.tool.outcome", "suspended");
    let waiting = Telemetry::content(span, ContentKind::ToolResult, |limit| {
        Some(limit.string(waits_for_decision(reason)))
    });
    if let Some(waiting) = waiting {
        span.record("output.value", waiting.as_str());
        span.record("output.mime_type", "text/plain");
    }
}

/// What a suspended call's span and its run's span say of it: `waits for a decision: REASON`.
pub(super) fn waits_for_decision(reason: &str) -> String {
    format!("waits for a decision: {reason}")
}

/// Records a tool call's result on the current `execute_tool` span.
pub(in crate::agent::driver) fn record_tool_result(output: &ToolOutput, outcome: &ToolOutcome) {
    let Some(span) = current_span() else {
        return;
    };
    let name = match outcome {
        ToolOutcome::Success => "success",
        ToolOutcome::Failed(failure) => {
            let error_type = tool_failure_type(failure);
            record_error(&span, error_type);
            // What the call told the model, its error.
            record_exception(&span, ContentKind::ToolResult, error_type, || {
                output.render()
            });
            "failed"
        }
        ToolOutcome::Skipped { .. } => "skipped",
        ToolOutcome::Denied { .. } => "denied",
    };
    span.record("reins.tool.outcome", name);
    // The conventions' result is that of a successful execution only: what a failed, denied
    // or skipped call answers the model is reins's text, not the tool's, and its outcome says
    // what happened.
    if let ToolOutcome::Success = outcome {
        Telemetry::record_content(&span, ContentKind::ToolResult, |limit| {
            Some(limit.string(output.render()))
        });
    }
}

/// The action of a person's (or program's) stored decision a resumed call runs under.
pub(in crate::agent::driver) fn record_resume_decision(decision: &ToolDecision) {
    let Some(span) = current_span() else {
        return;
    };
    let action = match decision {
        ToolDecision::Approve | ToolDecision::Rerun => return,
        ToolDecision::ApproveWithArgs { .. } => "rewrite",
        ToolDecision::Deny { .. } => "deny",
        ToolDecision::Skip { .. } => "skip",
        ToolDecision::SupplyResult { .. } => "supply_result",
    };
    span.record("reins.hook.action", action);
    hook_decision(action, "resume_decision");
}
