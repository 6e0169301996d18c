//! The run loop: one driver for awaited and streamed runs. Streaming only adds the delta
//! events while a model turn is assembled; every other event fires from the same code.

use super::builder::{AgentConfig, DEFAULT_MAX_TURNS};
use super::error::PromptError;
use super::hook::{
    CompletionCallEvent, HookContext, HookFailure, HookStack, InvalidToolCallAction,
    InvalidToolCallContext, InvalidToolCallReason, ModelTurnAction, ModelTurnFinished,
    ObservationAction, ReasoningDeltaEvent, RunSettledEvent, Stacked, StepEvent, StepEventKind,
    TextDeltaEvent, ToolCallDeltaEvent, ToolCallView, ToolDispatchDecision, ToolResult,
};
use super::output::{OUTPUT_TOOL_NAME, OutputMode, OutputSpec};
use super::prompt::{PromptRequest, PromptResponse, ToolErrorPolicy, UnhandledInvalidToolCall};
use super::run::RunState;
use super::stream::{StreamItem, StreamSink};
use crate::completion::{
    CompletionError, CompletionRequest, CompletionResponse, DynCompletionModel, StreamChunk,
};
use crate::message::{AssistantContent, Message, OneOrMany, ToolCall, ToolChoice};
use crate::tool::{
    ToolCallContext, ToolDefinition, ToolExecution, ToolFailure, ToolOutcome, ToolOutput,
    ToolResultExtensions, panic_message,
};
use futures::future::BoxFuture;
use futures::{FutureExt, StreamExt, TryStreamExt};
use serde_json::Value;
use std::borrow::Cow;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

/// How often `repair` may rename one call before the run gives up on it.
const MAX_REPAIRS_PER_CALL: usize = 3;

/// What a run was asked to do, beyond the agent's configuration.
#[derive(Debug, Clone)]
pub(crate) struct RunOptions {
    pub max_turns: usize,
    pub tool_concurrency: usize,
    pub max_invalid_tool_call_retries: usize,
    pub unhandled_invalid_tool_call: UnhandledInvalidToolCall,
    pub tool_errors: ToolErrorPolicy,
    pub run_id: Option<String>,
    pub output: Option<OutputSpec>,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            max_turns: DEFAULT_MAX_TURNS,
            tool_concurrency: 1,
            max_invalid_tool_call_retries: 0,
            unhandled_invalid_tool_call: UnhandledInvalidToolCall::Fail,
            tool_errors: ToolErrorPolicy::ReportToModel,
            run_id: None,
            output: None,
        }
    }
}

/// Why the loop stopped without an answer; turned into a [`PromptError`] with the history.
enum Halt {
    Stop(String),
    Panic(HookFailure),
    MaxTurns,
    InvalidCall {
        tool_name: String,
        reason: InvalidToolCallReason,
    },
    Completion(CompletionError),
    Tool {
        tool_name: String,
        failure: ToolFailure,
    },
    Rejected(String),
}

impl From<HookFailure> for Halt {
    fn from(failure: HookFailure) -> Self {
        Halt::Panic(failure)
    }
}

impl Halt {
    fn into_error(self, history: Vec<Message>, run_id: String, max_turns: usize) -> PromptError {
        match self {
            Halt::Stop(reason) => PromptError::Cancelled {
                reason,
                history,
                run_id,
            },
            Halt::Panic(failure) => PromptError::HookPanicked {
                event: failure.kind,
                message: failure.message,
                history,
                run_id,
            },
            Halt::MaxTurns => PromptError::MaxTurns {
                max_turns,
                history,
                run_id,
            },
            Halt::InvalidCall { tool_name, reason } => PromptError::UnknownToolCall {
                tool_name,
                reason,
                history,
                run_id,
            },
            Halt::Completion(source) => PromptError::Completion {
                source,
                history,
                run_id,
            },
            Halt::Tool { tool_name, failure } => PromptError::Tool {
                tool_name,
                failure,
                history,
                run_id,
            },
            Halt::Rejected(reason) => PromptError::RejectedAction {
                reason,
                history,
                run_id,
            },
        }
    }
}

