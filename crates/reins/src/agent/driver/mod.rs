//! The run loop: one driver for awaited and streamed runs. Streaming only adds the delta
//! events while a model turn is assembled; every other event fires from the same code.
//!
//! The loop is split along its phases: `model_turn` (request, hooks, model call, deltas),
//! `validation` (invalid tool calls), `structured` (typed answers), `tool_calls` (a turn's
//! calls) and `call` (one call's dispatch → execute → outcome). All state lives in
//! [`RunState`], which is complete at every checkpoint, so a run can stop and be resumed
//! between phases.
//!
//! This file holds the loop itself and how a run ends. How a run starts (a new state, or a
//! claimed one) is in `start`; a durable run's claim, journal and checkpoints are in
//! `durable`; why a run stopped without an answer is `halt`.

mod call;
mod call_ids;
mod chat_spans;
mod dropped;
mod durable;
mod halt;
mod lent_arguments;
mod model_turn;
mod start;
mod streamed_turn;
mod structured;
mod tool_calls;
mod trace;
mod validation;

pub(crate) use call_ids::internal_call_id;
use durable::{Durable, while_leased};
use halt::{Ended, FailedCalls, Halt};
pub use model_turn::{EMPTY_ANSWER, MAX_MODEL_CALLS_PER_TURN};
use start::{Begun, begin, traced, typed_answer};

use super::builder::{Agent, AgentConfig};
use super::error::PromptError;
use super::hook::{HookContext, HookStack, ModelTurnAction, RunSettledEvent, StepEventKind};
use super::options::{RunOptions, RunStart};
use super::output_spec::OutputSpec;
use super::response::PromptResponse;
use super::stream::StreamSink;
use super::stream_item::StreamItem;
use super::tools::AvailableTools;
use crate::message::Message;
use crate::message::arguments_text as render_args;
use crate::run::{PendingCall, RunState, RunStatus, ToolDecision};
use crate::store::StoreError;
use model_turn::ReceivedTurn;
use serde_json::Value;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use structured::{StructuredStep, resolve_output};
use tracing::Instrument;
use validation::CheckedCalls;

/// How often `repair` may rename one call before the run gives up on it.
const MAX_REPAIRS_PER_CALL: usize = 3;

