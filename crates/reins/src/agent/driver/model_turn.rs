//! One model turn: the request, the completion-call, model-select and dispatch hooks, the
//! call itself (blocking, or streamed: `streamed_turn`), and the turn's raw events.

use super::chat_spans::{ChatSpans, Traced, Untraced};
use super::streamed_turn::{CaughtTurn, TurnSource, model_panicked};
use super::{Driver, FailedCalls, Halt, trace};
use crate::agent::builder::AgentConfig;
use crate::agent::error::FailedCall;
use crate::agent::hook::{
    CompletionCallEvent, HookAnswer, ModelIdentity, ModelOutcome, ModelTurnAction,
    ModelTurnFinished, Stacked, StepEvent, StepEventKind, TurnRequest,
};
use crate::agent::output_spec::OutputMode;
use crate::agent::stream_item::StreamItem;
use crate::completion::{
    CompletionError, CompletionRequest, CompletionResponse, DynCompletionModel, StreamChunk, Usage,
};
use crate::message::ToolChoice;
use crate::tool::ToolDefinition;
use futures::FutureExt;
use futures::future::Either;
use std::borrow::Cow;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::Ordering;

/// The most model calls one turn makes: the first, and the retries hooks ask for with
/// [`OutcomeAction::retry_on`](crate::agent::OutcomeAction::retry_on). Past it, the run fails
/// rather than loop: with every failed call of the turn
/// ([`PromptError::Completion`](crate::agent::PromptError::Completion), its
/// `call_limit_reached` set) when the last call failed or answered nothing, else with
/// [`PromptError::RejectedAction`](crate::agent::PromptError::RejectedAction).
pub const MAX_MODEL_CALLS_PER_TURN: usize = 8;

/// The error of a call a hook retried because its response answered nothing (no text, no
/// tool call: [`CompletionResponse::answers_nothing`]), as a failed call of the turn
/// ([`FailedCall`](crate::agent::FailedCall), a [`CompletionError::Other`] with this text).
pub const EMPTY_ANSWER: &str = "the model answered nothing (no text and no tool call)";

/// One model turn as received.
pub(super) struct ReceivedTurn {
    pub response: CompletionResponse,
    /// The tools and tool choice the turn's request advertised, when a hook's patch made them
    /// differ from the run's request (`None`: the run's request's own).
    pub patched: Option<Advertised>,
    pub streamed_text: bool,
}

/// What a patched request advertised to the model.
pub(super) struct Advertised {
    pub tools: Arc<[ToolDefinition]>,
    pub tool_choice: Option<ToolChoice>,
}

