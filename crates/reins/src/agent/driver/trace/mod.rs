//! The run's spans and their attributes, named after the OpenTelemetry GenAI semantic
//! conventions: `invoke_agent` per run, `chat {model}` per model call, `execute_tool {tool}`
//! per tool call, and a `reins.hook.decision` event per hook decision that changes the run.
//!
//! Every function returns at once when its span is disabled (no subscriber, or one that
//! filters reins out; with no subscriber, one atomic load decides): attribute values are
//! computed only for a span that records them, and content only when a subscriber's
//! [`Telemetry`] opts in.

mod cancelled;
mod error_type;
mod tool;

use super::Halt;
use crate::agent::builder::AgentConfig;
use crate::agent::error::PromptError;
use crate::agent::response::PromptResponse;
use crate::completion::{CompletionRequest, CompletionResponse, DynCompletionModel, Usage};
use crate::message::Message;
use crate::observe::messages::{self, finish_reason_name};
use crate::observe::{ContentKind, Telemetry, shown_name};
use crate::run::{RunState, RunStatus, SuspendedRun};
pub(super) use cancelled::{cancellable, record_run_cancelled};
use error_type::{halt_error_type, prompt_error_type};
use tool::waits_for_decision;
pub(super) use tool::{
    ToolArguments, record_dispatch, record_resume_decision, record_tool_result, tool_span,
};
use tracing::field::Empty;
use tracing::level_filters::{LevelFilter, STATIC_MAX_LEVEL};
use tracing::{Level, Span};

/// The `invoke_agent` span of a run. A new run stores the span's trace context in `state`; a
/// resumed one (its state carries a context) continues that trace, unless the state is still
/// `running` (read before the run sets it so): its last half never ended as far as the state
/// knows (its process died mid-run), so its span, whose context was stored, was never exported,
/// and a child of it would hang under a parent no backend received. Such a run starts a trace
/// of its own, linked to the stored context, and stores its context instead, for its later
/// halves to continue. (A run whose future was dropped is left `running` too, its span ended:
/// it starts a linked trace all the same.) `reins.resumed_from` says which: the status the run
/// was resumed from. A run's input is recorded
/// with its first model call ([`record_run_input`]), as the hooks sent it, or, when a new run
/// ends before that call's request is recorded (a hook's stop before it, a failure), as the
/// run ends.
pub(super) fn run_span(config: &AgentConfig, state: &mut RunState) -> Span {
    let span = tracing::info_span!(
        target: "reins",
        "invoke_agent",
        otel.name = Empty,
        gen_ai.operation.name = "invoke_agent",
        gen_ai.agent.name = Empty,
        gen_ai.conversation.id = state.conversation_id.as_deref().unwrap_or(&state.run_id),
        reins.run.id = state.run_id.as_str(),
        gen_ai.provider.name = Empty,
        gen_ai.request.model = Empty,
        gen_ai.request.temperature = Empty,
        gen_ai.request.max_tokens = Empty,
        gen_ai.usage.input_tokens = Empty,
        gen_ai.usage.output_tokens = Empty,
        gen_ai.usage.cache_read.input_tokens = Empty,
        gen_ai.usage.cache_creation.input_tokens = Empty,
        gen_ai.input.messages = Empty,
        gen_ai.output.messages = Empty,
        input.value = Empty,
        output.value = Empty,
        reins.turn = Empty,
        reins.resumed = state.trace_context.is_some(),
        reins.resumed_from = Empty,
        reins.run.status = Empty,
        error.type = Empty,
        otel.status_code = Empty,
        otel.status_description = Empty,
    );
    if span.is_disabled() {
        return span;
    }
    match &config.name {
        Some(name) => {
            span.record("otel.name", format!("invoke_agent {name}"));
            span.record("gen_ai.agent.name", name.as_str());
        }
        None => {
            span.record("otel.name", "invoke_agent");
        }
    }
    record_model_identity(&span, &**config.models.default_model());
    if let Some(temperature) = config.temperature {
        span.record("gen_ai.request.temperature", temperature);
    }
    if let Some(max_tokens) = config.max_tokens {
        span.record("gen_ai.request.max_tokens", int(max_tokens));
    }
    if state.trace_context.is_some() {
        span.record("reins.resumed_from", status_name(state.status));
    }
    Telemetry::of(&span, |telemetry| {
        let bridge = telemetry.bridge()?;
        match &state.trace_context {
            Some(stored) if state.status == RunStatus::Running => {
                bridge.link_to(&span, stored);
                state.trace_context = bridge.capture(&span);
            }
            Some(stored) => bridge.continue_from(&span, stored),
            None => state.trace_context = bridge.capture(&span),
        }
        Some(())
    });
    span
}

