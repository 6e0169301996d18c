//! Answering a turn's tool calls: dispatch → execute → outcome for each, up to
//! `tool_concurrency` at once, each result recorded in the run's state as it arrives.
//!
//! In a durable run the start of every execution is checkpointed before the tool runs (with
//! the arguments it runs with), so a crash between the tool's side effect and its result's
//! checkpoint leaves the call *in doubt* instead of silently executing it twice on resume.

use super::{Driver, Halt, trace};
use crate::agent::StopReason;
use crate::agent::hook::{
    ArgsText, CallParts, DispatchTarget, HookContext, HookStack, Stacked, StepEventKind,
    ToolCallView, ToolDispatchDecision, ToolResult,
};
use crate::agent::options::{RunOptions, ToolErrorPolicy};
use crate::agent::stream::StreamItem;
use crate::message::{Message, ToolCall};
use crate::run::{CallRecord, PendingCall, ToolDecision};
use crate::store::StoreError;
use crate::tool::{
    ToolCallContext, ToolExecution, ToolOutcome, ToolOutput, ToolResultExtensions, ToolSet,
};
use futures::StreamExt;
use futures::channel::{mpsc, oneshot};
use serde_json::{Value, json};
use std::future::Future;
use std::sync::Arc;

/// Why a call in doubt waits, as shown in the pending listing.
pub(crate) const IN_DOUBT_REASON: &str = "in doubt: the call started before the run stopped \
     and no result was recorded, and its tool does not declare that running it again is safe";
use tracing::Instrument;

/// What answering one call gave.
enum CallOutcome {
    /// The call has its result.
    Done(CallRecord),
    /// A hook suspended the call.
    Suspend(String),
}

/// A call about to execute asks the driver to journal its start; the tool runs once the
/// driver's checkpoint has committed and `committed` fires.
struct StartRequest {
    index: usize,
    arguments: Value,
    committed: oneshot::Sender<()>,
}

/// What executing a call needs; copied into each call's future so the run's state stays free
/// to record results while other calls still run.
#[derive(Clone, Copy)]
struct CallEnv<'a> {
    /// The tools of the turn whose calls these are.
    tools: &'a ToolSet,
    hooks: &'a HookStack,
    ctx: &'a HookContext,
    options: &'a RunOptions,
    run_id: &'a str,
    /// Where a durable run's calls ask for their start to be journaled; `None` without a
    /// store.
    starts: Option<&'a mpsc::UnboundedSender<StartRequest>>,
}

/// What one call does instead of, or before, the outcome hooks.
enum Step {
    /// Execute the tool with these arguments (`None`: the model's), and their text when a
    /// hook had it written. (Boxed: a JSON value's tag byte would become the step's own, and
    /// the step would be copied byte-wise on the way to the execution.)
    Run(Option<Box<(Value, Option<String>)>>),
    /// Record this result without executing the tool. (Boxed, as is a suspension's reason:
    /// the step stays in the run's future while the tool runs.)
    Answer(Box<(String, ToolOutcome)>),
    Stop(StopReason),
    Suspend(Box<str>),
}

impl Step {
    fn answer(text: String, outcome: ToolOutcome) -> Self {
        Step::Answer(Box::new((text, outcome)))
    }
}