impl<'a> Driver<'a> {
    pub(super) fn request_template(&self) -> CompletionRequest {
        let config = self.config;
        let mut tools = Arc::clone(&self.tools.definitions);
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

    /// Runs this turn's completion-call, model-select and dispatch hooks on the run's
    /// `request`, calls the model and runs the outcome hooks. The run's history is lent to
    /// the request and always given back, whatever happens; a hook's patch applies to a copy
    /// for this turn only, so `request` serves every turn unchanged (no copy of it a turn).
    pub(super) async fn call_model(
        &mut self,
        request: &mut CompletionRequest,
    ) -> Result<ReceivedTurn, Halt> {
        request.history = std::mem::take(&mut self.state.history);
        let mut turn_request = TurnRequest::new(request);
        let chat = trace::chat_span(&self.state.run_id, self.state.turn);
        let mut unkept = Usage::default();
        let result = if chat.is_disabled() {
            self.call_model_with(&mut turn_request, &mut unkept, Untraced)
                .await
        } else {
            // A run's first call records the run's input on the run's span, current here.
            let run = self
                .input_unrecorded
                .load(Ordering::Relaxed)
                .then(|| (tracing::Span::current(), &self.input_unrecorded));
            self.call_model_with(&mut turn_request, &mut unkept, Traced { chat, run })
                .await
        };
        let (history, patched) = turn_request.finish();
        self.state.history = history;
        // Calls the turn made and did not keep were made all the same: the run's usage counts
        // them (the kept response's is added by the caller, with no await between).
        self.state.usage += unkept;
        self.forget_answered();
        let (response, streamed_text, label) = result?;
        // Usually the same model as last turn: no new copy of its label.
        let same_as_last = match (&label, self.last_label) {
            (Cow::Borrowed(now), Some(last)) => std::ptr::eq(*now, last),
            _ => false,
        };
        if !same_as_last {
            self.last_label = match label {
                Cow::Borrowed(configured) => Some(configured),
                Cow::Owned(_) => None,
            };
            if self.state.last_model.as_deref() != Some(&*label) {
                self.state.last_model = Some(label.into_owned());
            }
        }
        Ok(ReceivedTurn {
            response,
            patched: patched.map(|sent| Advertised {
                tools: sent.tools,
                tool_choice: sent.tool_choice,
            }),
            streamed_text,
        })
    }

    /// [`Self::call_model`] once the history is lent to the turn's request. Every model call
    /// is a `chat` span of its own: the first also holds the completion-call and model-select
    /// hooks, and a call an outcome hook retries on (a fallback) opens the next, beside it.
    /// Adds to `unkept` the usage of the responses the turn did not keep (one an outcome hook
    /// retried on another model, or stopped the run on). (An out-parameter: beside the
    /// result, it would be copied with it on every turn's way out.)
    async fn call_model_with(
        &self,
        request: &mut TurnRequest<&mut CompletionRequest>,
        unkept: &mut Usage,
        mut chat: impl ChatSpans,
    ) -> Result<(CompletionResponse, bool, Cow<'a, str>), Halt> {
        let turn = self.state.turn;
        let selected = chat.within(self.select_model(request)).await;
        let mut label = match selected {
            Ok(label) => label,
            Err(halt) => {
                chat.record_failure(&halt);
                return Err(halt);
            }
        };
        let models = &self.config.models;
        let mut calls = 0;
        // The calls that failed and were retried on another model: the run's error names
        // them all when the last one fails too.
        let mut failed: Vec<FailedCall> = Vec::new();
        loop {
            self.ctx.set_model_attempt(calls);
            calls += 1;
            let Some(model) = models.get(&label) else {
                let halt = Halt::Rejected(format!(
                    "no model is registered under the label `{label}` (registered: {})",
                    models.labels.join(", ")
                ));
                chat.record_failure(&halt);
                return Err(halt);
            };
            let (called, next) = chat
                .within(self.call_and_judge(&**model, &label, request, unkept, &chat))
                .await;
            if let Err(halt) = &called {
                chat.record_failure(halt);
            }
            // No retry: the call's result, kept or left failed, is the turn's.
            let Some(next) = next else {
                return match called {
                    Ok((response, streamed_text)) => Ok((response, streamed_text, label)),
                    Err(Halt::Completion(error)) => Err(Halt::FailedCalls(Box::new(FailedCalls {
                        earlier: failed,
                        last: FailedCall::new(label, error),
                        call_limit_reached: false,
                    }))),
                    Err(halt) => Err(halt),
                };
            };
            let last_failed = match called {
                // An empty answer retried (a fallback's) is a failed call like an error: the
                // run's error names it if the turn ends on the limit or on a later failure.
                Ok((retried, _)) if retried.answers_nothing() => {
                    *unkept += retried.usage;
                    let empty = CompletionError::Other(EMPTY_ANSWER.to_owned());
                    failed.push(FailedCall::new(label, empty));
                    true
                }
                Ok((retried, _)) => {
                    *unkept += retried.usage;
                    false
                }
                Err(Halt::Completion(error)) => {
                    failed.push(FailedCall::new(label, error));
                    true
                }
                Err(_) => false,
            };
            if calls >= MAX_MODEL_CALLS_PER_TURN {
                return Err(calls_exhausted(turn, failed, last_failed, next));
            }
            // Text already streamed for the call being retried is withdrawn.
            if let Some(sink) = self.sink {
                sink.push(StreamItem::TurnDiscarded { turn });
            }
            label = Cow::Owned(next);
            chat.next_call(&self.state.run_id, turn);
        }
    }

    /// The completion-call hooks (which may patch the turn's request) and the model-select
    /// hooks: the label of the model the turn's first call goes to.
    async fn select_model(
        &self,
        request: &mut TurnRequest<&mut CompletionRequest>,
    ) -> Result<Cow<'a, str>, Halt> {
        let turn = self.state.turn;
        if self.observes(StepEventKind::CompletionCall) {
            let sent = request.get();
            if let Some((prompt, history)) = sent.history.split_last() {
                let event = CompletionCallEvent {
                    prompt,
                    history,
                    turn,
                    request: sent,
                };
                match self.hooks.completion_call(self.ctx, event).await? {
                    Stacked::Go(Some(patch)) => {
                        trace::hook_decision("rewrite", "on_completion_call");
                        request.patch(patch);
                    }
                    Stacked::Go(None) => {}
                    Stacked::Stop(reason) => return Err(Halt::Stop(reason)),
                }
            }
        }
        let config: &'a AgentConfig = self.config;
        let models = &config.models;
        if !self.observes(StepEventKind::ModelSelect) {
            return Ok(Cow::Borrowed(&models.default_label));
        }
        match self.hooks.model_select(
            self.ctx,
            turn,
            &models.default_label,
            self.state.last_model.as_deref(),
            &models.labels,
            request.run_history(),
        )? {
            Stacked::Go(Some(label)) => {
                // Recorded here, not with each call's request: a fallback's later call on
                // another model is the outcome hook's retry, not a selection.
                if label != models.default_label {
                    trace::hook_decision("model_switch", "on_model_select");
                }
                Ok(Cow::Owned(label))
            }
            Stacked::Go(None) => Ok(Cow::Borrowed(&models.default_label)),
            Stacked::Stop(reason) => Err(Halt::Stop(reason)),
        }
    }