/// Records a run's input on its span (`run`) when content is recorded: the last user
/// message of `history` (a resumed run's too: the prompt its answer is to, which Phoenix shows
/// beside that answer). With its first model call, `history` is that call's request as the
/// dispatch hooks left it, so that what a hook masked (a redaction) is masked here too, as in
/// the `chat` span; a new run that ended before gives its own history, the prompt as its
/// `on_run_start` hooks left it (no request hook saw it, and no model was sent it), through
/// the telemetry's redactor like all content.
pub(super) fn record_run_input(run: &Span, history: &[Message]) {
    if run.is_disabled() {
        return;
    }
    let Some(input) = history
        .iter()
        .rev()
        .find(|message| matches!(message, Message::User { .. }))
    else {
        return;
    };
    Telemetry::record_content(run, ContentKind::InputMessages, |limit| {
        messages::input_messages(std::slice::from_ref(input), limit)
    });
    // The run's input as plain text too, where trace viewers list a trace's input
    // (OpenInference's `input.value`, which Phoenix shows for the trace's root).
    Telemetry::record_content_at(run, ContentKind::InputMessages, "input.value", |limit| {
        Some(limit.string(input.text()))
    });
}

/// Records how a run ended on its span, with the tokens its model calls used and its turns:
/// given apart from `result`, as a failed run's error holds no state.
pub(super) fn record_run_outcome(
    span: &Span,
    result: &Result<PromptResponse, PromptError>,
    usage: Usage,
    turns: usize,
) {
    if span.is_disabled() {
        return;
    }
    let status = match result {
        Ok(_) => RunStatus::Completed,
        Err(PromptError::Suspended { run }) => {
            record_waiting(span, run);
            RunStatus::Suspended
        }
        Err(error) => {
            record_error(span, &prompt_error_type(error));
            if let PromptError::Cancelled { .. } = error {
                // Every hook's stop ends the run here: one event per stop, whichever hook.
                let _entered = span.enter();
                hook_decision("stop", "hook");
            }
            RunStatus::Failed
        }
    };
    span.record("reins.run.status", status_name(status));
    if let Ok(response) = result {
        Telemetry::record_content(span, ContentKind::OutputMessages, |limit| {
            messages::answer_messages(&response.output, limit)
        });
        Telemetry::record_content_at(span, ContentKind::OutputMessages, "output.value", |limit| {
            Some(limit.text(&response.output).into_owned())
        });
    }
    record_usage(span, usage);
    span.record("reins.turn", int(turns as u64));
}

/// Records what a suspended run waits for as its output (OpenInference's `output.value`) when
/// content is recorded, one line per call: `book (t1c1) waits for a decision: <the hook's
/// reason>`. Phoenix lists a trace by its root span's input and output, and the root of a run
/// resumed later is this half, which ended without an answer: an empty output would read as
/// nothing happened. Its resumed half's span carries the answer (its spans cannot change this
/// one, exported already). Redacted as output: the reasons are the hooks' text.
fn record_waiting(span: &Span, run: &SuspendedRun) {
    Telemetry::record_content_at(span, ContentKind::OutputMessages, "output.value", |limit| {
        let lines: Vec<String> = run
            .pending()
            .map(|call| {
                format!(
                    "{} ({}) {}",
                    shown_name(&call.call.name),
                    call.internal_call_id,
                    waits_for_decision(call.suspended.as_deref().unwrap_or_default())
                )
            })
            .collect();
        Some(limit.string(lines.join("\n")))
    });
}

/// The span of one model call (the hooks around it included), named once the model is known.
/// A turn whose call an outcome hook retries (a fallback) has one per call.
///
/// The provider and model (`gen_ai.provider.name`, `gen_ai.request.model`) are recorded after
/// the span starts, by design, though the conventions ask for them at creation so samplers
/// can read them: the span holds the completion-call and model-select hooks, which choose the
/// model, so it is not known when the span opens. A sampler sees the operation name and the
/// run's `invoke_agent` span (which names the default model at creation) instead.
pub(super) fn chat_span(run_id: &str, turn: usize) -> Span {
    let span = tracing::info_span!(
        target: "reins",
        "chat",
        otel.name = "chat",
        otel.kind = "client",
        gen_ai.operation.name = "chat",
        gen_ai.provider.name = Empty,
        gen_ai.request.model = Empty,
        gen_ai.request.temperature = Empty,
        gen_ai.request.max_tokens = Empty,
        gen_ai.request.stream = Empty,
        gen_ai.output.type = Empty,
        gen_ai.response.model = Empty,
        gen_ai.response.id = Empty,
        gen_ai.usage.input_tokens = Empty,
        gen_ai.usage.output_tokens = Empty,
        gen_ai.usage.cache_read.input_tokens = Empty,
        gen_ai.usage.cache_creation.input_tokens = Empty,
        gen_ai.system_instructions = Empty,
        gen_ai.input.messages = Empty,
        gen_ai.output.messages = Empty,
        output.value = Empty,
        output.mime_type = Empty,
        reins.turn = int(turn as u64),
        reins.model.label = Empty,
        reins.effect_id = Empty,
        error.type = Empty,
        otel.status_code = Empty,
        otel.status_description = Empty,
    );
    if !span.is_disabled() {
        span.record("reins.effect_id", format!("{run_id}/t{turn}"));
    }
    span
}