impl Driver<'_> {
    /// Answers every pending call that has no result yet (and, for a suspended call, has a
    /// decision now), then commits the results to the history in call order. Ends the run as
    /// suspended when a call waits for a decision.
    pub(super) async fn answer_pending_calls(&mut self) -> Result<(), Halt> {
        self.mark_calls_in_doubt();
        // The context outlives the driver's borrow of itself: no copy of the run id per turn.
        let ctx = self.ctx;
        // The turn's tools stay alive while its calls run, whatever a refresh does meanwhile.
        // Without tool sources they are the agent's own, borrowed for the whole run: every run
        // of the agent shares their count of references, which workers would pass back and
        // forth if each turn touched it.
        let config = self.config;
        let held;
        let tools = match &config.live {
            None => &config.tools,
            Some(_) => {
                held = Arc::clone(&self.tools);
                &held
            }
        };
        let env = CallEnv {
            tools: &tools.set,
            hooks: self.hooks,
            ctx,
            options: self.options,
            run_id: ctx.run_id(),
            starts: None,
        };
        let calls = self.state.pending_calls.len();
        if self.durable.is_none() && (calls == 1 || self.options.tool_concurrency <= 1) {
            // One call at a time and nothing to journal: each call borrows its pending call,
            // and its result is recorded before the next one starts.
            for index in 0..calls {
                let Some(decision) = self.decision_at(index) else {
                    continue;
                };
                let Some(pending) = self.state.pending_calls.get(index) else {
                    continue;
                };
                let span = trace::tool_span(pending, env.run_id);
                // Instrumented only when the span records (see `call_model`).
                let outcome = if span.is_disabled() {
                    env.answer(index, pending, decision).await?
                } else {
                    env.answer(index, pending, decision)
                        .instrument(span)
                        .await?
                };
                self.record_outcome(index, outcome, env.run_id).await?;
            }
        } else {
            let work: Vec<(usize, Option<ToolDecision>)> = (0..calls)
                .filter_map(|index| Some((index, self.work_at(index)?)))
                .collect();
            if !work.is_empty() {
                self.answer_concurrently(env, work).await?;
            }
        }
        if self
            .state
            .pending_calls
            .iter()
            .any(PendingCall::awaits_decision)
        {
            return Err(Halt::Suspended);
        }
        self.return_arguments(true);
        let mut answered = std::mem::take(&mut self.state.pending_calls);
        for pending in answered.drain(..) {
            let Some(record) = pending.result else {
                continue;
            };
            let PendingCall { call, .. } = pending;
            let text = record.output;
            self.emit(|| StreamItem::ToolResult {
                tool_call_id: call.id.clone(),
                tool_name: call.name.clone(),
                result: text.clone(),
                outcome: record.outcome,
            });
            self.state
                .history
                .push(Message::tool_result(call.id, call.name, text));
        }
        self.spare_calls = answered;
        Ok(())
    }

    /// Whether the pending call at `index` is answered now, and under which decision: a call
    /// with a result is done, and a suspended call waits until a decision arrives.
    fn work_at(&self, index: usize) -> Option<Option<ToolDecision>> {
        self.decision_at(index).map(Option::<&ToolDecision>::cloned)
    }

    /// [`work_at`](Self::work_at), the decision borrowed: a call answered in place needs no
    /// copy of it.
    fn decision_at(&self, index: usize) -> Option<Option<&ToolDecision>> {
        let pending = self.state.pending_calls.get(index)?;
        if pending.result.is_some() {
            return None;
        }
        let decision = self
            .decisions
            .iter()
            .rev()
            .find(|(id, _)| *id == pending.internal_call_id)
            .map(|(_, decision)| decision);
        (pending.suspended.is_none() || decision.is_some()).then_some(decision)
    }

    /// Answers `work` up to `tool_concurrency` calls at once; in a durable run, serves each
    /// call's request to journal its start while the others run.
    async fn answer_concurrently(
        &mut self,
        env: CallEnv<'_>,
        work: Vec<(usize, Option<ToolDecision>)>,
    ) -> Result<(), Halt> {
        let run_id = env.run_id;
        let (start_sender, mut start_requests) = mpsc::unbounded();
        let env = CallEnv {
            starts: self.durable.is_some().then_some(&start_sender),
            ..env
        };
        let work: Vec<(usize, PendingCall, Option<ToolDecision>)> = work
            .into_iter()
            .filter_map(|(index, decision)| {
                let pending = self.state.pending_calls.get(index)?.clone();
                Some((index, pending, decision))
            })
            .collect();
        let mut running = futures::stream::iter(work.into_iter().map(
            |(index, pending, decision)| async move {
                let span = trace::tool_span(&pending, env.run_id);
                let answer = env.answer(index, &pending, decision.as_ref());
                (index, answer.instrument(span).await)
            },
        ))
        .buffer_unordered(self.options.tool_concurrency.max(1));
        loop {
            // A start request is served first: its call is waiting for it.
            let (index, outcome) = tokio::select! {
                biased;
                Some(request) = start_requests.next() => {
                    self.journal_start(request).await?;
                    continue;
                }
                next = running.next() => match next {
                    Some(next) => next,
                    None => break,
                },
            };
            self.record_outcome(index, outcome?, run_id).await?;
        }
        Ok(())
    }

    /// Records what answering the pending call at `index` gave; a durable run checkpoints a
    /// result before anything else happens, so a resumed run replays it instead of calling
    /// the tool again.
    async fn record_outcome(
        &mut self,
        index: usize,
        outcome: CallOutcome,
        run_id: &str,
    ) -> Result<(), Halt> {
        let durable = self.durable.is_some();
        let Some(pending) = self.state.pending_calls.get_mut(index) else {
            return Ok(());
        };
        match outcome {
            CallOutcome::Done(record) => {
                let journaled = durable.then(|| {
                    let payload = serde_json::to_value(&record).unwrap_or_default();
                    (pending.effect_id(run_id), payload)
                });
                pending.result = Some(record);
                pending.suspended = None;
                if let Some((effect_id, payload)) = journaled {
                    self.journal(effect_id, "tool_call", payload);
                    self.checkpoint(false).await?;
                }
            }
            CallOutcome::Suspend(reason) => pending.suspended = Some(reason),
        }
        Ok(())
    }

    /// Classifies the calls a previous worker started and never finished (it crashed between
    /// the start's checkpoint and the result's): a tool that declares re-execution safe runs
    /// again, any other call waits for a decision, in doubt.
    fn mark_calls_in_doubt(&mut self) {
        let tools = &self.tools.set;
        let decisions = &self.decisions;
        for pending in &mut self.state.pending_calls {
            let cut_off =
                pending.started.is_some() && pending.result.is_none() && !pending.in_doubt;
            let decided = decisions
                .iter()
                .any(|(id, _)| *id == pending.internal_call_id);
            if cut_off && !decided && !tools.retry_safety(&pending.call.name).allows_reexecution() {
                pending.in_doubt = true;
                pending.suspended = Some(IN_DOUBT_REASON.to_owned());
            }
        }
    }

    /// Journals that a call starts executing with `arguments` and checkpoints it, then lets
    /// the call go on.
    async fn journal_start(&mut self, request: StartRequest) -> Result<(), Halt> {
        let Some(pending) = self.state.pending_calls.get_mut(request.index) else {
            return Err(Halt::Store(StoreError::Backend(
                "a started call is not among the pending calls".to_owned(),
            )));
        };
        pending.started = Some(request.arguments.clone());
        let effect_id = pending.effect_id(&self.state.run_id);
        let payload = json!({ "tool": pending.call.name, "arguments": request.arguments });
        self.journal(effect_id, "tool_call_started", payload);
        self.checkpoint(false).await?;
        // The call may have been dropped meanwhile (the run is ending); nothing waits then.
        let _ = request.committed.send(());
        Ok(())
    }
}