    /// One model call: its dispatch hooks, the call (or the response a hook served), and its
    /// outcome hooks. Returns the call's result and, when an outcome hook asks for the turn
    /// again, the label of the model to ask; adds to `unkept` the usage of a response an
    /// outcome hook stopped the run on (made, and not kept). A response is recorded on the
    /// call's span (`chat`) as it arrives; a failure, by the caller.
    async fn call_and_judge(
        &self,
        model: &dyn DynCompletionModel,
        label: &str,
        request: &mut TurnRequest<&mut CompletionRequest>,
        unkept: &mut Usage,
        chat: &impl ChatSpans,
    ) -> (Result<(CompletionResponse, bool), Halt>, Option<String>) {
        let turn = self.state.turn;
        let dispatched = match self.observes(StepEventKind::CompletionDispatch) {
            true => {
                self.hooks
                    .dispatch_completion(self.ctx, turn, label, ModelIdentity::of(model), request)
                    .await
            }
            false => Ok(Stacked::Go(None)),
        };
        // Recorded as the dispatch hooks left it, whatever they decided: what they masked (a
        // redaction) is masked in the trace too.
        chat.record_request(model, label, request.get(), self.sink.is_some());
        let served = match dispatched {
            Ok(Stacked::Go(response)) => response,
            Ok(Stacked::Stop(reason)) => return (Err(Halt::Stop(reason)), None),
            Err(failure) => return (Err(failure.into()), None),
        };
        let called = match served {
            // Boxed: a response a hook answered with is rare, and its path's state would
            // otherwise be part of every run's future.
            Some(HookAnswer::Response(response)) => Box::pin(self.serve(*response)).await,
            Some(HookAnswer::Failure(error)) => Err(Halt::Completion(*error)),
            None => self.call_once(model, request.get()).await,
        };
        // A delta hook stopped the run mid-turn: what the turn streamed is withdrawn, as when
        // a hook stops the run on the finished turn.
        if let (Err(Halt::Stop(_)), Some(sink)) = (&called, self.sink) {
            sink.push(StreamItem::TurnDiscarded { turn });
        }
        // Before the outcome hooks: one that stops the run must not take the call's usage,
        // response id and finish reasons off its span (nor its tokens off the metrics).
        if let Ok((response, _)) = &called {
            chat.record_response(response);
            self.count_answered(response.usage);
        }
        if !self.observes(StepEventKind::CompletionOutcome) {
            return (called, None);
        }
        // The response is answered where it lies and moved once, on the way out.
        let mut called = called;
        let judged = match &mut called {
            Ok((response, _)) => {
                self.hooks
                    .completion_outcome(self.ctx, label, response)
                    .await
            }
            Err(Halt::Completion(error)) => {
                self.hooks.completion_failure(self.ctx, label, error).await
            }
            Err(_) => return (called, None),
        };
        match judged {
            Ok(ModelOutcome::RetryOn(next)) => {
                trace::hook_decision("retry", "on_outcome");
                (called, Some(next))
            }
            Ok(ModelOutcome::Stop(reason)) => {
                if let Ok((made, _)) = &called {
                    *unkept += made.usage;
                }
                (Err(Halt::Stop(reason)), None)
            }
            Ok(ModelOutcome::Served(replacement)) => {
                let streamed_text = match &called {
                    Ok((_, streamed_text)) => *streamed_text,
                    Err(_) => {
                        trace::hook_decision("replace", "on_outcome");
                        // The turn's answer, in place of the model's, which had none.
                        chat.record_response(&replacement);
                        false
                    }
                };
                (Ok((*replacement, streamed_text)), None)
            }
            Ok(ModelOutcome::Keep(_) | ModelOutcome::Fail) => (called, None),
            Err(failure) => (Err(failure.into()), None),
        }
    }