/// Records the model of the current `chat` span's call, which names the span, and the request
/// sent to it (`streamed`: its answer is asked for as a stream).
pub(super) fn record_chat_request(
    model: &dyn DynCompletionModel,
    label: &str,
    request: &CompletionRequest,
    streamed: bool,
) {
    let Some(span) = current_span() else {
        return;
    };
    record_model_identity(&span, model);
    let name = format!("chat {}", model.model_name().unwrap_or(label));
    span.record("otel.name", name.as_str());
    Telemetry::of(&span, |telemetry| {
        if let Some(bridge) = telemetry.bridge() {
            bridge.rename(&span, name);
        }
    });
    span.record("reins.model.label", label);
    if let Some(temperature) = request.temperature {
        span.record("gen_ai.request.temperature", temperature);
    }
    if let Some(max_tokens) = request.max_tokens {
        span.record("gen_ai.request.max_tokens", int(max_tokens));
    }
    // Recorded only when true: the conventions require it if and only if the request streams.
    if streamed {
        span.record("gen_ai.request.stream", true);
    }
    // Native structured output asks for JSON; a typed answer given through an output tool is
    // a tool call, and a plain request asks for no type in particular.
    if request.output_schema.is_some() {
        span.record("gen_ai.output.type", "json");
    }
    if let Some(preamble) = &request.preamble {
        Telemetry::record_content(&span, ContentKind::SystemInstructions, |limit| {
            messages::system_instructions(preamble, limit)
        });
    }
    Telemetry::record_content(&span, ContentKind::InputMessages, |limit| {
        messages::input_messages(&request.history, limit)
    });
}

/// Records why a model call (with its hooks) failed on its `chat` span. A response it had
/// is recorded already (see [`record_chat_response`]). A failed call's error (the provider's
/// body, say) is its `exception` event when output is recorded: the status says only its
/// `error.type` (`404`), and a person needs the provider's words (`the model ... does not
/// exist`).
pub(super) fn record_chat_failure(span: &Span, halt: &Halt) {
    if span.is_disabled() {
        return;
    }
    let error_type = halt_error_type(halt);
    record_error(span, &error_type);
    if let Halt::Completion(error) = halt {
        record_exception(span, ContentKind::OutputMessages, &error_type, || {
            error.to_string()
        });
    }
}

/// An `exception` event on `span` (a failed call's) whose message is `message()` when content
/// of `kind` is recorded, through the redactor and cut to the part limit like all content:
/// trace viewers show an exception's message with the failed span (Phoenix, in its events),
/// where the span's status says only the `error.type`, recorded whatever the content settings.
fn record_exception(
    span: &Span,
    kind: ContentKind,
    error_type: &str,
    message: impl FnOnce() -> String,
) {
    let told = Telemetry::content(span, kind, |limit| Some(limit.string(message())));
    if let Some(message) = told {
        tracing::info!(
            target: "reins",
            parent: span,
            { exception.type = error_type, exception.message = message.as_str() },
            "exception"
        );
    }
}