impl CallEnv<'_> {
    fn observes(&self, kind: StepEventKind) -> bool {
        self.hooks.observes(kind)
    }

    /// One call's dispatch → execute → outcome path. A decision given on resume replaces the
    /// dispatch hooks for that call; a call that started before a crash and is executed
    /// again (its tool declares that safe, or a decision said so) runs with the arguments it
    /// started with, without asking the dispatch hooks again.
    // An `async move` block rather than an `async fn`, which would keep its arguments twice
    // in the run's future.
    #[allow(clippy::manual_async_fn)]
    fn answer<'s>(
        &'s self,
        index: usize,
        pending: &'s PendingCall,
        decision: Option<&'s ToolDecision>,
    ) -> impl Future<Output = Result<CallOutcome, Halt>> + Send + 's {
        async move {
            let call = &pending.call;
            let internal_id = pending.internal_call_id.as_str();
            // Who listens is read once for the call: what a stack learns of a hook's answers to
            // one kind says nothing of the other.
            let dispatch_observed = self.observes(StepEventKind::ToolDispatch);
            let outcome_observed = self.observes(StepEventKind::ToolOutcome);
            let observed = dispatch_observed || outcome_observed;
            // The arguments' text, for hooks: written only when one reads it, or for the result
            // an outcome hook sees.
            let args_text = ArgsText::of(&call.arguments);
            if let Some(decision) = decision {
                trace::record_resume_decision(decision);
            }
            // One lookup serves what the tool says about itself (for hooks) and its execution.
            let tool = self.tools.lookup(&call.name);
            let (traits, origin) = if observed {
                (tool.traits(), tool.origin())
            } else {
                (None, None)
            };
            let step = match decision {
                Some(ToolDecision::Approve | ToolDecision::Rerun) => {
                    Step::Run(pending.started.clone().map(|args| Box::new((args, None))))
                }
                Some(ToolDecision::ApproveWithArgs { args }) => {
                    Step::Run(Some(Box::new((args.clone(), None))))
                }
                Some(ToolDecision::Deny { message }) => Step::answer(
                    message.clone(),
                    ToolOutcome::Denied {
                        report: message.clone(),
                    },
                ),
                Some(ToolDecision::Skip { message }) => Step::answer(
                    message.clone(),
                    ToolOutcome::Skipped {
                        reason: message.clone(),
                    },
                ),
                Some(ToolDecision::SupplyResult { output }) => {
                    Step::answer(output.clone(), ToolOutcome::Success)
                }
                // Started before a crash, and its tool declares a second execution safe.
                None if pending.started.is_some() => {
                    Step::Run(pending.started.clone().map(|args| Box::new((args, None))))
                }
                None if dispatch_observed => {
                    let target = DispatchTarget::Tool(ToolCallView {
                        name: &call.name,
                        tool_call_id: &call.id,
                        internal_call_id: internal_id,
                        args: &args_text,
                        traits,
                        origin,
                    });
                    let dispatched = self.hooks.dispatch_tool(self.ctx, &target).await?;
                    trace::record_dispatch(&dispatched);
                    match dispatched {
                        ToolDispatchDecision::Proceed(rewritten) => Step::Run(rewritten),
                        ToolDispatchDecision::Skip(reason) => {
                            Step::answer(reason.clone(), ToolOutcome::Skipped { reason })
                        }
                        ToolDispatchDecision::Deny(report) => {
                            Step::answer(report.clone(), ToolOutcome::Denied { report })
                        }
                        ToolDispatchDecision::Stop(reason) => Step::Stop(reason),
                        ToolDispatchDecision::Suspend(reason) => Step::Suspend(reason.into()),
                    }
                }
                None => Step::Run(None),
            };
            let (execution, rewritten) = match step {
                Step::Run(rewritten) => {
                    let args = rewritten
                        .as_ref()
                        .map_or(&call.arguments, |rewritten| &rewritten.0);
                    self.journal_start(index, args).await?;
                    let context = ToolCallContext::new(self.run_id, internal_id, &call.id);
                    let execution = tool.call(&call.name, args, context).await;
                    (execution, rewritten)
                }
                Step::Answer(answer) => {
                    let (text, outcome) = *answer;
                    (
                        ToolExecution {
                            output: ToolOutput::Text(text),
                            outcome,
                            extensions: ToolResultExtensions::new(),
                        },
                        None,
                    )
                }
                Step::Stop(reason) => return Err(Halt::Stop(reason)),
                Step::Suspend(reason) => return Ok(CallOutcome::Suspend(reason.into())),
            };
            if !outcome_observed {
                // Nobody looks at the result: no copy of the call's names for a hook.
                trace::record_tool_result(&execution.output, &execution.outcome);
                return self.finish(
                    call,
                    execution.output,
                    execution.outcome,
                    execution.extensions,
                );
            }
            // The result borrows the call's names, ids and arguments from the pending call, and its
            // output and outcome from the execution: nothing is copied for the outcome hooks. (The
            // rewritten arguments stay boxed while the hooks run.)
            let mut rewritten = rewritten;
            let args = match &mut rewritten {
                Some(rewritten) => ArgsText::with_text(&rewritten.0, rewritten.1.take()),
                None => args_text,
            };
            let parts = CallParts {
                tool_name: &call.name,
                tool_call_id: &call.id,
                internal_call_id: internal_id,
                args: &args,
                outcome: &execution.outcome,
                extensions: &execution.extensions,
                traits,
                origin,
            };
            let mut result = ToolResult::lent(&parts, &execution.output);
            let answered = self.hooks.tool_outcome(self.ctx, &mut result).await;
            let rewritten_output = result.into_rewritten();
            if let Stacked::Stop(reason) = answered? {
                return Err(Halt::Stop(reason));
            }
            let ToolExecution {
                output,
                outcome,
                extensions,
            } = execution;
            let output = rewritten_output.unwrap_or(output);
            trace::record_tool_result(&output, &outcome);
            self.finish(call, output, outcome, extensions)
        }
    }

    /// The call's record, or the run's failure when tool errors fail the run.
    fn finish(
        &self,
        call: &ToolCall,
        output: ToolOutput,
        outcome: ToolOutcome,
        extensions: ToolResultExtensions,
    ) -> Result<CallOutcome, Halt> {
        if self.options.tool_errors == ToolErrorPolicy::Fail {
            if let ToolOutcome::Failed(failure) = &outcome {
                return Err(Halt::Tool {
                    tool_name: call.name.clone(),
                    failure: failure.clone(),
                });
            }
        }
        Ok(CallOutcome::Done(CallRecord {
            output: output.into_text(),
            outcome,
            extensions,
        }))
    }

    /// In a durable run, waits until the driver has checkpointed that the call at `index`
    /// starts executing with `arguments`.
    async fn journal_start(&self, index: usize, arguments: &Value) -> Result<(), Halt> {
        let Some(starts) = self.starts else {
            return Ok(());
        };
        let (committed, is_committed) = oneshot::channel();
        let request = StartRequest {
            index,
            arguments: arguments.clone(),
            committed,
        };
        let gone = || {
            Halt::Store(StoreError::Backend(
                "the run stopped before the call's start was journaled".to_owned(),
            ))
        };
        starts.unbounded_send(request).map_err(|_| gone())?;
        is_committed.await.map_err(|_| gone())
    }
}