/// Runs a prompt request to its end, firing `on_run_settled` last.
pub(crate) async fn run(
    request: PromptRequest,
    sink: Option<StreamSink>,
) -> Result<PromptResponse, PromptError> {
    let PromptRequest {
        agent,
        prompt,
        history,
        hooks: run_hooks,
        options,
    } = request;
    let config = &*agent.config;
    let hooks: Cow<'_, HookStack> = if run_hooks.is_empty() {
        Cow::Borrowed(&config.hooks)
    } else {
        let mut combined = config.hooks.clone();
        combined.extend(&run_hooks);
        Cow::Owned(combined)
    };
    let output = resolve_output(config, options.output.clone())?;
    let run_id = options
        .run_id
        .clone()
        .unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
    let ctx = HookContext::for_run(
        run_id.clone(),
        config.name.clone(),
        sink.is_some(),
        0,
        Vec::new(),
    );
    let mut driver = Driver {
        config,
        hooks: &hooks,
        ctx: &ctx,
        options: &options,
        output: output.as_ref(),
        sink: sink.as_ref(),
        state: RunState::new(run_id.clone(), config.name.clone(), history),
    };
    let outcome = driver.drive(prompt).await;
    let mut state = driver.state;
    state.entries = ctx.snapshot_entries();
    let (usage, turns) = (state.usage, state.turn);
    let result = match outcome {
        Ok(output) => Ok(PromptResponse { output, state }),
        Err(halt) => Err(halt.into_error(state.history, run_id, options.max_turns)),
    };
    if hooks.observes(StepEventKind::RunSettled) {
        let event = match &result {
            Ok(response) => RunSettledEvent {
                result: Ok(&response.output),
                history: &response.state.history,
                usage,
                turns,
            },
            Err(error) => RunSettledEvent {
                result: Err(error),
                history: error.history().unwrap_or_default(),
                usage,
                turns,
            },
        };
        hooks.run_settled(&ctx, event).await;
    }
    result
}

/// Decides the structured-output mode from the default model's abilities.
fn resolve_output(
    config: &AgentConfig,
    output: Option<OutputSpec>,
) -> Result<Option<OutputSpec>, PromptError> {
    let Some(mut spec) = output else {
        return Ok(None);
    };
    let native = config
        .models
        .default_model()
        .is_some_and(|model| model.supports_native_output());
    spec.mode = match (spec.mode, native) {
        (OutputMode::Auto, true) => OutputMode::Native,
        (OutputMode::Auto, false) => OutputMode::Tool,
        (OutputMode::Native, false) => {
            return Err(PromptError::InvalidConfiguration(
                "native structured output was requested, but the default model does not \
                 support it; use OutputMode::Tool or OutputMode::Auto"
                    .to_owned(),
            ));
        }
        (mode, _) => mode,
    };
    Ok(Some(spec))
}

/// One model turn as received, with what the request advertised.
struct ReceivedTurn {
    response: CompletionResponse,
    tools: Arc<[ToolDefinition]>,
    tool_choice: Option<ToolChoice>,
    streamed_text: bool,
}

/// A reply to a tool call decided without running it.
struct PresetAnswer {
    text: String,
    outcome: ToolOutcome,
}

/// The tool calls of an accepted turn, after validation.
enum CheckedCalls {
    /// Drop the turn and ask again with this feedback.
    Retry(String),
    /// A call was skipped: answer every call of the turn without running any.
    SkipTurn {
        recovered_content: OneOrMany<AssistantContent>,
        answers: Vec<(ToolCall, PresetAnswer)>,
    },
    /// Run the calls (some may carry a preset answer instead).
    Run {
        recovered: bool,
        content: Option<OneOrMany<AssistantContent>>,
        calls: Vec<PlannedCall>,
    },
}

struct PlannedCall {
    call: ToolCall,
    internal_call_id: String,
    preset: Option<PresetAnswer>,
}

struct Driver<'a> {
    config: &'a AgentConfig,
    hooks: &'a HookStack,
    ctx: &'a HookContext,
    options: &'a RunOptions,
    output: Option<&'a OutputSpec>,
    sink: Option<&'a StreamSink>,
    state: RunState,
}

fn internal_call_id(turn: usize, ordinal: usize) -> String {
    format!("t{turn}c{ordinal}")
}