/// Runs a prompt request to its end, firing `on_run_settled` last.
// An `async move` block rather than an `async fn`, which would keep every argument twice in
// the run's future (each run's future is its task's memory).
#[allow(clippy::manual_async_fn)]
pub(crate) fn run(
    agent: Agent,
    start: RunStart,
    mut run_hooks: HookStack,
    mut options: RunOptions,
    sink: Option<StreamSink>,
) -> impl Future<Output = Result<PromptResponse, PromptError>> + Send + 'static {
    async move {
        let config = &*agent.config;
        // The run's hooks follow the agent's. Combined in place of the run's own list and the
        // output spec resolved in place: a new binding would take room of its own in the run's
        // future, beside the argument's.
        let hooks = if run_hooks.is_empty() {
            &config.hooks
        } else {
            let mut combined = config.hooks.clone();
            combined.extend(&run_hooks);
            run_hooks = combined;
            &run_hooks
        };
        resolve_output(config, options.output.as_deref_mut())?;
        // Built outside this future's body, so only what the driver keeps lives across its
        // awaits.
        let Begun {
            state,
            prompt,
            decisions,
            durable,
            worker,
        } = begin(config, start, options.start.take(), typed_answer(&options)).await?;
        let (state, span, ctx) = traced(config, state, sink.is_some(), &options);
        let tools = match &config.live {
            Some(live) => live.current(),
            None => Arc::clone(&config.tools),
        };
        let state_usage = state.usage;
        let mut driver = Driver {
            config,
            tools,
            hooks,
            ctx: &ctx,
            options: &options,
            output: options.output.as_deref(),
            sink: sink.as_ref(),
            decisions,
            durable,
            worker,
            state,
            lent_arguments: None,
            spare_calls: Vec::new(),
            last_label: None,
            input_unrecorded: AtomicBool::new(true),
            new_run: prompt.is_some(),
            // A resumed run's state holds the usage of its earlier invocations: its span
            // records only its own.
            unsettled: (!span.is_disabled()).then_some((&span, state_usage)),
            answered: Default::default(),
        };
        // A new run's prompt waits at the end of its history until `on_run_start` has seen it
        // (see `Driver::start`): held there, it takes no room in the loop's future. (Moved
        // whole, never borrowed: a binding or a borrow of the prompt would keep its room in
        // the run's future while the loop runs.)
        let before = driver.state.history.len();
        driver.state.history.extend(prompt);
        let prompted = driver.state.history.len() > before;
        // Instrumented only when the span records: the wrapper would copy the loop's state
        // (some 1,400 bytes) once more. A durable run renews its lease beside the loop, in a
        // future of its own (boxed: a run without a store pays no room for it).
        let renewal = driver.durable.as_mut().map(Durable::renewal);
        let outcome = match renewal {
            None if span.is_disabled() => driver.drive(prompted).await,
            None => driver.drive(prompted).instrument(span.clone()).await,
            Some(renewal) => {
                let drive = driver.drive(prompted).instrument(span.clone());
                Box::pin(while_leased(drive, renewal)).await
            }
        };
        // Whatever ended the run, its history holds every call's arguments.
        driver.return_arguments(false);
        driver.state.entries = ctx.snapshot_entries();
        // A run whose store failed under it (a lost connection, a database busy past its
        // timeout; or a lease lost to another worker, which must not be overwritten) ended for
        // a reason that is not the run's: it is not recorded as failed, which would be final.
        let store_failed = matches!(&outcome, Err(Halt::Store(_)));
        // A lease that ran out unrenewed may be another worker's now: nothing is written.
        let lost_lease = matches!(
            &outcome,
            Err(Halt::Store(
                StoreError::Conflict { .. } | StoreError::LeaseLapsed { .. }
            ))
        );
        let mut ended = match outcome {
            Ok(output) => Ended::Answered(output),
            Err(Halt::Suspended) => Ended::Halted(Halt::Suspended),
            Err(halt) => {
                // Made before the last checkpoint, which keeps its message; the history is
                // given to it after.
                let bare = RunState::new(driver.state.run_id.clone(), None, Vec::new());
                Ended::Failed(halt.into_error(bare, options.max_turns))
            }
        };
        (driver.state.status, driver.state.failure) = match &ended {
            Ended::Answered(_) => (RunStatus::Completed, None),
            Ended::Halted(_) => (RunStatus::Suspended, None),
            Ended::Failed(error) => (RunStatus::Failed, Some(error.to_string())),
        };
        // The last checkpoint records how the run ended and releases its lease. When the store
        // failed, the run is given back as last stored instead, for any worker to resume.
        if store_failed {
            if lost_lease {
                driver.forget_lease().await;
            } else {
                driver.release_as_stored().await;
            }
        } else if let Err(error) = driver.checkpoint(true).instrument(span.clone()).await {
            if matches!(error, Halt::Store(StoreError::Conflict { .. })) {
                driver.forget_lease().await;
            } else {
                driver.release_as_stored().await;
            }
            if !matches!(ended, Ended::Failed(_)) {
                ended = Ended::Halted(error);
            }
        }
        // A new run that ended before its first model call's request was recorded (a hook's
        // stop on run start or before the call, a failure) records its input now: its history
        // ends with the prompt, as the run-start hooks left it.
        if std::mem::take(driver.input_unrecorded.get_mut()) && driver.new_run {
            trace::record_run_input(&span, &driver.state.history);
        }
        let (state, started_with) = driver.settle();
        let (usage, turns) = (state.usage, state.turn);
        let result = match ended {
            Ended::Answered(output) => Ok(PromptResponse { output, state }),
            Ended::Halted(halt) => Err(halt.into_error(state, options.max_turns)),
            Ended::Failed(mut error) => {
                if let Some(history) = error.history_mut() {
                    *history = state.history;
                }
                Err(error)
            }
        };
        trace::record_run_outcome(&span, &result, usage.since(started_with), turns);
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
}

/// A finished run's answer: its last assistant message.
fn final_answer(history: &[Message]) -> String {
    history
        .iter()
        .rev()
        .find(|m| matches!(m, Message::Assistant { .. }))
        .map(Message::text)
        .unwrap_or_default()
}