/// Records the response of a model call on its `chat` span: usage, response id and model,
/// finish reasons, and the answer when content is recorded. Called before the outcome hooks
/// judge it, so a hook that then stops the run leaves the call's usage on its span (and in
/// the token metrics).
pub(super) fn record_chat_response(span: &Span, response: &CompletionResponse) {
    if span.is_disabled() {
        return;
    }
    record_usage(span, response.usage);
    if let Some(id) = &response.response_id {
        span.record("gen_ai.response.id", shown_name(id).as_ref());
    }
    // The model that answered, where the provider's JSON says (it may differ from the one
    // asked for, e.g. a dated snapshot behind an alias).
    let answered = response
        .raw
        .json()
        .and_then(|raw| raw.get("model").or_else(|| raw.get("modelVersion")))
        .and_then(|model| model.as_str());
    if let Some(model) = answered {
        span.record("gen_ai.response.model", shown_name(model).as_ref());
    }
    if let Some(reason) = &response.finish_reason {
        let reason = shown_name(finish_reason_name(reason)).into_owned();
        Telemetry::of(span, |telemetry| {
            if let Some(bridge) = telemetry.bridge() {
                bridge.record_strings(span, "gen_ai.response.finish_reasons", vec![reason]);
            }
        });
    }
    let messages = Telemetry::content(span, ContentKind::OutputMessages, |limit| {
        messages::output_messages(
            response.content.as_slice(),
            response.finish_reason.as_ref(),
            limit,
        )
    });
    let Some(messages) = messages else {
        return;
    };
    span.record(ContentKind::OutputMessages.attribute(), messages.as_str());
    // The answer as plain text too (OpenInference's `output.value`), which Phoenix lists as
    // the call's output: without it, Phoenix makes one of the response's id and model. An
    // answer that only calls tools is shown as its messages' JSON.
    // Its type is given either way: Phoenix would take the JSON one of its own for text.
    let answer = response.text();
    let (shown, mime_type) = if answer.is_empty() {
        (Some(messages), "application/json")
    } else {
        let text = Telemetry::content(span, ContentKind::OutputMessages, |limit| {
            Some(limit.string(answer))
        });
        (text, "text/plain")
    };
    if let Some(shown) = shown {
        span.record("output.value", shown.as_str());
        span.record("output.mime_type", mime_type);
    }
}

/// An event on the current span for a hook decision that changes the run (`rewrite`, `skip`,
/// `deny`, `stop`, `suspend`, `retry`, `model_switch`); `hook` names where it was made.
pub(super) fn hook_decision(action: &'static str, hook: &'static str) {
    tracing::info!(
        target: "reins",
        { reins.hook.action = action, reins.hook.name = hook },
        "reins.hook.decision"
    );
}

/// The current span, unless it is disabled. With no subscriber (or one that leaves out
/// `info`) no span of reins' can be enabled, which one atomic load tells: looking up the
/// current span would cost a turn more than that (a thread-local and a dispatcher call).
fn current_span() -> Option<Span> {
    if Level::INFO > STATIC_MAX_LEVEL || Level::INFO > LevelFilter::current() {
        return None;
    }
    Some(Span::current()).filter(|span| !span.is_disabled())
}

/// Marks `span` as failed: `error.type` names why, and the span's status is `Error`, which
/// trace viewers show (the conventions ask for both on a failed operation). The status's
/// description, which viewers show beside it, is the `error.type` too: short, and never an
/// error's text, which may hold a provider's body or a tool's output. (Recorded after the
/// code: tracing-opentelemetry makes each an `Error` status, and the later one is kept.)
fn record_error(span: &Span, error_type: &str) {
    span.record("error.type", error_type);
    span.record("otel.status_code", "ERROR");
    span.record("otel.status_description", error_type);
}

/// Records token counts, unless none were reported: a provider that reports no usage leaves
/// both at zero, and a call read at least one token, so zeros would claim a free call (and
/// count as such in the token metrics).
fn record_usage(span: &Span, usage: Usage) {
    if usage.input_tokens == 0 && usage.output_tokens == 0 {
        return;
    }
    span.record("gen_ai.usage.input_tokens", int(usage.input_tokens));
    span.record("gen_ai.usage.output_tokens", int(usage.output_tokens));
    // Parts of the input tokens, recorded when the provider reported them.
    if usage.cache_read_input_tokens != 0 {
        let read = int(usage.cache_read_input_tokens);
        span.record("gen_ai.usage.cache_read.input_tokens", read);
    }
    if usage.cache_creation_input_tokens != 0 {
        let written = int(usage.cache_creation_input_tokens);
        span.record("gen_ai.usage.cache_creation.input_tokens", written);
    }
}

/// An integer attribute: OpenTelemetry's are signed, and `tracing-opentelemetry` records
/// unsigned fields as text.
fn int(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

fn record_model_identity(span: &Span, model: &dyn DynCompletionModel) {
    if let Some(provider) = model.provider_name() {
        span.record("gen_ai.provider.name", provider);
    }
    if let Some(name) = model.model_name() {
        span.record("gen_ai.request.model", name);
    }
}

fn status_name(status: RunStatus) -> &'static str {
    match status {
        RunStatus::Running => "running",
        RunStatus::Suspended => "suspended",
        RunStatus::Completed => "completed",
        RunStatus::Failed => "failed",
    }
}