    /// One call of `model`: blocking, or streamed with the delta hooks. (A plain future
    /// rather than an `async fn`: a streamed run is polled through every layer of its state
    /// each time it hands a batch of deltas to its consumer.)
    fn call_once<'s>(
        &'s self,
        model: &'s dyn DynCompletionModel,
        request: &'s CompletionRequest,
    ) -> impl Future<Output = Result<(CompletionResponse, bool), Halt>> + 's {
        // A model's panic fails the turn with an error; it never unwinds into the caller's
        // task (for a streamed turn, see `stream_turn`).
        match self.sink {
            None => Either::Left(
                AssertUnwindSafe(model.completion(request))
                    .catch_unwind()
                    .map(|called| match called {
                        Ok(Ok(response)) => Ok((response, false)),
                        Ok(Err(error)) => Err(Halt::Completion(error)),
                        Err(panic) => Err(Halt::Completion(model_panicked(panic))),
                    }),
            ),
            // Boxed, once a streamed turn: the streamed path's state (its text, its delta
            // hooks' answers) would otherwise be part of every run's future.
            Some(sink) => Either::Right(CaughtTurn(Box::pin(
                self.stream_turn(TurnSource::Model(model, request), sink),
            ))),
        }
    }

    /// A response a dispatch hook answered the call with. A streaming run streams its text
    /// as one delta, so the caller's stream holds the turn as if the model had sent it.
    async fn serve(
        &self,
        response: CompletionResponse,
    ) -> Result<(CompletionResponse, bool), Halt> {
        let Some(sink) = self.sink else {
            return Ok((response, false));
        };
        let text = response.text();
        if text.is_empty() {
            return Ok((response, false));
        }
        // Through the same loop as a model's stream, and through the same `CaughtTurn`: the
        // streamed turn's body then has one caller, so the compiler always folds it (and the
        // text-delta hooks it calls) into `CaughtTurn::poll`, whatever else the crate holds.
        // Its per-token code is tuned against store-forwarding stalls, which depend on that.
        let chunks = [Ok(StreamChunk::Text(text)), Ok(StreamChunk::Done(response))];
        let chunks = Box::pin(futures::stream::iter(chunks));
        CaughtTurn(Box::pin(self.stream_turn(TurnSource::Served(chunks), sink))).await
    }

    /// Fires the turn's raw event and `on_model_turn_finished`.
    pub(super) async fn accept_turn(
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
}

/// Why turn `turn` ends when a hook asks for another model call (on `next`) after the turn
/// made [`MAX_MODEL_CALLS_PER_TURN`]: when its last call failed (or answered nothing), the
/// run fails with that call's error and every failed call of the turn, oldest first, noting
/// that the turn ran out of calls (a fallback chain longer than the limit); else (the last
/// call answered, and a hook asked again anyway) the hook's action is rejected, its reason listing the calls
/// that failed.
fn calls_exhausted(
    turn: usize,
    mut failed: Vec<FailedCall>,
    last_failed: bool,
    next: String,
) -> Halt {
    match failed.pop() {
        Some(last) if last_failed => Halt::FailedCalls(Box::new(FailedCalls {
            earlier: failed,
            last,
            call_limit_reached: true,
        })),
        last => {
            failed.extend(last);
            let mut reason = format!(
                "turn {turn} made {MAX_MODEL_CALLS_PER_TURN} model calls, the most a turn may \
                 make; a hook asked for another on `{next}`"
            );
            if !failed.is_empty() {
                let failures: Vec<String> = failed
                    .iter()
                    .map(|call| format!("{}: {}", call.model, call.error))
                    .collect();
                reason.push_str(&format!(
                    " (the calls that failed: {})",
                    failures.join("; ")
                ));
            }
            Halt::Rejected(reason)
        }
    }
}