/// The run in progress: the references it works with, and its state.
pub(crate) struct Driver<'a> {
    config: &'a AgentConfig,
    /// The tools of the current turn (see `refresh_tools`).
    tools: Arc<AvailableTools>,
    hooks: &'a HookStack,
    ctx: &'a HookContext,
    options: &'a RunOptions,
    output: Option<&'a OutputSpec>,
    sink: Option<&'a StreamSink>,
    /// Decisions about suspended calls, by internal call id.
    decisions: Vec<(String, ToolDecision)>,
    durable: Option<Durable>,
    worker: String,
    state: RunState,
    /// The history's message whose tool calls lent their arguments to the pending calls
    /// (see `lent_arguments`).
    lent_arguments: Option<usize>,
    /// An answered turn's list of calls, emptied, for the next turn's calls.
    spare_calls: Vec<PendingCall>,
    /// The configured label `state.last_model` was last found to hold: when this turn's
    /// label is the same string of the configuration, the state's copy need not be read (a
    /// cache line nothing else in the turn touches, in a service running many runs).
    last_label: Option<&'a str>,
    /// The run's input is not yet recorded on its span: its first model call's request
    /// records it (and clears this), else a new run's end does, from its history, so that a
    /// run stopped before (by a hook on run start, before its first call, or dropped) shows
    /// what it was asked. Atomic: the request's recording clears it through a shared borrow.
    /// A resumed run records it too (Phoenix shows a span by its input and output, and the
    /// resumed half's is the one with the answer), from a request only: see `new_run`.
    input_unrecorded: AtomicBool,
    /// A new run, whose history ends with its prompt (as the run-start hooks left it) until
    /// its first model call. A resumed run's history was sent to a model before, through
    /// request hooks that may have masked it there (a `Redaction`): its end never records it.
    new_run: bool,
    /// The run's span, while it records and the run's outcome is not yet known: a run dropped
    /// meanwhile records that it was cancelled on it (see `dropped`).
    unsettled: Option<(&'a tracing::Span, crate::completion::Usage)>,
    /// The usage of the model calls of the turn under way that answered, until the turn's
    /// end adds what it keeps to the state's: a run dropped meanwhile (in a fallback's next
    /// call, or while a hook judges an answer) counts them too (see `dropped`). Kept only
    /// while the run's span records.
    answered: std::sync::Mutex<crate::completion::Usage>,
}