/// Arguments as JSON text; arguments kept as a string (not JSON) are shown as received.
fn render_args(args: &Value) -> String {
    match args {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

impl Driver<'_> {
    fn observes(&self, kind: StepEventKind) -> bool {
        self.hooks.observes(kind)
    }

    async fn emit(&self, item: impl FnOnce() -> StreamItem) {
        if let Some(sink) = self.sink {
            sink.send(item()).await;
        }
    }

    async fn drive(&mut self, prompt: Message) -> Result<String, Halt> {
        let prompt = if self.observes(StepEventKind::RunStart) {
            let original = prompt.clone();
            let answer = self
                .hooks
                .run_start(self.ctx, prompt, &self.state.history)
                .await;
            match answer {
                Ok(Stacked::Go(prompt)) => prompt,
                // Nothing is lost: a run ended here keeps the prompt in its history.
                Ok(Stacked::Stop(reason)) => {
                    self.state.history.push(original);
                    return Err(Halt::Stop(reason));
                }
                Err(failure) => {
                    self.state.history.push(original);
                    return Err(failure.into());
                }
            }
        } else {
            prompt
        };
        self.state.history.push(prompt);
        let template = self.request_template();

        loop {
            if self.state.turn >= self.options.max_turns {
                return Err(Halt::MaxTurns);
            }
            self.state.turn += 1;
            let turn = self.state.turn;
            self.ctx.set_turn(turn);

            let ReceivedTurn {
                mut response,
                tools,
                tool_choice,
                streamed_text,
            } = self.call_model(&template).await?;
            self.state.usage += response.usage;

            let checked = self
                .check_tool_calls(&response, &tools, tool_choice.as_ref())
                .await?;
            let (recovered, calls) = match checked {
                CheckedCalls::Retry(feedback) => {
                    self.emit(|| StreamItem::TurnDiscarded { turn }).await;
                    self.state.history.push(Message::user(feedback));
                    continue;
                }
                CheckedCalls::SkipTurn {
                    recovered_content,
                    answers,
                } => {
                    self.state.history.push(Message::Assistant {
                        content: recovered_content,
                    });
                    for (call, answer) in answers {
                        self.push_tool_result(&call, answer.text, answer.outcome)
                            .await;
                    }
                    continue;
                }
                CheckedCalls::Run {
                    recovered,
                    content,
                    calls,
                } => {
                    if let Some(content) = content {
                        response.content = content;
                    }
                    (recovered, calls)
                }
            };

            if !recovered {
                match self.accept_turn(&response, streamed_text).await? {
                    ModelTurnAction::Continue => {}
                    ModelTurnAction::Repeat => {
                        self.reject_retry_with_calls(&calls, "repeat")?;
                        self.emit(|| StreamItem::TurnDiscarded { turn }).await;
                        continue;
                    }
                    ModelTurnAction::RetryWithFeedback(feedback) => {
                        self.reject_retry_with_calls(&calls, "retry_with_feedback")?;
                        self.state.history.push(Message::Assistant {
                            content: response.content,
                        });
                        self.state.history.push(Message::user(feedback));
                        continue;
                    }
                    ModelTurnAction::Stop(reason) => {
                        // Nothing is lost: the stopped turn stays in the error's history.
                        self.state.history.push(Message::Assistant {
                            content: response.content,
                        });
                        return Err(Halt::Stop(reason));
                    }
                }
            }

            if let Some(spec) = self.output {
                match self.structured_answer(spec, &response, &calls) {
                    StructuredStep::Done(answer) => {
                        self.state.history.push(Message::assistant(answer.clone()));
                        return Ok(answer);
                    }
                    StructuredStep::Feedback(feedback) => {
                        self.state.history.push(Message::Assistant {
                            content: response.content,
                        });
                        self.state.history.push(Message::user(feedback));
                        continue;
                    }
                    StructuredStep::AnswerCalls(problem) => {
                        self.state.history.push(Message::Assistant {
                            content: response.content,
                        });
                        for planned in &calls {
                            let text = if planned.call.name == OUTPUT_TOOL_NAME {
                                format!("The answer does not match the required schema: {problem}")
                            } else {
                                "Not executed: the final answer was invalid.".to_owned()
                            };
                            let outcome = ToolOutcome::Skipped {
                                reason: text.clone(),
                            };
                            self.push_tool_result(&planned.call, text, outcome).await;
                        }
                        continue;
                    }
                    StructuredStep::NotFinal => {}
                }
            }

            let answer = response.text();
            self.state.history.push(Message::Assistant {
                content: response.content,
            });
            if calls.is_empty() {
                return Ok(answer);
            }
            if self.state.turn >= self.options.max_turns {
                // No model call is left to read the results: leave the calls unexecuted.
                return Err(Halt::MaxTurns);
            }
            let results = self.run_tool_calls(&calls).await?;
            for result in results {
                let ToolResult {
                    tool_name,
                    tool_call_id,
                    output,
                    outcome,
                    ..
                } = result;
                let text = output.render();
                self.emit(|| StreamItem::ToolResult {
                    tool_call_id: tool_call_id.clone(),
                    tool_name: tool_name.clone(),
                    result: text.clone(),
                    outcome,
                })
                .await;
                self.state
                    .history
                    .push(Message::tool_result(tool_call_id, tool_name, text));
            }
        }
    }

    fn reject_retry_with_calls(&self, calls: &[PlannedCall], action: &str) -> Result<(), Halt> {
        if calls.is_empty() {
            Ok(())
        } else {
            Err(Halt::Rejected(format!(
                "`{action}` was returned for turn {} which calls tools; retrying a turn with \
                 tool calls is rejected (steer the calls with on_dispatch instead)",
                self.state.turn
            )))
        }
    }

    async fn push_tool_result(&mut self, call: &ToolCall, text: String, outcome: ToolOutcome) {
        self.emit(|| StreamItem::ToolResult {
            tool_call_id: call.id.clone(),
            tool_name: call.name.clone(),
            result: text.clone(),
            outcome,
        })
        .await;
        self.state.history.push(Message::tool_result(
            call.id.clone(),
            call.name.clone(),
            text,
        ));
    }

    fn request_template(&self) -> CompletionRequest {
        let config = self.config;
        let mut tools = Arc::clone(&config.tool_definitions);
        let mut tool_choice = config.tool_choice.clone();
        let mut output_schema = None;
        if let Some(spec) = self.output {
            match spec.mode {
                OutputMode::Native => output_schema = Some(spec.schema.clone()),
                _ => {
                    let mut with_output: Vec<ToolDefinition> = tools.to_vec();
                    with_output.push(spec.tool_definition());
                    tools = Arc::from(with_output);
                    tool_choice.get_or_insert(ToolChoice::Required);
                }
            }
        }
        CompletionRequest {
            preamble: config.preamble.clone(),
            history: Vec::new(),
            documents: config.documents.clone(),
            tools,
            tool_choice,
            temperature: config.temperature,
            max_tokens: config.max_tokens,
            additional_params: config.additional_params.clone(),
            output_schema,
        }
    }

    /// Builds this turn's request, runs the completion-call, model-select and dispatch hooks,
    /// calls the model and runs the outcome hooks. The run's history is lent to the request
    /// and always given back, whatever happens.
    async fn call_model(&mut self, template: &CompletionRequest) -> Result<ReceivedTurn, Halt> {
        let mut request = template.clone();
        request.history = std::mem::take(&mut self.state.history);
        let mut saved_history = None;
        let result = self.call_model_with(&mut request, &mut saved_history).await;
        self.state.history = saved_history.unwrap_or_else(|| std::mem::take(&mut request.history));
        let (response, streamed_text, label) = result?;
        self.state.last_model = Some(label);
        Ok(ReceivedTurn {
            response,
            tools: request.tools,
            tool_choice: request.tool_choice,
            streamed_text,
        })
    }

    async fn call_model_with(
        &self,
        request: &mut CompletionRequest,
        saved_history: &mut Option<Vec<Message>>,
    ) -> Result<(CompletionResponse, bool, String), Halt> {
        let turn = self.state.turn;
        if self.observes(StepEventKind::CompletionCall) {
            if let Some((prompt, history)) = request.history.split_last() {
                let event = CompletionCallEvent {
                    prompt,
                    history,
                    turn,
                    request,
                };
                match self.hooks.completion_call(self.ctx, event).await? {
                    Stacked::Go(Some(patch)) => patch.apply_keeping_history(request, saved_history),
                    Stacked::Go(None) => {}
                    Stacked::Stop(reason) => return Err(Halt::Stop(reason)),
                }
            }
        }

        let models = &self.config.models;
        let label = if self.observes(StepEventKind::ModelSelect) {
            match self.hooks.model_select(
                self.ctx,
                turn,
                &models.default_label,
                self.state.last_model.as_deref(),
                &models.labels,
                saved_history.as_deref().unwrap_or(&request.history),
            )? {
                Stacked::Go(Some(label)) => label,
                Stacked::Go(None) => models.default_label.clone(),
                Stacked::Stop(reason) => return Err(Halt::Stop(reason)),
            }
        } else {
            models.default_label.clone()
        };
        let Some(model) = models.get(&label) else {
            return Err(Halt::Rejected(format!(
                "no model is registered under the label `{label}` (registered: {})",
                models.labels.join(", ")
            )));
        };

        if self.observes(StepEventKind::CompletionDispatch) {
            let dispatched = self
                .hooks
                .dispatch_completion(self.ctx, turn, &label, request, saved_history)
                .await?;
            if let Stacked::Stop(reason) = dispatched {
                return Err(Halt::Stop(reason));
            }
        }

        let (mut response, streamed_text) = match self.sink {
            None => {
                let call = AssertUnwindSafe(model.completion(request)).catch_unwind();
                let response = call.await.unwrap_or_else(|panic| {
                    Err(CompletionError::Other(format!(
                        "the model panicked: {}",
                        panic_message(panic.as_ref())
                    )))
                });
                (response.map_err(Halt::Completion)?, false)
            }
            Some(sink) => self.stream_turn(&**model, request, sink).await?,
        };

        if self.observes(StepEventKind::CompletionOutcome) {
            if let Stacked::Stop(reason) = self
                .hooks
                .completion_outcome(self.ctx, &mut response)
                .await?
            {
                return Err(Halt::Stop(reason));
            }
        }
        Ok((response, streamed_text, label))
    }

    /// Streams one model turn, firing the delta hooks and feeding the stream's items.
    async fn stream_turn(
        &self,
        model: &dyn DynCompletionModel,
        request: &CompletionRequest,
        sink: &StreamSink,
    ) -> Result<(CompletionResponse, bool), Halt> {
        let turn = self.state.turn;
        let mut stream = model.stream(request).await.map_err(Halt::Completion)?;
        let mut text = String::new();
        let mut reasoning = String::new();
        // (provider id, internal id, arguments so far), in order of first appearance.
        let mut calls: Vec<(String, String, String)> = Vec::new();
        while let Some(chunk) = stream.next().await {
            match chunk.map_err(Halt::Completion)? {
                StreamChunk::Text(delta) => {
                    text.push_str(&delta);
                    if self.observes(StepEventKind::TextDelta) {
                        let event = TextDeltaEvent {
                            delta: &delta,
                            aggregated: &text,
                        };
                        if let ObservationAction::Stop(reason) =
                            self.hooks.text_delta(self.ctx, event).await?
                        {
                            return Err(Halt::Stop(reason));
                        }
                    }
                    sink.send(StreamItem::Text(delta)).await;
                }
                StreamChunk::Reasoning(delta) => {
                    reasoning.push_str(&delta);
                    if self.observes(StepEventKind::ReasoningDelta) {
                        let event = ReasoningDeltaEvent {
                            delta: &delta,
                            aggregated: &reasoning,
                        };
                        if let ObservationAction::Stop(reason) =
                            self.hooks.reasoning_delta(self.ctx, event).await?
                        {
                            return Err(Halt::Stop(reason));
                        }
                    }
                    sink.send(StreamItem::Reasoning(delta)).await;
                }
                StreamChunk::ToolCall { id, name, delta } => {
                    let index = match calls.iter().position(|(call_id, ..)| *call_id == id) {
                        Some(index) => index,
                        None => {
                            calls.push((id, internal_call_id(turn, calls.len()), String::new()));
                            calls.len() - 1
                        }
                    };
                    let Some((call_id, internal_id, arguments)) = calls.get_mut(index) else {
                        continue;
                    };
                    arguments.push_str(&delta);
                    if self.observes(StepEventKind::ToolCallDelta) {
                        let event = ToolCallDeltaEvent {
                            tool_call_id: call_id,
                            internal_call_id: internal_id,
                            tool_name: name.as_deref(),
                            delta: &delta,
                            aggregated: arguments,
                        };
                        if let ObservationAction::Stop(reason) =
                            self.hooks.tool_call_delta(self.ctx, event).await?
                        {
                            return Err(Halt::Stop(reason));
                        }
                    }
                    sink.send(StreamItem::ToolCallDelta {
                        tool_call_id: call_id.clone(),
                        internal_call_id: internal_id.clone(),
                        tool_name: name,
                        delta,
                    })
                    .await;
                }
                StreamChunk::Done(response) => return Ok((response, !text.is_empty())),
            }
        }
        Err(Halt::Completion(CompletionError::Decode(format!(
            "the stream ended before the model finished its turn (received {} bytes of text \
             and {} tool-call fragments so far)",
            text.len(),
            calls.len()
        ))))
    }

    /// Why `call` is invalid this turn, if it is.
    fn invalid_reason(
        &self,
        call: &ToolCall,
        advertised: &[ToolDefinition],
        tool_choice: Option<&ToolChoice>,
    ) -> Option<InvalidToolCallReason> {
        let is_output_tool = call.name == OUTPUT_TOOL_NAME
            && self
                .output
                .is_some_and(|spec| spec.mode == OutputMode::Tool);
        if !is_output_tool && !self.config.tools.contains(&call.name) {
            return Some(InvalidToolCallReason::UnknownTool);
        }
        let advertised_now = advertised.iter().any(|tool| tool.name == call.name);
        if !advertised_now || !tool_choice.is_none_or(|choice| choice.allows(&call.name)) {
            return Some(InvalidToolCallReason::NotAllowed);
        }
        if !call.arguments.is_object() {
            return Some(InvalidToolCallReason::MalformedArguments);
        }
        None
    }

    /// Checks every tool call of the turn, asking `on_invalid_tool_call` about invalid ones.
    async fn check_tool_calls(
        &mut self,
        response: &CompletionResponse,
        advertised: &[ToolDefinition],
        tool_choice: Option<&ToolChoice>,
    ) -> Result<CheckedCalls, Halt> {
        let turn = self.state.turn;
        let mut changed = false;
        let mut recovered = false;
        let mut kept: Vec<AssistantContent> = Vec::with_capacity(response.content.len());
        let mut calls: Vec<PlannedCall> = Vec::new();
        let mut ordinal = 0;
        for part in response.content.iter() {
            let AssistantContent::ToolCall(call) = part else {
                kept.push(part.clone());
                continue;
            };
            let internal_id = internal_call_id(turn, ordinal);
            ordinal += 1;
            let mut call = call.clone();
            let mut preset = None;
            let mut repairs = 0;
            let mut dropped = false;
            while let Some(reason) = self.invalid_reason(&call, advertised, tool_choice) {
                let decision = if self.observes(StepEventKind::InvalidToolCall) {
                    let context = InvalidToolCallContext {
                        tool_name: call.name.clone(),
                        tool_call_id: call.id.clone(),
                        args: render_args(&call.arguments),
                        available_tools: advertised
                            .iter()
                            .filter(|tool| tool_choice.is_none_or(|c| c.allows(&tool.name)))
                            .map(|tool| tool.name.clone())
                            .collect(),
                        reason,
                        history: self.state.history.clone(),
                    };
                    self.hooks.invalid_tool_call(self.ctx, &context).await?
                } else {
                    None
                };
                let invalid = || Halt::InvalidCall {
                    tool_name: call.name.clone(),
                    reason,
                };
                match decision {
                    None if reason == InvalidToolCallReason::MalformedArguments => {
                        let failure = ToolFailure::InvalidArguments {
                            message: format!(
                                "the arguments must be a JSON object; received: {}",
                                render_args(&call.arguments)
                            ),
                        };
                        preset = Some(PresetAnswer {
                            text: failure.to_string(),
                            outcome: ToolOutcome::Failed(failure),
                        });
                        break;
                    }
                    None if self.options.unhandled_invalid_tool_call
                        == UnhandledInvalidToolCall::Ignore =>
                    {
                        dropped = true;
                        break;
                    }
                    None | Some(InvalidToolCallAction::Fail) => return Err(invalid()),
                    Some(InvalidToolCallAction::Stop(reason)) => return Err(Halt::Stop(reason)),
                    Some(InvalidToolCallAction::Retry(feedback)) => {
                        if self.state.invalid_tool_call_retries
                            >= self.options.max_invalid_tool_call_retries
                        {
                            return Err(invalid());
                        }
                        self.state.invalid_tool_call_retries += 1;
                        return Ok(CheckedCalls::Retry(feedback));
                    }
                    Some(InvalidToolCallAction::Repair(name)) => {
                        // Renaming cannot fix arguments, and a chain of renames must end.
                        if reason == InvalidToolCallReason::MalformedArguments
                            || repairs >= MAX_REPAIRS_PER_CALL
                        {
                            return Err(invalid());
                        }
                        repairs += 1;
                        call.name = name;
                        changed = true;
                        recovered = true;
                    }
                    Some(InvalidToolCallAction::Skip(reason)) => {
                        return Ok(self.skip_turn(response, &call, reason));
                    }
                }
            }
            if dropped {
                changed = true;
                continue;
            }
            kept.push(AssistantContent::ToolCall(call.clone()));
            calls.push(PlannedCall {
                call,
                internal_call_id: internal_id,
                preset,
            });
        }
        let content = if changed {
            Some(
                OneOrMany::many(kept).unwrap_or_else(|| OneOrMany::one(AssistantContent::text(""))),
            )
        } else {
            None
        };
        Ok(CheckedCalls::Run {
            recovered,
            content,
            calls,
        })
    }

    /// Answers the skipped call with `reason` and every other call as not executed.
    fn skip_turn(
        &self,
        response: &CompletionResponse,
        skipped: &ToolCall,
        reason: String,
    ) -> CheckedCalls {
        let mut answers = Vec::new();
        let mut content = Vec::with_capacity(response.content.len());
        for part in response.content.iter() {
            let AssistantContent::ToolCall(call) = part else {
                content.push(part.clone());
                continue;
            };
            let call = if call.id == skipped.id {
                skipped.clone()
            } else {
                call.clone()
            };
            let text = if call.id == skipped.id {
                reason.clone()
            } else {
                format!(
                    "Not executed: the call to `{}` in the same turn was skipped.",
                    skipped.name
                )
            };
            content.push(AssistantContent::ToolCall(call.clone()));
            answers.push((
                call,
                PresetAnswer {
                    text: text.clone(),
                    outcome: ToolOutcome::Skipped { reason: text },
                },
            ));
        }
        CheckedCalls::SkipTurn {
            recovered_content: OneOrMany::many(content)
                .unwrap_or_else(|| OneOrMany::one(AssistantContent::text(""))),
            answers,
        }
    }

    /// Fires the turn's raw event and `on_model_turn_finished`.
    async fn accept_turn(
        &self,
        response: &CompletionResponse,
        streamed_text: bool,
    ) -> Result<ModelTurnAction, Halt> {
        let prompt = self.state.history.last();
        let raw_event = match (self.sink.is_some(), prompt) {
            (false, Some(prompt)) if self.observes(StepEventKind::CompletionResponse) => {
                Some(StepEvent::CompletionResponse { prompt, response })
            }
            (true, Some(prompt))
                if streamed_text && self.observes(StepEventKind::StreamResponseFinish) =>
            {
                Some(StepEvent::StreamResponseFinish { prompt, response })
            }
            _ => None,
        };
        if let Some(event) = raw_event {
            if let Stacked::Stop(reason) = self.hooks.step_event(self.ctx, event).await? {
                return Ok(ModelTurnAction::Stop(reason));
            }
        }
        if !self.observes(StepEventKind::ModelTurnFinished) {
            return Ok(ModelTurnAction::Continue);
        }
        let event = ModelTurnFinished {
            turn: self.state.turn,
            content: &response.content,
            usage: response.usage,
            finish_reason: response.finish_reason.as_ref(),
            response_id: response.response_id.as_deref(),
            raw: &response.raw,
        };
        Ok(self.hooks.model_turn_finished(self.ctx, event).await?)
    }

    fn structured_answer(
        &self,
        spec: &OutputSpec,
        response: &CompletionResponse,
        calls: &[PlannedCall],
    ) -> StructuredStep {
        match spec.mode {
            OutputMode::Native => {
                if !calls.is_empty() {
                    return StructuredStep::NotFinal;
                }
                match spec.read_text(&response.text()) {
                    Ok(value) => StructuredStep::Done(value.to_string()),
                    Err(problem) => StructuredStep::Feedback(format!(
                        "Your answer must be JSON matching the required schema: {problem}. \
                         Answer again with only the JSON."
                    )),
                }
            }
            _ => {
                let output_call = calls.iter().find(|p| p.call.name == OUTPUT_TOOL_NAME);
                match output_call {
                    Some(planned) => match spec.read_tool_args(&planned.call.arguments) {
                        Ok(value) => StructuredStep::Done(value.to_string()),
                        Err(problem) => StructuredStep::AnswerCalls(problem),
                    },
                    None if calls.is_empty() => StructuredStep::Feedback(format!(
                        "Give your final answer by calling the `{OUTPUT_TOOL_NAME}` tool."
                    )),
                    None => StructuredStep::NotFinal,
                }
            }
        }
    }

    /// Runs the turn's calls, up to `tool_concurrency` at once; results keep the calls' order.
    async fn run_tool_calls(&self, calls: &[PlannedCall]) -> Result<Vec<ToolResult>, Halt> {
        if self.options.tool_concurrency <= 1 || calls.len() == 1 {
            let mut results = Vec::with_capacity(calls.len());
            for planned in calls {
                results.push(self.run_tool_call(planned).await?);
            }
            return Ok(results);
        }
        let mut pending: Vec<BoxFuture<'_, Result<ToolResult, Halt>>> =
            Vec::with_capacity(calls.len());
        for planned in calls {
            pending.push(Box::pin(self.run_tool_call(planned)));
        }
        futures::stream::iter(pending)
            .buffered(self.options.tool_concurrency)
            .try_collect()
            .await
    }

    /// One call's dispatch → execute → outcome path.
    async fn run_tool_call(&self, planned: &PlannedCall) -> Result<ToolResult, Halt> {
        let call = &planned.call;
        let internal_id = planned.internal_call_id.as_str();
        if let Some(preset) = &planned.preset {
            return Ok(ToolResult {
                tool_name: call.name.clone(),
                tool_call_id: call.id.clone(),
                internal_call_id: internal_id.to_owned(),
                args: render_args(&call.arguments),
                output: ToolOutput::Text(preset.text.clone()),
                outcome: preset.outcome.clone(),
                extensions: ToolResultExtensions::new(),
            });
        }
        let observed =
            self.observes(StepEventKind::ToolDispatch) || self.observes(StepEventKind::ToolOutcome);
        let args_text = if observed {
            render_args(&call.arguments)
        } else {
            String::new()
        };
        let decision = if self.observes(StepEventKind::ToolDispatch) {
            let view = ToolCallView {
                name: &call.name,
                tool_call_id: &call.id,
                internal_call_id: internal_id,
                args: &args_text,
            };
            self.hooks.dispatch_tool(self.ctx, view).await?
        } else {
            ToolDispatchDecision::Proceed(None)
        };
        let preset = |text: String, outcome: ToolOutcome| ToolExecution {
            output: ToolOutput::Text(text),
            outcome,
            extensions: ToolResultExtensions::new(),
        };
        let (execution, args_text) = match decision {
            ToolDispatchDecision::Proceed(rewritten) => {
                let args = rewritten.as_ref().unwrap_or(&call.arguments);
                let context = ToolCallContext::new(&self.state.run_id, internal_id, &call.id);
                let execution = self.config.tools.call(&call.name, args, context).await;
                let args_text = match rewritten {
                    Some(args) if observed => args.to_string(),
                    _ => args_text,
                };
                (execution, args_text)
            }
            ToolDispatchDecision::Skip(reason) => (
                preset(reason.clone(), ToolOutcome::Skipped { reason }),
                args_text,
            ),
            ToolDispatchDecision::Deny(report) => (
                preset(report.clone(), ToolOutcome::Denied { report }),
                args_text,
            ),
            ToolDispatchDecision::Stop(reason) => return Err(Halt::Stop(reason)),
        };
        let mut result = ToolResult {
            tool_name: call.name.clone(),
            tool_call_id: call.id.clone(),
            internal_call_id: internal_id.to_owned(),
            args: args_text,
            output: execution.output,
            outcome: execution.outcome,
            extensions: execution.extensions,
        };
        if self.observes(StepEventKind::ToolOutcome) {
            if let Stacked::Stop(reason) = self.hooks.tool_outcome(self.ctx, &mut result).await? {
                return Err(Halt::Stop(reason));
            }
        }
        if self.options.tool_errors == ToolErrorPolicy::Fail {
            if let ToolOutcome::Failed(failure) = &result.outcome {
                return Err(Halt::Tool {
                    tool_name: call.name.clone(),
                    failure: failure.clone(),
                });
            }
        }
        Ok(result)
    }
}

/// What structured output makes of an accepted turn.
enum StructuredStep {
    /// The typed answer, as JSON text.
    Done(String),
    /// Tell the model how to answer, as a user message, and ask again.
    Feedback(String),
    /// The output tool was called with a bad answer: answer the turn's calls with it.
    AnswerCalls(String),
    /// The turn is not the final answer: run its tools.
    NotFinal,
}
