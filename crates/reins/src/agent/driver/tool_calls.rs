//! Answering a turn's tool calls: dispatch → execute → outcome for each (`call.rs`), up to
//! `tool_concurrency` at once, each result recorded in the run's state as it arrives.
//!
//! In a durable run the start of every execution is checkpointed before the tool runs (with
//! the arguments it runs with), so a crash between the tool's side effect and its result's
//! checkpoint leaves the call *in doubt* instead of silently executing it twice on resume.

use super::call::{CallEnv, CallOutcome, StartRequest};
use super::{Driver, Halt, trace};
use crate::agent::stream_item::StreamItem;
use crate::message::Message;
use crate::run::{PendingCall, ToolDecision};
use crate::store::StoreError;
use futures::StreamExt;
use futures::channel::mpsc;
use serde_json::json;
use std::sync::Arc;

/// Why a call in doubt waits, as shown in the pending listing.
pub(crate) const IN_DOUBT_REASON: &str = "in doubt: the call started before the run stopped \
     and no result was recorded, and its tool does not declare that running it again is safe";

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
                let span = trace::tool_span(pending, env.tools, env.run_id);
                // Instrumented only when the span records (see `call_model`).
                let outcome = if span.is_disabled() {
                    env.answer(index, pending, decision).await?
                } else {
                    trace::cancellable(span, env.answer(index, pending, decision)).await?
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
                let span = trace::tool_span(&pending, env.tools, env.run_id);
                let answer = env.answer(index, &pending, decision.as_ref());
                let outcome = if span.is_disabled() {
                    answer.await
                } else {
                    trace::cancellable(span, answer).await
                };
                (index, outcome)
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
            CallOutcome::Done(record, usage) => {
                // Counted with the result, in the same checkpoint: a resumed run replays the
                // result and does not count it again.
                self.state.usage += usage;
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
    /// again, any other call waits for a decision, in doubt. A decision given with this resume
    /// ([`PromptRequest::decide`](crate::agent::PromptRequest::decide)) does not run such a
    /// call: it was made without knowing the call may have had its effect (an application
    /// resuming after a crash with the approval it gave before), so the call waits in doubt
    /// for one made since, as a stored decision from before the start does.
    fn mark_calls_in_doubt(&mut self) {
        let tools = &self.tools.set;
        for pending in &mut self.state.pending_calls {
            let cut_off =
                pending.started.is_some() && pending.result.is_none() && !pending.in_doubt;
            if cut_off && !tools.retry_safety(&pending.call.name).allows_reexecution() {
                pending.in_doubt = true;
                pending.suspended = Some(IN_DOUBT_REASON.to_owned());
                let call = &pending.internal_call_id;
                self.decisions.retain(|(id, _)| id != call);
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
        // A new attempt: the decision it runs under is used up (it no longer waits, and a
        // decision made before this start no longer binds to it), and a crash from here on
        // puts it in doubt again.
        pending.starts = pending.starts.saturating_add(1);
        pending.suspended = None;
        pending.in_doubt = false;
        let effect_id = pending.effect_id(&self.state.run_id);
        let payload = json!({ "tool": pending.call.name, "arguments": request.arguments });
        self.journal(effect_id, "tool_call_started", payload);
        self.checkpoint(false).await?;
        // The call may have been dropped meanwhile (the run is ending); nothing waits then.
        let _ = request.committed.send(());
        Ok(())
    }
}