impl Driver<'_> {
    fn observes(&self, kind: StepEventKind) -> bool {
        self.hooks.observes(kind)
    }

    fn emit(&self, item: impl FnOnce() -> StreamItem) {
        if let Some(sink) = self.sink {
            sink.push(item());
        }
    }

    /// Hands what a streamed run has queued to its consumer before the run goes on.
    async fn flush_stream(&self) {
        if let Some(sink) = self.sink {
            sink.flush().await;
        }
    }

    /// The run's loop; `prompted`: a new prompt waits at the end of the history for
    /// `on_run_start`.
    async fn drive(&mut self, prompted: bool) -> Result<String, Halt> {
        if prompted {
            self.start().await?;
        }
        if self.state.status == RunStatus::Completed {
            // A finished run is not run again: its answer is its last assistant message.
            return Ok(final_answer(&self.state.history));
        }
        // The run's request, sent every turn with the run's history lent to it.
        let mut request = self.request_template();

        loop {
            // Every effect completed so far is journaled before the run advances.
            self.checkpoint(false).await?;
            // A streamed turn's output reaches the consumer before its tools run or the next
            // model call starts.
            self.flush_stream().await;
            // A turn's calls are answered before the next model call, also when a resumed
            // run starts with calls that were pending when it stopped.
            if !self.state.pending_calls.is_empty() {
                self.answer_pending_calls().await?;
            }
            if self.state.turn >= self.options.max_turns {
                // A typed run whose last answer was refused ends saying why, not only that
                // its calls ran out (also resumed: the refusal is part of its state).
                return Err(match self.state.refused_answer.take() {
                    Some(problem) => Halt::RefusedAnswer(problem),
                    None => Halt::MaxTurns,
                });
            }
            self.state.turn += 1;
            let turn = self.state.turn;
            self.ctx.set_turn(turn);
            if self.refresh_tools().await {
                request = self.request_template();
            }

            // Taken apart where it lands: a partly moved `ReceivedTurn` would keep its own
            // slot in the run's future beside the response's.
            let ReceivedTurn {
                mut response,
                patched,
                streamed_text,
            } = self.call_model(&mut request).await?;
            self.state.usage += response.usage;
            if self.durable.is_some() {
                let effect_id = format!("{}/t{turn}", self.state.run_id);
                let payload = serde_json::to_value(&response.content).unwrap_or(Value::Null);
                self.journal(effect_id, "model_turn", payload);
            }

            let (advertised, tool_choice) = match &patched {
                Some(sent) => (&sent.tools, sent.tool_choice.as_ref()),
                None => (&request.tools, request.tool_choice.as_ref()),
            };
            let checked = self
                .check_tool_calls(&response, advertised, tool_choice)
                .await?;
            let (recovered, mut calls, arguments_deferred) = match checked {
                CheckedCalls::Retry(feedback) => {
                    self.emit(|| StreamItem::TurnDiscarded { turn });
                    self.state.history.push(Message::user(feedback));
                    continue;
                }
                CheckedCalls::SkipTurn {
                    recovered_content,
                    answered,
                } => {
                    self.state.history.push(Message::Assistant {
                        content: recovered_content,
                    });
                    self.state.pending_calls = answered;
                    continue;
                }
                CheckedCalls::Run {
                    recovered,
                    content,
                    calls,
                    arguments_deferred,
                } => {
                    if let Some(content) = content {
                        response.content = content;
                    }
                    (recovered, calls, arguments_deferred)
                }
            };

            if !recovered {
                match self.accept_turn(&response, streamed_text).await? {
                    ModelTurnAction::Continue => {}
                    ModelTurnAction::Repeat => {
                        trace::hook_decision("retry", "on_model_turn_finished");
                        self.reject_retry_with_calls(&calls, "repeat")?;
                        self.emit(|| StreamItem::TurnDiscarded { turn });
                        continue;
                    }
                    ModelTurnAction::RetryWithFeedback(feedback) => {
                        trace::hook_decision("retry", "on_model_turn_finished");
                        self.reject_retry_with_calls(&calls, "retry_with_feedback")?;
                        // Kept for the model, but not the run's answer: withdrawn from the
                        // consumer's screen.
                        self.emit(|| StreamItem::TurnDiscarded { turn });
                        self.state.history.push(Message::Assistant {
                            content: response.content,
                        });
                        if calls.is_empty() {
                            self.state.history.push(Message::user(feedback));
                        } else {
                            // A typed answer given through the output tool: its call is
                            // answered with the feedback, as every call must be.
                            self.state.pending_calls = structured::answer_calls(&calls, &feedback);
                        }
                        continue;
                    }
                    ModelTurnAction::Stop(reason) => {
                        // Not an answer, so withdrawn from the screen; nothing is lost: the
                        // stopped turn stays in the error's history.
                        self.emit(|| StreamItem::TurnDiscarded { turn });
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
                        self.state.refused_answer = None;
                        self.state.history.push(Message::assistant(answer.clone()));
                        return Ok(answer);
                    }
                    StructuredStep::Feedback { feedback, problem } => {
                        self.state.history.push(Message::Assistant {
                            content: response.content,
                        });
                        self.state.history.push(Message::user(feedback));
                        self.state.refused_answer = Some(problem);
                        continue;
                    }
                    StructuredStep::AnswerCalls { answered, problem } => {
                        self.state.history.push(Message::Assistant {
                            content: response.content,
                        });
                        self.state.pending_calls = answered;
                        self.state.refused_answer = Some(problem);
                        continue;
                    }
                    StructuredStep::NotFinal => self.state.refused_answer = None,
                }
            }

            let answer = response.text();
            let mut content = response.content;
            let runs_calls = !calls.is_empty() && self.state.turn < self.options.max_turns;
            if runs_calls && arguments_deferred {
                self.lend_arguments(&mut content, &mut calls);
            }
            self.state.history.push(Message::Assistant { content });
            if calls.is_empty() {
                return Ok(answer);
            }
            if !runs_calls {
                // No model call is left to read the results: leave the calls unexecuted.
                return Err(Halt::MaxTurns);
            }
            self.state.pending_calls = calls;
        }
    }

    /// Takes the tool sources' latest lists before a model turn; true when the tools changed,
    /// so the request advertises the new ones and the turn's calls run against them.
    async fn refresh_tools(&mut self) -> bool {
        let Some(live) = &self.config.live else {
            return false;
        };
        let latest = live.refresh().await;
        if Arc::ptr_eq(&latest, &self.tools) {
            return false;
        }
        self.tools = latest;
        true
    }
}
